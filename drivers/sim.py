"""Device simulators behind a real pseudo-terminal (docs/protocol.md; design.md "Drivers at the edge").

A ``PtySimulator`` creates a pty pair, keeps both ends open and exposes the slave's path as ``.port``; a driver
opens that path with pyserial exactly as it opens ``/dev/ttyUSB0``. The simulator reads the master end on one
thread, decodes frames with the same ``FrameDecoder`` the drivers use, answers HELLO with IDENT and hands every
other frame to the subclass's ``handle``.

What it does not model: baud rate and transmission time (a pty moves bytes instantly), electrical noise (no
corrupted bytes unless a test writes them with ``send_raw``), flow control, the device's power-up time, and a
device that reboots (its sequence counter and state live as long as the object). Its FAULT answers are only the
ones a test injects. It never NAKs a frame with a bad CRC (the decoder drops it; the driver times out and
retransmits). Writes to the master block if nobody reads the slave and the pty buffer (some KiB) fills up.

Fault injection for tests (OctoPrint style): ``ignore_next(n)`` drops the next n received frames, as if they
were lost on the way in; ``drop_replies(n)`` drops the next n frames the simulator sends, as if lost on the way
out; ``unplug()`` closes the master end, which the driver sees as a lost link.
"""

from __future__ import annotations

import abc
import logging
import os
import select
import threading
import tty
from collections import deque
from collections.abc import Callable
from typing import ClassVar

from drivers import framing
from drivers.framing import Frame, FrameDecoder, ProtocolError

log = logging.getLogger(__name__)

#: How many past frames, messages or stacks a simulator remembers.
HISTORY = 100_000

#: How long the reader thread waits in select before checking for stop (seconds).
SELECT_INTERVAL = 0.05


