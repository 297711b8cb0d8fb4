"""``crisscross floor watch``: a live pit summary of every table the floor hears (docs/floor.md, "Watch").

Per table: ``status`` (online/offline), the round and its state (from ``state``), rounds per hour (rounds
closed or voided over the time between the first and the last round end heard, by the records' own times),
drop and win of the records heard by the meters' rule (``controller.round.meters.Meters`` fed every record heard,
as ``crisscross meters`` reads a journal: stakes settled and the house's ``taken - paid``; test rounds left out,
by their ``RoundOpened`` and by the ``test`` mark of every message sent in test mode), faults raised and
past-posting irregularities, in minor units as the journal keeps them; today's mispays (``PayoutChecked``
readings that differed: caught; ``MispayAccepted``: accepted by a supervisor), each as a count and an amount
(the sum of the spots' differences, short and over alike, as the metrics count them); and the hole-card alerts
heard on ``alerts`` (when the broker lets the watcher read them), listed under the table with the supervisor who
acknowledged each (``AlertAcknowledged``, on ``alerts`` too; one whose data is not as the table writes it,
``controller.round.alerts.acknowledgement_problem``, is counted malformed and acknowledges nothing).
Events and alerts are deduplicated by table and seq as ``controller.floor.audit`` does.
"""

from __future__ import annotations

import logging
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any

from wcwidth import wcwidth as char_width

from controller.floor import topics
from controller.game.sessions import player_shown
from controller.game.table import MAX_TABLE_ID
from controller.round.alerts import acknowledgement_problem, alert_fields_problem, alert_shape_problem
from controller.round.meters import Meters
from controller.settings.text import CONTROL_CATEGORIES
from drivers.ratelog import LogLimiter

log = logging.getLogger(__name__)

#: The record types ``count_record`` reads: a reader of the floor's store (``controller.floor.serve_data``) asks
#: for these only.
COUNTED_TYPES = frozenset({"RoundClosed", "RoundVoided", "FaultRaised", "Irregularity", "PayoutChecked",
                           "MispayAccepted"})
#: Longest text from a table shown as itself (``shown``; a table id, a state, a time, a supervisor's name): the
#: longest table id, table.yaml's ``MAX_TABLE_ID`` with the suffix of simulated play.
SHOWN_TEXT = MAX_TABLE_ID + len(topics.SIMULATED_SUFFIX)
#: Unicode general categories whose characters ``shown`` never shows: those a table id may not hold
#: (``controller.settings.text.CONTROL_CATEGORIES``: controls such as an escape or a carriage return, format
#: characters such as a direction override, surrogates, line and paragraph separators), and private-use and
#: unassigned code points (what a terminal draws for them is its font's or a later standard's).
NOT_SHOWN = CONTROL_CATEGORIES | {"Co", "Cn"}
#: Whole numbers from a table shown as themselves lie strictly within this bound (``shown``).
SHOWN_NUMBER = 10**15
#: A table's records that a reader of the floor (``floor watch``, the pit page's ``serve_data``) leaves out are
#: said in the log this many times a minute at most (the rest counted in ``TableSummary.malformed``): a broken
#: publisher can send many.
MALFORMED_LINES = 20


