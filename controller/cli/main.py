"""The ``crisscross`` command line.

- ``crisscross run [--simulate [--manual] [--pace human|S]] [--rounds N] [--seed S] [--journal PATH] [--config PATH] [--port DEVICE=PORT]``
  runs the table controller service (``controller.service.loop``) from ``config/table.yaml``.
- ``crisscross par-sheet JURISDICTION_OR_PAYTABLE_FILE [--format text|markdown|json]`` prints the exact
  return and optimal strategy of a pay table (``controller.analysis``).
- ``crisscross protect [--journal PATH]`` reports players who seem to see a hole card; ``--measure`` measures
  the detector on simulated play (``controller.cli.protect``).
- ``crisscross recall [--last N] [--journal PATH]`` prints the last N rounds of the journal step by step (exit 1,
  under a warning line, when the journal does not verify); ``--alerts`` lists every hole-card alert instead, each
  acknowledged or not (``controller.journal.alert_recall``).
- ``crisscross journal verify PATH [--key FILE]`` checks a journal (store or JSON lines) without changing it
  (``controller.journal.tools.verify``): exit 0 intact, 1 tampered (the first tampered record is named by line
  and seq, with how), 2 a file that cannot be read as a journal (one line on standard error), 3 nothing wrong
  found but not everything checkable (without the key, or a JSON-lines copy): what was not checked is said.
- ``crisscross journal export [--rounds A-B] [--format jsonl] [--output FILE] [--journal PATH]`` writes the
  store's records as JSON lines in their canonical spelling; ``crisscross journal import FILE [--journal PATH]``
  fills a new store from a JSON-lines journal, refusing one that does not verify; ``crisscross journal
  init-key [--file PATH]`` creates the journal key (mode 0600) at table.yaml's ``journal_key``; ``crisscross
  journal add-key --by NAME --reason TEXT`` seals a journal kept without a key with it, and ``crisscross
  journal reanchor --by NAME --reason TEXT`` accepts a journal whose anchor is missing or does not match it
  (with its key when it is sealed with one), each journaled (a record naming who, why and what was found), the service stopped.
- ``crisscross operator add NAME --role dealer|supervisor [--file PATH] [--config PATH]`` adds or replaces a
  user of the control interface (``controller.control.operators``, docs/control.md); the password is asked with
  ``getpass`` on a terminal, else read as the first line of standard input, UTF-8 text. ``operator list`` prints each user
  and role; ``operator remove NAME`` removes one (their next request is refused).
- ``crisscross paytable JURISDICTION`` prints a jurisdiction's pay tables (code or pay-table file) and the exact
  five-card bonus return over all 2,598,960 boards (``controller.analysis.paytable_report``);
  ``crisscross paytable design --target-house-edge EDGE --vary bonus|bet`` searches the pay tables closest to
  a house edge (``controller.analysis.paytable_design``).
- ``crisscross floor watch|audit`` follows every table over the floor's MQTT broker (``controller.floor.tools``,
  docs/floor.md).
- ``crisscross settle [FILE] [--table TABLE_YAML]`` settles one round given as JSON (FILE or standard input) and
  prints the settlement as JSON (``controller.game.settlement.settle_round``); with ``--table`` the seats must be in
  play at that table, the antes and five-card bonus within its limits, and a jurisdiction code is looked up as
  ``run`` does for that table (``jurisdictions/`` beside it when it has one, else ``config/``). Invalid input: exit status 2, one line on
  standard error naming the seat, the field and what is wrong, nothing on standard output.

Exit status: 0 success; 2 invalid input or configuration; 1 a fault stopped the service.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
from collections.abc import Callable
import logging
import re
import time
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from controller.cli import identity, meters, paytable, protect, rating
from controller.cli.journal import JOURNAL_COMMANDS, VERIFY_STATUSES, recall
from controller.cli.operators import operator
from controller.cli.settle import settle
from controller.settings.argtypes import (MOST_COUNT, device_ports, file_path, positive_float, positive_int,
                                         probability, workers)
from controller.settings.files import CONFIG_DIR, ConfigError, find_table_config
from controller.settings.text import path_shown
from controller.simulated.pace import HUMAN_PACE, parse_pace
from controller.analysis.protect_names import BREAK, MEMORY_S, EvidenceKeeping
from controller.game.sessions import GAP

if TYPE_CHECKING:
    from controller.game.table import TableConfig
from controller.simulated.player_spec import parse_spec
from controller.simulated.roaming import roamers


#: When this process began its work (``time.monotonic()``): the start-up time counts from here.
STARTED_AT = time.monotonic()


class _Version(argparse.Action):
    """``--version``: prints ``crisscross VERSION`` (``controller.__version__``, read from the package metadata
    only when asked) on standard output and exits 0, as argparse's ``version`` action does."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, default: object = argparse.SUPPRESS,
                 help: str = "show program's version number and exit") -> None:  # noqa: A002 - argparse's name
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # noqa: D102 - argparse hook
        import controller

        print(f"crisscross {controller.__version__}")
        parser.exit()


