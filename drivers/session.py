"""The session's watch over one connection (design.md "Layers of a link"; docs/protocol.md "Heartbeat",
"Flooding"): when to send PING, when a silent device is lost, when a device floods the link.

Plain state owned by the driver's owner thread (``drivers.link.Device``), with the time passed in, so the rules
are tested without a port. The handshake and the state refreshed by the heartbeat (the panel's key) stay with
the device class, which knows what they mean.
"""

from __future__ import annotations

from drivers.timing import LinkTiming

#: A device that sends more than ``FLOOD_RATE`` frames (valid or not) per second on average over
#: ``FLOOD_WINDOW`` seconds is flooding (docs/protocol.md, "Flooding"). A table's devices send a few frames a
#: second, and a simulated table dealing as fast as it can some 400 (every chip of every round); 115,200 baud
#: carries at most about 1,600 of the shortest frames a second: more than 1,000 for 3 s is no table's traffic.
FLOOD_RATE = 1000
FLOOD_WINDOW = 3.0


class Liveness:
    """The heartbeat, silence and flooding rules for one connection opened at ``now``."""

    def __init__(self, timing: LinkTiming, now: float) -> None:
        self.timing = timing
        self.last_rx = self.last_ping = now
        self._window_start, self._received = now, 0

    def received(self, now: float, frames: int, errors: int) -> str | None:
        """``frames`` valid frames and ``errors`` dropped pieces arrived by ``now``; return why the device is
        flooding, or None."""
        if frames:
            self.last_rx = now
        self._received += frames + errors
        elapsed = now - self._window_start
        if elapsed < FLOOD_WINDOW:
            return None
        count, self._window_start, self._received = self._received, now, 0
        if count > FLOOD_RATE * elapsed:
            return f"{count} frames in {elapsed:.1f} s, more than {FLOOD_RATE} a second"
        return None

    def silent(self, now: float) -> str | None:
        """Why the link counts as lost at ``now`` (nothing valid for ``link_silence``), or None."""
        quiet = now - self.last_rx
        if quiet > self.timing.link_silence:
            return f"nothing received for {quiet:.2f} s (link_silence {self.timing.link_silence} s)"
        return None

    def ping_due(self, now: float, refresh: bool) -> bool:
        """True if a PING goes now: the device was quiet for ``heartbeat_interval``, or ``refresh`` (a state
        that grants rights must be confirmed), and no PING went in the last interval; records it."""
        interval = self.timing.heartbeat_interval
        if (now - self.last_rx >= interval or refresh) and now - self.last_ping >= interval:
            self.last_ping = now
            return True
        return False
