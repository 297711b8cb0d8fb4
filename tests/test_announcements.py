"""What the dealer announced is what is locked (NY 9 NYCRR 5324.39(c)(3); (e)(3),(5),(7),(9)): the round machine
driven input by input, each case in every order the same events can reach the controller.

- "No more bets" locks the layout as the sensors reported it when the press is journaled; a chip change that
  reaches the controller after it, as a change or only in the reading that follows, is past-posting (or
  pinching) held for a supervisor, and the amount at the press stands.
- A decision is the decision spot as it was at the dealer's ``confirm``, by the same rule.
- Every reading of the payout checks the whole layout: a seat already paid and checked, or not yet paid, whose
  chips move while another seat is paid is a mispay of that seat.
- An action that answers a fault, past-posting or a mispay names it by number: a retried clearance never
  clears a later fault.
- Chips that an excluded seat left where they were are no change; taking them back is none either.

Expected values come from the rules above (the regulation's text), amounts worked out by hand.
"""

from __future__ import annotations

import dataclasses

import pytest

from controller.game.payout import PayoutConfig
from controller.round import commands as cmd
from controller.round.inputs import OperatorAction
from controller.round.machine import Round
from drivers import events as ev
from tests.round_helpers import CONFIG, NY, TableDriver, antes, of_type

CROSS = ("9c", "4h", "8d", "5s", "2c")
HANDS = {1: ("7c", "7d"), 2: ("Kc", "Kd"), 6: ("Jh", "Js")}

#: When the late change reaches the controller: as a chip change before the reading, or only in the reading.
ARRIVALS = ("as_a_change", "in_the_reading")


def past_postings(outputs) -> list[dict]:
    return [o.detail for o in of_type(outputs, cmd.Irregularity) if o.kind == "past_posting"]


def betting(driver: TableDriver | None = None) -> TableDriver:
    driver = driver or TableDriver()
    if driver.state == "starting":
        driver.start()
    driver.open_betting()
    return driver


def late_change(driver: TableDriver, seat: int, spot: str, amount: int, arrival: str) -> list:
    """Chips on ``seat``/``spot`` become ``amount`` after the announcement was journaled: reported as a change
    before the reading, or seen only in the reading; then the reading is answered."""
    if arrival == "as_a_change":
        out = driver.move_chips(seat, spot, amount)
    else:
        driver.layout.setdefault(seat, {})[spot] = amount
        out = []
    return out + driver.answer_read()


@pytest.mark.parametrize("arrival", ARRIVALS)
def test_antes_placed_after_no_more_bets_are_not_locked_and_are_past_posting(arrival):
    """NY (c)(3): seat 6 places 500/500 after the dealer's press: WagersLocked names seat 1 only, each late
    chip is past-posting with 0 locked, and no card is dealt until a supervisor acknowledges."""
    driver = betting()
    driver.place({1: antes(500)})
    out = driver.press("no_more_bets")
    assert not of_type(out, cmd.WagersLocked)
    if arrival == "as_a_change":
        driver.move_chips(6, "ante_across", 500)
    else:
        driver.layout[6] = {"ante_across": 500}
    late_change(driver, 6, "ante_down", 500, arrival)
    out = driver.outputs
    (locked,) = of_type(out, cmd.WagersLocked)
    assert locked.seats == ({"seat": 1, "wagers": antes(500)},)
    late = past_postings(out)
    assert sorted((d["seat"], d["spot"], d["locked"], d["new"]) for d in late) == [
        (6, "ante_across", 0, 500), (6, "ante_down", 0, 500)]
    assert not of_type(out, cmd.Dispense)
    assert driver.machine.round_actions() == ("acknowledge", "void_round")
    driver.machine.handle(ev.SupervisorKey(True, "SUP-1"))
    out = driver.press("acknowledge")
    (dispense,) = of_type(out, cmd.Dispense)
    assert dispense.count == 5 and driver.machine.round.stacks_planned == [None, 1]


@pytest.mark.parametrize("arrival", ARRIVALS)
def test_an_ante_taken_back_after_no_more_bets_is_pinching_and_the_locked_amount_stands(arrival):
    driver = betting()
    driver.place({1: antes(500), 2: antes(1000)})
    driver.press("no_more_bets")
    out = late_change(driver, 2, "ante_down", 0, arrival)
    (locked,) = of_type(driver.outputs, cmd.WagersLocked)
    assert locked.seats == ({"seat": 1, "wagers": antes(500)}, {"seat": 2, "wagers": antes(1000)})
    assert [(d["seat"], d["spot"], d["locked"], d["new"]) for d in past_postings(out)] == [(2, "ante_down", 1000, 0)]


