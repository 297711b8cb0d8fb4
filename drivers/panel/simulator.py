"""Simulated dealer panel on a pty (docs/protocol.md, "Dealer panel"; base behaviour and limits in ``drivers.sim``).

Tests press buttons with ``press`` and turn the supervisor key with ``turn_key``; LAMPS and DISPLAY from the host update ``lamps``, ``display`` and
``messages``, and wake ``wait_for_lamp`` / ``wait_for``.

Does not model: key bounce or a held key (one press is one BUTTON frame), a panel that refuses presses of unlit
buttons (the controller must check), display width or scrolling.
"""

from __future__ import annotations

import logging
from collections import deque

from drivers import framing
from drivers.events import BUTTONS
from drivers.framing import Frame, ProtocolError
from drivers.panel import protocol
from drivers.sim import HISTORY, PtySimulator

log = logging.getLogger(__name__)


class PanelSimulator(PtySimulator):
    """A dealer panel with the ``BUTTONS`` keys, one lamp per key and a text display."""

    kind = protocol.KIND
    RECOVERABLE_IN = frozenset({framing.PING})
    RECOVERABLE_OUT = frozenset({framing.PONG})

    def __init__(self, device_id: str = "SIM-PANEL-1", *, link_dir=None) -> None:
        super().__init__(device_id, link_dir=link_dir)
        self._lamps: frozenset[str] = frozenset()
        self._messages: deque[str] = deque(maxlen=HISTORY)
        self._key: str | None = None  # the id of the supervisor key while it is turned
        self._report_key = False

    @property
    def lamps(self) -> frozenset[str]:
        """Names of the buttons whose lamp is lit."""
        with self.lock:
            return self._lamps

    @property
    def display(self) -> str:
        """The text on the display ("" before any DISPLAY)."""
        with self.lock:
            return self._messages[-1] if self._messages else ""

    @property
    def key(self) -> str | None:
        """The id of the supervisor key while it is turned, else None."""
        with self.lock:
            return self._key

    @property
    def messages(self) -> list[str]:
        """The DISPLAY texts received, in order (a copy; the last ``HISTORY``)."""
        with self.lock:
            return list(self._messages)

    def press(self, button: str) -> None:
        """Press ``button`` (a ``BUTTONS`` name): sends BUTTON. ``ValueError`` if unknown, ``OSError`` when
        unplugged."""
        if button not in BUTTONS:
            raise ValueError(f"button must be one of {BUTTONS}, got {button!r}")
        self.send_event(protocol.BUTTON, protocol.encode_button(button))

    def enter_cards(self, seat: int, cards: tuple[str, ...]) -> None:
        """Type ``cards`` on the keypad for ``seat`` (0: community cards) in a round dealt by hand: sends CARDS.
        ``ProtocolError`` for what CARDS cannot carry, ``OSError`` when unplugged."""
        self.send_event(protocol.CARDS, protocol.encode_cards(seat, cards))

    def turn_key(self, on: bool, key_id: str = "SIM-SUPERVISOR") -> None:
        """Turn the supervisor key ``key_id`` on or off: sends KEY. ``ProtocolError`` for a bad id, ``OSError``
        when unplugged."""
        payload = protocol.encode_key(on, key_id)
        with self.lock:
            self._key = key_id if on else None
        self.send_event(protocol.KEY, payload)

    def pong_payload(self) -> bytes:
        """The key as it is now (docs/protocol.md, "Dealer panel"): the host re-confirms it with every PONG."""
        return protocol.encode_key_status(self._key)

    def on_hello(self) -> None:
        """A new host session: a key still turned is reported after the host's first LAMPS or DISPLAY
        (docs/protocol.md, "Dealer panel")."""
        self._report_key = True

    def wait_for_lamp(self, button: str, timeout: float) -> bool:
        """Wait until ``button``'s lamp is lit; False if ``timeout`` seconds passed first."""
        return self.wait_for(lambda: button in self._lamps, timeout)

    def handle(self, frame: Frame) -> None:
        """LAMPS -> ``lamps``; DISPLAY -> ``display`` and ``messages``; other types are NAKed (reason 1)."""
        if frame.msg_type == protocol.LAMPS:
            self._lamps = protocol.decode_lamps(frame.payload).buttons
            log.info("panel-sim: lamps %s", sorted(self._lamps))
        elif frame.msg_type == protocol.DISPLAY:
            self._messages.append(protocol.decode_display(frame.payload).text)
        else:
            raise ProtocolError(frame.msg_type, "not a host -> panel message", nak_reason=framing.NAK_UNKNOWN_TYPE)
        if self._report_key:
            self._report_key = False
            if self._key is not None:
                self.send_event(protocol.KEY, protocol.encode_key(True, self._key))
