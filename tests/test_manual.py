"""Dealing by hand under the controller (NY 9 NYCRR 5324.39(d)(1); controller/round/manual.py): the mode switch, the
sequence of the deal, cards entered as they are turned, settlement, held seats, a shoe fault and the way back."""

from __future__ import annotations

import dataclasses
import json

import pytest

from controller.control.server import public_record
from controller.round import commands as cmd
from controller.round.inputs import OperatorAction
from controller.round.machine import Round
from controller.round.manual import check_entry, manual_plan
from drivers import events as ev
from tests.round_helpers import CONFIG, NY, TableDriver, antes, of_type, play_round, ready

MANUAL_CONFIG = dataclasses.replace(CONFIG, manual_dealing=True)

CROSS = ("Ah", "Kh", "Qd", "Jd", "2c")  # across Ah Kh, down Qd Jd, middle 2c
HANDS = {1: ("Ad", "As"), 3: ("7c", "8d"), 5: ("Qh", "Jh")}
WAGERS = {1: antes(500), 3: antes(500, bonus=100), 5: antes(1000)}
DECISIONS = {"across": {1: 500, 3: 0, 5: 1000}, "down": {1: 500, 5: 1000}, "middle": {1: 500, 5: 2000}}


def manual_table() -> TableDriver:
    driver = TableDriver(Round(MANUAL_CONFIG, NY))
    driver.start()
    return driver


def as_supervisor(driver: TableDriver, action: str, reason: str = "shoe jammed") -> list:
    return driver.send(OperatorAction(action, "maria", "supervisor", reason))


def enter(driver: TableDriver, seat: int, *cards: str) -> list:
    return driver.send(ev.CardsEntered(seat, tuple(cards)))


def refused(outputs: list) -> list[str]:
    return [o.reason for o in of_type(outputs, cmd.PressRefused)]


def deal_by_hand(driver: TableDriver, seats: list[int]) -> list[int | None]:
    """Confirm every step of the deal; return the seat of each step as the panel asked for it."""
    asked: list[int | None] = []
    for _ in range(1 + 2 * len(seats)):
        out = driver.press("confirm")
        asked += [p.seat for p in of_type(out, cmd.CardPlacedByHand)]
    return asked


STEPS = (("across", CROSS[:2]), ("down", CROSS[2:4]), ("middle", CROSS[4:]))


def dealt_by_hand(driver: TableDriver | None = None) -> TableDriver:
    """A table switched to dealing by hand with this module's round locked and dealt (the deal confirmed)."""
    if driver is None:
        driver = manual_table()
        as_supervisor(driver, "deal_by_hand")
    driver.press("open_betting")
    driver.lock(WAGERS)
    deal_by_hand(driver, sorted(WAGERS))
    return driver


def turn_community(driver: TableDriver, steps: int = 3) -> None:
    """The first ``steps`` decisions of this module's round, each reveal's cards entered and turned."""
    for step, cards in STEPS[:steps]:
        driver.decide(step, DECISIONS[step])
        enter(driver, 0, *cards)
        driver.press("reveal")


def play_manual(driver: TableDriver) -> None:
    """The round of this module dealt by hand, every card entered as it is turned."""
    dealt_by_hand(driver)
    turn_community(driver)
    for seat in sorted(HANDS, reverse=True):
        enter(driver, seat, *HANDS[seat])


# ---------------------------------------------------------------------- the switch
def test_switch_refused_when_the_table_does_not_allow_manual_dealing():
    driver = TableDriver(Round(CONFIG, NY))  # config/table.yaml as shipped: manual_dealing false
    driver.start()
    out = as_supervisor(driver, "deal_by_hand")
    assert refused(out) == ["this table does not deal by hand (manual_dealing: false in table.yaml)"]
    assert refused(as_supervisor(driver, "deal_by_shoe")) == ["the table deals from the shoe already"]
    assert driver.machine.dealing_mode == "automated"
    assert "deal_by_hand" not in driver.machine.allowed_actions()


