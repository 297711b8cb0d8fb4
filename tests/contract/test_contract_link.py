"""What the host may rely on from every device's link (docs/protocol.md, "Handshake", "Heartbeat"): it
answers HELLO with IDENT naming its kind, identity and protocol version 2, again at each new session, and
answers the heartbeat whatever else it does. Asserted only through the drivers (tests/contract/bench.py).
"""

from __future__ import annotations

import dataclasses

from drivers import framing
from drivers.events import DeviceFault, DeviceReady
from tests.pty_helpers import expect, expect_quiet

KINDS = ("shoe", "sensors", "panel")
OTHER = {"shoe": "sensors", "sensors": "panel", "panel": "shoe"}


def test_the_device_answers_the_handshake_with_its_kind_identity_and_protocol_version(bench):
    driver, events = bench.driver()
    ready = expect(events, DeviceReady)
    assert ready.device == bench.kind
    assert ready.protocol == framing.PROTOCOL_VERSION == 2
    assert ready.device_id and ready.device_id.isprintable()
    assert ready.firmware and ready.firmware.isprintable()
    assert driver.ident == framing.Ident(2, bench.kind, ready.device_id, ready.firmware, driver.ident.boots)
    assert driver.ident.boots is None or 0 <= driver.ident.boots <= 0xFFFF_FFFF  # the power-on counter, if kept
    assert driver.link_up


def test_each_new_session_gets_the_same_identity(bench):
    first, events = bench.driver()
    ready = expect(events, DeviceReady)
    first.stop()
    second, events = bench.driver(identity=ready.device_id)
    assert expect(events, DeviceReady) == ready
    assert second.link_up


def test_a_host_expecting_another_device_refuses_it(bench):
    """The identity is what a host checks before it trusts a device: another id, or another kind, is refused
    at the handshake."""
    driver, events = bench.driver()
    ready = expect(events, DeviceReady)
    driver.stop()
    wrong_id, events = bench.driver(identity=ready.device_id + "-OTHER")
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == (bench.kind, "handshake")
    assert not wrong_id.link_up
    wrong_id.stop()
    wrong_kind, events = bench.driver(OTHER[bench.kind])
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == (OTHER[bench.kind], "handshake")
    assert not wrong_kind.link_up


def test_the_device_answers_the_heartbeat_so_a_quiet_link_stays_up(bench):
    timing = dataclasses.replace(bench.timing, heartbeat_interval=bench.timing.heartbeat_interval / 2)
    driver, events = bench.driver(timing=timing)
    expect(events, DeviceReady)
    received = driver.link_stats()["frames_received"]
    expect_quiet(events, 1.5 * timing.link_silence)  # no link_lost: every PING was answered
    assert driver.link_up
    assert driver.link_stats()["frames_received"] >= received + 2  # the PONGs
