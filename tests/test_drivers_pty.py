"""Each driver against its simulator over a real pseudo-terminal (docs/protocol.md; design.md "Drivers at the edge").

The driver opens the pty slave path with pyserial exactly as it would open ``/dev/ttyUSB0``. Every test gets its
simulator and driver from fixtures that stop them, and the autouse ``no_leaked_threads`` fixture (conftest.py)
fails a test that leaves a thread behind.
"""

from __future__ import annotations

import logging
import queue
import re
import time
from collections.abc import Callable, Iterator

import pytest

from drivers import DRIVERS, framing
from drivers.events import (
    ButtonPressed,
    DeviceFault,
    DeviceReady,
    ShoeBootCount,
    ShoeDoorClosed,
    ShuffleComplete,
    SpotChanged,
    SpotsSnapshot,
    StackDispensed,
)
from drivers.link import Device, DeviceNotRunning, LinkDown
from drivers.panel import protocol as panel_protocol
from drivers.panel.driver import PanelDriver
from drivers.panel.simulator import PanelSimulator
from drivers.sensors.driver import SensorDriver
from drivers.sensors.simulator import SensorSimulator
from drivers.shoe import protocol as shoe_protocol
from drivers.shoe.driver import ShoeDriver
from drivers.shoe.simulator import ShoeSimulator
from drivers.sim import PtySimulator
from tests.pty_helpers import WAIT, expect, expect_quiet

pytestmark = pytest.mark.timeout(30)

FAST = {"handshake_timeout": 1.0, "response_timeout": 0.25, "response_timeout_max": 0.25, "retries": 2,
        "heartbeat_interval": 0.5, "link_silence": 2.0, "reconnect_min": 0.05, "reconnect_max": 0.2}
SIMULATORS: dict[str, Callable[[], PtySimulator]] = {
    "shoe": lambda: ShoeSimulator(seed=20240601),
    "sensors": SensorSimulator,
    "panel": PanelSimulator,
}


@pytest.fixture
def events() -> queue.Queue:
    return queue.Queue()


@pytest.fixture
def simulators() -> Iterator[Callable[[str], PtySimulator]]:
    """Factory for started simulators; all are stopped at teardown (after the drivers)."""
    made: list[PtySimulator] = []

    def make(kind: str, start: bool = True) -> PtySimulator:
        sim = SIMULATORS[kind]()
        made.append(sim)
        if start:
            sim.start()
        return sim

    yield make
    for sim in made:
        sim.stop()


@pytest.fixture
def drivers(simulators, events) -> Iterator[Callable[..., Device]]:
    """Factory for started drivers on a port; all are stopped at teardown."""
    made: list[Device] = []

    def make(kind: str, port: str, **options) -> Device:
        driver = DRIVERS[kind](port, events, **{**FAST, **options})
        made.append(driver)
        driver.start()
        return driver

    yield make
    for driver in made:
        driver.stop()


def connect(kind, simulators, drivers, events):
    sim = simulators(kind)
    driver = drivers(kind, sim.port)
    ready = expect(events, DeviceReady)
    assert ready == DeviceReady(kind, sim.device_id, "sim-1.0", framing.PROTOCOL_VERSION)
    return sim, driver


@pytest.fixture
def shoe(simulators, drivers, events) -> tuple[ShoeSimulator, ShoeDriver]:
    return connect("shoe", simulators, drivers, events)


@pytest.fixture
def sensors(simulators, drivers, events) -> tuple[SensorSimulator, SensorDriver]:
    return connect("sensors", simulators, drivers, events)


@pytest.fixture
def panel(simulators, drivers, events) -> tuple[PanelSimulator, PanelDriver]:
    return connect("panel", simulators, drivers, events)


# --------------------------------------------------------------------------------------------------------------
# Handshake and link


@pytest.mark.parametrize("kind", ["shoe", "sensors", "panel"])
def test_handshake_posts_device_ready(kind, simulators, drivers, events):
    sim, driver = connect(kind, simulators, drivers, events)
    assert driver.ident == framing.Ident(framing.PROTOCOL_VERSION, kind, sim.device_id, "sim-1.0", sim.boot_count())
    assert sim.received[0] == framing.Frame(0, framing.HELLO, bytes([framing.PROTOCOL_VERSION]))


