"""``crisscross paytable JURISDICTION``: the pay tables and the exact five-card bonus return.

The expected return is computed here from the textbook counts of the 2,598,960 five-card hands (pairs split by
rank: 84,480 boards per pair rank) and the NY 5324.39(f)(3) table written out below; never from our code.
"""

from __future__ import annotations

import re
import subprocess
from fractions import Fraction

import pytest

from controller.settings.files import CONFIG_DIR
from tests.cli_helpers import crisscross


# Textbook counts of five-card hands; a pair of a given rank is 1,098,240 / 13 = 84,480 hands.
BOARDS = {
    "below_pair_of_6s": 1_302_540 + 4 * 84_480,  # high card, pairs of 2s-5s
    "pair_6s_to_10s": 5 * 84_480,
    "pair_jacks_or_better": 4 * 84_480,
    "two_pair": 123_552, "three_of_a_kind": 54_912, "straight": 10_200, "flush": 5_108, "full_house": 3_744,
    "four_of_a_kind": 624, "straight_flush": 36, "royal_flush": 4,
}
# NY 5324.39(f)(3): pair of 6s or better 1 to 1, two pair 3, trips 4, straight 6, flush 10, full house 15,
# quads 40, straight flush 100, royal flush 250; below a pair of 6s loses (-1).
NY_BONUS = {"below_pair_of_6s": -1, "pair_6s_to_10s": 1, "pair_jacks_or_better": 1, "two_pair": 3,
            "three_of_a_kind": 4, "straight": 6, "flush": 10, "full_house": 15, "four_of_a_kind": 40,
            "straight_flush": 100, "royal_flush": 250}


LABELS = {"below_pair_of_6s": "below a pair of 6s", "pair_6s_to_10s": "pair of 6s through 10s",
          "pair_jacks_or_better": "pair of jacks or better", "two_pair": "two pair",
          "three_of_a_kind": "three of a kind", "straight": "straight", "flush": "flush", "full_house": "full house",
          "four_of_a_kind": "four of a kind", "straight_flush": "straight flush", "royal_flush": "royal flush"}
# NY 5324.39(f)(1) ante, (f)(2) across/down (and middle, (e)(9)(ii)), (f)(3) bonus, as printed.
PRINTED_TABLE = {
    "below a pair of 6s": ("loses", "loses", "loses"),
    "pair of 6s through 10s": ("push", "push", "1 to 1"),
    "pair of jacks or better": ("1 to 1", "1 to 1", "1 to 1"),
    "two pair": ("1 to 1", "2 to 1", "3 to 1"),
    "three of a kind": ("1 to 1", "3 to 1", "4 to 1"),
    "straight": ("1 to 1", "5 to 1", "6 to 1"),
    "flush": ("1 to 1", "8 to 1", "10 to 1"),
    "full house": ("1 to 1", "12 to 1", "15 to 1"),
    "four of a kind": ("1 to 1", "40 to 1", "40 to 1"),
    "straight flush": ("1 to 1", "100 to 1", "100 to 1"),
    "royal flush": ("1 to 1", "500 to 1", "250 to 1"),
}


def expected_net(pays: dict[str, int]) -> Fraction:
    assert sum(BOARDS.values()) == 2_598_960
    return Fraction(sum(BOARDS[h] * pays[h] for h in BOARDS), 2_598_960)


def run(*args: str) -> subprocess.CompletedProcess:
    """``crisscross paytable ARGS`` in this process (tests.cli_helpers)."""
    return crisscross("paytable", *args)


@pytest.mark.parametrize("jurisdiction", ["ny", "pa", "nj", str(CONFIG_DIR / "jurisdictions" / "pa.yaml")])
def test_paytable_prints_the_tables_and_the_exact_bonus_return(jurisdiction):
    """NY 5324.39(f)(1)-(3) tables (PA and NJ: the stated reading of the same figures) and the return of the
    five-card bonus over every board as a fraction and a percentage."""
    proc = run(jurisdiction)
    assert proc.returncode == 0, proc.stderr
    net = expected_net(NY_BONUS)
    returned = 1 + net
    lines = proc.stdout.splitlines()
    assert f"return to player   {returned.numerator}/{returned.denominator} = {100 * float(returned):.4f}%" in lines
    assert f"player's net       {net.numerator}/{net.denominator} = {100 * float(net):.4f}%" in lines
    table_rows = {}
    for line in lines[lines.index(next(x for x in lines if x.startswith("hand") and "ante" in x)) + 1:]:
        if not line:
            break
        label, *cells = re.split(r"\s{2,}", line.strip())
        table_rows[label] = tuple(cells)
    assert table_rows == PRINTED_TABLE
    boards_at = lines.index(next(x for x in lines if x.startswith("five-card bonus over all 2,598,960 boards")))
    printed_boards = {}
    for line in lines[boards_at + 2:boards_at + 13]:
        label, boards, *_ = re.split(r"\s{2,}", line.strip())
        printed_boards[label] = int(boards.replace(",", ""))
    assert printed_boards == {LABELS[h]: n for h, n in BOARDS.items()}


def test_bonus_return_of_a_richer_table_follows_its_odds(tmp_path):
    """A table paying more than the minimum (royal flush 1000 to 1 on the bonus) is accepted and its return
    is the same enumeration with the new odds."""
    text = (CONFIG_DIR / "jurisdictions" / "ny.yaml").read_text()
    assert text.count("      royal_flush: 250\n") == 1
    path = tmp_path / "rich.yaml"
    path.write_text(text.replace("      royal_flush: 250\n", "      royal_flush: 1000\n"))
    proc = run(str(path))
    assert proc.returncode == 0, proc.stderr
    returned = 1 + expected_net({**NY_BONUS, "royal_flush": 1000})
    assert f"return to player   {returned.numerator}/{returned.denominator} = {100 * float(returned):.4f}%" in proc.stdout


@pytest.mark.parametrize("code, paid, says", [
    ("nj", "200", "royal_flush pays 200 to 1, below the minimum 250 to 1 of New Jersey"),
    # no house edge of minus quintillions of percent: refused on load, as `par-sheet` refuses them
    ("ny", "99999999999999999999", "royal_flush pays 99999999999999999999 to 1, above the largest odds "
                                   "1000000 to 1"),
], ids=["below-the-minimum", "beyond-a-million-to-one"])
def test_a_refused_pay_table_exits_2_with_one_line_naming_file_line_and_hand(tmp_path, code, paid, says):
    text = (CONFIG_DIR / "jurisdictions" / f"{code}.yaml").read_text()
    path = tmp_path / "refused.yaml"
    path.write_text(text.replace("      royal_flush: 250\n", f"      royal_flush: {paid}\n"))
    line = 1 + text.splitlines().index("      royal_flush: 250")
    proc = run(str(path))
    assert proc.returncode == 2 and proc.stdout == ""
    (message,) = proc.stderr.splitlines()
    assert f"{path}: line {line}: pay_tables.five_card_bonus.pays.royal_flush: {says}" in message


def test_an_unknown_jurisdiction_exits_2():
    proc = run("zz")
    assert proc.returncode == 2 and "unknown jurisdiction 'zz'" in proc.stderr and proc.stdout == ""
