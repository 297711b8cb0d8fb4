"""Driver for our automated shoe (docs/protocol.md, "Shoe"; timing in "Timing").

``ShoeDriver.shuffle()`` and ``ShoeDriver.dispense(txn_id, count)`` queue requests; the answers arrive on the
event queue as ``ShuffleComplete`` and ``StackDispensed``. A request without an answer is sent again with the
same payload (the same ``txn_id``); the shoe answers a repeated ``txn_id`` with its recorded stack and never
deals twice, so retransmission is safe (exactly-once dispensing). A FAULT from the shoe is posted as
``DeviceFault("shoe", <SHOE_FAULTS name>, detail)`` and cancels the automatic retransmission of whatever was
outstanding; the controller decides whether to retry the same ``txn_id`` after the dealer cleared the fault.

The shoe's power-on counter (docs/protocol.md, "Power-on counter"), read from IDENT at each handshake and from
every PONG, is posted as ``ShoeBootCount(boots)`` the first time it is learnt and whenever it differs from the
last one seen (kept across reconnections; the round compares it with the journal's across restarts of the
service). A shoe that sends none is accepted; then only a lost link tells of its restarts.

The door (docs/protocol.md, "The door"): its opening is the FAULT ``door_open``; DOOR_CLOSED, sent by the shoe
when the door is shut again, is posted as ``ShoeDoorClosed()``. A shoe that never sends it works the same.

Hole-card secrecy: card values are never logged at INFO or above; only counts and transaction ids are.
"""

from __future__ import annotations

import logging
from typing import Any

from drivers.events import (
    DeviceFault,
    ShoeBootCount,
    ShoeDoorClosed,
    ShoeLastDispense,
    ShuffleComplete,
    StackDispensed,
)
from drivers.framing import NAK_UNKNOWN_TYPE, Frame, Ident, ProtocolError
from drivers.link import Device
from drivers.shoe import protocol

log = logging.getLogger(__name__)


