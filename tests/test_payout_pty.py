"""The payout check over real pseudo-terminals: the dealer pays on the simulated bet sensors and presses ``paid``
on the simulated panel; each kind of mispay is caught with its spot and difference, a correction is read
again, a supervisor accepts a difference, and a payout check cut by a restart resumes from the journal.

The round is played by hand with a stacked deck, so that the settlement is known from the pay table alone
(NY 9 NYCRR 5324.39(f)): the cross 9c 4h / 8d 5s / 2c; seat 1 holds 7c 7d, seat 6 holds Jh Js.
- seat 6 (antes 500, bets 1x = 500 each, five-card bonus 100): across and down hands are a pair of jacks:
  each ante, each bet and the middle bet win 1 to 1 ((f)(1), (f)(2), (e)(9)(ii)): every spot holds 1000 after
  the payout; the board 9 8 5 4 2 is no hand: the bonus loses ((f)(3)), its spot must be empty. Pay 2500.
- seat 1 (antes 500, bets 500 each, no bonus): a pair of 7s both ways: every wager pushes ((f)(1), (f)(2)),
  every spot holds 500.
Seats are paid from the dealer's right: seat 6 first (NY (e)(9), PA 674a.11(h)).
"""

from __future__ import annotations

import io
import threading
import time

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.journal.reader import read_records
from controller.service.assembly import Service
from tests.pty_helpers import WAIT

CROSS = ["9c", "4h", "8d", "5s", "2c"]
HANDS = {1: ["7c", "7d"], 6: ["Jh", "Js"]}
ANTE, BONUS = 500, 100
PAID = {6: {"five_card_bonus": 0, "ante_across": 1000, "ante_down": 1000, "across": 1000, "down": 1000,
            "middle": 1000},
        1: {"five_card_bonus": 0, "ante_across": 500, "ante_down": 500, "across": 500, "down": 500, "middle": 500}}
SEAT_6_SHOWN = "Seat 6 pay 2500: B take AA +500 AD +500 A +500 D +500 M +500"
SEAT_1_SHOWN = "Seat 1 pay 0: AA push AD push A push D push M push"


class StackedDeck:
    """Stands in for the shoe simulator's RNG: every shuffle leaves the deck in this order (the cross, then the
    seats' stacks in dealing order, then the rest)."""

    def shuffle(self, deck: list[str]) -> None:
        first = CROSS + HANDS[1] + HANDS[6]
        deck[:] = first + [card for card in deck if card not in first]


def wait_until(predicate, timeout: float = WAIT * 3) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class Table:
    """A service on simulated devices with nobody at the table but this test (the dealer and the supervisor)."""

    def __init__(self, journal) -> None:
        ports = {"shoe": "simulator", "sensors": "simulator", "panel": "simulator"}
        self.journal = journal
        self.service = Service(load_table_config(), ports=ports, journal_path=journal, out=io.StringIO(), quiet=True,
                               parts=SERVICE_PARTS)
        self.service.sims["shoe"]._rng = StackedDeck()
        self.panel, self.sensors = self.service.sims["panel"], self.service.sims["sensors"]
        self.runner = threading.Thread(target=self.service.run, name="controller")
        self.runner.start()

    def close(self) -> None:
        self.service.stop()
        self.runner.join(15)
        self.service.close()

    def press(self, button: str) -> None:
        """Press ``button`` once it is lit and the chips put down are reported (a call decides the wagers as the
        layout is when it is journaled, NY 9 NYCRR 5324.39(c)(3))."""
        assert self.panel.wait_for_lamp(button, WAIT * 3), f"{button} never lit: {sorted(self.panel.lamps)}"
        assert self.sensors.wait_for(lambda: self.sensors.awaiting_ack == 0, WAIT), "chips never reported"
        before = self.panel.messages
        self.panel.press(button)
        self.panel.wait_for(lambda: self.panel.messages != before, WAIT)

    def shown(self, text: str) -> None:
        assert self.panel.wait_for(lambda: self.panel.display == text, WAIT), self.panel.display

    def records(self, kind: str) -> list[dict]:
        return [r["data"] for r in read_records(self.journal) if r["type"] == kind]

    def play_to_payout(self) -> None:
        """Open, bet, deal, decide 1x at every decision, reveal: the round is settled and waits for seat 6."""
        self.press("open_betting")
        for seat in HANDS:
            self.sensors.place(seat, "ante_across", ANTE)
            self.sensors.place(seat, "ante_down", ANTE)
        self.sensors.place(6, "five_card_bonus", BONUS)
        self.press("no_more_bets")
        for step in ("across", "down", "middle"):
            assert self.panel.wait_for_lamp("confirm", WAIT * 3)
            for seat in HANDS:
                self.sensors.place(seat, step, ANTE)
            self.press("confirm")
            self.press("reveal")
        self.shown(SEAT_6_SHOWN)
        assert self.service.machine.state == "payout"

    def pay(self, seat: int, **changes: int) -> None:
        """Leave the seat's spots as the settlement says, but for ``changes`` (spot -> amount)."""
        for spot, amount in {**PAID[seat], **changes}.items():
            self.sensors.place(seat, spot, amount)


@pytest.fixture
def table(tmp_path):
    tables = [Table(tmp_path / "journal.db")]
    yield tables[0]
    tables[0].close()


