"""The back office at scale: many tables into one Mosquitto and one ``crisscross floor store``, and the report over
ten million records (docs/backoffice.md, "Speed"; figures in docs/performance.md, "The back office").

    python -m bench.bench_floor_store [--tables 200] [--minutes 10] [--rate 4] [--processes 2] [--down 3]
                                      [--store-down 2] [--records 10000000] [--days 365] [--repeats 3]
                                      [--part both|floor|report] [--dsn DSN] [--folder DIR]

Part one, the floor (``floor``):

1. A template: one simulated table with the live rating (``Service`` with ``--simulate --rating``) plays enough
   rounds for the run (``bench.floor_tables.play_template``); its commits, with the checkpoint of each round's
   close, are what every table commits.
2. A PostgreSQL of its own (``hil.postgres``, with ``fsync`` on as a store's server runs, and
   ``track_commit_timestamp`` on so that each record's commit time can be read), or the server of ``--dsn``; a
   Mosquitto of its own (``hil.broker``); the real store as a process of its own (``python -m controller floor
   store --broker ... --dsn ...``), subscribed before any table publishes.
3. ``--tables`` tables (``bench.floor_tables.tables_process``), each a journal store and the real publisher,
   shared among ``--processes`` processes, each table committing the template's inputs at ``--rate`` records per
   second on a schedule of its own, for ``--minutes`` minutes. The tables' first commits are spread over the
   time of one round (the ramp; at most a tenth of the run): no two tables deal the same moment of a round at
   once, as on a real floor.
   ``--rate`` 4: a real table journals about 190 records a round (160 of them public) and deals a round a
   minute or so; 4 records a second is a round every 48 s, 75 rounds an hour: a busy table, full and fast.
4. At 40% of the run Mosquitto is stopped (SIGTERM: it saves the sessions), kept down ``--down`` seconds and
   started again; at 70% the store is killed (SIGKILL: no goodbye, no flush) and started again after
   ``--store-down`` seconds. The tables play on throughout.
5. Once every publisher has its journal acknowledged and the store holds every table's last public record, the
   store is stopped (SIGTERM) and each table's records in the database are compared with the public records of
   its journal (``controller.control.server.public_record``, one for one by seq: none missing, none twice, each
   ``after`` the seq before it, the same type, round, kind and data); no record held, no gap open.

Printed: the rate asked and the rate committed (against the schedule's records, the ramp's less); public records
stored per second over the run (first commit to the last record's database commit); the lag from a record's
commit in its journal (its ``time``) to the commit of the database transaction that stored it
(``pg_xact_commit_timestamp``; without commit timestamps on the server of ``--dsn``, the start of that
transaction, ``received_at``), p50/p99/max over steady play (records committed after the ramp and
``STEADY_MARGIN`` seconds or more before the broker's restart) and over all, and per minute of the run; the
counts of the check. When the tables fall behind their schedule by more than a tenth (the machine could not feed
them), a note says so.

Exit status 1 when a record is lost, stored twice, out of order or different, held or in an open gap (part
one), or the report's sums are not the copies' (part two); the speed goals are printed as met or not.

Part two, the report over ``--records`` records of one table (``report``): ``bench.floor_store_report``.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.floor_tables import (ROUND_ENDS, Feed, Template, pct, play_template, public_records, table_names,
                                 tables_process)
from hil.broker import Broker

#: The moments of the run (fractions of ``--minutes``) when the broker is restarted and the store killed.
BROKER_RESTART, STORE_KILL = 0.4, 0.7
#: Seconds before the broker's restart after which a record committed is not steady play (it may wait out the
#: restart).
STEADY_MARGIN = 5.0
#: Seconds between progress lines.
PROGRESS = 60.0
#: Lowest share of their schedule's records the tables may commit without a note that the run measured less than
#: asked.
KEEP_UP = 0.9


class Databases:
    """The PostgreSQL server of the benchmark: one of its own (``hil.postgres.Postgres``, ``fsync`` on,
    commit timestamps on), or the server of ``dsn`` (its user may create databases). ``create(name)`` makes a
    new database (dropped first when it exists) and returns its connection string; ``close`` drops those made
    on a server of ``dsn`` and stops a server of its own. ``commit_times``: whether the server keeps commit
    timestamps (``track_commit_timestamp``)."""

    def __init__(self, dsn: str | None) -> None:
        import psycopg

        self.given, self.made = dsn, []
        self.server = None
        if dsn is None:
            from hil.postgres import Postgres

            self.server = Postgres({"fsync": "on", "track_commit_timestamp": "on", "max_wal_size": "4GB",
                                    "shared_buffers": "256MB"})
            self.server.start()
            dsn = self.server.dsn()
        self.admin = dsn
        with psycopg.connect(dsn, autocommit=True) as conn:
            self.commit_times = conn.execute("SHOW track_commit_timestamp").fetchone()[0] == "on"
            self.version = conn.execute("SHOW server_version").fetchone()[0]

    def create(self, name: str) -> str:
        import psycopg
        from psycopg.conninfo import make_conninfo

        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        self.made.append(name)
        return make_conninfo(self.admin, dbname=name)

    def close(self) -> None:
        import psycopg

        if self.server is not None:
            self.server.remove()
            return
        with psycopg.connect(self.admin, autocommit=True) as conn:
            for name in self.made:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def load() -> str:
    """The load average of the machine (1, 5, 15 minutes), as ``uptime`` shows it."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


