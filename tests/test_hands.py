"""Hand evaluation tests for controller/game/hands.py.

Sources of truth (never the code's own output):

* NY 5324.39(b)(1): ace high; "an ace may not be combined with any other sequence" (read as: no
  wrap-around; the wheel A-2-3-4-5 is the lowest straight, NY (b)(2)(ii),(vi)).
* NY 5324.39(b)(2): the hand categories, highest to lowest.
* NY 5324.39(b)(3): hands of identical rank are compared by the highest card not in the other hand;
  hands still equal are a push (equal). Suits never matter.
* Textbook frequencies of the 2,598,960 five-card hands.
* phevaluator, used only as an oracle (lower number = stronger hand).
"""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phevaluator import evaluate_cards

from controller.game.cards import CardError
from controller.game.hands import CATEGORIES, evaluate
from tests.examples import examples

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK = tuple(r + s for r in RANKS for s in SUITS)


def ev(text: str):
    return evaluate(text.split())


def cat(text: str) -> str:
    return ev(text).category


def phe_category(cards) -> str:
    """Category from phevaluator's rank bands (oracle)."""
    rank = evaluate_cards(*cards)
    if rank == 1:
        return "royal_flush"
    if rank <= 10:
        return "straight_flush"
    if rank <= 166:
        return "four_of_a_kind"
    if rank <= 322:
        return "full_house"
    if rank <= 1599:
        return "flush"
    if rank <= 1609:
        return "straight"
    if rank <= 2467:
        return "three_of_a_kind"
    if rank <= 3325:
        return "two_pair"
    if rank <= 6185:
        return "pair"
    return "high_card"


# --------------------------------------------------------------------------- categories


def test_categories_lowest_to_highest_ny_5324_39_b_2():
    """NY 5324.39(b)(2) lists royal flush .. pair highest to lowest; plus "high card" below a pair."""
    assert CATEGORIES == (
        "high_card",
        "pair",
        "two_pair",
        "three_of_a_kind",
        "straight",
        "flush",
        "full_house",
        "four_of_a_kind",
        "straight_flush",
        "royal_flush",
    )


# One hand per category, lowest to highest (each constructed by hand from NY 5324.39(b)(2)).
REPRESENTATIVES = [
    ("Ah Kd Qc Jh 9s", "high_card"),
    ("2c 2d 3h 4s 5c", "pair"),  # note: contains 2-3-4-5, but a pair, not a straight
    ("2c 2d 3h 3s 4c", "two_pair"),
    ("2c 2d 2h 3s 4c", "three_of_a_kind"),
    ("Ah 2d 3c 4s 5h", "straight"),  # the wheel
    ("2h 3h 4h 5h 7h", "flush"),
    ("2c 2d 2h 3s 3c", "full_house"),
    ("2c 2d 2h 2s 3c", "four_of_a_kind"),
    ("Ad 2d 3d 4d 5d", "straight_flush"),  # the steel wheel
    ("Ac Kc Qc Jc Tc", "royal_flush"),
]


@pytest.mark.parametrize("hand,category", REPRESENTATIVES)
def test_category_of_constructed_hands_ny_5324_39_b_2(hand, category):
    """NY 5324.39(b)(2)(i)-(ix): each constructed hand has the named category."""
    assert cat(hand) == category
    assert phe_category(hand.split()) == category  # oracle agrees with the construction


def test_lowest_of_each_category_beats_highest_of_the_one_below_ny_5324_39_b_2():
    """NY 5324.39(b)(2): the categories are ordered; even the lowest hand of a category beats the best
    hand of the category below it."""
    lowest_and_highest = [
        ("7c 5d 4h 3s 2c", "Ac Kd Qh Js 9c"),  # high card
        ("2c 2d 3h 4s 5c", "Ac Ad Kh Qs Jc"),  # pair
        ("3c 3d 2h 2s 4c", "Ac Ad Kh Ks Qc"),  # two pair
        ("2c 2d 2h 3s 4c", "Ac Ad Ah Ks Qc"),  # trips
        ("Ac 2d 3h 4s 5c", "Ac Kd Qh Js Tc"),  # straight: wheel .. broadway
        ("2h 3h 4h 5h 7h", "Ah Kh Qh Jh 9h"),  # flush
        ("2c 2d 2h 3s 3c", "Ac Ad Ah Ks Kc"),  # full house
        ("2c 2d 2h 2s 3c", "Ac Ad Ah As Kc"),  # quads
        ("Ad 2d 3d 4d 5d", "Kd Qd Jd Td 9d"),  # straight flush
        ("As Ks Qs Js Ts", "Ah Kh Qh Jh Th"),  # royal
    ]
    for i in range(len(lowest_and_highest) - 1):
        best_below = ev(lowest_and_highest[i][1])
        worst_above = ev(lowest_and_highest[i + 1][0])
        assert best_below < worst_above, (lowest_and_highest[i][1], lowest_and_highest[i + 1][0])
        assert worst_above > best_below
        assert not worst_above == best_below


