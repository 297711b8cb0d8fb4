"""Dealer-panel messages: type codes and payload encoders/decoders (docs/protocol.md, "Dealer panel").

| type | name    | direction     | payload                                                            |
|------|---------|---------------|--------------------------------------------------------------------|
| 0x30 | LAMPS   | host -> panel | bitmask u16 BE; bit (code - 1) set = that button's lamp is lit     |
| 0x31 | BUTTON  | panel -> host | button code u8 (``BUTTONS`` index + 1)                             |
| 0x32 | DISPLAY | host -> panel | UTF-8 text, at most 64 bytes                                       |

Decoded messages carry button *names* (``drivers.events.BUTTONS``). All errors are ``ProtocolError``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import NamedTuple

from drivers.events import BUTTONS
from drivers.framing import ProtocolError, need_length, register_names

KIND = "panel"

LAMPS = 0x30
BUTTON = 0x31
DISPLAY = 0x32

register_names({LAMPS: "LAMPS", BUTTON: "BUTTON", DISPLAY: "DISPLAY"})

#: Longest DISPLAY text in UTF-8 bytes.
MAX_DISPLAY_BYTES = 64


class Lamps(NamedTuple):
    """LAMPS payload: ``buttons``, the frozenset of button names whose lamp is lit."""

    buttons: frozenset[str]


class Button(NamedTuple):
    """BUTTON payload: ``button`` name pressed."""

    button: str


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
