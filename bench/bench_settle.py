"""Benchmark: ``crisscross settle --lines`` against a plain settler with phevaluator, in the same run.

    python bench/bench_settle.py [--rounds 10000] [--seed 1] [--repeat 3] [--jurisdiction ny]

(needs the test extras: ``pip install -e '.[test]'`` brings phevaluator).

Generates ``--rounds`` rounds (seeded) in the input format of ``crisscross settle`` (docs/commands.md,
``controller.game.settlement.settle_round``): one to six seats, antes of 100 to 2,500 minor units, each decision
bet one to three times the ante or a fold (no later bet, NY 9 NYCRR 5324.39(e)(3)-(7)), a five-card bonus on
half the seats. Then, ``--repeat`` times, alternating:

- ``crisscross settle --lines FILE`` as a process of its own (``python -m controller``): wall time from its
  start to its exit, start-up included;
- the plain settler of this file, in this process (no start-up, nothing checked, nothing written): each line
  parsed with ``json.loads``, every seat's across and down hands and the round's five-card hand evaluated with
  ``phevaluator.evaluate_cards`` (a C perfect-hash evaluator), each wager paid from the jurisdiction's pay
  tables (NY 5324.39(e)(9), (f)), the net of each seat.

Checks that both give the same net for every seat of every round (exit 1, naming the first round that differs,
otherwise) and prints the rounds per second of each run (wall clock, and per CPU second: the process's user +
system time from ``wait4``, the plain settler's ``time.process_time``), the medians and their ratios (goal: wall
clock >= 0.5). On a loaded machine the CPU ratio is the steadier one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from phevaluator import evaluate_cards

from controller.cli.main import positive_int
from controller.game.cards import DECK
from controller.game.paytable import PAY_HANDS, load_jurisdiction

ROOT = Path(__file__).resolve().parents[1]
ANTES = (100, 500, 1000, 2500)
GOAL = 0.5


def generate(rounds: int, seed: int, jurisdiction: str) -> list[str]:
    """``rounds`` JSON lines of ``crisscross settle --lines`` input, the same for the same ``seed``."""
    rng = random.Random(seed)
    lines = []
    for _ in range(rounds):
        deck = list(DECK)
        rng.shuffle(deck)
        seats = sorted(rng.sample(range(1, 7), rng.randint(1, 6)))
        community = {"across": deck[0:2], "down": deck[2:4], "middle": deck[4]}
        entries = []
        for i, seat in enumerate(seats):
            ante = rng.choice(ANTES)
            wagers = {"ante_across": ante, "ante_down": ante}
            for decision in ("across", "down", "middle"):
                if rng.random() < 0.2:
                    break  # a fold: no later bet (NY 5324.39(e)(3)-(7))
                wagers[decision] = rng.randint(1, 3) * ante
            if rng.random() < 0.5:
                wagers["five_card_bonus"] = rng.choice(ANTES)
            entries.append({"seat": seat, "cards": deck[5 + 2 * i: 7 + 2 * i], "wagers": wagers})
        lines.append(json.dumps({"jurisdiction": jurisdiction, "community": community, "seats": entries}))
    return lines


# phevaluator's ranks: 1 (royal flush) to 7462 (the worst high card); the bounds of each category, best first
# (the Cactus Kev numbering it follows). A pair of rank index p (0 deuce .. 12 ace) has ranks
# 3326 + (12 - p) * 220 to 3545 + (12 - p) * 220: 220 kicker sets, C(12, 3), per pair.
_BOUNDS = ((1, "royal_flush"), (10, "straight_flush"), (166, "four_of_a_kind"), (322, "full_house"),
           (1599, "flush"), (1609, "straight"), (2467, "three_of_a_kind"), (3325, "two_pair"))


def pay_hand_of(rank: int) -> str | None:
    """The paying hand (``controller.game.paytable.PAY_HANDS``) of a phevaluator rank, None below a pair of 6s."""
    for bound, name in _BOUNDS:
        if rank <= bound:
            return name
    if rank <= 6185:
        pair = 12 - (rank - 3326) // 220
        if pair >= 9:
            return "pair_jacks_or_better"
        return "pair_6s_to_10s" if pair >= 4 else None
    return None


def plain_nets(lines: list[str], tables: dict[str, dict[str | None, int | str]]) -> list[dict[int, int]]:
    """Each round's net per seat, settled with phevaluator and the pay tables ``tables`` (name -> paying hand
    -> odds or ``"push"``; a hand without an entry loses)."""
    ante_pays, bet_pays, bonus_pays = tables["ante"], tables["bet"], tables["five_card_bonus"]

    def net(pays: dict, hand: str | None, amount: int) -> int:
        odds = pays.get(hand)
        return -amount if odds is None else 0 if odds == "push" else odds * amount

    out = []
    for line in lines:
        data = json.loads(line)
        community = data["community"]
        a1, a2 = community["across"]
        d1, d2 = community["down"]
        middle = community["middle"]
        board = pay_hand_of(evaluate_cards(a1, a2, d1, d2, middle))
        nets = {}
        for entry in data["seats"]:
            c1, c2 = entry["cards"]
            wagers = entry["wagers"]
            across_rank = evaluate_cards(c1, c2, a1, a2, middle)
            down_rank = evaluate_cards(c1, c2, d1, d2, middle)
            across, down = pay_hand_of(across_rank), pay_hand_of(down_rank)
            total = 0
            if "five_card_bonus" in wagers:
                total += net(bonus_pays, board, wagers["five_card_bonus"])
            if "middle" not in wagers:  # a fold somewhere: every wager but the bonus lost (NY (e)(3)-(7))
                total -= sum(amount for name, amount in wagers.items() if name != "five_card_bonus")
            else:
                ante = wagers["ante_across"]
                total += net(ante_pays, across, ante) + net(ante_pays, down, ante)
                total += net(bet_pays, across, wagers["across"]) + net(bet_pays, down, wagers["down"])
                # the middle bet: the odds of the higher-ranking winning hand; push if either pushes (NY (e)(9)(ii))
                results = [bet_pays.get(across), bet_pays.get(down)]
                wins = [(r, o) for r, o in zip((across_rank, down_rank), results) if o not in (None, "push")]
                if wins:
                    total += min(wins)[1] * wagers["middle"]
                elif "push" not in results:
                    total -= wagers["middle"]
            nets[entry["seat"]] = total
        out.append(nets)
    return out


def run_settle(path: Path) -> tuple[float, float, list[dict[int, int]]]:
    """Wall seconds and CPU seconds (user + system, ``wait4``) of ``crisscross settle --lines path`` as a
    process, and each round's net per seat."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        began = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "controller", "settle", "--lines", str(path)], cwd=ROOT,
                                stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - began
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"crisscross settle exited {proc.returncode}: {err.read().decode()[-500:]}")
        nets = [{s["seat"]: s["net"] for s in json.loads(line)["seats"]} for line in out.read().splitlines()]
    return seconds, usage.ru_utime + usage.ru_stime, nets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=positive_int, default=3)
    parser.add_argument("--jurisdiction", default="ny")
    args = parser.parse_args()
    jurisdiction = load_jurisdiction(args.jurisdiction)
    assert set(PAY_HANDS) == {name for _, name in _BOUNDS} | {"pair_6s_to_10s", "pair_jacks_or_better"}
    tables = {t.name: dict(t.pays) for t in (jurisdiction.ante, jurisdiction.bet, jurisdiction.five_card_bonus)}
    lines = generate(args.rounds, args.seed, args.jurisdiction)
    ours: list[tuple[float, float]] = []  # rounds per second: wall, CPU
    plain: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rounds.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        for attempt in range(args.repeat):
            seconds, cpu, nets = run_settle(path)
            ours.append((args.rounds / seconds, args.rounds / cpu))
            began, began_cpu = time.perf_counter(), time.process_time()
            expected = plain_nets(lines, tables)
            plain.append((args.rounds / (time.perf_counter() - began), args.rounds / (time.process_time() - began_cpu)))
            if len(nets) != len(expected):
                print(f"crisscross settle answered {len(nets)} rounds of {len(expected)}")
                return 1
            for number, (got, want) in enumerate(zip(nets, expected), start=1):
                if got != want:
                    print(f"round {number} (line {number}): crisscross settle nets {got}, the plain settler {want}")
                    return 1
            print(f"run {attempt + 1}: crisscross settle --lines {ours[-1][0]:,.0f} rounds/s ({ours[-1][1]:,.0f} per "
                  f"CPU second), plain settler {plain[-1][0]:,.0f} rounds/s ({plain[-1][1]:,.0f} per CPU second): "
                  f"ratio {ours[-1][0] / plain[-1][0]:.2f} (CPU {ours[-1][1] / plain[-1][1]:.2f})", flush=True)
    wall = statistics.median(o for o, _ in ours) / statistics.median(p for p, _ in plain)
    cpu = statistics.median(o for _, o in ours) / statistics.median(p for _, p in plain)
    print(f"{args.rounds:,} rounds, nets equal on every seat; medians: crisscross settle --lines "
          f"{statistics.median(o for o, _ in ours):,.0f} rounds/s (start-up included), plain settler "
          f"{statistics.median(p for p, _ in plain):,.0f} rounds/s: ratio {wall:.2f} (goal >= {GOAL}); "
          f"per CPU second: ratio {cpu:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