def test_switch_needs_a_supervisor_and_is_journaled_with_who_and_why():
    driver = manual_table()
    out = driver.send(OperatorAction("deal_by_hand", "dan", "dealer", "tired of the shoe"))
    assert refused(out) and driver.machine.dealing_mode == "automated"
    out = as_supervisor(driver, "deal_by_hand", "shoe jam, technician called")
    assert of_type(out, cmd.DealingModeChanged) == [
        cmd.DealingModeChanged(None, "manual", "maria", "supervisor", "shoe jam, technician called")]
    assert driver.machine.view()["dealing_mode"] == "manual"
    # from the panel: the key's id is who
    driver.send(ev.SupervisorKey(True, "KEY-7"))
    assert "deal_by_shoe" in driver.machine.allowed_buttons()
    out = driver.press("deal_by_shoe")
    assert of_type(out, cmd.DealingModeChanged)[0].by == "KEY-7"
    assert driver.machine.dealing_mode == "automated"


def test_switch_only_between_rounds():
    driver = manual_table()
    driver.open_betting()
    out = as_supervisor(driver, "deal_by_hand")
    assert refused(out) == ["deal_by_hand not allowed in betting"]
    assert driver.machine.dealing_mode == "automated"


# ---------------------------------------------------------------------- the deal of (d)(1)
def test_manual_plan_is_the_cross_then_one_card_each_clockwise_twice():
    # NY (d)(1): cross first, then one card at a time from the dealer's left (seat 1 side), clockwise
    assert manual_plan([5, 1, 3]) == [None, 1, 3, 5, 1, 3, 5]


def test_manual_round_sequence_no_shoe_command_and_prompts():
    driver = manual_table()
    as_supervisor(driver, "deal_by_hand")
    out = driver.press("open_betting")
    assert of_type(out, cmd.ManualRound) == [cmd.ManualRound(1)]
    assert not of_type(out, cmd.Shuffle)
    out = driver.lock(WAGERS)
    assert driver.state == "dealing_cross" and not of_type(out, cmd.Dispense)
    assert driver.machine.prompt() == "Deal 5 cards in a cross, face down; confirm"
    assert driver.machine.round_actions() == ("confirm", "void_round")
    asked = deal_by_hand(driver, [1, 3, 5])
    assert asked == [None, 1, 3, 5, 1, 3, 5]
    assert driver.state == "across_decision"
    assert not any(isinstance(o, (cmd.Dispense, cmd.Shuffle)) for o in driver.outputs)


def test_manual_round_settles_as_the_automated_round_with_the_same_cards():
    auto = play_round(WAGERS, CROSS, HANDS, DECISIONS)
    driver = manual_table()
    as_supervisor(driver, "deal_by_hand")
    play_manual(driver)
    assert driver.state == "closed"
    settled = [(s.seat, s.settlement) for s in of_type(driver.outputs, cmd.SeatSettled)]
    assert settled == [(s.seat, s.settlement) for s in of_type(auto.outputs, cmd.SeatSettled)]
    assert of_type(driver.outputs, cmd.RoundClosed)[0].totals == of_type(auto.outputs, cmd.RoundClosed)[0].totals
    # seat 5 (Qh Jh): across Qh Jh + Ah Kh 2c is ace high, below a pair of 6s: the ante across loses (NY (e)(9))
    seat5 = next(s.settlement for s in of_type(driver.outputs, cmd.SeatSettled) if s.seat == 5)
    assert seat5["wagers"]["ante_across"]["outcome"] == "lose"
    # the journal names every entry and who made it (the dealer at the panel)
    recorded = of_type(driver.outputs, cmd.CardsRecorded)
    assert [(r.target, r.cards, r.role, r.source) for r in recorded] == [
        ("across", CROSS[:2], "dealer", "panel"), ("down", CROSS[2:4], "dealer", "panel"),
        ("middle", CROSS[4:], "dealer", "panel"), ("seat 5", HANDS[5], "dealer", "panel"),
        ("seat 3", HANDS[3], "dealer", "panel"), ("seat 1", HANDS[1], "dealer", "panel")]


