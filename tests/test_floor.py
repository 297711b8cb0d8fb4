"""The floor (controller.floor, docs/floor.md) against a real Mosquitto started by the test (``mosquitto``
fixture): the service publishes every public journal record once per connection, in order, with its seq; the
table's view, status and anchors; it resumes after a broker restart and a service restart; a broker that cannot
be reached never stops the table; the audit and the pit summary read it back.

Oracles: the journal itself (its public records through the control interface's filter, its hashes), the
regulation's secrecy rule (a seat's cards are turned at its settlement, NY 9 NYCRR 5324.39(e)(9)(i); community
cards at their reveals, NY (e)(4),(6),(8)) and counts taken from the journal's records.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import paho.mqtt.client as paho
import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.control.server import public_record
from controller.floor import topics
from controller.floor.audit import Auditor
from controller.floor.listen import Listener
from controller.floor.pit import Pit, TableSummary, count_record
from controller.floor.publisher import SIMULATED_SUFFIX, Progress, progress_path
from controller.game.table import load_table_config
from controller.journal.key import init_key, load_key
from controller.journal.reader import read_records
from controller.service.assembly import Service
from controller.settings.files import ConfigError
from controller.settings.floor import FloorConfig, parse_floor_config, read_password
from tests.cli_helpers import crisscross

TABLE = "CC-01" + SIMULATED_SUFFIX  # simulated play publishes under its own id (controller.floor.publisher)


def _config(broker_port: int, **floor) -> object:
    config = load_table_config()
    return dataclasses.replace(config, floor=FloorConfig(True, "127.0.0.1", broker_port, **floor))


def _run(config, journal: Path, rounds: int, seed: int, **kwargs) -> Service:
    service = Service(config, simulate=True, rounds=rounds, seed=seed, journal_path=journal, out=io.StringIO(),
                      **kwargs, parts=SERVICE_PARTS)
    try:
        assert service.run() == 0
    finally:
        service.close()
    return service


def pit_listening(port: int) -> tuple[Pit, Listener]:
    """A ``Pit`` fed by a ``Listener`` subscribed to every table on the broker at ``port``."""
    pit = Pit()
    listener = Listener(FloorConfig(True, "127.0.0.1", port), pit.take)
    listener.open()
    return pit, listener


def run_watched(service: Service, listener: Listener) -> None:
    """Run ``service`` to its end on a thread of its own while ``listener`` pumps, then a little more; close
    both."""
    runner = threading.Thread(target=service.run, name="service-run")
    runner.start()
    try:
        while runner.is_alive():
            listener.pump(0.1)
        listener.pump(1.0)
    finally:
        runner.join()
        service.close()
        listener.pump(0.5)
        listener.close()


class Collector:
    """Every message of every topic (``#``) in arrival order, from a raw paho client (no code of ours)."""

    def __init__(self, port: int, topic: str = "#") -> None:
        self.messages: list[tuple[str, bytes, bool]] = []
        self.lock = threading.Lock()
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
        self.client.on_message = self._message
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *_: subscribed.set()
        self.client.connect("127.0.0.1", port)
        self.client.subscribe(topic, qos=1)
        self.client.loop_start()
        # the SUBACK: what is published from now on reaches this client
        if not subscribed.wait(15.0):
            self.close()
            raise AssertionError(f"the broker on port {port} did not acknowledge the subscription to {topic!r}")

    def _message(self, client, userdata, message) -> None:
        with self.lock:
            self.messages.append((message.topic, message.payload, message.retain))

    def wait_for(self, predicate, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if predicate(list(self.messages)):
                    return
            time.sleep(0.05)
        raise AssertionError("the floor did not receive what was expected in time")

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def _events(messages, table=TABLE):
    name = topics.topic("crisscross", table, "events")
    return [json.loads(p) for t, p, _ in messages if t == name]


def _public(journal: Path) -> list[dict]:
    return [public_record(r) for r in read_records(journal) if public_record(r) is not None]


# ---------------------------------------------------------------------------------------------- configuration
def test_floor_is_off_by_default_and_the_shipped_file_says_so():
    assert load_table_config().floor == FloorConfig()
    assert not FloorConfig().enabled


@pytest.mark.parametrize("entry, says", [
    ("  enabled: yes\n", "line 3: floor.enabled: expected true or false, got 'yes'"),
    ("  enabled: true\n  port: 0\n  broker: x\n", "line 4: floor.port: 0 is below the minimum 1"),
    ("  enabled: true\n  prefix: 'pit/#'\n  broker: x\n", "line 4: floor.prefix: 'pit/#' is not MQTT topic levels"),
    ("  enabled: true\n  prefix: /pit\n  broker: x\n", "line 4: floor.prefix: '/pit' is not MQTT topic levels"),
    ("  enabled: true\n", "line 3: floor.broker: missing: the broker's host name or address is required"),
    ("  enabled: true\n  broker: x\n  tls: true\n  ca_file: nope.pem\n", "line 6: floor.ca_file: NOPE: cannot read it"),
    ("  password_file: secret\n", "line 3: floor.password_file: given without a username"),
    ("  ca_file: ca.pem\n", "line 3: floor.ca_file: given without tls: true"),
    ("  broker:\n", "line 3: floor.broker: expected a host name or address (text), got None"),
    ("  brokers: x\n", "line 3: floor: unknown key(s) brokers"),
])
def test_floor_configuration_errors_name_the_file_the_line_and_the_key(tmp_path, entry, says):
    text = (Path(load_table_config().source).read_text()) + "floor:\n" + entry
    lines = text.splitlines()
    floor_line = lines.index("floor:") + 1
    says = says.replace("line 3", f"line {floor_line + 1}").replace("line 4", f"line {floor_line + 2}")
    says = says.replace("line 6", f"line {floor_line + 4}").replace("NOPE", str(tmp_path / "nope.pem"))
    path = tmp_path / "table.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: {says}")):
        load_table_config(path)


def test_a_table_name_that_cannot_be_a_topic_level_is_refused_only_when_publishing():
    path = Path("table.yaml")
    assert parse_floor_config(path, {"enabled": False}, "pit/1").enabled is False
    with pytest.raises(ConfigError, match=re.escape("table_id 'pit/1' holds +, # or /")):
        parse_floor_config(path, {"enabled": True, "broker": "floor.example"}, "pit/1")


