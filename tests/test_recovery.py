"""Crash recovery (controller.journal.recovery): the journal replayed through a fresh round machine rebuilds the state.

The journals here are written by a real ``Controller`` (write-ahead, hash chain) driven by the same inputs the
devices would post, so what is replayed is exactly what the service writes.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import subprocess
import sys
from typing import Any

import pytest

from controller.journal.chain import verify_chain
from controller.journal.recall import rounds_from_records
from controller.journal.reader import read_records
from controller.journal.record import canonical_line
from controller.journal.recovery import ReplayError, recover, replay
from controller.journal.store import Journal
from controller.round import commands as cmd
from controller.round.data import RoundData, SeatState
from controller.round.inputs import JournalDamaged, JournalWhole, ServiceStarted
from controller.round.machine import Round
from controller.service.loop import STOP, Controller
from drivers import events as ev
from tests.journal_helpers import exported_lines, forge, rechain, replace_records
from tests.round_helpers import CONFIG, NY, antes, ready

CROSS = ("Kh", "Kd", "7c", "2s", "9d")
HANDS = {1: ("9h", "9s"), 3: ("4c", "5h")}


class Recorder:
    """Feeds inputs to a machine through ``Controller.process`` (journal first), answering its requests."""

    def __init__(self, path, machine=None, **options):
        self.journal = Journal(path, fsync=False, **options)
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


def play_until(recorder: Recorder, stop_after: str | None = None, *, inject: tuple[str, Any] | None = None) -> None:
    """Start, open, lock two seats, deal, decide and reveal each step (stopping after ``stop_after``); ``inject``
    ``(step, input)`` feeds one more input right after that step ("lock")."""
    r = recorder
    r.feed(ServiceStarted())
    for device in ("shoe", "sensors", "panel"):
        r.feed(ready(device))
    r.feed(ev.ShoeLastDispense(0, ()))
    r.feed(ev.ButtonPressed("open_betting"))
    r.feed(ev.ShuffleComplete(52))
    r.feed(ev.SpotsSnapshot(r.last(cmd.ReadSpots).request_id, ()))  # the layout as betting opens: empty
    layout = [(1, "ante_across", 500), (1, "ante_down", 500), (3, "ante_across", 1000), (3, "ante_down", 1000)]
    for seat, spot, amount in layout:  # the players' chips, as the sensors report them
        r.feed(ev.SpotChanged(seat, spot, amount))
    r.feed(ev.ButtonPressed("no_more_bets"))
    r.feed(ev.SpotsSnapshot(r.last(cmd.ReadSpots).request_id, tuple(layout)))
    if inject is not None and inject[0] == "lock":
        r.feed(inject[1])
    if stop_after == "lock":
        return
    for stack in (CROSS, HANDS[1], HANDS[3]):
        r.feed(ev.StackDispensed(r.last(cmd.Dispense).txn_id, stack))
    if stop_after == "deal":
        return
    for step in ("across", "down", "middle"):
        layout += [(1, step, 500), (3, step, 1000)]
        r.feed(ev.SpotChanged(1, step, 500))
        r.feed(ev.SpotChanged(3, step, 1000))
        r.feed(ev.ButtonPressed("confirm"))
        r.feed(ev.SpotsSnapshot(r.last(cmd.ReadSpots).request_id, tuple(sorted(layout, key=lambda t: (
            t[0], ev.SPOTS.index(t[1]))))))
        r.feed(ev.ButtonPressed("reveal"))
        if stop_after == step:
            return


@pytest.mark.parametrize("stop_after", ["lock", "deal", "across", "down", "middle"])
def test_replay_rebuilds_the_state_the_service_had(tmp_path, stop_after):
    """The machine rebuilt from the journal has the live machine's state, round, wagers, cards and view."""
    recorder = Recorder(tmp_path / "j.db")
    play_until(recorder, stop_after)
    live = recorder.controller.machine
    recorder.journal.close()
    rebuilt = replay(read_records(tmp_path / "j.db"), CONFIG, NY)
    assert rebuilt.missing == []
    machine = rebuilt.machine
    assert (machine.state, machine.round_no, machine.last_txn) == (live.state, live.round_no, live.last_txn)
    assert machine.view() == live.view()
    assert dataclasses.asdict(machine.round) == dataclasses.asdict(live.round)


