"""The table's locks (NY 9 NYCRR 5319.54(b): a supervisor may disable the table; AGCO 11.1.3) and test mode (NY 9
NYCRR 5319.58), through the round machine (controller/round/table_locks.py): every condition that keeps a round
from opening is a named lock, the graph asks one function, locks survive a restart, and test rounds move the
test meters and no lifetime meter but ``rounds_test``.

The wagers of a round are known from what the test puts on the layout (the stakes placed), not from the meters.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any

import pytest

from controller.control.checks import check_action
from controller.control.server import public_record
from controller.journal.reader import read_records
from controller.journal.recovery import replay
from controller.round import commands as cmd
from controller.round.inputs import ACTIONS, OperatorAction, ServiceStarted, input_from_record
from controller.round.machine import Round
from controller.round.meters import Meters
from controller.round.table_locks import TEST_MARK
from drivers import events as ev
from tests.round_helpers import CONFIG, NY, TableDriver, antes, of_type, play_round

CROSS = ("9c", "4h", "8d", "5s", "2c")
HANDS = {1: ("7c", "7d"), 6: ("Jh", "Js")}
WAGERS = {1: antes(500), 6: antes(500, bonus=100)}
DECISIONS = {"across": {1: 500, 6: 1000}, "down": {1: 500, 6: 500}, "middle": {1: 500, 6: 500}}
#: the stakes of a round of WAGERS and DECISIONS: antes 2 x 500 each, the bonus 100, then the decisions' bets
STAKES = 2 * 500 + 2 * 500 + 100 + sum(sum(bets.values()) for bets in DECISIONS.values())


class Desk(TableDriver):
    """A ``TableDriver`` with the control interface's actions of a supervisor (``sue``) and a dealer (``dan``)."""

    def supervisor(self, action: str, **fields: Any) -> list[Any]:
        return self.send(OperatorAction(action, "sue", "supervisor", **fields))

    def dealer(self, action: str, **fields: Any) -> list[Any]:
        return self.send(OperatorAction(action, "dan", "dealer", **fields))

    def play(self) -> None:
        play_round(WAGERS, CROSS, HANDS, DECISIONS, driver=self)
        assert self.state == "closed"
        self.place({})  # the chips taken off the layout after the settlement

    def display(self) -> str:
        return self.machine.view()["display"]


@pytest.fixture
def desk() -> Desk:
    table = Desk(Round(CONFIG, NY))
    table.start()
    return table


def lock_names(table: Desk) -> list[str]:
    return [lock["name"] for lock in table.machine.view()["locks"]]


def test_a_disabled_table_opens_no_round_until_a_supervisor_enables_it(desk):
    assert desk.machine.view()["locks"] == []
    desk.supervisor("disable_table", code="maintenance", reason="felt replaced")
    (disabled,) = of_type(desk.last, cmd.TableDisabled)
    assert (disabled.code, disabled.by, disabled.role, disabled.reason) == ("maintenance", "sue", "supervisor",
                                                                            "felt replaced")
    (lock,) = desk.machine.view()["locks"]
    assert lock == {"name": "disabled", "priority": 4, "source": "supervisor", "set_by": "sue",
                    "reason": "maintenance", "keeps": "live rounds", "text": "Table disabled: maintenance"}
    assert desk.display() == "Table disabled: maintenance"
    assert "open_betting" not in desk.machine.view()["allowed_actions"]
    assert "open_betting" not in desk.machine.view()["lamps"]
    desk.press("open_betting")
    (refused,) = of_type(desk.last, cmd.PressRefused)
    assert "disabled (maintenance)" in refused.reason
    assert desk.state == "idle" and not of_type(desk.last, cmd.RoundOpened)
    desk.supervisor("enable_table", reason="felt done")
    (enabled,) = of_type(desk.last, cmd.TableEnabled)
    assert (enabled.code, enabled.by) == ("maintenance", "sue")
    assert desk.machine.view()["locks"] == [] and desk.display() == "Table ready"
    desk.open_betting()
    assert desk.state == "betting"


def test_only_a_supervisor_disables_and_the_panel_has_no_key_for_it(desk):
    desk.dealer("disable_table", code="closed")
    (refused,) = of_type(desk.last, cmd.PressRefused)
    assert "needs a supervisor" in refused.reason and not of_type(desk.last, cmd.TableDisabled)
    desk.send(ev.SupervisorKey(True, "SUP-1"))
    lamps = desk.machine.view()["lamps"]
    assert "open_betting" in lamps and not {"disable_table", "enable_table", "enter_test_mode"} & set(lamps)
    assert "disable_table" in desk.machine.view()["allowed_actions"]
    desk.supervisor("enable_table")  # nothing to enable: the graph does not allow it
    assert of_type(desk.last, cmd.PressRefused) and not of_type(desk.last, cmd.TableEnabled)


