"""Frame format shared by every device link, and the messages common to all devices.

Wire layout (docs/protocol.md, "Frame format")::

    SYNC 0xA5 | LEN u8 | SEQ u8 | TYPE u8 | PAYLOAD (LEN bytes) | CRC16 u16 big-endian

``LEN`` counts payload bytes only (0..255), so a frame is 6..261 bytes long. ``SEQ`` is a per-sender counter
that wraps 255 -> 0. The CRC is CRC-16/IBM-3740 (a.k.a. CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no
reflection, xorout 0, check value 0x29B1 for ``b"123456789"``) over ``LEN, SEQ, TYPE, PAYLOAD``.

``FrameDecoder`` is the receiving half: it buffers partial frames ("need more bytes"), resynchronises on the
next SYNC byte after garbage or a bad CRC, drops exact duplicates and logs sequence gaps, and never raises on
bad input. ``decode`` is the pure, one-step primitive underneath it (pymodbus style).

The common messages (docs/protocol.md, "Common messages") live here too because every device speaks them:
HELLO, IDENT, NAK and FAULT, each with a small encoder and a decoder that raises ``ProtocolError``.
"""

from __future__ import annotations

import binascii
import collections
import logging
import types
from dataclasses import dataclass
from typing import NamedTuple

log = logging.getLogger(__name__)

#: First byte of every frame (docs/protocol.md, "Frame format").
SYNC = 0xA5
#: Bytes before the payload: SYNC, LEN, SEQ, TYPE.
HEADER_SIZE = 4
#: Bytes after the payload: the big-endian CRC-16.
CRC_SIZE = 2
#: Largest payload LEN can announce.
MAX_PAYLOAD = 255
#: Largest frame on the wire (header + 255 payload bytes + CRC) = 261 bytes.
MAX_FRAME = HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE

#: Protocol version carried by HELLO and IDENT (docs/protocol.md, "Handshake").
PROTOCOL_VERSION = 1

# Common message types (docs/protocol.md, "Common messages").
HELLO = 0x01  #: host -> device: protocol version u8
IDENT = 0x02  #: device -> host: version u8, kind, device id, firmware (length-prefixed ASCII)
NAK = 0x03  #: either way: rejected seq u8, reason u8
PING = 0x04  #: host -> device: empty; the heartbeat (docs/protocol.md, "Heartbeat")
PONG = 0x05  #: device -> host: empty; the answer to PING
FAULT = 0x0F  #: device -> host: code u8, length-prefixed ASCII detail

#: NAK reasons (docs/protocol.md, "NAK"): code -> name.
#: Read-only: device threads share it.
NAK_REASONS = types.MappingProxyType({1: "bad_frame_or_unknown_type", 2: "bad_payload", 3: "not_allowed_now"})
NAK_UNKNOWN_TYPE = 1
NAK_BAD_PAYLOAD = 2
NAK_NOT_ALLOWED = 3

#: Message type -> name, for logs and errors. Device protocol modules add theirs with ``register_names`` when
#: they are imported (under the import lock, before any device thread runs); device threads only read it.
MESSAGE_NAMES: dict[int, str] = {HELLO: "HELLO", IDENT: "IDENT", NAK: "NAK", PING: "PING", PONG: "PONG", FAULT: "FAULT"}


def register_names(names: dict[int, str]) -> None:
    """Add device message names (type code -> name) used in logs and ``ProtocolError`` messages.

    Raises ``ValueError`` if a code is already registered under a different name (two devices must not reuse
    a type code; docs/protocol.md, "Message type ranges").
    """
    for code, name in names.items():
        known = MESSAGE_NAMES.get(code)
        if known is not None and known != name:
            raise ValueError(f"message type 0x{code:02X} already registered as {known}, not {name}")
        MESSAGE_NAMES[code] = name


def message_name(msg_type: int) -> str:
    """Return ``"NAME (0xTT)"`` for a message type, ``"unknown (0xTT)"`` if unregistered."""
    return f"{MESSAGE_NAMES.get(msg_type, 'unknown')} (0x{msg_type:02X})"


class ProtocolError(ValueError):
    """A payload (or an argument meant for one) breaks the protocol.

    ``msg_type`` names the message, ``problem`` says what is wrong, ``nak_reason`` is the NAK reason a
    receiver should answer with (2 = bad payload by default, 1 = unknown type, 3 = not allowed now;
    docs/protocol.md, "NAK"). Messages never contain card values (hole-card secrecy), only positions.
    """

    def __init__(self, msg_type: int, problem: str, *, nak_reason: int = NAK_BAD_PAYLOAD) -> None:
        super().__init__(f"{message_name(msg_type)}: {problem}")
        self.msg_type = msg_type
        self.problem = problem
        self.nak_reason = nak_reason


