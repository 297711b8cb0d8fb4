"""The optimal strategy of the par sheet, played hand by hand (the simulated players use it).

``OptimalStrategy`` answers the three decisions for real cards. The across and down decisions come from the
par sheet's backward induction (``ParSheetEngine.policy``, the decisions of ``solve``) for the hand's
suit-symmetry class; the middle
decision is computed directly from the 46 unseen middle cards. Ties are broken as in the par sheet: fold only
when strictly better, else the smallest of equally good bets.

The across and down decisions of all 169 classes are kept in ``strategies/<fingerprint>.npz`` beside this
module, where the fingerprint is a hash of what they depend on (ante and bet pay tables, wheel, bet multiples);
a strategy for pay tables without a file is computed class by class when first needed. Write a file with
``python -m controller.analysis.strategy JURISDICTION_OR_PAYTABLE_FILE``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from controller.analysis.classes import classify
from controller.analysis.parsheet import SCALE3, ParSheetEngine, hole_classes, payoffs
from controller.game.cards import DECK
from controller.game.paytable import Jurisdiction, load_jurisdiction

STRATEGY_DIR = Path(__file__).resolve().parent / "strategies"

_INDEX = {card: i for i, card in enumerate(DECK)}


def canonical(hole: Sequence[int]) -> tuple[tuple[int, int], list[int]]:
    """The representative of ``hole``'s suit-symmetry class (as in ``parsheet.hole_classes``) and the suit
    permutation (``perm[suit]`` -> representative's suit) that maps the hand onto it."""
    hi, lo = sorted(hole, key=lambda c: c % 13, reverse=True)
    perm = [-1] * 4
    perm[hi // 13] = 0
    if lo // 13 != hi // 13:
        perm[lo // 13] = 1
    free = iter(s for s in range(4) if s not in perm)
    perm = [p if p >= 0 else next(free) for p in perm]
    return (map_card(hi, perm), map_card(lo, perm)), perm


def map_card(card: int, perm: Sequence[int]) -> int:
    """A card index with its suit renamed by ``perm``."""
    return perm[card // 13] * 13 + card % 13


def pair_index(rest: Sequence[int], cards: Sequence[int]) -> int:
    """Index of the pair ``cards`` among the pairs of ``rest`` (50 sorted cards), in ``combinations`` order."""
    i, j = sorted(list(rest).index(c) for c in cards)
    return i * (2 * len(rest) - i - 1) // 2 + (j - i - 1)


def fingerprint(jurisdiction: Jurisdiction) -> str:
    """A short hash of what the across and down decisions depend on: ante and bet pays, wheel, multiples."""
    key = json.dumps([jurisdiction.ante.pays, jurisdiction.bet.pays, jurisdiction.wheel,
                      list(jurisdiction.bet_multiples)], sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


class OptimalStrategy:
    """The decisions that maximise expected value under ``jurisdiction``'s pay tables.

    Cards are two-character strings. Each method returns the bet as a multiple of the ante, or 0 to fold.
    """

    def __init__(self, jurisdiction: Jurisdiction, directory: Path = STRATEGY_DIR) -> None:
        self.jurisdiction = jurisdiction
        self.multiples = tuple(jurisdiction.bet_multiples)
        self.ante, self.bet = payoffs(jurisdiction.ante), payoffs(jurisdiction.bet)
        self._policies: dict[tuple[int, int], tuple[int, np.ndarray, list[int]]] = {}
        self.path = Path(directory) / f"{fingerprint(jurisdiction)}.npz"
        if self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        with np.load(path) as data:
            holes, across, choice_y = data["holes"], data["across"], data["choice_y"]
        for hole, x, y in zip(holes, across, choice_y):
            rep = (int(hole[0]), int(hole[1]))
            rest = [c for c in range(52) if c not in rep]
            self._policies[rep] = (int(x), y, rest)

    @functools.cached_property
    def engine(self) -> ParSheetEngine:
        """The par sheet's engine (its class table and compiled loops), built only for a class whose decisions
        the strategy file does not hold."""
        return ParSheetEngine(self.jurisdiction)

    def save(self) -> Path:
        """Compute every class's across and down decisions and write them to ``self.path``."""
        holes = [hole for hole, _ in hole_classes()]
        for hole in holes:
            self._policy([DECK[hole[0]], DECK[hole[1]]])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(self.path, holes=np.array(holes, dtype=np.int8),
                            across=np.array([self._policies[h][0] for h in holes], dtype=np.int8),
                            choice_y=np.array([self._policies[h][1] for h in holes], dtype=np.int8))
        return self.path

    def _policy(self, hole: Sequence[str]):
        indexes = [_INDEX[c] for c in hole]
        rep, perm = canonical(indexes)
        if rep not in self._policies:
            across, choice_y = self.engine.policy(rep)
            rest = [c for c in range(52) if c not in rep]
            self._policies[rep] = (across, choice_y.astype(np.int8), rest)
        return self._policies[rep], perm

    def across(self, hole: Sequence[str]) -> int:
        """The across decision for the player's two cards (NY 5324.39(e)(3))."""
        (across, _, _), _ = self._policy(hole)
        return across

    def down(self, hole: Sequence[str], across_cards: Sequence[str], across_bet: int) -> int:
        """The down decision after betting ``across_bet`` x the ante, with the two outside across cards turned."""
        (_, choice_y, rest), perm = self._policy(hole)
        pair = pair_index(rest, [map_card(_INDEX[c], perm) for c in across_cards])
        return int(choice_y[self.multiples.index(across_bet), pair])

    def middle(self, hole: Sequence[str], across_cards: Sequence[str], down_cards: Sequence[str],
               across_bet: int, down_bet: int) -> int:
        """The middle decision with the four outside cards turned, over the 46 middle cards still unseen (each
        line's pay class by ``classes.classify``, the rules of the par sheet's class table)."""
        seen = [_INDEX[c] for c in (*hole, *across_cards, *down_cards)]
        unseen = np.array([c for c in range(52) if c not in seen])
        def classes(line: Sequence[str]) -> np.ndarray:
            cards = np.empty((len(unseen), 5), dtype=np.int64)
            cards[:, :4] = [_INDEX[c] for c in (*hole, *line)]
            cards[:, 4] = unseen
            return classify(cards, self.jurisdiction.wheel)
        c_a, c_d = classes(across_cards), classes(down_cards)
        base = (self.ante[c_a] + self.ante[c_d] + across_bet * self.bet[c_a] + down_bet * self.bet[c_d]).sum()
        middle = self.bet[np.maximum(c_a, c_d)].sum()
        z = self.multiples[-1] if middle > 0 else self.multiples[0]
        fold = -(2 + across_bet + down_bet) * SCALE3
        return 0 if fold > base + z * middle else z


if __name__ == "__main__":
    print(OptimalStrategy(load_jurisdiction(sys.argv[1])).save())
