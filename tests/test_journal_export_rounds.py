"""``crisscross journal export --rounds A-B`` on a journal whose round numbers skip: a copy of rounds A-B holds
every one of them or is not written, the rounds it lacks named, those of a gap included (docs/commands.md,
"crisscross journal"). Round numbers do skip: a shoe found ahead of the journal between rounds moves the
numbering past its transactions, since a transaction id (``round * 16 + stack``) is never reused
(docs/architecture.md, "Crash recovery"; ``controller.round.dealing``)."""

from __future__ import annotations

import json

from controller.journal.store import Journal
from controller.round import commands as cmd
from tests.cli_helpers import crisscross
from tests.round_helpers import TableDriver, new_round, of_type

CLOCK = "2026-12-02T00:00:00.000+00:00"
#: The rounds of the journal written here: 1-3, then (the shoe found at round 9's transactions) 10-12.
ROUNDS = (1, 2, 3, 10, 11, 12)


def test_a_shoe_found_ahead_of_the_journal_makes_a_gap_in_the_round_numbers():
    """The journal's last round is 3; at the start the shoe says its last transaction is round 9's second
    stack (9 * 16 + 1): the next round is numbered 10, and rounds 4-9 exist nowhere in the journal."""
    table = TableDriver(new_round(last_round_no=3))
    out = table.start(shoe_txn=9 * 16 + 1)
    assert [o.outcome for o in of_type(out, cmd.ShoeReconciled)] == ["shoe_ahead"]
    opened = of_type(table.open_betting(), cmd.RoundOpened)
    assert [o.round_no for o in opened] == [10]


def _store(path):
    """A store of ``ROUNDS``, three records a round as the service journals them: the press that opens it (of
    the round before, as the machine's round number is when the press comes), its opening, its close."""
    journal = Journal(path, clock=lambda: CLOCK, fsync=False)
    before = None
    for number in ROUNDS:
        journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, before),
                        ("record", "RoundOpened", {"round_no": number}, number)])
        journal.commit([("record", "RoundClosed", {"round_no": number}, number)], state={"round": number})
        before = number
    journal.close()


def _export(path, rounds, out):
    return crisscross("journal", "export", "--journal", str(path), "--rounds", rounds, "--output", str(out))


def test_rounds_that_exist_across_or_after_a_gap_are_exported(tmp_path):
    path = tmp_path / "j.db"
    _store(path)
    for rounds, held in (("10-12", [10, 11, 12]), ("2-3", [2, 3]), ("11-11", [11])):
        out = tmp_path / f"{rounds}.jsonl"
        proc = _export(path, rounds, out)
        assert proc.returncode == 0, (rounds, proc)
        numbers = [json.loads(line)["round"] for line in out.read_text().splitlines()]
        assert sorted(set(numbers)) == held, (rounds, numbers)


def test_rounds_of_a_gap_are_named_and_refused_as_rounds_beyond_the_end_are(tmp_path):
    path = tmp_path / "j.db"
    _store(path)
    for rounds, lacking in (("5-8", "5-8"), ("2-11", "4-9"), ("4-9", "4-9"), ("1-14", "4-9 and 13-14"),
                            ("9-10", "9")):
        out = tmp_path / f"{rounds}.jsonl"
        proc = _export(path, rounds, out)
        assert proc.returncode == 2, (rounds, proc)
        assert proc.stderr.splitlines() == [f"crisscross: {path}: no record of rounds {lacking} (the journal's "
                                            f"rounds: 1-3 and 10-12): nothing exported"], (rounds, proc.stderr)
        assert not out.exists()


def test_a_round_still_in_play_is_exported_as_far_as_it_went_and_said_not_ended(tmp_path):
    """Rounds 1-2 closed, round 3 opened and in play (its journal still open for writing, as the service holds
    it): ``--rounds 3`` exported part of round 3 with no word. It is still exported (the copy holds it as far as
    it went), and standard error says round 3 is not ended (docs/commands.md, "crisscross journal": a round
    ends with its ``RoundClosed`` or ``RoundVoided``)."""
    path = tmp_path / "j.db"
    journal = Journal(path, clock=lambda: CLOCK, fsync=False)
    try:
        for number in (1, 2, 3):
            journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, number - 1 or None),
                            ("record", "RoundOpened", {"round_no": number}, number)])
            if number < 3:
                journal.commit([("record", "RoundClosed", {"round_no": number}, number)], state={"round": number})
        note = (f"crisscross: {path}: round 3 is not ended (still open: no RoundClosed or RoundVoided in the "
                f"journal yet): the copy holds it as far as it went")
        for rounds, held, says in (("3-3", [3], [note]), ("3", [3], [note]), ("2-3", [2, 3], [note]),
                                   ("1-2", [1, 2], [])):
            out = tmp_path / f"{rounds}.jsonl"
            proc = _export(path, rounds, out)
            written = [json.loads(line) for line in out.read_text().splitlines()]
            assert proc.returncode == 0, (rounds, proc)
            assert sorted({r["round"] for r in written}) == held, rounds
            assert proc.stderr.splitlines() == [*says, f"exported {len(written)} records of {path}"], rounds
        whole = crisscross("journal", "export", "--journal", str(path))
        assert whole.returncode == 0 and whole.stderr.splitlines()[0] == note, whole.stderr
    finally:
        journal.close()