@dataclass
class TableSummary:
    """One table as the pit sees it (module docstring)."""

    status: str = "?"
    state: str = "?"
    round_no: int | None = None
    rounds: int = 0
    first_end: datetime | None = None
    last_end: datetime | None = None
    #: the meters' rule over the records heard (``Pit.take``): ``drop`` and ``win``
    meters: Meters = field(default_factory=Meters)
    faults: int = 0
    past_posting: int = 0
    last_seq: int = 0
    #: events heard whose ``after`` was not the last seq kept (records missing before them: docs/floor.md)
    gaps: int = 0
    #: events heard as marked stubs (``oversized``): their data is in the journal only
    oversized: int = 0
    #: events the meters or the counts could not read, or carrying an amount beyond ``topics.MAX_AMOUNT``, and
    #: messages on ``alerts`` that are not the table's (``alert_message_problem``): logged, left out
    malformed: int = 0
    #: per day (UTC, by the records' own times): ``{"caught": [count, amount], "accepted": [count, amount]}``
    mispays: dict[date, dict[str, list[int]]] = field(default_factory=dict)
    alerts: list[dict[str, Any]] = field(default_factory=list)  # the latest (``Pit.keep_alerts``)
    alerts_heard: int = 0
    last_alert: int = 0
    #: who acknowledged each alert heard acknowledged: ``(seat, card, round_no)`` -> supervisor's name
    acknowledged: dict[tuple[Any, Any, Any], str] = field(default_factory=dict)

    @property
    def drop(self) -> int:
        """Stakes settled in the records heard, minor units (the meters' ``drop``)."""
        return int(self.meters.lifetime()["drop"])

    @property
    def win(self) -> int:
        """The house's win in the records heard, minor units (the meters' ``win``: negative when players won)."""
        return int(self.meters.lifetime()["win"])

    def mispays_on(self, day: date) -> dict[str, list[int]]:
        """``{"caught": [count, amount], "accepted": [count, amount]}`` of ``day`` (minor units)."""
        return self.mispays.get(day) or {"caught": [0, 0], "accepted": [0, 0]}

    def per_hour(self) -> float | None:
        """Rounds per hour between the first and the last round end heard (None before two)."""
        if self.rounds < 2 or self.first_end is None or self.last_end is None:
            return None
        seconds = (self.last_end - self.first_end).total_seconds()
        return (self.rounds - 1) * 3600 / seconds if seconds > 0 else None


