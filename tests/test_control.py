"""The local control interface (controller.control.server, docs/control.md) over real HTTP on loopback.

A ``Controller`` runs on its own thread against stand-in drivers that answer like the devices (the shuffle
counts 52, a read of the spots returns the chips laid out by the test, a dispense returns the next scripted
stack), so every action goes the real way: HTTP -> event queue -> journal -> round machine. Sources: hole-card
secrecy and roles (domain.md, "What the industry expects"); a seat's cards are turned at its settlement
(NY 9 NYCRR 5324.39(e)(9)(i)); community cards at their reveals (NY (e)(4),(6),(8)).
"""

from __future__ import annotations

import base64
import dataclasses
import http.client
import io
import json
import logging
import os
import queue
import re
import socket
import stat
import subprocess
import sys
import threading
import time
import unicodedata
from pathlib import Path

import pytest

from controller.cli import main as cli
from controller.control.operators import MIN_ITERATIONS, add_operator, hash_password, load_operators, verify_password
from controller.control.server import MAX_BODY, ControlConfig, ControlServer, parse_control_config, public_record
from controller.journal.reader import read_records
from controller.journal.store import Journal
from controller.service.loop import STOP, Controller
from controller.settings.files import ConfigError
from drivers import events as ev
from tests.cli_helpers import crisscross
from tests.round_helpers import CONFIG, antes, new_round

PASSWORDS = {"sue": "supervisor-pass", "dan": "dealer-pass-1"}
#: Longest a test waits for the controller to apply something (a bound, not a measured time).
PATIENCE = 30.0

CROSS = ("7d", "2c", "9s", "3h", "Kc")
HANDS = {1: ("Jh", "Jd"), 3: ("4c", "8d"), 5: ("Qs", "Ah")}  # seat 3 folds at the across decision


@pytest.fixture(scope="module")
def _operators(tmp_path_factory):
    """The operators' file's text, hashed once per module (each hash is a deliberately slow PBKDF2)."""
    path = tmp_path_factory.mktemp("operators") / "operators.yaml"
    add_operator(path, "sue", "supervisor", PASSWORDS["sue"], iterations=MIN_ITERATIONS)
    add_operator(path, "dan", "dealer", PASSWORDS["dan"], iterations=MIN_ITERATIONS)
    return path.read_text()


@pytest.fixture
def operators_file(tmp_path, _operators):
    """A test's own operators' file (sue, supervisor; dan, dealer), readable by its owner only."""
    path = tmp_path / "operators.yaml"
    path.write_text(_operators)
    path.chmod(0o600)
    return path


@pytest.fixture
def bare_server(operators_file):
    """A server whose queue nobody reads: what a request put there stays there."""
    server = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators_file), queue.Queue(), request_timeout=0.5)
    server.start()
    yield server
    server.stop()


class StandInDevices:
    """Drivers that answer like the devices, posting their answers on the controller's queue."""

    def __init__(self, events: queue.Queue) -> None:
        self.events = events
        self.layout: dict[int, dict[str, int]] = {}
        self.stacks = [CROSS, *(HANDS[s] for s in sorted(HANDS))]
        self.panel: list[str] = []

    def shuffle(self) -> None:
        self.events.put(ev.ShuffleComplete(52))

    def dispense(self, txn_id: int, count: int) -> None:
        self.events.put(ev.StackDispensed(txn_id, self.stacks[txn_id % 16]))

    def query_last(self) -> None:
        self.events.put(ev.ShoeLastDispense(0, ()))

    def put_chips(self, seat: int, spot: str, amount: int) -> None:
        """Chips on a spot, reported as the sensors do (``SpotChanged``)."""
        self.layout.setdefault(seat, {})[spot] = amount
        self.events.put(ev.SpotChanged(seat, spot, amount))

    def read_spots(self, request_id: int) -> None:
        spots = tuple((seat, spot, self.layout[seat][spot]) for seat in sorted(self.layout)
                      for spot in ev.SPOTS if self.layout[seat].get(spot))
        self.events.put(ev.SpotsSnapshot(request_id, spots))

    def set_lamps(self, buttons) -> None:
        """This table has no panel to light: the control interface is its only way in."""

    def show(self, text: str) -> None:
        self.panel.append(text)


def all_of(*types: str):
    """A ``Client.wait_for`` predicate true at the record that completes ``types`` (each seen once, in any
    order): the shoe's and the sensors' answers to one input come in whichever order the devices give them."""
    seen: set[str] = set()

    def complete(record) -> bool:
        seen.add(record["type"])
        return seen >= set(types)
    return complete


def _start_table(tmp_path, operators_file):
    """(events, server, journal, devices, controller thread): a controller with the control interface, both
    started, its devices ready."""
    events: queue.Queue = queue.Queue()
    server = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators_file), events, tmp_path / "journal.db")
    journal = Journal(tmp_path / "journal.db")  # the one the server's game recall reads
    devices = StandInDevices(events)
    controller = Controller(new_round(), journal, {"shoe": devices, "sensors": devices, "panel": devices}, events,
                            on_record=server.publish_record, on_view=server.publish_view)
    thread = threading.Thread(target=controller.run, name="controller")
    server.start()
    thread.start()
    for device in ("shoe", "sensors", "panel"):
        events.put(ev.DeviceReady(device, "test", "1.0", 1))
    return events, server, journal, devices, thread


@pytest.fixture
def table(tmp_path, operators_file):
    """A running controller with the control interface; stopped (thread joined) after the test."""
    events, server, journal, devices, thread = _start_table(tmp_path, operators_file)
    client = Client(server)
    client.state_after(client.wait_for(lambda r: r["type"] == "ShoeReconciled")["seq"])  # the table is idle
    yield client, devices, journal
    events.put(STOP)
    thread.join()
    server.stop()
    journal.close()


def test_the_stop_s_records_reach_the_interface_before_it_closes(tmp_path, operators_file):
    """``ServiceStopped`` (and the meters committed with it) are handed to the control interface like every
    other commit's records: a display reading the events sees the service stop, not a link dropped."""
    events, server, journal, _, thread = _start_table(tmp_path, operators_file)
    try:
        client = Client(server)
        client.wait_for(lambda r: r["type"] == "ShoeReconciled")
        events.put(STOP)
        thread.join()
        stopped = client.wait_for(lambda r: r["type"] == "ServiceStopped")
        assert stopped["seq"] == journal.head[0]  # the journal's last record, as the interface has it
    finally:
        events.put(STOP)
        thread.join()
        server.stop()
        journal.close()


class Client:
    """HTTP client of one server; keeps an /events cursor and everything it received."""

    def __init__(self, server: ControlServer) -> None:
        self.port = server.port
        self.cursor = 0
        self.received: list[dict] = []
        self.scanned = 0  # records of ``received`` that wait_for has looked at

    def request(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=PATIENCE + 5)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.headers, response.read()  # names in any case (RFC 9110, 5.1)
        finally:
            conn.close()

    def get(self, path):
        status, _, body = self.request("GET", path)
        return status, json.loads(body)

    def act(self, action, user="dan", reason=None, password=None, **extra):
        """POST one action; ``extra`` adds ``code``, ``round`` or ``state`` to the body; (status, answer)."""
        payload = {"action": action} if reason is None else {"action": action, "reason": reason}
        payload.update(extra)
        token = base64.b64encode(f"{user}:{password or PASSWORDS[user]}".encode()).decode()
        status, _, body = self.request("POST", "/actions", json.dumps(payload),
                                       {"Content-Type": "application/json", "Authorization": f"Basic {token}"})
        return status, json.loads(body)

    def poll(self, timeout=0.0):
        status, answer = self.get(f"/events?after={self.cursor}&timeout={timeout}")
        assert status == 200 and not answer["missed"]
        self.received += answer["records"]
        self.cursor = answer["next"]
        return answer["records"]

    def state_after(self, seq):
        """/state once it reflects journal record ``seq`` (views follow the records of their input)."""
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            status, state = self.get("/state")
            if status == 200 and state["seq"] >= seq:
                return state
            time.sleep(0.01)
        raise AssertionError(f"/state never reached record {seq}")

    def wait_for(self, predicate):
        """The next record (after the last one this returned) satisfying ``predicate``, long-polling for it."""
        deadline = time.monotonic() + PATIENCE
        while True:
            while self.scanned < len(self.received):
                record = self.received[self.scanned]
                self.scanned += 1
                if predicate(record):
                    return record
            if time.monotonic() >= deadline:
                raise AssertionError("the expected record never arrived")
            self.poll(timeout=5)


def test_state_is_the_published_view(table):
    client, _, _ = table
    status, state = client.get("/state")
    assert status == 200
    assert state["state"] == "idle" and state["allowed_actions"] == ["open_betting", "disable_table", "enter_test_mode"]
    assert state["devices_ready"] == ["panel", "sensors", "shoe"]


def test_the_screen_s_words_and_each_action_s_role_come_from_the_controller(table):
    """``GET /labels`` and the view's ``actions`` (docs/control.md, "The dealer's screen"): the role each action
    needs (domain.md "Roles": a supervisor voids a round and clears a fault), its label in words, and why the step
    the round waits for is not allowed yet; ``/openapi.json`` describes both."""
    client, _, _ = table
    status, words = client.get("/labels")
    assert status == 200
    assert words["actions"]["void_round"] == {"label": "Void round", "role": "supervisor"}
    assert words["actions"]["deal_by_hand"]["role"] == "supervisor"
    assert words["actions"]["open_betting"]["role"] == "dealer"
    assert words["states"]["across_decision"] == "Across decision" and words["spots"]["ante_across"] == "Ante across"
    assert words["hands"]["two_pair"] == "Two pair" and words["currency"]["minor_units"] == 2  # cents: domain.md
    _, state = client.get("/state")
    assert [(a["action"], a["role"], a["reason"]) for a in state["actions"]] == [
        ("open_betting", "dealer", None), ("disable_table", "supervisor", None),
        ("enter_test_mode", "supervisor", None)]
    _, document = client.get("/openapi.json")
    assert document["paths"]["/labels"]["get"]["responses"]["200"]
    assert set(document["components"]["schemas"]["ViewAction"]["required"]) == {"action", "label", "role", "reason"}


