"""The ``crisscross`` command line's refusals: its option types, ``run``, ``config``, ``recall``, ``settle``,
``paytable`` and the journal and operator tools, run in the test's own process (``tests/cli_helpers.py``).

The right values come from docs/commands.md ("crisscross run": exit status 2 for a refused configuration or input, one
line naming it; "The journal": the exit statuses of the journal tools; "Recalling rounds": a journal that does not
verify is shown under a warning with exit status 1), from ``controller/cli/main.py``'s module docstring and from the
docstrings of its option types (a TCP port is 0 to 65535, rounds are ``A-B`` with 1 <= A <= B, a probability is
from 0 to 1)."""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cli import main as cli
from controller.journal.reader import read_records
from controller.settings.files import CONFIG_DIR
from tests.cli_helpers import crisscross
from tests.examples import examples
from tests.journal_helpers import exported_lines, verify_cli

TABLE = CONFIG_DIR / "table.yaml"


def _refused_in_one_line(proc, start: str) -> None:
    """Exit status 2, nothing on standard output, one line on standard error beginning with ``start``."""
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(start), proc.stderr


# ---------------------------------------------------------------------------------------------- option types
@settings(max_examples=examples(200), deadline=None)
@given(st.integers(min_value=-10**6, max_value=10**6))
def test_property_a_port_is_a_plain_number_from_0_to_65535(n):
    text = str(n)
    if 0 <= n <= 65535:
        assert cli.port_number(text) == n
    else:
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(f"from 0 to 65535, got '{text}'")):
            cli.port_number(text)


@pytest.mark.parametrize("text", ["+80", " 80", "80.0", "0x50", "eighty", ""])
def test_a_port_written_other_than_in_plain_digits_is_refused_naming_it(text):
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(f"got {text!r}")):
        cli.port_number(text)


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(min_value=-5, max_value=10**6), st.integers(min_value=-5, max_value=10**6))
def test_property_rounds_a_to_b_are_taken_when_1_le_a_le_b(a, b):
    text = f"{a}-{b}"
    if 1 <= a <= b <= 10**9:
        assert cli.round_range(text) == (a, b)
        assert cli.round_range(str(a)) == (a, a)  # one round: A alone
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="got "):
            cli.round_range(text)


@pytest.mark.parametrize("text, message", [
    ("3-1", "expected rounds A-B with 1 <= A <= B <= 1,000,000,000, got 3-1"),
    ("0-4", "expected rounds A-B with 1 <= A <= B <= 1,000,000,000, got 0-4"),
    ("1-1000000001", "expected rounds A-B with 1 <= A <= B <= 1,000,000,000, got 1-1000000001"),
    ("a-b", "expected rounds A or A-B, round numbers in ASCII digits (e.g. 3 or 3-7), got 'a-b'"),
    ("-2", "expected rounds A or A-B, round numbers in ASCII digits (e.g. 3 or 3-7), got '-2'"),
])
def test_a_round_range_out_of_order_or_not_numbers_is_refused_naming_it(text, message):
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        cli.round_range(text)
    assert str(refused.value) == message


@pytest.mark.parametrize("text", ["0", "-3", "1000000001", "99999999999999999999999"])
def test_a_count_of_zero_or_below_or_past_a_billion_is_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(f"expected a positive integer of at most "
                                                                   f"1,000,000,000, got {text}")):
        cli.positive_int(text)
    assert cli.positive_int("1000000000") == 10**9


@pytest.mark.parametrize("command", [("par-sheet", "ny"), ("protect", "--measure"),
                                     ("paytable", "design", "--target-house-edge", "0.03", "--vary", "bet")])
@pytest.mark.parametrize("text", ["0", "-5", "x", "past"])
def test_a_number_of_workers_past_four_a_processor_or_below_one_is_refused(command, text):
    """Each ``--workers`` takes 1 to four processes for each processor the command may use (its CPU affinity):
    ``--workers 1000`` started hundreds of processes of about 90 MB each before this; ``paytable design --workers
    -5`` ended in a ``ValueError`` traceback."""
    import os

    most = 4 * len(os.sched_getaffinity(0))
    given = str(most + 1) if text == "past" else text
    proc = crisscross(*command, "--workers", given)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1].endswith(
        f"error: argument --workers: expected a number of processes from 1 to {most} (4 for each of the "
        f"{most // 4} processors this command may use), got {given}")


def test_the_bound_on_workers_is_four_a_processor_and_takes_it():
    from controller.settings.argtypes import processors, workers
    import os

    assert processors() == len(os.sched_getaffinity(0))
    assert workers(str(4 * processors())) == 4 * processors() and workers("1") == 1


