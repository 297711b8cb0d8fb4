"""Reading a journal (``controller.journal.reader``, ``controller.journal.chain``): what a reader refuses and
how it names it, the hash-chain check of a list of records, one writer per store, and ``import_records``
filling only a new store.

The right values come from the docstrings of ``controller/journal/`` (``iter_records``, ``last_rounds``,
``verify_chain``, ``find_tampering``, ``verify_journal``, ``lock_store``, ``Journal``, ``import_records``), from
docs/operations.md, "The journal" (one service per journal; a record is valid only in its canonical spelling) and from
records counted by the test itself.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.journal.chain import (
    Tamper,
    find_tampering,
    verify_chain,
    verify_journal,
)
from controller.journal.reader import iter_records, last_rounds, read_records
from controller.journal.record import JournalError
from controller.journal.store import Journal
from tests.examples import examples
from tests.journal_helpers import exported_lines, rechain

CLOCK = "2026-12-01T00:00:00.000+00:00"


def _store(path, rounds: int, per_round: int = 2):
    """A store of ``rounds`` rounds of ``per_round`` records each, and a start record outside any round."""
    journal = Journal(path, clock=lambda: CLOCK, fsync=False)
    journal.append("event", "ServiceStarted", {}, None)
    for n in range(1, rounds + 1):
        for i in range(per_round):
            journal.append("event", "ButtonPressed", {"button": "confirm", "i": i}, n)
    journal.close()
    return path


def test_an_absent_journal_has_no_records_and_a_folder_is_not_a_journal(tmp_path):
    assert list(iter_records(tmp_path / "none.db")) == []
    with pytest.raises(JournalError) as refused:
        iter_records(tmp_path)
    assert str(refused.value) == f"{tmp_path}: not a regular file"


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_the_last_rounds_of_a_copy_are_those_of_the_store(tmp_path, count):
    """``last_rounds``: the last ``count`` rounds in round order, read by index from a store and by streaming
    from its JSON-lines copy, the same records either way."""
    store = _store(tmp_path / "j.db", rounds=5)
    copy = tmp_path / "j.jsonl"
    copy.write_text("".join(exported_lines(store)))
    expected = [(n, [r for r in read_records(store) if r["round"] == n]) for n in range(max(1, 6 - count), 6)]
    assert last_rounds(store, count) == expected
    assert last_rounds(copy, count) == expected


def test_the_last_rounds_of_a_copy_cut_short_leave_out_its_torn_last_line(tmp_path):
    store = _store(tmp_path / "j.db", rounds=2)
    copy = tmp_path / "j.jsonl"
    lines = exported_lines(store)
    copy.write_text("".join(lines) + lines[-1][:20])  # an append a crash cut short
    assert [n for n, _ in last_rounds(copy, 5)] == [1, 2]


def test_a_line_longer_than_a_record_can_be_is_refused_by_its_number_unread(tmp_path):
    """A JSON-lines journal's line is read at most ``MAX_LINE_BYTES`` (1 MiB; a record's line is a few thousand):
    a longer one (a file made to fill a reader's memory) is refused by its line, before its end is read."""
    from controller.journal.reader import MAX_LINE_BYTES

    assert MAX_LINE_BYTES == 1 << 20
    store = _store(tmp_path / "j.db", rounds=1)
    copy = tmp_path / "j.jsonl"
    lines = exported_lines(store)
    copy.write_text("".join(lines[:2]) + "x" * (3 << 20) + "\n" + "".join(lines[2:]))
    with pytest.raises(JournalError) as refused:
        read_records(copy)
    assert str(refused.value) == f"{copy}: line 3: longer than 1,048,576 bytes: not a journal record"


def _chain(n: int) -> list[dict]:
    return rechain([{"seq": i, "time": CLOCK, "kind": "event", "round": None, "type": "ButtonPressed",
                     "data": {"i": i}, "prev": "", "hash": ""} for i in range(1, n + 1)])


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(min_value=2, max_value=12), st.data())
def test_property_verify_chain_names_the_first_broken_record(n, data):
    """``verify_chain``: None for an unbroken chain; else the first record whose seq, prev or hash is wrong,
    said in that order."""
    records = _chain(n)
    assert verify_chain(records) is None
    index = data.draw(st.integers(min_value=1, max_value=n))
    what = data.draw(st.sampled_from(["seq", "prev", "data"]))
    broken = [dict(r) for r in records]
    if what == "seq":
        broken[index - 1]["seq"] += 100
        expected = f"record {index}: seq {index + 100} where {index} was expected (removed, inserted or reordered)"
    elif what == "prev":
        broken[index - 1]["prev"] = "0" * 64 if index > 1 else records[0]["hash"]
        expected = f"record {index}: prev does not match record {index - 1}'s hash (removed, inserted or reordered)"
    else:
        broken[index - 1]["data"] = {"i": -1}
        expected = f"record {index}: content does not match its hash (edited)"
    assert verify_chain(broken) == expected


