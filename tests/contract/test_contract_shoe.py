"""What the host may rely on from a shoe (docs/protocol.md, "Shoe", "Exactly-once dispensing", "What did you
last do"), asserted only through ``ShoeDriver`` (tests/contract/bench.py).

A deck is 52 distinct cards (rank ``23456789TJQKA`` + suit ``cdhs``); each transaction id is dealt at most
once, however often it is asked for; a lost answer or request costs a repeat, never a second stack.
"""

from __future__ import annotations

import itertools

import pytest

import queue
import time

from drivers.events import (
    SHOE_FAULTS,
    DeviceFault,
    DeviceReady,
    ShoeDoorClosed,
    ShoeLastDispense,
    ShuffleComplete,
    StackDispensed,
)
from drivers.shoe import protocol
from tests.contract.bench import WAIT
from tests.pty_helpers import expect, expect_quiet

KINDS = ("shoe",)

#: Every card of one deck, written out here rather than taken from the code under test.
DECK = {rank + suit for rank in "23456789TJQKA" for suit in "cdhs"}

#: Transaction ids far from those a table uses in its first rounds, new for each test on hardware.
TXN = itertools.count(3_000_000_000)


def ready_shoe(bench, shuffle: bool = True):
    driver, events = bench.driver()
    expect(events, DeviceReady)
    if shuffle:
        driver.shuffle()
        assert expect(events, ShuffleComplete) == ShuffleComplete(52)
    return driver, events


def deal(driver, events, txn: int, count: int) -> tuple[str, ...]:
    """Ask for ``count`` cards under ``txn``: a stack of that many distinct cards of the deck."""
    driver.dispense(txn, count)
    return dealt(events, txn, count)


def last(driver, events) -> ShoeLastDispense:
    """What the shoe says it dealt last."""
    driver.query_last()
    return expect(events, ShoeLastDispense)


def deal_the_rest(driver, events, cards: tuple[str, ...]) -> None:
    """Deal the rest of the deck after the first stack ``cards`` of a shuffle: exactly the 52 cards of the deck
    between them, so nothing left the shoe twice (a second stack dealt would empty it before the end)."""
    seen = list(cards)
    while len(seen) < 50:
        seen.extend(deal(driver, events, next(TXN), 5))
    seen.extend(deal(driver, events, next(TXN), 52 - len(seen)))
    assert sorted(seen) == sorted(DECK)


def door_closings(bench, events, seconds: float) -> int:
    """How many ``ShoeDoorClosed`` arrive in ``seconds`` (a shoe need not send DOOR_CLOSED: docs/protocol.md,
    "The door"); any other event fails the test. A simulator sends it: one is waited for, then ``seconds`` more."""
    seen = 0
    deadline = time.monotonic() + (WAIT if not bench.hardware else seconds)
    while True:
        try:
            event = events.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return seen
        assert isinstance(event, ShoeDoorClosed), f"expected nothing or ShoeDoorClosed, got {event!r}"
        seen += 1
        deadline = time.monotonic() + seconds


def dealt(events, txn: int, count: int) -> tuple[str, ...]:
    stack = expect(events, StackDispensed)
    assert stack.txn_id == txn
    assert len(stack.cards) == count
    assert set(stack.cards) <= DECK
    assert len(set(stack.cards)) == count
    return stack.cards


def test_a_shuffle_reports_one_deck(bench):
    ready_shoe(bench)


@pytest.mark.destructive
def test_a_five_card_and_a_two_card_stack_are_distinct_cards_and_the_shoe_says_what_it_dealt_last(bench):
    driver, events = ready_shoe(bench)
    first, second = next(TXN), next(TXN)
    cross = deal(driver, events, first, 5)
    hole = deal(driver, events, second, 2)
    assert not set(cross) & set(hole)
    assert last(driver, events) == ShoeLastDispense(second, hole)


@pytest.mark.destructive
def test_a_transaction_asked_for_again_is_answered_with_its_stack_and_dealt_once(bench):
    driver, events = ready_shoe(bench)
    txn = next(TXN)
    cards = deal(driver, events, txn, 5)
    assert deal(driver, events, txn, 5) == cards
    assert last(driver, events) == ShoeLastDispense(txn, cards)  # a repeat is not a dispense
    deal_the_rest(driver, events, cards)  # the cards of txn left the shoe once


