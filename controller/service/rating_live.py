"""Live player rating in the service (``run --rating``): every seat session's figures computed off the
controller thread, kept for ``GET /sessions`` and journaled as ``SessionRated`` inputs.

The controller thread hands each closed round (``RoundRecord``) to ``LiveRating.round_closed``, which never
blocks: a bounded queue (``controller.service.round_worker``; when full the round is left out, logged, and the
sessions' figures say so in ``left_out``). A worker thread of its own follows the sessions
(``controller.journal.sessions.SessionTracker``) and values each round's play (``controller.analysis.rating``,
NumPy: the ``analysis`` extra). For each session it hands the controller one ``SessionRated`` input
(``controller.round.inputs``) when the session ends and every ``every`` rounds while it goes on: journaled like
any input, public (figures only, never a card) and published on the floor's ``sessions`` topic. The figures of
the open sessions and of the last ``MAX_KEPT`` ended ones are kept as one tuple, replaced whole by the worker
and handed whole to ``on_sessions`` (the control interface's ``GET /sessions``).
"""

from __future__ import annotations

import logging
import math
import queue
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from controller.game.paytable import Jurisdiction
from controller.game.sessions import GAP
from controller.journal.recall import RoundRecord
from controller.round.inputs import SessionRated
from controller.service.round_worker import RoundWorker

log = logging.getLogger(__name__)

#: Ended sessions whose figures ``GET /sessions`` still shows, at most.
MAX_KEPT = 60
#: Rounds of an open session between two ``SessionRated`` inputs.
EVERY = 10


class LiveRating(RoundWorker):
    """The rating on a worker thread of its own (module docstring; ``RoundWorker``). ``post`` puts a
    ``SessionRated`` on the controller's event queue (it may raise ``queue.Full``: the input is then logged and
    not journaled); ``on_sessions`` gets the figures after each round read. Raises ``ValueError`` for ``every``
    below 1."""

    what = "rating"

    def __init__(self, jurisdiction: Jurisdiction, post: Callable[[Any], None], *, gap: int = GAP,
                 every: int = EVERY, capacity: int = 64,
                 on_sessions: Callable[[tuple[dict[str, Any], ...]], None] | None = None) -> None:
        if every < 1:
            raise ValueError(f"every must be at least 1 round, got {every}")
        super().__init__("rating", capacity)
        self.jurisdiction, self.post, self.gap, self.every = jurisdiction, post, gap, every
        self.on_sessions = on_sessions
        #: the figures of the open sessions, then the last ended ones (``SessionRating.to_json()``), replaced whole
        self.sessions: tuple[dict[str, Any], ...] = ()
        self._ended: deque[dict[str, Any]] = deque(maxlen=MAX_KEPT)  # worker thread only
        #: the open sessions' theoretical wins by (round, seat) (``rate``; worker thread only)
        self._known: dict[tuple[int, int], int] = {}

    def setup(self) -> None:
        """The values of every class of two-card hand and the house edge (NumPy), on the worker thread."""
        from controller.analysis.rating import DecisionValues
        from controller.journal.sessions import SessionTracker

        self.values = DecisionValues(self.jurisdiction)
        self.edge = self.values.house_edge()
        self.tracker = SessionTracker(self.gap)
        if self.on_sessions is not None:
            self.on_sessions(())  # ready: no session yet

    def read(self, record: RoundRecord | dict[str, Any]) -> None:  # type: ignore[override]
        """Count a round in its seats' sessions, or apply a rating action (``SessionTracker.take``); hand in a
        ``SessionRated`` for each session that ended and, after a round, for each open one at a multiple of
        ``every`` rounds; publish the figures."""
        from controller.service.rating import rate

        ended = self.tracker.take(record)
        due = [(s, True) for s in ended]
        if isinstance(record, RoundRecord):
            due += [(s, False) for s in self.tracker.current.values()
                    if s.last == record.round_no and len(s.rounds) % self.every == 0]
        for session, is_ended in due:
            rating = rate(session, self.values, self.edge, known=self._known)
            self._post(_input(rating, is_ended))
            if is_ended:
                for r in session.rounds:
                    self._known.pop((r.round_no, r.seat), None)
                self._ended.appendleft({**rating.to_json(), "left_out": self.left_out})
        shown = []
        for session in self.tracker.current.values():
            shown.append({**rate(session, self.values, self.edge, known=self._known).to_json(),
                          "left_out": self.left_out})
            time.sleep(0)  # a seat at a time: the controller thread gets the interpreter between them
        self.sessions = (*shown, *self._ended)
        if self.on_sessions is not None:
            self.on_sessions(self.sessions)

    def _post(self, item: SessionRated) -> None:
        try:
            self.post(item)
        except queue.Full:
            log.error("event queue full: the rating of seat %d (rounds %d-%d) not journaled", item.seat,
                      item.first_round, item.last_round)


def _input(rating: Any, ended: bool) -> SessionRated:
    """The ``SessionRated`` of a ``controller.service.rating.SessionRating``."""
    def whole(value: float | None) -> int:
        return -1 if value is None else int(math.floor(value + 0.5))

    return SessionRated(rating.seat, rating.player or "", rating.first_round, rating.last_round, rating.rounds,
                        int(rating.seconds * 1000), dict(rating.handle), rating.actual_win, str(rating.theoretical_win),
                        whole(float(rating.conventional_win)), whole(rating.actual_standard_error),
                        whole(rating.theoretical_standard_error), ended)
