"""The controller's event queue (controller/service/eventqueue.py; docs/architecture.md "Event queue"): bounded, order
kept, chip changes of one spot coalesced within a run without hiding that a spot moved.

Expected values are written out by hand from the rules in the module docstring.
"""

from __future__ import annotations

import queue

import pytest

from controller.round.inputs import OperatorAction
from controller.service.eventqueue import EventQueue
from drivers.events import ButtonPressed, DeviceFault, SpotChanged, SupervisorKey

STOP = object()


def drain(events: EventQueue) -> list:
    out = []
    while not events.empty():
        out.append(events.get_nowait())
    return out


def test_order_is_kept_and_a_spot_keeps_its_first_and_latest_change_per_run():
    events = EventQueue()
    for amount in (100, 200, 300, 400):
        events.put(SpotChanged(1, "ante_across", amount))
    events.put(SpotChanged(2, "middle", 50))
    events.put(ButtonPressed("no_more_bets"))
    events.put(SpotChanged(1, "ante_across", 500))  # after the button: never merged ahead of it
    events.put(SpotChanged(1, "ante_across", 600))
    events.put(SpotChanged(1, "ante_across", 700))
    assert drain(events) == [SpotChanged(1, "ante_across", 100), SpotChanged(1, "ante_across", 400),
                             SpotChanged(2, "middle", 50), ButtonPressed("no_more_bets"),
                             SpotChanged(1, "ante_across", 500), SpotChanged(1, "ante_across", 700)]
    assert events.coalesced == 3


def test_a_locked_spot_that_moves_and_comes_back_is_still_seen_to_move():
    events = EventQueue()
    events.put(ButtonPressed("no_more_bets"))
    for amount in (900, 700, 500):  # locked at 500: moved to 900, then back
        events.put(SpotChanged(3, "ante_down", amount))
    assert drain(events)[1:] == [SpotChanged(3, "ante_down", 900), SpotChanged(3, "ante_down", 500)]


def test_a_change_taken_by_the_controller_is_never_rewritten():
    events = EventQueue()
    events.put(SpotChanged(1, "down", 100))
    events.put(SpotChanged(1, "down", 200))
    assert events.get_nowait() == SpotChanged(1, "down", 100)
    assert events.get_nowait() == SpotChanged(1, "down", 200)
    events.put(SpotChanged(1, "down", 300))
    events.put(SpotChanged(1, "down", 400))
    events.put(SpotChanged(1, "down", 500))
    assert drain(events) == [SpotChanged(1, "down", 300), SpotChanged(1, "down", 500)]


def test_a_flood_of_chip_changes_leaves_at_most_two_per_spot_ahead_of_a_person():
    events = EventQueue(capacity=100)
    for n in range(100_000):
        events.put(SpotChanged(1 + n % 6, ("across", "down", "middle")[n % 3], n + 1))
    events.put(OperatorAction("void_round", "sup", "supervisor", "flood"))
    assert events.qsize() <= 2 * 18 + 1
    assert drain(events)[-1].action == "void_round"


def test_full_queue_refuses_events_but_keeps_room_for_faults_the_key_and_stop():
    events = EventQueue(capacity=3, reserve=3)
    for button in ("open_betting", "confirm", "reveal"):
        events.put(ButtonPressed(button))
    with pytest.raises(queue.Full):
        events.put(ButtonPressed("exclude"))
    with pytest.raises(queue.Full):
        events.put(SpotChanged(1, "down", 5))
    events.put(DeviceFault("sensors", "flooding"))
    events.put(SupervisorKey(False, "SUP-7"))
    events.put(STOP)
    with pytest.raises(queue.Full):
        events.put(STOP)
    assert events.refused == 3
    assert drain(events)[3:] == [DeviceFault("sensors", "flooding"), SupervisorKey(False, "SUP-7"), STOP]


def test_get_waits_and_times_out_like_a_queue():
    events = EventQueue()
    with pytest.raises(queue.Empty):
        events.get(timeout=0.05)
    with pytest.raises(queue.Empty):
        events.get_nowait()
