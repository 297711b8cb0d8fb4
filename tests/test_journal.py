"""The journal store: one SQLite transaction per commit, hash-chained, append-only; a broken journal is refused,
nothing is lost; its JSON-lines copy is valid only in its canonical spelling."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.journal import key as jkey
from controller.journal.chain import find_tampering, verify_chain, verify_journal
from controller.journal.reader import read_records
from controller.journal.record import (
    SAFE_INTEGER,
    GENESIS,
    JournalError,
    JournalWriteError,
    canonical_line,
    record_hash,
)
from controller.journal.store import CUT_COMMIT_VARIABLE, Journal
from tests.cli_helpers import crisscross
from tests.journal_helpers import exported_lines, forge, rechain

CLOCK = "2026-11-29T00:00:00.000+00:00"


def _write(path, n=3, **options):
    journal = Journal(path, clock=lambda: CLOCK, **options)
    for i in range(n):
        journal.append("event", "ButtonPressed", {"button": "confirm", "i": i}, round_no=i + 1)
    journal.close()


def test_records_chain_by_sha256_of_canonical_json(tmp_path):
    path = tmp_path / "j.db"
    _write(path)
    records = read_records(path)
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert records[0]["prev"] == GENESIS
    for before, record in zip(records, records[1:]):
        assert record["prev"] == before["hash"]
    # recompute independently of record_hash: sha256 over sorted-key compact JSON without "hash"
    body = {k: v for k, v in records[1].items() if k != "hash"}
    expected = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert records[1]["hash"] == expected
    assert verify_chain(records) is None


def test_the_store_is_sqlite_in_wal_mode_with_full_sync_an_index_by_round_and_append_only(tmp_path):
    """docs/architecture.md, "The journal store": WAL, synchronous=FULL, indexed by round, UPDATE and DELETE
    refused by triggers."""
    path = tmp_path / "j.db"
    journal = Journal(path)
    assert journal._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert journal._db.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL (SQLite: "PRAGMA synchronous")
    journal.append("record", "RoundOpened", {"round_no": 1}, 1)
    plan = journal._db.execute("EXPLAIN QUERY PLAN SELECT * FROM records WHERE round = 1").fetchall()
    assert "records_by_round" in str(plan)
    journal.close()
    db = sqlite3.connect(path)
    for sql in ("UPDATE records SET data = '{}'", "DELETE FROM records"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute(sql)
    db.close()
    assert len(read_records(path)) == 1


def test_one_commit_holds_every_record_or_none(tmp_path, mocker):
    """A commit the store refuses (here: a full disk) keeps nothing of it and leaves the head where it was;
    a later commit chains on the last one kept."""
    path = tmp_path / "j.db"
    journal = Journal(path)
    journal.commit([("event", "ButtonPressed", {"button": "reveal"}, 1), ("command", "Shuffle", {}, 1)])
    head = journal.head
    real = journal._db
    mocker.patch.object(journal, "_db", wraps=real)
    journal._db.executemany.side_effect = sqlite3.OperationalError("database or disk is full")
    with pytest.raises(JournalWriteError, match="database or disk is full"):
        journal.commit([("event", "ButtonPressed", {"button": "confirm"}, 1), ("record", "X", {}, 1)])
    assert journal.head == head and not real.in_transaction
    journal._db = real
    journal.append("record", "RoundOpened", {"round_no": 2}, 2)
    journal.close()
    records = read_records(path)
    assert [r["seq"] for r in records] == [1, 2, 3] and verify_chain(records) is None


def test_the_records_a_commit_returns_are_the_stores_own(tmp_path):
    """The records ``commit`` returns (decoded once read) equal the store's, their data as JSON gives it back
    (lists for tuples) and owned by the record: changing what was committed changes no record."""
    path = tmp_path / "j.db"
    journal = Journal(path)
    spots = {"request_id": 7, "spots": ((1, "ante_across", 500), (1, "ante_down", 500))}
    dealt = {"cards": ("Tc", "Qh"), "seat": None, "txn_id": 16, "note": "caf\u00e9"}
    records = journal.commit([("event", "SpotsSnapshot", spots, 3), ("command", "Dispense", dealt, None)])
    assert len(records) == 2 and records[-1]["seq"] == 2
    dealt["txn_id"] = 17
    journal.close()
    stored = read_records(path)
    assert list(records) == stored
    assert stored[0]["data"] == {"request_id": 7, "spots": [[1, "ante_across", 500], [1, "ante_down", 500]]}
    assert stored[1]["data"]["txn_id"] == 16 and stored[1]["round"] is None
    # the data's text is its canonical JSON (sorted keys, no spaces, ASCII), spelled here by the json module
    row = sqlite3.connect(path).execute("SELECT data FROM records WHERE seq = 2").fetchone()[0]
    assert row == json.dumps({**dealt, "txn_id": 16}, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _spelled_by_json(value):
    """The canonical spelling as the json module gives it (sorted keys, no spaces, ASCII, no NaN), or the
    type of exception it raises: the oracle of the journal's own encoder."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return type(exc)


