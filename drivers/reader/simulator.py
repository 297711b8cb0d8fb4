"""Simulated card reader on a pty (docs/protocol.md, "Card reader"; base behaviour and limits in ``drivers.sim``).

Tests scan cards with ``scan``; each scan is one SCAN frame, sent again until the host acknowledges it.

Does not model: misreads (a card read as another), a card held at an angle, reading speed.
"""

from __future__ import annotations

from collections.abc import Sequence

from drivers import framing
from drivers.framing import Frame, ProtocolError
from drivers.reader import protocol
from drivers.sim import PtySimulator


class ReaderSimulator(PtySimulator):
    """A card reader: it only sends what it scans."""

    kind = protocol.KIND
    RECOVERABLE_IN = frozenset({framing.PING})
    RECOVERABLE_OUT = frozenset({framing.PONG})

    def __init__(self, device_id: str = "SIM-READER-1", *, link_dir=None) -> None:
        super().__init__(device_id, link_dir=link_dir)

    def scan(self, seat: int, cards: Sequence[str]) -> None:
        """Scan ``cards`` for ``seat`` (0: community cards): sends SCAN. ``ProtocolError`` for what SCAN cannot
        carry, ``OSError`` when unplugged."""
        self.send_event(protocol.SCAN, protocol.encode_scan(seat, tuple(cards)))

    def handle(self, frame: Frame) -> None:
        """The host sends the reader nothing but the link's own frames: any other type is NAKed (reason 1)."""
        raise ProtocolError(frame.msg_type, "not a host -> reader message", nak_reason=framing.NAK_UNKNOWN_TYPE)
