"""Hole-card alerts in the round core (controller/round/alerts.py): shown on the panel only while the supervisor key is
turned, never a card, acknowledged by a supervisor and journaled with who; kept by checkpoint()/restore() and by
the replay of the journal, so that an alert not acknowledged is still waiting after a restart; nothing of them
in any public record or in the round's view."""

from __future__ import annotations

import json
import re

import pytest

from controller.round import commands as cmd
from controller.round.alerts import (ACKNOWLEDGE_ALERT, MAX_WAITING, REFUSED_TEXT, Alert, alert_record, alert_text,
                               evidence_text, panel_for_supervisor)
from controller.control.server import public_record
from controller.game.cards import DECK
from controller.journal.reader import read_records
from controller.journal.recovery import recover
from controller.journal.store import Journal
from controller.round.inputs import OperatorAction, ServiceStarted
from controller.round.machine import Round
from drivers import events as ev
from tests.round_helpers import CONFIG, NY, TableDriver, antes, of_type, ready
from tests.test_recovery import Recorder, play_until

#: A middle-card alert raised at the close of round 7 for seat 3: evidence 10^4.12 over 30 rounds.
MIDDLE = Alert(7, 3, "middle", 412, 1, 30, 100, 4170)
#: A down-card alert for seat 5, raised later, of a rated player.
DOWN = Alert(9, 5, "down", 455, 2, 40, 50, 1200, "P-5")

KEY_ON = ev.SupervisorKey(True, "SUP-7")
KEY_OFF = ev.SupervisorKey(False, "SUP-7")

#: A card as written anywhere (rank 23456789TJQKA + suit cdhs), to prove none is shown.
CARD = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][cdhs](?![A-Za-z])")


def panel_outputs(outputs):
    return [o for o in outputs if isinstance(o, (cmd.Display, cmd.SetLamps, cmd.PrivatePanel))]


@pytest.fixture
def table() -> TableDriver:
    """A table started and betting (round 1 open, shuffled)."""
    driver = TableDriver()
    driver.start()
    driver.open_betting()
    return driver


def test_an_alert_line_names_a_seat_a_kind_of_card_and_the_evidence_never_a_card():
    line = alert_text({"seat": 3, "card": "middle", "evidence_log10_hundredths": 412, "rounds": 30}, 2)
    assert line.startswith("ALERT 1/2 ") and "seat 3" in line and "middle card" in line and "30 rounds" in line
    assert "10^4.12" in line and evidence_text(412) == "10^4.12" and evidence_text(5) == "10^0.05"
    assert len(line) <= 64 and not CARD.search(line)


def test_an_alert_line_names_the_rated_player_while_it_fits_the_panel_the_rounds_going_first():
    """The panel's display holds 64 bytes (docs/protocol.md): the line names the player's id when the player is
    rated, leaving out the rounds, then the id, when the line would not fit."""
    alert = {"seat": 3, "card": "middle", "evidence_log10_hundredths": 412, "rounds": 30}
    assert alert_text({**alert, "player": "SIM-0009"}, 2) == "ALERT 1/2 seat 3 SIM-0009 may see middle card: 10^4.12"
    assert alert_text({**alert, "player": "P7"}, 2) == "ALERT 1/2 seat 3 P7 may see middle card: 10^4.12 in 30 rounds"
    longest = "A" * 32  # a player's id is at most 32 characters (controller.game.sessions.PLAYER_ID)
    assert alert_text({**alert, "player": longest}, 2) == "ALERT 1/2 seat 3 may see middle card: 10^4.12 in 30 rounds"
    assert alert_text({**alert, "player": ""}, 2) == alert_text(alert, 2)


def test_an_alert_whose_player_is_not_a_players_id_is_never_shown():
    driver = TableDriver()
    driver.start()
    for player in ("P 1\nseat 2", "x" * 33, 7):
        out = driver.send(Alert(7, 3, "middle", 412, 1, 30, 100, 4170, player))
        [refused] = of_type(out, cmd.AlertNotShown)
        assert refused.reason == "the player is not a player's id"
    assert driver.machine.alerts_waiting == []
    driver.send(Alert(7, 3, "middle", 412, 1, 30, 100, 4170, "SIM-0009"))
    assert driver.machine.alerts_waiting[0]["player"] == "SIM-0009"


