"""``crisscross floor watch`` (controller/floor/pit.py, controller/floor/tools.py; docs/floor.md, "Watch"): how it
stops, what it counts of the alerts' acknowledgements, and what of a table's text it shows on the terminal.

Oracles: a stop by a service manager is SIGTERM, by Ctrl-C SIGINT (POSIX signal(7)); an acknowledgement as the
round machine writes it (``controller.round.alerts``, driven through ``tests.round_helpers.TableDriver``); the
Unicode categories of the characters a table id may hold (``table.yaml``'s rule) and of those that move a
terminal's cursor or break a line (Unicode's general categories, as ``unicodedata`` names them).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import paho.mqtt.client as paho
import pytest

from controller.floor import topics

HEADING = "table "


class Output:
    """Every line a process writes to ``stream``, read by a thread of its own as they come."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, args=(stream,), name="watch-output", daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def wait_for(self, predicate, timeout: float, what: str) -> list[str]:
        """The lines so far, once ``predicate(lines)`` holds; ``AssertionError`` naming ``what`` after ``timeout``
        seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                lines = list(self.lines)
            if predicate(lines):
                return lines
            time.sleep(0.02)
        raise AssertionError(f"not within {timeout} s: {what}; the output: {self.lines[-10:]}")


def _retained(port: int, table: str, kind: str, payload: bytes) -> None:
    """Publish ``payload`` retained on ``table``'s ``kind`` topic from a plain paho client (no code of ours),
    acknowledged by the broker."""
    client = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        client.publish(topics.topic("crisscross", table, kind), payload, qos=1, retain=True).wait_for_publish(15)
    finally:
        client.loop_stop()
        client.disconnect()


def _summaries(lines: list[str]) -> list[list[str]]:
    """The summaries in ``lines``: each from its heading to the line before the next one (blank lines left out)."""
    found: list[list[str]] = []
    for line in lines:
        if line.startswith(HEADING):
            found.append([])
        if found and line:
            found[-1].append(line)
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_watch_stopped_by_a_signal_prints_its_last_summary_and_exits_0(mosquitto, signum):
    """``floor watch`` without ``--for`` runs until stopped: a service manager's SIGTERM or a Ctrl-C's SIGINT
    ends it as the end of ``--for`` does (docs/floor.md, "Watch"), with one last summary at once (not the next
    one of ``--every``: 5 s later) and status 0, as ``floor store`` and ``floor serve`` stop; never status 143
    with nothing said."""
    _retained(mosquitto.port, "T-1", "status", b"online")
    process = subprocess.Popen([sys.executable, "-m", "controller", "floor", "watch", "--broker", "127.0.0.1",
                                "--port", str(mosquitto.port), "--every", "5"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        output = Output(process.stdout)
        before = output.wait_for(lambda lines: any(line.split()[:2] == ["T-1", "online"] for line in lines), 90,
                                 "a first summary with the retained status")
        process.send_signal(signum)
        assert process.wait(60) == 0, process.stderr.read()
        output.thread.join(30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)
    stderr = process.stderr.read()
    process.stdout.close()
    process.stderr.close()
    assert stderr == ""
    summaries = _summaries(output.lines)
    assert len(summaries) == len(_summaries(before)) + 1, output.lines  # the last one, at the signal
    assert [line.split()[:2] for line in summaries[-1][1:]] == [["T-1", "online"]]
