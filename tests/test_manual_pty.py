"""Cards typed on the dealer panel in a round dealt by hand (NY 9 NYCRR 5324.39(d)(1)): the CARDS frame between the
panel simulator and the panel driver over a real pseudo-terminal (docs/protocol.md, "Dealer panel"), and its codec."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers import framing
from drivers.events import CardsEntered, DeviceReady
from drivers.framing import ProtocolError
from drivers.panel import protocol as panel_protocol
from tests.pty_helpers import WAIT, expect
from tests.test_drivers_pty import drivers, events, panel, simulators  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(30)


def test_cards_typed_on_the_panel_reach_the_controller_once(panel, events):  # noqa: F811
    sim, _driver = panel
    sim.enter_cards(3, ("7c", "8d"))
    assert expect(events, CardsEntered) == CardsEntered(3, ("7c", "8d"), "panel")
    sim.enter_cards(0, ("Ah", "1x"))  # not a card: carried as typed, the round refuses it (tests/test_manual.py)
    assert expect(events, CardsEntered) == CardsEntered(0, ("Ah", "1x"), "panel")
    assert events.empty()


def test_a_malformed_cards_frame_is_nakked_and_names_no_card(panel, events, caplog):  # noqa: F811
    sim, driver = panel
    with caplog.at_level(logging.DEBUG, logger="drivers.panel.driver"):
        sim.send(panel_protocol.CARDS, bytes((9,)) + b"7c8d")  # no seat 9
        assert sim.wait_for(lambda: any(f.msg_type == framing.NAK for f in sim.received), WAIT)
        nak = next(f for f in sim.received if f.msg_type == framing.NAK)
        assert framing.decode_nak(nak.payload).reason == framing.NAK_BAD_PAYLOAD
        assert "target 9" in caplog.text
        sim.enter_cards(3, ("7c", "8d"))  # the link carries on
        assert expect(events, CardsEntered) == CardsEntered(3, ("7c", "8d"), "panel")
    assert "7c" not in caplog.text and "8d" not in caplog.text  # the log names no card
    assert driver.protocol_errors == 1


TYPED = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=2, max_size=2)


@given(st.integers(0, 6), st.lists(TYPED, min_size=1, max_size=5))
def test_cards_codec_round_trips(seat, cards):
    payload = panel_protocol.encode_cards(seat, cards)
    assert len(payload) == 1 + 2 * len(cards) and payload[0] == seat
    assert panel_protocol.decode_cards(payload) == (seat, tuple(cards))


@pytest.mark.parametrize("payload, problem", [
    (b"\x03", "payload is 1 bytes"),
    (b"\x037c8", "payload is 4 bytes"),
    (b"\x07" + b"7c8d", "target 7"),
    (b"\x00" + b"Ah" * 6, "payload is 13 bytes"),
    (b"\x00A hK", "not printable ASCII"),
    (b"\x00A\x00", "not printable ASCII"),
])
def test_cards_decoder_refuses(payload, problem):
    with pytest.raises(ProtocolError, match=problem):
        panel_protocol.decode_cards(payload)


def test_cards_encoder_refuses():
    for seat, cards, problem in ((7, ("Ah",), "target 7"), (0, (), "0 cards"), (0, ("Ah",) * 6, "6 cards"),
                                 (1, ("A",), "two printable"), (1, ("Äh",), "two printable")):
        with pytest.raises(ProtocolError, match=problem):
            panel_protocol.encode_cards(seat, cards)


# ---------------------------------------------------------------------- the card reader
@pytest.fixture
def reader(events):  # noqa: F811
    from drivers.reader.driver import ReaderDriver
    from drivers.reader.simulator import ReaderSimulator
    from tests.test_drivers_pty import FAST

    sim = ReaderSimulator()
    sim.start()
    driver = ReaderDriver(sim.port, events, **FAST)
    driver.start()
    try:
        ready = expect(events, DeviceReady)
        assert (ready.device, ready.device_id) == ("reader", "SIM-READER-1")
        yield sim, driver
    finally:
        driver.stop()
        sim.stop()


def test_cards_scanned_by_the_reader_reach_the_controller_once(reader, events):  # noqa: F811
    sim, _driver = reader
    sim.scan(5, ("Qh", "Jh"))
    assert expect(events, CardsEntered) == CardsEntered(5, ("Qh", "Jh"), "reader")
    sim.scan(0, ("Ah", "Kh", "Qd", "Jd", "2c"))
    assert expect(events, CardsEntered) == CardsEntered(0, ("Ah", "Kh", "Qd", "Jd", "2c"), "reader")
    assert events.empty()


def test_a_malformed_scan_is_nakked_and_the_reader_carries_on(reader, events, caplog):  # noqa: F811
    from drivers.reader import protocol as reader_protocol

    sim, driver = reader
    with caplog.at_level(logging.DEBUG, logger="drivers.reader.driver"):
        sim.send(reader_protocol.SCAN, b"\x02Qh")  # one card for a seat: well formed; the round counts
        assert expect(events, CardsEntered) == CardsEntered(2, ("Qh",), "reader")
        sim.send(reader_protocol.SCAN, b"\x02Q")  # a card cut short
        assert sim.wait_for(lambda: any(f.msg_type == framing.NAK for f in sim.received), WAIT)
        sim.scan(2, ("Qh", "Jh"))
        assert expect(events, CardsEntered) == CardsEntered(2, ("Qh", "Jh"), "reader")
    assert driver.protocol_errors == 1
    assert "SCAN (0x40): payload is 2 bytes" in caplog.text and "Qh" not in caplog.text


def test_a_reader_lost_never_faults_the_round_and_its_scans_are_entries():
    from controller.round import commands as cmd
    from controller.round.machine import Round
    from drivers.events import DeviceFault
    from tests.test_manual import (DECISIONS, MANUAL_CONFIG, NY, TableDriver, as_supervisor, dealt_by_hand,
                                   turn_community)

    driver = TableDriver(Round(MANUAL_CONFIG, NY))
    driver.start()
    driver.send(DeviceReady("reader", "SIM-READER-1", "sim-1.0", 1))
    assert "reader" in driver.machine.devices_ready and driver.state == "idle"
    as_supervisor(driver, "deal_by_hand")
    dealt_by_hand(driver)
    out = driver.send(DeviceFault("reader", "link_lost", "unplugged"))
    assert driver.state == "across_decision" and "reader" not in driver.machine.devices_ready
    assert [o.kind for o in out if isinstance(o, cmd.Irregularity)] == ["optional_device_fault"]
    turn_community(driver, 1)
    driver.decide("down", DECISIONS["down"])
    driver.send(CardsEntered(0, ("Qd", "Jd"), "reader"))
    recorded = [o for o in driver.outputs if isinstance(o, cmd.CardsRecorded)]
    assert (recorded[-1].target, recorded[-1].source) == ("down", "reader")