def test_disabling_during_a_round_lets_it_settle_and_keeps_the_next_from_opening(desk):
    desk.open_betting()
    desk.lock(WAGERS)
    desk.supervisor("disable_table", code="closed")
    assert of_type(desk.last, cmd.TableDisabled)[0].round_no == 1
    assert desk.state == "dealing_cross"  # the round goes on
    desk.deal(CROSS, HANDS)
    for step in ("across", "down", "middle"):
        desk.decide(step, DECISIONS[step])
        desk.reveal()
    assert desk.state == "closed"
    assert desk.display() == "Round 1 settled. Table disabled: closed"
    desk.press("open_betting")
    assert of_type(desk.last, cmd.PressRefused) and desk.state == "closed"


def test_the_locks_are_listed_highest_first_and_the_panel_shows_the_highest(desk):
    from controller.round.inputs import JournalDamaged, JournalWhole

    desk.supervisor("disable_table", code="count")
    desk.send(JournalDamaged("*** in database main ***"))
    assert lock_names(desk) == ["journal_damaged", "disabled"]
    assert desk.display() == "Journal damaged: restore it"
    desk.send(ev.DeviceFault("shoe", "jam"))
    assert lock_names(desk) == ["journal_damaged", "fault", "disabled"]
    fault = desk.machine.view()["locks"][1]
    assert (fault["source"], fault["reason"]) == ("shoe", "jam")
    desk.supervisor("clear_fault", answers=desk.machine.answers()["clear_fault"])
    desk.send(JournalWhole())
    assert lock_names(desk) == ["disabled"]
    assert desk.display() == "Journal whole. Table disabled: count"


def test_the_devices_not_yet_answered_are_a_lock_of_their_own():
    table = Desk(Round(CONFIG, NY))
    table.send(ServiceStarted("table", "test"))
    assert lock_names(table) == ["self_check"]
    table.start()
    assert lock_names(table) == []


def test_the_locks_survive_a_restart_in_the_checkpoint_and_in_a_replay(desk):
    desk.supervisor("disable_table", code="dispute")
    desk.supervisor("enter_test_mode")
    restored = Round(CONFIG, NY)
    restored.restore(json.loads(json.dumps(desk.machine.checkpoint())))
    again = Desk(restored)
    again.send(ServiceStarted("table", "test"))
    again.start()
    assert lock_names(again) == ["disabled", "test_mode"]
    assert again.machine.view()["test_mode"] is True
    assert again.display().startswith(TEST_MARK)
    # the journaled inputs alone give the same locks
    inputs = [OperatorAction("disable_table", "sue", "supervisor", code="dispute"),
              OperatorAction("enter_test_mode", "sue", "supervisor")]
    fresh = Desk(Round(CONFIG, NY))
    fresh.start()
    for event in inputs:
        fresh.send(input_from_record({"type": "OperatorAction", **event.__dict__}))
    assert fresh.machine.table_locks() == desk.machine.table_locks()


def test_test_rounds_move_the_test_meters_and_no_lifetime_meter_but_rounds_test(desk):
    desk.play()  # one live round
    lifetime = desk.machine.meters.lifetime()
    assert lifetime["drop"] == STAKES
    desk.supervisor("enter_test_mode", reason="shoe serviced")
    assert desk.display() == TEST_MARK + "Table ready"
    desk.play()
    desk.play()
    opened = of_type(desk.outputs, cmd.RoundOpened)
    assert [o.test for o in opened] == [False, True, True]
    after = desk.machine.meters.lifetime()
    assert after == {**lifetime, "rounds_test": 2}
    test = desk.machine.meters.test()
    assert test["drop"] == 2 * STAKES and test["rounds_closed"] == 2 and "rounds_test" not in test
    assert test["cards_dispensed"] == 2 * (5 + 2 * 2)
    assert desk.machine.meters.since() == {"power_up": 1, "shoe_service": 1}  # counters of live rounds only
    # the test round's settlement is the live round's: the test meters of two test rounds are twice the lifetime's
    assert test["win"] == 2 * lifetime["win"]
    desk.supervisor("leave_test_mode")
    (left,) = of_type(desk.last, cmd.TestModeLeft)
    assert left.rounds == 2 and left.by == "sue"
    assert not desk.display().startswith(TEST_MARK) and desk.machine.view()["test_mode"] is False
    desk.play()
    assert desk.machine.meters.lifetime()["drop"] == 2 * STAKES
    # the records alone give the same meters (the audit's way)
    records = [{"type": type(o).__name__, "data": o.__dict__} for o in desk.outputs]
    assert Meters.from_records(records).to_json() == desk.machine.meters.to_json()


