"""The writing journal: ``Journal``, the one writer of a table's store (docs/architecture.md, "The journal store").

The store (its tables: ``controller.journal.schema``) is one SQLite database in WAL mode with
``synchronous=FULL``. One transaction (``Journal.commit``) holds an input and every record and command it
produced, its seal (with a key) and, at a round's close, a checkpoint of the round machine: a crash keeps all
of them or none, and the service sends a command only after the commit that holds it returned. After each
commit the anchor (``controller.journal.key``) names the head. The journal keeps face-down cards, as a dispute
needs them (PA 58 Pa. Code 674a.11(i)); reading it is a supervisor's right (``controller.journal.reader``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import signal
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from controller.journal import key as jkey
from controller.journal.clock import CLOCK_STEPPED, ClockWatch, boot_us, real_clocks, utc_now as _utc_now
from controller.journal.opening import OpeningChecks
from controller.journal.reader import iter_store, row_record
from controller.journal.record import (KINDS, MONO, JournalError, JournalWriteError, UnsafeRecordError, dumps,
                                       dumps_checked, dumps_round, quote, record_hash)
from controller.journal.schema import COLUMNS, add_mono, schema
from controller.settings.text import path_shown
from controller.settings.secret_files import shared_rights

#: A checkpoint is written at each round's close and at least every this many records.
CHECKPOINT_EVERY = 2000
#: Environment variable of the crash test's hook (``Journal``): the number of the commit to cut short.
CUT_COMMIT_VARIABLE = "CRISSCROSS_TEST_CUT_COMMIT"
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


def _round_of(rows: list[tuple[Any, ...]]) -> int | None:
    """The round of the last of ``rows`` (``records`` rows) that has one."""
    return next((row[3] for row in reversed(rows) if isinstance(row[3], int)), None)


class Committed(Sequence[dict[str, Any]]):
    """The records of one commit (``Journal.commit``), in seq order, each as the store gives it back (``KEYS``;
    its data decoded from its canonical text, so owned by the record alone: records go to other threads).
    Built from the rows written when first read, once; ``heads`` tells each one's type and round without
    building any."""

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

    def heads(self) -> list[tuple[str, int | None]]:
        """``(type, round)`` of each record, in seq order, read from the rows written (no record is built)."""
        return [(row[4], row[3]) for row in self._rows]

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
        raise JournalError(f"{path_shown(store)}: the journal store has {names} names (hard links): keep one name "
                           f"(copy it instead of linking): not opened")
    fd = os.open(store, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise JournalError(f"{path_shown(store)}: not a regular file")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise JournalError(f"{path_shown(store)}: in use by another process (a service already running on this "
                           f"journal?): not opened") from None
    except OSError as exc:  # a file that cannot be locked (one of /proc): named, as an open's error is
        os.close(fd)
        raise OSError(exc.errno, exc.strerror, str(store)) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


class Journal(OpeningChecks):
    """An open journal store, written by one thread (the controller thread).

    ``path``: the SQLite store, created (mode 0600: it holds face-down cards; its folder fsynced) if absent or
    empty. ``key``: the journal key (``controller.journal.key``) or None. Opening checks the store in bounded
    time whatever the history (``OpeningChecks``: the last checkpoint's seal, the chain from it, the seals, the
    anchor ``<path>.anchor``, moved at every commit; once keyed, always keyed). ``admit="key"`` (``crisscross
    journal add-key``) introduces a key, ``admit="anchor"`` (``crisscross journal reanchor``, after a
    supervisor's inquiry) accepts an anchor lost or found wrong; either holds until the next ``commit``, whose
    records (the caller's record of the act) it is made with. ``admitted`` is the problem so admitted ("" when
    none).

    Raises ``JournalError`` for any of these, for a file of zeros (lost records, not a torn write), a
    JSON-lines journal (to be imported) or another file, for a store (or an empty file in its place, or its WAL
    or shared-memory file) that group or others may read or write (it holds every card dealt, face-down ones
    included: the journal is its owner's alone, as the journal key and the operators file are;
    docs/commands.md), and ``OSError`` when the file cannot be created. One ``Journal`` per store at a time: it
    holds the store's lock (``lock_store``) until ``close``, and a second is refused (``JournalError``) while the
    first is open. While open it also holds SQLite's write lock between its
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
        #: the store's path as a message shows it (``path_shown``: no control character of it reaches a terminal)
        self.shown = path_shown(self.path)
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
        #: Called in each commit with its records (``seq``, ``kind``, ``type``, ``data``, ``round``) to give the
        #: entries derived from them, written at the end of the same transaction (the service's significant
        #: events: ``controller.service.significance``); None: none.
        self.derive: Callable[[list[dict[str, Any]]], list[tuple[str, str, dict[str, Any], int | None]]] | None = None
        self._commits = 0
        #: Test hook of the crash test (hil/crash.py): the process kills itself (SIGKILL) in its Nth commit,
        #: after the rows were handed to SQLite and before COMMIT, as a power cut in the middle of a write would.
        self._cut_commit = int(os.environ.get(CUT_COMMIT_VARIABLE, "0") or 0) or None
        self.created = self._check_file()
        if self.created:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            anchor = jkey.read_anchor(self.anchor_path)
            if anchor is not None and "problem" in anchor:
                raise JournalError(f"{self.shown}: no journal store, and {anchor['problem']}: not started")
            if anchor is not None and anchor.get("seq"):
                raise JournalError(f"{self.shown}: no journal store, but its anchor "
                                   f"{path_shown(self.anchor_path.name)} names record {anchor['seq']}: the store was "
                                   f"deleted or moved; not started: restore it from its copy")
        self._lock = lock_store(self.path)
        try:
            self._connect(fsync)
        except BaseException:
            self._unlock()
            raise

    @staticmethod
    def _check_private(path: Path, mode: int) -> None:
        """Raise ``JournalError`` when group or others have any right to the file at ``path`` (``mode``: its
        ``st_mode``): the store, its WAL and its shared memory hold every card dealt."""
        if shared := shared_rights(mode):
            shown = path_shown(path)
            raise JournalError(f"{shown}: the journal store: {shared} (mode {mode & 0o777:o}): it holds every card "
                               f"dealt: chmod 600 {shown}: not opened")

    def _refuse_other_database(self) -> None:
        """Raise ``JournalError`` (the connection closed, nothing written) when the SQLite database at ``path``
        holds tables and none of them is the journal's ``records``: another program's database, which a start
        would otherwise fill with the journal's tables beside its own. A database with no table at all is made a
        store. Raises ``sqlite3.Error`` when it cannot be read."""
        tables = [name for (name,) in self._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        if tables and "records" not in tables:
            self._db.close()
            shown = ", ".join(path_shown(name) for name in tables[:5]) + (", ..." if len(tables) > 5 else "")
            raise JournalError(f"{self.shown}: an SQLite database that is not a journal store (its tables: {shown}): "
                               f"not opened, nothing written")

    def _connect(self, fsync: bool) -> None:
        """Create the store if it is new (folder fsynced), open it in WAL mode and check it (``_open``)."""
        if self.created:
            jkey.fsync_folder(self.path.parent)
        info = os.fstat(self._lock)
        self._check_private(self.path, info.st_mode)
        for end in ("-wal", "-shm"):  # the WAL holds the last commits' records: the same cards
            try:
                self._check_private(jkey.beside(self.path, end), os.lstat(jkey.beside(self.path, end)).st_mode)
            except FileNotFoundError:
                pass  # none left beside it: SQLite makes it with the store's mode
        self._identity = _identity(info)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                       timeout=BUSY_SECONDS)
            self._refuse_other_database()
            self._db.execute("PRAGMA journal_mode=WAL").fetchall()
            self._db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'OFF'}")
            self._db.execute("PRAGMA wal_autocheckpoint=0")  # the WAL is checkpointed with ours (``commit``)
            self._db.execute(f"PRAGMA journal_size_limit={WAL_KEPT_BYTES}")  # a reset WAL shrinks back
            self._db.executescript("BEGIN IMMEDIATE;" + schema() + add_mono(self._db) + "COMMIT;")
        except sqlite3.Error as exc:
            raise JournalError(f"{self.shown}: cannot open the journal store: {exc}") from None
        try:
            self._open()
            self._hold()
        except sqlite3.DatabaseError as exc:  # pages read at start are damaged: restored, never repaired here
            self._close_anchor()
            self._db.close()
            raise JournalError(f"{self.shown}: the journal store is damaged ({exc}): not started: restore the "
                               f"journal from its copy") from None
        except BaseException:
            self._close_anchor()
            self._db.close()
            raise

    @property
    def head(self) -> tuple[int, str]:
        """``(seq, hash)`` of the last record committed (``(0, GENESIS)`` when none)."""
        return self._seq, self._prev

    def records(self, *, after: int = 0) -> Iterator[dict[str, Any]]:
        """Stream the records after seq ``after`` (``iter_store``), on this connection."""
        return iter_store(self.path, after=after, connection=self._db)

    def latest(self, condition: str, params: tuple[Any, ...] = (), *, index: str = "") -> dict[str, Any] | None:
        """The last record matching the SQL ``condition`` over the columns of ``records`` (with ``params``), by the
        partial index ``index`` when given; None when none matches."""
        indexed = f" INDEXED BY {index}" if index else ""
        row = self._db.execute(f"SELECT {COLUMNS} FROM records{indexed} WHERE {condition} ORDER BY seq DESC LIMIT 1",
                               params).fetchone()
        return None if row is None else row_record(row, str(self.path))

    def round_records(self, round_no: int | None) -> list[dict[str, Any]]:
        """The records of round ``round_no`` in seq order (by the store's round index)."""
        if round_no is None:
            return []
        rows = self._db.execute(f"SELECT {COLUMNS} FROM records WHERE round = ? ORDER BY seq", (round_no,))
        return [row_record(row, str(self.path)) for row in rows]

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
        Every entry's data and the ``state`` are checked before anything is written to hold only what the
        journal's reader reads back (``unsafe_number``: integers within +-(2**53 - 1), no float; docs/architecture.md,
        "Exact bytes"): written, any other would make the journal fail its check for ever after.

        The records returned (``Committed``) are as the store gives them back (their data decoded from its
        canonical text, lists for tuples), decoded when first read: the service sends the commands of a commit
        before it reads its records. Raises ``ValueError`` for an unknown kind (nothing written),
        ``UnsafeRecordError`` (a ``JournalWriteError``) for an entry or a state that fails that check or that JSON
        cannot hold (nothing written: the message names the record's type, kind and round and the field), and
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
        entries = ([("record", CLOCK_STEPPED, step, None)] if step else []) + list(entries)
        if self.derive is not None and entries:
            entries += self.derive([{"seq": seq + n, "kind": kind, "type": type_, "data": data, "round": round_no}
                                    for n, (kind, type_, data, round_no) in enumerate(entries, 1)])
        for kind, type_, data, round_no in entries:
            seq += 1
            (time_, now), first = first or (clock(), mono()), None
            try:
                text = dumps_checked(data, "data")
            except (TypeError, ValueError) as exc:  # an unsafe number, or a value JSON cannot hold (NaN, an object)
                raise self._refused(f"record {type_} ({kind}, round {round_no})", str(exc)) from None
            # record_hash's canonical JSON, its keys in sorted order, with the data's text encoded once
            body = (f'{{"data":{text},"kind":{quote(kind)},"mono":{now},"prev":{quote(prev)},'
                    f'"round":{dumps_round(round_no)},"seq":{seq},"time":{quote(time_)},"type":{quote(type_)}}}')
            hash_ = hashlib.sha256(body.encode()).hexdigest()
            rows.append((seq, time_, kind, round_no, type_, text, prev, hash_, now))
            prev = hash_
        checkpoint = None
        if state is not None:
            try:
                text = dumps_checked(state, "state")
            except (TypeError, ValueError) as exc:
                raise self._refused(f"the checkpoint after record {seq}", str(exc)) from None
            mac = (jkey.mac(self._key, "checkpoint", seq, prev, text) if self._key
                   else jkey.checkpoint_digest(seq, prev, text))
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

    def _refused(self, what: str, problem: str) -> UnsafeRecordError:
        """The error of a commit refused before anything of it was written: ``what`` (the record or checkpoint)
        holds ``problem`` (``unsafe_number``'s text, or the encoder's)."""
        return UnsafeRecordError(f"{self.shown}: {what} not written: {problem}: the journal's reader refuses it "
                                 f"(integers within +-(2**53 - 1) only); nothing of this commit was written")

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
            raise JournalWriteError(f"{path_shown(self.anchor_path)}: cannot write the journal's anchor: "
                                    f"{exc.strerror or exc}") from None

    def _checkpoint_wal(self) -> None:
        """The WAL into the database at a round's close, off the path of a press, outside the held write
        transaction (``_hold``); a WAL it could not take whole (a reader holds an older snapshot) is left for
        the next one. Raises ``JournalWriteError``."""
        try:
            self._release()
            _, frames, copied = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:
            raise JournalWriteError(f"{self.shown}: cannot write: {exc}") from None
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
                        "copied, the WAL %d bytes): it grows until the reader lets go", self.shown,
                        now - self._held_since, copied, frames, self.wal_bytes)

    def import_records(self, records: Iterable[dict[str, Any]], *, batch: int = 5000) -> int:
        """Append existing ``records`` unchanged (``crisscross journal import``) to an empty store, ``batch``
        per transaction, each checked to extend the chain (seq, prev, hash); with a key the last is sealed.
        Returns the number appended. Raises ``JournalError`` at the first record that does not extend the chain
        (what was committed before it stays: the caller removes the new store) and ``JournalWriteError``."""
        if self._seq:
            raise JournalError(f"{self.shown}: holds records: import fills a new store only")
        rows: list[tuple[Any, ...]] = []
        seq, prev = self._seq, self._prev
        for record in records:
            if record["seq"] != seq + 1 or record["prev"] != prev or record["hash"] != record_hash(record):
                raise JournalError(f"record {record['seq']}: does not extend the chain after record {seq}")
            seq, prev = record["seq"], record["hash"]
            rows.append((seq, record["time"], record["kind"], record["round"], record["type"],
                         dumps(record["data"]), record["prev"], prev, record.get(MONO)))
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
                db.executemany(f"INSERT INTO records ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
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
            raise JournalWriteError(f"{self.shown}: cannot write: {exc}") from None
        self._introducing = False
        self._seq, self._prev = seq, prev
        self._hold()

    def _check_identity(self) -> None:
        """Raise ``JournalWriteError`` when the store open here lost its name: its file has no name left (the
        journal deleted while the service ran) or ``path`` names another file now (moved or replaced). Records
        written on would be lost with the file, or kept where nobody reads them."""
        if os.fstat(self._lock).st_nlink == 0:
            raise JournalWriteError(f"{self.shown}: the journal store was deleted while open (its file has no name "
                                    f"any more): nothing more is written; what it held is lost unless restored "
                                    f"from its copy")
        try:
            now = _identity(os.stat(self.path))
        except FileNotFoundError:
            now = None
        if now != self._identity:
            raise JournalWriteError(f"{self.shown}: the journal store was moved or replaced while open (the name "
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
                          "nothing is applied or sent meanwhile; only the service writes the journal", self.shown,
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
            log.warning("%s: the journal's write lock is held by another connection (%s)", self.shown, exc)
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
