"""The device base class: one owner thread per serial port (docs/protocol.md, "Handshake", "Timing").

``Device`` owns everything a driver shares: opening the port with pyserial, the HELLO/IDENT handshake, the
frame decoder, sequence numbers, the outbound queue, retransmission of requests that got no answer, NAK and
FAULT handling, and turning link errors into ``DeviceFault`` events. Concrete drivers (``ShoeDriver``,
``SensorDriver``, ``PanelDriver``) add command methods that enqueue frames and a ``handle_frame`` hook that
turns the device's frames into events.

Threading model: ``start()`` starts one non-daemon owner thread named after the device. Only that thread
touches the port (opens, reads, writes, closes it) and the table of outstanding requests. Command methods may be
called from any thread: they validate their arguments, put the frame on a queue and wake the owner thread
with ``cancel_read()``. Events go to the ``events`` queue given to the constructor.

Not yet done (later work): reconnection. After a link error the owner thread posts
``DeviceFault(kind, "link_lost", detail)``, closes the port and ends; the controller decides what to do.
"""

from __future__ import annotations

import abc
import logging
import queue
import termios
import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import serial

from drivers import framing
from drivers.events import DeviceFault, DeviceReady
from drivers.framing import Frame, FrameDecoder, ProtocolError

log = logging.getLogger(__name__)

#: Exceptions that mean the port is gone (unplugged adapter, closed pty master, write timeout).
LINK_ERRORS: tuple[type[BaseException], ...] = (serial.SerialException, OSError, termios.error)

#: Serial settings (docs/protocol.md, "Timing"): 115200 baud, 8N1.
BAUDRATE = 115200
#: Longest the owner thread blocks in one read (seconds); commands also wake it at once via cancel_read.
POLL_INTERVAL = 0.05
#: A write that cannot complete within this many seconds is a lost link (seconds).
WRITE_TIMEOUT = 1.0


class DeviceNotRunning(RuntimeError):
    """A command was given to a driver whose owner thread is not running (never started, stopped, or ended
    after a fault that was already posted as ``DeviceFault``)."""


@dataclass
class _Outgoing:
    msg_type: int
    payload: bytes
    key: Hashable | None = None  # set for requests that expect an answer (retransmitted on timeout)
    what: str = ""


@dataclass
class _Pending:
    key: Hashable
    msg_type: int
    payload: bytes
    what: str
    deadline: float
    sends: int = 1
    seqs: list[int] = field(default_factory=list)


