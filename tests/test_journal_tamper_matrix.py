"""Issue 29's matrix of attacks by someone with the file but not the key, as one parametrized test: each kind
of edit, cut or deletion, on a keyed and an unkeyed store, verified before a restart and after a restart
attempt (``Journal``, with the key when keyed).

With a key no case is ever called intact (``crisscross journal verify --key`` exits non-zero and never prints
``intact``), and a restart either refuses the store or leaves the case reported by verify. Without a key
verify never says intact at all: the most it says is "chain unbroken; NOT CHECKABLE" (exit 3). The lock case
is the one attack that changes nothing: there is no lock file any more (the lock is the store's own ``flock``),
so removing a name beside the store does not let a second writer in, and the store stays as its writer left
it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.journal import key as jkey
from controller.journal.reader import read_records
from controller.journal.record import JournalError
from controller.journal.store import Journal
from tests.journal_helpers import (closed_store, exported_lines, flip_wal_frame, forge, killed, play, rechain,
                                   replace_records, rewrite_anchor, verify_cli)


def _settled(path: Path) -> int:
    """The seq of the first ``SeatSettled`` record (round 1: before the last checkpoint)."""
    return next(r["seq"] for r in read_records(path) if r["type"] == "SeatSettled")


def _edit(path: Path) -> None:
    """A net of -1,000 made 99,000, in its canonical spelling, the chain left as it was."""
    forge(path, ("UPDATE records SET data = ? WHERE seq = ?", ('{"net":99000,"seat":1}', _settled(path))))


def _delete(path: Path) -> None:
    forge(path, ("DELETE FROM records WHERE seq = ?", (_settled(path),)))


def _insert(path: Path) -> None:
    """A copy of a settlement (another net) put after it, the later records numbered on (not re-chained)."""
    records = read_records(path)
    at = _settled(path)
    extra = dict(records[at - 1], data={"net": 5000, "seat": 2})
    records.insert(at, extra)
    for seq, record in enumerate(records, 1):
        record["seq"] = seq
    replace_records(path, records)


def _reorder(path: Path) -> None:
    """Two neighbouring records swapped, each given the other's seq."""
    records = read_records(path)
    at = _settled(path)
    records[at - 1], records[at] = records[at], records[at - 1]
    records[at - 1]["seq"], records[at]["seq"] = at, at + 1
    replace_records(path, records)


def _respell(path: Path) -> None:
    """The same JSON value spelled otherwise (key order and spaces)."""
    forge(path, ("UPDATE records SET data = ? WHERE seq = ?", ('{"seat": 1, "net": -1000}', _settled(path))))


def _truncate(path: Path) -> None:
    """The last two closed rounds cut: their records, seals and checkpoints."""
    cut = next(r["seq"] for r in read_records(path) if r["type"] == "RoundClosed" and r["round"] == 4) + 1
    forge(path, *((f"DELETE FROM {table} WHERE seq >= ?", (cut,)) for table in ("records", "seals", "checkpoints")))


def _rechained(path: Path) -> dict[int, str]:
    """The edit of ``_edit`` with every later record re-chained to it; returns the new hash of every seq."""
    records = read_records(path)
    next(r for r in records if r["type"] == "SeatSettled")["data"]["net"] = 99000
    replace_records(path, rechain(records))
    return {r["seq"]: r["hash"] for r in records}


def _forge(path: Path) -> None:
    """The edit re-chained to the end, the seals' and checkpoints' heads and the anchor's head rewritten to
    match (their MACs kept: a forger cannot make new ones)."""
    heads = _rechained(path)
    forge(path, *(("UPDATE seals SET head = ? WHERE seq = ?", (h, s)) for s, h in heads.items()),
          *(("UPDATE checkpoints SET head = ? WHERE seq = ?", (h, s)) for s, h in heads.items()))
    rewrite_anchor(path, head=heads[max(heads)])


def _strip_key(path: Path) -> None:
    """The edit re-chained, then every trace of the key removed: seals, checkpoints' MACs, the meta rows
    ``key_id``/``key_from``, and an anchor rewritten without a MAC."""
    heads = _rechained(path)
    forge(path, ("DELETE FROM seals", ()), ("DELETE FROM meta WHERE name IN ('key_id', 'key_from')", ()),
          *(("UPDATE checkpoints SET mac = NULL, head = ? WHERE seq = ?", (h, s)) for s, h in heads.items()))
    last = max(heads)
    jkey.anchor_path(path).write_text(json.dumps({"seq": last, "head": heads[last], "mac": None}))


def _delete_anchor(path: Path) -> None:
    jkey.anchor_path(path).unlink()


def _corrupt_anchor(path: Path) -> None:
    """One byte flipped at the start of each of the anchor's two entries."""
    anchor = jkey.anchor_path(path)
    data = bytearray(anchor.read_bytes())
    for offset in (0, jkey.ANCHOR_SLOT):
        data[offset + 2] ^= 0xFF
    anchor.write_bytes(bytes(data))


def _delete_wal(path: Path) -> None:
    """After a kill: the WAL (holding the last rounds) and its index deleted."""
    Path(f"{path}-wal").unlink()
    Path(f"{path}-shm").unlink()


