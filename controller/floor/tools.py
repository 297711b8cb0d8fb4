"""``crisscross floor watch`` and ``crisscross floor audit`` (docs/floor.md): their options and what they do;
``floor store``, ``floor report`` and ``floor serve`` (docs/backoffice.md) are added from
``controller.floor.backoffice_tools``.

The broker: ``--broker HOST`` (with ``--port``, ``--tls``, ``--ca-file``, ``--username``, ``--password-file``,
``--prefix``), else ``floor:`` of the table configuration (``--config``). Exit status: 0 done (audit: nothing
wrong), 1 the audit found a problem, 2 refused options or configuration, or a broker that cannot be reached.
``--for`` counts from the start, the connection to the broker included (``SUBSCRIBE_AT_LEAST`` seconds at least
for it). The watch runs until ``--for`` ends or SIGTERM or SIGINT (``controller.floor.stopping``) and prints a last
summary either way, status 0. The audit listens until ``--for`` ends or SIGTERM or SIGINT, then checks what it
heard (status 0 or 1 as above); a Ctrl-C while it checks ends it as an interrupt (``crisscross: interrupted``,
130), never as "nothing wrong".
"""

from __future__ import annotations

import argparse
import math
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from controller.floor.stopping import interruptible, stopping
from controller.settings.argtypes import number, seconds_or_none
from controller.settings.files import ConfigError, find_table_config
from controller.settings.floor import DEFAULT_PREFIX, PLAIN_PORT, TLS_PORT, FloorConfig, check_prefix

#: Seconds the subscription is given at least, whatever is left of ``--for`` (``--for 0``'s one look needs it).
SUBSCRIBE_AT_LEAST = 1.0
#: The shortest ``floor watch --every`` (seconds): a summary is a screenful, and a shorter period only floods the
#: terminal.
MIN_EVERY = 0.1


def every(text: str) -> float:
    """``floor watch --every``: seconds from ``MIN_EVERY``, finite, else an ``ArgumentTypeError`` naming the text
    (exit status 2)."""
    return number(text, lambda v: MIN_EVERY <= v < math.inf, f"seconds, a number from {MIN_EVERY}")


def prefix(text: str) -> str:
    """``--prefix``: topic levels by ``floor.prefix``'s rule (``controller.settings.floor.check_prefix``), else an
    ``ArgumentTypeError`` naming the text (exit status 2)."""
    try:
        return check_prefix(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, config_help: str) -> None:
    """Add ``floor watch``, ``audit``, ``store``, ``report`` and ``serve`` to the ``crisscross`` parser's
    subcommands ``sub``."""
    floor = sub.add_parser("floor", help="the floor's view of every table over MQTT", parents=[common])
    floor_sub = floor.add_subparsers(dest="floor_command", required=True)
    broker = argparse.ArgumentParser(add_help=False)
    broker.add_argument("--broker", default=None, help="broker host (default: floor.broker of --config)")
    broker.add_argument("--port", type=int, default=None, help="broker port (default 1883, 8883 with --tls)")
    broker.add_argument("--tls", action="store_true", help="connect with TLS")
    broker.add_argument("--ca-file", type=Path, default=None, help="certificate authorities (PEM) for --tls")
    broker.add_argument("--username", default=None, help="the broker's user name (with --password-file)")
    broker.add_argument("--password-file", type=Path, default=None, help="the password on its first line (0600)")
    broker.add_argument("--prefix", type=prefix, default=None,
                        help=f"topic prefix, as floor.prefix of table.yaml (default {DEFAULT_PREFIX})")
    broker.add_argument("--config", type=Path, default=None, help=config_help)
    watch = floor_sub.add_parser("watch", help="a live pit summary of every table", parents=[common, broker])
    watch.add_argument("--every", type=every, default=2.0,
                       help=f"seconds between two summaries (from {MIN_EVERY}; default 2)")
    watch.add_argument("--for", dest="duration", type=seconds_or_none, default=None,
                       help="stop after this many seconds (0: one summary; default: until SIGTERM or SIGINT, "
                            "then a last summary)")
    audit = floor_sub.add_parser("audit", help="check every table's events for gaps and order; compare anchors "
                                               "with journals", parents=[common, broker])
    audit.add_argument("--for", dest="duration", type=seconds_or_none, default=10.0,
                       help="seconds to listen (default 10)")
    audit.add_argument("--journal", action="append", default=[], metavar="TABLE=PATH",
                       help="compare TABLE's events and anchors with its journal store (repeatable)")
    audit.add_argument("--key", action="append", default=[], metavar="TABLE=FILE",
                       help="TABLE's journal key: check the anchors' keyed seals too (repeatable)")
    audit.add_argument("--session", default=None, metavar="NAME",
                       help="a durable session: the broker keeps what is published between two audits")
    audit.add_argument("--from-start", action="store_true",
                       help="the audit heard every table from its first record: a later first one is a gap")
    from controller.floor.backoffice_tools import add_parsers as add_backoffice

    add_backoffice(floor_sub, common, broker)


