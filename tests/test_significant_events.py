"""The significant events of NY 9 NYCRR 5317.26: the catalogue (controller.round.significant) against its page
(docs/events.md) both ways, and every code raised by the round machine and the service into a real journal.

The rounds are driven input by input (tests/round_helpers.py) and each input is committed with its outputs, as
the service's controller thread commits them (controller.service.loop), to a journal carrying the service's
hook (controller.service.significance.Significance). Which event each record is comes from the text of the
catalogue's page, read here on its own: the test compares the ``SignificantEvent`` records the journal holds
with what the page says their source records are.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from controller.game.payout import PayoutConfig
from controller.game.table import load_table_config
from controller.journal.reader import read_records, rounds_ended
from controller.journal.recovery import replay
from controller.journal.store import Journal
from controller.round import commands as cmd
from controller.round.inputs import JournalDamaged, JournalWhole, OperatorAction, ServiceStarted
from controller.round.machine import Round
from controller.round.significant import BY_NUMBER, CATALOGUE, SEVERITIES, code_of
from controller.service.loop import fields_of
from controller.service.significance import Significance
from drivers import events as ev
from tests.round_helpers import CONFIG, NY, TableDriver, antes

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "events.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| (\d{4}) \| ([^|]+?) \| (tilt|error|information) \| ([^|]+?) \| ([^|]+?) \|$", re.M)
CHECKED = dataclasses.replace(CONFIG, payout=PayoutConfig(check=True))
CROSS = ("9c", "4h", "8d", "5s", "2c")
HANDS = {1: ("7c", "7d"), 6: ("Jh", "Js")}
WAGERS = {1: antes(500), 6: antes(500, bonus=100)}
SEAT_6 = {"ante_across": 1000, "ante_down": 1000, "across": 1000, "down": 1000, "middle": 1000}
SEAT_1 = {"ante_across": 500, "ante_down": 500, "across": 500, "down": 500, "middle": 500}


def page_rows() -> dict[int, tuple[str, str, str, str]]:
    """The page's table: code -> (name, severity, what to do, source record), as written."""
    rows = {}
    for number, name, severity, action, source in ROW.findall(PAGE):
        assert int(number) not in rows, f"docs/events.md lists {number} twice"
        rows[int(number)] = (name, severity, action, source.strip("`"))
    return rows


def test_the_page_and_the_catalogue_list_the_same_codes_names_and_severities():
    rows = page_rows()
    assert len(rows) >= 30
    assert sorted(rows) == sorted(BY_NUMBER)  # every code of the page is in the module and the other way round
    for code in CATALOGUE:
        name, severity, action, source = rows[code.number]
        assert (name, severity, source) == (code.name, code.severity, code.source), code.number
        assert action == code.action, code.number
        assert code.severity in SEVERITIES
    assert len({code.name for code in CATALOGUE}) == len(CATALOGUE)


def expected_code(record: dict[str, Any]) -> int | None:
    """The code the page gives a journal record, read from the page's "record" column alone: ``Type``,
    ``FaultRaised cause C`` (else ``FaultRaised of any other cause``), ``Irregularity kind K`` (past-posting split
    into chips added and chips taken)."""
    by_source = {source: number for number, (_, _, _, source) in page_rows().items()}
    type_, data = record["type"], record["data"]
    if type_ == "FaultRaised":
        return by_source.get(f"FaultRaised cause {data['cause']}", by_source["FaultRaised of any other cause"])
    if type_ == "Irregularity":
        if data["kind"] == "past_posting":
            taken = data["detail"]["new"] < data["detail"]["locked"]
            return by_source[f"Irregularity kind past_posting, chips {'taken' if taken else 'added'}"]
        return by_source.get(f"Irregularity kind {data['kind']}")
    return by_source.get(type_)


