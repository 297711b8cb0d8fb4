"""Regression tests, each named after a way the product was broken from the outside."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.journal.chain import verify_chain
from controller.journal.reader import read_records
from controller.journal.record import JournalError
from controller.journal.store import Journal
from controller.service.assembly import Service
from tests.cli_helpers import crisscross
from tests.journal_helpers import forge

EXAMPLE = {"jurisdiction": "ny", "community": {"across": ["7d", "2c"], "down": ["9s", "3h"], "middle": "Kc"},
           "seats": [{"seat": 1, "cards": ["Jh", "Jd"],
                      "wagers": {"ante_across": 500, "ante_down": 500, "across": 1500, "down": 500,
                                 "middle": 1500, "five_card_bonus": 500}}]}


def _crisscross(*args, stdin=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "controller", *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout)


class _BrokenStream(io.StringIO):
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_a_broken_summary_pipe_does_not_stop_the_table(tmp_path):
    service = Service(load_table_config(), simulate=True, rounds=3, seed=21, journal_path=tmp_path / "j.db",
                      out=_BrokenStream(), parts=SERVICE_PARTS)
    try:
        assert service.run() == 0
    finally:
        service.close()
    assert sum(r["type"] == "RoundClosed" for r in read_records(tmp_path / "j.db")) == 3


def _run_stopped_mid_round(service, how):
    """Run ``service`` while another thread calls ``how`` once a round reaches the down decision."""
    watcher = _stop_mid_round(service, how)
    try:
        return service.run()
    finally:
        watcher.join()
        service.close()


def _stop_mid_round(service, how):
    def watch():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and service.machine.state != "down_decision":
            time.sleep(0.002)
        how()

    thread = threading.Thread(target=watch)
    thread.start()
    return thread


def test_the_first_stop_request_lets_the_round_in_progress_finish(tmp_path):
    service = Service(load_table_config(), simulate=True, seed=22, journal_path=tmp_path / "j.db",
                      out=io.StringIO(), parts=SERVICE_PARTS)
    assert _run_stopped_mid_round(service, service.stop_after_round) == 0
    records = read_records(tmp_path / "j.db")
    assert records[-2]["type"] == "ServiceStopped" and records[-2]["data"]["state"] == "closed"  # then its event
    assert records[-1]["data"]["source_seq"] == records[-2]["seq"]
    assert Journal(tmp_path / "j.db").open_rounds == []


def test_an_immediate_stop_mid_round_reports_the_open_round_and_the_next_start_sees_it(tmp_path):
    journal = tmp_path / "j.db"
    service = Service(load_table_config(), simulate=True, seed=23, journal_path=journal, out=io.StringIO(),
                      parts=SERVICE_PARTS)
    assert _run_stopped_mid_round(service, service.stop) == 1
    open_round = read_records(journal)[-1]["round"]
    opened = Journal(journal)
    assert opened.open_rounds == [open_round]
    opened.close()
    proc = _crisscross("run", "--simulate", "--rounds", "1", "--quiet", "--journal", str(journal), timeout=120)
    assert proc.returncode == 0
    assert f"round(s) {open_round} in" in proc.stderr and "never closed" in proc.stderr


def test_an_immediate_stop_is_not_held_behind_the_inputs_waiting_and_says_how_many_it_dropped(tmp_path, caplog):
    """``Service.stop`` put its marker behind every input waiting: a second signal was obeyed only once up to
    1,088 inputs had each been applied and journaled. It now stops after the input being processed; those never
    taken were never journaled nor applied (write-ahead: nothing of them was sent or shown), so they are dropped
    and counted in the log. Here 300 presses wait when the stop comes (the devices' own answers may join them)."""
    from drivers.events import ButtonPressed

    journal = tmp_path / "j.db"
    service = Service(load_table_config(), simulate=True, seed=25, journal_path=journal, out=io.StringIO(),
                      parts=SERVICE_PARTS)
    try:
        for _ in range(300):
            service.events.put(ButtonPressed("confirm"))
        service.stop()
        with caplog.at_level("WARNING", logger="controller.service.loop"):
            assert service.run() == 0
    finally:
        service.close()
    records = read_records(journal)
    assert [r["type"] for r in records if r["kind"] == "event"] == ["ServiceStarted"]  # no press applied
    assert "ServiceStopped" in [r["type"] for r in records]
    (said,) = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    dropped = int(re.match(r"stopping: (\d+) input\(s\) not taken were dropped", said).group(1))
    assert dropped >= 300


def test_a_journal_that_cannot_be_written_stops_the_service_before_anything_more_is_applied(tmp_path, mocker):
    """Each command is sent after the commit that holds it returned, and only then, the panel's after the shoe's
    and the sensors'; a request to read the sensors (``ReadSpots``, changing nothing) as that commit begins; once
    a commit fails, nothing more is sent but such a request. While the supervisor's key is turned, a
    ``PrivatePanel`` sets the panel's whole text and lamps: the panel commands before it in its commit are
    journaled, not sent (docs/architecture.md)."""
    service = Service(load_table_config(), simulate=True, rounds=5, seed=24, journal_path=tmp_path / "j.db",
                      out=io.StringIO(), parts=SERVICE_PARTS)
    original = service.journal.commit
    commits = []  # the command entries of each commit that returned
    sent = []  # (commits returned when it was sent, command)

    attempts = []  # the command entries of each commit begun, the one that failed included

    def failing(entries, *args, **kwargs):
        attempts.append([entry[1] for entry in entries if entry[0] == "command"])
        if len(commits) >= 60:
            raise OSError(28, "No space left on device")
        records = original(entries, *args, **kwargs)
        commits.append([entry[1] for entry in entries if entry[0] == "command"])
        return records

    mocker.patch.object(service.journal, "commit", side_effect=failing)
    real_send = service.controller._send
    mocker.patch.object(service.controller, "_send",
                        side_effect=lambda c: sent.append((len(commits), c)) or real_send(c))
    try:
        assert service.run() == 1
    finally:
        service.close()
    assert service.controller.journal_error is not None
    assert len(commits) == 60 and len(attempts) == 61

    def carried_out(names):  # the panel's commands after the others of the commit, each in its own order
        last_private = max((i for i, name in enumerate(names) if name == "PrivatePanel"), default=-1)
        kept = [name for i, name in enumerate(names) if i > last_private or name not in ("Display", "SetLamps")]
        panel = ("Display", "SetLamps", "PrivatePanel")
        return [name for name in kept if name not in panel] + [name for name in kept if name in panel]

    def read_early(names):  # a commit's requests to read, sent as it begins (after the commits before it)
        return [name for name in names if name == "ReadSpots"]

    assert sum(map(read_early, attempts), []), "no ReadSpots in 61 commits: the test saw no early request"
    assert [type(c).__name__ for j, c in sent if j == 0] == read_early(attempts[0])
    for k, names in enumerate(commits, start=1):
        after = [name for name in carried_out(names) if name != "ReadSpots"]
        assert [type(c).__name__ for j, c in sent if j == k] == after + read_early(attempts[k]), f"commit {k}"
    on_disk = [r["type"] for r in read_records(tmp_path / "j.db") if r["kind"] == "command"]
    assert on_disk == [name for names in commits for name in names]


def test_a_file_size_limit_stops_the_service_with_status_1_and_one_line(tmp_path):
    """A full disk or a file-size limit (here RLIMIT_FSIZE): exit 1 and one line on standard error; what was
    committed before still verifies."""
    import resource

    journal = tmp_path / "j.db"

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (400_000, 400_000))

    proc = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "40", "--quiet",
                           "--seed", "3", "--journal", str(journal)], capture_output=True, text=True, timeout=300,
                          preexec_fn=limit)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("crisscross: stopped: the journal cannot be written: ")
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert verify_chain(read_records(journal)) is None