@pytest.mark.parametrize("kind, text", [("probability", "1.00000000000000001"), ("probability", "-1e-30"),
                                        ("seconds", "100000000.000000001"), ("positive_float", "1e-400"),
                                        ("positive_float", "1e400")])
def test_a_number_past_its_bound_is_refused_by_its_exact_value(kind, text):
    """A number was compared with its bound after ``float()``: ``1.00000000000000001`` is 1.0 as a float and was
    taken as a probability; ``1e-400`` is 0.0 and ``1e400`` infinity. Each is past its bound written as it is."""
    from controller.settings import argtypes

    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(f"got {text}")):
        getattr(argtypes, kind)(text)


@pytest.mark.parametrize("kind, text, value", [("probability", "1", 1.0), ("probability", "0", 0.0),
                                               ("seconds", "1e8", 1e8), ("seconds", " 2.5 ", 2.5),
                                               ("positive_float", "1e-300", 1e-300)])
def test_a_number_on_or_within_its_bound_is_taken(kind, text, value):
    """The bounds themselves and what lies within them are taken, as floats."""
    from controller.settings import argtypes

    assert getattr(argtypes, kind)(text) == value


@pytest.mark.parametrize("command", [("recall", "--last", "99999999999999999999999"),
                                     ("journal", "export", "--rounds", "1-99999999999999999999999"),
                                     ("run", "--simulate", "--rounds", "99999999999999999999999")])
def test_a_count_past_sqlite_integers_is_refused_on_the_command_line(command):
    """``recall --last`` and ``export --rounds`` of 23 digits ended in ``OverflowError`` (SQLite's integers end
    at 2**63 - 1); ``run --rounds`` took it."""
    proc = crisscross(*command)
    assert proc.returncode == 2 and "got " in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", [("run", "--simulate", "--rounds", "1"), ("recall",), ("meters",), ("protect",)])
@pytest.mark.parametrize("text", ["", "  ", ".", "/tmp/"])
def test_a_journal_option_that_names_no_file_is_refused_naming_it(command, text, capsys):
    """``--journal ''`` (or a folder by its trailing ``/``) ended in a traceback of ``pathlib``: refused, status 2."""
    with pytest.raises(SystemExit) as stop:
        cli.main([*command, "--journal", text])
    assert stop.value.code == 2
    assert f"argument --journal: expected a file's path, got {text!r}" in capsys.readouterr().err


def test_a_count_that_is_not_a_number_is_refused_naming_the_text_not_the_function():
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape("expected a positive integer of at most 1,000,000,000, got abc")):
        cli.positive_int("abc")
    proc = crisscross("recall", "--last", "ten")
    assert proc.returncode == 2 and "argument --last: expected a positive integer of at most 1,000,000,000, got ten" in proc.stderr
    assert "positive_int" not in proc.stderr


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), st.text(max_size=8)))
def test_property_a_probability_is_a_number_from_0_to_1_and_a_duration_a_finite_one_above_0(text):
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    for parse, accepted in ((cli.probability, 0.0 <= value <= 1.0), (cli.positive_float, 0.0 < value < math.inf)):
        if accepted:
            assert parse(text) == value
        else:
            with pytest.raises(argparse.ArgumentTypeError, match=", got "):
                parse(text)


def test_a_bad_option_value_on_the_command_line_is_exit_status_2_naming_the_option():
    proc = crisscross("journal", "export", "--rounds", "9-2")
    assert proc.returncode == 2 and "--rounds" in proc.stderr and "got 9-2" in proc.stderr
    proc = crisscross("recall", "--last", "0")
    assert proc.returncode == 2 and "--last" in proc.stderr and "expected a positive integer of at most 1,000,000,000, got 0" in proc.stderr


@pytest.mark.parametrize("text", ["5-", "-5", "1_0-2_0", "\uff15-\uff16", "1 - 2", " 1-2", "1-2\n", "1-2-3", "",
                                  "+1-2", "0x1-2", "\u0665-\u0666"])
def test_export_rounds_are_a_or_a_b_in_ascii_digits_and_nothing_else(text, tmp_path):
    """``journal export --rounds``: ``A`` or ``A-B`` in ASCII digits (docs/commands.md, "crisscross journal").
    ``5-`` was taken as round 5 alone (an empty bound read as the first), and ``int`` took underscores, spaces
    and other scripts' digits (``1_0-2_0``, ``1 - 2``, full-width ``\uff15-\uff16``): refused, naming the text
    and the form, before any journal is read."""
    proc = crisscross("journal", "export", "--journal", tmp_path / "absent.db", "--rounds", text)
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.splitlines()[-1].endswith(
        f"error: argument --rounds: expected rounds A or A-B, round numbers in ASCII digits (e.g. 3 or 3-7), "
        f"got {text!r}"), proc.stderr