def test_in_test_mode_the_panel_shows_test_at_all_times(desk):
    desk.supervisor("enter_test_mode")
    play_round(WAGERS, CROSS, HANDS, DECISIONS, driver=desk)
    entered = [i for i, o in enumerate(desk.outputs) if isinstance(o, cmd.TestModeEntered)][0]
    texts = [o.text for o in desk.outputs[entered:] if isinstance(o, cmd.Display)]
    assert len(texts) >= 8 and all(text.startswith(TEST_MARK) for text in texts), texts
    desk.press("confirm")  # a refusal too
    assert of_type(desk.last, cmd.Display)[0].text.startswith(TEST_MARK + "Not now")


def test_test_mode_is_entered_between_rounds_only_and_left_during_a_round_once_it_ends(desk):
    """A round is wholly a test round or not (NY 9 NYCRR 5319.58): test mode is entered between rounds only;
    asked to leave during a test round, the table leaves it when that round ends, not before."""
    desk.open_betting()
    desk.supervisor("enter_test_mode")
    assert of_type(desk.last, cmd.PressRefused) and desk.machine.test_mode is None
    desk.supervisor("void_round", code="other")
    desk.supervisor("enter_test_mode")
    assert of_type(desk.last, cmd.TestModeEntered)
    desk.place({})
    desk.open_betting()
    desk.supervisor("leave_test_mode", reason="tests done")
    (leaving,) = of_type(desk.last, cmd.TestModeLeaving)
    assert (leaving.round_no, leaving.by, leaving.role, leaving.reason) == (2, "sue", "supervisor", "tests done")
    assert not of_type(desk.last, cmd.TestModeLeft) and desk.machine.test_mode is not None
    assert desk.display().startswith(TEST_MARK)  # the round goes on as the test round it is
    play_round(WAGERS, CROSS, HANDS, DECISIONS, driver=desk, opened=True)
    assert desk.state == "closed" and desk.machine.test_mode is None
    ends = [type(o).__name__ for o in desk.outputs if isinstance(o, (cmd.RoundClosed, cmd.TestModeLeft))]
    assert ends[-2:] == ["RoundClosed", "TestModeLeft"]
    (left,) = of_type(desk.outputs, cmd.TestModeLeft)
    assert (left.rounds, left.by, left.role, left.reason) == (1, "sue", "supervisor", "tests done")
    assert not desk.display().startswith(TEST_MARK)
    meters = desk.machine.meters
    assert meters.lifetime()["rounds_test"] == 1 and meters.lifetime()["rounds_closed"] == 0


def test_a_disabled_table_plays_test_rounds_and_is_still_disabled_after_them(desk):
    desk.supervisor("disable_table", code="maintenance")
    desk.supervisor("enter_test_mode")
    assert "open_betting" in desk.machine.allowed_actions()
    desk.play()
    assert desk.machine.meters.lifetime()["rounds_closed"] == 0
    desk.supervisor("leave_test_mode")
    assert lock_names(desk) == ["disabled"] and desk.display() == "Table disabled: maintenance"
    assert "open_betting" not in desk.machine.allowed_actions()


def test_a_test_round_held_by_a_restart_and_voided_counts_as_a_test_round(desk):
    desk.supervisor("enter_test_mode")
    desk.open_betting()
    desk.lock(WAGERS)
    restored = Round(CONFIG, NY)
    restored.restore(json.loads(json.dumps(desk.machine.checkpoint())))
    again = Desk(restored)
    again.send(ServiceStarted("table", "test"))
    again.start()
    assert again.state == "fault"
    again.supervisor("void_round", code="device")
    meters = again.machine.meters
    assert meters.lifetime()["rounds_voided"] == 0 and meters.lifetime()["rounds_test"] == 1
    assert meters.test()["rounds_voided"] == 1


def _rounds_metric(metrics: Any, name: str) -> dict[str, float]:
    """The samples of a rounds metric of ``metrics``' registry by outcome, the zeros left out."""
    return {s.labels["outcome"]: s.value for family in metrics.registry.collect() for s in family.samples
            if s.name == name and s.value}


def _metrics_of(outputs: list[Any], *, in_test: bool = False) -> Any:
    """A ``ServiceMetrics`` (``in_test`` as the service gives it at start) that read the records of ``outputs``."""
    from controller.service.metrics import ServiceMetrics

    metrics = ServiceMetrics(lambda: 0, dict, in_test=in_test)
    for output in outputs:
        metrics.record({"type": type(output).__name__, "data": output.__dict__})
    return metrics


