"""Game protection: the hole-card tables, the detector's exact false-alarm property, no flag on seeded honest
play of every strategy, a flag on seeded hole-carders, and the whole path through the simulated table, the
journal and ``crisscross protect``.

Oracles: the published value of seeing the middle card (a 49.37% player edge, Eliot Jacobson; domain.md) and
the par sheet's report (docs/par-sheet-ny.md) for the outside cards; ``OptimalStrategy`` (separate code) for
the honest players' decisions; the e-value's defining property (its mean over the hidden card is 1) checked
by enumerating every card that could have been hidden.
"""

from __future__ import annotations

import json
import math
import queue
import subprocess
import sys

import numpy as np
import pytest

from controller.analysis.protect import ALPHA, Detector, RoundSeen, Wealth, evidence
from controller.analysis.protect_tables import ProtectTables
from controller.analysis.strategy import OptimalStrategy
from controller.cli import main as cli
from controller.control.server import public_record
from controller.game.cards import DECK
from controller.game.paytable import load_jurisdiction
from controller.game.table import load_table_config
from controller.journal.reader import read_records
from controller.journal.store import Journal
from controller.round.alerts import alert_text
from controller.round.machine import Round
from controller.service.loop import STOP
from controller.service.protect_journal import scan_journal
from controller.simulated import player_spec
from controller.simulated import players
from controller.analysis.protect_names import HOLE_CARDS, STYLES
from controller.simulated.protect_bound import bound
from controller.simulated.protect_measure import play, play_through_detector

pytestmark = pytest.mark.timeout(1200)  # tables of pay tables not shipped are built at first use (minutes)


@pytest.fixture(scope="module")
def tables() -> ProtectTables:
    return ProtectTables.load(load_jurisdiction("ny"))


@pytest.mark.parametrize("index", [0, *(pytest.param(i, marks=pytest.mark.slow) for i in (84, 168))])
def test_the_shipped_tables_are_what_the_builder_computes(index):
    """The New York tables shipped in the package (``PACKAGED_DIR``) are the builder's, class by class: classes
    rebuilt here from the par sheet's engine, the first in the quick tier, two more in the slow one (the whole
    set takes minutes)."""
    from controller.analysis.protect_tables import CLASSES, FIELDS, PACKAGED_DIR, ClassBuilder, table_file_name

    ny = load_jurisdiction("ny")
    built = ClassBuilder(ny).build(CLASSES[index])
    with np.load(PACKAGED_DIR / table_file_name(ny)) as shipped:
        for field in FIELDS:
            assert np.array_equal(np.asarray(built[field]), shipped[field][index]), field


