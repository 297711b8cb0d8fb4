"""The crash test's own edges (hil/crash.py): the report of a last run that did not stop (what the panel showed
and which of the simulated table's threads still ran, so that a stall can be told from a hang of the service),
its flags refused out of range, a journal in a missing folder, and a table whose journal is sealed with a key."""

import threading
from types import SimpleNamespace

import pytest

from controller.cli import main as cli
from controller.game.table import load_table_config
from hil.crash import _stuck, run_crash_test
from hil.crash import main as crash_main


def test_a_stalled_table_is_reported_with_the_panel_and_the_threads():
    release = threading.Event()
    waiting = threading.Thread(target=release.wait, name="simulated-table")
    ended = threading.Thread(target=lambda: None, name="simulated-supervisor")
    waiting.start()
    ended.start()
    ended.join()
    try:
        panel = SimpleNamespace(lamps={"paid", "clear_fault"}, display="Seat 3 pay 500: AA 500")
        seen = _stuck(SimpleNamespace(panel=panel, threads=(waiting, ended), rounds_played=7))
    finally:
        release.set()
        waiting.join()
    assert seen == ("panel lamps ['clear_fault', 'paid'], display 'Seat 3 pay 500: AA 500'; simulated-table running, "
                    "simulated-supervisor ended; 7 rounds played by the table")


@pytest.mark.parametrize("flags, said", [
    (["--early", "2"], "argument --early: expected a probability from 0 to 1, got 2"),
    (["--torn-rate", "-0.5"], "argument --torn-rate: expected a probability from 0 to 1, got -0.5"),
    (["--void-rate", "1.5"], "argument --void-rate: expected a probability from 0 to 1, got 1.5"),
    (["--timeout", "0"], "argument --timeout: expected a number above 0, got 0"),
    (["--max-life", "-1"], "argument --max-life: expected a number above 0, got -1"),
    (["--max-life", "nan"], "argument --max-life: expected a number above 0, got nan"),
])
def test_flags_out_of_range_are_refused_in_one_line(flags, said, capsys):
    with pytest.raises(SystemExit) as stopped:
        crash_main(["--rounds", "1", *flags])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"python -m hil.crash: error: {said}"


def test_a_journal_in_a_folder_that_does_not_exist_is_refused_before_anything_starts(tmp_path, capsys):
    journal = tmp_path / "missing" / "journal.db"
    assert crash_main(["--rounds", "1", "--journal", str(journal)]) == 2
    said = f"python -m hil.crash: {journal}: no folder {journal.parent} to write the journal in\n"
    assert capsys.readouterr().err == said
    assert not journal.parent.exists()


@pytest.mark.slow  # a crash test of its own: a few seconds of simulated play and SIGKILLs
def test_the_crash_test_runs_on_a_table_whose_journal_is_sealed_with_a_key(tmp_path):
    """table.yaml's ``journal_key`` seals the journal the service writes; where each kill landed is read from
    that journal, so the crash test opens it with the same key (it refused the journal before)."""
    site = tmp_path / "site"
    assert cli.main(["config", "init", str(site)]) == 0
    table = site / "table.yaml"
    table.write_text(table.read_text().replace("# journal_key: journal.key", "journal_key: journal.key", 1))
    assert cli.main(["journal", "init-key", "--config", str(table)]) == 0
    result = run_crash_test(2, 7, tmp_path / "journal.db", table, log=lambda *_: None)
    assert result.problems == []
    assert result.kills >= 1 and result.rounds_closed + result.rounds_voided >= 2
    assert load_table_config(table).journal_key == site / "journal.key"
