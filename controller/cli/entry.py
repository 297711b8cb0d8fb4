"""The ``crisscross`` program's entry (``[project.scripts]``, ``python -m controller``): the command line loaded
with Ctrl-C held back, then run.

A SIGINT that lands while a compiled extension initialises (orjson 3's, imported by the command line: a
``KeyboardInterrupt`` raised inside its import ends the interpreter with a segmentation fault, status -11) is
held until the command line is loaded, and then ends the program as an interrupt anywhere else does
(``controller.cli.main.main``): one line on standard error, status 130. Only the loading is covered: a
command that imports more later (``run``, the analysis) handles its own interrupts.

``run`` checks first that the code that would run is the software's files (GLI-11 program verification,
``controller.service.identity.verified_software_identity``), before the command line and the service are
imported, and ``identity`` is answered then too: only this module, the packages' ``__init__`` and
``controller.service.identity`` (which imports the standard library alone) run before the check.
"""

from __future__ import annotations

import signal
import sys


def main(argv: list[str] | None = None) -> int:
    """Load ``controller.cli.main`` with SIGINT held back, then run ``main(argv)`` and return its exit status;
    130 with ``crisscross: interrupted`` on standard error, the command not run, when SIGINT came during the
    loading; 2, nothing loaded, for ``run`` when other code than the software's files would run (module
    docstring). Called from the main thread (a signal's handler can be set only there)."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["identity"]:  # answered before the command line's modules run; --help and the like by it
        from controller.service.identity import form_of, report, software_identity

        if (form := form_of(given[1:])) is not None:
            return report(software_identity(), form, sys.stdout, sys.stderr, "crisscross: identity")
    words = [word for word in given if not word.startswith("-")]
    if words[:1] == ["run"]:  # the one option before a subcommand, --version, takes no value
        from controller.service.identity import SoftwareIdentityError, verified_software_identity

        try:
            verified_software_identity()
        except SoftwareIdentityError as exc:
            print(f"crisscross: {exc}", file=sys.stderr)
            return 2
    held: list[int] = []
    before = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        from controller.cli.main import main as command_line
    finally:
        signal.signal(signal.SIGINT, before)
    if held:
        print("crisscross: interrupted", file=sys.stderr)
        return 130
    return command_line(argv)
