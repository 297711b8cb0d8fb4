"""The floor's store (``crisscross floor store``, controller/floor/store.py, docs/backoffice.md) against a real
Mosquitto and a real PostgreSQL, both started by the tests (``mosquitto``; ``tests/postgres.py``): without them
the tests are skipped, and fail under CI.

Oracles: the table's own journal (its public records through the control interface's filter, one for one by
seq, in order) and, for the chain rule, messages written here by hand (``_event``) whose seqs say what must be
kept. A store is stopped by SIGKILL mid-run, the broker and the database are restarted mid-run; each time the
store holds every public record exactly once.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from contextlib import contextmanager
from itertools import count

import paho.mqtt.client as paho
import psycopg
import pytest

from controller.control.server import public_record
from controller.floor import topics
from controller.floor.migrate import migrate, migrations
from controller.floor.publisher import progress_path
from controller.floor.report_tool import store_states
from controller.floor.store import FloorStore
from controller.journal.reader import read_records
from controller.settings.floor import FloorConfig
from tests.cli_helpers import crisscross
from tests.postgres import own_postgres, wait_until
from tests.test_floor import TABLE, _config, _run

_names = count(1)


@pytest.fixture(scope="module")
def postgres():
    server = own_postgres()
    yield server
    server.remove()


@pytest.fixture
def dsn(postgres):
    """A new database of the test's own."""
    return postgres.create(f"store_{os.getpid()}_{next(_names)}")


def _query(dsn: str, sql: str, *params):
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(sql, params).fetchall()


def _execute(dsn: str, sql: str) -> None:
    """Run ``sql`` (no rows) as the server's superuser."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql)


@contextmanager
def store_running(port: int, dsn: str, **options):
    """A ``FloorStore`` on a thread of its own for the block, stopped after it."""
    store = FloorStore(FloorConfig(True, "127.0.0.1", port), dsn, **options)
    stop = threading.Event()
    thread = threading.Thread(target=store.run, args=(stop,), name="floor-store")
    thread.start()
    try:
        wait_until(lambda: store.subscribed, 60, "the store's subscriptions")
        yield store
    finally:
        stop.set()
        thread.join(60)
        assert not thread.is_alive()


def _store_process(port: int, dsn: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "controller", "floor", "store", "--broker", "127.0.0.1", "--port",
                             str(port), "--dsn", dsn], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _last_seq(dsn: str, table: str = TABLE) -> int:
    rows = _query(dsn, "SELECT last_seq FROM tables WHERE table_id = %s", table)
    return rows[0][0] if rows else 0


def assert_stored_as_journaled(dsn: str, journal, table: str = TABLE) -> None:
    """The store holds the journal's public records, each once, in order, with their data, and nothing else;
    no record held, no gap open."""
    public = [public_record(r) for r in read_records(journal)]
    public = [p for p in public if p is not None]
    wait_until(lambda: _last_seq(dsn, table) == public[-1]["seq"], 120, f"the store reaching record "
               f"{public[-1]['seq']} (at {_last_seq(dsn, table)})")
    rows = _query(dsn, "SELECT seq, after_seq, type, round_no, kind, data FROM records WHERE table_id = %s "
                       "ORDER BY seq", table)
    assert [r[0] for r in rows] == [p["seq"] for p in public]
    assert [r[1] for r in rows] == [0] + [p["seq"] for p in public[:-1]]  # the after chain, unbroken
    assert [(r[2], r[3], r[4], r[5]) for r in rows] == [(p["type"], p["round"], p["kind"], p["data"])
                                                        for p in public]
    assert _query(dsn, "SELECT stored, held FROM tables WHERE table_id = %s", table) == [(len(public), 0)]
    assert _query(dsn, "SELECT count(*) FROM gaps WHERE table_id = %s AND filled_at IS NULL", table) == [(0,)]
    assert _query(dsn, "SELECT count(*) FROM held") == [(0,)]
    assert _state(dsn, table)["behind"] == 0


def _state(dsn: str, table: str = TABLE) -> dict:
    """``floor report``'s and the pit page's ``store`` of ``table`` (``report_tool.store_states``)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return store_states(conn, table)[table]


def _closing_meters_kept(dsn: str, journal) -> int:
    """Wait until the store keeps the table's ``meters`` of its last round's close; its seq: that of the checkpoint
    the journal wrote with the close (docs/floor.md, "Topics"), read from the journal itself."""
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as db:
        closing = db.execute("SELECT min(seq) FROM checkpoints WHERE seq >= (SELECT max(seq) FROM records WHERE "
                             "type IN ('RoundClosed', 'RoundVoided'))").fetchone()[0]
    wait_until(lambda: _query(dsn, "SELECT max(seq) FROM meters WHERE table_id = %s", TABLE) == [(closing,)], 60,
               f"the meters of the last round's close (record {closing}) kept")
    return closing


# ---------------------------------------------------------------------------------------------- the schema
def test_the_migrations_are_numbered_once_each_and_applied_once(dsn):
    shipped = migrations()
    assert [number for number, _, _ in shipped] == list(range(1, len(shipped) + 1))
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert migrate(conn) == [name for _, name, _ in shipped]
        assert migrate(conn) == []  # a second start applies nothing
        versions = conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert [v for (v,) in versions] == [number for number, _, _ in shipped]


