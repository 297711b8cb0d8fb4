"""Run scenario files (``hil/scenarios/*.yaml``, docs/rig.md) against the service in its own process.

For each scenario: a table configuration (the default ``table.yaml`` with the scenario's overrides, the control
interface on a free loopback port, the scenario's users in an operators file of the run), a new journal, a
simulator on a pseudo-terminal for each device not given a real port (``ports``), and ``crisscross run`` as a
separate process with ``--port`` at each device. The steps act through the devices (chips on the simulated
sensors, presses and the key on the simulated panel, faults injected into a simulator at a named moment),
through the control interface (actions with a user's credentials) and on the service (SIGKILL, start again);
the expectations read ``/state``, the panel and the journal. The first step that fails ends the scenario; the
result names it (``file:line``), says what did not hold and carries the journal's last records and the
service's last log lines. A scenario whose steps need a simulator of a device given a real port is skipped,
saying which step and device.
"""

from __future__ import annotations

import base64
import concurrent.futures
import copy
import http.client
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from controller.control.operators import MIN_ITERATIONS, add_operator
from controller.journal.reader import read_records
from controller.service.simulators import start_simulators
from controller.settings.files import CONFIG_DIR
from drivers.sim import PtySimulator
from hil.expect import (check_face_down, check_money, check_payout_view, check_records, check_settlement,
                        check_view)
from hil.command import service_command
from hil.scenario import Scenario, Step
from hil.scenario_after import AfterFailed, await_record
from hil.scenario_pay import PayFailed, pay_as_shown, pay_seat

#: Seconds an ``expect`` and a ``wait`` step wait for their expectation by default.
EXPECT_TIMEOUT = 3.0
WAIT_TIMEOUT = 20.0
#: Seconds the service has to answer on its control interface after a start.
START_TIMEOUT = 30.0
#: Journal records shown with a failure.
EXCERPT = 25
#: Which simulator a step's action needs (the device), for the skip of a scenario on real devices.
NEEDS = {"place": ("sensors",), "remove": ("sensors",), "press": ("panel",), "key": ("panel",), "shoe": ("shoe",),
         "enter": ("panel",), "pay": ("sensors", "panel"), "pay_as_shown": ("sensors", "panel")}
#: The moments of ``fault: at`` that are counted on one device's frames: (device, message, frames to pass).
MOMENTS = {"after_cross": ("shoe", "DISPENSE", 1), "during_reading": ("sensors", "READ_SPOTS", 0)}
#: Users every run has, besides the scenario's own.
DEFAULT_USERS = {"dan": "dealer", "sue": "supervisor"}


class StepFailed(Exception):
    """A step that did not do or see what it should: the message says what."""


@dataclass
class CaseResult:
    """One scenario's outcome: ``status`` passed, failed (a step's expectation), error (the run itself broke)
    or skipped; the failing ``step``, the ``message``, the journal's last records and the service's log tail."""

    name: str
    path: Path
    status: str = "passed"
    seconds: float = 0.0
    step: Step | None = None
    message: str = ""
    journal_excerpt: list[str] = field(default_factory=list)
    log_tail: str = ""
    journal: Path | None = None
    #: For each step with ``after``: ``"step 7 place seat=6, ...: 4 ms after record 31 ButtonPressed"``.
    moments: list[str] = field(default_factory=list)

    @property
    def headline(self) -> str:
        """One line: the status and, for a failure, the step and what did not hold."""
        if self.step is None:
            return f"{self.status}{': ' + self.message if self.message else ''}"
        return f"{self.status}: step {self.step.index} ({self.step.where}) {self.step.label}: {self.message}"


_print_lock = threading.Lock()
_ports_lock = threading.Lock()
_ports_given: set[int] = set()  # guarded by _ports_lock: never the same port to two tables of one run


