"""What a player who sees one community card before the across decision does, for every class of two-card hand.

Game protection (``controller.analysis.protect``) compares a seat's decisions with those of a player who knows
the middle card, an across outside card or a down outside card (hole-carding; domain.md "Game protection").
These tables hold, for each of the 169 suit-symmetry classes of two-card hand (``parsheet.hole_classes``) and
each card that may be seen, the set of decisions that maximise the expected value with that card known, as a
bit mask over the actions (bit 0 = fold, bit i = the i-th bet multiple). Sets, not single decisions: where
two decisions are worth exactly the same, a player may take either.

Per class, cards index the 50 cards left after the class's representative hand, pairs index their 1,225 pairs
in ``itertools.combinations`` order (as in the par sheet):

- ``mid_x[m]``: the across decision knowing the middle card ``m``; ``mid_y[i, m, a]``: the down decision after
  the i-th multiple at the across decision, knowing ``m`` and the across pair ``a`` (0 where ``a`` holds ``m``).
  Continuations are played knowing ``m`` (at the middle decision every card is then known).
- ``acr_x[c]``: the across decision knowing an across outside card ``c``; later decisions as usual.
- ``dwn_x[c]``: the across decision knowing a down outside card ``c``; ``dwn_y[i, a, c]``: the down decision
  knowing it (0 where ``a`` holds ``c``).
- ``hon_x``, ``hon_y[i, a]``: the par sheet's own across and down decisions (0 = fold, else the multiple).
- ``values``: the expected value per ante of the optimal strategy, and with the middle card, an across outside
  card, a down outside card seen (the par sheet's "one community card seen" figures, per class).

All values are compared as exact integers (sums of integer payoffs), so ties are exact. Built from the par
sheet's backward induction (``ParSheetEngine.solve``, ``line_classes``) in about a second per class; the whole
set is kept in the user's cache folder (``$XDG_CACHE_HOME/crisscross``), keyed by the pay tables' fingerprint.
"""

from __future__ import annotations

import logging

import os
from functools import lru_cache
from itertools import combinations
from pathlib import Path
from typing import TextIO

import numpy as np
from threadpoolctl import threadpool_limits

from controller.analysis.classes import BINOMIAL, N_CLASSES, class_table
from controller.analysis.parsheet import SCALE1, SCALE2, SCALE3, ParSheetEngine, hole_classes, payoffs
from controller.analysis.strategy import canonical, fingerprint
from controller.game.paytable import Jurisdiction
from controller.analysis.workers import worker_pool

log = logging.getLogger(__name__)

VERSION = 2  # of the tables and the engine that built them (controller.analysis.kernel): part of the cache file's name
N_PAIRS = 1225
P0, P1 = (np.array(side) for side in zip(*combinations(range(50), 2)))
#: INCIDENCE[pair, card] = 1 where the pair holds the card (cards and pairs of the 50 left).
INCIDENCE = np.zeros((N_PAIRS, 50))
INCIDENCE[np.arange(N_PAIRS), P0] = INCIDENCE[np.arange(N_PAIRS), P1] = 1
#: PAIR_VALID[pair, card]: the card is not in the pair.
PAIR_VALID = INCIDENCE == 0
CLASSES = [hole for hole, _ in hole_classes()]
CLASS_WEIGHTS = np.array([weight for _, weight in hole_classes()], dtype=np.float64)
REPS = np.array(CLASSES, dtype=np.int64)
#: LOWEST_BIT[v]: index of the lowest set bit of v (v > 0).
LOWEST_BIT = np.array([0] + [(v & -v).bit_length() - 1 for v in range(1, 256)], dtype=np.int64)
#: POPCOUNT[v]: set bits of v.
POPCOUNT = np.array([bin(v).count("1") for v in range(256)], dtype=np.int64)
FIELDS = ("mid_x", "mid_y", "acr_x", "dwn_x", "dwn_y", "hon_x", "hon_y", "values")


def best_mask(values: np.ndarray) -> np.ndarray:
    """Bit mask (uint8) of the actions (last axis, action i -> bit i) whose value equals the maximum."""
    actions = [values[..., i] for i in range(values.shape[-1])]  # a short last axis: one pass per action
    best = np.maximum.reduce(actions)
    mask = np.zeros(best.shape, dtype=np.uint8)
    for i, value in enumerate(actions):
        mask |= (value == best).astype(np.uint8) << i
    return mask


#: Tables shipped with the package (the shipped pay tables': tests/test_protect.py rebuilds classes of them).
PACKAGED_DIR = Path(__file__).resolve().parent / "protect_data"