def test_an_alert_journaled_before_the_player_was_kept_replays_as_followed_by_the_seat(tmp_path):
    """An ``Alert`` input journaled without ``player`` (before the field was added) replays, naming no player."""
    journal = Journal(tmp_path / "j.db", fsync=False)
    journal.append("event", "ServiceStarted", {"config": "", "devices": {}, "mode": "", "version": ""}, None)
    old = {k: v for k, v in MIDDLE.__dict__.items() if k != "player"}
    journal.append("event", "Alert", old, None)
    journal.close()
    journal = Journal(tmp_path / "j.db", fsync=False)
    machine = recover(journal, CONFIG, NY).machine
    journal.close()
    assert machine.alerts_waiting == [{**old, "player": ""}]


def test_the_rule_shows_nothing_with_the_key_off_and_the_oldest_alert_with_it_on():
    waiting = [{"seat": 3, "card": "middle", "evidence_log10_hundredths": 412, "rounds": 30},
               {"seat": 5, "card": "down", "evidence_log10_hundredths": 455, "rounds": 40}]
    assert panel_for_supervisor(None, waiting, "Round 1: place your bets", ("no_more_bets",)) is None
    text, lamps = panel_for_supervisor("SUP-7", waiting, "Round 1: place your bets", ("no_more_bets",))
    assert text == alert_text(waiting[0], 2) and lamps == ("no_more_bets", ACKNOWLEDGE_ALERT)
    assert panel_for_supervisor("SUP-7", [], "Round 1", ("void_round",)) == ("Round 1", ("void_round",))


def test_with_the_key_off_an_alert_changes_nothing_on_the_panel_or_in_the_view(table):
    view = table.machine.view()
    out = table.send(MIDDLE)
    assert panel_outputs(out) == [] and out == []  # the input itself is the journal's record of it
    assert table.machine.view() == view and table.machine.alerts_waiting == [dict(MIDDLE.__dict__)]
    assert ACKNOWLEDGE_ALERT not in table.machine.allowed_buttons()


def test_the_key_turned_shows_the_oldest_alert_and_its_lamp_and_off_puts_the_round_back(table):
    table.send(MIDDLE)
    table.send(DOWN)
    out = table.send(KEY_ON)
    view = table.machine.view()
    shown = of_type(out, cmd.PrivatePanel)
    assert len(shown) == 1 and shown[-1] is out[-1]  # last: nothing the round shows covers it
    waiting = table.machine.alerts_waiting
    assert shown[0].text == alert_text(waiting[0], 2) and "seat 3" in shown[0].text
    assert set(shown[0].buttons) == set(view["lamps"]) | {ACKNOWLEDGE_ALERT}
    assert ACKNOWLEDGE_ALERT not in view["lamps"] + view["allowed_actions"]  # the public view never has it
    assert "ALERT" not in json.dumps(view)
    out = table.send(KEY_OFF)
    back = of_type(out, cmd.PrivatePanel)
    assert back == [cmd.PrivatePanel(table.machine.view()["display"], tuple(table.machine.view()["lamps"]))]
    assert len(table.machine.alerts_waiting) == 2  # not acknowledged: still waiting


def test_what_the_round_shows_while_the_key_is_turned_is_covered_by_the_alert_again(table):
    table.send(MIDDLE)
    table.send(KEY_ON)
    table.place({1: antes(500)})
    out = table.press("no_more_bets")  # the supervisor's press with the key turned
    out += table.answer_read()
    assert of_type(out, cmd.Display)  # the round's prompt, journaled and sent as always...
    after = [type(o) for o in out[out.index(of_type(out, cmd.Display)[-1]):]]
    assert cmd.PrivatePanel in after  # ...and the alert shown over it
    assert table.state == "dealing_cross"  # the alert changes nothing of the round


def test_a_supervisor_acknowledges_the_alert_shown_oldest_first_journaled_with_who(table):
    table.send(MIDDLE)
    table.send(DOWN)
    table.send(KEY_ON)
    out = table.press(ACKNOWLEDGE_ALERT)
    [ack] = of_type(out, cmd.AlertAcknowledged)
    assert ack == cmd.AlertAcknowledged(1, dict(MIDDLE.__dict__), "SUP-7", "supervisor", "panel", 1)
    assert of_type(out, cmd.PrivatePanel)[-1].text == alert_text(dict(DOWN.__dict__), 1)
    out = table.press(ACKNOWLEDGE_ALERT)
    assert of_type(out, cmd.AlertAcknowledged)[0].alert == dict(DOWN.__dict__)
    view = table.machine.view()
    assert of_type(out, cmd.PrivatePanel) == [cmd.PrivatePanel(view["display"], tuple(view["lamps"]))]
    out = table.press(ACKNOWLEDGE_ALERT)  # none waits: refused, on the panel for the key only
    assert of_type(out, cmd.PressRefused)[0].reason == "no hole-card alert waits"
    assert of_type(out, cmd.Display) == [] and of_type(out, cmd.PrivatePanel)[0].text == REFUSED_TEXT
    assert table.state == "betting"