@pytest.mark.parametrize("kind", ["shoe", "sensors", "panel"])
def test_unplug_posts_link_lost_once_and_keeps_searching(kind, simulators, drivers, events):
    sim, driver = connect(kind, simulators, drivers, events)
    sim.unplug()
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == (kind, "link_lost")
    expect_quiet(events, 0.5)  # several failed searches later: still one fault for one loss
    assert driver.running and not driver.link_up and driver.losses == 1
    with pytest.raises(LinkDown):
        {"shoe": lambda: driver.shuffle(), "sensors": lambda: driver.read_spots(1),
         "panel": lambda: driver.show("x")}[kind]()


def test_wrong_kind_of_device_fails_handshake(simulators, drivers, events):
    sim = simulators("panel")
    driver = drivers("shoe", sim.port)
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == ("shoe", "handshake")
    assert "'panel'" in fault.detail
    expect_quiet(events, 0.4)
    assert driver.running and not driver.link_up
    assert {f.msg_type for f in sim.received} == {framing.HELLO}  # only ever asked who it is


@pytest.mark.parametrize("kind", ["shoe", "sensors", "panel"])
@pytest.mark.parametrize("device_id", ["S\x1b[2J\x1b[31mFORGED\r", "P-1\nDeviceReady", "R\x7f", "N\x00"])
def test_a_device_id_with_control_characters_fails_handshake_and_is_never_logged_raw(kind, device_id, drivers,
                                                                                     events, caplog):
    """A device whose IDENT names it with control characters (ESC sequences that clear a terminal, CR, LF, DEL,
    NUL) is refused as the panel's key id with them is: a handshake fault, no ``DeviceReady`` (which is journaled
    and published), and no log line holds the raw characters."""
    make = {"shoe": lambda: ShoeSimulator(seed=1, device_id=device_id), "sensors": lambda: SensorSimulator(device_id),
            "panel": lambda: PanelSimulator(device_id)}[kind]
    sim = make()
    sim.start()
    try:
        with caplog.at_level(logging.DEBUG):
            driver = drivers(kind, sim.port)
            fault = expect(events, DeviceFault)
            assert (fault.device, fault.code) == (kind, "handshake")
            assert "device id has control characters" in fault.detail
            expect_quiet(events, 0.4)  # searched again: refused again, no DeviceReady
            assert driver.running and not driver.link_up
        assert not [r for r in caplog.records if device_id in r.getMessage()]
        assert not [r for r in caplog.records if re.search(r"[\x00-\x1f\x7f]", r.getMessage())]
    finally:
        sim.stop()


def test_silent_device_fails_handshake_after_timeout(simulators, drivers, events):
    sim = simulators("shoe", start=False)  # nobody answers on the master end
    started = time.monotonic()
    driver = drivers("shoe", sim.port, handshake_timeout=0.3)
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == ("shoe", "handshake")
    assert 0.3 <= time.monotonic() - started < WAIT
    assert driver.running and not driver.link_up


def test_missing_port_is_link_lost(drivers, events, tmp_path):
    driver = drivers("sensors", str(tmp_path / "ttyUSB-missing"))
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == ("sensors", "link_lost")
    with pytest.raises(DeviceNotRunning):  # LinkDown is a DeviceNotRunning
        driver.read_spots(1)
    driver.stop()
    assert not driver.running
    with pytest.raises(DeviceNotRunning):
        driver.read_spots(1)


def test_port_is_opened_exclusively(shoe, drivers, events):
    sim, first = shoe
    second = drivers("shoe", sim.port)
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == ("shoe", "link_lost")
    assert not second.link_up
    assert first.running and first.link_up


def test_commands_after_stop_raise(shoe):
    _, driver = shoe
    driver.stop()
    assert not driver.running
    with pytest.raises(DeviceNotRunning):
        driver.shuffle()


