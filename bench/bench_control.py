"""Benchmark: the control interface as a client sees it, each figure a ratio against a peer in the same run.

    python -m bench.bench_control [--repeat 3] [--seconds 3] [--connections 16] [--events 300] [--rounds 20]

1. ``GET /state`` on keep-alive connections: ``--connections`` client threads (this process), each with one
   HTTP/1.1 connection, ask ``/state`` again and again for ``--seconds``; requests answered a second, against a
   minimal Starlette application on uvicorn serving the same JSON (the peer), each server a process of its
   own, alternated ``--repeat`` times. Goal: ours at least 0.5x the peer.
2. Record to receipt on the event stream, one client: the server's process hands ``--events`` public records,
   each followed by a view (one pair every 10 ms), to the stream from a thread of its own, as the controller
   does, each carrying the ``time.monotonic()`` of its hand-over (Linux's monotonic clock is one for every process); this process reads
   ``GET /events/stream`` and takes the lag at receipt. The peer: the same records through a minimal Starlette
   ``StreamingResponse`` fed from a thread by ``loop.call_soon_threadsafe``. p50 and p99 of each; goal: p50
   within 3x.
3. CPU a round: ``crisscross run --simulate --rounds N`` (a process of its own, ``--seed 1``) with the control
   interface on and one event-stream client reading it, against the same with the control interface off; the
   CPU time (user + system) of the service's process a round after the first round's summary (the start
   excluded), alternated. Goal: at most 1.2x. Also printed: a record's journal time to its receipt on that
   stream (to the millisecond).

Each part prints its figures and ratio; the load average before and after is printed, since on a shared
machine only the ratios of one run compare.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import queue
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: a view as ``/state`` serves it mid-round (six seats with their wagers), the same bytes for both servers
VIEW = {
    "state": "across_decision", "round_no": 1234, "prompt": "Across decision: seats 1-6", "seq": 987654,
    "seats": {str(s): {"wagers": {"ante_across": 1000, "ante_down": 1000, "five_card_bonus": 500, "across": 0,
                                  "down": 0, "middle": 0}, "folded": False, "cards": None, "status": "playing"}
              for s in range(1, 7)},
    "community": {"across": [None, "Kd", None], "down": [None, None, None], "middle": None},
    "allowed": ["bet_1x", "bet_2x", "bet_3x", "fold"], "locks": [], "test_mode": False, "fault": None,
}


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (0-100) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


# --- the servers, each run as ``python -m bench.bench_control --serve KIND --port-file F`` ----------------------

def _stream_records(hand_over, events: int) -> None:
    """Hand ``events`` inputs' worth, one every 10 ms, to ``hand_over(record, view)`` (a thread's call): a public
    record and the view after it, as the controller publishes an input's records and then its view; each
    carries the monotonic time of its hand-over in ``time``."""
    for seq in range(1, events + 1):
        now = repr(time.monotonic())
        hand_over({"seq": seq, "time": now, "kind": "record", "round": 1,
                   "type": "SpotChanged", "data": {"seat": 1, "spot": "ante_across", "amount": 1000}},
                  {**VIEW, "time": now})
        time.sleep(0.01)


def serve_ours(port_file: Path, events: int) -> None:
    """The project's ``ControlServer`` (no operator: none is needed to read) with ``VIEW`` published; on a
    line ``stream`` on stdin, ``events`` records are handed to it from this thread."""
    from controller.control.server import ControlConfig, ControlServer

    folder = Path(tempfile.mkdtemp(prefix="bench-control-"))
    operators = folder / "operators.yaml"  # no file: no operator
    server = ControlServer(ControlConfig(True, "127.0.0.1", 0, operators), queue.Queue())
    server.start()
    server.publish_view(dict(VIEW))
    port_file.write_text(str(server.port))
    try:
        for line in sys.stdin:
            if line.strip() == "stream":
                _stream_records(lambda record, view: (server.publish_record(record), server.publish_view(view)),
                                events)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def serve_peer(port_file: Path, events: int) -> None:
    """The peer: a minimal Starlette application on uvicorn with ``/state`` (the same JSON) and an event stream
    fed from a thread (``loop.call_soon_threadsafe`` into each client's ``asyncio.Queue``)."""
    import asyncio

    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    body = json.dumps(VIEW, separators=(",", ":")).encode()
    clients: set[asyncio.Queue] = set()
    loop_box: list[asyncio.AbstractEventLoop] = []

    async def state(request):
        return Response(body, media_type="application/json")

    async def stream(request):
        mine: asyncio.Queue = asyncio.Queue(maxsize=1024)
        clients.add(mine)

        async def frames():
            try:
                yield b": open\n\n"
                while True:
                    record, view = await mine.get()
                    yield (f"id: {record['seq']}\nevent: record\ndata: "
                           f"{json.dumps(record, separators=(',', ':'))}\n\n").encode()
                    yield f"event: view\ndata: {json.dumps(view, separators=(',', ':'))}\n\n".encode()
            finally:
                clients.discard(mine)
        return StreamingResponse(frames(), media_type="text/event-stream")

    def publish(record: dict, view: dict) -> None:
        def put() -> None:
            for client in list(clients):
                client.put_nowait((record, {**view, "seq": record["seq"]}))
        loop_box[0].call_soon_threadsafe(put)

    app = Starlette(routes=[Route("/state", state), Route("/events/stream", stream)])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="off"))
    loop = asyncio.new_event_loop()
    loop_box.append(loop)
    thread = threading.Thread(target=lambda: loop.run_until_complete(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    port_file.write_text(str(sock.getsockname()[1]))
    for line in sys.stdin:
        if line.strip() == "stream":
            _stream_records(publish, events)
    server.should_exit = True
    thread.join(timeout=10)


class Server:
    """A server of ``kind`` (``ours`` or ``peer``) in a process of its own; ``port`` once it listens."""

    def __init__(self, kind: str, events: int) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="bench-control-"))
        port_file = self.folder / "port"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.bench_control", "--serve", kind, "--port-file", str(port_file),
             "--events", str(events)], cwd=ROOT, stdin=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the {kind} server did not start")
            time.sleep(0.02)
        self.port = int(port_file.read_text())

    def stream(self) -> None:
        """Tell the server to hand its records to the stream now."""
        self.process.stdin.write("stream\n")
        self.process.stdin.flush()

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def state_rate(port: int, connections: int, seconds: float) -> float:
    """Requests a second answered 200 to ``GET /state`` by ``connections`` keep-alive clients for ``seconds``."""
    counts = [0] * connections
    start = threading.Barrier(connections + 1)
    stop_at = [0.0]

    def client(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        start.wait()
        while time.monotonic() < stop_at[0]:
            connection.request("GET", "/state")
            answer = connection.getresponse()
            answer.read()
            if answer.status != 200:
                raise SystemExit(f"/state answered {answer.status}")
            counts[index] += 1
        connection.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    stop_at[0] = time.monotonic() + seconds
    began = time.monotonic()
    start.wait()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.monotonic() - began)


