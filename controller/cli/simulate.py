"""Monte Carlo check of the par sheet through the real round machine and settlement.

    python -m controller.cli.simulate --rounds 1000000 [--seed 1] [--workers 2] [--jurisdiction ny]

Plays rounds through ``controller.round.machine.Round`` exactly as the service does, with the devices answered in
process: a shuffled deck for the shoe, bet-sensor snapshots for the spots, dealer presses for the panel. Six
seats each stake one unit on each ante (no five-card bonus) and decide with ``OptimalStrategy``. Each seat's
net comes from the machine's own ``SeatSettled`` records. Prints the mean net per ante with its standard error
and the par sheet's exact value, and how many standard errors apart they are.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from dataclasses import dataclass
from typing import Any

from controller.analysis.strategy import OptimalStrategy
from controller.settings.argtypes import positive_int, processors, workers
from controller.game.cards import DECK
from controller.game.payout import PayoutConfig
from controller.game.paytable import Jurisdiction, load_jurisdiction
from controller.game.table import Limits, load_table_config
from controller.round import commands as cmd
from controller.round.machine import Round
from controller.settings.files import ConfigError
from controller.analysis.workers import worker_pool
from drivers import events as ev

ANTE = 100  # minor units per ante; nets are reported per ante


@dataclass
class Tally:
    """Sums over simulated rounds: hands played, the net per ante summed over all hands (``total``), and, per
    round, the square of the round's summed net (``squares``). The seats of a round share the cross, so the
    round, not the hand, is the independent draw the standard error is computed from."""

    rounds: int = 0
    hands: int = 0
    total: float = 0.0
    squares: float = 0.0

    def add_round(self, nets: list[float]) -> None:
        """Count one round whose seats' nets per ante are ``nets``."""
        round_total = sum(nets)
        self.rounds += 1
        self.hands += len(nets)
        self.total += round_total
        self.squares += round_total * round_total

    def add(self, other: "Tally") -> None:
        """Add another tally's counts."""
        self.rounds += other.rounds
        self.hands += other.hands
        self.total += other.total
        self.squares += other.squares

    @property
    def mean(self) -> float:
        """Mean net per ante per hand."""
        return self.total / self.hands

    @property
    def standard_error(self) -> float:
        """Standard error of ``mean``, from the variance of the rounds' totals (hands per round constant)."""
        round_mean = self.total / self.rounds
        variance = (self.squares - self.rounds * round_mean ** 2) / (self.rounds - 1)
        return math.sqrt(variance / self.rounds) / (self.hands / self.rounds)


