"""Simulated players for measuring game protection: honest players of simplified strategies and hole-carders.

Every decision is a bet as a multiple of the ante, or 0 to fold (NY 9 NYCRR 5324.39(e)(3)-(7)). Functions work
on many deals at once (NumPy arrays of card indexes into ``controller.game.cards.DECK``: ``hole`` ``(N, 2)``, the
across and down outside cards ``(N, 2)`` each, the middle card ``(N,)``), so that the measurement of
``controller.simulated.protect_measure`` plays thousands of sessions side by side; the simulated table of
``crisscross run --simulate`` calls them one deal at a time (``SeatPlayer``).

Honest strategies (``STRATEGIES``) look only at the player's cards and the cards already turned:

- ``optimal``: the par sheet's strategy (``ProtectTables.hon_x``/``hon_y`` and the middle decision over the 46
  unseen middle cards, as ``controller.analysis.strategy.OptimalStrategy``);
- ``never_fold``: the optimal bet, but 1x where the optimal strategy folds;
- ``always_1x``: 1x at every decision;
- ``pair_3x``: 3x (the largest multiple) whenever the player's cards and the cards turned hold a pair, else
  the optimal decision;
- ``erring:P``: the optimal decision, but with probability P (0 to 1) one drawn at random among fold and the
  bets;
- ``across_fold_rule`` and ``card``: the rule-based strategies of ``controller.analysis.simplified`` (the
  published across fold rule, 1x elsewhere; the short strategy card ``CARD``).

A hole-carder (``HOLE_CARDS``: ``middle``, ``across``, ``down``) sees, in each round with probability ``p``,
the middle card, one of the two across outside cards or one of the two down outside cards (either, at
random) before the across decision, and uses it in its style (``controller.analysis.protect_models``): ``best``
plays the best decisions knowing it (the smallest best bet; fold only when folding alone is best), ``pairs``
and ``rule`` bet the most when it pairs; in the other rounds it plays as when the card tells it nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import numpy as np

from controller.analysis.protect_models import DECISIONS, STEPS, honest_of, optimal, paired, predicted, shown
from controller.analysis.protect_tables import ProtectTables, chosen, pair_index
from controller.game.cards import DECK
from controller.simulated.player_spec import HOLE_CARDS, STRATEGIES, PlayerSpec

_INDEX = {card: i for i, card in enumerate(DECK)}


def deal(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` rounds dealt from fresh shuffled decks: ``(hole (N, 2), across (N, 2), down (N, 2), middle (N,))``."""
    cards = np.argsort(rng.random((n, 52)), axis=1)[:, :7]
    return cards[:, 0:2], cards[:, 2:4], cards[:, 4:6], cards[:, 6]


def play_decisions(decide: Callable[[str, np.ndarray, np.ndarray], np.ndarray], n: int) -> np.ndarray:
    """The three decisions of ``n`` rounds, ``decide(step, x, y)`` giving each step's multiples (0: fold) from
    the across and down multiples bet so far: ``(N, 3)``, -1 for a decision not reached after a fold."""
    bets = np.full((n, 3), -1)
    x = y = np.zeros(n, dtype=np.int64)
    going = np.ones(n, dtype=bool)
    for i, step in enumerate(STEPS):
        choice = decide(step, x, y)
        bets[:, i] = np.where(going, choice, -1)
        going &= choice > 0
        x, y = (choice if i == 0 else x), (choice if i == 1 else y)
    return bets


def honest(name: str, t: ProtectTables, step: str, hole: np.ndarray, across: np.ndarray, down: np.ndarray,
           x: np.ndarray, y: np.ndarray, rng: np.random.Generator, rate: float = 0.0) -> np.ndarray:
    """The decision of the honest strategy ``name`` (see the module docstring; ``rate`` is ``erring``'s P)."""
    n = len(hole)
    if name == "always_1x":
        return np.full(n, t.multiples[0])
    best = optimal(t, step, hole, across, down, x, y)
    if name == "optimal":
        return best
    if name == "never_fold":
        return np.where(best == 0, t.multiples[0], best)
    if name == "pair_3x":
        return np.where(paired(shown(STEPS.index(step), hole, across, down)), t.multiples[-1], best)
    if name == "erring":
        random_pick = rng.choice(t.actions, size=n)
        return np.where(rng.random(n) < rate, random_pick, best)
    if name in ("across_fold_rule", "card"):
        return _simplified(name, t, STEPS.index(step), hole, across, down)
    raise ValueError(f"unknown strategy {name!r}: expected one of {', '.join(STRATEGIES)}")


