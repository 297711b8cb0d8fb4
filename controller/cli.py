"""The ``crisscross`` command line.

- ``crisscross run [--simulate] [--rounds N] [--seed S] [--journal PATH] [--config PATH] [--port DEVICE=PORT]``
  runs the table controller service (``controller.service``) from ``config/table.yaml``.
- ``crisscross par-sheet JURISDICTION_OR_PAYTABLE_FILE [--format text|markdown|json]`` prints the exact
  return and optimal strategy of a pay table (``controller.analysis``).
- ``crisscross operator add NAME --role dealer|supervisor [--file PATH] [--config PATH]`` adds or replaces a
  user of the control interface (``controller.operators``, docs/control.md); the password is asked with
  ``getpass`` on a terminal, else read as the first line of standard input.
- ``crisscross settle [FILE]`` settles one round given as JSON (FILE or standard input) and prints the
  settlement as JSON (``controller.settlement.settle_round``). Invalid input: exit status 2, one line on
  standard error naming the seat, the field and what is wrong, nothing on standard output.

Exit status: 0 success; 2 invalid input or configuration; 1 a fault stopped the service.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from pathlib import Path

from controller.config import CONFIG_DIR, ConfigError


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                        help="more log output (-v info, -vv debug: raw frames, which carry card values)")
    parser = argparse.ArgumentParser(prog="crisscross", description="Criss-Cross Poker table controller",
                                     parents=[common])
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the table controller service", parents=[common])
    run.add_argument("--config", type=Path, default=CONFIG_DIR / "table.yaml", help="table configuration (YAML)")
    run.add_argument("--simulate", action="store_true",
                     help="simulate the shoe, bet sensors and panel on pseudo-terminals, with scripted players and dealer")
    run.add_argument("--rounds", type=positive_int, default=None, help="stop after N rounds (default: run until signalled)")
    run.add_argument("--seed", type=int, default=None, help="seed the simulated shoe and players (reproducible runs)")
    run.add_argument("--journal", type=Path, default=None, help="journal file (overrides table.yaml)")
    run.add_argument("--port", action="append", default=[], metavar="DEVICE=PORT",
                     help="override a device's port (shoe, sensors, panel), e.g. shoe=/dev/ttyUSB0; repeatable")
    run.add_argument("--mistakes", type=float, default=0.0, metavar="P",
                     help="with --simulate: probability that a player's decision is random, not optimal (default 0)")
    run.add_argument("--quiet", action="store_true", help="do not print round summaries")

    par = sub.add_parser("par-sheet", help="exact return and optimal strategy of a pay table", parents=[common])
    par.add_argument("pay_table", metavar="JURISDICTION_OR_PAYTABLE_FILE",
                     help="a jurisdiction code (ny) or a jurisdiction/pay-table YAML file")
    par.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    par.add_argument("--workers", type=positive_int, default=None, help="processes (default: one per CPU)")

    operator = sub.add_parser("operator", help="manage the users of the control interface", parents=[common])
    operator_sub = operator.add_subparsers(dest="operator_command", required=True)
    add = operator_sub.add_parser("add", help="add a user or replace their role and password", parents=[common])
    add.add_argument("name", help="user name (letters, digits, . _ -)")
    add.add_argument("--role", required=True, choices=("dealer", "supervisor"))
    add.add_argument("--file", type=Path, default=None,
                     help="operators file (default: control.operators of the table configuration)")
    add.add_argument("--config", type=Path, default=CONFIG_DIR / "table.yaml", help="table configuration (YAML)")

    settle = sub.add_parser("settle", help="settle one round given as JSON and print the settlement as JSON",
                            parents=[common])
    settle.add_argument("file", nargs="?", type=Path, help="round JSON (default: standard input)")
    return parser


def positive_int(text: str) -> int:
    """argparse type: a positive integer, else an ``ArgumentTypeError`` naming the text."""
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``crisscross``; returns the exit status."""
    args = _parser().parse_args(argv)
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(getattr(args, "verbose", 0), 2)]
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("transitions").setLevel(max(level, logging.WARNING))
    if args.command == "settle":
        return _settle(args.file)
    if args.command == "par-sheet":
        return _par_sheet(args)
    if args.command == "operator":
        return _operator_add(args)
    return _run(args)