def test_a_round_closed_on_a_private_record_leaves_a_whole_store_not_behind(dsn):
    """A round's close may be checkpointed with a private record (a ``PrivatePanel`` while the supervisor key is
    turned): the table's ``meters`` then names that seq, past the last public one. Its ``public`` says what was
    published: a store that has it is not behind; a ``meters`` of a table that does not send ``public`` yet counts
    from its ``seq``, as before."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        conn.execute("INSERT INTO tables (table_id, last_seq) VALUES ('T-new', 50), ('T-old', 50)")
        conn.execute("INSERT INTO meters (table_id, seq, round_no, meters, public_seq) VALUES "
                     "('T-new', 52, 3, '{}', 50), ('T-old', 52, 3, '{}', NULL)")
        states = store_states(conn)
    assert (states["T-new"]["behind"], states["T-old"]["behind"]) == (0, 2)


# ---------------------------------------------------------------------------------------------- the chain
def _event(seq: int, after: int, table: str = "T-1") -> bytes:
    return topics.encode({"table": table, "after": after, "record": {
        "seq": seq, "time": "2026-12-04T14:10:06.942+00:00", "kind": "record", "round": 1, "type": "CardsRevealed",
        "data": {"n": seq}}})


class Publisher:
    """A plain paho client (no code of ours) publishing hand-written messages at QoS 1, each acknowledged."""

    def __init__(self, port: int) -> None:
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def send(self, table: str, *pairs: tuple[int, int]) -> None:
        for seq, after in pairs:
            info = self.client.publish(topics.topic("crisscross", table, "events"), _event(seq, after, table), qos=1)
            info.wait_for_publish(15)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def test_each_record_is_stored_once_in_order_and_a_gap_is_held_until_a_resend_fills_it(mosquitto, dsn):
    publisher = Publisher(mosquitto.port)
    try:
        with store_running(mosquitto.port, dsn) as store:
            publisher.send("T-1", (1, 0), (2, 1), (2, 1), (1, 0), (3, 2))  # two repeats
            publisher.send("T-2", (1, 0), (5, 4))  # another table: its own chain, with records 2-4 never heard
            wait_until(lambda: store.total.repeats == 2 and _last_seq(dsn, "T-1") == 3, 60, "three records kept")
            publisher.send("T-1", (6, 5), (8, 6))  # 4 and 5 missing: 6 and 8 held
            wait_until(lambda: _query(dsn, "SELECT held FROM tables WHERE table_id = 'T-1'") == [(2,)], 60,
                       "two records held")
            assert _last_seq(dsn, "T-1") == 3  # nothing stored past the gap
            assert _query(dsn, "SELECT last_seq, after_seq, seq, kind, filled_at IS NULL FROM gaps WHERE "
                               "table_id = 'T-1' ORDER BY id") == [(3, 5, 6, "missing", True)]
            publisher.send("T-1", (4, 3), (5, 4), (6, 5))  # the publisher's resend, in order from the first missing
            wait_until(lambda: _last_seq(dsn, "T-1") == 8, 60, "the gap filled")
    finally:
        publisher.close()
    assert _query(dsn, "SELECT seq, after_seq, data FROM records WHERE table_id = 'T-1' ORDER BY seq") == [
        (s, a, {"n": s}) for s, a in ((1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (6, 5), (8, 6))]
    assert _query(dsn, "SELECT seq FROM records WHERE table_id = 'T-2'") == [(1,)]
    assert _query(dsn, "SELECT filled_at IS NOT NULL FROM gaps WHERE table_id = 'T-1'") == [(True,)]
    assert _query(dsn, "SELECT repeats, held FROM tables WHERE table_id = 'T-1'") == [(3, 0)]  # 6 came twice
    assert _query(dsn, "SELECT stored, held FROM tables WHERE table_id = 'T-2'") == [(1, 1)]
    assert _query(dsn, "SELECT last_seq, after_seq, seq FROM gaps WHERE table_id = 'T-2'") == [(1, 4, 5)]


def test_a_store_that_joins_late_keeps_a_tables_first_record_heard(mosquitto, dsn):
    publisher = Publisher(mosquitto.port)
    try:
        with store_running(mosquitto.port, dsn, join_late=True):
            publisher.send("T-3", (40, 39), (41, 40))
            wait_until(lambda: _last_seq(dsn, "T-3") == 41, 60, "both records kept")
    finally:
        publisher.close()
    assert _query(dsn, "SELECT joined, stored FROM tables WHERE table_id = 'T-3'") == [(39, 2)]


# ---------------------------------------------------------------------------------------------- a real table
def test_a_store_begun_after_the_table_holds_a_gap_until_the_table_publishes_again_from_its_first_record(
        mosquitto, dsn, tmp_path):
    journal = tmp_path / "journal.db"
    config = _config(mosquitto.port)
    _run(config, journal, rounds=1, seed=2)  # heard by no one: the broker keeps nothing for a store not yet there
    with store_running(mosquitto.port, dsn):
        _run(config, journal, rounds=1, seed=3)
        wait_until(lambda: _query(dsn, "SELECT held FROM tables")[0][0] > 0, 60, "the second start's records held")
        assert _last_seq(dsn) == 0 and _query(dsn, "SELECT last_seq, kind FROM gaps") == [(0, "missing")]
        progress_path(journal).unlink()  # docs/backoffice.md: the table publishes everything again
        _run(config, journal, rounds=1, seed=4)
        assert_stored_as_journaled(dsn, journal)
    assert _query(dsn, "SELECT filled_at IS NOT NULL FROM gaps") == [(True,)]


def test_a_simulated_tables_records_are_stored_exactly_once_through_a_broker_restart(mosquitto, dsn, tmp_path):
    journal = tmp_path / "journal.db"
    config = _config(mosquitto.port)
    with store_running(mosquitto.port, dsn) as store:
        service_done = threading.Event()
        runner = threading.Thread(target=lambda: (_run(config, journal, rounds=6, seed=5), service_done.set()),
                                  name="service-run")
        runner.start()
        try:
            wait_until(lambda: _last_seq(dsn) > 200, 120, "a first part stored")
            mosquitto.restart(down=0.5)  # the table plays on; the store's session and its queue survive
        finally:
            runner.join(300)
        assert service_done.is_set()
        # a table that stopped while its broker was away publishes the rest at its next start (the journal is
        # its outbox: docs/floor.md, "The publisher")
        _run(config, journal, rounds=1, seed=6)
        assert_stored_as_journaled(dsn, journal)
        assert store.total.stored == _query(dsn, "SELECT stored FROM tables")[0][0]
        _closing_meters_kept(dsn, journal)
        assert _state(dsn)["behind"] == 0  # complete: the table said nothing exists past what is stored


def _probed(probe: Publisher, dsn: str) -> bool:
    """True once the store kept a probe's ``meters`` message (sent again at each call): it is subscribed."""
    probe.client.publish(topics.topic("crisscross", "probe", "meters"), topics.encode(
        {"table": "probe", "seq": 1, "round": None, "meters": {}}), qos=1).wait_for_publish(15)
    return bool(_query(dsn, "SELECT 1 FROM pg_tables WHERE tablename = 'meters'")) and bool(
        _query(dsn, "SELECT 1 FROM meters WHERE table_id = 'probe'"))


