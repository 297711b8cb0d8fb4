"""The journal's two clocks (issue 29 item 9): a monotonic time beside the wall time in every record, a step of
the wall clock journaled as ``ClockStepped``, journals written before ``mono`` read as they were, and
``journal verify`` naming a record whose ``mono`` goes back within a run."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from controller.journal.clock import STEP_BOUND_MS
from controller.journal.reader import last_rounds, read_records
from controller.journal.record import GENESIS
from controller.journal.recovery import replay
from controller.journal.store import Journal
from controller.journal.tools import verify
from controller.round import commands as cmd
from drivers import events as ev
from tests.journal_helpers import exported_lines, rechain, replace_records
from tests.round_helpers import CONFIG, NY
from tests.test_recovery import CROSS, Recorder, play_until

BASE = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)


class FakeClocks:
    """A wall clock (ISO text, as ``Journal``'s ``clock``) and a monotonic one (µs) that advance together by
    ``tick_us`` at each monotonic reading; ``offset`` moves the wall clock alone (a step)."""

    def __init__(self, tick_us: int = 1000) -> None:
        self.now_us, self.tick_us, self.offset = 50_000_000, tick_us, timedelta(0)

    def wall(self) -> str:
        moment = BASE + timedelta(microseconds=self.now_us) + self.offset
        return moment.isoformat(timespec="milliseconds")

    def mono(self) -> int:
        self.now_us += self.tick_us
        return self.now_us


def _commit_round(journal: Journal, n: int) -> None:
    journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, None),
                    ("record", "RoundOpened", {"round_no": n}, n)])
    journal.commit([("record", "RoundClosed", {"round_no": n}, n)], state={"round": n})


def test_a_wall_clock_moved_back_an_hour_is_journaled_with_both_clocks(tmp_path, caplog):
    """The wall clock set back one hour between two commits: the second commit starts with ``ClockStepped``
    (both clocks before and after, the step in ms, independently: -3,600,000 ms less the time elapsed is not
    it; the wall moved back an hour while the monotonic clock moved on), logged at WARNING; every record
    carries ``mono``, never decreasing, while ``time`` goes back."""
    clocks = FakeClocks()
    journal = Journal(tmp_path / "j.db", fsync=False, clock=clocks.wall, monotonic=clocks.mono)
    try:
        _commit_round(journal, 1)
        before = read_records(tmp_path / "j.db")[-1]
        clocks.offset = timedelta(hours=-1)
        with caplog.at_level("WARNING", logger="controller.journal.store"):
            committed = journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, 1),
                                        ("record", "RoundOpened", {"round_no": 2}, 2)])
        _commit_round(journal, 3)
    finally:
        journal.close()
    assert [r["type"] for r in committed] == ["ClockStepped", "ButtonPressed", "RoundOpened"]
    step = committed[0]
    assert (step["kind"], step["round"]) == ("record", None)
    data = step["data"]
    assert (data["wall_before"], data["mono_before"]) == (before["time"], before["mono"])
    assert (data["wall_after"], data["mono_after"]) == (step["time"], step["mono"])
    elapsed_ms = (data["mono_after"] - data["mono_before"]) / 1000  # 1 ms per reading of the fake clock
    wall_ms = (datetime.fromisoformat(data["wall_after"]) - datetime.fromisoformat(data["wall_before"])) \
        / timedelta(milliseconds=1)
    assert data["step_ms"] == round(wall_ms - elapsed_ms) and -3600_000 - 5 <= data["step_ms"] <= -3600_000 + 5
    assert [r.levelname for r in caplog.records if "the wall clock stepped" in r.getMessage()] == ["WARNING"]
    records = read_records(tmp_path / "j.db")
    monos = [r["mono"] for r in records]
    assert monos == sorted(monos) and len(set(monos)) == len(monos)
    assert records[-1]["time"] < records[0]["time"]  # the wall time went back, the monotonic one did not
    assert [r["type"] for r in records].count("ClockStepped") == 1  # one step, one record
    assert verify(tmp_path / "j.db").tamper is None


def test_the_wall_clock_moving_with_the_monotonic_one_is_no_step(tmp_path):
    """Commits far apart (an idle table) with both clocks moving alike, and a wall clock within the bound of
    the monotonic one, record no step."""
    clocks = FakeClocks(tick_us=10_000_000)  # 10 s per reading
    journal = Journal(tmp_path / "j.db", fsync=False, clock=clocks.wall, monotonic=clocks.mono)
    try:
        _commit_round(journal, 1)
        clocks.offset = timedelta(milliseconds=STEP_BOUND_MS - 20)
        _commit_round(journal, 2)
    finally:
        journal.close()
    assert "ClockStepped" not in [r["type"] for r in read_records(tmp_path / "j.db")]


def test_replay_passes_over_a_clock_step_and_rebuilds_the_machine(tmp_path):
    """A ``ClockStepped`` in the middle of a round: the machine replayed from the journal is the live one."""
    clocks = FakeClocks()
    recorder = Recorder(tmp_path / "j.db", clock=clocks.wall, monotonic=clocks.mono)
    play_until(recorder, "lock")
    clocks.offset = timedelta(minutes=-30)
    recorder.feed(ev.StackDispensed(recorder.last(cmd.Dispense).txn_id, CROSS))
    live = recorder.controller.machine
    recorder.journal.close()
    records = read_records(tmp_path / "j.db")
    assert "ClockStepped" in [r["type"] for r in records]
    rebuilt = replay(records, CONFIG, NY)
    assert rebuilt.missing == [] and rebuilt.machine.view() == live.view()
    assert rebuilt.machine.state == live.state


#: The store's schema before ``mono`` (tables only: what a reader and a start depend on).
OLD_SCHEMA = """
CREATE TABLE records (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, kind TEXT NOT NULL, round INTEGER,
    type TEXT NOT NULL, data TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL);
CREATE INDEX records_by_round ON records (round);
CREATE TABLE checkpoints (seq INTEGER PRIMARY KEY, round INTEGER, head TEXT NOT NULL, state TEXT NOT NULL, mac TEXT);
CREATE TABLE seals (seq INTEGER PRIMARY KEY, head TEXT NOT NULL, mac TEXT NOT NULL);
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _old_hash(record: dict) -> str:
    """The hash as it was made before ``mono``: SHA-256 of the eight keys but ``hash``, canonical JSON."""
    body = {k: record[k] for k in ("seq", "time", "kind", "round", "type", "data", "prev")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _old_store(path: Path, rounds: int) -> list[dict]:
    """A store as written before ``mono``: the old schema, two rounds' worth of records each hashed the old
    way; returns the records."""
    records, prev = [], GENESIS
    for n in range(1, rounds + 1):
        for type_, data in (("RoundOpened", {"round_no": n}), ("RoundClosed", {"round_no": n})):
            record = {"seq": len(records) + 1, "time": f"2025-01-0{n}T10:00:00.000+00:00", "kind": "record",
                      "round": n, "type": type_, "data": data, "prev": prev}
            record["hash"] = prev = _old_hash(record)
            records.append(record)
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    db.executemany("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [(r["seq"], r["time"], r["kind"], r["round"], r["type"],
                     json.dumps(r["data"], sort_keys=True, separators=(",", ":")), r["prev"], r["hash"])
                    for r in records])
    db.commit()
    db.close()
    return records


