"""Benchmark: ``crisscross par-sheet ny`` against treys evaluating 10^6 five-card hands, in the same run.

    python bench/bench_parsheet.py [--repeat 3] [--workers 1,2] [--hands 1000000] [--against-reference]

(needs the test extras: ``pip install -e '.[test]'`` brings treys). Each repetition times, one after the other:
treys (``Evaluator.evaluate``, pure Python, the peer) on ``--hands`` random five-card hands, then the par sheet
as a separate process (``python -m controller par-sheet ny --format json --workers W``, start-up included) for
each ``W``. Prints each time, the ratio par sheet / treys of that repetition (wall clock, and CPU time: the
par sheet's processes' against treys'; on a loaded machine the CPU ratio moves less), the peak resident memory
of the par sheet's largest process (``wait4``; with W workers the workers and the parent each hold their own),
and the load average before and after: on a shared machine only the ratios of one run compare.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time

from treys import Card, Evaluator


def time_treys(hands: int, seed: int) -> tuple[float, float]:
    """(wall, CPU) seconds for treys to evaluate ``hands`` random five-card hands (dealt before the clock)."""
    deck = [Card.new(rank + suit) for rank in "23456789TJQKA" for suit in "shdc"]
    rng = random.Random(seed)
    dealt = [rng.sample(deck, 5) for _ in range(hands)]
    evaluator = Evaluator()
    start, cpu = time.perf_counter(), time.process_time()
    for cards in dealt:
        evaluator.evaluate(cards[:2], cards[2:])
    return time.perf_counter() - start, time.process_time() - cpu


def time_par_sheet(workers: int) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in KiB of its largest process) of one ``par-sheet ny`` run."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "controller", "par-sheet", "ny", "--format", "json",
                                "--workers", str(workers)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"par-sheet failed ({process.returncode}): {process.stderr.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def per_class_against_reference() -> None:
    """CPU seconds of the former NumPy engine (``tests/parsheet_reference.py``) and the compiled one on the same
    six classes of two-card hand, one after the other in this process (one BLAS thread)."""
    from threadpoolctl import threadpool_limits

    from controller.analysis.parsheet import ParSheetEngine
    from controller.game.paytable import load_jurisdiction

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout, for tests/
    from tests.parsheet_reference import ReferenceEngine

    threadpool_limits(1)
    ny = load_jurisdiction("ny")
    old, new = ReferenceEngine(ny), ParSheetEngine(ny)
    new.analyse((12, 25))  # compiled (or loaded from numba's cache) before the clock
    totals = [0.0, 0.0]
    for hole in [(12, 25), (11, 10), (5, 16), (9, 15), (3, 14), (7, 20)]:
        for i, engine in enumerate((old, new)):
            start = time.process_time()
            engine.analyse(hole)
            totals[i] += time.process_time() - start
    print(f"six classes, CPU: former engine {totals[0]:.2f} s, compiled {totals[1]:.2f} s "
          f"({totals[0] / totals[1]:.1f} times less)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    parser.add_argument("--hands", type=int, default=1_000_000)
    parser.add_argument("--against-reference", action="store_true",
                        help="only: the former engine against the compiled one, class by class (CPU time)")
    args = parser.parse_args()
    if args.against_reference:
        per_class_against_reference()
        return
    counts = [int(w) for w in args.workers.split(",")]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    time_par_sheet(counts[0])  # compiles the par sheet's loops into numba's cache once, untimed
    ratios: dict[int, list[float]] = {w: [] for w in counts}
    for rep in range(1, args.repeat + 1):
        peer, peer_cpu = time_treys(args.hands, rep)
        print(f"repetition {rep}: treys {args.hands:,} evaluations {peer:.2f} s wall, {peer_cpu:.2f} s CPU")
        for w in counts:
            wall, cpu, rss = time_par_sheet(w)
            ratios[w].append(wall / peer)
            print(f"  par-sheet ny --workers {w}: {wall:.2f} s wall, {cpu:.2f} s CPU, peak {rss / 1024:.0f} MiB "
                  f"(largest process); ratio {wall / peer:.2f} wall, {cpu / peer_cpu:.2f} CPU")
    for w, values in ratios.items():
        print(f"--workers {w}: ratio to treys min {min(values):.2f}, median {sorted(values)[len(values) // 2]:.2f}, "
              f"max {max(values):.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