def test_a_tampered_journal_is_refused_in_one_line(tmp_path):
    journal = tmp_path / "j.db"
    assert _crisscross("run", "--simulate", "--rounds", "1", "--quiet", "--journal", str(journal),
                       timeout=120).returncode == 0
    last = read_records(journal)[-1]  # after the last checkpoint: what a start checks
    forge(journal, ("UPDATE records SET data = ? WHERE seq = ?", ('{"state":"voided"}', last["seq"])))
    before = journal.read_bytes()
    proc = _crisscross("run", "--simulate", "--rounds", "1", "--journal", str(journal))
    assert proc.returncode == 2
    seq = last["seq"]
    assert proc.stderr.count("\n") == 1 and f"line {seq}, seq {seq}: edited: its content does not match" in proc.stderr
    assert journal.read_bytes() == before


@pytest.mark.parametrize("journal", ["/proc/version", "/dev/zero"])
def test_a_journal_path_that_is_not_a_writable_file_is_refused_in_one_line(journal):
    proc = _crisscross("run", "--simulate", "--rounds", "1", "--journal", journal)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_a_journal_in_a_folder_that_does_not_exist_is_refused(tmp_path):
    """``--journal`` with a mistyped folder would begin a second history of the table, cut off from its open
    rounds; the folder must exist (the journal of table.yaml, an installation's own path, is created)."""
    journal = tmp_path / "typo" / "j.db"
    proc = crisscross("run", "--simulate", "--rounds", "1", "--journal", str(journal))  # refused before it starts
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"crisscross: --journal {journal}: no folder {journal.parent} ")
    assert not (tmp_path / "typo").exists()