_TEXT = st.text(st.characters(blacklist_categories=()), max_size=12) | st.sampled_from(
    ["", "null", "\x7f", "caf\u00e9", "\ud800", '"\\/\b\f\n\r\t', "\x00\x1f", "a", "a_b", "ab", "B", "_"])
_INTEGERS = st.integers() | st.sampled_from([0, -1, SAFE_INTEGER, 2**63 - 1, 2**63, 2**64, -(2**63), -(2**63) - 1])
_JSON = st.recursive(
    st.none() | st.booleans() | _INTEGERS | _TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.lists(inner, max_size=5).map(tuple)
    | st.dictionaries(_TEXT, inner, max_size=5) | st.dictionaries(st.integers(-20, 20), inner, max_size=3),
    max_leaves=30)


@settings(max_examples=600)
@given(_JSON)
def test_the_journal_spells_every_value_as_the_json_module_does(value):
    """Records are written and checked in one spelling (``canonical_line``, ``parse_canonical``): whatever
    spells it must give, for every value a record can hold (no floats: the reader refuses them), the json
    module's text, or refuse what it refuses."""
    expected = _spelled_by_json(value)
    try:
        spelled = canonical_line(value)
    except (TypeError, ValueError) as exc:
        spelled = type(exc)
    assert spelled == expected


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {"a": [float("-inf")]}])
def test_nan_and_infinities_are_refused_as_the_json_module_refuses_them(value):
    with pytest.raises(ValueError):
        canonical_line(value)


def test_a_record_is_timed_now_in_utc_to_the_millisecond(tmp_path):
    """A record's time is the time of its commit as ``datetime.now`` (UTC) gives it, cut to milliseconds."""
    from datetime import datetime, timezone

    journal = Journal(tmp_path / "j.db", fsync=False)
    times = []
    for n in range(50):
        before = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        record = journal.append("record", "X", {"n": n}, None)
        times.append((before, record["time"], datetime.now(timezone.utc).isoformat(timespec="milliseconds")))
    journal.close()
    for before, time_, after in times:
        assert before <= time_ <= after
        assert datetime.fromisoformat(time_).utcoffset().total_seconds() == 0 and time_.endswith("+00:00")


def test_reopening_appends_after_the_last_record_and_knows_the_last_round(tmp_path):
    path = tmp_path / "j.db"
    _write(path)
    journal = Journal(path)
    assert journal.last_round_no == 3
    journal.append("record", "RoundOpened", {"round_no": 4}, 4)
    journal.close()
    records = read_records(path)
    assert len(records) == 4 and verify_chain(records) is None


def test_a_journal_knows_whether_it_was_just_created(tmp_path):
    """``created`` tells a new table (or a mistyped path) from a table with a history."""
    path = tmp_path / "folder" / "j.db"
    journal = Journal(path)
    assert journal.created and path.exists()
    journal.close()
    _write(tmp_path / "kept.db")
    assert not Journal(tmp_path / "kept.db").created


