"""The exact variance of a round (controller/analysis/variance.py), the back office's 95% interval's base.

Oracles: the par sheet's value of each class of two-card hand from its compiled loops (``ParSheetEngine.analyse``,
code apart from the enumeration here), which the boards' summed net must equal to the unit; rounds played
by the optimal strategy of the simulated players (``controller.analysis.strategy.OptimalStrategy``: the
compiled loops' decisions and its own middle decision) on boards drawn at random and settled by the table's own
settlement (``controller.game.settlement.settle_seat``, the round's hand evaluator), whose net must be the
enumeration's for the same board, to the unit; the five-card bonus's
distribution counted here from its pay table over every board; and, in the slow tier, the shipped file
computed again.
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import pytest

from controller.analysis.parsheet import N_PAIRS, ParSheetEngine, best_across, hole_classes, payoffs
from controller.analysis.parsheet_totals import bonus_return
from controller.analysis.strategy import OptimalStrategy
from controller.analysis.variance import (BOARDS, VARIANCE_DIR, RoundVariance, board_nets, compute_variance,
                                          fingerprint, hole_moments, round_variance)
from controller.game.cards import DECK
from controller.game.paytable import load_jurisdiction
from controller.game.settlement import Community, settle_seat

NY = load_jurisdiction("ny")
#: Classes checked: a pair that always plays, suited and offsuit hands that play, and one that folds at once.
CLASSES = [(12, 25), (12, 11), (9, 15), (3, 13 + 0)]


@pytest.fixture(scope="module")
def engine():
    return ParSheetEngine(NY)


@pytest.mark.parametrize("hole", CLASSES[:2])
def test_the_boards_of_a_hand_sum_to_the_par_sheets_value_of_it(engine, hole):
    total, _, value = hole_moments(engine, hole)
    assert total == value == round(engine.analyse(hole).value)


@pytest.mark.parametrize("hole", CLASSES[1:3])
def test_each_boards_net_is_the_round_played_by_the_optimal_strategy_and_settled_by_the_table(engine, hole):
    """Across pairs and down pairs drawn at random; every middle card of each: the net the enumeration squares
    is the net of the round as the simulated players play it and the table settles it, to the unit."""
    s = engine.solve(hole)
    x = best_across(s.v2, s.multiples)[1]
    cards = (DECK[hole[0]], DECK[hole[1]])
    rest = [c for c in range(52) if c not in hole]
    pair = lambda i: (DECK[rest[engine.p0[i]]], DECK[rest[engine.p1[i]]])  # noqa: E731
    strategy = OptimalStrategy(NY)
    rng = random.Random(20261204)
    checked = 0
    for a in rng.sample(range(N_PAIRS), 6):
        d_all, nets = board_nets(engine, s, x, a)
        for i in rng.sample(range(len(d_all)), 3):
            across, down = pair(a), pair(int(d_all[i]))
            y = strategy.down(cards, across, x)
            z = strategy.middle(cards, across, down, x, y) if y else 0
            for m in range(50):
                middle = DECK[rest[m]]
                if middle in across + down:
                    assert nets[i, m] == 0
                    continue
                if not y or not z:
                    expected = -(2 + x + y)
                else:
                    wagers = {"ante_across": 1, "ante_down": 1, "across": x, "down": y, "middle": z}
                    expected = settle_seat(1, cards, Community(across, down, middle), wagers, NY).net
                assert nets[i, m] == expected, (across, down, middle, x, y, z)
                checked += 1
    assert checked == 6 * 3 * 46


def test_a_hand_that_folds_at_once_loses_two_antes_on_every_board(engine):
    hole = CLASSES[3]  # 5-2 offsuit: the par sheet folds it (its value is -2 antes)
    assert hole_moments(engine, hole) == (-2 * BOARDS, 4 * BOARDS, -2 * BOARDS)


def test_the_bonus_variance_is_its_pay_tables_over_every_board():
    _, counts = bonus_return(NY)
    pays = payoffs(NY.five_card_bonus)
    boards = math.comb(52, 5)
    assert sum(counts.values()) == boards
    mean = Fraction(sum(n * int(p) for n, p in zip(counts.values(), pays)), boards)
    square = Fraction(sum(n * int(p) ** 2 for n, p in zip(counts.values(), pays)), boards)
    shipped = round_variance(NY)
    assert (shipped.bonus_mean, shipped.bonus_variance) == (mean, square - mean * mean)


def test_the_shipped_file_is_the_ny_pay_tables_and_holds_the_par_sheets_house_edge():
    path = VARIANCE_DIR / f"{fingerprint(NY)}.json"
    data = json.loads(path.read_text())
    assert data["jurisdiction"] == "ny" and RoundVariance.from_json(data) == round_variance(NY)
    assert Fraction(data["main_mean"]) == Fraction(-579091, 6689228)  # the par sheet's value (docs/par-sheet-ny.md)
    assert Fraction(data["main_variance"]) > 0


def test_pay_tables_without_a_file_are_computed_and_a_broken_file_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr("controller.analysis.variance.compute_variance", lambda j: "computed")
    assert round_variance(NY, tmp_path) == "computed"
    (tmp_path / f"{fingerprint(NY)}.json").write_text('{"main_mean": "1/0"}')
    with pytest.raises(ValueError, match="not a round variance file"):
        round_variance(NY, tmp_path)


@pytest.mark.slow  # every class of every board: about 5 minutes of CPU on two cores, more on a loaded machine
@pytest.mark.timeout(3600)
def test_the_shipped_variance_is_computed_again_the_same():
    assert compute_variance(NY) == round_variance(NY)
    assert len(hole_classes()) == 169
