"""How the floor's long-running tools stop: ``floor watch`` and ``floor audit`` (docs/floor.md), ``floor store`` and
``floor serve`` (docs/backoffice.md).

SIGTERM (what a service manager sends: ``systemctl stop``, ``docker stop``) and SIGINT (Ctrl-C) set an event
that the tool's loop watches; the tool then ends as at the end of its ``--for``: it finishes what it holds, says
what it has (the watch its last summary, the store its counts) and exits with its usual status, never killed
half-way with status 143 or a traceback.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def stopping(duration: float | None = None) -> Iterator[threading.Event]:
    """An event set by SIGTERM or SIGINT, or after ``duration`` seconds (None: never by time), for the block;
    the signals' previous handlers are given back after it. Call it from the main thread (Python runs signal
    handlers there only; elsewhere ``signal.signal`` raises ``ValueError``)."""
    stop = threading.Event()
    previous = {number: signal.signal(number, lambda *_: stop.set()) for number in (signal.SIGTERM, signal.SIGINT)}
    timer = threading.Timer(duration, stop.set) if duration is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        yield stop
    finally:
        if timer is not None:
            timer.cancel()
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def interruptible() -> Iterator[None]:
    """Python's own handling of SIGINT (``KeyboardInterrupt``: ``crisscross: interrupted``, 130) and SIGTERM (the
    process ends) for the block, whatever ``stopping`` set: for work after a tool's listening whose end must not
    pass for a finished one (``floor audit``'s check: never "nothing wrong" for a check not done). The handlers
    before it are given back after it. Call it from the main thread."""
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler),
                signal.SIGTERM: signal.signal(signal.SIGTERM, signal.SIG_DFL)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
