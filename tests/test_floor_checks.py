"""The payout check's records and the hole-card alerts on the floor (docs/floor.md), against a real Mosquitto
started by the test: ``PayoutChecked`` and ``MispayAccepted`` reach ``events`` (without the supervisor's free
text) and ``floor watch`` counts today's mispays caught and accepted with their amounts; each journaled ``Alert``
reaches ``alerts`` alone, which a broker ACL keeps from the pit's readers.

Oracles: the simulated dealer's own record of its mistakes (``SimulatedTable.payout_errors_made``: each one is
caught once, by the seat's first reading), the differences and alerts counted from the journal's records, and
the regulation's secrecy rule (a seat's cards are turned at its settlement, NY 9 NYCRR 5324.39(e)(9)(i)).
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import threading
from datetime import date, datetime, timezone

import paho.mqtt.client as paho
import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.control.server import public_record
from controller.floor import topics
from controller.floor.listen import Listener
from controller.floor.pit import Pit
from controller.game.cards import DECK
from controller.journal.reader import read_records
from controller.journal.store import Journal
from controller.round import commands as cmd
from controller.service.assembly import Service
from controller.settings.floor import FloorConfig
from controller.simulated.player_spec import parse_spec
from drivers import events as ev
from tests.conftest import own_broker
from tests.test_floor import TABLE, Collector, _config, _events, pit_listening, run_watched
from tests.test_payout import SEAT_1, SEAT_6, OperatorAccept, paid, to_payout



def _day(record: dict) -> date:
    """The UTC day of a journal record's own ``time``: the day the pit counts it on (a run may cross midnight)."""
    return datetime.fromisoformat(record["time"]).astimezone(timezone.utc).date()


def _payout_records() -> list:
    """One round's outputs at a table that checks payouts: seat 6 paid 100 short on the middle bet and 100 over
    on a losing bonus, the supervisor accepts it ("player agreed"); seat 1 paid right."""
    driver = to_payout()
    paid(driver, 6, {**SEAT_6, "middle": 900, "five_card_bonus": 100})
    driver.send(ev.SupervisorKey(True, "SUP-1"))
    driver.send(OperatorAccept)
    paid(driver, 1, SEAT_1)
    return [o for o in driver.outputs if isinstance(o, (cmd.PayoutChecked, cmd.MispayAccepted))]


def test_payout_records_are_public_and_the_supervisors_reason_is_not():
    records = [{"seq": n, "time": "2026-12-01T02:00:00.000+00:00", "kind": "record", "round": 1,
                "type": type(o).__name__, "data": cmd.to_record(o), "prev": "0", "hash": "0"}
               for n, o in enumerate(_payout_records(), 1)]
    assert [r["type"] for r in records] == ["PayoutChecked", "MispayAccepted", "PayoutChecked"]
    shown = [public_record(r) for r in records]
    assert all(s is not None and "prev" not in s and "hash" not in s for s in shown)
    assert records[1]["data"]["reason"] == "player agreed" and "reason" not in shown[1]["data"]
    assert shown[1]["data"]["by"] == "sue" and (shown[1]["data"]["short"], shown[1]["data"]["over"]) == (100, 100)
    assert shown[0]["data"]["seen"]["middle"] == 900 and shown[0]["data"]["expected"]["middle"] == 1000


