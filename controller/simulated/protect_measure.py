"""The detector's power and false alarms, measured on simulated play (``crisscross protect --measure``).

Honest sessions of every strategy (``HONEST``: ``controller.simulated.players``, the simplified strategies and
players erring at random in 10% and 20% of their decisions) are played side by side in this process for
``--rounds`` rounds (default 100), one seat each with a fresh shuffled deck every round, through the same
``protect.evidence`` and ``protect.Wealth`` as the detector, and counted as false alarms when flagged.

Hole-carders of every card and style (``controller.analysis.protect_models``) are played through the detector
itself (``protect.Detector``, as the service and ``crisscross protect`` run it) until flagged or
``--max-rounds`` rounds played, in each ``Setting``: continuous play, and a 3-round break every 10 or 20
rounds, with and without a seat move (the dealer rating the player, as ``SeatRating`` records say); the rounds
to flag count rounds played. Beside each, the bound (``controller.simulated.protect_bound``): the expected
rounds of the best test that knows the style, at the same false-alarm level. Reproducible with ``--seed``
(each job has its own seed, so the figures do not depend on ``--workers``).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass, replace

import numpy as np

from controller.analysis.protect import HYPOTHESES, Detector, RoundSeen, Wealth, evidence
from controller.analysis.protect_names import HOLE_CARDS, STYLES
from controller.analysis.protect_tables import ProtectTables
from controller.simulated import players
from controller.simulated.player_spec import PlayerSpec
from controller.simulated.protect_bound import Bound, bound
from controller.simulated.roaming import Roamer
from controller.analysis.workers import START_METHOD, worker_pool

HONEST = ("optimal", "never_fold", "always_1x", "pair_3x", "across_fold_rule", "card", "erring:0.1", "erring:0.2")
CURVE = (100, 400)  # the share of hole-carders flagged within these rounds played


@dataclass
class Outcome:
    """Sessions of one kind of player: ``sessions`` played, ``flagged_at[i]`` the round (1-based) at which
    session i was flagged (``inf`` if never within ``rounds``), and the card pointed at when flagged."""

    player: str
    sessions: int
    rounds: int
    flagged_at: np.ndarray
    pointed: dict[str, int]

    @property
    def flagged(self) -> int:
        """Sessions flagged."""
        return int(np.isfinite(self.flagged_at).sum())

    def percentile(self, q: float) -> float:
        """The q-th percentile of the rounds to flag (``inf`` when more than 100 - q% were never flagged)."""
        return float(np.percentile(self.flagged_at, q, method="inverted_cdf"))


def play(tables: ProtectTables, player: str, sessions: int, rounds: int, rng: np.random.Generator) -> Outcome:
    """Play ``sessions`` sessions of the honest strategy ``player`` (``NAME[:P]``) for ``rounds`` rounds each;
    ``flagged_at``: the round at which each was flagged (a false alarm), ``inf`` if never."""
    name, _, rate = player.partition(":")
    probability = float(rate) if rate else 0.0
    wealth = Wealth(sessions)
    flagged_at = np.full(sessions, np.inf)
    pointed = np.zeros(sessions, dtype=np.int64)
    for number in range(1, rounds + 1):
        hole, across, down, middle = players.deal(rng, sessions)
        bets = players.play_decisions(
            lambda step, x, y: players.honest(name, tables, step, hole, across, down, x, y, rng, probability), sessions)
        wealth.add(evidence(tables, hole, np.concatenate([across, down, middle[:, None]], 1), bets))
        now = wealth.flagged & ~np.isfinite(flagged_at)
        flagged_at[now] = number
        pointed[now] = wealth.pointed()[0][now]
    counts = {h: int(((pointed == i) & np.isfinite(flagged_at)).sum()) for i, h in enumerate(HYPOTHESES)}
    return Outcome(player, sessions, rounds, flagged_at, counts)


@dataclass(frozen=True)
class Setting:
    """How hole-carders come and go: a 3-round break (``player_spec.BREAK_ROUNDS``) after every ``breaks`` rounds played
    (0: continuous play), coming back at another seat when ``moves``; ``rated``: the dealer has the player's id."""

    breaks: int = 0
    moves: bool = False
    rated: bool = True

    @property
    def label(self) -> str:
        """``continuous``, ``breaks every N``, ``... and a seat move`` (``unrated`` when so)."""
        if not self.breaks:
            return "continuous"
        text = f"breaks every {self.breaks}" + (", moves" if self.moves else "")
        return text + ("" if self.rated else ", unrated")


