"""docs/round-states.md is the round machine's own graph (issue: "a test fails when the committed diagram is out
of date")."""

from __future__ import annotations

from controller.round import diagram as statediagram
from controller.round.graph import BETWEEN_ROUNDS, ROUND_STATES, STATES, _transitions


def test_committed_diagram_is_the_machines():
    assert statediagram.PAGE.read_text(encoding="utf-8") == statediagram.page(), \
        "docs/round-states.md is out of date: run python -m controller.round.diagram"


def test_check_mode_fails_on_a_stale_page(tmp_path):
    stale = tmp_path / "round-states.md"
    stale.write_text(statediagram.page().replace("no_more_bets", "no_more_bet"), encoding="utf-8")
    assert statediagram.main(["--check", "--output", str(stale)]) == 1
    assert statediagram.main(["--output", str(stale)]) == 0
    assert statediagram.main(["--check", "--output", str(stale)]) == 0


def test_every_transition_of_the_machine_is_drawn():
    """Each (source, trigger, dest) of the machine's table appears as an edge of the diagram."""
    edges: dict[tuple[str, str], set[str]] = {}
    for line in statediagram.render().splitlines():
        if "-->" in line and ":" in line:
            ends, _, triggers = line.partition(":")
            source, _, dest = (part.strip() for part in ends.partition("-->"))
            # an internal transition (dest None: the state is not left) is drawn as a loop marked [internal]
            edges[(source, dest)] = {t.strip().removesuffix(" [internal]") for t in triggers.split("|")}
    for transition in _transitions():
        sources = transition["source"] if isinstance(transition["source"], list) else [transition["source"]]
        for source in sources:
            dest = source if transition["dest"] is None else transition["dest"]
            assert transition["trigger"] in edges.get((source, dest), set()), transition


def test_the_issue_phases_are_states():
    """Betting open, bets locked, dealing the cross, dealing the players, each decision, each reveal,
    settlement, round closed, fault, voided: each is an explicit state."""
    for state in ("betting", "locking", "dealing_cross", "dealing_players", "across_decision", "across_reveal",
                  "down_decision", "down_reveal", "middle_decision", "middle_reveal", "settlement", "closed",
                  "fault", "voided"):
        assert state in STATES
    assert set(BETWEEN_ROUNDS) | set(ROUND_STATES) | {"starting", "fault"} == set(STATES)