def test_export_rounds_of_one_round_or_a_range_are_read_as_written():
    assert cli.round_range("3") == (3, 3) and cli.round_range("3-7") == (3, 7) and cli.round_range("007") == (7, 7)


# ---------------------------------------------------------------------------------------- crisscross run
@pytest.mark.parametrize("args, start", [
    (("--port", "shoe"), "crisscross: --port 'shoe': expected DEVICE=PORT with DEVICE one of shoe, sensors, panel"),
    (("--port", "printer=/dev/ttyUSB0"), "crisscross: --port 'printer=/dev/ttyUSB0': expected DEVICE=PORT"),
    (("--port", "panel="), "crisscross: --port 'panel=': expected DEVICE=PORT"),
    (("--port", "shoe=/dev/tty\x1b[2JX"),
     "crisscross: --port 'shoe=/dev/tty\\x1b[2JX': the port holds the control character U+001B"),
    (("--port", "panel=/dev/tty\u202eS0"), "crisscross: --port 'panel=/dev/tty\\u202eS0': the port holds the control"),
    (("--manual",), "crisscross: --manual only applies to the simulated table of --simulate"),
    (("--payout-errors", "0.1"), "crisscross: --payout-errors only applies to the simulated dealer of --simulate"),
    (("--simulate", "--mistakes", "1.5"), "crisscross: --mistakes 1.5: expected a probability from 0 to 1"),
    (("--simulate", "--mistakes", "nan"), "crisscross: --mistakes nan: expected a probability from 0 to 1"),
    (("--simulate", "--payout-errors", "-0.5"), "crisscross: --payout-errors -0.5: expected a probability"),
    (("--player-strategy", "2:never_fold"),
     "crisscross: --player-strategy and --hole-carder only apply to the simulated players of --simulate"),
    (("--simulate", "--player-strategy", "2"), "crisscross: --player-strategy '2': expected SEAT:"),
    (("--simulate", "--hole-carder", "2:middle:2"), "crisscross: --hole-carder '2:middle:2': probability 2.0"),
    (("--simulate", "--player-strategy", "9:never_fold"),
     "crisscross: seat 9: not a seat of the table in --player-strategy/--hole-carder (seats: 1, 2, 3, 4, 5, 6)"),
    (("--simulate", "--player-strategy", "2:never_fold", "--hole-carder", "2:middle"),
     "crisscross: seat 2: given twice in --player-strategy/--hole-carder"),
])
def test_run_refuses_what_it_cannot_do_before_starting_anything(tmp_path, args, start):
    """docs/commands.md, "crisscross run": a refused configuration or input is exit status 2 in one line, before any
    device or journal is opened (the journal given is never created)."""
    journal = tmp_path / "j.db"
    proc = crisscross("run", "--rounds", "1", "--journal", journal, *args)
    _refused_in_one_line(proc, start)
    assert not journal.exists()


@pytest.mark.parametrize("options, flag", [(("--simulate", "--protect"), "--simulate"), (("--protect",), "--protect"),
                                           (("--rating",), "--rating")])
def test_run_without_the_analysis_extra_says_how_to_install_it_and_opens_nothing(tmp_path, monkeypatch, options,
                                                                                 flag):
    """docs/operations.md, "Installing on a table PC": the simulated players, the hole-card detector and the rating
    need the analysis extra; without numpy the refusal names the extra, before any journal is begun."""
    real = cli.importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name, *a: None if name == "numpy" else real(name, *a))
    journal = tmp_path / "j.db"
    proc = crisscross("run", *options, "--rounds", "1", "--journal", journal)
    _refused_in_one_line(proc, f"crisscross: {flag} needs the analysis extra (numpy is missing)")
    assert not journal.exists() and not (tmp_path / "j.db.anchor").exists()


def test_run_on_a_journal_that_cannot_be_opened_names_the_file(tmp_path):
    """A journal whose anchor (``<journal>.anchor``) cannot be read is exit 2 naming the file, not a
    traceback, and no journal is begun."""
    journal = tmp_path / "j.db"
    (tmp_path / "j.db.anchor").mkdir()  # a folder where the anchor goes
    proc = crisscross("run", "--simulate", "--rounds", "1", "--journal", journal)
    _refused_in_one_line(proc, f"crisscross: {journal}: no journal store, and anchor {tmp_path / 'j.db.anchor'}: "
                               f"cannot read it: Is a directory: not started")
    assert not journal.exists()


# --------------------------------------------------------------------------------------------- config init
def test_config_init_refuses_a_file_in_place_of_the_folder(tmp_path):
    target = tmp_path / "table.yaml"
    target.write_text("x: 1\n")
    proc = crisscross("config", "init", target)
    _refused_in_one_line(proc, f"crisscross: {target}: a file, not a folder; nothing was written")
    assert target.read_text() == "x: 1\n"


