"""The par sheet: exact values checked against independent counts, plain enumeration, published figures and
a simulation through the real round machine.

Independent sources used here: the textbook five-card hand counts; NY 9 NYCRR 5324.39(f) pay tables; plain
enumeration with the controller's own scalar evaluator and ``settle_seat`` (a different code path from the
array engine); E. Jacobson, "Hole-carding Criss Cross Poker" (888casino blog), which gives a 49.37% player edge
when the middle card is seen and a strategy of "fold, raise 1 or raise 3"; and the published across strategy
quoted from the Wizard of Odds ("if the hole cards are unsuited, unpaired, and the largest one is five or
less, then fold").
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from controller.analysis import report
from controller.analysis.classes import CLASS_NAMES, class_table, classify, colex_combinations
from controller.analysis.parsheet import SCALE2, ParSheetEngine, distinct_strategies
from controller.analysis.parsheet_totals import bonus_return, compute_par_sheet
from controller.analysis.simplified import CARD, STRATEGIES, line_features, published_fold, strategy_arrays
from controller.analysis.strategy import OptimalStrategy, canonical, map_card, pair_index
from controller.cli.simulate import simulate
from controller.game.cards import DECK, RANKS
from controller.game.hands import evaluate
from controller.game.paytable import PAY_HANDS, load_jurisdiction, pay_hand
from controller.game.settlement import Community, settle_seat
from controller.settings.files import CONFIG_DIR
from tests.examples import examples
from tests.parsheet_reference import ReferenceEngine, to_data

NY = load_jurisdiction("ny")
PAIR = 84_480  # five-card hands holding exactly one pair of a given rank: 13C1... textbook 1,098,240 / 13


def test_class_table_gives_the_textbook_counts():
    counts = dict(zip(CLASS_NAMES, np.bincount(class_table(True), minlength=len(CLASS_NAMES)).tolist()))
    assert counts == {
        "below_pair_of_6s": 1_302_540 + 4 * PAIR,  # high card, and pairs of 2s to 5s
        "pair_6s_to_10s": 5 * PAIR, "pair_jacks_or_better": 4 * PAIR, "two_pair": 123_552,
        "three_of_a_kind": 54_912, "straight": 10_200, "flush": 5_108, "full_house": 3_744,
        "four_of_a_kind": 624, "straight_flush": 36, "royal_flush": 4,
    }


@pytest.mark.parametrize("wheel", [True, False])
def test_the_compiled_class_table_is_the_vectorised_classification(wheel):
    """``class_table`` (compiled, one hand at a time) equals ``classify`` applied to every hand in
    colexicographic order, with and without the wheel."""
    assert np.array_equal(class_table(wheel), classify(colex_combinations(52, 5), wheel))


def test_hands_are_generated_in_colexicographic_order():
    """The class table's hands in the order of ``colex_index``: every set of cards, sorted by its largest card,
    then the next largest, ... (the colexicographic rule, applied here by ``sorted`` to itertools' sets)."""
    expected = sorted(itertools.combinations(range(12), 5), key=lambda cards: cards[::-1])
    assert colex_combinations(12, 5).tolist() == [list(cards) for cards in expected]
    assert colex_combinations(52, 5).shape == (2_598_960, 5)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(range(52)), min_size=5, max_size=5, unique=True))
def test_the_array_classifier_agrees_with_the_scalar_evaluator(cards):
    expected = pay_hand(evaluate([DECK[c] for c in cards]))
    got = int(classify(np.array([cards]))[0])
    assert got == (0 if expected is None else 1 + PAY_HANDS.index(expected))


def test_five_card_bonus_return_is_exact():
    """NY 5324.39(f)(3) odds times the textbook counts, over 2,598,960 boards."""
    net = (5 * PAIR + 4 * PAIR) * 1 + 123_552 * 3 + 54_912 * 4 + 10_200 * 6 + 5_108 * 10 + 3_744 * 15 \
        + 624 * 40 + 36 * 100 + 4 * 250 - (1_302_540 + 4 * PAIR)
    assert bonus_return(NY)[0] == Fraction(net, 2_598_960) == Fraction(-7653, 216580)


