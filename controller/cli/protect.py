"""The command line of game protection (``crisscross protect``). Imports no NumPy until a command runs, so
that ``crisscross`` parses its arguments without the analysis extra.

    crisscross protect [--journal PATH] [--config PATH] [--gap N] [--break N] [--memory-hours H] [--all]
    crisscross protect --measure [--seed S] [--honest-sessions N] [--cheat-sessions N] [--rounds N]
                                 [--max-rounds N] [--bound-deals N] [--workers N]
    crisscross protect --shared-cards [--seed S] [--per-class N] [--workers N]

The first reads a journal (a store or JSON lines) and prints, for each player (a rated player by id, across
breaks, seat moves and sessions; an unrated one by seat, across breaks of up to ``--break`` rounds), the
evidence that the player saw a hole card, the card it points at and the house's estimated loss (``controller.analysis.protect``,
read from the journal by ``controller.service.protect_journal``);
flagged sessions only, unless ``--all``. The journal is verified first (``controller.cli.journal.journal_problem``):
one that does not verify is still read, under a warning, as ``crisscross recall`` shows it (a JSON-lines copy
whose last line is cut short, or with a line after its first that is not a record: its records before that
line). Exit status 0: nothing flagged; 1: a session flagged, or the journal does not verify; 2: the journal or
the configuration cannot be read. The second measures the detector on simulated play
(``controller.simulated.protect_measure``); the third what knowing other seats' hole cards is worth
(``controller.simulated.shared_measure``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from controller.settings.argtypes import file_path, positive_int_at_most, workers
from controller.settings.text import path_shown


def seed(text: str) -> int:
    """argparse type: a random generator's seed, an integer from 0, else an ``ArgumentTypeError`` naming the
    text (NumPy's generators take no negative seed)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer from 0, got {text}")
    return value


#: The most each count of ``--measure`` and ``--shared-cards`` takes: its memory (about 6.5 KB an honest session, a
#: player's state a hole-carder, an array every 500 deals) or its time grows with it, in each worker. Ten to a
#: hundred times the defaults; a count of 10**9 asked for 201 GiB at once, 10**6 honest sessions took 6.5 GB.
MOST: dict[str, int] = {"per_class": 1_000, "honest_sessions": 100_000, "cheat_sessions": 100_000,
                        "rounds": 10_000, "max_rounds": 100_000, "bound_deals": 1_000_000}


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, config_help: str,
               count: type) -> None:
    """The ``protect`` subcommand's arguments (``count``: the type of a positive integer option)."""
    protect = sub.add_parser("protect", parents=[common],
                             help="spot players who see a hole card: evidence per seat and session (supervisors)")
    journal_arguments(protect, config_help)
    protect.add_argument("--gap", type=count, default=3,
                         help="rounds in a row without wagers at a seat that end its session (default 3)")
    protect.add_argument("--break", dest="break_rounds", type=count, default=None,
                         help="rounds in a row an unrated seat may sit out and keep its evidence (default 20, or "
                              "--gap when longer)")
    protect.add_argument("--memory-hours", type=count, default=168,
                         help="hours a rated player's evidence is kept after their last round (default 168)")
    protect.add_argument("--all", action="store_true", help="print every player's evidence, not only the flagged")
    protect.add_argument("--measure", action="store_true",
                         help="measure the detector's power and false alarms on simulated play instead")
    protect.add_argument("--shared-cards", action="store_true",
                         help="measure what knowing 1, 2 or 5 other seats' hole cards is worth instead")
    protect.add_argument("--per-class", type=positive_int_at_most(MOST["per_class"]), default=3,
                         help="--shared-cards: sets of known cards per class of two-card hand (default 3)")
    protect.add_argument("--seed", type=seed, default=1, help="--measure, --shared-cards: seed (default 1)")
    protect.add_argument("--honest-sessions", type=positive_int_at_most(MOST["honest_sessions"]), default=10_000,
                         help="--measure: sessions of each honest strategy (default 10000)")
    protect.add_argument("--cheat-sessions", type=positive_int_at_most(MOST["cheat_sessions"]), default=1_000,
                         help="--measure: hole-carders of each card, style and setting (default 1000)")
    protect.add_argument("--rounds", type=positive_int_at_most(MOST["rounds"]), default=100,
                         help="--measure: rounds of an honest session (default 100)")
    protect.add_argument("--max-rounds", type=positive_int_at_most(MOST["max_rounds"]), default=400,
                         help="--measure: rounds after which a hole-carder not flagged counts as never (default 400)")
    protect.add_argument("--bound-deals", type=positive_int_at_most(MOST["bound_deals"]), default=20_000,
                         help="--measure: random deals over which each bound is averaged (default 20000)")
    protect.add_argument("--workers", type=workers, default=None,
                         help="processes that build the tables the first time (default: one per CPU)")


