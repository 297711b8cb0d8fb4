"""The par sheet: the exact expected value of Criss-Cross Poker under the strategy that maximises it.

The game as the player sees it (NY 9 NYCRR 5324.39(e); PA 58 Pa. Code 674a.11): two cards, then the across
decision (fold, or bet 1x-3x the ante), the two outside across cards turned, the down decision, the two outside
down cards turned, the middle decision, the middle card turned, settlement (``controller.game.settlement``). Folding
forfeits every wager made so far. Values are per unit of each ante (the player stakes two antes).

Exact enumeration, by backward induction over every deal: for each of the 1,326 two-card hands (grouped into
169 classes by exact suit symmetry, with weights 6, 4 and 12), every pair ``a`` of outside across cards, every
pair ``d`` of outside down cards and every middle card ``m``. A line's hand is looked up once per (hole cards,
pair, middle card) in ``classes.class_table``; the across and down lines are combined with array operations:
sums over ``m`` of one line's payoffs are row sums, and the middle bet, which pays on the higher-ranking hand,
is summed over ``m`` as ``sum_k (h(k) - h(k+1)) N_k`` where ``N_k[a, d]`` counts the middle cards for which
both lines are of class <= k (``solve``: a matrix product; ``analyse``: bit counts in the compiled loops of
``controller.analysis.kernel``). All sums are of integers, exact in float64 or int64; the results are exact
rationals with denominator 1326 x 1225 x 1128 x 46 (printed as fractions and as decimals).

Ties are broken the same way everywhere: fold only when folding is strictly better; among bets of equal value,
the smallest. This module analyses one hand (``ParSheetEngine``); ``parsheet_totals`` adds every hand up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from types import ModuleType

import numpy as np

from controller.analysis import simplified
from controller.analysis.classes import BINOMIAL, CLASS_NAMES, N_CLASSES, class_table
from controller.game.paytable import MAX_ODDS, PAY_HANDS, Jurisdiction, PayTable

N_PAIRS = 1225  # pairs of the 50 cards left after the hole cards
N_DOWN = 1128  # pairs of the 48 cards left after the hole cards and an across pair
N_MIDDLE = 46  # cards left for the middle
SCALE3 = N_MIDDLE
SCALE2 = N_MIDDLE * N_DOWN
SCALE1 = N_MIDDLE * N_DOWN * N_PAIRS
STEPS = ("across", "down", "middle")


def _kernel() -> ModuleType:
    """``controller.analysis.kernel``, imported when first needed: importing numba costs a third of a second of
    CPU, which a process that only reads the strategy file or the payoffs (a simulated table) need not pay."""
    from controller.analysis import kernel

    return kernel


def _accounting() -> ModuleType:
    """``controller.analysis.kernel_account``, imported when first needed, as ``_kernel`` is."""
    from controller.analysis import kernel_account

    return kernel_account


def payoffs(table: PayTable) -> np.ndarray:
    """Net result per unit staked for each pay class: -1 below a pair of 6s, 0 for a push, N for N to 1."""
    out = [-1]
    for hand in PAY_HANDS:
        odds = table.pays[hand]
        out.append(0 if odds == "push" else int(odds))
    return np.array(out, dtype=np.float64)


def check_middle_rule(bet: np.ndarray) -> None:
    """The middle bet pays the odds of the higher-ranking winning hand (NY 5324.39(e)(9)(ii)); it equals the
    bet payoff of the higher class of the two lines when no push ranks above a win. Raises ``ValueError``
    for a table where one does (the par sheet cannot use the shortcut there), or for odds above
    ``controller.game.paytable.MAX_ODDS`` (every sum stays an integer below 2**53 in float64 up to them; a loaded
    pay table never exceeds them, a ``PayTable`` built in code might)."""
    if bet.max() > MAX_ODDS:
        raise ValueError(f"odds above {MAX_ODDS:,} to 1 are beyond the exact arithmetic of the par sheet")
    wins = bet > 0
    if any(wins[i] and bet[j] == 0 for i in range(N_CLASSES) for j in range(i + 1, N_CLASSES)):
        raise ValueError("the par sheet needs a bet pay table whose pushes all rank below its wins")


def hole_classes() -> list[tuple[tuple[int, int], int]]:
    """The 169 classes of two-card hands up to suit symmetry, as (representative cards, number of hands)."""
    out = []
    for hi in range(12, -1, -1):
        for lo in range(hi, -1, -1):
            if hi == lo:
                out.append(((hi, 13 + lo), 6))  # a pair: two suits
            else:
                out.append(((hi, lo), 4))  # suited
                out.append(((hi, 13 + lo), 12))  # offsuit
    return out


@dataclass
class HoleAnalysis:
    """The exact analysis of one two-card hand. Values are integers scaled by ``SCALE1`` (per ante).

    ``value``: the expected value under the optimal strategy x SCALE1. ``across``: the best across decision
    (0 = fold, else the multiple). ``decisions[step][choice]``: probability mass of each choice at each step
    x SCALE1 (choice 0 = fold; mass of rounds that did not reach the step is not counted). ``wager``: expected
    total amount wagered x SCALE1 (antes included). ``returns[(wager, class)]``: contribution to the value by
    wager (``fold``, ``ante``, ``across``, ``down``, ``middle``) and class (for ``fold``: the step), with
    ``mass[(wager, class)]`` the probability mass x SCALE1 (for ``ante``, both lines of a round counted).
    ``seen``: the value when one community card is seen before the first decision, by which card
    (``middle``, ``across_outside``, ``down_outside``) x SCALE1. ``strategies``: the value of each strategy of
    ``controller.analysis.simplified.STRATEGIES`` x SCALE1. ``bet_weight[class]``: the across, down and middle
    bets' multiples summed over the rounds (and middle cards) settling them on that class, x SCALE1: at a
    fixed strategy the value grows by it for each unit added to the class's odds.
    ``v2``: for each across multiple x, the value of each across pair after betting x (x SCALE2), array of
    shape (len(multiples), N_PAIRS).
    """

    value: float
    across: int
    decisions: dict[str, dict[int, float]]
    wager: float
    returns: dict[tuple[str, object], float]
    mass: dict[tuple[str, object], float]
    seen: dict[str, float] = field(default_factory=dict)
    strategies: dict[str, float] = field(default_factory=dict)
    bet_weight: dict[str, int] = field(default_factory=dict)


@dataclass
class Solution:
    """Intermediate arrays of one hand's backward induction (pairs index the 50 cards left, in order).

    ``cls[pair, m]``: class of the line (hole + pair + middle card m). ``v2[i, a]``: value after betting the
    i-th multiple at the across decision, for across pair a (x SCALE2). ``choice_y[i, a]``: the best down
    decision then (0 = fold). ``per_xy[(x, y)]``: ``(v3, goes_on)``, the middle decision's value for each
    (a, d) (x SCALE3, 0 where d meets a) and whether betting beats folding. ``z_best[a, d]``: the best middle
    multiple when betting.
    """

    cls: np.ndarray
    ante: np.ndarray
    bet: np.ndarray
    below: list
    n_le: list
    z_best: np.ndarray
    v2: np.ndarray
    choice_y: np.ndarray
    per_xy: dict
    multiples: tuple[int, ...]

    def across(self) -> tuple[float, int]:
        """The value of the hand (x SCALE1) and the best across decision (0 = fold, else the multiple)."""
        return best_across(self.v2, self.multiples)


class ParSheetEngine:
    """Arrays shared by every hand: pay classes, payoffs and the pair layout of the 50 remaining cards."""

    def __init__(self, jurisdiction: Jurisdiction) -> None:
        self.jurisdiction = jurisdiction
        self.classes = class_table(jurisdiction.wheel)
        self.ante = payoffs(jurisdiction.ante)
        self.bet = payoffs(jurisdiction.bet)
        check_middle_rule(self.bet)
        self.multiples = tuple(jurisdiction.bet_multiples)
        self.multiple_array = np.array(self.multiples, dtype=np.int64)
        # the smallest and largest multiples: the only bets the optimal strategy makes (``extreme_multiples``)
        self.extremes = extreme_multiples(self.multiples)
        self.ante_pay, self.bet_pay = self.ante.astype(np.int64), self.bet.astype(np.int64)
        self.by_card_dtype = _kernel().by_card_dtype(self.ante_pay, self.bet_pay, self.multiple_array)
        # the middle bet's payoff by class steps: h(k) - h(k + 1), with h(11) = 0 (kernel module docstring)
        self.steps = self.bet_pay - np.append(self.bet_pay[1:], 0)
        pairs = np.array(list(combinations(range(50), 2)), dtype=np.int64)
        self.p0, self.p1 = pairs[:, 0], pairs[:, 1]
        self.disjoint = ((self.p0[:, None] != self.p0[None, :]) & (self.p0[:, None] != self.p1[None, :])
                         & (self.p1[:, None] != self.p0[None, :]) & (self.p1[:, None] != self.p1[None, :]))
        self.disjoint_f32 = self.disjoint.astype(np.float32)
        self.pair_valid = (np.arange(50)[None, :] != self.p0[:, None]) & (np.arange(50)[None, :] != self.p1[:, None])
        incidence = np.zeros((N_PAIRS, 50), dtype=np.float32)
        incidence[np.arange(N_PAIRS), self.p0] = 1
        incidence[np.arange(N_PAIRS), self.p1] = 1
        self.incidence = incidence
        # middle bet summed over m: sum_k (h(k) - h(k+1)) N_k, only where h changes
        h = np.append(self.bet, 0.0)
        self.middle_steps = [(k, h[k] - h[k + 1]) for k in range(N_CLASSES) if h[k] != h[k + 1]]

    def line_classes(self, hole: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """Remaining cards (50) and the class of each line ``[pair, middle]`` (uint8; invalid entries are 0)."""
        rest = np.array([c for c in range(52) if c not in hole], dtype=np.int64)
        return rest, _kernel().line_classes(np.array(hole, dtype=np.int64), rest, self.p0, self.p1, self.classes,
                                         BINOMIAL)

    def solve(self, hole: tuple[int, int]) -> "Solution":
        """The down and middle decisions' values for the hand ``hole`` (two card indexes), with every intermediate
        array (NumPy, about 200 MB): see ``Solution``. ``policy`` and ``analyse`` compute the same decisions
        and values with the compiled loops of ``controller.analysis.kernel``, without keeping the arrays."""
        _, cls = self.line_classes(hole)
        valid = self.pair_valid
        ante = np.where(valid, self.ante[cls], 0.0)
        bet = np.where(valid, self.bet[cls], 0.0)
        # sums over the middle card m (not in a or d) of each line's ante and bet payoff: [a, d]
        ante_sum = ante.sum(1)[:, None] - ante[:, self.p0] - ante[:, self.p1]
        bet_sum = bet.sum(1)[:, None] - bet[:, self.p0] - bet[:, self.p1]
        # float32 holds every integer here exactly (|values| < 2**24); sums over d are taken in float64
        below = [(valid & (cls <= k)).astype(np.float32) for k in range(N_CLASSES)]
        n_le = [b @ b.T for b in below]  # N_k[a, d]: middle cards with both lines of class <= k
        middle_sum = sum(step * n_le[k] for k, step in self.middle_steps)
        z_lo, z_hi = self.multiples[0], self.multiples[-1]
        z_best = np.where(middle_sum > 0, z_hi, z_lo)
        base = (ante_sum + ante_sum.T).astype(np.float32) + np.maximum(z_lo * middle_sum, z_hi * middle_sum)
        across_bet = bet_sum.astype(np.float32)
        down_bet = np.ascontiguousarray(bet_sum.T, dtype=np.float32)
        v2 = np.empty((len(self.multiples), N_PAIRS))
        choice_y = np.empty((len(self.multiples), N_PAIRS), dtype=np.int64)
        per_xy = {}
        for i, x in enumerate(self.multiples):
            best = np.full(N_PAIRS, -(2 + x) * SCALE2, dtype=np.float64)
            choice = np.zeros(N_PAIRS, dtype=np.int64)
            with_x = base + np.float32(x) * across_bet
            for y in self.multiples:
                cont = with_x + np.float32(y) * down_bet
                fold3 = np.float32(-(2 + x + y) * SCALE3)
                v3 = np.maximum(cont, fold3)
                v3 *= self.disjoint_f32
                total = v3.sum(1, dtype=np.float64)
                better = total > best
                best = np.where(better, total, best)
                choice = np.where(better, y, choice)
                per_xy[(x, y)] = (v3, cont > fold3)
            v2[i], choice_y[i] = best, choice
        return Solution(cls, ante, bet, below, n_le, z_best, v2, choice_y, per_xy, self.multiples)

    def tables(self, hole: tuple[int, int]) -> tuple[np.ndarray, tuple]:
        """The line classes of ``hole`` and the per-pair arrays of the compiled loops (``kernel.line_tables``)."""
        _, cls = self.line_classes(hole)
        return cls, _kernel().line_tables(cls, self.pair_valid, self.ante_pay, self.bet_pay)

    def down_values(self, lines: tuple, detail: bool = False, strategies: tuple | None = None,
                    multiples: tuple[int, ...] | None = None):
        """One pass of ``kernel.decision_values``: ``(v2, choice_y, (down_outside, codes), never_fold, policy)``
        with ``v2`` and ``choice_y`` as in ``Solution``, ``down_outside`` the values with a down outside card
        seen and ``codes`` the decisions of each round (with ``detail``; see there), ``never_fold`` the
        ``(v2, choice_y)`` of the best play that never folds, and ``policy`` the values of ``strategies``
        (``(xs, ys, features, middle_rules)``, see there). ``multiples``: the across and down bets valued
        (default: every allowed multiple; ``v2`` and ``choice_y`` have a row for each)."""
        multiples = self.multiples if multiples is None else multiples
        if strategies is None:
            strategies = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                          np.zeros(N_PAIRS, dtype=np.int64), np.zeros((0, 1, 1), dtype=np.int64))
        by_card = np.zeros((len(multiples) ** 2, 50, N_PAIRS if detail else 0), dtype=self.by_card_dtype)
        total, never_fold, down_outside, codes, policy = _kernel().decision_values(
            self.p0, self.p1, lines, self.steps, np.array(multiples, dtype=np.int64), detail, by_card, *strategies)
        return (*self._best_down(total, True, multiples), (down_outside, codes),
                self._best_down(never_fold, False, multiples), policy)

    @staticmethod
    def _best_down(total: np.ndarray, allow_fold: bool,
                   multiples: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        n = len(multiples)
        v2 = np.empty((n, N_PAIRS))
        choice_y = np.empty((n, N_PAIRS), dtype=np.int64)
        for i, x in enumerate(multiples):
            best = np.full(N_PAIRS, -(2 + x) * SCALE2 if allow_fold else -np.inf, dtype=np.float64)
            choice = np.zeros(N_PAIRS, dtype=np.int64)
            for j, y in enumerate(multiples):
                total_y = total[:, i * n + j].astype(np.float64)
                better = total_y > best
                best = np.where(better, total_y, best)
                choice = np.where(better, y, choice)
            v2[i], choice_y[i] = best, choice
        return v2, choice_y

    def policy(self, hole: tuple[int, int]) -> tuple[int, np.ndarray]:
        """The best across decision (0 = fold, else the multiple) and ``choice_y`` (as in ``Solution``) for the
        hand ``hole``: the decisions of ``solve``, from the compiled loops."""
        _, lines = self.tables(hole)
        v2, choice_y, *_ = self.down_values(lines)
        return best_across(v2, self.multiples)[1], choice_y

    def analyse(self, hole: tuple[int, int]) -> HoleAnalysis:
        """Backward induction over every deal to the hand ``hole`` (two card indexes), by the compiled loops of
        ``controller.analysis.kernel``."""
        cls, lines = self.tables(hole)
        v2, choice_y, (down_outside, codes), never_fold, policy = self.down_values(
            lines, detail=True, strategies=self._strategies(hole), multiples=self.extremes)
        value, across = best_across(v2, self.extremes)
        result = HoleAnalysis(value, across, {s: {} for s in STEPS}, 0.0, {}, {})
        self._account(result, lines, codes, choice_y)
        result.seen = self._seen(cls, v2, down_outside)
        by_pair = self._strategy_values(hole, never_fold, policy)
        result.strategies = {name: float(v.sum()) for name, v in by_pair.items()}
        return result

    def _strategies(self, hole: tuple[int, int]) -> tuple:
        """The strategies of ``simplified.strategy_arrays`` for ``kernel.decision_values``, each distinct one
        once (``distinct_strategies``)."""
        rest = np.array([c for c in range(52) if c not in hole], dtype=np.int64)
        xs, ys, features, middle = simplified.strategy_arrays(
            hole, simplified.line_features(hole, rest, self.p0, self.p1), self.multiples)[2]
        keep, _ = distinct_strategies(xs, ys, middle)
        return xs[keep], ys[keep], features, middle[keep]

    def _strategy_values(self, hole, never_fold, policy) -> dict[str, np.ndarray]:
        names, folded, (xs, ys, _, middle) = simplified.strategy_arrays(hole, np.zeros(0, dtype=np.int64),
                                                                        self.multiples)
        policy = policy[distinct_strategies(xs, ys, middle)[1]]  # a row for each name
        v2_never = never_fold[0]
        values = {"never_fold": v2_never[v2_never.sum(1).argmax()]} | dict(zip(names, policy.astype(np.float64)))
        values |= {name: np.full(N_PAIRS, -2.0 * SCALE2) for name in folded}
        return {name: values[name] for name in simplified.STRATEGIES}

    def strategy_values(self, hole: tuple[int, int]) -> dict[str, np.ndarray]:
        """The value of each strategy of ``controller.analysis.simplified.STRATEGIES`` for the hand ``hole``, by
        across pair (x SCALE2; ``never_fold`` at its best across multiple)."""
        _, lines = self.tables(hole)
        _, _, _, never_fold, policy = self.down_values(lines, strategies=self._strategies(hole))
        return self._strategy_values(hole, never_fold, policy)

    def _account(self, result: HoleAnalysis, lines: tuple, codes: np.ndarray, choice_y: np.ndarray) -> None:
        """Decision frequencies, the average wager and the return table of the optimal strategy (``codes`` and
        ``choice_y`` of ``down_values`` over ``self.extremes``)."""
        multiples = self.extremes
        add = lambda table, key, amount: table.__setitem__(key, table.get(key, 0.0) + amount)  # noqa: E731
        x = result.across
        dec = result.decisions
        if x == 0:
            dec["across"][0] = float(SCALE1)
            result.wager = 2.0 * SCALE1
            add(result.returns, ("fold", "across"), -2.0 * SCALE1)
            add(result.mass, ("fold", "across"), float(SCALE1))
            return
        dec["across"][x] = float(SCALE1)
        y_of_a = choice_y[multiples.index(x)]
        per_a = float(SCALE1 // N_PAIRS)  # mass of one across pair; one down pair: N_MIDDLE; one middle card: 1
        folded_down = float((y_of_a == 0).sum())
        dec["down"][0] = folded_down * per_a
        add(result.returns, ("fold", "down"), -(2 + x) * folded_down * per_a)
        add(result.mass, ("fold", "down"), folded_down * per_a)
        folds, bets, across_by_class, down_by_class, middle_mass, middle_z = _accounting().account(
            self.p0, self.p1, lines, codes, np.array(multiples, dtype=np.int64), x, y_of_a)
        wager = 2.0 * SCALE1 + x * SCALE1
        played = [j for j, y in enumerate(multiples) if (y_of_a == y).any()]
        for j in played:
            y = multiples[j]
            dec["down"][y] = float((y_of_a == y).sum()) * per_a
            wager += y * float((y_of_a == y).sum()) * per_a
        if played:
            dec["middle"][0] = float(folds.sum()) * N_MIDDLE
            add(result.mass, ("fold", "middle"), float(folds.sum()) * N_MIDDLE)
            add(result.returns, ("fold", "middle"),
                float(sum(-(2 + x + multiples[j]) * folds[j] for j in played)) * N_MIDDLE)
            for z in (multiples[0], multiples[-1]):
                dec["middle"][z] = float(bets[z]) * N_MIDDLE
                wager += z * float(bets[z]) * N_MIDDLE
        result.wager = wager
        if not played:
            return
        for k in range(N_CLASSES):
            name = CLASS_NAMES[k]
            across_mass = int(across_by_class[k])
            down_by_y = [int(down_by_class[j, k]) for j in range(len(multiples))]
            down_mass = sum(down_by_y)
            add(result.mass, ("ante", name), float(across_mass + down_mass))
            add(result.returns, ("ante", name), float((across_mass + down_mass) * self.ante_pay[k]))
            add(result.mass, ("across", name), float(across_mass))
            add(result.returns, ("across", name), float(x * across_mass * self.bet_pay[k]))
            add(result.mass, ("down", name), float(down_mass))
            add(result.returns, ("down", name),
                float(sum(y * m for y, m in zip(multiples, down_by_y)) * self.bet_pay[k]))
            add(result.mass, ("middle", name), float(middle_mass[k]))
            add(result.returns, ("middle", name), float(middle_z[k] * self.bet_pay[k]))
            result.bet_weight[name] = (x * across_mass + sum(y * m for y, m in zip(multiples, down_by_y))
                                       + int(middle_z[k]))

    def _seen(self, cls: np.ndarray, v2: np.ndarray, down_outside: np.ndarray) -> dict[str, float]:
        """The value (x SCALE1) when one community card is seen before the across decision (``v2`` and
        ``down_outside`` of ``down_values`` over ``self.extremes``)."""
        multiples = self.extremes
        out = {}
        # an across outside card c: the across decision knows c; the rest is played as usual
        per_card = np.zeros((len(multiples), 50))
        for i in range(len(multiples)):
            per_card[i] = v2[i] @ self.incidence  # sum over the 49 pairs holding c
        best = np.maximum(per_card.max(0), -2.0 * SCALE2 * 49)  # [c], x SCALE2 x 49
        out["across_outside"] = float(best.sum() / (50 * 49) * N_PAIRS)
        # a down outside card c: the down decision knows c too (kernel.decision_values: summed over the across
        # pairs without c, x SCALE3 x 47)
        best_x = np.full(50, -2.0)
        for i in range(len(multiples)):
            value_c = down_outside[i].astype(np.float64) / (SCALE3 * 47 * 1176)  # mean over the 1176 pairs
            best_x = np.maximum(best_x, value_c)
        out["down_outside"] = float(best_x.mean() * SCALE1)
        out["middle"] = self._middle_seen(cls)
        return out

    def _middle_seen(self, cls: np.ndarray) -> float:
        """The value (x SCALE1) when the middle card is seen first: each line's hand is then a class of its
        pair alone, so each decision is taken on the two lines' classes. The down bet is one of
        ``self.extremes`` (``extreme_multiples``: the others are never better, in the same integers); the
        across bet, compared after the divisions below, any of the multiples."""
        k_a = np.arange(N_CLASSES)[:, None]
        k_d = np.arange(N_CLASSES)[None, :]
        top = np.maximum(k_a, k_d)
        middle = np.maximum(self.multiples[0] * self.bet_pay[top], self.multiples[-1] * self.bet_pay[top])
        payoff = np.array([[np.maximum(self.ante_pay[k_a] + self.ante_pay[k_d] + x * self.bet_pay[k_a]
                                       + y * self.bet_pay[k_d] + middle, -(2 + x + y))
                            for y in self.extremes] for x in self.multiples], dtype=np.int64)
        folded = np.array([-(2 + x) * 1081 for x in self.multiples], dtype=np.int64)
        # [x][m, a]: the best over the 1081 down pairs' sums, of integers, so max(-(2 + x), best / 1081) is
        # the largest of the quotients; 0 where m is in a
        best = _accounting().middle_seen_best(self.p0, self.p1, cls, self.pair_valid, payoff, folded)
        usable = self.pair_valid.T  # [m, pair]
        best_x = np.full(50, -2.0)
        for i in range(len(self.multiples)):
            value = np.where(usable, best[i] / 1081, 0.0).sum(1) / 1176  # over the 1176 across pairs without m
            best_x = np.maximum(best_x, value)
        return float(best_x.mean() * SCALE1)


def distinct_strategies(xs: np.ndarray, ys: np.ndarray, middle: np.ndarray) -> tuple[list[int], np.ndarray]:
    """The strategies (``simplified.strategy_arrays``: across bet ``xs``, down bet ``ys``, middle rules
    ``middle``) that differ, each valued once: ``(keep, row_of)``, the index of each distinct one's first
    appearance, and for each strategy the row of its distinct one among them. Where the published across rule
    does not fold, ``across_fold_rule`` is ``always_1x``, for one."""
    first: dict[tuple, int] = {}
    row_of = [first.setdefault((int(x), int(y), rules.tobytes()), len(first))
              for x, y, rules in zip(xs, ys, middle)]
    keep = [row_of.index(row) for row in range(len(first))]
    return keep, np.array(row_of, dtype=np.int64)


def extreme_multiples(multiples: tuple[int, ...]) -> tuple[int, ...]:
    """The smallest and largest of the allowed bet multiples (one if they are equal): the only across and down
    bets the optimal strategy makes, and the only ones ``analyse`` values.

    Why: at the middle decision a round's value is ``max(fold, continue)``, both linear in the across and down
    multiples ``x`` and ``y`` (fold loses 2 + x + y antes; continuing adds x and y times each line's bet
    payoff), so it is convex in ``(x, y)``; so are its sums over rounds, their maximum over ``y`` (the down
    decision) and over ``y`` knowing a card. A convex function on ``[lo, hi]`` takes at a multiple strictly
    between no value above both ends' larger one, nor equal to it unless ``lo``'s is equal too: with ties
    broken towards the smallest bet, an inner multiple is never chosen, and every maximum over the multiples
    (the values, ``seen``'s, ``never_fold``'s) is the maximum over the two ends, in the same integers. The
    middle bet is already taken from the two ends alone (``solve``: ``z_best``)."""
    return tuple(sorted({min(multiples), max(multiples)}))


def best_across(v2: np.ndarray, multiples: tuple[int, ...]) -> tuple[float, int]:
    """The value of a hand (x SCALE1) and its best across decision (0 = fold, else the multiple) from ``v2``
    (see ``Solution``): fold only when strictly better, else the smallest of equally good bets."""
    totals = v2.sum(1)  # x SCALE1
    value, best = -2.0 * SCALE1, 0
    for multiple, total in zip(multiples, totals):
        if total > value:
            value, best = total, multiple
    return value, best


def hole_name(hole: tuple[int, int]) -> str:
    """``AKs``, ``AKo`` or ``AA`` for a representative hole of ``hole_classes``."""
    from controller.game.cards import RANKS

    hi, lo = hole[0] % 13, hole[1] % 13
    if hi == lo:
        return RANKS[hi] * 2
    return RANKS[hi] + RANKS[lo] + ("s" if hole[0] // 13 == hole[1] // 13 else "o")
