"""The floor's topics and payloads (docs/floor.md, "Topics"), one place for the publisher and the tools.

Under ``{prefix}/{table_id}/``:

- ``events``: one message per public journal record (QoS 1, not retained), UTF-8 JSON
  ``{"table": id, "after": S0, "record": {...}}``: ``record`` is ``controller.control.server.public_record`` of the
  journal record (with its ``seq``), ``after`` the seq of the table's previous public record (0 for the first):
  a consumer that keeps, per table, the records whose seq is above the last one it kept (dedupe by table and
  seq) sees a gap or a reordering as an ``after`` that is not that last seq.
- ``state``: the table's view (``Round.view()``, no face-down card) retained, ``{"table", "seq", "view"}``.
- ``status``: ``online`` retained when connected; ``offline`` retained when stopping, and the same as the last
  will (the broker sends it when the table goes away without saying so).
- ``anchors``: at each round close, the journal's chain head after it, ``{"table", "seq", "round", "head",
  "mac"}`` (QoS 1, retained: the latest stays); ``mac`` the keyed anchor (``controller.journal.key.mac`` with
  label ``anchor`` over seq and head, as ``<journal>.anchor``), null for a journal without a key.
- ``meters``: at each round close, the table's lifetime meters after it (``controller.round.meters``, from the
  checkpoint written with the close), ``{"table", "seq", "round", "meters": {"lifetime": ..., "since": ...}}``
  (QoS 1, retained: the latest stays); integer minor units.
- ``alerts``: one message per journaled hole-card ``Alert`` and per ``AlertAcknowledged`` (``controller.round.alerts``;
  QoS 1, not retained),
  ``{"table", "record": {"seq", "time", "kind", "round", "type", "data"}}``; never on ``events``. For
  surveillance and supervisors only: the broker's ACL restricts who may read it (docs/floor.md). An alert names
  a seat and a kind of card (middle, across, down), never a card.
- ``significant``: one message per journaled ``SignificantEvent`` (``controller.service.significance``; QoS 1,
  not retained), ``{"table", "record": {...}}`` with ``record`` its ``public_record`` (also on ``events``).
- ``sessions``: one message per journaled ``SessionRated`` (a seat session's rating at its end and every few
  rounds, ``run --rating``; ``controller.service.rating_live``; QoS 1, not retained), ``{"table", "record":
  {...}}`` with ``record`` its ``public_record`` (also on ``events``): figures only, never a card.
"""

from __future__ import annotations

import json
import math
from typing import Any

from controller.game.table import MAX_TABLE_ID
from controller.game.table import table_id_problem as config_rule
from controller.settings.floor import TOPIC_FORBIDDEN

KINDS = ("events", "state", "status", "anchors", "alerts", "significant", "meters", "sessions")
#: The records published on ``alerts`` alone: the hole-card detector's alerts (``controller.round.alerts``) and a
#: supervisor's acknowledgement of one.
ALERT_TYPES = frozenset({"Alert", "AlertAcknowledged"})
#: Added to the table's id in every topic and ``table`` field of simulated play (``run --simulate``, a simulator
#: port; ``controller.floor.publisher``): it never publishes under a table's id, as it never writes the table's
#: journal.
SIMULATED_SUFFIX = "-simulated"
#: The largest amount (minor units, either way) a table's record carries: a wager is at most what a bet sensor
#: reports and a payout stays below 2**53 (``controller.game.table.check_amount``). A whole number in a record's
#: data beyond it is not a table's: readers leave the record's figures out (``amount_beyond``).
MAX_AMOUNT = 2**53
#: The deepest a message's JSON may nest (a table's records nest a few levels): ``decode`` refuses deeper.
MAX_DEPTH = 32
ONLINE, OFFLINE = b"online", b"offline"
#: The most tables a reader of the floor keeps: the pit page lists as many (``controller.floor.serve_data``), and
#: ``floor watch`` and ``floor audit`` keep the first this many heard (``kept``). A publisher may name any number
#: of table ids, each of which would otherwise be kept, and printed, for as long as the reader runs.
MAX_TABLES = 500