def test_a_store_killed_mid_run_resumes_without_a_gap_or_a_duplicate(mosquitto, dsn, tmp_path):
    journal = tmp_path / "journal.db"
    first = _store_process(mosquitto.port, dsn)
    try:
        probe = Publisher(mosquitto.port)
        try:
            wait_until(lambda: _probed(probe, dsn), 120, "the store subscribed", every=0.5)
        finally:
            probe.close()
        runner = threading.Thread(target=_run, args=(_config(mosquitto.port), journal), kwargs={"rounds": 6,
                                                                                              "seed": 7})
        runner.start()
        try:
            wait_until(lambda: _last_seq(dsn) > 200, 120, "a first part stored")
            first.send_signal(signal.SIGKILL)  # no goodbye: messages taken and not acknowledged come again
            first.wait(30)
        finally:
            runner.join(300)
        second = _store_process(mosquitto.port, dsn)
        try:
            assert_stored_as_journaled(dsn, journal)
        finally:
            second.send_signal(signal.SIGTERM)
            out, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert "records stored" in out
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate(timeout=30)


def test_a_database_restart_mid_run_loses_nothing_and_stores_nothing_twice(mosquitto, postgres, dsn, tmp_path):
    journal = tmp_path / "journal.db"
    with store_running(mosquitto.port, dsn) as store:
        runner = threading.Thread(target=_run, args=(_config(mosquitto.port), journal), kwargs={"rounds": 6,
                                                                                              "seed": 9})
        runner.start()
        try:
            wait_until(lambda: _last_seq(dsn) > 200, 120, "a first part stored")
            postgres.restart("immediate")  # a crash of the database: the batch in flight rolled back
        finally:
            runner.join(300)
        assert_stored_as_journaled(dsn, journal)
        assert store.batches > 0


def test_a_store_whose_broker_dropped_its_queued_messages_shows_the_table_behind_by_the_records_missed(
        tmp_path_factory, dsn, tmp_path):
    """Mosquitto's ``max_queued_messages`` (1000 by default; 20 here) drops what a store away missed beyond it. The
    table then idle, no later record shows a gap; its retained ``meters`` says which public record it had published
    when its last round closed: the store shows itself behind by the journal's records after its last stored up to
    that one, and ``floor report`` says so (docs/backoffice.md, "Exactly once")."""
    from tests.conftest import own_broker

    broker = own_broker(tmp_path_factory.mktemp("mosquitto"), max_queued=20)
    journal = tmp_path / "journal.db"
    try:
        with store_running(broker.port, dsn):
            pass  # the store's session made: the broker queues for it from now on
        _run(_config(broker.port), journal, rounds=2, seed=11)  # hundreds of messages while the store is away
        with store_running(broker.port, dsn):
            probe = Publisher(broker.port)
            try:  # the probe's message follows every message the broker kept for the store
                wait_until(lambda: _probed(probe, dsn), 120, "the store subscribed and its queue taken", every=0.5)
            finally:
                probe.close()
            closing = _closing_meters_kept(dsn, journal)  # the retained one, sent at the subscription
        state = _state(dsn)
    finally:
        broker.stop()
    records = list(read_records(journal))
    published = max(r["seq"] for r in records if r["seq"] <= closing and public_record(r) is not None)
    missed = [r for r in records if state["last_seq"] < r["seq"] <= published]
    assert 0 < state["last_seq"] < published  # a part stored, the rest dropped by the broker
    assert any(public_record(r) is not None for r in missed)  # public records the store lacks
    assert (state["open_gaps"], state["held"], state["behind"]) == (0, 0, len(missed))
    shown = crisscross("floor", "report", "--dsn", dsn, "--table", TABLE, "--day-start", "06:00", "--jurisdiction",
                       "ny", "--period", "lifetime")
    assert shown.returncode in (0, 1), shown.stderr
    assert f"NOTE: the store is behind the table by {len(missed)} journal records" in shown.stdout
    assert re.search(rf"^store_behind +{len(missed)}$", shown.stdout, re.MULTILINE), shown.stdout