def test_an_action_is_queued_journaled_as_an_event_and_applied(table):
    client, _, journal = table
    status, answer = client.act("open_betting")
    assert status == 202
    assert answer == {"queued": {"action": "open_betting", "user": "dan", "role": "dealer", "code": "",
                                 "round": None, "state": None}}
    opened = client.wait_for(lambda r: r["type"] == "RoundOpened")
    records = read_records(journal.path)
    action = next(r for r in records if r["type"] == "OperatorAction")
    assert action["kind"] == "event"
    assert action["data"] == {"action": "open_betting", "user": "dan", "role": "dealer", "reason": "", "code": "",
                              "round": None, "state": None, "stale": "", "answers": None}
    assert action["seq"] < opened["seq"]  # journaled before it was applied
    shuffled = client.wait_for(lambda r: r["type"] == "ShuffleComplete")
    assert client.state_after(shuffled["seq"])["state"] == "betting"


def test_a_supervisor_action_with_a_dealer_login_is_refused_and_recorded(table):
    client, _, _ = table
    client.act("open_betting")
    client.wait_for(lambda r: r["type"] == "ShuffleComplete")
    status, answer = client.act("void_round", user="dan", reason="customer dispute", code="dispute")
    assert (status, answer) == (403, {"error": "void_round needs a supervisor; user dan has the role dealer"})
    refused = client.wait_for(lambda r: r["type"] == "PressRefused")  # journaled as refused all the same
    assert refused["data"] == {"button": "void_round", "user": "dan", "role": "dealer",
                               "reason": "void_round needs a supervisor; user dan has the role dealer"}
    assert client.state_after(refused["seq"])["state"] == "betting"
    assert client.act("void_round", user="sue", reason="customer dispute", code="dispute")[0] == 202
    voided = client.wait_for(lambda r: r["type"] == "RoundVoided")
    assert (voided["data"]["by"], voided["data"]["role"], voided["data"]["code"]) == ("sue", "supervisor", "dispute")
    assert "reason" not in voided["data"]  # the free text stays in the journal


def test_a_full_round_shows_no_face_down_card_and_events_come_in_order_without_a_gap(table):
    client, devices, journal = table
    wagers = {1: antes(500, 100), 3: antes(500), 5: antes(1000)}
    decisions = {"across": {1: 1500, 5: 1000}, "down": {1: 500, 5: 3000}, "middle": {1: 1500, 5: 2000}}
    states = []

    def step(action, until):
        assert client.act(action)[0] == 202
        record = client.wait_for(until)
        states.append(client.state_after(record["seq"]))
        return record

    step("open_betting", all_of("ShuffleComplete", "SpotsSnapshot"))  # the shoe counted, the layout read
    for seat, w in wagers.items():
        for spot, amount in w.items():
            devices.put_chips(seat, spot, amount)
    step("no_more_bets", lambda r: r["type"] == "Display" and "Across decision" in r["data"]["text"])
    for name in ("across", "down", "middle"):
        for seat, amount in decisions[name].items():
            devices.put_chips(seat, name, amount)
        step("confirm", lambda r, n=name: r["type"] == "Display" and r["data"]["text"].startswith("Turn the"))
        step("reveal", lambda r: r["type"] in ("CardsRevealed", "RoundClosed"))
    closed = client.wait_for(lambda r: r["type"] == "RoundClosed")
    states.append(client.state_after(closed["seq"]))
    assert states[-1]["state"] == "closed"

    # secrecy: walk the public records in order, knowing what the table has turned face up so far
    turned: set[str] = set()
    dealt = set(CROSS) | {c for cards in HANDS.values() for c in cards}
    folded = {r["data"]["seat"] for r in client.received if r["type"] == "DecisionMade"
              and r["data"]["action"] == "fold"}
    assert folded == {3}
    settled = []
    for record in client.received:
        if record["type"] == "CardsRevealed":
            turned |= set(record["data"]["cards"])
        visible = turned | (set(HANDS[record["data"]["seat"]]) if record["type"] == "SeatSettled" else set())
        text = json.dumps(record)
        leaked = [c for c in dealt - visible if re.search(rf"\b{c}\b", text)]
        assert leaked == [], f"{record['type']} (seq {record['seq']}) shows {leaked}"
        assert "hash" not in record and "prev" not in record
        if record["type"] == "SeatSettled":
            settled.append(record["data"]["seat"])
    assert settled == [5, 3, 1]  # from the dealer's right (NY (e)(9))
    shown = json.dumps(client.received)
    assert all(f'"{c}"' in shown for c in HANDS[1])  # a seat in action shows its cards at its settlement
    for state in states:  # /state shows only the community cards turned, never a seat's cards
        assert set(state["community"]) <= set(CROSS)
        hidden = dealt - set(state["community"])
        assert not [c for c in hidden if re.search(rf"\b{c}\b", json.dumps(state))]
    assert states[-1]["community"] == ["7d", "2c", "9s", "3h", "Kc"]

    # the subscription received every public record of the journal, in order, none twice
    expected = [p for p in map(public_record, read_records(journal.path)) if p is not None]
    assert client.received == expected[:len(client.received)]
    assert [r["seq"] for r in client.received] == sorted({r["seq"] for r in client.received})
    assert not any(r["type"] in ("StackDealt", "StackDispensed", "Dispense") for r in client.received)


