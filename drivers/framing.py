"""Frame format shared by every device link, and the messages common to all devices.

Wire layout, protocol version 2 (docs/protocol.md, "Frame format")::

    00 | COBS( SEQ u8 | TYPE u8 | PAYLOAD (0..255 bytes) | CRC16 u16 big-endian ) | 00

The body (SEQ, TYPE, PAYLOAD, CRC) is byte-stuffed with COBS (Consistent Overhead Byte Stuffing, Cheshire &
Baker 1999; the ``cobs`` library), so it contains no 0x00 byte, and every frame is written between two 0x00
delimiters. A frame boundary is therefore a property of the bytes alone, never of how they were read: the
receiver cuts the stream at every 0x00 and looks at each piece on its own. ``SEQ`` is a per-sender counter
that wraps 255 -> 0. The CRC is CRC-16/IBM-3740 (a.k.a. CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no
reflection, xorout 0, check value 0x29B1 for ``b"123456789"``) over ``SEQ, TYPE, PAYLOAD``.

``FrameDecoder`` is the receiving half: it buffers the bytes after the last delimiter ("need more bytes"),
drops a piece that is not a frame (bad stuffing, too short, bad CRC, longer than any frame) and goes on at the
next delimiter, keeps at most ``MAX_ENCODED`` bytes buffered, drops exact duplicates and logs sequence gaps,
and never raises on bad input. ``decode`` is the pure, one-step primitive underneath it (pymodbus style).

The common messages (docs/protocol.md, "Common messages") live here too because every device speaks them:
HELLO, IDENT, NAK, PING, PONG and FAULT, each with a small encoder and a decoder that raises ``ProtocolError``.
"""

from __future__ import annotations

import binascii
import collections
import logging
import types
from dataclasses import dataclass
from typing import NamedTuple

from cobs import cobs

from drivers.ratelog import LogLimiter

log = logging.getLogger(__name__)

#: The frame delimiter (docs/protocol.md, "Frame format"): written before and after every frame, never inside.
DELIMITER = 0x00
#: Bytes of the body before the payload: SEQ, TYPE.
HEADER_SIZE = 2
#: Bytes of the body after the payload: the big-endian CRC-16.
CRC_SIZE = 2
#: Largest payload of a frame.
MAX_PAYLOAD = 255
#: Largest body (SEQ, TYPE, 255 payload bytes, CRC) = 259 bytes.
MAX_BODY = HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE
#: Largest stuffed body: COBS adds one byte per started run of 254 bytes, so 259 + 2 = 261 bytes.
MAX_ENCODED = MAX_BODY + (MAX_BODY + 253) // 254
#: Largest frame on the wire, both delimiters included = 263 bytes.
MAX_FRAME = MAX_ENCODED + 2

#: Protocol version carried by HELLO and IDENT (docs/protocol.md, "Handshake"). Version 1 (SYNC 0xA5 and a
#: length byte, no stuffing) is no longer spoken: its frame boundaries depended on how the bytes were read.
PROTOCOL_VERSION = 2

# Common message types (docs/protocol.md, "Common messages").
HELLO = 0x01  #: host -> device: protocol version u8
IDENT = 0x02  #: device -> host: version u8, kind, device id, firmware (length-prefixed ASCII), [boots u32]
NAK = 0x03  #: either way: rejected seq u8, reason u8
PING = 0x04  #: host -> device: empty; the heartbeat (docs/protocol.md, "Heartbeat")
PONG = 0x05  #: device -> host: the answer to PING; empty, or the device's state that grants rights (the panel's key)
ACK = 0x06  #: host -> device: seq u8 of a device-initiated frame received (docs/protocol.md, "Device-initiated frames")
FAULT = 0x0F  #: device -> host: code u8, length-prefixed ASCII detail

#: NAK reasons (docs/protocol.md, "NAK"): code -> name.
#: Read-only: device threads share it.
NAK_REASONS = types.MappingProxyType({1: "bad_frame_or_unknown_type", 2: "bad_payload", 3: "not_allowed_now"})
NAK_UNKNOWN_TYPE = 1
NAK_BAD_PAYLOAD = 2
NAK_NOT_ALLOWED = 3

