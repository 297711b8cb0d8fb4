"""Game recall on the control interface (``GET /recall``, controller/control/recall.py; docs/control.md "Game
recall") over real HTTP on loopback.

Sources: game recall of at least the last 10 rounds, every step in order (AGCO Standards 13.1.1-13.1.4, 25 CFR
547.8(a)(2); domain.md); supervisors only (domain.md, "Roles"); hole-card secrecy: no face-down card of a round
not yet closed leaves the table PC (domain.md), a seat's cards are turned at its settlement (NY 9 NYCRR
5324.39(e)(9)(i)), community cards at their reveals ((e)(4),(6),(8)). The cards dealt come from the stand-in
shoe's script (``CROSS``, ``HANDS``), an independent record of what lay face down.
"""

from __future__ import annotations

import base64
import json
import queue
import re

import pytest

from controller.control.recall import recalled
from controller.control.server import ControlConfig, ControlServer, public_record
from controller.journal.reader import read_records
from controller.journal.store import Journal
from controller.settings.control import parse_control_config
from controller.settings.files import ConfigError
from tests.round_helpers import antes
from tests.test_control import (CROSS, HANDS, PASSWORDS, Client, _operators, all_of, operators_file,  # noqa: F401
                                table)  # the fixtures: a running controller whose interface's recall reads its journal

#: The kinds of step game recall must show, each a journal record type (AGCO 13.1.1-13.1.4: bets per spot, cards
#: in dealing order, decisions, reveals, settlement; domain.md: faults and who cleared them, voids).
REGULATED_STEPS = ("RoundOpened", "WagersLocked", "StackDealt", "DecisionMade", "CardsRevealed", "SeatSettled",
                   "PayoutChecked", "MispayAccepted", "FaultRaised", "FaultCleared", "RoundVoided", "RoundClosed")


def _headers(user: str | None) -> dict[str, str]:
    if user is None:
        return {}
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{PASSWORDS[user]}".encode()).decode()}


def recall(client: Client, query: str = "", user: str | None = "sue") -> tuple[int, dict]:
    """``GET /recall{query}`` as ``user`` (None: without credentials): (status, answer)."""
    status, _, body = client.request("GET", "/recall" + query, headers=_headers(user))
    return status, json.loads(body)


def _cards_in(text: str, cards) -> set[str]:
    return {card for card in cards if re.search(rf"(?<![0-9A-Za-z]){card}(?![0-9A-Za-z])", text)}


def _step(client, action, until):
    assert client.act(action)[0] == 202
    return client.wait_for(until)


def test_recall_needs_a_supervisor(table):
    client, _, _ = table
    status, answer = recall(client, user=None)
    assert status == 401 and "credentials required" in answer["error"]
    assert recall(client, user="dan") == (403, {"error": "game recall needs a supervisor; user dan has the role "
                                                         "dealer"})
    assert recall(client, "?round=1", user="dan")[0] == 403
    status, answer = recall(client)
    assert status == 200 and answer == {"last": 10, "rounds": []}  # no round played yet


def test_an_unknown_round_is_404_saying_which_rounds_are_recalled(table):
    client, _, _ = table
    assert recall(client, "?round=1") == (404, {"error": "round 1: the journal has no round yet"})
    _step(client, "open_betting", lambda r: r["type"] == "ShuffleComplete")
    status, answer = recall(client, "?round=7")
    assert (status, answer) == (404, {"error": "round 7 is not in the journal (the screen recalls the last 10 "
                                               "rounds, 1 to 1)"})
    for query, says in (("?round=x", "round must be 0 to"), ("?round=-1", "round must be 0 to"),
                        ("?round=1&round=1", "round given more than once"), ("?seat=1", "unknown parameter")):
        status, answer = recall(client, query)
        assert status == 400 and says in answer["error"], query


def _journal_of_rounds(path, count: int) -> None:
    """A journal store with rounds 1 to ``count`` opened, locked and closed (the last one left open, its cross
    dealt face down)."""
    journal = Journal(path)
    try:
        for n in range(1, count + 1):
            journal.commit([("record", "RoundOpened", {"round_no": n, "test": False}, n),
                            ("record", "WagersLocked", {"seats": [{"seat": 1, "wagers": antes(500)}]}, n)])
            if n < count:
                journal.commit([("record", "RoundClosed", {"totals": {"wagered": 1000, "paid": 0}}, n)])
            else:
                journal.commit([("record", "StackDealt", {"stack": 0, "seat": None, "cards": list(CROSS)}, n)])
    finally:
        journal.close()