FORGERIES = [
    ("edited", "UPDATE records SET data = '{\"button\":\"confirm\",\"i\":7}' WHERE seq = 2", "edited"),
    ("removed", "DELETE FROM records WHERE seq = 2", "removed"),
    # a copy of record 1 put at the end: read back as written (seq 1), it repeats an earlier record
    ("inserted", "INSERT INTO records SELECT 99, time, kind, round, type, data, prev, hash, mono FROM records WHERE seq = 1",
     "inserted"),
    # two records moved into each other's place: each read back with the seq it was hashed with
    ("reordered", ("UPDATE records SET seq = -2 WHERE seq = 2", "UPDATE records SET seq = 2 WHERE seq = 3",
                   "UPDATE records SET seq = 3 WHERE seq = -2"), "reordered"),
]


@pytest.mark.parametrize("sql, kind", [f[1:] for f in FORGERIES], ids=[f[0] for f in FORGERIES])
def test_a_store_altered_past_its_triggers_is_refused_and_named(tmp_path, sql, kind):
    path = tmp_path / "j.db"
    _write(path, 5)
    forge(path, *((one, ()) for one in ((sql,) if isinstance(sql, str) else sql)))
    before = path.read_bytes()
    with pytest.raises(JournalError, match="j.db"):
        Journal(path)  # nothing is appended to a journal that does not verify
    count, found = verify_journal(path)
    assert found is not None and found.kind == kind, found
    assert path.read_bytes() == before


def test_a_file_of_zeros_or_a_zero_filled_tail_is_lost_records_not_a_torn_write(tmp_path):
    """What a power cut leaves on some file systems: the service refuses to start and says so."""
    zeros = tmp_path / "zeros.db"
    zeros.write_bytes(bytes(8192))
    with pytest.raises(JournalError, match="all zeros: its records were lost"):
        Journal(zeros)
    path = tmp_path / "j.db"
    _write(path, 50)
    with path.open("ab") as handle:
        handle.write(bytes(8192))
    with pytest.raises(JournalError, match="zero bytes: records were lost"):
        Journal(path)
    proc = _cli(zeros)  # journal verify says the same, not "an incomplete line" of a JSON-lines copy
    assert proc.returncode == 2 and "all zeros: its records were lost" in proc.stderr, proc.stderr


def test_the_last_record_deleted_is_a_cut_not_records_lost_to_a_power_cut(tmp_path):
    """Records deleted from the end of a store (its triggers dropped, with the sqlite3 module) free the pages
    they held, and SQLite zeroes a page it frees (``secure_delete``). A store whose last page was one of them
    was refused at start as records lost to a power cut ("ends with 4096 or more zero bytes"), and a supervisor
    could not accept it after an inquiry (``reanchor`` said the same). The anchor shows more were written: it is
    a cut, named as one (``verify``: exit 1). Zeros on a page still in use are still records lost."""
    path = tmp_path / "j.db"
    journal = Journal(path, clock=lambda: CLOCK, fsync=False)
    for i in range(8):  # a record of 3,000 bytes and more fills a page (4,096 bytes) of its own
        journal.append("event", "ButtonPressed", {"button": "confirm", "note": "x" * 3000}, round_no=i + 1)
    journal.close()
    power_cut = tmp_path / "cut-power.db"
    power_cut.write_bytes(path.read_bytes()[:-4096] + bytes(4096))  # the last page, the last record's, zeroed
    with pytest.raises(JournalError, match="zero bytes: records were lost"):
        Journal(power_cut)
    forge(path, ("PRAGMA secure_delete = ON", ()), ("DELETE FROM records WHERE seq = 8", ()))
    assert not path.read_bytes()[-4096:].strip(b"\0")  # the file ends with the freed page, zeroed
    with pytest.raises(JournalError) as refused:
        Journal(path, fsync=False)
    assert "truncated: the journal ends at record 7, its anchor was written at record 8 (records cut from the " \
           "end)" in str(refused.value) and "zero bytes" not in str(refused.value), refused.value
    verified = crisscross("journal", "verify", path)
    assert verified.returncode == 1 and "truncated" in verified.stdout and "zero" not in verified.stdout, verified
    accepted = crisscross("journal", "reanchor", "--journal", path, "--by", "sue", "--reason", "inquiry 7")
    assert accepted.returncode == 0, accepted


