"""Benchmark: ``crisscross par-sheet ny`` against peers measured in the same run.

    python bench/bench_parsheet.py [--repeat 3] [--workers 1,2] [--hands 1000000]
    python bench/bench_parsheet.py --against-ideal [--repeat 5] [--ideal-source PATH]
    python bench/bench_parsheet.py --against-reference

(needs the test extras: ``pip install -e '.[test]'`` brings treys and phevaluator).

Default: each repetition times, one after the other, treys (``Evaluator.evaluate``, pure Python, the peer) on
``--hands`` random five-card hands, then the par sheet as a separate process (``python -m controller par-sheet
ny --format json --workers W``, start-up included) for each ``W``. Prints each time and the ratio par sheet /
treys of that repetition (wall clock, and CPU time: the par sheet's processes' against treys').

``--against-ideal``: the par sheet with one worker against ``parsheet_ideal.c`` (the exact expected value alone,
plainly in C on one thread with phevaluator's native evaluator: a floor, not a peer; its README in the same
folder). The C file is ``../shared/bench/parsheet_ideal.c`` beside the checkout unless ``--ideal-source`` names
it; it is built with ``cc -O2``, linked to libpython as its README says (phevaluator's extension needs it).
Each repetition runs the ideal kernel, then the par sheet, and prints each one's CPU seconds (user + sys of the
child and its children, from ``wait4``) and their ratio; the goal is a ratio of at most 2.0. Both expected
values are printed too, which must agree to the ideal's six decimals.

Peak memory is each par sheet process's own: the child is started through a small launcher that, at exit,
sends the parent its ``VmHWM`` (``/proc/self/status``) and, with workers, the largest worker's peak
(``RUSAGE_CHILDREN``; a forked worker counts the pages it shares with its parent). ``wait4``'s ``ru_maxrss``
is not used for it: on Linux it also counts the memory the child had before its ``exec``, the parent's (here
holding treys' 10^6 hands), so it is never below the parent's resident memory at the fork.

The load average is printed before and after: on a shared machine only the ratios of one run compare.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
IDEAL_SOURCE = CHECKOUT.parent / "shared" / "bench" / "parsheet_ideal.c"

# Runs ``python -m controller ARGS...`` and, at exit, writes "<own VmHWM KiB> <largest child's ru_maxrss KiB>"
# to the file descriptor given as its first argument.
LAUNCHER = """\
import atexit, os, resource, runpy, sys
fd = int(sys.argv.pop(1))
def report():
    with open("/proc/self/status") as status:
        own = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    os.write(fd, f"{own} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}".encode())
    os.close(fd)
