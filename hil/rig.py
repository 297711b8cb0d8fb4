"""The rig: simulators on pseudo-terminals and a scripted table here, the service in its own process.

    python -m hil.rig --rounds 20 --seed 5 [--journal PATH] [--config config/table.yaml] [--faults RATE]
                      [--manual FIRST:END]
    python -m hil.rig --scenario hil/scenarios/*.yaml [--junit-xml PATH] [--port shoe=/dev/...] [--keep DIR]
    python -m hil.rig --scenario FILE --console [--sim-socket PATH]

With ``--scenario`` it runs scenario files instead (``hil.scenario_run``, docs/rig.md): each against the
service in its own process, every device simulated unless ``--port`` gives it a real port, one JUnit test
case per scenario with ``--junit-xml``; ``--console`` opens the simulators' console once the service is up.

Starts the shoe, bet-sensor and panel simulators on pseudo-terminals and the scripted players and dealer
(``controller.simulated.table``), starts ``crisscross run`` as a separate process with ``--port`` pointing each device
at its simulator's port (opened exactly as a real serial port), waits for it to finish N rounds, then checks
the journal (``hil.checks``) and the shoe simulator's own record. Prints the rounds completed and every
discrepancy; exits 0 only when there is none. With ``--faults RATE`` every simulator injects faults at random
(``PtySimulator.chaos``: each frame is dropped, corrupted, delayed, duplicated or split with probability RATE,
lossy faults only where the protocol recovers; reproducible with ``--seed``), and the counts by kind are
printed at the end: the run must still pass every check.
"""

from __future__ import annotations

import argparse
import random
import shutil
import threading
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence
from typing import Any

import yaml

from controller.settings.argtypes import positive_int
from controller.game.table import load_table_config
from controller.journal.reader import iter_records
from controller.service.opening import jurisdiction_for
from controller.service.simulators import link_folder, start_simulators
from controller.settings.files import CONFIG_DIR
from controller.simulated.table import SimulatedTable
from hil.checks import check_journal, wagers_lost
from hil.command import service_command
from hil.scenario_main import run_from_command_line


@dataclass
class RigResult:
    """What a rig run saw: the service's exit status and output, rounds closed, discrepancies (empty = pass)."""

    status: int
    rounds_closed: int
    problems: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    #: Faults that took effect, by kind, over all simulators (empty without ``faults``).
    fault_counts: Counter[str] = field(default_factory=Counter)
    #: What the journal shows: faults raised by cause, faults cleared, rounds voided, past-posting acknowledged.
    journal_faults: Counter[str] = field(default_factory=Counter)
    rounds_voided: int = 0
    #: Wagers placed that were neither settled nor returned (must be 0).
    wagers_lost: int = 0


#: Device-level faults the rig injects with ``device_faults``: (simulator, kind, parameters).
DEVICE_FAULTS: tuple[tuple[str, str, dict], ...] = (
    ("shoe", "replug", {"after": 1.0}), ("sensors", "replug", {"after": 1.0}), ("panel", "replug", {"after": 1.0}),
    ("sensors", "silent", {"seconds": 5.0}), ("shoe", "jam", {}), ("shoe", "unreadable_card", {}),
    ("shoe", "empty", {}), ("shoe", "misfeed", {}), ("shoe", "door_open", {}),
)


def _inject_device_faults(sims: dict, count: int, rng: random.Random, stop: threading.Event,
                          injected: Counter[str]) -> None:
    """Inject ``count`` faults drawn from ``DEVICE_FAULTS``, one every 2 to 6 seconds, until ``stop``."""
    for _ in range(count):
        if stop.wait(rng.uniform(2.0, 6.0)):
            return
        name, kind, params = rng.choice(DEVICE_FAULTS)
        sims[name].inject(kind, **params)
        injected[f"{name} {kind}"] += 1


