"""Crash recovery (controller.recovery): the journal replayed through a fresh round machine rebuilds the state.

The journals here are written by a real ``Controller`` (write-ahead, hash chain) driven by the same inputs the
devices would post, so what is replayed is exactly what the service writes.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import subprocess
import sys

import pytest

from controller import commands as cmd
from controller.inputs import ServiceStarted
from controller.journal import GENESIS, Journal, read_records, record_hash, verify_chain
from controller.recovery import ReplayError, replay
from controller.round import Round
from controller.service import Controller
from drivers import events as ev
from tests.round_helpers import CONFIG, NY, antes, ready

CROSS = ("Kh", "Kd", "7c", "2s", "9d")
HANDS = {1: ("9h", "9s"), 3: ("4c", "5h")}


class Recorder:
    """Feeds inputs to a machine through ``Controller.process`` (journal first), answering its requests."""

    def __init__(self, path, machine=None):
        self.journal = Journal(path, fsync=False)
        self.controller = Controller(machine or Round(CONFIG, NY), self.journal, {}, queue.Queue())
        self.controller._send = self._capture  # no device: keep the commands
        self.sent: list = []

    def _capture(self, command):
        self.sent.append(command)

    def feed(self, event):
        before = len(self.sent)
        self.controller.process(event)
        return self.sent[before:]

    def last(self, kind):
        return next(c for c in reversed(self.sent) if isinstance(c, kind))


def play_until(recorder: Recorder, stop_after: str | None = None) -> None:
    """Start, open, lock two seats, deal, decide and reveal each step (stopping after ``stop_after``)."""
    r = recorder
    r.feed(ServiceStarted())
    for device in ("shoe", "sensors", "panel"):
        r.feed(ready(device))
    r.feed(ev.ShoeLastDispense(0, ()))
    r.feed(ev.ButtonPressed("open_betting"))
    r.feed(ev.ShuffleComplete(52))
    r.feed(ev.ButtonPressed("no_more_bets"))
    layout = [(1, "ante_across", 500), (1, "ante_down", 500), (3, "ante_across", 1000), (3, "ante_down", 1000)]
    r.feed(ev.SpotsSnapshot(r.last(cmd.ReadSpots).request_id, tuple(layout)))
    if stop_after == "lock":
        return
    for stack in (CROSS, HANDS[1], HANDS[3]):
        r.feed(ev.StackDispensed(r.last(cmd.Dispense).txn_id, stack))
    if stop_after == "deal":
        return
    for step in ("across", "down", "middle"):
        r.feed(ev.ButtonPressed("confirm"))
        layout += [(1, step, 500), (3, step, 1000)]
        r.feed(ev.SpotsSnapshot(r.last(cmd.ReadSpots).request_id, tuple(sorted(layout, key=lambda t: (
            t[0], ev.SPOTS.index(t[1]))))))
        r.feed(ev.ButtonPressed("reveal"))
        if stop_after == step:
            return


@pytest.mark.parametrize("stop_after", ["lock", "deal", "across", "down", "middle"])
def test_replay_rebuilds_the_state_the_service_had(tmp_path, stop_after):
    """The machine rebuilt from the journal has the live machine's state, round, wagers, cards and view."""
    recorder = Recorder(tmp_path / "j.jsonl")
    play_until(recorder, stop_after)
    live = recorder.controller.machine
    recorder.journal.close()
    rebuilt = replay(read_records(tmp_path / "j.jsonl"), CONFIG, NY)
    assert rebuilt.missing == []
    machine = rebuilt.machine
    assert (machine.state, machine.round_no, machine.last_txn) == (live.state, live.round_no, live.last_txn)
    assert machine.view() == live.view()
    assert dataclasses.asdict(machine.round) == dataclasses.asdict(live.round)


def test_a_restart_holds_the_round_in_fault_and_the_supervisor_resumes_it(tmp_path):
    """After a restart mid-round: ``fault`` (cause ``restart``) until every device answered, the shoe was asked
    what it last did and a supervisor cleared it; the round then goes on where it stopped."""
    path = tmp_path / "j.jsonl"
    recorder = Recorder(path)
    play_until(recorder, "across")
    recorder.journal.close()
    rebuilt = replay(read_records(path), CONFIG, NY)
    again = Recorder(path, rebuilt.machine)
    again.feed(ServiceStarted())
    machine = again.controller.machine
    assert machine.state == "fault" and machine.fault.cause == "restart"
    for device in ("shoe", "sensors", "panel"):
        again.feed(ready(device))
    assert [type(c) for c in again.sent if isinstance(c, (cmd.QueryLast, cmd.Dispense, cmd.ReadSpots))] == [
        cmd.QueryLast]  # the shoe is asked before anything else
    assert "clear_fault" not in machine.allowed_actions()  # not before the shoe answered
    again.feed(ev.ShoeLastDispense(machine.last_txn, HANDS[3]))
    again.feed(ev.SupervisorKey(True, "SUP-4"))
    again.feed(ev.ButtonPressed("clear_fault"))
    assert machine.state == "down_decision"
    again.journal.close()
    records = read_records(path)
    cleared = [r["data"] for r in records if r["type"] == "FaultCleared"]
    assert cleared == [{"round_no": 1, "causes": ["restart"], "by": "SUP-4", "role": "supervisor",
                        "resumed": "down_decision"}]
    # and the fault and its clearing replay too: a third start sees the same state
    assert replay(records, CONFIG, NY).machine.state == "down_decision"


