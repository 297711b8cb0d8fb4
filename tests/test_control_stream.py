"""The event stream (``GET /events/stream``), the broadcaster's bound per client and the OpenAPI description of
the control interface (docs/control.md, "GET /events/stream", "Bounds"). Frames are read as the Server-Sent
Events format defines them (WHATWG HTML, "Server-sent events": fields up to a blank line)."""

from __future__ import annotations

import asyncio
import base64
import json
import queue
import socket

import pytest

from controller.control.app import ROUTES
from controller.control.broadcast import END, Hub, Outbox
from controller.control.server import ControlConfig, ControlServer
from tests.test_control import PATIENCE, Client, _operators, operators_file  # noqa: F401 (fixtures)


def _record(seq: int, type_: str = "RoundOpened") -> dict:
    return {"seq": seq, "time": "t", "kind": "record", "round": 1, "type": type_, "data": {"round_no": 1},
            "prev": "p", "hash": "h"}


@pytest.fixture
def server(operators_file):
    running = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators_file), queue.Queue())
    running.start()
    yield running
    running.stop()


def _frames(reader, count: int) -> list[dict[str, str]]:
    """The next ``count`` SSE frames with a field ``event`` (comments and ``retry`` skipped) from ``reader``, a
    stream opened with ``_open_stream``."""
    frames: list[dict[str, str]] = []
    fields: dict[str, str] = {}
    while len(frames) < count:
        line = reader.readline()
        assert line, "the stream ended early"
        text = line.decode()
        if text.strip() == "":
            if "event" in fields:
                frames.append(fields)
            fields = {}
        elif ":" in text and not text.startswith(":"):  # a chunk-size line of chunked encoding has no colon
            name, _, value = text.rstrip("\r\n").partition(":")
            fields[name] = value.removeprefix(" ")
    return frames


