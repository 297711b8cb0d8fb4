"""Configuration files: where they live, how YAML is read, and the error every refused file raises.

The project's configuration is the ``config/`` folder at the top of the source tree: ``table.yaml`` (the
table, its limits, its devices and journal) and ``jurisdictions/*.yaml`` (pay tables and ranking rules).
"""

from __future__ import annotations

from collections.abc import Hashable

from pathlib import Path
from typing import Any

import yaml

#: ``config/`` beside the ``controller`` package (the source tree, as installed with ``pip install -e .``).
CONFIG_DIR = Path(__file__).resolve().parent.parent / "config"


class ConfigError(ValueError):
    """A configuration file that cannot be used.

    The message names the file, the line when it is known (``"{file}: line {n}: {key path}: {what is wrong}"``),
    the key path and what is wrong.
    """


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
    """A ``ConfigError`` whose message is ``"{path}: line {line}: {where}: {message}"`` (no line part if None)."""
    at = f" line {line}:" if line else ""
    return ConfigError(f"{path}:{at} {where}: {message}")


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that repeats a key (YAML would silently keep the last value), and
    building ``YamlMapping`` objects that know the line of each key."""

    def construct_mapping(self, node, deep=False):  # noqa: D102 - PyYAML hook
        seen = set()
        lines = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                raise yaml.constructor.ConstructorError(None, None, f"a key must be a plain value, not {key!r}",
                                                        key_node.start_mark)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
            lines[key] = key_node.start_mark.line + 1
        mapping = YamlMapping(super().construct_mapping(node, deep))
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = lines
        return mapping


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:map", lambda loader, node: loader.construct_mapping(node, True))


def load_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping from ``path``.

    Raises ``ConfigError`` naming the file for a missing file, malformed YAML (with line and column) or a
    document that is not a mapping.
    """
    if Path(path).exists() and not Path(path).is_file():
        raise ConfigError(f"{path}: not a regular file")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}:{where} malformed YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def check_keys(path: Path, where: str, mapping: Any, required: set[str], optional: set[str] = frozenset()) -> None:
    """Check that ``mapping`` (found at key path ``where`` in ``path``) is a dict with exactly the allowed keys.

    Raises ``ConfigError`` naming the file, the line (of the first unknown key, else of the mapping), the key
    path and the missing or unknown keys.
    """
    if not isinstance(mapping, dict):
        raise error(path, where, f"expected a mapping, got {type(mapping).__name__}", _line_hint(mapping))
    missing = required - mapping.keys()
    unknown = mapping.keys() - required - optional
    problems = []
    if missing:
        problems.append(f"missing key(s) {', '.join(sorted(missing))}")
    if unknown:
        problems.append(f"unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    if problems:
        first_unknown = min(unknown, key=lambda k: line_of(mapping, k) or 0) if unknown else None
        line = line_of(mapping, first_unknown) if unknown else line_of(mapping)
        raise error(path, where, "; ".join(problems), line)


def _line_hint(value: Any) -> int | None:
    return value.line if isinstance(value, YamlMapping) else None


def require_int(path: Path, where: str, value: Any, minimum: int | None = None, line: int | None = None) -> int:
    """Return ``value`` if it is an integer (not a bool) no smaller than ``minimum``, else raise ``ConfigError``
    naming ``path``, ``line`` (when known) and ``where``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(path, where, f"expected an integer, got {value!r}", line)
    if minimum is not None and value < minimum:
        raise error(path, where, f"{value} is below the minimum {minimum}", line)
    return value
