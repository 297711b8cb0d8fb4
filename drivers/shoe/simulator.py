"""Simulated shoe on a pty (docs/protocol.md, "Shoe"; base behaviour and limits in ``drivers.sim``).

Models one 52-card deck: SHUFFLE restores and shuffles all 52 cards and answers SHUFFLE_DONE(52); DISPENSE
deals the next ``count`` cards and answers STACK; each transaction's result is recorded and a repeated
``txn_id`` is answered with the recorded STACK without dealing again (exactly-once). A dispense with a count
other than 2 or 5 gets NAK reason 2, before the first shuffle NAK reason 3; too few cards left, or a fault
injected with ``inject(name)`` (``name`` one of ``SHOE_FAULTS``: jam, misfeed, unreadable_card, empty,
door_open), answers FAULT and deals nothing (the txn is not recorded, so a later retry of the same id can
succeed; ``door_open`` leaves the door open, below). QUERY_LAST is answered with LAST: the last stack dealt,
or txn 0 and no cards.

For scenarios (hil/scenarios, docs/rig.md): ``stack_deck(cards)`` puts chosen cards on top at the next
shuffle; ``remove_cards(cards)`` keeps cards out of the following shuffles (SHUFFLE_DONE counts fewer than 52)
until ``remove_cards(())``; the faults ``short_stack`` (the next new stack lacks its last card) and
``repeated_card`` (the next new stack's first card is the first card of the stack before it) make a stack that
cannot be trusted, and ``garbled_card`` one that does not parse (its second card sent as ``Zz``, every time the
transaction is asked again); ``power_cycle()`` loses the transaction record and the shuffle, as a shoe without
non-volatile memory for them does when it loses power, and counts one more power-on: the shoe's power-on
counter (``boots``, docs/protocol.md, "Power-on counter"), kept as in non-volatile memory, ends its IDENT and
is its PONG's payload, so the host learns of the restart at the next heartbeat even when the link stayed up.

The door (docs/protocol.md, "The door"): the fault ``door_open`` is the door found open by a DISPENSE, and the
door stays open (``door_open``) until ``close_door()`` shuts it, which sends DOOR_CLOSED (device-initiated:
sent again until acknowledged, held while unplugged); meanwhile every new DISPENSE answers FAULT door_open.
Shutting a door already shut sends nothing.

Does not model: card recognition errors other than injected ones, the time a shuffle or dispense takes, burn
cards, the discard rack, a door opened while no DISPENSE comes, or losing its transaction record on power loss.
"""

from __future__ import annotations

import logging
import random
import secrets
from collections import OrderedDict, deque
from typing import Any, ClassVar

from drivers import framing
from drivers.events import SHOE_FAULTS
from drivers.framing import Frame, ProtocolError
from drivers.shoe import protocol
from drivers.sim import HISTORY, PtySimulator

log = logging.getLogger(__name__)


#: Faults of the shoe simulator that answer one DISPENSE with a stack that cannot be trusted (the round is voided).
BAD_STACKS: tuple[str, ...] = ("short_stack", "repeated_card", "garbled_card")
#: What ``garbled_card`` sends in the place of a stack's second card: two bytes that are no card.
GARBLED = b"Zz"


