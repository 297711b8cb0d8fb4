"""``crisscross rating [--journal PATH] [--config PATH] [--gap N] [--decisions-per-hour N] [--player ID] [--format
text|json]``: every seat session of a journal (``--player``: of that player only) with its exact rating
(``controller.service.rating``): rounds, time played, handle per wager, the house's actual win and its standard
error, the theoretical win of the play made (``controller.analysis.rating``) and the conventional rating beside it.
Imports no NumPy until it runs.

The journal is verified first as ``crisscross journal verify`` does, with table.yaml's journal key
(``controller.cli.journal.journal_problem``): a journal that does not
verify is still rated, under a warning (as ``crisscross meters`` does), exit status 1. Exit status 0: rated;
2: a journal or configuration that cannot be read, or a round that cannot be valued (named).

JSON: ``{"jurisdiction", "house_edge", "decisions_per_hour", "sessions": [{"seat", "player", "seats", "first_round",
"last_round", "open", "rounds", "seconds", "handle": {"ante_across": N, ...}, "actual_win": N,
"theoretical_win": X, "theoretical_win_exact": "p/q", "actual_standard_error": X, "theoretical_standard_error":
X, "conventional_win": X}]}``, wins the house's in minor units.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from controller.cli.protect import journal_arguments


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, config_help: str,
               count: Callable[[str], int]) -> None:
    """The ``rating`` subcommand's arguments (``count``: the type of a positive integer option)."""
    rating = sub.add_parser("rating", parents=[common],
                            help="each seat session's handle, actual and exact theoretical win, from the journal")
    journal_arguments(rating, config_help)
    rating.add_argument("--gap", type=count, default=3,
                        help="rounds in a row without wagers at a seat that end its session (default 3)")
    rating.add_argument("--decisions-per-hour", type=count, default=60,
                        help="decisions an hour assumed by the conventional rating (default 60)")
    rating.add_argument("--player", type=player_id, default=None, metavar="ID",
                        help="only the sessions of the player with this id (POST /sessions rate_seat)")
    rating.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")


def player_id(text: str) -> str:
    """argparse type of ``--player``: a player's id as ``POST /sessions`` takes it (``PLAYER_ID``), else an
    ``ArgumentTypeError`` naming the text."""
    import re

    from controller.game.sessions import PLAYER_ID

    if not re.fullmatch(PLAYER_ID, text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a player's id (1 to 32 letters, digits or dashes)")
    return text


def main(args: argparse.Namespace) -> int:
    """Run ``crisscross rating``; the exit status (module docstring)."""
    from controller.analysis.rating import DecisionValues, RatingError
    from controller.cli.journal import _simulated_hint, journal_problem, unreadable, warn_unverified
    from controller.game.table import load_table_config
    from controller.journal.reader import existing_journal, iter_records
    from controller.journal.record import JournalError
    from controller.journal.sessions import sessions_of
    from controller.service.opening import jurisdiction_for
    from controller.service.rating import rate_all
    from controller.settings.files import ConfigError, find_table_config

    path = config = None
    try:
        config = load_table_config(find_table_config(args.config))
        jurisdiction = jurisdiction_for(config)
        path = existing_journal(Path(args.journal)) if args.journal is not None else \
            existing_journal(Path(config.journal), _simulated_hint(config))
        problem = journal_problem(path, config, command="rating", mark_output=args.format != "json")
        sessions = [s for s in sessions_of(iter_records(path, up_to_damage=True), args.gap)
                    if args.player is None or s.player == args.player]
        edge, ratings = rate_all(sessions, DecisionValues(jurisdiction), args.decisions_per_hour)
    except (OSError, ConfigError, JournalError, RatingError) as exc:
        print(f"crisscross rating: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a record not as its type is written (``rounds_from_records``)
        return unreadable("rating", path, exc, config)
    if problem:
        warn_unverified("rating", path, problem, "figures read from it may be wrong")
    if args.format == "json":
        print(json.dumps({"jurisdiction": jurisdiction.code, "house_edge": round(float(edge), 9),
                          "decisions_per_hour": args.decisions_per_hour,
                          "sessions": [r.to_json() for r in ratings]}, indent=2))
    else:
        print(format_text(ratings, edge, args.decisions_per_hour, args.player))
    return 1 if problem else 0


def format_text(ratings: list, edge, decisions_per_hour: int, player: str | None = None) -> str:
    """One block a session: its seat (every seat, for a player who moved), player and rounds, then its figures in
    major units (2 decimals)."""
    from controller.game.money import money

    lines = [f"house edge under optimal play: {float(edge):.4%} of the two antes; conventional rating at "
             f"{decisions_per_hour} decisions an hour"]
    if not ratings:
        lines.append(f"no session of player {player}" if player else "no session: no round with wagers in this journal")
    for r in ratings:
        seats = "seat " + " then ".join(map(str, r.seats))
        who = f" player {r.player}" if r.player else ""
        se = "-" if r.actual_standard_error is None else money(round(r.actual_standard_error))
        handle = ", ".join(f"{w} {money(a)}" for w, a in r.handle.items() if a)
        lines += [f"{seats}{who}: rounds {r.first_round}-{r.last_round} ({r.rounds} played, {r.seconds / 60:.1f} min, "
                  f"{'open' if r.open else 'ended'})",
                  f"  handle: {handle or 'none'}",
                  f"  actual win {money(r.actual_win)} (standard error {se}); theoretical win "
                  f"{money(round(r.theoretical_win))}; conventional {money(round(r.conventional_win))}"]
    return "\n".join(lines)
