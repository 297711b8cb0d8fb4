"""Keyed tamper evidence: the journal key, the seal of every commit and checkpoint, the anchor outside the store.

Each way of tampering the issue lists is a test: detected with the key (exit 1), and without the key detected
or reported as not checkable (exit 3), never "intact" (exit 0).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from controller.journal.key import JournalKeyError, init_key, load_key
from controller.journal.key import ANCHOR_ENTRY, ANCHOR_SLOT, _entry_sum, anchor_entry, anchor_mac, key_id, read_anchor
from controller.journal.reader import read_records
from controller.journal.record import JournalError, canonical_line, record_hash
from controller.journal.store import Journal
from tests.cli_helpers import crisscross
from tests.journal_helpers import forge, forge_checkpoint, rechain, rechain_store, replace_records, rewrite_anchor

CLOCK = "2026-11-30T00:00:00.000+00:00"


@pytest.fixture()
def keyed(tmp_path):
    """A store of 4 rounds, each committed as an input with its outputs and closed with a checkpoint, sealed
    with a new key: ``(store, key file, key)``."""
    key_file = tmp_path / "journal.key"
    init_key(key_file)
    key = load_key(key_file)
    path = tmp_path / "j.db"
    journal = Journal(path, key=key, clock=lambda: CLOCK, fsync=False)  # what is tested is read back, not durability
    for n in range(1, 5):
        journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, n - 1 or None),
                        ("record", "RoundOpened", {"round_no": n}, n)])
        journal.commit([("event", "ButtonPressed", {"button": "reveal"}, n),
                        ("record", "RoundClosed", {"round_no": n, "totals": {"paid": 100 * n}}, n)],
                       state={"round": n})
    journal.close()
    return path, key_file, key


def _verify(path, key_file=None):
    """``crisscross journal verify PATH [--key FILE]`` in this process (tests.cli_helpers)."""
    return crisscross("journal", "verify", str(path), *(["--key", str(key_file)] if key_file else []))


def test_an_untouched_journal_is_intact_with_the_key_and_not_checkable_without(keyed):
    path, key_file, _ = keyed
    proc = _verify(path, key_file)
    assert (proc.returncode, proc.stdout) == (0, f"{path}: intact, 16 records\n")
    proc = _verify(path)
    assert proc.returncode == 3 and "NOT CHECKABLE: without the key" in proc.stdout and "intact" not in proc.stdout


def _edit(path):
    forge(path, ("UPDATE records SET data = ? WHERE seq = 8", ('{"round_no":2,"totals":{"paid":35000}}',)))


def _remove(path):
    forge(path, ("DELETE FROM records WHERE seq = 6", ()))


def _insert(path):
    records = read_records(path)
    extra = dict(records[5], seq=6, data={"button": "void_round"})
    extra["hash"] = record_hash(extra)
    later = [dict(r, seq=r["seq"] + 1) for r in records[5:]]
    replace_records(path, records[:5] + [extra] + later)


def _reorder(path):
    records = read_records(path)
    records[5], records[6] = dict(records[6], seq=6), dict(records[5], seq=7)  # seq is the store's order
    replace_records(path, records)


def _truncate(path):
    """Cut the last round (its records, seal and checkpoint): the store is consistent but shorter than its anchor."""
    forge(path, ("DELETE FROM records WHERE seq > 12", ()), ("DELETE FROM seals WHERE seq > 12", ()),
          ("DELETE FROM checkpoints WHERE seq > 12", ()))


def _append_forged_input(path):
    """A supervisor's void appended, well chained, without a seal (nobody without the key can make one)."""
    last = read_records(path)[-1]
    forged = {"seq": last["seq"] + 1, "time": CLOCK, "kind": "event", "round": 4, "type": "OperatorAction",
              "data": {"action": "void_round", "role": "supervisor", "user": "x", "reason": ""}, "prev": last["hash"]}
    forged["hash"] = record_hash(forged)
    forge(path, ("INSERT INTO records (seq, time, kind, round, type, data, prev, hash) VALUES (?, ?, ?, ?, ?, ?, "
                 "?, ?)", (forged["seq"], CLOCK, "event", 4, "OperatorAction", canonical_line(forged["data"]),
                           forged["prev"], forged["hash"])))


def _rechained_forgery(path):
    """35,000 moved in round 2 and everything re-chained: records, the seals' and checkpoints' heads and the
    anchor rewritten to match, seals made up (the forger has no key)."""
    records = read_records(path)
    records[7]["data"]["totals"]["paid"] = 35000
    rechain_store(path, records)
    forge(path, ("UPDATE seals SET mac = ?", ("0" * 64,)))


#: (name, tampering, exit status of verify without the key, refused at start). A start checks in bounded time
#: the last checkpoint and what follows it; history before it is checked by ``crisscross journal verify``.
TAMPERING = [("edit", _edit, 1, False), ("removal", _remove, 1, False), ("insertion", _insert, 1, True),
             ("reorder", _reorder, 1, False), ("truncation from the end", _truncate, 1, True),
             ("appended forged input", _append_forged_input, 1, True), ("re-chained forgery", _rechained_forgery, 3, True)]