def test_a_dealers_press_is_refused_the_same_way_whether_an_alert_waits_or_not(table):
    before = table.press(ACKNOWLEDGE_ALERT)
    table.send(MIDDLE)
    after = table.press(ACKNOWLEDGE_ALERT)
    assert before == after and of_type(after, cmd.PressRefused)[0].reason == f"{ACKNOWLEDGE_ALERT} needs a supervisor"
    assert of_type(after, cmd.PrivatePanel) == [] and len(table.machine.alerts_waiting) == 1


def test_a_supervisor_on_the_control_interface_acknowledges_a_dealer_may_not(table):
    table.send(MIDDLE)
    out = table.send(OperatorAction(ACKNOWLEDGE_ALERT, "dan", "dealer"))
    assert of_type(out, cmd.PressRefused) and table.machine.alerts_waiting
    out = table.send(OperatorAction(ACKNOWLEDGE_ALERT, "sue", "supervisor"))
    [ack] = of_type(out, cmd.AlertAcknowledged)
    assert (ack.by, ack.role, ack.source, ack.waiting) == ("sue", "supervisor", "control", 0)
    assert of_type(out, cmd.PrivatePanel) == []  # the key is off: nothing on the panel
    assert table.machine.alerts_waiting == []


def test_past_posting_does_not_hold_the_acknowledgement_of_an_alert(table):
    table.lock({1: antes(500)})
    table.move_chips(1, "ante_across", 1000)  # past-posting: the round waits for the supervisor
    table.send(MIDDLE)
    table.send(KEY_ON)
    out = table.press(ACKNOWLEDGE_ALERT)
    assert of_type(out, cmd.AlertAcknowledged) and table.machine.round.pending_acks


def test_an_alert_that_names_a_card_or_no_seat_is_never_shown():
    driver = TableDriver()
    driver.start()
    for bad, field in ((Alert(7, 3, "Kd", 412, 1, 30, 100, 4170), "card"),
                       (Alert(7, 9, "middle", 412, 1, 30, 100, 4170), "seat")):
        out = driver.send(bad)
        [refused] = of_type(out, cmd.AlertNotShown)
        assert field in refused.reason and "Kd" not in refused.reason
    assert driver.machine.alerts_waiting == []


def test_at_most_max_waiting_alerts_wait_and_the_oldest_is_set_aside():
    driver = TableDriver()
    driver.start()
    alerts = [Alert(n, 1 + n % 6, "across", 400 + n, 1, 20, 100, 10) for n in range(MAX_WAITING + 1)]
    outs = [driver.send(alert) for alert in alerts]
    assert all(not of_type(out, cmd.AlertNotShown) for out in outs[:-1])
    [aside] = of_type(outs[-1], cmd.AlertNotShown)
    assert aside.alert == dict(alerts[0].__dict__)
    assert [a["round_no"] for a in driver.machine.alerts_waiting] == list(range(1, MAX_WAITING + 1))


def test_alerts_waiting_survive_a_checkpoint_round_trip():
    driver = TableDriver()
    driver.start()
    driver.send(MIDDLE)
    driver.send(KEY_ON)
    restored = Round(CONFIG, NY)
    restored.restore(json.loads(json.dumps(driver.machine.checkpoint())))
    assert restored.checkpoint() == driver.machine.checkpoint()
    assert restored.handle(ev.ButtonPressed(ACKNOWLEDGE_ALERT)) == driver.machine.handle(
        ev.ButtonPressed(ACKNOWLEDGE_ALERT))


