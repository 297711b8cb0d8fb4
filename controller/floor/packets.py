"""The floor publisher's packets within the broker's Maximum Packet Size (MQTT 5.0, 3.2.2.3.6: a client never
sends a packet larger than the one the server's CONNACK gives; Mosquitto's ``max_packet_size`` disconnects a
client that does). Every message is measured as the whole PUBLISH packet (``publish_size``); one too large goes
as a marked stub (``STUBBED``, ``oversized``: the full payload's size in bytes), one that does not fit even so is
not sent (docs/floor.md, "Topics")."""

from __future__ import annotations

import logging
from typing import Any

from controller.control.server import RECORD_KEYS
from controller.floor import topics
from drivers.ratelog import LogLimiter

#: What a marked stub of each topic's message leaves out (set to null, ``oversized`` added): a record's ``data``
#: (``events``, ``alerts``, ``significant``, ``sessions``), the view of ``state``, the meters of ``meters``, the
#: head and seal of ``anchors``. ``status`` has no stub.
STUBBED = {"state": ("view",), "meters": ("meters",), "anchors": ("head", "mac")}


def publish_size(topic: int, payload: int) -> int:
    """Bytes of the QoS 1 MQTT 5 PUBLISH packet paho sends for a ``topic`` of that many UTF-8 bytes and a payload of
    ``payload`` bytes, without properties (MQTT 5.0, 3.3): the fixed header (1 byte and the Remaining Length's 1 to
    4, 1.5.5), the topic (2 + its length), the packet id (2), the property length (1: none) and the payload."""
    remaining = 2 + topic + 2 + 1 + payload
    return 1 + (1 if remaining < 128 else 2 if remaining < 16384 else 3 if remaining < 2097152 else 4) + remaining


class Fitter:
    """Fits one table's messages (``topics``: kind -> topic name) to the broker's Maximum Packet Size
    (``max_packet``, bytes; the publisher sets it from each CONNACK), saying in the log (``lines``, rate-limited)
    each message stubbed or not sent."""

    def __init__(self, topic_names: dict[str, str], max_packet: int, lines: LogLimiter) -> None:
        self.sizes = {kind: len(name.encode()) for kind, name in topic_names.items()}
        self.max_packet = max_packet
        self.lines = lines

    def fits(self, kind: str, body: bytes, what: str) -> bool:
        """True when ``body`` on ``kind``'s topic is a packet the broker takes (``publish_size`` within
        ``max_packet``); else False, and ``what`` (the message) is logged as not sent."""
        size = publish_size(self.sizes[kind], len(body))
        if size <= self.max_packet:
            return True
        self.lines.log(logging.ERROR, f"floor {kind} unsendable", "floor: %s on %s is a %d-byte packet, over the "
                       "broker's Maximum Packet Size of %d bytes: not sent", what, kind, size, self.max_packet)
        return False

    def fitted(self, kind: str, payload: dict[str, Any], what: str, stub: bool = False,
               body: bytes | None = None) -> bytes | None:
        """``payload`` of ``kind`` encoded (``body``, when given, is it already encoded), or its marked stub
        (``STUBBED``, ``oversized``: the full payload's size in bytes) when ``stub`` or when the payload is a packet
        larger than the broker takes; None when even the stub is (then ``what``, the message, is logged as not
        sent)."""
        body = topics.encode(payload) if body is None else body
        size = publish_size(self.sizes[kind], len(body))
        if not stub and size <= self.max_packet:
            return body
        if isinstance(payload.get("record"), dict):
            record = payload["record"]
            short = {**payload, "record": {**{key: record.get(key) for key in RECORD_KEYS if key != "data"},
                                           "data": None}}
        else:
            short = {**payload, **dict.fromkeys(STUBBED.get(kind, ()))}
        body, full = topics.encode({**short, "oversized": len(body)}), size
        if not self.fits(kind, body, f"{what} as a marked stub"):
            return None
        self.lines.log(logging.WARNING, f"floor {kind} oversized", "floor: %s on %s is a %d-byte packet, over the "
                       "broker's Maximum Packet Size of %d bytes: published as a marked stub", what, kind, full,
                       self.max_packet)
        return body