def test_records_cut_past_the_last_checkpoint_without_the_anchor_are_named_a_cut(tmp_path):
    """The last round cut, its anchor deleted, no key: the last checkpoint names a record past the end. A start
    said "record N does not match its checkpoint (altered)"; it says the journal ends before it."""
    from tests.journal_helpers import closed_store

    path, _, _ = closed_store(tmp_path, keyed=False, rounds=3)
    records = read_records(path)
    opened = next(r["seq"] for r in records if r["type"] == "RoundOpened" and r["round"] == 3)
    checkpoint = max(r["seq"] for r in records if r["type"] == "RoundClosed")  # the close commits the checkpoint
    forge(path, ("DELETE FROM records WHERE seq >= ?", (opened,)))
    path.with_name("j.db.anchor").unlink()
    with pytest.raises(JournalError, match=f"truncated: the journal ends at record {opened - 1}, its last "
                                           f"checkpoint was written at record {checkpoint} "):
        Journal(path, fsync=False)


def test_a_json_lines_journal_is_not_opened_as_a_store(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text('{"seq":1}\n')
    with pytest.raises(JournalError, match="crisscross journal import"):
        Journal(path)
    assert path.read_text() == '{"seq":1}\n'


def test_a_new_journal_is_readable_by_its_owner_only(tmp_path):
    """The journal holds face-down cards (hole-card secrecy): mode 0600."""
    Journal(tmp_path / "j.db").close()
    assert (tmp_path / "j.db").stat().st_mode & 0o777 == 0o600


def test_open_rounds_are_reported(tmp_path):
    journal = Journal(tmp_path / "j.db")
    journal.append("record", "RoundOpened", {"round_no": 1}, 1)
    journal.append("record", "RoundClosed", {"round_no": 1, "totals": {}}, 1)
    journal.append("record", "RoundOpened", {"round_no": 2}, 2)
    journal.close()
    assert Journal(tmp_path / "j.db").open_rounds == [2]


def test_a_device_file_is_not_read_as_a_journal():
    with pytest.raises(JournalError, match="not a regular file"):
        Journal(Path("/dev/zero"))


def test_append_rejects_an_unknown_kind(tmp_path):
    journal = Journal(tmp_path / "j.db")
    with pytest.raises(ValueError, match="kind"):
        journal.append("note", "X", {}, None)
    journal.close()
    assert read_records(tmp_path / "j.db") == []


# --------------------------------------------------------------------------------------------------------------
# the JSON-lines copy (crisscross journal export): name the first record edited, removed, inserted or reordered


def _lines(tmp_path, n=6):
    _write(tmp_path / "j.db", n)
    path = tmp_path / "j.jsonl"
    return path, exported_lines(tmp_path / "j.db")


def _rehash(line):
    record = json.loads(line)
    record["data"]["i"] = "forged"
    record["hash"] = record_hash(record)
    return canonical_line(record) + "\n"


def _forged(line, seq):
    record = json.loads(line)
    record["seq"] = seq
    record["hash"] = record_hash(record)
    return canonical_line(record) + "\n"


def _swap(lines, a, b):
    lines[a], lines[b] = lines[b], lines[a]


TAMPERING = [
    ("edited in place", lambda ls: ls.__setitem__(2, ls[2].replace('"i":2', '"i":9')), ("edited", 3, 3)),
    ("edited, hash recomputed", lambda ls: ls.__setitem__(2, _rehash(ls[2])), ("edited", 3, 3)),
    ("seq edited", lambda ls: ls.__setitem__(2, ls[2].replace('"seq":3', '"seq":30')), ("edited", 3, 30)),
    ("removed", lambda ls: ls.pop(2), ("removed", 3, 4)),
    ("two removed", lambda ls: (ls.pop(2), ls.pop(2)), ("removed", 3, 5)),
    ("copy inserted", lambda ls: ls.insert(4, ls[1]), ("inserted", 5, 2)),
    ("forged inserted", lambda ls: ls.insert(2, _forged(ls[2], 99)), ("inserted", 3, 99)),
    ("swapped", lambda ls: _swap(ls, 2, 3), ("reordered", 3, 4)),
    ("reversed", lambda ls: ls.reverse(), ("reordered", 1, 6)),
]


@pytest.mark.parametrize("tamper, expected", [t[1:] for t in TAMPERING], ids=[t[0] for t in TAMPERING])
def test_find_tampering_names_the_first_record_and_the_kind(tmp_path, tamper, expected):
    path, lines = _lines(tmp_path)
    tamper(lines)
    path.write_text("".join(lines))
    count, found = verify_journal(path)
    assert count == len(lines)
    assert found is not None and (found.kind, found.line, found.seq) == expected, found


def test_the_first_record_removed_from_a_copy_is_a_part_not_checkable_from_its_start(tmp_path):
    """A copy starting at seq 2 is a part of a journal (``export --rounds``): its first link cannot be seen."""
    path, lines = _lines(tmp_path)
    path.write_text("".join(lines[1:]))
    proc = _cli(path)
    assert proc.returncode == 3 and "a part of a journal from seq 2" in proc.stdout and "intact" not in proc.stdout


def test_an_intact_journal_verifies(tmp_path):
    path, lines = _lines(tmp_path)
    path.write_text("".join(lines))
    assert verify_journal(path) == (6, None)
    assert verify_journal(tmp_path / "j.db") == (6, None)
    assert find_tampering([]) is None


def _cli(*args, command="verify"):
    """``crisscross journal COMMAND ARGS`` in this process (tests.cli_helpers)."""
    return crisscross("journal", command, *map(str, args))


def test_cli_exit_status_and_message(tmp_path, capsys):
    from controller.cli.main import main

    path, lines = _lines(tmp_path)
    path.write_text("".join(lines))
    assert main(["journal", "verify", str(path)]) == 3  # a copy carries no seal: never called intact
    assert capsys.readouterr().out.startswith(f"{path}: 6 records, chain unbroken; NOT CHECKABLE: ")
    lines.pop(3)
    path.write_text("".join(lines))
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    assert main(["journal", "verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out == f"{path}: tampered: line 4, seq 5: removed: seq 4 missing before this line\n"
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before  # verifying never rewrites the file


def _respell(line, old, new):
    assert old in line, line
    return line.replace(old, new, 1)


def _settlement_line(tmp_path):
    _write(tmp_path / "j.db", 3)
    journal = Journal(tmp_path / "j.db", clock=lambda: CLOCK)
    journal.append("record", "SeatSettled", {"round_no": 4, "seat": 1, "settlement": {"net": 500}}, 4)
    journal.append("record", "RoundClosed", {"round_no": 4, "totals": {"paid": 500}}, 4)
    journal.close()
    return exported_lines(tmp_path / "j.db")


#: Spellings of a record other than its canonical one: each is tampering, named by its line (exit 1).
RESPELLINGS = [
    ("repeated key", lambda ln: _respell(ln, '{"net":500}', '{"net":250000,"net":500}'), "key 'net' repeated"),
    ("re-spaced", lambda ln: _respell(ln, '"seat":1,', '"seat": 1,'), "re-spaced"),
    ("CRLF", lambda ln: ln.replace("\n", "\r\n"), "CRLF"),
    ("escaped key", lambda ln: _respell(ln, '"net"', '"\\u006eet"'), "escaped"),
    ("unsafe integer", lambda ln: _respell(ln, '"seat":1,', '"seat":9007199254740993,'), "outside the safe range"),
    ("keys reordered", lambda ln: _respell(ln, '{"net":500}', '{"net":500}').replace(
        '"seat":1,"settlement":{"net":500}', '"settlement":{"net":500},"seat":1'), "re-ordered"),
]


@pytest.mark.parametrize("respell, message", [r[1:] for r in RESPELLINGS], ids=[r[0] for r in RESPELLINGS])
def test_a_record_in_another_spelling_is_tampering_named_by_its_line(tmp_path, respell, message):
    """Exact bytes: a reader must not quietly normalise a second spelling (a repeated "net" verified as intact
    before, and every reader kept the last value)."""
    lines = _settlement_line(tmp_path)
    lines[3] = respell(lines[3])
    path = tmp_path / "copy.jsonl"
    path.write_bytes("".join(lines).encode())
    proc = _cli(path)
    assert proc.returncode == 1, proc
    assert proc.stdout.startswith(f"{path}: tampered: line 4, seq 4: respelled: ") and message in proc.stdout
    imported = _cli(path, "--journal", tmp_path / "new.db", command="import")
    assert imported.returncode == 1 and "does not verify" in imported.stderr
    assert not (tmp_path / "new.db").exists()


def test_a_respelled_record_in_the_store_is_tampering(tmp_path):
    _settlement_line(tmp_path)
    forge(tmp_path / "j.db", ("UPDATE records SET data = ? WHERE seq = 4",
                              ('{"round_no":4,"seat":1,"settlement":{"net":250000,"net":500}}',)))
    proc = _cli(tmp_path / "j.db")
    assert proc.returncode == 1 and "line 4, seq 4: respelled" in proc.stdout


@pytest.mark.parametrize("content, message", [
    (b"{not json\n", "line 1: not JSON"),
    (b'{"seq": "\xff"}\n', "line 1: not UTF-8"),
    (b'{"seq":' + b"[" * 100_000 + b"\n", "line 1: not JSON"),
    (b"\xff\xfe\x00garbage\n", "neither a journal store nor a JSON-lines journal"),  # not a line of records
    (b"[" * 100_000 + b"\n", "neither a journal store nor a JSON-lines journal"),
    (b'{"seq": ' + b"9" * 5000 + b"}\n", "line 1: not JSON"),
    (b'{"seq": true}\n', "line 1: not a journal record"),
    (b'{"seq": 1, "hash": "x"}', "line 1: incomplete last line"),
])
def test_cli_refuses_a_malformed_or_hostile_file_in_one_line_and_changes_nothing(tmp_path, content, message):
    path = tmp_path / "j.jsonl"
    path.write_bytes(content)
    proc = _cli(path)
    assert proc.returncode == 2
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1
    assert str(path) in proc.stderr and message in proc.stderr
    assert path.read_bytes() == content


def test_cli_refuses_a_missing_file_a_directory_and_an_empty_file(tmp_path):
    """``verify`` and ``export`` say what is wrong with the path, as ``recall`` does: no such file (in a missing
    folder too), not a regular file, an empty file (a journal holds its start record at least); exit 2, one
    line, and an empty file is left as it was."""
    empty = tmp_path / "empty.db"
    empty.touch()
    cases = ((tmp_path / "absent.db", "no such file"), (tmp_path / "no" / "j.db", "no such file"),
             (tmp_path, "not a regular file"), (empty, "the file is empty: it is not a journal"))
    for target, message in cases:
        for proc in (_cli(target), _cli("--journal", target, command="export")):
            assert proc.returncode == 2, (target, proc)
            assert proc.stderr.splitlines() == [f"crisscross: {target}: {message}"], proc.stderr
    assert empty.stat().st_size == 0


def test_creating_the_store_fsyncs_its_folder(tmp_path, mocker):
    """A power cut right after the store was created must not lose its name (fsync of the folder)."""
    spy = mocker.spy(jkey, "fsync_folder")
    Journal(tmp_path / "j.db").close()
    assert spy.call_args_list == [mocker.call(tmp_path)] * 2  # the store made, then its anchor
    Journal(tmp_path / "j.db").close()
    assert spy.call_count == 3  # an existing store is not created again: its anchor only is written anew


def test_a_commit_cut_short_by_a_crash_keeps_none_of_it(tmp_path):
    """The crash test's hook: the process dies (SIGKILL) in its 3rd commit, after handing the rows to SQLite and
    before COMMIT. The store keeps the two commits before, whole, and opens again."""
    path = tmp_path / "j.db"
    script = ("from controller.journal.store import Journal\n"
              f"j = Journal({str(path)!r})\n"
              "for n in range(5):\n"
              "    j.commit([('event', 'ButtonPressed', {'n': n}, None), ('record', 'X', {'n': n}, None)])\n")
    proc = subprocess.run([sys.executable, "-c", script], env={**os.environ, CUT_COMMIT_VARIABLE: "3"},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    journal = Journal(path)
    assert journal.head[0] == 4
    journal.close()
    assert [r["data"]["n"] for r in read_records(path)] == [0, 0, 1, 1]


def _without_mono(records):
    """``records`` as a journal written before ``mono`` was kept holds them (re-chained without it)."""
    return rechain([{key: value for key, value in record.items() if key != "mono"} for record in records])


def _legacy(record):
    """A line as the JSON-lines journal before the store wrote it (keys in their written order)."""
    return json.dumps({key: record[key] for key in ("seq", "time", "kind", "round", "type", "data", "prev", "hash")},
                      separators=(",", ":")) + "\n"


def test_a_json_lines_journal_from_before_the_store_is_imported_unchanged(tmp_path):
    _write(tmp_path / "j.db", 5)
    records = _without_mono(read_records(tmp_path / "j.db"))
    old = tmp_path / "journal.jsonl"
    old.write_text("".join(map(_legacy, records)))
    proc = _cli(old, "--journal", tmp_path / "new.db", command="import")
    assert proc.returncode == 0, proc.stderr
    assert read_records(tmp_path / "new.db") == records
    assert _cli(tmp_path / "new.db").returncode == 3  # no key: chain unbroken, not everything checkable
    lines = old.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('"i":2', '"i":9')
    old.write_text("".join(lines))
    proc = _cli(old, "--journal", tmp_path / "other.db", command="import")
    assert proc.returncode == 1 and "line 3, seq 3: edited" in proc.stderr and not (tmp_path / "other.db").exists()


def test_an_import_that_fails_half_way_leaves_nothing_beside_the_new_store(tmp_path, mocker):
    """A write refused in the middle of an import (a full disk, say): no store, WAL, anchor or lock file is left
    where the new store was to be, so that the import can simply be run again."""
    _write(tmp_path / "j.db", 3)
    old = tmp_path / "journal.jsonl"
    old.write_text("".join(map(_legacy, _without_mono(read_records(tmp_path / "j.db")))))
    mocker.patch.object(Journal, "import_records", side_effect=OSError(28, "No space left on device"))
    target = tmp_path / "new"
    target.mkdir()
    proc = _cli(old, "--journal", target / "new.db", command="import")
    assert proc.returncode == 2 and "No space left on device" in proc.stderr, proc
    assert list(target.iterdir()) == []


def test_export_of_a_range_of_rounds_is_every_record_from_its_first_to_its_last(tmp_path):
    _write(tmp_path / "j.db", 6)
    out = tmp_path / "part.jsonl"
    proc = _cli("--journal", tmp_path / "j.db", "--rounds", "2-4", "--output", out, command="export")
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_mode & 0o777 == 0o600  # it holds every card dealt, as the store does
    assert [json.loads(line)["round"] for line in out.read_text().splitlines()] == [2, 3, 4]
    assert out.read_text() == "".join(exported_lines(tmp_path / "j.db")[1:4])
    proc = _cli("--journal", tmp_path / "j.db", "--rounds", "4-2", command="export")
    assert proc.returncode == 2 and "1 <= A <= B" in proc.stderr
    proc = _cli("--journal", tmp_path / "j.db", "--rounds", "7-9", "--output", tmp_path / "none.jsonl",
                command="export")  # rounds the journal does not hold: refused, no empty file left behind
    assert proc.returncode == 2 and "no record of rounds 7-9 (the journal's rounds: 1-6)" in proc.stderr
    assert not (tmp_path / "none.jsonl").exists()


def test_export_of_rounds_reaching_beyond_the_journal_is_refused_naming_those_it_lacks(tmp_path):
    """A copy handed over as evidence of rounds A-B holds every one of them or is not written (docs/commands.md,
    "crisscross journal"): rounds 1-99 of a journal of rounds 1-6 wrote rounds 1-6 with exit status 0 as if
    that were all of them. The journal here holds rounds 3-8 (one record each, written by the test)."""
    journal = Journal(tmp_path / "j.db", clock=lambda: CLOCK)
    for round_no in range(3, 9):
        journal.append("event", "ButtonPressed", {"button": "confirm"}, round_no=round_no)
    journal.close()
    for asked, lacking in (("1-99", "1-2 and 9-99"), ("5-99", "9-99"), ("1-4", "1-2"), ("8-9", "9")):
        out = tmp_path / f"rounds-{asked}.jsonl"
        proc = _cli("--journal", tmp_path / "j.db", "--rounds", asked, "--output", out, command="export")
        assert proc.returncode == 2, (asked, proc)
        assert proc.stderr.splitlines() == [f"crisscross: {tmp_path / 'j.db'}: no record of rounds {lacking} "
                                            f"(the journal's rounds: 3-8): nothing exported"], asked
        assert not out.exists()  # no copy short of what was asked
    proc = _cli("--journal", tmp_path / "j.db", "--rounds", "3-8", "--output", tmp_path / "all.jsonl",
                command="export")
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line)["round"] for line in (tmp_path / "all.jsonl").read_text().splitlines()] == [
        3, 4, 5, 6, 7, 8]


def test_rounds_ended_of_a_store_being_created_is_none(tmp_path):
    """A reader polling while the service creates its store (the file exists, its tables not yet committed)
    sees no round ended, not an error (the crash test and the service tests poll this way)."""
    from controller.journal.reader import rounds_ended

    path = tmp_path / "j.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 1")  # a database file with a header and no table yet
    db.commit()
    db.close()
    assert rounds_ended(path) == 0
    (tmp_path / "other.jsonl").write_text('{"seq":1}\n')
    with pytest.raises(JournalError, match="cannot read the journal store"):
        rounds_ended(tmp_path / "other.jsonl")


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602])
def test_a_store_group_or_others_may_read_or_write_is_not_opened(tmp_path, mode):
    """The store holds every card dealt (docs/commands.md: the journal is its owner's alone, as the journal key
    and the operators file are): a table's store, or an empty file in its place, that group or others may read
    or write is refused with the remedy, its records and mode untouched, and opens once mended."""
    path = tmp_path / "table.db"
    journal = Journal(path)
    journal.append("record", "Marker", {"n": 1}, None)
    journal.close()
    before = path.read_bytes()
    empty = tmp_path / "empty.db"
    empty.touch()
    for store in (path, empty):
        store.chmod(mode)
        with pytest.raises(JournalError, match=rf"the journal store: (group|others|group and others) may .* it \(mode {mode:o}\).*"
                                                 rf"chmod 600 {re.escape(str(store))}: not opened"):
            Journal(store)
        assert store.stat().st_mode & 0o777 == mode
        store.chmod(0o600)
    assert path.read_bytes() == before
    journal = Journal(path)
    assert journal.head[0] == 1
    journal.close()
    Journal(empty).close()


