"""A step's ``after`` (docs/rig.md, "Acting at a moment"; ``hil.scenario_after``): the action waits for a
record of the journal and is taken only within ``within_ms`` of the record's time. The clocks are the test's
own, so nothing here waits: the record's "arrival" is the n-th reading of the journal."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hil.scenario import ScenarioError, load_scenario
from hil.scenario_after import POLL, AfterFailed, await_record

#: The service journaled the press at this wall-clock time (seconds since the epoch).
PRESSED = 1_800_000_000.250


def record(seq: int, type_: str, at: float, **data) -> dict:
    time_ = datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="milliseconds")
    return {"seq": seq, "time": time_, "kind": "event", "round": 1, "type": type_, "data": data}


class Clock:
    """A monotonic and a wall clock that advance only when the waiter sleeps."""

    def __init__(self, wall: float) -> None:
        self.wall, self.mono, self.sleeps = wall, 100.0, []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.wall += seconds
        self.mono += seconds


def journal_after(readings: int, records: list[dict]):
    """A journal that holds ``records`` from its ``readings``-th reading on (nothing before)."""
    count = {"n": 0}

    def read() -> list[dict]:
        count["n"] += 1
        return records if count["n"] >= readings else []
    return read


NO_MORE_BETS = {"type": "ButtonPressed", "data": {"button": "no_more_bets"}}


def test_the_action_waits_for_the_record_and_the_delay_is_counted_from_the_records_time():
    clock = Clock(wall=PRESSED + 0.004)  # the rig reads the journal 4 ms after the press was journaled
    read = journal_after(3, [record(7, "ButtonPressed", PRESSED, button="no_more_bets")])
    moment = await_record(read, {"journal": NO_MORE_BETS, "within_ms": 50}, now=lambda: clock.wall,
                          monotonic=lambda: clock.mono, sleep=clock.sleep)
    assert clock.sleeps == [POLL, POLL]  # two empty readings, then the record
    assert moment.record["seq"] == 7
    assert moment.delay_ms == pytest.approx(4 + 2 * POLL * 1000, abs=1.0)  # ms from the record, not the step
    assert moment.describe().endswith("ms after record 7 ButtonPressed")


def test_nth_names_a_later_record_of_the_same_kind():
    confirms = [record(n, "ButtonPressed", PRESSED + n, button="confirm") for n in (3, 9, 15)]
    clock = Clock(wall=PRESSED + 9.010)
    moment = await_record(journal_after(1, confirms), {"journal": {"type": "ButtonPressed", "round": 1,
                                                                   "data": {"button": "confirm"}, "nth": 2}},
                          now=lambda: clock.wall, monotonic=lambda: clock.mono, sleep=clock.sleep)
    assert moment.record["seq"] == 9 and moment.delay_ms == pytest.approx(10, abs=1.0)


def test_too_late_fails_without_acting_and_says_by_how_much():
    clock = Clock(wall=PRESSED + 0.800)  # the journal was read 800 ms after the press
    read = journal_after(1, [record(7, "ButtonPressed", PRESSED, button="no_more_bets")])
    with pytest.raises(AfterFailed, match=r"could not act within 50 ms: 800 ms after record 7 ButtonPressed"):
        await_record(read, {"journal": NO_MORE_BETS, "within_ms": 50}, now=lambda: clock.wall,
                     monotonic=lambda: clock.mono, sleep=clock.sleep)


def test_a_record_that_never_comes_fails_at_the_timeout():
    clock = Clock(wall=PRESSED)
    other = [record(1, "ButtonPressed", PRESSED, button="open_betting")]
    with pytest.raises(AfterFailed, match=r"0 of 1 record\(s\) .*no_more_bets.* after 0.5 s"):
        await_record(journal_after(1, other), {"journal": NO_MORE_BETS, "timeout": 0.5},
                     now=lambda: clock.wall, monotonic=lambda: clock.mono, sleep=clock.sleep)
    assert 100.5 <= clock.mono <= 100.5 + 2 * POLL  # it waited the timeout, read by read, and no longer


def write(tmp_path, text: str):
    path = tmp_path / "timed.yaml"
    path.write_text("name: timed\nsteps:\n" + text)
    return path


def test_after_is_read_with_each_action_step_and_refused_where_it_means_nothing(tmp_path):
    scenario = load_scenario(write(tmp_path, "\n".join([
        "  - press: no_more_bets",
        "  - place: {seat: 6, ante_across: 500, ante_down: 500}",
        "    after: {journal: {type: ButtonPressed, data: {button: no_more_bets}}, within_ms: 50}",
        ""])))
    assert scenario.steps[0].after is None
    assert scenario.steps[1].after == {"journal": {"type": "ButtonPressed", "data": {"button": "no_more_bets"}},
                                       "within_ms": 50}
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, "\n".join([
            "  - wait: {state: betting}",                                  # 3
            "    after: {journal: {type: ButtonPressed}}",                 # 4: a wait does not act
            "  - press: confirm",                                          # 5
            "    after: {journal: {type: ButonPressed}, within_ms: 0}",    # 6: no such record; 0 ms
            ""])))
    problems = caught.value.problems
    assert any(":4: steps/0: after belongs to a step that acts, not to wait" in p for p in problems)
    assert any(":6:" in p and "within_ms: 0 is less than or equal to the minimum of 0" in p for p in problems)
    assert any(":6:" in p and "no record type 'ButonPressed'" in p for p in problems)


class FakeControl:
    """The control interface as ``step_act`` sees it: ``/state`` and the bodies posted to ``/actions``."""

    def __init__(self, answers: dict) -> None:
        self.answers, self.posted = answers, []

    def state(self) -> dict:
        return {"round_no": 1, "state": "fault", "answers": self.answers}

    def request(self, method, path, body=None, user=None):
        self.posted.append(body)
        return 202, {}


def test_an_act_names_what_it_answers_and_a_retry_sends_the_same_number_again(tmp_path):
    """``answers: current`` reads ``/state`` ``answers.<action>``; ``answers: repeat`` is a client's retry of
    its last request: the number it sent then, whatever the round answers now."""
    from hil.scenario_run import ScenarioRun, StepFailed

    scenario = load_scenario(write(tmp_path, "  - act: {action: clear_fault, user: sue, answers: current}\n"))
    run = ScenarioRun(scenario, tmp_path)
    run.client = control = FakeControl({"clear_fault": 4})
    run.step_act({"action": "clear_fault", "user": "sue", "round": 1, "state": "fault", "answers": "current"})
    control.answers = {"clear_fault": 9}  # a later, different fault
    run.step_act({"action": "clear_fault", "user": "sue", "round": 1, "state": "fault", "answers": "repeat"})
    assert [body["answers"] for body in control.posted] == [4, 4]
    control.answers = {}  # nothing to clear
    with pytest.raises(StepFailed, match="answers nothing by clear_fault"):
        run.step_act({"action": "clear_fault", "user": "sue", "answers": "current"})
