"""The journal store's tables, indexes and triggers, as SQL (docs/architecture.md, "The journal store").

One SQLite database: ``records`` (one row per record, ``data`` as its canonical JSON text, indexed by round,
with partial indexes of round ends, of the service's starts, of the devices' handshakes and of the changes of
operators), ``checkpoints`` (the round machine's state
after a record), ``seals`` (with a key: an HMAC-SHA256 of the chain head at the end of every commit) and
``meta``. Triggers refuse UPDATE and DELETE of every table: the store is append-only.
"""

from __future__ import annotations

import sqlite3

from controller.journal.record import MONO

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY, time TEXT NOT NULL, kind TEXT NOT NULL, round INTEGER, type TEXT NOT NULL,
    data TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL, mono INTEGER);
CREATE INDEX IF NOT EXISTS records_by_round ON records (round);
CREATE INDEX IF NOT EXISTS round_ends ON records (type, round) WHERE {round_ends};
CREATE INDEX IF NOT EXISTS starts ON records (seq) WHERE type = 'ServiceStarted';
CREATE INDEX IF NOT EXISTS readies ON records (seq) WHERE type = 'DeviceReady';
CREATE INDEX IF NOT EXISTS operator_changes ON records (seq) WHERE type = 'OperatorsChanged';
CREATE TABLE IF NOT EXISTS checkpoints (
    seq INTEGER PRIMARY KEY, round INTEGER, head TEXT NOT NULL, state TEXT NOT NULL, mac TEXT);
CREATE TABLE IF NOT EXISTS seals (seq INTEGER PRIMARY KEY, head TEXT NOT NULL, mac TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_APPEND_ONLY = ("records", "checkpoints", "seals", "meta")
#: The condition of the partial index ``round_ends``: a query uses the index only when it repeats it verbatim.
ROUND_ENDS = "type IN ('RoundOpened', 'RoundClosed', 'RoundVoided')"
#: The columns of ``records``, in the order a record's row holds them.
COLUMNS = "seq, time, kind, round, type, data, prev, hash, mono"


def columns(db: sqlite3.Connection) -> str:
    """``COLUMNS`` as the store on ``db`` can give them: a store written before ``mono`` was kept, read
    without changing it, gives NULL for it."""
    names = {row[1] for row in db.execute("PRAGMA table_info(records)")}
    return COLUMNS if MONO in names else COLUMNS.replace(MONO, "NULL")


def schema() -> str:
    """The SQL that creates what is missing of the store: its tables, indexes and append-only triggers."""
    triggers = "".join(
        f"CREATE TRIGGER IF NOT EXISTS {table}_no_{verb.lower()} BEFORE {verb} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'the journal is append-only: {verb} of {table} refused'); END;\n"
        for table in _APPEND_ONLY for verb in ("UPDATE", "DELETE"))
    return _SCHEMA.format(round_ends=ROUND_ENDS) + triggers


def add_mono(db: sqlite3.Connection) -> str:
    """The SQL that adds ``records.mono`` to a store written before it was kept (NULL in its rows), or ""."""
    names = {row[1] for row in db.execute("PRAGMA table_info(records)")}
    return "ALTER TABLE records ADD COLUMN mono INTEGER;" if names and MONO not in names else ""
