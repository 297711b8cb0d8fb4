"""Part two of ``bench.bench_floor_store``: ``crisscross floor report`` over ``--records`` records of one table.

1. The template's public records (``bench.floor_tables.Template``, a rated simulated table), as its publisher
   sends them (each with its ``after``), are written by the store's own code (``controller.floor.store_write.Writer``,
   batches of ``BATCH`` in a transaction each, as the store writes them) as table ``TABLE``, their times
   stretched to a round a minute (a simulated table deals far faster than a dealer) from 14:00 UTC of the first
   day. So its records, figures, seat rounds, sessions, significant events and quarter-hour totals are the
   store's, by the store's rule.
2. That copy is replicated in SQL (``INSERT ... SELECT`` over ``generate_series``) into as many copies as make
   ``--records`` records, spread evenly over ``--days`` gaming days, each copy shifted by whole quarter hours
   (so each of its totals rows is the first copy's moved whole: a copy's quarters are its own). A copy's records
   follow the one before: seqs shifted past it, the ``after`` chain joined to its last record, rounds numbered
   on (the ``round_no`` columns, sessions' rounds and keys; the records' ``data`` stays the first copy's). The
   ``tables`` row says the last seq and the count. Then ``VACUUM ANALYZE``.
3. The report's sums are checked against the first copy's times the copies (rounds, drop, win, the exact
   theoretical win), and ``crisscross floor report`` is timed ``--repeats`` times for each period (day, mtd, ytd,
   30d, lifetime, each ending with the last gaming day), as a whole command (a process of its own, as an
   operator or a job runs it), with and without ``--plot``; and its query part in this process
   (``report_tool.build`` and ``report_tool.plot`` on an open connection, the pay tables' variance read
   before). Goal: each under 1 s.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import math
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from bench.floor_tables import Template, public_records
from controller.floor.store import BATCH
from controller.floor.store_write import FIGURE_COLUMNS, QUARTER, RATING_COLUMNS, Writer
from controller.floor.topics import encode

#: The report's table.
TABLE = "CC-REPORT"
#: The first gaming day of the records, and when each day's play begins (UTC).
FIRST_DAY, PLAY_FROM = dt.date(2025, 1, 1), dt.time(14, 0)
#: Seconds a round takes once the template's times are stretched.
ROUND_SECONDS = 60
#: Copies written by one SQL statement per table (a transaction each).
CHUNK = 100
#: Goal: seconds a report may take.
GOAL = 1.0
#: The report's options beside the period: the day begins at 06:00; New York's pay tables.
OPTIONS = ("--day-start", "06:00", "--jurisdiction", "ny")
PERIODS = ("day", "mtd", "ytd", "30d", "lifetime")


def write_template(conn: Any, template: Template) -> dict[str, Any]:
    """Write the template's public records through ``Writer`` as ``TABLE`` (module docstring, 1): the copy's
    ``records``, ``last`` seq, ``rounds`` (its highest round number) and ``span`` (seconds from its first record
    to its last)."""
    public = public_records(template.path)
    times = [dt.datetime.fromisoformat(p["time"]) for p in public]
    rounds = max(p["round"] or 0 for p in public)
    stretch = rounds * ROUND_SECONDS / max((times[-1] - times[0]).total_seconds(), 1e-3)
    base = dt.datetime.combine(FIRST_DAY, PLAY_FROM, tzinfo=dt.timezone.utc)
    messages, after = [], 0
    for record, moment in zip(public, times):
        at = (base + (moment - times[0]) * stretch).isoformat(timespec="milliseconds")
        messages.append((TABLE, "events", encode({"table": TABLE, "after": after, "record": {**record, "time": at}})))
        after = record["seq"]
    writer = Writer()
    for start in range(0, len(messages), BATCH):
        batch = messages[start:start + BATCH]
        with conn.transaction():
            outcome = writer.write(conn, batch)
        if outcome.stored != len(batch):
            raise RuntimeError(f"the store's writer stored {outcome.stored} of {len(batch)} template records: "
                               f"{outcome}")
    return {"records": len(public), "last": public[-1]["seq"], "rounds": rounds,
            "span": (times[-1] - times[0]).total_seconds() * stretch, "base": base}


#: The copies' shifts (module docstring, 2): copy ``k`` on gaming day ``k * days / copies`` (integer division),
#: in the day's slot after the copies before it on that day.
SHIFTS = """WITH copies AS (SELECT k, k * %(days)s / %(copies)s AS day
                FROM generate_series(%(first)s::bigint, %(last_copy)s) AS k),
