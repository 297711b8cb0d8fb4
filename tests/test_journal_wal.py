"""The journal's WAL (issue 30 item 5): it grows while a reader holds an old snapshot, shrinks back to the bound
once the reader lets go, and its size is the metric ``crisscross_journal_wal_bytes``."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from controller.journal.store import WAL_KEPT_BYTES, Journal
from controller.service.metrics import ServiceMetrics

#: A record's data large enough that a few rounds take the WAL past its bound (the WAL holds pages of 4 KiB).
BULK = {"text": "x" * 60_000}


def _round(journal: Journal, n: int) -> None:
    """One round's two commits, the second a round's close (a checkpoint, then the WAL's)."""
    journal.commit([("record", "RoundOpened", {"round_no": n}, n), ("record", "Bulk", BULK, n)])
    journal.commit([("record", "RoundClosed", {"round_no": n}, n)], state={"round": n})


def _wal_size(path: Path) -> int:
    return os.stat(f"{path}-wal").st_size


def test_the_wal_grows_under_a_held_snapshot_and_shrinks_back_once_the_reader_lets_go(tmp_path):
    """A reader's open read transaction keeps each round's WAL checkpoint from taking the WAL whole: it grows
    past ``WAL_KEPT_BYTES``. Once the reader ends it, the rounds that follow bring ``journal.db-wal`` on disk
    back at or below the bound within two rounds (waited for round by round, never for a fixed time)."""
    path = tmp_path / "j.db"
    journal = Journal(path, fsync=False)
    try:
        _round(journal, 1)
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM records").fetchone()  # its snapshot is taken
        n = 1
        while _wal_size(path) <= 2 * WAL_KEPT_BYTES:
            n += 1
            _round(journal, n)
            assert n < 200, "the WAL did not grow under a held snapshot"
        grown = _wal_size(path)
        assert journal.wal_bytes == grown  # as kept after the last round's close
        reader.execute("COMMIT")
        reader.close()
        released, deadline = n, time.monotonic() + 30
        while _wal_size(path) > WAL_KEPT_BYTES:
            assert n - released < 3 and time.monotonic() < deadline, \
                f"the WAL stayed at {_wal_size(path)} bytes over {n - released} rounds after the reader went"
            n += 1
            _round(journal, n)
        assert _wal_size(path) <= WAL_KEPT_BYTES < grown
    finally:
        journal.close()


def test_the_wal_size_is_a_gauge(tmp_path):
    """``crisscross_journal_wal_bytes`` reads the journal's WAL size after the last round's close, the size of
    ``journal.db-wal`` on disk (``os.stat``), at each scrape."""
    path = tmp_path / "j.db"
    journal = Journal(path, fsync=False)
    try:
        metrics = ServiceMetrics(lambda: 0, dict, wal_bytes=lambda: journal.wal_bytes)
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM records").fetchone()  # the WAL cannot be reset under it
        _round(journal, 1)
        first = _wal_size(path)
        assert first > 60_000 and metrics.registry.get_sample_value("crisscross_journal_wal_bytes") == first
        _round(journal, 2)
        assert _wal_size(path) > first
        assert metrics.registry.get_sample_value("crisscross_journal_wal_bytes") == _wal_size(path)
        reader.execute("COMMIT")
        reader.close()
    finally:
        journal.close()
    assert ServiceMetrics(lambda: 0, dict).registry.get_sample_value("crisscross_journal_wal_bytes") == 0