def test_a_fault_persists_across_a_restart(tmp_path):
    """Faults persist across a restart: a jammed round is still held after replay and a new start."""
    path = tmp_path / "j.jsonl"
    recorder = Recorder(path)
    play_until(recorder, "lock")
    recorder.feed(ev.DeviceFault("shoe", "jam", "test"))
    recorder.journal.close()
    machine = replay(read_records(path), CONFIG, NY).machine
    assert machine.state == "fault" and [f.cause for f in machine.faults] == ["jam"]
    machine.handle(ServiceStarted())
    assert machine.state == "fault" and machine.phase == "dealing_cross"


def test_records_lost_between_an_input_and_its_consequences_are_found(tmp_path):
    """A crash after an input was journaled but before all its records were: replay returns the missing
    records (the service journals them first); device commands that never went out are not among them."""
    path = tmp_path / "j.jsonl"
    recorder = Recorder(path)
    play_until(recorder, "middle")
    recorder.journal.close()
    lines = path.read_text().splitlines(keepends=True)
    last_event = max(i for i, line in enumerate(lines) if '"kind":"event"' in line)
    kept = lines[:last_event + 2]  # the middle reveal press and its first record only
    path.write_text("".join(kept))
    rebuilt = replay(read_records(path), CONFIG, NY)
    missing = [type(o).__name__ for o in rebuilt.missing]
    assert missing == ["SeatSettled", "SeatSettled", "RoundClosed"]
    assert rebuilt.machine.state == "closed"


def _rechain(records):
    """Recompute every ``prev``/``hash`` so the chain verifies again (what a forger with the file would do)."""
    prev = GENESIS
    for record in records:
        record["prev"] = prev
        record["hash"] = record_hash(record)
        prev = record["hash"]
    return records


def test_a_rechained_edit_that_the_rules_contradict_is_refused(tmp_path):
    """An edited settlement re-chained so the hash chain verifies still does not replay: the rules give
    another result, and the service refuses to start on it (exit 2, one line)."""
    path = tmp_path / "j.jsonl"
    recorder = Recorder(path)
    play_until(recorder, "middle")
    recorder.journal.close()
    records = read_records(path)
    settled = next(r for r in records if r["type"] == "SeatSettled")
    settled["data"]["settlement"]["net"] += 100
    records = _rechain(records)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    assert verify_chain(read_records(path)) is None  # the chain alone does not see it
    with pytest.raises(ReplayError, match=f"journal record {settled['seq']}: journal has SeatSettled"):
        replay(read_records(path), CONFIG, NY)
    proc = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "1",
                           "--journal", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "journal has SeatSettled" in proc.stderr


def test_recall_of_a_journal_that_does_not_verify_says_so_on_the_copy_and_in_the_status(tmp_path):
    """A supervisor settling a dispute from a printout must see that the journal was altered."""
    path = tmp_path / "j.jsonl"
    recorder = Recorder(path)
    play_until(recorder)
    recorder.journal.close()
    lines = path.read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if '"type":"SeatSettled"' in line)
    lines[index] = lines[index].replace('"net":', '"net":1', 1)
    path.write_text("".join(lines))
    proc = subprocess.run([sys.executable, "-m", "controller", "recall", "--journal", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    warning = f"WARNING: {path} does not verify: record {index + 1}: content does not match its hash (edited)"
    assert proc.stdout.startswith(warning) and warning in proc.stderr
    assert "Round 1 (closed)" in proc.stdout


def test_recall_refuses_a_missing_journal_and_notes_a_torn_last_record(tmp_path):
    """A mistyped path is not "no rounds"; a record a crash cut short is not tampering, but it is said."""
    missing = tmp_path / "nope.jsonl"
    proc = subprocess.run([sys.executable, "-m", "controller", "recall", "--journal", str(missing)],
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"crisscross recall: {missing}: no such file\n")
    assert not missing.exists()
    path = tmp_path / "j.jsonl"
    recorder = Recorder(path)
    play_until(recorder)
    recorder.journal.close()
    with path.open("ab") as handle:
        handle.write(b'{"seq": 99999, "kind": "rec')
    proc = subprocess.run([sys.executable, "-m", "controller", "recall", "--journal", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Round 1 (closed)" in proc.stdout
    assert proc.stderr == (f"crisscross recall: note: {path} ends with an incomplete record, never applied (a crash "
                           f"cut it short; the next start moves it to j.jsonl.torn); it is not shown\n")


def test_recall_shows_the_last_rounds_step_by_step(tmp_path):
    """``crisscross recall --last N``: each round in order with the locked bets, the cards in dealing order,
    decisions, reveals, settlement, and faults with who cleared them."""
    path = tmp_path / "j.jsonl"
    recorder = Recorder(path)
    play_until(recorder)
    recorder.feed(ev.DeviceFault("sensors", "link_lost", "unplugged"))
    recorder.feed(ready("sensors"))
    recorder.feed(ev.SupervisorKey(True, "SUP-9"))
    recorder.feed(ev.ButtonPressed("clear_fault"))
    recorder.journal.close()
    proc = subprocess.run([sys.executable, "-m", "controller", "recall", "--last", "10", "--journal", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    order = ["Round 1 (closed)", "no more bets; locked: seat 1: ante_across 500, ante_down 500",
             "stack 0 dealt (the cross): Kh Kd 7c 2s 9d", "stack 1 dealt to seat 1: 9h 9s",
             "across decision, seat 1: bet 500", "across revealed: Kh Kd", "middle revealed: 9d",
             "seat 3 settled:", "seat 1 settled:", "round closed:", "FAULT link_lost (sensors)",
             "fault link_lost cleared by SUP-9 (supervisor)"]
    positions = [text.find(part) for part in order]
    assert -1 not in positions, [p for p, i in zip(order, positions) if i == -1]
    assert positions == sorted(positions)
