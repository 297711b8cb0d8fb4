"""A JSON-lines copy whose first line is a record and one of whose later lines is not (text that is not JSON, a
record cut short in the middle of the file, bytes that are not UTF-8, a blank line added at its end) has been
altered: ``crisscross journal verify`` reports it tampered at that line, exit 1, as it reports an edited record
(docs/commands.md, "crisscross journal": 1, tampered, the first tampered record named by line with how). It
said exit 2, "cannot be read", which proves nothing. A file that is not a journal at all (its first line not a
record, or empty) stays exit 2. The line numbers are counted from the export itself (one record a line)."""

from __future__ import annotations

import pytest

from tests.cli_helpers import crisscross
from tests.journal_helpers import closed_store, exported_lines, verify_cli


def _copy(tmp_path, change) -> tuple:
    store, _, _ = closed_store(tmp_path, keyed=False, rounds=3)
    lines = [line.encode() for line in exported_lines(store)]
    copy = tmp_path / "j.jsonl"
    copy.write_bytes(b"".join(change(lines)))
    return copy, len(lines)


@pytest.mark.parametrize("change, at, problem", [
    (lambda lines: [*lines[:4], b"garbage\n", *lines[4:]], lambda n: 5, "not JSON"),
    (lambda lines: [*lines[:4], lines[4][:30] + b"\n", *lines[5:]], lambda n: 5, "not JSON"),
    (lambda lines: [*lines[:6], b'{"seq": 7, "x": "\xff"}\n', *[b'{"seq": 8}\n'] * 3000], lambda n: 7, "not UTF-8"),
    (lambda lines: [*lines[:6], b'{"seq":7}\n', *lines[6:]], lambda n: 7, "not a journal record"),
    (lambda lines: [*lines, b"\n"], lambda n: n + 1, "an empty line"),
], ids=["garbage", "cut-short", "not-utf8", "not-a-record", "blank-at-end"])
def test_a_line_that_is_not_a_record_after_the_first_is_tampering_at_that_line(tmp_path, change, at, problem):
    copy, count = _copy(tmp_path, change)
    line, content = at(count), copy.read_bytes()
    proc = verify_cli(copy)
    assert copy.read_bytes() == content
    assert proc.returncode == 1, proc
    assert proc.stdout.startswith(f"{copy}: tampered: line {line}: edited: the line is not a journal record"), proc
    assert problem in proc.stdout and proc.stdout.count("\n") == 1 and proc.stderr == "", proc


def test_an_edit_before_the_line_that_is_not_a_record_is_named_first(tmp_path):
    def change(lines):
        lines[2] = lines[2].replace(b'"button":"reveal"', b'"button":"reveaL"')
        assert b'"button":"reveaL"' in lines[2]
        return [*lines[:6], b"garbage\n", *lines[6:]]

    copy, _ = _copy(tmp_path, change)
    proc = verify_cli(copy)
    assert proc.returncode == 1 and proc.stdout.startswith(f"{copy}: tampered: line 3, seq 3: edited: "), proc


def test_a_file_whose_first_line_is_not_a_record_is_not_a_journal(tmp_path):
    copy, _ = _copy(tmp_path, lambda lines: [b"{garbage\n", *lines])
    proc = verify_cli(copy)
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr == f"crisscross: {copy}: line 1: not JSON: Expecting property name enclosed in double quotes\n", proc


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> list[str]:
    """The lines of a store of 3 simulated rounds (``crisscross run --simulate``: records recall, the meters and
    the hole-card detector read) as exported."""
    store = tmp_path_factory.mktemp("garbled") / "j.db"
    ran = crisscross("run", "--simulate", "--quiet", "--rounds", "3", "--seed", "5", "--journal", store)
    assert ran.returncode == 0, ran.stderr
    return exported_lines(store)


@pytest.mark.parametrize("command, consequence", [
    (("recall", "--last", "3"), "what follows may have been altered"),
    (("meters",), "meters counted from it may be wrong"),
    (("protect", "--all"), "evidence read from it may be wrong"),
    (("rating",), "figures read from it may be wrong"),
], ids=["recall", "meters", "protect", "rating"])
@pytest.mark.parametrize("cut", [False, True], ids=["garbage", "cut-short"])
def test_the_readers_show_the_records_before_such_a_line_under_the_warning_verify_gives(
        played, tmp_path, command, consequence, cut):
    """``recall``, ``meters``, ``protect`` and ``rating`` of such a copy show what they read of its records before
    that line (as of a copy of those records alone), under the warning that names the line and the alteration as
    ``journal verify`` does, exit status 1, as they show a copy whose last line is torn (docs/commands.md). They
    refused it, exit 2, showing nothing (``protect``: nor the warning)."""
    at = len(played) // 2  # the line that is not a record, in the second round
    before = "".join(played[:at - 1])
    whole = tmp_path / "whole.jsonl"
    whole.write_text(before)
    copy = tmp_path / "j.jsonl"
    copy.write_text(before + "".join([played[at - 1][:30] + "\n", *played[at:]] if cut
                                     else ["garbage\n", *played[at - 1:]]))
    found = verify_cli(copy).stdout.removeprefix(f"{copy}: tampered: ").rstrip("\n")
    assert found.startswith(f"line {at}: edited: the line is not a journal record (not JSON: "), found
    assert "the copy was altered there" in found
    expected = crisscross(*command, "--journal", whole)
    assert expected.returncode == 0 and expected.stdout, expected
    proc = crisscross(*command, "--journal", copy)
    warning = f"WARNING: {copy} does not verify: {found}; {consequence}"
    assert proc.returncode == 1, proc
    assert proc.stdout == f"{warning}\n{expected.stdout}", proc.stdout
    assert f"crisscross {command[0]}: {warning} (run crisscross journal verify)\n" in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", [("recall",), ("meters",), ("protect",), ("rating",)])
def test_the_readers_refuse_a_file_whose_first_line_is_not_a_record(played, tmp_path, command):
    """Nothing to show: the file is not a journal (exit 2, one line naming the line)."""
    copy = tmp_path / "j.jsonl"
    copy.write_text("".join(["{garbage\n", *played]))
    proc = crisscross(*command, "--journal", copy)
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr == (f"crisscross {command[0]}: {copy}: line 1: not JSON: Expecting property name enclosed in "
                           f"double quotes\n"), proc