def test_events_after_a_cursor_resume_exactly_there(table):
    client, _, _ = table
    client.act("open_betting")
    client.wait_for(lambda r: r["type"] == "ShuffleComplete")
    everything = client.get("/events?after=0")[1]["records"]
    middle = everything[len(everything) // 2]["seq"]
    later = client.get(f"/events?after={middle}")[1]["records"]
    expected = [r for r in everything if r["seq"] > middle]
    assert later[:len(expected)] == expected  # more records may have arrived in between, never fewer
    assert later[0]["seq"] > middle


def test_bad_or_missing_credentials_are_refused_and_nothing_is_queued(bare_server, caplog):
    client = Client(bare_server)
    body = json.dumps({"action": "open_betting"})
    cases = [
        {},
        {"Authorization": "Basic " + base64.b64encode(b"dan:wrong-password").decode()},
        {"Authorization": "Basic " + base64.b64encode(b"nobody:dealer-pass-1").decode()},
        {"Authorization": "Basic not-base64!"},
        {"Authorization": "Bearer abc"},
    ]
    for headers in cases:
        status, answer_headers, answer = client.request("POST", "/actions", body,
                                                        {"Content-Type": "application/json", **headers})
        assert status == 401, headers
        assert "credentials required" in json.loads(answer)["error"]
        assert answer_headers["WWW-Authenticate"].startswith("Basic")
    assert bare_server.events.empty()
    warnings = [r.getMessage() for r in caplog.records if "refused credentials" in r.getMessage()]
    assert len(warnings) == len(cases) and "'dan' from 127.0.0.1" in warnings[1]
    assert not any("wrong-password" in r.getMessage() for r in caplog.records)


def _auth(user="dan"):
    return _auth_with(user, PASSWORDS[user])


def _auth_with(user, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(("method", "path", "body", "headers", "status", "says"), [
    ("POST", "/actions", b"{not json", JSON, 400, "not JSON"),
    ("POST", "/actions", b"\xff\xfe", JSON, 415, "the body is UTF-16"),  # a byte order mark of UTF-16
    ("POST", "/actions", b"\xff{}", JSON, 400, "not UTF-8: byte 0 (0xff)"),
    ("POST", "/actions", b"[1, 2]", JSON, 400, "JSON object"),
    ("POST", "/actions", b'{"action": "deal_me_aces"}', JSON, 400, "allowed: open_betting, no_more_bets"),
    ("POST", "/actions", b'{"action": "confirm", "reason": 5}', JSON, 400, "reason must be one line of printable text"),
    ("POST", "/actions", b'{"action": "void_round", "reason": "a\\u0000b"}', JSON, 400, "printable text"),
    ("POST", "/actions", b'{"action": "void_round", "reason": "a\\nb"}', JSON, 400, "printable text"),
    ("POST", "/actions", b'{"action": "confirm", "action": "void_round"}', JSON, 400, "key \"action\" repeated"),
    ("POST", "/actions", json.dumps({"action": "confirm", "reason": "x" * 201}).encode(), JSON, 400, "at most 200"),
    ("POST", "/actions", b'{"action": "confirm", "seat": 3}', JSON, 400,
     "unknown key(s): seat; the allowed keys are action, code, reason, round, state"),
    ("POST", "/actions", b'{"action": "void_round", "reason": "x"}', JSON, 400, "needs a code"),
    ("POST", "/actions", b'{"action": "void_round", "code": "because"}', JSON, 400, 'got "because"'),
    ("POST", "/actions", b'{"action": null}', JSON, 400, "unknown action null"),
    ("POST", "/actions", b'{"action": true}', JSON, 400, "unknown action true"),
    ("POST", "/actions", b'{"action": "confirm", "round": "3"}', JSON, 400, 'round must be a round number'),
    ("POST", "/actions", b'{"action": "confirm", "round": true}', JSON, 400, 'got true'),
    ("POST", "/actions", b'{"action": "confirm", "state": 5}', JSON, 400, 'state must be a state of the round'),
    ("POST", "/actions", b'{"action": "confirm", "state": "Idle"}', JSON, 400, 'got "Idle"'),
    ("GET", "/state?after=3", None, {}, 400, "unknown parameter(s): after; it takes none"),
    ("POST", "/actions", b'{"action": "confirm"}', {"Content-Type": "text/plain"}, 415, "application/json"),
    ("POST", "/actions", b'{"action": "confirm"}', {}, 415, "application/json"),
    # a body framed two ways is ambiguous (request smuggling), even with an empty Transfer-Encoding
    ("POST", "/actions", b'{"action": "confirm"}', {**JSON, "Transfer-Encoding": "chunked"}, 411, "not chunked"),
    ("POST", "/actions", b'{"action": "confirm"}', {**JSON, "Transfer-Encoding": ""}, 411, "not chunked"),
    ("GET", "/actions", None, {}, 405, "POST only"),
    ("POST", "/state", b"{}", JSON, 405, "GET only"),
    ("DELETE", "/events", None, {}, 405, "GET only"),
    ("GET", "/journal", None, {}, 404, "no such path"),
    ("GET", "/events?after=x", None, {}, 400, "integer"),
    ("GET", "/events?timeout=31", None, {}, 400, "timeout must be 0 to 30"),
    ("GET", "/events?after=-1", None, {}, 400, "after must be 0 to"),
    ("GET", "/events?after=99999999999999999999999999999", None, {}, 400, "after must be 0 to"),
    ("GET", "/events?after=1&after=2", None, {}, 400, "after given more than once"),
    ("GET", "/events?since=3", None, {}, 400, "unknown parameter"),
    # int() and float() take more than decimal digits; the cursor and the wait take digits only
    ("GET", "/events?after=1_0", None, {}, 400, "after must be 0 to"),
    ("GET", "/events?after=%2B5", None, {}, 400, "after must be 0 to"),
    ("GET", "/events?after=+5", None, {}, 400, "after must be 0 to"),
    ("GET", "/events?after=%205", None, {}, 400, "after must be 0 to"),
    ("GET", "/events?after=5%0A", None, {}, 400, "after must be 0 to"),
    ("GET", "/events?after=%EF%BC%95", None, {}, 400, "after must be 0 to"),
    ("GET", "/events?timeout=1_0", None, {}, 400, "timeout must be 0 to 30"),
    ("GET", "/events?timeout=1e1", None, {}, 400, "timeout must be 0 to 30"),
    ("GET", "/events?timeout=nan", None, {}, 400, "timeout must be 0 to 30"),
    # the bound holds on the value written, not on the nearest double (30.000000000000001 reads as 30.0)
    ("GET", "/events?timeout=30.000000000000001", None, {}, 400, "timeout must be 0 to 30"),
    ("GET", "/events?timeout=30.00000000000000000001", None, {}, 400, "timeout must be 0 to 30"),
    ("GET", "/events?timeout=30.0000001", None, {}, 400, "timeout must be 0 to 30"),
])
def test_hostile_requests_get_a_clear_error_and_change_nothing(bare_server, method, path, body, headers, status,
                                                              says):
    client = Client(bare_server)
    got, _, answer = client.request(method, path, body, {**_auth(), **headers})
    assert got == status
    assert says in json.loads(answer)["error"]
    assert bare_server.events.empty()


def _raw(server, data: bytes) -> bytes:
    """Send raw bytes, then read until the server closes the connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_body_over_the_limit_is_refused_without_being_read(bare_server):
    head = (f"POST /actions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {MAX_BODY + 1}\r\n"
            f"Authorization: {_auth()['Authorization']}\r\n\r\n").encode()
    answer = _raw(bare_server, head)  # the body is never sent: the answer must not wait for it
    assert answer.startswith(b"HTTP/1.1 413")
    assert bare_server.events.empty()


def test_a_request_that_never_finishes_is_dropped_and_changes_nothing(bare_server):
    # headers never finished: the connection is closed after the request timeout, with no answer
    assert _raw(bare_server, b"POST /actions HTTP/1.0\r\nContent-Type: application/json\r\n") == b""
    # a body shorter than announced: 408, nothing queued
    head = (f"POST /actions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 40\r\n"
            f"Authorization: {_auth()['Authorization']}\r\n\r\n").encode()
    answer = _raw(bare_server, head + b'{"action": "open_')
    assert answer.startswith(b"HTTP/1.1 408")
    assert bare_server.events.empty()
    # the server still answers afterwards
    assert Client(bare_server).get("/events?after=0")[0] == 200


def test_state_before_the_controller_published_one_is_503(bare_server):
    status, answer = Client(bare_server).get("/state")
    assert status == 503 and "no state yet" in answer["error"]


def test_a_long_poll_returns_when_a_record_arrives_and_stop_wakes_it(bare_server):
    client = Client(bare_server)
    answers = []
    poller = threading.Thread(target=lambda: answers.append(client.get("/events?after=0&timeout=30")))
    poller.start()
    bare_server.publish_record({"seq": 1, "time": "t", "kind": "record", "round": 1, "type": "RoundOpened",
                                "data": {"round_no": 1}, "prev": "0" * 64, "hash": "h"})
    bare_server.flush()  # no view follows: the records are taken now
    poller.join()
    assert answers[0][1]["records"] == [{"seq": 1, "time": "t", "kind": "record", "round": 1,
                                         "type": "RoundOpened", "data": {"round_no": 1}}]
    assert answers[0][1]["next"] == 1


def test_a_client_behind_the_ring_is_told_it_missed_records(operators_file):
    server = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators_file), queue.Queue(), ring_size=3)
    server.start()
    try:
        for seq in range(1, 7):
            server.publish_record({"seq": seq, "kind": "record", "type": "RoundOpened", "data": {"round_no": seq}})
        server.flush()
        client = Client(server)
        assert client.get("/events?after=0")[1]["missed"] is True
        fresh = client.get("/events?after=3")[1]
        assert (fresh["missed"], [r["seq"] for r in fresh["records"]], fresh["next"]) == (False, [4, 5, 6], 6)
    finally:
        server.stop()


# ---------------------------------------------------------------------- the secrecy filter on its own
def _record(type_, data, kind="record"):
    return {"seq": 9, "time": "t", "kind": kind, "round": 1, "type": type_, "data": data, "prev": "p", "hash": "h"}


@pytest.mark.parametrize("type_, data, kind", [
    ("StackDealt", {"round_no": 1, "stack": 1, "seat": 1, "cards": ["Jh", "Jd"]}, "record"),
    ("StackDispensed", {"txn_id": 17, "cards": ["Jh", "Jd"]}, "event"),
    ("ShoeLastDispense", {"txn_id": 17, "cards": ["Jh", "Jd"]}, "event"),
    ("Dispense", {"txn_id": 17, "count": 2, "stack": 1, "seat": 1}, "command"),
    ("ReadSpots", {"request_id": 1}, "command"),
    ("SomethingNew", {"cards": ["Jh"]}, "record"),
])
def test_records_with_cards_or_device_commands_stay_in_the_journal(type_, data, kind):
    assert public_record(_record(type_, data, kind)) is None


def test_a_folded_seat_settlement_loses_its_cards_and_hands():
    settlement = {"seat": 3, "across_hand": {"cards": ["4c", "8d", "7d", "2c", "Kc"], "category": "high_card"},
                  "down_hand": {"cards": ["4c", "8d", "9s", "3h", "Kc"], "category": "high_card"},
                  "five_card_bonus_hand": {"cards": ["7d", "2c", "9s", "3h", "Kc"], "category": "high_card"},
                  "wagers": {"ante_across": {"amount": 500, "outcome": "lose", "net": -500}}, "net": -500,
                  "folded_at": "across"}
    public = public_record(_record("SeatSettled", {"round_no": 1, "seat": 3, "settlement": settlement}))
    assert "4c" not in json.dumps(public) and "8d" not in json.dumps(public)
    assert public["data"]["settlement"]["wagers"] == settlement["wagers"]
    shown = public_record(_record("SeatSettled", {"round_no": 1, "seat": 3,
                                                  "settlement": {**settlement, "folded_at": None}}))
    assert shown["data"]["settlement"]["across_hand"]["cards"][:2] == ["4c", "8d"]


def test_an_unknown_event_irregularity_shows_only_the_type_name():
    record = _record("Irregularity", {"round_no": 1, "kind": "unknown_event",
                                      "detail": {"event": "Peek(cards=('Ah', 'Kd'))"}})
    assert public_record(record)["data"]["detail"] == {"event": "Peek"}


# ---------------------------------------------------------------------- configuration and operators
@pytest.mark.parametrize("entry, says", [
    ({"host": "0.0.0.0"}, "not a loopback address"),
    ({"host": "192.168.1.10"}, "not a loopback address"),
    ({"host": "localhost"}, "not a loopback address"),
    ({"port": 70000}, "above 65535"),
    ({"port": -1}, "below the minimum"),
    ({"enabled": "yes"}, "true or false"),
    ({"bind": "127.0.0.1"}, "unknown key(s) bind"),
])
def test_control_configuration_is_checked(tmp_path, entry, says):
    with pytest.raises(ConfigError, match=re.escape(says)):
        parse_control_config(tmp_path / "table.yaml", entry)


@pytest.fixture
def ipv6_server(operators_file):
    """A server on the IPv6 loopback (the test is skipped on a machine without one)."""
    try:
        server = ControlServer(ControlConfig(True, "::1", 0, operators_file), queue.Queue())
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    server.start()
    yield server
    server.stop()


def test_loopback_addresses_are_accepted_and_ipv6_serves(tmp_path, ipv6_server):
    assert parse_control_config(tmp_path / "t.yaml", {"host": "::1", "port": 0}).host == "::1"
    assert parse_control_config(tmp_path / "t.yaml", None).enabled is False
    conn = http.client.HTTPConnection("::1", ipv6_server.port, timeout=PATIENCE)
    conn.request("GET", "/state")
    assert conn.getresponse().status == 503
    conn.close()
    assert ipv6_server.url == f"http://[::1]:{ipv6_server.port}"


def test_operator_add_writes_a_private_file_and_the_password_verifies(tmp_path, monkeypatch, capsys):
    path = tmp_path / "ops.yaml"
    monkeypatch.setattr("sys.stdin", _Lines("a-long-password\n"))
    assert cli.main(["operator", "add", "rita", "--role", "supervisor", "--file", str(path)]) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    stored = load_operators(path)["rita"]
    assert stored.role == "supervisor" and "a-long-password" not in path.read_text()
    from controller.control.operators import authenticate
    assert authenticate(load_operators(path), "rita", "a-long-password") == stored
    assert authenticate(load_operators(path), "rita", "a-long-passwore") is None
    monkeypatch.setattr("sys.stdin", _Lines("short\n"))
    assert cli.main(["operator", "add", "bob", "--role", "dealer", "--file", str(path)]) == 2
    assert "at least 8 characters" in capsys.readouterr().err


def test_a_change_to_the_operators_file_waits_for_the_one_in_progress_and_keeps_it(tmp_path):
    """``operator add`` and ``remove`` hold the file for their change (``editing``): a remove that starts while
    another change holds it waits, then reads what that change wrote and keeps it. Without the hold, eight adds at
    once kept one user, and a supervisor removed during an add was written back with her rights."""
    import threading

    from controller.control.operators import (MIN_ITERATIONS, Operator, add_operator, editing, hash_password,
                                              remove_operator, save_operators)

    path = tmp_path / "ops.yaml"
    add_operator(path, "alice", "supervisor", "password-a", iterations=MIN_ITERATIONS)
    bob = Operator("bob", "dealer", hash_password("password-b", iterations=MIN_ITERATIONS))
    with editing(path):  # another change in progress: it adds bob while the remove is asked for
        assert stat.S_IMODE((tmp_path / "ops.yaml.lock").stat().st_mode) == 0o600
        remover = threading.Thread(target=remove_operator, args=(path, "alice"))
        remover.start()
        operators = load_operators(path)
        save_operators(path, {**operators, "bob": bob})
    remover.join(timeout=30)
    assert not remover.is_alive()
    assert set(load_operators(path)) == {"bob"}  # alice removed, bob kept
    assert not (tmp_path / "ops.yaml.lock").exists()  # removed by the last change, as it ended


def test_changes_of_the_operators_file_hold_it_one_at_a_time_while_its_lock_file_comes_and_goes(tmp_path):
    """Each change removes the lock file as it ends (``editing``): one that waited on the removed file must not
    hold it together with one that made the file anew. Eight threads count to 400 in a file, one change at a
    time: a count lost, or two inside at once, would show."""
    from controller.control.operators import editing

    path, count = tmp_path / "ops.yaml", tmp_path / "count"
    count.write_text("0")
    inside, most, guard = [0], [0], threading.Lock()

    def change() -> None:
        for _ in range(50):
            with editing(path):
                with guard:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                count.write_text(str(int(count.read_text()) + 1))
                with guard:
                    inside[0] -= 1

    threads = [threading.Thread(target=change) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert (count.read_text(), most[0]) == ("400", 1)
    assert not (tmp_path / "ops.yaml.lock").exists()


def test_a_hash_rewritten_at_a_sign_in_never_writes_back_a_user_removed_meanwhile(tmp_path, monkeypatch):
    """The rewrite of a weak hash at a sign-in (``rehash_operator``) read the file, hashed for a third of a
    second, then wrote what it had read: ``operator remove bob`` done meanwhile was undone, bob's rights given
    back. The hash is made first, and the file is read and written under the hold every change takes."""
    import controller.control.operators as operators
    from controller.control.operators import rehash_operator, remove_operator

    path = tmp_path / "ops.yaml"
    add_operator(path, "alice", "supervisor", "password-a", iterations=MIN_ITERATIONS)
    add_operator(path, "bob", "dealer", "password-b", iterations=MIN_ITERATIONS)
    real = operators.hash_password

    def hashing_while_bob_is_removed(password, **kwargs):
        remove_operator(path, "bob")  # another change, while the rewrite hashes
        return real(password, **kwargs)

    monkeypatch.setattr(operators, "hash_password", hashing_while_bob_is_removed)
    assert rehash_operator(path, load_operators(path)["alice"], "password-a")
    assert set(load_operators(path)) == {"alice"}
    assert verify_password("password-a", load_operators(path)["alice"].password)


def test_a_password_longer_than_a_sign_in_carries_is_refused_and_an_endless_input_never_held(tmp_path,
                                                                                              monkeypatch, capsys):
    """A password is at most 1,024 characters (a sign-in's body holds 4,096 bytes), and ``operator add`` reads no
    more than that of its standard input's line: ``< /dev/zero`` (no line end) took 15 GB in 15 s."""
    from controller.control.operators import MAX_PASSWORD

    path = tmp_path / "ops.yaml"
    assert MAX_PASSWORD == 1024
    monkeypatch.setattr("sys.stdin", _Lines("p" * 1024 + "\n"))
    assert cli.main(["operator", "add", "rita", "--role", "dealer", "--file", str(path)]) == 0
    endless = _Lines("\0" * 100_000)
    monkeypatch.setattr("sys.stdin", endless)
    assert cli.main(["operator", "add", "bob", "--role", "dealer", "--file", str(path)]) == 2
    assert "the password must have at most 1,024 characters" in capsys.readouterr().err
    # read no further than the bound and one character more, 4 bytes each at most in UTF-8 (RFC 3629), a line
    # end of two, and one byte that shows the line goes on
    assert len(endless.lines[0]) == 100_000 - (4 * 1025 + 2 + 1)
    assert set(load_operators(path)) == {"rita"}
    monkeypatch.setattr("sys.stdin", _Lines("\N{GREEK SMALL LETTER ALPHA}" * 1024 + "\n"))  # 2 bytes each
    assert cli.main(["operator", "add", "alpha", "--role", "dealer", "--file", str(path)]) == 0
    monkeypatch.setattr("sys.stdin", _Lines("\N{GREEK SMALL LETTER ALPHA}" * 1025 + "\xff\n"))
    assert cli.main(["operator", "add", "bob", "--role", "dealer", "--file", str(path)]) == 2
    assert "the password must have at most 1,024 characters" in capsys.readouterr().err


def test_a_passwords_length_is_counted_in_characters_of_its_nfc_form(tmp_path, monkeypatch, capsys):
    """The password hashed is its NFC form (``password_bytes``), so its length rules count that form's
    characters, not the code points typed: an "e" and a combining acute accent (U+0301) is one character, "é".
    600 of them (1,200 code points) were refused as longer than 1,024 characters, and "abcdé" so typed with "f1"
    (8 code points, 7 characters) passed the minimum of 8."""
    path = tmp_path / "ops.yaml"
    monkeypatch.setattr("sys.stdin", _Lines("e\u0301" * 600 + "\n"))
    assert cli.main(["operator", "add", "rita", "--role", "dealer", "--file", str(path)]) == 0, capsys.readouterr()
    assert verify_password("\u00e9" * 600, load_operators(path)["rita"].password)
    monkeypatch.setattr("sys.stdin", _Lines("abcde\u0301f1\n"))
    assert cli.main(["operator", "add", "bob", "--role", "dealer", "--file", str(path)]) == 2
    assert "the password must have at least 8 characters" in capsys.readouterr().err
    # a line longer than the bytes read (4 * 1,025 + 2) is refused whole, never cut and taken: 700 Hangul
    # syllables typed as two jamo each (6 bytes, one character in NFC) are 4,200 bytes
    monkeypatch.setattr("sys.stdin", _Lines("\u1100\u1161" * 700 + "\n"))
    assert cli.main(["operator", "add", "bob", "--role", "dealer", "--file", str(path)]) == 2
    assert "the password must have at most 1,024 characters" in capsys.readouterr().err
    assert set(load_operators(path)) == {"rita"}


def test_a_password_that_is_not_utf8_is_refused_naming_its_first_such_byte(tmp_path, monkeypatch, capsys):
    """A password on standard input is UTF-8 text, as a sign-in carries it: bytes that are not (a Latin-1 "ä",
    0xe4, at byte 3; 0xff at byte 9) are refused in one line naming the first such byte and its place, exit
    status 2 as for a password too short (it was Python's codec error, "surrogates not allowed"); nothing is
    written."""
    path = tmp_path / "ops.yaml"
    for line, byte, place in ((b"pa\xe4ssword\n", "0xe4", 3), (b"password\xffss\n", "0xff", 9),
                              (b"p\xc3\xa4ss\xc3word\n", "0xc3", 6)):  # an "ä" in UTF-8, then a lone lead byte
        # standard input as Python opens it in the C locale: its bytes that are not UTF-8 read as surrogates
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(line), encoding="utf-8",
                                                           errors="surrogateescape"))
        assert cli.main(["operator", "add", "bob", "--role", "dealer", "--file", str(path)]) == 2
        assert capsys.readouterr().err == (f"crisscross: the password is not UTF-8 text: byte {byte} at byte "
                                           f"{place} of standard input\n")

    class Terminal:
        def isatty(self) -> bool:
            return True

    def typed(prompt: str = "") -> str:  # getpass decodes the terminal's line as the locale says: UTF-8 here
        return b"password\xff\n".decode("utf-8")

    monkeypatch.setattr("getpass.getpass", typed)
    monkeypatch.setattr("sys.stdin", Terminal())
    assert cli.main(["operator", "add", "bob", "--role", "dealer", "--file", str(path)]) == 2
    assert capsys.readouterr().err == "crisscross: the password is not UTF-8 text: byte 0xff at byte 9 as typed\n"
    assert not path.exists()


def test_a_password_nobody_could_type_is_refused_naming_the_character(tmp_path, monkeypatch, capsys):
    """A password read from a file saved with a byte-order mark (EF BB BF), or holding a NUL or an escape, was
    added ("added", exit 0) though no sign-in made at a keyboard sends it: refused naming the character (its
    code point, Unicode name, place) with exit 2, nothing written. Letters beyond ASCII are typed: taken."""
    path = tmp_path / "ops.yaml"
    for line, named in ((b"\xef\xbb\xbfpassword1\n", "U+FEFF ZERO WIDTH NO-BREAK SPACE at character 1"),
                        (b"pass\x00word123\n", "U+0000 a control character at character 5"),
                        (b"password\x1b[A\n", "U+001B a control character at character 9"),
                        (b"pass\xe2\x80\x8bword1\n", "U+200B ZERO WIDTH SPACE at character 5")):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(line), encoding="utf-8"))
        assert cli.main(["operator", "add", "bob", "--role", "dealer", "--file", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"crisscross: the password holds {named}: nobody could type it") and "\n" == err[-1:]
        assert not path.exists()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO("pässwörd-ñ1\n".encode()), encoding="utf-8"))
    assert cli.main(["operator", "add", "bob", "--role", "dealer", "--file", str(path)]) == 0
    assert verify_password("pässwörd-ñ1", load_operators(path)["bob"].password)