shifts AS (SELECT k, make_interval(secs => (day * 86400 + (k - (day * %(copies)s + %(days)s - 1) / %(days)s)
                                            * %(slot)s)::float8) AS shift FROM copies)
"""
#: Each table's copy: its columns from the first copy's row ``r`` and the copy's ``s.k`` and ``s.shift``.
COPIES = {
    "records": ("seq, after_seq, time, kind, round_no, type, data, oversized, test, simulated",
                "r.seq + s.k * %(seqs)s, r.after_seq + s.k * %(seqs)s, r.time + s.shift, r.kind, "
                "r.round_no + s.k * %(rounds)s, r.type, r.data, r.oversized, r.test, r.simulated"),
    "figures": (f"seq, time, {', '.join(FIGURE_COLUMNS)}",
                f"r.seq + s.k * %(seqs)s, r.time + s.shift, {', '.join('r.' + c for c in FIGURE_COLUMNS)}"),
    "seat_rounds": ("seq, round_no, seat, time, ante, bonus, wagered, player_net",
                    "r.seq + s.k * %(seqs)s, r.round_no + s.k * %(rounds)s, r.seat, r.time + s.shift, r.ante, "
                    "r.bonus, r.wagered, r.player_net"),
    "sessions": ("seq, time, session_key, seat, player, first_round, last_round, rounds, actual_win, "
                 "theoretical_win, ended, data, added_rounds, added_actual, added_handle, added_theo, ante_squares, "
                 "bonus_squares, seat_rounds",
                 "r.seq + s.k * %(seqs)s, r.time + s.shift, regexp_replace(r.session_key, '[0-9]+$', "
                 "(r.first_round + s.k * %(rounds)s)::text), r.seat, r.player, r.first_round + s.k * %(rounds)s, "
                 "r.last_round + s.k * %(rounds)s, r.rounds, r.actual_win, r.theoretical_win, r.ended, r.data, "
                 "r.added_rounds, r.added_actual, r.added_handle, r.added_theo, r.ante_squares, r.bonus_squares, "
                 "r.seat_rounds"),
    "significant": ("seq, time, code, name, severity", "r.seq + s.k * %(seqs)s, r.time + s.shift, r.code, r.name, "
                                                         "r.severity"),
    "totals": (f"quarter, {', '.join(FIGURE_COLUMNS + RATING_COLUMNS)}",
               f"r.quarter + s.shift, {', '.join('r.' + c for c in FIGURE_COLUMNS + RATING_COLUMNS)}"),
}


def replicate(conn: Any, copy: dict[str, Any], copies: int, days: int) -> int:
    """Replicate the first copy (``write_template``) into ``copies`` in all (module docstring, 2), ``CHUNK``
    copies a transaction; the slot's seconds (a copy's span rounded up to whole quarter hours)."""
    slot = math.floor(copy["span"] / QUARTER + 1) * QUARTER
    params = {"days": days, "copies": copies, "slot": slot, "seqs": copy["last"], "rounds": copy["rounds"],
              "table": TABLE, "last": copy["last"], "end": copy["base"] + dt.timedelta(seconds=slot)}
    began = time.monotonic()
    for first in range(1, copies, CHUNK):
        chunk = {**params, "first": first, "last_copy": min(first + CHUNK, copies) - 1}
        with conn.transaction():
            for name, (columns, values) in COPIES.items():
                source = "r.quarter < %(end)s" if name == "totals" else "r.seq <= %(last)s"
                conn.execute(f"{SHIFTS}INSERT INTO {name} (table_id, {columns}) SELECT r.table_id, {values} "
                             f"FROM shifts s CROSS JOIN {name} r WHERE r.table_id = %(table)s AND {source}", chunk)
        done = chunk["last_copy"] + 1
        print(f"  {done} copies of {copies}, {done * copy['records']} records, {time.monotonic() - began:.0f} s",
              flush=True)
    conn.execute("UPDATE tables SET last_seq = %s, stored = %s WHERE table_id = %s",
                 (copies * copy["last"], copies * copy["records"], TABLE))
    return slot


def check_sums(conn: Any, before: Any, copies: int) -> list[str]:
    """The lifetime's sums of the replicated table against the first copy's ``before`` (``report.sums``) times the
    copies: the names of the figures that differ."""
    from controller.floor import report

    after = report.sums(conn, TABLE, None, dt.datetime(9999, 1, 1, tzinfo=dt.timezone.utc))
    wrong = [name for name, value in before.columns.items() if after.columns[name] != copies * value]
    return wrong + (["theoretical"] if after.theoretical != copies * before.theoretical else [])


def time_command(dsn: str, period: str, day: dt.date, plot: Path | None) -> float:
    """Seconds ``crisscross floor report`` takes for ``period`` as a process of its own (with ``--plot`` to
    ``plot``). Raises ``RuntimeError`` when it fails (exit status 2)."""
    command = [sys.executable, "-m", "controller", "floor", "report", "--dsn", dsn, "--table", TABLE, "--period",
               period, "--day", day.isoformat(), *OPTIONS, "--format", "json"] + (["--plot", str(plot)] if plot else [])
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - began
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-1000:]}")
    return seconds


def time_queries(conn: Any, period: str, day: dt.date, variance: Any) -> tuple[float, float]:
    """Seconds of the report's query part in this process: ``report_tool.build`` and ``report_tool.plot``."""
    from controller.floor.report_tool import build, plot

    start = dt.time(6, 0)
    began = time.perf_counter()
    build(conn, TABLE, period, day, start, variance)
    built = time.perf_counter()
    plot(conn, TABLE, period, day, start, variance)
    return built - began, time.perf_counter() - built


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({max(values):.2f})"


