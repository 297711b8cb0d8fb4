"""The pit page (``crisscross floor serve``, controller/floor/serve.py and serve_data.py, docs/backoffice.md "The pit
page") against a real PostgreSQL started by the tests (tests/postgres.py: skipped without it, failed under CI),
its store filled with two real simulated tables' public records as the floor's store writes them.

Oracles: ``crisscross meters`` on each table's own journal (rounds, drop and win of the gaming day: every record
of the runs falls in it), ``crisscross floor report`` as a process of its own, the journals' records counted here
(rounds per hour, mispays, faults, open rated sessions), the order of a round (NY 9 NYCRR 5324.39(e)) for its
state, the operators file's rules of the control interface (docs/control.md) for the sign-in, and the cards the
journal dealt (``StackDealt``) for the secrecy: no card the table had not turned is anywhere in an answer.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import http.client
import json
import re
import signal
import ssl
import subprocess
import sys
import threading
from fractions import Fraction

import psycopg
import pytest

from controller.floor import serve_data
from controller.floor.periods import PERIODS
from controller.floor.serve import ServeConfig, check_config
from controller.floor.serve_data import LABELS, PitData, status
from controller.settings.files import ConfigError
from tests.cli_helpers import crisscross
from tests.pit_helpers import (day_start_for, get_json, meters_at, operators_file, pit_served, public, request,
                               simulated_journal, store)
from tests.test_floor import _turned
from tests.postgres import wait_until
from tests.test_floor_store import postgres  # noqa: F401 - the fixture

RATED, FOLDING = "CC-07", "CC-09"  # the tables' ids in the store


@pytest.fixture(scope="module")
def tables(postgres, tmp_path_factory):  # noqa: F811 - the fixture
    """Two simulated tables: ``RATED`` (12 rounds, rated, with mispays made and caught) stored whole, and
    ``FOLDING`` (6 rounds, players folding at random) stored up to its round 3's across reveal: ``(dsn, {table:
    (journal, records, public records stored)}, the gaming day's start)``."""
    folder = tmp_path_factory.mktemp("pit")
    rated = simulated_journal(folder / "rated.db", seed=7, rounds=12, rating=True, payout_errors=0.4)
    folding = simulated_journal(folder / "folding.db", seed=21, rounds=6, mistakes=0.5)
    dsn = postgres.create("pit")
    cut = next(i for i, r in enumerate(public(folding))
               if r["type"] == "CardsRevealed" and r["round"] == 3 and r["data"]["step"] == "across")
    stored = {RATED: public(rated), FOLDING: public(folding)[:cut + 1]}
    for name, records in stored.items():
        store(dsn, name, records)
    return dsn, {RATED: (folder / "rated.db", rated, stored[RATED]),
                 FOLDING: (folder / "folding.db", folding, stored[FOLDING])}, day_start_for(rated + folding)


@pytest.fixture
def served(tables, tmp_path):
    dsn, _, start = tables
    with pit_served(dsn, tmp_path, start) as server:
        yield server


def _row(pit: dict, table: str) -> dict:
    (row,) = [r for r in pit["tables"] if r["table"] == table]
    return row


# ---------------------------------------------------------------------------------------------- the figures
def _counted(records: list[dict]) -> dict:
    """What the pit shows of a journal's records, counted here from the records themselves."""
    ends = [dt.datetime.fromisoformat(r["time"]) for r in records if r["type"] in ("RoundClosed", "RoundVoided")]
    caught = [r for r in records if r["type"] == "PayoutChecked" and r["data"]["differences"]]
    accepted = [r for r in records if r["type"] == "MispayAccepted"]
    latest = {}
    for r in records:
        if r["type"] == "SessionRated":
            latest[(r["data"]["player"] or r["data"]["seat"], r["data"]["first_round"])] = r["data"]["ended"]
    seconds = (ends[-1] - ends[0]).total_seconds() if len(ends) > 1 else 0
    return {"rounds_per_hour": round((len(ends) - 1) * 3600 / seconds, 1) if seconds > 0 else None,
            "faults": sum(r["type"] == "FaultRaised" for r in records),
            "mispays": {kind: [len(found), sum(abs(d["difference"]) for r in found for d in r["data"]["differences"])]
                        for kind, found in (("caught", caught), ("accepted", accepted))},
            "sessions": sum(not ended for ended in latest.values())}