@pytest.fixture
def recall_server(tmp_path, operators_file):
    """A server whose recall reads a journal of 12 rounds (``_journal_of_rounds``), with the shipped bound."""
    _journal_of_rounds(tmp_path / "journal.db", 12)
    server = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators_file), queue.Queue(), tmp_path / "journal.db")
    server.start()
    yield server
    server.stop()


def test_recall_reaches_the_last_ten_rounds_and_no_further(recall_server):
    client = Client(recall_server)
    status, answer = recall(client)
    assert status == 200 and answer["last"] == 10
    assert [r["round"] for r in answer["rounds"]] == list(range(12, 2, -1))  # newest first, ten of them
    assert [r["status"] for r in answer["rounds"]] == ["open"] + ["closed"] * 9
    assert recall(client, "?round=3")[0] == 200
    status, answer = recall(client, "?round=2")
    assert (status, answer) == (404, {"error": "round 2 is older than the rounds recalled here (the screen recalls "
                                               "the last 10 rounds, 3 to 12); read it with crisscross recall or "
                                               "crisscross journal export"})
    status, answer = recall(client, "?round=0")  # no such round, ever
    assert (status, answer["error"]) == (404, "round 0 is not in the journal: rounds are numbered from 1 (the screen "
                                              "recalls the last 10 rounds, 3 to 12)")
    status, answer = recall(client, "?round=12")  # open: its cross is face down
    assert status == 200 and answer["filtered"] and answer["status"] == "open"
    assert [s["type"] for s in answer["steps"]] == ["RoundOpened", "WagersLocked"]
    assert not _cards_in(json.dumps(answer), CROSS)
    assert recall_server.events.empty()  # a recall queues nothing


def test_a_server_without_a_journal_says_recall_needs_it(operators_file):
    server = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators_file), queue.Queue())
    server.start()
    try:
        status, answer = recall(Client(server))
    finally:
        server.stop()
    assert (status, answer) == (503, {"error": "game recall needs the journal: this interface was started without "
                                               "one"})


@pytest.mark.parametrize(("value", "says"), [(9, "below the minimum 10"), (501, "above the maximum 500"),
                                             ("ten", "expected an integer")])
def test_the_recall_bound_is_checked(tmp_path, value, says):
    with pytest.raises(ConfigError, match=re.escape(says)):
        parse_control_config(tmp_path / "table.yaml", {"recall": value})
    assert parse_control_config(tmp_path / "table.yaml", {"recall": 25}).recall == 25


def test_a_round_not_yet_closed_shows_no_face_down_card_and_a_closed_one_shows_every_step(table):
    client, devices, journal = table
    _step(client, "open_betting", all_of("ShuffleComplete", "SpotsSnapshot"))
    for seat, wagers in {1: antes(500, 100), 3: antes(500), 5: antes(1000)}.items():
        for spot, amount in wagers.items():
            devices.put_chips(seat, spot, amount)
    opened = _step(client, "no_more_bets", lambda r: r["type"] == "Display" and "Across decision" in r["data"]["text"])
    number = opened["round"]
    dealt = set(CROSS) | {card for cards in HANDS.values() for card in cards}
    recalls = []
    status, answer = recall(client, f"?round={number}")  # dealt, nothing turned
    recalls.append(answer)
    assert status == 200 and answer["status"] == "open" and answer["filtered"] is True
    assert {s["type"] for s in answer["steps"]} >= {"RoundOpened", "WagersLocked"}
    decisions = {"across": {1: 1500, 5: 1000}, "down": {1: 500, 5: 3000}, "middle": {1: 1500, 5: 2000}}
    turned: set[str] = set()
    for name in ("across", "down", "middle"):
        for seat, amount in decisions[name].items():
            devices.put_chips(seat, name, amount)
        _step(client, "confirm", lambda r: r["type"] == "Display" and r["data"]["text"].startswith("Turn the"))
        revealed = _step(client, "reveal", lambda r: r["type"] in ("CardsRevealed", "RoundClosed"))
        if revealed["type"] == "CardsRevealed":
            turned |= set(revealed["data"]["cards"])
            answer = recall(client, f"?round={number}")[1]
            recalls.append(answer)
            if answer["status"] == "open":  # only what the table turned so far: reveals, seats settled in action
                settled = {s["data"]["seat"] for s in answer["steps"] if s["type"] == "SeatSettled"} - {3}
                shown = _cards_in(json.dumps(answer), dealt)
                assert shown <= turned.union(*(HANDS[seat] for seat in settled)), sorted(shown - turned)
                assert not _cards_in(json.dumps(answer), HANDS[3])  # folded at the across decision: never turned
    assert not _cards_in(json.dumps(recalls[0]), dealt)  # nothing was turned at the first recall
    assert sum(a["status"] == "open" for a in recalls) >= 3  # dealt, across and down turned: recalled while open
    client.wait_for(lambda r: r["type"] == "RoundClosed")

    status, answer = recall(client, f"?round={number}")
    assert status == 200 and answer["status"] == "closed" and answer["filtered"] is False
    records = [r for r in read_records(journal.path) if r["round"] == number]
    regulated = [r["seq"] for r in records if r["type"] in REGULATED_STEPS and r["kind"] == "record"]
    seqs = [s["seq"] for s in answer["steps"]]
    assert seqs == sorted(seqs) and set(regulated) <= set(seqs)  # every step of the round, in journal order
    by_seq = {r["seq"]: r for r in records}
    assert all(by_seq[s["seq"]]["type"] == s["type"] and by_seq[s["seq"]]["data"] == s["data"]
               for s in answer["steps"])  # each step is its journal record
    stacks = [s for s in answer["steps"] if s["type"] == "StackDealt"]
    assert [tuple(s["data"]["cards"]) for s in stacks] == [CROSS, HANDS[1], HANDS[3], HANDS[5]]  # dealing order
    assert all(" ".join(s["data"]["cards"]) in s["text"] for s in stacks)
    assert '"prev":' not in json.dumps(answer) and '"hash":' not in json.dumps(answer)
    listed = recall(client)[1]["rounds"]
    assert listed[0]["round"] == number and listed[0]["status"] == "closed"


