"""Live player rating (``run --rating``, controller/service/rating_live.py): ``SessionRated`` inputs journaled
at each session's end and every few rounds, ``GET /sessions`` for supervisors, the floor's ``sessions`` topic.

Oracles: ``crisscross rating``'s reading of the same journal afterwards (the sessions rebuilt from the records
alone), the secrecy filter's rule that no card leaves the journal, and a real Mosquitto's messages checked one
for one against the journal's records.
"""

from __future__ import annotations

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
from tests.test_control import _operators, bare_server, get_as, operators_file  # noqa: F401 - fixtures
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
    return read_records(journal), json.loads(offline.stdout)["sessions"]


def test_each_session_is_rated_in_the_journal_as_the_journal_alone_rates_it(rated):
    records, offline = rated
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


def test_a_session_rating_is_public_and_names_no_card(rated):
    records, _ = rated
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
