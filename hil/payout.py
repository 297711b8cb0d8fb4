"""How well the payout check catches a dealer's mispays: a seeded simulated run and its journal.

    python -m hil.payout --rounds 500 --seed 7 --payout-errors 0.05 [--journal PATH] [--config config/table.yaml]

Runs the service in this process with simulated devices and the scripted table (``crisscross run --simulate``)
whose dealer pays a seat wrong with probability ``--payout-errors`` (``controller.simulated.table``: short, over, the
payout on the wrong spot, a losing wager not taken) and puts it right when the panel shows the mispay. Then
compares the dealer's own record of its mistakes with the journal's ``PayoutChecked`` records:

- caught: a seat paid wrong whose first reading differed (every one must be);
- correct payouts flagged: a reading that differed where the dealer had paid right (the first reading of a
  seat without a mistake, or any reading after the correction; none may);
- rounds closed with an unaccepted difference (``hil.checks.check_payouts``; none may);

and checks every round as the rig does (``hil.checks.check_journal``). Prints the figures; exit status 0 only
when every mistake was caught, nothing correct was flagged and the journal passes every check.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.settings.argtypes import positive_int
from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.journal.recall import RoundRecord
from controller.service.assembly import Service
from controller.settings.files import CONFIG_DIR
from hil.checks import check_journal


@dataclass
class PayoutFigures:
    """The figures of one run: ``rounds`` closed with a settlement, ``seats_checked`` (seat payouts read at
    least once), ``injected`` mistakes by kind, ``caught`` of them, ``missed`` (round, seat, kind),
    ``false_flags`` (round, seat, reading index), ``accepted`` mispays and ``problems`` (journal checks)."""

    rounds: int = 0
    seats_checked: int = 0
    checks: int = 0
    injected: Counter[str] = field(default_factory=Counter)
    caught: int = 0
    missed: list[tuple[Any, int, str]] = field(default_factory=list)
    false_flags: list[tuple[int, int, int]] = field(default_factory=list)
    accepted: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every mistake caught, no correct payout flagged, no journal problem."""
        return not self.missed and not self.false_flags and not self.problems and self.caught == sum(
            self.injected.values())

    def lines(self) -> list[str]:
        """The figures as printed."""
        total = sum(self.injected.values())
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(self.injected.items())) or "none"
        return [
            f"rounds settled and paid: {self.rounds}; seat payouts checked: {self.seats_checked} "
            f"({self.checks} readings)",
            f"payout errors made by the dealer: {total} ({kinds})",
            f"caught: {self.caught} of {total}" + (f" ({100 * self.caught / total:.0f}%)" if total else ""),
            f"correct payouts flagged: {len(self.false_flags)}",
            f"mispays accepted by a supervisor: {self.accepted}",
            f"rounds closed with an unaccepted difference or other journal problems: {len(self.problems)}",
            *(f"  missed: round {r} seat {s} ({k})" for r, s, k in self.missed),
            *(f"  flagged: round {r} seat {s} reading {i}" for r, s, i in self.false_flags),
            *(f"  problem: {p}" for p in self.problems),
        ]


def figures(rounds: dict[int, RoundRecord], made: list[tuple[int | None, int, str]],
            problems: list[str]) -> PayoutFigures:
    """Compare the dealer's mistakes ``made`` (``(round, seat, kind)``, ``SimulatedTable.payout_errors_made``)
    with the journal's rounds (``hil.checks.check_journal``)."""
    out = PayoutFigures(problems=list(problems))
    mistakes = {(r, s): k for r, s, k in made}
    out.injected.update(k for _, _, k in made)
    for number, rnd in rounds.items():
        if rnd.voided is not None or not rnd.settlements:
            continue
        out.rounds += rnd.closed
        out.accepted += len(rnd.mispays_accepted)
        out.checks += len(rnd.payout_checks)
        for seat in rnd.settled_order:
            readings = [c for c in rnd.payout_checks if c["seat"] == seat]
            out.seats_checked += bool(readings)
            wrong = (number, seat) in mistakes
            for index, reading in enumerate(readings):
                if reading["differences"] and not (wrong and index == 0):
                    out.false_flags.append((number, seat, index))
            if wrong:
                if readings and readings[0]["differences"]:
                    out.caught += 1
                else:
                    out.missed.append((number, seat, mistakes[(number, seat)]))
    known = {(n, s) for n, rnd in rounds.items() for s in rnd.settled_order}
    out.missed += [(r, s, k) for (r, s), k in mistakes.items() if (r, s) not in known]
    return out


def run_payout_check(rounds: int, seed: int, payout_errors: float, journal: Path,
                     config: Path = CONFIG_DIR / "table.yaml") -> PayoutFigures:
    """Run ``rounds`` simulated rounds with the dealer's ``payout_errors`` against a new ``journal`` and measure.
    Raises ``ValueError`` when ``config`` does not check payouts."""
    table_config = load_table_config(config)
    if not table_config.payout.check:
        raise ValueError(f"{config}: payout.check is off: nothing to measure")
    service = Service(table_config, simulate=True, rounds=rounds, seed=seed, journal_path=journal, quiet=True,
                      out=io.StringIO(), payout_errors=payout_errors, parts=SERVICE_PARTS)
    try:
        status = service.run()
        made = list(service.table.payout_errors_made)
    finally:
        service.close()
    journal_rounds, problems = check_journal(journal, against_settle=False)
    result = figures(journal_rounds, made, problems)
    if status:
        result.problems.append(f"the service stopped with status {status}")
    return result


def main(argv: list[str] | None = None) -> int:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m hil.payout", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--payout-errors", type=float, default=0.05, metavar="P")
    parser.add_argument("--journal", type=Path, default=None, help="a new journal (default: a temporary one)")
    parser.add_argument("--config", type=Path, default=CONFIG_DIR / "table.yaml")
    args = parser.parse_args(argv)
    if not 0.0 <= args.payout_errors <= 1.0:
        parser.error(f"--payout-errors {args.payout_errors}: expected a probability from 0 to 1")
    with tempfile.TemporaryDirectory(prefix="crisscross-payout-") as tmp:
        journal = args.journal or Path(tmp) / "journal.db"
        result = run_payout_check(args.rounds, args.seed, args.payout_errors, journal, args.config)
    print("\n".join(result.lines()))
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
