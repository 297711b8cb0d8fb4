"""The lifetime meters (controller/round/meters.py; NJ 13:69E-1.28C and 1.28P(e)) against what the journal says.

The expected values are counted here from the journal's own records, not with the meter code: the wagers from
the settlement JSON of each ``SeatSettled``, drop and win from each ``RoundClosed``'s totals (a second,
independent source: the round's own sums), the cards from the domain's card accounting (5 + 2 per wagering
seat in a round dealt from the shoe: NY 9 NYCRR 5324.39(d)(2)).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3

import pytest

from controller.journal.chain import verify_chain
from controller.journal.reader import read_records
from controller.journal.recovery import recover, replay
from controller.journal.store import Journal
from controller.round.meters import SNAPSHOT, WAGER_TYPES, Meters
from controller.service.meters_snapshot import MeterSnapshots, gaming_day
from tests.cli_helpers import crisscross
from tests.journal_helpers import forge, forge_checkpoint, rechain_store, replace_records
from controller.game.table import load_table_config
from tests.round_helpers import NY

#: The packaged table.yaml, as ``run --simulate`` plays it (the payout check on).
CONFIG = load_table_config()


def _run(journal, rounds, seed):
    result = crisscross("run", "--simulate", "--quiet", "--rounds", rounds, "--seed", seed, "--payout-errors", "0.3",
                        "--journal", journal)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A journal of 20 simulated rounds (with payout mistakes: the check catches them) and its records."""
    path = tmp_path_factory.mktemp("meters") / "journal.db"
    _run(path, 20, 7)
    return path, read_records(path)


def _independent(records):
    """The lifetime meters counted straight from the records (the module docstring's sources)."""
    wagers = {name: {"wagered": 0, "paid": 0, "taken": 0, "pushed": 0} for name in WAGER_TYPES}
    for record in records:
        if record["type"] == "SeatSettled":
            for name, result in record["data"]["settlement"]["wagers"].items():
                net = result["net"]
                wagers[name]["wagered"] += result["amount"]
                wagers[name]["paid"] += max(net, 0)
                wagers[name]["taken"] += -min(net, 0)
                wagers[name]["pushed"] += result["amount"] if result["outcome"] == "push" else 0
    closed = [r["data"]["totals"] for r in records if r["type"] == "RoundClosed"]
    seats = {r["round"]: len(r["data"]["seats"]) for r in records if r["type"] == "WagersLocked"}
    played = {r["round"] for r in records if r["type"] == "RoundClosed" and r["data"]["totals"]["wagered"]}
    return {"wagers": wagers, "rounds_closed": len(played),
            "rounds_no_play": sum(1 for t in closed if not t["wagered"]),
            "rounds_voided": sum(1 for r in records if r["type"] == "RoundVoided"),
            "drop": sum(t["wagered"] for t in closed), "win": -sum(t["player_net"] for t in closed),
            "cards_dispensed": sum(5 + 2 * seats[n] for n in played)}


def _checked(found, records):
    expected = _independent(records)
    assert found["wagers"] == expected["wagers"]
    for name in ("rounds_closed", "rounds_no_play", "rounds_voided", "drop", "win", "cards_dispensed"):
        assert found[name] == expected[name], name


