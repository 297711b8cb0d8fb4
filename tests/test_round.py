"""The round state machine (controller/round/machine.py), written from the regulations and domain.md, not the code.

Sources cited per test: NY 9 NYCRR 5324.39 ("NY") and 58 Pa. Code 674a.11 ("PA") in /work/shared/regs/, and
the equipment expectations of /work/shared/domain.md (start-up self-check, interlocks, card accounting,
hole-card secrecy). Every expected value below comes from the regulation text or a hand count; the hand
counts are written out in the docstrings. Seats are numbered 1-6 from the dealer's left clockwise, so
"from the dealer's left clockwise" is ascending seat order and "from the dealer's right counterclockwise"
descending seat order. The cross stack: cards 1-2 the across line's outside cards, 3-4 the down line's
outside cards, 5 the middle card. Amounts are minor units; table limits from config/table.yaml: each ante
500-50000, five-card bonus 100-10000.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.game.cards import DECK
from controller.round import commands as cmd
from controller.round.dealing import TXN_STRIDE
from controller.round.faults import LINK_CODES
from controller.round.inputs import OperatorAction, PromptDue, ServiceStarted
from drivers import events as ev
from tests.examples import examples
from tests.round_helpers import (
    DECISION_STEPS,
    DEVICE_COMMANDS,
    DEVICES,
    TableDriver,
    antes,
    new_round,
    of_type,
    play_round,
    ready,
)

# --------------------------------------------------------------------------- a hand-built round
#
# Cross: across line Kh Kd + middle 9d; down line 7c 2s + middle 9d; the board Kh Kd 7c 2s 9d is a pair of
# kings (five-card bonus "pair of 6s or better" 1 to 1, NY (f)(3)).
CROSS = ("Kh", "Kd", "7c", "2s", "9d")
HANDS = {
    1: ("9h", "9s"),  # across 9h 9s Kh Kd 9d = full house; down 9h 9s 7c 2s 9d = three 9s
    3: ("4c", "5h"),  # across 4c 5h Kh Kd 9d = pair of kings; down 4c 5h 7c 2s 9d = high card (no straight)
    5: ("Ac", "3d"),  # folds at the across decision
}
WAGERS = {1: antes(500, bonus=100), 3: antes(1000), 5: antes(500, bonus=200)}
DECISIONS = {
    "across": {1: 1000, 3: 1000, 5: 0},  # seat 1 2x, seat 3 1x, seat 5 folds
    "down": {1: 500, 3: 1000},  # seat 1 1x, seat 3 1x
    "middle": {1: 1500, 3: 2000},  # seat 1 3x, seat 3 2x
}
PLAYER_CARDS = {c for cards in HANDS.values() for c in cards}


def full_round(**overrides: Any) -> TableDriver:
    args = dict(wagers=WAGERS, cross=CROSS, hands=HANDS, decisions=DECISIONS)
    args.update(overrides)
    return play_round(**args)


def dealt_driver(wagers=None, hands=None) -> TableDriver:
    """A started table with the wagers locked and every stack dealt: the across decision is open."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock(WAGERS if wagers is None else wagers)
    driver.deal(CROSS, HANDS if hands is None else hands)
    assert driver.state == "across_decision"
    return driver


def settlement(driver: TableDriver, seat: int) -> dict[str, Any]:
    (settled,) = [o for o in of_type(driver.outputs, cmd.SeatSettled) if o.seat == seat]
    return settled.settlement


def wager_results(driver: TableDriver, seat: int) -> dict[str, tuple[int, str, int]]:
    """seat's wagers as name -> (amount, outcome, net)."""
    return {n: (r["amount"], r["outcome"], r["net"]) for n, r in settlement(driver, seat)["wagers"].items()}


def refused_nothing_else(outputs: list[Any], button: str, self_checked: bool = True) -> None:
    """A refused press: a PressRefused for that button and a Display, nothing else (lamps unchanged). Before the
    start-up self-check passed only the record comes out: nothing talks to a device yet (domain.md)."""
    expected = [cmd.PressRefused, cmd.Display] if self_checked else [cmd.PressRefused]
    assert [type(o) for o in outputs] == expected
    assert outputs[0].button == button


# =========================================================================== start-up self-check
# domain.md "Interlocks" / "What the industry expects": nothing talks to the devices before the start-up
# self-check passes; the table opens only when shoe, bet sensors and panel have all answered.

NOISE_BEFORE_READY = [
    ev.SpotChanged(2, "ante_across", 500),
    ev.ShuffleComplete(52),
    ev.StackDispensed(16, ("Ah", "Kh", "Qh", "Jh", "Th")),
    ev.SpotsSnapshot(1, ((2, "ante_across", 500),)),
]


@pytest.mark.parametrize("order", list(itertools.permutations(DEVICES)), ids="-".join)
def test_self_check_only_lamps_and_records_until_all_three_devices_ready(order):
    """domain.md start-up self-check: before the third DeviceReady the machine sends no device command
    except panel lamps, whatever device events arrive; no lamp before the panel itself is ready; only after
    shoe, sensors and panel are all ready is the table idle with exactly open_betting lit."""
    machine = new_round()
    panel_ready = False
    for i, device in enumerate(order):
        for noise in NOISE_BEFORE_READY:
            out = machine.handle(noise)
            assert not [o for o in out if isinstance(o, DEVICE_COMMANDS) and not isinstance(o, cmd.SetLamps)]
            if not panel_ready:
                assert not of_type(out, cmd.SetLamps), "a lamp before the panel answered its handshake"
            assert machine.state == "starting"
            assert machine.allowed_buttons() == ()
        out = machine.handle(ready(device))
        panel_ready = panel_ready or device == "panel"
        commands = [o for o in out if isinstance(o, DEVICE_COMMANDS) and not isinstance(o, cmd.SetLamps)]
        if not panel_ready:
            assert not of_type(out, cmd.SetLamps)
        if i < 2:
            assert not commands
            assert machine.state == "starting"
            assert all(lamps.buttons == () for lamps in of_type(out, cmd.SetLamps))
    # exactly-once dispensing: the shoe is asked what it last did before anything else, and the table opens
    # only on its answer
    assert [type(c) for c in commands if not isinstance(c, cmd.Display)] == [cmd.QueryLast]
    assert machine.state == "starting" and machine.allowed_buttons() == ()
    out = machine.handle(ev.ShoeLastDispense(0, ()))
    assert of_type(out, cmd.ShoeReconciled) == [cmd.ShoeReconciled(None, 0, 0, "in_step")]
    assert machine.state == "idle"
    assert machine.allowed_buttons() == ("open_betting",)
    assert of_type(out, cmd.SetLamps)[-1].buttons == ("open_betting",)


@pytest.mark.parametrize("button", ev.BUTTONS)
def test_self_check_no_button_works_before_all_devices_ready(button):
    """domain.md start-up self-check: open_betting (or any press) before the self-check passes starts
    nothing: no round, no shuffle, no read, no dispense."""
    machine = new_round()
    machine.handle(ready("panel"))
    machine.handle(ready("shoe"))
    out = machine.handle(ev.ButtonPressed(button))
    assert not of_type(out, (cmd.RoundOpened, cmd.Shuffle, cmd.ReadSpots, cmd.Dispense))
    assert of_type(out, cmd.PressRefused)[0].button == button
    assert machine.state == "starting"


@pytest.mark.parametrize("ready_first, event", [
    ((), ev.ButtonPressed("open_betting")),
    (("panel",), ev.ButtonPressed("open_betting")),
    (("panel", "shoe"), ev.ButtonPressed("no_more_bets")),
    (("sensors",), ev.DeviceFault("shoe", "jam", "")),
], ids=["press-none-ready", "press-panel-ready", "press-panel+shoe-ready", "fault-panel-not-ready"])
def test_self_check_event_before_ready_sends_no_device_command(ready_first, event):
    """domain.md start-up self-check: before all three DeviceReady only lamps and records may come out,
    whatever event arrives (a fault is still recorded as FaultRaised, a press as PressRefused)."""
    machine = new_round()
    for device in ready_first:
        machine.handle(ready(device))
    out = machine.handle(event)
    assert of_type(out, (cmd.PressRefused, cmd.FaultRaised))
    assert not [o for o in out if isinstance(o, DEVICE_COMMANDS) and not isinstance(o, cmd.SetLamps)]


# =========================================================================== interlocks (NY (c)(3))


def test_no_dispense_before_no_more_bets_and_wagers_locked_ny_c3():
    """NY 5324.39(c)(3), domain.md interlocks: no card leaves the shoe before "no more bets" is called and
    the wagers are locked; the first Dispense comes after WagersLocked in the same output."""
    driver = TableDriver()
    driver.start()
    out = driver.open_betting()
    driver.place(WAGERS)
    out += driver.move_chips(1, "ante_across", 500)
    out += driver.press("no_more_bets")
    assert not of_type(driver.outputs, cmd.Dispense)
    assert driver.state == "locking"
    out = driver.answer_read()
    kinds = [type(o) for o in out]
    assert kinds.index(cmd.WagersLocked) < kinds.index(cmd.Dispense)
    assert len(of_type(out, cmd.Dispense)) == 1


def test_no_more_bets_not_allowed_until_shuffle_counted_52():
    """domain.md card accounting ("a 52-card count is verified at each shuffle") and NY (c)(3): before the
    shuffle reports 52 cards "no more bets" is dark and refused; after it, lit."""
    driver = TableDriver()
    driver.start()
    driver.press("open_betting")
    assert driver.state == "betting"
    assert "no_more_bets" not in driver.machine.allowed_buttons()
    out = driver.press("no_more_bets")
    refused_nothing_else(out, "no_more_bets")
    assert driver.state == "betting"
    out = driver.send(ev.ShuffleComplete(52))
    assert "no_more_bets" not in driver.machine.allowed_buttons()  # the layout is not read yet
    out += driver.answer_read()
    assert driver.machine.allowed_buttons() == ("no_more_bets",)
    assert of_type(out, cmd.SetLamps)[-1].buttons == ("no_more_bets",)


@pytest.mark.parametrize("count", [0, 51, 53, 104])
def test_shuffle_count_other_than_52_faults_card_count(count):
    """domain.md card accounting: a 52-card count is verified at each shuffle; a mismatch is an irregularity
    that stops the round (fault, cause card_count), not a warning."""
    driver = TableDriver()
    driver.start()
    driver.press("open_betting")
    out = driver.send(ev.ShuffleComplete(count))
    (fault,) = of_type(out, cmd.FaultRaised)
    assert (fault.device, fault.cause) == ("shoe", "card_count")
    assert driver.state == "fault"
    assert not of_type(out, (cmd.Dispense, cmd.StackDealt))
    assert fault.device == "shoe"
    assert driver.state == "fault"
    assert driver.machine.allowed_buttons() == ()
    refused_nothing_else(driver.press("no_more_bets"), "no_more_bets")
    assert not of_type(driver.outputs, cmd.Dispense)