def test_config_init_into_a_folder_it_cannot_create_names_it(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("")
    proc = crisscross("config", "init", plain / "site")  # under a file, not a folder
    _refused_in_one_line(proc, f"crisscross: {plain / 'site'}: Not a directory")


def test_config_unit_without_the_unit_file_in_the_install_is_exit_2_naming_it(tmp_path, monkeypatch):
    missing = tmp_path / "crisscross.service"
    monkeypatch.setattr(cli, "UNIT_FILE", missing)
    proc = crisscross("config", "unit")
    _refused_in_one_line(proc, f"crisscross: {missing}: No such file or directory: this install has no systemd unit")


# -------------------------------------------------------------------------------------------------- recall
def _played_store(tmp_path: Path) -> Path:
    """A store holding one closed round (``tests.test_recovery.play_until``)."""
    from tests.test_recovery import Recorder, play_until

    path = tmp_path / "j.db"
    recorder = Recorder(path)
    play_until(recorder)
    recorder.journal.close()
    return path


def test_recall_of_a_json_lines_copy_shows_its_rounds_as_the_store(tmp_path):
    store = _played_store(tmp_path)
    copy = tmp_path / "copy.jsonl"
    copy.write_text("".join(exported_lines(store)))
    from_store, from_copy = crisscross("recall", "--journal", store), crisscross("recall", "--journal", copy)
    assert from_store.returncode == from_copy.returncode == 0
    assert "Round 1 (closed)" in from_copy.stdout and from_copy.stdout == from_store.stdout


def test_recall_of_a_copy_that_does_not_verify_warns_on_the_copy_and_exits_1(tmp_path):
    """docs/commands.md, "crisscross recall": still shown, under a warning line, exit status 1."""
    lines = exported_lines(_played_store(tmp_path))
    record = json.loads(lines[2])
    record["time"] = record["time"].replace("0", "1", 1)  # edited, hash left as it was
    lines[2] = json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"
    copy = tmp_path / "copy.jsonl"
    copy.write_text("".join(lines))
    proc = crisscross("recall", "--journal", copy)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"WARNING: {copy} does not verify: line 3, seq 3: edited")
    assert "(run crisscross journal verify)" in proc.stderr


def test_recall_without_a_table_journal_points_at_the_simulated_one(tmp_path, monkeypatch):
    """A supervisor who played with --simulate and recalls without --journal is told where simulated play went
    (docs/commands.md, "crisscross run": simulated play keeps a journal of its own)."""
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path / "state"))
    simulated = tmp_path / "state" / "simulated" / "journal.db"
    simulated.parent.mkdir(parents=True)
    simulated.write_bytes(b"x")
    proc = crisscross("recall", "--config", TABLE)
    _refused_in_one_line(proc, f"crisscross recall: {tmp_path / 'state' / 'journal.db'}: no such file "
                               f"(simulated play is in {simulated}: --journal {simulated})")


# -------------------------------------------------------------------------------------------- journal tools
def test_export_to_a_file_that_exists_is_refused_and_leaves_it_as_it_was(tmp_path):
    """Export never writes over a file, and says so as ``paytable design`` does: a bare ``File exists`` left the
    reader to guess that another name is the way."""
    store = _played_store(tmp_path)
    out = tmp_path / "out.jsonl"
    out.write_text("kept\n")
    proc = crisscross("journal", "export", "--journal", store, "--output", out)
    _refused_in_one_line(proc, f"crisscross: {out}: File exists: export never writes over a file (name another "
                               f"with --output)\n")
    assert out.read_text() == "kept\n"


def test_export_to_a_folder_is_refused_as_a_file_that_exists(tmp_path):
    store = _played_store(tmp_path)
    proc = crisscross("journal", "export", "--journal", store, "--output", tmp_path)
    _refused_in_one_line(proc, f"crisscross: {tmp_path}: File exists: export never writes over a file (name "
                               f"another with --output)\n")


def test_export_to_a_missing_folder_names_it(tmp_path):
    """``--output /missing/x.jsonl`` said the bare "No such file or directory": the folder is named."""
    store = _played_store(tmp_path)
    out = tmp_path / "missing" / "x.jsonl"
    proc = crisscross("journal", "export", "--journal", store, "--output", out)
    _refused_in_one_line(proc, f"crisscross: {out}: no folder {out.parent}\n")


def test_export_of_rounds_the_journal_does_not_hold_leaves_no_partial_file(tmp_path):
    store = _played_store(tmp_path)
    out = tmp_path / "out.jsonl"
    proc = crisscross("journal", "export", "--journal", store, "--rounds", "5-6", "--output", out)
    _refused_in_one_line(proc, f"crisscross: {store}: no record of rounds 5-6")
    assert not out.exists()


