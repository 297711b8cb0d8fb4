"""What the round state machine produces: commands for the devices and records of the round.

Device commands (``Shuffle``, ``Dispense``, ``ReadSpots``, ``SetLamps``, ``Display``, ``PrivatePanel``) are sent
by the service to the driver of their ``device``; every other output is a record of the round (wagers locked, a
stack dealt, a decision, a reveal, a seat settled, the round closed, an irregularity, a fault, a refused press)
that the service journals and the round summary prints. All are frozen dataclasses of plain data so the journal can
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
class QueryLast:
    """Ask the shoe what it last dispensed, answered by ``ShoeLastDispense`` (docs/protocol.md, "Shoe").

    Sent once every device passed its handshake after a (re)start and whenever the shoe's link comes back,
    before any other shoe command: the journal and the shoe are reconciled first (exactly-once dispensing)."""

    device = "shoe"


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
    """Betting is open for round ``round_no``; ``test``: a round of test mode (NY 9 NYCRR 5319.58,
    ``controller.round.table_locks``), which moves the test meters and no lifetime meter (records written before
    test mode have no ``test``: a live round)."""

    round_no: int
    test: bool = False


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
class WagersHeld:
    """"No more bets" was read and some seats were held for an invalid wager (``held``, seat numbers): the
    wagers of every valid seat are locked already (``seats``, as in ``WagersLocked``; NY 9 NYCRR 5324.39(c)(3))
    and are what a void returns; the held seats may only be corrected downwards or excluded."""

    round_no: int
    seats: tuple[dict[str, Any], ...]
    held: tuple[int, ...]


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
    """A fault: ``cause`` (e.g. ``jam``, ``link_lost``, ``card_count``, ``restart``), ``detail`` (never a card).

    ``resumable``: the round may resume once the cause is cleared (a supervisor's ``clear_fault``); False when
    the cards of the round can no longer be trusted (a repeated or foreign card, a stack of the wrong size, a
    shoe that dealt what the journal does not know, a defect): then only a void ends the round. ``fault_id``: its
    number (``Round.answers``), which a supervisor's ``clear_fault`` names (0: a fault at the start, before any
    round machine state, or a record written before faults were numbered). ``device_detail``: the device's own
    text of a fault it reported (``DeviceFault.detail``), which may name a card: journal only
    (``controller.control.server.PRIVATE_DATA``); ``detail`` then says only which device reported which cause."""

    round_no: int | None
    device: str | None
    cause: str
    detail: str
    resumable: bool = True
    fault_id: int = 0
    device_detail: str = ""


@dataclass(frozen=True)
class FaultCleared:
    """A supervisor cleared the fault(s) ``causes``; the round resumed in state ``resumed``."""

    round_no: int | None
    causes: tuple[str, ...]
    by: str
    role: str
    resumed: str


@dataclass(frozen=True)
class RoundVoided:
    """Round ``round_no`` was voided by ``by`` (role ``role``) for ``reason``: every wager of record returned.

    ``seats``: ``{"seat": n, "wagers": {wager: amount}}`` returned per seat (empty before "no more bets");
    ``totals`` as ``RoundClosed`` (wagered = returned, nothing collected or paid). ``reason`` is the
    supervisor's free text and stays in the journal; ``code`` (one of ``controller.round.inputs.VOID_CODES``) is
    what the public sees (docs/control.md, "Secrecy")."""

    round_no: int
    by: str
    role: str
    reason: str
    seats: tuple[dict[str, Any], ...]
    totals: dict[str, int]
    code: str = "other"


@dataclass(frozen=True)
class SeatExcluded:
    """Seat ``seat`` was excluded from the round at "no more bets" for an invalid wager (``reason``) by ``by``
    acting as ``role``; it plays no part and its chips go back to the player."""

    round_no: int
    seat: int
    reason: str
    by: str
    role: str = "dealer"


@dataclass(frozen=True)
class PastPostingAcknowledged:
    """A supervisor acknowledged the past-posting ``items`` (each ``{"seat", "spot", "locked", "new"}``); the
    locked amounts stay the wagers of record (NY 9 NYCRR 5324.39(c)(3)). ``by`` acted as ``role``."""

    round_no: int
    items: tuple[dict[str, Any], ...]
    by: str
    role: str = "supervisor"


@dataclass(frozen=True)
class ShoeReconciled:
    """The shoe's last transaction (``shoe_txn``, 0 = none) compared with the journal's (``journal_txn``);
    ``outcome``: ``in_step``, ``stack_recovered`` (the stack in flight was dispensed: taken as dealt),
    ``not_dispensed`` (the stack in flight never left the shoe: it is asked for again on resume),
    ``dealt_after_void`` (the stack in flight when the round was voided did leave the shoe: recorded as dealt,
    never played), ``shoe_ahead`` (between rounds: round numbering moves past the shoe's) or ``mismatch`` (a
    fault)."""

    round_no: int | None
    shoe_txn: int
    journal_txn: int
    outcome: str


@dataclass(frozen=True)
class PressRefused:
    """A press (panel) or action (control interface) not allowed now or not allowed to ``role``, and why;
    nothing changed. ``user`` is the supervisor key id or the control-interface user, ``""`` for the dealer."""

    button: str
    reason: str
    user: str = ""
    role: str = "dealer"


@dataclass(frozen=True)
class PayoutChecked:
    """The dealer marked seat ``seat`` paid and its spots were read (controller.game.payout): ``expected`` and
    ``seen`` are the non-zero amounts per spot (minor units), ``differences`` each spot that differs
    (``{"spot", "expected", "seen", "difference"}``, difference = seen - expected); none means the payout
    matched and the seat is done. ``by``/``role`` pressed ``paid``. Seats are checked in settlement order, from
    the dealer's right (NY 9 NYCRR 5324.39(e)(9); PA 58 Pa. Code 674a.11(h))."""

    round_no: int
    seat: int
    expected: dict[str, int]
    seen: dict[str, int]
    differences: tuple[dict[str, Any], ...]
    by: str = ""
    role: str = "dealer"


