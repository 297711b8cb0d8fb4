"""The journal: every event, command and record of the table, hash-chained, in an SQLite store.

A record has one shape wherever it is kept::

    {"seq": 12, "time": "2026-11-29T12:00:00.123+00:00", "kind": "event" | "command" | "record",
     "round": 3 | null, "type": "ButtonPressed", "data": {...}, "prev": "<hash of record 11>", "hash": "<sha256>",
     "mono": 81234567890}

``mono`` is the boot clock in microseconds (``controller.journal.clock``), absent from the records written
before the journal kept it (a NULL in the store: their hash is made without it, as it was).

``hash`` is the SHA-256 of the record's canonical JSON (sorted keys, no spaces, ASCII) without ``hash``;
``prev`` is the previous record's hash (64 zeros for the first), so an edited, removed, inserted or reordered
record breaks the chain. The journal keeps face-down cards, as a dispute needs them (PA 58 Pa. Code
674a.11(i)); reading it is a supervisor's right.

The store (docs/architecture.md, "The journal store") is one SQLite database in WAL mode with
``synchronous=FULL``: table ``records`` (one row per record, ``data`` as its canonical JSON text, indexed by
round), ``checkpoints`` (the round machine's state after a record, so that a start replays only what follows
the last one), ``seals`` (with a key: an HMAC-SHA256 of the chain head at the end of every commit) and
``meta``. Triggers refuse UPDATE and DELETE. One transaction (``Journal.commit``) holds an input and every
record and command it produced: a crash keeps all of them or none, and the service sends a command only after
the commit that holds it returned.

The text form (``crisscross journal export``, ``hil`` checks on a copy) is JSON lines, one record per line in
its canonical spelling (``canonical_line``); any other spelling of a record is tampering (``parse_line``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import logging
import signal
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from controller.journal import key as jkey
from controller.journal.clock import CLOCK_STEPPED, ClockWatch, boot_us, real_clocks, utc_now as _utc_now
from controller.journal.reader import connect_reader, wal_pending  # noqa: F401 - readers import them from here

GENESIS = "0" * 64
KINDS = ("event", "command", "record")
#: The keys of a record, in the order the records of a JSON-lines journal written before the store had them.
KEYS = ("seq", "time", "kind", "round", "type", "data", "prev", "hash")
#: The key of a record's monotonic time (``controller.journal.clock``), in every record written since it is kept.
MONO = "mono"
#: Integers a record may hold: those every JSON reader represents exactly (IEEE 754 doubles, RFC 8259 s. 6).
SAFE_INTEGER = 2**53 - 1
#: A journal store starts with these bytes (SQLite file format, "The Database Header").
SQLITE_HEADER = b"SQLite format 3\x00"
#: A checkpoint is written at each round's close and at least every this many records.
CHECKPOINT_EVERY = 2000
#: Environment variable of the crash test's hook (``Journal``): the number of the commit to cut short.
CUT_COMMIT_VARIABLE = "CRISSCROSS_TEST_CUT_COMMIT"
#: Records compared around the first break of the chain to name how it was tampered with (bounded memory).
TAMPER_WINDOW = 2000
#: Longest wait of a commit for SQLite's write lock, seconds, each try (``Journal._begin``).
BUSY_SECONDS = 1.0
#: How long a commit tries again for SQLite's write lock held by another connection, logging each second,
#: before it gives up (``JournalWriteError``): the service holds that lock between its commits, so only a
#: connection that took it in the instant between two of them can hold it.
BUSY_LIMIT_SECONDS = 30.0
#: The WAL is cut back to this size when it is reset after a full checkpoint (``PRAGMA journal_size_limit``),
#: so that the commits made while a reader held an old snapshot do not keep the file at its peak.
WAL_KEPT_BYTES = 4 << 20
#: A reader holding one snapshot of the journal longer than this (seconds) is logged (``Journal``).
READER_LIMIT_SECONDS = 30.0

log = logging.getLogger(__name__)


def _identity(info: os.stat_result) -> tuple[int, int]:
    """The file a ``stat`` describes: ``(device, inode)``."""
    return info.st_dev, info.st_ino


class JournalError(ValueError):
    """A journal that cannot be read or extended: the message names the file and the record or line."""


class JournalWriteError(OSError):
    """The store refused a commit (a full disk, a file-size limit, an I/O error): nothing of it was kept."""


class SpellingError(JournalError):
    """A record that is not in its one canonical spelling (a repeated key, re-spacing, CRLF, an escaped key,
    an integer outside the safe range): tampering. ``line`` is the 1-based line (or seq, in the store)."""

    def __init__(self, where: str, line: int, problem: str) -> None:
        super().__init__(f"{where}: line {line}: {problem}")
        self.line = line
        self.problem = problem


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
_quote = json.encoder.encode_basestring_ascii  # a string as canonical JSON text (the C encoder's)
#: ``_ENCODER``'s C encoder made once, without its check for cycles: what the journal encodes is a tree (the
#: fields of inputs and outputs, a machine's checkpoint, parsed JSON), and the check costs a dictionary
#: operation per list and object (half the encoding of a reading of the spots).
_C_ENCODER = json.encoder.c_make_encoder(None, _ENCODER.default, _quote, None, ":", ",", True, False, False) \
    if json.encoder.c_make_encoder is not None else None


#: orjson's options for ``_dumps``: keys sorted; a subclass of str, int, dict or list, a dataclass or a date
#: refused, so that the json module spells (or refuses) them as it always did.
_FAST_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
                 | orjson.OPT_PASSTHROUGH_DATETIME)


def _dumps(value: Any) -> str:
    """``value`` as canonical JSON text (sorted keys, no spaces, ASCII, no NaN), as ``_ENCODER.encode`` spells
    it; raises ``TypeError`` for a value JSON cannot hold and ``ValueError`` for NaN or an infinity.

    orjson spells it first (ten times faster), and its text is kept where the two spell alike: text of
    printable ASCII only (the json module escapes every other character, orjson writes them as they are) and
    without ``null`` (orjson writes NaN and the infinities as null, the json module refuses them). Any other
    text, and whatever orjson refuses (an integer beyond 64 bits, a key that is not a string, a subclass, a
    nesting deeper than 254), is the json module's. Floats with a small exponent are spelled otherwise by
    orjson (``1e-07``: ``1e-7``); no record and no checkpoint holds a float (the reader refuses every one,
    ``_unsafe_number``), so no text that is read is affected.
    """
    try:
        raw = orjson.dumps(value, option=_FAST_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: the json module spells it, or refuses it
        raw = None
    if raw is not None and raw.isascii() and b"\x7f" not in raw and b"null" not in raw:
        return raw.decode("ascii")
    if _C_ENCODER is None:  # a Python without the json module's C part
        return _ENCODER.encode(value)
    return "".join(_C_ENCODER(value, 0))


def _dumps_round(round_no: Any) -> str:
    """A record's ``round`` (an int or None) as canonical JSON text, without the encoder's call for them."""
    if round_no is None:
        return "null"
    return str(round_no) if type(round_no) is int else _dumps(round_no)


def record_hash(record: dict[str, Any]) -> str:
    """SHA-256 (hex) of ``record`` without its ``hash`` key, as canonical JSON."""
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def canonical_line(record: dict[str, Any]) -> str:
    """The one spelling of ``record`` as a line of text (without the newline): sorted keys, no spaces, ASCII."""
    return _dumps(record)


def _pairs_hook(repeated: list[str]) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            keys = [k for k, _ in pairs]
            repeated.append(next(k for k in keys if keys.count(k) > 1))
        return result
    return hook


def _unsafe_number(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if -SAFE_INTEGER <= value <= SAFE_INTEGER else f"integer {str(value)[:24]} outside the safe range"
    if isinstance(value, float):
        return f"number {value!r} is not an integer (amounts are integer minor units)"
    if isinstance(value, dict):
        return next(filter(None, map(_unsafe_number, value.values())), None)
    if isinstance(value, list):
        return next(filter(None, map(_unsafe_number, value)), None)
    return None


def _is_record(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("seq"), int) and not isinstance(value["seq"], bool)
            and set(value).difference((MONO,)) == set(KEYS) and type(value.get(MONO, 0)) is int)


def parse_canonical(text: str, where: str, line: int, *, legacy: bool = False,
                    shape: Callable[[Any], bool] | None = None) -> Any:
    """Parse ``text`` (one JSON value) and check that it is in its canonical spelling; return the value.

    ``legacy``: the spelling of the JSON-lines journal written before the store (keys in their written order,
    not sorted), accepted by ``crisscross journal import`` only. ``shape``: a test of the value (a record);
    failing it is a ``JournalError`` ("not a journal record"). Raises ``SpellingError`` (tampering) for a
    repeated key, a number outside ``SAFE_INTEGER`` or not an integer, or any other spelling (spaces, CRLF,
    escapes, key order); ``JournalError`` for text that is not JSON.
    """
    repeated: list[str] = []
    try:
        value = json.loads(text, object_pairs_hook=_pairs_hook(repeated))
    except json.JSONDecodeError as exc:
        raise JournalError(f"{where}: line {line}: not JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # thousands of digits; nesting too deep
        raise JournalError(f"{where}: line {line}: not JSON: {str(exc)[:80] or type(exc).__name__}") from None
    if shape is not None and not shape(value):
        raise JournalError(f"{where}: line {line}: not a journal record")
    if repeated:
        raise SpellingError(where, line, f"not in its canonical spelling: key {repeated[0][:40]!r} repeated in an "
                                         f"object")
    unsafe = _unsafe_number(value)
    if unsafe:
        raise SpellingError(where, line, f"not in its canonical spelling: {unsafe}")
    spelled = json.dumps(value, separators=(",", ":")) if legacy else _dumps(value)
    if spelled != text:
        raise SpellingError(where, line, "not in its canonical spelling (re-spaced, re-ordered, escaped or "
                                         "re-written)")
    return value


def parse_line(raw: bytes, where: str, line: int, *, legacy: bool = False) -> dict[str, Any]:
    """One line of a JSON-lines journal (with its ``\\n``) as a record; errors as ``parse_canonical``, and
    ``JournalError`` for bytes that are not UTF-8 or a value that is not a record."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JournalError(f"{where}: line {line}: not UTF-8 text ({exc.reason})") from None
    if text.endswith("\r\n"):
        raise SpellingError(where, line, "not in its canonical spelling: CRLF line end")
    return parse_canonical(text.removesuffix("\n"), where, line, legacy=legacy, shape=_is_record)


