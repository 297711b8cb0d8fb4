"""The report's periods at the calendar's ends, and the options a new user gave that ended in a traceback:
refused with status 2 and a line naming the value (controller/floor/periods.py, docs/commands.md)."""

from __future__ import annotations

import datetime as dt

import pytest

from controller.cli.main import main
from controller.floor.periods import FIRST_DAY, LAST_DAY, PERIODS, check_day, period_bounds

UTC = dt.timezone.utc


@pytest.mark.parametrize("period", PERIODS)
def test_every_period_has_its_bounds_from_the_first_to_the_last_day(period):
    for day in (FIRST_DAY, LAST_DAY):
        begin, end = period_bounds(period, day, dt.time(6), UTC)
        assert end == dt.datetime.combine(day + dt.timedelta(days=1), dt.time(6), UTC)
        assert begin is None or begin <= end - dt.timedelta(days=1)


@pytest.mark.parametrize("day", [dt.date.min, FIRST_DAY - dt.timedelta(days=1), LAST_DAY + dt.timedelta(days=1)])
def test_a_day_past_the_ends_is_refused_by_name(day):
    with pytest.raises(ValueError, match=day.isoformat()):
        check_day(day)
    with pytest.raises(ValueError, match="outside the gaming days"):
        period_bounds("day", day, dt.time(6), UTC)


@pytest.mark.parametrize("argv, named", [
    (["floor", "report", "--dsn", "dbname=x", "--table", "t", "--day", "9999-12-31"], "9999-12-31 is outside"),
    (["floor", "report", "--dsn", "dbname=x", "--table", "t", "--day", "0001-01-01", "--period", "30d"], "0001-01-01"),
    (["floor", "serve", "--dsn", "dbname=x", "--operators", "y", "--for", "-1"], "--for: expected seconds"),
    (["floor", "store", "--dsn", "dbname=x", "--broker", "h", "--for", "0"], "--for: expected seconds"),
    (["floor", "serve", "--dsn", "dbname=x", "--operators", "y", "--online-within", "0"], "--online-within: expected"),
    (["floor", "watch", "--broker", "h", "--for", "-1"], "--for: expected seconds, a number from 0 to 1e+08, got -1"),
    (["floor", "watch", "--broker", "h", "--every", "nan"], "--every: expected seconds"),
    (["floor", "watch", "--broker", "h", "--every", "1e-300"], "--every: expected seconds, a number from 0.1, got"),
    (["floor", "watch", "--broker", "h", "--every", "0.09"], "--every: expected seconds, a number from 0.1, got 0.09"),
    (["floor", "audit", "--broker", "h", "--for", "inf"], "--for: expected seconds"),
    (["floor", "store", "--dsn", "dbname=x", "--broker", "h", "--for", "1e10"], "--for: expected seconds"),
    (["floor", "serve", "--dsn", "dbname=x", "--operators", "y", "--for", "1e308"], "--for: expected seconds"),
    (["protect", "--measure", "--seed", "-1"], "--seed: expected an integer from 0, got -1"),
    (["floor", "store", "--dsn", "garbage", "--broker", "h"], "--dsn: not a database connection string: missing"),
    (["floor", "report", "--dsn", "x", "--table", "t"], "--dsn: not a database connection string"),
])
def test_options_out_of_range_are_refused_before_any_work(argv, named, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert named in capsys.readouterr().err


def test_a_table_given_twice_to_audit_is_refused_naming_it(capsys):
    """``floor audit --journal T=a --journal T=b`` used the last silently: refused, status 2, before the broker."""
    assert main(["floor", "audit", "--broker", "h", "--journal", "T=a", "--journal", "T=b"]) == 2
    assert "--journal 'T=b': table T is given twice" in capsys.readouterr().err


def test_a_store_that_stops_with_messages_never_written_says_so_and_ends_with_status_1(monkeypatch, capsys):
    """``floor store`` stopping with received messages its database never took (a batch refused, or the database
    gone): the summary, then one line saying how many and that the broker keeps them; status 1, not 0."""
    from controller.floor import store as store_module
    from controller.floor.store_write import Outcome

    class Stopped:
        def __init__(self, *args, **kwargs):
            self.total, self.ever, self.unwritten, self.refused = Outcome(), {"broker": True, "database": True}, 2, 3

        def run(self, stop):
            pass

    monkeypatch.setattr(store_module, "FloorStore", Stopped)
    assert main(["floor", "store", "--dsn", "dbname=x", "--broker", "h", "--for", "1"]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("0 table(s): 0 records stored")
    assert "2 message(s) received were never written (the database refused 3 batch write(s), or went away)" \
        in captured.err