def test_corrupted_bytes_on_the_wire_are_skipped(sensors, events):
    sim, driver = sensors
    good = framing.encode_frame(200, 0x21, bytes([1, 0, 0, 0, 0, 100]))
    broken = bytearray(framing.encode_frame(201, 0x21, bytes([1, 0, 0, 0, 0, 200])))
    broken[-2] ^= 0x01  # the CRC's stuffed low byte: still no 0x00 inside the frame
    sim.send_raw(b"\x17\x00" + bytes(broken) + good)
    assert expect(events, SpotChanged) == SpotChanged(1, "five_card_bonus", 100)
    assert driver.decoder.error_counts == {"bad_stuffing": 1, "bad_crc": 1}
    # Noise longer than any frame without a delimiter, then a frame split across two writes: found without
    # stalling, and the noise never buffered whole.
    later = framing.encode_frame(201, 0x21, bytes([1, 0, 0, 0, 0, 200]))
    sim.send_raw(b"\xa5" * 400 + later[:3])
    sim.send_raw(later[3:])
    assert expect(events, SpotChanged) == SpotChanged(1, "five_card_bonus", 200)
    assert driver.decoder.error_counts == {"bad_stuffing": 1, "bad_crc": 1, "overlong": 1}


# --------------------------------------------------------------------------------------------------------------
# Shoe


def test_shuffle_then_dispense_five_then_two(shoe, events):
    sim, driver = shoe
    driver.shuffle()
    assert expect(events, ShuffleComplete) == ShuffleComplete(52)
    driver.dispense(1, 5)
    first = expect(events, StackDispensed)
    driver.dispense(2, 2)
    second = expect(events, StackDispensed)
    assert (first.txn_id, len(first.cards), second.txn_id, len(second.cards)) == (1, 5, 2, 2)
    cards = first.cards + second.cards
    assert all(re.fullmatch(r"[23456789TJQKA][cdhs]", card) for card in cards)
    assert len(set(cards)) == 7
    assert sim.dispensed == [(1, first.cards), (2, second.cards)]
    assert sim.remaining == 45


def test_repeated_txn_returns_recorded_stack_without_dealing(shoe, events):
    sim, driver = shoe
    driver.shuffle()
    expect(events, ShuffleComplete)
    driver.dispense(41, 5)
    first = expect(events, StackDispensed)
    driver.dispense(41, 5)
    again = expect(events, StackDispensed)
    assert again == first
    assert sim.dispensed == [(41, first.cards)]
    assert sim.remaining == 47


def test_lost_stack_is_retransmitted_and_dealt_once(shoe, events):
    sim, driver = shoe
    driver.shuffle()
    expect(events, ShuffleComplete)
    sim.drop_replies(1)  # the shoe deals, but its STACK never reaches the host
    driver.dispense(7, 2)
    stack = expect(events, StackDispensed)
    assert sim.dispensed == [(7, stack.cards)]
    requests = [f for f in sim.received if f.msg_type == shoe_protocol.DISPENSE]
    assert len(requests) == 2
    assert requests[0].payload == requests[1].payload == shoe_protocol.encode_dispense(7, 2)
    assert requests[1].seq == (requests[0].seq + 1) % 256  # a new frame, not a link-level duplicate
    expect_quiet(events, FAST["response_timeout"] * 2)


def test_unanswered_dispense_times_out_after_retries(shoe, events):
    sim, driver = shoe
    sim.ignore_next(10)
    driver.dispense(9, 5)
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == ("shoe", "timeout")

    def sends() -> int:
        return len([f for f in sim.received if f.msg_type == shoe_protocol.DISPENSE])

    # the last try may still be on its way to the simulator's thread when the driver gives up on a loaded machine
    sim.wait_for(lambda: sends() >= 1 + FAST["retries"], WAIT)
    assert sends() == 1 + FAST["retries"]
    assert driver.running  # a timeout is reported, the link stays up


def test_injected_jam_posts_fault_and_nothing_is_retransmitted(shoe, events):
    sim, driver = shoe
    driver.shuffle()
    expect(events, ShuffleComplete)
    sim.inject_fault("jam")
    driver.dispense(3, 5)
    assert expect(events, DeviceFault) == DeviceFault("shoe", "jam", "injected jam (abandoned: DISPENSE txn 3 (5 cards))")
    expect_quiet(events, FAST["response_timeout"] * 2)
    assert sim.dispensed == []
    driver.dispense(3, 5)  # the controller retries the same transaction once the jam is cleared
    assert len(expect(events, StackDispensed).cards) == 5