def test_a_store_that_never_reached_the_broker_nor_the_database_says_so_and_exits_1(tmp_path):
    """controller/floor/backoffice_tools.py: a job that runs the store for a while must not read success when
    nothing could be stored (a port nobody listens on for both)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nobody listens there
    run = subprocess.run([sys.executable, "-m", "controller", "floor", "store", "--broker", "127.0.0.1", "--port",
                          str(port), "--dsn", f"postgresql://nobody@127.0.0.1:{port}/x", "--for", "2"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert "never reached the broker nor the database" in run.stderr and "Traceback" not in run.stderr


# ---------------------------------------------------------------------------------------------- hostile numbers
def test_numbers_beyond_the_columns_from_one_table_never_stop_the_store_for_the_others(dsn):
    """A table's record with an amount of 10^30, a round beyond an ``integer`` and ``meters`` messages with seqs
    beyond a ``bigint`` (a defect or a hostile table): the batch is written, the record stored with its figures
    unread, the message not in the floor's format skipped; the other table's records and figures go on."""
    from controller.floor.store_write import Writer
    from controller.floor.topics import MAX_AMOUNT

    def record(table, seq, type_, data, round_no=1):
        return (table, "events", topics.encode({"table": table, "after": seq - 1, "record": {
            "seq": seq, "time": "2026-12-04T14:10:06+00:00", "kind": "record", "round": round_no, "type": type_,
            "data": data}}))

    def settled(amount, net):
        return {"round_no": 1, "seat": 1, "settlement": {"net": net, "wagers": {
            "ante_across": {"amount": amount, "outcome": "lose", "net": -amount}}}}

    huge = 10**30
    messages = [
        record("BAD", 1, "RoundOpened", {"round_no": 1, "test": False}),
        record("BAD", 2, "SeatSettled", settled(huge, -huge)),
        record("BAD", 3, "SeatSettled", settled(MAX_AMOUNT + 1, 0)),
        record("BAD", 4, "CardsRevealed", {"n": 4}, round_no=2**40),
        ("BAD", "meters", topics.encode({"table": "BAD", "seq": huge, "round": 1, "meters": {}})),
        ("BAD", "meters", topics.encode({"table": "BAD", "seq": 4, "round": 2**40, "public": huge, "meters": {}})),
        record("GOOD", 1, "RoundOpened", {"round_no": 1, "test": False}),
        record("GOOD", 2, "SeatSettled", settled(500, -500)),
    ]
    writer = Writer()
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            outcome = writer.write(conn, messages)
        states = store_states(conn)
        drop = dict(conn.execute("SELECT table_id, sum(drop) FROM figures GROUP BY table_id").fetchall())
        kept = conn.execute("SELECT seq, round_no, public_seq FROM meters WHERE table_id = 'BAD'").fetchall()
        rounds = dict(conn.execute("SELECT seq, round_no FROM records WHERE table_id = 'BAD'").fetchall())
    assert (outcome.stored, outcome.foreign) == (6, 1)
    assert states["BAD"]["last_seq"] == 4 and states["BAD"]["unread"] == 2  # 10^30 and MAX_AMOUNT + 1
    assert states["GOOD"]["last_seq"] == 2 and drop == {"GOOD": 500}
    assert kept == [(4, None, None)] and rounds[4] is None  # beyond the columns: kept as unknown


def test_a_record_under_a_stored_seq_that_is_not_the_one_stored_is_a_conflict_not_a_repeat(dsn):
    """A journal replaced under the same table id publishes its records from seq 1 again: they are not repeats
    of the records stored (another time, type or data), so each is dropped and the first written to ``gaps`` as a
    ``conflict`` (one open conflict a table), which the store's state shows; the same record again is a
    repeat."""
    from controller.floor.store_write import Writer

    def record(seq, n, time="2026-12-04T14:10:06.942+00:00"):
        return ("T-1", "events", topics.encode({"table": "T-1", "after": seq - 1, "record": {
            "seq": seq, "time": time, "kind": "record", "round": 1, "type": "CardsRevealed", "data": {"n": n}}}))

    writer = Writer()
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            writer.write(conn, [record(1, 1), record(2, 2), record(3, 3)])
        with conn.transaction():
            again = writer.write(conn, [record(2, 2)])  # the same record: a repeat after a reconnection
        with conn.transaction():
            other = writer.write(conn, [record(1, 1, time="2026-12-05T09:00:00+00:00"), record(2, 99)])
        gaps = conn.execute("SELECT seq, kind FROM gaps WHERE table_id = 'T-1' ORDER BY seq").fetchall()
        state = store_states(conn)["T-1"]
        kept = conn.execute("SELECT data FROM records WHERE table_id = 'T-1' AND seq = 2").fetchone()[0]
    assert (again.repeats, again.gaps) == (1, 0)
    assert (other.repeats, other.gaps) == (0, 1)
    assert gaps == [(1, "conflict")] and state["open_gaps"] == 1 and state["last_seq"] == 3
    assert kept == {"n": 2}  # what was stored stays


def test_no_message_a_table_can_publish_has_the_database_refuse_a_batch(dsn):
    """What PostgreSQL's ``jsonb`` or a column refuses (``NaN``, ``Infinity``, ``1e400``, a NUL or a lone
    surrogate in text, nesting 100,000 deep, a ``true`` for a seq) is not in the floor's format: skipped and
    counted, never a batch refused again and again with every table's records in it. A time whose UTC is beyond
    year 9999 stores the record, its figures unread, and the pit page still reads every table; a theoretical win
    written with an exponent is unread at once, not minutes of the store's thread."""
    from controller.floor.serve_data import PitData
    from controller.floor.store_write import Writer

    def raw(table, text):
        return (table, "events", text.encode())

    good = [(("GOOD", "events", topics.encode({"table": "GOOD", "after": seq - 1, "record": {
        "seq": seq, "time": "2026-12-04T14:10:06+00:00", "kind": "record", "round": 1, "type": "CardsRevealed",
        "data": {"n": seq}}}))) for seq in (1, 2)]
    head = '{"table":"EVIL","after":0,"record":{"seq":1,"time":"2026-12-04T14:10:06+00:00","kind":"event","round":1,'
    hostile = [raw("EVIL", head + '"type":"ButtonPressed","data":{"button":' + value + '}}}')
               for value in ("NaN", "Infinity", "1e400", '"pa\\u0000id"', '"\\ud800"', "[" * 100000 + "]" * 100000)]
    hostile.append(raw("EVIL", '{"table":"EVIL","after":false,"record":{"seq":true,"time":"2026-12-04T14:10:06+00:00",'
                               '"kind":"event","round":1,"type":"ButtonPressed","data":{}}}'))
    far = ("FAR", "events", topics.encode({"table": "FAR", "after": 0, "record": {
        "seq": 1, "time": "9999-12-31T23:59:00-14:00", "kind": "record", "round": 1, "type": "RoundClosed",
        "data": {"round_no": 1, "totals": {"wagered": 0, "player_net": 0}}}}))
    rated = ("RATED", "events", topics.encode({"table": "RATED", "after": 0, "record": {
        "seq": 1, "time": "2026-12-04T14:10:06+00:00", "kind": "record", "round": 1, "type": "SessionRated",
        "data": {"seat": 1, "player": "", "first_round": 1, "last_round": 1, "rounds": 1, "actual_win": 0,
                 "theoretical_win": "1e30000000", "ended": False, "handle": {}}}}))
    writer = Writer()
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            outcome = writer.write(conn, [good[0], *hostile, far, rated, good[1]])
        states = store_states(conn)
        pit = PitData(dt.time(6), tz=dt.timezone.utc).poll(conn)
    assert (outcome.stored, outcome.foreign) == (4, len(hostile))
    assert "EVIL" not in states and states["GOOD"]["last_seq"] == 2
    assert (states["FAR"]["unread"], states["RATED"]["unread"]) == (1, 1)
    assert {row["table"] for row in pit["tables"]} == {"GOOD", "FAR", "RATED"}


