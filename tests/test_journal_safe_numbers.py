"""The journal's writer holds itself to what its reader reads back: integers within +-(2**53 - 1), no float
(docs/architecture.md, "Exact bytes, export and import"; RFC 8259 s. 6). A record or checkpoint holding any other
number is refused before its commit writes anything, naming the record and the field; what was committed before
stays, and the journal still verifies. In the service, such a refusal takes the path of every refused commit:
the service stops with status 1 and one line, nothing of the commit kept or sent."""

from __future__ import annotations

import io
import json
import re
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.journal.reader import read_records
from controller.journal.record import JournalWriteError, UnsafeRecordError, dumps_checked
from controller.journal.store import Journal
from controller.journal.tools import verify
from controller.service.assembly import Service
from drivers import events as ev

#: The largest integer every JSON reader represents exactly: 2**53 - 1 (RFC 8259 s. 6, IEEE 754 doubles).
LARGEST = 9007199254740991


def _commits(path):
    """A journal at ``path`` with two commits: ``(journal, head)``."""
    journal = Journal(path, fsync=False)
    journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, None),
                    ("record", "RoundOpened", {"round_no": 1}, 1)])
    journal.commit([("event", "SpotChanged", {"seat": 1, "spot": "ante_across", "amount": LARGEST}, 1)])
    return journal, journal.head


@pytest.mark.parametrize("entry, named", [
    (("event", "SpotChanged", {"seat": 1, "spot": "ante_down", "amount": LARGEST + 1}, 1),
     "record SpotChanged (event, round 1) not written: integer 9007199254740992 outside the safe range at "
     "data.amount"),
    (("record", "SeatSettled", {"seat": 2, "lines": [{"net": -LARGEST - 1}]}, 1),
     "record SeatSettled (record, round 1) not written: integer -9007199254740992 outside the safe range at "
     "data.lines[0].net"),
    (("record", "SeatSettled", {"seat": 2, "net": 12.5}, 1),
     "record SeatSettled (record, round 1) not written: number 12.5 is not an integer (amounts are integer minor "
     "units) at data.net"),
    (("command", "Dispense", {"txn_id": 2**64}, 1),
     "record Dispense (command, round 1) not written: integer 18446744073709551616 outside the safe range at "
     "data.txn_id"),
], ids=["past the largest", "below the smallest, nested", "a float", "past 64 bits"])
def test_a_record_with_a_number_the_reader_refuses_is_refused_before_anything_is_written(tmp_path, entry, named):
    path = tmp_path / "j.db"
    journal, head = _commits(path)
    with pytest.raises(UnsafeRecordError) as refused:
        journal.commit([("event", "ButtonPressed", {"button": "confirm"}, 1), entry])
    assert named in str(refused.value) and str(path) in str(refused.value), refused.value
    assert isinstance(refused.value, JournalWriteError)  # the service's path for a refused commit (OSError)
    assert journal.head == head
    journal.commit([("record", "RoundClosed", {"round_no": 1}, 1)])  # the journal goes on after it
    journal.close()
    records = read_records(path)
    assert [r["type"] for r in records] == ["ButtonPressed", "RoundOpened", "SpotChanged", "RoundClosed"]
    assert verify(path).tamper is None


def test_a_checkpoint_with_a_number_the_reader_refuses_is_refused_with_its_records(tmp_path):
    """A checkpoint is read back by the same reader (``journal verify``): its state is held to the same rule,
    and its commit's records go with it."""
    path = tmp_path / "j.db"
    journal, head = _commits(path)
    with pytest.raises(UnsafeRecordError, match=r"the checkpoint after record 4 not written: number 0\.5 is not an "
                                                r"integer .* at state\.meters\.hold"):
        journal.commit([("record", "RoundClosed", {"round_no": 1}, 1)], state={"meters": {"hold": 0.5}})
    assert journal.head == head
    journal.close()
    assert len(read_records(path)) == 3 and verify(path).tamper is None


def _json_oracle(value):
    """The json module's canonical text of ``value``, or the exception type it raises; ``ValueError`` also for
    a float or an integer outside +-(2**53 - 1) anywhere in it (the reader's rule, counted here apart)."""
    def unsafe(v):
        if isinstance(v, bool):
            return False
        if isinstance(v, int):
            return abs(v) > LARGEST
        if isinstance(v, float):
            return True
        if isinstance(v, dict):
            return any(unsafe(x) for x in v.values())
        if isinstance(v, (list, tuple)):
            return any(unsafe(x) for x in v)
        return False
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return type(exc)
    return ValueError if unsafe(value) else text


_NUMBERS = (st.integers() | st.floats(allow_nan=False) | st.sampled_from([LARGEST, -LARGEST, LARGEST + 1, -LARGEST - 1,
                                                                          2**63, 1e16, 1e-7, -0.0]))
_VALUES = st.recursive(st.none() | st.booleans() | _NUMBERS | st.text(max_size=8),
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                                   max_size=4), max_leaves=20)


@settings(max_examples=500)
@given(_VALUES)
def test_the_writer_spells_every_safe_value_and_refuses_every_other(value):
    """``dumps_checked`` (what ``Journal.commit`` writes): the json module's text for a value whose every number
    is a safe integer, ``ValueError`` for any other number anywhere (its cheap path never lets one through)."""
    try:
        spelled = dumps_checked(value)
    except (TypeError, ValueError) as exc:
        spelled = type(exc)
    assert spelled == _json_oracle(value)


def test_the_service_stops_on_such_a_record_mid_round_keeping_what_was_committed(tmp_path):
    """A reading of the sensors with an amount past 2**53 - 1, come mid-round: the commit holding it is refused
    as a commit the store refuses is (docs/architecture.md, "The journal store": rolled back whole, the service
    stops with status 1 and one line); nothing of it is on disk, and the journal verifies."""
    service = Service(load_table_config(), simulate=True, rounds=3, seed=22, journal_path=tmp_path / "j.db",
                      out=io.StringIO(), parts=SERVICE_PARTS)
    put = []

    def inject():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and service.machine.state != "down_decision":
            time.sleep(0.002)
        put.append(service.machine.state)
        service.events.put(ev.SpotChanged(1, "ante_across", LARGEST + 1))

    thread = threading.Thread(target=inject)
    thread.start()
    try:
        status = service.run()
    finally:
        thread.join()
        service.close()
    assert put == ["down_decision"]
    assert status == 1
    error = service.controller.journal_error
    # the round it came in: the first, or a later one when the simulated table played on before it was taken
    assert isinstance(error, UnsafeRecordError) and re.search(r"record SpotChanged \(event, round [1-3]\)", str(error)) \
        and "at data.amount" in str(error), error
    records = read_records(tmp_path / "j.db")
    assert records and not any(r["type"] == "SpotChanged" and r["data"].get("amount") == LARGEST + 1
                               for r in records)
    assert verify(tmp_path / "j.db").tamper is None
