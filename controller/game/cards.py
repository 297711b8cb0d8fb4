"""Playing cards: parsing and validation of the two-character card text used everywhere in the project.

A card is a ``str`` of exactly two characters: a rank from ``RANKS`` (``23456789TJQKA``, ace high, NY 9 NYCRR
5324.39(b)(1)) followed by a suit from ``SUITS`` (``cdhs``; suits are equal in rank, NY (b)(1)). One 52-card
deck, no jokers (shared domain notes, "The table").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from controller.settings.files import short

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
_DECK_SET = frozenset(DECK)


class CardError(ValueError):
    """Card text that is not a card, a wrong number of cards, or the same card twice.

    ``where`` names the place of the bad value (e.g. ``"community.across[1]"``), ``reason`` what is wrong;
    the message is ``"{where}: {reason}"``.
    """

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}")


def parse_card(text: object, where: str = "card") -> str:
    """Return ``text`` as a card after checking it is exactly rank + suit (for example ``"Ah"``, ``"Td"``).

    Raises ``CardError`` naming ``where`` for anything else: a non-string, ``"10h"``, ``"ah"``, ``" Ah"``.
    """
    if isinstance(text, str) and text in _DECK_SET:
        return text
    if text is None:
        raise CardError(where, "missing")
    raise CardError(where, f"{short(text)} is not a card (rank of {RANKS} then suit of {SUITS}, e.g. 'Ah')")


def parse_cards(texts: object, count: int | None = None, where: str = "cards") -> tuple[str, ...]:
    """Parse a list or tuple of card texts into a tuple of cards, checking count and distinctness.

    ``count``, when given, is the exact number of cards expected. Raises ``CardError`` naming ``where``
    (and the index of the bad card, ``where[i]``) for ``None`` (``"missing"``, as ``parse_card`` says of one
    card), a non-sequence, a wrong count, a bad card or a duplicate.
    """
    if (type(texts) is list or type(texts) is tuple) and len(texts) == count:
        try:
            if _DECK_SET.issuperset(texts) and len(set(texts)) == count:  # every one a card, none twice
                return tuple(texts)
        except TypeError:  # an unhashable item: named below
            pass
    if texts is None:
        raise CardError(where, "missing")
    if not isinstance(texts, (list, tuple)):
        raise CardError(where, f"expected a list of cards, got {type(texts).__name__}")
    if count is not None and len(texts) != count:
        raise CardError(where, f"expected {count} cards, got {len(texts)}")
    cards = tuple(parse_card(t, f"{where}[{i}]") for i, t in enumerate(texts))
    check_distinct((f"{where}[{i}]", c) for i, c in enumerate(cards))
    return cards


def check_distinct(placed: Iterable[tuple[str, str]]) -> None:
    """Check that no card appears twice among ``(where, card)`` pairs (one deck, no card is in two places).

    Raises ``CardError`` naming the card and both places.
    """
    seen: dict[str, str] = {}
    for where, card in placed:
        if card in seen:
            raise CardError(where, f"duplicate card {card!r} (also at {seen[card]})")
        seen[card] = where


def rank_index(card: str) -> int:
    """Rank of a card as 0 (deuce) .. 12 (ace)."""
    return RANKS.index(card[0])


def format_cards(cards: Sequence[str]) -> str:
    """Cards joined by spaces, for summaries and messages (only for cards already revealed)."""
    return " ".join(cards)
