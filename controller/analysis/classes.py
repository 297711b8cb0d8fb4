"""The pay class of every one of the 2,598,960 five-card hands, as one NumPy array.

A pay class is 0 for a hand below a pair of 6s, then 1 + the index of the hand in
``controller.paytable.PAY_HANDS`` (1 = pair of 6s-10s, 2 = pair of jacks or better, 3 = two pair, ...,
10 = royal flush), the granularity at which every Criss-Cross Poker pay table pays (NY 9 NYCRR 5324.39(f)).
Classes are ordered as the hands rank (NY (b)(2)), so the higher class is the higher-ranking hand.

Cards are indexes into ``controller.cards.DECK`` (suit-major: index = suit x 13 + rank). A set of five cards
is found by its colexicographic index: for sorted cards c0 < c1 < c2 < c3 < c4,
``C(c0,1) + C(c1,2) + C(c2,3) + C(c3,4) + C(c4,5)``.
"""

from __future__ import annotations

import functools
import itertools
from math import comb

import numpy as np

from controller.paytable import PAY_HANDS

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
    ranks = np.sort(cards % 13, axis=1)
    suits = cards // 13
    flush = (suits == suits[:, :1]).all(axis=1)
    eq = ranks[:, 1:] == ranks[:, :-1]
    n_eq = eq.sum(axis=1)
    run3 = (eq[:, 0] & eq[:, 1]) | (eq[:, 1] & eq[:, 2]) | (eq[:, 2] & eq[:, 3])
    quads = (eq[:, 0] & eq[:, 1] & eq[:, 2]) | (eq[:, 1] & eq[:, 2] & eq[:, 3])
    distinct = n_eq == 0
    straight = distinct & (ranks[:, 4] - ranks[:, 0] == 4)
    if wheel:
        straight |= distinct & (ranks == np.array([0, 1, 2, 3, 12])).all(axis=1)
    pair_rank = np.where(eq, ranks[:, 1:], -1).max(axis=1)  # the rank of the (only) pair when n_eq == 1
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
    out[straight & flush & (ranks[:, 0] == 8)] = 10
    return out


@functools.lru_cache(maxsize=2)
def class_table(wheel: bool = True) -> np.ndarray:
    """Pay class of every five-card hand, indexed by ``colex_index`` (read-only array of 2,598,960 uint8)."""
    combos = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(52), 5)),
                         dtype=np.int8, count=5 * N_HANDS).reshape(N_HANDS, 5)
    table = np.empty(N_HANDS, dtype=np.uint8)
    table[colex_index(combos)] = classify(combos, wheel)
    table.setflags(write=False)
    return table