@pytest.mark.parametrize("tamper, without_key, at_start", [t[1:] for t in TAMPERING], ids=[t[0] for t in TAMPERING])
def test_each_tampering_is_detected_with_the_key_and_never_called_intact_without(keyed, tamper, without_key,
                                                                                 at_start):
    path, key_file, key = keyed
    tamper(path)
    proc = _verify(path, key_file)
    assert proc.returncode == 1 and proc.stdout.startswith(f"{path}: tampered: "), proc
    proc = _verify(path)
    assert proc.returncode == without_key, proc
    assert "intact" not in proc.stdout
    if at_start:
        with pytest.raises(JournalError):
            Journal(path, key=key).close()  # and the service does not start on it


def test_a_forged_input_appended_without_the_key_is_refused_at_start(keyed):
    path, _, key = keyed
    _append_forged_input(path)
    with pytest.raises(JournalError, match="record\\(s\\) 17-17 carry no seal: appended without the journal key"):
        Journal(path, key=key)


def test_records_cut_from_the_end_with_their_seals_left_are_refused_at_start_as_truncated(keyed):
    """The last round's records and checkpoint cut, its seals left: the start names the cut as verify does
    ("truncated"), not as records "without a seal" (the old message named records 17-12)."""
    path, key_file, key = keyed
    forge(path, ("DELETE FROM records WHERE seq > 12", ()), ("DELETE FROM checkpoints WHERE seq > 12", ()))
    with pytest.raises(JournalError, match="truncated: the journal ends at record 12, its anchor was written at "
                                           "record 16") as raised:
        Journal(path, key=key)
    assert "carry no seal" not in str(raised.value)
    proc = _verify(path, key_file)
    assert proc.returncode == 1 and ": tampered: " in proc.stdout and ": truncated: " in proc.stdout, proc
    forge(path, ("DELETE FROM seals WHERE seq > 12", ()))  # the anchor alone then says where the journal ended
    assert ": truncated: the journal ends at record 12, its anchor" in _verify(path, key_file).stdout


@pytest.mark.parametrize("with_key", [True, False])
def test_a_journal_its_service_writes_while_it_is_verified_is_not_called_truncated(keyed, monkeypatch, with_key):
    """``journal verify`` beside a running table: the service commits records, their seal and a checkpoint after
    the check streamed the records and before it reads the seals and checkpoints. Those vouch for records the
    check did not stream, which is no cut: the check said "truncated" of every live journal. Ordered: the commit
    is made when the stream of records ends. A cut of the records themselves is still one (the test above)."""
    from controller.journal import tools

    path, _, key = keyed
    journal = Journal(path, key=key, fsync=False)
    streamed = tools.iter_store

    def then_the_service_commits(*args, **kwargs):
        yield from streamed(*args, **kwargs)
        journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, 4),
                        ("record", "RoundOpened", {"round_no": 5}, 5)], state={"round": 5})

    monkeypatch.setattr(tools, "iter_store", then_the_service_commits)
    verdict = tools.verify(path, key if with_key else None)
    journal.close()
    assert verdict.tamper is None, verdict.tamper
    assert verdict.records == 16  # what the check covered: the commit made meanwhile is for the next one
    assert not any("truncated" in line or "cut" in line for line in verdict.unchecked), verdict.unchecked
    monkeypatch.setattr(tools, "iter_store", streamed)
    assert tools.verify(path, key).tamper is None  # checked the next time


def test_a_sealed_journal_is_refused_without_its_key_or_with_another(keyed, tmp_path):
    path, _, _ = keyed
    with pytest.raises(JournalError, match="sealed with a key and no key was given"):
        Journal(path)
    init_key(tmp_path / "other.key")
    with pytest.raises(JournalError, match="sealed with another key"):
        Journal(path, key=load_key(tmp_path / "other.key"))


def test_a_journal_shorter_than_its_anchor_is_refused_at_start_even_without_a_key(tmp_path):
    journal = Journal(tmp_path / "j.db")
    journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, None)], state={"round": 1})
    journal.commit([("event", "ButtonPressed", {"button": "reveal"}, 1)], state={"round": 1})
    journal.close()
    forge(tmp_path / "j.db", ("DELETE FROM records WHERE seq = 2", ()), ("DELETE FROM checkpoints WHERE seq = 2", ()))
    with pytest.raises(JournalError, match="truncated: the journal ends at record 1, its anchor was written at record 2"):
        Journal(tmp_path / "j.db")
    proc = _verify(tmp_path / "j.db")  # docs/operations.md, "The journal": exit 1, the place and kind named once
    assert proc.returncode == 1
    assert proc.stdout == (f"{tmp_path / 'j.db'}: tampered: line 1, seq 1: truncated: the journal ends at record 1, "
                           f"its anchor was written at record 2 (records cut from the end)\n")