def test_tls_port_and_files_are_resolved_from_the_table_file(tmp_path):
    (tmp_path / "ca.pem").write_text("a CA certificate\n")
    config = parse_floor_config(tmp_path / "table.yaml", {"enabled": True, "broker": "floor.example", "tls": True,
                                                          "ca_file": "ca.pem", "username": "cc01",
                                                          "password_file": "floor.pass"}, TABLE)
    assert (config.port, config.ca_file, config.password_file) == (8883, tmp_path / "ca.pem", tmp_path / "floor.pass")


def test_a_password_file_others_may_read_is_refused(tmp_path):
    secret = tmp_path / "floor.pass"
    secret.write_text("s3cret\n")
    config = FloorConfig(True, username="cc01", password_file=secret)
    secret.chmod(0o644)
    with pytest.raises(ConfigError, match="floor.password_file: group and others may read it \\(mode 644\\)"):
        read_password(config)
    secret.chmod(0o600)
    assert read_password(config) == "s3cret"


# ---------------------------------------------------------------------------------------------- publishing
def test_every_public_record_reaches_the_floor_in_order_with_the_view_status_and_keyed_anchors(mosquitto, tmp_path):
    key_file = tmp_path / "journal.key"
    init_key(key_file)
    config = dataclasses.replace(_config(mosquitto.port), journal_key=key_file)
    journal = tmp_path / "journal.db"
    floor = Collector(mosquitto.port)
    try:
        _run(config, journal, rounds=3, seed=4)
        floor.wait_for(lambda m: (f"crisscross/{TABLE}/status", b"offline", False) in m)
    finally:
        floor.close()
    events = _events(floor.messages)
    assert [e["record"] for e in events] == _public(journal)  # each once (one connection), in order, filtered
    assert [e["after"] for e in events] == [0] + [e["record"]["seq"] for e in events[:-1]]
    statuses = [p for t, p, _ in floor.messages if t.endswith("/status")]
    assert statuses == [b"online", b"offline"]
    states = [json.loads(p) for t, p, _ in floor.messages if t.endswith("/state")]
    assert states and states[-1]["view"]["state"] == "closed" and states[-1]["view"]["round_no"] == 3
    assert [s["seq"] for s in states] == sorted(s["seq"] for s in states)
    hashes = {r["seq"]: r["hash"] for r in read_records(journal)}
    closes = [r["seq"] for r in read_records(journal) if r["type"] == "RoundClosed"]
    anchors = [json.loads(p) for t, p, _ in floor.messages if t.endswith("/anchors")]
    assert [a["round"] for a in anchors] == [1, 2, 3]
    key = load_key(key_file)
    import hashlib
    import hmac
    import sqlite3
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as db:
        checkpoints = [row[0] for row in db.execute("SELECT seq FROM checkpoints ORDER BY seq")]
    # each anchor is the checkpoint written with its round's close: the first one at or after it
    assert [a["seq"] for a in anchors] == [min(c for c in checkpoints if c >= close) for close in closes]
    for anchor, close in zip(anchors, closes):
        assert anchor["seq"] >= close and anchor["head"] == hashes[anchor["seq"]]
        message = "\n".join(["anchor", str(anchor["seq"]), anchor["head"]]).encode()
        assert anchor["mac"] == hmac.new(key, message, hashlib.sha256).hexdigest()
    assert Progress(progress_path(journal), f"127.0.0.1:{mosquitto.port}/crisscross").seq == max(hashes)


def _turned(records):
    """Per round: each card dealt with the seq at which it is turned face up (None: never, a folded hand)."""
    rounds: dict[int, dict[str, int | None]] = {}
    seats: dict[tuple[int, int], list[str]] = {}
    for r in records:
        data, round_no = r["data"], r["round"]
        if r["type"] == "StackDealt":
            for card in data["cards"]:
                rounds.setdefault(round_no, {})[card] = None
            if data["seat"] is not None:
                seats[(round_no, data["seat"])] = list(data["cards"])
        elif r["type"] == "CardsRevealed":
            for card in data["cards"]:
                rounds[round_no][card] = r["seq"]
        elif r["type"] == "SeatSettled" and not data["settlement"].get("folded_at"):
            for card in seats[(round_no, data["seat"])]:
                rounds[round_no][card] = r["seq"]
    return rounds


def test_no_face_down_card_is_ever_published(mosquitto, tmp_path):
    """Everything published under ``#`` over a seeded run with folds at every decision: no payload holds a card
    of its round before that card is turned, and a folded hand's cards never."""
    journal = tmp_path / "journal.db"
    floor = Collector(mosquitto.port)
    try:
        _run(_config(mosquitto.port), journal, rounds=6, seed=21, mistakes=0.5)
        floor.wait_for(lambda m: any(p == b"offline" for _, p, _ in m))
    finally:
        floor.close()
    records = read_records(journal)
    turned = _turned(records)
    assert any(s is None for cards in turned.values() for s in cards.values()), "no folded hand: a weak run"
    round_at, current = {}, None
    for r in records:
        current = r["round"] if r["round"] is not None else current
        round_at[r["seq"]] = current
    shown = 0
    for name, payload, _ in floor.messages:
        value = topics.decode(payload) or {}
        seq = (value.get("record") or {}).get("seq", value.get("seq"))
        if seq is None:
            assert payload in (b"online", b"offline"), name
            continue
        round_no = (value.get("view") or {}).get("round_no") or round_at[seq]
        text = payload.decode()
        for card, at in turned.get(round_no, {}).items():
            found = re.search(rf"(?<![0-9A-Za-z]){re.escape(card)}(?![0-9A-Za-z])", text)
            if at is None or at > seq:
                assert found is None, f"{name}: {card} of round {round_no} published at seq {seq} before it was turned"
            elif found:
                shown += 1
    assert shown > 20  # the search does find turned cards in the payloads


