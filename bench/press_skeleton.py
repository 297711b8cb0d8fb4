"""The press to DISPENSE chain's skeleton: the service's shape with no game in it, a second peer of
``bench.bench_press`` beside the floor.

    python -m bench.press_skeleton [--count 200]

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
"""

from __future__ import annotations

import argparse
import os
import queue
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


def service(panel: str, sensors: str, shoe: str, folder: str) -> None:
    """The skeleton's service process: owner threads on the three ports, the controller on this thread; ends at
    a frame from the panel starting with ``QUIT``. Prints ``ready`` once every port is open."""
    import serial  # pySerial, as the drivers

    db = sqlite3.connect(Path(folder) / "skeleton.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS t(a INTEGER PRIMARY KEY, b BLOB)")
    row = os.urandom(1024)
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
        db.execute("BEGIN")
        db.execute("INSERT INTO t(b) VALUES (?)", (row,))
        db.execute("COMMIT")
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


def skeleton_samples(folder: Path, count: int, pause: float = 0.0) -> list[float]:
    """Milliseconds of ``count`` chains through the skeleton (module docstring), each after ``pause`` seconds
    of idleness (at least 1 ms, so that each chain starts alone). Raises ``RuntimeError`` when the service
    does not start or a chain does not end within ``DEADLINE``."""
    ends = {}
    for name in ("panel", "sensors", "shoe"):
        master, slave = os.openpty()
        tty.setraw(master)
        tty.setraw(slave)
        ends[name] = (master, slave, os.ttyname(slave))
    proc = subprocess.Popen([sys.executable, "-m", "bench.press_skeleton", "--service", ends["panel"][2],
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
    """``--count`` chains through the skeleton and as many floors, printed as p50/p99 and their ratio."""
    if len(sys.argv) == 6 and sys.argv[1] == "--service":
        service(*sys.argv[2:])
        return
    from bench.bench_press import floor_samples, percentile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args()
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"press-skeleton-{os.getpid()}"
    folder.mkdir()
    try:
        skeleton = skeleton_samples(folder, args.count)
        floor = floor_samples(folder, args.count)
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    for name, values in (("skeleton", skeleton), ("floor", floor)):
        print(f"{name}: p50 {percentile(values, 50):.2f} ms, p99 {percentile(values, 99):.2f} ms")
    print(f"skeleton / floor: p50 {percentile(skeleton, 50) / percentile(floor, 50):.2f}x, "
          f"p99 {percentile(skeleton, 99) / percentile(floor, 99):.2f}x")


if __name__ == "__main__":
    main()