def test_every_tables_row_is_the_meters_and_the_reports_figures_of_the_gaming_day(tables, served):
    dsn, journals, start = tables
    pit = get_json(served, "/api/pit")
    assert [r["table"] for r in pit["tables"]] == [RATED, FOLDING] and pit["more_tables"] == 0
    assert pit["store"] == {"ok": True} and pit["day_start"] == start.strftime("%H:%M")
    for name, (journal, records, stored) in journals.items():
        row = _row(pit, name)
        meters = meters_at(journal, stored[-1]["seq"])
        assert (row["rounds"], row["drop"], row["win"]) == (meters["rounds"], meters["drop"], meters["win"])
        report = get_json(served, f"/api/report?table={name}&period=day")
        assert (report["rounds"], report["drop"], report["win"]) == (row["rounds"], row["drop"], row["win"])
        shown = crisscross("floor", "report", "--dsn", dsn, "--table", name, "--day-start", start.strftime("%H:%M"),
                           "--jurisdiction", "ny", "--format", "json", "--day", pit["gaming_day"])
        assert shown.returncode in (0, 1), shown.stderr
        assert json.loads(shown.stdout) == report  # the page's report is the command's, figure for figure
        kept = [r for r in records if r["seq"] <= stored[-1]["seq"]]
        assert {k: row[k] for k in ("rounds_per_hour", "faults", "mispays", "sessions")} == _counted(kept)
        assert row["store"] == {"last_seq": stored[-1]["seq"], "held": 0, "unread": 0, "open_gaps": 0, "behind": 0}
    rated = _row(pit, RATED)
    assert rated["mispays"]["caught"][0] >= 3 and rated["sessions"] > 0 and rated["drop"] > 0  # not a weak run
    assert (rated["round"], rated["state"]) == (12, "closed")
    assert (rated["status"], rated["why"]) == ("offline", "stopped")  # it journaled ServiceStopped at its end
    folding = _row(pit, FOLDING)
    assert (folding["round"], folding["state"], folding["status"]) == (3, "across turned", "online")


