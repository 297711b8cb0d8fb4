"""Configuration files: where they live, how YAML is read, and the error every refused file raises.

The default configuration is the ``config/`` folder of the source tree: ``table.yaml`` (the table, its limits,
its devices) and ``jurisdictions/*.yaml`` (pay tables and ranking rules). A wheel ships it inside the package as
``controller/defaults`` (read with ``importlib.resources``). A site's own configuration is found by
``find_table_config``: ``--config``, then ``$CRISSCROSS_CONFIG``, then ``/etc/crisscross/table.yaml``, then the
packaged default. What the service writes (its journal) lives in the state directory (``state_dir``), never
beside the package.
"""

from __future__ import annotations

import ast
import errno
import importlib.resources
import json
import os
import re
import string
import unicodedata
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from controller.settings.secret_files import read_regular
from controller.settings.text import CONTROL_CATEGORIES, path_shown


def _default_config_dir() -> Path:
    """The packaged default configuration: ``controller/defaults`` in an installed wheel, else ``config/`` of
    the source tree (a checkout, or ``pip install -e .``)."""
    packaged = importlib.resources.files("controller") / "defaults"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "config"


#: The folder of the default configuration (``table.yaml`` and ``jurisdictions/``).
CONFIG_DIR = _default_config_dir()
#: Largest configuration file read (bytes): the files shipped are a few KB (table.yaml about 5 KB, a
#: jurisdiction under 3 KB), an operators file about 150 bytes a user; anything larger is not one of them.
MAX_CONFIG_BYTES = 1 << 20
#: A key a message about a configuration file may quote: a name, as every key the files define is one. No other
#: key is quoted, so that a file named by mistake (``/etc/shadow``, whose lines read as keys) shows none of them.
NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")
#: The environment variable that names a site's table configuration.
CONFIG_ENV = "CRISSCROSS_CONFIG"
#: Where a site keeps its table configuration when neither ``--config`` nor ``$CRISSCROSS_CONFIG`` says.
SITE_CONFIG = Path("/etc/crisscross/table.yaml")


def find_table_config(explicit: Path | None = None, *, environ: dict[str, str] | None = None,
                      site: Path = SITE_CONFIG) -> Path:
    """The table configuration to use: ``explicit`` (``--config``), else ``$CRISSCROSS_CONFIG``, else ``site``
    (``/etc/crisscross/table.yaml``) when it exists, else the packaged default (``CONFIG_DIR``). The service
    logs the one it uses and writes it into its start record."""
    environ = os.environ if environ is None else environ
    if explicit is not None:
        return Path(explicit)
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV])
    if site.is_file():
        return site
    return CONFIG_DIR / "table.yaml"