def test_a_store_stopped_with_messages_it_never_wrote_counts_them(dsn):
    """``FloorStore.close`` gives unacknowledged messages back to the broker and counts them (``unwritten``), which
    ``floor store`` reports with status 1 (docs/backoffice.md)."""
    from controller.floor.store import Received

    from tests.test_floor import _closed_port

    store = FloorStore(FloorConfig(True, "127.0.0.1", _closed_port()), dsn)
    now = dt.datetime.now(dt.timezone.utc)
    store.pending += [Received(1, 1, "T", "events", b"{}", now, False), Received(2, 1, "T", "events", b"{}", now, False)]
    store.close()
    assert (store.unwritten, store.pending) == (2, [])


def test_a_message_the_database_refuses_alone_is_skipped_and_the_other_tables_go_on(mosquitto, dsn, monkeypatch,
                                                                                       caplog):
    """Whatever the checks miss: a batch the database refuses for its data is written again one message a
    transaction, and the one message it refuses alone (here a table's record made to fail as a ``DataError``
    would) is skipped, acknowledged and counted; every other message of the batch, and of the other tables, is
    stored."""
    from controller.floor.store_write import Writer

    write = Writer.write

    def refusing(self, conn, messages):
        if any(b'"n": 13' in payload or b'"n":13' in payload for _, _, payload in messages):
            raise psycopg.errors.DataError("a value the database refuses")
        return write(self, conn, messages)

    monkeypatch.setattr(Writer, "write", refusing)
    publisher = Publisher(mosquitto.port)
    try:
        with store_running(mosquitto.port, dsn) as store:
            publisher.send("T-1", (1, 0), (2, 1))
            publisher.send("T-13", (13, 12))  # the record the database refuses
            publisher.send("T-1", (3, 2), (4, 3))
            wait_until(lambda: _last_seq(dsn, "T-1") == 4 and store.skipped == 1, 60, "T-1 stored past the refusal")
            assert store.total.foreign == 1
    finally:
        publisher.close()
    assert _query(dsn, "SELECT seq FROM records WHERE table_id = 'T-1' ORDER BY seq") == [(1,), (2,), (3,), (4,)]
    assert _query(dsn, "SELECT count(*) FROM records WHERE table_id = 'T-13'") == [(0,)]
    assert "table T-13: a events message the database refuses (DataError: a value the database refuses)" in caplog.text


