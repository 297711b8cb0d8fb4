"""A table's statistical review from the floor's store (``crisscross floor report``; docs/backoffice.md, "Reports"):
drop, win and hold by gaming day, month to date, year to date, the last 30 gaming days or lifetime, with the
theoretical win and a 95% check (MD COMAR 36.05.03.25) and the hold against the lifetime's (Ohio OAC
3772-10-08(A): a deviation over 4 percentage points is investigated).

The figures and where they come from (every amount integer minor units, the house's):

- ``rounds`` (rounds closed with wagers), ``rounds_no_play``, ``rounds_voided``, ``drop`` (every stake settled)
  and ``win`` (taken - paid): what the period's records add to the table's lifetime meters, by the meters' own
  rule (``controller.round.meters``, the rule of ``crisscross meters``; test rounds apart), each record counted
  in the period of its own time. ``hold`` = win / drop.
- ``theoretical`` (exact), ``rated_actual`` and ``rated_drop``: what the period's ``SessionRated`` records (``run
  --rating``) add to their sessions' previous ratings: the house's expected win from the decisions the players
  took (the sessions' exact ``theoretical_win``), the house's actual win and the handle of the same seat rounds.
  A rating counts in the period of its own time, so theoretical and actual cover the same rounds.
- The 95% check, the model: each rated seat round ``i`` is independent, with the house's net ``-(A_i R + b_i B)``
  for its ante ``A_i`` (each of the two) and five-card bonus ``b_i``, ``R`` and ``B`` the player's net per unit of
  the main game under the par sheet's optimal strategy and of the bonus, with their exact variances per unit
  ``s2`` and ``t2`` (``controller.analysis.variance``). So ``Var(actual - theoretical) = s2 sum A_i**2 + t2
  sum b_i**2`` and, by the central limit theorem over many seat rounds, the actual lies within ``theoretical
  +- 1.96 sqrt(Var)`` 95 times in 100. Left out (so the interval is somewhat narrow): the covariance of the seats
  of a round, which share the cross, and of a seat's bonus with its main game; a player's own strategy, whose
  variance differs from the optimal one's. ``outside_interval`` flags an actual outside it (none without a
  rated round).
- ``hold_deviation``: the period's hold minus the lifetime's (to the end of the period) in percentage points;
  ``deviates`` flags more than ``DEVIATION`` (4) either way. A payout percentage is 100 minus the hold, so its
  deviation is the same number of points.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from controller.floor.store_write import FIGURE_COLUMNS, QUARTER, RATING_COLUMNS

#: The two-sided 95% quantile of the normal distribution.
Z95 = 1.959963984540054
#: Percentage points of hold the period may differ from the lifetime before it is flagged (OAC 3772-10-08(A)).
DEVIATION = 4
#: ``sessions`` columns summed for the rating columns of ``RATING_COLUMNS``, in that order.
SESSION_SUMS = ("count(*)", "sum(added_rounds)", "sum(added_actual)", "sum(added_handle)", "sum(ante_squares)",
                "sum(bonus_squares)", "sum(seat_rounds)")
#: The exact theoretical win of ``sessions`` rows (``added_theo``, ``"p/q"`` or a whole ``"p"``) summed in the
#: database: the numerators of each denominator added up (``numeric``: exact), as ``(denominator, sum)`` texts, a
#: row per denominator (the ratings' denominators are few: those of the par sheet's probabilities), for the caller
#: to add as fractions. Used with ``GROUP BY`` of its first column (and any grouping put before it).
THEO_BY_DENOMINATOR = ("split_part(added_theo, '/', 2), sum(split_part(added_theo, '/', 1)::numeric)::text")


def _quarter(moment: dt.datetime, up: bool) -> dt.datetime:
    seconds = moment.timestamp() / QUARTER
    whole = math.ceil(seconds) if up else math.floor(seconds)
    return dt.datetime.fromtimestamp(whole * QUARTER, tz=dt.timezone.utc)


@dataclass
class Sums:
    """The period's sums (module docstring): ``columns`` by name (``FIGURE_COLUMNS`` and ``RATING_COLUMNS``) and
    the exact ``theoretical`` win."""

    columns: dict[str, int]
    theoretical: Fraction


def sums(conn: Any, table: str, begin: dt.datetime | None, end: dt.datetime) -> Sums:
    """The sums of ``table`` over ``[begin, end)`` (``begin`` None: from the first record): whole quarter hours
    from ``totals``, the parts of a quarter at either end from the rows; the theoretical win summed exactly
    from ``sessions``."""
    columns = FIGURE_COLUMNS + RATING_COLUMNS
    found = dict.fromkeys(columns, 0)
    low, high = (None if begin is None else _quarter(begin, True)), _quarter(end, False)
    pieces = []  # [from, to) read from the rows
    if low is not None and low >= high:
        pieces.append((begin, end))
    else:
        where = "quarter < %s" + ("" if low is None else " AND quarter >= %s")
        row = conn.execute(f"SELECT {', '.join(f'coalesce(sum({c}), 0)' for c in columns)} FROM totals WHERE "
                           f"table_id = %s AND {where}", (table, high, *([] if low is None else [low]))).fetchone()
        found = {c: int(v) for c, v in zip(columns, row)}
        if low is not None and begin < low:
            pieces.append((begin, low))
        if high < end:
            pieces.append((high, end))
    for start, stop in pieces:
        row = conn.execute(f"SELECT {', '.join(f'coalesce(sum({c}), 0)' for c in FIGURE_COLUMNS)} FROM figures "
                           "WHERE table_id = %s AND time >= %s AND time < %s", (table, start, stop)).fetchone()
        row += conn.execute(f"SELECT {', '.join(f'coalesce({c}, 0)' for c in SESSION_SUMS)} FROM sessions WHERE "
                            "table_id = %s AND time >= %s AND time < %s", (table, start, stop)).fetchone()
        for name, value in zip(columns, row):
            found[name] += int(value)
    theoretical = sum((_fraction(numerator, denominator) for denominator, numerator in conn.execute(
        f"SELECT {THEO_BY_DENOMINATOR} FROM sessions WHERE table_id = %s AND time < %s"
        + ("" if begin is None else " AND time >= %s") + " GROUP BY 1",
        (table, end, *([] if begin is None else [begin])))), Fraction(0))
    return Sums(found, theoretical)


def _fraction(numerator: str, denominator: str) -> Fraction:
    """A ``THEO_BY_DENOMINATOR`` row's sum as a fraction (an empty denominator: the sessions' whole numbers)."""
    return Fraction(int(numerator), int(denominator or 1))


def hold_percent(win: int | Fraction, drop: int) -> Fraction | None:
    """``win / drop`` in percent, exact; None without a drop."""
    return Fraction(win) * 100 / drop if drop else None


def statistics(period: Sums, lifetime: Sums, variance: Any) -> dict[str, Any]:
    """The figures and checks of the module docstring from the period's and the lifetime's ``Sums`` and the pay
    tables' ``controller.analysis.variance.RoundVariance``: amounts in minor units (the theoretical win and
    the interval rounded to whole ones, the exact theoretical win as ``"p/q"``), percentages as floats."""
    c = period.columns
    var = variance.main_variance * c["ante_squares"] + variance.bonus_variance * c["bonus_squares"]
    sd = math.sqrt(var)
    low, high = float(period.theoretical) - Z95 * sd, float(period.theoretical) + Z95 * sd
    hold = hold_percent(c["win"], c["drop"])
    life = hold_percent(lifetime.columns["win"], lifetime.columns["drop"])
    deviation = None if hold is None or life is None else hold - life
    rated = c["ratings"] > 0 and c["rated_rounds"] > 0
    return {
        "rounds": c["rounds_closed"], "rounds_no_play": c["rounds_no_play"], "rounds_voided": c["rounds_voided"],
        "rounds_test": c["rounds_test"], "drop": c["drop"], "win": c["win"], "hold_percent": _float(hold),
        "lifetime_hold_percent": _float(life), "hold_deviation_points": _float(deviation),
        "deviates": deviation is not None and abs(deviation) > DEVIATION,
        "rated_rounds": c["rated_rounds"], "rated_drop": c["rated_drop"], "rated_actual": c["rated_actual"],
        "theoretical": round(period.theoretical), "theoretical_exact": str(period.theoretical),
        "theoretical_hold_percent": _float(hold_percent(period.theoretical, c["rated_drop"])),
        "actual_hold_percent": _float(hold_percent(c["rated_actual"], c["rated_drop"])),
        "variance": round(var), "standard_deviation": round(sd),
        "interval_low": math.floor(low) if rated else None, "interval_high": math.ceil(high) if rated else None,
        "outside_interval": rated and not low <= c["rated_actual"] <= high,
        "seat_rounds_in_variance": c["seat_rounds"],
    }


def _float(value: Fraction | None) -> float | None:
    return None if value is None else round(float(value), 4)


def daily(conn: Any, table: str, begin: dt.datetime | None, end: dt.datetime, start: dt.time,
          tz: dt.tzinfo | None = None) -> list[tuple[dt.date, Sums]]:
    """The period's sums by gaming day (``start``: when a day begins, local time or ``tz``; the days' bounds
    ``controller.floor.periods.day_begins``, as the periods'), for the plot: whole quarter hours from ``totals``
    (exact when the day begins at a quarter hour, as every time zone's offset is whole quarters), each in the day
    its quarter begins in, and the theoretical win from ``sessions`` by each rating's own time; only days with a
    record. Both are added up by day in the database (``width_bucket`` over the days' beginnings), so the work
    here is a few rows a day, however many records and ratings a day has."""
    from controller.floor.periods import day_begins
    from controller.service.meters_snapshot import gaming_day  # the service's rule of the gaming day

    columns = FIGURE_COLUMNS + RATING_COLUMNS
    lower = "" if begin is None else " AND {0} >= %s"
    first = begin
    if first is None:
        first = conn.execute("SELECT least((SELECT min(quarter) FROM totals WHERE table_id = %s), (SELECT min(time) "
                             "FROM sessions WHERE table_id = %s))", (table, table)).fetchone()[0]
        if first is None:
            return []
    local = first.astimezone(tz) if tz is not None else first.astimezone()
    day = gaming_day(local.replace(tzinfo=None), start)
    days, bounds = [], []
    while (moment := day_begins(day, start, tz)) < end:
        days.append(day)
        bounds.append(moment)
        day += dt.timedelta(days=1)
    if not days:
        return []
    found: dict[dt.date, Sums] = defaultdict(lambda: Sums(dict.fromkeys(columns, 0), Fraction(0)))
    bounded = (table, end, *([] if begin is None else [begin]))
    for bucket, *values in conn.execute(
            f"SELECT width_bucket(quarter, %s::timestamptz[]), {', '.join(f'sum({c})' for c in columns)} FROM "
            f"totals WHERE table_id = %s AND quarter < %s{lower.format('quarter')} GROUP BY 1", (bounds, *bounded)):
        sums_of = found[days[max(bucket, 1) - 1]].columns  # bucket 0, before the first day: only at a clock's step
        for name, value in zip(columns, values):
            sums_of[name] += int(value)
    for bucket, denominator, numerator in conn.execute(
            f"SELECT width_bucket(time, %s::timestamptz[]), {THEO_BY_DENOMINATOR} FROM sessions WHERE table_id = %s "
            f"AND time < %s{lower.format('time')} GROUP BY 1, 2", (bounds, *bounded)):
        found[days[max(bucket, 1) - 1]].theoretical += _fraction(numerator, denominator)
    return sorted(found.items())