#: Attributes of ``Round`` that are not its state: the rules it was built with, its graph, one input's outbox and
#: the actions it allowed at that input's end (derived from the state; ``restore`` clears it).
NOT_STATE = {"config", "jurisdiction", "machine", "_outbox", "_allowed_after_input"}


def _state_of(machine):
    return {k: v for k, v in vars(machine).items() if not callable(v) and k not in NOT_STATE}


def test_the_checkpoint_names_every_attribute_of_the_round_machine(tmp_path):
    """A new attribute of ``Round`` or field of ``RoundData``/``SeatState`` must be added to ``Round.checkpoint``
    and ``Round.restore``: otherwise a start from a checkpoint would not rebuild it."""
    machine = Round(CONFIG, NY)
    state = machine.checkpoint()
    assert {name.lstrip("_") for name in _state_of(machine)} == set(state)
    live = Recorder(tmp_path / "j.db")
    play_until(live, "deal")
    data = live.controller.machine.checkpoint()["round"]
    assert {f.name for f in dataclasses.fields(RoundData)} == set(data)
    assert len(data["seats"][0]) == len(dataclasses.fields(SeatState))
    live.journal.close()


@pytest.mark.parametrize("stop_after", ["lock", "deal", "across", "down", "middle", None])
def test_a_machine_restored_from_its_checkpoint_is_the_machine(tmp_path, stop_after):
    """``Round.restore(Round.checkpoint())`` through JSON gives the same state, round, view and next outputs;
    and a start from the journal's checkpoints (one every 7 records here) rebuilds what a full replay does."""
    recorder = Recorder(tmp_path / "j.db", checkpoint_every=7)
    play_until(recorder, stop_after)
    live = recorder.controller.machine
    restored = Round(CONFIG, NY)
    restored.restore(json.loads(json.dumps(live.checkpoint())))
    assert _state_of(restored) == _state_of(live)
    assert restored.handle(ServiceStarted()) == live.handle(ServiceStarted())
    recorder.journal.close()
    journal = Journal(tmp_path / "j.db")
    assert journal.checkpoint is not None and journal.checkpoint.seq > journal.head[0] - 7
    from_checkpoint = recover(journal, CONFIG, NY).machine
    full = replay(read_records(tmp_path / "j.db"), CONFIG, NY).machine
    journal.close()
    assert _state_of(from_checkpoint) == _state_of(full)


#: Fields a checkpoint gained after tables were in play: the machine's, then its round's. Each is restored, when a
#: checkpoint written before it lacks it, as what the machine did before the feature: the shoe deals (dealing by
#: hand), no alert waits (hole-card alerts), nothing is being paid (the payout check), the journal store was never
#: found damaged (its check).
LATER_FIELDS = ("dealing_mode", "alerts_waiting", "private_panel", "journal_damage")
LATER_ROUND_FIELDS = ("manual", "placed", "board", "entry_pending", "held_seats", "totals", "payout_plan", "to_pay",
                      "last_check")


@pytest.mark.parametrize("stop_after", ["lock", "deal", "down"])  # before the settlement: nothing to pay yet
def test_a_checkpoint_written_before_later_features_restores_the_same_machine(tmp_path, stop_after):
    """An upgrade keeps the table's journal: a checkpoint without the fields added since (dealing by hand, the
    payout check, hole-card alerts) restores the machine an automated round without them is."""
    recorder = Recorder(tmp_path / "j.db")
    play_until(recorder, stop_after)
    live = recorder.controller.machine
    recorder.journal.close()
    state = json.loads(json.dumps(live.checkpoint()))
    assert live.dealing_mode == "automated" and not live.alerts_waiting
    older = {k: v for k, v in state.items() if k not in LATER_FIELDS}
    if older["round"] is not None:
        assert not older["round"]["manual"] and not older["round"]["payout_plan"]
        older["round"] = {k: v for k, v in older["round"].items() if k not in LATER_ROUND_FIELDS}
    restored = Round(CONFIG, NY)
    restored.restore(older)
    assert _state_of(restored) == _state_of(live)
    assert restored.handle(ServiceStarted()) == live.handle(ServiceStarted())


