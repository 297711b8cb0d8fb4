"""The par sheet's inner loops, compiled with numba: every (across pair, down pair) of one two-card hand: the
line tables and the decisions' values (the accounting once the decisions are known: ``kernel_account``; the
pieces both share: ``kernel_loops``).

For one hand, the 50 cards left are indexed 0..49 and their 1,225 pairs in ``combinations`` order (``p0[i]``,
``p1[i]`` the two cards of pair ``i``). A line is the hand, a pair and a middle card ``m``; ``cls[pair, m]`` is
its pay class (``controller.analysis.classes``), ``valid[pair, m]`` false where ``m`` lies in the pair.

The middle bet pays on the higher-ranking of the two lines (NY 9 NYCRR 5324.39(e)(9)(ii)); summed over the 46
middle cards left for an across pair ``a`` and a down pair ``d`` it is ``sum_k (h(k) - h(k+1)) N_k[a, d]``, where
``N_k`` counts the middle cards for which both lines are of class <= k and ``h`` is the bet payoff by class
(``parsheet`` module docstring). Here ``N_k`` is the number of bits set in ``masks[k, a] & masks[k, d]``
(``masks[k, pair]``: a 50-bit set of the middle cards giving that pair's line a class <= k), and every sum is of
64-bit integers: exact, in any order. From the highest class the across line can reach (``kmax[a]``) up, the
across line is of class <= k with every card, and those classes' part of the sum is the down line's alone,
taken from a per-pair table (``tail``) instead of bit counts.

Hot loops run over views starting at index 0 and write at most two arrays each, and take the larger of two
values with a conditional expression rather than ``max``: so written, the compiler vectorises them.

Values are integers in the par sheet's scales: a round's value summed over its 46 middle cards (``SCALE3``
units) for one (a, d); summed over the down pairs for one across pair (``SCALE2``).
"""

from __future__ import annotations

import numpy as np

from controller.analysis.kernel_loops import (N_MIDDLE, by_card_row, compiled, inlined, pair_offsets, popcount,
                                              repeated_classes)


@inlined
def _sort_in_place(values):
    """Insertion sort of a short array (five cards or ranks), ascending."""
    for j in range(1, values.size):
        value = values[j]
        k = j - 1
        while k >= 0 and values[k] > value:
            values[k + 1] = values[k]
            k -= 1
        values[k + 1] = value


@compiled
def class_table(wheel):
    """The pay class of every five-card hand in colexicographic order (uint8, 2,598,960): what
    ``controller.analysis.classes.classify`` gives for ``colex_combinations(52, 5)``, by the same rules in
    the same order, one hand at a time (no temporary arrays). ``wheel``: A-2-3-4-5 is a straight."""
    out = np.empty(2598960, dtype=np.uint8)
    r = np.zeros(5, dtype=np.int64)
    index = 0
    for c4 in range(4, 52):
        for c3 in range(3, c4):
            for c2 in range(2, c3):
                for c1 in range(1, c2):
                    same_suit = c1 // 13 == c2 // 13 and c2 // 13 == c3 // 13 and c3 // 13 == c4 // 13
                    for c0 in range(c1):
                        r[0], r[1], r[2], r[3], r[4] = c0 % 13, c1 % 13, c2 % 13, c3 % 13, c4 % 13
                        _sort_in_place(r)
                        flush = same_suit and c0 // 13 == c1 // 13
                        e0, e1, e2, e3 = r[1] == r[0], r[2] == r[1], r[3] == r[2], r[4] == r[3]
                        n_eq = int(e0) + int(e1) + int(e2) + int(e3)
                        run3 = (e0 and e1) or (e1 and e2) or (e2 and e3)
                        quads = (e0 and e1 and e2) or (e1 and e2 and e3)
                        distinct = n_eq == 0
                        straight = distinct and r[4] - r[0] == 4
                        if wheel:
                            straight = straight or (distinct and r[0] == 0 and r[1] == 1 and r[2] == 2
                                                    and r[3] == 3 and r[4] == 12)
                        pair_rank = -1
                        if e0:
                            pair_rank = r[1]
                        if e1 and r[2] > pair_rank:
                            pair_rank = r[2]
                        if e2 and r[3] > pair_rank:
                            pair_rank = r[3]
                        if e3 and r[4] > pair_rank:
                            pair_rank = r[4]
                        value = 0
                        if n_eq == 1 and pair_rank >= 4:  # pair of 6s (rank index 4) to 10s (8)
                            value = 1
                        if n_eq == 1 and pair_rank >= 9:  # pair of jacks or better
                            value = 2
                        if n_eq == 2 and not run3:
                            value = 3
                        if n_eq == 2 and run3:
                            value = 4
                        if straight and not flush:
                            value = 5
                        if flush and not straight:
                            value = 6
                        if n_eq == 3 and not quads:
                            value = 7
                        if quads:
                            value = 8
                        if straight and flush:
                            value = 9
                        if straight and flush and r[0] == 8:
                            value = 10
                        out[index] = value
                        index += 1
    return out