def is_store(path: Path) -> bool:
    """True when the file at ``path`` begins as an SQLite database (the journal store), False otherwise."""
    try:
        with Path(path).open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def starts_with_zeros(path: Path) -> bool:
    """True when the file at ``path`` is not empty and its first 64 KiB are zero bytes: what a power cut
    leaves of a file whose size reached the disk before its data (lost records, not a torn append)."""
    with Path(path).open("rb") as handle:
        head = handle.read(1 << 16)
    return bool(head) and not head.strip(b"\x00")


def existing_journal(path: Path, hint: str = "") -> Path:
    """``path`` as a ``Path`` when it names a non-empty regular file, the first check of every reader (``journal
    verify``, ``journal export``, ``recall``); else ``JournalError`` in one line: no such file (``hint`` added),
    not a regular file, or an empty file (a journal holds its start record at least)."""
    path = Path(path)
    if not path.exists():
        raise JournalError(f"{path}: no such file{hint}")
    if not path.is_file():
        raise JournalError(f"{path}: not a regular file")
    if not path.stat().st_size:
        raise JournalError(f"{path}: the file is empty: it is not a journal")
    return path


def refuse_lost_records(path: Path) -> None:
    """Raise ``JournalError`` (one line, as ``journal verify`` and ``recall`` say it) for a file that is not a
    store and is all zeros (``starts_with_zeros``): its records were lost, it is not a journal."""
    if not is_store(path) and starts_with_zeros(path):
        raise JournalError(f"{path}: the file is all zeros: its records were lost (a power cut?), it is not a "
                           f"journal; restore the journal from its copy")


def iter_jsonl(path: Path, *, skip_torn_tail: bool = False, legacy: bool | None = None) -> Iterator[dict[str, Any]]:
    """Stream the records of a JSON-lines journal (``crisscross journal export``, or one written before the
    store), checking each line's spelling (``parse_line``; ``legacy`` None: the first line decides).

    Raises ``JournalError`` naming the file and line for a line that is not a record, ``SpellingError`` for
    one that is not in its canonical spelling, and for a last line without its newline unless
    ``skip_torn_tail``, which leaves it out.
    """
    where = str(path)
    try:
        with Path(path).open("rb") as handle:  # lines decoded one by one, so that a bad byte is named by its line
            for number, raw in enumerate(handle, 1):
                if not raw.endswith(b"\n"):
                    if skip_torn_tail:
                        return
                    raise JournalError(f"{where}: line {number}: incomplete last line (no newline)")
                if legacy is None:
                    legacy = not raw.startswith(b'{"data":')
                yield parse_line(raw, where, number, legacy=legacy)
    except OSError as exc:
        raise JournalError(f"{where}: cannot read: {exc.strerror or exc}") from None


def _row_record(row: Sequence[Any], where: str) -> dict[str, Any]:
    seq, time_, kind, round_no, type_, data, prev, hash_, mono = row
    record = {"seq": seq, "time": time_, "kind": kind, "round": round_no, "type": type_,
              "data": parse_canonical(data, where, seq), "prev": prev, "hash": hash_}
    if mono is not None:
        record[MONO] = mono
    return record


_COLUMNS = "seq, time, kind, round, type, data, prev, hash, mono"


def _columns(db: sqlite3.Connection) -> str:
    """``_COLUMNS`` as the store on ``db`` can give them: a store written before ``mono`` was kept, read
    without changing it, gives NULL for it."""
    names = {row[1] for row in db.execute("PRAGMA table_info(records)")}
    return _COLUMNS if MONO in names else _COLUMNS.replace(MONO, "NULL")


