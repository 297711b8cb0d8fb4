"""Benchmark: what decoding one link costs at 115,200 baud, as a fraction of one core (budget: 5% per link).

    python bench/bench_links.py [--seconds S]

For each kind of input, ``S`` seconds of line-rate bytes (115,200 baud, 8N1: 11,520 bytes a second) are fed
to ``drivers.framing.FrameDecoder`` in the pieces a reader gets: one byte per read (the worst case: the driver
reads ``in_waiting or 1`` bytes, and a reader woken for every byte gets one), and 64 bytes per read. Inputs:
random bytes, valid frames (SPOT_CHANGED, as a flooding sensor board sends), a flood of the delimiter 0x00,
and a flood of 0xA5 (version 1's SYNC byte, which cost 93% of a core in version 1). The CPU time spent, divided
by ``S``, is the fraction of a core the link takes. The peer measured in the same run is the least any reader
must do with the same pieces: append them to a buffer and cut it at the delimiters (``bytearray.find``), with
no un-stuffing and no CRC; the ratio says what the decoding itself adds. Exit status 1 if a fraction is over 5%.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from drivers import framing
from drivers.sensors import protocol as sensors

#: Bytes a second on the wire: 115,200 baud, 10 bits per byte (8N1).
LINE_RATE = 115_200 // 10
#: The budget per link, as a fraction of one core.
BUDGET = 0.05


def inputs(size: int) -> dict[str, bytes]:
    frames = b"".join(framing.encode_frame(n & 0xFF, sensors.SPOT_CHANGED,
                                           sensors.encode_spot_changed(1 + n % 6, sensors.SPOTS[n % 6], n))
                      for n in range(size // 10 + 1))
    return {"random bytes": os.urandom(size), "valid frames": frames[:size],
            "delimiter flood (0x00)": bytes(size), "0xA5 flood": b"\xa5" * size}


def pieces(data: bytes, chunk: int) -> list[bytes]:
    return [data[i:i + chunk] for i in range(0, len(data), chunk)]


def cost_decoder(chunks: list[bytes]) -> tuple[float, int]:
    decoder = framing.FrameDecoder(track_sequence=False)
    start = time.process_time()
    frames = 0
    for chunk in chunks:
        frames += len(decoder.feed(chunk))
    return time.process_time() - start, frames


def cost_peer(chunks: list[bytes]) -> float:
    buffer = bytearray()
    start = time.process_time()
    for chunk in chunks:
        buffer += chunk
        end = buffer.find(0)
        while end >= 0:
            del buffer[:end + 1]
            end = buffer.find(0)
        if len(buffer) > framing.MAX_ENCODED:
            buffer.clear()
    return time.process_time() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of line-rate input per case")
    args = parser.parse_args()
    size = int(LINE_RATE * args.seconds)
    print(f"{args.seconds:g} s of input at {LINE_RATE} bytes/s ({size} bytes) per case; budget {BUDGET:.0%} of a core")
    print(f"{'input':<24} {'bytes/read':>10} {'frames':>8} {'core used':>10} {'peer':>8} {'ratio':>6}")
    worst = 0.0
    for name, data in inputs(size).items():
        for chunk in (1, 64):
            parts = pieces(data, chunk)
            spent, frames = cost_decoder(parts)
            peer = cost_peer(parts)
            fraction = spent / args.seconds
            worst = max(worst, fraction)
            print(f"{name:<24} {chunk:>10} {frames:>8} {fraction:>10.2%} {peer / args.seconds:>8.2%} "
                  f"{spent / peer if peer else float('inf'):>6.1f}")
    verdict = "within" if worst <= BUDGET else "OVER"
    print(f"worst: {worst:.2%} of a core per link, {verdict} the {BUDGET:.0%} budget")
    return 0 if worst <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
