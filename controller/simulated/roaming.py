"""Hole-carders who take breaks and change seats at the simulated table (``--hole-carder
SEAT:CARD[:P]:breaks=N[:moves]``), so that the detector's evidence is tried against the evasions a surveillance
room sees (docs/analysis.md, "Game protection").

Such a player hands the dealer a card at the start (the dealer rates the seat: ``rate_seat`` with
``PlayerSpec.player``; not with ``:unrated``), plays N rounds, sits out ``BREAK_ROUNDS`` rounds (more than the
sessions' gap: the seat's session ends), and plays N more, and so on. With ``moves`` it comes back from each break at the other of two
seats: its own and a seat the table keeps free for it (no other player sits there); the dealer moves its card
(``rate_seat`` at the new seat), as a dealer does for a rated player who changes seats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from controller.simulated.player_spec import BREAK_ROUNDS, PlayerSpec


class Roamer:
    """One hole-carder's breaks and moves (module docstring). ``free``: the seat kept for its moves (None
    without ``moves``)."""

    def __init__(self, spec: PlayerSpec, free: int | None) -> None:
        self.spec, self.seat, self.free = spec, spec.seat, free
        self.played = 0
        self.away = 0  # rounds of the break still to sit out
        self._rated = False
        self._move = False

    def next_round(self) -> tuple[list[tuple[str, int, str]], bool, tuple[int, int] | None]:
        """The next round: ``(rating actions, plays, move)``: the dealer's actions ``(action, seat, player)``,
        whether it plays this round (at ``seat``), and its move ``(from seat, to seat)`` when it moved."""
        actions: list[tuple[str, int, str]] = []
        move = None
        if not self._rated and self.spec.rated:
            self._rated = True
            actions.append(("rate_seat", self.seat, self.spec.player))
        if self.away:
            self.away -= 1
            return actions, False, None
        if self._move and self.free is not None:
            self._move = False
            move = (self.seat, self.free)
            self.seat, self.free = self.free, self.seat
            if self.spec.rated:
                actions.append(("rate_seat", self.seat, self.spec.player))
        self.played += 1
        if self.played % self.spec.breaks == 0:
            self.away, self._move = BREAK_ROUNDS, self.spec.moves
        return actions, True, move


def roamers(specs: Sequence[PlayerSpec], seats: Sequence[int]) -> list[Roamer]:
    """The roamers of ``specs`` (those with breaks) at a table of ``seats``: each mover gets a seat no player
    of ``specs`` takes, the highest first. Raises ``ValueError`` when no such seat is left."""
    taken = {spec.seat for spec in specs}
    spare = [seat for seat in sorted(seats, reverse=True) if seat not in taken]
    out = []
    for spec in specs:
        if not spec.breaks:
            continue
        free = None
        if spec.moves:
            if not spare:
                raise ValueError(f"--hole-carder of seat {spec.seat} with moves: no seat left to move to (every other "
                                 "seat is named by another --player-strategy/--hole-carder or kept for another mover)")
            free = spare.pop(0)
        out.append(Roamer(spec, free))
    return out


def roam(movers: Sequence[Roamer], players: dict[int, Any],
         rate: Callable[[list[tuple[str, int, str]]], None]) -> set[int]:
    """The next round of ``movers`` at the simulated table: each one's move (its player in ``players``, seat ->
    player, goes with it) and the dealer's rating actions handed to ``rate``; returns the seats nobody plays this
    round (a break, and the seat kept free for a move)."""
    away: set[int] = set()
    for roamer in movers:
        actions, plays, move = roamer.next_round()
        if move is not None:
            before, after = move
            players[after] = players.pop(before)
        rate(actions)
        if not plays:
            away.add(roamer.seat)
        if roamer.free is not None:
            away.add(roamer.free)
    return away
