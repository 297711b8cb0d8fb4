"""The rate of actions one operator queues (docs/control.md, "Bounds"): each action queued is journaled, an
``OperatorAction`` and the machine's answer to it (a refused one three records or more), kept for ever; a
signed-in operator sending refused actions as fast as the interface answered (730 a second) grew the journal 1.3
MB a second. A person presses a few times a second at most: beyond ``BURST`` actions at once, refilled at
``PER_SECOND``, an action is answered 429 and neither queued nor journaled.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable

#: Actions an operator may queue at once (a token bucket's size).
BURST = 20
#: Actions a second an operator may queue for ever after (the bucket's refill).
PER_SECOND = 5.0
#: Operators remembered (the oldest forgotten first): names that signed in, so few.
MAX_KEYS = 4096


class ActionRate:
    """Actions queued per operator name, a token bucket each: at most ``burst`` at once, refilled at ``per_second``
    a second. At most ``keys`` names are remembered (the oldest first forgotten). ``clock`` gives seconds
    (monotonic). Owned by one thread (the control interface's event loop)."""

    def __init__(self, *, burst: int = BURST, per_second: float = PER_SECOND, keys: int = MAX_KEYS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if burst < 1 or per_second <= 0:
            raise ValueError(f"an action rate needs a burst of at least 1 and a positive rate, got {burst}, "
                             f"{per_second}")
        self.burst, self.per_second, self.keys, self.clock = burst, per_second, keys, clock
        self._buckets: collections.OrderedDict[str, tuple[float, float]] = collections.OrderedDict()

    def take(self, name: str) -> float:
        """One action of ``name``: 0.0 when it may be queued (taken from its bucket), else the seconds until it may
        (nothing taken)."""
        now = self.clock()
        tokens, then = self._buckets.pop(name, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.per_second)
        wait = 0.0
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            wait = (1.0 - tokens) / self.per_second
        self._buckets[name] = (tokens, now)
        while len(self._buckets) > self.keys:
            self._buckets.popitem(last=False)
        return wait