def _open_stream(server, headers: str = "", query: str = ""):
    """A socket and its reader after the answer's status line (returned too) and headers."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE)
    sock.sendall(f"GET /events/stream{query} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n{headers}\r\n".encode())
    reader = sock.makefile("rb")
    head = [reader.readline()]
    while head[-1] not in (b"\r\n", b""):
        head.append(reader.readline())
    return sock, reader, b"".join(head)


def test_the_stream_pushes_public_records_with_their_seq_and_each_view(server):
    server.publish_view({"state": "idle", "round_no": None})
    sock, reader, head = _open_stream(server)
    try:
        assert head.startswith(b"HTTP/1.1 200") and b"content-type: text/event-stream" in head.lower()
        frames = _frames(reader, 1)  # subscribed: what is published now reaches this stream
        server.publish_record(_record(1))
        server.publish_record(_record(2, "StackDealt"))  # private: never sent
        server.publish_record(_record(3, "CardsRevealed"))
        server.publish_view({"state": "betting", "round_no": 1})
        frames += _frames(reader, 3)
    finally:
        sock.close()
    assert [(f["event"], f.get("id")) for f in frames] == [("view", None), ("record", "1"), ("record", "3"),
                                                           ("view", None)]
    assert json.loads(frames[1]["data"]) == {"seq": 1, "time": "t", "kind": "record", "round": 1,
                                             "type": "RoundOpened", "data": {"round_no": 1}}
    assert json.loads(frames[3]["data"]) == {"state": "betting", "round_no": 1, "seq": 3}


def test_labels_give_a_whole_heartbeat_interval_as_an_integer(server):
    """docs/control.md, "GET /labels": ``heartbeat_s`` is 15, whole seconds, written ``15`` and not ``15.0``."""
    status, _, body = Client(server).request("GET", "/labels")
    assert status == 200
    assert b'"heartbeat_s":15,' in body or b'"heartbeat_s":15}' in body, body[-200:]
    assert type(json.loads(body)["heartbeat_s"]) is int


def test_an_idle_stream_sends_a_heartbeat_event_a_page_can_see_at_the_interval_labels_gives(operators_file):
    """docs/control.md, "GET /events/stream": an idle stream sends ``event: heartbeat`` after ``heartbeat`` seconds
    without a frame. A comment line would not do: a browser's ``EventSource`` never hands a comment to the page
    (WHATWG HTML, "Server-sent events": a line starting with a colon is ignored), so the dealer's screen could not
    tell an idle table from one that stopped answering. ``GET /labels`` gives the interval (``heartbeat_s``)."""
    running = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators_file), queue.Queue(), heartbeat=0.2)
    running.start()
    try:
        assert Client(running).get("/labels")[1]["heartbeat_s"] == 0.2
        running.publish_view({"state": "idle", "round_no": None})
        sock, reader, _ = _open_stream(running)
        try:
            frames = _frames(reader, 3)  # the view, then nothing but heartbeats: within PATIENCE, not 15 s
        finally:
            sock.close()
    finally:
        running.stop()
    assert [f["event"] for f in frames] == ["view", "heartbeat", "heartbeat"]
    assert all("id" not in f and f["data"] == "{}" for f in frames[1:])  # no id: Last-Event-ID stays the record's


def test_a_stream_resumes_after_its_last_event_id(server):
    for seq in (1, 2, 3):
        server.publish_record(_record(seq))
    server.flush()
    sock, reader, _ = _open_stream(server, headers="Last-Event-ID: 1\r\n")
    try:
        frames = _frames(reader, 2)
    finally:
        sock.close()
    assert [f["id"] for f in frames] == ["2", "3"]


@pytest.mark.parametrize("headers, query", [("Last-Event-ID: x\r\n", ""), ("", "?after=-1"), ("", "?since=1")])
def test_a_bad_cursor_of_the_stream_is_refused(server, headers, query):
    sock, _, head = _open_stream(server, headers, query)
    try:
        assert head.startswith(b"HTTP/1.1 400")
    finally:
        sock.close()


@pytest.mark.parametrize("cursors", [("1", "2"), ("2", "2"), ("", "1")])
def test_two_last_event_ids_are_refused_as_other_repeated_headers_are(server, cursors):
    """Two ``Last-Event-ID`` headers name two cursors: which records the resumed stream would skip depends on
    which one a reader takes, as with any header that may appear once (docs/control.md, "Limits"): 400 naming
    it, and no stream is opened."""
    for seq in (1, 2, 3):
        server.publish_record(_record(seq))
    server.flush()
    sock, reader, head = _open_stream(server, headers="".join(f"Last-Event-ID: {c}\r\n" for c in cursors))
    try:
        assert head.startswith(b"HTTP/1.1 400")
        assert json.loads(reader.read())["error"] == "header Last-Event-ID repeated; send it once"
    finally:
        sock.close()


def test_a_client_whose_queue_is_full_is_dropped_and_the_others_keep_theirs():
    async def run():
        hub = Hub(ring_size=10, client_queue=3, max_subscribers=2)
        slow, fast = hub.subscribe(None), hub.subscribe(None)
        assert hub.subscribe(None) is None  # beyond max_subscribers
        for seq in range(1, 6):
            hub.publish_record(b'{"seq": %d, "type": "RoundOpened", "data": {}}' % seq, seq)
            if seq <= 3:
                await fast.queue.get()  # the fast client reads as records come
        return hub, slow, fast

    hub, slow, fast = asyncio.run(run())
    assert slow.dropped and slow not in hub.subscribers and hub.dropped == 1
    assert slow.queue.get_nowait() is END and slow.queue.empty()  # what was queued is not sent
    assert not fast.dropped and fast in hub.subscribers and fast.queue.qsize() == 2


def test_the_openapi_description_names_every_endpoint(server):
    status, document = Client(server).get("/openapi.json")
    assert status == 200 and document["openapi"].startswith("3.1")
    assert set(document["paths"]) == set(ROUTES)
    for path, methods in ROUTES.items():
        assert {m.lower() for m in methods} == set(document["paths"][path])
    assert document["paths"]["/actions"]["post"]["security"] == [{"operator": []}]


def test_the_operator_endpoint_names_the_user_and_role(server):
    client = Client(server)
    token = base64.b64encode(b"sue:supervisor-pass").decode()
    status, _, body = client.request("GET", "/operator", headers={"Authorization": f"Basic {token}"})
    assert (status, json.loads(body)) == (200, {"user": "sue", "role": "supervisor"})
    assert client.request("GET", "/operator")[0] == 401
    assert server.events.empty()


def test_an_empty_last_event_id_is_no_cursor_and_a_bad_one_is_named(server):
    """An empty ``Last-Event-ID`` is what a browser sends after an ``id`` field with no value (WHATWG HTML,
    "Server-sent events": it resets the last event ID): the stream starts as without one; a bad one is refused
    naming the header, not ``after``."""
    server.publish_view({"state": "idle", "round_no": None})
    sock, reader, head = _open_stream(server, headers="Last-Event-ID: \r\n")
    try:
        assert head.startswith(b"HTTP/1.1 200")
        assert [f["event"] for f in _frames(reader, 1)] == ["view"]
    finally:
        sock.close()
    sock, reader, head = _open_stream(server, headers="Last-Event-ID: x\r\n")
    try:
        assert head.startswith(b"HTTP/1.1 400")
        assert json.loads(reader.read())["error"].startswith("Last-Event-ID must be 0 to")
    finally:
        sock.close()


def test_a_dropped_stream_counts_until_it_is_released():
    """A stream dropped for reading slowly still holds its connection while it drains: it counts against
    ``max_subscribers`` until its end releases it (255 streams were once open against a cap of 128)."""
    async def run():
        hub = Hub(ring_size=10, client_queue=1, max_subscribers=2)
        first, second = hub.subscribe(None), hub.subscribe(None)
        for seq in range(1, 4):  # nobody reads: both queues overflow and both are dropped
            hub.publish_record(b'{"seq": %d, "type": "RoundOpened", "data": {}}' % seq, seq)
        assert first.dropped and second.dropped and not hub.subscribers
        refused_while_draining = hub.subscribe(None)
        hub.release(first)  # its stream ended
        return refused_while_draining, hub.subscribe(None)

    refused, served = asyncio.run(run())
    assert refused is None and served is not None


def test_an_accepted_connection_sends_without_waiting_for_the_client_s_ack(server):
    """Every accepted connection has TCP_NODELAY, read from the server's own socket: without it each keep-alive
    answer after the first waits for the client's delayed ACK (about 40 ms on Linux) before its last bytes go."""
    server.publish_view({"state": "idle", "round_no": None})
    with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
        reader = sock.makefile("rb")
        for _ in range(2):  # two answers on one keep-alive connection
            sock.sendall(f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
            assert reader.readline().startswith(b"HTTP/1.1 200")
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            assert json.loads(reader.read(length))["state"] == "idle"
        accepted = [connection.transport.get_extra_info("socket")
                    for connection in list(server._uvicorn.server_state.connections)]
        assert accepted, "the server holds no connection"
        assert all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in accepted)


