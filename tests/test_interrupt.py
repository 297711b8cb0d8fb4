"""Ctrl-C at a terminal (SIGINT to the command's whole process group) ends a long command with its worker
processes at once: one line on standard error, status 130, no traceback, no worker left
(controller/analysis/workers.py, controller/cli/main.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

#: Seconds a step may take on a loaded two-core machine (a deadline, not a wait).
PATIENCE = 120.0


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux ``/proc``)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text().split()
        found += [int(child) for child in children]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_ctrl_c_ends_a_measure_and_its_workers_at_once(tmp_path):
    command = [sys.executable, "-m", "controller", "protect", "--measure", "--seed", "1", "--workers", "2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                               start_new_session=True,  # its own group, as a terminal's foreground job
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + PATIENCE
        workers: list[int] = []
        while len(workers) < 2:  # both workers started (and so busy with their first job)
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the measure's workers did not start"
            workers = _children(process.pid)
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=PATIENCE)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 130
    assert err.decode() == "crisscross: interrupted\n"
    assert not [pid for pid in workers if _alive(pid)]


def test_ctrl_c_inside_compiled_code_ends_with_the_same_line(monkeypatch, capsys):
    """SIGINT while numba's compiled code runs (``crisscross rating`` reading its tables) surfaces as a
    ``SystemError`` raised from the ``KeyboardInterrupt``: the same line and status 130; any other
    ``SystemError`` is a defect and goes on up."""
    import pytest

    from controller.cli import main as cli

    def interrupted_in_compiled_code(argv):  # as numba raises it: a SystemError over a SystemError over the interrupt
        try:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as exc:
                raise SystemError("<function _numba_unpickle> returned a result with an exception set") from exc
        except SystemError as exc:
            raise SystemError("CPUDispatcher(<function decision_values>) returned a result with an exception set") \
                from exc

    monkeypatch.setattr(cli, "_main", interrupted_in_compiled_code)
    assert cli.main(["rating"]) == 130
    assert capsys.readouterr().err == "crisscross: interrupted\n"

    def broken(argv):
        raise SystemError("a defect")

    monkeypatch.setattr(cli, "_main", broken)
    with pytest.raises(SystemError, match="a defect"):
        cli.main(["rating"])


#: A process that sends itself SIGINT while orjson's compiled module initialises (it imports ``uuid`` from its
#: init, inside the command line's loading), then runs ``crisscross --version`` through the program's entry, and
#: prints the SIGINT handler left in place.
_INTERRUPTED_WHILE_LOADING = """
import os, signal, sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "uuid":
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Interrupt())
from controller.cli.entry import main
status = main(["--version"])
print("handler restored:", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
raise SystemExit(status)
"""


def test_ctrl_c_while_the_command_line_loads_ends_with_the_same_line():
    """SIGINT inside orjson's initialisation (a ``KeyboardInterrupt`` raised there crashes the interpreter with a
    segmentation fault) is held until the command line is loaded, then ends the program as any interrupt does:
    one line, status 130, the command not run; the usual SIGINT handler is back afterwards
    (controller/cli/entry.py)."""
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_WHILE_LOADING], capture_output=True, text=True,
                          timeout=PATIENCE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert (done.returncode, done.stderr) == (130, "crisscross: interrupted\n")
    assert done.stdout == "handler restored: True\n"  # and no version printed: the command did not run


def test_the_program_runs_its_command_when_not_interrupted():
    """The entry with no interrupt runs the command (``--version``: the version on standard output, status 0)."""
    done = subprocess.run([sys.executable, "-m", "controller", "--version"], capture_output=True, text=True,
                          timeout=PATIENCE)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
