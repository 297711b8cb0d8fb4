"""``crisscross`` run in the test's own process: ``controller.cli.main.main`` with its standard input, output and
error captured, answered in the shape ``subprocess.run`` gives (``returncode``, ``stdout``, ``stderr``).

The error contracts of the command line (an exit status and one line naming what was wrong and where) have many
cases; a process start is most of each one's time. Each command keeps at least one test that runs the real
process (``python -m controller`` or the console script)."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

from controller.cli import main as cli


def crisscross(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """Run ``crisscross ARGS`` in this process with ``stdin`` as its standard input; return its exit status and
    what it wrote. ``SystemExit`` (argparse refusing the command line) is its exit status, as for the process;
    any other exception the command does not handle propagates (the test fails with it)."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    try:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")  # with its .buffer
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main(argv)
            except SystemExit as exc:  # argparse's refusal of the command line: its message is on stderr
                status = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    finally:
        sys.stdin = saved
    return subprocess.CompletedProcess(["crisscross", *argv], status, out.getvalue(), err.getvalue())