# --------------------------------------------------------------------------- exhaustive count


@pytest.mark.slow
def test_exhaustive_counts_and_order_agree_with_textbook_and_phevaluator():
    """All C(52,5) = 2,598,960 five-card hands, one pass:

    * the textbook frequency of each category (NY 5324.39(b)(2) definitions, ace high or low for straights,
      no wrap-around), and each of the 13 pair ranks in 1,098,240 / 13 = 84,480 'pair' hands
      (C(4,2) * C(12,3) * 4^3), with pair_rank None for every other category;
    * the total order of NY 5324.39(b)(3) agrees with phevaluator on every hand: hands with equal values
      have equal oracle ranks and hands with different values different ones (7,462 classes each way), and
      sorting the classes by our value sorts the oracle's rank numbers strictly downwards (lower = stronger).
      Together these say: for any two of the 2,598,960 hands, <, == and > agree with the oracle."""
    expected = {
        "royal_flush": 4,
        "straight_flush": 36,
        "four_of_a_kind": 624,
        "full_house": 3_744,
        "flush": 5_108,
        "straight": 10_200,
        "three_of_a_kind": 54_912,
        "two_pair": 123_552,
        "pair": 1_098_240,
        "high_card": 1_302_540,
    }
    assert sum(expected.values()) == 2_598_960
    started = time.perf_counter()
    counts = Counter()
    oracle_of: dict = {}  # our value -> the oracle's rank number
    mismatches = []
    for ids in itertools.combinations(range(52), 5):  # DECK index = rank * 4 + suit, phevaluator's card ids
        value = evaluate([DECK[i] for i in ids])
        counts[value.category, value.pair_rank] += 1
        rank = evaluate_cards(*ids)
        if oracle_of.setdefault(value, rank) != rank and len(mismatches) < 5:
            mismatches.append(([DECK[i] for i in ids], value, rank, oracle_of[value]))
    elapsed = time.perf_counter() - started
    print(f"exhaustive enumeration of 2,598,960 hands (with the oracle) took {elapsed:.1f} s")
    by_category = Counter()
    for (category, _), n in counts.items():
        by_category[category] += n
    assert dict(by_category) == expected
    assert {r: counts["pair", r] for r in RANKS} == {r: 84_480 for r in RANKS}
    for category in expected:
        if category != "pair":
            assert counts[category, None] == expected[category]
    assert mismatches == []  # equal values -> equal oracle ranks
    assert len(oracle_of) == 7_462 and len(set(oracle_of.values())) == 7_462  # and different -> different
    oracle_by_value = [oracle_of[v] for v in sorted(oracle_of)]
    assert all(a > b for a, b in itertools.pairwise(oracle_by_value))  # the same order


# --------------------------------------------------------------------------- wheel and wrap-around


@pytest.mark.parametrize(
    "hand,category",
    [
        ("Ah 2d 3c 4s 5h", "straight"),
        ("5h 4s 3c 2d Ah", "straight"),
        ("Ah 2h 3h 4h 5h", "straight_flush"),
        ("Ac 5c 3c 2c 4c", "straight_flush"),
    ],
)
def test_wheel_is_a_straight_ny_5324_39_b_2_ii_vi(hand, category):
    """NY 5324.39(b)(2)(ii),(vi): 'an ace, 2, 3 and 4' (and 5) is the lowest straight / straight flush."""
    assert cat(hand) == category


def test_wheel_is_the_lowest_straight_ny_5324_39_b_2_vi():
    """NY 5324.39(b)(2)(vi): the wheel is below 6-high and every other straight; above any trips."""
    wheel = ev("Ah 2d 3c 4s 5h")
    assert wheel < ev("2h 3d 4c 5s 6h")
    assert wheel < ev("Th Jd Qc Ks Ah")
    assert wheel > ev("Ah Ad Ac Ks Qh")
    # all wheels are equal whatever the suits (NY (b)(3): equal rank -> push)
    assert wheel == ev("Ac 2c 3d 4h 5s")


