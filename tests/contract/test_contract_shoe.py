"""What the host may rely on from a shoe (docs/protocol.md, "Shoe", "Exactly-once dispensing", "What did you
last do"), asserted only through ``ShoeDriver`` (tests/contract/bench.py).

A deck is 52 distinct cards (rank ``23456789TJQKA`` + suit ``cdhs``); each transaction id is dealt at most
once, however often it is asked for; a lost answer or request costs a repeat, never a second stack.
"""

from __future__ import annotations

import itertools

import pytest

from drivers.events import SHOE_FAULTS, DeviceFault, DeviceReady, ShoeLastDispense, ShuffleComplete, StackDispensed
from drivers.shoe import protocol
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
