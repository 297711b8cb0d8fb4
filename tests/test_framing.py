"""Frame encoding/decoding (docs/protocol.md "Frame format", "Receiving") and the documented byte traces.

Right values come from sources independent of ``drivers/``: the published CRC-16/IBM-3740 check value 0x29B1,
a bit-by-bit CRC written here from the algorithm's parameters, Python's ``binascii.crc_hqx`` (which computed
the CRCs in the docs), and byte layouts written out by hand from the spec.
"""

from __future__ import annotations

import binascii
import json
import logging
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from drivers import framing
from drivers.framing import MAX_ENCODED, MAX_FRAME, Frame, FrameDecoder, ProtocolError, decode, encode_frame
from drivers.panel import protocol as panel
from drivers.reader import protocol as reader
from drivers.sensors import protocol as sensors
from drivers.shoe import protocol as shoe
from tests.examples import examples

DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"


def reference_crc(data: bytes) -> int:
    """CRC-16/IBM-3740 bit by bit from its parameters: poly 0x1021, init 0xFFFF, no reflection, xorout 0."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def reference_cobs(data: bytes) -> bytes:
    """COBS encoding written here from the algorithm (Cheshire & Baker 1999): the data, with a zero appended,
    is cut after every zero byte and after every run of 254 non-zero bytes that more data follows; each block
    is written as its length + 1 (the code byte) and its non-zero bytes."""
    out, run = bytearray(), bytearray()
    for index, byte in enumerate(data):
        if byte == 0:
            out += bytes([len(run) + 1]) + run
            run.clear()
        else:
            run.append(byte)
            if len(run) == 254 and index + 1 < len(data):
                out += b"\xff" + run
                run.clear()
    return bytes(out + bytes([len(run) + 1]) + run)


def reference_uncobs(data: bytes) -> bytes | None:
    """The inverse of ``reference_cobs``; None for bytes that are not a COBS encoding."""
    out, i = bytearray(), 0
    while i < len(data):
        code = data[i]
        if code == 0 or i + code > len(data) or 0 in data[i + 1 : i + code]:
            return None
        out += data[i + 1 : i + code]
        i += code
        if code != 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


def reference_frame(seq: int, msg_type: int, payload: bytes) -> bytes:
    body = bytes([seq, msg_type]) + payload
    return b"\x00" + reference_cobs(body + reference_crc(body).to_bytes(2, "big")) + b"\x00"


def reference_decode(data: bytes) -> list[Frame]:
    """Independent reader: cut at every 0x00, un-stuff each piece, keep those with a valid CRC."""
    frames = []
    for piece in data.split(b"\x00"):
        body = reference_uncobs(piece) if 0 < len(piece) <= MAX_ENCODED else None
        if body is not None and len(body) >= 4 and reference_crc(body[:-2]) == int.from_bytes(body[-2:], "big"):
            frames.append(Frame(body[0], body[1], body[2:-2]))
    return frames


# --------------------------------------------------------------------------------------------------------------
# CRC, stuffing and encoding


def test_crc_check_value():
    assert reference_crc(b"123456789") == 0x29B1
    assert framing.crc16(b"123456789") == 0x29B1
    assert binascii.crc_hqx(b"123456789", 0xFFFF) == 0x29B1


@given(st.binary(max_size=300))
def test_crc_matches_independent_implementations(data):
    assert framing.crc16(data) == reference_crc(data) == binascii.crc_hqx(data, 0xFFFF)


def test_reference_cobs_matches_the_published_examples():
    # Examples from the COBS paper / Wikipedia "Consistent Overhead Byte Stuffing".
    assert reference_cobs(b"\x00") == b"\x01\x01"
    assert reference_cobs(b"\x00\x00") == b"\x01\x01\x01"
    assert reference_cobs(b"\x11\x22\x00\x33") == b"\x03\x11\x22\x02\x33"
    assert reference_cobs(b"\x11\x22\x33\x44") == b"\x05\x11\x22\x33\x44"
    assert reference_cobs(b"\x11\x00\x00\x00") == b"\x02\x11\x01\x01\x01"
    assert reference_cobs(bytes(range(1, 255))) == b"\xff" + bytes(range(1, 255))
    assert reference_cobs(bytes(range(0, 255))) == b"\x01\xff" + bytes(range(1, 255))
    assert reference_cobs(bytes(range(1, 256))) == b"\xff" + bytes(range(1, 255)) + b"\x02\xff"


def test_hello_frame_bytes_by_hand():
    # Body SEQ=0, TYPE=HELLO(1), payload version 2, CRC over 00 01 02 (docs/protocol.md trace); COBS turns the
    # leading 0x00 into a code byte 01 and the run "01 02 crc crc" gets code 05.
    crc = reference_crc(bytes([0x00, 0x01, 0x02]))
    assert crc == binascii.crc_hqx(bytes([0x00, 0x01, 0x02]), 0xFFFF) == 0xDFEF
    assert encode_frame(0, framing.HELLO, framing.encode_hello()) == bytes.fromhex("00 01 05 01 02 df ef 00")


def test_frame_layout_and_sizes():
    frame = encode_frame(0xFF, 0x10, b"")
    assert frame == b"\x00" + reference_cobs(bytes([0xFF, 0x10]) + reference_crc(bytes([0xFF, 0x10])).to_bytes(2, "big")) + b"\x00"
    assert 0 not in frame[1:-1]
    assert len(encode_frame(1, 0x32, bytes([7]) * 255)) == MAX_FRAME == 263


def test_encode_rejects_oversized_payload_and_bad_seq():
    with pytest.raises(ProtocolError, match="256 bytes"):
        encode_frame(0, 0x32, bytes(256))
    with pytest.raises(ProtocolError, match="seq 256"):
        encode_frame(256, 0x32, b"")


@given(st.integers(0, 255), st.integers(0, 255), st.binary(max_size=255))
def test_round_trip(seq, msg_type, payload):
    data = encode_frame(seq, msg_type, payload)
    assert data == reference_frame(seq, msg_type, payload)
    assert len(data) <= MAX_FRAME
    assert decode(data) == (1, None, None)  # the leading delimiter
    assert decode(data[1:]) == (len(data) - 1, Frame(seq, msg_type, payload), None)
    assert FrameDecoder().feed(data) == [Frame(seq, msg_type, payload)]


# --------------------------------------------------------------------------------------------------------------
# decode() primitive


def test_decode_need_more_bytes():
    data = reference_frame(3, 0x21, bytes([2, 1, 0, 0, 1, 0xF4]))[1:]
    for cut in range(len(data)):
        assert decode(data[:cut]) == (0, None, None)


def test_decode_drops_a_piece_that_is_not_a_frame_with_its_delimiter():
    consumed, frame, error = decode(b"\x05\x01\x02\x00" + reference_frame(1, 0x31, b"\x01"))
    assert (consumed, frame) == (4, None)
    assert error.kind in ("bad_stuffing", "bad_crc", "short") and error.skipped == 3


def test_decode_bad_crc_costs_only_that_frame():
    good = reference_frame(1, 0x31, b"\x01")
    bad = bytearray(reference_frame(0, 0x31, b"\x02"))
    bad[-2] ^= 0x01
    decoder = FrameDecoder()
    assert decoder.feed(bytes(bad) + good) == [Frame(1, 0x31, b"\x01")]
    assert decoder.error_counts["bad_crc"] == 1


def test_overlong_run_is_dropped_up_to_the_next_delimiter_and_the_buffer_stays_bounded():
    good = reference_frame(2, 0x31, b"\x01")
    noise = bytes([0x55]) * 1000
    decoder = FrameDecoder()
    assert decoder.feed(noise[:400]) == []
    assert len(decoder.pending) == 0  # more than MAX_ENCODED without a delimiter: dropped at once
    assert decoder.feed(noise[400:] + bytes([0x01, 0x02]) + good) == [Frame(2, 0x31, b"\x01")]
    assert decoder.error_counts == {"overlong": 1}
    whole = FrameDecoder()
    assert whole.feed(noise + bytes([0x01, 0x02]) + good) == [Frame(2, 0x31, b"\x01")]
    assert whole.error_counts == {"overlong": 1}


# --------------------------------------------------------------------------------------------------------------
# FrameDecoder


def test_truncated_frame_completes_later():
    data = reference_frame(9, 0x13, b"\x00\x00\x00\x07\x02AhTd")
    decoder = FrameDecoder()
    assert decoder.feed(data[:5]) == []
    assert decoder.pending == data[1:5]
    assert decoder.feed(data[5:-1]) == []
    assert decoder.feed(data[-1:]) == [Frame(9, 0x13, b"\x00\x00\x00\x07\x02AhTd")]
    assert decoder.pending == b""
    assert sum(decoder.error_counts.values()) == 0


def test_a_frame_inside_another_frames_payload_is_never_seen():
    # The version-1 ambiguity: a HELLO whose payload held the bytes of a BUTTON void_round frame read as a
    # phantom press when split. Stuffed, the inner frame's delimiters are not on the wire.
    inner = reference_frame(4, 0x31, b"\x08")
    outer = reference_frame(0, framing.HELLO, inner)
    for cut in range(len(outer) + 1):
        decoder = FrameDecoder(track_sequence=False)
        assert decoder.feed(outer[:cut]) + decoder.feed(outer[cut:]) == [Frame(0, framing.HELLO, inner)]


def test_garbage_between_frames():
    frames = [reference_frame(i, 0x21, bytes([1, i, 0, 0, 0, 5])) for i in range(3)]
    data = b"\x00\xff" + frames[0] + b"noise\xa5" + frames[1] + b"\x13\x37" + frames[2]
    decoder = FrameDecoder()
    assert [f.seq for f in decoder.feed(data)] == [0, 1, 2]
    assert sum(decoder.error_counts.values()) == 3


def test_exact_duplicate_dropped_and_same_seq_other_bytes_kept(caplog):
    frame = reference_frame(5, 0x30, b"\x00\x01")
    decoder = FrameDecoder(name="panel<-")
    assert decoder.feed(frame + frame) == [Frame(5, 0x30, b"\x00\x01")]
    assert decoder.duplicates == 1
    with caplog.at_level(logging.WARNING, logger="drivers.framing"):
        assert decoder.feed(reference_frame(5, 0x30, b"\x00\x02")) == [Frame(5, 0x30, b"\x00\x02")]
    assert decoder.gaps == 1
    assert "expected seq 6, got 5" in caplog.text


def test_sequence_gap_logged_and_wrap_is_not_a_gap(caplog):
    decoder = FrameDecoder(name="shoe<-")
    with caplog.at_level(logging.WARNING, logger="drivers.framing"):
        decoder.feed(reference_frame(254, 0x11, b"\x34"))
        decoder.feed(reference_frame(255, 0x11, b"\x34"))
        decoder.feed(reference_frame(0, 0x11, b"\x34"))
        assert decoder.gaps == 0 and caplog.text == ""
        decoder.feed(reference_frame(3, 0x11, b"\x34"))
    assert decoder.gaps == 1
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "expected seq 1, got 3" in caplog.text


def test_sequence_tracking_can_be_switched_off():
    frame = reference_frame(5, 0x30, b"\x00\x01")
    assert len(FrameDecoder(track_sequence=False).feed(frame + frame)) == 2


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=300), max_size=12))
@pytest.mark.timeout(60)
def test_arbitrary_bytes_never_raise_nor_hang_and_the_buffer_is_bounded(chunks):
    decoder = FrameDecoder()
    for chunk in chunks:
        for frame in decoder.feed(chunk):
            assert isinstance(frame, Frame)
        assert len(decoder.pending) <= MAX_ENCODED
        assert 0 not in decoder.pending


@st.composite
def stream_with_garbage(draw):
    count = draw(st.integers(1, 6))
    frames = [
        Frame(i, draw(st.integers(0, 255)), draw(st.binary(max_size=40)))
        for i in range(count)  # distinct consecutive seqs: no duplicates, no gaps
    ]
    garbage_bytes = st.binary(max_size=30) | st.lists(
        st.sampled_from([0xA5, 0x00, 0xFF, 0x05, 0x01]) | st.integers(0, 255), max_size=30
    ).map(bytes)
    garbage = [draw(garbage_bytes) for _ in range(count + 1)]
    for piece in garbage:
        assume(not reference_decode(b"\x00" + piece + b"\x00"))
    stream = garbage[0] + b"".join(reference_frame(f.seq, f.msg_type, f.payload) + g for f, g in zip(frames, garbage[1:]))
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    return frames, stream, cuts


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(stream_with_garbage())
@pytest.mark.timeout(60)
def test_valid_frames_recovered_through_garbage_and_splits(case):
    frames, stream, cuts = case
    decoder = FrameDecoder()
    got = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)]):
        got += decoder.feed(stream[start:end])
    assert got == frames


# --------------------------------------------------------------------------------------------------------------
# Payload codecs: errors name the message and never a card value


def test_stack_errors_name_position_not_card():
    payload = b"\x00\x00\x00\x01\x02" + b"AhXx"
    with pytest.raises(ProtocolError) as info:
        shoe.decode_stack(payload)
    assert "STACK (0x13)" in str(info.value) and "card 2" in str(info.value)
    assert "Ah" not in str(info.value) and "Xx" not in str(info.value)
    with pytest.raises(ProtocolError, match="same card twice"):
        shoe.decode_stack(b"\x00\x00\x00\x01\x02AhAh")
    with pytest.raises(ProtocolError, match="count 2 needs 9 bytes"):
        shoe.decode_stack(b"\x00\x00\x00\x01\x02Ah")


def test_dispense_count_and_txn_validated():
    assert shoe.encode_dispense(0xFFFFFFFF, 2) == b"\xff\xff\xff\xff\x02"
    with pytest.raises(ProtocolError, match="count must be one of"):
        shoe.encode_dispense(1, 3)
    with pytest.raises(ProtocolError, match="txn_id"):
        shoe.encode_dispense(-1, 2)
    assert [shoe.fault_name(c) for c in range(1, 7)] == ["jam", "misfeed", "unreadable_card", "empty", "door_open", "fault_6"]


def test_spots_codec():
    payload = bytes.fromhex("0001 02 0201000001f4 03050000 09c4".replace(" ", ""))
    assert sensors.decode_spots(payload) == (1, ((2, "ante_across", 500), (3, "middle", 2500)))
    with pytest.raises(ProtocolError, match="amount 0"):
        sensors.decode_spots(bytes.fromhex("000101020100000000"))
    with pytest.raises(ProtocolError, match="seat 7"):
        sensors.decode_spot_changed(bytes.fromhex("070100000001"))
    with pytest.raises(ProtocolError, match="spot code 6"):
        sensors.decode_spot_changed(bytes.fromhex("010600000001"))


def test_panel_codec():
    assert panel.encode_lamps(["open_betting", "reveal"]) == b"\x00\x09"
    assert panel.decode_lamps(b"\x00\x06").buttons == {"no_more_bets", "confirm"}
    # buttons 9-10 are the payout check's, 11-13 switch the dealing mode and hold a seat (docs/protocol.md,
    # "Dealer panel"); bit 13 is no button
    assert panel.decode_lamps(b"\x03\x00").buttons == {"paid", "accept_mispay"}
    assert panel.decode_lamps(b"\x1c\x00").buttons == {"deal_by_hand", "deal_by_shoe", "hold_seat"}
    with pytest.raises(ProtocolError, match="beyond"):
        panel.decode_lamps(b"\x40\x00")  # bit 14: a fifteenth button, beyond the fourteen
    assert panel.decode_button(b"\x0d").button == "hold_seat"
    with pytest.raises(ProtocolError, match="unknown button code 15"):
        panel.decode_button(b"\x0f")
    # "a" + 40 x "é" (2 bytes each) = 81 bytes; 64 bytes would split a character, so 63 are kept.
    cut = panel.fit_display("a" + "é" * 40)
    assert cut == "a" + "é" * 31 and len(cut.encode()) == 63
    assert panel.fit_display("Place your bets") == "Place your bets"


@pytest.mark.parametrize("call, problem", [
    (lambda: panel.encode_button("fold"), "unknown button 'fold'"),
    (lambda: panel.encode_lamps(["reveal", "fold"]), "unknown button 'fold'"),
    (lambda: panel.encode_display("x" * 65), "text is 65 bytes, at most 64"),
    (lambda: panel.encode_display("\ud800"), "text is not a UTF-8 encodable string"),
    (lambda: panel.decode_display(b"x" * 65), "text is 65 bytes, at most 64"),
    (lambda: panel.encode_key(True, ""), "key id is 0 bytes, 1 to 32 expected"),
    (lambda: panel.encode_key(True, "k" * 33), "key id is 33 bytes, 1 to 32 expected"),
    (lambda: panel.encode_key(True, "\udfff"), "key id is not a UTF-8 encodable string"),
    (lambda: panel.decode_key(b"\x01\xff\xfe"), "key id is not valid UTF-8"),
    (lambda: panel.decode_key_status(b"\x01"), "key status: payload is 1 bytes, 2 to 33 expected"),
    (lambda: panel.decode_key_status(b"\x00SUP-7"), "key status: an id with state 0 (off is a single 0 byte)"),
])
def test_panel_payloads_outside_the_protocol_are_refused_naming_what_is_wrong(call, problem):
    """docs/protocol.md "Dealer panel": DISPLAY is UTF-8 text of at most 64 bytes; KEY a state byte and a key
    id of 1 to 32 UTF-8 bytes; the panel's PONG a single 0 (no key) or a KEY payload with state 1."""
    with pytest.raises(ProtocolError) as refused:
        call()
    assert refused.value.problem.startswith(problem)  # an unknown button's refusal goes on with the known ones