def _plain_sums(hole, across):
    """Plain enumeration with the scalar evaluator and the real settlement, for one hand and across pair: per
    down pair, the unit nets (antes, across, down, middle) summed over the 46 middle cards."""
    rest = [c for c in DECK if c not in (*hole, *across)]
    unit = {"ante_across": 1, "ante_down": 1, "across": 1, "down": 1, "middle": 1}
    sums = []
    for down in itertools.combinations(rest, 2):
        nets = []
        for middle in rest:
            if middle in down:
                continue
            s = settle_seat(1, hole, Community(across, down, middle), unit, NY).wagers
            nets.append((s["ante_across"].net + s["ante_down"].net, s["across"].net, s["down"].net, s["middle"].net))
        sums.append((down, [sum(col) for col in zip(*nets)]))
    return sums


def _plain_v2(hole, across):
    """x -> the down-decision value summed over the 1,128 down pairs, times 46 (integers, like the engine's),
    from ``_plain_sums``."""
    sums = [net for _, net in _plain_sums(hole, across)]
    out = {}
    for x in (1, 2, 3):
        best = -(2 + x) * SCALE2
        for y in (1, 2, 3):
            total = 0
            for antes, a_bet, d_bet, middle in sums:
                play = max(antes + x * a_bet + y * d_bet + z * middle for z in (1, 2, 3))
                total += max(-(2 + x + y) * 46, play)
            best = max(best, total)
        out[x] = best
    return out


@pytest.mark.parametrize("hole, across", [(("Qh", "Jh"), ("Th", "2c")), (("7c", "2d"), ("7d", "Ks")),
                                          (("8s", "8d"), ("Ac", "3h"))])
@pytest.mark.slow
def test_the_engine_matches_plain_enumeration(hole, across):
    engine = ParSheetEngine(NY)
    index = {c: i for i, c in enumerate(DECK)}
    solution = engine.solve((index[hole[0]], index[hole[1]]))
    rest = [c for c in range(52) if c not in (index[hole[0]], index[hole[1]])]
    a = pair_index(rest, [index[c] for c in across])
    expected = _plain_v2(hole, across)
    for i, x in enumerate((1, 2, 3)):
        assert solution.v2[i, a] == expected[x]


@pytest.fixture(scope="module")
def ny_sheet():
    return compute_par_sheet(NY)


REFERENCE = json.loads((Path(__file__).parent / "data" / "parsheet_ny_reference.json").read_text())


@pytest.mark.slow
def test_every_class_equals_the_former_engine_bit_for_bit(ny_sheet):
    """The compiled engine against the former NumPy engine (``tests/parsheet_reference.py``), saved for each of
    the 169 classes: values, decisions, wagers, returns, card-seen values equal bit for bit. The former engine
    summed the middle bet's masses in float32, which rounds above 2**24: there it may differ by float32's
    rounding, and the compiled engine's value is an integer."""
    assert set(ny_sheet.analyses) == set(REFERENCE) and len(REFERENCE) == 169
    rounded = 0
    for name, expected in REFERENCE.items():
        got = to_data(ny_sheet.analyses[name])
        for key in ("value", "across", "wager", "decisions", "returns", "seen"):
            assert got[key] == expected[key], (name, key)
        assert set(got["mass"]) == set(expected["mass"]), name
        for key, old in expected["mass"].items():
            new = got["mass"][key]
            if new != old:
                assert key.startswith("middle|") and old > 2**24 and new == int(new), (name, key)
                assert abs(new - old) <= 2 * np.spacing(np.float32(old)), (name, key)
                rounded += 1
    assert rounded <= 10