@pytest.mark.parametrize("mode, shared", [(0o644, "group and others may read it"), (0o640, "group may read it"),
                                         (0o606, "others may read and write it"), (0o620, "group may write it"),
                                         (0o611, "group and others may execute it")])
def test_an_operators_file_others_may_read_or_change_is_refused(operators_file, mode, shared):
    """The password hashes are the owner's only (``operator add`` writes mode 0600): a file group or others may
    read (an offline guessing attack) or write (a supervisor of their own) is refused, naming the fix and what
    the mode lets them do (chmod(1)'s bits: 4 read, 2 write, 1 execute; 0611 was called "read or change")."""
    assert load_operators(operators_file)  # mode 0600: read
    os.chmod(operators_file, mode)
    with pytest.raises(ConfigError, match=re.escape(f"{operators_file}: the operators file: {shared} (mode {mode:04o}): "
                                                    f"it holds the password hashes; chmod 600 {operators_file}")):
        load_operators(operators_file)


class _Lines:
    """A non-terminal standard input, read as bytes (``buffer``) as ``operator add`` reads it."""

    def __init__(self, text: str | bytes) -> None:
        self.lines = (text.encode("utf-8") if isinstance(text, str) else text).splitlines(keepends=True)
        self.buffer = self

    def isatty(self) -> bool:
        return False

    def readline(self, size: int = -1) -> bytes:
        """The next line, or its first ``size`` bytes (the rest stays for the next call), as a file's."""
        if not self.lines:
            return b""
        line = self.lines.pop(0)
        if 0 <= size < len(line):
            self.lines.insert(0, line[size:])
            return line[:size]
        return line


