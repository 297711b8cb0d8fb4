"""The bench of the device contract suites: a device under test, reached only through its driver.

A ``Bench`` is one device (``shoe``, ``sensors`` or ``panel``) on one line: a simulator on an in-process pair
(``pair``), a simulator on a pseudo-terminal (``pty``), or hardware on a serial port (``hw``, from
``--device KIND=PORT``). Tests start drivers with ``bench.driver()`` and assert on the events the driver posts,
nothing else. What a person does at the device (press a button, put chips on a spot, turn the key, open the
shoe's door) and what a person sees there (lamps, display) goes through ``bench.hands``: on a simulator its
public controls (``press``, ``place``, ``turn_key``, ``inject``, ``lamps``, ``display``), on hardware the
person at the bench, asked at the terminal (tests marked ``person`` run on hardware only with ``--person``).

Lost frames are made on the host's side of the line (``LossyLine``), so a test of what the host may rely on
when a frame is lost runs the same against a simulator and against hardware.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
from collections.abc import Callable
from typing import Any

import pytest

from drivers import DRIVERS, framing
from drivers.link import Device
from drivers.timing import POLL_INTERVAL, LinkTiming
from drivers.transport import SerialTransport, Transport

#: Short timeouts so that a lost frame shows within a second (docs/protocol.md, "Timing"). The silence that
#: drops the link is 3 s, as in the other link tests: no test here waits on it, and on a loaded machine a
#: simulator's thread can be held off the core for most of a second.
FAST = LinkTiming(handshake_timeout=1.0, response_timeout=0.1, response_timeout_max=0.4, retries=4,
                  heartbeat_interval=0.2, link_silence=3.0, reconnect_min=0.05, reconnect_max=0.2,
                  write_timeout=1.0)

#: Longest wait for the person or the simulator to show a lamp or a text (seconds).
WAIT = 5.0


class LineFaults:
    """Frames to lose on the host's side of the line, by message type, for the drivers opened after it is
    armed or already open (thread-safe). ``lost`` counts the frames lost, by type."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._incoming: dict[int, int] = {}
        self._outgoing: dict[int, int] = {}
        self.lost: dict[int, int] = {}

    def lose_incoming(self, msg_type: int, count: int = 1) -> None:
        """The next ``count`` frames of ``msg_type`` from the device never reach the driver."""
        with self._lock:
            self._incoming[msg_type] = self._incoming.get(msg_type, 0) + count

    def lose_outgoing(self, msg_type: int, count: int = 1) -> None:
        """The next ``count`` frames of ``msg_type`` from the driver never reach the device."""
        with self._lock:
            self._outgoing[msg_type] = self._outgoing.get(msg_type, 0) + count

    def take(self, incoming: bool, msg_type: int) -> bool:
        """Whether this frame is to be lost (and count it)."""
        with self._lock:
            table = self._incoming if incoming else self._outgoing
            if table.get(msg_type, 0) <= 0:
                return False
            table[msg_type] -= 1
            self.lost[msg_type] = self.lost.get(msg_type, 0) + 1
            return True


class LossyLine(Transport):
    """A transport that passes every frame of ``inner`` both ways except those ``faults`` says to lose. Frames
    are cut from the byte stream with the protocol's own decoder and written again byte for byte."""

    def __init__(self, inner: Transport, faults: LineFaults) -> None:
        self.inner, self.faults = inner, faults
        self._in = framing.FrameDecoder(name="line<-", track_sequence=False)
        self._out = framing.FrameDecoder(name="line->", track_sequence=False)

    def _filter(self, decoder: framing.FrameDecoder, data: bytes, incoming: bool) -> bytes:
        return b"".join(framing.encode_frame(f.seq, f.msg_type, f.payload) for f in decoder.feed(data)
                        if not self.faults.take(incoming, f.msg_type))

    def read(self) -> bytes:
        """As ``Transport.read``, without the lost frames."""
        return self._filter(self._in, self.inner.read(), True)

    def write(self, data: bytes) -> None:
        """As ``Transport.write``, without the lost frames."""
        kept = self._filter(self._out, data, False)
        if kept:
            self.inner.write(kept)

    def wake(self) -> None:
        """As ``Transport.wake``."""
        self.inner.wake()

    def close(self) -> None:
        """As ``Transport.close``."""
        self.inner.close()


