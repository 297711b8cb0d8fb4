"""The round of Criss-Cross Poker as a pure state machine: one input in, a list of commands and records out.

No I/O and no clock: the service feeds it inputs (device events of ``drivers.events``, the service's start and
people's actions of ``controller.round.inputs``) one at a time from its single controller thread and carries out what
``handle`` returns (``controller.round.commands``). Replaying the journaled inputs rebuilds the same state
(``controller.journal.recovery``). ``Round`` follows the graph of ``controller.round.graph`` and is composed of one
mixin per rule area: ``lock`` (wagers and the lock), ``dealing`` (the shoe), ``decisions`` (decisions and
settlement), ``payout_check``, ``faults`` (faults and holds), ``view`` (the view and the panel), ``checkpoint``,
``manual`` (dealing by hand), ``alerts`` and ``table_locks`` (the table's locks and test mode).

Here: the dispatch of inputs, people's actions and their roles, the start and the journal store's state.
- roles: the dealer's buttons need nobody else; ``acknowledge``, ``clear_fault`` and ``void_round`` need the
  supervisor key turned on the panel, or supervisor credentials on the control interface. A refused action is
  recorded (``PressRefused``) and changes nothing.
- hole-card alerts (``controller.round.alerts``): an input of their own, shown on the panel only while the
  supervisor key is turned and acknowledged by a supervisor; they are not part of the round and change nothing
  of it.
- a damaged journal store (``JournalDamaged``, from the check of the whole store after each start,
  ``controller.journal.check``): the round in progress goes on and settles, no new round opens (the
  ``journal_damaged`` lock of ``open_betting``'s condition, ``controller.round.table_locks``) until a start's check
  finds the store whole (``JournalWhole``).
  The records regulators ask for must be whole before more are added to them.
"""

from __future__ import annotations

from typing import Any

from transitions import MachineError

from controller.game.paytable import Jurisdiction
from controller.game.table import TableConfig
from controller.round import commands as cmd
from controller.round.actions import ActionReasons
from controller.round.alerts import ACKNOWLEDGE_ALERT, AlertDesk
from controller.round.checkpoint import Checkpoint
from controller.round.data import Actor, RoundData
from controller.round.dealing import ShoeDealing
from controller.round.decisions import Decisions
from controller.round.faults import Faults
from controller.round.graph import BETWEEN_ROUNDS, ROUND_STATES, SETTLED, STATES, _Graph, _transitions
from controller.round.inputs import (ACTIONS, ROLES, SUPERVISOR_ACTIONS, TABLE_ACTIONS, JournalDamaged, JournalWhole,
                                     OperatorAction, PromptDue, ServiceStarted, stale_answer, stale_reason)
from controller.round.lock import WagerLock
from controller.round.manual import ManualDealing
from controller.round.meters import Meters
from controller.round.payout_check import PayoutCheck
from controller.round.table_locks import TableLocks
from controller.round.view import JOURNAL_DAMAGED_TEXT, PanelView, panel_text
from drivers import events as ev


