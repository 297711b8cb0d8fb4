"""The round's transitions graph: its states and the one table of which trigger leads where, under which condition.

The graph is the one place a rule about which action is allowed lives: ``Round.allowed_actions`` asks it, the
handlers of each rule area fire its triggers. A ``transitions.Machine`` (``queued=True``, ``auto_transitions=False``),
drawn in docs/round-states.md by ``controller.round.diagram``. Sources: NY 9 NYCRR 5324.39, PA 58 Pa. Code 674a.11.
"""

from __future__ import annotations

from typing import Any

from transitions import Machine
from transitions.core import EventData

from controller.game.table import DECISIONS

#: The devices a round needs: the start-up self-check waits for each one's handshake.
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

#: Every state of the graph; ``starting`` (waiting for the devices' handshakes) is the initial one.
STATES: list[str] = ["starting", *BETWEEN_ROUNDS, *ROUND_STATES, "fault"]

#: States of a round whose settlement is recorded: its wagers are resolved, it can no longer be voided.
SETTLED: tuple[str, ...] = ("settlement", *PAYOUT_STATES)


class _Graph(Machine):
    """The round's ``transitions.Machine``, whose triggers from a state are collected once per state: the graph is
    built once and every input asks it (``may_void_round`` for the panel's lamps), where ``Machine.get_triggers``
    looks through every event each time. Adding a state or a transition forgets what was collected."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._triggers: dict[frozenset[str], list[str]] = {}
        #: per (state, trigger): the conditions of each of its transitions as (method name, target), or None where
        #: the library's own answer is taken (``_plan``)
        self._plans: dict[tuple[str, str], tuple[tuple[tuple[str, bool], ...], ...] | None] = {}
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
        ``trigger`` from the model's state, true at the first whose conditions hold, each condition a method of
        the model called without arguments and compared with its target (``_plan``: the graph's own transitions
        and conditions, read once per state and trigger). A machine or transition with preparation callbacks or
        exception handlers (none here), a condition that is not a method of the model, or arguments passed, get
        the library's own answer."""
        plan = self._plan(model, trigger) if not (args or kwargs) else None
        if plan is not None and not self.prepare_event and not self.on_exception:
            for conditions in plan:  # loops, not any/all over generators: asked 5 times a lamps update
                for name, target in conditions:
                    if not getattr(model, name)() == target:
                        break
                else:
                    return True
            return False
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

    def unmet(self, model: Any, trigger: str) -> tuple[str, bool] | None:
        """The first condition, ``(method name, target)``, that does not hold now of the first transition of
        ``trigger`` from the model's state (the graph's own conditions, ``_plan``), or None: no such transition,
        its conditions all hold, or the library answers for it. For the words of a refusal
        (``controller.round.actions``)."""
        plan = self._plan(model, trigger)
        for name, target in plan[0] if plan else ():
            if getattr(model, name)() != target:
                return name, target
        return None

    def _plan(self, model: Any, trigger: str) -> tuple[tuple[tuple[str, bool], ...], ...] | None:
        """The transitions of ``trigger`` from the model's state as the conditions of each, ``(method name,
        target)`` pairs (no transition: empty), kept per state and trigger; None when the library must answer:
        an unknown trigger, events sent as ``EventData``, a transition with preparation callbacks or to an unknown
        state, or a condition that is not a method of the model."""
        state = getattr(model, self.model_attribute)
        key = (state if type(state) is str else state.name if hasattr(state, "name") else state, trigger)
        kept = self._plans.get(key, self)  # the graph itself: none kept yet (a plan may be None)
        if kept is not self:
            return kept  # type: ignore[return-value]
        event = self.events.get(trigger)
        plan: tuple[tuple[tuple[str, bool], ...], ...] | None = None
        if event is not None and not self.send_event:
            found = event.transitions.get(key[0], ())  # ``get``: the event's defaultdict keeps no new entry
            plan = tuple(tuple((c.func, c.target) for c in t.conditions) for t in found)
            if any(t.prepare or (t.dest is not None and t.dest not in self.states) for t in found) or any(
                    not isinstance(name, str) or not callable(getattr(model, name, None))
                    for conditions in plan for name, _ in conditions):
                plan = None
        self._plans[key] = plan
        return plan

    def add_transition(self, *args: Any, **kwargs: Any) -> None:
        self._triggers.clear()
        self._plans.clear()
        super().add_transition(*args, **kwargs)

    def add_states(self, *args: Any, **kwargs: Any) -> None:
        self._triggers.clear()
        self._plans.clear()
        super().add_states(*args, **kwargs)

    def remove_transition(self, *args: Any, **kwargs: Any) -> None:
        self._triggers.clear()
        self._plans.clear()
        super().remove_transition(*args, **kwargs)


def _transitions() -> list[dict[str, Any]]:
    """The graph's transitions, one ``Machine.add_transition`` keyword set each (``trigger``, ``source``, ``dest``,
    ``conditions``/``unless``: methods of ``Round``): the one place a rule about which action is allowed lives."""
    table = [
        dict(trigger="self_check_passed", source="starting", dest="idle"),
        dict(trigger="restart", source=list(BETWEEN_ROUNDS), dest="starting"),
        # the one rule of the table's locks (controller.round.table_locks): no round opens while one keeps it, a
        # damaged journal store (controller.journal.check) and a supervisor's disable_table among them
        dict(trigger="open_betting", source=list(BETWEEN_ROUNDS), dest="betting", conditions="table_open"),
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
    # the table's locks and test mode (controller.round.table_locks; NY 9 NYCRR 5319.54(b), 5319.58): disabling
    # and enabling at any time (a round in progress goes on and settles), test mode entered and left between
    # rounds only, so that a round is wholly a test round or not: asked during a test round, it is left once that
    # round ends (once only); none changes the state (internal transitions)
    table += [
        dict(trigger="disable_table", source=STATES, dest=None, unless="table_disabled"),
        dict(trigger="enable_table", source=STATES, dest=None, conditions="table_disabled"),
        dict(trigger="enter_test_mode", source=list(BETWEEN_ROUNDS), dest=None, unless="in_test_mode"),
        dict(trigger="leave_test_mode", source=list(BETWEEN_ROUNDS), dest=None, conditions="in_test_mode"),
        dict(trigger="leave_test_mode", source=[*ROUND_STATES, "fault"], dest=None,
             conditions=["in_test_mode", "round_open"], unless="leaving_test_mode"),
    ]
    # a fault resumes the state it came from; settlement too: a round dealt by hand waits there for its cards to be
    # entered (controller.round.manual), and settled, it can only be cleared, never voided
    table += [dict(trigger=f"resume_{state}", source="fault", dest=state)
              for state in ("starting", *BETWEEN_ROUNDS, *ROUND_STATES)]
    return table
