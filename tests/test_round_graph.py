"""The graph's own answer to "may this trigger fire now" (``controller.round.graph._Graph._can_trigger``, asked at
every input for the panel's lamps) against the transitions library's (``transitions.Machine._can_trigger``, the
peer used as the oracle here): the same for every state, every trigger and any truth of the conditions, and it
follows a transition added to the graph after it was asked."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from transitions import Machine

from controller.round.graph import STATES
from controller.round.machine import Round
from tests.examples import examples
from tests.round_helpers import CONFIG, NY


def _condition_names(machine: Machine) -> list[str]:
    return sorted({condition.func for event in machine.events.values() for transitions in event.transitions.values()
                   for transition in transitions for condition in transition.conditions})


NAMES = _condition_names(Round(CONFIG, NY).machine)


def test_the_graph_has_conditions_to_vary():
    assert {"table_open", "payout_check", "unsettled"} <= set(NAMES)


@settings(max_examples=examples(200), deadline=None)
@given(state=st.sampled_from(STATES), truths=st.fixed_dictionaries({name: st.booleans() for name in NAMES}))
def test_every_trigger_s_answer_is_the_library_s(state, truths):
    model = Round(CONFIG, NY)
    for name, truth in truths.items():  # each condition as drawn, shadowing the model's method
        setattr(model, name, lambda truth=truth: truth)
    model.machine.set_state(state)
    for trigger in model.machine.events:
        ours = model.machine._can_trigger(model, trigger)
        assert ours == Machine._can_trigger(model.machine, model, trigger), (state, trigger, truths)
        assert getattr(model, f"may_{trigger}")() == ours


def test_a_transition_added_after_a_question_is_seen():
    model = Round(CONFIG, NY)
    model.machine.set_state("idle")
    assert not model.may_no_more_bets()
    model.machine.add_transition("no_more_bets", "idle", "locking")
    assert model.may_no_more_bets()
    model.machine.remove_transition("no_more_bets", "idle", "locking")
    assert not model.may_no_more_bets()