def _restarted_and_voided(desk: Desk, config: Any) -> tuple[Desk, Any]:
    """The table of ``desk`` restarted from its checkpoint (``ServiceStarted``, the devices' answers: the round in
    progress held in fault) and the round voided by a supervisor; with the metrics of that run, built as the
    service builds them at start (``in_test`` of the meters restored)."""
    restored = Round(config, NY)
    restored.restore(json.loads(json.dumps(desk.machine.checkpoint())))
    in_test = restored.meters.in_test  # as the service reads it before it starts
    again = Desk(restored)
    again.send(ServiceStarted("table", "test"))
    again.start()
    again.supervisor("void_round", code="device")
    return again, _metrics_of(again.outputs, in_test=in_test)


def test_the_rounds_metric_counts_test_rounds_apart_from_closed_ones_over_a_restart(desk):
    """crisscross_rounds_total counts a test round's end (no play, NY 9 NYCRR 5319.58) as outcome ``test``, never
    ``closed`` or ``voided``, as the lifetime meters count it in rounds_test alone (docs/operations.md,
    "Metrics"); a test round held over a restart and voided after it is a test round too. The expected counts
    are the rounds this test plays: two live, two in test mode, one in test mode held by a restart."""
    desk.play()
    desk.play()
    desk.supervisor("enter_test_mode")
    desk.play()
    desk.play()
    desk.open_betting()
    desk.lock(WAGERS)
    metrics = _metrics_of(desk.outputs)
    assert _rounds_metric(metrics, "crisscross_rounds_total") == {"closed": 2, "test": 2}
    again, after = _restarted_and_voided(desk, CONFIG)
    assert _rounds_metric(after, "crisscross_rounds_total") == {"test": 1}
    after.meters_now(again.machine.meters.to_json())
    assert _rounds_metric(after, "crisscross_meter_rounds") == {"closed": 2, "test": 3}


def _samples(metrics: Any, name: str) -> dict[tuple[str, ...], float]:
    """The samples of metric ``name`` of ``metrics``' registry by their label values, the zeros left out."""
    return {tuple(s.labels.values()): s.value for family in metrics.registry.collect() for s in family.samples
            if s.name == name and s.value}


def test_faults_past_posting_and_mispays_of_test_rounds_are_counted_apart_from_live_play_over_a_restart():
    """A test round is no play (NY 9 NYCRR 5319.58): its fault, past-posting and mispay count in the
    ``crisscross_test_*`` counters, never in ``crisscross_faults_total``, ``crisscross_past_posting_total`` or
    ``crisscross_mispays_total``, as the meters keep them in their test meters (docs/operations.md, "Metrics"); a
    test round held over a restart too. (A lab read irregularities of test rounds as live play's.) The counts
    are the events this test makes: live, one shoe jam; in test mode, one chip pushed after "no more bets", one
    seat paid 900 on a middle of 500 that wins 1 to 1 (NY (f)(2): 1,000 due, 100 short) and accepted, one shoe
    jam, and one round held by a restart (the controller's ``restart`` fault)."""
    from controller.game.payout import PayoutConfig

    checked = dataclasses.replace(CONFIG, payout=PayoutConfig(check=True))
    desk = Desk(Round(checked, NY))
    desk.start()
    desk.open_betting()
    desk.lock(WAGERS)
    desk.send(ev.DeviceFault("shoe", "jam", ""))  # live play
    desk.supervisor("void_round", code="device")
    desk.place({})
    desk.supervisor("enter_test_mode")
    desk.open_betting()
    desk.lock(WAGERS)
    desk.answer_dispense(CROSS)
    assert of_type(desk.move_chips(1, "ante_across", 3000), cmd.Irregularity)  # past-posting, in a test round
    desk.deal(CROSS, HANDS)
    desk.send(ev.SupervisorKey(True, "SUP-7"))
    desk.press("acknowledge")
    desk.send(ev.SupervisorKey(False, "SUP-7"))
    desk.deal(CROSS, HANDS)
    for step in ("across", "down", "middle"):
        desk.decide(step, DECISIONS[step])
        desk.reveal()
    desk.layout[6] = {"ante_across": 1000, "ante_down": 1000, "across": 2000, "down": 1000, "middle": 900}
    desk.press("paid")
    desk.answer_read()
    desk.supervisor("accept_mispay", reason="player agreed")
    desk.layout[1] = {spot: 500 for spot in ("ante_across", "ante_down", "across", "down", "middle")}  # pushes
    desk.press("paid")
    desk.answer_read()
    assert desk.state == "closed"
    desk.place({})
    desk.open_betting()
    desk.lock(WAGERS)
    desk.send(ev.DeviceFault("shoe", "jam", ""))  # a test round's
    desk.supervisor("void_round", code="device")
    desk.place({})
    desk.open_betting()
    desk.lock(WAGERS)
    metrics = _metrics_of(desk.outputs)
    assert _samples(metrics, "crisscross_faults_total") == {("shoe", "jam"): 1}
    assert _samples(metrics, "crisscross_past_posting_total") == {}
    assert _samples(metrics, "crisscross_mispays_total") == {}
    assert _samples(metrics, "crisscross_mispay_minor_units_total") == {}
    assert _samples(metrics, "crisscross_test_faults_total") == {("shoe", "jam"): 1}
    assert _samples(metrics, "crisscross_test_past_posting_total") == {(): 1}
    assert _samples(metrics, "crisscross_test_mispays_total") == {("caught",): 1, ("accepted",): 1}
    assert _samples(metrics, "crisscross_test_mispay_minor_units_total") == {("caught", "short"): 100,
                                                                           ("accepted", "short"): 100}
    _, after = _restarted_and_voided(desk, checked)
    assert _samples(after, "crisscross_rounds_total") == {("test",): 1}
    assert _samples(after, "crisscross_faults_total") == {}
    assert _samples(after, "crisscross_test_faults_total") == {("none", "restart"): 1}


