"""The bound on how soon any test can flag a hole-carder whose strategy it knows, at the detector's false-alarm
level (``crisscross protect --measure``; docs/analysis.md, "Game protection").

The detector may assume nothing of an honest player but that its decisions do not depend on the cards it could
not see (``controller.analysis.protect``). Among all tests that keep that guarantee, the one that grows fastest
against a hole-carder of known style (``controller.analysis.protect_models``) multiplies, round by round, the
e-value ``e* = P(decisions | the card dealt) / mean over the hidden cards c of P(decisions | c)``, with ``P`` the
hole-carder's own strategy (for an outside card, averaged over the line's two cards): the likelihood ratio of
the card dealt given the decisions, which is the growth-optimal e-value for that null (its expected log is the
information the decisions carry about the hidden card). Its expected log per round ``I`` (nats) gives, by
Wald's identity, the expected rounds to reach ``1 / ALPHA``: ``ln(1 / ALPHA) / I`` (the overshoot at the
crossing left out, so a lower bound, slightly optimistic). Against "optimal honest play" alone the likelihood
ratio of a deterministic hole-carder is infinite at its first deviation: such a test flags in one round but
flags every honest player who plays another strategy too, so it does not keep the guarantee.

``I`` is an expectation over deals; each deal's ``log e*`` is exact (every hidden card put in place of the one
dealt, the decisions from the exact tables), and the mean over ``deals`` random deals carries a standard error,
printed beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from controller.analysis.protect import ALPHA
from controller.analysis.protect_models import DECISIONS, STEPS
from controller.analysis.protect_tables import ProtectTables
from controller.simulated import players


@dataclass(frozen=True)
class Bound:
    """``information``: the mean ``log e*`` per round (nats) over ``deals`` deals, ``error`` its standard error;
    ``rounds``: ``ln(1 / ALPHA) / information``, the expected rounds of the best test (module docstring)."""

    card: str
    style: str
    deals: int
    information: float
    error: float

    @property
    def rounds(self) -> float:
        """Expected rounds to flag at ``ALPHA`` of the best test that knows the style (``inf`` without
        information)."""
        return math.log(1 / ALPHA) / self.information if self.information > 0 else math.inf


def bound(tables: ProtectTables, card: str, style: str, deals: int, rng: np.random.Generator,
          chunk: int = 500) -> Bound:
    """The bound for a hole-carder seeing ``card`` in every round and using it in ``style``, over ``deals``
    random deals (``chunk`` at a time)."""
    logs = []
    for start in range(0, deals, chunk):
        logs.append(_log_e(tables, card, style, min(chunk, deals - start), rng))
    values = np.concatenate(logs)
    return Bound(card, style, deals, float(values.mean()), float(values.std(ddof=1) / math.sqrt(len(values))))


def _log_e(t: ProtectTables, card: str, style: str, n: int, rng: np.random.Generator) -> np.ndarray:
    hole, across, down, middle = players.deal(rng, n)
    seen = players.seen_cards(card, across, down, middle, 1.0, rng)
    decisions = players.play_decisions(
        lambda step, x, y: players.hole_carder(card, t, step, hole, across, down, middle, seen, x, y, style), n)
    # the cards the player could not see at its first decision the card may change, the true ones among them
    visible = {"middle": (hole, across, down), "across": (hole,), "down": (hole, across)}[card]
    hidden = np.ones((n, 52), dtype=bool)
    for cards in visible:
        hidden[np.arange(n)[:, None], cards] = False
    truth = {"middle": middle[:, None], "across": across, "down": down}[card]
    # P(decisions | c) for every card c: 1 when the hole-carder seeing c takes every decision it took
    same = np.ones((n, 52), dtype=bool)
    rows = np.repeat(np.arange(n), 52)
    candidates = np.tile(np.arange(52), n)
    xr, yr = decisions[rows, 0].clip(0), decisions[rows, 1].clip(0)
    for i in DECISIONS[style][card]:
        taken = decisions[:, i]
        reached = taken >= 0
        choice = players.hole_carder(card, t, STEPS[i], hole[rows], across[rows], down[rows], candidates,
                                     candidates, xr, yr, style).reshape(n, 52)
        same &= ~reached[:, None] | (choice == taken[:, None])
    p = same.astype(np.float64)
    numerator = np.take_along_axis(p, truth, 1).mean(1)
    denominator = (p * hidden).sum(1) / hidden.sum(1)
    return np.log(numerator / denominator)
