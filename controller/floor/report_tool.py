"""``crisscross floor report --dsn DSN --table ID [--period day|mtd|ytd|30d|lifetime] [--day YYYY-MM-DD]
[--day-start HH:MM] [--jurisdiction CODE] [--config PATH] [--format text|json|csv] [--plot FILE.svg]``: a table's
figures from the floor's store (``controller.floor.report``; docs/backoffice.md, "Reports").

Defaults: the gaming day is the current one; it begins at ``gaming_day_start`` of the table configuration
(``--config``, else the one ``crisscross run`` finds), else 06:00, local time; the pay tables whose variance
the interval uses are that configuration's jurisdiction's. The output names the period's bounds, the store's
state for the table (records held past a gap, gaps still open, and how many records the store is behind what the
table said exists: the figures may then miss records), the store's health (``controller.floor.store_health``: a
store stopped, silent or deaf to the broker before the period's end has not stored what came after) and every
figure of ``controller.floor.report.statistics``.
Exit status: 0; 1 when the actual is outside the 95% interval or the hold deviates more than 4 points from the
lifetime's; 2 an option, a configuration, a database or a table that cannot be used (one line on standard
error).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

from controller.floor import topics
from controller.settings.files import ConfigError


def settings(args: argparse.Namespace) -> tuple[dt.time, Any]:
    """The gaming day's start and the jurisdiction (module docstring) of the options ``day_start``,
    ``jurisdiction`` and ``config`` (``floor report``'s and ``floor serve``'s). Raises ``ConfigError``."""
    from controller.game.paytable import load_jurisdiction

    config = None
    if args.day_start is None or args.jurisdiction is None:
        from controller.game.table import load_table_config
        from controller.settings.files import find_table_config

        config = load_table_config(find_table_config(Path(args.config) if args.config else None))
    start = args.day_start if args.day_start is not None else config.gaming_day_start
    if args.jurisdiction is not None:
        try:
            return start, load_jurisdiction(args.jurisdiction)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--jurisdiction {args.jurisdiction}: {exc}") from None
    from controller.service.opening import jurisdiction_for

    return start, jurisdiction_for(config)


def database_error(exc: Exception) -> str:
    """One line for a psycopg error ``exc``: its kind and libpq's first line (its hint lines left out); a
    database without the store's tables is named as such."""
    first = (str(exc).strip().splitlines() or [""])[0]
    if type(exc).__name__ == "UndefinedTable":
        return f"not a floor store, or one of an older schema ({first}): run crisscross floor store on it first"
    return f"{type(exc).__name__}: {first}"


def store_states(conn: Any, table: str | None = None, limit: int | None = None) -> dict[str, dict[str, int]]:
    """The store's state of ``table`` (None: of every table, in name order, at most ``limit``): ``{table:
    {"last_seq", "held" (records held past a gap), "unread" (records whose figures could not be read),
    "open_gaps", "behind"}}``.

    ``behind`` (journal seqs): the highest seq of a public record the table has said it published, minus
    ``last_seq``, 0 when not above it. The table says so with each ``meters`` message (its ``public``: the last
    public record published before it; a table that does not send it yet: the message's ``seq``, the record its
    round's close was checkpointed with, which may be a private one) and each record held past a gap. Above 0
    the store misses records even when no gap is open: a broker that dropped the store's queued messages
    (Mosquitto's ``max_queued_messages``) and a table idle since, whose next record would have shown the gap
    (docs/backoffice.md, "Exactly once"). It counts the journal's seqs, private records among them."""
    where = "" if table is None else " WHERE table_id = %s"
    # a store migrated by an older ``floor store`` (schema before 003_meters_public.sql) has no ``public_seq``
    said = "coalesce(public_seq, seq)" if conn.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_name = 'meters' AND column_name = 'public_seq' AND "
        "table_schema = current_schema()").fetchone() else "seq"
    rows = conn.execute("SELECT table_id, last_seq, held, unread, (SELECT count(*) FROM gaps g WHERE g.table_id = "
                        f"t.table_id AND filled_at IS NULL), greatest((SELECT max({said}) FROM meters m WHERE "
                        "m.table_id = t.table_id), (SELECT max(seq) FROM held h WHERE h.table_id = t.table_id)) "
                        f"FROM tables t{where} ORDER BY table_id" + ("" if limit is None else " LIMIT %s"),
                        ([] if table is None else [table]) + ([] if limit is None else [limit])).fetchall()
    return {name: {"last_seq": int(last), "held": int(held), "unread": int(unread), "open_gaps": int(gaps),
                   "behind": max(0, int(known or 0) - int(last))}
            for name, last, held, unread, gaps, known in rows}


def build(conn: Any, table: str, period: str, day: dt.date, start: dt.time, variance: Any,
          tz: dt.tzinfo | None = None) -> dict[str, Any]:
    """The report of ``table`` (module docstring) as a JSON-ready dict. Raises ``ConfigError`` when the store
    has no such table."""
    from controller.floor import report
    from controller.floor.periods import period_bounds

    from controller.floor import store_health

    state = store_states(conn, table).get(table)
    if state is None:
        known = [name for (name,) in conn.execute("SELECT table_id FROM tables ORDER BY table_id LIMIT 20")]
        raise ConfigError(f"--table {table}: not in the store (tables: {', '.join(known) or 'none'})")
    begin, end = period_bounds(period, day, start, tz)
    found = report.sums(conn, table, begin, end)
    figures = report.statistics(found, found if begin is None else report.sums(conn, table, None, end), variance)
    return {"table": table, "period": period, "gaming_day": day.isoformat(), "day_start": start.strftime("%H:%M"),
            "begin": None if begin is None else begin.isoformat(), "end": end.isoformat(),
            "store": state, **lapse(store_health.reading(conn, store_health.SILENT_AFTER)), **figures}