def test_the_journal_replays_a_test_session_to_the_same_machine(tmp_path):
    from controller.journal.store import Journal
    from controller.service.loop import fields_of

    journal = Journal(tmp_path / "j.db", fsync=False)
    machine = Round(CONFIG, NY)

    class Journaled(Desk):
        def send(self, event: Any) -> list[Any]:
            round_no = self.machine.round_no
            out = super().send(event)
            journal.commit([("event", type(event).__name__, fields_of(event), round_no)]
                           + [("command" if isinstance(o, cmd.DEVICE_COMMANDS) else "record", type(o).__name__,
                               fields_of(o), getattr(o, "round_no", self.machine.round_no)) for o in out])
            return out

    table = Journaled(machine)
    table.start()
    table.supervisor("enter_test_mode")
    table.play()
    table.supervisor("disable_table", code="closed")
    journal.close()
    rebuilt = replay(read_records(tmp_path / "j.db"), CONFIG, NY).machine
    assert rebuilt.checkpoint() == machine.checkpoint()


def test_the_control_interface_takes_the_table_actions_with_their_codes():
    assert {"disable_table", "enable_table", "enter_test_mode", "leave_test_mode"} <= set(ACTIONS)
    assert check_action({"action": "disable_table", "code": "count"})[:3] == ("disable_table", "", "count")
    for body, words in (({"action": "disable_table"}, "disable_table needs a code: closed, count"),
                        ({"action": "disable_table", "code": "misdeal"}, "code of disable_table must be one of"),
                        ({"action": "void_round", "code": "maintenance"}, "code of void_round must be one of"),
                        ({"action": "enable_table", "code": "closed"}, "enable_table takes no code")):
        with pytest.raises(Exception) as raised:
            check_action(body)
        assert words in str(raised.value), body


def test_the_lock_records_are_public_without_the_free_text(desk):
    desk.supervisor("disable_table", code="dispute", reason="seat 4 Kd exposed")
    (record,) = of_type(desk.last, cmd.TableDisabled)
    public = public_record({"seq": 1, "time": "t", "kind": "record", "round": None, "type": "TableDisabled",
                            "data": dict(record.__dict__)})
    assert public is not None and public["data"]["code"] == "dispute" and "reason" not in public["data"]


def test_a_snapshot_and_a_checkpoint_written_before_test_mode_still_agree_with_the_records(desk):
    """An upgrade: the meters recorded before test mode have no ``test`` meters nor ``rounds_test``; the audit
    takes them as the 0 they were, and names a test meter that a record does carry and that differs."""
    from controller.round.meters import first_difference

    desk.play()
    meters = desk.machine.meters
    older = meters.to_json()
    del older["test"], older["lifetime"]["rounds_test"]
    assert first_difference(meters.to_json(), older) is None
    older_checkpoint = meters.checkpoint()
    del older_checkpoint["test_counts"], older_checkpoint["in_test"], older_checkpoint["counts"]["rounds_test"]
    assert first_difference(meters.checkpoint(), older_checkpoint) is None
    assert Meters.from_checkpoint(older_checkpoint) == meters
    altered = meters.to_json()
    altered["test"]["drop"] = 100
    assert first_difference(meters.to_json(), altered) == "test.drop: 0 recomputed from the records, 100 recorded"


