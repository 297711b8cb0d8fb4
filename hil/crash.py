"""The crash test: kill the service with SIGKILL at random moments, restart it, and prove nothing was lost.

    python -m hil.crash --rounds 200 --seed 1 [--journal PATH] [--config config/table.yaml]

The shoe, bet-sensor and panel simulators and the scripted table (players, dealer and a supervisor,
``controller.simulated.table``) run in this process for the whole test, as the real devices and people stay when the
table PC loses power. The service runs as a separate process (``crisscross run -v`` with ``--port`` at each simulator) and is killed
with SIGKILL at a moment drawn relative to that start's own readiness (the shoe reconciled after the handshakes):
a share of starts (``--early``) before it, the others up to ``--max-life`` seconds after it, so that kills land
in start-up, replay, the self-check and every state of the round; a share (``--torn-rate``) instead cut one of
their first commits short themselves (the journal's test hook: SIGKILL between handing the rows to SQLite and
COMMIT, a write a power cut interrupts). Each is started again on the same journal: it replays the journal
from its last checkpoint, asks the shoe what it last dispensed and holds an interrupted round in its fault
state until the simulated supervisor clears it (or, with probability ``--void-rate``, voids it). Where each
kill landed is read from the service's log lines and the journal (the state recovered from it).

Once at least ``--rounds`` rounds ended (closed or voided), the service is started one last time and stopped
with SIGTERM as soon as one more round ended (the held one resolved), which lets the round in progress finish. Then the journal and the shoe simulator's own record
must prove: every round finished or was voided; every wager placed was settled or returned exactly once; money
is conserved; no card was dispensed twice and every stack the shoe dealt is in the journal; the journal's hash
chain verifies (``hil.checks``). Prints the kills and where they landed, the rounds completed and voided and the
discrepancies (which must be zero); exits 0 only when there is none. ``--timeout`` is the overall limit.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from controller.settings.argtypes import positive_float, positive_int, probability
from controller.game.table import load_table_config
from controller.journal.reader import iter_records, rounds_ended
from controller.journal.record import JournalError
from controller.journal.recovery import recover
from controller.journal.store import CUT_COMMIT_VARIABLE, Journal
from controller.journal.tools import verify
from controller.service.opening import jurisdiction_for, key_for
from controller.service.simulators import link_folder, start_simulators
from controller.settings.files import CONFIG_DIR
from controller.simulated.table import SimulatedTable
from hil.checks import check_journal
from hil.command import service_command


@dataclass
class CrashResult:
    """What a crash test saw: kills, rounds closed and voided, supervisor actions, discrepancies."""

    kills: int = 0
    starts: int = 0
    rounds_closed: int = 0
    rounds_voided: int = 0
    #: what the supervisor's actions did, as journaled (FaultCleared, RoundVoided, PastPostingAcknowledged)
    supervisor_actions: dict[str, int] = field(default_factory=dict)
    #: the presses the simulated supervisor made; one made while the service was down never reached it
    supervisor_presses: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: kills by where they landed: a phase of ``START_PHASES``, ``torn commit``, or the round machine's state
    landed: dict[str, int] = field(default_factory=dict)
    #: what ``journal verify`` (with the key) said of the store each kill and the last run left (``_verify_left``)
    verified: dict[str, int] = field(default_factory=dict)

    def after_ready(self) -> int:
        """Kills that landed once the service was ready (not in start-up, replay or the self-check)."""
        return sum(n for where, n in self.landed.items() if where not in START_PHASES)


#: Where a kill can land, in the order of a start (then the round machine's states, as recovered after it).
START_PHASES = ("start-up", "replay", "self-check")


def _after(journal: Path, seq: int, type_: str) -> bool:
    """True once a record of ``type_`` after record ``seq`` is committed (by the store's primary key)."""
    if not journal.exists():
        return False
    db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
    try:
        return db.execute("SELECT 1 FROM records WHERE seq > ? AND type = ? LIMIT 1", (seq, type_)).fetchone() is not None
    except sqlite3.Error:
        return False
    finally:
        db.close()


def _head(journal: Path) -> int:
    if not journal.exists():
        return 0
    db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
    try:
        return db.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()[0]
    except sqlite3.Error:
        return 0
    finally:
        db.close()


#: Log lines of a last run that did not stop, kept in its discrepancy.
STUCK_LOG_LINES = 25


def _stuck(table: SimulatedTable) -> str:
    """What the table showed when the last run did not stop: the panel's lamps and display, and which of the
    simulated table's threads (dealer, supervisor) still ran."""
    panel = table.panel
    threads = ", ".join(f"{t.name} {'running' if t.is_alive() else 'ended'}" for t in table.threads)
    return (f"panel lamps {sorted(panel.lamps)}, display {panel.display!r}; {threads}; "
            f"{table.rounds_played} rounds played by the table")


def where_it_landed(journal: Path, before: int, log_text: str, config, jurisdiction, key: bytes | None) -> str:
    """Where a kill landed: a phase of ``START_PHASES`` (from the service's log lines ``log_text`` and the
    records after ``before``), else the state of the round machine as recovered from the journal (opened with
    ``key``, table.yaml's journal key, which the service sealed it with)."""
    if not _after(journal, before, "ServiceStarted"):
        replaying = "replaying the records" in log_text
        return "replay" if replaying and "replayed up to record" not in log_text else "start-up"
    if not _after(journal, before, "ShoeReconciled"):
        return "self-check"
    opened = Journal(journal, key=key)
    try:
        return recover(opened, config, jurisdiction).machine.state
    finally:
        opened.close()


def run_crash_test(rounds: int, seed: int, journal: Path, config: Path = CONFIG_DIR / "table.yaml", *,
                   max_life: float = 0.3, void_rate: float = 0.1, mistakes: float = 0.1, early: float = 0.3,
                   torn_rate: float = 0.05, timeout: float = 1200.0, log=print) -> CrashResult:
    """Run the crash test (module docstring) until ``rounds`` rounds ended or ``timeout`` seconds passed; return
    what it saw.

    Each start is killed at a moment drawn relative to its own readiness (the shoe reconciled): with
    probability ``early`` before it (uniformly up to the readiness time seen so far), else up to ``max_life``
    seconds after it; with probability ``torn_rate`` the service instead cuts one of its first commits short
    itself (``controller.journal.store.CUT_COMMIT_VARIABLE``). ``journal`` must be new. Raises ``ValueError`` for a
    journal that exists, ``ConfigError`` for a bad ``config``, ``JournalError`` for a journal key of ``config``
    that cannot be used (before any start); a service that does not stop within 120 s of
    SIGTERM is reported as a discrepancy with what the panel showed, which of the simulated table's threads ran
    and its last log lines, then sent a second SIGTERM (which stops a service that still obeys at once) and
    killed if that does not stop it within 10 s.
    """
    if journal.exists() and journal.stat().st_size:
        raise ValueError(f"{journal}: the crash test needs a new journal file")
    if not journal.parent.is_dir():
        raise ValueError(f"{journal}: no folder {journal.parent} to write the journal in")
    rng = random.Random(seed)
    table_config = load_table_config(config)
    jurisdiction = jurisdiction_for(table_config)
    key = key_for(table_config)  # read once, and a key file that cannot be used refused before any start
    names = list(table_config.devices)
    link_dir = link_folder(prefix="crisscross-crash-ports-")  # digits only: the ports' paths appear in faults
    sims = start_simulators(names, {n: d.driver for n, d in table_config.devices.items()}, seed, link_dir)
    table = SimulatedTable.for_table(sims, table_config, jurisdiction, seed=seed, rounds=None,
                                     mistakes=mistakes, void_rate=void_rate)
    command = service_command(config, journal, sims, "-v")
    result = CrashResult()
    deadline = time.monotonic() + timeout
    stderr_path = journal.with_name(journal.name + ".stderr")
    ready_times: list[float] = []
    try:
        table.start()
        with stderr_path.open("w") as stderr:
            while rounds_ended(journal) < rounds and time.monotonic() < deadline:
                before, offset = _head(journal), stderr_path.stat().st_size
                env = dict(os.environ)
                torn = rng.random() < torn_rate
                if torn:
                    env[CUT_COMMIT_VARIABLE] = str(rng.randint(1, 40))
                began = time.monotonic()
                proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
                result.starts += 1
                if rng.random() < early:
                    estimate = statistics.median(ready_times) if ready_times else 1.0
                    life = rng.uniform(0.05, estimate)
                else:
                    while (proc.poll() is None and time.monotonic() - began < 30
                           and not _after(journal, before, "ShoeReconciled")):
                        time.sleep(0.01)
                    ready_times.append(time.monotonic() - began)
                    life = time.monotonic() - began + rng.uniform(0.05, max_life)
                cut_itself = False
                try:
                    proc.wait(timeout=max(0.0, began + life - time.monotonic()))
                    cut_itself = torn and proc.returncode == -signal.SIGKILL
                    if not cut_itself:
                        result.problems.append(f"start {result.starts}: the service exited by itself with status "
                                               f"{proc.returncode} (see {stderr_path})")
                        break
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                result.kills += 1
                _verify_left(journal, key, f"after kill {result.kills}", result)  # before the next start replays it
                with stderr_path.open() as text:
                    text.seek(offset)
                    landed = "torn commit" if cut_itself else where_it_landed(journal, before, text.read(),
                                                                              table_config, jurisdiction, key)
                result.landed[landed] = result.landed.get(landed, 0) + 1
                log(f"kill {result.kills} after {time.monotonic() - began:.2f} s in {landed}: "
                    f"{rounds_ended(journal)} rounds ended")
            # the last start: SIGTERM lets the round in progress finish (or a held one be cleared or voided)
            ended = rounds_ended(journal)
            offset = stderr_path.stat().st_size
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
            result.starts += 1
            last_wait = time.monotonic() + 30.0  # until the held round is resolved, or one more round ends
            while rounds_ended(journal) == ended and time.monotonic() < last_wait and proc.poll() is None:
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            try:
                status = proc.wait(timeout=120)
                if status != 0:
                    result.problems.append(f"the last run stopped with status {status} (see {stderr_path})")
            except subprocess.TimeoutExpired:
                seen = f"{rounds_ended(journal) - ended} rounds ended since it started; " + _stuck(table)
                proc.send_signal(signal.SIGTERM)  # a second one stops at once: a service still alive obeys it
                try:
                    seen += f"; a second SIGTERM stopped it (status {proc.wait(timeout=10)})"
                except subprocess.TimeoutExpired:
                    seen += "; a second SIGTERM did not stop it either"
                    proc.kill()
                    proc.wait()
                with stderr_path.open() as text:
                    text.seek(offset)
                    tail = text.read().splitlines()[-STUCK_LOG_LINES:]
                result.problems.append(f"the last run did not stop within 120 s of SIGTERM; {seen}; its last "
                                       f"log lines:\n      " + "\n      ".join(tail))
    finally:
        table.stop()
        dispensed = sims["shoe"].dispensed
        for sim in sims.values():
            sim.stop()
        shutil.rmtree(link_dir, ignore_errors=True)
    result.supervisor_presses = dict(table.supervisor_actions)
    _verify_left(journal, key, "after the last run", result)
    if rounds_ended(journal) < rounds:
        result.problems.append(f"only {rounds_ended(journal)} rounds ended within {timeout:.0f} s")
    try:
        rounds_seen, problems = check_journal(journal, shoe_dispensed=dispensed)
    except JournalError as exc:
        result.problems.append(f"journal: {exc}")
        return result
    result.problems += problems
    result.rounds_closed = sum(1 for r in rounds_seen.values() if r.closed and r.voided is None)
    result.rounds_voided = sum(1 for r in rounds_seen.values() if r.voided is not None)
    actions = {"clear_fault": 0, "void_round": 0, "acknowledge": 0}
    restarts = 0
    for record in iter_records(journal):
        kind, data = record.get("type"), record.get("data") or {}
        actions["clear_fault"] += kind == "FaultCleared" and data.get("role") == "supervisor"
        actions["void_round"] += kind == "RoundVoided" and data.get("role") == "supervisor"
        actions["acknowledge"] += kind == "PastPostingAcknowledged"
        restarts += kind == "ServiceStarted" and record.get("kind") == "event"
    result.supervisor_actions = actions
    if restarts != result.starts:
        log(f"service starts journaled: {restarts} of {result.starts} (a kill during start-up comes before it)")
    return result


def _verify_left(journal: Path, key: bytes | None, when: str, result: CrashResult) -> None:
    """``crisscross journal verify`` (with ``key``, table.yaml's journal key) of the store as a kill or the last
    run left it, before anything opens it again: its outcome counted in ``result.verified`` ("intact", "not yet
    replayed", or "unchecked" without a key); tampered, or a store that cannot be read, is a problem (issue 29:
    nothing was touched)."""
    if not journal.exists() or not journal.stat().st_size:
        return  # killed before the store was made
    try:
        verdict = verify(journal, key)
    except JournalError as exc:
        result.problems.append(f"verify {when}: {exc}")
        return
    if verdict.tamper is not None:
        result.problems.append(f"verify {when}: tampered: {verdict.tamper}")
        return
    outcome = ("intact" if verdict.intact else "not yet replayed" if any(
        u.startswith("not yet replayed") for u in verdict.unchecked) else "unchecked")
    result.verified[outcome] = result.verified.get(outcome, 0) + 1


def main(argv: list[str] | None = None) -> int:
    """Command line of the crash test; returns 0 when no discrepancy was found."""
    parser = argparse.ArgumentParser(prog="python -m hil.crash", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=200, help="rounds to finish (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the kills, the shoe and the players")
    parser.add_argument("--journal", type=Path, default=None, help="journal file (default: a new temporary file)")
    parser.add_argument("--config", type=Path, default=CONFIG_DIR / "table.yaml",
                        help="the table configuration the service runs (default: the shipped one)")
    parser.add_argument("--max-life", type=positive_float, default=0.3,
                        help="longest a service process lives after it is ready before it is killed, seconds "
                             "(default 0.3: a few rounds of the simulated table)")
    parser.add_argument("--void-rate", type=probability, default=0.1,
                        help="probability that the supervisor voids a round it could resume (default 0.1)")
    parser.add_argument("--early", type=probability, default=0.3,
                        help="share of starts killed before they are ready (default 0.3)")
    parser.add_argument("--torn-rate", type=probability, default=0.05,
                        help="share of starts that cut one of their first commits short (default 0.05)")
    parser.add_argument("--timeout", type=positive_float, default=1200.0,
                        help="overall limit, seconds: stop killing then, and report the rounds short (default 1200)")
    parser.add_argument("--quiet", action="store_true", help="print only the result")
    args = parser.parse_args(argv)
    journal = args.journal or Path(tempfile.mkdtemp(prefix="crisscross-crash-")) / "journal.db"
    started = time.monotonic()
    try:
        result = run_crash_test(args.rounds, args.seed, journal, args.config, max_life=args.max_life,
                                void_rate=args.void_rate, early=args.early, torn_rate=args.torn_rate,
                                timeout=args.timeout, log=(lambda *_: None) if args.quiet else print)
    except (ValueError, OSError) as exc:  # ConfigError is a ValueError
        print(f"python -m hil.crash: {exc}", file=sys.stderr)
        return 2
    print(f"journal: {journal}")
    print(f"kills (SIGKILL): {result.kills}; service starts: {result.starts}; "
          f"time: {time.monotonic() - started:.0f} s")
    lost = sum(result.supervisor_presses.values()) - sum(result.supervisor_actions.values())
    print(f"rounds closed: {result.rounds_closed}; rounds voided: {result.rounds_voided}; "
          f"supervisor actions journaled: {result.supervisor_actions}"
          + (f" (presses made: {result.supervisor_presses}: {lost} reached no running service)" if lost else ""))
    landed = ", ".join(f"{where} {n}" for where, n in sorted(result.landed.items(), key=lambda item: -item[1]))
    share = result.after_ready() / result.kills if result.kills else 0.0
    print(f"kills landed: {landed or 'none'}; after the service was ready: {result.after_ready()} of "
          f"{result.kills} ({share:.0%})")
    print(f"journal verify of the stores left (kills and the last run): "
          f"{dict(sorted(result.verified.items())) or 'none'}")
    print(f"discrepancies: {len(result.problems)}")
    for problem in result.problems:
        print(f"  - {problem}")
    return 0 if not result.problems else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
