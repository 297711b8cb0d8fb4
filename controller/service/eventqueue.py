"""The controller's event queue: bounded, with device chatter coalesced so that people never wait behind a
flood (design.md "One owner thread"; docs/architecture.md "Event queue").

Reader threads (drivers, the control interface) ``put``; the controller thread ``get``s. Order is kept: an
input is never applied before one that arrived earlier, because the rules depend on it (a bet placed before
"no more bets" is a bet; after it, past-posting: NY 9 NYCRR 5324.39(c)(3)). What keeps people ahead of the
chatter is that the chatter cannot pile up:

- **Chip changes coalesce.** Within a run of ``SpotChanged`` events (the events queued since the last other
  event), at most two wait per spot: the first change of the run, which is never replaced, and the latest,
  which each newer change of that spot replaces in place. The round therefore still sees that a spot moved
  away from its amount (a locked spot that changed is past-posting, even if the chips went back), and the
  amount it ends with; a change never moves ahead of a button pressed after it, since a button ends the run.
  So at most 72 chip changes (6 seats x 6 spots x 2) wait ahead of a person's action.
- **Bounded.** At most ``capacity`` events wait. A device's event beyond that is refused with ``queue.Full``
  (the driver faults the device as ``flooding``); state changes of a link (``DeviceReady``, ``DeviceFault``),
  ``SupervisorKey``, the journal store's check (``JournalDamaged``, ``JournalWhole``) and the control items
  (``STOP``) may use ``reserve`` more, so a fault, a key turned off or a damaged store is never lost to a flood.
- **Lag.** Every event is stamped when queued; ``get`` logs (rate-limited) when the oldest waited more than
  ``lag_warning`` seconds, and keeps ``max_lag`` and ``max_length``.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from typing import Any

from controller.round.inputs import JournalDamaged, JournalWhole
from drivers.events import DeviceFault, DeviceReady, SpotChanged, SupervisorKey
from drivers.ratelog import LogLimiter

log = logging.getLogger(__name__)

#: Events that may wait at once (people's actions and device events together).
CAPACITY = 1024
#: Further room for link state changes and control items only.
RESERVE = 64
#: A wait longer than this (seconds) between queueing and applying is logged.
LAG_WARNING = 0.5


#: Events that may use the reserve: a link's state changes, the supervisor key (a key revoked must reach the
#: round even when a flood filled the queue) and the outcome of the journal store's check (controller.journal.check).
_RESERVED = (DeviceReady, DeviceFault, SupervisorKey, JournalDamaged, JournalWhole)


class _Entry:
    __slots__ = ("item", "queued", "taken")

    def __init__(self, item: Any, queued: float) -> None:
        self.item = item
        self.queued = queued
        self.taken = False


class EventQueue:
    """Bounded FIFO of events with chip changes coalesced (module docstring). Thread-safe; the methods used
    of ``queue.Queue`` keep its signatures: ``put``, ``put_nowait``, ``get``, ``get_nowait``, ``qsize``,
    ``empty``. ``put`` never blocks (a device's reader thread must keep reading): ``queue.Full`` when full.
    """

    def __init__(self, capacity: int = CAPACITY, *, reserve: int = RESERVE, lag_warning: float = LAG_WARNING) -> None:
        if capacity < 1 or reserve < 0:
            raise ValueError(f"capacity must be >= 1 and reserve >= 0, got {capacity} and {reserve}")
        self.capacity = capacity
        self.reserve = reserve
        self.lag_warning = lag_warning
        self._items: collections.deque[_Entry] = collections.deque()
        self._run: dict[tuple[int, str], list[_Entry | None]] = {}  # spot -> [first, latest] of the current run
        self._ready = threading.Condition()
        self._limiter = LogLimiter(log)
        #: Chip changes merged into a queued one, events refused because the queue was full, the longest the
        #: queue was, the longest wait of an event (seconds).
        self.coalesced = 0
        self.refused = 0
        self.max_length = 0
        self.max_lag = 0.0

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        """Queue ``item`` (``block`` and ``timeout`` are accepted for ``queue.Queue`` callers and ignored).

        Raises ``queue.Full`` when ``capacity`` events wait (``capacity + reserve`` for ``DeviceReady``,
        ``DeviceFault``, ``SupervisorKey`` and items that are not events, such as ``STOP``)."""
        now = time.monotonic()
        with self._ready:
            if isinstance(item, SpotChanged) and self._coalesce(item):
                return
            limit = self.capacity
            if isinstance(item, _RESERVED) or not hasattr(item, "__dataclass_fields__"):
                limit += self.reserve
            if len(self._items) >= limit:
                self.refused += 1
                raise queue.Full(f"{len(self._items)} events wait already; {type(item).__name__} refused")
            entry = _Entry(item, now)
            self._items.append(entry)
            if isinstance(item, SpotChanged):
                slots = self._run.get((item.seat, item.spot))
                if slots is None or slots[0].taken:
                    self._run[(item.seat, item.spot)] = [entry, None]
                else:
                    slots[1] = entry
            else:
                self._run.clear()  # a later chip change must not be merged into one queued before this event
            self.max_length = max(self.max_length, len(self._items))
            self._ready.notify()

    def _coalesce(self, item: SpotChanged) -> bool:
        slots = self._run.get((item.seat, item.spot))
        if slots is None or slots[1] is None or slots[1].taken:
            return False
        slots[1].item = item  # keeps its place in the queue: the spot's latest amount
        self.coalesced += 1
        return True

    def put_nowait(self, item: Any) -> None:
        """Same as ``put(item)``."""
        self.put(item)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """Remove and return the oldest event; wait for one if ``block`` (at most ``timeout`` seconds, then
        ``queue.Empty``); ``queue.Empty`` at once when not ``block`` and none waits."""
        with self._ready:
            if block:
                if not self._ready.wait_for(lambda: self._items, timeout):
                    raise queue.Empty
            elif not self._items:
                raise queue.Empty
            entry = self._items.popleft()
            entry.taken = True
            lag = time.monotonic() - entry.queued
            self.max_lag = max(self.max_lag, lag)
            waiting = len(self._items)
        if lag > self.lag_warning:
            self._limiter.log(logging.WARNING, "lag", "controller is %.2f s behind its inputs (%d events wait, "
                              "%d chip changes merged so far)", lag, waiting, self.coalesced)
        return entry.item

    def get_nowait(self) -> Any:
        """Same as ``get(block=False)``."""
        return self.get(block=False)

    def qsize(self) -> int:
        """Events waiting now."""
        with self._ready:
            return len(self._items)

    def empty(self) -> bool:
        """True if no event waits."""
        return self.qsize() == 0
