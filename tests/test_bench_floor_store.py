"""The back office's benchmark (``python -m bench.bench_floor_store``, docs/performance.md "The back office") with
tiny parameters, so that it keeps running: 3 tables for 20 s through a Mosquitto restart and a store killed
mid-run, then the report over 10,000 records. It starts its own Mosquitto and PostgreSQL: without them the test
is skipped, and fails under CI.

Oracles: the benchmark's own check of every table's journal against the store (each public record once, in
order) and of the report's sums against the copies it made; here only that it ran, found nothing wrong and
timed every period.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from controller.floor.periods import PERIODS
from hil.broker import find_mosquitto
from hil.postgres import find_bin

REPO = Path(__file__).resolve().parents[1]


def test_the_benchmark_stores_every_record_once_through_the_restarts_and_times_every_report(tmp_path):
    missing = [name for name, found in (("mosquitto", find_mosquitto()), ("PostgreSQL", find_bin())) if not found]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{' and '.join(missing)} not installed: CI needs them (.ci/run installs them)")
        pytest.skip(f"{' and '.join(missing)} not installed")
    run = subprocess.run([sys.executable, "-m", "bench.bench_floor_store", "--tables", "3", "--minutes", "0.34",
                          "--records", "10000", "--template-rounds", "10", "--days", "30", "--repeats", "1",
                          "--folder", str(tmp_path / "run")], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    out = run.stdout
    stored = re.search(r"stored: (\d+) public records of (\d+) journaled; lost 0, stored twice 0, not in a journal "
                       r"0, out of the after chain 0, different 0; repeats dropped by the store \d+; held past a gap "
                       r"0, gaps found \d+, open 0", out)
    assert stored and stored[1] == stored[2] and int(stored[1]) > 0, out
    assert re.search(r"broker restarted at \d+ s, down [\d.]+ s; store killed \(SIGKILL\) at \d+ s", out), out
    copies = re.search(r"(\d+) copies over 30 gaming days make (\d+) records", out)
    assert copies and int(copies[2]) >= 10000, out
    assert re.search(rf"the lifetime's sums are the first copy's times {copies[1]}: yes", out), out
    assert re.search(r"rows: records \d+, figures \d+, seat_rounds \d+, sessions [1-9]\d*, totals \d+", out), out
    for period in PERIODS:
        assert re.search(rf"^  {period} +\| [\d.]+ \([\d.]+\) +\| [\d.]+", out, re.M), out
