"""The floor's listener (``controller.floor.listen.Listener.open``, used by ``floor watch`` and ``floor audit``)
against a "broker" that takes each TCP connection and closes it at once (a port some other program answers, a
broker dropping clients before its CONNACK): it connects again after a pause until its time is up, never in a busy
loop, and the error says that the connection was closed."""

from __future__ import annotations

import socket

import pytest

from controller.floor.listen import Listener
from controller.settings.floor import FloorConfig
from tests.fake_mqtt import LoopbackServer


class Closer(LoopbackServer):
    """A TCP server on a free loopback port that closes every connection it accepts; counts them
    (``connections``)."""


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
    assert 2 <= closer.connections <= 7, closer.connections
    assert loops.call_count <= 7 * 21, loops.call_count


@pytest.fixture
def silent_broker():
    """A loopback port that takes TCP connections (the kernel's listen queue) and never says a word of MQTT."""
    server = socket.create_server(("127.0.0.1", 0))
    yield server.getsockname()[1]
    server.close()


@pytest.fixture
def unanswering_host():
    """A loopback port whose listen queue is full and never accepted from: a new connection's SYN is dropped, so
    its TCP connect is never answered, as for a host that is down or filtered."""
    import select

    server = socket.create_server(("127.0.0.1", 0), backlog=0)
    port = server.getsockname()[1]
    queued = []
    for _ in range(16):  # until a connection stays pending: the queue is full
        client = socket.socket()
        client.setblocking(False)
        client.connect_ex(("127.0.0.1", port))
        queued.append(client)
        if not select.select([], [client], [], 0)[1]:
            break
    else:
        pytest.skip("the listen queue never filled: connections to it are answered")
    yield port
    for client in queued:
        client.close()
    server.close()


@pytest.mark.parametrize("command, seconds, broker, said", [
    ("watch", 2, "silent_broker", "no subscription acknowledged within 2 s"),
    ("audit", 2, "silent_broker", "no subscription acknowledged within 2 s"),
    ("watch", 0, "silent_broker", "no subscription acknowledged within 1 s"),
    ("watch", 2, "unanswering_host", "the connection was not answered within 2 s"),
])
def test_for_bounds_the_whole_command_whatever_the_broker_does(request, command, seconds, broker, said):
    """``floor watch --for 3`` at a broker that did not answer took 11 s and said 10 s: the wait for the
    subscription (and each TCP connect) had its own 10 s (5 s), whatever ``--for`` said. ``--for`` now bounds
    the connection too (``--for 0``: the one look still gets 1 s to be subscribed): exit 2, one line naming the
    broker and the time given."""
    import time

    from tests.cli_helpers import crisscross

    port = request.getfixturevalue(broker)
    began = time.monotonic()
    shown = crisscross("floor", command, "--broker", "127.0.0.1", "--port", port, "--for", seconds)
    took = time.monotonic() - began
    assert (shown.returncode, shown.stdout) == (2, ""), shown
    assert shown.stderr == f"crisscross: broker 127.0.0.1:{port}: {said}\n"
    assert took <= max(seconds, 1) + 3, took  # a bound with a margin, not a measure of speed