def _write_private(path, text: str) -> None:
    """Write an operators file as ``operator add`` does: readable by its owner only."""
    path.write_text(text)
    os.chmod(path, 0o600)


@pytest.mark.parametrize("iterations", [1000, 199_999, 6_000_001, 999_999_999_999])
def test_an_operators_file_with_a_weak_or_unbounded_hash_is_refused(tmp_path, iterations):
    """Below 200,000 iterations a hash is weak; above 6,000,000 (ten times a new hash's 600,000) every sign-in
    would cost that much (``authenticate``), and 999,999,999,999 overflowed inside ``hashlib`` at every sign-in
    (HTTP 500) while ``operator list`` took the file."""
    path = tmp_path / "ops.yaml"
    _write_private(path, f"operators:\n  eve: {{role: supervisor, password: 'pbkdf2_sha256${iterations}$"
                   f"AAAAAAAAAAA=${'A' * 43}='}}\n")
    with pytest.raises(ConfigError, match=f"operators.eve.password: {iterations} iterations: between 200000 and "
                                          f"6000000 are accepted"):
        load_operators(path)
    proc = crisscross("operator", "list", "--file", str(path))
    assert proc.returncode == 2 and "between 200000 and 6000000" in proc.stderr


def test_a_hash_at_either_bound_of_iterations_is_taken(tmp_path):
    for iterations in (200_000, 6_000_000):
        stored = hash_password("a password", iterations=iterations, salt=bytes(16))
        assert verify_password("a password", stored) and not verify_password("another", stored)


@pytest.mark.parametrize("entry, line, says", [
    ("  alice: {role: supervisor, password: PW}\n  bob:\n    role: croupier\n    password: PW\n", 4,
     "operators.bob.role: 'croupier' is not one of dealer, supervisor"),
    ("  alice: {role: supervisor, password: PW}\n  bob:\n    role: dealer\n    password: 'pbkdf2_sha256$x'\n", 5,
     "operators.bob.password: expected pbkdf2_sha256$<iterations>$<salt>$<hash>"),
    ("  alice: {role: supervisor, password: PW}\n  bo b: {role: dealer, password: PW}\n", 3,
     "operators: 'bo b' is not a user name"),
])
def test_an_operators_file_refusal_names_the_line(operators_file, entry, line, says):
    """Line 1 is ``operators:``; each entry below it, counted by hand in the text written."""
    stored = load_operators(operators_file)
    password = next(iter(stored.values())).password  # a valid hash, so only the edited entry is wrong
    path = operators_file.parent / "edited.yaml"
    _write_private(path, "operators:\n" + entry.replace("PW", f"'{password}'"))
    with pytest.raises(ConfigError) as caught:
        load_operators(path)
    assert str(caught.value).startswith(f"{path}: line {line}: {says}"), str(caught.value)


def test_operators_that_is_not_a_mapping_is_refused_with_its_line(tmp_path):
    path = tmp_path / "ops.yaml"
    _write_private(path, "# users\noperators: [alice]\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line 2: operators: expected a mapping of user names, "
                                                    "got list")):
        load_operators(path)
    _write_private(path, "operators:\n")
    assert load_operators(path) == {}


def test_an_operator_added_while_running_can_act(bare_server, operators_file):
    add_operator(operators_file, "newbie", "dealer", "newbie-password", iterations=MIN_ITERATIONS)
    token = base64.b64encode(b"newbie:newbie-password").decode()
    status, _, _ = Client(bare_server).request("POST", "/actions", b'{"action": "confirm"}',
                                               {**JSON, "Authorization": f"Basic {token}"})
    assert status == 202
    changed, acted = bare_server.events.get_nowait(), bare_server.events.get_nowait()
    assert ("newbie", "dealer") in changed.operators and acted.user == "newbie"  # journaled first, then her action


#: One password as a keyboard sends it (each accented letter one code point, NFC) and decomposed (each a letter
#: and a combining accent, NFD: as some systems' input methods and files hold it); Unicode, UAX #15.
COMPOSED, DECOMPOSED = "caf\u00e9-cr\u00e8me", "cafe\u0301-cre\u0300me"


@pytest.mark.parametrize("added, typed", [(DECOMPOSED, COMPOSED), (COMPOSED, DECOMPOSED)],
                         ids=["added-decomposed", "added-composed"])
def test_a_password_signs_in_whether_its_accents_are_composed_or_not(bare_server, operators_file, monkeypatch,
                                                                      added, typed):
    """A password added decomposed was refused (401) when a keyboard sent it composed, and the reverse: the two
    are one text to a person. Both are normalized to NFC before hashing and at every check (NIST SP 800-63B,
    5.1.1.2)."""
    assert added != typed and unicodedata.normalize("NFC", added) == unicodedata.normalize("NFC", typed)
    monkeypatch.setattr("sys.stdin", _Lines(added + "\n"))
    assert cli.main(["operator", "add", "rene", "--role", "dealer", "--file", str(operators_file)]) == 0
    for password in (typed, added):
        token = base64.b64encode(f"rene:{password}".encode("utf-8")).decode()
        status, _, _ = Client(bare_server).request("POST", "/actions", b'{"action": "confirm"}',
                                                   {**JSON, "Authorization": f"Basic {token}"})
        assert status == 202, password


def test_the_service_config_round_trips_the_shipped_table_file():
    assert CONFIG.control.enabled is False and CONFIG.control.port == 8740 and CONFIG.control.host == "127.0.0.1"


def test_the_service_binds_the_interface_when_enabled_and_close_stops_it(tmp_path, operators_file):
    """Wiring (controller.service.loop): the controller publishes to the interface; ``close`` stops its thread."""
    import dataclasses
    import io

    from controller.service.assembly import Service
    from controller.cli.parts import SERVICE_PARTS

    control = dataclasses.replace(CONFIG.control, enabled=True, port=0, operators=operators_file)
    service = Service(dataclasses.replace(CONFIG, control=control), simulate=True,
                      journal_path=tmp_path / "journal.db", out=io.StringIO(), parts=SERVICE_PARTS)
    try:
        assert service.control is not None and service.control.port > 0
        assert service.controller.on_record == service.control.publish_record
        assert service.controller.on_view == service._on_view  # the view to the interface, and the meters
        service.control.start()
        assert Client(service.control).get("/events?after=0")[0] == 200
    finally:
        service.close()


def test_a_start_refused_for_a_control_port_in_use_makes_no_journal_and_frees_what_it_bound(tmp_path,
                                                                                             operators_file):
    """A start refused because the control port was taken left a new, empty journal and its anchor behind (and
    a key sealed into it): the port is bound before the journal is made. A journal refused at start (another
    service holds it) releases the control port it had bound."""
    import dataclasses
    import io

    from controller.journal.record import JournalError
    from controller.journal.store import Journal
    from controller.service.assembly import Service
    from controller.cli.parts import SERVICE_PARTS

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        control = dataclasses.replace(CONFIG.control, enabled=True, port=taken.getsockname()[1],
                                      operators=operators_file)
        with pytest.raises(OSError, match=f"control interface 127.0.0.1:{control.port}: "):
            Service(dataclasses.replace(CONFIG, control=control), simulate=True, journal_path=tmp_path / "j.db",
                    out=io.StringIO(), parts=SERVICE_PARTS)
    finally:
        taken.close()
    assert sorted(tmp_path.iterdir()) == [operators_file]
    held = Journal(tmp_path / "held.db")
    try:
        with pytest.raises(JournalError, match="in use by another process"):
            Service(dataclasses.replace(CONFIG, control=control), simulate=True, journal_path=tmp_path / "held.db",
                    out=io.StringIO(), parts=SERVICE_PARTS)
    finally:
        held.close()
    again = socket.socket()
    again.bind(("127.0.0.1", control.port))  # free again: the refused start closed it
    again.close()


@pytest.mark.parametrize("request_line, status", [
    (b"OPTIONS /state HTTP/1.0", 405),
    (b"BREW /state HTTP/1.0", 405),
    (b"BREW /nothing HTTP/1.0", 501),
    (b"\x00\x01\x02 garbage", 400),  # two words: no request line
    (b"GET /state", 400),  # HTTP/0.9
    (b"garbage", 400),
    (b"GET /state HTTP/1.x", 400),
    (b"PRI * HTTP/2.0", 505),  # the HTTP/2 preface
    (b"GET /state HTTP/1.0 extra", 400),
])
def test_errors_of_the_http_layer_answer_json_too(bare_server, request_line, status):
    """docs/control.md: every answer is JSON with a status line and headers, also the errors http.server finds
    itself; the connection is closed after it (``_raw`` reads until it is); nothing is queued."""
    answer = _raw(bare_server, request_line + b"\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 " + str(status).encode() + b" ")  # h11 answers as HTTP/1.1 (RFC 9110, 2.5)
    headers = head.lower().split(b"\r\n")[1:]
    assert b"content-type: application/json" in headers
    assert f"content-length: {len(body)}".encode() in headers
    assert "error" in json.loads(body)
    assert bare_server.events.empty()


@pytest.mark.parametrize("request_head, found", [
    (b"GET /state HTTP/1.1\r\nHost: x\r\n\x01bad header\r\n\r\n", "'\\x01bad header'"),
    (b"garbage\r\n\r\n", "'garbage'"),
])
def test_a_malformed_request_is_named_as_text_not_as_python_bytes(bare_server, request_head, found):
    """h11 names what it could not read by its Python repr (``bytearray(b'...')``), which the answer passed on."""
    error = json.loads(_raw(bare_server, request_head).partition(b"\r\n\r\n")[2])["error"]
    assert error.startswith("malformed request: ") and found in error, error
    assert "bytearray" not in error and "b'" not in error


_ACTION = b'{"action": "confirm"}'