class ShoeDriver(Device):
    """The shoe on one serial port. Constructor arguments as ``drivers.link.Device``."""

    kind = protocol.KIND

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The last power-on counter the shoe reported (owner thread only); None before the first.
        self.boots: int | None = None

    def on_ready(self, ident: Ident) -> list[Any]:
        """IDENT's power-on counter: ``ShoeBootCount`` when it is new (``_counted``)."""
        return self._counted(ident.boots)

    def on_pong(self, payload: bytes) -> list[Any]:
        """PONG's power-on counter: ``ShoeBootCount`` when it differs from the last one seen, so a shoe that
        restarted without losing the link is known within a heartbeat. ``ProtocolError`` for a payload that is
        neither empty nor 4 bytes."""
        return self._counted(protocol.decode_pong(payload))

    def _counted(self, boots: int | None) -> list[Any]:
        if boots is None or boots == self.boots:
            return []
        if self.boots is not None:
            log.warning("%s: the shoe restarted: power-on counter %d, was %d", self.name, boots, self.boots)
        self.boots = boots
        return [ShoeBootCount(boots)]

    def shuffle(self) -> None:
        """Ask the shoe to shuffle (SHUFFLE); ``ShuffleComplete(card_count)`` follows.

        Raises ``DeviceNotRunning`` if the owner thread is not running.
        """
        self.request("shuffle", protocol.SHUFFLE, b"", "SHUFFLE")

    def dispense(self, txn_id: int, count: int) -> None:
        """Ask the shoe to dispense ``count`` cards (2 or 5) under transaction ``txn_id`` (u32).

        ``StackDispensed(txn_id, cards)`` follows; calling again with the same ``txn_id`` returns the same
        cards without dealing again (docs/protocol.md, "Exactly-once dispensing"). Raises ``ProtocolError``
        (a ``ValueError``) for a txn id outside 0..2**32-1 or a count other than 2 or 5, and
        ``DeviceNotRunning`` if the owner thread is not running.
        """
        payload = protocol.encode_dispense(txn_id, count)
        self.request(("dispense", txn_id), protocol.DISPENSE, payload, f"DISPENSE txn {txn_id} ({count} cards)")

    def query_last(self) -> None:
        """Ask the shoe what it last dispensed (QUERY_LAST; docs/protocol.md, "What did you last do").

        ``ShoeLastDispense(txn_id, cards)`` follows (``0, ()`` when the shoe dealt nothing since power-on). The
        request is retransmitted like the others; it changes nothing in the shoe. The controller calls it after
        a restart, before any other shoe command. Raises ``LinkDown`` / ``DeviceNotRunning`` as ``request``.
        """
        self.request("query_last", protocol.QUERY_LAST, b"", "QUERY_LAST")

    def fault_name(self, code: int) -> str:
        """FAULT code -> ``SHOE_FAULTS`` name (``"fault_<code>"`` for codes the protocol does not define)."""
        return protocol.fault_name(code)

    def _malformed(self, key: Any, code: str, what: str, exc: ProtocolError) -> None:
        """An answer to the outstanding request ``key`` that does not parse (``exc``; the frame is NAKed by the
        link): the request is settled, not sent again (the shoe answers a repeated transaction with the same
        record), and ``DeviceFault("shoe", code, detail)`` posted, ``detail`` naming what was wrong by position,
        never by value (hole-card secrecy). Without the request outstanding nothing is posted (a stray frame)."""
        if not self.answered(key):
            return
        detail = f"{what} is malformed: {exc.problem}"
        log.warning("%s: %s", self.name, detail)
        self.post(DeviceFault(self.kind, code, detail))

    def handle_frame(self, frame: Frame) -> list[Any]:
        """SHUFFLE_DONE -> ``ShuffleComplete``; LAST -> ``ShoeLastDispense``; STACK -> ``StackDispensed`` (cards validated as distinct
        two-character cards, as many as the DISPENSE asked for; a different number is posted as
        ``DeviceFault("shoe", "stack_size")`` instead: the stack cannot be trusted, the round is voided; a STACK
        that does not parse (a card that is not one, a card twice, a length that does not match) answering an
        outstanding DISPENSE is NAKed and posted as ``DeviceFault("shoe", "stack_malformed")``, a LAST that does
        not parse as ``DeviceFault("shoe", "protocol")``: neither is asked for again, ``_malformed``). Answers to no outstanding request are logged at DEBUG and not posted again.
        DOOR_CLOSED -> ``ShoeDoorClosed`` (device-initiated: the link acknowledged it and posts a repeat once;
        ``ProtocolError`` NAK reason 2 for a payload that is not empty).
        Other types raise ``ProtocolError`` (NAK reason 1)."""
        if frame.msg_type == protocol.DOOR_CLOSED:
            protocol.decode_door_closed(frame.payload)
            log.info("%s: the shoe's door is closed", self.name)
            return [ShoeDoorClosed()]
        if frame.msg_type == protocol.SHUFFLE_DONE:
            done = protocol.decode_shuffle_done(frame.payload)
            if not self.answered("shuffle"):
                log.debug("%s: SHUFFLE_DONE without an outstanding SHUFFLE, not posted", self.name)
                return []
            log.info("%s: shuffle complete, %d cards", self.name, done.card_count)
            return [ShuffleComplete(done.card_count)]
        if frame.msg_type == protocol.STACK:
            try:
                stack = protocol.decode_stack(frame.payload)
            except ProtocolError as exc:
                txn_id = protocol.stack_txn(frame.payload)
                if txn_id is not None:
                    self._malformed(("dispense", txn_id), "stack_malformed", f"STACK for txn {txn_id}", exc)
                raise
            key = ("dispense", stack.txn_id)
            request = self.outstanding_payload(key)
            if request is None:
                log.debug("%s: STACK for txn %d which is not outstanding, not posted", self.name, stack.txn_id)
                return []
            self.answered(key)
            asked = protocol.decode_dispense(request).count
            if len(stack.cards) != asked:
                detail = f"STACK for txn {stack.txn_id} has {len(stack.cards)} cards, {asked} were asked"
                log.warning("%s: %s", self.name, detail)
                return [DeviceFault(self.kind, "stack_size", detail)]
            log.info("%s: stack dispensed, txn %d, %d cards", self.name, stack.txn_id, len(stack.cards))
            return [StackDispensed(stack.txn_id, stack.cards)]
        if frame.msg_type == protocol.LAST:
            try:
                last = protocol.decode_last(frame.payload)
            except ProtocolError as exc:
                self._malformed("query_last", "protocol", "LAST", exc)
                raise
            if not self.answered("query_last"):
                log.debug("%s: LAST without an outstanding QUERY_LAST, not posted", self.name)
                return []
            log.info("%s: last dispense was txn %d (%d cards)", self.name, last.txn_id, len(last.cards))
            return [ShoeLastDispense(last.txn_id, last.cards)]
        raise ProtocolError(frame.msg_type, "not a shoe -> host message", nak_reason=NAK_UNKNOWN_TYPE)
