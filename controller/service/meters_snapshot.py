"""The meters' snapshots in the journal (NJ 13:69E-1.28C): a ``MetersSnapshot`` record, journaled by the service
in the commit of every significant event (a record ``controller.round.significant.code_of`` names: a start, a
round voided, a fault, a mispay accepted, ...), in the commit of ``ServiceStopped`` (before it), and at each
gaming day's close.

A snapshot's ``data``: ``reasons`` (the record types that called for it, in order, or ``day_close``),
``gaming_day`` (the gaming day it falls in, ``YYYY-MM-DD``; for ``day_close`` the day that closed) and
``meters`` (``Meters.to_json()``: the meters after every record before it). It is a service record: replay
skips it (``controller.journal.recovery.SERVICE_RECORDS``); ``crisscross meters --audit`` checks it against the
meters recomputed from the records before it (``controller.journal.meters_audit``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from controller.game.table import DEFAULT_DAY_START
from controller.round.meters import DAY_CLOSE, SNAPSHOT, Meters
from controller.round.significant import code_of

Entry = tuple[str, str, dict[str, Any], "int | None"]


def gaming_day(moment: dt.datetime, start: dt.time) -> dt.date:
    """The gaming day ``moment`` (local time) falls in: a day runs from ``start`` to the next day's ``start``,
    and is named by the date it began on."""
    return (moment - dt.timedelta(hours=start.hour, minutes=start.minute, seconds=start.second)).date()


class MeterSnapshots:
    """When to journal a ``MetersSnapshot`` and its entry (module docstring). ``day_start``: the gaming day's
    start (local time); ``now``: the local clock (a naive or aware ``datetime``), read once per ``day_closed``."""

    def __init__(self, day_start: dt.time = DEFAULT_DAY_START,
                 now: Callable[[], dt.datetime] = dt.datetime.now) -> None:
        self.day_start = day_start
        self.now = now
        self.day = gaming_day(now(), day_start)

    def entry(self, reasons: Sequence[str], meters: Meters, round_no: int | None,
              day: dt.date | None = None) -> Entry:
        """The journal entry ``(kind, type, data, round)`` of a snapshot of ``meters`` now."""
        data = {"reasons": list(reasons), "gaming_day": (day or self.day).isoformat(), "meters": meters.to_json()}
        return "record", SNAPSHOT, data, round_no

    def after(self, entries: Sequence[Entry], meters: Meters, round_no: int | None) -> list[Entry]:
        """The snapshot that closes a commit of ``entries`` when one of them is a significant event, else none."""
        reasons = list(dict.fromkeys(type_ for _, type_, data, _ in entries if code_of(type_, data) is not None))
        return [self.entry(reasons, meters, round_no)] if reasons else []

    def day_closed(self, meters: Meters, round_no: int | None) -> list[Entry]:
        """The ``day_close`` snapshot when the gaming day changed since the last call (one per day that closed
        while the service ran; a day that closed while it was stopped is seen in its ``ServiceStarted``
        snapshot's ``gaming_day``), else none."""
        today = gaming_day(self.now(), self.day_start)
        if today == self.day:
            return []
        closed, self.day = self.day, today
        return [self.entry([DAY_CLOSE], meters, round_no, closed)]