def test_wheel_is_the_lowest_straight_flush_ny_5324_39_b_2_ii():
    """NY 5324.39(b)(2)(ii): the steel wheel is the lowest straight flush, still above four aces."""
    steel = ev("Ah 2h 3h 4h 5h")
    assert steel < ev("2s 3s 4s 5s 6s")
    assert steel < ev("9c Tc Jc Qc Kc")
    assert steel > ev("Ah Ad Ac As Kh")
    assert steel == ev("Ad 2d 3d 4d 5d")


@pytest.mark.parametrize(
    "hand",
    [
        "Qh Kd Ac 2s 3h",  # Q-K-A-2-3
        "Kh Ad 2c 3s 4h",  # K-A-2-3-4
        "Jh Qd Kc As 2h",  # J-Q-K-A-2
    ],
)
def test_no_wrap_around_offsuit_ny_5324_39_b_1(hand):
    """NY 5324.39(b)(1): an ace may not be combined with any other sequence -> no wrap-around straight."""
    assert cat(hand) == "high_card"
    assert ev(hand) < ev("Ah 2d 3c 4s 5h")


@pytest.mark.parametrize("hand", ["Qh Kh Ah 2h 3h", "Kd Ad 2d 3d 4d", "Js Qs Ks As 2s"])
def test_no_wrap_around_suited_is_only_a_flush_ny_5324_39_b_1(hand):
    """NY 5324.39(b)(1): a suited wrap-around is a flush, not a straight flush."""
    assert cat(hand) == "flush"


def test_broadway_and_royal_ny_5324_39_b_2_i_vi():
    """NY 5324.39(b)(2)(i),(vi): A-K-Q-J-T offsuit is the top straight; suited it is the royal flush."""
    assert cat("Ah Kd Qc Js Th") == "straight"
    assert ev("Ah Kd Qc Js Th") > ev("Kh Qd Jc Ts 9h")
    for s in SUITS:
        assert cat(f"A{s} K{s} Q{s} J{s} T{s}") == "royal_flush"
    assert cat("Kh Qh Jh Th 9h") == "straight_flush"
    assert ev("Ah Kh Qh Jh Th") > ev("Kh Qh Jh Th 9h")
    assert ev("Ah Kh Qh Jh Th") == ev("As Ks Qs Js Ts")


# --------------------------------------------------------------------------- pair_rank


@pytest.mark.parametrize(
    "hand,rank",
    [("Jh Jd 7d 2c Kc", "J"), ("6c 6d 2h 9s Kc", "6"), ("Tc Td 2h 9s Kc", "T"), ("Ac Ad 2h 9s Kc", "A"),
     ("2c 2d 3h 4s 5c", "2"), ("5c 5d 2h 9s Kc", "5")],
)
def test_pair_rank_is_the_rank_of_the_pair(hand, rank):
    """Contract: for a 'pair', pair_rank is the pair's rank character (the pay tables of NY 5324.39(f)
    depend on it: 6s-10s push, jacks or better win)."""
    value = ev(hand)
    assert value.category == "pair"
    assert value.pair_rank == rank


@pytest.mark.parametrize("hand", [h for h, c in REPRESENTATIVES if c != "pair"])
def test_pair_rank_is_none_for_other_categories(hand):
    """Contract: pair_rank is None for every category but 'pair' (including two pair, full house)."""
    assert ev(hand).pair_rank is None


# --------------------------------------------------------------------------- NY (b)(3) tie-breaks


