"""Each table's ``status`` kept by the floor's store (controller/floor/store.py, ``Writer.status``, schema
``002_status.sql``) and the pit page's Status from it (controller/floor/serve_data.py; docs/backoffice.md, "The
store" and "The pit page"), against a real Mosquitto and a real PostgreSQL started by the tests (as
tests/test_floor_store.py: skipped without them, failed under CI).

The tables are real services (``crisscross run --simulate --pace 60``: up, its round open for betting and the
dealer idle between presses) publishing through the real publisher, stopped cleanly (SIGTERM twice: the round
in progress is not awaited) or killed (SIGKILL: the broker sends the service's last will). Oracles: what the
table did to its service (running, stopped, killed) and docs/backoffice.md's rule; the premise of each check
(the latest record older than ``--online-within`` by the page's clock) is asserted, not assumed.
"""

from __future__ import annotations

import datetime as dt
import logging
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import paho.mqtt.client as paho
import psycopg

from controller.cli.main import main as cli_main
from controller.floor import migrate as migrate_module
from controller.floor import topics
from controller.floor.migrate import migrate, migrations
from controller.floor.serve_data import ONLINE_WITHIN, PitData
from controller.floor.store_write import Writer
from tests.postgres import wait_until
from tests.test_floor import TABLE
from tests.test_floor_store import _event, _last_seq, _query, dsn, postgres, store_running  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parent.parent
#: The page's clock in these tests: later than now by more than ``--online-within``, so every record the tests'
#: tables journal is older than the window (what an idle table's records are after five minutes).
LATER = dt.timedelta(seconds=ONLINE_WITHIN + 60)


def _page(dsn: str, *, clock=None) -> dict:  # noqa: F811 - dsn is a fixture's name
    """The pit page's row of ``TABLE`` as ``floor serve`` reads it, its clock ``LATER`` than now (or ``clock``)."""
    clock = clock or (lambda: dt.datetime.now(dt.timezone.utc) + LATER)
    start = (dt.datetime.now() - dt.timedelta(hours=1)).time().replace(minute=0, second=0, microsecond=0)
    with psycopg.connect(dsn, autocommit=True) as conn:
        pit = PitData(start, clock=clock).poll(conn)
    return {row["table"]: row for row in pit["tables"]}


def _kept(dsn: str, table: str = TABLE) -> tuple | None:
    rows = _query(dsn, "SELECT status, retained FROM table_status WHERE table_id = %s", table)
    return rows[0] if rows else None


@contextmanager
def table_service(port: int, folder: Path):
    """``crisscross run --simulate --pace 60`` as a process of its own, publishing to the broker at ``port``
    (``TABLE``); yields the process and its log file. Ended with SIGKILL if the test left it running."""
    site = folder / "site"
    assert cli_main(["config", "init", str(site)]) == 0
    config = site / "table.yaml"
    config.write_text(config.read_text() + f"\nfloor:\n  enabled: true\n  broker: 127.0.0.1\n  port: {port}\n")
    log = folder / "service.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "controller", "run", "--simulate", "--quiet", "--pace",
                                    "60", "--config", str(config), "--journal", str(folder / "journal.db")],
                                   cwd=ROOT, stdout=out, stderr=out)
    try:
        yield process, log
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(60)


def _up_and_stored(process: subprocess.Popen, dsn: str) -> None:  # noqa: F811
    """Wait until the store keeps the table's ``online`` and its records up to the dealer's first idle wait (its
    ``ServiceStarted`` and its round open for betting)."""
    wait_until(lambda: process.poll() is None and _kept(dsn) == ("online", False) and _query(
        dsn, "SELECT 1 FROM records WHERE table_id = %s AND type = 'RoundOpened'", TABLE), 120,
        "the table online and its round opened in the store")


# ---------------------------------------------------------------------------------------------- the pit's status
def test_an_idle_table_whose_service_is_up_is_online_however_old_its_latest_record(mosquitto, dsn, tmp_path):
    with store_running(mosquitto.port, dsn), table_service(mosquitto.port, tmp_path) as (process, _):
        _up_and_stored(process, dsn)
        row = _page(dsn)[TABLE]
        assert row["age_seconds"] > ONLINE_WITHIN  # the premise: older than the window by the page's clock
        assert (row["status"], row["why"]) == ("online", None)
        assert row["status_at"] is not None


def test_a_table_stopped_cleanly_is_offline_stopped(mosquitto, dsn, tmp_path):
    with store_running(mosquitto.port, dsn), table_service(mosquitto.port, tmp_path) as (process, log):
        _up_and_stored(process, dsn)
        process.send_signal(signal.SIGTERM)  # the first lets the round finish (a minute a press away) ...
        wait_until(lambda: "stopping after round" in log.read_text(), 60, "the service taking the first SIGTERM")
        process.send_signal(signal.SIGTERM)  # ... the second stops it now: ServiceStopped, then `offline`
        assert process.wait(60) == 1  # stopped with its round open (docs/commands.md)
        wait_until(lambda: _kept(dsn) == ("offline", False) and _query(
            dsn, "SELECT 1 FROM records WHERE table_id = %s AND type = 'ServiceStopped'", TABLE), 60,
            "the table's offline and its ServiceStopped in the store")
        row = _page(dsn)[TABLE]
    assert (row["status"], row["why"]) == ("offline", "stopped")