@pytest.mark.parametrize("mode, shared", [(0o611, "group and others may execute it"),
                                         (0o601, "others may execute it"),
                                         (0o660, "group may read and write it"),
                                         (0o674, "group may read, write and execute it, others may read it")])
def test_the_refusal_names_the_rights_the_mode_grants(tmp_path, mode, shared):
    """The refusal said "may be read or written by group or others" of any mode with a group or other bit: a
    store of 0611 (execute only, chmod(1)'s bit 1) was said readable. It now names what each may do."""
    path = tmp_path / "table.db"
    path.touch()
    path.chmod(mode)
    with pytest.raises(JournalError, match=re.escape(f"{path}: the journal store: {shared} (mode {mode:o}): ")):
        Journal(path)


def test_run_refuses_a_journal_others_may_read_in_one_line(tmp_path):
    """``crisscross run`` on such a store: exit 2 in one line naming it and the remedy, nothing written."""
    path = tmp_path / "journal.db"
    path.touch()
    path.chmod(0o644)
    proc = crisscross("run", "--simulate", "--quiet", "--rounds", "1", "--journal", path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (f"crisscross: {path}: the journal store: group and others may read it "
                           f"(mode 644): it holds every card dealt: chmod 600 {path}: not opened\n")
    assert path.stat().st_size == 0 and not (tmp_path / "journal.db.anchor").exists()
