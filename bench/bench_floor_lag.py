"""The floor's lag and rate against raw paho-mqtt through the same Mosquitto, measured in the same run.

    python -m bench.bench_floor_lag [--tables 10] [--rounds 4] [--rate 40] [--processes 2] [--repeats 3]

Two ways of bringing the same tables' records to one subscriber, alternated ``--repeats`` times (the order
swapped at each repeat), each run a fresh set of journals under a topic prefix of its own on one Mosquitto:

- ``floor``: the real ``controller.floor.publisher.Publisher`` per table, handed the view after each commit
  (``publish_view``, as the service does), reading the journal as its outbox.
- ``raw``: the peer. One plain paho-mqtt client per table (MQTT 5, its own network thread: ``loop_start``,
  paho's defaults otherwise), and the feeder publishes each commit's messages itself right after the commit,
  built from the records the commit returned: the same topics, the same payloads (``public_record`` of each record on ``events`` with its
  ``after``, ``significant``, ``alerts``, the anchor at a round's close, the view retained on ``state``), QoS 1.
  No journal is read back, no window, no progress file: the least any publisher must do.

Both share everything else (the template of ``bench.floor_tables``, the tables and processes): ``--tables``
tables, each a journal store of its own (no fsync) shared among ``--processes`` processes, one feeder thread per
process committing the template's inputs to every table in turn, and one subscriber in this process
(``Receiver``).
Lag: a record's journal time (its commit) to its receipt, over every public record received the first time.
Each repeat runs both paced (``--rate`` records per second per table) and unpaced (``--rate 0``: as fast as
the feeder commits).

Printed per run: records committed per second by the feeders, public records received per second end to end
(first commit to last record received), lag p50/p99/max, and the messages received per topic kind (the same
for both but ``state``: the floor publishes only the latest view). Then per repeat, the ratios floor / raw of
the paced p50 and p99, and of the unpaced records per second; and whether the floor keeps up unpaced (its
public records received per second against those its feeders committed per second). Goals (issue 33): paced
p99 at most 3x raw; unpaced records per second at least 0.9x raw. Exit status 1 when a run lost or reordered
a record (the audit, ``controller.floor.audit``).
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.floor_tables import ROUND_ENDS, pct, template
from controller.control.server import public_record
from controller.floor.audit import Auditor
from controller.floor.topics import decode, every_table, split
from controller.journal.reader import iter_store
from controller.settings.floor import FloorConfig
from hil.broker import Broker

MODES = ("floor", "raw")


class RawTable:
    """The peer's side of one table: a plain paho-mqtt MQTT 5 client on its own network thread, and what the
    floor's topics need (``controller.floor.topics``) built from each commit's records."""

    def __init__(self, port: int, prefix: str, name: str, key: bytes | None) -> None:
        import paho.mqtt.client as paho

        self.name, self.key, self.prefix = name, key, prefix
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=f"raw-{prefix}-{name}",
                                  protocol=paho.MQTTv5)
        self.client.max_inflight_messages_set(0)  # no limit: paho sends at once
        self.client.max_queued_messages_set(0)
        self.client.connect("127.0.0.1", port, 10)
        self.client.loop_start()
        self.after = 0
        self.published = 0
        self.last: Any = None  # the last message's MQTTMessageInfo

    def publish(self, kind: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        """Publish ``payload`` as the floor's compact JSON on ``kind`` (QoS 1)."""
        from controller.floor.topics import encode, topic

        self.last = self.client.publish(topic(self.prefix, self.name, kind), encode(payload), qos=1, retain=retain)
        self.published += 1

    def committed(self, records: Any, head: tuple[int, str], round_no: int | None, ends: bool) -> None:
        """Publish the messages of one commit's ``records``; ``head`` the journal's head after it, ``ends``: the
        commit closed a round and wrote its checkpoint (its anchor is published)."""
        from controller.control.server import RECORD_KEYS, public_record
        from controller.journal import key as jkey

        for record in records:
            public = public_record(record)
            if public is not None:
                self.publish("events", {"table": self.name, "after": self.after, "record": public})
                self.after = record["seq"]
                if record["type"] == "SignificantEvent":
                    self.publish("significant", {"table": self.name, "record": public})
            elif record["type"] in ("Alert", "AlertAcknowledged"):
                self.publish("alerts", {"table": self.name, "record": {k: record[k] for k in RECORD_KEYS}})
        if ends:
            seq, hash_ = head
            mac = jkey.mac(self.key, "anchor", seq, hash_) if self.key else None
            self.publish("anchors", {"table": self.name, "seq": seq, "round": round_no, "head": hash_, "mac": mac},
                         retain=True)
        self.publish("state", {"table": self.name, "seq": head[0], "view": {"round_no": round_no}}, retain=True)

    def wait_acknowledged(self, deadline: float) -> None:
        """Wait until the broker acknowledged the last message (QoS 1 messages go in order), or ``deadline``."""
        while self.last is not None and not self.last.is_published() and time.monotonic() < deadline:
            time.sleep(0.05)

    def close(self) -> None:
        """Disconnect and stop the network thread."""
        self.client.disconnect()
        self.client.loop_stop()


