"""The check of the whole journal store, once after each start, in the background (docs/architecture.md, "The
journal store").

A start reads only the last checkpoint and the records after it (start-up does not grow with the history), so
a page damaged in the middle of the store (overwritten with zeros or other bytes) would go unseen until
``crisscross journal verify``. Once the service is ready, ``JournalCheck`` runs SQLite's ``PRAGMA quick_check``
on its own thread, through its own read-only connection (``mode=ro``: it never writes, and a damaged store is
never repaired, rewritten or truncated by the service), at the lowest CPU priority (nice 19 for that thread:
Linux's nice is per thread), beside the writer (WAL: the check reads one snapshot while commits go on).

What ``quick_check`` sees (sqlite.org/pragma.html#pragma_quick_check): every page of every table and index is
read and its b-tree structure checked (page headers, cell layout, free-list, pages used twice or never), and
records are checked to be well-formed; unlike ``integrity_check`` it does not check that each index matches its
table's rows (UNIQUE and the index contents). It does not check the hash chain, the seals or the canonical
spelling of records: that is ``crisscross journal verify``'s, which reads every record.

Its outcome reaches the round machine as an input on the service's event queue, journaled, committed and
replayed like any other: ``JournalDamaged`` (the check's first lines, at most ``MAX_DETAIL`` characters) when
it reports anything but ``ok`` or SQLite raises ``DatabaseError``; ``JournalWhole`` when it passes on a store
the round machine holds as damaged (``report_whole``). A pass otherwise journals nothing; either way the thread
logs its outcome (ERROR when damaged, INFO when whole) and sets ``done``.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.round.inputs import JournalDamaged, JournalWhole
from controller.settings.text import path_shown

log = logging.getLogger(__name__)

#: Longest detail of a damaged store kept (journal, log): the check's first lines.
MAX_DETAIL = 300
#: Problems ``quick_check`` reports at most (its argument): the first ones say enough.
MAX_PROBLEMS = 10
#: The check thread's nice value (the lowest priority): the controller's commits come first on a two-core PC.
NICE = 19
#: SQLite virtual machine steps between two looks at the stop request (``set_progress_handler``): every step,
#: from the first (the check itself is one step: the few others cost nothing).
PROGRESS_STEPS = 1
#: Seconds between two interrupts of a check that goes on after a stop (``JournalCheck.stop``).
STOP_STEP = 0.05


class Interrupter:
    """A stop request for a running check: ``interrupt`` (any thread) sets it and interrupts the check's SQLite
    statement at once (``sqlite3_interrupt``, the one call SQLite allows from any thread: ``PRAGMA quick_check``
    is a single step of SQLite's virtual machine, which a progress handler cannot stop within). ``attach`` and
    ``detach`` (the check's thread) name the connection to interrupt; a lock orders the three, so an interrupt
    never reaches a connection not yet open or closed, and one asked before ``attach`` acts at it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._asked = False

    def is_set(self) -> bool:
        """True once ``interrupt`` was asked."""
        return self._asked

    def progress(self) -> bool:
        """The connection's progress handler (``set_progress_handler``): True (stop) once ``interrupt`` was asked.
        Called from the statement's first step, it stops a check whose interrupt came before SQLite started it
        (SQLite forgets an interrupt asked while no statement runs)."""
        return self._asked

    def attach(self, db: sqlite3.Connection) -> None:
        """The connection whose statement ``interrupt`` stops (interrupted now when a stop was asked)."""
        with self._lock:
            self._db = db
            if self._asked:
                db.interrupt()

    def detach(self) -> None:
        """The connection is about to close: nothing more to interrupt."""
        with self._lock:
            self._db = None

    def interrupt(self) -> None:
        """Ask the stop and interrupt the statement running now, if any."""
        with self._lock:
            self._asked = True
            if self._db is not None:
                self._db.interrupt()


def quick_check(path: Path, *, stop: Interrupter | None = None) -> str:
    """``PRAGMA quick_check`` of the store at ``path`` through a read-only connection of the calling thread,
    opened and closed here: ``"ok"`` when whole, else the problems it reports (at most ``MAX_PROBLEMS`` lines,
    joined by ``"; "``). ``stop``'s ``interrupt`` interrupts the check (``sqlite3.OperationalError``). Raises
    ``sqlite3.DatabaseError`` when SQLite cannot read the store at all (a damaged header or schema page)."""
    db = sqlite3.connect(f"file:{Path(path).absolute()}?mode=ro", uri=True)
    try:
        if stop is not None:
            db.set_progress_handler(stop.progress, PROGRESS_STEPS)  # the steps before and after the check's own
            stop.attach(db)
        rows = db.execute(f"PRAGMA quick_check({MAX_PROBLEMS})").fetchall()
    finally:
        if stop is not None:
            stop.detach()
        db.close()
    return "; ".join(str(row[0]) for row in rows)


def bounded(text: str) -> str:
    """``text`` on one line and at most ``MAX_DETAIL`` characters (cut ones marked with "...")."""
    line = " ".join(text.split())
    return line if len(line) <= MAX_DETAIL else line[:MAX_DETAIL - 3] + "..."


class JournalCheck:
    """One check of the store at ``path`` on a daemon thread of its own (``start``), its outcome handed to
    ``put`` (the service's event queue: ``JournalDamaged``, or ``JournalWhole`` when ``report_whole``, the round
    machine holding the store as damaged). ``done`` is set once the check ended, whatever its outcome (also
    when stopped); ``result`` is then ``"ok"``, the problem found, or ``None`` when stopped or when the input
    could not be queued. ``seconds`` is the check's duration. ``stop`` interrupts it and waits for the thread
    (at most ``timeout`` seconds)."""

    def __init__(self, path: Path, put: Callable[[Any], None], *, report_whole: bool = False) -> None:
        self.path = Path(path)
        self.shown = path_shown(self.path)  # as the log shows it
        self.put = put
        self.report_whole = report_whole
        self.done = threading.Event()
        self.result: str | None = None
        self.seconds: float | None = None
        self._stop = Interrupter()
        self._thread = threading.Thread(target=self._run, name="journal-check", daemon=True)

    def start(self) -> None:
        """Start the check's thread (returns at once)."""
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Interrupt the check (if running) and wait for its thread, at most ``timeout`` seconds. The interrupt
        is asked again while the thread runs (SQLite forgets one that comes before its statement starts)."""
        deadline = time.monotonic() + timeout
        self._stop.interrupt()
        while self._thread.is_alive() and time.monotonic() < deadline:
            self._thread.join(min(STOP_STEP, max(0.0, deadline - time.monotonic())))
            self._stop.interrupt()

    def _run(self) -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)  # this thread only (Linux)
        except OSError as exc:  # not allowed or not supported: check all the same
            log.debug("journal check: nice %d not set: %s", NICE, exc)
        began = time.monotonic()
        try:
            try:
                found = quick_check(self.path, stop=self._stop)
            except sqlite3.DatabaseError as exc:
                if self._stop.is_set():
                    log.info("journal %s: check stopped before its end", self.shown)
                    return
                found = f"{type(exc).__name__}: {exc}"
            self.seconds = time.monotonic() - began
            self._report(found)
        except Exception:  # noqa: BLE001 - a defect of the check must not go unseen, nor stop the table
            log.exception("journal %s: the check failed", self.shown)
        finally:
            self.done.set()

    def _report(self, found: str) -> None:
        if found == "ok":
            log.info("journal %s: whole (quick_check ok in %.1f s)", self.shown, self.seconds)
            if self.report_whole:
                self.put(JournalWhole())
            self.result = found
            return
        detail = bounded(found)
        log.error("journal %s: DAMAGED (quick_check): %s; no new round opens until it is restored", self.shown,
                  detail)
        self.put(JournalDamaged(detail))
        self.result = detail