def journal_arguments(parser: argparse.ArgumentParser, config_help: str) -> None:
    """``--journal PATH`` and ``--config PATH``, the options of a command that reads the table's journal."""
    parser.add_argument("--journal", type=file_path, default=None, help="journal file (default: the one of --config)")
    parser.add_argument("--config", type=Path, default=None, help=config_help)


def main(args: argparse.Namespace) -> int:
    """Run ``crisscross protect``; the exit status."""
    from controller.analysis.protect_names import BREAK
    from controller.analysis.protect_tables import ProtectTables
    from controller.settings.files import ConfigError, find_table_config
    from controller.journal.reader import existing_journal
    from controller.journal.record import JournalError
    from controller.service.opening import jurisdiction_for
    from controller.game.table import load_table_config
    from controller.cli.journal import journal_problem, warn_unverified

    try:
        config = load_table_config(find_table_config(args.config))
        jurisdiction = jurisdiction_for(config)
        path = Path(args.journal or config.journal)
        if not (args.measure or args.shared_cards):  # missing, not a file or empty: as recall says it
            existing_journal(path)
        if args.break_rounds is None:
            args.break_rounds = max(BREAK, args.gap)
        if args.break_rounds < args.gap:
            raise ConfigError(f"--break {args.break_rounds}: an unrated seat's break must be at least the --gap "
                              f"that ends its session ({args.gap} rounds)")
        if args.measure and args.shared_cards:
            raise ConfigError("--measure and --shared-cards are two measurements: one at a time")
        if args.shared_cards and args.per_class < 2:
            raise ConfigError(f"--per-class {args.per_class}: at least 2 sets of known cards per class are needed "
                              "for a standard error")
        if (args.measure or args.shared_cards) and args.journal is not None:
            raise ConfigError("--journal is read by the report, not by --measure or --shared-cards")
        problem = None  # the journal verified as ``recall`` and ``meters`` verify it
        if not (args.measure or args.shared_cards):
            problem = journal_problem(path, config, command="protect")
    except (OSError, ConfigError, JournalError) as exc:
        print(f"crisscross protect: {exc}", file=sys.stderr)
        return 2
    tables = ProtectTables.load(jurisdiction, args.workers, progress=sys.stderr)
    if args.shared_cards:
        from controller.simulated.shared_measure import main as shared

        return shared(jurisdiction, tables.exposed_values["optimal"], args)
    if args.measure:
        from controller.simulated.protect_measure import main as measure

        return measure(tables, args)
    from controller.service.protect_journal import scan_journal

    try:
        reports = scan_journal(path, tables, args.gap, break_rounds=args.break_rounds,
                               memory_s=args.memory_hours * 3600)
    except (OSError, JournalError) as exc:
        print(f"crisscross protect: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a record not as its type is written (``rounds_from_records``)
        from controller.cli.journal import unreadable

        return unreadable("protect", path, exc, config)
    if problem:  # still read (a dispute may need it), but marked on every copy and in the exit status
        warn_unverified("protect", path, problem, "evidence read from it may be wrong")
    shown = [r for r in reports if args.all or r.flagged]
    for report in shown:
        print(report.line())
    flagged = sum(r.flagged for r in reports)
    print(f"{len(reports)} players' evidence in {path_shown(path)} (rated players by id, unrated ones by seat); "
          f"{flagged} flagged", file=sys.stderr)
    return 1 if flagged or problem else 0