@pytest.mark.destructive
@pytest.mark.parametrize("lost", ["answer", "request"])
def test_a_lost_stack_or_dispense_costs_a_repeat_never_a_second_stack(bench, lost):
    driver, events = ready_shoe(bench)
    txn = next(TXN)
    if lost == "answer":
        bench.faults.lose_incoming(protocol.STACK)
    else:
        bench.faults.lose_outgoing(protocol.DISPENSE)
    cards = deal(driver, events, txn, 5)
    assert bench.faults.lost == {protocol.STACK if lost == "answer" else protocol.DISPENSE: 1}
    assert last(driver, events) == ShoeLastDispense(txn, cards)
    deal_the_rest(driver, events, cards)
    expect_quiet(events, 0.3)


@pytest.mark.destructive
@pytest.mark.person
def test_a_fault_deals_nothing_and_the_same_transaction_is_dealt_once_after_it(bench):
    driver, events = ready_shoe(bench)
    before, txn = next(TXN), next(TXN)
    earlier = deal(driver, events, before, 2)
    bench.hands.cause_shoe_fault("jam")
    driver.dispense(txn, 5)
    fault = expect(events, DeviceFault)
    assert fault.device == "shoe" and fault.code in SHOE_FAULTS
    if not bench.hands.person:
        assert fault.code == "jam"
    expect_quiet(events, 4 * bench.timing.response_timeout)  # not retransmitted after a FAULT: nothing is dealt
    assert last(driver, events) == ShoeLastDispense(before, earlier)
    bench.hands.end_shoe_fault()
    if bench.hands.person:  # the door a person opened may be said shut (DOOR_CLOSED), once at most
        assert door_closings(bench, events, 1.0) <= 1
    cards = deal(driver, events, txn, 5)
    assert not set(cards) & set(earlier)
    assert last(driver, events) == ShoeLastDispense(txn, cards)


@pytest.mark.destructive
def test_a_deck_deals_52_distinct_cards_then_reports_empty_and_a_shuffle_restores_it(bench):
    driver, events = ready_shoe(bench)
    seen: list[str] = []
    for _ in range(10):
        seen.extend(deal(driver, events, next(TXN), 5))
    txn = next(TXN)
    driver.dispense(txn, 5)  # two cards left
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == ("shoe", "empty")
    seen.extend(deal(driver, events, txn, 2))  # the same transaction, now one the shoe can carry out
    assert sorted(seen) == sorted(DECK)
    driver.shuffle()
    assert expect(events, ShuffleComplete) == ShuffleComplete(52)
    deal(driver, events, next(TXN), 5)


@pytest.mark.power_on
def test_a_shoe_just_powered_on_has_dealt_nothing_and_refuses_a_dispense_before_a_shuffle(bench):
    driver, events = ready_shoe(bench, shuffle=False)
    assert last(driver, events) == ShoeLastDispense(0, ())
    driver.dispense(next(TXN), 5)
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == ("shoe", "protocol")


@pytest.mark.destructive
@pytest.mark.person
@pytest.mark.parametrize("lost", [False, True], ids=["delivered", "first-lost"])
def test_an_open_door_deals_nothing_and_its_closing_is_said_once_at_most(bench, lost):
    """docs/protocol.md, "The door": a DISPENSE while the door is open is answered with FAULT door_open and
    deals nothing; when the door is shut the shoe may say so with DOOR_CLOSED, delivered once even when the
    first one is lost on the line (it is device-initiated: sent again until acknowledged); the host relies on
    nothing more (a shoe without it is still a shoe of the protocol); then the same transaction is dealt."""
    driver, events = ready_shoe(bench)
    before, txn = next(TXN), next(TXN)
    earlier = deal(driver, events, before, 2)
    bench.hands.open_shoe_door()
    driver.dispense(txn, 5)
    fault = expect(events, DeviceFault)
    assert (fault.device, fault.code) == ("shoe", "door_open")
    if bench.hardware:  # a real shoe may have said so as the door opened too, before the dispense
        while True:
            try:
                more = events.get(timeout=4 * bench.timing.response_timeout)
            except queue.Empty:
                break
            assert isinstance(more, DeviceFault) and (more.device, more.code) == ("shoe", "door_open"), more
    else:
        expect_quiet(events, 4 * bench.timing.response_timeout)
    if lost:
        bench.faults.lose_incoming(protocol.DOOR_CLOSED)
    bench.hands.close_shoe_door()
    closings = door_closings(bench, events, 1.0)
    if bench.hardware:
        assert closings <= 1
    else:
        assert closings == 1
        assert bench.faults.lost == ({protocol.DOOR_CLOSED: 1} if lost else {})
    assert last(driver, events) == ShoeLastDispense(before, earlier)  # nothing left the shoe meanwhile
    cards = deal(driver, events, txn, 5)
    assert not set(cards) & set(earlier)
    expect_quiet(events, 0.3)
