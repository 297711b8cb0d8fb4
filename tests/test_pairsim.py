"""Simulators on an in-process pair (drivers/pairsim.py): a driver reaches one by ``opener``, exactly as it
reaches a pty, each open a new connection, the port exclusive, an unplug a lost link and a replug the device
back under the same port with its state. What a device must do on any line is in tests/contract/."""

from __future__ import annotations

import queue

import pytest

from drivers.events import DeviceFault, DeviceReady, ShuffleComplete, StackDispensed
from drivers.pairsim import on_pair
from drivers.shoe.driver import ShoeDriver
from drivers.shoe.simulator import ShoeSimulator
from tests.contract.bench import FAST
from tests.pty_helpers import expect, expect_quiet

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def shoe():
    sim = on_pair(ShoeSimulator, seed=7)
    sim.start()
    drivers: list[ShoeDriver] = []

    def driver() -> tuple[ShoeDriver, queue.Queue]:
        events: queue.Queue = queue.Queue()
        made = ShoeDriver(sim.port, events, timing=FAST, opener=sim.open_port)
        drivers.append(made)
        made.start()
        return made, events

    yield sim, driver
    for made in drivers:
        made.stop()
    sim.stop()


def test_a_driver_reaches_the_simulator_through_its_opener_and_no_pty(shoe):
    sim, driver = shoe
    assert sim.port == "pair://shoe/SIM-SHOE-1"
    assert not hasattr(sim, "_master") or sim._master is None
    made, events = driver()
    assert expect(events, DeviceReady) == DeviceReady("shoe", "SIM-SHOE-1", "sim-1.0", 2)
    made.shuffle()
    assert expect(events, ShuffleComplete).card_count == 52
    made.dispense(1, 5)
    assert expect(events, StackDispensed).cards == sim.dispensed[0][1]
    assert isinstance(sim, ShoeSimulator) and sim.connections == 1


def test_the_port_is_exclusive_and_each_open_is_a_new_connection_to_the_same_device(shoe):
    sim, driver = shoe
    first, events = driver()
    expect(events, DeviceReady)
    with pytest.raises(OSError, match="held"):
        sim.open_port(sim.port)
    with pytest.raises(OSError, match="no such device"):
        sim.open_port("pair://shoe/OTHER")
    first.shuffle()
    expect(events, ShuffleComplete)
    first.stop()
    second, events = driver()
    expect(events, DeviceReady)
    second.dispense(4, 2)  # the shuffle of the first connection still holds: the device kept its state
    assert expect(events, StackDispensed).txn_id == 4
    assert sim.connections == 2


def test_an_unplug_is_a_lost_link_and_a_replug_brings_the_device_back_at_the_same_port(shoe):
    sim, driver = shoe
    made, events = driver()
    expect(events, DeviceReady)
    sim.inject("unplug")
    assert expect(events, DeviceFault).code == "link_lost"
    with pytest.raises(OSError):
        sim.open_port(sim.port)
    expect_quiet(events, 0.3)
    sim.inject("replug")
    assert expect(events, DeviceReady).device_id == "SIM-SHOE-1"


def test_what_the_device_sends_while_nobody_holds_the_port_is_lost_and_the_device_keeps_going(shoe):
    sim, driver = shoe
    sim.inject("garbage", 16)  # nobody connected: written into nothing, no error
    made, events = driver()
    expect(events, DeviceReady)
    made.shuffle()
    assert expect(events, ShuffleComplete).card_count == 52


def test_a_link_dir_is_refused():
    with pytest.raises(ValueError, match="link_dir"):
        on_pair(ShoeSimulator, link_dir="/tmp")