def _record_a_one_off_defect(path):
    """Play to the lock, then let the machine fail once (a MemoryError) on the shoe's first stack."""
    recorder = Recorder(path)
    play_until(recorder, "lock")
    machine = recorder.controller.machine
    real = machine.handle
    machine.handle = lambda event: (_ for _ in ()).throw(MemoryError("cannot allocate"))
    recorder.feed(ev.StackDispensed(recorder.last(cmd.Dispense).txn_id, CROSS))
    machine.handle = real
    return recorder, machine


def test_a_defect_recorded_once_does_not_refuse_later_starts(tmp_path):
    """A ``FaultRaised`` of cause ``internal`` (a MemoryError in the machine) that replay does not repeat stands
    as recorded: the journal still replays, the round is held in the same fault, and what followed (the
    supervisor voiding it) replays too."""
    path = tmp_path / "j.db"
    recorder, machine = _record_a_one_off_defect(path)
    assert machine.state == "fault" and machine.fault.detail == "MemoryError: cannot allocate"
    recorder.feed(ev.SupervisorKey(True, "SUP-2"))
    recorder.feed(ev.ButtonPressed("void_round"))
    recorder.journal.close()
    rebuilt = replay(read_records(path), CONFIG, NY).machine
    assert rebuilt.state == "voided" and _state_of(rebuilt) == _state_of(machine)
    journal = Journal(path)
    assert recover(journal, CONFIG, NY).machine.state == "voided"
    journal.close()


def test_a_replay_difference_other_than_a_one_off_defect_still_refuses(tmp_path):
    """An internal fault's record changed into another cause is not a one-off defect: the start is refused."""
    path = tmp_path / "j.db"
    recorder, _ = _record_a_one_off_defect(path)
    recorder.journal.close()
    records = read_records(path)
    fault = next(r for r in records if r["type"] == "FaultRaised")
    fault["data"]["cause"] = "jam"
    with pytest.raises(ReplayError, match=f"journal record {fault['seq']}: journal has FaultRaised"):
        replay(rechain(records), CONFIG, NY)


def test_a_restart_holds_the_round_in_fault_and_the_supervisor_resumes_it(tmp_path):
    """After a restart mid-round: ``fault`` (cause ``restart``) until every device answered, the shoe was asked
    what it last did and a supervisor cleared it; the round then goes on where it stopped."""
    path = tmp_path / "j.db"
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
    path = tmp_path / "j.db"
    recorder = Recorder(path)
    play_until(recorder, "lock")
    recorder.feed(ev.DeviceFault("shoe", "jam", "test"))
    recorder.journal.close()
    machine = replay(read_records(path), CONFIG, NY).machine
    assert machine.state == "fault" and [f.cause for f in machine.faults] == ["jam"]
    machine.handle(ServiceStarted())
    assert machine.state == "fault" and machine.phase == "dealing_cross"


def test_a_damaged_journal_replays_and_is_kept_across_a_restart(tmp_path):
    """``JournalDamaged`` (controller.journal.check) is an input like any other: journaled, and replayed with the
    same outputs (the round in progress settling, the next ``open_betting`` refused), from the first record and
    from the checkpoint of the round's close; a restart keeps it (``ServiceStarted`` does not clear it) and the
    refusal replays after it, until ``JournalWhole``."""
    path = tmp_path / "j.db"
    recorder = Recorder(path)
    play_until(recorder, inject=("lock", JournalDamaged("*** in database main *** Page 57: btreeInitPage() returns "
                                                        "error code 11")))
    recorder.feed(ev.ButtonPressed("open_betting"))
    recorder.feed(ServiceStarted())
    for device in ("shoe", "sensors", "panel"):
        recorder.feed(ready(device))
    recorder.feed(ev.ShoeLastDispense(0, ()))
    recorder.feed(ev.ButtonPressed("open_betting"))
    live = recorder.controller.machine
    recorder.journal.close()
    records = read_records(path)
    assert [r["type"] for r in records].count("RoundOpened") == 1 and live.state == "idle"
    refused = [r["data"] for r in records if r["type"] == "PressRefused"]
    assert [r["button"] for r in refused] == ["open_betting", "open_betting"]
    full = replay(records, CONFIG, NY).machine  # ReplayError if any output differed
    journal = Journal(path)
    assert journal.checkpoint is not None and journal.checkpoint.state["journal_damage"] == live.journal_damage
    from_checkpoint = recover(journal, CONFIG, NY).machine
    journal.close()
    assert _state_of(full) == _state_of(from_checkpoint) == _state_of(live)
    assert full.handle(JournalWhole()) == live.handle(JournalWhole()) and live.may_open_betting()


