"""The detector's power and false alarms, measured on simulated play (``crisscross protect --measure``).

Sessions are played side by side in this process (``controller.simulated.players``), one seat each, with a
fresh shuffled deck every round; each round's decisions go through the same ``protect.evidence`` and
``protect.Wealth`` as the offline and live detector. Honest sessions of every strategy are played for
``--rounds`` rounds (default 100) and counted as false alarms when flagged; hole-carder sessions (each kind,
seeing its card in every round and in half of the rounds) are played until flagged or ``--max-rounds``, and
the median and 90th percentile of the rounds to flag are printed. Reproducible with ``--seed`` (each kind of
player has its own seed, so the figures do not depend on ``--workers``).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from controller.analysis.protect import HYPOTHESES, Wealth, evidence
from controller.analysis.protect_tables import ProtectTables
from controller.simulated import players

HONEST = ("optimal", "never_fold", "always_1x", "pair_3x", "erring:0.2")
CHEATS = ("middle:1", "middle:0.5", "across:1", "across:0.5", "down:1", "down:0.5")
CURVE = (10, 20, 40, 100, 200)  # the share of hole-carders flagged within these rounds


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
    """Play ``sessions`` sessions of ``player`` (an honest strategy ``NAME[:P]`` or a hole-carder
    ``KIND:P``) for up to ``rounds`` rounds each (hole-carders stop once flagged)."""
    name, _, rate = player.partition(":")
    cheat = name in players.HOLE_CARDS
    probability = float(rate) if rate else (1.0 if cheat else 0.0)
    wealth = Wealth(sessions)
    flagged_at = np.full(sessions, np.inf)
    pointed = np.zeros(sessions, dtype=np.int64)
    live = np.arange(sessions)
    for number in range(1, rounds + 1):
        n = len(live)
        if not n:
            break
        deal = np.argsort(rng.random((n, 52)), axis=1)[:, :9]
        hole, across, down, middle = deal[:, 0:2], deal[:, 2:4], deal[:, 4:6], deal[:, 6]
        seen = players.seen_cards(name, across, down, middle, probability, rng) if cheat else None
        bets = np.full((n, 3), -1)
        x = y = np.zeros(n, dtype=np.int64)
        going = np.ones(n, dtype=bool)
        for i, step in enumerate(players.STEPS):
            if cheat:
                choice = players.hole_carder(name, tables, step, hole, across, down, middle, seen, x, y)
            else:
                choice = players.honest(name, tables, step, hole, across, down, x, y, rng, probability)
            bets[:, i] = np.where(going, choice, -1)
            going &= choice > 0
            x, y = (choice if i == 0 else x), (choice if i == 1 else y)
        cross = np.concatenate([across, down, middle[:, None]], 1)
        e = evidence(tables, hole, cross, bets)
        step_wealth = Wealth(n)
        step_wealth.log = wealth.log[live]
        step_wealth.add(e)
        wealth.log[live] = step_wealth.log
        now = step_wealth.flagged & ~np.isfinite(flagged_at[live])
        flagged_at[live[now]] = number
        pointed[live[now]] = step_wealth.pointed()[0][now]
        if cheat:
            live = live[~now]
    counts = {h: int(((pointed == i) & np.isfinite(flagged_at)).sum()) for i, h in enumerate(HYPOTHESES)}
    return Outcome(player, sessions, rounds, flagged_at, counts)


def report(outcomes: list[Outcome]) -> str:
    """The measured figures as a Markdown table."""
    lines = ["| player | sessions | rounds per session | flagged | median rounds to flag | 90th percentile | "
             f"flagged within {' / '.join(map(str, CURVE))} rounds | card pointed at (flagged sessions) |",
             "|---|---|---|---|---|---|---|---|"]
    for o in outcomes:
        shown = lambda v: "never" if math.isinf(v) else f"{v:.0f}"  # noqa: E731
        name, _, rate = o.player.partition(":")
        label = (f"hole-carder, {name}, sees it {float(rate):.0%} of rounds" if name in players.HOLE_CARDS
                 else f"honest, {o.player}")
        flagged = f"{o.flagged:,} ({o.flagged / o.sessions:.2%})"
        cards = ", ".join(f"{h} {n}" for h, n in o.pointed.items() if n)
        is_cheat = name in players.HOLE_CARDS
        lines.append(f"| {label} | {o.sessions:,} | {'up to ' if is_cheat else ''}{o.rounds} | {flagged} | "
                     f"{shown(o.percentile(50)) if is_cheat else '-'} | "
                     f"{shown(o.percentile(90)) if is_cheat else '-'} | "
                     f"{' / '.join(f'{(o.flagged_at <= n).mean():.0%}' for n in CURVE) if is_cheat else '-'} | "
                     f"{cards or '-'} |")
    return "\n".join(lines)


_TABLES: ProtectTables | None = None  # the tables, inherited by forked worker processes


def _play_job(player: str, sessions: int, rounds: int, seed: int) -> Outcome:
    assert _TABLES is not None
    return play(_TABLES, player, sessions, rounds, np.random.default_rng(seed))


def main(tables: ProtectTables, args: argparse.Namespace) -> int:
    """``crisscross protect --measure``: play every kind of player (``args.workers`` processes, forked; player
    i with seed ``args.seed + i``) and print the table; exit 0."""
    global _TABLES
    _TABLES = tables
    started = time.monotonic()
    jobs = [(p, args.honest_sessions, args.rounds) for p in HONEST] + [(p, args.cheat_sessions, args.max_rounds)
                                                                      for p in CHEATS]
    workers = args.workers or os.cpu_count() or 1
    if workers == 1 or "fork" not in multiprocessing.get_all_start_methods():
        outcomes = [_play_job(*job, args.seed + i) for i, job in enumerate(jobs)]
    else:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_play_job, *job, args.seed + i) for i, job in enumerate(jobs)]
            outcomes = [future.result() for future in futures]
    print(report(outcomes))
    print(f"\nseed {args.seed}; {time.monotonic() - started:.0f} s with {workers} processes")
    return 0
