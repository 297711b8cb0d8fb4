"""``python -m hil.rig --scenario FILE...``: load every scenario first (a file with errors stops the run
before anything starts, each error as ``file:line: what``), run them (``hil.scenario_run``), print one line
per scenario and the totals, write the JUnit report. Exit status 0 when none failed (skipped ones pass), 1
when one failed or broke, 2 for a scenario file or an argument refused."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from hil.junit import write_junit
from hil.scenario import Scenario, ScenarioError, load_scenario
from hil.scenario_run import CaseResult, ScenarioRun, check_table, run_scenarios


def parse_ports(values: list[str]) -> dict[str, str]:
    """``["shoe=/dev/ttyUSB0", ...]`` as ``{"shoe": "/dev/ttyUSB0"}``. ``ValueError`` naming a bad one."""
    ports: dict[str, str] = {}
    for value in values:
        name, sep, port = value.partition("=")
        if not sep or not name or not port:
            raise ValueError(f"--port {value!r}: expected DEVICE=PORT, e.g. shoe=/dev/serial/by-id/...")
        if name in ports:
            raise ValueError(f"--port names {name} twice")
        ports[name] = port
    return ports


def load_all(paths: list[Path]) -> list[Scenario]:
    """Every scenario, checked. ``ScenarioError`` with the problems of all the files; a name used twice is one."""
    scenarios, problems = [], []
    for path in paths:
        try:
            scenarios.append(load_scenario(path))
        except ScenarioError as exc:
            problems += exc.problems
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")
    seen: dict[str, Path] = {}
    for scenario in scenarios:
        problem = check_table(scenario)
        if problem is not None:
            problems.append(problem)
        if scenario.name in seen:
            problems.append(f"{scenario.path}:1: scenario {scenario.name} also in {seen[scenario.name]}")
        seen[scenario.name] = scenario.path
    if problems:
        raise ScenarioError(problems)
    return scenarios


def _interactive(args: argparse.Namespace):
    """The hook that serves the control socket and opens the console once a scenario's service is up."""
    from drivers.simconsole import SimControlServer, answer, console

    def ready(run: ScenarioRun) -> None:
        if args.sim_socket is not None:
            server = SimControlServer(run.sims, args.sim_socket).start()
            original = run.teardown

            def teardown() -> None:
                server.close()
                original()

            run.teardown = teardown  # type: ignore[method-assign]
            print(f"simulator control socket: {args.sim_socket} (crisscross sim console --socket {args.sim_socket})")
        if args.console:
            print(f"control interface: http://127.0.0.1:{run.client.port}/ ; quit runs the scenario's steps")

            def send(line: str) -> str:
                reply = answer(run.sims, line)
                if not reply["ok"]:
                    raise ValueError(reply["error"])
                return reply["text"]

            console(send)

    return ready


def run_from_command_line(args: argparse.Namespace) -> int:
    """The ``--scenario`` mode of ``python -m hil.rig`` (module docstring)."""
    try:
        ports = parse_ports(args.port)
        scenarios = load_all(args.scenario)
    except ValueError as exc:  # ScenarioError is one
        print(f"python -m hil.rig: {exc}", file=sys.stderr)
        return 2
    if args.junit_xml is not None and not Path(args.junit_xml).absolute().parent.is_dir():  # before, not after, the run
        print(f"python -m hil.rig: {args.junit_xml}: its folder does not exist", file=sys.stderr)
        return 2
    started = time.monotonic()
    if args.console or args.sim_socket:
        results: list[CaseResult] = []
        hook = _interactive(args)
        for scenario in scenarios:
            workdir = Path(tempfile.mkdtemp(prefix=f"crisscross-scenario-{scenario.name}-"))
            result = ScenarioRun(scenario, workdir, ports, on_ready=hook).run()
            print(f"{scenario.name}: {result.headline} ({result.seconds:.1f} s); journal {result.journal}")
            for moment in result.moments:  # the delay each step with ``after`` achieved
                print(f"  {moment}")
            results.append(result)
    else:
        results = run_scenarios(scenarios, ports, keep=args.keep, jobs=args.jobs)
    counts = {s: sum(1 for r in results if r.status == s) for s in ("passed", "failed", "error", "skipped")}
    print(f"scenarios: {len(results)}; " + ", ".join(f"{s} {n}" for s, n in counts.items())
          + f"; {time.monotonic() - started:.0f} s")
    if args.junit_xml is not None:
        try:
            write_junit(results, args.junit_xml)
        except OSError as exc:
            print(f"python -m hil.rig: {args.junit_xml}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"JUnit report: {args.junit_xml}")
    return 0 if not counts["failed"] and not counts["error"] else 1
