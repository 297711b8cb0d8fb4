"""The par sheet's engine as it was before its inner loops were compiled: the test oracle of ``parsheet``.

``ReferenceEngine.analyse`` is the former ``ParSheetEngine.analyse`` (NumPy arrays, float sums of integers), kept
unchanged; it was itself checked against the independent calculations of ``tests/test_parsheet.py`` (plain
enumeration through the real settlement, textbook counts, published figures). The compiled engine must give
the same results bit for bit. ``python -m tests.parsheet_reference OUT.json`` writes its results for every
class of two-card hand (New York's tables) to ``OUT.json`` (``tests/data/parsheet_ny_reference.json``).
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from controller.analysis.classes import CLASS_NAMES, N_CLASSES
from controller.analysis.parsheet import (N_DOWN, N_MIDDLE, N_PAIRS, SCALE1, SCALE2, SCALE3, STEPS, HoleAnalysis,
                                          ParSheetEngine, hole_classes, hole_name)
from controller.game.paytable import load_jurisdiction


class ReferenceEngine(ParSheetEngine):
    """``ParSheetEngine`` with the former ``analyse`` (see module docstring)."""

    def analyse(self, hole: tuple[int, int]) -> HoleAnalysis:
        """Backward induction over every deal to the hand ``hole`` (two card indexes)."""
        sol = self.solve(hole)
        cls, ante, bet, below, n_le, z_best, v2, choice_y, per_xy = (
            sol.cls, sol.ante, sol.bet, sol.below, sol.n_le, sol.z_best, sol.v2, sol.choice_y, sol.per_xy)
        value, across = sol.across()
        result = HoleAnalysis(value, across, {s: {} for s in STEPS}, 0.0, {}, {})
        self._account(result, cls, ante, bet, below, n_le, per_xy, choice_y, z_best)
        result.seen = self._seen(hole, cls, v2, per_xy)
        return result

    def _account(self, result: HoleAnalysis, cls, ante, bet, below, n_le, per_xy, choice_y, z_best) -> None:
        """Decision frequencies, the average wager and the return table of the optimal strategy."""
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
        i = self.multiples.index(x)
        y_of_a = choice_y[i]
        per_a = float(SCALE1 // N_PAIRS)  # mass of one across pair
        folded_down = y_of_a == 0
        dec["down"][0] = folded_down.sum() * per_a
        add(result.returns, ("fold", "down"), -(2 + x) * folded_down.sum() * per_a)
        add(result.mass, ("fold", "down"), folded_down.sum() * per_a)
        wager = 2.0 * SCALE1 + x * SCALE1
        per_d = per_a / N_DOWN
        per_m = per_d / N_MIDDLE
        for y in self.multiples:
            rows = (y_of_a == y)
            if not rows.any():
                continue
            dec["down"][y] = rows.sum() * per_a
            wager += y * rows.sum() * per_a
            _, goes_on = per_xy[(x, y)]
            reached = self.disjoint & rows[:, None]
            plays = reached & goes_on
            folds = reached & ~goes_on
            dec["middle"][0] = dec["middle"].get(0, 0.0) + folds.sum() * per_d
            add(result.returns, ("fold", "middle"), -(2 + x + y) * folds.sum() * per_d)
            add(result.mass, ("fold", "middle"), folds.sum() * per_d)
            for z in sorted(set(self.multiples) & {self.multiples[0], self.multiples[-1]}):
                chosen = plays & (z_best == z)
                dec["middle"][z] = dec["middle"].get(z, 0.0) + chosen.sum() * per_d
                wager += z * chosen.sum() * per_d
            weight = plays.astype(np.float32)
            hit_d = weight @ self.incidence  # [a, c]: played mass of the down pairs holding card c
            hit_a = weight.T @ self.incidence  # [d, c]: played mass of the across pairs holding card c
            rows_a, rows_d = weight.sum(1), weight.sum(0)
            for k in range(N_CLASSES):
                name = CLASS_NAMES[k]
                # middle cards (not in a or d) giving class k on the across line, on the down line
                ind = (self.pair_valid & (cls == k)).astype(np.float64)  # [pair, m]
                row = ind.sum(1)
                across_mass = float((rows_a * row).sum() - (hit_d * ind).sum())
                down_mass = float((rows_d * row).sum() - (hit_a * ind).sum())
                add(result.mass, ("ante", name), (across_mass + down_mass) * per_m)
                add(result.returns, ("ante", name), (across_mass + down_mass) * self.ante[k] * per_m)
                add(result.mass, ("across", name), across_mass * per_m)
                add(result.returns, ("across", name), x * across_mass * self.bet[k] * per_m)
                add(result.mass, ("down", name), down_mass * per_m)
                add(result.returns, ("down", name), y * down_mass * self.bet[k] * per_m)
                n_eq = n_le[k] - (n_le[k - 1] if k else 0)
                middle_mass = (weight * n_eq).sum()
                middle_z = (weight * n_eq * z_best).sum()
                add(result.mass, ("middle", name), middle_mass * per_m)
                add(result.returns, ("middle", name), middle_z * self.bet[k] * per_m)
        result.wager = wager

    def _seen(self, hole, cls, v2, per_xy) -> dict[str, float]:
        """The value (x SCALE1) when one community card is seen before the across decision."""
        out = {}
        # an across outside card c: the across decision knows c; the rest is played as usual
        per_card = np.zeros((len(self.multiples), 50))
        for i in range(len(self.multiples)):
            per_card[i] = v2[i] @ self.incidence  # sum over the 49 pairs holding c
        best = np.maximum(per_card.max(0), -2.0 * SCALE2 * 49)  # [c], x SCALE2 x 49
        out["across_outside"] = float(best.sum() / (50 * 49) * N_PAIRS)
        # a down outside card c: the down decision knows c too
        best_x = np.full(50, -2.0)
        for x in self.multiples:
            best_y = None
            for y in self.multiples:
                v3, _ = per_xy[(x, y)]  # already 0 where d meets a
                w = v3 @ self.incidence  # [a, c]: sum over the 47 d holding c, disjoint from a
                best_y = w if best_y is None else np.maximum(best_y, w)
            v2c = np.maximum(best_y, -(2 + x) * SCALE3 * 47)  # x SCALE3 x 47
            v2c = np.where(self.incidence.astype(bool), 0.0, v2c)  # a must not hold c
            value_c = v2c.sum(0) / (SCALE3 * 47 * 1176)  # mean over the 1176 pairs without c
            best_x = np.maximum(best_x, value_c)
        out["down_outside"] = float(best_x.mean() * SCALE1)
        out["middle"] = self._middle_seen(cls)
        return out

    def _middle_seen(self, cls: np.ndarray) -> float:
        """The value (x SCALE1) when the middle card is seen first: each line's hand is then a class of its
        pair alone, so the down line is summed over class counts."""
        k_a = np.arange(N_CLASSES)[:, None]
        k_d = np.arange(N_CLASSES)[None, :]
        top = np.maximum(k_a, k_d)
        middle = np.maximum(self.multiples[0] * self.bet[top], self.multiples[-1] * self.bet[top])
        by_m = cls.T  # [m, pair]: class of each pair's line with middle card m (0 when the pair holds m)
        usable = self.pair_valid.T  # [m, pair]
        onehot = np.zeros((50, N_PAIRS, N_CLASSES))
        onehot[np.arange(50)[:, None], np.arange(N_PAIRS)[None, :], by_m] = usable
        total_k = onehot.sum(1)  # [m, k]
        by_card = np.einsum("pc,mpk->mck", self.incidence.astype(np.float64), onehot)  # [m, card, k]
        # down pairs disjoint from a (and without m): all - through a's first card - through its second + a
        count = total_k[:, None, :] - by_card[:, self.p0, :] - by_card[:, self.p1, :] + onehot  # [m, a, k]
        best_x = np.full(50, -2.0)
        for x in self.multiples:
            best_y = np.full((50, N_PAIRS), -(2.0 + x))
            for y in self.multiples:
                payoff = self.ante[k_a] + self.ante[k_d] + x * self.bet[k_a] + y * self.bet[k_d] + middle
                v3 = np.maximum(payoff, -(2.0 + x + y))  # [class of a, class of d]
                ev = np.einsum("mak,mak->ma", count, v3[by_m]) / 1081  # over the 1081 down pairs
                best_y = np.maximum(best_y, ev)
            value = np.where(usable, best_y, 0.0).sum(1) / 1176  # over the 1176 across pairs without m
            best_x = np.maximum(best_x, value)
        return float(best_x.mean() * SCALE1)


def to_data(result: HoleAnalysis) -> dict:
    """One hand's analysis as JSON-ready data (floats round-trip exactly through ``json``)."""
    return {"value": float(result.value), "across": int(result.across), "wager": float(result.wager),
            "decisions": {step: {str(k): float(v) for k, v in choices.items()}
                          for step, choices in result.decisions.items()},
            "returns": {f"{w}|{c}": float(v) for (w, c), v in result.returns.items()},
            "mass": {f"{w}|{c}": float(v) for (w, c), v in result.mass.items()},
            "seen": {k: float(v) for k, v in result.seen.items()}}


def _one(hole):
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    return hole_name(hole), to_data(ReferenceEngine(load_jurisdiction("ny")).analyse(hole))


if __name__ == "__main__":
    with ProcessPoolExecutor() as pool:
        data = dict(pool.map(_one, [hole for hole, _ in hole_classes()]))
    with open(sys.argv[1], "w") as handle:
        json.dump(data, handle, indent=0, sort_keys=True)
