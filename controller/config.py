"""Configuration files: where they live, how YAML is read, and the error every refused file raises.

The project's configuration is the ``config/`` folder at the top of the source tree: ``table.yaml`` (the
table, its limits, its devices and journal) and ``jurisdictions/*.yaml`` (pay tables and ranking rules).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

#: ``config/`` beside the ``controller`` package (the source tree, as installed with ``pip install -e .``).
CONFIG_DIR = Path(__file__).resolve().parent.parent / "config"


class ConfigError(ValueError):
    """A configuration file that cannot be used. The message names the file, the key and what is wrong."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that repeats a key (YAML would silently keep the last value)."""

    def construct_mapping(self, node, deep=False):  # noqa: D102 - PyYAML hook
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


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

    Raises ``ConfigError`` naming the file, the key path and the missing or unknown keys.
    """
    if not isinstance(mapping, dict):
        raise ConfigError(f"{path}: {where}: expected a mapping, got {type(mapping).__name__}")
    missing = required - mapping.keys()
    unknown = mapping.keys() - required - optional
    problems = []
    if missing:
        problems.append(f"missing key(s) {', '.join(sorted(missing))}")
    if unknown:
        problems.append(f"unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    if problems:
        raise ConfigError(f"{path}: {where}: {'; '.join(problems)}")


def require_int(path: Path, where: str, value: Any, minimum: int | None = None) -> int:
    """Return ``value`` if it is an integer (not a bool) no smaller than ``minimum``, else raise ``ConfigError``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{path}: {where}: expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{path}: {where}: {value} is below the minimum {minimum}")
    return value
