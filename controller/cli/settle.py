"""``crisscross settle [FILE] [--table TABLE_YAML] [--lines]``: settle rounds given as JSON and print the
settlements as JSON (``controller.game.settlement.settle_round``; the rules: NY 9 NYCRR 5324.39(e)).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from controller.settings.files import CONFIG_DIR, ConfigError
from controller.settings.text import path_shown

#: Longest input of one round, in bytes (a file or standard input; a line with ``--lines``): a six-seat round's
#: JSON is about 2,000. Longer is refused unread, so that no input (``/dev/zero``, ``yes``) fills the memory.
MAX_ROUND_BYTES = 1 << 20
#: Longest line ``--lines`` reads to its end, in bytes: a line refused as longer than ``MAX_ROUND_BYTES`` is read
#: on (and dropped) up to this many bytes to find its end, so that the lines after it are settled; a line whose
#: end does not come within them (``/dev/zero``, ``yes | tr -d '\n'``) ends the input (``InputEnded``).
MAX_LINE_BYTES = 64 << 20


class InputEnded(ValueError):
    """``--lines``: a refused line's end was not within ``MAX_LINE_BYTES``; the input is read no further (the
    message names the source and the line)."""


def settle(path: Path | None, table_path: Path | None = None, *, lines: bool = False) -> int:
    """``crisscross settle [FILE] [--table T] [--lines]``: one round as JSON in, its settlement as JSON out (exit
    2 and one line naming the field when refused); with ``lines``, one round per line (a checker's batch: one
    process for a whole journal), one compact settlement with ``"line": N`` or ``{"line": N, "error": ...}`` per
    line that is not blank. Each jurisdiction a command's rounds name is read once by that command (a file
    changed since is read by the next command); a file that cannot be loaded refuses every round naming it."""
    from controller.game.table import jurisdictions_home, load_table_config

    table = None
    config_dir = CONFIG_DIR
    if table_path is not None:
        try:
            table = load_table_config(table_path)
        except ConfigError as exc:
            print(f"crisscross: {exc}", file=sys.stderr)
            return 2
        config_dir = jurisdictions_home(table.source)  # a code is the table's, as ``crisscross run`` reads it

    if sys.stdout is None:  # started with its standard output closed (``>&-``): nowhere to write
        print("crisscross: settle: standard output is closed: nowhere to write the settlements", file=sys.stderr)
        return 2
    source = path_shown(path) if path else "<stdin>"
    try:
        stream = path.open("rb") if path else sys.stdin.buffer
    except OSError as exc:
        print(f"{source}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        return _settle_stream(stream, source, table, config_dir, lines)
    except OSError as exc:
        print(f"{source}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        if path:
            stream.close()


def _settle_stream(stream: IO[bytes], source: str, table: Any, config_dir: Path, lines: bool) -> int:
    """``settle`` of what ``stream`` holds (named ``source`` in messages). Raises ``OSError`` when it cannot be
    read."""
    from controller.game.settlement import SettlementInputError, settle_round

    jurisdictions: dict[str, Any] = {}  # read once per command: a file changed since is read by the next one

    def settled(round_text: str, where: str) -> dict[str, Any]:
        """The settlement of one round's JSON; raises ``ValueError`` with ``where`` and what is wrong."""
        try:
            data = read_round(round_text)
        except json.JSONDecodeError as exc:
            place = where if lines else f"{source}: line {exc.lineno}"
            raise ValueError(f"{place}, column {exc.colno}: invalid JSON: {exc.msg}") from None
        except (ValueError, RecursionError) as exc:  # a repeated key; thousands of digits; nesting too deep
            raise ValueError(f"{where}: invalid JSON: {str(exc)[:100] or type(exc).__name__}") from None
        try:
            return settle_round(data, config_dir, table=table, jurisdictions=jurisdictions)
        except SettlementInputError as exc:
            raise ValueError(f"{where}: {exc}") from None

    status = 0
    if lines:
        try:
            for number, line in _lines(stream, source):
                if isinstance(line, str) and (not line or line.isspace()):  # blank: no round
                    continue
                try:
                    if isinstance(line, ValueError):
                        raise line
                    answer: dict[str, Any] = {"line": number, **settled(line, f"{source}: line {number}")}
                except ValueError as exc:
                    print(exc, file=sys.stderr)
                    answer, status = {"line": number, "error": str(exc)}, 2
                sys.stdout.write(_compact(answer) + "\n")
        except InputEnded as exc:  # the line was answered refused: the rest of the input is not read
            sys.stdout.flush()
            print(exc, file=sys.stderr)
            status = 2
    else:
        try:
            result = settled(_text(stream.read(MAX_ROUND_BYTES + 1), source), source)
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    sys.stdout.flush()
    return status