def table_file_name(jurisdiction: Jurisdiction) -> str:
    """The file name of ``jurisdiction``'s tables: the layout's version and the pay tables' fingerprint."""
    return f"protect-v{VERSION}-{fingerprint(jurisdiction)}.npz"


def cache_dir() -> Path:
    """Where the built tables are kept: ``$XDG_CACHE_HOME/crisscross``, else ``~/.cache/crisscross``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "crisscross"


class ClassBuilder:
    """Builds one class's tables for one jurisdiction (see the module docstring)."""

    def __init__(self, jurisdiction: Jurisdiction) -> None:
        self.engine = ParSheetEngine(jurisdiction)
        self.multiples = tuple(jurisdiction.bet_multiples)

    def build(self, rep: tuple[int, int]) -> dict[str, np.ndarray]:
        """The tables of the class whose representative hand is ``rep`` (two card indexes)."""
        out = self._middle(rep)
        solution = self.engine.solve(rep)
        honest_value, out["hon_x"] = solution.across()
        out["hon_y"] = solution.choice_y.astype(np.int8)
        out.update(self._outside(solution))
        out["values"] = np.array([honest_value / SCALE1, out.pop("middle_value"), out.pop("across_value"),
                                  out.pop("down_value")])
        return out

    def _middle(self, rep: tuple[int, int]) -> dict[str, np.ndarray]:
        """Decisions knowing the middle card: each line's hand is then fixed by its pair, so the down pairs
        disjoint from an across pair are counted by class (1,081 of them for each valid (m, a))."""
        eng, mult = self.engine, self.multiples
        _, cls = eng.line_classes(rep)  # [pair, m]
        by_m = cls.T  # [m, pair]
        onehot = np.zeros((50, N_PAIRS, N_CLASSES))
        onehot[np.arange(50)[:, None], np.arange(N_PAIRS)[None, :], by_m] = PAIR_VALID.T
        by_card = np.einsum("pc,mpk->mck", INCIDENCE, onehot)  # [m, card, k]: pairs through the card
        count = onehot.sum(1)[:, None, :] - by_card[:, P0, :] - by_card[:, P1, :] + onehot  # [m, a, k]
        k_a, k_d = np.arange(N_CLASSES)[:, None], np.arange(N_CLASSES)[None, :]
        top = np.maximum(k_a, k_d)
        middle = np.maximum(mult[0] * eng.bet[top], mult[-1] * eng.bet[top])
        ev_y = np.empty((len(mult), 50, N_PAIRS, 1 + len(mult)))  # x 1081
        for i, x in enumerate(mult):
            ev_y[i, ..., 0] = -(2 + x) * 1081
            for j, y in enumerate(mult):
                payoff = eng.ante[k_a] + eng.ante[k_d] + x * eng.bet[k_a] + y * eng.bet[k_d] + middle
                v3 = np.maximum(payoff, -(2 + x + y))  # [class of a, class of d]
                ev_y[i, ..., j + 1] = np.einsum("mak,mak->ma", count, v3[by_m])
        valid = PAIR_VALID.T[None, :, :]  # [1, m, a]
        mid_y = np.where(valid, best_mask(ev_y), 0).astype(np.uint8)
        ev_x = np.empty((50, 1 + len(mult)))  # x 1081 x 1176
        ev_x[:, 0] = -2 * 1081 * 1176
        ev_x[:, 1:] = np.where(valid, ev_y.max(-1), 0).sum(-1).T
        return {"mid_x": best_mask(ev_x), "mid_y": mid_y,
                "middle_value": float(ev_x.max(-1).mean() / (1081 * 1176))}

    def _outside(self, solution) -> dict[str, np.ndarray]:
        """Decisions knowing an across outside card (the across decision only) or a down outside card (the
        across and down decisions), from the par sheet's values of each across pair and each (a, d)."""
        mult = self.multiples
        acr = np.empty((50, 1 + len(mult)))  # x SCALE2 x 49
        acr[:, 0] = -2 * SCALE2 * 49
        acr[:, 1:] = (solution.v2 @ INCIDENCE).T
        dwn_y = np.empty((len(mult), N_PAIRS, 50), dtype=np.uint8)
        dwn = np.empty((50, 1 + len(mult)))  # x SCALE3 x 47 x 1176
        dwn[:, 0] = -2 * SCALE3 * 47 * 1176
        for i, x in enumerate(mult):
            ev = np.empty((N_PAIRS, 50, 1 + len(mult)))
            ev[..., 0] = -(2 + x) * SCALE3 * 47
            for j, y in enumerate(mult):
                v3, _ = solution.per_xy[(x, y)]  # [a, d], 0 where d meets a
                ev[..., j + 1] = v3.astype(np.float64) @ INCIDENCE  # [a, c]: the 47 d holding c
            dwn_y[i] = np.where(PAIR_VALID, best_mask(ev), 0)
            dwn[:, i + 1] = np.where(PAIR_VALID, ev.max(-1), 0).sum(0)
        return {"acr_x": best_mask(acr), "dwn_x": best_mask(dwn), "dwn_y": dwn_y,
                "across_value": float(acr.max(-1).mean() / (SCALE2 * 49)),
                "down_value": float(dwn.max(-1).mean() / (SCALE3 * 47 * 1176))}


