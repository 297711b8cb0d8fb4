"""Simulators opened by a pySerial URL (``sim://shoe?seed=7``; drivers/urls/protocol_sim.py), and a production
``crisscross run`` that imports no simulator and no numpy (design.md "Layers of a link").
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import serial

from drivers import DRIVERS
from drivers.events import DeviceFault, DeviceReady, ShuffleComplete, StackDispensed
from drivers.timing import LinkTiming
from drivers.urls import protocol_sim
from tests.pty_helpers import expect

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[1]
FAST = LinkTiming(handshake_timeout=0.5, response_timeout=0.1, response_timeout_max=0.4, retries=4,
                  heartbeat_interval=1.0, link_silence=3.0, reconnect_min=0.05, reconnect_max=0.2)


@pytest.fixture
def sims():
    yield protocol_sim
    protocol_sim.stop_all()


def test_a_driver_opens_a_simulator_by_url_and_finds_it_again_with_its_state(sims):
    events: queue.Queue = queue.Queue()
    driver = DRIVERS["shoe"]("sim://shoe?seed=7", events, timing=FAST)
    driver.start()
    try:
        ready = expect(events, DeviceReady)
        assert (ready.device, ready.device_id) == ("shoe", "SIM-SHOE-1")
        sim = sims.simulator("sim://shoe?seed=7")
        driver.shuffle()
        expect(events, ShuffleComplete)
        driver.dispense(5, 2)
        first = expect(events, StackDispensed)
        assert sim.dispensed == [(5, first.cards)]
        sim.inject("replug")  # a new pty: the URL leads to it
        assert expect(events, DeviceFault).code == "link_lost"
        expect(events, DeviceReady, timeout=5)
        driver.dispense(5, 2)  # the same transaction: the same simulator answers from its record
        assert expect(events, StackDispensed) == first
        assert sim.dealt == 1
    finally:
        driver.stop()


def test_the_same_url_is_the_same_simulator_and_parameters_order_does_not_matter(sims):
    assert sims.simulator("sim://shoe?seed=3&id=S-9") is sims.simulator("sim://shoe?id=S-9&seed=3")
    assert sims.simulator("sim://shoe?seed=3&id=S-9").device_id == "S-9"
    assert sims.simulator("sim://panel") is not sims.simulator("sim://panel?id=P-2")


@pytest.mark.parametrize(("url", "message"), [
    ("sim://dice", "no simulator of kind 'dice'"),
    ("sim://panel?seed=3", "unknown parameter(s) 'seed' for panel"),
    ("sim://shoe?seed=x", "seed 'x' is not an integer"),
    ("sim://shoe?seed=1&seed=2", "given twice"),
    ("sim://shoe?id=S%1b%5b2J%1b%5b31mFORGED%0d", "mFORGED%0D' has control characters"),  # ESC, CR: named as spelled
    # IDENT's device id is printable ASCII (docs/protocol.md, "Common messages"): a byte that is not UTF-8, and a
    # letter beyond ASCII, are refused by name, not replaced by U+FFFD and sent to be refused by the host
    ("sim://shoe?id=%ff", "parameter id '%FF' is not ASCII"),
    ("sim://sensors?id=S%C3%A9", "parameter id 'S%C3%A9' is not ASCII"),
    ("sim://panel?id=" + "P" * 256, "is 256 characters: a device id is 1 to 255 printable ASCII characters"),
])
def test_a_bad_url_is_refused_naming_the_problem(sims, url, message):
    with pytest.raises(serial.SerialException, match=message.replace("(", r"\(").replace(")", r"\)")):
        serial.serial_for_url(url, do_not_open=True)


def test_run_refuses_a_sim_url_whose_id_is_not_printable_ascii_before_any_device_starts(tmp_path):
    """``crisscross run --port 'shoe=sim://shoe?id=%ff'``: the id is refused as the port is read, naming the port,
    the parameter and the characters a device id may have (docs/protocol.md: printable ASCII), exit 2, nothing
    started and no journal made. It started the devices and ended in the shoe's failed handshake ("device NAKed
    HELLO"), which named no id."""
    journal = tmp_path / "j.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "controller", "run", "--rounds", "1", "--journal", str(journal),
                           "--port", "shoe=sim://shoe?id=%ff", "--port", "sensors=sim://sensors",
                           "--port", "panel=sim://panel"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=40)
    assert proc.returncode == 2, proc
    assert proc.stderr == ("crisscross: --port shoe=sim://shoe?id=%ff: parameter id '%FF' is not ASCII: a device id "
                           "is 1 to 255 printable ASCII characters (space to ~), as IDENT carries it (a host refuses "
                           "any other)\n"), proc.stderr
    assert not journal.exists()


@pytest.mark.timeout(240)  # above its own deadlines (start 120 s, stop 60 s, the dump 30 s): a hang is reported whole
def test_a_production_run_imports_no_simulator_and_no_numpy(tmp_path):
    """``crisscross run`` with every device on a hardware port (here: ports that do not exist, so the drivers
    search for them), stopped by SIGTERM once the controller thread has taken each device's link fault (the
    service runs, its drivers searched); ``-X importtime`` lists every module the process imported. (It slept
    a fixed 3 s and failed on a busy machine: it now waits for the service's own log lines, with a deadline.)"""
    import threading

    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}  # SIGABRT dumps every thread's stack
    ports = [arg for name in ("shoe", "sensors", "panel") for arg in ("--port", f"{name}={tmp_path / name}")]
    process = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "controller", "-v", "run", "--quiet",
                                "--journal", str(tmp_path / "journal.jsonl"), *ports],
                               cwd=tmp_path, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    lines: queue.Queue[str] = queue.Queue()  # every line of stderr, then "" at its end
    reader = threading.Thread(target=lambda: [*map(lines.put, process.stderr), lines.put("")], daemon=True)
    reader.start()
    err, faulted, deadline = [], set(), time.monotonic() + 120
    try:
        while faulted != {"shoe", "sensors", "panel"}:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            assert line, "the run ended before its drivers searched:\n" + "".join(err[-20:])
            err.append(line)
            found = re.search(r"controller\.service\.loop: fault in round None: (\w+) link_lost", line)
            if found:
                faulted.add(found.group(1))
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # the stacks of its threads, then it ends
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
            reader.join(timeout=30)
            tail = [lines.get() for _ in range(lines.qsize())]
            said = [line for line in err + tail if not line.startswith("import time:")]
            pytest.fail("the run did not stop within 60 s of SIGTERM; its last lines and its threads' stacks:\n"
                        + "".join(said[-120:]))
    reader.join(timeout=30)
    while not lines.empty():
        err.append(lines.get())
    err = "".join(err)
    imported = {line.rsplit("|", 1)[1].strip() for line in err.splitlines() if line.startswith("import time:")}
    assert "controller.service.loop" in imported and "drivers.link" in imported  # the run got as far as the service
    assert "numpy" not in imported
    assert not [m for m in imported if m.endswith(".simulator") or m in ("drivers.sim", "controller.simulated.table",
                                                                          "drivers.urls.protocol_sim")]
