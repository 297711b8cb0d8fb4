"""How a hole-carder may use the card it sees: the styles of play the detector weighs (``controller.analysis.protect``)
and the simulated hole-carders play (``controller.simulated.players``), one rule each (domain.md "Game protection").

A decision is a bet as a multiple of the ante, or 0 to fold (NY 9 NYCRR 5324.39(e)(3)-(7)). The card seen is
the middle card, one of the two across outside cards or one of the two down outside cards (``HOLE_CARDS``), seen
before the across decision. Styles (``STYLES``; the names in ``protect_names``):

- ``best``: the best decisions knowing the card (``protect_tables``: the exact tables of each class of hand);
- ``pairs``: the optimal honest strategy, but the largest bet at a decision whose line holds the card seen
  when that card pairs one of the player's two cards (the middle card is in both lines: every decision; an
  across card: the across decision; a down card: the down decision);
- ``rule``: the ``pair_3x`` rule of a player who counts the card seen as shown: the largest bet whenever the
  player's cards, the cards turned and the card seen (still face down) hold a pair, else the optimal decision.

Functions work on many deals at once (NumPy arrays of card indexes into ``controller.game.cards.DECK``:
``hole`` ``(N, 2)``, the across and down outside cards ``(N, 2)`` each; ``x``, ``y`` the across and down
multiples bet, ``(N,)``).
"""

from __future__ import annotations

import numpy as np

from controller.analysis.protect_names import DECISIONS, HOLE_CARDS, STYLES
from controller.analysis.protect_tables import ProtectTables, pair_index

__all__ = ["DECISIONS", "HOLE_CARDS", "STEPS", "STYLES", "honest_of", "optimal", "paired", "predicted", "shown"]

STEPS = ("across", "down", "middle")


def optimal(t: ProtectTables, step: str, hole: np.ndarray, across: np.ndarray, down: np.ndarray,
            x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The par sheet's decision at ``step`` (``across``, ``down``, ``middle``); ``across``/``down`` are read
    only once turned, ``x``/``y`` are the across and down multiples already bet. Shape ``(N,)``."""
    cid, rest = t.locate(hole)
    if step == "across":
        return t.hon_x[cid].astype(np.int64)
    rows = np.arange(len(hole))
    if step == "down":
        pair = pair_index(rest[rows, across[:, 0]], rest[rows, across[:, 1]])
        return t.hon_y[cid, t.multiple_index(x), pair].astype(np.int64)
    seen = np.zeros((len(hole), 52), dtype=bool)
    for cards in (hole, across, down):
        seen[rows[:, None], cards] = True
    middle = np.broadcast_to(np.arange(52), seen.shape)
    k_a = np.where(seen, 0, t.lines_through(np.concatenate([hole, across], 1), middle))
    k_d = np.where(seen, 0, t.lines_through(np.concatenate([hole, down], 1), middle))
    unseen = ~seen
    base = ((t.ante[k_a] + t.ante[k_d] + x[:, None] * t.bet[k_a] + y[:, None] * t.bet[k_d]) * unseen).sum(1)
    mid = (t.bet[np.maximum(k_a, k_d)] * unseen).sum(1)
    z = np.where(mid > 0, t.multiples[-1], t.multiples[0])
    fold = -(2 + x + y) * unseen.sum(1)
    return np.where(fold > base + z * mid, 0, z)


def shown(step: int, hole: np.ndarray, across: np.ndarray, down: np.ndarray) -> np.ndarray:
    """The cards the player sees at decision ``step`` (index into ``STEPS``): its two and those turned."""
    return np.concatenate([hole, across, down][:step + 1], 1)


def paired(cards: np.ndarray) -> np.ndarray:
    """Whether each row of cards ``(N, K)`` holds two of one rank. Shape ``(N,)``."""
    ranks = np.sort(cards % 13, 1)
    return (ranks[:, 1:] == ranks[:, :-1]).any(1)


def predicted(style: str, t: ProtectTables, step: int, hole: np.ndarray, across: np.ndarray, down: np.ndarray,
              honest: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The decision at ``step`` of a ``pairs`` or ``rule`` hole-carder who saw each card of ``candidates``
    ``(N, C)``, the optimal decision being ``honest`` ``(N,)`` (module docstring). Shape ``(N, C)``."""
    largest = t.multiples[-1]
    if style == "pairs":
        hits = (candidates[:, :, None] % 13 == hole[:, None, :] % 13).any(-1)
    elif style == "rule":
        cards = shown(step, hole, across, down)
        hits = (candidates[:, :, None] % 13 == cards[:, None, :] % 13).any(-1) | paired(cards)[:, None]
    else:
        raise ValueError(f"unknown style {style!r}: expected pairs or rule")
    return np.where(hits, largest, honest[:, None])


def honest_of(style: str, t: ProtectTables, step: int, hole: np.ndarray, across: np.ndarray, down: np.ndarray,
              x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """What a hole-carder of ``style`` decides at ``step`` when its card tells it nothing (not seen, or turned):
    the optimal decision, or for ``rule`` the ``pair_3x`` rule (the largest bet with a pair shown)."""
    best = optimal(t, STEPS[step], hole, across, down, x, y)
    if style == "rule":
        return np.where(paired(shown(step, hole, across, down)), t.multiples[-1], best)
    return best
