"""Finding a device (docs/protocol.md, "Handshake", "Link loss and reconnection"): the candidate ports, each
opened and asked HELLO; the first whose IDENT has our protocol version, kind and identity is the device.

``Connecting`` is a part of ``drivers.link.Device``, run on its owner thread only.
"""

from __future__ import annotations

import glob
import os
import time

from drivers import framing
from drivers.framing import FrameDecoder, ProtocolError
from drivers.timing import POLL_INTERVAL
from drivers.transport import LINK_ERRORS, SerialTransport, Transport


class Refused(Exception):
    """A candidate port's handshake failed: ``code`` is the ``DeviceFault`` code it would be reported as."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class Connecting:
    """The search for the device and its handshake, for ``drivers.link.Device`` (which holds the state these
    methods read: ``port``, ``search``, ``identity``, ``ident``, ``decoder``, the port lock and the counters)."""

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

    def _find(self) -> tuple[Transport | None, Refused | None]:
        """Open and handshake each candidate; return the first accepted port, else the first one's problem."""
        first_problem: Refused | None = None
        for port in self._candidates():
            if self._stop.is_set():
                break
            try:
                ser = self._opener(port)
            except LINK_ERRORS as exc:
                self._log.debug("%s: cannot open %s: %s", self.name, port, exc)
                first_problem = first_problem or Refused("link_lost", f"cannot open {port}: {exc}")
                continue
            with self._port_lock:
                self._link = ser
            self._bad_crc_before += self.decoder.error_counts["bad_crc"]
            self.decoder = FrameDecoder(name=f"{self.name}<-")
            try:
                self._handshake(ser, port)
            except Refused as refused:
                self._handshake_failures += 1
                self._log.info("%s: %s refused: %s", self.name, port, refused.detail)
                first_problem = first_problem or refused
                self._close_port()
                continue
            except LINK_ERRORS as exc:
                self._log.info("%s: %s failed during the handshake: %s", self.name, port, exc)
                first_problem = first_problem or Refused("link_lost", f"{port}: {exc}")
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

    def _handshake(self, ser: Transport, port: str) -> None:
        """HELLO, then IDENT within ``handshake_timeout``; sets ``ident`` or raises ``Refused``."""
        self._write(ser, framing.HELLO, framing.encode_hello())
        deadline = time.monotonic() + self.timing.handshake_timeout
        expected_id = self.identity or (self.ident.device_id if self.ident else None)
        while not self._stop.is_set():
            if time.monotonic() >= deadline:
                raise Refused("handshake", f"{port}: no IDENT within {self.timing.handshake_timeout} s")
            frames = self._read_frames(ser)
            for index, frame in enumerate(frames):
                if frame.msg_type == framing.NAK:
                    raise Refused("handshake", f"{port}: device NAKed HELLO")
                if frame.msg_type != framing.IDENT:
                    self._log.debug("%s: ignoring %r before IDENT", self.name, frame)
                    continue
                try:
                    ident = framing.decode_ident(frame.payload)
                except ProtocolError as exc:
                    raise Refused("handshake", f"{port}: {exc}") from None
                if ident.version != framing.PROTOCOL_VERSION:
                    raise Refused("handshake", f"{port}: device speaks protocol {ident.version}, "
                                                f"not {framing.PROTOCOL_VERSION}")
                if ident.kind != self.kind:
                    raise Refused("handshake", f"expected a {self.kind!r} device, {port} is a {ident.kind!r}")
                if expected_id is not None and ident.device_id != expected_id:
                    raise Refused("handshake", f"expected device id {expected_id!r}, {port} is "
                                                f"{ident.device_id!r}")
                self.ident = ident
                self._early = frames[index + 1:]
                return
