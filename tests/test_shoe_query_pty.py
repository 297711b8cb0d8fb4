"""The shoe's answer to QUERY_LAST at the start, over real pseudo-terminals (docs/architecture.md "Crash
recovery": the shoe is asked what it last dispensed before anything else, and the table opens only on its
answer). A shoe that refuses the question (NAK) used to leave the service in ``starting`` for good, with nothing
on the panel to clear; now the table is held in a fault the panel and the view show, and a supervisor has the
shoe asked again.
"""

from __future__ import annotations

import io
import threading
import time

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.journal.reader import read_records
from controller.service.assembly import Service
from tests.pty_helpers import WAIT

pytestmark = pytest.mark.timeout(90)


def _until(condition, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout} s: {what}")
        time.sleep(0.01)


def test_a_shoe_that_naks_query_last_at_the_start_holds_the_table_in_a_fault_a_supervisor_clears(tmp_path):
    service = Service(load_table_config(), ports={"shoe": "simulator", "sensors": "simulator", "panel": "simulator"},
                      journal_path=tmp_path / "journal.db", out=io.StringIO(), quiet=True, parts=SERVICE_PARTS)
    shoe, panel = service.sims["shoe"], service.sims["panel"]
    shoe.inject_on("QUERY_LAST", "nak_in")  # the first QUERY_LAST is refused: reason 3, not allowed now
    views: list[dict] = []
    service.controller.on_view = views.append
    runner = threading.Thread(target=service.run, name="controller")
    try:
        runner.start()
        _until(lambda: views and views[-1]["state"] == "fault", "the table in fault")
        (fault,) = views[-1]["faults"]
        assert (fault["device"], fault["cause"]) == ("shoe", "protocol")
        assert "did not say what it last dispensed" in fault["detail"] and "QUERY_LAST" in fault["detail"]
        assert not panel.wait_for_lamp("open_betting", 0.2)
        panel.turn_key(True)
        assert panel.wait_for_lamp("clear_fault", WAIT)
        panel.press("clear_fault")  # the shoe is asked again, and answers this time
        _until(lambda: any(r["type"] == "ShoeReconciled" for r in read_records(tmp_path / "journal.db")),
               "the shoe's answer compared with the journal")
        assert service.machine.state == "fault"
        assert panel.wait_for_lamp("clear_fault", WAIT)
        panel.press("clear_fault")
        panel.turn_key(False)
        assert panel.wait_for_lamp("open_betting", WAIT)
        assert service.machine.state == "idle"
    finally:
        service.stop()
        runner.join(15)
        service.close()
    types = [r["type"] for r in read_records(tmp_path / "journal.db")]
    assert types.count("QueryLast") == 2 and types.count("FaultCleared") == 1