def test_a_journal_without_a_key_refused_as_truncated_is_accepted_by_a_journaled_reanchor_without_a_key(tmp_path):
    """The refusal names ``crisscross journal reanchor`` with the journal's path; on a journal kept without a key
    it works without one (it asked for a key, and ``add-key`` refused for the same cut: a dead end but deleting
    the anchor, which hides the cut). The admission names the cut; the key is then introduced by ``add-key``. Each
    admission is a significant event (it was none: the floor's ``significant`` topic never heard of a cut)."""
    from controller.game.table import load_table_config
    from controller.settings.files import find_table_config

    path = tmp_path / "j.db"
    journal = Journal(path)
    for button in ("open_betting", "reveal", "open_betting"):
        journal.commit([("event", "ButtonPressed", {"button": button}, None)])
    journal.close()
    forge(path, ("DELETE FROM records WHERE seq = 3", ()))
    with pytest.raises(JournalError, match=f"crisscross journal reanchor --journal {path} --by NAME"):
        Journal(path)
    init_key(tmp_path / "journal.key")
    key_file = str(tmp_path / "journal.key")
    proc = crisscross("journal", "add-key", "--journal", str(path), "--key", key_file, "--by", "a", "--reason", "r")
    assert proc.returncode == 2 and "crisscross journal reanchor" in proc.stderr
    proc = crisscross("journal", "reanchor", "--journal", str(path), "--by", "alice", "--reason", "inquiry 7")
    assert proc.returncode == 0, proc.stderr
    restored, event = read_records(path)[-2:]
    assert (restored["seq"], restored["type"], restored["data"]["by"], restored["data"]["reason"]) == (
        3, "AnchorRestored", "alice", "inquiry 7")
    assert restored["data"]["found"].startswith("truncated: the journal ends at record 2, its anchor was written "
                                                "at record 3") and "key_id" not in restored["data"]
    table = load_table_config(find_table_config(None)).table_id
    # its significant event in the same commit (docs/events.md: 5004, a person must look into it)
    assert (event["type"], event["data"]) == ("SignificantEvent", {
        "code": 5004, "name": "journal anchor restored", "severity": "error", "table": table, "source_seq": 3,
        "source": "AnchorRestored"})
    proc = crisscross("journal", "reanchor", "--journal", str(path), "--by", "alice", "--reason", "again")
    assert proc.returncode == 2 and "nothing to restore" in proc.stderr
    proc = crisscross("journal", "add-key", "--journal", str(path), "--key", key_file, "--by", "a", "--reason", "r")
    assert proc.returncode == 0, proc.stderr
    introduced, event = read_records(path)[-2:]
    assert introduced["type"] == "JournalKeyIntroduced" and (event["type"], event["data"]) == ("SignificantEvent", {
        "code": 5005, "name": "journal key introduced", "severity": "error", "table": table,
        "source_seq": introduced["seq"], "source": "JournalKeyIntroduced"})
    assert _verify(path, key_file).returncode == 0


def test_a_key_is_never_introduced_to_a_journal_that_does_not_verify(tmp_path):
    """``add-key`` sealed a journal whose record was edited (verify: tampered) without a word: its
    ``JournalKeyIntroduced`` then vouched, from there on, for a history already broken. It is refused, and nothing
    is written."""
    path = tmp_path / "j.db"
    journal = Journal(path)
    for button in ("open_betting", "reveal", "open_betting"):
        journal.commit([("event", "ButtonPressed", {"button": button}, None)], state={"round": None})
    journal.close()
    # before the last checkpoint: a start reads from there, and never sees it
    forge(path, ("UPDATE records SET data = ? WHERE seq = 2", ('{"button":"void_round"}',)))
    assert _verify(path).returncode == 1
    init_key(tmp_path / "journal.key")
    before = path.read_bytes()
    proc = crisscross("journal", "add-key", "--journal", str(path), "--key", str(tmp_path / "journal.key"),
                      "--by", "alice", "--reason", "the table's key from today")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"{path}: does not verify: line 2, seq 2: edited" in proc.stderr and "none is introduced" in proc.stderr
    assert path.read_bytes() == before and [r["type"] for r in read_records(path)] == ["ButtonPressed"] * 3


def test_a_key_is_never_introduced_to_a_journal_whose_last_checkpoint_holds_other_meters(tmp_path):
    """Without a key only a digest anyone can make binds a checkpoint's state to the chain: its ``rounds_closed``
    edited from 1 to 1000 and its digest made again, verify sees nothing (an edit that leaves the digest is
    ``edited``, below), ``add-key`` sealed it, verify --key called it intact and the next start carried 1001
    rounds on. The checkpoint's meters are those its records count (a round closed: 1), or no key is introduced."""
    from controller.round.meters import Meters

    path = tmp_path / "j.db"
    journal = Journal(path)
    closed = [("record", "RoundOpened", {"round_no": 1}, 1), ("record", "RoundClosed", {"round_no": 1, "totals": {
        "wagered": 1000, "returned": 0, "collected": 1000, "paid": 0, "player_net": -1000}}, 1)]
    meters = Meters.from_records([{"type": t, "data": d} for _, t, d, _ in closed]).checkpoint()
    assert meters["counts"]["rounds_closed"] == 1
    journal.commit(closed, state={"meters": meters})
    journal.close()
    forged = json.loads(json.dumps(meters))
    forged["counts"]["rounds_closed"] = 1000
    state = json.dumps({"meters": forged}, sort_keys=True, separators=(",", ":"))  # its canonical spelling
    forge(path, ("UPDATE checkpoints SET state = ? WHERE seq = 2", (state,)))
    proc = _verify(path)
    assert proc.returncode == 1 and "seq 2: edited: its checkpoint's state is not the one its digest" in proc.stdout
    forge_checkpoint(path, 2, state)
    assert _verify(path).returncode == 3  # without a key: a digest made again is not seen
    init_key(tmp_path / "journal.key")
    proc = crisscross("journal", "add-key", "--journal", str(path), "--key", str(tmp_path / "journal.key"),
                      "--by", "alice", "--reason", "the table's key from today")
    assert proc.returncode == 2, proc.stderr
    assert "the checkpoint at record 2 holds other meters than its records count (edited)" in proc.stderr
    assert [r["type"] for r in read_records(path)] == ["RoundOpened", "RoundClosed"]