class Pit:
    """Every table's ``TableSummary``, fed with ``take`` (the ``Listener`` callback). ``keep_alerts``: the most
    alerts kept per table (the latest); ``max_tables``: the most tables kept (``topics.MAX_TABLES``, the first
    heard: ``topics.kept``), the messages of any other counted in ``beyond`` only."""

    def __init__(self, keep_alerts: int = 5, max_tables: int = topics.MAX_TABLES) -> None:
        self.tables: dict[str, TableSummary] = {}
        self.keep_alerts = keep_alerts
        self.max_tables = max_tables
        #: messages of tables heard after ``max_tables`` others: not kept, not shown, counted here (said once)
        self.beyond = 0
        #: messages whose topic is not UTF-8 text (``Listener``'s ``on_unreadable``): skipped, counted here
        self.unreadable = 0
        #: messages on a topic whose table level is not a table id (``Listener``'s ``on_not_a_table``): skipped,
        #: counted here, never a table of the summary
        self.not_a_table = 0
        #: the messages left out, each said once as it comes, at most ``MALFORMED_LINES`` a minute
        self._lines = LogLimiter(log, burst=MALFORMED_LINES, interval=60.0)

    def take(self, table: str, kind: str, payload: bytes, received: float = 0.0) -> None:
        """One message of ``table`` on its ``kind`` topic; counted in ``beyond`` only when ``max_tables`` others
        are kept (``topics.kept``)."""
        if not topics.kept(self.tables, table, self.max_tables):
            self.beyond += 1
            if self.beyond == 1:  # said once: the summary carries the count from here on
                log.warning("floor watch: more than %d tables heard: the messages of any table beyond them are not "
                            "kept, only counted in the summary (1 so far)", self.max_tables)
            return
        summary = self.tables.setdefault(table, TableSummary())
        if kind == "status":
            summary.status = payload.decode("utf-8", "replace")[:16]
            return
        value = topics.decode(payload)
        if value is None:
            return
        if kind == "state" and isinstance(value.get("view"), dict):
            state, round_no = value["view"].get("state"), value["view"].get("round_no")
            if not isinstance(state, str) or not (round_no is None or _whole(round_no)):
                # not a view the table publishes: its state and round unknown from now, said and counted
                summary.state, summary.round_no = "?", None
                self._malformed(summary, table, value.get("seq"), "a state whose view's state is not text or "
                                "whose round_no is not a whole number")
                return
            summary.state, summary.round_no = state, round_no
        elif kind == "events" and isinstance(value.get("record"), dict):
            record = value["record"]
            seq = record.get("seq")
            if not isinstance(seq, int) or seq <= summary.last_seq:
                return  # a repeat
            if summary.last_seq and value.get("after") != summary.last_seq:
                summary.gaps += 1  # records missing between the last kept and this one (docs/floor.md)
            summary.last_seq = seq
            if value.get("oversized") or not isinstance(record.get("data"), dict):
                summary.oversized += 1
                return
            unread = []  # a table's record the meters or the counts cannot read: said, counted once, left out
            beyond = topics.amount_beyond(record["data"])
            if beyond is not None:
                self._malformed(summary, table, seq, f"{beyond} is beyond {topics.MAX_AMOUNT} minor units")
                return
            try:
                if not value.get("test"):  # test mode's records (docs/floor.md): a round opened unheard is left out too
                    summary.meters.feed(str(record.get("type")), record["data"])
            except ValueError as exc:
                unread.append(str(exc))
            try:
                count_record(summary, record)
            except ValueError as exc:
                unread.append(str(exc))
            if unread:
                self._malformed(summary, table, seq, "; ".join(unread))
        elif kind == "alerts" and isinstance(value.get("record"), dict):
            record = value["record"]
            seq = record.get("seq")
            if not isinstance(seq, int) or seq <= summary.last_alert:
                return  # a repeat, or not a record
            summary.last_alert = seq
            data, problem = record.get("data"), alert_message_problem(value)
            if problem:
                self._malformed(summary, table, seq, problem)
            elif data is None:
                return  # a marked stub (``oversized``, docs/floor.md): the record is in the journal only
            elif record["type"] == "AlertAcknowledged":
                summary.acknowledged[_alert_key(data["alert"])] = data["by"]
            else:
                summary.alerts_heard += 1
                summary.alerts = (summary.alerts + [record])[-self.keep_alerts:]

    def unreadable_topic(self) -> None:
        """Count a message whose topic is not UTF-8 text (``topics.received_topic``: no table to name) in
        ``unreadable`` and say so in the log, ``MALFORMED_LINES`` a minute at most (docs/floor.md: a message not in
        the floor's format is skipped and counted)."""
        self.unreadable += 1
        self._lines.log(logging.WARNING, "floor watch: malformed", "floor watch: a message whose topic is not UTF-8 "
                        "text is skipped (%d so far)", self.unreadable)

    def not_a_table_topic(self, problem: str) -> None:
        """Count a message on a topic whose table level is not a table id (``topics.table_id_problem``: table.yaml's
        rule, as the store and the pit page apply it) in ``not_a_table`` and say so in the log with ``problem`` (the
        rule's reason: the id escaped, never raw; cut to 200 characters), ``MALFORMED_LINES`` a minute at most. The
        message is never shown nor counted as a table's (docs/floor.md, "Watch")."""
        self.not_a_table += 1
        self._lines.log(logging.WARNING, "floor watch: not a table", "floor watch: a message on a topic whose table "
                        "id is not one (%s) is skipped (%d so far)", problem[:200], self.not_a_table)

    def _malformed(self, summary: TableSummary, table: str, seq: int, reason: str) -> None:
        """Count a message of ``table`` the watch leaves out (its record ``seq``) in ``summary.malformed`` and say
        why in the log (``reason``: names a field, its value cut), ``MALFORMED_LINES`` a minute at most."""
        summary.malformed += 1
        self._lines.log(logging.WARNING, "floor watch: malformed", "floor watch: table %r, record %s: %s", table[:64],
                        seq, reason)

    def render(self, today: date | None = None) -> str:
        """The summary as a text table, one line per table in name order: mispays of ``today`` (UTC; default
        the current day) as ``count/amount``; then each table's alerts kept, one line each. Every value taken
        from a table's message goes through ``shown`` (a player's id through ``player_shown``): nothing a table
        publishes can move the terminal's cursor, colour it or add a line. Last, when any came, the count of the
        messages of tables beyond ``max_tables`` (``beyond``)."""
        today = today or datetime.now(timezone.utc).date()
        lines = [f"{'table':<16} {'status':<8} {'round':>6} {'state':<16} {'rounds/h':>8} {'drop':>12} "
                 f"{'win':>12} {'faults':>6} {'past-posting':>12} {'mispays caught':>16} {'accepted':>12} "
                 f"{'alerts':>6} {'acked':>5}"]
        for name, t in sorted(self.tables.items()):
            rate = t.per_hour()
            mispays = t.mispays_on(today)
            caught, accepted = ("/".join(map(str, mispays[k])) for k in ("caught", "accepted"))
            lines.append(f"{fitted(shown(name), 16)} {fitted(shown(t.status), 8)} "
                         f"{shown(t.round_no) if t.round_no is not None else '-':>6} "
                         f"{fitted(shown(t.state), 16)} {f'{rate:.0f}' if rate is not None else '-':>8} {t.drop:>12} "
                         f"{t.win:>12} {t.faults:>6} {t.past_posting:>12} {caught:>16} {accepted:>12} "
                         f"{t.alerts_heard:>6} {len(t.acknowledged):>5}")
        for name, t in sorted(self.tables.items()):
            for alert in t.alerts:
                d = alert["data"]  # an alert refused on arrival is listed too: never acknowledged
                by = None if alert_fields_problem(d) else t.acknowledged.get(_alert_key(d))
                who = f" (player {player_shown(d['player'])})" if d.get("player") else ""
                evidence = d.get("evidence_log10_hundredths")
                lines.append(f"ALERT {shown(name)}: seat {shown(d.get('seat'))}{who} plays as if it saw the "
                             f"{shown(d.get('card'))} card (round {shown(d.get('round_no', alert.get('round')))}, "
                             f"{shown(d.get('rounds'))} rounds, evidence 10^"
                             f"{f'{evidence / 100:.1f}' if _whole(evidence) else '?'}, "
                             f"loss {shown(d.get('loss'))}) at {shown(alert.get('time'))}; "
                             + (f"acknowledged by {shown(by)}" if by is not None else "not acknowledged"))
        if self.beyond:
            lines.append(f"{self.beyond} message(s) of tables beyond the first {self.max_tables} heard: not kept")
        return "\n".join(lines)


