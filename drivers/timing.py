"""The timing of a link (docs/protocol.md, "Timing"): every timeout, retry count and interval of a device's
link, checked when built; the table configuration's ``timing:`` keys give its values.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

#: Longest the owner thread blocks in one read (seconds); commands also wake it at once via cancel_read.
POLL_INTERVAL = 0.05


@dataclass(frozen=True)
class LinkTiming:
    """Every timing value of a link, in seconds unless named otherwise (docs/protocol.md, "Timing").

    - ``handshake_timeout``: IDENT must arrive this long after HELLO.
    - ``response_timeout``: the floor of the retransmission delay: an unanswered request is first sent again
      after this long; each further wait doubles, up to ``response_timeout_max`` (the ceiling).
    - ``retries``: how many times a request is sent again after its first send; when the last wait ends
      unanswered, ``DeviceFault(kind, "timeout")`` is posted.
    - ``heartbeat_interval``: after this long without a frame from the device the host sends PING (at most one
      PING per interval).
    - ``link_silence``: no valid frame from the device for this long = the link is lost. Must exceed
      ``heartbeat_interval``.
    - ``reconnect_min`` / ``reconnect_max``: the wait between two searches for a lost device starts at the
      floor and doubles up to the ceiling.
    - ``write_timeout``: a write that does not complete in this long means the link is lost.

    Raises ``ValueError`` naming the field for a non-positive value, a ceiling below its floor, a negative or
    non-integer ``retries`` or a ``link_silence`` not above ``heartbeat_interval``.
    """

    handshake_timeout: float = 3.0
    response_timeout: float = 0.5
    response_timeout_max: float = 4.0
    retries: int = 4
    heartbeat_interval: float = 1.0
    link_silence: float = 3.5
    reconnect_min: float = 0.5
    reconnect_max: float = 8.0
    write_timeout: float = 1.0

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name == "retries":
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ValueError(f"retries must be an integer >= 0, got {value!r}")
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{item.name} must be a positive number of seconds, got {value!r}")
        if self.response_timeout_max < self.response_timeout:
            raise ValueError(f"response_timeout_max {self.response_timeout_max} is below response_timeout "
                             f"{self.response_timeout}")
        if self.reconnect_max < self.reconnect_min:
            raise ValueError(f"reconnect_max {self.reconnect_max} is below reconnect_min {self.reconnect_min}")
        if self.link_silence <= self.heartbeat_interval:
            raise ValueError(f"link_silence {self.link_silence} must exceed heartbeat_interval "
                             f"{self.heartbeat_interval}")

    @property
    def confirm_window(self) -> float:
        """Seconds a state that grants rights (the panel's supervisor key) stays trusted without being confirmed
        by a heartbeat answer: two heartbeat intervals and a response timeout, so one lost PONG does not
        revoke it (docs/protocol.md, "Heartbeat")."""
        return 2 * self.heartbeat_interval + self.response_timeout

    def retransmit_waits(self) -> list[float]:
        """The waits after each send of a request, in order (``retries + 1`` values, seconds): the floor,
        doubling, capped at the ceiling. The last one ends in ``DeviceFault(kind, "timeout")``."""
        waits, wait = [], self.response_timeout
        for _ in range(self.retries + 1):
            waits.append(wait)
            wait = min(wait * 2, self.response_timeout_max)
        return waits
