"""The hole-card detector's evidence belongs to the player (controller/analysis/protect.py, "Whose evidence"):
across breaks, seat moves and sessions of a rated player; across a bounded break of an unrated seat. The
simulated hole-carders who take breaks and move (controller/simulated/roaming.py) run through the real
service, and the live detector reads the journal's recent history at its start.

The expected evidence is computed apart: the e-values of the same rounds multiplied in one ``Wealth``, as if
the player had never paused or moved (an e-process stays one when its pieces are multiplied in order)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from controller.analysis.protect import Detector, RoundSeen, Wealth, evidence
from controller.analysis.protect_tables import ProtectTables
from controller.game.paytable import load_jurisdiction
from controller.journal.reader import read_records, records_since
from controller.service.protect_journal import scan_journal
from controller.simulated import player_spec, players
from controller.simulated.player_spec import BREAK_ROUNDS, PlayerSpec
from controller.simulated.roaming import Roamer, roamers

pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def tables() -> ProtectTables:
    return ProtectTables.load(load_jurisdiction("ny"))


def middle_carder_rounds(tables: ProtectTables, n: int, seed: int) -> list[tuple[tuple[int, ...], ...]]:
    """``n`` rounds of a middle-card hole-carder: ``(hole, cross, decisions)`` each, cards as indexes."""
    hole, across, down, middle = players.deal(np.random.default_rng(seed), n)
    bets = players.play_decisions(lambda step, x, y: players.hole_carder(
        "middle", tables, step, hole, across, down, middle, middle, x, y), n)
    cross = np.concatenate([across, down, middle[:, None]], 1)
    return [(tuple(hole[i]), tuple(cross[i]), tuple(bets[i])) for i in range(n)]


def continuous_log10(tables: ProtectTables, rounds) -> float:
    """The evidence of ``rounds`` multiplied in one ``Wealth``, in order."""
    e = evidence(tables, np.array([r[0] for r in rounds]), np.array([r[1] for r in rounds]),
                 np.array([r[2] for r in rounds]))
    wealth = Wealth(1)
    for row in e:
        wealth.add(row[None, :])
    return float(wealth.log10_evidence[0])


def seen(number: int, seat: int, row) -> RoundSeen:
    return RoundSeen(number, seat, 500, row[0], row[1], row[2])


def test_a_rated_players_evidence_follows_them_across_breaks_and_seat_moves(tables):
    """Seat 2 rated P-7; a 3-round break (its session ends), back at seat 5 (the dealer moves the card), another
    break, back at seat 2: one evidence, equal to the same rounds played without a pause."""
    rounds = middle_carder_rounds(tables, 12, seed=5)
    detector = Detector(tables, gap=3)
    detector.rate("rate_seat", 2, "P-7")
    plan = [(1, 2), (2, 2), (3, 2), (4, 2), (8, 5), (9, 5), (10, 5), (11, 5), (15, 2), (16, 2), (17, 2), (18, 2)]
    for (number, seat), row in zip(plan, rounds):
        if number in (8, 15):
            detector.rate("rate_seat", seat, "P-7")
        detector.add([seen(number, seat, row)])
    [report] = detector.reports()
    assert (report.player, report.seats, report.rounds, report.sessions) == ("P-7", [2, 5, 2], 12, 3)
    assert (report.first, report.last) == (1, 18)
    assert report.log10_evidence == pytest.approx(continuous_log10(tables, rounds), abs=1e-9)


def test_an_unrated_seat_keeps_its_evidence_only_across_a_bounded_break_and_not_after_the_player_left(tables):
    rounds = middle_carder_rounds(tables, 9, seed=6)
    detector = Detector(tables, gap=3, break_rounds=5)
    for number, row in zip((1, 2, 3), rounds[:3]):
        detector.add([seen(number, 4, row)])
    for number, row in zip((8, 9, 10), rounds[3:6]):  # a break of 4 rounds: within 5
        detector.add([seen(number, 4, row)])
    detector.rate("end_session", 4)  # the dealer saw the player go: the next one at seat 4 starts apart
    for number, row in zip((11, 12, 13), rounds[6:]):
        detector.add([seen(number, 4, row)])
    first, second = detector.reports()
    assert (first.first, first.last, first.rounds, first.sessions, first.player) == (1, 10, 6, 2, "")
    assert first.log10_evidence == pytest.approx(continuous_log10(tables, rounds[:6]), abs=1e-9)
    assert (second.first, second.last, second.rounds) == (11, 13, 3)
    assert second.log10_evidence == pytest.approx(continuous_log10(tables, rounds[6:]), abs=1e-9)


def test_an_unrated_player_who_moves_cannot_be_followed(tables):
    rounds = middle_carder_rounds(tables, 4, seed=7)
    detector = Detector(tables)
    detector.add([seen(1, 1, rounds[0])])
    detector.add([seen(2, 1, rounds[1])])
    detector.add([seen(3, 6, rounds[2])])
    detector.add([seen(4, 6, rounds[3])])
    assert sorted((r.seat, r.rounds) for r in detector.reports()) == [(1, 2), (6, 2)]


def test_rounds_played_before_the_card_was_given_are_the_players_and_multiply_into_their_evidence(tables):
    """P-3 played rounds 1-3 rated at seat 2, left (session ended), came back unrated at seat 4 for rounds
    10-12 and handed the card over then: rounds 1-3 and 10-12 are one evidence."""
    rounds = middle_carder_rounds(tables, 6, seed=8)
    detector = Detector(tables)
    detector.rate("rate_seat", 2, "P-3")
    for number, row in zip((1, 2, 3), rounds[:3]):
        detector.add([seen(number, 2, row)])
    detector.rate("end_session", 2)
    for number, row in zip((10, 11, 12), rounds[3:]):
        detector.add([seen(number, 4, row)])
    detector.rate("rate_seat", 4, "P-3")
    detector.add([], 13)
    [report] = detector.reports()
    assert (report.player, report.seats, report.rounds, report.first, report.last) == ("P-3", [2, 4], 6, 1, 12)
    assert report.log10_evidence == pytest.approx(continuous_log10(tables, rounds), abs=1e-9)


def test_another_players_card_at_a_seat_does_not_take_the_unrated_evidence_there(tables):
    """Seat 3 was rated P-1; P-1 left without the dealer ending the session and an unrated player's rounds went
    to P-1 (the seat still carries the card). Once P-2's card is given there, new rounds are P-2's alone."""
    rounds = middle_carder_rounds(tables, 4, seed=9)
    detector = Detector(tables)
    detector.rate("rate_seat", 3, "P-1")
    detector.add([seen(1, 3, rounds[0])])
    detector.add([seen(2, 3, rounds[1])])
    detector.rate("rate_seat", 3, "P-2")
    detector.add([seen(3, 3, rounds[2])])
    detector.add([seen(4, 3, rounds[3])])
    by_player = {r.player: r for r in detector.reports()}
    assert {p: r.rounds for p, r in by_player.items()} == {"P-1": 2, "P-2": 2}
    assert by_player["P-2"].log10_evidence == pytest.approx(continuous_log10(tables, rounds[2:]), abs=1e-9)


def test_a_rated_players_evidence_is_kept_for_the_memory_then_let_go(tables):
    rounds = middle_carder_rounds(tables, 3, seed=10)
    day = 24 * 3600.0
    detector = Detector(tables, memory_s=2 * day)
    detector.rate("rate_seat", 1, "P-9")
    detector.add([seen(1, 1, rounds[0])], time=0.0)
    detector.rate("end_session", 1)
    detector.rate("rate_seat", 5, "P-9")  # the next day, at another seat
    detector.add([seen(500, 5, rounds[1])], time=1.5 * day)
    detector.rate("end_session", 5)
    detector.rate("rate_seat", 2, "P-9")  # three days after that: forgotten, starts again
    detector.add([seen(9000, 2, rounds[2])], time=4.6 * day)
    first, second = detector.reports()
    assert (first.rounds, first.seats, first.sessions) == (2, [1, 5], 2)
    assert (second.rounds, second.seats) == (1, [2])


def test_a_bad_rating_action_is_refused_and_changes_nothing(tables):
    detector = Detector(tables)
    detector.rate("rate_seat", 2, "P-1")
    for action, player, message in (("rate_seat", "", "names no player"), ("sit_down", "P-2", "unknown rating")):
        with pytest.raises(ValueError, match=message):
            detector.rate(action, 2, player)
    assert detector.seat_player == {2: "P-1"}


def test_the_break_an_unrated_seat_keeps_is_at_least_the_gap(tables):
    with pytest.raises(ValueError, match="shorter than the gap"):
        Detector(tables, gap=3, break_rounds=2)


@pytest.mark.parametrize("text, spec", [
    ("2:middle:breaks=10", PlayerSpec(2, "middle", 1.0, 10, False, True)),
    ("2:across:0.5:breaks=20:moves", PlayerSpec(2, "across", 0.5, 20, True, True)),
    ("4:down:breaks=5:moves:unrated", PlayerSpec(4, "down", 1.0, 5, True, False)),
    ("3:across:0.5:pairs", PlayerSpec(3, "across", 0.5, style="pairs")),
    ("3:middle:rule:breaks=7", PlayerSpec(3, "middle", breaks=7, style="rule")),
])
def test_the_hole_carder_option_takes_breaks_moves_and_unrated(text, spec):
    assert player_spec.parse_spec(text, True) == spec


@pytest.mark.parametrize("text, message", [("2:middle:moves", "moves needs breaks=N"),
                                           ("2:middle:breaks=0", "at least 1"),
                                           ("2:middle:breaks=x", "whole number"),
                                           ("2:never_fold:breaks=3", "not a probability"),
                                           ("2:middle:breaks=5:breaks=6", "at most once"),
                                           ("2:middle:unrated:unrated", "at most once"),
                                           ("2:middle:breaks=5:moves:extra", "nor one of best, pairs, rule")])
def test_a_bad_break_option_is_named(text, message):
    with pytest.raises(ValueError, match=message):
        player_spec.parse_spec(text, text.split(":")[1] in player_spec.HOLE_CARDS)


def test_a_roaming_hole_carder_plays_n_rounds_sits_out_three_and_comes_back_at_the_other_seat():
    roamer = Roamer(PlayerSpec(2, "middle", 1.0, 4, True), free=6)
    timeline = [roamer.next_round() for _ in range(2 * (4 + BREAK_ROUNDS) + 1)]
    plays = [p for _, p, _ in timeline]
    assert plays == [True] * 4 + [False] * BREAK_ROUNDS + [True] * 4 + [False] * BREAK_ROUNDS + [True]
    assert [m for _, _, m in timeline if m] == [(2, 6), (6, 2)]
    actions = [a for actions, _, _ in timeline for a in actions]
    assert actions == [("rate_seat", 2, "SIM-HC-2"), ("rate_seat", 6, "SIM-HC-2"), ("rate_seat", 2, "SIM-HC-2")]


def test_a_mover_needs_a_seat_no_other_player_takes():
    specs = [PlayerSpec(seat, "optimal") for seat in (1, 3)] + [PlayerSpec(2, "middle", 1.0, 5, True)]
    with pytest.raises(ValueError, match="no seat left"):
        roamers(specs, (1, 2, 3))
    [roamer] = roamers(specs, (1, 2, 3, 4, 6))
    assert roamer.free == 6


def run_simulated(journal, rounds: int, seed: int, *carders: str) -> None:
    command = [sys.executable, "-m", "controller", "run", "--simulate", "--rounds", str(rounds), "--seed", str(seed),
               "--quiet", "--protect", "--journal", str(journal)]
    for carder in carders:
        command += ["--hole-carder", carder]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr


def test_a_hole_carder_who_breaks_and_moves_is_one_player_live_offline_and_after_a_restart(tmp_path, tables):
    """Through the service: a middle-card hole-carder takes a 3-round break every 5 rounds and comes back at
    the other seat; the evidence follows it. A first run too short to flag it, then a second run of the same
    journal: the live detector read the first run's rounds at its start, so its alert counts them, and the
    offline scan agrees with it."""
    journal = tmp_path / "journal.db"
    run_simulated(journal, 6, 3, "2:middle:1:breaks=5:moves")
    assert not [r for r in read_records(journal) if r["type"] == "Alert"]
    [carder] = [r for r in scan_journal(journal, tables) if r.player]
    first_run = carder.rounds
    assert not carder.flagged and first_run >= 4
    run_simulated(journal, 30, 4, "2:middle:1:breaks=5:moves")
    reports = scan_journal(journal, tables)
    [carder] = [r for r in reports if r.player == "SIM-HC-2"]
    assert carder.flagged and carder.card == "middle" and set(carder.seats) == {2, 6} and carder.sessions >= 3
    assert not any(r.flagged for r in reports if r is not carder)
    [alert] = [r["data"] for r in read_records(journal) if r["type"] == "Alert"]
    assert alert["round_no"] == carder.flagged_at and alert["first_round"] == carder.first == 1
    assert alert["rounds"] > alert["round_no"] - 6  # more rounds than the second run had played by then
    # the history the live detector reads at its start: the last rounds asked for, the types asked for
    history = list(records_since(journal, "2000-01-01T00:00:00", types={"RoundOpened", "SeatRating"}, last_rounds=3))
    top = max(r["round"] for r in read_records(journal) if r["type"] == "RoundOpened")
    assert {r["round"] for r in history if r["type"] == "RoundOpened"} == {top - 2, top - 1, top}
    assert {r["type"] for r in history} <= {"RoundOpened", "SeatRating"}


@pytest.mark.parametrize("argv, message", [
    (["--simulate", "--protect", "--protect-break", "2"], "at least the 3 rounds"),
    (["--simulate", "--protect-memory-hours", "5"], "only applies to the hole-card detector"),
    (["--simulate", "--hole-carder", "2:middle:breaks=5", "--sessions", "10"], "not with --sessions"),
    (["--simulate", "--hole-carder", "2:middle", "--sessions", "20"], "not with --sessions"),
])
def test_the_detectors_run_options_are_checked_before_anything_starts(tmp_path, capsys, argv, message):
    from controller.cli import main as cli

    journal = tmp_path / "journal.db"
    assert cli.main(["run", "--rounds", "1", "--journal", str(journal), *argv]) == 2
    assert message in capsys.readouterr().err and not journal.exists()


def test_the_live_detector_keeps_evidence_as_it_is_told(tables):
    """``run --protect-break/--protect-memory-hours``: the live detector's Detector gets them."""
    from controller.analysis.protect_names import EvidenceKeeping
    from controller.game.paytable import load_jurisdiction as load
    from controller.service.protection import LiveProtection

    live = LiveProtection(load("ny"), lambda item: None, keeping=EvidenceKeeping(7, 3600.0))
    live.start()
    assert live.ready.wait(600)
    live.stop()
    assert (live.detector.break_rounds, live.detector.memory_s) == (7, 3600.0)