# =========================================================================== lock validation


INVALID_LOCKS = {
    # name: (wagers on the layout, seat the refusal must name, that seat's wagers once corrected by taking chips
    # away: {} when only removing all of them makes the layout valid)
    "unequal_antes_ny_e1": ({2: antes(500), 4: {"ante_across": 500, "ante_down": 1000}}, 4, antes(500)),
    "single_ante_ny_c4": ({4: {"ante_across": 500}, 1: antes(500)}, 4, {}),
    "single_ante_down_only_ny_c4": ({1: antes(500), 3: {"ante_down": 500}}, 3, {}),
    "bonus_without_antes_ny_e1": ({2: antes(500), 5: {"five_card_bonus": 500}}, 5, {}),
    "chip_on_across_spot_ny_c3": ({1: {**antes(500), "across": 500}}, 1, antes(500)),
    "chip_on_down_spot_ny_c3": ({6: {**antes(500), "down": 1000}}, 6, antes(500)),
    "chip_on_middle_spot_ny_c3": ({2: {**antes(500), "middle": 1500}}, 2, antes(500)),
    "ante_below_table_min": ({3: antes(400), 5: antes(500)}, 3, {}),
    "ante_above_table_max": ({1: antes(500), 3: antes(50001)}, 3, antes(50000)),
    "bonus_below_table_min": ({6: antes(500, bonus=99)}, 6, antes(500)),
    "bonus_above_table_max": ({6: antes(500, bonus=10001)}, 6, antes(500, bonus=10000)),
}


@pytest.mark.parametrize("case", list(INVALID_LOCKS))
def test_lock_refuses_invalid_seat_then_accepts_correction(case):
    """NY 5324.39(c)(4),(e)(1): two equal antes per playing seat, a five-card bonus only with them; NY (c)(3):
    nothing on a decision spot before its decision; config/table.yaml limits (ante 500-50000, bonus
    100-10000). An invalid seat is refused at "no more bets" (an ``invalid_wager`` irregularity, PressRefused
    and a Display naming the seat); the wagers are held (``wagers_held``: correct and press again, or exclude
    the seat) and nothing is dispensed; NY (c)(3) lets no wager be made or increased after "no more bets", so
    a correction only takes chips away; once corrected, the lock succeeds with the other seats as locked."""
    wagers, seat, corrected_seat = INVALID_LOCKS[case]
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    out = driver.lock(wagers)
    (refused,) = of_type(out, cmd.PressRefused)
    assert refused.button == "no_more_bets"
    assert [i.detail["seat"] for i in of_type(out, cmd.Irregularity) if i.kind == "invalid_wager"] == [seat]
    assert any(f"seat {seat}" in d.text for d in of_type(out, cmd.Display))
    assert not of_type(driver.outputs, (cmd.WagersLocked, cmd.Dispense))
    assert driver.state == "wagers_held"
    assert driver.machine.allowed_buttons() == ("no_more_bets", "exclude")

    corrected = {s: w for s, w in wagers.items() if s != seat}
    if corrected_seat:
        corrected[seat] = corrected_seat
    out = driver.lock(corrected)
    assert not [i for i in of_type(driver.outputs, cmd.Irregularity) if i.kind == "past_posting"]
    (locked,) = of_type(out, cmd.WagersLocked)
    assert {entry["seat"]: entry["wagers"] for entry in locked.seats} == corrected
    assert len(of_type(out, cmd.Dispense)) == 1
    assert driver.state == "dealing_cross"


def test_wagers_changed_after_no_more_bets_are_past_posting_and_the_locked_amounts_stand():
    """NY 5324.39(c)(3): "A wager may not be made, increased or withdrawn after the dealer has announced 'no
    more bets.'" At "no more bets" every valid seat's wagers are locked at once, even while another seat is
    held for an invalid wager; while it is held, a valid seat that raises and adds a bonus, a seat empty until
    then that places antes, and the held seat raising its own wagers are each past-posting: recorded, held
    for a supervisor, and the locked (or zero) amount stays the wager of record."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock({1: antes(100), 3: antes(500)})  # seat 1 below the table minimum of 500
    assert driver.state == "wagers_held"
    driver.move_chips(3, "ante_across", 2500)
    driver.move_chips(3, "ante_down", 2500)
    driver.move_chips(3, "five_card_bonus", 1000)
    driver.move_chips(6, "ante_across", 5000)
    driver.move_chips(6, "ante_down", 5000)
    driver.move_chips(1, "ante_across", 500)  # the held seat may not raise either
    flagged = [(i.detail["seat"], i.detail["spot"], i.detail["locked"], i.detail["new"])
               for i in of_type(driver.outputs, cmd.Irregularity) if i.kind == "past_posting"]
    assert flagged == [(3, "ante_across", 500, 2500), (3, "ante_down", 500, 2500), (3, "five_card_bonus", 0, 1000),
                       (6, "ante_across", 0, 5000), (6, "ante_down", 0, 5000), (1, "ante_across", 100, 500)]
    assert driver.machine.round_actions() == ("acknowledge", "void_round")
    refused = driver.press("exclude")
    (refusal,) = of_type(refused, cmd.PressRefused)
    assert "acknowledge" in refusal.reason and driver.state == "wagers_held"
    driver.send(ev.SupervisorKey(True, "SUP-1"))
    driver.press("acknowledge")
    driver.send(ev.SupervisorKey(False, ""))
    out = driver.press("exclude")
    out += driver.answer_read()
    (locked,) = of_type(out, cmd.WagersLocked)
    assert locked.seats == ({"seat": 3, "wagers": antes(500)},)  # seat 6 never wagered; seat 1 excluded
    assert driver.state == "dealing_cross" and of_type(out, cmd.Dispense)


def test_no_wager_at_no_more_bets_closes_a_no_play_round_and_keeps_the_shuffle():
    """NY 5324.39(d)(1),(2): cards go only to players who placed a wager; with no wager at all there is nobody
    to deal to: the round closes at once as a no-play round (RoundClosed with nothing wagered, nothing
    dispensed) instead of waiting for a supervisor's void, and the shoe's checked shuffle deals the next round
    (no second Shuffle)."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    out = driver.lock({})
    (closed,) = of_type(out, cmd.RoundClosed)
    assert closed.totals == {"wagered": 0, "returned": 0, "collected": 0, "paid": 0, "player_net": 0}
    assert driver.state == "closed" and not of_type(driver.outputs, (cmd.WagersLocked, cmd.Dispense))
    assert driver.machine.allowed_buttons() == ("open_betting",)
    out = driver.press("open_betting")
    assert of_type(out, cmd.RoundOpened) and not of_type(out, cmd.Shuffle)
    driver.answer_read()  # the layout as betting opens
    out = driver.lock({6: antes(500)})
    assert of_type(out, cmd.WagersLocked)[0].seats == ({"seat": 6, "wagers": antes(500)},)
    assert [s.txn_id for s in of_type(driver.outputs, cmd.Dispense)] == [2 * 16]
    assert len(of_type(driver.outputs, cmd.Shuffle)) == 1


def test_a_kept_shuffle_is_not_trusted_after_a_restart():
    """The shoe's shuffle kept by a no-play round is used only while the service and the shoe stayed up: after
    a restart the next round shuffles again (a power-cycled shoe would refuse the dispense)."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock({})
    driver.send(ServiceStarted())
    driver.start()
    out = driver.press("open_betting")
    assert of_type(out, cmd.Shuffle)


# =========================================================================== dealing (NY (d)(2))


def test_dealing_cross_first_then_two_per_wagering_seat_clockwise_ny_d2():
    """NY 5324.39(d)(2): an automated shoe dispenses a stack of five first (the cross), then stacks of two
    delivered clockwise (ascending seats) to each player who has placed a wager; each request follows the
    arrival of the previous stack; transaction ids are distinct."""
    wagers = {5: antes(500), 1: antes(500), 3: antes(700)}
    hands = {1: ("2c", "3c"), 3: ("4c", "5c"), 5: ("6c", "8c")}
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    out = driver.lock(wagers)
    requests = of_type(out, cmd.Dispense)
    assert [(d.count, d.seat) for d in requests] == [(5, None)]
    cards_for = {None: CROSS, **hands}
    while True:
        (request,) = of_type(driver.last, cmd.Dispense)
        out = driver.answer_dispense(cards_for[request.seat])
        following = of_type(out, cmd.Dispense)
        assert len(following) <= 1  # one request at a time, after the previous stack arrived
        requests += following
        if not following:
            break
    assert [(d.count, d.seat) for d in requests] == [(5, None), (2, 1), (2, 3), (2, 5)]
    assert len({d.txn_id for d in requests}) == 4
    dealt = of_type(driver.outputs, cmd.StackDealt)
    assert [(s.seat, s.cards) for s in dealt] == [(None, CROSS), (1, hands[1]), (3, hands[3]), (5, hands[5])]
    assert driver.state == "across_decision"
    assert 5 + 2 * 3 == sum(len(s.cards) for s in dealt)  # domain.md card accounting: 5 + 2 x seats


def test_transaction_ids_distinct_over_two_rounds():
    """Dispense: "exactly once per id" (controller/round/commands.py): no id is reused in the next round."""
    driver = full_round()
    driver = play_round(WAGERS, ("2h", "3h", "4h", "6h", "7s"), HANDS, DECISIONS, driver=driver)
    ids = [d.txn_id for d in of_type(driver.outputs, cmd.Dispense)]
    assert len(ids) == 8 and len(set(ids)) == 8


BAD_STACKS = {
    # name: (stack index to corrupt (0 = cross), cards sent, txn offset, expected cause)
    "cross_short": (0, ("Kh", "Kd", "7c", "2s"), 0, "stack_size"),
    "cross_long": (0, ("Kh", "Kd", "7c", "2s", "9d", "8d"), 0, "stack_size"),
    "seat_stack_of_three": (2, ("4c", "5h", "6h"), 0, "stack_size"),
    "seat_stack_of_one": (1, ("9h",), 0, "stack_size"),
    "seat_repeats_cross_card": (1, ("9h", "Kd"), 0, "card_count"),
    "seat_repeats_other_seat_card": (2, ("4c", "9s"), 0, "card_count"),
    "unreadable_card_in_cross": (0, ("Kh", "Kd", "7c", "??", "9d"), 0, "unreadable_card"),
    "unreadable_ten_text": (2, ("10h", "5h"), 0, "unreadable_card"),
    "lowercase_rank": (1, ("9h", "ks"), 0, "unreadable_card"),
    "wrong_transaction_id": (1, ("9h", "9s"), 1, "protocol"),
    "old_transaction_id": (2, ("4c", "5h"), -1, "protocol"),
}


@pytest.mark.parametrize("case", list(BAD_STACKS))
def test_bad_stack_faults_round_naming_cause(case):
    """NY 5324.39(d)(2) and domain.md card accounting: the cross must be five cards and each seat stack two,
    every card readable and never seen before in the round, each stack answering its own request; anything
    else faults the round (FaultRaised from the shoe, naming the cause) and no further stack is requested."""
    index, cards, offset, cause = BAD_STACKS[case]
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock(WAGERS)
    stacks = [CROSS, HANDS[1], HANDS[3], HANDS[5]]
    for i in range(index):
        driver.answer_dispense(stacks[i])
    request = driver.pending_dispense()
    out = driver.answer_dispense(cards, txn_id=request.txn_id + offset)
    (fault,) = of_type(out, cmd.FaultRaised)
    assert (fault.device, fault.cause) == ("shoe", cause)
    assert driver.state == "fault"
    assert not of_type(out, (cmd.Dispense, cmd.StackDealt))
    assert driver.machine.allowed_buttons() == ()


def _deal_faulty_stack(index, cards):
    """Lock the wagers, deal the cross (when ``index`` is 1) then answer the next dispense with ``cards``."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock(WAGERS)
    if index:
        driver.answer_dispense(CROSS)
    return driver, driver.answer_dispense(cards)


