"""The pit page's figures from the floor's store (``crisscross floor serve``; docs/backoffice.md, "The pit page").

``PitData.poll`` reads every table of the store once (at most ``MAX_TABLES``, in name order) into a JSON-ready
dict; ``Poller`` does it on a thread of its own every ``every`` seconds, whatever the number of browsers, and
keeps the latest as bytes for the page. Per table, every amount in integer minor units:

- ``status`` (``status``, the rule in one place): from the table's ``status`` topic as the store keeps it
  (``table_status``, ``controller.floor.store_write.Writer.status``) when it holds one: ``online`` when it says
  ``online``, whatever the age of the latest record (an idle table journals nothing); when it says ``offline``,
  ``offline`` with ``why`` ``stopped`` when the service said it stopped (its last ``ServiceStopped`` after its last
  ``ServiceStarted``), else ``lost`` (the broker's last will: the service, its PC or its network went away
  without a clean stop). The payload is the same ``offline`` for a clean stop and for the will
  (``controller.floor.publisher``), so the journal's ``ServiceStopped`` tells them apart. Without a kept status
  (a store of schema 001 only, a table that never published one), from the records: ``online`` when the
  service has not said it stopped and its latest record's own time is at most ``online_within`` seconds before
  now; else ``offline``, ``why`` ``stopped``, ``silent`` (no record for longer: the table is off, cut from the
  floor, or idle) or ``no records``. ``status_at``: when the store took the kept status from the broker (None
  without one).
- ``round`` and ``state``: the table's latest round (its last ``RoundOpened``) and the last step its records
  show (``phase``, read from ``controller.journal.recall.rounds_from_records``, the rounds of game recall): the
  table's own state is on its ``state`` topic, which the store does not keep.
- ``rounds``, ``rounds_voided``, ``drop``, ``win``: ``controller.floor.report.sums`` over the gaming day, the
  figures of ``crisscross floor report --period day`` (the meters' rule, ``crisscross meters``).
- ``rounds_per_hour``, ``faults``, ``past_posting``, ``mispays``: ``controller.floor.pit.count_record`` over the
  gaming day's records of ``pit.COUNTED_TYPES``, the rule of ``crisscross floor watch``, fed once each: a table
  is read again only when its ``last_seq`` moved. A record the counts cannot read (``count_record``'s
  ``ValueError``) is logged once (``pit.MALFORMED_LINES`` a minute at most), counted in the summary's ``malformed``
  and left out; every other record and table goes on.
- ``sessions``: rated seat sessions open: those whose latest ``SessionRated`` of the gaming day is not their end
  (a session shows from its first rating, ``run --rating``: its 10th round).
- ``store``: ``controller.floor.report_tool.store_states`` (records held past a gap, gaps open, unread, records
  the store is behind the table).

Beside the tables, ``store_health``: whether the store keeps the database current
(``controller.floor.store_health``, the rule in one place: ``writing``, ``no broker``, ``stopped``, ``silent``
after ``store_silent_after`` seconds without a write, or ``unknown``), read at every poll before the figures;
``unknown`` while the database cannot be read (``Poller``).

The gaming day begins at ``start`` (local time, or ``tz``) and is named by the date it begins on
(``controller.service.meters_snapshot.gaming_day``, as ``floor report`` names it). The store holds public
records only (``controller.control.server.public_record``), and nothing here shows a card.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.floor import report, store_health, topics
from controller.floor.periods import period_bounds
from controller.floor.pit import COUNTED_TYPES, MALFORMED_LINES, TableSummary, count_record
from controller.floor.report_tool import store_states
from controller.journal.recall import ROUND_TYPES, RoundRecord, rounds_from_records
from controller.round.actions import CURRENCY
from controller.service.meters_snapshot import gaming_day
from drivers.ratelog import LogLimiter

log = logging.getLogger(__name__)

#: Tables listed at most (in name order; the floor readers' bound, ``topics.MAX_TABLES``); the page says how many
#: more the store holds.
MAX_TABLES = topics.MAX_TABLES
#: Seconds a table's latest record may be old and the table still online.
ONLINE_WITHIN = 300.0
#: Seconds between two readings of the store (the page asks as often).
EVERY = 2.0
#: What the connection to the store says to PostgreSQL: nothing is ever written, and no query runs over 10 s.
SESSION_OPTIONS = "-c default_transaction_read_only=on -c statement_timeout=10s"

#: The pit's columns: ``(key of a table's row, a dotted path for one inside an object; heading; unit)``. Units,
#: as the page writes them: ``text``, ``count``, ``rate`` (one decimal), ``money`` (minor units), ``mispays``
#: (``[count, amount]``), ``status`` (with ``why``), ``store`` (records held, gaps open, unread, behind).
PIT_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("table", "Table", "text"), ("status", "Status", "status"), ("round", "Round", "count"),
    ("state", "State", "text"), ("rounds_per_hour", "Rounds/h", "rate"), ("rounds", "Rounds", "count"),
    ("drop", "Drop", "money"), ("win", "Win", "money"), ("faults", "Faults", "count"),
    ("past_posting", "Past-posting", "count"), ("mispays.caught", "Mispays caught", "mispays"),
    ("mispays.accepted", "Mispays accepted", "mispays"), ("sessions", "Open sessions", "count"),
    ("store", "Store", "store"))
#: The figures of a table's report (``controller.floor.report_tool.build``, ``crisscross floor report``) in the
#: order shown: ``(key, label, unit)``; units as ``PIT_COLUMNS``'s and ``percent``, ``points``, ``flag``.
REPORT_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("rounds", "Rounds closed with wagers", "count"), ("rounds_no_play", "Rounds closed without wagers", "count"),
    ("rounds_voided", "Rounds voided", "count"), ("rounds_test", "Test rounds", "count"),
    ("drop", "Drop", "money"), ("win", "Win", "money"), ("hold_percent", "Hold", "percent"),
    ("lifetime_hold_percent", "Lifetime hold", "percent"),
    ("hold_deviation_points", "Hold minus the lifetime's", "points"),
    ("deviates", "Deviates more than 4 points (Ohio OAC 3772-10-08(A))", "flag"),
    ("rated_rounds", "Rated seat rounds", "count"), ("rated_drop", "Rated drop", "money"),
    ("rated_actual", "Rated actual win", "money"), ("theoretical", "Theoretical win", "money"),
    ("theoretical_exact", "Theoretical win, exact (minor units)", "text"),
    ("theoretical_hold_percent", "Theoretical hold", "percent"),
    ("actual_hold_percent", "Actual hold (rated)", "percent"),
    ("variance", "Variance (minor units squared)", "count"), ("standard_deviation", "Standard deviation", "money"),
    ("interval_low", "95% interval, low", "money"), ("interval_high", "95% interval, high", "money"),
    ("outside_interval", "Actual outside the 95% interval (MD COMAR 36.05.03.25)", "flag"),
    ("seat_rounds_in_variance", "Seat rounds in the variance", "count"), ("store", "Store", "store"),
    ("store_health", "Store's health", "text"), ("store_lapsed_at", "A store has stored nothing since", "text"))
#: ``GET /api/labels``: the words and units of the page, the periods of a report, the currency (the page keeps
#: no list of its own).
LABELS: dict[str, Any] = {
    "columns": [{"key": k, "label": label, "unit": unit} for k, label, unit in PIT_COLUMNS],
    "report": [{"key": k, "label": label, "unit": unit} for k, label, unit in REPORT_FIELDS],
    "periods": {"day": "Gaming day", "mtd": "Month to date", "ytd": "Year to date", "30d": "Last 30 gaming days",
                "lifetime": "Lifetime"},
    "store_health": store_health.WORDS,
    "currency": CURRENCY}


def connect(dsn: str) -> Any:
    """A read-only psycopg 3 connection to the store ``dsn`` (``SESSION_OPTIONS``), autocommit."""
    import psycopg

    return psycopg.connect(dsn, autocommit=True, connect_timeout=5, options=SESSION_OPTIONS)


def close_quietly(conn: Any, whose: str) -> None:
    """Close ``conn`` (None: nothing to close); a connection already broken is said in the debug log, not raised.
    Returns None, for ``self._conn = close_quietly(self._conn, ...)``."""
    if conn is not None:
        try:
            conn.close()
        except Exception as exc:  # noqa: BLE001 - a broken connection: said, not raised
            log.debug("pit page: closing %s connection to the store: %s", whose, exc)


def round_state(records: list[dict[str, Any]], round_no: int) -> str:
    """``phase`` of round ``round_no`` from its records (journal order: ``seq``, ``time``, ``kind``, ``round``,
    ``type``, ``data``), read as game recall reads them (``rounds_from_records``)."""
    return phase(rounds_from_records(records).get(round_no, RoundRecord(round_no)), fault_stands(records))


def fault_stands(records: list[dict[str, Any]]) -> bool:
    """True when a fault raised in these records (one round's, in journal order) is not cleared: the last
    ``FaultRaised`` comes after the last ``FaultCleared``. The round core's rule (``controller.round.faults``,
    ``_clear_fault``): one ``FaultCleared`` clears every fault of the episode at once (its ``causes``), so after
    a clear no fault stands unless raised after it."""
    last = None
    for record in records:
        if record.get("type") in ("FaultRaised", "FaultCleared"):
            last = record["type"]
    return last == "FaultRaised"


def phase(rnd: RoundRecord, faulted: bool) -> str:
    """The last step of a round its records show, in words: ``voided``, ``closed``, ``fault`` (``faulted``: a
    fault raised and not cleared, ``fault_stands``), ``settlement`` (a seat settled or paid), ``<step> turned``
    (the last community cards turned: across, down, middle), ``<decision> decided`` (the decisions recorded at the dealer's confirm, their
    cards not yet turned), ``wagers locked``, else ``betting``; `` (test)`` after it for a round of test mode
    (NY 9 NYCRR 5319.58). The order of a round: NY 9 NYCRR 5324.39(e)."""
    if rnd.voided is not None:
        words = "voided"
    elif rnd.closed:
        words = "closed"
    elif faulted:
        words = "fault"
    elif rnd.settlements or rnd.payout_checks:
        words = "settlement"
    elif rnd.reveals and (not rnd.decisions or _after_reveal(rnd)):
        words = f"{rnd.reveals[-1][0]} turned"
    elif rnd.decisions:
        words = f"{rnd.decisions[-1][0]} decided"
    elif rnd.wagers:
        words = "wagers locked"
    else:
        words = "betting"
    return words + (" (test)" if rnd.test else "")


def _after_reveal(rnd: RoundRecord) -> bool:
    """True when the last reveal came after the last decisions recorded (a step's decisions precede its
    reveal)."""
    order = ("across", "down", "middle")
    return order.index(rnd.reveals[-1][0]) >= order.index(rnd.decisions[-1][0])


def status(latest: tuple[int, dt.datetime | None, str] | None, stopped: bool, now: dt.datetime,
           within: float, kept: str | None = None) -> tuple[str, str | None]:
    """``(status, why)`` of a table (module docstring) from the ``status`` the store keeps of it (``online``,
    ``offline``; None: none kept), its latest record ``(seq, time, type)`` (None: no record), whether its service
    said it stopped (its last ``ServiceStopped`` after its last ``ServiceStarted``), ``now`` (aware) and
    ``within`` (seconds). Raises ``ValueError`` for a kept status that is neither."""
    if kept == "online":
        return "online", None
    if kept == "offline":
        return "offline", "stopped" if stopped else "lost"
    if kept is not None:
        raise ValueError(f"table_status.status {kept!r}: expected online or offline")
    if latest is None:
        return "offline", "no records"
    if stopped:
        return "offline", "stopped"
    if latest[1] is None or (now - latest[1]).total_seconds() > within:
        return "offline", "silent"
    return "online", None


def kept_status(conn: Any, tables: list[str]) -> dict[str, tuple[str, dt.datetime]]:
    """``{table: (status, received_at)}`` of the ``tables`` whose status the store keeps (``table_status``,
    schema ``002_status.sql``); empty for a store whose schema does not have it yet (migrated by an older
    store). Read at every poll: a status changes without a record."""
    if conn.execute("SELECT to_regclass('table_status')").fetchone()[0] is None:
        return {}
    return {name: (said, at) for name, said, at in conn.execute(
        "SELECT table_id, status, received_at FROM table_status WHERE table_id = ANY(%s)", (tables,))}


@dataclass
class _Table:
    """What the poller keeps of one table through the gaming day: the ``count_record`` summary fed up to seq
    ``fed``, and the figures read when ``last_seq`` was ``seen``."""

    summary: TableSummary = field(default_factory=TableSummary)
    fed: int = 0
    seen: int = -1
    latest: tuple[int, dt.datetime | None, str] | None = None
    stopped: bool = False
    figures: dict[str, Any] = field(default_factory=dict)


class PitData:
    """Every table's figures (module docstring). ``start``: when the gaming day begins (local time, or ``tz``);
    ``online_within``, ``store_silent_after``: seconds; ``clock``: the time now (aware; default the system's).
    Owned by one thread."""

    def __init__(self, start: dt.time, *, online_within: float = ONLINE_WITHIN, tz: dt.tzinfo | None = None,
                 clock: Callable[[], dt.datetime] | None = None, max_tables: int = MAX_TABLES,
                 store_silent_after: float = store_health.SILENT_AFTER) -> None:
        self.start, self.online_within, self.tz, self.max_tables = start, online_within, tz, max_tables
        self.store_silent_after = store_silent_after
        self.clock = clock or (lambda: dt.datetime.now(dt.timezone.utc))
        self.day: dt.date | None = None
        self.tables: dict[str, _Table] = {}
        #: the records the counts cannot read, each said once as it is fed, at most ``MALFORMED_LINES`` a minute
        self._lines = LogLimiter(log, burst=MALFORMED_LINES, interval=60.0)

    def today(self, now: dt.datetime | None = None) -> dt.date:
        """The gaming day ``now`` (default: the clock's) falls in."""
        moment = (now or self.clock()).astimezone(self.tz) if self.tz else (now or self.clock()).astimezone()
        return gaming_day(moment.replace(tzinfo=None), self.start)

    def poll(self, conn: Any) -> dict[str, Any]:
        """Read the store on ``conn`` (psycopg 3): ``{"gaming_day", "day_start", "begin", "end", "as_of",
        "online_within", "currency", "tables": [...], "more_tables", "store_health"}``; psycopg's errors
        propagate."""
        now = self.clock()
        day = self.today(now)
        if day != self.day:  # a new gaming day: every count starts again
            self.day, self.tables = day, {}
        begin, end = period_bounds("day", day, self.start, self.tz)
        assert begin is not None
        # read before the figures: they are at least as recent as the store's health says
        health = store_health.reading(conn, self.store_silent_after)
        states = store_states(conn, limit=self.max_tables + 1)
        shown = list(states)[:self.max_tables]
        kept = kept_status(conn, shown)
        rows = []
        for name in shown:
            table = self.tables.setdefault(name, _Table())
            state = states[name]
            if table.seen != state["last_seq"]:
                self._read(conn, name, table, state["last_seq"], begin, end)
            said, said_at = kept.get(name, (None, None))
            found, why = status(table.latest, table.stopped, now, self.online_within, said)
            age = None if table.latest is None or table.latest[1] is None else \
                round((now - table.latest[1]).total_seconds())
            rows.append({"table": name, "status": found, "why": why,
                         "status_at": None if said_at is None else said_at.isoformat(), "last_seq": state["last_seq"],
                         "last_time": None if table.latest is None or table.latest[1] is None
                         else table.latest[1].isoformat(), "age_seconds": age,
                         **table.figures, "store": state})
        more = 0
        if len(states) > self.max_tables:
            more = conn.execute("SELECT count(*) FROM tables").fetchone()[0] - self.max_tables
        for gone in set(self.tables) - set(shown):
            del self.tables[gone]
        return {"gaming_day": day.isoformat(), "day_start": self.start.strftime("%H:%M"), "begin": begin.isoformat(),
                "end": end.isoformat(), "as_of": now.isoformat(), "online_within": self.online_within,
                "currency": CURRENCY, "tables": rows, "more_tables": more,
                "store_health": health}

    def _read(self, conn: Any, name: str, table: _Table, last_seq: int, begin: dt.datetime,
              end: dt.datetime) -> None:
        """Read the figures of table ``name`` whose ``last_seq`` moved (module docstring)."""
        if table.fed == 0:  # the gaming day's first reading: from the day's first record on (index by time)
            (first,) = conn.execute("SELECT min(seq) FROM records WHERE table_id = %s AND time >= %s",
                                    (name, begin)).fetchone()
            table.fed = last_seq if first is None else first - 1
        # read whole before any is counted: a store lost in the middle feeds none, so the next poll counts each once
        rows = conn.execute("SELECT seq, time, type, data FROM records WHERE table_id = %s AND seq > %s AND seq <= %s "
                            "AND type = ANY(%s) AND time >= %s AND time < %s ORDER BY seq",
                            (name, table.fed, last_seq, sorted(COUNTED_TYPES), begin, end)).fetchall()
        for seq, moment, type_, data in rows:
            try:
                count_record(table.summary, {"seq": seq, "time": moment.isoformat(), "type": type_, "data": data})
            except ValueError as exc:  # one table's record the counts cannot read: said, counted, left out
                table.summary.malformed += 1
                self._lines.log(logging.WARNING, "pit page: malformed record", "pit page: table %r, record %s: %s",
                                name[:64], seq, exc)
        table.fed = max(table.fed, last_seq)
        table.latest = conn.execute("SELECT seq, time, type FROM records WHERE table_id = %s ORDER BY seq DESC "
                                    "LIMIT 1", (name,)).fetchone()
        started, stopped = (conn.execute("SELECT max(seq) FROM records WHERE table_id = %s AND type = %s", (name, kind))
                            .fetchone()[0] or 0 for kind in ("ServiceStarted", "ServiceStopped"))
        table.stopped = stopped > started
        columns = report.sums(conn, name, begin, end).columns
        opened = conn.execute("SELECT seq, round_no FROM records WHERE table_id = %s AND type = 'RoundOpened' "
                              "ORDER BY seq DESC LIMIT 1", (name,)).fetchone()
        round_no, state = None, None
        if opened is not None:
            seq, round_no = opened
            records = [{"seq": s, "time": m.isoformat() if m else None, "kind": k, "round": r, "type": t, "data": d}
                       for s, m, k, r, t, d in conn.execute(
                           "SELECT seq, time, kind, round_no, type, data FROM records WHERE table_id = %s AND "
                           "seq >= %s AND seq <= %s AND round_no = %s AND type = ANY(%s) AND data IS NOT NULL "
                           "ORDER BY seq", (name, seq, last_seq, round_no, sorted(ROUND_TYPES)))]
            state = round_state(records, round_no)
        (sessions,) = conn.execute(
            "SELECT count(*) FROM (SELECT DISTINCT ON (session_key) ended FROM sessions WHERE table_id = %s AND "
            "time >= %s AND time < %s ORDER BY session_key, seq DESC) latest WHERE NOT ended",
            (name, begin, end)).fetchone()
        summary = table.summary
        mispays = {"caught": [0, 0], "accepted": [0, 0]}
        for day in summary.mispays.values():  # the gaming day's records only were fed: every day of them
            for kind, (number, amount) in day.items():
                mispays[kind] = [mispays[kind][0] + number, mispays[kind][1] + amount]
        rate = summary.per_hour()
        table.figures = {
            "round": round_no, "state": state, "rounds": columns["rounds_closed"],
            "rounds_voided": columns["rounds_voided"], "drop": columns["drop"], "win": columns["win"],
            "rounds_per_hour": None if rate is None else round(rate, 1), "faults": summary.faults,
            "past_posting": summary.past_posting, "mispays": mispays, "sessions": int(sessions)}
        table.seen = last_seq


class Poller:
    """``PitData.poll`` on a thread of its own (``pit-poll``) every ``every`` seconds, on a connection of its own
    (``connect_db(dsn)``, default ``connect``): ``latest`` is the last answer as JSON bytes with ``store``
    (``{"ok": true}``, or ``{"ok": false, "error", "since"}`` while the store cannot be read: the figures are
    then those of ``as_of``, and ``store_health`` is ``unknown``: ``store_health.unreadable``). A lost connection
    is opened again at the next turn; the store's errors are logged at most once a minute, any other with its
    traceback. ``first()`` reads once on the caller's thread, raising what
    it raises."""

    def __init__(self, dsn: str, data: PitData, every: float = EVERY,
                 connect_db: Callable[[str], Any] | None = None) -> None:
        self.dsn, self.data, self.every = dsn, data, every
        self._connect = connect_db or connect
        self._conn: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lines = LogLimiter(log, interval=60.0)
        self._last: dict[str, Any] | None = None
        self._failed_since: str | None = None
        #: the latest answer for ``GET /api/pit`` (replaced whole; read by the server's loop)
        self.latest: bytes = b""
        #: answers made since the start
        self.polls = 0

    def first(self) -> None:
        """One reading now, on this thread; raises psycopg's errors (a store that cannot be read at the start)."""
        self._turn(raise_errors=True)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="pit-poll", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the thread and close the connection."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
        self._close()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._turn()

    def _turn(self, raise_errors: bool = False) -> None:
        import psycopg

        try:
            if self._conn is None:
                self._conn = self._connect(self.dsn)
            self._last = self.data.poll(self._conn)
            self._failed_since = None
            store: dict[str, Any] = {"ok": True}
        except Exception as exc:  # psycopg's errors (a connection lost) and defects: said on the page, tried again
            if raise_errors:
                self._close()
                raise
            self._failed_since = self._failed_since or dt.datetime.now(dt.timezone.utc).isoformat()
            if isinstance(exc, psycopg.Error):
                self._lines.log(logging.ERROR, "pit poll", "pit page: the store cannot be read: %s: %s",
                                type(exc).__name__, str(exc).strip())
            else:
                log.exception("pit page: reading the store failed")
            self._close()
            store = {"ok": False, "error": f"{type(exc).__name__}: {str(exc).strip()[:200]}",
                     "since": self._failed_since}
        answer = {**(self._last or {"tables": []}), "every": self.every, "store": store}
        if not store["ok"]:  # the last reading's health is no longer known
            answer["store_health"] = store_health.unreadable(self.data.store_silent_after, store["error"])
        self.latest = json.dumps(answer, separators=(",", ":")).encode()
        self.polls += 1

    def _close(self) -> None:
        self._conn = close_quietly(self._conn, "the poller's")
