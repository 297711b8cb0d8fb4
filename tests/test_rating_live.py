"""Live player rating (``run --rating``, controller/service/rating_live.py): ``SessionRated`` inputs journaled
at each session's end and every few rounds, ``GET /sessions`` for supervisors, the floor's ``sessions`` topic.

Oracles: ``crisscross rating``'s reading of the same journal afterwards (the sessions rebuilt from the records
alone), the secrecy filter's rule that no card leaves the journal, and a real Mosquitto's messages checked one
for one against the journal's records.
"""

from __future__ import annotations

import base64
import io
import json
import re
import subprocess
import sys
from fractions import Fraction

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.control.server import public_record
from controller.floor import topics
from controller.journal.reader import read_records
from controller.service.assembly import Service
from controller.journal.recall import RoundRecord
from controller.journal.sessions import SessionTracker
from controller.round.inputs import SeatRating
from tests.test_control import PASSWORDS, Client, _operators, bare_server, get_as, operators_file  # noqa: F401
from tests.test_floor import TABLE, Collector, _config

CARD = re.compile(r"\b[2-9TJQKA][cdhs]\b")


@pytest.fixture(scope="module")
def rated(tmp_path_factory):
    journal = tmp_path_factory.mktemp("rated") / "journal.db"
    run = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rating", "--rounds", "24",
                          "--seed", "3", "--quiet", "--journal", str(journal), "--player-strategy", "2:always_1x"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    offline = subprocess.run([sys.executable, "-m", "controller", "rating", "--journal", str(journal), "--format",
                              "json"], capture_output=True, text=True, timeout=300)
    assert offline.returncode == 0, offline.stderr
    return read_records(journal), json.loads(offline.stdout)["sessions"], run.stderr


def test_each_session_is_rated_in_the_journal_as_the_journal_alone_rates_it(rated):
    records, offline, _ = rated
    live = [r["data"] for r in records if r["type"] == "SessionRated"]
    assert live, "no SessionRated journaled"
    by_start = {(s["seat"], s["first_round"]): s for s in offline}
    for data in live:
        session = by_start[(data["seat"], data["first_round"])]
        if data["ended"] or data["last_round"] == session["last_round"]:
            # rated over the same rounds as crisscross rating reads them from the journal afterwards
            assert data["rounds"] == session["rounds"] and data["actual_win"] == session["actual_win"]
            assert {w: a for w, a in data["handle"].items() if a} == {w: a for w, a in session["handle"].items() if a}
            assert Fraction(data["theoretical_win"]) == Fraction(session["theoretical_win_exact"])
            assert data["ended"] == (not session["open"])
        else:  # every few rounds of an open session: a part of it
            assert data["rounds"] < session["rounds"] and data["rounds"] % 10 == 0
    # every session that ended before the run's last rounds was rated when it ended
    ended = {(s["seat"], s["first_round"]) for s in offline if not s["open"]}
    assert ended == {(d["seat"], d["first_round"]) for d in live if d["ended"]}


def test_the_ratings_setup_is_over_before_any_device_so_no_input_waits_behind_it(rated):
    """The rating's setup (compiled code loaded, 169 classes' values built) holds the interpreter for seconds: the
    service finishes it before it starts the devices, so the controller is never behind its inputs at the
    start (``controller.service.eventqueue`` warns when it is)."""
    _, _, log = rated
    assert "behind its inputs" not in log


def test_a_session_rating_is_public_and_names_no_card(rated):
    records, _, _ = rated
    for record in records:
        if record["type"] == "SessionRated":
            public = public_record(record)
            assert public is not None and public["data"] == record["data"]
            assert not CARD.search(json.dumps(public["data"]))


def test_the_sessions_are_shown_to_a_supervisor_only(bare_server):  # noqa: F811 - the fixture
    def get(user=None):
        return get_as(bare_server, "/sessions", user)

    status, answer = get("sue")
    assert status == 503 and "--rating" in answer["error"]  # a service without the rating
    bare_server.publish_sessions(({"seat": 3, "rounds": 4, "actual_win": 1200, "theoretical_win": 81.5},))
    assert get("sue") == (200, {"sessions": [{"seat": 3, "rounds": 4, "actual_win": 1200, "theoretical_win": 81.5}]})
    status, answer = get("dan")
    assert status == 403 and "needs a supervisor" in answer["error"]
    assert get()[0] == 401


def test_the_floor_gets_each_session_rating_on_its_own_topic(mosquitto, tmp_path):
    journal = tmp_path / "journal.db"
    floor = Collector(mosquitto.port)
    service = Service(_config(mosquitto.port), simulate=True, rounds=12, seed=3, journal_path=journal,
                      out=io.StringIO(), rating=True, parts=SERVICE_PARTS)
    try:
        try:
            assert service.run() == 0
        finally:
            service.close()
        floor.wait_for(lambda m: (f"crisscross/{TABLE}/status", b"offline", False) in m)
    finally:
        floor.close()
    journaled = [r for r in read_records(journal) if r["type"] == "SessionRated"]
    topic = topics.topic("crisscross", TABLE, "sessions")
    with floor.lock:
        messages = [json.loads(payload) for t, payload, _ in floor.messages if t == topic]
    assert journaled and [m["record"]["seq"] for m in messages] == [r["seq"] for r in journaled]
    assert all(m["table"] == TABLE and m["record"]["data"] == r["data"] for m, r in zip(messages, journaled))


