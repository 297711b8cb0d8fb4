"""A shoe that restarted holds no shuffle (docs/protocol.md, "Power-on counter"; controller/round/machine.py,
``_on_ShoeBootCount``).

The rule under test: any sign that the shoe restarted (its power-on counter changed, with or without a lost
link, also while the service was down) discards the shuffle a no-play round kept; in betting with nothing dealt
the round asks for a new shuffle, so no wager locks before a shuffle counted 52 (NY 9 NYCRR 5324.39(d)(2): the
automated shoe deals from one deck of 52); from "no more bets" on it is a fault the round can only void.
"""

from __future__ import annotations

import json

from controller.round import commands as cmd
from controller.round.inputs import ServiceStarted
from drivers import events as ev
from tests.round_helpers import TableDriver, antes, new_round, of_type

CROSS = ("2c", "7d", "9h", "Js", "Kc")
HANDS = {1: ("As", "Ad")}


def started(boots: int = 1) -> TableDriver:
    """A table whose shoe reported power-on counter ``boots`` at its handshake."""
    table = TableDriver()
    table.start()
    table.send(ev.ShoeBootCount(boots))
    return table


def no_play_round(table: TableDriver) -> None:
    """A round with no wager at "no more bets": it closes, the shoe's checked shuffle kept for the next one."""
    table.open_betting()
    table.lock({})
    assert table.state == "closed" and table.machine.shuffle_kept


def test_after_a_no_play_round_a_restarted_shoe_shuffles_again_and_its_count_is_checked():
    """The issue's case: the shoe restarted with a card missing after a no-play round. The next round asks for
    a shuffle (the kept one is gone with the power), the shuffle counts 51: ``card_count``, and no wager locks."""
    table = started(boots=7)
    no_play_round(table)
    out = table.send(ev.ShoeBootCount(8))  # the next heartbeat's PONG: the shoe restarted, the link stayed up
    assert [o.kind for o in of_type(out, cmd.Irregularity)] == ["shoe_restarted"]
    assert of_type(out, cmd.Irregularity)[0].detail == {"boots": 8, "previous": 7}
    assert not table.machine.shuffle_kept
    out = table.press("open_betting")
    assert of_type(out, cmd.Shuffle), "the kept shuffle was reused"
    assert "no_more_bets" not in table.machine.allowed_actions()  # nothing locks before the shuffle counted
    table.place({1: antes(500)})
    out = table.send(ev.ShuffleComplete(51))
    assert [(f.cause, f.device) for f in of_type(out, cmd.FaultRaised)] == [("card_count", "shoe")]
    assert not of_type(table.outputs, cmd.WagersLocked)


def test_the_same_counter_again_keeps_the_kept_shuffle():
    """A reconnection or a new driver reports the counter it was told before: nothing restarted."""
    table = started(boots=7)
    no_play_round(table)
    out = table.send(ev.ShoeBootCount(7))
    assert out == [] and table.machine.shuffle_kept
    assert not of_type(table.press("open_betting"), cmd.Shuffle)


def test_in_betting_a_counted_shuffle_is_asked_for_again_before_any_lock():
    table = started()
    table.open_betting()
    assert "no_more_bets" in table.machine.allowed_actions()
    table.place({1: antes(500)})
    out = table.send(ev.ShoeBootCount(2))
    assert of_type(out, cmd.Shuffle) and table.state == "betting"
    assert "no_more_bets" not in table.machine.allowed_actions()
    out = table.press("no_more_bets")  # refused: the restarted shoe has not counted a deck yet
    assert of_type(out, cmd.PressRefused) and not of_type(out, cmd.ReadSpots)
    table.send(ev.ShuffleComplete(52))
    out = table.lock()
    assert of_type(out, cmd.WagersLocked)


def test_in_betting_while_the_shuffle_is_still_awaited_nothing_more_is_asked():
    """The shuffle asked at the opening has not been answered: its answer will come from the restarted shoe
    (the driver repeats the request), so a second one is not asked for."""
    table = started()
    table.press("open_betting")
    out = table.send(ev.ShoeBootCount(2))
    assert not of_type(out, cmd.Shuffle) and not of_type(out, cmd.FaultRaised)
    assert "no_more_bets" not in table.machine.allowed_actions()


def test_from_the_lock_on_a_restart_is_a_fault_the_round_can_only_void():
    for step in ("locking", "dealing_cross", "dealing_players", "across_decision"):
        table = started()
        table.open_betting()
        table.place({1: antes(500)})
        table.press("no_more_bets")
        if step != "locking":
            table.answer_read()
        if step in ("dealing_players", "across_decision"):
            table.answer_dispense(CROSS)
        if step == "across_decision":
            table.answer_dispense(HANDS[1])
        assert table.state == step
        out = table.send(ev.ShoeBootCount(2))
        faults = of_type(out, cmd.FaultRaised)
        assert [(f.device, f.cause, f.resumable) for f in faults] == [("shoe", "shoe_restarted", False)], step
        table.send(ev.SupervisorKey(True, "SUP-1"))
        assert table.machine.round_actions() == ("void_round",), step


def test_a_restart_while_the_service_was_down_is_seen_against_the_journal():
    """The counter is kept in the checkpoint: a driver started again reports the shoe's counter at its first
    handshake, the round compares it with the last one journaled, and the round held in betting shuffles again
    when it is resumed."""
    table = started(boots=3)
    table.open_betting()
    table.place({1: antes(500)})
    saved = json.loads(json.dumps(table.machine.checkpoint()))
    machine = new_round()
    machine.restore(saved)
    again = TableDriver(machine)
    again.layout = dict(table.layout)
    again.send(ServiceStarted())
    again.start()
    assert again.state == "fault"
    again.send(ev.ShoeBootCount(4))  # power-cycled while the service was down
    again.send(ev.SupervisorKey(True, "SUP-1"))
    out = again.press("clear_fault")
    assert again.state == "betting" and of_type(out, cmd.Shuffle)
    assert "no_more_bets" not in machine.allowed_actions()


def test_between_rounds_and_after_the_settlement_a_restart_is_recorded_and_faults_nothing():
    table = started()
    out = table.send(ev.ShoeBootCount(2))
    assert [o.kind for o in of_type(out, cmd.Irregularity)] == ["shoe_restarted"]
    assert not of_type(out, cmd.FaultRaised) and table.state == "idle"
