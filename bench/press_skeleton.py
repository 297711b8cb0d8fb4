"""The press to DISPENSE chain's skeleton: the service's shape with no game in it, a second peer of
``bench.bench_press`` beside the floor.

    python -m bench.press_skeleton [--count 200] [--repeat 1]

The floor (``bench.bench_press.floor_samples``) is one thread doing the chain's two commits and writing and
reading both ends of one pseudo-terminal: no process or thread ever waits for another. The chain itself crosses
processes and threads at every step. The skeleton keeps every crossing and drops everything else: a service
process (``service``, at the caller's niceness) with one owner thread a device reading its pseudo-terminal with
pySerial (``read(in_waiting or 1)``, woken by ``cancel_read`` when there is something to write, as the drivers
do: drivers/transport.py) that acknowledges each frame (8 bytes) and hands it to a controller thread through a
queue; the controller commits one 1 KiB row (WAL, ``synchronous=FULL``, as the floor) for the press and another
for the reading, and hands READ_SPOTS, then DISPENSE, to the sensors' and the shoe's owner threads. The devices
are threads of the measuring process blocked on their pseudo-terminals, as the simulators are. No framing, no
round machine, no journal records, no view: what the skeleton takes is what the processes, threads and
pseudo-terminals cost, which no work of the controller's can remove.

The reactor (``--shape reactor``, ``reactor``) is the least any service in a process of its own can do on this
chain: one thread owns the three ports (``selectors`` on their descriptors, raw ``os.read``/``os.write``), and
acknowledges, commits and writes the next command inline, with no hand-over between threads. It still crosses
what the floor leaves out: the press and the DISPENSE each cross a pseudo-terminal and wake another process, as
the reading's request and answer do.
"""

from __future__ import annotations

import argparse
import os
import queue
import selectors
import sqlite3
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path

#: Bytes of each frame: the press (panel to host), READ_SPOTS and DISPENSE (host to device), the reading (the
#: sensors to host), an acknowledgement; the floor's request and answer are 12 and 40 bytes.
PRESS, REQUEST, READING, ACK = 12, 12, 40, 8
#: The byte that starts the frame ending the service.
QUIT = b"Q"
#: Longest wait for one chain, seconds.
DEADLINE = 5.0


#: The skeleton's shapes: the service's (owner threads and a controller thread) and the one-thread reactor.
SHAPES = ("threads", "reactor")


def _store(folder: str) -> tuple[sqlite3.Connection, bytes]:
    """The skeleton's store in ``folder`` (WAL, ``synchronous=FULL``, as the floor's) and the 1 KiB row it
    commits for each frame."""
    db = sqlite3.connect(Path(folder) / "skeleton.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS t(a INTEGER PRIMARY KEY, b BLOB)")
    return db, os.urandom(1024)


def _commit(db: sqlite3.Connection, row: bytes) -> None:
    """One transaction of one row, durable when it returns."""
    db.execute("BEGIN")
    db.execute("INSERT INTO t(b) VALUES (?)", (row,))
    db.execute("COMMIT")


def reactor(panel: str, sensors: str, shoe: str, folder: str) -> None:
    """The reactor's service process (module docstring): this one thread owns the three ports; each whole frame
    is acknowledged and committed, then the press's READ_SPOTS or the reading's DISPENSE written, all inline.
    Ends at a frame from the panel starting with ``QUIT``. Prints ``ready`` once every port is open."""
    db, row = _store(folder)
    sizes = {"panel": PRESS, "sensors": READING, "shoe": ACK}
    fds, buffers = {}, {}
    chooser = selectors.DefaultSelector()
    for name, port in (("panel", panel), ("sensors", sensors), ("shoe", shoe)):
        fds[name], buffers[name] = os.open(port, os.O_RDWR | os.O_NOCTTY), b""
        tty.setraw(fds[name])
        chooser.register(fds[name], selectors.EVENT_READ, name)
    following = {"panel": ("sensors", b"R" * REQUEST), "sensors": ("shoe", b"D" * REQUEST)}
    print("ready", flush=True)
    while True:
        for key, _ in chooser.select():
            name = key.data
            buffers[name] += os.read(fds[name], 4096)
            while len(buffers[name]) >= sizes[name]:
                frame, buffers[name] = buffers[name][:sizes[name]], buffers[name][sizes[name]:]
                if frame.startswith(QUIT):
                    return
                os.write(fds[name], b"K" * ACK)
                _commit(db, row)
                if name in following:
                    to, command = following[name]
                    os.write(fds[to], command)