@pytest.mark.parametrize("hole", [(12, 25), (3, 14), (11, 10)], ids=["AA", "53o", "KQs"])
def test_the_saved_reference_is_the_former_engine(hole):
    """The saved file is what ``ReferenceEngine`` (the former engine, unchanged) computes."""
    from controller.analysis.parsheet import hole_name

    assert to_data(ReferenceEngine(NY).analyse(hole)) == REFERENCE[hole_name(hole)]


def test_the_by_card_sums_are_32_bit_only_where_the_odds_keep_them_exact():
    """49 pairs hold a card; a round's value over its 46 middle cards is at most 46 (2 antes x 1 + 3 bets x 3 x
    the largest odds) in magnitude: NY's 500 to 1 gives 49 x 46 x 4,502 < 2**31, odds of 200,000 to 1 do not."""
    from controller.analysis import kernel

    multiples = np.array([1, 2, 3])
    ante = np.array([-1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1])
    assert kernel.by_card_dtype(ante, np.array([-1, 1, 1, 1, 2, 3, 5, 8, 12, 40, 500]), multiples) == np.int32
    assert kernel.by_card_dtype(ante, np.array([-1, 1, 1, 1, 2, 3, 5, 8, 12, 40, 200_000]), multiples) == np.int64
    assert 49 * 46 * (2 + 9 * 200_000) > 2**31 > 49 * 46 * (2 + 9 * 500)


@pytest.mark.parametrize("hole, unreachable", [(("7c", "2d"), {"straight", "flush", "straight_flush",
                                                                 "royal_flush"}),
                                               (("Ah", "Kh"), {"straight_flush"})])
def test_classes_no_line_makes_are_the_repeated_ones(hole, unreachable):
    """A line is the two cards held and three more: 7-2 offsuit makes no straight (3-4-5-6 is four cards) and
    no flush; A-K suited makes every class but a straight flush below the royal (it would hold neither)."""
    from controller.analysis import kernel_loops

    _, lines = ParSheetEngine(NY).tables(tuple(DECK.index(c) for c in hole))
    repeated = kernel_loops.repeated_classes(lines[0])
    assert {CLASS_NAMES[k] for k in range(len(CLASS_NAMES)) if repeated[k]} == unreachable


@pytest.mark.slow  # the loops compile once, about 16 s of CPU on a fresh checkout (then numba's cache)
@pytest.mark.parametrize("hole", [(12, 25), (3, 14)], ids=["AA", "53o"])
def test_one_hand_in_process_equals_the_former_engine_and_no_strategy_beats_it(hole):
    """The in-process run of the compiled engine (one width, the par sheet's own Python around it): a pair that raises 3x and a hand the published strategy
    folds equal the former engine's saved analysis (``REFERENCE``; masses above 2**24 as in the check of every
    class), the decision of ``policy`` is that of ``analyse``, and no simplified strategy (``strategy_values``,
    the same values ``analyse`` reports) is worth more than the optimal play, nor seeing a card less."""
    from controller.analysis.parsheet import hole_name

    engine = ParSheetEngine(NY)
    result = engine.analyse(hole)
    got, expected = to_data(result), REFERENCE[hole_name(hole)]
    for key in ("value", "across", "wager", "decisions", "returns", "seen"):
        assert got[key] == expected[key], key
    for key, old in expected["mass"].items():
        new = got["mass"][key]
        assert new == old or (old > 2**24 and abs(new - old) <= 2 * np.spacing(np.float32(old))), key
    assert engine.policy(hole)[0] == result.across == {(12, 25): 3, (3, 14): 0}[hole]
    by_pair = engine.strategy_values(hole)
    assert {name: float(v.sum()) for name, v in by_pair.items()} == result.strategies
    assert set(result.strategies) == set(STRATEGIES)
    assert all(value <= result.value for value in result.strategies.values())
    assert all(value >= result.value - 1e-6 * abs(result.value) for value in result.seen.values())


