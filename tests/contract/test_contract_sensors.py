"""What the host may rely on from the bet sensors (docs/protocol.md, "Bet sensors", "Device-initiated
frames"), asserted only through ``SensorDriver`` (tests/contract/bench.py): every change of a spot is reported
once, in order, and never after a reading taken later; a reading lists exactly the non-empty spots; a lost
frame costs a repeat, never a change.
"""

from __future__ import annotations

import pytest

from drivers.events import SEATS, SPOTS, DeviceReady, SpotChanged, SpotsSnapshot
from drivers.sensors import protocol
from tests.pty_helpers import expect, expect_quiet

KINDS = ("sensors",)

#: Chips a person puts down, in this order: (seat, spot, amount in minor units).
BETS = ((2, "ante_across", 500), (2, "ante_down", 500), (5, "five_card_bonus", 100))


def ready_sensors(bench):
    driver, events = bench.driver()
    expect(events, DeviceReady)
    return driver, events


def reading(driver, events, request_id: int) -> tuple:
    driver.read_spots(request_id)
    snapshot = expect(events, SpotsSnapshot)
    assert snapshot.request_id == request_id
    return snapshot.spots


def test_a_reading_lists_each_non_empty_spot_once_in_seat_then_spot_order_and_reading_changes_nothing(bench):
    driver, events = ready_sensors(bench)
    spots = reading(driver, events, 1)
    for seat, spot, amount in spots:
        assert seat in SEATS and spot in SPOTS and amount > 0
    keys = [(seat, SPOTS.index(spot)) for seat, spot, _ in spots]
    assert keys == sorted(set(keys))
    assert reading(driver, events, 2) == spots
    assert reading(driver, events, 2) == spots  # the same request id again: read again, same answer


@pytest.mark.person
def test_chips_put_down_and_taken_away_are_each_reported_once_in_order_and_read_back(bench):
    driver, events = ready_sensors(bench)
    bench.hands.clear_table()
    while not events.empty():  # the chips a person took away before the test
        assert isinstance(events.get_nowait(), SpotChanged)
    for seat, spot, amount in BETS:
        bench.hands.place(seat, spot, amount)
        assert expect(events, SpotChanged) == SpotChanged(seat, spot, amount)
    assert reading(driver, events, 10) == tuple(sorted(BETS, key=lambda b: (b[0], SPOTS.index(b[1]))))
    bench.hands.place(2, "ante_down", 0)
    assert expect(events, SpotChanged) == SpotChanged(2, "ante_down", 0)
    assert reading(driver, events, 11) == ((2, "ante_across", 500), (5, "five_card_bonus", 100))
    expect_quiet(events, 0.3)


@pytest.mark.person
def test_a_reading_never_comes_before_a_change_made_earlier(bench):
    """A snapshot followed by an older chip change would look like chips moved on a locked spot
    (docs/protocol.md, "Device-initiated frames")."""
    driver, events = ready_sensors(bench)
    for seat, spot, amount in BETS:
        bench.hands.place(seat, spot, amount)
    driver.read_spots(20)
    changes = [expect(events, SpotChanged) for _ in BETS]
    assert changes == [SpotChanged(*bet) for bet in BETS]
    snapshot = expect(events, SpotsSnapshot)
    assert set(BETS) <= set(snapshot.spots)


@pytest.mark.person
def test_a_change_lost_on_the_line_is_sent_again_and_reported_once(bench):
    driver, events = ready_sensors(bench)
    bench.faults.lose_incoming(protocol.SPOT_CHANGED)
    bench.hands.place(3, "middle", 2500)
    assert expect(events, SpotChanged) == SpotChanged(3, "middle", 2500)
    assert bench.faults.lost == {protocol.SPOT_CHANGED: 1}
    expect_quiet(events, 0.5)


@pytest.mark.parametrize("lost", ["answer", "request"])
def test_a_lost_reading_or_request_is_asked_again_and_answered_once(bench, lost):
    driver, events = ready_sensors(bench)
    expected = reading(driver, events, 30)
    if lost == "answer":
        bench.faults.lose_incoming(protocol.SPOTS_MSG)
    else:
        bench.faults.lose_outgoing(protocol.READ_SPOTS)
    assert reading(driver, events, 31) == expected
    assert sum(bench.faults.lost.values()) == 1
    expect_quiet(events, 4 * bench.timing.response_timeout)