def to_decision(step: str) -> TableDriver:
    """Seats 1 and 2 locked at 500/500, dealt, and in action at ``step`` (1x at each decision before it)."""
    driver = betting()
    driver.lock({1: antes(500), 2: antes(500)})
    driver.deal(CROSS, HANDS)
    for earlier in ("across", "down", "middle"):
        if earlier == step:
            return driver
        driver.decide(earlier, {1: 500, 2: 500})
        driver.reveal()
    raise AssertionError(step)


@pytest.mark.parametrize("arrival", ARRIVALS)
@pytest.mark.parametrize("step", ("across", "down", "middle"))
def test_a_bet_put_down_after_the_confirm_is_not_the_decision(step, arrival):
    """NY (e)(3),(5),(7): seat 2's spot was empty at the dealer's confirm: seat 2 folds, and the chips put there
    after it are past-posting with 0 locked; seat 1's 1000 on the spot at the confirm is its bet."""
    driver = to_decision(step)
    driver.move_chips(1, step, 1000)
    driver.press("confirm")
    out = late_change(driver, 2, step, 1500, arrival)
    made = {(d.seat, d.action, d.amount) for d in of_type(out, cmd.DecisionMade)}
    assert made == {(1, "bet", 1000), (2, "fold", 0)}
    assert [(d["seat"], d["spot"], d["locked"], d["new"]) for d in past_postings(driver.outputs)] == [
        (2, step, 0, 1500)]
    assert driver.machine.allowed_actions()[0] == "acknowledge"
    assert driver.machine.round.seats[2].folded_at == step


@pytest.mark.parametrize("arrival", ARRIVALS)
def test_a_bet_taken_back_after_the_confirm_stays_the_decision(arrival):
    driver = to_decision("across")
    driver.move_chips(1, "across", 1500)
    driver.move_chips(2, "across", 500)
    driver.press("confirm")
    out = late_change(driver, 1, "across", 0, arrival)
    assert {(d.seat, d.amount) for d in of_type(out, cmd.DecisionMade)} == {(1, 1500), (2, 500)}
    assert [(d["seat"], d["locked"], d["new"]) for d in past_postings(driver.outputs)] == [(1, 1500, 0)]


# ---------------------------------------------------------------------------------------------- the payout
CHECKED = dataclasses.replace(CONFIG, payout=PayoutConfig(check=True))


def to_payout() -> TableDriver:
    """Seats 1 (7c 7d: a pair of 7s both ways, every wager pushes) and 6 (Jh Js: a pair of jacks both ways,
    every wager wins 1 to 1; NY (f)(1),(f)(2)), 500 a wager, 1x at every decision: settled, seat 6 paid first."""
    driver = TableDriver(Round(CHECKED, NY))
    driver.start()
    driver.open_betting()
    driver.lock({1: antes(500), 6: antes(500)})
    driver.deal(CROSS, {1: HANDS[1], 6: HANDS[6]})
    for step in ("across", "down", "middle"):
        driver.decide(step, {1: 500, 6: 500})
        driver.reveal()
    assert driver.state == "payout"
    return driver


def pay(driver: TableDriver, seat: int, spots: dict[str, int]) -> list:
    driver.place({**driver.layout, seat: spots})
    return driver.press("paid") + driver.answer_read()


PAID_6 = {spot: 1000 for spot in ("ante_across", "ante_down", "across", "down", "middle")}  # 500 + 500 each
PUSHED_1 = {spot: 500 for spot in ("ante_across", "ante_down", "across", "down", "middle")}


def test_a_seat_paid_again_while_the_next_is_paid_is_a_mispay_of_that_seat():
    """NY (e)(9): seat 6 is paid and checked; while seat 1 is paid the dealer pays seat 6 again (3,500 more on
    its ante across): the reading of seat 1 shows seat 6's difference and the round does not close until it is
    put right."""
    driver = to_payout()
    out = pay(driver, 6, PAID_6)
    assert not of_type(out, cmd.PayoutChecked)[0].differences
    driver.place({**driver.layout, 6: {**PAID_6, "ante_across": 4500}})
    out = pay(driver, 1, PUSHED_1)
    (check,) = of_type(out, cmd.PayoutChecked)
    assert check.seat == 1
    assert check.differences == ({"seat": 6, "spot": "ante_across", "expected": 1000, "seen": 4500,
                                  "difference": 3500},)
    assert driver.state == "payout" and driver.machine.view()["display"] == "Seat 6 mispay: AA over 3500"
    assert "accept_mispay" in driver.machine.allowed_actions()
    out = pay(driver, 6, PAID_6)  # the dealer takes the 3,500 back; seat 1 read again with it
    assert driver.state == "closed" and of_type(out, cmd.RoundClosed)


