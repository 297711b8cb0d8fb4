"""Helpers for tests that alter a journal store as a forger with the file (not the key) could."""

from __future__ import annotations

import hashlib
import io
import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from controller.journal import key as jkey
from controller.journal.key import init_key, load_key
from controller.journal.record import GENESIS, canonical_line, record_hash
from controller.journal.store import Journal
from controller.journal.tools import export
from tests.cli_helpers import crisscross

#: The wall time of every record of the stores built here (a frozen clock: no clock step is ever seen).
CLOCK = "2026-12-02T00:00:00.000+00:00"

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


def forge_checkpoint(path: Path, seq: int, state: str) -> None:
    """Put ``state`` (canonical text) in the checkpoint of record ``seq`` of the store at ``path`` with its
    digest made again (SHA-256 over ``checkpoint``, seq, head and state joined by newlines, ``sha256:`` before
    it: docs/architecture.md), as a forger without the key can in a journal kept without one."""
    db = sqlite3.connect(path)
    (head,) = db.execute("SELECT head FROM checkpoints WHERE seq = ?", (seq,)).fetchone()
    db.close()
    digest = "sha256:" + hashlib.sha256(f"checkpoint\n{seq}\n{head}\n{state}".encode()).hexdigest()
    forge(path, ("UPDATE checkpoints SET state = ?, mac = ? WHERE seq = ?", (state, digest, seq)))


def rechain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Recompute every ``prev``/``hash`` so the chain verifies again (what a forger with the file would do)."""
    prev = GENESIS
    for record in records:
        record["prev"] = prev
        record["hash"] = prev = record_hash(record)
    return records


def rechain_store(path: Path, records: list[dict[str, Any]]) -> dict[int, str]:
    """Put ``records`` re-chained in place of the store's at ``path``, the seals' and checkpoints' heads, the
    checkpoints' digests (``forge_checkpoint``) and the anchor rewritten to match (what a forger with the file and
    without the key can do: the seals' HMACs left as they are); return the new hashes by seq."""
    records = rechain(records)
    heads = {r["seq"]: r["hash"] for r in records}
    replace_records(path, records)
    forge(path, *((f"UPDATE {table} SET head = ? WHERE seq = ?", (heads[seq], seq))
                  for table in ("seals", "checkpoints") for seq in heads))
    db = sqlite3.connect(path)
    digested = db.execute("SELECT seq, state FROM checkpoints WHERE mac LIKE 'sha256:%'").fetchall()
    db.close()
    for seq, state in digested:
        forge_checkpoint(path, seq, state)
    saved = jkey.read_anchor(path.with_name(path.name + ".anchor"))
    if saved is not None:
        rewrite_anchor(path, head=heads[saved["seq"]])
    return heads


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
    entry = {k: v for k, v in jkey.read_anchor(anchor).items() if k not in ("sum", "entries")}
    entry.setdefault("key_id", None)
    entry.update(changes)
    texts = []
    for slot in (0, 1):  # each entry names its own place, as the writer's do
        placed = {k: v for k, v in entry.items() if k != "sum"} | ({"slot": slot} if "slot" in entry else {})
        placed["sum"] = jkey._entry_sum(placed)
        texts.append(json.dumps(placed, sort_keys=True, separators=(",", ":")).encode().ljust(jkey.ANCHOR_ENTRY - 1)
                     + b"\n")
    anchor.write_bytes(texts[0].ljust(jkey.ANCHOR_SLOT, b"\x00") + texts[1])
    entry["sum"] = jkey._entry_sum(entry)
    return entry


def closed_store(folder: Path, *, keyed: bool = True, rounds: int = 6) -> tuple[Path, Path | None, bytes | None]:
    """A store ``folder/j.db`` of ``rounds`` closed rounds (``play``), keyed or not, closed cleanly:
    ``(store, key file, key)`` (None, None without a key)."""
    key_file = folder / "journal.key" if keyed else None
    if key_file is not None:
        init_key(key_file)
    key = load_key(key_file) if key_file else None
    path = folder / "j.db"
    journal = Journal(path, key=key, clock=lambda: CLOCK, fsync=False)
    play(journal, range(1, rounds + 1))
    journal.close()
    return path, key_file, key


def verify_cli(path: Path, key_file: Path | None = None) -> subprocess.CompletedProcess:
    """``crisscross journal verify PATH [--key FILE]`` in this process (``tests.cli_helpers``)."""
    return crisscross("journal", "verify", str(path), *(["--key", str(key_file)] if key_file else []))


def play(journal: Journal, rounds: range, *, close: bool = True) -> None:
    """Two commits a round, as the service makes them: an input opening it, then one closing it (with a
    checkpoint when ``close``)."""
    for n in rounds:
        journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, n - 1 or None),
                        ("record", "RoundOpened", {"round_no": n}, n)])
        journal.commit([("event", "ButtonPressed", {"button": "reveal"}, n),
                        ("record", "SeatSettled", {"seat": 1, "net": -1000}, n),
                        ("record", "RoundClosed", {"round_no": n}, n)], state={"round": n} if close else None)


#: A service killed mid-run: rounds closed with checkpoints (the WAL copied into the database at each), then
#: rounds whose commits are in the WAL only, then SIGKILL (no close: the WAL stays as a crash leaves it).
#: Arguments: the store, and the key file ("" for none).
KILLED = textwrap.dedent(f"""
    import os, signal, sys
    from pathlib import Path
    from controller.journal.store import Journal
    from controller.journal.key import load_key
    from tests.journal_helpers import play
    key = load_key(Path(sys.argv[2])) if sys.argv[2] else None
    journal = Journal(Path(sys.argv[1]), key=key, clock=lambda: {CLOCK!r})
    play(journal, range(1, 4))
    play(journal, range(4, 9), close=False)
    print(journal.head[0], flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def killed(folder: Path, *, keyed: bool = True) -> tuple[Path, Path | None, bytes | None, int]:
    """A store in ``folder`` (keyed or not) whose writer was killed (``KILLED``): ``(store, key file, key, last
    seq committed)``; its last rounds are in its WAL only."""
    key_file = folder / "journal.key" if keyed else None
    if key_file is not None:
        init_key(key_file)
    path = folder / "j.db"
    proc = subprocess.run([sys.executable, "-c", KILLED, str(path), str(key_file or "")], capture_output=True,
                          text=True, timeout=60, cwd=Path(__file__).parent.parent)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert Path(f"{path}-wal").stat().st_size > 32  # the last rounds are in the WAL only
    return path, key_file, load_key(key_file) if key_file else None, int(proc.stdout)


def flip_wal_frame(path: Path) -> None:
    """Flip one byte in the middle of the WAL of the store at ``path`` (a frame of its last commits; SQLite then
    drops that frame and every one after it when it replays the WAL), and remove its ``-shm`` index."""
    wal = Path(f"{path}-wal")
    data = bytearray(wal.read_bytes())
    frame = 4096 + 24  # the WAL's header is 32 bytes, each frame a 24-byte header and a page
    middle = 32 + (len(data) - 32) // frame // 2 * frame + 24 + 100
    data[middle] ^= 0xFF
    wal.write_bytes(bytes(data))
    Path(f"{path}-shm").unlink()
