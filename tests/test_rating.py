"""The exact theoretical win of a seat's round (``controller.analysis.rating``), the seat sessions it is summed
over (``controller.journal.sessions``) and ``crisscross rating``.

The oracles: the real settlement (``controller.game.settlement.settle_seat``, NY 9 NYCRR 5324.39(e)(9)) summed
over every unseen card by plain enumeration; the former par-sheet engine's saved values per class of hand
(``tests/data/parsheet_ny_reference.json``); the optimal strategy's decisions as the hole-card tables hold them
(built by the par sheet's NumPy path, ``ParSheetEngine.solve``), which must cost exactly nothing; and the
journal's own records for what a session wagered and won.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from controller.analysis.parsheet import SCALE1, hole_classes, hole_name
from controller.analysis.protect_tables import ProtectTables
from controller.analysis.rating import DecisionValues, RatingError
from controller.game.cards import DECK
from controller.game.paytable import load_jurisdiction
from controller.game.sessions import session_ended
from controller.game.settlement import Community, settle_seat
from controller.journal.recall import RoundRecord
from controller.journal.sessions import PAUSE_S, SessionTracker, seconds_played
from controller.simulated.players import honest

NY = load_jurisdiction("ny")
REFERENCE = json.loads((Path(__file__).parent / "data" / "parsheet_ny_reference.json").read_text())
INDEX = {c: i for i, c in enumerate(DECK)}


@pytest.fixture(scope="module")
def values():
    return DecisionValues(NY)


@pytest.fixture(scope="module")
def tables():
    return ProtectTables.load(NY)


def _unit_nets(hole, across, down, middle):
    """The real settlement of one unit of each wager: (antes, across bet, down bet, middle bet) nets."""
    unit = {"ante_across": 1, "ante_down": 1, "across": 1, "down": 1, "middle": 1}
    s = settle_seat(1, hole, Community(across, down, middle), unit, NY).wagers
    return s["ante_across"].net + s["ante_down"].net, s["across"].net, s["down"].net, s["middle"].net


def _plain_middle(hole, across, down, x, y):
    """The middle options' values per ante by plain enumeration of the 46 unseen middle cards."""
    rest = [c for c in DECK if c not in (*hole, *across, *down)]
    nets = [_unit_nets(hole, across, down, m) for m in rest]
    out = {0: Fraction(-(2 + x + y))}
    for z in (1, 2, 3):
        out[z] = Fraction(sum(a + x * b + y * d + z * m for a, b, d, m in nets), len(rest))
    return out


@pytest.mark.parametrize("hole, across, down, x, y", [
    (("Qd", "Jd"), ("Td", "2s"), ("9d", "9c"), 1, 3),
    (("7c", "2h"), ("7d", "Ks"), ("As", "3h"), 3, 1),
    (("8s", "8d"), ("Ac", "3h"), ("5d", "4d"), 2, 2),
])
def test_the_middle_options_are_the_settlement_summed_over_every_middle_card(values, hole, across, down, x, y):
    got = values.middle_values([INDEX[c] for c in hole], [INDEX[c] for c in across], [INDEX[c] for c in down], x, y)
    assert got == _plain_middle(hole, across, down, x, y)


@pytest.mark.parametrize("name", ["AA", "72o", "QJs", "T9s", "65o", "22"])
def test_the_value_of_two_cards_is_the_par_sheets(values, name):
    index = next(i for i, (hole, _) in enumerate(hole_classes()) if hole_name(hole) == name)
    assert max(values.across_values(index).values()) == Fraction(int(REFERENCE[name]["value"]), SCALE1)


def test_folding_at_the_across_decision_is_worth_two_antes_lost(values):
    across = values.across_values(0)
    assert across[0] == -2
    assert set(across) == {0, 1, 2, 3}


def _deal(rng, n):
    """``n`` random deals: hole (n, 2), across and down outside pairs (n, 2) each, middle (n,)."""
    cards = np.array([rng.permutation(52)[:7] for _ in range(n)])
    return cards[:, 0:2], cards[:, 2:4], cards[:, 4:6], cards[:, 6]