def test_a_seat_not_yet_paid_touched_early_is_a_mispay_of_that_seat():
    driver = to_payout()
    driver.place({**driver.layout, 1: {**PUSHED_1, "middle": 0}})  # seat 1's middle taken while seat 6 is paid
    out = pay(driver, 6, PAID_6)
    (check,) = of_type(out, cmd.PayoutChecked)
    assert check.seat == 6 and check.differences == (
        {"seat": 1, "spot": "middle", "expected": 500, "seen": 0, "difference": -500},)
    driver.machine.handle(ev.SupervisorKey(True, "SUP-1"))
    out = driver.press("accept_mispay")  # a supervisor accepts what was read: seat 1 now expected as it is
    (accepted,) = of_type(out, cmd.MispayAccepted)
    assert (accepted.short, accepted.over) == (500, 0)
    driver.machine.handle(ev.SupervisorKey(False, ""))
    pay(driver, 1, PUSHED_1)  # seat 1's own payout: its pushed middle back on the spot
    assert driver.state == "closed"


# ---------------------------------------------------------------------------------------------- answers by number
def test_a_retried_clearance_never_clears_a_later_fault():
    """docs/control.md, "The round guard": a clearance names the fault it answers (``answers``); the retry of
    an earlier clearance after a new fault was raised is refused as stale and the round stays in fault."""
    driver = betting()
    driver.lock({1: antes(500)})
    driver.send(ev.DeviceFault("shoe", "jam", "jam at gate"))
    jam = driver.machine.view()["answers"]["clear_fault"]
    assert [f["id"] for f in driver.machine.view()["faults"]] == [jam]
    clear = OperatorAction("clear_fault", "sue", "supervisor", round=1, state="fault", answers=jam)
    out = driver.send(clear)
    assert of_type(out, cmd.FaultCleared) and driver.state != "fault"
    driver.send(ev.DeviceFault("sensors", "protocol", "refused"))
    assert driver.state == "fault" and driver.machine.view()["answers"]["clear_fault"] != jam
    out = driver.send(clear)  # the client's retry of its first clearance
    (refused,) = of_type(out, cmd.PressRefused)
    assert "stale" in refused.reason and driver.state == "fault" and not of_type(out, cmd.FaultCleared)
    current = driver.machine.view()["answers"]["clear_fault"]
    out = driver.send(dataclasses.replace(clear, answers=current))
    assert of_type(out, cmd.FaultCleared)


# ---------------------------------------------------------------------------------------------- excluded seats
def excluded_seat() -> TableDriver:
    """Seat 1 plays 500/500; seat 4's single ante (invalid: NY (e)(1) two equal antes) is excluded."""
    driver = betting()
    driver.lock({1: antes(500), 4: {"ante_across": 1000}})
    assert driver.state == "wagers_held"
    driver.press("exclude")
    driver.answer_read()
    assert driver.state == "dealing_cross"
    driver.deal(CROSS, {1: HANDS[1]})
    return driver


def test_chips_an_excluded_seat_left_untouched_are_no_change():
    driver = excluded_seat()
    driver.decide("across", {1: 500})
    assert not past_postings(driver.outputs) and driver.state == "across_reveal"
    assert "reveal" in driver.machine.allowed_actions()


def test_chips_an_excluded_seat_takes_back_are_no_change_and_chips_added_are_past_posting():
    driver = excluded_seat()
    driver.move_chips(4, "ante_across", 0)  # the dealer returns the excluded wager
    driver.decide("across", {1: 500})
    assert not past_postings(driver.outputs)
    driver.move_chips(4, "ante_across", 500)
    assert [(d["seat"], d["locked"], d["new"]) for d in past_postings(driver.outputs)] == [(4, 0, 500)]