def test_panel_key_status_round_trips_and_display_text_must_be_a_string():
    assert panel.decode_key_status(panel.encode_key_status(None)) == panel.Key(False, "")
    assert panel.decode_key_status(panel.encode_key_status("SUP-7")) == panel.Key(True, "SUP-7")
    with pytest.raises(TypeError, match="display text must be str, got bytes"):
        panel.fit_display(b"Place your bets")


def test_ident_codec_rejects_trailing_bytes():
    good = bytes.fromhex("01 04 73686f65 00 00".replace(" ", ""))
    assert framing.decode_ident(good) == (1, "shoe", "", "", None)
    assert framing.decode_ident(good + b"\x00\x00\x01\x02").boots == 258  # the power-on counter, u32 BE
    with pytest.raises(ProtocolError, match="IDENT .*trailing"):
        framing.decode_ident(good + b"\x00")
    with pytest.raises(ProtocolError, match="announces 9 bytes"):
        framing.decode_ident(b"\x01\x09shoe")


# --------------------------------------------------------------------------------------------------------------
# docs/protocol.md traces: the page and the code read the same bytes

CODECS = {
    "HELLO": (framing.HELLO, framing.decode_hello, lambda f: framing.encode_hello(**f)),
    "IDENT": (framing.IDENT, framing.decode_ident, lambda f: framing.encode_ident(**f)),
    "NAK": (framing.NAK, framing.decode_nak, lambda f: framing.encode_nak(**f)),
    "ACK": (framing.ACK, lambda p: {"seq": framing.decode_ack(p)}, lambda f: framing.encode_ack(**f)),
    "FAULT": (framing.FAULT, framing.decode_fault, lambda f: framing.encode_fault(**f)),
    "SHUFFLE": (shoe.SHUFFLE, lambda p: framing.decode_empty(shoe.SHUFFLE, p) or {}, lambda f: b""),
    "SHUFFLE_DONE": (shoe.SHUFFLE_DONE, shoe.decode_shuffle_done, lambda f: shoe.encode_shuffle_done(**f)),
    "DISPENSE": (shoe.DISPENSE, shoe.decode_dispense, lambda f: shoe.encode_dispense(**f)),
    "STACK": (shoe.STACK, shoe.decode_stack, lambda f: shoe.encode_stack(f["txn_id"], f["cards"])),
    "QUERY_LAST": (shoe.QUERY_LAST, lambda p: framing.decode_empty(shoe.QUERY_LAST, p) or {}, lambda f: b""),
    "LAST": (shoe.LAST, shoe.decode_last, lambda f: shoe.encode_last(f["txn_id"], f["cards"])),
    "DOOR_CLOSED": (shoe.DOOR_CLOSED, lambda p: shoe.decode_door_closed(p) or {}, lambda f: b""),
    "PING": (framing.PING, lambda p: framing.decode_empty(framing.PING, p) or {}, lambda f: b""),
    # the shoe's PONG carries its power-on counter (the only non-empty PONG in the traces)
    "PONG": (framing.PONG, lambda p: {"boots": shoe.decode_pong(p)} if p else {},
             lambda f: shoe.encode_pong(f.get("boots"))),
    "READ_SPOTS": (sensors.READ_SPOTS, sensors.decode_read_spots, lambda f: sensors.encode_read_spots(**f)),
    "SPOT_CHANGED": (sensors.SPOT_CHANGED, sensors.decode_spot_changed, lambda f: sensors.encode_spot_changed(**f)),
    "SPOTS": (
        sensors.SPOTS_MSG,
        sensors.decode_spots,
        lambda f: sensors.encode_spots(f["request_id"], [tuple(e) for e in f["spots"]]),
    ),
    "LAMPS": (panel.LAMPS, panel.decode_lamps, lambda f: panel.encode_lamps(f["buttons"])),
    "BUTTON": (panel.BUTTON, panel.decode_button, lambda f: panel.encode_button(**f)),
    "DISPLAY": (panel.DISPLAY, panel.decode_display, lambda f: panel.encode_display(**f)),
    "KEY": (panel.KEY, panel.decode_key, lambda f: panel.encode_key(**f)),
    "CARDS": (panel.CARDS, panel.decode_cards, lambda f: panel.encode_cards(**f)),
    "SCAN": (reader.SCAN, reader.decode_scan, lambda f: reader.encode_scan(**f)),
}
HOST_SENDS = {"HELLO", "NAK", "ACK", "PING", "SHUFFLE", "DISPENSE", "QUERY_LAST", "READ_SPOTS", "LAMPS", "DISPLAY"}
DEVICE_SENDS = {"IDENT", "NAK", "PONG", "FAULT", "SHUFFLE_DONE", "STACK", "LAST", "DOOR_CLOSED", "SPOT_CHANGED",
                "SPOTS", "BUTTON", "KEY", "CARDS", "SCAN"}