def state_dir(environ: dict[str, str] | None = None) -> Path:
    """The folder the service writes to (its journal): ``$STATE_DIRECTORY`` when systemd gives one (the first,
    if it gives several, ``StateDirectory=`` of the unit), else ``$XDG_STATE_HOME/crisscross``, else
    ``~/.local/state/crisscross``. Not created here."""
    environ = os.environ if environ is None else environ
    given = environ.get("STATE_DIRECTORY", "").split(":")[0]
    if given:
        return Path(given)
    base = environ.get("XDG_STATE_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".local" / "state")
    return Path(base) / "crisscross"


def short(value: object, limit: int = 40) -> str:
    """``value`` as its input spelled it (JSON terms: ``null``, ``true``, ``"500"``, ``NaN``; ``repr`` for other
    types), cut to ``limit`` characters, for error messages that quote bad input; an integer too long to quote
    (``repr`` of one over 4,300 digits raises) is described by its length."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of about {value.bit_length() * 30103 // 100000} digits"
    try:  # the input's own terms (JSON, YAML): null, true, "500"; Python's repr otherwise
        text = json.dumps(value, allow_nan=True) if isinstance(value, (type(None), bool, int, float, str)) else repr(value)
    except ValueError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ConfigError(ValueError):
    """A configuration file that cannot be used.

    The message names the file, the line when it is known (``"{file}: line {n}: {key path}: {what is wrong}"``),
    the key path and what is wrong.
    """


class EmptyFile(ConfigError):
    """A YAML file with no document in it: no bytes, or blanks and comments only (``load_yaml``)."""


class YamlMapping(dict):
    """A YAML mapping as a ``dict`` that remembers where it was written.

    ``line``: 1-based line of the mapping's first key (or of the mapping itself); ``key_lines``: 1-based line
    of each key. Built by ``load_yaml``; compare and use it as a plain ``dict``.
    """

    line: int = 0
    key_lines: dict

    def line_of(self, key: object) -> int:
        """1-based line of ``key`` in the file, or the mapping's own line for a key that is not there."""
        return getattr(self, "key_lines", {}).get(key, self.line)


def line_of(mapping: Any, key: object | None = None) -> int | None:
    """Line of ``key`` in ``mapping`` (of the mapping itself when ``key`` is None), None if not from a file."""
    if not isinstance(mapping, YamlMapping):
        return None
    return mapping.line if key is None else mapping.line_of(key)


def error(path: Path, where: str, message: str, line: int | None = None) -> ConfigError:
    """A ``ConfigError`` whose message is ``"{path}: line {line}: {where}: {message}"`` (no line part if None; the
    path as ``path_shown`` shows it)."""
    at = f" line {line}:" if line else ""
    return ConfigError(f"{path_shown(path)}:{at} {where}: {message}")


#: The only integers a configuration file may write: an optional minus, then ``0`` or digits without a leading
#: zero. YAML 1.1 (PyYAML) also reads ``01000`` as octal 512, ``0x1f4`` and ``8:20`` (base 60) as 500, ``0b11``,
#: ``1_000`` and ``+5`` as integers: a pay table meaning 1000 to 1 would silently pay 512 to 1.
PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")

_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _RefusedScalar(yaml.YAMLError):
    """A scalar the configuration files do not accept (see ``PLAIN_INT``); ``line`` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class _KeyRefused(yaml.constructor.ConstructorError):
    """A key ``_UniqueKeyLoader`` refuses (repeated, or not a plain value), its message quoting it only by
    ``quoted_key``."""

    def __init__(self, problem: str, mark: yaml.Mark) -> None:
        super().__init__(None, None, problem, mark)


def quoted_key(key: object) -> str:
    """``key`` quoted for a message about a configuration file when it is a name (``NAME``), else ``(not a
    name, not shown)``: the message says where it is (its line), never what else the file holds."""
    return repr(key) if isinstance(key, str) and NAME.fullmatch(key) else "(not a name, not shown)"


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that repeats a key (YAML would silently keep the last value), and
    building ``YamlMapping`` objects that know the line of each key.

    Scalars follow YAML 1.2 where YAML 1.1 surprises: an integer is a plain decimal (``PLAIN_INT``), and any
    other text YAML 1.1 reads as an integer (octal, hexadecimal, binary, base 60, underscores, a leading ``+``)
    is refused, as is a number written with ``_`` or ``:`` (``1_0.5``, ``1:30.0``). An explicit tag that
    changes what the value would be without it is refused (``!!int '0x10'``, ``!!str 12``, ``!!float 1``,
    ``!!bool yes``, ``!!binary``, ``!!set``, a local ``!tag``...: a configuration value is written as itself,
    text quoted); a tag that agrees with what the value reads as without it (``!!int 4``, ``!!bool true``,
    ``!!str abc``) changes nothing and is accepted, the value still checked as if untagged. Merge keys
    (``<<: *anchor``) are refused: each key is written where it applies. Only ``true`` and ``false`` (also
    ``True``, ``TRUE``, ``False``, ``FALSE``) are booleans: ``yes``, ``no``, ``on`` and ``off`` are text, so a
    key that expects true or false refuses them by name and a key that expects text (a table name, a device
    id) keeps what was written.
    """

    def construct_document(self, node):  # noqa: D102 - PyYAML hook
        _check_scalars(self, node)
        return construct_whole(self, node)

    def construct_mapping(self, node, deep=False):  # noqa: D102 - PyYAML hook
        seen = set()
        lines = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                raise _KeyRefused(f"a key must be a plain value, not a {type(key).__name__}", key_node.start_mark)
            if key in seen:
                raise _KeyRefused(f"duplicate key {quoted_key(key)}", key_node.start_mark)
            seen.add(key)
            lines[key] = key_node.start_mark.line + 1
        mapping = YamlMapping(super().construct_mapping(node, deep))
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = lines
        return mapping


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:map", lambda loader, node: loader.construct_mapping(node, True))
# YAML 1.2 booleans: the resolvers of SafeLoader less its yes/no/on/off, plus true/false.
_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_UniqueKeyLoader.add_implicit_resolver(_BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


#: Most values and collections a YAML file's data may hold once its aliases are counted wherever they are named
#: (a value named by an alias is walked again at each name when the data is checked, shown or copied): the shipped
#: table.yaml holds 87, a jurisdiction 110, the largest scenario 546. Ten aliases of ten aliases, nine levels
#: deep, fit in 500 bytes and name a billion values ("billion laughs").
MAX_NODES = 100_000
#: Most characters the data's text values may hold together, aliases counted where they are named: what a file of
#: ``MAX_CONFIG_BYTES`` can hold written out (four levels of ten aliases of one 400,000-character text fit in a
#: 405 KB file and name 4 GB).
MAX_CHARACTERS = 1 << 20


def expanded_size(root: yaml.Node) -> tuple[int, int]:
    """``(values and collections, characters of its text values)`` of the data composed as ``root``, each alias
    counted as the whole node it names (a node named twice counts twice), each figure stopped once above its
    bound (``MAX_NODES``, ``MAX_CHARACTERS``). A collection that contains itself counts once at its second sight
    (``construct_whole`` refuses it)."""
    sizes: dict[int, tuple[int, int]] = {}
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]

    def parts(node: yaml.Node) -> list[yaml.Node]:
        return node.value if isinstance(node, yaml.SequenceNode) else [part for pair in node.value for part in pair]

    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_.discard(key)
            inner = [sizes.get(id(child), (1, 0)) for child in parts(node)]
            sizes[key] = (min(MAX_NODES + 1, 1 + sum(n for n, _ in inner)),
                          min(MAX_CHARACTERS + 1, sum(c for _, c in inner)))
            if sizes[key][0] > MAX_NODES or sizes[key][1] > MAX_CHARACTERS:
                return sizes[key]
            continue
        if key in sizes or key in open_:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[key] = (1, len(node.value))
            continue
        open_.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in parts(node))
    return sizes.get(id(root), (1, 0))