def writer_role(dsn: str, role: str = "store_writer") -> str:
    """A login role ``role`` that may do in ``dsn``'s database (migrated here) what the store does there: its
    connection string. Roles are the server's: made once, granted in each database."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        conn.execute(f"DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') THEN "
                     f"CREATE ROLE {role} LOGIN; END IF; END$$")
        conn.execute(f"GRANT USAGE, CREATE ON SCHEMA public TO {role}")
        conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}")
        conn.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
    return dsn.replace("postgresql://postgres@", f"postgresql://{role}@", 1)


def test_a_database_that_refuses_the_stores_writes_for_its_own_reasons_has_nothing_skipped(mosquitto, dsn):
    """A privilege revoked (or a database gone read-only) is no message's defect: the batch is kept, nothing of it
    acknowledged or skipped, and written once the database takes it again (docs/backoffice.md, "Exactly once")."""
    writer = writer_role(dsn)
    publisher = Publisher(mosquitto.port)
    try:
        with store_running(mosquitto.port, writer) as store:
            publisher.send("T-1", (1, 0))
            wait_until(lambda: _last_seq(dsn, "T-1") == 1, 60, "the first record stored")
            _execute(dsn, "REVOKE INSERT, UPDATE ON ALL TABLES IN SCHEMA public FROM store_writer")
            publisher.send("T-1", (2, 1), (3, 2))
            wait_until(lambda: store.refused >= 2, 60, "the database refusing the batch again")
            assert (store.skipped, store.total.foreign, _last_seq(dsn, "T-1")) == (0, 0, 1)
            assert len(store.pending) == 2  # kept, unacknowledged
            _execute(dsn, "GRANT INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO store_writer")
            wait_until(lambda: _last_seq(dsn, "T-1") == 3, 60, "the batch written once the privilege is back")
            assert store.skipped == 0
    finally:
        publisher.close()
    assert _query(dsn, "SELECT seq FROM records WHERE table_id = 'T-1' ORDER BY seq") == [(1,), (2,), (3,)]


def test_a_table_id_too_long_for_the_index_is_skipped_and_the_other_tables_go_on(mosquitto, dsn):
    """A topic level of 8,000 characters (beyond a table id, and beyond a btree's index row: PostgreSQL's program
    limit, SQLSTATE 54000): that message alone is skipped and counted; the others are stored."""
    import random
    import string

    far = "".join(random.Random(7).choices(string.ascii_letters, k=8000))
    publisher = Publisher(mosquitto.port)
    try:
        with store_running(mosquitto.port, dsn) as store:
            publisher.send("T-1", (1, 0))
            publisher.send(far, (1, 0))
            publisher.send("T-1", (2, 1))
            wait_until(lambda: _last_seq(dsn, "T-1") == 2 and store.total.foreign == 1, 60,
                       "T-1 stored past the long id")
    finally:
        publisher.close()
    assert _query(dsn, "SELECT table_id FROM tables") == [("T-1",)]


def test_a_message_whose_topic_is_not_utf8_is_skipped_counted_and_the_records_around_it_are_stored(dsn, caplog):
    """A PUBLISH whose topic is not UTF-8 text (MQTT 5.0, 1.5.4; only a broken broker sends one, Mosquitto refuses
    it itself: a scripted broker, ``tests.fake_mqtt``) is not in the floor's format: skipped, counted, acknowledged
    in its turn (it never comes again), and the table's records before and after it are stored."""
    from tests.fake_mqtt import FakeBroker

    broker = FakeBroker([(b"crisscross/T-1/events", _event(1, 0)), (b"crisscross/\xff\xfe/events", _event(2, 1)),
                         (b"crisscross/T-1/events", _event(2, 1))], subscriptions=3)
    try:
        with store_running(broker.port, dsn) as store:
            broker.wait(lambda: broker.pubacks == [1, 2, 3] and store.total.foreign == 1, 60,
                        "every message acknowledged in order, the one counted")
            assert (_last_seq(dsn, "T-1"), store.skipped) == (2, 0)
            assert broker.connections == 1  # never stopped, never connected again
    finally:
        broker.close()
    assert _query(dsn, "SELECT seq FROM records WHERE table_id = 'T-1' ORDER BY seq") == [(1,), (2,)]
    assert "a message whose topic is not UTF-8 text is not in the floor's format" in caplog.text


def test_a_message_on_a_topic_not_the_stores_is_acknowledged_in_its_turn_after_the_records_before_it(dsn):
    """MQTT 5.0, 4.6 [MQTT-4.6.0-2]: a receiver sends the PUBACKs of QoS 1 messages in the order the PUBLISHes
    came. Record 1 of T-1, a message on T-1's ``alerts`` (a kind the store does not keep) and one under another
    prefix (a subscription an older store left in the session), then record 2, while the database cannot be
    reached, so that no commit of the records can happen: once it can, the PUBACKs are 1, 2, 3, 4, the two
    messages not the store's neither stored nor counted as not in the floor's format."""
    from tests.fake_mqtt import FakeBroker

    reachable = threading.Event()

    def connect_db(target):
        if not reachable.is_set():
            raise psycopg.OperationalError("the database is held back by the test")
        return psycopg.connect(target, autocommit=True)

    broker = FakeBroker([(b"crisscross/T-1/events", _event(1, 0)),
                         (b"crisscross/T-1/alerts", b'{"table":"T-1","record":{"seq":2}}'),
                         (b"elsewhere/T-1/events", _event(2, 1)),
                         (b"crisscross/T-1/events", _event(2, 1))], subscriptions=3)
    try:
        with store_running(broker.port, dsn, connect_db=connect_db) as store:
            # every message taken by the store: waiting for the database, or (acknowledged at once) at the broker
            broker.wait(lambda: len(store.pending) + len(broker.pubacks) == 4, 30, "the four messages taken")
            reachable.set()
            broker.wait(lambda: len(broker.pubacks) == 4, 60, "every message acknowledged")
            assert broker.pubacks == [1, 2, 3, 4]
            assert (store.total.stored, store.total.foreign, store.skipped) == (2, 0, 0)
    finally:
        broker.close()
    assert _query(dsn, "SELECT seq FROM records WHERE table_id = 'T-1' ORDER BY seq") == [(1,), (2,)]


def _record(table: str, seq: int, after: int, data: dict) -> tuple[str, str, bytes]:
    """An ``events`` message of ``table`` written by hand: record ``seq`` following ``after``, carrying ``data``."""
    return (table, "events", topics.encode({"table": table, "after": after, "record": {
        "seq": seq, "time": "2026-12-04T14:10:06.942+00:00", "kind": "record", "round": 1, "type": "CardsRevealed",
        "data": data}}))