def _play(tables, name, hole, across, down, rng):
    """The decisions (multiples, 0 = fold, -1 = not reached) of strategy ``name`` for every deal."""
    n = len(hole)
    x = honest(name, tables, "across", hole, across, down, np.zeros(n, int), np.zeros(n, int), rng)
    y = honest(name, tables, "down", hole, across, down, x, np.zeros(n, int), rng)
    y = np.where(x == 0, -1, y)
    z = honest(name, tables, "middle", hole, across, down, x, np.maximum(y, 0), rng)
    z = np.where(y <= 0, -1, z)
    return x, y, z


def _decisions(ante, multiples):
    out = []
    for step, m in zip(("across", "down", "middle"), multiples):
        if m < 0:
            break
        out.append((step, "fold", 0) if m == 0 else (step, "bet", int(m) * ante))
    return out


def _cards(*indexes):
    return tuple(DECK[int(i)] for i in indexes)


def test_the_optimal_strategy_costs_nothing_at_any_decision(values, tables):
    rng = np.random.default_rng(11)
    hole, across, down, middle = _deal(rng, 60)
    x, y, z = _play(tables, "optimal", hole, across, down, rng)
    for i in range(len(hole)):
        theo = values.theo(_cards(*hole[i]), _cards(*across[i], *down[i], middle[i]),
                           {"ante_across": 500, "ante_down": 500}, _decisions(500, (x[i], y[i], z[i])))
        assert all(cost == 0 for _, cost in theo.costs), (i, theo)
        assert theo.value == theo.optimal
        assert theo.house == -theo.optimal * 500


def test_a_worse_option_costs_what_it_gives_up_and_the_costs_add_up(values):
    # pocket aces folded at once: the optimal value of AA and the two antes it forfeits
    fold = values.theo(("Ah", "As"), ("2c", "7d", "9h", "Js", "4c"), {"ante_across": 100, "ante_down": 100},
                       [("across", "fold", 0)])
    aa = max(values.across_values(0).values())
    assert fold.costs == (("across", aa + 2),) and fold.value == -2 and fold.house == 200
    # 1x where 3x is best, then every later decision: value = optimal - every cost, each cost >= 0
    played = values.theo(("Ah", "As"), ("2c", "7d", "9h", "Js", "4c"), {"ante_across": 100, "ante_down": 100},
                         [("across", "bet", 100), ("down", "bet", 100), ("middle", "fold", 0)])
    assert [step for step, _ in played.costs] == ["across", "down", "middle"]
    assert all(cost >= 0 for _, cost in played.costs) and played.costs[0][1] > 0
    assert played.value == played.optimal - sum(cost for _, cost in played.costs)


def test_the_bonus_is_valued_at_its_pay_tables_edge(values):
    from controller.analysis.parsheet_totals import bonus_return

    theo = values.theo(("Ah", "As"), ("2c", "7d", "9h", "Js", "4c"), {"five_card_bonus": 300}, [])
    assert theo.house == -300 * bonus_return(NY)[0]


@pytest.mark.parametrize("wagers, decisions, message", [
    ({"ante_across": 100, "ante_down": 200}, [], "ante across 100 and ante down 200 differ"),
    ({"ante_across": 100, "ante_down": 100}, [("across", "bet", 150)], "across bet 150 is not a fold or an allowed"),
    ({"ante_across": 100, "ante_down": 100}, [("down", "bet", 100)], "decision 'down' where 'across' was due"),
    ({"ante_across": 100, "ante_down": 100}, [("across", "fold", 0), ("down", "bet", 100)], "a decision after a fold"),
])
def test_a_round_that_cannot_be_valued_is_named(values, wagers, decisions, message):
    with pytest.raises(RatingError, match="round 7 seat 2: " + message):
        values.theo(("Ah", "As"), ("2c", "7d", "9h", "Js", "4c"), wagers, decisions, "round 7 seat 2")


