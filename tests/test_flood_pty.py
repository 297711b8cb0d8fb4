"""A flooding device over a real pseudo-terminal (docs/architecture.md "Event queue"; docs/protocol.md
"Flooding"): people's actions are applied within a second while a bet-sensor board floods the link with about
40,000 chip changes a second, memory stays bounded, the board is faulted as ``flooding``, and a hostile
device's log lines are bounded.

The hostile boards here are written for the test from docs/protocol.md: they answer the handshake and the
heartbeat, then write frames as fast as they are told, never waiting for an ACK.
"""

from __future__ import annotations

import logging
import os
import queue
import select
import threading
import time
import tty

import pytest

from drivers import DRIVERS, framing
from drivers.events import DeviceFault, DeviceReady
from drivers.panel import protocol as panel_protocol
from drivers.sensors import protocol as sensors_protocol
from drivers.session import FLOOD_WINDOW
from drivers.timing import LinkTiming
from tests.pty_helpers import betting_service, expect

pytestmark = pytest.mark.timeout(90)


class HostileDevice:
    """A device on a pty that answers HELLO and PING and otherwise writes ``frame_bytes`` (a block of frames)
    at ``rate`` frames a second, without waiting for ACKs. One thread reads and writes the master end."""

    def __init__(self, kind: str, frame_bytes: bytes, frames_per_block: int, rate: float) -> None:
        self.kind = kind
        self.block, self.per_block, self.rate = frame_bytes, frames_per_block, rate
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.port = os.ttyname(slave)
        self._slave = slave
        self.flooding = threading.Event()
        self.sent_frames = 0
        self._stop = threading.Event()
        self._seq = 0
        self._thread = threading.Thread(target=self._run, name=f"hostile-{kind}")

    def __enter__(self) -> HostileDevice:
        os.set_blocking(self.master, False)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)
        os.close(self.master)
        os.close(self._slave)

    def _answer(self, msg_type: int, payload: bytes) -> bytes:
        self._seq = (self._seq + 1) & 0xFF
        return framing.encode_frame(self._seq, msg_type, payload)

    def _run(self) -> None:
        decoder = framing.FrameDecoder(track_sequence=False)
        pending = b""
        start = time.monotonic()
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.001)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                for frame in decoder.feed(data):
                    if frame.msg_type == framing.HELLO:
                        pending += self._answer(framing.IDENT, framing.encode_ident(
                            framing.PROTOCOL_VERSION, self.kind, f"HOSTILE-{self.kind}", "x"))
                    elif frame.msg_type == framing.PING:
                        pending += self._answer(framing.PONG, b"")
                    elif frame.msg_type == sensors_protocol.READ_SPOTS:
                        request = sensors_protocol.decode_read_spots(frame.payload).request_id
                        pending += self._answer(sensors_protocol.SPOTS_MSG, sensors_protocol.encode_spots(request, []))
            if not self.flooding.is_set():
                start = time.monotonic()
            elif not pending and self.sent_frames < self.rate * (time.monotonic() - start):
                pending = self.block
                self.sent_frames += self.per_block
            if pending:
                try:
                    written = os.write(self.master, pending)
                    pending = pending[written:]
                except BlockingIOError:
                    time.sleep(0.0005)
                except OSError:
                    pending = b""


def chip_flood_block(count: int = 2000) -> bytes:
    """``count`` SPOT_CHANGED frames over every seat and spot, numbered as new device-initiated frames."""
    frames = []
    for n in range(count):
        seat, spot = 1 + n % 6, sensors_protocol.SPOTS[(n // 6) % 6]
        frames.append(framing.encode_frame(n & 0xFF, sensors_protocol.SPOT_CHANGED,
                                           sensors_protocol.encode_spot_changed(seat, spot, 100 + n)))
    return b"".join(frames)


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_supervisor_is_applied_within_a_second_during_a_chip_flood_and_the_board_is_faulted(tmp_path, caplog):
    with HostileDevice("sensors", chip_flood_block(), 2000, rate=40_000) as board, \
            betting_service(tmp_path, sensors=board.port) as service:
        panel = service.sims["panel"]
        rss_before = rss_bytes()
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            board.flooding.set()
            time.sleep(1.0)  # the flood is on
            panel.turn_key(True, "SUP-1")
            pressed = time.monotonic()
            panel.press("void_round")
            while service.machine.state == "betting" and time.monotonic() < pressed + 5:
                time.sleep(0.005)
            applied = time.monotonic() - pressed
            deadline = time.monotonic() + FLOOD_WINDOW + 10
            while time.monotonic() < deadline and not any(f.cause == "flooding" for f in service.machine.faults):
                time.sleep(0.05)
            faults = [(f.device, f.cause, f.detail) for f in service.machine.faults]
        rss_after = rss_bytes()
    print(f"flood: {faults}; void applied {applied:.3f} s after the press, "
          f"queue at most {service.events.max_length}, {service.events.coalesced} chip changes merged, "
          f"lag at most {service.events.max_lag:.3f} s, rss +{(rss_after - rss_before) / 2**20:.1f} MiB, "
          f"{len(caplog.records)} warning lines")
    assert applied < 1.0
    assert service.machine.state != "betting"
    assert [(device, cause) for device, cause, _ in faults] == [("sensors", "flooding")]
    # At most two chip changes per spot (36 spots) per run of changes; the key and the press each end a run,
    # so three runs at most were queued at once, and nothing was refused.
    assert service.events.max_length <= 3 * 2 * 36 + 8
    assert service.events.refused == 0
    assert rss_after - rss_before < 30 * 2**20
    assert len(caplog.records) < 60


def test_a_hostile_panel_writing_bad_frames_writes_few_log_lines_and_is_faulted(caplog):
    """20,000 BUTTON frames with a button code that does not exist and random sequence numbers: each is
    rejected (and NAKed), a few lines are logged per kind, and the panel is closed as flooding."""
    bad = b"".join(framing.encode_frame((n * 37) & 0xFF, panel_protocol.BUTTON, bytes([99])) for n in range(2000))
    events: queue.Queue = queue.Queue()
    # the driver answers each bad frame with a NAK; a write timeout of 10 s keeps a hostile device that a loaded
    # machine leaves unscheduled for a second (its NAKs unread, the pty full) from looking like a lost link
    timing = LinkTiming(heartbeat_interval=1.0, link_silence=3.0, reconnect_min=0.05, reconnect_max=30.0,
                        write_timeout=10.0)
    with HostileDevice("panel", bad, 2000, rate=10_000) as panel:
        driver = DRIVERS["panel"](panel.port, events, timing=timing)
        driver.start()
        try:
            expect(events, DeviceReady)
            with caplog.at_level(logging.WARNING):
                panel.flooding.set()
                fault = expect(events, DeviceFault, timeout=FLOOD_WINDOW + 10)
                while driver.protocol_errors < 20_000 and fault.code != "flooding":
                    fault = expect(events, DeviceFault, timeout=FLOOD_WINDOW + 10)
        finally:
            driver.stop()
    lines = [r for r in caplog.records if r.name.startswith("drivers")]
    print(f"hostile panel: {driver.protocol_errors} frames rejected, {len(lines)} warning lines")
    assert fault.code == "flooding"
    assert driver.protocol_errors > 1000
    assert len(lines) < 30
