"""``crisscross floor store``, ``floor report`` and ``floor serve`` (docs/backoffice.md): their options and what
they do.

``floor store --dsn DSN`` with the broker's options of ``floor watch`` (``--broker HOST``, ``--port``, ``--tls``,
...; else ``floor:`` of ``--config``): runs until SIGTERM or SIGINT (or ``--for`` seconds), then prints what it
stored. ``floor report --dsn DSN --table ID --period P``: ``controller.floor.report``. ``floor serve --dsn DSN
--operators FILE``: the pit page (``controller.floor.serve``) until SIGTERM or SIGINT (or ``--for`` seconds).

They need psycopg 3 (the ``backoffice`` extra: ``pip install 'crisscross-controller[backoffice]'``). Exit status:
0 done; 1 the report flags its figures (outside the 95% interval, or hold more than 4 points from the lifetime),
or the store (with ``--for``, or stopped) never reached the broker or the database; 2 refused options or
configuration, psycopg missing, a database or broker that cannot be used (serve: a store that cannot be read
at the start, a port in use, TLS files that do not load).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.floor.periods import PERIODS, check_day
from controller.floor.stopping import stopping
from controller.floor.store_health import BEAT, MIN_SILENT_AFTER, SILENT_AFTER
from controller.settings.argtypes import MAX_SECONDS, number, seconds
from controller.settings.files import ConfigError

#: ``floor serve``'s port unless ``--port`` says (the control interface's is 8740).
DEFAULT_SERVE_PORT = 8741


def add_parsers(floor_sub: argparse._SubParsersAction, common: argparse.ArgumentParser,
                broker: argparse.ArgumentParser) -> None:
    """Add ``store``, ``report`` and ``serve`` to ``crisscross floor``'s subcommands (``broker``: the broker's
    options)."""
    store = floor_sub.add_parser("store", parents=[common, broker],
                                 help="keep every table's records in PostgreSQL, exactly once, in order")
    store.add_argument("--dsn", required=True, type=dsn, help="the database: postgresql://USER@HOST:PORT/NAME or libpq "
                                                    "key=value text (a password from ~/.pgpass or PGPASSWORD)")
    store.add_argument("--session", default="store", metavar="NAME",
                       help="the store's durable session on the broker (default store): one store per name")
    store.add_argument("--join-late", action="store_true",
                       help="store a new table's first record heard whatever came before it (the store began "
                            "after the table); default: a gap until the records before it arrive")
    store.add_argument("--for", dest="duration", type=seconds, default=None,
                       help="stop after this many seconds (default: until SIGTERM or SIGINT)")
    day = argparse.ArgumentParser(add_help=False)  # the gaming day and the pay tables: report and serve
    day.add_argument("--day-start", type=_time, default=None, metavar="HH:MM",
                     help="when the gaming day begins, local time (default: gaming_day_start of --config, "
                          "else 06:00)")
    day.add_argument("--jurisdiction", default=None,
                     help="the pay tables whose variance the interval uses (default: the jurisdiction of --config)")
    day.add_argument("--config", default=None, help="the table configuration (table.yaml) for the defaults")
    report = floor_sub.add_parser("report", parents=[common, day],
                                  help="a table's drop, win, hold and theoretical win from the store, with the "
                                       "95%% check")
    report.add_argument("--dsn", required=True, type=dsn, help="the store's database (as floor store's --dsn)")
    report.add_argument("--table", required=True, metavar="ID", help="the table's id as it publishes")
    report.add_argument("--period", choices=PERIODS, default="day",
                        help="the gaming day, month to date, year to date, the last 30 gaming days or lifetime, "
                             "each ending with --day (default day)")
    report.add_argument("--day", type=_date, default=None, metavar="YYYY-MM-DD",
                        help="the gaming day the period ends with (default: the current one)")
    report.add_argument("--format", choices=("text", "json", "csv"), default="text",
                        help="text (one name and value a line; default), json (as the pit page shows it) or csv (a "
                             "header row and one row)")
    report.add_argument("--plot", default=None, metavar="FILE.svg",
                        help="also write the actual and theoretical hold by gaming day with the 95%% band (SVG)")
    serve = floor_sub.add_parser("serve", parents=[common, day],
                                 help="the pit page: every table live from the store, in the browser")
    serve.add_argument("--dsn", required=True, type=dsn, help="the store's database (as floor store's --dsn; the page "
                                                    "only reads it)")
    serve.add_argument("--operators", required=True, type=Path, metavar="FILE",
                       help="the operators file (crisscross operator add): its supervisors may sign in")
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on (default 127.0.0.1); one that is not loopback needs "
                            "--allow-network and TLS")
    serve.add_argument("--port", type=int, default=DEFAULT_SERVE_PORT,
                       help=f"the port (default {DEFAULT_SERVE_PORT}; 0: any free one)")
    serve.add_argument("--allow-network", action="store_true",
                       help="serve on an address that is not loopback (with --tls-cert and --tls-key)")
    serve.add_argument("--tls-cert", type=Path, default=None, metavar="PEM", help="HTTPS: the certificate chain")
    serve.add_argument("--tls-key", type=Path, default=None, metavar="PEM", help="HTTPS: its private key (0600)")
    serve.add_argument("--name", action="append", default=[], metavar="HOST",
                       help="a host name the browsers use for this server (the certificate's; repeatable)")
    serve.add_argument("--every", type=float, default=2.0,
                       help="seconds between two readings of the store (0.5 to 60; default 2)")
    serve.add_argument("--online-within", type=seconds, default=300.0, metavar="SECONDS",
                       help="a table whose latest record is older is offline (default 300)")
    serve.add_argument("--store-silent-after", type=silent_after, default=SILENT_AFTER, metavar="SECONDS",
                       help=f"a store whose latest write is older is silent: the page's figures may be stale "
                            f"(default {SILENT_AFTER:g}; at least {MIN_SILENT_AFTER:g})")
    serve.add_argument("--for", dest="duration", type=seconds, default=None,
                       help="stop after this many seconds (default: until SIGTERM or SIGINT)")


def silent_after(text: str) -> float:
    """``floor serve --store-silent-after``: seconds from ``store_health.MIN_SILENT_AFTER`` (three of the store's
    beats: a store writing on time is never silent) to ``MAX_SECONDS``, else an ``ArgumentTypeError`` naming the
    text (exit status 2)."""
    return number(text, lambda v: MIN_SILENT_AFTER <= v <= MAX_SECONDS,
                  f"seconds, a number from {MIN_SILENT_AFTER:g} (the store writes its health every {BEAT:g} s) to "
                  f"{MAX_SECONDS:g}")


def _date(text: str) -> dt.date:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None
    try:
        return check_day(day)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None



def dsn(text: str) -> str:
    """argparse type of ``--dsn``: a PostgreSQL connection string libpq can read (a URI or ``key=value`` text),
    checked before anything starts (a store would otherwise try it again and again), else an
    ``ArgumentTypeError`` with libpq's reason. Without psycopg (the backoffice extra) it is left to the command."""
    try:
        from psycopg import ProgrammingError, conninfo
    except ImportError:
        return text
    try:
        conninfo.conninfo_to_dict(text)
    except ProgrammingError as exc:
        raise argparse.ArgumentTypeError(f"not a database connection string: {exc}") from None
    return text
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


