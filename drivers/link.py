"""The device base class: one owner thread per serial port (docs/protocol.md, "Handshake", "Heartbeat",
"Timing", "Link loss and reconnection").

``Device`` owns everything a driver shares: the port (found and handshaken by ``drivers.handshake``), the
frame decoder, sequence numbers, the outbound queue, the serving loop (``drivers.serving``: retransmission of
requests that got no answer, the heartbeat, NAK and FAULT handling; timing in ``drivers.timing``), and
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
import logging
import queue
import threading
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import serial

from drivers import framing
from drivers.events import DeviceFault, DeviceReady, undefined_fault
from drivers.framing import Frame, FrameDecoder
from drivers.handshake import Connecting
from drivers.ratelog import LogLimiter
from drivers.serving import Flooding, LinkSilent, Serving
from drivers.timing import LinkTiming
from drivers.transaction import Transactions
from drivers.transport import LINK_ERRORS, Transport

log = logging.getLogger(__name__)

# ``serial.serial_for_url`` looks for ``protocol_<scheme>`` modules in these packages: ours adds ``sim://``
# (drivers/urls/protocol_sim.py), imported only when such a URL is opened. Done once, at import.
if "drivers.urls" not in serial.protocol_handler_packages:
    serial.protocol_handler_packages.append("drivers.urls")


class DeviceNotRunning(RuntimeError):
    """A command was given to a driver whose owner thread is not running (never started, stopped, or ended
    after a defect that was already posted as ``DeviceFault(kind, "internal")``)."""


class LinkDown(DeviceNotRunning):
    """A command was given while the link is down: before the first handshake, or after a loss that was posted
    as ``DeviceFault(kind, "link_lost")`` and before the ``DeviceReady`` of the reconnection. The command is
    not queued (docs/protocol.md, "Link loss and reconnection"): the controller repeats what it still needs
    after ``DeviceReady``."""


@dataclass
class _Outgoing:
    msg_type: int
    payload: bytes
    key: Hashable | None = None  # set for requests that expect an answer (retransmitted on timeout)
    what: str = ""


class Device(Connecting, Serving, abc.ABC):
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
        """Map a FAULT code to a ``DeviceFault.code``; the default is ``undefined_fault(code)``."""
        return undefined_fault(code)

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
            raise Flooding(f"the controller's event queue refused {type(event).__name__}: {exc}") from None

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
            except LinkSilent as exc:
                detail = f"{self.port}: {exc}"
            except Flooding as exc:
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

    def _read_frames(self, ser: Transport) -> list[Frame]:
        data = ser.read()
        if not data:
            return []
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug("%s <- %s", self.name, data.hex(" "))
        frames = self.decoder.feed(data)
        self._frames_received += len(frames)
        return frames