def test_an_alert_not_acknowledged_waits_after_a_restart_and_shows_again_with_the_key(tmp_path):
    recorder = Recorder(tmp_path / "j.db", checkpoint_every=5)
    play_until(recorder, "middle")  # round 1 settled and closed (a checkpoint)
    recorder.feed(MIDDLE)
    recorder.feed(DOWN)
    recorder.feed(KEY_ON)
    recorder.feed(ev.ButtonPressed(ACKNOWLEDGE_ALERT))  # the middle one acknowledged, the down one waits
    recorder.journal.close()
    records = read_records(tmp_path / "j.db")
    assert [r["kind"] for r in records if r["type"] == "Alert"] == ["event", "event"]
    [ack] = [r for r in records if r["type"] == "AlertAcknowledged"]
    assert ack["data"]["by"] == "SUP-7" and ack["data"]["alert"]["seat"] == 3 and ack["time"]
    journal = Journal(tmp_path / "j.db", fsync=False)
    machine = recover(journal, CONFIG, NY).machine
    journal.close()
    assert machine.alerts_waiting == [dict(DOWN.__dict__)]
    driver = TableDriver(machine)
    driver.send(ServiceStarted())  # the key is not taken for turned after a restart
    assert machine.supervisor_key is None
    out = driver.start()
    assert of_type(out, cmd.PrivatePanel) == []
    out = driver.send(KEY_ON)
    assert of_type(out, cmd.PrivatePanel)[-1].text == alert_text(dict(DOWN.__dict__), 1)


def test_a_journal_with_an_alert_written_as_a_record_still_replays(tmp_path):
    """Before alerts were an input of the round machine the service wrote them as records of its own (kind
    ``record``); such a journal must still start (they are not replayed: no input produced them)."""
    journal = Journal(tmp_path / "j.db", fsync=False)
    journal.append("event", "ServiceStarted", {"config": "", "devices": {}, "mode": "", "version": ""}, None)
    journal.append("record", "Alert", dict(MIDDLE.__dict__), 7)
    journal.close()
    journal = Journal(tmp_path / "j.db", fsync=False)
    machine = recover(journal, CONFIG, NY).machine
    journal.close()
    assert machine.alerts_waiting == [] and machine.state == "starting"


def test_nothing_of_an_alert_is_public_and_no_output_names_a_card(table):
    outputs = []
    for event in (MIDDLE, KEY_ON, ev.ButtonPressed(ACKNOWLEDGE_ALERT), ev.ButtonPressed(ACKNOWLEDGE_ALERT),
                  OperatorAction(ACKNOWLEDGE_ALERT, "sue", "supervisor"), KEY_OFF):
        outputs.append(({"type": type(event).__name__, "data": dict(event.__dict__)}, event))
        outputs += [({"type": type(o).__name__, "data": dict(o.__dict__)}, o) for o in table.send(event)]
    for record, item in outputs:
        text = json.dumps(record["data"])
        assert not CARD.search(text), text
        if alert_record(record):
            assert public_record(record) is None
        else:  # what stays public says nothing of alerts
            assert "ALERT" not in text and ACKNOWLEDGE_ALERT not in text and "hole-card" not in text
    assert any(isinstance(item, cmd.AlertAcknowledged) for _, item in outputs)
    assert not any(card in json.dumps(table.machine.view()) for card in DECK)


def test_the_panel_coming_back_shows_the_alert_again_to_the_key(table):
    table.send(MIDDLE)
    table.send(KEY_ON)
    table.send(ev.DeviceFault("panel", "link_lost", "unplugged"))
    out = table.send(ready("panel"))
    assert of_type(out, cmd.PrivatePanel)[-1].text == alert_text(dict(MIDDLE.__dict__), 1)