@compiled
def line_classes(hole, rest, p0, p1, classes, binomial):
    """``cls[pair, m]``: the pay class (``classes``, by colexicographic index; ``binomial[n, k]`` = C(n, k)) of
    the five cards ``hole``, ``rest[p0[pair]]``, ``rest[p1[pair]]`` and ``rest[m]``; 0 where ``m`` is in the
    pair (uint8, shape (1225, 50)).

    The four cards of hole and pair are sorted once per pair; the middle card ``c`` goes in at position ``q``
    (the number of the four below it), so the index is the terms of the cards below it, ``binomial[c, q + 1]``,
    and the terms of the cards above it moved up one place (``low[q]`` and ``high[q]``)."""
    n, cards = p0.size, rest.size
    out = np.zeros((n, cards), dtype=np.uint8)
    hand = np.zeros(4, dtype=np.int64)
    low = np.zeros(5, dtype=np.int64)  # [q]: sum over j < q of binomial[hand[j], j + 1]
    high = np.zeros(5, dtype=np.int64)  # [q]: sum over j >= q of binomial[hand[j], j + 2]
    for i in range(n):
        hand[0], hand[1], hand[2], hand[3] = hole[0], hole[1], rest[p0[i]], rest[p1[i]]
        _sort_in_place(hand)
        for q in range(4):
            low[q + 1] = low[q] + binomial[hand[q], q + 1]
            high[3 - q] = high[4 - q] + binomial[hand[3 - q], 5 - q]
        for m in range(cards):
            if m == p0[i] or m == p1[i]:
                continue
            card = rest[m]
            q = 0
            for j in range(4):
                q += 1 if hand[j] < card else 0
            out[i, m] = classes[low[q] + binomial[card, q + 1] + high[q]]
    return out


