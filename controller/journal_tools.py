"""Journal tools: verify (with or without the key), export to JSON lines, import a JSON-lines journal.

All of them stream: memory does not grow with the journal. ``verify`` reads only; ``export`` writes records in
their canonical spelling (``controller.journal.canonical_line``); ``import_jsonl`` refuses a journal that does
not verify and fills a new store.
"""

from __future__ import annotations

import itertools
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from controller import journal_key as jkey
from controller.journal import (
    GENESIS,
    Journal,
    JournalError,
    SpellingError,
    Tamper,
    canonical_line,
    existing_journal,
    find_first_tampering,
    is_store,
    iter_jsonl,
    iter_store,
    key_from,
    lock_path,
    parse_canonical,
    refuse_lost_records,
)


@dataclass
class Verdict:
    """What ``verify`` found: ``records`` counted; ``tamper`` the first tampering (None: none seen);
    ``unchecked`` what could not be checked (without the key, or in a JSON-lines copy). Intact means no
    tamper and nothing unchecked."""

    records: int = 0
    tamper: Tamper | None = None
    unchecked: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        """True only when everything was checked and nothing was found."""
        return self.tamper is None and not self.unchecked


def verify(path: Path, key: bytes | None = None) -> Verdict:
    """Verify the journal at ``path`` (a store or a JSON-lines copy) without changing it, streaming.

    Always: every record's canonical spelling, the sequence numbers and the hash chain. For a store, also: each
    checkpoint's head is the record it names; the anchor (``<path>.anchor``): a journal shorter than its anchor
    is ``truncated``; records after the last seal are ``appended`` (every commit of the service is sealed).
    With ``key``: every seal and checkpoint and the anchor carry the key's HMAC (else ``forged``: re-chained or
    written without the key). Without the key, or for a JSON-lines copy, what cannot be seen is listed in
    ``unchecked`` rather than called intact. Raises ``JournalError`` for a file that cannot be read as a
    journal.
    """
    path = existing_journal(path)
    verdict = Verdict()
    store = is_store(path)
    refuse_lost_records(path)
    records = iter_store(path) if store else iter_jsonl(path)
    try:
        first = next(records, None)
        start = (first["seq"], first["prev"]) if first is not None and not store and first["seq"] != 1 else (1, GENESIS)
        if start[0] != 1:
            verdict.unchecked.append(f"a part of a journal from seq {start[0]}: its link to the records before "
                                     f"cannot be checked here")
        verdict.records, head, verdict.tamper = find_first_tampering(
            itertools.chain([first] if first is not None else [], records), seq=start[0], prev=start[1])
    except SpellingError as exc:
        verdict.tamper = Tamper("respelled", exc.line, exc.line, exc.problem)
        return verdict
    if verdict.tamper is not None:
        return verdict
    if not store:
        verdict.unchecked.append("a JSON-lines copy carries no seal: records cut from its end, appended, or an "
                                 "edit re-chained to its end cannot be seen (verify the store with --key)")
        return verdict
    _verify_store(path, key, verdict, head)
    return verdict


