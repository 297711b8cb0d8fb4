"""``crisscross journal verify|export|import|init-key|add-key|reanchor`` and ``crisscross recall``: the journal
tools of the command line (``controller.journal.tools``, ``controller.journal.recall``; docs/journal.md).

Exit status: 0 done; 1 tampered or not verifying; 2 refused (one line on standard error); 3 (verify) nothing
wrong found but not everything checkable.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any
from pathlib import Path

from controller.settings.files import ConfigError, find_table_config
from controller.settings.text import path_shown


def recall(args: argparse.Namespace) -> int:
    """``crisscross recall [--last N] [--alerts]``: 0 shown, 1 shown under a warning (the journal does not
    verify: also a JSON-lines copy whose last line is cut short, ``truncated``, or one with a line after its first
    that is not a record, ``edited``: its records before that line are shown), 2 a journal or configuration that
    cannot be read (one line on standard error). The rounds are read twice, one at a time
    (``controller.journal.reader.LastRounds``): first each is read as it will be shown, so that a journal
    that cannot be read is refused before anything is printed, then each is printed as it is read again, so that
    what is held is one round whatever ``--last`` and the journal's length. docs/commands.md, "crisscross
    recall"."""
    from controller.journal.alert_recall import alerts_of, format_alerts
    from controller.journal.reader import (
        LastRounds,
        existing_journal,
        iter_records,
    )
    from controller.journal.record import JournalError
    from controller.journal.recall import recall_round
    from controller.game.table import load_table_config

    path = config = None
    try:
        config = load_table_config(find_table_config(args.config))
        path = existing_journal(Path(args.journal or config.journal),
                                _simulated_hint(config) if args.journal is None else "")
        last, rounds = LastRounds(path, args.last), 0
        for number, records in [] if args.alerts else last:
            recall_round(number, records)  # read as it will be shown, and let go
            rounds += 1
        alerts = format_alerts(alerts_of(iter_records(path, up_to_damage=True))) if args.alerts else ""
        # a JSON-lines copy whose last line was cut short, or with a line after its first that is not a record:
        # ``verify`` names it (truncated, edited), and the records before it are shown under that warning, as
        # every journal that does not verify is
        problem = journal_problem(path, config, command="recall")
    except (OSError, ConfigError, JournalError) as exc:
        print(f"crisscross recall: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a record not as its type is written (``rounds_from_records``)
        return unreadable("recall", path, exc, config)
    if problem:  # still shown (a dispute may need it), but marked on every copy and in the exit status
        warn_unverified("recall", path, problem, "what follows may have been altered")
    if alerts or not rounds:
        print(alerts or f"no rounds in {path_shown(path)}")
        return 1 if problem else 0
    try:
        for number, records in last:
            print(recall_round(number, records))
    except (OSError, JournalError, ValueError) as exc:  # the journal changed since its first reading
        print(f"crisscross recall: {exc}", file=sys.stderr)
        return 2
    return 1 if problem else 0


def journal_problem(path: Path, config: Any = None, *, command: str | None = None, mark_output: bool = True) -> Any:
    """What ``crisscross journal verify`` finds wrong with the journal at ``path`` (``controller.journal.tools.verify``:
    the records' spelling and hash chain, the anchor, records appended unsealed, a key stripped; with the journal
    key of ``config``, the table's ``TableConfig`` when the command read it, every seal and checkpoint too), as the
    first tampering found (``Tamper``), or None when none is found. What cannot be checked (without the key, a
    JSON-lines copy) is ``verify``'s to say, not a tampering; but a store sealed with a key read without it (no
    ``--config`` naming the table's key) could have been re-chained by anyone: with ``command``, ``crisscross
    COMMAND`` says so in a NOTE line on standard error, and on standard output too with ``mark_output``, so that
    every copy of what it shows carries it. Raises ``JournalError`` for a journal that cannot be read, a key file
    that cannot be used (a key given is never left out) or a journal sealed with another key."""
    from controller.journal.reader import is_store, store_key_id
    from controller.journal.tools import verify
    from controller.service.opening import key_for

    key = key_for(config) if config is not None else None
    verdict = verify(path, key)
    if command is not None and verdict.tamper is None and key is None and is_store(path):
        key_id = store_key_id(path)
        if key_id is not None:
            note = (f"NOTE: {path_shown(path)} is sealed with journal key {key_id}, not given here: its seals were "
                    f"not checked, and a copy edited and re-chained without the key would look the same (give "
                    f"--config with the table's journal_key, or run crisscross journal verify --key)")
            print(f"crisscross {command}: {note}", file=sys.stderr)
            if mark_output:
                print(note)
    return verdict.tamper


def warn_unverified(command: str, path: Path, problem: str, consequence: str) -> None:
    """Say that the journal at ``path`` does not verify (``problem``, from ``journal_problem``) on standard error and
    on standard output, before what ``crisscross COMMAND`` still shows of it: every copy of the output is marked."""
    warning = f"WARNING: {path_shown(path)} does not verify: {problem}; {consequence}"
    print(f"crisscross {command}: {warning} (run crisscross journal verify)", file=sys.stderr)
    print(warning)


def unreadable(command: str, path: Path | None, exc: Exception, config: Any = None) -> int:
    """``crisscross COMMAND`` could not read the journal at ``path`` (``exc``: a record not of its type's shape,
    a file that is not a journal): say why in one line on standard error, after the warning that the journal
    does not verify when it does not (the likely cause: an edit), so that the refusal never comes without it.
    Returns the exit status, 2."""
    from controller.journal.record import JournalError

    try:
        problem = journal_problem(path, config) if path is not None and path.is_file() else None
    except (OSError, JournalError, ValueError):  # the verify cannot read it either: the one line says why
        problem = None
    if problem:
        warn_unverified(command, path, problem, "its records cannot be read")
    print(f"crisscross {command}: {exc}", file=sys.stderr)
    return 2


def _simulated_hint(config) -> str:
    """Where simulated play went, for a reader who looked for it in the table's journal ("" when none)."""
    from controller.service.opening import journal_for

    simulated = journal_for(config, True, None)
    return f" (simulated play is in {simulated}: --journal {simulated})" if simulated.exists() else ""


def _journal_verify(args: argparse.Namespace) -> int:
    """``crisscross journal verify PATH [--key FILE]``: 0 intact, 1 tampered, 2 unreadable, 3 nothing found but
    not everything checkable (``controller.journal.tools.verify``). Reads the files only; never writes them."""
    from controller.journal.record import JournalError
    from controller.journal.key import JournalKeyError, load_key
    from controller.journal.tools import verify

    path = args.path
    try:
        verdict = verify(path, load_key(args.key) if args.key else None)
    except (JournalError, JournalKeyError) as exc:
        return _refused(exc, path)
    if verdict.tamper is not None:
        print(f"{path_shown(path)}: tampered: {verdict.tamper}")
        return 1
    if verdict.unchecked:
        print(not_checkable(path, verdict))
        return 3
    print(f"{path_shown(path)}: intact, {verdict.records} records")
    return 0


def not_checkable(path: object, verdict: Any) -> str:
    """What ``journal verify`` says of the journal at ``path`` when its ``verdict`` (``controller.journal.tools.
    Verdict``) found nothing wrong but not everything could be checked (its exit status 3): the records counted and
    what could not be seen (``verdict.unchecked``), never "intact". ``journal import`` says it too."""
    return (f"{path_shown(path)}: {verdict.records} records, chain unbroken; NOT CHECKABLE: "
            f"{'; '.join(verdict.unchecked)}")


#: ``journal verify``'s exit statuses, its help's epilog (docs/commands.md, "crisscross journal"; ``_journal_verify``).
VERIFY_STATUSES = """exit status:
  0  intact (only with --key, on the store)
  1  tampered: the first tampered record named by line and seq, with how (edited,
     removed, inserted, reordered, respelled, truncated, appended, forged)
  2  the file cannot be read as a journal (empty, neither a store nor JSON
     lines, or its first line not a record; a later line that is not a record
     is tampering, 1), or --key is
     not the key it was sealed with (one line on standard error: a wrong key
     proves nothing either way)
  3  nothing wrong found but not everything could be checked (no key, or a
     JSON-lines copy): what could not be seen is said, never called intact"""


def _refused(exc: Exception, where: object) -> int:
    """Say why a journal tool refused in one line on standard error (an ``OSError`` with its file, else
    ``where``); return exit status 2. Standard output that cannot be written is never one of these
    (``controller.cli.entry.StandardOutputError``)."""
    if isinstance(exc, OSError):
        print(f"crisscross: {path_shown(exc.filename or where)}: {exc.strerror or exc}", file=sys.stderr)
    else:
        print(f"crisscross: {exc}", file=sys.stderr)
    return 2


def _journal_path(args: argparse.Namespace) -> Path:
    from controller.game.table import load_table_config

    return Path(args.journal or load_table_config(find_table_config(args.config)).journal)


def _journal_export(args: argparse.Namespace) -> int:
    """``crisscross journal export``: 0 written, 2 a journal that cannot be read, ``--rounds`` it does not hold
    every one of or an ``--output`` that exists (export never writes over a file), nothing written (one line on
    standard error). A round of the copy that is not ended (no
    ``RoundClosed`` or ``RoundVoided``: in play as the store was read) is still written, as far as it went, and
    named on standard error (docs/commands.md, "crisscross journal")."""
    from controller.journal.record import JournalError
    from controller.journal.tools import export, not_ended_text

    try:
        path = _journal_path(args)
        if args.output is None:
            exported = export(path, sys.stdout, rounds=args.rounds)
        else:
            try:
                descriptor = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # it holds every card
            except FileExistsError as exc:  # a file, a folder, a link: whatever it is, it is kept
                raise ConfigError(f"{path_shown(args.output)}: {exc.strerror}: export never writes over a file (name "
                                  f"another with --output)") from None
            except FileNotFoundError:
                raise ConfigError(f"{path_shown(args.output)}: no folder {path_shown(args.output.parent)}") from None
            try:
                with open(descriptor, "w", encoding="ascii") as out:
                    exported = export(path, out, rounds=args.rounds)
            except BaseException:
                os.unlink(args.output)  # a refused export leaves no partial copy behind
                raise
    except (ConfigError, JournalError, OSError) as exc:
        return _refused(exc, args.output)
    if exported.not_ended:
        print(f"crisscross: {not_ended_text(path, exported.not_ended)}", file=sys.stderr)
    print(f"exported {exported.records} records of {path_shown(path)}", file=sys.stderr)
    return 0


def _journal_import(args: argparse.Namespace) -> int:
    """``crisscross journal import FILE``: 0 imported (never sealed: ``import_jsonl``), with what ``journal
    verify`` could not check of the source on standard error as it says it (``not_checkable``: a JSON-lines copy
    cut after a record's line ends there to its chain) and, with a key in table.yaml, how a supervisor seals it;
    1 a source that does not verify, 2 anything else refused (one line on standard error)."""
    from controller.journal.record import JournalError
    from controller.journal.tools import import_jsonl, verify
    from controller.service.opening import key_for
    from controller.game.table import load_table_config

    try:
        config = load_table_config(find_table_config(args.config))
        destination = Path(args.journal or config.journal)
        verdict = verify(args.source)
        if verdict.tamper is not None:
            print(f"crisscross: {path_shown(args.source)}: does not verify: {verdict.tamper}; not imported",
                  file=sys.stderr)
            return 1
        keyed = key_for(config) is not None
        count = import_jsonl(args.source, destination)
    except (ConfigError, JournalError, OSError) as exc:
        return _refused(exc, args.source)
    print(f"imported {count} records of {path_shown(args.source)} into {path_shown(destination)}", file=sys.stderr)
    if verdict.unchecked:  # a copy cut at a record boundary is whole to its chain: verify's exit 3
        print(f"crisscross: {not_checkable(args.source, verdict)}", file=sys.stderr)
    if keyed:
        print(f"crisscross: {path_shown(destination)}: kept without a key: a JSON-lines copy carries no seal, so only "
              f"its chain was checked; a supervisor who vouches for its records seals them with `crisscross journal "
              f"add-key --by NAME --reason TEXT` (journaled), before the table starts on it", file=sys.stderr)
    return 0


def _journal_admit(args: argparse.Namespace) -> int:
    """``crisscross journal add-key`` and ``crisscross journal reanchor`` (``controller.journal.tools.admit``):
    0 done and journaled, 2 refused (one line on standard error: nothing to do, the service running, a journal
    that does not open for another reason, no key)."""
    from controller.journal.record import JournalError
    from controller.journal.key import JournalKeyError, load_key
    from controller.journal.tools import admit
    from controller.game.table import load_table_config
    from controller.service.opening import journal_for
    from controller.service.significance import Significance

    try:
        config = load_table_config(find_table_config(args.config))
        path = Path(args.journal or config.journal)
        key_file = args.key or config.journal_key
        what = "key" if args.journal_command == "add-key" else "anchor"
        if key_file is None and what == "key":
            raise ConfigError(f"{args.config or 'table.yaml'}: no journal_key: give the key with --key")
        if what == "key" and path.resolve() == journal_for(config, True, None).resolve():
            raise ConfigError(f"{path_shown(path)}: the journal of simulated play is never sealed with a key (every "
                              f"simulated run would be refused it): nothing introduced")
        record = admit(path, None if key_file is None else load_key(key_file), what, by=args.by,
                       reason=args.reason, derive=Significance(config.table_id))
    except (ConfigError, JournalError, JournalKeyError, OSError) as exc:
        return _refused(exc, args.journal)
    print(f"{path_shown(path)}: {record['type']} journaled as record {record['seq']} ({record['data']['found']})",
          file=sys.stderr)
    return 0


def _journal_init_key(args: argparse.Namespace) -> int:
    """``crisscross journal init-key``: 0 created, 2 refused (exists, no path configured, not writable)."""
    from controller.journal.key import JournalKeyError, init_key
    from controller.game.table import load_table_config

    try:
        config_path = find_table_config(args.config)
        path = args.file or load_table_config(config_path).journal_key
        if path is None:
            raise ConfigError(f"{path_shown(config_path)}: no journal_key: give its path there (journal_key: "
                              f"journal.key) or with --file")
        init_key(path)
    except (ConfigError, JournalKeyError, OSError) as exc:
        return _refused(exc, args.file)
    print(f"created the journal key {path_shown(path)} (mode 0600); keep a copy apart from the journal",
          file=sys.stderr)
    return 0


#: ``crisscross journal SUBCOMMAND``: the function of each subcommand (each returns the exit status).
JOURNAL_COMMANDS = {"verify": _journal_verify, "export": _journal_export, "import": _journal_import,
                    "init-key": _journal_init_key, "add-key": _journal_admit, "reanchor": _journal_admit}
