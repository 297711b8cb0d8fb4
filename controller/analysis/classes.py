"""The pay class of every one of the 2,598,960 five-card hands, as one NumPy array.

A pay class is 0 for a hand below a pair of 6s, then 1 + the index of the hand in
``controller.game.paytable.PAY_HANDS`` (1 = pair of 6s-10s, 2 = pair of jacks or better, 3 = two pair, ...,
10 = royal flush), the granularity at which every Criss-Cross Poker pay table pays (NY 9 NYCRR 5324.39(f)).
Classes are ordered as the hands rank (NY (b)(2)), so the higher class is the higher-ranking hand.

Cards are indexes into ``controller.game.cards.DECK`` (suit-major: index = suit x 13 + rank). A set of five cards
is found by its colexicographic index: for sorted cards c0 < c1 < c2 < c3 < c4,
``C(c0,1) + C(c1,2) + C(c2,3) + C(c3,4) + C(c4,5)``.
"""

from __future__ import annotations

import functools
from math import comb

import numpy as np

from controller.game.paytable import PAY_HANDS

N_HANDS = comb(52, 5)
N_CLASSES = 1 + len(PAY_HANDS)
#: Class names, index = class: "loses" then PAY_HANDS.
CLASS_NAMES: tuple[str, ...] = ("below_pair_of_6s",) + PAY_HANDS
#: BINOMIAL[n, k] = C(n, k) for n < 53, k <= 5.
BINOMIAL = np.array([[comb(n, k) for k in range(6)] for n in range(53)], dtype=np.int64)


def colex_index(cards: np.ndarray) -> np.ndarray:
    """Colexicographic index of sets of five card indexes (last axis, any order) in 0..2,598,959."""
    ordered = np.sort(cards, axis=-1).astype(np.int64)
    return sum(BINOMIAL[ordered[..., k], k + 1] for k in range(5))


def classify(cards: np.ndarray, wheel: bool = True) -> np.ndarray:
    """Pay class (uint8) of each row of five card indexes (shape ``(N, 5)``).

    ``wheel``: A-2-3-4-5 is a straight (NY 5324.39(b)(2)(ii),(vi)); there is never a wrap-around.
    """
    cards = np.asarray(cards)
    ranks = np.sort(cards % 13, axis=1)
    r = [ranks[:, i] for i in range(5)]  # columns: one pass each, not a reduction along a short axis
    suits = [cards[:, i] // 13 for i in range(5)]
    flush = (suits[0] == suits[1]) & (suits[0] == suits[2]) & (suits[0] == suits[3]) & (suits[0] == suits[4])
    eq = [r[i + 1] == r[i] for i in range(4)]
    n_eq = eq[0].astype(np.int8) + eq[1] + eq[2] + eq[3]
    run3 = (eq[0] & eq[1]) | (eq[1] & eq[2]) | (eq[2] & eq[3])
    quads = (eq[0] & eq[1] & eq[2]) | (eq[1] & eq[2] & eq[3])
    distinct = n_eq == 0
    straight = distinct & (r[4] - r[0] == 4)
    if wheel:
        straight |= distinct & (r[0] == 0) & (r[1] == 1) & (r[2] == 2) & (r[3] == 3) & (r[4] == 12)
    # the rank of the (only) pair when n_eq == 1
    pair_rank = np.maximum.reduce([np.where(eq[i], r[i + 1], -1) for i in range(4)])
    out = np.zeros(len(cards), dtype=np.uint8)
    out[(n_eq == 1) & (pair_rank >= 4)] = 1  # pair of 6s (rank index 4) to 10s (8)
    out[(n_eq == 1) & (pair_rank >= 9)] = 2  # pair of jacks or better
    out[(n_eq == 2) & ~run3] = 3
    out[(n_eq == 2) & run3] = 4
    out[straight & ~flush] = 5
    out[flush & ~straight] = 6
    out[(n_eq == 3) & ~quads] = 7
    out[quads] = 8
    out[straight & flush] = 9
    out[straight & flush & (r[0] == 8)] = 10
    return out


def colex_combinations(n: int, k: int) -> np.ndarray:
    """Every set of ``k`` of ``range(n)`` as sorted rows (int8), in colexicographic order: row i has
    ``colex_index`` i. The sets whose largest element is below ``m`` are the first ``C(m, k)`` rows, so each
    block of sets with largest element ``last`` is the first ``C(last, k - 1)`` rows one size down, plus ``last``."""
    if k == 1:
        return np.arange(n, dtype=np.int8)[:, None]
    smaller = colex_combinations(n, k - 1)
    out = np.empty((comb(n, k), k), dtype=np.int8)
    row = 0
    for last in range(k - 1, n):
        count = comb(last, k - 1)
        out[row:row + count, :-1] = smaller[:count]
        out[row:row + count, -1] = last
        row += count
    return out


@functools.lru_cache(maxsize=2)
def class_table(wheel: bool = True) -> np.ndarray:
    """Pay class of every five-card hand, indexed by ``colex_index`` (read-only array of 2,598,960 uint8):
    ``classify(colex_combinations(52, 5), wheel)``, computed by the compiled loop ``kernel.class_table``
    (the same rules, without the arrays of every hand; tests/test_parsheet.py checks the two are equal)."""
    from controller.analysis import kernel  # numba: imported only when a table is needed

    table = kernel.class_table(wheel)
    table.setflags(write=False)
    return table
