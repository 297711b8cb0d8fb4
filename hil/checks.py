"""Checks of a journal, from the journal alone (and, when given, the shoe's own record of what it dealt).

Each check returns discrepancies as text; an empty list means the journal proves the property. Sources: card
accounting 5 + 2 x wagering seats per round in the regulated order (NY 9 NYCRR 5324.39(d)(2); dealt by hand,
(d)(1): the cards as entered, ``controller.journal.recall``); no card before
"no more bets" (NY (c)(3)); decisions from the dealer's left clockwise (PA 58 Pa. Code 674a.11(b),(d),(f));
settlement from the dealer's right counterclockwise (NY (e)(9), PA (g)); every wager settled exactly once and
money conserved; every settlement equal to what ``crisscross settle`` computes for that round.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.game.cards import DECK
from controller.journal.chain import verify_journal
from controller.journal.meters_audit import audit, last_checkpoint
from controller.journal.reader import iter_records
from controller.journal.recall import RoundRecord, rounds_from_records


def settle_input(rnd: RoundRecord, jurisdiction: str) -> dict[str, Any]:
    """The ``crisscross settle`` input for a journaled round: the cross, each seat's cards and final wagers."""
    cross = rnd.cross
    assert cross is not None
    seats = []
    for seat in sorted(set(rnd.wagers) - {held["seat"] for held in rnd.held}):  # a held seat was not settled
        wagers = rnd.placed_wagers(seat)
        seats.append({"seat": seat, "cards": list(rnd.seat_cards(seat) or ()), "wagers": wagers})
    return {"jurisdiction": jurisdiction,
            "community": {"across": list(cross[0:2]), "down": list(cross[2:4]), "middle": cross[4]},
            "seats": seats}


def check_voided(rnd: RoundRecord, records: Sequence[dict[str, Any]]) -> list[str]:
    """Check a voided round: dealt in the regulated order as far as it went, no card before the lock, nothing
    settled, every wager placed returned exactly once (``RoundVoided`` lists each seat's placed wagers), and
    totals that return all of it."""
    problems: list[str] = []
    where = f"round {rnd.round_no} (voided)"
    seats = sorted(rnd.wagers)
    types = [r["type"] for r in records]
    if "RoundClosed" in types or rnd.settlements:
        problems.append(f"{where}: settled or closed as well as voided")
    if types.count("RoundVoided") != 1:
        problems.append(f"{where}: voided {types.count('RoundVoided')} times")
    expected_plan = [(0, None, 5)] + [(i + 1, seat, 2) for i, seat in enumerate(seats)]
    plan = [(stack, seat, len(cards)) for stack, seat, cards in rnd.stacks]
    if plan != expected_plan[:len(plan)]:
        problems.append(f"{where}: stacks dealt {plan}, expected a beginning of {expected_plan}")
    cards = [c for _, _, stack in rnd.stacks for c in stack]
    if len(set(cards)) != len(cards) or not set(cards) <= set(DECK):
        problems.append(f"{where}: {len(cards)} cards dealt, {len(set(cards))} distinct")
    if "Dispense" in types and ("WagersLocked" not in types or types.index("Dispense") < types.index("WagersLocked")):
        problems.append(f"{where}: a card was dispensed before the wagers were locked")
    voided = rnd.voided or {}
    returned = {entry["seat"]: entry["wagers"] for entry in voided.get("seats", ())}
    placed = {seat: rnd.placed_wagers(seat) for seat in seats}
    if returned != placed:
        problems.append(f"{where}: wagers placed {placed} but returned {returned}")
    amount = sum(sum(w.values()) for w in placed.values())
    totals = rnd.totals or {}
    if (totals.get("wagered"), totals.get("returned"), totals.get("collected"), totals.get("paid")) != (
            amount, amount, 0, 0):
        problems.append(f"{where}: totals {totals}, expected {amount} wagered and returned, nothing collected")
    return problems


