"""What knowing other seats' hole cards is worth (controller/analysis/shared_cards.py).

Without known cards both values are the hand's value by the par sheet's compiled backward induction
(``ParSheetEngine.analyse``, a separate code path); knowledge never costs (the informed value is the best over
strategies that include the standard one); and the standard strategy's value averaged over every card that may
be known is the hand's own value, exactly (the known card is a uniform one of those it cannot see)."""

from __future__ import annotations

import numpy as np
import pytest

from controller.analysis.parsheet import SCALE1, ParSheetEngine, hole_classes
from controller.analysis.shared_cards import hand_values, sample, worth
from controller.game.paytable import load_jurisdiction

pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def engine() -> ParSheetEngine:
    return ParSheetEngine(load_jurisdiction("ny"))


@pytest.mark.parametrize("hole", [(0, 13), (3, 40), (11, 12)])
def test_with_nothing_known_both_values_are_the_par_sheets(engine, hole):
    informed, standard = hand_values(engine, hole, ())
    value = engine.analyse(hole).value / SCALE1
    assert informed == pytest.approx(value, abs=1e-9) and standard == pytest.approx(value, abs=1e-9)


def test_knowing_cards_never_costs(engine):
    rng = np.random.default_rng(3)
    for _ in range(4):
        cards = [int(c) for c in rng.permutation(52)[:6]]
        informed, standard = hand_values(engine, (cards[0], cards[1]), tuple(cards[2:]))
        assert informed >= standard - 1e-9


@pytest.mark.slow
def test_the_standard_strategy_averaged_over_every_known_card_is_the_hands_value(engine):
    hole = (9, 22)  # a pair of jacks
    others = [c for c in range(52) if c not in hole]
    standard = np.mean([hand_values(engine, hole, (c,))[1] for c in others])
    assert standard == pytest.approx(engine.analyse(hole).value / SCALE1, abs=1e-9)


def test_the_worth_is_a_weighted_mean_of_the_classes(engine):
    classes = hole_classes()[:2]
    rows = sample(engine, (1,), 2, np.random.default_rng(5), classes)[1]
    w = worth(1, rows)
    weights = np.array([weight for _, weight in classes], dtype=float)
    gains = np.array([(v[:, 0] - v[:, 1]).mean() for _, v in rows])
    assert w.gain == pytest.approx(weights @ gains / weights.sum()) and w.gain >= 0 and w.hands == 4
    with pytest.raises(ValueError, match="at least 2"):
        worth(1, [(weight, v[:1]) for weight, v in rows])