def test_an_open_door_deals_nothing_until_it_is_shut_and_its_closing_is_posted_once(shoe, events):
    """docs/protocol.md, "The door": the opening is FAULT 5 door_open, and a DISPENSE while the door is open
    deals nothing; DOOR_CLOSED, acknowledged, is posted once as ``ShoeDoorClosed``; then the same transaction
    is dealt. A door shut twice says so once."""
    sim, driver = shoe
    driver.shuffle()
    expect(events, ShuffleComplete)
    sim.inject_fault("door_open")
    driver.dispense(4, 5)
    assert expect(events, DeviceFault).code == "door_open"
    assert sim.door_open
    driver.dispense(4, 5)  # the supervisor cleared the fault, the door still open
    assert expect(events, DeviceFault).code == "door_open"
    assert sim.dispensed == []
    assert sim.close_door() is True
    assert expect(events, ShoeDoorClosed) == ShoeDoorClosed()
    assert sim.wait_for(lambda: sim.awaiting_ack == 0, WAIT)  # the host acknowledged it
    assert sim.close_door() is False  # shut already: nothing sent
    expect_quiet(events, FAST["response_timeout"] * 2)
    driver.dispense(4, 5)
    assert len(expect(events, StackDispensed).cards) == 5
    assert driver.protocol_errors == 0


def test_a_door_closed_with_a_payload_is_refused_and_not_posted(shoe, events):
    sim, driver = shoe
    sim.send(shoe_protocol.DOOR_CLOSED, b"\x01")
    assert sim.wait_for(lambda: any(f.msg_type == framing.NAK for f in sim.received), WAIT)
    (nak,) = [framing.decode_nak(f.payload) for f in sim.received if f.msg_type == framing.NAK]
    assert nak.reason == framing.NAK_BAD_PAYLOAD and driver.protocol_errors == 1
    expect_quiet(events, FAST["response_timeout"] * 2)


def test_dispense_before_shuffle_is_nakked(shoe, events):
    sim, driver = shoe
    driver.dispense(1, 2)
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == ("shoe", "protocol")
    assert "not_allowed_now" in fault.detail
    expect_quiet(events, FAST["response_timeout"] * 2)  # a NAKed request is not retransmitted
    assert sim.dispensed == []


def test_empty_shoe_answers_fault_empty(shoe, events):
    sim, driver = shoe
    driver.shuffle()
    expect(events, ShuffleComplete)
    for txn in range(10):
        driver.dispense(txn, 5)
        expect(events, StackDispensed)
    driver.dispense(10, 5)  # 2 cards left
    assert expect(events, DeviceFault).code == "empty"
    dealt = [card for _, cards in sim.dispensed for card in cards]
    assert len(dealt) == len(set(dealt)) == 50 and set(dealt) <= set(shoe_protocol.DECK)
    assert sim.remaining == 2


def test_stack_with_wrong_card_count_is_a_protocol_fault(shoe, events):
    sim, driver = shoe
    sim.ignore_next(1)
    driver.dispense(12, 5)
    assert sim.wait_for(lambda: len(sim.received) == 2, WAIT)
    sim.send(shoe_protocol.STACK, shoe_protocol.encode_stack(12, ("Ah", "Kd")))
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == ("shoe", "stack_size")
    assert "2 cards, 5 were asked" in fault.detail
    expect_quiet(events, FAST["response_timeout"] * 2)  # settled: no retransmission, no timeout


def test_dispense_arguments_checked_before_sending(shoe):
    sim, driver = shoe
    with pytest.raises(ValueError, match="count must be one of"):
        driver.dispense(1, 3)
    with pytest.raises(ValueError, match="txn_id"):
        driver.dispense(2**32, 2)
    assert [f.msg_type for f in sim.received] == [framing.HELLO]


def test_hole_cards_never_logged_at_info(shoe, events, caplog):
    sim, driver = shoe
    with caplog.at_level(logging.DEBUG):
        driver.shuffle()
        expect(events, ShuffleComplete)
        driver.dispense(5, 5)
        cards = expect(events, StackDispensed).cards
    visible = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert any("txn 5" in message for message in visible)  # the dispense itself is logged
    for message in visible:
        for card in cards:
            assert not re.search(rf"\b{card}\b", message), f"card value logged at INFO+: {message!r}"


# --------------------------------------------------------------------------------------------------------------
# Bet sensors


