"""What knowing other seats' hole cards is worth: players who share their cards (collusion; domain.md "Game
protection").

A player who knows ``2k`` cards dealt to ``k`` other seats knows they are not in the community cards. With that
knowledge it plays the best decisions over the deck left (``informed``); without it, the optimal strategy of
the par sheet (``standard``: its decisions are made over the cards it cannot see, the known ones included).
For one hand and one set of known cards both values are exact: every across pair, down pair and middle card of
the deck left, as the par sheet counts them (``controller.analysis.parsheet``: the lines' classes, payoffs and the
middle bet on the higher line, NY 9 NYCRR 5324.39(e)(9)). The worth of the knowledge is their difference,
averaged over the hands and random known cards (``worth``: each class of two-card hand with its weight, a few
sets of known cards each): never negative, and its mean carries a standard error.
The standard strategy's value averaged the same way is the par sheet's optimal value (the known cards are a
random part of the cards it cannot see): printed beside it as a check.

Values are per ante of one line (as the par sheet's: the two antes of a round are 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from math import comb

import numpy as np

from controller.analysis.parsheet import N_MIDDLE, ParSheetEngine, hole_classes


@dataclass(frozen=True)
class Worth:
    """The worth of knowing ``neighbours`` other seats' two cards, over ``hands`` random hands: the mean gain
    per ante ``gain`` (standard error ``gain_error``), the informed player's mean value ``informed`` and the
    standard strategy's mean value ``standard`` (standard error ``standard_error``), per ante."""

    neighbours: int
    hands: int
    gain: float
    gain_error: float
    informed: float
    standard: float
    standard_error: float


@dataclass(frozen=True)
class Sums:
    """Over a set of middle cards (and not in the down pair), each ``[a, d]`` (float32, exact integers):
    ``antes`` both lines' ante payoffs, ``bets`` the across line's bet payoff (``bets_t`` the down line's),
    ``middle`` the middle bet's payoff per unit on the higher line, ``z`` the best middle multiple by them and
    ``base`` the antes and the middle bet at ``z``."""

    antes: np.ndarray
    bets: np.ndarray
    bets_t: np.ndarray
    middle: np.ndarray
    z: np.ndarray
    base: np.ndarray

    def value(self, x: int, y: int) -> np.ndarray:
        """The round's value summed over the middle cards when it bets ``x``, ``y`` and ``z``, ``[a, d]``."""
        return self.base + np.float32(x) * self.bets + np.float32(y) * self.bets_t


@dataclass(frozen=True)
class Standard:
    """The standard strategy's decisions for one hand (``standard``): the lines' classes ``cls[pair, m]``, the
    ``Sums`` over every card it cannot see, and ``_down``'s ``(v2, choice_y, goes_on)`` over them."""

    rest: np.ndarray
    cls: np.ndarray
    sums: Sums
    v2: np.ndarray
    choice_y: np.ndarray
    goes_on: dict


def standard(engine: ParSheetEngine, hole: tuple[int, int]) -> Standard:
    """The par sheet's decisions for the hand ``hole`` (two card indexes), made over every card it cannot see."""
    rest, cls = engine.line_classes(hole)
    sums = _sums(engine, cls, engine.pair_valid)
    return Standard(rest, cls, sums, *_down(engine, sums, engine.disjoint_f32, N_MIDDLE, comb(48, 2)))


def hand_values(engine: ParSheetEngine, hole: tuple[int, int], known: tuple[int, ...],
                plan: Standard | None = None) -> tuple[float, float]:
    """``(informed, standard)``: the value per ante of the hand ``hole`` when the cards ``known`` (indexes, not
    in ``hole``) are out of the deck, played knowing it and played by the standard strategy (module
    docstring); ``plan``: ``standard(engine, hole)``, when already computed."""
    plan = plan or standard(engine, hole)
    live = ~np.isin(plan.rest, known)
    live_pair = live[engine.p0] & live[engine.p1]
    n_m = N_MIDDLE - len(known)
    n_d = comb(48 - len(known), 2)
    n_a = comb(50 - len(known), 2)
    scale = n_a * n_d * n_m
    left = _sums(engine, plan.cls, engine.pair_valid & live[None, :])
    mask_left = engine.disjoint_f32 * np.outer(live_pair, live_pair).astype(np.float32)
    # informed: the best decisions over the deck left
    v2, _, _ = _down(engine, left, mask_left, n_m, n_d)
    informed = max(-2.0 * scale, max(v2[i][live_pair].sum() for i in range(len(engine.multiples))))
    # standard: the par sheet's decisions (over every card it cannot see, the middle bet's z too), valued over
    # the deck left
    totals = [plan.v2[i].sum() for i in range(len(engine.multiples))]
    best = int(np.argmax(totals))
    if totals[best] <= -2.0 * comb(50, 2) * comb(48, 2) * N_MIDDLE:
        return informed / scale, -2.0
    x = engine.multiples[best]
    ys = plan.choice_y[best]  # [a]: 0 folds at the down decision
    played = Sums(left.antes, left.bets, left.bets_t, left.middle, plan.sums.z,
                  left.antes + plan.sums.z * left.middle)
    value = (-(2.0 + x) * n_m * n_d) * (live_pair & (ys == 0)).sum()
    for y in engine.multiples:
        rows = live_pair & (ys == y)
        v3 = np.where(plan.goes_on[(x, y)], played.value(x, y), np.float32(-(2 + x + y) * n_m)) * mask_left
        value += v3[rows].sum(dtype=np.float64)
    return informed / scale, value / scale


