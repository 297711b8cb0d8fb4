"""``control:`` of ``table.yaml``: whether the control interface (``controller.control.server``, docs/control.md) is
served, where, and whose operators file it reads. Apart from the server so that reading a table's configuration
(``crisscross settle --table``, ``paytable``) does not load the web server."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.settings.files import check_keys, error, line_of, require_int, require_text

#: The documented port of the control interface (docs/control.md); 0 in ``table.yaml`` takes any free port.
DEFAULT_PORT = 8740
#: Fewest rounds the screen's game recall reaches back: at least the last 10 (AGCO Standards 13.1.1; domain.md,
#: "Game recall"); the default of ``control.recall``.
MIN_RECALL = 10
#: Most rounds ``control.recall`` may name: each recall reads that many rounds' records from the journal.
MAX_RECALL = 500


@dataclass(frozen=True)
class ControlConfig:
    """``control:`` of ``table.yaml``: ``enabled``, ``host`` (a loopback address), ``port`` (0 = any free port),
    ``operators`` (the operators file, ``controller.control.operators``) and ``recall``, how many of the last
    rounds the screen's game recall reaches (``MIN_RECALL`` to ``MAX_RECALL``; ``controller.control.recall``)."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    operators: Path | None = None
    recall: int = MIN_RECALL


def parse_control_config(path: Path, entry: Any) -> ControlConfig:
    """Check the ``control:`` mapping of the table file at ``path`` (None: the defaults, interface off).

    A relative ``operators`` path is relative to the table file's folder (default ``operators.yaml`` there).
    Raises ``ConfigError`` naming the file, the line (when ``entry`` was read from it) and the key for an
    unknown key, a non-boolean ``enabled``, a port outside 0-65535, an ``operators`` that is not a file path
    (non-blank text), a ``recall`` that is not an integer from ``MIN_RECALL`` to ``MAX_RECALL``, or a host that
    is not a literal loopback address (127.0.0.0/8 or ::1) written as text: the interface sends dealer and
    supervisor actions and must not be reachable from the network (docs/control.md).
    """
    path = Path(path)
    entry = {} if entry is None else entry
    check_keys(path, "control", entry, set(), {"enabled", "host", "port", "operators", "recall"})
    enabled = entry.get("enabled", False)
    if not isinstance(enabled, bool):
        raise error(path, "control.enabled", f"expected true or false, got {enabled!r}", line_of(entry, "enabled"))
    host = entry.get("host", "127.0.0.1")
    try:
        loopback = isinstance(host, str) and ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise error(path, "control.host", f"{host!r} is not a loopback address (127.0.0.1 or ::1); the control "
                    "interface is never served to the network", line_of(entry, "host"))
    port = require_int(path, "control.port", entry.get("port", DEFAULT_PORT), 0, line_of(entry, "port"))
    if port > 65535:
        raise error(path, "control.port", f"{port} is above 65535", line_of(entry, "port"))
    operators = require_text(path, "control.operators", entry.get("operators", "operators.yaml"), "a file path",
                             line_of(entry, "operators"))
    recall = require_int(path, "control.recall", entry.get("recall", MIN_RECALL), MIN_RECALL, line_of(entry, "recall"),
                         MAX_RECALL)
    return ControlConfig(enabled, host, port, path.parent / operators, recall)