@pytest.mark.parametrize("extra, name", [
    (f"Authorization: {_auth()['Authorization']}\r\nAuthorization: {_auth('sue')['Authorization']}\r\n"
     f"Content-Length: {len(_ACTION)}\r\n", "Authorization"),
    (f"Authorization: {_auth()['Authorization']}\r\nContent-Length: {len(_ACTION)}\r\nContent-Length: 3\r\n",
     "Content-Length"),
    (f"Authorization: {_auth()['Authorization']}\r\nContent-Length: {len(_ACTION)}\r\n"
     f"Content-Type: text/plain\r\n", "Content-Type"),
    (f"Authorization: {_auth()['Authorization']}\r\nContent-Length: {len(_ACTION)}\r\nHost: {{host}}\r\n",
     "Host"),
])
def test_a_repeated_header_is_refused_and_nothing_is_queued(bare_server, extra, name):
    """Two values of a header that says who, how long, what or for whom: the request is ambiguous, 400. (h11
    takes two equal ``Content-Length`` values as one, as RFC 9112, 6.3 allows: see
    ``test_equal_content_lengths_are_one``.)"""
    host = f"127.0.0.1:{bare_server.port}"
    head = (f"POST /actions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            + extra.replace("{host}", host) + "\r\n")
    answer = _raw(bare_server, head.encode() + _ACTION)
    status, _, body = answer.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 400 ")
    assert json.loads(body)["error"] == f"header {name} repeated; send it once"
    assert bare_server.events.empty()


def test_equal_content_lengths_are_one(bare_server):
    """RFC 9112, 6.3: a recipient may take repeated equal ``Content-Length`` values as one; h11 does, so the
    length is unambiguous and the action is queued once."""
    head = (f"POST /actions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {len(_ACTION)}\r\n"
            f"content-length: {len(_ACTION)}\r\nAuthorization: {_auth()['Authorization']}\r\n\r\n").encode()
    assert _raw(bare_server, head + _ACTION).startswith(b"HTTP/1.1 202 ")
    assert bare_server.events.qsize() == 1


@pytest.mark.parametrize("length", ["+2", "1_0", "0x10", "-1", "2 2"])
def test_a_content_length_that_is_not_plain_digits_is_refused(bare_server, length):
    head = (f"POST /actions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n"
            f"Authorization: {_auth()['Authorization']}\r\n\r\n").encode()
    answer = _raw(bare_server, head + _ACTION)
    status, _, body = answer.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 400 ")
    assert "Content-Length must be a number of bytes in plain decimal digits" in json.loads(body)["error"]
    assert bare_server.events.empty()


def _host_request(server, host: str | None, version: str = "HTTP/1.1", method: str = "GET",
                  path: str = "/events?after=0", extra: str = "", body: bytes = b"") -> tuple[int, dict]:
    """Status and JSON answer of a raw request with the given ``Host`` (None: no Host header)."""
    head = f"{method} {path} {version}\r\n" + (f"Host: {host}\r\n" if host is not None else "") + extra + "\r\n"
    answer = _raw(server, head.encode() + body)
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split(b" ")[1]), json.loads(rest.partition(b"\r\n\r\n")[2])


@pytest.mark.parametrize("host", [
    "evil.com", "evil.com:{port}", "127.0.0.1.evil.com:{port}", "localhost.evil.com:{port}",
    "127.0.0.1", "localhost", "127.0.0.1:1", "127.0.0.1:{port}0", "127.0.0.2:{port}", "[::1]:{port}",
    "[127.0.0.1]:{port}", "127.0.0.1:+{port}", "127.0.0.1:{port}:{port}", "", "[::1:{port}",
])
def test_a_host_that_is_not_this_server_is_misdirected(bare_server, host):
    """DNS rebinding: a web page whose name now resolves to 127.0.0.1 sends its own name as Host; 421."""
    status, answer = _host_request(bare_server, host.format(port=bare_server.port))
    assert status == 421
    assert answer["error"].endswith(f"is not this server; use http://127.0.0.1:{bare_server.port}")


def test_an_action_to_a_misdirected_host_is_refused_and_nothing_is_queued(bare_server):
    extra = (f"Content-Type: application/json\r\nContent-Length: {len(_ACTION)}\r\n"
             f"Authorization: {_auth()['Authorization']}\r\n")
    status, answer = _host_request(bare_server, f"evil.com:{bare_server.port}", method="POST", path="/actions",
                                   extra=extra, body=_ACTION)
    assert status == 421 and '"evil.com:' in answer["error"]
    assert bare_server.events.empty()


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LocalHost:{port}", " 127.0.0.1:{port} "])
def test_the_server_own_host_is_served(bare_server, host):
    assert _host_request(bare_server, host.format(port=bare_server.port))[0] == 200


def test_a_missing_host_is_refused_on_http_1_1_only(bare_server):
    status, answer = _host_request(bare_server, None)
    assert status == 400 and answer["error"] == "HTTP/1.1 request without a Host header"
    assert _host_request(bare_server, None, version="HTTP/1.0")[0] == 200


def test_the_server_on_ipv6_takes_its_own_host_only(ipv6_server):
    port = ipv6_server.port

    def status(host):
        with socket.create_connection(("::1", port), timeout=PATIENCE) as sock:
            sock.sendall(f"GET /events?after=0 HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            return sock.makefile("rb").readline().split(b" ")[1]

    assert status(f"[::1]:{port}") == status(f"localhost:{port}") == b"200"
    assert status(f"127.0.0.1:{port}") == status(f"::1:{port}") == b"421"


def _hold_checks(monkeypatch) -> tuple[threading.Semaphore, threading.Event]:
    """Password checks held inside ``authenticate`` until the returned event is set; the semaphore is released
    once by each check as it enters."""
    import controller.control.signin as control  # where the checks run

    entered, release = threading.Semaphore(0), threading.Event()
    real = control.authenticate

    def held(operators, user, password):
        entered.release()
        assert release.wait(PATIENCE), "the test never released the checks"
        return real(operators, user, password)

    monkeypatch.setattr(control, "authenticate", held)
    return entered, release


def test_password_checks_beyond_the_bound_are_refused_at_once(operators_file, monkeypatch):
    """The checks held in ``authenticate`` take every place; one more is 503 without reaching a check, a request
    without credentials is still answered 401, and the places are free again once the checks end."""
    server = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators_file), queue.Queue(), max_checks=2)
    server.start()
    entered, release = _hold_checks(monkeypatch)
    client = Client(server)
    answers = []
    holders = [threading.Thread(target=lambda: answers.append(client.act("confirm"))),
               threading.Thread(target=lambda: answers.append(client.act("confirm", password="wrong-password")))]
    try:
        for holder in holders:
            holder.start()
        for _ in holders:
            assert entered.acquire(timeout=PATIENCE)
        status, headers, body = client.request("POST", "/actions", _ACTION, {**JSON, **_auth("sue")})
        assert status == 503 and headers["Retry-After"] == "1"
        assert json.loads(body)["error"] == "2 password checks already running; try again in a second"
        assert not entered.acquire(blocking=False)  # the refused request never reached a check
        assert client.request("POST", "/actions", _ACTION, JSON)[0] == 401  # no credentials: no check to wait for
    finally:
        release.set()
        for holder in holders:
            holder.join()
    assert sorted(status for status, _ in answers) == [202, 401]
    assert server.checks.acquire(blocking=False) and server.checks.acquire(blocking=False)  # both places free
    assert not server.checks.acquire(blocking=False)
    server.checks.release()
    server.checks.release()
    assert client.act("confirm", user="sue")[0] == 202
    assert server.events.qsize() == 2
    server.stop()


def _post_as(server, user: str) -> int:
    status, _, _ = Client(server).request("POST", "/actions", b'{"action": "confirm"}', {**JSON, **_auth(user)})
    return status


def test_a_user_removed_from_the_operators_file_loses_access_even_when_the_new_file_is_refused(bare_server,
                                                                                                operators_file):
    """The operators file grants rights, so a reload fails closed: dan removed from the file at mode 0644
    (refused) is refused at the next request, and so is everybody until the file is mended; after chmod 600
    (same size, same modification time would not matter: the content is compared) sue acts again, dan
    does not."""
    assert _post_as(bare_server, "dan") == 202
    from controller.control.operators import save_operators

    kept = {name: op for name, op in load_operators(operators_file).items() if name != "dan"}
    stat_before = operators_file.stat()
    save_operators(operators_file, kept)
    os.chmod(operators_file, 0o644)
    os.utime(operators_file, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))
    assert _post_as(bare_server, "dan") == 401
    assert _post_as(bare_server, "sue") == 401  # a refused file gives nobody rights
    os.chmod(operators_file, 0o600)
    assert _post_as(bare_server, "dan") == 401
    assert _post_as(bare_server, "sue") == 202


def test_an_operators_file_made_readable_by_others_while_running_is_refused_at_the_next_action(bare_server,
                                                                                                operators_file):
    assert _post_as(bare_server, "sue") == 202
    os.chmod(operators_file, 0o640)
    assert _post_as(bare_server, "sue") == 401