def test_the_meters_equal_an_independent_sum_over_the_settlements(played):
    path, records = played
    result = crisscross("meters", "--journal", path, "--format", "json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    _checked(shown["lifetime"], records)
    assert shown["lifetime"]["rounds_closed"] == 20
    # the payout check caught the dealer's mistakes (PayoutChecked with differences), counted one by one
    caught = sum(1 for r in records if r["type"] == "PayoutChecked" and r["data"]["differences"])
    assert caught > 0 and shown["lifetime"]["mispays"]["caught"] == caught


def test_the_live_meters_the_checkpoint_and_a_replay_agree_with_the_records(played):
    path, records = played
    journal = Journal(path)
    try:
        live = journal.checkpoint.state["meters"]
        restored = recover(journal, CONFIG, NY).machine.meters
    finally:
        journal.close()
    upto = max(r["seq"] for r in records)
    assert restored == Meters.from_records(records, upto=upto)
    assert Meters.from_checkpoint(live) == Meters.from_records(records, upto=upto)
    assert replay(records, CONFIG, NY).machine.meters == Meters.from_records(records)


def test_a_restart_on_the_same_journal_carries_the_meters_on(tmp_path):
    path = tmp_path / "journal.db"
    _run(path, 3, 1)
    _run(path, 4, 2)
    records = read_records(path)
    shown = json.loads(crisscross("meters", "--journal", path, "--format", "json").stdout)
    assert shown["lifetime"]["rounds_closed"] == 7
    _checked(shown["lifetime"], records)
    assert shown["since"]["power_up"] == 4  # rounds since the second start
    starts = [r for r in records if r["type"] == SNAPSHOT and "ServiceStarted" in r["data"]["reasons"]]
    assert [s["data"]["meters"]["lifetime"]["rounds_closed"] for s in starts] == [0, 3]
    assert crisscross("meters", "--journal", path, "--audit").returncode == 0


def test_a_checkpoint_written_before_the_meters_restores_them_from_the_journal(played, tmp_path):
    path = tmp_path / "journal.db"
    shutil.copy(played[0], path)
    db = sqlite3.connect(path)
    rows = db.execute("SELECT seq, state FROM checkpoints").fetchall()
    db.close()
    old = [(json.dumps({k: v for k, v in json.loads(state).items() if k != "meters"}, separators=(",", ":"),
                       sort_keys=True), seq) for seq, state in rows]
    # as written before the meters were kept, and before checkpoints carried a digest
    forge(path, *(("UPDATE checkpoints SET state = ?, mac = NULL WHERE seq = ?", row) for row in old))
    journal = Journal(path)
    try:
        assert "meters" not in journal.checkpoint.state
        rebuilt = recover(journal, CONFIG, NY).machine.meters
    finally:
        journal.close()
    assert rebuilt == Meters.from_records(played[1])
    _checked(rebuilt.lifetime(), played[1])
    assert crisscross("meters", "--journal", path, "--audit").returncode == 0  # nothing to compare in those


def test_the_audit_passes_a_real_run_and_names_the_meter_of_an_altered_snapshot(played, tmp_path):
    path = tmp_path / "journal.db"
    shutil.copy(played[0], path)
    passed = crisscross("meters", "--journal", path, "--audit")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    records = read_records(path)
    snapshot = [r for r in records if r["type"] == SNAPSHOT][-1]
    snapshot["data"]["meters"]["lifetime"]["wagers"]["middle"]["paid"] += 500
    rechain_store(path, records)
    assert verify_chain(read_records(path)) is None  # the chain hides the edit: only the meters show it
    failed = crisscross("meters", "--journal", path, "--audit")
    assert failed.returncode == 1
    assert f"record {snapshot['seq']} (MetersSnapshot)" in failed.stdout
    assert "wagers.middle.paid" in failed.stdout


def _forge_checkpoint(path, change):
    """Apply ``change`` to the meters of the store's last checkpoint, its digest made again (what a forger with
    the file could do); return that checkpoint's seq."""
    db = sqlite3.connect(path)
    seq, state = db.execute("SELECT seq, state FROM checkpoints ORDER BY seq DESC LIMIT 1").fetchone()
    db.close()
    state = json.loads(state)
    change(state["meters"])
    forge_checkpoint(path, seq, json.dumps(state, separators=(",", ":"), sort_keys=True))
    return seq


@pytest.mark.parametrize("kept, shown", [(("counts", "rounds_voided"), "lifetime.rounds_voided"),
                                         (("since_shoe_service",), "since.shoe_service")])
def test_the_audit_names_a_checkpoint_whose_meters_were_altered(played, tmp_path, kept, shown):
    """The finding names the meter as ``crisscross meters`` shows it (its output and the snapshots say
    ``lifetime.*`` and ``since.*``), never by the checkpoint's own keys; the values are counted here from the
    records: the voided rounds, and the rounds ended since the shoe was last serviced (no door opened, one shoe:
    every round of the run)."""
    path = tmp_path / "journal.db"
    shutil.copy(played[0], path)

    def change(meters):
        holder = meters
        for key in kept[:-1]:
            holder = holder[key]
        holder[kept[-1]] += 1

    seq = _forge_checkpoint(path, change)
    records = [r for r in played[1] if r["seq"] <= seq]
    assert not [r for r in records if r["type"] == "DeviceFault" and r["data"]["code"] == "door_open"]
    assert len({r["data"]["device_id"] for r in records if r["type"] == "DeviceReady" and r["data"]["device"] == "shoe"}) == 1
    ended = {"lifetime.rounds_voided": sum(r["type"] == "RoundVoided" for r in records),
             "since.shoe_service": sum(r["type"] in ("RoundClosed", "RoundVoided") for r in records)}[shown]
    failed = crisscross("meters", "--journal", path, "--audit")
    assert failed.returncode == 1 and f"record {seq} (checkpoint)" in failed.stdout
    assert f"meter {shown}: {ended} recomputed from the records, {ended + 1} recorded" in failed.stdout
    assert "counts." not in failed.stdout and "since_" not in failed.stdout


def _checkpoint_before(path, seq):
    db = sqlite3.connect(path)
    (found,) = db.execute("SELECT max(seq) FROM checkpoints WHERE seq < ?", (seq,)).fetchone()
    db.close()
    return found


@pytest.mark.parametrize("altered", ["snapshot", "checkpoint"])
def test_an_audit_up_to_a_record_checks_the_snapshots_and_the_checkpoint_up_to_it(played, tmp_path, altered):
    """``--audit --at SEQ`` (docs/commands.md): the records and snapshots up to SEQ and the last checkpoint at or
    before it; an alteration after SEQ is not its business, one at SEQ is found. Past the last record: exit 2."""
    path = tmp_path / "journal.db"
    shutil.copy(played[0], path)
    records = read_records(path)
    if altered == "snapshot":
        last = _checkpoint_before(path, records[-1]["seq"] + 1)
        snapshot = [r for r in records if r["type"] == SNAPSHOT and r["seq"] < last][-1]  # a checkpoint after it
        snapshot["data"]["meters"]["lifetime"]["rounds_closed"] += 1
        rechain_store(path, records)  # the journal still verifies: the audit's own comparison must find it
        seq, where, meter = snapshot["seq"], "MetersSnapshot", "lifetime.rounds_closed"
    else:
        seq = _forge_checkpoint(path, lambda meters: meters["counts"]["mispays"].update(caught=10**6))
        where, meter = "checkpoint", "lifetime.mispays.caught"
    before = _checkpoint_before(path, seq)
    earlier = crisscross("meters", "--journal", path, "--audit", "--at", seq - 1)
    assert earlier.returncode == 0, earlier.stdout + earlier.stderr
    against = f"the checkpoint of record {before}" if before else f"no checkpoint at or before record {seq - 1}"
    assert (f"every meters snapshot up to record {seq - 1} agrees with the records; checked against "
            f"{against}") in earlier.stdout
    for at in ([seq], []):
        found = crisscross("meters", "--journal", path, "--audit", *(["--at", *at] if at else []))
        assert found.returncode == 1 and f"record {seq} ({where}): meter {meter}: " in found.stdout, found.stdout
    past = crisscross("meters", "--journal", path, "--audit", "--at", records[-1]["seq"] + 1)
    assert past.returncode == 2 and "past the journal's last record" in past.stderr


def test_the_text_output_says_when_no_fault_was_ever_raised(played):
    path, records = played
    assert not [r for r in records if r["type"] == "FaultRaised"]  # the run of the fixture: no fault
    lines = crisscross("meters", "--journal", path).stdout.splitlines()
    assert [line.split() for line in lines if line.startswith("lifetime.faults")] == [["lifetime.faults", "none"]]
    from controller.cli.meters import format_text

    meters = Meters()
    meters.feed("FaultRaised", {"device": "shoe", "cause": "jam"})
    faults = [line.split() for line in format_text(meters.to_json()).splitlines() if line.startswith("lifetime.faults")]
    assert faults == [["lifetime.faults.shoe.jam", "1"]]


@pytest.mark.parametrize("text", ["abc", "0", "-4", "2.5", ""])
def test_a_record_number_that_is_not_one_is_refused_naming_the_option_and_the_text(played, text):
    refused = crisscross("meters", "--journal", played[0], "--at", text)
    assert refused.returncode == 2
    assert f"argument --at: must be a positive record number, got {text!r}" in refused.stderr
    assert "record_number" not in refused.stderr and "positive_int" not in refused.stderr


def test_meters_at_a_record_counts_the_records_up_to_it(played):
    path, records = played
    first_close = next(r["seq"] for r in records if r["type"] == "RoundClosed")
    shown = json.loads(crisscross("meters", "--journal", path, "--at", first_close, "--format", "json").stdout)
    assert shown["lifetime"]["rounds_closed"] == 1
    _checked(shown["lifetime"], [r for r in records if r["seq"] <= first_close])
    assert "lifetime.drop" in crisscross("meters", "--journal", path).stdout


def test_past_posting_and_pinching_are_told_apart_and_counted_when_acknowledged():
    """NY 9 NYCRR 5324.39(c)(3): chips added after "no more bets" are past-posting, chips taken away pinching."""
    meters = Meters()
    meters.feed("Irregularity", {"round_no": 1, "kind": "past_posting",
                                 "detail": {"seat": 1, "spot": "ante_across", "locked": 500, "new": 1000}})
    meters.feed("Irregularity", {"round_no": 1, "kind": "past_posting",
                                 "detail": {"seat": 2, "spot": "ante_down", "locked": 500, "new": 0}})
    meters.feed("PastPostingAcknowledged", {"round_no": 1, "items": [
        {"seat": 2, "spot": "ante_down", "locked": 500, "new": 0}], "by": "sue", "role": "supervisor"})
    life = meters.lifetime()
    assert life["past_posting"] == {"caught": 1, "accepted": 0}
    assert life["pinching"] == {"caught": 1, "accepted": 1}


def test_shoe_service_and_power_up_reset_their_counters_and_nothing_else():
    meters = Meters()
    closed = {"round_no": 1, "totals": {"wagered": 1000, "returned": 0, "collected": 1000, "paid": 0,
                                        "player_net": -1000}}
    meters.feed("DeviceReady", {"device": "shoe", "device_id": "SHOE-1", "firmware": "1", "protocol": 1})
    meters.feed("RoundClosed", closed)
    meters.feed("DeviceReady", {"device": "shoe", "device_id": "SHOE-1", "firmware": "1", "protocol": 1})
    assert meters.since() == {"power_up": 1, "shoe_service": 1}  # the same shoe again: no service
    meters.feed("DeviceReady", {"device": "shoe", "device_id": "SHOE-2", "firmware": "1", "protocol": 1})
    assert meters.since() == {"power_up": 1, "shoe_service": 0}  # another shoe: replaced
    meters.feed("RoundClosed", closed)
    meters.feed("DeviceFault", {"device": "shoe", "code": "door_open", "detail": ""})
    meters.feed("ServiceStarted", {"mode": "table", "version": "", "config": "", "devices": {}})
    assert meters.since() == {"power_up": 0, "shoe_service": 0}
    assert meters.lifetime()["rounds_closed"] == 2
    assert Meters.from_checkpoint(json.loads(json.dumps(meters.checkpoint()))) == meters


def test_a_record_the_meters_cannot_read_is_named():
    with pytest.raises(ValueError, match="SeatSettled.*'pinball'"):
        Meters().feed("SeatSettled", {"seat": 1, "settlement": {"wagers": {
            "pinball": {"amount": 5, "outcome": "win", "net": 5}}}})
    with pytest.raises(ValueError, match="RoundClosed record without"):
        Meters().feed("RoundClosed", {"round_no": 1})


def test_the_gaming_day_closes_at_its_configured_start():
    """NJ 13:69E-1.28C: the meters at each gaming day's close; the day starts at table.yaml's
    ``gaming_day_start`` (06:00 by default) and is named by the date it began on."""
    start = dt.time(6, 0)
    assert gaming_day(dt.datetime(2026, 12, 2, 5, 59), start) == dt.date(2026, 12, 1)
    assert gaming_day(dt.datetime(2026, 12, 2, 6, 0), start) == dt.date(2026, 12, 2)
    now = [dt.datetime(2026, 12, 2, 5, 30)]
    snapshots = MeterSnapshots(start, lambda: now[0])
    assert snapshots.day_closed(Meters(), None) == []
    now[0] = dt.datetime(2026, 12, 2, 6, 1)
    (entry,) = snapshots.day_closed(Meters(), 9)
    assert entry[:2] == ("record", SNAPSHOT) and entry[3] == 9
    assert entry[2]["reasons"] == ["day_close"] and entry[2]["gaming_day"] == "2026-12-01"
    assert snapshots.day_closed(Meters(), 9) == []  # once per day


def test_the_gaming_day_start_is_read_from_table_yaml(tmp_path):
    from controller.settings.files import ConfigError

    text = CONFIG.source.read_text()
    path = tmp_path / "table.yaml"
    shutil.copytree(CONFIG.source.parent / "jurisdictions", tmp_path / "jurisdictions")
    path.write_text(text + '\ngaming_day_start: "04:30"\n')
    assert load_table_config(path).gaming_day_start == dt.time(4, 30)
    path.write_text(text + "\ngaming_day_start: 4:30\n")  # YAML 1.1 reads this as a number of minutes
    with pytest.raises(ConfigError, match="gaming_day_start"):
        load_table_config(path)
    path.write_text(text + '\ngaming_day_start: "25:00"\n')
    with pytest.raises(ConfigError, match="line .*gaming_day_start: expected a time of day"):
        load_table_config(path)
    assert load_table_config(CONFIG.source).gaming_day_start == dt.time(6, 0)


def test_the_metrics_serve_the_lifetime_meters_as_gauges_over_a_restart(tmp_path):
    """Prometheus gauges of the lifetime values (docs/operations.md, "Metrics"): unlike the counters of one
    process, they carry on over a restart on the same journal."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    from controller.cli.parts import SERVICE_PARTS
    from controller.service.assembly import Service

    for seed, expected in ((1, 2), (2, 4)):
        service = Service(CONFIG, simulate=True, rounds=2, seed=seed, journal_path=tmp_path / "j.db", quiet=True,
                          metrics_port=0, parts=SERVICE_PARTS)
        try:
            assert service.run() == 0
            text = urllib.request.urlopen(f"http://127.0.0.1:{service.metrics_port}/metrics", timeout=5).read()
        finally:
            service.close()
        families = {f.name: f for f in text_string_to_metric_families(text.decode())}
        rounds = {s.labels["outcome"]: s.value for s in families["crisscross_meter_rounds"].samples}
        assert rounds == {"closed": expected, "voided": 0, "no_play": 0, "test": 0}
        records = read_records(tmp_path / "j.db")
        wagered = sum(r["data"]["totals"]["wagered"] for r in records if r["type"] == "RoundClosed")
        assert families["crisscross_meter_drop_minor_units"].samples[0].value == wagered


def test_meters_of_a_journal_that_does_not_verify_are_shown_under_a_warning_and_fail_the_audit(played, tmp_path):
    """A settlement edited without re-chaining: the meters counted from it are not trusted silently (exit 1 and
    a warning, as ``crisscross recall``), and the audit fails on the chain before it compares any meter."""
    path = tmp_path / "journal.db"
    shutil.copy(played[0], path)
    records = read_records(path)
    settled = next(r for r in records if r["type"] == "SeatSettled")
    settled["data"]["seat"] += 10  # canonical still, its hash now wrong
    replace_records(path, records)
    shown = crisscross("meters", "--journal", path)
    assert shown.returncode == 1 and "does not verify" in shown.stdout and "does not verify" in shown.stderr
    audited = crisscross("meters", "--journal", path, "--audit")
    assert audited.returncode == 1 and "does not verify" in audited.stdout and "differ" not in audited.stdout


def test_meters_at_a_record_past_the_last_is_refused(played):
    path, records = played
    last = records[-1]["seq"]
    refused = crisscross("meters", "--journal", path, "--at", last + 1)
    assert refused.returncode == 2 and f"record {last + 1} is past the journal's last record, {last}" in refused.stderr
    assert crisscross("meters", "--journal", path, "--at", last).returncode == 0


def test_a_journal_cut_short_of_its_anchor_is_not_shown_as_clean_by_meters_recall_or_the_audit(played, tmp_path):
    """Its last round cut from the store, records, seals and checkpoints alike (the hash chain of what is left is
    whole): the anchor still names the last record, so ``crisscross journal verify`` says truncated, and so must
    every command that reads the journal (docs/commands.md: shown under a warning, exit 1); they checked the
    chain alone and showed the shorter journal as clean."""
    path = tmp_path / "journal.db"
    shutil.copy(played[0], path)
    for suffix in (".anchor",):
        shutil.copy(f"{played[0]}{suffix}", f"{path}{suffix}")
    records = read_records(path)
    last_round = records[-1]["round"]
    cut = min(r["seq"] for r in records if r["round"] == last_round) - 1
    forge(path, *((f"DELETE FROM {table} WHERE seq > ?", (cut,)) for table in ("records", "seals", "checkpoints")))
    verified = crisscross("journal", "verify", path)
    assert verified.returncode == 1 and f"the journal ends at record {cut}" in verified.stdout, verified.stdout
    for command in (["meters"], ["meters", "--audit"], ["recall", "--last", "1"], ["recall", "--alerts"]):
        shown = crisscross(*command, "--journal", path)
        assert shown.returncode == 1, (command, shown.stdout, shown.stderr)
        assert f"does not verify: line {cut}" in shown.stderr and "truncated" in shown.stdout, (command, shown.stdout)
