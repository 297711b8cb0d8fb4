"""The crash test's report of a last run that did not stop (hil/crash.py): what the panel showed and which of
the simulated table's threads still ran, so that a stall can be told from a hang of the service."""

import threading
from types import SimpleNamespace

from hil.crash import _stuck


def test_a_stalled_table_is_reported_with_the_panel_and_the_threads():
    release = threading.Event()
    waiting = threading.Thread(target=release.wait, name="simulated-table")
    ended = threading.Thread(target=lambda: None, name="simulated-supervisor")
    waiting.start()
    ended.start()
    ended.join()
    try:
        table = SimpleNamespace(threads=(waiting, ended), rounds_played=7)
        panel = SimpleNamespace(lamps={"paid", "clear_fault"}, display="Seat 3 pay 500: AA 500")
        seen = _stuck(table, {"panel": panel})
    finally:
        release.set()
        waiting.join()
    assert seen == ("panel lamps ['clear_fault', 'paid'], display 'Seat 3 pay 500: AA 500'; simulated-table running, "
                    "simulated-supervisor ended; 7 rounds played by the table")
