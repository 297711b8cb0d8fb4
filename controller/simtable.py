"""A scripted table for ``crisscross run --simulate`` and the rig: six simulated players and a dealer.

The players and the dealer act only through the device simulators, as people act on real equipment: players put
chips on the bet-sensor spots (``SensorSimulator.place``), the dealer presses panel buttons when their lamps are
lit (``PanelSimulator``), and stacks reach the seats in the order the shoe dispensed them, the cross first, then
one stack per wagering seat clockwise from the dealer's left (NY 9 NYCRR 5324.39(d)(2)). A player looks only at
its own two cards and at community cards already turned.

Players decide with the optimal strategy of the par sheet (``controller.analysis.strategy``); with probability
``mistakes`` a decision is instead drawn at random among fold and the allowed bets, so that a run reaches every
path. A seeded ``random.Random`` (or the system RNG) also chooses whether a seat plays, its ante (table minimum
x 1, 2 or 5) and its five-card bonus. Does not model: past-posting or irregular bets (tests inject those),
players leaving mid-round.
"""

from __future__ import annotations

import logging
import random
import secrets
import threading
from collections.abc import Callable, Sequence

from controller.analysis.strategy import OptimalStrategy
from controller.paytable import Jurisdiction
from controller.table import Limits, TableConfig
from drivers.panel.simulator import PanelSimulator
from drivers.sensors.simulator import SensorSimulator
from drivers.shoe.simulator import ShoeSimulator

log = logging.getLogger(__name__)


class SimulatedTable:
    """Players at ``seats`` and a dealer, driving the simulators until ``stop()`` or ``rounds`` rounds.

    Runs one thread (``start``/``stop``). The dealer waits for each lamp until it lights or the table is
    stopped (the controller may be in its fault state). An unexpected
    exception in the table's thread is logged and ``on_failure`` is called (the service stops).
    """

    def __init__(self, shoe: ShoeSimulator, sensors: SensorSimulator, panel: PanelSimulator, *,
                 seats: Sequence[int], ante_limits: Limits, bonus_limits: Limits, strategy: OptimalStrategy,
                 mistakes: float = 0.0, seed: int | None = None, rounds: int | None = None,
                 on_failure: Callable[[], None] | None = None) -> None:
        self.shoe, self.sensors, self.panel = shoe, sensors, panel
        self.seats = tuple(sorted(seats))
        self.ante_limits, self.bonus_limits = ante_limits, bonus_limits
        self.rng: random.Random = random.Random(seed + 1) if seed is not None else secrets.SystemRandom()
        self.rounds = rounds
        self.strategy = strategy
        self.mistakes = mistakes
        self.on_failure = on_failure
        self.rounds_played = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def for_table(cls, sims: dict, config: TableConfig, jurisdiction: Jurisdiction, *, seed: int | None,
                  rounds: int | None, mistakes: float, on_failure: Callable[[], None] | None = None) -> "SimulatedTable":
        """Players at ``config``'s seats and limits, playing ``jurisdiction``'s optimal strategy, on the
        ``shoe``/``sensors``/``panel`` simulators of ``sims``."""
        return cls(sims["shoe"], sims["sensors"], sims["panel"], seats=config.seats, ante_limits=config.ante_limits,
                   bonus_limits=config.bonus_limits, strategy=OptimalStrategy(jurisdiction), mistakes=mistakes,
                   seed=seed, rounds=rounds, on_failure=on_failure)

    def start(self) -> None:
        """Start the table's thread."""
        self._thread = threading.Thread(target=self._run, name="simulated-table")
        self._thread.start()

    def stop(self) -> None:
        """Stop after the current wait and join the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _wait(self, button: str) -> bool:
        while not self._stop.is_set():
            if self.panel.wait_for_lamp(button, 0.5):
                return True
        return False

    def _press_when_lit(self, button: str) -> bool:
        if not self._wait(button):
            return False
        self.panel.press(button)
        return True

    def _decide(self, step: str, hole: Sequence[str], cross: Sequence[str], bets: list[int]) -> int:
        """The player's decision: the bet as a multiple of the ante, or 0 to fold. Only turned cards are used:
        the across outside cards (cross[0:2]) from the down decision on, the down ones (cross[2:4]) at the middle."""
        if self.mistakes and self.rng.random() < self.mistakes:
            return self.rng.choice((0, *self.strategy.multiples))
        if step == "across":
            return self.strategy.across(hole)
        if step == "down":
            return self.strategy.down(hole, cross[0:2], bets[0])
        return self.strategy.middle(hole, cross[0:2], cross[2:4], bets[0], bets[1])

    def _run(self) -> None:
        try:
            while not self._stop.is_set() and (self.rounds is None or self.rounds_played < self.rounds):
                if not self._play_round():
                    return
                self.rounds_played += 1
        except OSError as exc:  # a simulator was unplugged or stopped under us
            log.warning("simulated table stopped after %d rounds: %s", self.rounds_played, exc)
        except Exception:
            log.exception("simulated table failed in round %d", self.rounds_played + 1)
            if self.on_failure is not None:
                self.on_failure()

    def _play_round(self) -> bool:
        if not self._press_when_lit("open_betting"):
            return False
        self.sensors.clear()
        antes: dict[int, int] = {}
        for seat in self.seats:
            if self.rng.random() < 0.1:
                continue  # this seat sits the round out
            ante = self.ante_limits.min * self.rng.choice((1, 2, 5))
            ante = min(ante, self.ante_limits.max)
            antes[seat] = ante
            self.sensors.place(seat, "ante_across", ante)
            self.sensors.place(seat, "ante_down", ante)
            if self.rng.random() < 0.5:
                self.sensors.place(seat, "five_card_bonus", self.bonus_limits.min * self.rng.choice((1, 5)))
        if not antes:  # nobody played: one player sits down anyway
            seat = self.seats[0]
            antes[seat] = self.ante_limits.min
            self.sensors.place(seat, "ante_across", antes[seat])
            self.sensors.place(seat, "ante_down", antes[seat])
        dealt_before = self.shoe.dealt
        if not self._press_when_lit("no_more_bets"):
            return False
        if not self._wait("confirm"):
            return False
        stacks = [cards for _, cards in self.shoe.dispensed_since(dealt_before)]
        cross, hands = stacks[0], dict(zip(sorted(antes), stacks[1:]))
        active = set(antes)
        bets: dict[int, list[int]] = {seat: [] for seat in antes}
        for step in ("across", "down", "middle"):
            if step != "across" and not self._wait("confirm"):
                return False
            for seat in sorted(active):
                multiple = self._decide(step, hands[seat], cross, bets[seat])
                if multiple:
                    bets[seat].append(multiple)
                    self.sensors.place(seat, step, antes[seat] * multiple)
                else:
                    active.discard(seat)
            self.panel.press("confirm")
            if not self._press_when_lit("reveal"):
                return False
        return self._wait("open_betting")