def construct_whole(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    """The data of ``node`` (composed by ``loader``), every collection built at once. A collection that
    contains itself through an alias (``name: &a [*a]``: endless when walked) is refused with
    ``yaml.constructor.ConstructorError`` at its line, "a collection that contains itself (a recursive alias)",
    and data that holds more than ``MAX_NODES`` values and collections, or more than ``MAX_CHARACTERS`` characters
    of text, once its aliases are counted where they are named (``expanded_size``: a "billion laughs" of aliases)
    is refused before anything is built, at the root's line; an alias of another node is built as that node's
    object. The rule of every YAML file the controller and the rig read (``load_yaml``, hil.scenario's
    ``load_scenario``)."""
    nodes, characters = expanded_size(node)
    if nodes > MAX_NODES or characters > MAX_CHARACTERS:
        what = (f"{MAX_NODES:,} values" if nodes > MAX_NODES else f"{MAX_CHARACTERS:,} characters of text")
        raise yaml.constructor.ConstructorError(
            None, None, f"more than {what} once its aliases are counted where they are named (an alias of "
                        f"aliases): not a file to read", node.start_mark)
    try:
        return loader.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        if exc.problem != "found unconstructable recursive node":
            raise
        raise yaml.constructor.ConstructorError(None, None, "a collection that contains itself (a recursive alias)",
                                                exc.problem_mark) from None
    finally:
        loader.constructed_objects, loader.recursive_objects = {}, {}


def _check_scalars(loader: yaml.SafeLoader, root: yaml.Node) -> None:
    """Refuse, before anything is built, an integer or number of ``root``'s tree that is not plain decimal, a
    node whose explicit tag differs from the tag its value resolves to without one, and a merge key (``<<``).

    Raises ``_RefusedScalar`` with the line, the text and its key path (for a number, with the value YAML 1.1
    would give it).
    """
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    while stack:
        node, where = stack.pop()
        if id(node) in seen:  # an alias repeats a node already checked
            continue
        seen.add(id(node))
        implicit = (node.style is None, node.style is not None) if isinstance(node, yaml.ScalarNode) else None
        if node.tag != loader.resolve(type(node), node.value if implicit else None, implicit or (True, False)):
            at = f" ({where})" if where else ""
            raise _RefusedScalar(node.start_mark.line + 1, f"explicit tag{at}: configuration files do not use "
                                                           "tags (write the value itself, text quoted)")
        if isinstance(node, yaml.ScalarNode):
            text = node.value
            if node.tag == _INT_TAG and not PLAIN_INT.fullmatch(text):
                kind = "a plain decimal integer"
            elif node.tag == _FLOAT_TAG and ("_" in text or ":" in text):
                kind = "a plain decimal number"
            else:
                continue
            at = f"{where}; " if where else ""
            raise _RefusedScalar(node.start_mark.line + 1, f"{text!r} is not {kind} ({at}{_yaml11_reading(node)})")
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(node.value))
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.tag == _MERGE_TAG:  # PyYAML would merge the aliased mapping in; the loader does not
                    at = f" ({where})" if where else ""
                    raise _RefusedScalar(key.start_mark.line + 1, f"merge keys (<<) are not used in configuration "
                                                                  f"files{at}: write each key where it applies")
                name = key.value if isinstance(key, yaml.ScalarNode) and NAME.fullmatch(key.value) else "?"
                stack.append((key, where or "top level"))
                stack.append((value, f"{where}.{name}" if where else str(name)))


