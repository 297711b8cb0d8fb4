"""Dealer-panel messages: type codes and payload encoders/decoders (docs/protocol.md, "Dealer panel").

| type | name    | direction     | payload                                                            |
|------|---------|---------------|--------------------------------------------------------------------|
| 0x30 | LAMPS   | host -> panel | bitmask u16 BE; bit (code - 1) set = that button's lamp is lit     |
| 0x31 | BUTTON  | panel -> host | button code u8 (``BUTTONS`` index + 1)                             |
| 0x32 | DISPLAY | host -> panel | UTF-8 text, at most 64 bytes                                       |
| 0x33 | KEY     | panel -> host | u8 state (1 turned on, 0 off) + key id, UTF-8, 1 to 32 bytes       |
| 0x34 | CARDS   | panel -> host | u8 target (0 community, 1-6 a seat) + 1 to 5 cards, 2 ASCII each    |
| 0x05 | PONG    | panel -> host | the key now: u8 1 + key id while a key is turned, else a single 0  |

BUTTON, KEY and CARDS are device-initiated: acknowledged by the host, sent again until acknowledged.

Decoded messages carry button *names* (``drivers.events.BUTTONS``). All errors are ``ProtocolError``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import NamedTuple

from drivers.events import BUTTONS
from drivers.framing import (PONG, ProtocolError, need_length, printable_text, register_device_events,
                             register_names)

KIND = "panel"

LAMPS = 0x30
BUTTON = 0x31
DISPLAY = 0x32
KEY = 0x33
CARDS = 0x34

register_names({LAMPS: "LAMPS", BUTTON: "BUTTON", DISPLAY: "DISPLAY", KEY: "KEY", CARDS: "CARDS"})
register_device_events({BUTTON, KEY, CARDS})

#: Most cards in one CARDS entry (the five community cards never turned, at the settlement of a round in which
#: every seat folded).
MAX_ENTRY_CARDS = 5

#: Longest supervisor key id in UTF-8 bytes.
MAX_KEY_ID_BYTES = 32

#: Longest DISPLAY text in UTF-8 bytes.
MAX_DISPLAY_BYTES = 64


class Lamps(NamedTuple):
    """LAMPS payload: ``buttons``, the frozenset of button names whose lamp is lit."""

    buttons: frozenset[str]


class Button(NamedTuple):
    """BUTTON payload: ``button`` name pressed."""

    button: str


class Key(NamedTuple):
    """KEY payload: the supervisor key ``key_id`` was turned on (``on``) or off."""

    on: bool
    key_id: str


class Display(NamedTuple):
    """DISPLAY payload: ``text`` shown to the dealer."""

    text: str


def button_code(name: str) -> int:
    """Wire code of a button (``BUTTONS`` index + 1); ``ProtocolError`` (a ``ValueError``) if unknown."""
    if name not in BUTTONS:
        raise ProtocolError(BUTTON, f"unknown button {name!r}; expected one of {BUTTONS}")
    return BUTTONS.index(name) + 1


def encode_lamps(buttons: Iterable[str]) -> bytes:
    """LAMPS payload: u16 BE with bit ``code - 1`` set for each button; ``ProtocolError`` for an unknown name."""
    mask = 0
    for name in buttons:
        if name not in BUTTONS:
            raise ProtocolError(LAMPS, f"unknown button {name!r}; expected one of {BUTTONS}")
        mask |= 1 << BUTTONS.index(name)
    return struct.pack(">H", mask)


def decode_lamps(payload: bytes) -> Lamps:
    """Parse LAMPS; ``ProtocolError`` on a wrong length or a bit set for no button."""
    need_length(LAMPS, payload, 2)
    (mask,) = struct.unpack(">H", payload)
    if mask >> len(BUTTONS):
        raise ProtocolError(LAMPS, f"bitmask 0x{mask:04X} sets bits beyond the {len(BUTTONS)} buttons")
    return Lamps(frozenset(name for index, name in enumerate(BUTTONS) if mask & (1 << index)))


def encode_button(button: str) -> bytes:
    """BUTTON payload: the button's code u8; ``ProtocolError`` for an unknown name."""
    return bytes((button_code(button),))


def decode_button(payload: bytes) -> Button:
    """Parse BUTTON; ``ProtocolError`` on a wrong length or an unknown code."""
    need_length(BUTTON, payload, 1)
    code = payload[0]
    if not 1 <= code <= len(BUTTONS):
        raise ProtocolError(BUTTON, f"unknown button code {code}")
    return Button(BUTTONS[code - 1])


def fit_display(text: str) -> str:
    """Cut ``text`` to at most 64 UTF-8 bytes at a character boundary (``TypeError`` if not a str)."""
    if not isinstance(text, str):
        raise TypeError(f"display text must be str, got {type(text).__name__}")
    raw = text.encode("utf-8")
    if len(raw) <= MAX_DISPLAY_BYTES:
        return text
    return raw[:MAX_DISPLAY_BYTES].decode("utf-8", errors="ignore")


def encode_display(text: str) -> bytes:
    """DISPLAY payload: UTF-8 bytes of ``text``; ``ProtocolError`` if longer than 64 bytes (use
    ``fit_display`` first) or not encodable (lone surrogates)."""
    try:
        raw = text.encode("utf-8")
    except (UnicodeEncodeError, AttributeError):
        raise ProtocolError(DISPLAY, "text is not a UTF-8 encodable string") from None
    if len(raw) > MAX_DISPLAY_BYTES:
        raise ProtocolError(DISPLAY, f"text is {len(raw)} bytes, at most {MAX_DISPLAY_BYTES}")
    return raw


