"""Benchmark: the dealer's ``no_more_bets`` press to the first DISPENSE frame at the shoe, end to end over
pseudo-terminals, against the chain's own floor measured in the same run.

    python -m bench.bench_press [--rounds 20] [--repeat 3] [--reaction-ms 0,250] [--folder DIR] [--in-process]
                                [--nice N] [--rating]

Each repetition runs a table for ``--rounds`` rounds as the rig does (``hil.rig``): the service in a process of
its own (``crisscross run`` with the real drivers, the controller and the journal with ``synchronous=FULL``, as on
a table PC), the device simulators and the scripted players and dealer in this process on pseudo-terminals.
With ``--in-process`` the whole simulated table runs in this process instead (``crisscross run --simulate``: the
simulators share the service's interpreter, so its threads wait for theirs). It takes, for each round, the
monotonic times (one clock for every process on Linux) of: the simulated panel's ``no_more_bets``
press (the BUTTON frame written), the sensors' simulator receiving the READ_SPOTS that the press asks for, and
the shoe's simulator receiving the round's first DISPENSE (docs/protocol.md). Then the floor, as many times: two
commits of one 1 KiB row each to a SQLite store in the same folder (WAL, ``synchronous=FULL``: the press and
the layout's reading are each committed before the next command goes) plus one sensor reading's round trip on a
pseudo-terminal (a 12-byte request written, read at the other end, a 40-byte answer written back and read).

``--nice N`` runs this process, and so the service, the simulators and the floor, at niceness N (a negative N
needs root): the unit on a table PC runs the service at ``Nice=-10`` (config/systemd/crisscross.service), ahead of
whatever else the PC runs, and the devices have processors of their own; the floor runs at the same niceness, so
the ratio compares like with like.

With ``--rating`` the repetitions alternate without and with ``run --rating`` (docs/rating.md: the session
rating's worker thread in the service's process) and compare the two press to DISPENSE instead.

``--reaction-ms N[,M...]``: the scripted dealer presses ``no_more_bets`` N ms after the chips were reported (the
sensors' simulator has every chip change acknowledged); each reaction given is measured in turn, by default 0 and
250 (``REACTIONS_MS``). At 0 the press reaches the service while it still commits the last chip, and waits for that
commit, and the floor is measured in a loop with no pause: its commits come in a dense stream, which on storage
that answers a flush quickly only then (a virtual disk: ``python -m bench.bench_flush``) makes each of them
several times faster than any commit that follows a device's answer. At 250 the dealer presses as a person does,
and the floor, the skeleton and the reactor are each measured after the same pause, so that all start from the
same idleness.

After the floor, as many chains through the skeleton of the service (``bench.press_skeleton``: the same processes,
owner threads, queues, pseudo-terminals and two commits, no game), after the same pause: what the chain costs
before the controller does any work; and as many through the reactor (the same with one thread owning every port
and committing inline): the least any service in a process of its own can take on this chain.

Printed: p50/p99 of press to DISPENSE and of each hop (press to READ_SPOTS at the sensors, READ_SPOTS to
DISPENSE at the shoe), the sensors' simulator's own time (READ_SPOTS received to its answer written: a device's
processor on a table, not the controller's), the chain without it, the floor, and the ratios press / floor,
with and without the simulator's own time (goal: p50 and p99 within 2x), the skeleton and the reactor against
the floor and the press against both.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
import tty
from pathlib import Path

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.service.assembly import run_service
from controller.settings.argtypes import positive_int_at_most
from controller.settings.text import path_shown
from bench.press_skeleton import skeleton_samples
from hil.rig import run_rig
from drivers.panel import simulator as panel_sim
from drivers.sensors import protocol as sensors_protocol
from drivers.sensors import simulator as sensors_sim
from drivers.shoe import protocol as shoe_protocol
from drivers.shoe import simulator as shoe_sim


#: The dealer's reactions measured by default, ms: at once (the press reaches the service while it still commits
#: the last chip) and as a person presses, a quarter of a second after the chips came to rest at the least.
REACTIONS_MS = (0, 250)


#: The longest reaction measured, ms: a minute (a dealer's reaction is a fraction of a second).
MAX_REACTION_MS = 60_000


def non_negative(text: str) -> float:
    """An argparse type: a number of milliseconds, 0 to ``MAX_REACTION_MS``."""
    value = float(text)
    if not 0 <= value <= MAX_REACTION_MS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of milliseconds from 0 to {MAX_REACTION_MS:,}")
    return value


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (0-100) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


class Stamps:
    """The monotonic times of each round's press, READ_SPOTS at the sensors, the sensors' answer written and the
    first DISPENSE at the shoe, taken by the simulators' threads (each list appended by one thread only);
    ``reaction``: seconds the dealer waits before pressing ``no_more_bets``."""

    def __init__(self, reaction: float = 0.0) -> None:
        self.reaction = reaction
        self.pressed: list[float] = []
        self.read_spots: list[float] = []
        self.answered: list[float] = []
        self.dispensed: list[float] = []
        self._waiting_read = False
        self._waiting_dispense = False

    def install(self) -> None:
        """Wrap the simulators' ``press`` and ``handle`` (class attributes, restored by ``remove``)."""
        self._saved = (panel_sim.PanelSimulator.press, sensors_sim.SensorSimulator.handle,
                       shoe_sim.ShoeSimulator.handle)
        press, read, dispense = self._saved
        stamps = self

        def pressed(sim, button: str) -> None:
            if button == "no_more_bets":
                if stamps.reaction:
                    time.sleep(stamps.reaction)  # the dealer's reaction after the chips came to rest
                stamps.pressed.append(time.monotonic())
                stamps._waiting_read = stamps._waiting_dispense = True
            press(sim, button)

        def sensors_handle(sim, frame) -> None:
            if frame.msg_type == sensors_protocol.READ_SPOTS and stamps._waiting_read:
                stamps.read_spots.append(time.monotonic())
                stamps._waiting_read = False
                read(sim, frame)  # writes the answer, unless it waits behind an unacknowledged chip change
                stamps.answered.append(time.monotonic())
                return
            read(sim, frame)

        def shoe_handle(sim, frame) -> None:
            if frame.msg_type == shoe_protocol.DISPENSE and stamps._waiting_dispense:
                stamps.dispensed.append(time.monotonic())
                stamps._waiting_dispense = False
            dispense(sim, frame)

        panel_sim.PanelSimulator.press = pressed
        sensors_sim.SensorSimulator.handle = sensors_handle
        shoe_sim.ShoeSimulator.handle = shoe_handle

    def remove(self) -> None:
        """Put the simulators' own methods back."""
        panel_sim.PanelSimulator.press, sensors_sim.SensorSimulator.handle, shoe_sim.ShoeSimulator.handle = \
            self._saved

    def chains(self) -> tuple[list[float], list[float], list[float], list[float]]:
        """Milliseconds, per round with all four stamps: press to DISPENSE, press to READ_SPOTS, READ_SPOTS to
        DISPENSE, and the sensors' simulator's own time (READ_SPOTS received to its answer written)."""
        rows = [(p, r, a, d) for p, r, a, d in zip(self.pressed, self.read_spots, self.answered, self.dispensed)
                if p <= r <= a <= d]
        return ([(d - p) * 1000 for p, _, _, d in rows], [(r - p) * 1000 for p, r, _, _ in rows],
                [(d - r) * 1000 for _, r, _, d in rows], [(a - r) * 1000 for _, r, a, _ in rows])