def test_port_overrides_are_refused_with_simulate():
    proc = crisscross("run", "--simulate", "--rounds", "1", "--port", "shoe=/dev/ttyUSB0")
    assert proc.returncode == 2 and "--port cannot be combined with --simulate" in proc.stderr


@pytest.mark.parametrize(("args", "message"), [
    (("--seed", "0", *(f"--port={d}=/dev/ttyUSB{i}" for i, d in enumerate(("shoe", "sensors", "panel")))),
     "--seed only applies to simulated devices (--simulate, or a port 'simulator')"),
    (("--mistakes", "0.2"), "--mistakes only applies to the simulated players of --simulate"),  # ports: simulator
    (("--port", "shoe=simulator", "--mistakes", "0.2"), "--mistakes only applies"),
])
def test_simulation_options_are_refused_where_nothing_is_simulated(args, message):
    """On real devices a seed or a mistake rate would do nothing; saying so beats ignoring them."""
    proc = crisscross("run", "--rounds", "1", *args)
    assert proc.returncode == 2 and proc.stderr.startswith(f"crisscross: {message}") and proc.stderr.count("\n") == 1


def test_verbose_is_accepted_after_the_command():
    proc = crisscross("settle", "-v", stdin=json.dumps(EXAMPLE))
    assert proc.returncode == 0 and json.loads(proc.stdout)["seats"][0]["net"] == 4000


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["seats"][0].update(seat=1.0), "seats[0].seat"),
    (lambda d: d.update(seats=[]), "seats"),
    (lambda d: d["seats"][0].update(cards=["Jh", None]), "cards[1]"),
])
def test_settle_refuses_a_float_seat_an_empty_table_and_a_missing_card(edit, field):
    data = json.loads(json.dumps(EXAMPLE))
    edit(data)
    proc = crisscross("settle", stdin=json.dumps(data))
    assert proc.returncode == 2 and proc.stdout == "" and field in proc.stderr


@pytest.mark.parametrize("text", ['{"seats": [' * 100_000, '{"jurisdiction": ' + "9" * 5000 + "}"])
def test_settle_refuses_pathological_json_without_a_traceback(text):
    proc = crisscross("settle", stdin=text)
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1


def test_settle_names_bad_input_without_echoing_all_of_it():
    data = json.loads(json.dumps(EXAMPLE))
    data["seats"][0]["cards"][0] = "X" * 1_000_000
    proc = crisscross("settle", stdin=json.dumps(data))
    assert proc.returncode == 2 and len(proc.stderr) < 300


def test_settle_echoes_the_pay_table_file_it_used(tmp_path):
    from controller.settings.files import CONFIG_DIR

    custom = tmp_path / "house.yaml"
    custom.write_text((CONFIG_DIR / "jurisdictions" / "ny.yaml").read_text())
    data = dict(EXAMPLE, jurisdiction=str(custom))
    proc = crisscross("settle", stdin=json.dumps(data))
    assert proc.returncode == 0 and json.loads(proc.stdout)["jurisdiction"] == str(custom)


