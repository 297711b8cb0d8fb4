"""Players who come and go at the simulated table (``crisscross run --simulate --sessions MEAN``), so that a
simulated table produces sessions as a real one does (docs/rating.md).

Every seat starts with a player. Each player plays a session of a random length (geometric, ``mean`` rounds on
average), sitting out a round now and then; then, at the start of a round, it leaves, or (``move_share`` of
the time, when a seat is free) moves to a free seat and plays on there. A free seat gets a new player with
probability ``arrive`` at each round. Most players (``rated_share``) hand the dealer a card: the dealer rates the
seat when they sit down and moves the card with a player who changes seats; when a player leaves, the dealer
ends the seat's session, so that the next player's session starts apart. The dealer's rating
actions are what a dealer does on the control interface (``POST /sessions``), returned as
``(action, seat, player)`` for the table to hand in.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass
class SeatedPlayer:
    """A player at the table: its id (the card's number), the rounds left in its session, and whether the
    dealer rated it."""

    player: str
    rounds_left: int
    rated: bool


class Seating:
    """Who sits where, round by round (module docstring). Raises ``ValueError`` for a mean below 1 round."""

    def __init__(self, seats: Sequence[int], mean: int, rng: random.Random, *, rated_share: float = 0.8,
                 move_share: float = 0.25, arrive: float = 0.2, sit_out: float = 0.05) -> None:
        if mean < 1:
            raise ValueError(f"a session's mean length must be at least 1 round, got {mean}")
        self.seats, self.mean, self.rng = tuple(seats), mean, rng
        self.rated_share, self.move_share, self.arrive, self.sit_out = rated_share, move_share, arrive, sit_out
        self.count = 0  # players who came so far (their ids)
        self.occupant: dict[int, SeatedPlayer] = {}
        self._first = True

    def _newcomer(self) -> SeatedPlayer:
        self.count += 1
        return SeatedPlayer(f"SIM-{self.count:04d}", self._newcomer_length(), self.rng.random() < self.rated_share)

    def next_round(self) -> tuple[list[tuple[str, int, str]], list[tuple[int, int]]]:
        """Seat the players for the next round: ``(rating actions, moves)``, the actions as
        ``(action, seat, player)`` in the order the dealer takes them, the moves as ``(from seat, to seat)``."""
        actions: list[tuple[str, int, str]] = []
        moves: list[tuple[int, int]] = []
        if self._first:  # every seat starts with a player
            self._first = False
            for seat in self.seats:
                self.occupant[seat] = self._seat(seat, actions)
            return actions, moves
        for seat in self.seats:
            here = self.occupant.get(seat)
            if here is None or here.rounds_left > 0:
                continue
            free = [s for s in self.seats if s not in self.occupant]
            del self.occupant[seat]
            if free and self.rng.random() < self.move_share:  # moves and plays on: a new session length there
                to = self.rng.choice(free)
                here.rounds_left = self._newcomer_length()
                self.occupant[to] = here
                moves.append((seat, to))
                if here.rated:
                    actions.append(("rate_seat", to, here.player))
            else:  # the dealer sees the player go: the seat's session ends now, rated or not
                actions.append(("end_session", seat, ""))
        for seat in self.seats:
            if seat not in self.occupant and self.rng.random() < self.arrive:
                self.occupant[seat] = self._seat(seat, actions)
        return actions, moves

    def _newcomer_length(self) -> int:
        """A session's length in rounds: geometric, ``mean`` on average."""
        length = 1
        while self.rng.random() > 1 / self.mean:
            length += 1
        return length

    def _seat(self, seat: int, actions: list[tuple[str, int, str]]) -> SeatedPlayer:
        player = self._newcomer()
        if player.rated:
            actions.append(("rate_seat", seat, player.player))
        return player

    def playing(self) -> list[int]:
        """The seats whose player plays this round (a player sits one out now and then); each counts the round."""
        out = []
        for seat in self.seats:
            here = self.occupant.get(seat)
            if here is None:
                continue
            here.rounds_left -= 1
            if self.rng.random() >= self.sit_out:
                out.append(seat)
        return out


def move_players(players: dict[int, Any], moves: Sequence[tuple[int, int]]) -> None:
    """Apply ``Seating``'s moves ``(from seat, to seat)`` to ``players`` (seat -> the simulated player who
    decides there, for the seats that have one): a player's strategy goes with them; a seat left holds what
    was at the seat moved to (nothing: the default players)."""
    for before, after in moves:
        players[after], moved = players.pop(before, None), players.pop(after, None)
        if moved is not None:
            players[before] = moved
        if players[after] is None:
            del players[after]
