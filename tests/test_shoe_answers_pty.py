"""The shoe's answers that do not come as asked, over real pseudo-terminals.

- QUERY_LAST at the start (docs/architecture.md "Crash recovery": the shoe is asked what it last dispensed before
  anything else, and the table opens only on its answer): a shoe that refuses the question (NAK) used to leave
  the service in ``starting`` for good, with nothing on the panel to clear; now the table is held in a fault the
  panel and the view show, and a supervisor has the shoe asked again.
- A STACK that does not parse (docs/protocol.md "Shoe"): it used to be NAKed, asked for again, answered the same,
  and reported after the repeats as ``timeout`` "no answer to DISPENSE"; now it is ``stack_malformed``, named by
  what is wrong (a position, never a card), at once, and not asked for again.
"""

from __future__ import annotations

import io
import queue
import threading

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.journal.reader import read_records
from controller.service.assembly import Service
from drivers.events import DeviceFault, DeviceReady, ShuffleComplete
from drivers.shoe.driver import ShoeDriver
from drivers.shoe.simulator import ShoeSimulator
from drivers.timing import LinkTiming
from tests.pty_helpers import WAIT, expect, expect_quiet, until

pytestmark = pytest.mark.timeout(90)


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
        until(lambda: views and views[-1]["state"] == "fault", "the table in fault")
        (fault,) = views[-1]["faults"]
        assert (fault["device"], fault["cause"]) == ("shoe", "protocol")
        assert "did not say what it last dispensed" in fault["detail"] and "QUERY_LAST" in fault["detail"]
        assert not panel.wait_for_lamp("open_betting", 0.2)
        panel.turn_key(True)
        assert panel.wait_for_lamp("clear_fault", WAIT)
        panel.press("clear_fault")  # the shoe is asked again, and answers this time
        until(lambda: any(r["type"] == "ShoeReconciled" for r in read_records(tmp_path / "journal.db")),
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


#: Short repeats, so that a DISPENSE asked again would show as a ``timeout`` within the quiet time below.
FAST = LinkTiming(handshake_timeout=2.0, response_timeout=0.1, response_timeout_max=0.4, retries=3,
                  heartbeat_interval=1.0, link_silence=5.0, reconnect_min=0.05, reconnect_max=0.2)


def test_a_stack_that_does_not_parse_is_a_malformed_stack_at_once_never_a_timeout():
    sim = ShoeSimulator(seed=3)
    sim.start()
    events: queue.Queue = queue.Queue()
    driver = ShoeDriver(sim.port, events, timing=FAST)
    driver.start()
    try:
        expect(events, DeviceReady)
        driver.shuffle()
        expect(events, ShuffleComplete)
        sim.inject("garbled_card")  # the next new stack's second card goes on the line as "Zz"
        driver.dispense(7, 5)
        fault = expect(events, DeviceFault)
        assert (fault.device, fault.code) == ("shoe", "stack_malformed")
        assert fault.detail == "STACK for txn 7 is malformed: card 2 is not a two-character card"
        dealt = sim.dispensed[-1][1]
        assert not [card for card in dealt if card in fault.detail]  # a position, never a card
        expect_quiet(events, 2.0)  # not asked for again: no timeout follows
        assert driver.protocol_errors == 1
    finally:
        driver.stop()
        sim.stop()
