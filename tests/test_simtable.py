"""The scripted table of ``--simulate`` (controller/simulated/table.py): the dealer's waits on the panel lamps."""

from __future__ import annotations

import pytest

from controller.analysis.strategy import OptimalStrategy
from controller.game.paytable import load_jurisdiction
from controller.game.table import Limits
from controller.simulated.table import SimulatedTable

pytestmark = pytest.mark.timeout(10)  # a dealer waiting for a lamp that never lights would hang the suite


class LampsOnly:
    """A panel whose lamps the test sets; presses are recorded, waits return at once."""

    def __init__(self, lamps: set[str]) -> None:
        self.lamps = frozenset(lamps)
        self.pressed: list[str] = []

    def press(self, button: str) -> None:
        self.pressed.append(button)
        self.lamps = self.lamps - {button}

    def wait_for(self, condition, timeout: float) -> bool:
        return bool(condition())


def dealer(panel: LampsOnly) -> SimulatedTable:
    return SimulatedTable(None, None, panel, seats=(1,), ante_limits=Limits(500, 5000),
                          bonus_limits=Limits(100, 1000), strategy=OptimalStrategy(load_jurisdiction("ny")), seed=1)


def test_the_dealer_opens_betting_when_its_lamp_is_lit():
    panel = LampsOnly({"open_betting"})
    assert dealer(panel)._press_when_lit("open_betting") and panel.pressed == ["open_betting"]


def test_betting_opened_by_someone_else_is_joined_not_waited_for():
    """A supervisor or dealer opened betting from the control interface while the scripted dealer waited for
    the open_betting lamp: that lamp never lights again in this round; "no more bets" lit means betting is
    open, so the dealer goes on with the round (the table used to wait for ever, the round open and empty)."""
    panel = LampsOnly({"no_more_bets"})
    assert dealer(panel)._press_when_lit("open_betting") and panel.pressed == []


class Scripted(LampsOnly):
    """A panel whose lamps go through ``after_press[n]`` (a list of lamp sets, one per wait) after the n-th
    press: what the controller shows in answer to each press, step by step."""

    def __init__(self, lamps: set[str], after_press: list[list[set[str]]]) -> None:
        super().__init__(lamps)
        self.after_press = after_press
        self.coming: list[set[str]] = []

    def press(self, button: str) -> None:
        self.pressed.append(button)
        self.coming = list(self.after_press[len(self.pressed) - 1])
        self.lamps = frozenset(self.coming.pop(0))

    def wait_for(self, condition, timeout: float) -> bool:
        if not condition() and self.coming:
            self.lamps = frozenset(self.coming.pop(0))
        return bool(condition())


def test_a_press_refused_because_a_fault_came_first_is_pressed_again_once_the_fault_is_cleared():
    """A device lost between rounds faults the table just before the dealer's press: the lamp goes out, but
    no round opened. The supervisor clears the fault, open_betting lights again, and the dealer presses it
    again; the round is not taken for one that was voided (the dealer used to count it and stop a round early,
    leaving the service waiting for a round nobody would play)."""
    panel = Scripted({"open_betting"}, [
        [{"clear_fault", "void_round"}, {"clear_fault", "void_round"}, {"open_betting"}],  # refused: a fault
        [set(), set(), {"no_more_bets"}],  # betting open once the shoe has shuffled
    ])
    assert dealer(panel)._open_betting()
    assert panel.pressed == ["open_betting", "open_betting"] and "no_more_bets" in panel.lamps