def test_init_key_creates_a_private_key_once(tmp_path):
    key_file = tmp_path / "journal.key"
    proc = subprocess.run([sys.executable, "-m", "controller", "journal", "init-key", "--file", str(key_file)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert key_file.stat().st_mode & 0o777 == 0o600 and len(load_key(key_file)) == 32
    before = key_file.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "controller", "journal", "init-key", "--file", str(key_file)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "never replaced" in proc.stderr and key_file.read_bytes() == before


def test_a_key_others_may_read_or_a_link_is_refused(tmp_path):
    key_file = tmp_path / "journal.key"
    init_key(key_file)
    os.chmod(key_file, 0o640)
    with pytest.raises(JournalKeyError, match="chmod 600"):
        load_key(key_file)
    os.chmod(key_file, 0o600)
    (tmp_path / "link.key").symlink_to(key_file)
    with pytest.raises(JournalKeyError, match="cannot read"):
        load_key(tmp_path / "link.key")
    with pytest.raises(JournalKeyError, match="exists"):
        init_key(tmp_path / "link.key")


def test_a_journal_never_sealed_says_so_once_whether_or_not_a_key_is_given(tmp_path):
    """``journal verify`` of a journal kept without a key: not checkable (exit 3), and what cannot be seen said
    in one line, which names the key given as unused rather than saying the journal has no key twice over."""
    path = tmp_path / "j.db"
    journal = Journal(path)
    journal.commit([("record", "RoundClosed", {"round_no": 1, "totals": {}}, 1)], state={"round": 1})
    journal.close()
    init_key(tmp_path / "journal.key")
    unsealed = [line for line in _verify(path, tmp_path / "journal.key").stdout.splitlines() if "key" in line]
    assert len(unsealed) == 1 and "never sealed with a key (the one given was not used): an edit" in unsealed[0]
    proc = _verify(path)
    assert proc.returncode == 3
    assert [line for line in proc.stdout.splitlines() if "key" in line] == [
        line.replace("the journal was never sealed with a key (the one given was not used)", "the journal has no key")
        for line in unsealed]


def test_a_key_given_to_a_journal_kept_without_one_seals_it_from_then_on(tmp_path):
    """A table that adds a key later: a start with the key on the journal kept without one is refused (a key
    is introduced only by an explicit command, which journals it: issue 29, "The key can be stripped"); once
    introduced the journal is sealed from then on, and then needs the key."""
    path = tmp_path / "j.db"
    journal = Journal(path)
    journal.commit([("record", "RoundClosed", {"round_no": 1, "totals": {}}, 1)], state={"round": 1})
    journal.close()
    init_key(tmp_path / "journal.key")
    key = load_key(tmp_path / "journal.key")
    with pytest.raises(JournalError, match="a key is introduced only by crisscross journal add-key"):
        Journal(path, key=key)
    proc = crisscross("journal", "add-key", "--journal", str(path), "--key", str(tmp_path / "journal.key"),
                      "--by", "alice", "--reason", "the table's key from today")
    assert proc.returncode == 0, proc.stderr
    introduced = read_records(path)[-2]  # its significant event after it (docs/events.md, 5005)
    assert (introduced["type"], introduced["data"]) == ("JournalKeyIntroduced", {
        "by": "alice", "reason": "the table's key from today", "key_id": read_meta(path, "key_id"),
        "found": "the journal sealed without a key until now"})
    assert _verify(path, tmp_path / "journal.key").returncode == 0
    journal = Journal(path, key=key)  # and a start before any new checkpoint still opens
    journal.commit([("record", "RoundClosed", {"round_no": 2, "totals": {}}, 2)], state={"round": 2})
    journal.close()
    assert _verify(path, tmp_path / "journal.key").returncode == 0
    with pytest.raises(JournalError, match="no key was given"):
        Journal(path)


def test_the_service_seals_with_the_key_of_table_yaml_and_refuses_a_forged_input_appended(tmp_path):
    """table.yaml's ``journal_key``: the service seals its journal with it; a supervisor's void appended without
    the key is refused at the next start (exit 2, one line), never acted on; a configured key that is missing
    refuses the start too."""
    from controller.settings.files import CONFIG_DIR

    config = tmp_path / "table.yaml"
    config.write_text((CONFIG_DIR / "table.yaml").read_text().replace(
        "jurisdiction: ny ", f"jurisdiction: {CONFIG_DIR / 'jurisdictions' / 'ny.yaml'} ", 1)
        + "journal_key: journal.key\n")
    path = tmp_path / "j.db"

    def run():
        return subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "1", "--quiet",
                               "--config", str(config), "--journal", str(path)], capture_output=True, text=True,
                              timeout=120)

    proc = run()
    assert proc.returncode == 2 and "no journal key (create it with crisscross journal init-key)" in proc.stderr
    init_key(tmp_path / "journal.key")
    assert run().returncode == 0
    assert _verify(path, tmp_path / "journal.key").returncode == 0
    _append_forged_input(path)
    before = path.read_bytes()
    proc = run()
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "carry no seal" in proc.stderr
    assert path.read_bytes() == before