def test_a_record_repeated_after_a_later_one_is_an_inserted_copy():
    """``find_tampering``: a seq already seen earlier is ``inserted`` (a copy)."""
    records = _chain(4)
    copied = records[:3] + [records[1]]
    assert find_tampering(copied) == Tamper("inserted", 4, 2, "seq 2 repeats an earlier record (seq 4 expected)")


def test_verify_journal_of_a_missing_file_is_an_error_not_an_empty_journal(tmp_path):
    with pytest.raises(JournalError) as refused:
        verify_journal(tmp_path / "nope.jsonl")
    assert str(refused.value) == f"{tmp_path / 'nope.jsonl'}: no such file"


def test_a_copy_with_a_record_in_another_spelling_is_respelled_at_its_line(tmp_path):
    store = _store(tmp_path / "j.db", rounds=1)
    lines = exported_lines(store)
    lines[1] = lines[1].replace(",", ", ", 1)  # same JSON, another spelling
    copy = tmp_path / "j.jsonl"
    copy.write_text("".join(lines))
    count, tamper = verify_journal(copy)
    assert count == 2 and tamper.kind == "respelled" and tamper.line == 2


def test_one_writer_per_store_a_second_journal_on_it_is_refused_until_the_first_closes(tmp_path):
    path = _store(tmp_path / "j.db", rounds=1)
    first = Journal(path, fsync=False)
    try:
        with pytest.raises(JournalError) as refused:
            Journal(path, fsync=False)
        assert str(refused.value) == (f"{path}: in use by another process (a service already running on this "
                                      f"journal?): not opened")
    finally:
        first.close()
    Journal(path, fsync=False).close()  # the lock went with the first


def test_a_store_reached_by_another_name_is_locked_all_the_same(tmp_path):
    """A second writer through a symbolic link to a store in use is refused (the lock is held on the store's
    file itself, so any name reaches it and none can be removed from under it); a store with a second name (a
    hard link) is refused whoever holds it. Nothing is written by either refusal, and no lock file is made."""
    path = _store(tmp_path / "j.db", rounds=1)
    (tmp_path / "other").mkdir()
    link = tmp_path / "other" / "link.db"
    link.symlink_to(path)
    first = Journal(path, fsync=False)
    try:
        with pytest.raises(JournalError, match="in use by another process"):
            Journal(link, fsync=False)
        before = path.read_bytes()
        hard = tmp_path / "other" / "hard.db"
        hard.hardlink_to(path)
        with pytest.raises(JournalError) as refused:
            Journal(hard, fsync=False)
        assert str(refused.value).startswith(f"{hard}: the journal store has 2 names (hard links)")
        assert path.read_bytes() == before and not (tmp_path / "other" / "hard.db.lock").exists()
        hard.unlink()
    finally:
        first.close()
    Journal(link, fsync=False).close()  # by its link, once free
    assert not list(tmp_path.rglob("*.lock"))


def test_a_dangling_link_in_place_of_the_journal_is_refused_not_followed(tmp_path):
    """A journal path that is a link to nowhere would otherwise create a store wherever the link points."""
    link = tmp_path / "j.db"
    link.symlink_to(tmp_path / "elsewhere" / "j.db")
    with pytest.raises(JournalError) as refused:
        Journal(link)
    assert str(refused.value) == f"{link}: a dangling symbolic link"
    assert not (tmp_path / "elsewhere").exists()


def test_a_file_that_is_neither_a_store_nor_a_json_lines_journal_is_refused(tmp_path):
    path = tmp_path / "j.db"
    path.write_text("hello\n")
    with pytest.raises(JournalError) as refused:
        Journal(path)
    assert str(refused.value) == f"{path}: neither a journal store nor a JSON-lines journal"
    assert path.read_text() == "hello\n"


def test_import_fills_a_new_store_only_and_refuses_a_record_that_does_not_extend_the_chain(tmp_path):
    """``import_records``: only into an empty store; each record must extend the chain (what was committed
    before the refused one stays, in batches)."""
    records = read_records(_store(tmp_path / "source.db", rounds=3))  # 7 records
    new = Journal(tmp_path / "new.db", fsync=False)
    try:
        assert new.import_records(records, batch=2) == 7
        assert read_records(tmp_path / "new.db") == records
        with pytest.raises(JournalError) as refused:
            new.import_records(records)
        assert str(refused.value) == f"{tmp_path / 'new.db'}: holds records: import fills a new store only"
    finally:
        new.close()
    broken = records[:3] + records[4:]
    other = Journal(tmp_path / "other.db", fsync=False)
    try:
        with pytest.raises(JournalError) as refused:
            other.import_records(broken, batch=2)
        assert str(refused.value) == "record 5: does not extend the chain after record 3"
    finally:
        other.close()
    assert [r["seq"] for r in read_records(tmp_path / "other.db")] == [1, 2]  # the first batch was committed