def _common() -> argparse.ArgumentParser:
    """The options every command and subcommand takes (docs/commands.md): ``-v``, ``-vv``; the parent of each
    parser of the command line."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                        help="more log output (-v info, -vv debug: raw frames, which carry card values)")
    return common


def _parser() -> argparse.ArgumentParser:
    common = _common()
    parser = argparse.ArgumentParser(prog="crisscross", description="Criss-Cross Poker table controller",
                                     parents=[common])
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)
    config_help = ("table configuration (YAML); default: $CRISSCROSS_CONFIG, else /etc/crisscross/table.yaml, "
                   "else the packaged default")

    run = sub.add_parser("run", help="run the table controller service", parents=[common])
    run.add_argument("--config", type=Path, default=None, help=config_help)
    run.add_argument("--simulate", action="store_true",
                     help="simulate the shoe, bet sensors and panel on pseudo-terminals, with scripted players and dealer")
    run.add_argument("--rounds", type=positive_int, default=None, help="stop after N rounds (default: run until signalled)")
    run.add_argument("--seed", type=int, default=None, help="seed the simulated shoe and players (reproducible runs)")
    run.add_argument("--journal", type=file_path, default=None,
                     help="journal file (overrides table.yaml; --simulate without it keeps its own journal)")
    run.add_argument("--port", action="append", default=[], metavar="DEVICE=PORT",
                     help="override a device's port (shoe, sensors, panel), e.g. shoe=/dev/ttyUSB0; repeatable")
    run.add_argument("--manual", action="store_true",
                     help="with --simulate: a supervisor switches the simulated table to dealing by hand and the "
                          "dealer deals and types the cards (NY 9 NYCRR 5324.39(d)(1); allowed for the simulated "
                          "table whatever table.yaml's manual_dealing says)")
    run.add_argument("--mistakes", type=float, default=0.0, metavar="P",
                     help="with --simulate: probability that a player's decision is random, not optimal (default 0)")
    run.add_argument("--payout-errors", type=float, default=0.0, metavar="P",
                     help="with --simulate: probability that the dealer pays a seat wrong once (short, over, on the "
                          "wrong spot, a losing wager not taken) before correcting it (default 0)")
    run.add_argument("--pace", type=pace_seconds, default=0.0, metavar="human|SECONDS",
                     help="with --simulate: the dealer leaves this long between its presses (human: "
                          f"{HUMAN_PACE:g} s), so a person can follow the table on the screen (default 0)")
    run.add_argument("--player-strategy", action="append", default=[], metavar="SEAT:NAME[:P]",
                     help="with --simulate: the seat plays optimal, never_fold, always_1x, pair_3x, "
                          "across_fold_rule, card or erring:P")
    run.add_argument("--hole-carder", action="append", default=[],
                     metavar="SEAT:CARD[:P][:STYLE][:breaks=N][:moves][:unrated]",
                     help="with --simulate: the seat sees the middle, an across or a down outside card early "
                          "(in a round with probability P, default 1) and uses it in STYLE best (default), pairs "
                          "or rule; breaks=N: sits out 3 rounds after every N "
                          "played; moves: comes back at another seat; unrated: the dealer does not rate it")
    run.add_argument("--protect", action="store_true",
                     help="run the hole-card detector after each round; alerts are journaled (needs the analysis extra)")
    run.add_argument("--protect-break", type=positive_int, default=None, metavar="N",
                     help=f"with --protect: rounds in a row an unrated seat may sit out and keep its evidence "
                          f"(default {BREAK}, at least 3)")
    run.add_argument("--protect-memory-hours", type=positive_int, default=None, metavar="H",
                     help=f"with --protect: hours a rated player's evidence is kept after their last round "
                          f"(default {MEMORY_S // 3600})")
    run.add_argument("--sessions", type=positive_int, default=0, metavar="MEAN",
                     help="with --simulate: players come and go, each playing about MEAN rounds, and the dealer rates "
                          "most of them (POST /sessions)")
    run.add_argument("--rating", action="store_true",
                     help="rate every seat's session after each round: SessionRated journaled, GET /sessions "
                          "(needs the analysis extra)")
    run.add_argument("--quiet", action="store_true", help="do not print round summaries")
    run.add_argument("--metrics-port", type=port_number, default=None, metavar="PORT",
                     help="serve Prometheus metrics at http://127.0.0.1:PORT/metrics (overrides table.yaml)")

    protect.add_parser(sub, common, config_help, positive_int)
    meters.add_parser(sub, common, config_help, positive_int)
    rating.add_parser(sub, common, config_help, positive_int)

    par = sub.add_parser("par-sheet", help="exact return and optimal strategy of a pay table", parents=[common])
    par.add_argument("pay_table", metavar="JURISDICTION_OR_PAYTABLE_FILE",
                     help="a jurisdiction code (ny) or a jurisdiction/pay-table YAML file")
    par.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                     help="text (default), markdown or json")
    par.add_argument("--workers", type=workers, default=None, help="processes (default: one per CPU)")

    paytable.add_parser(sub, common)

    journal = sub.add_parser("journal", help="journal tools", parents=[common])
    journal_sub = journal.add_subparsers(dest="journal_command", required=True)
    verify = journal_sub.add_parser("verify", help="check a journal's hash chain; name the first tampered record",
                                    parents=[common], epilog=VERIFY_STATUSES,
                                    formatter_class=argparse.RawDescriptionHelpFormatter)
    verify.add_argument("path", type=Path, metavar="PATH", help="journal store, or a JSON-lines copy")
    verify.add_argument("--key", type=Path, default=None, help="the journal key file: check the seals too")
    export = journal_sub.add_parser("export", help="the journal's records as JSON lines (canonical spelling)",
                                    parents=[common])
    export.add_argument("--rounds", type=round_range, default=None, metavar="A-B",
                        help="from the first record of round A to the last of round B, or round A alone "
                             "(A or A-B in ASCII digits; default: all); "
                             "refused, nothing written, unless the journal holds every one of them")
    export.add_argument("--format", choices=("jsonl",), default="jsonl",
                        help="JSON lines, one record a line in its canonical spelling (the only format)")
    export.add_argument("--output", type=Path, default=None, help="file to write (default: standard output)")
    imported = journal_sub.add_parser("import", help="fill a new journal store, kept without a key, from a "
                                                     "JSON-lines journal that verifies", parents=[common])
    imported.add_argument("source", type=Path, metavar="FILE", help="JSON-lines journal (an export, or an old journal)")
    init_key = journal_sub.add_parser("init-key", help="create the journal key (mode 0600)", parents=[common])
    init_key.add_argument("--file", type=Path, default=None, help="key file (default: journal_key of table.yaml)")
    add_key = journal_sub.add_parser("add-key", help="seal a journal kept so far without a key with the key, "
                                                     "journaled (the service is stopped)", parents=[common])
    reanchor = journal_sub.add_parser("reanchor", help="after an inquiry, accept a journal whose anchor is missing "
                                                       "or does not match, journaled (the service is "
                                                       "stopped)", parents=[common])
    add_key.add_argument("--key", type=Path, default=None,
                         help="the journal key file to seal the journal with (default: journal_key of table.yaml)")
    reanchor.add_argument("--key", type=Path, default=None,
                          help="the journal key file (default: journal_key of table.yaml); a journal kept without "
                               "a key needs none")
    for tool in (add_key, reanchor):
        tool.add_argument("--by", required=True, help="the supervisor who decided it (journaled)")
        tool.add_argument("--reason", required=True, help="why (journaled)")
    for tool in (export, imported, init_key, add_key, reanchor):
        tool.add_argument("--config", type=Path, default=None, help=config_help)
    for tool in (export, imported, add_key, reanchor):
        tool.add_argument("--journal", type=file_path, default=None, help="journal store (default: the one of --config)")

    operator = sub.add_parser("operator", help="manage the users of the control interface", parents=[common])
    operator_sub = operator.add_subparsers(dest="operator_command", required=True)
    operators_file = argparse.ArgumentParser(add_help=False)
    operators_file.add_argument("--file", type=Path, default=None,
                                help="operators file (default: control.operators of the table configuration)")
    operators_file.add_argument("--config", type=Path, default=None, help=config_help)
    add = operator_sub.add_parser("add", help="add a user or replace their role and password",
                                  parents=[common, operators_file])
    add.add_argument("name", help="user name (letters, digits, . _ -)")
    add.add_argument("--role", required=True, choices=("dealer", "supervisor"), help="what the user may do")
    operator_sub.add_parser("list", help="the users and their roles (never the password hashes)",
                            parents=[common, operators_file])
    remove = operator_sub.add_parser("remove", help="remove a user: their next request is refused",
                                     parents=[common, operators_file])
    remove.add_argument("name", help="user name")

    settle = sub.add_parser("settle", help="settle one round given as JSON (or one per line: --lines) and print "
                                           "the settlement as JSON", parents=[common])
    settle.add_argument("file", nargs="?", type=Path, help="round JSON (default: standard input)")
    settle.add_argument("--lines", action="store_true",
                        help="JSON lines: one round per line in, one settlement per line out with its input's "
                             "\"line\" (a refused line gives {\"line\": N, \"error\": ...} and the exit status 2; "
                             "the others are still settled)")
    settle.add_argument("--table", type=Path, default=None, metavar="TABLE_YAML",
                        help="also check the seats in play and the table limits of this table configuration, "
                             "and read a jurisdiction code from its jurisdictions folder as run does")

    recall = sub.add_parser("recall", help="the last rounds of the journal, step by step (a supervisor's view: "
                                           "it shows face-down cards)", parents=[common])
    recall.add_argument("--last", type=positive_int, default=10, help="how many rounds (default 10)")
    recall.add_argument("--journal", type=file_path, default=None, help="journal file (default: the one of --config)")
    recall.add_argument("--config", type=Path, default=None, help=config_help)
    recall.add_argument("--alerts", action="store_true",
                        help="every hole-card alert of the journal instead: seat, kind of card, evidence, round, "
                             "acknowledged (by whom, when) or not; never a card (it reads the whole journal)")

    from controller.floor.tools import add_parsers as add_floor

    add_floor(sub, common, config_help)
    sim = sub.add_parser("sim", help="the device simulators", parents=[common])
    sim_sub = sim.add_subparsers(dest="sim_command", required=True)
    console = sim_sub.add_parser("console", help="place chips, press buttons, turn the key and inject faults on the "
                                                 "simulators of a running rig (docs/rig.md)", parents=[common])
    console.add_argument("--socket", type=Path, required=True, metavar="PATH",
                         help="the rig's simulator control socket (python -m hil.rig ... --sim-socket PATH)")
    console.add_argument("--command", "-c", dest="command_lines", action="append", default=[], metavar="LINE",
                         help="run this command and exit (repeatable) instead of the interactive console")

    identity.add_parser(sub, common)
    config = sub.add_parser("config", help="the table configuration", parents=[common])
    config_sub = config.add_subparsers(dest="config_command", required=True)
    init = config_sub.add_parser("init", help="write an editable copy of the default configuration into DIR "
                                              "(table.yaml and jurisdictions/)", parents=[common])
    init.add_argument("dir", type=Path, metavar="DIR", help="a folder that does not exist or is empty")
    config_sub.add_parser("unit", help="print the systemd unit of this install (ExecStart at its crisscross), "
                                       "e.g. > /etc/systemd/system/crisscross.service", parents=[common])
    return parser


def port_number(text: str) -> int:
    """argparse type: a TCP port, 0 (any free port) to 65535, else an ``ArgumentTypeError`` naming the text."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535 or not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {text!r}")
    return value