@compiled
def line_tables(cls, valid, ante_pay, bet_pay):
    """Per pair, the arrays the loops read (shapes: ``cls``, ``valid`` (1225, 50); pay arrays by class), as one
    tuple ``lines``:

    ``masks[k, pair]`` (int64 bit sets, see module docstring); ``kmax[pair]`` the highest class of the pair's
    line over its middle cards; ``cls_t[m, pair]`` the class with middle card ``m``; ``tail[k, pair]`` the sum
    over the pair's middle cards ``m`` of ``bet_pay[max(k, cls[pair, m])]``; ``ante_at[pair, m]`` /
    ``bet_at[pair, m]`` the line's payoff with middle card ``m`` (0 where ``m`` is in the pair), ``ante_t`` /
    ``bet_t`` the same indexed ``[m, pair]``; ``row_ante[pair]`` / ``row_bet[pair]`` their sums over ``m``;
    ``bet_pay`` itself.
    """
    n, cards = cls.shape
    n_classes = ante_pay.size
    masks = np.zeros((n_classes, n), dtype=np.int64)
    kmax = np.zeros(n, dtype=np.int64)
    cls_t = np.zeros((cards, n), dtype=np.int64)
    tail = np.zeros((n_classes, n), dtype=np.int64)
    ante_at = np.zeros((n, cards), dtype=np.int64)
    bet_at = np.zeros((n, cards), dtype=np.int64)
    ante_t = np.zeros((cards, n), dtype=np.int64)
    bet_t = np.zeros((cards, n), dtype=np.int64)
    row_ante = np.zeros(n, dtype=np.int64)
    row_bet = np.zeros(n, dtype=np.int64)
    of_class = np.zeros(n_classes, dtype=np.int64)  # the pair's middle cards of each class, as a bit set
    count = np.zeros(n_classes, dtype=np.int64)  # and their number
    for i in range(n):
        of_class[:] = 0
        count[:] = 0
        for m in range(cards):
            if not valid[i, m]:
                continue
            k = np.int64(cls[i, m])
            of_class[k] |= np.int64(1) << m
            count[k] += 1
            kmax[i] = k if k > kmax[i] else kmax[i]
            cls_t[m, i] = k
            ante_at[i, m] = ante_t[m, i] = ante_pay[k]
            bet_at[i, m] = bet_t[m, i] = bet_pay[k]
            row_ante[i] += ante_pay[k]
            row_bet[i] += bet_pay[k]
        # masks[j]: the cards of classes <= j; tail[j]: bet_pay[j] for each of those, bet_pay[k] for the others
        below, at_most, above = np.int64(0), np.int64(0), np.int64(0)
        for k in range(n_classes):
            above += count[k] * bet_pay[k]
        for j in range(n_classes):
            below |= of_class[j]
            at_most += count[j]
            above -= count[j] * bet_pay[j]
            masks[j, i] = below
            tail[j, i] = at_most * bet_pay[j] + above
    return masks, kmax, cls_t, tail, ante_at, bet_at, ante_t, bet_t, row_ante, row_bet, bet_pay.astype(np.int64)


@inlined
def _pair_sums(a, p0, p1, values, out):
    """``out[t - a - 1] = values[p0[t]] + values[p1[t]]`` for every pair ``t > a`` (``values`` by card): the
    pairs after ``a`` in ``combinations`` order are (a0, j > a1), then (i, j > i) for each i > a0, so each run
    of one first card is a contiguous loop (vectorised; no gather)."""
    a0, a1 = p0[a], p1[a]
    position = 0
    for i in range(a0, 49):
        first = a1 + 1 if i == a0 else i + 1
        count = 50 - first
        head = values[i]
        dest, tail = out[position:position + count], values[first:]
        for j in range(count):
            dest[j] = head + tail[j]
        position += count