class Receiver:
    """The subscriber of both ways: a plain paho-mqtt client (MQTT 3.1.1: no MQTT 5 properties to decode per
    message) subscribed to ``{prefix}/#`` at QoS 1, calling ``on_message(table, kind, payload, received)`` as
    ``controller.floor.listen.Listener`` does, so that the receiver costs as little as it can and is the same
    for both."""

    def __init__(self, port: int, prefix: str, on_message: Any) -> None:
        import paho.mqtt.client as paho

        self.prefix, self.on_message = prefix, on_message
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=f"receiver-{prefix}",
                                  protocol=paho.MQTTv311)
        self.client.on_message = self._message
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *_: subscribed.set()
        self.client.connect("127.0.0.1", port, 10)
        self.client.subscribe(every_table(prefix), qos=1)
        deadline = time.monotonic() + 10.0
        while not subscribed.is_set() and time.monotonic() < deadline:
            self.client.loop(timeout=0.05)
        if not subscribed.is_set():
            raise OSError(f"the broker on port {port} did not accept the subscription")

    def pump(self, seconds: float) -> None:
        """Receive for ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.client.loop(timeout=min(0.05, max(deadline - time.monotonic(), 0.0)))

    def _message(self, client: Any, userdata: Any, message: Any) -> None:
        where = split(self.prefix, message.topic)
        if where is not None:
            self.on_message(where[0], where[1], message.payload, time.time())


def tables_process(mode: str, rate: float, timeout: float, folder: Path, port: int, prefix: str, names: list[str],
                   groups: list, go: Any, committed: Any, results: Any) -> None:
    """One process of tables: a journal store and a publisher (``mode``) per table in ``names``, and a feeder
    thread committing ``groups`` to each in turn at ``rate`` records per second per table (0: unpaced);
    ``committed`` counts the records committed, ``results`` gets ``(messages published, first commit, last
    commit)`` (``time.time()``) once every table's messages are acknowledged."""
    from controller.floor.publisher import Publisher
    from controller.journal.key import init_key, load_key
    from controller.journal.store import Journal

    keys = {}
    for name in names:
        init_key(folder / f"{name}.key")
        keys[name] = load_key(folder / f"{name}.key")
    journals = {n: Journal(folder / f"{n}.db", fsync=False, key=keys[n]) for n in names}
    if mode == "floor":
        config = FloorConfig(True, "127.0.0.1", port, prefix=prefix)
        publishers = {n: Publisher(config, n, folder / f"{n}.db", key=keys[n]) for n in names}
        for publisher in publishers.values():
            publisher.start()
    else:
        raw = {n: RawTable(port, prefix, n, keys[n]) for n in names}
    go.wait()
    began = time.time()
    due = time.monotonic()
    for group in groups:
        ends = any(entry[1] in ROUND_ENDS for entry in group)
        round_no = group[-1][3]
        for name in names:
            journal = journals[name]
            records = journal.commit(group, state={"round": round_no} if ends else None)
            if mode == "floor":
                publishers[name].publish_view({"round_no": round_no}, journal.head[0])
            else:
                raw[name].committed(records, journal.head, round_no, ends)
        with committed.get_lock():
            committed.value += len(group) * len(names)
        if rate:
            due += len(group) / rate
            time.sleep(max(0.0, due - time.monotonic()))
    ended = time.time()
    deadline = time.monotonic() + timeout
    if mode == "floor":
        while time.monotonic() < deadline and any(p.acked < journals[n].head[0] for n, p in publishers.items()):
            time.sleep(0.05)
        for publisher in publishers.values():
            publisher.stop(drain=1.0)
        published = sum(p.published for p in publishers.values())
    else:
        for table in raw.values():
            table.wait_acknowledged(deadline)
            table.close()
        published = sum(t.published for t in raw.values())
    results.put((published, began, ended))
    for journal in journals.values():
        journal.close()


