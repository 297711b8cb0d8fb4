"""The floor's reports (``crisscross floor report``, controller/floor/report.py, docs/backoffice.md "Reports") from a
store fed by a simulated table with live rating (``run --simulate --rating``) through a real Mosquitto into a real
PostgreSQL (tests/postgres.py; skipped without them, failed under CI).

Oracles: ``crisscross meters`` on the table's own journal, as of the last record before each bound of the period
(rounds, drop and win are the meters' difference between the two); the journal's ``SessionRated`` records read
here (each session's last rating: its exact theoretical win, actual win and handle) and its ``SeatSettled``
records (the antes and bonuses of the rated seat rounds) with the pay tables' exact variance for the interval;
arithmetic done by hand for the flags (MD COMAR 36.05.03.25; Ohio OAC 3772-10-08(A)); the calendar for the
periods.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import xml.etree.ElementTree as ET
from fractions import Fraction
from zoneinfo import ZoneInfo

import psycopg
import pytest

from controller.analysis.variance import RoundVariance, round_variance
from controller.cli.parts import SERVICE_PARTS
from controller.floor import report
from controller.floor.periods import period_bounds
from controller.game.paytable import load_jurisdiction
from controller.journal.reader import read_records
from controller.service.assembly import Service
from tests.cli_helpers import crisscross
from tests.conftest import own_broker
from tests.test_floor import TABLE, _config
from tests.test_floor_store import assert_stored_as_journaled, postgres, store_running  # noqa: F401 - a fixture

START = dt.time(6, 0)  # the gaming day's start the tests give (--day-start)


@pytest.fixture(scope="module")
def rated(postgres, tmp_path_factory):  # noqa: F811 - the fixture
    """A store of 30 rounds of a rated simulated table, and its journal."""
    folder = tmp_path_factory.mktemp("rated")
    broker = own_broker(folder / "mqtt")
    try:
        dsn = postgres.create("report")
        journal = folder / "journal.db"
        with store_running(broker.port, dsn):
            service = Service(_config(broker.port), simulate=True, rounds=30, seed=3, journal_path=journal,
                              out=io.StringIO(), rating=True, parts=SERVICE_PARTS)
            try:
                assert service.run() == 0
            finally:
                service.close()
            assert_stored_as_journaled(dsn, journal)
    finally:
        broker.stop()
    return dsn, journal, read_records(journal)


def _local(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).astimezone()


def _gaming_day(text: str) -> dt.date:
    """The gaming day a record's time falls in, counted here: before 06:00 local time it is the day before."""
    moment = _local(text)
    return (moment - dt.timedelta(days=1)).date() if moment.time() < START else moment.date()


