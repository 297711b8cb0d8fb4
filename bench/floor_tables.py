"""Simulated tables for the floor's benchmarks (``bench.floor_scale``, ``bench.bench_floor_lag``,
``bench.bench_floor_store``): a template table's commits, and processes of tables that commit them into journal
stores of their own at a rate, each published by the real ``controller.floor.publisher.Publisher``.

- ``play_template``: one simulated table (``Service`` with ``--simulate``, optionally ``--rating``) plays
  ``rounds`` rounds into a journal; its commits are read back as the inputs each with the records it produced
  (``Template.groups``), and the checkpoint written with each round's close (``Template.states``: the round's
  state with its lifetime meters, which the publisher sends on ``meters``).
- ``tables_process``: one process of tables (a table PC's service is a process of its own): a journal store
  (without fsync: the floor is measured, not the disk) and a publisher per table, and one feeder that commits the
  template's groups to each table at ``Feed.rate`` records per second per table, each table on a schedule of
  its own (``Feed.offsets``: a table's first commit that many seconds after the start; all 0, the tables go in
  step), as a table's controller does (a checkpoint at each round's close, the view handed to the publisher
  after each commit). It stops after the last group or after ``Feed.seconds``, waits until every publisher has
  its journal acknowledged and reports what it did (``results``).
"""

from __future__ import annotations

import heapq
import io
import json
import logging
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.cli.parts import SERVICE_PARTS
from controller.control.server import public_record
from controller.floor.publisher import Publisher
from controller.game.table import load_table_config
from controller.journal.key import init_key, load_key
from controller.journal.reader import iter_store, read_records
from controller.journal.store import Journal
from controller.service.assembly import Service
from controller.settings.floor import FloorConfig

ROUND_ENDS = ("RoundClosed", "RoundVoided")
#: Seconds a process gives its publishers to connect before it says it is ready anyway.
CONNECT_WAIT = 30.0

Entry = tuple[str, str, dict, "int | None"]


@dataclass
class Template:
    """A simulated table's commits: ``groups[i]`` the ``(kind, type, data, round)`` entries of commit ``i``,
    ``states[i]`` the checkpoint's state written with it (a round's close), else None; ``path`` its journal."""

    groups: list[list[Entry]]
    states: list[dict[str, Any] | None]
    path: Path

    @property
    def records(self) -> int:
        """Journal records in all the commits."""
        return sum(map(len, self.groups))


def play_template(folder: Path, rounds: int, seed: int, *, rating: bool = False,
                  name: str = "template.db") -> Template:
    """Play ``rounds`` rounds of a simulated table (with the live rating when ``rating``) into
    ``folder/name``; its commits (``Template``)."""
    path = folder / name
    service = Service(load_table_config(), simulate=True, rounds=rounds, seed=seed, journal_path=path,
                      out=io.StringIO(), parts=SERVICE_PARTS, rating=rating)
    try:
        service.run()
    finally:
        service.close()
    with sqlite3.connect(f"file:{path.absolute()}?mode=ro", uri=True) as db:
        checkpoints = {seq: json.loads(state) for seq, state in db.execute("SELECT seq, state FROM checkpoints")}
    groups: list[list[Entry]] = []
    lasts: list[int] = []
    for record in read_records(path):
        if record["kind"] == "event" or not groups:
            groups.append([])
            lasts.append(0)
        groups[-1].append((record["kind"], record["type"], record["data"], record["round"]))
        lasts[-1] = record["seq"]
    return Template(groups, [checkpoints.get(seq) for seq in lasts], path)


def template(folder: Path, rounds: int, seed: int) -> list[list[Entry]]:
    """The commits of a simulated table's ``rounds`` rounds: each input with the records it produced."""
    return play_template(folder, rounds, seed).groups


def table_names(count: int) -> list[str]:
    """``count`` table ids, ``T00``, ``T01``, ... (as many digits as the largest needs, at least two)."""
    width = max(2, len(str(count - 1)))
    return [f"T{n:0{width}d}" for n in range(count)]


def table_keys(folder: Path, names: list[str]) -> dict[str, bytes]:
    """A journal key per table in ``folder`` (``NAME.key``), made when missing; the keys by table."""
    keys = {}
    for name in names:
        path = folder / f"{name}.key"
        if not path.exists():
            init_key(path)
        keys[name] = load_key(path)
    return keys