SETTINGS = (Setting(), Setting(10), Setting(20), Setting(10, True), Setting(20, True))


def play_through_detector(tables: ProtectTables, card: str, style: str, probability: float, sessions: int,
                          max_rounds: int, rng: np.random.Generator, setting: Setting = Setting()) -> Outcome:
    """``sessions`` hole-carders seeing ``card`` (with ``probability`` a round) and using it in ``style``, played
    side by side through one ``Detector`` (each at seats of its own: ``2i + 1``, and ``2i + 2`` for its moves),
    taking the breaks and moves of ``setting`` as the simulated table's hole-carders take them
    (``controller.simulated.roaming.Roamer``), the dealer's rating actions handed to the detector as a dealer
    gives them; until flagged or ``max_rounds`` rounds played. ``flagged_at``: rounds played (breaks left out)
    when flagged."""
    detector = Detector(tables, keep=0)
    specs = [PlayerSpec(2 * i + 1, card, probability, max(setting.breaks, 1), setting.moves, setting.rated, style)
             for i in range(sessions)]
    # continuous play: a roamer that never takes its break (it would come after max_rounds)
    movers = [Roamer(spec if setting.breaks else replace(spec, breaks=max_rounds + 1),
                     spec.seat + 1 if setting.moves else None) for spec in specs]
    index = {spec.player: i for i, spec in enumerate(specs)}
    flagged_at = np.full(sessions, np.inf)
    pointed = np.zeros(sessions, dtype=np.int64)
    live = set(range(sessions))
    number = 0
    while live:
        number += 1
        who = []
        for i in sorted(live):
            actions, plays, _ = movers[i].next_round()
            for action, seat, player in actions:
                detector.rate(action, seat, player)
            if plays:
                who.append(i)
        n = len(who)
        hole, across, down, middle = players.deal(rng, n)
        seen = players.seen_cards(card, across, down, middle, probability, rng)
        bets = players.play_decisions(lambda step, x, y: players.hole_carder(
            card, tables, step, hole, across, down, middle, seen, x, y, style), n)
        cross = np.concatenate([across, down, middle[:, None]], 1)
        seen_rounds = [RoundSeen(number, movers[w].seat, 100, (int(hole[j, 0]), int(hole[j, 1])),
                                 tuple(int(c) for c in cross[j]), tuple(int(b) for b in bets[j]))
                       for j, w in enumerate(who)]
        by_seat = {movers[w].seat: w for w in who}
        for report in detector.add(seen_rounds, number):
            i = index[report.player] if report.player else by_seat[report.seat]
            if np.isfinite(flagged_at[i]):
                continue  # an unrated mover's earlier evidence, flagged late: its first flag counts
            flagged_at[i], pointed[i] = movers[i].played, HYPOTHESES.index(report.card)
            live.discard(i)
        live -= {i for i in who if movers[i].played >= max_rounds}
    name = f"{card}:{style}:{probability:g}" + ("" if not setting.breaks else f" ({setting.label})")
    counts = {h: int(((pointed == i) & np.isfinite(flagged_at)).sum()) for i, h in enumerate(HYPOTHESES)}
    return Outcome(name, sessions, max_rounds, flagged_at, counts)


def shown(value: float) -> str:
    """A number of rounds, or ``never``."""
    return "never" if math.isinf(value) else f"{value:.0f}"


def honest_report(outcomes: list[Outcome]) -> str:
    """The false alarms of honest play as a Markdown table."""
    lines = ["| honest strategy | sessions | rounds per session | flagged | per 10,000 |", "|---|---|---|---|---|"]
    for o in outcomes:
        lines.append(f"| {o.player} | {o.sessions:,} | {o.rounds} | {o.flagged} | {o.flagged / o.sessions * 1e4:.1f} |")
    return "\n".join(lines)


