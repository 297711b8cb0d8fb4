"""The simulation through the round machine (``controller.cli.simulate``) on a few hundred rounds: its
mean lies within three standard errors of the exact value of New York's par sheet (-579091/6689228 per ante,
docs/par-sheet-ny.md, proven by the slow tier's exact checks in tests/test_parsheet.py)."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from controller.cli.simulate import Tally, main, simulate

EXACT = -579091 / 6689228
ROUNDS = 300


@pytest.fixture(scope="module")
def tally() -> Tally:
    return simulate("ny", ROUNDS, seed=7)


def test_a_short_simulation_agrees_with_the_exact_value(tally):
    assert tally.rounds == ROUNDS and tally.hands >= ROUNDS
    assert abs(tally.mean - EXACT) < 3 * tally.standard_error
    assert 0 < tally.standard_error < 0.5


def test_the_command_line_prints_the_distance_and_fails_beyond_three_standard_errors(tally):
    """One worker with seed 7 plays the rounds ``simulate(..., seed=7)`` plays: the same mean, printed with its
    distance from the exact value in standard errors; exit 1 when the distance is beyond three."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["--rounds", str(ROUNDS), "--seed", "7", "--workers", "1", "--exact", repr(EXACT)])
    line = out.getvalue()
    assert status == 0 and line.startswith(f"rounds {ROUNDS}, hands {tally.hands}: mean net per ante "), line
    printed = float(re.search(r"; ([+-]\d+\.\d+) standard errors", line).group(1))
    assert printed == pytest.approx((tally.mean - EXACT) / tally.standard_error, abs=0.006)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--rounds", "20", "--seed", "7", "--workers", "1", "--exact", "100"]) == 1


def test_tallies_of_parts_add_up_to_the_tally_of_the_whole():
    whole, first, second = Tally(), Tally(), Tally()
    for nets in ([1.0, -2.0], [0.5, 0.5], [-1.0, 3.0]):
        whole.add_round(nets)
    first.add_round([1.0, -2.0])
    second.add_round([0.5, 0.5])
    second.add_round([-1.0, 3.0])
    first.add(second)
    assert (first.rounds, first.hands, first.total, first.squares) == (whole.rounds, whole.hands, whole.total,
                                                                       whole.squares)
    assert whole.mean == 2.0 / 6