def test_a_store_written_before_mono_verifies_opens_and_is_appended_to(tmp_path):
    """A store of the old schema and hash: read (without changing it) as it was, then opened, given the
    column, appended to; its old records keep their hashes and read back without ``mono``, the new ones with
    it, and the whole chain verifies again."""
    path = tmp_path / "old.db"
    old = _old_store(path, 3)
    lines = [json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in old]
    verdict = verify(path)
    assert (verdict.records, verdict.tamper) == (6, None)
    assert read_records(path) == old and exported_lines(path) == lines
    assert [n for n, _ in last_rounds(path, 2)] == [2, 3]  # recall, before any start
    path.chmod(0o600)  # as the service made every store: its owner's alone
    journal = Journal(path, fsync=False)
    try:
        assert journal.head == (6, old[-1]["hash"])
        _commit_round(journal, 4)
    finally:
        journal.close()
    records = read_records(path)
    assert records[:6] == old and exported_lines(path)[:6] == lines
    assert all("mono" in r for r in records[6:]) and len(records) == 9
    verdict = verify(path)
    assert (verdict.records, verdict.tamper) == (9, None)
    journal = Journal(path, fsync=False)  # and a start on it again
    journal.close()


def test_verify_names_a_record_whose_mono_goes_back_within_a_run(tmp_path):
    """Two records' monotonic times swapped and the store re-chained (no key: the chain alone verifies):
    verify calls it forged at the record whose ``mono`` is below the one before it; a ``ServiceStarted``
    between them (a new run, perhaps after a reboot) makes the same values acceptable."""
    path = tmp_path / "j.db"
    journal = Journal(path, fsync=False)
    _commit_round(journal, 1)
    _commit_round(journal, 2)
    journal.close()
    records = read_records(path)
    records[2]["mono"], records[3]["mono"] = records[3]["mono"], records[2]["mono"]
    assert records[3]["mono"] < records[2]["mono"]
    replace_records(path, rechain(records))
    tamper = verify(path).tamper
    assert tamper is not None and (tamper.kind, tamper.seq) == ("forged", 4)
    assert "monotonic time" in tamper.detail and "record 3" in tamper.detail
    records[3]["type"] = "ServiceStarted"
    replace_records(path, rechain(records), drop=("checkpoints",))  # the rest of the forgery: no key, no anchor
    Path(f"{path}.anchor").unlink()
    assert verify(path).tamper is None


@pytest.mark.parametrize("mono", ["12", 1.5, True])
def test_an_exported_record_with_a_mono_that_is_not_an_integer_is_not_a_record(tmp_path, mono):
    """``mono`` in a JSON-lines copy is an integer or the line is not a journal record."""
    from controller.journal.record import JournalError, parse_line

    record = {"seq": 1, "time": "x", "kind": "record", "round": None, "type": "T", "data": {}, "prev": GENESIS,
              "hash": "0" * 64, "mono": mono}
    with pytest.raises(JournalError, match="line 1"):
        parse_line((json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode(), "copy", 1)
