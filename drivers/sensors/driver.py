"""Driver for the bet sensors (docs/protocol.md, "Bet sensors"; timing in "Timing").

Unsolicited SPOT_CHANGED frames become ``SpotChanged`` events. ``read_spots(request_id)`` asks for the whole
table; the answer becomes ``SpotsSnapshot`` (sorted by seat, then spot order). The read is retransmitted with
the same ``request_id`` when no answer arrives in time; reading is idempotent, so that is always safe.
"""

from __future__ import annotations

import logging
from typing import Any

from drivers.events import SPOTS, SpotChanged, SpotsSnapshot
from drivers.framing import NAK_UNKNOWN_TYPE, Frame, ProtocolError
from drivers.link import Device
from drivers.sensors import protocol

log = logging.getLogger(__name__)


class SensorDriver(Device):
    """The bet sensors on one serial port. Constructor arguments as ``drivers.link.Device``."""

    kind = protocol.KIND

    def read_spots(self, request_id: int) -> None:
        """Ask for every non-empty spot (READ_SPOTS); ``SpotsSnapshot(request_id, spots)`` follows.

        Raises ``ProtocolError`` (a ``ValueError``) for a request id outside 0..65535 and
        ``DeviceNotRunning`` if the owner thread is not running.
        """
        payload = protocol.encode_read_spots(request_id)
        self.request(("read", request_id), protocol.READ_SPOTS, payload, f"READ_SPOTS request {request_id}")

    def handle_frame(self, frame: Frame) -> list[Any]:
        """SPOT_CHANGED -> ``SpotChanged``; SPOTS -> ``SpotsSnapshot`` if its request is outstanding.
        Other types raise ``ProtocolError`` (NAK reason 1)."""
        if frame.msg_type == protocol.SPOT_CHANGED:
            change = protocol.decode_spot_changed(frame.payload)
            # debug only: a flood runs at the line rate (960 a second), and the journal keeps every change
            log.debug("%s: seat %d %s now %d", self.name, change.seat, change.spot, change.amount)
            return [SpotChanged(change.seat, change.spot, change.amount)]
        if frame.msg_type == protocol.SPOTS_MSG:
            snapshot = protocol.decode_spots(frame.payload)
            if not self.answered(("read", snapshot.request_id)):
                log.debug("%s: SPOTS for request %d which is not outstanding", self.name, snapshot.request_id)
                return []
            spots = tuple(sorted(snapshot.spots, key=lambda entry: (entry[0], SPOTS.index(entry[1]))))
            log.info("%s: snapshot %d: %d non-empty spots", self.name, snapshot.request_id, len(spots))
            return [SpotsSnapshot(snapshot.request_id, spots)]
        raise ProtocolError(frame.msg_type, "not a sensors -> host message", nak_reason=NAK_UNKNOWN_TYPE)