class StoreProcess:
    """``crisscross floor store`` as a process of its own (``python -m controller floor store``), its output in
    ``folder/store-N.out`` and ``.err``."""

    def __init__(self, folder: Path, port: int, dsn: str) -> None:
        self.folder, self.port, self.dsn = folder, port, dsn
        self.runs = 0
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.runs += 1
        with open(self.folder / f"store-{self.runs}.out", "w") as out, \
                open(self.folder / f"store-{self.runs}.err", "w") as err:
            self.process = subprocess.Popen([sys.executable, "-m", "controller", "floor", "store", "--broker",
                                             "127.0.0.1", "--port", str(self.port), "--dsn", self.dsn],
                                            stdout=out, stderr=err, stdin=subprocess.DEVNULL)

    def kill(self) -> None:
        """SIGKILL and wait."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(60)

    def stop(self) -> str:
        """SIGTERM, wait; the store's summary (its standard output). Raises ``RuntimeError`` when it failed."""
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(120)
        out = (self.folder / f"store-{self.runs}.out").read_text().strip()
        if code != 0:
            err = (self.folder / f"store-{self.runs}.err").read_text()[-2000:]
            raise RuntimeError(f"the store exited {code}: {out} {err}")
        return out

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


def wait_subscribed(port: int, dsn: str, timeout: float = 120.0) -> None:
    """Wait until the store keeps a probe's ``meters`` message (sent again every half second): it is
    subscribed and writing. Raises ``RuntimeError`` after ``timeout`` seconds."""
    import paho.mqtt.client as paho
    import psycopg

    from controller.floor import topics

    client = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            client.publish(topics.topic("crisscross", "probe", "meters"), topics.encode(
                {"table": "probe", "seq": 1, "round": None, "meters": {}}), qos=1).wait_for_publish(15)
            with psycopg.connect(dsn, autocommit=True) as conn:
                if conn.execute("SELECT 1 FROM pg_tables WHERE tablename = 'meters'").fetchone() and \
                        conn.execute("SELECT 1 FROM meters WHERE table_id = 'probe'").fetchone():
                    return
            time.sleep(0.5)
    finally:
        client.loop_stop()
        client.disconnect()
    raise RuntimeError(f"the store did not take a message within {timeout} s")


