"""The floor publisher's own machinery (controller.floor.publisher, docs/floor.md "The publisher"): the progress
file written off the publisher's thread, and a turn's messages sent together on a socket that never holds a
message back.

Oracles: the progress file read back by ``Progress`` itself (a restart's view of it), bytes read at the other
end of a real TCP connection, and the socket's options as the kernel reports them (tcp(7)).
"""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import pytest

from controller.floor.publisher import Progress, ProgressWriter, Publisher, _corked
from controller.settings.floor import FloorConfig

DESTINATION = "127.0.0.1:1883/crisscross"


def _read(path: Path) -> tuple[int, int]:
    """``(seq, public)`` as a restarted publisher reads them from the file at ``path``."""
    progress = Progress(path, DESTINATION)
    return progress.seq, progress.public


def _until(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {timeout} s")
        time.sleep(0.01)


def test_the_progress_writer_writes_the_latest_offer_and_close_writes_the_last_one(tmp_path):
    path = tmp_path / "journal.db.floor"
    writer = ProgressWriter(Progress(path, DESTINATION))
    for seq in range(1, 51):
        writer.offer(seq, seq - 1)
    _until(lambda: path.exists() and _read(path) == (50, 49), "the latest offer was not written")
    writer.offer(60, 55)
    writer.close()  # written before close returns, whatever the interval
    assert _read(path) == (60, 55)
    writer.offer(70, 70)  # a publisher started again: a new thread
    _until(lambda: _read(path) == (70, 70), "an offer after close was not written")
    writer.close()
    assert _read(path) == (70, 70)


def test_a_progress_writer_never_offered_anything_writes_nothing(tmp_path):
    path = tmp_path / "journal.db.floor"
    ProgressWriter(Progress(path, DESTINATION)).close()
    assert not path.exists()


@pytest.mark.parametrize("replacement", ["link to /dev/zero", "pipe", "large file"])
def test_a_progress_file_replaced_by_a_link_a_pipe_or_a_large_file_is_logged_and_publishing_starts_over(
        tmp_path, caplog, replacement):
    """The progress file is read as the anchor is (never through a link, never waiting on a pipe, at most 1 MiB):
    a link to /dev/zero in its place would fill the service's memory, a pipe keep its publisher from starting.
    Each is a file that cannot be read: logged, and publishing starts from the journal's first record (publishing
    again is harmless, losing is not)."""
    path = tmp_path / "journal.db.floor"
    if replacement == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif replacement == "pipe":
        import os

        os.mkfifo(path)
    else:
        path.write_text('{"' + DESTINATION + '": {"seq": 9, "public": 9}, "x": "' + "y" * (1 << 20) + '"}')
    with caplog.at_level(logging.WARNING, logger="controller.floor.publisher"):
        assert _read(path) == (0, 0)
    assert f"floor: {path} cannot be read" in caplog.text and "publishing from the journal's first record" in caplog.text


def test_a_progress_file_that_cannot_be_written_is_logged_and_never_raised(tmp_path, caplog):
    path = tmp_path / "missing-folder" / "journal.db.floor"
    writer = ProgressWriter(Progress(path, DESTINATION))
    with caplog.at_level(logging.WARNING, logger="controller.floor.publisher"):
        writer.offer(5, 5)
        writer.close()
    assert f"cannot write {path}" in caplog.text
    assert not path.exists()


def test_what_is_written_while_corked_arrives_whole_and_in_order():
    with socket.create_server(("127.0.0.1", 0)) as server:
        sender = socket.create_connection(server.getsockname())
        receiver, _ = server.accept()
        with sender, receiver:
            parts = [bytes([n]) * (n + 1) for n in range(40)]
            with _corked(sender):
                for part in parts:
                    sender.sendall(part)
            expected = b"".join(parts)
            receiver.settimeout(10.0)
            got = b""
            while len(got) < len(expected):
                got += receiver.recv(65536)
            assert got == expected
            if hasattr(socket, "TCP_CORK"):  # Linux: the cork is off again after the block
                assert sender.getsockopt(socket.IPPROTO_TCP, socket.TCP_CORK) == 0


def test_corked_without_a_socket_runs_the_block():
    ran = []
    with _corked(None):
        ran.append(True)
    assert ran == [True]


def test_the_publishers_connection_never_holds_a_message_back_for_an_acknowledgement(mosquitto, tmp_path):
    """TCP_NODELAY on the publisher's socket: a message leaves when written, not after the broker's ACK of the
    previous one (Nagle's algorithm, which paho leaves on)."""
    from controller.journal.store import Journal

    journal = Journal(tmp_path / "journal.db", fsync=False)
    publisher = Publisher(FloorConfig(True, "127.0.0.1", mosquitto.port), "CC-01", journal.path)
    publisher.start()
    try:
        _until(lambda: publisher.connected, "the publisher did not connect")
        sock = publisher._client.socket()
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        publisher.stop(drain=0.5)
        journal.close()


@pytest.mark.parametrize("commits", [1, 3])
def test_every_record_is_acknowledged_and_the_progress_file_says_so_at_stop(mosquitto, tmp_path, commits):
    from controller.journal.store import Journal

    journal = Journal(tmp_path / "journal.db", fsync=False)
    publisher = Publisher(FloorConfig(True, "127.0.0.1", mosquitto.port), "CC-01", journal.path)
    publisher.start()
    try:
        for n in range(commits):
            journal.commit([("event", "ButtonPressed", {"button": "open", "n": n}, None)])
            publisher.publish_view({"state": "idle"}, journal.head[0])
        _until(lambda: publisher.acked == journal.head[0], "the records were not acknowledged")
    finally:
        publisher.stop(drain=1.0)
        journal.close()
    assert Progress(tmp_path / "journal.db.floor", f"127.0.0.1:{mosquitto.port}/crisscross").seq == commits


def _puback_as_said(client_class, packet: bytes, mid_known: bool = True):
    """What ``on_publish`` is told of the PUBACK ``packet`` (variable header and properties, as read after the
    fixed header) for a QoS 1 message ``client_class`` published, and whether the client then holds the message
    no more (its PUBACK taken)."""
    import paho.mqtt.client as paho

    client = client_class(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
    said = []
    client.on_publish = lambda c, u, mid, reason, properties: said.append(
        (mid, reason.value, reason.getName(), reason.is_failure, str(properties)))
    info = client.publish("crisscross/CC-01/events", b"{}", qos=1)  # not connected: kept for its PUBACK
    assert info.mid == 1
    if not mid_known:
        packet = b"\x00\x02" + packet[2:]
    client._in_packet = {**client._in_packet, "command": 0x40, "packet": bytearray(packet)}
    try:
        rc = client._handle_pubackcomp("PUBACK")
    except Exception as exc:  # noqa: BLE001 - paho's refusal of a malformed packet, compared by its kind
        rc = type(exc).__name__
    return said, info.mid not in client._out_messages, rc


@pytest.mark.parametrize("packet", [
    b"\x00\x01",  # success, the reason code left out (MQTT 5.0 3.4.2.1)
    b"\x00\x01\x00",  # success
    b"\x00\x01\x10",  # no matching subscribers: taken
    b"\x00\x01\x87",  # not authorized: a refusal
    b"\x00\x01\x97",  # quota exceeded
    b"\x00\x01\x95",  # packet too large: not a PUBACK code (MQTT 5.0 3.4.2.1), refused as malformed
    b"\x00\x01\x00\x00",  # success with an empty property length
    b"\x00\x01\x87\x07\x1f\x00\x04deny",  # a refusal with its reason string
], ids=["short", "success", "no-subscribers", "not-authorized", "quota", "too-large", "empty-properties", "reason-string"])
@pytest.mark.parametrize("mid_known", [True, False], ids=["its-message", "another-mid"])
def test_the_short_puback_path_tells_on_publish_what_paho_tells_it(packet, mid_known):
    import paho.mqtt.client as paho

    from controller.floor.mqtt import Client

    assert _puback_as_said(Client, packet, mid_known) == _puback_as_said(paho.Client, packet, mid_known)
    said, taken, rc = _puback_as_said(Client, packet, mid_known)
    if rc != "MalformedPacket":
        assert taken == mid_known and len(said) == int(mid_known)