def stream_lags(server: Server, events: int) -> list[float]:
    """Milliseconds from each record's and each view's hand-over to its receipt on one event stream of
    ``server``."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(f"GET /events/stream HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
    reader = sock.makefile("rb")
    while reader.readline() not in (b"\r\n", b""):  # the answer's head
        pass
    server.stream()
    lags: list[float] = []
    while len(lags) < 2 * events:
        line = reader.readline()
        if not line:
            raise SystemExit("the stream ended early")
        if line.startswith(b"data: ") and b'"time"' in line:
            lags.append((time.monotonic() - float(json.loads(line[6:])["time"])) * 1000)
    sock.close()
    return lags


def _read_stream(reader: socket.socket, lags: list[float]) -> None:
    """Read an event stream to its end, appending to ``lags`` each record's milliseconds from its journal time
    (UTC, to the millisecond) to its receipt."""
    from datetime import datetime

    buffered = b""
    while chunk := reader.recv(65536):
        buffered += chunk
        *lines, buffered = buffered.split(b"\n")
        now = time.time()
        for line in lines:
            if line.startswith(b"data: ") and b'"kind":"record"' in line:
                stamp = datetime.fromisoformat(json.loads(line[6:])["time"]).timestamp()
                lags.append((now - stamp) * 1000)


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system, every thread) of the live process ``pid`` (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_cpu(site: Path, rounds: int, control: bool, lags: list[float]) -> float:
    """CPU seconds (user + system) a round of ``crisscross run --simulate`` on ``site``'s table, with the control
    interface (and one event-stream client reading it, whose records' lags from their journal time are added
    to ``lags``) or without: the CPU from the first round's summary to the end over the ``rounds - 1`` rounds
    after it, so that the start (imports, the devices' handshakes) weighs nothing."""
    table = site / ("table-on.yaml" if control else "table.yaml")
    journal = site / f"journal-{time.monotonic_ns()}.db"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen([sys.executable, "-m", "controller", "run", "--simulate", "--seed", "1",
                                "--rounds", str(rounds), "--config", str(table), "--journal", str(journal)],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    first_round: list[float] = []

    def summaries() -> None:
        for line in process.stdout:
            if not first_round and line.startswith(b"Round "):
                first_round.append(_cpu_of(process.pid))
    summary_reader = threading.Thread(target=summaries, daemon=True)
    summary_reader.start()
    reader = None
    if control:
        port = int((site / "port").read_text())
        deadline = time.monotonic() + 60
        while reader is None:
            try:
                reader = socket.create_connection(("127.0.0.1", port), timeout=1)
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the service's control interface did not open") from None
                time.sleep(0.05)
        reader.sendall(f"GET /events/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        reader.settimeout(None)
        threading.Thread(target=_read_stream, args=(reader, lags), daemon=True).start()
    summary_reader.join(timeout=600)
    if process.wait(timeout=600) != 0 or not first_round:
        raise SystemExit(f"crisscross run exited {process.returncode} (summaries seen: {bool(first_round)})")
    if reader is not None:
        reader.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for suffix in ("", "-wal", "-shm", ".anchor"):
        Path(f"{journal}{suffix}").unlink(missing_ok=True)
    total = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return (total - first_round[0]) / (rounds - 1)


def make_site(folder: Path) -> Path:
    """A table's configuration (``crisscross config init``) with a second ``table-on.yaml`` whose control
    interface is on, at a free port written to ``port``."""
    site = folder / "site"
    subprocess.run([sys.executable, "-m", "controller", "config", "init", str(site)], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (site / "port").write_text(str(port))
    text = (site / "table.yaml").read_text()
    on = text.replace("control:\n  enabled: false\n  host: 127.0.0.1\n  port: 8740",
                      f"control:\n  enabled: true\n  host: 127.0.0.1\n  port: {port}")
    if on == text:
        raise SystemExit("table.yaml's control section is not as expected")
    (site / "table-on.yaml").write_text(on)
    return site


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds of /state requests a server a repeat")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--events", type=int, default=300, help="records on the event stream a server a repeat")
    parser.add_argument("--rounds", type=int, default=20, help="rounds of each simulated run, at least 2 (0: skip part 3)")
    parser.add_argument("--only", choices=("state", "stream", "cpu"), default=None)
    parser.add_argument("--serve", choices=("ours", "peer"), help=argparse.SUPPRESS)
    parser.add_argument("--port-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        (serve_ours if args.serve == "ours" else serve_peer)(args.port_file, args.events)
        return
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    if args.only in (None, "state", "stream"):
        rates: dict[str, list[float]] = {"ours": [], "peer": []}
        lags: dict[str, list[float]] = {"ours": [], "peer": []}
        for repeat in range(args.repeat):
            for kind in ("ours", "peer"):
                server = Server(kind, args.events)
                try:
                    if args.only in (None, "state"):
                        rates[kind].append(state_rate(server.port, args.connections, args.seconds))
                    if args.only in (None, "stream"):
                        lags[kind].extend(stream_lags(server, args.events))
                finally:
                    server.close()
            if args.only in (None, "state"):
                print(f"repeat {repeat + 1}: GET /state {rates['ours'][-1]:.0f} req/s, peer "
                      f"{rates['peer'][-1]:.0f} req/s: {rates['ours'][-1] / rates['peer'][-1]:.2f}x")
        if rates["ours"]:
            ours, peer = statistics.median(rates["ours"]), statistics.median(rates["peer"])
            print(f"GET /state, {args.connections} keep-alive connections: {ours:.0f} req/s against the peer's "
                  f"{peer:.0f} (medians): {ours / peer:.2f}x (goal >= 0.5)")
        if lags["ours"]:
            o50, p50 = percentile(lags["ours"], 50), percentile(lags["peer"], 50)
            print(f"event stream, record to receipt: p50 {o50:.2f} ms, p99 {percentile(lags['ours'], 99):.2f} ms; "
                  f"peer p50 {p50:.2f} ms, p99 {percentile(lags['peer'], 99):.2f} ms: p50 {o50 / p50:.2f}x "
                  f"(goal <= 3)")
    if args.only in (None, "cpu") and args.rounds:
        folder = Path(tempfile.mkdtemp(prefix="bench-control-"))
        try:
            site = make_site(folder)
            cpu: dict[bool, list[float]] = {True: [], False: []}
            service_lags: list[float] = []
            for repeat in range(args.repeat):
                for control in (False, True):
                    cpu[control].append(run_cpu(site, args.rounds, control, service_lags))
                print(f"repeat {repeat + 1}: CPU a round {cpu[True][-1] * 1000:.0f} ms with the control interface "
                      f"and a stream client, {cpu[False][-1] * 1000:.0f} ms without: "
                      f"{cpu[True][-1] / cpu[False][-1]:.2f}x")
            on, off = statistics.median(cpu[True]), statistics.median(cpu[False])
            print(f"CPU a round, {args.rounds} rounds: {on * 1000:.0f} ms on, {off * 1000:.0f} ms off (medians): "
                  f"{on / off:.2f}x (goal <= 1.2)")
            if service_lags:
                print(f"the service's event stream, a record's journal time to its receipt (to the millisecond, "
                      f"{len(service_lags)} records): p50 {percentile(service_lags, 50):.1f} ms, "
                      f"p99 {percentile(service_lags, 99):.1f} ms")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
