"""The journal: append-only JSON lines, fsynced, hash-chained; a broken journal is refused, nothing is lost."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from controller.journal import (
    GENESIS,
    Journal,
    JournalError,
    find_tampering,
    read_records,
    record_hash,
    verify_chain,
    verify_journal,
)


def _write(path, n=3):
    journal = Journal(path, clock=lambda: "2026-11-29T00:00:00.000+00:00")
    for i in range(n):
        journal.append("event", "ButtonPressed", {"button": "confirm", "i": i}, round_no=i + 1)
    journal.close()


def test_records_chain_by_sha256_of_canonical_json(tmp_path):
    path = tmp_path / "j.jsonl"
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


def test_reopening_appends_after_the_last_record_and_knows_the_last_round(tmp_path):
    path = tmp_path / "j.jsonl"
    _write(path)
    journal = Journal(path)
    assert journal.last_round_no == 3
    journal.append("record", "RoundOpened", {"round_no": 4}, 4)
    journal.close()
    records = read_records(path)
    assert len(records) == 4 and verify_chain(records) is None


def test_a_journal_knows_whether_it_was_just_created(tmp_path):
    """``created`` tells a new table (or a mistyped path) from a table with a history."""
    path = tmp_path / "folder" / "j.jsonl"
    journal = Journal(path)
    assert journal.created and path.exists()
    journal.close()
    assert Journal(path).created  # still empty: nothing recorded yet
    _write(tmp_path / "kept.jsonl")
    assert not Journal(tmp_path / "kept.jsonl").created


@pytest.mark.parametrize("tamper, expected", [
    (lambda lines: lines.__setitem__(1, lines[1].replace('"i":1', '"i":7')), "record 2: content"),
    (lambda lines: lines.pop(1), "record 2: seq 3"),
    (lambda lines: lines.insert(1, lines[0]), "record 2: seq 1"),
    (lambda lines: lines.reverse(), "record 1: seq 3"),
])
def test_edit_removal_insertion_and_reordering_are_found_and_named(tmp_path, tamper, expected):
    path = tmp_path / "j.jsonl"
    _write(path)
    lines = path.read_text().splitlines(keepends=True)
    tamper(lines)
    path.write_text("".join(lines))
    problem = verify_chain(read_records(path))
    assert problem is not None and problem.startswith(expected)
    with pytest.raises(JournalError, match="j.jsonl"):
        Journal(path)  # nothing is appended to a journal that does not verify
    assert path.read_text() == "".join(lines)


def test_a_line_that_is_not_json_is_named_by_number(tmp_path):
    path = tmp_path / "j.jsonl"
    _write(path)
    with path.open("a") as handle:
        handle.write("{not json\n")
    with pytest.raises(JournalError, match="line 4: not JSON"):
        read_records(path)


def test_a_torn_last_line_is_set_aside_and_nothing_acknowledged_is_lost(tmp_path):
    """A crash in the middle of an append leaves a line without its newline: that record was never
    acknowledged (nothing was applied after it), so it is moved to ``.torn`` and the chain goes on."""
    path = tmp_path / "j.jsonl"
    _write(path)
    complete = path.read_bytes()
    with path.open("a") as handle:
        handle.write('{"seq": 4, "ti')
    journal = Journal(path)
    assert journal.torn_tail == b'{"seq": 4, "ti'
    assert (tmp_path / "j.jsonl.torn").read_bytes() == b'{"seq": 4, "ti\n'
    assert path.read_bytes() == complete
    journal.append("event", "ButtonPressed", {"button": "reveal"}, 4)
    journal.close()
    records = read_records(path)
    assert [r["seq"] for r in records] == [1, 2, 3, 4] and verify_chain(records) is None
    with pytest.raises(JournalError, match="line 1: incomplete"):
        read_records(_torn_copy(tmp_path))


def _torn_copy(tmp_path):
    copy = tmp_path / "copy.jsonl"
    copy.write_text('{"seq": 1')
    return copy


def test_a_new_journal_is_readable_by_its_owner_only(tmp_path):
    """The journal holds face-down cards (hole-card secrecy): mode 0600."""
    Journal(tmp_path / "j.jsonl").close()
    assert (tmp_path / "j.jsonl").stat().st_mode & 0o777 == 0o600


def test_open_rounds_are_reported(tmp_path):
    journal = Journal(tmp_path / "j.jsonl")
    journal.append("record", "RoundOpened", {"round_no": 1}, 1)
    journal.append("record", "RoundClosed", {"round_no": 1, "totals": {}}, 1)
    journal.append("record", "RoundOpened", {"round_no": 2}, 2)
    journal.close()
    assert Journal(tmp_path / "j.jsonl").open_rounds == [2]


def test_a_device_file_is_not_read_as_a_journal():
    with pytest.raises(JournalError, match="not a regular file"):
        Journal(Path("/dev/zero"))


def test_append_rejects_an_unknown_kind(tmp_path):
    journal = Journal(tmp_path / "j.jsonl")
    with pytest.raises(ValueError, match="kind"):
        journal.append("note", "X", {}, None)
    journal.close()
    assert read_records(tmp_path / "j.jsonl") == []


def test_every_append_is_fsynced_before_it_returns(tmp_path, mocker):
    fsync = mocker.patch("controller.journal.os.fsync")
    journal = Journal(tmp_path / "j.jsonl")
    journal.append("event", "ButtonPressed", {"button": "reveal"}, 1)
    assert fsync.call_count == 1
    journal.append("command", "Shuffle", {}, 1)
    assert fsync.call_count == 2
    journal.close()


# --------------------------------------------------------------------------------------------------------------
# crisscross journal verify: name the first record edited, removed, inserted or reordered


def _lines(tmp_path, n=6):
    path = tmp_path / "j.jsonl"
    _write(path, n)
    return path, path.read_text().splitlines(keepends=True)


def _rehash(line):
    record = json.loads(line)
    record["i"] = "forged"
    record["hash"] = record_hash(record)
    return json.dumps(record, separators=(",", ":")) + "\n"


def _forged(line, seq):
    record = json.loads(line)
    record["seq"] = seq
    record["hash"] = record_hash(record)
    return json.dumps(record, separators=(",", ":")) + "\n"


def _swap(lines, a, b):
    lines[a], lines[b] = lines[b], lines[a]


TAMPERING = [
    ("edited in place", lambda ls: ls.__setitem__(2, ls[2].replace('"i":2', '"i":9')), ("edited", 3, 3)),
    ("edited, hash recomputed", lambda ls: ls.__setitem__(2, _rehash(ls[2])), ("edited", 3, 3)),
    ("seq edited", lambda ls: ls.__setitem__(2, ls[2].replace('"seq":3', '"seq":30')), ("edited", 3, 30)),
    ("removed", lambda ls: ls.pop(2), ("removed", 3, 4)),
    ("two removed", lambda ls: (ls.pop(2), ls.pop(2)), ("removed", 3, 5)),
    ("first removed", lambda ls: ls.pop(0), ("removed", 1, 2)),
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


def test_an_intact_journal_verifies(tmp_path):
    path, _ = _lines(tmp_path)
    assert verify_journal(path) == (6, None)
    assert find_tampering([]) is None


def _cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "controller", "journal", "verify", *map(str, args)],
                          check=False, capture_output=True, text=True, timeout=60)


def test_cli_exit_status_and_message(tmp_path, capsys):
    from controller.cli import main

    path, lines = _lines(tmp_path)
    assert main(["journal", "verify", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: intact, 6 records\n"
    lines.pop(3)
    path.write_text("".join(lines))
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    assert main(["journal", "verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out == f"{path}: tampered: line 4, seq 5: removed: seq 4 missing before this line\n"
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before  # verifying never rewrites the file


@pytest.mark.parametrize("content, message", [
    (b"{not json\n", "line 1: not JSON"),
    (b"\xff\xfe\x00garbage\n", "line 1: not UTF-8"),
    (b'{"seq": 1}\n' * 6 + b'{"seq": 7, "x": "\xff"}\n' + b'{"seq": 8}\n' * 3000, "line 7: not UTF-8"),
    (b"[" * 100_000 + b"\n", "line 1: not JSON"),
    (b'{"seq": 1}\n{"seq": ' + b"9" * 5000 + b"}\n", "line 2: not JSON"),
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
    assert not (tmp_path / "j.jsonl.torn").exists()


def test_cli_refuses_a_missing_file_and_a_directory(tmp_path):
    for target, message in ((tmp_path / "absent.jsonl", "no such file"), (tmp_path, "not a regular file")):
        proc = _cli(target)
        assert proc.returncode == 2 and message in proc.stderr and len(proc.stderr.splitlines()) == 1
