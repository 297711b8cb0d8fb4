"""Benchmark: the journal store over years of play, each figure a ratio against a peer measured in the same run.

    python bench/bench_journal.py [--rounds 10000] [--folder DIR] [--latency-rounds 200] [--chip-seconds 5]

1. Start-up: ``crisscross run --simulate --rounds 1`` (a process of its own) from its start to the first
   ``RoundOpened`` it commits, on a journal of ``--rounds`` rounds against the same on an empty journal
   (median of 3 each; goal <= 1.2x); peak memory of that process alone on both (goal: within 10%): its
   ``ru_maxrss`` as a small parent sees it (``bench/childpeak.py``: GNU time, else a tiny launcher), since
   ``wait4`` here would count the resident memory this process holds at the fork (the history built in it).
   The history is played by the round machine in this process (``Controller`` without devices, the store
   without fsync), six seats a round with every chip placement as an input, so it has the records and the
   checkpoints the service writes.
2. Commit cost: a panel press (or the sensors' answer) to the ``Dispense`` command handed to the driver, through
   ``Controller.process`` on a store with ``synchronous=FULL``, p50 and p99 over ``--latency-rounds`` rounds,
   against one bare ``write`` + ``fsync`` of 400 bytes to a file in the same folder, each made right after a
   timed Dispense so that both see the same load of the machine (goal: p99 <= 2x).
3. Chip changes: ``SpotChanged`` inputs put on the controller's queue at 960 a second (a 115,200-baud sensor
   link, one 12-byte frame each) for ``--chip-seconds``, the controller thread committing them: inputs put,
   inputs journaled (nothing lost), the largest lag from put to commit, and the rate sustained.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from childpeak import measured, peak_kib
from controller.game.cards import DECK
from controller.game.paytable import load_jurisdiction
from controller.game.table import load_table_config
from controller.journal.reader import rounds_ended
from controller.journal.store import Journal
from controller.round import commands as cmd
from controller.round.inputs import ServiceStarted
from controller.round.machine import Round
from controller.service.loop import STOP, Controller
from drivers import events as ev

CONFIG = load_table_config()
NY = load_jurisdiction("ny")
SEATS = (1, 2, 3, 4, 5, 6)


class Table:
    """The round machine behind a ``Controller`` whose commands are kept, not sent (no device)."""

    def __init__(self, journal: Journal, machine: Round | None = None) -> None:
        self.sent: list = []
        self.sent_at: list[tuple[float, object]] = []
        self.controller = Controller(machine or Round(CONFIG, NY), journal, {}, queue.Queue())
        self.controller._send = self._keep
        self.peer = None  # called after each timed Dispense (commit_cost: one bare write + fsync)

    def _keep(self, command) -> None:
        self.sent.append(command)
        self.sent_at.append((time.perf_counter(), command))

    def last(self, kind):
        return next(c for c in reversed(self.sent) if isinstance(c, kind))

    def feed(self, event) -> None:
        self.controller.process(event)


def start(table: Table) -> None:
    """The service's start: handshakes and the shoe's answer."""
    table.feed(ServiceStarted())
    for device in ("shoe", "sensors", "panel"):
        table.feed(ev.DeviceReady(device, f"{device}-bench", "1.0", 1))
    table.feed(ev.ShoeLastDispense(0, ()))


def play_round(table: Table, rng: random.Random, timed: list[float] | None = None) -> None:
    """One round at six seats, every chip placed as its own input; ``timed`` gets, for each input answered by a
    ``Dispense``, the seconds from ``Controller.process`` to the Dispense handed to the driver."""
    deck = list(DECK)
    rng.shuffle(deck)
    table.feed(ev.ButtonPressed("open_betting"))
    table.feed(ev.ShuffleComplete(52))
    table.feed(ev.SpotsSnapshot(table.last(cmd.ReadSpots).request_id, ()))  # the layout as betting opens: cleared
    layout = []
    for seat in SEATS:
        for spot, amount in (("ante_across", 500), ("ante_down", 500), ("five_card_bonus", 100)):
            table.feed(ev.SpotChanged(seat, spot, amount))
            layout.append((seat, spot, amount))
    table.feed(ev.ButtonPressed("no_more_bets"))
    _timed_feed(table, ev.SpotsSnapshot(table.last(cmd.ReadSpots).request_id, tuple(layout)), timed)
    for size in (5, *(2 for _ in SEATS)):
        cards = tuple(deck.pop() for _ in range(size))
        _timed_feed(table, ev.StackDispensed(table.last(cmd.Dispense).txn_id, cards), timed)
    for step in ("across", "down", "middle"):
        for seat in SEATS:
            table.feed(ev.SpotChanged(seat, step, 500))
            layout.append((seat, step, 500))
        table.feed(ev.ButtonPressed("confirm"))
        ordered = tuple(sorted(layout, key=lambda t: (t[0], ev.SPOTS.index(t[1]))))
        table.feed(ev.SpotsSnapshot(table.last(cmd.ReadSpots).request_id, ordered))
        table.feed(ev.ButtonPressed("reveal"))
    pay_out(table, {(seat, spot): amount for seat, spot, amount in layout})


def pay_out(table: Table, chips: dict[tuple[int, str], int]) -> None:
    """The dealer's payout after the settlement, seat by seat as the payout check shows it (controller.game.payout):
    each spot's chips changed to what it must hold, one input per change, then ``paid`` and the seat's reading.
    ``chips`` is the layout before the payout, ``{(seat, spot): minor units}``; it is updated."""
    machine = table.controller.machine
    while machine.state == "payout":
        payout = machine.view()["payout"]
        seat = payout["seat"]
        for spot, step in payout["seats"][str(seat)]["spots"].items():
            if chips.get((seat, spot), 0) != step["expected"]:
                table.feed(ev.SpotChanged(seat, spot, step["expected"]))
                chips[(seat, spot)] = step["expected"]
        table.feed(ev.ButtonPressed("paid"))
        reading = tuple(sorted(((s, spot, amount) for (s, spot), amount in chips.items() if amount),
                               key=lambda t: (t[0], ev.SPOTS.index(t[1]))))
        table.feed(ev.SpotsSnapshot(table.last(cmd.ReadSpots).request_id, reading))
    if machine.state != "closed":
        raise SystemExit(f"the round did not close: state {machine.state} (the bench's play is out of step)")


def _timed_feed(table: Table, event, timed: list[float] | None) -> None:
    before = len(table.sent_at)
    began = time.perf_counter()
    table.feed(event)
    for at, command in table.sent_at[before:]:
        if isinstance(command, cmd.Dispense) and timed is not None:
            timed.append(at - began)
            if table.peer is not None:  # the peer measured right after, under the same load of the machine
                table.peer()


def build_history(path: Path, rounds: int) -> float:
    """Play ``rounds`` rounds into a new store at ``path`` (no fsync); return the seconds it took."""
    began = time.perf_counter()
    journal = Journal(path, fsync=False)
    table = Table(journal)
    start(table)
    rng = random.Random(7)
    for number in range(rounds):
        play_round(table, rng)
        if (number + 1) % 1000 == 0:
            print(f"  history: {number + 1} rounds, {journal.head[0]:,} records", flush=True)
    journal.commit([("record", "ServiceStopped", {"state": table.controller.machine.state}, None)])
    journal.close()
    return time.perf_counter() - began


def time_start(journal: Path) -> tuple[float, int]:
    """Seconds from the process's start to its first ``RoundOpened`` committed, and its own peak memory (KiB:
    measured by a small parent, ``childpeak``, not by ``wait4`` here, which would count this process's memory)."""
    before = last_seq(journal)
    report = journal.with_name(journal.name + ".peak")
    began = time.perf_counter()
    proc = subprocess.Popen(measured([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "1",
                                      "--quiet", "--seed", "5", "--journal", str(journal)], report),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first = None
    while first is None and proc.poll() is None:
        if opened_after(journal, before):
            first = time.perf_counter() - began
        else:
            time.sleep(0.002)
    proc.wait()
    if proc.returncode != 0 or first is None:
        raise SystemExit(f"crisscross run failed ({proc.returncode}): {proc.stderr.read().decode()[-500:]}")
    peak = peak_kib(report)
    report.unlink()
    return first, peak


def last_seq(path: Path) -> int:
    """The last seq of the store at ``path`` (0 before it exists or holds a record)."""
    return _query(path, "SELECT coalesce(max(seq), 0) FROM records", ())


def opened_after(path: Path, seq: int) -> bool:
    """True once a ``RoundOpened`` after record ``seq`` is committed (a range of the primary key: cheap)."""
    return bool(_query(path, "SELECT count(*) FROM records WHERE seq > ? AND type = 'RoundOpened'", (seq,)))


def _query(path: Path, sql: str, params: tuple) -> int:
    if not path.exists():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql, params).fetchone()[0]
    except sqlite3.Error:
        return 0
    finally:
        db.close()


