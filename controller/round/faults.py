"""Faults and holds: what stops the round until a supervisor answers.

- a device fault, a link loss, a card-accounting mismatch or a restart of the service moves the round to
  ``fault``, which names the cause. A supervisor clears a resumable fault once its device is back (the round
  resumes where it stopped) or voids the round.
- past-posting holds the round until a supervisor acknowledges it (NY 9 NYCRR 5324.39(c)(3)).
- a supervisor may void a round in progress at any time before its settlement (a misdeal, a player dispute, a
  fault that cannot be cleared): every wager of record is returned and the voiding recorded with who and why.
- each thing a supervisor answers has a notice number (``answers``, docs/control.md "The round guard").
"""

from __future__ import annotations

from typing import Any

from controller.round import commands as cmd
from controller.round.data import Actor
from controller.round.graph import OPTIONAL_DEVICES, PAYOUT_STATES, SETTLED
from drivers import events as ev

#: Device fault codes that mean the device is out of reach until it answers a handshake again (``DeviceReady``):
#: a lost link, a device of the wrong kind or identity at the start, a driver that stopped on a defect
#: (drivers/link.py), a device closed for flooding the link. A ``timeout`` (a request unanswered after every
#: repeat) or a ``protocol`` rejection leaves the link up.
LINK_CODES: frozenset[str] = frozenset({"link_lost", "handshake", "internal", "flooding"})

#: Fault codes the drivers give in their own words (drivers/link.py: a lost link, an unanswered request, a
#: rejected frame): their detail is public. Any other code is a device's FAULT, whose text is the device's own
#: and may name a card: journal only (``FaultRaised.device_detail``).
DRIVER_CODES: frozenset[str] = LINK_CODES | {"timeout", "protocol"}

#: Shoe fault codes that end its answer to QUERY_LAST (docs/protocol.md, "What did you last do"): the shoe refused
#: it (a NAK: ``protocol``) or did not answer it after every repeat (``timeout``).
QUERY_FAILED: frozenset[str] = frozenset({"protocol", "timeout"})

#: Device fault codes after which the round's cards cannot be trusted (a stack of the wrong size or one that does
#: not parse reported by the shoe driver, a card count that does not add up) or the device will not come back
#: (its driver stopped on a defect): the round can only be voided.
UNTRUSTED_CODES: frozenset[str] = frozenset({"stack_size", "stack_malformed", "card_count", "internal"})


class Faults:
    """Faults and holds of ``controller.round.machine.Round`` (a mixin: it uses the round's state, graph and
    helpers; its fields are in ``Round.__init__``/``RoundData``)."""

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
        if event.device == "shoe" and self._querying and event.code in QUERY_FAILED:
            # the shoe refused QUERY_LAST or never answered it: what it last dispensed cannot be compared with the
            # journal, so nothing is dealt. Held in fault (from ``starting`` too, so that the panel and /state show
            # it) until a supervisor has the shoe asked again (``_clear_fault``); never asked again unbidden
            self._querying = False
            self._fail("shoe", event.code, f"the shoe did not say what it last dispensed: {public}",
                       device_detail=event.detail)
            return
        if self.state == "starting":
            self._emit(cmd.FaultRaised(None, event.device, event.code, public, device_detail=event.detail))
            return
        # A shoe that refuses a request (NAK) does not hold the state the journal gives it (a shuffle it no
        # longer has, after a power cycle): asking again is refused again, and its deck cannot be trusted.
        if event.device == "shoe" and self.dealing_by_hand():  # the table deals by hand: the shoe is not in use
            self._emit(cmd.Irregularity(self.round_no, "shoe_fault_dealing_by_hand", {"code": event.code}))
            return
        refused_by_shoe = event.device == "shoe" and event.code == "protocol"
        # a FAULT code the protocol does not define says nothing of what the device did: fail closed
        undefined = event.code.startswith(ev.UNDEFINED_FAULT)
        self._fail(event.device, event.code, public, device_detail=event.detail,
                   resumable=event.code not in UNTRUSTED_CODES and not refused_by_shoe and not undefined)
    def defect(self, error: Exception) -> list[Any]:
        """Move to ``fault`` after an unexpected exception in ``handle`` (a defect, cause ``internal``, not
        resumable); return the outputs (``FaultRaised`` and a panel message) so the round stops in a defined
        state."""
        self._outbox = []
        self._allowed_after_input = None
        self._fail(None, "internal", f"{type(error).__name__}: {error}"[:200], resumable=False)
        return self._outputs()
    def _fail(self, device: str | None, cause: str, detail: str, *, resumable: bool = True,
              device_detail: str = "") -> None:
        """Raise a fault: ``detail`` is public (never a card), ``device_detail`` a device's own text (private)."""
        # a settled round cannot be voided: what is left (the cards a round dealt by hand still waits for, the check
        # of the chips) resumes once the devices answer; with no round open there is nothing to void: a fault a void
        # would end is cleared (the next round shuffles and counts the deck before any wager locks), never a table
        # held in fault for good
        resumable = resumable or self.phase in SETTLED or not self.round_open()
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
    def answers(self, allowed: tuple[str, ...] | None = None) -> dict[str, int]:
        """What each action that answers something would answer now, by its notice number: ``clear_fault`` the
        latest fault of the episode (``FaultRaised.fault_id``), ``acknowledge`` the latest past-posting awaiting a
        supervisor, ``accept_mispay`` the payout reading that differed. An action naming another number is stale
        (``controller.round.inputs.stale_answer``): a retried clearance never clears a fault raised after it was
        sent. ``allowed`` is ``allowed_actions()`` when the caller has it already."""
        data, out = self.round, {}
        if self.state == "fault" and self.faults:
            out["clear_fault"] = self.faults[-1].fault_id
        if data is not None and self._held_for_acknowledgement() and data.acks_id is not None:
            out["acknowledge"] = data.acks_id
        if data is not None and self.phase in PAYOUT_STATES and data.last_check:
            out["accept_mispay"] = data.last_check["id"]
        if allowed is None:
            allowed = self.allowed_actions()
        return {action: number for action, number in out.items() if action in allowed}
    def _held_for_acknowledgement(self) -> bool:
        """True while past-posting awaits a supervisor's acknowledgement in an open round (NY (c)(3))."""
        return self.round is not None and bool(self.round.pending_acks) and self.round_open()
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
        """A supervisor's ``clear_fault``: the round resumes where it stopped, once the shoe's last dispense was
        compared with the journal (``reconciled``). While it was not (the shoe refused QUERY_LAST or did not
        answer it), the clearance has the shoe asked again and the fault stands: the next clearance, after its
        answer, resumes. A fault raised in ``starting`` resumes to the table ready between rounds."""
        if not (self.reconciled or self.dealing_by_hand()):
            self._query_shoe()
            self._show(f"Shoe asked again by {actor.name}: clear once it answers")
            return
        target = self.resume_state or "idle"
        self._emit(cmd.FaultCleared(self.round_no, tuple(f.cause for f in self.faults), actor.name, actor.role,
                                    target))
        self.faults = []
        self.resume_state = None
        getattr(self, f"resume_{target}")()
        if target == "starting":  # the self-check passed (every handshake, the shoe's answer): the table is ready
            self.self_check_passed()
            self._show_between_rounds(f"Fault cleared by {actor.name}: table ready")
            return
        self._show(f"Fault cleared by {actor.name}")
        self._resume_in_flight()
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
        self._round_ended()
        self._show_between_rounds(f"Round {data.round_no} void: return all wagers")
