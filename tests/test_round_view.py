"""The round's view as a screen uses it (controller/round/view.py, controller/round/actions.py; docs/control.md
"The dealer's screen"): each action's role and label from the controller's one rule of roles, the chips on the
felt while betting is open, and why the step the round waits for is not allowed yet, in the same words as the
refusal the round records."""

from __future__ import annotations

import dataclasses

from controller.round import commands as cmd
from controller.round.actions import WORDS, action_role
from controller.round.inputs import ACTIONS, OperatorAction
from controller.round.machine import Round
from drivers import events as ev
from tests.round_helpers import CONFIG, NY, TableDriver, antes, of_type, ready


def _entries(driver: TableDriver) -> dict[str, dict]:
    return {entry["action"]: entry for entry in driver.machine.view()["actions"]}


def test_roles_follow_the_regulation_s_split_between_dealer_and_supervisor():
    """domain.md "Roles": voiding a round or clearing a fault needs a supervisor; NY 9 NYCRR 5324.39(d)(1)
    manual dealing is switched by a supervisor (docs/control.md); the dealer runs the round's steps."""
    for action in ("void_round", "clear_fault", "acknowledge", "accept_mispay", "deal_by_hand", "deal_by_shoe",
                   "hold_seat", "disable_table", "enable_table", "enter_test_mode", "leave_test_mode"):
        assert WORDS["actions"][action]["role"] == "supervisor", action
    for action in ("open_betting", "no_more_bets", "confirm", "reveal", "paid"):
        assert WORDS["actions"][action]["role"] == "dealer", action
    assert set(WORDS["actions"]) == set(ACTIONS)
    for action, words in WORDS["actions"].items():  # in words: no field name shown as it is spelled in code
        assert "_" not in words["label"] and words["label"][0].isupper(), (action, words)


def test_a_manual_dealing_table_offers_its_mode_switch_as_a_supervisor_s_action():
    """The issue's case: on a table that may deal by hand (NY (d)(1)) ``deal_by_hand`` is allowed between rounds;
    the view gives it its label and the supervisor's role, and a dealer's login is refused it."""
    driver = TableDriver(Round(dataclasses.replace(CONFIG, manual_dealing=True), NY))
    driver.start()
    entry = _entries(driver)["deal_by_hand"]
    assert entry == {"action": "deal_by_hand", "label": "Deal by hand", "role": "supervisor", "reason": None}
    out = driver.send(OperatorAction("deal_by_hand", "dan", "dealer"))
    assert [r.reason for r in of_type(out, cmd.PressRefused)] == [
        "deal_by_hand needs a supervisor; user dan has the role dealer"]
    assert action_role("deal_by_hand") == "supervisor"


def test_chips_on_the_spots_show_while_betting_is_open_and_the_locked_wagers_after():
    """Wagers on the felt are public (NY (c)(3): what is placed before "no more bets"); the view carries them per
    seat and spot as the sensors report them, unlocked, then the wagers of record once locked."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    assert driver.machine.view()["seats"] == {}
    driver.move_chips(4, "ante_across", 500)
    seats = driver.machine.view()["seats"]
    assert seats == {"4": {"wagers": {"ante_across": 500}, "folded_at": None, "dealt": False, "locked": False}}
    driver.move_chips(4, "ante_down", 500)
    driver.move_chips(2, "five_card_bonus", 100)
    driver.move_chips(2, "ante_down", 1000)
    driver.move_chips(2, "ante_across", 1000)
    seats = driver.machine.view()["seats"]
    assert list(seats) == ["2", "4"]
    assert list(seats["2"]["wagers"].items()) == [("five_card_bonus", 100), ("ante_across", 1000),
                                                  ("ante_down", 1000)]  # the spots nearest the dealer first
    driver.move_chips(4, "ante_down", 0)  # taken back before "no more bets"
    assert driver.machine.view()["seats"]["4"]["wagers"] == {"ante_across": 500}
    driver.move_chips(4, "ante_down", 500)
    driver.lock()
    seats = driver.machine.view()["seats"]
    assert {seat: (s["wagers"], s["locked"]) for seat, s in seats.items()} == {
        "2": ({**antes(1000, 100)}, True), "4": (antes(500), True)}


def test_the_step_waited_for_carries_the_reason_the_round_records_when_it_is_pressed():
    """Before the shoe's 52-card count (domain.md, card accounting) and the layout's reading, "no more bets" is not
    allowed: the view says why, and a press is refused with the same words (one place for them)."""
    driver = TableDriver()
    driver.start()
    driver.press("open_betting")
    waiting = _entries(driver)["no_more_bets"]
    assert waiting["reason"] == "waiting for the shoe's shuffle and card count" and waiting["role"] == "dealer"
    out = driver.press("no_more_bets")
    assert [r.reason for r in of_type(out, cmd.PressRefused)] == [waiting["reason"]]
    driver.send(ev.ShuffleComplete(52))
    assert _entries(driver)["no_more_bets"]["reason"] == "waiting for the bet sensors' reading of the layout"
    driver.answer_read()
    assert _entries(driver)["no_more_bets"]["reason"] is None


def test_a_disabled_table_says_why_the_round_does_not_open():
    """NY 9 NYCRR 5319.54(b): no round opens on a disabled table; the view says so beside ``open_betting``."""
    driver = TableDriver()
    driver.start()
    driver.send(OperatorAction("disable_table", "sue", "supervisor", code="maintenance"))
    entries = _entries(driver)
    assert "maintenance" in entries["open_betting"]["reason"]
    assert entries["enable_table"] == {"action": "enable_table", "label": "Enable table", "role": "supervisor",
                                       "reason": None}
    out = driver.press("open_betting")
    assert [r.reason for r in of_type(out, cmd.PressRefused)] == [entries["open_betting"]["reason"]]


def test_a_fault_that_waits_for_a_device_says_which():
    """A fault is cleared only once every device it needs answers again (docs/architecture.md, faults): the view
    names the device beside ``clear_fault``."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.send(ev.DeviceFault("sensors", "link_lost", "no answer"))
    assert driver.state == "fault"
    assert _entries(driver)["clear_fault"]["reason"] == "waiting for the devices: sensors"


def test_the_lamps_of_a_panel_whose_link_is_lost_are_not_shown_lit():
    """``lamps`` kept the buttons last lit while the panel's link was lost: a screen showed ``open_betting`` lit on
    a panel that was unplugged, and ``devices_ready`` alone said it was gone. The panel's lamps are not known
    while it is away (it is lit anew when it is back, ``ShoeDealing._on_DeviceReady``): none is shown lit."""
    driver = TableDriver(Round(CONFIG, NY))
    driver.start()
    assert "open_betting" in driver.machine.view()["lamps"]
    driver.send(ev.DeviceFault("panel", "link_lost", "unplugged"))
    view = driver.machine.view()
    assert "panel" not in view["devices_ready"] and view["lamps"] == []
    out = driver.send(ready("panel"))
    (lit,) = of_type(out, cmd.SetLamps)
    assert driver.machine.view()["lamps"] == list(lit.buttons) == list(driver.machine.allowed_buttons())
