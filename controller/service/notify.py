"""systemd's notify protocol (sd_notify(3), systemd.service(5) ``Type=notify``, ``WatchdogSec=``), and log lines
for the journal.

The service manager passes ``NOTIFY_SOCKET`` (a path, or ``@name`` for an abstract socket); the service sends
it datagrams of ``KEY=VALUE`` lines: ``READY=1`` once it is up, ``STATUS=...`` for ``systemctl status``,
``WATCHDOG=1`` at least once per ``WATCHDOG_USEC`` microseconds (else the manager kills and restarts it),
``STOPPING=1`` when it begins to stop. Without ``NOTIFY_SOCKET`` nothing is sent.

The notifier is owned by the controller thread (``controller.service.loop.Controller``), which alone sends on it:
the watchdog then proves that the thread that applies every input is alive, not merely the process.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Mapping


class Notifier:
    """Datagrams to ``NOTIFY_SOCKET``; every method is a no-op when the variable is absent.

    ``watchdog_interval`` is ``WATCHDOG_USEC`` in seconds (None without a watchdog, or when ``WATCHDOG_PID``
    names another process). A send that fails (the manager went away) is logged once and never raises: the
    table goes on without its supervisor.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        environ = os.environ if environ is None else environ
        address = environ.get("NOTIFY_SOCKET", "")
        self.address: str | None = ("\0" + address[1:] if address.startswith("@") else address) or None
        self.watchdog_interval: float | None = None
        usec, pid = environ.get("WATCHDOG_USEC", ""), environ.get("WATCHDOG_PID", "")
        if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            self.watchdog_interval = int(usec) / 1e6
        self._socket: socket.socket | None = None
        self._failed = False
        self._last_watchdog = 0.0

    @property
    def enabled(self) -> bool:
        """True when a service manager listens."""
        return self.address is not None

    def send(self, **fields: str) -> None:
        """Send one datagram of ``KEY=VALUE`` lines (``send(READY="1", STATUS="...")``)."""
        if self.address is None:
            return
        text = "\n".join(f"{key}={str(value).replace(chr(10), ' ')}" for key, value in fields.items())
        try:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._socket.sendto(text.encode("utf-8", "replace"), self.address)
        except OSError as exc:
            if not self._failed:
                logging.getLogger(__name__).warning("cannot notify the service manager at %s: %s",
                                                    self.address.replace("\0", "@"), exc)
            self._failed = True

    def watchdog(self, now: float | None = None) -> None:
        """``WATCHDOG=1``, at most four times per watchdog interval (the caller may call it as often as its loop
        turns)."""
        if self.watchdog_interval is None:
            return
        now = time.monotonic() if now is None else now
        if now - self._last_watchdog >= self.watchdog_interval / 4:
            self._last_watchdog = now
            self.send(WATCHDOG="1")

    def close(self) -> None:
        """Close the socket (idempotent)."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None


#: journald's priorities (syslog levels) by logging level.
PRIORITIES: dict[int, int] = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4, logging.INFO: 6,
                              logging.DEBUG: 7}


class JournaldFormatter(logging.Formatter):
    """Log lines for journald's stream: ``<priority>name: message``, without a time stamp of their own (journald
    keeps the time); journald reads the ``<N>`` prefix as the line's priority (systemd.exec(5),
    ``SyslogLevelPrefix=``)."""

    def format(self, record: logging.LogRecord) -> str:
        priority = PRIORITIES.get(record.levelno, 6 if record.levelno < logging.WARNING else 3)
        text = f"{record.name}: {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return "\n".join(f"<{priority}>{line}" for line in text.splitlines())


def under_journald(environ: Mapping[str, str] | None = None, fd: int = 2) -> bool:
    """True when ``fd`` (standard error) is the journal's stream: ``JOURNAL_STREAM`` names its device and inode
    (systemd.exec(5))."""
    environ = os.environ if environ is None else environ
    device, _, inode = environ.get("JOURNAL_STREAM", "").partition(":")
    try:
        info = os.fstat(fd)
    except OSError:
        return False
    return device.isdigit() and inode.isdigit() and (info.st_dev, info.st_ino) == (int(device), int(inode))