def test_a_defect_in_the_round_machine_faults_the_round_instead_of_killing_the_service(tmp_path, mocker):
    service = Service(load_table_config(), simulate=True, rounds=2, seed=25, journal_path=tmp_path / "j.db",
                      out=io.StringIO(), parts=SERVICE_PARTS)
    mocker.patch.object(service.machine, "_on_StackDispensed", side_effect=ZeroDivisionError("bug"))
    try:
        assert service.run() == 0  # the service lives on; each faulted round ends voided by the supervisor
    finally:
        service.close()
    records = read_records(tmp_path / "j.db")
    faults = [r["data"] for r in records if r["type"] == "FaultRaised"]
    assert faults[0] == {"round_no": 1, "device": None, "cause": "internal", "detail": "ZeroDivisionError: bug",
                         "resumable": False, "fault_id": faults[0]["fault_id"], "device_detail": ""} \
        and faults[0]["fault_id"] > 0
    assert {f["cause"] for f in faults} == {"internal"}
    assert "FaultCleared" not in [r["type"] for r in records]  # a defect is never cleared, only voided
    voided = [r["data"] for r in records if r["type"] == "RoundVoided"]
    locked = [r["data"] for r in records if r["type"] == "WagersLocked"]
    assert [v["round_no"] for v in voided] == [1, 2]
    assert [v["seats"] for v in voided] == [lk["seats"] for lk in locked]  # every wager returned


def test_settle_refuses_a_repeated_json_key():
    text = json.dumps(EXAMPLE).replace('"ante_down": 500', '"ante_down": 500, "ante_down": 700')
    proc = crisscross("settle", stdin=text)
    assert proc.returncode == 2 and "'ante_down' repeated" in proc.stderr and proc.stdout == ""


def test_the_anchor_is_kept_as_privately_as_the_journal(tmp_path):
    path = tmp_path / "j.db"
    journal = Journal(path)
    journal.commit([("record", "RoundClosed", {"round_no": 1, "totals": {}}, 1)], state={"round": 1})
    journal.close()
    for made in (path, tmp_path / "j.db.anchor"):
        assert made.stat().st_mode & 0o777 == 0o600


def test_the_par_sheet_refuses_odds_beyond_its_exact_arithmetic(tmp_path):
    import yaml

    from controller.settings.files import CONFIG_DIR

    data = yaml.safe_load((CONFIG_DIR / "jurisdictions" / "ny.yaml").read_text())
    data["pay_tables"]["bet"]["pays"]["flush"] = 10**30
    path = tmp_path / "huge.yaml"
    path.write_text(yaml.safe_dump(data))
    proc = crisscross("par-sheet", str(path))
    assert proc.returncode == 2 and "beyond the exact arithmetic" in proc.stderr and proc.stdout == ""