@pytest.mark.parametrize("index, cards", [(0, ("Kh", "Kh", "7c", "2s", "9d")), (1, ("9h", "9h"))], ids=["cross", "seat"])
def test_card_repeated_within_a_stack_is_a_card_count_fault(index, cards):
    """domain.md card accounting (one deck: no card twice in a round), NY 5324.39(d)(2): a stack that repeats
    a card within itself faults the round as a count mismatch (cause card_count, as for a card repeated from
    an earlier stack; the card itself was read), and the stack is not dealt. (Revision cce6709 reported this
    as 'unreadable_card'; fixed in 82fe2fd.)"""
    driver, out = _deal_faulty_stack(index, cards)
    (fault,) = of_type(out, cmd.FaultRaised)
    assert (fault.device, fault.cause) == ("shoe", "card_count")
    assert driver.state == "fault"
    assert not of_type(out, (cmd.Dispense, cmd.StackDealt))


@pytest.mark.parametrize("index, cards, secret", [(0, ("Kh", "Kh", "7c", "2s", "9d"), "Kh"), (1, ("9h", "9h"), "9h")],
                         ids=["cross", "seat"])
def test_stack_fault_shows_no_face_down_card(index, cards, secret):
    """domain.md Hole-card secrecy: no face-down card on any display or log line, also when the stack that
    carried it faults the round (the FaultRaised detail is logged by the service). (Revision cce6709 showed
    "FAULT unreadable_card: duplicate card '9h' ..." on the panel; fixed in 82fe2fd.)"""
    driver, out = _deal_faulty_stack(index, cards)
    assert driver.state == "fault"
    shown = [d.text for d in of_type(out, cmd.Display)] + [f.detail for f in of_type(out, cmd.FaultRaised)]
    assert not [text for text in shown if secret in card_tokens(text)]


# =========================================================================== decisions


def test_decisions_recorded_in_ascending_seat_order_pa_b_d_f():
    """PA 674a.11(b),(d),(f): at each decision the dealer goes from the player farthest to the dealer's left,
    clockwise: DecisionMade outputs in ascending seat order at every step."""
    wagers = {6: antes(500), 2: antes(500), 4: antes(500)}
    hands = {2: ("2c", "3c"), 4: ("4c", "5c"), 6: ("6h", "8c")}
    bets = {6: 500, 2: 1000, 4: 1500}
    driver = play_round(wagers, CROSS, hands, {step: bets for step in DECISION_STEPS})
    for step in DECISION_STEPS:
        made = [d for d in of_type(driver.outputs, cmd.DecisionMade) if d.decision == step]
        assert [(d.seat, d.action, d.amount) for d in made] == [(2, "bet", 1000), (4, "bet", 1500), (6, "bet", 500)]


def test_empty_decision_spot_is_a_fold_ny_e3():
    """NY 5324.39(e)(3): make the across bet or forfeit the antes; an empty across spot is a fold (amount 0)."""
    driver = dealt_driver()
    out = driver.decide("across", {1: 500, 3: 0, 5: 0})
    made = of_type(out, cmd.DecisionMade)
    assert [(d.seat, d.action, d.amount) for d in made] == [(1, "bet", 500), (3, "fold", 0), (5, "fold", 0)]
    assert driver.state == "across_reveal"


@pytest.mark.parametrize("multiple", [1, 2, 3])
@pytest.mark.parametrize("step", DECISION_STEPS)
def test_one_to_three_times_the_ante_is_a_bet_ny_e3_e5_e7(step, multiple):
    """NY 5324.39(e)(3),(5),(7) and (c)(4): each of the across, down and middle bets is one to three times the
    ante; 1x, 2x and 3x are recorded as bets of that amount (seat 3's ante is 1000)."""
    driver = dealt_driver()
    for earlier in DECISION_STEPS[: DECISION_STEPS.index(step)]:
        driver.decide(earlier, {1: 500, 3: 1000, 5: 500})
        driver.reveal()
    out = driver.decide(step, {1: 500, 3: 1000 * multiple, 5: 500})
    seat3 = [d for d in of_type(out, cmd.DecisionMade) if d.seat == 3]
    assert [(d.decision, d.action, d.amount) for d in seat3] == [(step, "bet", 1000 * multiple)]
    assert driver.state == f"{step}_reveal"


@pytest.mark.parametrize("amount", [1, 500, 999, 1500, 2500, 4000, -1000])
@pytest.mark.parametrize("step", DECISION_STEPS)
def test_other_bet_amounts_refused_then_corrected_ny_e3_e5_e7(step, amount):
    """NY 5324.39(e)(3),(5),(7): a bet other than 1x-3x the ante (seat 3's ante is 1000) is refused: a
    PressRefused + Display naming the seat, the decision stays open (confirm lit, reveal dark) and no seat's
    decision is recorded; once the amount is corrected the decisions are taken."""
    driver = dealt_driver()
    for earlier in DECISION_STEPS[: DECISION_STEPS.index(step)]:
        driver.decide(earlier, {1: 500, 3: 1000, 5: 500})
        driver.reveal()
    before = len(of_type(driver.outputs, cmd.DecisionMade))
    out = driver.decide(step, {1: 1500, 3: amount, 5: 0})
    assert of_type(out, cmd.PressRefused)[0].button == "confirm"
    assert any("seat 3" in d.text for d in of_type(out, cmd.Display))
    assert len(of_type(driver.outputs, cmd.DecisionMade)) == before
    assert driver.state == f"{step}_decision"
    assert driver.machine.allowed_buttons() == ("confirm",)
    refused_nothing_else(driver.press("reveal"), "reveal")

    out = driver.decide(step, {1: 1500, 3: 2000, 5: 0})
    made = of_type(out, cmd.DecisionMade)
    assert [(d.seat, d.action, d.amount) for d in made] == [(1, "bet", 1500), (3, "bet", 2000), (5, "fold", 0)]
    assert driver.state == f"{step}_reveal"


def test_folded_seat_not_asked_again_ny_e5_e7_pa_d_f():
    """NY 5324.39(e)(5),(7), PA 674a.11(d),(f): only players still in the game are asked at later decisions;
    a seat that folded at the across decision has no down or middle decision, even if chips later appear on
    its down spot (those are not a bet)."""
    driver = dealt_driver()
    driver.decide("across", {1: 500, 3: 1000, 5: 0})
    driver.reveal()
    driver.layout[5]["down"] = 500
    out = driver.decide("down", {1: 500, 3: 1000})
    # chips on a folded seat's spot are a wager made after "no more bets" (NY (c)(3)): past-posting, which
    # holds the decision until a supervisor acknowledges it
    assert [i.detail for i in of_type(out, cmd.Irregularity)] == [{"seat": 5, "spot": "down", "locked": 0, "new": 500}]
    assert not of_type(out, cmd.DecisionMade)
    driver.send(ev.SupervisorKey(True, "SUP-1"))
    driver.press("acknowledge")
    driver.send(ev.SupervisorKey(False, "SUP-1"))
    out = driver.decide("down", {1: 500, 3: 1000})
    assert [(d.seat, d.decision) for d in of_type(out, cmd.DecisionMade)] == [(1, "down"), (3, "down")]
    driver.reveal()
    out = driver.decide("middle", {1: 0, 3: 3000})
    assert [(d.seat, d.action) for d in of_type(out, cmd.DecisionMade)] == [(1, "fold"), (3, "bet")]
    made = of_type(driver.outputs, cmd.DecisionMade)
    assert [(d.decision, d.action) for d in made if d.seat == 5] == [("across", "fold")]
    assert [(d.decision, d.action) for d in made if d.seat == 1] == [("across", "bet"), ("down", "bet"), ("middle", "fold")]


def test_five_card_bonus_stays_after_fold_and_is_settled_pa_b_h5():
    """PA 674a.11(b),(h)(5): a fold forfeits the antes, but the five-card bonus stays on the table and is
    settled on the five community cards. Seat 5 (ante 500 each, bonus 200) folds at the across decision; the
    board Kh Kd 7c 2s 9d is a pair of kings, NY (f)(3) pair of 6s or better 1 to 1: antes -500 -500,
    bonus +200, seat net -800."""
    driver = full_round()
    assert wager_results(driver, 5) == {
        "ante_across": (500, "lose", -500),
        "ante_down": (500, "lose", -500),
        "five_card_bonus": (200, "win", 200),
    }
    assert settlement(driver, 5)["net"] == -800


def test_fold_at_middle_forfeits_all_but_bonus_ny_e7():
    """NY 5324.39(e)(7): a player who declines the middle bet forfeits all previous wagers (antes, across,
    down bets); PA (f): the five-card bonus stays. Seat 1 (antes 500, bonus 100, across 1000, down 500) folds
    at the middle: -500 -1000 -500 -500 = -2500 forfeited, bonus on the pair of kings +100: net -2400, even
    though its full house would have won."""
    decisions = {"across": {1: 1000, 3: 1000, 5: 0}, "down": {1: 500, 3: 1000}, "middle": {1: 0, 3: 2000}}
    driver = full_round(decisions=decisions)
    assert wager_results(driver, 1) == {
        "ante_across": (500, "lose", -500),
        "across": (1000, "lose", -1000),
        "ante_down": (500, "lose", -500),
        "down": (500, "lose", -500),
        "five_card_bonus": (100, "win", 100),
    }
    assert settlement(driver, 1)["net"] == -2400


