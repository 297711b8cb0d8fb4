"""A request to read and its answer in one commit (controller/service/loop.py, ``READ_WAIT_S``; docs/architecture.md,
"Write-ahead"): "no more bets" asks the sensors for the layout; the request goes out at once, and the commit of the
press waits for the answer, which is applied and joins it, so that the press, the lock and the first dispense are
made durable together, and the dispense goes out only after that commit. Without an answer the press is committed
alone; a commit that fails sends nothing but the request; a stop marker ends the wait.

Each case orders its events: the stand-in sensors answer as they are asked (the answer is on the queue before the
controller looks for it), or never."""

from __future__ import annotations

import queue

import pytest

from controller.journal.store import Journal
from controller.round import commands as cmd
from controller.service.loop import STOP, Controller
from drivers import events as ev
from tests.round_helpers import TableDriver, antes, spots_of

WAGERS = {1: antes(500, 100), 3: antes(1000)}


class StandIns:
    """The three devices as the controller's drivers: every command is kept with the number of commits that had
    returned when it was handed over; the sensors answer a request to read at once (``answer``) or never."""

    def __init__(self, events: queue.Queue, layout: dict, answer: bool) -> None:
        self.events, self.layout, self.answer = events, layout, answer
        self.sent: list[tuple[int, str]] = []
        self.requests: list[int] = []  # the request ids of the requests to read
        self.commits = 0

    def _keep(self, name: str) -> None:
        self.sent.append((self.commits, name))

    def read_spots(self, request_id: int) -> None:
        self._keep("ReadSpots")
        self.requests.append(request_id)
        if self.answer:
            self.events.put(ev.SpotsSnapshot(request_id, spots_of(self.layout)))

    def dispense(self, txn_id: int, count: int) -> None:
        self._keep("Dispense")

    def shuffle(self) -> None:
        self._keep("Shuffle")

    def query_last(self) -> None:
        self._keep("QueryLast")

    def set_lamps(self, buttons) -> None:
        self._keep("SetLamps")

    def show(self, text: str) -> None:
        self._keep("Display")


def _table(tmp_path, *, answer: bool, fail: bool = False):
    """A controller at betting with ``WAGERS`` on the layout, on a new journal whose commits are counted (each
    one's record types kept in ``committed``; with ``fail`` every commit is refused)."""
    table = TableDriver()
    table.start()
    table.open_betting()
    table.place(WAGERS)
    events: queue.Queue = queue.Queue()
    devices = StandIns(events, table.layout, answer)
    journal = Journal(tmp_path / "journal.db", fsync=False)
    controller = Controller(table.machine, journal, {"shoe": devices, "sensors": devices, "panel": devices}, events)
    committed: list[list[str]] = []
    commit = journal.commit

    def counted(entries, *args, **kwargs):
        if fail:
            raise OSError(28, "No space left on device")
        records = commit(entries, *args, **kwargs)
        devices.commits += 1
        committed.append([record["type"] for record in records])
        return records

    journal.commit = counted
    return controller, devices, committed, journal


def test_the_press_and_the_reading_it_asked_for_are_one_commit_and_the_dispense_follows_it(tmp_path):
    controller, devices, committed, journal = _table(tmp_path, answer=True)
    try:
        controller.process(ev.ButtonPressed("no_more_bets"))
    finally:
        journal.close()
    assert len(committed) == 1
    types = committed[0]
    assert types.index("ButtonPressed") < types.index("ReadSpots") < types.index("SpotsSnapshot") \
        < types.index("WagersLocked") < types.index("Dispense")
    # nothing but the request to read before the commit; the dispense and the panel after it
    assert [name for commits, name in devices.sent if commits == 0] == ["ReadSpots"]
    after = [name for commits, name in devices.sent if commits == 1]
    assert after[0] == "Dispense" and set(after[1:]) <= {"Display", "SetLamps"} and len(after) > 1
    assert controller.machine.state == "dealing_cross"


def test_without_an_answer_the_press_is_committed_alone_and_the_late_answer_in_its_own_commit(tmp_path):
    controller, devices, committed, journal = _table(tmp_path, answer=False)
    try:
        controller.process(ev.ButtonPressed("no_more_bets"))
        assert len(committed) == 1 and "SpotsSnapshot" not in committed[0] and "ReadSpots" in committed[0]
        assert [name for commits, name in devices.sent if commits == 0] == ["ReadSpots"]
        assert "Dispense" not in [name for _, name in devices.sent]
        assert controller.machine.state == "locking"
        controller.process(ev.SpotsSnapshot(devices.requests[-1], spots_of(devices.layout)))
    finally:
        journal.close()
    assert len(committed) == 2 and "SpotsSnapshot" in committed[1] and "Dispense" in committed[1]
    assert [name for commits, name in devices.sent if commits == 2][0] == "Dispense"


def test_a_commit_that_fails_sends_nothing_but_the_request_though_the_answer_came(tmp_path):
    controller, devices, committed, journal = _table(tmp_path, answer=True, fail=True)
    try:
        with pytest.raises(OSError):
            controller.process(ev.ButtonPressed("no_more_bets"))
    finally:
        journal.close()
    assert committed == [] and [name for _, name in devices.sent] == ["ReadSpots"]


def test_a_stop_marker_ends_the_wait_and_stays_first_in_line(tmp_path):
    controller, devices, committed, journal = _table(tmp_path, answer=True)
    controller.events.put(STOP)  # before the answer the request brings
    try:
        controller.process(ev.ButtonPressed("no_more_bets"))
    finally:
        journal.close()
    assert len(committed) == 1 and "SpotsSnapshot" not in committed[0]
    assert controller._pending[0] is STOP
    assert isinstance(controller.events.get_nowait(), ev.SpotsSnapshot)