def test_simulated_play_in_test_mode_pays_out_test_rounds_and_moves_no_lifetime_meter(tmp_path):
    """The simulated people read the panel's texts without the TEST mark: a simulated table restarted in test mode
    (entered by a supervisor in the journal it continues) plays its rounds through the payout check as test
    rounds. (The simulated dealer once waited for ever at the payout: "TEST Seat 6 pay ..." was no seat to pay.)"""
    import io

    from controller.cli.parts import SERVICE_PARTS
    from controller.game.table import load_table_config
    from controller.journal.store import Journal
    from controller.service.assembly import Service
    from controller.service.loop import fields_of

    config = load_table_config()
    assert config.payout.check  # the shipped table checks the payouts
    path = tmp_path / "journal.db"
    journal = Journal(path, fsync=False)
    machine = Round(config, NY)
    for event in (ServiceStarted("simulated", "test"), *(ev.DeviceReady(d, f"{d}-sim", "1.0", 1)
                                                         for d in ("shoe", "sensors", "panel")),
                  ev.ShoeLastDispense(0, ()), OperatorAction("enter_test_mode", "sue", "supervisor")):
        out = machine.handle(event)
        journal.commit([("event", type(event).__name__, fields_of(event), None)]
                       + [("command" if isinstance(o, cmd.DEVICE_COMMANDS) else "record", type(o).__name__,
                           fields_of(o), getattr(o, "round_no", None)) for o in out])
    journal.close()
    assert machine.test_mode is not None
    service = Service(config, simulate=True, rounds=2, seed=3, journal_path=path, out=io.StringIO(),
                      parts=SERVICE_PARTS)
    deadline = threading.Timer(120, service.stop)  # a table that stalls is stopped, and fails below
    deadline.start()
    try:
        assert service.run() == 0
    finally:
        deadline.cancel()
        service.close()
    records = read_records(path)
    opened = [r["data"] for r in records if r["type"] == "RoundOpened"]
    assert len(opened) >= 2 and all(data["test"] is True for data in opened)
    assert [r for r in records if r["type"] == "PayoutChecked"]  # the test rounds were paid out and checked
    meters = Meters.from_records(records)
    assert meters.lifetime()["rounds_test"] >= 2
    assert (meters.lifetime()["rounds_closed"], meters.lifetime()["drop"]) == (0, 0)
    assert meters.test()["rounds_closed"] >= 2 and meters.test()["drop"] > 0


def test_a_refused_lock_action_says_why_in_words_a_supervisor_acts_on(desk):
    def refusal(action: str, **fields: Any) -> str:
        desk.supervisor(action, **fields)
        (refused,) = of_type(desk.last, cmd.PressRefused)
        return refused.reason

    assert refusal("enable_table") == "the table is not disabled"
    assert refusal("leave_test_mode") == "the table is not in test mode"
    desk.supervisor("disable_table", code="count")
    assert refusal("disable_table", code="closed") == "the table is already disabled (count): enable_table first"
    desk.supervisor("enter_test_mode")
    assert refusal("enter_test_mode") == "the table is already in test mode"
    desk.open_betting()
    desk.supervisor("leave_test_mode")
    assert of_type(desk.last, cmd.TestModeLeaving)
    assert refusal("leave_test_mode") == "the table leaves test mode once round 1 ends (asked by sue)"
    assert refusal("enter_test_mode") == "the table is already in test mode"
    desk.supervisor("void_round", code="other")
    desk.supervisor("enter_test_mode")
    desk.send(ev.DeviceFault("shoe", "jam"))  # a fault between rounds: no round to leave test mode after
    assert desk.state == "fault"
    assert refusal("leave_test_mode") == "test mode is left between rounds or during a test round, not in fault"


def test_a_refused_test_mode_in_a_round_names_the_way_to_a_moment_between_rounds(desk):
    """A table whose dealer opens the next round at once leaves no moment between rounds to enter test mode in:
    the refusal says how to make one (a disabled table opens no live round), until the table is disabled."""
    def refusal(action: str, **fields: Any) -> str:
        desk.supervisor(action, **fields)
        (refused,) = of_type(desk.last, cmd.PressRefused)
        return refused.reason

    desk.open_betting()
    assert refusal("enter_test_mode") == ("test mode is entered between rounds only; round 1 is in betting "
                                          "(disable_table first: the next round then waits)")
    desk.supervisor("disable_table", code="count")
    assert refusal("enter_test_mode") == "test mode is entered between rounds only; round 1 is in betting"