def test_place_posts_spot_changed(sensors, events):
    sim, _ = sensors
    sim.place(2, "ante_across", 500)
    assert expect(events, SpotChanged) == SpotChanged(2, "ante_across", 500)
    sim.place(2, "ante_across", 500)  # unchanged: nothing sent
    sim.place(2, "ante_across", 0)
    assert expect(events, SpotChanged) == SpotChanged(2, "ante_across", 0)
    assert sim.amounts() == {}


def test_read_spots_snapshot_matches_the_table(sensors, events):
    sim, driver = sensors
    placed = [(3, "middle", 2500), (1, "five_card_bonus", 100), (3, "ante_across", 1000), (1, "down", 500)]
    for seat, spot, amount in placed:
        sim.place(seat, spot, amount)
        assert expect(events, SpotChanged) == SpotChanged(seat, spot, amount)
    driver.read_spots(77)
    snapshot = expect(events, SpotsSnapshot)
    assert snapshot == SpotsSnapshot(
        77, ((1, "five_card_bonus", 100), (1, "down", 500), (3, "ante_across", 1000), (3, "middle", 2500))
    )
    assert {(s, p): a for s, p, a in snapshot.spots} == sim.amounts()


def test_chips_lying_when_the_board_starts_are_read_and_not_reported_as_changes(drivers, events):
    """A service started again on a table whose chips stayed where they were: the board reads them (SPOTS) and
    sends no SPOT_CHANGED for them. The next event after the handshake is the reading: a device answers only
    once its earlier device-initiated frames are acknowledged (docs/protocol.md), so a change would come first."""
    chips = {(2, "ante_across"): 500, (2, "ante_down"): 500, (5, "five_card_bonus"): 100, (6, "ante_down"): 0}
    sim = SensorSimulator(chips=chips)
    sim.start()
    try:
        driver = drivers("sensors", sim.port)
        expect(events, DeviceReady)
        driver.read_spots(7)
        assert expect(events, SpotsSnapshot) == SpotsSnapshot(
            7, ((2, "ante_across", 500), (2, "ante_down", 500), (5, "five_card_bonus", 100)))
        sim.place(2, "ante_across", 0)  # and they move as any chips do
        assert expect(events, SpotChanged) == SpotChanged(2, "ante_across", 0)
    finally:
        sim.stop()


@pytest.mark.parametrize("chips, named", [({(7, "ante_down"): 500}, "seat"), ({(1, "pass"): 500}, "spot"),
                                          ({(1, "ante_down"): -5}, "amount")])
def test_chips_that_cannot_lie_on_the_felt_are_refused_naming_what(chips, named):
    with pytest.raises(ValueError, match=named):
        SensorSimulator(chips=chips)


def test_clear_one_seat(sensors, events):
    sim, driver = sensors
    sim.place(1, "across", 300)
    sim.place(2, "across", 400)
    expect(events, SpotChanged)
    expect(events, SpotChanged)
    sim.clear(1)
    assert expect(events, SpotChanged) == SpotChanged(1, "across", 0)
    assert sim.amounts() == {(2, "across"): 400}
    driver.read_spots(1)
    assert expect(events, SpotsSnapshot) == SpotsSnapshot(1, ((2, "across", 400),))


def test_unanswered_read_is_retransmitted(sensors, events):
    sim, driver = sensors
    sim.place(4, "ante_down", 200)
    expect(events, SpotChanged)
    assert sim.wait_for(lambda: sim.awaiting_ack == 0, WAIT)  # so the frame ignored is not the ACK
    sim.ignore_next(1)
    driver.read_spots(5)
    assert expect(events, SpotsSnapshot) == SpotsSnapshot(5, ((4, "ante_down", 200),))
    assert len([f for f in sim.received if f.msg_type == 0x20]) == 2


def test_sensor_simulator_validates_its_inputs(sensors):
    sim, _ = sensors
    with pytest.raises(ValueError, match="seat"):
        sim.place(7, "middle", 1)
    with pytest.raises(ValueError, match="spot"):
        sim.place(1, "side_bet", 1)
    with pytest.raises(ValueError, match="amount"):
        sim.place(1, "middle", -5)


# --------------------------------------------------------------------------------------------------------------
# Dealer panel


