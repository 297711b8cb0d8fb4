"""The check of the whole journal store after each start (controller.journal.check) and what the table does when
it fails: a store with pages damaged in the middle of its history (which a start, reading only the last
checkpoint and what follows it, does not read) is found after the service is ready; the round machine then
opens no new round (the ``journal_whole`` condition of ``open_betting``), says why on the panel, and keeps the
condition over restarts until a start's check finds the store whole."""

from __future__ import annotations

import io
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.journal.check import MAX_DETAIL, quick_check
from controller.journal.reader import iter_store, read_records
from controller.round import commands as cmd
from controller.round.graph import BETWEEN_ROUNDS
from controller.round.inputs import JournalDamaged, JournalWhole, ServiceStarted
from controller.round.machine import Round
from controller.round.view import JOURNAL_DAMAGED_TEXT
from controller.service.assembly import Service
from drivers import events as ev
from tests.cli_helpers import crisscross
from tests.round_helpers import CONFIG, NY, TableDriver, antes, of_type

#: Bound of every wait here (seconds): conditions are waited for, never slept on.
WAIT_S = 60
HISTORY_ROUNDS = 20


def _wait(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A store of ``HISTORY_ROUNDS`` simulated rounds (about 300 pages of 4 KiB) and one more round after a
    restart, closed (its WAL checkpointed into it): the pristine copy each test copies."""
    path = tmp_path_factory.mktemp("history") / "j.db"
    for seed, rounds in ((31, HISTORY_ROUNDS - 1), (33, 1)):
        service = Service(load_table_config(), simulate=True, rounds=rounds, seed=seed, journal_path=path,
                          out=io.StringIO(), parts=SERVICE_PARTS)
        try:
            assert service.run() == 0
        finally:
            service.close()
    assert not path.with_name(path.name + "-wal").exists()
    return path


def _copy(history, tmp_path):
    path = tmp_path / "j.db"
    for source in history.parent.glob(history.name + "*"):  # the store and its anchor
        shutil.copy(source, tmp_path / source.name)
    return path


def _damage(path, *, random_bytes: bool, of: str = "records", at: float = 0.25) -> list[int]:
    """Overwrite two adjacent leaf pages of the table or index ``of`` as ``dd`` would, from the fraction ``at``
    of its leaves (by default a quarter into those of ``records``: history long before the last checkpoint,
    which a start does not read; 1 for the last leaf); return their page numbers."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        leaves = [n for (n,) in db.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' "
                                           "ORDER BY pageno", (of,))]
    finally:
        db.close()
    first = min(int(len(leaves) * at), len(leaves) - 1)
    pages = leaves[first:first + 2]
    with path.open("r+b") as handle:
        for page in pages:
            handle.seek((page - 1) * size)
            handle.write(os.urandom(size) if random_bytes else bytes(size))
    return pages


def _start(path, **options) -> tuple[Service, threading.Thread, list[int]]:
    """A service on ``path`` with simulated devices and players, running on a thread of its own until stopped."""
    service = Service(load_table_config(), simulate=True, seed=32, journal_path=path, out=io.StringIO(),
                      metrics_port=0, **options, parts=SERVICE_PARTS)
    status: list[int] = []
    thread = threading.Thread(target=lambda: status.append(service.run()), name="service")
    thread.start()
    return service, thread, status


def _stop(service, thread, status) -> int:
    service.stop()
    thread.join(WAIT_S)
    service.close()
    assert not thread.is_alive() and status
    return status[0]


def _check_done(service) -> str | None:
    _wait(lambda: service.journal_check is not None, "the check started once the service was ready")
    assert service.journal_check.done.wait(WAIT_S), "the check did not end"
    return service.journal_check.result


def _damaged_gauge(service) -> float:
    return service.metrics.registry.get_sample_value("crisscross_journal_damaged")


