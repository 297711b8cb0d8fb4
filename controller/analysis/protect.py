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

where ``L_h(c)`` is the probability of the decisions taken by a player who knows ``c`` and uses it in one of
the styles of ``protect_models`` (``best``: the best decisions knowing it, from ``protect_tables``; ``pairs``:
the optimal honest play but the largest bet when the card pairs one of the player's own; ``rule``: the
``pair_3x`` rule counting the card as shown), erring with probability ``ERROR`` (the decision then uniform): one
``e_h`` per style and card. For an outside card ``L`` is averaged over the line's two cards. Under honest play
``e_h`` has expectation exactly 1 whatever the strategy (the ratio's numerator is one uniform draw of its
denominator's average), so over a player's rounds the products ``prod (1 - pi + pi e_h)`` for each style and
``h`` and each ``pi`` of ``FRACTIONS`` (the share of rounds in which the card is seen) are nonnegative
martingales of mean 1, and so is their average, the
player's evidence ``E``. By Ville's inequality an honest player's evidence ever reaches ``E >= 1 / alpha`` with
probability at most ``alpha``: the detector flags a seat at ``E >= 1 / ALPHA`` (``ALPHA`` = 10**-4), an exact
bound for evidence of any length. The card it points at is the ``h`` of the largest martingale, and the money
the house has lost is, over the player's rounds, the ante times the par sheet's gain of seeing that card
(``ProtectTables.exposed_values``) times the estimated share ``pi``.

Whose evidence. The product may run over any rounds chosen without looking at their face-down cards, in round
order: each round's e-value has mean 1 given everything before it, so the product of a player's rounds is a
martingale however often the player pauses or moves. The evidence therefore belongs to the player, not to a
run of rounds at one seat:

- a rated player (the dealer attached a player's id to the seat: ``SeatRating``, ``controller.journal.sessions``)
  keeps one evidence across breaks, seat moves and sessions, for ``MEMORY_S`` after their last round (a
  later session of the same id, at any seat, multiplies on); unrated rounds played at a seat in the session
  open when the id is given are theirs too (the same person, rated late): the two pieces are multiplied, each
  martingale by its twin;
- an unrated seat keeps its evidence across a break of up to ``BREAK`` rounds without wagers (its session, by
  ``gap``, has ended; the evidence goes on), and ends it at a longer break or when the dealer ends the seat's
  session (``end_session``: the player left). An unrated player who moves seats cannot be followed: the
  evidence starts again at the new seat.

A seat's session (``gap`` rounds in a row without wagers end it, default 3: ``controller.game.sessions``) is
counted in the report (``EvidenceReport.sessions``).
Nothing here reveals a card: a report names a kind of card, never a card; it is made after rounds closed.
"""

from __future__ import annotations

import collections
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from controller.analysis.protect_names import BREAK, MEMORY_S
from controller.analysis.protect_models import DECISIONS, HOLE_CARDS, STEPS, STYLES, optimal, predicted
from controller.analysis.protect_tables import POPCOUNT, ProtectTables, pair_index
from controller.game.money import money
from controller.game.sessions import GAP, session_ended

log = logging.getLogger(__name__)

HYPOTHESES = HOLE_CARDS
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
    ``(N, len(STYLES) * 3)``, one column per style and card (``STYLES`` x ``HYPOTHESES``, the style's columns
    together): each of mean exactly 1 under honest play (module docstring)."""
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
    columns = [e_middle, e_across, e_down]
    # the other styles (protect_models): a decision is the style's for the card, or any with probability error
    reached = np.stack([act[:, 0] >= 0, (act[:, 0] > 0) & (act[:, 1] >= 0),
                        (act[:, 0] > 0) & (act[:, 1] > 0) & (act[:, 2] >= 0)], 1)
    honest = [optimal(t, step, hole, across, down, x, y) for step in STEPS]
    truth = {"middle": (middle[:, None], hidden3), "across": (across, hidden1), "down": (down, hidden2)}
    for style in STYLES[1:]:
        for h in HYPOTHESES:
            lik = np.ones((n, 52))
            for step in DECISIONS[style][h]:
                match = predicted(style, t, step, hole, across, down, honest[step], deck) == decisions[:, step, None]
                lik *= np.where(reached[:, step, None], (1 - error) * match + error / k, 1.0)
            columns.append(ratio(lik, *truth[h]))
    out = np.stack(columns, 1)
    return np.where(a1 < 0, 1.0, out)  # no decision recorded: no evidence


class Wealth:
    """The log of every martingale of N players side by side: ``log[N, style x card, fraction]``."""

    def __init__(self, n: int) -> None:
        self.log = np.zeros((n, len(STYLES) * len(HYPOTHESES), len(FRACTIONS)))
        self._pi = np.array(FRACTIONS)

    def add(self, e: np.ndarray, where: np.ndarray | None = None) -> None:
        """Multiply in one round's e-values ``e`` ``(N, len(STYLES) * 3)`` (``evidence``; only rows where
        ``where`` is True)."""
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
        """The card (index into ``HYPOTHESES``) and the share ``pi`` of each player's largest martingale."""
        flat = self.log.reshape(len(self.log), -1).argmax(1)
        return flat // len(FRACTIONS) % len(HYPOTHESES), self._pi[flat % len(FRACTIONS)]

    def pointed_style(self) -> np.ndarray:
        """The style (index into ``STYLES``) of each player's largest martingale."""
        return self.log.reshape(len(self.log), -1).argmax(1) // len(FRACTIONS) // len(HYPOTHESES)


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
class EvidenceReport:
    """One player's evidence (module docstring, "Whose evidence"): rounds ``first``..``last`` (``rounds`` of them with
    wagers), over ``sessions`` seat sessions at ``seats`` (in order; ``seat`` the last), the player's id when
    rated (``""``: followed by the seat only), the evidence ``log10_evidence`` (flagged at ``-log10(ALPHA)``), the
    round at which it was first flagged (None if never), the card it points at (``HYPOTHESES``), the share of
    rounds ``share`` in which it looks seen, and ``loss`` the house's estimated loss in minor units.
    ``last_time``: the last round's end (POSIX seconds; None when not given)."""

    seat: int
    first: int
    last: int
    rounds: int = 0
    log10_evidence: float = 0.0
    flagged_at: int | None = None
    card: str = "middle"
    share: float = 1.0
    loss: int = 0
    player: str = ""
    seats: list[int] = field(default_factory=list)
    sessions: int = 1
    last_time: float | None = None
    antes: int = field(default=0, repr=False)

    @property
    def flagged(self) -> bool:
        """True once the evidence reached the flagging level."""
        return self.flagged_at is not None

    def line(self) -> str:
        """One line of text for the offline report: the card pointed at and the loss only when flagged."""
        who = f"player {self.player}" if self.player else "unrated"
        where = f"seat {self.seat}" if len(set(self.seats)) <= 1 else f"seats {'-'.join(map(str, self.seats))}"
        sessions = f", {self.sessions} sessions" if self.sessions > 1 else ""
        rounds = f"round {self.first}" if self.first == self.last else f"rounds {self.first}-{self.last}"
        head = (f"{where} ({who}): {rounds} ({self.rounds} played{sessions}): "
                f"evidence 10^{self.log10_evidence + 0.0:.1f}".replace("10^-0.0", "10^0.0"))
        if not self.flagged:
            return f"{head}, not flagged"
        return (f"{head}, FLAGGED at round {self.flagged_at}: plays as if it saw the {_CARD_NAMES[self.card]} "
                f"(in ~{self.share:.0%} of rounds); house loss by the par sheet {money(self.loss)}")


_CARD_NAMES = {"middle": "middle card", "across": "across outside card", "down": "down outside card"}

#: Rated players whose evidence is kept at most; past it the one idle longest is let go (logged).
MAX_PLAYERS = 10_000


@dataclass
class _Holder:
    report: EvidenceReport
    wealth: Wealth

    def merge(self, other: "_Holder") -> None:
        """Multiply in ``other``'s evidence (each martingale by its twin: their rounds are disjoint)."""
        mine, theirs = self.report, other.report
        self.wealth.log += other.wealth.log
        mine.first, mine.rounds = min(mine.first, theirs.first), mine.rounds + theirs.rounds
        if theirs.last > mine.last:
            mine.seat, mine.last, mine.last_time = theirs.seat, theirs.last, theirs.last_time
        mine.antes += theirs.antes
        mine.sessions += theirs.sessions
        mine.seats = [*mine.seats, *(s for s in theirs.seats if not mine.seats or s != mine.seats[-1])]
        if theirs.flagged_at is not None:
            mine.flagged_at = min(mine.flagged_at or theirs.flagged_at, theirs.flagged_at)


class Detector:
    """Follows every player's evidence round by round (``add``) and the dealer's rating actions (``rate``), given
    in journal order, flagging as evidence comes in (module docstring, "Whose evidence").

    ``tables``: ``ProtectTables`` of the table's jurisdiction; ``gap``: rounds without wagers that end a seat's
    session (``controller.game.sessions``: counted in ``EvidenceReport.sessions``); ``break_rounds``: the longest
    break an unrated seat's evidence survives; ``memory_s``: how long a rated player's evidence is kept after their last
    round; ``keep``: finished reports kept (None: all, for a scan of a journal). ``add`` returns the reports that
    became flagged with that round (each player's evidence once), and those of flagged players back after more
    than ``break_rounds`` rounds without play (a new visit: surveillance is told again)."""

    def __init__(self, tables: ProtectTables, gap: int = GAP, *, break_rounds: int = BREAK,
                 memory_s: float = MEMORY_S, keep: int | None = None) -> None:
        if break_rounds < gap:
            raise ValueError(f"the break an unrated seat's evidence survives ({break_rounds} rounds) is shorter "
                             f"than the gap that ends a session ({gap})")
        self.tables, self.gap, self.break_rounds, self.memory_s = tables, gap, break_rounds, memory_s
        self.by_seat: dict[int, _Holder] = {}  # unrated play, by seat
        self.by_player: collections.OrderedDict[str, _Holder] = collections.OrderedDict()  # least recent first
        self.seat_player: dict[int, str] = {}  # the id attached to each seat by the dealer
        self.finished: collections.deque[EvidenceReport] = collections.deque(maxlen=keep)
        self.round_no = 0

    def rate(self, action: str, seat: int, player: str = "") -> None:
        """A rating action (``controller.round.inputs.RATING_ACTIONS``, as ``SessionTracker.rate`` reads it):
        ``rate_seat`` attaches ``player`` to ``seat`` (leaving any other seat: the player moved), and the
        evidence of unrated play at the seat in a session still open becomes theirs (the same person, rated
        late); ``unrate_seat`` takes the id off the seat; ``end_session`` says the player left: the seat's
        unrated evidence ends (a rated player's is kept, ``memory_s``). Raises ``ValueError`` for another
        action or a ``rate_seat`` without a player."""
        if action not in ("rate_seat", "unrate_seat", "end_session"):
            raise ValueError(f"unknown rating action {action!r}")
        if action == "rate_seat" and not player:
            raise ValueError(f"rate_seat of seat {seat} names no player")
        previous = self.seat_player.pop(seat, "")
        unrated = self.by_seat.pop(seat, None)
        if action != "rate_seat":
            if unrated is not None and action == "end_session":
                self._finish(unrated)
            elif unrated is not None:
                self.by_seat[seat] = unrated
            return
        self.seat_player = {s: p for s, p in self.seat_player.items() if p != player}
        self.seat_player[seat] = player
        if unrated is None:
            return
        if previous or session_ended(unrated.report.last, self.round_no + 1, self.gap):
            self._finish(unrated)  # someone else's, or a session over: not this player's
            return
        holder = self.by_player.get(player)
        if holder is None:
            unrated.report.player = player
            self.by_player[player] = unrated
        else:
            holder.merge(unrated)
            self._read(holder)  # flagged, if it now is, at the player's next round
        self.by_player.move_to_end(player)

    def add(self, rounds: Iterable[RoundSeen], round_no: int | None = None,
            time: float | None = None) -> list[EvidenceReport]:
        """Count one round's seats (all of round ``round_no``, which defaults to theirs; ``time`` its end, POSIX
        seconds, for ``memory_s``); returns the evidence newly flagged. A round with no seat read (``rounds``
        empty) still counts for the breaks when its number is given."""
        rounds = list(rounds)
        number = round_no if round_no is not None else (rounds[0].round_no if rounds else None)
        if number is None:
            return []
        self.round_no = number
        self._expire(number, time)
        if not rounds:
            return []
        t = self.tables
        others = np.zeros((len(rounds), 52), dtype=bool)
        for i, r in enumerate(rounds):
            others[i, list(r.others)] = True
        e = evidence(t, np.array([r.hole for r in rounds]), np.array([r.cross for r in rounds]),
                     np.array([r.decisions for r in rounds]), others)
        flagged = []
        for i, r in enumerate(rounds):
            holder = self._holder(r.seat, number)
            report, wealth = holder.report, holder.wealth
            wealth.add(e[i:i + 1])
            if session_ended(report.last, number, self.gap) and report.rounds:
                report.sessions += 1
            back = report.flagged and number - report.last > self.break_rounds  # a flagged player's new visit
            if not report.seats or report.seats[-1] != r.seat:
                report.seats.append(r.seat)
            report.seat, report.last, report.rounds, report.last_time = r.seat, number, report.rounds + 1, time
            report.antes += r.ante
            self._read(holder)
            if report.flagged_at is None and wealth.flagged[0]:
                report.flagged_at = number
                flagged.append(report)
            elif back:
                flagged.append(report)
        return flagged

    def _read(self, holder: _Holder) -> None:
        """Bring ``holder``'s report up to its evidence: the evidence, the card and share pointed at, the loss."""
        report, wealth = holder.report, holder.wealth
        report.log10_evidence = float(wealth.log10_evidence[0])
        h, share = wealth.pointed()
        report.card, report.share = HYPOTHESES[int(h[0])], float(share[0])
        exposed = self.tables.exposed_values
        report.loss = int(round(report.antes * (exposed[report.card] - exposed["optimal"]) * report.share))

    def _holder(self, seat: int, number: int) -> _Holder:
        """The evidence a round at ``seat`` adds to: the rated player's, else the seat's (new when none)."""
        player = self.seat_player.get(seat, "")
        holder = self.by_player.get(player) if player else self.by_seat.get(seat)
        if holder is None:
            holder = _Holder(EvidenceReport(seat, number, number, player=player, seats=[]), Wealth(1))
            if player:
                self.by_player[player] = holder
                if len(self.by_player) > MAX_PLAYERS:
                    _, dropped = self.by_player.popitem(last=False)
                    log.warning("hole-card evidence of player %s (last round %d) let go: more than %d players kept",
                                dropped.report.player, dropped.report.last, MAX_PLAYERS)
                    self._finish(dropped)
            else:
                self.by_seat[seat] = holder
        if player:
            self.by_player.move_to_end(player)
        return holder

    def _expire(self, number: int, time: float | None) -> None:
        """End the unrated seats' evidence after a break longer than ``break_rounds``, and the rated players'
        after ``memory_s`` without a round."""
        for seat, holder in list(self.by_seat.items()):
            if number - holder.report.last > self.break_rounds:
                self._finish(self.by_seat.pop(seat))
        for player, holder in list(self.by_player.items()):  # least recent first: stop at the first one kept
            last = holder.report.last_time
            if time is None or last is None or time - last <= self.memory_s:
                break
            self._finish(self.by_player.pop(player))

    def _finish(self, holder: _Holder) -> None:
        if holder.report.rounds:
            self.finished.append(holder.report)

    def reports(self) -> list[EvidenceReport]:
        """Every player's evidence so far: the finished ones first, in the order they ended, then the ones going
        on, by first round."""
        going = [h.report for h in (*self.by_seat.values(), *self.by_player.values()) if h.report.rounds]
        return [*self.finished, *sorted(going, key=lambda r: (r.first, r.seat))]
