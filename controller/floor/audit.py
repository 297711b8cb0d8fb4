"""``crisscross floor audit``: every table's events checked for gaps and order, and the published anchors
compared with a table's journal (docs/floor.md, "Audit").

Each event carries its journal ``seq`` and ``after``, the seq of the table's previous public record. Per table
the audit keeps the records whose seq is above the last one kept (repeats are counted, not kept: a publisher
sends again what the broker had not acknowledged when a connection was lost) and checks that each one's
``after`` is the seq kept before it: anything else is a gap (records missing) or a reordering. The first event
seen of a table may follow records sent before the audit subscribed (``joined``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.control.server import public_record
from controller.floor import topics
from controller.journal import key as jkey
from controller.journal.reader import iter_store


@dataclass
class TableAudit:
    """What the audit saw of one table: ``seqs`` kept in order, ``repeats``, ``gaps`` (``(after expected,
    after given, seq)``), ``joined`` (the first event's ``after``), the ``anchors`` published and ``foreign``
    messages that are not the floor's format."""

    seqs: list[int] = field(default_factory=list)
    repeats: int = 0
    gaps: list[tuple[int, int, int]] = field(default_factory=list)
    joined: int | None = None
    anchors: dict[int, dict[str, Any]] = field(default_factory=dict)
    foreign: int = 0


class Auditor:
    """Takes the floor's messages (``take``) and says what is wrong (``problems``)."""

    def __init__(self, max_tables: int = topics.MAX_TABLES) -> None:
        self.tables: dict[str, TableAudit] = {}
        #: the most tables kept (``topics.MAX_TABLES``, the first heard: ``topics.kept``)
        self.max_tables = max_tables
        #: messages of tables heard after ``max_tables`` others: not kept, not audited, a problem ``problems`` names
        self.beyond = 0
        #: messages whose topic is not UTF-8 text (``Listener``'s ``on_unreadable``): no table to name them by
        self.unreadable = 0
        #: messages on a topic whose table level is not a table id (``Listener``'s ``on_not_a_table``): no table to
        #: name them by either
        self.not_a_table = 0

    def unreadable_topic(self) -> None:
        """Count a message whose topic is not UTF-8 text (``topics.received_topic``): not in the floor's format,
        skipped, and a problem ``problems`` names."""
        self.unreadable += 1

    def not_a_table_topic(self, problem: str) -> None:
        """Count a message on a topic whose table level is not a table id (``topics.table_id_problem``, table.yaml's
        rule; ``problem`` its reason, unused: the audit names no such id): not in the floor's format, skipped, and a
        problem ``problems`` names."""
        self.not_a_table += 1

    def take(self, table: str, kind: str, payload: bytes, received: float = 0.0) -> None:
        """One message of ``table`` on its ``kind`` topic (``controller.floor.topics``); counted in ``beyond`` only
        when ``max_tables`` others are kept (``topics.kept``)."""
        if not topics.kept(self.tables, table, self.max_tables):
            self.beyond += 1
            return
        seen = self.tables.setdefault(table, TableAudit())
        if kind not in ("events", "anchors"):
            return
        value = topics.decode(payload)
        if kind == "anchors":
            if value is None or not isinstance(value.get("seq"), int):
                seen.foreign += 1
            else:
                seen.anchors[value["seq"]] = value
            return
        record = (value or {}).get("record")
        after = (value or {}).get("after")
        if not isinstance(record, dict) or not isinstance(record.get("seq"), int) or not isinstance(after, int):
            seen.foreign += 1
            return
        seq = record["seq"]
        last = seen.seqs[-1] if seen.seqs else None
        if last is not None and seq <= last:
            seen.repeats += 1
            return
        if last is None:
            seen.joined = after
        elif after != last:
            seen.gaps.append((last, after, seq))
        seen.seqs.append(seq)

    def problems(self, journals: dict[str, tuple[Path, bytes | None]] | None = None,
                 *, from_start: bool = False) -> list[str]:
        """Every problem found, one line each naming the table (empty: nothing wrong). ``journals`` maps a table
        to its journal store and key (or None): its public records must be exactly the events kept, in order,
        and every anchor must be the head of that journal at its seq (with its keyed seal when a key is
        given). ``from_start``: the audit subscribed before the tables' first record, so a first event whose
        ``after`` is not 0 is a gap too."""
        found: list[str] = []
        for table, seen in sorted(self.tables.items()):
            for last, after, seq in seen.gaps:
                found.append(f"{table}: seq {seq} follows {after} but the last record received is {last}: "
                             f"{'records missing' if after > last else 'out of order'}")
            if from_start and seen.joined not in (None, 0):
                found.append(f"{table}: the first record received is {seen.seqs[0]}, after {seen.joined}: "
                             f"records missing before it")
            if seen.foreign:
                found.append(f"{table}: {seen.foreign} message(s) not in the floor's format")
        if self.unreadable:
            found.append(f"{self.unreadable} message(s) whose topic is not UTF-8 text: not in the floor's format")
        if self.not_a_table:
            found.append(f"{self.not_a_table} message(s) on a topic whose table id is not one (table.yaml's rule): "
                         f"not in the floor's format")
        if self.beyond:
            found.append(f"{self.beyond} message(s) of tables beyond the first {self.max_tables} heard: not kept, "
                         f"not audited")
        for table, (path, key) in sorted((journals or {}).items()):
            found += compare_with_journal(table, self.tables.get(table, TableAudit()), path, key)
        return found


def compare_with_journal(table: str, seen: TableAudit, path: Path, key: bytes | None) -> list[str]:
    """What differs between the events and anchors of ``table`` received (``seen``) and its journal store at
    ``path`` (read only; ``key``: check each anchor's keyed seal)."""
    found: list[str] = []
    expected = [r["seq"] for r in iter_store(path) if public_record(r) is not None]
    if seen.joined not in (None, 0) and seen.seqs:  # the audit joined late: compare from there
        expected = [s for s in expected if s >= seen.seqs[0]]
    if seen.seqs != expected:
        missing = sorted(set(expected) - set(seen.seqs))
        extra = sorted(set(seen.seqs) - set(expected))
        found.append(f"{table}: {len(seen.seqs)} public records received, {len(expected)} in {path}: "
                     f"missing {missing[:5]}{'...' if len(missing) > 5 else ''}, "
                     f"not in the journal {extra[:5]}{'...' if len(extra) > 5 else ''}")
    if seen.anchors:
        heads = {}
        for record in iter_store(path, after=min(seen.anchors) - 1):
            if record["seq"] in seen.anchors:
                heads[record["seq"]] = record["hash"]
            if record["seq"] >= max(seen.anchors):
                break
        for seq, anchor in sorted(seen.anchors.items()):
            if heads.get(seq) != anchor.get("head"):
                found.append(f"{table}: the anchor published at seq {seq} is not the journal's head there "
                             f"({'no such record' if seq not in heads else 'another hash'}): rewritten or another "
                             f"journal")
            elif key is not None and anchor.get("mac") != jkey.mac(key, "anchor", seq, anchor["head"]):
                found.append(f"{table}: the anchor published at seq {seq} does not carry the journal key's seal")
    return found