# =========================================================================== reveals


def test_reveal_not_allowed_before_decisions_taken_ny_e4_pa_c():
    """NY 5324.39(e)(4), PA 674a.11(c): the outside across cards are turned only after every player has made
    the across decision: reveal is refused in the decision state and while the decision spots are being read,
    and nothing is revealed."""
    driver = dealt_driver()
    refused_nothing_else(driver.press("reveal"), "reveal")
    assert driver.state == "across_decision"
    driver.press("confirm")
    assert driver.state == "across_reading"
    refused_nothing_else(driver.press("reveal"), "reveal")
    assert driver.state == "across_reading"
    assert not of_type(driver.outputs, cmd.CardsRevealed)


def test_reveals_are_cross_cards_1_2_then_3_4_then_5_ny_e4_e6_e8():
    """NY 5324.39(e)(4),(6),(8), PA (c),(e),(g): the two outside cards of the horizontal line (cross cards
    1-2), then of the vertical line (3-4), then the middle card (5), each after its decision is in."""
    driver = full_round()
    revealed = of_type(driver.outputs, cmd.CardsRevealed)
    assert [(r.step, r.cards) for r in revealed] == [("across", ("Kh", "Kd")), ("down", ("7c", "2s")), ("middle", ("9d",))]
    kinds = driver.outputs
    for step in DECISION_STEPS:
        last_decision = max(i for i, o in enumerate(kinds) if isinstance(o, cmd.DecisionMade) and o.decision == step)
        reveal_at = next(i for i, o in enumerate(kinds) if isinstance(o, cmd.CardsRevealed) and o.step == step)
        assert last_decision < reveal_at


def _steps_to(state: str):
    """Scripted events (as callables on a driver) that bring a fresh machine to ``state``."""
    script = [
        ("idle", lambda d: d.start()),
        ("betting", lambda d: d.press("open_betting")),
        ("betting", lambda d: d.send(ev.ShuffleComplete(52))),
        ("betting", lambda d: d.answer_read()),  # the layout as betting opens
        ("locking", lambda d: (d.place(WAGERS), d.press("no_more_bets"))),
        ("dealing_cross", lambda d: d.answer_read()),
        ("dealing_players", lambda d: d.answer_dispense(CROSS)),
        ("across_decision", lambda d: d.deal(CROSS, HANDS)),
    ]
    after = {"across": "down_decision", "down": "middle_decision", "middle": "closed"}
    for step in DECISION_STEPS:
        script += [
            (f"{step}_reading", lambda d, s=step: (_put_bets(d, s, DECISIONS[s]), d.press("confirm"))),
            (f"{step}_reveal", lambda d: d.answer_read()),
            (after[step], lambda d: d.reveal()),
        ]
    return script


def _put_bets(driver: TableDriver, step: str, bets: dict[int, int]) -> None:
    """The players' bets of ``step`` on its spots before the dealer confirms (NY (e)(3),(5),(7))."""
    for seat, amount in bets.items():
        if amount:
            driver.move_chips(seat, step, amount)


def drive_to(state: str) -> TableDriver:
    driver = TableDriver()
    if state == "starting":
        return driver
    for reached, action in _steps_to(state):
        action(driver)
        if reached == state and driver.state == state:
            return driver
    raise AssertionError(f"could not reach {state}")


REACHABLE = ["starting", "idle", "betting", "locking", "dealing_cross", "dealing_players"] + [
    f"{step}_{phase}" for step in DECISION_STEPS for phase in ("decision", "reading", "reveal")
] + ["closed"]


@pytest.mark.parametrize("state", REACHABLE)
def test_press_not_allowed_is_refused_and_changes_nothing(state):
    """Dealer panel: only lit buttons act (NY (c)-(e) sequence); every other press yields PressRefused (+ a
    Display) and changes nothing: same state, same lamps, no record, no device request."""
    for button in ev.BUTTONS:
        driver = drive_to(state)
        allowed = driver.machine.allowed_buttons()
        if button in allowed:
            continue
        out = driver.press(button)
        refused_nothing_else(out, button, self_checked=state != "starting")
        assert driver.state == state
        assert driver.machine.allowed_buttons() == allowed


# =========================================================================== settlement


def test_settlement_order_descending_then_round_closed_ny_e9_pa_g():
    """NY 5324.39(e)(9), PA 674a.11(g): settle from the player farthest to the dealer's right,
    counterclockwise (descending seats), one SeatSettled per playing seat (seat 5 folded but its bonus is in
    action), then RoundClosed; totals: every staked unit is returned or collected."""
    driver = full_round()
    settled = of_type(driver.outputs, cmd.SeatSettled)
    assert [s.seat for s in settled] == [5, 3, 1]
    records = [o for o in driver.outputs if not isinstance(o, DEVICE_COMMANDS)]
    assert isinstance(records[-1], cmd.RoundClosed)
    (closed,) = of_type(driver.outputs, cmd.RoundClosed)
    assert closed.totals["wagered"] == closed.totals["returned"] + closed.totals["collected"]
    assert driver.state == "closed"
    assert driver.machine.allowed_buttons() == ("open_betting",)


def test_settlement_values_full_house_and_pair_of_kings_ny_e9_f():
    """NY 5324.39(e)(9)(i),(ii), (f)(1)-(3), PA (h)(1)-(5), by hand (board Kh Kd 7c 2s 9d: pair of kings):

    seat 1, cards 9h 9s, antes 500, bonus 100, across 1000, down 500, middle 1500:
      across hand 9h 9s Kh Kd 9d full house: ante across 1 to 1 +500, across bet 12 to 1 +12000;
      down hand 9h 9s 7c 2s 9d three 9s: ante down 1 to 1 +500, down bet 3 to 1 +1500;
      middle at the odds of the higher hand (full house) 12 to 1: +18000; bonus pair 1 to 1: +100.
      net 32600.
    seat 3, cards 4c 5h, antes 1000, across 1000, down 1000, middle 2000:
      across hand pair of kings: ante +1000, across 1 to 1 +1000; down hand high card: -1000, -1000;
      middle: the across hand wins, so the middle is paid at 1 to 1: +2000. net 2000.
    seat 5 folded (see the bonus test): net -800.
    Totals: wagered 4100 + 6000 + 1200 = 11300; returned 4100 + 4000 + 200 = 8300; collected
    0 + 2000 + 1000 = 3000; paid (winnings) 32600 + 4000 + 200 = 36800; players' net 33800."""
    driver = full_round()
    assert wager_results(driver, 1) == {
        "ante_across": (500, "win", 500),
        "across": (1000, "win", 12000),
        "ante_down": (500, "win", 500),
        "down": (500, "win", 1500),
        "middle": (1500, "win", 18000),
        "five_card_bonus": (100, "win", 100),
    }
    assert settlement(driver, 1)["net"] == 32600
    assert wager_results(driver, 3) == {
        "ante_across": (1000, "win", 1000),
        "across": (1000, "win", 1000),
        "ante_down": (1000, "lose", -1000),
        "down": (1000, "lose", -1000),
        "middle": (2000, "win", 2000),
    }
    assert settlement(driver, 3)["net"] == 2000
    (closed,) = of_type(driver.outputs, cmd.RoundClosed)
    assert closed.totals == {"wagered": 11300, "returned": 8300, "collected": 3000, "paid": 36800, "player_net": 33800}


def test_settlement_middle_push_and_middle_loss_ny_e9_ii():
    """NY 5324.39(e)(9)(ii), PA (h)(3): across push + down loss -> middle push; both lose -> middle loses.
    Cross 7h 3c | Qd 4s | 2h: across line 7h 3c 2h, down line Qd 4s 2h, board high card (bonus loses).

    seat 2, cards 7d Kc, antes 500, bonus 100, across 1500, down 500, middle 1000:
      across 7d Kc 7h 3c 2h pair of 7s: ante push 0, across push 0; down 7d Kc Qd 4s 2h high card: -500,
      -500; middle push 0; bonus -100. net -1100; returned 500+1500+1000 = 3000, collected 1100.
    seat 4, cards 5d 9c, antes 500, 1x bets: across 5d 9c 7h 3c 2h high card, down 5d 9c Qd 4s 2h high
      card: all five wagers lose, net -2500.
    Totals: wagered 4100 + 2500 = 6600 = returned 3000 + collected 3600; paid 0; players' net -3600."""
    cross = ("7h", "3c", "Qd", "4s", "2h")
    hands = {2: ("7d", "Kc"), 4: ("5d", "9c")}
    wagers = {2: antes(500, bonus=100), 4: antes(500)}
    decisions = {"across": {2: 1500, 4: 500}, "down": {2: 500, 4: 500}, "middle": {2: 1000, 4: 500}}
    driver = play_round(wagers, cross, hands, decisions)
    assert wager_results(driver, 2) == {
        "ante_across": (500, "push", 0),
        "across": (1500, "push", 0),
        "ante_down": (500, "lose", -500),
        "down": (500, "lose", -500),
        "middle": (1000, "push", 0),
        "five_card_bonus": (100, "lose", -100),
    }
    assert {n: r[1] for n, r in wager_results(driver, 4).items()} == dict.fromkeys(
        ("ante_across", "across", "ante_down", "down", "middle"), "lose")
    assert settlement(driver, 4)["net"] == -2500
    (closed,) = of_type(driver.outputs, cmd.RoundClosed)
    assert closed.totals == {"wagered": 6600, "returned": 3000, "collected": 3600, "paid": 0, "player_net": -3600}
    assert [s.seat for s in of_type(driver.outputs, cmd.SeatSettled)] == [4, 2]


# =========================================================================== past-posting (NY (c)(3))