def test_a_pipe_in_place_of_the_operators_file_is_refused_and_the_interface_answers_on(bare_server, operators_file):
    """The file that grants rights replaced by a named pipe nobody writes: the sign-in is refused naming it
    (fails closed), ``/state`` still answers, and the mended file is taken again. Opening the pipe to read would
    wait for a writer for ever, with the interface's loop (and its stop) behind it."""
    assert _post_as(bare_server, "sue") == 202
    kept = operators_file.with_name("kept.yaml")
    operators_file.rename(kept)
    os.mkfifo(operators_file, 0o600)
    try:
        status, _, body = Client(bare_server).request("POST", "/actions", b'{"action": "confirm"}',
                                                      {**JSON, **_auth("sue")})
        assert status == 401 and "not a regular file" in json.loads(body)["error"]
        assert Client(bare_server).request("GET", "/state")[0] in (200, 503)  # 503: no view published yet
    finally:  # on a loop waiting in open(): a writer lets it go, so that the server can stop
        try:
            os.close(os.open(operators_file, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # ENXIO: nobody waits to read it
            pass
        operators_file.unlink()
    kept.rename(operators_file)
    assert _post_as(bare_server, "sue") == 202


def test_a_sign_in_never_waits_behind_a_change_of_the_operators_file_held_up(bare_server, operators_file):
    """A weak hash is rewritten at its sign-in under the lock ``operator add`` and ``remove`` take: with one of
    them held up (suspended, on a slow disk) the sign-in waited behind it (its answer, then a 500 as the
    interface stopped, and the stop itself, until the lock was let go; the file rewritten after the service had
    stopped). The rewrite is left for a later sign-in: the sign-in is served at once, the file untouched."""
    from controller.control.operators import editing

    before = operators_file.read_bytes()
    with editing(operators_file):  # another process's change, held up
        assert _post_as(bare_server, "sue") == 202
        assert operators_file.read_bytes() == before


def test_a_401_says_when_the_operators_file_has_no_users(bare_server, operators_file):
    _write_private(operators_file, "operators:\n")
    status, _, body = Client(bare_server).request("POST", "/actions", b'{"action": "confirm"}',
                                                  {**JSON, **_auth("sue")})
    assert status == 401 and "no operators in" in json.loads(body)["error"]


def test_operator_list_and_remove_use_the_operators_file_of_the_table_given(tmp_path, monkeypatch, capsys):
    """``operator add|list|remove --config COPY`` work on the operators file beside that table file, never on
    the checkout's; ``--file`` in a folder that does not exist is refused like ``--journal``."""
    import shutil

    copy = tmp_path / "site"
    shutil.copytree(Path(cli.__file__).resolve().parents[2] / "config", copy,
                    ignore=shutil.ignore_patterns("operators.yaml"))
    table = str(copy / "table.yaml")
    for name, role in (("ann", "supervisor"), ("ben", "dealer")):
        monkeypatch.setattr("sys.stdin", _Lines("a-long-password\n"))
        assert cli.main(["operator", "add", name, "--role", role, "--config", table]) == 0
    assert set(load_operators(copy / "operators.yaml")) == {"ann", "ben"}
    capsys.readouterr()
    assert cli.main(["operator", "list", "--config", table]) == 0
    out = capsys.readouterr()
    assert out.out == "ann\tsupervisor\nben\tdealer\n" and "pbkdf2" not in out.out + out.err
    assert cli.main(["operator", "remove", "ben", "--config", table]) == 0
    assert set(load_operators(copy / "operators.yaml")) == {"ann"}
    assert cli.main(["operator", "remove", "ben", "--config", table]) == 2
    assert "no user 'ben'" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", _Lines("a-long-password\n"))
    assert cli.main(["operator", "add", "cy", "--role", "dealer", "--file", str(tmp_path / "nope" / "ops.yaml")]) == 2
    assert "no folder" in capsys.readouterr().err and not (tmp_path / "nope").exists()


@dataclasses.dataclass(frozen=True)
class Peek:
    """An event no device sends."""

    card: str


def test_an_unknown_event_is_journaled_but_its_text_never_logged_at_warning(table, caplog):
    """An event the round machine does not know may carry anything, a card included: the journal keeps its
    text (a supervisor's record); the log at WARNING and above names only its kind, and /events its type."""
    client, devices, journal = table
    with caplog.at_level(logging.INFO):
        devices.events.put(Peek("Kd"))
        record = client.wait_for(lambda r: r["type"] == "Irregularity" and r["data"]["kind"] == "unknown_event")
    assert record["data"]["detail"] == {"event": "Peek"}
    assert "Kd" in str(next(r for r in read_records(journal.path) if r["type"] == "Irregularity")["data"])
    assert not any("Kd" in r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)


def _raw_auth(server, path: str, authorization: bytes) -> tuple[int, dict]:
    with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nConnection: close\r\n".encode()
                     + b"Authorization: " + authorization + b"\r\n\r\n")
        answer = b"".join(iter(lambda: sock.recv(65536), b""))
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(body)


def test_a_basic_token_of_non_ascii_bytes_is_a_401_with_one_log_line(bare_server, caplog):
    """``Authorization: Basic \\xe9\\xe9`` was a 500 with about 100 ERROR lines on every endpoint that signs in."""
    with caplog.at_level(logging.WARNING):
        for path in ("/operator", "/alerts"):
            status, answer = _raw_auth(bare_server, path, b"Basic \xe9\xe9")
            assert status == 401 and "credentials required" in answer["error"]
    assert [r.levelno for r in caplog.records if r.name.startswith(("controller", "uvicorn"))] == [logging.WARNING] * 2


def test_failed_sign_ins_are_throttled_and_a_known_good_credential_is_still_served(bare_server, monkeypatch):
    """Wrong passwords once took both cores and locked the supervisor out (503 on 5 of 5 tries). After the free
    failures, a user's next attempts (and a client's, but for loopback: ``signin.throttle_keys``) are 429 with
    ``Retry-After`` and reach no password check;
    a credential verified before is served without one; the checks run one at a time on a thread of lower
    priority than the service's."""
    import controller.control.signin as control  # where the checks run
    from controller.control.server import MAX_CHECKS
    from controller.control.operators import FailureThrottle

    assert MAX_CHECKS == 1
    client = Client(bare_server)
    assert client.act("confirm", user="sue")[0] == 202  # sue signed in once: her credential is known
    checks, niceness = [], []
    real = control.authenticate

    def counted(operators, user, password):
        checks.append(user)
        niceness.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return real(operators, user, password)

    monkeypatch.setattr(control, "authenticate", counted)
    bare_server.throttle = FailureThrottle(clock=lambda: 0.0)  # time stands still: no delay runs out
    answers = [client.act("confirm", user="dan", password=f"guess-{n}")[0] for n in range(5)]
    assert answers == [401, 401, 401, 401, 429] and checks == ["dan"] * 4  # three free, then a delay
    status, headers, _ = client.request("GET", "/operator", headers=_auth("dan"))
    assert status == 429 and int(headers["Retry-After"]) >= 1  # the user waits, right password or not
    assert client.act("confirm", user="sue")[0] == 202 and checks == ["dan"] * 4  # served without a check
    assert min(niceness) > os.getpriority(os.PRIO_PROCESS, 0)


def test_failed_sign_ins_under_made_up_names_from_another_account_keep_no_operator_out(bare_server):
    """One process of the table's PC failing sign-ins under made-up names kept every operator not yet signed in
    out: counted by address (every loopback client has one) with 429, counted by name alone with 503 (the one
    password check kept busy). A loopback client is counted by the account its socket belongs to: another
    account's flood is throttled (429, no check), a supervisor's first sign-in goes through."""
    from controller.control.operators import FailureThrottle

    if os.geteuid() != 0:
        pytest.skip("another account's process needs root to start (CI runs as root)")
    bare_server.throttle = FailureThrottle(clock=lambda: 0.0)  # time stands still: no delay runs out
    flood = (
        "import base64, http.client\n"
        "for n in range(8):\n"
        f"    c = http.client.HTTPConnection('127.0.0.1', {bare_server.port}, timeout=30)\n"
        "    token = base64.b64encode(f'mallory{n}:wrong'.encode()).decode()\n"
        "    c.request('GET', '/operator', headers={'Authorization': 'Basic ' + token})\n"
        "    print(c.getresponse().status)\n"
        "    c.close()\n")
    nobody = 65534
    proc = subprocess.run(["/usr/bin/python3", "-c", flood], capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: (os.setgid(nobody), os.setuid(nobody)))
    assert proc.returncode == 0, proc.stderr
    # that account's failures under eight names: four checked (three free, the fourth's delay runs from it), then
    # refused before any check
    assert proc.stdout.split() == ["401"] * 4 + ["429"] * 4
    client = Client(bare_server)
    assert client.act("confirm", user="sue")[0] == 202  # a supervisor's first sign-in of this run, as root
    answers = [client.request("GET", "/operator", headers=_auth_with("mallory0", "wrong"))[0] for _ in range(4)]
    assert answers == [401, 401, 401, 429]  # a name's own failures in a row are still throttled, from any account


def test_a_sign_in_counts_against_its_account_when_loopback_and_its_address_else():
    from controller.control.signin import throttle_keys

    for address in ("127.0.0.1", "127.3.4.5", "::1"):
        assert throttle_keys("dan", address, 1000) == ("user dan", "client uid 1000")
        assert throttle_keys("dan", address) == ("user dan", f"client {address}")  # no owner known: its address
    for address in ("10.0.0.5", "192.168.1.20", "2001:db8::1", "?"):
        assert throttle_keys("dan", address, 1000) == ("user dan", f"client {address}")


@pytest.mark.parametrize("family, host", [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")])
def test_the_owner_of_a_loopback_connection_is_the_account_of_its_socket(family, host):
    from controller.control.peer import loopback_owner

    with socket.socket(family, socket.SOCK_STREAM) as listener:
        try:
            listener.bind((host, 0))
        except OSError as exc:
            pytest.skip(f"no {host} here: {exc}")
        listener.listen(1)
        server = listener.getsockname()[:2]
        with socket.create_connection(server, timeout=5) as connection:
            accepted, client = listener.accept()
            with accepted:
                assert loopback_owner(client[:2], server) == os.getuid()
                assert loopback_owner((client[0], client[1] ^ 1), server) is None  # no such socket
    assert loopback_owner(("10.0.0.5", 40000), ("10.0.0.1", 8740)) is None  # not loopback: not looked up

def test_actions_beyond_an_operators_rate_are_answered_429_and_neither_queued_nor_journaled(bare_server):
    """A signed-in dealer sending refused actions as fast as the interface answered (730 a second) grew the journal
    1.3 MB a second, each journaled with its refusal: beyond ``rate.BURST`` at once an action is answered 429 with
    ``Retry-After`` and never reaches the queue; another operator is not held back."""
    from controller.control.rate import BURST, ActionRate

    now = [0.0]
    bare_server.action_rate = ActionRate(clock=lambda: now[0])  # time moves only when the test says
    client = Client(bare_server)
    answers = [client.act("void_round", user="dan", code="misdeal")[0] for _ in range(BURST + 3)]
    assert answers == [403] * BURST + [429] * 3  # a dealer's void: refused and journaled, until the bound
    assert bare_server.events.qsize() == BURST
    status, headers, body = client.request("POST", "/actions", json.dumps({"action": "confirm"}),
                                           {**JSON, **_auth("dan")})
    assert status == 429 and headers["Retry-After"] == "1" and "more actions than 20 at once" in json.loads(body)["error"]
    assert client.act("confirm", user="sue")[0] == 202  # the supervisor has a bucket of her own
    now[0] += 1.0  # five actions a second come back
    assert [client.act("confirm", user="dan")[0] for _ in range(6)] == [202] * 5 + [429]
    assert bare_server.events.qsize() == BURST + 1 + 5


def test_an_operators_action_rate_is_a_bucket_of_twenty_refilled_at_five_a_second():
    from controller.control.rate import ActionRate

    now = [0.0]
    rate = ActionRate(burst=3, per_second=2.0, clock=lambda: now[0])
    assert [rate.take("dan") for _ in range(4)] == [0.0, 0.0, 0.0, 0.5]  # the fourth waits half a second
    now[0] = 0.25
    assert rate.take("dan") == 0.25 and rate.take("sue") == 0.0
    now[0] = 10.0  # a long pause fills the bucket, never beyond its size
    assert [rate.take("dan") for _ in range(4)] == [0.0, 0.0, 0.0, 0.5]
    with pytest.raises(ValueError, match="a burst of at least 1 and a positive rate"):
        ActionRate(burst=0)


def _operators_changed(path: Path, count: int) -> list[dict]:
    """The ``OperatorsChanged`` records of the journal at ``path`` once it holds ``count`` of them (waited for at
    most ``PATIENCE`` seconds, else ``AssertionError``)."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        found = [r for r in read_records(path) if r["type"] == "OperatorsChanged"]
        if len(found) >= count:
            return found
        time.sleep(0.01)
    raise AssertionError(f"{count} OperatorsChanged never journaled")


def test_an_operator_added_and_removed_with_no_request_between_is_journaled_each_time(tmp_path, operators_file):
    """A change of the operators file was journaled only when a request next read the file: ``operator add`` then
    ``operator remove`` with no request between (a supervisor's rights given and taken back) left nothing in the
    journal. The interface's loop looks at the file every ``OPERATORS_CHECK_S`` seconds and journals each change
    on its own; no HTTP request is made here. The names and roles expected are the fixture's and the one added."""
    from controller.control.server import OPERATORS_CHECK_S

    assert OPERATORS_CHECK_S <= 5  # every few seconds at most
    events, server, journal, _, thread = _start_table(tmp_path, operators_file)

    def operator(*command: str) -> None:  # the command line, in a process of its own
        proc = subprocess.run([sys.executable, "-m", "controller", "operator", *command, "--file",
                               str(operators_file)], input="eve-password-1\n", text=True, capture_output=True,
                              timeout=PATIENCE)
        assert proc.returncode == 0, proc.stderr

    try:
        operator("add", "eve", "--role", "supervisor")
        (added,) = _operators_changed(journal.path, 1)
        assert added["data"]["operators"] == [["dan", "dealer"], ["eve", "supervisor"], ["sue", "supervisor"]]
        operator("remove", "eve")
        assert _operators_changed(journal.path, 2)[1]["data"]["operators"] == [["dan", "dealer"],
                                                                               ["sue", "supervisor"]]
    finally:
        events.put(STOP)
        thread.join()
        server.stop()
        journal.close()


def test_a_change_of_operators_while_the_service_runs_is_journaled_once_with_names_and_roles(tmp_path,
                                                                                            operators_file):
    """``operator add`` while the service ran gave a new supervisor every right, and the journal said nothing: the
    interface reads the file again at the next request and queues ``OperatorsChanged`` (every name and role, no
    hash), which the service journals as its own record (kept from the interface's stream: who is a supervisor is
    no display's business); a read that finds the same names and roles, nothing."""
    from controller.control.operators import add_operator, remove_operator
    from controller.round.inputs import roster_sha256

    events, server, journal, _, thread = _start_table(tmp_path, operators_file)
    try:
        client = Client(server)
        client.wait_for(lambda r: r["type"] == "ShoeReconciled")
        before = (("dan", "dealer"), ("sue", "supervisor"))
        assert server.roster == before
        add_operator(operators_file, "eve", "supervisor", "eve-password-1", iterations=200_000)
        assert client.request("GET", "/operator", headers=_auth("sue"))[0] == 200  # reads the file again
        (changed,) = _operators_changed(journal.path, 1)
        now = (("dan", "dealer"), ("eve", "supervisor"), ("sue", "supervisor"))
        assert (changed["kind"], changed["data"]) == ("record", {
            "operators": [list(p) for p in now], "sha256": roster_sha256(now), "previous": roster_sha256(before)})
        remove_operator(operators_file, "eve")
        assert client.request("GET", "/operator", headers=_auth("sue"))[0] == 200
        assert _operators_changed(journal.path, 2)[1]["data"]["operators"] == [list(p) for p in before]
        operators_file.write_text(operators_file.read_text() + "\n")  # the same names and roles, other bytes
        assert client.request("GET", "/operator", headers=_auth("sue"))[0] == 200
        events.put(STOP)
        thread.join()
        assert len(_operators_changed(journal.path, 2)) == 2
        client.wait_for(lambda r: r["type"] == "ServiceStopped")  # every record of the run reached the stream
        assert not any(r["type"] == "OperatorsChanged" for r in client.received)
    finally:
        events.put(STOP)
        thread.join()
        server.stop()
        journal.close()

def test_a_user_removed_while_their_password_check_runs_does_not_act(bare_server, operators_file, monkeypatch):
    """A removed operator's request already inside its password check was accepted 0.32 s after the removal:
    the file is read again after the hash, before the action."""
    from controller.control.operators import remove_operator

    entered, release = _hold_checks(monkeypatch)
    answers = []
    acting = threading.Thread(target=lambda: answers.append(_post_as(bare_server, "sue")))
    acting.start()
    assert entered.acquire(timeout=PATIENCE)
    remove_operator(operators_file, "sue")  # while her check runs
    release.set()
    acting.join()
    queued = [bare_server.events.get_nowait() for _ in range(bare_server.events.qsize())]
    assert answers == [401] and [type(item).__name__ for item in queued] == ["OperatorsChanged"]  # her removal only


def test_a_refused_operators_file_is_named_as_the_cause_in_the_answer_and_the_log(bare_server, operators_file,
                                                                                   caplog):
    """``chmod 644`` of the running service's operators file answered "no operators in ...: add one" and logged
    a correct password as "refused credentials"."""
    os.chmod(operators_file, 0o644)
    with caplog.at_level(logging.WARNING):
        status, _, body = Client(bare_server).request("GET", "/operator", headers=_auth("sue"))
    error = json.loads(body)["error"]
    assert status == 401 and error.startswith("the operators file is refused:") and "mode 0644" in error
    assert "no operators" not in error
    said = [r.getMessage() for r in caplog.records if "sign-in of user 'sue'" in r.getMessage()]
    assert len(said) == 1 and "mode 0644" in said[0]
    assert not any("refused credentials" in r.getMessage() for r in caplog.records)


def test_sign_ins_against_a_refused_operators_file_keep_its_reason_and_count_no_failure(bare_server, operators_file,
                                                                                        monkeypatch):
    """Three sign-ins against a refused file counted as failures, and the later ones were answered 429 "too many
    failed sign-ins" instead of the file's refusal; once the file was mended the user still waited out a delay.
    No password is checked against a refused file (no one can sign in), and nothing is counted."""
    import controller.control.signin as control
    from controller.control.operators import FailureThrottle

    checks = []
    real = control.authenticate
    monkeypatch.setattr(control, "authenticate", lambda *a: checks.append(a[1]) or real(*a))
    bare_server.throttle = FailureThrottle(clock=lambda: 0.0)  # time stands still: no delay runs out
    os.chmod(operators_file, 0o644)
    client = Client(bare_server)
    for attempt in range(6):
        status, _, body = client.request("GET", "/operator", headers=_auth("sue"))
        assert (status, json.loads(body)["error"].split(":")[0]) == (401, "the operators file is refused"), attempt
    assert checks == []
    os.chmod(operators_file, 0o600)
    assert client.request("GET", "/operator", headers=_auth("sue"))[0] == 200 and checks == ["sue"]


def test_a_hash_of_fewer_iterations_is_rewritten_at_the_next_sign_in(bare_server, operators_file):
    from controller.control.operators import ITERATIONS, verify_password

    assert f"${MIN_ITERATIONS}$" in load_operators(operators_file)["dan"].password
    assert Client(bare_server).get("/state")[0] == 503 and _post_as(bare_server, "dan") == 202
    stored = load_operators(operators_file)["dan"].password
    assert stored.startswith(f"pbkdf2_sha256${ITERATIONS}$") and verify_password(PASSWORDS["dan"], stored)
    assert _post_as(bare_server, "dan") == 202


@pytest.mark.parametrize(("method", "path", "body", "status"), [
    # found by the OpenAPI fuzzing of .ci/run (tests/fuzz_control.py): each answer as /openapi.json documents it
    ("TRACE", "/state", None, 405),  # a method of RFC 9110 the path does not answer: 405, not a 501
    ("GET", "/events?timeout=28.492598133217836", None, 200),  # a double's shortest spelling: 17 digits
    ("POST", "/actions", b'{"action": "confirm", "round": 3}', 409),  # the guard's answer
])
def test_requests_the_description_allows_are_answered_as_it_says(bare_server, method, path, body, status):
    bare_server.publish_view({"state": "idle", "round_no": 1})
    headers = {**JSON, **_auth("sue")} if body else {}
    assert Client(bare_server).request(method, path, body, headers)[0] == status


def get_as(server: ControlServer, path: str, user: str | None = None) -> tuple[int, dict]:
    """``GET path`` as ``user`` (HTTP Basic with the password of ``PASSWORDS``; None: no credentials): the
    status and the JSON answer."""
    headers = {}
    if user is not None:
        token = base64.b64encode(f"{user}:{PASSWORDS[user]}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    status, _, body = Client(server).request("GET", path, headers=headers)
    return status, json.loads(body)


def test_the_meters_are_shown_to_a_supervisor_only(bare_server):
    """``GET /meters`` (controller/round/meters.py, NJ 13:69E-1.28C): the lifetime meters the controller last
    published, to a supervisor; a dealer is refused (403), a request without credentials asked for them (401)."""
    from controller.round.meters import Meters

    def get(user=None):
        return get_as(bare_server, "/meters", user)

    assert get("sue")[0] == 503  # nothing published yet
    meters = Meters()
    meters.feed("RoundClosed", {"round_no": 1, "totals": {"wagered": 2000, "returned": 0, "collected": 2000,
                                                          "paid": 0, "player_net": -2000}})
    bare_server.publish_meters(meters.to_json())
    status, shown = get("sue")
    assert status == 200 and shown["lifetime"]["rounds_closed"] == 1 and shown["since"]["power_up"] == 1
    assert set(shown["lifetime"]["wagers"]) == {"ante_across", "ante_down", "across", "down", "middle",
                                                "five_card_bonus"}
    status, answer = get("dan")
    assert status == 403 and "needs a supervisor" in answer["error"]
    status, answer = get()
    assert status == 401 and "credentials required" in answer["error"]