def test_reveal_waits_for_the_entry_and_a_new_entry_replaces_the_held_one():
    driver = dealt_by_hand()
    driver.decide("across", DECISIONS["across"])
    assert driver.state == "across_reveal"
    assert driver.machine.round_actions() == ("void_round",)
    assert refused(driver.press("reveal")) == ["reveal not allowed in across_reveal"]
    enter(driver, 0, "Ah", "Ks")  # a slip: corrected before the reveal
    view = json.dumps(driver.machine.view())
    assert "Ks" not in view and "Ah" not in view  # entered, not yet turned on the record: not public
    enter(driver, 0, *CROSS[:2])
    out = driver.press("reveal")
    assert of_type(out, cmd.CardsRevealed) == [cmd.CardsRevealed(1, "across", CROSS[:2])]
    assert driver.machine.view()["community"] == list(CROSS[:2])


@pytest.mark.parametrize("seat, cards, why", [
    (0, ("Ah",), "1 cards entered, 2 expected"),
    (0, ("Ah", "Kh", "Qd"), "3 cards entered, 2 expected"),
    (0, ("Ah", "1h"), "card 2 is not a card of the deck"),
    (0, ("ah", "Kh"), "card 1 is not a card of the deck"),
    (0, ("Ah", "Ah"), "a card is entered twice"),
    (3, ("Ah", "Kh"), "the across community cards are awaited"),
])
def test_bad_entries_at_a_reveal_are_refused_and_held_for_correction(seat, cards, why):
    driver = dealt_by_hand()
    driver.decide("across", DECISIONS["across"])
    out = enter(driver, seat, *cards)
    assert refused(out) == [why]
    assert not of_type(out, cmd.CardsRecorded)
    assert driver.state == "across_reveal" and driver.machine.round_actions() == ("void_round",)
    enter(driver, 0, *CROSS[:2])  # the correction is taken
    assert driver.machine.round_actions() == ("reveal", "void_round")


def test_seat_entries_in_settlement_order_and_no_card_twice():
    driver = dealt_by_hand()
    turn_community(driver)
    assert driver.state == "settlement"
    assert driver.machine.prompt() == "Turn seat 5: enter its 2 cards"
    assert refused(enter(driver, 1, *HANDS[1])) == ["seat 5 is next (from the dealer's right)"]
    assert refused(enter(driver, 5, "Qh", "2c")) == ["card 2 was already entered this round"]
    assert refused(enter(driver, 0, "Qh", "Jh")) == ["seat 5 is next (from the dealer's right)"]
    enter(driver, 5, *HANDS[5])
    assert refused(enter(driver, 3, "Qh", "9s")) == ["card 1 was already entered this round"]
    assert not of_type(driver.outputs, cmd.SeatSettled)  # nothing settles before every card is known
    enter(driver, 3, *HANDS[3])
    enter(driver, 1, *HANDS[1])
    assert driver.state == "closed"
    assert [s.seat for s in of_type(driver.outputs, cmd.SeatSettled)] == [5, 3, 1]


def test_a_seat_never_entered_is_held_by_a_supervisor_only():
    driver = dealt_by_hand()
    turn_community(driver)
    enter(driver, 5, *HANDS[5])
    out = driver.press("hold_seat")  # the dealer alone may not
    assert refused(out) == ["hold_seat needs a supervisor"]
    out = as_supervisor(driver, "hold_seat", "seat 3 cards mixed with the discards")
    assert of_type(out, cmd.SeatHeld) == [cmd.SeatHeld(1, 3, dict(WAGERS[3]), "maria", "supervisor",
                                                       "seat 3 cards mixed with the discards")]
    enter(driver, 1, *HANDS[1])
    assert driver.state == "closed"
    assert [s.seat for s in of_type(driver.outputs, cmd.SeatSettled)] == [5, 1]
    wagered = sum(sum(WAGERS[s].values()) + sum(DECISIONS[d].get(s, 0) for d in DECISIONS) for s in (1, 5))
    assert of_type(driver.outputs, cmd.RoundClosed)[0].totals["wagered"] == wagered