def test_past_posting_on_locked_ante_recorded_and_locked_amount_settles_ny_c3():
    """NY 5324.39(c)(3): a wager may not be increased after "no more bets". Seat 3 (ante 1000) pushes its
    ante across to 3000 while the cards are dealt: Irregularity past_posting with locked 1000 and new 3000,
    shown on the panel; the wager of record stays 1000 (seat 3's across hand wins 1 to 1: +1000)."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock(WAGERS)
    driver.answer_dispense(CROSS)
    out = driver.move_chips(3, "ante_across", 3000)
    (irr,) = of_type(out, cmd.Irregularity)
    assert irr.kind == "past_posting"
    assert (irr.detail["seat"], irr.detail["spot"], irr.detail["locked"], irr.detail["new"]) == (3, "ante_across", 1000, 3000)
    assert any("seat 3" in d.text.lower() for d in of_type(out, cmd.Display))
    assert driver.state == "dealing_players"
    # the stack already asked for arrives; dealing then holds until a supervisor acknowledges
    out = driver.deal(CROSS, HANDS)
    assert len(of_type(out, cmd.StackDealt)) == 1 and not of_type(out, cmd.Dispense)
    assert driver.machine.round_actions() == ("acknowledge", "void_round")
    out = driver.press("acknowledge")  # the dealer alone may not
    assert of_type(out, cmd.PressRefused)[0].role == "dealer"
    driver.send(ev.SupervisorKey(True, "SUP-7"))
    out = driver.press("acknowledge")
    assert of_type(out, cmd.PastPostingAcknowledged) == [cmd.PastPostingAcknowledged(1, (irr.detail,), "SUP-7")]
    assert of_type(out, cmd.Dispense)
    driver.send(ev.SupervisorKey(False, "SUP-7"))
    driver.deal(CROSS, HANDS)
    for step in DECISION_STEPS:
        driver.decide(step, DECISIONS[step])
        driver.reveal()
    assert wager_results(driver, 3)["ante_across"] == (1000, "win", 1000)
    assert settlement(driver, 3)["net"] == 2000


@pytest.mark.parametrize("seat, spot, amount, locked", [
    (1, "five_card_bonus", 0, 100),  # bonus withdrawn (NY (c)(3) "withdrawn")
    (2, "ante_across", 500, 0),  # a seat that did not wager places an ante late (NY (c)(3) "made")
    (1, "across", 2000, 1000),  # across bet changed after its decision was taken (NY (e)(4))
])
def test_past_posting_kinds_ny_c3(seat, spot, amount, locked):
    """NY 5324.39(c)(3): no wager made, increased or withdrawn after "no more bets" (and a decision bet not
    changed once that decision is in): each change is a past_posting Irregularity with the locked amount."""
    driver = dealt_driver()
    driver.decide("across", DECISIONS["across"])
    out = driver.move_chips(seat, spot, amount)
    (irr,) = of_type(out, cmd.Irregularity)
    assert irr.kind == "past_posting"
    assert (irr.detail["locked"], irr.detail["new"]) == (locked, amount)


def test_collecting_forfeited_antes_after_fold_is_not_past_posting_ny_e4():
    """NY 5324.39(e)(4), PA (b): after a fold the forfeited antes are collected by the dealer: emptying those
    spots is not past-posting. Removing the bonus, which stays in action (PA (b)), still is."""
    driver = dealt_driver()
    driver.decide("across", DECISIONS["across"])  # seat 5 folds
    out = driver.move_chips(5, "ante_across", 0) + driver.move_chips(5, "ante_down", 0)
    assert not of_type(out, cmd.Irregularity)
    out = driver.move_chips(5, "five_card_bonus", 0)
    assert [i.kind for i in of_type(out, cmd.Irregularity)] == ["past_posting"]


def test_collecting_forfeited_across_bet_after_down_fold_is_not_past_posting_ny_e6():
    """NY 5324.39(e)(5),(6): a down-decision fold forfeits antes and across bet; collecting them is not
    past-posting."""
    driver = dealt_driver()
    driver.decide("across", DECISIONS["across"])
    driver.reveal()
    driver.decide("down", {1: 500, 3: 0})
    out = sum((driver.move_chips(3, spot, 0) for spot in ("ante_across", "ante_down", "across")), [])
    assert not of_type(out, cmd.Irregularity)


def test_chip_moves_while_betting_open_are_not_irregular_ny_c3():
    """NY 5324.39(c)(3): before "no more bets" wagers may be placed, changed and withdrawn freely."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    out: list[Any] = []
    for seat, spot, amount in [(1, "ante_across", 500), (1, "ante_down", 500), (1, "ante_across", 1000),
                               (1, "ante_across", 0), (4, "five_card_bonus", 100), (4, "middle", 700)]:
        out += driver.move_chips(seat, spot, amount)
    assert out == []
    assert driver.state == "betting"


# =========================================================================== stale snapshot


def test_stale_snapshot_recorded_and_changes_nothing():
    """A SpotsSnapshot that does not answer the pending read (wrong request id) is an Irregularity and
    changes nothing: at "no more bets" no wager is locked from it; at a decision no decision is taken from it;
    the real answer is then applied."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.place(WAGERS)
    request = driver.press("no_more_bets")
    (read,) = of_type(request, cmd.ReadSpots)
    out = driver.send(ev.SpotsSnapshot(read.request_id + 1, ((2, "ante_across", 500), (2, "ante_down", 500))))
    assert [i.kind for i in of_type(out, cmd.Irregularity)] == ["stale_snapshot"]
    assert not [o for o in out if not isinstance(o, cmd.Irregularity)]
    assert driver.state == "locking"
    out = driver.answer_read()
    assert [e["seat"] for e in of_type(out, cmd.WagersLocked)[0].seats] == [1, 3, 5]

    driver.deal(CROSS, HANDS)
    driver.layout[1]["across"] = 500
    request = driver.press("confirm")
    (read,) = of_type(request, cmd.ReadSpots)
    out = driver.send(ev.SpotsSnapshot(read.request_id - 1, ()))
    assert [i.kind for i in of_type(out, cmd.Irregularity)] == ["stale_snapshot"]
    assert not of_type(out, cmd.DecisionMade)
    assert driver.state == "across_reading"


def test_snapshot_nobody_asked_for_is_stale():
    """A snapshot while betting is open (no read pending) is recorded as stale and locks nothing."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    out = driver.send(ev.SpotsSnapshot(1, ((1, "ante_across", 500), (1, "ante_down", 500))))
    assert [i.kind for i in of_type(out, cmd.Irregularity)] == ["stale_snapshot"]
    assert driver.state == "betting"
    assert not of_type(driver.outputs, cmd.WagersLocked)


# =========================================================================== device faults


def test_device_fault_while_starting_is_recorded_and_the_table_keeps_waiting():
    """domain.md start-up self-check: a device that fails before the table opened is recorded (FaultRaised);
    the machine keeps waiting for every handshake, nothing to clear."""
    driver = drive_to("starting")
    out = driver.send(ev.DeviceFault("shoe", "link_lost", "test"))
    assert [(f.device, f.cause) for f in of_type(out, cmd.FaultRaised)] == [("shoe", "link_lost")]
    assert driver.state == "starting"


@pytest.mark.parametrize("state", REACHABLE[1:])
@pytest.mark.parametrize("device, code", [("shoe", "jam"), ("sensors", "link_lost"), ("panel", "link_lost")])
def test_device_fault_in_any_state_moves_to_fault(state, device, code):
    """domain.md faults (jam, link lost, ...) stop the game: in any state a DeviceFault moves the machine to
    ``fault`` with a FaultRaised naming device and cause; in ``fault`` no dealer button is lit or accepted
    (clearing and voiding need the supervisor key)."""
    driver = drive_to(state)
    out = driver.send(ev.DeviceFault(device, code, "test"))
    (fault,) = of_type(out, cmd.FaultRaised)
    assert (fault.device, fault.cause) == (device, code)
    assert driver.state == "fault"
    assert driver.machine.allowed_buttons() == ()
    lamps = of_type(driver.outputs, cmd.SetLamps)
    if device == "panel" and code in LINK_CODES:  # nothing more can reach a panel whose link is down
        assert not of_type(out, cmd.SetLamps)
    elif lamps:  # the panel was ready: its lamps go dark
        assert lamps[-1].buttons == ()
    for button in ev.BUTTONS:
        out = driver.press(button)
        assert of_type(out, cmd.PressRefused)[0].button == button
        assert not of_type(out, (cmd.Dispense, cmd.ReadSpots, cmd.Shuffle, cmd.RoundOpened, cmd.CardsRevealed))
        assert driver.state == "fault"


# The shoe's answer after it came back with seat 3's stack (round 1, stack 2: txn 1*TXN_STRIDE + 2) in flight.
# Stacks 0 (the cross) and 1 (seat 1) of this round were dealt and acknowledged; docs/protocol.md "What did you
# last do": LAST is the shoe's last stack since power-on, 0 for none.
@pytest.mark.parametrize("answer, outcome, resumable", [
    ("previous", "not_dispensed", True),   # the shoe never received the request: ask again on resume
    ("in_flight", "stack_recovered", True),  # it dealt the stack, the answer was lost: the cards are taken
    ("zero", "mismatch", False),  # power-cycled: it forgot the stacks on the table
    ("older", "mismatch", False),  # another shoe, or one whose record went back
])
def test_a_shoe_that_forgot_a_stack_of_this_round_can_only_be_voided(answer, outcome, resumable):
    """Exactly-once dispensing across a shoe reconnection mid-deal: the shoe that dealt this round's previous
    stack must still know it. One that does not (0 after a power cycle, or an older transaction) has lost its
    record of the deck, so a card already on the table could leave it again: ``shoe_mismatch``, void only."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock(WAGERS)
    driver.answer_dispense(CROSS)
    driver.answer_dispense(HANDS[1])
    in_flight = driver.pending_dispense().txn_id
    assert in_flight % TXN_STRIDE == 2
    driver.send(ev.DeviceFault("shoe", "link_lost", "unplugged"))
    out = driver.send(ready("shoe"))
    assert of_type(out, cmd.QueryLast)
    shoe_txn = {"previous": in_flight - 1, "in_flight": in_flight, "zero": 0, "older": in_flight - 2}[answer]
    out = driver.send(ev.ShoeLastDispense(shoe_txn, HANDS[3] if answer == "in_flight" else ()))
    assert [r.outcome for r in of_type(out, cmd.ShoeReconciled)] == [outcome]
    driver.send(ev.SupervisorKey(True, "SUP-2"))
    faults = of_type(driver.outputs, cmd.FaultRaised)
    if resumable:
        assert [f.cause for f in faults] == ["link_lost"]
        assert driver.machine.round_actions() == ("clear_fault", "void_round")
    else:
        assert [f.cause for f in faults] == ["link_lost", "shoe_mismatch"] and not faults[-1].resumable
        assert driver.machine.round_actions() == ("void_round",)
        assert "lost its record or is another shoe" in faults[-1].detail
        out = driver.press("void_round")
        assert of_type(out, cmd.RoundVoided) and not of_type(out, cmd.Dispense)


def test_a_shoe_that_forgot_its_shuffle_before_the_cross_may_be_asked_again():
    """With the cross in flight no card is on the table yet: a shoe answering 0 (nothing since power-on) never
    dealt it, and the request is made again on resume (a shoe that also forgot its shuffle refuses it, which
    is a fault of its own)."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock(WAGERS)
    in_flight = driver.pending_dispense().txn_id
    driver.send(ev.DeviceFault("shoe", "link_lost", "unplugged"))
    driver.send(ready("shoe"))
    out = driver.send(ev.ShoeLastDispense(0, ()))
    assert [r.outcome for r in of_type(out, cmd.ShoeReconciled)] == ["not_dispensed"]
    driver.send(ev.SupervisorKey(True, "SUP-2"))
    out = driver.press("clear_fault")
    assert [d.txn_id for d in of_type(out, cmd.Dispense)] == [in_flight]


