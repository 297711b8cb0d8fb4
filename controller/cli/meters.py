"""``crisscross meters [--journal PATH] [--config PATH] [--at SEQ] [--format text|json] [--audit]``: the
table's lifetime meters recomputed from its journal (``controller.round.meters``; NJ 13:69E-1.28C and
1.28P(e)), now or as of record ``SEQ``; ``--audit`` compares every ``MetersSnapshot`` and the last checkpoint's
meters with the records (``controller.journal.meters_audit``), with ``--at`` those up to record ``SEQ`` and the
last checkpoint at or before it. Every meter is named as the output names it (``lifetime.rounds_closed``,
``since.shoe_service``), in the audit's findings too; the text output says ``lifetime.faults  none`` when no
fault was ever raised.

The meters are only as good as the records they are counted from: the journal is verified first as ``crisscross
journal verify`` does (``controller.cli.journal.journal_problem``: the chain, the anchor, unsealed records; the
seals too with the table's journal key, when the table's configuration is read: without ``--journal``, or with
``--config``); one that does not verify is still shown (a dispute may need it)
under a warning, as ``crisscross recall`` does, and ``--audit`` fails on it before it compares any meter. A
JSON-lines copy whose last line is cut short does not verify (``truncated``), nor one with a line after its first
that is not a record (``edited``): the meters are those of its records before that line, under the warning.

Exit status: 0 shown, or the audit found nothing; 1 the journal does not verify (shown under a warning), or the
audit found a meter that differs (named on standard output with its record); 2 a journal or configuration that
cannot be read, ``--at`` past the journal's last record, or an option argparse refuses (``--at abc``: "argument
--at: must be a positive record number, got 'abc'") (one line on standard error).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.cli.protect import journal_arguments
from controller.settings.text import path_shown


def record_number(count: Callable[[str], int]) -> Callable[[str], int]:
    """The argparse type of ``--at``, a journal record's seq (an integer from 1), from ``count`` (the command
    line's type of a positive integer): a text ``count`` refuses is an ``ArgumentTypeError`` naming it, which
    argparse prints after the option (``argument --at: must be a positive record number, got 'abc'``, exit
    status 2)."""
    def parse(text: str) -> int:
        try:
            return count(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"must be a positive record number, got {text!r}") from None

    return parse


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, config_help: str,
               count: Callable[[str], int]) -> None:
    """The ``meters`` subcommand's arguments (``count``: the type of a positive integer option)."""
    meters = sub.add_parser("meters", parents=[common],
                            help="the lifetime meters recomputed from the journal; --audit checks its snapshots")
    journal_arguments(meters, config_help)
    meters.add_argument("--at", type=record_number(count), default=None, metavar="SEQ",
                        help="the meters as of record SEQ (default: the last record); with --audit, the audit of "
                             "the records up to SEQ")
    meters.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    meters.add_argument("--audit", action="store_true",
                        help="recompute every meter from the records and compare with every MetersSnapshot and the "
                             "last checkpoint: exit 1 naming the first meter and record that differ")


def main(args: argparse.Namespace) -> int:
    """Run ``crisscross meters``; the exit status (module docstring)."""
    from controller.game.table import load_table_config
    from controller.journal.meters_audit import audit, last_checkpoint, meters_of
    from controller.cli.journal import _simulated_hint, journal_problem, unreadable, warn_unverified
    from controller.journal.reader import existing_journal, iter_records
    from controller.journal.record import JournalError
    from controller.settings.files import ConfigError, find_table_config

    path = config = None
    try:
        if args.journal is None or args.config is not None:  # the table's journal, or a journal with its table's key
            config = load_table_config(find_table_config(args.config))
        if args.journal is None:
            path = existing_journal(Path(config.journal), _simulated_hint(config))
        else:
            path = existing_journal(Path(args.journal))
        problem = journal_problem(path, config, command="meters")
        # a JSON-lines copy whose last line is cut short is ``truncated`` (``problem``), one with a line after its
        # first that is not a record ``edited``: its records before that line are counted, under the warning
        last = max((record["seq"] for record in iter_records(path, up_to_damage=True)), default=0)
        if args.at is not None and args.at > last:
            raise ValueError(f"{path_shown(path)}: record {args.at} is past the journal's last record, {last}")
        if args.audit and not problem:
            checkpoint = last_checkpoint(path, args.at)
            finding = audit(iter_records(path), checkpoint, args.at)
        elif not args.audit:
            meters = meters_of(iter_records(path, up_to_damage=True), args.at)
    except (OSError, ConfigError, JournalError) as exc:
        print(f"crisscross meters: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a record without the field the meters read, or --at past the end
        return unreadable("meters", path, exc, config)
    if problem:
        warn_unverified("meters", path, problem, "meters counted from it may be wrong")
        if args.audit:
            return 1
    if args.audit:
        if finding is not None:
            print(f"{path_shown(path)}: meters differ at {finding}")
            return 1
        upto = f" up to record {args.at}" if args.at is not None else ""
        if checkpoint is not None:
            what = f"the checkpoint of record {checkpoint[0]}"
        elif args.at is None:
            what = "no checkpoint (a copy without one)"
        else:
            what = f"no checkpoint at or before record {args.at}"
        print(f"{path_shown(path)}: every meters snapshot{upto} agrees with the records; checked against {what}")
        return 0
    print(f"meters as of record {args.at if args.at is not None else last} of {path_shown(path)}", file=sys.stderr)
    shown = meters.to_json()
    print(json.dumps(shown, indent=2) if args.format == "json" else format_text(shown))
    return 1 if problem else 0


def format_text(meters: dict[str, Any]) -> str:
    """The meters of ``Meters.to_json()`` as one ``name  value`` line each, amounts in minor units; a group of
    meters with none in it (``faults`` before the first fault) is one line ``lifetime.faults  none``."""
    from controller.round.meters import flatten

    lines = list(flatten(_none_for_empty(meters)))
    width = max(len(name) for name, _ in lines)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in lines)


def _none_for_empty(meters: dict[str, Any]) -> dict[str, Any]:
    """``meters`` with each empty group of meters replaced by the text ``none``."""
    return {name: (_none_for_empty(value) if value else "none") if isinstance(value, dict) else value
            for name, value in meters.items()}
