"""Live game protection in the service: the hole-card detector run after each round closes (``run --protect``).

The controller thread hands each closed round (``RoundRecord``) to ``LiveProtection.round_closed``, which
never blocks: a bounded queue (``capacity`` rounds; when full the round is left out and that is logged: a
round left out for load says nothing about its cards, so the test stays exact). A worker thread of its own
loads the detector (``controller.analysis.protect``, NumPy: the ``analysis`` extra), reads the round, and for
each seat session newly flagged puts an ``Alert`` (``controller.alerts``) on the controller's event queue: an
input of the round machine, journaled and replayed like any other, shown on the panel only while the supervisor
key is turned and acknowledged there by a supervisor (``controller.alerts``). An alert names a seat, a kind of
card and figures, never a card, and comes after the round closed, when every card of it is face up or in the
discard rack. It is not a public record (``controller.control.public_record``): supervisors read it in the
journal (``crisscross recall``, ``crisscross protect``), on the panel with the key, at ``GET /alerts`` and in
the service's log.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from controller.alerts import Alert
from controller.paytable import Jurisdiction
from controller.recall import RoundRecord

log = logging.getLogger(__name__)

__all__ = ["Alert", "LiveProtection"]  # ``Alert`` lives in controller.alerts, with the round core


class LiveProtection:
    """The detector on a worker thread of its own (module docstring). ``post`` puts an ``Alert`` on the
    controller's event queue (it may raise ``queue.Full``: the alert is then logged and not journaled)."""

    def __init__(self, jurisdiction: Jurisdiction, post: Callable[[Any], None], *, gap: int = 3,
                 capacity: int = 64) -> None:
        self.jurisdiction, self.post, self.gap = jurisdiction, post, gap
        self.rounds: queue.Queue[RoundRecord | None] = queue.Queue(capacity)
        self.left_out = 0
        self._thread = threading.Thread(target=self._work, name="hole-card-detector")

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
            log.warning("hole-card detector busy: round %d left out (%d so far)", record.round_no, self.left_out)

    def _work(self) -> None:
        try:
            from controller.analysis.protect import Detector, rounds_seen
            from controller.analysis.protect_tables import ProtectTables

            detector = Detector(ProtectTables.load(self.jurisdiction, workers=1), self.gap)
        except Exception:  # noqa: BLE001 - the table plays on without it; said once, loudly
            log.exception("hole-card detector not started")
            while self.rounds.get() is not None:  # rounds are taken off the queue until stop, never read
                continue
            return
        while (record := self.rounds.get()) is not None:
            try:
                flagged = detector.add(rounds_seen(record, detector.tables.multiples))
            except Exception:  # noqa: BLE001 - one unreadable round must not end the detector
                log.exception("hole-card detector: round %d left out", record.round_no)
                continue
            for report in flagged:
                alert = Alert(record.round_no, report.seat, report.card, round(100 * report.log10_evidence),
                              report.first, report.rounds, round(100 * report.share), report.loss)
                log.warning("hole-card alert: seat %d plays as if it saw the %s card (evidence 10^%.1f over %d "
                            "rounds)", alert.seat, alert.card, report.log10_evidence, alert.rounds)
                try:
                    self.post(alert)
                except queue.Full:
                    log.error("event queue full: hole-card alert for seat %d not journaled", alert.seat)
