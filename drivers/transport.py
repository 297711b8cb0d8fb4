"""Transports: how the bytes of one link move (design.md "Layers of a link": transport, then framer, session and
transaction in ``drivers.link`` and its parts, then the device drivers).

A ``Transport`` is an open byte link to one device. ``SerialTransport`` is a pySerial port (a real port, a
pseudo-terminal, or any URL pySerial opens, ``sim://`` included). ``transport_pair`` makes an in-process pair of
ends joined like a null modem, each direction through a ``Manipulator`` that splits, drops, corrupts or delays
what is written, as line noise does; a driver runs over it without a pty.
"""

from __future__ import annotations

import abc
import collections
import termios
import threading
import time

import serial

#: Exceptions that mean the link is gone (unplugged adapter, closed pty master, write timeout, closed pair).
LINK_ERRORS: tuple[type[BaseException], ...] = (serial.SerialException, OSError, termios.error)

#: Serial settings (docs/protocol.md, "Physical link"): 115200 baud, 8N1.
BAUDRATE = 115200


class Transport(abc.ABC):
    """An open byte link to one device. ``read``, ``write`` and ``close`` belong to one thread (a driver's owner
    thread); ``wake`` may be called from any thread. A lost link raises one of ``LINK_ERRORS``."""

    @abc.abstractmethod
    def read(self) -> bytes:
        """The bytes received, waiting at most the poll interval for the first; ``b""`` if none came (or
        ``wake`` was called)."""

    @abc.abstractmethod
    def write(self, data: bytes) -> None:
        """Send ``data`` whole (a write that cannot complete in the write timeout raises)."""

    @abc.abstractmethod
    def wake(self) -> None:
        """End a ``read`` in progress at once (any thread)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close the link; safe to call more than once."""


class SerialTransport(Transport):
    """A pySerial port opened exclusively at 115200 baud with a read timeout of ``poll`` and a write timeout of
    ``write_timeout`` seconds (design.md "pySerial habits"); reads take ``in_waiting or 1`` bytes. Raises one of
    ``LINK_ERRORS`` if the port cannot be opened."""

    def __init__(self, port: str, *, poll: float, write_timeout: float) -> None:
        self.port = port
        self._ser = serial.serial_for_url(port, baudrate=BAUDRATE, timeout=poll, write_timeout=write_timeout,
                                          exclusive=True)

    def read(self) -> bytes:
        """As ``Transport.read``."""
        return self._ser.read(self._ser.in_waiting or 1)

    def write(self, data: bytes) -> None:
        """As ``Transport.write``."""
        self._ser.write(data)

    def wake(self) -> None:
        """As ``Transport.wake`` (``cancel_read``)."""
        if self._ser.is_open:
            self._ser.cancel_read()

    def close(self) -> None:
        """As ``Transport.close``."""
        self._ser.close()


