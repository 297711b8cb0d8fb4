"""The order in which one commit's commands reach the drivers (controller/service/loop.py, ``Controller._commit``):
the shoe's and the sensors' first, the panel's after them in their own order (a person reads the panel; the round
waits on the devices' answers), and a panel's text and lamps before a ``PrivatePanel`` of the same commit not sent
(journaled only: the alert's lamp must not flicker)."""

from __future__ import annotations

import queue

from controller.journal.store import Journal
from controller.round import commands as cmd
from controller.round.machine import Round
from controller.service.loop import Controller
from tests.round_helpers import CONFIG, NY


def _sent_in_order(tmp_path, outputs):
    journal = Journal(tmp_path / "journal.db", fsync=False)
    controller = Controller(Round(CONFIG, NY), journal, {}, queue.Queue())
    sent = []
    controller._send = sent.append
    entries = [controller._entry(output) for output in outputs]
    controller._commit(entries, list(outputs))
    journaled = [record["type"] for record in journal.records()]
    journal.close()
    return sent, journaled


def test_the_panel_s_commands_go_after_the_sensors_and_the_shoe_s(tmp_path):
    outputs = [cmd.Display("No more bets"), cmd.SetLamps(()), cmd.ReadSpots(7), cmd.Display("Reading"),
               cmd.Dispense(3, 5, 1, 1)]
    sent, journaled = _sent_in_order(tmp_path, outputs)
    assert sent == [cmd.ReadSpots(7), cmd.Dispense(3, 5, 1, 1), cmd.Display("No more bets"), cmd.SetLamps(()),
                    cmd.Display("Reading")]
    # the journal keeps the machine's own order
    assert journaled == ["Display", "SetLamps", "ReadSpots", "Display", "Dispense"]


def test_a_private_panel_hides_the_panel_commands_before_it_and_keeps_those_after(tmp_path):
    private = cmd.PrivatePanel("Alert seat 2", ("acknowledge_alert",))
    outputs = [cmd.Display("Across decision"), cmd.SetLamps(("confirm",)), cmd.ReadSpots(9), private,
               cmd.Display("after")]
    sent, _ = _sent_in_order(tmp_path, outputs)
    assert sent == [cmd.ReadSpots(9), private, cmd.Display("after")]
