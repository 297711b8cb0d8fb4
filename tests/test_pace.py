"""The pace of the simulated dealer (``crisscross run --simulate --pace``, controller/simulated/pace.py; docs/commands.md):
the dealer's presses, as the journal records them, are at least the pace apart, so a person can follow each step
on the dealer's screen. Measured from the journal's record times (the controller's clock when it journaled each
press), never by sleeping in the test.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.journal.reader import read_records
from controller.service.assembly import run_service
from controller.simulated.pace import HUMAN_PACE, MAX_PACE, parse_pace
from tests.cli_helpers import crisscross

#: The dealer's buttons (the panel's, domain.md "Roles": what a dealer presses without the supervisor key).
DEALER_BUTTONS = ("open_betting", "no_more_bets", "confirm", "reveal", "paid")
#: The journal's times are to the millisecond: two presses exactly the pace apart may read 1 ms closer.
RESOLUTION = 0.001


def _press_gaps(path) -> list[float]:
    """Seconds between consecutive presses of the dealer's buttons, by the journal's record times."""
    times = [datetime.fromisoformat(r["time"]) for r in read_records(path)
             if r["type"] == "ButtonPressed" and r["data"]["button"] in DEALER_BUTTONS]
    assert len(times) >= 8, "a round is at least open, no more bets and three decisions with their reveals"
    return [(b - a).total_seconds() for a, b in zip(times, times[1:])]


def _run(tmp_path, name: str, pace: float) -> list[float]:
    journal = tmp_path / f"{name}.db"
    status = run_service(load_table_config(), simulate=True, rounds=1, seed=8, quiet=True, journal_path=journal,
                         parts=SERVICE_PARTS, pace=pace)
    assert status == 0
    return _press_gaps(journal)


def test_the_pace_spaces_the_dealer_s_presses_by_at_least_the_pace(tmp_path):
    fast = _run(tmp_path, "fast", 0.0)
    assert min(fast) < 0.25  # without a pace the presses come closer: the measure below can fail
    paced = _run(tmp_path, "paced", 0.25)
    assert min(paced) >= 0.25 - RESOLUTION, paced


@pytest.mark.parametrize(("text", "seconds"), [("human", HUMAN_PACE), ("HUMAN", HUMAN_PACE), ("0", 0.0),
                                               ("1.5", 1.5), ("60", MAX_PACE)])
def test_pace_values(text, seconds):
    assert parse_pace(text) == seconds


@pytest.mark.parametrize("text", ["-1", "61", "nan", "slow", ""])
def test_a_pace_out_of_range_is_refused_naming_it(text):
    with pytest.raises(ValueError, match="expected human or seconds from 0 to 60"):
        parse_pace(text)


def test_the_command_line_takes_the_pace_with_simulate_only(tmp_path):
    refused = crisscross("run", "--pace", "human", "--journal", str(tmp_path / "j.db"))
    assert refused.returncode == 2 and "--pace only applies to the simulated dealer of --simulate" in refused.stderr
    bad = crisscross("run", "--simulate", "--pace", "soon")
    assert bad.returncode == 2 and "--pace 'soon': expected human or seconds from 0 to 60" in bad.stderr
