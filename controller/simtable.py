"""A scripted table for ``crisscross run --simulate`` and the rig: six simulated players and a dealer.

The players and the dealer act only through the device simulators, as people act on real equipment: players put
chips on the bet-sensor spots (``SensorSimulator.place``), the dealer presses panel buttons when their lamps are
lit (``PanelSimulator``), and stacks reach the seats in the order the shoe dispensed them, the cross first, then
one stack per wagering seat clockwise from the dealer's left (NY 9 NYCRR 5324.39(d)(2)). A player looks only at
its own two cards and at community cards already turned.

Players' choices come from a seeded ``random.Random`` (or the system RNG): whether the seat plays, its ante
(table minimum x 1, 2 or 5) and five-card bonus, and at each decision a bet of 1x-3x or a fold following
``decide``. Does not model: past-posting or irregular bets (tests inject those), players leaving mid-round.
"""

from __future__ import annotations

import logging
import random
import secrets
import threading
from collections import Counter
from collections.abc import Callable, Sequence

from controller.cards import rank_index
from controller.table import Limits
from drivers.panel.simulator import PanelSimulator
from drivers.sensors.simulator import SensorSimulator
from drivers.shoe.simulator import ShoeSimulator

log = logging.getLogger(__name__)
SIX = rank_index("6c")


def decide(step: str, hole: Sequence[str], across: Sequence[str], down: Sequence[str], rng: random.Random) -> int:
    """A simple player's decision: the bet as a multiple of the ante (1-3), or 0 to fold.

    ``hole`` is the player's two cards; ``across``/``down`` the outside cards of each line already turned (empty
    before their reveal). Bets 3x holding a pair of 6s or better in either line so far, 2x with any pair, 1x
    with a jack or better in hand, and otherwise folds with a probability that grows at each decision.
    """
    best = 0
    for line in (across, down):
        counts = Counter(rank_index(c) for c in (*hole, *line))
        pairs = [r for r, n in counts.items() if n >= 2]
        if pairs:
            best = max(best, 3 if max(pairs) >= SIX else 2)
    if best:
        return best
    if max(rank_index(c) for c in hole) >= rank_index("Jc"):
        return 1
    fold_chance = {"across": 0.25, "down": 0.35, "middle": 0.5}[step]
    return 0 if rng.random() < fold_chance else 1


class SimulatedTable:
    """Players at ``seats`` and a dealer, driving the simulators until ``stop()`` or ``rounds`` rounds.

    Runs one thread (``start``/``stop``). The dealer waits for each lamp until it lights or the table is
    stopped (the controller may be in its fault state). An unexpected
    exception in the table's thread is logged and ``on_failure`` is called (the service stops).
    """

    def __init__(self, shoe: ShoeSimulator, sensors: SensorSimulator, panel: PanelSimulator, *,
                 seats: Sequence[int], ante_limits: Limits, bonus_limits: Limits, seed: int | None = None,
                 rounds: int | None = None,
                 on_failure: Callable[[], None] | None = None) -> None:
        self.shoe, self.sensors, self.panel = shoe, sensors, panel
        self.seats = tuple(sorted(seats))
        self.ante_limits, self.bonus_limits = ante_limits, bonus_limits
        self.rng: random.Random = random.Random(seed + 1) if seed is not None else secrets.SystemRandom()
        self.rounds = rounds
        self.on_failure = on_failure
        self.rounds_played = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

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
        dealt_before = len(self.shoe.dispensed)
        if not self._press_when_lit("no_more_bets"):
            return False
        if not self._wait("confirm"):
            return False
        stacks = [cards for _, cards in self.shoe.dispensed[dealt_before:]]
        cross, hands = stacks[0], dict(zip(sorted(antes), stacks[1:]))
        active = set(antes)
        turned = {"across": (), "down": ()}
        for step in ("across", "down", "middle"):
            if step != "across" and not self._wait("confirm"):
                return False
            for seat in sorted(active):
                multiple = decide(step, hands[seat], turned["across"], turned["down"], self.rng)
                if multiple:
                    self.sensors.place(seat, step, antes[seat] * multiple)
                else:
                    active.discard(seat)
            self.panel.press("confirm")
            if not self._press_when_lit("reveal"):
                return False
            if step == "across":
                turned["across"] = cross[0:2]
            elif step == "down":
                turned["down"] = cross[2:4]
        return self._wait("open_betting")