class InProcessTable:
    """Answers the round machine's device commands in process and plays six optimal players."""

    def __init__(self, jurisdiction: Jurisdiction, strategy: OptimalStrategy, seed: int) -> None:
        config = load_table_config()
        limits = Limits(ANTE, ANTE)
        # the return of the game, not the dealer's payouts: no payout check (controller.game.payout)
        self.config = type(config)(**{**config.__dict__, "ante_limits": limits, "payout": PayoutConfig()})
        self.machine = Round(self.config, jurisdiction)
        self.strategy = strategy
        self.rng = random.Random(seed)
        self.spots: dict[tuple[int, str], int] = {}
        self.deck: list[str] = []
        self.last_dispense: tuple[int, tuple[str, ...]] = (0, ())
        for device in ("shoe", "sensors", "panel"):
            self._feed(ev.DeviceReady(device, "in-process", "-", 1))

    def _feed(self, event: Any) -> list[Any]:
        """Apply an event and answer every device request it produces; return all outputs."""
        outputs = self.machine.handle(event)
        everything = list(outputs)
        for output in outputs:
            if isinstance(output, cmd.Shuffle):
                self.deck = self.rng.sample(DECK, 52)
                everything += self._feed(ev.ShuffleComplete(52))
            elif isinstance(output, cmd.Dispense):
                stack = tuple(self.deck[:output.count])
                del self.deck[:output.count]
                self.last_dispense = (output.txn_id, stack)
                everything += self._feed(ev.StackDispensed(output.txn_id, stack))
            elif isinstance(output, cmd.QueryLast):
                everything += self._feed(ev.ShoeLastDispense(*self.last_dispense))
            elif isinstance(output, cmd.ReadSpots):
                spots = tuple((s, p, a) for (s, p), a in sorted(self.spots.items()) if a)
                everything += self._feed(ev.SpotsSnapshot(output.request_id, spots))
        return everything

    def _place(self, seat: int, spot: str, amount: int) -> None:
        """Chips on a spot, reported by the sensors as they are put down (``SpotChanged``)."""
        self.spots[(seat, spot)] = amount
        self._feed(ev.SpotChanged(seat, spot, amount))

    def play_round(self, tally: Tally) -> None:
        """One round with six seats; adds each seat's net per ante to ``tally``."""
        self.spots = {}
        self._feed(ev.ButtonPressed("open_betting"))
        for seat in self.config.seats:
            self._place(seat, "ante_across", ANTE)
            self._place(seat, "ante_down", ANTE)
        outputs = self._feed(ev.ButtonPressed("no_more_bets"))
        dealt = {o.seat: o.cards for o in outputs if isinstance(o, cmd.StackDealt)}
        cross = dealt[None]
        bets: dict[int, list[int]] = {seat: [] for seat in self.config.seats}
        active = set(self.config.seats)
        settled = []
        for step in ("across", "down", "middle"):
            for seat in sorted(active):
                hole = dealt[seat]
                if step == "across":
                    multiple = self.strategy.across(hole)
                elif step == "down":
                    multiple = self.strategy.down(hole, cross[0:2], bets[seat][0])
                else:
                    multiple = self.strategy.middle(hole, cross[0:2], cross[2:4], *bets[seat])
                if multiple:
                    bets[seat].append(multiple)
                    self._place(seat, step, multiple * ANTE)
                else:
                    active.discard(seat)
            outputs = self._feed(ev.ButtonPressed("confirm"))
            if not active:  # every seat folded (no bonus here): the round settled at the fold
                settled += [o for o in outputs if isinstance(o, cmd.SeatSettled)]
                break
            settled += [o for o in self._feed(ev.ButtonPressed("reveal")) if isinstance(o, cmd.SeatSettled)]
        if len(settled) != len(self.config.seats):
            raise RuntimeError(f"round {self.machine.last_round_no}: {len(settled)} seats settled, state "
                               f"{self.machine.state}")
        tally.add_round([record.settlement["net"] / ANTE for record in settled])


def simulate(jurisdiction_name: str, rounds: int, seed: int) -> Tally:
    """Play ``rounds`` rounds in this process; the tally of every seat's net per ante."""
    jurisdiction = load_jurisdiction(jurisdiction_name)
    table = InProcessTable(jurisdiction, OptimalStrategy(jurisdiction), seed)
    tally = Tally()
    for _ in range(rounds):
        table.play_round(tally)
    return tally


def simulate_parallel(jurisdiction_name: str, rounds: int, seed: int, workers: int) -> Tally:
    """``simulate`` split over ``workers`` processes with seeds ``seed``, ``seed + 1``, ..."""
    shares = [rounds // workers + (1 if i < rounds % workers else 0) for i in range(workers)]
    tally = Tally()
    with worker_pool(workers) as pool:
        for part in pool.map(simulate, [jurisdiction_name] * workers, shares, [seed + i for i in range(workers)]):
            tally.add(part)
    return tally


def main(argv: list[str] | None = None) -> int:
    """Command line: simulate, compare with the exact value, print both; exit 1 beyond three standard errors."""
    parser = argparse.ArgumentParser(prog="python -m controller.cli.simulate", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=lambda t: max(2, positive_int(t)), default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=workers, default=processors())
    parser.add_argument("--jurisdiction", default="ny")
    parser.add_argument("--exact", type=float, default=None,
                        help="the exact expected value per ante (default: computed with the par sheet)")
    args = parser.parse_args(argv)
    try:
        jurisdiction = load_jurisdiction(args.jurisdiction)
    except ConfigError as exc:
        parser.error(str(exc))
    tally = simulate_parallel(args.jurisdiction, args.rounds, args.seed, args.workers)
    exact = args.exact
    if exact is None:
        from controller.analysis.parsheet_totals import compute_par_sheet

        exact = float(compute_par_sheet(jurisdiction, workers=args.workers).expected_value)
    distance = (tally.mean - exact) / tally.standard_error
    print(f"rounds {tally.rounds}, hands {tally.hands}: mean net per ante {tally.mean:+.6f} "
          f"(standard error {tally.standard_error:.6f}); exact {exact:+.6f}; {distance:+.2f} standard errors")
    return 0 if abs(distance) <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
