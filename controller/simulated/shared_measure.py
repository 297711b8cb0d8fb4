"""``crisscross protect --shared-cards``: what knowing one, two or five other seats' hole cards is worth
(``controller.analysis.shared_cards``), printed as a table beside the game's house edge.

The classes of two-card hand are shared out among ``--workers`` processes (forked); each class draws its known
cards from a generator of its own (seeded by ``--seed`` and the class), so the figures do not depend on the
number of workers.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from controller.analysis.parsheet import ParSheetEngine, hole_classes
from controller.analysis.shared_cards import Worth, sample, worth
from controller.game.paytable import Jurisdiction
from controller.analysis.workers import START_METHOD, worker_pool

NEIGHBOURS = (1, 2, 5)

_ENGINE: ParSheetEngine | None = None  # inherited by forked workers


def _class(index: int, per_class: int, seed: int) -> dict[int, list[tuple[int, np.ndarray]]]:
    assert _ENGINE is not None
    return sample(_ENGINE, NEIGHBOURS, per_class, np.random.default_rng((seed, index)), [hole_classes()[index]])


def report(rows: list[Worth], optimal: float) -> str:
    """The table: per number of neighbours, the gain per ante (and per round of two antes), the informed and
    the standard values, and the player's edge with the knowledge."""
    lines = [f"| neighbours' cards known | hands | gain per ante | informed value | standard value (the par sheet's: "
             f"{optimal:.6f}) | player's edge with it, per round's two antes |", "|---|---|---|---|---|---|"]
    for w in rows:
        lines.append(f"| {w.neighbours} ({2 * w.neighbours} cards) | {w.hands:,} | "
                     f"{w.gain:+.5f} +- {w.gain_error:.5f} | "
                     f"{w.informed:+.5f} | {w.standard:+.5f} +- {w.standard_error:.5f} | "
                     f"{(optimal + w.gain) / 2:+.3%} |")
    return "\n".join(lines)


def main(jurisdiction: Jurisdiction, optimal: float, args: argparse.Namespace) -> int:
    """Measure every number of ``NEIGHBOURS`` with ``args.per_class`` sets of known cards per class; print the
    table; exit 0. ``optimal``: the par sheet's value per ante of optimal play."""
    global _ENGINE
    _ENGINE = ParSheetEngine(jurisdiction)
    started = time.monotonic()
    classes = range(len(hole_classes()))
    workers = args.workers or os.cpu_count() or 1
    if workers == 1 or START_METHOD != "fork":  # the workers inherit the tables built here
        parts = [_class(i, args.per_class, args.seed) for i in classes]
    else:
        with worker_pool(workers) as pool:
            parts = list(pool.map(_class, classes, [args.per_class] * len(classes), [args.seed] * len(classes)))
    by_k: dict[int, list] = {k: [] for k in NEIGHBOURS}
    for part in parts:
        for k, rows in part.items():
            by_k[k] += rows
    print(report([worth(k, by_k[k]) for k in NEIGHBOURS], optimal))
    print(f"\nseed {args.seed}; {args.per_class} sets of known cards per class of hand; "
          f"{time.monotonic() - started:.0f} s with {workers} process{'es' if workers > 1 else ''}")
    return 0
