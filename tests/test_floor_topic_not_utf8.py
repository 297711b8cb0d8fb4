"""A PUBLISH whose topic is not UTF-8 text (MQTT 5.0, 1.5.4 says a topic name is a UTF-8 Encoded String; a broken
or hostile broker may still send one, which Mosquitto itself would refuse) is not in the floor's format: ``floor
watch`` and ``floor audit`` skip it and count it (docs/floor.md), and go on with the good messages around it.

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


@pytest.fixture
def broker():
    fake = FakeBroker(SCRIPT)
    yield fake
    fake.close()


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