MISPAYS = [
    # short: the across ante paid 400 instead of 500
    ("short", {"ante_across": 900}, "Seat 6 mispay: AA short 100", [("ante_across", 1000, 900, -100)]),
    # over: the down bet paid 600
    ("over", {"down": 1100}, "Seat 6 mispay: D over 100", [("down", 1000, 1100, 100)]),
    # the middle bet's payout stacked on the five-card bonus spot
    ("wrong_spot", {"middle": 500, "five_card_bonus": 500}, "Seat 6 mispay: B over 500 M short 500",
     [("five_card_bonus", 0, 500, 500), ("middle", 1000, 500, -500)]),
    # the losing five-card bonus left on the layout
    ("not_taken", {"five_card_bonus": 100}, "Seat 6 mispay: B over 100", [("five_card_bonus", 0, 100, 100)]),
]


@pytest.mark.parametrize("kind, wrong, text, found", MISPAYS, ids=[m[0] for m in MISPAYS])
def test_each_kind_of_mispay_is_shown_with_spot_and_difference_and_the_correction_is_read_again(table, kind, wrong,
                                                                                               text, found):
    table.play_to_payout()
    table.pay(6, **wrong)
    table.press("paid")
    table.shown(text)
    assert table.panel.wait_for_lamp("paid", WAIT) and table.service.machine.state == "payout"
    # the next round cannot open before every seat is paid and checked
    table.panel.press("open_betting")
    table.shown("Not now: open_betting")
    table.pay(6)  # the dealer puts it right
    table.press("paid")
    table.shown(SEAT_1_SHOWN)
    table.press("paid")  # seat 1: every wager pushed and stays where it is
    assert table.panel.wait_for_lamp("open_betting", WAIT)
    checks = table.records("PayoutChecked")
    assert [(c["seat"], [(d["spot"], d["expected"], d["seen"], d["difference"]) for d in c["differences"]])
            for c in checks] == [(6, found), (6, []), (1, [])]
    assert checks[0]["seen"] == {spot: amount for spot, amount in {**PAID[6], **wrong}.items() if amount}
    assert checks[1]["seen"] == checks[1]["expected"] == {s: a for s, a in PAID[6].items() if a}
    assert table.records("PressRefused")[-1]["button"] == "open_betting"
    assert len(table.records("RoundClosed")) == 1 and not table.records("MispayAccepted")


def test_a_supervisor_accepts_a_difference_and_the_mispay_is_journaled_with_amounts_and_who(table):
    table.play_to_payout()
    table.pay(6, ante_across=900, down=1100)
    table.press("paid")
    table.shown("Seat 6 mispay: AA short 100 D over 100")
    assert "accept_mispay" not in table.panel.lamps  # a supervisor's button: lit only with the key turned
    table.panel.press("accept_mispay")
    table.shown("accept_mispay: supervisor key needed")
    table.panel.turn_key(True, "SUP-9")
    table.press("accept_mispay")
    table.panel.turn_key(False, "SUP-9")
    table.shown(SEAT_1_SHOWN)
    table.press("paid")
    assert table.panel.wait_for_lamp("open_betting", WAIT)
    accepted = table.records("MispayAccepted")
    assert len(accepted) == 1
    entry = accepted[0]
    assert (entry["seat"], entry["short"], entry["over"], entry["by"], entry["role"]) == (6, 100, 100, "SUP-9",
                                                                                         "supervisor")
    assert entry["seen"]["ante_across"] == 900 and entry["expected"]["ante_across"] == 1000
    assert len(table.records("RoundClosed")) == 1


def test_a_payout_check_cut_by_a_restart_resumes_from_the_journal_where_it_stopped(tmp_path):
    first = Table(tmp_path / "journal.db")
    try:
        first.play_to_payout()
        first.pay(6)
        first.press("paid")
        first.shown(SEAT_1_SHOWN)
        first.pay(1, middle=0)  # seat 1's middle wager taken by mistake ...
    finally:
        first.close()  # ... when the service stops (the table keeps its chips)
    second = Table(tmp_path / "journal.db")
    try:
        assert second.panel.wait_for(lambda: second.panel.display.startswith("FAULT restart"), WAIT * 3)
        assert second.service.machine.phase == "payout"
        assert "void_round" not in second.service.machine.allowed_actions()  # settled: never voided
        second.pay(6)  # the chips as the table kept them (new simulators start empty): seat 6 paid,
        second.pay(1, middle=0)  # seat 1 with its mistake; every seat's chips are checked at each reading
        second.panel.turn_key(True, "SUP-9")
        second.press("clear_fault")
        second.panel.turn_key(False, "SUP-9")
        second.shown(SEAT_1_SHOWN)  # seat 6 stays checked: the journal says so
        second.press("paid")
        second.shown("Seat 1 mispay: M short 500")
        second.pay(1)
        second.press("paid")
        assert second.panel.wait_for_lamp("open_betting", WAIT)
        checks = second.records("PayoutChecked")
        assert [(c["seat"], bool(c["differences"])) for c in checks] == [(6, False), (1, True), (1, False)]
        assert len(second.records("RoundClosed")) == 1
        assert [f["cause"] for f in second.records("FaultRaised")] == ["restart"]
    finally:
        second.close()