def startup(folder: Path, rounds: int) -> None:
    history = folder / "history.db"
    if not history.exists():
        print(f"building a history of {rounds:,} rounds ...", flush=True)
        seconds = build_history(history, rounds)
        print(f"  built in {seconds:.0f} s", flush=True)
    os.sync()  # the history's pages on disk before anything is timed
    print(f"  history: {rounds_ended(history):,} rounds, {history.stat().st_size / 1e6:.0f} MB")
    runs: dict[str, list[tuple[float, int]]] = {"empty": [], "history": []}
    for attempt in range(3):
        empty = folder / f"empty-{attempt}.db"
        runs["empty"].append(time_start(empty))
        runs["history"].append(time_start(history))  # each run adds one round to it: 10,000 + 3 at most
        for leftover in folder.glob(f"empty-{attempt}.db*"):
            leftover.unlink()
    empty_s = statistics.median(t for t, _ in runs["empty"])
    full_s = statistics.median(t for t, _ in runs["history"])
    empty_kib = max(m for _, m in runs["empty"])
    full_kib = max(m for _, m in runs["history"])
    print(f"start-up to the first round: empty journal {empty_s:.3f} s, {rounds:,} rounds {full_s:.3f} s: "
          f"ratio {full_s / empty_s:.2f} (goal <= 1.2)")
    print(f"peak memory of crisscross run: empty journal {empty_kib / 1024:.1f} MiB, {rounds:,} rounds "
          f"{full_kib / 1024:.1f} MiB: ratio {full_kib / empty_kib:.2f} (goal within 1.10)")


