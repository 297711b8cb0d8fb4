"""Standard output that cannot be written, for every command (``controller.cli.entry``): a full disk or a
device that refuses the write (``/dev/full``) is exit status 2 with one line naming standard output and the
error, never a traceback and never the exit status 1 that ``recall`` and ``meters`` give a journal that does not
verify (docs/commands.md); a reader that went away (``| head``) ends the command quietly with exit 141 (128 +
SIGPIPE, as a shell gives a tool a closed pipe killed), never 0 nor one of the commands' verdicts, as
``controller.cli.entry`` says. Each command runs in a process of its own, its standard output a real file or pipe.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tests.journal_helpers import forge

FULL = Path("/dev/full")
NO_SPACE = "crisscross: standard output: cannot write: No space left on device\n"
#: The exit status of a command whose standard output's reader went away: 128 + SIGPIPE (13).
CLOSED_PIPE = 141
#: Commands that write to standard output, each after ``--journal JOURNAL`` where it reads one.
WRITERS = [("recall",), ("meters",), ("meters", "--format", "json"), ("journal", "export"), ("identity",)]


@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> Path:
    """A journal of three simulated rounds (``crisscross run --simulate``)."""
    return _simulated(tmp_path_factory.mktemp("journal") / "journal.db", rounds=3)


def _simulated(path: Path, *, rounds: int) -> Path:
    """``path``, made a journal of ``rounds`` simulated rounds by ``crisscross run --simulate --quiet``."""
    made = _crisscross("run", "--simulate", "--quiet", "--rounds", str(rounds), "--seed", "7", "--journal",
                       str(path), stdout=subprocess.PIPE)
    assert made.returncode == 0, made.stderr
    return path


def _crisscross(*args: str, stdout) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "controller", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120)


def _args(command: tuple[str, ...], journal: Path) -> list[str]:
    return [*command] if command[0] == "identity" else [*command, "--journal", str(journal)]


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("command", WRITERS, ids=" ".join)
def test_standard_output_on_a_full_device_is_exit_2_naming_it(command, journal):
    with FULL.open("w") as full:
        proc = _crisscross(*_args(command, journal), stdout=full)
    assert proc.returncode == 2 and proc.stderr.endswith(NO_SPACE), proc.stderr
    assert proc.stderr.count("\n") == 1 + (command[0] == "meters")  # meters says which record first


@pytest.mark.parametrize("command", WRITERS, ids=" ".join)
def test_standard_output_whose_reader_went_away_ends_quietly(command, journal):
    proc = _into_a_closed_pipe(*_args(command, journal))
    assert proc.returncode == CLOSED_PIPE, proc.stderr
    assert "Error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def tampered(tmp_path_factory) -> Path:
    """A journal of two simulated rounds with one record's data changed past the append-only triggers."""
    path = _simulated(tmp_path_factory.mktemp("tampered") / "journal.db", rounds=2)
    forge(path, ("UPDATE records SET data = ? WHERE seq = 2", ('{"button":"void_round"}',)))
    return path


def test_verify_of_a_tampered_journal_into_a_closed_pipe_is_never_intact(tampered):
    """``crisscross journal verify j.db | true`` exited 0, verify's "intact", for a tampered journal: a monitor
    whose reader died took it for clean. A closed pipe is 141, with nothing said, never a verdict."""
    assert _crisscross("journal", "verify", str(tampered), stdout=subprocess.PIPE).returncode == 1
    proc = _into_a_closed_pipe("journal", "verify", str(tampered))
    assert (proc.returncode, proc.stderr) == (CLOSED_PIPE, "")


@pytest.mark.parametrize("command", [("recall",), ("meters",)], ids=" ".join)
def test_a_journal_that_does_not_verify_into_a_closed_pipe_is_not_0(command, tampered):
    """``recall`` and ``meters`` give 1 for a journal that does not verify; under ``| head -1`` they gave 0."""
    assert _crisscross(*_args(command, tampered), stdout=subprocess.PIPE).returncode == 1
    proc = _into_a_closed_pipe(*_args(command, tampered))
    assert proc.returncode == CLOSED_PIPE and "Traceback" not in proc.stderr, proc.stderr


def _into_a_closed_pipe(*args: str) -> subprocess.CompletedProcess:
    """``crisscross ARGS`` with standard output a pipe whose reader is gone before the first write."""
    reading, writing = os.pipe()
    os.close(reading)
    try:
        return _crisscross(*args, stdout=writing)
    finally:
        os.close(writing)


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full on this system")
def test_run_keeps_the_table_going_when_its_summaries_cannot_be_written(tmp_path):
    """docs/commands.md, exit statuses: the journal is the record; summaries that cannot be written stop with a
    WARNING, the rounds go on (``Service._print_summary``) and run exits 0, never standard output's 2."""
    journal = tmp_path / "journal.db"
    with FULL.open("w") as full:
        proc = _crisscross("run", "--simulate", "--rounds", "2", "--seed", "7", "--journal", str(journal),
                           stdout=full)
    _summaries_stopped(proc, journal, "[Errno 28] No space left on device")


def test_run_keeps_the_table_going_when_its_summaries_reader_went_away(tmp_path):
    """As into a full device: run's summaries into a pipe already closed stop with a WARNING, the rounds go on,
    and run exits 0, never the 141 of another command whose reader went away."""
    journal = tmp_path / "journal.db"
    proc = _into_a_closed_pipe("run", "--simulate", "--rounds", "2", "--seed", "7", "--journal", str(journal))
    _summaries_stopped(proc, journal, "[Errno 32] Broken pipe")


def _summaries_stopped(proc: subprocess.CompletedProcess, journal: Path, error: str) -> None:
    """``proc``, a ``run`` of two rounds into ``journal``, exited 0 with both rounds closed and one WARNING that
    its summaries stopped for ``error``."""
    assert proc.returncode == 0, proc.stderr
    with closing(sqlite3.connect(journal)) as db:
        assert db.execute("SELECT count(*) FROM records WHERE type = 'RoundClosed'").fetchone() == (2,)
    assert proc.stderr.count(f"WARNING controller.service.assembly: round summaries stopped: cannot write them "
                             f"({error})\n") == 1, proc.stderr
    assert "standard output" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full on this system")
def test_an_error_of_another_file_is_still_the_commands_own(journal, tmp_path):
    """Only a write to standard output is standard output's failure: a file the command opens keeps its own
    refusal (``journal export``'s one line naming it), standard output full or not."""
    out = tmp_path / "missing" / "copy.jsonl"
    with FULL.open("w") as full:
        proc = _crisscross("journal", "export", "--journal", str(journal), "--output", str(out), stdout=full)
    assert proc.returncode == 2 and proc.stderr == f"crisscross: {out}: no folder {out.parent}\n", proc.stderr
