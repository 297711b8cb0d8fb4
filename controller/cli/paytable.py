"""``crisscross paytable JURISDICTION`` (a jurisdiction's pay tables and the exact five-card bonus return,
``controller.analysis.paytable_report``) and ``crisscross paytable design`` (the pay tables closest to a house edge,
``controller.analysis.paytable_design``): docs/commands.md, "crisscross paytable".

The words after the jurisdiction are parsed after the command line's (``words``): ``design``'s by its own parser,
any other jurisdiction's take ``-v`` alone, as every subcommand does.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from controller.analysis import paytable_design
from controller.settings.files import ConfigError


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``paytable`` to the subcommands ``sub``, with ``common`` (``-v``) as every parser of the command line,
    the design's among them: kept as the parser's default ``delegate``, the one it hands the words after
    ``design`` to."""
    paytable = sub.add_parser("paytable", help="a jurisdiction's pay tables and the exact five-card bonus return",
                              parents=[common])
    paytable.add_argument("jurisdiction", metavar="JURISDICTION",
                          help="a jurisdiction code (ny, pa, nj) or the path of a pay-table file; or `design` "
                               "(crisscross paytable design --help): pay tables closest to a target house edge")
    paytable.add_argument("design_options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    paytable.set_defaults(delegate=paytable_design.parser([common]))


def words(args: argparse.Namespace, common: argparse.ArgumentParser) -> argparse.Namespace:
    """``args`` of ``paytable`` with the words after the jurisdiction parsed: ``design``'s options (its parser
    exits 2 naming a bad one), else ``-v`` (``common``), any other word left in ``design_options`` for ``main``
    to refuse. A ``-v`` before them and one among them are counted together."""
    if args.jurisdiction == "design":
        return args.delegate.parse_args(args.design_options, argparse.Namespace(  # its own --jurisdiction
            command="paytable", design=True, **({"verbose": args.verbose} if "verbose" in args else {})))
    args, args.design_options = argparse.ArgumentParser(parents=[common], add_help=False).parse_known_args(
        args.design_options, args)
    return args


def main(args: argparse.Namespace) -> int:
    """``crisscross paytable`` with ``args`` from ``words``: exit status 0, or 2 with one line on standard error for
    a word after the jurisdiction that is not ``-v`` or a jurisdiction that does not load (``design``:
    ``paytable_design.main``)."""
    if getattr(args, "design", False):
        return paytable_design.main(args)
    if args.design_options:
        print(f"crisscross paytable: unexpected {' '.join(args.design_options)}", file=sys.stderr)
        return 2
    from controller.analysis.paytable_report import five_card_bonus_return, format_paytable
    from controller.game.paytable import load_jurisdiction

    try:
        jurisdiction = load_jurisdiction(args.jurisdiction)
    except ConfigError as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2
    print(format_paytable(jurisdiction, five_card_bonus_return(jurisdiction)))
    return 0