def test_a_flagged_player_back_for_a_new_visit_is_flagged_again_and_not_at_every_break(tables):
    rounds = middle_carder_rounds(tables, 60, seed=12)
    detector = Detector(tables, break_rounds=20)
    detector.rate("rate_seat", 3, "P-5")
    flags = []
    number = 0
    for i, row in enumerate(rounds[:40]):
        number += 1 if i % 8 else 4  # a 3-round break every 8 rounds: the same visit
        flags += [number for _ in detector.add([seen(number, 3, row)])]
    assert len(flags) == 1  # once, at the crossing
    number += 30  # away 30 rounds: a new visit
    again = [number + i for i, row in enumerate(rounds[40:42]) for _ in detector.add([seen(number + i, 3, row)])]
    assert again == [number]


@pytest.mark.parametrize("argv, message", [
    (["--shared-cards", "--per-class", "1"], "at least 2 sets"),
    (["--measure", "--shared-cards"], "one at a time"),
    (["--measure", "--journal", "x.db"], "not by --measure"),
])
def test_protects_measurements_are_refused_before_they_start(capsys, argv, message):
    from controller.cli import main as cli

    assert cli.main(["protect", *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_long_gap_alone_takes_a_break_as_long(tmp_path, capsys):
    from controller.cli import main as cli

    journal = tmp_path / "journal.db"
    assert cli.main(["run", "--simulate", "--rounds", "1", "--quiet", "--journal", str(journal)]) == 0
    assert cli.main(["protect", "--journal", str(journal), "--gap", "200"]) == 0
    assert "players' evidence" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["journal.db", "journal.jsonl"])
@pytest.mark.parametrize("command", ["recall", "meters", "rating", "protect"])
def test_an_empty_file_is_not_a_journal_for_any_reader(tmp_path, capsys, command, name):
    """``protect`` read an empty file as a journal holding no one's evidence and exited 0, while ``recall``,
    ``meters`` and ``rating`` refuse it: a journal holds its start record at least (``existing_journal``). An
    empty file is what a copy that failed or a wrong path leaves; a report of "0 flagged" from it would clear
    a table that was never read. Every reader now refuses it alike (exit 2, one line)."""
    from controller.cli import main as cli

    journal = tmp_path / name
    journal.write_text("")
    assert cli.main([command, "--journal", str(journal)]) == 2
    assert capsys.readouterr().err == f"crisscross {command}: {journal}: the file is empty: it is not a journal\n"


def test_a_short_measure_says_within_what_it_played_and_no_ratio_of_never():
    from controller.simulated.protect_bound import Bound
    from controller.simulated.protect_measure import Outcome, Setting, cheat_report

    never = Outcome("across:rule:1", 10, 50, np.full(10, np.inf), {})
    some = Outcome("across:rule:1 (breaks every 10)", 10, 50, np.array([45.0] * 5 + [np.inf] * 5), {})
    table = cheat_report({("across", "rule"): Bound("across", "rule", 500, 0.2, 0.01)},
                         {("across", "rule", Setting()): never, ("across", "rule", Setting(10)): some})
    assert "flagged within 50 |" in table and "nan" not in table and "0.00" not in table
