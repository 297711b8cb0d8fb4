"""The hash chain's check, and the naming of the first place a journal was tampered with.

``seq`` counts 1, 2, ...; ``prev`` is the previous record's ``hash``; ``hash`` covers the record
(``controller.journal.record``): an edited, removed, inserted or reordered record breaks the chain. A chain
without a secret cannot show records cut from its end or appended with a correct chain: the key, the seals and
the anchor do (``controller.journal.key``, ``controller.journal.tools.verify``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from controller.journal.reader import is_store, iter_records
from controller.journal.record import GENESIS, JournalError, SpellingError, record_hash
from controller.settings.text import path_shown

#: Records compared around the first break of the chain to name how it was tampered with (bounded memory).
TAMPER_WINDOW = 2000


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
    seq; None where no record could be read: a line cut short), and ``detail`` saying what shows it."""

    kind: str
    line: int
    seq: Any
    detail: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.seq is None else f"line {self.line}, seq {self.seq}"
        return f"{where}: {self.kind}: {self.detail}"


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


def as_hashed(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of a store (``records``, in the store's order) each with the seq it was hashed with, where
    that is not the one the store gives it: in a store the seq is a record's place (the table's key, by which it
    is read in order), not a part of the record that moves with it, so a record moved or put between others
    comes back with the seq of the place it was put at, and its hash, which covers the seq it was written with,
    no longer matches. Found by the chain: a record whose hash does not match its place, whose ``prev`` names
    another of ``records`` (or is ``GENESIS``) and whose hash matches with the seq after that one's, was written
    with that seq. Every other record is left as it is. So ``find_tampering`` names a store's records moved
    (``reordered``) or put between others (``inserted``) as it names the lines of a JSON-lines copy, by one
    rule; one SHA-256 per record that does not match its place."""
    by_hash: dict[Any, int] = {}
    for index, record in enumerate(records):
        by_hash.setdefault(record.get("hash"), index)
    hashed: dict[int, Any] = {}  # index -> the seq its record was hashed with (or its place's, unknown)
    for index in range(len(records)):
        path = []  # records whose seq follows from the one their prev names, the last first
        at: int | None = index
        while at is not None and at not in hashed and at not in path:
            record = records[at]
            if record.get("hash") == record_hash(record):
                hashed[at] = record.get("seq")
                break
            path.append(at)
            at = None if record.get("prev") == GENESIS else by_hash.get(record.get("prev"))
        for step in reversed(path):
            record = records[step]
            before = 0 if record.get("prev") == GENESIS else hashed.get(by_hash.get(record.get("prev")))
            written = before + 1 if isinstance(before, int) and not isinstance(before, bool) else None
            if written is not None and record_hash({**record, "seq": written}) == record.get("hash"):
                hashed[step] = written
            else:
                hashed[step] = record.get("seq")
    return [record if hashed[i] == record.get("seq") else {**record, "seq": hashed[i]}
            for i, record in enumerate(records)]


def find_first_tampering(records: Iterable[dict[str, Any]], *, seq: int = 1, prev: str = GENESIS,
                         placed: bool = False) -> tuple[int, str, Tamper | None]:
    """Stream ``records`` (expected from ``seq``, chained to ``prev``): ``(count, head, tamper)`` with the
    records seen, the hash of the last record of the unbroken chain and the first tampering
    (``find_tampering`` over a window of ``TAMPER_WINDOW`` records from the break; memory stays bounded
    whatever the journal's length). ``placed``: the records of a store, whose seq is their place; the window is
    then classified with each record's seq as it was hashed (``as_hashed``)."""
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
        found = find_tampering(as_hashed(start + window) if placed else start + window, seq=first,
                               prev=before["prev"] if before is not None else head, line=first)
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
        raise JournalError(f"{path_shown(path)}: no such file")
    try:
        count, _, tamper = find_first_tampering(iter_records(path), placed=is_store(path))
    except SpellingError as exc:
        return exc.line, Tamper("respelled", exc.line, exc.line, exc.problem)
    return count, tamper

