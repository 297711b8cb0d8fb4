"""The read-only journal commands (``journal verify``, ``journal export``, ``recall``) leave a store's folder as
they found it (docs/architecture.md, "The journal store": readers take no lock and change nothing). Reading a
store in WAL mode needs its ``-wal`` and ``-shm`` beside it: beside a store closed cleanly the reader's own are
removed as it closes, as the last connection; the ``-wal`` and ``-shm`` of a service running on it are its own
and stay, whatever a reader does; a WAL a kill left is read with the store (its commits are counted) and left as
it was, never checkpointed into the store by a reader."""

from __future__ import annotations

import os
from pathlib import Path

from controller.journal.reader import iter_store
from controller.journal.store import Journal
from controller.journal.tools import verify
from tests.cli_helpers import crisscross
from tests.journal_helpers import closed_store, killed, play


def _folder(path: Path) -> dict[str, bytes | int]:
    """Every file beside the store ``path`` (its folder here holds nothing else) by name, with its bytes; the
    ``-shm`` (the WAL's shared index, which every reader of a WAL writes: its read marks) with its inode."""
    return {f.name: f.stat().st_ino if f.name.endswith("-shm") else f.read_bytes() for f in sorted(path.parent.iterdir())}


def _read_only_commands(path: Path, out: Path) -> list:
    return [crisscross("journal", "verify", str(path)),
            crisscross("journal", "export", "--journal", str(path), "--output", str(out)),
            crisscross("recall", "--journal", str(path), "--alerts")]


def test_read_only_commands_leave_a_closed_store_folder_as_they_found_it(tmp_path):
    folder = tmp_path / "journal"
    folder.mkdir()
    path, _, _ = closed_store(folder, keyed=False, rounds=3)
    before = _folder(path)
    assert sorted(before) == ["j.db", "j.db.anchor"]  # a store closed cleanly: no -wal, no -shm
    procs = _read_only_commands(path, tmp_path / "copy.jsonl")
    assert [p.returncode for p in procs] == [3, 0, 0], procs  # 3: no key, nothing found (verify's statuses)
    assert _folder(path) == before


def test_the_wal_and_index_of_a_service_running_on_the_store_stay_its_own(tmp_path):
    """A service running on the store: the readers leave its -wal and -shm (the same files), and it commits on."""
    path, _, _ = closed_store(tmp_path, keyed=False, rounds=2)
    journal = Journal(path, fsync=False)
    try:
        play(journal, range(3, 4))
        files = {end: os.stat(f"{path}{end}").st_ino for end in ("-wal", "-shm")}
        procs = _read_only_commands(path, tmp_path.parent / f"{tmp_path.name}-copy.jsonl")
        assert [p.returncode for p in procs] == [3, 0, 0], procs
        assert {end: os.stat(f"{path}{end}").st_ino for end in ("-wal", "-shm")} == files
        play(journal, range(4, 5))
    finally:
        journal.close()
    assert verify(path).records == 4 * 5  # five records a round (``play``)


def test_a_service_started_while_a_reader_reads_keeps_its_files(tmp_path):
    """The reader opened the store closed cleanly (its own -wal and -shm); a service starts on it meanwhile and
    uses them. The reader, closing, is not the last connection: the files stay the service's, which commits
    on; once the service closes, they are gone."""
    path, _, _ = closed_store(tmp_path, keyed=False, rounds=2)
    reading = iter_store(path)
    assert next(reading)["seq"] == 1  # the reader's connection is open
    assert os.path.exists(f"{path}-wal") and os.path.exists(f"{path}-shm")
    journal = Journal(path, fsync=False)
    try:
        play(journal, range(3, 4))
        assert len(list(reading)) == 2 * 5 - 1  # the reader's snapshot: the records before the service's start
        assert os.path.exists(f"{path}-wal") and os.path.exists(f"{path}-shm")
        play(journal, range(4, 5))
    finally:
        journal.close()
    assert sorted(p.name for p in tmp_path.glob("j.db*")) == ["j.db", "j.db.anchor"]
    assert verify(path).records == 4 * 5


def test_a_wal_left_by_a_kill_is_read_with_the_store_and_left_as_it_was(tmp_path):
    path, _, _, last = killed(tmp_path, keyed=False)
    before = _folder(path)
    assert sorted(before) == ["j.db", "j.db-shm", "j.db-wal", "j.db.anchor"]
    proc = crisscross("journal", "verify", str(path))
    assert proc.returncode == 3 and f"{last} records, chain unbroken" in proc.stdout, proc
    exported = crisscross("journal", "export", "--journal", str(path))
    assert exported.returncode == 0 and len(exported.stdout.splitlines()) == last, exported
    assert _folder(path) == before
