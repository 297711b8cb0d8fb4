"""The rules of a control request that do not depend on the transport: numbers in plain decimal digits, the
body of an action (docs/control.md, "POST /actions") and the round guard (docs/control.md, "The round guard").

Each refusal is an ``HTTPError`` with the status and a message naming what was wrong.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from http import HTTPStatus
from typing import Any

from controller.game.sessions import PLAYER_ID
from controller.journal.record import SAFE_INTEGER
from controller.round.inputs import ACTION_CODES, ACTIONS, ANSWERING, MAX_REASON, RATING_ACTIONS, reason_refused

#: Largest request body accepted (bytes); a larger one is answered 413 without being read.
MAX_BODY = 4096
#: Longest wait of one ``GET /events`` (seconds).
MAX_WAIT = 30.0
#: Largest integer of a request: the ``after`` cursor of ``/events`` (a journal seq; far beyond any table's
#: lifetime) and an action's ``round`` and ``answers``, which are journaled: the largest integer a journal record
#: holds (``controller.journal.record.SAFE_INTEGER``, 2**53 - 1; its reader calls a larger one respelled).
MAX_SEQ = SAFE_INTEGER
#: Request headers that may appear once only: two values would let two readers of the request disagree (two
#: ``Last-Event-ID`` cursors: which records a resumed stream skips).
SINGLE_HEADERS: tuple[str, ...] = ("Authorization", "Content-Length", "Content-Type", "Host", "Last-Event-ID")
#: Plain ASCII decimal digits: ``int()`` also takes ``+5``, ``1_0``, `` 5`` and other scripts' digits.
DIGITS = re.compile(r"[0-9]+")
#: A ``timeout`` of ``/events``: decimal digits with an optional fraction (``25``, ``0.5``).
SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")
#: Longest ``timeout`` text of ``/events`` (characters): a double's shortest decimal spelling fits (17
#: significant digits, a point).
MAX_SECONDS_TEXT = 24



def decimal(text: str, maximum: int) -> int | None:
    """``text`` as an integer when it is plain ASCII decimal digits (``DIGITS``) of at most ``maximum``, else
    None; more than 16 digits are refused before ``int()`` reads them."""
    if not DIGITS.fullmatch(text) or len(text) > 16:
        return None
    value = int(text)
    return value if value <= maximum else None


def seconds(text: str, maximum: float) -> float | None:
    """``text`` as seconds (a float) when it is ASCII decimal digits with an optional fraction (``SECONDS``) of at
    most ``MAX_SECONDS_TEXT`` characters whose exact value is at most ``maximum``, else None. The bound is
    checked on the text's exact decimal value, not on the nearest float: ``30.000000000000001`` is above 30
    though ``float()`` reads it as 30.0."""
    if not SECONDS.fullmatch(text) or len(text) > MAX_SECONDS_TEXT or Decimal(text) > Decimal(maximum):
        return None
    return float(text)


class HTTPError(Exception):
    """An answer other than success: ``status``, ``message`` and extra headers."""

    def __init__(self, status: HTTPStatus, message: str, headers: dict[str, str] | None = None, *,
                 body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.body = body or {}




#: The one character set of a request body (RFC 8259, 8.1: JSON exchanged between systems is UTF-8).
CHARSET = "utf-8"


def content_type_of(header: str) -> str:
    """The media type of a ``Content-Type`` header value (lowercase, without parameters), else ``HTTPError`` 415:
    not ``application/json``, or a ``charset`` parameter other than UTF-8 (named)."""
    media_type, *parameters = (part.strip() for part in header.split(";"))
    if media_type.lower() != "application/json":
        raise HTTPError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json")
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        charset = value.strip().strip('"')
        if name.strip().lower() == "charset" and charset.lower() != CHARSET:
            raise HTTPError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"charset {json_text(charset[:20])}: the body must be "
                                                               f"JSON in UTF-8 (RFC 8259, 8.1)")
    return media_type.lower()


def body_text(raw: bytes) -> str:
    """The request body ``raw`` as text: UTF-8 without a byte order mark (RFC 8259, 8.1), else ``HTTPError`` 415
    naming the encoding it is in (UTF-16 or UTF-32, as ``json.detect_encoding`` tells them from the first bytes
    of a JSON text, or UTF-8 with a byte order mark), or 400 naming the first byte that is not UTF-8."""
    encoding = json.detect_encoding(raw)
    if encoding != CHARSET:
        name = {"utf-8-sig": "UTF-8 with a byte order mark"}.get(encoding, encoding.upper())
        raise HTTPError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"the body is {name}: the control interface takes JSON "
                                                           f"in UTF-8 only, without a byte order mark (RFC 8259, 8.1)")
    try:
        return raw.decode(CHARSET)
    except UnicodeDecodeError as exc:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"the body is not UTF-8: byte {exc.start} (0x{raw[exc.start]:02x}) "
                                                f"{exc.reason}; send JSON in UTF-8") from None


class RepeatedKey(ValueError):
    """A JSON object of the body repeats a key."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` hook: a JSON object that repeats a key is refused (``RepeatedKey``), as in ``settle``."""
    keys = [key for key, _ in pairs]
    repeated = next((key for key in keys if keys.count(key) > 1), None)
    if repeated is not None:
        raise RepeatedKey(f"key {json_text(repeated[:40])} repeated in the body")
    return dict(pairs)