def free_port() -> int:
    """A TCP port on 127.0.0.1 free now (the kernel's choice), never one this process handed out before."""
    with _ports_lock:
        while True:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            if port not in _ports_given:
                _ports_given.add(port)
                return port


@cache
def _shipped_table() -> dict[str, Any]:
    """The shipped ``table.yaml``, read once (never changed: see ``_default_table``)."""
    return yaml.safe_load((CONFIG_DIR / "table.yaml").read_text())


def _default_table() -> dict[str, Any]:
    """A fresh copy of the shipped ``table.yaml`` (the caller may change it)."""
    return copy.deepcopy(_shipped_table())


def scenario_table(scenario: Scenario) -> dict[str, Any]:
    """The scenario's table configuration: the default ``table.yaml`` with the scenario's ``table`` overrides
    (``merged``), a jurisdiction file resolved from the scenario's folder."""
    table = merged(_default_table(), scenario.data.get("table") or {})
    if not str(table.get("jurisdiction", "ny")).isalpha():  # a file, as written relative to the scenario
        table["jurisdiction"] = str((scenario.path.parent / table["jurisdiction"]).resolve())
    return table


def check_table(scenario: Scenario) -> str | None:
    """The problem of the scenario's table configuration as ``file:line: table: what`` (the line of its
    ``table:`` key), None when ``controller.game.table.load_table_config`` accepts it: a bad override is a file
    error, found before any scenario runs, not a service that fails to start."""
    import re

    from controller.settings.files import ConfigError
    from controller.game.table import load_table_config

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.yaml"
        path.write_text(yaml.safe_dump(scenario_table(scenario), sort_keys=False))
        try:
            load_table_config(path)
        except ConfigError as exc:
            found = re.search(r"^table:", scenario.path.read_text(), re.M)
            line = scenario.path.read_text()[:found.start()].count("\n") + 1 if found else 1
            what = re.sub(r"^.*?table\.yaml:( line \d+:)? ", "", str(exc))
            return f"{scenario.path}:{line}: table: {what}"
    return None


def merged(base: Any, overrides: Any) -> Any:
    """``overrides`` over ``base``: mappings merged key by key, anything else replaced."""
    if isinstance(base, dict) and isinstance(overrides, dict):
        out = dict(base)
        for key, value in overrides.items():
            out[key] = merged(base.get(key), value)
        return out
    return overrides


class ControlClient:
    """A client of the control interface on 127.0.0.1:``port`` with the passwords of the run's users."""

    def __init__(self, port: int, passwords: dict[str, str]) -> None:
        self.port = port
        self.passwords = passwords

    def request(self, method: str, path: str, body: dict | None = None, user: str | None = None,
                timeout: float = 10.0) -> tuple[int, Any]:
        """One request; (status, decoded JSON). ``OSError`` when nothing answers."""
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        if user is not None:
            password = self.passwords.get(user, "not-a-user-of-this-run")
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            return response.status, json.loads(response.read() or b"null")
        finally:
            conn.close()

    def state(self) -> dict[str, Any] | None:
        """``GET /state``, or None while the service does not answer (down, starting)."""
        try:
            status, state = self.request("GET", "/state", timeout=2.0)
        except (OSError, http.client.HTTPException, ValueError):
            return None
        return state if status == 200 else None