#: The form of ``journal export --rounds``: ``A`` or ``A-B``, in ASCII digits (``round_range``).
ROUND_RANGE = re.compile(r"[0-9]+(-[0-9]+)?")


def round_range(text: str) -> tuple[int, int]:
    """argparse type of ``journal export --rounds``: ``A`` or ``A-B`` (docs/commands.md, "crisscross journal"),
    round numbers in ASCII digits with 1 <= A <= B <= ``MOST_COUNT``, as ``(A, A)`` or ``(A, B)``. Anything else
    (an empty bound as in ``5-``, spaces, underscores, a sign, another script's digits, all of which ``int``
    takes) is an ``ArgumentTypeError`` naming the text and the form expected."""
    if ROUND_RANGE.fullmatch(text) is None:
        raise argparse.ArgumentTypeError(f"expected rounds A or A-B, round numbers in ASCII digits (e.g. 3 or "
                                         f"3-7), got {text!r}")
    first, _, last = text.partition("-")
    low, high = int(first), int(last or first)
    if not 1 <= low <= high <= MOST_COUNT:
        raise argparse.ArgumentTypeError(f"expected rounds A-B with 1 <= A <= B <= {MOST_COUNT:,}, got {text}")
    return low, high


def pace_seconds(text: str) -> float:
    """argparse type of ``--pace``: ``human`` or seconds (``controller.simulated.pace.parse_pace``), else an
    ``ArgumentTypeError`` naming the text."""
    try:
        return parse_pace(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    """The command line, run by ``controller.cli.entry.main`` (which says standard output that cannot be written:
    a reader that went away, ``| head``, ends the output quietly); returns the exit status. Ctrl-C
    (``KeyboardInterrupt``) ends a command with one line on standard error and status 130 (128 + SIGINT, as a
    shell reports it; its worker processes end with it: ``controller.analysis.workers``), also when it lands inside
    compiled code (numba's, which then raises ``SystemError`` from it). ``run`` handles SIGINT itself: it stops
    the table after the event in hand (docs/commands.md)."""
    try:
        return _main(argv)
    except (KeyboardInterrupt, SystemError) as exc:
        if not _interrupted(exc):
            raise
        print("crisscross: interrupted", file=sys.stderr)
        return 130


def _interrupted(exc: BaseException) -> bool:
    """True for a ``KeyboardInterrupt``, or a ``SystemError`` that compiled code raised from one, however many
    ``SystemError`` it went through (numba's: ``... returned a result with an exception set``)."""
    seen = 0
    while isinstance(exc, SystemError) and seen < 20:
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return isinstance(exc, KeyboardInterrupt)


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "paytable":  # the words after the jurisdiction, -v among them, before the log is set
        args = paytable.words(args, _common())
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(getattr(args, "verbose", 0), 2)]
    from controller.service.notify import JournaldFormatter, under_journald

    handler = logging.StreamHandler()
    handler.setFormatter(JournaldFormatter() if under_journald() else  # journald keeps the time itself
                         logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    logging.getLogger("transitions").setLevel(max(level, logging.WARNING))
    if args.command == "settle":
        return settle(args.file, args.table, lines=args.lines)
    if args.command == "paytable":
        return _with_analysis(lambda: paytable.main(args))
    if args.command == "par-sheet":
        return _with_analysis(lambda: _par_sheet(args))
    if args.command == "recall":
        return recall(args)
    if args.command == "meters":
        return meters.main(args)
    if args.command == "protect":
        return _with_analysis(lambda: protect.main(args))
    if args.command == "rating":
        return _with_analysis(lambda: rating.main(args))
    if args.command == "journal":
        return JOURNAL_COMMANDS[args.journal_command](args)
    if args.command == "operator":
        return operator(args)
    if args.command == "identity":
        return identity.main(args)
    if args.command == "config":
        return _config_init(args.dir) if args.config_command == "init" else _config_unit()
    if args.command == "floor":
        from controller.floor.tools import run as floor

        return floor(args)
    if args.command == "sim":
        from drivers.simconsole import run_console

        return run_console(args.socket, args.command_lines)
    return _run(args)


#: The libraries of the ``analysis`` extra (pyproject.toml).
ANALYSIS_LIBRARIES = ("numpy", "tqdm", "threadpoolctl", "numba")


def _with_analysis(command: Callable[[], int]) -> int:
    """Run a command that needs the ``analysis`` extra; without it, exit status 2 and one line saying so."""
    try:
        return command()
    except ModuleNotFoundError as exc:
        if exc.name not in ANALYSIS_LIBRARIES:
            raise
        print(f"crisscross: this command needs the analysis extra ({exc.name} is missing): install the package "
              f"with [analysis], e.g. pip install 'crisscross_controller-VERSION-py3-none-any.whl[analysis]'",
              file=sys.stderr)
        return 2


def _config_init(folder: Path) -> int:
    """``crisscross config init DIR``: copy the default ``table.yaml`` and ``jurisdictions/`` into ``folder`` (which
    must not exist or be empty), for a site to edit and name with ``--config`` or ``$CRISSCROSS_CONFIG``. 0 done,
    2 refused (one line on standard error)."""
    import shutil

    try:
        if not str(folder).strip() or str(folder) == ".":
            raise ConfigError("config init needs the folder to write into, for example /etc/crisscross")
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"{path_shown(folder)}: a file, not a folder; nothing was written")
        if folder.exists() and any(folder.iterdir()):
            raise ConfigError(f"{path_shown(folder)}: a folder that is not empty; nothing was written")
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CONFIG_DIR / "table.yaml", folder / "table.yaml")
        shutil.copytree(CONFIG_DIR / "jurisdictions", folder / "jurisdictions",
                        ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
    except ConfigError as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"crisscross: {path_shown(exc.filename or folder)}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote {folder / 'table.yaml'} and {folder / 'jurisdictions'}/: edit them, then run with "
          f"--config {folder / 'table.yaml'} (or set CRISSCROSS_CONFIG)", file=sys.stderr)
    return 0


