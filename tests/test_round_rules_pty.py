"""The round rules of the floor through the control interface, on a service whose devices are the simulators
behind real pseudo-terminals: locked means locked (NY 9 NYCRR 5324.39(c)(3)), a supervisor may void while
past-posting is held, and a stale action (decided on another round) is refused with 409 and journaled.

The chips are put on the simulated sensors and the actions posted over HTTP as a software panel would; the
outcome is read from ``/state``, ``/events`` and the journal.
"""

from __future__ import annotations

import dataclasses
import io
import threading
import time

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.control.operators import MIN_ITERATIONS, add_operator
from controller.game.table import load_table_config
from controller.journal.reader import read_records
from controller.round.inputs import ANSWERING
from controller.service.assembly import Service
from tests.test_control import PASSWORDS, Client

PATIENCE = 20.0


@pytest.fixture
def floor(tmp_path):
    """A service with every device simulated on a pty (nobody at the table: the test acts), the control
    interface on a free port, and operators sue (supervisor) and dan (dealer)."""
    operators = tmp_path / "operators.yaml"
    add_operator(operators, "sue", "supervisor", PASSWORDS["sue"], iterations=MIN_ITERATIONS)
    add_operator(operators, "dan", "dealer", PASSWORDS["dan"], iterations=MIN_ITERATIONS)
    config = load_table_config()
    control = dataclasses.replace(config.control, enabled=True, port=0, operators=operators)
    service = Service(dataclasses.replace(config, control=control), journal_path=tmp_path / "journal.jsonl",
                      out=io.StringIO(), seed=5, parts=SERVICE_PARTS)
    thread = threading.Thread(target=service.run, name="service")
    thread.start()
    client = Client(service.control)
    try:
        wait_state(client, lambda s: s["state"] == "idle")
        yield service, client, tmp_path / "journal.jsonl"
    finally:
        service.stop()
        thread.join(30)
        service.close()


def wait_state(client: Client, predicate) -> dict:
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        status, state = client.get("/state")
        if status == 200 and predicate(state):
            return state
        time.sleep(0.02)
    raise AssertionError(f"the table never reached the expected state; last: {state}")


def act(client: Client, action: str, user: str = "dan", **extra) -> tuple[int, dict]:
    """Post ``action``; one that answers something names what /state says it answers now."""
    if action in ANSWERING and "answers" not in extra:
        extra["answers"] = client.get("/state")[1]["answers"].get(action)
    status, answer = client.act(action, user=user, **extra)
    assert status in (202, 409), answer
    return status, answer


def records_of(path, kind: str) -> list[dict]:
    return [r for r in read_records(path) if r["type"] == kind]


def open_and_lock(service: Service, client: Client, layout: dict[int, dict[str, int]]) -> dict:
    act(client, "open_betting")
    wait_state(client, lambda s: "no_more_bets" in s["allowed_actions"])
    sensors = service.sims["sensors"]
    for seat, wagers in layout.items():
        for spot, amount in wagers.items():
            sensors.place(seat, spot, amount)
    # the chips' SPOT_CHANGED frames reach the controller before the press
    assert sensors.wait_for(lambda: sensors.awaiting_ack == 0, PATIENCE)
    act(client, "no_more_bets")
    return wait_state(client, lambda s: s["state"] in ("wagers_held", "dealing_cross", "across_decision", "closed"))


