"""Link recovery over real pseudo-terminals (docs/protocol.md, "Receiving", "Heartbeat", "Link loss and
reconnection", "Timing", "Fault injection", "What did you last do").

Timings are small so that the file runs in a few seconds; assertions on time are lower bounds that follow from
the deadlines themselves (a retransmission is never early), with generous upper bounds only against hangs.
The autouse ``no_leaked_threads`` fixture (conftest.py) checks every simulator and driver thread ended.
"""

from __future__ import annotations

import itertools
import os
import queue
import time
from collections.abc import Callable, Iterator

import pytest
import serial

from drivers import DRIVERS, framing
from drivers.events import (
    ButtonPressed,
    DeviceFault,
    DeviceReady,
    ShoeLastDispense,
    ShuffleComplete,
    StackDispensed,
)
from drivers.framing import FrameDecoder, encode_frame
from drivers.link import Device, LinkDown
from drivers.panel.simulator import PanelSimulator
from drivers.sensors.simulator import SensorSimulator
from drivers.shoe import protocol as shoe_protocol
from drivers.shoe.simulator import ShoeSimulator
from drivers.sim import PtySimulator
from drivers.timing import LinkTiming
from tests.pty_helpers import WAIT, expect, expect_quiet

pytestmark = pytest.mark.timeout(30)

#: The handshake is given 2 s (not what these tests are about: at 0.5 s a loaded machine once missed it).
FAST = LinkTiming(handshake_timeout=2.0, response_timeout=0.1, response_timeout_max=0.4, retries=4,
                  heartbeat_interval=1.0, link_silence=3.0, reconnect_min=0.05, reconnect_max=0.2)
#: For the heartbeat tests only (elsewhere a PING must not take a fault meant for another frame). The silence
#: allowed is twenty heartbeats: a loaded machine that leaves the simulator's thread unscheduled for half a
#: second must not look like a silent device.
QUICK_HEARTBEAT = {"heartbeat_interval": 0.1, "link_silence": 2.0}


@pytest.fixture
def events() -> queue.Queue:
    return queue.Queue()


@pytest.fixture
def rig(events, tmp_path) -> Iterator[Callable[..., object]]:
    """``rig(sim)`` starts a simulator; ``rig(kind, port, **options)`` a driver; all stopped at teardown,
    drivers first. ``tmp_path / "by-id"`` is the simulators' symlink folder."""
    sims: list[PtySimulator] = []
    drivers: list[Device] = []

    def make(what, port: str | None = None, **options):
        if isinstance(what, PtySimulator):
            sims.append(what)
            what.start()
            return what
        driver = DRIVERS[what](port, events, **{"timing": FAST, **options})
        drivers.append(driver)
        driver.start()
        return driver

    yield make
    for driver in drivers:
        driver.stop()
    for sim in sims:
        sim.stop()


def shuffled_shoe(rig, events, **options):
    sim = rig(ShoeSimulator(seed=7, link_dir=options.pop("link_dir", None)))
    driver = rig("shoe", sim.port, **options)
    assert expect(events, DeviceReady).device_id == sim.device_id
    driver.shuffle()
    expect(events, ShuffleComplete)
    return sim, driver


# --------------------------------------------------------------------------------------------------------------
# Retransmission


def test_retransmission_waits_double_from_the_floor_to_the_ceiling(rig, events, monkeypatch):
    # the sends timed where the host writes them: a loaded machine can hold one frame's arrival at the simulator
    # back by tens of ms and make the next gap look short, though the host waited the whole time
    sent: list[tuple[float, int]] = []
    write = Device._write

    def timed_write(device, ser, msg_type, payload):
        sent.append((time.monotonic(), msg_type))
        return write(device, ser, msg_type, payload)

    monkeypatch.setattr(Device, "_write", timed_write)
    sim, driver = shuffled_shoe(rig, events)
    sim.inject("drop_in", 10)
    driver.dispense(9, 5)
    fault = expect(events, DeviceFault)
    assert fault.code == "timeout" and "after 5 sends (waits 0.1, 0.2, 0.4, 0.4, 0.4 s)" in fault.detail
    times = [t for t, msg_type in sent if msg_type == shoe_protocol.DISPENSE]
    assert len(times) == 1 + FAST.retries
    assert sim.wait_for(lambda: len([f for _, f in sim.arrivals if f.msg_type == shoe_protocol.DISPENSE])
                        == 1 + FAST.retries, WAIT)  # every send reached the shoe
    gaps = [b - a for a, b in itertools.pairwise(times)]
    waits = FAST.retransmit_waits()
    assert waits == [0.1, 0.2, 0.4, 0.4, 0.4]
    for gap, wait in zip(gaps, waits):
        assert wait * 0.9 <= gap < wait + 1.0  # never early; the upper bound only guards against a hang
    assert sim.dealt == 0