def test_floor_watch_counts_todays_mispays_caught_by_a_seeded_run_with_payout_errors(mosquitto, tmp_path):
    journal = tmp_path / "journal.db"
    pit, listener = pit_listening(mosquitto.port)
    service = Service(_config(mosquitto.port), simulate=True, rounds=8, seed=7, journal_path=journal,
                      out=io.StringIO(), payout_errors=0.4, parts=SERVICE_PARTS)
    floor = Collector(mosquitto.port)
    try:
        run_watched(service, listener)
    finally:
        floor.close()
    made = service.table.payout_errors_made
    records = read_records(journal)
    caught = [r for r in records if r["type"] == "PayoutChecked" and r["data"]["differences"]]
    assert len(made) >= 3, "too few mistakes: a weak run"
    assert len(caught) == len(made)  # each mistake caught once, by the seat's first reading
    assert {(r["round"], r["data"]["seat"]) for r in caught} == {(round_no, seat) for round_no, seat, _ in made}
    table = pit.tables[TABLE]
    days = sorted({_day(r) for r in caught})
    for day in days:  # one day, or two when the run crossed midnight (UTC)
        on_day = [r for r in caught if _day(r) == day]
        amount = sum(abs(d["difference"]) for r in on_day for d in r["data"]["differences"])
        assert table.mispays_on(day) == {"caught": [len(on_day), amount], "accepted": [0, 0]}
        header, line = pit.render(day).splitlines()[:2]
        assert header.split()[-5:] == ["mispays", "caught", "accepted", "alerts", "acked"]
        assert line.split()[-4:] == [f"{len(on_day)}/{amount}", "0/0", "0", "0"]
    assert table.mispays_on(date(2000, 1, 1)) == {"caught": [0, 0], "accepted": [0, 0]}
    assert pit.render(date(2000, 1, 1)).splitlines()[1].split()[-4:] == ["0/0", "0/0", "0", "0"]
    checks = [e["record"] for e in _events(floor.messages) if e["record"]["type"] == "PayoutChecked"]
    assert [c["seq"] for c in checks] == [r["seq"] for r in records if r["type"] == "PayoutChecked"]


def test_an_accepted_mispay_reaches_the_floor_without_its_reason_and_is_counted(mosquitto, tmp_path):
    from controller.floor.publisher import Publisher

    path = tmp_path / "journal.db"
    journal = Journal(path, fsync=False)
    journal.commit([("record", type(o).__name__, cmd.to_record(o), 1) for o in _payout_records()])
    journal.close()
    pit, listener = pit_listening(mosquitto.port)
    floor = Collector(mosquitto.port)
    publisher = Publisher(FloorConfig(True, "127.0.0.1", mosquitto.port), TABLE, path)
    try:
        publisher.start()
        floor.wait_for(lambda m: len(_events(m)) == 3)
        listener.pump(0.5)
    finally:
        publisher.stop()
        listener.close()
        floor.close()
    assert not any(b"player agreed" in payload for _, payload, _ in floor.messages)
    # seat 6: +100 on the bonus (a losing wager left), -100 on the middle bet; read once, then accepted
    (day,) = {_day(r) for r in read_records(path)}  # one commit: one time, one day
    assert pit.tables[TABLE].mispays_on(day) == {"caught": [1, 200], "accepted": [1, 200]}
    assert pit.render(day).splitlines()[1].split()[-4:] == ["1/200", "1/200", "0", "0"]


# ---------------------------------------------------------------------------------------------- alerts
#: The ACL of docs/floor.md ("Who reads what"), as the broker of the test takes it.
ACL = """\
# each table writes its own topics (user name = table id)
pattern write crisscross/%u/#

# surveillance and supervisors read every topic, alerts included
user surveillance
topic read crisscross/#

# the pit and any other reader: every topic but alerts
user pit
topic read crisscross/+/events
topic read crisscross/+/state
topic read crisscross/+/status
topic read crisscross/+/anchors
"""
USERS = {TABLE: "table-pass", "surveillance": "surv-pass", "pit": "pit-pass"}


class Reader(Collector):
    """``Collector`` as a named user of the broker."""

    def __init__(self, port: int, user: str) -> None:
        self.messages, self.lock = [], threading.Lock()
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
        self.client.username_pw_set(user, USERS[user])
        self.client.on_message = self._message
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *_: subscribed.set()
        self.client.connect("127.0.0.1", port)
        self.client.subscribe("crisscross/#", qos=1)
        self.client.loop_start()
        assert subscribed.wait(15.0), f"the broker on port {port} did not acknowledge {user}'s subscription"


@pytest.fixture
def acl_broker(tmp_path):
    broker = own_broker(tmp_path / "broker", users=USERS, acl=ACL)
    yield broker
    broker.stop()