def report_part(args: argparse.Namespace, dsn: str, template: Template) -> int:
    """Part two (module docstring); the exit status: 1 when the sums differ from the copies' (a report over
    ``GOAL`` seconds, the median of its repeats, is printed as the goal not met)."""
    import psycopg

    from controller.analysis.variance import round_variance
    from controller.floor import report
    from controller.floor.migrate import migrate
    from controller.game.paytable import load_jurisdiction

    with psycopg.connect(dsn, autocommit=True) as conn, contextlib.ExitStack() as stack:
        migrate(conn)
        began = time.monotonic()
        copy = write_template(conn, template)
        copies = math.ceil(args.records / copy["records"])
        before = report.sums(conn, TABLE, None, dt.datetime(9999, 1, 1, tzinfo=dt.timezone.utc))
        print(f"report: the first copy written by the store's writer: {copy['records']} public records, "
              f"{copy['rounds']} rounds over {copy['span'] / 60:.0f} min, in {time.monotonic() - began:.1f} s; "
              f"{copies} copies over {args.days} gaming days make {copies * copy['records']} records")
        slot = replicate(conn, copy, copies, args.days)
        conn.execute("VACUUM ANALYZE")
        filled = time.monotonic() - began
        wrong = check_sums(conn, before, copies)
        counts = {name: conn.execute(f"SELECT count(*) FROM {name} WHERE table_id = %s", (TABLE,)).fetchone()[0]
                  for name in ("records", "figures", "seat_rounds", "sessions", "totals")}
        size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))").fetchone()[0]
        print(f"filled in {filled:.0f} s (each copy in a slot of {slot // 60} min); rows: "
              + ", ".join(f"{name} {count}" for name, count in counts.items()) + f"; database {size}")
        print(f"the lifetime's sums are the first copy's times {copies}: "
              + ("yes" if not wrong else f"NO ({', '.join(wrong)} differ)"))
        last_day = FIRST_DAY + dt.timedelta(days=args.days - 1)
        variance = round_variance(load_jurisdiction("ny"))
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="floor-report-")))
        start_up = [_seconds([sys.executable, "-m", "controller", "floor", "report", "--help"])
                    for _ in range(args.repeats)]
        rows, slow = [], []
        for period in PERIODS:
            whole, plotted, queries, plots = [], [], [], []
            for _ in range(args.repeats):
                whole.append(time_command(dsn, period, last_day, None))
                plotted.append(time_command(dsn, period, last_day, folder / f"{period}.svg"))
                built, drawn = time_queries(conn, period, last_day, variance)
                queries.append(built)
                plots.append(drawn)
            if statistics.median(plotted) > GOAL:
                slow.append(period)
            rows.append((period, whole, plotted, queries, plots))
    print(f"report over {counts['records']} records, gaming day {last_day} (--day-start 06:00, --jurisdiction ny), "
          f"seconds, median (max) of {args.repeats}; the command's start alone (--help): {_cell(start_up)}")
    print("  period   | command        | command --plot | query part     | plot part")
    for period, whole, plotted, queries, plots in rows:
        print(f"  {period:8} | {_cell(whole):14} | {_cell(plotted):14} | {_cell(queries):14} | {_cell(plots)}")
    print(f"goal: each report under {GOAL:g} s with --plot: " + ("met" if not slow else f"NOT met ({', '.join(slow)})"))
    return 1 if wrong else 0


def _seconds(command: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True, timeout=600)
    return time.perf_counter() - began