def _par_sheet(args: argparse.Namespace) -> int:
    from controller.analysis import report
    from controller.analysis.parsheet import compute_par_sheet
    from controller.paytable import load_jurisdiction

    try:
        jurisdiction = load_jurisdiction(args.pay_table)
    except ConfigError as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        size = shutil.get_terminal_size((80, 24))  # a terminal may report 0 columns or 0 lines
        bar = tqdm(total=169, unit="hand", desc="two-card hands", file=sys.stderr, ncols=min(size.columns or 80, 100),
                   nrows=size.lines or 24)
    try:
        sheet = compute_par_sheet(jurisdiction, progress=(lambda done, total: bar.update(1)) if bar else None,
                                  workers=args.workers)
    except ValueError as exc:
        print(f"crisscross: {jurisdiction.source}: {exc}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.close()
    print({"text": report.to_text, "markdown": report.to_markdown, "json": report.to_json}[args.format](sheet))
    return 0


def _settle(path: Path | None) -> int:
    from controller.settlement import SettlementInputError, settle_round

    source = str(path) if path else "<stdin>"
    try:
        text = path.read_text(encoding="utf-8") if path else sys.stdin.read()
    except OSError as exc:
        print(f"{source}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        print(f"{source}: line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}", file=sys.stderr)
        return 2
    except (ValueError, RecursionError) as exc:  # a repeated key; thousands of digits; nesting too deep
        print(f"{source}: invalid JSON: {str(exc)[:100] or type(exc).__name__}", file=sys.stderr)
        return 2
    try:
        result = settle_round(data)
    except SettlementInputError as exc:
        print(f"{source}: {exc}", file=sys.stderr)
        return 2
    try:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (``| head``): nothing more to say
        sys.stdout = None  # type: ignore[assignment]  # no flush of a dead pipe at exit
    return 0


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(f"key {repeated[0]!r} repeated in an object")
    return dict(pairs)


def _operator_add(args: argparse.Namespace) -> int:
    """``crisscross operator add``: 0 done, 2 a refused name, role, password, file or configuration."""
    import getpass

    from controller.operators import add_operator
    from controller.table import load_table_config

    try:
        path = args.file or load_table_config(args.config).control.operators
        if sys.stdin.isatty():
            password = getpass.getpass(f"password for {args.name}: ")
            if getpass.getpass("again: ") != password:
                raise ValueError("the two passwords differ")
        else:
            password = sys.stdin.readline().rstrip("\r\n")
        new = add_operator(path, args.name, args.role, password)
    except (ConfigError, ValueError) as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"crisscross: {exc.filename or path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"{'added' if new else 'updated'} {args.name} ({args.role}) in {path}", file=sys.stderr)
    return 0


def _run(args: argparse.Namespace) -> int:
    from controller.journal import JournalError
    from controller.service import run_service
    from controller.table import load_table_config

    try:
        config = load_table_config(args.config)
        ports = {}
        for item in args.port:
            device, sep, port = item.partition("=")
            if not sep or device not in config.devices or not port:
                raise ConfigError(f"--port {item!r}: expected DEVICE=PORT with DEVICE one of {', '.join(config.devices)}")
            ports[device] = port
        if ports and args.simulate:
            raise ConfigError("--port cannot be combined with --simulate (every device is simulated)")
        if not 0.0 <= args.mistakes <= 1.0:
            raise ConfigError(f"--mistakes {args.mistakes}: expected a probability from 0 to 1")
        return run_service(config, simulate=args.simulate, rounds=args.rounds, seed=args.seed,
                           journal_path=args.journal, ports=ports, quiet=args.quiet, mistakes=args.mistakes)
    except (ConfigError, JournalError) as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the journal's folder or file cannot be created or opened
        print(f"crisscross: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