@pytest.mark.parametrize("first", ["forged", "genuine"])
def test_another_record_under_a_seq_held_past_a_gap_is_a_conflict_whichever_comes_first(dsn, first):
    """docs/backoffice.md "Exactly once": another record under a seq already taken is a ``conflict`` written to
    ``gaps``, whether the record taken is stored or held past a gap. Record 1, then two different records 6
    (after 5) while records 2 to 5 are missing, then 2 to 5: the first record 6 heard is kept, the other
    dropped and written to ``gaps`` as a conflict that stays open once the gap is filled; neither is a repeat."""
    from controller.floor.store_write import Writer

    forged, genuine = _record("G2", 6, 5, {"forged": True}), _record("G2", 6, 5, {"n": 6})
    pair = [forged, genuine] if first == "forged" else [genuine, forged]
    writer = Writer()
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            writer.write(conn, [_record("G2", 1, 0, {"n": 1})])
        with conn.transaction():
            outcome = writer.write(conn, pair)
        with conn.transaction():
            writer.write(conn, [_record("G2", seq, seq - 1, {"n": seq}) for seq in (2, 3, 4, 5)])
        kept = conn.execute("SELECT data FROM records WHERE table_id = 'G2' AND seq = 6").fetchone()[0]
        gaps = conn.execute("SELECT seq, kind, filled_at IS NULL FROM gaps WHERE table_id = 'G2' ORDER BY kind"
                            ).fetchall()
        state = store_states(conn)["G2"]
        repeats = conn.execute("SELECT repeats FROM tables WHERE table_id = 'G2'").fetchone()[0]
    assert kept == ({"forged": True} if first == "forged" else {"n": 6})
    assert (outcome.held, outcome.repeats) == (1, 0)
    assert gaps == [(6, "conflict", True), (6, "missing", False)]
    assert (state["last_seq"], state["held"], state["open_gaps"], repeats) == (6, 0, 1, 0)


def test_the_same_record_again_under_a_seq_held_past_a_gap_is_a_repeat(dsn):
    """The record held past a gap heard again (a publisher's resend) is a repeat, as one stored is: no conflict."""
    from controller.floor.store_write import Writer

    writer = Writer()
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            outcome = writer.write(conn, [_record("G3", 1, 0, {"n": 1}), _record("G3", 3, 2, {"n": 3}),
                                          _record("G3", 3, 2, {"n": 3})])
        with conn.transaction():
            writer.write(conn, [_record("G3", 2, 1, {"n": 2})])
        kinds = conn.execute("SELECT kind, filled_at IS NULL FROM gaps WHERE table_id = 'G3'").fetchall()
        state = store_states(conn)["G3"]
    assert (outcome.held, outcome.repeats, outcome.gaps) == (1, 1, 1)
    assert kinds == [("missing", False)] and (state["last_seq"], state["open_gaps"]) == (3, 0)