class BareFsync:
    """One ``write`` of 400 bytes + ``fsync`` to a file in ``folder`` per call; ``times`` in seconds."""

    def __init__(self, folder: Path) -> None:
        self.fd = os.open(folder / "bare", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.times: list[float] = []

    def __call__(self) -> None:
        began = time.perf_counter()
        os.write(self.fd, b"x" * 400)
        os.fsync(self.fd)
        self.times.append(time.perf_counter() - began)

    def close(self) -> None:
        os.close(self.fd)


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def commit_cost(folder: Path, rounds: int) -> None:
    journal = Journal(folder / "latency.db")
    table = Table(journal)
    start(table)
    bare = BareFsync(folder)
    table.peer = bare
    rng = random.Random(11)
    timed: list[float] = []
    for _ in range(rounds):
        play_round(table, rng, timed)
    journal.close()
    bare.close()
    p50, p99 = percentile(timed, 50), percentile(timed, 99)
    b50, b99 = percentile(bare.times, 50), percentile(bare.times, 99)
    print(f"press to DISPENSE ({len(timed)} dispenses): p50 {p50 * 1e3:.3f} ms, p99 {p99 * 1e3:.3f} ms; bare "
          f"write+fsync (each right after one): p50 {b50 * 1e3:.3f} ms, p99 {b99 * 1e3:.3f} ms: p99 ratio "
          f"{p99 / b99:.2f} (goal <= 2)")


def chip_changes(folder: Path, seconds: float, rate: float = 960.0) -> None:
    journal = Journal(folder / "chips.db")
    table = Table(journal)
    start(table)
    controller = table.controller
    lags: list[float] = []
    put_at: dict[int, float] = {}
    committed = 0

    def on_record(record) -> None:
        nonlocal committed
        if record["type"] == "SpotChanged":
            committed += 1
            amount = record["data"]["amount"]
            lags.append(time.perf_counter() - put_at.pop(amount))

    controller.on_record = on_record
    thread = threading.Thread(target=controller.run)
    total = int(seconds * rate)
    thread.start()
    began = time.perf_counter()
    for n in range(total):
        due = began + n / rate
        while (now := time.perf_counter()) < due:
            time.sleep(min(due - now, 0.001))
        put_at[n + 1] = time.perf_counter()
        controller.events.put(ev.SpotChanged(1 + n % 6, "ante_across", n + 1))  # amount: which input it is
    controller.events.put(STOP)
    thread.join()
    elapsed = time.perf_counter() - began
    journal.close()
    print(f"chip changes at {rate:.0f}/s for {seconds:.0f} s: {total} put, {committed} journaled "
          f"({total - committed} lost); lag p99 {percentile(lags, 99) * 1e3:.1f} ms, max {max(lags) * 1e3:.1f} ms; "
          f"sustained {committed / elapsed:.0f}/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10_000, help="rounds of history (default 10,000)")
    parser.add_argument("--folder", type=Path, default=None, help="where the journals go (default: a temporary "
                                                                  "folder under the current one); a history.db "
                                                                  "there is used as the history")
    parser.add_argument("--latency-rounds", type=int, default=200)
    parser.add_argument("--chip-seconds", type=float, default=5.0)
    parser.add_argument("--only", choices=("commit", "chips", "startup"), default=None, help="one figure only")
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="bench-journal-", dir="."))
    try:
        if args.only in (None, "commit"):
            commit_cost(folder, args.latency_rounds)
        if args.only in (None, "chips"):
            chip_changes(folder, args.chip_seconds)
        if args.only in (None, "startup"):
            startup(folder, args.rounds)
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
