"""``crisscross paytable design``: the five-card bonus tables closest to a target house edge.

The exact edge of a table is computed here from the textbook counts of the 2,598,960 boards
(``tests/test_paytable_cli.py``), and the best distance is checked against a brute-force search written here;
the regulation's floor is NY 9 NYCRR 5324.39(f)(3). The across/down/middle search (``--vary bet``), whose edge
is the par sheet's, is tested in ``tests/test_parsheet.py``.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from controller.game.minimums import REGULATIONS, odds_value
from controller.game.paytable import PAY_HANDS, load_jurisdiction
from controller.game.table import load_table_config
from controller.service.opening import jurisdiction_for
from controller.settings.files import CONFIG_DIR
from tests.cli_helpers import crisscross
from tests.test_paytable_cli import BOARDS

ROOT = Path(__file__).resolve().parent.parent
VALUES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200, 250, 300, 400, 500)


def edge(pays: dict) -> Fraction:
    """The bonus's house edge from the textbook counts: losing boards minus odds x boards, over all boards."""
    won = sum(BOARDS[h] * odds_value(pays[h]) for h in PAY_HANDS)
    return Fraction(BOARDS["below_pair_of_6s"] - won, 2_598_960)


def design(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    """``crisscross paytable design --output FILE ARGS`` in this process (``tests/cli_helpers.py``; the real
    process of ``paytable`` is run below)."""
    out = tmp_path / "designed.yaml"
    return crisscross("paytable", "design", "--output", out, *args), out


def printed(stdout: str) -> list[tuple[Fraction, dict]]:
    """(house edge, pays) of each printed table."""
    lines = stdout.splitlines()
    out = []
    for i, line in enumerate(lines):
        found = re.match(r"\d+\. house edge (-?\d+/\d+) = ", line)
        if found:
            pays = {}
            for cell in lines[i + 1].strip().split(", "):
                hand, odds = cell.rstrip("*").split(" ", 1)
                pays[hand] = "push" if odds == "push" else int(odds.removesuffix(" to 1"))
            out.append((Fraction(found.group(1)), pays))
    return out


def test_bonus_design_prints_exact_edges_and_writes_a_table_the_controller_runs(tmp_path):
    target = Fraction(3, 100)
    proc, out = design(tmp_path, "--target-house-edge", "0.03", "--vary", "bonus")
    assert proc.returncode == 0, proc.stderr
    tables = printed(proc.stdout)
    assert len(tables) == 5
    minimum = REGULATIONS["ny"].minimums["five_card_bonus"].pays
    distances = []
    for house_edge, pays in tables:
        assert house_edge == edge(pays)  # exact, from the textbook counts
        assert all(odds_value(pays[h]) >= odds_value(minimum[h]) for h in PAY_HANDS)
        values = [odds_value(pays[h]) for h in PAY_HANDS]
        assert values == sorted(values)
        distances.append(abs(house_edge - target))
    assert distances == sorted(distances) and distances[0] < Fraction(1, 10_000)
    # the file written is table 1, and it is what the controller loads for a table that names it
    best_edge, best = tables[0]
    assert load_jurisdiction(out).five_card_bonus.pays == best
    table = yaml.safe_load((CONFIG_DIR / "table.yaml").read_text())
    table["jurisdiction"] = str(out)
    (tmp_path / "table.yaml").write_text(yaml.safe_dump(table))
    assert jurisdiction_for(load_table_config(tmp_path / "table.yaml")).five_card_bonus.pays == best
    report = subprocess.run([sys.executable, "-m", "controller", "paytable", str(out)], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert f"house edge         {best_edge.numerator}/{best_edge.denominator} = " in report.stdout


def test_bonus_design_finds_the_nearest_table_of_a_brute_force_search(tmp_path):
    """Over a small space (values up to twice each minimum), every table tried here by brute force is no
    nearer the target than the first one printed."""
    target = Fraction(1, 100)
    proc, _ = design(tmp_path, "--target-house-edge", "0.01", "--vary", "bonus", "--max-factor", "2",
                     "--values", ",".join(map(str, VALUES)))
    assert proc.returncode == 0, proc.stderr
    best_edge, _ = printed(proc.stdout)[0]
    minimum = REGULATIONS["ny"].minimums["five_card_bonus"].pays
    choices = [[v for v in VALUES if odds_value(minimum[h]) <= v <= 2 * odds_value(minimum[h])] for h in PAY_HANDS]
    counts = [BOARDS[h] for h in PAY_HANDS]
    # |edge - 1/100| x 100 x 2,598,960, in integers
    nearest = min(abs(100 * (BOARDS["below_pair_of_6s"] - sum(n * v for n, v in zip(counts, combo))) - 2_598_960)
                  for combo in itertools.product(*choices) if list(combo) == sorted(combo))
    assert abs(best_edge - target) == Fraction(nearest, 100 * 2_598_960)


def test_design_refuses_bad_options(tmp_path):
    proc, _ = design(tmp_path, "--target-house-edge", "1.5", "--vary", "bonus")
    assert proc.returncode == 2 and "--target-house-edge" in proc.stderr and proc.stdout == ""
    proc = subprocess.run([sys.executable, "-m", "controller", "paytable", "ny", "--vary", "bonus"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and "unexpected --vary bonus" in proc.stderr


@pytest.mark.parametrize("option, text, most", [("--top", "1000000000", 1000), ("--top", "0", 1000),
                                                ("--check", "101", 100), ("--max-factor", "1001", 1000),
                                                ("--max-factor", "-1", 1000)])
def test_design_refuses_counts_past_what_its_search_can_hold(tmp_path, option, text, most):
    """``--top 1000000000`` kept every table it met (7 GB in a minute, not finished); ``--check`` is a par sheet
    each, ``--max-factor`` widens every hand's choices: each is bounded, and refused past it in one line."""
    proc, output = design(tmp_path, "--target-house-edge", "0.03", "--vary", "bonus", option, text)
    assert proc.returncode == 2 and proc.stdout == "" and not output.exists()
    assert proc.stderr.splitlines()[-1].endswith(
        f"error: argument {option}: expected a positive integer of at most {most:,}, got {text}")


def test_design_refuses_values_below_one(tmp_path):
    proc, output = design(tmp_path, "--target-house-edge", "0.03", "--vary", "bonus", "--values", "0,2")
    assert proc.returncode == 2 and not output.exists()
    assert proc.stderr == "crisscross paytable design: --values 0,2: expected positive integers\n"


def test_design_refuses_odds_the_pay_tables_loader_refuses(tmp_path):
    """``--values 99999999999999999999`` was taken (and the value left unused); the loader refuses odds above
    1,000,000 to 1 (``crisscross paytable``), so the design does too, in one line, before any search."""
    proc, output = design(tmp_path, "--target-house-edge", "0.03", "--vary", "bonus", "--values",
                          "5,99999999999999999999")
    assert proc.returncode == 2 and proc.stdout == "" and not output.exists()
    assert proc.stderr == ("crisscross paytable design: --values 5,99999999999999999999: odds above 1000000 to 1, "
                           "the most a pay table may offer (crisscross paytable, docs/commands.md)\n")
    assert design(tmp_path, "--target-house-edge", "0.03", "--vary", "bonus", "--top", "1",
                  "--values", "1,2,3,4,5,6,8,1000000")[0].returncode == 0


@pytest.mark.parametrize("taken", ["file", "folder", "link"])
def test_design_never_writes_over_a_name_taken(tmp_path, taken):
    """An existing ``--output`` was written over (a pay table in use among them) and a folder gave a traceback:
    each is refused in one line before the search, the file left as it was."""
    out = tmp_path / "designed.yaml"
    if taken == "file":
        out.write_text("keep\n")
    elif taken == "folder":
        out.mkdir()
    else:
        out.symlink_to(tmp_path / "elsewhere.yaml")
    proc = crisscross("paytable", "design", "--output", out, "--target-house-edge", "0.03", "--vary", "bonus")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"crisscross paytable design: --output {out}: exists: the design never writes over a "
                           f"file (name another)\n")
    assert taken != "file" or out.read_text() == "keep\n"
    assert not (tmp_path / "elsewhere.yaml").exists()


def test_design_names_a_missing_folder_and_a_file_it_cannot_write(tmp_path, monkeypatch):
    """``--output /nonexist/x.yaml`` gave a traceback: refused in one line; a write that fails part way (a full
    disk) names the file, exit 2, and leaves no half-written pay table."""
    missing = tmp_path / "none" / "x.yaml"
    proc = crisscross("paytable", "design", "--output", missing, "--target-house-edge", "0.03", "--vary", "bonus")
    assert proc.returncode == 2
    assert proc.stderr == f"crisscross paytable design: --output {missing}: no folder {missing.parent}\n"
    real_open = Path.open

    def full(self, mode="r", *args, **kwargs):
        handle = real_open(self, mode, *args, **kwargs)
        if self.name == "designed.yaml" and "x" in mode:
            def write(text):
                raise OSError(28, "No space left on device")

            handle.write = write
        return handle

    monkeypatch.setattr(Path, "open", full)
    proc, output = design(tmp_path, "--target-house-edge", "0.03", "--vary", "bonus", "--top", "1")
    assert proc.returncode == 2
    assert proc.stderr == (f"crisscross paytable design: {output}: cannot write the pay table: No space left on "
                           f"device\n")
    assert not output.exists()


@pytest.mark.parametrize("values, said", [
    (",,,", "--values ,,,: value 1 is empty: expected positive integers separated by commas"),
    ("2,,3", "--values 2,,3: value 2 is empty: expected positive integers separated by commas"),
    ("2,three", "--values 2,three: 'three' is not a whole number"),
    ("2,1.5", "--values 2,1.5: '1.5' is not a whole number"),
])
def test_design_names_a_value_of_values_that_is_empty_or_not_a_number(tmp_path, values, said):
    """``--values ,,,`` printed Python's "invalid literal for int() with base 10: ''"; each value is named."""
    proc, output = design(tmp_path, "--target-house-edge", "0.03", "--vary", "bonus", "--values", values)
    assert proc.returncode == 2 and proc.stdout == "" and not output.exists()
    assert proc.stderr == f"crisscross paytable design: {said}\n"


def test_design_refuses_a_search_of_more_than_five_million_tables_before_it_starts(tmp_path):
    """``--values 1,2,...,5000`` searched for minutes, printing nothing. The search tries, for each half of the
    hands (lower five, upper five), every combination of its hands' choices (counted here from the
    regulation's minimums: each value from the minimum, at least 1, to 4 times it, and ``push`` where the
    minimum is a push); more than 5,000,000 is refused at once, saying how many."""
    minimum = REGULATIONS["ny"].minimums["five_card_bonus"].pays
    counts = []
    for hand in PAY_HANDS:
        low = max(odds_value(minimum[hand]), 1)
        counts.append(len(range(low, min(4 * low, 5000) + 1)) + (minimum[hand] == "push"))
    size = 1
    for n in counts[:5]:
        size *= n
    upper = 1
    for n in counts[5:]:
        upper *= n
    size += upper
    assert size > 5_000_000
    proc, output = design(tmp_path, "--target-house-edge", "0.03", "--vary", "bonus",
                          "--values", ",".join(map(str, range(1, 5001))))
    assert proc.returncode == 2 and proc.stdout == "" and not output.exists()
    assert proc.stderr == (f"crisscross paytable design: --values and --max-factor 4: the search would try "
                           f"{size:,} tables, more than 5,000,000: give fewer --values or a lower --max-factor\n")
