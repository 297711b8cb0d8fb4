"""The frame checksum is stateless: device threads computing it at the same time never disturb each other
(docs/protocol.md, "Frame format"; issue: a shared checksum object gave wrong CRCs under two threads).

The right values come from ``reference_crc`` (bit by bit from the CRC-16/IBM-3740 parameters, in
tests/test_framing.py), computed once before the threads start.
"""

from __future__ import annotations

import os
import sys
import threading

import pytest

from drivers import framing
from tests.test_framing import reference_crc

pytestmark = pytest.mark.timeout(120)

#: Checksums computed in all, split evenly across the threads.
CALLS = 1_000_000
THREADS = 2


def test_two_threads_computing_checksums_get_no_wrong_result():
    inputs = [os.urandom(1 + i % 40) for i in range(997)]
    expected = [reference_crc(data) for data in inputs]
    wrong = [0] * THREADS
    start = threading.Barrier(THREADS)

    def work(index: int) -> None:
        start.wait()
        bad = 0
        crc16 = framing.crc16
        for call in range(CALLS // THREADS):
            k = (call * 7 + index) % len(inputs)
            if crc16(inputs[k]) != expected[k]:
                bad += 1
        wrong[index] = bad

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        threads = [threading.Thread(target=work, args=(i,), name=f"crc-{i}") for i in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    assert wrong == [0] * THREADS
