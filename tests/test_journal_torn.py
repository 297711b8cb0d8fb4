"""A JSON-lines copy whose last line was cut short (no newline at its end: what a power cut or a crash leaves of a
record being written) is a journal truncated at that line, as a store cut short is, never a file that "cannot be
read": ``crisscross journal verify`` exits 1 (docs/commands.md, "crisscross journal": 1, tampered, the first
tampered record named by line with how, ``truncated`` among them), naming the line and the records before it.
The right values are counted from the export itself (one record a line)."""

from __future__ import annotations

import pytest

from tests.cli_helpers import crisscross
from tests.journal_helpers import closed_store, exported_lines, forge, verify_cli


def test_a_copy_whose_last_line_is_torn_is_truncated_there_with_the_records_before_it_whole(tmp_path):
    store, _, _ = closed_store(tmp_path, keyed=False, rounds=3)
    lines = exported_lines(store)
    copy = tmp_path / "j.jsonl"
    copy.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # the last record cut mid-way
    whole = len(lines) - 1
    proc = verify_cli(copy)
    assert proc.returncode == 1, proc
    assert proc.stdout == (f"{copy}: tampered: line {whole + 1}: truncated: the line is cut short (no newline at its "
                           f"end, as a power cut or a crash leaves a record being written): the journal ends at "
                           f"record {whole}; the {whole} records before it are whole, their chain unbroken\n"), proc
    assert proc.stderr == ""


def test_a_torn_copy_and_a_store_cut_short_say_the_same(tmp_path):
    """The store's equivalent: its last record cut (the anchor names it). Both are ``truncated`` and say where
    the journal ends."""
    store, _, _ = closed_store(tmp_path, keyed=False, rounds=3)
    lines = exported_lines(store)
    last = len(lines)
    copy = tmp_path / "j.jsonl"
    copy.write_text("".join(lines[:-1]) + lines[-1][:-1])  # only the newline lost
    forge(store, *((f"DELETE FROM {table} WHERE seq = ?", (last,)) for table in ("records", "seals", "checkpoints")))
    for path in (copy, store):
        proc = verify_cli(path)
        assert proc.returncode == 1 and ": truncated: " in proc.stdout, proc
        assert f"the journal ends at record {last - 1}" in proc.stdout, proc


def test_an_edit_before_the_torn_line_is_named_first(tmp_path):
    store, _, _ = closed_store(tmp_path, keyed=False, rounds=3)
    lines = exported_lines(store)
    lines[2] = lines[2].replace('"button":"reveal"', '"button":"reveaL"')
    assert '"button":"reveaL"' in lines[2]
    copy = tmp_path / "j.jsonl"
    copy.write_text("".join(lines[:-1]) + lines[-1][:30])
    proc = verify_cli(copy)
    assert proc.returncode == 1 and "tampered: line 3, seq 3: edited" in proc.stdout, proc


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A store of 3 simulated rounds (``crisscross run --simulate``: records recall and the meters read) and its
    lines as exported."""
    store = tmp_path_factory.mktemp("torn") / "j.db"
    ran = crisscross("run", "--simulate", "--quiet", "--rounds", "3", "--seed", "5", "--journal", store)
    assert ran.returncode == 0, ran.stderr
    return store, exported_lines(store)


@pytest.mark.parametrize("cut", ["half", "newline"])
def test_recall_and_meters_show_the_records_before_a_torn_line_under_the_warning_verify_gives(played, tmp_path,
                                                                                               cut):
    """The three readers of one torn copy agree (docs/commands.md): ``journal verify`` says truncated (exit 1);
    ``recall`` and ``meters`` show a journal that does not verify under a warning line, exit status 1, and what
    they show is the records before the torn line: recall's rounds as the store's last rounds, the meters as of
    the record before it (``meters --at``). They said 0 with a note (recall) and 2 showing nothing (meters)."""
    store, lines = played
    copy = tmp_path / "torn.jsonl"
    last = lines[-1][: len(lines[-1]) // 2] if cut == "half" else lines[-1][:-1]
    copy.write_text("".join(lines[:-1]) + last)
    whole = len(lines) - 1
    verified = verify_cli(copy)
    assert verified.returncode == 1 and f": tampered: line {whole + 1}: truncated: " in verified.stdout, verified
    problem = verified.stdout.removeprefix(f"{copy}: tampered: ").rstrip("\n")
    for command, consequence, expected in (
            (("recall", "--last", "3"), "what follows may have been altered", crisscross("recall", "--last", "3",
                                                                                         "--journal", store)),
            (("meters",), "meters counted from it may be wrong", crisscross("meters", "--at", whole,
                                                                            "--journal", store))):
        shown = crisscross(*command, "--journal", copy)
        warning = f"WARNING: {copy} does not verify: {problem}; {consequence}"
        assert shown.returncode == 1, (command, shown)
        assert shown.stdout == f"{warning}\n{expected.stdout}", (command, shown.stdout)
        assert f"crisscross {command[0]}: {warning} (run crisscross journal verify)\n" in shown.stderr, shown.stderr
    assert expected.returncode == 0 and f"as of record {whole} of" in shown.stderr


def test_protect_reads_the_records_before_a_torn_line_under_the_warning_verify_gives(played, tmp_path):
    """``crisscross protect`` of a torn copy reads its records before the torn line, as ``recall`` and
    ``meters`` do: each player's evidence as in the copy of those records alone, under the warning that names
    the torn line, exit status 1 (docs/commands.md, "crisscross protect"). It read them as a whole copy, exit 0,
    without a word."""
    _, lines = played
    whole = tmp_path / "whole.jsonl"
    whole.write_text("".join(lines[:-1]))
    torn = tmp_path / "torn.jsonl"
    torn.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    problem = verify_cli(torn).stdout.removeprefix(f"{torn}: tampered: ").rstrip("\n")
    assert problem.startswith(f"line {len(lines)}: truncated: "), problem
    expected = crisscross("protect", "--all", "--journal", whole)
    assert expected.returncode == 0 and expected.stdout, expected
    shown = crisscross("protect", "--all", "--journal", torn)
    warning = f"WARNING: {torn} does not verify: {problem}; evidence read from it may be wrong"
    assert shown.returncode == 1, shown
    assert shown.stdout == f"{warning}\n{expected.stdout}", shown.stdout
    assert f"crisscross protect: {warning} (run crisscross journal verify)\n" in shown.stderr, shown.stderr
    assert shown.stderr.endswith(expected.stderr.replace(str(whole), str(torn))), shown.stderr