def test_records_before_the_join_point_are_counted_apart_not_as_repeats(dsn):
    """A store begun with ``--join-late`` hears records 11-20 of T3 (it joins after 10), then 1-10, then 1-20
    again: the ten stored records heard again are repeats; records 1-10, heard twice and never stored, are
    before the join (20), not repeats."""
    from controller.floor.store_write import Writer

    def run(first, last):
        return [_record("T3", seq, seq - 1, {"n": seq}) for seq in range(first, last + 1)]

    writer = Writer(join_late=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            outcome = writer.write(conn, run(11, 20) + run(1, 10) + run(1, 20))
        stored, repeats, joined = conn.execute("SELECT stored, repeats, joined FROM tables WHERE table_id = 'T3'"
                                               ).fetchone()
    assert (stored, repeats, joined) == (10, 10, 10)
    assert (outcome.stored, outcome.repeats, outcome.before_join) == (10, 10, 20)


#: Table ids no table.yaml accepts (controller.game.table: a format character such as a direction override or a
#: zero-width space, a newline, above 64 characters with the simulated suffix, a topic level's ``/``).
NOT_TABLE_IDS = ("T\u202eX", "Z\u200bW", "A\nB", "x" * 5000, "x" * (64 + len(topics.SIMULATED_SUFFIX) + 1), "A/B")


def test_a_message_on_a_topic_whose_table_id_is_not_one_is_skipped_and_counted(dsn):
    """The store applies the table-id rule of table.yaml and of the reports: records, meters and statuses on a
    topic whose id is not one are skipped and counted as not in the floor's format; a good table beside them is
    stored."""
    from controller.floor.store_write import Outcome, Writer

    meters = topics.encode({"table": "x", "seq": 1, "round": 1, "meters": {}, "public": 1})
    writer = Writer()
    statuses = Outcome()
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            outcome = writer.write(conn, [m for bad in NOT_TABLE_IDS for m in (
                (bad, "events", _event(1, 0)), (bad, "meters", meters))] + [("T-1", "events", _event(1, 0))])
            for bad in NOT_TABLE_IDS:
                writer.status(conn, bad, "crisscross/x/status", topics.ONLINE, dt.datetime.now(dt.timezone.utc),
                              True, statuses)
        kept = {name: conn.execute(f"SELECT DISTINCT table_id FROM {name}").fetchall()
                for name in ("tables", "records", "meters", "table_status")}
    assert (outcome.stored, outcome.foreign) == (1, 2 * len(NOT_TABLE_IDS))
    assert (statuses.statuses, statuses.foreign) == (0, len(NOT_TABLE_IDS))
    assert kept == {"tables": [("T-1",)], "records": [("T-1",)], "meters": [], "table_status": []}


def test_the_store_the_pit_page_and_table_yaml_agree_on_what_a_table_id_is():
    """One rule (``controller.game.table.table_id_problem``): an id table.yaml accepts, with the simulated
    suffix, is one the store keeps and the page's report answers; one it refuses is refused by both."""
    from controller.control.checks import HTTPError
    from controller.floor.serve import _table
    from controller.game.table import MAX_TABLE_ID, table_id_problem

    accepted = ("T-1", "CC\u00a001", "Mesa ñ 7", "C" * MAX_TABLE_ID + topics.SIMULATED_SUFFIX)
    for table in accepted:
        assert table_id_problem(table.removesuffix(topics.SIMULATED_SUFFIX)) is None
        assert topics.table_id_problem(table) is None and _table({"table": table}) == table
    for table in NOT_TABLE_IDS:
        assert topics.table_id_problem(table) is not None
        with pytest.raises(HTTPError, match="table must be a table id"):
            _table({"table": table})


def test_a_meters_message_beyond_what_its_table_can_have_published_never_shows_the_store_behind(dsn):
    """docs/backoffice.md "Exactly once": a table's ``meters`` names the last public record it published. One
    naming seq 2**63-1 (``public`` 2**63-2) when the store holds records 1-3 is not the table's: skipped and
    counted, never a table behind by 9.2e18 for good (``meters`` rows are written once). A genuine one after it,
    naming record 5, shows the store behind by 5 - 3 = 2 records."""
    from controller.floor.store_write import MAX_AHEAD, Writer

    def meters(seq, public):
        return ("M1", "meters", topics.encode({"table": "M1", "seq": seq, "round": 1, "meters": {}, "public": public}))

    writer = Writer()
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            writer.write(conn, [_record("M1", seq, seq - 1, {"n": seq}) for seq in (1, 2, 3)])
        with conn.transaction():
            forged = writer.write(conn, [meters(2**63 - 1, 2**63 - 2), meters(3 + MAX_AHEAD + 1, 3)])
        before = store_states(conn)["M1"]["behind"]
        with conn.transaction():
            genuine = writer.write(conn, [meters(5, 5)])
        after = store_states(conn)["M1"]["behind"]
    assert (forged.foreign, before) == (2, 0)
    assert (genuine.foreign, after) == (0, 2)


def _meters_stub(table: str, seq: int, public: int, full: int) -> bytes:
    """A ``meters`` message as the publisher sends it when it is larger than the broker takes (docs/floor.md,
    "Topics"): ``meters`` null and ``"oversized": full``, the full payload's size in bytes."""
    return topics.encode({"table": table, "seq": seq, "round": 2, "public": public, "meters": None, "oversized": full})


def test_a_meters_message_sent_as_a_marked_stub_is_kept_with_its_meters_unknown_and_said(dsn, caplog):
    """A ``meters`` marked stub was counted as not in the floor's format and lost, with the ``public`` it names.
    Now: kept with its meters NULL (not known, never zero) and its size, counted apart, logged for each table
    with the table and the seq; heard again (retained, sent at each subscription) it is neither kept nor counted
    twice. Records 1-3 of each table stored: M2's stub names record 5, M3's record 4, so the store is behind by
    5 - 3 = 2 and 4 - 3 = 1 records."""
    from controller.floor.store_write import Writer

    caplog.set_level(logging.WARNING, logger="controller.floor.store_write")
    writer = Writer()
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        with conn.transaction():
            writer.write(conn, [_record(t, seq, seq - 1, {"n": seq}) for t in ("M2", "M3") for seq in (1, 2, 3)])
        with conn.transaction():
            first = writer.write(conn, [("M2", "meters", _meters_stub("M2", 5, 5, 70000)),
                                        ("M3", "meters", _meters_stub("M3", 4, 4, 1 << 20))])
        assert first.foreign == 0  # in the floor's format
        with conn.transaction():
            again = writer.write(conn, [("M2", "meters", _meters_stub("M2", 5, 5, 70000))])
        rows = conn.execute("SELECT table_id, seq, round_no, meters, public_seq FROM meters ORDER BY table_id"
                            ).fetchall()
        behind = {table: state["behind"] for table, state in store_states(conn).items()}
    assert (first.meters_unknown, again.meters_unknown, again.foreign) == (2, 0, 0)
    assert rows == [("M2", 5, 2, None, 5), ("M3", 4, 2, None, 4)]
    assert behind == {"M2": 2, "M3": 1}
    said = [r.getMessage() for r in caplog.records if "marked stub" in r.getMessage()]
    assert len(said) == 2 and "table M2: the meters of record 5 " in said[0] and "70000 bytes" in said[0] and \
        "table M3: the meters of record 4 " in said[1] and f"{1 << 20} bytes" in said[1], said


def test_floor_store_says_how_many_meters_it_kept_unknown_and_stores_the_records_around_them(dsn):
    """``crisscross floor store`` hearing record 1, a ``meters`` marked stub and record 2 of T-1 (a scripted broker):
    both records stored, the stub kept, every message acknowledged in order, and its closing line counts the stub
    apart from the messages not in the floor's format."""
    from tests.fake_mqtt import FakeBroker

    broker = FakeBroker([(b"crisscross/T-1/events", _event(1, 0)),
                         (b"crisscross/T-1/meters", _meters_stub("T-1", 2, 1, 80000)),
                         (b"crisscross/T-1/events", _event(2, 1))], subscriptions=3)
    try:
        result = crisscross("floor", "store", "--broker", "127.0.0.1", "--port", broker.port, "--dsn", dsn,
                            "--for", "3")
        broker.wait(lambda: broker.pubacks == [1, 2, 3], 10, "every message acknowledged in order")
    finally:
        broker.close()
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ("1 table(s): 2 records stored, 0 repeats dropped, 0 held past a gap, 0 gap(s), 0 "
                             "message(s) not in the floor's format, 1 meters message(s) kept with the meters "
                             "unknown (marked stubs)\n")
    assert _query(dsn, "SELECT seq, meters, public_seq FROM meters WHERE table_id = 'T-1'") == [(2, None, 1)]