def floor_samples(folder: Path, count: int, pause: float = 0.0) -> list[float]:
    """Milliseconds of ``count`` floors: two 1 KiB commits (WAL, synchronous=FULL) and one pty round trip, each
    after ``pause`` seconds of idleness (the dealer's reaction before a press: caches and processors cool alike)."""
    db = sqlite3.connect(folder / "floor.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS t(a INTEGER PRIMARY KEY, b BLOB)")
    master, slave = os.openpty()
    tty.setraw(slave)
    tty.setraw(master)
    row = os.urandom(1024)
    samples = []
    try:
        for _ in range(count):
            if pause:
                time.sleep(pause)
            began = time.monotonic()
            for _ in range(2):
                db.execute("BEGIN")
                db.execute("INSERT INTO t(b) VALUES (?)", (row,))
                db.execute("COMMIT")
            os.write(slave, b"R" * 12)  # the host's request, read by the device
            _read(master, 12)
            os.write(master, b"A" * 40)  # the device's answer, read by the host
            _read(slave, 40)
            samples.append((time.monotonic() - began) * 1000)
    finally:
        db.close()
        os.close(master)
        os.close(slave)
    return samples


def _read(fd: int, size: int) -> bytes:
    data = b""
    while len(data) < size:
        data += os.read(fd, size - len(data))
    return data


