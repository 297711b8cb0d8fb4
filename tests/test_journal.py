"""The journal: append-only JSON lines, fsynced, hash-chained; a broken journal is refused, nothing is lost."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from controller.journal import GENESIS, Journal, JournalError, read_records, verify_chain


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
