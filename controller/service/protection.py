"""Live game protection in the service: the hole-card detector run after each round closes (``run --protect``).

The controller thread hands each closed round (``RoundRecord``) to ``LiveProtection.round_closed``, which
never blocks: a bounded queue (``controller.service.round_worker``; when full the round is left out and that is
logged: a round left out for load says nothing about its cards, so the test stays exact). A worker thread of
its own loads the detector (``controller.analysis.protect``, NumPy: the ``analysis`` extra), reads the round, and for
each round read puts exactly one input on the controller's event queue: the oldest ``Alert``
(``controller.round.alerts``) raised and not yet handed over, else ``DetectorChecked`` (so that the public record does
not show when an alert came: ``controller.round.alerts.DetectorChecked``). An alert is an input of the round
machine, journaled and replayed like any other, shown on the panel only while the supervisor key is turned
and acknowledged there by a supervisor (``controller.round.alerts``). An alert names a seat, a kind of card and
figures, never a card, and comes after the round closed, when every card of it is face up or in the
discard rack. It is not a public record (``controller.control.server.public_record``): supervisors read it in the
journal (``crisscross recall``, ``crisscross protect``), on the panel with the key, at ``GET /alerts`` and in
the service's log.
"""

from __future__ import annotations

import collections
import logging
import queue
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from controller.analysis.protect_names import EvidenceKeeping
from controller.game.paytable import Jurisdiction
from controller.journal.recall import ROUND_TYPES, RoundRecord
from controller.service.round_worker import RoundWorker
from controller.round.alerts import MAX_WAITING, Alert, DetectorChecked

log = logging.getLogger(__name__)

#: Alerts raised and not yet handed to the round machine, at most (as many as may wait on the panel).
MAX_PENDING = MAX_WAITING
#: The record types the detector reads from the journal's history at its start: the rounds' and the dealer's
#: rating actions.
REPLAYED = ROUND_TYPES | {"SeatRating"}
#: Rounds of the journal's history read at the start, at most (about 3 ms of CPU each): the table deals once
#: they are read (``RoundWorker.ready``), so a restart waits seconds, not the minutes of a week's play;
#: ``crisscross protect`` reads the whole journal.
REPLAY_ROUNDS = 2000

__all__ = ["Alert", "LiveProtection"]  # ``Alert`` lives in controller.round.alerts, with the round core


class LiveProtection(RoundWorker):
    """The detector on a worker thread of its own (module docstring; ``RoundWorker``). ``post`` puts an ``Alert``
    or a ``DetectorChecked`` on the controller's event queue (it may raise ``queue.Full``: the input is then
    logged and not journaled)."""

    what = "hole-card detector"

    def __init__(self, jurisdiction: Jurisdiction, post: Callable[[Any], None], *, gap: int = 3,
                 capacity: int = 64, history: Callable[..., Iterable[dict[str, Any]]] | None = None,
                 now: Callable[[], float] = time.time, keeping: EvidenceKeeping = EvidenceKeeping()) -> None:
        super().__init__("hole-card-detector", capacity)
        self.jurisdiction, self.post, self.gap, self.keeping = jurisdiction, post, gap, keeping
        #: the journal's records since a time (ISO 8601 UTC) among its last ``REPLAY_ROUNDS`` rounds: read at
        #: setup, so that the evidence of the rated players of the last ``keeping.memory_s`` survives a restart
        #: (``controller.journal.reader.records_since``)
        self.history, self.now = history, now
        #: the last round read from the history: a round handed over again after it was read there is not
        #: counted twice
        self.replayed = 0
        #: alerts raised and not yet handed over (one input per round read: ``_post_one``); the oldest set aside
        #: when full, logged (worker thread only)
        self.pending: collections.deque[Alert] = collections.deque(maxlen=MAX_PENDING)

    def setup(self) -> None:
        """Load the detector and its tables (NumPy), on the worker thread; read the journal's rounds of the last
        ``keeping.memory_s`` (at most ``REPLAY_ROUNDS`` of them) into it (no alert raised for what it read: those
        were raised when it was played)."""
        from controller.analysis.protect import Detector
        from controller.analysis.protect_tables import ProtectTables
        from controller.service.protect_journal import replay

        self.detector = Detector(ProtectTables.load(self.jurisdiction, workers=1), self.gap, keep=256,
                                 break_rounds=self.keeping.break_rounds, memory_s=self.keeping.memory_s)
        if self.history is not None:
            since = datetime.fromtimestamp(self.now() - self.keeping.memory_s,
                                           timezone.utc).isoformat(timespec="milliseconds")
            started = time.monotonic()
            self.replayed = replay(self.detector, self.history(since, last_rounds=REPLAY_ROUNDS))
            log.info("hole-card detector: the journal since %s read (through round %d) in %.1f s", since,
                     self.replayed, time.monotonic() - started)

    def read(self, record: RoundRecord | dict[str, Any]) -> None:
        """Add the round's seats to the evidence (or apply a ``SeatRating``); queue an alert for each player's
        evidence newly flagged; hand the controller one input for the round (``_post_one``)."""
        from controller.service.protect_journal import read_into

        if not isinstance(record, RoundRecord):
            read_into(self.detector, record)
            return
        if record.round_no <= self.replayed:
            self._post_one(record.round_no)
            return
        for report in read_into(self.detector, record):
            alert = Alert(record.round_no, report.seat, report.card, round(100 * report.log10_evidence),
                          report.first, report.rounds, round(100 * report.share), report.loss, report.player)
            log.warning("hole-card alert: seat %d plays as if it saw the %s card (evidence 10^%.2f over %d "
                        "rounds)", alert.seat, alert.card, alert.evidence_log10_hundredths / 100, alert.rounds)
            if len(self.pending) == self.pending.maxlen:
                log.error("hole-card alerts waiting for rounds: seat %d's (round %d) set aside, not journaled",
                          self.pending[0].seat, self.pending[0].round_no)
            self.pending.append(alert)
        self._post_one(record.round_no)

    def failed(self, record: RoundRecord | dict[str, Any]) -> None:
        """One input for a round that could not be read all the same (``_post_one``)."""
        if isinstance(record, RoundRecord):
            self._post_one(record.round_no)

    def _post_one(self, round_no: int) -> None:
        """Exactly one input per round read: the oldest alert waiting, else ``DetectorChecked`` (why:
        ``controller.round.alerts.DetectorChecked``)."""
        item: Alert | DetectorChecked = self.pending.popleft() if self.pending else DetectorChecked(round_no)
        try:
            self.post(item)
        except queue.Full:
            log.error("event queue full: the hole-card detector's %s of round %d not journaled", type(item).__name__,
                      round_no)