def stored(dsn: str) -> int:
    """Records the store holds, all tables."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT coalesce(sum(stored), 0) FROM tables").fetchone() if conn.execute(
            "SELECT 1 FROM pg_tables WHERE tablename = 'tables'").fetchone() else (0,)
    return int(row[0])


def floor_part(args: argparse.Namespace, folder: Path, databases: Databases, template: Template) -> int:
    """Part one (module docstring); the exit status."""
    import psycopg

    dsn = databases.create("bench_floor_store")
    names = table_names(args.tables)
    broker = Broker(folder / "broker")
    broker.start()
    store = StoreProcess(folder, broker.port, dsn)
    store.start()
    seconds = args.minutes * 60
    try:
        wait_subscribed(broker.port, dsn)
        ramp = min(template.records / rounds_of(template) / args.rate, seconds / 10) if args.rate else 0.0
        offsets = {name: ramp * i / len(names) for i, name in enumerate(names)}
        feed = Feed(broker.port, args.rate, seconds=seconds, timeout=args.timeout, offsets=offsets, log=folder)
        context = multiprocessing.get_context("spawn")
        go, ready, committed, results = (context.Event(), context.Value("q", 0), context.Value("q", 0),
                                         context.Queue())
        workers = [context.Process(target=tables_process, name=f"tables-{i}", args=(
            feed, folder, names[i::args.processes], template, go, ready, committed, results))
            for i in range(args.processes)]
        for worker in workers:
            worker.start()
        deadline = time.monotonic() + 300
        while ready.value < args.processes and time.monotonic() < deadline:
            time.sleep(0.1)
        print(f"load average before the run: {load()}")
        began = time.time()
        go.set()
        events: dict[str, tuple[float, float]] = {}
        loads = [os.getloadavg()[0]]
        progress_at = began + PROGRESS
        while time.time() < began + seconds:
            now = time.time()
            if "broker" not in events and now >= began + BROKER_RESTART * seconds:
                broker.restart(down=args.down)
                events["broker"] = (now, time.time())
            if "store" not in events and now >= began + STORE_KILL * seconds:
                store.kill()
                time.sleep(args.store_down)
                store.start()
                events["store"] = (now, time.time())
            if now >= progress_at:
                loads.append(os.getloadavg()[0])
                print(f"  {now - began:5.0f} s: {committed.value} records committed, {stored(dsn)} stored; "
                      f"load {load()}", flush=True)
                progress_at += PROGRESS
            time.sleep(0.2)
        outcomes = [results.get(timeout=args.timeout + 120) for _ in workers]
        for worker in workers:
            worker.join()
        expected = {name: public_records(folder / f"{name}.db") for name in names}
        last = {name: public[-1]["seq"] if public else 0 for name, public in expected.items()}
        deadline = time.monotonic() + args.timeout
        while time.monotonic() < deadline:
            with psycopg.connect(dsn, autocommit=True) as conn:
                heads = dict(conn.execute("SELECT table_id, last_seq FROM tables").fetchall())
            if all(heads.get(name, 0) >= last[name] for name in names):
                break
            time.sleep(1.0)
        loads.append(os.getloadavg()[0])
        summary = store.stop()
    finally:
        if store.alive():
            store.process.kill()
            store.process.wait()
        broker.stop()
    print(f"load average after the run: {load()} (1-minute load at each progress line: "
          f"{' '.join(f'{x:.1f}' for x in loads)})")
    return report_floor(args, dsn, databases, names, expected, outcomes, (began, seconds, ramp), events, summary)


def rounds_of(template: Template) -> int:
    """The rounds the template's commits close."""
    return sum(1 for group in template.groups for entry in group if entry[1] in ROUND_ENDS) or 1


def check_tables(conn: Any, names: list[str], expected: dict[str, list[dict]]) -> dict[str, int]:
    """Each table's records in the store against the public records of its journal: the counts of records
    ``lost``, stored ``twice``, ``foreign`` (in the store, not in the journal), ``broken`` (an ``after`` that is
    not the seq before it), ``different`` (type, round, kind or data); and the store's own ``repeats`` dropped,
    ``held`` past a gap, ``gaps`` found and ``open_gaps``."""
    found = dict.fromkeys(("lost", "twice", "foreign", "broken", "different"), 0)
    for name in names:
        rows = conn.execute("SELECT seq, after_seq, type, round_no, kind, data FROM records WHERE table_id = %s "
                            "ORDER BY seq", (name,)).fetchall()
        seqs = [row[0] for row in rows]
        journal = {p["seq"]: p for p in expected[name]}
        found["twice"] += len(seqs) - len(set(seqs))
        found["lost"] += len(set(journal) - set(seqs))
        found["foreign"] += len(set(seqs) - set(journal))
        found["broken"] += sum(1 for row, before in zip(rows, [0] + seqs) if row[1] != before)
        found["different"] += sum(1 for seq, _, type_, round_no, kind, data in rows if seq in journal and (
            type_, round_no, kind, data) != tuple(journal[seq][k] for k in ("type", "round", "kind", "data")))
    row = conn.execute("SELECT coalesce(sum(repeats), 0), coalesce(sum(held), 0), (SELECT count(*) FROM gaps), "
                       "(SELECT count(*) FROM gaps WHERE filled_at IS NULL), (SELECT count(*) FROM held) "
                       "FROM tables").fetchone()
    found.update(zip(("repeats", "held", "gaps", "open_gaps", "held_rows"), map(int, row)))
    return found