@pytest.mark.slow  # compiles the engine's loops twice, for each width: half a minute of CPU on a fresh checkout
@pytest.mark.parametrize("hole", [(12, 25), (3, 14)], ids=["AA", "53o"])
def test_32_and_64_bit_by_card_sums_give_the_same_analysis(hole):
    """The down-outside-card-seen values (the by-card sums' result) and the rest agree bit for bit."""
    narrow, wide = ParSheetEngine(NY), ParSheetEngine(NY)
    assert narrow.by_card_dtype == np.int32
    wide.by_card_dtype = np.int64
    assert to_data(narrow.analyse(hole)) == to_data(wide.analyse(hole))


@pytest.mark.slow
def test_the_return_table_adds_up_to_the_expected_value(ny_sheet):
    total = sum(row["return"] for row in ny_sheet.return_table)
    assert total == pytest.approx(float(ny_sheet.expected_value), abs=1e-12)
    assert ny_sheet.house_edge == -ny_sheet.expected_value / 2
    assert ny_sheet.element_of_risk == -ny_sheet.expected_value / ny_sheet.average_total_wager


@pytest.mark.slow
def test_decisions_and_average_wager_are_consistent(ny_sheet):
    d = ny_sheet.decisions
    assert sum(d["across"].values()) == pytest.approx(1)
    assert sum(d["down"].values()) == pytest.approx(1 - d["across"]["fold"])
    bets_down = sum(v for k, v in d["down"].items() if k != "fold")
    assert sum(d["middle"].values()) == pytest.approx(bets_down)
    wager = 2 + sum(int(k[:-1]) * v for step in d.values() for k, v in step.items() if k != "fold")
    assert float(ny_sheet.average_total_wager) == pytest.approx(wager, abs=1e-12)


@pytest.mark.slow
def test_published_strategy_fold_unsuited_unpaired_five_high_and_never_2x(ny_sheet):
    folds = {hand for hand, x in ny_sheet.across_strategy.items() if x == 0}
    five_high_offsuit = {a + b + "o" for a, b in itertools.combinations("5432", 2)}
    assert folds == five_high_offsuit
    assert all("2x" not in step for step in ny_sheet.decisions.values())


@pytest.mark.slow
def test_published_edge_when_the_middle_card_is_seen(ny_sheet):
    """Jacobson: seeing the middle card gives the player a 49.37% edge (of the two antes)."""
    assert round(100 * ny_sheet.seen_card_value["middle"] / 2, 2) == 49.37
    assert ny_sheet.seen_card_value["across_outside"] > float(ny_sheet.expected_value)
    assert ny_sheet.seen_card_value["down_outside"] > float(ny_sheet.expected_value)


@pytest.mark.slow
def test_the_shipped_strategy_is_the_computed_one(ny_sheet):
    strategy = OptimalStrategy(NY)
    assert strategy.path.exists()
    for hand, x in ny_sheet.across_strategy.items():
        hi, lo = RANKS.index(hand[0]), RANKS.index(hand[1])
        hole = [DECK[hi], DECK[lo + (0 if hand.endswith("s") else 13)]]
        assert strategy.across(hole) == x, hand
    fresh = ParSheetEngine(NY)
    for hole in [(12, 25), (5, 13), (10, 9), (3, 13 + 1)]:
        assert (fresh.solve(hole).choice_y == strategy._policies[hole][1]).all()


@pytest.mark.slow
def test_a_simulation_through_the_round_machine_agrees_with_the_exact_value(ny_sheet):
    tally = simulate("ny", 3000, seed=7)
    assert abs(tally.mean - float(ny_sheet.expected_value)) < 5 * tally.standard_error


