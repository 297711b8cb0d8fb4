"""Device simulators behind a real pseudo-terminal (docs/protocol.md; design.md "Drivers at the edge").

A ``PtySimulator`` creates a pty pair, keeps both ends open and exposes the slave's path as ``.port``; a driver
opens that path with pyserial exactly as it opens ``/dev/ttyUSB0``. The simulator reads the master end on one
thread, decodes frames with the same ``FrameDecoder`` the drivers use, answers HELLO with IDENT and PING with
PONG, answers an exact duplicate frame again without acting on it twice, and hands every other frame to the
subclass's ``handle``. Given ``link_dir``, it keeps a symlink ``<link_dir>/sim-<kind>-<device_id>`` to its
current port, as udev keeps ``/dev/serial/by-id``, so a driver can find it again by a ``search`` glob.

What it does not model: baud rate and transmission time (a pty moves bytes instantly), electrical noise (no
corrupted bytes unless injected), flow control, the device's power-up time, and a device that reboots (its
sequence counter and state live as long as the object, also across ``replug``). It never NAKs a frame with a
bad CRC (the decoder drops it; the driver times out and retransmits). Writes to the master block if nobody
reads the slave and the pty buffer (some KiB) fills up. Delayed and split frames are written by the reader
thread, so they need a started simulator.

Fault injection (OctoPrint style; docs/protocol.md, "Fault injection"): ``drivers.simfaults``; the pty side of
the line: ``drivers.simpty``.
"""

from __future__ import annotations

import abc
import collections
import heapq
import logging
import os
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from drivers import framing
from drivers.framing import Frame, FrameDecoder, ProtocolError
from drivers.simfaults import FaultInjection
from drivers.simpty import PtyLine

log = logging.getLogger(__name__)

#: How many past frames, messages or stacks a simulator remembers.
HISTORY = 100_000

#: How long the reader thread waits in select before checking for stop (seconds).
SELECT_INTERVAL = 0.05

#: A device-initiated frame not yet acknowledged is sent again after this long, each further wait doubling up
#: to ``EVENT_RESEND_MAX`` (seconds; docs/protocol.md, "Device-initiated frames").
EVENT_RESEND_MIN = 0.1
EVENT_RESEND_MAX = 1.0
#: Device-initiated frames a simulator holds while one waits for its acknowledgement; one more is refused.
EVENT_QUEUE = 4096


