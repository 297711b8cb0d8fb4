"""Serving a connected device (docs/protocol.md, "Heartbeat", "Timing", "Flooding"): the loop of the owner
thread while the link is up: frames dispatched and acknowledged, commands written, requests sent again,
the heartbeat, and the NAK and FAULT frames of the device.

``Serving`` is a part of ``drivers.link.Device``, run on its owner thread only.
"""

from __future__ import annotations

import logging
import queue
import time

from drivers import framing
from drivers.framing import Frame, ProtocolError
from drivers.session import Liveness
from drivers.transport import Transport


class LinkSilent(Exception):
    """Nothing valid was received for longer than ``link_silence`` (owner thread only)."""


class Flooding(Exception):
    """The device sent more than the controller can take (owner thread only)."""


class Serving:
    """The serving loop and the handling of protocol frames, for ``drivers.link.Device`` (which holds the
    state these methods read: ``transactions``, ``decoder``, the outbox, the hooks and the counters)."""

    def _send_acks(self, ser: Transport) -> None:
        """Acknowledge the device-initiated frames of the last read, in one write."""
        acks = self.transactions.take_acks()
        if acks:
            ser.write(b"".join(self._frame(framing.ACK, framing.encode_ack(seq)) for seq in acks))

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
                raise Flooding(flooding)
            for event in self.on_tick(now):
                self.post(event)
            silent = watch.silent(now)
            if silent:
                raise LinkSilent(silent)
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
        if framing.numbered_as_event(frame.msg_type):  # an unknown type too: it is NAKed below by ``handle_frame``
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