def test_records_lost_between_an_input_and_its_consequences_are_found(tmp_path):
    """A JSON-lines journal written before the store (one write per record) could lose the records of an input
    after the input itself: replay returns the missing records (the service journals them first); device
    commands that never went out are not among them."""
    recorder = Recorder(tmp_path / "j.db")
    play_until(recorder, "middle")
    recorder.journal.close()
    lines = exported_lines(tmp_path / "j.db")
    last_event = max(i for i, line in enumerate(lines) if '"kind":"event"' in line)
    path = tmp_path / "j.jsonl"
    path.write_text("".join(lines[:last_event + 2]))  # the middle reveal press and its first record only
    rebuilt = replay(read_records(path), CONFIG, NY)
    missing = [type(o).__name__ for o in rebuilt.missing]
    assert missing == ["SeatSettled", "SeatSettled", "RoundClosed"]
    assert rebuilt.machine.state == "closed"


def test_a_commit_keeps_an_input_with_all_its_consequences(tmp_path, mocker):
    """One transaction per input: a commit the store refuses keeps none of the input's records, and no command
    of that input is sent (the shoe is asked to deal only after the commit holding the request returned)."""
    recorder = Recorder(tmp_path / "j.db")
    play_until(recorder, "lock")
    before = read_records(tmp_path / "j.db")
    sent = len(recorder.sent)
    mocker.patch.object(recorder.journal, "_insert", side_effect=OSError(28, "No space left on device"))
    with pytest.raises(OSError):
        recorder.feed(ev.StackDispensed(recorder.last(cmd.Dispense).txn_id, CROSS))
    assert len(recorder.sent) == sent  # the next Dispense never left
    recorder.journal.close()
    assert read_records(tmp_path / "j.db") == before


def test_a_rechained_edit_that_the_rules_contradict_is_refused(tmp_path):
    """An edited settlement re-chained so the hash chain verifies, checkpoints and anchor removed, still does
    not replay: the rules give another result, and the service refuses to start on it (exit 2, one line)."""
    path = tmp_path / "j.db"
    recorder = Recorder(path)
    play_until(recorder, "middle")
    recorder.journal.close()
    records = read_records(path)
    settled = next(r for r in records if r["type"] == "SeatSettled")
    settled["data"]["settlement"]["net"] += 100
    replace_records(path, rechain(records), drop=("checkpoints",))
    (tmp_path / "j.db.anchor").unlink()
    assert verify_chain(read_records(path)) is None  # the chain alone does not see it
    with pytest.raises(ReplayError, match=f"journal record {settled['seq']}: journal has SeatSettled"):
        replay(read_records(path), CONFIG, NY)
    proc = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "1",
                           "--journal", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "journal has SeatSettled" in proc.stderr


