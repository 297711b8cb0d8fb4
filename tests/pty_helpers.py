"""Helpers for tests that talk to drivers and simulators over real pseudo-terminals.

``WAIT`` is a generous upper bound for one answer over a pty (answers take milliseconds); nothing is asserted
about how long they take.
"""

from __future__ import annotations

import queue

import pytest

WAIT = 3.0


def expect(events: queue.Queue, kind: type, timeout: float = WAIT):
    """The next event, which must be of type ``kind``."""
    try:
        event = events.get(timeout=timeout)
    except queue.Empty:
        pytest.fail(f"no {kind.__name__} within {timeout} s")
    assert isinstance(event, kind), f"expected {kind.__name__}, got {event!r}"
    return event


def expect_quiet(events: queue.Queue, seconds: float) -> None:
    """No event arrives for ``seconds``."""
    try:
        event = events.get(timeout=seconds)
    except queue.Empty:
        return
    pytest.fail(f"unexpected event {event!r}")
