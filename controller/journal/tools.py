"""Journal tools: verify (with or without the key), export to JSON lines, import a JSON-lines journal.

All of them stream: memory does not grow with the journal. ``verify`` reads only; ``export`` writes records in
their canonical spelling (``controller.journal.record.canonical_line``); ``import_jsonl`` refuses a journal that does
not verify and fills a new store.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from controller.journal import key as jkey
from controller.journal.chain import Tamper, find_first_tampering
from controller.journal.clock import MonoCheck
from controller.journal.reader import (
    existing_journal,
    is_store,
    iter_jsonl,
    iter_store,
    connect_reader,
    _open_reader,
    store_key_id,
    torn_tail,
    wal_pending,
    UpToDamage,
)
from controller.journal.record import (
    GENESIS,
    JournalError,
    NotARecordError,
    SpellingError,
    canonical_line,
    parse_canonical,
)
from controller.journal.meters_audit import meters_differ
from controller.journal.store import Journal
from controller.round.inputs import MAX_REASON, USER_NAME, reason_refused
from controller.settings.text import path_shown


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

    Always: every record's canonical spelling, the sequence numbers, the hash chain, and that ``mono`` never
    decreases within one run (``MonoCheck``: else ``forged``, re-chained without the key). For a store, also: each
    checkpoint's head is the record it names, and its digest (a journal kept without a key) its state's
    (``controller.journal.key.checkpoint_problem``, else ``edited``); the anchor (``<path>.anchor``, read before the records, so that a
    commit made meanwhile is never taken for a cut): a journal shorter than its anchor is ``truncated`` (or,
    when the store's WAL holds frames, ``not yet replayed``: unchecked, as a store whose service was killed may
    be read so); records after the last seal are ``appended`` (every commit of the service is sealed); a store
    sealed with a key without its anchor is ``unanchored``, and one whose anchor says it is keyed while it
    carries no key is ``stripped``. With ``key``: every seal and checkpoint and the anchor carry the key's HMAC
    (else ``forged``: re-chained or written without the key). Without the key, or for a JSON-lines copy, what
    cannot be seen is listed in ``unchecked`` rather than called intact; so is a WAL not read (a store on
    read-only media, ``connect_reader``). A JSON-lines copy whose last line has no newline (a record cut short)
    is ``truncated`` at that line, named without a seq, once the records before it check; one whose first line
    is a record and a later line is not (``NotARecordError``: not JSON, a record cut short in the middle, a
    blank line) is ``edited`` at that line, named without a seq, once the records before it check (both read as
    ``controller.journal.reader.UpToDamage`` reads a copy's damage, as the readers showing it do). Raises
    ``JournalError`` for a file that cannot be read as a journal (``existing_journal``: neither a store nor JSON
    lines, all zeros, empty): one whose first line is not a record, or whose only line is cut short.
    """
    path = existing_journal(path)
    verdict = Verdict()
    store = is_store(path)
    anchor = jkey.read_anchor(jkey.anchor_path(path)) if store else None
    torn = not store and torn_tail(path)
    mono = MonoCheck()
    lines = None if store else UpToDamage(path)
    records = mono.watch(iter_store(path) if lines is None else lines)
    try:
        first = next(records, None)
        start = (first["seq"], first["prev"]) if first is not None and not store and first["seq"] != 1 else (1, GENESIS)
        if start[0] != 1:
            verdict.unchecked.append(f"a part of a journal from seq {start[0]}: its link to the records before "
                                     f"cannot be checked here")
        verdict.records, head, verdict.tamper = find_first_tampering(
            itertools.chain([first] if first is not None else [], records), seq=start[0], prev=start[1],
            placed=store)
    except SpellingError as exc:
        verdict.tamper = Tamper("respelled", exc.line, exc.line, exc.problem)
        return verdict
    if verdict.tamper is None and mono.problem is not None:
        verdict.tamper = Tamper("forged", mono.problem[0], mono.problem[0], mono.problem[1])
    if verdict.tamper is None and lines is not None and lines.altered is not None:
        verdict.tamper = _altered(lines.altered, verdict.records)
    if verdict.tamper is None and torn:
        verdict.tamper = _torn(path, verdict.records, start[0])
    if verdict.tamper is not None:
        return verdict
    if not store:
        verdict.unchecked.append("a JSON-lines copy carries no seal: records cut from its end, appended, or an "
                                 "edit re-chained to its end cannot be seen (verify the store with --key)")
        return verdict
    _verify_store(path, key, verdict, anchor)
    return verdict


