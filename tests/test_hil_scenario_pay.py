"""The payout steps of scenario files (``hil.scenario_pay``, docs/rig.md "Paying"): what ``pay_as_shown`` leaves
on each spot, the order ``pay`` insists on, the ``payout`` expectation and the schema of both steps. The table
here is a stand-in that answers as the round machine's payout does (controller.round.machine: the seat asked first
is read after ``paid``); the scenarios themselves run the service (``python -m hil.rig --scenario``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hil.expect import check_payout_view
from hil.scenario import ScenarioError, load_scenario
from hil.scenario_pay import PayFailed, pay_as_shown, pay_seat, shown_amounts

SPOTS = ("five_card_bonus", "ante_across", "ante_down", "across", "down", "middle")


def screen(seat_steps: dict[int, dict[str, tuple[str, int]]], to_pay: list[int], differences=()) -> dict:
    """A ``/state`` ``payout`` as the dealer's screen shows it: per seat, spot -> (action, pay)."""
    return {"seat": to_pay[0] if to_pay else None, "to_pay": list(to_pay), "differences": list(differences),
            "seats": {str(seat): {"spots": {spot: {"action": steps.get(spot, ("none", 0))[0],
                                                   "pay": steps.get(spot, ("none", 0))[1]} for spot in SPOTS}}
                      for seat, steps in seat_steps.items()}}


class StandIn:
    """Seats paid in ``order``; a seat reads right when its chips equal ``right[seat]``, else it is a mispay
    shown until paid again (as controller.round.machine does)."""

    def __init__(self, steps, order, right, chips, winning_spot="wager_and_payout"):
        self.steps, self.to_pay, self.right = steps, list(order), right
        self._chips = dict(chips)
        self.log: list = []
        self.differences: list = []
        self.pressed = 0
        self._winning = winning_spot

    def state(self):
        if not self.to_pay:
            return {"state": "closed", "payout": None}
        return {"state": "payout", "display": f"Seat {self.to_pay[0]}",
                "payout": screen(self.steps, self.to_pay, self.differences)}

    def chips(self):
        return dict(self._chips)

    def set_chips(self, seat, amounts):
        for spot, amount in amounts.items():
            self._chips.pop((seat, spot), None)
            if amount:
                self._chips[(seat, spot)] = amount

    def press_paid(self):
        self.pressed += 1
        seat = self.to_pay[0]
        seen = {spot: a for (s, spot), a in self._chips.items() if s == seat}
        self.differences = [] if seen == self.right[seat] else [{"spot": "five_card_bonus"}]
        self.log.append({"type": "PayoutChecked", "data": {"seat": seat}})
        if not self.differences:
            self.to_pay.pop(0)

    def records(self):
        return list(self.log)

    def winning_spot(self):
        return self._winning



def test_paid_as_shown_a_loser_is_taken_a_push_left_and_a_winner_paid_on_or_beside_its_stake():
    # Seat 3: a 100 bonus paid 400 (4:1), the ante across taken, the ante down a push of 500.
    payout = screen({3: {"five_card_bonus": ("pay", 400), "ante_across": ("take", 0), "ante_down": ("push", 0)}},
                    [3])
    chips = {(3, "five_card_bonus"): 100, (3, "ante_across"): 500, (3, "ante_down"): 500, (4, "ante_down"): 700}
    on_stake = shown_amounts(payout, 3, chips, "wager_and_payout")
    assert on_stake == {"five_card_bonus": 500, "ante_across": 0, "ante_down": 500, "across": 0, "down": 0,
                        "middle": 0}
    beside = shown_amounts(payout, 3, chips, "payout")
    assert beside["five_card_bonus"] == 400 and beside["ante_down"] == 500 and beside["ante_across"] == 0


def test_pay_refuses_a_seat_the_panel_does_not_ask_for():
    table = StandIn({4: {}, 2: {}}, [4, 2], {4: {}, 2: {}}, {})
    with pytest.raises(PayFailed, match="does not ask for seat 2: state payout, seat 4 asked"):
        pay_seat(table, 2, {}, timeout=0.2)
    assert table.pressed == 0


def test_pay_leaves_exactly_the_chips_written_and_presses_paid_once():
    table = StandIn({2: {"five_card_bonus": ("pay", 400)}}, [2], {2: {"five_card_bonus": 500}},
                    {(2, "five_card_bonus"): 100, (2, "ante_across"): 500})
    pay_seat(table, 2, {"five_card_bonus": 500}, timeout=1)
    assert table.chips() == {(2, "five_card_bonus"): 500}  # the ante not named: emptied
    assert table.pressed == 1 and table.state()["state"] == "closed"
    table = StandIn({2: {}}, [2], {2: {}}, {})
    pay_seat(table, 2, {"ante_down": 300}, press=False, timeout=1)
    assert table.chips() == {(2, "ante_down"): 300} and table.pressed == 0


def test_pay_as_shown_pays_every_seat_in_the_panels_order_and_fails_on_a_mispay():
    steps = {4: {"five_card_bonus": ("pay", 400), "ante_across": ("take", 0)},
             2: {"ante_across": ("push", 0), "ante_down": ("take", 0)}}
    chips = {(4, "five_card_bonus"): 100, (4, "ante_across"): 500, (2, "ante_across"): 500, (2, "ante_down"): 500}
    right = {4: {"five_card_bonus": 500}, 2: {"ante_across": 500}}
    table = StandIn(steps, [4, 2], right, chips)
    assert pay_as_shown(table, timeout=5) == [4, 2]
    assert table.chips() == {(4, "five_card_bonus"): 500, (2, "ante_across"): 500} and table.pressed == 2
    wrong = StandIn(steps, [4, 2], {4: {"five_card_bonus": 900}, 2: {}}, chips)
    with pytest.raises(PayFailed, match="seat 4 paid as shown reads as a mispay"):
        pay_as_shown(wrong, timeout=5)


def test_the_payout_expectation_names_what_differs():
    state = {"state": "payout", "payout": {"seat": 4, "to_pay": [4, 2], "differences": []}}
    assert check_payout_view({"seat": 4, "to_pay": [4, 2]}, state) == []
    assert check_payout_view({"seat": 2}, state) == ["payout seat: 4, expected 2"]
    assert check_payout_view(None, state) == ["payout shown (seat 4), none expected"]
    assert check_payout_view(None, {"state": "closed", "payout": None}) == []
    assert check_payout_view({"seat": 4}, {"state": "closed", "payout": None})[0].startswith("no payout shown")


def test_the_schema_checks_the_payout_steps(tmp_path: Path):
    path = tmp_path / "pay.yaml"
    path.write_text("\n".join([
        "name: pay",                                    # 1
        "steps:",                                       # 2
        "  - pay: {seat: 2, five_card_bonus: 500}",     # 3: good
        "  - pay: {seat: 7}",                           # 4: no seat 7
        "  - pay: {seat: 2, bonus: 500}",               # 5: not a spot
        "  - pay_as_shown: false",                      # 6: only true
        "  - expect: {payout: {seat: 2, paid: 1}}",     # 7: not a field of the payout
        "  - press: accept_mispay",                     # 8: good
        "",
    ]))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert [p.split(": ", 1)[0] for p in caught.value.problems] == [f"{path}:{n}" for n in (4, 5, 6, 7)]
    path.write_text("name: pay\nsteps:\n  - pay: {seat: 2, ante_down: 0, press: false, timeout: 2}\n"
                    "  - pay_as_shown: true\n  - expect: {payout: null}\n  - press: paid\n")
    assert [s.action for s in load_scenario(path).steps] == ["pay", "pay_as_shown", "expect", "press"]
