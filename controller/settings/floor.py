"""``floor:`` of ``table.yaml``: where the table publishes to the floor's MQTT broker (docs/floor.md).

Off by default. Keys: ``enabled`` (true/false), ``broker`` (host name or address), ``port`` (default 1883, or
8883 with ``tls``), ``tls`` (true/false: TLS with the system's certificate authorities, or those of
``ca_file``), ``ca_file`` (a PEM file of certificate authorities, relative to the table file), ``username``
and ``password_file`` (a file holding the password on its first line, mode 0600, relative to the table file;
read when the service starts), ``prefix`` (the first level of every topic, default ``crisscross``).
"""

from __future__ import annotations

import os

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.settings.files import ConfigError, check_keys, error, line_of, require_int, require_text
from controller.settings.secret_files import SecretFileError, read_owner_only
from controller.settings.text import path_shown

#: The first level of every topic when ``prefix`` is not written.
DEFAULT_PREFIX = "crisscross"
#: MQTT's port without TLS and with it (IANA service names ``mqtt`` and ``secure-mqtt``).
PLAIN_PORT, TLS_PORT = 1883, 8883
#: Characters a topic level may not hold: MQTT 5 section 4.7 (wildcards, the level separator) and NUL.
TOPIC_FORBIDDEN = frozenset("+#/\0")


@dataclass(frozen=True)
class FloorConfig:
    """``floor:`` as checked by ``parse_floor_config``; paths resolved from the table file's folder."""

    enabled: bool = False
    broker: str = "localhost"
    port: int = PLAIN_PORT
    tls: bool = False
    ca_file: Path | None = None
    username: str | None = None
    password_file: Path | None = None
    prefix: str = DEFAULT_PREFIX


def parse_floor_config(path: Path, entry: Any, table_id: str) -> FloorConfig:
    """Check the ``floor:`` mapping of the table file at ``path`` (None: off) for the table ``table_id``.

    Raises ``ConfigError`` naming the file, the line and the key for an unknown key, a non-boolean ``enabled``
    or ``tls``, a ``broker``, ``username``, ``ca_file`` or ``password_file`` that is not non-blank text, a port
    outside 1-65535, a ``password_file`` without ``username``, a ``prefix`` that is not topic levels (MQTT 5
    section 4.7: no ``+``, ``#``, empty level, or leading or trailing ``/``), and, when enabled, a ``table_id``
    that cannot be a topic level (``+``, ``#`` or ``/``), a missing ``broker`` or a ``ca_file`` that cannot be
    read.
    """
    path = Path(path)
    entry = {} if entry is None else entry
    check_keys(path, "floor", entry, set(),
               {"enabled", "broker", "port", "tls", "ca_file", "username", "password_file", "prefix"})
    flags = {}
    for key in ("enabled", "tls"):
        value = entry.get(key, False)
        if not isinstance(value, bool):
            raise error(path, f"floor.{key}", f"expected true or false, got {value!r}", line_of(entry, key))
        flags[key] = value
    if flags["enabled"] and "broker" not in entry:  # never a silent localhost on a table PC
        raise error(path, "floor.broker", "missing: the broker's host name or address is required when enabled",
                    line_of(entry, "enabled"))
    broker = require_text(path, "floor.broker", entry.get("broker", "localhost"), "a host name or address",
                          line_of(entry, "broker"))
    port = require_int(path, "floor.port", entry.get("port", TLS_PORT if flags["tls"] else PLAIN_PORT), 1,
                       line_of(entry, "port"), 65535)
    files = {}
    for key in ("ca_file", "password_file"):
        value = entry.get(key)
        if value is not None or key in entry:
            files[key] = path.parent / require_text(path, f"floor.{key}", value, "a file path", line_of(entry, key))
    if "ca_file" in files and not flags["tls"]:
        raise error(path, "floor.ca_file", "given without tls: true", line_of(entry, "ca_file"))
    if "ca_file" in files and flags["enabled"] and not os.access(files["ca_file"], os.R_OK):
        raise error(path, "floor.ca_file", f"{files['ca_file']}: cannot read it", line_of(entry, "ca_file"))
    username = entry.get("username")
    if username is not None or "username" in entry:
        username = require_text(path, "floor.username", username, "a user name", line_of(entry, "username"))
    if "password_file" in files and username is None:
        raise error(path, "floor.password_file", "given without a username", line_of(entry, "password_file"))
    prefix = require_text(path, "floor.prefix", entry.get("prefix", DEFAULT_PREFIX), "topic levels",
                          line_of(entry, "prefix"))
    try:
        check_prefix(prefix)
    except ValueError as exc:
        raise error(path, "floor.prefix", str(exc), line_of(entry, "prefix")) from None
    if flags["enabled"] and set(table_id) & TOPIC_FORBIDDEN:
        raise error(path, "floor", f"table_id {table_id!r} holds +, # or /, which a topic level cannot: rename the "
                    f"table to publish it to the floor", line_of(entry, "enabled"))
    return FloorConfig(flags["enabled"], broker, port, flags["tls"], files.get("ca_file"), username,
                       files.get("password_file"), prefix)


#: The longest topic prefix (characters): room left in MQTT's 65,535-byte topic for the table's id and the kind.
MAX_PREFIX = 128


def check_prefix(prefix: str) -> str:
    """``prefix`` when it can be the first levels of every topic (``floor.prefix``, the tools' ``--prefix``):
    one or more levels, none empty, none holding ``+``, ``#``, ``/`` or NUL (MQTT 5 section 4.7), no control
    character (a topic is shown in logs and terminals), at most ``MAX_PREFIX`` characters; else ``ValueError``
    saying so with the text (cut)."""
    if any(not level or set(level) & TOPIC_FORBIDDEN for level in prefix.split("/")):
        raise ValueError(f"{prefix[:MAX_PREFIX]!r} is not MQTT topic levels (no +, #, empty level, or leading or "
                         "trailing /)")
    if len(prefix) > MAX_PREFIX or not prefix.isprintable():
        raise ValueError(f"{prefix[:MAX_PREFIX]!r} is not a topic prefix of at most {MAX_PREFIX} printable "
                         "characters")
    return prefix


def read_password(config: FloorConfig) -> str | None:
    """The password of ``config.password_file`` (its first line), None without one. Raises ``ConfigError`` for a
    file that is missing, not a regular file, or readable or writable by group or others (chmod 600 fixes it):
    it grants the table's rights on the broker."""
    where = config.password_file
    if where is None:
        return None
    shown = path_shown(where)
    try:
        text = read_owner_only(where, "floor.password_file", 4096)
    except OSError as exc:
        raise ConfigError(f"{shown}: floor.password_file: cannot read: {exc.strerror or exc}") from None
    except SecretFileError as exc:  # the same rule as the journal key's: the owner's alone
        raise ConfigError(str(exc)) from None
    try:
        lines = text.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise ConfigError(f"{shown}: floor.password_file: not UTF-8 text") from None
    if not lines or not lines[0]:
        raise ConfigError(f"{shown}: floor.password_file: empty (the password is its first line)")
    return lines[0]