#: Attack name -> (how the store was left: ``closed`` cleanly or its writer ``killed``, the attack).
ATTACKS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "edit": ("closed", _edit), "delete": ("closed", _delete), "insert": ("closed", _insert),
    "reorder": ("closed", _reorder), "respell": ("closed", _respell), "truncate": ("closed", _truncate),
    "forge": ("closed", _forge), "strip-key": ("closed", _strip_key), "delete-anchor": ("closed", _delete_anchor),
    "corrupt-anchor": ("closed", _corrupt_anchor), "delete-wal": ("killed", _delete_wal),
    "flip-wal-frame": ("killed", flip_wal_frame),
}


def _never_intact(path: Path, key_file: Path | None, when: str) -> str:
    """Verify (with the key file when keyed): not intact, ever; without a key exit 1 (tampered) or 3 (nothing
    found, NOT CHECKABLE). Returns verify's line."""
    proc = verify_cli(path, key_file)
    assert ": intact," not in proc.stdout and proc.returncode != 0, (when, proc)
    if key_file is None:
        assert proc.returncode in (1, 3) and ("tampered" in proc.stdout or "NOT CHECKABLE" in proc.stdout), (when, proc)
    return proc.stdout


def _restart(path: Path, key: bytes | None) -> str | None:
    """A start on the store (with ``key``): None when it was accepted (closed again), else the refusal."""
    try:
        journal = Journal(path, key=key, fsync=False)
    except JournalError as exc:
        return str(exc)
    journal.close()
    return None


@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "unkeyed"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_no_attack_is_ever_called_intact_before_or_after_a_restart(tmp_path, attack, keyed):
    """The attack, then verify, then a restart attempt, then verify again."""
    left, act = ATTACKS[attack]
    if left == "killed":
        path, key_file, key, _ = killed(tmp_path, keyed=keyed)
    else:
        path, key_file, key = closed_store(tmp_path, keyed=keyed)
    act(path)
    _never_intact(path, key_file, "before a restart")
    refused = _restart(path, key)
    after = _never_intact(path, key_file, "after a restart attempt")
    if keyed and refused is None:  # a keyed start that took the store leaves the case reported, as tampered
        assert "tampered" in after, (attack, after)


@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "unkeyed"])
def test_removing_a_name_beside_a_running_store_lets_no_second_writer_in(tmp_path, keyed):
    """The lock case: there is no lock file (the lock is the store's own ``flock``); the lock file of old
    (``<journal>.lock``, left here as a leftover) removed while a writer runs: a second writer is still
    refused, the first commits on, and the store is as it left it: intact with the key, chain unbroken
    without it."""
    path, key_file, key = closed_store(tmp_path, keyed=keyed, rounds=2)
    first = Journal(path, key=key, fsync=False)
    try:
        assert sorted(p.name for p in tmp_path.glob("j.db*")) == ["j.db", "j.db-shm", "j.db-wal", "j.db.anchor"]
        lock = path.with_name(path.name + ".lock")
        lock.touch()
        lock.unlink()
        with pytest.raises(JournalError, match="in use by another process"):
            Journal(path, key=key, fsync=False)
        play(first, range(3, 4))
    finally:
        first.close()
    proc = verify_cli(path, key_file)
    if keyed:
        assert (proc.returncode, proc.stdout) == (0, f"{path}: intact, 15 records\n"), proc
    else:
        assert proc.returncode == 3 and ": intact," not in proc.stdout and "chain unbroken" in proc.stdout, proc


def _swap_lines(lines: list[str], at: int) -> None:
    """Lines ``at`` and ``at + 1`` (1-based) swapped, each keeping its record's seq."""
    lines[at - 1], lines[at] = lines[at], lines[at - 1]


def _insert_line(lines: list[str], at: int) -> None:
    """A copy of line ``at`` with another net (its hash left as it was) put after it."""
    record = json.loads(lines[at - 1])
    record["data"] = {"net": 5000, "seat": 2}
    lines.insert(at, json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")


@pytest.mark.parametrize("attack, on_lines, named", [
    (_reorder, _swap_lines, ("reordered", 0)), (_insert, _insert_line, ("inserted", 1))], ids=["reorder", "insert"])
def test_a_store_names_a_reorder_and_an_insertion_as_a_json_lines_copy_does(tmp_path, attack, on_lines, named):
    """``find_tampering``'s rules (``controller.journal.chain``): the first record out of place is ``reordered``
    when the seq expected there comes later, ``inserted`` when the journal verifies without it. A store holds a
    record's seq as its place, so the same edit renumbers the records it moves (``_reorder``, ``_insert``); verify
    names it as it names the lines of a copy, at the same line (the first swapped; the one put in)."""
    kind, after = named
    path, _, _ = closed_store(tmp_path, keyed=False)
    lines = exported_lines(path)
    at = _settled(path)
    on_lines(lines, at)
    copy = tmp_path / "j.jsonl"
    copy.write_text("".join(lines))
    attack(path)
    for tampered in (copy, path):
        proc = verify_cli(tampered)
        assert proc.returncode == 1 and f"tampered: line {at + after}, " in proc.stdout \
            and f": {kind}: " in proc.stdout, (tampered, proc.stdout)
