"""The round's state diagram, drawn from the round's graph itself (``controller.round.graph``) as Mermaid text.

    python -m controller.round.diagram [--check]

writes docs/round-states.md (or, with ``--check``, exits 1 when the committed page differs from the machine).
The graph is the ``transitions`` machine's own: every state and every trigger of
``controller.round.graph._transitions``,
rendered by ``transitions.extensions.GraphMachine`` with its Mermaid engine (no Graphviz needed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

from transitions.extensions import GraphMachine

from controller.round.graph import STATES, _transitions

PAGE = Path(__file__).resolve().parents[2] / "docs" / "round-states.md"

INTRO = """# Round states

Generated from `controller/round/graph.py` by `python -m controller.round.diagram`; a test fails when this page and
the machine differ. Every state and trigger of the round machine is drawn; the rules that choose between
triggers (which seats are valid, which bets are irregular, whether a fault may be cleared) are in the handlers
of the rule areas of `controller/round/` and in docs/architecture.md.

- `idle`: no round yet since the start; `closed`: the last round was settled; `voided`: the last round was
  voided (every wager returned). Each allows `open_betting` unless a lock keeps the round from opening
  (condition `table_open`, `controller/round/table_locks.py`): the journal store found damaged
  (`controller/journal/check.py`), a supervisor's `disable_table` (test rounds still open), test mode (only test
  rounds open).
- The table's locks and test mode: `disable_table` and `enable_table` in every state (a round in progress goes
  on and settles), `enter_test_mode` and `leave_test_mode` between rounds, `leave_test_mode` also during a test
  round (once: conditions `round_open`, unless `leaving_test_mode`), test mode then left when that round ends;
  internal transitions, the state is not left.
- `betting` (betting open) -> `locking` ("no more bets": the spots are read; every valid seat's wagers are
  locked at once) -> `wagers_held` (a seat's wagers are invalid: take chips away from it and press
  `no_more_bets` again, or `exclude` the seats named; nothing else may change) or `dealing_cross` (bets locked;
  the five-card stack) or `closed` (`no_play`: nobody wagered; nothing dealt) -> `dealing_players` (the
  two-card stacks, clockwise) -> for each of across, down and middle: `*_decision` -> `*_reading` (`confirm`:
  the decision spots are read) -> `*_reveal` -> `settlement` -> `closed`; `nothing_in_action` goes from a
  reading straight to `settlement` when every seat has folded and no five-card bonus remains.
- The payout check (condition `payout_check`: `payout: {check: true}` in table.yaml): `settled` goes to
  `payout` instead of `closed`; seat by seat from the dealer's right (NY 5324.39(e)(9), PA 674a.11(h)) the
  dealer pays and presses `paid` -> `payout_reading` (the seat's spots are read) -> `mispaid` back to `payout`
  (a difference, shown with its spot and amount: correct it and press `paid` again, or a supervisor accepts
  it), `next_seat`, or `all_paid` -> `closed`. Chips may move meanwhile; a settled round is never voided.
- `fault`: from any state on a device fault, a link loss, a card-accounting mismatch or a restart of the
  service. `resume_<state>` is the supervisor's `clear_fault` returning the round to where it stopped; a fault
  from `settlement` or after it can only be cleared (a round dealt by hand waits at `settlement` for its cards,
  asked for again on the panel once the fault is cleared).
- `void_round` (a supervisor) ends the round with every wager of record returned, from every state of an open
  round before its settlement, whatever is pending; its condition `unsettled` is the one rule of voiding.
- A hole-card alert (`controller/round/alerts.py`) does not change the state: shown on the panel only while the
  supervisor key is turned, acknowledged by a supervisor's `acknowledge_alert`.
- Past-posting does not change the state: it holds every dealer action (and the dealing) until a supervisor
  presses `acknowledge` (or voids the round).
- Dealing by hand (NY 9 NYCRR 5324.39(d)(1), `controller/round/manual.py`): a supervisor's `deal_by_hand` /
  `deal_by_shoe` switch the table between rounds (`deal_by_hand` also in a fault between rounds); in a round
  dealt by hand the dealer's `confirm` places the cross (`cross_placed`) and each card (`card_placed`, then
  `hands_placed`), cards are entered as they are turned, and a supervisor's `hold_seat` takes a seat whose
  cards cannot be entered out of the settlement.

"""


def render() -> str:
    """The Mermaid ``stateDiagram-v2`` text of the round machine, initial state ``starting``."""

    model = SimpleNamespace()  # transitions gives it the state and the triggers
    GraphMachine(model=model, states=STATES, transitions=_transitions(), initial="starting",
                 auto_transitions=False, graph_engine="mermaid", title="Criss-Cross Poker round")
    return model.get_graph().draw(None)


def page() -> str:
    """The whole Markdown page: the introduction and the diagram in a ``mermaid`` block."""
    return f"{INTRO}```mermaid\n{render().rstrip()}\n```\n"


def main(argv: list[str] | None = None) -> int:
    """Write the page, or with ``--check`` compare it; 0 when written or up to date, 1 when out of date."""
    parser = argparse.ArgumentParser(prog="python -m controller.round.diagram", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare the committed page with the machine")
    parser.add_argument("--output", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    text = page()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date: run python -m controller.round.diagram", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