def test_every_seat_folds_the_cards_never_turned_are_entered_before_settling():
    driver = manual_table()
    as_supervisor(driver, "deal_by_hand")
    driver.press("open_betting")
    driver.lock({1: antes(500), 5: antes(500)})
    deal_by_hand(driver, [1, 5])
    driver.decide("across", {1: 0, 5: 0})
    assert driver.state == "settlement"
    assert driver.machine.prompt() == "Enter the 5 community card(s) never turned"
    assert refused(enter(driver, 0, *CROSS[:2])) == ["2 cards entered, 5 expected"]
    enter(driver, 0, *CROSS)
    enter(driver, 5, *HANDS[5])
    enter(driver, 1, *HANDS[1])
    assert driver.state == "closed"
    assert not of_type(driver.outputs, cmd.CardsRevealed)  # never turned on the table
    totals = of_type(driver.outputs, cmd.RoundClosed)[0].totals
    assert totals["collected"] == 2000 and totals["paid"] == 0  # every ante forfeited (NY (e)(3))


def test_a_fault_at_settlement_is_cleared_and_the_cards_awaited_are_asked_again():
    """A round dealt by hand waits at settlement for its seats' cards; a fault there (a restart, a device lost)
    cannot void it (its reveals are done: NY (e)(9) settles it) and must be cleared: the settlement resumes and
    the panel asks again for the seat awaited, its text the dealer's only cue. Clearing it used to be a defect
    of the controller (no way back to settlement), holding the table in fault for good."""
    driver = dealt_by_hand()
    turn_community(driver)
    enter(driver, 5, *HANDS[5])
    out = driver.send(ev.DeviceFault("sensors", "link_lost", "cable pulled"))
    assert driver.state == "fault" and of_type(out, cmd.FaultRaised)[0].resumable
    driver.send(ready("sensors"))
    assert "void_round" not in driver.machine.allowed_actions()
    out = as_supervisor(driver, "clear_fault")
    assert driver.state == "settlement" and of_type(out, cmd.FaultCleared)[0].resumed == "settlement"
    assert driver.machine.prompt() == "Seat 3 folded: enter its 2 cards face down"  # it folded at the across
    driver.answer_read()  # the spots read again after the fault: nothing moved
    enter(driver, 3, *HANDS[3])
    enter(driver, 1, *HANDS[1])
    assert driver.state == "closed"
    assert [s.seat for s in of_type(driver.outputs, cmd.SeatSettled)] == [5, 3, 1]


@pytest.mark.parametrize("entered", [False, True])
def test_a_fault_cleared_at_a_reveal_asks_again_for_its_cards(entered):
    """A fault cleared while a reveal of a round dealt by hand waits: the panel asks again for the step's cards,
    or for ``reveal`` when they were entered before the fault (no lamp asks for cards)."""
    driver = dealt_by_hand()
    turn_community(driver, 1)
    driver.decide("down", DECISIONS["down"])
    if entered:
        enter(driver, 0, *CROSS[2:4])
    driver.send(ev.DeviceFault("sensors", "link_lost", "cable pulled"))
    driver.send(ready("sensors"))
    as_supervisor(driver, "clear_fault")
    assert driver.state == "down_reveal"
    assert driver.machine.prompt() == ("down: 2 card(s) entered; press reveal" if entered else "Turn the down cards")


def test_cards_entered_in_an_automated_round_are_refused():
    driver = manual_table()
    driver.open_betting()
    out = enter(driver, 0, "Ah", "Kh")
    assert refused(out) == ["no cards are awaited in betting"]


