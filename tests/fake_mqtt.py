"""A scripted MQTT 5 "broker" for tests that need what a real broker never does (Mosquitto refuses a topic that is
not UTF-8 itself): it takes one client at a time on a free loopback port, answers CONNECT, SUBSCRIBE and PINGREQ
(MQTT 5.0, 3.2, 3.9, 3.13), sends its scripted PUBLISH packets (QoS 1) once the client has subscribed, and keeps
the packet ids of the PUBACKs it gets, in order."""

from __future__ import annotations

import socket
import struct
import threading
import time


def remaining_length(n: int) -> bytes:
    """``n`` as an MQTT Variable Byte Integer (MQTT 5.0, 1.5.5)."""
    out = b""
    while True:
        byte, n = n % 128, n // 128
        out += bytes([byte | 0x80 if n else byte])
        if not n:
            return out


def publish_packet(topic: bytes, payload: bytes, packet_id: int) -> bytes:
    """A QoS 1 PUBLISH of ``payload`` on ``topic`` (raw bytes: any, UTF-8 or not) with no properties (MQTT 5.0,
    3.3)."""
    body = struct.pack(">H", len(topic)) + topic + struct.pack(">H", packet_id) + b"\x00" + payload
    return bytes([0x32]) + remaining_length(len(body)) + body


def connack(maximum_packet_size: int | None = None) -> bytes:
    """A CONNACK (MQTT 5.0, 3.2): no session present, success, and with ``maximum_packet_size`` that property
    (0x27, a four-byte integer: 3.2.2.3.6)."""
    properties = b"" if maximum_packet_size is None else b"\x27" + struct.pack(">I", maximum_packet_size)
    body = b"\x00\x00" + remaining_length(len(properties)) + properties
    return b"\x20" + remaining_length(len(body)) + body


class LoopbackServer:
    """A TCP server on a free loopback port (``port``) taking one connection at a time on a thread of its own:
    ``take(connection)`` serves each (a subclass's; here none: closed at once), ``connections`` counts them;
    ``close`` stops it. A subclass sets its own fields before calling this ``__init__`` (the thread starts in
    it)."""

    def __init__(self) -> None:
        self.connections = 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.05)  # so that the serving thread sees ``close`` (a closed socket wakes no accept)
        self.port = self.server.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with connection:
                try:
                    self.take(connection)
                except OSError:  # the client went away: the next one is taken
                    pass

    def take(self, connection: socket.socket) -> None:
        """Serve one accepted ``connection``: none here, it is closed at once."""

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.server.close()


class FakeBroker(LoopbackServer):
    """Sends ``script`` (``(topic bytes, payload)`` pairs, packet ids from 1) to each client once it has sent
    ``subscriptions`` SUBSCRIBE packets; answers CONNECT with ``connack_packet``; ``pubacks`` the packet ids
    acknowledged, ``published`` the size in bytes of each PUBLISH packet a client sent (each acknowledged),
    ``connections`` the clients taken. ``close`` stops it."""

    def __init__(self, script: list[tuple[bytes, bytes]], subscriptions: int = 1, *,
                 connack_packet: bytes = connack()) -> None:
        self.script, self.subscriptions, self.connack_packet = script, subscriptions, connack_packet
        self.pubacks: list[int] = []
        self.published: list[int] = []
        super().__init__()

    def _read(self, connection: socket.socket) -> tuple[int, bytes]:
        def exactly(n: int) -> bytes:
            data = b""
            while len(data) < n:
                if self._stop.is_set():
                    raise OSError("stopped")
                try:
                    chunk = connection.recv(n - len(data))
                except TimeoutError:
                    continue
                if not chunk:
                    raise OSError("closed")
                data += chunk
            return data

        header = exactly(1)[0]
        length, shift = 0, 0
        while True:
            byte = exactly(1)[0]
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        return header, exactly(length)

    def take(self, connection: socket.socket) -> None:
        connection.settimeout(0.05)
        subscribed = 0
        while not self._stop.is_set():
            header, body = self._read(connection)
            kind = header >> 4
            if kind == 1:  # CONNECT
                connection.sendall(self.connack_packet)
            elif kind == 3:  # PUBLISH: its whole size kept; acknowledged when QoS 1
                self.published.append(1 + len(remaining_length(len(body))) + len(body))
                if (header >> 1) & 3 == 1:
                    topic_length = struct.unpack(">H", body[:2])[0]
                    connection.sendall(b"\x40\x02" + body[2 + topic_length:4 + topic_length])
            elif kind == 8:  # SUBSCRIBE: SUBACK granting QoS 1 to its one filter
                connection.sendall(b"\x90\x04" + body[:2] + b"\x00\x01")
                subscribed += 1
                if subscribed == self.subscriptions:
                    connection.sendall(b"".join(publish_packet(topic, payload, n)
                                                for n, (topic, payload) in enumerate(self.script, 1)))
            elif kind == 4:  # PUBACK
                self.pubacks.append(struct.unpack(">H", body[:2])[0])
            elif kind == 12:  # PINGREQ
                connection.sendall(b"\xd0\x00")
            elif kind == 14:  # DISCONNECT
                return

    def wait(self, condition, seconds: float, what: str) -> None:
        """Wait until ``condition()`` holds, ``seconds`` at most; else fail naming ``what``."""
        deadline = time.monotonic() + seconds
        while not condition():
            assert time.monotonic() < deadline, f"{what} within {seconds} s (PUBACKs {self.pubacks})"
            self._stop.wait(0.02)
