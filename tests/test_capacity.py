"""What a spot may have to hold against what the bet sensors can read: the table's limits with its jurisdiction's
pay tables, refused at load when some spot could hold more than the sensors' u32 amount field
(docs/protocol.md, "Bet sensors"; ``controller.game.capacity``).

Regression: ``limits.ante.max`` was capped at ``MAX_AMOUNT // 3`` (a 3x bet on the largest ante), ignoring the
payout stacked on a winning spot (``winning_spot: wager_and_payout``): an ante of 1,431,655,765 loaded, and round 1's
payout asked the sensors to read 8,589,934,590 on a middle bet paid 1 to 1; the round stayed open. The expected
boundaries here are computed from ``MAX_AMOUNT`` and the odds and multiples read from the jurisdiction files
with ``yaml`` (NY 9 NYCRR 5324.39(c)(4),(f)), not by the code under test.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from controller.game.paytable import known_codes, load_jurisdiction
from controller.game.table import load_table_config
from controller.service.opening import jurisdiction_for
from controller.settings.files import CONFIG_DIR, ConfigError
from drivers.sensors.protocol import MAX_AMOUNT

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_ANTE = "ante: {min: 500, max: 50000}"
SHIPPED_BONUS = "five_card_bonus: {min: 100, max: 10000}"
#: The reproduction's ante: MAX_AMOUNT // 3, the old cap.
OLD_CAP = 1431655765


def _site(tmp_path: Path, *edits: tuple[str, str], jurisdiction_edits: tuple[tuple[str, str], ...] = ()) -> Path:
    """A copy of the shipped configuration (as ``crisscross config init`` writes it) in ``tmp_path/site`` with
    each ``(old, new)`` of ``edits`` made in its table.yaml and of ``jurisdiction_edits`` in its ny.yaml; returns
    the table file."""
    site = tmp_path / "site"
    shutil.copytree(CONFIG_DIR, site)
    for name, changes in (("table.yaml", edits), ("jurisdictions/ny.yaml", jurisdiction_edits)):
        text = (site / name).read_text()
        for old, new in changes:
            assert old in text, old
            text = text.replace(old, new)
        (site / name).write_text(text)
    return site / "table.yaml"


def _line_of(path: Path, fragment: str) -> int:
    """1-based line of the first line of ``path`` holding ``fragment``."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if fragment in line)


def _load(table: Path):
    """The table file loaded as every start loads it: the table, then its jurisdiction with it."""
    config = load_table_config(table)
    return config, jurisdiction_for(config)


