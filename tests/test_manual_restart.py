"""The simulated table dealt by hand (``crisscross run --simulate --manual``, NY 9 NYCRR 5324.39(d)(1)) stopped
and started again on the same journal: the table already deals by hand, so the simulated supervisor has nothing to
switch; the next round opens (a round left open is voided, or finished, as the unattended table does), and
nothing writes the journal over and over while nobody acts (``tests.record_storm``).

Each run is the service in this process on real pseudo-terminals, stopped by the test at a chosen record."""

from __future__ import annotations

import dataclasses
import io
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.simulated.unknown_round import ENDING_ACTIONS
from controller.journal.reader import read_records
from controller.journal.recall import rounds_from_records
from controller.service.assembly import Service
from controller.service.loop import STOP
from tests.record_storm import assert_no_storm

pytestmark = pytest.mark.timeout(180)

#: The longest a run may take to reach what the test waits for (seconds): a round takes well under one.
DEADLINE_S = 60.0

Records = list[dict[str, Any]]


def run(journal: Path, *, manual: bool, rounds: int | None, seed: int,
        stop_at: Callable[[dict[str, Any]], bool] | None = None) -> int | None:
    """Run the simulated service on ``journal`` until ``rounds`` rounds ended; with ``stop_at``, stop it at once
    after the commit of the first record that satisfies it (a round left open, as by a second SIGTERM or a
    crash). Returns its exit status (None: stopped by ``stop_at``). Fails when neither came within
    ``DEADLINE_S`` (the service is stopped first), or when the journal holds a record storm."""
    config = dataclasses.replace(load_table_config(), manual_dealing=True)
    service = Service(config, simulate=True, rounds=rounds, seed=seed, journal_path=journal, out=io.StringIO(),
                      quiet=True, manual=manual, parts=SERVICE_PARTS)
    stopped = threading.Event()
    handed_on = service.controller.on_record

    def on_record(record: dict[str, Any]) -> None:  # the controller thread, once the record's commit is durable
        if handed_on is not None:
            handed_on(record)
        if stop_at is not None and not stopped.is_set() and stop_at(record):
            stopped.set()
            service.controller._pending.appendleft(STOP)  # the next input taken: nothing more is applied

    service.controller.on_record = on_record
    status: list[int] = []
    runner = threading.Thread(target=lambda: status.append(service.run()), name="service-run")
    runner.start()
    try:
        runner.join(DEADLINE_S)
        late = runner.is_alive()
    finally:
        service.stop()
        runner.join(30)
        service.close()
    records = read_records(journal)
    assert_no_storm(records)
    assert not late, f"no end within {DEADLINE_S} s; last records: {[r['type'] for r in records[-12:]]}"
    return None if stopped.is_set() else status[0]


def since_last_start(records: Records) -> Records:
    """The records of the last run (from its ``ServiceStarted``)."""
    start = max(i for i, r in enumerate(records) if r["type"] == "ServiceStarted")
    return records[start:]


def opened(records: Records) -> list[int]:
    """Rounds opened in ``records``."""
    return [r["round"] for r in records if r["type"] == "RoundOpened"]


def test_a_manual_table_restarted_between_rounds_opens_its_next_round_dealt_by_hand(tmp_path):
    """Stopped between rounds and started again with ``--manual``: the table deals by hand already (the
    journal says so), the supervisor sees ``deal_by_shoe`` lit and switches nothing; the next round opens, is
    dealt by hand and closes. The supervisor used to wait for ``deal_by_hand`` to light, turning the key on and
    off twice a second: no round opened, and key, lamps and private panel records were written about 12 a
    second."""
    journal = tmp_path / "journal.db"
    assert run(journal, manual=True, rounds=1, seed=3) == 0
    assert run(journal, manual=True, rounds=1, seed=4) == 0
    records = read_records(journal)
    later = since_last_start(records)
    assert opened(later) == [2]
    rounds = rounds_from_records(records)
    assert rounds[2].manual and rounds[2].closed and rounds[2].voided is None
    assert [r["data"]["mode"] for r in records if r["type"] == "DealingModeChanged"] == ["manual"]
    key_turns = [r for r in later if r["type"] == "SupervisorKey"]
    assert len(key_turns) <= 2, key_turns  # one look at the switches: on, then off


def test_a_table_left_dealing_by_hand_is_dealt_by_hand_by_a_run_without_manual(tmp_path):
    """A run without ``--manual`` on a journal whose table deals by hand: the dealer deals as the panel asks
    (the cross, then card by card) instead of waiting for stacks the shoe never dispenses (it used to fail at
    the first round, the round left open)."""
    journal = tmp_path / "journal.db"
    assert run(journal, manual=True, rounds=1, seed=3) == 0
    assert run(journal, manual=False, rounds=1, seed=5) == 0
    rounds = rounds_from_records(read_records(journal))
    assert sorted(rounds) == [1, 2] and rounds[2].manual and rounds[2].closed and rounds[2].voided is None


def _record(kind: str, **data: Any) -> Callable[[dict[str, Any]], bool]:
    """A record of round 2 of type ``kind`` whose data has ``data`` (a value ending in ``*``: starting with
    what is before it)."""
    def matches(value: Any, wanted: Any) -> bool:
        if isinstance(wanted, str) and wanted.endswith("*"):
            return isinstance(value, str) and value.startswith(wanted[:-1])
        return value == wanted

    return lambda record: record["type"] == kind and record["round"] == 2 and all(
        matches(record["data"].get(k), v) for k, v in data.items())


#: Where the first run is stopped, in its second round (the first one closed): mid-deal, a community card
#: entered and not yet revealed, the first seat's cards entered at settlement, the payout under way.
STOPS = {
    "dealing": _record("CardPlacedByHand", step=3),
    "reveal": _record("CardsRecorded", target="across"),
    "settlement": _record("CardsRecorded", target="seat *"),
    "payout": _record("PayoutChecked"),
}


@pytest.mark.parametrize("where", list(STOPS))
def test_a_manual_table_restarted_mid_round_ends_that_round_and_plays_the_next(tmp_path, where):
    """Stopped at once in a round dealt by hand and started again with ``--manual``: the round left open is
    ended as the unattended table ends it (voided while it may be, else finished: its cards are entered and its
    payout taken as the sensors read it), then the next round opens, is dealt by hand and closes."""
    journal = tmp_path / "journal.db"
    assert run(journal, manual=True, rounds=None, seed=7, stop_at=STOPS[where]) is None
    left = rounds_from_records(read_records(journal))[2]
    assert not left.closed, f"round 2 ended before the stop at {where}"
    assert run(journal, manual=True, rounds=2, seed=8) == 0
    records = read_records(journal)
    rounds = rounds_from_records(records)
    assert rounds[2].closed  # voided, or settled and paid
    later = since_last_start(records)
    assert opened(later) == [3]
    assert rounds[3].manual and rounds[3].closed and rounds[3].voided is None
    # the chips stayed on the felt while the service was down: the restarted run reads them as they were, so no
    # locked wager is seen changed (the sensors' simulator used to start empty: every locked spot past-posting)
    assert [r["data"] for r in later if r["type"] == "Irregularity"] == []
    # each press answered what was lit; a supervisor's ending press may race the lamp going dark as the round moves
    # on (on a loaded machine): refused and recorded, never a storm, the round closed all the same
    refused = [r["data"] for r in later if r["type"] == "PressRefused"]
    assert all(d["role"] == "supervisor" and d["button"] in ENDING_ACTIONS for d in refused) and len(refused) <= 2, \
        refused
