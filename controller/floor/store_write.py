"""What the floor's store writes for each message, inside the transaction of its batch (``controller.floor.store``;
docs/backoffice.md, "Exactly once").

The rule (docs/floor.md, "Who reads what": the consumer's rule, made durable): per table, ``tables.last_seq`` is
the seq of the last record stored. An ``events`` message whose record's seq is at or below it is a repeat
(counted in ``tables.repeats``, dropped); one whose ``after`` is ``last_seq`` follows it: the record is stored and
``last_seq`` moved to its seq in the same transaction; one whose ``after`` is above ``last_seq`` is past a gap:
kept in ``held`` (never in ``records``), the gap written to ``gaps`` and logged, and stored in order once the
records missing before it arrive (a publisher's resend), which closes the gap (``gaps.filled_at``). An ``after``
below ``last_seq`` with a seq above it cannot follow any record stored (another journal under the table's id,
or one rewritten): held as well, and written to ``gaps`` as a ``conflict``. With ``join_late`` the first record
heard of a table never seen is stored whatever its ``after`` (``tables.joined``): the store began after the table;
a record at or below ``joined`` heard afterwards was never stored: dropped and counted apart (``before_join``), not
a repeat. A record under a seq where a record is kept already, stored or held past a gap, is compared with it by
one rule (``same_record``): the same record is a repeat, another a ``conflict`` in ``gaps``.

With each record stored, in the same transaction: what it adds to the table's lifetime meters, by the meters' own
rule (``controller.round.meters.Meters.feed``, the rule of ``crisscross meters``; test rounds apart), in
``figures``; a ``SeatSettled``'s ante and bonus in ``seat_rounds``; a ``SessionRated`` in ``sessions`` with what it
adds to its session's previous rating; a ``SignificantEvent`` in ``significant``; and the quarter hour's
``totals``. ``meters`` messages (retained snapshots at each round's close) are written once by (table, seq); one
that names a seq beyond what its table can have published unheard (``MAX_AHEAD``) is not the floor's format. One the
table published as a marked stub (too large for the broker: ``controller.floor.packets``, ``oversized``) is kept with
its meters unknown (NULL, schema ``006_meters_unknown.sql``: they are in the table's journal), logged with its table
and seq and counted (``Outcome.meters_unknown``): its ``seq`` and ``public`` still say how far the table had
published.

``status`` messages (``Writer.status``) are kept apart from the records, one row per table in ``table_status``
(schema ``002_status.sql``), replaced by each one received: the payload (``online`` or ``offline``,
``controller.floor.topics``), when the store took it from the broker and whether it was the broker's retained
message. An empty payload (the retained status cleared on the broker, a table taken off the floor) removes the
row. The records' rule above never reads it.

A message that is not the floor's format, or on a topic whose table id is not one (``topics.table_id_problem``,
the rule the reports apply), is logged and counted (``Writer.foreign``), never stored and never a reason to stop.
Amounts are integer minor units.
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from fractions import Fraction
from typing import Any

from controller.floor import topics
from controller.round.meters import Meters
from drivers.ratelog import LogLimiter

try:  # the store's writer runs with psycopg (the backoffice extra); its constants are read without it
    from psycopg.errors import DataError
except ImportError:  # pragma: no cover - nothing is written without psycopg
    DataError = ()  # type: ignore[assignment,misc]

log = logging.getLogger(__name__)

#: Seconds of a ``totals`` row: a quarter hour, so any gaming day starting at a quarter hour in any time zone of
#: today (offsets are whole quarter hours) is whole rows.
QUARTER = 900
#: The record types whose figures go to ``figures`` (those that move drop, win or a count of rounds).
FIGURE_TYPES = frozenset({"SeatSettled", "RoundClosed", "RoundVoided"})
#: ``figures`` and ``totals`` columns from a record's meters (``Meters.lifetime()`` keys).
FIGURE_COLUMNS = ("rounds_closed", "rounds_no_play", "rounds_voided", "rounds_test", "drop", "win")
#: The largest value of an ``integer`` column (round numbers, seats, counts, codes).
MAX_INTEGER = 2**31 - 1
#: The largest value of a ``bigint`` column (seqs).
MAX_BIGINT = 2**63 - 1

#: Seconds the broker keeps the store's session (and queues its messages) while it is away.
SESSION_EXPIRY = 7 * 24 * 3600
#: The most public records a table publishes a second, far above any table's pace (a busy table publishes about 4,
#: docs/performance.md).
MAX_RECORD_RATE = 1000
#: The most records a ``meters`` message may name beyond the highest seq the store has seen of its table (stored
#: or held past a gap): what a table publishes, at most, while the broker keeps the store's session and its
#: queue. A message beyond it is not the table's (``_Batch.plausible``): kept, it would show the store behind the
#: table for good, as ``meters`` rows are written once.
MAX_AHEAD = MAX_RECORD_RATE * SESSION_EXPIRY

#: A ``meters`` message's row (``_meters_row``): seq, round, meters JSON (None: a marked stub's, not known), the
#: ``public`` seq, a stub's ``oversized``.
MetersRow = tuple[int, int | None, str | None, int | None, int | None]

#: ``totals`` columns from a ``SessionRated``'s row.
RATING_COLUMNS = ("ratings", "rated_rounds", "rated_actual", "rated_drop", "ante_squares", "bonus_squares",
                  "seat_rounds")


@dataclass
class TableState:
    """One ``tables`` row while its batch's transaction runs."""

    last_seq: int
    joined: int | None
    stored: int
    repeats: int
    held: int
    unread: int
    in_test: bool
    new: bool = False


