"""The store's own health (controller/floor/store_health.py, schema ``004_store_health.sql``) and the pit page's
answer from it (``GET /api/pit``'s ``store_health``, controller/floor/serve_data.py; docs/backoffice.md, "The
store's health"), against a real Mosquitto and a real PostgreSQL started by the tests (as tests/test_floor_store.py:
skipped without them, failed under CI).

The stores are real: ``crisscross floor store`` as a process (killed by SIGKILL) or ``FloorStore`` on a thread (its
database refusing its writes by a privilege revoked or a lock held, its broker stopped). Oracles: what the test did
to the store and the rule of docs/backoffice.md (silent once its latest write is older than
``--store-silent-after`` by the database's clock); every wait is on a condition with a deadline.
"""

from __future__ import annotations

import datetime as dt
import json
import signal

import psycopg
import pytest

from controller.cli.main import main as cli_main
from controller.floor import migrate as migrate_module
from controller.floor import serve_data, store_health, topics
from controller.floor.migrate import migrate, migrations
from controller.floor.serve_data import PitData, Poller
from controller.floor.store_health import MIN_SILENT_AFTER, judge
from controller.floor.store_write import Outcome, Writer
from tests.pit_helpers import get_json, pit_served
from tests.postgres import wait_until
from tests.test_floor_store import (Publisher, _event, _execute, _last_seq, _query, _store_process,  # noqa: F401
                                    dsn, postgres, store_running, writer_role)

#: The page's threshold in these tests: the least the option takes (three of the store's beats).
SHORT = MIN_SILENT_AFTER
#: The store's name as the page shows it (``floor store``'s default session).
STORE = "crisscross-store-store"


def day_start() -> dt.time:
    """A gaming day's start an hour before now (local time, whole hours)."""
    return (dt.datetime.now() - dt.timedelta(hours=1)).time().replace(minute=0, second=0, microsecond=0)


def health(dsn: str) -> dict:  # noqa: F811 - dsn is a fixture's name
    """The pit's ``store_health`` as ``floor serve --store-silent-after SHORT`` reads it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return PitData(day_start(), store_silent_after=SHORT).poll(conn)["store_health"]


def health_row_written(dsn: str) -> bool:  # noqa: F811
    """True once a store migrated the database to 004 and wrote its first health row."""
    return bool(_query(dsn, "SELECT 1 FROM pg_tables WHERE tablename = 'store_health'") and _query(
        dsn, "SELECT 1 FROM store_health"))


def _served_health(server) -> dict:
    return get_json(server, "/api/pit")["store_health"]


def _when(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


# ---------------------------------------------------------------------------------------------- the rule
def _row(**changes) -> dict:
    """A store's row as ``store_health.read`` returns it: written just now, subscribed, running."""
    now = dt.datetime(2026, 12, 4, 14, 10, tzinfo=dt.timezone.utc)
    return {"store": STORE, "host": "backoffice", "pid": 4242, "started_at": now, "written_at": now, "pending": 0,
            "stored": 0, "skipped": 0, "refused": 0, "subscribed": True, "stopped_at": None, "age": 0.0, **changes}


@pytest.mark.parametrize("changes, expected", [
    ({}, "writing"),
    ({"age": 30.0}, "writing"),  # at the threshold: not yet older than it
    ({"age": 30.001}, "silent"),
    ({"subscribed": False}, "no broker"),
    ({"subscribed": False, "age": 31.0}, "silent"),  # not writing at all outweighs not hearing
    ({"stopped_at": dt.datetime(2026, 12, 4, 14, 10, tzinfo=dt.timezone.utc)}, "stopped"),
    ({"stopped_at": dt.datetime(2026, 12, 4, 14, 10, tzinfo=dt.timezone.utc), "age": 999.0}, "stopped"),
])
def test_a_stores_state_is_the_documented_rule(changes, expected):
    found = judge([_row(**changes)], None, 30.0)
    assert found["state"] == found["stores"][0]["state"] == expected
    assert found["why"] is None and found["silent_after"] == 30.0


def test_the_pages_state_is_its_worst_stores_and_unknown_without_a_row():
    rows = [_row(store="a"), _row(store="b", subscribed=False), _row(store="c", age=31.0)]
    assert judge(rows[:1], None, 30.0)["state"] == "writing"
    assert judge(rows[:2], None, 30.0)["state"] == "no broker"
    assert judge(rows, None, 30.0)["state"] == "silent"
    assert [s["state"] for s in judge(rows, None, 30.0)["stores"]] == ["writing", "no broker", "silent"]
    nothing = judge([], "no store has written its health yet", 30.0)
    assert (nothing["state"], nothing["why"], nothing["stores"]) == ("unknown", "no store has written its health yet",
                                                                     [])


def test_the_threshold_option_is_refused_below_three_beats_and_named(capsys):
    for text in ("5.9", "0", "nan", "1e9"):
        with pytest.raises(SystemExit) as stop:
            cli_main(["floor", "serve", "--dsn", "dbname=x", "--operators", "y", "--store-silent-after", text])
        assert stop.value.code == 2
        assert "--store-silent-after: expected seconds, a number from 6" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- a store gone
