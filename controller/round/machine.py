"""The round of Criss-Cross Poker as a pure state machine: one input in, a list of commands and records out.

No I/O and no clock: the service feeds it inputs (device events of ``drivers.events``, the service's start and
people's actions of ``controller.round.inputs``) one at a time from its single controller thread and carries out what
``handle`` returns (``controller.round.commands``). Replaying the journaled inputs rebuilds the same state
(``controller.journal.recovery``). The graph of states is a ``transitions.Machine`` (``queued=True``,
``auto_transitions=False``), drawn in docs/round-states.md; the rules that choose a transition live in the
``_on_*`` handlers.

The script (sources):
- betting open (the layout read once) -> "no more bets": the layout as the sensors reported it when the press
  is journaled is locked (``_announce``); a change after it, the reading that follows included, is past-posting;
  two equal antes per playing seat, a five-card
  bonus only with antes, nothing on the decision spots yet, amounts within table limits (NY 9 NYCRR
  5324.39(c)(3),(c)(4),(e)(1)). Seats with an invalid wager are named (``wagers_held``) and must be corrected
  (``no_more_bets`` again) or excluded (``exclude``) before any card is dealt.
- dealing, automated shoe: one stack of five (the cross) first, then one stack of two per playing seat,
  clockwise from the dealer's left (NY (d)(2)). Every stack must have its size and cards never seen before
  in the round, and the shuffle must count 52 cards; otherwise the round faults.
- across, down and middle decisions: seats from the dealer's left, clockwise (PA 58 Pa. Code 674a.11(b),(d),
  (f)); the amount on the decision spot when the dealer's confirm is journaled is the bet, an empty spot a fold, anything
  else an irregular bet that names the seat and spot and keeps the decision open (NY (e)(3),(5),(7)).
- reveals after every decision is in: the two outside across cards, the two outside down cards, the middle
  (NY (e)(4),(6),(8); PA (c),(e),(g)).
- settlement from the dealer's right, counterclockwise (NY (e)(9); PA (g),(h)), then the round closes; with the
  payout check (``payout_check``, ``payout: {check: true}`` of table.yaml) the dealer first pays seat by seat in
  the same order, presses ``paid`` for each, and the whole layout is read and compared with what it must hold
  (``controller.game.payout``: the seat paid, the seats checked, the seats not yet paid); a difference is shown with its spot and amount and the seat is read again
  after the correction, or a supervisor accepts it (``accept_mispay``, journaled as a mispay). The round closes
  when every seat is paid and checked; a settled round is never voided.
- a chip change on a locked spot (seen as it happens or in any later reading of the spots) is past-posting:
  recorded with the locked and new amounts, shown on the panel, the locked amount stays the wager of record
  (NY (c)(3)), and no dealer action is taken until a supervisor acknowledges it.
- a device fault, a link loss, a card-accounting mismatch or a restart of the service moves the round to
  ``fault``, which names the cause. A supervisor clears a resumable fault once its device is back (the round
  resumes where it stopped, asking again for what was in flight) or voids the round (every wager returned).
- a supervisor may void a round in progress at any time before its settlement (a misdeal, a player dispute,
  a fault that cannot be cleared): every wager of record is returned and the voiding recorded with who and why.
- roles: the dealer's buttons need nobody else; ``acknowledge``, ``clear_fault`` and ``void_round`` need the
  supervisor key turned on the panel, or supervisor credentials on the control interface. A refused action is
  recorded (``PressRefused``) and changes nothing.
- hole-card alerts (``controller.round.alerts``, mixed in): an input of their own, shown on the panel only while the
  supervisor key is turned and acknowledged by a supervisor; they are not part of the round and change nothing
  of it.
- a damaged journal store (``JournalDamaged``, from the check of the whole store after each start,
  ``controller.journal.check``): the round in progress goes on and settles, no new round opens (the
  ``journal_whole`` condition of ``open_betting``) until a start's check finds the store whole (``JournalWhole``).
  The records regulators ask for must be whole before more are added to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transitions import Machine, MachineError
from transitions.core import EventData

from controller.round import commands as cmd
from controller.round.alerts import ACKNOWLEDGE_ALERT, AlertDesk
from controller.game.cards import DECK
from controller.round.manual import ManualDealing
from controller.round.inputs import (ACTIONS, ROLES, SUPERVISOR_ACTIONS, JournalDamaged, JournalWhole, OperatorAction,
                               PromptDue, ServiceStarted, stale_answer, stale_reason)
from controller.game.paytable import Jurisdiction
from controller.game.payout import (differences, differences_from, expected_of, instruction_text, mispay_text,
                               plan_seat, short_and_over, total_pay)
from controller.game.settlement import Community, settle_seat
from controller.game.table import DECISIONS, TableConfig, WagerError, check_limits, check_wagers
from drivers import events as ev

DEVICES: tuple[str, ...] = ("shoe", "sensors", "panel")

#: Devices a table may have or not: the card reader of dealing by hand (``controller.round.manual``); cards are typed
#: on the panel without it, so its loss never faults the round.
OPTIONAL_DEVICES: tuple[str, ...] = ("reader",)

#: States with no round in progress: before the first round, after a round closed, after a round was voided.
BETWEEN_ROUNDS: tuple[str, ...] = ("idle", "closed", "voided")

#: States of the payout check (``payout_check``): the dealer pays the seat shown and presses ``paid``; its spots
#: are read and compared with the settlement.
PAYOUT_STATES: tuple[str, ...] = ("payout", "payout_reading")

#: States of a round in progress, in the order of the round.
ROUND_STATES: tuple[str, ...] = (
    "betting", "locking", "wagers_held", "dealing_cross", "dealing_players",
    *(f"{step}_{phase}" for step in DECISIONS for phase in ("decision", "reading", "reveal")),
    "settlement", *PAYOUT_STATES,
)

STATES: list[str] = ["starting", *BETWEEN_ROUNDS, *ROUND_STATES, "fault"]

#: The spots wagered before "no more bets" (every spot but the decisions'), locked at the lock.
BET_SPOTS: tuple[str, ...] = tuple(spot for spot in ev.SPOTS if spot not in DECISIONS)

#: Community cards turned at each reveal, as indexes into the cross stack (cards 1-2 across, 3-4 down, 5 middle).
REVEALS: dict[str, tuple[int, ...]] = {"across": (0, 1), "down": (2, 3), "middle": (4,)}

#: States of a round whose settlement is recorded: its wagers are resolved, it can no longer be voided.
SETTLED: tuple[str, ...] = ("settlement", *PAYOUT_STATES)

#: Transactions ids: ``round_no * TXN_STRIDE + stack`` (stack 0 = the cross), unique over the journal's life.
TXN_STRIDE = 16

#: Device fault codes that mean the device is out of reach until it answers a handshake again (``DeviceReady``):
#: a lost link, a device of the wrong kind or identity at the start, a driver that stopped on a defect
#: (drivers/link.py), a device closed for flooding the link. A ``timeout`` (a request unanswered after every
#: repeat) or a ``protocol`` rejection leaves the link up.
LINK_CODES: frozenset[str] = frozenset({"link_lost", "handshake", "internal", "flooding"})


#: Fault codes the drivers give in their own words (drivers/link.py: a lost link, an unanswered request, a
#: rejected frame): their detail is public. Any other code is a device's FAULT, whose text is the device's own
#: and may name a card: journal only (``FaultRaised.device_detail``).
DRIVER_CODES: frozenset[str] = LINK_CODES | {"timeout", "protocol"}


#: Device fault codes after which the round's cards cannot be trusted (a stack of the wrong size reported by the
#: shoe driver, a card count that does not add up) or the device will not come back (its driver stopped on a
#: defect): the round can only be voided.
UNTRUSTED_CODES: frozenset[str] = frozenset({"stack_size", "card_count", "internal"})


#: The panel's display holds 64 characters (drivers/panel/protocol.py).
PANEL_WIDTH = 64

#: The panel's text while the journal store is damaged (``JournalDamaged``): no round opens until it is restored.
JOURNAL_DAMAGED_TEXT = "Journal damaged: restore it"


def panel_text(text: str) -> str:
    """``text`` as the panel can show it: whole when it fits in ``PANEL_WIDTH`` characters, else cut at the last
    space before the limit and marked with "..." (a word cut in two misleads)."""
    if len(text) <= PANEL_WIDTH:
        return text
    cut = text[:PANEL_WIDTH - 3]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "..."


class _Graph(Machine):
    """The round's ``transitions.Machine``, whose triggers from a state are collected once per state: the graph is
    built once and every input asks it (``may_void_round`` for the panel's lamps), where ``Machine.get_triggers``
    looks through every event each time. Adding a state or a transition forgets what was collected."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._triggers: dict[frozenset[str], list[str]] = {}
        super().__init__(*args, **kwargs)

    def get_triggers(self, *args: Any) -> list[str]:
        """``Machine.get_triggers``: the triggers from the states ``args`` (states or their names), a new list."""
        names = frozenset(state.name if hasattr(state, "name") else state for state in args)
        found = self._triggers.get(names)
        if found is None:
            found = self._triggers[names] = super().get_triggers(*names)
        return list(found)

    def _can_trigger(self, model: Any, trigger: str, *args: Any, **kwargs: Any) -> bool:
        """``Machine._can_trigger`` (the model's ``may_<trigger>``, asked at every input for the panel's lamps)
        without a new ``Event`` and a look through every trigger of the state per question: the transitions of
        ``trigger`` from the model's state, true at the first whose conditions hold. A machine or transition
        with preparation callbacks or exception handlers (none here) gets the library's own answer."""
        event = self.events.get(trigger)
        if event is None or self.prepare_event or self.on_exception:
            return super()._can_trigger(model, trigger, *args, **kwargs)
        state = self.get_model_state(model)
        found = event.transitions.get(state.name, ())  # ``get``: the event's defaultdict keeps no new entry
        if any(t.prepare or (t.dest is not None and t.dest not in self.states) for t in found):
            return super()._can_trigger(model, trigger, *args, **kwargs)
        event_data = EventData(state, event, self, model, args, kwargs)
        for transition in found:
            event_data.transition = transition
            if all(condition.check(event_data) for condition in transition.conditions):
                return True
        return False

    def add_transition(self, *args: Any, **kwargs: Any) -> None:
        self._triggers.clear()
        super().add_transition(*args, **kwargs)

    def add_states(self, *args: Any, **kwargs: Any) -> None:
        self._triggers.clear()
        super().add_states(*args, **kwargs)


def _transitions() -> list[dict[str, Any]]:
    table = [
        dict(trigger="self_check_passed", source="starting", dest="idle"),
        dict(trigger="restart", source=list(BETWEEN_ROUNDS), dest="starting"),
        # the one rule of a damaged journal store (controller.journal.check): no round opens on it
        dict(trigger="open_betting", source=list(BETWEEN_ROUNDS), dest="betting", conditions="journal_whole"),
        dict(trigger="no_more_bets", source=["betting", "wagers_held"], dest="locking"),
        dict(trigger="lock_refused", source="locking", dest="wagers_held"),
        dict(trigger="exclude", source="wagers_held", dest="locking"),
        dict(trigger="lock", source="locking", dest="dealing_cross"),
        dict(trigger="no_play", source="locking", dest="closed"),
        dict(trigger="cross_dealt", source="dealing_cross", dest="dealing_players"),
        dict(trigger="deal_done", source="dealing_players", dest="across_decision"),
        # the one rule of the payout check: with it the settled round waits for the dealer's payouts, seat by
        # seat from the dealer's right (NY 5324.39(e)(9), PA 674a.11(h)); without it the round closes at once
        dict(trigger="settled", source="settlement", dest="payout", conditions="payout_check"),
        dict(trigger="settled", source="settlement", dest="closed", unless="payout_check"),
        dict(trigger="paid", source="payout", dest="payout_reading"),
        dict(trigger="mispaid", source="payout_reading", dest="payout"),
        dict(trigger="next_seat", source=["payout_reading", "payout"], dest="payout"),
        dict(trigger="all_paid", source=["payout_reading", "payout"], dest="closed"),
        dict(trigger="fail", source=["starting", *BETWEEN_ROUNDS, *ROUND_STATES], dest="fault"),
        # the one rule of voiding: a supervisor may void whenever a round is open and not yet settled, whatever
        # else is pending (a fault, past-posting awaiting acknowledgement, a reading or the shoe's answer)
        dict(trigger="void_round", source=[*(s for s in ROUND_STATES if s not in SETTLED), "fault"], dest="voided",
             conditions="unsettled"),
    ]
    for i, step in enumerate(DECISIONS):
        after_reveal = f"{DECISIONS[i + 1]}_decision" if i + 1 < len(DECISIONS) else "settlement"
        table += [
            dict(trigger="confirm", source=f"{step}_decision", dest=f"{step}_reading"),
            dict(trigger="decisions_refused", source=f"{step}_reading", dest=f"{step}_decision"),
            dict(trigger="decisions_taken", source=f"{step}_reading", dest=f"{step}_reveal"),
            dict(trigger="nothing_in_action", source=f"{step}_reading", dest="settlement"),
            dict(trigger="reveal", source=f"{step}_reveal", dest=after_reveal),
        ]
    # dealing by hand (NY (d)(1); handlers in ``controller.round.manual``): the mode switch between rounds (also from
    # a fault between rounds), the dealer's confirmations of the cross and of each card, a seat held at settlement
    table += [dict(trigger="deal_by_hand", source=state, dest=state, conditions=["manual_dealing_allowed",
                                                                                 "dealing_by_shoe"],
                   unless="round_open") for state in (*BETWEEN_ROUNDS, "fault")]
    table += [dict(trigger="deal_by_shoe", source=state, dest=state, conditions=["dealing_by_hand", "shoe_ready"])
              for state in BETWEEN_ROUNDS]
    table += [
        dict(trigger="cross_placed", source="dealing_cross", dest="dealing_players", conditions="round_by_hand"),
        dict(trigger="card_placed", source="dealing_players", dest="dealing_players", conditions="round_by_hand"),
        dict(trigger="hands_placed", source="dealing_players", dest="across_decision", conditions="round_by_hand"),
        dict(trigger="hold_seat", source="settlement", dest="settlement", conditions="round_by_hand"),
    ]
    table += [dict(trigger=f"resume_{state}", source="fault", dest=state)
              for state in ("starting", *BETWEEN_ROUNDS, *ROUND_STATES) if state != "settlement"]
    return table


@dataclass(frozen=True)
class Actor:
    """Who acted: ``role`` (one of ``ROLES``), ``user`` (supervisor key id or control-interface user; ``""`` for
    the dealer at the panel) and ``source`` (``panel`` or ``control``)."""

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
    payout_plan: dict[int, dict[str, dict[str, Any]]] = field(default_factory=dict)  # seat -> controller.game.payout plan
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


class Round(ManualDealing, AlertDesk):
    """The round state machine. ``handle(input)`` returns the commands and records the input produces.

    ``config`` gives the seats and limits, ``jurisdiction`` the bet multiples, ranking and pay tables;
    ``last_round_no`` is the highest round number already in the journal (rounds are numbered on from it).
    """

    def __init__(self, config: TableConfig, jurisdiction: Jurisdiction, last_round_no: int = 0) -> None:
        self.config = config
        self.jurisdiction = jurisdiction
        self.round: RoundData | None = None
        self.last_round_no = last_round_no
        self.last_txn = 0  # the highest transaction id ever asked of the shoe
        self.devices_ready: set[str] = set()
        self.faults: list[cmd.FaultRaised] = []  # the faults of the current fault episode
        self.resume_state: str | None = None  # where the round stopped when it faulted
        self.supervisor_key: str | None = None  # id of the supervisor key while it is turned on
        self._outbox: list[Any] = []
        self._lamps: tuple[str, ...] | None = None
        self._display: str | None = None  # the panel's current text (a refusal, for a few seconds, or the prompt)
        self._prompt: str | None = None  # the prompt of the current state, shown again after a refusal
        self._reader: Actor | None = None  # who asked for the reading of the spots in progress (lock, decision)
        self.shuffle_kept = False  # the shoe holds a checked shuffle no round used (a no-play round)
        self.shoe_boots: int | None = None  # the shoe's last power-on counter (``ShoeBootCount``); None: never seen
        self._request_id = 0
        self._pending_read: int | None = None
        self._verifying = False  # a reading of the spots after a resume is awaited: no dealer action meanwhile
        self._querying = False  # the shoe was asked what it last dispensed and has not answered yet
        self.self_checked = False  # every device answered its handshake since the (re)start
        self.reconciled = False  # the shoe's last transaction was compared with the journal's since the (re)start
        self.dealing_mode = "automated"  # the next round's dealing: ``automated`` or ``manual`` (controller.round.manual)
        self.alerts_waiting: list[dict[str, Any]] = []  # hole-card alerts not yet acknowledged (controller.round.alerts)
        self._private_panel: list[Any] | None = None  # [text, buttons] last shown with the key turned, else None
        #: what the check of the journal store found wrong (``JournalDamaged.detail``); None: not found damaged
        self.journal_damage: str | None = None
        #: the chips on the layout as the bet sensors reported them, in journal order (every ``SpotChanged`` and
        #: reading, in any state): (seat, spot) -> minor units, empty spots left out. What an announcement
        #: decides is taken from it when the announcement is journaled (``_announce``, NY 5324.39(c)(3)).
        self.layout: dict[tuple[int, str], int] = {}
        #: the last number given to something a supervisor answers (a fault, past-posting, a payout reading that
        #: differed): the answer names it (``answers``, docs/control.md "The round guard")
        self.notice_no = 0
        self.machine = _Graph(model=self, states=STATES, transitions=_transitions(), initial="starting",
                              queued=True, auto_transitions=False, send_event=False)

    # ------------------------------------------------------------------ public
    def handle(self, event: Any) -> list[Any]:
        """Apply one input; return the commands to send and records to journal, in order.

        Never raises for a device event or an action: a press not allowed now (or not to this role) yields
        ``PressRefused`` + ``Display``; an event that makes no sense in the current state is recorded as an
        ``Irregularity``. Device commands go only to devices whose link is up, and none before the start-up
        self-check (every device answered its handshake).
        """
        self._outbox = []
        handler = getattr(self, f"_on_{type(event).__name__}", None)
        if handler is None:
            self._emit(cmd.Irregularity(self.round_no, "unknown_event", {"event": repr(event)[:200]}))
        else:
            handler(event)
        return self._outputs()

    @property
    def fault(self) -> cmd.FaultRaised | None:
        """The first fault of the current fault episode (None when not faulted)."""
        return self.faults[0] if self.faults and self.state == "fault" else None

    @property
    def round_no(self) -> int | None:
        """The number of the current (or last) round; None before the first."""
        return self.round.round_no if self.round else None

    @property
    def phase(self) -> str:
        """The state of the round: the current state, or in ``fault`` the state the round stopped in."""
        return self.resume_state if self.state == "fault" and self.resume_state else self.state

    def round_open(self) -> bool:
        """True while a round is in progress (also when it is held in ``fault``)."""
        return self.phase in ROUND_STATES

    def unsettled(self) -> bool:
        """True while a round is in progress and not yet settled (also when held in ``fault``): the condition
        of ``void_round``."""
        return self.round_open() and self.phase not in SETTLED

    def payout_check(self) -> bool:
        """True when the table checks the dealer's payouts (``payout: {check: true}`` of table.yaml): the
        condition that sends a settled round to ``payout`` rather than ``closed``."""
        return self.config.payout.check

    def journal_whole(self) -> bool:
        """True unless the journal store was found damaged (``JournalDamaged``) and not found whole since
        (``JournalWhole``): the condition of ``open_betting``. Kept over restarts (``checkpoint``): a restart on
        the same store keeps the table closed until its own check finds the store whole."""
        return self.journal_damage is None

    def allowed_actions(self) -> tuple[str, ...]:
        """Actions allowed now by the state of the round, whoever asks (supervisor actions included)."""
        state, data = self.state, self.round
        void = ("void_round",) if self.may_void_round() else ()  # the graph's rule (``_transitions``), nowhere else
        if self._verifying or self._querying:
            return void
        if state == "fault":
            clear = self.faults and all(f.resumable for f in self.faults) \
                and self.devices_ready >= self._needed_devices() and (self.reconciled or self.dealing_by_hand())
            return ("clear_fault",) * bool(clear) + void + self._mode_actions()
        if self._held_for_acknowledgement():
            return ("acknowledge", *void)
        if state in BETWEEN_ROUNDS:  # the graph's rule (``journal_whole``), nowhere else
            return ("open_betting",) * self.may_open_betting() + self._mode_actions()
        manual = self._manual_actions()
        if manual is not None:
            return manual + void
        if state == "betting":  # the shuffle counted and the layout read since betting opened (``_announce``)
            return (("no_more_bets",) if data and data.shuffled and data.layout_read else ()) + void
        if state == "wagers_held":
            return ("no_more_bets",) + (("exclude",) if data and data.invalid else ()) + void
        if state.endswith("_decision"):
            return ("confirm", *void)
        if state.endswith("_reveal"):
            return ("reveal", *void)
        if state == "payout":
            return ("paid",) + (("accept_mispay",) if data and data.last_check else ())
        return void  # starting, or waiting for a device: a supervisor may still end an open round (a misdeal)

    def _held_for_acknowledgement(self) -> bool:
        """True while past-posting awaits a supervisor's acknowledgement in an open round (NY (c)(3))."""
        return self.round is not None and bool(self.round.pending_acks) and self.round_open()

    def prompt(self) -> str | None:
        """The panel's text for the current state (the last state prompt shown): what the panel shows again a
        few seconds after a refusal (``PromptDue``) and when it comes back after a link loss."""
        return self._prompt

    def allowed_buttons(self) -> tuple[str, ...]:
        """Panel buttons whose press is allowed now (the lit lamps): supervisor actions only while the key is on."""
        return tuple(a for a in self.allowed_actions() if a not in SUPERVISOR_ACTIONS or self.supervisor_key)

    def view(self) -> dict[str, Any]:
        """The table as anyone may see it (control interface, displays): plain JSON-ready data, no face-down card.

        Keys: ``state``, ``phase``, ``round_no``, ``allowed_actions``, ``lamps`` (lit panel buttons),
        ``supervisor_key`` (bool), ``devices_ready``, ``faults`` (cause, device, detail, resumable),
        ``pending_past_posting``, ``display`` (the panel's text), ``prompt`` (the state's prompt, which a refusal
        shown in ``display`` gives way to), ``community`` (the revealed community cards
        only, in turning order) and ``seats``: per playing seat ``wagers`` (minor units), ``folded_at`` and
        ``dealt`` (whether its two cards are out; never the cards); ``journal_damaged`` (bool): the journal store
        was found damaged and no round opens (``journal_whole``); ``answers``: what ``clear_fault``,
        ``acknowledge`` and ``accept_mispay`` would answer now, by number (``answers``), each fault's ``id``.
        """
        data = self.round
        return {
            "state": self.state,
            "phase": self.phase,
            "round_no": self.round_no,
            "allowed_actions": list(self.allowed_actions()),
            "lamps": list(self._lamps or ()),
            "supervisor_key": self.supervisor_key is not None,
            "devices_ready": sorted(self.devices_ready),
            "faults": [{"id": f.fault_id, "cause": f.cause, "device": f.device, "detail": f.detail,
                        "resumable": f.resumable} for f in self.faults] if self.state == "fault" else [],
            "answers": self.answers(),
            "pending_past_posting": [dict(item) for item in data.pending_acks] if data else [],
            "display": self._display,
            "prompt": self._prompt,
            "community": list(data.revealed) if data else [],
            "seats": {str(seat): {"wagers": dict(state.wagers), "folded_at": state.folded_at,
                                  "dealt": state.cards is not None}
                      for seat, state in sorted(data.seats.items())} if data else {},
            "dealing_mode": self.dealing_mode,
            "payout": self._payout_view(),
            "journal_damaged": not self.journal_whole(),
        }

    def _payout_view(self) -> dict[str, Any] | None:
        """The payout check as the dealer's screen shows it (``view()["payout"]``), None outside it: ``seat``
        being paid, ``to_pay`` (seats left, in order), ``seats`` (per seat: each spot's ``action``, ``wager``,
        ``pay`` and ``expected`` and the seat's ``total``) and ``differences`` of the current seat's last
        reading."""
        data = self.round
        if data is None or self.phase not in PAYOUT_STATES:
            return None
        return {
            "seat": data.to_pay[0] if data.to_pay else None,
            "to_pay": list(data.to_pay),
            "seats": {str(seat): {"spots": {spot: dict(step) for spot, step in plan.items()},
                                  "total": total_pay(plan)}
                      for seat, plan in data.payout_plan.items()},
            "differences": [dict(d) for d in data.last_check["differences"]] if data.last_check else [],
        }

    def defect(self, error: Exception) -> list[Any]:
        """Move to ``fault`` after an unexpected exception in ``handle`` (a defect, cause ``internal``, not
        resumable); return the outputs (``FaultRaised`` and a panel message) so the round stops in a defined
        state."""
        self._outbox = []
        self._fail(None, "internal", f"{type(error).__name__}: {error}"[:200], resumable=False)
        return self._outputs()

    # ------------------------------------------------------------------ helpers
    def _emit(self, *outputs: Any) -> None:
        self._outbox.extend(outputs)

    def _show(self, text: str) -> None:
        """Show the prompt of the state just entered (kept, and shown again after a refusal)."""
        self._prompt = panel_text(text)
        self._emit(cmd.Display(self._prompt))

    def _show_between_rounds(self, text: str) -> None:
        """Show ``text``, the prompt of a state between rounds, with ``JOURNAL_DAMAGED_TEXT`` after it while the
        journal store is damaged: the dealer sees why ``open_betting`` stays dark."""
        self._show(text if self.journal_whole() else f"{text}. {JOURNAL_DAMAGED_TEXT}")

    def _refuse(self, action: str, reason: str, actor: Actor, text: str) -> None:
        """Record a refused action (who, in which role, why) and show ``text`` on the panel until the next
        prompt, or ``PromptDue`` a few seconds later; the state's prompt is kept (``prompt``)."""
        self._emit(cmd.PressRefused(action, reason, actor.user, actor.role), cmd.Display(panel_text(text)))

    def _outputs(self) -> list[Any]:
        """The outbox with the lamps brought up to date; device commands only to devices whose link is up, and
        none before the start-up self-check."""
        self._update_lamps()
        self._update_private_panel()  # after the lamps: what the key shows of alerts (controller.round.alerts)
        out = []
        for output in self._outbox:
            if isinstance(output, cmd.Display):
                self._display = output.text
            if isinstance(output, cmd.DEVICE_COMMANDS) and (
                    not self.self_checked or output.device not in self.devices_ready):
                continue
            out.append(output)
        return out

    def _update_lamps(self) -> None:
        lamps = self.allowed_buttons() if "panel" in self.devices_ready and self.self_checked else None
        if lamps is not None and lamps != self._lamps:
            self._lamps = lamps
            self._emit(cmd.SetLamps(lamps))

    def _read_spots(self) -> None:
        self._request_id = self._request_id % 0xFFFF + 1
        self._pending_read = self._request_id
        self._emit(cmd.ReadSpots(self._request_id))

    def _fail(self, device: str | None, cause: str, detail: str, *, resumable: bool = True,
              device_detail: str = "") -> None:
        """Raise a fault: ``detail`` is public (never a card), ``device_detail`` a device's own text (private)."""
        # a settled round cannot be voided: what is left (the check of the chips) resumes once the devices answer
        resumable = resumable or self.phase in PAYOUT_STATES
        fault = cmd.FaultRaised(self.round_no, device, cause, detail, resumable, self._notice(), device_detail)
        if self.state != "fault":
            self.faults = []
            self.resume_state = self.state
            self._pending_read = None
            self._verifying = False
            self.fail()
        self.faults.append(fault)
        need = "clear or void" if self.unsettled() else "clear"
        self._emit(fault)
        self._show(f"FAULT {cause}: supervisor to {need if resumable else 'void'}")

    def _notice(self) -> int:
        """A new notice number (``notice_no``), for something a supervisor must answer."""
        self.notice_no += 1
        return self.notice_no

    def answers(self) -> dict[str, int]:
        """What each action that answers something would answer now, by its notice number: ``clear_fault`` the
        latest fault of the episode (``FaultRaised.fault_id``), ``acknowledge`` the latest past-posting awaiting a
        supervisor, ``accept_mispay`` the payout reading that differed. An action naming another number is stale
        (``controller.round.inputs.stale_answer``): a retried clearance never clears a fault raised after it was sent."""
        data, out = self.round, {}
        if self.state == "fault" and self.faults:
            out["clear_fault"] = self.faults[-1].fault_id
        if data is not None and self._held_for_acknowledgement() and data.acks_id is not None:
            out["acknowledge"] = data.acks_id
        if data is not None and self.phase in PAYOUT_STATES and data.last_check:
            out["accept_mispay"] = data.last_check["id"]
        allowed = self.allowed_actions()
        return {action: number for action, number in out.items() if action in allowed}

    def _active_seats(self) -> list[SeatState]:
        """Seats still in action, from the dealer's left clockwise (ascending seat number)."""
        assert self.round is not None
        return [s for _, s in sorted(self.round.seats.items()) if s.folded_at is None]

    def _in_flight_txn(self) -> int | None:
        """The transaction of the stack being dealt (asked of the shoe and not yet accepted), if any."""
        data = self.round
        if data is None or data.manual or self.phase not in ("dealing_cross", "dealing_players"):
            return None
        return data.round_no * TXN_STRIDE + data.next_stack

    # ------------------------------------------------------------------ start, devices
    def _on_ServiceStarted(self, event: ServiceStarted) -> None:
        self.devices_ready.clear()
        self.self_checked = self.reconciled = self._querying = self._verifying = False
        self._lamps = None
        self._pending_read = None
        self.supervisor_key = None
        self.shuffle_kept = False  # the shoe may have been power-cycled meanwhile: shuffle again
        if self.state in BETWEEN_ROUNDS:
            self.restart()
        elif self.state in ROUND_STATES:
            self._fail(None, "restart", f"the service restarted during {self.state}")

    def _on_JournalDamaged(self, event: JournalDamaged) -> None:
        """The journal store was found damaged: no round opens from now on (``journal_whole``); the round in
        progress is left to finish. Between rounds the panel says so at once."""
        self.journal_damage = str(event.detail)
        if self.state in BETWEEN_ROUNDS:
            self._show(JOURNAL_DAMAGED_TEXT)

    def _on_JournalWhole(self, event: JournalWhole) -> None:
        """A start's check found the store whole again (restored): rounds may open again."""
        if self.journal_whole():
            return
        self.journal_damage = None
        if self.state in BETWEEN_ROUNDS:
            self._show("Journal whole: table ready")

    def _on_DeviceReady(self, event: ev.DeviceReady) -> None:
        if event.device in OPTIONAL_DEVICES:
            self.devices_ready.add(event.device)
            return
        if event.device not in DEVICES:
            self._emit(cmd.Irregularity(self.round_no, "unknown_device", {"device": event.device}))
            return
        back = self.self_checked and event.device not in self.devices_ready
        self.devices_ready.add(event.device)
        if not self.self_checked and self.devices_ready >= set(DEVICES):
            self.self_checked = True  # every device answered its handshake: ask the shoe before anything else
            self._query_shoe()
            if self._prompt:
                self._emit(cmd.Display(self._prompt))
        elif back:
            if event.device == "shoe":
                self._query_shoe()
            if event.device == "panel":
                self._lamps = None
                if self._prompt:
                    self._emit(cmd.Display(self._prompt))
            if self.state == "fault":
                self._show(f"{event.device} back: supervisor may clear")

    def _on_ShoeBootCount(self, event: ev.ShoeBootCount) -> None:
        """The shoe's power-on counter (docs/protocol.md, "Power-on counter"). A value other than the last one
        journaled (``shoe_boots``) means the shoe restarted, with or without a lost link: it holds no shuffle
        and no record of its transactions. Recorded as the ``Irregularity`` ``shoe_restarted``; the kept shuffle
        of a no-play round is discarded. In betting with nothing dealt a shuffle it had counted is asked for
        again, so no wager locks before a shuffle of this power-on counted 52 (the card count of NY 9 NYCRR
        5324.39(d)(2)'s automated shoe); from "no more bets" on (wagers announced, cards in flight or dealt) the
        round's cards cannot be accounted for by the shoe: a fault the round can only void, as ``shoe_mismatch``.
        The first counter ever seen (a new journal, or one written before the counter) is only kept."""
        known, self.shoe_boots = self.shoe_boots, event.boots
        if known is None or known == event.boots:
            return
        self.shuffle_kept = False
        self._emit(cmd.Irregularity(self.round_no, "shoe_restarted", {"boots": event.boots, "previous": known}))
        data = self.round
        if data is None or data.manual or not self.unsettled():
            return  # between rounds, dealt by hand or settled: no card of the shoe is still to come this round
        if self.phase != "betting":
            self._fail("shoe", "shoe_restarted", f"the shoe restarted (power-on {known} -> {event.boots}) "
                       f"during {self.phase}: its deck cannot be trusted", resumable=False)
        elif data.shuffled:  # not yet shuffled: the answer awaited is the restarted shoe's (or asked on resume)
            data.shuffled = False
            if self.state == "betting":
                self._emit(cmd.Shuffle())

    def _query_shoe(self) -> None:
        self._querying = True
        self._emit(cmd.QueryLast())

    def _on_ShoeLastDispense(self, event: ev.ShoeLastDispense) -> None:
        if not self._querying:
            self._emit(cmd.Irregularity(self.round_no, "unexpected_last_dispense", {"txn_id": event.txn_id}))
            return
        self._querying = False
        in_flight = self._in_flight_txn()
        shoe_txn = event.txn_id
        data = self.round
        if in_flight is not None and shoe_txn == in_flight:
            outcome = "stack_recovered"
        elif (data is not None and self.state == "voided" and data.stacks_planned
              and shoe_txn == data.round_no * TXN_STRIDE + data.next_stack and data.next_stack < len(data.stacks_planned)):
            outcome = "dealt_after_void"
        elif in_flight is not None and data is not None and data.next_stack > 0 and shoe_txn != in_flight - 1:
            # The shoe dealt this round's previous stack; not to know it, it must have lost its memory (a power
            # cycle) or be another shoe: its state of the deck is unknown, and a card on the table could leave
            # it again. Only a void is safe.
            outcome = "mismatch"
        elif in_flight is not None and shoe_txn < in_flight:
            outcome = "not_dispensed"
        elif shoe_txn <= self.last_txn:
            outcome = "in_step"
        elif not self.round_open() or self.phase in ("betting", "locking", "wagers_held"):
            outcome = "shoe_ahead"
        else:
            outcome = "mismatch"
        self._emit(cmd.ShoeReconciled(self.round_no, shoe_txn, self.last_txn, outcome))
        self.reconciled = True
        if outcome == "stack_recovered":
            self._accept_stack(ev.StackDispensed(shoe_txn, tuple(event.cards)))
        elif outcome == "dealt_after_void":  # the stack in flight left the shoe after all: on record, unplayed
            assert data is not None
            data.stacks[shoe_txn] = tuple(event.cards)
            self._emit(cmd.StackDealt(data.round_no, data.next_stack, data.stacks_planned[data.next_stack],
                                      tuple(event.cards)))
            data.next_stack += 1
        elif outcome == "shoe_ahead":  # number on past the shoe's transactions: an id is never reused
            self.last_round_no = max(self.last_round_no, shoe_txn // TXN_STRIDE)
            self.last_txn = shoe_txn
        elif outcome == "mismatch":
            if in_flight is not None and shoe_txn < in_flight:
                detail = (f"the shoe's last transaction is {shoe_txn}, but it dealt transaction {in_flight - 1} "
                          f"of this round: it lost its record or is another shoe")
            else:
                detail = f"the shoe's last transaction {shoe_txn} is unknown to the journal (last asked: {self.last_txn})"
            self._fail("shoe", "shoe_mismatch", detail, resumable=False)
        if self.state == "starting":
            self.self_check_passed()
            self._show_between_rounds("Table ready")

    def _on_DeviceFault(self, event: ev.DeviceFault) -> None:
        if event.device in OPTIONAL_DEVICES:  # the panel's keypad stands in for it: recorded, the round goes on
            if event.code in LINK_CODES:
                self.devices_ready.discard(event.device)
            self._emit(cmd.Irregularity(self.round_no, "optional_device_fault",
                                        {"device": event.device, "code": event.code}))  # its text: the input's
            return
        if event.code in LINK_CODES:
            self.devices_ready.discard(event.device)
            if event.device == "shoe":
                self._querying = False
                self.shuffle_kept = False  # a shoe that was away may have lost its shuffle
        # a device's text may name a card (a jam "card 4d stuck in gate"): the journal keeps it with the input
        # and in ``device_detail``; what the public sees names the device and the cause (docs/control.md)
        public = event.detail if event.code in DRIVER_CODES else f"{event.device} reported {event.code}"
        if self.state == "starting":
            self._emit(cmd.FaultRaised(None, event.device, event.code, public, device_detail=event.detail))
            return
        # A shoe that refuses a request (NAK) does not hold the state the journal gives it (a shuffle it no
        # longer has, after a power cycle): asking again is refused again, and its deck cannot be trusted.
        if event.device == "shoe" and self.dealing_by_hand():  # the table deals by hand: the shoe is not in use
            self._emit(cmd.Irregularity(self.round_no, "shoe_fault_dealing_by_hand", {"code": event.code}))
            return
        refused_by_shoe = event.device == "shoe" and event.code == "protocol"
        self._fail(event.device, event.code, public, device_detail=event.detail,
                   resumable=event.code not in UNTRUSTED_CODES and not refused_by_shoe)

    def _on_SupervisorKey(self, event: ev.SupervisorKey) -> None:
        self.supervisor_key = (event.key_id or "supervisor") if event.on else None

    def _on_PromptDue(self, event: PromptDue) -> None:
        if self._prompt and self._display != self._prompt:  # a refusal has been shown long enough
            self._emit(cmd.Display(self._prompt))

    # ------------------------------------------------------------------ people
    def _on_ButtonPressed(self, event: ev.ButtonPressed) -> None:
        if self.supervisor_key:
            actor = Actor("supervisor", self.supervisor_key, "panel")
        else:
            actor = Actor("dealer", "", "panel")
        self._act(event.button, actor, "")

    def _on_OperatorAction(self, event: OperatorAction) -> None:
        if event.action not in ACTIONS or event.role not in ROLES:
            self._emit(cmd.PressRefused(str(event.action)[:40], "unknown action or role", str(event.user)[:40],
                                        str(event.role)[:20]))
            return
        actor = Actor(event.role, event.user, "control")
        stale = (event.stale or stale_reason(event.round, event.state, self.round_no, self.state)
                 or stale_answer(event.action, event.answers, self.answers()))
        if stale:  # decided on another round or state, or on something else (docs/control.md, "The round guard")
            what = "something else" if "answers" in stale else "another round"
            self._refuse(event.action, stale, actor, f"Not now: {event.action} for {what}")
            return
        self._act(event.action, actor, event.reason, event.code)

    def _act(self, action: str, actor: Actor, reason: str, code: str = "") -> None:
        if action == ACKNOWLEDGE_ALERT:  # not a step of the round (controller.round.alerts): the role is checked first,
            if actor.role == "supervisor":  # so that a dealer's press learns nothing of alerts
                self._acknowledge_alert(actor)
                return
        elif action not in self.allowed_actions():
            if self._held_for_acknowledgement() and action != "acknowledge":
                why = "the round waits for a supervisor to acknowledge past-posting"
                text = "Past-posting: supervisor to acknowledge"
            elif action == "open_betting" and self.state in BETWEEN_ROUNDS and not self.journal_whole():
                why, text = "the journal store is damaged (JournalDamaged): restore it", JOURNAL_DAMAGED_TEXT
            else:
                why, text = f"{action} not allowed in {self.state}", f"Not now: {action}"
            self._refuse(action, why, actor, text)
            return
        if action in SUPERVISOR_ACTIONS and actor.role != "supervisor":
            if actor.source == "control":
                why = f"{action} needs a supervisor; user {actor.user} has the role {actor.role}"
                text = f"{action}: {actor.user} is not a supervisor"
            else:
                why, text = f"{action} needs a supervisor", f"{action}: supervisor key needed"
            self._refuse(action, why, actor, text)
            return
        if action == "void_round":
            self._void(actor, reason, code)
            return
        if self._manual_act(action, actor, reason):
            return
        handlers = {"open_betting": self._open_betting, "no_more_bets": self._no_more_bets,
                    "confirm": self._confirm, "reveal": self._reveal, "exclude": self._exclude,
                    "acknowledge": self._acknowledge, "clear_fault": self._clear_fault, "paid": self._paid,
                    "accept_mispay": self._accept_mispay}
        try:
            handlers[action](actor, reason)
        except MachineError as exc:  # allowed_actions and the graph disagree: a defect, made visible
            self._fail(None, "internal", f"{action} in {self.state}: {exc}", resumable=False)

    def _open_betting(self, actor: Actor, reason: str) -> None:
        self.last_round_no += 1
        self.round = RoundData(self.last_round_no)
        self.faults = []
        self.open_betting()
        self._emit(cmd.RoundOpened(self.last_round_no))
        if self.dealing_by_hand():
            self._open_by_hand()
        elif self.shuffle_kept:  # the last round was a no-play round: its checked shuffle deals this one
            self.round.shuffled, self.shuffle_kept = True, False
        else:
            self._emit(cmd.Shuffle())
        self._read_spots()  # the layout as betting opens: what "no more bets" will lock is followed from it
        self._show(f"Round {self.last_round_no}: place your bets")

    def _no_more_bets(self, actor: Actor, reason: str) -> None:
        """"No more bets" (NY 5324.39(c)(3)): the first time every spot of the layout as it is now; for seats held
        for correction, their spots as they stand now, never above what they held."""
        data = self.round
        assert data is not None
        if not data.bets_closed:
            self._announce({(seat, spot) for seat in ev.SEATS for spot in ev.SPOTS} | set(self.layout))
        else:
            self._announce(data.correctable)
        self.no_more_bets()
        self._reader = actor
        self._read_spots()

    def _announce(self, spots: Any) -> None:
        """What an announcement ("no more bets", a decision's ``confirm``) decides is the layout when it is
        journaled (NY 9 NYCRR 5324.39(c)(3); (e)(3),(5),(7): the wager on the spot when the dealer calls it):
        ``data.called`` holds each of ``spots`` (``(seat, spot)`` keys) as the sensors last reported it, capped by
        what a held seat may hold. Any change that reaches the controller after it, a chip change or the reading
        that follows, is past-posting or pinching (``_check_locked``), and the announced amount stands."""
        data = self.round
        assert data is not None
        data.called = {key: min(self.layout.get(key, 0), data.correctable.get(key, self.layout.get(key, 0)))
                       for key in spots}

    def _exclude(self, actor: Actor, reason: str) -> None:
        data = self.round
        assert data is not None
        for seat, why in sorted(data.invalid.items()):
            data.excluded.add(seat)
            self._emit(cmd.SeatExcluded(data.round_no, seat, why, actor.name, actor.role))
        data.invalid = {}
        for key, most in data.correctable.items():  # what an excluded seat leaves on the layout is no wager:
            if key[0] in data.excluded:  # it may be taken back, never added to (``_check_locked``)
                data.returnable[key] = min(self.layout.get(key, 0), most)
        self.exclude()
        self._reader = actor
        self._read_spots()

    def _confirm(self, actor: Actor, reason: str) -> None:
        """The dealer confirms a decision: the bet is what each seat in action has on the decision's spot now
        (``_announce``; NY 5324.39(e)(3),(5),(7))."""
        step = self.state.removesuffix("_decision")
        self._announce({(state.seat, step) for state in self._active_seats()})
        self.confirm()
        self._reader = actor
        self._read_spots()

    def _reveal(self, actor: Actor, reason: str) -> None:
        assert self.round is not None and self.round.cross is not None
        step = self.state.removesuffix("_reveal")
        cards = tuple(self.round.cross[i] for i in REVEALS[step])
        self.round.revealed.extend(cards)
        self._emit(cmd.CardsRevealed(self.round.round_no, step, cards))
        self._show(f"{step}: {' '.join(cards)}")
        self.reveal()
        if self.state == "settlement":
            self._settle()

    def _acknowledge(self, actor: Actor, reason: str) -> None:
        data = self.round
        assert data is not None
        items, data.pending_acks = tuple(data.pending_acks), []
        data.acknowledged.extend(items)
        self._emit(cmd.PastPostingAcknowledged(data.round_no, items, actor.name, actor.role))
        self._show("Acknowledged: the locked amounts stand")
        if self.state in ("dealing_cross", "dealing_players"):
            self._dispense(data.next_stack)  # dealing was held at the acknowledgement

    def _clear_fault(self, actor: Actor, reason: str) -> None:
        target = self.resume_state or "idle"
        self._emit(cmd.FaultCleared(self.round_no, tuple(f.cause for f in self.faults), actor.name, actor.role,
                                    target))
        self.faults = []
        self.resume_state = None
        getattr(self, f"resume_{target}")()
        self._show(f"Fault cleared by {actor.name}")
        self._resume_in_flight()

    def _resume_in_flight(self) -> None:
        """Ask again for what the round was waiting for when it faulted; read the spots to catch any change
        made to a locked spot meanwhile."""
        data, state = self.round, self.state
        if data is None or state in BETWEEN_ROUNDS:
            return
        if state in PAYOUT_STATES:  # chips move while the dealer pays: nothing locked to verify
            self._show_payout()
            if state == "payout_reading":
                self._read_spots()
            return
        if state == "betting":
            if not data.shuffled:
                self._emit(cmd.Shuffle())
            data.layout_read = False  # the sensors may have been away: read the layout again before the lock
            self._read_spots()
        elif state == "locking" or state.endswith("_reading"):
            self._read_spots()
        elif data.locked:
            self._verifying = True
            self._read_spots()
        if state in ("dealing_cross", "dealing_players") and not data.pending_acks:
            self._dispense(data.next_stack)

    def _void(self, actor: Actor, reason: str, code: str) -> None:
        """Void the open round (the graph allows it, ``allowed_actions``): every wager of record returned.
        ``reason`` is the supervisor's free text (journal only); ``code`` the public reason (``VOID_CODES``;
        from the panel: ``device`` in a fault, else ``other``)."""
        data = self.round
        assert data is not None
        why = reason or ("fault: " + ", ".join(f.cause for f in self.faults) if self.state == "fault"
                         else f"voided in {self.state}")
        code = code or ("device" if self.state == "fault" else "other")
        seats = tuple({"seat": s, "wagers": dict(state.wagers)} for s, state in sorted(data.seats.items()))
        amount = sum(sum(entry["wagers"].values()) for entry in seats)
        totals = {"wagered": amount, "returned": amount, "collected": 0, "paid": 0, "player_net": 0}
        self.void_round()  # first: a void the graph does not allow raises before anything is recorded
        self._emit(cmd.RoundVoided(data.round_no, actor.name, actor.role, why, seats, totals, code))
        if data.pending_acks:
            self._emit(cmd.PastPostingAcknowledged(data.round_no, tuple(data.pending_acks), actor.name, actor.role))
            data.pending_acks = []
        self.faults = []
        self.resume_state = None
        self._pending_read = None
        self._verifying = False
        self._show_between_rounds(f"Round {data.round_no} void: return all wagers")

    # ------------------------------------------------------------------ shoe
    def _on_ShuffleComplete(self, event: ev.ShuffleComplete) -> None:
        data = self.round
        if self.phase != "betting" or data is None or data.shuffled:
            self._emit(cmd.Irregularity(self.round_no, "unexpected_shuffle", {"card_count": event.card_count}))
            return
        if event.card_count != 52:
            self._fail("shoe", "card_count", f"shuffle counted {event.card_count} cards, 52 expected")
            return
        data.shuffled = True

    def _on_StackDispensed(self, event: ev.StackDispensed) -> None:
        data = self.round
        if data is not None and data.stacks.get(event.txn_id) == tuple(event.cards):
            self._emit(cmd.Irregularity(data.round_no, "duplicate_stack", {"txn_id": event.txn_id}))
            return  # the shoe's answer to a repeated transaction: already dealt, nothing new left the shoe
        if self._in_flight_txn() is None:
            self._emit(cmd.Irregularity(self.round_no, "unexpected_stack", {"txn_id": event.txn_id}))
            return
        self._accept_stack(event)

    def _accept_stack(self, event: ev.StackDispensed) -> None:
        data = self.round
        assert data is not None
        index = data.next_stack
        expected_txn = data.round_no * TXN_STRIDE + index
        if event.txn_id != expected_txn:
            self._fail("shoe", "protocol", f"stack for transaction {event.txn_id}, expected {expected_txn}",
                       resumable=False)
            return
        size = 5 if index == 0 else 2
        cards = tuple(event.cards)
        if len(cards) != size:
            self._fail("shoe", "stack_size", f"stack {index} has {len(cards)} cards, {size} expected",
                       resumable=False)
            return
        # fault details name the stack, never a card: they reach the panel and the log (hole-card secrecy)
        if not all(c in DECK for c in cards):
            self._fail("shoe", "unreadable_card", f"stack {index} has a card that is not a card of the deck",
                       resumable=False)
            return
        if len(set(cards)) != size or data.dealt & set(cards):
            self._fail("shoe", "card_count", f"stack {index} repeats a card already dealt this round",
                       resumable=False)
            return
        data.dealt.update(cards)
        data.stacks[event.txn_id] = cards
        data.next_stack += 1
        seat = data.stacks_planned[index]
        self._emit(cmd.StackDealt(data.round_no, index, seat, cards))
        if index == 0:
            data.cross = cards
        else:
            data.seats[seat].cards = cards
        done = data.next_stack >= len(data.stacks_planned)
        if self.state == "fault":  # a stack answered while the round is held: take it, deal on after the resume
            self.resume_state = "across_decision" if done else "dealing_players"
            return
        if index == 0:
            self.cross_dealt()
        if done:
            self.deal_done()
            self._show("Across decision: bet 1x-3x or fold")
        elif not data.pending_acks:
            self._dispense(data.next_stack)

    def _dispense(self, index: int) -> None:
        data = self.round
        assert data is not None
        if data.manual:  # dealt by hand: the dealer is asked for the step instead of the shoe
            self._prompt_deal()
            return
        seat = data.stacks_planned[index]
        txn = data.round_no * TXN_STRIDE + index
        self.last_txn = max(self.last_txn, txn)
        self._emit(cmd.Dispense(txn, 5 if index == 0 else 2, index, seat))

    # ------------------------------------------------------------------ sensors
    def _on_SpotChanged(self, event: ev.SpotChanged) -> None:
        if event.amount:
            self.layout[(event.seat, event.spot)] = event.amount
        else:
            self.layout.pop((event.seat, event.spot), None)
        data = self.round
        if data is None or not self.round_open() or self.phase in PAYOUT_STATES:
            return  # between rounds, or the dealer paying: chips move freely; the journal keeps the event
        self._check_locked(event.seat, event.spot, event.amount)

    def _check_locked(self, seat: int, spot: str, amount: int) -> None:
        """Past-posting (NY (c)(3): no wager made, increased or withdrawn after "no more bets"): a locked spot
        whose chips differ from the locked amount, or a spot of a seat held for correction whose chips rise
        above what it held (a correction may only take chips away)."""
        data = self.round
        assert data is not None
        key = (seat, spot)
        if key in data.called:  # announced, its reading not yet in: the amount at the announcement stands
            if amount == data.called[key]:
                self._back_in_order(key)
                return
            locked = data.called[key]
        elif key in data.correctable or key in data.returnable:
            # a held seat's correction, or an excluded seat's chips taken back: from now on the spot may only
            # come down further
            most = data.correctable if key in data.correctable else data.returnable
            if amount <= most[key]:
                most[key] = amount
                self._back_in_order(key)
                return
            locked = most[key]
        elif key not in data.locked:
            return
        elif data.locked[key] == amount:
            self._back_in_order(key)
            return
        elif key in data.collectable and amount == 0:
            return  # the dealer collected a forfeited wager (NY 5324.39(e)(4),(6),(7))
        else:
            locked = data.locked[key]
        item = {"seat": seat, "spot": spot, "locked": locked, "new": amount}
        if item in data.pending_acks or item in data.acknowledged:
            return  # already recorded: the same chips seen again
        data.pending_acks.append(item)
        data.acks_id = self._notice()
        self._emit(cmd.Irregularity(data.round_no, "past_posting", item))
        self._show_past_posting()

    def _show_past_posting(self) -> None:
        """Show the latest past-posting awaiting a supervisor: its seat, spot and the amount that stands."""
        data = self.round
        assert data is not None and data.pending_acks
        item = data.pending_acks[-1]
        self._show(f"Past-posting seat {item['seat']} {item['spot']}: {item['locked']} kept")

    def _back_in_order(self, key: tuple[int, str]) -> None:
        """A spot is back at (or below, for a held seat) its locked amount: a past-posting of it already
        acknowledged is settled, so the same change made again is past-posting again, not "the same chips seen
        again"."""
        data = self.round
        assert data is not None
        data.acknowledged = [item for item in data.acknowledged if (item["seat"], item["spot"]) != key]

    def _on_SpotsSnapshot(self, event: ev.SpotsSnapshot) -> None:
        # a reading is the layout at its moment whoever asked: it never overtakes an earlier chip change
        # (docs/protocol.md, "Device-initiated frames")
        self.layout = {(seat, spot): amount for seat, spot, amount in event.spots if amount}
        if event.request_id != self._pending_read or self.state == "fault":
            self._emit(cmd.Irregularity(self.round_no, "stale_snapshot", {"request_id": event.request_id}))
            return
        self._pending_read = None
        data = self.round
        assert data is not None
        spots: dict[int, dict[str, int]] = {}
        for seat, spot, amount in event.spots:
            if amount:
                spots.setdefault(seat, {})[spot] = amount
        if self.state == "betting":  # the layout as betting opened (or resumed): "no more bets" may be called
            data.layout_read = True
            return
        if self.state == "payout_reading":
            self._check_payout(spots)
            return
        for seat, spot in [*data.locked, *data.correctable, *data.returnable]:
            if (seat, spot) not in data.called:
                self._check_locked(seat, spot, spots.get(seat, {}).get(spot, 0))
        if self._verifying:
            self._verifying = False
        elif self.state.endswith("_reading") and any((i["seat"], i["spot"]) not in data.called
                                                      for i in data.pending_acks):
            # past-posting on a locked spot holds the round: the decision is called again after the supervisor's
            # acknowledgement
            data.called = {}
            self.decisions_refused()
            self._show("Past-posting: supervisor to acknowledge")
        elif self.state == "locking":
            if not data.bets_closed:  # every spot was announced, a seat the sensors name for the first time too
                for seat, spot, _ in event.spots:
                    data.called.setdefault((seat, spot), 0)
            self._lock(self._read_announced(spots))
            if data.pending_acks:  # the dealing waits for the supervisor (``_acknowledge``)
                self._show_past_posting()
        elif self.state.endswith("_reading"):
            self._take_decisions(self.state.removesuffix("_reading"), self._read_announced(spots))
            if data.pending_acks and self.round_open():
                self._show_past_posting()

    def _read_announced(self, spots: dict[int, dict[str, int]]) -> dict[int, dict[str, int]]:
        """Compare the reading ``spots`` (seat -> spot -> amount) with what was announced (``data.called``):
        each difference is past-posting or pinching (``_check_locked``). Returns the announced amounts, the
        wagers of record, as seat -> spot -> amount (empty spots left out); the announcement is spent."""
        data = self.round
        assert data is not None
        for seat, spot in list(data.called):
            self._check_locked(seat, spot, spots.get(seat, {}).get(spot, 0))
        announced: dict[int, dict[str, int]] = {}
        for (seat, spot), amount in data.called.items():
            if amount:
                announced.setdefault(seat, {})[spot] = amount
        data.called = {}
        return announced

    def _lock(self, spots: dict[int, dict[str, int]]) -> None:
        """Lock the wagers read after "no more bets" (NY 9 NYCRR 5324.39(c)(3)).

        At the first reading every valid seat's wagers are locked at once, and so is every empty spot (at 0);
        a seat with an invalid wager is named and held (``wagers_held``): from then on only its own spots may
        change, and only downwards (``correctable``), until it is valid or the dealer excludes it. Any other
        change is past-posting (``_check_locked``): the locked (or zero) amount stands. With nobody wagering,
        the round closes as a no-play round (nothing dealt; the shuffle is kept for the next round).
        """
        data = self.round
        assert data is not None
        if not data.bets_closed:
            data.bets_closed = True
            candidates = {seat: dict(wagers) for seat, wagers in spots.items()}
            for seat in self.config.seats:
                if seat not in candidates:
                    for spot in ev.SPOTS:
                        data.locked[(seat, spot)] = 0
        else:  # a held seat as corrected: never above what it held (``_check_locked`` flags more)
            candidates = {}
            for (seat, spot), most in data.correctable.items():
                amount = min(spots.get(seat, {}).get(spot, 0), most)
                if amount:
                    candidates.setdefault(seat, {})[spot] = amount
        held = {seat for seat, _ in data.correctable}
        for seat in data.excluded | (held - set(candidates)):  # excluded, or every chip taken away: no part
            for spot in ev.SPOTS:
                data.correctable.pop((seat, spot), None)
                if (seat, spot) not in data.returnable:
                    data.locked[(seat, spot)] = 0
        data.invalid = {}
        shown: dict[int, str] = {}
        for seat in sorted(set(candidates) - data.excluded):
            wagers = candidates[seat]
            try:
                if seat not in self.config.seats:
                    raise WagerError(seat, f"wagers.{next(iter(wagers))}", "seat is not in play at this table")
                for name in DECISIONS:
                    if name in wagers:
                        raise WagerError(seat, f"wagers.{name}", "bet placed before its decision")
                check_wagers(seat, wagers, self.jurisdiction.bet_multiples)
                check_limits(seat, wagers, self.config)
            except WagerError as exc:
                data.invalid[seat] = str(exc)
                shown[seat] = f"seat {seat} {exc.field.removeprefix('wagers.')}: {exc.reason}"
                self._emit(cmd.Irregularity(data.round_no, "invalid_wager", {"seat": seat, "reason": str(exc)}))
                for spot in ev.SPOTS:
                    data.correctable.setdefault((seat, spot), wagers.get(spot, 0))
                continue
            data.seats[seat] = SeatState(seat, dict(wagers))
            if data.correctable:  # a held seat now valid: none of its spots is held any longer
                for spot in ev.SPOTS:
                    data.correctable.pop((seat, spot), None)
            for spot in BET_SPOTS:
                data.locked[(seat, spot)] = wagers.get(spot, 0)
        if data.invalid:
            actor = self._reader or Actor("dealer", "", "panel")
            first = min(data.invalid)
            self._emit(cmd.WagersHeld(data.round_no, tuple({"seat": s, "wagers": dict(data.seats[s].wagers)}
                                                           for s in sorted(data.seats)), tuple(sorted(data.invalid))),
                       cmd.PressRefused("no_more_bets", data.invalid[first], actor.user, actor.role))
            self._show(shown[first] if len(data.invalid) < 2 else f"{len(data.invalid)} seats; {shown[first]}")
            self.lock_refused()
            return
        if not data.seats:
            self._no_play()
            return
        data.stacks_planned = [None] + sorted(data.seats)
        self._emit(cmd.WagersLocked(data.round_no, tuple({"seat": s, "wagers": dict(data.seats[s].wagers)}
                                                         for s in sorted(data.seats))))
        self._show("No more bets")
        self.lock()
        if not data.pending_acks:  # past-posting seen at the lock holds the dealing until it is acknowledged
            self._dispense(0)

    def _no_play(self) -> None:
        """No wager on the layout at "no more bets": the round closes with nothing dealt (NY (d)(1),(2): cards
        go only to players who placed a wager) and the shoe's checked shuffle is kept for the next round."""
        data = self.round
        assert data is not None
        self.shuffle_kept = data.shuffled
        self._emit(cmd.RoundClosed(data.round_no, {"wagered": 0, "returned": 0, "collected": 0, "paid": 0,
                                                   "player_net": 0}))
        self._show_between_rounds(f"Round {data.round_no}: no wagers, no play")
        self.no_play()

    def _take_decisions(self, step: str, spots: dict[int, dict[str, int]]) -> None:
        data = self.round
        assert data is not None
        decisions = []
        for state in self._active_seats():
            amount = spots.get(state.seat, {}).get(step, 0)
            if amount:
                try:
                    check_wagers(state.seat, {**state.wagers, step: amount}, self.jurisdiction.bet_multiples)
                except WagerError as exc:
                    detail = {"seat": state.seat, "spot": step, "amount": amount, "reason": str(exc)}
                    actor = self._reader or Actor("dealer", "", "panel")
                    self._emit(cmd.Irregularity(data.round_no, "irregular_bet", detail),
                               cmd.PressRefused("confirm", str(exc), actor.user, actor.role))
                    self._show(f"Irregular bet seat {state.seat} {step}: {amount}")
                    # the confirm decided nothing: a change since is the correction it asks for, not a bet's change
                    decided = {(s.seat, step) for s in self._active_seats()}
                    data.pending_acks = [i for i in data.pending_acks if (i["seat"], i["spot"]) not in decided]
                    self.decisions_refused()
                    return
            decisions.append((state, amount))
        for state, amount in decisions:
            if amount:
                state.wagers[step] = amount
            else:
                state.folded_at = step
                data.collectable.update((state.seat, w) for w in state.wagers if w != "five_card_bonus")
            self._emit(cmd.DecisionMade(data.round_no, step, state.seat, "bet" if amount else "fold", amount))
        for seat, state in data.seats.items():
            for later in DECISIONS[DECISIONS.index(step):]:
                if state.folded_at is not None or later == step:
                    data.locked[(seat, later)] = state.wagers.get(later, 0)
        if not self._active_seats() and not any("five_card_bonus" in s.wagers for s in data.seats.values()):
            # every seat folded and no five-card bonus waits for the board: nothing is left in action, so the
            # round is settled now (NY 5324.39(e)(9) settles "each remaining player": there is none); the
            # community cards stay face down and go to the discard rack as dealt (PA 674a.11(i): the journal's
            # StackDealt keeps them for a dispute)
            self.nothing_in_action()
            self._settle()
            return
        self.decisions_taken()
        self._show(f"Turn the {step} card" + ("" if step == "middle" else "s"))

    # ------------------------------------------------------------------ settlement
    def _settle(self) -> None:
        data = self.round
        if data is not None and self._cards_missing():  # dealt by hand: a card still to be entered
            return
        assert data is not None and data.cross is not None
        community = Community.from_stack(data.cross)
        totals = {"wagered": 0, "returned": 0, "collected": 0, "paid": 0, "player_net": 0}
        for seat in sorted(data.seats, reverse=True):  # from the dealer's right, counterclockwise
            state = data.seats[seat]
            settled = settle_seat(seat, state.cards, community, state.wagers, self.jurisdiction)
            record = settled.to_json()
            record["folded_at"] = state.folded_at
            for result in settled.wagers.values():
                totals["wagered"] += result.amount
                totals["returned"] += result.returned
                totals["collected"] += result.collected
                totals["paid"] += max(result.net, 0)
            totals["player_net"] += settled.net
            self._emit(cmd.SeatSettled(data.round_no, seat, record))
            data.payout_plan[seat] = plan_seat(record["wagers"], self.config.payout.winning_spot)
        data.totals = totals
        self.settled()  # the graph decides (``payout_check``): the payout check, or closed at once
        if self.state == "payout":
            data.to_pay = sorted(data.seats, reverse=True)  # from the dealer's right, as settled
            data.payout_base = {seat: {spot: amount for (s, spot), amount in self.layout.items() if s == seat}
                                for seat in sorted(set(ev.SEATS) | {s for s, _ in self.layout})}
            self._show_payout()
            return
        self._close_round()

    def _close_round(self) -> None:
        data = self.round
        assert data is not None and data.totals is not None
        self._emit(cmd.RoundClosed(data.round_no, dict(data.totals)))
        self._show_between_rounds(f"Round {data.round_no} settled")

    # ------------------------------------------------------------------ payout check
    def _show_payout(self) -> None:
        """Show the current seat's payout, or, after a reading that differed, the spots and the differences."""
        data = self.round
        assert data is not None and data.to_pay
        seat = data.to_pay[0]
        if data.last_check:
            self._show(mispay_text(seat, data.last_check["differences"]))
        else:
            self._show(instruction_text(seat, data.payout_plan[seat]))

    def _paid(self, actor: Actor, reason: str) -> None:
        """The dealer marked the current seat paid: its spots are read (``_check_payout``)."""
        self.paid()
        self._reader = actor
        self._read_spots()

    def _check_payout(self, spots: dict[int, dict[str, int]]) -> None:
        """Compare the whole layout with what it must hold (NY 5324.39(e)(9): each seat settled in turn): the seat
        being paid with its payout plan (``controller.game.payout``), each seat already paid and checked with what it
        held then, each seat not yet paid (a seat without a wager too) with what it held when the payout began. An exact match moves on to the
        next seat (or closes the round); a difference, on any seat, is shown with its seat, spot and amount and
        the dealer puts it right (``paid`` again: the layout is read again) or a supervisor accepts it
        (``accept_mispay``). A difference on another seat names it (``"seat"`` in the difference)."""
        data = self.round
        assert data is not None and data.to_pay
        seat = data.to_pay[0]
        plan = data.payout_plan[seat]
        seen = dict(spots.get(seat, {}))
        found = list(differences(plan, seen))
        others: dict[int, dict[str, int]] = {}
        # in settlement order, from the dealer's right; a seat without a wager must keep what it had too
        for other in sorted(set(data.seats) | set(data.payout_base), reverse=True):
            should = data.checked.get(other, data.payout_base.get(other))
            if other == seat or should is None:  # None: a payout begun before the base was kept
                continue
            found += [{"seat": other, **d} for d in differences_from(should, spots.get(other, {}))]
            others[other] = dict(spots.get(other, {}))
        actor = self._reader or Actor("dealer", "", "panel")
        self._emit(cmd.PayoutChecked(data.round_no, seat, expected_of(plan), seen, tuple(found), actor.name,
                                     actor.role))
        if found:
            data.last_check = {"seat": seat, "seen": seen, "differences": [dict(d) for d in found],
                               "others": others, "id": self._notice()}
            self.mispaid()
            self._show_payout()
            return
        self._seat_done(expected_of(plan))

    def _seat_done(self, holds: dict[str, int]) -> None:
        """The current seat is paid and checked and holds ``holds`` (spot -> amount): later readings expect it."""
        data = self.round
        assert data is not None
        data.checked[data.to_pay.pop(0)] = dict(holds)
        data.last_check = None
        if data.to_pay:
            self.next_seat()
            self._show_payout()
        else:
            self.all_paid()
            self._close_round()

    def _accept_mispay(self, actor: Actor, reason: str) -> None:
        """A supervisor accepts the last reading as paid (a mispay, journaled with the amounts, who and why):
        the current seat and any other seat that differed hold from now on what was read; the dealer goes on to
        the next seat."""
        data = self.round
        assert data is not None and data.last_check is not None
        seat = data.to_pay[0]
        found = tuple(dict(d) for d in data.last_check["differences"])
        short, over = short_and_over(found)
        self._emit(cmd.MispayAccepted(data.round_no, seat, expected_of(data.payout_plan[seat]),
                                      dict(data.last_check["seen"]), found, short, over, actor.name, actor.role,
                                      reason))
        for other in {d["seat"] for d in found if "seat" in d}:
            layout = dict(data.last_check["others"].get(other, {}))
            if other in data.checked:
                data.checked[other] = layout
            else:
                data.payout_base[other] = layout
        self._seat_done(data.last_check["seen"])

    # ------------------------------------------------------------------ checkpoint
    def checkpoint(self) -> dict[str, Any]:
        """The machine's whole state as plain JSON-ready data, for the journal's checkpoints
        (``controller.journal.store``): ``restore`` on a machine built with the same config and jurisdiction gives a
        machine that answers every later input as this one does. Every attribute is named here, on purpose:
        a new one must be added (tests/test_recovery.py fails otherwise). Shapes: sets as sorted lists,
        ordered mappings as lists of pairs (their order is the order of later outputs)."""
        data = self.round
        return {
            "state": self.state,
            "last_round_no": self.last_round_no,
            "last_txn": self.last_txn,
            "devices_ready": sorted(self.devices_ready),
            "faults": [[f.round_no, f.device, f.cause, f.detail, f.resumable, f.fault_id, f.device_detail]
                       for f in self.faults],
            "resume_state": self.resume_state,
            "supervisor_key": self.supervisor_key,
            "lamps": None if self._lamps is None else list(self._lamps),
            "display": self._display,
            "prompt": self._prompt,
            "reader": None if self._reader is None else [self._reader.role, self._reader.user, self._reader.source],
            "shuffle_kept": self.shuffle_kept,
            "shoe_boots": self.shoe_boots,
            "request_id": self._request_id,
            "pending_read": self._pending_read,
            "verifying": self._verifying,
            "querying": self._querying,
            "self_checked": self.self_checked,
            "reconciled": self.reconciled,
            "dealing_mode": self.dealing_mode,
            "alerts_waiting": [dict(alert) for alert in self.alerts_waiting],
            "private_panel": None if self._private_panel is None else [self._private_panel[0],
                                                                       list(self._private_panel[1])],
            "journal_damage": self.journal_damage,
            "layout": sorted([seat, spot, amount] for (seat, spot), amount in self.layout.items()),
            "notice_no": self.notice_no,
            "round": None if data is None else {
                "round_no": data.round_no,
                "seats": [[s.seat, dict(s.wagers), None if s.cards is None else list(s.cards), s.folded_at]
                          for s in data.seats.values()],
                "shuffled": data.shuffled,
                "stacks_planned": list(data.stacks_planned),
                "cross": None if data.cross is None else list(data.cross),
                "next_stack": data.next_stack,
                "dealt": sorted(data.dealt),
                "stacks": [[txn, list(cards)] for txn, cards in data.stacks.items()],
                "revealed": list(data.revealed),
                "locked": [[seat, spot, amount] for (seat, spot), amount in data.locked.items()],
                "collectable": sorted([seat, spot] for seat, spot in data.collectable),
                "invalid": [[seat, why] for seat, why in data.invalid.items()],
                "excluded": sorted(data.excluded),
                "bets_closed": data.bets_closed,
                "correctable": [[seat, spot, amount] for (seat, spot), amount in data.correctable.items()],
                "pending_acks": [dict(item) for item in data.pending_acks],
                "acknowledged": [dict(item) for item in data.acknowledged],
                "totals": None if data.totals is None else dict(data.totals),
                "payout_plan": [[seat, {spot: dict(step) for spot, step in plan.items()}]
                                for seat, plan in data.payout_plan.items()],
                "to_pay": list(data.to_pay),
                "last_check": None if data.last_check is None else {
                    "seat": data.last_check["seat"], "seen": dict(data.last_check["seen"]),
                    "differences": [dict(d) for d in data.last_check["differences"]],
                    "others": [[seat, dict(held)] for seat, held in data.last_check["others"].items()],
                    "id": data.last_check["id"]},
                "manual": data.manual,
                "placed": data.placed,
                "board": list(data.board),
                "entry_pending": list(data.entry_pending),
                "held_seats": [[seat, dict(wagers)] for seat, wagers in data.held_seats.items()],
                "layout_read": data.layout_read,
                "called": [[seat, spot, amount] for (seat, spot), amount in data.called.items()],
                "returnable": [[seat, spot, amount] for (seat, spot), amount in data.returnable.items()],
                "payout_base": [[seat, dict(held)] for seat, held in data.payout_base.items()],
                "checked": [[seat, dict(held)] for seat, held in data.checked.items()],
                "acks_id": data.acks_id,
            },
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Set the machine to ``state`` (``checkpoint``'s output, also after a round trip through JSON).
        Raises ``KeyError``/``TypeError``/``ValueError`` for data that is not a checkpoint."""
        if state["state"] not in STATES:
            raise ValueError(f"checkpoint: unknown state {state['state']!r}")
        self.machine.set_state(state["state"], model=self)
        self.last_round_no = state["last_round_no"]
        self.last_txn = state["last_txn"]
        self.devices_ready = set(state["devices_ready"])
        self.faults = [cmd.FaultRaised(*fault) for fault in state["faults"]]
        self.resume_state = state["resume_state"]
        self.supervisor_key = state["supervisor_key"]
        self._lamps = None if state["lamps"] is None else tuple(state["lamps"])
        self._display = state["display"]
        self._prompt = state["prompt"]
        self._reader = None if state["reader"] is None else Actor(*state["reader"])
        self.shuffle_kept = state["shuffle_kept"]
        self.shoe_boots = state.get("shoe_boots")  # a checkpoint written before the counter: never seen
        self._request_id = state["request_id"]
        self._pending_read = state["pending_read"]
        self._verifying = state["verifying"]
        self._querying = state["querying"]
        self.self_checked = state["self_checked"]
        self.reconciled = state["reconciled"]
        # a checkpoint written before dealing by hand: the shoe deals, nothing of a hand deal is under way
        self.dealing_mode = state.get("dealing_mode", "automated")
        # a checkpoint written before alerts reached the round has none waiting
        self.alerts_waiting = [dict(alert) for alert in state.get("alerts_waiting", [])]
        panel = state.get("private_panel")
        self._private_panel = None if panel is None else [panel[0], list(panel[1])]
        # a checkpoint written before the journal store's check: the store was never found damaged
        self.journal_damage = state.get("journal_damage")
        # a checkpoint written before the layout was followed: the next opening reading gives it
        self.layout = {(seat, spot): amount for seat, spot, amount in state.get("layout", [])}
        self.notice_no = state.get("notice_no", 0)
        self._outbox = []
        saved = state["round"]
        if saved is None:
            self.round = None
            return
        self.round = RoundData(
            round_no=saved["round_no"],
            seats={seat: SeatState(seat, dict(wagers), None if cards is None else tuple(cards), folded_at)
                   for seat, wagers, cards, folded_at in saved["seats"]},
            shuffled=saved["shuffled"],
            stacks_planned=list(saved["stacks_planned"]),
            cross=None if saved["cross"] is None else tuple(saved["cross"]),
            next_stack=saved["next_stack"],
            dealt=set(saved["dealt"]),
            stacks={txn: tuple(cards) for txn, cards in saved["stacks"]},
            revealed=list(saved["revealed"]),
            locked={(seat, spot): amount for seat, spot, amount in saved["locked"]},
            collectable={(seat, spot) for seat, spot in saved["collectable"]},
            invalid={seat: why for seat, why in saved["invalid"]},
            excluded=set(saved["excluded"]),
            bets_closed=saved["bets_closed"],
            correctable={(seat, spot): amount for seat, spot, amount in saved["correctable"]},
            pending_acks=[dict(item) for item in saved["pending_acks"]],
            acknowledged=[dict(item) for item in saved["acknowledged"]],
            # a checkpoint written before the payout check has none of its fields: nothing to pay then
            totals=None if saved.get("totals") is None else dict(saved["totals"]),
            payout_plan={seat: {spot: dict(step) for spot, step in plan.items()}
                         for seat, plan in saved.get("payout_plan", [])},
            to_pay=list(saved.get("to_pay", [])),
            last_check=None if saved.get("last_check") is None else {
                "seat": saved["last_check"]["seat"], "seen": dict(saved["last_check"]["seen"]),
                "differences": [dict(d) for d in saved["last_check"]["differences"]],
                "others": {seat: dict(held) for seat, held in saved["last_check"].get("others", [])},
                "id": saved["last_check"].get("id", 0)},
            manual=saved.get("manual", False),
            placed=saved.get("placed", 0),
            board=list(saved.get("board", [])),
            entry_pending=list(saved.get("entry_pending", [])),
            held_seats={seat: dict(wagers) for seat, wagers in saved.get("held_seats", [])},
            # a checkpoint written before announcements were kept: a betting round reads its layout again
            layout_read=saved.get("layout_read", False),
            called={(seat, spot): amount for seat, spot, amount in saved.get("called", [])},
            returnable={(seat, spot): amount for seat, spot, amount in saved.get("returnable", [])},
            payout_base={seat: dict(held) for seat, held in saved.get("payout_base", [])},
            checked={seat: dict(held) for seat, held in saved.get("checked", [])},
            acks_id=saved.get("acks_id"),
        )