def _open_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection to the store at ``path`` (``connect_reader``); raises ``JournalError``."""
    try:
        connection, _ = connect_reader(path)
        connection.execute("SELECT 1 FROM records LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot read the journal store: {exc}") from None
    return connection


def iter_store(path: Path, *, after: int = 0, rounds: tuple[int, int] | None = None,
               connection: sqlite3.Connection | None = None) -> Iterator[dict[str, Any]]:
    """Stream the records of the store at ``path`` in seq order, from seq ``after + 1``; with ``rounds``
    ``(first, last)`` only the records from the first of round ``first`` to the last of round ``last`` (every
    record in between, so that the chain stays whole). Raises ``JournalError`` for a store that cannot be read
    and ``SpellingError`` for a record's data not in its canonical spelling."""
    own = connection is None
    db = _open_reader(path) if connection is None else connection
    try:
        low, high = after + 1, None
        if rounds is not None:
            low, high = db.execute("SELECT min(seq), max(seq) FROM records WHERE round BETWEEN ? AND ?",
                                   rounds).fetchone()
            if low is None:
                return
        try:
            query = f"SELECT {_columns(db)} FROM records WHERE seq >= ?" + (" AND seq <= ?" if high else "") + \
                " ORDER BY seq"
            for row in db.execute(query, (low, high) if high else (low,)):
                yield _row_record(row, str(path))
        except sqlite3.Error as exc:
            raise JournalError(f"{path}: cannot read the journal store: {exc}") from None
    finally:
        if own:
            db.close()


def rounds_ended(path: Path) -> int:
    """Rounds closed or voided in the store at ``path``, by its index of round ends (0 while there is no store
    yet, or while the service is creating it); safe while the service writes it. Raises ``JournalError`` for a
    file that is not a store."""
    path = Path(path)
    if not path.exists() or not path.stat().st_size:
        return 0
    try:
        db = sqlite3.connect(f"file:{path.absolute()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot read the journal store: {exc}") from None
    try:
        if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'").fetchone() is None:
            return 0  # the store's tables are not committed yet
        return db.execute(f"SELECT count(*) FROM records WHERE {_ROUND_ENDS} AND type != 'RoundOpened'").fetchone()[0]
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot read the journal store: {exc}") from None
    finally:
        db.close()


def last_rounds(path: Path, count: int) -> list[tuple[int, list[dict[str, Any]]]]:
    """The records of the last ``count`` rounds of the journal at ``path``, ``[(round, records)]`` in round
    order: from a store by its round index, from a JSON-lines file by streaming it (keeping those rounds only).
    Errors as ``iter_records``."""
    path = Path(path)
    if path.is_file() and is_store(path):
        db = _open_reader(path)
        try:
            columns = _columns(db)
            numbers = [r for (r,) in db.execute("SELECT DISTINCT round FROM records WHERE round IS NOT NULL "
                                                "ORDER BY round DESC LIMIT ?", (count,))]
            return [(n, [_row_record(row, str(path)) for row in db.execute(
                f"SELECT {columns} FROM records WHERE round = ? ORDER BY seq", (n,))]) for n in reversed(numbers)]
        except sqlite3.Error as exc:
            raise JournalError(f"{path}: cannot read the journal store: {exc}") from None
        finally:
            db.close()
    kept: dict[int, list[dict[str, Any]]] = {}
    for record in iter_records(path, skip_torn_tail=True):
        number = record.get("round")
        if isinstance(number, int):
            kept.setdefault(number, []).append(record)
            if len(kept) > count:
                del kept[min(kept)]
    return sorted(kept.items())


def iter_records(path: Path, *, skip_torn_tail: bool = False) -> Iterator[dict[str, Any]]:
    """Stream every record of the journal at ``path``, a store or a JSON-lines file (an absent file has none).
    Errors as ``iter_store`` and ``iter_jsonl``; a path that is not a regular file is a ``JournalError``."""
    path = Path(path)
    if not path.exists():
        return iter(())
    if not path.is_file():
        raise JournalError(f"{path}: not a regular file")
    if is_store(path):
        return iter_store(path)
    return iter_jsonl(path, skip_torn_tail=skip_torn_tail)


def read_records(path: Path, *, skip_torn_tail: bool = False) -> list[dict[str, Any]]:
    """Every record of the journal at ``path`` as a list (``iter_records``); for tests and small copies: the
    service and the tools stream instead."""
    return list(iter_records(path, skip_torn_tail=skip_torn_tail))


def verify_chain(records: Iterable[dict[str, Any]], *, seq: int = 1, prev: str = GENESIS) -> str | None:
    """Check sequence numbers and the hash chain from ``seq``/``prev``; None when intact, else what is wrong
    and where."""
    for index, record in enumerate(records, seq):
        if record.get("seq") != index:
            return f"record {index}: seq {record.get('seq')} where {index} was expected (removed, inserted or reordered)"
        if record.get("prev") != prev:
            return f"record {index}: prev does not match record {index - 1}'s hash (removed, inserted or reordered)"
        if record.get("hash") != record_hash(record):
            return f"record {index}: content does not match its hash (edited)"
        prev = record["hash"]
    return None


#: The ways a journal can be tampered with, as ``find_tampering`` and ``controller.journal.tools`` name them.
TAMPER_KINDS = ("edited", "removed", "inserted", "reordered", "respelled", "truncated", "appended", "forged",
                "stripped", "unanchored")


@dataclass(frozen=True)
class Tamper:
    """The first tampered place in a journal: ``kind`` (one of ``TAMPER_KINDS``), the 1-based ``line`` (the
    position in the journal) and the ``seq`` found there (for ``removed``: the line that follows the gap and its
    seq), and ``detail`` saying what shows it."""

    kind: str
    line: int
    seq: Any
    detail: str

    def __str__(self) -> str:
        return f"line {self.line}, seq {self.seq}: {self.kind}: {self.detail}"