def amount_beyond(value: Any, where: str = "data", depth: int = 0) -> str | None:
    """Where in ``value`` (a record's data: objects, lists, numbers, text) the first whole number beyond
    ``MAX_AMOUNT`` either way is, as a path (``data.settlement.net``); None when there is none. Nesting deeper than
    ``MAX_DEPTH`` (which ``decode`` refuses) counts as beyond."""
    if depth > MAX_DEPTH:
        return where
    if isinstance(value, int) and not isinstance(value, bool):
        return where if abs(value) > MAX_AMOUNT else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = amount_beyond(item, f"{where}.{key}" if isinstance(value, dict) else f"{where}[{key}]", depth + 1)
        if found is not None:
            return found
    return None


def topic(prefix: str, table_id: str, kind: str) -> str:
    """``{prefix}/{table_id}/{kind}``; ``kind`` one of ``KINDS``."""
    return f"{prefix}/{table_id}/{kind}"


def every_table(prefix: str, kind: str = "#") -> str:
    """The subscription to ``kind`` of every table under ``prefix`` (``#``: every kind)."""
    return f"{prefix}/+/{kind}" if kind != "#" else f"{prefix}/#"


def split(prefix: str, name: str) -> tuple[str, str] | None:
    """``(table_id, kind)`` of a topic ``name`` under ``prefix``, or None for any other topic."""
    head = prefix + "/"
    if not name.startswith(head):
        return None
    table, _, kind = name[len(head):].rpartition("/")
    return (table, kind) if table and kind in KINDS else None


def table_id_problem(table: Any) -> str | None:
    """What is wrong with ``table`` (a topic's table level, a report's ``--table``, the pit page's ``table``) as
    the id of a table on the floor, or None when it is one: table.yaml's rule
    (``controller.game.table.table_id_problem``) with room for ``SIMULATED_SUFFIX``, and none of the characters
    a topic level cannot hold (``controller.settings.floor.TOPIC_FORBIDDEN``: ``+``, ``#``, ``/``). The store
    skips a message on a topic whose id is not one, so the reports never meet an id they refuse."""
    problem = config_rule(table, MAX_TABLE_ID + len(SIMULATED_SUFFIX))
    if problem is None and set(table) & TOPIC_FORBIDDEN:
        problem = f"{table!r} holds +, # or /, which a topic level cannot"
    return problem


def kept(tables: dict[str, Any], table: str, limit: int = MAX_TABLES) -> bool:
    """Whether a message of ``table`` is kept by a reader holding ``tables`` (its table id -> what it keeps of
    it) at most ``limit`` of them (``MAX_TABLES``): a table already held, or a new one while fewer than ``limit``
    are. The caller counts a message not kept apart, never under its table (docs/floor.md, "Watch")."""
    return table in tables or len(tables) < limit


def received_topic(message: Any) -> str | None:
    """The topic name of ``message`` (a PUBLISH as paho gives it, ``MQTTMessage``) as text, or None when it is not
    an MQTT UTF-8 Encoded String (MQTT 5.0, 1.5.4: well-formed UTF-8, no U+0000): such a message is not in the
    floor's format, and every reader skips and counts it (docs/floor.md) instead of letting paho's ``topic``
    raise ``UnicodeDecodeError`` through its loop."""
    try:
        name = message.topic
    except UnicodeDecodeError:
        return None
    return name if "\x00" not in name else None


def encode(value: dict[str, Any]) -> bytes:
    """A payload as compact UTF-8 JSON."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _refuse(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number every reader takes")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 reads as infinity
        _refuse(text)
    return value


def _plain(value: Any, depth: int = 0) -> bool:
    """True when ``value`` nests at most ``MAX_DEPTH`` levels and holds no text PostgreSQL's ``jsonb`` refuses (a
    NUL, a lone surrogate)."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, str):
        return _utf8(value)
    if isinstance(value, dict):
        return all(_plain(key, depth + 1) and _plain(item, depth + 1) for key, item in value.items())
    if isinstance(value, list):
        return all(_plain(item, depth + 1) for item in value)
    return True


def _utf8(text: str) -> bool:
    """True when ``text`` holds no NUL and encodes to UTF-8 (no lone surrogate, ``\ud800``)."""
    if "\x00" in text:
        return False
    try:
        text.isascii() or text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def decode(payload: bytes) -> dict[str, Any] | None:
    """A JSON object payload, or None for one that is not, or that not every reader can take: ``NaN``,
    ``Infinity`` or a number beyond a float (``1e400``), a NUL or a lone surrogate in any text, nesting deeper
    than ``MAX_DEPTH`` (a consumer never stops on a foreign message, and the store never has its database refuse
    one)."""
    try:
        value = json.loads(payload, parse_constant=_refuse, parse_float=_finite)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) and _plain(value) else None