def _altered(line: NotARecordError, whole: int) -> Tamper:
    """A JSON-lines journal of ``whole`` whole records whose next line (``line``) is not a record: the journal
    was altered at that line, as a record edited in a store is (``edited``), the records before it checked."""
    what = line.problem.removesuffix("not a journal record").removesuffix(": ")
    return Tamper("edited", line.line, None,
                  f"the line is not a journal record{f' ({what})' if what else ''}: the copy was altered there; "
                  f"the {whole} records before it are whole, their chain unbroken")


def _torn(path: Path, whole: int, first: int) -> Tamper:
    """A JSON-lines journal of ``whole`` whole records from seq ``first`` whose next line was cut short (no newline
    at its end): truncated at that line, as a store cut short is (``_verify_store``: "the journal ends at record
    N"), the records before it checked as whole. Without a whole record the file is not a journal
    (``JournalError``)."""
    if not whole:
        raise JournalError(f"{path_shown(path)}: line 1: incomplete last line (no newline) and no whole record before "
                           f"it: not a journal")
    return Tamper("truncated", whole + 1, None,
                  f"the line is cut short (no newline at its end, as a power cut or a crash leaves a record being "
                  f"written): the journal ends at record {first + whole - 1}; the {whole} records before it are "
                  f"whole, their chain unbroken")


def _verify_store(path: Path, key: bytes | None, verdict: Verdict, anchor: dict | None) -> None:
    try:
        db, immutable = connect_reader(path)
    except sqlite3.Error as exc:
        raise JournalError(f"{path_shown(path)}: cannot read the journal store: {exc}") from None
    pending = wal_pending(path)
    if immutable and pending:
        verdict.unchecked.append(f"not yet replayed: the store is on read-only media and its WAL "
                                 f"({jkey.beside(path, '-wal').name}, {pending} bytes) cannot be read with it: "
                                 f"the commits it holds are not checked; copy the store with its WAL to writable "
                                 f"media and verify the copy")
    try:
        last = verdict.records
        # one snapshot for the seals, the checkpoints and the records' end: a service commits a record with its
        # seal and checkpoint, so one past this snapshot's last record is a cut; one past the records streamed
        # before (``last``) only is a commit made meanwhile, after the part this check covers
        db.execute("BEGIN")
        end_now = db.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()[0]
        past_end = db.execute("SELECT coalesce(max(seq), 0) FROM (SELECT seq FROM seals UNION ALL "
                              "SELECT seq FROM checkpoints) WHERE seq > ?", (end_now,)).fetchone()[0]
        hash_at = _hash_lookup(db)
        key_row = db.execute("SELECT value FROM meta WHERE name = 'key_id'").fetchone()
        if key is not None and key_row is not None and key_row[0] != jkey.key_id(key):
            raise JournalError(f"{path_shown(path)}: sealed with another key than the one given")
        keyed = key is not None and key_row is not None
        sealed_to = 0
        for seq, seal_head, mac in db.execute("SELECT seq, head, mac FROM seals ORDER BY seq"):
            if seq > last:
                continue
            if hash_at(seq) != seal_head:
                verdict.tamper = Tamper("forged", seq, seq, "the record is not the one its seal vouches for "
                                                            "(rewritten and re-chained)")
                return
            if keyed and mac != jkey.mac(key, "seal", seq, seal_head):
                verdict.tamper = Tamper("forged", seq, seq, "its seal was not made with the journal key")
                return
            sealed_to = seq
        from_row = db.execute("SELECT value FROM meta WHERE name = 'key_from'").fetchone()
        before_key = jkey.key_from(from_row[0] if from_row else None, key) if keyed else -1
        digested = False
        for seq, ckpt_head, state, mac in db.execute("SELECT seq, head, state, mac FROM checkpoints ORDER BY seq"):
            parse_canonical(state, f"{path_shown(path)}: checkpoint", seq, root="state")
            if seq > last:
                continue
            if hash_at(seq) != ckpt_head:
                verdict.tamper = Tamper("forged", seq, seq, "a checkpoint names another record (rewritten)")
                return
            problem = jkey.checkpoint_problem(key if keyed else None, before_key, seq, ckpt_head, state, mac,
                                              digested, key_row is not None)
            if problem is not None:
                verdict.tamper = Tamper(problem[0], seq, seq, problem[1])
                return
            digested = digested or (mac is not None and mac.startswith(jkey.DIGEST))
        if anchor is None:
            if key_row is not None and last:
                anchor_name = path_shown(jkey.anchor_path(path).name)
                verdict.tamper = Tamper("unanchored", last, last, f"anchor missing ({anchor_name}): the journal is "
                                        f"sealed with a key, and records cut from its end would not show")
                return
            if last:
                verdict.unchecked.append(f"no anchor ({path_shown(jkey.anchor_path(path).name)}): records cut "
                                         f"from the end cannot be seen")
        elif key_row is None and "problem" not in anchor and jkey.anchor_keyed(anchor):
            verdict.tamper = Tamper("stripped", last, last, "the anchor says the journal is sealed with a key and "
                                                            "the store carries none (its key was stripped)")
            return
        elif key_row is not None and "problem" not in anchor and not jkey.anchor_keyed(anchor):
            verdict.tamper = Tamper("forged", last, last, "the anchor says the journal is not sealed with a key and "
                                                          "the store is (the anchor rewritten without the key)")
            return
        else:
            problem = jkey.check_anchor(anchor, hash_at, last, key if keyed else None)
            if problem and problem.startswith("truncated: ") and pending:
                verdict.unchecked.append(f"not yet replayed: the store ends at record {last}, its anchor names "
                                         f"record {anchor['seq']}, and its WAL ({pending} bytes) holds commits not "
                                         f"replayed into it (its service was stopped by a kill or a power cut, or "
                                         f"it is read on read-only media): start the service on it (which replays "
                                         f"them) and verify again")
            elif problem:
                kind = "truncated" if problem.startswith("truncated: ") else "forged"
                verdict.tamper = Tamper(kind, last, last, problem.removeprefix("truncated: "))
                return
        if past_end:
            verdict.tamper = Tamper("truncated", last, last, f"the journal ends at record {end_now}, a seal or "
                                                            f"checkpoint vouches for record {past_end} (records cut "
                                                            f"from the end)")
            return
        if key_row is not None and sealed_to < last:
            verdict.tamper = Tamper("appended", sealed_to + 1, sealed_to + 1,
                                    f"record(s) {sealed_to + 1}-{last} carry no seal: written without the journal key")
            return
        if key_row is None:
            unsealed = ("the journal has no key" if key is None
                        else "the journal was never sealed with a key (the one given was not used)")
            verdict.unchecked.append(f"{unsealed}: an edit re-chained to its end (a checkpoint's digest made "
                                     f"again with it) or records appended after its anchor cannot be seen")
        elif not keyed:
            verdict.unchecked.append("without the key (--key) the seals cannot be checked: an edit re-chained to "
                                     "the end with forged seals cannot be seen")
    except sqlite3.Error as exc:
        raise JournalError(f"{path_shown(path)}: cannot read the journal store: {exc}") from None
    finally:
        db.close()


