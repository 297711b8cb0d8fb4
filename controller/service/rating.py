"""Each seat session's rating from the journal: handle, actual win, exact theoretical win, and the conventional
rating beside it (``crisscross rating``).

The sessions are ``controller.journal.sessions``'; each round's theoretical win is
``controller.analysis.rating.DecisionValues.theo`` (the value of the play made, exact). Every win is the
house's, in minor units: ``actual_win`` is what the house kept (the negative of the players' net),
``theoretical_win`` its expectation given the play (an exact fraction), and ``conventional_win`` the estimate a
pit makes by hand: average bet (the two antes) x decisions per hour x hours played x the pay table's house
edge under optimal play (as a fraction of the two antes). The standard errors are of the session's totals,
from the spread of its rounds (the sample standard deviation times the square root of the rounds; none for a
session of one round).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from controller.analysis.rating import DecisionValues
from controller.journal.sessions import SeatRound, Session

#: The pit's usual assumption of decisions (rounds) an hour for the conventional rating.
DECISIONS_PER_HOUR = 60
#: The order of the wagers in a session's handle.
WAGERS = ("ante_across", "ante_down", "across", "down", "middle", "five_card_bonus")


@dataclass(frozen=True)
class SessionRating:
    """One session's figures (module docstring): its seat (the last), the player's id attached (None: none) and
    every seat it was played at. Amounts in minor units; ``theoretical_win`` exact; ``seconds`` of play; the
    standard errors None for a session of one round."""

    seat: int
    player: str | None
    seats: tuple[int, ...]
    first_round: int
    last_round: int
    open: bool
    rounds: int
    seconds: float
    handle: dict[str, int]
    actual_win: int
    theoretical_win: Fraction
    actual_standard_error: float | None
    theoretical_standard_error: float | None
    conventional_win: Fraction

    def to_json(self) -> dict[str, Any]:
        """The figures as JSON values: fractions as floats to 1e-9 and as exact ``"p/q"`` text."""
        return {"seat": self.seat, "player": self.player, "seats": list(self.seats), "first_round": self.first_round,
                "last_round": self.last_round, "open": self.open, "rounds": self.rounds,
                "seconds": round(self.seconds, 3), "handle": dict(self.handle), "actual_win": self.actual_win,
                "theoretical_win": round(float(self.theoretical_win), 9),
                "theoretical_win_exact": str(self.theoretical_win),
                "actual_standard_error": _rounded(self.actual_standard_error),
                "theoretical_standard_error": _rounded(self.theoretical_standard_error),
                "conventional_win": round(float(self.conventional_win), 9)}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 9)


def standard_error(values: list[int], scale: int = 1) -> float | None:
    """The standard error of the sum of ``values`` / ``scale``: the sample standard deviation times sqrt(n);
    None for fewer than two values. Integer sums: exact whatever the count, then one division."""
    n = len(values)
    if n < 2:
        return None
    total = sum(values)
    squares = n * sum(v * v for v in values) - total * total  # n (n - 1) times the sample variance
    return math.sqrt(squares / (n - 1)) / scale  # the sample standard deviation times sqrt(n)


def theo_of(r: SeatRound, values: DecisionValues) -> int:
    """The house's theoretical win of one seat's round in minor units times ``values.denominator`` (a whole
    number: exact; ``DecisionValues.theo``). Raises ``RatingError`` for a round that cannot be valued and
    ``ValueError`` for one whose cards are not journaled."""
    where = f"round {r.round_no} seat {r.seat}"
    if r.hole is None or r.cross is None:
        if r.locked.get("ante_across", 0):
            raise ValueError(f"{where}: the seat's cards or the cross are not in the journal")
        return values.scaled(values.theo((), (), r.locked, (), where).house)
    return values.scaled(values.theo(r.hole, r.cross, r.locked, r.decisions, where).house)


def rate(session: Session, values: DecisionValues, edge: Fraction, decisions_per_hour: int = DECISIONS_PER_HOUR,
         known: dict[tuple[int, int], int] | None = None) -> SessionRating:
    """The figures of one ``session`` with ``values`` of the table's pay tables and their house ``edge`` (a
    fraction of the two antes). ``known``: theoretical wins already computed (``theo_of``), by (round number, seat)
    (filled in: a caller that rates a session again after each round values each round once). Raises
    ``controller.analysis.rating.RatingError`` for a round that cannot be valued (naming it)."""
    known = {} if known is None else known
    handle = dict.fromkeys(WAGERS, 0)
    actual: list[int] = []
    theo: list[int] = []
    antes = 0
    for r in session.rounds:
        for wager, amount in r.placed.items():
            handle[wager] = handle.get(wager, 0) + amount
        actual.append(-r.net)
        antes += r.locked.get("ante_across", 0) + r.locked.get("ante_down", 0)
        if (r.round_no, r.seat) not in known:
            known[r.round_no, r.seat] = theo_of(r, values)
        theo.append(known[r.round_no, r.seat])
    seconds = sum(r.seconds for r in session.rounds)
    n = len(session.rounds)
    conventional = Fraction(antes, n) * decisions_per_hour * Fraction(seconds) / 3600 * edge
    return SessionRating(session.seat, session.player or None, tuple(session.seats), session.first, session.last,
                         session.open, n, seconds,
                         {w: a for w, a in handle.items() if a or w in WAGERS}, sum(actual),
                         Fraction(sum(theo), values.denominator), standard_error(actual),
                         standard_error(theo, values.denominator), conventional)


def rate_all(sessions: list[Session], values: DecisionValues, decisions_per_hour: int = DECISIONS_PER_HOUR,
             progress: Callable[[int, int], None] | None = None) -> tuple[Fraction, list[SessionRating]]:
    """The house edge of the pay tables (``DecisionValues.house_edge``) and every session's figures."""
    edge = values.house_edge(progress)
    return edge, [rate(session, values, edge, decisions_per_hour) for session in sessions]
