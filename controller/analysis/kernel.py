"""The par sheet's inner loops, compiled with numba: every (across pair, down pair) of one two-card hand.

For one hand, the 50 cards left are indexed 0..49 and their 1,225 pairs in ``combinations`` order (``p0[i]``,
``p1[i]`` the two cards of pair ``i``). A line is the hand, a pair and a middle card ``m``; ``cls[pair, m]`` is
its pay class (``controller.analysis.classes``), ``valid[pair, m]`` false where ``m`` lies in the pair.

The middle bet pays on the higher-ranking of the two lines (NY 9 NYCRR 5324.39(e)(9)(ii)); summed over the 46
middle cards left for an across pair ``a`` and a down pair ``d`` it is ``sum_k (h(k) - h(k+1)) N_k[a, d]``, where
``N_k`` counts the middle cards for which both lines are of class <= k and ``h`` is the bet payoff by class
(``parsheet`` module docstring). Here ``N_k`` is the number of bits set in ``masks[a, k] & masks[d, k]``
(``masks[pair, k]``: a 50-bit set of the middle cards giving that pair's line a class <= k), and every sum is of
64-bit integers: exact, in any order. Classes above the highest one a pair's line can reach need no count
(``kmax``): there ``N_k`` is all 46 middle cards.

Values are integers in the par sheet's scales: a round's value summed over its 46 middle cards (``SCALE3``
units) for one (a, d); summed over the down pairs for one across pair (``SCALE2``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

N_MIDDLE = 46


def _compiled(function):
    """``numba.njit`` with the compiled code cached on disk when a cache folder can be written (numba's
    ``__pycache__`` beside this file, else the user's cache folder), else compiled at each start."""
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available" (a read-only install)
        return njit(nogil=True)(function)


@intrinsic
def _popcount(typingctx, value):
    """Number of bits set in a 64-bit integer (LLVM's ctpop)."""
    if isinstance(value, types.Integer):
        def codegen(context, builder, signature, args):
            return builder.ctpop(args[0])
        return value(value), codegen
    return None


@_compiled
def line_tables(cls, valid, ante_pay, bet_pay):
    """Per pair of the arrays the loops read (shapes: ``cls``, ``valid`` (1225, 50); pay arrays by class):

    ``masks[pair, k]`` (int64 bit sets, see module docstring), ``kmax[pair]`` the highest class of the pair's
    line over its middle cards, ``ante_at[pair, m]`` / ``bet_at[pair, m]`` the payoff of that line with middle
    card ``m`` (0 where ``m`` is in the pair), ``row_ante[pair]`` / ``row_bet[pair]`` their sums over ``m``.
    """
    n, cards = cls.shape
    n_classes = ante_pay.size
    masks = np.zeros((n, n_classes), dtype=np.int64)
    kmax = np.zeros(n, dtype=np.int64)
    ante_at = np.zeros((n, cards), dtype=np.int64)
    bet_at = np.zeros((n, cards), dtype=np.int64)
    row_ante = np.zeros(n, dtype=np.int64)
    row_bet = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for m in range(cards):
            if not valid[i, m]:
                continue
            k = np.int64(cls[i, m])
            bit = np.int64(1) << m
            for j in range(k, n_classes):
                masks[i, j] |= bit
            if k > kmax[i]:
                kmax[i] = k
            ante_at[i, m] = ante_pay[k]
            bet_at[i, m] = bet_pay[k]
            row_ante[i] += ante_pay[k]
            row_bet[i] += bet_pay[k]
    return masks, kmax, ante_at, bet_at, row_ante, row_bet


@_compiled
def _middle_sum(masks, kmax, steps, bet_pay, a, d):
    """The middle bet's payoff summed over the middle cards left for across pair ``a`` and down pair ``d``."""
    top = max(kmax[a], kmax[d])
    total = N_MIDDLE * bet_pay[top]
    for k in range(top):
        total += steps[k] * _popcount(masks[a, k] & masks[d, k])
    return total


@_compiled
def _round_sums(p0, p1, masks, kmax, ante_at, bet_at, row_ante, row_bet, steps, bet_pay, a, d):
    """For across pair ``a`` and down pair ``d``, summed over the middle cards left: the middle bet's payoff,
    the two antes' payoff, the across line's and the down line's bet payoff (per unit staked)."""
    a0, a1, d0, d1 = p0[a], p1[a], p0[d], p1[d]
    antes = row_ante[a] - ante_at[a, d0] - ante_at[a, d1] + row_ante[d] - ante_at[d, a0] - ante_at[d, a1]
    bet_a = row_bet[a] - bet_at[a, d0] - bet_at[a, d1]
    bet_d = row_bet[d] - bet_at[d, a0] - bet_at[d, a1]
    return _middle_sum(masks, kmax, steps, bet_pay, a, d), antes, bet_a, bet_d


@_compiled
def decision_values(p0, p1, masks, kmax, ante_at, bet_at, row_ante, row_bet, steps, bet_pay, multiples,
                    want_by_card, xs, ys, features, middle_rules):
    """The down decision's values for every across pair, each across multiple ``x`` and down multiple ``y``,
    and the value of given strategies, in one pass over the (across pair, down pair) of one hand.

    Returns ``(total, never_fold, by_card, policy)``. ``total[a, i * len(multiples) + j]``: the sum over the
    down pairs ``d`` (disjoint from ``a``) of the middle decision's value ``max(fold, continue)`` after betting
    ``multiples[i]`` across and ``multiples[j]`` down (``continue`` with the better of the smallest and largest
    middle bet), in ``SCALE3`` units summed over d; ``never_fold``: the same without the fold. When
    ``want_by_card``, ``by_card[a, c, i * n + j]``: the sum of ``total`` over the down pairs that hold card
    ``c`` (else an empty array).

    ``policy[s, a]``: the value (``SCALE2`` units, for across pair ``a``) of strategy ``s`` that bets
    ``xs[s] >= 1`` across, ``ys[s, a]``
    down (0 = fold) on across pair ``a``, and at the middle ``middle_rules[s, features[a], features[d]]``
    (``z >= 1``: bet z; 0: fold; -1: the best of folding and betting; -2: the better bet, never folding), where
    ``features[pair]`` is a small code of the line that pair makes with the hand.
    """
    n = p0.size
    nm = multiples.size
    combos = nm * nm
    z_lo, z_hi = multiples[0], multiples[nm - 1]
    total = np.zeros((n, combos), dtype=np.int64)
    never_fold = np.zeros((n, combos), dtype=np.int64)
    size = n if want_by_card else 0
    by_card = np.zeros((size, 50, combos), dtype=np.int64)
    by_card_t = np.zeros((50, size, combos), dtype=np.int64)  # [c, d]: written along d while a is fixed
    bits = (np.int64(1) << p0) | (np.int64(1) << p1)
    v_ad = np.zeros(combos, dtype=np.int64)
    v_da = np.zeros(combos, dtype=np.int64)
    strategies = xs.size
    policy = np.zeros((strategies, n), dtype=np.int64)
    for a in range(n):
        a0, a1 = p0[a], p1[a]
        for d in range(a + 1, n):
            if bits[a] & bits[d]:
                continue
            d0, d1 = p0[d], p1[d]
            middle, antes, bet_a, bet_d = _round_sums(p0, p1, masks, kmax, ante_at, bet_at, row_ante, row_bet,
                                                      steps, bet_pay, a, d)
            best_middle = max(z_lo * middle, z_hi * middle)
            base = antes + best_middle
            for i in range(nm):
                x = multiples[i]
                for j in range(nm):
                    y = multiples[j]
                    c = i * nm + j
                    fold = -(2 + x + y) * N_MIDDLE
                    v_ad[c] = base + x * bet_a + y * bet_d  # across pair a, down pair d
                    v_da[c] = base + x * bet_d + y * bet_a  # across pair d, down pair a
                    never_fold[a, c] += v_ad[c]
                    never_fold[d, c] += v_da[c]
                    v_ad[c] = max(v_ad[c], fold)
                    v_da[c] = max(v_da[c], fold)
            for c in range(combos):
                total[a, c] += v_ad[c]
                total[d, c] += v_da[c]
            if want_by_card:
                for c in range(combos):
                    by_card[a, d0, c] += v_ad[c]
                    by_card[a, d1, c] += v_ad[c]
                    by_card_t[a0, d, c] += v_da[c]
                    by_card_t[a1, d, c] += v_da[c]
            for s in range(strategies):
                x = xs[s]
                for side in range(2):
                    across, down = (a, d) if side == 0 else (d, a)
                    y = ys[s, across]
                    if y == 0:
                        policy[s, across] += -(2 + x) * N_MIDDLE
                        continue
                    fold = -(2 + x + y) * N_MIDDLE
                    rule = middle_rules[s, features[across], features[down]]
                    plain = antes + (x * bet_a + y * bet_d if side == 0 else x * bet_d + y * bet_a)
                    if rule == -1:
                        policy[s, across] += max(fold, plain + best_middle)
                    elif rule == -2:
                        policy[s, across] += plain + best_middle
                    elif rule == 0:
                        policy[s, across] += fold
                    else:
                        policy[s, across] += plain + rule * middle
    if want_by_card:
        for c in range(50):
            for d in range(n):
                for k in range(combos):
                    by_card[d, c, k] += by_card_t[c, d, k]
    return total, never_fold, by_card, policy


@_compiled
def _tally(value, x, y, j, across, down, a0, a1, d0, d1, folds, rows_a, rows_d, hit_d, hit_a_t):
    """One round of ``account``: across pair ``across`` (cards a0, a1), down pair ``down`` (d0, d1), the value
    of going on to the middle decision ``value``; 1 if it is played to the end, 0 if folded there."""
    if not value > -(2 + x + y) * N_MIDDLE:
        folds[j] += 1
        return 0
    rows_a[across] += 1
    rows_d[j, down] += 1
    hit_d[across, d0] += 1
    hit_d[across, d1] += 1
    hit_a_t[j, a0, down] += 1
    hit_a_t[j, a1, down] += 1
    return 1


@_compiled
def account(p0, p1, masks, kmax, ante_at, bet_at, row_ante, row_bet, steps, bet_pay, multiples, x, choice_y):
    """What the optimal strategy does after betting ``x`` across, with ``choice_y[a]`` the down decision for
    across pair ``a`` (0 = fold). Over every (a, d) disjoint with ``choice_y[a] != 0``:

    ``folds[j]``: rounds folded at the middle after betting ``multiples[j]`` down; ``bets[z]``: rounds with a
    middle bet of ``z`` x the ante (index = z); ``rows_a[a]`` / ``rows_d[j, d]``: rounds played to the end by
    across pair (by down pair, for each down multiple); ``hit_d[a, c]``: of those, the ones whose down pair holds
    card c; ``hit_a[j, d, c]``: whose across pair holds c; ``middle_mass[k]``: (round, middle card) settling the
    middle bet on class k; ``middle_z[k]``: the same weighted by the middle bet's multiple.
    """
    n = p0.size
    nm = multiples.size
    n_classes = bet_pay.size
    z_lo, z_hi = multiples[0], multiples[nm - 1]
    folds = np.zeros(nm, dtype=np.int64)
    bets = np.zeros(z_hi + 1, dtype=np.int64)
    rows_a = np.zeros(n, dtype=np.int64)
    rows_d = np.zeros((nm, n), dtype=np.int64)
    hit_d = np.zeros((n, 50), dtype=np.int64)
    hit_a_t = np.zeros((nm, 50, n), dtype=np.int64)  # [j, c, d]: written along d
    middle_mass = np.zeros(n_classes, dtype=np.int64)
    middle_z = np.zeros(n_classes, dtype=np.int64)
    index = np.zeros(z_hi + 1, dtype=np.int64)
    for j in range(nm):
        index[multiples[j]] = j
    bits = (np.int64(1) << p0) | (np.int64(1) << p1)
    for a in range(n):
        a0, a1 = p0[a], p1[a]
        for d in range(a + 1, n):
            if bits[a] & bits[d]:
                continue
            y_ad, y_da = choice_y[a], choice_y[d]
            if y_ad == 0 and y_da == 0:
                continue
            d0, d1 = p0[d], p1[d]
            middle, antes, bet_a, bet_d = _round_sums(p0, p1, masks, kmax, ante_at, bet_at, row_ante, row_bet,
                                                      steps, bet_pay, a, d)
            base = antes + max(z_lo * middle, z_hi * middle)
            z = z_hi if middle > 0 else z_lo
            plays = 0
            if y_ad != 0:  # across pair a, down pair d
                plays += _tally(base + x * bet_a + y_ad * bet_d, x, y_ad, index[y_ad], a, d, a0, a1, d0, d1,
                                folds, rows_a, rows_d, hit_d, hit_a_t)
            if y_da != 0:  # across pair d, down pair a
                plays += _tally(base + x * bet_d + y_da * bet_a, x, y_da, index[y_da], d, a, d0, d1, a0, a1,
                                folds, rows_a, rows_d, hit_d, hit_a_t)
            if plays == 0:
                continue
            bets[z] += plays
            below = 0
            top = max(kmax[a], kmax[d])
            for k in range(n_classes):
                both = _popcount(masks[a, k] & masks[d, k]) if k < top else N_MIDDLE
                middle_mass[k] += plays * (both - below)
                middle_z[k] += plays * (both - below) * z
                below = both
    hit_a = np.zeros((nm, n, 50), dtype=np.int64)
    for j in range(nm):
        for c in range(50):
            for d in range(n):
                hit_a[j, d, c] = hit_a_t[j, c, d]
    return folds, bets, rows_a, rows_d, hit_d, hit_a, middle_mass, middle_z


@_compiled
def middle_seen_sums(p0, p1, cls, valid, payoff):
    """Middle card seen first: for each middle card ``m`` and across pair ``a`` (not holding m), the sums over
    the down pairs ``d`` (disjoint from ``a``, not holding m) of ``payoff[c, cls[a, m], cls[d, m]]``, for each
    choice ``c`` (shape ``(choices, 11, 11)``). Returns ``out[c, m, a]`` (0 where m is in a)."""
    n, cards = cls.shape
    n_classes = payoff.shape[1]
    choices = payoff.shape[0]
    total = np.zeros((cards, n_classes), dtype=np.int64)
    through = np.zeros((cards, cards, n_classes), dtype=np.int64)  # [m, card, k]: pairs holding card
    for i in range(n):
        for m in range(cards):
            if valid[i, m]:
                k = cls[i, m]
                total[m, k] += 1
                through[m, p0[i], k] += 1
                through[m, p1[i], k] += 1
    out = np.zeros((choices, cards, n), dtype=np.int64)
    count = np.zeros(n_classes, dtype=np.int64)
    for m in range(cards):
        for a in range(n):
            if not valid[a, m]:
                continue
            k_a = cls[a, m]
            for k in range(n_classes):
                count[k] = total[m, k] - through[m, p0[a], k] - through[m, p1[a], k]
            count[k_a] += 1  # a itself was taken off twice
            for c in range(choices):
                s = 0
                for k in range(n_classes):
                    s += count[k] * payoff[c, k_a, k]
                out[c, m, a] = s
    return out