def one_run(mode: str, rate: float, args: argparse.Namespace, folder: Path, port: int, prefix: str,
            groups: list) -> dict[str, Any]:
    """One run of ``mode`` at ``rate``: its figures (``lags`` sorted, in seconds) and the audit's problems."""
    folder.mkdir(parents=True)
    per_table = sum(map(len, groups))
    names = [f"T{n:02d}" for n in range(args.tables)]
    heard: list[tuple[str, str, bytes, float]] = []  # audited once the run is over: the receiver does no more
    events: collections.Counter[str] = collections.Counter()

    def take(table: str, kind: str, payload: bytes, received: float) -> None:
        heard.append((table, kind, payload, received))
        if kind == "events":
            events[table] += 1

    context = multiprocessing.get_context("spawn")
    go, committed, results = context.Event(), context.Value("q", 0), context.Queue()
    workers = [context.Process(target=tables_process, name=f"tables-{i}", args=(
        mode, rate, args.timeout, folder, port, prefix, names[i::args.processes], groups, go, committed, results))
        for i in range(args.processes)]
    for worker in workers:
        worker.start()
    listener = Receiver(port, prefix, take)
    listener.pump(3.0)  # the workers' imports and their clients' connections
    go.set()
    expected: dict[str, int] = {}
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        listener.pump(0.1)
        if committed.value == per_table * args.tables:
            if not expected:
                expected = {n: _public_count(folder / f"{n}.db") for n in names}
            if all(events[n] >= expected[n] for n in names):
                break
    outcomes = [results.get(timeout=args.timeout) for _ in workers]
    for worker in workers:
        worker.join()
    listener.pump(0.2)
    listener.client.disconnect()
    audit = Auditor()
    lags: list[float] = []
    kinds: collections.Counter[str] = collections.Counter()
    last_receipt = 0.0
    for table, kind, payload, received in heard:
        kinds[kind] += 1
        seen = audit.tables.get(table)
        before = len(seen.seqs) if seen else 0
        audit.take(table, kind, payload, received)
        if kind == "events" and len(audit.tables[table].seqs) > before:
            lags.append(received - datetime.fromisoformat(decode(payload)["record"]["time"]).timestamp())
            last_receipt = received
    problems = audit.problems({n: (folder / f"{n}.db", None) for n in names}, from_start=True)
    began = min(o[1] for o in outcomes)
    committing = max(o[2] for o in outcomes) - began
    kept = sum(len(t.seqs) for t in audit.tables.values())
    shutil.rmtree(folder, ignore_errors=True)
    return {"mode": mode, "rate": rate, "lags": sorted(lags), "kept": kept, "problems": problems,
            "committed_per_s": per_table * args.tables / committing,
            "received_per_s": kept / (last_receipt - began), "published": sum(o[0] for o in outcomes),
            "kinds": dict(sorted(kinds.items())), "public_share": kept / (per_table * args.tables)}


