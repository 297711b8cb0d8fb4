"""The par sheet's sum over the classes of two-card hands and its three reports, in the quick tier.

The per-class analyses are the frozen ones of the former engine (``tests/data/parsheet_ny_reference.json``,
written by ``tests/parsheet_reference.py``; the slow tier proves today's engine equals them class by class).
Added up, they give the exact figures docs/par-sheet-ny.md publishes for New York: expected value
-579091/6689228 per ante, house edge 4.3285%, element of risk 1.4764%, 5.8637 antes wagered on average.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from controller.analysis import report
from controller.analysis.parsheet import HoleAnalysis, hole_classes, hole_name
from controller.analysis.parsheet_totals import ParSheet, _add_up
from controller.game.paytable import load_jurisdiction

REFERENCE = Path(__file__).parent / "data" / "parsheet_ny_reference.json"


def _keyed(data: dict[str, float]) -> dict[tuple[str, str], float]:
    """``"wager|class"`` keys of the frozen data as the analysis's ``(wager, class)`` pairs."""
    return {tuple(key.split("|", 1)): value for key, value in data.items()}  # type: ignore[misc]


@pytest.fixture(scope="module")
def sheet() -> ParSheet:
    frozen = json.loads(REFERENCE.read_text())
    analyses = {}
    for hole, _ in hole_classes():
        data = frozen[hole_name(hole)]
        analyses[hole] = HoleAnalysis(
            value=data["value"], across=data["across"], wager=data["wager"],
            decisions={step: {int(c): v for c, v in choices.items()} for step, choices in data["decisions"].items()},
            returns=_keyed(data["returns"]), mass=_keyed(data["mass"]), seen=data["seen"])
    return _add_up(load_jurisdiction("ny"), hole_classes(), analyses)


def test_the_classes_add_up_to_the_published_figures(sheet):
    assert sheet.expected_value == Fraction(-579091, 6689228)
    assert round(100 * float(sheet.house_edge), 4) == 4.3285
    assert round(100 * float(sheet.element_of_risk), 4) == 1.4764
    assert round(float(sheet.average_total_wager), 4) == 5.8637
    assert sum(row["return"] for row in sheet.return_table) == pytest.approx(float(sheet.expected_value), abs=1e-12)
    assert len(sheet.across_strategy) == 169
    for step, choices in sheet.decisions.items():  # a decision's choices never add up to more than every round
        assert 0 < sum(choices.values()) <= 1 + 1e-12, step


def test_the_three_reports_carry_the_same_figures(sheet):
    data = json.loads(report.to_json(sheet))
    assert data["expected_value_fraction"] == "-579091/6689228"
    assert data["house_edge"] == pytest.approx(float(sheet.house_edge))
    assert data["pay_tables"]["bet"]["royal_flush"] == 500
    assert data["pay_tables"]["five_card_bonus"]["royal_flush"] == 250
    assert sum(data["five_card_bonus"]["boards"].values()) == 2_598_960
    assert data["return_table"] == sheet.return_table
    markdown = report.to_markdown(sheet)
    assert "## Return table" in markdown and "| royal_flush | 1 | 500 | 250 |" in markdown
    assert "| expected value per ante | -0.086571 (-579091/6689228) |" in markdown
    text = report.to_text(sheet)
    assert "pay tables from" in text and "fold at across" in text and "-579091/6689228" in text