def test_an_import_on_a_keyed_table_seals_nothing_and_says_how_a_supervisor_does(keyed, tmp_path):
    """A JSON-lines copy carries no seal: verify checks its chain only (exit 3), and an edit re-chained to its end
    passes. Imported on a table with a key it was sealed, and verify --key called the forged store "intact" (exit
    0). An import keeps the new store without a key (a key is introduced by ``journal add-key``, which journals who
    vouched) and says so."""
    from controller.settings.files import CONFIG_DIR

    path, key_file, key = keyed
    copy = tmp_path / "copy.jsonl"
    assert crisscross("journal", "export", "--journal", str(path), "--output", str(copy)).returncode == 0
    records = [json.loads(line) for line in copy.read_text().splitlines()]
    closed = next(r for r in records if r["type"] == "RoundClosed")
    closed["data"]["totals"]["paid"] = 999_999  # a forged figure, the chain recomputed after it
    copy.write_text("".join(canonical_line(r) + "\n" for r in rechain(records)))
    assert _verify(copy).returncode == 3  # a copy: its chain holds, nothing more can be checked
    config = tmp_path / "table.yaml"
    config.write_text((CONFIG_DIR / "table.yaml").read_text().replace(
        "jurisdiction: ny ", f"jurisdiction: {CONFIG_DIR / 'jurisdictions' / 'ny.yaml'} ", 1)
        + f"journal_key: {key_file}\n")
    new = tmp_path / "imported.db"
    proc = crisscross("journal", "import", str(copy), "--config", str(config), "--journal", str(new))
    assert proc.returncode == 0, proc.stderr
    assert f"{new}: kept without a key" in proc.stderr and "crisscross journal add-key" in proc.stderr
    checked = _verify(new, key_file)
    assert checked.returncode != 0 and "intact" not in checked.stdout, checked.stdout
    with pytest.raises(JournalError, match="a key is introduced only by crisscross journal add-key"):
        Journal(new, key=key)


def test_a_keyed_journal_stopped_before_its_first_record_starts_again(tmp_path):
    """A kill between the creation of a keyed store and its first record (a power cut at a table's first start)
    leaves a store with its key's id and no record: nothing to vouch for, so the next start opens it, and the
    records it then writes are sealed as usual."""
    init_key(tmp_path / "k")
    key = load_key(tmp_path / "k")
    Journal(tmp_path / "j.db", key=key).close()  # created, then stopped: no record, no seal
    journal = Journal(tmp_path / "j.db", key=key)
    assert journal.head[0] == 0
    journal.commit([("event", "ServiceStarted", {}, None)])
    journal.close()
    assert len(read_records(tmp_path / "j.db")) == 1
    Journal(tmp_path / "j.db", key=key).close()
    with pytest.raises(JournalError, match="no key was given"):
        Journal(tmp_path / "j.db")


def read_meta(path, name):
    """The store's ``meta`` value ``name`` (None when absent)."""
    db = sqlite3.connect(path)
    row = db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
    db.close()
    return row[0] if row else None


def _anchor(path):
    return path.with_name(path.name + ".anchor")


def test_verify_with_another_key_than_the_one_that_sealed_it_is_exit_2(keyed, tmp_path):
    """A wrong key is not tampering (exit 1) nor intact: the journal cannot be checked with it (exit 2)."""
    path, _, _ = keyed
    other = tmp_path / "other.key"
    init_key(other)
    proc = _verify(path, other)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"crisscross: {path}: sealed with another key than the one given\n"


@pytest.mark.parametrize("statement, kind, message", [
    ("UPDATE seals SET head = ? WHERE seq = 4", "forged", "the record is not the one its seal vouches for"),
    ("UPDATE checkpoints SET head = ? WHERE seq = 4", "forged", "a checkpoint names another record"),
])
def test_a_seal_or_checkpoint_moved_to_another_record_is_forgery_with_or_without_the_key(keyed, statement, kind,
                                                                                        message):
    """Seals and checkpoints vouch for the hash of the record they name (controller/journal/tools.py ``verify``):
    one that names another hash was rewritten, which is seen without the key too."""
    path, key_file, _ = keyed
    forge(path, (statement, (read_records(path)[0]["hash"],)))
    for proc in (_verify(path, key_file), _verify(path)):
        assert proc.returncode == 1
        assert proc.stdout.startswith(f"{path}: tampered: line 4, seq 4: {kind}: {message}")


def test_a_checkpoint_state_rewritten_without_the_key_is_forgery_with_it(keyed):
    """A checkpoint holds the round machine's state a start resumes from: its seal covers it (docs/operations.md, "The
    journal": every checkpoint is sealed with HMAC-SHA256)."""
    path, key_file, _ = keyed
    forge(path, ("UPDATE checkpoints SET state = ? WHERE seq = 8", ('{"round":9}',)))
    proc = _verify(path, key_file)
    assert proc.returncode == 1
    assert proc.stdout == (f"{path}: tampered: line 8, seq 8: forged: its checkpoint was not sealed with the "
                           f"journal key\n")
    assert _verify(path).returncode == 3  # without the key it cannot be seen: never intact