@dataclass
class Outcome:
    """What one batch did: records ``stored``, ``repeats`` dropped, records ``held`` past a gap, ``gaps`` found,
    ``foreign`` messages, ``statuses`` kept (or cleared), records ``before_join`` (below the record a store begun
    with ``join_late`` joined at: never stored, not repeats), ``meters_unknown``: ``meters`` messages kept that were
    marked stubs (their meters not known: docs/floor.md, "Topics")."""

    stored: int = 0
    repeats: int = 0
    held: int = 0
    gaps: int = 0
    foreign: int = 0
    statuses: int = 0
    before_join: int = 0
    meters_unknown: int = 0
    tables: set[str] = field(default_factory=set)


def quarter_of(moment: datetime) -> datetime:
    """The quarter hour (UTC) ``moment`` falls in: its ``totals`` row."""
    seconds = int(moment.timestamp()) // QUARTER * QUARTER
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def parse_time(text: Any) -> datetime | None:
    """A record's ``time`` (ISO 8601 with its offset) as an aware datetime; None when it is not one."""
    try:
        moment = datetime.fromisoformat(str(text))
        if moment.tzinfo is None:
            return None
        moment.astimezone(timezone.utc)  # a time whose UTC is outside years 1 to 9999 is not a table's
    except (ValueError, OverflowError):
        return None
    return moment


def same_record(type_: str, moment: datetime | None, data: Any, record: dict[str, Any]) -> bool:
    """True when ``record`` (an ``events`` message's record) is the record kept as ``type_``, ``moment`` (aware,
    ``parse_time``) and ``data`` (None for a stub): the same type, time and data, a stub's data, or one kept as
    a stub, left out. The one rule for a repeat, whether the record kept is stored or held past a gap
    (docs/backoffice.md, "Exactly once")."""
    return type_ == record["type"] and moment == parse_time(record.get("time")) and (
        data is None or record.get("data") is None or data == record["data"])


def session_key(data: dict[str, Any]) -> str:
    """The session a ``SessionRated`` rates: the player's id (a rated player keeps one session across seats) or
    the seat, and the session's first round."""
    who = f"player {data['player']}" if data.get("player") else f"seat {int(data['seat'])}"
    return f"{who} from round {int(data['first_round'])}"


