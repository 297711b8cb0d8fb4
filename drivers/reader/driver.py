"""Driver for the card reader (docs/protocol.md, "Card reader").

SCAN frames become ``CardsEntered(seat, cards, "reader")`` events (acknowledged by the link and delivered once);
a malformed SCAN is logged (without its bytes: they may be cards) and NAKed. The reader is optional: a table
without one types the cards on the panel (``drivers.panel``), and a reader lost never stops the round
(``controller.round.machine``).
"""

from __future__ import annotations

import logging
from typing import Any

from drivers.events import CardsEntered
from drivers.framing import NAK_UNKNOWN_TYPE, Frame, ProtocolError
from drivers.link import Device
from drivers.reader import protocol

log = logging.getLogger(__name__)


class ReaderDriver(Device):
    """The card reader on one serial port. Constructor arguments as ``drivers.link.Device``."""

    kind = protocol.KIND

    def handle_frame(self, frame: Frame) -> list[Any]:
        """SCAN -> ``CardsEntered``; a bad payload raises ``ProtocolError`` (NAK reason 2), another type
        ``ProtocolError`` (NAK reason 1)."""
        if frame.msg_type == protocol.SCAN:
            entry = protocol.decode_scan(frame.payload)
            log.info("%s: %d card(s) scanned for %s", self.name, len(entry.cards),
                     f"seat {entry.seat}" if entry.seat else "the community")
            return [CardsEntered(entry.seat, entry.cards, "reader")]
        raise ProtocolError(frame.msg_type, "not a reader -> host message", nak_reason=NAK_UNKNOWN_TYPE)
