"""The floor's ``meters`` and ``significant`` topics (docs/floor.md, "Topics") against a real Mosquitto started by
the test (the ``mosquitto`` fixture: without mosquitto the test is skipped, and fails under CI).

A simulated table plays a few rounds, the shoe's door opened during the first deal and shut again, publishing to
the floor. Oracles, read from the journal apart from the publisher: the store's last checkpoint, read with SQL
and JSON alone, and ``crisscross meters --format json`` (the meters recomputed from the records) for the
retained ``meters`` message a reader gets when it subscribes after the run; the journal's ``SignificantEvent``
records (docs/events.md) for the ``significant`` messages, one for one by seq.
"""

from __future__ import annotations

import io
import json
import sqlite3

from controller.cli.parts import SERVICE_PARTS
from controller.floor import topics
from controller.journal.reader import read_records
from controller.service.assembly import Service
from tests.cli_helpers import crisscross
from tests.test_floor import TABLE, Collector, _config

ROUNDS = 3


def _messages(collector: Collector, name: str) -> list[tuple[dict, bool]]:
    topic = topics.topic("crisscross", TABLE, name)
    with collector.lock:
        return [(json.loads(payload), retained) for t, payload, retained in collector.messages if t == topic]


def _last_checkpoint(journal) -> tuple[int, dict]:
    db = sqlite3.connect(journal)
    try:
        seq, state = db.execute("SELECT seq, state FROM checkpoints ORDER BY seq DESC LIMIT 1").fetchone()
    finally:
        db.close()
    return seq, json.loads(state)


def test_the_retained_meters_are_the_last_checkpoints_and_each_significant_event_is_published_once(mosquitto,
                                                                                                   tmp_path):
    journal = tmp_path / "journal.db"
    floor = Collector(mosquitto.port)
    service = Service(_config(mosquitto.port), simulate=True, rounds=ROUNDS, seed=12, journal_path=journal,
                      out=io.StringIO(), parts=SERVICE_PARTS)
    try:
        try:
            # the door opens at the second dispense (a seat's stack of round 1); the simulated supervisor shuts it
            service.sims["shoe"].inject_on("DISPENSE", "door_open", nth=2)
            assert service.run() == 0
        finally:
            service.close()
        floor.wait_for(lambda m: (f"crisscross/{TABLE}/status", b"offline", False) in m)
    finally:
        floor.close()
    records = read_records(journal)

    # meters: the one a reader subscribing now is given (retained), as the last checkpoint and the records say
    late = Collector(mosquitto.port, topics.topic("crisscross", TABLE, "meters"))
    try:
        late.wait_for(lambda m: len(m) >= 1)
        ((retained, flag),) = _messages(late, "meters")
    finally:
        late.close()
    assert flag is True and retained["table"] == TABLE and retained["round"] == ROUNDS
    seq, state = _last_checkpoint(journal)
    assert retained["seq"] == seq
    kept = state["meters"]  # the checkpoint's own form (counts, since_*), read here without the meter code
    lifetime = dict(retained["meters"]["lifetime"])
    drop, win = lifetime.pop("drop"), lifetime.pop("win")
    assert lifetime == kept["counts"]
    assert retained["meters"]["since"] == {"power_up": kept["since_power_up"],
                                           "shoe_service": kept["since_shoe_service"]}
    wagers = kept["counts"]["wagers"].values()
    assert (drop, win) == (sum(w["wagered"] for w in wagers), sum(w["taken"] - w["paid"] for w in wagers))
    for at in (["--at", seq], []):  # as of its record, and now: nothing metered after the last round's close
        shown = crisscross("meters", "--journal", journal, *at, "--format", "json")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout) == retained["meters"]
    closes = [r for r in records if r["type"] == "RoundClosed"]
    assert lifetime["rounds_closed"] + lifetime["rounds_no_play"] == len(closes) == ROUNDS
    # every message of the topic during the run: one per round's close, the last one the retained one
    published = _messages(floor, "meters")
    assert [m["round"] for m, _ in published] == list(range(1, ROUNDS + 1))
    assert published[-1][0] == retained and not any(flag for _, flag in published)

    # significant: one message per SignificantEvent record, in journal order, with its data
    journaled = [r for r in records if r["type"] == "SignificantEvent"]
    messages = _messages(floor, "significant")
    assert [(m["record"]["seq"], m["record"]["data"]["code"]) for m, _ in messages] == [
        (r["seq"], r["data"]["code"]) for r in journaled]
    assert all(m["table"] == TABLE and m["record"]["data"] == r["data"] and m["record"]["type"] == "SignificantEvent"
               for (m, _), r in zip(messages, journaled))
    assert not any(flag for _, flag in messages)
    codes = [r["data"]["code"] for r in journaled]
    # started, devices found, the door opened (a fault), shut again (information), the fault ended, stopped
    assert {1001, 2001, 3005, 3011, 1002} <= set(codes) and codes.index(3005) < codes.index(3011)
    assert set(codes) & {4001, 4003}  # the supervisor cleared the fault or voided the round
    sources = {r["seq"]: r["type"] for r in records}
    assert all(sources[r["data"]["source_seq"]] == r["data"]["source"] for r in journaled)
    events = {e["record"]["seq"] for e, _ in _messages(floor, "events")}
    assert {r["seq"] for r in journaled} <= events  # on events too