class Writer:
    """Writes batches of messages (``write``) on a psycopg connection, each batch in the caller's transaction.
    ``join_late``: module docstring."""

    def __init__(self, join_late: bool = False) -> None:
        self.join_late = join_late
        self.foreign = 0
        #: a broken publisher or a replaced journal can send many such messages: their lines are rate-limited
        self.lines = LogLimiter(log)

    def write(self, conn: Any, messages: list[tuple[str, str, bytes]]) -> Outcome:
        """Write ``(table, kind, payload)`` messages (``kind`` ``events`` or ``meters``; any other, such as the empty
        kind of a message whose topic is not UTF-8 text, is skipped and counted as ``foreign``), in order, inside the
        transaction the caller holds on ``conn``; psycopg's errors propagate (the caller rolls back and nothing
        of the batch is kept). A ``meters`` marked stub is kept with its meters unknown (``_meters``)."""
        batch = _Batch(conn, self.join_late, self.lines)
        for table, kind, payload in messages:
            if kind and self._not_a_table(table, kind, batch.outcome):
                continue
            value = topics.decode(payload)
            if kind == "events" and value is not None and _well_formed(value):
                batch.event(table, value)
            elif kind == "meters" and (row := _meters_row(value)) is not None and batch.plausible(table, row):
                self._meters(conn, table, row, batch.outcome)
            else:
                self.foreign += 1
                batch.outcome.foreign += 1
                self.lines.log(logging.WARNING, "floor store foreign", "floor store: a %s is not in the floor's "
                               "format: %r", f"{kind} message of table {table}" if kind else
                               "message whose topic is not UTF-8 text", payload[:120])
        batch.finish()
        return batch.outcome

    def status(self, conn: Any, table: str, topic: str, payload: bytes, received: datetime, retained: bool,
               outcome: Outcome) -> None:
        """Keep ``payload`` of ``table``'s ``status`` topic (``topic``, for the log), taken from the broker at
        ``received`` (aware) and ``retained`` or not, in the caller's transaction on ``conn`` (module docstring),
        counted in ``outcome``. A payload other than ``online``, ``offline`` or empty is logged with the table and
        the topic, counted as ``foreign`` and skipped, as is a topic whose table id is not one (``_not_a_table``);
        psycopg's errors propagate (the caller rolls back)."""
        if self._not_a_table(table, "status", outcome):
            return
        if payload == b"":
            conn.execute("DELETE FROM table_status WHERE table_id = %s", (table,))
            log.info("floor store: table %s: its status was cleared on the broker (%s)", table, topic)
        elif payload in (topics.ONLINE, topics.OFFLINE):
            conn.execute("INSERT INTO table_status (table_id, status, received_at, retained) VALUES (%s, %s, %s, %s) "
                         "ON CONFLICT (table_id) DO UPDATE SET status = EXCLUDED.status, received_at = "
                         "EXCLUDED.received_at, retained = EXCLUDED.retained",
                         (table, payload.decode(), received, retained))
        else:
            self.foreign += 1
            outcome.foreign += 1
            self.lines.log(logging.WARNING, "floor store status", "floor store: table %s: a status message on %s is "
                           "not %s or %s: %r; skipped", table, topic, topics.ONLINE.decode(),
                           topics.OFFLINE.decode(), payload[:120])
            return
        outcome.statuses += 1


    def _meters(self, conn: Any, table: str, row: MetersRow, outcome: Outcome) -> None:
        """Keep ``row`` (``_meters_row``) of ``table``'s ``meters`` once by (table, seq), in the caller's transaction
        on ``conn``. A marked stub's (its meters None) is kept with the meters unknown: when new, counted in
        ``outcome.meters_unknown`` and logged with the table and the seq (each table's lines limited apart, so that
        every table's is said). psycopg's errors propagate (the caller rolls back)."""
        seq, round_no, meters, public, oversized = row
        kept = conn.execute("INSERT INTO meters (table_id, seq, round_no, meters, public_seq) VALUES (%s, %s, %s, %s, "
                            "%s) ON CONFLICT DO NOTHING", (table, seq, round_no, meters, public)).rowcount
        if kept and meters is None:
            outcome.meters_unknown += 1
            self.lines.log(logging.WARNING, ("floor store meters unknown", table), "floor store: table %s: the meters "
                           "of record %d (round %s) came as a marked stub (%s bytes in full, over the broker's Maximum "
                           "Packet Size): kept with the meters unknown; the table's journal holds them (crisscross "
                           "meters)", table, seq, round_no, oversized)

    def _not_a_table(self, table: str, kind: str, outcome: Outcome) -> bool:
        """True when ``table`` (a ``kind`` topic's table level) is not a table id by the floor's rule
        (``topics.table_id_problem``, the rule the reports and the pit page apply): the message is then logged,
        counted as ``foreign`` and skipped, so that no id the reports refuse, or one that looks like another
        (a zero-width space, a direction override), is ever stored."""
        problem = topics.table_id_problem(table)
        if problem is None:
            return False
        self.foreign += 1
        outcome.foreign += 1
        self.lines.log(logging.WARNING, "floor store table id", "floor store: a %s message on a topic whose table "
                       "id is not one (%s): skipped", kind, problem[:200])
        return True