def run(args: argparse.Namespace, broker_config: Callable[[argparse.Namespace], Any]) -> int:
    """``crisscross floor store|report|serve``; the exit status (module docstring). ``broker_config``: the broker of
    the options (``controller.floor.tools.broker_config``, which raises ``ConfigError``)."""
    try:
        _psycopg()
        if args.floor_command == "store":
            return _store(args, broker_config(args))
        if args.floor_command == "serve":
            return _serve(args)
        from controller.floor.report_tool import main as report

        return report(args)
    except ConfigError as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2


def _serve(args: argparse.Namespace) -> int:
    """``floor serve`` (``controller.floor.serve``): the options checked, the store read once, then served until
    stopped. Raises ``ConfigError`` for what cannot be used."""
    import psycopg

    from controller.analysis.variance import round_variance
    from controller.floor.report_tool import database_error, settings
    from controller.floor.serve import PitServer, Reports, ServeConfig, check_config
    from controller.floor.serve_data import PitData, Poller

    if not 0.5 <= args.every <= 60:
        raise ConfigError(f"--every {args.every:g}: expected 0.5 to 60 seconds")
    if not args.online_within > 0:
        raise ConfigError(f"--online-within {args.online_within:g}: expected a number of seconds above 0")
    config = ServeConfig(args.operators, args.host, args.port, args.allow_network, args.tls_cert, args.tls_key,
                         tuple(name.lower() for name in args.name))
    check_config(config)
    start, jurisdiction = settings(args)
    poller = Poller(args.dsn, PitData(start, online_within=args.online_within,
                                      store_silent_after=args.store_silent_after), args.every)
    try:
        poller.first()
    except psycopg.Error as exc:
        raise ConfigError(f"--dsn: the store cannot be read: {database_error(exc)}") from None
    reports = Reports(args.dsn, start, round_variance(jurisdiction))
    try:
        server = PitServer(config, poller, reports)
    except OSError as exc:
        reports.close()
        raise ConfigError(str(exc)) from None
    server.start()
    poller.start()
    print(f"pit page on {server.url} (gaming day begins {start.strftime('%H:%M')})", flush=True)
    try:
        with stopping(args.duration) as stop:
            stop.wait()
    finally:
        server.stop()
        poller.stop()
        reports.close()
    return 0


def _store(args: argparse.Namespace, config: Any) -> int:
    from controller.floor.store import FloorStore

    store = FloorStore(config, args.dsn, name=args.session, join_late=args.join_late)
    with stopping(args.duration) as stop:
        store.run(stop)
    total = store.total
    print(f"{len(total.tables)} table(s): {total.stored} records stored, {total.repeats} repeats dropped, "
          f"{total.held} held past a gap, {total.gaps} gap(s), {total.foreign} message(s) not in the floor's format"
          + (f", {total.before_join} record(s) before the join" if total.before_join else "")
          + (f", {total.meters_unknown} meters message(s) kept with the meters unknown (marked stubs)"
             if total.meters_unknown else ""))
    never = [part for part, reached in store.ever.items() if not reached]
    if never:
        print(f"crisscross floor store: never reached the {' nor the '.join(never)}: nothing could be stored",
              file=sys.stderr)
        return 1
    if store.unwritten:  # unacknowledged: the broker keeps them in the store's session for its next start
        print(f"crisscross floor store: {store.unwritten} message(s) received were never written (the database "
              f"refused {store.refused} batch write(s), or went away); the broker keeps them for the next start",
              file=sys.stderr)
        return 1
    return 0
