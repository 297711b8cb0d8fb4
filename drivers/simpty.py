"""The simulator's end of the line on a pseudo-terminal: a pty pair whose slave path a driver opens as a
serial port, the ``link_dir`` symlink kept as udev keeps ``/dev/serial/by-id``, and the former ptys of replugs
held open so that their names are never another process's (docs/protocol.md, "Fault injection (simulators)":
``unplug``, ``replug``).

``PtyLine`` is a part of ``drivers.sim.PtySimulator``; ``drivers.pairsim.PairLine`` replaces it by an
in-process ``transport_pair``.
"""

from __future__ import annotations

import os
import select
import tty
from pathlib import Path

#: Former ptys a simulator keeps open after replugs (their names stay taken); beyond it the oldest is closed.
MAX_FORMER_PTYS = 32


class PtyLine:
    """The line of a ``PtySimulator`` on a pty (``port`` is the slave's path); the simulator holds the state
    (``_master``, ``_slave``, ``_former_slaves``, ``port``, ``link_path``) and the lock these methods expect."""

    link_path: Path | None

    def _open_line(self) -> None:
        """Open the device's end of the line and set ``port`` (at start and at a replug; lock held)."""
        self._open_pty()

    def _close_line(self) -> None:
        """Close every end of the line (``stop``; lock held)."""
        for attr in ("_master", "_slave"):
            fd = getattr(self, attr)
            if fd is not None:
                setattr(self, attr, None)
                os.close(fd)
        while self._former_slaves:
            os.close(self._former_slaves.pop())

    def _unplug_line(self) -> None:
        """Close the device's end only, as a pulled USB adapter (lock held, reader thread ended)."""
        if self._master is not None:
            fd, self._master = self._master, None
            os.close(fd)

    def _line_open(self) -> bool:
        """Whether the device's end of the line is open (lock held)."""
        return self._master is not None

    def _write_line(self, data: bytes) -> None:
        """Write ``data`` whole to the device's end (lock held); ``OSError`` if it is closed."""
        if self._master is None:
            raise OSError(f"{self.kind} simulator is unplugged or stopped")
        view = memoryview(data)
        while view:
            written = os.write(self._master, view)
            view = view[written:]

    def _read_line(self, wait: float) -> bytes:
        """Bytes from the host, waiting at most ``wait`` seconds (reader thread); ``b""`` if none came.
        ``OSError`` when the device's end was closed."""
        master = self._master
        if master is None:
            raise OSError(f"{self.kind} simulator is unplugged or stopped")
        ready, _, _ = select.select([master], [], [], max(wait, 0.0))
        return os.read(master, 4096) if ready else b""

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        old_slave = self._slave
        self._master, self._slave = master, slave
        self.port = os.ttyname(slave)
        link = self.link_path
        if link is not None:
            link.parent.mkdir(parents=True, exist_ok=True)
            # a hidden name while it is made: a search of the folder (``by-id/*``) never finds it half-way
            tmp = link.with_name(f".{link.name}.new")
            if tmp.is_symlink():
                tmp.unlink()
            os.symlink(self.port, tmp)
            os.replace(tmp, link)  # atomic, as udev does
        if old_slave is not None:  # kept open (``_former_slaves``): its name is never another pty's meanwhile
            self._former_slaves.append(old_slave)
            if len(self._former_slaves) > MAX_FORMER_PTYS:  # a long soak's replugs: the oldest name is let go
                os.close(self._former_slaves.pop(0))
