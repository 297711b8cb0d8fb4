"""The par sheet's accounting loops, compiled with numba: what the optimal strategy's rounds add up to once
its decisions are known (decision frequencies, wagers and the return table by class, NY 9 NYCRR 5324.39(e)),
and the value of a hand when the middle card is seen first.

Pairs, lines and scales as in the ``kernel`` module docstring; every sum is of 64-bit integers, exact.
"""

from __future__ import annotations

import numpy as np

from controller.analysis.kernel_loops import N_DOWN, by_card_row, compiled, pair_offsets, popcount, repeated_classes


@compiled
def account(p0, p1, lines, codes, multiples, x, choice_y):
    """What the optimal strategy does after betting ``x`` across, with ``choice_y[a]`` the down decision for
    across pair ``a`` (0 = fold), from the ``codes`` of ``decision_values`` (``lines``: ``line_tables``). Over
    every round (a, d) disjoint with ``choice_y[a] != 0``:

    ``folds[j]``: rounds folded at the middle after betting ``multiples[j]`` down; ``bets[z]``: rounds with a
    middle bet of ``z`` x the ante (index = z); ``across_mass[k]``: (round played to the end, middle card) whose
    across line is of class k; ``down_mass[j, k]``: the same for the down line, of rounds betting
    ``multiples[j]`` down; ``middle_mass[k]``: (round, middle card) settling the middle bet on class k;
    ``middle_z[k]``: the same weighted by the middle bet's multiple.

    Pairs are visited as in ``decision_values``. A round not played to the end is folded at the middle:
    ``folds[j]`` is the rounds reaching it (1,128 per across pair betting ``multiples[j]`` down) less those
    played. A line's class mass is, over its pair's middle cards m of class k, the rounds played with that pair
    (``rows_a``, ``rows_d``) less those whose other pair holds m (``hit_d``, ``hit_a``), each summed by card as
    in ``by_card_row``. The rounds played and those of them with the largest middle bet are counted at once,
    in the low and high 32 bits of one integer (``weight``).
    """
    masks, cls_t = lines[0], lines[2]
    n = p0.size
    nm = multiples.size
    combos = nm * nm
    n_classes = masks.shape[0]
    z_lo, z_hi = multiples[0], multiples[nm - 1]
    off = pair_offsets(p0, p1)
    folds = np.zeros(nm, dtype=np.int64)
    bets = np.zeros(z_hi + 1, dtype=np.int64)
    rows_a = np.zeros(n, dtype=np.int64)  # rounds played to the end, by across pair
    rows_d = np.zeros((nm, n), dtype=np.int64)  # by down pair and down multiple
    hit_d = np.zeros((n, 50), dtype=np.int64)  # [a, c]: of those, the ones whose down pair holds card c
    hit_d_col = np.zeros((50, n), dtype=np.int64)  # [c, d]: the same, across pair d, down pair holding c
    hit_a = np.zeros((nm, n, 50), dtype=np.int64)  # [j, d, c]: whose across pair holds card c
    hit_a_t = np.zeros((nm, 50, n), dtype=np.int64)  # [j, c, d]: the same, across pair holding c, down pair d
    at_most = np.zeros(n_classes, dtype=np.int64)  # (round, middle card) with both lines of class <= k
    at_most_hi = np.zeros(n_classes, dtype=np.int64)  # the same, of rounds betting the largest middle bet
    index = np.zeros(z_hi + 1, dtype=np.int64)
    for j in range(nm):
        index[multiples[j]] = j
    i_x = index[x]
    on = np.zeros(n, dtype=np.int64)  # 1 where the across pair bets down
    down_bit = np.zeros(n, dtype=np.int64)  # the code's bit of the round across d, down that pair
    for a in range(n):
        on[a] = 1 if choice_y[a] != 0 else 0
        down_bit[a] = index[choice_y[a]] * nm + i_x
    select = np.zeros((nm, n), dtype=np.int64)  # [j, pair]: -1 (all bits) where that pair bets multiples[j] down
    for pair in range(n):
        if choice_y[pair] != 0:
            select[index[choice_y[pair]], pair] = -1
    repeated = repeated_classes(masks)
    scratch = np.zeros((4, n), dtype=np.int64)
    plays_ad, plays_da, weight, ones = scratch[0], scratch[1], scratch[2], scratch[3]
    plays_hi = np.int64(0)
    plays_all = np.int64(0)
    row_start = 0
    for a in range(n - 1):
        lo = a + 1
        size = n - lo
        code_row = codes[row_start:row_start + size]
        row_start += size
        a0, a1 = p0[a], p1[a]
        j_a = index[choice_y[a]]  # 0 when a folds: nothing is then added
        bit_ad, on_a = i_x * nm + j_a, on[a]
        hit_0, hit_1 = hit_a_t[j_a, a0, lo:], hit_a_t[j_a, a1, lo:]
        col_0, col_1 = hit_d_col[a0, lo:], hit_d_col[a1, lo:]
        bit_da, on_d = down_bit[lo:], on[lo:]
        for t in range(size):  # each loop writes at most two arrays: the compiler vectorises each
            code = code_row[t]
            p_ad = -((code >> bit_ad) & on_a)
            p_da = -((code >> bit_da[t]) & on_d[t])
            high = -((code >> combos) & 1)
            plays_ad[t] = p_ad
            plays_da[t] = p_da
            plays_all -= p_ad + p_da
            plays_hi -= (p_ad & high) + (p_da & high)
        for t in range(size):  # the rounds played (low 32 bits) and of those, with the largest middle bet
            high = -((code_row[t] >> combos) & 1)
            weight[t] = -(plays_ad[t] + plays_da[t]) - ((plays_ad[t] & high) + (plays_da[t] & high) << 32)
        for t in range(size):
            hit_0[t] -= plays_ad[t]
            hit_1[t] -= plays_ad[t]
        for t in range(size):
            col_0[t] -= plays_da[t]
            col_1[t] -= plays_da[t]
        for t in range(size):
            plays_ad[t] = -plays_ad[t]
        by_card_row(a, p0, off, plays_ad, hit_d[a])
        for j in range(nm):  # the rounds across pair t, down pair a, by down multiple
            chosen = select[j, lo:]
            for t in range(size):
                ones[t] = -(plays_da[t] & chosen[t])
            by_card_row(a, p0, off, ones, hit_a[j, a])
        for k in range(n_classes):
            mask_a = masks[k, a]
            if repeated[k] or mask_a == 0:  # at_most[k] is at_most[k - 1]'s, or nothing is added
                continue
            mask_d = masks[k, lo:]
            s = np.int64(0)
            for t in range(size):  # both counts at once: each below 1224 x 2 x 46 < 2**32 in a row
                s += popcount(mask_a & mask_d[t]) * weight[t]
            at_most[k] += s & 0xFFFFFFFF
            at_most_hi[k] += s >> 32
    for k in range(1, n_classes):
        if repeated[k]:
            at_most[k] = at_most[k - 1]
            at_most_hi[k] = at_most_hi[k - 1]
    bets[z_hi] += plays_hi
    # each round is counted by each of the two cards of its other pair: the rounds of a pair are half the sum
    for pair in range(n):
        across = np.int64(0)
        for c in range(50):
            across += hit_d[pair, c] + hit_d_col[c, pair]
        rows_a[pair] = across // 2
        for j in range(nm):
            down = np.int64(0)
            for c in range(50):
                down += hit_a[j, pair, c] + hit_a_t[j, c, pair]
            rows_d[j, pair] = down // 2
    bets[z_lo] += plays_all - plays_hi
    for j in range(nm):
        reached = np.int64(0)
        for a in range(n):
            if choice_y[a] == multiples[j]:
                reached += N_DOWN
        for d in range(n):
            reached -= rows_d[j, d]
        folds[j] = reached
    across_mass = np.zeros(n_classes, dtype=np.int64)
    down_mass = np.zeros((nm, n_classes), dtype=np.int64)
    for pair in range(n):
        for m in range(50):
            if m == p0[pair] or m == p1[pair]:
                continue
            k = cls_t[m, pair]
            across_mass[k] += rows_a[pair] - hit_d[pair, m] - hit_d_col[m, pair]
            for j in range(nm):
                down_mass[j, k] += rows_d[j, pair] - hit_a[j, pair, m] - hit_a_t[j, m, pair]
    middle_mass = np.zeros(n_classes, dtype=np.int64)
    middle_z = np.zeros(n_classes, dtype=np.int64)
    for k in range(n_classes):
        middle_mass[k] = at_most[k] - (at_most[k - 1] if k else 0)
        high = at_most_hi[k] - (at_most_hi[k - 1] if k else 0)
        middle_z[k] = z_lo * middle_mass[k] + (z_hi - z_lo) * high
    return folds, bets, across_mass, down_mass, middle_mass, middle_z


