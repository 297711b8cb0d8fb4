"""Helpers for tests that alter a journal store as a forger with the file (not the key) could."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

from controller import journal_key as jkey
from controller.journal import GENESIS, canonical_line, record_hash
from controller.journal_tools import export

#: The columns of the store's ``records`` table, in the order ``replace_records`` fills them.
COLUMNS = "seq, time, kind, round, type, data, prev, hash, mono"


def forge(path: Path, *statements: tuple[str, tuple[Any, ...]]) -> None:
    """Run SQL ``statements`` on the store at ``path`` past its append-only triggers (dropped, as anyone with
    the file can, and put back)."""
    db = sqlite3.connect(path)
    triggers = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:
        db.execute(f"DROP TRIGGER {name}")
    for sql, params in statements:
        db.execute(sql, params)
    for _, sql in triggers:
        db.execute(sql)
    db.commit()
    db.close()


def rechain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Recompute every ``prev``/``hash`` so the chain verifies again (what a forger with the file would do)."""
    prev = GENESIS
    for record in records:
        record["prev"] = prev
        record["hash"] = prev = record_hash(record)
    return records


def replace_records(path: Path, records: list[dict[str, Any]], *, drop: tuple[str, ...] = ()) -> None:
    """Put ``records`` in place of every record of the store at ``path``; empty the tables in ``drop`` too."""
    rows = [(r["seq"], r["time"], r["kind"], r["round"], r["type"], canonical_line(r["data"]), r["prev"], r["hash"],
             r.get("mono")) for r in records]
    statements = [("DELETE FROM records", ())] + [(f"DELETE FROM {table}", ()) for table in drop]
    statements += [(f"INSERT INTO records ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row) for row in rows]
    forge(path, *statements)


def exported_lines(path: Path) -> list[str]:
    """The store's records as JSON lines (``crisscross journal export``), each with its newline."""
    out = io.StringIO()
    export(path, out)
    return out.getvalue().splitlines(keepends=True)


def rewrite_anchor(path: Path, **changes: Any) -> dict[str, Any]:
    """Rewrite the anchor of the store at ``path`` with ``changes`` (``seq``, ``head``, ``mac``, ``key_id``), its
    entries' check sums made to match (no key needed), as a forger with the file could; return the new entry."""
    anchor = path.with_name(path.name + ".anchor")
    entry = {k: v for k, v in jkey.read_anchor(anchor).items() if k != "sum"}
    entry.setdefault("key_id", None)
    entry.update(changes)
    entry["sum"] = jkey._entry_sum(entry)
    text = json.dumps(entry, sort_keys=True, separators=(",", ":")).encode().ljust(jkey.ANCHOR_ENTRY - 1) + b"\n"
    anchor.write_bytes(text.ljust(jkey.ANCHOR_SLOT, b"\x00") + text)
    return entry
