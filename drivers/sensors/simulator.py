"""Simulated bet sensors on a pty (docs/protocol.md, "Bet sensors"; base behaviour and limits in ``drivers.sim``).

Tests place and remove chips with ``place`` and ``clear``; every change of amount is reported at once with an
unsolicited SPOT_CHANGED, and READ_SPOTS is answered with SPOTS listing the non-empty spots at that moment.

Does not model: chip recognition (amounts are exact), settling time or bouncing readings while chips are
stacked, a spot covered by a hand, or sensors that fail.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from drivers import framing
from drivers.events import SEATS, SPOTS
from drivers.framing import Frame, ProtocolError
from drivers.sensors import protocol
from drivers.sim import PtySimulator

log = logging.getLogger(__name__)


def _check_spot(seat: int, spot: str, amount: int) -> None:
    """``ValueError`` naming what is wrong unless ``seat`` is one of ``SEATS``, ``spot`` one of ``SPOTS`` and
    ``amount`` an int in 0..``protocol.MAX_AMOUNT`` (docs/protocol.md, "Bet sensors")."""
    if seat not in SEATS or isinstance(seat, bool):
        raise ValueError(f"seat must be one of {SEATS}, got {seat!r}")
    if spot not in SPOTS:
        raise ValueError(f"spot must be one of {SPOTS}, got {spot!r}")
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 <= amount <= protocol.MAX_AMOUNT:
        raise ValueError(f"amount must be an int in 0..{protocol.MAX_AMOUNT}, got {amount!r}")


class SensorSimulator(PtySimulator):
    """Bet sensors for seats 1..6 and the six ``SPOTS`` of each seat."""

    kind = protocol.KIND
    RECOVERABLE_IN = frozenset({framing.PING, protocol.READ_SPOTS})
    RECOVERABLE_OUT = frozenset({framing.PONG, protocol.SPOTS_MSG})

    def __init__(self, device_id: str = "SIM-SENSORS-1", *, link_dir=None,
                 chips: Mapping[tuple[int, str], int] | None = None) -> None:
        """``chips``: what lies on the felt when the board is switched on, ``{(seat, spot): amount}`` in minor
        units (a service started again on a table whose chips stayed where they were: it reads them, no
        SPOT_CHANGED is sent for them). ``ValueError`` for a bad seat, spot or amount, naming it."""
        super().__init__(device_id, link_dir=link_dir)
        self._amounts: dict[tuple[int, str], int] = {}
        for (seat, spot), amount in (chips or {}).items():
            _check_spot(seat, spot, amount)
            if amount:
                self._amounts[(seat, spot)] = amount

    def place(self, seat: int, spot: str, amount: int) -> None:
        """Set the chips on ``seat`` (1..6) / ``spot`` (a ``SPOTS`` name) to ``amount`` minor units (0 removes
        them); sends SPOT_CHANGED if the amount changed. ``ValueError`` for a bad seat, spot or amount,
        ``OSError`` when unplugged."""
        _check_spot(seat, spot, amount)
        with self.lock:
            if self._amounts.get((seat, spot), 0) == amount:
                return
            if amount:
                self._amounts[(seat, spot)] = amount
            else:
                del self._amounts[(seat, spot)]
            self.send_event(protocol.SPOT_CHANGED, protocol.encode_spot_changed(seat, spot, amount))

    def clear(self, seat: int | None = None) -> None:
        """Remove all chips (of ``seat`` only, if given), sending SPOT_CHANGED(…, 0) for each non-empty spot."""
        if seat is not None and seat not in SEATS:
            raise ValueError(f"seat must be one of {SEATS}, got {seat!r}")
        with self.lock:
            for key in sorted(self._amounts, key=lambda k: (k[0], SPOTS.index(k[1]))):
                if seat is None or key[0] == seat:
                    self.place(key[0], key[1], 0)

    def amounts(self) -> dict[tuple[int, str], int]:
        """The non-empty spots: ``{(seat, spot): amount}`` (a copy)."""
        with self.lock:
            return dict(self._amounts)

    def handle(self, frame: Frame) -> None:
        """READ_SPOTS -> SPOTS with the current non-empty spots, sorted by seat then spot order."""
        if frame.msg_type != protocol.READ_SPOTS:
            raise ProtocolError(frame.msg_type, "not a host -> sensors message", nak_reason=framing.NAK_UNKNOWN_TYPE)
        request = protocol.decode_read_spots(frame.payload)
        entries = [
            (seat, spot, amount)
            for (seat, spot), amount in sorted(self._amounts.items(), key=lambda i: (i[0][0], SPOTS.index(i[0][1])))
        ]
        self.send(protocol.SPOTS_MSG, protocol.encode_spots(request.request_id, entries))