@pytest.mark.slow
def test_json_report_has_the_documented_keys(ny_sheet):
    data = json.loads(report.to_json(ny_sheet))
    for key in ("expected_value_per_ante", "house_edge", "element_of_risk", "average_total_wager", "decisions",
                "return_table"):
        assert key in data
    assert data["house_edge"] == pytest.approx(float(ny_sheet.house_edge))
    assert data["source"].endswith("config/jurisdictions/ny.yaml")
    assert data["pay_tables"]["bet"]["royal_flush"] == 500 and data["pay_tables"]["five_card_bonus"]["royal_flush"] == 250
    assert sum(data["five_card_bonus"]["boards"].values()) == 2_598_960
    markdown = report.to_markdown(ny_sheet)
    assert "## Return table" in markdown and "```" in markdown and "| royal_flush | 1 | 500 | 250 |" in markdown
    text = report.to_text(ny_sheet)
    assert "pay tables from" in text and "fold at across" in text


@settings(max_examples=examples(50), deadline=None)
@given(st.randoms(use_true_random=False))
def test_decisions_do_not_depend_on_the_suits_names(rng):
    """Exact suit symmetry: renaming the suits of every card changes no decision."""
    strategy = _strategy()
    cards = rng.sample(range(52), 6)
    perm = rng.sample(range(4), 4)
    named = [DECK[c] for c in cards]
    renamed = [DECK[map_card(c, perm)] for c in cards]
    assert strategy.across(named[:2]) == strategy.across(renamed[:2])
    for x in (1, 3):
        assert strategy.down(named[:2], named[2:4], x) == strategy.down(renamed[:2], renamed[2:4], x)
    assert canonical(cards[:2])[0] == canonical([map_card(c, perm) for c in cards[:2]])[0]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(DECK), min_size=6, max_size=6, unique=True), st.sampled_from((1, 2, 3)),
       st.sampled_from((1, 2, 3)))
@example(["4c", "2d", "Ad", "3h", "3c", "4h"], 2, 3)  # 3x only because a 5 makes the across line a wheel
def test_the_middle_decision_is_the_best_over_the_46_middle_cards_by_the_real_settlement(cards, x, y):
    """``OptimalStrategy.middle`` against plain enumeration through ``settle_seat``: with the hand, the across
    and down pairs turned and bets ``x`` and ``y`` made, the middle bet (1x-3x, NY 9 NYCRR 5324.39(e)(7)) worth
    the most summed over the 46 unseen middle cards, the smallest of equally good ones, and a fold only when
    losing the 2 + x + y antes is strictly better."""
    hole, across, down = cards[:2], cards[2:4], cards[4:]
    unit = {"ante_across": 1, "ante_down": 1, "across": 1, "down": 1, "middle": 1}
    nets = [settle_seat(1, hole, Community(tuple(across), tuple(down), middle), unit, NY).wagers
            for middle in DECK if middle not in cards]
    fixed = sum(w["ante_across"].net + w["ante_down"].net + x * w["across"].net + y * w["down"].net for w in nets)
    middle = sum(w["middle"].net for w in nets)
    value = {z: fixed + z * middle for z in (1, 2, 3)}
    best = min((z for z in value if value[z] == max(value.values())))
    expected = 0 if -(2 + x + y) * len(nets) > value[best] else best
    assert _strategy().middle(hole, across, down, x, y) == expected


_CACHE = {}


def _strategy():
    if "s" not in _CACHE:
        _CACHE["s"] = OptimalStrategy(NY)
    return _CACHE["s"]