def test_a_broker_restart_and_a_service_restart_lose_nothing_and_reorder_nothing(mosquitto, tmp_path):
    journal = tmp_path / "journal.db"
    config = _config(mosquitto.port)
    audit = Auditor()
    listener = Listener(config.floor, audit.take, client_id="audit-restart", durable=True)
    listener.open()
    pumping = threading.Event()
    stop = threading.Event()

    def pump():
        while not stop.is_set():
            listener.pump(0.1)
            pumping.set()

    thread = threading.Thread(target=pump, name="audit-pump", daemon=True)
    thread.start()
    service = Service(config, simulate=True, rounds=8, seed=5, journal_path=journal, out=io.StringIO(),
                      parts=SERVICE_PARTS)
    runner = threading.Thread(target=service.run, name="service-run")
    try:
        runner.start()
        deadline = time.monotonic() + 30
        while service.floor.acked < 150 and time.monotonic() < deadline:
            time.sleep(0.01)
        mosquitto.restart(down=0.5)  # the table plays on meanwhile
        runner.join(60)
        assert not runner.is_alive()
    finally:
        service.close()
    _run(config, journal, rounds=2, seed=6)  # a second start on the same journal resumes after the acked seq
    deadline = time.monotonic() + 20
    expected = [p["seq"] for p in _public(journal)]
    while time.monotonic() < deadline and (audit.tables.get(TABLE) is None or audit.tables[TABLE].seqs[-1:] !=
                                           expected[-1:]):
        time.sleep(0.1)
    stop.set()
    thread.join()
    listener.close()
    assert audit.problems({TABLE: (journal, None)}, from_start=True) == []
    assert audit.tables[TABLE].seqs == expected


def test_a_broker_that_cannot_be_reached_never_stops_the_table(tmp_path):
    """A broker address that accepts connections and never answers (the worst case: every attempt waits for
    its timeout) and one that refuses: every round is played, the journal keeps every record for later."""
    black_hole = socket.socket()
    black_hole.bind(("127.0.0.1", 0))
    black_hole.listen(64)
    try:
        for port in (black_hole.getsockname()[1], _closed_port()):
            journal = tmp_path / f"journal-{port}.db"
            service = _run(_config(port), journal, rounds=5, seed=3)
            assert [r["type"] for r in read_records(journal)].count("RoundClosed") == 5
            assert service.floor.acked == 0 and not service.floor.connected
    finally:
        black_hole.close()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# ---------------------------------------------------------------------------------------------- audit and pit
def _event(seq: int, after: int, type_: str = "RoundOpened") -> bytes:
    return topics.encode({"table": "T", "after": after, "record": {"seq": seq, "type": type_, "data": {}}})


def test_the_audit_keeps_each_record_once_and_names_gaps_and_reorderings():
    audit = Auditor()
    for seq, after in ((3, 0), (5, 3), (3, 0), (5, 3), (9, 5)):  # repeats after a reconnection
        audit.take("T", "events", _event(seq, after))
    assert audit.problems(from_start=True) == [] and audit.tables["T"].seqs == [3, 5, 9]
    assert audit.tables["T"].repeats == 2
    audit.take("T", "events", _event(14, 12))  # 12 never arrived
    audit.take("U", "events", _event(7, 2))
    audit.take("U", "events", _event(4, 0))  # late: after 7 was kept
    audit.take("U", "events", b"not json")
    problems = audit.problems(from_start=True)
    assert problems == ["T: seq 14 follows 12 but the last record received is 9: records missing",
                        "U: the first record received is 7, after 2: records missing before it",
                        "U: 1 message(s) not in the floor's format"]


def test_the_audit_finds_an_anchor_that_is_not_the_journals(mosquitto, tmp_path):
    journal = tmp_path / "journal.db"
    floor = Collector(mosquitto.port)
    try:
        _run(_config(mosquitto.port), journal, rounds=2, seed=8)
        floor.wait_for(lambda m: any(p == b"offline" for _, p, _ in m))
    finally:
        floor.close()
    audit = Auditor()
    for name, payload, _ in floor.messages:
        where = topics.split("crisscross", name)
        audit.take(*where, payload)
    assert audit.problems({TABLE: (journal, None)}, from_start=True) == []
    anchor = json.loads(next(p for t, p, _ in floor.messages if t.endswith("/anchors")))
    forged = {**anchor, "head": "0" * 64}
    audit.take(TABLE, "anchors", topics.encode(forged))
    assert audit.problems({TABLE: (journal, None)}) == [
        f"{TABLE}: the anchor published at seq {anchor['seq']} is not the journal's head there (another hash): "
        f"rewritten or another journal"]


def test_the_watch_shows_nothing_from_the_wire_that_could_steer_the_terminal():
    """``floor watch`` (docs/floor.md, "Watch"): escape sequences, a carriage return, a second line or a figure that
    is not a number, in a table's id, status, state or alert, are shown as ``?`` (a state whose round is not a
    whole number is malformed: no round shown); the whole numbers and plain text as themselves; the summary keeps
    one line per table and per alert."""
    esc = "\x1b[2J\x1b[31m"
    alert = {"seat": 2, "card": f"middle{esc}", "round_no": 30, "rounds": 14, "loss": 4200, "first_round": 17,
             "share_percent": 100, "evidence_log10_hundredths": 412, "player": "P-1"}
    pit = Pit()
    for table in ("T", f"X{esc}"):
        pit.take(table, "status", f"online{esc}".encode())
        pit.take(table, "state", topics.encode({"table": table, "seq": 1, "view": {"state": "betting\nALERT T",
                                                                                   "round_no": "7\r"}}))
        pit.take(table, "alerts", topics.encode({"table": table, "record": {
            "seq": 1, "time": f"2026-12-01T05:00:00+00:00{esc}", "kind": "event", "round": 30, "type": "Alert",
            "data": alert}}))
    text = pit.render()
    lines = text.splitlines()
    assert not any(c in text for c in "\x1b\r") and len(lines) == 5
    assert lines[1].split()[:4] == ["T", "?", "-", "?"] and lines[2].split()[:4] == ["?", "?", "-", "?"]
    assert lines[3].startswith("ALERT T: seat 2 (player P-1) plays as if it saw the ? card")
    assert lines[4] == ("ALERT ?: seat 2 (player P-1) plays as if it saw the ? card (round 30, 14 rounds, "
                        "evidence 10^4.1, loss 4200) at ?; not acknowledged")
    alert.update(card="middle")
    pit.take("T", "alerts", topics.encode({"table": "T", "record": {
        "seq": 2, "time": "2026-12-01T05:00:00+00:00", "kind": "event", "round": 30, "type": "Alert", "data": alert}}))
    latest = [line for line in pit.render().splitlines() if line.startswith("ALERT T:")][-1]
    assert latest == ("ALERT T: seat 2 (player P-1) plays as if it saw the middle card (round 30, 14 rounds, "
                      "evidence 10^4.1, loss 4200) at 2026-12-01T05:00:00+00:00; not acknowledged")