_BUILDER: ClassBuilder | None = None


def _build_in_worker(jurisdiction: Jurisdiction, rep: tuple[int, int]) -> dict[str, np.ndarray]:
    global _BUILDER
    if _BUILDER is None:
        threadpool_limits(1)
        _BUILDER = ClassBuilder(jurisdiction)
    return _BUILDER.build(rep)


class ProtectTables:
    """The tables of all 169 classes, stacked (first axis: the class's index in ``parsheet.hole_classes``),
    with the lookups that map real cards onto a class: ``CLASS_OF[c1, c2]`` and ``PERM_OF[c1, c2]`` (suit
    permutation) for every ordered pair of card indexes. ``multiples``: the bet multiples (action i >= 1 is
    ``multiples[i - 1]``)."""

    def __init__(self, jurisdiction: Jurisdiction, arrays: dict[str, np.ndarray]) -> None:
        self.jurisdiction = jurisdiction
        self.multiples = tuple(jurisdiction.bet_multiples)
        for name in FIELDS:
            setattr(self, name, arrays[name])
        self.classes = class_table(jurisdiction.wheel)
        self.class_of, self.perm_of = _lookups()
        self.ante, self.bet = payoffs(jurisdiction.ante), payoffs(jurisdiction.bet)
        self.actions = np.array((0, *self.multiples))  # action index -> multiple (0 = fold)

    @classmethod
    def load(cls, jurisdiction: Jurisdiction, workers: int | None = None, directory: Path | None = None,
             progress: TextIO | None = None) -> "ProtectTables":
        """The tables shipped with the package (``PACKAGED_DIR``) or from the cache, else built (``workers``
        processes, default one per CPU) and cached, saying so on ``progress``. A cache that cannot be written is not an error (the tables are then built
        again next time)."""
        name = table_file_name(jurisdiction)
        path = (directory or cache_dir()) / name
        for found in (PACKAGED_DIR / name, path):  # the shipped tables (New York's), else the user's cache
            if found.exists():
                with np.load(found) as data:
                    return cls(jurisdiction, {field: data[field] for field in FIELDS})
        if progress is not None:
            print(f"building the hole-card tables of {jurisdiction.code} once (a few minutes), kept in {path}",
                  file=progress, flush=True)
        arrays = build_all(jurisdiction, workers)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".part.npz")
            np.savez_compressed(partial, **arrays)
            partial.replace(path)
        except OSError as exc:  # not an error: the tables are built again next time
            log.warning("hole-card tables not kept in %s: %s", path, exc.strerror or exc)
        return cls(jurisdiction, arrays)

    @property
    def exposed_values(self) -> dict[str, float]:
        """Expected value per ante over all 1,326 hands: ``optimal`` and with ``middle``, ``across`` or
        ``down`` (an outside card of that line) seen before the across decision."""
        totals = CLASS_WEIGHTS @ self.values / CLASS_WEIGHTS.sum()
        return dict(zip(("optimal", "middle", "across", "down"), map(float, totals)))

    def lines_through(self, fixed: np.ndarray, middle: np.ndarray) -> np.ndarray:
        """Pay class of the lines made of four ``fixed`` cards ``(N, 4)`` and each candidate ``middle`` card
        ``(N, C)``, shape ``(N, C)``: the colexicographic index of each line is the fixed cards' terms, shifted
        by one place above the candidate, plus the candidate's (no sort of N x C hands). A candidate that is one
        of the fixed cards gets some class, to be masked out by the caller."""
        ordered = np.sort(fixed, axis=1)
        low = BINOMIAL[ordered, np.arange(1, 5)]  # each fixed card's term below the candidate: C(c, k + 1)
        high = BINOMIAL[ordered, np.arange(2, 6)]  # and above it: C(c, k + 2)
        before = np.concatenate([np.zeros((len(fixed), 1), dtype=np.int64), np.cumsum(low, 1)], 1)  # [N, 5]
        after = np.concatenate([np.cumsum(high[:, ::-1], 1)[:, ::-1], np.zeros((len(fixed), 1), dtype=np.int64)], 1)
        place = sum((ordered[:, k:k + 1] < middle).astype(np.int64) for k in range(4))  # [N, C]: fixed cards below
        index = (np.take_along_axis(before, place, 1) + BINOMIAL[middle, place + 1]
                 + np.take_along_axis(after, place, 1))
        return self.classes[np.minimum(index, len(self.classes) - 1)]

    def locate(self, hole: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For hands ``hole`` (shape ``(N, 2)``, card indexes): each one's class index ``(N,)`` and, for every
        card of the deck, its index among the 50 cards left of the class's representative ``(N, 52)``
        (clipped to 0..49 for the hand's own two cards, which are never a candidate)."""
        cid = self.class_of[hole[:, 0], hole[:, 1]]
        perm = self.perm_of[hole[:, 0], hole[:, 1]]  # [N, 4]
        deck = np.arange(52)
        mapped = np.take_along_axis(perm, np.broadcast_to(deck // 13, (len(hole), 52)), 1) * 13 + deck % 13
        reps = REPS[cid]  # [N, 2]
        index = mapped - (reps[:, :1] < mapped) - (reps[:, 1:] < mapped)
        return cid, np.clip(index, 0, 49)

    def multiple_index(self, multiple: np.ndarray) -> np.ndarray:
        """Index of each bet ``multiple`` in ``multiples`` (0 for a fold or a decision not reached)."""
        return np.maximum(np.searchsorted(self.multiples, multiple), 0).clip(0, len(self.multiples) - 1)

    def action_index(self, multiple: np.ndarray) -> np.ndarray:
        """Index of each decision (0 = fold, else the multiple) in ``actions``; -1 stays -1 (not reached)."""
        return np.where(multiple < 0, -1, np.searchsorted(self.actions, np.maximum(multiple, 0)))

    def known_middle_mask(self, hole: np.ndarray, across: np.ndarray, down: np.ndarray, middle: np.ndarray,
                          x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The best middle decisions (bit mask over ``actions``) with every card known: ``hole``, ``across``,
        ``down`` of shape ``(N, 2)``, candidate middle cards ``middle`` ``(N, C)``, the across and down
        multiples ``x``, ``y`` ``(N,)``. Shape ``(N, C)``."""
        k_a = self.lines_through(np.concatenate([hole, across], 1), middle)
        k_d = self.lines_through(np.concatenate([hole, down], 1), middle)
        x, y = x[:, None], y[:, None]
        base = self.ante[k_a] + self.ante[k_d] + x * self.bet[k_a] + y * self.bet[k_d]
        top = self.bet[np.maximum(k_a, k_d)]
        values = np.stack([-(2.0 + x + y) + 0 * base] + [base + z * top for z in self.multiples], -1)
        return best_mask(values)


def chosen(mask: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """The decision a player takes among the best ones of ``mask``: the smallest best bet, fold only when
    folding alone is best (the par sheet's tie rule). Returns multiples (0 = fold)."""
    bets = mask >> 1
    lowest = np.where(bets > 0, LOWEST_BIT[bets & 0xFF], -1)
    return np.where(lowest >= 0, actions[np.maximum(lowest, 0) + 1], 0)


def pair_index(i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Index of the pair of cards ``i``, ``j`` (indexes among the 50 left, any order) in ``combinations``."""
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    return lo * (99 - lo) // 2 + (hi - lo - 1)


def build_all(jurisdiction: Jurisdiction, workers: int | None = None) -> dict[str, np.ndarray]:
    """Every class's tables, stacked in ``hole_classes`` order."""
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        builder = ClassBuilder(jurisdiction)
        parts = [builder.build(rep) for rep in CLASSES]
    else:
        with worker_pool(workers) as pool:
            parts = list(pool.map(_build_in_worker, [jurisdiction] * len(CLASSES), CLASSES))
    return {name: np.stack([np.asarray(part[name]) for part in parts]) for name in FIELDS}


@lru_cache(maxsize=1)
def _lookups() -> tuple[np.ndarray, np.ndarray]:
    index = {rep: i for i, rep in enumerate(CLASSES)}
    class_of = np.full((52, 52), -1, dtype=np.int64)
    perm_of = np.zeros((52, 52, 4), dtype=np.int64)
    for c1 in range(52):
        for c2 in range(52):
            if c1 != c2:
                rep, perm = canonical((c1, c2))
                class_of[c1, c2], perm_of[c1, c2] = index[rep], perm
    return class_of, perm_of