def test_the_page_follows_new_records_as_the_store_takes_them(tables, tmp_path):
    """A new table in its own database, stored a part at a time: each reading shows the round's last step in
    the order of a round (NY 9 NYCRR 5324.39(e)) and the meters as of the last record stored."""
    dsn, journals, start = tables
    own = dsn.rsplit("/", 1)[0] + "/pit_steps"
    with psycopg.connect(dsn.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute("CREATE DATABASE pit_steps")
    journal, records, _ = journals[RATED]
    published = public(records)
    data = PitData(start)
    steps = [("RoundOpened", "betting"), ("WagersLocked", "wagers locked"), ("DecisionMade", "across decided"),
             ("CardsRevealed", "across turned"), ("DecisionMade", "down decided"), ("CardsRevealed", "down turned"),
             ("DecisionMade", "middle decided"), ("CardsRevealed", "middle turned"), ("SeatSettled", "settlement"),
             ("RoundClosed", "closed")]
    done = 0
    for kind, state in steps:
        at = next(i for i, r in enumerate(published) if i >= done and r["type"] == kind and r["round"] == 2)
        store(own, "T-1", published[done:at + 1])
        done = at + 1
        with psycopg.connect(own, autocommit=True) as conn:
            row = _row(data.poll(conn), "T-1")
        meters = meters_at(journal, published[at]["seq"])
        assert (row["round"], row["state"]) == (2, state), kind
        assert (row["rounds"], row["drop"], row["win"]) == (meters["rounds"], meters["drop"], meters["win"]), kind


def test_a_record_the_counts_cannot_read_is_logged_once_and_every_table_and_figure_goes_on(tables, caplog):
    """A table's ``PayoutChecked`` whose difference is text: the poll goes on (no store error, a new server's
    first reading too), the record is logged once and left out of that table's mispays, and its other figures and
    the other table's are the records' own, counted here."""
    dsn, journals, start = tables
    own = dsn.rsplit("/", 1)[0] + "/pit_malformed"
    with psycopg.connect(dsn.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute("CREATE DATABASE pit_malformed")
    rated = list(journals[RATED][2])
    at = next(i for i, r in enumerate(rated) if r["type"] == "PayoutChecked" and r["data"]["differences"])
    rated[at] = {**rated[at], "data": {**rated[at]["data"], "differences": [{"difference": "abc"}]}}
    store(own, RATED, rated)
    store(own, FOLDING, journals[FOLDING][2])
    poller = serve_data.Poller(own, PitData(start), 60)
    with caplog.at_level("WARNING", logger="controller.floor.serve_data"):
        poller.first()  # what ``floor serve`` does at its start
        poller.first()  # read again: the record is not said twice
    try:
        pit = json.loads(poller.latest)
    finally:
        poller.stop()
    assert pit["store"] == {"ok": True} and [r["table"] for r in pit["tables"]] == [RATED, FOLDING]
    assert caplog.text.count("data.differences[0].difference") == 1
    assert f"table '{RATED}', record {rated[at]['seq']}" in caplog.text
    assert poller.data.tables[RATED].summary.malformed == 1
    for name, records in ((RATED, rated[:at] + rated[at + 1:]), (FOLDING, journals[FOLDING][2])):
        row = _row(pit, name)
        assert {k: row[k] for k in ("rounds_per_hour", "faults", "mispays", "sessions")} == _counted(records), name
    assert _row(pit, RATED)["mispays"]["caught"][0] >= 2 and _row(pit, RATED)["state"] == "closed"


def test_one_clear_clears_every_fault_raised_before_it_as_the_round_core_journals_it():
    """Three ``link_lost`` faults of the shoe while dealing, cleared by one supervisor action (one
    ``FaultCleared`` naming the three causes, ``controller.round.faults``), then the dealing goes on: the state
    is no longer ``fault``; a fault raised after the clear stands again. The round's records are the round
    core's own outputs, as the table publishes them."""
    from controller.round import commands as cmd
    from drivers import events as ev
    from tests.round_helpers import TableDriver, antes, of_type, ready

    driver = TableDriver()
    driver.start()
    driver.open_betting()
    driver.lock({1: antes(500)})
    marks = {"locked": len(driver.outputs)}
    for lost in range(3):
        driver.send(ev.DeviceFault("shoe", "link_lost", f"link lost ({lost})"))
    driver.send(ready("shoe"))
    driver.send(ev.ShoeLastDispense(0, ()))  # the shoe answers what it last did: nothing
    marks["faults"] = len(driver.outputs)
    driver.send(ev.SupervisorKey(True, "SUP-2"))
    (cleared,) = of_type(driver.press("clear_fault"), cmd.FaultCleared)
    assert cleared.causes == ("link_lost",) * 3 and len(of_type(driver.outputs, cmd.FaultRaised)) == 3
    marks["cleared"] = len(driver.outputs)
    driver.deal(("As", "Ks", "Qs", "Js", "Ts"), {1: ("2c", "3d")})
    assert of_type(driver.outputs[marks["cleared"]:], cmd.StackDealt)
    marks["dealt"] = len(driver.outputs)
    driver.send(ev.DeviceFault("shoe", "jam", "a card stuck"))
    marks["again"] = len(driver.outputs)

    def state(upto: int) -> str:
        outputs = [o for o in driver.outputs[:upto] if dataclasses.is_dataclass(o)]
        records = public([{"seq": n, "time": "2026-03-01T10:00:00+00:00",
                           "kind": "command" if isinstance(o, cmd.Dispense) else "record", "round": 1,
                           "type": type(o).__name__, "data": dataclasses.asdict(o)} for n, o in enumerate(outputs, 1)])
        return serve_data.round_state(records, 1)

    assert [state(marks[k]) for k in ("locked", "faults", "cleared", "dealt", "again")] == [
        "wagers locked", "fault", "wagers locked", "wagers locked", "fault"]


def test_a_table_whose_last_record_is_older_than_the_window_is_offline_and_says_why():
    now = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.timezone.utc)
    at = lambda minutes: now - dt.timedelta(minutes=minutes)  # noqa: E731
    assert status((7, at(4), "SpotChanged"), False, now, 300) == ("online", None)
    assert status((7, at(6), "SpotChanged"), False, now, 300) == ("offline", "silent")
    assert status((7, at(0), "SignificantEvent"), True, now, 300) == ("offline", "stopped")
    assert status(None, False, now, 300) == ("offline", "no records")


def test_a_kept_status_decides_whatever_the_age_of_the_latest_record():
    """docs/backoffice.md, "The pit page": the table's own status first; the journal's ServiceStopped tells a
    clean stop from the broker's last will (both publish ``offline``)."""
    now = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.timezone.utc)
    old, fresh = (7, now - dt.timedelta(hours=3), "SpotChanged"), (7, now, "SpotChanged")
    assert status(old, False, now, 300, "online") == ("online", None)  # idle: nothing journaled for hours
    assert status(None, False, now, 300, "online") == ("online", None)
    assert status(old, True, now, 300, "offline") == ("offline", "stopped")
    assert status(fresh, False, now, 300, "offline") == ("offline", "lost")  # the will, however fresh the record
    assert status(old, False, now, 300, None) == ("offline", "silent")  # none kept: the records' rule
    with pytest.raises(ValueError, match="'maybe': expected online or offline"):
        status(fresh, False, now, 300, "maybe")