def test_press_posts_button_pressed(panel, events):
    sim, _ = panel
    sim.press("no_more_bets")
    assert expect(events, ButtonPressed) == ButtonPressed("no_more_bets")


def test_set_lamps_and_show(panel):
    sim, driver = panel
    driver.set_lamps(["open_betting", "confirm"])
    assert sim.wait_for_lamp("confirm", WAIT)
    assert sim.lamps == {"open_betting", "confirm"}
    driver.set_lamps([])
    assert sim.wait_for(lambda: not sim.lamps, WAIT)
    driver.show("Place your bets")
    driver.show("a" + "é" * 40)  # 81 UTF-8 bytes, cut to 63 at a character boundary
    assert sim.wait_for(lambda: len(sim.messages) == 2, WAIT)
    assert sim.messages == ["Place your bets", "a" + "é" * 31]
    assert sim.display == "a" + "é" * 31
    assert not sim.wait_for_lamp("reveal", 0.05)


def test_unknown_button_code_is_logged_and_nakked(panel, events, caplog):
    sim, driver = panel
    with caplog.at_level(logging.WARNING, logger="drivers.panel.driver"):
        sim.send(panel_protocol.BUTTON, b"\x0f")
        assert sim.wait_for(lambda: any(f.msg_type == framing.NAK for f in sim.received), WAIT)
    nak = next(f for f in sim.received if f.msg_type == framing.NAK)
    assert framing.decode_nak(nak.payload) == framing.Nak(seq=1, reason=framing.NAK_BAD_PAYLOAD)  # IDENT was seq 0
    assert "unknown button code 15" in caplog.text
    assert driver.protocol_errors == 1
    sim.press("reveal")  # the link carries on
    assert expect(events, ButtonPressed) == ButtonPressed("reveal")


def test_an_event_of_a_type_the_host_does_not_know_is_acknowledged_and_nakked_and_the_panel_goes_on(panel, events,
                                                                                                   caplog):
    """A device-initiated frame of a type the host does not know (a panel of a newer firmware, say) is sent again
    until acknowledged, and the device's next events and answers wait behind it (docs/protocol.md,
    "Device-initiated frames"): NAKed only, it held every later press for good. The host acknowledges it, NAKs it
    (reason 1), delivers nothing for it, and the next press arrives."""
    sim, driver = panel
    with caplog.at_level(logging.WARNING):
        sim.send_event(0x7E, b"\x01")  # the panel's first device-initiated frame: event counter 0
        sim.press("reveal")
        assert expect(events, ButtonPressed) == ButtonPressed("reveal")
    assert sim.wait_for(lambda: sum(f.msg_type == framing.ACK for f in sim.received) >= 2, WAIT)
    naks = [framing.decode_nak(f.payload) for f in sim.received if f.msg_type == framing.NAK]
    acks = [framing.decode_ack(f.payload) for f in sim.received if f.msg_type == framing.ACK]
    assert naks == [framing.Nak(seq=0, reason=framing.NAK_UNKNOWN_TYPE)]
    assert acks == [0, 1]  # the unknown frame's, then the press's
    assert driver.protocol_errors == 1
    assert "unknown (0x7E)" in caplog.text
    assert "sequence gap" not in caplog.text  # the event counter is not the answers' SEQ


def test_an_unknown_event_sent_again_after_a_lost_ack_is_acknowledged_again_and_not_nakked_twice(panel, events):
    """The device sends the same frame (same SEQ, bytes) again when the host's ACK was lost: the host acknowledges
    it again (a repeat is not dropped unanswered, which would hold the device for good) and rejects it once."""
    sim, driver = panel
    frame = framing.encode_frame(0, 0x7E, b"\x01")
    sim.send_raw(frame)
    sim.send_raw(frame)  # as after a lost ACK
    assert sim.wait_for(lambda: sum(f.msg_type == framing.ACK for f in sim.received) >= 2, WAIT)
    assert [framing.decode_ack(f.payload) for f in sim.received if f.msg_type == framing.ACK] == [0, 0]
    assert [framing.decode_nak(f.payload) for f in sim.received if f.msg_type == framing.NAK] == [
        framing.Nak(seq=0, reason=framing.NAK_UNKNOWN_TYPE)]
    assert driver.protocol_errors == 1