def test_export_to_a_file_is_the_journal_readable_by_its_owner_only(tmp_path):
    store = _played_store(tmp_path)
    out = tmp_path / "out.jsonl"
    proc = crisscross("journal", "export", "--journal", store, "--output", out)
    assert proc.returncode == 0 and proc.stderr == f"exported {len(read_records(store))} records of {store}\n"
    assert out.stat().st_mode & 0o777 == 0o600  # it holds every card dealt
    assert out.read_text() == "".join(exported_lines(store))


def test_import_of_a_copy_that_does_not_verify_is_exit_1_and_creates_nothing(tmp_path):
    """docs/operations.md, "The journal": import refuses a journal that does not verify."""
    lines = exported_lines(_played_store(tmp_path))
    del lines[1]
    copy = tmp_path / "copy.jsonl"
    copy.write_text("".join(lines))
    new = tmp_path / "new.db"
    proc = crisscross("journal", "import", copy, "--journal", new)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"crisscross: {copy}: does not verify: line 2, seq 3: removed")
    assert proc.stderr.endswith("; not imported\n") and not new.exists()


def test_import_of_a_copy_cut_at_a_record_boundary_says_what_verify_says_of_its_end(tmp_path):
    """A copy whose last whole lines were removed imports (its chain is unbroken), but, as ``journal verify``
    says of it (exit 3), nothing shows where it should end: import says so in verify's words, after the count,
    and its status is still 0 (docs/commands.md, "crisscross journal")."""
    lines = exported_lines(_played_store(tmp_path))
    copy = tmp_path / "copy.jsonl"
    copy.write_text("".join(lines[:-2]))
    verified = verify_cli(copy)
    assert verified.returncode == 3 and "NOT CHECKABLE" in verified.stdout
    new = tmp_path / "new.db"
    proc = crisscross("journal", "import", copy, "--journal", new)
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr == (f"imported {len(lines) - 2} records of {copy} into {new}\n"
                           f"crisscross: {verified.stdout}"), proc.stderr


def test_import_of_a_missing_file_names_it(tmp_path):
    missing = tmp_path / "nope.jsonl"
    proc = crisscross("journal", "import", missing, "--journal", tmp_path / "new.db")
    _refused_in_one_line(proc, f"crisscross: {missing}: no such file")


def test_init_key_without_a_path_in_table_yaml_or_file_says_where_to_give_it():
    proc = crisscross("journal", "init-key", "--config", TABLE)
    _refused_in_one_line(proc, f"crisscross: {TABLE}: no journal_key: give its path there")


def test_verify_with_a_key_file_that_is_not_a_key_is_exit_2_naming_it(tmp_path):
    store = _played_store(tmp_path)
    key = tmp_path / "journal.key"
    key.write_text("not hex\n")
    key.chmod(0o600)
    proc = crisscross("journal", "verify", store, "--key", key)
    _refused_in_one_line(proc, f"crisscross: {key}: not a journal key (expected 64 hex digits)")


# --------------------------------------------------------------------------------------------------- operator
def test_operator_add_reads_the_password_from_standard_input_and_list_shows_it(tmp_path):
    """``operator add`` off a terminal reads the password as the first line of standard input (controller/cli/main.py
    docstring); ``list`` shows each user and role, never a password."""
    path = tmp_path / "operators.yaml"
    added = crisscross("operator", "add", "sue", "--role", "supervisor", "--file", path, stdin="a long pass phrase\n")
    assert added.returncode == 0 and added.stderr == f"added sue (supervisor) in {path}\n"
    listed = crisscross("operator", "list", "--file", path)
    assert listed.returncode == 0 and listed.stdout == "sue\tsupervisor\n"
    assert "a long pass phrase" not in path.read_text()
    removed = crisscross("operator", "remove", "sue", "--file", path)
    assert removed.returncode == 0 and crisscross("operator", "list", "--file", path).stdout == ""


def test_operator_add_on_a_terminal_refuses_two_passwords_that_differ(tmp_path, monkeypatch, capsys):
    """On a terminal the password is asked twice with ``getpass`` (controller/cli/main.py docstring); two that differ
    are refused and nothing is written."""
    import io

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    answers = iter(["first password", "second password"])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    monkeypatch.setattr(sys, "stdin", Terminal())
    path = tmp_path / "operators.yaml"
    assert cli.main(["operator", "add", "sue", "--role", "dealer", "--file", str(path)]) == 2
    assert capsys.readouterr().err == "crisscross: the two passwords differ\n"
    assert not path.exists()


