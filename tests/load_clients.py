"""Hostile local clients of the control interface, run as their own process by tests/test_control_load.py.

``python -m tests.load_clients HOST PORT STREAMS POLLS SLOW SECONDS`` opens ``STREAMS`` event streams that read
and never act, ``POLLS`` long polls waiting for a record far ahead (asked again when answered, a second after a refusal,
as a browser's retry would), and ``SLOW`` connections that send a request
one byte a second (slowloris), all within ``SECONDS``; then prints one JSON line of counts: connections
made, answers by status, connections the server closed, bytes of stream received. Its own open-file limit is
raised to the hard limit.
"""

from __future__ import annotations

import asyncio
import collections
import json
import resource
import sys


async def main(host: str, port: int, streams: int, polls: int, slow: int, seconds: float) -> dict:
    counts: collections.Counter[str] = collections.Counter()
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    opening = asyncio.Semaphore(200)  # connects in flight at once; each client then stays as long as it can

    async def connect():
        async with opening:
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
            except (OSError, TimeoutError):
                counts["connect failed"] += 1
                return None
        counts["connected"] += 1
        return reader, writer

    async def ask(target: str):
        """Connect, send a GET of ``target`` and read the status line: ``(reader, writer, answered with 200)``, or
        None when the connection failed."""
        pair = await connect()
        if pair is None:
            return None
        reader, writer = pair
        try:
            writer.write(f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            line = await asyncio.wait_for(reader.readline(), max(0.1, end - loop.time()))
        except (OSError, TimeoutError):
            writer.close()
            return None
        counts[f"status {line.split(b' ')[1].decode()}" if line else "closed by the server"] += 1
        return (*pair, line.startswith(b"HTTP/1.1 200"))

    async def read_until_end(reader, writer, stream: bool) -> bool:
        """Read what the server sends until the end of the run; True when the server closed first."""
        try:
            while loop.time() < end:
                data = await asyncio.wait_for(reader.read(65536), max(0.1, end - loop.time()))
                if not data:
                    return True
                counts["stream bytes" if stream else "poll bytes"] += len(data)
        except (OSError, TimeoutError):
            pass
        finally:
            writer.close()
        return False

    async def stream() -> None:
        asked = await ask("/events/stream")
        if asked is not None and await read_until_end(*asked[:2], True):
            counts["stream ended by the server"] += 1

    async def poll() -> None:
        while loop.time() < end:
            asked = await ask("/events?after=999999999&timeout=30")
            if asked is None or not await read_until_end(*asked[:2], False):
                return
            if not asked[2]:  # refused (503) or closed unanswered: ask again a second later
                await asyncio.sleep(1.0)

    async def slowloris() -> None:
        pair = await connect()
        if pair is None:
            return
        reader, writer = pair
        request = f"GET /state HTTP/1.1\r\nHost: {host}:{port}\r\nX-Pad: {'a' * 100}\r\n\r\n".encode()
        try:
            for byte in request:
                if loop.time() >= end:
                    counts["slow still open at the end"] += 1
                    return
                writer.write(bytes([byte]))
                await writer.drain()
                try:
                    if not await asyncio.wait_for(reader.read(1), 1.0):
                        counts["slow closed by the server"] += 1
                        return
                except TimeoutError:
                    pass
            counts["slow completed a request"] += 1
        except OSError:
            counts["slow closed by the server"] += 1
        finally:
            writer.close()

    tasks = [stream() for _ in range(streams)] + [poll() for _ in range(polls)] + [slowloris() for _ in range(slow)]
    await asyncio.gather(*tasks)
    return dict(counts)


if __name__ == "__main__":
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    host, port, streams, polls, slow, seconds = sys.argv[1:7]
    print(json.dumps(asyncio.run(main(host, int(port), int(streams), int(polls), int(slow), float(seconds)))))
