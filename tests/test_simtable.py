"""The scripted table of ``--simulate`` (controller/simtable.py): the dealer's waits on the panel lamps."""

from __future__ import annotations

import pytest

from controller.analysis.strategy import OptimalStrategy
from controller.paytable import load_jurisdiction
from controller.simtable import SimulatedTable
from controller.table import Limits

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
