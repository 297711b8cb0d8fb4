"""The names and settings of game protection, without NumPy (the command line parses ``--hole-carder`` and the
detector's options before any of the analysis is loaded): the kinds of card a hole-carder may see, the styles in
which it may use one (``controller.analysis.protect_models`` says what each style does), and how long a
player's evidence is kept (``controller.analysis.protect``, "Whose evidence")."""

from __future__ import annotations

from dataclasses import dataclass

#: The card seen before the across decision: the middle card, an across or a down outside card.
HOLE_CARDS = ("middle", "across", "down")
#: How the card seen is used (``controller.analysis.protect_models``).
STYLES = ("best", "pairs", "rule")
#: The decisions (indexes into ``STEPS``: across, down, middle) a card of each kind can change in each style:
#: those made while it is still face down (``best``, ``rule``) or, for ``pairs``, those of a line that holds it.
DECISIONS = {
    "best": {"middle": (0, 1, 2), "across": (0,), "down": (0, 1)},
    "pairs": {"middle": (0, 1, 2), "across": (0,), "down": (1,)},
    "rule": {"middle": (0, 1, 2), "across": (0,), "down": (0, 1)},
}

#: Rounds in a row an unrated seat may sit out and keep its evidence (a player's break: the seat's session has
#: ended, by the sessions' gap, but the evidence goes on when play resumes within this many rounds).
BREAK = 20
#: Seconds a rated player's evidence is kept after their last round: their next session, at any seat, goes on
#: from it (seven days).
MEMORY_S = 7 * 24 * 3600


@dataclass(frozen=True)
class EvidenceKeeping:
    """How long the detector keeps a player's evidence: ``break_rounds`` an unrated seat may sit out
    (``--break``/``--protect-break``), ``memory_s`` seconds a rated player's is kept after their last round
    (``--memory-hours``/``--protect-memory-hours``)."""

    break_rounds: int = BREAK
    memory_s: float = MEMORY_S
