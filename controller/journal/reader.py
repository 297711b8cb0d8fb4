"""Reading a journal store without writing it: a read-only connection (also to an evidence copy on
write-protected media) and whether its WAL holds commits a reader of the database file alone does not see.

Used by every reader (``controller.journal.store.iter_store``, ``crisscross journal verify``); none of them changes
the store.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from controller.journal import key as jkey


def connect_reader(path: Path) -> tuple[sqlite3.Connection, bool]:
    """A read-only connection to the store at ``path`` (the service may be writing: WAL lets both go on), and
    whether it is ``immutable``: a store on read-only media without its ``-shm`` file (an evidence copy on
    write-protected media) cannot be opened in WAL mode, and is then read as an immutable file (SQLite's
    ``immutable=1``, sqlite.org/uri.html), which reads the database file alone: a WAL beside it is not read
    (``wal_pending`` says whether there is one). Raises ``sqlite3.Error``."""
    uri = f"file:{Path(path).absolute()}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return connection, False
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc) or not _read_only_media(path):
            raise
    connection = sqlite3.connect(uri + "&immutable=1", uri=True, check_same_thread=False)
    connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    return connection, True


def _read_only_media(path: Path) -> bool:
    """True when the file system holding ``path`` is mounted read-only."""
    try:
        return bool(os.statvfs(Path(path).absolute().parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def wal_pending(path: Path) -> int:
    """The size in bytes of the store's WAL (``<store>-wal``) when it holds frames (more than its 32-byte
    header): commits a reader of the database file alone does not see; 0 otherwise."""
    try:
        size = os.stat(jkey.beside(path, "-wal")).st_size
    except OSError:
        return 0
    return size if size > 32 else 0