class PtySimulator(abc.ABC):
    """Base class of a device simulator on a pty; subclasses set ``kind`` and implement ``handle``.

    ``device_id`` and ``firmware`` are reported in IDENT. Public methods are thread-safe: one re-entrant lock
    (``self.lock``, also the ``self.changed`` condition, notified after every handled frame) guards the state.
    ``handle`` runs on the reader thread with the lock held. Raises ``OSError`` if no pty can be created.
    """

    kind: ClassVar[str] = ""

    def __init__(self, device_id: str, firmware: str = "sim-1.0") -> None:
        if not self.kind:
            raise TypeError(f"{type(self).__name__} must set the class attribute 'kind'")
        self.device_id = device_id
        self.firmware = firmware
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self._master: int | None = None
        self._slave: int | None = None
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        #: Path of the slave end, for the driver to open (``/dev/pts/N``).
        self.port: str = os.ttyname(self._slave)
        self._decoder = FrameDecoder(name=f"{self.kind}-sim<-")
        self._seq = 0
        self._ignore = 0
        self._drop = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: The last ``HISTORY`` frames received and accepted by the decoder, in order (ignored ones included);
        #: bounded so that a simulator running for days keeps a constant memory.
        self.received: deque[Frame] = deque(maxlen=HISTORY)

    # ----------------------------------------------------------------------------------------------------
    # Lifecycle.

    def start(self) -> None:
        """Start the reader thread (non-daemon, named ``<kind>-sim``). ``RuntimeError`` if started before."""
        if self._thread is not None:
            raise RuntimeError(f"{self.kind} simulator already started")
        self._thread = threading.Thread(target=self._run, name=f"{self.kind}-sim", daemon=False)
        self._thread.start()

    def stop(self) -> None:
        """End the reader thread and close both ends of the pty. Safe to call more than once."""
        self._halt()
        with self.lock:
            for attr in ("_master", "_slave"):
                fd = getattr(self, attr)
                if fd is not None:
                    setattr(self, attr, None)
                    os.close(fd)

    def unplug(self) -> None:
        """Close the master end, like pulling the USB adapter: the driver's next read or write fails.

        The reader thread ends first, so no thread is left selecting on a closed descriptor. The slave end
        stays open until ``stop()``.
        """
        self._halt()
        with self.lock:
            if self._master is not None:
                fd, self._master = self._master, None
                os.close(fd)

    def _halt(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(5.0)
            if thread.is_alive():
                raise TimeoutError(f"{self.kind} simulator thread did not end")

    # ----------------------------------------------------------------------------------------------------
    # Fault injection and sending.

    def ignore_next(self, count: int = 1) -> None:
        """Drop the next ``count`` received frames without handling them (lost on the way to the device)."""
        with self.lock:
            self._ignore += count

    def drop_replies(self, count: int = 1) -> None:
        """Drop the next ``count`` frames this simulator sends (lost on the way to the host); the device's
        state changes as if they had been delivered."""
        with self.lock:
            self._drop += count

    def send(self, msg_type: int, payload: bytes = b"") -> None:
        """Frame ``payload`` with the simulator's own seq counter (wraps 255 -> 0) and write it to the master.

        Raises ``ProtocolError`` for an oversized payload and ``OSError`` when unplugged or stopped.
        """
        with self.lock:
            data = framing.encode_frame(self._seq, msg_type, payload)
            self._seq = (self._seq + 1) & 0xFF
            if self._drop:
                self._drop -= 1
                log.debug("%s-sim: dropped outgoing %s", self.kind, framing.message_name(msg_type))
                return
            self.send_raw(data)

    def send_raw(self, data: bytes) -> None:
        """Write raw bytes to the master end (for corrupted or split frames in tests); ``OSError`` if closed."""
        with self.lock:
            if self._master is None:
                raise OSError(f"{self.kind} simulator is unplugged or stopped")
            view = memoryview(data)
            while view:
                written = os.write(self._master, view)
                view = view[written:]

    def nak(self, seq: int, reason: int) -> None:
        """Send NAK for the frame ``seq`` with ``reason`` (``framing.NAK_REASONS``)."""
        self.send(framing.NAK, framing.encode_nak(seq, reason))

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate()`` (called with the lock held) is true or ``timeout`` seconds passed."""
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    # ----------------------------------------------------------------------------------------------------
    # For subclasses.

    @abc.abstractmethod
    def handle(self, frame: Frame) -> None:
        """Act on one host frame other than HELLO (reader thread, lock held). Raise ``ProtocolError`` to have
        the simulator NAK it with the error's ``nak_reason``."""

    # ----------------------------------------------------------------------------------------------------
    # Reader thread.

    def _run(self) -> None:
        master = self._master
        if master is None:
            return
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([master], [], [], SELECT_INTERVAL)
                if not ready:
                    continue
                data = os.read(master, 4096)
            except OSError as exc:
                log.error("%s-sim: reading the pty master failed, reader ends: %s", self.kind, exc)
                return
            for frame in self._decoder.feed(data):
                self._dispatch(frame)

    def _dispatch(self, frame: Frame) -> None:
        with self.changed:
            try:
                self.received.append(frame)
                if self._ignore:
                    self._ignore -= 1
                    log.debug("%s-sim: ignored %r", self.kind, frame)
                    return
                try:
                    if frame.msg_type == framing.HELLO:
                        framing.decode_hello(frame.payload)
                        self.send(
                            framing.IDENT,
                            framing.encode_ident(framing.PROTOCOL_VERSION, self.kind, self.device_id, self.firmware),
                        )
                    elif frame.msg_type == framing.NAK:
                        log.warning("%s-sim: host rejected our frame: %s", self.kind, framing.decode_nak(frame.payload))
                    else:
                        self.handle(frame)
                except ProtocolError as exc:
                    log.warning("%s-sim: rejecting frame seq=%d: %s", self.kind, frame.seq, exc)
                    self.nak(frame.seq, exc.nak_reason)
            except OSError as exc:
                log.error("%s-sim: cannot answer frame seq=%d: %s", self.kind, frame.seq, exc)
            finally:
                self.changed.notify_all()