@pytest.mark.parametrize(("type_", "data"), [
    ("OperatorAction", {"action": "void_round", "user": "sue", "role": "supervisor", "reason": "seat 4 Kd exposed",
                        "code": "misdeal", "round": 3, "state": "across_decision", "stale": "", "answers": None}),
    ("SeatHeld", {"seat": 4, "by": "sue", "role": "supervisor", "reason": "seat 4 Kd exposed",
                  "wagers": antes(500)}),
    ("MispayAccepted", {"seat": 4, "by": "sue", "role": "supervisor", "reason": "seat 4 Kd exposed", "short": 100,
                        "over": 0, "differences": [{"spot": "across", "expected": 200, "seen": 100,
                                                     "difference": -100}]}),
    ("DealingModeChanged", {"mode": "manual", "by": "sue", "role": "supervisor", "reason": "seat 4 Kd exposed"}),
    ("RoundVoided", {"by": "sue", "role": "supervisor", "code": "misdeal", "reason": "seat 4 Kd exposed",
                     "seats": [{"seat": 4, "wagers": antes(500)}], "totals": {"returned": 1000}}),
])
def test_a_round_not_yet_closed_reads_without_the_free_text_the_filter_keeps_back(type_, data):
    """A supervisor's free text may name a card (docs/control.md, "Hole-card secrecy"): the recall of a round not
    yet closed reads each step without it, and never fails for its absence."""
    record = {"seq": 7, "time": "2026-12-02T00:00:00.000+00:00", "kind": "record", "round": 3, "type": type_,
              "data": data}
    answer = recalled(3, [record], 10, public_record)
    assert answer["filtered"] == (type_ != "RoundVoided")  # a void ends the round: it is shown whole
    text = json.dumps(answer)
    assert ("Kd" in text) == (type_ == "RoundVoided") and answer["steps"][0]["text"]


def test_recall_writes_amounts_as_the_screen_does_and_the_command_line_keeps_minor_units():
    """docs/control.md, "The dealer's screen": one money format on the screen, the recall page's steps too; the
    command line's recall prints minor units as before."""
    from controller.control.recall import screen_money
    from controller.journal.recall import round_steps

    records = [{"seq": 1, "type": "DecisionMade", "kind": "record", "time": "2026-12-04T10:00:00.000+00:00",
                "data": {"decision": "across", "seat": 3, "action": "bet", "amount": 123450}},
               {"seq": 2, "type": "RoundClosed", "kind": "record", "time": "2026-12-04T10:00:01.000+00:00",
                "data": {"totals": {"wagered": 2000, "player_net": -1500}}}]
    assert [s["text"] for s in round_steps(records, screen_money)] == [
        "across decision, seat 3: bet $1,234.50", "round closed: wagered $20.00, player_net -$15.00"]
    assert [s["text"] for s in round_steps(records)] == [
        "across decision, seat 3: bet 123450", "round closed: wagered 2000, player_net -1500"]