class Device(abc.ABC):
    """Base class of a device driver; subclasses set ``kind`` and implement ``handle_frame``.

    ``url`` is anything ``serial.serial_for_url`` opens (``/dev/ttyUSB0``, a pty slave path, ``loop://``).
    ``events`` receives ``DeviceReady``, ``DeviceFault`` and the device's own events. ``name`` (default: the
    kind) names the owner thread and the log lines. Timing (docs/protocol.md, "Timing"): the device must answer
    HELLO within ``handshake_timeout`` seconds; a request without its answer after ``response_timeout``
    seconds is sent again as a new frame (new seq, same payload) up to ``retries`` more times, then
    ``DeviceFault(kind, "timeout")`` is posted and the request is dropped (the thread keeps running).

    Fault codes posted: ``link_lost`` (port cannot be opened or failed; the thread ends), ``handshake`` (no
    IDENT, wrong protocol version or wrong kind; the thread ends), ``timeout``, ``protocol`` (the device
    NAKed one of our frames), ``internal`` (a bug in a driver; logged with traceback, the thread ends), and
    device FAULT codes mapped by ``fault_name``.
    """

    kind: ClassVar[str] = ""

    def __init__(
        self,
        url: str,
        events: queue.Queue[Any],
        *,
        name: str | None = None,
        handshake_timeout: float = 2.0,
        response_timeout: float = 2.0,
        retries: int = 3,
    ) -> None:
        if not self.kind:
            raise TypeError(f"{type(self).__name__} must set the class attribute 'kind'")
        if handshake_timeout <= 0 or response_timeout <= 0:
            raise ValueError("timeouts must be positive seconds")
        if retries < 0:
            raise ValueError("retries must be >= 0")
        self.url = url
        self.events = events
        self.name = name or self.kind
        self.handshake_timeout = handshake_timeout
        self.response_timeout = response_timeout
        self.retries = retries
        self.ident: framing.Ident | None = None
        #: Frames from the device we could not use (bad payload, unexpected type); each was logged and NAKed.
        self.protocol_errors = 0
        self.decoder = FrameDecoder(name=f"{self.name}<-")
        self._seq = 0
        self._outbox: queue.SimpleQueue[_Outgoing] = queue.SimpleQueue()
        self._pending: dict[Hashable, _Pending] = {}
        self._stop = threading.Event()
        self._port_lock = threading.Lock()
        self._ser: serial.SerialBase | None = None
        self._thread: threading.Thread | None = None
        self._log = logging.getLogger(type(self).__module__)  # one logger per driver module

    # ----------------------------------------------------------------------------------------------------
    # Public lifecycle.

    def start(self) -> None:
        """Start the owner thread (non-daemon, named ``name``). ``RuntimeError`` if started before."""
        if self._thread is not None:
            raise RuntimeError(f"{self.name}: already started")
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=False)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the owner thread to end, wake it and join it; the thread closes the port.

        Safe to call more than once and after the thread ended by itself. ``TimeoutError`` if the thread is
        still alive after ``timeout`` seconds (it cannot block longer than the write timeout, so this is a bug).
        """
        self._stop.set()
        self._wake()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                raise TimeoutError(f"{self.name}: owner thread did not end within {timeout} s")

    @property
    def running(self) -> bool:
        """True while the owner thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the owner thread to end (for example after a link fault); return True if it ended."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    # ----------------------------------------------------------------------------------------------------
    # For subclasses.

    @abc.abstractmethod
    def handle_frame(self, frame: Frame) -> list[Any]:
        """Turn one frame of a device-specific type into events (runs on the owner thread).

        Raise ``ProtocolError`` (with ``nak_reason=1`` for an unknown type) to have the frame logged, counted
        in ``protocol_errors`` and NAKed. Call ``answered(key)`` to settle an outstanding request; post the
        answer's event only when it returns True, so a late duplicate answer is not posted twice.
        """

    def fault_name(self, code: int) -> str:
        """Map a FAULT code to a ``DeviceFault.code``; the default is ``"fault_<code>"``."""
        return f"fault_{code}"

    def send(self, msg_type: int, payload: bytes) -> None:
        """Queue a frame that expects no answer (fire and forget) for the owner thread to write."""
        self._enqueue(_Outgoing(msg_type, payload))

    def request(self, key: Hashable, msg_type: int, payload: bytes, what: str) -> None:
        """Queue a frame that expects an answer identified by ``key``; it is retransmitted (new seq, same
        payload) every ``response_timeout`` seconds until ``answered(key)``, at most ``retries`` times, then
        ``DeviceFault(kind, "timeout", what)`` is posted. A request with a key already outstanding replaces it
        and is sent again. ``what`` describes it in logs and fault details (never with card values)."""
        self._enqueue(_Outgoing(msg_type, payload, key, what))

    def outstanding_payload(self, key: Hashable) -> bytes | None:
        """Payload of the outstanding request ``key`` (owner thread only), or None if none is outstanding."""
        pending = self._pending.get(key)
        return None if pending is None else pending.payload

    def answered(self, key: Hashable) -> bool:
        """Settle the outstanding request ``key`` (owner thread only); False if none was outstanding."""
        return self._pending.pop(key, None) is not None

    def post(self, event: Any) -> None:
        """Put an event on the controller's queue."""
        self.events.put(event)

    # ----------------------------------------------------------------------------------------------------
    # Internals.

    def _enqueue(self, item: _Outgoing) -> None:
        if not self.running or self._stop.is_set():
            raise DeviceNotRunning(f"{self.name}: driver is not running")
        self._outbox.put(item)
        self._wake()

    def _wake(self) -> None:
        with self._port_lock:
            ser = self._ser
            if ser is not None and ser.is_open:
                try:
                    ser.cancel_read()
                except LINK_ERRORS as exc:  # the owner thread sees the same failure on its next read
                    self._log.debug("%s: cancel_read failed: %s", self.name, exc)

    def _fault(self, code: str, detail: str) -> None:
        self._log.error("%s: fault %s: %s", self.name, code, detail)
        self.post(DeviceFault(self.kind, code, detail))

    def _run(self) -> None:
        try:
            ser = serial.serial_for_url(
                self.url,
                baudrate=BAUDRATE,
                timeout=POLL_INTERVAL,
                write_timeout=WRITE_TIMEOUT,
                exclusive=True,
            )
        except LINK_ERRORS as exc:
            self._log.error("%s: cannot open %s: %s", self.name, self.url, exc)
            self.post(DeviceFault(self.kind, "link_lost", f"cannot open {self.url}: {exc}"))
            return
        with self._port_lock:
            self._ser = ser
        try:
            if self._handshake(ser):
                self._serve(ser)
        except LINK_ERRORS as exc:
            if self._stop.is_set():
                self._log.info("%s: link error while stopping: %s", self.name, exc)
            else:
                self._fault("link_lost", f"{self.url}: {exc}")
        except Exception as exc:
            self._log.exception("%s: driver failure", self.name)
            self.post(DeviceFault(self.kind, "internal", f"{type(exc).__name__}: {exc}"))
        finally:
            with self._port_lock:
                self._ser = None
            try:
                ser.close()
            except LINK_ERRORS as exc:
                self._log.debug("%s: close failed: %s", self.name, exc)
            self._log.info("%s: owner thread ended, port %s closed", self.name, self.url)

    def _write(self, ser: serial.SerialBase, msg_type: int, payload: bytes) -> int:
        seq = self._seq
        self._seq = (self._seq + 1) & 0xFF
        data = framing.encode_frame(seq, msg_type, payload)
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug("%s -> %s", self.name, data.hex(" "))
        ser.write(data)
        return seq

    def _read_frames(self, ser: serial.SerialBase) -> list[Frame]:
        data = ser.read(ser.in_waiting or 1)
        if not data:
            return []
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug("%s <- %s", self.name, data.hex(" "))
        return self.decoder.feed(data)

    def _handshake(self, ser: serial.SerialBase) -> bool:
        self._write(ser, framing.HELLO, framing.encode_hello())
        deadline = time.monotonic() + self.handshake_timeout
        while not self._stop.is_set():
            if time.monotonic() >= deadline:
                self._fault("handshake", f"no IDENT within {self.handshake_timeout} s")
                return False
            for frame in self._read_frames(ser):
                if frame.msg_type == framing.NAK:
                    self._fault("handshake", "device NAKed HELLO")
                    return False
                if frame.msg_type != framing.IDENT:
                    self._log.debug("%s: ignoring %r before IDENT", self.name, frame)
                    continue
                try:
                    ident = framing.decode_ident(frame.payload)
                except ProtocolError as exc:
                    self._fault("handshake", str(exc))
                    return False
                if ident.version != framing.PROTOCOL_VERSION:
                    self._fault("handshake", f"device speaks protocol {ident.version}, not {framing.PROTOCOL_VERSION}")
                    return False
                if ident.kind != self.kind:
                    self._fault("handshake", f"expected a {self.kind!r} device, {self.url} is a {ident.kind!r}")
                    return False
                self.ident = ident
                self._log.info(
                    "%s: ready: %s id=%s firmware=%s protocol=%d",
                    self.name, ident.kind, ident.device_id, ident.firmware, ident.version,
                )
                self.post(DeviceReady(self.kind, ident.device_id, ident.firmware, ident.version))
                return True
        return False

    def _serve(self, ser: serial.SerialBase) -> None:
        while not self._stop.is_set():
            self._send_queued(ser)
            self._retransmit_due(ser)
            for frame in self._read_frames(ser):
                self._dispatch(ser, frame)

    def _send_queued(self, ser: serial.SerialBase) -> None:
        while True:
            try:
                item = self._outbox.get_nowait()
            except queue.Empty:
                return
            seq = self._write(ser, item.msg_type, item.payload)
            if item.key is not None:
                self._pending[item.key] = _Pending(
                    item.key, item.msg_type, item.payload, item.what,
                    deadline=time.monotonic() + self.response_timeout, seqs=[seq],
                )

    def _retransmit_due(self, ser: serial.SerialBase) -> None:
        now = time.monotonic()
        for key, pending in list(self._pending.items()):
            if now < pending.deadline:
                continue
            if pending.sends > self.retries:
                del self._pending[key]
                self._fault(
                    "timeout",
                    f"no answer to {pending.what} after {pending.sends} sends {self.response_timeout} s apart",
                )
                continue
            pending.sends += 1
            self._log.warning("%s: no answer to %s, sending it again (send %d)", self.name, pending.what, pending.sends)
            pending.seqs.append(self._write(ser, pending.msg_type, pending.payload))
            pending.deadline = now + self.response_timeout

    def _dispatch(self, ser: serial.SerialBase, frame: Frame) -> None:
        if frame.msg_type == framing.NAK:
            self._on_nak(frame)
            return
        if frame.msg_type == framing.FAULT:
            self._on_fault(ser, frame)
            return
        if frame.msg_type in (framing.HELLO, framing.IDENT):
            self._reject(ser, frame, ProtocolError(frame.msg_type, "not expected after the handshake",
                                                   nak_reason=framing.NAK_NOT_ALLOWED))
            return
        try:
            events = self.handle_frame(frame)
        except ProtocolError as exc:
            self._reject(ser, frame, exc)
            return
        for event in events:
            self.post(event)

    def _reject(self, ser: serial.SerialBase, frame: Frame, exc: ProtocolError) -> None:
        self.protocol_errors += 1
        self._log.warning("%s: rejected frame seq=%d: %s", self.name, frame.seq, exc)
        self._write(ser, framing.NAK, framing.encode_nak(frame.seq, exc.nak_reason))

    def _on_nak(self, frame: Frame) -> None:
        try:
            nak = framing.decode_nak(frame.payload)
        except ProtocolError as exc:
            self.protocol_errors += 1
            self._log.warning("%s: unreadable NAK: %s", self.name, exc)
            self._fault("protocol", f"unreadable NAK: {exc}")
            return
        what = f"frame seq={nak.seq}"
        for key, pending in list(self._pending.items()):
            if nak.seq in pending.seqs:
                del self._pending[key]
                what = pending.what
                break
        self._fault("protocol", f"device rejected {what}: {framing.NAK_REASONS[nak.reason]}")

    def _on_fault(self, ser: serial.SerialBase, frame: Frame) -> None:
        try:
            fault = framing.decode_fault(frame.payload)
        except ProtocolError as exc:
            self._reject(ser, frame, exc)
            self._fault("protocol", f"unreadable FAULT: {exc}")
            return
        # A faulted device must not act on an automatic retransmission: drop what is outstanding.
        dropped = [p.what for p in self._pending.values()]
        self._pending.clear()
        detail = fault.detail + (f" (abandoned: {', '.join(dropped)})" if dropped else "")
        self._fault(self.fault_name(fault.code), detail)