def _well_formed(value: dict[str, Any]) -> bool:
    record, after = value.get("record"), value.get("after")
    return (isinstance(record, dict) and _integer(record.get("seq"), MAX_BIGINT) is not None
            and _integer(after, MAX_BIGINT) is not None and 0 <= after < record["seq"]
            and isinstance(record.get("type"), str))


def _meters_row(value: dict[str, Any] | None) -> MetersRow | None:
    """``(seq, round_no, meters JSON, public_seq, oversized)`` of a ``meters`` message, or None when it is not one:
    a seq from 1 that a ``bigint`` holds, and ``meters`` an object, or null in a marked stub (``oversized`` a whole
    number of bytes from 1 that an ``integer`` holds; docs/floor.md, "Topics"): then the meters JSON is None (not
    known) and ``oversized`` given (for the log), else None. A round beyond an ``integer`` is kept as None; a
    ``public`` that is not a seq from 0 up to the message's own is not the table's (it would show the store behind
    for good) and is kept as None, the message's ``seq`` standing in."""
    if value is None:
        return None
    meters, oversized = value.get("meters"), _integer(value.get("oversized"))
    stub = meters is None and oversized is not None and oversized > 0
    if not isinstance(meters, dict) and not stub:
        return None
    seq, public = _integer(value.get("seq"), MAX_BIGINT), _integer(value.get("public"), MAX_BIGINT)
    if seq is None or seq < 1:
        return None
    return seq, _integer(value.get("round")), None if stub else json.dumps(meters), \
        public if public is not None and 0 <= public <= seq else None, oversized if stub else None


def _fraction(value: Any) -> Fraction:
    """A ``SessionRated``'s exact theoretical win, written ``p/q`` or ``p`` (whole numbers of at most 200 digits
    each), as a Fraction; ``ValueError`` for anything else (``1e30000000`` would take the store's thread for
    minutes)."""
    text = str(value)
    if not re.fullmatch(r"-?\d{1,200}(/\d{1,200})?", text):
        raise ValueError(f"theoretical_win {text[:40]!r} is not p/q")
    return Fraction(text)


def _bounded(value: Any, limit: int, name: str) -> int:
    """``value`` as an integer of at most ``limit`` either way; ``ValueError`` naming ``name`` otherwise (the
    record's figures are then unread, never a batch the database refuses: one table's record must not stop the
    store for every table)."""
    number = int(value)
    if abs(number) > limit:
        raise ValueError(f"{name} {str(number)[:24]}... is beyond {limit}")
    return number