def test_a_second_service_on_a_journal_in_use_is_refused_and_the_first_plays_on(tmp_path):
    """Two services on one journal would interleave their records (seq taken twice, one round's inputs in
    another's): the second is refused in one line with exit 2 while the first holds the store's lock, writes
    nothing, and the first plays on: its rounds all close and its journal verifies. Once the first has stopped (or was killed: the kernel
    drops the lock with the process), the journal opens again."""
    journal = tmp_path / "j.db"
    first = subprocess.Popen([sys.executable, "-m", "controller", "run", "--simulate", "--quiet", "--seed", "4",
                              "--journal", str(journal)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)  # until SIGTERM
    try:
        deadline = time.monotonic() + 60
        while not _opened(journal):
            assert first.poll() is None and time.monotonic() < deadline, "the first service did not start"
            time.sleep(0.05)
        second = _crisscross("run", "--simulate", "--rounds", "1", "--journal", str(journal))
        assert second.returncode == 2, second.stderr
        assert second.stderr.count("\n") == 1 and "in use by another process" in second.stderr
        assert first.poll() is None  # still playing
        first.send_signal(signal.SIGTERM)  # stops after the round in play
        assert first.wait(timeout=120) == 0, first.stderr.read()
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    records = read_records(journal)
    assert verify_chain(records) is None
    opened = [r["round"] for r in records if r["type"] == "RoundOpened"]
    assert opened and [r["round"] for r in records if r["type"] == "RoundClosed"] == opened
    assert sum(r["type"] == "ServiceStarted" for r in records) == 1  # the second never wrote
    again = _crisscross("run", "--simulate", "--rounds", "1", "--quiet", "--journal", str(journal), timeout=120)
    assert again.returncode == 0, again.stderr


def _opened(journal: Path) -> bool:
    """True once the service has journaled its start (it holds the journal's lock by then)."""
    try:
        return journal.exists() and any(r["type"] == "ServiceStarted" for r in read_records(journal))
    except (JournalError, sqlite3.Error, OSError):  # the store is being created: not yet
        return False


def test_link_folders_left_by_killed_services_are_removed_at_the_next_start(tmp_path):
    """A service killed (SIGKILL) left its ``crisscross-sims-*`` folder of port links in /tmp for good: the next
    start removes those of processes that no longer run, and leaves a running one's and anything else."""
    from controller.service.simulators import link_folder

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its process number now names no process
    left = tmp_path / f"crisscross-sims-{gone.pid}-x1"
    running = tmp_path / f"crisscross-sims-{os.getpid()}-x2"
    other = tmp_path / "crisscross-sims-notapid"
    for folder in (left, running, other):
        folder.mkdir()
        (folder / "sim-shoe-1").symlink_to("/dev/pts/999")
    taken = tmp_path / f"crisscross-sims-{os.getpid()}-0"
    taken.symlink_to(tmp_path / "elsewhere")  # a name taken (by a link): never followed, the next one used
    made = link_folder(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([made.name, running.name, other.name, taken.name])
    assert made.name == f"crisscross-sims-{os.getpid()}-1" and made.is_dir() and not made.is_symlink()
    assert made.stat().st_mode & 0o777 == 0o700 and not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_simulated_run_stopped_by_a_signal_removes_its_link_folder(tmp_path, signum):
    """``run --simulate`` keeps its port links in ``crisscross-sims-<pid>-<n>`` of the temporary folder: a run
    stopped by SIGTERM or SIGINT removes it as it ends (only SIGKILL leaves one, for the next start to sweep)."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "controller", "run", "--simulate", "--quiet", "--journal",
                             str(tmp_path / "j.db")], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(f"crisscross-sims-{proc.pid}-*")):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never made its link folder"
            time.sleep(0.05)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert not list(tmp_path.glob("crisscross-sims-*"))


def test_a_simulated_service_keeps_its_port_links_in_a_folder_named_by_its_process(tmp_path):
    service = Service(load_table_config(), simulate=True, journal_path=tmp_path / "j.db", out=io.StringIO(),
                      parts=SERVICE_PARTS)
    try:  # digits only: a lost link's fault names the port's path, and mkdtemp's "y_3h_nke" read as a card
        assert re.fullmatch(rf"crisscross-sims-{os.getpid()}-[0-9]+", service._link_dir.name)
    finally:
        service.close()
    assert not service._link_dir.exists()


@pytest.mark.parametrize("command", ["rating", "recall", "protect", "meters"])
def test_a_journal_edited_out_of_shape_is_refused_in_one_line_after_the_warning(tmp_path, command):
    """A ``SeatSettled`` record whose data was replaced by hand: ``rating``, ``recall`` and ``protect`` ended in
    a ``KeyError`` traceback, and ``rating`` and ``meters`` refused it without saying first that the journal does
    not verify (the cause). Now: the warning naming the edited record, then one line naming it, exit 2."""
    from tests.pit_helpers import simulated_journal

    journal = tmp_path / "j.db"
    seq = next(r["seq"] for r in simulated_journal(journal, seed=8, rounds=1) if r["type"] == "SeatSettled")
    forge(journal, ("UPDATE records SET data = ? WHERE seq = ?", ('{"seat":"x"}', seq)))
    proc = crisscross(command, "--journal", str(journal))
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"crisscross {command}: WARNING: {journal} does not verify: line {seq}, seq {seq}: "
                               f"edited: its content does not match its hash; its records cannot be read")
    assert lines[-1].startswith(f"crisscross {command}: ") and "KeyError('settlement')" in lines[-1]
