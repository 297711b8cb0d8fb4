"""A PUBLISH whose topic is not UTF-8 text (MQTT 5.0, 1.5.4 says a topic name is a UTF-8 Encoded String; a broken
or hostile broker may still send one, which Mosquitto itself would refuse), or whose table level is not a table id
by table.yaml's rule (``controller.game.table.table_id_problem``), is not in the floor's format: ``floor watch`` and
``floor audit`` skip it and count it (docs/floor.md), and go on with the good messages around it.

Oracle: the scripted broker (``tests.fake_mqtt``) sends known messages, one table's good ones before and after
the bad topic; what the commands must show of them is counted by hand below."""

from __future__ import annotations

import logging

import pytest

from controller.floor import topics
from tests.cli_helpers import crisscross
from tests.fake_mqtt import FakeBroker

BAD_TOPIC = b"crisscross/\xff\xfe/events"


def _event(seq: int, after: int, kind: str = "FaultRaised") -> bytes:
    return topics.encode({"table": "T1", "after": after, "record": {
        "seq": seq, "time": "2026-12-06T00:00:00+00:00", "kind": "record", "round": 1, "type": kind, "data": {}}})


SCRIPT = [(b"crisscross/T1/state", b'{"table":"T1","seq":1,"view":{"state":"betting","round_no":3}}'),
          (b"crisscross/T1/events", _event(1, 0)),
          (BAD_TOPIC, _event(2, 1)),
          (b"crisscross/T1/events", _event(2, 1))]


def _serving(script):
    """A scripted broker sending ``script`` for the test, closed after it."""
    fake = FakeBroker(script)
    yield fake
    fake.close()


@pytest.fixture
def broker():
    yield from _serving(SCRIPT)


def test_watch_skips_and_counts_a_topic_not_utf8_and_shows_the_messages_around_it(broker, caplog):
    caplog.set_level(logging.WARNING)
    result = crisscross("floor", "watch", "--broker", "127.0.0.1", "--port", str(broker.port), "--for", "2")
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line and not line.startswith("table ")]
    # the one table named, its state and its two faults (seq 1 and 2); nothing of the bad topic as a table
    assert [row[:4] for row in rows] == [["T1", "?", "3", "betting"]]
    assert rows[0][7] == "2"  # the faults column
    assert "a message whose topic is not UTF-8 text is skipped (1 so far)" in caplog.text
    assert broker.pubacks == [1, 2, 3, 4]  # every message taken, the bad one too (never sent again)


def test_audit_skips_and_counts_a_topic_not_utf8_as_a_problem_and_checks_the_rest(broker):
    result = crisscross("floor", "audit", "--broker", "127.0.0.1", "--port", str(broker.port), "--for", "2")
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert "T1: 2 records (first 1, last 2), 0 repeats, 0 anchors" in lines
    assert "1 message(s) whose topic is not UTF-8 text: not in the floor's format" in lines
    assert lines[-1] == "1 table(s), 1 problem(s)"


#: Table levels table.yaml refuses as a ``table_id`` (1-64 characters, none a control or format character): an
#: escape sequence that clears the terminal, a right-to-left override, 5,000 characters.
NOT_TABLE_IDS = ["T\x1b[2J", "T\u202eX", "x" * 5000]
NOT_A_TABLE_SCRIPT = [SCRIPT[0], SCRIPT[1],
                      (f"crisscross/{NOT_TABLE_IDS[0]}/events".encode(), _event(1, 0)),
                      (f"crisscross/{NOT_TABLE_IDS[1]}/status".encode(), b"online"),
                      (f"crisscross/{NOT_TABLE_IDS[2]}/events".encode(), _event(1, 0, "RoundClosed")),
                      SCRIPT[3]]


def _raw_ids_written(*texts: str) -> list[str]:
    """The characters of ``NOT_TABLE_IDS`` that make an id not one, and a run of the long one's, found in ``texts``."""
    return [bad for bad in ("\x1b", "\u202e", "x" * 21) if any(bad in text for text in texts)]


@pytest.fixture
def not_a_table_broker():
    yield from _serving(NOT_A_TABLE_SCRIPT)


def test_watch_skips_and_counts_a_topic_whose_table_id_is_not_one_and_never_writes_it(not_a_table_broker, caplog):
    """``floor watch`` hears T1 (its state and two faults) and three messages whose topic's table level table.yaml
    refuses: none becomes a table of the summary or adds to a count, each is counted apart in the log, and no
    character of those ids reaches the terminal or the log."""
    caplog.set_level(logging.WARNING)
    result = crisscross("floor", "watch", "--broker", "127.0.0.1", "--port", str(not_a_table_broker.port),
                        "--for", "2")
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line and not line.startswith("table ")]
    assert [row[:4] for row in rows] == [["T1", "?", "3", "betting"]]
    assert rows[0][7] == "2"  # the faults column: T1's two, nothing of the others
    assert "a message on a topic whose table id is not one" in caplog.text
    assert "is skipped (3 so far)" in caplog.text
    assert _raw_ids_written(result.stdout, result.stderr, caplog.text) == []
    assert not_a_table_broker.pubacks == [1, 2, 3, 4, 5, 6]  # every message taken (never sent again)


def test_audit_counts_a_topic_whose_table_id_is_not_one_as_a_problem_and_never_writes_it(not_a_table_broker):
    result = crisscross("floor", "audit", "--broker", "127.0.0.1", "--port", str(not_a_table_broker.port),
                        "--for", "2")
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines == ["T1: 2 records (first 1, last 2), 0 repeats, 0 anchors",
                     "3 message(s) on a topic whose table id is not one (table.yaml's rule): not in the floor's "
                     "format", "1 table(s), 1 problem(s)"]
    assert _raw_ids_written(result.stdout, result.stderr) == []
