"""The device base class: one owner thread per serial port (docs/protocol.md, "Handshake", "Heartbeat",
"Timing", "Link loss and reconnection").

``Device`` owns everything a driver shares: opening the port with pyserial, the HELLO/IDENT handshake, the
frame decoder, sequence numbers, the outbound queue, retransmission of requests that got no answer (doubling
delay between a floor and a ceiling, a bounded number of sends), the heartbeat, NAK and FAULT handling, and
link loss: it posts ``DeviceFault(kind, "link_lost", detail)`` once per loss, then finds the device again by
identity and posts ``DeviceReady`` again. Concrete drivers (``ShoeDriver``, ``SensorDriver``, ``PanelDriver``)
add command methods that enqueue frames and a ``handle_frame`` hook that turns the device's frames into events.

Threading model: ``start()`` starts one non-daemon owner thread named after the device. Only that thread
touches the port (opens, reads, writes, closes it) and the table of outstanding requests. Command methods may be
called from any thread: they validate their arguments, put the frame on a queue and wake the owner thread
with ``cancel_read()``. Events go to the ``events`` queue given to the constructor. The owner thread runs until
``stop()`` (or a defect in a driver, posted as ``DeviceFault(kind, "internal")``); a lost link does not end it.
"""

from __future__ import annotations

import abc
import dataclasses
import glob
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import serial

from drivers import framing
from drivers.events import DeviceFault, DeviceReady
from drivers.framing import Frame, FrameDecoder, ProtocolError
from drivers.ratelog import LogLimiter
from drivers.session import Liveness
from drivers.transaction import Transactions
from drivers.transport import LINK_ERRORS, SerialTransport, Transport

log = logging.getLogger(__name__)

# ``serial.serial_for_url`` looks for ``protocol_<scheme>`` modules in these packages: ours adds ``sim://``
# (drivers/urls/protocol_sim.py), imported only when such a URL is opened. Done once, at import.
if "drivers.urls" not in serial.protocol_handler_packages:
    serial.protocol_handler_packages.append("drivers.urls")

#: Longest the owner thread blocks in one read (seconds); commands also wake it at once via cancel_read.
POLL_INTERVAL = 0.05


@dataclass(frozen=True)
class LinkTiming:
    """Every timing value of a link, in seconds unless named otherwise (docs/protocol.md, "Timing").

    - ``handshake_timeout``: IDENT must arrive this long after HELLO.
    - ``response_timeout``: the floor of the retransmission delay: an unanswered request is first sent again
      after this long; each further wait doubles, up to ``response_timeout_max`` (the ceiling).
    - ``retries``: how many times a request is sent again after its first send; when the last wait ends
      unanswered, ``DeviceFault(kind, "timeout")`` is posted.
    - ``heartbeat_interval``: after this long without a frame from the device the host sends PING (at most one
      PING per interval).
    - ``link_silence``: no valid frame from the device for this long = the link is lost. Must exceed
      ``heartbeat_interval``.
    - ``reconnect_min`` / ``reconnect_max``: the wait between two searches for a lost device starts at the
      floor and doubles up to the ceiling.
    - ``write_timeout``: a write that does not complete in this long means the link is lost.

    Raises ``ValueError`` naming the field for a non-positive value, a ceiling below its floor, a negative or
    non-integer ``retries`` or a ``link_silence`` not above ``heartbeat_interval``.
    """

    handshake_timeout: float = 3.0
    response_timeout: float = 0.5
    response_timeout_max: float = 4.0
    retries: int = 4
    heartbeat_interval: float = 1.0
    link_silence: float = 3.5
    reconnect_min: float = 0.5
    reconnect_max: float = 8.0
    write_timeout: float = 1.0

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name == "retries":
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ValueError(f"retries must be an integer >= 0, got {value!r}")
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{item.name} must be a positive number of seconds, got {value!r}")
        if self.response_timeout_max < self.response_timeout:
            raise ValueError(f"response_timeout_max {self.response_timeout_max} is below response_timeout "
                             f"{self.response_timeout}")
        if self.reconnect_max < self.reconnect_min:
            raise ValueError(f"reconnect_max {self.reconnect_max} is below reconnect_min {self.reconnect_min}")
        if self.link_silence <= self.heartbeat_interval:
            raise ValueError(f"link_silence {self.link_silence} must exceed heartbeat_interval "
                             f"{self.heartbeat_interval}")

    @property
    def confirm_window(self) -> float:
        """Seconds a state that grants rights (the panel's supervisor key) stays trusted without being confirmed
        by a heartbeat answer: two heartbeat intervals and a response timeout, so one lost PONG does not
        revoke it (docs/protocol.md, "Heartbeat")."""
        return 2 * self.heartbeat_interval + self.response_timeout

    def retransmit_waits(self) -> list[float]:
        """The waits after each send of a request, in order (``retries + 1`` values, seconds): the floor,
        doubling, capped at the ceiling. The last one ends in ``DeviceFault(kind, "timeout")``."""
        waits, wait = [], self.response_timeout
        for _ in range(self.retries + 1):
            waits.append(wait)
            wait = min(wait * 2, self.response_timeout_max)
        return waits


