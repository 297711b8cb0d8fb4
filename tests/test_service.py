"""The service over real pseudo-terminals: faults stop the round in a defined state; a signal stops cleanly.

Faults (domain.md, "What the industry expects"): a jam, an unplugged device, a shuffle that does not count 52
cards each move the round to the fault state with its cause recorded in the journal, and nothing is dealt or
settled while it is held; the simulated supervisor then clears it (the round resumes) or voids it. Hole-card secrecy: nothing on the panel or in the summaries shows a card before it is turned.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.journal.chain import verify_chain
from controller.journal.reader import read_records, rounds_ended
from controller.journal.record import JournalError
from controller.journal.recall import rounds_from_records
from controller.service.assembly import Service, run_service
from tests.postgres import wait_until


@pytest.fixture
def service_factory(tmp_path):
    made = []

    def make(**kwargs):
        kwargs.setdefault("journal_path", tmp_path / "journal.db")
        kwargs.setdefault("out", io.StringIO())
        service = Service(load_table_config(), simulate=True, **kwargs, parts=SERVICE_PARTS)
        made.append(service)
        return service

    yield make
    for service in made:
        service.close()


def _types(path):
    return [r["type"] for r in read_records(path)]


def _check(path, service):
    """The rig's journal checks (hil.checks) with the shoe simulator's own record: no discrepancy."""
    from hil.checks import check_journal

    _, problems = check_journal(path, shoe_dispensed=service.sims["shoe"].dispensed, against_settle=False)
    assert problems == []


def test_a_part_that_fails_to_stop_leaves_the_later_ones_stopped_and_the_journal_closed(service_factory,
                                                                                      monkeypatch, caplog):
    """``Service.close`` stopped at the first part whose stop raised: the drivers after it, the simulators and the
    journal were never closed (its lock held until the process ended). Now every part is tried, in order, each
    failure logged naming the part, and the first failure still reaches the caller."""
    service = service_factory()
    stopped: list[str] = []

    def recording(name, stop):
        def recorded(*args, **kwargs):
            stopped.append(name)
            return stop(*args, **kwargs)
        return recorded

    def stuck(*_):
        stopped.append("shoe")
        raise OSError("the shoe's port does not close")

    first, *later = service.drivers
    assert first == "shoe"
    monkeypatch.setattr(service.drivers["shoe"], "stop", stuck)
    for name in later:
        monkeypatch.setattr(service.drivers[name], "stop", recording(name, service.drivers[name].stop))
    for name, sim in service.sims.items():
        monkeypatch.setattr(sim, "stop", recording(f"{name} simulator", sim.stop))
    monkeypatch.setattr(service.journal, "close", recording("journal", service.journal.close))
    with caplog.at_level("ERROR", logger="controller.service.assembly"):
        with pytest.raises(OSError, match="the shoe's port does not close"):
            service.close()
    assert stopped == ["shoe", *later, *(f"{name} simulator" for name in service.sims), "journal"]
    assert service.journal._closed and not service._link_dir.exists()
    assert "the shoe driver" in caplog.text and "the shoe's port does not close" in caplog.text


def test_a_refused_start_whose_journal_fails_to_close_still_raises_its_refusal(tmp_path, monkeypatch, caplog):
    """A start refused after the journal was opened (here: the journal kept for another table) undid itself with
    ``try: stop the ports finally: close the journal``: a journal whose close raised replaced the refusal, so the
    operator read a close failure, not why the run was refused. Now every opened part is tried, the refusal is
    the error raised, and the close failure is logged and named on it as a note; the metrics port is closed."""
    from controller.journal.store import Journal

    def kept_elsewhere(*_):
        raise JournalError("journal.db: kept for table T-9, not this one")

    def stuck(self):
        raise OSError("the store's disk is gone")

    from controller.service.metrics import ServiceMetrics

    closed: list[str] = []
    close_metrics = ServiceMetrics.close

    def metrics_closed(self):
        closed.append("metrics")
        close_metrics(self)

    monkeypatch.setattr("controller.service.assembly.check_kept_for", kept_elsewhere)
    monkeypatch.setattr(Journal, "close", stuck)
    monkeypatch.setattr(ServiceMetrics, "close", metrics_closed)
    with caplog.at_level("ERROR", logger="controller.service.assembly"):
        with pytest.raises(JournalError, match="kept for table T-9") as refused:
            Service(load_table_config(), simulate=True, journal_path=tmp_path / "journal.db", out=io.StringIO(),
                    metrics_port=0, parts=SERVICE_PARTS)
    assert any("the journal failed to stop" in note and "the store's disk is gone" in note
               for note in refused.value.__notes__)
    assert "the journal failed to stop" in caplog.text
    assert closed == ["metrics"]


def test_a_start_refused_once_the_drivers_were_made_raises_its_refusal_not_a_part_s_close(tmp_path, monkeypatch,
                                                                                          caplog):
    """The scripted table refused (a factory's ``ConfigError`` or ``OSError``, ``ServiceParts``) while a driver's
    port failed to close: ``close``'s failure replaced the refusal. Now the refusal is raised, every part is
    still closed (the journal's lock let go: a second service opens the same journal), and the driver's failure
    is named on the refusal as a note."""
    from drivers.link import Device

    def refused_table(*_):
        raise OSError("the scripted table's seats file cannot be read")

    def stuck(self):
        raise OSError("the shoe's port does not close")

    parts = dataclasses.replace(SERVICE_PARTS, table=refused_table)
    monkeypatch.setattr(Device, "stop", stuck)
    with caplog.at_level("ERROR", logger="controller.service.assembly"):
        with pytest.raises(OSError, match="seats file cannot be read") as refused:
            Service(load_table_config(), simulate=True, journal_path=tmp_path / "journal.db", out=io.StringIO(),
                    parts=parts)
    assert any("the shoe's port does not close" in note for note in refused.value.__notes__)
    assert "the shoe driver failed to stop" in caplog.text
    monkeypatch.undo()
    again = Service(load_table_config(), simulate=True, journal_path=tmp_path / "journal.db", out=io.StringIO(),
                    parts=SERVICE_PARTS)
    again.close()


def test_a_jam_during_the_deal_is_cleared_by_the_supervisor_and_the_round_resumes(service_factory, tmp_path):
    """A shoe jam during the deal faults the round (cause ``jam``, resumable); nothing is dealt or settled
    while it is held; the supervisor (key turned) clears it, the round resumes by asking again for the same
    transaction, and the shoe dispenses the cross exactly once."""
    service = service_factory(rounds=3, seed=11)
    service.sims["shoe"].inject("jam")
    assert service.run() == 0
    service.close()
    records = read_records(tmp_path / "journal.db")
    types = [r["type"] for r in records]
    faults = [r["data"] for r in records if r["type"] == "FaultRaised"]
    assert [(f["round_no"], f["device"], f["cause"], f["resumable"]) for f in faults] == [(1, "shoe", "jam", True)]
    fault_at, cleared_at = types.index("FaultRaised"), types.index("FaultCleared")
    assert "StackDealt" not in types[fault_at:cleared_at] and "SeatSettled" not in types[:cleared_at]
    cleared = records[cleared_at]["data"]
    assert (cleared["by"], cleared["role"], cleared["causes"]) == ("SIM-SUPERVISOR", "supervisor", ["jam"])
    dispenses = [r["data"]["txn_id"] for r in records if r["type"] == "Dispense"]
    assert dispenses.count(16) == 2  # asked again after the clear, same transaction id
    assert [txn for txn, _ in service.sims["shoe"].dispensed].count(16) == 1
    assert types.count("RoundClosed") == 3
    assert any(m.startswith("FAULT jam") for m in service.sims["panel"].messages)
    assert verify_chain(records) is None
    _check(tmp_path / "journal.db", service)


def test_a_sensor_board_unplugged_and_back_under_another_port_resumes(service_factory, tmp_path):
    """Link loss (domain.md faults): the sensor board vanishes after the first round and comes back under
    another pty name; the round faults as ``link_lost``, the driver finds the board again by identity, the
    supervisor clears and the rounds go on; every round closes and the journal checks pass."""
    service = service_factory(rounds=4, seed=12)
    sensors = service.sims["sensors"]
    first_port = sensors.port

    def unplug_after_first_round():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and service.controller.rounds_closed < 1:
            time.sleep(0.01)
        sensors.inject("replug", after=0.5)

    pulling = threading.Thread(target=unplug_after_first_round)
    pulling.start()
    status = service.run()
    pulling.join()
    assert status == 0
    assert sensors.port != first_port
    records = read_records(tmp_path / "journal.db")
    faults = [r["data"] for r in records if r["type"] == "FaultRaised"]
    assert [(f["device"], f["cause"]) for f in faults] == [("sensors", "link_lost")]
    assert [r["data"]["device"] for r in records if r["type"] == "DeviceReady"].count("sensors") == 2
    assert sum(r["type"] == "FaultCleared" for r in records) == 1
    assert sum(r["type"] == "RoundClosed" for r in records) == 4
    _check(tmp_path / "journal.db", service)


def test_a_shuffle_that_does_not_count_52_cards_faults(service_factory, tmp_path, monkeypatch):
    """Card accounting: a 52-card count is verified at each shuffle; a mismatch stops the round (cause
    ``card_count``, resumable once the deck is fixed: docs/architecture.md). The simulated supervisor clears it
    three times, the shoe shuffling again each time, then voids the round in its fault, with nothing dealt and
    every wager (none yet locked) returned."""
    from drivers.shoe import simulator

    monkeypatch.setattr(simulator.protocol, "DECK", simulator.protocol.DECK[:-1])
    service = service_factory(rounds=1, seed=13)
    service.run()
    records = read_records(tmp_path / "journal.db")
    faults = [r["data"] for r in records if r["type"] == "FaultRaised"]
    assert {(f["cause"], f["detail"]) for f in faults} == {("card_count", "shuffle counted 51 cards, 52 expected")}
    assert len(faults) == 4 and [r["type"] for r in records].count("FaultCleared") == 3
    types = [r["type"] for r in records]
    assert "StackDealt" not in types and "WagersLocked" not in types
    (voided,) = [r["data"] for r in records if r["type"] == "RoundVoided"]
    assert voided["seats"] == [] and voided["totals"]["wagered"] == 0 and voided["reason"].startswith("fault: card_count")


def test_panel_and_summaries_never_show_a_card_before_it_is_turned(service_factory, tmp_path):
    out = io.StringIO()
    service = service_factory(rounds=10, seed=14, out=out)
    assert service.run() == 0
    rounds = rounds_from_records(read_records(tmp_path / "journal.db"))
    panel_by_round = _split(service.sims["panel"].messages, r"^Round (\d+): place your bets")
    summary_by_round = _split(out.getvalue().splitlines(), r"^Round (\d+) \|")
    folds = 0
    for number, rnd in rounds.items():
        shown = " ".join(panel_by_round[number] + summary_by_round[number])
        for seat, settled in rnd.settlements.items():
            if settled["folded_at"]:
                folds += 1
                leaked = [c for c in rnd.seat_cards(seat) if re.search(rf"\b{c}\b", shown)]
                assert leaked == [], f"round {number} seat {seat} folded; its cards were shown"
    assert folds, "the seeded run must contain folds for this test to mean anything"
    # the panel shows community cards only in the reveal messages, in the order they were turned
    card = re.compile(r"\b[2-9TJQKA][cdhs]\b")
    panel_cards = [c for m in service.sims["panel"].messages for c in card.findall(m)]
    turned = [c for rnd in rounds.values() for _, cards in rnd.reveals for c in cards]
    assert panel_cards == turned


def _split(lines, pattern):
    """Group lines by the round number that the last line matching ``pattern`` announced."""
    groups, current = {}, None
    for line in lines:
        match = re.match(pattern, line)
        if match:
            current = int(match.group(1))
        if current is not None:
            groups.setdefault(current, []).append(line)
    return groups


def test_summary_shows_the_cross_decisions_results_and_totals(service_factory, tmp_path):
    out = io.StringIO()
    service = service_factory(rounds=2, seed=15, out=out)
    assert service.run() == 0
    text = out.getvalue()
    assert text.count("Round ") == 2
    assert re.search(r"cross: across \w\w \w\w \| down \w\w \w\w \| middle \w\w", text)
    assert re.search(r"totals: wagered [\d,]+\.\d\d \| returned [\d,]+\.\d\d \| collected", text)
    assert re.search(r"ante_across [\d,]+\.\d\d (win|push|lose) [+-]?[\d,]+\.\d\d", text)


def _signalled_once(process: subprocess.Popen, ready, what: str, signum: int) -> str:
    """Send ``signum`` to ``process`` once ``ready()`` is true (within 60 s: ``AssertionError`` naming ``what``),
    wait for it to end (60 s) and return its standard error; a process still running then is killed."""
    try:
        wait_until(lambda: process.poll() is not None or ready(), 60, what)
        process.send_signal(signum)
        return process.communicate(timeout=60)[1]
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_stops_the_service_cleanly_with_the_journal_intact(tmp_path, signum):
    """SIGTERM (a service manager's stop) and SIGHUP (sent when the terminal the service was started from goes, as
    an ssh connection closing: by default it killed the process, the round in play left open) are taken alike
    (docs/commands.md, ``crisscross run``): the round in progress finishes, the stop is journaled, exit 0."""
    journal = tmp_path / "journal.db"
    proc = subprocess.Popen([sys.executable, "-m", "controller", "run", "--simulate", "--seed", "16", "--quiet",
                             "--journal", str(journal)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = _signalled_once(proc, lambda: rounds_ended(journal), "a first round played", signum)
    assert proc.returncode == 0, err
    records = read_records(journal)
    assert verify_chain(records) is None
    assert records[-1]["type"] == "SignificantEvent" and records[-2]["type"] == "ServiceStopped"  # and its event
    opened = [r["round"] for r in records if r["type"] == "RoundOpened"]
    assert [r["round"] for r in records if r["type"] in ("RoundClosed", "RoundVoided")] == opened  # none left open


#: ``crisscross run --simulate --rounds 5`` in a process of its own, whose shoe is pulled out (fault injection
#: ``unplug``, docs/protocol.md) as the first player's stack is asked for, and stays out: the round is held in
#: its fault until the simulated supervisor gives up waiting for the shoe (after 8 s here, not 20) and voids it.
SHOE_PULLED_IN_ROUND_ONE = r"""
import sys
from controller.cli.main import main
from controller.simulated.table import SimulatedTable
from drivers.shoe.simulator import ShoeSimulator

start, setup = ShoeSimulator.start, SimulatedTable.__init__

def pulled_at_the_second_dispense(self):
    start(self)
    self.inject_on("DISPENSE", "unplug", nth=2)

def patience_of_8_s(self, *args, **kwargs):
    setup(self, *args, **kwargs)
    self.patience = 8.0

ShoeSimulator.start, SimulatedTable.__init__ = pulled_at_the_second_dispense, patience_of_8_s
sys.exit(main(["run", "--simulate", "--rounds", "5", "--seed", "16", "--quiet", "--journal", sys.argv[1]]))
"""


def test_sigterm_while_the_table_is_held_in_a_fault_exits_1(tmp_path):
    """docs/commands.md, ``crisscross run``: the first signal lets a round held in its fault state be cleared or
    voided first, and the exit status is then 1 (it was 0 once the supervisor voided the round: the stop came
    out of a fault, before the run's --rounds, and nothing said so). A real process and a real SIGTERM, sent once
    the journal holds the fault."""
    journal = tmp_path / "journal.db"
    process = subprocess.Popen([sys.executable, "-c", SHOE_PULLED_IN_ROUND_ONE, str(journal)], cwd=tmp_path,
                               env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def fault_journaled() -> bool:
        try:
            return any(r["type"] == "FaultRaised" for r in read_records(journal))
        except JournalError:  # the store not made yet (its file there, its table not)
            return False

    err = _signalled_once(process, fault_journaled, "the shoe's link fault in the journal", signal.SIGTERM)
    records = read_records(journal)
    types = [r["type"] for r in records]
    fault = next(r for r in records if r["type"] == "FaultRaised")
    assert fault["round"] == 1 and fault["data"]["cause"] == "link_lost"
    assert types.index("RoundVoided") > types.index("FaultRaised")  # the supervisor voided the held round ...
    assert rounds_ended(journal) == 1 and types[-2] == "ServiceStopped"  # ... and the run stopped, 4 rounds short
    assert verify_chain(records) is None
    assert process.returncode == 1, err
    assert re.search(r"crisscross: stopped on a fault: link_lost .*held the table when the stop was asked, and "
                     r"round 1 was then voided", err), err


def test_a_signal_while_the_service_closes_does_not_kill_it(tmp_path, monkeypatch):
    """A service manager that sends SIGTERM twice: the second may arrive while ports and threads close (about a
    second). The service is stopping already; the signal must not reach the handler that was in place before
    (by default, death with status 143) and the status stays the one of the run."""
    before: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: before.append(signum))
    original_close = Service.close

    def close(service):
        os.kill(os.getpid(), signal.SIGTERM)
        original_close(service)

    monkeypatch.setattr(Service, "close", close)
    try:
        status = run_service(load_table_config(), simulate=True, rounds=1, seed=4, quiet=True,
                             journal_path=tmp_path / "journal.db", parts=SERVICE_PARTS)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert status == 0 and before == []
    records = read_records(tmp_path / "journal.db")
    assert verify_chain(records) is None and records[-2]["type"] == "ServiceStopped"


def _deal_and_decisions(path):
    return [(r["type"], r["data"]) for r in read_records(path)
            if r["type"] in ("WagersLocked", "StackDealt", "DecisionMade", "SeatSettled", "RoundClosed")]


def test_the_same_seed_replays_the_same_rounds(tmp_path):
    """``--seed`` makes a simulated run reproducible: same shuffles, same players, same settlements."""
    runs = []
    for name in ("a", "b"):
        journal = tmp_path / f"{name}.db"
        proc = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "3", "--seed",
                               "99", "--journal", str(journal)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count("\nRound ") + proc.stdout.startswith("Round ") == 3
        runs.append(_deal_and_decisions(journal))
    assert runs[0] == runs[1]
    assert sum(1 for t, _ in runs[0] if t == "RoundClosed") == 3


def test_rounds_dealt_by_hand_with_payout_mistakes_pass_every_journal_check(tmp_path):
    """Dealing by hand from the start (NY 9 NYCRR 5324.39(d)(1)), in this process: the simulated dealer types
    every card on the panel as it is turned, nothing is asked of the shoe, and pays with mistakes it puts right
    when the sensors show them (the payout check, NY (e)(9)); the rig's journal checks find nothing wrong."""
    config = dataclasses.replace(load_table_config(), manual_dealing=True)
    service = Service(config, simulate=True, rounds=2, seed=4, journal_path=tmp_path / "journal.db",
                      out=io.StringIO(), manual=True, payout_errors=0.5, parts=SERVICE_PARTS)
    try:
        assert service.run() == 0
    finally:
        service.close()
    records = read_records(tmp_path / "journal.db")
    rounds = rounds_from_records(records)
    assert sorted(rounds) == [1, 2] and all(r.manual and r.closed for r in rounds.values())
    assert not any(r["type"] in ("Dispense", "StackDispensed") for r in records)
    assert service.sims["shoe"].dispensed == []
    for rnd in rounds.values():  # the cross and two cards a seat, every one of them typed on the panel
        entered = [c for e in rnd.entries for c in e["cards"]]
        assert len(entered) == 5 + 2 * len(rnd.wagers) and len(set(entered)) == len(entered)
    assert any(r["type"] == "PayoutChecked" and r["data"]["differences"] for r in records)  # a mistake seen
    _check(tmp_path / "journal.db", service)


def test_a_table_dealing_by_hand_plays_on_after_a_restart(tmp_path):
    """``run --simulate --manual`` twice on one journal: the second run's table already deals by hand (the mode
    a supervisor switched to is kept over a restart), and its simulated supervisor, who waited for the lamp of
    ``deal_by_hand``, used to turn the key on and off about six times a second without end, no round opened
    (SupervisorKey, SetLamps and PrivatePanel journaled about 12 times a second). Now it sees the other mode's
    lamp and the round is played by hand; the key is turned a handful of times, not in a loop."""
    config = dataclasses.replace(load_table_config(), manual_dealing=True)
    journal = tmp_path / "journal.db"
    for seed in (4, 5):
        service = Service(config, simulate=True, rounds=1, seed=seed, journal_path=journal, out=io.StringIO(),
                          manual=True, parts=SERVICE_PARTS)
        try:
            assert service.run() == 0
        finally:
            service.close()
    records = read_records(journal)
    second = max(r["seq"] for r in records if r["type"] == "ServiceStarted")
    after = [r for r in records if r["seq"] > second]
    rounds = rounds_from_records(after)
    assert max(rounds) == 2 and rounds[2].manual and rounds[2].closed
    assert sum(r["type"] == "SupervisorKey" for r in after) <= 4
    assert not any(r["type"] in ("Dispense", "StackDispensed") for r in after)


#: The service run by a script of its own, in its main thread as ``crisscross run`` does, with every device on a
#: port that does not exist; once the three link faults are logged and the controller thread waits for an input,
#: SIGTERM is sent to the shoe driver's thread alone (``pthread_kill``): the kernel may hand a process's signal
#: to any of its threads, and Python runs the handler only when the main thread runs again.
SIGNAL_TO_A_DRIVER_THREAD = r"""
import logging, signal, sys, threading, time
from pathlib import Path
from controller.cli.main import main

folder = Path(sys.argv[1])
faults = threading.Semaphore(0)

class Faults(logging.Handler):
    def emit(self, record):
        if "link_lost" in record.getMessage():
            faults.release()

logging.getLogger("controller.service.loop").addHandler(Faults())

def waiting(frame):
    while frame is not None:
        if frame.f_code.co_name == "wait_for" and frame.f_code.co_filename.endswith("threading.py"):
            return True
        frame = frame.f_back
    return False

def signal_the_shoe_thread():
    for _ in range(3):
        faults.acquire(timeout=30)
    main_id = threading.main_thread().ident
    deadline = time.monotonic() + 20
    while not waiting(sys._current_frames().get(main_id)) and time.monotonic() < deadline:
        time.sleep(0.01)
    shoe = next(t for t in threading.enumerate() if t.name == "shoe")
    print("signalled", flush=True)
    signal.pthread_kill(shoe.ident, signal.SIGTERM)

threading.Thread(target=signal_the_shoe_thread, daemon=True).start()
sys.exit(main(["run", "--quiet", "--journal", str(folder / "journal.jsonl"),
               *[arg for name in ("shoe", "sensors", "panel") for arg in ("--port", f"{name}={folder / name}")]]))
"""


def test_sigterm_taken_by_a_driver_thread_stops_the_waiting_service(tmp_path):
    """A SIGTERM that lands on a driver's thread while the controller thread waits for an input stops the
    service: the controller thread's wait is bounded (``IDLE_TURN``), so the main thread runs the handler."""
    process = subprocess.Popen([sys.executable, "-c", SIGNAL_TO_A_DRIVER_THREAD, str(tmp_path)], cwd=tmp_path,
                               env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the service did not stop after SIGTERM to a driver thread (signalled: {'signalled' in out}); "
                    f"its last lines:\n{err[-2000:]}")
    assert "signalled" in out, err[-2000:]
    assert process.returncode == 0, err[-2000:]  # no round was in progress: a clean stop


def test_the_round_summary_names_each_mispay_a_supervisor_accepted():
    """A payout accepted although it differs from the settlement is money that stands: the round's summary left
    it out (only ``recall`` named it), also for a round closed after a restart in its payout."""
    from controller.journal.recall import rounds_from_records
    from controller.journal.summary import format_round

    accepted = {"round_no": 4, "seat": 3, "expected": {"ante_across": 1000}, "seen": {"ante_across": 500},
                "differences": [{"spot": "ante_across", "expected": 1000, "seen": 500, "difference": -500}],
                "short": 500, "over": 0, "by": "sue", "role": "supervisor", "reason": "player agreed"}
    records = [{"round": 4, "type": "RoundOpened", "data": {"round_no": 4}},
               {"round": 4, "type": "MispayAccepted", "data": accepted},
               {"round": 4, "type": "RoundClosed", "data": {"round_no": 4, "totals": {
                   "wagered": 1000, "returned": 0, "collected": 0, "paid": 500, "player_net": 500}}}]
    lines = format_round(rounds_from_records(records)[4]).splitlines()
    assert lines[1:] == ["  seat 3 MISPAY ACCEPTED by sue (supervisor): short 5.00, over 0.00: ante_across expected "
                         "10.00 seen 5.00 (-5.00); why: player agreed",
                         "  totals: wagered 10.00 | returned 0.00 | collected 0.00 | paid 5.00 | players net +5.00"]
