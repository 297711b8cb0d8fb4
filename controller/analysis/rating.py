"""A seat's theoretical win for one round, exact: the value of the play it made, from the par sheet's values.

For one seat and round (NY 9 NYCRR 5324.39(e)(3)-(9): two cards, the across, down and middle decisions, each
fold or a bet of one of the allowed multiples of the ante), the player's expected result of the play that
happened, per unit of each ante, is

    V1* - sum over the decisions made of (value of the best option - value of the option taken)

where each value is the expected result with exactly the information the player had at that decision (its
two cards, then also the across outside cards, then also the down outside cards) and optimal play after it.
``V1*`` is the optimal strategy's value of the two cards. By the performance-difference identity its expectation
over deals is the expected value of the strategy actually played, whatever that strategy is, so the sum over a
session estimates the house's expected win without bias, with far less spread than the actual results: the
cards' luck after each decision is averaged out.

The values are the par sheet's (``controller.analysis.parsheet``, ``kernel.decision_values``): for each class of
two-card hand, ``total[a, i * n + j]``, the value (x ``SCALE2``) of betting the ``i``-th multiple across and the
``j``-th down once the across outside pair ``a`` is seen, optimal middle decision after; the across options'
values are their sums over the 1,225 across pairs (x ``SCALE1``); the middle options' are summed over the 46
unseen middle cards (x ``SCALE3``). Every value is an exact integer over its scale, so every figure here is an
exact ``Fraction``. A class's table costs one pass of the compiled loops (a few tens of milliseconds once
numba's code is loaded) and is kept for the process (169 classes, about 80 KB each).

The five-card bonus is decided before any card and never folded: its theoretical win is its amount times the
bonus pay table's exact house edge over all 2,598,960 boards (``parsheet_totals.bonus_return``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from controller.analysis import simplified
from controller.analysis.classes import classify
from controller.analysis.parsheet import N_MIDDLE, N_PAIRS, SCALE1, SCALE2, ParSheetEngine, _kernel, payoffs
from controller.analysis.parsheet_totals import bonus_return
from controller.analysis.protect_tables import CLASSES, REPS, _lookups, pair_index
from controller.game.cards import DECK
from controller.game.paytable import Jurisdiction

INDEX = {card: i for i, card in enumerate(DECK)}
#: The decisions in the order they are made (NY 9 NYCRR 5324.39(e)(3),(5),(7)).
DECISIONS = ("across", "down", "middle")


class RatingError(ValueError):
    """A seat's round that cannot be valued: unequal antes, a bet that is not an allowed multiple of the ante,
    decisions out of order, or cards missing or repeated. The message names the round, seat and what is wrong."""


@dataclass(frozen=True)
class SeatTheo:
    """One seat's round, valued. ``optimal``: the optimal strategy's expected result of the seat's two cards per
    unit of each ante (``V1*``); ``costs``: for each decision made, in order, the best option's value minus the
    value of the option taken, per ante (0 for an optimal decision, never negative); ``value``: ``optimal`` minus
    the costs, the expected result of the play made per ante; ``house``: the house's theoretical win in minor
    units (``-value`` times the ante, plus the five-card bonus times its house edge)."""

    optimal: Fraction
    costs: tuple[tuple[str, Fraction], ...]
    value: Fraction
    house: Fraction


class DecisionValues:
    """The exact value of every option at every decision for ``jurisdiction``'s pay tables (module docstring).
    ``theo`` values one seat's round; the tables of a class of two-card hand are built when first needed."""

    def __init__(self, jurisdiction: Jurisdiction) -> None:
        self.jurisdiction = jurisdiction
        self.multiples = tuple(jurisdiction.bet_multiples)
        self.ante_pay = payoffs(jurisdiction.ante).astype(np.int64)
        self.bet_pay = payoffs(jurisdiction.bet).astype(np.int64)
        net, _ = bonus_return(jurisdiction)
        #: the house's expected win per unit of five-card bonus (the bonus pay table's edge)
        self.bonus_edge = -net
        #: every theoretical win in minor units is a whole number of 1 / ``denominator`` (``scaled``)
        self.denominator = math.lcm(SCALE1, self.bonus_edge.denominator)
        self._engine: ParSheetEngine | None = None
        self._totals: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.class_of, self.perm_of = _lookups()

    def scaled(self, amount: Fraction) -> int:
        """``amount`` (a theoretical win, ``SeatTheo.house``) times ``denominator``: a whole number, so that sums
        of many are integer sums. Raises ``AssertionError`` if it is not whole (a defect)."""
        scaled = amount * self.denominator
        if scaled.denominator != 1:
            raise AssertionError(f"{amount} is not a whole number of 1/{self.denominator}")
        return int(scaled)

    def totals(self, class_index: int, never_fold: bool = False) -> np.ndarray:
        """``total[a, i * n + j]`` of the class (``hole_classes`` order) as int64, x ``SCALE2`` (module docstring);
        with ``never_fold``, the same for play that never folds at the middle (``kernel.decision_values``)."""
        found = self._totals.get(class_index)
        if found is None:
            if self._engine is None:
                self._engine = ParSheetEngine(self.jurisdiction)
            engine = self._engine
            _, lines = engine.tables(CLASSES[class_index])
            n = len(self.multiples)
            empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(N_PAIRS, dtype=np.int64),
                     np.zeros((0, 1, 1), dtype=np.int64))
            by_card = np.zeros((n * n, 50, 0), dtype=engine.by_card_dtype)
            total, never, *_ = _kernel().decision_values(engine.p0, engine.p1, lines, engine.steps,
                                                         np.array(self.multiples, dtype=np.int64), False, by_card,
                                                         *empty)
            found = tuple(_whole(array, class_index) for array in (total, never))
            self._totals[class_index] = found
        return found[1 if never_fold else 0]

    def across_values(self, class_index: int) -> dict[int, Fraction]:
        """The across options' values per ante, ``{0 (fold): -2, multiple: value}`` (optimal play after)."""
        total = self.totals(class_index)
        n = len(self.multiples)
        values = {0: Fraction(-2)}
        for i, x in enumerate(self.multiples):
            best = np.maximum(total[:, i * n:(i + 1) * n].max(1), -(2 + x) * SCALE2)
            values[x] = Fraction(int(best.sum()), SCALE1)
        return values

    def down_values(self, class_index: int, pair: int, x: int) -> dict[int, Fraction]:
        """The down options' values per ante after betting ``x`` across with the across pair ``pair`` seen (its
        index among the pairs of the 50 cards left of the class's representative hand)."""
        total = self.totals(class_index)
        n = len(self.multiples)
        i = self.multiples.index(x)
        values = {0: Fraction(-(2 + x))}
        for j, y in enumerate(self.multiples):
            values[y] = Fraction(int(total[pair, i * n + j]), SCALE2)
        return values

    def middle_values(self, hole: Sequence[int], across: Sequence[int], down: Sequence[int], x: int,
                      y: int) -> dict[int, Fraction]:
        """The middle options' values per ante with the hand and the four outside cards known, after ``x``
        across and ``y`` down: each summed over the 46 unseen middle cards (the middle bet on the higher line,
        NY 9 NYCRR 5324.39(e)(9)(ii))."""
        seen = {*hole, *across, *down}
        middles = np.array([c for c in range(52) if c not in seen], dtype=np.int64)
        wheel = self.jurisdiction.wheel
        k_a = classify(np.column_stack([np.tile(np.array([*hole, *across]), (len(middles), 1)), middles]), wheel)
        k_d = classify(np.column_stack([np.tile(np.array([*hole, *down]), (len(middles), 1)), middles]), wheel)
        base = int((self.ante_pay[k_a] + self.ante_pay[k_d] + x * self.bet_pay[k_a] + y * self.bet_pay[k_d]).sum())
        top = int(self.bet_pay[np.maximum(k_a, k_d)].sum())
        values = {0: Fraction(-(2 + x + y))}
        for z in self.multiples:
            values[z] = Fraction(base + z * top, N_MIDDLE)
        return values

    def locate(self, hole: Sequence[int], pair: Sequence[int]) -> tuple[int, int]:
        """The class index of ``hole`` and the index of the across ``pair`` among its representative's pairs."""
        c1, c2 = hole
        cid = int(self.class_of[c1, c2])
        perm = self.perm_of[c1, c2]
        rep = REPS[cid]
        index = []
        for card in pair:
            mapped = int(perm[card // 13]) * 13 + card % 13
            index.append(mapped - int(rep[0] < mapped) - int(rep[1] < mapped))
        return cid, int(pair_index(np.int64(index[0]), np.int64(index[1])))

    def theo(self, hole: Sequence[str], cross: Sequence[str], wagers: dict[str, int],
             decisions: Sequence[tuple[str, str, int]], where: str = "") -> SeatTheo:
        """Value one seat's round: ``hole`` its two cards, ``cross`` the five community cards in lay-out order
        (across, across, down, down, middle), ``wagers`` the wagers locked at "no more bets" (minor units:
        ``ante_across``, ``ante_down``, ``five_card_bonus``), ``decisions`` the seat's ``(decision, action,
        amount)`` in order (``action`` ``bet`` or ``fold``). ``where`` names the round and seat in errors.
        Raises ``RatingError``."""
        ante = wagers.get("ante_across", 0)
        if ante != wagers.get("ante_down", 0):
            raise RatingError(f"{where}: ante across {ante} and ante down {wagers.get('ante_down', 0)} differ")
        bonus = Fraction(wagers.get("five_card_bonus", 0)) * self.bonus_edge
        if not ante:
            if decisions:
                raise RatingError(f"{where}: decisions without antes")
            return SeatTheo(Fraction(0), (), Fraction(0), bonus)
        cards = [INDEX.get(c, -1) for c in (*hole, *cross)]
        if len(hole) != 2 or len(cross) != 5 or -1 in cards or len(set(cards)) != 7:
            raise RatingError(f"{where}: cards {list(hole)} and cross {list(cross)} are not seven distinct cards")
        h, a, d = cards[0:2], cards[2:4], cards[4:6]
        cid, pair = self.locate(h, a)
        taken: list[int] = []
        costs: list[tuple[str, Fraction]] = []
        optimal = None
        for step, (decision, action, amount) in zip(DECISIONS, decisions):
            if decision != step:
                raise RatingError(f"{where}: decision {decision!r} where {step!r} was due")
            if action == "fold":
                multiple = 0
            elif action == "bet" and amount % ante == 0 and amount // ante in self.multiples:
                multiple = amount // ante
            else:
                raise RatingError(f"{where}: {decision} {action} {amount} is not a fold or an allowed bet "
                                  f"({', '.join(f'{m}x' for m in self.multiples)} of the ante {ante})")
            if step == "across":
                options = self.across_values(cid)
            elif step == "down":
                options = self.down_values(cid, pair, taken[0])
            else:
                options = self.middle_values(h, a, d, taken[0], taken[1])
            best = max(options.values())
            if optimal is None:
                optimal = best
            costs.append((step, best - options[multiple]))
            taken.append(multiple)
            if multiple == 0:
                break
        if len(decisions) > len(costs):
            raise RatingError(f"{where}: a decision after a fold")
        if optimal is None:
            optimal = max(self.across_values(cid).values())
        value = optimal - sum((cost for _, cost in costs), Fraction(0))
        return SeatTheo(optimal, tuple(costs), value, -value * ante + bonus)

    def play(self, name: str, step: str, hole: Sequence[int], across: Sequence[int], down: Sequence[int], x: int,
             y: int) -> int:
        """The decision of strategy ``name`` at ``step`` (the bet's multiple, 0 = fold) for card indexes ``hole``,
        ``across`` and ``down`` (each read only once turned), after ``x`` across and ``y`` down: ``optimal``
        (these values: fold only when strictly better, else the smallest best bet, as the par sheet breaks ties)
        or one of ``controller.analysis.simplified.STRATEGIES`` as the par sheet values them (its rules,
        ``simplified.strategy_arrays``; ``never_fold`` the best play that never folds, from these values)."""
        cid, pair = self.locate(hole, across)
        if name == "optimal":
            options = {"across": lambda: self.across_values(cid), "down": lambda: self.down_values(cid, pair, x),
                       "middle": lambda: self.middle_values(hole, across, down, x, y)}[step]()
            return _chosen(options)
        if name == "never_fold":
            never = self.totals(cid, never_fold=True)
            n = len(self.multiples)
            if step == "across":
                sums = [int(never[:, i * n:(i + 1) * n].max(1).sum()) for i in range(n)]
                return self.multiples[sums.index(max(sums))]
            if step == "down":
                row = [int(v) for v in never[pair, self.multiples.index(x) * n:(self.multiples.index(x) + 1) * n]]
                return self.multiples[row.index(max(row))]
            options = self.middle_values(hole, across, down, x, y)
            return _chosen({z: v for z, v in options.items() if z})
        names, folded, (xs, ys, _, middle) = simplified.strategy_arrays(tuple(hole), np.zeros(0, np.int64),
                                                                        self.multiples)
        if name not in names and name not in folded:
            raise ValueError(f"unknown strategy {name!r}: expected optimal or one of "
                             f"{', '.join(simplified.STRATEGIES)}")
        if name in folded:
            return 0
        k = names.index(name)
        if step == "across":
            return int(xs[k])
        if step == "down":
            return int(ys[k])
        lines = [simplified.line_features(tuple(hole), np.array(cards), np.array([0]), np.array([1]))[0]
                 for cards in (across, down)]
        return int(middle[k, lines[0], lines[1]])

    def house_edge(self, progress: Callable[[int, int], None] | None = None) -> Fraction:
        """The optimal strategy's house edge as a fraction of the two antes (the par sheet's), from every class:
        ``-sum(weight x V1*) / 1,326 / 2``. Builds every class's table (a few seconds the first time)."""
        from controller.analysis.parsheet import hole_classes

        total = Fraction(0)
        for index, (_, weight) in enumerate(hole_classes()):
            total += weight * max(self.across_values(index).values())
            if progress is not None:
                progress(index + 1, len(CLASSES))
        return -total / 1326 / 2


def _chosen(options: dict[int, Fraction]) -> int:
    """The par sheet's choice among ``options`` (multiple -> value, 0 = fold): fold only when strictly better
    than every bet, else the smallest of the equally best bets."""
    best = max(v for m, v in options.items() if m)
    if options.get(0, best) > best:
        return 0
    return min(m for m, v in options.items() if m and v == best)


def _whole(array: np.ndarray, class_index: int) -> np.ndarray:
    """``array`` as int64, checked to hold whole numbers only (the par sheet's sums are of integers)."""
    whole = np.rint(np.asarray(array, dtype=np.float64)).astype(np.int64)
    if not np.array_equal(whole, array):
        raise AssertionError(f"class {class_index}: the par sheet's values are not whole numbers")
    return whole
