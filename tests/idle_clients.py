"""Idle local clients of the service's listening ports, run as their own process by tests/test_control_load.py.

``python -m tests.idle_clients COUNT HOST:PORT [HOST:PORT...]`` keeps ``COUNT`` TCP connections open to each
port, sending nothing; a connection the server closes (or refuses) is opened again, so the ports stay under
siege until the process is told to stop (standard input closed, or SIGTERM). It prints ``holding`` once each
port had ``COUNT`` connections made (accepted or not), then at the end one JSON line of counts per port:
connections made, closed by the server, failed. Its own open-file limit is raised to the hard limit.
"""

from __future__ import annotations

import asyncio
import collections
import json
import resource
import socket
import sys


def free_port() -> int:
    """A loopback TCP port free now (bound and released: another process may take it before it is used)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def accepts(port: int) -> bool:
    """True when a TCP connection to ``port`` on 127.0.0.1 is accepted."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


async def main(count: int, ports: list[tuple[str, int]]) -> dict:
    counts: dict[str, collections.Counter[str]] = {f"{h}:{p}": collections.Counter() for h, p in ports}
    made = asyncio.Event()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(sys.stdin.fileno(), lambda: sys.stdin.buffer.read1(4096) or stop.set())
    opening = asyncio.Semaphore(100)  # connects in flight at once

    async def hold(host: str, port: int) -> None:
        tally = counts[f"{host}:{port}"]
        while not stop.is_set():
            async with opening:
                try:
                    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
                except (OSError, TimeoutError):
                    tally["failed"] += 1
                    if all(c["made"] + c["failed"] >= count for c in counts.values()):
                        made.set()
                    await asyncio.sleep(0.5)
                    continue
            tally["made"] += 1
            if all(c["made"] + c["failed"] >= count for c in counts.values()):
                made.set()
            closed = asyncio.ensure_future(reader.read())  # nothing is sent: the server's answer is its close
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait((closed, stopping), return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if closed.done():
                tally["closed by the server"] += 1
                await asyncio.sleep(0.2)  # then the siege goes on
            else:
                closed.cancel()
            writer.close()

    tasks = [asyncio.ensure_future(hold(h, p)) for h, p in ports for _ in range(count)]
    await made.wait()
    print("holding", flush=True)
    await stop.wait()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {port: dict(c) for port, c in counts.items()}


if __name__ == "__main__":
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    targets = [(a.rpartition(":")[0], int(a.rpartition(":")[2])) for a in sys.argv[2:]]
    print(json.dumps(asyncio.run(main(int(sys.argv[1]), targets))), flush=True)