@pytest.mark.parametrize("of, at", [("starts", 0), ("records", 1)], ids=["starts", "last_records"])
def test_a_store_damaged_where_a_start_reads_is_refused_in_one_line(history, tmp_path, of, at):
    """Pages a start reads overwritten with random bytes: the index of the service's starts (``starts``, read
    for the journal's mode), or the last leaf of ``records`` (the head of the chain): ``crisscross run`` refuses
    to start, exit status 2 and one line naming the store and the damage (docs/operations.md, "The journal"), and
    leaves the store as it found it."""
    path = _copy(history, tmp_path)
    assert _damage(path, random_bytes=True, of=of, at=at)
    before = path.read_bytes()
    proc = crisscross("run", "--simulate", "--rounds", "1", "--journal", str(path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"crisscross: {path}: the journal store is damaged (") and \
        "restore the journal from its copy" in proc.stderr
    assert path.read_bytes() == before


def test_a_round_count_that_a_damaged_store_cannot_reach_ends_the_run_with_status_1(history, tmp_path):
    """``crisscross run --rounds 5`` on a store damaged in its history: the check finds it after the start, the
    round in progress (if any) settles, no round opens, and the run ends with exit status 1 and one line saying
    why, instead of waiting for rounds that cannot open. Nothing of the history is rewritten."""
    path = _copy(history, tmp_path)
    pages = _damage(path, random_bytes=False)
    size = sqlite3.connect(history).execute("PRAGMA page_size").fetchone()[0]
    with path.open("rb") as handle:
        handle.seek((pages[0] - 1) * size)
        damaged = handle.read(2 * size)
    proc = crisscross("run", "--simulate", "--quiet", "--rounds", "5", "--journal", str(path))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"crisscross: stopped: the journal store {path} is damaged and no round opens on "
                                  f"it (") and proc.stderr.endswith("rounds played): restore it from its copy\n")
    records = _records_after_the_last_start(path)
    assert [r["type"] for r in records if r["type"] == "JournalDamaged"] == ["JournalDamaged"]
    assert sum(r["type"] in ("RoundClosed", "RoundVoided") for r in records) < 5
    with path.open("rb") as handle:
        handle.seek((pages[0] - 1) * size)
        assert handle.read(2 * size) == damaged


@pytest.mark.parametrize("random_bytes", [False, True], ids=["zeros", "random"])
def test_a_store_damaged_in_its_history_is_found_after_ready_and_no_new_round_opens(history, tmp_path, caplog,
                                                                                  random_bytes):
    """Two pages of the history overwritten (zeros, or random bytes): the service starts all the same (a start
    reads only the last checkpoint and what follows), becomes ready, and its check of the whole store finds the
    damage: ``JournalDamaged`` is journaled, the ERROR line logged (bounded), the gauge reads 1, the round in
    progress (if any) settles, and no round opens after it: the lamp stays dark and a press is refused with
    the panel's ``Journal damaged: restore it``. The store is not written but for the appended records."""
    path = _copy(history, tmp_path)
    _damage(path, random_bytes=random_bytes)
    reader = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite3.DatabaseError):  # a read of every record meets the damage
        reader.execute("SELECT sum(length(data)) FROM records").fetchone()
    reader.close()
    service, thread, status = _start(path)
    try:
        found = _check_done(service)
        assert found is not None and found != "ok" and len(found) <= MAX_DETAIL
        _wait(lambda: service.machine.journal_damage == found, "the round machine took JournalDamaged")
        _wait(lambda: service.machine.state in BETWEEN_ROUNDS, "the round in progress ended")
        assert "open_betting" not in service.machine.allowed_actions()
        panel = service.sims["panel"]
        _wait(lambda: panel.display.endswith(JOURNAL_DAMAGED_TEXT), "the panel says why")
        _wait(lambda: "open_betting" not in panel.lamps, "the lamp dark")  # the lamps' frame follows the text's
        panel.press("open_betting")  # the dealer tries all the same
        # the panel said it before the press: wait for the refusal itself, journaled, then for the panel
        _wait(lambda: any(r["type"] == "PressRefused" and r["data"].get("button") == "open_betting"
                          for r in _records_after_the_last_start(path)), "the press refused and journaled")
        _wait(lambda: JOURNAL_DAMAGED_TEXT in panel.messages[-3:], "the press refused on the panel")
        _wait(lambda: _damaged_gauge(service) == 1, "the gauge at 1 once JournalDamaged is committed")
        assert service.machine.view()["journal_damaged"] is True
    finally:
        assert _stop(service, thread, status) == 0
    errors = [r for r in caplog.records if r.name == "controller.journal.check" and r.levelno == logging.ERROR]
    assert len(errors) == 1 and "DAMAGED" in errors[0].getMessage() and found in errors[0].getMessage()
    assert len(errors[0].getMessage()) < MAX_DETAIL + len(str(path)) + 120
    after_start = _records_after_the_last_start(path)
    types = [r["type"] for r in after_start]
    damaged = types.index("JournalDamaged")
    assert after_start[damaged]["kind"] == "event" and after_start[damaged]["data"] == {"detail": found}
    assert "RoundOpened" not in types[damaged:]
    refused = [r["data"] for r in after_start[damaged:] if r["type"] == "PressRefused"]
    assert any(r["button"] == "open_betting" and "journal store is damaged" in r["reason"] for r in refused)


