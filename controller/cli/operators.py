"""``crisscross operator add|list|remove``: the users of the control interface (``controller.control.operators``,
docs/control.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO

from controller.settings.files import CONFIG_DIR, ConfigError, find_table_config
from controller.settings.text import path_shown


#: The folders of the software's own files (the packages, the shipped configuration): no operators file there.
SOFTWARE_FOLDERS: tuple[Path, ...] = (CONFIG_DIR.resolve(), Path(__file__).resolve().parents[1],
                                      Path(__file__).resolve().parents[2] / "drivers")


def _operators_path(args: argparse.Namespace) -> Path:
    """The operators file meant: ``--file``, whose folder must exist (a mistyped path would start a second
    file nobody reads), else ``control.operators`` of ``--config``; to be changed, in none of
    ``SOFTWARE_FOLDERS`` (followed through links). Raises ``ConfigError``."""
    from controller.game.table import load_table_config

    if args.file is not None:
        if not args.file.parent.is_dir():
            raise ConfigError(f"--file {path_shown(args.file)}: no folder {path_shown(args.file.parent)} (create it "
                              f"first for a new file)")
        path, named = args.file, f"--file {path_shown(args.file)}"
    else:
        config = load_table_config(find_table_config(args.config))
        if config.source.parent.resolve() == CONFIG_DIR.resolve():
            raise ConfigError(f"{path_shown(config.source)} is the default configuration shipped with the software: "
                              f"write a table's own with `crisscross config init DIR` and name it with --config (or "
                              f"$CRISSCROSS_CONFIG)")
        path = config.control.operators
        named = f"{path_shown(config.source)}: control.operators {path_shown(path)}"
    folder = path.parent.resolve()
    if args.operator_command != "list" and any(folder.is_relative_to(mine) for mine in SOFTWARE_FOLDERS):
        raise ConfigError(f"{named}: a folder of the software's own files ({path_shown(folder)}): a file written "
                          f"there is not the software's and stops its start (`crisscross identity`); keep the "
                          f"operators file beside the table's own configuration (`crisscross config init DIR`)")
    return path


def operator(args: argparse.Namespace) -> int:
    """``crisscross operator add|list|remove``: 0 done, 2 a refused name, role, password, file or
    configuration, or ``list`` or ``remove`` of a file that does not exist (one line on standard error, naming
    the file). No lock file is left beside the operators file, whatever the outcome
    (``controller.control.operators.editing``)."""
    import getpass

    from controller.control.operators import (MAX_PASSWORD, add_operator, load_operators, no_file,
                                              remove_operator)

    path: Path | str = args.file or args.config
    try:
        path = _operators_path(args)
        if args.operator_command == "list":
            if not path.exists():  # the service takes no file for no users; a list of it would hide a wrong path
                raise no_file(path)
            operators = load_operators(path)
            for operator in sorted(operators.values(), key=lambda o: o.name):
                print(f"{operator.name}\t{operator.role}")
            print(f"{len(operators)} operator(s) in {path_shown(path)}", file=sys.stderr)
            return 0
        if args.operator_command == "remove":
            remove_operator(path, args.name)
            print(f"removed {args.name} from {path_shown(path)}", file=sys.stderr)
            return 0
        if sys.stdin.isatty():
            try:
                password = getpass.getpass(f"password for {args.name}: ")
                if getpass.getpass("again: ") != password:
                    raise ValueError("the two passwords differ")
            except UnicodeDecodeError as exc:
                raise _not_utf8(exc.object, exc.start, "as typed") from None
        else:
            password = _password_line(sys.stdin.buffer, MAX_PASSWORD)
        new = add_operator(path, args.name, args.role, password)
    except (ConfigError, ValueError) as exc:
        print(f"crisscross: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"crisscross: {path_shown(exc.filename or path)}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"{'added' if new else 'updated'} {args.name} ({args.role}) in {path_shown(path)}", file=sys.stderr)
    return 0


def _password_line(stream: IO[bytes], most: int) -> str:
    """The first line of ``stream`` (a standard input that is not a terminal, as bytes), its line end taken off, as
    UTF-8 text (a sign-in carries the password in UTF-8 JSON, whatever the locale): read no further than a
    password of more than ``most`` code points, 4 bytes each at most in UTF-8 (RFC 3629), and a line end of two
    (from /dev/zero, say: no line end). A line that goes on past them is refused whole as too long
    (``TOO_LONG``), never cut and taken: its NFC form, which the length rules count (``password_length``), may
    be within ``most`` characters, but no sign-in's body carries it. Raises ``ValueError`` for that, and naming
    the first byte that is not UTF-8 and its place, e.g. "the password is not UTF-8 text: byte 0xff at byte 9 of
    standard input"."""
    from controller.control.operators import TOO_LONG, password_length

    bound = 4 * (most + 1) + 2
    line = stream.readline(bound)
    if len(line) == bound and not line.endswith(b"\n") and stream.readline(1):
        raise ValueError(TOO_LONG)
    raw = line.rstrip(b"\r\n")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = raw[:exc.start].decode("utf-8")
        if password_length(head) > most:  # too long before its first byte that is not UTF-8: add_operator says so
            return head
        raise _not_utf8(raw, exc.start, "of standard input") from None


def _not_utf8(raw: bytes, start: int, where: str) -> ValueError:
    """The error of a password whose byte ``start`` of ``raw`` is the first that is not UTF-8."""
    return ValueError(f"the password is not UTF-8 text: byte 0x{raw[start]:02x} at byte {start + 1} {where}")