@pytest.mark.parametrize("at", [None, 1, 4, 999], ids=["random-byte", "first-code-byte", "payload", "delimiter"])
def test_lost_and_corrupted_replies_cost_repeats_never_a_second_stack(rig, events, at):
    """Whatever byte of the resent STACK is flipped (a COBS code byte, a payload byte, the closing delimiter),
    that frame alone is dropped, once: the frames before and after it are delimited on their own."""
    sim, driver = shuffled_shoe(rig, events)
    sim.inject("drop_out")  # dealt, STACK lost
    sim.inject("corrupt", at=at)  # the recorded STACK, resent, arrives broken
    driver.dispense(3, 5)
    stack = expect(events, StackDispensed)
    assert sim.dispensed == [(3, stack.cards)]
    assert len([f for f in sim.received if f.msg_type == shoe_protocol.DISPENSE]) == 3
    assert sum(driver.decoder.error_counts.values()) == 1
    assert sim.fault_counts == {"drop_out": 1, "corrupt": 1}
    expect_quiet(events, 0.3)


# --------------------------------------------------------------------------------------------------------------
# Duplicates, split and delayed frames, garbage


def test_a_duplicated_request_is_answered_again_but_dealt_once(rig):
    """The test is the host here: it writes the same DISPENSE frame twice (same seq, an exact duplicate)."""
    sim = rig(ShoeSimulator(seed=3))
    decoder = FrameDecoder(track_sequence=False)
    with serial.Serial(sim.port, timeout=0.05, exclusive=True) as port:
        def frames_of(msg_type, count):
            got, deadline = [], time.monotonic() + WAIT
            while len(got) < count and time.monotonic() < deadline:
                got += [f for f in decoder.feed(port.read(port.in_waiting or 1)) if f.msg_type == msg_type]
            return got

        port.write(encode_frame(0, framing.HELLO, framing.encode_hello()))
        assert len(frames_of(framing.IDENT, 1)) == 1
        port.write(encode_frame(1, shoe_protocol.SHUFFLE))
        assert len(frames_of(shoe_protocol.SHUFFLE_DONE, 1)) == 1
        dispense = encode_frame(2, shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(5, 2))
        port.write(dispense + dispense)
        first, again = frames_of(shoe_protocol.STACK, 2)
    assert first.payload == again.payload and first.seq != again.seq
    assert sim.dealt == 1 and sim.remaining == 50


def test_a_duplicated_device_frame_is_not_acted_on_twice(rig, events):
    sim = rig(PanelSimulator())
    driver = rig("panel", sim.port)
    expect(events, DeviceReady)
    sim.inject("duplicate")
    sim.press("confirm")
    assert expect(events, ButtonPressed) == ButtonPressed("confirm")
    sim.press("reveal")  # the next frame is a new one
    assert expect(events, ButtonPressed) == ButtonPressed("reveal")
    expect_quiet(events, 0.2)  # each press acted on once
    # the duplicate recognised by the link and acknowledged again; on a loaded machine the panel may also have sent a
    # frame again because our ACK was late, and that one is recognised the same way
    assert driver.repeats >= 1


def test_split_delayed_and_garbage_framed_answers_all_arrive_in_order(rig, events):
    sim = rig(SensorSimulator())
    driver = rig("sensors", sim.port)
    expect(events, DeviceReady)
    sim.inject("split", pause=0.05)
    sim.inject("delay", seconds=0.15)
    sim.inject("garbage", count=40)
    for seat in (1, 2, 3):
        sim.place(seat, "ante_across", 100 * seat)
    got = [expect(events, object) for _ in range(3)]
    assert [(e.seat, e.amount) for e in got] == [(1, 100), (2, 200), (3, 300)]
    assert driver.link_up and sim.fault_counts == {"split": 1, "delay": 1, "garbage": 1}


