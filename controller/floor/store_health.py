"""The floor's store's own health: written by the store, read and judged for the pit page (docs/backoffice.md,
"The store's health").

The pit page reads the database only. A store that is gone (killed, crashed, its machine off) or alive but unable
to write (the database refusing every write, its connection lost and tried again) leaves the last figures in
place, and the page would show them as if they were current. So each store (``controller.floor.store.FloorStore``)
keeps one row of ``store_health`` (schema ``004_store_health.sql``), keyed by its MQTT client id, written
(``write``) at most every ``BEAT`` seconds: in the transaction of a batch it writes or, when it holds nothing
unwritten, in a transaction of its own; and once more at a clean stop (``stopped_at``). ``written_at`` is the
database's clock at the write. A write the database refuses takes the row's update with it (one transaction), so a
row that stops advancing is the signal, whatever the cause.

The rule (``judge``; the one place it lives: the page's JavaScript shows its answer and decides nothing). Per store,
by the first that holds:

- ``stopped``: it said it stopped (``stopped_at``);
- ``silent``: its latest write is more than ``silent_after`` seconds old (``floor serve --store-silent-after``,
  default ``SILENT_AFTER``), both times by the database's clock, so neither the store's nor the pit's clock matters;
- ``no broker``: it writes, but was not connected and subscribed to the broker at its latest write (it hears no
  table);
- ``writing``.

The page's state is the worst of its stores' (``STATES``, best first), or ``unknown`` when no row can be read: the
table is missing (a database of schema 001-003: no store of schema 004 has run on it), the page's role may not
read it, no store has written a row yet, or the database cannot be read at all (``unreadable``). Every state but
``writing`` means the page's figures may be stale.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

#: Seconds between two writes of a store's row while it can write (at most; at a batch or when idle).
BEAT = 2.0
#: ``floor serve --store-silent-after``'s default: seconds without a write before a store is ``silent``.
SILENT_AFTER = 30.0
#: The least ``--store-silent-after``: three beats, so that a store writing on time is never called silent.
MIN_SILENT_AFTER = 3 * BEAT
#: A store's states, best first (``judge``); the page's state is the worst of its stores', or ``unknown``.
STATES = ("writing", "no broker", "stopped", "silent")
#: The words of each state on the page (``GET /api/labels``: the page keeps no list of its own).
WORDS = {"writing": "store writing", "no broker": "store not connected to the broker", "stopped": "store stopped",
         "silent": "store silent", "unknown": "store health unknown"}
#: Stores listed at most (a database normally has one; a row stays for each store name ever run until deleted).
MAX_STORES = 50
#: The row's columns, as ``read`` returns them.
COLUMNS = ("store", "host", "pid", "started_at", "written_at", "pending", "stored", "skipped", "refused", "subscribed",
           "stopped_at")


@dataclass(frozen=True)
class Beat:
    """What a store writes of itself (``write``): ``store`` (its MQTT client id), ``host`` and ``pid`` (where it
    runs), ``started_at`` (aware, its own clock), ``pending`` (messages received and not written once the write's
    transaction commits), ``stored`` (records stored since it started), ``skipped`` (messages acknowledged unwritten
    since it started), ``refused`` (batch writes the database refused since it started), ``subscribed`` (its broker
    connection up and subscribed) and ``stopped`` (a clean stop: the last write)."""

    store: str
    host: str
    pid: int
    started_at: dt.datetime
    pending: int
    stored: int
    skipped: int
    refused: int
    subscribed: bool
    stopped: bool = False


def write(conn: Any, beat: Beat) -> None:
    """Write ``beat`` as its store's row in the transaction the caller holds on the psycopg connection ``conn``
    (replacing the row; ``written_at`` and a stop's ``stopped_at`` the database's ``clock_timestamp()``). psycopg's
    errors propagate: the caller's transaction rolls back, and the row keeps its last write."""
    conn.execute(
        "INSERT INTO store_health (store, host, pid, started_at, written_at, pending, stored, skipped, refused, "
        "subscribed, stopped_at) VALUES (%s, %s, %s, %s, clock_timestamp(), %s, %s, %s, %s, %s, CASE WHEN %s THEN "
        "clock_timestamp() END) ON CONFLICT (store) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, "
        "started_at = EXCLUDED.started_at, written_at = EXCLUDED.written_at, pending = EXCLUDED.pending, "
        "stored = EXCLUDED.stored, skipped = EXCLUDED.skipped, refused = EXCLUDED.refused, "
        "subscribed = EXCLUDED.subscribed, stopped_at = EXCLUDED.stopped_at",
        (beat.store, beat.host, beat.pid, beat.started_at, beat.pending, beat.stored, beat.skipped, beat.refused,
         beat.subscribed, beat.stopped))


def read(conn: Any) -> tuple[list[dict[str, Any]], str | None]:
    """The stores' rows on the psycopg connection ``conn`` (at most ``MAX_STORES``, by name), each ``COLUMNS`` and
    ``age`` (seconds since ``written_at`` by the database's clock, float), and why there are none when the page
    cannot know (``None`` when the table was read): the table missing (schema before 004), not readable by the
    page's role, or empty. psycopg's errors propagate."""
    table, readable = conn.execute("SELECT t, t IS NOT NULL AND has_table_privilege(t, 'SELECT') "
                                   "FROM to_regclass('store_health') t").fetchone()
    if table is None:
        return [], "the database has no store_health: its schema is before 004 (no store of this version ran on it)"
    if not readable:
        return [], "the page's database role may not read store_health (GRANT SELECT ON store_health TO it)"
    rows = [dict(zip((*COLUMNS, "age"), row)) for row in conn.execute(
        f"SELECT {', '.join(COLUMNS)}, extract(epoch FROM clock_timestamp() - written_at) FROM store_health "
        f"ORDER BY store LIMIT %s", (MAX_STORES,))]
    return rows, None if rows else "no store has written its health yet (a store before schema 004, or none started)"


def state(row: dict[str, Any], silent_after: float) -> str:
    """A store's state (module docstring) from its row (``read``) and ``silent_after`` (seconds)."""
    if row["stopped_at"] is not None:
        return "stopped"
    if float(row["age"]) > silent_after:
        return "silent"
    return "writing" if row["subscribed"] else "no broker"


def judge(rows: list[dict[str, Any]], why: str | None, silent_after: float) -> dict[str, Any]:
    """The page's ``store_health`` (module docstring), JSON-ready: ``{"state", "why", "silent_after", "stores"}``,
    ``why`` said when ``state`` is ``unknown``; per store its ``COLUMNS`` (times in ISO 8601), its ``state`` and
    ``age_seconds`` (whole seconds since its latest write, never below 0)."""
    stores = [{**{key: _shown(row[key]) for key in COLUMNS}, "state": state(row, silent_after),
               "age_seconds": max(0, int(float(row["age"])))} for row in rows]
    worst = max((STATES.index(s["state"]) for s in stores), default=None)
    return {"state": "unknown" if worst is None else STATES[worst], "why": why if worst is None else None,
            "silent_after": silent_after, "stores": stores}


def reading(conn: Any, silent_after: float) -> dict[str, Any]:
    """``judge`` of the rows ``read`` on ``conn``; psycopg's errors propagate."""
    return judge(*read(conn), silent_after)


def unreadable(silent_after: float, error: str) -> dict[str, Any]:
    """The page's ``store_health`` while the database cannot be read (``error``): ``unknown``, whatever the last
    reading said."""
    return judge([], f"the database cannot be read ({error})", silent_after)


def _shown(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.datetime) else value