def _sums(engine: ParSheetEngine, cls: np.ndarray, valid: np.ndarray) -> Sums:
    """``Sums`` over the middle cards ``valid[a, m]``."""
    ante = np.where(valid, engine.ante[cls], 0.0)
    bet = np.where(valid, engine.bet[cls], 0.0)
    ante_sum = ante.sum(1)[:, None] - ante[:, engine.p0] - ante[:, engine.p1]
    bet_sum = bet.sum(1)[:, None] - bet[:, engine.p0] - bet[:, engine.p1]
    middle = np.zeros(ante_sum.shape, dtype=np.float32)
    for k, step in engine.middle_steps:
        below = (valid & (cls <= k)).astype(np.float32)
        middle += np.float32(step) * (below @ below.T)
    antes = (ante_sum + ante_sum.T).astype(np.float32)
    z = np.where(middle > 0, engine.multiples[-1], engine.multiples[0]).astype(np.float32)
    bets = bet_sum.astype(np.float32)
    return Sums(antes, bets, np.ascontiguousarray(bets.T), middle, z, antes + z * middle)


def _down(engine: ParSheetEngine, sums: Sums, mask: np.ndarray, n_m: int, n_d: int):
    """Backward induction from the middle decision over ``sums``: ``(v2, choice_y, goes_on)`` as in
    ``parsheet.Solution`` (``v2[i, a]`` summed over the down pairs of ``mask`` and ``n_m`` middle cards;
    ``goes_on[(x, y)][a, d]``: betting beats folding at the middle decision)."""
    n = len(engine.multiples)
    v2 = np.empty((n, len(engine.p0)))
    choice_y = np.zeros((n, len(engine.p0)), dtype=np.int64)
    goes_on = {}
    for i, x in enumerate(engine.multiples):
        best = np.full(len(engine.p0), -(2.0 + x) * n_m * n_d)
        for y in engine.multiples:
            fold3 = np.float32(-(2 + x + y) * n_m)
            cont = sums.value(x, y)
            goes_on[(x, y)] = cont > fold3
            v3 = np.where(goes_on[(x, y)], cont, fold3) * mask
            total = v3.sum(1, dtype=np.float64)
            better = total > best
            best = np.where(better, total, best)
            choice_y[i] = np.where(better, y, choice_y[i])
        v2[i] = best
    return v2, choice_y, goes_on


def sample(engine: ParSheetEngine, neighbours: tuple[int, ...], per_class: int, rng: np.random.Generator,
           classes: list[tuple[tuple[int, int], int]] | None = None) -> dict[int, list[tuple[int, np.ndarray]]]:
    """For each number of ``neighbours`` and each class of two-card hand (``parsheet.hole_classes``, or
    ``classes``): the class's weight and ``hand_values`` with ``per_class`` random sets of ``2 * k`` known
    cards, ``(per_class, 2)``; the standard strategy's decisions computed once per class."""
    rows: dict[int, list[tuple[int, np.ndarray]]] = {k: [] for k in neighbours}
    for hole, weight in classes if classes is not None else hole_classes():
        plan = standard(engine, hole)
        others = np.array([c for c in range(52) if c not in hole])
        for k in neighbours:
            values = [hand_values(engine, hole, tuple(int(c) for c in rng.choice(others, 2 * k, replace=False)), plan)
                      for _ in range(per_class)]
            rows[k].append((weight, np.array(values)))
    return rows


def worth(neighbours: int, rows: list[tuple[int, np.ndarray]]) -> Worth:
    """The worth of knowing ``neighbours`` other seats' two cards each from ``sample``'s rows (of every class):
    each class weighted by its hands (a stratified mean; its standard error from the spread within each class).
    Raises ``ValueError`` with fewer than 2 samples in a class."""
    per_class = min(len(v) for _, v in rows)
    if per_class < 2:
        raise ValueError("at least 2 sets of known cards per class are needed for a standard error")
    weights = np.array([w for w, _ in rows], dtype=np.float64)
    weights /= weights.sum()

    def stratified(per_hand: np.ndarray) -> tuple[float, float]:
        """The weighted mean over classes of ``per_hand[class, sample]`` and its standard error."""
        return (float(weights @ per_hand.mean(1)),
                float(math.sqrt((weights ** 2 * per_hand.var(1, ddof=1)).sum() / per_class)))

    values = np.stack([v[:per_class] for _, v in rows])  # [class, sample, (informed, standard)]
    gain, gain_error = stratified(values[..., 0] - values[..., 1])
    informed, _ = stratified(values[..., 0])
    standard, standard_error = stratified(values[..., 1])
    return Worth(neighbours, len(rows) * per_class, gain, gain_error, informed, standard, standard_error)