def test_a_keyed_store_without_its_anchor_is_tampered_and_refused_until_reanchored(keyed):
    """Issue 29, "Deleting the anchor hides a truncation": a keyed store without its anchor is refused at start
    and by verify (exit 1, "anchor missing"), with and without the key, until a supervisor's journaled
    ``crisscross journal reanchor``; the store was not changed by the refused start."""
    path, key_file, key = keyed
    _anchor(path).unlink()
    for proc in (_verify(path, key_file), _verify(path)):
        assert proc.returncode == 1
        assert proc.stdout == (f"{path}: tampered: line 16, seq 16: unanchored: anchor missing (j.db.anchor): the "
                               f"journal is sealed with a key, and records cut from its end would not show\n")
    before = path.read_bytes()
    with pytest.raises(JournalError, match=r"anchor missing \(j.db.anchor\).*crisscross journal reanchor"):
        Journal(path, key=key)
    assert path.read_bytes() == before and not _anchor(path).exists()
    proc = crisscross("journal", "reanchor", "--journal", str(path), "--key", str(key_file), "--by", "alice",
                      "--reason", "anchor lost in the disk swap")
    assert proc.returncode == 0, proc.stderr
    last = read_records(path)[-2]  # its significant event after it (docs/events.md, 5004)
    assert (last["seq"], last["type"], last["data"]["by"]) == (17, "AnchorRestored", "alice")
    assert last["data"]["found"].startswith("anchor missing (j.db.anchor)")
    assert _verify(path, key_file).returncode == 0
    Journal(path, key=key).close()


@pytest.mark.parametrize("content, problem", [
    ('{"seq": "4", "head": "x"}', "not an anchor"),
    ("[4]", "not an anchor"),
    ("\xff", "cannot read it"),
])
def test_an_anchor_that_is_not_one_is_named_and_the_journal_is_not_called_intact(keyed, content, problem):
    path, key_file, key = keyed
    _anchor(path).write_bytes(content.encode("latin-1"))
    proc = _verify(path, key_file)
    assert proc.returncode == 1 and f"anchor {_anchor(path)}: {problem}" in proc.stdout
    with pytest.raises(JournalError, match=f"anchor .*: {problem}"):
        Journal(path, key=key)


def test_an_anchor_altered_or_pointing_at_another_record_is_refused(keyed):
    """The anchor is sealed with the key and holds the hash of the record it names (controller/journal/key.py
    ``check_anchor``)."""
    path, key_file, key = keyed
    anchor = read_anchor(_anchor(path))
    rewrite_anchor(path, mac="0" * 64)
    assert "does not carry the key's seal" in _verify(path, key_file).stdout
    records = read_records(path)
    from controller.journal.key import mac

    _anchor(path).write_text(json.dumps({"seq": anchor["seq"], "head": records[0]["hash"],
                                         "mac": mac(key, "anchor", anchor["seq"], records[0]["hash"])}))
    proc = _verify(path, key_file)
    assert proc.returncode == 1
    assert f"record {anchor['seq']} is not the record the anchor holds (the journal was rewritten)" in proc.stdout
    with pytest.raises(JournalError, match="is not the record the anchor holds"):
        Journal(path, key=key)


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "no journal key (create it with crisscross journal init-key)"),
    (lambda p: p.mkdir(mode=0o700), "cannot read the journal key: Is a directory"),
    (lambda p: p.symlink_to("/dev/null"), "cannot read the journal key: a symbolic link, not a file"),
    (lambda p: (p.write_text("ab" * 31 + "\n"), p.chmod(0o600)), "not a journal key (expected 64 hex digits)"),
    (lambda p: (p.write_bytes(b"\xff" * 64), p.chmod(0o600)), "not a journal key (expected 64 hex digits)"),
])
def test_a_key_file_that_is_missing_or_not_a_key_is_refused_naming_it(tmp_path, make, message):
    key_file = tmp_path / "journal.key"
    make(key_file)
    with pytest.raises(JournalKeyError) as refused:
        load_key(key_file)
    assert str(refused.value) == f"{key_file}: {message}"


def test_a_device_given_as_the_key_file_is_not_a_regular_file():
    with pytest.raises(JournalKeyError) as refused:
        load_key("/dev/null")
    assert str(refused.value) == "/dev/null: the journal key is not a regular file"


def test_a_pipe_given_as_the_key_file_is_refused_without_waiting_for_a_writer(tmp_path):
    """Opening a pipe to read waits for a writer: the key's file is opened without waiting, so that a pipe in its
    place is named (``journal verify --key`` waited for ever)."""
    key_file = tmp_path / "journal.key"
    os.mkfifo(key_file, 0o600)
    with pytest.raises(JournalKeyError) as refused:
        load_key(key_file)
    assert str(refused.value) == f"{key_file}: the journal key is not a regular file"


def _entries(path) -> tuple[bytearray, list[dict]]:
    """The anchor file's bytes and its two entries, in their places."""
    raw = bytearray(_anchor(path).read_bytes())
    return raw, [json.loads(raw[place:place + ANCHOR_ENTRY]) for place in (0, ANCHOR_SLOT)]


