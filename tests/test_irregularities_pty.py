"""Each irregularity of the round run through real pseudo-terminals, ending resumed or voided as specified.

The service runs with the simulated devices and the simulated table, whose supervisor turns the panel key
when the table stalls: it clears a fault that may be resumed once its device is back, voids a round whose
cards can no longer be trusted, and acknowledges past-posting. Sources: domain.md ("faults", "game
protection"); NY 9 NYCRR 5324.39(c)(3) (no wager made, increased or withdrawn after "no more bets").
"""

from __future__ import annotations

import io
import threading
import time

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.journal.reader import read_records
from controller.journal.recall import rounds_from_records
from controller.service.assembly import Service
from hil.checks import check_journal


@pytest.fixture
def run_table(tmp_path):
    services = []

    def run(rounds, seed, before=None, during=None):
        service = Service(load_table_config(), simulate=True, rounds=rounds, seed=seed,
                          journal_path=tmp_path / "journal.db", out=io.StringIO(), parts=SERVICE_PARTS)
        services.append(service)
        if before is not None:
            before(service)
        helper = threading.Thread(target=during, args=(service,)) if during else None
        if helper:
            helper.start()
        status = service.run()
        if helper:
            helper.join()
        service.close()
        return status, read_records(tmp_path / "journal.db"), service

    yield run
    for service in services:
        service.close()


def _of(records, kind):
    return [r["data"] for r in records if r["type"] == kind]


@pytest.mark.parametrize("fault", ["jam", "misfeed", "unreadable_card", "empty", "door_open"])
def test_a_shoe_fault_during_the_deal_is_cleared_and_the_round_resumes(run_table, tmp_path, fault):
    """A shoe fault reported by the shoe during the deal: the round stops in ``fault`` naming the cause; the
    supervisor clears it, the same transaction is asked again and the round is dealt, played and settled."""
    status, records, service = run_table(2, 31, before=lambda s: s.sims["shoe"].inject(fault))
    assert status == 0
    assert [(f["cause"], f["resumable"]) for f in _of(records, "FaultRaised")] == [(fault, True)]
    assert [c["causes"] for c in _of(records, "FaultCleared")] == [[fault]]
    assert len(_of(records, "RoundClosed")) == 2 and not _of(records, "RoundVoided")
    _, problems = check_journal(tmp_path / "journal.db", shoe_dispensed=service.sims["shoe"].dispensed,
                                against_settle=False)
    assert problems == []


@pytest.mark.parametrize("says", [True, False], ids=["door-closed-sent", "shoe-without-door-closed"])
def test_the_shoe_door_shut_again_is_journaled_as_event_3011_and_the_supervisor_still_clears(run_table, tmp_path,
                                                                                               monkeypatch, says):
    """The shoe's door opened during the deal (FAULT door_open, event 3005) and shut by the person at the table:
    the shoe says DOOR_CLOSED (docs/protocol.md, "The door"), journaled as ``ShoeDoorClosed`` with its significant
    event 3011 "shoe door closed" (docs/events.md) in the same commit; it clears nothing and is no irregularity:
    the round stays held until the supervisor clears the fault, then it is dealt and settled. A shoe without
    DOOR_CLOSED plays the same rounds, the clearance the only record that the table went on."""
    from drivers.shoe.simulator import ShoeSimulator

    monkeypatch.setattr(ShoeSimulator, "sends_door_closed", says)
    status, records, service = run_table(2, 31, before=lambda s: s.sims["shoe"].inject("door_open"))
    assert status == 0
    seq = {r["type"]: r["seq"] for r in reversed(records)}  # each type's first record
    closed = [r for r in records if r["type"] == "ShoeDoorClosed"]
    events = {r["data"]["source_seq"]: r["data"] for r in records if r["type"] == "SignificantEvent"}
    assert [(f["cause"], f["resumable"]) for f in _of(records, "FaultRaised")] == [("door_open", True)]
    assert [(c["causes"], c["role"]) for c in _of(records, "FaultCleared")] == [(["door_open"], "supervisor")]
    if says:
        assert [(r["kind"], r["data"]) for r in closed] == [("event", {})]
        assert seq["FaultRaised"] < closed[0]["seq"] < seq["FaultCleared"]
        assert events[closed[0]["seq"]] == {"code": 3011, "name": "shoe door closed", "severity": "information",
                                            "table": load_table_config().table_id, "source_seq": closed[0]["seq"],
                                            "source": "ShoeDoorClosed"}
        # nothing of the round moved on the door's closing: no card asked for or dealt until the clearance
        between = {r["type"] for r in records if closed[0]["seq"] < r["seq"] < seq["FaultCleared"]}
        assert not between & {"Dispense", "StackDealt", "Irregularity"}, between
    else:
        assert closed == [] and 3011 not in {e["code"] for e in events.values()}
    assert not [i for i in _of(records, "Irregularity") if i["kind"] == "unknown_event"]
    assert len(_of(records, "RoundClosed")) == 2 and not _of(records, "RoundVoided")
    assert not service.sims["shoe"].door_open
    _, problems = check_journal(tmp_path / "journal.db", shoe_dispensed=service.sims["shoe"].dispensed,
                                against_settle=False)
    assert problems == []