def test_the_pit_summary_counts_rounds_drop_win_and_faults_from_the_events(mosquitto, tmp_path):
    journal = tmp_path / "journal.db"
    pit, listener = pit_listening(mosquitto.port)
    service = Service(_config(mosquitto.port), simulate=True, rounds=4, seed=9, journal_path=journal,
                      out=io.StringIO(), parts=SERVICE_PARTS)
    service.sims["shoe"].inject("jam")  # one fault, cleared by the simulated supervisor
    run_watched(service, listener)
    records = read_records(journal)
    closed = [r["data"]["totals"] for r in records if r["type"] == "RoundClosed"]
    table = pit.tables[TABLE]
    assert table.rounds == len(closed) == 4
    assert table.drop == sum(t["wagered"] for t in closed) > 0  # no test round here: the round totals agree
    assert table.win == -sum(t["player_net"] for t in closed)
    assert table.malformed == 0
    assert table.faults == sum(r["type"] == "FaultRaised" for r in records) >= 1
    assert (table.status, table.state, table.round_no) == ("offline", "closed", 4)
    assert table.per_hour() is not None and table.per_hour() > 0
    text = pit.render()
    assert TABLE in text and str(table.drop) in text


def _heard(pit: Pit, seq: int, type_: str, data: dict, **mark) -> None:
    """Feed ``pit`` the table's public record ``seq`` as its ``events`` topic carries it (``mark``: ``test=True``
    as in test mode)."""
    record = {"seq": seq, "time": f"2026-03-01T10:00:{seq:02d}+00:00", "kind": "record", "round": data.get("round_no"),
              "type": type_, "data": data}
    pit.take("T", "events", topics.encode({"table": "T", "after": seq - 1, "record": record, **mark}))


def _settled(round_no: int, seat: int, wagers: dict) -> dict:
    return {"round_no": round_no, "seat": seat, "settlement": {"wagers": wagers, "net": 0}}


def test_the_pit_summary_counts_drop_and_win_by_the_meters_rule_test_rounds_left_out(caplog):
    """Drop is every stake settled and win the house's (domain: the drop; NY 9 NYCRR 5319.58: a test round moves
    no meter): a test round's wagers count in neither, and a record whose data the meters cannot read is logged
    and left out, the watch going on."""
    pit = Pit()
    _heard(pit, 1, "RoundOpened", {"round_no": 1, "test": False})
    # seat 1: ante_across 500 lost, five_card_bonus 100 won 3,000 net; seat 2: ante_down 200 pushed
    _heard(pit, 2, "SeatSettled", _settled(1, 1, {
        "ante_across": {"amount": 500, "outcome": "lose", "net": -500},
        "five_card_bonus": {"amount": 100, "outcome": "win", "net": 3000}}))
    _heard(pit, 3, "SeatSettled", _settled(1, 2, {"ante_down": {"amount": 200, "outcome": "push", "net": 0}}))
    _heard(pit, 4, "RoundClosed", {"round_no": 1, "totals": {"wagered": 800, "player_net": 2500}})
    _heard(pit, 5, "RoundOpened", {"round_no": 2, "test": True})
    _heard(pit, 6, "SeatSettled", _settled(2, 1, {"ante_across": {"amount": 9000, "outcome": "lose", "net": -9000}}))
    _heard(pit, 7, "RoundClosed", {"round_no": 2, "totals": {"wagered": 9000, "player_net": -9000}})
    _heard(pit, 8, "RoundOpened", {"round_no": 3, "test": False})
    with caplog.at_level("WARNING", logger="controller.floor.pit"):
        _heard(pit, 9, "SeatSettled", _settled(3, 1, {"ante_across": {"amount": "lots", "outcome": "lose"}}))
    _heard(pit, 10, "SeatSettled", _settled(3, 1, {"across": {"amount": 1000, "outcome": "lose", "net": -1000}}))
    _heard(pit, 11, "RoundClosed", {"round_no": 3, "totals": {"wagered": 1000, "player_net": -1000}})
    # a test round whose opening was not heard (the watch began after it): its messages carry the test mark
    _heard(pit, 12, "SeatSettled", _settled(4, 1, {"ante_across": {"amount": 700, "outcome": "lose", "net": -700}}),
           test=True)
    _heard(pit, 13, "RoundClosed", {"round_no": 4, "totals": {"wagered": 700, "player_net": -700}}, test=True)
    table = pit.tables["T"]
    assert table.drop == 500 + 100 + 200 + 1000
    assert table.win == 500 - 3000 + 1000
    assert table.malformed == 1 and "table 'T', record 9" in caplog.text
    assert table.rounds == 4 and table.last_seq == 13
    assert str(table.drop) in pit.render()


def test_a_mispay_whose_difference_is_not_a_number_is_counted_malformed_and_the_watch_goes_on(caplog):
    """A table's ``PayoutChecked`` whose difference is text (``count_record``'s ``ValueError``): logged with the
    table and seq, counted in ``malformed``, left out of the mispays; the records after it and the other table
    are counted as before (docs/floor.md, "Watch")."""
    pit = Pit()
    check = {"round_no": 1, "seat": 1, "expected": {}, "seen": {}}
    with caplog.at_level("WARNING", logger="controller.floor.pit"):
        _heard(pit, 1, "PayoutChecked", {**check, "differences": [{"difference": "abc"}]})
    _heard(pit, 2, "PayoutChecked", {**check, "differences": [{"spot": "ante_across", "difference": -300},
                                                               {"spot": "five_card_bonus", "difference": 200}]})
    _heard(pit, 3, "FaultRaised", {"round_no": 1, "device": "shoe", "cause": "jam", "detail": "", "resumable": True})
    _heard(pit, 4, "RoundClosed", {"round_no": 1, "totals": {"wagered": 0, "player_net": 0}})
    pit.take("U", "events", topics.encode({"table": "U", "after": 0, "record": {
        "seq": 1, "time": "2026-03-01T10:00:01+00:00", "kind": "record", "round": 1, "type": "FaultRaised",
        "data": {"round_no": 1, "cause": "jam"}}}))
    table = pit.tables["T"]
    assert table.malformed == 1 and "table 'T', record 1: data.differences[0].difference" in caplog.text
    assert list(table.mispays.values()) == [{"caught": [1, 300 + 200], "accepted": [0, 0]}]  # the good reading
    assert (table.faults, table.rounds, table.last_seq, pit.tables["U"].faults) == (1, 1, 4, 1)
    assert len(pit.render().splitlines()) == 3  # the heading and both tables


