"""Card-reader messages (docs/protocol.md, "Card reader"): cards scanned as they are turned in a round dealt by
hand (NY 9 NYCRR 5324.39(d)(1)).

| type | name | direction      | payload                                                               |
|------|------|----------------|-----------------------------------------------------------------------|
| 0x40 | SCAN | reader -> host | u8 target (0 community, 1-6 a seat) + 1 to 5 cards, 2 ASCII each       |

SCAN is device-initiated: acknowledged by the host, sent again until acknowledged. Its payload is the panel's
CARDS payload (``drivers.panel.protocol``), so a card typed and a card scanned are one entry for the round.
All errors are ``ProtocolError``.
"""

from __future__ import annotations

from collections.abc import Iterable

from drivers.framing import ProtocolError, register_device_events, register_names
from drivers.panel import protocol as panel_protocol
from drivers.panel.protocol import Cards

KIND = "reader"

SCAN = 0x40

register_names({SCAN: "SCAN"})
register_device_events({SCAN})


def encode_scan(seat: int, cards: Iterable[str]) -> bytes:
    """SCAN payload (as the panel's CARDS); ``ProtocolError`` as ``drivers.panel.protocol.encode_cards``."""
    try:
        return panel_protocol.encode_cards(seat, cards)
    except ProtocolError as exc:
        raise ProtocolError(SCAN, exc.problem) from None


def decode_scan(payload: bytes) -> Cards:
    """Parse SCAN; ``ProtocolError`` as ``drivers.panel.protocol.decode_cards``."""
    try:
        return panel_protocol.decode_cards(payload)
    except ProtocolError as exc:
        raise ProtocolError(SCAN, exc.problem) from None