def test_operator_add_with_a_file_in_a_folder_that_does_not_exist_is_refused(tmp_path):
    path = tmp_path / "typo" / "operators.yaml"
    proc = crisscross("operator", "add", "sue", "--role", "dealer", "--file", path, stdin="a long pass phrase\n")
    _refused_in_one_line(proc, f"crisscross: --file {path}: no folder {path.parent}")


def test_operator_list_of_a_file_that_does_not_exist_says_so_naming_it(tmp_path):
    """A mistyped ``--file`` (or a table whose operators file was never written) listed ``0 operator(s)`` with
    exit status 0, as if the table had no users. It is refused as the other ``operator`` commands refuse what
    they cannot use: exit status 2, one line naming the file; nothing is written beside it."""
    path = tmp_path / "operaters.yaml"
    proc = crisscross("operator", "list", "--file", path)
    _refused_in_one_line(proc, f"crisscross: {path}: no such file")
    assert list(tmp_path.iterdir()) == []


def test_operator_remove_of_a_file_that_does_not_exist_says_so_and_leaves_nothing(tmp_path):
    """``operator remove NAME`` of a mistyped ``--file`` said "no user NAME" and left ``<file>.lock`` behind: it
    is refused as ``list`` refuses it (exit status 2, one line naming the file), and nothing is written there."""
    path = tmp_path / "operaters.yaml"
    proc = crisscross("operator", "remove", "sue", "--file", path)
    _refused_in_one_line(proc, f"crisscross: {path}: no such file")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("folder", [CONFIG_DIR, Path(cli.__file__).resolve().parents[1] / "game",
                                    Path(cli.__file__).resolve().parents[2] / "drivers"])
def test_operator_add_refuses_a_file_among_the_software_s_own(folder):
    """``operator add --file`` into the shipped configuration (``controller/defaults`` of a wheel) wrote there,
    and the next start was refused (a file the package did not install: ``crisscross identity``), which no
    reinstall mended: refused (exit 2, one line), nothing written, as ``--config`` of those files is."""
    path = folder / "operators-refused-here.yaml"
    try:
        proc = crisscross("operator", "add", "dan", "--role", "dealer", "--file", path, stdin="password123\n")
        _refused_in_one_line(proc, f"crisscross: --file {path}: a folder of the software's own files")
        assert not path.exists() and not path.with_name(path.name + ".lock").exists()
    finally:  # a failure must not leave a file among the software's
        path.unlink(missing_ok=True)
        path.with_name(path.name + ".lock").unlink(missing_ok=True)


def test_operator_add_refuses_a_table_file_whose_operators_file_is_among_the_software_s_own(tmp_path):
    """The same through ``--config``: a table file whose ``control.operators`` names a file among the software's
    (here through a link into the package) is refused, nothing written."""
    import shutil

    site = tmp_path / "site"
    shutil.copytree(CONFIG_DIR, site, ignore=shutil.ignore_patterns("operators.yaml"))
    (tmp_path / "into").symlink_to(Path(cli.__file__).resolve().parents[1] / "game")
    table = site / "table.yaml"
    table.write_text(table.read_text().replace("operators: operators.yaml", f"operators: {tmp_path}/into/ops.yaml"))
    target = Path(cli.__file__).resolve().parents[1] / "game" / "ops.yaml"
    try:
        proc = crisscross("operator", "add", "dan", "--role", "dealer", "--config", table, stdin="password123\n")
        _refused_in_one_line(proc, f"crisscross: {table}: control.operators {tmp_path}/into/ops.yaml: a folder of "
                                   f"the software's own files")
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)
        target.with_name("ops.yaml.lock").unlink(missing_ok=True)


@pytest.mark.parametrize("command, text, says", [
    (("add", "sue", "--role", "dealer"), "just text\n", "expected a mapping at the top level"),  # not loaded
    (("remove", "bob"), "operators:\n", "no user 'bob'"),
    (("add", "sue", "--role", "dealer"), None, "added sue"),
    (("remove", "sue"), None, "removed sue"),
])
def test_operator_add_and_remove_leave_no_lock_file_whatever_their_outcome(tmp_path, command, text, says):
    """The lock of a change (``<file>.lock``, docs/control.md) is gone once the change ends, refused or done: a
    refused ``add`` or ``remove`` left it beside the operators file for good."""
    path = tmp_path / "operators.yaml"
    if text is not None:
        path.write_text(text)
        path.chmod(0o600)
    elif command[0] == "remove":
        assert crisscross("operator", "add", "sue", "--role", "dealer", "--file", path,
                          stdin="a long pass phrase\n").returncode == 0
    proc = crisscross("operator", *command, "--file", path, stdin="a long pass phrase\n")
    assert proc.returncode == (0 if text is None else 2) and says in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["operators.yaml"]