#: The packaged systemd unit (config/systemd/ of a checkout) and the command its ExecStart names as shipped.
UNIT_FILE = CONFIG_DIR / "systemd" / "crisscross.service"
UNIT_COMMAND = "/opt/crisscross/bin/crisscross"


def _config_unit() -> int:
    """``crisscross config unit``: print the packaged systemd unit (docs/operations.md, "Installing on a table PC")
    with its ``ExecStart`` naming the ``crisscross`` of this install (beside the running interpreter, as a virtualenv
    has it), so that a unit copied from the wheel starts the service it came with. 0, or 2 when the unit file
    is missing from the install (one line on standard error)."""
    try:
        text = UNIT_FILE.read_text()
    except OSError as exc:
        print(f"crisscross: {UNIT_FILE}: {exc.strerror or exc}: this install has no systemd unit", file=sys.stderr)
        return 2
    command = Path(sys.executable).parent / "crisscross"
    if command.exists():
        text = text.replace(f"ExecStart={UNIT_COMMAND} ", f"ExecStart={command.absolute()} ")
    sys.stdout.write(text)
    return 0


def _par_sheet(args: argparse.Namespace) -> int:
    from controller.analysis import report
    from controller.analysis.parsheet_totals import compute_par_sheet
    from controller.game.paytable import load_jurisdiction

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
        print(f"crisscross: {path_shown(jurisdiction.source)}: {exc}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.close()
    print({"text": report.to_text, "markdown": report.to_markdown, "json": report.to_json}[args.format](sheet))
    return 0


def _journal_folder(path: Path, where: str) -> None:
    """``ConfigError`` when the folder of the journal ``path`` (named ``where``: ``--journal``, or the table
    file's ``journal:``) does not exist: a mistyped path would start a second history of the table, so a new
    journal's folder is created first, by hand."""
    if not path.parent.is_dir():
        raise ConfigError(f"{where} {path_shown(path)}: no folder {path_shown(path.parent)} (a mistyped path would "
                          f"start a second history of the table; create the folder first for a new one)")


def _players(args: argparse.Namespace, config) -> list:
    """The ``PlayerSpec`` of ``--player-strategy`` and ``--hole-carder``; ``ConfigError`` for a bad one."""
    specs = []
    try:
        specs = [parse_spec(text, False) for text in args.player_strategy]
        specs += [parse_spec(text, True) for text in args.hole_carder]
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    seats = [spec.seat for spec in specs]
    if specs and not args.simulate:
        raise ConfigError("--player-strategy and --hole-carder only apply to the simulated players of --simulate")
    for seat in seats:
        if seat not in config.seats or seats.count(seat) > 1:
            raise ConfigError(f"seat {seat}: {'given twice' if seat in config.seats else 'not a seat of the table'} "
                              f"in --player-strategy/--hole-carder (seats: {', '.join(map(str, config.seats))})")
    if args.hole_carder and args.sessions:  # a seat's hole-carder would pass to whoever sits there next
        raise ConfigError("--hole-carder is a player of its own (rated SIM-HC-SEAT, or :unrated), with its own breaks "
                          "and moves: not with --sessions, whose players come and go at every seat")
    try:
        roamers(specs, config.seats)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return specs


def _say_journal_set_aside(config: TableConfig, journal: Path | None, any_simulator: bool) -> None:
    """With a device simulated and no ``--journal``, the run keeps the journal of simulated play
    (``controller.service.opening.journal_for``): say so on standard error, naming table.yaml's ``journal`` and
    ``journal_key`` it does not use, when it names either (the run took them silently)."""
    from controller.game.table import JOURNAL_NAME, state_dir

    if journal is not None or not any_simulator:
        return
    unused = [f"journal {path_shown(config.journal)}"] if config.journal != state_dir() / JOURNAL_NAME else []
    unused += [f"journal_key {path_shown(config.journal_key)}"] if config.journal_key is not None else []
    if unused:
        print(f"crisscross: {path_shown(config.source)}: a device is simulated: this run keeps the journal of "
              f"simulated play, not {' and '.join(unused)} (name a journal with --journal)", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    from controller.journal.record import JournalError
    from controller.cli.parts import SERVICE_PARTS
    from controller.service.assembly import run_service
    from controller.service.simulators import check_sim_urls, is_simulated
    from controller.service.identity import SoftwareIdentityError
    from controller.game.table import JOURNAL_NAME, load_table_config, state_dir

    try:
        config = load_table_config(find_table_config(args.config))
        ports = device_ports(args.port, config.devices)
        if ports and args.simulate:
            raise ConfigError("--port cannot be combined with --simulate (every device is simulated)")
        check_sim_urls(config.devices, ports, config.source)
        any_simulator = args.simulate or "simulator" in {ports.get(n, d.port) for n, d in config.devices.items()}
        if args.journal is not None:
            _journal_folder(args.journal, "--journal")
        elif not any_simulator and config.journal != state_dir() / JOURNAL_NAME:  # ``journal:`` of table.yaml
            _journal_folder(config.journal, f"{path_shown(config.source)}: journal:")
        if args.seed is not None and not any_simulator:
            raise ConfigError("--seed only applies to simulated devices (--simulate, or a port 'simulator')")
        for flag, value in (("--protect-break", args.protect_break), ("--protect-memory-hours",
                                                                      args.protect_memory_hours)):
            if value is not None and not args.protect:
                raise ConfigError(f"{flag} only applies to the hole-card detector of --protect")
        if args.protect_break is not None and args.protect_break < GAP:
            raise ConfigError(f"--protect-break {args.protect_break}: an unrated seat's break must be at least the "
                              f"{GAP} rounds that end its session")
        if args.pace and not args.simulate:
            raise ConfigError("--pace only applies to the simulated dealer of --simulate")
        for flag, value, who in (("--mistakes", args.mistakes, "players"), ("--payout-errors", args.payout_errors,
                                                                             "dealer")):
            if value and not args.simulate:
                raise ConfigError(f"{flag} only applies to the simulated {who} of --simulate")
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{flag} {value}: expected a probability from 0 to 1")
        if args.sessions and not args.simulate:
            raise ConfigError("--sessions only applies to the simulated players of --simulate")
        if args.manual and not args.simulate:
            raise ConfigError("--manual only applies to the simulated table of --simulate (at a table, a supervisor "
                              "switches with the panel's key or the control interface)")
        if args.manual:
            config = dataclasses.replace(config, manual_dealing=True)
        players = _players(args, config)
        _say_journal_set_aside(config, args.journal, args.simulate or any(
            is_simulated(ports.get(n, d.port)) for n, d in config.devices.items()))  # ``journal_for``'s test
        # before anything is opened: a refused start leaves no journal behind
        for flag, wanted in (("--simulate", args.simulate), ("--protect", args.protect), ("--rating", args.rating)):
            if wanted and importlib.util.find_spec("numpy") is None:
                raise ConfigError(f"{flag} needs the analysis extra (numpy is missing): install the package with "
                                  "[analysis], e.g. pip install 'crisscross_controller-VERSION-py3-none-any.whl"
                                  "[analysis]'")
        return run_service(config, simulate=args.simulate, rounds=args.rounds, seed=args.seed,
                           out=getattr(sys.stdout, "stream", sys.stdout),  # its errors are run's own
                           journal_path=args.journal, ports=ports, quiet=args.quiet, mistakes=args.mistakes,
                           metrics_port=args.metrics_port, started_at=STARTED_AT, payout_errors=args.payout_errors,
                           players=players, manual=args.manual, rating=args.rating,
                           protect=args.protect and EvidenceKeeping(
                               args.protect_break or BREAK, (args.protect_memory_hours or MEMORY_S // 3600) * 3600),
                           sessions=args.sessions, parts=SERVICE_PARTS, pace=args.pace)
    except (ConfigError, JournalError, SoftwareIdentityError) as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the journal's folder or file, or the control interface's port, cannot be opened
        where = f"{path_shown(exc.filename)}: " if exc.filename else ""
        print(f"crisscross: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
