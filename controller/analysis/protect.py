"""Game protection: spot the player who sees a hole card (hole-carding; domain.md "Game protection").

The test. A player's decisions use its own two cards and the community cards already turned
(NY 9 NYCRR 5324.39(e)(3)-(8)). Once a round is over every card is known. For an honest player, whatever its
strategy, good or bad, the decisions are independent of the cards still face down when they were made, so,
given the player's cards, the cards turned, the other seats' cards and the decisions taken, a card that was
face down at a decision is equally likely to be any of the cards the player could not see (every round is
dealt from a fresh shuffle: ``controller.round.machine`` shuffles at each round, so no earlier round says anything
about this one's cards). For each round and
each hypothesis ``h`` (the player saw the middle card, an across outside card or a down outside card before
the across decision) the detector computes

    e_h = L_h(the card actually dealt) / mean of L_h over the cards the player could not see,

where ``L_h(c)`` is the probability of the decisions taken by a player who knows ``c`` and plays the best
decisions knowing it (``protect_tables``), erring with probability ``ERROR`` (the decision then uniform). For
an outside card ``L`` is averaged over the line's two cards. Under honest play ``e_h`` has expectation exactly
1 whatever the strategy (the ratio's numerator is one uniform draw of its denominator's average), so within a
seat's session the products ``prod (1 - pi + pi e_h)`` for each ``h`` and each ``pi`` of ``FRACTIONS`` (the
share of rounds in which the card is seen) are nonnegative martingales of mean 1, and so is their average, the
session's evidence ``E``. By Ville's inequality an honest session ever reaches ``E >= 1 / alpha`` with
probability at most ``alpha``: the detector flags a seat at ``E >= 1 / ALPHA`` (``ALPHA`` = 10**-4), an exact
bound for sessions of any length. The card it points at is the ``h`` of the largest martingale, and the money
the house has lost is, over the session's rounds, the ante times the par sheet's gain of seeing that card
(``ProtectTables.exposed_values``) times the estimated share ``pi``.

A session is a seat's run of rounds with wagers, ended by ``gap`` rounds in a row without (default 3: ``controller.game.sessions``).
Nothing here reveals a card: a report names a kind of card, never a card; it is made after rounds closed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from controller.analysis.protect_tables import POPCOUNT, ProtectTables, pair_index
from controller.game.money import money
from controller.game.sessions import GAP, session_ended

HYPOTHESES = ("middle", "across", "down")
STEPS = ("across", "down", "middle")
FRACTIONS = (1.0, 0.5, 0.25)
ERROR = 0.01
ALPHA = 1e-4


def _likelihood(mask: np.ndarray, action: np.ndarray, n_actions: int, error: float) -> np.ndarray:
    """Probability of ``action`` (index, broadcast) for a player taking one of the best actions of ``mask``
    (uniformly among them) except with probability ``error`` (then any action); 1 where ``action`` is -1."""
    table = _LIKELIHOODS.get((n_actions, error))
    if table is None:  # [mask, action + 1]: column 0 is "not reached"
        masks = np.arange(256)[:, None]
        acts = np.arange(n_actions)[None, :]
        chosen = (1 - error) * ((masks >> acts) & 1) / np.maximum(POPCOUNT[masks], 1) + error / n_actions
        table = _LIKELIHOODS[(n_actions, error)] = np.concatenate([np.ones((256, 1)), chosen], 1)
    return table[mask, action + 1]


_LIKELIHOODS: dict[tuple[int, float], np.ndarray] = {}


def evidence(t: ProtectTables, hole: np.ndarray, cross: np.ndarray, decisions: np.ndarray,
             others: np.ndarray | None = None, error: float = ERROR) -> np.ndarray:
    """The e-values of N rounds of one seat each: ``hole`` ``(N, 2)``, ``cross`` ``(N, 5)`` (across, across,
    down, down, middle; card indexes), ``decisions`` ``(N, 3)`` (across, down, middle: the multiple, 0 for a
    fold, -1 when not reached), ``others`` ``(N, 52)`` bool (the other seats' cards of the round). Returns
    ``(N, 3)``, one column per ``HYPOTHESES``: each of mean exactly 1 under honest play (module docstring)."""
    n = len(hole)
    rows = np.arange(n)[:, None]
    cid, rest = t.locate(hole)
    cid2 = cid[:, None]
    act = t.action_index(decisions)  # [N, 3]
    a1, a2, a3 = act[:, :1], act[:, 1:2], act[:, 2:]
    x, y = decisions[:, 0].clip(0), decisions[:, 1].clip(0)
    xi = t.multiple_index(x)[:, None]
    k = len(t.actions)
    across, down, middle = cross[:, 0:2], cross[:, 2:4], cross[:, 4]
    pair = pair_index(rest[rows[:, 0], across[:, 0]], rest[rows[:, 0], across[:, 1]])[:, None]
    hidden1 = np.ones((n, 52), dtype=bool) if others is None else ~others.copy()
    hidden1[rows, hole] = False
    hidden2 = hidden1.copy()
    hidden2[rows, across] = False
    hidden3 = hidden2.copy()
    hidden3[rows, down] = False
    deck = np.broadcast_to(np.arange(52), (n, 52))

    def ratio(lik: np.ndarray, true_cards: np.ndarray, hidden: np.ndarray) -> np.ndarray:
        mean = (lik * hidden).sum(1) / hidden.sum(1)
        return np.take_along_axis(lik, true_cards, 1).mean(1) / mean

    # a fold ends the decisions: a later decision's action is then -1, whose likelihood is 1
    f1 = _likelihood(t.mid_x[cid2, rest], a1, k, error)
    f2 = _likelihood(t.mid_y[cid2, xi, rest, pair], np.where(a1 > 0, a2, -1), k, error)
    f3 = _likelihood(t.known_middle_mask(hole, across, down, deck, x, y), np.where(a2 > 0, a3, -1), k, error)
    e_middle = ratio(f1 * f2 * f3, middle[:, None], hidden3)
    e_across = ratio(_likelihood(t.acr_x[cid2, rest], a1, k, error), across, hidden1)
    d2 = _likelihood(t.dwn_y[cid2, xi, pair, rest], np.where(a1 > 0, a2, -1), k, error)
    e_down = ratio(_likelihood(t.dwn_x[cid2, rest], a1, k, error) * d2, down, hidden2)
    out = np.stack([e_middle, e_across, e_down], 1)
    return np.where(a1 < 0, 1.0, out)  # no decision recorded: no evidence


class Wealth:
    """The log of every martingale of N sessions side by side: ``log[N, hypothesis, fraction]``."""

    def __init__(self, n: int) -> None:
        self.log = np.zeros((n, len(HYPOTHESES), len(FRACTIONS)))
        self._pi = np.array(FRACTIONS)

    def add(self, e: np.ndarray, where: np.ndarray | None = None) -> None:
        """Multiply in one round's e-values ``e`` ``(N, 3)`` (only rows where ``where`` is True)."""
        step = np.log1p(self._pi * (e[:, :, None] - 1))
        self.log += step if where is None else step * where[:, None, None]

    @property
    def log10_evidence(self) -> np.ndarray:
        """log10 of each session's evidence ``E`` (the average of its martingales)."""
        flat = self.log.reshape(len(self.log), -1)
        top = flat.max(1)
        return (top + np.log(np.exp(flat - top[:, None]).mean(1))) / math.log(10)

    @property
    def flagged(self) -> np.ndarray:
        """Sessions whose evidence reached ``1 / ALPHA``."""
        return self.log10_evidence >= -math.log10(ALPHA)

    def pointed(self) -> tuple[np.ndarray, np.ndarray]:
        """The hypothesis index and the share ``pi`` of each session's largest martingale."""
        flat = self.log.reshape(len(self.log), -1).argmax(1)
        return flat // len(FRACTIONS), self._pi[flat % len(FRACTIONS)]


@dataclass
class RoundSeen:
    """One seat's round as the detector reads it: cards as indexes, ``decisions`` (across, down, middle;
    multiple, 0 fold, -1 not reached), ``ante`` in minor units, ``others`` the other seats' cards."""

    round_no: int
    seat: int
    ante: int
    hole: tuple[int, int]
    cross: tuple[int, ...]
    decisions: tuple[int, int, int]
    others: frozenset[int] = frozenset()


@dataclass
class SessionReport:
    """One seat's session: rounds ``first``..``last`` (``rounds`` of them with wagers at the seat), the
    evidence ``log10_evidence`` (flagged at ``-log10(ALPHA)``), the round at which it was first flagged
    (None if never), the card it points at (``HYPOTHESES``), the share of rounds ``share`` in which it
    looks seen, and ``loss`` the house's estimated loss in minor units."""

    seat: int
    first: int
    last: int
    rounds: int = 0
    log10_evidence: float = 0.0
    flagged_at: int | None = None
    card: str = "middle"
    share: float = 1.0
    loss: int = 0
    _antes: list[int] = field(default_factory=list, repr=False)

    @property
    def flagged(self) -> bool:
        """True once the evidence reached the flagging level."""
        return self.flagged_at is not None

    def line(self) -> str:
        """One line of text for the offline report: the card pointed at and the loss only when flagged."""
        head = (f"seat {self.seat}: rounds {self.first}-{self.last} ({self.rounds} played): "
                f"evidence 10^{self.log10_evidence:.1f}")
        if not self.flagged:
            return f"{head}, not flagged"
        return (f"{head}, FLAGGED at round {self.flagged_at}: plays as if it saw the {_CARD_NAMES[self.card]} "
                f"(in ~{self.share:.0%} of rounds); house loss by the par sheet {money(self.loss)}")


_CARD_NAMES = {"middle": "middle card", "across": "across outside card", "down": "down outside card"}


class Detector:
    """Follows every seat's sessions round by round (``add``), flagging as evidence comes in.

    ``tables``: ``ProtectTables`` of the table's jurisdiction; ``gap``: rounds without wagers at a seat that end
    its session. ``add`` returns the reports that became flagged with that round (each session once)."""

    def __init__(self, tables: ProtectTables, gap: int = GAP) -> None:
        self.tables, self.gap = tables, gap
        self.sessions: dict[int, tuple[SessionReport, Wealth]] = {}
        self.finished: list[SessionReport] = []

    def add(self, rounds: Iterable[RoundSeen]) -> list[SessionReport]:
        """Count one round's seats (all of the same round number); returns the sessions newly flagged."""
        rounds = list(rounds)
        if not rounds:
            return []
        number = rounds[0].round_no
        for seat, (report, _) in list(self.sessions.items()):
            if session_ended(report.last, number, self.gap):
                self.finished.append(self.sessions.pop(seat)[0])
        t = self.tables
        others = np.zeros((len(rounds), 52), dtype=bool)
        for i, r in enumerate(rounds):
            others[i, list(r.others)] = True
        e = evidence(t, np.array([r.hole for r in rounds]), np.array([r.cross for r in rounds]),
                     np.array([r.decisions for r in rounds]), others)
        flagged = []
        exposed = t.exposed_values
        for i, r in enumerate(rounds):
            if r.seat not in self.sessions:
                self.sessions[r.seat] = (SessionReport(r.seat, number, number), Wealth(1))
            report, wealth = self.sessions[r.seat]
            wealth.add(e[i:i + 1])
            report.last, report.rounds = number, report.rounds + 1
            report._antes.append(r.ante)
            report.log10_evidence = float(wealth.log10_evidence[0])
            h, share = wealth.pointed()
            report.card, report.share = HYPOTHESES[int(h[0])], float(share[0])
            gain = exposed[report.card] - exposed["optimal"]
            report.loss = int(round(sum(report._antes) * gain * report.share))
            if report.flagged_at is None and wealth.flagged[0]:
                report.flagged_at = number
                flagged.append(report)
        return flagged

    def reports(self) -> list[SessionReport]:
        """Every session so far, finished ones first, by seat and first round."""
        return self.finished + sorted((r for r, _ in self.sessions.values()), key=lambda r: (r.seat, r.first))
