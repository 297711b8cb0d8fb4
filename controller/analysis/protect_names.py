"""The names of game protection, without NumPy (the command line parses ``--hole-carder`` before any of the
analysis is loaded): the kinds of card a hole-carder may see and the styles in which it may use one
(``controller.analysis.protect_models`` says what each style does)."""

from __future__ import annotations

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
