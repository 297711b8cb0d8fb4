"""People's actions as a screen offers them: each action's label in words and the role that may send it (from
``SUPERVISOR_ACTIONS``, the one rule of roles), and why the action the round waits for is not allowed yet.

``WORDS`` (``GET /labels`` of the control interface, docs/control.md "The dealer's screen") holds the names a
screen shows for actions, states, spots and hand categories, and the currency of the table's minor units; the
view's ``actions`` (``Round.view``) lists the actions allowed now with their label and role, and the step the
round waits for with the reason it is not allowed yet (``ActionReasons.refusal``: the same words the round
machine records when it refuses the press, ``PressRefused``). Nothing here is secret: no card, no alert.
"""

from __future__ import annotations

from typing import Any

from controller.game.hands import CATEGORIES
from controller.round.graph import BETWEEN_ROUNDS, STATES
from controller.round.inputs import ACTION_CODES, ACTIONS, SUPERVISOR_ACTIONS, TABLE_ACTIONS
from drivers.events import SPOTS

#: Each action of ``ACTIONS`` in words, as a button shows it.
ACTION_LABELS: dict[str, str] = {
    "open_betting": "Open betting", "no_more_bets": "No more bets", "confirm": "Confirm", "reveal": "Reveal",
    "exclude": "Exclude held seats", "acknowledge": "Acknowledge past-posting", "clear_fault": "Clear fault",
    "void_round": "Void round", "paid": "Seat paid", "accept_mispay": "Accept mispay",
    "deal_by_hand": "Deal by hand", "deal_by_shoe": "Deal from the shoe", "hold_seat": "Hold seat",
    "acknowledge_alert": "Acknowledge alert", "disable_table": "Disable table", "enable_table": "Enable table",
    "enter_test_mode": "Enter test mode", "leave_test_mode": "Leave test mode"}

#: Why an action is refused, by the first condition of its transition (``(method, target)`` of the graph,
#: ``controller.round.graph._Graph.unmet``) that does not hold: the switches of dealing by hand (NY (d)(1)).
UNMET: dict[tuple[str, bool], str] = {
    ("manual_dealing_allowed", True): "this table does not deal by hand (manual_dealing: false in table.yaml)",
    ("dealing_by_shoe", True): "the table deals by hand already",
    ("round_open", False): "a round is open: the dealing is switched between rounds",
    ("dealing_by_hand", True): "the table deals from the shoe already",
    ("shoe_ready", True): "waiting for the shoe to be ready",
}
#: States whose name in words is not their own name with spaces (``state_label``).
_STATE_WORDS: dict[str, str] = {"idle": "Table ready", "closed": "Round closed", "voided": "Round voided",
                                "fault": "Fault", "locking": "Locking the wagers", "payout": "Paying out",
                                "payout_reading": "Reading the payout", "dealing_cross": "Dealing the cross",
                                "dealing_players": "Dealing the seats", "settlement": "Settling"}

#: Hand categories whose name in words is not their own name with spaces (``controller.game.hands.CATEGORIES``).
_HAND_WORDS: dict[str, str] = {"high_card": "No pair"}

#: The currency of the table's minor units (domain.md "Money": cents; the jurisdictions configured are US states).
CURRENCY: dict[str, Any] = {"code": "USD", "symbol": "$", "minor_units": 2}


def action_role(action: str) -> str:
    """The least role that may send ``action`` (``controller.round.inputs.ROLES``): ``supervisor`` for
    ``SUPERVISOR_ACTIONS``, else ``dealer`` (domain.md "Roles"). Raises ``KeyError`` for an unknown action."""
    if action not in ACTION_LABELS:
        raise KeyError(f"unknown action {action!r}; actions: {', '.join(ACTIONS)}")
    return "supervisor" if action in SUPERVISOR_ACTIONS else "dealer"


def state_label(state: str) -> str:
    """``state`` (one of ``controller.round.graph.STATES``) in words: ``across_decision`` -> ``Across decision``."""
    return _STATE_WORDS.get(state) or state.replace("_", " ").capitalize()


def _words(name: str, special: dict[str, str]) -> str:
    return special.get(name) or name.replace("_", " ").capitalize()