def test_the_outbox_wakes_the_loop_once_a_busy_spell_and_its_bound_drops_the_oldest_as_missed():
    """The controller thread's hand-overs: one wake-up until the loop takes them, none while the loop keeps
    taking at its pace, one again after a take found nothing; beyond the bound the oldest go, and the hub then
    tells a client asking after them that records were missed (docs/control.md)."""
    outbox = Outbox(size=3)
    assert outbox.wake() is False  # nothing waits
    assert outbox.put(("record", {"seq": 1}, 1), wake=False) is False  # a record waits for the view after it
    assert outbox.put(("view", {"state": "idle"})) is True  # the loop must be woken
    assert outbox.put(("view", {"state": "betting"})) is False  # already due
    assert outbox.take() == ([("record", {"seq": 1}, 1), ("view", {"state": "idle"}),
                              ("view", {"state": "betting"})], None)
    # a take that found something keeps the next one due (the loop takes again after the pace): no wake-up
    assert outbox.put(("view", {"state": "dealing"})) is False
    assert outbox.take() == ([("view", {"state": "dealing"})], None)
    assert outbox.take() == ([], None)  # a take that finds nothing: the next waking put wakes the loop
    assert outbox.put(("record", None, 2), wake=False) is False
    assert outbox.wake() is True and outbox.wake() is False  # a flush: once until the take
    for seq in (3, 4, 5):
        outbox.put(("record", {"seq": seq}, seq))
    items, lost = outbox.take()
    assert [item[2] for item in items] == [3, 4, 5] and lost == 2

    async def run():
        hub = Hub(ring_size=10)
        hub.publish_record(b'{"seq": 1, "type": "RoundOpened", "data": {}}', 1)
        hub.lost(3)
        hub.publish_record(b'{"seq": 4, "type": "RoundOpened", "data": {}}', 4)
        return json.loads(hub.after_json(1)), json.loads(hub.after_json(3))

    after_one, after_three = asyncio.run(run())
    assert after_one["missed"] and [r["seq"] for r in after_one["records"]] == [4]
    assert not after_three["missed"] and after_three["next"] == 4


def test_a_take_sends_every_record_and_only_the_latest_of_its_views(operators_file):
    """Views handed over between two takes of the loop: only the last reaches the streams and ``GET /state``,
    after every record of the take, in order (docs/control.md, "GET /events/stream")."""
    server = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators_file), queue.Queue())  # not started
    try:
        subscriber = server.hub.subscribe(None)
        server.publish_view({"state": "idle", "round_no": None})
        server.publish_record(_record(1))
        server.publish_view({"state": "betting", "round_no": 1})
        server.publish_record(_record(2, "StackDealt"))  # private: never sent
        server.publish_record(_record(3, "CardsRevealed"))
        server.publish_view({"state": "dealing", "round_no": 1})
        server._loop.run_until_complete(asyncio.sleep(0))  # the one take the first view asked for
        frames = []
        while not subscriber.queue.empty():
            frames.append(subscriber.queue.get_nowait())
    finally:
        server.stop()
    assert [frame.split(b"\n")[:2] for frame in frames] == [[b"id: 1", b"event: record"],
                                                           [b"id: 3", b"event: record"], [b"event: view", b'data: '
                                                           b'{"state":"dealing","round_no":1,"seq":3}']]
    assert json.loads(server.hub.view_body) == {"state": "dealing", "round_no": 1, "seq": 3}


def test_the_screens_heartbeat_before_the_labels_is_the_servers():
    """screen.js waits on ``HEARTBEAT_S`` until ``GET /labels`` gives ``heartbeat_s``: the same interval as the
    server's ``HEARTBEAT``, or a page loaded as the server stops would wait a silence the server never keeps."""
    import re
    from importlib.resources import files

    from controller.control.app import HEARTBEAT

    script = files("controller.control").joinpath("screen/screen.js").read_text()
    (value,) = re.findall(r"^const HEARTBEAT_S = (\d+(?:\.\d+)?);", script, re.MULTILINE)
    assert float(value) == HEARTBEAT