@inlined
def _row(a, p0, p1, bits, lines, steps, z_lo, z_hi, mid, antes, base, bet_a, bet_d, keep):
    """For across pair ``a`` and each down pair ``t > a``, summed over the middle cards left (scratch arrays
    indexed by ``t - a - 1``; returns their length): the middle bet's payoff per unit ``mid``, the two antes'
    payoff ``antes``, with the better of the smallest and largest middle bet ``base``, the across (pair a) and
    down (pair t) lines' bet payoff per unit ``bet_a`` / ``bet_d``; ``keep`` -1 (all bits) where the pairs share
    no card, else 0 (and the others meaningless). Inner loops run over views from index 0, which the compiler
    vectorises.

    ``mid``: for the classes ``k >= kmax[a]`` every middle card gives the across line a class <= k, so their
    part of ``sum_k steps[k] N_k`` is the down line's alone, ``sum_m bet_pay[max(kmax[a], class of t with m)]``
    over the middle cards m left: ``tail`` less the terms of a's two cards. Bit counts are taken below kmax[a].
    """
    masks, kmax, cls_t, tail, ante_at, bet_at, ante_t, bet_t, row_ante, row_bet, bet_pay = lines
    n = p0.size
    lo = a + 1
    size = n - lo
    a0, a1 = p0[a], p1[a]
    top = kmax[a]
    pay_top = bet_pay[top]
    tail_d, class_0, class_1 = tail[top, lo:], cls_t[a0, lo:], cls_t[a1, lo:]
    bet_0, bet_1 = bet_t[a0, lo:], bet_t[a1, lo:]
    for t in range(size):
        mid[t] = (tail_d[t] - (pay_top if class_0[t] <= top else bet_0[t])
                  - (pay_top if class_1[t] <= top else bet_1[t]))
    for k in range(top):
        step = steps[k]
        if step == 0:
            continue
        mask_a = masks[k, a]
        mask_d = masks[k, lo:]
        for t in range(size):
            mid[t] += step * popcount(mask_a & mask_d[t])
    ante_0, ante_1 = ante_t[a0, lo:], ante_t[a1, lo:]
    ante_d, bet_row_d, bits_d = row_ante[lo:], row_bet[lo:], bits[lo:]
    sum_ante_a, sum_bet_a, bits_a = row_ante[a], row_bet[a], bits[a]
    _pair_sums(a, p0, p1, ante_at[a], antes)  # the across line's ante payoff with t's two cards as middle
    for t in range(size):  # each loop writes at most two arrays
        m = mid[t]
        ante_sum = sum_ante_a - antes[t] + ante_d[t] - ante_0[t] - ante_1[t]
        antes[t] = ante_sum
        base[t] = ante_sum + (z_hi * m if m > 0 else z_lo * m)
    _pair_sums(a, p0, p1, bet_at[a], bet_a)
    for t in range(size):
        bet_a[t] = sum_bet_a - bet_a[t]
        bet_d[t] = bet_row_d[t] - bet_0[t] - bet_1[t]
    for t in range(size):
        keep[t] = -1 if bits_a & bits_d[t] == 0 else 0
    return size


@inlined
def _rule_value(rule, with_best, best_bet, mid, fold):
    """A middle decision by rule (``decision_values``): bet ``rule`` (> 0), fold (0), the best of folding and
    betting (-1) or the better bet (-2); ``with_best`` the round's value with the better bet ``best_bet``.
    Written as selects, without a chain of comparisons the compiler would make a branch table of."""
    value = with_best - best_bet + rule * mid
    value = fold if rule == 0 else value
    best_or_fold = with_best if with_best > fold else fold
    value = best_or_fold if rule == -1 else value
    return with_best if rule < -1 else value


@compiled
def _by_card_rows(a, p0, off, values, out):
    """``by_card_row`` for each row of ``values`` into the same row of ``out``."""
    for c in range(values.shape[0]):
        by_card_row(a, p0, off, values[c], out[c])


def by_card_dtype(ante_pay, bet_pay, multiples):
    """The integer type of ``decision_values``' ``by_card`` accumulators: int32 where the pay table's odds keep
    every sum below 2**31, else int64 (halving the memory those loops move, results unchanged).

    The bound: a round's value summed over its 46 middle cards is ``max(fold, continue)``, with ``fold`` =
    -(2 + x + y) x 46 and ``continue`` the two antes' payoff (each at most ``A`` = max |ante_pay| per middle
    card), the across, down and middle bets' (multiples x, y, z at most ``M`` = max multiple, each line's
    payoff at most ``B`` = max |bet_pay|); so |value| <= 46 (2A + 3MB) (A, B >= 1, so this bounds ``fold``
    too). An accumulator adds values of the rounds across one pair whose down pair holds one card: at most 49
    pairs hold a card, so every partial sum is at most 49 x 46 (2A + 3MB) in magnitude."""
    largest = max(int(np.abs(ante_pay).max()), 1), max(int(np.abs(bet_pay).max()), 1), int(np.max(multiples))
    bound = 49 * N_MIDDLE * (2 * largest[0] + 3 * largest[2] * largest[1])
    return np.int32 if bound <= np.iinfo(np.int32).max else np.int64