# ---------------------------------------------------------------------------------------------- the control interface
def test_the_control_interface_requires_the_number_an_answering_action_answers_and_refuses_another():
    """docs/control.md, "The round guard": clear_fault, acknowledge and accept_mispay name what they answer
    (400 without it); the interface compares it with /state's ``answers`` by the round machine's own rule."""
    from controller.control.checks import HTTPError, check_action
    from controller.round.inputs import stale_answer

    with pytest.raises(HTTPError, match="answers"):
        check_action({"action": "clear_fault"})
    with pytest.raises(HTTPError, match="answers goes only with"):
        check_action({"action": "confirm", "answers": 3})
    assert check_action({"action": "clear_fault", "answers": 7})[-1] == 7
    with pytest.raises(HTTPError, match="written as an integer"):  # as round: 7, not 7.0 (docs/control.md)
        check_action({"action": "clear_fault", "answers": 7.0})
    with pytest.raises(HTTPError, match="answers"):
        check_action({"action": "clear_fault", "answers": 7.5})
    assert stale_answer("clear_fault", 7, {"clear_fault": 7}) == ""
    assert "answers 9 now" in stale_answer("clear_fault", 7, {"clear_fault": 9})
    assert "nothing now" in stale_answer("acknowledge", 7, {})


# ---------------------------------------------------------------------------------------------- a device's own text
def test_a_devices_fault_text_stays_in_the_journal_and_the_public_sees_device_and_cause():
    """docs/control.md, "Secrecy": a shoe's FAULT text "jam: card 4d stuck in gate" names a face-down card: the
    fault's public detail names the device and the cause, the text is kept in ``device_detail`` and the
    journaled input, and neither leaves the journal."""
    from controller.control.server import public_record

    driver = betting()
    driver.lock({1: antes(500)})
    out = driver.send(ev.DeviceFault("shoe", "jam", "jam: card 4d stuck in gate"))
    (fault,) = of_type(out, cmd.FaultRaised)
    assert (fault.detail, fault.device_detail) == ("shoe reported jam", "jam: card 4d stuck in gate")
    assert "4d" not in str(driver.machine.view()) and not any("4d" in o.text for o in of_type(out, cmd.Display))
    for kind, data in (("FaultRaised", dataclasses.asdict(fault)),
                       ("DeviceFault", {"device": "shoe", "code": "jam", "detail": "jam: card 4d stuck in gate"})):
        shown = public_record({"seq": 9, "time": "t", "kind": "record", "round": 1, "type": kind, "data": data})
        assert shown is not None and "4d" not in str(shown), shown


def test_chips_put_on_a_seat_without_a_wager_during_the_payout_are_a_mispay_of_that_seat():
    """NY (e)(9): the whole layout is checked: 1000 put on seat 3, which had no wager, while seat 6 is paid is
    named at seat 6's reading; the round does not close until it is taken away."""
    driver = to_payout()
    driver.place({**driver.layout, 3: {"ante_across": 1000}})
    out = pay(driver, 6, PAID_6)
    (check,) = of_type(out, cmd.PayoutChecked)
    assert check.differences == ({"seat": 3, "spot": "ante_across", "expected": 0, "seen": 1000,
                                  "difference": 1000},)
    driver.place({seat: spots for seat, spots in driver.layout.items() if seat != 3})
    out = driver.press("paid") + driver.answer_read()
    pay(driver, 1, PUSHED_1)
    assert driver.state == "closed"


def test_an_irregular_bet_corrected_after_the_confirm_is_no_past_posting():
    """NY (e)(3): 2000 (4x the ante) at the confirm is an irregular bet: the decision stays open, and the dealer's
    correction to 1500 after it is what the next confirm takes, not a change held for a supervisor."""
    driver = to_decision("across")
    driver.move_chips(1, "across", 2000)
    driver.move_chips(2, "across", 500)
    driver.press("confirm")
    driver.move_chips(1, "across", 1500)
    out = driver.answer_read()
    assert of_type(out, cmd.PressRefused) and driver.state == "across_decision"
    assert "acknowledge" not in driver.machine.allowed_actions()
    assert "Past-posting" not in driver.machine.view()["display"]
    out = driver.press("confirm") + driver.answer_read()
    assert {(d.seat, d.amount) for d in of_type(out, cmd.DecisionMade)} == {(1, 1500), (2, 500)}


def test_answers_names_only_what_may_be_answered_now_and_the_panel_says_what_was_stale():
    driver = betting()
    driver.lock({1: antes(500)})
    driver.move_chips(1, "ante_across", 1000)  # past-posting while dealing: held for a supervisor
    assert driver.machine.view()["answers"] == {"acknowledge": driver.machine.round.acks_id}
    driver.send(ev.DeviceFault("shoe", "jam", "jam"))  # in fault: acknowledge is not allowed now
    assert "acknowledge" not in driver.machine.view()["answers"]
    out = driver.send(OperatorAction("clear_fault", "sue", "supervisor", answers=999))
    assert [d.text for d in of_type(out, cmd.Display)] == ["Not now: clear_fault for something else"]
