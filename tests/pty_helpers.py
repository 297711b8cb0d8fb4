"""Helpers for tests that talk to drivers and simulators over real pseudo-terminals.

``WAIT`` is a generous upper bound for one answer over a pty (answers take milliseconds); nothing is asserted
about how long they take.
"""

from __future__ import annotations

import contextlib
import io
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

WAIT = 3.0


def until(condition, what: str, timeout: float = 15.0) -> None:
    """Poll ``condition`` until it is true; ``pytest.fail`` naming ``what`` when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout} s: {what}")
        time.sleep(0.01)


def expect(events: queue.Queue, kind: type, timeout: float = WAIT):
    """The next event, which must be of type ``kind``. A ``ShoeBootCount`` (the shoe's power-on counter, posted
    after each handshake that brings a new one) is passed over unless it is the ``kind`` asked for."""
    from drivers.events import ShoeBootCount

    deadline = time.monotonic() + timeout
    while True:
        try:
            event = events.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            pytest.fail(f"no {kind.__name__} within {timeout} s")
        if isinstance(event, ShoeBootCount) and kind is not ShoeBootCount:
            continue
        assert isinstance(event, kind), f"expected {kind.__name__}, got {event!r}"
        return event


def expect_quiet(events: queue.Queue, seconds: float) -> None:
    """No event arrives for ``seconds``, a ``ShoeBootCount`` left from the last handshake aside (see ``expect``)."""
    from drivers.events import ShoeBootCount

    deadline = time.monotonic() + seconds
    while True:
        try:
            event = events.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return
        if not isinstance(event, ShoeBootCount):
            pytest.fail(f"unexpected event {event!r}")


@contextlib.contextmanager
def betting_service(tmp_path: Path, **ports: str) -> Iterator:
    """A ``Service`` whose devices are simulated except those given in ``ports`` (name -> port), with no
    scripted table, run by a controller thread; the dealer has opened betting. Stopped and closed after."""
    from controller.service.assembly import Service
    from controller.cli.parts import SERVICE_PARTS
    from controller.game.table import load_table_config

    ports = {"shoe": "simulator", "sensors": "simulator", "panel": "simulator", **ports}
    service = Service(load_table_config(), ports=ports, journal_path=tmp_path / "journal.jsonl", out=io.StringIO(),
                      quiet=True, parts=SERVICE_PARTS)
    runner = threading.Thread(target=service.run, name="controller")
    try:
        runner.start()
        panel = service.sims["panel"]
        assert panel.wait_for_lamp("open_betting", 15)
        panel.press("open_betting")
        deadline = time.monotonic() + 10
        while service.machine.state != "betting" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert service.machine.state == "betting"
        yield service
    finally:
        service.stop()
        runner.join(15)
        service.close()
