"""The contract suites' ``--device`` option (tests/contract/conftest.py): a port that does not exist stops the
run once, before any test, with one line naming it and exit status 4 (pytest's usage error)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_device_port_that_does_not_exist_stops_the_run_once_with_one_line(tmp_path):
    missing = tmp_path / "usb-shoe"
    proc = subprocess.run([sys.executable, "-m", "pytest", "tests/contract", "--device", f"shoe={missing}",
                           "-p", "no:cacheprovider", "-q", "--collect-only"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("ERROR")]
    assert errors == [f"ERROR: --device shoe={missing}: no such port (is the device plugged in? ls /dev/serial/by-id/)"]