@pytest.mark.parametrize("device, resumable", [("shoe", False), ("sensors", True), ("panel", True)])
def test_a_request_the_shoe_refuses_can_only_be_voided(device, resumable):
    """A shoe that NAKs a request (``protocol``) does not hold the state the journal gives it, e.g. the shuffle
    it lost in a power cycle: asking it again would be refused again, so the round can only be voided. A frame
    refused by the sensors or the panel is asked again."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock(WAGERS)
    driver.send(ev.DeviceFault(device, "protocol", "device rejected DISPENSE txn 16 (5 cards): not_allowed_now"))
    (fault,) = of_type(driver.outputs, cmd.FaultRaised)
    assert (fault.device, fault.cause, fault.resumable) == (device, "protocol", resumable)
    driver.send(ev.SupervisorKey(True, "SUP-2"))
    assert driver.machine.round_actions() == (("clear_fault", "void_round") if resumable else ("void_round",))


def test_fault_while_faulted_stays_faulted():
    """domain.md faults: a second fault while faulted keeps the machine in ``fault`` (recorded, not lost)."""
    driver = drive_to("dealing_players")
    driver.send(ev.DeviceFault("shoe", "jam"))
    out = driver.send(ev.DeviceFault("sensors", "link_lost"))
    assert of_type(out, (cmd.Irregularity, cmd.FaultRaised))
    assert driver.state == "fault"
    assert driver.machine.allowed_buttons() == ()


# =========================================================================== hole-card secrecy

CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][cdhs](?![A-Za-z0-9])")


def card_tokens(text: str) -> set[str]:
    return set(CARD_TOKEN.findall(text))


def strings_in(value: Any) -> list[str]:
    """Every string inside an output (dataclass fields, dicts, lists, tuples)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in strings_in(k) + strings_in(v)]
    if isinstance(value, (list, tuple, set)):
        return [s for v in value for s in strings_in(v)]
    return []


def cards_in(output: Any) -> set[str]:
    return {c for s in strings_in(output) for c in card_tokens(s) | ({s} if s in DECK else set())}