#: The words of a screen (``GET /labels``): per action its ``label`` and ``role``, per state, spot and hand
#: category its name in words, the public ``codes`` an action takes (``ACTION_CODES``), and the ``currency`` of
#: amounts (integer minor units).
WORDS: dict[str, Any] = {
    "actions": {action: {"label": ACTION_LABELS[action], "role": action_role(action)} for action in ACTIONS},
    "states": {state: state_label(state) for state in STATES},
    "spots": {spot: _words(spot, {"five_card_bonus": "Five-card bonus"}) for spot in SPOTS},  # SPOTS order
    "hands": {category: _words(category, _HAND_WORDS) for category in CATEGORIES},
    "codes": {action: list(codes) for action, codes in ACTION_CODES.items()},
    "currency": CURRENCY,
}


def action_entry(action: str, reason: str | None = None) -> dict[str, Any]:
    """One item of the view's ``actions``: ``action``, its ``label`` and ``role``, and ``reason`` (None: allowed
    now; else why not yet, in words)."""
    return {"action": action, "label": ACTION_LABELS[action], "role": action_role(action), "reason": reason}


class ActionReasons:
    """Why an action is not allowed now (a mixin of ``controller.round.machine.Round``, using its state): the
    one place the words of a refusal are chosen, for the panel (``_act``) and the view (``waiting_action``)."""

    def step_action(self) -> str | None:
        """The action the current state waits for from the table (None in a state that waits for a device)."""
        state = self.state  # type: ignore[attr-defined]
        if state in BETWEEN_ROUNDS:
            return "open_betting"
        if state in ("betting", "wagers_held"):
            return "no_more_bets"
        if state == "fault":
            return "clear_fault"
        if state.endswith("_decision"):
            return "confirm"
        if state.endswith("_reveal"):
            return "reveal"
        return "paid" if state == "payout" else None

    def waiting_action(self, allowed: tuple[str, ...]) -> tuple[str, str] | None:
        """(action, reason) for the state's ``step_action`` when it is not in ``allowed``; else None."""
        action = self.step_action()
        if action is None or action in allowed:
            return None
        return action, self.refusal(action)[0]

    def refusal(self, action: str) -> tuple[str, str]:
        """(why, panel text) for ``action`` refused now by the state of the round or the table (not by a role):
        ``why`` in words for the record (``PressRefused.reason``) and a screen, the text for the panel."""
        data, state = self.round, self.state  # type: ignore[attr-defined]
        text = f"Not now: {action}"
        if action in TABLE_ACTIONS:
            return self._table_refusal(action), text  # type: ignore[attr-defined]
        if self._held_for_acknowledgement() and action != "acknowledge":  # type: ignore[attr-defined]
            return ("the round waits for a supervisor to acknowledge past-posting",
                    "Past-posting: supervisor to acknowledge")
        if self._querying:  # type: ignore[attr-defined]
            return "waiting for the shoe to say what it last dispensed", text
        if self._verifying:  # type: ignore[attr-defined]
            return "waiting for the reading of the spots after the restart", text
        if action == "open_betting" and state in BETWEEN_ROUNDS and (locks := self.opening_locks()):  # type: ignore[attr-defined]
            lock = locks[0]
            why = ("the journal store is damaged (JournalDamaged): restore it" if lock.name == "journal_damaged"
                   else f"the table is locked: {lock.name} ({lock.reason})")
            return why, lock.text
        if action == "no_more_bets" and state == "betting" and data is not None:
            if not data.shuffled:
                return "waiting for the shoe's shuffle and card count", text
            if not data.layout_read:
                return "waiting for the bet sensors' reading of the layout", text
        if action == "clear_fault" and state == "fault":
            return self._fault_refusal(), text
        unmet = self.machine.unmet(self, action)  # type: ignore[attr-defined]
        if unmet in UNMET:
            return UNMET[unmet], text
        return f"{action} not allowed in {state}", text

    def _fault_refusal(self) -> str:
        """Why ``clear_fault`` is not allowed in the fault state now (the conditions of ``round_actions``)."""
        if not all(f.resumable for f in self.faults):  # type: ignore[attr-defined]
            return "this fault cannot be cleared: only a void ends the round"
        missing = self._needed_devices() - self.devices_ready  # type: ignore[attr-defined]
        return f"waiting for the devices: {', '.join(sorted(missing))}"