def _hash_lookup(db: sqlite3.Connection):
    def hash_at(seq: int) -> str | None:
        row = db.execute("SELECT hash FROM records WHERE seq = ?", (seq,)).fetchone()
        return row[0] if row else None
    return hash_at


#: The records that end a round (docs/round-states.md): a round without one is still open.
ROUND_END_TYPES = frozenset({"RoundClosed", "RoundVoided"})


@dataclass(frozen=True)
class Exported:
    """What ``export`` wrote: ``records``, how many; ``not_ended``, the round numbers of the copy without their
    ``RoundClosed`` or ``RoundVoided`` (a round still in play when the store was read, or left open), in order:
    the copy holds each of them as far as it went."""

    records: int
    not_ended: tuple[int, ...]


def export(path: Path, out: TextIO, *, rounds: tuple[int, int] | None = None) -> Exported:
    """Write the records of the store at ``path`` to ``out`` as JSON lines in their canonical spelling
    (``rounds``: from the first record of round A to the last of round B, every record in between); return
    what was written (``Exported``: the records counted and the rounds of the copy that are not ended, from the
    records written, so that a round closed while they were read is one the copy holds closed). Raises ``JournalError`` for a file that is not a store, and, before anything is written,
    for ``rounds`` of which the journal does not hold every round (docs/commands.md, "crisscross journal": a
    copy handed over as evidence of rounds A-B holds all of them, or none is written), the rounds missing (also
    those of a gap in its numbering) and the journal's rounds named."""
    path = existing_journal(path)
    if not is_store(path):
        raise JournalError(f"{path_shown(path)}: not a journal store")
    db = _open_reader(path)  # one snapshot: the rounds checked are the rounds written
    try:
        if rounds is not None:
            missing = _rounds_missing(db, path, rounds)
            if missing:
                held = _rounds_text(_rounds_held(db, path))
                raise JournalError(f"{path_shown(path)}: no record of rounds {missing} (the journal's rounds: "
                                   f"{held}): nothing exported")
        count, seen, ended = 0, set(), set()
        for record in iter_store(path, rounds=rounds, connection=db):
            out.write(canonical_line(record) + "\n")
            count += 1
            if record["round"] is not None:
                seen.add(record["round"])
                if record["type"] in ROUND_END_TYPES:
                    ended.add(record["round"])
    finally:
        db.close()
    return Exported(count, tuple(sorted(seen - ended)))


