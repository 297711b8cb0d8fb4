"""Transports (drivers/transport.py; design.md "Layers of a link"): the in-process pair with its line-noise
manipulator, and a driver running over it without a pty.

The device side of the driver test is written here from docs/protocol.md ("Handshake", "Shoe").
"""

from __future__ import annotations

import queue
import threading
import time

import pytest

from drivers import DRIVERS, framing
from drivers.events import DeviceFault, DeviceReady, ShuffleComplete, StackDispensed
from drivers.shoe import protocol as shoe
from drivers.timing import LinkTiming
from drivers.transport import transport_pair
from tests.pty_helpers import expect, expect_quiet

pytestmark = pytest.mark.timeout(30)

FAST = LinkTiming(handshake_timeout=0.5, response_timeout=0.1, response_timeout_max=0.4, retries=4,
                  heartbeat_interval=1.0, link_silence=3.0, reconnect_min=0.05, reconnect_max=0.2)


def read_all(end, count: int) -> bytes:
    data = b""
    deadline = time.monotonic() + 2
    while len(data) < count and time.monotonic() < deadline:
        data += end.read()
    return data


def test_the_pair_carries_bytes_through_its_noise_in_order():
    host, device = transport_pair()
    host.noise.split(2)
    host.noise.corrupt(1, at=0)
    host.write(b"\x01abc")
    host.noise.drop(1)
    host.write(b"lost")
    host.noise.delay(0.05)
    host.write(b"late")
    host.noise.delay(0.0)
    host.write(b"!")  # behind the late bytes, as on a line
    assert read_all(device, 9) == bytes([0x01 ^ 0x5A]) + b"abclate!"
    assert (host.noise.dropped, host.noise.corrupted) == (1, 1)
    device.write(b"back")
    assert host.read() == b"back"


def test_wake_ends_a_read_and_closing_is_an_unplugged_adapter():
    host, device = transport_pair(poll=5.0)
    threading.Timer(0.05, host.wake).start()
    start = time.monotonic()
    assert host.read() == b""
    assert time.monotonic() - start < 2
    device.close()
    with pytest.raises(OSError):
        host.read()
    with pytest.raises(OSError):
        host.write(b"x")


class FakeShoe:
    """A shoe on the device end: HELLO -> IDENT, PING -> PONG, SHUFFLE -> SHUFFLE_DONE(52), DISPENSE -> STACK
    (recorded per transaction: a repeat is answered with the same cards)."""

    def __init__(self, end) -> None:
        self.end, self.seq, self.stacks, self.received = end, 0, {}, []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="fake-shoe")

    def send(self, msg_type: int, payload: bytes) -> None:
        self.end.write(framing.encode_frame(self.seq, msg_type, payload))
        self.seq = (self.seq + 1) & 0xFF

    def run(self) -> None:
        decoder = framing.FrameDecoder(track_sequence=False)
        while not self.stop.is_set():
            try:
                frames = decoder.feed(self.end.read())
            except OSError:
                return
            for frame in frames:
                self.received.append(frame)
                if frame.msg_type == framing.HELLO:
                    self.send(framing.IDENT, framing.encode_ident(framing.PROTOCOL_VERSION, "shoe", "PAIR-1", "t"))
                elif frame.msg_type == framing.PING:
                    self.send(framing.PONG, b"")
                elif frame.msg_type == shoe.SHUFFLE:
                    self.send(shoe.SHUFFLE_DONE, shoe.encode_shuffle_done(52))
                elif frame.msg_type == shoe.DISPENSE:
                    request = shoe.decode_dispense(frame.payload)
                    cards = self.stacks.setdefault(request.txn_id, ("Ah", "Kd", "2c", "9s", "Th")[:request.count])
                    self.send(shoe.STACK, shoe.encode_stack(request.txn_id, cards))


@pytest.fixture
def paired_shoe():
    host, device = transport_pair("shoe")
    fake = FakeShoe(device)
    fake.thread.start()
    events: queue.Queue = queue.Queue()
    driver = DRIVERS["shoe"]("pair://shoe", events, timing=FAST, opener=lambda port: host)
    driver.start()
    yield driver, fake, device, events
    driver.stop()
    fake.stop.set()
    device.close()
    fake.thread.join(5)


def test_a_driver_over_the_pair_reads_answers_cut_into_single_bytes_and_repeats_a_corrupted_one(paired_shoe):
    driver, fake, device, events = paired_shoe
    device.noise.split(1)  # every answer arrives one byte at a time
    assert expect(events, DeviceReady).device_id == "PAIR-1"
    driver.shuffle()
    assert expect(events, ShuffleComplete).card_count == 52
    device.noise.corrupt(1, at=5)  # the STACK arrives broken: the driver asks again, the same txn
    driver.dispense(7, 5)
    assert expect(events, StackDispensed) == StackDispensed(7, ("Ah", "Kd", "2c", "9s", "Th"))
    expect_quiet(events, 0.3)
    assert [f.msg_type for f in fake.received].count(shoe.DISPENSE) == 2
    assert driver.decoder.error_total == 1


def test_closing_the_pair_is_a_lost_link(paired_shoe):
    driver, fake, device, events = paired_shoe
    expect(events, DeviceReady)
    device.close()
    assert expect(events, DeviceFault).code == "link_lost"


def test_link_stats_count_frames_both_ways_a_retransmission_and_a_bad_crc(paired_shoe):
    """The link's counters for the metrics (controller/service/metrics.py): every frame the host sent is one the device
    decoded, every frame the device sent but the corrupted one is one the host took, the broken STACK is one bad
    CRC and one retransmission of the DISPENSE."""
    driver, fake, device, events = paired_shoe
    expect(events, DeviceReady)
    answer = framing.encode_frame(fake.seq, shoe.STACK, shoe.encode_stack(7, ("Ah", "Kd", "2c", "9s", "Th")))
    device.noise.corrupt(1, at=len(answer) - 2)  # the last byte before the delimiter: the CRC's
    driver.dispense(7, 5)
    expect(events, StackDispensed)
    expect_quiet(events, 0.3)
    driver.stop()
    stats = driver.link_stats()
    assert stats["retransmissions"] == 1
    assert stats["bad_crc"] == driver.decoder.error_counts["bad_crc"] == 1
    assert stats["frames_sent"] == len(fake.received)
    assert stats["frames_received"] == fake.seq - 1
    assert (stats["reconnections"], stats["handshake_failures"]) == (0, 0)