def _verify_store(path: Path, key: bytes | None, verdict: Verdict, head: str) -> None:
    db = sqlite3.connect(f"file:{path.absolute()}?mode=ro", uri=True)
    try:
        last = verdict.records
        hash_at = _hash_lookup(db)
        key_row = db.execute("SELECT value FROM meta WHERE name = 'key_id'").fetchone()
        if key is not None and key_row is not None and key_row[0] != jkey.key_id(key):
            raise JournalError(f"{path}: sealed with another key than the one given")
        keyed = key is not None and key_row is not None
        sealed_to = 0
        for seq, seal_head, mac in db.execute("SELECT seq, head, mac FROM seals ORDER BY seq"):
            if hash_at(seq) != seal_head:
                verdict.tamper = Tamper("forged", seq, seq, "the record is not the one its seal vouches for "
                                                            "(rewritten and re-chained)")
                return
            if keyed and mac != jkey.mac(key, "seal", seq, seal_head):
                verdict.tamper = Tamper("forged", seq, seq, "its seal was not made with the journal key")
                return
            sealed_to = seq
        from_row = db.execute("SELECT value FROM meta WHERE name = 'key_from'").fetchone()
        before_key = key_from(from_row[0] if from_row else None, key) if keyed else -1
        for seq, ckpt_head, state, mac in db.execute("SELECT seq, head, state, mac FROM checkpoints ORDER BY seq"):
            parse_canonical(state, f"{path}: checkpoint", seq)
            if hash_at(seq) != ckpt_head:
                verdict.tamper = Tamper("forged", seq, seq, "a checkpoint names another record (rewritten)")
                return
            if keyed and not (mac is None and seq <= before_key) and mac != jkey.mac(key, "checkpoint", seq,
                                                                                      ckpt_head, state):
                verdict.tamper = Tamper("forged", seq, seq, "its checkpoint was not sealed with the journal key")
                return
        anchor = jkey.read_anchor(jkey.anchor_path(path))
        if anchor is None:
            if last:
                verdict.unchecked.append(f"no anchor ({jkey.anchor_path(path).name}): records cut from the end "
                                         f"cannot be seen")
        else:
            problem = jkey.check_anchor(anchor, hash_at, last, key if keyed else None)
            if problem:
                kind = "truncated" if problem.startswith("truncated: ") else "forged"
                verdict.tamper = Tamper(kind, last, last, problem.removeprefix("truncated: "))
                return
        if key_row is not None and sealed_to < last:
            verdict.tamper = Tamper("appended", sealed_to + 1, sealed_to + 1,
                                    f"record(s) {sealed_to + 1}-{last} carry no seal: written without the journal key")
            return
        if key_row is None:
            unsealed = ("the journal has no key" if key is None
                        else "the journal was never sealed with a key (the one given was not used)")
            verdict.unchecked.append(f"{unsealed}: an edit re-chained to its end or records appended after its "
                                     f"anchor cannot be seen")
        elif not keyed:
            verdict.unchecked.append("without the key (--key) the seals cannot be checked: an edit re-chained to "
                                     "the end with forged seals cannot be seen")
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot read the journal store: {exc}") from None
    finally:
        db.close()


def _hash_lookup(db: sqlite3.Connection):
    def hash_at(seq: int) -> str | None:
        row = db.execute("SELECT hash FROM records WHERE seq = ?", (seq,)).fetchone()
        return row[0] if row else None
    return hash_at


def export(path: Path, out: TextIO, *, rounds: tuple[int, int] | None = None) -> int:
    """Write the records of the store at ``path`` to ``out`` as JSON lines in their canonical spelling
    (``rounds``: from the first record of round A to the last of round B, every record in between); return
    the number written. Raises ``JournalError`` for a file that is not a store."""
    path = existing_journal(path)
    if not is_store(path):
        raise JournalError(f"{path}: not a journal store")
    count = 0
    for record in iter_store(path, rounds=rounds):
        out.write(canonical_line(record) + "\n")
        count += 1
    if rounds is not None and count == 0:
        raise JournalError(f"{path}: no record of rounds {rounds[0]}-{rounds[1]} (the journal's rounds: "
                           f"{_round_span(path)})")
    return count


def _round_span(path: Path) -> str:
    """The first and last round numbers recorded in the store at ``path``, as text ("none" when none)."""
    db = sqlite3.connect(f"file:{path.absolute()}?mode=ro", uri=True)
    try:
        low, high = db.execute("SELECT MIN(round), MAX(round) FROM records WHERE round IS NOT NULL").fetchone()
    finally:
        db.close()
    return "none" if low is None else f"{low}-{high}"


def import_jsonl(source: Path, destination: Path, *, key: bytes | None = None, batch: int = 5000) -> int:
    """Copy the JSON-lines journal ``source`` (an export, or a journal written before the store) into a new
    store at ``destination``, records unchanged (same seq, time, hash); return the number imported.

    Refuses (``JournalError``, nothing left at ``destination``) a source that does not verify (chain,
    spelling: ``controller.journal_tools.verify``) or a ``destination`` that already holds records. With
    ``key`` the imported head is sealed.
    """
    source, destination = Path(source), Path(destination)
    if destination.exists() and destination.stat().st_size:
        raise JournalError(f"{destination}: exists: import fills a new store only")
    verdict = verify(source)
    if verdict.tamper is not None:
        raise JournalError(f"{source}: does not verify: {verdict.tamper}; not imported")
    journal = Journal(destination, key=key)
    try:
        count = journal.import_records(iter_jsonl(source), batch=batch)
        jkey.write_anchor(journal.anchor_path, *journal.head, key)
    except BaseException:
        journal.close()
        for leftover in (destination, jkey.anchor_path(destination), lock_path(destination),
                         *(jkey.beside(destination, end) for end in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
        raise
    journal.close()
    return count
