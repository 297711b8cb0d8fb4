"""A child process of the rig that ends when the rig does, however the rig ends (docs/rig.md, "The service's
process").

    python -I hil/tether.py PARENT_PID PROGRAM [ARG...]

asks Linux to send this process SIGKILL when its parent dies (prctl(2) ``PR_SET_PDEATHSIG``, kept across
execve), checks that its parent is still ``PARENT_PID`` (the rig may have died between fork and prctl: then the
process is an orphan already and ends at once, status 1), and executes ``PROGRAM`` in its place (same pid), so
the rig's ``Popen`` handle, its signals and exit status are those of ``PROGRAM``. A wrapper rather than
``preexec_fn``: the rig has threads running (simulators), and Python code between fork and exec is not safe
then (the subprocess module's documentation).

Linux delivers the signal when the *thread* that started the child ends, not only the process: a child must be
started from a thread that outlives it (the rig's main thread, or a scenario's worker thread, which stops its
service before it ends). Elsewhere than Linux the program is executed without the tie.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

#: prctl(2) option: the signal sent to this process when its parent dies (<linux/prctl.h>).
PR_SET_PDEATHSIG = 1


def tethered(command: list[str]) -> list[str]:
    """``command`` (a program and its arguments) run through this module, tied to the calling process: it gets
    SIGKILL when this process dies. The module runs by its path in isolated mode (``-I``: it needs the standard
    library alone, whatever the folder the rig was started in). Unchanged elsewhere than Linux."""
    if not sys.platform.startswith("linux"):
        return list(command)
    return [sys.executable, "-I", os.path.abspath(__file__), str(os.getpid()), *command]


def main(argv: list[str]) -> int:
    """Set the parent-death signal, check the parent, execute ``argv[1:]``; returns only on an error: 2 for a
    bad command line (said on stderr), 1 when the parent ``argv[0]`` is gone already. ``OSError`` when prctl
    or execve fail."""
    if len(argv) < 2 or not argv[0].isdigit():
        print("usage: python -I hil/tether.py PARENT_PID PROGRAM [ARG...]", file=sys.stderr)
        return 2
    parent = int(argv[0])
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"prctl(PR_SET_PDEATHSIG): {os.strerror(error)}")
        if os.getppid() != parent:  # the parent died before the tie was made: nobody will end us
            return 1
    os.execvp(argv[1], argv[1:])  # searches PATH for a bare name
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
