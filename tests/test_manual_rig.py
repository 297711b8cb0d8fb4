"""The shoe down and the table dealt by hand, end to end (NY 9 NYCRR 5324.39(d)(1)): the service in its own process,
the devices simulated behind real pseudo-terminals (``hil.rig``). Two rounds from the shoe, then the shoe is
unplugged (a fault between rounds), a supervisor switches to dealing by hand and clears the fault, two rounds are
dealt by hand with every card typed on the panel as it is turned, the shoe is plugged back, the supervisor
switches back and the next round opens with the shoe's shuffle check. The journal alone proves it
(``hil.checks``: card accounting, order, settlement against ``crisscross settle``)."""

from __future__ import annotations

import pytest

from controller.journal.reader import read_records
from controller.journal.recall import rounds_from_records
from hil.rig import run_rig

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def rig_run(tmp_path_factory):
    journal = tmp_path_factory.mktemp("rig-manual") / "journal.db"
    return run_rig(6, seed=5, journal=journal, manual_rounds=(2, 4), timeout=180), journal


@pytest.mark.slow
def test_shoe_fault_switch_manual_rounds_and_back_pass_every_journal_check(rig_run):
    result, journal = rig_run
    assert result.status == 0, result.stderr
    assert result.rounds_closed == 6 and result.rounds_voided == 0
    assert result.problems == []
    records = read_records(journal)
    rounds = rounds_from_records(records)
    assert [rounds[n].manual for n in sorted(rounds)] == [False, False, True, True, False, False]
    switches = [(r["data"]["mode"], r["data"]["role"]) for r in records if r["type"] == "DealingModeChanged"]
    assert switches == [("manual", "supervisor"), ("automated", "supervisor")]
    # the fault of the shoe taken away was cleared without the shoe once the table dealt by hand
    types = [r["type"] for r in records]
    lost = next(i for i, r in enumerate(records) if r["type"] == "FaultRaised" and r["data"]["cause"] == "link_lost")
    assert types.index("DealingModeChanged") > lost and "FaultCleared" in types[lost:]
    # rounds dealt by hand: no shoe command; every card dealt was entered, by whom, from the panel
    for number in (3, 4):
        rnd = rounds[number]
        assert not rnd.dispenses
        entered = [c for e in rnd.entries if e["target"].startswith("seat ") for c in e["cards"]]
        assert len(entered) == 2 * len(rnd.wagers) and {e["source"] for e in rnd.entries} == {"panel"}
        assert [seat for _, seat, _ in rnd.placed] == [None, *sorted(rnd.wagers), *sorted(rnd.wagers)]
    # back on the shoe: the round after the switch opens with a shuffle counted 52 before any stack
    back = [r for r in records if r["round"] == 5]
    shuffled = next(i for i, r in enumerate(back) if r["type"] == "ShuffleComplete")
    assert back[shuffled]["data"]["card_count"] == 52
    assert shuffled < next(i for i, r in enumerate(back) if r["type"] == "StackDealt")
