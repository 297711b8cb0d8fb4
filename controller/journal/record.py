"""A journal record, its hash and its one canonical spelling; the journal's errors.

A record has one shape wherever it is kept (docs/architecture.md, "Journal records")::

    {"seq": 12, "time": "2026-11-29T12:00:00.123+00:00", "kind": "event" | "command" | "record",
     "round": 3 | null, "type": "ButtonPressed", "data": {...}, "prev": "<hash of record 11>", "hash": "<sha256>",
     "mono": 81234567890}

``mono`` is the boot clock in microseconds (``controller.journal.clock``), absent from the records written
before the journal kept it (their hash is made without it). ``hash`` is the SHA-256 of the record's canonical
JSON (sorted keys, no spaces, ASCII) without ``hash``; ``prev`` is the previous record's hash (64 zeros for the
first). The text form (``crisscross journal export``) is JSON lines, one record per line in its canonical
spelling (``canonical_line``); any other spelling of a record is tampering (``parse_line``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import orjson

#: The ``prev`` of the first record.
GENESIS = "0" * 64
#: A record's ``kind``: a device input, a device output, a fact of the round.
KINDS = ("event", "command", "record")
#: The keys of a record, in the order the records of a JSON-lines journal written before the store had them.
KEYS = ("seq", "time", "kind", "round", "type", "data", "prev", "hash")
#: The key of a record's monotonic time (``controller.journal.clock``), in every record written since it is kept.
MONO = "mono"
#: Integers a record may hold: those every JSON reader represents exactly (IEEE 754 doubles, RFC 8259 s. 6).
SAFE_INTEGER = 2**53 - 1


class JournalError(ValueError):
    """A journal that cannot be read or extended: the message names the file and the record or line."""


class JournalWriteError(OSError):
    """The store refused a commit (a full disk, a file-size limit, an I/O error): nothing of it was kept
    (``controller.journal.store.Journal.commit``)."""


class UnsafeRecordError(JournalWriteError):
    """A commit refused before anything of it is written because an entry (or the checkpoint) holds a value the
    journal's own reader would refuse (``unsafe_number``: an integer outside ``SAFE_INTEGER``, a float), or one
    JSON cannot hold: written, it would make the journal fail its check ("respelled") for ever after. The
    message names the record's type and kind, its round and the field (``Journal.commit``)."""


class NotARecordError(JournalError):
    """A line of a JSON-lines journal that is not a record at all (not UTF-8, not JSON, not a record's shape,
    an empty line, longer than any record): ``line`` is its 1-based number, ``problem`` what it is. In a file
    whose first line is a record it is an altered line (``controller.journal.tools.verify``)."""

    def __init__(self, where: str, line: int, problem: str) -> None:
        super().__init__(f"{where}: line {line}: {problem}")
        self.line = line
        self.problem = problem


class SpellingError(JournalError):
    """A record that is not in its one canonical spelling (a repeated key, re-spacing, CRLF, an escaped key,
    an integer outside the safe range): tampering. ``line`` is the 1-based line (or seq, in the store)."""

    def __init__(self, where: str, line: int, problem: str) -> None:
        super().__init__(f"{where}: line {line}: {problem}")
        self.line = line
        self.problem = problem


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
#: A string as canonical JSON text, quoted and ASCII-escaped (the json module's C function).
quote = json.encoder.encode_basestring_ascii
#: ``_ENCODER``'s C encoder made once, without its check for cycles: what the journal encodes is a tree (the
#: fields of inputs and outputs, a machine's checkpoint, parsed JSON), and the check costs a dictionary
#: operation per list and object (half the encoding of a reading of the spots).
_C_ENCODER = json.encoder.c_make_encoder(None, _ENCODER.default, quote, None, ":", ",", True, False, False) \
    if json.encoder.c_make_encoder is not None else None


#: orjson's options for ``dumps``: keys sorted; a subclass of str, int, dict or list, a dataclass or a date
#: refused, so that the json module spells (or refuses) them as it always did.
_FAST_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
                 | orjson.OPT_PASSTHROUGH_DATETIME)