def report_floor(args: argparse.Namespace, dsn: str, databases: Databases, names: list[str],
                 expected: dict[str, list[dict]], outcomes: list[dict], run: tuple[float, float],
                 events: dict[str, tuple[float, float]], summary: str) -> int:
    """Check the store against the journals and print part one's figures (module docstring); the exit status.
    ``run``: when the tables were let go (``time.time()``), the seconds they were asked to play and the ramp's."""
    import psycopg

    stamp = "pg_xact_commit_timestamp(xmin)" if databases.commit_times else "received_at"
    with psycopg.connect(dsn, autocommit=True) as conn:
        found = check_tables(conn, names, expected)
        times = conn.execute(f"SELECT extract(epoch FROM time)::float8, extract(epoch FROM {stamp})::float8 "
                             f"FROM records WHERE table_id <> 'probe'").fetchall()
    began, seconds, ramp = run
    committed = sum(o["committed"] for o in outcomes)
    first, last = min(o["began"] for o in outcomes), max(o["ended"] for o in outcomes)
    asked = args.tables * args.rate
    reached = committed / max(last - began, seconds)
    scheduled = args.rate * sum(seconds - ramp * i / args.tables for i in range(args.tables))  # the ramp's less
    public = sum(map(len, expected.values()))
    stored_last = max(at for _, at in times)
    lags = sorted(at - t for t, at in times)
    steady = sorted(at - t for t, at in times if began + ramp <= t < events["broker"][0] - STEADY_MARGIN)
    end = max(stored_last, last)
    problems = sum(found[k] for k in ("lost", "twice", "foreign", "broken", "different", "held_rows", "open_gaps"))
    print(f"tables: {args.tables} in {args.processes} processes, {args.minutes:g} min at {args.rate:g} records/s "
          f"per table asked ({asked:g}/s in all); PostgreSQL {databases.version}"
          f"{'' if databases.given is None else ' of --dsn'}")
    late = max(o["late"] for o in outcomes)
    print(f"committed: {committed} journal records in {max(last - began, seconds):.1f} s = {reached:.0f} "
          f"records/s, {committed / scheduled:.2f} of the {scheduled:.0f} the schedule asked (the ramp's tables "
          f"began later; a feeder's commit at most {late:.1f} s behind its schedule)")
    print(f"publishers caught up: {all(o['acknowledged'] for o in outcomes)}; messages published (repeats "
          f"included): {sum(o['published'] for o in outcomes)}")
    (down, up), (killed, again) = events["broker"], events["store"]
    print(f"broker restarted at {down - began:.0f} s, down {up - down:.1f} s; store killed (SIGKILL) at "
          f"{killed - began:.0f} s, started again {again - killed:.1f} s later")
    print(f"the store started again, at its stop: {summary}")
    print(f"stored: {len(times)} public records of {public} journaled; lost {found['lost']}, stored twice "
          f"{found['twice']}, not in a journal {found['foreign']}, out of the after chain {found['broken']}, "
          f"different {found['different']}; repeats dropped by the store {found['repeats']}; held past a gap "
          f"{found['held_rows']}, gaps found {found['gaps']}, open {found['open_gaps']}")
    print(f"sustained: {len(times)} public records stored in {stored_last - first:.1f} s (first commit to the "
          f"last record's database commit) = {len(times) / (stored_last - first):.0f} records/s")
    what = "its database commit" if databases.commit_times else "the start of the transaction that stored it"
    print(f"lag from a record's journal commit to {what}:")
    print(f"  steady play (committed from {ramp:.0f} s, the ramp's end, to {STEADY_MARGIN:g} s before the broker's "
          f"restart, {len(steady)} records): p50 {pct(steady, 50)} p99 {pct(steady, 99)} max {pct(steady, 100)}")
    print(f"  all records (the restart, the kill and the catch-ups included): p50 {pct(lags, 50)} p99 {pct(lags, 99)} "
          f"max {pct(lags, 100)}")
    print("  by minute of the run (records committed in it: count, stored per second in it, lag p50 / p99 / max):")
    for minute in range(math.ceil((last - began) / 60)):
        low, high = began + 60 * minute, began + 60 * (minute + 1)
        mine = sorted(at - t for t, at in times if low <= t < high)
        rate = sum(1 for _, at in times if low <= at < min(high, last)) / (min(high, last) - low)
        print(f"    {minute + 1:3d}: {len(mine):7d}, {rate:6.0f}/s, {pct(mine, 50)} / {pct(mine, 99)} / "
              f"{pct(mine, 100)}")
    print(f"  after the last commit: {sum(1 for _, at in times if at >= last)} records stored in "
          f"{max(end - last, 0):.1f} s")
    if problems:
        print(f"FAILED: {problems} record(s) lost, stored twice, out of order, different, held or in an open gap")
    if committed < KEEP_UP * scheduled:
        print(f"NOTE: the tables committed {committed / scheduled:.2f} of the records their schedule asked: this "
              f"machine could not feed them at the rate asked")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("both", "floor", "report"), default="both")
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=4.0, help="journal records per second per table (a busy "
                                                                 "table: a round of ~190 records every 48 s)")
    parser.add_argument("--processes", type=int, default=2, help="processes the tables are shared among")
    parser.add_argument("--down", type=float, default=3.0, help="seconds the broker stays down")
    parser.add_argument("--store-down", type=float, default=2.0, help="seconds the killed store stays down")
    parser.add_argument("--records", type=int, default=10_000_000, help="records of the report's table")
    parser.add_argument("--days", type=int, default=365, help="gaming days the report's records are spread over")
    parser.add_argument("--template-rounds", type=int, default=40, help="rounds of the report's template")
    parser.add_argument("--repeats", type=int, default=3, help="times each report is timed")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=600.0, help="longest the catch-up at the end may take (s)")
    parser.add_argument("--dsn", default=None, help="a PostgreSQL server whose user may create databases (the "
                                                    "benchmark's own are made and dropped there); default: a "
                                                    "server of its own")
    parser.add_argument("--folder", type=Path, default=None, help="keep the journals and the logs (the tables' "
                                                                  "publishers', the store's, the broker's) here")
    args = parser.parse_args(argv)
    if args.tables < 1 or args.minutes <= 0 or args.rate < 0 or args.processes < 1 or args.records < 1:
        parser.error("--tables, --minutes, --processes and --records must be above 0, --rate at least 0")
    print(f"command: python -m bench.bench_floor_store {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"load average at the start: {load()}")
    folder = args.folder or Path(tempfile.mkdtemp(prefix="floor-store-"))
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    databases = Databases(args.dsn)
    status = 0
    try:
        rounds = args.template_rounds if args.part == "report" else max(
            args.template_rounds, math.ceil(args.minutes * 60 * args.rate / 150) + 1)
        template = play_template(folder, rounds, args.seed, rating=True)
        print(f"template: {rounds} rounds of a rated simulated table, {template.records} journal records in "
              f"{len(template.groups)} commits ({statistics.mean(map(len, template.groups)):.1f} records a commit)")
        if args.part in ("both", "floor"):
            status |= floor_part(args, folder, databases, template)
        if args.part in ("both", "report"):
            from bench.floor_store_report import report_part

            status |= report_part(args, databases.create("bench_floor_report"), template)
    finally:
        databases.close()
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"wall clock: {time.monotonic() - started:.0f} s; load average at the end: {load()}")
    return status


if __name__ == "__main__":
    sys.exit(main())
