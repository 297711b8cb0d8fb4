"""Five-card poker hand evaluation as the Criss-Cross Poker rankings define it.

Sources: NY 9 NYCRR 5324.39(b) (ranks ace high; permissible hands royal flush down to pair; hands of equal
rank compared by the highest card not in the other hand, equal hands push), NJ 13:69F-25.5(a),(b) (the same
order, with "high card" named). The wheel A-2-3-4-5 is the lowest straight and straight flush (NY (b)(2)(ii),
(vi); NJ (a)); there is no wrap-around (Q-K-A-2-3 is not a straight): the reading of NY (b)(1) "an ace may not
be combined with any other sequence", kept as the ``wheel`` flag of each jurisdiction's configuration.

``evaluate`` looks each hand up in a table of the 6,175 possible multisets of five ranks, built once at import
from first principles (counts of each rank, five consecutive ranks), then applies the flush.

``evaluate_three`` evaluates the three-card hands of NJ 13:69F-25.5(c) (the optional three-card wager of Double
Cross Poker): A-2-3 and Q-K-A are straights, K-A-2 is not.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
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


def _classify_ranks(ranks: tuple[int, ...], wheel: bool) -> tuple[str, tuple[int, ...]]:
    """Category (ignoring suits) and tie-break ranks of five ranks sorted high to low."""
    counts = Counter(ranks)
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    shape = tuple(c for _, c in groups)
    order = tuple(r for r, _ in groups)
    if shape == (4, 1):
        return "four_of_a_kind", order
    if shape == (3, 2):
        return "full_house", order
    if shape == (3, 1, 1):
        return "three_of_a_kind", order
    if shape == (2, 2, 1):
        return "two_pair", order
    if shape == (2, 1, 1, 1):
        return "pair", order
    if ranks[0] - ranks[4] == 4:
        return "straight", (ranks[0],)
    if wheel and ranks == _WHEEL:
        return "straight", (3,)
    return "high_card", ranks


def _build_table(wheel: bool) -> dict[tuple[int, ...], tuple[str, tuple[int, ...]]]:
    table = {}
    for combo in itertools.combinations_with_replacement(range(12, -1, -1), 5):
        if combo[0] == combo[4]:
            continue  # five of a kind cannot come from one deck
        table[combo] = _classify_ranks(combo, wheel)
    return table


_TABLES = {False: _build_table(False)}
_TABLES[True] = {**_TABLES[False], _WHEEL: _classify_ranks(_WHEEL, True)}  # the wheel is their one difference



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
    Raises ``CardError`` for anything other than five distinct valid cards.
    """
    ranks = _ranks(cards, 5)
    category, tiebreak = _TABLES[wheel][ranks]
    if len({c[1] for c in cards}) == 1:
        if category == "straight":
            category = "royal_flush" if tiebreak == (_ACE,) else "straight_flush"
        else:
            category = "flush"
    return HandValue(category, tiebreak)


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
