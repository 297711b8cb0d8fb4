"""The par sheet of a jurisdiction: every class of two-card hand analysed (``parsheet.ParSheetEngine``), in
worker processes, and added up, weighted by its number of hands, to exact fractions: the expected value, the
average wager, the decisions, the return table and the five-card bonus (NY 9 NYCRR 5324.39(e); PA 58 Pa. Code
674a.11; the method in the ``parsheet`` module docstring).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from threadpoolctl import threadpool_limits

from controller.analysis.classes import CLASS_NAMES, N_CLASSES, class_table
from controller.analysis.parsheet import (SCALE1, STEPS, HoleAnalysis, ParSheetEngine, check_middle_rule,
                                          hole_classes, hole_name, payoffs)
from controller.game.paytable import MAX_ODDS, Jurisdiction
from controller.analysis.workers import worker_pool


@dataclass
class ParSheet:
    """The par sheet of one jurisdiction's pay tables (values per unit of each ante; see module docstring).

    ``strategies``: the exact expected value of each strategy of ``controller.analysis.simplified``.
    ``bet_weight``: by class, the expected sum of the across, down and middle bets' multiples settled on it
    (the rise of the expected value, at the optimal strategy kept fixed, per unit added to its odds).
    ``analyses``: each class of two-card hand's ``HoleAnalysis`` by its name (``hole_name``).
    """

    jurisdiction: str
    expected_value: Fraction
    average_total_wager: Fraction
    decisions: dict[str, dict[str, float]]
    return_table: list[dict[str, object]]
    bonus_return: Fraction
    seen_card_value: dict[str, float]
    across_strategy: dict[str, int]
    source: str = ""
    pay_tables: dict[str, dict[str, object]] = field(default_factory=dict)
    bonus_counts: dict[str, int] = field(default_factory=dict)
    strategies: dict[str, Fraction] = field(default_factory=dict)
    bet_weight: dict[str, Fraction] = field(default_factory=dict)
    analyses: dict[str, HoleAnalysis] = field(default_factory=dict, repr=False, compare=False)

    @property
    def house_edge(self) -> Fraction:
        """The house's expected gain as a fraction of the two antes."""
        return -self.expected_value / 2

    @property
    def element_of_risk(self) -> Fraction:
        """The house's expected gain as a fraction of the average total amount wagered."""
        return -self.expected_value / self.average_total_wager


def bonus_return(jurisdiction: Jurisdiction) -> tuple[Fraction, dict[str, int]]:
    """The exact expected net of a one-unit five-card bonus over all 2,598,960 boards, and the class counts."""
    counts = np.bincount(class_table(jurisdiction.wheel), minlength=N_CLASSES)
    pays = payoffs(jurisdiction.five_card_bonus)
    total = sum(int(n) * int(p) for n, p in zip(counts, pays))
    return Fraction(total, int(counts.sum())), dict(zip(CLASS_NAMES, map(int, counts)))


_ENGINE: ParSheetEngine | None = None


def _init_worker(jurisdiction: Jurisdiction) -> None:
    global _ENGINE
    threadpool_limits(1)  # one BLAS thread per worker: the workers already use every core
    if _ENGINE is None:  # not forked from compute_par_sheet
        _ENGINE = ParSheetEngine(jurisdiction)


def _analyse_in_worker(hole: tuple[int, int]) -> HoleAnalysis:
    assert _ENGINE is not None
    return _ENGINE.analyse(hole)


