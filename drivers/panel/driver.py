"""Driver for the dealer panel (docs/protocol.md, "Dealer panel").

``set_lamps`` and ``show`` are fire-and-forget (the panel answers only with NAK when it rejects a frame;
resending the full lamp state or text is idempotent, so the controller simply sends the state again).
BUTTON frames become ``ButtonPressed`` events, KEY frames ``SupervisorKey`` events; an unknown button code
or a malformed key is logged and NAKed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from drivers.events import ButtonPressed, SupervisorKey
from drivers.framing import NAK_UNKNOWN_TYPE, Frame, ProtocolError
from drivers.link import Device
from drivers.panel import protocol

log = logging.getLogger(__name__)


class PanelDriver(Device):
    """The dealer panel on one serial port. Constructor arguments as ``drivers.link.Device``."""

    kind = protocol.KIND
    #: The last LAMPS payload sent, repeated with each heartbeat (None before the first ``set_lamps``).
    _lamps_payload: bytes | None = None

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
        """BUTTON -> ``ButtonPressed``, KEY -> ``SupervisorKey``; a bad payload raises ``ProtocolError``
        (logged, NAK reason 2); other types raise ``ProtocolError`` (NAK reason 1)."""
        if frame.msg_type == protocol.BUTTON:
            button = protocol.decode_button(frame.payload)
            log.info("%s: button %s pressed", self.name, button.button)
            return [ButtonPressed(button.button)]
        if frame.msg_type == protocol.KEY:
            key = protocol.decode_key(frame.payload)
            log.info("%s: supervisor key %s turned %s", self.name, key.key_id, "on" if key.on else "off")
            return [SupervisorKey(key.on, key.key_id)]
        raise ProtocolError(frame.msg_type, "not a panel -> host message", nak_reason=NAK_UNKNOWN_TYPE)