def test_a_pay_table_with_a_push_above_a_win_is_refused(tmp_path):
    """A push ranking above a win cannot be loaded (jacks or better must pay at least 1 to 1, NY 5324.39(f)(2));
    the par sheet's own guard refuses such a table if one is built in code."""
    from controller.analysis.parsheet import check_middle_rule

    data = yaml.safe_load((CONFIG_DIR / "jurisdictions" / "ny.yaml").read_text())
    data["pay_tables"]["bet"]["pays"]["pair_6s_to_10s"] = 1
    data["pay_tables"]["bet"]["pays"]["pair_jacks_or_better"] = "push"
    path = tmp_path / "odd.yaml"
    path.write_text(yaml.safe_dump(data))
    proc = subprocess.run([sys.executable, "-m", "controller", "par-sheet", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert "pair_jacks_or_better pays push, below the minimum 1 to 1" in proc.stderr and proc.stdout == ""
    with pytest.raises(ValueError, match="pushes all rank below its wins"):
        check_middle_rule(np.array([-1, 1, 0, 2, 3, 5, 8, 12, 40, 100, 500], dtype=np.float64))


def _line_code(cards):
    """The line's known cards (two of the player's, two turned) coded as in ``simplified.line_features``,
    written here from the cards' names: 5 two pair, three or four of a kind, 4 pair of jacks+, 3 pair of
    6s-10s, 2 pair of 2s-5s, 1 four to a flush, 0 nothing."""
    counts = {r: [c[0] for c in cards].count(r) for r in RANKS}
    pairs = [r for r, n in counts.items() if n == 2]
    if len(pairs) == 2 or max(counts.values()) >= 3:
        return 5
    if pairs:
        return 4 if pairs[0] in "JQKA" else 3 if pairs[0] in "6789T" else 2
    return 1 if len({c[1] for c in cards}) == 1 else 0


def _pairs_of_rest(hole):
    """The 50 cards left by ``hole`` (names) and their 1,225 pairs, enumerated here: ``(rest, p0, p1)`` as
    ``line_features`` takes them (card indexes of ``DECK``, each pair ``(rest[p0], rest[p1])``)."""
    rest = np.array([i for i, c in enumerate(DECK) if c not in hole], dtype=np.int64)
    p0, p1 = (np.array(side, dtype=np.int64) for side in zip(*itertools.combinations(range(50), 2)))
    return rest, p0, p1


@settings(max_examples=examples(40))
@given(st.lists(st.sampled_from(DECK), min_size=2, max_size=2, unique=True))
@example(["2s", "2c"])  # a pair in hand: lines of three and of four of a kind
@example(["Ah", "Kh"])
def test_line_features_code_every_line_as_its_cards_name_it(hole):
    """Each of the 1,225 lines of a hand (its two cards and two turned outside cards) is coded as the cards'
    names say (``_line_code``): pairs by rank, two pair, three or four of a kind, four to a flush."""
    rest, p0, p1 = _pairs_of_rest(hole)
    got = line_features(tuple(DECK.index(c) for c in hole), rest, p0, p1)
    assert got.tolist() == [_line_code([*hole, DECK[rest[a]], DECK[rest[b]]]) for a, b in zip(p0, p1)]


def _folds_by_the_published_rule(hole):
    """The Wizard of Odds' rule, from the cards' names: unsuited, unpaired, the larger card a 5 or lower."""
    (r0, s0), (r1, s1) = hole
    return s0 != s1 and r0 != r1 and max(RANKS.index(r0), RANKS.index(r1)) <= RANKS.index("5")


def test_the_published_across_rule_folds_the_72_five_high_unsuited_hands():
    """Two distinct ranks of 2-5 (4C2 = 6) in 4 x 4 - 4 = 12 unsuited ways: 72 of the 1,326 hands fold."""
    folds = {hole for hole in itertools.combinations(DECK, 2)
             if published_fold((DECK.index(hole[0]), DECK.index(hole[1])))}
    assert folds == {hole for hole in itertools.combinations(DECK, 2) if _folds_by_the_published_rule(hole)}
    assert len(folds) == 6 * 12


@pytest.mark.parametrize("hole", [("Ah", "Ad"), ("Qh", "Jh"), ("9c", "4d"), ("5s", "2h"), ("3d", "3c")])
def test_each_simplified_strategy_plays_as_its_description_says(hole):
    """``strategy_arrays`` against the rules written out from ``STRATEGIES`` and ``CARD`` with New York's
    multiples (1x-3x, 9 NYCRR 5324.39(e)): each strategy's across and down bets and its middle bet for every
    pair of line codes; a strategy that folds at the across decision is named among those folded."""
    pair = hole[0][0] == hole[1][0]
    fold = _folds_by_the_published_rule(hole)
    high = 3 if pair else 1
    shows_pair = lambda code: code >= 2  # noqa: E731 - the codes of _line_code: 2 to 5 hold a pair
    expected = {
        "always_1x": (1, 1, lambda ca, cd: 1),
        "pair_3x": (high, high, lambda ca, cd: 3 if shows_pair(ca) or shows_pair(cd) else 1),
        "across_fold_rule": (0 if fold else 1, 1, lambda ca, cd: 1),
        "card": (0 if fold else high, high, lambda ca, cd: 3 if {ca, cd} & {1, 3, 4, 5} else 1),
    }
    features = np.arange(7)
    names, folded, (xs, ys, passed, middle) = strategy_arrays(
        tuple(DECK.index(c) for c in hole), features, NY.bet_multiples)
    assert passed is features
    assert folded == [name for name, (x, _, _) in expected.items() if x == 0]
    assert names == [name for name, (x, _, _) in expected.items() if x]
    for row, name in enumerate(names):
        x, y, rule = expected[name]
        assert (xs[row], ys[row]) == (x, y), name
        assert middle[row].tolist() == [[rule(ca, cd) for cd in range(6)] for ca in range(6)], name


def test_strategies_that_play_alike_are_valued_once():
    """Where the published rule does not fold, ``across_fold_rule`` plays exactly as ``always_1x``: one row for
    both; on a hand it folds, each strategy that plays is a row of its own."""
    def distinct(hole):
        names, _, (xs, ys, _, middle) = strategy_arrays(tuple(DECK.index(c) for c in hole), np.zeros(0), (1, 2, 3))
        keep, row_of = distinct_strategies(xs, ys, middle)
        return names, keep, row_of.tolist()

    names, keep, row_of = distinct(("9c", "4d"))
    assert names == ["always_1x", "pair_3x", "across_fold_rule", "card"]
    assert keep == [0, 1, 3] and row_of == [0, 1, 0, 2]
    names, keep, row_of = distinct(("5s", "2h"))
    assert names == ["always_1x", "pair_3x"] and keep == [0, 1] and row_of == [0, 1]


@pytest.mark.parametrize("hole, across", [(("Qh", "Jh"), ("Th", "2c")), (("8s", "8d"), ("Ac", "3h")),
                                          (("4c", "2d"), ("4d", "Ks"))])
@pytest.mark.slow
def test_simplified_strategies_match_plain_enumeration(hole, across):
    """Each simplified strategy's value for one hand and across pair, by plain enumeration through the real
    settlement, with its rules written out here from their descriptions (simplified.STRATEGIES, CARD)."""
    engine = ParSheetEngine(NY)
    index = {c: i for i, c in enumerate(DECK)}
    rep = (index[hole[0]], index[hole[1]])
    rest = [c for c in range(52) if c not in rep]
    got = engine.strategy_values(rep)
    a = pair_index(rest, [index[c] for c in across])
    sums = _plain_sums(hole, across)
    pair = hole[0][0] == hole[1][0]
    folds = hole[0][1] != hole[1][1] and not pair and max(RANKS.index(c[0]) for c in hole) <= RANKS.index("5")
    code_a = _line_code([*hole, *across])

    def value(x, y, middle_rule):
        if x == 0:
            return -2 * SCALE2
        total = 0
        for down, (antes, a_bet, d_bet, middle) in sums:
            z = middle_rule(code_a, _line_code([*hole, *down]))
            total += antes + x * a_bet + y * d_bet + z * middle
        return total

    high = 3 if pair else 1
    assert got["always_1x"][a] == value(1, 1, lambda *_: 1)
    assert got["pair_3x"][a] == value(high, high, lambda ca, cd: 3 if max(ca, cd) >= 2 else 1)
    assert got["across_fold_rule"][a] == value(0 if folds else 1, 1, lambda *_: 1)
    assert got["card"][a] == value(0 if folds else high, high,
                                   lambda ca, cd: 3 if max(ca, cd) >= 3 or 1 in (ca, cd) else 1)
    never_fold = {x: max(sum(antes + x * a_bet + y * d_bet + max(middle, 3 * middle)
                             for _, (antes, a_bet, d_bet, middle) in sums) for y in (1, 2, 3)) for x in (1, 2, 3)}
    assert got["never_fold"][a] in never_fold.values()


@pytest.mark.slow
def test_simplified_strategies_in_the_reports(ny_sheet):
    """Every simplified strategy is worth less than the optimal one (which is the most a strategy can be
    worth), the card least of all; the JSON, text and Markdown reports carry the section and the card."""
    values = ny_sheet.strategies
    assert list(values) == list(STRATEGIES)
    assert all(v < ny_sheet.expected_value for v in values.values())
    assert max(values.values()) == values["card"]
    data = json.loads(report.to_json(ny_sheet))
    rows = {row["name"]: row for row in data["simplified_strategies"]}
    assert set(rows) == set(STRATEGIES) and data["strategy_card"] == list(CARD)
    for name, row in rows.items():
        assert Fraction(row["cost_fraction"]) == ny_sheet.expected_value - values[name] > 0
        assert Fraction(row["expected_value_fraction"]) == values[name]
    markdown = report.to_markdown(ny_sheet)
    assert "## Simplified strategies" in markdown and f"- {CARD[0]}" in markdown
    assert "strategy card:" in report.to_text(ny_sheet)


@pytest.mark.slow
def test_never_folding_costs_the_folds_and_always_1x_costs_more(ny_sheet):
    """Never folding keeps the best bets, so it beats betting 1x throughout; the published across fold rule
    added to 1x throughout is worth more than 1x throughout (the folded hands lose 2 antes instead of more)."""
    v = ny_sheet.strategies
    assert v["always_1x"] < v["across_fold_rule"] and v["always_1x"] < v["never_fold"]


@pytest.mark.slow
@pytest.mark.timeout(1200)  # two par sheets beside the module's: a minute on two quiet cores, more on a busy machine
def test_a_searched_bet_table_recomputed_by_the_par_sheet_has_the_printed_edge(ny_sheet, tmp_path):
    """``paytable design --vary bet``: the table printed first, written to a file and loaded as a pay table,
    has exactly the printed house edge when the par sheet is computed again from that file; it pays no hand
    below NY 5324.39(f)(2) and is nearer the target than the minimum table."""
    import re

    from controller.analysis import paytable_design
    from controller.game.minimums import REGULATIONS, odds_value

    target = Fraction(3, 100)
    found = paytable_design.design(NY, "bet", target, check=1,
                                   par_sheet=lambda j: ny_sheet if j is NY else compute_par_sheet(j))
    text = paytable_design.format_designs(NY, "bet", target, found)
    printed = Fraction(re.search(r"^1\. house edge (\d+/\d+) = ", text, re.M).group(1))
    path = tmp_path / "bet.yaml"
    paytable_design.write_paytable(NY, "bet", found[0], target, path)
    designed = load_jurisdiction(path)
    assert designed.bet.pays == found[0].pays and designed.five_card_bonus.pays == NY.five_card_bonus.pays
    minimum = REGULATIONS["ny"].minimums["bet"].pays
    assert all(odds_value(designed.bet.pays[h]) >= odds_value(minimum[h]) for h in PAY_HANDS)
    assert compute_par_sheet(designed).house_edge == printed
    assert abs(printed - target) < abs(ny_sheet.house_edge - target)
