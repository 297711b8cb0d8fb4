"""Opening a journal store for writing: what it must show before a record is added (docs/architecture.md,
"The journal key and the anchor"), and what it holds at opening.

Checked in bounded time whatever the history: the file itself (a store, not zeros, not JSON lines), the key it
is sealed with, the last checkpoint's seal and record, the chain from it to the end, that every record after
the key's introduction is sealed (a record appended without the key is refused), and the anchor (a store
shorter than its anchor, or whose record at the anchor's seq has another hash, is refused). Once keyed, always
keyed: a keyed store is refused without its key or with another, or without its anchor; a store or anchor that
says it is keyed while the other does not (the key stripped) is refused; a key given for a store sealed
without one is refused unless ``admit="key"`` introduces it; an anchor found wrong is refused unless
``admit="anchor"`` accepts it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from controller.journal import key as jkey
from controller.journal.chain import find_first_tampering
from controller.journal.reader import STORE, ZEROS, iter_store, journal_kind, row_record
from controller.journal.record import GENESIS, JournalError, JournalWriteError, parse_canonical
from controller.journal.schema import COLUMNS, ROUND_ENDS
from controller.settings.text import path_shown


@dataclass(frozen=True)
class Checkpoint:
    """The round machine's ``state`` (``Round.checkpoint()``) after record ``seq`` whose hash is ``head``;
    ``mac`` the HMAC-SHA256 over them with the journal key (None when the journal has no key)."""

    seq: int
    round: int | None
    head: str
    state: dict[str, Any]
    mac: str | None


def freed_tail(handle: BinaryIO, size: int) -> bool:
    """True when the pages of zeros that end the SQLite store open on ``handle`` (``size`` bytes) are all on its
    freelist, as its header and freelist trunk pages list them (sqlite.org/fileformat2.html, "The database
    header", "The freelist"): pages SQLite freed, and zeroed (``secure_delete``), when rows were deleted. A
    power cut that loses records leaves zeros where pages still in use should be. Reads at most the tail's pages
    and the freelist's trunk pages, each once."""
    handle.seek(0)
    header = handle.read(100)
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if len(header) < 100 or page_size < 512 or size % page_size:
        return False
    trunk, count, pages = int.from_bytes(header[32:36], "big"), int.from_bytes(header[36:40], "big"), size // page_size
    zeros: set[int] = set()
    for number in range(pages, 1, -1):  # the tail of zero pages
        handle.seek((number - 1) * page_size)
        if handle.read(page_size).strip(b"\x00"):
            break
        if len(zeros) == count:  # more pages of zeros than the store has free ones
            return False
        zeros.add(number)
    free: set[int] = set()
    while trunk and trunk <= pages and trunk not in free and len(free) < count:
        handle.seek((trunk - 1) * page_size)
        page = handle.read(page_size)
        leaves = min(int.from_bytes(page[4:8], "big"), page_size // 4 - 2)
        free.add(trunk)
        free.update(int.from_bytes(page[8 + 4 * i:12 + 4 * i], "big") for i in range(leaves))
        trunk = int.from_bytes(page[:4], "big")
    return bool(zeros) and zeros <= free


class OpeningChecks:
    """The opening checks of ``controller.journal.store.Journal`` (a mixin over its connection ``_db``, its
    ``path``, ``anchor_path``, key and ``admit``); ``_open`` sets the head (``_seq``, ``_prev``), ``checkpoint``,
    ``last_round_no``, ``open_rounds``, ``since_checkpoint``, ``last_start``, ``admitted`` and
    ``checkpoint_unsealed`` (a keyed journal whose last checkpoint was written before its key: the start checks
    it against the records, ``controller.journal.recovery.recover``). Raises
    ``JournalError`` for a store refused, ``JournalWriteError`` when the key or the anchor cannot be written."""

    _db: sqlite3.Connection
    path: Path
    shown: str
    anchor_path: Path
    _key: bytes | None
    _fsync: bool
    _admit: str | None
    _anchor: jkey.AnchorWriter | None
    _introducing: bool
    _seq: int
    _prev: str
    admitted: str

    def _check_file(self) -> bool:
        """True when there is no store yet at ``path`` (no file, or an empty one); False for a store. Raises
        ``JournalError`` for a dangling link, a file of zeros or ending in zeros, JSON lines or another file (the
        kind by ``controller.journal.reader.journal_kind``).
        A store that ends in pages of zeros which are all on its freelist (``freed_tail``) is not refused here:
        its records were deleted, not lost, and the checks of ``_open`` (the anchor, the last checkpoint and
        seal) name what was cut, as they do for a cut that left no zeros."""
        shown = self.shown
        if not self.path.exists():
            if self.path.is_symlink():
                raise JournalError(f"{shown}: a dangling symbolic link")
            return True
        if not self.path.is_file():
            raise JournalError(f"{shown}: not a regular file")
        size = self.path.stat().st_size
        if size == 0:
            return True
        kind = journal_kind(self.path)  # a file that is neither a store nor JSON lines is refused there
        if kind == STORE:
            with self.path.open("rb") as handle:
                handle.seek(max(size - 4096, 0))
                if size >= 8192 and not handle.read().strip(b"\x00") and not freed_tail(handle, size):
                    raise JournalError(f"{shown}: ends with {min(size, 4096)} or more zero bytes: records were "
                                       f"lost (a power cut?); not started: restore the journal from its copy")
            return False
        if kind == ZEROS:
            raise JournalError(f"{shown}: the file is all zeros: its records were lost (a power cut?); "
                               f"not started: restore the journal from its copy")
        raise JournalError(f"{shown}: a JSON-lines journal, not a journal store: migrate it with "
                           f"crisscross journal import {shown} --journal NEW.db")

    def _open(self) -> None:
        """Check the store open on ``_db`` (module docstring) and read what it holds at opening. Raises
        ``JournalError``."""
        db, where = self._db, self.shown
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
        # a keyed journal's last checkpoint written before its key: bound by a digest anyone can make, or nothing
        self.checkpoint_unsealed = row is not None and key_id is not None and (
            row[4] is None or row[4].startswith(jkey.DIGEST))
        if row is not None:
            self.checkpoint = Checkpoint(row[0], row[1], row[2], parse_canonical(row[3], where, row[0]), row[4])
            keyed = self._key if key_id is not None else None
            digested_before = row[4] is None and db.execute(
                f"SELECT 1 FROM checkpoints WHERE seq < ? AND mac LIKE '{jkey.DIGEST}%' LIMIT 1", (row[0],)
            ).fetchone() is not None
            problem = jkey.checkpoint_problem(keyed, jkey.key_from(self.meta("key_from"), keyed), row[0], row[2],
                                              row[3], row[4], digested_before, key_id is not None)
            if problem is not None:
                raise JournalError(f"{where}: checkpoint at record {row[0]}: {problem[0]}: {problem[1]}: not started")
        base, prev = (self.checkpoint.seq, self.checkpoint.head) if self.checkpoint else (0, GENESIS)
        if base:
            found = db.execute("SELECT hash FROM records WHERE seq = ?", (base,)).fetchone()
            if found is None and base > self._seq:  # records cut from the end, their checkpoint left behind
                self._check_anchor(anchor, key_id is not None)  # the anchor names the cut when it can
                raise JournalError(f"{where}: truncated: the journal ends at record {self._seq}, its last "
                                   f"checkpoint was written at record {base} (records cut from the end): not started")
            if found is None or found[0] != prev:
                raise JournalError(f"{where}: record {base} does not match its checkpoint (altered): not started")
        count, _, tamper = find_first_tampering(iter_store(self.path, after=base, connection=db),
                                                seq=base + 1, prev=prev, placed=True)
        if tamper is not None:
            raise JournalError(f"{where}: {tamper}: not started")
        sealed = None
        if key_id is not None and self._seq > jkey.key_from(self.meta("key_from"), self._key):  # records to vouch for
            sealed = db.execute("SELECT seq, head, mac FROM seals ORDER BY seq DESC LIMIT 1").fetchone()
            if sealed is not None and sealed[0] > self._seq:  # records cut from the end, their seals left behind
                self._check_anchor(anchor, True)  # the anchor names the cut when it can
                raise JournalError(f"{where}: truncated: the journal ends at record {self._seq}, its last seal "
                                   f"vouches for record {sealed[0]} (records cut from the end): not started")
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
            f"SELECT round FROM records WHERE {ROUND_ENDS} GROUP BY round "
            "HAVING max(type = 'RoundOpened') AND NOT max(type != 'RoundOpened') ORDER BY round")]
        self.since_checkpoint = self._seq - base
        # by the partial index of starts, however long ago the last start was (reading back through the records
        # would grow with a service's time up)
        start = db.execute(f"SELECT {COLUMNS} FROM records INDEXED BY starts WHERE type = 'ServiceStarted' "
                           "ORDER BY seq DESC LIMIT 1").fetchone()
        self.last_start = None if start is None else row_record(start, where)
        if not self._introducing and self._admit != "anchor":
            self._anchor_at_head()

    def _check_anchor(self, anchor: dict[str, Any] | None, keyed: bool) -> None:
        """Refuse (``JournalError``) a store that does not match its ``anchor`` (``check_anchor``; with the key
        when ``keyed``), or a keyed store without one, unless ``admit="anchor"``: then the problem is kept in
        ``admitted`` for the caller's record."""
        where = self.shown
        if anchor is None:
            # without a key nothing is promised (verify says what it cannot see): a new anchor is written
            problem = (f"anchor missing ({path_shown(self.anchor_path.name)}): a journal sealed with a key is not "
                       f"started without its anchor (it would hide records cut from its end)") \
                if keyed and self._seq else None
        else:
            problem = jkey.check_anchor(anchor, self._hash_at, self._seq, self._key if keyed else None)
        if problem and self._admit == "anchor":
            self.admitted = problem
        elif problem:
            raise JournalError(f"{where}: {problem}: not started; after an inquiry a supervisor may accept the "
                               f"store as it is: crisscross journal reanchor --journal {where} --by NAME "
                               f"--reason TEXT (journaled)")
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
            raise JournalWriteError(f"{self.shown}: cannot write: {exc}") from None

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
            raise JournalWriteError(f"{path_shown(self.anchor_path)}: cannot write the journal's anchor: "
                                    f"{exc.strerror or exc}") from None

    def _close_anchor(self) -> None:
        if self._anchor is not None:
            self._anchor.close()
            self._anchor = None

    def _hash_at(self, seq: int) -> str | None:
        row = self._db.execute("SELECT hash FROM records WHERE seq = ?", (seq,)).fetchone()
        return row[0] if row else None

    def meta(self, name: str) -> str | None:
        """The store's ``meta`` value ``name`` (``key_id``: the id of the key that seals it; ``key_from``: the seq from which it seals), or None."""
        row = self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None