# ---------------------------------------------------------------------- the shoe down and back
def test_shoe_fault_switch_to_manual_rounds_and_back_after_the_shuffle_check():
    driver = manual_table()
    driver.open_betting()
    driver.lock(WAGERS)
    driver.send(ev.DeviceFault("shoe", "jam", "stack 0 jammed"))
    assert driver.state == "fault"
    assert "deal_by_hand" not in driver.machine.allowed_actions()  # not with a round open
    assert refused(as_supervisor(driver, "deal_by_hand")) == ["a round is open: the dealing is switched between rounds"]
    driver.send(OperatorAction("void_round", "maria", "supervisor", "shoe jam", "device"))
    assert driver.state == "voided"
    driver.send(ev.DeviceFault("shoe", "link_lost", "shoe taken away for repair"))
    assert driver.state == "fault" and driver.machine.phase == "voided"
    assert driver.machine.round_actions() == ("deal_by_hand",)  # the shoe is not back: no clear
    as_supervisor(driver, "deal_by_hand", "shoe away for repair")
    assert "clear_fault" in driver.machine.allowed_actions()  # the shoe is no longer needed
    as_supervisor(driver, "clear_fault")
    assert driver.state == "voided"
    play_manual(driver)
    assert driver.state == "closed"
    out = driver.send(ev.DeviceFault("shoe", "link_lost", "still away"))
    assert driver.state == "closed" and of_type(out, cmd.Irregularity)[0].kind == "shoe_fault_dealing_by_hand"
    assert refused(as_supervisor(driver, "deal_by_shoe")) == ["waiting for the shoe to be ready"]
    assert refused(as_supervisor(driver, "deal_by_hand")) == ["the table deals by hand already"]
    out = driver.send(ev.DeviceReady("shoe", "SHOE-0042", "2.1", 1))
    out += driver.send(ev.ShoeLastDispense(1 * 16, ()))  # the shoe's last transaction: round 1's cross
    assert "deal_by_shoe" in driver.machine.allowed_actions()
    as_supervisor(driver, "deal_by_shoe", "shoe repaired")
    out = driver.press("open_betting")
    assert of_type(out, cmd.Shuffle) == [cmd.Shuffle()] and not of_type(out, cmd.ManualRound)
    out = driver.send(ev.ShuffleComplete(51))  # the shuffle check: 52 cards or the round faults
    assert of_type(out, cmd.FaultRaised)[0].cause == "card_count"


def test_checkpoint_mid_manual_round_restores_a_machine_that_answers_alike():
    driver = dealt_by_hand()
    turn_community(driver, 2)
    driver.decide("middle", DECISIONS["middle"])
    enter(driver, 0, *CROSS[4:])  # held, not yet turned
    saved = json.loads(json.dumps(driver.machine.checkpoint()))
    twin = TableDriver(Round(MANUAL_CONFIG, NY))
    twin.machine.restore(saved)
    twin.layout = {s: dict(w) for s, w in driver.layout.items()}
    assert twin.machine.checkpoint() == saved
    for table in (driver, twin):
        table.press("reveal")
        enter(table, 5, *HANDS[5])
        enter(table, 3, *HANDS[3])
    assert driver.last == twin.last


# ---------------------------------------------------------------------- secrecy
def test_entered_cards_stay_in_the_journal_until_turned():
    for record_type, data in (("CardsRecorded", {"round_no": 1, "target": "seat 3", "cards": ["7c", "8d"]}),
                              ("CardsEntered", {"seat": 3, "cards": ["7c", "8d"], "device": "panel"})):
        assert public_record({"seq": 1, "time": 0, "kind": "record", "round": 1, "type": record_type,
                              "data": data}) is None
    for record_type in ("DealingModeChanged", "ManualRound", "CardPlacedByHand", "SeatHeld"):
        public = public_record({"seq": 1, "time": 0, "kind": "record", "round": 1, "type": record_type,
                                "data": {"round_no": 1, "reason": "seat 3 Kd exposed"}})
        assert public is not None and public["data"]["round_no"] == 1
        if record_type in ("DealingModeChanged", "SeatHeld"):  # a supervisor's free text stays in the journal
            assert "reason" not in public["data"]