def test_wagers_changed_while_a_seat_is_held_are_past_posting_and_the_locked_amounts_stand(floor):
    """NY (c)(3): seat 1 below the table minimum is held at "no more bets"; meanwhile seat 3 raises and adds a
    bonus, and seat 6 (empty until then) places antes: each change is past-posting, held until a supervisor
    acknowledges; after the dealer excludes seat 1, seat 3 plays at the amounts it had at "no more bets" and
    seat 6 does not play."""
    service, client, journal = floor
    state = open_and_lock(service, client, {1: {"ante_across": 100, "ante_down": 100},
                                            3: {"ante_across": 500, "ante_down": 500}})
    assert state["state"] == "wagers_held" and state["seats"]["3"]["wagers"] == {"ante_across": 500,
                                                                                 "ante_down": 500}
    sensors = service.sims["sensors"]
    sensors.place(3, "ante_across", 2500)
    sensors.place(3, "ante_down", 2500)
    sensors.place(3, "five_card_bonus", 1000)
    sensors.place(6, "ante_across", 5000)
    sensors.place(6, "ante_down", 5000)
    state = wait_state(client, lambda s: len(s["pending_past_posting"]) == 5)
    assert state["allowed_actions"] == ["acknowledge", "void_round", "disable_table"]
    assert act(client, "exclude")[0] == 202  # refused while the hold lasts
    refused = client.wait_for(lambda r: r["type"] == "PressRefused" and r["data"]["button"] == "exclude")
    assert refused["data"]["user"] == "dan" and "acknowledge" in refused["data"]["reason"]
    act(client, "acknowledge", user="sue")
    wait_state(client, lambda s: "exclude" in s["allowed_actions"])
    act(client, "exclude")
    wait_state(client, lambda s: s["state"] == "across_decision")
    (locked,) = records_of(journal, "WagersLocked")
    assert locked["data"]["seats"] == [{"seat": 3, "wagers": {"ante_across": 500, "ante_down": 500}}]
    flagged = {(i["data"]["detail"]["seat"], i["data"]["detail"]["spot"])
               for i in records_of(journal, "Irregularity") if i["data"]["kind"] == "past_posting"}
    assert flagged == {(3, "ante_across"), (3, "ante_down"), (3, "five_card_bonus"), (6, "ante_across"),
                       (6, "ante_down")}


def test_a_supervisor_voids_over_the_control_interface_while_past_posting_is_held(floor):
    """A non-playing seat puts chips on its across spot during the across decision (past-posting, held); a
    supervisor's void is allowed all the same, returns every wager of record, and the public stream shows
    the void's code, never the supervisor's free text."""
    service, client, journal = floor
    open_and_lock(service, client, {2: {"ante_across": 500, "ante_down": 500}})
    wait_state(client, lambda s: s["state"] == "across_decision")
    service.sims["sensors"].place(4, "across", 500)
    state = wait_state(client, lambda s: s["pending_past_posting"])
    assert "void_round" in state["allowed_actions"]
    status, _ = act(client, "void_round", user="sue", code="dispute", reason="seat 4 saw Kd",
                    round=state["round_no"])
    assert status == 202
    voided = client.wait_for(lambda r: r["type"] == "RoundVoided")
    assert voided["data"]["code"] == "dispute" and "reason" not in voided["data"]
    assert voided["data"]["totals"]["returned"] == 1000
    (journaled,) = records_of(journal, "RoundVoided")
    assert journaled["data"]["reason"] == "seat 4 saw Kd"  # the free text stays in the journal
    assert not any("Kd" in str(r) for r in client.received)


def test_a_stale_action_is_refused_with_409_and_never_touches_the_next_round(floor):
    """A supervisor decides to void round 1, but round 1 ends and round 2 opens before the action arrives: the
    action names round 1, so it is answered 409 with the current round, journaled and refused (PressRefused
    naming the mismatch and the user), and round 2 goes on."""
    service, client, journal = floor
    open_and_lock(service, client, {})  # nobody wagers: round 1 closes as a no-play round
    wait_state(client, lambda s: s["state"] == "closed" and s["round_no"] == 1)
    act(client, "open_betting")
    wait_state(client, lambda s: s["round_no"] == 2 and s["state"] == "betting")
    status, answer = act(client, "void_round", user="sue", code="misdeal", round=1)
    assert status == 409 and answer["round"] == 2 and "round 1" in answer["error"]
    refused = client.wait_for(lambda r: r["type"] == "PressRefused" and r["data"]["button"] == "void_round")
    assert refused["data"]["user"] == "sue" and refused["data"]["reason"].startswith("stale")
    assert wait_state(client, lambda s: True)["state"] == "betting"
    assert not records_of(journal, "RoundVoided")
    (no_play,) = records_of(journal, "RoundClosed")
    assert no_play["round"] == 1 and no_play["data"]["totals"]["wagered"] == 0
