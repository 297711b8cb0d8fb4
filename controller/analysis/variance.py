"""The exact variance of one seat's round under the par sheet's optimal strategy, per unit of each ante, and of a
one-unit five-card bonus: what the back office's 95% interval of a table's win is built on (docs/backoffice.md,
"The statistics"; MD COMAR 36.05.03.25).

The main game (the two antes and the across, down and middle bets; NY 9 NYCRR 5324.39(e), PA 58 Pa. Code
674a.11): for each of the 169 classes of two-card hand, every across pair ``a``, down pair ``d`` and middle card
``m`` (1,225 x 1,128 x 46 boards) is played with the decisions of the par sheet's backward induction
(``ParSheetEngine.solve``: the across multiple, the down decision for each ``a``, the middle decision and
multiple for each ``(a, d)``), and the player's net ``R`` per unit of each ante summed as ``sum R`` and ``sum
R**2``: integers, exact. ``sum R`` is the par sheet's value (checked for every class: a class whose sum differs
raises ``AssertionError``); the variance is ``E[R**2] - E[R]**2`` over the 1,326 hands, an exact fraction.

The five-card bonus: the distribution of its pay class over the 2,598,960 boards (``parsheet_totals.bonus_return``),
exact. The covariance of the bonus with the main game, and of two seats sharing the cross, is not computed
(the back office's model says how it is used).

The enumeration takes minutes of CPU (about 1.5 s a class), so its result is kept in ``variances/<fingerprint>.json``
beside this module, where the fingerprint hashes the pay tables, wheel and bet multiples; one for pay tables
without a file is computed when first needed. Write a file with ``python -m controller.analysis.variance
JURISDICTION_OR_PAYTABLE_FILE``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from controller.analysis.parsheet import N_MIDDLE, N_PAIRS, ParSheetEngine, best_across, hole_classes, payoffs
from controller.analysis.parsheet_totals import bonus_return
from controller.analysis.strategy import fingerprint as strategy_fingerprint
from controller.game.paytable import Jurisdiction, load_jurisdiction
from controller.analysis.workers import worker_pool

VARIANCE_DIR = Path(__file__).resolve().parent / "variances"
#: Boards of one two-card hand: across pairs x down pairs x middle cards.
BOARDS = N_PAIRS * 1128 * N_MIDDLE


@dataclass(frozen=True)
class RoundVariance:
    """Exact moments of the player's net, per unit staked: ``main_mean`` and ``main_variance`` per unit of each
    ante (the two antes and the across, down and middle bets of one seat's round, optimal strategy; the mean is
    the par sheet's expected value), ``bonus_mean`` and ``bonus_variance`` of a one-unit five-card bonus."""

    main_mean: Fraction
    main_variance: Fraction
    bonus_mean: Fraction
    bonus_variance: Fraction

    def to_json(self) -> dict[str, str]:
        """Each field as an exact ``"p/q"``."""
        return {name: str(getattr(self, name)) for name in ("main_mean", "main_variance", "bonus_mean",
                                                            "bonus_variance")}

    @classmethod
    def from_json(cls, data: dict[str, str]) -> RoundVariance:
        """The inverse of ``to_json``; raises ``KeyError`` or ``ValueError`` for a field missing or not a fraction."""
        return cls(*(Fraction(data[name]) for name in ("main_mean", "main_variance", "bonus_mean",
                                                       "bonus_variance")))


def fingerprint(jurisdiction: Jurisdiction) -> str:
    """A short hash of what the variance depends on: the strategy's (ante and bet pays, wheel, multiples) and
    the five-card bonus's pays."""
    key = json.dumps([strategy_fingerprint(jurisdiction), jurisdiction.five_card_bonus.pays], sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def board_nets(engine: ParSheetEngine, solution: Any, x: int, a: int) -> tuple[np.ndarray, np.ndarray]:
    """For across pair ``a`` of a hand played with across bet ``x`` (``solution``: ``engine.solve`` of the hand):
    the down pairs ``d`` that leave the across pair's cards (indexes of the 1,225 pairs) and the player's net per
    unit of each ante ``net[i, m]`` for down pair ``d[i]`` and each of the 50 cards left as the middle card ``m``
    (0 where ``m`` is a card of either pair), by the solution's decisions (module docstring)."""
    s = solution
    y = int(s.choice_y[s.multiples.index(x)][a])
    d = np.nonzero(engine.disjoint[a])[0]
    usable = engine.pair_valid[a][None, :] & engine.pair_valid[d]  # m in neither pair
    if y == 0:  # folded at the down decision: 2 + x antes lost on every board
        return d, np.where(usable, float(-(2 + x)), 0.0)
    cls = s.cls.astype(np.int64)
    # the middle bet pays the bet odds of the higher-ranking line (check_middle_rule, NY (e)(9)(ii))
    middle = engine.bet[np.maximum(cls[a][None, :], cls[d])]
    net = (s.ante[a] + x * s.bet[a])[None, :] + s.ante[d] + y * s.bet[d] + s.z_best[a, d][:, None] * middle
    goes = s.per_xy[(x, y)][1][a, d]  # the middle decision bets rather than folds
    return d, np.where(usable, np.where(goes[:, None], net, float(-(2 + x + y))), 0.0)


def hole_moments(engine: ParSheetEngine, hole: tuple[int, int]) -> tuple[int, int, int]:
    """``(sum R, sum R**2, value)`` over every board of the two-card hand ``hole`` (module docstring), with
    ``value`` the par sheet's value of the hand (x SCALE1, from ``best_across``): integers."""
    s = engine.solve(hole)
    value, x = best_across(s.v2, s.multiples)
    if x == 0:
        return -2 * BOARDS, 4 * BOARDS, int(value)
    total = squares = 0
    for a in range(N_PAIRS):
        _, net = board_nets(engine, s, x, a)
        total += int(net.sum())  # integers below 2**53: exact in float64
        squares += int((net * net).sum())
    return total, squares, int(value)


_ENGINE: ParSheetEngine | None = None


def _moments_in_worker(hole: tuple[int, int]) -> tuple[int, int, int]:
    assert _ENGINE is not None
    with threadpool_limits(1):
        return hole_moments(_ENGINE, hole)


def compute_variance(jurisdiction: Jurisdiction, workers: int | None = None) -> RoundVariance:
    """Enumerate every class (module docstring) in ``workers`` processes (default: one per CPU). Raises
    ``ValueError`` for a pay table the par sheet's exact method does not cover, ``AssertionError`` when a class's
    mean is not the par sheet's value."""
    global _ENGINE
    engine = ParSheetEngine(jurisdiction)
    classes = hole_classes()
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        moments = [hole_moments(engine, hole) for hole, _ in classes]
    else:
        _ENGINE = engine  # inherited by the forked workers
        try:
            with worker_pool(workers) as pool:
                moments = list(pool.map(_moments_in_worker, [hole for hole, _ in classes]))
        finally:
            _ENGINE = None
    hands = sum(weight for _, weight in classes)
    total = squares = 0
    for (hole, weight), (first, second, value) in zip(classes, moments):
        if first != value:
            raise AssertionError(f"class {hole}: the boards sum to {first}, the par sheet's value is {value}")
        total, squares = total + weight * first, squares + weight * second
    mean, second = Fraction(total, hands * BOARDS), Fraction(squares, hands * BOARDS)
    bonus_mean, counts = bonus_return(jurisdiction)
    pays = payoffs(jurisdiction.five_card_bonus)
    boards = sum(counts.values())
    bonus_second = Fraction(sum(n * int(p) ** 2 for n, p in zip(counts.values(), pays)), boards)
    return RoundVariance(mean, second - mean * mean, bonus_mean, bonus_second - bonus_mean * bonus_mean)


def round_variance(jurisdiction: Jurisdiction, directory: Path = VARIANCE_DIR) -> RoundVariance:
    """The ``RoundVariance`` of ``jurisdiction``'s pay tables: from ``directory/<fingerprint>.json``, else computed
    (minutes) and not written. Raises ``ValueError`` for a file that is not one (its path named)."""
    path = Path(directory) / f"{fingerprint(jurisdiction)}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return compute_variance(jurisdiction)
    try:
        return RoundVariance.from_json(data)
    except (KeyError, ValueError, TypeError, ZeroDivisionError) as exc:
        raise ValueError(f"{path}: not a round variance file: {exc}") from None


def save(jurisdiction: Jurisdiction, directory: Path = VARIANCE_DIR) -> Path:
    """Compute the variance of ``jurisdiction`` and write ``directory/<fingerprint>.json``; its path."""
    variance = compute_variance(jurisdiction)
    path = Path(directory) / f"{fingerprint(jurisdiction)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"jurisdiction": jurisdiction.code, **variance.to_json()}, indent=2) + "\n",
                    encoding="utf-8")
    return path


if __name__ == "__main__":
    print(save(load_jurisdiction(sys.argv[1])))
