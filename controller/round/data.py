"""The round's data: who acted (``Actor``), a playing seat (``SeatState``) and the current round's facts
(``RoundData``). Plain dataclasses rebuilt from inputs alone; every field is kept in the checkpoint
(``controller.round.checkpoint``). Money in minor units, cards as two characters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


#: Where an ``Actor`` acts from: the dealer's panel (a button, the supervisor key) or the control interface.
SOURCES: tuple[str, ...] = ("panel", "control")


@dataclass(frozen=True)
class Actor:
    """Who acted: ``role`` (one of ``ROLES``), ``user`` (supervisor key id or control-interface user; ``""`` for
    the dealer at the panel) and ``source`` (one of ``SOURCES``)."""

    role: str
    user: str
    source: str

    @property
    def name(self) -> str:
        """``user`` if known, else the role."""
        return self.user or self.role


@dataclass
class SeatState:
    """A playing seat in the current round: wagers of record (minor units), its two cards once dealt, and the
    decision at which it folded (None while in action)."""

    seat: int
    wagers: dict[str, int]
    cards: tuple[str, ...] | None = None
    folded_at: str | None = None


@dataclass
class RoundData:
    """The current round's facts, rebuilt from inputs alone."""

    round_no: int
    seats: dict[int, SeatState] = field(default_factory=dict)
    shuffled: bool = False
    stacks_planned: list[int | None] = field(default_factory=list)  # seat per stack, None for the cross
    cross: tuple[str, ...] | None = None
    next_stack: int = 0
    dealt: set[str] = field(default_factory=set)
    stacks: dict[int, tuple[str, ...]] = field(default_factory=dict)  # txn id -> cards, as accepted
    revealed: list[str] = field(default_factory=list)
    locked: dict[tuple[int, str], int] = field(default_factory=dict)
    collectable: set[tuple[int, str]] = field(default_factory=set)  # forfeited: may be emptied by the dealer
    invalid: dict[int, str] = field(default_factory=dict)  # seat -> why its wagers were refused at the lock
    excluded: set[int] = field(default_factory=set)
    bets_closed: bool = False  # "no more bets" was read once: from then on only held seats may change, downwards
    correctable: dict[tuple[int, str], int] = field(default_factory=dict)  # held seats' spots -> most allowed
    pending_acks: list[dict[str, Any]] = field(default_factory=list)  # past-posting awaiting a supervisor
    acknowledged: list[dict[str, Any]] = field(default_factory=list)  # past-posting a supervisor acknowledged
    totals: dict[str, int] | None = None  # the settlement's totals, recorded by RoundClosed once all is paid
    # seat -> controller.game.payout plan
    payout_plan: dict[int, dict[str, dict[str, Any]]] = field(default_factory=dict)
    to_pay: list[int] = field(default_factory=list)  # seats not yet paid and checked, in order; the first is shown
    last_check: dict[str, Any] | None = None  # the current seat's last reading that differed: seen, differences
    # dealing by hand (``controller.round.manual``)
    manual: bool = False  # this round is dealt by hand (NY (d)(1))
    placed: int = 0  # steps of the deal by hand confirmed (0: none; 1: the cross; then one card each)
    board: list[str] = field(default_factory=list)  # community cards entered, in cross order (turned or not)
    entry_pending: list[str] = field(default_factory=list)  # community cards entered for the reveal in progress
    held_seats: dict[int, dict[str, int]] = field(default_factory=dict)  # seat -> wagers held by a supervisor
    # what was announced (NY 5324.39(c)(3); ``_announce``)
    layout_read: bool = False  # betting: the spots were read since betting opened (or resumed): ``layout`` holds
    called: dict[tuple[int, str], int] = field(default_factory=dict)  # the spots an announcement decides -> held
    returnable: dict[tuple[int, str], int] = field(default_factory=dict)  # excluded seats' spots -> most left
    payout_base: dict[int, dict[str, int]] = field(default_factory=dict)  # seat -> what it held as payout began
    checked: dict[int, dict[str, int]] = field(default_factory=dict)  # seat paid and checked -> what it holds
    acks_id: int | None = None  # the notice number of the latest past-posting awaiting a supervisor