def not_ended_text(path: Path, numbers: tuple[int, ...]) -> str:
    """The line that says the rounds ``numbers`` of a copy of the journal at ``path`` are not ended (``Exported``),
    their runs named as ``_rounds_text`` names them; "" when there are none."""
    if not numbers:
        return ""
    which = f"round {numbers[0]} is" if len(numbers) == 1 else f"rounds {_rounds_text(_runs(numbers))} are"
    return (f"{path_shown(path)}: {which} not ended (still open: no RoundClosed or RoundVoided in the journal yet): "
            f"the copy holds {'it' if len(numbers) == 1 else 'them'} as far as "
            f"{'it' if len(numbers) == 1 else 'they'} went")


def _rounds_held(db: sqlite3.Connection, path: Path, low: int | None = None,
                 high: int | None = None) -> list[tuple[int, int]]:
    """The round numbers recorded in the store at ``path`` open as ``db`` (between ``low`` and ``high`` when
    given) as runs without a gap, ``[(first, last)]`` in order (by the store's round index). Round numbers can
    skip: a shoe found ahead of the journal between rounds moves the numbering past its transactions
    (``controller.round.dealing``, ``shoe_ahead``)."""
    where = "round IS NOT NULL" if low is None else "round BETWEEN ? AND ?"
    try:
        rows = db.execute(f"SELECT DISTINCT round FROM records WHERE {where} ORDER BY round",
                          () if low is None else (low, high))
        return _runs(number for (number,) in rows)
    except sqlite3.Error as exc:
        raise JournalError(f"{path_shown(path)}: cannot read the journal store: {exc}") from None