def test_the_older_anchor_entry_copied_over_the_newer_does_not_hide_the_last_commit_cut(keyed):
    """The anchor keeps the last commit's head and the one before (a write cut short leaves the other entry). With
    the older entry copied over the newer, both name the commit before the last, and that last commit cut from the
    store (its records, seal and checkpoint) would leave a shorter journal its anchor agrees with: each entry is
    sealed for its place (controller/journal/key.py), so the copy is not an anchor, and the journal is not intact,
    whether the copy is left as it is or its place rewritten (the seal then does not match)."""
    path, key_file, key = keyed
    raw, entries = _entries(path)
    older, newer = sorted((0, 1), key=lambda i: entries[i]["seq"])
    assert (entries[older]["seq"], entries[newer]["seq"]) == (14, 16)  # the fixture's last two commits
    places = (0, ANCHOR_SLOT)
    copy = raw[places[older]:places[older] + ANCHOR_ENTRY]
    raw[places[newer]:places[newer] + ANCHOR_ENTRY] = copy
    _anchor(path).write_bytes(raw)
    forge(path, ("DELETE FROM records WHERE seq > 14", ()), ("DELETE FROM seals WHERE seq > 14", ()),
          ("DELETE FROM checkpoints WHERE seq > 14", ()))
    proc = _verify(path, key_file)
    assert proc.returncode == 1 and f"entry {newer + 1} is the other entry's (copied over it)" in proc.stdout
    with pytest.raises(JournalError, match="is the other entry's"):
        Journal(path, key=key)
    moved = dict(entries[older], slot=newer)  # its place rewritten, its check sum made to match (no key needed)
    moved["sum"] = _entry_sum({k: v for k, v in moved.items() if k != "sum"})
    raw[places[newer]:places[newer] + ANCHOR_ENTRY] = json.dumps(
        moved, sort_keys=True, separators=(",", ":")).encode().ljust(ANCHOR_ENTRY - 1) + b"\n"
    _anchor(path).write_bytes(raw)
    proc = _verify(path, key_file)
    assert proc.returncode == 1 and "the anchor (seq 14) does not carry the key's seal" in proc.stdout
    with pytest.raises(JournalError, match="does not carry the key's seal"):
        Journal(path, key=key)


def test_the_older_anchor_entry_alone_in_the_file_does_not_hide_the_last_commit_cut(keyed):
    """An anchor of one line is read as one written before the anchor had two entries: the older entry of a
    two-entry anchor written alone (sealed for its place, its check sum its own) named the journal with its last
    commit cut, and verify said "intact". An entry of the two-entry form alone is no anchor."""
    path, key_file, key = keyed
    raw, entries = _entries(path)
    older = min((0, 1), key=lambda i: entries[i]["seq"])
    assert entries[older]["seq"] == 14  # the commit before the fixture's last
    place = (0, ANCHOR_SLOT)[older]
    _anchor(path).write_bytes(bytes(raw[place:place + ANCHOR_ENTRY]).rstrip() + b"\n")
    forge(path, ("DELETE FROM records WHERE seq > 14", ()), ("DELETE FROM seals WHERE seq > 14", ()),
          ("DELETE FROM checkpoints WHERE seq > 14", ()))
    proc = _verify(path, key_file)
    assert proc.returncode == 1 and "one entry of a two-entry anchor alone" in proc.stdout, proc.stdout
    with pytest.raises(JournalError, match="one entry of a two-entry anchor alone"):
        Journal(path, key=key)


def test_the_journal_of_simulated_play_is_never_sealed_and_one_sealed_by_hand_is_named(tmp_path, monkeypatch):
    """``journal add-key`` on the shared journal of simulated play sealed it, and every simulated run was then
    refused it as "sealed with a key and no key was given (table.yaml journal_key)", a key no simulated run is
    given: add-key refuses it; a journal so sealed (by an older version) is named at start, with the way out."""
    import io

    from controller.cli.parts import SERVICE_PARTS
    from controller.game.table import load_table_config
    from controller.service.assembly import Service

    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    shared = tmp_path / "crisscross" / "simulated" / "journal.db"

    def simulated_run():
        service = Service(load_table_config(), simulate=True, rounds=1, seed=3, out=io.StringIO(),
                          parts=SERVICE_PARTS)
        try:
            assert service.run() == 0
        finally:
            service.close()

    simulated_run()
    init_key(tmp_path / "journal.key")
    proc = crisscross("journal", "add-key", "--journal", str(shared), "--key", str(tmp_path / "journal.key"),
                      "--by", "a", "--reason", "r")
    assert proc.returncode == 2 and "the journal of simulated play is never sealed with a key" in proc.stderr
    before = len(read_records(shared))
    journal = Journal(shared, key=load_key(tmp_path / "journal.key"), admit="key")  # as an older version did
    journal.append("record", "JournalKeyIntroduced", {"by": "a", "reason": "r", "found": journal.admitted}, None)
    journal.close()
    with pytest.raises(JournalError, match="the journal of simulated play is sealed with a key .* move it aside"):
        simulated_run()
    assert len(read_records(shared)) == before + 1


@pytest.mark.parametrize("replacement", ["link to /dev/zero", "pipe", "large file"])
def test_an_anchor_replaced_by_a_link_a_pipe_or_a_large_file_is_named_not_read_for_ever(tmp_path, replacement):
    """The anchor is read never through a link, never waiting on a pipe and at most one byte more than an
    anchor holds: a link to /dev/zero in its place took 24 GB of memory before the kernel killed ``journal
    verify``, a pipe kept it (and a start) waiting for ever. Each is a problem of the anchor: verify says the
    journal is not intact (exit 1), a start refuses it with the way out, and ``reanchor`` puts an anchor back."""
    path = tmp_path / "j.db"
    journal = Journal(path, fsync=False)
    journal.append("event", "ServiceStarted", {}, None)
    journal.close()
    anchor = _anchor(path)
    anchor.unlink()
    if replacement == "link to /dev/zero":
        anchor.symlink_to("/dev/zero")
        problem = f"anchor {anchor}: a symbolic link, not a file"
    elif replacement == "pipe":
        os.mkfifo(anchor)
        problem = f"anchor {anchor}: not a regular file"
    else:
        anchor.write_bytes(b"\0" * (64 << 20))
        problem = f"anchor {anchor}: not an anchor"
    assert read_anchor(anchor) == {"problem": problem}
    proc = crisscross("journal", "verify", str(path))
    assert proc.returncode == 1 and proc.stdout.rstrip().endswith(problem), proc
    proc = crisscross("journal", "reanchor", "--journal", str(path), "--by", "QA", "--reason", "inquiry 7")
    assert proc.returncode == 0 and anchor.is_file() and not anchor.is_symlink()
    assert read_anchor(anchor)["seq"] == 3  # the admission (2) and its significant event


