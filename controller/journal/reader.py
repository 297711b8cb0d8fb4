"""Reading a journal without writing it: a store (also an evidence copy on write-protected media) or a
JSON-lines file, streamed record by record, each checked for its canonical spelling
(``controller.journal.record``); the first checks of every reader (no file, an empty one, one of zeros).

Used by every reader (``crisscross journal verify``, ``export``, ``recall``, ``hil.checks``); none of them
changes the store.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from controller.journal import key as jkey
from controller.journal.record import MONO, JournalError, NotARecordError, parse_canonical, parse_line
from controller.journal.schema import ROUND_ENDS, columns
from controller.settings.text import path_shown

#: A journal store starts with these bytes (SQLite file format, "The Database Header").
SQLITE_HEADER = b"SQLite format 3\x00"
#: Longest line of a JSON-lines journal read, in bytes (a record's line is a few thousand at most): a longer one is
#: refused unread, so that no file (one line of gigabytes) fills the memory of the reader.
MAX_LINE_BYTES = 1 << 20


def connect_reader(path: Path) -> tuple[sqlite3.Connection, bool]:
    """A read-only connection to the store at ``path`` (the service may be writing: WAL lets both go on), and
    whether it is ``immutable``. Reading a store in WAL mode needs its ``-wal`` and ``-shm`` files beside it, and
    SQLite makes them when they are absent; so that a reader leaves the folder as it found it:

    - a store closed cleanly (neither file beside it, so no commit waits in a WAL) that this process may write is
      opened read-write with ``PRAGMA query_only`` (nothing can be written through it): SQLite removes the two
      files when such a connection closes as the last one on the store, and leaves them to a service that
      opened it meanwhile (SQLite, "Write-Ahead Logging": the last connection to close checkpoints and deletes
      them, and knows it is the last by its lock on the database file);
    - otherwise (a service running, or a WAL left by a kill or a power cut, which must be read with the store)
      it is opened ``mode=ro``, which reads the WAL and never checkpoints it into the store nor removes it;
    - a store on read-only media without its ``-shm`` file (an evidence copy on write-protected media) cannot be
      opened in WAL mode, and is then read as an immutable file (SQLite's ``immutable=1``, sqlite.org/uri.html),
      which reads the database file alone: a WAL beside it is not read (``wal_pending`` says whether there is
      one).

    Raises ``sqlite3.Error``."""
    absolute = Path(path).absolute()
    uri = f"file:{absolute}"
    if _closed_cleanly(absolute):
        connection = sqlite3.connect(uri + "?mode=rw", uri=True, check_same_thread=False)
        try:
            connection.execute("PRAGMA query_only = ON")
            connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            return connection, False
        except sqlite3.Error:  # e.g. a store its folder's permissions let no one else's files beside: read-only
            connection.close()
    try:
        connection = sqlite3.connect(uri + "?mode=ro", uri=True, check_same_thread=False)
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return connection, False
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc) or not _read_only_media(path):
            raise
    connection = sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, check_same_thread=False)
    connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    return connection, True


def _closed_cleanly(path: Path) -> bool:
    """True when the store at ``path`` has neither ``-wal`` nor ``-shm`` beside it (no connection open on it and
    no commit waiting in a WAL) and this process may write it and its folder (``connect_reader``)."""
    if any(os.path.lexists(jkey.beside(path, end)) for end in ("-wal", "-shm")):
        return False
    return os.access(path, os.R_OK | os.W_OK) and os.access(Path(os.path.realpath(path)).parent, os.W_OK | os.X_OK)


def store_key_id(path: Path) -> str | None:
    """The id of the key the store at ``path`` is sealed with (its ``key_id`` meta row), None when it is kept
    without one. Raises ``JournalError`` when the store cannot be read."""
    try:
        db, _ = connect_reader(path)
        try:
            row = db.execute("SELECT value FROM meta WHERE name = 'key_id'").fetchone()
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise JournalError(f"{path_shown(path)}: cannot read the journal store: {exc}") from None
    return None if row is None else row[0]


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


def is_store(path: Path) -> bool:
    """True when the file at ``path`` begins as an SQLite database (the journal store), False otherwise."""
    try:
        with Path(path).open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


#: The first byte of a JSON-lines journal: each of its lines is one record, a JSON object.
LINE_START = b"{"
#: What a journal file is (``journal_kind``): a store, a JSON-lines journal, or zeros where records were.
STORE, JSON_LINES, ZEROS = "store", "JSON lines", "zeros"


def journal_kind(path: Path) -> str:
    """What the non-empty file at ``path`` holds, by its first 64 KiB: the one rule of a journal file's kind, for
    every reader (``existing_journal``, ``iter_records``) and the store's opening
    (``controller.journal.opening``). ``STORE``: it begins as an SQLite database (``SQLITE_HEADER``); ``ZEROS``:
    those bytes are all zeros, what a power cut leaves of a file whose size reached the disk before its data
    (lost records, not a torn append); ``JSON_LINES``: it begins with ``{``, as a record's line does (its lines are
    then read one by one, a bad one named by its number). Raises ``JournalError`` naming the file for any other
    file (``neither a journal store nor a JSON-lines journal``: an image, random bytes, text) and ``OSError`` when
    it cannot be read."""
    with Path(path).open("rb") as handle:
        head = handle.read(1 << 16)
    if head.startswith(SQLITE_HEADER):
        return STORE
    if head and not head.strip(b"\x00"):
        return ZEROS
    if head.startswith(LINE_START):
        return JSON_LINES
    raise JournalError(f"{path_shown(path)}: neither a journal store nor a JSON-lines journal")


def existing_journal(path: Path, hint: str = "") -> Path:
    """``path`` as a ``Path`` when it names a non-empty regular file that is a store or a JSON-lines journal
    (``journal_kind``), the first check of every reader (``journal verify``, ``journal export``, ``recall``,
    ``protect``, ``meters``, ``rating``); else ``JournalError`` in one line: no such file (``hint`` added), not a
    regular file, an empty file (a journal holds its start record at least), a file of zeros (its records were
    lost) or a file that is neither. Raises ``OSError`` for a file that cannot be read."""
    path = Path(path)
    shown = path_shown(path)
    if not path.exists():
        raise JournalError(f"{shown}: no such file{hint}")
    if not path.is_file():
        raise JournalError(f"{shown}: not a regular file")
    if not path.stat().st_size:
        raise JournalError(f"{shown}: the file is empty: it is not a journal")
    if journal_kind(path) == ZEROS:
        raise JournalError(f"{shown}: the file is all zeros: its records were lost (a power cut?), it is not a "
                           f"journal; restore the journal from its copy")
    return path


def torn_tail(path: Path) -> bool:
    """True when the non-empty file at ``path`` does not end with a newline: a JSON-lines journal whose last line
    was cut short (a power cut or a crash while a record was written). Raises ``OSError``."""
    with Path(path).open("rb") as handle:
        if not handle.seek(0, os.SEEK_END):
            return False
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def iter_jsonl(path: Path, *, skip_torn_tail: bool = False, legacy: bool | None = None) -> Iterator[dict[str, Any]]:
    """Stream the records of a JSON-lines journal (``crisscross journal export``, or one written before the
    store), checking each line's spelling (``parse_line``; ``legacy`` None: the first line decides).

    Raises ``NotARecordError`` (a ``JournalError``) naming the file and line for a line that is not a record
    (also one longer than ``MAX_LINE_BYTES``, never held whole), ``JournalError`` for a file that cannot be read, ``SpellingError`` for one that is not in its canonical spelling, and for
    a last line without its newline unless ``skip_torn_tail``, which leaves it out.
    """
    where = path_shown(path)
    try:
        with Path(path).open("rb") as handle:  # lines decoded one by one, so that a bad byte is named by its line
            for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
                if len(raw) > MAX_LINE_BYTES:
                    raise NotARecordError(where, number, f"longer than {MAX_LINE_BYTES:,} bytes: not a journal "
                                                         f"record")
                if not raw.endswith(b"\n"):
                    if skip_torn_tail:
                        return
                    raise JournalError(f"{where}: line {number}: incomplete last line (no newline)")
                if legacy is None:
                    legacy = not raw.startswith(b'{"data":')
                yield parse_line(raw, where, number, legacy=legacy)
    except OSError as exc:
        raise JournalError(f"{where}: cannot read: {exc.strerror or exc}") from None


class UpToDamage:
    """The records of the JSON-lines journal at ``path`` (``iter_jsonl``) before its damage: the one reading of
    where a copy is damaged, which ``controller.journal.tools.verify`` names and the readers that show a journal
    under its warning read up to (``iter_records``'s ``up_to_damage``):

    - a last line cut short (no newline at its end, ``torn_tail``: a power cut or a crash while a record was
      written) is left out (``verify``: ``truncated`` at that line);
    - the first line after line 1 that is not a record (``NotARecordError``: not JSON, a record cut short in the
      middle, bytes that are not UTF-8, a blank line) ends the records, and is kept as ``altered`` (``verify``:
      ``edited`` at that line, the copy altered there).

    Raises ``NotARecordError`` for a first line that is not a record (the file is not a journal at all); other
    errors as ``iter_jsonl``."""

    def __init__(self, path: Path) -> None:
        self._records = iter_jsonl(path, skip_torn_tail=True)
        self.altered: NotARecordError | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        try:
            yield from self._records
        except NotARecordError as exc:
            if exc.line == 1:
                raise
            self.altered = exc


def row_record(row: Sequence[Any], where: str) -> dict[str, Any]:
    """A row of ``records`` (``COLUMNS``, of the store at ``where``) as a record, its data checked for its
    canonical spelling (``SpellingError``, naming the seq); ``mono`` left out when NULL (written before it)."""
    seq, time_, kind, round_no, type_, data, prev, hash_, mono = row
    record = {"seq": seq, "time": time_, "kind": kind, "round": round_no, "type": type_,
              "data": parse_canonical(data, where, seq, root="data"), "prev": prev, "hash": hash_}
    if mono is not None:
        record[MONO] = mono
    return record


def _open_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection to the store at ``path`` (``connect_reader``); raises ``JournalError``."""
    try:
        connection, _ = connect_reader(path)
        connection.execute("SELECT 1 FROM records LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        raise JournalError(f"{path_shown(path)}: cannot read the journal store: {exc}") from None
    return connection


def iter_store(path: Path, *, after: int = 0, rounds: tuple[int, int] | None = None,
               connection: sqlite3.Connection | None = None,
               types: Collection[str] | None = None) -> Iterator[dict[str, Any]]:
    """Stream the records of the store at ``path`` in seq order, from seq ``after + 1``; with ``rounds``
    ``(first, last)`` only the records from the first of round ``first`` to the last of round ``last`` (every
    record in between, so that the chain stays whole); with ``types``, only the records of those types (the
    chain is then not whole: for readers of the rounds, never for a check). Raises ``JournalError`` for a store
    that cannot be read and ``SpellingError`` for a record's data not in its canonical spelling."""
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
            chosen = sorted(types or ())
            query = f"SELECT {columns(db)} FROM records WHERE seq >= ?" + (" AND seq <= ?" if high else "") + \
                (f" AND type IN ({', '.join('?' * len(chosen))})" if chosen else "") + " ORDER BY seq"
            for row in db.execute(query, ((low, high) if high else (low,)) + tuple(chosen)):
                yield row_record(row, path_shown(path))
        except sqlite3.Error as exc:
            raise JournalError(f"{path_shown(path)}: cannot read the journal store: {exc}") from None
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
        raise JournalError(f"{path_shown(path)}: cannot read the journal store: {exc}") from None
    try:
        if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'").fetchone() is None:
            return 0  # the store's tables are not committed yet
        return db.execute(f"SELECT count(*) FROM records WHERE {ROUND_ENDS} AND type != 'RoundOpened'").fetchone()[0]
    except sqlite3.Error as exc:
        raise JournalError(f"{path_shown(path)}: cannot read the journal store: {exc}") from None
    finally:
        db.close()


def last_rounds(path: Path, count: int, *, only: int | None = None,
                types: Collection[str] | None = None) -> list[tuple[int, list[dict[str, Any]]]]:
    """The records of the last ``count`` rounds of the journal at ``path``, ``[(round, records)]`` in round
    order (``LastRounds``, all held at once: for a reader that caps ``count``, as the control interface's
    recall does). With ``only`` just that round, when it is one of the last ``count`` (else ``[]``). Errors as
    ``iter_records``."""
    return list(LastRounds(path, count, types=types, only=only))


class LastRounds:
    """The last ``count`` rounds (the ``count`` highest round numbers) of the journal at ``path``, iterated as
    ``(round, records)`` in round order, one round at a time: only the records of the round being yielded (and,
    in a JSON-lines file, of rounds whose records it interleaves with it) are held, whatever ``count`` and the
    journal's length. Each iteration reads the journal again: a store by its index of rounds in one read
    transaction (one snapshot, while the service may write); a JSON-lines file through to its damage
    (``UpToDamage``), after a first reading, made once, of where each round's last record is (an iteration
    stops there: records appended since are not of the rounds chosen). With ``types`` only the records of those
    types (a round none of whose records is of them is still yielded, with ``[]``); with ``only`` just that
    round, when it is one of them (only its records read from a store). Errors, when iterated, as
    ``iter_records``."""

    def __init__(self, path: Path, count: int, *, types: Collection[str] | None = None,
                 only: int | None = None) -> None:
        self.path, self.count, self.types, self.only = Path(path), count, types, only
        self._ends: dict[int, int] | None = None  # of a JSON-lines file: round -> position of its last record

    def __iter__(self) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        path, types = self.path, self.types
        if path.is_file() and is_store(path):
            yield from _store_last_rounds(path, self.count, types, self.only)
            return
        if self._ends is None:
            ends: dict[int, int] = {}
            for position, record in enumerate(iter_records(path, up_to_damage=True)):
                if isinstance(record.get("round"), int):
                    ends[record["round"]] = position
            self._ends = {n: ends[n] for n in sorted(ends)[-self.count:] if self.only in (None, n)}
        if not self._ends:
            return
        waiting, held, last = iter(self._ends), {}, max(self._ends.values())
        following = next(waiting)
        for position, record in enumerate(iter_records(path, up_to_damage=True)):
            number = record.get("round")
            if number in self._ends:
                records = held.setdefault(number, [])
                if types is None or record.get("type") in types:
                    records.append(record)
            while following is not None and self._ends[following] <= position:
                yield following, held.pop(following, [])
                following = next(waiting, None)
            if position >= last:
                break


def _store_last_rounds(path: Path, count: int, types: Collection[str] | None,
                       only: int | None) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """``LastRounds`` of a store: the round numbers and the records (of ``types``) read side by side by
    the index of rounds, in one read transaction."""
    db = _open_reader(path)
    try:
        db.execute("BEGIN")  # one snapshot for every query below, while the service appends
        low, high = db.execute("SELECT min(round), max(round) FROM (SELECT DISTINCT round FROM records WHERE round "
                               "IS NOT NULL ORDER BY round DESC LIMIT ?)", (count,)).fetchone()
        if low is None or (only is not None and not low <= only <= high):
            return
        if only is not None:
            low = high = only
        numbers = db.cursor().execute("SELECT DISTINCT round FROM records WHERE round BETWEEN ? AND ? ORDER BY round",
                                      (low, high))
        kinds = "" if types is None else f" AND type IN ({', '.join('?' * len(types))})"
        rows = db.cursor().execute(f"SELECT {columns(db)} FROM records WHERE round BETWEEN ? AND ?{kinds} "
                                   f"ORDER BY round, seq", (low, high, *(types or ())))
        row = rows.fetchone()
        for (number,) in numbers:
            records = []
            while row is not None and row[3] == number:
                records.append(row_record(row, path_shown(path)))
                row = rows.fetchone()
            yield number, records
    except sqlite3.Error as exc:
        raise JournalError(f"{path_shown(path)}: cannot read the journal store: {exc}") from None
    finally:
        db.close()


def iter_records(path: Path, *, up_to_damage: bool = False) -> Iterator[dict[str, Any]]:
    """Stream every record of the journal at ``path``, a store or a JSON-lines file (an absent file has none);
    with ``up_to_damage``, those of a JSON-lines file before its damage (``UpToDamage``: a torn last line, a line
    after the first that is not a record), for a reader that shows the journal under the warning ``verify``'s
    finding gives. Errors as ``iter_store`` and ``iter_jsonl`` (or ``UpToDamage``); a path that is not a regular
    file is a ``JournalError``."""
    path = Path(path)
    if not path.exists():
        return iter(())
    if not path.is_file():
        raise JournalError(f"{path_shown(path)}: not a regular file")
    if path.stat().st_size:
        existing_journal(path)  # a store, JSON lines, or refused (``journal_kind``)
    if is_store(path):
        return iter_store(path)
    return iter(UpToDamage(path)) if up_to_damage else iter_jsonl(path)


def records_since(path: Path, since: str, types: Collection[str] | None = None,
                  last_rounds: int | None = None) -> Iterator[dict[str, Any]]:
    """The records of the journal at ``path`` from the first round opened at or after ``since`` (ISO 8601 UTC,
    as the journal writes its times: compared as text) and, with ``last_rounds``, among the last that many
    rounds, to the end (with ``types``, those of these types only): a store finds it by its index of round
    ends; a JSON-lines file is read through to its damage (``UpToDamage``), keeping the records timed at or after
    ``since``. Errors as ``iter_records``."""
    path = Path(path)
    if not path.exists() or not is_store(path):
        return (r for r in iter_records(path, up_to_damage=True)
                if str(r.get("time", "")) >= since and (types is None or r.get("type") in types))
    db = _open_reader(path)
    try:
        (top,) = db.execute(f"SELECT max(round) FROM records INDEXED BY round_ends WHERE {ROUND_ENDS}").fetchone()
        lowest = (top or 0) - last_rounds if last_rounds is not None else 0
        (first,) = db.execute(f"SELECT min(seq) FROM records INDEXED BY round_ends WHERE {ROUND_ENDS} "
                              "AND type = 'RoundOpened' AND time >= ? AND round > ?", (since, lowest)).fetchone()
    except sqlite3.Error as exc:
        raise JournalError(f"{path_shown(path)}: cannot read the journal store: {exc}") from None
    finally:
        db.close()
    return iter(()) if first is None else iter_store(path, after=first - 1, types=types)


def read_records(path: Path, *, up_to_damage: bool = False) -> list[dict[str, Any]]:
    """Every record of the journal at ``path`` as a list (``iter_records``); for tests and small copies: the
    service and the tools stream instead."""
    return list(iter_records(path, up_to_damage=up_to_damage))