class ScenarioRun:
    """One scenario on its own table: ``run()`` sets up, plays the steps, tears down, returns a ``CaseResult``.

    ``ports``: devices given a real port (``{"shoe": "/dev/serial/by-id/..."}``); every other device is
    simulated here. ``workdir``: a new folder for the configuration, the journal and the service's log.
    ``on_ready(run)`` is called once the service answers (the console's hook)."""

    def __init__(self, scenario: Scenario, workdir: Path, ports: dict[str, str] | None = None,
                 on_ready=None) -> None:
        self.scenario = scenario
        self.workdir = workdir
        self.ports = dict(ports or {})
        self.on_ready = on_ready
        self.sims: dict[str, PtySimulator] = {}
        self.proc: subprocess.Popen | None = None
        self.journal = workdir / "journal.db"
        self.log_path = workdir / "service.log"
        self.config_path = workdir / "table.yaml"
        self.client: ControlClient | None = None
        self._link_dir = workdir / "ports"
        self._answers_sent: int | None = None  # what the last act step answered (``answers: repeat``)

    # ------------------------------------------------------------------------------------------------
    # Set-up and tear-down.

    def _write_config(self) -> list[str]:
        table = scenario_table(self.scenario)
        port = free_port()
        operators = self.workdir / "operators.yaml"
        users = {**DEFAULT_USERS, **(self.scenario.data.get("users") or {})}
        passwords = {}
        for name, role in users.items():
            passwords[name] = secrets.token_urlsafe(12)
            add_operator(operators, name, role, passwords[name], iterations=MIN_ITERATIONS)
        table["control"] = merged(table.get("control") or {}, {"enabled": True, "host": "127.0.0.1", "port": port,
                                                                "operators": str(operators)})
        self.config_path.write_text(yaml.safe_dump(table, sort_keys=False))
        self.client = ControlClient(port, passwords)
        names = list(table["devices"])
        unknown = set(self.ports) - set(names)
        if unknown:
            raise StepFailed(f"--port names {', '.join(sorted(unknown))}, not a device of the table ({', '.join(names)})")
        drivers = {name: spec["driver"] for name, spec in table["devices"].items()}
        simulated = [name for name in names if name not in self.ports]
        self.sims = start_simulators(simulated, drivers, self.scenario.data.get("seed"), self._link_dir)
        return names

    def _command(self) -> list[str]:
        command = service_command(self.config_path, self.journal, self.sims, "-v")
        for name, port in self.ports.items():
            command += ["--port", f"{name}={port}"]
        return command

    def start_service(self) -> None:
        """Start ``crisscross run`` (its log appended to ``service.log``) and wait until ``/state`` answers.
        ``StepFailed`` when it exits or does not answer within ``START_TIMEOUT``."""
        assert self.client is not None
        with self.log_path.open("a") as log:
            self.proc = subprocess.Popen(self._command(), stdout=log, stderr=subprocess.STDOUT,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise StepFailed(f"the service exited with status {self.proc.returncode} at start")
            state = self.client.state()
            if state is not None and state["state"] != "starting":
                return
            time.sleep(0.05)
        raise StepFailed(f"the service did not leave 'starting' within {START_TIMEOUT:.0f} s")

    def stop_service(self, how: int = signal.SIGTERM) -> int | None:
        """Stop the service: SIGKILL at once, or SIGTERM and, if it still runs 0.3 s later (a round in
        progress), SIGTERM again, which stops it at once; SIGKILL after 20 s. Returns its exit status (None if it was not running)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(how)
            if how == signal.SIGTERM:
                try:
                    return proc.wait(timeout=0.3)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGTERM)
            try:
                return proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        return proc.wait()

    def teardown(self) -> None:
        """Stop the service and the simulators."""
        try:
            self.stop_service()
        finally:
            for sim in self.sims.values():
                sim.stop()

    # ------------------------------------------------------------------------------------------------
    # Steps.

    def _sim(self, device: str) -> PtySimulator:
        sim = self.sims.get(device)
        if sim is None:
            raise StepFailed(f"the {device} is a real device ({self.ports.get(device)}): this step needs its simulator")
        return sim

    def _delivered(self, sim: PtySimulator) -> None:
        """Wait until the host acknowledged every device-initiated frame of ``sim`` (chips, presses, the key):
        then the controller has the event, so the next step cannot overtake it."""
        if not sim.wait_for(lambda: sim.awaiting_ack == 0, 5.0) and self.proc is not None:
            raise StepFailed(f"the {sim.kind} simulator's frames were not acknowledged within 5 s")

    def step_place(self, value: dict[str, Any]) -> None:
        sensors = self._sim("sensors")
        for spot, amount in value.items():
            if spot != "seat":
                sensors.place(value["seat"], spot, amount)
        self._delivered(sensors)

    def step_remove(self, value: dict[str, Any]) -> None:
        sensors = self._sim("sensors")
        if "spots" in value:
            for spot in value["spots"]:
                sensors.place(value["seat"], spot, 0)
        else:
            sensors.clear(value["seat"])
        self._delivered(sensors)

    def step_press(self, button: str) -> None:
        panel = self._sim("panel")
        panel.press(button)
        self._delivered(panel)

    def step_key(self, on: bool) -> None:
        panel = self._sim("panel")
        panel.turn_key(on)
        self._delivered(panel)

    def step_act(self, value: dict[str, Any]) -> None:
        assert self.client is not None
        body = {k: v for k, v in value.items() if k in ("action", "code", "reason", "round", "state", "answers")}
        if body.get("answers") == "repeat":  # a client retrying sends the number it sent before
            if self._answers_sent is None:
                raise StepFailed("act: answers: repeat, but no earlier act step named what it answers")
            body["answers"] = self._answers_sent
        if body.get("round") in ("current", "previous") or body.get("state") == "current" \
                or body.get("answers") == "current":
            state = self.client.state()
            if state is None:
                raise StepFailed("the control interface does not answer")
            if body.get("round") in ("current", "previous"):
                body["round"] = state["round_no"] - (body["round"] == "previous")
            if body.get("state") == "current":
                body["state"] = state["state"]
            if body.get("answers") == "current":
                answers = state.get("answers") or {}
                if not isinstance(answers.get(body["action"]), int):
                    raise StepFailed(f"act: answers: current, but /state answers nothing by {body['action']}: "
                                     f"{answers}")
                body["answers"] = answers[body["action"]]
        if "answers" in body:
            self._answers_sent = body["answers"]
        status, answer = self.client.request("POST", "/actions", body, user=value["user"])
        if status != value.get("status", 202):
            raise StepFailed(f"POST /actions answered {status} {answer}, {value.get('status', 202)} expected")

    def step_fault(self, value: dict[str, Any]) -> None:
        sim = self._sim(value["device"])
        params = {name: value[name] for name in ("seconds", "after", "pause", "rate") if name in value}
        if "byte" in value:
            params["at"] = value["byte"]
        count = value.get("count", 1)
        at = value.get("at", "now")
        if at == "now":
            sim.inject(value["kind"], count, **params)
            return
        if isinstance(at, str):
            device, message, skip = MOMENTS[at]
        elif "after_stack" in at:
            device, message, skip = "shoe", "DISPENSE", at["after_stack"] + 1
        elif "reading" in at:
            device, message, skip = "sensors", "READ_SPOTS", at["reading"] - 1
        else:
            device, message, skip = value["device"], at["message"], at.get("nth", 1) - 1
        if device != value["device"]:
            raise StepFailed(f"the moment {at} is counted on the {device}'s frames; the fault must be the {device}'s")
        sim.inject_on(message, value["kind"], count, nth=skip + 1, times=value.get("times", 1), **params)

    def step_clear_faults(self, device: str) -> None:
        self._sim(device).clear_faults()

    def step_shoe(self, value: dict[str, Any]) -> None:
        shoe = self._sim("shoe")
        if "stack" in value:
            shoe.stack_deck(value["stack"])
        elif "remove_cards" in value:
            shoe.remove_cards(value["remove_cards"])
        elif "close_door" not in value:
            shoe.power_cycle()
        elif not shoe.close_door():
            raise StepFailed("the shoe's door was not open (the fault door_open opens it)")

    def step_enter(self, value: dict[str, Any]) -> None:
        panel = self._sim("panel")
        panel.enter_cards(value["seat"], tuple(value["cards"]))
        self._delivered(panel)

    def step_service(self, how: str) -> None:
        if how in ("kill", "restart"):
            if self.proc is None:
                raise StepFailed("the service is not running")
            self.stop_service(signal.SIGKILL)
        if how == "stop":
            status = self.stop_service(signal.SIGTERM)
            if status is None:
                raise StepFailed("the service is not running")
        if how in ("start", "restart"):
            if self.proc is not None:
                raise StepFailed("the service is running already")
            self.start_service()

    # The payout (``hil.scenario_pay``): what its steps need of the table.
    def state(self) -> dict[str, Any] | None:
        """``GET /state``, None while the service does not answer."""
        assert self.client is not None
        return self.client.state() if self.proc is not None else None

    def chips(self) -> dict[tuple[int, str], int]:
        """The chips on the simulated sensors: ``{(seat, spot): amount}``."""
        return self._sim("sensors").amounts()

    def set_chips(self, seat: int, amounts: dict[str, int]) -> None:
        """Leave ``amounts`` (spot -> minor units, 0 empty) on ``seat``'s spots; wait until acknowledged."""
        self.step_place({"seat": seat, **amounts})

    def press_paid(self) -> None:
        """Press ``paid`` on the panel."""
        self.step_press("paid")

    def records(self) -> list[dict[str, Any]]:
        """The journal's records."""
        return read_records(self.journal) if self.journal.exists() else []

    def winning_spot(self) -> str:
        """``payout.winning_spot`` of the scenario's table."""
        table = yaml.safe_load(self.config_path.read_text())
        return (table.get("payout") or {}).get("winning_spot", "wager_and_payout")

    def step_pay(self, value: dict[str, Any]) -> None:
        amounts = {k: v for k, v in value.items() if k not in ("seat", "press", "timeout")}
        try:
            pay_seat(self, value["seat"], amounts, press=value.get("press", True),
                     timeout=value.get("timeout", 10.0))
        except PayFailed as exc:
            raise StepFailed(str(exc)) from None

    def step_pay_as_shown(self, value: bool) -> None:
        try:
            pay_as_shown(self)
        except PayFailed as exc:
            raise StepFailed(str(exc)) from None

    def step_sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def check(self, expected: dict[str, Any]) -> list[str]:
        """What of ``expected`` does not hold now (empty: it holds)."""
        assert self.client is not None
        state = self.client.state() if self.proc is not None else None
        panel = self.sims.get("panel")
        display = panel.display if panel is not None else (state or {}).get("display", "")
        lamps = panel.lamps if panel is not None else (state or {}).get("lamps", [])
        problems = check_view(expected, state, display, lamps)
        if "payout" in expected:
            problems += check_payout_view(expected["payout"], state)
        if any(k in expected for k in ("journal", "absent", "settlement", "money_conserved", "face_down_hidden")):
            records = read_records(self.journal) if self.journal.exists() else []
            problems += check_records(records, expected.get("journal", ()), expected.get("absent", ()))
            if "settlement" in expected:
                problems += check_settlement(records, expected["settlement"])
            if expected.get("money_conserved"):
                problems += check_money(self.journal, records)
            if expected.get("face_down_hidden"):
                problems += check_face_down(records, panel.messages if panel is not None else [], state)
        return problems

    def _expect(self, expected: dict[str, Any], default_timeout: float) -> None:
        deadline = time.monotonic() + expected.get("timeout", default_timeout)
        while True:
            problems = self.check(expected)
            if not problems:
                return
            if time.monotonic() >= deadline:
                raise StepFailed("; ".join(problems))
            time.sleep(0.05)

    def step_expect(self, expected: dict[str, Any]) -> None:
        self._expect(expected, EXPECT_TIMEOUT)

    def step_wait(self, expected: dict[str, Any]) -> None:
        self._expect(expected, WAIT_TIMEOUT)

    # ------------------------------------------------------------------------------------------------

    def needs_missing(self) -> str | None:
        """Why the scenario cannot run with the real devices given (a step needs a simulator), or None."""
        for step in self.scenario.steps:
            devices = NEEDS.get(step.action) or (step.value["device"] if step.action == "fault" else None,
                                                 step.value if step.action == "clear_faults" else None)
            for device in devices:
                if device in self.ports:
                    return f"step {step.index} ({step.where}) {step.label} needs the {device} simulator; " \
                           f"the {device} is {self.ports[device]}"
        return None

    def excerpt(self) -> list[str]:
        """The journal's last ``EXCERPT`` records, one line each."""
        try:
            records = read_records(self.journal) if self.journal.exists() else []
        except Exception as exc:  # an excerpt is a courtesy of the report: say why there is none
            return [f"(journal not readable: {exc})"]
        return [f"{r['seq']} {r.get('kind')} round {r.get('round')} {r['type']} "
                f"{json.dumps(r.get('data'), sort_keys=True)[:240]}" for r in records[-EXCERPT:]]

    def run(self) -> CaseResult:
        """Set up, run every step until one fails, tear down; the result (never raises for a step)."""
        result = CaseResult(self.scenario.name, self.scenario.path, journal=self.journal)
        started = time.monotonic()
        skip = self.needs_missing()
        if skip:
            result.status, result.message = "skipped", skip
            return result
        step: Step | None = None
        try:
            self._write_config()
            self.start_service()
            if self.on_ready is not None:
                self.on_ready(self)
            for step in self.scenario.steps:
                if step.after is not None:
                    try:
                        moment = await_record(self.records, step.after)
                    except AfterFailed as exc:
                        raise StepFailed(str(exc)) from None
                    result.moments.append(f"step {step.index} {step.label}: {moment.describe()}")
                getattr(self, f"step_{step.action}")(step.value)
        except StepFailed as exc:
            result.status, result.step, result.message = "failed", step, str(exc)
        except Exception as exc:  # the run itself broke (a simulator, the file system): an error, not a failure
            result.status, result.step, result.message = "error", step, f"{type(exc).__name__}: {exc}"
        finally:
            self.teardown()
            result.seconds = time.monotonic() - started
        if result.status != "passed":
            result.journal_excerpt = self.excerpt()
            if self.log_path.exists():
                result.log_tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-40:])
        return result