@dataclass(frozen=True)
class MispayAccepted:
    """A supervisor (``by``, ``role``) accepted seat ``seat``'s payout as last read although it differs from
    the settlement: ``differences`` as in ``PayoutChecked``, ``short`` and ``over`` their amounts (minor units,
    each >= 0; short = the player was paid less, over = more or a losing wager left), ``reason`` the
    supervisor's free text (journal only)."""

    round_no: int
    seat: int
    expected: dict[str, int]
    seen: dict[str, int]
    differences: tuple[dict[str, Any], ...]
    short: int
    over: int
    by: str
    role: str
    reason: str = ""


@dataclass(frozen=True)
class DealingModeChanged:
    """A supervisor (``by``, role ``role``) switched the table's dealing between rounds to ``mode``
    (``automated``: the shoe, NY 9 NYCRR 5324.39(d)(2); ``manual``: by hand or a manual dealing shoe, (d)(1)),
    for ``reason`` (free text; journal only). ``round_no`` is the last round (None before the first)."""

    round_no: int | None
    mode: str
    by: str
    role: str
    reason: str


@dataclass(frozen=True)
class ManualRound:
    """Round ``round_no`` is dealt by hand (NY 9 NYCRR 5324.39(d)(1)): no shoe shuffle or stack."""

    round_no: int


@dataclass(frozen=True)
class CardPlacedByHand:
    """The dealer (``by``) confirmed a step of the deal by hand (NY (d)(1)): ``step`` 0 is the five-card cross
    (``seat`` None), then one card per step to ``seat``, clockwise from the dealer's left, twice round."""

    round_no: int
    step: int
    seat: int | None
    by: str


@dataclass(frozen=True)
class CardsRecorded:
    """Cards of a round dealt by hand as entered by ``by`` (role ``role``) through ``source`` (``panel``,
    ``reader``): ``target`` is a reveal step (``across``, ``down``, ``middle``: turned at ``reveal``),
    ``community`` (community cards never turned) or ``seat N`` (the seat's two cards, turned at settlement).

    Journal only: a community entry is public once ``CardsRevealed``, a seat's cards once ``SeatSettled``."""

    round_no: int
    target: str
    cards: tuple[str, ...]
    by: str
    role: str
    source: str


@dataclass(frozen=True)
class SeatHeld:
    """A supervisor held ``seat`` at the settlement of a round dealt by hand: its cards could not be entered, so
    it is not settled; ``wagers`` (minor units) are the wagers of record the supervisor resolves."""

    round_no: int
    seat: int
    wagers: dict[str, int]
    by: str
    role: str
    reason: str