@pytest.mark.parametrize(
    "higher,lower",
    [
        # high card: highest card, then the next highest not in the other hand
        ("Ah 9d 7c 4s 2h", "Kh Qd Jc 9s 7h"),
        ("Ah Kd 7c 4s 2h", "Ac Qd Jc 9s 7h"),
        ("Ah Kd Qc Js 9h", "As Kc Qd Jh 8s"),
        ("Ah Kd Qc Js 3h", "As Kc Qd Jh 2s"),
        # pair: the pair first, then kickers
        ("Jh Jd Ac 4s 2h", "Jc Js Kc Qs Th"),
        ("Jh Jd Ac 5s 2h", "Jc Js Ad 4h 3h"),
        ("Jh Jd Ac Ks 3h", "Jc Js Ad Kh 2h"),
        ("Qh Qd 2c 3s 4h", "Jc Js Ad Kh 9h"),
        # two pair: higher pair, then lower pair, then kicker
        ("Kh Kd 2c 2s 3h", "Qc Qs Jd Jh Ah"),
        ("Kh Kd 3c 3s 2h", "Kc Ks 2d 2h Ah"),
        ("Kh Kd 3c 3s 5h", "Kc Ks 3d 3h 4h"),
        # trips
        ("3h 3d 3c 2s 4h", "2c 2s 2d Ah Kh"),
        ("9h 9d 9c Ks 2h", "9c 9s 9d Qh Jh"),
        # straights by their top card
        ("2h 3d 4c 5s 6h", "Ah 2d 3c 4s 5h"),
        ("Th Jd Qc Ks Ah", "9h Td Jc Qs Kh"),
        # flush: highest card, then the next...
        ("Ah 2h 3h 4h 6h", "Kd Qd Jd Td 8d"),
        ("Ah Kh 3h 4h 6h", "Ad Kd 3d 4d 5d"),
        # full house by the trips, then the pair
        ("3h 3d 3c 2s 2h", "2c 2s 2d Ah Ad"),
        ("3h 3d 3c As Ah", "3c 3s 3d Kh Kd"),
        # quads, then kicker
        ("3h 3d 3c 3s 2h", "2c 2s 2d 2h Ah"),
        ("9h 9d 9c 9s Ah", "9c 9s 9d 9h Kh"),
        # straight flushes by top card
        ("2h 3h 4h 5h 6h", "Ad 2d 3d 4d 5d"),
        ("9c Tc Jc Qc Kc", "8d 9d Td Jd Qd"),
    ],
)
def test_tie_break_highest_card_not_in_the_other_hand_ny_5324_39_b_3(higher, lower):
    """NY 5324.39(b)(3): within a category the hand with the highest-ranking card not in the other
    hand is higher (ranks that matter: pair/trips/quads rank first, then kickers)."""
    h, lo = ev(higher), ev(lower)
    assert h.category == lo.category
    assert h > lo
    assert lo < h
    assert not h == lo
    assert not h < lo


@pytest.mark.parametrize(
    "one,other",
    [
        ("Ah Kd 7c 4s 2h", "Ac Kh 7d 4c 2s"),
        ("Jh Jd 7d 2c Kc", "Jc Js 7h 2d Kd"),
        ("8h 8d 3c 3s Kh", "8c 8s 3d 3h Kd"),
        ("2h 3d 4c 5s 6h", "2c 3c 4d 5d 6s"),
        ("Ah Qh 9h 5h 3h", "Ad Qd 9d 5d 3d"),
        ("Ah 2d 3c 4s 5h", "5c 4d 3h 2s Ac"),
        ("Kh Qh Jh Th 9h", "Kc Qc Jc Tc 9c"),
    ],
)
def test_equal_hands_are_equal_suits_never_matter_ny_5324_39_b_3(one, other):
    """NY 5324.39(b)(3): hands still equal after the comparison are a push; suits play no part."""
    a, b = ev(one), ev(other)
    assert a == b
    assert not a < b
    assert not a > b


def test_card_order_does_not_matter():
    """A hand is a set of five cards: every order gives an equal value."""
    hand = "Jh Jd 7d 2c Kc".split()
    base = evaluate(hand)
    for perm in itertools.permutations(hand):
        assert evaluate(list(perm)) == base


def test_sorting_is_a_total_order_consistent_with_phevaluator():
    """Sorting a sample of hands with the evaluator gives the same order as the oracle's rank numbers."""
    rng = random.Random(5324)
    hands = [tuple(rng.sample(DECK, 5)) for _ in range(400)]
    hands += [tuple(h.split()) for h, _ in REPRESENTATIVES]
    by_code = sorted(hands, key=evaluate)
    oracle_keys = [-evaluate_cards(*h) for h in by_code]
    assert oracle_keys == sorted(oracle_keys)


# --------------------------------------------------------------------------- invalid input


@pytest.mark.parametrize(
    "cards",
    [
        ["Ah", "Kd", "Qc", "Js"],  # 4 cards
        ["Ah", "Kd", "Qc", "Js", "Th", "9h"],  # 6 cards
        ["Ah", "Ah", "Qc", "Js", "Th"],  # duplicate
        ["Ah", "Kd", "Qc", "Js", "10h"],  # bad card
        ["Ah", "Kd", "Qc", "Js", "ah"],  # bad case
    ],
)
def test_evaluate_rejects_anything_but_five_distinct_cards(cards):
    """Contract: evaluate takes exactly 5 distinct cards, else CardError (one deck, NY 5324.39(a)(1))."""
    with pytest.raises(CardError):
        evaluate(cards)


