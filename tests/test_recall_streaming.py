"""``crisscross recall --last N`` holds one round at a time, whatever N and the journal's length
(``controller.journal.reader.LastRounds``), and shows the same text as the rounds asked for one by one.

The right values come from the journal the test writes itself (its rounds and records counted here) and from
docs/commands.md, "crisscross recall" (each round in round order: its header, then its steps).
"""

from __future__ import annotations

import pytest

import controller.journal.reader as reader
from controller.cli.entry import main
from controller.journal.store import Journal
from tests.journal_helpers import exported_lines

CLOCK = "2026-12-01T00:00:00.000+00:00"
ROUNDS, PER_ROUND = 40, 3


def _journal(tmp_path, kind: str):
    """A store (``kind`` "store") or its JSON-lines copy ("copy") of ``ROUNDS`` rounds of ``PER_ROUND`` records."""
    store = tmp_path / "j.db"
    journal = Journal(store, clock=lambda: CLOCK, fsync=False)
    journal.append("event", "ServiceStarted", {}, None)
    for n in range(1, ROUNDS + 1):
        for _ in range(PER_ROUND):
            journal.append("event", "ButtonPressed", {"button": "confirm"}, n)
    journal.close()
    if kind == "store":
        return store
    copy = tmp_path / "j.jsonl"
    copy.write_text("".join(exported_lines(store)))
    return copy


class _Counted(dict):
    """A decoded record that counts itself among the live ones while it exists."""

    alive = 0
    most = 0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        type(self).alive += 1
        type(self).most = max(type(self).most, type(self).alive)

    def __del__(self):
        type(self).alive -= 1


@pytest.mark.parametrize("kind", ["store", "copy"])
def test_recall_of_every_round_never_holds_more_than_two_rounds_decoded(tmp_path, monkeypatch, capsys, kind):
    """``--last 1000000000`` over a journal of 40 rounds: every record is decoded (each round is shown), but
    at no moment are more than two rounds' records alive (the round shown and the next being read), where holding
    every round asked for keeps all 120 alive at once."""
    path = _journal(tmp_path, kind)
    decode_row, decode_line = reader.row_record, reader.parse_line
    monkeypatch.setattr(reader, "row_record", lambda *a, **k: _Counted(decode_row(*a, **k)))
    monkeypatch.setattr(reader, "parse_line", lambda *a, **k: _Counted(decode_line(*a, **k)))
    monkeypatch.setattr(_Counted, "alive", 0)
    monkeypatch.setattr(_Counted, "most", 0)
    assert main(["recall", "--last", "1000000000", "--journal", str(path)]) == 0
    shown = capsys.readouterr().out
    assert [line for line in shown.splitlines() if line.startswith("Round ")] == \
        [f"Round {n} (OPEN)" for n in range(1, ROUNDS + 1)]
    assert 0 < _Counted.most <= 2 * PER_ROUND + 1  # a record of the journal outside the rounds read on the way


@pytest.mark.parametrize("kind", ["store", "copy"])
def test_recall_of_many_rounds_is_the_rounds_asked_for_one_by_one(tmp_path, capsys, kind):
    """The text of ``--last N`` is, byte for byte, the texts of the last N rounds one after the other: each round
    as ``--last`` shows it when it is among them, in round order; more rounds asked for than the journal holds
    shows every round."""
    path = _journal(tmp_path, kind)

    def shown(count: int) -> str:
        assert main(["recall", "--last", str(count), "--journal", str(path)]) == 0
        return capsys.readouterr().out

    everything = shown(1_000_000_000)
    assert shown(ROUNDS) == everything
    rounds = everything.split("Round ")[1:]
    assert len(rounds) == ROUNDS
    for count in (1, 2, 7):
        assert shown(count) == "".join("Round " + text for text in rounds[-count:])
    assert rounds[0].startswith("1 (OPEN)\n") and rounds[-1].startswith(f"{ROUNDS} (OPEN)\n")


@pytest.mark.parametrize("kind", ["store", "copy"])
def test_one_round_of_the_last_is_the_only_one_decoded_from_a_store(tmp_path, monkeypatch, kind):
    """``last_rounds(only=N)`` (the control interface's recall of one round): that round's records, and from a
    store no other round's decoded; a round not among the last ``count`` is none."""
    path = _journal(tmp_path, kind)
    decoded = []
    decode_row = reader.row_record
    monkeypatch.setattr(reader, "row_record", lambda *a, **k: decoded.append(decode_row(*a, **k)) or decoded[-1])
    found = reader.last_rounds(path, 10, only=ROUNDS - 3)
    assert [(n, [r["round"] for r in records]) for n, records in found] == [(ROUNDS - 3, [ROUNDS - 3] * PER_ROUND)]
    assert [r["round"] for r in decoded] == ([ROUNDS - 3] * PER_ROUND if kind == "store" else [])
    assert reader.last_rounds(path, 10, only=ROUNDS - 10) == []
