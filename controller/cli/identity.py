"""``crisscross identity``: the software's identity (GLI-11 program verification), the SHA-256 of every file of
the installed packages and the digest over them (``controller.service.identity``), as text or JSON."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """The ``identity`` subcommand's arguments."""
    identity = sub.add_parser("identity", parents=[common],
                              help="the SHA-256 of every installed file of the software and one digest over them")
    identity.add_argument("--format", choices=("text", "json"), default="text",
                          help="text: sha256sum lines, then the digest and where the files came from (default); "
                               "json: {\"digest\", \"origin\", \"files\": [{\"path\", \"sha256\"}]}")


def main(args: argparse.Namespace) -> int:
    """Print the identity in ``args.format``; 0. A file that cannot be read is an ``OSError`` naming it."""
    from controller.service.identity import software_identity  # only this command hashes the installed files

    identity = software_identity()
    if args.format == "json":
        print(json.dumps({"digest": identity.digest, "origin": identity.origin,
                          "files": [{"path": path, "sha256": sha} for path, sha in identity.files]}, indent=1))
        return 0
    sys.stdout.write(identity.listing())
    print(f"digest {identity.digest} (SHA-256 of the {len(identity.files)} lines above; files "
          f"{'as installed' if identity.origin == 'installed' else 'of the checkout, not an installed wheel'})")
    return 0