def _post(server, body, user="dan"):
    token = base64.b64encode(f"{user}:{PASSWORDS[user]}".encode()).decode()
    status, _, answer = Client(server).request("POST", "/sessions", json.dumps(body).encode(),
                                               {"Content-Type": "application/json", "Authorization": f"Basic {token}"})
    return status, json.loads(answer)


def test_a_dealer_rates_a_seat_and_the_action_is_queued_as_an_input(bare_server):  # noqa: F811 - the fixture
    status, answer = _post(bare_server, {"action": "rate_seat", "seat": 4, "player": "CARD-0042"})
    assert status == 202 and answer["queued"]["role"] == "dealer"
    assert bare_server.events.get_nowait() == SeatRating("rate_seat", 4, "CARD-0042", "dan", "dealer")
    assert _post(bare_server, {"action": "end_session", "seat": 4}, "sue")[0] == 202
    assert bare_server.events.get_nowait() == SeatRating("end_session", 4, "", "sue", "supervisor")


@pytest.mark.parametrize("body, message", [
    ({"action": "rate_seat", "seat": 4}, "rate_seat needs a player"),
    ({"action": "rate_seat", "seat": 4, "player": "a b"}, "rate_seat needs a player"),
    ({"action": "rate_seat", "seat": 4, "player": "x" * 33}, "rate_seat needs a player"),
    ({"action": "rate_seat", "seat": 7, "player": "P1"}, "seat must be one of the table's seats"),
    ({"action": "rate_seat", "seat": True, "player": "P1"}, "seat must be one of the table's seats"),
    ({"action": "unrate_seat", "seat": 2, "player": "P1"}, "unrate_seat takes no player"),
    ({"action": "void_round", "seat": 2}, "unknown action"),
    ({"action": "end_session", "seat": 2, "why": "x"}, "unknown key(s): why"),
])
def test_a_bad_rating_action_is_named_and_nothing_is_queued(bare_server, body, message):  # noqa: F811
    status, answer = _post(bare_server, body)
    assert status == 400 and message in answer["error"]
    assert bare_server.events.empty()


def _rated_round(number, seats):
    rnd = RoundRecord(number, wagers={s: {"ante_across": 100, "ante_down": 100} for s in seats},
                      times=["2026-12-04T10:00:00.000+00:00", "2026-12-04T10:00:05.000+00:00"])
    rnd.totals, rnd.settlements = {"wagered": 0}, {s: {"net": -200} for s in seats}
    return rnd


def test_a_rated_player_who_changes_seats_keeps_one_session():
    tracker = SessionTracker()
    tracker.add(_rated_round(1, {2}))
    tracker.rate("rate_seat", 2, "P-7")
    tracker.add(_rated_round(2, {2}))
    tracker.add(_rated_round(3, {5}))  # sat down at seat 5 and played before the dealer moved the card
    tracker.rate("rate_seat", 5, "P-7")
    tracker.add(_rated_round(4, {5}))
    (session,) = tracker.sessions()
    assert session.player == "P-7" and session.seats == [2, 5] and session.seat == 5
    assert [(r.round_no, r.seat) for r in session.rounds] == [(1, 2), (2, 2), (3, 5), (4, 5)]
    tracker.rate("unrate_seat", 5)
    assert session.player == ""
    assert tracker.rate("end_session", 5) == [session] and not session.open


def test_a_card_given_before_the_first_wager_names_the_next_session_and_another_player_ends_the_last():
    tracker = SessionTracker()
    tracker.rate("rate_seat", 3, "A-1")
    tracker.add(_rated_round(1, {3}))
    ended = tracker.rate("rate_seat", 3, "B-2")  # another player at seat 3: A-1's session ends there
    tracker.add(_rated_round(2, {3}))
    assert [(s.player, s.open, [r.round_no for r in s.rounds]) for s in tracker.sessions()] == [
        ("A-1", False, [1]), ("B-2", True, [2])]
    assert ended[0].player == "A-1"


def test_crisscross_rating_reads_the_rating_actions_in_journal_order(tmp_path):
    from controller.journal.sessions import sessions_of

    def record(seq, type_, data, round_no):
        return {"seq": seq, "type": type_, "data": data, "round": round_no, "time": "2026-12-04T10:00:00.000+00:00"}

    records = [record(1, "SeatRating", {"action": "rate_seat", "seat": 1, "player": "Z-9"}, None),
               record(2, "RoundOpened", {"round_no": 1}, 1),
               record(3, "WagersLocked", {"seats": [{"seat": 1, "wagers": {"ante_across": 5, "ante_down": 5}}]}, 1),
               record(4, "SeatSettled", {"seat": 1, "settlement": {"net": -10}}, 1),
               record(5, "RoundClosed", {"totals": {"wagered": 10}}, 1)]
    (session,) = sessions_of(records)
    assert session.player == "Z-9" and [r.round_no for r in session.rounds] == [1]