def _json_text(value: Any) -> str:
    """``value`` spelled by the json module (``_ENCODER``); raises as ``dumps``."""
    if _C_ENCODER is None:  # a Python without the json module's C part
        return _ENCODER.encode(value)
    return "".join(_C_ENCODER(value, 0))


def _spelled_alike(raw: bytes) -> str | None:
    """orjson's text ``raw`` where the json module spells it alike (``dumps``: printable ASCII, no ``null``),
    else None. Checked as ``str``: its ``in`` costs a third of ``bytes``'s on a record's text."""
    if not raw.isascii():
        return None
    text = raw.decode("ascii")
    return None if "\x7f" in text or "null" in text else text


def dumps(value: Any) -> str:
    """``value`` as canonical JSON text (sorted keys, no spaces, ASCII, no NaN), as ``_ENCODER.encode`` spells
    it; raises ``TypeError`` for a value JSON cannot hold and ``ValueError`` for NaN or an infinity.

    orjson spells it first (ten times faster), and its text is kept where the two spell alike: text of
    printable ASCII only (the json module escapes every other character, orjson writes them as they are) and
    without ``null`` (orjson writes NaN and the infinities as null, the json module refuses them). Any other
    text, and whatever orjson refuses (an integer beyond 64 bits, a key that is not a string, a subclass, a
    nesting deeper than 254), is the json module's. Floats with a small exponent are spelled otherwise by
    orjson (``1e-07``: ``1e-7``); no record and no checkpoint holds a float (the reader refuses every one,
    ``unsafe_number``; the writer too, ``dumps_checked``), so no text that is read is affected.
    """
    try:
        text = _spelled_alike(orjson.dumps(value, option=_FAST_OPTIONS))
    except TypeError:  # orjson.JSONEncodeError: the json module spells it, or refuses it
        text = None
    return _json_text(value) if text is None else text


def dumps_checked(value: Any, root: str = "") -> str:
    """``value`` as ``dumps`` spells it, refused when it holds a number the journal's reader refuses
    (``unsafe_number``: ``ValueError`` with its text, ``root`` naming the value): what the writer commits
    (``controller.journal.store.Journal.commit``). Raises as ``dumps`` otherwise.

    Cheap on the path of a press: orjson refuses an integer outside +-(2**53 - 1) itself (``OPT_STRICT_INTEGER``),
    and spells every float with a ``.`` or a signed exponent (``1e+16``, ``1e-7``); only a value orjson refuses,
    or whose text holds a ``.``, a ``+`` or a ``-`` (a negative integer, a string), is walked.
    """
    try:
        raw = orjson.dumps(value, option=_FAST_OPTIONS | orjson.OPT_STRICT_INTEGER).decode("latin-1")
    except TypeError:  # an integer past 53 bits, or what only the json module spells (or refuses)
        raw = None
    if raw is None or "." in raw or "+" in raw or "-" in raw:
        problem = unsafe_number(value, root)
        if problem is not None:
            raise ValueError(problem)
    if raw is not None and raw.isascii() and "\x7f" not in raw and "null" not in raw:
        return raw
    return _json_text(value)


def dumps_round(round_no: Any) -> str:
    """A record's ``round`` (an int or None) as canonical JSON text, without the encoder's call for them."""
    if round_no is None:
        return "null"
    return str(round_no) if type(round_no) is int else dumps(round_no)


def record_hash(record: dict[str, Any]) -> str:
    """SHA-256 (hex) of ``record`` without its ``hash`` key, as canonical JSON."""
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def canonical_line(record: dict[str, Any]) -> str:
    """The one spelling of ``record`` as a line of text (without the newline): sorted keys, no spaces, ASCII."""
    return dumps(record)


def _pairs_hook(repeated: list[str]) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            keys = [k for k, _ in pairs]
            repeated.append(next(k for k in keys if keys.count(k) > 1))
        return result
    return hook