def run_scenarios(scenarios: list[Scenario], ports: dict[str, str] | None = None, keep: Path | None = None,
                  jobs: int = 1, log=print) -> list[CaseResult]:
    """Run each scenario on a table of its own, ``jobs`` at a time (each its own simulators and service
    process); return the results in the order given. Each scenario's configuration, journal and service log
    are in ``<folder>/<name>/``, the simulators' log lines of the whole run in ``<folder>/simulators.log``;
    ``folder`` is ``keep`` (kept), else a temporary folder removed when every scenario passed."""
    folder = keep if keep is not None else Path(tempfile.mkdtemp(prefix="crisscross-scenarios-"))
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / "simulators.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)  # the simulators' lines (a flood's thousand NAKs) go there, not to the terminal
    root.setLevel(logging.INFO)

    def one(scenario: Scenario) -> CaseResult:
        workdir = folder / scenario.name
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        result = ScenarioRun(scenario, workdir, ports).run()
        with _print_lock:
            log(f"{scenario.name}: {result.headline} ({result.seconds:.1f} s)")
            for moment in result.moments:  # the delay each step with ``after`` achieved
                log(f"    {moment}")
            if result.status in ("failed", "error"):
                for line in result.journal_excerpt[-8:]:
                    log(f"    {line}")
                log(f"    (journal and service log: {workdir})")
        return result

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs),
                                                   thread_name_prefix="scenario") as pool:
            results = list(pool.map(one, scenarios))
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()
    if keep is None and all(r.status in ("passed", "skipped") for r in results):
        shutil.rmtree(folder, ignore_errors=True)
    return results