def test_a_dealers_login_is_refused_for_its_role_whatever_the_state_as_the_interface_answered(desk):
    for action in ("enable_table", "leave_test_mode", "disable_table", "void_round"):
        desk.dealer(action, code="closed" if action == "disable_table" else "")
        (refused,) = of_type(desk.last, cmd.PressRefused)
        assert refused.reason == f"{action} needs a supervisor; user dan has the role dealer", action


def test_in_test_mode_the_prompt_shown_is_marked_too_and_the_summary_names_the_test_round(desk):
    from controller.journal.recall import rounds_from_records
    from controller.journal.summary import format_round

    desk.supervisor("enter_test_mode")
    view = desk.machine.view()
    assert view["prompt"].startswith(TEST_MARK) and view["display"].startswith(TEST_MARK)
    desk.play()
    records = [{"round": getattr(o, "round_no", None), "type": type(o).__name__, "data": o.__dict__}
               for o in desk.outputs]
    (test_round,) = rounds_from_records(records).values()
    assert test_round.test and format_round(test_round).startswith("Round 1 (TEST) | cross:")


def test_recall_marks_a_round_of_test_mode_and_no_live_round(desk):
    """``crisscross recall`` heads a round of test mode ``TEST: no money`` (its ``RoundOpened.test``, NY 9 NYCRR
    5319.58), as the run's summary and the control interface's recall do: a round recalled in a dispute is told
    from a live one."""
    from controller.journal.recall import recall_last

    desk.play()
    desk.supervisor("enter_test_mode", reason="shoe serviced")
    desk.play()
    desk.supervisor("leave_test_mode")
    desk.play()
    records = [{"round": getattr(o, "round_no", None), "kind": "record", "time": "", "type": type(o).__name__,
                "data": cmd.to_record(o)} for o in desk.outputs if not isinstance(o, cmd.DEVICE_COMMANDS)]
    text = recall_last([(n, [r for r in records if r["round"] == n]) for n in (1, 2, 3)])
    assert [line for line in text.splitlines() if line.startswith("Round ")] == [
        "Round 1 (closed)", "Round 2 (closed, TEST: no money)", "Round 3 (closed)"]


def test_no_round_opens_while_a_device_lost_in_the_last_one_is_away(desk):
    """The shoe pulled out in betting and the round voided before it came back: the panel lit open_betting, and a
    round opened with no shoe to shuffle or deal (its wagers would lock with nothing to deal them). A device lost
    and not back keeps every round from opening (the ``self_check`` lock: it has not answered its handshake since),
    until it answers again and the shoe is asked what it last dispensed. (A fault is not cleared while its device
    is away.)"""
    desk.open_betting()
    desk.send(ev.DeviceFault("shoe", "link_lost", "/dev/ttyUSB0: unplugged"))
    assert desk.state == "fault"
    desk.supervisor("clear_fault")
    assert desk.state == "fault"  # refused: the shoe is away
    desk.supervisor("void_round", code="device")
    assert desk.state == "voided" and "open_betting" not in desk.machine.allowed_actions()
    assert desk.machine.view()["locks"] == [{
        "name": "self_check", "priority": 3, "source": "shoe", "set_by": "", "reason": "shoe not answering",
        "keeps": "every round", "text": "Waiting for the shoe"}]
    refused = desk.press("open_betting")
    assert of_type(refused, cmd.PressRefused) and not of_type(refused, cmd.RoundOpened)
    assert desk.display().endswith("Waiting for the shoe")
    out = desk.send(ev.DeviceReady("shoe", "test", "1.0", 1))
    assert of_type(out, cmd.QueryLast) and desk.display() == "Table ready"  # the panel's text follows the lock
    desk.send(ev.ShoeLastDispense(0, ()))
    assert lock_names(desk) == [] and "open_betting" in desk.machine.allowed_actions()
    assert of_type(desk.open_betting(), cmd.RoundOpened)


def test_a_device_back_in_a_fault_says_which_device_is_still_away():
    """The sensors back while the shoe was still away said "sensors back: supervisor may clear", and clear_fault
    was refused: the panel names the device still away, and says a supervisor may clear once none is."""
    table = Desk(Round(CONFIG, NY))
    table.start()
    table.open_betting()
    table.send(ev.DeviceFault("shoe", "link_lost", "/dev/ttyUSB0: unplugged"))
    table.send(ev.DeviceFault("sensors", "link_lost", "/dev/ttyUSB1: unplugged"))
    table.send(ev.DeviceReady("sensors", "test", "1.0", 1))
    assert table.display() == "sensors back, waiting for the shoe"
    table.supervisor("clear_fault")
    assert table.state == "fault"
    table.send(ev.DeviceReady("shoe", "test", "1.0", 1))
    assert table.display() == "shoe back: supervisor may clear"


