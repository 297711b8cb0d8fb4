"""A hole-card alert on the simulated dealer panel over a real pseudo-terminal (controller/round/alerts.py): nothing on
the panel while the supervisor key is off, the alert and its lamp while it is turned, acknowledged with the
panel's button and journaled with the key's id; the panel's text and lamps back when the key is turned off."""

from __future__ import annotations

import time

from controller.journal.reader import read_records
from controller.round.alerts import ACKNOWLEDGE_ALERT, Alert, alert_data, alert_text
from tests.pty_helpers import WAIT, betting_service

ALERT = Alert(7, 3, "middle", 412, 1, 30, 100, 4170)


def _until(predicate, timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_panel_shows_an_alert_only_to_the_key_and_takes_its_acknowledgement(tmp_path):
    with betting_service(tmp_path) as service:
        panel = service.sims["panel"]
        machine = service.machine
        assert panel.wait_for_lamp("no_more_bets", WAIT)  # shuffled: the panel as betting leaves it
        before = (panel.display, panel.lamps)
        service.events.put(ALERT)  # as the detector's worker does (controller/service/protection.py)
        assert _until(lambda: machine.alerts_waiting == [alert_data(ALERT)])
        time.sleep(0.3)  # anything the alert sent would have reached the panel by now
        assert (panel.display, panel.lamps) == before and not any("ALERT" in m for m in panel.messages)

        panel.turn_key(True, "SUP-7")
        line = alert_text(alert_data(ALERT), 1)
        assert panel.wait_for(lambda: panel.display == line and ACKNOWLEDGE_ALERT in panel.lamps, WAIT)
        assert "seat 3" in line and "middle" in line

        panel.press(ACKNOWLEDGE_ALERT)
        assert panel.wait_for(lambda: ACKNOWLEDGE_ALERT not in panel.lamps, WAIT)
        assert _until(lambda: machine.alerts_waiting == [])
        assert panel.display == machine.view()["display"]  # the round's own text again

        panel.turn_key(False, "SUP-7")
        assert panel.wait_for(lambda: panel.lamps == frozenset(machine.view()["lamps"]), WAIT)
    records = read_records(tmp_path / "journal.jsonl")
    [ack] = [r for r in records if r["type"] == "AlertAcknowledged"]
    assert ack["data"]["alert"] == alert_data(ALERT) and ack["data"]["by"] == "SUP-7"
    assert ack["data"]["source"] == "panel" and ack["time"]
    assert not any(r["type"] == "Display" and "ALERT" in r["data"]["text"] for r in records)


def test_the_simulated_supervisor_paged_reads_the_alert_on_the_panel_and_acknowledges_it(tmp_path):
    """``crisscross run --simulate``: the detector's alert (handed over as the service does, ``Service._alert``)
    pages the simulated supervisor, who turns the key, reads the alert's line on the panel and presses
    ``acknowledge_alert``; the table plays on."""
    import io
    import threading

    from controller.service.assembly import Service
    from controller.cli.parts import SERVICE_PARTS
    from controller.game.table import load_table_config

    service = Service(load_table_config(), simulate=True, rounds=4, seed=5, journal_path=tmp_path / "journal.db",
                      out=io.StringIO(), parts=SERVICE_PARTS)

    def raise_alert():
        _until(lambda: service.machine.round_no == 2, 60)
        service._alert(ALERT)

    helper = threading.Thread(target=raise_alert)
    helper.start()
    try:
        assert service.run() == 0
    finally:
        helper.join()
        service.close()
    assert service.table.alerts_read == [alert_text(alert_data(ALERT), 1)]
    assert service.table.supervisor_actions[ACKNOWLEDGE_ALERT] == 1
    records = read_records(tmp_path / "journal.db")
    [ack] = [r["data"] for r in records if r["type"] == "AlertAcknowledged"]
    assert (ack["by"], ack["source"], ack["alert"]) == (service.table.supervisor_id, "panel", alert_data(ALERT))
    assert len([r for r in records if r["type"] == "RoundClosed"]) == 4
