"""What the round state machine produces: commands for the devices and records of the round.

Device commands (``Shuffle``, ``Dispense``, ``ReadSpots``, ``SetLamps``, ``Display``) are sent by the service to
the driver of their ``device``; every other output is a record of the round (wagers locked, a stack dealt, a
decision, a reveal, a seat settled, the round closed, an irregularity, a fault, a refused press) that the
service journals and the round summary prints. All are frozen dataclasses of plain data so the journal can
store them as JSON (``to_record``). Amounts are minor units; cards are two-character strings.

Hole-card secrecy: ``StackDealt`` carries face-down cards. It goes to the journal only (a supervisor's record,
PA 58 Pa. Code 674a.11(i)); nothing shows it on the panel, the summary or a log line above debug before the
cards are revealed on the table. ``SeatSettled`` of a seat that folded carries that seat's cards (never turned
on the table) for the same reason, and is likewise journal-only; the summary leaves them out.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Shuffle:
    """Ask the shoe to shuffle its deck and count it (52 expected)."""

    device = "shoe"


@dataclass(frozen=True)
class Dispense:
    """Ask the shoe for a stack of ``count`` cards under transaction ``txn_id`` (exactly once per id).

    ``stack`` is 0 for the cross, k for the k-th player stack; ``seat`` the seat it is for (None for the cross).
    """

    txn_id: int
    count: int
    stack: int
    seat: int | None
    device = "shoe"


@dataclass(frozen=True)
class ReadSpots:
    """Ask the bet sensors for a snapshot of every spot, answered by ``SpotsSnapshot(request_id)``."""

    request_id: int
    device = "sensors"


@dataclass(frozen=True)
class SetLamps:
    """Light exactly these panel buttons: the presses allowed now."""

    buttons: tuple[str, ...]
    device = "panel"


@dataclass(frozen=True)
class Display:
    """Show ``text`` on the dealer panel (never a face-down card)."""

    text: str
    device = "panel"


@dataclass(frozen=True)
class RoundOpened:
    """Betting is open for round ``round_no``."""

    round_no: int


@dataclass(frozen=True)
class WagersLocked:
    """"No more bets": the wagers of record, one ``{"seat": n, "wagers": {wager: amount}}`` per playing seat
    in seat order (NY 5324.39(c)(3))."""

    round_no: int
    seats: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class StackDealt:
    """A stack left the shoe: ``stack`` 0 is the cross (cards in lay-out order), k >= 1 the k-th seat's stack.

    Face-down cards: journal only (see module docstring)."""

    round_no: int
    stack: int
    seat: int | None
    cards: tuple[str, ...]


@dataclass(frozen=True)
class DecisionMade:
    """A seat's decision: ``action`` ``bet`` (``amount`` minor units) or ``fold`` (amount 0)."""

    round_no: int
    decision: str
    seat: int
    action: str
    amount: int


@dataclass(frozen=True)
class CardsRevealed:
    """The dealer turned community cards face up: ``step`` ``across``, ``down`` or ``middle``."""

    round_no: int
    step: str
    cards: tuple[str, ...]


@dataclass(frozen=True)
class SeatSettled:
    """A seat's settlement, as ``SeatSettlement.to_json()`` plus ``returned``/``collected``/``paid`` totals."""

    round_no: int
    seat: int
    settlement: dict[str, Any]


@dataclass(frozen=True)
class RoundClosed:
    """Round ``round_no`` is over; ``totals`` are minor units: wagered, returned, collected, paid, player_net."""

    round_no: int
    totals: dict[str, int]


@dataclass(frozen=True)
class Irregularity:
    """Something off the script that did not stop the round (for example a chip change on a locked spot)."""

    round_no: int | None
    kind: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class FaultRaised:
    """The machine entered its fault state: ``cause`` (e.g. ``jam``, ``link_lost``, ``card_count``), ``detail``."""

    round_no: int | None
    device: str | None
    cause: str
    detail: str


@dataclass(frozen=True)
class PressRefused:
    """A panel press that is not allowed now, and why; nothing changed."""

    button: str
    reason: str


DEVICE_COMMANDS = (Shuffle, Dispense, ReadSpots, SetLamps, Display)


def to_record(output: Any) -> dict[str, Any]:
    """``{"type": ClassName, **fields}`` for journaling (dict keys stay as given; JSON turns ints to strings)."""
    return {"type": type(output).__name__, **dataclasses.asdict(output)}
