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
    """One round of a seat's session, played at ``seat``. Amounts in minor units. ``locked``: the wagers locked at "no
    more bets"; ``placed``: every wager placed (the locked ones and each decision's bet: the handle); ``net``: the
    player's net over the round's settlement; ``decisions``: ``(decision, action, amount)`` in order; ``hole`` the
    seat's two cards and ``cross`` the five community cards (across, across, down, down, middle), once dealt;
    ``seconds``: the round's playing time."""

    round_no: int
    seat: int
    locked: dict[str, int]
    placed: dict[str, int]
    net: int
    decisions: tuple[tuple[str, str, int], ...]
    hole: tuple[str, ...] | None
    cross: tuple[str, ...] | None
    seconds: float


@dataclass
class Session:
    """One seat's session: its rounds in order, whether it has ended (``open`` False), the player's id attached
    to it (``""``: none) and the seats it was played at, in order (``seat`` the last)."""

    seat: int
    rounds: list[SeatRound] = field(default_factory=list)
    open: bool = True
    player: str = ""
    seats: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.seats:
            self.seats = [self.seat]

    @property
    def first(self) -> int:
        """The session's first round number."""
        return self.rounds[0].round_no

    @property
    def last(self) -> int:
        """The session's last round number with wagers."""
        return self.rounds[-1].round_no


class SessionTracker:
    """Follows every seat's sessions over closed rounds (``add``) and rating actions (``rate``), given in
    journal order (``take`` either)."""

    def __init__(self, gap: int = GAP) -> None:
        if gap < 1:
            raise ValueError(f"gap must be at least 1 round, got {gap}")
        self.gap = gap
        self.current: dict[int, Session] = {}
        self.finished: list[Session] = []
        #: a player's id given for a seat with no session open: the next session there is theirs
        self.waiting: dict[int, str] = {}

    def take(self, item: RoundRecord | dict[str, Any]) -> list[Session]:
        """``add`` a round, or ``rate`` with a ``SeatRating`` record's data; returns the sessions that ended."""
        if isinstance(item, RoundRecord):
            return self.add(item)
        return self.rate(item["action"], item["seat"], item.get("player", ""))

    def rate(self, action: str, seat: int, player: str = "") -> list[Session]:
        """Apply a rating action (``controller.round.inputs.RATING_ACTIONS``) to ``seat``; returns the sessions it
        ended. ``rate_seat``: ``player`` is attached to the seat's open session, or to the next one there; a
        session of ``player`` open at another seat moves to this one (the player changed seats), taking in the
        rounds of an unrated session open here (the same person, rated late); a session of another player open
        here ends. ``unrate_seat`` takes the id off; ``end_session`` ends the seat's session now (the player
        left). Raises ``ValueError`` for another action."""
        here = self.current.get(seat)
        if action == "end_session":
            self.waiting.pop(seat, None)
            return [self._end(here)] if here is not None else []
        if action == "unrate_seat":
            self.waiting.pop(seat, None)
            if here is not None:
                here.player = ""
            return []
        if action != "rate_seat":
            raise ValueError(f"unknown rating action {action!r}")
        if not player:
            raise ValueError(f"rate_seat of seat {seat} names no player")
        self.waiting = {s: p for s, p in self.waiting.items() if p != player}
        ended = []
        moving = next((s for s in self.current.values() if s.player == player and s.seat != seat), None)
        if here is not None and here.player not in ("", player):
            ended.append(self._end(here))  # another player's session: theirs ends, this one's goes on or waits
            here = None
        if moving is not None:
            del self.current[moving.seat]
            if here is not None:  # played here before the card was given: the same person
                moving.rounds = sorted(moving.rounds + here.rounds, key=lambda r: r.round_no)
            moving.seat = seat
            moving.seats.append(seat)
            self.current[seat] = moving
            self.waiting.pop(seat, None)
        elif here is not None:
            here.player = player
            self.waiting.pop(seat, None)
        else:
            self.waiting[seat] = player
        return ended

    def _end(self, session: Session) -> Session:
        session.open = False
        del self.current[session.seat]
        self.finished.append(session)
        return session

    def add(self, rnd: RoundRecord) -> list[Session]:
        """Count one ended round; returns the sessions it ended. A voided round or a round of test mode counts
        for nothing (module docstring)."""
        if rnd.voided is not None or rnd.test or rnd.totals is None:
            return []
        ended = [self._end(s) for s in list(self.current.values()) if session_ended(s.last, rnd.round_no, self.gap)]
        seconds = seconds_played(rnd.times)
        for seat, settled in sorted(rnd.settlements.items()):  # a seat held or excluded is not settled: no play
            locked = rnd.wagers.get(seat, {})
            if not any(locked.values()):
                continue
            session = self.current.get(seat)
            if session is None:
                session = self.current[seat] = Session(seat, player=self.waiting.pop(seat, ""))
            session.rounds.append(SeatRound(
                rnd.round_no, seat, dict(locked), rnd.placed_wagers(seat), int(settled["net"]),
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


def ended_rounds(records: Iterable[dict[str, Any]], also: tuple[str, ...] = ()) -> Iterator[Any]:
    """Rebuild rounds from a stream of journal records, yielding each once it ended (its ``RoundClosed`` or
    ``RoundVoided``); a round still open at the end of the stream is not yielded. The data of each record of a
    type in ``also`` is yielded too, where it stands in the stream."""
    pending: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        if record.get("type") in also:
            yield record.get("data", {})
            continue
        number = record.get("round")
        if not isinstance(number, int):
            continue
        pending.setdefault(number, []).append(record)
        if record.get("type") in ("RoundClosed", "RoundVoided"):
            yield rounds_from_records(pending.pop(number))[number]


def sessions_of(records: Iterable[dict[str, Any]], gap: int = GAP) -> list[Session]:
    """Every seat's sessions in a stream of journal records (``SessionTracker.sessions``)."""
    tracker = SessionTracker(gap)
    for item in ended_rounds(records, also=("SeatRating",)):
        tracker.take(item)
    return tracker.sessions()
