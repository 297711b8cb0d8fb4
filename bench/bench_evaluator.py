"""Benchmark: the batch evaluator of the par sheet against a well-known evaluator called hand by hand.

    python bench/bench_evaluator.py [--sample N] [--no-par-sheet]

(needs the test extras: ``pip install -e '.[test]'`` brings phevaluator).

Times, in the same run and on the same hands: ``controller.analysis.classes.classify`` over all 2,598,960
five-card hands at once (NumPy arrays), ``phevaluator.evaluate_cards`` (a C perfect-hash evaluator) called once
per hand from Python, and ``controller.game.hands.evaluate`` (the controller's scalar evaluator) called once per hand.
The hand-by-hand evaluators run on a sample (default 300,000 hands) and are scaled to the full count. Prints
the time of each and the ratios. Then times the whole exact par sheet (``compute_par_sheet``).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import time

import numpy as np
from phevaluator import evaluate_cards

from controller.analysis.classes import N_HANDS, classify
from controller.analysis.parsheet_totals import compute_par_sheet
from controller.cli.main import positive_int
from controller.game.cards import DECK
from controller.game.hands import evaluate
from controller.game.paytable import load_jurisdiction


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=positive_int, default=300_000)
    parser.add_argument("--no-par-sheet", action="store_true")
    args = parser.parse_args()
    combos = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(52), 5)),
                         dtype=np.int8, count=5 * N_HANDS).reshape(N_HANDS, 5)
    start = time.perf_counter()
    classify(combos)
    batch = time.perf_counter() - start
    sample = [tuple(DECK[c] for c in row) for row in random.Random(1).sample(list(map(tuple, combos)), args.sample)]
    start = time.perf_counter()
    for hand in sample:
        evaluate_cards(*hand)
    peer = (time.perf_counter() - start) * N_HANDS / args.sample
    start = time.perf_counter()
    for hand in sample:
        evaluate(hand)
    scalar = (time.perf_counter() - start) * N_HANDS / args.sample
    print(f"all {N_HANDS:,} hands: batch classify {batch:.2f} s; phevaluator hand by hand {peer:.2f} s "
          f"(ratio {peer / batch:.1f}x); controller.game.hands.evaluate hand by hand {scalar:.2f} s "
          f"(ratio {scalar / batch:.1f}x)")
    if not args.no_par_sheet:
        start = time.perf_counter()
        sheet = compute_par_sheet(load_jurisdiction("ny"))
        print(f"exact par sheet (ny) on {os.cpu_count()} CPUs: {time.perf_counter() - start:.1f} s; "
              f"expected value per ante {float(sheet.expected_value):+.6f}")


if __name__ == "__main__":
    main()