class _Batch:
    """One transaction's work: the tables' rows locked and changed, the totals added up (``finish`` writes them)."""

    def __init__(self, conn: Any, join_late: bool, lines: LogLimiter) -> None:
        self.conn, self.join_late, self.lines = conn, join_late, lines
        self.states: dict[str, TableState] = {}
        self.totals: dict[tuple[str, datetime], dict[str, Any]] = defaultdict(lambda: defaultdict(int))
        self.outcome = Outcome()

    def state(self, table: str) -> TableState:
        if table not in self.states:
            self.conn.execute("INSERT INTO tables (table_id) VALUES (%s) ON CONFLICT DO NOTHING", (table,))
            row = self.conn.execute("SELECT last_seq, joined, stored, repeats, held, unread, in_test FROM tables "
                                    "WHERE table_id = %s FOR UPDATE", (table,)).fetchone()
            self.states[table] = TableState(*row)
        return self.states[table]

    def plausible(self, table: str, row: MetersRow) -> bool:
        """Whether a ``meters`` message of ``table`` (``_meters_row``) may be its table's: its ``seq`` and
        ``public`` at most ``MAX_AHEAD`` beyond the highest seq the store has seen of the table (its last stored,
        in this batch too, or a record held past a gap; 0 for a table never heard)."""
        seen = self.states[table].last_seq if table in self.states else (self.conn.execute(
            "SELECT last_seq FROM tables WHERE table_id = %s", (table,)).fetchone() or (0,))[0]
        held = self.conn.execute("SELECT max(seq) FROM held WHERE table_id = %s", (table,)).fetchone()[0]
        return max(row[0], row[3] or 0) <= max(seen, held or 0) + MAX_AHEAD

    def event(self, table: str, value: dict[str, Any]) -> None:
        """Apply the consumer's rule (module docstring) to the ``events`` message ``value`` of ``table``."""
        state = self.state(table)
        record, after = value["record"], value["after"]
        seq = record["seq"]
        self.outcome.tables.add(table)
        if seq <= state.last_seq:
            stored = self.conn.execute("SELECT type, time, data FROM records WHERE table_id = %s AND seq = %s",
                                       (table, seq)).fetchone()
            if stored is None:  # before the record the store joined at (--join-late): never stored, not a repeat
                self.outcome.before_join += 1
                self.lines.log(logging.INFO, "floor store before join", "floor store: table %s: record %d is before "
                               "record %d the store joined at: not stored (the store began after it)", table, seq,
                               (state.joined or 0) + 1)
                return
            self._repeat_or_conflict(table, state, record, after, stored, "stored")
            return
        first = state.last_seq == 0 and state.stored == 0
        if after == state.last_seq or (first and self.join_late):
            if after != state.last_seq:
                state.joined = after
                log.warning("floor store: table %s joined at record %d (after %d): the records before it are not "
                            "in the store", table, seq, after)
            self.store(table, state, value)
            self.release(table, state)
            return
        kind = "missing" if after > state.last_seq else "conflict"
        held = self.conn.execute("INSERT INTO held (table_id, seq, after_seq, message) VALUES (%s, %s, %s, %s) "
                                 "ON CONFLICT DO NOTHING", (table, seq, after, json.dumps(value))).rowcount
        if not held:  # a record is held under that seq already: the same rule as for one stored
            message = self.conn.execute("SELECT message FROM held WHERE table_id = %s AND seq = %s",
                                        (table, seq)).fetchone()[0]
            kept = message["record"]
            self._repeat_or_conflict(table, state, record, after,
                                     (kept["type"], parse_time(kept.get("time")), kept.get("data")), "held")
            return
        state.held += held
        self.outcome.held += held
        if self.conn.execute("SELECT 1 FROM held WHERE table_id = %s AND seq = %s", (table, after)).fetchone():
            return  # it follows a record held already: the same gap
        found = self.conn.execute("INSERT INTO gaps (table_id, last_seq, after_seq, seq, kind) VALUES "
                                  "(%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                  (table, state.last_seq, after, seq, kind)).rowcount
        if found:
            self.outcome.gaps += 1
            self.lines.log(logging.WARNING, "floor store gap", "floor store: table %s: record %d follows %d but "
                           "the last stored is %d: %s; held until the records before it arrive", table, seq, after,
                           state.last_seq, "records missing" if kind == "missing" else
                           "it cannot follow any record stored")

    def _repeat_or_conflict(self, table: str, state: TableState, record: dict[str, Any], after: int,
                            kept: tuple[str, datetime | None, Any], where: str) -> None:
        """``record`` arrived under a seq where the store already keeps a record (``where``: ``stored`` in
        ``records`` or ``held`` past a gap), ``kept`` its ``(type, time, data)``: the same record (``same_record``)
        is a repeat, counted and dropped; another is a conflict (another journal under the same table id, or a
        forged record), dropped and written to ``gaps`` as a ``conflict``, one open a table, and logged
        (docs/backoffice.md, "Exactly once"). What is kept stays."""
        seq = record["seq"]
        if same_record(*kept, record):
            state.repeats += 1
            self.outcome.repeats += 1
            return
        if self.conn.execute("SELECT 1 FROM gaps WHERE table_id = %s AND kind = 'conflict' AND filled_at IS "
                             "NULL", (table,)).fetchone():
            return  # one open conflict a table, however many of its records come
        found = self.conn.execute("INSERT INTO gaps (table_id, last_seq, after_seq, seq, kind) VALUES "
                                  "(%s, %s, %s, %s, 'conflict') ON CONFLICT DO NOTHING",
                                  (table, state.last_seq, after, seq)).rowcount
        self.outcome.gaps += found
        self.lines.log(logging.ERROR, "floor store conflict", "floor store: table %s: record %d is not the record "
                       "%d %s: another journal under the same table id; dropped, written to gaps as a conflict",
                       table, seq, seq, where)

    def release(self, table: str, state: TableState) -> None:
        """Store the held records that now follow the last stored, in order; close the gaps filled."""
        if not state.held:
            return
        while True:
            row = self.conn.execute("DELETE FROM held WHERE table_id = %s AND after_seq = %s AND seq > %s "
                                    "RETURNING message", (table, state.last_seq, state.last_seq)).fetchone()
            if row is None:
                break
            state.held -= 1
            self.store(table, state, row[0])
        state.held -= self.conn.execute("DELETE FROM held WHERE table_id = %s AND seq <= %s",
                                        (table, state.last_seq)).rowcount  # resent and stored meanwhile
        self.conn.execute("UPDATE gaps SET filled_at = now() WHERE table_id = %s AND filled_at IS NULL AND "
                          "kind = 'missing' AND after_seq <= %s", (table, state.last_seq))

    def store(self, table: str, state: TableState, value: dict[str, Any]) -> None:
        """Insert the record of ``value`` and what it adds up to; move ``last_seq``."""
        record = value["record"]
        seq, data = record["seq"], record.get("data")
        moment = parse_time(record.get("time"))
        self.conn.execute(
            "INSERT INTO records (table_id, seq, after_seq, time, kind, round_no, type, data, oversized, test, "
            "simulated) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (table, seq, value["after"], moment, record.get("kind"), _integer(record.get("round")),
             record["type"], None if data is None else json.dumps(data), _integer(value.get("oversized")),
             bool(value.get("test")), bool(value.get("simulated"))))
        state.last_seq = seq
        state.stored += 1
        self.outcome.stored += 1
        if not isinstance(data, dict) or moment is None:
            if record["type"] in FIGURE_TYPES | {"SessionRated", "RoundOpened"}:
                state.unread += 1  # a stub or a record without its time: its figures are in the journal only
                log.error("floor store: table %s record %d (%s) has no %s: its figures are not counted", table,
                          seq, record["type"], "data" if moment is not None else "time")
            return
        try:
            self.figures(table, state, seq, record["type"], data, moment)
        except (ValueError, KeyError, TypeError, ZeroDivisionError, DataError) as exc:
            state.unread += 1
            log.error("floor store: table %s record %d (%s): its figures cannot be read (%s): not counted", table,
                      seq, record["type"], exc)

    def figures(self, table: str, state: TableState, seq: int, type_: str, data: dict[str, Any],
                moment: datetime) -> None:
        """Add record ``seq``'s figures: every value read and checked first (``ValueError``, ``KeyError``,
        ``TypeError``: the caller counts the record unread, nothing added), then its rows written in a savepoint
        (a row the database refuses all the same is rolled back alone, the record unread) and only then added to
        the quarter's totals."""
        meters = Meters()
        meters.in_test = state.in_test
        testing = state.in_test or (type_ == "RoundOpened" and bool(data.get("test")))
        meters.feed(type_, data)
        rows: list[tuple[str, tuple[Any, ...]]] = []
        added: dict[str, Any] = {}
        if type_ in FIGURE_TYPES:
            lifetime = meters.lifetime()
            figures = {name: _bounded(lifetime[name], topics.MAX_AMOUNT, name) for name in FIGURE_COLUMNS}
            if any(figures.values()):
                rows.append((f"INSERT INTO figures (table_id, seq, time, {', '.join(FIGURE_COLUMNS)}) VALUES "
                             f"(%s, %s, %s{', %s' * len(FIGURE_COLUMNS)})", (table, seq, moment, *figures.values())))
                added = figures
        if type_ == "SeatSettled" and not testing:
            wagers = data["settlement"]["wagers"]
            amounts = {name: _bounded(wager["amount"], topics.MAX_AMOUNT, f"{name}.amount")
                       for name, wager in wagers.items()}
            rows.append(("INSERT INTO seat_rounds (table_id, seq, round_no, seat, time, ante, bonus, wagered, "
                         "player_net) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                         (table, seq, _bounded(data["round_no"], MAX_INTEGER, "round_no"),
                          _bounded(data["seat"], MAX_INTEGER, "seat"), moment, amounts.get("ante_across", 0),
                          amounts.get("five_card_bonus", 0), sum(amounts.values()),
                          _bounded(data["settlement"]["net"], topics.MAX_AMOUNT, "net"))))
        elif type_ == "SignificantEvent":
            rows.append(("INSERT INTO significant (table_id, seq, time, code, name, severity) VALUES "
                         "(%s, %s, %s, %s, %s, %s)", (table, seq, moment, _bounded(data["code"], MAX_INTEGER, "code"),
                                                      str(data["name"]), str(data["severity"]))))
        rating = type_ == "SessionRated" and not testing
        with self.conn.transaction():  # a savepoint: a row refused rolls back this record's rows only
            for sql, params in rows:
                self.conn.execute(sql, params)
            if rating:
                added = self.session(table, seq, data, moment)
        state.in_test = meters.in_test
        quarter = self.totals[(table, quarter_of(moment))]
        for name, amount in added.items():
            quarter[name] += amount

    def session(self, table: str, seq: int, data: dict[str, Any], moment: datetime) -> dict[str, Any]:
        """Write a ``SessionRated`` and return what it adds to its session's previous rating (the seat's rounds
        after the previous rating's last round, up to its own), for the quarter's totals. Raises ``ValueError``
        for a value beyond its column (``_bounded``)."""
        key = session_key(data)
        seat = _bounded(data["seat"], MAX_INTEGER, "seat")
        first, last_round = (_bounded(data[name], MAX_INTEGER, name) for name in ("first_round", "last_round"))
        rounds_now, actual_now = _bounded(data["rounds"], MAX_INTEGER, "rounds"), \
            _bounded(data["actual_win"], topics.MAX_AMOUNT, "actual_win")
        handle_now = sum(_bounded(v, topics.MAX_AMOUNT, "handle") for v in data["handle"].values())
        before = self.conn.execute("SELECT rounds, actual_win, theoretical_win, last_round, data->'handle' FROM "
                                   "sessions WHERE table_id = %s AND session_key = %s ORDER BY seq DESC LIMIT 1",
                                   (table, key)).fetchone()
        rounds, actual, theo, last, handle = before or (0, 0, "0", first - 1, {})
        handle = handle or {}
        theoretical = _fraction(data["theoretical_win"])
        squares = self.conn.execute("SELECT coalesce(sum(ante * ante), 0), coalesce(sum(bonus * bonus), 0), "
                                    "count(*) FROM seat_rounds WHERE table_id = %s AND seat = %s AND round_no > %s "
                                    "AND round_no <= %s", (table, seat, last, last_round)).fetchone()
        added = {"ratings": 1, "rated_rounds": rounds_now - rounds, "rated_actual": actual_now - actual,
                 "rated_drop": handle_now - sum(int(v) for v in handle.values()), "ante_squares": int(squares[0]),
                 "bonus_squares": int(squares[1]), "seat_rounds": int(squares[2])}
        self.conn.execute(
            "INSERT INTO sessions (table_id, seq, time, session_key, seat, player, first_round, last_round, rounds, "
            "actual_win, theoretical_win, ended, data, added_rounds, added_actual, added_handle, added_theo, "
            "ante_squares, bonus_squares, seat_rounds) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
            "%s, %s, %s, %s, %s, %s, %s)",
            (table, seq, moment, key, seat, str(data.get("player") or ""), first, last_round, rounds_now, actual_now,
             str(theoretical), bool(data["ended"]), json.dumps(data), added["rated_rounds"], added["rated_actual"],
             added["rated_drop"], str(theoretical - Fraction(theo)), added["ante_squares"], added["bonus_squares"],
             added["seat_rounds"]))
        return added

    def finish(self) -> None:
        """Write the totals added up and every table's row."""
        columns = FIGURE_COLUMNS + RATING_COLUMNS
        for (table, quarter), added in self.totals.items():
            if not any(added.values()):
                continue
            values = [int(added.get(name, 0)) for name in columns]
            self.conn.execute(
                f"INSERT INTO totals (table_id, quarter, {', '.join(columns)}) VALUES (%s, %s{', %s' * len(columns)}) "
                f"ON CONFLICT (table_id, quarter) DO UPDATE SET "
                + ", ".join(f"{name} = totals.{name} + EXCLUDED.{name}" for name in columns),
                (table, quarter, *values))
        for table, s in self.states.items():
            self.conn.execute("UPDATE tables SET last_seq = %s, joined = %s, stored = %s, repeats = %s, held = %s, "
                              "unread = %s, in_test = %s, updated_at = now() WHERE table_id = %s",
                              (s.last_seq, s.joined, s.stored, s.repeats, s.held, s.unread, s.in_test, table))


def _integer(value: Any, limit: int = MAX_INTEGER) -> int | None:
    """``value`` when it is an integer within ``limit`` either way (an ``integer`` column's by default), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= limit else None