@dataclass(frozen=True)
class Frame:
    """One decoded frame: ``seq`` 0..255, ``msg_type`` 0..255, ``payload`` 0..255 bytes.

    ``repr`` shows the payload length only, so a frame holding cards can be logged at DEBUG without
    printing card values by accident; use ``hex_dump()`` explicitly (DEBUG only) for the bytes.
    """

    seq: int
    msg_type: int
    payload: bytes

    def __repr__(self) -> str:
        return f"Frame(seq={self.seq}, type={message_name(self.msg_type)}, {len(self.payload)} payload bytes)"

    def hex_dump(self) -> str:
        """The frame as it goes on the wire, as spaced hex. Log at DEBUG only (may contain cards)."""
        return encode_frame(self.seq, self.msg_type, self.payload).hex(" ")


def crc16(data: bytes) -> int:
    """CRC-16/IBM-3740 of ``data`` (0..0xFFFF); ``crc16(b"123456789") == 0x29B1``.

    Stateless (the standard library's ``binascii.crc_hqx`` from the initial value 0xFFFF is this CRC), so any
    number of device threads may call it at once.
    """
    return binascii.crc_hqx(data, 0xFFFF)


def encode_frame(seq: int, msg_type: int, payload: bytes = b"") -> bytes:
    """Build one frame: ``A5 LEN SEQ TYPE PAYLOAD CRC_hi CRC_lo`` (docs/protocol.md, "Frame format").

    ``seq`` and ``msg_type`` must be 0..255 and ``payload`` at most 255 bytes, else ``ProtocolError``.
    """
    if not 0 <= msg_type <= 0xFF:
        raise ValueError(f"message type {msg_type!r} is not a byte")
    if not 0 <= seq <= 0xFF:
        raise ProtocolError(msg_type, f"seq {seq} is not 0..255")
    payload = bytes(payload)
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(msg_type, f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    body = bytes((len(payload), seq, msg_type)) + payload
    return bytes((SYNC,)) + body + crc16(body).to_bytes(2, "big")


class DecodeError(NamedTuple):
    """One framing error: ``kind`` is ``"garbage"`` (bytes skipped before a SYNC) or ``"bad_crc"``;
    ``skipped`` is how many bytes were dropped."""

    kind: str
    skipped: int
    detail: str


def _complete_frame_at(buffer: bytes | bytearray, start: int) -> bool:
    """True if a whole frame with a valid CRC starts at ``buffer[start]`` (which must be SYNC)."""
    if len(buffer) - start < HEADER_SIZE:
        return False
    end = start + HEADER_SIZE + buffer[start + 1] + CRC_SIZE
    if end > len(buffer):
        return False
    body = bytes(buffer[start + 1 : end - CRC_SIZE])
    return crc16(body) == int.from_bytes(buffer[end - CRC_SIZE : end], "big")


def decode(buffer: bytes | bytearray) -> tuple[int, Frame | None, DecodeError | None]:
    """Look at the start of ``buffer`` once; return ``(consumed, frame, error)``.

    - ``(0, None, None)``: need more bytes (empty, or a partial frame at the start).
    - ``(n, Frame, None)``: a valid frame of ``n`` bytes at the start.
    - ``(n, None, DecodeError)``: ``n`` bytes were garbage or a frame with a bad CRC; drop them and call again.

    Resynchronisation (docs/protocol.md, "Receiving"): garbage is skipped up to the next SYNC byte; after a bad
    CRC only up to the next SYNC byte *after* the rejected one, because the real frame may start inside the
    rejected bytes. When the frame at the start is incomplete but a complete, CRC-valid frame starts at a later
    SYNC byte, the start is a false SYNC (its LEN would otherwise stall the stream) and the bytes before that
    later frame are skipped as garbage. Never raises on any input.
    """
    if not buffer:
        return 0, None, None
    if buffer[0] != SYNC:
        nxt = buffer.find(SYNC)
        skipped = len(buffer) if nxt < 0 else nxt
        return skipped, None, DecodeError("garbage", skipped, f"{skipped} bytes before SYNC")
    if len(buffer) >= HEADER_SIZE:
        length = buffer[1]
        end = HEADER_SIZE + length + CRC_SIZE
        if len(buffer) >= end:
            body = bytes(buffer[1 : end - CRC_SIZE])
            got = int.from_bytes(buffer[end - CRC_SIZE : end], "big")
            want = crc16(body)
            if got == want:
                return end, Frame(seq=body[1], msg_type=body[2], payload=body[3:]), None
            nxt = buffer.find(SYNC, 1)
            skipped = len(buffer) if nxt < 0 else nxt
            return skipped, None, DecodeError(
                "bad_crc", skipped, f"CRC 0x{got:04X} != 0x{want:04X} for LEN={length} TYPE=0x{body[2]:02X}"
            )
    # Incomplete at the start: a complete valid frame further on means the start was a false SYNC.
    nxt = buffer.find(SYNC, 1)
    while nxt >= 0:
        if _complete_frame_at(buffer, nxt):
            return nxt, None, DecodeError("garbage", nxt, f"false SYNC: {nxt} bytes before a complete frame")
        nxt = buffer.find(SYNC, nxt + 1)
    return 0, None, None


class FrameDecoder:
    """Stateful receiver for one link: ``feed(data) -> list[Frame]`` (docs/protocol.md, "Receiving").

    Keeps a partial frame buffered until the rest arrives (at most ``MAX_FRAME - 1`` bytes stay buffered),
    skips garbage and bad-CRC frames and resynchronises on the next SYNC byte, and never raises on bad input:
    errors are counted in ``error_counts`` (``"garbage"``, ``"bad_crc"``) and the last 64 are kept in
    ``recent_errors``.

    With ``track_sequence`` (default) it also applies the receiver sequence rules: a frame identical to the
    previous one (same seq, type and payload) is an exact duplicate and is dropped (``duplicates`` counts
    them); a seq other than previous + 1 (mod 256) is logged at WARNING and counted in ``gaps``, and the frame
    is still delivered. ``name`` labels the log lines (e.g. ``"shoe<-"``).
    """

    def __init__(self, *, name: str = "link", track_sequence: bool = True) -> None:
        self.name = name
        self.track_sequence = track_sequence
        self._buffer = bytearray()
        self._last: Frame | None = None
        self.error_counts: collections.Counter[str] = collections.Counter()
        self.recent_errors: collections.deque[DecodeError] = collections.deque(maxlen=64)
        self.frames = 0
        self.duplicates = 0
        self.gaps = 0

    @property
    def pending(self) -> bytes:
        """Bytes buffered for an incomplete frame (copy)."""
        return bytes(self._buffer)

    def reset_sequence(self) -> None:
        """Forget the previous frame, so the next one is neither a duplicate nor a gap (new connection)."""
        self._last = None

    def feed(self, data: bytes) -> list[Frame]:
        """Add received bytes; return the complete, valid, non-duplicate frames in arrival order."""
        self._buffer += data
        frames: list[Frame] = []
        while True:
            consumed, frame, error = decode(self._buffer)
            if consumed == 0:
                break
            del self._buffer[:consumed]
            if error is not None:
                self.error_counts[error.kind] += 1
                self.recent_errors.append(error)
                log.debug("%s: dropped %s", self.name, error)
            elif frame is not None and self._accept(frame):
                frames.append(frame)
        return frames

    def _accept(self, frame: Frame) -> bool:
        if not self.track_sequence:
            self.frames += 1
            return True
        last = self._last
        if last is not None:
            if frame == last:
                self.duplicates += 1
                log.debug("%s: dropped exact duplicate %r", self.name, frame)
                return False
            expected = (last.seq + 1) & 0xFF
            if frame.seq != expected:
                self.gaps += 1
                log.warning("%s: sequence gap: expected seq %d, got %d", self.name, expected, frame.seq)
        self._last = frame
        self.frames += 1
        return True


# ---------------------------------------------------------------------------------------------------------
# Payload helpers shared by the device protocol modules.


def need_length(msg_type: int, payload: bytes, size: int) -> None:
    """Raise ``ProtocolError`` unless ``payload`` is exactly ``size`` bytes."""
    if len(payload) != size:
        raise ProtocolError(msg_type, f"payload is {len(payload)} bytes, expected {size}")


def pack_text(msg_type: int, text: str, what: str) -> bytes:
    """Encode ``text`` as a length-prefixed ASCII string (u8 length, then bytes); ``ProtocolError`` if the
    text is not ASCII or longer than 255 bytes."""
    try:
        raw = text.encode("ascii")
    except (UnicodeEncodeError, AttributeError):
        raise ProtocolError(msg_type, f"{what} must be an ASCII string") from None
    if len(raw) > 255:
        raise ProtocolError(msg_type, f"{what} is {len(raw)} bytes, at most 255")
    return bytes((len(raw),)) + raw


def unpack_text(msg_type: int, payload: bytes, offset: int, what: str) -> tuple[str, int]:
    """Read a length-prefixed ASCII string at ``offset``; return ``(text, next_offset)``.

    Raises ``ProtocolError`` if the payload is too short or the bytes are not ASCII.
    """
    if offset >= len(payload):
        raise ProtocolError(msg_type, f"payload ends before the length of {what}")
    size = payload[offset]
    end = offset + 1 + size
    if end > len(payload):
        raise ProtocolError(msg_type, f"{what} announces {size} bytes, only {len(payload) - offset - 1} left")
    try:
        return payload[offset + 1 : end].decode("ascii"), end
    except UnicodeDecodeError:
        raise ProtocolError(msg_type, f"{what} is not ASCII") from None


def check_range(msg_type: int, what: str, value: object, low: int, high: int) -> int:
    """Return ``value`` if it is an int (not bool) in ``low..high``, else raise ``ProtocolError``."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ProtocolError(msg_type, f"{what} must be an int in {low}..{high}, got {value!r}")
    return value


# ---------------------------------------------------------------------------------------------------------
# Common messages (docs/protocol.md, "Common messages").


class Hello(NamedTuple):
    """HELLO payload: ``version`` u8 (1)."""

    version: int


class Ident(NamedTuple):
    """IDENT payload: ``version`` u8, then ``kind``, ``device_id``, ``firmware`` as length-prefixed ASCII."""

    version: int
    kind: str
    device_id: str
    firmware: str


class Nak(NamedTuple):
    """NAK payload: ``seq`` u8 of the rejected frame, ``reason`` u8 (1, 2 or 3; see ``NAK_REASONS``)."""

    seq: int
    reason: int


class Fault(NamedTuple):
    """FAULT payload: ``code`` u8 (device specific, 1..255), then ``detail`` as length-prefixed ASCII."""

    code: int
    detail: str


def encode_hello(version: int = PROTOCOL_VERSION) -> bytes:
    """HELLO payload: one byte, the protocol version the host speaks."""
    return bytes((check_range(HELLO, "version", version, 0, 255),))


def decode_hello(payload: bytes) -> Hello:
    """Parse a HELLO payload; ``ProtocolError`` unless it is exactly one byte."""
    need_length(HELLO, payload, 1)
    return Hello(payload[0])


def encode_ident(version: int, kind: str, device_id: str, firmware: str) -> bytes:
    """IDENT payload: version u8 + three length-prefixed ASCII strings."""
    return (
        bytes((check_range(IDENT, "version", version, 0, 255),))
        + pack_text(IDENT, kind, "kind")
        + pack_text(IDENT, device_id, "device id")
        + pack_text(IDENT, firmware, "firmware")
    )


def decode_ident(payload: bytes) -> Ident:
    """Parse an IDENT payload; ``ProtocolError`` on a short payload, non-ASCII text or trailing bytes."""
    if not payload:
        raise ProtocolError(IDENT, "empty payload")
    kind, offset = unpack_text(IDENT, payload, 1, "kind")
    device_id, offset = unpack_text(IDENT, payload, offset, "device id")
    firmware, offset = unpack_text(IDENT, payload, offset, "firmware")
    if offset != len(payload):
        raise ProtocolError(IDENT, f"{len(payload) - offset} trailing bytes")
    return Ident(payload[0], kind, device_id, firmware)


def encode_nak(seq: int, reason: int) -> bytes:
    """NAK payload: the rejected frame's seq u8 and a reason from ``NAK_REASONS``."""
    check_range(NAK, "seq", seq, 0, 255)
    if reason not in NAK_REASONS:
        raise ProtocolError(NAK, f"reason {reason!r} is not one of {sorted(NAK_REASONS)}")
    return bytes((seq, reason))


def decode_nak(payload: bytes) -> Nak:
    """Parse a NAK payload; ``ProtocolError`` on wrong length or an unknown reason."""
    need_length(NAK, payload, 2)
    if payload[1] not in NAK_REASONS:
        raise ProtocolError(NAK, f"unknown reason {payload[1]}")
    return Nak(payload[0], payload[1])


def encode_fault(code: int, detail: str = "") -> bytes:
    """FAULT payload: code u8 (1..255) + length-prefixed ASCII detail."""
    return bytes((check_range(FAULT, "code", code, 1, 255),)) + pack_text(FAULT, detail, "detail")


def decode_fault(payload: bytes) -> Fault:
    """Parse a FAULT payload; ``ProtocolError`` on code 0, a short payload or trailing bytes."""
    if not payload:
        raise ProtocolError(FAULT, "empty payload")
    if payload[0] == 0:
        raise ProtocolError(FAULT, "fault code 0 is not defined")
    detail, offset = unpack_text(FAULT, payload, 1, "detail")
    if offset != len(payload):
        raise ProtocolError(FAULT, f"{len(payload) - offset} trailing bytes")
    return Fault(payload[0], detail)


def decode_empty(msg_type: int, payload: bytes) -> tuple[()]:
    """Check that a message without fields has an empty payload (``ProtocolError`` otherwise)."""
    need_length(msg_type, payload, 0)
    return ()
