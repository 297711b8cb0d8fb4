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

Standard output that cannot be written is said here, once for every command (``StandardOutput``): a reader that
went away (``| head``, ``BrokenPipeError``) ends the command quietly, nothing said, with status 141
(``CLOSED_PIPE``: 128 + SIGPIPE, what a shell reports for a tool a closed pipe killed, as ``yes | head -1`` with
``pipefail``), never 0 nor a command's verdict (``journal verify``'s 0, intact, of a tampered journal whose
monitor's reader died); any other failure (a full disk, ``/dev/full``) is one line on standard error naming
standard output and the error, status 2 (a refused output, as docs/commands.md gives 2 for what cannot be used:
never the 1 by which ``recall`` and ``meters`` say that a journal does not verify). What is left unwritten is
sent to ``/dev/null``, as the ``signal`` module's documentation ("Note on SIGPIPE") does, so that the
interpreter's flush at exit finds nothing to fail on. ``run``'s round summaries take the stream itself and
keep their own handling: they stop with a WARNING, the table plays on, and run's status is its own
(``Service._print_summary``).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, TextIO

#: The exit status of a command whose standard output's reader went away: 128 + SIGPIPE (13, POSIX), as a shell
#: reports a tool killed by a closed pipe.
CLOSED_PIPE = 141


class StandardOutputError(Exception):
    """Standard output could not be written: the ``OSError`` of the write or flush is its ``__cause__``. Not an
    ``OSError`` itself, so that no command takes it for a failure of a file of its own (a journal, an export's
    ``--output``): ``main`` handles it for every command."""


class StandardOutput:
    """``stream`` (``sys.stdout`` as the process started with it) whose ``write``, ``writelines`` and ``flush``
    raise ``StandardOutputError`` from an ``OSError``; every other attribute is the stream's own. A writer that
    handles its own write errors takes ``stream`` (``run``'s round summaries stop and the table goes on:
    ``Service._print_summary``)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError as exc:
            raise StandardOutputError(exc) from exc

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as exc:
            raise StandardOutputError(exc) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def main(argv: list[str] | None = None) -> int:
    """Run the command of ``argv`` (``sys.argv[1:]`` when None) with standard output as ``StandardOutput`` and
    return its exit status; standard output that cannot be written is ``CLOSED_PIPE`` (141) or 2 (module
    docstring)."""
    stream = sys.stdout
    if stream is not None:  # None: started with standard output closed (``>&-``), each command's to say
        sys.stdout = StandardOutput(stream)  # type: ignore[assignment]
    try:
        status = _command(argv)
        if sys.stdout is not None:
            sys.stdout.flush()  # what is still buffered, while a failure can still be said
        return status
    except StandardOutputError as exc:
        return _output_lost(exc.__cause__, stream)
    finally:
        sys.stdout = stream


def _output_lost(exc: BaseException | None, stream: TextIO) -> int:
    """Standard output ``stream`` failed with ``exc``: its descriptor now writes to ``/dev/null`` (what is left
    buffered goes there at exit); ``CLOSED_PIPE`` (141), nothing said, for a reader that went away, else 2 after
    one line on standard error."""
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError):  # a stream of the process's own (a test's StringIO): no descriptor to redirect
        descriptor = None
    if descriptor is not None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, descriptor)
        os.close(devnull)
    if isinstance(exc, BrokenPipeError):
        return CLOSED_PIPE
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    print(f"crisscross: standard output: cannot write: {reason}", file=sys.stderr)
    return 2


def _command(argv: list[str] | None) -> int:
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