def _text(data: bytes, where: str) -> str:
    """``data`` as UTF-8 text; ``ValueError`` naming ``where`` when it is longer than ``MAX_ROUND_BYTES`` or not
    UTF-8 (the first byte that is not, and its place)."""
    if len(data) > MAX_ROUND_BYTES:
        raise ValueError(f"{where}: longer than {MAX_ROUND_BYTES:,} bytes: not one round (a round's JSON is a few "
                         f"thousand)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: not UTF-8 text: byte 0x{data[exc.start]:02x} at byte {exc.start + 1}") from None


def _lines(stream: IO[bytes], source: str) -> Iterator[tuple[int, str | ValueError]]:
    """``(number, line)`` of each line of ``stream``, numbered and split as ``str.splitlines`` splits the whole
    text, read one line at a time: a line longer than ``MAX_ROUND_BYTES`` or not UTF-8 is a ``ValueError`` in
    place of its text, given before the rest of a long line is read and dropped (never held). Raises
    ``InputEnded`` when that rest does not end within ``MAX_LINE_BYTES`` of the line's start: nothing more is
    read."""
    number = 0
    while True:
        chunk = stream.readline(MAX_ROUND_BYTES + 1)
        if not chunk:
            return
        try:  # a chunk longer than MAX_ROUND_BYTES is refused here, by its line's number
            text = _text(chunk, f"{source}: line {number + 1}")
        except ValueError as exc:
            number += 1
            yield number, exc  # said before the rest of the line is read: a line that never ends is named at once
            rest, read = chunk, len(chunk)
            while len(chunk) > MAX_ROUND_BYTES and rest and not rest.endswith(b"\n"):  # the rest, dropped
                if read >= MAX_LINE_BYTES:
                    raise InputEnded(f"{source}: line {number}: no line end within {MAX_LINE_BYTES:,} bytes: the "
                                     f"rest of the input is not read")
                rest = stream.readline(min(MAX_ROUND_BYTES, MAX_LINE_BYTES - read))
                read += len(rest)
            continue
        for line in text.splitlines():  # a line ends at \n; splitlines also at \r and the rest, as before
            number += 1
            yield number, line


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object from its ``pairs``; ``ValueError`` naming a key written twice (the first, sorted)."""
    result = dict(pairs)
    if len(result) != len(pairs):
        keys = [k for k, _ in pairs]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"key {repeated[0]!r} repeated in an object")
    return result


#: The rounds' JSON reader: a key written twice in an object is refused (``_unique_keys``).
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def read_round(text: str) -> Any:
    """The JSON value of ``text`` exactly as ``json.loads(text, object_pairs_hook=_unique_keys)`` reads it, and
    the same exception where that raises one (``json.JSONDecodeError``, ``ValueError`` for a key written twice,
    ``RecursionError``).

    orjson reads it first (several times faster); its value is kept only when it cannot differ from json's: it
    holds no float (orjson reads an integer beyond 64 bits as one, and refuses NaN and 1e400, which json reads)
    and its objects hold as many keys as ``text`` has colons (each key has one; a key written twice leaves one,
    a colon in a string adds one). Anything else, and anything orjson refuses, is read by ``json``."""
    try:
        value = orjson.loads(text)
        if _keys(value) == text.count(":"):
            return value
    except (orjson.JSONDecodeError, RecursionError):
        pass
    if text.startswith("\ufeff"):
        return json.loads(text)  # refused, as json.loads refuses a byte order mark
    return _DECODER.decode(text)  # one decoder for every round: json.loads makes one per call


def _keys(value: Any) -> int:
    """The number of keys of the objects in the JSON ``value``, nested ones included; -1 if it holds a float."""
    kind = type(value)
    if kind is float:
        return -1
    if kind is dict:
        count = len(value)
        items = value.values()
    elif kind is list:
        count = 0
        items = value
    else:
        return 0
    for item in items:
        kind = type(item)
        if kind is dict or kind is list:
            inner = _keys(item)
            if inner < 0:
                return -1
            count += inner
        elif kind is float:
            return -1
    return count


def _compact(answer: dict[str, Any]) -> str:
    """``answer`` as ``json.dumps(answer, separators=(",", ":"))`` spells it: a settlement, whose only free text
    is the ``jurisdiction`` echoed, printable ASCII, through orjson (the same characters: no escape but ``\\``
    and ``\"`` is needed); an error line, other text or a number orjson refuses, through ``json``."""
    jurisdiction = answer.get("jurisdiction")
    if "error" not in answer and isinstance(jurisdiction, str) and jurisdiction.isascii() and jurisdiction.isprintable():
        try:
            return orjson.dumps(answer).decode("ascii")
        except (orjson.JSONEncodeError, UnicodeDecodeError):  # an integer beyond 64 bits
            pass
    return json.dumps(answer, separators=(",", ":"))
