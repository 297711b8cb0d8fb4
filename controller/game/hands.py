"""Five-card poker hand evaluation as the Criss-Cross Poker rankings define it.

Sources: NY 9 NYCRR 5324.39(b) (ranks ace high; permissible hands royal flush down to pair; hands of equal
rank compared by the highest card not in the other hand, equal hands push), NJ 13:69F-25.5(a),(b) (the same
order, with "high card" named). The wheel A-2-3-4-5 is the lowest straight and straight flush (NY (b)(2)(ii),
(vi); NJ (a)); there is no wrap-around (Q-K-A-2-3 is not a straight): the reading of NY (b)(1) "an ace may not
be combined with any other sequence", kept as the ``wheel`` flag of each jurisdiction's configuration.

``evaluate`` looks each hand up in a table of the 6,175 possible multisets of five ranks, built once at import
from first principles (each category enumerated from its definition: the groups of equal ranks, five
consecutive ranks) and keyed by the product of a prime per rank; each entry holds the hand's value off suit and
suited (the flush).

``evaluate_three`` evaluates the three-card hands of NJ 13:69F-25.5(c) (the optional three-card wager of Double
Cross Poker): A-2-3 and Q-K-A are straights, K-A-2 is not.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from controller.game.cards import DECK, RANKS, CardError, parse_cards

#: Hand categories, lowest first (NY 5324.39(b)(2) read bottom-up, with NJ 13:69F-25.5(b)10 "high card").
CATEGORIES: tuple[str, ...] = (
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
_CATEGORY_INDEX = {name: i for i, name in enumerate(CATEGORIES)}
_RANK_OF = {card: RANKS.index(card[0]) for card in DECK}
_ACE = 12
_WHEEL = (_ACE, 3, 2, 1, 0)


@functools.total_ordering
@dataclass(frozen=True)
class HandValue:
    """The value of a five-card hand: its category and the ranks that break ties within it.

    ``ranks`` are rank indexes (0 = deuce .. 12 = ace) in the order they are compared (NY 5324.39(b)(3)):
    the rank of the largest group first (four, three, pair), then kickers high to low; a straight gives its
    top card only (3 for the wheel). Values compare with ``<``/``==``: category first, then ``ranks``.
    """

    category: str
    ranks: tuple[int, ...]

    @property
    def key(self) -> tuple[int, tuple[int, ...]]:
        """Sort key: (category index, tie-break ranks)."""
        return (_CATEGORY_INDEX[self.category], self.ranks)

    @property
    def pair_rank(self) -> str | None:
        """For a ``pair``, the rank character of the pair (e.g. ``"J"``); ``None`` for any other category."""
        return RANKS[self.ranks[0]] if self.category == "pair" else None

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, HandValue):
            return NotImplemented
        return self.key < other.key


#: A prime per rank (deuce 2 .. ace 41): the product of a hand's five primes names its multiset of ranks, whatever
#: the order of the cards (unique factorisation), so a hand is looked up without sorting.
_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
_PRIME_OF = {card: _PRIMES[_RANK_OF[card]] for card in DECK}
_HIGH_TO_LOW = tuple(range(12, -1, -1))


def _build_table() -> dict[int, tuple[HandValue, HandValue | None]]:
    """Every multiset of five ranks one deck can hold (6,175), by the product of its primes: its value off suit
    and, for five different ranks, suited (None where five cards of one suit cannot have these ranks); the
    wheel A-2-3-4-5 is the 5-high straight.

    Each category is written out from its definition (NY 5324.39(b)(2)), its tie-break ranks in the order of
    (b)(3): the largest group's rank first, then the next group's, then the kickers high to low."""
    p = _PRIMES
    table: dict[int, tuple[HandValue, HandValue | None]] = {}
    for big in _HIGH_TO_LOW:
        others = tuple(r for r in _HIGH_TO_LOW if r != big)
        for small in others:
            table[p[big] ** 4 * p[small]] = (HandValue("four_of_a_kind", (big, small)), None)
            table[p[big] ** 3 * p[small] ** 2] = (HandValue("full_house", (big, small)), None)
        for high, low in itertools.combinations(others, 2):
            table[p[big] ** 3 * p[high] * p[low]] = (HandValue("three_of_a_kind", (big, high, low)), None)
        for high, mid, low in itertools.combinations(others, 3):
            table[p[big] ** 2 * p[high] * p[mid] * p[low]] = (HandValue("pair", (big, high, mid, low)), None)
    for high, low in itertools.combinations(_HIGH_TO_LOW, 2):
        for kicker in _HIGH_TO_LOW:
            if kicker != high and kicker != low:
                table[p[high] ** 2 * p[low] ** 2 * p[kicker]] = (HandValue("two_pair", (high, low, kicker)), None)
    for ranks in itertools.combinations(_HIGH_TO_LOW, 5):  # five different ranks, high to low
        if ranks[0] - ranks[4] == 4 or ranks == _WHEEL:  # five in sequence; the wheel is 5-high
            top = ranks[0] if ranks[0] - ranks[4] == 4 else 3
            plain = HandValue("straight", (top,))
            suited = HandValue("royal_flush" if top == _ACE else "straight_flush", (top,))
        else:
            plain, suited = HandValue("high_card", ranks), HandValue("flush", ranks)
        table[p[ranks[0]] * p[ranks[1]] * p[ranks[2]] * p[ranks[3]] * p[ranks[4]]] = (plain, suited)
    return table


_WHEEL_KEY = _PRIMES[_ACE] * _PRIMES[3] * _PRIMES[2] * _PRIMES[1] * _PRIMES[0]
_TABLES = {True: _build_table()}
#: Without the wheel (``wheel=False``), A-2-3-4-5 is ace-high: the tables' one difference.
_TABLES[False] = {**_TABLES[True], _WHEEL_KEY: (HandValue("high_card", _WHEEL), HandValue("flush", _WHEEL))}


def _ranks(cards: Sequence[str], count: int) -> tuple[int, ...]:
    """The rank values of exactly ``count`` distinct valid cards, highest first; ``CardError`` otherwise."""
    try:
        ranks = tuple(sorted((_RANK_OF[c] for c in cards), reverse=True))
        valid = len(ranks) == count and len(set(cards)) == count
    except (KeyError, TypeError):
        valid = False
    if not valid:
        parse_cards(cards, count, "hand")  # raises a CardError that names the problem
        raise CardError("hand", f"{cards!r} is not {count} distinct cards")
    return ranks


def evaluate(cards: Sequence[str], *, wheel: bool = True) -> HandValue:
    """Evaluate exactly five distinct cards (e.g. ``["Ah", "Kh", "Qh", "Jh", "Th"]``) into a ``HandValue``.

    ``wheel`` says whether A-2-3-4-5 counts as the lowest straight (True for NY, PA and NJ; see module doc).
    Raises ``CardError`` for anything other than five distinct valid cards. Values are shared: one
    ``HandValue`` object per value (they are immutable).
    """
    if (type(cards) is tuple or type(cards) is list) and len(cards) == 5:
        a, b, c, d, e = cards
        try:
            key = _PRIME_OF[a] * _PRIME_OF[b] * _PRIME_OF[c] * _PRIME_OF[d] * _PRIME_OF[e]
            distinct = len({a, b, c, d, e}) == 5
        except (KeyError, TypeError):  # not a card; an unhashable item
            distinct = False
        if distinct:
            plain, suited = _TABLES[wheel][key]
            return suited if a[1] == b[1] == c[1] == d[1] == e[1] else plain  # type: ignore[return-value]
    ranks = _ranks(cards, 5)  # any other sequence, or a CardError that names the problem
    plain, suited = _TABLES[wheel][_PRIMES[ranks[0]] * _PRIMES[ranks[1]] * _PRIMES[ranks[2]] * _PRIMES[ranks[3]]
                                   * _PRIMES[ranks[4]]]
    return suited if len({c[1] for c in cards}) == 1 else plain  # type: ignore[return-value]


def evaluate_cross(cards: Sequence[str], across: Sequence[str], down: Sequence[str], middle: str, *,
                   wheel: bool = True) -> tuple[HandValue, HandValue]:
    """The values of a seat's across hand and down hand: ``evaluate((*cards, *across, middle))`` and
    ``evaluate((*cards, *down, middle))``, the seat's two ``cards`` and the middle card being in both (NY 9
    NYCRR 5324.39(e)(9)(i)); ``across`` and ``down`` are the two outside cards of each line.

    Seven distinct valid cards are looked up together (the shared three cards' product once); anything else
    is evaluated hand by hand, so a ``CardError`` names what is wrong in the hand that has it.
    """
    try:
        first, second = cards
        a1, a2 = across
        d1, d2 = down
        shared = _PRIME_OF[first] * _PRIME_OF[second] * _PRIME_OF[middle]
        across_key = shared * _PRIME_OF[a1] * _PRIME_OF[a2]
        down_key = shared * _PRIME_OF[d1] * _PRIME_OF[d2]
        distinct = len({first, second, a1, a2, d1, d2, middle}) == 7
    except (KeyError, TypeError, ValueError):  # not a card, an unhashable item, not two cards
        distinct = False
    if not distinct:
        return (evaluate((*cards, *across, middle), wheel=wheel), evaluate((*cards, *down, middle), wheel=wheel))
    table = _TABLES[wheel]
    suit = middle[1]
    shared_suited = first[1] == suit and second[1] == suit
    plain, suited = table[across_key]
    across_value = suited if shared_suited and a1[1] == suit and a2[1] == suit else plain
    plain, suited = table[down_key]
    down_value = suited if shared_suited and d1[1] == suit and d2[1] == suit else plain
    return across_value, down_value  # type: ignore[return-value]


#: Three-card hand categories of NJ 13:69F-25.5(c), lowest first; "high_card" names a hand with none of them.
THREE_CARD_CATEGORIES: tuple[str, ...] = (
    "high_card",
    "pair",
    "flush",
    "straight",
    "three_of_a_kind",
    "straight_flush",
)
_THREE_CARD_INDEX = {name: i for i, name in enumerate(THREE_CARD_CATEGORIES)}


@functools.total_ordering
@dataclass(frozen=True)
class ThreeCardValue:
    """The value of a three-card hand (NJ 13:69F-25.5(c), the optional three-card wager).

    ``category`` is one of ``THREE_CARD_CATEGORIES``; ``ranks`` (0 = deuce .. 12 = ace) break ties within it
    as for five cards (NY 5324.39(b)(3) read for three cards): the pair's rank then the kicker; a straight
    gives its top card only (1, the three, for A-2-3). Values compare with ``<``/``==``: category first.
    """

    category: str
    ranks: tuple[int, ...]

    @property
    def key(self) -> tuple[int, tuple[int, ...]]:
        """Sort key: (category index, tie-break ranks)."""
        return (_THREE_CARD_INDEX[self.category], self.ranks)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, ThreeCardValue):
            return NotImplemented
        return self.key < other.key


def evaluate_three(cards: Sequence[str]) -> ThreeCardValue:
    """Evaluate exactly three distinct cards (e.g. ``["Qh", "Kh", "Ah"]``) into a ``ThreeCardValue``.

    NJ 13:69F-25.5(c): three-card straight flush (three suited cards in consecutive rank), three of a kind,
    three-card straight (three consecutive ranks not all suited; A-2-3 and Q-K-A count, K-A-2 does not:
    "an ace may not be combined with a king and two", (c)3), three-card flush (suited, not consecutive), one
    pair; anything else is ``high_card``. The order follows the probabilities of the categories (a straight
    ranks above a flush with three cards). Raises ``CardError`` for anything other than three distinct cards.
    """
    ranks = _ranks(cards, 3)
    suited = len({c[1] for c in cards}) == 1
    high, mid, low = ranks
    if high == low:
        return ThreeCardValue("three_of_a_kind", (high,))
    if high == mid or mid == low:
        pair, kicker = (high, low) if high == mid else (low, high)
        return ThreeCardValue("pair", (pair, kicker))
    if high - low == 2:
        top: int | None = high
    elif ranks == (_ACE, 1, 0):  # A-2-3, the ace low
        top = 1
    else:
        top = None  # K-A-2 and every other gapped hand
    if top is not None:
        return ThreeCardValue("straight_flush" if suited else "straight", (top,))
    return ThreeCardValue("flush" if suited else "high_card", ranks)