def _secrecy_round() -> TableDriver:
    """The hand-built round with a refused decision, a past-posting and a stale snapshot mixed in."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock({**WAGERS, 4: {"ante_across": 500}})  # refused first
    driver.lock(WAGERS)
    driver.deal(CROSS, HANDS)
    driver.decide("across", {1: 1000, 3: 700, 5: 0})  # refused
    driver.decide("across", DECISIONS["across"])
    driver.move_chips(3, "ante_down", 5000)
    driver.send(ev.SupervisorKey(True, "SUP-1"))
    driver.press("acknowledge")
    driver.send(ev.SupervisorKey(False, "SUP-1"))
    driver.send(ev.SpotsSnapshot(999, ()))
    for step in DECISION_STEPS:
        if step != "across":
            driver.decide(step, DECISIONS[step])
        driver.reveal()
    return driver


def test_hole_card_secrecy_over_a_full_round():
    """domain.md Hole-card secrecy (NY (d)(2) cards dealt face down; NY (e)(4),(6),(8) community cards turned
    in three steps; NY (e)(9)(i) a player's cards revealed at its settlement): across every output of a round,
    no Display and no SetLamps shows any player card, or a community card before its CardsRevealed; no
    output other than StackDealt carries a player card before that seat's settlement (the reveal) or a
    community card before its CardsRevealed."""
    driver = _secrecy_round()
    assert driver.state == "closed"
    revealed: set[str] = set()
    settled: set[str] = set()
    for output in driver.outputs:
        if isinstance(output, cmd.StackDealt):
            continue
        if isinstance(output, cmd.SeatSettled):
            settled |= set(HANDS[output.seat])
        if isinstance(output, cmd.CardsRevealed):
            revealed |= set(output.cards)
        seen = cards_in(output)
        if isinstance(output, (cmd.Display, cmd.SetLamps)):
            assert not seen & PLAYER_CARDS, output
        assert not seen & (set(CROSS) - revealed), f"community card before its reveal: {output}"
        assert not seen & (PLAYER_CARDS - settled), f"player card before its seat's settlement: {output}"
    assert revealed == set(CROSS)
    assert len(of_type(driver.outputs, cmd.StackDealt)) == 4


def test_folded_seat_cards_never_displayed():
    """PA 674a.11(b): a folded player's cards go to the discard rack unrevealed: no Display or lamp ever
    shows seat 5's cards (Ac 3d), also after the round."""
    driver = full_round()
    for output in of_type(driver.outputs, (cmd.Display, cmd.SetLamps)):
        assert not cards_in(output) & set(HANDS[5])


# =========================================================================== random sequences

BUTTON_CHOICES = ev.BUTTONS + ("bogus",)
ANTE_CHOICES = [None, None, 500, 1000, 2000]


class Invariants:
    """Checks the round invariants on the output stream alone (no peeking into the machine)."""

    def __init__(self) -> None:
        self.round_no: int | None = None
        self.locked_rounds: set[int] = set()
        self.seats: set[int] = set()
        self.folded_at: dict[int, str] = {}
        self.decided: dict[str, list[int]] = {}
        self.settled: set[tuple[int, int]] = set()
        self.ante: dict[int, int] = {}

    def feed(self, outputs: list[Any]) -> None:
        for o in outputs:
            if isinstance(o, cmd.RoundOpened):
                assert o.round_no != self.round_no
                self.round_no = o.round_no
                self.seats, self.folded_at, self.decided, self.ante = set(), {}, {}, {}
            elif isinstance(o, cmd.WagersLocked):
                assert o.round_no == self.round_no
                self.locked_rounds.add(o.round_no)
                self.seats = {e["seat"] for e in o.seats}
                self.ante = {e["seat"]: e["wagers"]["ante_across"] for e in o.seats}
            elif isinstance(o, cmd.Dispense):
                # NY (c)(3) / domain.md interlock: no card dispensed before the wagers of this round are locked
                assert self.round_no in self.locked_rounds
            elif isinstance(o, cmd.DecisionMade):
                assert o.seat in self.seats and o.seat not in self.folded_at
                done = self.decided.setdefault(o.decision, [])
                assert o.seat not in done
                done.append(o.seat)
                if o.action == "fold":
                    self.folded_at[o.seat] = o.decision
                else:  # NY (e)(3),(5),(7): one to three times the ante
                    assert o.amount in (self.ante[o.seat], 2 * self.ante[o.seat], 3 * self.ante[o.seat])
            elif isinstance(o, cmd.CardsRevealed):
                step_index = DECISION_STEPS.index(o.step)
                active = {s for s in self.seats
                          if s not in self.folded_at or DECISION_STEPS.index(self.folded_at[s]) >= step_index}
                # NY (e)(4),(6),(8): a step's cards turn only after every active seat has decided
                assert sorted(self.decided.get(o.step, [])) == sorted(active)
                assert self.decided.get(o.step, []) == sorted(self.decided.get(o.step, []))
            elif isinstance(o, cmd.SeatSettled):
                key = (o.round_no, o.seat)
                assert key not in self.settled  # each seat settled at most once per round
                self.settled.add(key)
            elif isinstance(o, cmd.RoundClosed):
                t = o.totals
                assert t["wagered"] == t["returned"] + t["collected"]


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_event_sequences_keep_the_invariants(data):
    """Random sequences of presses, snapshots (valid and not), stacks from a shuffled deck (sometimes
    corrupted), spot changes, device readiness and faults: handle() never raises; no Dispense before the
    round's WagersLocked (NY (c)(3)); no CardsRevealed before every active seat's DecisionMade for that step
    (NY (e)(4),(6),(8)); each seat settled at most once per round; wagered == returned + collected in every
    RoundClosed."""
    machine = new_round(last_round_no=data.draw(st.integers(0, 3), label="last_round_no"))
    check = Invariants()
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    pending_read: int | None = None
    pending_dispense: cmd.Dispense | None = None
    deck: list[str] = []
    dealt: list[str] = []

    def feed(event: Any) -> None:
        nonlocal pending_read, pending_dispense, deck, dealt
        outputs = machine.handle(event)  # must never raise
        check.feed(outputs)
        for o in outputs:
            if isinstance(o, cmd.ReadSpots):
                pending_read = o.request_id
            elif isinstance(o, cmd.Dispense):
                pending_dispense = o
            elif isinstance(o, cmd.RoundOpened):
                deck, dealt = list(DECK), []
                rng.shuffle(deck)

    if data.draw(st.integers(0, 4), label="start") > 0:
        for device in DEVICES:
            feed(ready(device))

    for _ in range(data.draw(st.integers(10, 150), label="length")):
        smart = data.draw(st.integers(0, 9), label="smart") < 7
        if smart:
            if pending_read is not None:
                kind = "read"
            elif pending_dispense is not None:
                kind = "dispense"
            elif machine.state == "betting" and "no_more_bets" not in machine.allowed_buttons():
                kind = "shuffle"
            else:
                kind = "press_allowed"
        else:
            kind = data.draw(st.sampled_from(
                ["press", "press_allowed", "shuffle", "read", "stale", "dispense", "spot", "spot", "ready", "fault"]),
                label="kind")

        if kind in ("press", "press_allowed"):
            lit = machine.allowed_buttons()
            if kind == "press_allowed" and lit:
                button = lit[0]
            else:
                button = data.draw(st.sampled_from(BUTTON_CHOICES), label="button")
            feed(ev.ButtonPressed(button))
        elif kind == "shuffle":
            feed(ev.ShuffleComplete(data.draw(st.sampled_from([52, 52, 52, 51]), label="count")))
        elif kind == "read":
            request = pending_read if pending_read is not None else data.draw(st.integers(0, 5), label="rid")
            pending_read = None
            layout: dict[int, dict[str, int]] = {}
            for seat in ev.SEATS:
                ante = check.ante.get(seat) or data.draw(st.sampled_from(ANTE_CHOICES), label="ante")
                if ante is None:
                    continue
                wagers = antes(ante)
                variant = data.draw(st.integers(0, 9), label="variant")
                if variant == 0:
                    wagers["ante_down"] = ante + 100  # unequal antes
                elif variant == 1:
                    wagers["five_card_bonus"] = 100
                for step in DECISION_STEPS:
                    amount = data.draw(st.sampled_from([0, ante, 2 * ante, 3 * ante, ante, 2 * ante, ante + 1]),
                                       label="bet")
                    if amount and (check.ante or variant == 2):
                        wagers[step] = amount
                layout[seat] = wagers
            spots = tuple((s, spot, layout[s][spot]) for s in sorted(layout) for spot in ev.SPOTS if layout[s].get(spot))
            feed(ev.SpotsSnapshot(request, spots))
        elif kind == "stale":
            feed(ev.SpotsSnapshot((pending_read or 0) + data.draw(st.integers(1, 3), label="off"), ()))
        elif kind == "dispense":
            request = pending_dispense
            pending_dispense = None
            count = request.count if request else data.draw(st.sampled_from([2, 5]), label="count")
            txn = request.txn_id if request else data.draw(st.integers(0, 200), label="txn")
            flaw = data.draw(st.integers(0, 19), label="flaw")
            if not deck:
                deck = list(DECK)
                rng.shuffle(deck)
            cards = [deck.pop() for _ in range(min(count, len(deck)))]
            if flaw == 0:
                cards = cards[:-1]
            elif flaw == 1 and dealt:
                cards[-1] = dealt[0]
            elif flaw == 2:
                cards[0] = "Zz"
            elif flaw == 3:
                txn += 1
            dealt += cards
            feed(ev.StackDispensed(txn, tuple(cards)))
        elif kind == "spot":
            feed(ev.SpotChanged(data.draw(st.integers(1, 6), label="seat"), data.draw(st.sampled_from(ev.SPOTS), label="spot"),
                                data.draw(st.sampled_from([0, 100, 500, 1000, 1500]), label="amount")))
        elif kind == "ready":
            feed(ready(data.draw(st.sampled_from(DEVICES), label="device")))
        elif kind == "fault":
            if data.draw(st.integers(0, 3), label="fault_gate") == 0:
                feed(ev.DeviceFault(data.draw(st.sampled_from(DEVICES), label="device"), "jam", "random"))


# =========================================================================== roles, exclusion, voiding


def test_invalid_seat_excluded_by_the_dealer_plays_no_part():
    """Issue game protection: a seat with an invalid wager at "no more bets" is named; the dealer excludes
    it (SeatExcluded, with the reason); the lock goes on without it: its spots are locked at 0 (chips placed
    there later are past-posting) and it gets no cards (NY (d)(2): stacks only to seats that wagered)."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    out = driver.lock({1: antes(500), 4: {"ante_across": 500}})  # seat 4: one ante only
    assert driver.state == "wagers_held" and "exclude" in driver.machine.allowed_buttons()
    out = driver.press("exclude")
    (excluded,) = of_type(out, cmd.SeatExcluded)
    assert (excluded.seat, excluded.by) == (4, "dealer") and "ante" in excluded.reason
    out = driver.answer_read()  # the seat's chips are still there: they are ignored
    (locked,) = of_type(out, cmd.WagersLocked)
    assert [entry["seat"] for entry in locked.seats] == [1]
    driver.deal(CROSS, {1: HANDS[1]})
    assert [s.seat for s in of_type(driver.outputs, cmd.StackDealt)] == [None, 1]
    out = driver.move_chips(4, "ante_down", 500)
    assert [i.kind for i in of_type(out, cmd.Irregularity)] == ["past_posting"]


@pytest.mark.parametrize("state", ["betting", "dealing_players", "across_decision", "down_reveal", "middle_decision"])
def test_a_supervisor_voids_a_round_in_progress_and_every_wager_is_returned(state):
    """A round voided by a supervisor (a misdeal, a dispute, a fault that will not clear): every wager of record
    returned (the locked ones and each decision bet), who and why recorded; without the key the press is
    refused and recorded and nothing changes."""
    driver = drive_to(state)
    out = driver.press("void_round")
    (refused,) = of_type(out, cmd.PressRefused)
    assert (refused.button, refused.role) == ("void_round", "dealer") and "supervisor" in refused.reason
    assert driver.state == state
    driver.send(ev.SupervisorKey(True, "SUP-2"))
    out = driver.press("void_round")
    (voided,) = of_type(out, cmd.RoundVoided)
    assert driver.state == "voided" and (voided.by, voided.role) == ("SUP-2", "supervisor")
    placed = {s.seat: dict(s.wagers) for s in driver.machine.round.seats.values()}
    assert {e["seat"]: e["wagers"] for e in voided.seats} == placed
    amount = sum(sum(w.values()) for w in placed.values())
    assert voided.totals == {"wagered": amount, "returned": amount, "collected": 0, "paid": 0, "player_net": 0}
    assert driver.machine.round_actions() == ("open_betting",)
    assert not of_type(driver.outputs, cmd.SeatSettled)


def test_control_interface_actions_carry_their_role():
    """Control interface (controller.round.inputs.OperatorAction): a dealer login may not clear a fault or void, a
    supervisor login may; an unknown action or role is refused and recorded; nothing else changes."""
    driver = drive_to("across_decision")
    driver.send(ev.DeviceFault("shoe", "jam", "test"))
    out = driver.send(OperatorAction("clear_fault", "dan", "dealer"))
    assert [(r.button, r.user, r.role) for r in of_type(out, cmd.PressRefused)] == [("clear_fault", "dan", "dealer")]
    out = driver.send(OperatorAction("reboot", "sue", "supervisor"))
    assert of_type(out, cmd.PressRefused)[0].reason == "unknown action or role" and driver.state == "fault"
    out = driver.send(OperatorAction("clear_fault", "sue", "supervisor", "jam cleared by hand"))
    (cleared,) = of_type(out, cmd.FaultCleared)
    assert (cleared.by, cleared.role, cleared.resumed) == ("sue", "supervisor", "across_decision")
    assert driver.state == "across_decision"


def test_past_posting_seen_in_the_decision_reading_holds_the_decision():
    """NY (c)(3): chips added to a locked ante between "confirm" and the sensors' answer: the reading shows
    them; no decision is taken (the round does not advance) until a supervisor acknowledges; the decision is
    then read again with the locked amount as the wager of record."""
    driver = dealt_driver()
    driver.press("confirm")
    driver.layout[3]["ante_across"] = 5000
    out = driver.answer_read()
    assert [i.kind for i in of_type(out, cmd.Irregularity)] == ["past_posting"]
    assert not of_type(out, cmd.DecisionMade) and driver.state == "across_decision"
    assert driver.machine.round_actions() == ("acknowledge", "void_round")
    driver.send(ev.SupervisorKey(True, "SUP-3"))
    driver.press("acknowledge")
    driver.send(ev.SupervisorKey(False, "SUP-3"))
    out = driver.decide("across", DECISIONS["across"])
    assert len(of_type(out, cmd.DecisionMade)) == 3 and not of_type(out, cmd.Irregularity)


def test_nothing_to_void_while_starting_after_a_restart():
    """A restart between rounds goes back to ``starting``: no round is open, so there is nothing to void and no
    action at all until every device answered and the shoe was asked (found by the stateful test)."""
    driver = full_round()
    driver.send(ServiceStarted())
    assert driver.state == "starting" and driver.machine.round_actions() == ()
    driver.send(ev.SupervisorKey(True, "SUP-1"))
    out = driver.press("void_round")
    assert of_type(out, cmd.PressRefused) and not of_type(out, (cmd.RoundVoided, cmd.FaultRaised))


# =========================================================================== round rules of the floor


def test_a_supervisor_may_void_while_past_posting_is_held():
    """A supervisor may void a round at any time before its settlement, whatever else is pending: past-posting
    on a non-playing seat's spot in the across decision holds the round for an acknowledgement, and a
    supervisor's void is allowed there too (the one rule lives in the graph: ``void_round``'s condition)."""
    driver = dealt_driver()
    driver.move_chips(2, "across", 500)  # seat 2 does not play
    assert driver.machine.round_actions() == ("acknowledge", "void_round")
    out = driver.send(OperatorAction("void_round", "sue", "supervisor", "dispute at seat 2", "dispute"))
    (voided,) = of_type(out, cmd.RoundVoided)
    assert driver.state == "voided" and (voided.by, voided.role, voided.code) == ("sue", "supervisor", "dispute")
    (acked,) = of_type(out, cmd.PastPostingAcknowledged)
    assert (acked.by, acked.role) == ("sue", "supervisor")


def test_void_is_allowed_exactly_where_a_round_is_open_and_not_settled():
    """The void rule, checked on every state the table reaches: allowed iff a round is open (``round_open``)."""
    for state in REACHABLE:
        driver = drive_to(state)
        assert ("void_round" in driver.machine.allowed_actions()) == driver.machine.round_open(), state


def test_a_refusal_shows_for_a_while_and_the_prompt_of_the_state_comes_back():
    """A refused press shows its reason on the panel, but the prompt of the state is kept: ``PromptDue`` (a few
    seconds later) and the panel's return after a link loss show the prompt again, never the refusal."""
    driver = dealt_driver()
    prompt = driver.machine.prompt()
    assert prompt and prompt.startswith("Across decision")
    out = driver.press("void_round")  # the dealer, without the key
    (shown,) = of_type(out, cmd.Display)
    assert "void_round" in shown.text and driver.machine.prompt() == prompt
    out = driver.send(PromptDue())
    assert [d.text for d in of_type(out, cmd.Display)] == [prompt]
    assert driver.send(PromptDue()) == []  # already showing the prompt
    driver.press("void_round")
    driver.send(ev.DeviceFault("panel", "link_lost", "unplugged"))  # the round faults: a new prompt
    fault_prompt = driver.machine.prompt()
    assert fault_prompt.startswith("FAULT link_lost")
    out = driver.send(ready("panel"))
    shown = [d.text for d in of_type(out, cmd.Display)]
    assert shown[0] == fault_prompt and not any("void_round" in text for text in shown)
    assert driver.machine.view()["prompt"] == driver.machine.prompt()


@pytest.mark.parametrize("who", ["control", "panel"])
def test_every_refusal_names_the_user_and_role(who):
    """Every record caused by a person's action names who and in which role: a refusal that the reading of the
    spots causes (an invalid wager at "no more bets", an irregular bet at "confirm") names the person who
    pressed, as the press refused at once does."""
    def act(driver: TableDriver, action: str) -> list[Any]:
        if who == "control":
            return driver.send(OperatorAction(action, "dealer1", "dealer"))
        return driver.press(action)

    expected = ("dealer1", "dealer") if who == "control" else ("", "dealer")
    driver = TableDriver()
    driver.start()
    act(driver, "open_betting")
    driver.send(ev.ShuffleComplete(52))
    driver.answer_read()
    driver.place({1: antes(500), 4: {"ante_across": 500}})
    act(driver, "no_more_bets")
    out = driver.answer_read()
    (refused,) = of_type(out, cmd.PressRefused)
    assert (refused.button, refused.user, refused.role) == ("no_more_bets", *expected)
    out = act(driver, "exclude")
    (excluded,) = of_type(out, cmd.SeatExcluded)
    assert (excluded.by, excluded.role) == (expected[0] or "dealer", "dealer")
    driver.answer_read()
    driver.move_chips(4, "ante_across", 0)  # the excluded seat's chips went back to the player
    driver.deal(CROSS, {1: HANDS[1]})
    driver.move_chips(1, "across", 700)  # not a multiple of the ante
    act(driver, "confirm")
    out = driver.answer_read()
    (refused,) = of_type(out, cmd.PressRefused)
    assert (refused.button, refused.user, refused.role) == ("confirm", *expected)


