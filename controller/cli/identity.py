"""``crisscross identity``: the software's identity (GLI-11 program verification), the SHA-256 of every file of
the installed packages and the digest over them (``controller.service.identity``), as text or JSON."""

from __future__ import annotations

import argparse
import sys

from controller.service.identity import FORMATS


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """The ``identity`` subcommand's arguments."""
    identity = sub.add_parser("identity", parents=[common],
                              help="the SHA-256 of every installed file of the software and one digest over them")
    identity.add_argument("--format", choices=FORMATS, default="text",
                          help="text: sha256sum lines, then the digest and where the files came from (default); "
                               "json: {\"digest\", \"origin\", \"files\": [{\"path\", \"sha256\"}], "
                               "\"problems\": [...]}; exit 1 when other code than the files listed would run "
                               "(bytecode not compiled from its source, a file Python could import not listed)")


def main(args: argparse.Namespace) -> int:
    """Print the identity in ``args.format``; 0, or 1 when other code than the files listed would run
    (``Identity.problems``, each named on standard error too; ``controller.service.identity.report``). A file
    that cannot be read is an ``OSError`` naming it."""
    from controller.service.identity import report, software_identity  # only this command hashes the files

    return report(software_identity(), args.format, sys.stdout, sys.stderr, "crisscross: identity")