class SimulatedHands:
    """A person's actions at a simulated device, through the simulator's public controls."""

    person = False

    def __init__(self, sim: Any) -> None:
        self.sim = sim

    def press(self, button: str) -> None:
        """Press ``button`` on the panel."""
        self.sim.press(button)

    def turn_key(self, on: bool, key_id: str) -> None:
        """Turn the supervisor key ``key_id`` on or off."""
        self.sim.turn_key(on, key_id)

    def place(self, seat: int, spot: str, amount: int) -> None:
        """Put ``amount`` minor units of chips on ``seat``'s ``spot`` (0: take them away)."""
        self.sim.place(seat, spot, amount)

    def clear_table(self) -> None:
        """Take every chip off the layout."""
        self.sim.clear()

    def cause_shoe_fault(self, cause: str) -> None:
        """Make the next dispense fail with ``cause`` (one of ``SHOE_FAULTS``)."""
        self.sim.inject(cause)

    def end_shoe_fault(self) -> None:
        """The cause of the shoe's fault is gone: the door shut if it was open (the simulator's other faults are
        spent after one dispense)."""
        self.sim.close_door()

    def open_shoe_door(self) -> None:
        """Open the shoe's door: the next dispense finds it open."""
        self.sim.inject("door_open")

    def close_shoe_door(self) -> None:
        """Shut the shoe's door."""
        assert self.sim.close_door(), "the simulated shoe's door was not open"

    def sees_lamps(self, buttons: frozenset[str]) -> bool:
        """Whether exactly the lamps of ``buttons`` are lit (waits up to ``WAIT`` for them)."""
        return self.sim.wait_for(lambda: self.sim.lamps == buttons, WAIT)

    def sees_text(self, text: str) -> bool:
        """Whether the display shows ``text`` (waits up to ``WAIT``)."""
        return self.sim.wait_for(lambda: self.sim.display == text, WAIT)


class PersonAtTheDevice:
    """A person at a real device, asked at the terminal (pytest's capture is suspended while asking)."""

    person = True

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def _ask(self, text: str) -> str:
        capture = self.config.pluginmanager.getplugin("capturemanager")
        with capture.global_and_fixture_disabled() if capture else _nothing():
            return input(f"\n>>> {text} ").strip().lower()

    def _do(self, text: str) -> None:
        self._ask(f"{text}, then press Enter.")

    def _yes(self, text: str) -> bool:
        return self._ask(f"{text} [y/n]").startswith("y")

    def press(self, button: str) -> None:
        """Ask for a press of ``button``."""
        self._do(f"Press {button} once, within 5 s after Enter")

    def turn_key(self, on: bool, key_id: str) -> None:
        """Ask for the supervisor key to be turned on or off (its id is whatever the key carries)."""
        self._do(f"Turn the supervisor key {'on' if on else 'off'} within 5 s after Enter")

    def place(self, seat: int, spot: str, amount: int) -> None:
        """Ask for chips on a spot."""
        self._do(f"Put chips worth {amount} minor units on seat {seat}, {spot}" if amount
                 else f"Take every chip off seat {seat}, {spot}")

    def clear_table(self) -> None:
        """Ask for an empty layout."""
        self._do("Take every chip off the layout")

    def cause_shoe_fault(self, cause: str) -> None:
        """Ask for a condition the shoe reports as a fault."""
        self._do("Open the shoe's door (the next dispense must be refused)")

    def end_shoe_fault(self) -> None:
        """Ask for the condition to end."""
        self._do("Close the shoe's door")

    def open_shoe_door(self) -> None:
        """Ask for the shoe's door open."""
        self._do("Open the shoe's door and leave it open")

    def close_shoe_door(self) -> None:
        """Ask for the shoe's door shut."""
        self._do("Close the shoe's door")

    def sees_lamps(self, buttons: frozenset[str]) -> bool:
        """Ask whether exactly these lamps are lit."""
        lit = ", ".join(sorted(buttons)) or "none"
        return self._yes(f"Are exactly these lamps lit: {lit}?")

    def sees_text(self, text: str) -> bool:
        """Ask whether the display shows ``text``."""
        return self._yes(f"Does the display read {text!r}?")


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@dataclasses.dataclass
class Bench:
    """One device under test (module docstring). ``line``: ``pair``, ``pty`` or ``hw``; ``port``: what the
    driver opens; ``opener``: how (None: the driver's own pySerial opener)."""

    kind: str
    line: str
    port: str
    opener: Callable[[str], Transport] | None
    hands: Any
    timing: LinkTiming = FAST
    faults: LineFaults = dataclasses.field(default_factory=LineFaults)
    drivers: list[Device] = dataclasses.field(default_factory=list)

    @property
    def hardware(self) -> bool:
        """Whether the device is real."""
        return self.line == "hw"

    def _open(self, port: str) -> Transport:
        inner = (self.opener(port) if self.opener
                 else SerialTransport(port, poll=POLL_INTERVAL, write_timeout=self.timing.write_timeout))
        return LossyLine(inner, self.faults)

    def driver(self, kind: str | None = None, *, identity: str | None = None, timing: LinkTiming | None = None,
               events: queue.Queue | None = None) -> tuple[Device, queue.Queue]:
        """A started driver of ``kind`` (default: the bench's) on this device with ``timing`` (default: the
        bench's), and its event queue; stopped when the test ends."""
        events = queue.Queue() if events is None else events
        driver = DRIVERS[kind or self.kind](self.port, events, timing=timing or self.timing, identity=identity,
                                            opener=self._open)
        self.drivers.append(driver)
        driver.start()
        return driver, events

    def close(self) -> None:
        """Stop every driver started here."""
        for driver in self.drivers:
            driver.stop()
        self.drivers.clear()

