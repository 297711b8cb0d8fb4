"""The scenario runner against the service in its own process (``python -m hil.rig --scenario``): a shipped
scenario passes; the same scenario expecting a wrong settlement fails naming the step, in the JUnit XML too;
a device given a real port (here a simulator on a pseudo-terminal the runner does not own) is used as
hardware while the rest are simulated; a scenario that needs the simulator of a real device is skipped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from drivers.shoe.simulator import ShoeSimulator
from hil.junit import junit_tree
from hil.scenario import load_scenario
from hil.scenario_run import CaseResult, ScenarioRun
from tests.postgres import wait_until

ROOT = Path(__file__).resolve().parent.parent
FULL_ROUND = ROOT / "hil" / "scenarios" / "full-round-settled-by-the-tables.yaml"

pytestmark = pytest.mark.timeout(180)


def rig(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hil.rig", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=150)


def test_a_wrong_settlement_fails_naming_the_step_in_the_output_and_the_junit_report(tmp_path):
    """The shipped full round passes; a copy that expects 2:1 on the across bet where the regulation's table
    pays 3:1 for three of a kind (9 NYCRR 5324.39(f)(2)) fails at its expect step, named by file and line,
    in the output and as a JUnit failure with the journal's last records."""
    text = FULL_ROUND.read_text().replace("name: full-round-settled-by-the-tables", "name: wrong-settlement")
    wrong_line = "          across: {amount: 500, outcome: win, net: 1500}"
    assert text.count(wrong_line) == 1
    wrong = tmp_path / "wrong-settlement.yaml"
    wrong.write_text(text.replace(wrong_line, "          across: {amount: 500, outcome: win, net: 1000}"))
    lines = wrong.read_text().splitlines()
    expect_line = lines.index("  - expect:") + 1
    step_number = sum(1 for line in lines[:expect_line] if line.startswith("  - "))
    report = tmp_path / "report.xml"
    proc = rig("--scenario", str(FULL_ROUND), str(wrong), "--junit-xml", str(report), "--keep", str(tmp_path / "runs"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"full-round-settled-by-the-tables: passed" in proc.stdout
    where = f"step {step_number} ({wrong}:{expect_line})"
    assert f"wrong-settlement: failed: {where}" in proc.stdout
    assert 'seat 1 across: expected {"amount": 500, "net": 1000, "outcome": "win"}, settled ' \
           '{"amount": 500, "net": 1500, "outcome": "win"}' in proc.stdout
    suite = ET.parse(report).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert cases["full-round-settled-by-the-tables"].find("failure") is None
    failed = cases["wrong-settlement"]
    assert failed.get("line") == str(expect_line) and failed.get("file") == str(wrong)
    failure = failed.find("failure")
    assert where in failure.get("message") and "net\": 1000" in failure.get("message")
    assert "RoundClosed" in failure.text and "SeatSettled" in failure.text  # the journal's excerpt
    assert failed.find("system-err") is not None and "crisscross" in failed.find("system-err").text


def test_a_real_port_is_used_as_hardware_and_the_other_devices_are_simulated(tmp_path):
    """The shoe is a simulator started here, on a pty the runner knows only by its path, as a shoe on
    /dev/ttyUSB0 would be: the runner starts no shoe of its own, the service deals from this one."""
    shoe = ShoeSimulator(seed=4)
    shoe.start()
    try:
        scenario = tmp_path / "one-seat.yaml"
        scenario.write_text(yaml.safe_dump({"name": "one-seat", "steps": [
            {"press": "open_betting"},
            {"wait": {"state": "betting", "lamps": ["no_more_bets"]}},  # this shoe's shuffle done: its own time
            {"place": {"seat": 1, "ante_across": 500, "ante_down": 500}},
            {"press": "no_more_bets"}, {"wait": {"state": "across_decision"}},
            {"press": "confirm"}, {"pay": {"seat": 1}}, {"wait": {"state": "closed"}},
            {"expect": {"money_conserved": True, "face_down_hidden": True}}]}))
        proc = rig("--scenario", str(scenario), "--port", f"shoe={shoe.port}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert [len(cards) for _, cards in shoe.dispensed] == [5, 2]  # the cross and seat 1's stack, once each
    finally:
        shoe.stop()


def test_a_scenario_needing_the_simulator_of_a_real_device_is_skipped(tmp_path):
    scenario = load_scenario(ROOT / "hil" / "scenarios" / "shoe-jam-cleared-and-resumed.yaml")
    result = ScenarioRun(scenario, tmp_path, {"shoe": "/dev/serial/by-id/usb-shoe"}).run()
    assert result.status == "skipped"
    assert result.message.startswith("step 5 (") and "needs the shoe simulator" in result.message
    assert "/dev/serial/by-id/usb-shoe" in result.message
    skipped = junit_tree([result]).getroot().find("testsuite")
    assert skipped.get("skipped") == "1" and skipped.find("testcase/skipped") is not None


def test_the_report_counts_each_outcome_and_keeps_xml_valid(tmp_path):
    scenario = load_scenario(FULL_ROUND)
    step = scenario.steps[3]
    results = [CaseResult("a", FULL_ROUND, "passed", 1.5),
               CaseResult("b", FULL_ROUND, "failed", 2.0, step, "state betting, expected idle", ["1 x"], "log\x07"),
               CaseResult("c", FULL_ROUND, "error", 0.5, None, "OSError: no pty")]
    path = tmp_path / "out.xml"
    tree = junit_tree(results)
    tree.write(path, encoding="utf-8", xml_declaration=True)
    suite = ET.parse(path).getroot().find("testsuite")  # parses: the bell character was replaced
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("3", "1", "1", "0")
    failure = suite.find("testcase[@name='b']/failure")
    assert failure.get("message") == f"failed: step 4 ({step.where}) {step.label}: state betting, expected idle"
    assert suite.find("testcase[@name='c']/error").get("message") == "error: OSError: no pty"


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # ended meanwhile
            if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its new parent to reap it has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_the_service_ends_when_the_rig_is_killed(tmp_path):
    """docs/rig.md, "The service's process": a rig killed by SIGKILL (nothing of it runs to stop its child)
    leaves no service running on its journal."""
    scenario = tmp_path / "long.yaml"
    scenario.write_text("name: long\nsteps:\n  - wait: {state: closed, timeout: 100}\n")
    socket_path = tmp_path / "sim.sock"
    rig_proc = subprocess.Popen([sys.executable, "-m", "hil.rig", "--scenario", str(scenario), "--sim-socket",
                                 str(socket_path)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "TMPDIR": str(tmp_path)})
    services: list[int] = []
    try:
        wait_until(socket_path.exists, 60, "the rig's service up")  # served once it answers
        services = _children(rig_proc.pid)
        assert services, "the rig has no child process"
        rig_proc.kill()
        rig_proc.wait(timeout=10)
        wait_until(lambda: not any(_alive(pid) for pid in services), 10,
                   f"the rig's service {services} gone after the rig was killed")
    finally:
        rig_proc.kill()
        rig_proc.wait(timeout=10)
        for pid in services:  # never left behind, whatever the outcome
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_child_whose_parent_is_gone_before_the_tie_runs_nothing(tmp_path):
    """hil/tether.py: the tie is made after fork; a child that finds another parent than the one named (the rig
    died in between) ends at once, status 1, without running its program; with the right parent it runs it."""
    from hil.tether import tethered

    marker = tmp_path / "ran"
    tether = str(ROOT / "hil" / "tether.py")
    late = subprocess.run([sys.executable, "-I", tether, "1", "touch", str(marker)], cwd=tmp_path, timeout=30)
    assert late.returncode == 1 and not marker.exists()
    done = subprocess.run(tethered(["touch", str(marker)]), cwd=tmp_path, timeout=30)  # any folder
    assert done.returncode == 0 and marker.exists()
    usage = subprocess.run([sys.executable, "-I", tether, "touch"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=30)
    assert usage.returncode == 2 and "usage: python -I hil/tether.py PARENT_PID PROGRAM" in usage.stderr