def cheat_report(bounds: dict[tuple[str, str], Bound], outcomes: dict[tuple[str, str, Setting], Outcome]) -> str:
    """The hole-carders' rounds to flag, per card, style and setting, beside the bound, as a Markdown table:
    the median and 90th percentile of rounds played to flag, the share flagged within ``CURVE`` rounds, the
    median against the bound and, for a break setting, against continuous play."""
    longest = max(o.rounds for o in outcomes.values())
    curve = sorted({min(n, longest) for n in CURVE})  # a shorter --max-rounds: "within" what was played
    lines = ["| card | style | bound (rounds) | play | median | 90th percentile | "
             f"flagged within {' / '.join(map(str, curve))} | median / bound | median / continuous |",
             "|---|---|---|---|---|---|---|---|---|"]

    def ratio(a: float, b: float) -> str:
        return "-" if math.isinf(a) or math.isinf(b) else f"{a / b:.2f}"

    for (card, style, setting), o in outcomes.items():
        b = bounds[(card, style)]
        median = o.percentile(50)
        continuous = outcomes[(card, style, Setting())].percentile(50)
        lines.append(f"| {card} | {style} | {b.rounds:.1f} (I = {b.information:.3f} +- {b.error:.3f}) | "
                     f"{setting.label} | {shown(median)} | {shown(o.percentile(90))} | "
                     f"{' / '.join(f'{(o.flagged_at <= n).mean():.0%}' for n in curve)} | "
                     f"{ratio(median, b.rounds)} | {'-' if not setting.breaks else ratio(median, continuous)} |")
    return "\n".join(lines)


_TABLES: ProtectTables | None = None  # the tables, inherited by forked worker processes


def _job(kind: str, job: tuple, seed: int) -> tuple[str, tuple, Outcome | Bound]:
    assert _TABLES is not None
    rng = np.random.default_rng(seed)
    if kind == "honest":
        player, sessions, rounds = job
        return kind, job, play(_TABLES, player, sessions, rounds, rng)
    if kind == "bound":
        card, style, deals = job
        return kind, job, bound(_TABLES, card, style, deals, rng)
    card, style, setting, sessions, max_rounds = job
    return kind, job, play_through_detector(_TABLES, card, style, 1.0, sessions, max_rounds, rng, setting)


def main(tables: ProtectTables, args: argparse.Namespace) -> int:
    """``crisscross protect --measure``: the bounds, the hole-carders in every setting and the honest
    strategies (``args.workers`` processes, forked; job i with seed ``args.seed + i``); prints both tables;
    exit 0."""
    global _TABLES
    _TABLES = tables
    started = time.monotonic()
    jobs: list[tuple[str, tuple]] = []
    for card in HOLE_CARDS:
        for style in STYLES:
            jobs.append(("bound", (card, style, args.bound_deals)))
            jobs += [("cheat", (card, style, setting, args.cheat_sessions, args.max_rounds)) for setting in SETTINGS]
    jobs += [("honest", (player, args.honest_sessions, args.rounds)) for player in HONEST]
    workers = args.workers or os.cpu_count() or 1
    if workers == 1 or START_METHOD != "fork":  # the workers inherit the tables built here
        results = [_job(kind, job, args.seed + i) for i, (kind, job) in enumerate(jobs)]
    else:
        with worker_pool(workers) as pool:
            futures = [pool.submit(_job, kind, job, args.seed + i) for i, (kind, job) in enumerate(jobs)]
            results = [future.result() for future in futures]
    bounds = {job[:2]: out for kind, job, out in results if kind == "bound"}
    cheats = {job[:3]: out for kind, job, out in results if kind == "cheat"}
    print(cheat_report(bounds, cheats))  # type: ignore[arg-type]
    print()
    print(honest_report([out for kind, _, out in results if kind == "honest"]))  # type: ignore[misc]
    print(f"\nseed {args.seed}; {time.monotonic() - started:.0f} s with {workers} process{'es' if workers > 1 else ''}")
    return 0