def lapse(health: dict[str, Any]) -> dict[str, Any]:
    """The report's view of the store's health (``store_health.reading``): ``store_health``, the pit page's state
    (``writing``, ``no broker``, ``stopped``, ``silent`` or ``unknown``), and ``store_lapsed_at``: the earliest
    time (ISO 8601) from which some store has stored nothing, its clean stop or its last write, for a store not
    ``writing`` (None for a store that writes but hears no table, and when every store writes or none is known)."""
    lapsed = [s for s in health["stores"] if s["state"] in ("stopped", "silent")]
    since = min((dt.datetime.fromisoformat(s["stopped_at"] or s["written_at"]) for s in lapsed), default=None)
    return {"store_health": health["state"], "store_lapsed_at": None if since is None else since.isoformat()}


def plot(conn: Any, table: str, period: str, day: dt.date, start: dt.time, variance: Any,
         tz: dt.tzinfo | None = None) -> str:
    """The SVG text of ``--plot`` (``controller.floor.plot_svg``) for ``table`` over ``period`` ending with gaming
    day ``day`` (begun at ``start``, local time or ``tz``), with the pay tables' ``variance``."""
    from controller.floor import plot_svg, report
    from controller.floor.periods import period_bounds

    begin, end = period_bounds(period, day, start, tz)
    days = report.daily(conn, table, begin, end, start, tz)
    return plot_svg.svg(table, period, plot_svg.hold_points(plot_svg.cumulative(days, variance)))


#: A number written as text (``-55.00``, ``12``): a spreadsheet reads it as the number it is.
NUMBER = re.compile(r"-?\d+(\.\d+)?")
#: The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """``value`` as a cell of a CSV the back office writes: None empty; a number (``int``, ``float``, or text that
    is one, ``NUMBER``) as it is, so a negative amount stays a number a spreadsheet sums; any other text that
    begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (``FORMULA_START``) with a ``'`` before
    it, so that no spreadsheet runs it as a formula (OWASP, "CSV Injection")."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not NUMBER.fullmatch(value):
        return "'" + value
    return value


def render(result: dict[str, Any], form: str) -> str:
    """``result`` (``build``) as ``text`` (one ``name  value`` line each, the flags named), ``json`` or ``csv`` (a
    header row and one row)."""
    flat = {k: v for k, v in result.items() if k != "store"} | {f"store_{k}": v for k, v in result["store"].items()}
    if form == "json":
        return json.dumps(result, indent=2)
    if form == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(flat)
        writer.writerow(csv_cell(v) for v in flat.values())
        return out.getvalue().rstrip("\n")
    width = max(map(len, flat))
    lines = [f"{name:<{width}}  {'-' if value is None else value}" for name, value in flat.items()]
    if result["outside_interval"]:
        lines.append(f"FLAG: the rated actual {result['rated_actual']} is outside the 95% interval "
                     f"[{result['interval_low']}, {result['interval_high']}] (MD COMAR 36.05.03.25)")
    if result["deviates"]:
        lines.append(f"FLAG: the hold {result['hold_percent']}% deviates {result['hold_deviation_points']} points "
                     f"from the lifetime's {result['lifetime_hold_percent']}% (over 4: OAC 3772-10-08(A))")
    if result["store"]["held"] or result["store"]["open_gaps"] or result["store"]["unread"]:
        lines.append("NOTE: the store misses records of this table (held past a gap, a gap open, or figures "
                     "unread): the figures may be short")
    if result["store"]["behind"]:
        lines.append(f"NOTE: the store is behind the table by {result['store']['behind']} journal records (the table "
                     f"said it published record {result['store']['last_seq'] + result['store']['behind']}, the last "
                     f"stored is {result['store']['last_seq']}): the figures may be short; docs/backoffice.md, "
                     f"\"Exactly once\"")
    lapsed = result["store_lapsed_at"]
    if lapsed is not None and dt.datetime.fromisoformat(lapsed) < dt.datetime.fromisoformat(result["end"]):
        lines.append(f"NOTE: a store has stored nothing since {lapsed} ({result['store_health']}), before the "
                     f"period's end: the figures may be short; docs/backoffice.md, \"The store's health\"")
    elif result["store_health"] == "no broker":
        lines.append("NOTE: the store is not connected to the broker: the tables' latest records may be missing")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """``crisscross floor report``; the exit status (module docstring)."""
    import psycopg

    from controller.analysis.variance import round_variance
    from controller.service.meters_snapshot import gaming_day

    try:
        if (problem := topics.table_id_problem(args.table)) is not None:
            raise ConfigError(f"--table: {problem[:200]}")
        start, jurisdiction = settings(args)
        day = args.day or gaming_day(dt.datetime.now(), start)
        try:
            conn = psycopg.connect(args.dsn, autocommit=True)
        except psycopg.Error as exc:
            raise ConfigError(f"--dsn: {database_error(exc)}") from None
        with conn:
            variance = round_variance(jurisdiction)
            result = build(conn, args.table, args.period, day, start, variance)
            if args.plot:
                text = plot(conn, args.table, args.period, day, start, variance)
                try:
                    Path(args.plot).write_text(text, encoding="utf-8")
                except OSError as exc:
                    raise ConfigError(f"--plot {args.plot}: {exc.strerror or exc}") from None
    except ConfigError as exc:
        print(f"crisscross floor report: {exc}", file=sys.stderr)
        return 2
    except psycopg.Error as exc:  # the database went away, or a store of another schema
        print(f"crisscross floor report: the store: {database_error(exc)}", file=sys.stderr)
        return 2
    print(render(result, args.format))
    return 1 if result["outside_interval"] or result["deviates"] else 0