@compiled
def decision_values(p0, p1, lines, steps, multiples, detail, by_card, xs, ys, features, middle_rules):
    """The down decision's values for every across pair, each across multiple ``x`` and down multiple ``y``,
    and the value of given strategies, in one pass over the (across pair, down pair) of one hand (``lines``:
    ``line_tables``).

    Returns ``(total, never_fold, down_outside, codes, policy)``. ``total[a, i * len(multiples) + j]``: the sum
    over the down pairs ``d`` (disjoint from ``a``) of the middle decision's value ``max(fold, continue)`` after
    betting ``multiples[i]`` across and ``multiples[j]`` down (``continue`` with the better of the smallest and
    largest middle bet), in ``SCALE3`` units summed over d; ``never_fold``: the same without the fold. When
    ``detail`` (else empty arrays): ``down_outside[i, c]``, a down outside card ``c`` seen, the sum over the
    across pairs ``a`` without c of the down decision's value knowing c after betting ``multiples[i]`` across,
    ``max(fold, max_j by_card[a, c, i * n + j])``, where ``by_card`` sums ``total``'s terms over the 47 down
    pairs that hold c (``SCALE3`` units); and ``codes``, for each pair ``a < d`` (row by row, ``d`` from a + 1),
    bit ``i * n + j`` set when the round across a, down d goes on at the middle (continuing beats folding)
    after ``multiples[i]`` and ``multiples[j]``, bit ``n * n`` when its middle bet is the largest (0 for pairs
    sharing a card): what ``kernel_account.account`` reads.

    ``policy[s, a]``: the value (``SCALE2`` units, for across pair ``a``) of strategy ``s`` that bets
    ``xs[s]`` across, ``ys[s]`` down (each one of ``multiples``; ``ys[s]`` 0 = fold), and at the middle
    ``middle_rules[s, features[a], features[d]]``
    (``z >= 1``: bet z; 0: fold; -1: the best of folding and betting; -2: the better bet, never folding), where
    ``features[pair]`` is a small code of the line that pair makes with the hand.

    ``by_card``: zeros of shape ``(len(multiples) ** 2, 50, 1225)`` when ``detail`` (else ``(.., 50, 0)``), of
    ``by_card_dtype``: the accumulators of the rounds across d, down a summed by down card.

    Each unordered pair (a, d), a < d, is visited once, in the row of ``a``: of its two rounds, across a and
    down d is summed along the row, across d and down a into arrays indexed by ``d``. ``never_fold`` is linear
    in the multiples: it is made of three sums per across pair (base, across bet, down bet).
    """
    n = p0.size
    nm = multiples.size
    combos = nm * nm
    z_lo, z_hi = multiples[0], multiples[nm - 1]
    bits = (np.int64(1) << p0) | (np.int64(1) << p1)
    off = pair_offsets(p0, p1)
    # N_k = N_{k - 1} for a repeated class: its step is added to the class below, one bit count fewer
    # (k and k - 1 lie on the same side of every kmax[a], since no line is of class k)
    repeated = repeated_classes(lines[0])
    steps = steps.copy()
    for k in range(steps.size - 1, 0, -1):
        if repeated[k]:
            steps[k - 1] += steps[k]
            steps[k] = 0
    total = np.zeros((n, combos), dtype=np.int64)
    total_col = np.zeros((combos, n), dtype=np.int64)
    linear = np.zeros((4, n), dtype=np.int64)  # [base, across bet, down bet, antes summed over d, a]
    linear_col = np.zeros((4, n), dtype=np.int64)
    card_rows = n if detail else 0  # by_card[c, card, across pair]
    codes = np.empty(n * (n - 1) // 2 if detail else 0, dtype=np.int64)  # every entry is written
    if combos + 1 > 63:
        raise ValueError("at most 7 bet multiples")
    row_start = 0
    if by_card.shape[0] != combos or by_card.shape[1] != 50 or by_card.shape[2] != card_rows:
        raise ValueError("by_card: shape (len(multiples) ** 2, 50, 1225 if detail else 0) expected")
    row_cards = np.zeros((combos, 50), dtype=np.int64)  # [c, card]: the row's part
    down_outside = np.zeros((nm if detail else 0, 50), dtype=np.int64)
    strategies = xs.size
    policy = np.zeros((strategies, n), dtype=np.int64)
    policy_col = np.zeros((strategies, n), dtype=np.int64)
    n_features = middle_rules.shape[1]
    rule_ad = np.zeros((strategies, n_features, n), dtype=np.int64)  # [s, feature of a, d]
    rule_da = np.zeros((strategies, n_features, n), dtype=np.int64)  # [s, feature of a, d]: across d, down a
    position = np.zeros((strategies, 2), dtype=np.int64)  # indexes of xs[s], ys[s] in multiples
    # a strategy that bets down and always bets at the middle: each round's value is linear in its bets
    betting = np.zeros(strategies, dtype=np.bool_)
    for s in range(strategies):
        betting[s] = ys[s] != 0 and middle_rules[s].min() > 0
    for s in range(strategies):
        for side in range(2):
            bet = xs[s] if side == 0 else ys[s]
            found = bet == 0 and side == 1
            for i in range(nm):
                if multiples[i] == bet:
                    position[s, side] = i
                    found = True
            if not found:
                raise ValueError("a strategy's bet is not one of the bet multiples")
        for f in range(n_features):
            for t in range(n):
                rule_ad[s, f, t] = middle_rules[s, f, features[t]]
                rule_da[s, f, t] = middle_rules[s, features[t], f]
    scratch = np.zeros((6, n), dtype=np.int64)
    mid, antes, base, bet_a, bet_d, keep = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4], scratch[5]
    with_d = np.zeros((nm, n), dtype=np.int64)  # [i, t]: multiples[i] x bet_d
    base_a = np.zeros((nm, n), dtype=np.int64)  # [i, t]: base + multiples[i] x bet_a
    values = np.zeros((combos, n), dtype=np.int64)  # [c, t]: the round's value, for by_card
    for a in range(n):  # the last pair has no row of its own, but its sums by card are taken there
        size = _row(a, p0, p1, bits, lines, steps, z_lo, z_hi, mid, antes, base, bet_a, bet_d, keep)
        lo = a + 1
        a0, a1 = p0[a], p1[a]
        sum_base, sum_a, sum_d = np.int64(0), np.int64(0), np.int64(0)
        col_base, col_a, col_d = linear_col[0, lo:], linear_col[1, lo:], linear_col[2, lo:]
        for t in range(size):
            k = keep[t]
            sum_base += base[t] & k
            sum_a += bet_a[t] & k
            sum_d += bet_d[t] & k
            col_base[t] += base[t] & k
            col_a[t] += bet_d[t] & k  # across pair t: its across line is the line of t
            col_d[t] += bet_a[t] & k
        linear[0, a] += sum_base
        linear[1, a] += sum_a
        linear[2, a] += sum_d
        for i in range(nm):
            x = multiples[i]
            row_with_d, row_base_a = with_d[i], base_a[i]
            for t in range(size):
                row_with_d[t] = x * bet_d[t]
                row_base_a[t] = base[t] + x * bet_a[t]
        # the round across d, down a after betting (x, y) has the value of across a, down d after (y, x)
        for i in range(nm):
            x = multiples[i]
            for j in range(nm):
                y = multiples[j]
                c = i * nm + j
                swapped = j * nm + i
                fold = -(2 + x + y) * N_MIDDLE
                sum_total = np.int64(0)
                col_total = total_col[swapped, lo:]
                across_a, down_d = base_a[i], with_d[j]
                if detail:  # one loop per pair of arrays written: the compiler vectorises each
                    row_values = values[c]
                    for t in range(size):
                        value = across_a[t] + down_d[t]
                        kept = (value if value > fold else fold) & keep[t]
                        sum_total += kept
                        col_total[t] += kept
                        row_values[t] = kept
                    col_0, col_1 = by_card[swapped, a0, lo:], by_card[swapped, a1, lo:]
                    for t in range(size):
                        col_0[t] += row_values[t]
                        col_1[t] += row_values[t]
                else:
                    for t in range(size):
                        value = across_a[t] + down_d[t]
                        kept = (value if value > fold else fold) & keep[t]
                        sum_total += kept
                        col_total[t] += kept
                total[a, c] += sum_total
        if detail:
            # the rounds across a: the part of rows before a is complete, the part of this row just made
            _by_card_rows(a, p0, off, values, row_cards)
            for i in range(nm):
                folded = -(2 + multiples[i]) * N_MIDDLE * 47
                for card in range(50):
                    best = folded
                    for j in range(nm):
                        c = i * nm + j
                        value = row_cards[c, card] + by_card[c, card, a]
                        best = value if value > best else best
                    down_outside[i, card] += 0 if card == a0 or card == a1 else best
            row_cards[:, :] = 0
            code_row = codes[row_start:row_start + size]
            row_start += size
            for t in range(size):
                code_row[t] = keep[t] & (np.int64(1) << combos) if mid[t] > 0 else 0
            for c in range(combos):
                row_values = values[c]
                fold = -(2 + multiples[c // nm] + multiples[c % nm]) * N_MIDDLE
                bit = np.int64(1) << c
                for t in range(size):
                    code_row[t] |= keep[t] & bit if row_values[t] != fold else 0
        if strategies:
            col_ante = linear_col[3, lo:]
            sum_ante = np.int64(0)
            for t in range(size):
                sum_ante += antes[t] & keep[t]
                col_ante[t] += antes[t] & keep[t]
            linear[3, a] += sum_ante
        for s in range(strategies):
            x, y = xs[s], ys[s]
            col = policy_col[s, lo:]
            acc = np.int64(0)
            if betting[s]:  # the middle bet's part here; the antes' and the bets' from the sums, at the end
                rules_ad, rules_da = rule_ad[s, features[a], lo:], rule_da[s, features[a], lo:]
                for t in range(size):
                    k = keep[t]
                    acc += (rules_ad[t] * mid[t]) & k
                    col[t] += (rules_da[t] * mid[t]) & k
                policy[s, a] += acc
                continue
            if y == 0:  # a fold at the down decision: the same loss on every round
                folded = -(2 + x) * N_MIDDLE
                for t in range(size):
                    acc += folded & keep[t]
                    col[t] += folded & keep[t]
                policy[s, a] += acc
                continue
            fold = -(2 + x + y) * N_MIDDLE
            rules_ad, rules_da = rule_ad[s, features[a], lo:], rule_da[s, features[a], lo:]
            across_a, down_d = base_a[position[s, 0]], with_d[position[s, 1]]  # across a: x on a's line
            across_d, down_a = with_d[position[s, 0]], base_a[position[s, 1]]  # across d: x on d's line
            for t in range(size):
                k = keep[t]
                best_bet = base[t] - antes[t]
                acc += _rule_value(rules_ad[t], across_a[t] + down_d[t], best_bet, mid[t], fold) & k
                col[t] += _rule_value(rules_da[t], across_d[t] + down_a[t], best_bet, mid[t], fold) & k
            policy[s, a] += acc
    never_fold = np.zeros((n, combos), dtype=np.int64)
    for a in range(n):
        sum_base = linear[0, a] + linear_col[0, a]
        sum_a = linear[1, a] + linear_col[1, a]
        sum_d = linear[2, a] + linear_col[2, a]
        for i in range(nm):
            for j in range(nm):
                c = i * nm + j
                total[a, c] += total_col[c, a]
                never_fold[a, c] = sum_base + multiples[i] * sum_a + multiples[j] * sum_d
        sum_ante = linear[3, a] + linear_col[3, a]
        for s in range(strategies):
            policy[s, a] += policy_col[s, a]
            if betting[s]:  # antes + x (across line's bet) + y (down line's bet) + z (middle), summed over d
                policy[s, a] += sum_ante + xs[s] * sum_a + ys[s] * sum_d
    return total, never_fold, down_outside, codes, policy