def _yaml11_reading(node: yaml.ScalarNode) -> str:
    """What YAML 1.1 makes of an integer or number ``node``, for the message: ``512`` for ``01000``."""
    construct = yaml.SafeLoader.construct_yaml_int if node.tag == _INT_TAG else yaml.SafeLoader.construct_yaml_float
    try:
        return f"YAML 1.1 would read it as {construct(yaml.SafeLoader(''), node)!r}"
    except ValueError:  # an explicit !!int or !!float on text that is no number at all
        return "not a number in YAML 1.1 either"


#: A text a YAML error's problem quotes (``%r`` of it: ``'...'`` or ``"..."``).
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
#: What a YAML error's problem may quote of its own vocabulary: a token (``'<block end>'``) or a punctuation mark.
_TOKEN = re.compile(r"<[a-z ]+>|[" + re.escape(string.punctuation) + "]")


def _problem(exc: yaml.YAMLError, text: str) -> str:
    """`` line L, column C malformed YAML: PROBLEM`` for the error ``exc`` of reading ``text`` (no line part when
    YAML gives no place). PyYAML's problem quotes what it found (an alias, an escape, a tag); of that only its own
    tokens and punctuation are kept, an invisible character is named by its code point (``U+0009``, a tab) and
    anything else is left out: a file named by mistake shows none of its text. A key is named by ``quoted_key``."""
    if isinstance(exc, yaml.reader.ReaderError):  # a control character: the place is a position in ``text``
        before = text[:exc.position]
        line, column = before.count("\n"), exc.position - before.rfind("\n") - 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or "\0")
        problem = f"unacceptable character U+{code:04X}: {exc.reason}"
    else:
        mark = getattr(exc, "problem_mark", None)
        line, column = (mark.line, mark.column) if mark is not None else (None, None)
        problem = str(getattr(exc, "problem", None) or "not YAML")
        if not isinstance(exc, _KeyRefused):
            problem = _QUOTED.sub(_shown, problem)
    where = f" line {line + 1}, column {column + 1}" if line is not None else ""
    return f"{where} malformed YAML: {problem}"


def _shown(match: re.Match) -> str:
    """What ``_problem`` shows of a quoted text (``match``): YAML's token or punctuation as quoted, an invisible
    character by its code point, else ``(not shown)``."""
    try:
        found = ast.literal_eval(match.group())
    except (ValueError, SyntaxError):
        return "(not shown)"
    if isinstance(found, str) and _TOKEN.fullmatch(found):
        return match.group()
    if isinstance(found, str) and len(found) == 1 and not found.isprintable():
        return f"U+{ord(found):04X}"
    return "(not shown)"


def _target(link: Path) -> str:
    """What the symbolic link ``link`` names, as text (``?`` when it is gone meanwhile)."""
    try:
        return os.readlink(link)
    except OSError:
        return "?"