def test_a_running_store_shows_writing_and_once_killed_silent_after_the_threshold(mosquitto, dsn, tmp_path):
    process = _store_process(mosquitto.port, dsn)
    publisher = Publisher(mosquitto.port)
    try:
        wait_until(lambda: health_row_written(dsn), 60, "the store's first health row")
        with pit_served(dsn, tmp_path, day_start(), silent_after=SHORT) as server:
            first = wait_until(lambda: (h := _served_health(server))["state"] == "writing" and h, 60,
                               "the page saying the store writes")
            (row,) = first["stores"]
            assert (row["store"], row["pid"], row["stopped_at"]) == (STORE, process.pid, None)
            publisher.send("T-1", (1, 0), (2, 1))
            wait_until(lambda: _served_health(server)["stores"][0]["stored"] == 2, 60, "its records in its row")
            # idle for longer than the threshold by the database's clock, and writing all along: it beats when idle
            states = []

            def idle_past_threshold() -> bool:
                found = _served_health(server)
                states.append(found["state"])
                return (_when(found["stores"][0]["written_at"]) - _when(row["written_at"])).total_seconds() > SHORT

            wait_until(idle_past_threshold, 60, "the store's row advancing past the threshold", every=0.5)
            assert set(states) == {"writing"}, states
            process.send_signal(signal.SIGKILL)
            process.wait(30)
            (last,) = _query(dsn, "SELECT written_at FROM store_health")[0]
            silent = wait_until(lambda: (h := _served_health(server))["state"] == "silent" and h, 60,
                                "the page saying the killed store is silent")
    finally:
        publisher.close()
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)
    (row,) = silent["stores"]
    assert row["state"] == "silent" and row["age_seconds"] >= SHORT
    assert _when(row["written_at"]) == last  # the last write before the kill, never advanced since
    assert (row["stopped_at"], row["stored"]) == (None, 2)


def test_a_store_stopped_cleanly_says_so_with_what_it_left_unwritten(mosquitto, dsn):
    with store_running(mosquitto.port, dsn):
        wait_until(lambda: health(dsn)["state"] == "writing", 60, "the store writing")
    found = health(dsn)
    (row,) = found["stores"]
    assert (found["state"], row["state"], row["pending"]) == ("stopped", "stopped", 0)
    assert _when(row["stopped_at"]) >= _when(row["started_at"])


# ---------------------------------------------------------------------------------------------- a store stuck
def test_a_store_whose_database_refuses_its_writes_shows_silent_and_writing_again_once_it_takes_them(mosquitto,
                                                                                                      dsn):
    writer = writer_role(dsn)
    publisher = Publisher(mosquitto.port)
    try:
        with store_running(mosquitto.port, writer) as store:
            wait_until(lambda: health(dsn)["state"] == "writing", 60, "the store writing")
            _execute(dsn, "REVOKE INSERT, UPDATE ON ALL TABLES IN SCHEMA public FROM store_writer")
            publisher.send("T-1", (1, 0))  # a batch to write, which the database refuses
            silent = wait_until(lambda: (h := health(dsn))["state"] == "silent" and h, 60,
                                "the page saying the store is silent")
            assert store.refused >= 1 and store.pending and store.skipped == 0  # alive, trying, nothing dropped
            _execute(dsn, "GRANT INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO store_writer")
            back = wait_until(lambda: (h := health(dsn))["state"] == "writing" and h, 60, "the store writing again")
    finally:
        publisher.close()
    assert silent["stores"][0]["age_seconds"] >= SHORT
    assert back["stores"][0]["refused"] >= 1 and back["stores"][0]["stored"] == 1 and _last_seq(dsn, "T-1") == 1


def test_a_store_blocked_by_a_lock_on_its_tables_shows_silent_and_writing_again_once_released(mosquitto, dsn):
    publisher = Publisher(mosquitto.port)
    blocker = psycopg.connect(dsn)  # a transaction of its own, held open
    try:
        with store_running(mosquitto.port, dsn):
            wait_until(lambda: health(dsn)["state"] == "writing", 60, "the store writing")
            blocker.execute("LOCK TABLE records IN EXCLUSIVE MODE")  # readers go on; the store's INSERT waits
            publisher.send("T-1", (1, 0))
            wait_until(lambda: health(dsn)["state"] == "silent", 60, "the page saying the blocked store is silent")
            assert _last_seq(dsn, "T-1") == 0
            blocker.rollback()
            wait_until(lambda: health(dsn)["state"] == "writing" and _last_seq(dsn, "T-1") == 1, 60,
                       "the store writing again")
    finally:
        blocker.close()
        publisher.close()


def test_a_store_that_lost_its_broker_says_so_while_it_writes(mosquitto, dsn):
    with store_running(mosquitto.port, dsn):
        wait_until(lambda: health(dsn)["state"] == "writing", 60, "the store writing")
        mosquitto.stop()
        try:
            wait_until(lambda: health(dsn)["state"] == "no broker", 60, "the page saying the store hears no broker")
        finally:
            mosquitto.start()
        wait_until(lambda: health(dsn)["state"] == "writing", 60, "the store subscribed again")