def test_a_new_gaming_day_starts_every_count_again(tables):
    dsn, _, start = tables
    tomorrow = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    data = PitData(start, clock=lambda: tomorrow)
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = _row(data.poll(conn), RATED)
    assert (row["rounds"], row["drop"], row["win"], row["sessions"], row["mispays"]["caught"]) == (0, 0, 0, 0, [0, 0])
    assert (row["round"], row["state"], row["status"], row["why"]) == (12, "closed", "offline", "stopped")


def test_a_store_that_goes_away_is_said_on_the_page_with_the_last_figures_and_read_again_when_back(
        postgres, tables, served):  # noqa: F811 - the fixture
    shown = _row(get_json(served, "/api/pit"), RATED)
    postgres.stop()
    try:
        pit = wait_until(lambda: (p := get_json(served, "/api/pit")) and not p["store"]["ok"] and p, 60,
                         "the page saying the store cannot be read")
        assert pit["store"]["error"] and pit["store"]["since"]
        assert {k: v for k, v in _row(pit, RATED).items() if k not in ("age_seconds", "status", "why")} == \
            {k: v for k, v in shown.items() if k not in ("age_seconds", "status", "why")}
    finally:
        postgres.start()
    wait_until(lambda: get_json(served, "/api/pit")["store"]["ok"], 60, "the page reading the store again")


# ---------------------------------------------------------------------------------------------- the report
def test_each_periods_report_and_plot_are_the_commands(tables, served, tmp_path):
    dsn, _, start = tables
    day = get_json(served, "/api/pit")["gaming_day"]
    for period in PERIODS:
        report = get_json(served, f"/api/report?table={RATED}&period={period}")
        plot = tmp_path / f"{period}.svg"
        shown = crisscross("floor", "report", "--dsn", dsn, "--table", RATED, "--day-start", start.strftime("%H:%M"),
                           "--jurisdiction", "ny", "--format", "json", "--period", period, "--day", day,
                           "--plot", plot)
        assert json.loads(shown.stdout) == report, period
        status_, headers, body = request(served, f"/api/plot.svg?table={RATED}&period={period}")
        assert status_ == 200 and headers["content-type"].startswith("image/svg+xml")
        assert body.decode() == plot.read_text() and b"<polyline class=\"actual\"" in body
    assert get_json(served, f"/api/report?table={RATED}&period=lifetime&day={day}") == \
        get_json(served, f"/api/report?table={RATED}&period=lifetime")
    shown = [field["key"] for field in LABELS["report"]]
    assert set(report) - set(shown) == {"table", "period", "gaming_day", "day_start", "begin", "end"}
    assert set(LABELS["periods"]) == set(PERIODS)
    assert Fraction(report["theoretical_exact"])  # the exact figure is shown as the report gives it