def fitted(text: str, columns: int) -> str:
    """``text`` cut to at most ``columns`` terminal columns and padded on the right with spaces to exactly
    ``columns``, by the columns each character takes (``wcwidth``: a CJK character 2, a combining mark 0), so that
    a table id of any script keeps the watch's columns in line. ``text`` is already ``shown``: no character in it
    moves the cursor."""
    kept, used = [], 0
    for char in text:
        width = max(char_width(char), 0)
        if used + width > columns:
            break
        kept.append(char)
        used += width
    return "".join(kept) + " " * (columns - used)


def shown(value: Any) -> str:
    """A value from a table's message (untrusted) as the watch's terminal may show it: a whole number (within
    ``SHOWN_NUMBER``) as itself; text of 1 to ``SHOWN_TEXT`` characters of any script (letters, marks, digits,
    punctuation, symbols, spaces: a table id may be ``Tisch-Ü1``, table.yaml's rule) as itself when none of its
    characters is of ``NOT_SHOWN`` (no escape sequence, carriage return, second line or direction override);
    anything else ``?``."""
    if _whole(value):
        return str(value)
    if isinstance(value, str) and 0 < len(value) <= SHOWN_TEXT and \
            not any(unicodedata.category(c) in NOT_SHOWN for c in value):
        return value
    return "?"