def _show(run: dict[str, Any]) -> None:
    lags = run["lags"]
    pace = f"{run['rate']:g}/s per table" if run["rate"] else "unpaced"
    print(f"  {run['mode']:5} {pace:16} committed {run['committed_per_s']:6.0f} records/s, received "
          f"{run['received_per_s']:6.0f} public records/s; lag p50 {pct(lags, 50)} p99 {pct(lags, 99)} "
          f"max {pct(lags, 100)}; messages {run['kinds']}; audit problems {len(run['problems'])}")
    for problem in run["problems"][:10]:
        print(f"    {problem}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--rate", type=float, default=40.0, help="records per second per table of the paced runs")
    parser.add_argument("--processes", type=int, default=2, help="processes the tables are shared among")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3, help="alternations of floor and raw")
    parser.add_argument("--timeout", type=float, default=300.0, help="longest one run may take (s)")
    args = parser.parse_args(argv)
    if args.rate <= 0:
        parser.error("--rate: the paced runs need a rate above 0 (the unpaced runs are made as well)")
    folder = Path(tempfile.mkdtemp(prefix="floor-lag-"))
    broker = Broker(folder / "broker")
    broker.start()
    status = 0
    ratios: dict[str, list[float]] = collections.defaultdict(list)
    try:
        groups = template(folder, args.rounds, args.seed)
        print(f"load average of the machine (1, 5, 15 min): {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print(f"tables: {args.tables} in {args.processes} processes, records each: {sum(map(len, groups))}, "
              f"paced at {args.rate:g} records/s per table")
        runs = 0
        for repeat in range(args.repeats):
            print(f"repeat {repeat + 1}:")
            order = MODES if repeat % 2 == 0 else MODES[::-1]
            got: dict[tuple[str, float], dict[str, Any]] = {}
            for rate in (args.rate, 0.0):
                for mode in order:
                    runs += 1
                    run = one_run(mode, rate, args, folder / f"run-{runs}", broker.port, f"lag{runs}", groups)
                    got[mode, rate] = run
                    status |= 1 if run["problems"] else 0
                    _show(run)
            floor, raw = got["floor", args.rate], got["raw", args.rate]
            p50 = _seconds(floor["lags"], 50) / _seconds(raw["lags"], 50)
            p99 = _seconds(floor["lags"], 99) / _seconds(raw["lags"], 99)
            rate = got["floor", 0.0]["received_per_s"] / got["raw", 0.0]["received_per_s"]
            unpaced = got["floor", 0.0]
            keeps = unpaced["received_per_s"] / (unpaced["committed_per_s"] * unpaced["public_share"])
            for name, value in (("p50", p50), ("p99", p99), ("rate", rate), ("keeps up", keeps)):
                ratios[name].append(value)
            print(f"  floor / raw: paced lag p50 {p50:.2f}x, p99 {p99:.2f}x; unpaced records/s {rate:.2f}x; "
                  f"floor unpaced public records received / committed per second {keeps:.2f}")
        print(f"load average of the machine (1, 5, 15 min): {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print("floor / raw over the repeats (min / median / max): " + "; ".join(
            f"{name} {min(v):.2f} / {statistics.median(v):.2f} / {max(v):.2f}" for name, v in ratios.items()))
        p99, rate = statistics.median(ratios["p99"]), statistics.median(ratios["rate"])
        print(f"goals: paced p99 at most 3x raw: {p99:.2f}x {'met' if p99 <= 3 else 'NOT met'}; unpaced records/s "
              f"at least 0.9x raw: {rate:.2f}x {'met' if rate >= 0.9 else 'NOT met'}")
    finally:
        broker.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return status


def _public_count(path: Path) -> int:
    """How many public records the journal store at ``path`` holds."""
    return sum(1 for record in iter_store(path) if public_record(record) is not None)


def _seconds(values: list[float], pct: float) -> float:
    """The ``pct`` percentile of the sorted ``values`` (as ``pct`` prints it), at least 1 µs."""
    index = min(len(values) - 1, max(0, round(pct / 100 * len(values)) - 1))
    return max(values[index], 1e-6)


if __name__ == "__main__":
    sys.exit(main())
