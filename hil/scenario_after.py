"""A step's ``after`` (docs/rig.md, "Acting at a moment"): wait until a record is in the journal, then act
within a bound.

``after: {journal: {type: ButtonPressed, round: 1, data: {button: no_more_bets}, nth: 1}, within_ms: 50}`` on
any action step waits (``timeout`` seconds, default 20) until the ``nth`` record matching ``journal`` (type,
round, the fields of its data, as the expectations match them: ``hil.expect.records_matching``) is in the
journal, then the step's action is taken. The delay achieved is the time from the record's own ``time`` (the
service's clock when it journaled it) to the moment just before the action, in milliseconds; it is reported
with the scenario's result. When it is already more than ``within_ms`` the action is not taken and the step
fails: an action too late would test another ordering than the one written. So a scenario says which order
of events it means (the record, then the action) instead of hoping that a sleep gives it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hil.expect import records_matching

#: Seconds an ``after`` waits for its record by default (as a ``wait`` step).
AFTER_TIMEOUT = 20.0
#: Seconds between two readings of the journal while waiting.
POLL = 0.005


class AfterFailed(Exception):
    """The record did not come within the timeout, or it came too long before the action could be taken."""


@dataclass(frozen=True)
class Moment:
    """The record an action waited for and the delay achieved, ``delay_ms`` from the record's time."""

    record: dict[str, Any]
    delay_ms: float

    def describe(self) -> str:
        """``"12 ms after record 37 ButtonPressed"``: for the report."""
        return f"{self.delay_ms:.0f} ms after record {self.record.get('seq')} {self.record.get('type')}"


def record_time(record: Mapping[str, Any]) -> float:
    """The record's ``time`` (ISO 8601 with its offset, controller/journal/store.py) in seconds since the epoch.
    ``AfterFailed`` naming the record when it has none or one that is not ISO 8601."""
    try:
        return datetime.fromisoformat(record["time"]).timestamp()
    except (KeyError, TypeError, ValueError):
        raise AfterFailed(f"after: record {record.get('seq')} has no time one can read: "
                          f"{record.get('time')!r}") from None


def await_record(records: Callable[[], Sequence[dict[str, Any]]], after: Mapping[str, Any], *,
                 now: Callable[[], float] = time.time, monotonic: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> Moment:
    """Wait until ``after["journal"]`` (its ``nth`` match, default the first) is among ``records()``, and return
    it with the delay achieved so far. ``AfterFailed`` when it does not come within ``after["timeout"]`` seconds
    (default ``AFTER_TIMEOUT``), or when the delay already exceeds ``after["within_ms"]``. ``now`` is the wall
    clock the records' times are read against; ``monotonic`` and ``sleep`` pace the wait."""
    wanted = {key: value for key, value in after["journal"].items() if key != "nth"}
    nth = after["journal"].get("nth", 1)
    deadline = monotonic() + after.get("timeout", AFTER_TIMEOUT)
    while True:
        found = records_matching(records(), wanted)
        if len(found) >= nth:
            record = found[nth - 1]
            break
        if monotonic() >= deadline:
            raise AfterFailed(f"after: {len(found)} of {nth} record(s) {wanted} in the journal after "
                              f"{after.get('timeout', AFTER_TIMEOUT)} s")
        sleep(POLL)
    moment = Moment(record, max(0.0, (now() - record_time(record)) * 1000.0))
    limit = after.get("within_ms")
    if limit is not None and moment.delay_ms > limit:
        raise AfterFailed(f"after: could not act within {limit} ms: {moment.describe()} (not acted)")
    return moment