@dataclass(frozen=True)
class PrivatePanel:
    """Show ``text`` and light exactly ``buttons`` on the panel while the supervisor key is turned, outside the
    public record (``controller.round.alerts``): the oldest hole-card alert and its ``acknowledge_alert`` lamp, or the
    round's own text and lamps (with no alert waiting, and once the key is turned off). Never a face-down card."""

    text: str
    buttons: tuple[str, ...]
    device = "panel"


@dataclass(frozen=True)
class AlertAcknowledged:
    """A supervisor (``by``, ``role``, through ``source``: ``panel`` or ``control``) acknowledged the hole-card
    alert shown, ``alert`` (``controller.round.alerts.Alert``'s fields: a seat, a kind of card, figures; never a
    card); ``waiting`` alerts remain. ``round_no`` is the round in progress or last (the journal record's time
    says when). Journal only (``controller.round.alerts.alert_record``)."""

    round_no: int | None
    alert: dict[str, Any]
    by: str
    role: str
    source: str
    waiting: int


@dataclass(frozen=True)
class AlertNotShown:
    """A hole-card alert that will not be shown on the panel, and why (``controller.round.alerts``): a field it may
    not carry, or more alerts waiting than the bound (the oldest is set aside). Journal only."""

    round_no: int | None
    alert: dict[str, Any]
    reason: str


@dataclass(frozen=True)
class _TableLockChange:
    """The fields of ``TableDisabled`` and ``TableEnabled``: ``round_no`` the round in progress or last (None before
    the first), ``code`` the public reason, ``by`` and ``role`` the supervisor, ``reason`` free text (journal
    only)."""

    round_no: int | None
    code: str
    by: str
    role: str
    reason: str


@dataclass(frozen=True)
class TableDisabled(_TableLockChange):
    """A supervisor disabled the table (NY 9 NYCRR 5319.54(b); ``controller.round.table_locks``): no live round
    opens until ``TableEnabled``. ``code`` is one of ``controller.round.inputs.DISABLE_CODES`` (closed, count,
    maintenance, dispute, other); a round in progress goes on and settles. Fields: ``_TableLockChange``."""


@dataclass(frozen=True)
class TableEnabled(_TableLockChange):
    """A supervisor lifted the lock ``TableDisabled`` set (``code``: the reason it was set with). Fields:
    ``_TableLockChange``."""


@dataclass(frozen=True)
class TestModeEntered:
    """A supervisor (``by``, ``role``) put the table in test and diagnostic mode between rounds (NY 9 NYCRR
    5319.58): the panel shows TEST, the rounds opened are test rounds (``RoundOpened.test``) and move only the
    test meters. ``round_no`` is the last round (None before the first); ``reason`` free text (journal only)."""

    __test__ = False  # not a test class for pytest
    round_no: int | None
    by: str
    role: str
    reason: str


@dataclass(frozen=True)
class TestModeLeaving:
    """A supervisor (``by``, ``role``) asked to leave test mode during test round ``round_no``: the round goes on
    as a test round, and the table leaves test mode once it ends (closed or voided: ``TestModeLeft`` then names
    the same supervisor and reason), so that no further test round opens (NY 9 NYCRR 5319.58). ``reason`` free
    text (journal only)."""

    __test__ = False
    round_no: int | None
    by: str
    role: str
    reason: str


@dataclass(frozen=True)
class TestModeLeft:
    """A supervisor (``by``, ``role``) took the table out of test mode between rounds, or asked to during the
    test round that has just ended (``TestModeLeaving``): ``rounds`` test rounds were opened in it; the table is
    again as it was when test mode was entered (its locks, its lifetime meters). ``reason`` free text (journal
    only)."""

    __test__ = False
    round_no: int | None
    rounds: int
    by: str
    role: str
    reason: str


DEVICE_COMMANDS = (Shuffle, Dispense, QueryLast, ReadSpots, SetLamps, Display, PrivatePanel)


def to_record(output: Any) -> dict[str, Any]:
    """``{"type": ClassName, **fields}`` for journaling (dict keys stay as given; JSON turns ints to strings)."""
    return {"type": type(output).__name__, **dataclasses.asdict(output)}