def _run_table(config, rounds: int, seed: int, journal: Path, in_process: bool, rating: bool = False) -> None:
    """One repetition's table: ``rounds`` rounds on a new ``journal``, the service in its own process (the rig)
    or, with ``in_process``, the whole simulated table here; ``rating``: the service rates every seat's session
    (``run --rating``). Raises ``SystemExit`` when it did not end well."""
    if in_process:
        status = run_service(config, simulate=True, rounds=rounds, seed=seed, quiet=True, journal_path=journal,
                             rating=rating, parts=SERVICE_PARTS)
        if status != 0:
            raise SystemExit(f"the simulated table ended with status {status}")
        return
    result = run_rig(rounds, seed, journal, service_options=("--rating",) if rating else ())
    if result.problems:
        raise SystemExit(f"the rig's table did not end well: {result.problems[:3]}")


def existing_folder(text: str) -> Path:
    """An argparse type: an existing folder (``--folder``), else an ``ArgumentTypeError`` naming it escaped."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path_shown(path)} is not a folder")
    return path


def reactions_ms(text: str) -> list[float]:
    """An argparse type: the dealer's reactions in milliseconds, comma-separated, each 0 or more (``"0,250"``)."""
    values = []
    for part in text.split(","):
        try:
            values.append(non_negative(part))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part!r} is not a number of milliseconds from 0 to "
                                             f"{MAX_REACTION_MS:,}") from None
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int_at_most(10_000), default=20)
    parser.add_argument("--repeat", type=positive_int_at_most(1_000), default=3)
    parser.add_argument("--folder", type=existing_folder, default=None, help="where the journals go (default: a temporary one)")
    parser.add_argument("--in-process", action="store_true",
                        help="run the simulated table in this process (crisscross run --simulate) instead of the "
                             "service in a process of its own")
    parser.add_argument("--rating", action="store_true",
                        help="alternate repetitions without and with run --rating (the session rating's worker "
                             "thread) and compare their press to DISPENSE instead of measuring the floor")
    parser.add_argument("--reaction-ms", type=reactions_ms, default=reactions_ms(",".join(map(str, REACTIONS_MS))),
                        help="the dealer presses no_more_bets this many ms after the chips were reported; several, "
                             "comma-separated, are measured in turn (default: 0 and 250, at once and as a person)")
    parser.add_argument("--nice", type=int, default=None,
                        help="niceness of this process and its children (the unit's is -10; negative needs root)")
    args = parser.parse_args()
    if args.nice is not None:
        try:
            os.setpriority(os.PRIO_PROCESS, 0, args.nice)
        except PermissionError:
            raise SystemExit(f"--nice {args.nice}: a niceness below 0 needs root") from None
    folder = args.folder or Path(tempfile.mkdtemp(prefix="bench-press-"))
    config = load_table_config()
    try:
        for reaction_ms in args.reaction_ms:
            print(f"load average before: {os.getloadavg()[0]:.2f}; the service "
                  f"{'in this process' if args.in_process else 'in a process of its own'}, "
                  f"niceness {os.getpriority(os.PRIO_PROCESS, 0)}; the dealer's reaction {reaction_ms:g} ms")
            if args.rating:
                _measure_rating(config, args, folder, reaction_ms)
            else:
                _measure(config, args, folder, reaction_ms)
            print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)