def _simplified(name: str, t: ProtectTables, step: int, hole: np.ndarray, across: np.ndarray,
                down: np.ndarray) -> np.ndarray:
    """``across_fold_rule`` and ``card`` as ``controller.analysis.simplified`` states them (``CARD``)."""
    one, three = t.multiples[0], t.multiples[-1]
    ranks = hole % 13
    pair_in_hand = ranks[:, 0] == ranks[:, 1]
    weak = (hole[:, 0] // 13 != hole[:, 1] // 13) & ~pair_in_hand & (ranks.max(1) <= 3)  # unsuited, 5-high or lower
    if step == 0:
        bet = np.where(pair_in_hand, three, one) if name == "card" else np.full(len(hole), one)
        return np.where(weak, 0, bet)
    if name == "across_fold_rule" or step == 1:
        return np.where(pair_in_hand, three, one) if name == "card" else np.full(len(hole), one)
    return np.where(_strong_line(np.concatenate([hole, across], 1)) | _strong_line(np.concatenate([hole, down], 1)),
                    three, one)


def _strong_line(cards: np.ndarray) -> np.ndarray:
    """A line's four known cards ``(N, 4)`` show a pair of 6s or better (two pair, three or four of a kind
    included) or four to a flush (``controller.analysis.simplified``, ``CARD``'s middle rule)."""
    counts = np.zeros((len(cards), 13), dtype=np.int64)
    for i in range(cards.shape[1]):
        counts[np.arange(len(cards)), cards[:, i] % 13] += 1
    high_pair = (counts[:, 4:] >= 2).any(1)  # 6s (index 4) and up
    more = ((counts >= 2).sum(1) >= 2) | (counts >= 3).any(1)
    flush = (cards // 13 == cards[:, :1] // 13).all(1)
    return high_pair | more | flush


def hole_carder(kind: str, t: ProtectTables, step: str, hole: np.ndarray, across: np.ndarray, down: np.ndarray,
                middle: np.ndarray, seen: np.ndarray, x: np.ndarray, y: np.ndarray, style: str = "best") -> np.ndarray:
    """The decision of a player who saw card ``seen`` ``(N,)`` of kind ``kind`` before the across decision
    (``middle``, ``across``, ``down``) and uses it in ``style`` (``controller.analysis.protect_models``); -1 in
    ``seen`` marks a round in which it saw nothing (it then plays as when the card tells it nothing)."""
    if kind not in HOLE_CARDS:
        raise ValueError(f"unknown hole card {kind!r}: expected one of {', '.join(HOLE_CARDS)}")
    if style != "best":
        honest_play = honest_of(style, t, STEPS.index(step), hole, across, down, x, y)
        if STEPS.index(step) not in DECISIONS[style][kind]:
            return honest_play
        best = optimal(t, step, hole, across, down, x, y)
        pred = predicted(style, t, STEPS.index(step), hole, across, down, best, np.maximum(seen, 0)[:, None])[:, 0]
        return np.where(seen >= 0, pred, honest_play)
    best = optimal(t, step, hole, across, down, x, y)
    rows = np.arange(len(hole))
    cid, rest = t.locate(hole)
    card = rest[rows, np.maximum(seen, 0)]
    xi = t.multiple_index(x)
    if kind == "middle":
        if step == "across":
            mask = t.mid_x[cid, card]
        elif step == "down":
            mask = t.mid_y[cid, xi, card, pair_index(rest[rows, across[:, 0]], rest[rows, across[:, 1]])]
        else:
            mask = t.known_middle_mask(hole, across, down, middle[:, None], x, y)[:, 0]
    elif kind == "across" and step == "across":
        mask = t.acr_x[cid, card]
    elif kind == "down" and step == "across":
        mask = t.dwn_x[cid, card]
    elif kind == "down" and step == "down":
        mask = t.dwn_y[cid, xi, pair_index(rest[rows, across[:, 0]], rest[rows, across[:, 1]]), card]
    else:
        return best  # the card seen is turned now: nothing more to gain
    return np.where(seen >= 0, chosen(mask, t.actions), best)


def seen_cards(kind: str, across: np.ndarray, down: np.ndarray, middle: np.ndarray, probability: float,
               rng: np.random.Generator) -> np.ndarray:
    """The card each hole-carder of ``kind`` sees this round (-1: none), with ``probability`` per round; an
    outside card is either of its line's two, at random."""
    n = len(middle)
    pick = rng.integers(0, 2, n)
    card = {"middle": middle, "across": across[np.arange(n), pick], "down": down[np.arange(n), pick]}[kind]
    return np.where(rng.random(n) < probability, card, -1)


class SeatPlayer:
    """One seat's simulated player at the simulated table: ``decide`` for each decision of a round, with
    the cards as two-character strings. A hole-carder is given the face-down cross (``cross``) and peeks at
    its one card; an honest player reads only the cards already turned."""

    def __init__(self, spec: PlayerSpec, tables: ProtectTables, seed: int | None) -> None:
        self.spec, self.tables = spec, tables
        self.rng = np.random.default_rng(seed)
        self._round: tuple[tuple[str, ...], int] | None = None  # (cross, card seen or -1)

    def decide(self, step: str, hole: Sequence[str], cross: Sequence[str], bets: list[int]) -> int:
        """The bet at ``step`` as a multiple of the ante, or 0 to fold; ``bets`` are the earlier decisions'."""
        one = lambda cards: np.array([[_INDEX[c] for c in cards]])  # noqa: E731
        h, a, d = one(hole), one(cross[0:2]), one(cross[2:4])
        x = np.array([bets[0] if bets else 0])
        y = np.array([bets[1] if len(bets) > 1 else 0])
        if not self.spec.hole_carder:
            return int(honest(self.spec.kind, self.tables, step, h, a, d, x, y, self.rng, self.spec.probability)[0])
        m = np.array([_INDEX[cross[4]]])
        if self._round is None or self._round[0] != tuple(cross):
            seen = seen_cards(self.spec.kind, a, d, m, self.spec.probability, self.rng)
            self._round = (tuple(cross), int(seen[0]))
        seen = np.array([self._round[1]])
        return int(hole_carder(self.spec.kind, self.tables, step, h, a, d, m, seen, x, y, self.spec.style)[0])