def test_seven_cards_that_are_not_distinct_are_refused(values):
    with pytest.raises(RatingError, match="not seven distinct cards"):
        values.theo(("Ah", "As"), ("Ah", "7d", "9h", "Js", "4c"), {"ante_across": 1, "ante_down": 1}, [], "r")


# ---------------------------------------------------------------------------------------------------------
# Sessions


def _round(number, seats, voided=False, test=False, seconds=5):
    rnd = RoundRecord(number, wagers={s: {"ante_across": 100, "ante_down": 100} for s in seats}, test=test,
                      times=["2026-12-04T10:00:00.000+00:00", f"2026-12-04T10:00:{seconds:02d}.000+00:00"])
    rnd.totals = {"wagered": 0}
    rnd.voided = {"why": "misdeal"} if voided else None
    rnd.settlements = {s: {"net": -200} for s in seats}
    return rnd


def test_a_session_ends_after_the_gap_of_rounds_without_wagers():
    tracker = SessionTracker(gap=3)
    for number, seats in enumerate([{1, 2}, {1}, {1}, {1}, {1}, {1, 2}], start=1):
        ended = tracker.add(_round(number, seats))
        # seat 2 last wagered in round 1: rounds 2, 3 and 4 without, so round 5 finds its session ended
        assert [(s.seat, s.first, s.last) for s in ended] == ([(2, 1, 1)] if number == 5 else [])
    by_seat = {(s.seat, s.first): s for s in tracker.sessions()}
    assert [r.round_no for r in by_seat[(1, 1)].rounds] == [1, 2, 3, 4, 5, 6] and by_seat[(1, 1)].open
    assert by_seat[(2, 6)].open and not by_seat[(2, 1)].open
    assert session_ended(1, 5, 3) and not session_ended(1, 4, 3)


def test_voided_and_test_mode_rounds_are_no_play():
    tracker = SessionTracker()
    tracker.add(_round(1, {1}))
    tracker.add(_round(2, {1}, voided=True))
    tracker.add(_round(3, {1}, test=True))
    tracker.add(_round(4, {1}))
    (session,) = tracker.sessions()
    assert [r.round_no for r in session.rounds] == [1, 4]
    assert sum(r.seconds for r in session.rounds) == 10.0


def test_a_seat_whose_wagers_were_not_settled_did_not_play_the_round():
    tracker = SessionTracker()
    held = _round(1, {1, 2})
    del held.settlements[2]  # held for a supervisor (NY 9 NYCRR 5324.39(d)(1)): out of the settlement
    tracker.add(held)
    assert [(s.seat, len(s.rounds)) for s in tracker.sessions()] == [(1, 1)]


def test_a_long_gap_inside_a_round_is_a_pause_not_play():
    times = ["2026-12-04T10:00:00.000+00:00", "2026-12-04T10:00:30.000+00:00",
             f"2026-12-04T10:{(30 + PAUSE_S + 1) // 60:02.0f}:{(30 + PAUSE_S + 1) % 60:06.3f}+00:00",
             "2026-12-04T10:03:00.000+00:00"]
    stamps = [30.0, 30 + PAUSE_S + 1, 180.0]
    assert seconds_played(times) == pytest.approx(30.0 + (stamps[2] - stamps[1]))


@pytest.mark.parametrize("values, scale", [([3, -7, 12, 0, 5], 1), ([10**30, -(10**30) + 7, 44], 10**9), ([5], 1)])
def test_the_standard_error_of_a_total_is_the_sample_deviation_times_the_root_of_the_count(values, scale):
    import statistics as st

    from controller.service.rating import standard_error

    expected = None if len(values) < 2 else float(
        st.stdev([Fraction(v, scale) for v in values]) * Fraction(len(values)) ** Fraction(1, 2))
    got = standard_error(values, scale)
    assert got == expected if expected is None else got == pytest.approx(expected, rel=1e-12)


