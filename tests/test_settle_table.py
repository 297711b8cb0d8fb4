"""`crisscross settle` with each jurisdiction and with an optional table configuration (`--table`).

Expected payouts are worked by hand from NY 5324.39(e)(9),(f) (PA 674a.11(h) and NJ: the same figures, the
reading stated in their files); the limits come from `config/table.yaml` (ante 500-50000, bonus 100-10000),
read in the test from the file itself.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess

import pytest
import yaml

from controller.game.settlement import SettlementInputError, settle_round
from controller.game.table import load_table_config
from controller.settings.files import CONFIG_DIR
from tests.cli_helpers import crisscross

LIMITS = yaml.safe_load((CONFIG_DIR / "table.yaml").read_text())["limits"]

ROUND = {
    "jurisdiction": "ny",
    "community": {"across": ["7d", "2c"], "down": ["9s", "3h"], "middle": "Kc"},
    "seats": [{"seat": 3, "cards": ["Jh", "Jd"],
               "wagers": {"ante_across": 500, "ante_down": 500, "across": 1500, "down": 500, "middle": 1500,
                          "five_card_bonus": 500}}],
}
# Worked by hand: JJ across and down, 1 to 1 on the antes, bets and middle (NY (f)(1),(2),(e)(9)(ii)); the board
# 7d 2c 9s 3h Kc is high card, the bonus loses (NY (f)(3)): 500 + 500 + 1500 + 500 + 1500 - 500.
NET = 4000


def run(data, *extra: str) -> subprocess.CompletedProcess:
    """``crisscross settle EXTRA`` with ``data`` on its standard input, in this process (tests.cli_helpers; the
    real process is run by tests/test_settle_cli.py)."""
    return crisscross("settle", *extra, stdin=json.dumps(data))


@pytest.mark.parametrize("jurisdiction", ["ny", "pa", "nj", str(CONFIG_DIR / "jurisdictions" / "nj.yaml")])
def test_settle_accepts_each_jurisdiction_and_a_pay_table_path(jurisdiction):
    data = {**copy.deepcopy(ROUND), "jurisdiction": jurisdiction}
    proc = run(data)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["jurisdiction"] == jurisdiction
    assert out["seats"][0]["net"] == NET


def with_wagers(**changes):
    data = copy.deepcopy(ROUND)
    data["seats"][0]["wagers"].update(changes)
    return data


@pytest.mark.parametrize("changes,field,reason", [
    ({"ante_across": LIMITS["ante"]["min"] - 100, "ante_down": LIMITS["ante"]["min"] - 100, "across": 400,
      "down": 400, "middle": 400}, "wagers.ante_across", f"is below the table minimum {LIMITS['ante']['min']}"),
    ({"ante_across": LIMITS["ante"]["max"] + 1, "ante_down": LIMITS["ante"]["max"] + 1,
      "across": LIMITS["ante"]["max"] + 1, "down": LIMITS["ante"]["max"] + 1, "middle": LIMITS["ante"]["max"] + 1},
     "wagers.ante_across", f"is above the table maximum {LIMITS['ante']['max']}"),
    ({"five_card_bonus": LIMITS["five_card_bonus"]["min"] - 1}, "wagers.five_card_bonus",
     f"is below the table minimum {LIMITS['five_card_bonus']['min']}"),
    ({"five_card_bonus": LIMITS["five_card_bonus"]["max"] + 1}, "wagers.five_card_bonus",
     f"is above the table maximum {LIMITS['five_card_bonus']['max']}"),
])
def test_settle_with_a_table_checks_its_limits(changes, field, reason):
    """Table minimum and maximum per wager (config/table.yaml): with --table, a wager outside them is refused,
    exit 2, one line naming the seat, the wager and the limit; without --table the round settles."""
    data = with_wagers(**changes)
    proc = run(data, "--table", str(CONFIG_DIR / "table.yaml"))
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert f"seat 3: {field}: " in line and reason in line and "CC-01" in line
    assert run(data).returncode == 0
    with pytest.raises(SettlementInputError) as caught:
        settle_round(data, table=load_table_config())
    assert (caught.value.seat, caught.value.field) == (3, field)


def test_settle_with_a_table_accepts_the_limits_themselves():
    """The limits are inclusive: an ante at the minimum and a bonus at the maximum are accepted."""
    ante = LIMITS["ante"]["min"]
    data = with_wagers(ante_across=ante, ante_down=ante, across=ante, down=ante, middle=ante,
                       five_card_bonus=LIMITS["five_card_bonus"]["max"])
    proc = run(data, "--table", str(CONFIG_DIR / "table.yaml"))
    assert proc.returncode == 0, proc.stderr


def test_settle_with_a_table_refuses_a_seat_not_in_play(tmp_path):
    table = tmp_path / "table.yaml"
    text = (CONFIG_DIR / "table.yaml").read_text()
    assert "seats: [1, 2, 3, 4, 5, 6]" in text
    table.write_text(text.replace("seats: [1, 2, 3, 4, 5, 6]", "seats: [1, 2, 4, 5, 6]"))
    proc = run(ROUND, "--table", str(table))
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert "seat 3: seat: not in play at table CC-01" in line


def test_settle_with_a_refused_table_file_exits_2(tmp_path):
    proc = run(ROUND, "--table", str(tmp_path / "missing.yaml"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "missing.yaml" in proc.stderr


def test_settle_with_a_copied_table_reads_its_jurisdiction_code_as_run_does(tmp_path):
    """A copied configuration whose ny.yaml pays 2 to 1 on a pair of jacks or better on the across, down and
    middle bets (the regulation's minimum is 1 to 1, NY 5324.39(f)(2): paying more is allowed). ``run --config``
    reads ``ny`` from the copy's jurisdictions folder (``service.jurisdiction_for``); ``settle --table`` must
    settle the same round with the same file.

    Worked by hand for ROUND (seat 3, JJ across and down, board high card): antes 1 to 1 (NY (f)(1), not edited)
    +500 +500; across 1500 and down 500 at the edited 2 to 1: +3000 +1000; middle 1500 at the odds of the
    higher winning hand, a pair of jacks, 2 to 1 (NY (e)(9)(ii)): +3000; the bonus loses (NY (f)(3)): -500.
    """
    from controller.service.opening import jurisdiction_for

    shutil.copytree(CONFIG_DIR, tmp_path / "config")
    ny = tmp_path / "config" / "jurisdictions" / "ny.yaml"
    text = ny.read_text()
    bet = text.index("  bet:\n")
    old = "      pair_jacks_or_better: 1\n"
    assert text.index(old, bet) < text.index("  five_card_bonus:\n")
    at = text.index(old, bet)
    ny.write_text(text[:at] + "      pair_jacks_or_better: 2\n" + text[at + len(old):])
    table = tmp_path / "config" / "table.yaml"
    edited_net = 500 + 500 + 2 * 1500 + 2 * 500 + 2 * 1500 - 500

    config = load_table_config(table)
    assert jurisdiction_for(config).source.resolve() == ny.resolve()  # what run uses
    assert jurisdiction_for(config).bet.pays["pair_jacks_or_better"] == 2

    proc = run(ROUND, "--table", str(table))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["seats"][0]["net"] == edited_net
    proc = run(ROUND)  # without a table: the repository's file, the regulation's odds
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["seats"][0]["net"] == NET


def test_settle_with_a_table_without_jurisdictions_folder_reads_codes_from_config(tmp_path):
    """A table file alone in its folder: codes come from config/ (as for run), the regulation's odds."""
    table = tmp_path / "table.yaml"
    shutil.copy(CONFIG_DIR / "table.yaml", table)
    proc = run(ROUND, "--table", str(table))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["seats"][0]["net"] == NET