def _meters(journal, records, before: dt.datetime | None) -> dict[str, int]:
    """``crisscross meters`` as of the last record before ``before`` (None: all): rounds closed, drop, win."""
    seqs = [r["seq"] for r in records if before is None or _local(r["time"]) < before]
    if not seqs:
        return {"rounds": 0, "drop": 0, "win": 0}
    shown = crisscross("meters", "--journal", journal, "--at", max(seqs), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    lifetime = json.loads(shown.stdout)["lifetime"]
    return {"rounds": lifetime["rounds_closed"], "drop": lifetime["drop"], "win": lifetime["win"]}


def _report(dsn, *options) -> tuple[int, dict]:
    shown = crisscross("floor", "report", "--dsn", dsn, "--table", TABLE, "--day-start", "06:00", "--jurisdiction",
                       "ny", "--format", "json", *options)
    assert shown.returncode in (0, 1), shown.stderr
    return shown.returncode, json.loads(shown.stdout)


@pytest.mark.parametrize("period", ["day", "lifetime", "mtd"])
def test_the_reports_rounds_drop_and_win_are_the_meters_of_the_journal_for_the_period(rated, period):
    dsn, journal, records = rated
    day = _gaming_day(records[-1]["time"])
    _, shown = _report(dsn, "--period", period, "--day", day.isoformat())
    end = dt.datetime.combine(day + dt.timedelta(days=1), START).astimezone()
    first = {"day": day, "mtd": day.replace(day=1), "lifetime": None}[period]
    begin = None if first is None else dt.datetime.combine(first, START).astimezone()
    after, before = _meters(journal, records, end), _meters(journal, records, begin) if begin else None
    expected = {k: after[k] - (before[k] if before else 0) for k in after}
    assert {k: shown[k] for k in expected} == expected
    assert expected["rounds"] > 0 or period != "lifetime"
    if expected["drop"]:
        assert shown["hold_percent"] == round(100 * expected["win"] / expected["drop"], 4)


def test_a_period_cut_inside_a_quarter_hour_splits_the_figures_as_the_meters_do(rated):
    dsn, journal, records = rated
    times = [_local(r["time"]) for r in records]
    # the first record of the run's second half whose time is after every record before it
    at = next(t for i, t in enumerate(times) if i >= len(times) // 2 and t > max(times[:i]))
    assert at.timestamp() % 900  # inside a quarter: the sums read whole quarters from totals, the rest from rows
    with psycopg.connect(dsn, autocommit=True) as conn:
        first = report.sums(conn, TABLE, None, at).columns
        second = report.sums(conn, TABLE, at, at + dt.timedelta(days=400)).columns
    before, lifetime = _meters(journal, records, at), _meters(journal, records, None)
    assert (first["rounds_closed"], first["drop"], first["win"]) == tuple(before.values())
    assert (second["rounds_closed"], second["drop"], second["win"]) == tuple(
        lifetime[k] - before[k] for k in ("rounds", "drop", "win"))


def _last_ratings(records) -> list[dict]:
    """Each session's last ``SessionRated`` (a rated player's by id, an anonymous one's by seat; and its first
    round)."""
    last = {}
    for r in records:
        if r["type"] == "SessionRated":
            d = r["data"]
            last[(d["player"] or d["seat"], d["first_round"])] = d
    return list(last.values())


def test_the_theoretical_win_is_the_sessions_exact_figures_and_the_interval_their_variance(rated):
    dsn, _, records = rated
    code, shown = _report(dsn, "--period", "lifetime", "--day", _gaming_day(records[-1]["time"]).isoformat())
    ratings = _last_ratings(records)
    assert ratings, "the simulated table rated no session"
    theoretical = sum((Fraction(d["theoretical_win"]) for d in ratings), Fraction(0))
    assert shown["theoretical_exact"] == str(theoretical) and shown["theoretical"] == round(theoretical)
    assert shown["rated_actual"] == sum(d["actual_win"] for d in ratings)
    assert shown["rated_drop"] == sum(sum(d["handle"].values()) for d in ratings)
    assert shown["rated_rounds"] == sum(d["rounds"] for d in ratings)
    squares = [0, 0]
    for r in records:
        if r["type"] == "SeatSettled" and any(d["seat"] == r["data"]["seat"] and d["first_round"] <=
                                              r["data"]["round_no"] <= d["last_round"] for d in ratings):
            wagers = r["data"]["settlement"]["wagers"]
            squares[0] += wagers["ante_across"]["amount"] ** 2
            squares[1] += wagers.get("five_card_bonus", {"amount": 0})["amount"] ** 2
    pay = round_variance(load_jurisdiction("ny"))
    variance = pay.main_variance * squares[0] + pay.bonus_variance * squares[1]
    assert shown["variance"] == round(variance) and shown["seat_rounds_in_variance"] == shown["rated_rounds"]
    half = 1.959963984540054 * math.sqrt(variance)
    assert (shown["interval_low"], shown["interval_high"]) == (math.floor(theoretical - half),
                                                               math.ceil(theoretical + half))
    assert shown["outside_interval"] == (not theoretical - half <= shown["rated_actual"] <= theoretical + half)
    assert code == (1 if shown["outside_interval"] or shown["deviates"] else 0)


def test_the_flags_follow_the_regulations_numbers():
    pay = RoundVariance(Fraction(0), Fraction(100), Fraction(0), Fraction(4))
    columns = dict.fromkeys(report.FIGURE_COLUMNS + report.RATING_COLUMNS, 0)
    # 100 rated seat rounds of ante 10 and bonus 5: variance 100 x 10,000 + 4 x 2,500 = 1,010,000
    rated = {**columns, "ratings": 10, "rated_rounds": 100, "rated_drop": 20000, "ante_squares": 10000,
             "bonus_squares": 2500, "drop": 10000, "win": 1000}
    lifetime = report.Sums({**columns, "drop": 100000, "win": 5000}, Fraction(0))  # 5% lifetime, 10% now
    inside = report.statistics(report.Sums({**rated, "rated_actual": 6000}, Fraction(5000)), lifetime, pay)
    assert inside["variance"] == 1010000 and inside["standard_deviation"] == 1005  # sqrt 1,004.99
    assert (inside["interval_low"], inside["interval_high"]) == (3030, 6970)  # 5000 -+ 1.96 x 1004.99
    assert not inside["outside_interval"]
    assert inside["hold_percent"] == 10.0 and inside["hold_deviation_points"] == 5.0 and inside["deviates"]
    outside = report.statistics(report.Sums({**rated, "rated_actual": 7000}, Fraction(5000)),
                                report.Sums({**columns, "drop": 100000, "win": 7000}, Fraction(0)), pay)
    assert outside["outside_interval"] and outside["hold_deviation_points"] == 3.0 and not outside["deviates"]
    none = report.statistics(report.Sums(columns, Fraction(0)), report.Sums(columns, Fraction(0)), pay)
    assert none["hold_percent"] is None and not none["outside_interval"] and none["interval_low"] is None


def test_the_periods_end_with_the_gaming_day_and_follow_the_local_clock():
    utc = dt.timezone.utc
    at = lambda *a: dt.datetime(*a, tzinfo=utc)  # noqa: E731
    day = dt.date(2026, 3, 15)
    assert period_bounds("day", day, START, utc) == (at(2026, 3, 15, 6), at(2026, 3, 16, 6))
    assert period_bounds("mtd", day, START, utc)[0] == at(2026, 3, 1, 6)
    assert period_bounds("ytd", day, START, utc)[0] == at(2026, 1, 1, 6)
    assert period_bounds("30d", day, START, utc)[0] == at(2026, 2, 14, 6)  # 15 March and the 29 days before
    assert period_bounds("lifetime", day, START, utc) == (None, at(2026, 3, 16, 6))
    # New York springs forward at 2:00 on 8 March 2026: the gaming day of 7 March has 23 hours
    begin, end = period_bounds("day", dt.date(2026, 3, 7), START, ZoneInfo("America/New_York"))
    assert (begin.astimezone(utc), end.astimezone(utc)) == (at(2026, 3, 7, 11), at(2026, 3, 8, 10))


def test_the_csv_is_the_json_and_the_plot_has_a_point_per_gaming_day(rated, tmp_path):
    dsn, _, records = rated
    day = _gaming_day(records[-1]["time"]).isoformat()
    _, shown = _report(dsn, "--period", "lifetime", "--day", day)
    table = crisscross("floor", "report", "--dsn", dsn, "--table", TABLE, "--day-start", "06:00", "--jurisdiction",
                       "ny", "--period", "lifetime", "--day", day, "--format", "csv", "--plot", tmp_path / "hold.svg")
    header, row = list(csv.reader(io.StringIO(table.stdout)))
    flat = {k: v for k, v in shown.items() if k != "store"} | {f"store_{k}": v for k, v in shown["store"].items()}
    assert header == list(flat) and row == ["" if v is None else str(v) for v in flat.values()]
    svg = ET.parse(tmp_path / "hold.svg").getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    days = {_gaming_day(r["time"]) for r in records if r["type"] == "SessionRated"}
    for name in ("actual", "theoretical"):
        (line,) = svg.findall(f"s:polyline[@class='{name}']", ns)
        assert len(line.get("points").split()) == len(days)
    assert TABLE in svg.find("s:title", ns).text


def _text_report(dsn, day: dt.date) -> str:
    shown = crisscross("floor", "report", "--dsn", dsn, "--table", TABLE, "--day-start", "06:00", "--jurisdiction",
                       "ny", "--period", "day", "--day", day.isoformat())
    assert shown.returncode in (0, 1), shown.stderr
    return shown.stdout


def test_a_store_that_stopped_or_fell_silent_before_the_periods_end_is_noted(rated):
    """The report says the store's health as the pit page does (docs/backoffice.md, "The store's health"): the
    fixture's store stopped cleanly after the last round, so a report of that gaming day (ending at 06:00 the next
    morning) notes that nothing was stored from the stop on, and a report of the day before (ending before the
    first record) does not. A second store whose last write is an hour old is silent: the earliest lapse counts."""
    dsn, _, records = rated
    day = _gaming_day(records[-1]["time"])
    with psycopg.connect(dsn, autocommit=True) as conn:
        (stopped_at,) = conn.execute("SELECT stopped_at FROM store_health").fetchone()
    assert stopped_at is not None
    _, shown = _report(dsn, "--period", "day", "--day", day.isoformat())
    assert (shown["store_health"], dt.datetime.fromisoformat(shown["store_lapsed_at"])) == ("stopped", stopped_at)
    assert f"NOTE: a store has stored nothing since {shown['store_lapsed_at']} (stopped)" in _text_report(dsn, day)
    assert "NOTE: a store" not in _text_report(dsn, day - dt.timedelta(days=1))
    with psycopg.connect(dsn, autocommit=True) as conn:
        (silent_at,) = conn.execute(
            "INSERT INTO store_health (store, host, pid, started_at, written_at, pending, stored, skipped, refused, "
            "subscribed) VALUES ('crisscross-store-old', 'pit', 1, now() - interval '2 hours', now() - interval "
            "'1 hour', 0, 0, 0, 0, true) RETURNING written_at").fetchone()
        try:
            _, shown = _report(dsn, "--period", "day", "--day", day.isoformat())
            assert (shown["store_health"], dt.datetime.fromisoformat(shown["store_lapsed_at"])) == ("silent",
                                                                                                     silent_at)
            assert f"stored nothing since {shown['store_lapsed_at']} (silent)" in _text_report(dsn, day)
        finally:
            conn.execute("DELETE FROM store_health WHERE store = 'crisscross-store-old'")


def test_a_table_not_in_the_store_and_a_bad_day_start_are_named(rated):
    dsn, _, _ = rated
    shown = crisscross("floor", "report", "--dsn", dsn, "--table", "CC-99", "--jurisdiction", "ny")
    assert shown.returncode == 2 and f"--table CC-99: not in the store (tables: {TABLE})" in shown.stderr
    shown = crisscross("floor", "report", "--dsn", dsn, "--table", TABLE, "--day-start", "6:00")
    assert shown.returncode == 2 and "expected a time of day HH:MM (24-hour), got '6:00'" in shown.stderr


def test_the_plot_adds_up_each_ratings_exact_win_and_each_quarter_in_its_own_gaming_day(postgres):  # noqa: F811
    """Hand-written rows around New York's spring-forward (8 March 2026, 2:00): the gaming day begins at 06:00
    local; the sums by day are done in the database (numerators by denominator, days by their beginnings), so
    whole numbers, negative numerators and several denominators must each land exactly in their day."""
    from controller.floor.migrate import migrate

    york = ZoneInfo("America/New_York")
    at = lambda *a: dt.datetime(*a, tzinfo=york)  # noqa: E731
    ratings = [(at(2026, 3, 7, 5, 59), "1/3"), (at(2026, 3, 7, 6, 0), "-5/7"), (at(2026, 3, 8, 5, 30), "2"),
               (at(2026, 3, 8, 6, 0), "1/3")]
    quarters = [(at(2026, 3, 7, 5, 45), 100), (at(2026, 3, 7, 6, 0), 10), (at(2026, 3, 8, 5, 45), 1),
                (at(2026, 3, 8, 6, 0), 1000)]
    with psycopg.connect(postgres.create("daily"), autocommit=True) as conn:
        migrate(conn)
        conn.execute("INSERT INTO tables (table_id) VALUES ('T-D')")
        for seq, (moment, theo) in enumerate(ratings, 1):
            conn.execute("INSERT INTO records (table_id, seq, after_seq, time, type) VALUES ('T-D', %s, %s, %s, "
                         "'SessionRated')", (seq, seq - 1, moment))
            conn.execute("INSERT INTO sessions (table_id, seq, time, session_key, seat, player, first_round, "
                         "last_round, rounds, actual_win, theoretical_win, ended, data, added_rounds, added_actual, "
                         "added_handle, added_theo, ante_squares, bonus_squares, seat_rounds) VALUES ('T-D', %s, %s, "
                         "%s, 1, '', 1, 1, 1, 0, %s, false, '{}', 1, 0, 0, %s, 0, 0, 1)",
                         (seq, moment, f"seat 1 from round {seq}", theo, theo))
        for moment, drop in quarters:
            conn.execute("INSERT INTO totals (table_id, quarter, drop) VALUES ('T-D', %s, %s)", (moment, drop))
        end = at(2026, 3, 9, 6, 0)
        days = {day: (sums.columns["drop"], sums.theoretical)
                for day, sums in report.daily(conn, "T-D", None, end, START, york)}
        later = [day for day, _ in report.daily(conn, "T-D", at(2026, 3, 7, 6, 0), end, START, york)]
        total = report.sums(conn, "T-D", None, end).theoretical
    # 7 March 05:59 and 05:45 are still the gaming day of 6 March; 8 March 05:30 and 05:45 (after the clock
    # sprang forward) that of 7 March
    assert days == {dt.date(2026, 3, 6): (100, Fraction(1, 3)), dt.date(2026, 3, 7): (11, Fraction(9, 7)),
                    dt.date(2026, 3, 8): (1000, Fraction(1, 3))}
    assert later == [dt.date(2026, 3, 7), dt.date(2026, 3, 8)]
    assert total == Fraction(41, 21)  # 1/3 - 5/7 + 2 + 1/3 = (7 - 15 + 42 + 7) / 21


def test_a_csv_cell_a_spreadsheet_would_run_as_a_formula_is_text_and_numbers_stay_numbers():
    """OWASP "CSV Injection": a text cell beginning with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
    is written with a ``'`` before it; amounts, negative ones too, are written as the numbers they are."""
    from controller.floor.report_tool import render

    result = {"table": "=HYPERLINK(\"http://x\")", "period": "+day", "gaming_day": "@2026", "day_start": "-06:00",
              "win": -5500, "hold_percent": "-55.00", "rated_actual": -12.5, "store_health": "\tsilent",
              "store": {"behind": 0, "last_seq": 3}}
    header, row = list(csv.reader(io.StringIO(render(result, "csv"))))
    cells = dict(zip(header, row))
    assert cells == {"table": "'=HYPERLINK(\"http://x\")", "period": "'+day", "gaming_day": "'@2026",
                     "day_start": "'-06:00", "win": "-5500", "hold_percent": "-55.00", "rated_actual": "-12.5",
                     "store_health": "'\tsilent", "store_behind": "0", "store_last_seq": "3"}