def test_the_gap_must_be_a_round_at_least():
    with pytest.raises(ValueError, match="gap must be at least 1 round, got 0"):
        SessionTracker(gap=0)


# ---------------------------------------------------------------------------------------------------------
# crisscross rating on a simulated table's journal


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rating")
    journal = folder / "journal.db"
    run = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "6", "--seed", "8",
                          "--quiet", "--journal", str(journal)], capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    export = subprocess.run([sys.executable, "-m", "controller", "journal", "export", "--journal", str(journal)],
                            capture_output=True, text=True, timeout=120, check=True)
    return journal, [json.loads(line) for line in export.stdout.splitlines()]


def test_crisscross_rating_sums_each_seats_wagers_and_results_as_the_journal_records_them(played):
    journal, records = played
    run = subprocess.run([sys.executable, "-m", "controller", "rating", "--journal", str(journal), "--format", "json"],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["jurisdiction"] == "ny" and report["house_edge"] == pytest.approx(0.0432853, abs=1e-6)
    # the journal's own count: each seat's settled nets and placed wagers, over the closed rounds
    net: dict[int, int] = {}
    handle: dict[int, dict[str, int]] = {}
    for r in records:
        if r["type"] == "SeatSettled":
            seat = r["data"]["seat"]
            net[seat] = net.get(seat, 0) + r["data"]["settlement"]["net"]
            for wager, result in r["data"]["settlement"]["wagers"].items():
                handle.setdefault(seat, {}).setdefault(wager, 0)
                handle[seat][wager] += result["amount"]
    sessions = report["sessions"]
    assert {s["seat"] for s in sessions} == set(net)
    for seat in net:  # a seat's sessions (a seat that sat three rounds out has two) add up to its records
        mine = [s for s in sessions if s["seat"] == seat]
        assert sum(s["actual_win"] for s in mine) == -net[seat]
        assert {w: sum(s["handle"].get(w, 0) for s in mine) for w in handle[seat]} == handle[seat]
    for s in sessions:
        assert Fraction(s["theoretical_win_exact"]) == pytest.approx(s["theoretical_win"], abs=1e-6)
        assert s["rounds"] >= 1 and s["player"] is None


def test_crisscross_rating_text_names_every_seat(played):
    journal, _ = played
    run = subprocess.run([sys.executable, "-m", "controller", "rating", "--journal", str(journal)],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    assert "house edge under optimal play: 4.3285% of the two antes" in run.stdout
    assert "theoretical win" in run.stdout and run.stdout.count("seat ") >= 1


def test_crisscross_rating_of_a_missing_journal_says_so(tmp_path):
    run = subprocess.run([sys.executable, "-m", "controller", "rating", "--journal", str(tmp_path / "none.db")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "crisscross rating:" in run.stderr and "none.db" in run.stderr


# ---------------------------------------------------------------------------------------------------------
# Slow: the down options by plain enumeration, and the estimator against the par sheet's exact values


@pytest.mark.slow
@pytest.mark.parametrize("hole, across, x", [(("Qd", "Jd"), ("Td", "2s"), 1), (("7c", "2h"), ("7d", "Ks"), 3)])
def test_the_down_options_are_the_settlement_summed_over_every_down_pair_and_middle_card(values, hole, across, x):
    cid, pair = values.locate([INDEX[c] for c in hole], [INDEX[c] for c in across])
    got = values.down_values(cid, pair, x)
    rest = [c for c in DECK if c not in (*hole, *across)]
    sums = {y: Fraction(0) for y in (1, 2, 3)}
    downs = list(itertools.combinations(rest, 2))
    for down in downs:
        nets = [_unit_nets(hole, across, down, m) for m in rest if m not in down]
        for y in (1, 2, 3):
            base = [a + x * b + y * d for a, b, d, _ in nets]
            best = max(sum(b + z * m[3] for b, m in zip(base, nets)) for z in (1, 2, 3))
            sums[y] += max(Fraction(-(2 + x + y)), Fraction(best, len(nets)))
    assert got == {0: -(2 + x), **{y: total / len(downs) for y, total in sums.items()}}


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["optimal", "always_1x"])
def test_the_mean_theoretical_win_is_the_strategys_exact_edge_with_less_spread_than_the_results(values, tables,
                                                                                               strategy):
    from controller.analysis.parsheet_totals import compute_par_sheet

    exact = Fraction(compute_par_sheet(NY).strategies.get(strategy, 0)) if strategy != "optimal" else None
    if strategy == "optimal":
        exact = Fraction(sum(weight * int(REFERENCE[hole_name(h)]["value"]) for h, weight in hole_classes()),
                         1326 * SCALE1)
    rng = np.random.default_rng(5)
    hole, across, down, middle = _deal(rng, 3000)
    x, y, z = _play(tables, strategy, hole, across, down, rng)
    theo, actual = [], []
    for i in range(len(hole)):
        cards, cross = _cards(*hole[i]), _cards(*across[i], *down[i], middle[i])
        decisions = _decisions(1, (x[i], y[i], z[i]))
        theo.append(float(values.theo(cards, cross, {"ante_across": 1, "ante_down": 1}, decisions).value))
        wagers = {"ante_across": 1, "ante_down": 1, **{d: a for d, action, a in decisions if action == "bet"}}
        actual.append(settle_seat(1, cards, Community.from_stack(cross), wagers, NY).net)
    theo_mean, se = np.mean(theo), np.std(theo, ddof=1) / np.sqrt(len(theo))
    assert abs(theo_mean - float(exact)) < 3 * se, (theo_mean, float(exact), se)
    assert np.std(theo, ddof=1) < np.std(actual, ddof=1)


def test_a_journal_that_does_not_verify_is_rated_under_a_warning(played, tmp_path):
    _, records = played
    copy = tmp_path / "altered.jsonl"
    altered = json.loads(json.dumps(records))
    next(r for r in altered if r["type"] == "SeatSettled")["data"]["settlement"]["net"] += 100  # one seat's net
    copy.write_text("".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in altered))
    run = subprocess.run([sys.executable, "-m", "controller", "rating", "--journal", str(copy)],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 1, run.stderr
    assert f"WARNING: {copy} does not verify" in run.stdout and "figures read from it may be wrong" in run.stdout


def test_crisscross_rating_of_one_player_shows_only_their_sessions(tmp_path):
    import io

    from controller.cli.parts import SERVICE_PARTS
    from controller.game.table import load_table_config
    from controller.journal.reader import read_records
    from controller.journal.sessions import sessions_of
    from controller.round.inputs import SeatRating
    from controller.service.assembly import Service

    journal = tmp_path / "journal.db"
    service = Service(load_table_config(), simulate=True, rounds=3, seed=8, journal_path=journal, out=io.StringIO(),
                      parts=SERVICE_PARTS)
    try:
        service.events.put(SeatRating("rate_seat", 1, "P-1", "dan", "dealer"))  # a dealer's card, before any round
        assert service.run() == 0
    finally:
        service.close()
    (session,) = [s for s in sessions_of(read_records(journal)) if s.player == "P-1"]
    run = subprocess.run([sys.executable, "-m", "controller", "rating", "--journal", str(journal), "--player", "P-1",
                          "--format", "json"], capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    shown = json.loads(run.stdout)["sessions"]
    assert [(s["seat"], s["player"], s["rounds"]) for s in shown] == [(1, "P-1", len(session.rounds))]
    none = subprocess.run([sys.executable, "-m", "controller", "rating", "--journal", str(journal), "--player", "Q-2"],
                          capture_output=True, text=True, timeout=240)
    assert none.returncode == 0 and "no session of player Q-2" in none.stdout


def test_a_player_id_that_no_session_can_have_is_refused():
    run = subprocess.run([sys.executable, "-m", "controller", "rating", "--player", "bad id!"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "'bad id!' is not a player's id (1 to 32 letters, digits or dashes)" in run.stderr