def test_a_disabled_table_whose_dealer_opens_the_next_test_round_at_once_leaves_test_mode_after_the_round(desk):
    """A disabled table in test mode plays test rounds; its dealer opening the next one at once left no moment
    between rounds for ``leave_test_mode``. Asked during the round, it is left when the round ends: the next
    round does not open (the table is disabled), and the lock left is the supervisor's ``disabled``."""
    desk.supervisor("disable_table", code="maintenance")
    desk.supervisor("enter_test_mode")
    desk.play()
    desk.open_betting()  # the dealer opens the next test round at once
    desk.supervisor("leave_test_mode")
    assert of_type(desk.last, cmd.TestModeLeaving) and lock_names(desk) == ["disabled", "test_mode"]
    assert desk.machine.view()["locks"][1]["reason"] == "test mode, left when this round ends"  # /state says so
    desk.supervisor("void_round", code="other")  # the round ends voided: test mode is left with it
    (voided,) = of_type(desk.last, cmd.RoundVoided)
    (left,) = of_type(desk.last, cmd.TestModeLeft)
    assert left.rounds == 2 and desk.machine.test_mode is None
    assert lock_names(desk) == ["disabled"] and desk.display().endswith("Table disabled: maintenance")
    assert "open_betting" not in desk.machine.allowed_actions()
    meters = desk.machine.meters
    assert meters.lifetime()["rounds_test"] == 2 and meters.lifetime()["rounds_voided"] == 0


def test_a_leave_asked_during_a_test_round_survives_a_restart_and_is_kept_when_the_round_ends(desk):
    """The request is in the round's checkpoint: a service restarted during the round leaves test mode when the
    round ends, in the name of who asked."""
    desk.supervisor("enter_test_mode")
    desk.open_betting()
    desk.lock(WAGERS)
    desk.supervisor("leave_test_mode", reason="done")
    restored = Round(CONFIG, NY)
    restored.restore(json.loads(json.dumps(desk.machine.checkpoint())))
    again = Desk(restored)
    again.send(ServiceStarted("table", "test"))
    again.start()
    assert again.state == "fault" and again.machine.leaving_test_mode()
    again.send(OperatorAction("void_round", "vic", "supervisor", code="device"))
    (left,) = of_type(again.last, cmd.TestModeLeft)
    assert (left.by, left.reason) == ("sue", "done") and again.machine.test_mode is None


def test_a_leave_asked_during_a_test_round_is_a_public_record_without_its_reason(desk):
    """``TestModeLeaving`` is shown to the control interface's clients as ``TestModeLeft`` is: who asked, the
    round; the supervisor's free text stays in the journal."""
    desk.supervisor("enter_test_mode")
    desk.open_betting()
    desk.supervisor("leave_test_mode", reason="seat 3 Kd exposed")
    (leaving,) = of_type(desk.last, cmd.TestModeLeaving)
    shown = public_record({"seq": 1, "time": "t", "kind": "record", "round": 1, "type": "TestModeLeaving",
                           "data": dataclasses.asdict(leaving)})
    assert shown is not None and shown["data"]["by"] == "sue" and "reason" not in shown["data"]



def test_the_recall_of_a_test_round_left_after_it_shows_who_asked_and_when_it_was_left(desk):
    """A round's recall listed the supervisor's leave_test_mode as any action, and neither the request kept nor
    test mode left: both are steps now, with who asked; the reason in the journal's, never in the public's."""
    from controller.journal.recall import round_steps

    desk.supervisor("enter_test_mode")
    desk.open_betting()
    desk.supervisor("leave_test_mode", reason="tests done")
    desk.supervisor("void_round", code="other")
    records = [{"seq": seq, "time": "t", "kind": "record", "round": getattr(o, "round_no", None),
                "type": type(o).__name__, "data": dataclasses.asdict(o)}
               for seq, o in enumerate(desk.outputs, 1) if not isinstance(o, cmd.DEVICE_COMMANDS)]
    texts = [step["text"] for step in round_steps([r for r in records if r["round"] == 1])]
    assert "test mode to be left when this round ends, asked by sue (supervisor): tests done" in texts
    assert "test mode left (1 test round(s)), asked by sue (supervisor): tests done" in texts
    assert texts.index("test mode left (1 test round(s)), asked by sue (supervisor): tests done") > next(
        i for i, text in enumerate(texts) if text.startswith("ROUND VOIDED"))
    public = [public_record(r) for r in records if r["round"] == 1]
    shown = [step["text"] for step in round_steps([r for r in public if r is not None])]
    assert "test mode to be left when this round ends, asked by sue (supervisor)" in shown