def test_panel_never_names_a_card_before_it_is_turned():
    driver = manual_table()
    as_supervisor(driver, "deal_by_hand")
    play_manual(driver)
    shown = [o.text for o in of_type(driver.outputs, cmd.Display)]
    refusals = [o.reason for o in of_type(driver.outputs, cmd.PressRefused)]
    for seat, cards in HANDS.items():
        assert not any(card in text for card in cards for text in shown + refusals)


def test_check_entry_names_positions_not_cards():
    assert check_entry(("Ah", "Zz"), 2, set()) == "card 2 is not a card of the deck"
    assert check_entry(("Ah", "Kd"), 2, {"Kd"}) == "card 2 was already entered this round"
    assert check_entry(("Ah", "Kd"), 2, set()) == ""


# ---------------------------------------------------------------------- recall
def test_recall_shows_a_round_dealt_by_hand_and_who_entered_each_card():
    from controller.journal.recall import recall_last
    driver = manual_table()
    driver.send(ev.SupervisorKey(True, "KEY-7"))
    driver.press("deal_by_hand")
    driver.send(ev.SupervisorKey(False, "KEY-7"))
    play_manual(driver)
    records = [{"round": getattr(o, "round_no", None), "kind": "record", "time": "", "type": type(o).__name__,
                "data": cmd.to_record(o)} for o in driver.outputs if not isinstance(o, cmd.DEVICE_COMMANDS)]
    text = recall_last([(1, [r for r in records if r["round"] == 1])])
    lines = text.splitlines()
    assert lines[0] == "Round 1 (closed, dealt by hand)"
    assert "the cross dealt by hand (dealer)" in [line.strip() for line in lines]
    assert any(line.endswith("seat 5 cards entered by dealer (dealer, panel): Qh Jh") for line in lines)
    assert any(line.endswith("middle revealed: 2c") for line in lines)
    switched = [r for r in records if r["type"] == "DealingModeChanged"]
    assert switched[0]["round"] is None and switched[0]["data"]["by"] == "KEY-7"


# ---------------------------------------------------------------------- table.yaml
def _table_file(tmp_path, **changes: str):
    from pathlib import Path
    shipped = (Path(__file__).parent.parent / "config" / "table.yaml").read_text(encoding="utf-8")
    text = shipped.replace("jurisdiction: ny ", f"jurisdiction: {Path(__file__).parent.parent}/config/jurisdictions/ny.yaml ")
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "table.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_table_yaml_allows_manual_dealing_and_an_optional_reader(tmp_path):
    from controller.game.table import load_table_config
    assert load_table_config().manual_dealing is False  # as shipped: the automated shoe only
    path = _table_file(tmp_path, **{"manual_dealing: false": "manual_dealing: true",
                                    "  panel:   {driver: panel, port: simulator}":
                                    "  panel:   {driver: panel, port: simulator}\n  reader: {driver: reader, port: simulator}"})
    config = load_table_config(path)
    assert config.manual_dealing is True and config.devices["reader"].driver == "reader"


@pytest.mark.parametrize("old, new, message", [
    ("manual_dealing: false", "manual_dealing: yes please", "manual_dealing: expected true or false"),
    ("manual_dealing: false", "manual_dealing: 1", "manual_dealing: expected true or false"),
    ("  panel:   {driver: panel, port: simulator}",
     "  panel:   {driver: panel, port: simulator}\n  reader: {driver: panel, port: simulator}",
     "devices.reader.driver: the reader needs the reader driver"),
])
def test_table_yaml_refuses_a_bad_manual_dealing_or_reader(tmp_path, old, new, message):
    from controller.settings.files import ConfigError
    from controller.game.table import load_table_config
    with pytest.raises(ConfigError, match=message):
        load_table_config(_table_file(tmp_path, **{old: new}))