def test_recall_of_a_journal_that_does_not_verify_says_so_on_the_copy_and_in_the_status(tmp_path):
    """A supervisor settling a dispute from a printout must see that the journal was altered."""
    path = tmp_path / "j.db"
    recorder = Recorder(path)
    play_until(recorder)
    recorder.journal.close()
    settled = next(r for r in read_records(path) if r["type"] == "SeatSettled")
    data = canonical_line(settled["data"]).replace('"net":', '"net":1', 1)
    forge(path, ("UPDATE records SET data = ? WHERE seq = ?", (data, settled["seq"])))
    proc = subprocess.run([sys.executable, "-m", "controller", "recall", "--journal", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    seq = settled["seq"]
    warning = f"WARNING: {path} does not verify: line {seq}, seq {seq}: edited: its content does not match its hash"
    assert proc.stdout.startswith(warning) and warning in proc.stderr
    assert "Round 1 (closed)" in proc.stdout


def test_recall_refuses_a_missing_journal_and_warns_of_a_torn_last_record_of_a_copy(tmp_path):
    """A mistyped path is not "no rounds"; a JSON-lines copy whose last line is cut short does not verify
    (``journal verify``: truncated, exit 1): its rounds before that line are shown under the warning, exit 1
    (docs/commands.md, "crisscross recall")."""
    missing = tmp_path / "nope.db"
    proc = subprocess.run([sys.executable, "-m", "controller", "recall", "--journal", str(missing)],
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"crisscross recall: {missing}: no such file\n")
    assert not missing.exists()
    recorder = Recorder(tmp_path / "j.db")
    play_until(recorder)
    recorder.journal.close()
    path = tmp_path / "copy.jsonl"
    path.write_text("".join(exported_lines(tmp_path / "j.db")) + '{"seq": 99999, "kind": "rec')
    proc = subprocess.run([sys.executable, "-m", "controller", "recall", "--journal", str(path)],
                          capture_output=True, text=True, timeout=60)
    whole = len(exported_lines(tmp_path / "j.db"))
    assert proc.returncode == 1 and "Round 1 (closed)" in proc.stdout
    warning = f"WARNING: {path} does not verify: line {whole + 1}: truncated: "
    assert proc.stdout.startswith(warning) and f"crisscross recall: {warning}" in proc.stderr


@pytest.mark.parametrize("alerts", [[], ["--alerts"]])
def test_recall_refuses_an_empty_file_and_one_of_zeros_as_journal_verify_does(tmp_path, alerts):
    """A file emptied or zeroed by a power cut is not a journal without rounds or alerts: exit 2, one line, as
    ``journal verify`` says it."""
    from tests.cli_helpers import crisscross

    empty, zeros = tmp_path / "empty.db", tmp_path / "zeros.db"
    empty.write_bytes(b"")
    zeros.write_bytes(bytes(4096))
    for path, says in ((empty, "the file is empty: it is not a journal"),
                       (zeros, "the file is all zeros: its records were lost")):
        proc = crisscross("recall", "--journal", str(path), *alerts)
        assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc
        assert proc.stderr.startswith(f"crisscross recall: {path}: {says}")
    verified = crisscross("journal", "verify", str(zeros))
    assert verified.returncode == 2 and "the file is all zeros: its records were lost" in verified.stderr


def test_recall_without_journal_points_at_simulated_play_when_the_tables_journal_is_missing(tmp_path):
    """Simulated play is kept apart from a table's history; a reader who looks for it in the table's journal is
    told where it is."""
    import os

    env = {name: value for name, value in os.environ.items() if name not in ("CRISSCROSS_CONFIG", "STATE_DIRECTORY")}
    env["XDG_STATE_HOME"] = str(tmp_path)
    run = [sys.executable, "-m", "controller", "recall"]
    proc = subprocess.run(run, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2 and proc.stderr.endswith("journal.db: no such file\n"), proc.stderr
    simulated = tmp_path / "crisscross" / "simulated" / "journal.db"
    simulated.parent.mkdir(parents=True)
    recorder = Recorder(simulated)
    play_until(recorder)
    recorder.journal.close()
    proc = subprocess.run(run, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2 and f"(simulated play is in {simulated}: --journal {simulated})" in proc.stderr
    proc = subprocess.run([*run, "--journal", str(simulated)], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0 and "Round 1 (closed)" in proc.stdout


def test_recall_shows_the_last_rounds_step_by_step(tmp_path):
    """``crisscross recall --last N``: each round in order with the locked bets, the cards in dealing order,
    decisions, reveals, settlement, and faults with who cleared them."""
    path = tmp_path / "j.db"
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


def test_a_device_faults_detail_is_bounded(tmp_path):
    """A link loss described at length (35,000 abandoned frames) is cut before it is journaled and applied."""
    recorder = Recorder(tmp_path / "j.db")
    play_until(recorder, "lock")
    recorder.feed(ev.DeviceFault("shoe", "link_lost", "frame abandoned; " * 35_000))
    recorder.journal.close()
    records = read_records(tmp_path / "j.db")
    event = next(r for r in records if r["type"] == "DeviceFault")
    fault = next(r for r in records if r["type"] == "FaultRaised")
    assert len(event["data"]["detail"]) < 250 and event["data"]["detail"].endswith("more characters)")
    assert fault["data"]["detail"] == event["data"]["detail"]
    assert replay(records, CONFIG, NY).machine.fault.detail == event["data"]["detail"]


def test_a_new_store_beside_an_old_json_lines_journal_is_refused(tmp_path):
    """The default journal moved from var/journal.jsonl to var/journal.db: a table's history left in the old
    file must be imported, not silently followed by a second history."""
    from controller.journal.record import JournalError
    from controller.service.opening import open_journal

    (tmp_path / "journal.jsonl").write_text("")
    with pytest.raises(JournalError, match="crisscross journal import"):
        open_journal(CONFIG, tmp_path / "journal.db")
    assert not (tmp_path / "journal.db").exists()


def test_inputs_that_arrived_together_share_one_commit_in_order(tmp_path, mocker):
    """A burst of chip changes (the sensors' line rate) is committed in groups, not one fsync each; every input
    is journaled once, in the order it arrived, and the stop marker after them is still obeyed."""
    journal = Journal(tmp_path / "j.db", fsync=False)
    events: queue.Queue = queue.Queue()
    controller = Controller(Round(CONFIG, NY), journal, {}, events)
    commits = mocker.spy(journal, "commit")
    for n in range(100):
        events.put(ev.SpotChanged(1 + n % 6, "ante_across", n + 1))
    events.put(STOP)
    assert controller.run() == 0
    journal.close()
    amounts = [r["data"]["amount"] for r in read_records(tmp_path / "j.db") if r["type"] == "SpotChanged"]
    assert amounts == list(range(1, 101))
    assert commits.call_count == 1 + 2 + 1  # ServiceStarted, 64 + 36 chip changes, ServiceStopped



def test_a_round_resumed_after_a_restart_is_summed_up_from_its_records_before_and_after_it(tmp_path):
    """The round handed on at its close (``on_round_closed``: the summary, the rating, the hole-card detector) holds
    every record of the round, those journaled before the restart included, as the journal has them."""
    path = tmp_path / "j.db"
    recorder = Recorder(path)
    play_until(recorder, "across")
    recorder.journal.close()
    journal = Journal(path, fsync=False)
    closed = []
    controller = Controller(recover(journal, CONFIG, NY), journal, {}, queue.Queue(), on_round_closed=closed.append)
    sent: list = []
    controller._send = sent.append
    for event in (ServiceStarted(), *(ready(device) for device in ("shoe", "sensors", "panel"))):
        controller.process(event)
    controller.process(ev.ShoeLastDispense(controller.machine.last_txn, HANDS[3]))
    controller.process(ev.SupervisorKey(True, "SUP-4"))
    controller.process(ev.ButtonPressed("clear_fault"))
    controller.process(ev.SupervisorKey(False, None))
    layout = [(1, spot, 500) for spot in ("ante_across", "ante_down", "across")] + [
        (3, spot, 1000) for spot in ("ante_across", "ante_down", "across")]
    def answer_read() -> None:
        read = next(c for c in reversed(sent) if isinstance(c, cmd.ReadSpots))
        controller.process(ev.SpotsSnapshot(read.request_id, tuple(sorted(layout, key=lambda t: (
            t[0], ev.SPOTS.index(t[1]))))))

    answer_read()  # the layout read again after the restart
    for step in ("down", "middle"):  # as ``play_until`` plays them
        layout += [(1, step, 500), (3, step, 1000)]
        controller.process(ev.SpotChanged(1, step, 500))
        controller.process(ev.SpotChanged(3, step, 1000))
        controller.process(ev.ButtonPressed("confirm"))
        answer_read()
        controller.process(ev.ButtonPressed("reveal"))
    journal.close()
    records = read_records(path)
    assert controller.machine.state == "closed"
    assert [r.round_no for r in closed] == [1]
    assert closed[0] == rounds_from_records(records)[1]
    assert {"RoundOpened", "WagersLocked", "FaultRaised", "FaultCleared", "RoundClosed"} <= {
        r["type"] for r in records if r["round"] == 1}