def _refusal(table: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        _load(table)
    return str(caught.value)


def _numbers(jurisdiction_file: Path) -> tuple[int, dict[str, int]]:
    """The largest bet multiple and each pay table's highest odds (N to 1), read from the file's YAML."""
    data = yaml.safe_load(jurisdiction_file.read_text())
    odds = {name: max(v for v in table["pays"].values() if v != "push") for name, table in data["pay_tables"].items()}
    return max(data["bet_multiples"]["value"]), odds


def _largest(jurisdiction_file: Path, winning_spot: str) -> tuple[int, int]:
    """The largest ``limits.ante.max`` and ``limits.five_card_bonus.max`` whose spots the sensors can read.

    A wager W paid N to 1 leaves W + N*W on the spot (``wager_and_payout``) or N*W (``payout``; the wager W was
    there before it); the across, down and middle bets are up to the largest multiple times the ante."""
    multiple, odds = _numbers(jurisdiction_file)

    def most(factor: int, n: int) -> int:  # the largest L with factor * L * (1 + n) (or * max(1, n)) <= MAX_AMOUNT
        per_unit = factor * ((1 + n) if winning_spot == "wager_and_payout" else max(1, n))
        return MAX_AMOUNT // per_unit

    return (min(most(1, odds["ante"]), most(multiple, odds["bet"])), most(1, odds["five_card_bonus"]))


def test_the_reproduction_is_refused_at_load_naming_the_ante_max(tmp_path):
    """The lab's reproduction: an ante of MAX_AMOUNT // 3 lets the middle bet be MAX_AMOUNT, and a win stacks its
    payout on it; refused at load with the file, the line and ``limits.ante.max``, and the largest ante that fits."""
    ante = f"ante: {{min: {OLD_CAP}, max: {OLD_CAP}}}"
    table = _site(tmp_path, (SHIPPED_ANTE, ante))
    message = _refusal(table)
    largest_ante, _ = _largest(table.parent / "jurisdictions" / "ny.yaml", "wager_and_payout")
    assert message.startswith(f"{table}: line {_line_of(table, ante)}: limits.ante.max: {OLD_CAP} "), message
    assert f"above the {MAX_AMOUNT} minor units" in message and f"at most {largest_ante}" in message, message
    assert "\n" not in message


def test_the_reproduction_on_the_command_line_exits_2_in_one_line_and_opens_no_journal(tmp_path):
    """``crisscross run --simulate`` on the reproduction: exit status 2, one line naming the file and key, and no
    journal (nor its anchor) created."""
    ante = f"ante: {{min: {OLD_CAP}, max: {OLD_CAP}}}"
    table = _site(tmp_path, (SHIPPED_ANTE, ante))
    journal = tmp_path / "x.db"
    proc = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "1", "--seed", "4",
                           "--config", str(table), "--journal", str(journal)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"{table}: line {_line_of(table, ante)}: limits.ante.max:" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


@pytest.mark.parametrize("table_name, key", [("five_card_bonus", "limits.five_card_bonus.max"),
                                             ("bet", "limits.ante.max")])
def test_a_pay_table_at_the_largest_odds_is_refused_with_the_shipped_limits(tmp_path, table_name, key):
    """A royal flush paying 1,000,000 to 1 (the largest odds a pay table may offer; the file loads alone) makes the
    shipped largest bonus (10,000 x 1,000,001) or 3x ante (150,000 x 1,000,001) more than a spot can report."""
    ny = (CONFIG_DIR / "jurisdictions" / "ny.yaml").read_text()
    section = ny.index(f"  {table_name}:\n    citation")
    royal = ny.index("royal_flush:", section)
    old = ny[royal:ny.index("\n", royal)]
    table = _site(tmp_path, jurisdiction_edits=((ny[section:royal] + old, ny[section:royal] + "royal_flush: 1000000"),))
    load_jurisdiction(table.parent / "jurisdictions" / "ny.yaml")  # the pay table alone is accepted
    message = _refusal(table)
    line = _line_of(table, SHIPPED_BONUS if table_name == "five_card_bonus" else SHIPPED_ANTE)
    assert message.startswith(f"{table}: line {line}: {key}: "), message
    assert "royal_flush at 1000000 to 1" in message, message


def test_the_shipped_configuration_loads_with_every_shipped_jurisdiction(tmp_path):
    """The shipped table.yaml, and the same table under each jurisdiction of config/jurisdictions, load."""
    config, jurisdiction = _load(CONFIG_DIR / "table.yaml")
    assert (config.ante_limits.max, jurisdiction.code) == (50000, "ny")
    codes = known_codes(CONFIG_DIR)
    assert codes == ["nj", "ny", "pa"]
    for code in codes:
        table = _site(tmp_path / code, ("jurisdiction: ny ", f"jurisdiction: {code} "))
        assert _load(table)[1].code == code


@pytest.mark.parametrize("code", ["ny", "pa", "nj"])
@pytest.mark.parametrize("winning_spot", ["wager_and_payout", "payout"])
def test_a_limit_at_the_largest_amount_loads_and_one_minor_unit_more_is_refused(tmp_path, code, winning_spot):
    """The boundary, for each limit, jurisdiction and way of paying a winning spot: at the largest max the spots
    can report it loads, one minor unit above it is refused naming the key."""
    largest_ante, largest_bonus = _largest(CONFIG_DIR / "jurisdictions" / f"{code}.yaml", winning_spot)
    assert largest_ante < OLD_CAP  # the old cap let through what the sensors cannot read
    paying = ("  winning_spot: wager_and_payout", f"  winning_spot: {winning_spot}")
    juris = ("jurisdiction: ny ", f"jurisdiction: {code} ")
    for shipped, name, largest in ((SHIPPED_ANTE, "ante", largest_ante), (SHIPPED_BONUS, "five_card_bonus",
                                                                         largest_bonus)):
        low = shipped.split("min: ")[1].split(",")[0]
        at = f"{name}: {{min: {low}, max: {largest}}}"
        config, _ = _load(_site(tmp_path / "at", paying, juris, (shipped, at)))
        assert getattr(config, f"{'ante' if name == 'ante' else 'bonus'}_limits").max == largest
        above = f"{name}: {{min: {low}, max: {largest + 1}}}"
        table = _site(tmp_path / "above", paying, juris, (shipped, above))
        message = _refusal(table)
        assert message.startswith(f"{table}: line {_line_of(table, above)}: limits.{name}.max: {largest + 1} "), \
            message
        assert message.endswith(f"limits.{name}.max is at most {largest}"), message
        shutil.rmtree(tmp_path / "at")
        shutil.rmtree(tmp_path / "above")


def test_a_pay_table_written_by_the_design_tool_does_not_bypass_the_check(tmp_path):
    """``crisscross paytable design`` writes a pay-table file a table.yaml may name; with odds the shipped limits
    cannot carry (the bet table's royal flush at 1,000 times its minimum, the tool's largest ``--max-factor``) the
    table naming it is refused at load, though the file loads alone."""
    from controller.analysis.paytable_design import Design, write_paytable

    ny = load_jurisdiction("ny")
    pays = dict(ny.bet.pays)
    pays["royal_flush"] = 1000 * ny.bet.pays["royal_flush"]
    written = tmp_path / "designed.yaml"
    write_paytable(ny, "bet", Design(pays, Fraction(1, 100), Fraction(0)), Fraction(1, 100), written)
    load_jurisdiction(written)
    table = _site(tmp_path, ("jurisdiction: ny ", f"jurisdiction: {written} "))
    message = _refusal(table)
    assert message.startswith(f"{table}: line {_line_of(table, SHIPPED_ANTE)}: limits.ante.max: 50000 "), message
    assert f"royal_flush at 500000 to 1 (pay_tables.bet of {written})" in message, message


def test_a_min_above_the_largest_max_that_fits_is_named_with_it(tmp_path):
    """Following "limits.ante.max is at most N" gave a second refusal, "min ... is above max N": the first says
    the min must come down too when it is above N (N from the odds, as ``_largest`` counts it)."""
    ante = "ante: {min: 3000000, max: 3000000}"
    table = _site(tmp_path, (SHIPPED_ANTE, ante))
    largest_ante, _ = _largest(table.parent / "jurisdictions" / "ny.yaml", "wager_and_payout")
    assert largest_ante < 3000000
    message = _refusal(table)
    assert message.endswith(f"limits.ante.max is at most {largest_ante} (and limits.ante.min, 3000000, at most "
                            f"that too)"), message
    fits = _site(tmp_path / "fits", (SHIPPED_ANTE, f"ante: {{min: 500, max: {OLD_CAP}}}"))
    assert "limits.ante.min" not in _refusal(fits)
