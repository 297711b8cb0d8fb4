"""A seat's sessions, read from the journal: the runs of rounds in which one seat had wagers.

A session starts with the first round in which the seat has wagers locked at "no more bets" and settled (a seat
held for a supervisor or excluded at the lock has not played the round) and ends when the
seat has had ``gap`` rounds in a row without wagers (``controller.game.sessions``: the hole-card detector's rule
too). Voided rounds and rounds of test mode (NY 9 NYCRR 5319.58) are no play: they count in no session, and are
rounds without wagers for the gap.

A session's playing time is the sum of its rounds' times, each from its ``RoundOpened`` to its ``RoundClosed``
record by the records' clock, leaving out as a pause any gap longer than ``PAUSE_S`` between two records of the
round (a fault waiting for a supervisor, a service restart).

Pure Python over ``RoundRecord`` (``controller.journal.recall``): no NumPy; the values of the play
(``controller.analysis.rating``) are added by the rating's reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from controller.game.sessions import GAP, session_ended
from controller.journal.recall import RoundRecord, rounds_from_records

#: Longest gap between two records of one round counted as play, in seconds; a longer one is a pause.
PAUSE_S = 120.0


@dataclass(frozen=True)
class SeatRound:
    """One round of a seat's session. Amounts in minor units. ``locked``: the wagers locked at "no more bets";
    ``placed``: every wager placed (the locked ones and each decision's bet: the handle); ``net``: the player's
    net over the round's settlement; ``decisions``: ``(decision, action, amount)`` in order; ``hole`` the seat's
    two cards and ``cross`` the five community cards (across, across, down, down, middle), once dealt;
    ``seconds``: the round's playing time."""

    round_no: int
    locked: dict[str, int]
    placed: dict[str, int]
    net: int
    decisions: tuple[tuple[str, str, int], ...]
    hole: tuple[str, ...] | None
    cross: tuple[str, ...] | None
    seconds: float


@dataclass
class Session:
    """One seat's session: its rounds in order, and whether it has ended (``open`` False)."""

    seat: int
    rounds: list[SeatRound] = field(default_factory=list)
    open: bool = True

    @property
    def first(self) -> int:
        """The session's first round number."""
        return self.rounds[0].round_no

    @property
    def last(self) -> int:
        """The session's last round number with wagers."""
        return self.rounds[-1].round_no


class SessionTracker:
    """Follows every seat's sessions over closed rounds given in order (``add``)."""

    def __init__(self, gap: int = GAP) -> None:
        if gap < 1:
            raise ValueError(f"gap must be at least 1 round, got {gap}")
        self.gap = gap
        self.current: dict[int, Session] = {}
        self.finished: list[Session] = []

    def add(self, rnd: RoundRecord) -> list[Session]:
        """Count one ended round; returns the sessions it ended. A voided round or a round of test mode counts
        for nothing (module docstring)."""
        if rnd.voided is not None or rnd.test or rnd.totals is None:
            return []
        ended = [s for s in self.current.values() if session_ended(s.last, rnd.round_no, self.gap)]
        for session in ended:
            session.open = False
            del self.current[session.seat]
            self.finished.append(session)
        seconds = seconds_played(rnd.times)
        for seat, settled in sorted(rnd.settlements.items()):  # a seat held or excluded is not settled: no play
            locked = rnd.wagers.get(seat, {})
            if not any(locked.values()):
                continue
            session = self.current.setdefault(seat, Session(seat))
            session.rounds.append(SeatRound(
                rnd.round_no, dict(locked), rnd.placed_wagers(seat), int(settled["net"]),
                tuple((d, action, amount) for d, s, action, amount in rnd.decisions if s == seat),
                rnd.seat_cards(seat), rnd.cross, seconds))
        return ended

    def sessions(self) -> list[Session]:
        """Every session so far: the ended ones in the order they ended, then the open ones by seat."""
        return self.finished + [self.current[seat] for seat in sorted(self.current)]


def seconds_played(times: list[str]) -> float:
    """Playing time of a round from its records' times (ISO 8601, ``RoundRecord.times``), gaps over ``PAUSE_S``
    left out."""
    stamps = [datetime.fromisoformat(t).timestamp() for t in times]
    return sum(gap for gap in (b - a for a, b in zip(stamps, stamps[1:])) if 0 <= gap <= PAUSE_S)


def ended_rounds(records: Iterable[dict[str, Any]]) -> Iterator[RoundRecord]:
    """Rebuild rounds from a stream of journal records, yielding each once it ended (its ``RoundClosed`` or
    ``RoundVoided``); a round still open at the end of the stream is not yielded."""
    pending: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        number = record.get("round")
        if not isinstance(number, int):
            continue
        pending.setdefault(number, []).append(record)
        if record.get("type") in ("RoundClosed", "RoundVoided"):
            yield rounds_from_records(pending.pop(number))[number]


def sessions_of(records: Iterable[dict[str, Any]], gap: int = GAP) -> list[Session]:
    """Every seat's sessions in a stream of journal records (``SessionTracker.sessions``)."""
    tracker = SessionTracker(gap)
    for rnd in ended_rounds(records):
        tracker.add(rnd)
    return tracker.sessions()