def test_requests_the_report_does_not_take_are_refused_and_named(served):
    for path, code, says in [(f"/api/report?table={RATED}&period=week", 400, "period must be one of"),
                             (f"/api/report?table={RATED}&day=15-03-2026", 400, "day must be a date"),
                             (f"/api/report?table={'T' * 129}", 400, "table must be"),
                             ("/api/report?table=CC-99", 404, "table CC-99: not in the store"),
                             ("/api/plot.svg?table=CC-99", 404, "not in the store"),
                             (f"/api/report?table={RATED}&format=csv", 400, "unknown parameter(s): format"),
                             ("/api/pit?x=1", 400, "unknown parameter"), ("/api/tables", 404, "no such path")]:
        found, _, body = request(served, path)
        assert found == code and says in json.loads(body)["error"], (path, found, body)
    found, headers, _ = request(served, "/api/pit", method="POST")
    assert found == 405 and headers["allow"] == "GET"


def test_report_readings_beyond_the_bound_are_refused_at_once(tables, tmp_path):
    """With one reading allowed and one held on the report's thread, another is answered 503 at once."""
    dsn, _, start = tables
    release, entered = threading.Event(), threading.Event()
    real = serve_data.connect

    def held(text):
        entered.set()
        assert release.wait(60), "the test never released the reading"
        return real(text)

    with pit_served(dsn, tmp_path, start) as server:
        server.reports.most = 1
        server.reports._places = threading.BoundedSemaphore(1)
        server.reports._connect = held
        first: list = []
        reader = threading.Thread(target=lambda: first.append(request(server, f"/api/report?table={RATED}")))
        reader.start()
        try:
            assert entered.wait(60)
            found, headers, body = request(server, f"/api/report?table={RATED}")
            assert found == 503 and headers["retry-after"] == "1" and b"already being read" in body
        finally:
            release.set()
            reader.join(60)
        assert first[0][0] == 200


# ---------------------------------------------------------------------------------------------- the secrecy
CARD = r"(?<![0-9A-Za-z]){}(?![0-9A-Za-z])"


def test_no_card_the_table_had_not_turned_is_in_any_answer_while_a_round_is_in_progress(tables, served):
    """The store holds FOLDING up to its round 3's across reveal: no answer of the page holds a card of the
    journal that was not turned by then (the down and middle cards, every player's two cards of round 3, and
    the cards of folded seats in the rounds before)."""
    dsn, journals, _ = tables
    _, records, stored = journals[FOLDING]
    last = stored[-1]["seq"]
    hidden = {card for cards in _turned(records).values() for card, at in cards.items() if at is None or at > last}
    assert hidden and any(at is None for cards in _turned(records).values() for at in cards.values())
    answers = [request(served, path)[2].decode() for path in
               ["/api/pit", "/api/labels", "/api/operator", "/", "/pit/pit.js"]
               + [f"/api/{kind}?table={FOLDING}&period={p}" for kind in ("report", "plot.svg") for p in PERIODS]]
    assert _row(json.loads(answers[0]), FOLDING)["state"] == "across turned"
    for text in answers:
        for card in hidden:
            assert re.search(CARD.format(card), text) is None, f"{card} is in an answer before it was turned"
    with psycopg.connect(dsn, autocommit=True) as conn:  # the search finds the cards that were turned
        turned = " ".join(json.dumps(d) for (d,) in conn.execute(
            "SELECT data FROM records WHERE table_id = %s AND type = 'CardsRevealed' AND round_no = 3", (FOLDING,)))
    assert sum(re.search(CARD.format(c), turned) is not None for c in {c for cards in _turned(records).values()
                                                                        for c in cards}) == 2