def compute_par_sheet(jurisdiction: Jurisdiction, progress: Callable[[int, int], None] | None = None,
                      workers: int | None = None) -> ParSheet:
    """Analyse every class of two-card hand and add them up, weighted by their number of hands (1,326 in all).

    ``progress(done, total)`` is called after each class; ``workers`` processes share the classes (default:
    one per CPU). Raises ``ValueError`` for a pay table the exact method does not cover
    (see ``check_middle_rule``).
    """
    global _ENGINE
    check_middle_rule(payoffs(jurisdiction.bet))
    for table in (jurisdiction.ante, jurisdiction.five_card_bonus):
        if payoffs(table).max() > MAX_ODDS:
            raise ValueError(f"{table.name} odds above {MAX_ODDS:,} to 1 are beyond the exact arithmetic of the par sheet")
    classes = hole_classes()
    workers = workers or os.cpu_count() or 1
    engine = ParSheetEngine(jurisdiction)  # built once here (class table included), inherited by forked workers
    results: dict[tuple[int, int], HoleAnalysis] = {}
    with threadpool_limits(1):  # the compiled loops are the work; BLAS threads would only compete with them
        first = classes[0][0]
        results[first] = engine.analyse(first)  # compiles the loops (or loads numba's cache) once, before a fork
        if progress:
            progress(1, len(classes))
        rest = [hole for hole, _ in classes[1:]]
        if workers == 1:
            for done, hole in enumerate(rest, 2):
                results[hole] = engine.analyse(hole)
                if progress:
                    progress(done, len(classes))
        else:
            _ENGINE = engine
            try:
                with worker_pool(workers, initializer=_init_worker, initargs=(jurisdiction,)) as pool:
                    futures = {pool.submit(_analyse_in_worker, hole): hole for hole in rest}
                    for done, future in enumerate(as_completed(futures), 2):
                        results[futures[future]] = future.result()
                        if progress:
                            progress(done, len(classes))
            finally:
                _ENGINE = None
    return _add_up(jurisdiction, classes, results)


def _add_up(jurisdiction: Jurisdiction, classes: list[tuple[tuple[int, int], int]],
            results: dict[tuple[int, int], HoleAnalysis]) -> ParSheet:
    value = wager = 0.0
    decisions: dict[str, dict[int, float]] = {s: {} for s in STEPS}
    returns: dict[tuple[str, object], float] = {}
    mass: dict[tuple[str, object], float] = {}
    seen: dict[str, float] = {}
    simple: dict[str, int] = {}
    weights: dict[str, int] = {name: 0 for name in CLASS_NAMES}
    strategy = {}
    for hole, weight in classes:
        result = results[hole]
        strategy[hole_name(hole)] = result.across
        value += weight * result.value
        wager += weight * result.wager
        for step, choices in result.decisions.items():
            for choice, amount in choices.items():
                decisions[step][choice] = decisions[step].get(choice, 0.0) + weight * amount
        for table, source in ((returns, result.returns), (mass, result.mass)):
            for key, amount in source.items():
                table[key] = table.get(key, 0.0) + weight * amount
        for key, amount in result.seen.items():
            seen[key] = seen.get(key, 0.0) + weight * amount
        for key, amount in result.strategies.items():
            simple[key] = simple.get(key, 0) + weight * int(amount)
        for key, amount in result.bet_weight.items():
            weights[key] += weight * amount
    denominator = 1326 * SCALE1
    names = {0: "fold"} | {m: f"{m}x" for m in jurisdiction.bet_multiples}
    rows = []
    for (wager_name, hand), amount in sorted(returns.items(), key=lambda kv: _row_order(kv[0])):
        rows.append({"wager": wager_name, "outcome": f"fold at {hand}" if wager_name == "fold" else hand,
                     "probability": float(mass[(wager_name, hand)] / denominator),
                     "return": float(amount / denominator)})
    bonus, bonus_counts = bonus_return(jurisdiction)
    return ParSheet(
        jurisdiction=jurisdiction.code,
        expected_value=Fraction(int(round(value)), denominator),
        average_total_wager=Fraction(int(round(wager)), denominator),
        decisions={s: {names[c]: float(v / denominator) for c, v in sorted(choices.items())}
                   for s, choices in decisions.items()},
        return_table=rows,
        bonus_return=bonus,
        seen_card_value={k: float(v / denominator) for k, v in seen.items()},
        across_strategy=strategy,
        source=str(jurisdiction.source),
        pay_tables={name: dict(getattr(jurisdiction, name).pays) for name in ("ante", "bet", "five_card_bonus")},
        bonus_counts=bonus_counts,
        strategies={name: Fraction(amount, denominator) for name, amount in simple.items()},
        bet_weight={name: Fraction(amount, denominator) for name, amount in weights.items()},
        analyses={hole_name(hole): results[hole] for hole, _ in classes},
    )


def _row_order(key: tuple[str, object]) -> tuple[int, int]:
    wager, outcome = key
    order = ["fold", "ante", "across", "down", "middle"].index(wager)
    inner = STEPS.index(outcome) if wager == "fold" else CLASS_NAMES.index(outcome)
    return order, inner
