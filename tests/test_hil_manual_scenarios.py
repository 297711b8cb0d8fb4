"""The rig's steps for dealing by hand (NY 9 NYCRR 5324.39(d)(1), docs/rig.md): ``enter`` types cards on the
simulated panel's keypad (a CARDS frame) for the community (seat 0) or a seat, any two printable characters so
that a card not of the deck can be typed; the supervisor's buttons ``deal_by_hand``, ``deal_by_shoe`` and
``hold_seat`` are buttons of a step; an ``enter`` step needs the panel's simulator; and a typed entry reaches
the controller (a scenario whose entry repeats a card fails at the step that awaited it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hil.scenario import ScenarioError, load_scenario
from hil.scenario_run import ScenarioRun

ROOT = Path(__file__).resolve().parent.parent
REFUSALS = ROOT / "hil" / "scenarios" / "manual-entry-refused-and-awaited-again.yaml"

pytestmark = pytest.mark.timeout(120)


def write(tmp_path: Path, name: str, steps: list[str]) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text("\n".join([f"name: {name}", "steps:", *steps, ""]))
    return path


def test_enter_takes_the_community_or_a_seat_and_any_two_printable_characters(tmp_path):
    path = write(tmp_path, "entries", [
        "  - enter: {seat: 0, cards: [Kh, Kd, 5s, 5c, Qs]}",
        "  - enter: {seat: 6, cards: [Xx, '1z']}",
        "  - press: deal_by_hand",
        "  - press: deal_by_shoe",
        "  - act: {action: hold_seat, user: sue}",
    ])
    scenario = load_scenario(path)
    assert [s.action for s in scenario.steps] == ["enter", "enter", "press", "press", "act"]
    assert scenario.steps[1].value == {"seat": 6, "cards": ["Xx", "1z"]}


def test_enter_refuses_a_seat_off_the_table_too_many_cards_and_a_card_of_three_characters(tmp_path):
    path = write(tmp_path, "bad-entries", [
        "  - enter: {seat: 7, cards: [Kh, Kd]}",              # 3: seats 0-6
        "  - enter: {seat: 0, cards: [2c, 3c, 4c, 5c, 6c, 7c]}",  # 4: a CARDS frame carries at most 5
        "  - enter: {seat: 1, cards: [10h, Kd]}",            # 5: two characters a card
        "  - enter: {seat: 1}",                               # 6: no cards
        "  - enter: {seat: 1, cards: []}",                    # 7: no card
    ])
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    problems = caught.value.problems
    assert [p.split(": ", 1)[0] for p in problems] == [f"{path}:{n}" for n in (3, 4, 5, 6, 7)]
    assert "7 is greater than the maximum of 6" in problems[0]
    assert "is too long" in problems[1]
    assert "'10h' does not match" in problems[2]
    assert "'cards' is a required property" in problems[3]
    assert "should be non-empty" in problems[4]


def test_an_enter_step_needs_the_panel_simulator(tmp_path):
    scenario = load_scenario(REFUSALS)
    result = ScenarioRun(scenario, tmp_path, {"panel": "/dev/serial/by-id/usb-panel"}).run()
    assert result.status == "skipped"
    assert "needs the panel simulator" in result.message and "/dev/serial/by-id/usb-panel" in result.message


def test_a_typed_entry_reaches_the_controller_a_repeated_card_is_not_taken(tmp_path):
    """The shipped refusals scenario with its right across entry replaced by a card typed twice: the round
    refuses it (``controller.round.manual:check_entry``), so the step awaiting the recorded cards fails, named."""
    text = REFUSALS.read_text().replace("name: manual-entry-refused-and-awaited-again", "name: repeated-entry")
    right = "    enter: {seat: 0, cards: [Kh, Kd]}\n  - wait: {lamps: [reveal], journal:"
    assert text.count(right) == 1
    path = tmp_path / "repeated-entry.yaml"
    path.write_text(text.replace(right, "    enter: {seat: 0, cards: [Kd, Kd]}\n"
                                        "  - wait: {timeout: 2, lamps: [reveal], journal:"))
    (tmp_path / "run").mkdir()
    result = ScenarioRun(load_scenario(path), tmp_path / "run").run()
    assert result.status == "failed"
    assert result.step is not None and result.step.action == "wait" and result.step.index == 28
    assert "CardsRecorded" in result.message
    assert any("PressRefused" in line and "a card is entered twice" in line for line in result.journal_excerpt)