def test_simulators_remember_a_bounded_history_and_count_everything(monkeypatch):
    """A simulator left running for days keeps constant memory: it remembers the last HISTORY stacks and
    frames, while ``dealt`` still counts every stack and ``dispensed_since`` refuses what it forgot."""
    from drivers.shoe import simulator as shoe_sim

    monkeypatch.setattr(shoe_sim, "HISTORY", 3)
    sim = shoe_sim.ShoeSimulator(seed=1)
    try:
        sim._shuffled = True
        sim._deck = list(shoe_sim.protocol.DECK)
        for txn in range(5):
            sim._dispense(shoe_sim.protocol.Dispense(txn, 2))
        assert sim.dealt == 5
        assert [txn for txn, _ in sim.dispensed] == [2, 3, 4]
        assert [txn for txn, _ in sim.dispensed_since(3)] == [3, 4]
        with pytest.raises(ValueError, match="no longer remembered"):
            sim.dispensed_since(1)
        assert list(sim._records) == [2, 3, 4]
    finally:
        sim.stop()


# --------------------------------------------------------------------------------------------------------------
# The shoe's power-on counter (docs/protocol.md, "Power-on counter")


def _pings(sim: PtySimulator) -> int:
    return sum(1 for f in sim.received if f.msg_type == framing.PING)


def test_a_shoe_power_cycled_with_the_link_up_is_told_by_its_next_pong(shoe, events):
    """The shoe restarts without the link dropping (its USB adapter kept power): the heartbeat's PONG carries
    a counter the driver has not seen, posted once as ``ShoeBootCount``; the link stays up, no fault."""
    sim, driver = shoe
    assert expect(events, ShoeBootCount) == ShoeBootCount(1)  # the handshake's, the first of this run
    sim.power_cycle()
    assert expect(events, ShoeBootCount) == ShoeBootCount(2)
    assert driver.link_up and driver.losses == 0
    seen = _pings(sim)
    assert sim.wait_for(lambda: _pings(sim) >= seen + 2, WAIT)  # two more heartbeats with the same counter
    assert sim.wait_for(lambda: sim.awaiting_ack == 0, WAIT)
    assert events.empty()  # the same counter again is not news


def test_a_new_handshake_reports_the_counter_and_only_a_new_one_is_posted(simulators, drivers, events):
    """A driver started again (the service restarted) posts the counter at its first handshake whatever it is,
    so the controller compares it with the journal's; the shoe power-cycled in between has counted one more."""
    sim = simulators("shoe")
    first = drivers("shoe", sim.port)
    expect(events, DeviceReady)
    assert expect(events, ShoeBootCount) == ShoeBootCount(1)
    first.stop()
    sim.power_cycle()
    drivers("shoe", sim.port)
    assert events.get(timeout=WAIT) == DeviceReady("shoe", sim.device_id, "sim-1.0", framing.PROTOCOL_VERSION)
    assert events.get(timeout=WAIT) == ShoeBootCount(2)


def test_a_shoe_that_keeps_no_counter_is_accepted_and_posts_none(simulators, drivers, events):
    """Compatibility within protocol version 2: IDENT without the counter and an empty PONG are accepted."""

    class OldShoe(ShoeSimulator):
        def boot_count(self):
            return None

        def pong_payload(self) -> bytes:
            return b""

    sim = OldShoe(seed=1)
    sim.start()
    try:
        driver = drivers("shoe", sim.port)
        assert events.get(timeout=WAIT) == DeviceReady("shoe", sim.device_id, "sim-1.0", framing.PROTOCOL_VERSION)
        assert driver.ident.boots is None
        sim.power_cycle()
        seen = _pings(sim)
        assert sim.wait_for(lambda: _pings(sim) >= seen + 2, WAIT)
        assert events.empty() and driver.link_up and driver.protocol_errors == 0
    finally:
        driver.stop()
        sim.stop()


def test_a_shoe_pong_of_another_length_is_refused(shoe, events):
    """A PONG that is neither empty nor the 4 bytes of the counter is NAKed (reason 2) and counted."""
    sim, driver = shoe
    expect(events, ShoeBootCount)
    sim.send(framing.PONG, b"\x01\x02")
    assert sim.wait_for(lambda: any(f.msg_type == framing.NAK for f in sim.received), WAIT)
    assert driver.protocol_errors == 1
