"""The transaction layer of a link (design.md "Layers of a link"; docs/protocol.md "Timing", "Device-initiated
frames"): requests waiting for their answer and when to send them again, and the device-initiated frames
received, to acknowledge and to deliver once.

Plain state owned by one thread (a driver's owner thread, ``drivers.link.Device``): no I/O and no clock of its
own; the caller passes ``time.monotonic()`` values and writes the frames. So it is tested without a port.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from drivers.framing import Frame
from drivers.timing import LinkTiming


@dataclass
class Pending:
    """A request waiting for its answer: ``key`` identifies the answer, ``what`` describes it in logs;
    ``deadline`` is when it is due again, ``wait`` the wait that led there, ``sends`` how often it went,
    ``seqs`` the SEQs it went with (a NAK names one)."""

    key: Hashable
    msg_type: int
    payload: bytes
    what: str
    deadline: float
    wait: float
    sends: int = 1
    seqs: list[int] = field(default_factory=list)


class Transactions:
    """Outstanding requests (retransmitted after ``timing.response_timeout``, each wait doubling up to
    ``timing.response_timeout_max``, ``timing.retries`` times) and device-initiated frames received."""

    def __init__(self, timing: LinkTiming) -> None:
        self.timing = timing
        self._pending: dict[Hashable, Pending] = {}
        #: The last device-initiated frame delivered, as (seq, type, payload): a frame equal to it is the
        #: device sending it again because our ACK was lost. Kept across reconnections.
        self.last_event: tuple[int, int, bytes] | None = None
        #: Device-initiated frames received again and dropped (their ACK had been lost).
        self.repeats = 0
        self._acks: list[int] = []

    # Requests.

    def sent(self, key: Hashable, msg_type: int, payload: bytes, what: str, seq: int, now: float) -> None:
        """A request went out with ``seq`` at ``now``; one with the same key is replaced."""
        wait = self.timing.response_timeout
        self._pending[key] = Pending(key, msg_type, payload, what, deadline=now + wait, wait=wait, seqs=[seq])

    def answered(self, key: Hashable) -> bool:
        """Settle the request ``key``; False if none was outstanding (a late or repeated answer)."""
        return self._pending.pop(key, None) is not None

    def payload(self, key: Hashable) -> bytes | None:
        """The payload of the outstanding request ``key``, or None."""
        pending = self._pending.get(key)
        return None if pending is None else pending.payload

    def due(self, now: float) -> tuple[list[Pending], list[Pending]]:
        """``(to send again, given up)`` at ``now``: those given up (sent ``retries + 1`` times, the last wait
        over) are no longer outstanding; send each of the others again and call ``resent``."""
        again, given_up = [], []
        for key, pending in list(self._pending.items()):
            if now < pending.deadline:
                continue
            if pending.sends > self.timing.retries:
                del self._pending[key]
                given_up.append(pending)
            else:
                again.append(pending)
        return again, given_up

    def resent(self, pending: Pending, seq: int, now: float) -> None:
        """``pending`` went again with ``seq`` at ``now``: the next wait doubles, up to the ceiling."""
        pending.sends += 1
        pending.wait = min(pending.wait * 2, self.timing.response_timeout_max)
        pending.seqs.append(seq)
        pending.deadline = now + pending.wait

    def rejected(self, seq: int) -> Pending | None:
        """The device NAKed the frame ``seq``: the request sent with it, no longer outstanding (None if none)."""
        for key, pending in list(self._pending.items()):
            if seq in pending.seqs:
                del self._pending[key]
                return pending
        return None

    def abandon(self) -> list[str]:
        """Drop every outstanding request (a lost link, a device FAULT); return what they were."""
        whats = [p.what for p in self._pending.values()]
        self._pending.clear()
        return whats

    # Device-initiated frames.

    def received(self, frame: Frame) -> tuple[bool, int | None]:
        """A device-initiated frame arrived: acknowledge it (``take_acks``) and return ``(new, jumped_from)``:
        ``new`` is False for a repeat of the last one delivered (not to deliver again); ``jumped_from`` is the
        last SEQ when the device's event counter did not go up by one (it restarted), else None."""
        self._acks.append(frame.seq)
        key = (frame.seq, frame.msg_type, frame.payload)
        last = self.last_event
        if last == key:
            self.repeats += 1
            return False, None
        self.last_event = key
        return True, (last[0] if last is not None and frame.seq != (last[0] + 1) & 0xFF else None)

    def take_acks(self) -> list[int]:
        """The SEQs to acknowledge now, in arrival order (then forgotten)."""
        acks, self._acks = self._acks, []
        return acks