class DeviceNotRunning(RuntimeError):
    """A command was given to a driver whose owner thread is not running (never started, stopped, or ended
    after a defect that was already posted as ``DeviceFault(kind, "internal")``)."""


class LinkDown(DeviceNotRunning):
    """A command was given while the link is down: before the first handshake, or after a loss that was posted
    as ``DeviceFault(kind, "link_lost")`` and before the ``DeviceReady`` of the reconnection. The command is
    not queued (docs/protocol.md, "Link loss and reconnection"): the controller repeats what it still needs
    after ``DeviceReady``."""


class _LinkSilent(Exception):
    """Nothing valid was received for longer than ``link_silence`` (owner thread only)."""


class _Flooding(Exception):
    """The device sent more than the controller can take (owner thread only)."""


class _Refused(Exception):
    """A candidate port's handshake failed: ``code`` is the ``DeviceFault`` code it would be reported as."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


@dataclass
class _Outgoing:
    msg_type: int
    payload: bytes
    key: Hashable | None = None  # set for requests that expect an answer (retransmitted on timeout)
    what: str = ""


class Device(abc.ABC):
    """Base class of a device driver; subclasses set ``kind`` and implement ``handle_frame``.

    ``url`` is anything ``serial.serial_for_url`` opens (``/dev/ttyUSB0``, a pty slave path, ``loop://``); it is
    the first port tried. ``events`` receives ``DeviceReady``, ``DeviceFault`` and the device's own events.
    ``name`` (default: the kind) names the owner thread and the log lines. ``timing`` (a ``LinkTiming``; the
    keyword arguments named like its fields override single values) sets every timeout (docs/protocol.md,
    "Timing"). ``identity`` is the device id the IDENT reply must carry (None: any id at the first handshake,
    then the same id as that one at every reconnection). ``search`` are glob patterns of candidate ports
    (``/dev/serial/by-id/*``) tried, in sorted order, after the last port that worked when the device is lost.
    ``opener`` turns a port name into an open ``drivers.transport.Transport`` (default: a ``SerialTransport``,
    exclusive, with the write timeout of ``timing``); an in-process ``transport_pair`` end runs a driver
    without a port.

    Fault codes posted: ``link_lost`` (the port failed, vanished or went silent; or it cannot be opened at
    start), ``handshake`` (at start: no IDENT, wrong protocol version, kind or identity), ``timeout`` (a request
    unanswered after its last send; the link stays up), ``flooding`` (more than ``session.FLOOD_RATE`` frames a
    second for ``session.FLOOD_WINDOW`` seconds, or a frame the controller's queue refused: the port is closed
    and searched for again after ``reconnect_max``), ``protocol`` (the device NAKed one of our frames),
    ``internal`` (a bug in a driver; logged with traceback, the thread ends), and device FAULT codes mapped by
    ``fault_name``. After a ``link_lost`` or a start-up ``handshake`` fault the thread searches again with a
    doubling wait (``reconnect_min`` .. ``reconnect_max``) and posts no further fault until the device is back
    (``DeviceReady``). Raises ``ValueError`` for bad timing values and ``TypeError`` for a subclass without
    ``kind``.
    """

    kind: ClassVar[str] = ""

    def __init__(
        self,
        url: str,
        events: queue.Queue[Any],
        *,
        name: str | None = None,
        timing: LinkTiming | None = None,
        identity: str | None = None,
        search: Iterable[str] = (),
        opener: Callable[[str], Transport] | None = None,
        **timing_overrides: float,
    ) -> None:
        if not self.kind:
            raise TypeError(f"{type(self).__name__} must set the class attribute 'kind'")
        unknown = set(timing_overrides) - {f.name for f in dataclasses.fields(LinkTiming)}
        if unknown:
            raise TypeError(f"unknown timing argument(s): {', '.join(sorted(unknown))}")
        self.timing = dataclasses.replace(timing or LinkTiming(), **timing_overrides)
        self.url = url
        #: The port in use, or the last one that worked (tried first when the device is lost).
        self.port = url
        self.events = events
        self.name = name or self.kind
        self.identity = identity
        self.search = tuple(search)
        self.ident: framing.Ident | None = None
        #: Frames from the device we could not use (bad payload, unexpected type); each was logged and NAKed.
        self.protocol_errors = 0
        #: Links lost since start (each posted one ``DeviceFault(kind, "link_lost")``).
        self.losses = 0
        #: Counters of the link since start (``link_stats``): written by the owner thread only.
        self._frames_sent = self._frames_received = self._retransmissions = 0
        self._reconnections = self._handshake_failures = self._bad_crc_before = 0
        self.decoder = FrameDecoder(name=f"{self.name}<-")
        self._seq = 0
        #: Outstanding requests and device-initiated frames received (owner thread only).
        self.transactions = Transactions(self.timing)
        self._early: list[Frame] = []  # frames that came in the same read as IDENT
        self._limited = LogLimiter(logging.getLogger(type(self).__module__))
        self._outbox: queue.SimpleQueue[_Outgoing] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._up = False  # guarded by _state_lock: commands are accepted only while True
        self._state_lock = threading.Lock()
        self._port_lock = threading.Lock()
        self._link: Transport | None = None
        self._opener = opener or self._open_serial
        self._thread: threading.Thread | None = None
        self._log = logging.getLogger(type(self).__module__)  # one logger per driver module

    # Compatibility accessors for the single values most callers know.
    @property
    def handshake_timeout(self) -> float:
        """Seconds IDENT may take after HELLO (``timing.handshake_timeout``)."""
        return self.timing.handshake_timeout

    @property
    def response_timeout(self) -> float:
        """Floor of the retransmission delay in seconds (``timing.response_timeout``)."""
        return self.timing.response_timeout

    @property
    def retries(self) -> int:
        """Sends of a request after its first (``timing.retries``)."""
        return self.timing.retries

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

        Ends a backoff wait or a handshake at once. Safe to call more than once and after the thread ended.
        ``TimeoutError`` if the thread is still alive after ``timeout`` seconds (it cannot block longer than the
        write timeout, so this is a bug).
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
        """True while the owner thread is alive (also while the link is down and being searched for)."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def link_up(self) -> bool:
        """True between a ``DeviceReady`` and the next ``DeviceFault(kind, "link_lost")`` (or ``stop()``)."""
        with self._state_lock:
            return self._up

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the owner thread to end (after ``stop()`` or a defect); return True if it ended."""
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

    def on_pong(self, payload: bytes) -> list[Any]:
        """Read a PONG payload (owner thread); return events to post. The default wants it empty; the panel
        driver reads its key state there (docs/protocol.md, "Dealer panel"). ``ProtocolError`` rejects it."""
        framing.decode_empty(framing.PONG, payload)
        return []

    def on_ready(self, ident: framing.Ident) -> list[Any]:
        """Called on the owner thread after each accepted handshake, just after ``DeviceReady`` is posted, with
        the device's IDENT; return events to post (the shoe reports its power-on counter). Default: none."""
        return []

    def refresh_due(self) -> bool:
        """True while a state that grants rights must be re-confirmed: a PING goes every heartbeat interval,
        whatever else the device sends. Default: never."""
        return False

    def on_tick(self, now: float) -> list[Any]:
        """Called on the owner thread at every turn of the serving loop with ``time.monotonic()``; return
        events to post (the panel revokes a key not confirmed in time). Default: none."""
        return []

    def on_link_lost(self) -> list[Any]:
        """Called on the owner thread when the link is lost, before ``DeviceFault(kind, "link_lost")`` is
        posted; return events to post (the panel revokes the key it can no longer confirm). Default: none."""
        return []

    def on_heartbeat(self) -> list[tuple[int, bytes]]:
        """Frames ``(msg_type, payload)`` to send with each PING (owner thread); the default is none. The panel
        driver uses it to repeat its idempotent lamp state (docs/protocol.md, "Heartbeat")."""
        return []

    def send(self, msg_type: int, payload: bytes) -> None:
        """Queue a frame that expects no answer (fire and forget) for the owner thread to write.

        Raises ``LinkDown`` while the link is down, ``DeviceNotRunning`` when the thread is not running.
        """
        self._enqueue(_Outgoing(msg_type, payload))

    def request(self, key: Hashable, msg_type: int, payload: bytes, what: str) -> None:
        """Queue a frame that expects an answer identified by ``key``.

        It is sent again (new seq, same payload) when unanswered: first after ``response_timeout``, then after
        doubling waits capped at ``response_timeout_max``, ``retries`` times; when the last wait ends
        ``DeviceFault(kind, "timeout", what)`` is posted (docs/protocol.md, "Timing"). A request with a key
        already outstanding replaces it and is sent again. ``what`` describes it in logs and fault details
        (never with card values). Raises ``LinkDown`` / ``DeviceNotRunning`` as ``send``.
        """
        self._enqueue(_Outgoing(msg_type, payload, key, what))

    def outstanding_payload(self, key: Hashable) -> bytes | None:
        """Payload of the outstanding request ``key`` (owner thread only), or None if none is outstanding."""
        return self.transactions.payload(key)

    def answered(self, key: Hashable) -> bool:
        """Settle the outstanding request ``key`` (owner thread only); False if none was outstanding."""
        return self.transactions.answered(key)

    @property
    def repeats(self) -> int:
        """Device-initiated frames received again and dropped (their ACK had been lost)."""
        return self.transactions.repeats

    def post(self, event: Any) -> None:
        """Put an event on the controller's queue (owner thread). A queue that refuses it (``queue.Full``: the
        controller is far behind) means the device sends more than the table can take: the link is closed as
        flooding."""
        try:
            self.events.put(event)
        except queue.Full as exc:
            raise _Flooding(f"the controller's event queue refused {type(event).__name__}: {exc}") from None

    # ----------------------------------------------------------------------------------------------------
    # Internals: commands and waking.

    def _enqueue(self, item: _Outgoing) -> None:
        if not self.running or self._stop.is_set():
            raise DeviceNotRunning(f"{self.name}: driver is not running")
        with self._state_lock:
            if not self._up:
                raise LinkDown(f"{self.name}: link is down (waiting for the device)")
            self._outbox.put(item)
        self._wake()

    def _set_up(self, up: bool) -> list[str]:
        """Mark the link up or down; drop queued commands either way and return what they were."""
        with self._state_lock:
            self._up = up
            dropped = []
            while True:
                try:
                    item = self._outbox.get_nowait()
                except queue.Empty:
                    break
                dropped.append(item.what or framing.message_name(item.msg_type))
        return dropped

    def _wake(self) -> None:
        with self._port_lock:
            link = self._link
            if link is not None:
                try:
                    link.wake()
                except LINK_ERRORS as exc:  # the owner thread sees the same failure on its next read
                    self._log.debug("%s: waking the reader failed: %s", self.name, exc)

    def _fault(self, code: str, detail: str, *, from_device: bool = False) -> None:
        """Post ``DeviceFault(kind, code, detail)`` and log it. ``from_device``: ``detail`` is the device's own
        FAULT text, which may name a card ("card 4d stuck"): it goes to the journal with the event, never to the
        log (docs/control.md, "Secrecy")."""
        if from_device:
            self._log.error("%s: fault %s reported by the device (its text is journaled, not logged)", self.name, code)
        else:
            self._log.error("%s: fault %s: %s", self.name, code, detail)
        self.post(DeviceFault(self.kind, code, detail))

    # ----------------------------------------------------------------------------------------------------
    # Internals: the owner thread.

    def _run(self) -> None:
        try:
            self._life()
        except Exception as exc:  # noqa: BLE001 - a driver defect is logged and posted, never swallowed
            self._log.exception("%s: driver failure", self.name)
            self._set_up(False)
            self.post(DeviceFault(self.kind, "internal", f"{type(exc).__name__}: {exc}"))
        finally:
            self._close_port()
            self._log.info("%s: owner thread ended", self.name)

    def _life(self) -> None:
        """Connect, serve, and after each loss search again with a doubling wait, until ``stop()``."""
        wait = self.timing.reconnect_min
        reported = False  # a fault was posted for the current absence of the device
        while not self._stop.is_set():
            ser, problem = self._find()
            if ser is None:
                if self._stop.is_set():
                    return
                if not reported and problem is not None:
                    self._fault(problem.code, problem.detail)
                    reported = True
                self._log.info("%s: device not found, searching again in %.2f s", self.name, wait)
                if self._stop.wait(wait):
                    return
                wait = min(wait * 2, self.timing.reconnect_max)
                continue
            wait, reported = self.timing.reconnect_min, False
            if self.losses:  # up again after a loss
                self._reconnections += 1
            code = "link_lost"
            dropped = self._set_up(True)
            if dropped:  # cannot happen (commands are refused while down); logged should it ever
                self._log.warning("%s: dropped commands queued while down: %s", self.name, ", ".join(dropped))
            ident = self.ident
            assert ident is not None
            self._log.info("%s: ready on %s: %s id=%s firmware=%s protocol=%d", self.name, self.port, ident.kind,
                           ident.device_id, ident.firmware, ident.version)
            self.post(DeviceReady(self.kind, ident.device_id, ident.firmware, ident.version))
            for event in self.on_ready(ident):
                self.post(event)
            try:
                self._serve(ser)
                return  # stop() was called
            except LINK_ERRORS as exc:
                if self._stop.is_set():
                    self._log.info("%s: link error while stopping: %s", self.name, exc)
                    return
                detail = f"{self.port}: {type(exc).__name__}: {exc}"
            except _LinkSilent as exc:
                detail = f"{self.port}: {exc}"
            except _Flooding as exc:
                code, detail = "flooding", f"{self.port}: {exc}"
            finally:
                abandoned = self._set_up(False) + self.transactions.abandon()
                self._close_port()
            if abandoned:
                detail += f" (abandoned: {', '.join(abandoned)})"
            self.losses += 1
            for event in self.on_link_lost():
                self.post(event)
            self._fault(code, detail)
            reported = True
            if code == "flooding":  # not at once: it would flood again
                wait = self.timing.reconnect_max
                if self._stop.wait(wait):
                    return

    def _candidates(self) -> list[str]:
        """The last port that worked, then every port matching ``search`` (sorted), each device once."""
        seen: set[str] = set()
        ports: list[str] = []
        for port in [self.port, *(p for pattern in self.search for p in sorted(glob.glob(pattern)))]:
            real = os.path.realpath(port) if "://" not in port else port
            if real not in seen:
                seen.add(real)
                ports.append(port)
        return ports

    def _find(self) -> tuple[Transport | None, _Refused | None]:
        """Open and handshake each candidate; return the first accepted port, else the first one's problem."""
        first_problem: _Refused | None = None
        for port in self._candidates():
            if self._stop.is_set():
                break
            try:
                ser = self._opener(port)
            except LINK_ERRORS as exc:
                self._log.debug("%s: cannot open %s: %s", self.name, port, exc)
                first_problem = first_problem or _Refused("link_lost", f"cannot open {port}: {exc}")
                continue
            with self._port_lock:
                self._link = ser
            self._bad_crc_before += self.decoder.error_counts["bad_crc"]
            self.decoder = FrameDecoder(name=f"{self.name}<-")
            try:
                self._handshake(ser, port)
            except _Refused as refused:
                self._handshake_failures += 1
                self._log.info("%s: %s refused: %s", self.name, port, refused.detail)
                first_problem = first_problem or refused
                self._close_port()
                continue
            except LINK_ERRORS as exc:
                self._log.info("%s: %s failed during the handshake: %s", self.name, port, exc)
                first_problem = first_problem or _Refused("link_lost", f"{port}: {exc}")
                self._close_port()
                continue
            if self._stop.is_set():
                self._close_port()
                break
            self.port = port
            return ser, None
        return None, first_problem

    def _open_serial(self, port: str) -> Transport:
        return SerialTransport(port, poll=POLL_INTERVAL, write_timeout=self.timing.write_timeout)

    def _close_port(self) -> None:
        with self._port_lock:
            ser, self._link = self._link, None
        if ser is not None:
            try:
                ser.close()
            except LINK_ERRORS as exc:
                self._log.debug("%s: close failed: %s", self.name, exc)

    def link_stats(self) -> dict[str, int]:
        """The link's counters since start, for the metrics (``controller.service.metrics.LINK_COUNTERS``): frames sent
        and received, retransmissions, frames dropped for a bad CRC, reconnections after a loss, handshakes
        refused. Written by the owner thread only; another thread reads a snapshot of plain integers."""
        return {"frames_sent": self._frames_sent, "frames_received": self._frames_received,
                "retransmissions": self._retransmissions,
                "bad_crc": self._bad_crc_before + self.decoder.error_counts["bad_crc"],
                "reconnections": self._reconnections, "handshake_failures": self._handshake_failures}

    def _frame(self, msg_type: int, payload: bytes) -> bytes:
        self._frames_sent += 1
        seq = self._seq
        self._seq = (self._seq + 1) & 0xFF  # continues across reconnections: no HELLO repeats a previous frame
        return framing.encode_frame(seq, msg_type, payload)

    def _write(self, ser: Transport, msg_type: int, payload: bytes) -> int:
        seq = self._seq
        data = self._frame(msg_type, payload)
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug("%s -> %s", self.name, data.hex(" "))
        ser.write(data)
        return seq

    def _send_acks(self, ser: Transport) -> None:
        """Acknowledge the device-initiated frames of the last read, in one write."""
        acks = self.transactions.take_acks()
        if acks:
            ser.write(b"".join(self._frame(framing.ACK, framing.encode_ack(seq)) for seq in acks))

    def _read_frames(self, ser: Transport) -> list[Frame]:
        data = ser.read()
        if not data:
            return []
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug("%s <- %s", self.name, data.hex(" "))
        frames = self.decoder.feed(data)
        self._frames_received += len(frames)
        return frames

    def _handshake(self, ser: Transport, port: str) -> None:
        """HELLO, then IDENT within ``handshake_timeout``; sets ``ident`` or raises ``_Refused``."""
        self._write(ser, framing.HELLO, framing.encode_hello())
        deadline = time.monotonic() + self.timing.handshake_timeout
        expected_id = self.identity or (self.ident.device_id if self.ident else None)
        while not self._stop.is_set():
            if time.monotonic() >= deadline:
                raise _Refused("handshake", f"{port}: no IDENT within {self.timing.handshake_timeout} s")
            frames = self._read_frames(ser)
            for index, frame in enumerate(frames):
                if frame.msg_type == framing.NAK:
                    raise _Refused("handshake", f"{port}: device NAKed HELLO")
                if frame.msg_type != framing.IDENT:
                    self._log.debug("%s: ignoring %r before IDENT", self.name, frame)
                    continue
                try:
                    ident = framing.decode_ident(frame.payload)
                except ProtocolError as exc:
                    raise _Refused("handshake", f"{port}: {exc}") from None
                if ident.version != framing.PROTOCOL_VERSION:
                    raise _Refused("handshake", f"{port}: device speaks protocol {ident.version}, "
                                                f"not {framing.PROTOCOL_VERSION}")
                if ident.kind != self.kind:
                    raise _Refused("handshake", f"expected a {self.kind!r} device, {port} is a {ident.kind!r}")
                if expected_id is not None and ident.device_id != expected_id:
                    raise _Refused("handshake", f"expected device id {expected_id!r}, {port} is "
                                                f"{ident.device_id!r}")
                self.ident = ident
                self._early = frames[index + 1:]
                return

    def _serve(self, ser: Transport) -> None:
        watch = Liveness(self.timing, time.monotonic())
        frames, self._early = self._early, []
        while not self._stop.is_set():
            for frame in frames:
                self._dispatch(ser, frame)
            self._send_acks(ser)
            self._send_queued(ser)
            self._retransmit_due(ser)
            errors_before = self.decoder.error_total
            frames = self._read_frames(ser)
            now = time.monotonic()
            flooding = watch.received(now, len(frames), self.decoder.error_total - errors_before)
            if flooding:
                raise _Flooding(flooding)
            for event in self.on_tick(now):
                self.post(event)
            silent = watch.silent(now)
            if silent:
                raise _LinkSilent(silent)
            if watch.ping_due(now, self.refresh_due()):
                self._write(ser, framing.PING, b"")
                for msg_type, payload in self.on_heartbeat():
                    self._write(ser, msg_type, payload)

    def _send_queued(self, ser: Transport) -> None:
        while True:
            try:
                item = self._outbox.get_nowait()
            except queue.Empty:
                return
            seq = self._write(ser, item.msg_type, item.payload)
            if item.key is not None:
                self.transactions.sent(item.key, item.msg_type, item.payload, item.what, seq, time.monotonic())

    def _retransmit_due(self, ser: Transport) -> None:
        now = time.monotonic()
        again, given_up = self.transactions.due(now)
        for pending in given_up:
            waits = ", ".join(f"{w:g}" for w in self.timing.retransmit_waits())
            self._fault("timeout", f"no answer to {pending.what} after {pending.sends} sends (waits {waits} s)")
        for pending in again:
            self._retransmissions += 1
            self.transactions.resent(pending, self._write(ser, pending.msg_type, pending.payload), now)
            self._log.warning("%s: no answer to %s, sending it again (send %d, next wait %.2f s)",
                              self.name, pending.what, pending.sends, pending.wait)

    def _dispatch(self, ser: Transport, frame: Frame) -> None:
        if frame.msg_type in framing.DEVICE_EVENTS:
            new, jumped_from = self.transactions.received(frame)
            if not new:
                self._log.debug("%s: %r received again (our ACK was lost), not delivered again", self.name, frame)
                return
            if jumped_from is not None:
                self._limited.log(logging.WARNING, (self.name, "event counter"), "%s: device event counter "
                                  "jumped from %d to %d (device restarted?)", self.name, jumped_from, frame.seq)
        if frame.msg_type == framing.PONG:  # its arrival already counted as a sign of life
            try:
                events = self.on_pong(frame.payload)
            except ProtocolError as exc:
                self._reject(ser, frame, exc)
                return
            for event in events:
                self.post(event)
            return
        if frame.msg_type == framing.NAK:
            self._on_nak(frame)
            return
        if frame.msg_type == framing.FAULT:
            self._on_fault(ser, frame)
            return
        if frame.msg_type in (framing.HELLO, framing.IDENT, framing.PING):
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

    def _reject(self, ser: Transport, frame: Frame, exc: ProtocolError) -> None:
        self.protocol_errors += 1
        self._limited.log(logging.WARNING, (self.name, "rejected"), "%s: rejected frame seq=%d: %s", self.name,
                          frame.seq, exc)
        self._write(ser, framing.NAK, framing.encode_nak(frame.seq, exc.nak_reason))

    def _on_nak(self, frame: Frame) -> None:
        try:
            nak = framing.decode_nak(frame.payload)
        except ProtocolError as exc:
            self.protocol_errors += 1
            self._limited.log(logging.WARNING, (self.name, "unreadable NAK"), "%s: unreadable NAK: %s", self.name, exc)
            self._fault("protocol", f"unreadable NAK: {exc}")
            return
        pending = self.transactions.rejected(nak.seq)
        what = pending.what if pending is not None else f"frame seq={nak.seq}"
        self._fault("protocol", f"device rejected {what}: {framing.NAK_REASONS[nak.reason]}")

    def _on_fault(self, ser: Transport, frame: Frame) -> None:
        try:
            fault = framing.decode_fault(frame.payload)
        except ProtocolError as exc:
            self._reject(ser, frame, exc)
            self._fault("protocol", f"unreadable FAULT: {exc}")
            return
        # A faulted device must not act on an automatic retransmission: drop what is outstanding.
        dropped = self.transactions.abandon()
        detail = fault.detail + (f" (abandoned: {', '.join(dropped)})" if dropped else "")
        self._fault(self.fault_name(fault.code), detail, from_device=True)