def check_round(rnd: RoundRecord, records: Sequence[dict[str, Any]]) -> list[str]:
    """Check one closed round's dealing, decisions, settlement and money (a voided one with ``check_voided``).
    ``records`` are the round's records."""
    problems: list[str] = []
    where = f"round {rnd.round_no}"
    seats = sorted(set(rnd.wagers) - {held["seat"] for held in rnd.held})  # held: left to a supervisor, unsettled
    if not rnd.closed:
        return [f"{where}: neither closed nor voided"]
    if rnd.voided is not None:
        return check_voided(rnd, records)
    if not seats:  # a no-play round: nobody wagered at "no more bets"; nothing may be dealt or settled
        totals = rnd.totals or {}
        if rnd.stacks or rnd.dispenses or rnd.settlements or any(totals.values()):
            return [f"{where}: a round without wagers dealt, settled or counted money: {totals}"]
        return []
    if len(set(rnd.settled_order)) != len(rnd.settled_order):
        problems.append(f"{where}: a seat settled twice: {rnd.settled_order}")
    # dealing: the cross first, then one stack of two per wagering seat, clockwise from the dealer's left
    expected_plan = [(0, None, 5)] + [(i + 1, seat, 2) for i, seat in enumerate(seats)]
    plan = [(stack, seat, len(cards)) for stack, seat, cards in rnd.stacks]
    if plan != expected_plan:
        problems.append(f"{where}: stacks dealt {plan}, expected {expected_plan}")
    cards = [c for _, _, stack in rnd.stacks for c in stack]
    if len(cards) != 5 + 2 * len(seats) or len(set(cards)) != len(cards) or not set(cards) <= set(DECK):
        problems.append(f"{where}: {len(cards)} cards dealt ({len(set(cards))} distinct), expected "
                        f"{5 + 2 * len(seats)} distinct cards")
    types = [r["type"] for r in records]
    if "Dispense" in types and ("WagersLocked" not in types or types.index("Dispense") < types.index("WagersLocked")):
        problems.append(f"{where}: a card was dispensed before the wagers were locked")
    # a request may be repeated after a fault or a restart (same transaction: the shoe deals it once), never
    # skipped or taken out of order
    asked = [d["stack"] for d in rnd.dispenses]
    in_order = [stack for i, stack in enumerate(asked) if i == 0 or stack != asked[i - 1]]
    if rnd.manual:  # dealt by hand: no shoe request; the cross, then one card each clockwise, twice (NY (d)(1))
        by_hand = [seat for _, seat, _ in rnd.placed]
        if asked or by_hand != [None, *sorted(rnd.wagers), *sorted(rnd.wagers)]:
            problems.append(f"{where}: dealt by hand to {by_hand} with shoe requests {asked}")
    elif in_order != list(range(len(seats) + 1)):
        problems.append(f"{where}: dispense requests {asked} out of order or skipping a stack")
    # decisions from the dealer's left, clockwise; only seats still in action; reveals in order, up to the step
    # after which nothing was left in action (every seat folded, no five-card bonus: NY 5324.39(e)(9))
    folded: set[int] = set()
    bonus = any("five_card_bonus" in rnd.placed_wagers(seat) for seat in seats)
    expected_reveals: list[str] = []
    for step in ("across", "down", "middle"):
        asked = [s for d, s, _, _ in rnd.decisions if d == step]
        expected = [s for s in seats if s not in folded]
        if asked != expected:
            problems.append(f"{where}: {step} decisions taken from seats {asked}, expected {expected}")
        folded |= {s for d, s, a, _ in rnd.decisions if d == step and a == "fold"}
        if not bonus and folded >= set(seats):
            break
        expected_reveals.append(step)
    if [step for step, _ in rnd.reveals] != expected_reveals:
        problems.append(f"{where}: reveals {[s for s, _ in rnd.reveals]}, expected {', '.join(expected_reveals)}")
    # settlement: every seat once, from the dealer's right; every wager placed settled exactly once
    if rnd.settled_order != sorted(seats, reverse=True):
        problems.append(f"{where}: seats settled in order {rnd.settled_order}, expected {sorted(seats, reverse=True)}")
    wagered = returned = collected = 0
    for seat in seats:
        placed = rnd.placed_wagers(seat)
        settled = rnd.settlements.get(seat, {}).get("wagers", {})
        if {k: v["amount"] for k, v in settled.items()} != placed:
            problems.append(f"{where}: seat {seat} placed {placed} but settled {settled}")
        for name, result in settled.items():
            amount, outcome, net = result["amount"], result["outcome"], result["net"]
            wagered += amount
            returned += amount if outcome in ("win", "push") else 0
            collected += amount if outcome == "lose" else 0
            if (outcome == "lose" and net != -amount) or (outcome == "push" and net != 0) or (
                    outcome == "win" and (net <= 0 or net % amount)):
                problems.append(f"{where}: seat {seat} {name}: outcome {outcome} with net {net} on {amount}")
    if wagered != returned + collected:
        problems.append(f"{where}: wagered {wagered} != returned {returned} + collected {collected}")
    totals = rnd.totals or {}
    if (totals.get("wagered"), totals.get("returned"), totals.get("collected")) != (wagered, returned, collected):
        problems.append(f"{where}: round totals {totals} disagree with the seats' settlements")
    return problems


def check_against_settle(rounds: Sequence[RoundRecord], jurisdiction: str = "ny") -> list[str]:
    """Run ``crisscross settle --lines`` (one separate process for all of ``rounds``, each a closed round that
    was not voided) on the journaled rounds and compare each seat's settlement with it."""
    if not rounds:
        return []
    batch = "".join(json.dumps(settle_input(rnd, jurisdiction)) + "\n" for rnd in rounds)
    proc = subprocess.run([sys.executable, "-m", "controller", "settle", "--lines"], input=batch,
                          capture_output=True, text=True, timeout=60 + len(rounds))
    answers = {}
    for text in proc.stdout.splitlines():
        answer = json.loads(text)
        answers[answer["line"]] = answer
    problems = []
    for line, rnd in enumerate(rounds, start=1):
        answer = answers.get(line)
        if answer is None or "error" in answer:
            refusal = answer["error"] if answer else f"no answer (exit {proc.returncode}: {proc.stderr.strip()[-300:]})"
            problems.append(f"round {rnd.round_no}: crisscross settle refused the journaled round: {refusal}")
            continue
        reference = {s["seat"]: s for s in answer["seats"]}
        for seat, settled in rnd.settlements.items():
            mine = {k: v for k, v in settled.items() if k != "folded_at"}
            if mine != reference.get(seat):
                problems.append(f"round {rnd.round_no}: seat {seat} settled {mine}, crisscross settle says "
                                f"{reference.get(seat)}")
    return problems


