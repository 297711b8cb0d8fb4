"""A worker thread fed the closed rounds: the base of the service's hole-card detector
(``controller.service.protection``) and its rating (``controller.service.rating_live``).

The controller thread hands each closed round (``RoundRecord``) to ``round_closed``, which never blocks: a
bounded queue (``capacity`` rounds); when it is full the round is left out, counted in ``left_out`` and logged.
The worker thread builds what it needs (``setup``: NumPy and the tables, off the controller thread) and reads
the rounds in order (``read``); ``stop`` lets it finish the rounds already queued. ``ready`` is set once the
setup is over: the service waits for it before it deals (``Service.run``), so that the setup's long holds of the
interpreter (loading compiled code, building tables) never delay a press. A worker that cannot be set
up logs why once and takes the rounds off the queue until stopped, unread: the table plays on without it. One
round it cannot read is logged and left out; the next ones are read.
"""

from __future__ import annotations

import abc
import logging
import queue
import threading
from typing import Any

from controller.journal.recall import RoundRecord

log = logging.getLogger(__name__)


class RoundWorker(abc.ABC):
    """Closed rounds read on a worker thread named ``name`` (module docstring); subclasses define ``setup`` and
    ``read``, and say what they are in ``what`` (for the log)."""

    what = "worker"

    def __init__(self, name: str, capacity: int = 64) -> None:
        self.rounds: queue.Queue[RoundRecord | dict[str, Any] | None] = queue.Queue(capacity)
        self.left_out = 0
        #: set once ``setup`` returned or failed: the worker's heavy start (imports, compiled code, tables) is over
        self.ready = threading.Event()
        self._thread = threading.Thread(target=self._work, name=name)

    def start(self) -> None:
        """Start the worker thread."""
        self._thread.start()

    def stop(self) -> None:
        """Let the worker finish the rounds already queued, then end it."""
        while True:
            try:
                self.rounds.put(None, timeout=0.1)
                break
            except queue.Full:
                if not self._thread.is_alive():
                    return
        self._thread.join(30)

    def round_closed(self, record: RoundRecord) -> None:
        """Queue a closed round (controller thread; never waits)."""
        try:
            self.rounds.put_nowait(record)
        except queue.Full:
            self.left_out += 1
            log.warning("%s busy: round %d left out (%d so far)", self.what, record.round_no, self.left_out)

    def seat_rated(self, data: dict[str, Any]) -> None:
        """Queue a journaled ``SeatRating``'s data (controller thread, in journal order with the rounds; never
        waits): ``read`` gets it between the rounds. When the queue is full it is left out, logged (the journal
        keeps it: the offline commands read it)."""
        try:
            self.rounds.put_nowait(data)  # type: ignore[arg-type]  # a rating action in the rounds' order
        except queue.Full:
            log.error("%s busy: the %s of seat %s left out", self.what, data.get("action"), data.get("seat"))

    def setup(self) -> None:
        """Build what ``read`` needs, on the worker thread (raises when it cannot: the worker then reads nothing)."""

    @abc.abstractmethod
    def read(self, record: RoundRecord | dict[str, Any]) -> None:
        """Read one closed round, or a ``SeatRating``'s data (``seat_rated``), on the worker thread."""

    def failed(self, record: RoundRecord | dict[str, Any]) -> None:
        """After ``read`` raised for ``record`` (logged already): what the worker still owes for it (nothing)."""

    def _work(self) -> None:
        try:
            self.setup()
        except Exception:  # noqa: BLE001 - the table plays on without it; said once, loudly
            log.exception("%s not started", self.what)
            self.ready.set()
            while self.rounds.get() is not None:  # rounds are taken off the queue until stop, never read
                continue
            return
        self.ready.set()
        while (record := self.rounds.get()) is not None:
            try:
                self.read(record)
            except Exception:  # noqa: BLE001 - one unreadable round must not end the worker
                log.exception("%s: %s left out", self.what, f"round {record.round_no}" if isinstance(
                    record, RoundRecord) else f"the {record.get('action')} of seat {record.get('seat')}")
                self.failed(record)
