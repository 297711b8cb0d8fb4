"""Shoe messages: type codes and payload encoders/decoders (docs/protocol.md, "Shoe").

| type | name          | direction    | payload                                                        |
|------|---------------|--------------|----------------------------------------------------------------|
| 0x10 | SHUFFLE       | host -> shoe | empty                                                          |
| 0x11 | SHUFFLE_DONE  | shoe -> host | card count u8                                                  |
| 0x12 | DISPENSE      | host -> shoe | txn_id u32 BE, count u8 (2 or 5)                               |
| 0x13 | STACK         | shoe -> host | txn_id u32 BE, count u8, cards as 2*count ASCII bytes ("AhTd") |
| 0x14 | QUERY_LAST    | host -> shoe | empty: "what did you last dispense?"                           |
| 0x15 | LAST          | shoe -> host | as STACK: the last stack dealt (txn 0, count 0: none since power-on) |
| 0x16 | DOOR_CLOSED   | shoe -> host | empty: the door, opened (FAULT 5), is shut again; device-initiated   |
| 0x05 | PONG (common) | shoe -> host | empty, or the power-on counter u32 BE (also at the end of IDENT)     |

FAULT codes from the shoe are ``SHOE_FAULTS`` index + 1 (1 jam, 2 misfeed, 3 unreadable_card, 4 empty,
5 door_open). DOOR_CLOSED is device-initiated (acknowledged by the host, sent again until acknowledged;
docs/protocol.md, "The door"); a shoe that never sends it is still a shoe of this protocol. Encoders validate
their arguments and raise ``ProtocolError``; decoders raise ``ProtocolError`` naming the message and the
problem, never a card value (hole-card secrecy).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from drivers.events import SHOE_FAULTS, undefined_fault
from drivers.framing import (
    BOOTS_SIZE,
    PONG,
    ProtocolError,
    check_range,
    decode_empty,
    encode_boots,
    need_length,
    register_device_events,
    register_names,
)

KIND = "shoe"

SHUFFLE = 0x10
SHUFFLE_DONE = 0x11
DISPENSE = 0x12
STACK = 0x13
QUERY_LAST = 0x14
LAST = 0x15
#: The shoe's door is shut again after it was opened (docs/protocol.md, "The door"); the opening is FAULT 5.
DOOR_CLOSED = 0x16

register_names({SHUFFLE: "SHUFFLE", SHUFFLE_DONE: "SHUFFLE_DONE", DISPENSE: "DISPENSE", STACK: "STACK",
                QUERY_LAST: "QUERY_LAST", LAST: "LAST", DOOR_CLOSED: "DOOR_CLOSED"})
register_device_events({DOOR_CLOSED})

#: Stack sizes a dispense may ask for: 2 (a player's hole cards) or 5 (the community cross).
STACK_SIZES: tuple[int, ...] = (2, 5)
RANKS = "23456789TJQKA"
SUITS = "cdhs"
#: The 52 cards of one deck, ranks 2..A times suits c, d, h, s (drivers.events: "two characters").
DECK: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)


class ShuffleDone(NamedTuple):
    """SHUFFLE_DONE payload: ``card_count`` u8 counted after the shuffle (52 for one deck)."""

    card_count: int


class Dispense(NamedTuple):
    """DISPENSE payload: ``txn_id`` u32 (exactly-once key), ``count`` u8 (2 or 5)."""

    txn_id: int
    count: int


class Stack(NamedTuple):
    """STACK payload: ``txn_id`` u32 and ``cards``, a tuple of two-character cards in dispense order."""

    txn_id: int
    cards: tuple[str, ...]


def is_card(text: str) -> bool:
    """True if ``text`` is a two-character card: rank in ``23456789TJQKA`` then suit in ``cdhs``."""
    return len(text) == 2 and text[0] in RANKS and text[1] in SUITS


def fault_code(name: str) -> int:
    """Wire code of a shoe fault name (``SHOE_FAULTS`` index + 1); ``ValueError`` for an unknown name."""
    if name not in SHOE_FAULTS:
        raise ValueError(f"unknown shoe fault {name!r}; expected one of {SHOE_FAULTS}")
    return SHOE_FAULTS.index(name) + 1


def fault_name(code: int) -> str:
    """Fault name for a wire code, or ``"fault_<code>"`` when the code is not in ``SHOE_FAULTS``."""
    if 1 <= code <= len(SHOE_FAULTS):
        return SHOE_FAULTS[code - 1]
    return undefined_fault(code)


def encode_shuffle_done(card_count: int) -> bytes:
    """SHUFFLE_DONE payload: one byte, the card count (0..255)."""
    return bytes((check_range(SHUFFLE_DONE, "card count", card_count, 0, 255),))


def decode_shuffle_done(payload: bytes) -> ShuffleDone:
    """Parse SHUFFLE_DONE; ``ProtocolError`` unless exactly one byte."""
    need_length(SHUFFLE_DONE, payload, 1)
    return ShuffleDone(payload[0])


def _check_txn(msg_type: int, txn_id: int) -> int:
    return check_range(msg_type, "txn_id", txn_id, 0, 0xFFFF_FFFF)


def encode_pong(boots: int | None) -> bytes:
    """The shoe's PONG payload (docs/protocol.md, "Power-on counter"): its power-on counter u32 BE, or empty
    for a shoe that keeps none (``boots`` None). ``ProtocolError`` outside 0..2**32-1."""
    return b"" if boots is None else encode_boots(PONG, boots)


def decode_pong(payload: bytes) -> int | None:
    """Parse the shoe's PONG: its power-on counter, or None when empty (a shoe that keeps none).
    ``ProtocolError`` for any other length."""
    if not payload:
        return None
    need_length(PONG, payload, BOOTS_SIZE)
    return int.from_bytes(payload, "big")


def decode_door_closed(payload: bytes) -> tuple[()]:
    """Parse DOOR_CLOSED (docs/protocol.md, "The door"): no fields. ``ProtocolError`` (NAK reason 2) for a
    payload that is not empty."""
    return decode_empty(DOOR_CLOSED, payload)


def encode_dispense(txn_id: int, count: int) -> bytes:
    """DISPENSE payload: ``txn_id`` u32 BE + ``count`` u8; ``ProtocolError`` unless count is 2 or 5."""
    _check_txn(DISPENSE, txn_id)
    if count not in STACK_SIZES or isinstance(count, bool):
        raise ProtocolError(DISPENSE, f"count must be one of {STACK_SIZES}, got {count!r}")
    return struct.pack(">IB", txn_id, count)


def decode_dispense(payload: bytes) -> Dispense:
    """Parse DISPENSE (5 bytes). The count is returned as sent; the shoe itself NAKs counts other than
    2 or 5 with reason 2 (docs/protocol.md, "Shoe"). ``ProtocolError`` on a wrong length."""
    need_length(DISPENSE, payload, 5)
    txn_id, count = struct.unpack(">IB", payload)
    return Dispense(txn_id, count)


def encode_stack(txn_id: int, cards: tuple[str, ...] | list[str], *, msg_type: int = STACK) -> bytes:
    """STACK payload (also LAST's, with ``msg_type=LAST``): ``txn_id`` u32 BE, count u8, then each card's two
    ASCII characters.

    ``ProtocolError`` for a bad txn id, more than 127 cards or a malformed card (named by position only).
    """
    _check_txn(msg_type, txn_id)
    cards = tuple(cards)
    if len(cards) > 127:
        raise ProtocolError(msg_type, f"{len(cards)} cards do not fit in one frame")
    for index, card in enumerate(cards):
        if not isinstance(card, str) or not is_card(card):
            raise ProtocolError(msg_type, f"card {index + 1} is not a two-character card")
    return struct.pack(">IB", txn_id, len(cards)) + "".join(cards).encode("ascii")


def stack_txn(payload: bytes) -> int | None:
    """The transaction id a STACK (or LAST) payload begins with (its first 4 bytes, big-endian), whatever follows;
    None for a payload shorter than that."""
    return struct.unpack(">I", payload[:4])[0] if len(payload) >= 4 else None


def decode_stack(payload: bytes, *, msg_type: int = STACK) -> Stack:
    """Parse STACK (or LAST, with ``msg_type=LAST``); ``ProtocolError`` if the length does not match the count,
    a card is malformed (named by position, never by value) or a card appears twice in the stack."""
    if len(payload) < 5:
        raise ProtocolError(msg_type, f"payload is {len(payload)} bytes, at least 5 expected")
    txn_id, count = struct.unpack(">IB", payload[:5])
    if len(payload) != 5 + 2 * count:
        raise ProtocolError(msg_type, f"count {count} needs {5 + 2 * count} bytes, payload is {len(payload)}")
    cards = []
    for index in range(count):
        raw = payload[5 + 2 * index : 7 + 2 * index]
        card = raw.decode("ascii", errors="replace")
        if not is_card(card):
            raise ProtocolError(msg_type, f"card {index + 1} is not a two-character card")
        cards.append(card)
    if len(set(cards)) != len(cards):
        raise ProtocolError(msg_type, "the stack contains the same card twice")
    return Stack(txn_id, tuple(cards))


def encode_last(txn_id: int, cards: tuple[str, ...] | list[str]) -> bytes:
    """LAST payload (docs/protocol.md, "Shoe", "What did you last do"): the last stack the shoe dealt, laid
    out as STACK; ``encode_last(0, ())`` when it dealt nothing since power-on. ``ProtocolError`` as
    ``encode_stack``, and for txn 0 with cards or cards other than 0, 2 or 5 of them."""
    if len(cards) not in (0, *STACK_SIZES):
        raise ProtocolError(LAST, f"{len(cards)} cards: a stack has {STACK_SIZES[0]} or {STACK_SIZES[1]}")
    return encode_stack(txn_id, cards, msg_type=LAST)


def decode_last(payload: bytes) -> Stack:
    """Parse LAST into ``Stack(txn_id, cards)``; ``cards`` is empty when the shoe dealt nothing since power-on.
    ``ProtocolError`` as ``decode_stack``, and for a count other than 0, 2 or 5, or a count of 0 with a txn
    id other than 0."""
    last = decode_stack(payload, msg_type=LAST)
    if len(last.cards) not in (0, *STACK_SIZES):
        raise ProtocolError(LAST, f"{len(last.cards)} cards: a stack has {STACK_SIZES[0]} or {STACK_SIZES[1]}")
    if not last.cards and last.txn_id != 0:
        raise ProtocolError(LAST, f"txn {last.txn_id} with no cards (nothing dealt is txn 0)")
    return last
