"""The journal's two clocks: the wall time of each record (``time``) and a monotonic time beside it (``mono``).

``mono`` is the machine's boot clock in integer microseconds (``CLOCK_BOOTTIME``: like ``CLOCK_MONOTONIC`` it
is never stepped and is slewed by NTP as the wall clock is, and it also counts a suspend, so a suspended PC is
not taken for a stepped clock). Microseconds, not nanoseconds: a record's integers stay within the range every
JSON reader holds exactly (``controller.journal.record.SAFE_INTEGER``), which nanoseconds leave after 104 days up.

The clock restarts at each boot, so two records' ``mono`` compare only within one run: from a ``ServiceStarted``
record (or a journal tool's own record, ``RUN_STARTS``) to the next (docs/architecture.md, "The journal's
clocks"). Within a run ``mono`` never decreases, which ``crisscross journal verify`` checks (``MonoCheck``).

At each commit ``ClockWatch`` compares the wall time elapsed since this process's previous record with the
monotonic time elapsed; when they differ by more than ``STEP_BOUND_MS`` the wall clock was stepped (set by
hand, an NTP step, a bad RTC at boot), and the journal records a ``ClockStepped`` record (NY 9 NYCRR 5317.26's
significant events: a time change is one) in the same commit, before its records.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

log = logging.getLogger("controller.journal.store")  # a step is the journal's to report, under its logger

#: A difference between the wall and monotonic times elapsed above this (milliseconds) is a step of the wall
#: clock. Far above the journal's resolution (1 ms) and NTP's slew (at most 500 ppm, which both clocks follow).
STEP_BOUND_MS = 1000
#: The record type of a wall-clock step (kind ``record``; the round machine and replay skip it).
CLOCK_STEPPED = "ClockStepped"
#: Records that start a run of ``mono`` values (a new process that may follow a reboot): the service's start
#: and the journal tools' own records (``controller.journal.tools.ADMISSIONS``).
RUN_STARTS: frozenset[str] = frozenset({"ServiceStarted", "JournalKeyIntroduced", "AnchorRestored"})

_BOOTTIME = getattr(time, "CLOCK_BOOTTIME", None)

#: The last timestamp text made by ``utc_now``, ``(milliseconds since the epoch, text)``: the records of one
#: commit mostly fall in the same millisecond (one tuple, read and replaced whole: safe between threads).
_stamp: tuple[int, str] = (-1, "")


def utc_now() -> str:
    """The time now (UTC) as ISO 8601 text to the millisecond, cut as ``datetime.isoformat`` cuts it (down),
    from the same clock as ``datetime.now``; made once per millisecond."""
    global _stamp
    ms = time.time_ns() // 1_000_000
    stamp = _stamp
    if stamp[0] != ms:
        seconds, rest = divmod(ms, 1000)
        moment = datetime.fromtimestamp(seconds, timezone.utc).replace(microsecond=rest * 1000)
        stamp = _stamp = (ms, moment.isoformat(timespec="milliseconds"))
    return stamp[1]


def boot_us() -> int:
    """The boot clock now, integer microseconds since the machine started (``CLOCK_BOOTTIME``; the monotonic
    clock where there is none)."""
    if _BOOTTIME is not None:
        return time.clock_gettime_ns(_BOOTTIME) // 1000
    return time.monotonic_ns() // 1000


def wall_ms(text: str) -> int:
    """A record's ``time`` (ISO 8601 with its offset) as milliseconds since the epoch. Raises ``ValueError``
    for text that is not such a time."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"time {text!r} has no UTC offset")
    return round(moment.timestamp() * 1000)


class ClockWatch:
    """The wall and monotonic times of the last record this process journaled, to see a step of the wall clock
    at the next commit (``step``). ``active`` False (a test's frozen wall clock beside the real boot clock)
    sees none."""

    def __init__(self, active: bool = True) -> None:
        self.active = active
        self._last: tuple[str, int, int] | None = None  # (time text, wall ms, mono us)

    def step(self, time_: str, mono: int) -> dict[str, Any] | None:
        """The ``ClockStepped`` data when the wall time ``time_`` of the commit's first record, taken at ``mono``
        (µs), is more than ``STEP_BOUND_MS`` away from where the previous record's wall time and the monotonic
        time elapsed put it; None otherwise (also for this process's first commit: ``last`` notes each commit's last record). Logs a WARNING for a
        step.
        ``step_ms`` is how far the wall clock moved beyond the time elapsed (negative: moved back)."""
        before = self._last
        if not self.active or before is None:
            return None
        elapsed_ms = (mono - before[2]) // 1000
        step_ms = wall_ms(time_) - before[1] - elapsed_ms
        if abs(step_ms) <= STEP_BOUND_MS:
            return None
        log.warning("the wall clock stepped by %+d ms between two commits (wall %s then %s, %d ms apart by the "
                    "monotonic clock): journaled as %s", step_ms, before[0], time_, elapsed_ms, CLOCK_STEPPED)
        return {"wall_before": before[0], "wall_after": time_, "mono_before": before[2], "mono_after": mono,
                "step_ms": step_ms}

    def last(self, time_: str, mono: int) -> None:
        """Note the commit's last record (``time_``, ``mono``) as the one the next commit is compared with."""
        if self.active:
            self._last = (time_, wall_ms(time_), mono)


class MonoCheck:
    """A pass over a journal's records in seq order (``watch``) that notes the first record whose ``mono`` is
    below the one before it within one run (``RUN_STARTS`` begin a run; a record without ``mono``, written
    before the journal kept it, is passed over): a record moved or re-written by someone who re-chained the
    store without the key. ``problem`` is then ``(seq, text)``."""

    def __init__(self) -> None:
        self.problem: tuple[int, str] | None = None

    def watch(self, records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """``records`` passed on unchanged, each checked."""
        last: tuple[int, int] | None = None  # (seq, mono) of the last record of the run with one
        for record in records:
            if record.get("type") in RUN_STARTS:
                last = None
            mono = record.get("mono")
            if isinstance(mono, int) and self.problem is None:
                if last is not None and mono < last[1]:
                    self.problem = (record["seq"], f"its monotonic time {mono} us is below record {last[0]}'s "
                                                   f"({last[1]} us) in the same run: moved or re-written")
                last = (record["seq"], mono)
            yield record


def real_clocks(clock: Callable[[], str], monotonic: Callable[[], int] | None) -> bool:
    """Whether a journal's clocks may be compared for steps: both real, or both given (a test's)."""
    return (clock is utc_now) == (monotonic is None)
