"""Tamper evidence against someone with the file but not the key (issue 29): no edit, cut or deletion is ever
called intact with the key, and no start blesses it; a store whose service was killed is never called tampered.

Each test plays the attack the issue saw against the store, then checks ``crisscross journal verify --key``
and a start with the key (``Journal``), before and after that start.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from controller.journal.key import JournalKeyError, load_key
from controller.journal.reader import last_rounds, read_records
from controller.journal.record import JournalError
from controller.journal.store import Journal
from tests.cli_helpers import crisscross
from tests.journal_helpers import closed_store, flip_wal_frame, forge, killed, play as _play, rechain, replace_records
from tests.journal_helpers import verify_cli as _verify


@pytest.fixture()
def keyed(tmp_path):
    """A keyed store of 6 closed rounds, closed cleanly: ``(store, key file, key)``."""
    path, key_file, key = closed_store(tmp_path)
    assert _verify(path, key_file).returncode == 0
    return path, key_file, key


def _refused_and_never_intact(path: Path, key_file: Path, key: bytes, match: str) -> None:
    """A start with the key is refused (``match``) and leaves the store as it was; verify --key, before and
    after that start, never says intact."""
    before = _verify(path, key_file)
    assert before.returncode != 0 and "intact" not in before.stdout, before
    with pytest.raises(JournalError, match=match):
        Journal(path, key=key, fsync=False)
    after = _verify(path, key_file)
    assert after.returncode != 0 and "intact" not in after.stdout, after


def test_a_stripped_key_is_refused_by_a_keyed_start_and_never_intact(keyed):
    """Issue 29 item 1: a net of -1,000 made 99,000, every later record re-chained, the seals, the
    checkpoints' MACs and the meta rows key_id/key_from deleted, the anchor rewritten without a MAC. A start
    with the key used to introduce the key anew and seal the forgery; now a key is introduced only by
    ``crisscross journal add-key`` (journaled)."""
    path, key_file, key = keyed
    records = read_records(path)
    settled = next(r for r in records if r["type"] == "SeatSettled")
    settled["data"]["net"] = 99000
    records = rechain(records)
    replace_records(path, records, drop=("seals",))
    heads = {r["seq"]: r["hash"] for r in records}
    forge(path, ("DELETE FROM meta WHERE name IN ('key_id', 'key_from')", ()),
          *((f"UPDATE checkpoints SET mac = NULL, head = ? WHERE seq = ?", (heads[seq], seq)) for seq in heads))
    last = records[-1]
    path.with_name("j.db.anchor").write_text(json.dumps({"seq": last["seq"], "head": last["hash"], "mac": None}))
    _refused_and_never_intact(path, key_file, key, "a key is introduced only by crisscross journal add-key")


def test_a_keyed_start_refuses_an_anchor_that_says_the_store_is_not_keyed(keyed):
    """Once keyed, always keyed: the anchor rewritten unkeyed (the store's key left) is refused with the key
    and called forged by verify with or without it."""
    path, key_file, key = keyed
    last = read_records(path)[-1]
    path.with_name("j.db.anchor").write_text(json.dumps({"seq": last["seq"], "head": last["hash"], "mac": None}))
    _refused_and_never_intact(path, key_file, key, "says the journal is not sealed with a key")
    assert _verify(path).returncode == 1


def test_the_last_rounds_cut_with_the_anchor_deleted_are_refused_and_never_intact(keyed):
    """Issue 29 item 2: the last two closed rounds (records, seals, checkpoints) and the anchor deleted. A
    restart used to write a new anchor, after which verify said intact; now "anchor missing", exit 1."""
    path, key_file, key = keyed
    cut = next(r["seq"] for r in read_records(path) if r["type"] == "RoundClosed" and r["round"] == 4) + 1
    forge(path, *((f"DELETE FROM {table} WHERE seq >= ?", (cut,)) for table in ("records", "seals", "checkpoints")))
    path.with_name("j.db.anchor").unlink()
    _refused_and_never_intact(path, key_file, key, r"anchor missing")
    proc = _verify(path, key_file)
    assert proc.returncode == 1 and "unanchored: anchor missing (j.db.anchor)" in proc.stdout


def _killed(tmp_path: Path) -> tuple[Path, Path, bytes, int]:
    """A keyed store whose writer was killed (``tests.journal_helpers.KILLED``)."""
    return killed(tmp_path)


def test_a_killed_store_verifies_and_its_anchor_names_the_last_commit(tmp_path):
    """Issue 29 items 3 and 4: the store of a killed service verifies intact before any restart (its WAL is
    read), and its anchor names the last committed record, not the last checkpoint."""
    path, key_file, key, last = _killed(tmp_path)
    proc = _verify(path, key_file)
    assert (proc.returncode, proc.stdout) == (0, f"{path}: intact, {last} records\n")
    journal = Journal(path, key=key, fsync=False)
    assert journal.head[0] == last
    journal.close()


def test_a_deleted_wal_after_a_kill_is_seen_and_refused(tmp_path):
    """Issue 29 item 3: SIGKILL, then ``journal.db-wal`` deleted: the commits after the last checkpoint are
    gone. verify --key used to say intact of the shorter store; the anchor now names the last commit."""
    path, key_file, key, last = _killed(tmp_path)
    Path(f"{path}-wal").unlink()
    Path(f"{path}-shm").unlink()
    proc = _verify(path, key_file)
    assert proc.returncode == 1 and "truncated" in proc.stdout and f"record {last}" in proc.stdout, proc
    _refused_and_never_intact(path, key_file, key, f"truncated: the journal ends at record .*, its anchor was "
                                                   f"written at record {last}")


def test_a_wal_frame_flipped_after_a_kill_is_never_intact_and_refused(tmp_path):
    """Issue 29 item 3: one byte flipped in a WAL frame of the last commits (SQLite then drops that frame and
    every one after it when it replays the WAL): before a restart, not intact ("not yet replayed": a reader
    cannot tell a dropped frame from one to replay); the start replays it, finds the loss and refuses; verify
    then says truncated."""
    path, key_file, key, last = _killed(tmp_path)
    flip_wal_frame(path)
    proc = _verify(path, key_file)
    assert proc.returncode != 0 and "intact" not in proc.stdout, proc
    _refused_and_never_intact(path, key_file, key, "truncated")
    assert "truncated" in _verify(path, key_file).stdout


@pytest.fixture()
def read_only(tmp_path):
    """A folder ``evidence`` and its read-only view ``ro`` (a read-only bind mount: write-protected media);
    skipped where mounting is not allowed."""
    evidence, view = tmp_path / "evidence", tmp_path / "ro"
    evidence.mkdir()
    view.mkdir()
    if shutil.which("mount") is None or subprocess.run(["mount", "--bind", "-o", "ro", str(evidence), str(view)],
                                                       capture_output=True).returncode != 0:
        pytest.skip("a read-only bind mount needs mount(8) and the right to mount")
    try:
        yield evidence, view
    finally:
        done = subprocess.run(["umount", "--lazy", str(view)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def _copy(store: Path, folder: Path, *ends: str) -> Path:
    for end in ("", ".anchor", *ends):
        shutil.copy2(f"{store}{end}", folder / f"{store.name}{end}")
    return folder / store.name


def test_an_evidence_copy_on_read_only_media_verifies_and_is_recalled(keyed, read_only):
    """Issue 29 item 8: a store on write-protected media (no ``-shm`` beside it, none can be made) used to be
    exit 2, "unable to open database file"; it verifies intact (read as immutable), and recall reads it."""
    path, key_file, _ = keyed
    evidence, view = read_only
    _copy(path, evidence)
    copy = view / path.name
    proc = _verify(copy, key_file)
    assert (proc.returncode, proc.stdout) == (0, f"{copy}: intact, {len(read_records(path))} records\n"), proc
    proc = crisscross("journal", "export", "--rounds", "6-6", "--journal", str(copy))
    assert proc.returncode == 0 and proc.stdout.count("\n") == 4, proc
    assert [n for n, _ in last_rounds(copy, 2)] == [5, 6]  # recall's reading


def test_a_killed_store_on_read_only_media_is_not_yet_replayed_never_tampered(tmp_path, read_only):
    """Issue 29 item 4: a store whose service was killed, read where its WAL cannot be replayed (a copy with
    its WAL on write-protected media: SQLite reads the database file alone): "not yet replayed" (exit 3),
    never tampered nor intact."""
    path, key_file, _, last = _killed(tmp_path)
    evidence, view = read_only
    _copy(path, evidence, "-wal")
    copy = view / path.name
    proc = _verify(copy, key_file)
    assert proc.returncode == 3 and "not yet replayed" in proc.stdout and "tampered" not in proc.stdout, proc


@pytest.mark.parametrize("digits, problem", [("0" * 64, "all 32 bytes are 0x00"), ("ab" * 32, "all 32 bytes are 0xab"),
                                             ("0123" * 16, "only 2 distinct byte values"),
                                             (bytes(range(32)).hex(), "its bytes count by 1")])
def test_a_trivially_weak_key_is_refused_naming_the_file(tmp_path, digits, problem):
    """Issue 30 item 4: 64 zero digits are 32 zero bytes, which HMAC pads to the empty key (RFC 2104 s. 2)."""
    key_file = tmp_path / "journal.key"
    key_file.write_text(digits + "\n")
    os.chmod(key_file, 0o600)
    with pytest.raises(JournalKeyError, match=f"^{key_file}: a trivially weak journal key \\({problem}\\)"):
        load_key(key_file)


def test_a_foreign_write_transaction_is_refused_and_the_table_commits_on(tmp_path):
    """Issue 29 item 6: another connection's ``BEGIN IMMEDIATE`` used to take the write lock and make the
    service's next commit fail ("database is locked"); the service holds the lock between its commits, so the
    other connection is refused at once and the table goes on."""
    journal = Journal(tmp_path / "j.db", fsync=False)
    try:
        _play(journal, range(1, 2))
        other = sqlite3.connect(tmp_path / "j.db", timeout=0, isolation_level=None)
        with pytest.raises(sqlite3.OperationalError, match="database is locked"):
            other.execute("BEGIN IMMEDIATE")
        assert other.execute("SELECT count(*) FROM records").fetchone() == (5,)  # readers read beside it
        _play(journal, range(2, 3))
        other.close()
    finally:
        journal.close()
    assert len(read_records(tmp_path / "j.db")) == 10


def test_a_store_deleted_while_open_is_a_refused_commit_not_silence(tmp_path):
    """Issue 29 item 7: the live journal deleted (or moved aside and replaced) while the service runs used to
    take commits into an unlinked file; the next commit is refused naming why."""
    from controller.journal.record import JournalWriteError

    journal = Journal(tmp_path / "j.db", fsync=False)
    try:
        _play(journal, range(1, 2))
        (tmp_path / "j.db").unlink()
        with pytest.raises(JournalWriteError, match="the journal store was deleted while open"):
            _play(journal, range(2, 3))
    finally:
        journal.close()
    journal = Journal(tmp_path / "k.db", fsync=False)
    try:
        _play(journal, range(1, 2))
        (tmp_path / "k.db").rename(tmp_path / "aside.db")
        (tmp_path / "k.db").write_bytes((tmp_path / "aside.db").read_bytes())
        with pytest.raises(JournalWriteError, match="moved or replaced while open"):
            _play(journal, range(2, 3))
    finally:
        journal.close()


def test_the_lock_is_on_the_store_so_no_lock_file_can_be_deleted_from_under_it(tmp_path):
    """Issue 29 item 5: with ``<journal>.lock`` deleted while the table ran, a second service opened the
    journal; the lock is now the store's own file, so a second service is refused whatever was deleted."""
    first = Journal(tmp_path / "j.db", fsync=False)
    try:
        for leftover in tmp_path.glob("j.db.lock"):
            leftover.unlink()
        with pytest.raises(JournalError, match="in use by another process"):
            Journal(tmp_path / "j.db", fsync=False)
    finally:
        first.close()


def test_a_reader_holding_a_snapshot_past_the_bound_is_logged_and_the_wal_size_kept(tmp_path, monkeypatch, caplog):
    """Issue 30 item 5: a reader that keeps one snapshot (a stuck export) keeps the WAL checkpoint from taking
    the WAL whole; past ``READER_LIMIT_SECONDS`` (made 0 here, so that no test waits) it is logged once at
    WARNING, and at INFO when it let go; ``wal_bytes`` is the WAL's size after each round's close."""
    import controller.journal.store as journal_module

    monkeypatch.setattr(journal_module, "READER_LIMIT_SECONDS", 0.0)
    journal = Journal(tmp_path / "j.db", fsync=False)
    try:
        _play(journal, range(1, 2))
        reader = sqlite3.connect(tmp_path / "j.db", isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM records").fetchone()  # its snapshot is taken
        with caplog.at_level("INFO", logger="controller.journal.store"):
            _play(journal, range(2, 5))
            warned = [r for r in caplog.records if "a reader has held a snapshot" in r.getMessage()]
            assert len(warned) == 1 and warned[0].levelname == "WARNING"
            assert journal.wal_bytes == Path(f"{tmp_path / 'j.db'}-wal").stat().st_size > 0
            reader.execute("COMMIT")
            reader.close()
            _play(journal, range(5, 6))
            assert any("let go of its snapshot" in r.getMessage() for r in caplog.records)
    finally:
        journal.close()


def _checkpoints(path: Path) -> list[tuple[int, str, str | None]]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT seq, state, mac FROM checkpoints ORDER BY seq").fetchall()
    finally:
        db.close()


@pytest.mark.parametrize("edit", ["state", "digest dropped", "digest of another"])
def test_a_checkpoint_edited_in_a_journal_without_a_key_is_named_and_not_started_on(tmp_path, edit):
    """Without a key a checkpoint's state was bound to nothing: its last round number and meters edited, verify
    said only "not checkable" (exit 3) and the next start took it, numbering rounds from the forged one and
    carrying the forged meters into new records. Its digest (SHA-256 over ``checkpoint``, seq, head and state,
    docs/architecture.md) binds it now as the records' hashes bind them: an edit that does not make it again is
    ``edited`` (exit 1) and no start takes it; a digest dropped after ones before it kept theirs is too."""
    path, _, _ = closed_store(tmp_path, keyed=False, rounds=3)
    (_, _, first_mac), *_, (seq, state, mac) = _checkpoints(path)
    assert mac == "sha256:" + hashlib.sha256(f"checkpoint\n{seq}\n{read_records(path)[-1]['hash']}\n{state}"
                                             .encode()).hexdigest()
    forged = json.dumps({**json.loads(state), "round": 100}, sort_keys=True, separators=(",", ":"))
    statement = {"state": ("UPDATE checkpoints SET state = ? WHERE seq = ?", (forged, seq)),
                 "digest dropped": ("UPDATE checkpoints SET state = ?, mac = NULL WHERE seq = ?", (forged, seq)),
                 "digest of another": ("UPDATE checkpoints SET mac = ? WHERE seq = ?", (first_mac, seq))}[edit]
    forge(path, statement)
    proc = _verify(path)
    assert proc.returncode == 1, proc.stdout
    assert f"seq {seq}: edited: its checkpoint" in proc.stdout and "intact" not in proc.stdout
    before = path.read_bytes()
    with pytest.raises(JournalError, match=rf"checkpoint at record {seq}: edited: its checkpoint.*not started"):
        Journal(path)
    assert path.read_bytes() == before


def test_a_journal_written_before_checkpoints_carried_a_digest_still_verifies_and_opens(tmp_path):
    """Checkpoints of an older store carry nothing in ``mac``: taken as before (verify: not checkable, exit 3),
    and the next checkpoint the service writes carries its digest."""
    path, _, _ = closed_store(tmp_path, keyed=False, rounds=2)
    forge(path, ("UPDATE checkpoints SET mac = NULL", ()))
    assert _verify(path).returncode == 3
    journal = Journal(path, fsync=False)
    try:
        assert journal.checkpoint.state == {"round": 2}
        journal.commit([("record", "RoundOpened", {"round_no": 3}, 3)], state={"round": 3})
    finally:
        journal.close()
    assert [mac is None for _, _, mac in _checkpoints(path)] == [True, True, False]
    assert _verify(path).returncode == 3


def test_a_digest_in_place_of_the_keys_seal_is_forged(keyed):
    """A keyed journal's checkpoint given a digest made without the key (anyone can make one) is forged."""
    path, key_file, key = keyed
    *_, (seq, state, _) = _checkpoints(path)
    head = read_records(path)[-1]["hash"]
    forged = json.dumps({"round": 100}, sort_keys=True, separators=(",", ":"))
    digest = "sha256:" + hashlib.sha256(f"checkpoint\n{seq}\n{head}\n{forged}".encode()).hexdigest()
    forge(path, ("UPDATE checkpoints SET state = ?, mac = ? WHERE seq = ?", (forged, digest, seq)))
    _refused_and_never_intact(path, key_file, key, rf"checkpoint at record {seq}: forged: its checkpoint carries a "
                                                   rf"digest where the journal key's seal belongs")


@pytest.mark.parametrize("seal", ["x", "SHA256:{hex}", " sha256:{hex}", "{hex}"])
def test_a_checkpoint_of_a_journal_without_a_key_carries_its_digest_or_nothing(tmp_path, seal):
    """A journal never sealed with a key seals no checkpoint: a ``mac`` that was not ``sha256:`` and the digest
    (a seal's bare hex, the prefix spelled otherwise, junk) hid an edit of the state from verify and the start."""
    path, _, _ = closed_store(tmp_path, keyed=False, rounds=2)
    *_, (seq, state, mac) = _checkpoints(path)
    forged = json.dumps({**json.loads(state), "round": 30}, sort_keys=True, separators=(",", ":"))
    forge(path, ("UPDATE checkpoints SET state = ?, mac = ? WHERE seq = ?",
                 (forged, seal.format(hex=mac.removeprefix("sha256:")), seq)))
    proc = _verify(path)
    assert proc.returncode == 1 and f"seq {seq}: edited: its checkpoint carries neither its digest" in proc.stdout
    with pytest.raises(JournalError, match=rf"checkpoint at record {seq}: edited: .*not started"):
        Journal(path)


@pytest.mark.parametrize("end", ["-wal", "-shm"])
def test_a_wal_or_shared_memory_file_others_may_read_is_not_opened(tmp_path, end):
    """The WAL holds the last commits' records, the cards among them: one left beside the store (a kill, a copy)
    that group or others may read was used for the whole run, the store itself being 0600."""
    path, _, _ = closed_store(tmp_path, keyed=False, rounds=1)
    beside = path.with_name(path.name + end)
    beside.touch()
    beside.chmod(0o644)
    with pytest.raises(JournalError, match=rf"{beside.name}: the journal store: group and others may read it "
                                           rf"\(mode 644\).*chmod 600 .*{beside.name}: not opened"):
        Journal(path)
    beside.chmod(0o600)
    Journal(path).close()


def test_a_checkpoint_from_before_the_key_is_checked_against_its_records_at_the_first_start(tmp_path):
    """After ``add-key`` the last checkpoint was written before the key: bound by a digest anyone can make again.
    Its meters lowered by 100.00 and its digest remade, verify --key said intact and the service carried the
    forged meters on, sealing them with its next checkpoint. The first start after the key counts that
    checkpoint's meters and last round from the records (docs/architecture.md) and refuses a forged one; an
    honest one starts, and the service's next checkpoint is sealed."""
    from controller.game.paytable import load_jurisdiction
    from controller.game.table import load_table_config
    from controller.journal.key import init_key
    from controller.journal.recovery import ReplayError, recover
    from tests.journal_helpers import forge_checkpoint

    path = tmp_path / "journal.db"
    played = crisscross("run", "--simulate", "--quiet", "--rounds", "2", "--seed", "5", "--journal", path)
    assert played.returncode == 0, played.stderr
    key_file = tmp_path / "journal.key"
    init_key(key_file)
    added = crisscross("journal", "add-key", "--journal", path, "--key", key_file, "--by", "sue", "--reason", "seal")
    assert added.returncode == 0, added.stderr
    key = load_key(key_file)
    config, ny = load_table_config(), load_jurisdiction("ny")

    def copied(name: str) -> Path:
        copy = tmp_path / name
        for end in ("", ".anchor"):
            shutil.copy(path.with_name(path.name + end), copy.with_name(copy.name + end))
        return copy

    honest = copied("honest.db")
    journal = Journal(honest, key=key, fsync=False)
    try:
        assert journal.checkpoint_unsealed
        recover(journal, config, ny)
    finally:
        journal.close()
    *_, (seq, state, _) = _checkpoints(path)
    for change in ("meters", "round"):
        forged = json.loads(state)
        if change == "meters":
            forged["meters"]["counts"]["rounds_closed"] += 1
        else:
            forged["last_round_no"] += 1
        copy = copied(f"{change}.db")
        forge_checkpoint(copy, seq, json.dumps(forged, sort_keys=True, separators=(",", ":")))
        assert _verify(copy, key_file).returncode == 0  # the digest made again: nothing a check of the file sees
        journal = Journal(copy, key=key, fsync=False)
        try:
            with pytest.raises(ReplayError, match=rf"journal record {seq}: its checkpoint, written before the "
                                                  rf"journal key and sealed by nothing, .*\(edited\)"):
                recover(journal, config, ny)
        finally:
            journal.close()