# ---------------------------------------------------------------------------------------------- who may see it
def test_only_a_supervisor_of_the_operators_file_sees_the_pit(served, tmp_path):
    assert request(served, "/api/pit")[0] == 200  # sue: known from now on
    for path in ("/api/pit", f"/api/report?table={RATED}", f"/api/plot.svg?table={RATED}", "/api/operator"):
        found, headers, body = request(served, path, None)
        assert found == 401 and headers["www-authenticate"].startswith("Basic"), path
        found, _, body = request(served, path, "dan")
        assert found == 403 and b"needs a supervisor; user dan has the role dealer" in body, path
    assert request(served, "/api/pit", "sue", "not-her-password")[0] == 401
    assert request(served, "/api/labels", None)[0] == request(served, "/", None)[0] == 200  # nothing secret
    path = operators_file(tmp_path)
    path.chmod(0o640)  # made readable by the group: the file is refused, nobody gets in
    for user in ("sue", "dan"):
        found, _, body = request(served, "/api/pit", user)
        assert found == 401 and b"the operators file is refused" in body, user
    path.chmod(0o600)  # mended: the supervisor is back
    assert request(served, "/api/pit")[0] == 200
    assert get_json(served, "/api/operator") == {"user": "sue", "role": "supervisor"}


def test_a_host_that_is_not_this_server_is_misdirected(served):
    port = served.port
    for host in (f"pit.attacker.example:{port}", f"127.0.0.1:{port + 1}", f"[::1]:{port}", "127.0.0.1"):
        found, _, body = request(served, "/api/pit", host=host)
        assert found == 421 and b"is not this server" in body, host
    assert request(served, "/api/pit", host=f"localhost:{port}")[0] == 200


def test_the_page_is_served_only_to_loopback_unless_allowed_with_tls(tmp_path):
    operators = operators_file(tmp_path)
    for host, options, says in [
            ("10.1.2.3", {}, "--allow-network and TLS"), ("10.1.2.3", {"allow_network": True}, "needs TLS"),
            ("0.0.0.0", {"allow_network": True}, "every network"), ("localhost", {}, "not a name"),
            ("127.0.0.1", {"tls_cert": tmp_path / "c.pem"}, "go together"),
            ("127.0.0.1", {"names": ("Pit.Casino",)}, "host name in lower case")]:
        with pytest.raises(ConfigError, match=re.escape(says)):
            check_config(ServeConfig(operators, host, 8741, **options))
    shown = crisscross("floor", "serve", "--dsn", "postgresql://nobody@127.0.0.1:1/none", "--operators", operators,
                       "--host", "192.168.7.20")
    assert shown.returncode == 2 and "not a loopback address" in shown.stderr and "SSH tunnel" in shown.stderr
    shown = crisscross("floor", "serve", "--dsn", "postgresql://nobody@127.0.0.1:1/none", "--operators", operators,
                       "--jurisdiction", "ny")
    assert shown.returncode == 2 and "--dsn: the store cannot be read" in shown.stderr


def test_with_tls_the_page_answers_https_only_and_a_key_others_may_read_is_refused(tables, tmp_path):
    import trustme

    dsn, _, start = tables
    authority = trustme.CA()
    issued = authority.issue_cert("127.0.0.1", "pit.casino.internal")
    chain, key = tmp_path / "chain.pem", tmp_path / "key.pem"
    chain.write_bytes(b"".join(blob.bytes() for blob in issued.cert_chain_pems))
    issued.private_key_pem.write_to_path(str(key))
    key.chmod(0o644)
    with pytest.raises(ConfigError, match="lets others read the private key"):
        check_config(ServeConfig(operators_file(tmp_path), "127.0.0.1", 0, tls_cert=chain, tls_key=key))
    key.chmod(0o600)
    context = ssl.create_default_context()
    authority.configure_trust(context)
    with pit_served(dsn, tmp_path, start, tls_cert=chain, tls_key=key, names=("pit.casino.internal",)) as server:
        assert server.url.startswith("https://")
        assert request(server, "/api/pit", context=context)[0] == 200
        assert request(server, "/api/pit", context=context, host=f"pit.casino.internal:{server.port}")[0] == 200
        with pytest.raises((OSError, http.client.HTTPException)):  # plain HTTP on the TLS port: no answer
            request(server, "/api/pit")