#: The device-initiated messages of docs/protocol.md ("Device-initiated frames", "The door", "Card reader"):
#: numbered by the device's event counter, each acknowledged.
DEVICE_INITIATED = {"BUTTON", "KEY", "CARDS", "SPOT_CHANGED", "DOOR_CLOSED", "SCAN", "FAULT"}


def plain(value):
    """Decoded payloads as JSON-like data: tuples -> lists, frozensets -> sorted lists."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(value)
    return value


def doc_traces():
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```trace\n(.*?)```", text, flags=re.S)
    lines = []
    for block_no, block in enumerate(blocks):
        for line in block.strip().splitlines():
            direction, hex_bytes, message = (part.strip() for part in line.split("|"))
            name, _, fields = message.partition(" ")
            lines.append((block_no, direction, bytes.fromhex(hex_bytes), name, json.loads(fields)))
    return blocks, lines


def sessions(lines):
    """The numbers of the trace blocks that show a whole session (they begin with the handshake)."""
    return sorted({b for b, _, _, n, _ in lines if n == "HELLO"})


def test_docs_have_a_trace_per_device_with_handshake():
    blocks, lines = doc_traces()
    assert len(blocks) == 5  # acknowledged device frames, shoe, shoe after a power cycle, sensors, panel
    assert [kind for kind in ("shoe", "shoe", "sensors", "panel")] == [
        next(d for b, d, _, _, _ in lines if b == block_no).split("->")[1] for block_no in sessions(lines)]
    for block_no in sessions(lines):
        kind = next(d for b, d, _, _, _ in lines if b == block_no).split("->")[1]
        names = [(d, n) for b, d, _, n, _ in lines if b == block_no]
        assert names[:2] == [(f"host->{kind}", "HELLO"), (f"{kind}->host", "IDENT")]
        assert len(names) >= 4


def test_doc_traces_acknowledge_every_device_initiated_frame():
    _, lines = doc_traces()
    for index, (block_no, direction, data, name, _) in enumerate(lines):
        if name in DEVICE_INITIATED:
            (frame,) = reference_decode(data)
            acks = [reference_decode(d)[0].payload for b, dr, d, n, _ in lines[index + 1:] if n == "ACK" and b == block_no]
            assert bytes([frame.seq]) in acks, f"{name} seq {frame.seq} is never acknowledged"


@pytest.mark.parametrize("line", doc_traces()[1], ids=lambda line: f"{line[1]}-{line[3]}")
def test_doc_trace_frame(line):
    _, direction, data, name, fields = line
    assert FrameDecoder().feed(data) == reference_decode(data), f"{name}: the code and the reference disagree"
    (frame,) = reference_decode(data)
    assert data[0] == data[-1] == 0 and 0 not in data[1:-1], f"{name}: not one delimited frame"
    msg_type, decode_payload, encode_payload = CODECS[name]
    assert frame.msg_type == msg_type
    assert plain(decode_payload(frame.payload)) == fields
    if name == "DISPENSE" and fields["count"] not in shoe.STACK_SIZES:
        # The doc shows the shoe NAKing a bad count; our own encoder refuses to produce it.
        with pytest.raises(ProtocolError, match="count must be one of"):
            encode_payload(fields)
    else:
        assert encode_frame(frame.seq, msg_type, encode_payload(fields)) == data
    sender = direction.split("->")[0]
    assert name in (HOST_SENDS if sender == "host" else DEVICE_SENDS)


def test_doc_trace_sequence_numbers_count_per_sender():
    _, lines = doc_traces()
    last: dict[tuple[int, str, bool], int] = {}
    for block_no, direction, data, name, _ in lines:
        if block_no not in sessions(lines):
            continue  # the example of a frame sent again repeats its seq on purpose
        # a device numbers its device-initiated frames with a counter of their own
        key = (block_no, direction.split("->")[0], name in DEVICE_INITIATED)
        (frame,) = reference_decode(data)
        if key in last:
            assert frame.seq == (last[key] + 1) % 256, f"{direction}: seq jumps in the doc"
        last[key] = frame.seq


# --------------------------------------------------------------------------------------------------------------
# Property tests: arbitrary input raises only the documented errors

PAYLOAD_DECODERS = {
    "HELLO": framing.decode_hello,
    "IDENT": framing.decode_ident,
    "NAK": framing.decode_nak,
    "ACK": framing.decode_ack,
    "FAULT": framing.decode_fault,
    "PING": lambda p: framing.decode_empty(framing.PING, p),
    "PONG": lambda p: framing.decode_empty(framing.PONG, p),
    "SHUFFLE": lambda p: framing.decode_empty(shoe.SHUFFLE, p),
    "SHUFFLE_DONE": shoe.decode_shuffle_done,
    "DISPENSE": shoe.decode_dispense,
    "STACK": shoe.decode_stack,
    "QUERY_LAST": lambda p: framing.decode_empty(shoe.QUERY_LAST, p),
    "LAST": shoe.decode_last,
    "DOOR_CLOSED": shoe.decode_door_closed,
    "READ_SPOTS": sensors.decode_read_spots,
    "SPOT_CHANGED": sensors.decode_spot_changed,
    "SPOTS": sensors.decode_spots,
    "LAMPS": panel.decode_lamps,
    "BUTTON": panel.decode_button,
    "DISPLAY": panel.decode_display,
    "KEY": panel.decode_key,
    "CARDS": panel.decode_cards,
    "SCAN": reader.decode_scan,
}


def test_every_message_has_a_payload_decoder_under_test():
    assert set(PAYLOAD_DECODERS) == set(CODECS) == set(framing.MESSAGE_NAMES.values())


@settings(max_examples=examples(150))
@pytest.mark.parametrize("name", sorted(PAYLOAD_DECODERS))
@given(payload=st.binary(max_size=255) | st.sampled_from([b"", b"\x00", b"\x00" * 5, b"\x00\x00\x00\x01\x02AhAh"]))
def test_payload_decoders_raise_only_protocol_error(name, payload):
    try:
        PAYLOAD_DECODERS[name](payload)
    except ProtocolError as exc:
        assert exc.msg_type == CODECS[name][0]


def split_feed(data: bytes, cuts: list[int]) -> list[Frame]:
    decoder = FrameDecoder(track_sequence=False)
    got = []
    points = sorted({min(c, len(data)) for c in cuts})
    for start, end in zip([0, *points], [*points, len(data)]):
        got += decoder.feed(data[start:end])
    return got


frame_soup = st.lists(
    st.builds(lambda seq, t, p: reference_frame(seq, t, p), st.integers(0, 255), st.integers(0, 255),
              st.binary(max_size=300).map(lambda b: b[:255]))
    | st.binary(max_size=400) | st.sampled_from([b"\x00", b"\x00\x00", b"\xa5", bytes(300), b"\x01" * 300]),
    max_size=8,
).map(b"".join)


@settings(max_examples=examples(500), suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=900) | frame_soup, st.lists(st.integers(0, 900), max_size=20))
@pytest.mark.timeout(120)
def test_any_split_of_any_stream_gives_the_same_frames_as_an_independent_reader(data, cuts):
    """For any byte stream and any split of it the decoded frames are identical: to the stream read whole, and
    to an independent reader that cuts at every delimiter (docs/protocol.md, "Receiving")."""
    whole = FrameDecoder(track_sequence=False).feed(data)
    assert split_feed(data, cuts) == whole == reference_decode(data)
    assert split_feed(data, list(range(len(data) + 1))) == whole  # byte by byte


def test_the_device_initiated_messages_of_the_page_are_those_the_code_acknowledges():
    assert {framing.MESSAGE_NAMES[t] for t in framing.DEVICE_EVENTS} == DEVICE_INITIATED


#: What a shoe sends, as (type, payload laid out here by hand from docs/protocol.md "Shoe", the fields meant):
#: its door shut again, a fault (code u8 + u8 length + ASCII), a shuffle's count, a stack (txn u32 BE, count, ASCII).
shoe_message = st.one_of(
    st.just((0x16, b"", ())),
    st.builds(lambda code, text: (0x0F, bytes([code, len(text)]) + text.encode(), (code, text)),
              st.integers(1, 5), st.text("abcdefghij ", max_size=20)),
    st.builds(lambda count: (0x11, bytes([count]), (count,)), st.integers(0, 255)),
    st.builds(lambda txn, cards: (0x13, txn.to_bytes(4, "big") + bytes([len(cards)]) + "".join(cards).encode(),
                                  (txn, tuple(cards))),
              st.integers(0, 2**32 - 1),
              st.lists(st.sampled_from([r + s for r in "23456789TJQKA" for s in "cdhs"]), min_size=2, max_size=5,
                       unique=True).filter(lambda cards: len(cards) in (2, 5))),
)
SHOE_DECODERS = {0x16: shoe.decode_door_closed, 0x0F: lambda p: tuple(framing.decode_fault(p)),
                 0x11: lambda p: tuple(shoe.decode_shuffle_done(p)), 0x13: lambda p: tuple(shoe.decode_stack(p))}


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(shoe_message, min_size=1, max_size=8), st.lists(st.integers(0, 400), max_size=12))
@pytest.mark.timeout(120)
def test_a_shoe_stream_with_its_door_shut_reads_the_same_however_it_is_split(messages, cuts):
    """DOOR_CLOSED among a shoe's other messages (docs/protocol.md, "The door"): whatever the pieces the stream
    arrives in, byte by byte included, the same messages come out, each with the fields it was made with."""
    data = b"".join(reference_frame(seq, msg_type, payload) for seq, (msg_type, payload, _) in enumerate(messages))
    expected = [(msg_type, fields) for msg_type, _, fields in messages]
    for pieces in (cuts, list(range(len(data) + 1))):
        frames = split_feed(data, pieces)
        assert [(f.msg_type, SHOE_DECODERS[f.msg_type](f.payload)) for f in frames] == expected


def test_door_closed_has_no_fields_and_a_payload_is_refused_naming_the_message():
    assert shoe.decode_door_closed(b"") == ()
    with pytest.raises(ProtocolError, match=r"DOOR_CLOSED \(0x16\): payload is 1 bytes, expected 0") as info:
        shoe.decode_door_closed(b"\x01")
    assert info.value.nak_reason == 2
