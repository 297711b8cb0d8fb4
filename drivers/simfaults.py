"""Fault injection of the simulators (docs/protocol.md, "Fault injection"): the controls of a person at the
device: faults armed now (``inject``) or at a moment of the exchange (``inject_on``), at random (``chaos``), and
cancelled (``clear_faults``); ``fault_counts`` counts every fault that took effect, by kind.

``FaultInjection`` is a part of ``drivers.sim.PtySimulator``, which holds the state and the lock.
"""

from __future__ import annotations

import logging
import os
import random
import select
import threading
import time
from collections.abc import Iterable
from typing import Any

from drivers import framing
from drivers.framing import Frame

log = logging.getLogger("drivers.sim")

#: Faults every simulator can inject (docs/protocol.md, "Fault injection"):
#: ``drop_in`` the next ``count`` received frames are lost on the way in (not handled);
#: ``drop_out`` the next ``count`` frames the device sends are lost on the way out (its state changes anyway);
#: ``corrupt`` the next ``count`` sent frames get one byte flipped (XOR 0x5A), at random or at byte index ``at``
#: (1 is the first stuffed byte; never 0, the leading delimiter): the receiver drops that frame (bad CRC or bad
#: stuffing) and reads the next one as usual;
#: ``delay`` the next ``count`` sent frames leave ``seconds`` late (default 0.2; frames behind wait too);
#: ``duplicate`` the next ``count`` sent frames are written twice;
#: ``split`` the next ``count`` sent frames are written in two pieces ``pause`` seconds apart (default 0.02);
#: ``garbage`` ``count`` random bytes are written now;
#: ``silent`` receive nothing and send nothing for ``seconds`` (default: until ``clear_faults()``);
#: ``unplug`` the master end is closed now (a pulled USB adapter); the slave stays until ``stop()``;
#: ``replug`` unplug now and come back ``after`` seconds later (default 0) on a NEW pty (another port name),
#: with the same identity and state; the ``link_dir`` symlink follows;
#: ``nak_in`` the next ``count`` received frames are refused with NAK reason 3 (not allowed now) instead of handled;
#: ``flood`` valid PONG frames are written at ``rate`` a second (default 2,000) for ``seconds`` (default 4), never
#: waiting for the host (docs/protocol.md, "Flooding").
FAULT_KINDS: tuple[str, ...] = ("drop_in", "drop_out", "corrupt", "delay", "duplicate", "split", "garbage",
                                "silent", "unplug", "replug", "nak_in", "flood")
#: Kinds that act on the next sent frames, in the order they were armed.
_OUTGOING = ("drop_out", "corrupt", "delay", "duplicate", "split")
#: Kinds ``chaos`` may choose, per direction; the lossy ones only for frames the protocol recovers.
CHAOS_KINDS: tuple[str, ...] = ("drop_in", "drop_out", "corrupt", "delay", "duplicate", "split")
_LOSSY = ("drop_in", "drop_out", "corrupt")
#: Largest ``count`` of a fault (frames, bytes of ``garbage``, device occasions), largest ``nth`` / ``times``
#: of ``inject_on`` and largest byte index ``at`` of ``corrupt`` (past a frame's end means its last byte): a
#: person at a device does not arm more; a count is kept as a number, never as a list.
MAX_COUNT = 10_000
#: Largest ``seconds``, ``after`` and ``pause`` of a fault, seconds (an hour).
MAX_SECONDS = 3600.0
#: Largest ``rate`` of ``flood``, frames a second.
MAX_RATE = 100_000.0
#: The numeric parameters of a fault: (unit said in a refusal, largest value).
_PARAM_BOUNDS: dict[str, tuple[str, float]] = {"seconds": ("a number of seconds", MAX_SECONDS),
                                               "after": ("a number of seconds", MAX_SECONDS),
                                               "pause": ("a number of seconds", MAX_SECONDS),
                                               "rate": ("a number of frames a second", MAX_RATE)}


