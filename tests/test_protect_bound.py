"""The bound on flagging a hole-carder of known style (controller/simulated/protect_bound.py) and the rule-based
honest strategies the false alarms are measured on (controller/simulated/players.py).

The bound's e-value is the growth-optimal one for the detector's null (decisions independent of the hidden
card): no e-value valid under that null grows faster against the same hole-carder. The detector's own
e-values are such e-values, so their mean log under the hole-carder cannot exceed the bound's information."""

from __future__ import annotations

import numpy as np
import pytest

from controller.analysis.protect import HYPOTHESES, evidence
from controller.analysis.protect_names import STYLES
from controller.analysis.protect_tables import ProtectTables
from controller.game.cards import DECK
from controller.game.paytable import load_jurisdiction
from controller.simulated import players
from controller.simulated.protect_bound import bound

pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def tables() -> ProtectTables:
    return ProtectTables.load(load_jurisdiction("ny"))


def carder_rounds(tables, card, style, n, rng):
    hole, across, down, middle = players.deal(rng, n)
    seen = players.seen_cards(card, across, down, middle, 1.0, rng)
    bets = players.play_decisions(lambda step, x, y: players.hole_carder(
        card, tables, step, hole, across, down, middle, seen, x, y, style), n)
    return hole, np.concatenate([across, down, middle[:, None]], 1), bets


@pytest.mark.parametrize("card, style", [("middle", "best"), ("middle", "pairs"), ("down", "pairs"),
                                         ("across", "best"), ("down", "rule")])
def test_no_e_value_of_the_detector_grows_faster_than_the_bound(tables, card, style):
    best_test = bound(tables, card, style, 3000, np.random.default_rng(11))
    hole, cross, bets = carder_rounds(tables, card, style, 3000, np.random.default_rng(12))
    e = evidence(tables, hole, cross, bets)
    column = STYLES.index(style) * len(HYPOTHESES) + HYPOTHESES.index(card)
    logs = np.log(e[:, column])
    spread = np.hypot(best_test.error, logs.std(ddof=1) / np.sqrt(len(logs)))
    assert logs.mean() <= best_test.information + 4 * spread
    assert logs.mean() >= 0.5 * best_test.information  # the detector's own model of the style: close to it


def test_the_bound_is_the_flagging_level_over_the_information(tables):
    b = bound(tables, "middle", "best", 500, np.random.default_rng(1))
    assert b.rounds == pytest.approx(np.log(1e4) / b.information)
    assert b.information > 0 and b.error > 0


def cards(text: str) -> np.ndarray:
    return np.array([[DECK.index(c) for c in text.split()]])


@pytest.mark.parametrize("hand, across_bet", [("2c 5d", 0), ("2c 5c", 1), ("5c 5d", 3), ("6c 2d", 1), ("Ah Kd", 1)])
def test_the_strategy_card_and_the_across_fold_rule_at_the_across_decision(tables, hand, across_bet):
    """controller/analysis/simplified.py, CARD: fold unsuited, unpaired 5-high or lower; 3x with a pair; else 1x
    (the across fold rule: the same folds, 1x otherwise)."""
    hole, zero = cards(hand), np.zeros(1, dtype=np.int64)
    rng = np.random.default_rng(0)
    other = cards("9s 8s")
    card = players.honest("card", tables, "across", hole, other, other, zero, zero, rng)
    rule = players.honest("across_fold_rule", tables, "across", hole, other, other, zero, zero, rng)
    assert (int(card[0]), int(rule[0])) == (across_bet, min(across_bet, 1))


@pytest.mark.parametrize("hand, across, down, middle_bet", [
    ("2c 9d", "6h 6s", "Kc 3d", 3),   # a pair of 6s on the across line
    ("2c 9d", "5h 5s", "Kc 3d", 1),   # a pair of 5s only
    ("2c 9c", "Jc 4c", "Kd 3d", 3),   # four to a flush on the across line
    ("2c 9d", "Jh 4s", "9h 3d", 3),   # a pair of 9s on the down line
    ("2c 2d", "Jh 4s", "Kh 3d", 1),   # a pair of 2s in hand: not 6s or better
    ("2c 2d", "Jh Js", "Kh 3d", 3),   # two pair on the across line
])
def test_the_strategy_card_at_the_middle_decision(tables, hand, across, down, middle_bet):
    one = np.ones(1, dtype=np.int64)
    bet = players.honest("card", tables, "middle", cards(hand), cards(across), cards(down), one, one,
                         np.random.default_rng(0))
    assert int(bet[0]) == middle_bet