# --------------------------------------------------------------------------- properties vs phevaluator

CARD = st.sampled_from(DECK)
RANDOM_HAND = st.lists(CARD, min_size=5, max_size=5, unique=True)


@st.composite
def flush_hand(draw):
    suit = draw(st.sampled_from(SUITS))
    ranks = draw(st.lists(st.sampled_from(RANKS), min_size=5, max_size=5, unique=True))
    return [r + suit for r in ranks]


@st.composite
def run_hand(draw):
    """Five consecutive ranks (wheel and wrap-arounds included) with random suits."""
    start = draw(st.integers(min_value=0, max_value=len(RANKS) - 1))
    # start 12 = A-2-3-4-5 (wheel); 8 = T-J-Q-K-A; 9..11 = the wrap-arounds J-Q-K-A-2, Q-K-A-2-3, K-A-2-3-4
    ranks = [RANKS[(start + i) % len(RANKS)] for i in range(5)]
    suited = draw(st.booleans())
    if suited:
        s = draw(st.sampled_from(SUITS))
        return [r + s for r in ranks]
    return [r + draw(st.sampled_from(SUITS)) for r in ranks]


@st.composite
def grouped_hand(draw):
    """Hands with repeated ranks (pairs, two pair, trips, full houses, quads)."""
    shape = draw(st.sampled_from([(2, 1, 1, 1), (2, 2, 1), (3, 1, 1), (3, 2), (4, 1)]))
    ranks = draw(st.lists(st.sampled_from(RANKS), min_size=len(shape), max_size=len(shape), unique=True))
    cards = []
    for rank, n in zip(ranks, shape):
        suits = draw(st.lists(st.sampled_from(SUITS), min_size=n, max_size=n, unique=True))
        cards += [rank + s for s in suits]
    return draw(st.permutations(cards))


HAND = st.one_of(RANDOM_HAND, flush_hand(), run_hand(), grouped_hand())


@settings(max_examples=examples(1500))
@given(hand=HAND)
def test_property_category_agrees_with_phevaluator_bands(hand):
    """NY 5324.39(b)(2): the category agrees with the oracle's rank band (and royal = rank 1)."""
    assert evaluate(hand).category == phe_category(hand)


@settings(max_examples=examples(1500))
@given(a=HAND, b=HAND)
def test_property_order_agrees_with_phevaluator(a, b):
    """NY 5324.39(b)(2),(b)(3): for any two hands, <, > and == agree with the oracle
    (lower phevaluator number = stronger hand; equal numbers = equal hands = push)."""
    va, vb = evaluate(a), evaluate(b)
    ra, rb = evaluate_cards(*a), evaluate_cards(*b)
    assert (va > vb) == (ra < rb)
    assert (va < vb) == (ra > rb)
    assert (va == vb) == (ra == rb)


@settings(max_examples=examples(500))
@given(hand=HAND, perm=st.permutations(SUITS))
def test_property_suits_never_matter(hand, perm):
    """NY 5324.39(b)(3) and (b)(2)(v): relabelling the suits consistently gives an equal hand."""
    mapping = dict(zip(SUITS, perm))
    relabelled = [c[0] + mapping[c[1]] for c in hand]
    assert evaluate(relabelled) == evaluate(hand)
    assert evaluate(relabelled).category == evaluate(hand).category


@settings(max_examples=examples(300))
@given(hand=HAND, data=st.data())
def test_property_card_order_never_matters(hand, data):
    """The five cards are a set: any order gives an equal value with the same category and pair rank."""
    shuffled = data.draw(st.permutations(hand))
    a, b = evaluate(hand), evaluate(shuffled)
    assert a == b
    assert (a.category, a.pair_rank) == (b.category, b.pair_rank)


@settings(max_examples=examples(500))
@given(hand=st.one_of(grouped_hand(), RANDOM_HAND))
def test_property_pair_rank_matches_the_repeated_rank(hand):
    """Contract: pair_rank is the rank with two cards for a 'pair', None otherwise."""
    value = evaluate(hand)
    counts = Counter(c[0] for c in hand)
    if value.category == "pair":
        (rank,) = [r for r, n in counts.items() if n == 2]
        assert value.pair_rank == rank
    else:
        assert value.pair_rank is None


# --------------------------------------------------------------------------- every multiset of ranks