def test_a_lost_lamp_state_is_repaired_by_the_heartbeat(rig, events):
    sim = rig(PanelSimulator())
    driver = rig("panel", sim.port, **QUICK_HEARTBEAT)
    expect(events, DeviceReady)
    sim.inject("drop_in")
    driver.set_lamps(["reveal"])
    assert sim.wait_for_lamp("reveal", WAIT)
    assert sim.fault_counts["drop_in"] == 1


# --------------------------------------------------------------------------------------------------------------
# Heartbeat and silence


def test_heartbeat_keeps_an_idle_link_and_silence_is_link_lost(rig, events):
    sim = rig(SensorSimulator())
    driver = rig("sensors", sim.port, **QUICK_HEARTBEAT)
    expect(events, DeviceReady)
    # idle but answering PINGs: no fault, past one whole silence allowed (without the heartbeat's answers the
    # link would be lost by then)
    expect_quiet(events, QUICK_HEARTBEAT["link_silence"] + 5 * QUICK_HEARTBEAT["heartbeat_interval"])
    assert sum(f.msg_type == framing.PING for f in sim.received) >= 3
    sim.inject("silent")
    fault = expect(events, DeviceFault)
    assert fault.code == "link_lost" and "nothing received" in fault.detail
    with pytest.raises(LinkDown):
        driver.read_spots(1)
    sim.clear_faults()  # the device talks again: found on the same port
    assert expect(events, DeviceReady) == DeviceReady("sensors", sim.device_id, "sim-1.0", framing.PROTOCOL_VERSION)
    driver.read_spots(2)
    assert expect(events, object).request_id == 2
    assert driver.losses == 1


# --------------------------------------------------------------------------------------------------------------
# Reconnection by identity


def test_reconnects_under_a_new_port_name_found_by_identity_and_deals_once(rig, events, tmp_path):
    by_id = tmp_path / "by-id"
    sim, driver = shuffled_shoe(rig, events, link_dir=by_id, identity="SIM-SHOE-1",
                                search=[str(by_id / "*")])
    driver.dispense(1, 5)
    stack = expect(events, StackDispensed)
    old_port = sim.port
    sim.inject("replug", after=0.2)
    fault = expect(events, DeviceFault)
    assert (fault.code, old_port in fault.detail) == ("link_lost", True)
    with pytest.raises(LinkDown):
        driver.dispense(1, 5)
    assert expect(events, DeviceReady).device_id == "SIM-SHOE-1"
    assert sim.port != old_port and os.path.realpath(driver.port) == sim.port
    assert driver.port == str(sim.link_path)
    driver.query_last()
    assert expect(events, ShoeLastDispense) == ShoeLastDispense(1, stack.cards)
    driver.dispense(1, 5)  # the controller repeats its last dispense: the shoe answers the record
    assert expect(events, StackDispensed) == stack
    assert sim.dispensed == [(1, stack.cards)]
    expect_quiet(events, 0.2)


def test_a_replugged_simulators_former_port_stays_taken_and_opens_as_a_device_gone(tmp_path):
    """After a replug the old pty name is never another pty's while the simulator lives (another process's
    simulator could get it, and a driver retrying its last port would talk to that one): opening it fails as a
    vanished device does (``OSError``), and new ptys get other names."""
    sim = ShoeSimulator(seed=1, link_dir=tmp_path / "by-id")
    sim.start()
    try:
        old = sim.port
        sim.inject("replug")
        assert sim.port != old and os.path.realpath(sim.link_path) == sim.port
        with pytest.raises(OSError):
            serial.Serial(old, timeout=0).close()
        made = [os.openpty() for _ in range(4)]
        try:
            assert old not in {os.ttyname(slave) for _, slave in made}
        finally:
            for fds in made:
                for fd in fds:
                    os.close(fd)
    finally:
        sim.stop()