def decode_display(payload: bytes) -> Display:
    """Parse DISPLAY; ``ProtocolError`` if longer than 64 bytes or not valid UTF-8."""
    if len(payload) > MAX_DISPLAY_BYTES:
        raise ProtocolError(DISPLAY, f"text is {len(payload)} bytes, at most {MAX_DISPLAY_BYTES}")
    try:
        return Display(payload.decode("utf-8"))
    except UnicodeDecodeError:
        raise ProtocolError(DISPLAY, "text is not valid UTF-8") from None


def encode_key(on: bool, key_id: str) -> bytes:
    """KEY payload: u8 1/0 then the key id in UTF-8; ``ProtocolError`` for an empty, overlong or unencodable id."""
    try:
        raw = key_id.encode("utf-8")
    except (UnicodeEncodeError, AttributeError):
        raise ProtocolError(KEY, "key id is not a UTF-8 encodable string") from None
    if not 1 <= len(raw) <= MAX_KEY_ID_BYTES:
        raise ProtocolError(KEY, f"key id is {len(raw)} bytes, 1 to {MAX_KEY_ID_BYTES} expected")
    return bytes((1 if on else 0,)) + raw


def decode_key(payload: bytes) -> Key:
    """Parse KEY; ``ProtocolError`` for a state other than 0/1 or a key id empty, longer than 32 bytes, not
    UTF-8 or with control characters."""
    if not 2 <= len(payload) <= 1 + MAX_KEY_ID_BYTES:
        raise ProtocolError(KEY, f"payload is {len(payload)} bytes, 2 to {1 + MAX_KEY_ID_BYTES} expected")
    if payload[0] not in (0, 1):
        raise ProtocolError(KEY, f"state byte {payload[0]}, 0 or 1 expected")
    try:
        key_id = payload[1:].decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(KEY, "key id is not valid UTF-8") from None
    return Key(payload[0] == 1, printable_text(KEY, key_id, "key id"))


class Cards(NamedTuple):
    """CARDS payload: cards typed on the panel's keypad as they are turned in a round dealt by hand (NY 9 NYCRR
    5324.39(d)(1)): ``seat`` 0 for community cards, else the seat; ``cards`` as typed (two characters each)."""

    seat: int
    cards: tuple[str, ...]


def encode_cards(seat: int, cards: Iterable[str]) -> bytes:
    """CARDS payload: u8 target then each card's two ASCII characters; ``ProtocolError`` for a target outside
    0-6, no card or more than ``MAX_ENTRY_CARDS``, a card that is not two printable ASCII characters."""
    cards = tuple(cards)
    if not 0 <= seat <= 6:
        raise ProtocolError(CARDS, f"target {seat}: 0 (community) or a seat 1-6 expected")
    if not 1 <= len(cards) <= MAX_ENTRY_CARDS:
        raise ProtocolError(CARDS, f"{len(cards)} cards, 1 to {MAX_ENTRY_CARDS} expected")
    raw = bytes((seat,))
    for card in cards:
        if not (isinstance(card, str) and len(card) == 2 and card.isascii() and card.isprintable()):
            raise ProtocolError(CARDS, f"card {card!r} is not two printable ASCII characters")
        raw += card.encode("ascii")
    return raw


def decode_cards(payload: bytes) -> Cards:
    """Parse CARDS; ``ProtocolError`` for a target outside 0-6, an odd length, no card or more than
    ``MAX_ENTRY_CARDS``, a byte that is not printable ASCII. Whether each is a card of the deck is the round's
    check (``controller.round.manual``): a mistyped card is refused there and the entry awaited again."""
    if not 3 <= len(payload) <= 1 + 2 * MAX_ENTRY_CARDS or len(payload) % 2 == 0:
        raise ProtocolError(CARDS, f"payload is {len(payload)} bytes: a target and 1 to {MAX_ENTRY_CARDS} "
                                   f"two-byte cards expected")
    if payload[0] > 6:
        raise ProtocolError(CARDS, f"target {payload[0]}: 0 (community) or a seat 1-6 expected")
    text = payload[1:]
    if not all(0x21 <= b <= 0x7E for b in text):
        raise ProtocolError(CARDS, "a card byte is not printable ASCII")
    chars = text.decode("ascii")
    return Cards(payload[0], tuple(chars[i:i + 2] for i in range(0, len(chars), 2)))


def encode_key_status(key_id: str | None) -> bytes:
    """The panel's PONG payload (docs/protocol.md, "Dealer panel", "Heartbeat"): the key as it is now, u8 1 and
    the key id while ``key_id`` is turned, a single 0 when no key is (``key_id`` None). ``ProtocolError`` for
    a bad id, as ``encode_key``."""
    return b"\x00" if key_id is None else encode_key(True, key_id)


def decode_key_status(payload: bytes) -> Key:
    """Parse the panel's PONG payload into ``Key(on, key_id)`` (``key_id`` "" when off); ``ProtocolError`` for
    anything but a single 0 or a KEY payload with state 1."""
    if payload == b"\x00":
        return Key(False, "")
    try:
        key = decode_key(payload)
    except ProtocolError as exc:
        raise ProtocolError(PONG, f"key status: {exc.problem}") from None
    if not key.on:
        raise ProtocolError(PONG, "key status: an id with state 0 (off is a single 0 byte)")
    return key
