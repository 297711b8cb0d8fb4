"""Driver for the dealer panel (docs/protocol.md, "Dealer panel").

``set_lamps`` and ``show`` are fire-and-forget (the panel answers only with NAK when it rejects a frame;
resending the full lamp state or text is idempotent, so the controller simply sends the state again).
BUTTON frames become ``ButtonPressed`` events, KEY frames ``SupervisorKey`` events, CARDS frames
``CardsEntered`` events (each acknowledged by the link and delivered once); an unknown button code or a malformed key is logged and NAKed.

The supervisor key grants rights, so it is never assumed (docs/protocol.md, "Dealer panel", "Heartbeat"):
while a key is on, the driver sends PING every heartbeat interval and the panel reports its key in each PONG;
a PONG reporting no key, a key not confirmed within ``LinkTiming.confirm_window`` or a lost link each post
``SupervisorKey(False, key_id)``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from drivers.events import ButtonPressed, CardsEntered, SupervisorKey
from drivers.framing import NAK_UNKNOWN_TYPE, Frame, ProtocolError
from drivers.link import Device
from drivers.panel import protocol

log = logging.getLogger(__name__)


class PanelDriver(Device):
    """The dealer panel on one serial port. Constructor arguments as ``drivers.link.Device``."""

    kind = protocol.KIND
    #: The last LAMPS payload sent, repeated with each heartbeat (None before the first ``set_lamps``).
    _lamps_payload: bytes | None = None
    #: The id of the key believed turned (owner thread only), and when the panel last confirmed it.
    _key: str | None = None
    _key_confirmed = 0.0

    def _key_now(self, key_id: str | None) -> list[Any]:
        """Record the key as the panel reports it now; a ``SupervisorKey`` event when it changed."""
        previous, self._key = self._key, key_id
        self._key_confirmed = time.monotonic()
        if key_id == previous:
            return []
        if key_id is None:
            return [SupervisorKey(False, previous)]
        return ([SupervisorKey(False, previous)] if previous is not None else []) + [SupervisorKey(True, key_id)]

    def on_pong(self, payload: bytes) -> list[Any]:
        """The panel's key state in its heartbeat answer: confirms the key, or reports it turned on or off."""
        status = protocol.decode_key_status(payload)
        return self._key_now(status.key_id if status.on else None)

    def refresh_due(self) -> bool:
        """While a key is on it is confirmed every heartbeat interval."""
        return self._key is not None

    def on_tick(self, now: float) -> list[Any]:
        """A key not confirmed within ``confirm_window`` counts as off."""
        if self._key is None or now - self._key_confirmed <= self.timing.confirm_window:
            return []
        log.warning("%s: supervisor key %s not confirmed for %.1f s: counted as off", self.name, self._key,
                    now - self._key_confirmed)
        return self._key_now(None)

    def on_link_lost(self) -> list[Any]:
        """A key that can no longer be confirmed counts as off."""
        return self._key_now(None)

    def set_lamps(self, buttons: Iterable[str]) -> None:
        """Light exactly the lamps of ``buttons`` (names from ``BUTTONS``), all others off (LAMPS).

        The same lamp state is sent again with every heartbeat PING (LAMPS is idempotent; docs/protocol.md,
        "Heartbeat"), so a lost LAMPS frame is repaired within a heartbeat interval. Raises ``ProtocolError``
        (a ``ValueError``) for an unknown name, ``LinkDown`` / ``DeviceNotRunning`` if the link is down.
        """
        payload = protocol.encode_lamps(buttons)
        self.send(protocol.LAMPS, payload)
        self._lamps_payload = payload

    def on_heartbeat(self) -> list[tuple[int, bytes]]:
        """The last lamp state, to be sent again with the heartbeat (none before the first ``set_lamps``)."""
        payload = self._lamps_payload
        return [] if payload is None else [(protocol.LAMPS, payload)]

    def show(self, text: str) -> None:
        """Show ``text`` on the panel display (DISPLAY), cut to 64 UTF-8 bytes at a character boundary.

        Raises ``TypeError`` if ``text`` is not a str, ``ProtocolError`` if it cannot be UTF-8 encoded and
        ``DeviceNotRunning`` if not running.
        """
        self.send(protocol.DISPLAY, protocol.encode_display(protocol.fit_display(text)))

    def handle_frame(self, frame: Frame) -> list[Any]:
        """BUTTON -> ``ButtonPressed``, KEY -> ``SupervisorKey`` when the key changed, CARDS -> ``CardsEntered``; a bad payload raises ``ProtocolError``
        (logged, NAK reason 2); other types raise ``ProtocolError`` (NAK reason 1)."""
        if frame.msg_type == protocol.BUTTON:
            button = protocol.decode_button(frame.payload)
            log.info("%s: button %s pressed", self.name, button.button)
            return [ButtonPressed(button.button)]
        if frame.msg_type == protocol.KEY:
            key = protocol.decode_key(frame.payload)
            log.info("%s: supervisor key %s turned %s", self.name, key.key_id, "on" if key.on else "off")
            return self._key_now(key.key_id if key.on else None)
        if frame.msg_type == protocol.CARDS:  # cards typed as turned (dealing by hand): the log names no card
            entry = protocol.decode_cards(frame.payload)
            log.info("%s: %d card(s) entered for %s", self.name, len(entry.cards),
                     f"seat {entry.seat}" if entry.seat else "the community")
            return [CardsEntered(entry.seat, entry.cards, "panel")]
        raise ProtocolError(frame.msg_type, "not a panel -> host message", nak_reason=NAK_UNKNOWN_TYPE)