def test_recall_lists_every_alert_with_whether_and_by_whom_it_was_acknowledged_never_a_card(tmp_path, capsys):
    """``crisscross recall --alerts``: seat, kind of card, evidence (10^(hundredths/100)), the round that flagged
    it and its status; an alert refused on arrival for naming a card is listed as set aside without the card;
    the rounds' steps name the alerts too."""
    from controller.cli import main as cli

    path = tmp_path / "j.db"
    recorder = Recorder(path)
    play_until(recorder)  # round 1, closed
    recorder.feed(MIDDLE)
    recorder.feed(DOWN)
    recorder.feed(Alert(9, 4, "Kd", 500, 1, 12, 100, 10))  # names a card: never shown, never listed with it
    recorder.feed(KEY_ON)
    recorder.feed(ev.ButtonPressed(ACKNOWLEDGE_ALERT))  # the oldest, the middle-card alert of seat 3
    recorder.journal.close()
    assert cli.main(["recall", "--alerts", "--journal", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Hole-card alerts: 3, 1 waiting"
    middle, down, bad = lines[1:]
    assert "seat 3 plays as if it sees the middle card: evidence 10^4.12 over 30 rounds" in middle
    assert "flagged at the close of round 7" in middle and "acknowledged by SUP-7 (supervisor, panel) at 20" in middle
    assert "house loss 41.70;" in middle  # 4,170 minor units, written as money as the rest of recall
    assert "seat 5 (player P-5) plays as if it sees the down card: evidence 10^4.55 over 40 rounds" in down
    assert "flagged at the close of round 9" in down and down.endswith("| NOT ACKNOWLEDGED")
    assert "seat 4 plays as if it sees the ? card" in bad and "set aside: the card is not one of" in bad
    assert not CARD.search("\n".join(lines))
    assert cli.main(["recall", "--last", "1", "--journal", str(path)]) == 0
    steps = [line for line in capsys.readouterr().out.splitlines() if "alert" in line.lower()]
    assert len(steps) == 5  # three alerts, the one not shown, the acknowledgement
    assert sum("HOLE-CARD ALERT: seat" in line for line in steps) == 3
    assert any("hole-card alert acknowledged by SUP-7 (supervisor, panel)" in line for line in steps)
    assert not any(CARD.search(line) for line in steps)


def test_turning_the_key_leaves_the_same_public_records_whether_an_alert_waits_or_not():
    """What the public sees of a supervisor's visit (the key on, a press, the key off) is the same with an
    alert waiting, shown and acknowledged, as with none: the alert's lines go by ``PrivatePanel`` alone."""
    def visit(alert: Alert | None) -> list:
        driver = TableDriver()
        driver.start()
        driver.open_betting()
        seen = []
        for event in ([alert] if alert else []) + [KEY_ON, ev.ButtonPressed("no_more_bets"),
                                                   ev.ButtonPressed(ACKNOWLEDGE_ALERT), KEY_OFF]:
            for item in [event, *driver.send(event)]:
                public = public_record({"type": type(item).__name__, "data": dict(item.__dict__)})
                if public is not None:
                    seen.append((public["type"], public["data"]))
        return seen

    assert visit(MIDDLE) == visit(None)
    assert ("SupervisorKey", dict(KEY_ON.__dict__)) in visit(None)


def test_with_the_alert_shown_the_service_sends_the_panel_its_private_text_and_lamps_alone(tmp_path):
    """A ``PrivatePanel`` sets the panel's whole text and lamps: the round's ``Display`` and ``SetLamps`` of the
    same input are journaled but not sent, so the alert's lamp never goes out while it waits."""
    recorder = Recorder(tmp_path / "j.db")
    play_until(recorder, "deal")  # the across decision: confirm lit
    recorder.feed(MIDDLE)
    recorder.feed(KEY_ON)
    sent = recorder.feed(ev.ButtonPressed("confirm"))  # the decision is read: the lamps change
    sent += recorder.feed(ev.SpotsSnapshot(recorder.last(cmd.ReadSpots).request_id, ()))  # everyone folds
    panel = [c for c in sent if c.device == "panel"]
    assert panel and all(isinstance(c, cmd.PrivatePanel) and ACKNOWLEDGE_ALERT in c.buttons for c in panel)
    recorder.journal.close()
    journaled = [r["type"] for r in read_records(tmp_path / "j.db")][-12:]
    assert "SetLamps" in journaled and "Display" in journaled  # the public record keeps the round's own


def test_an_alert_and_a_round_read_without_one_leave_the_same_public_trace(table):
    """The detector's input for a round it read is an ``Alert`` or a ``DetectorChecked``, one each round: with the
    key off neither gives an output, both are private records, and the view after either is the same, so that
    the public record (its seq numbers and the views published after each input) does not tell when an alert
    came."""
    from controller.round.alerts import DetectorChecked

    other = TableDriver()
    other.start()
    other.open_betting()
    after_alert = table.machine.handle(MIDDLE)
    after_check = other.machine.handle(DetectorChecked(7))
    assert after_alert == after_check == []
    assert table.machine.view() == other.machine.view()
    for record in ({"type": "Alert", "data": dict(MIDDLE.__dict__)}, {"type": "DetectorChecked",
                                                                         "data": {"round_no": 7}}):
        assert alert_record(record) and public_record({**record, "seq": 1, "time": "t", "kind": "event",
                                                       "round": 7}) is None


def _stand_in_detector(monkeypatch, detector: type) -> None:
    """Give the live detector ``detector`` in place of ``controller.analysis.protect.Detector``, tables that
    need no computing, and each round read as its number alone."""
    import controller.analysis.protect as protect_module
    import controller.analysis.protect_tables as tables_module
    import controller.service.protect_journal as protect_journal_module

    class Tables:
        multiples = (1, 2, 3)

    monkeypatch.setattr(tables_module.ProtectTables, "load", staticmethod(lambda jurisdiction, workers: Tables()))
    monkeypatch.setattr(protect_module, "Detector", detector)
    monkeypatch.setattr(protect_journal_module, "rounds_seen", lambda record, multiples: [record.round_no])


def test_the_live_detector_hands_over_one_input_per_round_read(monkeypatch):
    """Two alerts raised at the close of one round: the first goes with that round, the second with the next
    round read; a round read without one gives ``DetectorChecked``; a round the detector cannot read gives one
    all the same."""
    import controller.analysis.protect as protect_module
    import controller.analysis.protect_tables as tables_module
    from controller.round.alerts import DetectorChecked
    from controller.analysis.protect import EvidenceReport
    from controller.service.protection import LiveProtection
    from controller.journal.recall import RoundRecord

    class FlagsAtRoundTwo:
        """A stand-in detector: round 2 flags seats 3 and 5; round 3 cannot be read."""

        def __init__(self, tables, gap, **options):
            self.tables = tables

        def add(self, seen, round_no, when):
            (number,) = seen
            if number == 3:
                raise ValueError("an unreadable round")
            if number != 2:
                return []
            return [EvidenceReport(3, 1, 2, 2, 4.12, 2, "middle", 1.0, 4170),
                    EvidenceReport(5, 1, 2, 2, 4.55, 2, "down", 0.5, 1200)]

    _stand_in_detector(monkeypatch, FlagsAtRoundTwo)
    posted = []
    live = LiveProtection(NY, posted.append)
    live.start()
    for number in (1, 2, 3, 4):
        live.round_closed(RoundRecord(number))
    live.stop()
    assert posted == [DetectorChecked(1), Alert(2, 3, "middle", 412, 1, 2, 100, 4170),
                      Alert(2, 5, "down", 455, 1, 2, 50, 1200), DetectorChecked(4)]


def test_a_detector_that_cannot_start_leaves_the_table_playing_and_says_so(monkeypatch, caplog):
    """controller/service/protection.py: without its tables (the analysis extra missing, say) the detector says so once,
    loudly; rounds handed to it are taken and never read, and stopping it does not wait."""
    import controller.analysis.protect_tables as tables_module
    from controller.service.protection import LiveProtection
    from controller.journal.recall import RoundRecord

    def cannot_load(jurisdiction, workers):
        raise ModuleNotFoundError("No module named 'numpy'", name="numpy")

    monkeypatch.setattr(tables_module.ProtectTables, "load", staticmethod(cannot_load))
    posted = []
    live = LiveProtection(NY, posted.append)
    live.start()
    for number in (1, 2, 3):
        live.round_closed(RoundRecord(number))
    live.stop()
    assert posted == [] and live.left_out == 0 and not live._thread.is_alive()
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == ["hole-card detector not started"]


def test_a_busy_detector_leaves_rounds_out_and_counts_them_and_a_full_event_queue_is_logged(monkeypatch, caplog):
    """``round_closed`` never waits: with its queue full a round is left out, counted and logged; an input the
    event queue cannot take is logged (module docstring of controller/service/protection.py)."""
    import queue

    from controller.service.protection import LiveProtection
    from controller.journal.recall import RoundRecord

    class NeverFlags:
        def __init__(self, tables, gap, **options):
            self.tables = tables

        def add(self, seen, round_no, when):
            return []

    _stand_in_detector(monkeypatch, NeverFlags)
    idle = LiveProtection(NY, lambda item: None, capacity=1)  # not started: nothing takes rounds off its queue
    idle.round_closed(RoundRecord(1))
    idle.round_closed(RoundRecord(2))
    idle.round_closed(RoundRecord(3))
    assert idle.left_out == 2
    assert "hole-card detector busy: round 3 left out (2 so far)" in caplog.text
    idle.stop()  # its queue full and no worker: returns at once

    def full(item):
        raise queue.Full

    live = LiveProtection(NY, full)
    live.start()
    live.round_closed(RoundRecord(4))
    live.stop()
    assert "event queue full: the hole-card detector's DetectorChecked of round 4 not journaled" in caplog.text