def check_whole(name: str, value: Any, low: int, high: int) -> int:
    """``value`` when it is an int (not a bool) from ``low`` to ``high``; otherwise ``ValueError`` "``name``
    must be an integer from ``low`` to ``high``, got ...". The bound of every count of the simulators'
    faults (``MAX_COUNT``)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return value


class FaultInjection:
    """The fault controls of a ``PtySimulator``: its lock, line, state and ``_apply_fault``'s targets
    (``unplug``, ``_replug_now``, ``_write_now``) are the simulator's."""

    def inject(self, kind: str, count: int = 1, **params: Any) -> None:
        """Inject a fault (docs/protocol.md, "Fault injection"): ``kind`` is one of ``FAULT_KINDS`` or of the
        device's ``device_faults()``; ``count`` how many frames (or bytes, for ``garbage``) it affects;
        ``params``: ``seconds`` for ``delay`` and ``silent``, ``pause`` for ``split``, ``after`` for ``replug``,
        ``at`` (a byte index >= 1, past the end means the last byte) for ``corrupt``.

        Raises ``ValueError`` for an unknown kind, a count outside 1..``MAX_COUNT``, an unknown parameter or
        one out of its bounds (``MAX_SECONDS``, ``MAX_RATE``), and ``OSError`` for ``garbage``
        while unplugged.
        """
        self._check_fault(kind, count, params)
        self._apply_fault(kind, count, params)

    def _check_fault(self, kind: str, count: int, params: dict[str, Any]) -> None:
        """Refuse a fault ``inject`` would refuse (``ValueError``), before it is armed or applied."""
        check_whole("count", count, 1, MAX_COUNT)
        allowed = {"delay": {"seconds"}, "silent": {"seconds"}, "split": {"pause"}, "replug": {"after"},
                   "corrupt": {"at"}, "flood": {"seconds", "rate"}}
        if kind not in FAULT_KINDS and kind not in self.device_faults():
            raise ValueError(f"unknown fault {kind!r}; expected one of {FAULT_KINDS + self.device_faults()}")
        unknown = set(params) - allowed.get(kind, set())
        if unknown:
            raise ValueError(f"fault {kind!r} takes no parameter(s) {', '.join(sorted(unknown))}")
        if params.get("at") is not None:  # 0 is the leading delimiter
            check_whole("at (a byte index)", params["at"], 1, MAX_COUNT)
        for name, value in params.items():
            if name == "at" or value is None:
                continue
            what, high = _PARAM_BOUNDS[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
                raise ValueError(f"{name} must be {what} from 0 to {high:g}, got {value!r}")

    def _apply_fault(self, kind: str, count: int, params: dict[str, Any]) -> None:
        if kind == "unplug":
            self.unplug()
        elif kind == "replug":
            self.unplug()
            self.fault_counts["unplug"] -= 1
            self.fault_counts["replug"] += 1
            after = params.get("after") or 0.0
            with self.lock:
                if after == 0:
                    self._replug_now()
                else:
                    self._replug_timer = threading.Timer(after, self._replug_now)
                    self._replug_timer.name = f"{self.kind}-sim-replug"
                    self._replug_timer.start()
        elif kind == "garbage":
            data = bytes(random.getrandbits(8) for _ in range(count))
            with self.lock:
                self.fault_counts["garbage"] += 1
                self._write_now(data)
        elif kind == "silent":
            seconds = params.get("seconds")
            with self.lock:
                self._silent_until = float("inf") if seconds is None else time.monotonic() + seconds
                self.fault_counts["silent"] += 1
        elif kind == "drop_in":
            with self.lock:
                self._drop_in += count
        elif kind == "nak_in":
            with self.lock:
                self._nak_in += count
        elif kind == "flood":
            self.fault_counts["flood"] += 1
            threading.Thread(target=self._flood, args=(params.get("seconds") or 4.0, params.get("rate") or 2000.0),
                             name=f"{self.kind}-sim-flood", daemon=True).start()
        elif kind in _OUTGOING:
            with self.lock:
                self._out_faults.append([kind, dict(params), count])
        else:
            self.inject_device_fault(kind, count)

    def inject_on(self, message: str, kind: str, count: int = 1, *, nth: int = 1, times: int = 1,
                  **params: Any) -> None:
        """Arm a fault for a moment of the exchange: when the ``nth`` next frame of type ``message`` (a name of
        ``framing.MESSAGE_NAMES``: ``DISPENSE``, ``READ_SPOTS``, ``HELLO``...) arrives, ``inject(kind, count,
        **params)`` is done just before that frame is looked at, and again on the ``times - 1`` frames of that
        type that follow (an exact duplicate of the frame answered last is not counted). So ``inject_on(
        "DISPENSE", "jam", nth=3)`` jams the third dispense from now, ``inject_on("READ_SPOTS", "silent",
        seconds=5)`` silences the sensors during the next reading. ``ValueError`` for an unknown message, a
        fault ``inject`` refuses, or ``nth``/``times`` below 1 (docs/protocol.md, "Fault injection")."""
        types = {name: code for code, name in framing.MESSAGE_NAMES.items()}
        if message not in types:
            raise ValueError(f"unknown message {message!r}; expected one of {sorted(types)}")
        check_whole("nth", nth, 1, MAX_COUNT)
        check_whole("times", times, 1, MAX_COUNT)
        self._check_fault(kind, count, params)
        with self.lock:
            self._triggers.append([types[message], nth - 1, times, kind, count, dict(params)])

    def _fire_triggers(self, frame: Frame) -> None:
        """Apply the faults armed by ``inject_on`` for this frame (reader thread, lock held)."""
        last = self._last_answer
        if not self._triggers or (last is not None and last[0] == frame):
            return
        for trigger in list(self._triggers):
            if trigger[0] != frame.msg_type:
                continue
            if trigger[1]:
                trigger[1] -= 1
                continue
            trigger[2] -= 1
            if not trigger[2]:
                self._triggers.remove(trigger)
            log.info("%s-sim: %s on %s", self.kind, trigger[3], framing.message_name(frame.msg_type))
            self._apply_fault(trigger[3], trigger[4], trigger[5])

    def _flood(self, seconds: float, rate: float) -> None:
        """Write PONG frames at ``rate`` a second for ``seconds``, in blocks of 50 paced by the clock (a late
        wake-up writes what is owed since the start), skipping what the pty cannot take now (the host stopped
        reading): a flooding device never waits."""
        block = b"".join(framing.encode_frame(n % 256, framing.PONG, b"") for n in range(50))
        start = time.monotonic()
        counted = 0  # frames written or skipped so far
        while not self._closed:
            now = time.monotonic()
            if now - start >= seconds:
                return
            blocks = min((int((now - start) * rate) - counted) // 50, 40)
            if blocks > 0:
                counted += blocks * 50
                with self.lock:
                    master = self._master
                    if master is not None and select.select([], [master], [], 0)[1]:
                        try:
                            os.write(master, block * blocks)
                        except OSError:
                            pass  # unplugged, or the pty is full: a flooding device does not wait
            time.sleep(0.005)

    def device_faults(self) -> tuple[str, ...]:
        """Fault kinds of this device beyond ``FAULT_KINDS`` (none here; the shoe has its FAULT causes)."""
        return ()

    def inject_device_fault(self, kind: str, count: int) -> None:
        """Arm a device-specific fault from ``device_faults()`` for the next ``count`` occasions."""
        raise ValueError(f"{self.kind} simulator has no fault {kind!r}")

    def clear_faults(self) -> None:
        """Cancel every armed fault, end a silence and stop ``chaos``; delayed frames still leave."""
        with self.lock:
            self._drop_in = 0
            self._nak_in = 0
            self._triggers.clear()
            self._out_faults.clear()
            self._silent_until = None
            self._chaos = None

    def chaos(self, rate: float, seed: int | None = None, kinds: Iterable[str] = CHAOS_KINDS) -> None:
        """Inject faults at random: each frame received or sent suffers, with probability ``rate``, one fault
        drawn from ``kinds`` (a subset of ``CHAOS_KINDS``) that suits its direction; a lossy one (drop, corrupt)
        only on the frame types in ``RECOVERABLE_IN`` / ``RECOVERABLE_OUT``. HELLO and IDENT are spared (the
        start-up handshake is not retried). ``seed`` makes the choices reproducible. ``ValueError`` for a rate
        outside 0..1 or an unknown kind."""
        kinds = frozenset(kinds)
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be from 0 to 1, got {rate!r}")
        if not kinds <= set(CHAOS_KINDS):
            raise ValueError(f"chaos kinds must be among {CHAOS_KINDS}, got {sorted(kinds)}")
        with self.lock:
            self._chaos = (rate, random.Random(seed), kinds) if rate else None

    def _chaos_pick(self, msg_type: int, incoming: bool) -> str | None:
        if self._chaos is None or msg_type in (framing.HELLO, framing.IDENT):
            return None
        rate, rng, kinds = self._chaos
        if rng.random() >= rate:
            return None
        if incoming:
            recoverable = msg_type in self.RECOVERABLE_IN or msg_type == framing.ACK  # a lost ACK: sent again
            options = ["drop_in"] if recoverable and "drop_in" in kinds else []
        else:
            recoverable = msg_type in self.RECOVERABLE_OUT or msg_type in framing.DEVICE_EVENTS
            options = [k for k in sorted(kinds) if k in _OUTGOING and (k not in _LOSSY or recoverable)]
        return rng.choice(options) if options else None

    def _is_silent(self) -> bool:
        if self._silent_until is None:
            return False
        if time.monotonic() >= self._silent_until:
            self._silent_until = None
            return False
        return True

    # Legacy names, kept for existing callers.
    def ignore_next(self, count: int = 1) -> None:
        """Same as ``inject("drop_in", count)``."""
        self.inject("drop_in", count)

    def drop_replies(self, count: int = 1) -> None:
        """Same as ``inject("drop_out", count)``."""
        self.inject("drop_out", count)