#: How a number of the body is written (``whole_number``), for the messages that refuse one.
INTEGER_SPELLING = "written as an integer (3, not 3.0, 3e0 or true)"


def whole_number(value: Any) -> bool:
    """True for a JSON integer of 0 to ``MAX_SEQ`` written as one: ``3``, not ``3.0`` or ``3e0`` (a fraction or an
    exponent reads as a float: a client that sends one has computed the number as one and may send ``3.5`` next),
    nor ``true`` (a bool is an int in Python)."""
    return type(value) is int and 0 <= value <= MAX_SEQ


#: Keys of an action's body (docs/control.md, "POST /actions").
ACTION_KEYS: tuple[str, ...] = ("action", "code", "reason", "round", "state", "answers")


def json_text(value: Any) -> str:
    """``value`` as JSON text, cut to 40 characters, for an error message (``null``, ``true``, ``"x"``)."""
    try:
        return json.dumps(value)[:40]
    except (TypeError, ValueError):
        return type(value).__name__


def _object_of(body: Any, keys: tuple[str, ...], shape: str) -> None:
    """``HTTPError`` 400 unless ``body`` is a JSON object whose keys are among ``keys`` (``shape`` shows one)."""
    if not isinstance(body, dict):
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"expected a JSON object {shape}")
    unknown = set(body) - set(keys)
    if unknown:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"unknown key(s): {', '.join(sorted(unknown))[:60]}; the allowed "
                                                 f"keys are {', '.join(keys)}")


def check_action(body: Any) -> tuple[str, str, str, int | None, str | None, int | None]:
    """``(action, reason, code, round, state, answers)`` of an action body, else ``HTTPError`` 400 saying what is
    wrong.

    ``void_round`` and ``disable_table`` need a ``code`` (``ACTION_CODES``: ``VOID_CODES``, ``DISABLE_CODES``),
    no other action takes one; ``reason`` is optional free text (journal only);
    ``round`` (a non-negative integer) and ``state`` (text) are the round guard, each optional; ``answers`` (a
    non-negative integer) is required of an action that answers something (``controller.round.inputs.ANSWERING``:
    the number ``/state`` shows in ``answers``), so that a retry never answers something raised after it."""
    _object_of(body, ACTION_KEYS, '{"action": ..., "code": ..., ...}')
    action = body.get("action")
    if action not in ACTIONS:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"unknown action {json_text(action)}; allowed: {', '.join(ACTIONS)}")
    reason = body.get("reason", "")
    if reason_refused(reason):
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"reason must be one line of printable text, at most {MAX_REASON} "
                                                 f"characters")
    code = body.get("code", "")
    codes = ACTION_CODES.get(action, ())
    if code != "" and code not in codes:
        if not codes:
            raise HTTPError(HTTPStatus.BAD_REQUEST, f"{action} takes no code; got {json_text(code)} (codes are for "
                                                     f"{', '.join(ACTION_CODES)})")
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"code of {action} must be one of {', '.join(codes)}; got "
                                                 f"{json_text(code)}")
    if codes and not code:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"{action} needs a code: {', '.join(codes)} (the free text "
                                                 f"of reason stays in the journal)")
    round_no = body.get("round")
    if round_no is not None and not whole_number(round_no):
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"round must be a round number (0 to {MAX_SEQ}) {INTEGER_SPELLING}, "
                                                 f"or null; got {json_text(round_no)}")
    from controller.round.graph import STATES  # here: controller.game.table imports the control interface, round it

    state = body.get("state")
    if state is not None and state not in STATES:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"state must be a state of the round as /state shows it "
                                                 f"(docs/round-states.md), or null; got {json_text(state)}")
    answers = body.get("answers")
    if action in ANSWERING and not whole_number(answers):
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"{action} answers something: give answers, the number /state "
                                                 f"shows in answers.{action} (0 to {MAX_SEQ}) {INTEGER_SPELLING}; "
                                                 f"got {json_text(answers)}")
    if action not in ANSWERING and answers is not None:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"answers goes only with {', '.join(ANSWERING)}")
    return action, reason, code, round_no, state, answers


#: The keys of a rating action's body (``POST /sessions``).
RATING_KEYS: tuple[str, ...] = ("action", "seat", "player")


def check_rating(body: Any, seats: tuple[int, ...]) -> tuple[str, int, str]:
    """``(action, seat, player)`` of a rating action's body (``POST /sessions``; ``RATING_ACTIONS``), else
    ``HTTPError`` 400 saying what is wrong: ``seat`` one of the table's ``seats``; ``player`` (a player's id,
    ``PLAYER_ID``) required of ``rate_seat`` and of no other action."""
    _object_of(body, RATING_KEYS, '{"action": ..., "seat": ..., "player": ...}')
    action = body.get("action")
    if action not in RATING_ACTIONS:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"unknown action {json_text(action)}; allowed: "
                                                 f"{', '.join(RATING_ACTIONS)}")
    seat = body.get("seat")
    if type(seat) is not int or seat not in seats:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"seat must be one of the table's seats "
                                                 f"({', '.join(map(str, seats))}); got {json_text(seat)}")
    player = body.get("player", "")
    if action == "rate_seat":
        if not isinstance(player, str) or not re.fullmatch(PLAYER_ID, player):
            raise HTTPError(HTTPStatus.BAD_REQUEST, "rate_seat needs a player: 1 to 32 letters, digits or dashes")
    elif player != "":
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"{action} takes no player")
    return action, seat, player
