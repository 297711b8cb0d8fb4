"""``crisscross floor store`` and ``crisscross floor report`` (docs/backoffice.md): their options and what they do.

``floor store --dsn DSN`` with the broker's options of ``floor watch`` (``--broker HOST``, ``--port``, ``--tls``,
...; else ``floor:`` of ``--config``): runs until SIGTERM or SIGINT (or ``--for`` seconds), then prints what it
stored. ``floor report --dsn DSN --table ID --period P``: ``controller.floor.report``.

Both need psycopg 3 (the ``backoffice`` extra: ``pip install 'crisscross-controller[backoffice]'``). Exit status:
0 done; 1 the report flags its figures (outside the 95% interval, or hold more than 4 points from the lifetime);
2 refused options or configuration, psycopg missing, a database or broker that cannot be used.
"""

from __future__ import annotations

import argparse
import datetime as dt
import signal
import sys
import threading
from typing import Any

from controller.settings.files import ConfigError

#: The report's periods (controller.floor.report).
PERIODS = ("day", "mtd", "ytd", "30d", "lifetime")


def add_parsers(floor_sub: argparse._SubParsersAction, common: argparse.ArgumentParser,
                broker: argparse.ArgumentParser) -> None:
    """Add ``store`` and ``report`` to ``crisscross floor``'s subcommands (``broker``: the broker's options)."""
    store = floor_sub.add_parser("store", parents=[common, broker],
                                 help="keep every table's records in PostgreSQL, exactly once, in order")
    store.add_argument("--dsn", required=True, help="the database: postgresql://USER@HOST:PORT/NAME or libpq "
                                                    "key=value text (a password from ~/.pgpass or PGPASSWORD)")
    store.add_argument("--session", default="store", metavar="NAME",
                       help="the store's durable session on the broker (default store): one store per name")
    store.add_argument("--join-late", action="store_true",
                       help="store a new table's first record heard whatever came before it (the store began "
                            "after the table); default: a gap until the records before it arrive")
    store.add_argument("--for", dest="duration", type=float, default=None,
                       help="stop after this many seconds (default: until SIGTERM or SIGINT)")


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None


def _time(text: str) -> dt.time:
    hours, _, minutes = text.partition(":")
    if len(hours) == len(minutes) == 2 and hours.isdigit() and minutes.isdigit() and int(hours) < 24 \
            and int(minutes) < 60:
        return dt.time(int(hours), int(minutes))
    raise argparse.ArgumentTypeError(f"expected a time of day HH:MM (24-hour), got {text!r}")


def _psycopg() -> Any:
    """psycopg, or ``ConfigError`` saying how to install it."""
    try:
        import psycopg
    except ImportError:
        raise ConfigError("psycopg 3 is not installed: pip install 'crisscross-controller[backoffice]'") from None
    return psycopg


def run(args: argparse.Namespace) -> int:
    """``crisscross floor store|report``; the exit status (module docstring)."""
    try:
        _psycopg()
        return _store(args)
    except ConfigError as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2


def _store(args: argparse.Namespace) -> int:
    from controller.floor.store import FloorStore
    from controller.floor.tools import broker_config

    store = FloorStore(broker_config(args), args.dsn, name=args.session, join_late=args.join_late)
    stop = threading.Event()
    previous = {number: signal.signal(number, lambda *_: stop.set()) for number in (signal.SIGTERM, signal.SIGINT)}
    timer = threading.Timer(args.duration, stop.set) if args.duration is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        store.run(stop)
    finally:
        if timer is not None:
            timer.cancel()
        for number, handler in previous.items():
            signal.signal(number, handler)
    total = store.total
    print(f"{len(total.tables)} table(s): {total.stored} records stored, {total.repeats} repeats dropped, "
          f"{total.held} held past a gap, {total.gaps} gap(s), {total.foreign} message(s) not in the floor's format")
    return 0