class ShoeSimulator(PtySimulator):
    """A shoe with one deck. ``seed`` makes the shuffles reproducible (``random.Random(seed)``); without it
    shuffles use ``secrets.SystemRandom()``."""

    kind = protocol.KIND

    RECOVERABLE_IN = frozenset({framing.PING, protocol.SHUFFLE, protocol.DISPENSE, protocol.QUERY_LAST})
    RECOVERABLE_OUT = frozenset({framing.PONG, protocol.SHUFFLE_DONE, protocol.STACK, protocol.LAST})
    #: Whether the shoe says its door shut (DOOR_CLOSED); False: a shoe without that message, whose door shuts
    #: silently (docs/protocol.md, "The door": still a shoe of the protocol).
    sends_door_closed: ClassVar[bool] = True

    def __init__(self, seed: int | None = None, device_id: str = "SIM-SHOE-1", *, link_dir=None,
                 boots: int = 1) -> None:
        super().__init__(device_id, link_dir=link_dir)
        self._boots = framing.check_range(framing.IDENT, "power-on counter", boots, 0, 0xFFFF_FFFF)
        self._rng: random.Random = secrets.SystemRandom() if seed is None else random.Random(seed)
        self._deck: list[str] = []
        self._shuffled = False
        self._records: OrderedDict[int, tuple[str, ...]] = OrderedDict()  # the last HISTORY transactions
        self._garbled: set[int] = set()  # transactions whose STACK is sent with its second card garbled
        self._dispensed: deque[tuple[int, tuple[str, ...]]] = deque(maxlen=HISTORY)
        self._dealt = 0
        self._faults: deque[list[Any]] = deque()  # [FAULT cause, DISPENSE requests still to suffer it]
        self._stacked: tuple[str, ...] = ()
        self._removed: frozenset[str] = frozenset()
        self._forgot = False  # power-cycled: LAST answers txn 0 until the next stack
        self._door_open = False  # opened by the fault door_open, shut by close_door
        self.shuffles = 0

    @property
    def dispensed(self) -> list[tuple[int, tuple[str, ...]]]:
        """The stacks actually dealt, as ``(txn_id, cards)`` in order (a copy of the last ``HISTORY``; repeats
        are not listed)."""
        with self.lock:
            return list(self._dispensed)

    @property
    def dealt(self) -> int:
        """How many stacks were dealt since the simulator started."""
        with self.lock:
            return self._dealt

    def dispensed_since(self, count: int) -> list[tuple[int, tuple[str, ...]]]:
        """The stacks dealt after the first ``count`` (``count`` a value of ``dealt`` read earlier).

        Raises ``ValueError`` when some of them are no longer remembered (more than ``HISTORY`` ago)."""
        with self.lock:
            first_kept = self._dealt - len(self._dispensed)
            if count < first_kept:
                raise ValueError(f"stacks {count} to {first_kept - 1} are no longer remembered")
            return list(self._dispensed)[count - first_kept:]

    @property
    def remaining(self) -> int:
        """Cards left in the shoe."""
        with self.lock:
            return len(self._deck)

    def inject_fault(self, code_name: str) -> None:
        """Same as ``inject(code_name)``: the next DISPENSE answers FAULT ``code_name`` (one of ``SHOE_FAULTS``)
        instead of dealing. Raises ``ValueError`` for an unknown name."""
        protocol.fault_code(code_name)
        self.inject(code_name)

    def device_faults(self) -> tuple[str, ...]:
        """The shoe's FAULT causes (``SHOE_FAULTS``): each makes one DISPENSE answer FAULT instead of dealing;
        and ``BAD_STACKS``: one new DISPENSE answered with a stack that cannot be trusted."""
        return SHOE_FAULTS + BAD_STACKS

    def stack_deck(self, cards: tuple[str, ...] | list[str]) -> None:
        """At the next shuffle, deal ``cards`` first, in this order (the cross's five, then each stack of two),
        the rest of the deck shuffled after them. ``ValueError`` for a card not in the deck or given twice."""
        cards = tuple(cards)
        if not set(cards) <= set(protocol.DECK) or len(set(cards)) != len(cards):
            raise ValueError(f"cards must be distinct cards of the deck (rank 23456789TJQKA + suit cdhs), got {cards}")
        with self.lock:
            self._stacked = cards

    def remove_cards(self, cards: tuple[str, ...] | list[str]) -> None:
        """Keep ``cards`` out of the following shuffles (a card missing from the deck: SHUFFLE_DONE counts
        fewer than 52) until called again with no cards. ``ValueError`` for a card not in the deck."""
        if not set(cards) <= set(protocol.DECK):
            raise ValueError(f"cards must be cards of the deck, got {tuple(cards)}")
        with self.lock:
            self._removed = frozenset(cards)

    @property
    def boots(self) -> int:
        """The power-on counter: the ``boots`` given at construction, one more after each ``power_cycle``."""
        with self.lock:
            return self._boots

    def boot_count(self) -> int:
        """The power-on counter IDENT ends with (``boots``)."""
        return self.boots

    def pong_payload(self) -> bytes:
        """PONG carries the power-on counter (docs/protocol.md, "Power-on counter")."""
        return protocol.encode_pong(self.boots)

    def power_cycle(self) -> None:
        """Lose power: the transaction record, the deck and the shuffle are gone (LAST answers txn 0 until the
        next stack; a DISPENSE before a new SHUFFLE is refused) and the power-on counter counts one more (it
        wraps at 2**32). The link stays up. ``dispensed`` still lists what was dealt."""
        with self.lock:
            self._boots = (self._boots + 1) % 0x1_0000_0000
            self._last_answer = None  # the frame answered last is forgotten too: a HELLO like it is new
            self._records.clear()
            self._garbled.clear()
            self._deck = []
            self._shuffled = False
            self._forgot = True

    @property
    def door_open(self) -> bool:
        """Whether the door is open: a ``door_open`` FAULT was sent since it was last shut (``close_door``)."""
        with self.lock:
            return self._door_open

    def close_door(self) -> bool:
        """A person shuts the shoe's door (docs/protocol.md, "The door"). When it was open, DOOR_CLOSED is sent
        (device-initiated: acknowledged by the host, sent again until then, held while unplugged; nothing when
        ``sends_door_closed`` is False) and True is returned; a door already shut sends nothing and gives False. Shutting it clears nothing at the host: the
        fault of the opening waits for a supervisor there. ``RuntimeError`` when ``EVENT_QUEUE`` device-initiated
        frames wait already (``PtySimulator.send_event``)."""
        with self.changed:
            if not self._door_open:
                return False
            if self.sends_door_closed:
                self.send_event(protocol.DOOR_CLOSED, b"")
            self._door_open = False
            log.info("shoe-sim: door closed")
            self.changed.notify_all()
            return True

    def inject_device_fault(self, kind: str, count: int) -> None:
        """The next ``count`` new DISPENSE requests answer FAULT ``kind`` and deal nothing."""
        with self.lock:
            self._faults.append([kind, count])

    def clear_faults(self) -> None:
        """Cancel every armed fault (``PtySimulator.clear_faults``), the DISPENSE faults of ``inject_device_fault``
        among them; an open door stays open (``close_door`` shuts it)."""
        super().clear_faults()
        with self.lock:
            self._faults.clear()

    def _next_fault(self) -> str:
        """The cause of the next armed DISPENSE fault, taken off the count (lock held; one armed)."""
        head = self._faults[0]
        head[1] -= 1
        if not head[1]:
            self._faults.popleft()
        return head[0]

    def last(self) -> tuple[int, tuple[str, ...]]:
        """The last stack dealt as ``(txn_id, cards)``, ``(0, ())`` before any."""
        with self.lock:
            return self._dispensed[-1] if self._dispensed and not self._forgot else (0, ())

    def handle(self, frame: Frame) -> None:
        """SHUFFLE -> SHUFFLE_DONE; DISPENSE -> STACK, FAULT or NAK; QUERY_LAST -> LAST (module docstring)."""
        if frame.msg_type == protocol.SHUFFLE:
            framing.decode_empty(protocol.SHUFFLE, frame.payload)
            rest = [card for card in protocol.DECK if card not in self._removed and card not in self._stacked]
            self._rng.shuffle(rest)
            self._deck = [card for card in self._stacked if card not in self._removed] + rest
            self._stacked = ()
            self._shuffled = True
            self.shuffles += 1
            log.info("shoe-sim: shuffled %d cards", len(self._deck))
            self.send(protocol.SHUFFLE_DONE, protocol.encode_shuffle_done(len(self._deck)))
        elif frame.msg_type == protocol.DISPENSE:
            self._dispense(protocol.decode_dispense(frame.payload))
        elif frame.msg_type == protocol.QUERY_LAST:
            framing.decode_empty(protocol.QUERY_LAST, frame.payload)
            txn_id, cards = self.last()
            self.send(protocol.LAST, protocol.encode_last(txn_id, cards))
        else:
            raise ProtocolError(frame.msg_type, "not a host -> shoe message", nak_reason=framing.NAK_UNKNOWN_TYPE)

    def _dispense(self, request: protocol.Dispense) -> None:
        recorded = self._records.get(request.txn_id)
        if recorded is not None:
            log.info("shoe-sim: txn %d repeated, answering the recorded stack", request.txn_id)
            self._send_stack(request.txn_id, recorded)
            return
        if request.count not in protocol.STACK_SIZES:
            raise ProtocolError(protocol.DISPENSE, f"count {request.count} is not one of {protocol.STACK_SIZES}")
        if not self._shuffled:
            raise ProtocolError(protocol.DISPENSE, "no shuffle yet", nak_reason=framing.NAK_NOT_ALLOWED)
        if self._door_open:  # a shoe deals nothing with its door open
            self.send_event(framing.FAULT, framing.encode_fault(protocol.fault_code("door_open"), "door open"))
            return
        bad = self._faults and self._faults[0][0] in BAD_STACKS
        if self._faults and not bad:
            name = self._next_fault()
            self.fault_counts[name] += 1
            self._door_open = self._door_open or name == "door_open"
            self.send_event(framing.FAULT, framing.encode_fault(protocol.fault_code(name), f"injected {name}"))
            return
        if len(self._deck) < request.count:
            detail = f"{len(self._deck)} cards left, {request.count} asked"
            self.send_event(framing.FAULT, framing.encode_fault(protocol.fault_code(SHOE_FAULTS[3]), detail))
            return
        cards = tuple(self._deck[: request.count])
        del self._deck[: request.count]
        if bad:
            name = self._next_fault()
            self.fault_counts[name] += 1
            previous = self._dispensed[-1][1] if self._dispensed else cards
            if name == "garbled_card":  # dealt as usual, its record too; what the line carries is spoilt
                self._garbled.add(request.txn_id)
            else:
                cards = cards[:-1] if name == "short_stack" else (previous[0], *cards[1:])
        self._forgot = False
        self._records[request.txn_id] = cards
        if len(self._records) > HISTORY:
            self._records.popitem(last=False)
        self._dispensed.append((request.txn_id, cards))
        self._dealt += 1
        log.info("shoe-sim: txn %d dealt %d cards, %d left", request.txn_id, len(cards), len(self._deck))
        self._send_stack(request.txn_id, cards)

    def _send_stack(self, txn_id: int, cards: tuple[str, ...]) -> None:
        """STACK for ``txn_id`` (a new one or the record of a repeated one): with its second card replaced by
        ``GARBLED`` for a transaction ``garbled_card`` spoilt, every time it is asked again."""
        payload = protocol.encode_stack(txn_id, cards)
        if txn_id in self._garbled:
            payload = payload[:7] + GARBLED + payload[9:]
        self.send(protocol.STACK, payload)
