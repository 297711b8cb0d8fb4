"""Device simulators on an in-process line instead of a pty (design.md "Layers of a link"; docs/protocol.md,
"Fault injection (simulators)").

``on_pair(ShoeSimulator, seed=7)`` builds a simulator exactly as its class does, but its line is a
``drivers.transport.transport_pair``: no pseudo-terminal, no file descriptor. A driver reaches it with
``opener=sim.open_port`` and the url ``sim.port`` (``pair://<kind>/<device id>``)::

    sim = on_pair(ShoeSimulator, seed=7)
    sim.start()
    driver = ShoeDriver(sim.port, events, opener=sim.open_port)

Each ``open_port`` is a new connection (a new pair), as each open of a serial port is: the device keeps its
state across them, bytes it sends while nobody holds the port are lost, and the port is exclusive (a second
open while one is held raises ``OSError``, as ``exclusive=True`` does). ``unplug`` closes the connection and
refuses opens until ``replug``, which comes back under the same port name (there is no ``link_dir`` symlink
and no ``search`` glob finds a pair: a driver finds it again at its last port). ``host_noise`` is the
``Manipulator`` of what the device sends on the current connection (line noise, ``drivers.transport``).

Everything else (framing, acknowledgements, faults, ``chaos``) is the simulator's own code, unchanged. What
differs from a pty: no kernel buffer (a write never blocks) and no terminal settings; delayed and split frames
leave within ``POLL`` seconds of their time.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from drivers.sim import PtySimulator
from drivers.transport import PairEnd, Transport, transport_pair

log = logging.getLogger(__name__)

#: Longest a simulator's reader blocks on the pair (seconds): the grain of its resends and delayed frames.
POLL = 0.02

S = TypeVar("S", bound=PtySimulator)


class PairLine:
    """Mixin that replaces a ``PtySimulator``'s pty by one ``transport_pair`` per connection (module
    docstring). Put before the simulator class: ``class PairShoe(PairLine, ShoeSimulator)``."""

    _device_end: PairEnd | None = None
    _host_end: PairEnd | None = None
    _unplugged = False
    connections = 0

    def _open_line(self) -> None:
        self._unplugged = False
        self.port = f"pair://{self.kind}/{self.device_id}"  # type: ignore[attr-defined]

    def _close_line(self) -> None:
        self._unplug_line()

    def _unplug_line(self) -> None:
        self._unplugged = True
        end, self._device_end = self._device_end, None
        if end is not None:
            end.close()

    def _line_open(self) -> bool:
        return not self._unplugged

    def _write_line(self, data: bytes) -> None:
        if self._unplugged:
            raise OSError(f"{self.kind} simulator is unplugged or stopped")  # type: ignore[attr-defined]
        end = self._device_end
        if end is None:
            return  # nobody holds the port: the bytes are lost on the line
        try:
            end.write(data)
        except OSError:
            log.debug("%s: the host closed its port, %d bytes lost", self.port, len(data))  # type: ignore

    def _read_line(self, wait: float) -> bytes:
        if self._unplugged:
            raise OSError(f"{self.kind} simulator is unplugged or stopped")  # type: ignore[attr-defined]
        end = self._device_end
        if end is None:
            self._reader_stop.wait(min(wait, POLL))  # type: ignore[attr-defined]
            return b""
        try:
            return end.read()
        except OSError:  # the host closed its port; the device waits for the next open
            with self.lock:  # type: ignore[attr-defined]
                if self._device_end is end:
                    self._device_end = None
            return b""

    def open_port(self, port: str) -> Transport:
        """The opener for a driver (``drivers.link.Device``'s ``opener``): a new connection to this device.
        ``OSError`` for another port name, while unplugged or stopped, or while the port is held."""
        with self.lock:  # type: ignore[attr-defined]
            if port != self.port or self._unplugged:  # type: ignore[attr-defined]
                raise OSError(f"cannot open {port}: no such device")
            if self._device_end is not None and self._host_end is not None and not self._host_end.closed:
                raise OSError(f"cannot open {port}: the port is held by another process")
            self._host_end, self._device_end = transport_pair(self.port, poll=POLL)  # type: ignore[attr-defined]
            self.connections += 1
            return self._host_end

    @property
    def host_noise(self) -> Any:
        """The ``Manipulator`` of what the device sends on the current connection (``None`` without one)."""
        end = self._device_end
        return end.noise if end is not None else None


def on_pair(cls: type[S], **options: Any) -> S:
    """A simulator of class ``cls`` (``ShoeSimulator``, ``SensorSimulator``, ``PanelSimulator``, ...) built with
    ``options`` (no ``link_dir``), its line an in-process pair instead of a pty (module docstring)."""
    if options.get("link_dir") is not None:
        raise ValueError("a simulator on a pair keeps no link_dir symlink")
    pair_class = type(f"Pair{cls.__name__}", (PairLine, cls), {"__doc__": f"{cls.__name__} on an in-process line."})
    return pair_class(**options)
