"""Three-card hands of NJ 13:69F-25.5(c) (the optional three-card wager): controller.game.hands.evaluate_three.

Sources of truth: the text of NJ (c)1-5, the textbook counts of the 22,100 three-card hands (straight flush 48,
three of a kind 52, straight 720, flush 1,096, pair 3,744, high card 16,440), and an independent classifier
written here from the definitions (sets of ranks and suits), used only as a test oracle.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.cards import CardError
from controller.game.hands import THREE_CARD_CATEGORIES, evaluate_three
from tests.examples import examples

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK = tuple(r + s for r in RANKS for s in SUITS)

# NJ 13:69F-25.5(c)3: consecutive rank, the ace low in A-2-3 or high in Q-K-A, never K-A-2.
RUNS = [set("A23")] + [set(RANKS[i:i + 3]) for i in range(len(RANKS) - 2)]


def oracle(cards) -> str:
    """NJ 13:69F-25.5(c)1-5 read directly: a set-of-ranks test for a run, a set-of-suits test for a flush."""
    ranks = [c[0] for c in cards]
    suited = len({c[1] for c in cards}) == 1
    run = set(ranks) in RUNS and len(set(ranks)) == 3
    if run and suited:
        return "straight_flush"
    if len(set(ranks)) == 1:
        return "three_of_a_kind"
    if run:
        return "straight"
    if suited:
        return "flush"
    if len(set(ranks)) == 2:
        return "pair"
    return "high_card"


def test_categories_in_the_order_of_nj_13_69f_25_5_c():
    """NJ 13:69F-25.5(c) lists straight flush, three of a kind, straight, flush, pair (highest first)."""
    assert THREE_CARD_CATEGORIES == ("high_card", "pair", "flush", "straight", "three_of_a_kind", "straight_flush")


def test_exhaustive_counts_of_all_22100_hands():
    """All C(52,3) = 22,100 hands give the textbook counts, and each agrees with the oracle."""
    counts = Counter()
    for hand in itertools.combinations(DECK, 3):
        category = evaluate_three(hand).category
        assert category == oracle(hand), hand
        counts[category] += 1
    assert counts == {"straight_flush": 48, "three_of_a_kind": 52, "straight": 720, "flush": 1_096,
                      "pair": 3_744, "high_card": 16_440}


@pytest.mark.parametrize("hand,category", [
    ("Ah 2d 3c", "straight"),  # (c)3: A-2-3 counts
    ("Qh Kd Ac", "straight"),  # Q-K-A counts
    ("Kh Ad 2c", "high_card"),  # "an ace may not be combined with a king and two"
    ("Kh Ah 2h", "flush"),  # suited K-A-2 is a flush, not a straight flush ((c)4)
    ("Ah 2h 3h", "straight_flush"),  # (c)1
    ("Qs Ks As", "straight_flush"),
    ("7c 7d 7h", "three_of_a_kind"),  # (c)2
    ("2h 5h 9h", "flush"),  # (c)4: suited, not consecutive
    ("9c 9d Ah", "pair"),  # (c)5
    ("2c 7d Kh", "high_card"),
])
def test_constructed_hands_nj_13_69f_25_5_c(hand, category):
    assert evaluate_three(hand.split()).category == category


def test_order_between_and_within_categories():
    """Categories rank as NJ (c) lists them; within one, the highest card not in the other hand decides
    (NY 5324.39(b)(3) read for three cards); A-2-3 is the lowest straight, Q-K-A the highest."""
    ladder = ["Ac Kd 9h", "2c 2d 3h", "2h 3h 5h", "Ah 2d 3c", "2c 2d 2h", "Ah 2h 3h"]
    values = [evaluate_three(h.split()) for h in ladder]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert evaluate_three("Ah 2d 3c".split()) < evaluate_three("2h 3d 4c".split()) < evaluate_three("Qh Kd Ac".split())
    assert evaluate_three("9c 9d Ah".split()) > evaluate_three("9h 9s Kh".split()) > evaluate_three("8c 8d Ah".split())
    assert evaluate_three("Ac Kd 9h".split()) == evaluate_three("As Kh 9c".split())


@pytest.mark.parametrize("cards", [["Ah", "Kd"], ["Ah", "Kd", "Qc", "Js"], ["Ah", "Ah", "Qc"], ["Ah", "Kd", "1c"]])
def test_anything_but_three_distinct_cards_is_refused(cards):
    with pytest.raises(CardError):
        evaluate_three(cards)


HAND = st.lists(st.sampled_from(DECK), min_size=3, max_size=3, unique=True)


@settings(max_examples=examples(400))
@given(hand=HAND, perm=st.permutations(SUITS), data=st.data())
def test_property_suits_and_order_never_matter(hand, perm, data):
    """Suits are equal in rank (NJ 13:69F-25.5(a)); relabelling them or reordering the cards changes nothing."""
    mapping = dict(zip(SUITS, perm))
    relabelled = [c[0] + mapping[c[1]] for c in data.draw(st.permutations(hand))]
    assert evaluate_three(relabelled) == evaluate_three(hand)


@settings(max_examples=examples(400))
@given(a=HAND, b=HAND)
def test_property_category_order_follows_nj_list(a, b):
    """Two hands of different categories (oracle) compare as NJ (c) lists the categories."""
    order = ["high_card", "pair", "flush", "straight", "three_of_a_kind", "straight_flush"]
    ca, cb = oracle(a), oracle(b)
    if ca != cb:
        assert (evaluate_three(a) < evaluate_three(b)) == (order.index(ca) < order.index(cb))
