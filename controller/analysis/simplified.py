"""Strategies players actually use, and a short strategy card, valued exactly beside the optimal strategy.

Each strategy is a rule for the three decisions (NY 9 NYCRR 5324.39(e)(3),(5),(7): fold, or bet 1x-3x the
ante; "1x" is the smallest allowed multiple and "3x" the largest) that a player can apply at the table. The
par sheet values each by the same exact enumeration as the optimal strategy (``kernel.decision_values``):

- ``never_fold``: never folds; each bet the better of 1x and 3x (the best play that never folds).
- ``always_1x``: 1x at every decision.
- ``pair_3x``: 3x when the line the bet settles on already shows a pair (any rank), else 1x; never folds.
  The across and down bets see only the player's two cards of their line; the middle bet settles on the
  higher of the two lines, each line showing the player's two cards and its two turned outside cards.
- ``across_fold_rule``: the published across rule only (fold unsuited, unpaired hands whose higher card is a
  5 or lower: the Wizard of Odds' "if the hole cards are unsuited, unpaired, and the largest one is five or
  less, then fold"), 1x otherwise and at every later decision.
- ``card``: ``CARD``, a short card derived from the optimal strategy of the New York tables (the par sheet's
  across strategy folds exactly the hands of the published rule and bets 3x on the pairs and on QJs alone; the
  optimal down bet is 3x with a pair in hand; the optimal middle bet is 3x when a line shows a pair of 6s
  or better or four to a flush, 1x or a fold otherwise). Its cost is what the card's simplifications lose.

A line's known cards (the player's two and its two turned outside cards) are coded by ``line_features``.
"""

from __future__ import annotations

import numpy as np

#: The codes of ``line_features``, lowest first.
NOTHING, FOUR_FLUSH, LOW_PAIR, PAIR_6_10, PAIR_J_UP, TWO_PAIR_UP = range(6)
N_FEATURES = 6
#: The strategy card (``card``), one line per decision.
CARD: tuple[str, ...] = (
    "across: fold unsuited, unpaired 5-high or lower; 3x with a pair; else 1x",
    "down: 3x with a pair in hand; else 1x",
    "middle: 3x when either line (your two cards and its two turned cards) shows a pair of 6s or better or "
    "four to a flush; else 1x",
)

#: Name -> what the strategy does (for the reports), in the order the reports list them.
STRATEGIES: dict[str, str] = {
    "never_fold": "never fold; each bet the better of 1x and 3x",
    "always_1x": "bet 1x at every decision",
    "pair_3x": "3x when the line of the bet shows a pair (any rank), else 1x; never fold",
    "across_fold_rule": ("the published across rule only (fold unsuited, unpaired 5-high or lower), "
                         "else 1x throughout"),
    "card": "the strategy card below",
}


def line_features(hole: tuple[int, int], rest: np.ndarray, p0: np.ndarray, p1: np.ndarray) -> np.ndarray:
    """The code of each pair's line before its middle card (the hand's two cards and the pair's two cards;
    cards as ``controller.game.cards.DECK`` indexes, ``rest`` the 50 others, pairs ``(rest[p0], rest[p1])``):
    ``TWO_PAIR_UP`` for two pair, three or four of a kind, ``PAIR_J_UP``, ``PAIR_6_10`` or ``LOW_PAIR`` (2s-5s) for
    one pair by its rank, ``FOUR_FLUSH`` for four cards of one suit, else ``NOTHING``."""
    n = len(p0)
    cards = np.stack([np.full(n, hole[0]), np.full(n, hole[1]), rest[p0], rest[p1]], axis=1)
    ranks, suits = cards % 13, cards // 13
    counts = np.zeros((n, 13), dtype=np.int64)
    for i in range(4):
        counts[np.arange(n), ranks[:, i]] += 1
    pairs = (counts >= 2).sum(1)
    pair_rank = np.where(counts >= 2, np.arange(13), -1).max(1)
    code = np.full(n, NOTHING, dtype=np.int64)
    code[(suits == suits[:, :1]).all(1)] = FOUR_FLUSH
    code[(pairs == 1) & (pair_rank < 4)] = LOW_PAIR  # rank index 4 is the 6
    code[(pairs == 1) & (pair_rank >= 4)] = PAIR_6_10
    code[(pairs == 1) & (pair_rank >= 9)] = PAIR_J_UP  # rank index 9 is the jack
    code[(pairs >= 2) | (counts >= 3).any(1)] = TWO_PAIR_UP
    return code


def published_fold(hole: tuple[int, int]) -> bool:
    """The published across rule: unsuited, unpaired, and the higher card a 5 or lower (rank index 3)."""
    return hole[0] // 13 != hole[1] // 13 and hole[0] % 13 != hole[1] % 13 and max(hole[0] % 13, hole[1] % 13) <= 3


def strategy_arrays(hole: tuple[int, int], features: np.ndarray, multiples: tuple[int, ...]):
    """The strategies other than ``never_fold`` for one hand, as ``kernel.decision_values`` takes them:
    ``(names, xs, ys, middle_rules)`` for those that do not fold at the across decision, and the names of
    those that do (their value is the loss of both antes)."""
    low, high = multiples[0], multiples[-1]
    pair = hole[0] % 13 == hole[1] % 13
    fold = published_fold(hole)
    shows_pair = np.arange(N_FEATURES) >= LOW_PAIR
    card_line = np.arange(N_FEATURES)
    card_line = (card_line >= PAIR_6_10) | (card_line == FOUR_FLUSH)
    either = lambda line: line[:, None] | line[None, :]  # noqa: E731
    rules = {
        "always_1x": (low, low, np.full((N_FEATURES, N_FEATURES), low)),
        "pair_3x": (high if pair else low, high if pair else low, np.where(either(shows_pair), high, low)),
        "across_fold_rule": (0 if fold else low, low, np.full((N_FEATURES, N_FEATURES), low)),
        "card": (0 if fold else high if pair else low, high if pair else low, np.where(either(card_line), high, low)),
    }
    names = [name for name, (x, _, _) in rules.items() if x]
    folded = [name for name, (x, _, _) in rules.items() if not x]
    xs = np.array([rules[name][0] for name in names], dtype=np.int64)
    ys = np.array([rules[name][1] for name in names], dtype=np.int64)
    middle = np.array([rules[name][2] for name in names], dtype=np.int64).reshape(len(names), N_FEATURES, N_FEATURES)
    return names, folded, (xs, ys, features, middle)