class Manipulator:
    """What a noisy line does to one direction of a ``transport_pair``, for the writes to come (thread-safe):

    - ``split(size)``: every write arrives in pieces of at most ``size`` bytes (0: whole);
    - ``drop(count)``: the next ``count`` writes are lost;
    - ``corrupt(count, at)``: the next ``count`` writes get the byte at index ``at`` XOR 0x5A (an index past
      the end means the last byte);
    - ``delay(seconds)``: every write arrives ``seconds`` late (order is kept, as on a line).

    ``dropped`` and ``corrupted`` count what was done. Does not model: bytes lost or changed at random, or
    baud rate (bytes move as fast as the reader takes them).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._split = 0
        self._drop = 0
        self._corrupt: collections.deque[int] = collections.deque()
        self._delay = 0.0
        self.dropped = 0
        self.corrupted = 0

    def split(self, size: int) -> None:
        """Deliver each write in pieces of at most ``size`` bytes (0: whole)."""
        with self._lock:
            self._split = size

    def drop(self, count: int = 1) -> None:
        """Lose the next ``count`` writes."""
        with self._lock:
            self._drop += count

    def corrupt(self, count: int = 1, at: int = 1) -> None:
        """Flip the byte at index ``at`` of each of the next ``count`` writes."""
        with self._lock:
            self._corrupt.extend([at] * count)

    def delay(self, seconds: float) -> None:
        """Deliver every write ``seconds`` late."""
        with self._lock:
            self._delay = seconds

    def apply(self, data: bytes) -> tuple[float, list[bytes]]:
        """What becomes of one write: ``(delay, pieces)``; no pieces when it is lost."""
        with self._lock:
            if self._drop:
                self._drop -= 1
                self.dropped += 1
                return 0.0, []
            if self._corrupt and data:
                at = min(self._corrupt.popleft(), len(data) - 1)
                data = data[:at] + bytes((data[at] ^ 0x5A,)) + data[at + 1:]
                self.corrupted += 1
            size = self._split or len(data) or 1
            return self._delay, [data[i:i + size] for i in range(0, len(data), size)]


class _Wire:
    """One direction of a pair: pieces of bytes with the time they may be read."""

    def __init__(self) -> None:
        self.ready = threading.Condition()
        self.pieces: collections.deque[tuple[float, bytes]] = collections.deque()
        self.woken = False


class PairEnd(Transport):
    """One end of a ``transport_pair``: reads what the other end wrote (after the other end's ``noise``),
    waiting at most ``poll`` seconds. After either end is closed, reads and writes at this end raise
    ``OSError`` (as a pulled USB adapter). ``noise`` is the ``Manipulator`` of what this end writes."""

    def __init__(self, name: str, incoming: _Wire, outgoing: _Wire, closed: threading.Event, poll: float) -> None:
        self.name = name
        self.noise = Manipulator()
        self._in, self._out, self._closed, self._poll = incoming, outgoing, closed, poll

    @property
    def closed(self) -> bool:
        """Whether the pair was closed (at either end)."""
        return self._closed.is_set()

    def _check(self) -> None:
        if self._closed.is_set():
            raise OSError(f"{self.name}: the pair is closed")

    def read(self) -> bytes:
        """As ``Transport.read``."""
        self._check()
        deadline = time.monotonic() + self._poll
        wire = self._in
        with wire.ready:
            while True:
                now = time.monotonic()
                if wire.woken:
                    wire.woken = False
                    return b""
                if wire.pieces and wire.pieces[0][0] <= now:
                    data = bytearray()
                    while wire.pieces and wire.pieces[0][0] <= now:
                        data += wire.pieces.popleft()[1]
                    return bytes(data)
                if now >= deadline or self._closed.is_set():
                    self._check()
                    return b""
                due = wire.pieces[0][0] if wire.pieces else deadline
                wire.ready.wait(min(deadline, due) - now)

    def write(self, data: bytes) -> None:
        """As ``Transport.write``; the bytes go through ``noise``."""
        self._check()
        delay, pieces = self.noise.apply(bytes(data))
        wire = self._out
        with wire.ready:
            due = time.monotonic() + delay
            if wire.pieces:
                due = max(due, wire.pieces[-1][0])  # a line keeps its order
            wire.pieces.extend((due, piece) for piece in pieces)
            wire.ready.notify_all()

    def wake(self) -> None:
        """As ``Transport.wake``."""
        with self._in.ready:
            self._in.woken = True
            self._in.ready.notify_all()

    def close(self) -> None:
        """Close the pair (both ends)."""
        self._closed.set()
        for wire in (self._in, self._out):
            with wire.ready:
                wire.ready.notify_all()


def transport_pair(name: str = "pair", *, poll: float = 0.05) -> tuple[PairEnd, PairEnd]:
    """Two ends joined in process, ``(host, device)``: what one writes the other reads. Each end's ``noise``
    manipulates what it writes."""
    to_device, to_host, closed = _Wire(), _Wire(), threading.Event()
    return (PairEnd(f"{name}:host", to_host, to_device, closed, poll),
            PairEnd(f"{name}:device", to_device, to_host, closed, poll))
