"""The payout check: what each spot must hold (controller.game.payout), its table setting, and the round machine's
payout phase (controller.round.machine) driven input by input.

Expected amounts come from the NY pay tables (9 NYCRR 5324.39(f)) applied by hand to the hands below; the order
of the seats from the settlement order of NY (e)(9) and PA 58 Pa. Code 674a.11(h) (from the dealer's right).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from controller.game.payout import PayoutConfig, differences, instruction_text, mispay_text, plan_seat, short_and_over
from controller.game.table import load_table_config
from controller.round import commands as cmd
from controller.round.inputs import OperatorAction
from controller.round.machine import Round
from controller.settings.files import ConfigError
from drivers import events as ev
from tests.round_helpers import CONFIG, NY, TableDriver, antes, of_type

OperatorAccept = OperatorAction("accept_mispay", "sue", "supervisor", reason="player agreed")
CHECKED = dataclasses.replace(CONFIG, payout=PayoutConfig(check=True))
BESIDE = dataclasses.replace(CONFIG, payout=PayoutConfig(check=True, winning_spot="payout"))

# the cross 9c 4h / 8d 5s / 2c. Seat 1 (7c 7d): a pair of 7s both ways, every wager pushes (NY (f)(1),(f)(2)).
# Seat 6 (Jh Js): a pair of jacks both ways, antes and bets win 1 to 1; the board 9 8 5 4 2 is no hand: the
# five-card bonus loses (NY (f)(3)).
CROSS = ("9c", "4h", "8d", "5s", "2c")
HANDS = {1: ("7c", "7d"), 6: ("Jh", "Js")}
WAGERS = {1: antes(500), 6: antes(500, bonus=100)}
SEAT_6 = {"ante_across": 1000, "ante_down": 1000, "across": 1000, "down": 1000, "middle": 1000}
SEAT_1 = {"ante_across": 500, "ante_down": 500, "across": 500, "down": 500, "middle": 500}


def to_payout(config=CHECKED) -> TableDriver:
    """A round played to its settlement (every seat 1x at each decision) at a table that checks payouts."""
    driver = TableDriver(Round(config, NY))
    driver.start()
    driver.open_betting()
    driver.lock(WAGERS)
    driver.deal(CROSS, HANDS)
    for step in ("across", "down", "middle"):
        driver.decide(step, {1: 500, 6: 500})
        driver.reveal()
    return driver


def paid(driver: TableDriver, seat: int, spots: dict[str, int]) -> list:
    driver.layout[seat] = dict(spots)
    out = driver.press("paid")
    return out + driver.answer_read()


# ---------------------------------------------------------------------------------------------- controller.game.payout
def test_the_plan_of_a_seat_takes_losers_leaves_pushes_and_pays_winners():
    wagers = {"ante_across": {"amount": 500, "outcome": "win", "net": 500},
              "middle": {"amount": 1500, "outcome": "win", "net": 4500},
              "ante_down": {"amount": 500, "outcome": "push", "net": 0},
              "five_card_bonus": {"amount": 100, "outcome": "lose", "net": -100}}
    plan = plan_seat(wagers, "wager_and_payout")
    assert {s: (p["action"], p["expected"]) for s, p in plan.items()} == {
        "five_card_bonus": ("take", 0), "ante_across": ("pay", 1000), "ante_down": ("push", 500),
        "across": ("none", 0), "down": ("none", 0), "middle": ("pay", 6000)}
    beside = plan_seat(wagers, "payout")
    assert beside["middle"]["expected"] == 4500 and beside["ante_down"]["expected"] == 500
    assert instruction_text(3, plan) == "Seat 3 pay 5000: B take AA +500 AD push M +4500"
    found = differences(plan, {"ante_across": 1000, "ante_down": 500, "middle": 5500, "down": 200})
    assert [(d["spot"], d["difference"]) for d in found] == [("down", 200), ("middle", -500)]
    assert short_and_over(found) == (500, 200)
    assert mispay_text(3, found) == "Seat 3 mispay: D over 200 M short 500"
    with pytest.raises(ValueError, match="winning_spot"):
        plan_seat(wagers, "beside")


def test_the_shipped_table_checks_payouts_and_a_bad_setting_is_refused_with_its_line(tmp_path):
    assert load_table_config().payout == PayoutConfig(check=True, winning_spot="wager_and_payout")
    text = (load_table_config().source.read_text().replace("winning_spot: wager_and_payout", "winning_spot: side"))
    path = tmp_path / "table.yaml"
    path.write_text(text)
    (tmp_path / "jurisdictions").symlink_to(load_table_config().source.parent / "jurisdictions")
    with pytest.raises(ConfigError, match=r"line \d+: payout.winning_spot: expected one of wager_and_payout, payout"):
        load_table_config(path)


@pytest.mark.parametrize("section, below, says", [
    ("payout:\n", 0, "payout: empty: give check: true (or false) and winning_spot"),
    ("payout: {}\n", 0, "payout: missing key(s) check"),
    ("payout:\n  winning_spot: payout\n", 1, "payout: missing key(s) check"),  # named at the section's first key
])
def test_a_payout_section_without_check_is_refused_not_quietly_off(tmp_path, section, below, says):
    """A section that names how the house pays but not whether the check is on must not leave it off unseen."""
    import re

    shipped = load_table_config().source.read_text()
    text = re.sub(r"(?m)^payout:\n(  .*\n)+", "", shipped) + section
    path = tmp_path / "table.yaml"
    path.write_text(text)
    (tmp_path / "jurisdictions").symlink_to(load_table_config().source.parent / "jurisdictions")
    line = text.splitlines().index(section.splitlines()[0]) + 1 + below
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line {line}: {says}")):
        load_table_config(path)


# ---------------------------------------------------------------------------------------------- the round machine
def test_without_the_check_the_round_closes_at_its_settlement():
    driver = to_payout(CONFIG)
    assert driver.state == "closed" and of_type(driver.outputs, cmd.RoundClosed)


def test_seats_are_paid_from_the_dealers_right_and_the_round_closes_only_when_all_are_checked():
    driver = to_payout()
    assert driver.state == "payout" and not of_type(driver.outputs, cmd.RoundClosed)
    assert [s.seat for s in of_type(driver.outputs, cmd.SeatSettled)] == [6, 1]
    assert driver.machine.round_actions() == ("paid",)  # no void: the round is settled; no next round yet
    assert driver.machine.view()["payout"]["seat"] == 6
    assert driver.machine.view()["payout"]["seats"]["6"]["total"] == 2500
    out = paid(driver, 6, SEAT_6)
    assert of_type(out, cmd.PayoutChecked)[0].differences == () and driver.state == "payout"
    out = paid(driver, 1, SEAT_1)
    assert driver.state == "closed"
    assert [type(o).__name__ for o in out if isinstance(o, (cmd.PayoutChecked, cmd.RoundClosed))] == [
        "PayoutChecked", "RoundClosed"]
    assert "open_betting" in driver.machine.allowed_actions()


def test_the_payout_beside_the_wager_is_read_alone_on_the_winning_spot():
    driver = to_payout(BESIDE)
    out = paid(driver, 6, {spot: 500 for spot in SEAT_6})
    assert of_type(out, cmd.PayoutChecked)[0].differences == ()


def test_chips_moved_while_paying_are_not_past_posting():
    driver = to_payout()
    out = driver.move_chips(6, "ante_across", 1000)
    assert not of_type(out, cmd.Irregularity)


def test_a_supervisor_alone_accepts_a_difference_and_only_after_a_reading_showed_one():
    driver = to_payout()
    assert "accept_mispay" not in driver.machine.allowed_actions()
    out = paid(driver, 6, {**SEAT_6, "middle": 900})
    assert driver.machine.round_actions() == ("paid", "accept_mispay")
    assert "accept_mispay" not in driver.machine.allowed_buttons()  # the key is off
    refused = driver.press("accept_mispay")
    assert of_type(refused, cmd.PressRefused)[0].reason == "accept_mispay needs a supervisor"
    driver.send(ev.SupervisorKey(True, "SUP-1"))
    out = driver.press("accept_mispay")
    accepted = of_type(out, cmd.MispayAccepted)[0]
    assert (accepted.seat, accepted.short, accepted.over, accepted.by) == (6, 100, 0, "SUP-1")
    assert driver.machine.view()["payout"]["seat"] == 1


def test_a_fault_while_reading_a_paid_seat_resumes_reading_it_and_never_voids(tmp_path):
    driver = to_payout()
    driver.layout[6] = dict(SEAT_6)
    driver.press("paid")
    out = driver.send(ev.DeviceFault("sensors", "link_lost", "unplugged"))
    fault = of_type(out, cmd.FaultRaised)[0]
    assert fault.resumable and driver.machine.phase == "payout_reading"
    assert "void_round" not in driver.machine.allowed_actions()
    driver.send(ev.DeviceReady("sensors", "sensors-test", "1.0", 1))
    driver.send(ev.SupervisorKey(True, "SUP-1"))
    out = driver.press("clear_fault")
    assert of_type(out, cmd.ReadSpots) and driver.state == "payout_reading"
    out = driver.answer_read()
    assert of_type(out, cmd.PayoutChecked)[0].seat == 6 and driver.state == "payout"


def test_a_checkpoint_in_the_middle_of_the_payout_restores_the_same_machine():
    driver = to_payout()
    paid(driver, 6, {**SEAT_6, "across": 0})
    saved = json.loads(json.dumps(driver.machine.checkpoint()))
    again = Round(CHECKED, NY)
    again.restore(saved)
    assert again.checkpoint() == saved
    assert again.view()["payout"] == driver.machine.view()["payout"]
    assert again.prompt() == "Seat 6 mispay: A short 1000"


# ---------------------------------------------------------------------------------------------- records
def _records(outputs) -> list[dict]:
    return [{"type": type(o).__name__, "kind": "record", "round": 1, "data": cmd.to_record(o)}
            for o in outputs if not isinstance(o, cmd.DEVICE_COMMANDS)]


def test_recall_and_metrics_show_each_reading_and_each_accepted_mispay():
    from controller.service.metrics import ServiceMetrics
    from controller.journal.recall import format_steps, rounds_from_records

    driver = to_payout()
    paid(driver, 6, {**SEAT_6, "middle": 900, "five_card_bonus": 100})
    driver.send(ev.SupervisorKey(True, "SUP-1"))
    driver.send(OperatorAccept)
    paid(driver, 1, SEAT_1)
    records = _records(driver.outputs)
    steps = "\n".join(format_steps(records))
    assert ("seat 6 paid (dealer), read: expected ante_across 1000, ante_down 1000, across 1000, down 1000, "
            "middle 1000; seen five_card_bonus 100, ante_across 1000, ante_down 1000, across 1000, down 1000, "
            "middle 900 | MISPAY: five_card_bonus expected 0 seen 100 (+100), middle expected 1000 seen 900 (-100)"
            ) in steps
    assert "seat 6 MISPAY ACCEPTED by sue (supervisor): short 100, over 100" in steps and "why: player agreed" in steps
    assert "seat 1 paid (SUP-1), read:" in steps  # the key still turned: the supervisor pressed it
    assert steps.index("MISPAY ACCEPTED") < steps.index("round closed")
    rnd = rounds_from_records(records)[1]
    assert [c["seat"] for c in rnd.payout_checks] == [6, 1] and rnd.mispays_accepted[0]["short"] == 100
    metrics = ServiceMetrics(lambda: 0, dict)
    for record in records:
        metrics.record(record)
    sample = metrics.registry.get_sample_value
    assert sample("crisscross_mispays_total", {"outcome": "caught"}) == 1
    assert sample("crisscross_mispays_total", {"outcome": "accepted"}) == 1
    assert sample("crisscross_mispay_minor_units_total", {"outcome": "accepted", "direction": "short"}) == 100
    assert sample("crisscross_mispay_minor_units_total", {"outcome": "caught", "direction": "over"}) == 100


def test_payout_errors_need_the_simulated_table():
    from controller.cli.main import main

    assert main(["run", "--payout-errors", "0.1", "--port", "shoe=/dev/null"]) == 2
