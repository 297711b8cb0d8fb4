"""End to end: the service in its own process, the devices simulated behind real pseudo-terminals.

Runs the rig (``hil.rig``) for 20 seeded rounds and proves from the journal alone (``hil.checks``): each round
dealt exactly 5 + 2 x wagering seats distinct cards in the regulated order (NY 9 NYCRR 5324.39(d)(2)); every
wager placed was settled exactly once; money wagered equals money collected plus returned; every settlement
agrees with ``crisscross settle`` run on that round. Then shows the checks are not vacuous: a journal altered
in each of those ways (and re-chained so the hash chain alone would not catch it) is reported.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from controller.journal.reader import read_records
from controller.journal.record import canonical_line
from hil.checks import check_journal
from hil.rig import run_rig
from tests.cli_helpers import crisscross
from tests.journal_helpers import forge, rechain

ROUNDS = 20


@pytest.fixture(scope="module")
def rig_run(tmp_path_factory):
    journal = tmp_path_factory.mktemp("rig") / "journal.db"
    result = run_rig(ROUNDS, seed=2026, journal=journal)
    return result, journal


def test_twenty_rounds_through_ptys_pass_every_journal_check(rig_run):
    result, journal = rig_run
    assert result.status == 0, result.stderr
    assert result.rounds_closed == ROUNDS
    assert result.problems == []
    # On real ports a new journal is worth a word: it may be a mistyped path rather than a new table.
    assert result.stderr.count(f"crisscross: note: no journal at {journal}: a new one was started") == 1


def test_the_run_dealt_folds_and_bonuses(rig_run):
    """The seeded run exercises what the checks are about: folds at each decision, bonuses, several seats."""
    _, journal = rig_run
    records = read_records(journal)
    decisions = {(r["data"]["decision"], r["data"]["action"]) for r in records if r["type"] == "DecisionMade"}
    assert {("across", "fold"), ("down", "fold"), ("middle", "fold"), ("middle", "bet")} <= decisions
    locked = [r for r in records if r["type"] == "WagersLocked"]
    assert len(locked) == ROUNDS
    assert any("five_card_bonus" in s["wagers"] for r in locked for s in r["data"]["seats"])
    assert max(len(r["data"]["seats"]) for r in locked) >= 4


def _rewrite(records: list[dict], path: Path) -> None:
    """Write records as a JSON-lines copy with a recomputed, valid hash chain (a forger who knows the format)."""
    with path.open("w", encoding="utf-8") as handle:
        for record in rechain(records):
            handle.write(canonical_line(record) + "\n")


def _first(records, type_):
    return next(r for r in records if r["type"] == type_)


def test_an_edited_settlement_is_reported(rig_run, tmp_path):
    _, journal = rig_run
    records = read_records(journal)
    edited = _first(records, "SeatSettled")
    settled = edited["data"]["settlement"]
    settled["wagers"]["ante_across"]["net"] += 100
    settled["net"] += 100
    # the journal up to the end of the edited round: fewer rounds for ``crisscross settle`` to check
    last = max(i for i, r in enumerate(records) if r["round"] == edited["round"])
    _rewrite(records[:last + 1], tmp_path / "j.jsonl")
    _, problems = check_journal(tmp_path / "j.jsonl")
    assert any("crisscross settle says" in p for p in problems)


def test_an_unsettled_wager_is_reported(rig_run, tmp_path):
    _, journal = rig_run
    records = read_records(journal)
    del _first(records, "SeatSettled")["data"]["settlement"]["wagers"]["ante_down"]
    _rewrite(records, tmp_path / "j.jsonl")
    _, problems = check_journal(tmp_path / "j.jsonl", against_settle=False)
    assert any("placed" in p and "settled" in p for p in problems)


def test_a_card_dealt_twice_is_reported(rig_run, tmp_path):
    _, journal = rig_run
    records = read_records(journal)
    stacks = [r for r in records if r["type"] == "StackDealt" and r["round"] == 1]
    stacks[1]["data"]["cards"][0] = stacks[0]["data"]["cards"][0]
    _rewrite(records, tmp_path / "j.jsonl")
    _, problems = check_journal(tmp_path / "j.jsonl", against_settle=False)
    assert any("distinct" in p for p in problems)


def test_money_that_vanishes_is_reported(rig_run, tmp_path):
    _, journal = rig_run
    records = read_records(journal)
    _first(records, "RoundClosed")["data"]["totals"]["collected"] -= 500
    _rewrite(records, tmp_path / "j.jsonl")
    _, problems = check_journal(tmp_path / "j.jsonl", against_settle=False)
    assert any("totals" in p for p in problems)


def test_an_edit_without_rechaining_breaks_the_chain(rig_run, tmp_path):
    _, journal = rig_run
    copy = tmp_path / "j.db"
    shutil.copy(journal, copy)
    record = read_records(copy)[10]
    forge(copy, ("UPDATE records SET time = ? WHERE seq = ?", ("2020-01-01T00:00:00.000+00:00", record["seq"])))
    _, problems = check_journal(copy, against_settle=False)
    assert any(p.startswith("journal chain: line 11, seq 11: edited") for p in problems)


def test_a_stack_the_shoe_dealt_but_the_journal_lacks_is_reported(rig_run):
    _, journal = rig_run
    records = read_records(journal)
    dealt = [(r["data"]["stack"], tuple(r["data"]["cards"])) for r in records if r["type"] == "StackDealt"]
    extra = dealt + [(9999, ("2c", "3c"))]
    _, problems = check_journal(journal, shoe_dispensed=extra, against_settle=False)
    assert any("shoe dealt" in p for p in problems)


def test_the_hole_card_detector_reads_the_run_and_flags_no_honest_seat(rig_run):
    """``crisscross protect`` on the run's journal (controller/cli/protect.py): the simulated players
    play the optimal strategy with random mistakes, none sees a card early, so no player is flagged (exit 0);
    every seat that played has its (unrated) evidence read."""
    _, journal = rig_run
    seats = {s["seat"] for r in read_records(journal) if r["type"] == "WagersLocked" for s in r["data"]["seats"]}
    proc = crisscross("protect", "--journal", journal)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # only flagged sessions are listed
    sessions = int(re.search(r"(\d+) players' evidence in .*; 0 flagged", proc.stderr).group(1))
    assert sessions >= len(seats) > 0
    listed = crisscross("protect", "--journal", journal, "--all")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == sessions
