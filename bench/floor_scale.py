"""Scale test of the floor: many tables publishing through one Mosquitto, the broker restarted mid-run.

    python -m bench.floor_scale [--tables 50] [--rounds 10] [--rate 40] [--down 2] [--processes 2] [--repeats 5]
                                [--folder DIR]

1. A template: one simulated table (``Service`` with ``--simulate``) plays ``--rounds`` rounds into a journal.
2. ``--tables`` tables (``bench.floor_tables``), each a journal store of its own (without fsync: the floor is
   measured, not the disk) and the real ``controller.floor.publisher.Publisher``, shared among ``--processes``
   processes (a table's service is a process of its own): in each, one feeder thread commits the template's
   inputs, each with the records it produced, to every table in turn, as a table's controller does (a
   checkpoint at each round's close), at ``--rate`` records per second per table (0: as fast as it can).
3. One durable subscriber (``controller.floor.listen.Listener``) takes every table's messages into the audit
   (``controller.floor.audit.Auditor``). When half the records are committed, Mosquitto is stopped (SIGTERM: it
   saves its sessions), kept down ``--down`` seconds, and started again; the tables play on.
4. Once every publisher has its journal acknowledged, the audit compares each table's events, deduplicated by
   seq, with the public records of its journal (every one exactly once, in order) and each anchor with its
   journal's head. Printed: records and messages, repeats, problems (0 to pass), public records per second end
   to end (from the first commit to the last record received), and the lag from a record's commit (its
   journal time) to its receipt, p50/p99/max, over all records (the outage and the catch-up after it included)
   and over those committed before the outage (steady play).

Then the unreachable broker: a simulated table plays twice ``--rounds`` rounds with floor off, and with floor
on towards an address that accepts connections and never answers, alternated ``--repeats`` times; printed: the
median rounds per second of each and their ratio (1.0: the broker costs the table nothing).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import multiprocessing
import os
import shutil
import socket
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from bench.floor_tables import Feed, last_public, pct, table_keys, table_names, tables_process, template
from controller.cli.parts import SERVICE_PARTS
from controller.floor.audit import Auditor
from controller.floor.listen import Listener
from controller.floor.topics import decode
from controller.game.table import load_table_config
from controller.service.assembly import Service
from controller.settings.floor import FloorConfig
from hil.broker import Broker


def scale(args: argparse.Namespace, folder: Path) -> int:
    groups = template(folder, args.rounds, args.seed)
    per_table = sum(map(len, groups))
    broker = Broker(folder / "broker")
    broker.start()
    config = FloorConfig(True, "127.0.0.1", broker.port)
    names = table_names(args.tables)
    keys = table_keys(folder, names)
    audit = Auditor()
    lags: list[tuple[float, float]] = []  # (commit time, lag) of each record received the first time

    def take(table: str, kind: str, payload: bytes, received: float) -> None:
        seen = audit.tables.get(table)
        before = len(seen.seqs) if seen else 0
        audit.take(table, kind, payload, received)
        if kind == "events" and len(audit.tables[table].seqs) > before:
            stamp = datetime.fromisoformat(decode(payload)["record"]["time"]).timestamp()
            lags.append((stamp, received - stamp))

    context = multiprocessing.get_context("spawn")
    go, ready, committed, results = context.Event(), context.Value("q", 0), context.Value("q", 0), context.Queue()
    feed = Feed(broker.port, args.rate, timeout=args.timeout)
    workers = [context.Process(target=tables_process, name=f"tables-{i}", args=(
        feed, folder, names[i::args.processes], groups, go, ready, committed, results))
        for i in range(args.processes)]
    for worker in workers:
        worker.start()
    listener = Listener(config, take, client_id="floor-scale-audit", durable=True)
    listener.open()
    while ready.value < args.processes:  # the workers' imports and their publishers' connections
        listener.pump(0.1)
    began = time.time()
    go.set()
    outage: list[float] = []
    expected = {}
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        listener.pump(0.2)
        if not outage and committed.value * 2 >= per_table * args.tables:
            outage.append(time.time())
            broker.restart(down=args.down)
            outage.append(time.time())
        if committed.value == per_table * args.tables:
            if not expected:
                expected = {n: last_public(folder / f"{n}.db") for n in names}
            if all(audit.tables.get(n) and audit.tables[n].seqs and audit.tables[n].seqs[-1] >= expected[n]
                   for n in names):
                break
    ended = max((at + lag for at, lag in lags), default=time.time())  # the last record received
    published = sum(results.get(timeout=args.timeout)["published"] for _ in workers)
    for worker in workers:
        worker.join()
    listener.pump(0.5)
    listener.close()
    problems = audit.problems({n: (folder / f"{n}.db", keys[n]) for n in names}, from_start=True)
    broker.stop()
    kept = sum(len(t.seqs) for t in audit.tables.values())
    repeats = sum(t.repeats for t in audit.tables.values())
    anchors = sum(len(t.anchors) for t in audit.tables.values())
    seconds = ended - began
    all_lags = sorted(lag for _, lag in lags)
    calm = sorted(lag for at, lag in lags if at < outage[0] - 1)  # steady play, before the broker went down
    print(f"load average of the machine (1, 5, 15 min): {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"tables: {args.tables}, rounds each: {args.rounds}, records each: {per_table} "
          f"({per_table * args.tables} in all), rate per table: {args.rate or 'unpaced'} records/s")
    print(f"broker restarted at {outage[0] - began:.1f} s, down {outage[1] - outage[0]:.1f} s")
    print(f"messages published (repeats included): {published}; public records kept after dedupe: {kept}; "
          f"repeats dropped: {repeats}; anchors: {anchors}")
    print(f"audit problems: {len(problems)}")
    for problem in problems[:20]:
        print(f"  {problem}")
    print(f"end to end: {kept} public records in {seconds:.1f} s = {kept / seconds:.0f} records/s")
    print(f"lag commit -> received, all records: p50 {pct(all_lags, 50)} p99 {pct(all_lags, 99)} "
          f"max {pct(all_lags, 100)}")
    print(f"lag before the outage ({len(calm)} records): p50 {pct(calm, 50)} p99 {pct(calm, 99)} "
          f"max {pct(calm, 100)}")
    return 1 if problems else 0


def unreachable(args: argparse.Namespace, folder: Path) -> None:
    """Rounds per second of a simulated table with floor off and with an unreachable broker, alternated
    ``--repeats`` times each (a simulated table's own speed varies from run to run on a shared machine): the
    medians and their ratio."""
    black_hole = socket.socket()
    black_hole.bind(("127.0.0.1", 0))
    black_hole.listen(16)
    config = load_table_config()
    tables = {"floor off": config, "broker unreachable": dataclasses.replace(
        config, floor=FloorConfig(True, "127.0.0.1", black_hole.getsockname()[1]))}
    rates: dict[str, list[float]] = {label: [] for label in tables}
    rounds = args.rounds * 2
    try:
        for repeat in range(args.repeats):
            for label, table in tables.items():
                service = Service(table, simulate=True, rounds=rounds, seed=args.seed + repeat,
                                  journal_path=folder / f"{label.replace(' ', '-')}-{repeat}.db", out=io.StringIO(),
                                  parts=SERVICE_PARTS)
                try:
                    began = time.monotonic()
                    service.run()
                    rates[label].append(rounds / (time.monotonic() - began))
                finally:
                    service.close()
    finally:
        black_hole.close()
    off, down = (statistics.median(rates[label]) for label in tables)
    print(f"one table, {rounds} rounds, median of {args.repeats}: floor off {off:.1f} rounds/s, broker unreachable "
          f"(accepts, never answers) {down:.1f} rounds/s: ratio {down / off:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--rate", type=float, default=40.0, help="records per second per table (0: unpaced)")
    parser.add_argument("--down", type=float, default=2.0, help="seconds the broker stays down")
    parser.add_argument("--processes", type=int, default=2, help="processes the tables are shared among")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=5, help="runs of the unreachable-broker comparison")
    parser.add_argument("--timeout", type=float, default=600.0, help="longest the scale run may take (s)")
    parser.add_argument("--folder", type=Path, default=None, help="keep the journals and the broker's log here")
    args = parser.parse_args(argv)
    folder = args.folder or Path(tempfile.mkdtemp(prefix="floor-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        status = scale(args, folder)
        unreachable(args, folder)
        return status
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