def check_payouts(rnd: RoundRecord) -> list[str]:
    """Check a closed round's payout check (when it has one: some ``PayoutChecked``): every settled seat was
    read, in settlement order, and its last reading matched or a supervisor accepted it; no round closes with
    an unaccepted difference."""
    if not (rnd.payout_checks or rnd.mispays_accepted) or rnd.voided is not None or not rnd.closed:
        return []
    problems = []
    order = [seat for i, seat in enumerate(c["seat"] for c in rnd.payout_checks)
             if i == 0 or rnd.payout_checks[i - 1]["seat"] != seat]
    if order != rnd.settled_order:
        problems.append(f"round {rnd.round_no}: seats checked in order {order}, settled {rnd.settled_order}")
    accepted = {m["seat"] for m in rnd.mispays_accepted}
    for seat in rnd.settled_order:
        checks = [c for c in rnd.payout_checks if c["seat"] == seat]
        if not checks or (checks[-1]["differences"] and seat not in accepted):
            problems.append(f"round {rnd.round_no}: seat {seat} closed with an unaccepted payout difference "
                            f"({checks[-1]['differences'] if checks else 'never read'})")
    return problems


def check_journal(path: Path, *, shoe_dispensed: Sequence[tuple[int, tuple[str, ...]]] | None = None,
                  jurisdiction: str = "ny", against_settle: bool = True) -> tuple[dict[int, RoundRecord], list[str]]:
    """Check every round of the journal at ``path`` (a store or a JSON-lines copy, streamed a round at a time);
    return the rounds and the discrepancies found, the meters' audit among them (``crisscross meters --audit``).

    ``shoe_dispensed``: the shoe simulator's own ``(txn_id, cards)`` record; every stack it dealt must be the
    journal's stack, in order, and none dealt twice. ``against_settle`` runs ``crisscross settle`` on every closed
    round that was not voided (one process for all).
    """
    problems = []
    _, broken = verify_journal(path)
    if broken:
        problems.append(f"journal chain: {broken}")
    rounds: dict[int, RoundRecord] = {}
    to_settle: list[RoundRecord] = []  # checked by one ``crisscross settle`` process at the end

    def check(number: int, records: list[dict[str, Any]]) -> None:
        if number in rounds:
            problems.append(f"round {number}: its records are not together in the journal")
            return
        rnd = rounds[number] = rounds_from_records(records)[number]
        problems.extend(check_round(rnd, records))
        problems.extend(check_payouts(rnd))
        if against_settle and rnd.closed and rnd.voided is None:
            to_settle.append(rnd)

    current: int | None = None
    records: list[dict[str, Any]] = []
    for record in iter_records(path):
        number = record.get("round")
        if not isinstance(number, int):
            continue
        if number != current and current is not None:
            check(current, records)
            records = []
        current = number
        records.append(record)
    if current is not None:
        check(current, records)
    problems.extend(check_against_settle(to_settle, jurisdiction))
    # the meters' snapshots and the last checkpoint's meters against the records (``crisscross meters --audit``)
    finding = audit(iter_records(path), last_checkpoint(path))
    if finding is not None:
        problems.append(f"meters differ at {finding}")
    if shoe_dispensed is not None:
        journaled = [cards for rnd in rounds.values() if not rnd.manual for _, _, cards in rnd.stacks]
        dealt = [tuple(cards) for _, cards in shoe_dispensed]
        if dealt != journaled:
            problems.append(f"shoe dealt {len(dealt)} stacks, the journal records {len(journaled)} (or they differ)")
        txns = [txn for txn, _ in shoe_dispensed]
        if len(set(txns)) != len(txns):
            problems.append("the shoe dealt a transaction twice")
    return rounds, problems


def wagers_lost(rounds_seen: dict) -> int:
    """Wagers placed (locked antes and bonus, decision bets) that were neither settled nor returned."""
    lost = 0
    for rnd in rounds_seen.values():
        returned = {e["seat"]: e["wagers"] for e in (rnd.voided or {}).get("seats", ())}
        for seat in rnd.wagers:
            accounted = set(rnd.settlements.get(seat, {}).get("wagers", {})) | set(returned.get(seat, {}))
            lost += len(set(rnd.placed_wagers(seat)) - accounted)
    return lost