def test_operator_list_of_an_unreadable_file_names_it(tmp_path):
    path = tmp_path / "operators.yaml"
    path.mkdir()  # a folder where the file should be
    proc = crisscross("operator", "list", "--file", path)
    assert proc.returncode == 2 and proc.stderr.startswith("crisscross: ") and str(path) in proc.stderr
    assert proc.stderr.count("\n") == 1


# ---------------------------------------------------------------------------------- settle, paytable, analysis
def test_settle_with_a_table_file_that_is_refused_names_it(tmp_path):
    table = tmp_path / "table.yaml"
    table.write_text("table_id: [\n")
    proc = crisscross("settle", "--table", table, stdin="{}")
    _refused_in_one_line(proc, f"crisscross: {table}")


def test_settle_of_a_file_that_cannot_be_read_names_it(tmp_path):
    missing = tmp_path / "round.json"
    proc = crisscross("settle", missing)
    _refused_in_one_line(proc, f"{missing}: cannot read: No such file or directory")


def test_paytable_takes_no_further_arguments_but_design_does():
    proc = crisscross("paytable", "ny", "--target-house-edge", "0.02")
    _refused_in_one_line(proc, "crisscross paytable: unexpected --target-house-edge 0.02")


def _parsers(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()):
    """``(words, parser)`` of ``parser`` and of every parser below it: each subcommand's (argparse's subparsers)
    and the one a parser hands the rest of its words to (its default ``delegate``: ``paytable design``)."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*words, name))
    delegate = parser.get_default("delegate")
    if delegate is not None:
        yield from _parsers(delegate, (*words, delegate.prog.rsplit(" ", 1)[-1]))


def test_every_command_and_subcommand_takes_v_as_documented():
    """docs/commands.md: "Each subcommand also takes -v (-vv: debug ...)". Every parser of the command line's tree
    has -v/--verbose, counted; ``paytable design`` was refused with "unrecognized arguments: -v"."""
    walked = dict(_parsers(cli._parser()))
    assert {("paytable", "design"), ("journal", "verify"), ("floor", "watch"), ("operator", "add")} <= set(walked)
    for words, parser in walked.items():
        options = parser._option_string_actions
        assert "-v" in options and "--verbose" in options, " ".join(words) or "crisscross"
        assert isinstance(options["-v"], argparse._CountAction), words


def _option_help(parser: argparse.ArgumentParser, option: str) -> str:
    """The help text of ``option`` of ``parser``, its words joined by single spaces."""
    return " ".join(parser._option_string_actions[option].help.split())


def test_the_journal_tools_help_says_what_docs_commands_md_says():
    """docs/commands.md, "crisscross journal": verify's exit statuses are in its help (they were nowhere in it);
    add-key's --key is the key it seals with (its help spoke of reanchor); export's --format says what it is (it
    had no help). Every option of the command line has a help text."""
    walked = dict(_parsers(cli._parser()))
    docs = " ".join((Path(cli.__file__).parents[2] / "docs" / "commands.md").read_text(encoding="utf-8").split())
    documented = docs[docs.index("- `verify` reads only. Exit status "):docs.index("- A record is valid only")]
    statuses = re.findall(r"(?:status |; )(\d): ([^,;(:]+)", documented.replace("`", ""))
    assert [n for n, _ in statuses] == ["0", "1", "2", "3"], statuses
    epilog = walked[("journal", "verify")].format_help().partition("exit status:\n")[2]
    assert epilog, "journal verify --help gives no exit status"
    said = {line.split()[0]: line for line in re.split(r"\n(?=  \d  )", epilog)}
    for status, meaning in statuses:
        assert meaning.strip() in " ".join(said[status].split()), (status, meaning, epilog)
    key = _option_help(walked[("journal", "add-key")], "--key")
    assert "reanchor" not in key and "journal_key of table.yaml" in key, key
    assert "JSON lines" in _option_help(walked[("journal", "export")], "--format")
    for words, parser in walked.items():
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction):
                assert action.help, (words, action.option_strings or action.dest)


def test_paytable_and_its_design_take_v_after_their_words(tmp_path, monkeypatch):
    """-v after ``paytable ny`` or ``paytable design`` (their words are parsed after the command line's: the
    jurisdiction's or the design's options) is taken as anywhere else, and counted with one before them."""
    monkeypatch.chdir(tmp_path)
    levels = []
    monkeypatch.setattr(logging, "basicConfig", lambda **kw: levels.append(kw["level"]))
    proc = crisscross("paytable", "ny", "-v")
    assert proc.returncode == 0 and proc.stdout.startswith("New York"), proc
    out = tmp_path / "designed.yaml"
    proc = crisscross("-v", "paytable", "design", "-v", "--target-house-edge", "0.03", "--vary", "bonus", "--top",
                      "1", "--output", out)
    assert proc.returncode == 0 and out.exists(), proc
    assert levels == [logging.INFO, logging.DEBUG]  # -v: info; -v twice: debug
    proc = crisscross("paytable", "ny", "-v", "--vary", "bonus")
    _refused_in_one_line(proc, "crisscross paytable: unexpected --vary bonus")


def test_paytable_of_an_unknown_jurisdiction_is_exit_2():
    proc = crisscross("paytable", "zz")
    assert proc.returncode == 2 and proc.stdout == "" and "zz" in proc.stderr


def test_a_command_that_needs_the_analysis_extra_says_which_library_is_missing(monkeypatch):
    """docs/operations.md, "Installing on a table PC": the par sheet and ``paytable`` need the analysis extra; without
    it, exit status 2 and one line naming the missing library and the extra."""
    def missing() -> int:
        raise ModuleNotFoundError("No module named 'numba'", name="numba")

    monkeypatch.setattr("controller.cli.paytable.main", lambda args: missing())
    proc = crisscross("paytable", "ny")
    _refused_in_one_line(proc, "crisscross: this command needs the analysis extra (numba is missing)")
    assert "[analysis]" in proc.stderr


def test_a_missing_module_that_is_not_of_the_analysis_extra_is_not_blamed_on_it(monkeypatch):
    def missing() -> int:
        raise ModuleNotFoundError("No module named 'controller.nothing'", name="controller.nothing")

    monkeypatch.setattr("controller.cli.paytable.main", lambda args: missing())
    with pytest.raises(ModuleNotFoundError):
        crisscross("paytable", "ny")


def test_an_export_into_a_closed_pipe_ends_quietly(tmp_path):
    """``crisscross journal export ... | head -1`` printed ``crisscross: None: Broken pipe`` and exited 2; a
    closed pipe ends the export quietly with exit 141 (128 + SIGPIPE), as it does ``recall``."""
    import subprocess

    journal = tmp_path / "journal.db"
    run = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "3", "--quiet",
                          "--seed", "2", "--journal", str(journal)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    export = subprocess.Popen([sys.executable, "-m", "controller", "journal", "export", "--journal", str(journal)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert export.stdout.readline().startswith(b"{")
    export.stdout.close()  # the reader goes away after one line, as head -1 does
    err = export.stderr.read().decode()
    assert export.wait(timeout=120) == 141 and "Broken pipe" not in err, err


def test_a_journal_of_table_yaml_in_a_folder_that_does_not_exist_is_refused_like_journal(tmp_path):
    """A mistyped ``journal:`` in table.yaml created its folder and began a second history of the table with
    only a note line, while ``--journal`` into a missing folder is refused for that reason: both are refused."""
    site = tmp_path / "site"
    assert crisscross("config", "init", site).returncode == 0
    table = site / "table.yaml"
    table.write_text(table.read_text().replace("# journal: /srv/crisscross/journal.db", "journal: typo/journal.db"))
    ports = [arg for name in ("shoe", "sensors", "panel") for arg in ("--port", f"{name}={tmp_path / name}")]
    proc = crisscross("run", "--rounds", "1", "--config", table, *ports)
    _refused_in_one_line(proc, f"crisscross: {table}: journal: {site / 'typo' / 'journal.db'}: no folder "
                               f"{site / 'typo'} ")
    assert not (site / "typo").exists()


def test_a_journal_where_files_cannot_be_made_durable_is_named(capsys):
    """``--journal /proc/self/status``: its folder cannot be fsynced (EINVAL); the line names the folder, not a
    bare ``Invalid argument``."""
    assert cli.main(["run", "--simulate", "--rounds", "1", "--journal", "/proc/self/status"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("crisscross: /proc/self: ") and err.count("\n") == 1, err


def test_a_run_with_a_simulated_device_says_which_journal_of_table_yaml_it_sets_aside(tmp_path, capsys):
    """``run --config`` of a table.yaml with a port ``simulator`` kept the journal of simulated play and left
    table.yaml's ``journal`` and ``journal_key`` unused without a word."""
    import dataclasses

    from controller.game.table import load_table_config

    config = dataclasses.replace(load_table_config(), journal=tmp_path / "table.db", journal_key=tmp_path / "k")
    cli._say_journal_set_aside(config, None, True)
    assert capsys.readouterr().err == (f"crisscross: {config.source}: a device is simulated: this run keeps the "
                                       f"journal of simulated play, not journal {tmp_path / 'table.db'} and "
                                       f"journal_key {tmp_path / 'k'} (name a journal with --journal)\n")
    for journal, simulated in ((tmp_path / "named.db", True), (None, False)):
        cli._say_journal_set_aside(config, journal, simulated)
    cli._say_journal_set_aside(load_table_config(), None, True)  # the shipped file names neither
    assert capsys.readouterr().err == ""