def broker_config(args: argparse.Namespace) -> FloorConfig:
    """The broker to listen to: the options, else ``floor:`` of the table configuration. Raises ``ConfigError``."""
    if args.broker is None:
        from controller.game.table import load_table_config

        config = load_table_config(find_table_config(args.config)).floor
        if not config.enabled:
            raise ConfigError(f"{config_source(args)}: floor is not enabled: give --broker HOST")
    else:
        config = FloorConfig(True, args.broker)
    port = args.port if args.port is not None else (TLS_PORT if args.tls else config.port if args.broker is None
                                                    else PLAIN_PORT)
    if not 1 <= port <= 65535:
        raise ConfigError(f"--port {port}: expected 1 to 65535")
    return replace(config, port=port, tls=args.tls or config.tls, ca_file=args.ca_file or config.ca_file,
                   username=args.username or config.username,
                   password_file=args.password_file or config.password_file,
                   prefix=config.prefix if args.prefix is None else args.prefix)


def _writable(text: str, stream: TextIO) -> str:
    """``text`` with every character the encoding of ``stream`` has not as ``?`` (a table id in another script
    on a terminal whose locale cannot show it): the watch never stops on an ``UnicodeEncodeError``. A stream
    without an encoding (a ``StringIO``) takes any text."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    return text.encode(encoding, "replace").decode(encoding)


def config_source(args: argparse.Namespace) -> Path:
    return find_table_config(args.config)


def _pairs(items: list[str], option: str) -> dict[str, Path]:
    """``TABLE=PATH`` items of ``option`` by table; ``ConfigError`` for one that is not, or a table given twice."""
    pairs: dict[str, Path] = {}
    for item in items:
        table, sep, path = item.partition("=")
        if not sep or not table or not path:
            raise ConfigError(f"{option} {item!r}: expected TABLE=PATH")
        if table in pairs:
            raise ConfigError(f"{option} {item!r}: table {table} is given twice")
        pairs[table] = Path(path)
    return pairs


def run(args: argparse.Namespace) -> int:
    """``crisscross floor watch|audit|store|report|serve``; the exit status (module docstring)."""
    if args.floor_command in ("store", "report", "serve"):
        from controller.floor.backoffice_tools import run as backoffice

        return backoffice(args, broker_config)
    with stopping() as stop:  # from the start: a SIGTERM while connecting ends with the summary too
        return _listen(args, stop)


def _listen(args: argparse.Namespace, stop: threading.Event) -> int:
    """``floor watch`` (until ``--for`` or ``stop``: then its last summary, status 0) or ``floor audit`` (it
    listens until ``--for`` or ``stop``, then checks what it heard with SIGINT's usual handler back)."""
    from controller.floor.listen import SUBSCRIBE_WAIT, Listener
    from controller.journal.key import JournalKeyError, load_key

    end = None if args.duration is None else time.monotonic() + args.duration  # the connection's time included
    try:
        config = broker_config(args)
        if args.floor_command == "watch":
            from controller.floor.pit import Pit

            taker = Pit()
            listener = Listener(config, taker.take, on_unreadable=taker.unreadable_topic,
                                on_not_a_table=taker.not_a_table_topic)
        else:
            from controller.floor.audit import Auditor

            journals = _pairs(args.journal, "--journal")
            keys = {table: load_key(path) for table, path in _pairs(args.key, "--key").items()}
            taker = Auditor()
            listener = Listener(config, taker.take, client_id=f"crisscross-audit-{args.session}"
                                if args.session else "", durable=bool(args.session),
                                on_unreadable=taker.unreadable_topic, on_not_a_table=taker.not_a_table_topic)
        listener.open(SUBSCRIBE_WAIT if end is None else max(min(args.duration, SUBSCRIBE_WAIT),
                                                             SUBSCRIBE_AT_LEAST))
    except (ConfigError, JournalKeyError) as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"crisscross: broker {config.broker}:{config.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        if args.floor_command == "watch":
            while True:  # at least one summary: --for 0 is one look, SIGTERM or SIGINT a last one
                listener.pump(args.every if end is None else min(args.every, max(end - time.monotonic(), 0)), stop)
                stopped = stop.is_set()  # read first: the last summary comes after the signal
                print(_writable(taker.render(), sys.stdout) + "\n", flush=True)
                if stopped or (end is not None and time.monotonic() >= end):
                    return 0
        listener.pump(math.inf if end is None else max(end - time.monotonic(), 0), stop)
        with interruptible():
            return _audited(taker, journals, keys, args.from_start)
    finally:
        listener.close()


def _audited(taker: Any, journals: dict[str, Path], keys: dict[str, bytes | None], from_start: bool) -> int:
    """The audit's check of what ``taker`` (``controller.floor.audit.Auditor``) heard, against ``journals``
    (with their ``keys``) by table, printed; 0 nothing wrong, 1 a problem found, 2 a journal that cannot be read."""
    from controller.journal.record import JournalError

    try:
        problems = taker.problems({t: (p, keys.get(t)) for t, p in journals.items()},
                                  from_start=from_start)
    except JournalError as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2
    for table, seen in sorted(taker.tables.items()):
        print(f"{table}: {len(seen.seqs)} records (first {seen.seqs[0] if seen.seqs else '-'}, last "
              f"{seen.seqs[-1] if seen.seqs else '-'}), {seen.repeats} repeats, {len(seen.anchors)} anchors")
    for problem in problems:
        print(problem)
    print(f"{len(taker.tables)} table(s), {len(problems)} problem(s)")
    return 1 if problems else 0