def test_a_table_whose_connection_was_cut_shows_the_brokers_last_will(mosquitto, dsn, tmp_path):
    with store_running(mosquitto.port, dsn), table_service(mosquitto.port, tmp_path) as (process, _):
        _up_and_stored(process, dsn)
        process.send_signal(signal.SIGKILL)  # no goodbye: the broker sends the will when the connection drops
        process.wait(60)
        wait_until(lambda: _kept(dsn) == ("offline", False), 60, "the last will kept")
        row = _page(dsn)[TABLE]
        assert row["age_seconds"] > ONLINE_WITHIN
        assert (row["status"], row["why"]) == ("offline", "lost")
        assert not _query(dsn, "SELECT 1 FROM records WHERE table_id = %s AND type = 'ServiceStopped'", TABLE)


# ---------------------------------------------------------------------------------------------- the schema
def test_a_store_of_the_first_schema_gets_the_status_table_keeps_its_records_and_the_retained_status(
        mosquitto, dsn, monkeypatch):
    shipped = migrations()
    monkeypatch.setattr(migrate_module, "migrations", lambda: shipped[:1])  # as a store that shipped 001 only
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert migrate(conn) == ["001_store.sql"]
        with conn.transaction():
            Writer().write(conn, [(TABLE, "events", _event(seq, seq - 1, TABLE)) for seq in (1, 2, 3)])
    monkeypatch.undo()
    before = _query(dsn, "SELECT * FROM records ORDER BY table_id, seq")
    assert len(before) == 3
    fixed = dt.datetime.fromisoformat("2026-12-04T14:10:06.942+00:00") + LATER  # _event's records' time
    row = _page(dsn, clock=lambda: fixed)[TABLE]
    assert (row["status"], row["why"]) == ("offline", "silent")  # a store of 001 keeps no status: records' rule
    table = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
    table.connect("127.0.0.1", mosquitto.port)
    table.loop_start()
    try:  # retained before the store subscribes, as a table's status is
        table.publish(topics.topic("crisscross", TABLE, "status"), topics.ONLINE, qos=1,
                      retain=True).wait_for_publish(15)
        with store_running(mosquitto.port, dsn):
            wait_until(lambda: _kept(dsn) == ("online", True), 60, "the retained status kept")
    finally:
        table.loop_stop()
        table.disconnect()
    assert _query(dsn, "SELECT version FROM schema_version ORDER BY version") == [(n,) for n, _, _ in shipped]
    assert _query(dsn, "SELECT * FROM records ORDER BY table_id, seq") == before
    assert _last_seq(dsn, TABLE) == 3
    row = _page(dsn, clock=lambda: fixed)[TABLE]
    assert (row["status"], row["why"]) == ("online", None)


# ---------------------------------------------------------------------------------------------- bad payloads
def test_a_malformed_status_is_logged_with_its_table_and_topic_and_skipped_and_records_are_still_stored(
        mosquitto, dsn, caplog):
    caplog.set_level(logging.WARNING, logger="controller.floor.store_write")
    table = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
    table.connect("127.0.0.1", mosquitto.port)
    table.loop_start()
    status_topic = topics.topic("crisscross", "T-9", "status")

    def send(topic: str, payload: bytes) -> None:
        table.publish(topic, payload, qos=1).wait_for_publish(15)

    try:
        with store_running(mosquitto.port, dsn):
            send(status_topic, b'{"status": "online"}')
            send(status_topic, b"\xff\xfe")
            for seq in (1, 2):
                send(topics.topic("crisscross", "T-9", "events"), _event(seq, seq - 1, "T-9"))
            wait_until(lambda: _last_seq(dsn, "T-9") == 2, 60, "the records after the bad statuses stored")
            assert _kept(dsn, "T-9") is None
            lines = [r.getMessage() for r in caplog.records if "status message" in r.getMessage()]
            assert len(lines) == 2 and all("T-9" in line and status_topic in line for line in lines), lines
            send(status_topic, topics.OFFLINE)  # a good one after them is kept
            wait_until(lambda: _kept(dsn, "T-9") == ("offline", False), 60, "the next status kept")
            send(status_topic, b"")  # the retained status cleared on the broker: nothing known any more
            wait_until(lambda: _kept(dsn, "T-9") is None, 60, "the status cleared")
            send(topics.topic("crisscross", "T-9", "events"), _event(3, 2, "T-9"))
            wait_until(lambda: _last_seq(dsn, "T-9") == 3, 60, "the next record stored")
    finally:
        table.loop_stop()
        table.disconnect()
    assert _query(dsn, "SELECT seq FROM records WHERE table_id = 'T-9' ORDER BY seq") == [(1,), (2,), (3,)]

