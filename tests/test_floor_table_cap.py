"""``floor watch`` and ``floor audit`` keep at most ``topics.MAX_TABLES`` tables, the first heard (docs/floor.md,
"Watch" and "Audit"): a message of any table beyond them is not kept, counted apart and said once, so a publisher
naming ever new table ids cannot grow the reader's memory or its summary without bound.

Oracle: the scripted broker (``tests.fake_mqtt``) sends known messages, one per table id, in a known order; which
tables are the first ``limit`` heard and how many messages come after them is counted from the script by hand."""

from __future__ import annotations

import logging
import time

from controller.floor import topics
from controller.floor.audit import Auditor
from controller.floor.listen import Listener
from controller.floor.pit import Pit
from controller.settings.floor import FloorConfig
from tests.cli_helpers import crisscross
from tests.fake_mqtt import FakeBroker


def _event(table: str, seq: int, after: int) -> bytes:
    return topics.encode({"table": table, "after": after, "record": {
        "seq": seq, "time": "2026-12-06T00:00:00+00:00", "kind": "record", "round": 1, "type": "FaultRaised",
        "data": {}}})


#: T1, T2, T3 each once, then T1 again (a table kept: counted under it), then T4: with room for two tables, T3
#: and T4 are beyond (2 messages), T1 has two faults and T2 one.
SCRIPT = [(b"crisscross/T1/events", _event("T1", 1, 0)),
          (b"crisscross/T2/events", _event("T2", 1, 0)),
          (b"crisscross/T3/events", _event("T3", 1, 0)),
          (b"crisscross/T1/events", _event("T1", 2, 1)),
          (b"crisscross/T4/status", b"online")]


def _heard(taker) -> None:
    """Feed ``taker`` (a ``Pit`` or an ``Auditor``) every message of ``SCRIPT`` through the floor's listener: until
    the broker has every one acknowledged (paho acknowledges a message once its callback returned), 30 s at most."""
    broker = FakeBroker(SCRIPT)
    listener = Listener(FloorConfig(True, "127.0.0.1", broker.port), taker.take)
    try:
        listener.open()
        deadline = time.monotonic() + 30
        while len(broker.pubacks) < len(SCRIPT):
            assert time.monotonic() < deadline, f"not every message acknowledged within 30 s: {broker.pubacks}"
            listener.pump(0.05)
    finally:
        listener.close()
        broker.close()


def test_watch_keeps_the_first_tables_heard_and_counts_the_messages_of_the_others_apart(caplog):
    caplog.set_level(logging.WARNING)
    pit = Pit(max_tables=2)
    _heard(pit)
    assert sorted(pit.tables) == ["T1", "T2"]
    assert (pit.tables["T1"].faults, pit.tables["T2"].faults) == (2, 1)
    assert pit.beyond == 2
    said = [r.getMessage() for r in caplog.records if "more than 2 tables heard" in r.getMessage()]
    assert len(said) == 1, caplog.text  # said once, not once per message
    assert "T3" not in caplog.text and "T4" not in caplog.text
    lines = pit.render().splitlines()
    assert [line.split()[0] for line in lines[1:-1]] == ["T1", "T2"]
    assert lines[-1] == "2 message(s) of tables beyond the first 2 heard: not kept"


def test_audit_keeps_the_first_tables_heard_and_names_the_messages_of_the_others_as_a_problem():
    audit = Auditor(max_tables=2)
    _heard(audit)
    assert sorted(audit.tables) == ["T1", "T2"]
    assert audit.tables["T1"].seqs == [1, 2]
    assert audit.beyond == 2
    assert audit.problems() == ["2 message(s) of tables beyond the first 2 heard: not kept, not audited"]


def test_watch_command_keeps_500_tables_and_counts_a_501st_apart():
    """The command's own bound: 501 tables, one status message each (``T000`` to ``T500``, in that order)."""
    script = [(f"crisscross/T{n:03d}/status".encode(), b"online") for n in range(501)]
    broker = FakeBroker(script)
    try:
        result = crisscross("floor", "watch", "--broker", "127.0.0.1", "--port", str(broker.port), "--for", "3")
    finally:
        broker.close()
    assert result.returncode == 0, result.stderr
    assert len(broker.pubacks) == 501, broker.pubacks[-3:]
    lines = [line for line in result.stdout.splitlines() if line]  # summaries apart by an empty line
    last = lines[max(n for n, line in enumerate(lines) if line.startswith("table ")):]  # the last summary
    assert [line.split()[0] for line in last[1:-1]] == [f"T{n:03d}" for n in range(500)]
    assert last[-1] == "1 message(s) of tables beyond the first 500 heard: not kept"
