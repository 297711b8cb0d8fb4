"""Benchmark and figures of the exact player rating (``controller.analysis.rating``, docs/rating.md).

    python bench/bench_rating.py [--rounds 10000] [--seed 1] [--jurisdiction ny]

For each strategy whose exact expected value the par sheet computes (``optimal`` and the simplified strategies of
``controller.analysis.simplified``), ``--rounds`` rounds are dealt at random, played by the strategy's own rules
(``DecisionValues.play``) and valued twice: the theoretical win of the play made (``DecisionValues.theo``) and
the actual result by the real settlement (``controller.game.settlement.settle_seat``). Printed per strategy, per
unit of each ante and as the house's: the exact value (the par sheet, ``compute_par_sheet``), the mean
theoretical win and its distance from the exact value in standard errors (goal: within 3), the standard error of
the theoretical and of the actual mean and their ratio (goal: below 1), and the error of the conventional rating
(every player rated at the optimal strategy's house edge, the rounds counted exactly) against the exact value.

Then the CPU of one round's theoretical win, six seats, once every class of two-card hand has its table (goal:
at most 5 ms on a table PC), and the CPU of the first use of the tables (every class built in this process).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.analysis.parsheet_totals import compute_par_sheet  # noqa: E402
from controller.analysis.rating import DecisionValues  # noqa: E402
from controller.analysis.simplified import STRATEGIES  # noqa: E402
from controller.game.cards import DECK  # noqa: E402
from controller.game.paytable import load_jurisdiction  # noqa: E402
from controller.game.settlement import Community, settle_seat  # noqa: E402

LIMIT_MS = 5.0  # the goal: one round's theoretical win, six seats, at most 5 ms of CPU


def play_round(values: DecisionValues, name: str, cards: np.ndarray) -> tuple[tuple[str, ...], tuple[str, ...],
                                                                                  list[tuple[str, str, int]]]:
    """One seat's round of strategy ``name`` on seven dealt card indexes (hole, across, down, middle): its
    cards, the cross and its decisions as the journal records them (ante 1)."""
    hole, across, down = cards[0:2], cards[2:4], cards[4:6]
    decisions: list[tuple[str, str, int]] = []
    x = values.play(name, "across", hole, across, down, 0, 0)
    decisions.append(("across", "bet", x) if x else ("across", "fold", 0))
    if x:
        y = values.play(name, "down", hole, across, down, x, 0)
        decisions.append(("down", "bet", y) if y else ("down", "fold", 0))
        if y:
            z = values.play(name, "middle", hole, across, down, x, y)
            decisions.append(("middle", "bet", z) if z else ("middle", "fold", 0))
    return tuple(DECK[c] for c in hole), tuple(DECK[c] for c in cards[2:7]), decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jurisdiction", default="ny")
    args = parser.parse_args()
    jurisdiction = load_jurisdiction(args.jurisdiction)
    began = time.process_time()
    values = DecisionValues(jurisdiction)
    edge = values.house_edge()
    cold = time.process_time() - began
    sheet = compute_par_sheet(jurisdiction, workers=1)
    exact = {"optimal": sheet.expected_value, **sheet.strategies}
    rng = np.random.default_rng(args.seed)
    print(f"{args.rounds} rounds a strategy, seed {args.seed}, {jurisdiction.code}; per unit of each ante, the house's")
    print("| strategy | exact | mean theoretical | distance (SE) | SE theoretical | SE actual | ratio | conventional error |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ("optimal", *STRATEGIES):
        theo, actual = [], []
        for _ in range(args.rounds):
            hole, cross, decisions = play_round(values, name, rng.permutation(52)[:7])
            theo.append(float(values.theo(hole, cross, {"ante_across": 1, "ante_down": 1}, decisions).house))
            wagers = {"ante_across": 1, "ante_down": 1, **{d: a for d, action, a in decisions if action == "bet"}}
            actual.append(-settle_seat(1, hole, Community.from_stack(cross), wagers, jurisdiction).net)
        house = -float(exact[name])
        se_theo = statistics.stdev(theo) / math.sqrt(len(theo))
        se_actual = statistics.stdev(actual) / math.sqrt(len(actual))
        mean = statistics.fmean(theo)
        conventional = 2 * float(edge)  # the optimal edge of the two antes, per ante
        print(f"| {name} | {house:.6f} | {mean:.6f} | {(mean - house) / se_theo:+.2f} | {se_theo:.5f} | "
              f"{se_actual:.5f} | {se_theo / se_actual:.3f} | {conventional / house - 1:+.1%} |")
    # one round of six seats, every class's table built (they are, after the strategies' rounds)
    seats = [play_round(values, "optimal", rng.permutation(52)[:7]) for _ in range(6 * 500)]
    began = time.process_time()
    for hole, cross, decisions in seats:
        values.theo(hole, cross, {"ante_across": 1, "ante_down": 1}, decisions)
    per_round = (time.process_time() - began) / 500 * 1000
    print(f"CPU of one round's theoretical win, six seats, tables built: {per_round:.2f} ms "
          f"({per_round / LIMIT_MS:.2f}x the {LIMIT_MS:g} ms limit); first use of the tables (every class built, "
          f"house edge {float(edge):.6%}): {cold:.1f} s of CPU")


if __name__ == "__main__":
    main()
