"""The vocabulary devices speak to the controller: one frozen dataclass per device fact.

Drivers turn decoded frames into these events and post them on the controller's event queue; the round
state machine (``controller.round.machine``) consumes them. Every event is plain data that round-trips through JSON
(``to_record`` / ``event_from_record``) so the journal can store it before it is applied and replay it later.

Spot names follow NY 9 NYCRR 5324.39(a)(2)(i): ``five_card_bonus``, ``ante_across``, ``ante_down``,
``across``, ``down``, ``middle``. Seats are numbered 1-6 from the dealer's left, clockwise.
Amounts are integer minor units (cents). Cards are two characters, rank ``23456789TJQKA`` + suit ``cdhs``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

#: The six betting areas of a seat, nearest the dealer first (NY 5324.39(a)(2)(i)). The index in this
#: tuple is the spot's code on the bet-sensor wire protocol (docs/protocol.md).
SPOTS: tuple[str, ...] = ("five_card_bonus", "ante_across", "ante_down", "across", "down", "middle")

#: Dealer panel buttons; the index + 1 is the button's code on the panel wire protocol (docs/protocol.md).
#: The first five and ``paid`` are the dealer's; ``acknowledge``, ``clear_fault``, ``void_round``,
#: ``accept_mispay``, ``deal_by_hand``, ``deal_by_shoe``, ``hold_seat`` and ``acknowledge_alert`` act only while
#: the supervisor key is turned (``SupervisorKey``).
BUTTONS: tuple[str, ...] = ("open_betting", "no_more_bets", "confirm", "reveal", "exclude",
                            "acknowledge", "clear_fault", "void_round", "paid", "accept_mispay",
                            # switching the dealing mode and holding a seat whose cards are not entered (NY
                            # 5324.39(d)(1), ``controller.round.manual``): supervisor actions
                            "deal_by_hand", "deal_by_shoe", "hold_seat",
                            # a hole-card alert shown to the supervisor (``controller.round.alerts``): a supervisor
                            # action
                            "acknowledge_alert")

#: Shoe fault causes; the index + 1 is the fault code on the shoe wire protocol (docs/protocol.md).
SHOE_FAULTS: tuple[str, ...] = ("jam", "misfeed", "unreadable_card", "empty", "door_open")

#: The cause given to a FAULT code the device's protocol does not define: this prefix and the code
#: (``undefined_fault``). Nothing says what such a device did: the round fails closed (controller/round/faults.py).
UNDEFINED_FAULT = "fault_"


def undefined_fault(code: int) -> str:
    """The ``DeviceFault.code`` of a FAULT ``code`` the protocol does not define: ``"fault_<code>"``."""
    return f"{UNDEFINED_FAULT}{code}"

#: Seats on a Criss-Cross Poker table (NY 5324.39(a)(1): no more than six player positions).
SEATS: tuple[int, ...] = (1, 2, 3, 4, 5, 6)


@dataclass(frozen=True)
class DeviceReady:
    """A device answered the handshake: ``device`` is ``"shoe"``, ``"sensors"`` or ``"panel"``."""

    device: str
    device_id: str
    firmware: str
    protocol: int


@dataclass(frozen=True)
class DeviceFault:
    """A device or its link failed. ``code`` is a short cause (``link_lost``, ``timeout``, ``handshake``,
    ``protocol``, a shoe fault from ``SHOE_FAULTS``, or ``undefined_fault(code)`` for a FAULT code the protocol
    does not define); ``detail`` is human-readable context."""

    device: str
    code: str
    detail: str = ""


@dataclass(frozen=True)
class ShuffleComplete:
    """The shoe finished shuffling and counted ``card_count`` cards (52 expected for one deck)."""

    card_count: int


@dataclass(frozen=True)
class StackDispensed:
    """The shoe dispensed the stack requested by transaction ``txn_id``; ``cards`` in the order recognised."""

    txn_id: int
    cards: tuple[str, ...]


@dataclass(frozen=True)
class ShoeLastDispense:
    """The shoe's answer to "what did you last do" (LAST; docs/protocol.md, "What did you last do"): the last
    stack it dealt, transaction ``txn_id`` and its ``cards`` in the order recognised; ``txn_id`` 0 and ``()``
    when it dealt nothing since power-on. The controller asks after a restart, before anything else."""

    txn_id: int
    cards: tuple[str, ...]


@dataclass(frozen=True)
class ShoeBootCount:
    """The shoe's power-on counter ``boots`` (docs/protocol.md, "Power-on counter": kept in the shoe's
    non-volatile memory, one more at every power-on), carried by its IDENT and PONG. The shoe driver posts it
    the first time it learns the counter in a run and whenever it differs from the last one it saw; the round
    compares it with the last one journaled: another value means the shoe restarted, with or without a lost
    link, and holds neither its shuffle nor its record of transactions."""

    boots: int


@dataclass(frozen=True)
class ShoeDoorClosed:
    """The shoe's door, opened, is shut again (DOOR_CLOSED; docs/protocol.md, "The door"). The shoe reports
    the opening as the fault ``door_open`` (``DeviceFault``) and sends this once when its door sensor sees the
    door shut after it; a shoe that has no such message never sends it. No fields. It clears nothing: the
    fault of the opening waits for a supervisor, who accounts for the deck (the significant event "shoe door
    closed" of NY 9 NYCRR 5317.26, ``controller.round.significant``)."""


@dataclass(frozen=True)
class SpotChanged:
    """The bet sensors saw the chips on ``seat``/``spot`` change to ``amount`` minor units (0 = empty)."""

    seat: int
    spot: str
    amount: int


@dataclass(frozen=True)
class SpotsSnapshot:
    """Answer to a read request ``request_id``: every non-empty spot as ``(seat, spot, amount)`` triples,
    sorted by seat then spot order. Spots not listed are empty."""

    request_id: int
    spots: tuple[tuple[int, str, int], ...]


@dataclass(frozen=True)
class ButtonPressed:
    """The dealer pressed ``button`` (one of ``BUTTONS``) on the panel."""

    button: str


@dataclass(frozen=True)
class SupervisorKey:
    """The supervisor key on the dealer panel was turned on (``on``) or off; ``key_id`` identifies the key
    (and so the supervisor who holds it)."""

    on: bool
    key_id: str


@dataclass(frozen=True)
class CardsEntered:
    """Cards entered as they are turned in a round dealt by hand (NY 9 NYCRR 5324.39(d)(1),
    ``controller.round.manual``): ``seat`` 0 for community cards, else the seat whose two cards these are; ``cards``
    as typed or scanned (checked by the round, not here); ``device`` the source (``panel`` keypad, ``reader``)."""

    seat: int
    cards: tuple[str, ...]
    device: str = "panel"


EVENT_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (DeviceReady, DeviceFault, ShuffleComplete, StackDispensed, SpotChanged, SpotsSnapshot, ButtonPressed,
                SupervisorKey, ShoeLastDispense, CardsEntered, ShoeBootCount, ShoeDoorClosed)
}


def to_record(event: Any) -> dict[str, Any]:
    """Return ``{"type": ClassName, **fields}`` for a device event (tuples become lists in JSON)."""
    return {"type": type(event).__name__, **dataclasses.asdict(event)}


def event_from_record(record: dict[str, Any]) -> Any:
    """Rebuild an event from ``to_record`` output (after a JSON round trip).

    Raises ``ValueError`` naming the type when it is unknown or the fields do not match.
    """
    fields = dict(record)
    name = fields.pop("type", None)
    cls = EVENT_TYPES.get(name)
    if cls is None:
        raise ValueError(f"unknown device event type {name!r}")
    if cls in (StackDispensed, ShoeLastDispense, CardsEntered):
        fields["cards"] = tuple(fields.get("cards", ()))
    elif cls is SpotsSnapshot:
        fields["spots"] = tuple(tuple(s) for s in fields.get("spots", ()))
    try:
        return cls(**fields)
    except TypeError as exc:
        raise ValueError(f"bad fields for {name}: {exc}") from None
