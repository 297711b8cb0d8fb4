"""Rate-limited logging: a hostile or broken device cannot fill the log (issue: 22,355 WARNING lines from one
device that sent bad frames).

One ``LogLimiter`` per owner (a device's owner thread, a decoder, the event queue): not shared between
threads, so it needs no lock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

#: Lines written per key and interval before the rest are only counted.
BURST = 5
#: The interval, in seconds: when it ends, one line says how many were left out.
INTERVAL = 10.0


class LogLimiter:
    """Writes at most ``burst`` lines per key (e.g. ``("sensors", "rejected")``) per ``interval`` seconds to
    ``logger``; further lines of that key are counted, and the first line of the next interval is preceded by
    one saying how many were left out. ``suppressed`` counts every line left out. Keys are the call sites'
    fixed labels (a device name and a kind of line), so the table of keys stays small.
    """

    def __init__(self, logger: logging.Logger, *, burst: int = BURST, interval: float = INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.burst = burst
        self.interval = interval
        self.clock = clock
        self.suppressed = 0
        self._keys: dict[object, list] = {}  # key -> [interval start, lines written, lines left out]

    def log(self, level: int, key: object, msg: str, *args: object) -> bool:
        """Log ``msg % args`` at ``level`` unless ``key`` used up its lines in this interval; True if written."""
        now = self.clock()
        state = self._keys.get(key)
        if state is None or now - state[0] >= self.interval:
            if state is not None and state[2]:
                self.logger.log(level, "%s: %d more such lines left out in the last %.0f s", key, state[2],
                                self.interval)
            state = self._keys[key] = [now, 0, 0]
        if state[1] < self.burst:
            state[1] += 1
            self.logger.log(level, msg, *args)
            return True
        state[2] += 1
        self.suppressed += 1
        return False