def _journal_faults(journal: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    for record in iter_records(journal):
        if record.get("type") == "FaultRaised":
            counts[f"raised {record['data']['cause']}"] += 1
        elif record.get("type") in ("FaultCleared", "RoundVoided", "PastPostingAcknowledged"):
            counts[record["type"]] += 1
    return counts


def _allowing_manual_dealing(config: Path, table_config: Any, folder: Path) -> Path:
    """A copy of the table file ``config`` in ``folder`` with ``manual_dealing: true`` (its jurisdiction as the
    resolved file, so the copy reads the same tables)."""
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data.update(manual_dealing=True, jurisdiction=str(table_config.jurisdiction))
    data.pop("journal", None)
    data.pop("journal_key", None)
    copy = folder / "table-manual.yaml"
    copy.write_text(yaml.safe_dump(data), encoding="utf-8")
    return copy


def _shoe_down(shoe: Any, panel: Any) -> None:
    """The shoe is taken away (unplugged) and the table shows the fault."""
    shoe.unplug()
    panel.wait_for(lambda: panel.display.startswith("FAULT"), 10.0)


def run_rig(rounds: int, seed: int | None, journal: Path, config: Path = CONFIG_DIR / "table.yaml",
            timeout: float = 300.0, mistakes: float = 0.1, faults: float = 0.0,
            device_faults: int = 0, manual_rounds: tuple[int, int | None] | None = None,
            service_options: Sequence[str] = ()) -> RigResult:
    """Run ``rounds`` rounds of the service (separate process) against simulators in this process; check them.

    The simulated players follow the optimal strategy but take a random decision with probability
    ``mistakes``, so that every path (folds and bets at each decision) is exercised. ``faults`` (0..1) is the
    probability that a simulator's frame suffers a random fault (``PtySimulator.chaos``, seeded from ``seed``).
    ``device_faults``: that many device-level faults (``DEVICE_FAULTS``: a device unplugged and back under
    another port name, sensors gone silent, shoe faults) injected at random moments; the simulated supervisor
    clears or voids what they cause. ``manual_rounds`` ``(first, end)``: before round ``first`` (0-based) the
    shoe is unplugged (its link lost: the table faults) and the supervisor switches to dealing by hand (NY 9
    NYCRR 5324.39(d)(1)) and clears the fault; before round ``end`` (None: never) the shoe is plugged back and
    the supervisor switches back, the next round opening with the shoe's shuffle check (the service runs with
    a copy of ``config`` that allows manual dealing). ``service_options``: more options of ``crisscross run``
    (``--rating``). ``journal`` must not exist yet (or be empty). Raises ``ValueError`` otherwise, ``ConfigError`` for a bad
    ``config``, ``subprocess.TimeoutExpired`` when the service has not finished within ``timeout`` seconds.
    """
    if journal.exists() and journal.stat().st_size:
        raise ValueError(f"{journal}: the rig needs a new journal file (its checks compare it with this run's shoe)")
    table_config = load_table_config(config)
    names = list(table_config.devices)
    if not 0.0 <= faults <= 1.0:
        raise ValueError(f"faults must be a probability from 0 to 1, got {faults}")
    link_dir = link_folder(prefix="crisscross-rig-ports-")  # digits only: the ports' paths appear in faults
    sims = start_simulators(names, {n: d.driver for n, d in table_config.devices.items()}, seed, link_dir)
    if faults:
        for index, name in enumerate(names):
            sims[name].chaos(faults, seed=None if seed is None else seed * 31 + index)
    table = SimulatedTable.for_table(sims, table_config, jurisdiction_for(table_config), seed=seed, rounds=rounds,
                                     mistakes=mistakes)
    if manual_rounds is not None:
        config = _allowing_manual_dealing(config, table_config, link_dir)
        table.manual_rounds = manual_rounds
        table.on_shoe_down = lambda: _shoe_down(sims["shoe"], table.panel)
        table.on_shoe_back = lambda: sims["shoe"].inject("replug", after=0.0)
    command = service_command(config, journal, sims, "--rounds", str(rounds), *service_options)
    injected: Counter[str] = Counter()
    stop_injecting = threading.Event()
    injector = threading.Thread(target=_inject_device_faults, name="rig-device-faults",
                                args=(sims, device_faults, random.Random(seed), stop_injecting, injected))
    try:
        table.start()
        injector.start()
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    finally:
        stop_injecting.set()
        injector.join()
        table.stop()
        dispensed = sims["shoe"].dispensed
        fault_counts: Counter[str] = Counter()
        for sim in sims.values():
            sim.stop()
            fault_counts.update(sim.fault_counts)
        device_kinds = {kind for _, kind, _ in DEVICE_FAULTS} | {"unplug"}
        fault_counts = Counter({k: n for k, n in fault_counts.items() if n and k not in device_kinds})
        fault_counts.update(injected)
        shutil.rmtree(link_dir, ignore_errors=True)
    rounds_seen, problems = check_journal(journal, shoe_dispensed=dispensed)
    closed = sum(1 for r in rounds_seen.values() if r.closed)
    if proc.returncode != 0:
        problems.insert(0, f"service exited with status {proc.returncode}: {proc.stderr.strip()[-500:]}")
    if closed != rounds:
        problems.insert(0, f"{closed} rounds closed, {rounds} expected")
    lost = wagers_lost(rounds_seen)
    if lost:
        problems.append(f"{lost} wagers placed were neither settled nor returned")
    result = RigResult(proc.returncode, closed, problems, proc.stdout, proc.stderr, fault_counts)
    result.journal_faults = _journal_faults(journal)
    result.rounds_voided = sum(1 for r in rounds_seen.values() if r.voided is not None)
    result.wagers_lost = lost
    return result


def _manual_rounds(text: str) -> tuple[int, int | None]:
    """``FIRST:END`` (or ``FIRST:``) of ``--manual``: round indexes from 0, END above FIRST."""
    first, sep, end = text.partition(":")
    try:
        bounds = (int(first), int(end) if end else None)
    except ValueError:
        bounds = (-1, None)
    if not sep or bounds[0] < 0 or (bounds[1] is not None and bounds[1] <= bounds[0]):
        raise argparse.ArgumentTypeError(f"{text!r}: expected FIRST:END or FIRST: (0 <= FIRST < END)")
    return bounds


def main(argv: list[str] | None = None) -> int:
    """Command line of the rig; returns 0 when every check passed."""
    parser = argparse.ArgumentParser(prog="python -m hil.rig", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=20, help="rounds to play (default 20)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the shoe and the players (default: cryptographic randomness)")
    parser.add_argument("--journal", type=Path, default=None, help="journal file (default: a new temporary file)")
    parser.add_argument("--config", type=Path, default=CONFIG_DIR / "table.yaml")
    parser.add_argument("--mistakes", type=float, default=0.1,
                        help="probability that a simulated player's decision is random instead of optimal")
    parser.add_argument("--device-faults", type=int, default=0, metavar="N",
                        help="inject N device faults (unplug and back under another port, sensors silent, shoe jam, "
                             "unreadable card, empty, misfeed, door open) at random moments (default 0)")
    parser.add_argument("--faults", type=float, default=0.0, metavar="RATE",
                        help="probability that a frame suffers a random fault (drop, corrupt, delay, duplicate, "
                             "split; default 0)")
    parser.add_argument("--scenario", nargs="+", type=Path, metavar="FILE",
                        help="run these scenario files (docs/rig.md) instead of random rounds")
    parser.add_argument("--junit-xml", type=Path, metavar="PATH", help="with --scenario: write a JUnit XML report")
    parser.add_argument("--port", action="append", default=[], metavar="DEVICE=PORT",
                        help="with --scenario: a real device's port (repeatable); the other devices are simulated")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="with --scenario: keep each scenario's configuration, journal and log in DIR/<name>")
    parser.add_argument("--jobs", "-j", type=positive_int, default=4, metavar="N",
                        help="with --scenario: run N scenarios at a time, each on its own simulators and service "
                             "(default 4)")
    parser.add_argument("--console", action="store_true",
                        help="with --scenario: open the simulators' console (docs/rig.md) once the service is up")
    parser.add_argument("--sim-socket", type=Path, metavar="PATH",
                        help="with --scenario: serve the simulators' control socket at PATH (crisscross sim console)")
    parser.add_argument("--manual", type=_manual_rounds, default=None, metavar="FIRST:END",
                        help="the shoe unplugged before round FIRST (counted from 0), rounds FIRST to END-1 dealt by "
                             "hand (NY 9 NYCRR 5324.39(d)(1)), the shoe back and the table switched back before round "
                             "END (FIRST: alone: by hand to the last round)")
    args = parser.parse_args(argv)
    if args.scenario:
        return run_from_command_line(args)
    journal = args.journal or Path(tempfile.mkdtemp(prefix="crisscross-rig-")) / "journal.db"
    try:
        result = run_rig(args.rounds, args.seed, journal, args.config, mistakes=args.mistakes, faults=args.faults,
                         device_faults=args.device_faults, manual_rounds=args.manual)
    except (ValueError, OSError) as exc:  # ConfigError is a ValueError
        print(f"python -m hil.rig: {exc}", file=sys.stderr)
        return 2
    print(f"journal: {journal}")
    print(f"rounds closed: {result.rounds_closed} of {args.rounds}; discrepancies: {len(result.problems)}")
    for problem in result.problems:
        print(f"  - {problem}")
    if args.faults or args.device_faults:
        counts = ", ".join(f"{kind} {n}" for kind, n in sorted(result.fault_counts.items())) or "none"
        print(f"faults injected: {sum(result.fault_counts.values())} ({counts})")
        seen = ", ".join(f"{kind} {n}" for kind, n in sorted(result.journal_faults.items())) or "none"
        print(f"in the journal: {seen}")
        print(f"rounds voided: {result.rounds_voided}; wagers lost: {result.wagers_lost}")
    return 0 if not result.problems else 1


if __name__ == "__main__":
    raise SystemExit(main())