@pytest.mark.slow
def test_alerts_reach_the_alerts_topic_only_and_the_acl_keeps_them_from_the_pit(acl_broker, tmp_path):
    """A seeded run with a middle-card hole-carder (as tests/test_protect.py): each journaled ``Alert`` is
    published once on ``{prefix}/{table}/alerts`` with its seq, never on ``events``; surveillance reads it, the
    pit (the ACL of docs/floor.md) reads the events and not the alerts; ``floor watch`` lists it; it names a
    seat and a kind of card, no card."""
    secret = tmp_path / "floor.pass"
    secret.write_text(USERS[TABLE] + "\n")
    secret.chmod(0o600)
    config = _config(acl_broker.port, username=TABLE, password_file=secret)
    journal = tmp_path / "journal.db"
    players = [parse_spec("2:middle", True)] + [parse_spec(text, False) for text in
                                                 ("1:never_fold", "3:always_1x", "5:pair_3x", "6:erring:0.2")]
    surveillance, pit_reader = Reader(acl_broker.port, "surveillance"), Reader(acl_broker.port, "pit")
    pit = Pit()
    listener = Listener(dataclasses.replace(config.floor, username="surveillance", password_file=None), pit.take)
    listener.client.username_pw_set("surveillance", USERS["surveillance"])
    listener.open()
    service = Service(config, simulate=True, rounds=45, seed=3, journal_path=journal, out=io.StringIO(),
                      players=players, protect=True, parts=SERVICE_PARTS)
    try:
        run_watched(service, listener)
        surveillance.wait_for(lambda m: (f"crisscross/{TABLE}/status", b"offline", False) in m)
        pit_reader.wait_for(lambda m: (f"crisscross/{TABLE}/status", b"offline", False) in m)
    finally:
        surveillance.close()
        pit_reader.close()
    alerts = [r for r in read_records(journal) if r["type"] == "Alert"]
    assert [(a["data"]["seat"], a["data"]["card"]) for a in alerts] == [(2, "middle")]
    acknowledged = [r for r in read_records(journal) if r["type"] == "AlertAcknowledged"]
    name = topics.topic("crisscross", TABLE, "alerts")
    published = [json.loads(p) for t, p, _ in surveillance.messages if t == name]
    keep = ("seq", "time", "kind", "round", "type", "data")
    assert published == [{"table": TABLE, "record": {k: a[k] for k in keep}, "simulated": True}
                         for a in sorted(alerts + acknowledged, key=lambda r: r["seq"])]
    for reader in (surveillance, pit_reader):
        events = _events(reader.messages)
        assert len(events) > 100 and not any(e["record"]["type"].startswith("Alert") for e in events)
    assert not any(t == name for t, _, _ in pit_reader.messages)  # the ACL: the pit never reads alerts
    text = json.dumps(published)
    named = [c for c in DECK if re.search(rf"(?<![0-9A-Za-z]){c}(?![0-9A-Za-z])", text)]
    assert named == []  # a seat and a kind of card, never a card
    table = pit.tables[TABLE]
    assert table.alerts_heard == 1
    line = pit.render().splitlines()[-1]
    assert line.startswith(f"ALERT {TABLE}: seat 2 plays as if it saw the middle card (round {alerts[0]['data']['round_no']}")
    assert f"loss {alerts[0]['data']['loss']}" in line
    # the simulated supervisor, paged, acknowledges it (when the run lasts long enough after the alert)
    assert line.endswith(f"; acknowledged by {acknowledged[0]['data']['by']}" if acknowledged else
                         "; not acknowledged")


def test_a_wrong_password_is_named_as_the_brokers_refusal(acl_broker, tmp_path):
    """``floor watch`` with a user the broker does not let in: one line naming the broker and its refusal (its
    CONNACK's reason), exit 2, not a wait for a subscription that never comes."""
    from tests.cli_helpers import crisscross

    secret = tmp_path / "pit.pass"
    secret.write_text("not-the-password\n")
    secret.chmod(0o600)
    proc = crisscross("floor", "watch", "--broker", "127.0.0.1", "--port", str(acl_broker.port), "--username", "pit",
                      "--password-file", str(secret), "--for", "0")
    assert proc.returncode == 2 and proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"crisscross: broker 127.0.0.1:{acl_broker.port}: refused the connection: ")
    assert line.count("127.0.0.1") == 1 and ("authori" in line.lower() or "password" in line.lower())