class PtySimulator(PtyLine, FaultInjection, abc.ABC):
    """Base class of a device simulator on a pty; subclasses set ``kind`` and implement ``handle``.

    ``device_id`` and ``firmware`` are reported in IDENT. ``link_dir``: a folder (created if absent) where the
    simulator keeps a symlink to its current port. Public methods are thread-safe: one re-entrant lock
    (``self.lock``, also the ``self.changed`` condition, notified after every handled frame) guards the state.
    ``handle`` runs on the reader thread with the lock held. Raises ``OSError`` if no pty can be created.

    Subclasses may set ``RECOVERABLE_IN`` / ``RECOVERABLE_OUT``: the message types whose loss the protocol
    recovers from (a request the host retransmits; an answer whose request is retransmitted). ``chaos`` uses
    lossy faults only on those, so a random fault never loses a button press or a lamp state.
    """

    kind: ClassVar[str] = ""
    RECOVERABLE_IN: ClassVar[frozenset[int]] = frozenset({framing.PING})
    RECOVERABLE_OUT: ClassVar[frozenset[int]] = frozenset({framing.PONG})

    def __init__(self, device_id: str, firmware: str = "sim-1.0", *, link_dir: str | Path | None = None) -> None:
        if not self.kind:
            raise TypeError(f"{type(self).__name__} must set the class attribute 'kind'")
        self.device_id = device_id
        self.firmware = firmware
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.link_dir = Path(link_dir) if link_dir is not None else None
        self._master: int | None = None
        self._slave: int | None = None
        #: The device ends of the ptys this simulator had before a ``replug``, kept open until ``stop``: a pty's
        #: name is free for any process once its last end is closed, and a driver that tries the old name again
        #: must find a device gone (EIO), not another process's simulator that got that name.
        self._former_slaves: list[int] = []
        #: Path of the slave end, for the driver to open (``/dev/pts/N``); changes with ``replug``.
        self.port: str = ""
        self._open_line()
        self._decoder = self._new_decoder()
        self._seq = 0
        self._event_seq = 0  # the counter of device-initiated frames (docs/protocol.md, "Device-initiated frames")
        # Waiting behind the unacknowledged device-initiated frame: (type, payload, is a device-initiated frame);
        # answers to requests wait there too, so that none overtakes an earlier device-initiated frame.
        self._events: deque[tuple[int, bytes, bool]] = deque()
        self._ordered = False  # True while handling a request: its answers keep their place behind events
        self._unacked: tuple[int, int, bytes] | None = None  # (seq, type, payload) sent, not yet acknowledged
        self._resend_at = 0.0
        self._resend_wait = EVENT_RESEND_MIN
        #: Device-initiated frames sent again because no ACK came in time.
        self.resent = 0
        self._drop_in = 0
        self._nak_in = 0
        self._triggers: list[list[Any]] = []  # [message type, frames still to pass, fires left, kind, count, params]
        self._out_faults: deque[list[Any]] = deque()  # [kind, params, frames still to suffer it], in arming order
        self._silent_until: float | None = None
        self._outq: list[tuple[float, int, bytes]] = []  # heap of (due, order, bytes) for delayed writes
        self._order = 0
        self._answering: list[tuple[int, bytes]] | None = None
        self._last_answer: tuple[Frame, list[tuple[int, bytes]]] | None = None
        self._chaos: tuple[float, random.Random, frozenset[str]] | None = None
        self._closed = False
        self._reader_stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._replug_timer: threading.Timer | None = None
        #: Every fault that took effect, by kind (injected or chosen by ``chaos``).
        self.fault_counts: collections.Counter[str] = collections.Counter()
        #: The last ``HISTORY`` frames received with a valid CRC, in order (dropped and duplicate ones included);
        #: bounded so that a simulator running for days keeps a constant memory.
        self.received: deque[Frame] = deque(maxlen=HISTORY)
        #: Exact duplicates received (same seq, type and payload as the frame before): answered again, not handled.
        self.duplicates = 0
        #: ``(time.monotonic(), frame)`` for the same frames as ``received``.
        self.arrivals: deque[tuple[float, Frame]] = deque(maxlen=HISTORY)

    # ----------------------------------------------------------------------------------------------------
    # Lifecycle.

    @property
    def link_path(self) -> Path | None:
        """The symlink this simulator keeps in ``link_dir`` (None without a ``link_dir``)."""
        if self.link_dir is None:
            return None
        return self.link_dir / f"sim-{self.kind}-{self.device_id}"

    def start(self) -> None:
        """Start the reader thread (non-daemon, named ``<kind>-sim``). ``RuntimeError`` if started before."""
        if self._thread is not None:
            raise RuntimeError(f"{self.kind} simulator already started")
        self._start_reader()

    def stop(self) -> None:
        """End the reader thread (and a pending replug), close both ends of the pty and remove the symlink.
        Safe to call more than once."""
        with self.lock:
            self._closed = True
            timer, self._replug_timer = self._replug_timer, None
        if timer is not None:
            timer.cancel()
            if timer is not threading.current_thread():
                timer.join(5.0)
        self._halt()
        with self.lock:
            self._close_line()
            link = self.link_path
            if link is not None and link.is_symlink() and os.readlink(link) == self.port:
                link.unlink()

    def unplug(self) -> None:
        """Close the master end, like pulling the USB adapter: the driver's next read or write fails.

        The reader thread ends first, so no thread is left selecting on a closed descriptor. The slave end
        stays open until ``stop()`` or ``replug``. Same as ``inject("unplug")``.
        """
        self._halt()
        with self.lock:
            self._unplug_line()
            self.fault_counts["unplug"] += 1

    def _new_decoder(self) -> FrameDecoder:
        # Exact duplicates are found in ``_dispatch``, in frame order, so that they can be answered again.
        return FrameDecoder(name=f"{self.kind}-sim<-", track_sequence=False)

    def _start_reader(self) -> None:
        self._reader_stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(self._reader_stop,), name=f"{self.kind}-sim",
                                        daemon=False)
        self._thread.start()

    def _halt(self) -> None:
        self._reader_stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(5.0)
            if thread.is_alive():
                raise TimeoutError(f"{self.kind} simulator thread did not end")

    def _replug_now(self) -> None:
        with self.lock:
            self._replug_timer = None
            if self._closed:
                return
            self._open_line()
            self._decoder = self._new_decoder()
            self._outq.clear()
            log.info("%s-sim: plugged in again as %s", self.kind, self.port)
            if self._thread is not None:
                self._start_reader()

    # ----------------------------------------------------------------------------------------------------
    # Sending.

    def send(self, msg_type: int, payload: bytes = b"") -> None:
        """Frame ``payload`` with the simulator's own seq counter (wraps 255 -> 0) and write it to the master,
        subject to armed faults (a silent device sends nothing). For answers; device-initiated frames go
        through ``send_event``. An answer to a request (from ``handle``) waits until the device-initiated
        frames sent before it are acknowledged (docs/protocol.md, "Device-initiated frames"): a SPOTS snapshot
        never overtakes an earlier chip change. IDENT, PONG and NAK go at once.

        Raises ``ProtocolError`` for an oversized payload and ``OSError`` when unplugged or stopped.
        """
        with self.lock:
            if self._answering is not None:
                self._answering.append((msg_type, payload))
            if self._ordered and (self._unacked is not None or self._events):
                framing.encode_frame(0, msg_type, payload)  # refuse a bad frame now, not when its turn comes
                self._events.append((msg_type, payload, False))
                return
            self._send_answer(msg_type, payload)

    def _send_answer(self, msg_type: int, payload: bytes) -> None:
        seq = self._seq
        self._seq = (self._seq + 1) & 0xFF
        self._transmit(seq, msg_type, payload)

    def send_event(self, msg_type: int, payload: bytes = b"") -> None:
        """Send a device-initiated frame (docs/protocol.md, "Device-initiated frames"): numbered by the event
        counter, sent again (the same frame) until the host acknowledges it with ACK; the next one waits until
        then. ``RuntimeError`` when ``EVENT_QUEUE`` frames are already waiting, ``ProtocolError`` for an
        oversized payload; a frame that cannot be written now (unplugged) is sent once the host is back."""
        framing.encode_frame(0, msg_type, payload)  # refuse a bad frame now, not when its turn comes
        with self.lock:
            if len(self._events) >= EVENT_QUEUE:
                raise RuntimeError(f"{self.kind} simulator: {EVENT_QUEUE} device-initiated frames wait already")
            self._events.append((msg_type, payload, True))  # delivered reliably: not repeated by ``_answer_again``
            self._next_event()

    def _next_event(self) -> None:
        """Send what waits, up to and including the next device-initiated frame, if none is unacknowledged
        (lock held)."""
        if self._unacked is not None:
            return
        while self._events and not self._events[0][2]:
            msg_type, payload, _ = self._events.popleft()
            try:
                self._send_answer(msg_type, payload)
            except OSError as exc:  # unplugged: the host asks again
                log.debug("%s-sim: answer not written: %s", self.kind, exc)
        if not self._events:
            return
        msg_type, payload, _ = self._events.popleft()
        self._unacked = (self._event_seq, msg_type, payload)
        self._event_seq = (self._event_seq + 1) & 0xFF
        self._resend_wait = EVENT_RESEND_MIN
        self._resend_at = time.monotonic() + EVENT_RESEND_MIN
        try:
            self._transmit(*self._unacked)
        except OSError as exc:  # unplugged: sent again once plugged in and due
            log.debug("%s-sim: device-initiated frame not written now: %s", self.kind, exc)

    def _on_ack(self, seq: int) -> None:
        if self._unacked is not None and self._unacked[0] == seq:
            self._unacked = None
            self._next_event()
        else:
            log.debug("%s-sim: ACK of seq %d, which is not the unacknowledged frame", self.kind, seq)

    def _resend_due(self, now: float) -> float:
        """Send the unacknowledged device-initiated frame again if its wait ended (lock held); return seconds
        until the next resend (``SELECT_INTERVAL`` if none is due)."""
        if self._unacked is None:
            return SELECT_INTERVAL
        if now >= self._resend_at:
            self.resent += 1
            log.debug("%s-sim: no ACK for seq %d, sending it again", self.kind, self._unacked[0])
            self._transmit(*self._unacked)
            self._resend_wait = min(self._resend_wait * 2, EVENT_RESEND_MAX)
            self._resend_at = now + self._resend_wait
        return min(SELECT_INTERVAL, self._resend_at - now)

    @property
    def awaiting_ack(self) -> int:
        """Device-initiated frames not yet acknowledged by the host (sent or waiting to be sent)."""
        with self.lock:
            return sum(1 for item in self._events if item[2]) + (self._unacked is not None)

    def boot_count(self) -> int | None:
        """The power-on counter IDENT ends with (docs/protocol.md, "Power-on counter"), or None for a device
        that keeps none (the default: IDENT without it)."""
        return None

    def pong_payload(self) -> bytes:
        """The PONG payload: empty, unless the device reports state that grants rights (the panel's key)."""
        return b""

    def _transmit(self, seq: int, msg_type: int, payload: bytes) -> None:
        """Write one frame with ``seq`` now, subject to armed faults (lock held)."""
        with self.lock:
            data = framing.encode_frame(seq, msg_type, payload)
            if self._is_silent():
                log.debug("%s-sim: silent, not sending %s", self.kind, framing.message_name(msg_type))
                return
            if self._out_faults:
                fault, params, left = self._out_faults[0]
                if left > 1:
                    self._out_faults[0][2] -= 1
                else:
                    self._out_faults.popleft()
            else:
                fault, params = self._chaos_pick(msg_type, incoming=False), {}
            if fault is None:
                self._write_now(data)
                return
            self.fault_counts[fault] += 1
            log.debug("%s-sim: %s on outgoing %s", self.kind, fault, framing.message_name(msg_type))
            now = time.monotonic()
            if fault == "drop_out":
                return
            if fault == "corrupt":
                at = params.get("at")  # never the leading delimiter: the frame must arrive, broken
                index = min(at, len(data) - 1) if at else random.randrange(1, len(data))
                data = data[:index] + bytes((data[index] ^ 0x5A,)) + data[index + 1:]
                self._write_now(data)
            elif fault == "duplicate":
                self._write_now(data + data)
            elif fault == "delay":
                self._write_at(now + (params.get("seconds") or 0.2), data)
            elif fault == "split":
                cut = random.randrange(1, len(data))
                self._write_now(data[:cut])
                self._write_at(now + (params.get("pause") or 0.02), data[cut:])

    def send_raw(self, data: bytes) -> None:
        """Write raw bytes to the master end now (for hand-made corrupted or split frames in tests), ahead of
        delayed frames; ``OSError`` if closed."""
        with self.lock:
            self._write_line(data)

    def _write_now(self, data: bytes) -> None:
        """Write ``data`` in order: behind delayed frames if any are waiting (a serial line is FIFO)."""
        if self._outq:
            self._write_at(time.monotonic(), data)
        else:
            self.send_raw(data)

    def _write_at(self, due: float, data: bytes) -> None:
        latest = max((entry[0] for entry in self._outq), default=due)
        self._order += 1
        heapq.heappush(self._outq, (max(due, latest), self._order, data))

    def _flush_due(self) -> float:
        """Write the delayed frames that are due; return seconds until the next one (SELECT_INTERVAL if none)."""
        with self.lock:
            now = time.monotonic()
            while self._outq and self._outq[0][0] <= now:
                _, _, data = heapq.heappop(self._outq)
                self.send_raw(data)
            wait = self._resend_due(now)
            return min(wait, self._outq[0][0] - now) if self._outq else wait

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
        """Act on one host frame other than HELLO, PING and NAK (reader thread, lock held). Raise
        ``ProtocolError`` to have the simulator NAK it with the error's ``nak_reason``."""

    # ----------------------------------------------------------------------------------------------------
    # Reader thread.

    def _run(self, stop: threading.Event) -> None:
        with self.lock:
            if not self._line_open():
                return
        while not stop.is_set():
            try:
                data = self._read_line(self._flush_due())
                if not data:
                    continue
            except OSError as exc:
                log.error("%s-sim: reading the device's end of the line failed, reader ends: %s", self.kind, exc)
                return
            for frame in self._decoder.feed(data):
                self._dispatch(frame)

    def _answer_again(self, answers: list[tuple[int, bytes]]) -> None:
        """Send the recorded answer to a frame again (new seq numbers, same payloads): the frame was an exact
        duplicate of the previous one and is not handled a second time (docs/protocol.md, "Receiving")."""
        for msg_type, payload in answers:
            self.send(msg_type, payload)

    def on_hello(self) -> None:
        """Called (reader thread, lock held) after each IDENT sent: a new host session began. Default: nothing."""

    def _dispatch(self, frame: Frame) -> None:
        with self.changed:
            try:
                self.received.append(frame)
                self.arrivals.append((time.monotonic(), frame))
                self._fire_triggers(frame)
                if self._is_silent():
                    log.debug("%s-sim: silent, ignored %r", self.kind, frame)
                    return
                last = self._last_answer
                if last is not None and last[0] == frame:
                    self.duplicates += 1
                    log.debug("%s-sim: duplicate %r answered again, not handled again", self.kind, frame)
                    self._answer_again(last[1])
                    return
                if self._drop_in or self._chaos_pick(frame.msg_type, incoming=True):
                    self._drop_in = max(0, self._drop_in - 1)
                    self.fault_counts["drop_in"] += 1
                    log.debug("%s-sim: dropped incoming %r", self.kind, frame)
                    return
                if self._nak_in:
                    self._nak_in -= 1
                    self.fault_counts["nak_in"] += 1
                    self.nak(frame.seq, framing.NAK_NOT_ALLOWED)
                    return
                self._answering = []
                try:
                    if frame.msg_type == framing.HELLO:
                        framing.decode_hello(frame.payload)
                        self.send(
                            framing.IDENT,
                            framing.encode_ident(framing.PROTOCOL_VERSION, self.kind, self.device_id, self.firmware,
                                                 self.boot_count()),
                        )
                        self.on_hello()
                        if self._unacked is not None:  # a new session: the unacknowledged frame goes again soon
                            self._resend_wait = EVENT_RESEND_MIN
                            self._resend_at = time.monotonic() + EVENT_RESEND_MIN
                    elif frame.msg_type == framing.PING:
                        framing.decode_empty(framing.PING, frame.payload)
                        self.send(framing.PONG, self.pong_payload())
                    elif frame.msg_type == framing.ACK:
                        self._on_ack(framing.decode_ack(frame.payload))
                    elif frame.msg_type == framing.NAK:
                        log.warning("%s-sim: host rejected our frame: %s", self.kind, framing.decode_nak(frame.payload))
                    else:
                        self._ordered = True
                        try:
                            self.handle(frame)
                        finally:
                            self._ordered = False
                except ProtocolError as exc:
                    log.warning("%s-sim: rejecting frame seq=%d: %s", self.kind, frame.seq, exc)
                    self.nak(frame.seq, exc.nak_reason)
                finally:
                    self._last_answer = (frame, self._answering)
                    self._answering = None
            except OSError as exc:
                log.error("%s-sim: cannot answer frame seq=%d: %s", self.kind, frame.seq, exc)
            finally:
                self.changed.notify_all()
