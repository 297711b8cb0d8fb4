"""Card parsing tests for controller/game/cards.py.

Written from the regulations and the API contract, not from the code:

* NY 5324.39(a)(1) / domain: one 52-card deck, no jokers.
* NY 5324.39(b)(1): the ranks, highest to lowest, are A K Q J 10 9 8 7 6 5 4 3 2
  (written with the single characters ``23456789TJQKA``); suits ``cdhs``.
* Contract: a card is exactly two characters, rank then suit, exact case ("Ah", "Td").
  Anything else raises ``CardError`` (a ``ValueError``) whose message names ``where`` and the bad text.
"""

from __future__ import annotations

import json

import itertools
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.cards import DECK, RANKS, SUITS, CardError, parse_card, parse_cards
from tests.examples import examples

# Independent spelling of the deck (NY 5324.39(b)(1) ranks x four suits), not taken from the code.
EXPECTED_RANKS = "23456789TJQKA"
EXPECTED_SUITS = "cdhs"
EXPECTED_DECK = frozenset(r + s for r in EXPECTED_RANKS for s in EXPECTED_SUITS)


def _mentions(message: str, bad: object) -> bool:
    """The error message names the bad input (its text, as JSON spells it, or its repr for odd inputs)."""
    try:
        spelled = json.dumps(bad)
    except (TypeError, ValueError):
        spelled = repr(bad)
    return str(bad) in message or spelled[:37] in message or repr(bad) in message


# --------------------------------------------------------------------------- constants


def test_ranks_and_suits_constants_ny_5324_39_b_1():
    """NY 5324.39(b)(1): thirteen ranks, ace high; the deck has four suits."""
    assert RANKS == EXPECTED_RANKS
    assert SUITS == EXPECTED_SUITS


def test_deck_is_the_52_distinct_cards_ny_5324_39_a_1():
    """One standard 52-card deck, no jokers, no duplicates (domain: 'One 52-card deck, no jokers')."""
    assert isinstance(DECK, tuple)
    assert len(DECK) == 52
    assert len(set(DECK)) == 52
    assert set(DECK) == EXPECTED_DECK


def test_card_error_is_a_value_error():
    """Contract: ``class CardError(ValueError)``."""
    assert issubclass(CardError, ValueError)


# --------------------------------------------------------------------------- parse_card: valid


@pytest.mark.parametrize("card", sorted(EXPECTED_DECK))
def test_parse_card_accepts_every_card_of_the_deck(card):
    """Every rank of NY 5324.39(b)(1) with every suit is a card and comes back canonical."""
    assert parse_card(card) == card


@pytest.mark.parametrize("card", ["Ah", "Td", "2c", "Ks", "9h", "Jc", "Qd"])
def test_parse_card_returns_the_same_string(card):
    """Contract examples "Ah", "Td": canonical text is the input text itself."""
    result = parse_card(card)
    assert result == card
    assert isinstance(result, str)


# --------------------------------------------------------------------------- parse_card: invalid

INVALID_TEXTS = [
    "10h",  # ten must be written T
    "ah",  # lower-case rank
    "AH",  # upper-case suit
    "Ax",  # unknown suit
    " Ah",  # leading space
    "Ah ",  # trailing space
    "Ah\n",  # trailing newline
    "",  # empty
    "A",  # rank only
    "h",  # suit only
    "hA",  # suit first
    "AhK",  # too long
    "AhKd",  # two cards glued
    "1h",  # no rank 1
    "0s",  # no rank 0
    "Jk",  # joker-ish
    "XX",
    "th",  # lower-case ten
    "A\u2665",  # suit symbol
    "\uff21h",  # full-width A
]


@pytest.mark.parametrize("text", INVALID_TEXTS)
def test_parse_card_rejects_malformed_text_and_names_where_and_text(text):
    """Contract: anything not exactly rank+suit (e.g. "10h", "ah", "Ax", " Ah") raises CardError
    whose message contains ``where`` and the bad text."""
    with pytest.raises(CardError) as info:
        parse_card(text, where="seat 3 cards[1]")
    message = str(info.value)
    assert "seat 3 cards[1]" in message
    assert _mentions(message, text)


@pytest.mark.parametrize("value", [None, 14, 1.5, b"Ah", ["Ah"], ("A", "h"), {"card": "Ah"}, object()])
def test_parse_card_rejects_non_strings_with_card_error(value):
    """Contract: a non-str raises CardError (not TypeError/AttributeError) and names ``where``."""
    with pytest.raises(CardError) as info:
        parse_card(value, where="community.middle")
    assert "community.middle" in str(info.value)


def test_parse_card_default_where_is_card():
    """Contract: ``parse_card(text, where="card")`` - the default label appears in the message."""
    with pytest.raises(CardError) as info:
        parse_card("Zz")
    assert "card" in str(info.value)
    assert "Zz" in str(info.value)


# --------------------------------------------------------------------------- parse_cards