def test_floor_audit_and_watch_from_the_command_line(mosquitto, tmp_path):
    """``crisscross floor audit`` with a durable session (the broker keeps what is published between two
    audits) against the journal, and ``crisscross floor watch`` showing the retained status and state."""
    journal = tmp_path / "journal.db"
    base = [sys.executable, "-m", "controller", "floor"]
    broker = ["--broker", "127.0.0.1", "--port", str(mosquitto.port)]
    # the first audit runs as a process of its own, the rest in this process (tests/cli_helpers.py)
    first = subprocess.run(base + ["audit", *broker, "--session", "t", "--for", "0.3"], capture_output=True,
                           text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    _run(_config(mosquitto.port), journal, rounds=2, seed=2)
    audit = crisscross("floor", "audit", *broker, "--session", "t", "--for", "2", "--from-start",
                       "--journal", f"{TABLE}={journal}")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    count = len(_public(journal))
    assert f"{TABLE}: {count} records" in audit.stdout and audit.stdout.endswith("1 table(s), 0 problem(s)\n")
    other = tmp_path / "other.db"
    _run(dataclasses.replace(_config(mosquitto.port)), other, rounds=1, seed=3)  # another journal
    wrong = crisscross("floor", "audit", *broker, "--session", "t", "--for", "2", "--journal", f"{TABLE}={journal}")
    assert wrong.returncode == 1 and "is not the journal's head there" in wrong.stdout
    watch = crisscross("floor", "watch", *broker, "--for", "1", "--every", "0.5")
    assert watch.returncode == 0, watch.stderr
    line = next(x for x in watch.stdout.splitlines() if x.startswith(TABLE))
    assert line.split()[1:4] == ["offline", "1", "closed"]
    once = crisscross("floor", "watch", *broker, "--for", "0")  # its help: "0: one summary"
    assert once.returncode == 0 and once.stdout.count("table ") == 1 and once.stdout.startswith("table "), \
        once.stdout + once.stderr


@pytest.fixture
def tls_broker(tmp_path):
    """A Mosquitto that takes TLS only, with a certificate for 127.0.0.1 from a test authority (trustme), and
    only the user ``cc01`` (password ``s3cret``). Skipped without mosquitto, except under CI."""
    import trustme

    from tests.conftest import own_broker

    authority = trustme.CA()
    certificate = authority.issue_cert("127.0.0.1")
    chain, key, ca = tmp_path / "chain.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    certificate.private_key_and_cert_chain_pem.write_to_path(str(chain))
    certificate.private_key_pem.write_to_path(str(key))
    authority.cert_pem.write_to_path(str(ca))
    broker = own_broker(tmp_path / "broker", tls=(chain, key), users={"cc01": "s3cret"})
    yield broker, ca
    broker.stop()


def test_tls_and_credentials_from_table_yaml_and_a_wrong_password_never_stops_the_table(tls_broker, tmp_path):
    broker, ca = tls_broker
    secret = tmp_path / "floor.pass"
    secret.write_text("s3cret\n")
    secret.chmod(0o600)
    table = tmp_path / "table.yaml"
    table.write_text(Path(load_table_config().source).read_text() + (
        f"floor:\n  enabled: true\n  broker: 127.0.0.1\n  port: {broker.port}\n  tls: true\n  ca_file: ca.pem\n"
        f"  username: cc01\n  password_file: floor.pass\n"))
    (tmp_path / "ca.pem").write_bytes(ca.read_bytes())
    config = load_table_config(table)
    journal = tmp_path / "journal.db"
    service = _run(config, journal, rounds=2, seed=12)
    assert service.floor.acked == len(read_records(journal))  # every record acknowledged over TLS
    audit = Auditor()
    listener = Listener(config.floor, audit.take, client_id="audit-tls", durable=False)
    listener.open()
    deadline = time.monotonic() + 30
    while not (TABLE in audit.tables and audit.tables[TABLE].anchors) and time.monotonic() < deadline:
        listener.pump(0.1)
    listener.close()
    assert audit.tables[TABLE].anchors  # the retained anchor, read back over TLS with the credentials
    secret.write_text("wrong\n")
    other = tmp_path / "other.db"
    refused = _run(load_table_config(table), other, rounds=2, seed=12)
    assert [r["type"] for r in read_records(other)].count("RoundClosed") == 2
    assert refused.floor.acked == 0
    plain = dataclasses.replace(config.floor, tls=False)
    with pytest.raises(OSError):
        Listener(plain, audit.take).open(timeout=2.0)


def test_a_publisher_resumed_between_a_rounds_close_and_its_checkpoint_still_publishes_that_anchor(mosquitto,
                                                                                                     tmp_path):
    """The progress file says the broker acknowledged up to a record after ``RoundClosed`` and before the
    checkpoint written in the same commit: the next start publishes the rest and that checkpoint's anchor."""
    from controller.floor.publisher import Publisher
    from controller.journal.store import Journal

    journal_path = tmp_path / "journal.db"
    journal = Journal(journal_path, fsync=False)
    journal.commit([("event", "ButtonPressed", {"button": "open_betting"}, 1),
                    ("record", "RoundOpened", {"round_no": 1}, 1)])
    journal.commit([("event", "ButtonPressed", {"button": "reveal"}, 1),
                    ("record", "RoundClosed", {"round_no": 1, "totals": {}}, 1),
                    ("command", "Display", {"device": "panel", "text": "PLACE BETS"}, 1),
                    ("command", "SetLamps", {"device": "panel", "buttons": ["open_betting"]}, 1)], state={"x": 1})
    journal.close()
    config = FloorConfig(True, "127.0.0.1", mosquitto.port)
    Progress(progress_path(journal_path), f"127.0.0.1:{mosquitto.port}/crisscross").save(4, 4)
    floor = Collector(mosquitto.port)
    publisher = Publisher(config, TABLE, journal_path)
    try:
        publisher.start()
        floor.wait_for(lambda m: any(t.endswith("/anchors") for t, _, _ in m))
    finally:
        publisher.stop()
        floor.close()
    assert [e["record"]["seq"] for e in _events(floor.messages)] == [5, 6]
    assert [json.loads(p)["seq"] for t, p, _ in floor.messages if t.endswith("/anchors")] == [6]


@pytest.mark.parametrize("args, start", [
    (("watch", "--config", str(Path(__file__).parents[1] / "config" / "table.yaml")),
     "crisscross: {table}: floor is not enabled: give --broker HOST"),
    (("watch", "--broker", "127.0.0.1", "--port", "0"), "crisscross: --port 0: expected 1 to 65535"),
    (("audit", "--broker", "127.0.0.1", "--port", "70000"), "crisscross: --port 70000: expected 1 to 65535"),
    (("audit", "--broker", "127.0.0.1", "--journal", "CC-01"), "crisscross: --journal 'CC-01': expected TABLE=PATH"),
    (("audit", "--broker", "127.0.0.1", "--key", "=journal.key"), "crisscross: --key '=journal.key': expected "
                                                                  "TABLE=PATH"),
])
def test_floor_tools_refuse_bad_options_in_one_line_before_connecting(args, start):
    """controller/floor/tools.py: refused options or configuration are exit status 2 (docs/floor.md: the
    broker is ``--broker HOST`` or ``floor:`` of the table configuration, which is off unless enabled)."""
    from controller.settings.files import CONFIG_DIR

    proc = crisscross("floor", *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(start.format(table=CONFIG_DIR / "table.yaml")) and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("value", ["a/#", "+", "", "/a", "a//b", "a/", "x\0y"])
@pytest.mark.parametrize("command", [("watch",), ("audit",), ("store", "--dsn", "postgresql://x/y")])
def test_a_prefix_that_is_not_topic_levels_is_refused_by_the_tools_as_by_table_yaml(value, command, capsys):
    """``--prefix`` of ``floor watch``, ``audit`` and ``store`` is checked by ``floor.prefix``'s rule (MQTT 5
    section 4.7: no ``+``, ``#``, empty level, leading or trailing ``/``): exit status 2 and a line naming the
    option, before any broker or database is used; table.yaml refuses the same text."""
    from controller.cli.main import main

    with pytest.raises(SystemExit) as stop:
        main(["floor", *command, "--broker", "127.0.0.1", "--port", str(_closed_port()), "--prefix", value])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"error: argument --prefix: {value!r} is not MQTT topic levels" in err, err
    with pytest.raises(ConfigError, match="floor.prefix"):
        parse_floor_config(Path("table.yaml"), {"prefix": value}, "CC-01")


@pytest.mark.parametrize("value", ["a\x1b[2J", "tab\there", "a" * 129])
def test_a_prefix_too_long_or_with_a_control_character_is_refused_by_the_tools_as_by_table_yaml(value, capsys):
    """A prefix of 70,000 characters ended in paho's traceback, one holding ESC was taken (and shown raw in the
    logs): at most 128 printable characters, by the same rule for ``--prefix`` and ``floor.prefix``."""
    from controller.cli.main import main

    with pytest.raises(SystemExit) as stop:
        main(["floor", "watch", "--broker", "127.0.0.1", "--port", str(_closed_port()), "--prefix", value])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "is not a topic prefix of at most 128 printable characters" in err, err
    with pytest.raises(ConfigError, match="floor.prefix"):
        parse_floor_config(Path("table.yaml"), {"prefix": value}, "CC-01")


def test_a_prefix_of_topic_levels_is_taken_by_the_tools():
    from controller.floor.tools import prefix

    assert prefix("casino/floor-2") == "casino/floor-2"


def test_floor_tools_name_a_broker_that_cannot_be_reached():
    """A broker that refuses the connection: exit status 2 naming the broker and port (docs/floor.md)."""
    with socket.socket() as bound:  # a port nobody listens on while the test runs
        bound.bind(("127.0.0.1", 0))
        port = bound.getsockname()[1]
        proc = crisscross("floor", "watch", "--broker", "127.0.0.1", "--port", str(port), "--for", "0")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"crisscross: broker 127.0.0.1:{port}: Connection refused\n"


class _Reason:
    """An MQTT reason code as paho hands it to a callback."""

    def __init__(self, failure: bool) -> None:
        self.is_failure = failure

    def __str__(self) -> str:
        return "Not authorized" if self.is_failure else "Success"


class _Client:
    """Stands in for paho's client on a connection that is up: what is published gets the next mid."""

    def __init__(self) -> None:
        self.mids = iter(range(1, 10**6))

    def publish(self, topic, payload, qos=0, retain=False):
        return type("Info", (), {"mid": next(self.mids), "rc": 0})()

    def disconnect(self):
        pass

    def loop(self, timeout=0.0):
        pass

    def socket(self):
        return None


def test_a_broker_that_accepts_connections_and_refuses_every_record_makes_the_back_off_grow(tmp_path, caplog):
    """Each CONNACK reset the back-off to 0.5 s, so a broker that refused every record was connected to about 30
    times in 20 s with thousands of ERROR lines. The back-off now doubles at each connection lost to a refusal
    up to ``RETRY_MAX`` (docs/floor.md), only an acknowledged record starts it again, and the refusals are
    logged at a bounded rate."""
    from controller.floor.publisher import RETRY_MAX, RETRY_MIN, Publisher
    from drivers.ratelog import BURST

    journal = tmp_path / "journal.db"
    journal.touch()
    publisher = Publisher(FloorConfig(True, "127.0.0.1", 1), TABLE, journal)
    waits = []
    with caplog.at_level("ERROR"):
        for _ in range(20):  # accepted, one record sent and refused, connection dropped
            publisher._client, publisher._lost = _Client(), False  # as _connect leaves them
            publisher._on_connect(publisher._client, None, None, _Reason(False), None)
            publisher._send("events", {"table": TABLE}, 1, 1)
            publisher._on_publish(publisher._client, None, publisher._pending[-1].mid, _Reason(True), None)
            assert publisher._lost
            publisher._drop()
            waits.append(publisher._next_try - time.monotonic())
    doubled = [RETRY_MIN * 2 ** n for n in range(5)] + [RETRY_MAX] * 15  # 0.5, 1, 2, 4, 8, then 10 s
    assert [round(w * 2) / 2 for w in waits] == [min(w, RETRY_MAX) for w in doubled]
    assert len([r for r in caplog.records if "refused journal record" in r.getMessage()]) <= BURST + 1
    publisher._client = _Client()
    publisher._on_connect(publisher._client, None, None, _Reason(False), None)
    publisher._send("events", {"table": TABLE}, 1, 1)
    publisher._on_publish(publisher._client, None, publisher._pending[-1].mid, _Reason(False), None)  # acknowledged
    assert publisher._retry == RETRY_MIN


def test_simulated_play_never_publishes_under_the_table_id(tmp_path):
    """``run --simulate`` with a floor-enabled table file published to ``crisscross/CC-01/...`` with no mark, so
    ``floor watch`` counted simulated drop and win as CC-01's and an audit of the real journal failed on the
    simulated anchor. Simulated play publishes under its own id, ``"simulated": true`` in every JSON message,
    with its own MQTT client id (the table's session is never taken over)."""
    from controller.floor.publisher import Publisher

    config = load_table_config()
    service = Service(dataclasses.replace(config, floor=FloorConfig(True, "127.0.0.1", 1)), simulate=True,
                      rounds=1, seed=1, journal_path=tmp_path / "journal.db", out=io.StringIO(), parts=SERVICE_PARTS)
    try:
        floor = service.floor
        assert floor.simulated and floor.table_id == config.table_id + SIMULATED_SUFFIX
        assert floor.client_id == f"crisscross-table-{config.table_id}{SIMULATED_SUFFIX}"
        assert all(f"/{config.table_id}/" not in name for name in floor._topics.values())
        published = []
        floor._client = type("Client", (_Client,), {"publish": lambda self, topic, payload, qos=0, retain=False:
                                                   published.append((topic, payload)) or _Client.publish(
                                                       self, topic, payload)})()
        floor._send("events", {"table": floor.table_id, "after": 0, "record": {}}, 1, 1)
        floor.publish_view({"state": "idle"}, 0)
        floor._send_view()
    finally:
        service.close()
    assert [json.loads(payload)["simulated"] for _, payload in published] == [True, True]
    assert not Publisher(FloorConfig(True, "127.0.0.1", 1), "CC-01", tmp_path / "journal.db").simulated


def test_a_record_larger_than_the_broker_takes_is_a_marked_stub_in_order_and_the_floor_goes_on(tmp_path):
    """A broker that refuses one oversized message (Mosquitto's ``max_packet_size``: it disconnects the client)
    stopped the floor: the publisher sent the same record again at every connection, and later ones overtook it.
    The record is published as a stub marked ``oversized`` in its place, every event follows the one before it
    by ``after``, and the later records arrive."""
    from controller.floor.publisher import Publisher
    from controller.journal.store import Journal
    from tests.conftest import own_broker

    broker = own_broker(tmp_path / "broker", extra="max_packet_size 3000\n")
    path = tmp_path / "journal.db"
    journal = Journal(path, fsync=False)
    entries = [("record", "RoundOpened", {"round_no": n}, n) for n in range(1, 4)]
    entries.append(("record", "PressRefused", {"button": "confirm", "reason": "x" * 5000}, 3))
    entries += [("record", "RoundOpened", {"round_no": n}, n) for n in range(4, 7)]
    journal.commit(entries)
    journal.close()
    floor = Collector(broker.port)
    publisher = Publisher(FloorConfig(True, "127.0.0.1", broker.port), TABLE, path)
    try:
        publisher.start()
        floor.wait_for(lambda m: len(_events(m)) >= 7)
    finally:
        publisher.stop()
        floor.close()
        broker.stop()
    events = [topics.decode(p) for t, p, _ in floor.messages if t.endswith("/events")]
    seqs = [e["record"]["seq"] for e in events]
    assert seqs == sorted(set(seqs)) and [e["after"] for e in events] == [0, *seqs[:-1]]
    (stub,) = [e for e in events if e.get("oversized")]
    assert stub["record"]["type"] == "PressRefused" and stub["record"]["data"] is None and stub["oversized"] > 5000


def test_the_pit_sees_a_gap_by_after_and_counts_a_stub():
    pit = Pit()
    for seq, after, extra in ((1, 0, {}), (2, 1, {}), (5, 3, {}), (6, 5, {"oversized": 90000})):
        data = None if extra else {"round_no": 1}
        pit.take(TABLE, "events", topics.encode({"table": TABLE, "after": after, **extra, "record": {
            "seq": seq, "time": "2026-01-01T00:00:00Z", "kind": "record", "round": 1, "type": "RoundOpened",
            "data": data}}))
    summary = pit.tables[TABLE]
    assert (summary.last_seq, summary.gaps, summary.oversized) == (6, 1, 1)


def test_every_message_of_test_mode_is_marked_test_also_after_a_restart_within_it(tmp_path):
    """NY 9 NYCRR 5319.58: a floor system must tell test rounds from live ones. Every message of a record from
    ``TestModeEntered`` to ``TestModeLeft`` (both included) carries ``"test": true``, none other does; a publisher
    started again within test mode (its progress file says where) finds it in the journal."""
    from controller.floor.publisher import Publisher
    from controller.journal.store import Journal
    from tests.conftest import own_broker

    broker = own_broker(tmp_path / "broker")
    path = tmp_path / "journal.db"
    journal = Journal(path, fsync=False)
    first = [("record", "RoundOpened", {"round_no": 1, "test": False}, 1),
             ("record", "TestModeEntered", {"round_no": 1, "by": "sue", "role": "supervisor", "reason": ""}, 1),
             ("record", "RoundOpened", {"round_no": 2, "test": True}, 2)]
    later = [("record", "RoundVoided", {"round_no": 2, "by": "sue", "role": "supervisor", "reason": "", "seats": [],
                                        "totals": {}, "code": "other"}, 2),
             ("record", "TestModeLeft", {"round_no": 2, "rounds": 1, "by": "sue", "role": "supervisor",
                                         "reason": ""}, 2),
             ("record", "RoundOpened", {"round_no": 3, "test": False}, 3)]
    journal.commit(first)
    floor = Collector(broker.port)
    try:
        publisher = Publisher(FloorConfig(True, "127.0.0.1", broker.port), TABLE, path)
        publisher.start()
        floor.wait_for(lambda m: len(_events(m)) >= 3)
        publisher.stop()  # acknowledged up to record 3, inside test mode: kept in the progress file
        journal.commit(later)
        publisher = Publisher(FloorConfig(True, "127.0.0.1", broker.port), TABLE, path)
        publisher.start()
        floor.wait_for(lambda m: len(_events(m)) >= 6)
        publisher.stop()
    finally:
        journal.close()
        floor.close()
        broker.stop()
    events = [topics.decode(p) for t, p, _ in floor.messages if t.endswith("/events")]
    marks = {e["record"]["seq"]: e.get("test", False) for e in events}
    assert marks == {1: False, 2: True, 3: True, 4: True, 5: True, 6: False}
    assert all("test" not in e or e["test"] is True for e in events)


def test_an_amount_beyond_what_a_table_can_record_is_left_out_of_the_watch_and_the_counts():
    """A wager is at most what a bet sensor reports and a payout stays below 2**53 (controller/game/table.py): a
    record carrying 10^30, or a mispay of 2**53 + 1, is not a table's; ``floor watch`` counts it malformed and
    its drop, win and mispays stay as the other records make them."""
    pit = Pit()
    _heard(pit, 1, "RoundOpened", {"round_no": 1, "test": False})
    _heard(pit, 2, "SeatSettled", _settled(1, 1, {"ante_across": {"amount": 10**30, "outcome": "lose", "net": -1}}))
    _heard(pit, 3, "SeatSettled", _settled(1, 2, {"ante_down": {"amount": 200, "outcome": "lose", "net": -200}}))
    _heard(pit, 4, "MispayAccepted", {"round_no": 1, "differences": [{"spot": "ante_down", "difference": 2**53 + 1}]})
    table = pit.tables["T"]
    assert (table.drop, table.win, table.malformed) == (200, 200, 2)
    assert table.mispays == {}
    with pytest.raises(ValueError, match=r"data.differences\[0\].difference is beyond"):
        count_record(TableSummary(), {"seq": 4, "time": "2026-03-01T10:00:04+00:00", "type": "MispayAccepted",
                                      "data": {"differences": [{"difference": -(2**53 + 1)}]}})


def test_a_broker_with_a_small_maximum_packet_size_gets_state_and_meters_as_stubs_and_keeps_the_table(
        tmp_path, caplog):
    """MQTT 5.0, 3.2.2.3.6: a client never sends a packet over the Maximum Packet Size of the broker's CONNACK
    (Mosquitto's ``max_packet_size`` disconnects one that does, and sends its last will). With 600 bytes, a
    simulated run of 4 rounds: the table stays connected (one ``online``, one ``offline`` at its stop, no
    connection lost), every public record arrives in order, and the views and each round's meters arrive, as
    marked stubs (``oversized``: the full size) when larger than the broker takes."""
    from tests.conftest import own_broker

    broker = own_broker(tmp_path / "broker", extra="max_packet_size 600\n")
    journal = tmp_path / "journal.db"
    floor = Collector(broker.port)
    try:
        _run(_config(broker.port), journal, rounds=4, seed=3)
        public = [p["seq"] for p in (public_record(r) for r in read_records(journal)) if p is not None]
        floor.wait_for(lambda m: len(_events(m)) >= len(public) and any(
            t.endswith("/status") and p == b"offline" for t, p, _ in m))
    finally:
        floor.close()
        broker.stop()
    assert "lost; publishing again" not in caplog.text
    statuses = [p for t, p, _ in floor.messages if t.endswith("/status")]
    assert statuses == [b"online", b"offline"]
    events = _events(floor.messages)
    assert [e["record"]["seq"] for e in events] == public and [e["after"] for e in events] == [0, *public[:-1]]
    meters = [json.loads(p) for t, p, _ in floor.messages if t.endswith("/meters")]
    assert len(meters) == 4  # one per round's close
    assert all(m["meters"] is None and m["oversized"] > 600 for m in meters if "oversized" in m)
    states = [json.loads(p) for t, p, _ in floor.messages if t.endswith("/state")]
    assert states and all(s["view"] is None and s["oversized"] > 600 for s in states if "oversized" in s)
    assert any("oversized" in s for s in states)  # a round's view is larger than 600 bytes
    assert all(len(t.encode()) + len(p) < 600 for t, p, _ in floor.messages)


@pytest.mark.parametrize("limit", [10, 300])
def test_no_packet_over_the_brokers_maximum_is_sent_and_what_cannot_fit_is_dropped_without_stalling(
        tmp_path, caplog, limit):
    """MQTT 5.0, 3.2.2.3.6: the publisher counts the whole PUBLISH packet (fixed header, topic, packet id,
    properties, payload) against the Maximum Packet Size of the broker's CONNACK (a scripted broker,
    ``tests.fake_mqtt``, that says ``limit``): no packet it sends is larger. At 300 bytes a record larger than that
    goes as a marked stub; at 10 bytes nothing fits, not even a stub or the status: nothing is sent, each message
    is logged as not sent, and the journal's records still count as published (the outbox never stalls). The log
    names the broker's limit as it is, never a negative one."""
    from controller.floor.publisher import Publisher
    from controller.journal.store import Journal
    from tests.fake_mqtt import FakeBroker, connack

    path = tmp_path / "journal.db"
    journal = Journal(path, fsync=False)
    entries = [("record", "RoundOpened", {"round_no": n}, n) for n in range(1, 4)]
    entries.append(("record", "PressRefused", {"button": "confirm", "reason": "x" * 5000}, 3))
    journal.commit(entries)
    journal.close()
    last = len(entries)
    broker = FakeBroker([], connack_packet=connack(limit))
    publisher = Publisher(FloorConfig(True, "127.0.0.1", broker.port), TABLE, path)
    try:
        publisher.start()
        broker.wait(lambda: publisher.acked == last, 30, f"the publisher past journal record {last}")
    finally:
        publisher.stop()
        broker.close()
    assert all(size <= limit for size in broker.published), broker.published
    said = re.findall(r"Maximum Packet Size of (-?\d+) bytes", caplog.text)
    assert said and set(said) == {str(limit)}
    if limit == 10:
        assert broker.published == [] and "not sent" in caplog.text
    else:  # the online status, the 4 events (the last a stub) and the offline status
        assert len(broker.published) == 6 and "published as a marked stub" in caplog.text
