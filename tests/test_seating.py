"""Players who come and go at the simulated table (``run --simulate --sessions MEAN``,
controller/simulated/seating.py), and the sessions the rating reads from the journal they leave.

Oracles: the seating's own bookkeeping checked against the rules a table keeps (one player a seat, a move only to
a free seat, a card rated before its player's first round there), the geometric law's mean for the session
lengths, and the journal read by ``crisscross rating`` afterwards.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys

import pytest

from controller.simulated.seating import Seating


def test_players_come_and_go_one_to_a_seat_and_move_only_to_a_free_seat():
    seating = Seating((1, 2, 3, 4, 5, 6), 6, random.Random(4))
    rated_at: dict[str, int] = {}
    played: dict[str, list[int]] = {}
    for _ in range(600):
        before = {seat: p.player for seat, p in seating.occupant.items()}
        actions, moves = seating.next_round()
        freed = {start for start, _ in moves} | {seat for action, seat, _ in actions if action == "end_session"}
        for start, to in moves:  # to a seat free before the round, or left by its player (gone or moved) just now
            assert to not in before or to in freed
            assert before[start] in (p.player for p in seating.occupant.values())
        for action, seat, player in actions:
            if action == "rate_seat":
                rated_at[player] = seat
                assert seating.occupant[seat].player == player
            else:
                assert action == "end_session" and player == ""
        ids = [p.player for p in seating.occupant.values()]
        assert len(ids) == len(set(ids))  # one player a seat, no player at two seats
        for seat in seating.playing():
            played.setdefault(seating.occupant[seat].player, []).append(seat)
            if seating.occupant[seat].rated:
                assert rated_at[seating.occupant[seat].player] == seat  # the card is where the player plays
    assert seating.count > 50 and any(len(set(seats)) > 1 for seats in played.values())


def test_a_sessions_length_is_about_its_mean():
    seating = Seating((1,), 12, random.Random(9))
    lengths = [seating._newcomer_length() for _ in range(4000)]
    assert statistics.fmean(lengths) == pytest.approx(12, rel=0.06)  # geometric, mean 12; sd/sqrt(n) is 1.4%


def test_the_mean_must_be_a_round_at_least():
    with pytest.raises(ValueError, match="at least 1 round, got 0"):
        Seating((1, 2), 0, random.Random(1))


def test_sessions_need_the_simulated_table():
    run = subprocess.run([sys.executable, "-m", "controller", "run", "--sessions", "8", "--rounds", "1"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "--sessions only applies to the simulated players" in run.stderr


def test_a_simulated_table_with_comings_and_goings_gives_one_session_per_player(tmp_path):
    journal = tmp_path / "journal.db"
    run = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--sessions", "8", "--rounds",
                          "40", "--seed", "2", "--quiet", "--journal", str(journal)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    rated = subprocess.run([sys.executable, "-m", "controller", "rating", "--journal", str(journal), "--format",
                            "json"], capture_output=True, text=True, timeout=300)
    assert rated.returncode == 0, rated.stderr
    sessions = json.loads(rated.stdout)["sessions"]
    players = [s["player"] for s in sessions if s["player"]]
    assert len(players) == len(set(players)) and len(players) >= 6  # a player never comes back here
    assert any(len(s["seats"]) > 1 for s in sessions if s["player"])  # someone changed seats and kept a session
    assert sum(not s["open"] for s in sessions) >= 6  # sessions end as players leave