def deal(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.argsort(rng.random((n, 52)), axis=1)[:, :9]


def test_the_exposed_card_values_are_the_published_ones(tables):
    values = tables.exposed_values
    assert values["middle"] / 2 == pytest.approx(0.4937, abs=5e-5)  # Jacobson's 49.37% of the two antes
    assert values["across"] == pytest.approx(0.125136, abs=1e-6)  # docs/par-sheet-ny.md
    assert values["down"] == pytest.approx(0.138967, abs=1e-6)
    assert values["optimal"] == pytest.approx(-579091 / 6689228, abs=1e-12)


def test_the_honest_optimal_player_decides_as_the_optimal_strategy(tables):
    strategy = OptimalStrategy(load_jurisdiction("ny"))
    rng = np.random.default_rng(5)
    cards = deal(rng, 300)
    names = [[DECK[c] for c in row] for row in cards]
    zero = np.zeros(300, dtype=np.int64)
    x = players.optimal(tables, "across", cards[:, :2], cards[:, 2:4], cards[:, 4:6], zero, zero)
    assert list(x) == [strategy.across(n[:2]) for n in names]
    bet_x = np.maximum(x, 1)
    y = players.optimal(tables, "down", cards[:, :2], cards[:, 2:4], cards[:, 4:6], bet_x, zero)
    assert list(y) == [strategy.down(n[:2], n[2:4], int(b)) for n, b in zip(names, bet_x)]
    bet_y = np.maximum(y, 1)
    z = players.optimal(tables, "middle", cards[:, :2], cards[:, 2:4], cards[:, 4:6], bet_x, bet_y)
    assert list(z) == [strategy.middle(n[:2], n[2:4], n[4:6], int(a), int(b)) for n, a, b in zip(names, bet_x, bet_y)]


def test_the_middle_e_value_averages_exactly_one_over_the_cards_that_could_have_been_hidden(tables):
    """Whatever the decisions, the e-value averaged over every card the player could not see (put in place of
    the one dealt) is 1: the martingale property that bounds false alarms, for any honest strategy."""
    rng = np.random.default_rng(1)
    for row in deal(rng, 12):
        hole, cross = row[:2], row[2:7]
        decisions = [int(rng.choice([1, 2, 3])), int(rng.choice([0, 1, 3])), int(rng.choice([0, 3]))]
        if decisions[1] == 0:
            decisions[2] = -1
        candidates = [c for c in range(52) if c not in hole and c not in cross[:4]]
        crosses = np.array([[*cross[:4], c] for c in candidates])
        n = len(crosses)
        e = evidence(tables, np.tile(hole, (n, 1)), crosses, np.tile(decisions, (n, 1)))[:, 0::3]  # every style
        assert e.mean(0) == pytest.approx([1.0, 1.0, 1.0], abs=1e-12)
        assert (e >= 0).all()


@pytest.mark.parametrize("line", ["across", "down"])
def test_an_outside_card_e_value_averages_one_over_every_pair_of_hidden_cards(tables, line):
    rng = np.random.default_rng(9)
    row = deal(rng, 1)[0]
    hole, across = row[:2], row[2:4]
    shown = set(hole) | (set(across) if line == "down" else set())
    rest = [c for c in range(52) if c not in shown]
    pairs = [(a, b) for i, a in enumerate(rest) for b in rest[i + 1:]]
    def cross(a, b):
        others = [c for c in rest if c not in (a, b)]
        return [a, b, *others[:3]] if line == "across" else [*across, a, b, others[0]]
    crosses = np.array([cross(a, b) for a, b in pairs])
    n = len(crosses)
    column = 1 if line == "across" else 2
    for decisions in ([0, -1, -1], [1, 0, -1], [3, 1, 3], [2, 3, -1], [1, 3, 0]):
        e = evidence(tables, np.tile(hole, (n, 1)), crosses, np.tile(decisions, (n, 1)))[:, column::3]
        assert e.mean(0) == pytest.approx([1.0, 1.0, 1.0], abs=1e-12)  # every style


@pytest.mark.parametrize("strategy", ["optimal", "never_fold", "always_1x", "pair_3x", "across_fold_rule", "card",
                                      "erring:0.1"])
def test_no_honest_session_is_flagged(tables, strategy):
    outcome = play(tables, strategy, 400, 100, np.random.default_rng(20))
    assert outcome.flagged == 0


@pytest.mark.parametrize("card, style", [(card, style) for card in HOLE_CARDS for style in STYLES])
def test_hole_carders_are_flagged_within_twice_the_bound_and_the_card_named(tables, card, style):
    """The detector's median rounds to flag a hole-carder of each card and style, through ``Detector``, is
    within 2x of the bound computed apart (the best test that knows the style: controller/simulated/protect_bound.py)."""
    best_test = bound(tables, card, style, 2000, np.random.default_rng(4))
    outcome = play_through_detector(tables, card, style, 1.0, 100, 400, np.random.default_rng(21))
    assert outcome.flagged >= 95
    assert outcome.percentile(50) <= 2 * best_test.rounds
    assert outcome.pointed[card] >= 0.9 * outcome.flagged


def test_a_hole_carder_who_sees_the_middle_card_in_half_the_rounds_is_flagged(tables):
    outcome = play_through_detector(tables, "middle", "best", 0.5, 60, 300, np.random.default_rng(21))
    assert outcome.flagged >= 57 and outcome.percentile(50) <= 120


def test_the_flagging_level_is_one_over_alpha():
    wealth = Wealth(2)
    one_round = np.ones((2, 9))
    one_round[0, 0] = 1 / ALPHA
    wealth.add(one_round)
    # the average of 27 martingales (3 styles x 3 cards x 3 shares), 3 of them at 1 / ALPHA x pi: below the
    # level; a second such round crosses it
    assert not wealth.flagged.any()
    wealth.add(one_round)
    assert list(wealth.flagged) == [True, False]
    assert wealth.pointed()[0][0] == 0


def test_an_unrated_seat_keeps_its_evidence_across_a_bounded_break(tables):
    """controller/analysis/protect.py, "Whose evidence": a break longer than the gap ends the seat's session but
    not its evidence, up to ``break_rounds``; a longer break starts the evidence again."""
    rng = np.random.default_rng(3)
    short, long_break = Detector(tables, gap=2, break_rounds=5), Detector(tables, gap=2, break_rounds=3)
    for number in (1, 2, 3, 7, 8):
        row = deal(rng, 1)[0]
        for detector in (short, long_break):
            detector.add([RoundSeen(number, 4, 500, tuple(row[:2]), tuple(row[2:7]), (1, 1, 1))])
    [whole] = short.reports()
    assert (whole.first, whole.last, whole.rounds, whole.sessions) == (1, 8, 5, 2)
    reports = long_break.reports()
    assert [(r.first, r.last, r.rounds, r.sessions) for r in reports] == [(1, 3, 3, 1), (7, 8, 2, 1)]
    assert all(not r.flagged and r.loss >= 0 for r in reports)


@pytest.mark.parametrize("text, message", [("2:middle:1.5", "not from 0 to 1"), ("x:middle", "expected SEAT"),
                                           ("2:eyes", "not one of")])
def test_a_bad_hole_carder_option_is_named(text, message):
    with pytest.raises(ValueError, match=message):
        player_spec.parse_spec(text, True)


def test_simulated_players_need_simulate(capsys):
    assert cli.main(["run", "--hole-carder", "2:middle", "--rounds", "1"]) == 2
    assert "--simulate" in capsys.readouterr().err


@pytest.mark.slow
def test_a_hole_carder_at_the_simulated_table_is_flagged_live_and_offline(tmp_path, tables):
    """Through the pseudo-terminal devices, the round machine and the journal: the middle-card hole-carder is
    flagged, live (one journaled ``Alert``, kept from the public records) and offline; the honest seats of every
    strategy are not."""
    journal = tmp_path / "journal.db"
    run = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "45", "--seed", "3",
                          "--quiet", "--protect", "--journal", str(journal), "--hole-carder", "2:middle",
                          "--player-strategy", "1:never_fold", "--player-strategy", "3:always_1x",
                          "--player-strategy", "5:pair_3x", "--player-strategy", "6:erring:0.2"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    reports = scan_journal(journal, tables)
    flagged = {r.seat: r for r in reports if r.flagged}
    assert set(flagged) == {2}
    assert flagged[2].card == "middle" and flagged[2].loss > 0
    assert cli.main(["protect", "--journal", str(journal)]) == 1
    assert math.isfinite(flagged[2].log10_evidence)
    alerts = [r for r in read_records(journal) if r["type"] == "Alert"]
    assert [(a["data"]["seat"], a["data"]["card"]) for a in alerts] == [(2, "middle")]
    assert alerts[0]["data"]["round_no"] == flagged[2].flagged_at and alerts[0]["data"]["loss"] > 0
    assert public_record(alerts[0]) is None
    assert not any(card in json.dumps(alerts[0]["data"]) for card in DECK)
    # paged, the simulated supervisor turned the key, read the alert on the panel and acknowledged it there
    records = read_records(journal)
    [ack] = [r for r in records if r["type"] == "AlertAcknowledged"]
    assert ack["data"]["alert"] == alerts[0]["data"]
    assert (ack["data"]["by"], ack["data"]["role"], ack["data"]["source"]) == ("SIM-SUPERVISOR", "supervisor", "panel")
    key_on, shown = False, []
    for record in records:  # the alert's line on the panel only while the key is turned, and never public
        if record["type"] == "SupervisorKey":
            key_on = record["data"]["on"]
        elif record["type"] in ("Display", "PrivatePanel") and record["data"]["text"].startswith("ALERT"):
            assert record["type"] == "PrivatePanel" and key_on and public_record(record) is None
            shown.append(record["data"])
    assert shown and shown[0]["text"] == alert_text(alerts[0]["data"], 1) and "acknowledge_alert" in shown[0]["buttons"]


def test_an_alert_on_a_rated_hole_carder_names_the_player_seated_there(tmp_path):
    """A rated hole-carder (with breaks the simulated dealer attaches its id to the seat at each return,
    ``SeatRating``; docs/commands.md: ``SIM-HC-SEAT``): the live alert names the player whose session is open at the flagged seat when the round
    that flagged it closed: whom surveillance looks for, whatever seat the player sits at next."""
    journal = tmp_path / "journal.db"
    run = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "45", "--seed", "3",
                          "--quiet", "--protect", "--journal", str(journal), "--hole-carder", "2:middle:breaks=15"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    seated: dict[int, str] = {}  # seat -> the player rated there, by the dealer's rating actions in journal order
    alerts = []
    for record in read_records(journal):
        data = record["data"]
        if record["type"] == "SeatRating":
            if data["action"] == "rate_seat":
                seated = {seat: player for seat, player in seated.items() if player != data["player"]}
                seated[data["seat"]] = data["player"]
            else:
                seated.pop(data["seat"], None)
        elif record["type"] == "Alert":
            alerts.append((data, seated.get(data["seat"], "")))
    assert [(a["seat"], a["card"]) for a, _ in alerts] == [(2, "middle")]
    [(alert, player)] = alerts
    assert player == "SIM-HC-2" and alert["player"] == player
    assert f"seat 2 {player} may see middle card" in alert_text(alert, 1)


def test_an_alert_is_journaled_by_the_controller_and_never_public(tmp_path):
    from controller.service.protection import Alert
    from controller.service.loop import Controller

    journal = Journal(tmp_path / "journal.db", fsync=False)
    published = []
    controller = Controller(Round(load_table_config(), load_jurisdiction("ny")), journal, {}, queue.Queue(),
                            on_record=published.append)
    controller.events.put(Alert(7, 3, "down", 412, 1, 30, 100, 4170))
    controller.events.put(STOP)
    controller.run()
    journal.close()
    alert = next(r for r in read_records(tmp_path / "journal.db") if r["type"] == "Alert")
    # an input of the round machine (controller/round/alerts.py), journaled in the round then in progress (none here)
    assert alert["data"]["round_no"] == 7 and alert["data"]["card"] == "down" and alert["kind"] == "event"
    assert controller.machine.alerts_waiting == [alert["data"]]
    assert alert in published and public_record(alert) is None


def test_an_alert_of_the_last_rounds_is_journaled_before_the_service_stops(tmp_path):
    """The detector may still be on the last rounds when the loop ends (``--rounds``, a stop): ``finish`` lets
    it put its alerts on the queue, and they are journaled before ``ServiceStopped``; other inputs left on the
    queue are not applied."""
    from controller.service.protection import Alert
    from controller.service.loop import Controller
    from drivers import events as ev

    journal = Journal(tmp_path / "journal.db", fsync=False)
    events: queue.Queue = queue.Queue()

    def finish():  # the detector's worker, done with the last round
        events.put(ev.ButtonPressed("open_betting"))
        events.put(Alert(45, 2, "middle", 405, 1, 45, 100, 9000))

    controller = Controller(Round(load_table_config(), load_jurisdiction("ny")), journal, {}, events,
                            finish=finish)
    events.put(STOP)
    controller.run()
    journal.close()
    types = [r["type"] for r in read_records(tmp_path / "journal.db")]
    # the meters' snapshot of the stop shares ServiceStopped's commit, before it (controller.service.meters_snapshot)
    assert [t for t in types if t != "MetersSnapshot"][-2:] == ["Alert", "ServiceStopped"]
    assert "ButtonPressed" not in types


def test_alerts_are_served_to_supervisors_only(tmp_path):
    import base64
    import http.client
    import time

    from controller.control.server import ControlConfig, ControlServer
    from controller.control.operators import MIN_ITERATIONS, add_operator

    operators = tmp_path / "operators.yaml"
    add_operator(operators, "sue", "supervisor", "supervisor-pass", iterations=MIN_ITERATIONS)
    add_operator(operators, "dan", "dealer", "dealer-pass-1", iterations=MIN_ITERATIONS)
    server = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators), queue.Queue(), request_timeout=0.5)
    server.start()
    try:
        alert = {"seq": 9, "time": "2026-01-01T00:00:00.000+00:00", "kind": "record", "round": 7, "type": "Alert",
                 "data": {"seat": 3, "card": "down", "evidence_log10_hundredths": 412, "first_round": 1,
                          "rounds": 30, "share_percent": 100, "loss": 4170, "round_no": 7}, "prev": "0", "hash": "0"}
        server.publish_record(alert)
        ack = {**alert, "seq": 11, "kind": "record", "type": "AlertAcknowledged",
               "data": {"alert": alert["data"], "by": "SUP-7", "role": "supervisor", "source": "panel", "round_no": 8,
                        "waiting": 0}}
        server.publish_record(ack)
        server.flush()

        def get(user: str | None, password: str = "") -> tuple[int, dict]:
            headers = {}
            if user:
                headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
            # a deadline, not a wait: the password check runs at a lower priority, slow on a loaded machine
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            try:
                conn.request("GET", "/alerts", headers=headers)
                response = conn.getresponse()
                return response.status, json.loads(response.read())
            finally:
                conn.close()

        deadline = time.monotonic() + 10
        while len(server.alerts) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        status, body = get("sue", "supervisor-pass")
        assert status == 200 and body["alerts"] == [{k: r[k] for k in ("seq", "time", "round", "type", "data")}
                                                    for r in (alert, ack)]
        assert get("dan", "dealer-pass-1")[0] == 403
        assert get(None)[0] == 401
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/events")
        events = json.loads(conn.getresponse().read())
        conn.close()
        assert all(r.get("type") not in ("Alert", "AlertAcknowledged") for r in events["records"])
    finally:
        server.stop()


@pytest.mark.parametrize("option, most", [("--honest-sessions", 100_000), ("--cheat-sessions", 100_000),
                                          ("--rounds", 10_000), ("--max-rounds", 100_000),
                                          ("--bound-deals", 1_000_000), ("--per-class", 1_000)])
def test_a_count_of_the_measures_past_its_bound_is_refused_before_anything_runs(option, most, capsys):
    """``--honest-sessions 1000000000`` asked numpy for 201 GiB at once and 10**6 took 6.5 GB; every count that
    sizes the measures' memory or time is bounded, the bound itself taken (docs/commands.md)."""
    from controller.cli.main import _parser
    from controller.cli.protect import MOST

    assert most in MOST.values()
    parsed = _parser().parse_args(["protect", "--measure", option, str(most)])
    assert getattr(parsed, option[2:].replace("-", "_")) == most
    with pytest.raises(SystemExit) as stop:
        _parser().parse_args(["protect", "--measure", option, str(most + 1)])
    assert stop.value.code == 2
    assert f"argument {option}: expected a positive integer of at most {most:,}, got {most + 1}" in capsys.readouterr().err
