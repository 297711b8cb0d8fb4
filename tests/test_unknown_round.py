"""The simulated supervisor of a round the table finds in progress (controller/simulated/unknown_round.py), against
a panel whose lamps follow the key only once the supervisor looks at the panel again: the order in which a real
panel shows them (the key's frame to the controller, its lamps back), made the same whatever the timing."""

from __future__ import annotations

import threading
from collections.abc import Callable

from controller.simulated import unknown_round
from controller.simulated.unknown_round import UnknownRound


class OrderedPanel:
    """A panel at the payout of a seat with a mispay: ``paid`` lit for the dealer; once the key is on and the
    supervisor waits for the panel, ``accept_mispay`` lights too; pressing it ends the round (``open_betting``)."""

    def __init__(self) -> None:
        self.lamps = frozenset({"paid"})
        self.display = "Seat 6 mispay: AD short 2500"
        self.messages = [self.display]
        self.key: str | None = None
        self.pressed: list[str] = []

    def turn_key(self, on: bool, key_id: str) -> None:
        self.key = key_id if on else None
        if not on:
            self.lamps = self.lamps - {"accept_mispay"}

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        if self.key is not None and "accept_mispay" not in self.lamps and "open_betting" not in self.lamps:
            self.lamps = self.lamps | {"accept_mispay"}  # the controller's answer to the key
        return predicate()

    def press(self, button: str) -> None:
        self.pressed.append(button)
        if button == "accept_mispay":
            self.lamps = frozenset({"open_betting"})
            self.display = "Round 2 settled"
            self.messages.append(self.display)


class Supervisor(UnknownRound):
    """The parts of ``SimulatedTable`` the mixin uses."""

    def __init__(self, panel: OrderedPanel) -> None:
        self.panel = panel
        self.supervisor_id = "SIM-SUPERVISOR"
        self.supervisor_actions: dict[str, int] = {}
        self._stop = threading.Event()

    @staticmethod
    def _act(action: Callable[..., None], *args: object) -> None:
        action(*args)


def test_the_supervisor_reads_the_lamps_the_key_lights_before_pressing(monkeypatch):
    """With the key just turned, the panel still shows the dealer's ``paid``: pressed, it has the seat read again
    and the same mispay shown, visit after visit (a table held at its payout for good). The supervisor presses
    ``accept_mispay``, which the key lights, and nothing else."""
    monkeypatch.setattr(unknown_round, "UNKNOWN_ROUND_QUIET_S", 0.0)  # the supervisor comes at once
    panel = OrderedPanel()
    supervisor = Supervisor(panel)
    supervisor._void_unknown_round()
    assert panel.pressed == ["accept_mispay"]
    assert panel.key is None  # and left
    assert supervisor.supervisor_actions == {"accept_mispay": 1}