def find_tampering(records: Sequence[dict[str, Any]], *, seq: int = 1, prev: str = GENESIS,
                   line: int = 1) -> Tamper | None:
    """Name the first record that was edited, removed, inserted or reordered; None when the chain is intact.

    ``records`` start at journal position ``line`` where ``seq`` and ``prev`` are expected (a window of a
    longer journal, ``find_first_tampering``). Rules (module docstring: ``seq`` counts 1, 2, ...; ``prev`` is
    the previous record's ``hash``; ``hash`` covers the record): at the first record whose seq, prev or hash is
    wrong,

    - ``inserted``: the journal verifies from the record after as if this one were absent;
    - ``edited``: seq and prev are right but the content does not match its hash (or the hash was recomputed:
      then the next record's prev no longer matches, and the record before that one is named); or prev is
      right and only the seq is not;
    - ``reordered``: the seq expected here appears later;
    - ``removed``: the seq expected here appears nowhere; the record holding the next seq is named;
    - a seq already seen earlier is ``inserted`` (a copy).

    Limits: a chain without a secret cannot show records cut from the end, records appended with a correct
    chain, or a rewrite of every hash from the edited record on (the key and the anchor do:
    ``controller.journal.tools``).
    """
    for index, record in enumerate(records):
        position, expected = line + index, seq + index
        got = record.get("seq")
        self_ok = record.get("hash") == record_hash(record)
        if got == expected and record.get("prev") == prev and self_ok:
            prev = record["hash"]
            continue
        if index + 1 < len(records) and _chain_ok(records[index + 1:], expected, prev):
            return Tamper("inserted", position, got, f"the chain is whole without this record (seq {expected} follows)")
        if got == expected and record.get("prev") == prev:
            return Tamper("edited", position, got, "its content does not match its hash")
        if got == expected:
            if self_ok and index > 0:
                before = records[index - 1]
                return Tamper("edited", position - 1, before.get("seq"),
                              f"its hash was changed: record {got} was chained to another one")
            return Tamper("edited", position, got, "its prev and its content do not match the chain")
        if record.get("prev") == prev:
            return Tamper("edited", position, got, f"its seq was changed (seq {expected} expected; the chain is intact)")
        later = [i for i in range(index + 1, len(records)) if records[i].get("seq") == expected]
        if later:
            return Tamper("reordered", position, got, f"seq {expected} expected here is on line {line + later[0]}")
        if isinstance(got, int) and got > expected:
            missing = f"seq {expected}" if got == expected + 1 else f"seq {expected}-{got - 1}"
            return Tamper("removed", position, got, f"{missing} missing before this line")
        return Tamper("inserted", position, got, f"seq {got} repeats an earlier record (seq {expected} expected)")
    return None


def _chain_ok(records: Sequence[dict[str, Any]], seq: int, prev: str) -> bool:
    for offset, record in enumerate(records):
        if record.get("seq") != seq + offset or record.get("prev") != prev or record.get("hash") != record_hash(record):
            return False
        prev = record["hash"]
    return True


def find_first_tampering(records: Iterable[dict[str, Any]], *, seq: int = 1,
                         prev: str = GENESIS) -> tuple[int, str, Tamper | None]:
    """Stream ``records`` (expected from ``seq``, chained to ``prev``): ``(count, head, tamper)`` with the
    records seen, the hash of the last record of the unbroken chain and the first tampering
    (``find_tampering`` over a window of ``TAMPER_WINDOW`` records from the break; memory stays bounded
    whatever the journal's length)."""
    iterator = iter(records)
    count, before, head = 0, None, prev
    for record in iterator:
        expected = seq + count
        count += 1
        if record.get("seq") == expected and record.get("prev") == head and record.get("hash") == record_hash(record):
            before, head = record, record["hash"]
            continue
        window = [record, *islice(iterator, TAMPER_WINDOW - 1)]
        count += len(window) - 1 + sum(1 for _ in iterator)
        start = [before] if before is not None else []
        first = expected - len(start)
        found = find_tampering(start + window, seq=first, prev=before["prev"] if before is not None else head,
                               line=first)
        return count, head, found
    return count, head, None


def verify_journal(path: Path) -> tuple[int, Tamper | None]:
    """Check the hash chain and every record's spelling of the journal at ``path`` (store or JSON lines)
    without changing it: ``(records, None)`` when the chain is unbroken, else ``(records, Tamper)``. The key,
    the seals and the anchor are checked by ``controller.journal.tools.verify``.

    Raises ``JournalError`` (one line naming the file, and the line where it applies) for a file that is
    missing, unreadable, not UTF-8, or has a line that is not a journal record or no final newline.
    """
    path = Path(path)
    if not path.exists():
        raise JournalError(f"{path}: no such file")
    try:
        count, _, tamper = find_first_tampering(iter_records(path))
    except SpellingError as exc:
        return exc.line, Tamper("respelled", exc.line, exc.line, exc.problem)
    return count, tamper


_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY, time TEXT NOT NULL, kind TEXT NOT NULL, round INTEGER, type TEXT NOT NULL,
    data TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL, mono INTEGER);
CREATE INDEX IF NOT EXISTS records_by_round ON records (round);
CREATE INDEX IF NOT EXISTS round_ends ON records (type, round) WHERE {round_ends};
CREATE INDEX IF NOT EXISTS starts ON records (seq) WHERE type = 'ServiceStarted';
CREATE TABLE IF NOT EXISTS checkpoints (
    seq INTEGER PRIMARY KEY, round INTEGER, head TEXT NOT NULL, state TEXT NOT NULL, mac TEXT);
CREATE TABLE IF NOT EXISTS seals (seq INTEGER PRIMARY KEY, head TEXT NOT NULL, mac TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_APPEND_ONLY = ("records", "checkpoints", "seals", "meta")
#: The condition of the partial index ``round_ends``: a query uses the index only when it repeats it verbatim.
_ROUND_ENDS = "type IN ('RoundOpened', 'RoundClosed', 'RoundVoided')"


def key_from(value: str | None, key: bytes | None) -> int:
    """The seq at which the key was introduced, from ``meta`` ``key_from`` (``"<seq> <hmac>"``); -1 when there
    is none or its seal does not match ``key`` (nothing is then taken as written before the key)."""
    seq, _, mac = (value or "").partition(" ")
    if not key or not seq.isdigit() or mac != jkey.mac(key, "key_from", int(seq)):
        return -1
    return int(seq)


def _schema() -> str:
    triggers = "".join(
        f"CREATE TRIGGER IF NOT EXISTS {table}_no_{verb.lower()} BEFORE {verb} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'the journal is append-only: {verb} of {table} refused'); END;\n"
        for table in _APPEND_ONLY for verb in ("UPDATE", "DELETE"))
    return _SCHEMA.format(round_ends=_ROUND_ENDS) + triggers


def _add_mono(db: sqlite3.Connection) -> str:
    """The SQL that adds ``records.mono`` to a store written before it was kept (NULL in its rows), or ""."""
    names = {row[1] for row in db.execute("PRAGMA table_info(records)")}
    return "ALTER TABLE records ADD COLUMN mono INTEGER;" if names and MONO not in names else ""


def _round_of(rows: list[tuple[Any, ...]]) -> int | None:
    """The round of the last of ``rows`` (``records`` rows) that has one."""
    return next((row[3] for row in reversed(rows) if isinstance(row[3], int)), None)


class Committed(Sequence[dict[str, Any]]):
    """The records of one commit (``Journal.commit``), in seq order, each as the store gives it back (``KEYS``;
    its data decoded from its canonical text, so owned by the record alone: records go to other threads).
    Built from the rows written when first read, once."""

    __slots__ = ("_rows", "_records")

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._rows = rows
        self._records: list[dict[str, Any]] | None = None

    def _built(self) -> list[dict[str, Any]]:
        if self._records is None:
            self._records = [{"seq": seq, "time": time_, "kind": kind, "round": round_no, "type": type_,
                              "data": json.loads(text), "prev": prev, "hash": hash_, MONO: mono}
                             for seq, time_, kind, round_no, type_, text, prev, hash_, mono in self._rows]
        return self._records

    def __getitem__(self, index: Any) -> Any:
        return self._built()[index]

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._built())

    def __eq__(self, other: object) -> bool:
        return self._built() == (list(other) if isinstance(other, Committed) else other)

    def __repr__(self) -> str:
        return f"Committed({self._built()!r})"


