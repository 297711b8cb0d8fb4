"""Bet-sensor messages: type codes and payload encoders/decoders (docs/protocol.md, "Bet sensors").

| type | name         | direction       | payload                                                              |
|------|--------------|-----------------|----------------------------------------------------------------------|
| 0x20 | READ_SPOTS   | host -> sensors | request_id u16 BE                                                    |
| 0x21 | SPOT_CHANGED | sensors -> host | seat u8, spot u8, amount u32 BE (unsolicited)                        |
| 0x22 | SPOTS        | sensors -> host | request_id u16, n u8, n x (seat u8, spot u8, amount u32), non-empty |

Seats are 1..6 (``drivers.events.SEATS``); the spot byte is the index in ``drivers.events.SPOTS``; amounts
are integer minor units (cents). Decoded messages carry spot *names*. All errors are ``ProtocolError``.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from drivers.events import SEATS, SPOTS
from drivers.framing import ProtocolError, check_range, need_length, register_device_events, register_names

KIND = "sensors"

READ_SPOTS = 0x20
SPOT_CHANGED = 0x21
SPOTS_MSG = 0x22

register_names({READ_SPOTS: "READ_SPOTS", SPOT_CHANGED: "SPOT_CHANGED", SPOTS_MSG: "SPOTS"})
register_device_events({SPOT_CHANGED})

_ENTRY = struct.Struct(">BBI")
#: Largest amount a spot can report (u32 minor units).
MAX_AMOUNT = 0xFFFF_FFFF


class ReadSpots(NamedTuple):
    """READ_SPOTS payload: ``request_id`` u16 echoed in the SPOTS answer."""

    request_id: int


class SpotReport(NamedTuple):
    """SPOT_CHANGED payload (and one SPOTS entry): ``seat`` 1..6, ``spot`` name, ``amount`` minor units."""

    seat: int
    spot: str
    amount: int


class Spots(NamedTuple):
    """SPOTS payload: ``request_id`` and the non-empty spots as ``(seat, spot, amount)`` in wire order."""

    request_id: int
    spots: tuple[tuple[int, str, int], ...]


def _pack_entry(msg_type: int, seat: int, spot: str, amount: int, *, allow_zero: bool) -> bytes:
    check_range(msg_type, "seat", seat, SEATS[0], SEATS[-1])
    if spot not in SPOTS:
        raise ProtocolError(msg_type, f"unknown spot {spot!r}; expected one of {SPOTS}")
    check_range(msg_type, "amount", amount, 0 if allow_zero else 1, MAX_AMOUNT)
    return _ENTRY.pack(seat, SPOTS.index(spot), amount)


def _unpack_entry(msg_type: int, raw: bytes, *, allow_zero: bool) -> SpotReport:
    seat, spot_code, amount = _ENTRY.unpack(raw)
    if seat not in SEATS:
        raise ProtocolError(msg_type, f"seat {seat} is not 1..6")
    if spot_code >= len(SPOTS):
        raise ProtocolError(msg_type, f"spot code {spot_code} is not 0..{len(SPOTS) - 1}")
    if amount == 0 and not allow_zero:
        raise ProtocolError(msg_type, f"seat {seat} spot {SPOTS[spot_code]} listed with amount 0")
    return SpotReport(seat, SPOTS[spot_code], amount)


def encode_read_spots(request_id: int) -> bytes:
    """READ_SPOTS payload: ``request_id`` u16 BE (0..65535)."""
    return struct.pack(">H", check_range(READ_SPOTS, "request_id", request_id, 0, 0xFFFF))


def decode_read_spots(payload: bytes) -> ReadSpots:
    """Parse READ_SPOTS; ``ProtocolError`` unless exactly two bytes."""
    need_length(READ_SPOTS, payload, 2)
    return ReadSpots(struct.unpack(">H", payload)[0])


def encode_spot_changed(seat: int, spot: str, amount: int) -> bytes:
    """SPOT_CHANGED payload: seat u8, spot index u8, amount u32 BE (0 = chips removed)."""
    return _pack_entry(SPOT_CHANGED, seat, spot, amount, allow_zero=True)


def decode_spot_changed(payload: bytes) -> SpotReport:
    """Parse SPOT_CHANGED (6 bytes); ``ProtocolError`` for a bad length, seat or spot code."""
    need_length(SPOT_CHANGED, payload, _ENTRY.size)
    return _unpack_entry(SPOT_CHANGED, payload, allow_zero=True)


def encode_spots(request_id: int, spots: tuple[tuple[int, str, int], ...] | list[tuple[int, str, int]]) -> bytes:
    """SPOTS payload: request_id u16, n u8, then n entries of seat u8, spot u8, amount u32 (all > 0).

    ``ProtocolError`` for a bad entry, an entry with amount 0, or the same seat/spot twice.
    """
    check_range(SPOTS_MSG, "request_id", request_id, 0, 0xFFFF)
    spots = tuple(spots)
    if len({(seat, spot) for seat, spot, _ in spots}) != len(spots):
        raise ProtocolError(SPOTS_MSG, "the same seat and spot are listed twice")
    body = b"".join(_pack_entry(SPOTS_MSG, s, p, a, allow_zero=False) for s, p, a in spots)
    return struct.pack(">HB", request_id, len(spots)) + body


def decode_spots(payload: bytes) -> Spots:
    """Parse SPOTS; ``ProtocolError`` if the length does not match n, an entry is invalid or empty, or a
    seat/spot appears twice."""
    if len(payload) < 3:
        raise ProtocolError(SPOTS_MSG, f"payload is {len(payload)} bytes, at least 3 expected")
    request_id, count = struct.unpack(">HB", payload[:3])
    if len(payload) != 3 + _ENTRY.size * count:
        raise ProtocolError(SPOTS_MSG, f"n={count} needs {3 + _ENTRY.size * count} bytes, payload is {len(payload)}")
    entries = tuple(
        tuple(_unpack_entry(SPOTS_MSG, payload[3 + _ENTRY.size * i : 3 + _ENTRY.size * (i + 1)], allow_zero=False))
        for i in range(count)
    )
    if len({(seat, spot) for seat, spot, _ in entries}) != len(entries):
        raise ProtocolError(SPOTS_MSG, "the same seat and spot are listed twice")
    return Spots(request_id, entries)  # type: ignore[arg-type]