def test_a_dealer_account_asking_for_a_supervisor_action_is_told_its_role():
    """Over the control interface the role is the account's, not the panel key's: a dealer account's void is
    refused saying the user's role is dealer, even while a supervisor's key is turned on the panel."""
    driver = dealt_driver()
    driver.send(ev.SupervisorKey(True, "SUP-1"))
    out = driver.send(OperatorAction("void_round", "dealer1", "dealer", "misdeal", "misdeal"))
    (refused,) = of_type(out, cmd.PressRefused)
    assert "role dealer" in refused.reason and (refused.user, refused.role) == ("dealer1", "dealer")
    assert driver.state == "across_decision"


def test_an_action_naming_another_round_or_state_never_changes_this_one():
    """The round guard (docs/control.md): an action decided on round N (or on a state) that is no longer the
    current one is refused, with the mismatch named, and changes nothing; one naming the current round acts."""
    driver = dealt_driver()
    current = driver.machine.round_no
    for stale in (OperatorAction("void_round", "sue", "supervisor", "late", "other", round=current - 1),
                  OperatorAction("void_round", "sue", "supervisor", "late", "other", round=current + 1),
                  OperatorAction("void_round", "sue", "supervisor", "late", "other", round=current,
                                 state="betting"),
                  OperatorAction("void_round", "sue", "supervisor", "late", "other", stale="stale: seen at the door")):
        out = driver.send(stale)
        (refused,) = of_type(out, cmd.PressRefused)
        assert refused.reason.startswith("stale") and (refused.user, refused.role) == ("sue", "supervisor")
        assert driver.state == "across_decision" and not of_type(out, cmd.RoundVoided)
    out = driver.send(OperatorAction("void_round", "sue", "supervisor", "misdeal", "misdeal", round=current,
                                     state="across_decision"))
    assert of_type(out, cmd.RoundVoided) and driver.state == "voided"


@pytest.mark.parametrize("step", DECISION_STEPS)
def test_a_round_where_every_seat_folded_and_no_bonus_remains_settles_at_once(step):
    """NY 5324.39(e)(9) settles "each remaining player": when every seat has folded and no five-card bonus waits
    for the board, nothing is left in action and the round settles at the fold (every forfeited wager
    collected), with no more confirms or reveals; the unturned community cards are never revealed."""
    wagers = {1: antes(500), 3: antes(1000)}
    driver = dealt_driver(wagers, {1: HANDS[1], 3: HANDS[3]})
    before = DECISION_STEPS[:DECISION_STEPS.index(step)]
    for earlier in before:
        driver.decide(earlier, {1: 500, 3: 1000})
        driver.reveal()
    out = driver.decide(step, {})
    assert driver.state == "closed"
    (closed,) = of_type(out, cmd.RoundClosed)
    wagered = sum(sum(w.values()) for w in wagers.values()) + sum(500 + 1000 for _ in before)
    assert closed.totals == {"wagered": wagered, "returned": 0, "collected": wagered, "paid": 0,
                             "player_net": -wagered}
    assert [r.step for r in of_type(driver.outputs, cmd.CardsRevealed)] == list(before)


def test_a_five_card_bonus_keeps_the_round_going_after_every_fold():
    """PA 674a.11(b),(d),(f): a five-card bonus stays in action after a fold: with one, the round goes on to
    every reveal although no seat is in action."""
    driver = dealt_driver({1: antes(500, bonus=500)}, {1: HANDS[1]})
    driver.decide("across", {})
    assert driver.state == "across_reveal"


def test_a_past_posting_repeated_after_the_chips_went_back_is_past_posting_again():
    """NY (c)(3): a locked spot raised (acknowledged), put back, then raised to the same amount again is a second
    past-posting, recorded and held for a supervisor, not "the same chips seen again"; so for a held seat's spot
    that rises above what it held, comes down, and rises again."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock({1: antes(500), 2: antes(55000)})  # seat 2 above the table maximum: held
    key = ev.SupervisorKey
    for seat, spot, locked, raised in ((1, "ante_across", 500, 600), (2, "ante_down", 55000, 58000)):
        for _ in range(2):
            out = driver.move_chips(seat, spot, raised)
            assert [(i.detail["locked"], i.detail["new"]) for i in of_type(out, cmd.Irregularity)
                    if i.kind == "past_posting"] == [(locked, raised)]
            driver.send(key(True, "SUP-1"))
            driver.press("acknowledge")
            driver.send(key(False, ""))
            driver.move_chips(seat, spot, locked)


def test_a_fault_raised_with_no_round_open_is_cleared_never_held_for_a_void():
    """A shoe's refusal (``protocol``: a round in progress can only be voided) reported between rounds: there
    is no round to void, so a supervisor clears it and the table opens its next round (which shuffles and
    counts the deck before any wager locks, domain.md "Interlocks"); it used to hold the table in ``fault``
    for good, a restart included (void_round refused: no round)."""
    driver = TableDriver()
    driver.start()
    driver.send(ev.DeviceFault("shoe", "protocol", "shoe fault code 0"))
    (fault,) = of_type(driver.outputs, cmd.FaultRaised)
    assert (fault.round_no, fault.cause, fault.resumable) == (None, "protocol", True)
    driver.send(ev.SupervisorKey(True, "SUP-2"))
    assert driver.machine.round_actions() == ("clear_fault",)
    driver.press("clear_fault")
    driver.send(ev.SupervisorKey(False, "SUP-2"))
    assert driver.machine.state != "fault"
    out = driver.open_betting()
    assert of_type(out, cmd.RoundOpened)


@pytest.mark.parametrize("code, detail", [("protocol", "device rejected QUERY_LAST: not allowed now"),
                                          ("timeout", "no answer to QUERY_LAST")])
def test_a_shoe_that_refuses_or_never_answers_query_last_at_the_start_holds_the_table_in_a_fault_shown(code, detail):
    """docs/architecture.md "Crash recovery": the shoe is asked what it last dispensed before anything else, and
    the table opens only on its answer. A shoe that NAKs QUERY_LAST or does not answer it (after the driver's
    repeats) used to leave the table in ``starting`` for good: no fault in the machine's faults (none on the panel
    or in /state), no button lit, never asked again. Now: a resumable fault; a supervisor's clearance has the
    shoe asked again (the fault stands until it answers); the next clearance, after the answer, opens the table."""
    driver = TableDriver()
    for device in ("panel", "sensors", "shoe"):
        driver.send(ready(device))
    assert of_type(driver.last, cmd.QueryLast)
    driver.send(ev.DeviceFault("shoe", code, detail))
    (fault,) = of_type(driver.last, cmd.FaultRaised)
    assert (driver.state, fault.device, fault.cause, fault.resumable) == ("fault", "shoe", code, True)
    assert detail in fault.detail and driver.machine.faults == [fault]  # what the panel and /state show
    assert driver.machine.allowed_buttons() == ()  # nothing for the dealer, nothing dealt
    driver.send(ev.SupervisorKey(True, "SUP-2"))
    assert driver.machine.round_actions() == ("clear_fault",)
    driver.press("clear_fault")
    assert [type(o) for o in driver.last if isinstance(o, (cmd.QueryLast, cmd.Shuffle, cmd.Dispense, cmd.ReadSpots))
            ] == [cmd.QueryLast]
    assert driver.state == "fault" and not of_type(driver.last, cmd.FaultCleared)
    assert driver.machine.round_actions() == ()  # waiting for the answer: a second press asks nothing more
    driver.send(ev.ShoeLastDispense(0, ()))
    assert of_type(driver.last, cmd.ShoeReconciled)[0].outcome == "in_step"
    assert driver.machine.round_actions() == ("clear_fault",)
    driver.press("clear_fault")
    assert of_type(driver.last, cmd.FaultCleared) and driver.state == "idle"
    driver.send(ev.SupervisorKey(False, "SUP-2"))
    assert driver.machine.allowed_buttons() == ("open_betting",)
    assert of_type(driver.open_betting(), cmd.RoundOpened)


def test_a_refused_query_last_after_a_restart_mid_round_asks_again_then_resumes_the_round():
    """A restart during betting holds the round in ``fault`` (cause ``restart``); the shoe's NAK of the query that
    follows adds its fault, and the table is not stuck waiting for an answer that never comes: a supervisor has
    the shoe asked again, then clears, and the round resumes where it stopped."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.send(ServiceStarted())
    for device in ("panel", "sensors", "shoe"):
        driver.send(ready(device))
    driver.send(ev.DeviceFault("shoe", "protocol", "device rejected QUERY_LAST: not allowed now"))
    assert [f.cause for f in driver.machine.faults] == ["restart", "protocol"]
    driver.send(ev.SupervisorKey(True, "SUP-2"))
    driver.press("clear_fault")
    assert of_type(driver.last, cmd.QueryLast) and driver.state == "fault"
    driver.send(ev.ShoeLastDispense(0, ()))
    driver.press("clear_fault")
    assert driver.state == "betting" and of_type(driver.last, cmd.FaultCleared)[0].resumed == "betting"


def test_an_undefined_fault_code_holds_an_open_round_for_a_void_and_is_cleared_between_rounds():
    """A FAULT code docs/protocol.md does not define (``fault_200``) says nothing of what the shoe did with the
    deck: in a round it fails closed, a void only (it was a resumable ``fault_200``); with no round open there is
    nothing to void, and a supervisor clears it (the next round shuffles and counts the deck)."""
    driver = TableDriver()
    driver.start()
    driver.send(ev.DeviceFault("shoe", ev.undefined_fault(200), "code 200"))
    (fault,) = of_type(driver.last, cmd.FaultRaised)
    assert (fault.cause, fault.resumable) == ("fault_200", True)
    driver.send(ev.SupervisorKey(True, "SUP-2"))
    driver.press("clear_fault")
    driver.send(ev.SupervisorKey(False, "SUP-2"))
    driver.open_betting()
    driver.send(ev.DeviceFault("shoe", ev.undefined_fault(200), "code 200"))
    (fault,) = of_type(driver.last, cmd.FaultRaised)
    assert (fault.cause, fault.resumable, driver.state) == ("fault_200", False, "fault")
    driver.send(ev.SupervisorKey(True, "SUP-2"))
    assert driver.machine.round_actions() == ("void_round",)