def test_floor_serve_as_a_process_prints_its_url_serves_and_stops_at_sigterm(tables, tmp_path):
    dsn, _, start = tables
    process = subprocess.Popen([sys.executable, "-m", "controller", "floor", "serve", "--dsn", dsn, "--operators",
                                str(operators_file(tmp_path)), "--port", "0", "--jurisdiction", "ny",
                                "--day-start", start.strftime("%H:%M"), "--every", "0.5"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("pit page on http://127.0.0.1:"), (line, process.stderr.read() if not line else "")
        port = int(line.split()[3].rsplit(":", 1)[1])
        answer = request(type("Served", (), {"port": port})(), "/api/pit")
        assert answer[0] == 200 and [r["table"] for r in json.loads(answer[2])["tables"]] == [RATED, FOLDING]
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)


def test_the_page_files_are_package_data():
    import tomllib
    from fnmatch import fnmatch
    from pathlib import Path

    from controller.floor.serve import PAGE_DIR

    top = Path(__file__).resolve().parent.parent
    globs = tomllib.loads((top / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    files = sorted(f"pit_page/{p.name}" for p in PAGE_DIR.iterdir())
    assert files == ["pit_page/index.html", "pit_page/pit.css", "pit_page/pit.js"]
    assert all(any(fnmatch(f.removeprefix("pit_page/"), g) for g in globs["controller.floor.pit_page"]) for f in files)


def test_a_database_that_holds_no_store_is_named_in_one_line(postgres, tmp_path):  # noqa: F811 - the fixture
    """``floor report`` and ``floor serve`` on a database no ``floor store`` has migrated: status 2 and one line
    saying so (libpq's hint lines left out), not a two-line SQL error."""
    empty = postgres.create("not_a_store")
    operators = operators_file(tmp_path)
    for argv in (("floor", "report", "--dsn", empty, "--table", "T", "--day-start", "06:00", "--jurisdiction", "ny"),
                 ("floor", "serve", "--dsn", empty, "--operators", str(operators), "--port", "0", "--for", "1")):
        proc = crisscross(*argv)
        assert proc.returncode == 2 and proc.stdout == ""
        [line] = proc.stderr.splitlines()
        assert "not a floor store" in line and "run crisscross floor store on it first" in line


def test_a_store_lost_while_the_counted_records_are_read_counts_none_of_them_twice():
    """The counted records are read whole before any is counted: a store lost in the middle of the reading
    (psycopg raising from the cursor) counts none, so the next poll counts each record once."""
    fault = {"seq": 7, "time": dt.datetime(2026, 12, 4, 10, 0, tzinfo=dt.timezone.utc), "type": "FaultRaised",
             "data": {"round_no": 1, "device": "shoe", "cause": "jam"}}

    class Rows:
        def __init__(self, rows, lost):
            self.rows, self.lost = rows, lost

        def fetchone(self):
            return self.rows[0]

        def fetchall(self):
            if self.lost:
                raise psycopg.OperationalError("server closed the connection unexpectedly")
            return self.rows

        def __iter__(self):  # a reader that counts as it iterates meets the loss after the first record
            yield self.rows[0]
            if self.lost:
                raise psycopg.OperationalError("server closed the connection unexpectedly")
            yield from self.rows[1:]

    class Store:
        lost = True

        def execute(self, sql, params=()):
            if sql.startswith("SELECT min(seq)"):
                return Rows([(7,)], False)
            if "type = ANY" in sql and "seq > %s" in sql:
                row = (fault["seq"], fault["time"], fault["type"], fault["data"])
                return Rows([row, (8, fault["time"], "FaultRaised", fault["data"])], self.lost)
            raise psycopg.OperationalError("server closed the connection unexpectedly")

    data, table, store = PitData(dt.time(6)), serve_data._Table(), Store()
    begin, end = dt.datetime(2026, 12, 4, 6, tzinfo=dt.timezone.utc), dt.datetime(2026, 12, 5, 6, tzinfo=dt.timezone.utc)
    with pytest.raises(psycopg.OperationalError):
        data._read(store, "T", table, 8, begin, end)
    assert table.summary.faults == 0 and table.fed == 6
    store.lost = False
    with pytest.raises(psycopg.OperationalError):  # the figures after the counts: the store still goes away
        data._read(store, "T", table, 8, begin, end)
    assert table.summary.faults == 2 and table.fed == 8  # each of the two faults counted once
