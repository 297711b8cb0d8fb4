"""The floor's listener (``controller.floor.listen.Listener.open``, used by ``floor watch`` and ``floor audit``)
against a "broker" that takes each TCP connection and closes it at once (a port some other program answers, a
broker dropping clients before its CONNACK): it connects again after a pause until its time is up, never in a busy
loop, and the error says that the connection was closed."""

from __future__ import annotations

import socket
import threading

import pytest

from controller.floor.listen import Listener
from controller.settings.floor import FloorConfig


class Closer:
    """A TCP server on a free loopback port that closes every connection it accepts; counts them."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.05)  # so that the serving thread sees ``close`` (a closed socket wakes no accept)
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.server.close()


def test_a_broker_that_closes_every_connection_is_tried_again_after_pauses_and_named(mocker):
    closer = Closer()
    listener = Listener(FloorConfig(enabled=True, broker="127.0.0.1", port=closer.port), lambda *args: None)
    loops = mocker.spy(listener.client, "loop")
    try:
        with pytest.raises(OSError, match=r"no subscription acknowledged within 1 s; the connection was closed "
                                          r"\d+ time\(s\) before it"):
            listener.open(timeout=1.0)
    finally:
        listener.client.disconnect()
        closer.close()
    # connected again (more than the first connection), and at most once per pause of 0.2 s: a loop that turned
    # without waiting called loop() hundreds of thousands of times in the second
    assert 2 <= closer.accepted <= 7, closer.accepted
    assert loops.call_count <= 7 * 21, loops.call_count