@dataclass(frozen=True)
class Feed:
    """How a process of tables feeds them: the broker's ``port`` and ``prefix``; ``rate`` records per second per
    table (0: as fast as it can); ``seconds``: stop committing after that many seconds (None: after the last
    group); ``timeout``: the longest the publishers are waited for at the end; ``offsets``: seconds from the
    start to each table's first commit (missing: 0); ``log``: a folder for each process's log
    (``tables-FIRST.log``: the publishers' lines), else standard error."""

    port: int
    rate: float
    seconds: float | None = None
    timeout: float = 600.0
    prefix: str = "crisscross"
    offsets: dict[str, float] = field(default_factory=dict)
    log: Path | None = None


def tables_process(feed: Feed, folder: Path, names: list[str], commits: Template | list[list[Entry]], go: Any,
                   ready: Any, committed: Any, results: Any) -> None:
    """One process of tables (module docstring). ``commits``: a ``Template``, or its groups alone (a round's
    close then checkpoints ``{"round": N}``); ``ready`` (a shared counter) goes up by one once every publisher
    is connected or ``CONNECT_WAIT`` passed; the feeder starts when ``go`` is set; ``committed`` (a shared
    counter) counts the records committed, in all processes. ``results`` gets a dict once every publisher has
    its journal acknowledged (or ``Feed.timeout`` passed): ``published`` messages (repeats included),
    ``committed`` records, ``began`` and ``ended`` (``time.time()`` of the first and last commit), ``late`` (the
    most seconds a commit came after its schedule) and ``acknowledged`` (whether every publisher caught up)."""
    groups = commits.groups if isinstance(commits, Template) else commits
    states = commits.states if isinstance(commits, Template) else [None] * len(groups)
    if feed.log is not None:
        logging.basicConfig(filename=feed.log / f"tables-{names[0]}.log", level=logging.INFO,
                            format="%(asctime)s %(name)s %(levelname)s %(message)s")
    config = FloorConfig(True, "127.0.0.1", feed.port, prefix=feed.prefix)
    keys = table_keys(folder, names)
    journals = {n: Journal(folder / f"{n}.db", fsync=False, key=keys[n]) for n in names}
    publishers = {n: Publisher(config, n, folder / f"{n}.db", key=keys[n]) for n in names}
    for publisher in publishers.values():
        publisher.start()
    deadline = time.monotonic() + CONNECT_WAIT
    while time.monotonic() < deadline and not all(p.connected for p in publishers.values()):
        time.sleep(0.05)
    with ready.get_lock():
        ready.value += 1
    go.wait()
    start = time.monotonic()
    stop_at = None if feed.seconds is None else start + feed.seconds
    due = [(start + feed.offsets.get(name, 0.0), 0, index) for index, name in enumerate(names)]
    heapq.heapify(due)
    count, late, began, ended = 0, 0.0, None, None
    while due:
        at, number, index = heapq.heappop(due)
        if stop_at is not None and at >= stop_at:
            continue  # this table's time is up
        wait = at - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        else:
            late = max(late, -wait)
        group, name = groups[number], names[index]
        ends = any(entry[1] in ROUND_ENDS for entry in group)
        state = states[number] if states[number] is not None else ({"round": group[-1][3]} if ends else None)
        journal = journals[name]
        journal.commit(group, state=state)
        publishers[name].publish_view({"round_no": group[-1][3]}, journal.head[0])
        ended = time.time()
        began = began or ended
        count += len(group)
        with committed.get_lock():
            committed.value += len(group)
        if number + 1 < len(groups):
            heapq.heappush(due, (at + (len(group) / feed.rate if feed.rate else 0.0), number + 1, index))
    deadline = time.monotonic() + feed.timeout
    while time.monotonic() < deadline and any(p.acked < journals[n].head[0] for n, p in publishers.items()):
        time.sleep(0.1)
    acknowledged = all(p.acked >= journals[n].head[0] for n, p in publishers.items())
    for publisher in publishers.values():
        publisher.stop(drain=1.0)
    results.put({"published": sum(p.published for p in publishers.values()), "committed": count, "began": began,
                 "ended": ended, "late": late, "acknowledged": acknowledged})
    for journal in journals.values():
        journal.close()


def public_records(path: Path) -> list[dict[str, Any]]:
    """The public records (``controller.control.server.public_record``: what the floor publishes) of the journal
    store at ``path``, in order."""
    return [p for p in (public_record(r) for r in iter_store(path)) if p is not None]


def last_public(path: Path) -> int:
    """The seq of the last public record of the journal store at ``path`` (0: none)."""
    return max((r["seq"] for r in iter_store(path) if public_record(r) is not None), default=0)


def pct(values: list[float], pct: float) -> str:
    """The ``pct`` percentile of the sorted ``values`` (seconds) in milliseconds, or ``-`` when there are none."""
    if not values:
        return "-"
    index = min(len(values) - 1, max(0, round(pct / 100 * len(values)) - 1))
    return f"{values[index] * 1000:.0f} ms"
