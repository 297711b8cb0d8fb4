"""The periods of the floor's reports (``crisscross floor report --period``; docs/backoffice.md, "Reports"), each
ending with a gaming day: the day, the month to date, the year to date, the last 30 gaming days, and the
lifetime. A gaming day begins at the table's ``gaming_day_start`` (local time) and is named by the date it begins
on, as the service's meters snapshots name it (``controller.service.meters_snapshot.gaming_day``; NJ
13:69E-1.28C).
"""

from __future__ import annotations

import datetime as dt

#: The periods a report covers, each ending with a gaming day.
PERIODS = ("day", "mtd", "ytd", "30d", "lifetime")
#: The first and last gaming day a report may end with: every period's bounds are dates (the last 30 days begin on
#: one, the day after the last ends on one).
FIRST_DAY, LAST_DAY = dt.date.min + dt.timedelta(days=29), dt.date.max - dt.timedelta(days=1)


def check_day(day: dt.date) -> dt.date:
    """``day``, when a report may end with it (``FIRST_DAY`` to ``LAST_DAY``); else ``ValueError`` naming the
    range."""
    if not FIRST_DAY <= day <= LAST_DAY:
        raise ValueError(f"{day.isoformat()} is outside the gaming days a report covers ({FIRST_DAY.isoformat()} "
                         f"to {LAST_DAY.isoformat()})")
    return day


def day_begins(day: dt.date, start: dt.time, tz: dt.tzinfo | None = None) -> dt.datetime:
    """When gaming day ``day`` begins: ``start`` on that date in ``tz`` (None: this computer's local time), aware."""
    moment = dt.datetime.combine(day, start)
    return moment.replace(tzinfo=tz) if tz is not None else moment.astimezone()


def period_bounds(period: str, day: dt.date, start: dt.time,
                  tz: dt.tzinfo | None = None) -> tuple[dt.datetime | None, dt.datetime]:
    """``(begin, end)`` of ``period`` ending with gaming day ``day`` (``begin`` None: lifetime). Raises
    ``ValueError`` for a period not in ``PERIODS`` and for a day outside ``FIRST_DAY`` to ``LAST_DAY``."""
    check_day(day)
    first = {"day": day, "mtd": day.replace(day=1), "ytd": day.replace(month=1, day=1),
             "30d": day - dt.timedelta(days=29), "lifetime": None}
    if period not in first:
        raise ValueError(f"period {period!r}: expected one of {', '.join(PERIODS)}")
    end = day_begins(day + dt.timedelta(days=1), start, tz)
    return (None if first[period] is None else day_begins(first[period], start, tz)), end