def test_a_keyed_journal_read_without_its_key_is_noted_on_every_copy_of_what_is_shown(keyed, tmp_path):
    """``recall``, ``meters`` and ``rating`` with ``--journal`` alone cannot check the seals of a journal sealed
    with a key: a copy edited and re-chained without the key looks the same (a forged hole card was shown with
    exit 0 and no word). Each says so in a NOTE line, on standard error and on standard output (not inside
    rating's JSON); a journal kept without a key gets none."""
    path, _, key = keyed
    from controller.journal.key import key_id

    note = (f"NOTE: {path} is sealed with journal key {key_id(key)}, not given here: its seals were not checked, "
            f"and a copy edited and re-chained without the key would look the same (give --config with the "
            f"table's journal_key, or run crisscross journal verify --key)")
    proc = crisscross("recall", "--journal", str(path))
    assert proc.returncode == 0 and proc.stdout.splitlines()[0] == note, proc
    assert f"crisscross recall: {note}" in proc.stderr
    for command in ("meters", "rating"):  # this store's rounds are no real rounds: the note comes before the refusal
        proc = crisscross(command, "--journal", str(path))
        assert f"crisscross {command}: {note}" in proc.stderr, proc
    proc = crisscross("rating", "--journal", str(path), "--format", "json")
    assert note not in proc.stdout and note in proc.stderr
    plain = tmp_path / "plain.db"
    journal = Journal(plain, fsync=False)
    journal.append("event", "ServiceStarted", {}, None)
    journal.close()
    proc = crisscross("recall", "--journal", str(plain))
    assert proc.returncode == 0 and "NOTE" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("key", [None, b"k" * 32])
@pytest.mark.parametrize("head", ["ab" * 32, "0" * 64, 'tête "quoted" \\ back'])
def test_an_anchor_entry_is_its_fields_as_canonical_json_with_the_sum_of_the_others(key, head):
    for seq, slot in ((0, 0), (2**53 - 1, 1), (41, 1)):
        body = {"head": head, "key_id": key_id(key) if key else None,
                "mac": anchor_mac(key, seq, head, slot) if key else None, "seq": seq, "slot": slot}
        plain = json.dumps(body, sort_keys=True, separators=(",", ":"))
        body["sum"] = hashlib.sha256(plain.encode()).hexdigest()[:16]
        text = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("ascii")
        entry = anchor_entry(seq, head, key, slot)
        assert entry == text.ljust(ANCHOR_ENTRY - 1) + b"\n"
        assert json.loads(entry) == body


def test_add_key_journals_a_supervisors_name_and_a_reason_only_as_the_control_interface_takes_them(tmp_path):
    """docs/control.md, "Actions": a reason journaled is one line of printable text of at most 200 characters,
    and ``by`` names a person as the control interface's users are named (letters, digits, . _ -; 1-40). The
    supervisor's decision of ``crisscross journal add-key`` (and ``reanchor``, the same function) is held to that
    rule; a refusal journals nothing."""
    path = tmp_path / "j.db"
    journal = Journal(path)
    journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, None)])
    journal.close()
    init_key(tmp_path / "journal.key")
    key_file = str(tmp_path / "journal.key")
    before = read_records(path)
    for by, reason, said in (
            ("sue", "x" * 100_000, "--reason must be one line of printable text, at most 200 characters; got "
                                   "100,000 characters: nothing journaled"),
            ("sue", "x" * 201, "at most 200 characters; got 201 characters"),
            ("sue", "sealed\nby hand", "got 14 characters, a line break or a control character among them"),
            ("<script>", "seal", "--by must be a user name (letters, digits, . _ -; 1-40 characters), got "
                                 "'<script>': nothing journaled"),
            ("s" * 41, "seal", "--by must be a user name")):
        proc = crisscross("journal", "add-key", "--journal", str(path), "--key", key_file, "--by", by,
                          "--reason", reason)
        assert proc.returncode == 2 and said in proc.stderr, proc.stderr[:300]
        proc = crisscross("journal", "reanchor", "--journal", str(path), "--by", by, "--reason", reason)
        assert proc.returncode == 2 and said in proc.stderr, proc.stderr[:300]
    assert read_records(path) == before
    proc = crisscross("journal", "add-key", "--journal", str(path), "--key", key_file, "--by", "s" * 40,
                      "--reason", "é" * 200)
    assert proc.returncode == 0, proc.stderr
    introduced = read_records(path)[-2]
    assert (introduced["type"], introduced["data"]["by"], introduced["data"]["reason"]) == (
        "JournalKeyIntroduced", "s" * 40, "é" * 200)