def _records_after_the_last_start(path) -> list[dict]:
    """The records from the last ``ServiceStarted`` on, read by seq past the damaged pages (a full read of the
    store fails on them)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        start = db.execute("SELECT max(seq) FROM records WHERE type = 'ServiceStarted'").fetchone()[0]
    finally:
        db.close()
    return list(iter_store(path, after=start - 1))


def test_a_whole_store_is_checked_and_play_goes_on(history, tmp_path, caplog):
    """On a whole store the check passes (INFO line, gauge 0), nothing is journaled of it, and rounds open after
    it as before."""
    caplog.set_level(logging.INFO, logger="controller.journal.check")
    path = _copy(history, tmp_path)
    service, thread, status = _start(path)
    try:
        assert _check_done(service) == "ok"
        closed = service.controller.rounds_closed
        _wait(lambda: service.controller.rounds_closed > closed, "a round opened and closed after the check")
        assert _damaged_gauge(service) == 0
    finally:
        service.stop_after_round()
        thread.join(WAIT_S)
        service.close()
        assert status == [0]
    assert any(r.levelno == logging.INFO and "whole (quick_check ok" in r.getMessage() for r in caplog.records
               if r.name == "controller.journal.check")
    types = [r["type"] for r in read_records(path)]
    assert "JournalDamaged" not in types and "JournalWhole" not in types
    assert types.count("RoundOpened") > HISTORY_ROUNDS


def test_the_check_reads_beside_the_writer_and_never_writes(history, tmp_path):
    """``quick_check`` through its read-only connection while a writer holds the store open in WAL mode with
    commits in its WAL: "ok", and the store's bytes are the same after it."""
    path = _copy(history, tmp_path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL").fetchall()
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO meta (name, value) VALUES ('check', 'beside a writer')")
    before = path.read_bytes()
    try:
        assert quick_check(path) == "ok"
        assert path.read_bytes() == before  # nothing written, nothing checkpointed by the reader
    finally:
        writer.close()


def test_a_restart_on_the_damaged_store_keeps_the_table_closed_and_a_restored_store_opens_it(history, tmp_path):
    """The condition is kept over restarts (the round machine's checkpoint; a start's ``ServiceStarted`` does not
    clear it): a restart on the same damaged store opens no round at all, its own check finding the damage again.
    The store restored (here: the history's pages put back, the records since appended kept), the next start's
    check passes, ``JournalWhole`` is journaled, the gauge reads 0 and rounds open again."""
    path = _copy(history, tmp_path)
    size = sqlite3.connect(history).execute("PRAGMA page_size").fetchone()[0]
    pages = _damage(path, random_bytes=False)
    service, thread, status = _start(path)
    try:
        _check_done(service)
        _wait(lambda: not service.machine.journal_whole(), "the round machine took JournalDamaged")
        _wait(lambda: service.machine.state in BETWEEN_ROUNDS, "the round in progress ended")
    finally:
        _stop(service, thread, status)
    service, thread, status = _start(path)
    try:
        assert not service.machine.journal_whole() and _damaged_gauge(service) == 1  # before its own check
        assert _check_done(service) != "ok"
        _wait(lambda: service.machine.state in BETWEEN_ROUNDS and service.machine.self_checked, "ready")
    finally:
        _stop(service, thread, status)
    assert "RoundOpened" not in [r["type"] for r in _records_after_the_last_start(path)]
    with history.open("rb") as good, path.open("r+b") as damaged:  # the restore: the damaged pages from the copy
        for page in pages:
            good.seek((page - 1) * size)
            damaged.seek((page - 1) * size)
            damaged.write(good.read(size))
    service, thread, status = _start(path)
    try:
        assert _check_done(service) == "ok"
        _wait(lambda: service.machine.journal_whole(), "the round machine took JournalWhole")
        _wait(lambda: _damaged_gauge(service) == 0, "the gauge back at 0 once JournalWhole is committed")
        closed = service.controller.rounds_closed
        _wait(lambda: service.controller.rounds_closed > closed, "a round opened and closed again")
    finally:
        _stop(service, thread, status)
    types = [r["type"] for r in _records_after_the_last_start(path)]
    assert "JournalWhole" in types and types.index("JournalWhole") < types.index("RoundOpened")


# ---------------------------------------------------------------------- the round machine's rule


def _lock_two_seats(driver: TableDriver) -> None:
    driver.open_betting()
    driver.lock({1: antes(500), 3: antes(1000)})
    driver.deal(("Kh", "Kd", "7c", "2s", "9d"), {1: ("9h", "9s"), 3: ("4c", "5h")})


def test_a_damaged_journal_lets_the_round_in_progress_settle_and_refuses_the_next_one():
    """``JournalDamaged`` mid-round: the round plays on and settles; then ``open_betting`` is neither lit nor
    allowed (the graph's ``journal_whole``), a press is refused with the panel's text, the view says so, a
    checkpoint and a restart (``ServiceStarted``) keep it; ``JournalWhole`` opens the table again."""
    driver = TableDriver()
    driver.start()
    _lock_two_seats(driver)
    out = driver.send(JournalDamaged("*** in database main *** Page 57: btreeInitPage() returns error code 11"))
    assert of_type(out, cmd.Display) == [] and driver.state == "across_decision"
    for step in ("across", "down", "middle"):
        driver.decide(step, {1: 500, 3: 1000})
        driver.reveal()
    assert driver.state == "closed" and of_type(driver.outputs, cmd.RoundClosed)
    machine = driver.machine
    assert machine.prompt() == f"Round 1 settled. {JOURNAL_DAMAGED_TEXT}"
    assert not machine.may_open_betting() and "open_betting" not in machine.allowed_buttons()
    out = driver.press("open_betting")
    assert [type(o) for o in out] == [cmd.PressRefused, cmd.Display] and out[1].text == JOURNAL_DAMAGED_TEXT
    assert "journal store is damaged" in out[0].reason and driver.state == "closed" and machine.round_no == 1
    assert machine.view()["journal_damaged"] is True
    restored = Round(CONFIG, NY)
    restored.restore(machine.checkpoint())
    assert restored.handle(ServiceStarted()) == machine.handle(ServiceStarted())
    assert not machine.journal_whole() and not restored.journal_whole()
    driver.start()
    assert machine.prompt() == f"Table ready. {JOURNAL_DAMAGED_TEXT}"
    assert "open_betting" not in machine.allowed_actions()
    out = driver.send(JournalWhole())
    assert machine.journal_whole() and "open_betting" in [*of_type(out, cmd.SetLamps)[-1].buttons]
    driver.open_betting()
    assert driver.state == "betting" and machine.round_no == 2


def test_a_damaged_journal_between_rounds_says_so_at_once_and_a_whole_one_changes_nothing():
    driver = TableDriver()
    driver.start()
    out = driver.send(JournalDamaged("database disk image is malformed"))
    assert of_type(out, cmd.Display)[-1].text == JOURNAL_DAMAGED_TEXT
    assert "open_betting" not in of_type(out, cmd.SetLamps)[-1].buttons
    fresh = TableDriver()
    fresh.start()
    assert fresh.send(JournalWhole()) == [] and fresh.machine.journal_whole()
    assert fresh.send(ev.ButtonPressed("open_betting")) and fresh.state == "betting"


def test_a_stop_interrupts_a_check_inside_sqlite_at_once(tmp_path, monkeypatch):
    """``PRAGMA quick_check`` is one step of SQLite's virtual machine, which a progress handler cannot stop
    within: a stop interrupts the statement itself (a service stopped after a long history once waited 5 s for
    it). Ordered, not timed: the stop comes once the check's statement has begun (its progress handler, which
    here never stops it, was called); a check that ran on to its end would report ``ok``."""
    from controller.journal import check

    path = tmp_path / "big.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)")
    db.execute("CREATE INDEX ib ON t(b)")
    db.execute("INSERT INTO t(b) SELECT randomblob(200) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
               "SELECT x + 1 FROM c WHERE x < 100000) SELECT x FROM c)")
    db.commit()
    db.close()
    running = threading.Event()

    def progress(self):  # the statement has begun; this handler itself never stops it: the interrupt must
        running.set()
        return False

    monkeypatch.setattr(check.Interrupter, "progress", progress)
    found = []
    journal_check = check.JournalCheck(path, found.append, report_whole=True)
    journal_check.start()
    assert running.wait(WAIT_S), "the check never began"
    journal_check.stop(timeout=WAIT_S)
    assert journal_check.done.is_set() and journal_check.result is None and found == []
