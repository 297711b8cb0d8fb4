"""Device-initiated frames over real pseudo-terminals (docs/protocol.md, "Device-initiated frames", "Heartbeat",
"Dealer panel"): BUTTON, KEY, SPOT_CHANGED and FAULT are acknowledged by the host and sent again by the device
until acknowledged, and reach the controller exactly once; the supervisor key, which grants rights, is
re-confirmed by every heartbeat answer and counts as off when it is not.
"""

from __future__ import annotations

import queue
import time

import pytest

from controller.journal.reader import read_records
from drivers import DRIVERS, framing
from drivers.events import ButtonPressed, DeviceReady, SpotChanged, SpotsSnapshot, SupervisorKey
from drivers.panel import protocol as panel_protocol
from drivers.panel.simulator import PanelSimulator
from drivers.sensors.simulator import SensorSimulator
from drivers.timing import LinkTiming
from tests.pty_helpers import WAIT, betting_service, expect, expect_quiet

pytestmark = pytest.mark.timeout(60)

#: The handshake is given 2 s (not what these tests are about: at 0.5 s a loaded machine once missed it).
FAST = LinkTiming(handshake_timeout=2.0, response_timeout=0.1, response_timeout_max=0.4, retries=4,
                  heartbeat_interval=1.0, link_silence=3.0, reconnect_min=0.05, reconnect_max=0.2)


@pytest.fixture
def link():
    """``link(sim, **timing)`` starts the simulator and a driver of its kind on its pty (``FAST`` timing with
    ``timing`` overrides); returns ``(driver, events)``."""
    made = []

    def make(sim, **timing):
        events: queue.Queue = queue.Queue()
        sim.start()
        driver = DRIVERS[sim.kind](sim.port, events, timing=FAST, **timing)
        made.append((driver, sim))
        driver.start()
        expect(events, DeviceReady)
        return driver, events

    yield make
    for driver, sim in made:
        driver.stop()
        sim.stop()


def test_a_lost_button_frame_is_sent_again_and_delivered_exactly_once(link):
    sim = PanelSimulator()
    driver, events = link(sim)
    sim.inject("drop_out")  # the BUTTON never reaches the host
    sim.press("confirm")
    assert expect(events, ButtonPressed) == ButtonPressed("confirm")
    assert sim.resent >= 1
    assert sim.wait_for(lambda: sim.awaiting_ack == 0, WAIT)
    sim.inject("drop_in")  # the host's ACK of the next press is lost: the device sends it again
    sim.press("reveal")
    assert expect(events, ButtonPressed) == ButtonPressed("reveal")
    assert sim.wait_for(lambda: sim.awaiting_ack == 0, WAIT)
    expect_quiet(events, 0.5)
    assert driver.repeats >= 1  # received twice, delivered once


def test_chip_changes_arrive_in_order_once_through_lost_frames_and_acks(link):
    sim = SensorSimulator()
    # a fifth of the frames lost or spoilt, pings and pongs too: on a loaded machine the link may hear nothing
    # valid for longer than FAST's 3 s of silence, which is not what this test is about
    driver, events = link(sim, link_silence=10.0)
    sim.chaos(0.2, seed=5, kinds=("drop_in", "drop_out", "corrupt", "duplicate"))
    for amount in range(100, 2100, 100):
        sim.place(3, "middle", amount)
    got = [expect(events, SpotChanged, timeout=10) for _ in range(20)]
    assert [c.amount for c in got] == list(range(100, 2100, 100))
    assert sim.wait_for(lambda: sim.awaiting_ack == 0, 10)
    sim.chaos(0.0)
    expect_quiet(events, 0.5)
    assert sum(sim.fault_counts.values()) > 0


def test_an_answer_never_overtakes_an_earlier_chip_change(link):
    """A chip change lost once on the line is sent again 0.1 s later; the SPOTS answer to a read made meanwhile
    waits for it, so the round never sees an older change after the snapshot (past-posting that never was)."""
    sim = SensorSimulator()
    driver, events = link(sim)
    sim.inject("drop_out")
    sim.place(2, "down", 300)
    driver.read_spots(4)
    assert expect(events, SpotChanged) == SpotChanged(2, "down", 300)
    assert expect(events, SpotsSnapshot) == SpotsSnapshot(4, ((2, "down", 300),))


def test_a_lost_key_off_frame_is_sent_again(link):
    sim = PanelSimulator()
    driver, events = link(sim)
    sim.turn_key(True, "SUP-7")
    assert expect(events, SupervisorKey) == SupervisorKey(True, "SUP-7")
    sim.inject("drop_out")
    sim.turn_key(False, "SUP-7")
    assert expect(events, SupervisorKey) == SupervisorKey(False, "SUP-7")
    assert sim.resent >= 1


def test_a_key_the_panel_reports_off_in_its_heartbeat_answer_is_off(link):
    """A KEY on whose KEY off never comes (as from a panel that lost it): the next heartbeat answer says no key
    is turned, and the key is off."""
    sim = PanelSimulator()
    driver, events = link(sim)
    sim.send_raw(framing.encode_frame(200, panel_protocol.KEY, panel_protocol.encode_key(True, "SUP-9")))
    assert expect(events, SupervisorKey) == SupervisorKey(True, "SUP-9")
    start = time.monotonic()
    assert expect(events, SupervisorKey, timeout=FAST.heartbeat_interval + WAIT) == SupervisorKey(False, "SUP-9")
    assert time.monotonic() - start < FAST.confirm_window + 1.0


def test_a_key_not_confirmed_within_the_window_counts_as_off_until_confirmed_again(link):
    sim = PanelSimulator()
    driver, events = link(sim, link_silence=6.0)  # well above the silence: the link stays up
    sim.turn_key(True, "SUP-7")
    assert expect(events, SupervisorKey) == SupervisorKey(True, "SUP-7")
    sim.inject("silent", seconds=FAST.confirm_window + 0.4)
    start = time.monotonic()
    assert expect(events, SupervisorKey, timeout=FAST.confirm_window + WAIT) == SupervisorKey(False, "SUP-7")
    assert time.monotonic() - start >= FAST.confirm_window - FAST.heartbeat_interval
    assert expect(events, SupervisorKey, timeout=WAIT) == SupervisorKey(True, "SUP-7")  # the panel answers again
    assert driver.losses == 0


def test_a_lost_key_off_frame_puts_the_void_round_lamp_out(tmp_path):
    """Through the whole service: key on during betting lights void_round; the KEY off frame is lost once;
    the key ends off, the lamp goes out, and the journal holds the key turned off once."""
    with betting_service(tmp_path) as service:
        panel = service.sims["panel"]
        panel.turn_key(True, "SUP-7")
        assert panel.wait_for_lamp("void_round", 10)
        panel.inject("drop_out")
        panel.turn_key(False, "SUP-7")
        assert panel.wait_for(lambda: "void_round" not in panel.lamps, 10)
        time.sleep(0.3)
        assert "void_round" not in panel.lamps
    keys = [r["data"] for r in read_records(tmp_path / "journal.jsonl") if r["type"] == "SupervisorKey"]
    assert keys == [{"on": True, "key_id": "SUP-7"}, {"on": False, "key_id": "SUP-7"}]