def _whole(value: Any) -> bool:
    """True for a whole number (not a boolean) strictly within ``SHOWN_NUMBER``."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) < SHOWN_NUMBER


def count_record(summary: TableSummary, record: dict[str, Any]) -> None:
    """Count one public record (``seq``, ``time``, ``type``, ``data``; a type of ``COUNTED_TYPES``, any other is
    left alone) in ``summary`` (module docstring): a round's end (its time), a fault raised, a
    past-posting irregularity, a mispay caught or accepted on its UTC day. The one rule of these counts for
    ``floor watch`` and the pit page (``controller.floor.serve_data``).

    The record comes from a table over the broker: a counted record whose ``data`` is not an object or holds a
    whole number beyond ``topics.MAX_AMOUNT``, or a mispay whose ``differences`` is not a list of objects each
    with a whole-number ``difference`` (minor units), raises
    ``ValueError`` naming the field, and ``summary`` is left unchanged; each caller counts it as malformed
    (``TableSummary.malformed``), says so and goes on with the next record."""
    kind, data = record.get("type"), record.get("data")
    if not isinstance(kind, str) or kind not in COUNTED_TYPES:
        return
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(f"a {kind} record whose data is not an object: {data!r:.60}")
    beyond = topics.amount_beyond(data)
    if beyond is not None:
        raise ValueError(f"{beyond} is beyond {topics.MAX_AMOUNT} minor units")
    if kind in ("RoundClosed", "RoundVoided"):
        summary.rounds += 1
        try:
            when = datetime.fromisoformat(str(record.get("time")))
        except ValueError:
            when = None
        if when is not None and when.tzinfo is None:  # a time without its offset: read as UTC, as ``_day`` does
            when = when.replace(tzinfo=timezone.utc)
        summary.first_end = summary.first_end or when
        summary.last_end = when or summary.last_end
    elif kind == "FaultRaised":
        summary.faults += 1
    elif kind == "Irregularity" and data.get("kind") == "past_posting":
        summary.past_posting += 1
    elif (kind == "PayoutChecked" and data.get("differences")) or kind == "MispayAccepted":
        day = _day(record.get("time"))
        if day is None:
            return
        amount = _mispay_amount(data)
        if kind == "MispayAccepted":
            _check_accepted(data)
        count = summary.mispays.setdefault(day, {"caught": [0, 0], "accepted": [0, 0]})[
            "caught" if kind == "PayoutChecked" else "accepted"]
        count[0] += 1
        count[1] += amount


def _mispay_amount(data: dict[str, Any]) -> int:
    """The sum of a mispay record's spots' differences, short and over alike (minor units): ``data["differences"]``
    (absent: none), a list of objects each with a whole-number ``difference``; else ``ValueError`` naming the
    field."""
    differences = data.get("differences") or []
    if not isinstance(differences, list):
        raise ValueError(f"data.differences is not a list: {differences!r:.60}")
    amount = 0
    for index, entry in enumerate(differences):
        value = entry.get("difference") if isinstance(entry, dict) else entry
        if not isinstance(entry, dict) or not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"data.differences[{index}].difference is not a whole number of minor units: "
                             f"{value!r:.60}")
        amount += abs(value)
    return amount


def _check_accepted(data: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming the field when ``data`` is not a ``MispayAccepted``'s as the table publishes it
    (``controller.round.commands.MispayAccepted``, without its ``reason``): ``seat`` a whole number, at least one
    spot in ``differences`` (a supervisor accepts a payout only when it differs), ``short`` and ``over`` whole
    numbers of minor units from 0 (``_whole``)."""
    if not _whole(data.get("seat")):
        raise ValueError("a MispayAccepted whose data.seat is not a whole number")
    if not data.get("differences"):
        raise ValueError("a MispayAccepted whose data.differences names no spot")
    for name in ("short", "over"):
        if not _whole(data.get(name)) or data[name] < 0:
            raise ValueError(f"a MispayAccepted whose data.{name} is not a whole number of minor units from 0")


def _day(text: Any) -> date | None:
    """The UTC day of a record's ``time`` (ISO 8601 with its offset), None when it is not one."""
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return (when.astimezone(timezone.utc) if when.tzinfo else when).date()


def alert_message_problem(message: dict[str, Any]) -> str:
    """Why ``message`` (a decoded payload of a table's ``alerts`` topic, ``{"table", "record"}``) is not one the
    table publishes there (``""`` when it is): its record's ``type`` one of ``topics.ALERT_TYPES``, its ``data``
    an object (null in a marked stub, ``oversized``), an acknowledgement's data as the table writes it
    (``controller.round.alerts.acknowledgement_problem``). An ``Alert`` whose fields the table refused on arrival
    (``AlertNotShown``) is the table's too. The reason names the field (another type by its name, escaped and
    cut to 40 characters), never a field's value."""
    record = message["record"]
    kind, data = record.get("type"), record.get("data")
    if not isinstance(kind, str) or kind not in topics.ALERT_TYPES:
        return f"a record of a type not published on alerts: {kind!r:.40}"
    if message.get("oversized") and data is None:
        return ""
    if not isinstance(data, dict):
        return f"an {kind} whose data is not an object"
    problem = acknowledgement_problem(data) if kind == "AlertAcknowledged" else alert_shape_problem(data)
    return f"an {kind}: {problem}" if problem else ""


def _alert_key(alert: dict[str, Any]) -> tuple[int, str, int]:
    """A well-formed alert's (``alert_fields_problem``) seat, kind of card and round: how an acknowledgement names
    the alert it acknowledges."""
    return alert["seat"], alert["card"], alert["round_no"]
