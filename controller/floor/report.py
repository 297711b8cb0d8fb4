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
    theoretical = sum((Fraction(text) for (text,) in conn.execute(
        "SELECT added_theo FROM sessions WHERE table_id = %s AND time < %s" + ("" if begin is None else
                                                                              " AND time >= %s"),
        (table, end, *([] if begin is None else [begin])))), Fraction(0))
    return Sums(found, theoretical)


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
    """The period's sums by gaming day (``start``: when a day begins, local time or ``tz``), for the plot: whole
    quarter hours from ``totals`` (exact when the day begins at a quarter hour, as every time zone's offset is
    whole quarters) and the theoretical win from ``sessions``; only days with a record."""
    from controller.service.meters_snapshot import gaming_day  # the service's rule of the gaming day

    columns = FIGURE_COLUMNS + RATING_COLUMNS
    lower = "" if begin is None else " AND quarter >= %s"
    days: dict[dt.date, Sums] = defaultdict(lambda: Sums(dict.fromkeys(columns, 0), Fraction(0)))

    def local(moment: dt.datetime) -> dt.datetime:
        return moment.astimezone(tz) if tz is not None else moment.astimezone()

    for quarter, *values in conn.execute(f"SELECT quarter, {', '.join(columns)} FROM totals WHERE table_id = %s "
                                         f"AND quarter < %s{lower} ORDER BY quarter",
                                         (table, end, *([] if begin is None else [begin]))):
        found = days[gaming_day(local(quarter).replace(tzinfo=None), start)].columns
        for name, value in zip(columns, values):
            found[name] += int(value)
    for moment, text in conn.execute("SELECT time, added_theo FROM sessions WHERE table_id = %s AND time < %s"
                                     + ("" if begin is None else " AND time >= %s"),
                                     (table, end, *([] if begin is None else [begin]))):
        days[gaming_day(local(moment).replace(tzinfo=None), start)].theoretical += Fraction(text)
    return sorted(days.items())