def _unsafe_number(value: Any) -> str | None:
    """What is wrong with the first number in ``value`` the reader refuses (``unsafe_number``), None when none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if -SAFE_INTEGER <= value <= SAFE_INTEGER else f"integer {str(value)[:24]} outside the safe range"
    if isinstance(value, float):
        return f"number {value!r} is not an integer (amounts are integer minor units)"
    if isinstance(value, dict):
        return next(filter(None, map(_unsafe_number, value.values())), None)
    if isinstance(value, (list, tuple)):
        return next(filter(None, map(_unsafe_number, value)), None)
    return None


def _path_to_unsafe(value: Any) -> str:
    """The path (``.key``, ``[index]``) in ``value`` to the number ``_unsafe_number`` names; walked only once one
    was found, so that a value without one costs one walk."""
    if isinstance(value, dict):
        for key, item in value.items():
            if _unsafe_number(item):
                return f".{str(key)[:40]}{_path_to_unsafe(item)}"
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if _unsafe_number(item):
                return f"[{index}]{_path_to_unsafe(item)}"
    return ""


def unsafe_number(value: Any, root: str = "") -> str | None:
    """The first number in ``value`` (parsed JSON, or a record's data before it is written) that is not an
    integer within +-``SAFE_INTEGER`` (a float, or an integer no JSON reader represents exactly: RFC 8259 s. 6;
    docs/architecture.md, "Exact bytes"), as ``"<problem> at <root><path>"`` (``at data.spots[0][2]``), or None
    when every number is one. The one rule of the reader (``parse_canonical``) and the writer
    (``controller.journal.store.Journal.commit``)."""
    problem = _unsafe_number(value)
    if problem is None:
        return None
    where = f"{root}{_path_to_unsafe(value)}".lstrip(".")
    return f"{problem} at {where}" if where else problem


def _is_record(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("seq"), int) and not isinstance(value["seq"], bool)
            and set(value).difference((MONO,)) == set(KEYS) and type(value.get(MONO, 0)) is int)


def parse_canonical(text: str, where: str, line: int, *, legacy: bool = False,
                    shape: Callable[[Any], bool] | None = None, root: str = "") -> Any:
    """Parse ``text`` (one JSON value) and check that it is in its canonical spelling; return the value.

    ``legacy``: the spelling of the JSON-lines journal written before the store (keys in their written order,
    not sorted), accepted by ``crisscross journal import`` only. ``shape``: a test of the value (a record);
    failing it is a ``JournalError`` ("not a journal record"). ``root``: what the value is (``data``), named
    before the path of an unsafe number. Raises ``SpellingError`` (tampering) for a
    repeated key, a number outside ``SAFE_INTEGER`` or not an integer, or any other spelling (spaces, CRLF,
    escapes, key order); ``NotARecordError`` (a ``JournalError``) for text that is not JSON or, with ``shape``,
    not of that shape.
    """
    repeated: list[str] = []
    try:
        value = json.loads(text, object_pairs_hook=_pairs_hook(repeated))
    except json.JSONDecodeError as exc:
        raise NotARecordError(where, line, f"not JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # thousands of digits; nesting too deep
        raise NotARecordError(where, line, f"not JSON: {str(exc)[:80] or type(exc).__name__}") from None
    if shape is not None and not shape(value):
        raise NotARecordError(where, line, "not a journal record")
    if repeated:
        raise SpellingError(where, line, f"not in its canonical spelling: key {repeated[0][:40]!r} repeated in an "
                                         f"object")
    unsafe = unsafe_number(value, root)
    if unsafe:
        raise SpellingError(where, line, f"not in its canonical spelling: {unsafe}")
    spelled = json.dumps(value, separators=(",", ":")) if legacy else dumps(value)
    if spelled != text:
        raise SpellingError(where, line, "not in its canonical spelling (re-spaced, re-ordered, escaped or "
                                         "re-written)")
    return value


def parse_line(raw: bytes, where: str, line: int, *, legacy: bool = False) -> dict[str, Any]:
    """One line of a JSON-lines journal (with its ``\\n``) as a record; errors as ``parse_canonical``, and
    ``NotARecordError`` for bytes that are not UTF-8, an empty line or a value that is not a record."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotARecordError(where, line, f"not UTF-8 text ({exc.reason})") from None
    if not text.strip():
        raise NotARecordError(where, line, "an empty line: not a journal record")
    if text.endswith("\r\n"):
        raise SpellingError(where, line, "not in its canonical spelling: CRLF line end")
    return parse_canonical(text.removesuffix("\n"), where, line, legacy=legacy, shape=_is_record)