class JournaledTable(TableDriver):
    """A ``TableDriver`` whose every input is committed with its outputs to ``journal``, as the service does."""

    def __init__(self, journal: Journal, machine: Round) -> None:
        super().__init__(machine)
        self.journal = journal

    def send(self, event: Any) -> list[Any]:
        round_no = self.machine.round_no
        out = super().send(event)
        entries = [("event", type(event).__name__, fields_of(event), round_no)]
        entries += [("command" if isinstance(o, cmd.DEVICE_COMMANDS) else "record", type(o).__name__, fields_of(o),
                     getattr(o, "round_no", self.machine.round_no)) for o in out]
        self.journal.commit(entries)
        return out

    def supervisor(self, action: str, **fields: Any) -> list[Any]:
        return self.send(OperatorAction(action, "sue", "supervisor", **fields))

    def clear(self) -> list[Any]:
        """A supervisor clears the fault; the sensors answer the reading the round asks for as it resumes."""
        out = self.supervisor("clear_fault")
        return out + (self.answer_read() if any(isinstance(o, cmd.ReadSpots) for o in out) else [])


class SteppingClock:
    """A wall clock and a monotonic clock for a journal; ``step`` moves the wall clock alone by an hour."""

    def __init__(self) -> None:
        self.us = 1_700_000_000_000_000
        self.wall_offset = 0

    def wall(self) -> str:
        self.us += 1000
        seconds, us = divmod(self.us + self.wall_offset, 1_000_000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{us // 1000:03d}Z"

    def mono(self) -> int:
        return self.us


def _round_with_every_fault(table: JournaledTable, clock: SteppingClock) -> None:
    """One round with each resumable fault raised and cleared, the devices lost and back (one replaced),
    past-posting and pinching, a mispay accepted; then rounds ended by faults a supervisor can only void."""
    table.send(ServiceStarted("table", "test"))
    table.start()
    table.send(ev.ShoeBootCount(7))
    table.send(ev.SupervisorKey(True, "SUP-1"))
    table.open_betting()
    table.lock(WAGERS)
    table.move_chips(1, "ante_across", 600)  # chips added after the lock: past-posting
    table.move_chips(6, "ante_down", 400)  # taken: pinching
    table.supervisor("acknowledge")
    table.move_chips(1, "ante_across", 500)
    table.move_chips(6, "ante_down", 500)
    for cause in ("jam", "misfeed", "unreadable_card", "empty", "door_open", "timeout", "sensor_fault_9"):
        table.send(ev.DeviceFault("shoe" if cause != "sensor_fault_9" else "sensors", cause, "card 4d in the gate"))
        assert table.state == "fault", cause
        if cause == "door_open":  # the shoe says its door is shut: the round stays held for the supervisor
            assert table.send(ev.ShoeDoorClosed()) == []
            assert table.state == "fault"
        table.clear()
    for cause in ("link_lost", "handshake", "flooding"):
        table.send(ev.DeviceFault("sensors", cause))
        table.send(ev.DeviceReady("sensors", "SENSORS-2" if cause == "flooding" else "sensors-test", "1.0", 1))
        table.clear()
    table.send(ev.DeviceFault("reader", "link_lost"))  # the optional card reader
    clock.wall_offset += 3_600_000_000
    table.deal(CROSS, HANDS)
    for step in ("across", "down", "middle"):
        table.decide(step, {1: 500, 6: 500})
        table.reveal()
    table.layout[6] = {**SEAT_6, "middle": 900}
    table.press("paid")
    table.answer_read()
    table.supervisor("accept_mispay", reason="player agreed")
    table.layout[1] = dict(SEAT_1)
    table.press("paid")
    table.answer_read()
    assert table.state == "closed"
    # rounds only a void ends
    table.place({})
    table.open_betting(shuffle_count=51)  # card count mismatch at the shuffle
    table.supervisor("void_round", code="device")
    for fault in ("protocol", "internal", "size", "stack_malformed", "shoe_restarted", "restart", "mismatch"):
        table.place({})
        table.open_betting()
        table.lock(WAGERS)
        if fault == "size":
            table.answer_dispense(CROSS[:3])
        elif fault == "shoe_restarted":
            table.send(ev.ShoeBootCount(8))
        elif fault == "restart":
            table.send(ServiceStarted("table", "test"))
            table.start()
        elif fault == "mismatch":
            table.answer_dispense(CROSS)  # the cross dealt, then the service restarts; the shoe forgot it
            table.send(ServiceStarted("table", "test"))
            table.start(shoe_txn=0)
        else:
            table.send(ev.DeviceFault("shoe", fault))
        assert table.state == "fault", fault
        table.supervisor("void_round", code="device")
        assert table.state == "voided", fault
        if fault == "internal":  # the shoe's driver stopped: the shoe is away until it answers its handshake
            table.send(ev.DeviceReady("shoe", "shoe-test", "1.0", 1))
            table.send(ev.ShoeLastDispense(0, ()))
    table.send(JournalDamaged("*** in database main ***"))
    table.send(JournalWhole())
    # the table's locks and test mode (controller/round/table_locks.py)
    table.supervisor("disable_table", code="maintenance", reason="felt replaced")
    table.supervisor("enter_test_mode")
    table.supervisor("leave_test_mode")
    table.supervisor("enable_table")


def round_codes(tmp_path: Path) -> tuple[set[int], list[dict[str, Any]]]:
    """The codes journaled by ``_round_with_every_fault``, and the journal's records."""
    clock = SteppingClock()
    journal = Journal(tmp_path / "round.db", clock=clock.wall, monotonic=clock.mono, fsync=False)
    journal.derive = Significance("T1", {"shoe": "shoe-test", "sensors": "sensors-test", "panel": "panel-test"})
    try:
        _round_with_every_fault(JournaledTable(journal, Round(CHECKED, NY)), clock)
    finally:
        journal.close()
    records = read_records(tmp_path / "round.db")
    return {r["data"]["code"] for r in records if r["type"] == "SignificantEvent"}, records


def test_each_record_the_page_names_gets_its_event_in_the_same_commit_and_no_other(tmp_path):
    _, records = round_codes(tmp_path)
    by_seq = {r["seq"]: r for r in records}
    events = {r["data"]["source_seq"]: r for r in records if r["type"] == "SignificantEvent"}
    for record in records:
        if record["type"] == "SignificantEvent":
            continue
        number = expected_code(record)
        if number is None:
            assert record["seq"] not in events, record
            continue
        event = events[record["seq"]]
        assert event["data"] == {"code": number, "name": BY_NUMBER[number].name,
                                 "severity": BY_NUMBER[number].severity, "table": "T1", "source_seq": record["seq"],
                                 "source": record["type"]}
        assert event["round"] == record["round"] and event["time"] >= record["time"]
        # the event follows its record in the same commit (one input each here): no later input between them;
        # the journal's ClockStepped comes first in its commit, before the commit's input
        between = [by_seq[s] for s in range(record["seq"] + 1, event["seq"])]
        assert all(r["kind"] != "event" for r in between[1 if record["type"] == "ClockStepped" else 0:])
    # the hook's own records are passed over by replay: the round machine's journal replays whole
    assert replay(records, CHECKED, NY).missing == []


def test_a_device_answering_with_another_identity_is_journaled_as_replaced(tmp_path):
    _, records = round_codes(tmp_path)
    replaced = [r for r in records if r["type"] == "DeviceReplaced"]
    # SENSORS-2 answered once, then the first board again at the next start: two replacements, nothing else
    assert [r["data"] for r in replaced] == [
        {"device": "sensors", "device_id": "SENSORS-2", "previous": "sensors-test"},
        {"device": "sensors", "device_id": "sensors-test", "previous": "SENSORS-2"}]


def test_no_event_carries_a_card_or_a_devices_own_text(tmp_path):
    _, records = round_codes(tmp_path)
    from controller.control.server import public_record

    for record in records:
        if record["type"] in ("SignificantEvent", "DeviceReplaced"):
            public = public_record(record)
            assert public is not None and public["data"] == record["data"]
            assert "4d" not in str(record["data"]) and "gate" not in str(record["data"])


def test_code_of_splits_faults_by_cause_and_irregularities_by_kind():
    assert code_of("FaultRaised", {"cause": "jam"}).number == 3001
    assert code_of("FaultRaised", {"cause": "no_such_cause"}).number == 4007
    assert code_of("Irregularity", {"kind": "past_posting", "detail": {"locked": 500, "new": 700}}).number == 4004
    assert code_of("Irregularity", {"kind": "past_posting", "detail": {"locked": 500, "new": 0}}).number == 4005
    assert code_of("Irregularity", {"kind": "invalid_wager", "detail": {}}) is None
    assert code_of("StackDealt", {"cards": ["Ah"]}) is None
    assert code_of("FaultRaised", None) is None


# ---------------------------------------------------------------------------------------------------------- service
def _run(config_path: Path, journal: Path, rounds: int = 1) -> int:
    from controller.cli.parts import SERVICE_PARTS
    from controller.service.assembly import run_service

    return run_service(load_table_config(config_path), simulate=True, rounds=rounds, seed=5, journal_path=journal,
                       quiet=True, parts=SERVICE_PARTS)


def service_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[dict[str, Any]]]:
    """Codes journaled, in order, by: a run; a run killed (SIGKILL) after its first round; a run after it, with
    the configuration edited and the software's digest another."""
    from controller.service import assembly

    folder = tmp_path / "config"
    folder.mkdir()
    table = folder / "table.yaml"
    table.write_text((ROOT / "config" / "table.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    journal = tmp_path / "simulated.db"
    assert _run(table, journal) == 0
    proc = subprocess.Popen([sys.executable, "-m", "controller", "run", "--simulate", "--seed", "6", "--quiet",
                             "--config", str(table), "--journal", str(journal)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and rounds_ended(journal) < 2 and proc.poll() is None:
        time.sleep(0.05)
    proc.kill()
    proc.wait(30)
    assert rounds_ended(journal) >= 2
    table.write_text(table.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    real = assembly.verified_software_identity
    monkeypatch.setattr(assembly, "verified_software_identity",
                        lambda: dataclasses.replace(real(), digest="0" * 64))
    assert _run(table, journal) == 0
    records = read_records(journal)
    return [r["data"]["code"] for r in records if r["type"] == "SignificantEvent"], records


def test_the_service_journals_its_starts_stops_a_crash_and_what_changed(tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="controller.service.significance")
    codes, records = service_codes(tmp_path, monkeypatch)
    starts = [r for r in records if r["type"] == "ServiceStarted"]
    assert len(starts) == 3 and all(len(s["data"]["software"]) == 64 for s in starts)
    assert starts[0]["data"]["config_sha256"] == starts[1]["data"]["config_sha256"] != starts[2]["data"]["config_sha256"]
    assert codes.count(1001) == 3 and codes.count(1002) == 2  # the killed run never stopped
    assert codes.count(1003) == 1 and codes.count(1005) == 1 and codes.count(1006) == 1
    assert codes.count(2001) == 9  # three devices at each start
    last_start = starts[-1]["seq"]
    seen = [r for r in records if r["type"] in ("UncleanStopSeen", "SoftwareChanged", "ConfigurationChanged")]
    assert all(r["seq"] < last_start for r in seen)  # in the start's commit, before the ServiceStarted
    assert seen[0]["data"]["last_type"] not in ("ServiceStopped", "SignificantEvent")
    assert seen[1]["data"] == {"sha256": "0" * 64, "previous": starts[1]["data"]["software"]}
    assert seen[2]["data"] == {"sha256": starts[2]["data"]["config_sha256"],
                               "previous": starts[1]["data"]["config_sha256"]}
    assert any(re.match(r"event 1003 UncleanStopSeen power loss", m) for m in caplog.messages)
    assert any(r.levelno == logging.WARNING and r.getMessage().startswith("event 1006 ") for r in caplog.records)


def admission_codes(tmp_path: Path) -> list[int]:
    """Codes journaled by a supervisor's admissions on a journal: ``journal reanchor`` of a journal whose last
    record was cut, then ``journal add-key``."""
    from tests.cli_helpers import crisscross
    from tests.journal_helpers import forge

    from controller.journal.key import init_key
    from controller.journal.store import Journal

    path = tmp_path / "admitted.db"
    journal = Journal(path)
    for button in ("open_betting", "reveal"):
        journal.commit([("event", "ButtonPressed", {"button": button}, None)])
    journal.close()
    forge(path, ("DELETE FROM records WHERE seq = 2", ()))
    init_key(tmp_path / "admitted.key")
    for command in (["reanchor"], ["add-key", "--key", str(tmp_path / "admitted.key")]):
        proc = crisscross("journal", *command, "--journal", str(path), "--by", "alice", "--reason", "inquiry 7")
        assert proc.returncode == 0, proc.stderr
    return [r["data"]["code"] for r in read_records(path) if r["type"] == "SignificantEvent"]


def operator_runs(tmp_path: Path) -> list[dict[str, Any]]:
    """The records of three runs of a table with its control interface on: the first with one operator, the
    second after another was added (``crisscross operator add``) with nothing else changed, the third with the
    file unchanged."""
    from controller.control.operators import add_operator

    folder = tmp_path / "with-control"
    folder.mkdir()
    table = folder / "table.yaml"
    text = (ROOT / "config" / "table.yaml").read_text(encoding="utf-8")
    assert "control:\n  enabled: false\n  host: 127.0.0.1\n  port: 8740" in text
    table.write_text(text.replace("control:\n  enabled: false\n  host: 127.0.0.1\n  port: 8740",
                                  "control:\n  enabled: true\n  host: 127.0.0.1\n  port: 0"), encoding="utf-8")
    journal = folder / "journal.db"
    add_operator(folder / "operators.yaml", "sue", "supervisor", "sue-password-1", iterations=200_000)
    assert _run(table, journal) == 0
    add_operator(folder / "operators.yaml", "dan", "dealer", "dan-password-1", iterations=200_000)
    assert _run(table, journal) == 0
    assert _run(table, journal) == 0
    return read_records(journal)


def test_a_start_journals_who_may_act_when_it_changed_since_the_last_one(tmp_path):
    """``operator add`` gave a new supervisor every right with nothing in the journal: a start that reads the
    operators file with other names or roles than the last journaled journals ``OperatorsChanged`` (names and
    roles, never a hash) in its commit, with its significant event 1007 (docs/events.md); an unchanged file,
    nothing."""
    from controller.round.inputs import roster_sha256

    records = operator_runs(tmp_path)
    changes = [r for r in records if r["type"] == "OperatorsChanged"]
    starts = [r["seq"] for r in records if r["type"] == "ServiceStarted"]
    first, second = ((("sue", "supervisor"),), (("dan", "dealer"), ("sue", "supervisor")))
    assert [c["data"] for c in changes] == [
        {"operators": [list(p) for p in first], "sha256": roster_sha256(first), "previous": ""},
        {"operators": [list(p) for p in second], "sha256": roster_sha256(second), "previous": roster_sha256(first)}]
    assert starts[0] > changes[0]["seq"] and starts[1] > changes[1]["seq"] > starts[0]  # each in its start's commit
    events = [r for r in records if r["type"] == "SignificantEvent" and r["data"]["source"] == "OperatorsChanged"]
    assert [(e["data"]["code"], e["data"]["source_seq"]) for e in events] == [(1007, c["seq"]) for c in changes]
    assert "pbkdf2" not in json.dumps([c["data"] for c in changes])


def test_every_code_of_the_catalogue_is_raised(tmp_path, monkeypatch):
    raised, _ = round_codes(tmp_path)
    codes, _ = service_codes(tmp_path, monkeypatch)
    raised |= set(codes) | set(admission_codes(tmp_path))
    raised |= {r["data"]["code"] for r in operator_runs(tmp_path) if r["type"] == "SignificantEvent"}
    assert sorted(set(BY_NUMBER) - raised) == []
    assert raised <= set(BY_NUMBER)


def test_the_compliance_rows_of_5317_26_name_code_and_tests_that_exist():
    import ast
    import importlib

    text = (ROOT / "docs" / "compliance.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith(("| NY 5317.26", "| GLI-11"))]
    assert len(rows) == 4
    refs = re.findall(r"`(tests/[a-z0-9_]+\.py)::([A-Za-z0-9_]+)`", "\n".join(rows))
    code = re.findall(r"`([a-z_]+(?:\.[a-z_]+)+):([A-Za-z_][A-Za-z0-9_.]*)`", "\n".join(rows))
    assert len(refs) >= 7 and len(code) >= 6
    for path, name in refs:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        assert name in {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}, (path, name)
    for module, name in code:
        assert getattr(importlib.import_module(module), name) is not None