def _corrupt_stack(monkeypatch, how):
    """Make the shoe simulator answer its second stack of the run wrongly (``how``: ``short`` or ``repeat``), each
    time it answers that dispense: a DISPENSE sent again (a loaded machine's retransmission) is answered with the
    same stack, so the stacks are told apart by their transaction, not by the calls."""
    from drivers.shoe import simulator

    original = simulator.protocol.encode_stack
    transactions: list[int] = []  # in the order first answered

    def encode(txn_id, cards, **options):
        if options:  # LAST, the answer to "what did you last do": as the shoe recorded it
            return original(txn_id, cards, **options)
        if txn_id not in transactions:
            transactions.append(txn_id)
        if len(transactions) == 1:
            simulator_first[:] = list(cards)
        elif txn_id == transactions[1]:
            cards = tuple(cards)[:-1] if how == "short" else (simulator_first[0], *tuple(cards)[1:])
        return original(txn_id, cards)

    simulator_first: list[str] = []
    monkeypatch.setattr(simulator.protocol, "encode_stack", encode)


@pytest.mark.parametrize("how, cause", [("short", "stack_size"), ("repeat", "card_count")])
def test_a_stack_that_cannot_be_trusted_voids_the_round(run_table, monkeypatch, how, cause):
    """A stack of the wrong size, or with a card already dealt in the round (5 + 2 x seats distinct cards):
    the round faults and cannot be resumed; the supervisor voids it, every locked wager is returned and the
    voiding is recorded with who did it and why; the next round is played normally."""
    _corrupt_stack(monkeypatch, how)
    status, records, _ = run_table(2, 32)
    assert status == 0
    faults = _of(records, "FaultRaised")
    assert [(f["cause"], f["resumable"]) for f in faults] == [(cause, False)]
    (voided,) = _of(records, "RoundVoided")
    (locked, *_) = _of(records, "WagersLocked")
    assert voided["round_no"] == 1 and voided["seats"] == locked["seats"]
    assert (voided["by"], voided["role"]) == ("SIM-SUPERVISOR", "supervisor") and cause in voided["reason"]
    assert voided["totals"]["returned"] == voided["totals"]["wagered"] > 0
    assert [c["round_no"] for c in _of(records, "RoundClosed")] == [2]
    assert not _of(records, "FaultCleared")


def test_sensors_that_stop_reporting_fault_the_round_until_they_answer_again(run_table):
    """A bet-sensor board that goes silent: no frame for ``link_silence_s`` is a lost link (heartbeat); the
    round waits in ``fault``; once the board answers a handshake again the supervisor clears and the round
    goes on. Nothing is lost: the journal checks pass."""
    def go_silent(service):
        deadline = time.monotonic() + 30
        while service.controller.rounds_closed < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        service.sims["sensors"].inject("silent", seconds=5.0)

    status, records, service = run_table(3, 33, during=go_silent)
    assert status == 0
    assert [(f["device"], f["cause"]) for f in _of(records, "FaultRaised")] == [("sensors", "link_lost")]
    assert len(_of(records, "FaultCleared")) == 1 and len(_of(records, "RoundClosed")) == 3


def test_past_posting_is_held_until_a_supervisor_acknowledges_and_the_locked_amount_stands(run_table):
    """NY (c)(3): a player adds chips to a locked ante while the round is in play. The controller records it
    (seat, spot, locked and new amounts), shows it on the panel, holds every dealer action until the supervisor
    acknowledges, and settles the locked amount."""
    moved = {}

    def past_post(service):
        """During the across decision (the simulated players are deciding), one of them adds chips to its
        locked ante."""
        sensors, decide = service.sims["sensors"], service.table._decide

        def deciding(step, hole, cross, bets):
            if not moved:
                seat, spot = next(key for key in sorted(sensors.amounts()) if key[1] == "ante_across")
                moved.update(seat=seat, locked=sensors.amounts()[(seat, spot)])
                sensors.place(seat, spot, moved["locked"] + 500)
            return decide(step, hole, cross, bets)

        service.table._decide = deciding

    status, records, service = run_table(1, 34, before=past_post)
    assert status == 0
    (irregularity,) = [i for i in _of(records, "Irregularity") if i["kind"] == "past_posting"]
    assert irregularity["detail"] == {"seat": moved["seat"], "spot": "ante_across", "locked": moved["locked"],
                                      "new": moved["locked"] + 500}
    (ack,) = _of(records, "PastPostingAcknowledged")
    assert ack["by"] == "SIM-SUPERVISOR" and ack["items"] == [irregularity["detail"]]
    types = [r["type"] for r in records]
    # no dealer action between the irregularity and its acknowledgement
    between = types[types.index("Irregularity"):types.index("PastPostingAcknowledged")]
    assert "DecisionMade" not in between and "CardsRevealed" not in between
    assert any(m.startswith("Past-posting seat") for m in service.sims["panel"].messages)
    rnd = rounds_from_records(records)[1]
    assert rnd.settlements[moved["seat"]]["wagers"]["ante_across"]["amount"] == moved["locked"]