def test_a_device_of_another_identity_on_a_candidate_port_is_refused(rig, events, tmp_path):
    by_id = tmp_path / "by-id"
    other = rig(ShoeSimulator(seed=1, device_id="SIM-SHOE-2", link_dir=by_id))
    panel = rig(PanelSimulator(link_dir=by_id))
    sim, driver = shuffled_shoe(rig, events, link_dir=by_id, identity="SIM-SHOE-1", search=[str(by_id / "*")])
    sim.inject("replug", after=0.6)
    assert expect(events, DeviceFault).code == "link_lost"
    ready = expect(events, DeviceReady)
    assert ready.device_id == "SIM-SHOE-1" and driver.ident.device_id == "SIM-SHOE-1"
    for refused in (other, panel):  # each was asked who it is, and nothing else
        assert refused.received and {f.msg_type for f in refused.received} == {framing.HELLO}
    assert os.path.realpath(driver.port) == sim.port


def test_without_configured_identity_the_first_device_id_is_kept(rig, events, tmp_path):
    by_id = tmp_path / "by-id"
    impostor = rig(ShoeSimulator(device_id="SIM-SHOE-9", link_dir=by_id))
    sim, driver = shuffled_shoe(rig, events, link_dir=by_id, search=[str(by_id / "*")])
    sim.inject("unplug")
    assert expect(events, DeviceFault).code == "link_lost"
    expect_quiet(events, 0.5)  # the other shoe is there, but it is not this table's shoe
    assert {f.msg_type for f in impostor.received} == {framing.HELLO}
    assert not driver.link_up


def test_stop_ends_the_thread_promptly_during_backoff(rig, events, tmp_path):
    slow = LinkTiming(reconnect_min=5.0, reconnect_max=10.0)
    driver = rig("shoe", str(tmp_path / "ttyUSB-gone"), timing=slow)
    assert expect(events, DeviceFault).code == "link_lost"
    time.sleep(0.1)  # now in its 5 s wait
    started = time.monotonic()
    driver.stop()
    assert not driver.running
    assert time.monotonic() - started < 2.0  # far less than the 5 s wait


# --------------------------------------------------------------------------------------------------------------
# What did you last do; the injection API


def test_query_last_before_and_after_dispensing(rig, events):
    sim, driver = shuffled_shoe(rig, events)
    driver.query_last()
    assert expect(events, ShoeLastDispense) == ShoeLastDispense(0, ())
    driver.dispense(4, 2)
    stack = expect(events, StackDispensed)
    driver.dispense(4, 2)  # a repeat is not a new dispense
    expect(events, StackDispensed)
    sim.inject("drop_out")  # the answer is lost once: QUERY_LAST is retransmitted
    driver.query_last()
    assert expect(events, ShoeLastDispense) == ShoeLastDispense(4, stack.cards)
    assert sim.last() == (4, stack.cards)


def test_shoe_faults_by_name_and_count(rig, events):
    sim, driver = shuffled_shoe(rig, events)
    sim.inject("unreadable_card", count=2)
    for txn in (1, 1):
        driver.dispense(txn, 2)
        assert expect(events, DeviceFault).code == "unreadable_card"
    driver.dispense(1, 2)
    assert len(expect(events, StackDispensed).cards) == 2
    assert sim.fault_counts == {"unreadable_card": 2}


@pytest.mark.parametrize("args, kwargs, message", [
    (("nope",), {}, "unknown fault 'nope'"),
    (("drop_in", 0), {}, "count must be"),
    (("delay",), {"after": 1}, "takes no parameter"),
    (("silent",), {"seconds": -1}, "seconds must be"),
    (("corrupt",), {"at": 0}, "at \\(a byte index\\) must be an integer from 1 to 10000"),
    (("corrupt",), {"at": 1.5}, "at \\(a byte index\\) must be an integer from 1 to 10000"),
    (("delay",), {"at": 1}, "takes no parameter"),
    (("jam",), {}, "unknown fault 'jam'"),  # the panel has no jams
])
def test_inject_refuses_what_it_cannot_do(args, kwargs, message):
    sim = PanelSimulator()
    try:
        with pytest.raises(ValueError, match=message):
            sim.inject(*args, **kwargs)
    finally:
        sim.stop()