atexit.register(report)
sys.argv[0] = "controller"
runpy.run_module("controller", run_name="__main__", alter_sys=True)
"""


def time_treys(hands: int, seed: int) -> tuple[float, float]:
    """(wall, CPU) seconds for treys to evaluate ``hands`` random five-card hands (dealt before the clock)."""
    from treys import Card, Evaluator

    deck = [Card.new(rank + suit) for rank in "23456789TJQKA" for suit in "shdc"]
    rng = random.Random(seed)
    dealt = [rng.sample(deck, 5) for _ in range(hands)]
    evaluator = Evaluator()
    start, cpu = time.perf_counter(), time.process_time()
    for cards in dealt:
        evaluator.evaluate(cards[:2], cards[2:])
    return time.perf_counter() - start, time.process_time() - cpu


def run_child(command: list[str], stdout=subprocess.DEVNULL, pass_fds: tuple[int, ...] = ()) -> tuple[float, float]:
    """Run ``command`` to its end: (wall seconds, CPU seconds: user + sys of it and the children it waited for).
    Raises ``SystemExit`` with its error output when it fails."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, pass_fds=pass_fds)
    for fd in pass_fds:
        os.close(fd)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{command[0]} failed ({process.returncode}): {process.stderr.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime


def time_par_sheet(workers: int, stdout=subprocess.DEVNULL) -> tuple[float, float, int, int]:
    """One ``par-sheet ny --format json --workers W`` run through ``LAUNCHER``: (wall seconds, CPU seconds, the
    par sheet process's own peak resident memory in KiB, its largest worker's (0 without workers))."""
    read, write = os.pipe()
    command = [sys.executable, "-c", LAUNCHER, str(write), "par-sheet", "ny", "--format", "json",
               "--workers", str(workers)]
    try:
        wall, cpu = run_child(command, stdout=stdout, pass_fds=(write,))
        with os.fdopen(read, "rb") as pipe:
            report = pipe.read().decode().split()
            read = -1
    finally:
        if read >= 0:
            os.close(read)
    if len(report) != 2:
        raise SystemExit("the par sheet's launcher reported no peak memory (is /proc mounted?)")
    own, workers_peak = map(int, report)
    return wall, cpu, own, workers_peak if workers > 1 else 0


def link_flags() -> list[str]:
    """The flags ``python3-config --ldflags --embed`` gives for this interpreter (from its ``sysconfig``)."""
    var = sysconfig.get_config_var
    libdir = var("LIBDIR")
    flags = [f"-L{libdir}", f"-Wl,-rpath,{libdir}"]
    if not var("Py_ENABLE_SHARED") and var("LIBPL"):
        flags.insert(0, f"-L{var('LIBPL')}")
    version = var("LDVERSION") or var("VERSION")
    return flags + [f"-lpython{version}"] + (var("LIBS") or "").split() + (var("SYSLIBS") or "").split()


def build_ideal(source: Path, folder: str) -> tuple[str, str]:
    """Compile ``source`` (``parsheet_ideal.c``) into ``folder``: (the executable, the phevaluator extension it
    loads). Raises ``SystemExit`` naming what is missing (the file, ``cc``, phevaluator) or the compiler's
    error output."""
    if not source.is_file():
        raise SystemExit(f"--against-ideal: {source} not found (give its path with --ideal-source)")
    compiler = shutil.which("cc")
    if compiler is None:
        raise SystemExit("--against-ideal: no C compiler `cc` on PATH (install one, e.g. apt-get install gcc)")
    try:
        import phevaluator
    except ImportError:
        raise SystemExit("--against-ideal: phevaluator is not installed (pip install -e '.[test]')") from None
    extensions = sorted(Path(phevaluator.__file__).parent.glob("*.so"))
    if not extensions:
        raise SystemExit(f"--against-ideal: no native extension (*.so) in {Path(phevaluator.__file__).parent}")
    binary = os.path.join(folder, "parsheet_ideal")
    command = [compiler, "-O2", "-o", binary, str(source), "-Wl,--no-as-needed", *link_flags()]
    built = subprocess.run(command, capture_output=True, text=True)
    if built.returncode:
        raise SystemExit(f"--against-ideal: {' '.join(command)} failed:\n{built.stderr}")
    return binary, str(extensions[0])


def ideal_value(output: str) -> str:
    """The expected value the ideal kernel printed (its line ``optimal EV per ante V (...)``)."""
    for line in output.splitlines():
        if line.startswith("optimal EV per ante"):
            return line.split()[4]
    raise SystemExit(f"the ideal kernel printed no expected value:\n{output}")


def against_ideal(repeat: int, source: Path) -> None:
    """``--against-ideal`` (module docstring): the ideal C kernel and the par sheet with one worker, alternated
    ``repeat`` times, each one's CPU seconds and the ratio."""
    import json

    with tempfile.TemporaryDirectory(prefix="bench-parsheet-") as folder:
        binary, extension = build_ideal(source, folder)
        print(f"ideal kernel: {source} built with cc -O2; evaluator {extension}")
        time_par_sheet(1)  # compiles the par sheet's loops into numba's cache once, untimed
        ratios = []
        for rep in range(1, repeat + 1):
            with open(os.path.join(folder, "ideal.out"), "w+") as out:
                ideal_wall, ideal_cpu = run_child([binary, extension], stdout=out)
                out.seek(0)
                ideal_ev = ideal_value(out.read())
            with open(os.path.join(folder, "par.json"), "w+") as out:
                wall, cpu, own, _ = time_par_sheet(1, stdout=out)
                out.seek(0)
                sheet_ev = json.load(out)["expected_value_per_ante"]
            ratios.append(cpu / ideal_cpu)
            print(f"repetition {rep}: ideal kernel {ideal_cpu:.2f} s CPU ({ideal_wall:.2f} s wall, EV {ideal_ev}); "
                  f"par-sheet ny --workers 1 {cpu:.2f} s CPU ({wall:.2f} s wall, EV {sheet_ev:.6f}, "
                  f"peak {own / 1024:.0f} MiB); ratio {cpu / ideal_cpu:.2f} CPU")
            if f"{sheet_ev:.6f}" != ideal_ev:
                raise SystemExit(f"the expected values differ: par sheet {sheet_ev!r}, ideal kernel {ideal_ev}")
    ordered = sorted(ratios)
    print(f"par sheet / ideal kernel, CPU: min {ordered[0]:.2f}, median {ordered[len(ordered) // 2]:.2f}, "
          f"max {ordered[-1]:.2f}; goal <= 2.0 {'met' if ordered[len(ordered) // 2] <= 2.0 else 'NOT met'} "
          f"(median), {sum(r <= 2.0 for r in ratios)} of {repeat} repetitions within it")


def per_class_against_reference() -> None:
    """CPU seconds of the former NumPy engine (``tests/parsheet_reference.py``) and the compiled one on the same
    six classes of two-card hand, one after the other in this process (one BLAS thread)."""
    from threadpoolctl import threadpool_limits

    from controller.analysis.parsheet import ParSheetEngine
    from controller.game.paytable import load_jurisdiction

    sys.path.insert(0, str(CHECKOUT))  # the checkout, for tests/
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


def against_treys(repeat: int, counts: list[int], hands: int) -> None:
    """The default run (module docstring): treys and the par sheet with each worker count, ``repeat`` times."""
    time_par_sheet(counts[0])  # compiles the par sheet's loops into numba's cache once, untimed
    ratios: dict[int, list[float]] = {w: [] for w in counts}
    for rep in range(1, repeat + 1):
        peer, peer_cpu = time_treys(hands, rep)
        print(f"repetition {rep}: treys {hands:,} evaluations {peer:.2f} s wall, {peer_cpu:.2f} s CPU")
        for w in counts:
            wall, cpu, own, workers_peak = time_par_sheet(w)
            ratios[w].append(wall / peer)
            peak = f"peak {own / 1024:.0f} MiB" + (f", largest worker {workers_peak / 1024:.0f} MiB" if w > 1 else "")
            print(f"  par-sheet ny --workers {w}: {wall:.2f} s wall, {cpu:.2f} s CPU, {peak}; "
                  f"ratio {wall / peer:.2f} wall, {cpu / peer_cpu:.2f} CPU")
    for w, values in ratios.items():
        print(f"--workers {w}: ratio to treys min {min(values):.2f}, median {sorted(values)[len(values) // 2]:.2f}, "
              f"max {max(values):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    parser.add_argument("--hands", type=int, default=1_000_000)
    parser.add_argument("--against-reference", action="store_true",
                        help="only: the former engine against the compiled one, class by class (CPU time)")
    parser.add_argument("--against-ideal", action="store_true",
                        help="only: the par sheet with one worker against the ideal C kernel (CPU time)")
    parser.add_argument("--ideal-source", type=Path, default=IDEAL_SOURCE,
                        help=f"the ideal kernel's C file (default {IDEAL_SOURCE})")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat: at least 1")
    if args.against_reference:
        per_class_against_reference()
        return
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    if args.against_ideal:
        against_ideal(args.repeat, args.ideal_source)
    else:
        against_treys(args.repeat, [int(w) for w in args.workers.split(",")], args.hands)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