class Round(WagerLock, ShoeDealing, Decisions, PayoutCheck, Faults, PanelView, Checkpoint, ManualDealing, AlertDesk,
            TableLocks, ActionReasons):
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
        #: ``allowed_actions()`` as the end of the last input (``_outputs``) left them, for the view after it;
        #: None from the start of the next input (``handle``, ``defect``, ``restore``) until its end
        self._allowed_after_input: tuple[str, ...] | None = None
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
        # the next round's dealing: ``automated`` or ``manual`` (controller.round.manual)
        self.dealing_mode = "automated"
        # hole-card alerts not yet acknowledged (controller.round.alerts)
        self.alerts_waiting: list[dict[str, Any]] = []
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
        #: the lifetime meters (``controller.round.meters``), fed every input and record journaled (``_meter``)
        self.meters = Meters()
        #: a supervisor's ``disable_table`` standing (``code``, ``by``, ``role``), else None; and test mode
        #: (``by``, ``role``, ``from_round``: the last round when it was entered), else None
        #: (``controller.round.table_locks``)
        self.disabled: dict[str, str] | None = None
        self.test_mode: dict[str, Any] | None = None
        self.machine = _Graph(model=self, states=STATES, transitions=_transitions(), initial="starting",
                              queued=True, auto_transitions=False, send_event=False)
    def handle(self, event: Any) -> list[Any]:
        """Apply one input; return the commands to send and records to journal, in order.

        Never raises for a device event or an action: a press not allowed now (or not to this role) yields
        ``PressRefused`` + ``Display``; an event that makes no sense in the current state is recorded as an
        ``Irregularity``. Device commands go only to devices whose link is up, and none before the start-up
        self-check (every device answered its handshake).
        """
        self._outbox = []
        self._allowed_after_input = None
        self.meters.observe(event)  # before the handler: as the journal has it, the input before its outputs
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
        (``JournalWhole``): else the ``journal_damaged`` lock keeps every round from opening
        (``controller.round.table_locks``). Kept over restarts (``checkpoint``): a restart on the same store keeps
        the table closed until its own check finds the store whole."""
        return self.journal_damage is None
    def allowed_actions(self) -> tuple[str, ...]:
        """Actions allowed now by the state of the round and the table's locks, whoever asks (supervisor actions
        included): the round's, then those of ``TABLE_ACTIONS`` the graph allows."""
        return self.round_actions() + self._table_actions()
    def round_actions(self) -> tuple[str, ...]:
        """Actions allowed now by the state of the round alone (``allowed_actions`` without the table's locks and
        test mode)."""
        state, data = self.state, self.round
        void = ("void_round",) if self.may_void_round() else ()  # the graph's rule (``_transitions``), nowhere else
        if self._verifying or self._querying:
            return void
        if state == "fault":
            # not yet compared with the shoe's last dispense (``reconciled``), a clearance has the shoe asked again
            clear = self.faults and all(f.resumable for f in self.faults) \
                and self.devices_ready >= self._needed_devices()
            return ("clear_fault",) * bool(clear) + void + self._mode_actions()
        if self._held_for_acknowledgement():
            return ("acknowledge", *void)
        if state in BETWEEN_ROUNDS:  # the graph's rule (``table_open``), nowhere else
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
    def _emit(self, *outputs: Any) -> None:
        self._outbox.extend(outputs)
    def _outputs(self) -> list[Any]:
        """The outbox with the lamps brought up to date; device commands only to devices whose link is up, and
        none before the start-up self-check. The actions allowed as the lamps were lit are kept for the view
        (``_allowed_after_input``): nothing after the lamps changes what is allowed."""
        allowed = self._update_lamps()
        if self.test_mode is not None:  # TEST on the panel at all times (NY 9 NYCRR 5319.58)
            self._outbox = [cmd.Display(self.on_panel(o.text)) if isinstance(o, cmd.Display) else o
                            for o in self._outbox]
        self._update_private_panel()  # after the lamps: what the key shows of alerts (controller.round.alerts)
        out = []
        for output in self._outbox:
            if isinstance(output, cmd.Display):
                self._display = output.text
            if isinstance(output, cmd.DEVICE_COMMANDS):
                if not self.self_checked or output.device not in self.devices_ready:
                    continue
            else:  # a record the service journals: the one place the meters count the round's records
                self.meters.observe(output)
            out.append(output)
        self._allowed_after_input = allowed
        return out
    def _refuse(self, action: str, reason: str, actor: Actor, text: str) -> None:
        """Record a refused action (who, in which role, why) and show ``text`` on the panel until the next
        prompt, or ``PromptDue`` a few seconds later; the state's prompt is kept (``prompt``)."""
        self._emit(cmd.PressRefused(action, reason, actor.user, actor.role), cmd.Display(panel_text(text)))
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
            lock = self._lock_text()
            self._show("Journal whole: table ready" if lock is None else f"Journal whole. {lock}")
    def _on_SupervisorKey(self, event: ev.SupervisorKey) -> None:
        self.supervisor_key = (event.key_id or "supervisor") if event.on else None
    def _on_SessionRated(self, event: Any) -> None:
        """A seat session's rating (``controller.round.inputs.SessionRated``): journaled, nothing changes."""
    def _on_SeatRating(self, event: Any) -> None:
        """A rating action on a seat (``controller.round.inputs.SeatRating``): journaled, nothing changes."""
    def _on_PromptDue(self, event: PromptDue) -> None:
        if self._prompt and self._display != self.on_panel(self._prompt):  # a refusal has been shown long enough
            self._emit(cmd.Display(self._prompt))
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
        elif action in SUPERVISOR_ACTIONS and actor.role != "supervisor" and actor.source == "control":
            pass  # refused below for the role, as the interface answered it (403), whatever the state
        elif action not in self.allowed_actions():
            why, text = self.refusal(action)  # the words of ``controller.round.actions``
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
        if action == "disable_table":
            self._disable_table(actor, reason, code)
            return
        if self._manual_act(action, actor, reason):
            return
        handlers = {"open_betting": self._open_betting, "no_more_bets": self._no_more_bets,
                    "confirm": self._confirm, "reveal": self._reveal, "exclude": self._exclude,
                    "acknowledge": self._acknowledge, "clear_fault": self._clear_fault, "paid": self._paid,
                    "accept_mispay": self._accept_mispay, "enable_table": self._enable_table,
                    "enter_test_mode": self._enter_test_mode, "leave_test_mode": self._leave_test_mode}
        try:
            handlers[action](actor, reason)
        except MachineError as exc:  # allowed_actions and the graph disagree: a defect, made visible
            self._fail(None, "internal", f"{action} in {self.state}: {exc}", resumable=False)
