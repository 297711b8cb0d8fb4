"""Benchmark: the round machine's own work on the path from "no more bets" to the first dispense, with the graph's
answer to "may this trigger fire now" (``controller.round.graph._Graph._can_trigger``) against the transitions
library's own (``transitions.Machine._can_trigger``), the peer, in the same run.

    python -m bench.bench_machine [--tables 300] [--repeat 7]

For each repetition, ``--tables`` round machines are brought to betting with three seats' wagers on the layout
(the devices' handshakes, ``open_betting``, the shuffle, the reading as betting opens, the chips as reported);
then each one's ``no_more_bets`` press and the reading it asks for are handled (``Round.handle``: the
announcement, the lock of every wager, the first dispense, the lamps lit from ``allowed_actions``), timed with
``time.perf_counter`` with the collector paused, once with the graph's answer and once with the library's,
alternated; and ``allowed_actions()`` of a machine at betting (``timeit``). Prints the medians of the repetitions,
microseconds per press and its reading and per ``allowed_actions()``, and the ratios.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import timeit

from transitions import Machine

from controller.cli.main import positive_int
from controller.game.paytable import load_jurisdiction
from controller.game.table import load_table_config
from controller.round import commands as cmd
from controller.round.graph import DEVICES, _Graph
from controller.round.machine import Round
from drivers import events as ev

#: The layout at "no more bets": (seat, spot, amount in minor units).
LAYOUT = ((1, "five_card_bonus", 100), (1, "ante_across", 500), (1, "ante_down", 500),
          (2, "ante_across", 500), (2, "ante_down", 500),
          (3, "five_card_bonus", 100), (3, "ante_across", 1000), (3, "ante_down", 1000))


def _read_id(outputs: list) -> int:
    return next(o.request_id for o in outputs if isinstance(o, cmd.ReadSpots))


def at_betting(config, jurisdiction) -> Round:
    """A round machine at betting with ``LAYOUT`` reported chip by chip."""
    machine = Round(config, jurisdiction)
    for device in DEVICES:
        machine.handle(ev.DeviceReady(device, f"{device}-bench", "1.0", 1))
    machine.handle(ev.ShoeLastDispense(0, ()))
    opened = machine.handle(ev.ButtonPressed("open_betting"))
    machine.handle(ev.ShuffleComplete(52))
    machine.handle(ev.SpotsSnapshot(_read_id(opened), ()))
    for seat, spot, amount in LAYOUT:
        machine.handle(ev.SpotChanged(seat, spot, amount))
    assert machine.state == "betting", machine.state
    return machine


def time_tables(machines: list[Round]) -> float:
    """Microseconds per table of the press and its reading (the collector paused); checks each ends dealing the
    cross."""
    gc.collect()
    gc.disable()
    try:
        began = time.perf_counter()
        for machine in machines:
            asked = machine.handle(ev.ButtonPressed("no_more_bets"))
            machine.handle(ev.SpotsSnapshot(_read_id(asked), LAYOUT))
        took = time.perf_counter() - began
    finally:
        gc.enable()
    assert all(machine.state == "dealing_cross" for machine in machines)
    return took / len(machines) * 1e6


def time_allowed(machine: Round, calls: int) -> float:
    """Microseconds per ``allowed_actions()`` call on ``machine`` (best of 3 runs of ``calls``)."""
    return min(timeit.repeat(machine.allowed_actions, number=calls, repeat=3)) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=positive_int, default=300)
    parser.add_argument("--repeat", type=positive_int, default=7)
    args = parser.parse_args()
    config, jurisdiction = load_table_config(), load_jurisdiction("ny")
    ours_answer = _Graph._can_trigger
    times: dict[str, list[float]] = {"graph": [], "library": []}
    allowed: dict[str, list[float]] = {"graph": [], "library": []}
    for _ in range(args.repeat):
        for name in ("graph", "library"):
            # before the machines are made: each binds its ``may_<trigger>`` to the answer there is then
            _Graph._can_trigger = ours_answer if name == "graph" else Machine._can_trigger  # type: ignore[method-assign]
            try:
                machines = [at_betting(config, jurisdiction) for _ in range(args.tables)]
                allowed[name].append(time_allowed(at_betting(config, jurisdiction), 2000))
                times[name].append(time_tables(machines))
            finally:
                _Graph._can_trigger = ours_answer  # type: ignore[method-assign]
    for what, figures in (("no_more_bets and its reading, round machine only", times),
                          ("allowed_actions() at betting", allowed)):
        graph, library = statistics.median(figures["graph"]), statistics.median(figures["library"])
        print(f"{what}: {graph:.1f} us with the graph's answer, {library:.1f} us with the library's: "
              f"{graph / library:.2f}x (medians of {args.repeat}, alternated; graph "
              f"{min(figures['graph']):.1f}-{max(figures['graph']):.1f}, library "
              f"{min(figures['library']):.1f}-{max(figures['library']):.1f})")


if __name__ == "__main__":
    main()