def _measure_rating(config, args: argparse.Namespace, folder: Path, reaction_ms: float) -> None:
    """Press to DISPENSE with ``run --rating`` against without it, repetitions alternated; printed."""
    by_rating: dict[bool, list[float]] = {False: [], True: []}
    for repeat in range(args.repeat * 2):
        rating = repeat % 2 == 1
        stamps = Stamps(reaction_ms / 1000)
        stamps.install()
        try:
            _run_table(config, args.rounds, repeat // 2 + 1, folder / f"journal-{reaction_ms:g}-{repeat}.db",
                       args.in_process, rating)
        finally:
            stamps.remove()
        total = stamps.chains()[0]
        by_rating[rating] += total
        print(f"repeat {repeat + 1} ({'with' if rating else 'without'} --rating): {len(total)} rounds, "
              f"press to DISPENSE p50 {percentile(total, 50):.2f} ms")
    off, on = by_rating[False], by_rating[True]
    print(f"press to DISPENSE without --rating: p50 {percentile(off, 50):.2f} ms, p99 {percentile(off, 99):.2f} ms; "
          f"with: p50 {percentile(on, 50):.2f} ms, p99 {percentile(on, 99):.2f} ms ({len(on)} samples); with / "
          f"without: p50 {percentile(on, 50) / percentile(off, 50):.2f}x, p99 "
          f"{percentile(on, 99) / percentile(off, 99):.2f}x")


def _measure(config, args: argparse.Namespace, folder: Path, reaction_ms: float) -> None:
    """``args.repeat`` tables of ``args.rounds`` rounds with the dealer pressing ``reaction_ms`` after the chips,
    each followed by as many floors, skeleton chains and reactor chains after the same pause; printed."""
    pause = reaction_ms / 1000
    chain: list[float] = []
    first: list[float] = []
    second: list[float] = []
    device: list[float] = []
    floor: list[float] = []
    skeleton: list[float] = []
    reactor: list[float] = []
    for repeat in range(args.repeat):
        stamps = Stamps(pause)
        stamps.install()
        try:
            _run_table(config, args.rounds, repeat + 1, folder / f"journal-{reaction_ms:g}-{repeat}.db",
                       args.in_process)
        finally:
            stamps.remove()
        total, press_to_read, read_to_dispense, answering = stamps.chains()
        chain += total
        first += press_to_read
        second += read_to_dispense
        device += answering
        floor += floor_samples(folder, len(total), pause)
        skeleton += skeleton_samples(folder, len(total), pause)
        reactor += skeleton_samples(folder, len(total), pause, shape="reactor")
        print(f"repeat {repeat + 1}: {len(total)} rounds, press to DISPENSE p50 {percentile(total, 50):.2f} ms; "
              f"floor p50 {percentile(floor[-len(total):], 50):.2f} ms; skeleton p50 "
              f"{percentile(skeleton[-len(total):], 50):.2f} ms; reactor p50 "
              f"{percentile(reactor[-len(total):], 50):.2f} ms")
    own = [total - answering for total, answering in zip(chain, device)]
    for name, values in (("press to DISPENSE at the shoe", chain), ("  press to READ_SPOTS at the sensors", first),
                         ("  READ_SPOTS to DISPENSE at the shoe", second),
                         ("    of which the sensors' simulator's own time", device),
                         ("press to DISPENSE without the simulator's own time", own),
                         ("floor (2 commits + pty round trip)", floor),
                         ("skeleton (the service's processes, threads and ptys, no game)", skeleton),
                         ("reactor (the same processes and ptys, one thread, no game)", reactor)):
        print(f"{name}: p50 {percentile(values, 50):.2f} ms, p99 {percentile(values, 99):.2f} ms "
              f"({len(values)} samples)")
    for name, values in (("press / floor", chain), ("without the simulator's own time / floor", own)):
        print(f"{name}: p50 {percentile(values, 50) / percentile(floor, 50):.2f}x, "
              f"p99 {percentile(values, 99) / percentile(floor, 99):.2f}x (goal: both <= 2)")
    for name, values in (("skeleton", skeleton), ("reactor", reactor)):
        print(f"{name} / floor: p50 {percentile(values, 50) / percentile(floor, 50):.2f}x, "
              f"p99 {percentile(values, 99) / percentile(floor, 99):.2f}x; press / {name}: p50 "
              f"{percentile(chain, 50) / percentile(values, 50):.2f}x, p99 "
              f"{percentile(chain, 99) / percentile(values, 99):.2f}x")


if __name__ == "__main__":
    main()
