"""A file's path in a refusal or an error is shown by one rule (``controller.settings.text.path_shown``): as itself
when it is printable, else with each control or format character (Unicode categories Cc, Cf, Cs, Zl, Zp) escaped as
Python escapes it (``\\x1b``), so that the message stays one line and the terminal interprets nothing of it. A
journal named ``j<ESC>[2J<ESC>[31mX.db`` given to ``journal verify``, ``run --journal`` or ``--config``, ``protect``,
``recall``, ``journal export`` or ``journal init-key`` wrote the escape sequences to the operator's terminal
(clearing it and turning its text red)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from controller.settings.text import path_shown
from tests.cli_helpers import crisscross
from tests.journal_helpers import closed_store

ROOT = Path(__file__).resolve().parents[1]
#: A file name holding ESC sequences: "clear the screen" (ESC [ 2 J) and "red text" (ESC [ 3 1 m).
NAME = "j\x1b[2J\x1b[31mX.db"
#: The same name as a message must show it, written out by hand: each ESC (U+001B, category Cc) as \x1b.
ESCAPED = r"j\x1b[2J\x1b[31mX.db"


@pytest.mark.parametrize("path, shown", [
    ("/var/lib/crisscross/journal.db", "/var/lib/crisscross/journal.db"),
    ("Tisch-Ü1/Журнал 1.db", "Tisch-Ü1/Журнал 1.db"),  # letters of any script and a space are printable
    ("a\\b.db", "a\\b.db"),  # nothing escaped: the backslash is itself
    (NAME, ESCAPED),
    ("j\r\n.db", r"j\r\n.db"),  # a carriage return and a newline (Cc): the message stays one line
    ("j\u202egpj.db", r"j\u202egpj.db"),  # RIGHT-TO-LEFT OVERRIDE (Cf): would show the name reversed
    ("j\u200d.db", r"j\u200d.db"),  # ZERO WIDTH JOINER (Cf)
    ("j\u2028k\u2029.db", r"j\u2028k\u2029.db"),  # LINE and PARAGRAPH SEPARATOR (Zl, Zp)
    ("j\x85.db", r"j\x85.db"),  # NEXT LINE (C1 control, Cc)
    ("a\\b\x07.db", r"a\\b\x07.db"),  # with something escaped, a backslash is doubled: the name can be told back
    (b"j\xff.db", r"j\udcff.db"),  # a byte that is not UTF-8, as the file system decodes it (a surrogate, Cs)
    (Path("dir") / NAME, "dir/" + ESCAPED),
])
def test_a_path_is_shown_printable_as_is_and_controls_escaped(path, shown):
    assert path_shown(path) == shown


def _shows_the_name_escaped(proc: subprocess.CompletedProcess, folder: Path, name: str = ESCAPED) -> str:
    """The output of ``proc`` (stdout and stderr): no ESC byte in it and the file named escaped in it."""
    said = proc.stdout + proc.stderr
    assert "\x1b" not in said, said
    assert f"{folder}/{name}" in said, said
    return said


def _process(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``crisscross ARGS`` as a process, as an operator runs it."""
    return subprocess.run([sys.executable, "-m", "controller", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_journal_verify_names_a_store_so_named_escaped(tmp_path):
    """What ``verify`` prints on standard output of a store (kept without a key: not everything can be checked,
    exit 3) names it escaped."""
    store, _, _ = closed_store(tmp_path, keyed=False)
    named = tmp_path / NAME
    store.rename(named)
    Path(f"{store}.anchor").rename(f"{named}.anchor")
    proc = _process("journal", "verify", str(named), cwd=tmp_path)
    assert proc.returncode == 3, proc
    assert proc.stdout.startswith(f"{tmp_path}/{ESCAPED}: "), proc.stdout
    _shows_the_name_escaped(proc, tmp_path)


def test_run_names_a_journal_whose_anchor_is_refused_escaped(tmp_path):
    """The anchor's refusal (``controller.journal.key.read_anchor``: not an anchor) names the anchor file and the
    store escaped, also in the command it suggests."""
    store, _, _ = closed_store(tmp_path, keyed=False)
    named = tmp_path / NAME
    store.rename(named)
    Path(f"{store}.anchor").unlink()
    Path(f"{named}.anchor").write_text("not an anchor\n")
    proc = _process("run", "--simulate", "--rounds", "1", "--journal", str(named), cwd=tmp_path)
    assert proc.returncode == 2, proc
    said = _shows_the_name_escaped(proc, tmp_path, ESCAPED + ".anchor")
    assert f"--journal {tmp_path}/{ESCAPED} " in said


def test_run_names_a_configuration_so_named_escaped(tmp_path):
    config = tmp_path / NAME
    config.write_bytes(b"table_id: \xff\n")
    proc = _process("run", "--simulate", "--rounds", "1", "--config", str(config), cwd=tmp_path)
    assert proc.returncode == 2, proc
    assert "not UTF-8 text" in _shows_the_name_escaped(proc, tmp_path)


@pytest.mark.parametrize("content, command, problem", [
    (b"{garbage\n", ("protect", "--journal"), "line 1: not JSON"),
    (b"{garbage\n", ("recall", "--journal"), "line 1: not JSON"),
    (b"{garbage\n", ("meters", "--journal"), "line 1: not JSON"),
    (b"{garbage\n", ("rating", "--journal"), "line 1: not JSON"),
    (b"", ("journal", "verify"), "the file is empty"),
    (b"{garbage\n", ("journal", "export", "--journal"), "not a journal store"),
    (b"\x89PNG\r\n\x1a\n", ("run", "--simulate", "--rounds", "1", "--journal"),
     "neither a journal store nor a JSON-lines journal"),
    (b"key\n", ("journal", "init-key", "--file"), "exists; a journal key is never replaced"),
    (None, ("recall", "--journal"), "no such file"),
])
def test_the_commands_name_a_file_so_named_escaped(tmp_path, content, command, problem):
    path = tmp_path / NAME
    if content is not None:
        path.write_bytes(content)
    proc = crisscross(*command, path)
    assert proc.returncode == 2, proc
    assert problem in _shows_the_name_escaped(proc, tmp_path)
    assert proc.stderr.count("\n") == 1, proc.stderr


def test_run_names_a_journal_in_a_missing_folder_escaped(tmp_path):
    proc = crisscross("run", "--simulate", "--rounds", "1", "--journal", tmp_path / NAME / "j.db")
    assert proc.returncode == 2, proc
    assert "no folder" in _shows_the_name_escaped(proc, tmp_path, ESCAPED + "/j.db")


def test_journal_verify_names_a_missing_anchor_so_named_escaped(tmp_path):
    """A store so named without its anchor beside it: the verdict names the anchor it did not find, escaped too."""
    store, _, _ = closed_store(tmp_path, keyed=False)
    named = tmp_path / NAME
    store.rename(named)
    Path(f"{store}.anchor").unlink()
    proc = _process("journal", "verify", str(named), cwd=tmp_path)
    assert proc.returncode == 3, proc
    assert f"no anchor ({ESCAPED}.anchor)" in proc.stdout, proc.stdout
    _shows_the_name_escaped(proc, tmp_path)


@pytest.mark.parametrize("value, problem", [
    ('"n\\ey"', "holds the control character U+001B"),
    ('"ny\\n"', "holds the control character U+000A"),
    ('"\\u202Eny"', "holds the control character U+202E"),
])
def test_a_jurisdiction_holding_a_control_character_is_refused_at_its_line(tmp_path, value, problem):
    """table.yaml's ``jurisdiction`` was read as a file's name, its ESC written raw in "cannot read n<ESC>y"."""
    from controller.game.table import load_table_config
    from controller.settings.files import CONFIG_DIR, ConfigError

    text = (CONFIG_DIR / "table.yaml").read_text()
    assert "jurisdiction: ny " in text
    path = tmp_path / "table.yaml"
    path.write_text(text.replace("jurisdiction: ny ", f"jurisdiction: {value} ", 1))
    with pytest.raises(ConfigError, match="jurisdiction: .*" + re.escape(problem)) as refused:
        load_table_config(path)
    assert "\x1b" not in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("mode, problem", [(None, "no such file"), (0o644, "group and others may read it")])
def test_the_operators_files_refusals_name_it_escaped(tmp_path, mode, problem):
    """``operator list --file`` of a file so named, missing or readable by others, named it raw (twice: in the
    refusal and in the ``chmod 600`` it advises)."""
    named = tmp_path / NAME
    if mode is not None:
        named.write_text("operators:\n")
        named.chmod(mode)
    proc = _process("operator", "list", "--file", str(named), cwd=tmp_path)
    assert proc.returncode != 0 and problem in proc.stderr, proc
    _shows_the_name_escaped(proc, tmp_path)