@compiled
def middle_seen_best(p0, p1, cls, valid, payoff, folded):
    """Middle card seen first: for each middle card ``m``, across pair ``a`` (not holding m) and across
    multiple ``i``, the best down decision's value: the largest over the down multiples ``j`` of the sums over
    the down pairs ``d`` (disjoint from ``a``, not holding m) of ``payoff[i, j, cls[a, m], cls[d, m]]``
    (shape ``(nx, ny, 11, 11)``), or ``folded[i]`` (the fold's value over those pairs) if larger. Returns
    ``out[i, m, a]`` (0 where m is in a).

    The down pairs are counted by class: all those without m, less those through either card of ``a``, plus
    ``a`` itself (taken off twice). Each count enters the sum linearly, so the payoffs are summed per count
    first: ``whole[k_a, c]`` over all the pairs without m, ``through[card, k_a, c]`` over those holding ``card``
    (``c = i * ny + j``), and only for the classes some pair makes with m.
    """
    n, cards = cls.shape
    nx, ny, n_classes = payoff.shape[0], payoff.shape[1], payoff.shape[2]
    choices = nx * ny
    flat = payoff.reshape(choices, n_classes, n_classes)
    out = np.zeros((nx, cards, n), dtype=np.int64)
    count_all = np.zeros(n_classes, dtype=np.int64)
    count_through = np.zeros((cards, n_classes), dtype=np.int64)  # [card, k]: pairs holding card
    whole = np.zeros((n_classes, choices), dtype=np.int64)
    through = np.zeros((cards, n_classes, choices), dtype=np.int64)
    present = np.zeros(n_classes, dtype=np.int64)
    for m in range(cards):
        count_all[:] = 0
        count_through[:, :] = 0
        for i in range(n):
            if valid[i, m]:
                k = cls[i, m]
                count_all[k] += 1
                count_through[p0[i], k] += 1
                count_through[p1[i], k] += 1
        n_present = 0
        for k in range(n_classes):
            if count_all[k]:
                present[n_present] = k
                n_present += 1
        for q in range(n_present):
            k_a = present[q]
            for c in range(choices):
                s = np.int64(0)
                for r in range(n_present):
                    k = present[r]
                    s += count_all[k] * flat[c, k_a, k]
                whole[k_a, c] = s
                for card in range(cards):
                    s = np.int64(0)
                    for r in range(n_present):
                        k = present[r]
                        s += count_through[card, k] * flat[c, k_a, k]
                    through[card, k_a, c] = s
        for a in range(n):
            if not valid[a, m]:
                continue
            k_a = cls[a, m]
            a0, a1 = p0[a], p1[a]
            for i in range(nx):
                best = folded[i]
                for j in range(ny):
                    c = i * ny + j
                    value = whole[k_a, c] - through[a0, k_a, c] - through[a1, k_a, c] + flat[c, k_a, k_a]
                    best = value if value > best else best
                out[i, m, a] = best
    return out