def _runs(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Round numbers in increasing order as runs without a gap, ``[(first, last)]``: 1, 2, 3, 7 -> (1, 3), (7, 7)."""
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


def _rounds_text(runs: list[tuple[int, int]]) -> str:
    """Runs of round numbers as text: "9-99", "1-2 and 9-99", "1-3, 5 and 9-99"; "none" for no run."""
    parts = [str(a) if a == b else f"{a}-{b}" for a, b in runs]
    return "none" if not parts else parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _rounds_missing(db: sqlite3.Connection, path: Path, rounds: tuple[int, int]) -> str:
    """The rounds of ``rounds`` (first, last) the store at ``path`` (open as ``db``) holds no record of, before,
    between (a gap in its numbering) or after its rounds, as text (``_rounds_text``); "" when it holds them all.
    """
    first, last = rounds
    missing, expected = [], first
    for a, b in _rounds_held(db, path, first, last):
        if a > expected:
            missing.append((expected, a - 1))
        expected = b + 1
    if expected <= last:
        missing.append((expected, last))
    return _rounds_text(missing) if missing else ""


def import_jsonl(source: Path, destination: Path, *, batch: int = 5000) -> int:
    """Copy the JSON-lines journal ``source`` (an export, or a journal written before the store) into a new
    store at ``destination``, records unchanged (same seq, time, hash); return the number imported.

    Refuses (``JournalError``, nothing left at ``destination``) a source that does not verify (chain,
    spelling: ``controller.journal.tools.verify``) or a ``destination`` that already holds records. The new store
    is kept without a key, whatever the table's: a JSON-lines copy carries no seal, so its chain is all that was
    checked (an edit re-chained to its end passes), and a seal put on it here would vouch for records nobody
    checked with the key. A key is introduced by ``admit`` (``journal add-key``), which journals who vouched.
    """
    source, destination = Path(source), Path(destination)
    if destination.exists() and destination.stat().st_size:
        raise JournalError(f"{path_shown(destination)}: exists: import fills a new store only")
    verdict = verify(source)
    if verdict.tamper is not None:
        raise JournalError(f"{path_shown(source)}: does not verify: {verdict.tamper}; not imported")
    journal = Journal(destination)
    try:
        count = journal.import_records(iter_jsonl(source), batch=batch)
        jkey.write_anchor(journal.anchor_path, *journal.head, None)
    except BaseException:
        journal.close()
        for leftover in (destination, jkey.anchor_path(destination),
                         *(jkey.beside(destination, end) for end in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
        raise
    journal.close()
    return count


def _unsealable(path: Path, journal: Journal) -> str | None:
    """Why the journal at ``path`` (open as ``journal``) may not be sealed with a key, or None: a tampering
    ``verify`` finds (the whole journal: a start reads from the last checkpoint only), or a last checkpoint whose
    meters are not those its records count (``Meters.from_records``): without a key nothing binds a checkpoint's
    state to the chain, and a start carries its meters on."""
    found = verify(path).tamper
    if found is not None:
        return str(found)
    checkpoint = journal.checkpoint
    if checkpoint is None or "meters" not in checkpoint.state:
        return None
    if meters_differ(journal.records(), checkpoint.seq, checkpoint.state["meters"]):
        return f"the checkpoint at record {checkpoint.seq} holds other meters than its records count (edited)"
    return None


#: The record each admission journals (``admit``).
ADMISSIONS = {"key": "JournalKeyIntroduced", "anchor": "AnchorRestored"}


def admit(path: Path, key: bytes | None, what: str, *, by: str, reason: str,
          derive: Callable[[list[dict[str, Any]]], list[tuple[str, str, dict[str, Any], int | None]]] | None = None
          ) -> dict:
    """Open the store at ``path`` admitting ``what`` (``Journal``'s ``admit``: ``"key"``, introduce ``key`` to a
    journal kept without one; ``"anchor"``, accept a journal whose anchor is missing or does not match) and
    journal it as one record (``ADMISSIONS``) with ``by`` (the supervisor), ``reason`` and ``found`` (what was
    admitted), with which the key's introduction or the new anchor takes effect; return that record. A journal
    kept without a key has its anchor restored without one (``key`` is not used: a key is introduced only by
    ``"key"``, on a journal whose anchor matches and that verifies: its chain, spelling and checkpoints, ``verify``).
    ``derive``: the journal's hook (``Journal.derive``) that writes
    the record's significant event in its commit (``controller.service.significance.Significance``: docs/events.md,
    5004 and 5005). Raises ``JournalError`` when there is nothing to admit (a
    journal already keyed; an anchor that matches), when ``by`` or ``reason`` is empty, when
    ``by`` is not a user name (``controller.round.inputs.USER_NAME``) or ``reason`` is not one line of printable
    text of at most ``MAX_REASON`` characters (``reason_refused``: the rule of the control interface), when ``key`` is None for
    ``"key"`` or for a keyed journal, for ``"key"`` on a journal found tampered, and as ``Journal`` (a service
    running on it, another problem).
    """
    if not by.strip() or not reason.strip():
        raise JournalError(f"{path_shown(path)}: who decided it and why are journaled: give --by and --reason")
    if not USER_NAME.fullmatch(by):
        raise JournalError(f"{path_shown(path)}: --by must be a user name (letters, digits, . _ -; 1-40 characters), "
                           f"got {by[:40]!r}{'...' if len(by) > 40 else ''}: nothing journaled")
    if reason_refused(reason):
        found = "" if reason.isprintable() else ", a line break or a control character among them"
        raise JournalError(f"{path_shown(path)}: --reason must be one line of printable text, at most {MAX_REASON} "
                           f"characters; got {len(reason):,} characters{found}: nothing journaled")
    path = existing_journal(path)
    if what == "anchor" and store_key_id(path) is None:
        key = None
    elif key is None:
        raise JournalError(f"{path_shown(path)}: " + ("no key to introduce" if what == "key" else "the journal is "
                                                      "sealed with a key: its anchor is restored with that key") +
                           ": give it with --key or as journal_key in table.yaml")
    journal = Journal(path, key=key, admit=what)
    journal.derive = derive
    try:
        if what == "key" and not journal.admitted:
            raise JournalError(f"{path_shown(path)}: already sealed with this key: nothing to introduce")
        found = _unsealable(path, journal) if what == "key" else None
        if found is not None:  # the key seals the journal as it stands: never one found tampered
            raise JournalError(f"{path_shown(path)}: does not verify: {found}: a key seals the journal as it stands, "
                               f"so none is introduced to it; restore it from its copy")
        if what == "anchor" and journal.admitted.startswith("nothing found"):
            raise JournalError(f"{path_shown(path)}: its anchor matches the store: nothing to restore")
        data = {"by": by, "reason": reason, "found": journal.admitted}
        if key is not None:
            data["key_id"] = jkey.key_id(key)
        records = journal.commit([("record", ADMISSIONS[what], data, None)])
        return next(record for record in records if record["type"] == ADMISSIONS[what])  # its event comes after it
    finally:
        journal.close()
