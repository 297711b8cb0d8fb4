"""The command line of game protection (``crisscross protect``) and of the simulated players' options of
``crisscross run --simulate`` (``--player-strategy``, ``--hole-carder``). Imports no NumPy until a command
runs, so that ``crisscross`` parses its arguments without the analysis extra.

    crisscross protect [--journal PATH] [--config PATH] [--gap N] [--all]
    crisscross protect --measure [--seed S] [--honest-sessions N] [--cheat-sessions N] [--rounds N]
                                 [--max-rounds N] [--workers N]

The first reads a journal (a store or JSON lines) and prints, for each seat's session, the evidence that the
player saw a hole card, the card it points at and the house's estimated loss (``controller.analysis.protect``);
flagged sessions only, unless ``--all``. Exit status 0: nothing flagged; 1: a session flagged; 2: the journal or
the configuration cannot be read. The second measures the detector on simulated play
(``controller.analysis.protect_measure``).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

STRATEGIES = ("optimal", "never_fold", "always_1x", "pair_3x", "erring")
HOLE_CARDS = ("middle", "across", "down")


@dataclass(frozen=True)
class PlayerSpec:
    """One seat's simulated player: ``kind`` a strategy of ``STRATEGIES`` or a hole card of ``HOLE_CARDS``;
    ``probability`` the error rate of ``erring`` or the chance a hole-carder sees its card in a round."""

    seat: int
    kind: str
    probability: float = 1.0

    @property
    def hole_carder(self) -> bool:
        """True for a hole-carder, False for an honest strategy."""
        return self.kind in HOLE_CARDS


def parse_spec(text: str, hole_carder: bool) -> PlayerSpec:
    """``SEAT:NAME[:P]`` (``--player-strategy``: NAME a strategy, P the error rate of ``erring``;
    ``--hole-carder``: NAME middle, across or down, P the probability of seeing the card, default 1).
    Raises ``ValueError`` naming what is wrong."""
    option = "--hole-carder" if hole_carder else "--player-strategy"
    names = HOLE_CARDS if hole_carder else STRATEGIES
    parts = text.split(":")
    if len(parts) not in (2, 3) or not parts[0].isdigit():
        raise ValueError(f"{option} {text!r}: expected SEAT:{'|'.join(names)}[:P]")
    if parts[1] not in names:
        raise ValueError(f"{option} {text!r}: {parts[1]!r} is not one of {', '.join(names)}")
    try:
        probability = float(parts[2]) if len(parts) == 3 else (1.0 if hole_carder else 0.2)
    except ValueError:
        raise ValueError(f"{option} {text!r}: {parts[2]!r} is not a probability") from None
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"{option} {text!r}: probability {probability} is not from 0 to 1")
    return PlayerSpec(int(parts[0]), parts[1], probability)


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, config_help: str,
               count: type) -> None:
    """The ``protect`` subcommand's arguments (``count``: the type of a positive integer option)."""
    protect = sub.add_parser("protect", parents=[common],
                             help="spot players who see a hole card: evidence per seat and session (supervisors)")
    protect.add_argument("--journal", type=Path, default=None, help="journal file (default: the one of --config)")
    protect.add_argument("--config", type=Path, default=None, help=config_help)
    protect.add_argument("--gap", type=count, default=3,
                         help="rounds in a row without wagers at a seat that end its session (default 3)")
    protect.add_argument("--all", action="store_true", help="print every session, not only the flagged ones")
    protect.add_argument("--measure", action="store_true",
                         help="measure the detector's power and false alarms on simulated play instead")
    protect.add_argument("--seed", type=int, default=1, help="--measure: seed (default 1)")
    protect.add_argument("--honest-sessions", type=count, default=10_000,
                         help="--measure: sessions of each honest strategy (default 10000)")
    protect.add_argument("--cheat-sessions", type=count, default=1_000,
                         help="--measure: sessions of each kind of hole-carder (default 1000)")
    protect.add_argument("--rounds", type=count, default=100, help="--measure: rounds of an honest session (default 100)")
    protect.add_argument("--max-rounds", type=count, default=400,
                         help="--measure: rounds after which a hole-carder not flagged counts as never (default 400)")
    protect.add_argument("--workers", type=count, default=None,
                         help="processes that build the tables the first time (default: one per CPU)")


def main(args: argparse.Namespace) -> int:
    """Run ``crisscross protect``; the exit status."""
    from controller.analysis.protect_tables import ProtectTables
    from controller.settings.files import ConfigError, find_table_config
    from controller.journal.store import JournalError
    from controller.service.loop import jurisdiction_for
    from controller.game.table import load_table_config

    try:
        config = load_table_config(find_table_config(args.config))
        jurisdiction = jurisdiction_for(config)
        path = Path(args.journal or config.journal)
        if not args.measure and not path.exists():
            raise JournalError(f"{path}: no such file")
    except (OSError, ConfigError, JournalError) as exc:
        print(f"crisscross protect: {exc}", file=sys.stderr)
        return 2
    tables = ProtectTables.load(jurisdiction, args.workers, progress=sys.stderr)
    if args.measure:
        from controller.analysis.protect_measure import main as measure

        return measure(tables, args)
    from controller.analysis.protect import scan_journal

    try:
        reports = scan_journal(path, tables, args.gap)
    except (OSError, JournalError) as exc:
        print(f"crisscross protect: {exc}", file=sys.stderr)
        return 2
    shown = [r for r in reports if args.all or r.flagged]
    for report in shown:
        print(report.line())
    flagged = sum(r.flagged for r in reports)
    print(f"{len(reports)} seat sessions in {path}; {flagged} flagged", file=sys.stderr)
    return 1 if flagged else 0
