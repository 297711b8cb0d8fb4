"""The journal: an append-only JSON-lines file of every event, command and record of the table.

Each line is one JSON object::

    {"seq": 12, "time": "2026-11-29T12:00:00.123+00:00", "kind": "event" | "command" | "record",
     "round": 3 | null, "type": "ButtonPressed", "data": {...}, "prev": "<hash of line 11>", "hash": "<sha256>"}

``hash`` is the SHA-256 of the line's canonical JSON (sorted keys, no spaces) without ``hash``; ``prev`` is the
previous line's hash (64 zeros for the first), so an edited, removed, inserted or reordered line breaks the
chain. Write-ahead: the service appends an event before the round machine applies it and a command before a
driver sends it; every append is flushed and fsynced before ``append`` returns. The journal keeps face-down
cards, as a dispute needs them (PA 58 Pa. Code 674a.11(i)); reading it is a supervisor's right.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

GENESIS = "0" * 64
KINDS = ("event", "command", "record")


class JournalError(ValueError):
    """A journal file that cannot be read or extended: the message names the file and the line."""


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def record_hash(record: dict[str, Any]) -> str:
    """SHA-256 (hex) of ``record`` without its ``hash`` key, as canonical JSON."""
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def read_records(path: Path, *, skip_torn_tail: bool = False) -> list[dict[str, Any]]:
    """Read every record of the journal at ``path`` (an absent file has none).

    Raises ``JournalError`` naming the file and line for a line that is not a JSON object or has no ``seq``,
    and for a last line without its newline (an append a crash cut short) unless ``skip_torn_tail``, which
    leaves it out (readers such as recall; ``Journal`` sets it aside at the next start).
    """
    path = Path(path)
    if not path.exists():
        return []
    if not path.is_file():
        raise JournalError(f"{path}: not a regular file")
    records = []
    try:
        with path.open("rb") as handle:  # lines decoded one by one, so that a bad byte is named by its line
            for number, raw in enumerate(handle, 1):
                if not raw.endswith(b"\n"):
                    if skip_torn_tail:
                        break
                    raise JournalError(f"{path}: line {number}: incomplete last line (no newline)")
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise JournalError(f"{path}: line {number}: not UTF-8 text ({exc.reason})") from None
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise JournalError(f"{path}: line {number}: not JSON: {exc.msg}") from None
                except (ValueError, RecursionError) as exc:  # thousands of digits; nesting too deep
                    raise JournalError(f"{path}: line {number}: not JSON: {str(exc)[:80] or type(exc).__name__}") \
                        from None
                seq = record.get("seq") if isinstance(record, dict) else None
                if not isinstance(seq, int) or isinstance(seq, bool):
                    raise JournalError(f"{path}: line {number}: not a journal record")
                records.append(record)
    except OSError as exc:
        raise JournalError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return records


def verify_chain(records: list[dict[str, Any]]) -> str | None:
    """Check sequence numbers and the hash chain; return None when intact, else what is wrong and where."""
    prev = GENESIS
    for index, record in enumerate(records, 1):
        if record.get("seq") != index:
            return f"record {index}: seq {record.get('seq')} where {index} was expected (removed, inserted or reordered)"
        if record.get("prev") != prev:
            return f"record {index}: prev does not match record {index - 1}'s hash (removed, inserted or reordered)"
        if record.get("hash") != record_hash(record):
            return f"record {index}: content does not match its hash (edited)"
        prev = record["hash"]
    return None


#: The ways a journal can be tampered with, as ``verify_journal`` names them.
TAMPER_KINDS = ("edited", "removed", "inserted", "reordered")


@dataclass(frozen=True)
class Tamper:
    """The first tampered place in a journal: ``kind`` (one of ``TAMPER_KINDS``), the 1-based ``line`` of the
    file and the ``seq`` found there (for ``removed``: the line that follows the gap and its seq), and
    ``detail`` saying what the chain shows."""

    kind: str
    line: int
    seq: int
    detail: str

    def __str__(self) -> str:
        return f"line {self.line}, seq {self.seq}: {self.kind}: {self.detail}"


def find_tampering(records: Sequence[dict[str, Any]]) -> Tamper | None:
    """Name the first record that was edited, removed, inserted or reordered; None when the chain is intact.

    Rules (this module's docstring: ``seq`` counts 1, 2, ...; ``prev`` is the previous record's ``hash``;
    ``hash`` covers the record): at the first line whose seq, prev or hash is wrong,

    - ``inserted``: the file verifies from the line after as if this line were absent;
    - ``edited``: seq and prev are right but the content does not match its hash (or the hash was recomputed:
      then the next record's prev no longer matches, and the record before that one is named); or prev is
      right and only the seq is not;
    - ``reordered``: the seq expected here appears later in the file;
    - ``removed``: the seq expected here appears nowhere; the line holding the next seq is named;
    - a seq already seen earlier is ``inserted`` (a copy).

    Limits: a chain without a secret cannot show records cut from the end, records appended with a correct
    chain, or a rewrite of every hash from the edited record on.
    """
    prev = GENESIS
    for index, record in enumerate(records):
        line, expected = index + 1, index + 1
        seq = record.get("seq")
        self_ok = record.get("hash") == record_hash(record)
        if seq == expected and record.get("prev") == prev and self_ok:
            prev = record["hash"]
            continue
        if index + 1 < len(records) and _chain_ok(records[index + 1:], expected, prev):
            return Tamper("inserted", line, seq, f"the chain is whole without this line (seq {expected} follows)")
        if seq == expected and record.get("prev") == prev:
            return Tamper("edited", line, seq, "its content does not match its hash")
        if seq == expected:
            if self_ok and index > 0:
                before = records[index - 1]
                return Tamper("edited", line - 1, before.get("seq"),
                              f"its hash was changed: record {seq} was chained to another one")
            return Tamper("edited", line, seq, "its prev and its content do not match the chain")
        if record.get("prev") == prev:
            return Tamper("edited", line, seq, f"its seq was changed (seq {expected} expected; the chain is intact)")
        later = [i for i in range(index + 1, len(records)) if records[i].get("seq") == expected]
        if later:
            return Tamper("reordered", line, seq, f"seq {expected} expected here is on line {later[0] + 1}")
        if isinstance(seq, int) and seq > expected:
            missing = f"seq {expected}" if seq == expected + 1 else f"seq {expected}-{seq - 1}"
            return Tamper("removed", line, seq, f"{missing} missing before this line")
        return Tamper("inserted", line, seq, f"seq {seq} repeats an earlier record (seq {expected} expected)")
    return None


def _chain_ok(records: Sequence[dict[str, Any]], seq: int, prev: str) -> bool:
    for offset, record in enumerate(records):
        if record.get("seq") != seq + offset or record.get("prev") != prev or record.get("hash") != record_hash(record):
            return False
        prev = record["hash"]
    return True


def verify_journal(path: Path) -> tuple[int, Tamper | None]:
    """Verify the journal file at ``path`` without changing it: ``(records, None)`` when intact, else
    ``(records, Tamper)`` naming the first tampered record (``find_tampering``).

    Raises ``JournalError`` (one line naming the file, and the line where it applies) for a file that is
    missing, unreadable, not UTF-8, or has a line that is not a journal record or no final newline.
    """
    path = Path(path)
    if not path.exists():
        raise JournalError(f"{path}: no such file")
    records = read_records(path)
    return len(records), find_tampering(records)


class Journal:
    """An open journal, appended to by one thread (the controller thread).

    ``path``: the file, created (mode 0600: it holds face-down cards) with its folder if absent. An existing
    journal is read and its chain verified first; a broken one raises ``JournalError`` and nothing is appended
    to it. A last line without its newline is an append that never completed (``append`` returns only after the
    whole line is on disk, and the service applies nothing before that): its bytes are moved to
    ``<path>.torn`` and the journal goes on from the last complete record (``torn_tail`` keeps them).
    ``records`` are the records read at opening; ``last_round_no`` is the highest round number recorded;
    ``open_rounds`` the rounds opened and neither closed nor voided; ``created`` is true when there was no
    file (or an empty one) at ``path``, so that a mistyped path can be told apart from a table's history. ``clock`` returns the timestamp text of each record. Raises ``OSError`` when the file cannot be
    read, created or written.
    """

    def __init__(self, path: Path, *, fsync: bool = True, clock: Callable[[], str] = _utc_now) -> None:
        self.path = Path(path)
        self.created = not self.path.exists() or (self.path.is_file() and self.path.stat().st_size == 0)
        self.torn_tail = self._set_aside_torn_tail()
        records = read_records(self.path)
        problem = verify_chain(records)
        if problem:
            raise JournalError(f"{self.path}: {problem}")
        self.records = records  # as read at opening (replayed by controller.recovery)
        self._seq = len(records)
        self._prev = records[-1]["hash"] if records else GENESIS
        self.last_round_no = max((r["round"] for r in records if isinstance(r.get("round"), int)), default=0)
        opened = {r["round"] for r in records if r.get("type") == "RoundOpened"}
        closed = {r["round"] for r in records if r.get("type") in ("RoundClosed", "RoundVoided")}
        self.open_rounds = sorted(opened - closed)
        self._fsync = fsync
        self._clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._file = os.fdopen(fd, "a", encoding="utf-8")

    def _set_aside_torn_tail(self) -> bytes:
        if not self.path.is_file():
            return b""
        with self.path.open("rb+") as handle:
            data = handle.read()
            if not data or data.endswith(b"\n"):
                return b""
            keep = data.rfind(b"\n") + 1
            torn = data[keep:]
            aside_fd = os.open(self.path.with_name(self.path.name + ".torn"), os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                               0o600)  # it may hold cards, like the journal
            with os.fdopen(aside_fd, "ab") as aside:
                aside.write(torn + b"\n")
                aside.flush()
                os.fsync(aside.fileno())
            handle.truncate(keep)
            handle.flush()
            os.fsync(handle.fileno())
        return torn

    def append(self, kind: str, type_: str, data: dict[str, Any], round_no: int | None) -> dict[str, Any]:
        """Append one record and make it durable (flush + fsync) before returning it.

        ``kind`` is one of ``KINDS``; ``type_`` the event, command or record class name; ``data`` its fields.
        Raises ``ValueError`` for an unknown kind and ``OSError`` when the disk refuses the write.
        """
        if kind not in KINDS:
            raise ValueError(f"journal kind must be one of {KINDS}, got {kind!r}")
        record = {"seq": self._seq + 1, "time": self._clock(), "kind": kind, "round": round_no,
                  "type": type_, "data": data, "prev": self._prev}
        record["hash"] = record_hash(record)
        self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())
        self._seq += 1
        self._prev = record["hash"]
        return record

    def close(self) -> None:
        """Flush and close the file."""
        if not self._file.closed:
            self._file.flush()
            if self._fsync:
                os.fsync(self._file.fileno())
            self._file.close()