def test_a_database_the_page_cannot_read_makes_the_stores_health_unknown_not_the_last_reading(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            store_health.write(conn, store_health.Beat(STORE, "backoffice", 1, dt.datetime.now(dt.timezone.utc),
                                                        0, 0, 0, 0, True))
    away = {"now": False}

    def connect(text: str):
        if away["now"]:
            raise psycopg.OperationalError("the test's database is away")
        return serve_data.connect(text)

    poller = Poller(dsn, PitData(day_start(), store_silent_after=SHORT), 0.5, connect_db=connect)
    poller.first()
    assert json.loads(poller.latest)["store_health"]["state"] == "writing"
    away["now"] = True
    _query(dsn, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND "
                "pid <> pg_backend_pid()")
    poller.start()
    try:
        answer = wait_until(lambda: (a := json.loads(poller.latest)) and "away" in a["store"].get("error", "") and a,
                            60, "the page saying the store cannot be read")
    finally:
        poller.stop()
    assert answer["store_health"]["state"] == "unknown" and answer["store_health"]["stores"] == []
    assert "the test's database is away" in answer["store_health"]["why"]


def test_a_page_role_that_may_not_read_the_health_says_unknown_and_shows_the_tables(dsn):
    """docs/backoffice.md's read-only role for the page, granted before ``004`` without the default privileges:
    the tables are shown and the health is unknown (why said), never an error for the whole page."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            Writer().write(conn, [("T-1", "events", _event(1, 0))])
            store_health.write(conn, store_health.Beat(STORE, "backoffice", 1, dt.datetime.now(dt.timezone.utc),
                                                        0, 1, 0, 0, True))
        conn.execute("DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pit_reader') THEN "
                     "CREATE ROLE pit_reader LOGIN; END IF; END$$")
        conn.execute("GRANT USAGE ON SCHEMA public TO pit_reader")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO pit_reader")
        conn.execute("REVOKE SELECT ON store_health FROM pit_reader")
    reader = dsn.replace("postgresql://postgres@", "postgresql://pit_reader@", 1)
    with serve_data.connect(reader) as conn:
        pit = PitData(day_start(), store_silent_after=SHORT).poll(conn)
    assert [(r["table"], r["last_seq"]) for r in pit["tables"]] == [("T-1", 1)]
    assert (pit["store_health"]["state"], pit["store_health"]["stores"]) == ("unknown", [])
    assert "may not read store_health" in pit["store_health"]["why"]
    assert health(dsn)["state"] == "writing"  # the row is there: only the page's role cannot see it


# ---------------------------------------------------------------------------------------------- the schema
def test_a_database_of_schema_003_shows_the_health_unknown_and_its_tables_and_keeps_its_rows_when_migrated(
        mosquitto, dsn, tmp_path, monkeypatch):
    shipped = migrations()
    monkeypatch.setattr(migrate_module, "migrations", lambda: shipped[:3])  # as a store that shipped 001-003
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert migrate(conn) == ["001_store.sql", "002_status.sql", "003_meters_public.sql"]
        with conn.transaction():
            writer = Writer()
            writer.write(conn, [("T-1", "events", _event(seq, seq - 1)) for seq in (1, 2, 3)] + [
                ("T-1", "meters", topics.encode({"table": "T-1", "seq": 3, "round": 1, "meters": {}, "public": 3}))])
            writer.status(conn, "T-1", "crisscross/T-1/status", topics.ONLINE, dt.datetime.now(dt.timezone.utc),
                          True, Outcome())
    monkeypatch.undo()
    kept = ("records", "tables", "meters", "table_status", "gaps", "held", "totals")
    before = {name: _query(dsn, f"SELECT * FROM {name} ORDER BY 1, 2") for name in kept}
    assert before["records"] and before["meters"] and before["table_status"]
    with pit_served(dsn, tmp_path, day_start(), silent_after=SHORT) as server:
        pit = get_json(server, "/api/pit")
    assert pit["store"]["ok"] and [(r["table"], r["last_seq"], r["status"]) for r in pit["tables"]] == [
        ("T-1", 3, "online")]
    assert (pit["store_health"]["state"], pit["store_health"]["stores"]) == ("unknown", [])
    assert "before 004" in pit["store_health"]["why"]
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert migrate(conn) == [name for _, name, _ in shipped[3:]]
    assert {name: _query(dsn, f"SELECT * FROM {name} ORDER BY 1, 2") for name in kept} == before
    assert health(dsn)["state"] == "unknown"  # migrated, but no store has written its row yet
    with store_running(mosquitto.port, dsn):
        wait_until(lambda: health(dsn)["state"] == "writing", 60, "the store of schema 004 writing its health")
    assert _query(dsn, "SELECT version FROM schema_version ORDER BY version") == [(n,) for n, _, _ in shipped]