def _by_definition(ranks: list[int], suited: bool, wheel: bool) -> tuple[str, tuple[int, ...]]:
    """Category and tie-break ranks from NY 5324.39(b)(2),(3) read directly: group equal ranks, the largest
    group first and then the higher rank; five different ranks in sequence are a straight (the wheel A-2-3-4-5
    5-high when allowed); five suited cards a flush, a suited straight a straight flush, ace-high a royal."""
    counts = Counter(ranks)
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    shape = [c for _, c in groups]
    order = tuple(r for r, _ in groups)
    named = {(4, 1): "four_of_a_kind", (3, 2): "full_house", (3, 1, 1): "three_of_a_kind", (2, 2, 1): "two_pair",
             (2, 1, 1, 1): "pair"}
    if tuple(shape) in named:
        return named[tuple(shape)], order
    top = None
    if order[0] - order[4] == 4:
        top = order[0]
    elif wheel and order == (12, 3, 2, 1, 0):
        top = 3
    if top is not None and suited:
        return ("royal_flush" if top == 12 else "straight_flush"), (top,)
    if suited:
        return "flush", order
    return ("straight", (top,)) if top is not None else ("high_card", order)


class _Cards(list):
    """A sequence of cards that is neither a list nor a tuple (``evaluate`` takes another path for it)."""


@pytest.mark.parametrize("wheel", [True, False])
def test_every_multiset_of_ranks_suited_and_not_as_the_rules_define_it(wheel):
    """All 6,175 multisets of five ranks one deck can deal, off suit, and the 1,287 of five different ranks also
    suited, in a shuffled card order, as a list, a tuple and another sequence: ``evaluate`` gives the category
    and tie-break ranks the definitions give (``_by_definition``), with and without the wheel."""
    rng = random.Random(5)
    checked = 0
    for ranks in itertools.combinations_with_replacement(range(13), 5):
        if ranks[0] == ranks[4]:
            continue
        if len(set(ranks)) == 5:  # off suit: four clubs and a diamond; suited: one suit drawn
            off_suit = [RANKS[r] + ("c" if i < 4 else "d") for i, r in enumerate(ranks)]
            suit = rng.choice(SUITS)
            hands = [(off_suit, False), ([RANKS[r] + suit for r in ranks], True)]
        else:  # equal ranks in different suits
            hands = [([RANKS[r] + SUITS[ranks[:i].count(r)] for i, r in enumerate(ranks)], False)]
        for cards, suited in hands:
            rng.shuffle(cards)
            value = evaluate(cards, wheel=wheel)
            assert (value.category, value.ranks) == _by_definition([RANKS.index(c[0]) for c in cards], suited, wheel)
            assert evaluate(tuple(cards), wheel=wheel) == value
            assert evaluate(_Cards(cards), wheel=wheel) == value  # any other sequence: the general path
            checked += 1
    assert checked == 6_175 + 1_287


def test_evaluate_cross_is_evaluate_of_each_line():
    """A seat's across and down hands (its two cards and the middle card in both, NY 5324.39(e)(9)(i)) valued
    together are what ``evaluate`` gives each hand alone: 20,000 seven-card deals and two suited ones (straight
    flushes across, flushes down), with and without the wheel; lines sharing an outside card (each
    hand still five distinct cards) are evaluated hand by hand, and a card that is not one is refused."""
    from controller.game.hands import evaluate_cross

    rng = random.Random(7)
    deals = [rng.sample(DECK, 7) for _ in range(20_000)]
    # suited: the wheel's straight flush across (A 2 | 4 5 | 3) and a royal flush across (A K | Q J | T), a flush down
    deals += [[r + "h" for r in ranks] for ranks in ("A245KQ3", "AKQJ98T")]
    for wheel in (True, False):
        for c1, c2, a1, a2, d1, d2, m in deals:
            assert evaluate_cross((c1, c2), (a1, a2), (d1, d2), m, wheel=wheel) == (
                evaluate([c1, c2, a1, a2, m], wheel=wheel), evaluate([c1, c2, d1, d2, m], wheel=wheel))
    shared = evaluate_cross(("Ah", "Kh"), ("Qh", "Jh"), ("Qh", "2c"), "Th")  # Qh on both lines
    assert shared == (evaluate(["Ah", "Kh", "Qh", "Jh", "Th"]), evaluate(["Ah", "Kh", "Qh", "2c", "Th"]))
    assert shared[0].category == "royal_flush"
    with pytest.raises(CardError):
        evaluate_cross(("Ah", "Kh"), ("Qh", "10h"), ("2c", "3c"), "Th")