@dataclass(frozen=True)
class Checkpoint:
    """The round machine's ``state`` (``Round.checkpoint()``) after record ``seq`` whose hash is ``head``;
    ``mac`` the HMAC-SHA256 over them with the journal key (None when the journal has no key)."""

    seq: int
    round: int | None
    head: str
    state: dict[str, Any]
    mac: str | None


def lock_store(store: Path) -> int:
    """Take the store's lock (``flock`` of the store file itself, opened never through a symbolic link's last
    component and created, empty and with mode 0600, when absent) for as long as the returned descriptor is
    open: one writer per store. The lock is held on the file, not on a name beside it, so no name can be
    removed from under it: a second service reaching the same file by any name is refused, and one reaching
    another file is on another journal. The kernel gives the lock up when its process ends, a SIGKILL or a power
    cut included, so a crash never leaves the store locked. SQLite's own locks (``fcntl``) are apart from
    ``flock``'s on Linux; the descriptor is closed only after the store's connection.

    Raises ``JournalError`` when another process (or another ``Journal`` of this one) holds it: a second
    service on a table's journal would interleave its records with the first's; ``OSError`` when the store
    cannot be opened. A store with more than one name (hard links) is refused (``JournalError``): a copy reached
    by another name would be the same file, written by two tables' histories."""
    try:
        names = os.stat(store).st_nlink
    except FileNotFoundError:  # a new store: made once locked
        names = 1
    if names > 1:
        raise JournalError(f"{store}: the journal store has {names} names (hard links): keep one name (copy it "
                           f"instead of linking): not opened")
    fd = os.open(store, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise JournalError(f"{store}: not a regular file")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise JournalError(f"{store}: in use by another process (a service already running on this journal?): "
                           f"not opened") from None
    except BaseException:
        os.close(fd)
        raise
    return fd


class Journal:
    """An open journal store, written by one thread (the controller thread).

    ``path``: the SQLite store, created (mode 0600: it holds face-down cards; its folder fsynced) if absent or
    empty. ``key``: the journal key (``controller.journal.key``) or None. Opening checks, in bounded time
    whatever the history: the last checkpoint's seal (with the key), the chain from it to the end, that every
    record is sealed (with the key: a record appended without it is refused), and the anchor file
    (``<path>.anchor``, moved at every commit): a store shorter than its anchor, or whose record at the
    anchor's seq has another hash, is refused. Once keyed, always keyed (docs/architecture.md, "The journal key
    and the anchor"): a store sealed with a key is refused without it or with another; a keyed store whose
    anchor is missing, or an anchor that does not say the store is keyed, is refused; a store or anchor that
    says it is keyed while the other does not (the key stripped) is refused; and a key given for a store that
    holds records sealed without one is refused: a key is introduced only by ``admit="key"`` (``crisscross
    journal add-key``), an anchor lost or found wrong accepted only by ``admit="anchor"`` (``crisscross journal
    reanchor``, after a supervisor's inquiry); either then holds until the next ``commit``, whose records (the
    caller's record of the act) the key's introduction or the new anchor is made with, so that neither is ever
    in effect without its record. ``admitted`` is the problem so admitted ("" when none).

    Raises ``JournalError`` for any of these, for a file of zeros (lost records, not a torn write), a
    JSON-lines journal (to be imported) or another file, and ``OSError`` when the file cannot be created. One
    ``Journal`` per store at a time: it holds the store's lock (``lock_store``) until ``close``, and a second is
    refused (``JournalError``) while the first is open. While open it also holds SQLite's write lock between its
    commits, so that another connection's write transaction is refused at once (``database is locked``) rather
    than stopping the table's next commit.

    ``created`` is true when there was no file (or an empty one) at ``path``, so that a mistyped path can be
    told apart from a table's history; ``last_round_no`` is the highest round number recorded;
    ``open_rounds`` the rounds opened and neither closed nor voided; ``checkpoint`` the last ``Checkpoint``
    (None: replay from the first record); ``last_start`` the last ``ServiceStarted`` record at opening (None:
    none). ``clock`` returns the timestamp text of each record, ``monotonic`` its ``mono`` (µs; the boot clock
    when None); a step of the wall clock is journaled as ``ClockStepped`` (``controller.journal.clock``) when
    both are real or both given.
    """

    def __init__(self, path: Path, *, fsync: bool = True, clock: Callable[[], str] = _utc_now,
                 monotonic: Callable[[], int] | None = None, key: bytes | None = None, checkpoint_every: int = CHECKPOINT_EVERY,
                 admit: str | None = None) -> None:
        if admit not in (None, "key", "anchor"):
            raise ValueError(f"admit must be None, 'key' or 'anchor', got {admit!r}")
        if admit == "key" and key is None:
            raise ValueError("admit='key' needs the key to introduce")
        self.path = Path(path)
        self.anchor_path = jkey.anchor_path(self.path)
        self._key = key
        self._fsync = fsync
        self._clock, self._mono = clock, monotonic or boot_us
        self._clocks = ClockWatch(real_clocks(clock, monotonic))
        self._admit = admit
        self.admitted = ""
        self._introducing = False  # the key's meta rows go into the next commit (``admit="key"``)
        self._anchor: jkey.AnchorWriter | None = None  # None: the next commit writes the anchor anew
        #: the WAL's size after the last round's close (bytes; a metric), and since when a reader kept the WAL
        #: checkpoint from taking it whole (monotonic seconds; None: it took it whole)
        self.wal_bytes = 0
        self._held_since: float | None = None
        self._reader_logged = False
        self.checkpoint_every = checkpoint_every
        self._commits = 0
        #: Test hook of the crash test (hil/crash.py): the process kills itself (SIGKILL) in its Nth commit,
        #: after the rows were handed to SQLite and before COMMIT, as a power cut in the middle of a write would.
        self._cut_commit = int(os.environ.get(CUT_COMMIT_VARIABLE, "0") or 0) or None
        self.created = self._check_file()
        if self.created:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            anchor = jkey.read_anchor(self.anchor_path)
            if anchor is not None and "problem" in anchor:
                raise JournalError(f"{self.path}: no journal store, and {anchor['problem']}: not started")
            if anchor is not None and anchor.get("seq"):
                raise JournalError(f"{self.path}: no journal store, but its anchor {self.anchor_path.name} names "
                                   f"record {anchor['seq']}: the store was deleted or moved; not started: restore "
                                   f"it from its copy")
        self._lock = lock_store(self.path)
        try:
            self._connect(fsync)
        except BaseException:
            self._unlock()
            raise

    def _connect(self, fsync: bool) -> None:
        """Create the store if it is new (folder fsynced), open it in WAL mode and check it (``_open``)."""
        if self.created:
            jkey.fsync_folder(self.path.parent)
        self._identity = _identity(os.fstat(self._lock))
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                       timeout=BUSY_SECONDS)
            self._db.execute("PRAGMA journal_mode=WAL").fetchall()
            self._db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'OFF'}")
            self._db.execute("PRAGMA wal_autocheckpoint=0")  # the WAL is checkpointed with ours (``commit``)
            self._db.execute(f"PRAGMA journal_size_limit={WAL_KEPT_BYTES}")  # a reset WAL shrinks back
            self._db.executescript("BEGIN IMMEDIATE;" + _schema() + _add_mono(self._db) + "COMMIT;")
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot open the journal store: {exc}") from None
        try:
            self._open()
            self._hold()
        except sqlite3.DatabaseError as exc:  # pages read at start are damaged: restored, never repaired here
            self._close_anchor()
            self._db.close()
            raise JournalError(f"{self.path}: the journal store is damaged ({exc}): not started: restore the "
                               f"journal from its copy") from None
        except BaseException:
            self._close_anchor()
            self._db.close()
            raise

    def _check_file(self) -> bool:
        if not self.path.exists():
            if self.path.is_symlink():
                raise JournalError(f"{self.path}: a dangling symbolic link")
            return True
        if not self.path.is_file():
            raise JournalError(f"{self.path}: not a regular file")
        size = self.path.stat().st_size
        if size == 0:
            return True
        with self.path.open("rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
            if head == SQLITE_HEADER:
                handle.seek(max(size - 4096, 0))
                if size >= 8192 and not handle.read().strip(b"\x00"):
                    raise JournalError(f"{self.path}: ends with {min(size, 4096)} or more zero bytes: records were "
                                       f"lost (a power cut?); not started: restore the journal from its copy")
                return False
        if starts_with_zeros(self.path):
            raise JournalError(f"{self.path}: the file is all zeros: its records were lost (a power cut?); "
                               f"not started: restore the journal from its copy")
        if head.startswith(b"{"):
            raise JournalError(f"{self.path}: a JSON-lines journal, not a journal store: migrate it with "
                               f"crisscross journal import {self.path} --journal NEW.db")
        raise JournalError(f"{self.path}: not a journal store")

    def _open(self) -> None:
        db, where = self._db, str(self.path)
        key_id = self.meta("key_id")
        anchor = jkey.read_anchor(self.anchor_path)
        stripped = key_id is None and anchor is not None and "problem" not in anchor and jkey.anchor_keyed(anchor)
        if key_id is not None and self._key is None:
            raise JournalError(f"{where}: the journal is sealed with a key and no key was given (table.yaml "
                               f"journal_key): not started")
        if key_id is not None and key_id != jkey.key_id(self._key):
            raise JournalError(f"{where}: the journal was sealed with another key: not started")
        if stripped:
            raise JournalError(f"{where}: its anchor says the journal is sealed with a key and the store carries "
                               f"none: the key was stripped (tampered): not started")
        head_row = db.execute("SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1").fetchone()
        self._seq, self._prev = head_row if head_row else (0, GENESIS)
        if key_id is None and self._key is not None and self._seq and self._admit != "key":
            raise JournalError(f"{where}: the journal is not sealed with a key but one is given (table.yaml "
                               f"journal_key): a key is introduced only by crisscross journal add-key, which "
                               f"journals it: not started")
        row = db.execute("SELECT seq, round, head, state, mac FROM checkpoints ORDER BY seq DESC LIMIT 1").fetchone()
        self.checkpoint: Checkpoint | None = None
        if row is not None:
            self.checkpoint = Checkpoint(row[0], row[1], row[2], parse_canonical(row[3], where, row[0]), row[4])
            if self._key is not None and key_id is not None and not self._before_key(row[0], row[4]) and \
                    self.checkpoint.mac != jkey.mac(self._key, "checkpoint", row[0], row[2], row[3]):
                raise JournalError(f"{where}: checkpoint at record {row[0]}: its seal does not match (altered or "
                                   f"forged without the key): not started")
        base, prev = (self.checkpoint.seq, self.checkpoint.head) if self.checkpoint else (0, GENESIS)
        if base:
            found = db.execute("SELECT hash FROM records WHERE seq = ?", (base,)).fetchone()
            if found is None or found[0] != prev:
                raise JournalError(f"{where}: record {base} does not match its checkpoint (altered): not started")
        count, _, tamper = find_first_tampering(iter_store(self.path, after=base, connection=db),
                                                seq=base + 1, prev=prev)
        if tamper is not None:
            raise JournalError(f"{where}: {tamper}: not started")
        sealed = None
        if key_id is not None and self._seq > key_from(self.meta("key_from"), self._key):  # records to vouch for
            sealed = db.execute("SELECT seq, head, mac FROM seals ORDER BY seq DESC LIMIT 1").fetchone()
            if sealed is None or sealed[0] != self._seq:
                first = (sealed[0] if sealed else 0) + 1
                raise JournalError(f"{where}: record(s) {first}-{self._seq} carry no seal: appended without the "
                                   f"journal key, never written by this service: not started")
            if sealed[1] != self._prev or sealed[2] != jkey.mac(self._key, "seal", sealed[0], sealed[1]):
                raise JournalError(f"{where}: the seal of record {sealed[0]} does not match (altered or forged "
                                   f"without the key): not started")
        self._check_anchor(anchor, key_id is not None)
        if self._key is not None and key_id is None:
            if self._admit == "key":
                self._introducing = True  # with the next commit (its record of the introduction)
                self.admitted = "the journal sealed without a key until now"
            else:  # a new store: keyed from its first record
                self._introduce_key()
        self.last_round_no = db.execute("SELECT max(round) FROM records").fetchone()[0] or 0
        self.open_rounds = [r for (r,) in db.execute(  # by the partial index of round ends (30,000 for 10,000)
            f"SELECT round FROM records WHERE {_ROUND_ENDS} GROUP BY round "
            "HAVING max(type = 'RoundOpened') AND NOT max(type != 'RoundOpened') ORDER BY round")]
        self.since_checkpoint = self._seq - base
        # by the partial index of starts, however long ago the last start was (reading back through the records
        # would grow with a service's time up)
        start = db.execute(f"SELECT {_COLUMNS} FROM records INDEXED BY starts WHERE type = 'ServiceStarted' "
                           "ORDER BY seq DESC LIMIT 1").fetchone()
        self.last_start = None if start is None else _row_record(start, where)
        if not self._introducing and self._admit != "anchor":
            self._anchor_at_head()

    def _check_anchor(self, anchor: dict[str, Any] | None, keyed: bool) -> None:
        """Refuse (``JournalError``) a store that does not match its ``anchor`` (``check_anchor``; with the key
        when ``keyed``), or a keyed store without one, unless ``admit="anchor"``: then the problem is kept in
        ``admitted`` for the caller's record."""
        where = str(self.path)
        if anchor is None:
            # without a key nothing is promised (verify says what it cannot see): a new anchor is written
            problem = (f"anchor missing ({self.anchor_path.name}): a journal sealed with a key is not started "
                       f"without its anchor (it would hide records cut from its end)") if keyed and self._seq else None
        else:
            problem = jkey.check_anchor(anchor, self._hash_at, self._seq, self._key if keyed else None)
        if problem and self._admit == "anchor":
            self.admitted = problem
        elif problem:
            raise JournalError(f"{where}: {problem}: not started; after an inquiry a supervisor may accept the "
                               f"store as it is: crisscross journal reanchor (journaled)")
        elif self._admit == "anchor":
            self.admitted = "nothing found: the anchor matched the store"

    def _introduce_key(self) -> None:
        """Seal a new store with the key from its first record: its id and the seq from which it seals (itself
        sealed) in one transaction."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._insert_key_rows()
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise JournalWriteError(f"{self.path}: cannot write: {exc}") from None

    def _insert_key_rows(self) -> None:
        """The meta rows of a key introduced at the present head (``key_id``, ``key_from``), in the open
        transaction; records up to the head are the ones written before the key."""
        seq = self._seq
        self._db.execute("INSERT INTO meta (name, value) VALUES ('key_id', ?)", (jkey.key_id(self._key),))
        self._db.execute("INSERT INTO meta (name, value) VALUES ('key_from', ?)",
                         (f"{seq} {jkey.mac(self._key, 'key_from', seq)}",))

    def _anchor_at_head(self) -> None:
        """Write the anchor anew at the head (atomically) and keep it open to move at every commit."""
        self._close_anchor()
        try:
            jkey.write_anchor(self.anchor_path, self._seq, self._prev, self._key, fsync=self._fsync)
            self._anchor = jkey.AnchorWriter(self.anchor_path, self._seq, self._key, fsync=self._fsync)
        except OSError as exc:
            raise JournalWriteError(f"{self.anchor_path}: cannot write the journal's anchor: "
                                    f"{exc.strerror or exc}") from None

    def _close_anchor(self) -> None:
        if self._anchor is not None:
            self._anchor.close()
            self._anchor = None

    def _before_key(self, seq: int, mac: str | None) -> bool:
        """True for an unsealed checkpoint (``mac`` None) written before the key was introduced (``key_from``,
        whose own seal is checked)."""
        return mac is None and key_from(self.meta("key_from"), self._key) >= seq

    def _hash_at(self, seq: int) -> str | None:
        row = self._db.execute("SELECT hash FROM records WHERE seq = ?", (seq,)).fetchone()
        return row[0] if row else None

    def meta(self, name: str) -> str | None:
        """The store's ``meta`` value ``name`` (``key_id``: the id of the key that seals it; ``key_from``: the seq from which it seals), or None."""
        row = self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    @property
    def head(self) -> tuple[int, str]:
        """``(seq, hash)`` of the last record committed (``(0, GENESIS)`` when none)."""
        return self._seq, self._prev

    def records(self, *, after: int = 0) -> Iterator[dict[str, Any]]:
        """Stream the records after seq ``after`` (``iter_store``), on this connection."""
        return iter_store(self.path, after=after, connection=self._db)

    def round_records(self, round_no: int | None) -> list[dict[str, Any]]:
        """The records of round ``round_no`` in seq order (by the store's round index)."""
        if round_no is None:
            return []
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM records WHERE round = ? ORDER BY seq", (round_no,))
        return [_row_record(row, str(self.path)) for row in rows]

    def commit(self, entries: Sequence[tuple[str, str, dict[str, Any], int | None]], *,
               state: dict[str, Any] | None = None) -> Committed:
        """Write ``entries`` ``(kind, type, data, round)`` as records in one transaction, durable (fsync of the
        WAL, ``synchronous=FULL``) before it returns them; with ``state`` (``Round.checkpoint()`` after the last
        of them) a checkpoint in the same transaction and then a checkpoint of the WAL into the database
        (SQLite's own automatic one is off: it would land on the path of a press). With a key, the commit's last
        record is sealed (HMAC-SHA256 of the chain head) in the same transaction. Once committed, the anchor is
        moved to the commit's last record (``AnchorWriter``: into the page cache, fsynced at a round's close),
        before the records are returned: a commit whose commands went out is named by the anchor, so its loss
        (a deleted or damaged WAL after a kill) shows. A step of the wall clock since this process's previous
        record (``ClockWatch``) puts a ``ClockStepped`` record before ``entries``, in the same transaction.

        The records returned (``Committed``) are as the store gives them back (their data decoded from its
        canonical text, lists for tuples), decoded when first read: the service sends the commands of a commit
        before it reads its records. Raises ``ValueError`` for an unknown kind (nothing written) and
        ``JournalWriteError`` (an ``OSError``) when the store refuses the commit: then none of it is kept, and
        the journal's head stays where it was; also when the store lost its name (deleted, or replaced by
        another file) while it was open, and when the anchor cannot be moved (the commit is kept, not returned).
        """
        rows, seq, prev, clock, mono = [], self._seq, self._prev, self._clock, self._mono
        for kind, *_ in entries:
            if kind not in KINDS:
                raise ValueError(f"journal kind must be one of {KINDS}, got {kind!r}")
        first = (clock(), mono()) if entries else None
        step = self._clocks.step(*first) if first else None
        for kind, type_, data, round_no in ([("record", CLOCK_STEPPED, step, None)] if step else []) + list(entries):
            seq += 1
            (time_, now), first = first or (clock(), mono()), None
            text = _dumps(data)
            # record_hash's canonical JSON, its keys in sorted order, with the data's text encoded once
            body = (f'{{"data":{text},"kind":{_quote(kind)},"mono":{now},"prev":{_quote(prev)},'
                    f'"round":{_dumps_round(round_no)},"seq":{seq},"time":{_quote(time_)},"type":{_quote(type_)}}}')
            hash_ = hashlib.sha256(body.encode()).hexdigest()
            rows.append((seq, time_, kind, round_no, type_, text, prev, hash_, now))
            prev = hash_
        checkpoint = None
        if state is not None:
            text = _dumps(state)
            mac = jkey.mac(self._key, "checkpoint", seq, prev, text) if self._key else None
            checkpoint = (seq, _round_of(rows), prev, text, mac)
        self._insert(rows, seq, prev, checkpoint)
        self.since_checkpoint += len(rows)
        if rows:
            self._clocks.last(rows[-1][1], rows[-1][8])
            self._move_anchor(durable=checkpoint is not None)
        if checkpoint is not None:
            self.since_checkpoint = 0
            self._checkpoint_wal()
        return Committed(rows)

    def _move_anchor(self, *, durable: bool) -> None:
        """Name the head in the anchor: the first commit after ``admit`` writes it anew (keyed once the key was
        introduced), every other one moves it (``AnchorWriter.advance``: fsynced when ``durable``, a round's
        close). Raises ``JournalWriteError``."""
        if self._anchor is None:
            self._anchor_at_head()
            return
        try:
            self._anchor.advance(self._seq, self._prev, durable=durable)
        except OSError as exc:
            raise JournalWriteError(f"{self.anchor_path}: cannot write the journal's anchor: "
                                    f"{exc.strerror or exc}") from None

    def _checkpoint_wal(self) -> None:
        """The WAL into the database at a round's close, off the path of a press, outside the held write
        transaction (``_hold``); a WAL it could not take whole (a reader holds an older snapshot) is left for
        the next one. Raises ``JournalWriteError``."""
        try:
            self._release()
            _, frames, copied = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:
            raise JournalWriteError(f"{self.path}: cannot write: {exc}") from None
        finally:
            self._hold()
        self._watch_readers(frames, copied)

    def _watch_readers(self, frames: int, copied: int) -> None:
        """After a WAL checkpoint that copied ``copied`` of the WAL's ``frames``: keep ``wal_bytes`` (the WAL's
        size), and log a WARNING once a reader has kept the checkpoint from taking the whole WAL for longer than
        ``READER_LIMIT_SECONDS`` (its snapshot makes the WAL grow; the service's own readers take none that
        long), and INFO when it let go."""
        try:
            self.wal_bytes = os.stat(jkey.beside(self.path, "-wal")).st_size
        except FileNotFoundError:
            self.wal_bytes = 0
        now = time.monotonic()
        if copied >= frames:
            if self._held_since is not None and now - self._held_since > READER_LIMIT_SECONDS:
                log.info("%s: the reader let go of its snapshot after %.0f s; the WAL is taken whole again",
                         self.path, now - self._held_since)
            self._held_since = None
            return
        if self._held_since is None:
            self._held_since, self._reader_logged = now, False
        elif now - self._held_since > READER_LIMIT_SECONDS and not self._reader_logged:
            self._reader_logged = True
            log.warning("%s: a reader has held a snapshot of the journal for more than %.0f s (%d of %d WAL frames "
                        "copied, the WAL %d bytes): it grows until the reader lets go", self.path,
                        now - self._held_since, copied, frames, self.wal_bytes)

    def import_records(self, records: Iterable[dict[str, Any]], *, batch: int = 5000) -> int:
        """Append existing ``records`` unchanged (``crisscross journal import``) to an empty store, ``batch``
        per transaction, each checked to extend the chain (seq, prev, hash); with a key the last is sealed.
        Returns the number appended. Raises ``JournalError`` at the first record that does not extend the chain
        (what was committed before it stays: the caller removes the new store) and ``JournalWriteError``."""
        if self._seq:
            raise JournalError(f"{self.path}: holds records: import fills a new store only")
        rows: list[tuple[Any, ...]] = []
        seq, prev = self._seq, self._prev
        for record in records:
            if record["seq"] != seq + 1 or record["prev"] != prev or record["hash"] != record_hash(record):
                raise JournalError(f"record {record['seq']}: does not extend the chain after record {seq}")
            seq, prev = record["seq"], record["hash"]
            rows.append((seq, record["time"], record["kind"], record["round"], record["type"],
                         _dumps(record["data"]), record["prev"], prev, record.get(MONO)))
            if len(rows) >= batch:
                self._insert(rows, seq, prev)
                rows = []
        self._insert(rows, seq, prev)
        return seq

    def _insert(self, rows: list[tuple[Any, ...]], seq: int, prev: str,
                checkpoint: tuple[Any, ...] | None = None) -> None:
        """One transaction: ``rows`` of ``records`` ending at ``seq``/``prev``, their seal (with a key), the
        ``checkpoint`` row and, in the commit after ``admit="key"``, the key's introduction. Raises
        ``JournalWriteError`` (rolled back, the head unchanged), also before anything is written when the store
        lost its name (``_check_identity``)."""
        db = self._db
        self._check_identity()
        try:
            self._begin()
            try:
                if self._introducing:
                    self._insert_key_rows()
                db.executemany(f"INSERT INTO records ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
                self._commits += 1
                if self._commits == self._cut_commit:  # test hook: a commit cut short by a crash
                    os.kill(os.getpid(), signal.SIGKILL)
                if self._key is not None and rows:
                    db.execute("INSERT INTO seals (seq, head, mac) VALUES (?, ?, ?)",
                               (seq, prev, jkey.mac(self._key, "seal", seq, prev)))
                if checkpoint is not None:
                    db.execute("INSERT OR IGNORE INTO checkpoints (seq, round, head, state, mac) "
                               "VALUES (?, ?, ?, ?, ?)", checkpoint)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise JournalWriteError(f"{self.path}: cannot write: {exc}") from None
        self._introducing = False
        self._seq, self._prev = seq, prev
        self._hold()

    def _check_identity(self) -> None:
        """Raise ``JournalWriteError`` when the store open here lost its name: its file has no name left (the
        journal deleted while the service ran) or ``path`` names another file now (moved or replaced). Records
        written on would be lost with the file, or kept where nobody reads them."""
        if os.fstat(self._lock).st_nlink == 0:
            raise JournalWriteError(f"{self.path}: the journal store was deleted while open (its file has no name "
                                    f"any more): nothing more is written; what it held is lost unless restored "
                                    f"from its copy")
        try:
            now = _identity(os.stat(self.path))
        except FileNotFoundError:
            now = None
        if now != self._identity:
            raise JournalWriteError(f"{self.path}: the journal store was moved or replaced while open (the name "
                                    f"reaches another file now, or none): nothing more is written")

    def _begin(self) -> None:
        """Start the commit's write transaction: the one held since the last commit (``_hold``), else a new one,
        waiting for another connection's write lock for at most ``BUSY_LIMIT_SECONDS`` (an ERROR logged each
        try). Raises ``sqlite3.Error``."""
        if self._db.in_transaction:
            return
        began = time.monotonic()
        while True:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                waited = time.monotonic() - began
                if "locked" not in str(exc) or waited >= BUSY_LIMIT_SECONDS:
                    raise
                log.error("%s: another connection holds the journal's write lock (%.0f s): the commit waits, "
                          "nothing is applied or sent meanwhile; only the service writes the journal", self.path,
                          waited)

    def _hold(self) -> None:
        """Take SQLite's write lock until the next commit (``BEGIN IMMEDIATE`` without waiting), so that another
        connection's write transaction is refused at once; readers read beside it (WAL). When another
        connection took it first, the next commit waits for it (``_begin``)."""
        if self._db.in_transaction:
            return
        self._db.execute("PRAGMA busy_timeout=0")
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            log.warning("%s: the journal's write lock is held by another connection (%s)", self.path, exc)
        finally:
            self._db.execute(f"PRAGMA busy_timeout={int(BUSY_SECONDS * 1000)}")

    def _release(self) -> None:
        """End the write transaction held between commits (it holds nothing written)."""
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def append(self, kind: str, type_: str, data: dict[str, Any], round_no: int | None) -> dict[str, Any]:
        """Commit one record (``commit``) and return it. Errors as ``commit``."""
        return self.commit([(kind, type_, data, round_no)])[-1]

    def close(self) -> None:
        """Close the store and give up its lock (``lock_store``). Nothing is written here: every commit was durable
        when ``commit`` returned, and a refused one was rolled back (never completed later). A second call does
        nothing."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        self._close_anchor()
        try:
            self._release()
        finally:
            self._db.close()
            self._unlock()

    def _unlock(self) -> None:
        if getattr(self, "_lock", -1) >= 0:
            os.close(self._lock)
            self._lock = -1

    def __del__(self) -> None:
        """A journal dropped without ``close`` gives its lock up with it (its connection closes with it too)."""
        self._unlock()