def test_parse_cards_list_and_tuple_return_tuple_in_order():
    """Contract: parse_cards accepts a list or tuple and returns a tuple of canonical cards."""
    assert parse_cards(["Ah", "Kd", "2c"]) == ("Ah", "Kd", "2c")
    assert parse_cards(("Ts", "9h")) == ("Ts", "9h")
    assert isinstance(parse_cards(["Ah"]), tuple)


def test_parse_cards_with_matching_count():
    """A seat holds two cards (NY 5324.39(d)); count=2 accepts exactly two."""
    assert parse_cards(["Jh", "Jd"], count=2) == ("Jh", "Jd")
    assert parse_cards(list(EXPECTED_DECK), count=52) == tuple(EXPECTED_DECK)


@pytest.mark.parametrize("cards", [["Jh"], ["Jh", "Jd", "Js"], []])
def test_parse_cards_wrong_count_names_expected_and_got(cards):
    """Contract: a wrong count raises CardError whose message names the expected and the actual count."""
    with pytest.raises(CardError) as info:
        parse_cards(cards, count=2, where="seat 1 cards")
    message = str(info.value)
    assert "2" in message
    assert str(len(cards)) in message


@pytest.mark.parametrize("value", ["AhKd", "Ah", None, 5, {"Ah", "Kd"}, {"a": "Ah"}, iter(["Ah"])])
def test_parse_cards_rejects_non_sequences(value):
    """Contract: anything but a list/tuple (including a str, a set, a generator) raises CardError."""
    with pytest.raises(CardError):
        parse_cards(value, where="community.across")


def test_parse_cards_bad_card_raises_card_error_naming_where_and_card():
    """Contract: a bad card inside the list raises CardError naming ``where`` and the bad text."""
    with pytest.raises(CardError) as info:
        parse_cards(["Ah", "10h"], where="community.down")
    message = str(info.value)
    assert "community.down" in message
    assert "10h" in message


@pytest.mark.parametrize("cards", [["Ah", "Ah"], ["2c", "Kd", "2c"], ["Ts", "9h", "8d", "Ts", "7c"]])
def test_parse_cards_duplicate_names_the_card(cards):
    """One deck (NY 5324.39(a)(1)): a card can't appear twice. The message names the duplicated card."""
    dup = next(c for c in cards if cards.count(c) > 1)
    with pytest.raises(CardError) as info:
        parse_cards(cards)
    assert dup in str(info.value)


# --------------------------------------------------------------------------- properties

CARD = st.sampled_from(sorted(EXPECTED_DECK))

# Characters that build near misses: the real alphabet in both cases, digits, whitespace, symbols.
NEAR_MISS_ALPHABET = EXPECTED_RANKS + EXPECTED_RANKS.lower() + EXPECTED_SUITS + EXPECTED_SUITS.upper() + "10xX \t\n\u2665"


@given(rank=st.sampled_from(EXPECTED_RANKS), suit=st.sampled_from(EXPECTED_SUITS))
def test_property_every_rank_suit_round_trips(rank, suit):
    """NY 5324.39(b)(1): every rank + suit string is a card; parse_card returns it unchanged."""
    text = rank + suit
    assert parse_card(text) == text
    assert parse_card(parse_card(text)) == text


@settings(max_examples=examples(500))
@given(text=st.one_of(st.text(max_size=4), st.text(alphabet=NEAR_MISS_ALPHABET, max_size=4)))
def test_property_every_other_short_string_is_rejected_with_card_error(text):
    """Contract: any string that is not exactly rank+suit raises CardError - never another exception."""
    if text in EXPECTED_DECK:
        assert parse_card(text) == text
        return
    with pytest.raises(CardError):
        parse_card(text)


@given(value=st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.binary(max_size=3), st.booleans()))
def test_property_non_strings_are_rejected_with_card_error(value):
    """Contract: a non-str is a CardError, never TypeError/AttributeError."""
    with pytest.raises(CardError):
        parse_card(value)


@given(cards=st.lists(CARD, min_size=0, max_size=10, unique=True))
def test_property_parse_cards_round_trips_distinct_cards(cards):
    """Distinct valid cards come back as a tuple in the same order, and count is honoured."""
    assert parse_cards(cards) == tuple(cards)
    assert parse_cards(tuple(cards), count=len(cards)) == tuple(cards)


@given(cards=st.lists(CARD, min_size=1, max_size=8, unique=True), data=st.data())
def test_property_parse_cards_rejects_any_duplicate(cards, data):
    """One deck (NY 5324.39(a)(1)): inserting a repeat anywhere raises CardError naming the card."""
    dup = data.draw(st.sampled_from(cards))
    pos = data.draw(st.integers(min_value=0, max_value=len(cards)))
    with_dup = cards[:pos] + [dup] + cards[pos:]
    with pytest.raises(CardError) as info:
        parse_cards(with_dup)
    assert dup in str(info.value)


def test_all_two_character_ascii_strings_exhaustively():
    """Every printable 2-character ASCII string: exactly the 52 cards parse, everything else is CardError."""
    def parses(text):
        try:
            return parse_card(text) == text
        except CardError:
            return False

    accepted = {a + b for a, b in itertools.product(string.printable, repeat=2) if parses(a + b)}
    assert accepted == EXPECTED_DECK