def service(panel: str, sensors: str, shoe: str, folder: str) -> None:
    """The skeleton's service process: owner threads on the three ports, the controller on this thread; ends at
    a frame from the panel starting with ``QUIT``. Prints ``ready`` once every port is open."""
    import serial  # pySerial, as the drivers

    db, row = _store(folder)
    events: queue.Queue[tuple[str, bytes]] = queue.Queue(1000)

    class Owner:
        """One device's owner thread: writes what it is handed, reads frames of ``size`` bytes."""

        def __init__(self, name: str, port: str, size: int) -> None:
            self.name, self.size = name, size
            self.port = serial.serial_for_url(port, baudrate=115200, timeout=0.05, write_timeout=1, exclusive=True)
            self.outbox: queue.SimpleQueue[bytes] = queue.SimpleQueue()
            threading.Thread(target=self.run, daemon=True, name=name).start()

        def send(self, frame: bytes) -> None:
            self.outbox.put(frame)
            self.port.cancel_read()

        def run(self) -> None:
            buffer = b""
            while True:
                while not self.outbox.empty():
                    self.port.write(self.outbox.get())
                buffer += self.port.read(self.port.in_waiting or 1)
                while len(buffer) >= self.size:
                    frame, buffer = buffer[:self.size], buffer[self.size:]
                    self.port.write(b"K" * ACK)
                    events.put((self.name, frame))

    owners = {name: Owner(name, port, size) for name, port, size in
              (("panel", panel, PRESS), ("sensors", sensors, READING), ("shoe", shoe, ACK))}
    print("ready", flush=True)
    while True:
        name, frame = events.get()
        if frame.startswith(QUIT):
            return
        _commit(db, row)
        if name == "panel":
            owners["sensors"].send(b"R" * REQUEST)
        elif name == "sensors":
            owners["shoe"].send(b"D" * REQUEST)


def _device(fd: int, size: int, on_frame) -> None:
    """A device's thread: frames of ``size`` bytes read from ``fd`` to ``on_frame(fd)``, the host's
    acknowledgements (``ACK`` bytes of ``K``) passed over; ends when the service's end is closed."""
    buffer = b""
    while True:
        need = ACK if buffer[:1] == b"K" else size
        if not buffer or len(buffer) < need:
            try:
                buffer += os.read(fd, 4096)
            except OSError:  # the measure is over
                return
            continue
        frame, buffer = buffer[:need], buffer[need:]
        if need == size:
            on_frame(fd)


def skeleton_samples(folder: Path, count: int, pause: float = 0.0, shape: str = "threads") -> list[float]:
    """Milliseconds of ``count`` chains through the skeleton of ``shape`` (one of ``SHAPES``; module
    docstring), each after ``pause`` seconds of idleness (at least 1 ms, so that each chain starts alone).
    Raises ``ValueError`` for an unknown shape, ``RuntimeError`` when the service does not start or a chain does
    not end within ``DEADLINE``."""
    if shape not in SHAPES:
        raise ValueError(f"skeleton shape must be one of {SHAPES}, got {shape!r}")
    ends = {}
    for name in ("panel", "sensors", "shoe"):
        master, slave = os.openpty()
        tty.setraw(master)
        tty.setraw(slave)
        ends[name] = (master, slave, os.ttyname(slave))
    proc = subprocess.Popen([sys.executable, "-m", "bench.press_skeleton", f"--{shape}", ends["panel"][2],
                             ends["sensors"][2], ends["shoe"][2], str(folder)], stdout=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parent.parent)
    samples: list[float] = []
    try:
        if proc.stdout is None or proc.stdout.readline().strip() != b"ready":
            raise RuntimeError("the skeleton's service did not start")
        dispensed: list[float] = []
        arrived = threading.Event()

        def answer(fd: int) -> None:
            os.write(fd, b"A" * READING)

        def dispense(fd: int) -> None:
            dispensed.append(time.monotonic())
            arrived.set()

        for name, size, on_frame in (("sensors", REQUEST, answer), ("shoe", REQUEST, dispense),
                                     ("panel", REQUEST, answer)):  # the panel is sent acknowledgements alone
            threading.Thread(target=_device, args=(ends[name][0], size, on_frame), daemon=True).start()
        for _ in range(count):
            time.sleep(max(pause, 0.001))
            arrived.clear()
            began = time.monotonic()
            os.write(ends["panel"][0], b"P" * PRESS)
            if not arrived.wait(DEADLINE):
                raise RuntimeError(f"no DISPENSE within {DEADLINE} s of a press")
            samples.append((dispensed[-1] - began) * 1000)
        os.write(ends["panel"][0], QUIT * PRESS)
        proc.wait(DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for master, slave, _ in ends.values():
            os.close(slave)
            os.close(master)
        (folder / "skeleton.db").unlink(missing_ok=True)
    return samples


def main() -> None:
    """``--count`` chains through each skeleton (both shapes) and as many floors, ``--repeat`` times alternated,
    printed as p50/p99 and their ratios to the floor."""
    if len(sys.argv) == 6 and sys.argv[1] in ("--threads", "--reactor"):
        (service if sys.argv[1] == "--threads" else reactor)(*sys.argv[2:])
        return
    from bench.bench_press import floor_samples, percentile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"press-skeleton-{os.getpid()}"
    folder.mkdir()
    samples: dict[str, list[float]] = {"threads": [], "reactor": [], "floor": []}
    try:
        for _ in range(args.repeat):
            for shape in SHAPES:
                samples[shape] += skeleton_samples(folder, args.count, shape=shape)
            samples["floor"] += floor_samples(folder, args.count)
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    floor = samples["floor"]
    for name, values in samples.items():
        print(f"{name}: p50 {percentile(values, 50):.2f} ms, p99 {percentile(values, 99):.2f} ms")
    for shape in SHAPES:
        print(f"{shape} / floor: p50 {percentile(samples[shape], 50) / percentile(floor, 50):.2f}x, "
              f"p99 {percentile(samples[shape], 99) / percentile(floor, 99):.2f}x")


if __name__ == "__main__":
    main()