def load_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping from ``path`` (a regular file, or a link to one, of at most ``MAX_CONFIG_BYTES``, read
    by ``controller.settings.secret_files.read_regular``: a device, a pipe or a folder is refused unopened).

    Raises ``ConfigError`` naming the file for a missing file (a link to one that does not exist named as such,
    with where it points), one that is not a regular file, one larger than
    ``MAX_CONFIG_BYTES``, text that is not UTF-8, malformed YAML (with line, column and the problem, quoting none
    of the file's text: ``_problem``), a number that is not plain decimal (with line and text, ``"{file}: line
    12: '01000' is not a plain decimal integer (...)"``), a tag that changes a value or a merge key (with line;
    see ``_UniqueKeyLoader``), collections nested too deep for the parser (hundreds of levels) or a document that
    is not a mapping (``EmptyFile`` when there is no document at all: the file is empty).
    """
    shown = path_shown(path)
    try:
        raw, _ = read_regular(Path(path), MAX_CONFIG_BYTES + 1, follow=True)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{shown}: larger than {MAX_CONFIG_BYTES:,} bytes: not a configuration file")
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:  # ``not a regular file`` says it all; anything else is a file that cannot be read
        problem = exc.strerror or str(exc)
        if exc.errno == errno.ENOENT and os.path.islink(path):  # the name is there: a link to nothing
            problem = f"a symbolic link to {path_shown(_target(path))}, which does not exist"
        elif exc.errno != errno.EINVAL:
            problem = f"cannot read: {problem}"
        raise ConfigError(f"{shown}: {problem}") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except _RefusedScalar as exc:
        raise ConfigError(f"{shown}: line {exc.line}: {exc.message}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{shown}:{_problem(exc, text)}") from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise ConfigError(f"{shown}: nested too deep (hundreds of levels; a configuration has a few)") from None
    if data is None and yaml.compose(text, Loader=yaml.SafeLoader) is not None:  # a document of null itself
        raise ConfigError(f"{shown}: expected a mapping at the top level, got null")
    if data is None:  # no bytes, or blanks and comments only: YAML reads no document
        raise EmptyFile(f"{shown}: the file is empty (nothing but blanks or comments): expected a mapping at the "
                        f"top level")
    if not isinstance(data, dict):
        raise ConfigError(f"{shown}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def check_keys(path: Path, where: str, mapping: Any, required: set[str], optional: set[str] = frozenset()) -> None:
    """Check that ``mapping`` (found at key path ``where`` in ``path``) is a dict with exactly the allowed keys.

    Raises ``ConfigError`` naming the file, the line (of the first unknown key, else of the mapping), the key
    path and the missing or unknown keys (an unknown key that is not a name, ``NAME``, is counted, not quoted: a
    file named by mistake, ``/etc/shadow`` say, reads as keys); for a key left without a value, the keys wanted.
    """
    if mapping is None:  # a key left without a value
        keys = f" with {', '.join(sorted(required))}" if required else ""
        raise error(path, where, f"nothing given: expected a mapping{keys}")
    if not isinstance(mapping, dict):
        raise error(path, where, f"expected a mapping, got {type(mapping).__name__}", _line_hint(mapping))
    missing = required - mapping.keys()
    unknown = mapping.keys() - required - optional
    problems = []
    if missing:
        problems.append(f"missing key(s) {', '.join(sorted(missing))}")
    if unknown:
        names = sorted(str(key) for key in unknown if isinstance(key, str) and NAME.fullmatch(key))
        others = len(unknown) - len(names)
        hidden = f"{others} that {'is not a name' if others == 1 else 'are not names'} (not shown)"
        problems.append("unknown key(s) " + ", ".join(names + [hidden] * bool(others)))
    if problems:
        first_unknown = min(unknown, key=lambda k: line_of(mapping, k) or 0) if unknown else None
        line = line_of(mapping, first_unknown) if unknown else line_of(mapping)
        raise error(path, where, "; ".join(problems), line)


def _line_hint(value: Any) -> int | None:
    return value.line if isinstance(value, YamlMapping) else None


def require_text(path: Path, where: str, value: Any, what: str, line: int | None = None) -> str:
    """Return ``value`` if it is text that is not blank and holds no control or format character
    (``controller.settings.text.CONTROL_CATEGORIES``: a NUL, an escape, a newline, a direction override; a path,
    a port, a host, a device id are logged and shown, and a terminal would act on them), else raise
    ``ConfigError`` naming ``path``, ``line`` (when known), ``where`` and ``what`` was expected (``"expected a
    file path (text), got None"``): an empty key is None to YAML, a list or a number is no path, and ``str()`` of
    them would name a file ``None`` or ``['a', 'b']``."""
    if not isinstance(value, str) or not value.strip():
        raise error(path, where, f"expected {what} (text), got {value!r}", line)
    bad = next((char for char in value if unicodedata.category(char) in CONTROL_CATEGORIES), None)
    if bad is not None:
        raise error(path, where, f"{value!r} holds the control character U+{ord(bad):04X}", line)
    return value


def require_int(path: Path, where: str, value: Any, minimum: int | None = None, line: int | None = None,
                maximum: int | None = None) -> int:
    """Return ``value`` if it is an integer (not a bool) from ``minimum`` to ``maximum`` (either None: no bound),
    else raise ``ConfigError`` naming ``path``, ``line`` (when known) and ``where``."""

    if isinstance(value, bool) or not isinstance(value, int):
        raise error(path, where, f"expected an integer, got {short(value)}", line)
    if minimum is not None and value < minimum:
        raise error(path, where, f"{short(value)} is below the minimum {minimum}", line)
    if maximum is not None and value > maximum:
        raise error(path, where, f"{short(value)} is above the maximum {maximum}", line)
    return value
