"""The transaction layer without a port (drivers/transaction.py; docs/protocol.md "Timing", "Device-initiated
frames"): times are given, so the schedule is checked exactly.

Expected schedules are worked out by hand from the documented defaults (floor 0.5 s, doubling, ceiling 4 s,
4 retries: sends at 0, 0.5, 1.5, 3.5, 7.5 s, given up at 11.5 s).
"""

from __future__ import annotations

from drivers.framing import Frame
from drivers.timing import LinkTiming
from drivers.transaction import Transactions


def test_a_request_is_sent_again_on_the_documented_schedule_then_given_up():
    tx = Transactions(LinkTiming())
    tx.sent("shuffle", 0x10, b"", "SHUFFLE", seq=0, now=0.0)
    sends, now, seq = [0.0], 0.0, 0
    while True:
        now = round(now + 0.01, 2)
        again, given_up = tx.due(now)
        if given_up:
            break
        for pending in again:
            seq += 1
            tx.resent(pending, seq, now)
            sends.append(now)
    assert sends == [0.0, 0.5, 1.5, 3.5, 7.5]
    assert now == 11.5 and [p.what for p in given_up] == ["SHUFFLE"]
    assert tx.payload("shuffle") is None


def test_an_answer_settles_once_and_a_nak_names_the_request_by_any_of_its_seqs():
    tx = Transactions(LinkTiming())
    tx.sent(("dispense", 7), 0x12, b"\x00\x00\x00\x07\x05", "DISPENSE txn 7", seq=3, now=0.0)
    (pending,), _ = tx.due(0.5)
    tx.resent(pending, 9, 0.5)
    assert tx.payload(("dispense", 7)) == b"\x00\x00\x00\x07\x05"
    assert tx.rejected(9).what == "DISPENSE txn 7"
    assert tx.rejected(3) is None
    tx.sent("read", 0x20, b"\x00\x01", "READ_SPOTS", seq=10, now=1.0)
    assert tx.answered("read") and not tx.answered("read")
    tx.sent("a", 1, b"", "A", seq=11, now=1.0)
    assert tx.abandon() == ["A"] and tx.due(100.0) == ([], [])


def test_device_initiated_frames_are_acknowledged_every_time_and_delivered_once():
    tx = Transactions(LinkTiming())
    press, again, next_press = Frame(7, 0x31, b"\x03"), Frame(7, 0x31, b"\x03"), Frame(8, 0x31, b"\x04")
    assert tx.received(press) == (True, None)
    assert tx.received(again) == (False, None)
    assert tx.received(next_press) == (True, None)
    assert tx.take_acks() == [7, 7, 8] and tx.take_acks() == []
    assert tx.repeats == 1
    assert tx.received(Frame(0, 0x21, b"\x01\x00\x00\x00\x00\x05")) == (True, 8)  # the device restarted