#: Message type -> name, for logs and errors. Device protocol modules add theirs with ``register_names`` when
#: they are imported (under the import lock, before any device thread runs); device threads only read it.
MESSAGE_NAMES: dict[int, str] = {HELLO: "HELLO", IDENT: "IDENT", NAK: "NAK", PING: "PING", PONG: "PONG", ACK: "ACK",
                                 FAULT: "FAULT"}

#: Device-initiated message types (docs/protocol.md, "Device-initiated frames"): numbered by the device's event
#: counter, acknowledged by the host with ACK and sent again by the device until acknowledged. Device protocol
#: modules add theirs with ``register_device_events`` when imported; device threads only read it.
DEVICE_EVENTS: set[int] = {FAULT}


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


def register_device_events(msg_types: set[int] | frozenset[int]) -> None:
    """Mark message types as device-initiated (acknowledged and sent again until acknowledged)."""
    DEVICE_EVENTS.update(msg_types)


def numbered_as_event(msg_type: int) -> bool:
    """True for a frame of the device's event counter (docs/protocol.md, "Device-initiated frames"): a
    device-initiated type, or a type of no table, which is no answer to a request of the host's and so taken for an
    event it does not know (acknowledged, NAKed, never delivered: else the device would send it for ever)."""
    return msg_type in DEVICE_EVENTS or msg_type not in MESSAGE_NAMES


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
    """Build one frame: ``00 COBS(SEQ TYPE PAYLOAD CRC_hi CRC_lo) 00`` (docs/protocol.md, "Frame format").

    ``seq`` must be 0..255 and ``payload`` at most 255 bytes, else ``ProtocolError``; ``ValueError`` for a
    ``msg_type`` that is not a byte.
    """
    if not 0 <= msg_type <= 0xFF:
        raise ValueError(f"message type {msg_type!r} is not a byte")
    if not 0 <= seq <= 0xFF:
        raise ProtocolError(msg_type, f"seq {seq} is not 0..255")
    payload = bytes(payload)
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(msg_type, f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    body = bytes((seq, msg_type)) + payload
    return b"\x00" + cobs.encode(body + crc16(body).to_bytes(2, "big")) + b"\x00"


class DecodeError(NamedTuple):
    """One piece of the stream between two delimiters that is not a frame: ``kind`` is ``"overlong"`` (more
    bytes than any frame), ``"bad_stuffing"`` (not valid COBS), ``"short"`` (a body without room for SEQ,
    TYPE and CRC) or ``"bad_crc"``; ``skipped`` is how many bytes were dropped."""

    kind: str
    skipped: int
    detail: str


def decode_piece(piece: bytes | bytearray) -> Frame | DecodeError:
    """Decode the bytes between two delimiters (without them; not empty) into a ``Frame`` or a ``DecodeError``.

    Never raises on any input (docs/protocol.md, "Receiving").
    """
    if len(piece) > MAX_ENCODED:
        return DecodeError("overlong", len(piece), f"{len(piece)} bytes between delimiters, at most {MAX_ENCODED}")
    try:
        body = cobs.decode(piece)
    except cobs.DecodeError as exc:
        return DecodeError("bad_stuffing", len(piece), f"not COBS: {exc}")
    if len(body) < HEADER_SIZE + CRC_SIZE:
        return DecodeError("short", len(piece), f"body of {len(body)} bytes, at least {HEADER_SIZE + CRC_SIZE}")
    got = int.from_bytes(body[-CRC_SIZE:], "big")
    want = crc16(body[:-CRC_SIZE])
    if got != want:
        return DecodeError("bad_crc", len(piece), f"CRC 0x{got:04X} != 0x{want:04X} for TYPE=0x{body[1]:02X}")
    return Frame(seq=body[0], msg_type=body[1], payload=bytes(body[HEADER_SIZE:-CRC_SIZE]))


def decode(buffer: bytes | bytearray) -> tuple[int, Frame | None, DecodeError | None]:
    """Look at the start of ``buffer`` once; return ``(consumed, frame, error)``.

    - ``(0, None, None)``: need more bytes (no delimiter yet, and no more bytes than a frame can have).
    - ``(1, None, None)``: a delimiter with nothing before it (between two frames); drop it and call again.
    - ``(n, Frame, None)``: a valid frame and its closing delimiter, ``n`` bytes.
    - ``(n, None, DecodeError)``: ``n`` bytes that are not a frame (with their closing delimiter, if it
      arrived); drop them and call again. For ``"overlong"`` without a delimiter yet, the caller must also
      drop what follows up to the next delimiter (``FrameDecoder`` does).

    The result depends only on the bytes up to the first delimiter, so any split of a stream decodes to the
    same frames (docs/protocol.md, "Receiving"). Never raises on any input.
    """
    end = buffer.find(DELIMITER)
    if end < 0:
        if len(buffer) > MAX_ENCODED:
            return len(buffer), None, DecodeError("overlong", len(buffer), f"more than {MAX_ENCODED} bytes "
                                                                           "without a delimiter")
        return 0, None, None
    if end == 0:
        return 1, None, None
    result = decode_piece(buffer[:end])
    if isinstance(result, Frame):
        return end + 1, result, None
    return end + 1, None, result


class FrameDecoder:
    """Stateful receiver for one link: ``feed(data) -> list[Frame]`` (docs/protocol.md, "Receiving").

    Keeps the bytes after the last delimiter until the next one arrives, at most ``MAX_ENCODED`` of them: a
    longer run is dropped as ``"overlong"`` together with everything up to the next delimiter. Drops pieces
    that are not frames and goes on at the next delimiter; never raises on bad input: errors are counted in
    ``error_counts`` (by ``DecodeError.kind``) and the last 64 are kept in ``recent_errors``. The frames it
    returns are the same however the stream is split into ``feed`` calls.

    With ``track_sequence`` (default) it also applies the receiver sequence rules: a frame identical to the
    previous one (same seq, type and payload) is an exact duplicate and is dropped (``duplicates`` counts
    them); a seq other than previous + 1 (mod 256) is logged at WARNING and counted in ``gaps``, and the frame
    is still delivered. ``name`` labels the log lines (e.g. ``"shoe<-"``).
    """

    def __init__(self, *, name: str = "link", track_sequence: bool = True) -> None:
        self.name = name
        self.track_sequence = track_sequence
        self._buffer = bytearray()
        self._discarding = False  # dropping an overlong run up to the next delimiter
        self._last: Frame | None = None
        self.error_counts: collections.Counter[str] = collections.Counter()
        self.recent_errors: collections.deque[DecodeError] = collections.deque(maxlen=64)
        self.frames = 0
        self.duplicates = 0
        self.gaps = 0
        #: Pieces dropped since the start (the sum of ``error_counts``).
        self.error_total = 0
        self._limited = LogLimiter(log)

    @property
    def pending(self) -> bytes:
        """Bytes buffered after the last delimiter (copy; at most ``MAX_ENCODED``)."""
        return bytes(self._buffer)

    def reset_sequence(self) -> None:
        """Forget the previous frame, so the next one is neither a duplicate nor a gap (new connection)."""
        self._last = None

    def feed(self, data: bytes) -> list[Frame]:
        """Add received bytes; return the complete, valid, non-duplicate frames in arrival order."""
        buffer = self._buffer
        start = 0
        if self._discarding:
            end = data.find(DELIMITER)
            if end < 0:
                return []
            self._discarding = False
            data = data[end + 1:]
        buffer += data
        frames: list[Frame] = []
        while True:
            end = buffer.find(DELIMITER, start)
            if end < 0:
                break
            if end > start:
                result = decode_piece(buffer[start:end])
                if isinstance(result, Frame):
                    if self._accept(result):
                        frames.append(result)
                else:
                    self._error(result)
            start = end + 1
        rest = len(buffer) - start
        if rest > MAX_ENCODED:
            self._error(DecodeError("overlong", rest, f"more than {MAX_ENCODED} bytes without a delimiter"))
            self._discarding = True
            buffer.clear()
        elif start:
            del buffer[:start]
        return frames

    def _error(self, error: DecodeError) -> None:
        self.error_total += 1
        self.error_counts[error.kind] += 1
        self.recent_errors.append(error)
        log.debug("%s: dropped %s", self.name, error)

    def _accept(self, frame: Frame) -> bool:
        if not self.track_sequence or numbered_as_event(frame.msg_type):
            # Device-initiated frames have a counter of their own and are deduplicated by the link, which
            # must acknowledge a repeat again (drivers.link).
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
                self._limited.log(logging.WARNING, (self.name, "gap"), "%s: sequence gap: expected seq %d, got %d",
                                  self.name, expected, frame.seq)
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


def printable_text(msg_type: int, text: str, what: str) -> str:
    """Return ``text`` if it has no control characters (``str.isprintable``: no ESC, CR, NUL, ...), else raise
    ``ProtocolError`` naming ``what``: a name a device gives itself is logged and journaled in public records
    (``DeviceReady``, the panel's key id), where a control character could rewrite a terminal or forge a line."""
    if not text.isprintable():
        raise ProtocolError(msg_type, f"{what} has control characters")
    return text


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
    """IDENT payload: ``version`` u8, then ``kind``, ``device_id``, ``firmware`` as length-prefixed ASCII, then
    optionally ``boots``, the device's power-on counter u32 (docs/protocol.md, "Power-on counter"); None when
    the device sent none."""

    version: int
    kind: str
    device_id: str
    firmware: str
    boots: int | None = None


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


#: Bytes of the power-on counter that may end IDENT (and the shoe's PONG): u32 big-endian.
BOOTS_SIZE = 4


def encode_boots(msg_type: int, boots: int) -> bytes:
    """A power-on counter as sent at the end of IDENT or in the shoe's PONG: u32 big-endian
    (docs/protocol.md, "Power-on counter"); ``ProtocolError`` outside 0..2**32-1."""
    return check_range(msg_type, "power-on counter", boots, 0, 0xFFFF_FFFF).to_bytes(BOOTS_SIZE, "big")


def encode_ident(version: int, kind: str, device_id: str, firmware: str, boots: int | None = None) -> bytes:
    """IDENT payload: version u8 + three length-prefixed ASCII strings, then the power-on counter u32 when the
    device keeps one (``boots``; None: not sent). ``ProtocolError`` for a value out of range."""
    return (
        bytes((check_range(IDENT, "version", version, 0, 255),))
        + pack_text(IDENT, kind, "kind")
        + pack_text(IDENT, device_id, "device id")
        + pack_text(IDENT, firmware, "firmware")
        + (b"" if boots is None else encode_boots(IDENT, boots))
    )


def decode_ident(payload: bytes) -> Ident:
    """Parse an IDENT payload, with or without the power-on counter (docs/protocol.md, "Common messages");
    ``ProtocolError`` on a short payload, non-ASCII text, a kind, device id or firmware with control characters
    (``printable_text``: they are logged and journaled in ``DeviceReady``) or trailing bytes other than the 4 of
    the counter."""
    if not payload:
        raise ProtocolError(IDENT, "empty payload")
    kind, offset = unpack_text(IDENT, payload, 1, "kind")
    device_id, offset = unpack_text(IDENT, payload, offset, "device id")
    firmware, offset = unpack_text(IDENT, payload, offset, "firmware")
    for text, what in ((kind, "kind"), (device_id, "device id"), (firmware, "firmware")):
        printable_text(IDENT, text, what)
    rest = len(payload) - offset
    if rest not in (0, BOOTS_SIZE):
        raise ProtocolError(IDENT, f"{rest} trailing bytes (the power-on counter is {BOOTS_SIZE})")
    boots = int.from_bytes(payload[offset:], "big") if rest else None
    return Ident(payload[0], kind, device_id, firmware, boots)


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


def encode_ack(seq: int) -> bytes:
    """ACK payload: the seq u8 of the device-initiated frame received."""
    return bytes((check_range(ACK, "seq", seq, 0, 255),))


def decode_ack(payload: bytes) -> int:
    """Parse an ACK payload into the acknowledged seq; ``ProtocolError`` unless it is exactly one byte."""
    need_length(ACK, payload, 1)
    return payload[0]


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
