"""What the host may rely on from the dealer panel (docs/protocol.md, "Dealer panel", "Heartbeat",
"Device-initiated frames"), asserted only through ``PanelDriver`` (tests/contract/bench.py): each press is
reported once, however its frames or their acknowledgements are lost; the supervisor key is reported when
turned, re-confirmed while it stays on, and reported again to a new session; the lamps and the display show
what the host sent last, a lost LAMPS repaired by the heartbeat.
"""

from __future__ import annotations

import dataclasses

import pytest

from drivers import framing
from drivers.events import BUTTONS, ButtonPressed, DeviceFault, DeviceReady, SupervisorKey
from drivers.panel import protocol
from tests.pty_helpers import expect, expect_quiet

KINDS = ("panel",)

KEY = "SUP-7"


def ready_panel(bench, **options):
    driver, events = bench.driver(**options)
    expect(events, DeviceReady)
    return driver, events


@pytest.mark.person
def test_each_press_is_reported_once_in_order(bench):
    driver, events = ready_panel(bench)
    buttons = BUTTONS if not bench.hands.person else ("open_betting", "confirm")
    for button in buttons:
        bench.hands.press(button)
    assert [expect(events, ButtonPressed).button for _ in buttons] == list(buttons)
    expect_quiet(events, 0.3)


@pytest.mark.person
@pytest.mark.parametrize("lost", ["press", "acknowledgement"])
def test_a_press_or_its_acknowledgement_lost_on_the_line_is_still_one_press(bench, lost):
    driver, events = ready_panel(bench)
    if lost == "press":
        bench.faults.lose_incoming(protocol.BUTTON)
    else:
        bench.faults.lose_outgoing(framing.ACK)
    bench.hands.press("no_more_bets")
    assert expect(events, ButtonPressed) == ButtonPressed("no_more_bets")
    expect_quiet(events, 0.5)
    assert sum(bench.faults.lost.values()) == 1


@pytest.mark.person
def test_the_key_is_reported_turned_confirmed_while_on_and_reported_turned_off(bench):
    # a confirm window of about 2 s (a response timeout of 1.5 s): a machine so loaded that the driver's thread
    # waits half a second must not revoke the key, whose heartbeats are every 0.2 s
    timing = dataclasses.replace(bench.timing, response_timeout=1.5, response_timeout_max=1.5)
    driver, events = ready_panel(bench, timing=timing)
    driver.set_lamps(())  # the session's first LAMPS
    bench.hands.turn_key(True, KEY)
    on = expect(events, SupervisorKey)
    assert on.on and on.key_id
    if not bench.hands.person:
        assert on.key_id == KEY
    # past one whole window: without each heartbeat's PONG confirming it, the key would be counted off by now
    expect_quiet(events, timing.confirm_window + 2 * timing.heartbeat_interval)
    bench.hands.turn_key(False, on.key_id)
    assert expect(events, SupervisorKey) == SupervisorKey(False, on.key_id)


@pytest.mark.person
def test_a_key_still_turned_is_reported_to_a_new_session_after_its_first_lamps(bench):
    first, events = ready_panel(bench)
    first.set_lamps(())
    bench.hands.turn_key(True, KEY)
    on = expect(events, SupervisorKey)
    first.stop()  # the host restarts; nobody touches the key
    second, events = ready_panel(bench)
    second.set_lamps(("open_betting",))
    assert expect(events, SupervisorKey) == on
    bench.hands.turn_key(False, on.key_id)
    assert expect(events, SupervisorKey) == SupervisorKey(False, on.key_id)


def test_lamps_and_display_are_taken_without_a_refusal(bench):
    driver, events = ready_panel(bench)
    driver.set_lamps(("open_betting", "void_round"))
    driver.show("Place your bets")
    driver.set_lamps(())
    driver.show("é" * 40)  # 80 bytes of UTF-8: cut by the host to 64
    expect_quiet(events, 0.5)
    assert not any(isinstance(event, DeviceFault) for event in list(events.queue))
    assert driver.link_up


@pytest.mark.person
def test_the_lamps_and_the_display_show_what_the_host_sent_last(bench):
    driver, events = ready_panel(bench)
    driver.set_lamps(("open_betting", "void_round"))
    assert bench.hands.sees_lamps(frozenset({"open_betting", "void_round"}))
    driver.set_lamps(("confirm",))
    assert bench.hands.sees_lamps(frozenset({"confirm"}))
    driver.show("Place your bets")
    assert bench.hands.sees_text("Place your bets")
    driver.show("é" * 40)
    assert bench.hands.sees_text("é" * 32)  # 64 bytes, cut at a character boundary
    expect_quiet(events, 0.3)


@pytest.mark.person
def test_a_lost_lamps_frame_is_repaired_by_the_heartbeat(bench):
    driver, events = ready_panel(bench)
    driver.set_lamps(("reveal",))
    assert bench.hands.sees_lamps(frozenset({"reveal"}))
    bench.faults.lose_outgoing(protocol.LAMPS)
    driver.set_lamps(("confirm", "exclude"))
    assert bench.hands.sees_lamps(frozenset({"confirm", "exclude"}))  # sent again with the next PING
    assert bench.faults.lost == {protocol.LAMPS: 1}
