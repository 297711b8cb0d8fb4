"""Benchmark: how long this machine's storage takes to make a commit durable, against how long before it the
previous commit ended.

    python -m bench.bench_flush [--count 30] [--repeat 2] [--gaps 0,0.1,0.25,0.5,1,10,250] [--folder DIR] [--spin]

A stream of ``--count`` 1 KiB SQLite commits (WAL, ``synchronous=FULL``: the journal's and ``bench.bench_press``'s
floor's), each made ``gap`` ms after the previous one ended, for each gap in turn, ``--repeat`` times over (so that
a change in the machine's load falls on every gap alike), in a store in ``--folder`` (default: a temporary folder
under the system's: give the journal's folder on a table PC). The pause is a sleep, or with ``--spin`` a busy loop
(the processor kept awake: what is left is the storage's own).

Printed for each gap: p50 and p99 of the commit, and its p50 against the first gap's. On a machine whose storage
answers a flush quickly only while flushes come in a dense stream (virtual disks among them), the commits of a
loop with no pause are several times faster than those of a stream with even a fraction of a millisecond between
them. No press gets the dense stream: its commit follows the device's answer and a person's reaction, not the
previous commit at once (``bench.bench_press`` measures its floor both ways).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from bench.bench_press import existing_folder, percentile
from controller.settings.argtypes import positive_int_at_most


def gaps_ms(text: str) -> list[float]:
    """An argparse type: gaps in milliseconds, comma-separated, each 0 or more (``"0,0.5,10"``)."""
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: gaps are numbers of milliseconds, comma-separated") from None
    if not values or any(not value >= 0 or value > 10_000 for value in values):
        raise argparse.ArgumentTypeError(f"{text!r}: each gap is 0 to 10,000 ms")
    if len(set(values)) < len(values):
        raise argparse.ArgumentTypeError(f"{text!r}: a gap is given twice")
    return values


def pause(seconds: float, spin: bool) -> None:
    """Wait ``seconds``: asleep, or with ``spin`` in a busy loop (the processor kept awake)."""
    if not spin:
        time.sleep(seconds)
        return
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def flush_samples(folder: Path, gaps: list[float], count: int, repeat: int = 1,
                  spin: bool = False) -> dict[float, list[float]]:
    """Milliseconds of the commits of ``repeat`` turns of streams of ``count`` commits, one stream for each of
    ``gaps`` (ms between a commit's end and the next one's start) a turn: {gap: samples}."""
    db = sqlite3.connect(folder / "flush.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS t(a INTEGER PRIMARY KEY, b BLOB)")
    row = os.urandom(1024)
    samples: dict[float, list[float]] = {gap: [] for gap in gaps}
    try:
        for _ in range(repeat):
            for gap in gaps:
                for _ in range(count):
                    pause(gap / 1000, spin)
                    began = time.perf_counter()
                    db.execute("BEGIN")
                    db.execute("INSERT INTO t(b) VALUES (?)", (row,))
                    db.execute("COMMIT")
                    samples[gap].append((time.perf_counter() - began) * 1000)
    finally:
        db.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=positive_int_at_most(10_000), default=30,
                        help="commits in each stream (default 30)")
    parser.add_argument("--repeat", type=positive_int_at_most(100), default=2, help="turns over every gap (default 2)")
    parser.add_argument("--gaps", type=gaps_ms, default=gaps_ms("0,0.1,0.25,0.5,1,10,250"),
                        help="ms between the previous commit's end and the one measured, comma-separated")
    parser.add_argument("--folder", type=existing_folder, default=None, help="where the store goes (default: a temporary one)")
    parser.add_argument("--spin", action="store_true", help="pause in a busy loop instead of a sleep")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-flush-", dir=args.folder))
    try:
        print(f"load average before: {os.getloadavg()[0]:.2f}; pauses {'busy' if args.spin else 'asleep'}")
        samples = flush_samples(folder, args.gaps, args.count, args.repeat, args.spin)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    dense = percentile(samples[args.gaps[0]], 50)
    for gap in args.gaps:
        values = samples[gap]
        print(f"commits {gap:g} ms apart: p50 {percentile(values, 50):.3f} ms, p99 "
              f"{percentile(values, 99):.3f} ms ({len(values)} samples); p50 {percentile(values, 50) / dense:.2f}x "
              f"of {args.gaps[0]:g} ms")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
