"""Scale test of the floor: many tables publishing through one Mosquitto, the broker restarted mid-run.

    python -m bench.floor_scale [--tables 50] [--rounds 10] [--rate 40] [--down 2] [--processes 2] [--repeats 5]
                                [--folder DIR]

1. A template: one simulated table (``Service`` with ``--simulate``) plays ``--rounds`` rounds into a journal.
2. ``--tables`` tables, each a journal store of its own (without fsync: the floor is measured, not the disk)
   and the real ``controller.floor.publisher.Publisher``, shared among ``--processes`` processes (a table's
   service is a process of its own): in each, one feeder thread commits the template's inputs, each with the
   records it produced, to every table in turn, as a table's controller does (a checkpoint at each round's
   close), at ``--rate`` records per second per table (0: as fast as it can).
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
from typing import Any

from controller.cli.parts import SERVICE_PARTS
from controller.control.server import public_record
from controller.floor.audit import Auditor
from controller.floor.listen import Listener
from controller.floor.publisher import Publisher
from controller.floor.topics import decode
from controller.game.table import load_table_config
from controller.journal.key import init_key, load_key
from controller.journal.reader import iter_store, read_records
from controller.journal.store import Journal
from controller.service.assembly import Service
from controller.settings.floor import FloorConfig
from hil.broker import Broker

ROUND_ENDS = ("RoundClosed", "RoundVoided")


def template(folder: Path, rounds: int, seed: int) -> list[list[tuple[str, str, dict, int | None]]]:
    """The commits of a simulated table's ``rounds`` rounds: each input with the records it produced."""
    path = folder / "template.db"
    service = Service(load_table_config(), simulate=True, rounds=rounds, seed=seed, journal_path=path,
                      out=io.StringIO(), parts=SERVICE_PARTS)
    try:
        service.run()
    finally:
        service.close()
    groups: list[list[tuple[str, str, dict, int | None]]] = []
    for record in read_records(path):
        if record["kind"] == "event" or not groups:
            groups.append([])
        groups[-1].append((record["kind"], record["type"], record["data"], record["round"]))
    return groups


def tables_process(args: argparse.Namespace, folder: Path, port: int, names: list[str], groups: list,
                   go: Any, committed: Any, results: Any) -> None:
    """One process of tables (a table PC's service is a process of its own): a journal store and a publisher
    per table in ``names``, and a feeder thread committing the template's ``groups`` to each in turn at
    ``--rate``; ``committed`` counts the records committed (all processes), ``results`` gets the messages
    published once every publisher has its journal acknowledged."""
    config = FloorConfig(True, "127.0.0.1", port)
    journals = {n: Journal(folder / f"{n}.db", fsync=False, key=load_key(folder / f"{n}.key")) for n in names}
    publishers = {n: Publisher(config, n, folder / f"{n}.db", key=load_key(folder / f"{n}.key")) for n in names}
    for publisher in publishers.values():
        publisher.start()
    go.wait()
    due = time.monotonic()
    for group in groups:
        ends = any(entry[1] in ROUND_ENDS for entry in group)
        for name in names:
            journals[name].commit(group, state={"round": group[-1][3]} if ends else None)
            publishers[name].publish_view({"round_no": group[-1][3]}, journals[name].head[0])
        with committed.get_lock():
            committed.value += len(group) * len(names)
        if args.rate:
            due += len(group) / args.rate
            time.sleep(max(0.0, due - time.monotonic()))
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline and any(p.acked < journals[n].head[0] for n, p in publishers.items()):
        time.sleep(0.1)
    for publisher in publishers.values():
        publisher.stop(drain=1.0)
    results.put(sum(p.published for p in publishers.values()))
    for journal in journals.values():
        journal.close()


def scale(args: argparse.Namespace, folder: Path) -> int:
    groups = template(folder, args.rounds, args.seed)
    per_table = sum(map(len, groups))
    broker = Broker(folder / "broker")
    broker.start()
    config = FloorConfig(True, "127.0.0.1", broker.port)
    names = [f"T{n:02d}" for n in range(args.tables)]
    keys = {}
    for name in names:
        init_key(folder / f"{name}.key")
        keys[name] = load_key(folder / f"{name}.key")
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
    go, committed, results = context.Event(), context.Value("q", 0), context.Queue()
    workers = [context.Process(target=tables_process, name=f"tables-{i}", args=(
        args, folder, broker.port, names[i::args.processes], groups, go, committed, results))
        for i in range(args.processes)]
    for worker in workers:
        worker.start()
    listener = Listener(config, take, client_id="floor-scale-audit", durable=True)
    listener.open()
    time.sleep(3.0)  # the workers' imports and their publishers' connections
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
                expected = {n: _last_public(folder / f"{n}.db") for n in names}
            if all(audit.tables.get(n) and audit.tables[n].seqs and audit.tables[n].seqs[-1] >= expected[n]
                   for n in names):
                break
    ended = max((at + lag for at, lag in lags), default=time.time())  # the last record received
    published = sum(results.get(timeout=args.timeout) for _ in workers)
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
    print(f"lag commit -> received, all records: p50 {_pct(all_lags, 50)} p99 {_pct(all_lags, 99)} "
          f"max {_pct(all_lags, 100)}")
    print(f"lag before the outage ({len(calm)} records): p50 {_pct(calm, 50)} p99 {_pct(calm, 99)} "
          f"max {_pct(calm, 100)}")
    return 1 if problems else 0


def _last_public(path: Path) -> int:
    """The seq of the last public record of the journal store at ``path``."""
    return max((r["seq"] for r in iter_store(path) if public_record(r) is not None), default=0)


def _pct(values: list[float], pct: float) -> str:
    if not values:
        return "-"
    index = min(len(values) - 1, max(0, round(pct / 100 * len(values)) - 1))
    return f"{values[index] * 1000:.0f} ms"


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
