"""Rounds rebuilt from the journal's records: what was locked, dealt, decided, revealed and settled.

Used by the round summary, by the hardware-in-the-loop rig's checks and for game recall. Reads records only
(``controller.journal.store``, streamed or a round at a time), never the devices.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from controller.journal.alert_recall import alert_line


@dataclass
class RoundRecord:
    """One round as journaled. Amounts in minor units.

    ``wagers``: ``{seat: {wager: amount}}`` locked at "no more bets"; ``stacks``: ``(stack, seat, cards)`` in
    dealing order (stack 0 = the cross, seat None); ``dispenses``: the ``Dispense`` commands' data in order;
    ``decisions``: ``(decision, seat, action, amount)`` in order; ``reveals``: ``(step, cards)``;
    ``settlements``: ``{seat: SeatSettled.settlement}`` in settlement order; ``settled_order``: seats as settled;
    ``totals``: the ``RoundClosed`` (or ``RoundVoided``) totals (None while open); ``voided``: the
    ``RoundVoided`` data (who, why, the wagers returned) or None; ``irregularities``, ``faults``,
    ``faults_cleared``, ``acknowledgements`` (past-posting), ``exclusions`` (seats excluded at the lock),
    ``payout_checks`` (each reading of a paid seat: expected, seen, differences) and ``mispays_accepted``:
    their records' data, in order. A round dealt by hand (NY 9 NYCRR 5324.39(d)(1), ``controller.round.manual``) has
    ``manual`` True, its deal steps in ``placed`` (``(step, seat, by)``), its cards as entered in ``entries``
    (``CardsRecorded`` data: target, cards, by, role, source) and its held seats in ``held`` (``SeatHeld``
    data); ``mode_changes`` lists the ``DealingModeChanged`` data recorded after the round. Its ``stacks`` are
    the cards as entered, laid out as the shoe's would be (``_entered_stacks``): the cross (the community cards
    turned, then those entered never turned), then each seat's two cards in seat order (a held seat has none).
    """

    round_no: int
    wagers: dict[int, dict[str, int]] = field(default_factory=dict)
    stacks: list[tuple[int, int | None, tuple[str, ...]]] = field(default_factory=list)
    dispenses: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[tuple[str, int, str, int]] = field(default_factory=list)
    reveals: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    settlements: dict[int, dict[str, Any]] = field(default_factory=dict)
    settled_order: list[int] = field(default_factory=list)
    totals: dict[str, int] | None = None
    irregularities: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    voided: dict[str, Any] | None = None
    faults_cleared: list[dict[str, Any]] = field(default_factory=list)
    acknowledgements: list[dict[str, Any]] = field(default_factory=list)
    exclusions: list[dict[str, Any]] = field(default_factory=list)
    payout_checks: list[dict[str, Any]] = field(default_factory=list)
    mispays_accepted: list[dict[str, Any]] = field(default_factory=list)
    manual: bool = False
    placed: list[tuple[int, int | None, str]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    held: list[dict[str, Any]] = field(default_factory=list)
    mode_changes: list[dict[str, Any]] = field(default_factory=list)
    #: a round of test mode (``RoundOpened.test``, NY 9 NYCRR 5319.58)
    test: bool = False
    #: the times (ISO 8601) of the round's records, in journal order (its playing time:
    #: ``controller.journal.sessions``)
    times: list[str] = field(default_factory=list)

    @property
    def closed(self) -> bool:
        """True once the round ended: its ``RoundClosed`` or ``RoundVoided`` record is in."""
        return self.totals is not None

    @property
    def revealed(self) -> tuple[str, ...]:
        """The community cards turned face up, in turning order."""
        return tuple(c for _, cards in self.reveals for c in cards)

    @property
    def cross(self) -> tuple[str, ...] | None:
        """The five community cards in lay-out order (across, across, down, down, middle), once dealt."""
        return next((cards for stack, _, cards in self.stacks if stack == 0), None)

    def placed_wagers(self, seat: int) -> dict[str, int]:
        """Every wager ``seat`` placed in the round: the locked antes and bonus plus each decision bet."""
        placed = dict(self.wagers.get(seat, {}))
        placed.update({d: amount for d, s, action, amount in self.decisions if s == seat and action == "bet"})
        return placed

    def seat_cards(self, seat: int) -> tuple[str, ...] | None:
        """The two cards dealt to ``seat`` (face-down information: for supervisors and checks)."""
        return next((cards for _, s, cards in self.stacks if s == seat), None)


#: Record types kept as lists of their data on ``RoundRecord``, by attribute.
LISTED: dict[str, str] = {"Irregularity": "irregularities", "FaultRaised": "faults", "FaultCleared": "faults_cleared",
                          "PastPostingAcknowledged": "acknowledgements", "SeatExcluded": "exclusions",
                          "PayoutChecked": "payout_checks", "MispayAccepted": "mispays_accepted",
                          "CardsRecorded": "entries", "SeatHeld": "held", "DealingModeChanged": "mode_changes"}

#: Every record type ``rounds_from_records`` reads (a reader that wants rounds only may ask the store for these).
ROUND_TYPES = frozenset({"WagersLocked", "WagersHeld", "StackDealt", "Dispense", "DecisionMade", "CardsRevealed",
                         "SeatSettled", "RoundClosed", "RoundVoided", "ManualRound", "RoundOpened",
                         "CardPlacedByHand", *LISTED})


def rounds_from_records(records: list[dict[str, Any]]) -> dict[int, RoundRecord]:
    """Group journal records into ``RoundRecord`` objects keyed by round number, in journal order (records of
    a type outside ``ROUND_TYPES`` count only for ``RoundRecord.times``). Raises ``ValueError`` naming the
    record for one without a field its type holds (a journal edited by hand: ``journal verify`` says where)."""
    rounds: dict[int, RoundRecord] = {}
    for record in records:
        number = record.get("round")
        if not isinstance(number, int):
            continue
        try:
            _take(rounds.setdefault(number, RoundRecord(number)), record)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ValueError(f"record {record.get('seq')} ({record.get('type')}): not a record of its type as the "
                             f"service writes it: {exc!r}") from None
    for rnd in rounds.values():
        if rnd.manual:
            rnd.stacks = _entered_stacks(rnd)
    return rounds


def _take(rnd: RoundRecord, record: dict[str, Any]) -> None:
    """Add one journal ``record`` of round ``rnd`` to it (``rounds_from_records``)."""
    kind, data = record.get("type"), record.get("data", {})
    if isinstance(record.get("time"), str):
        rnd.times.append(record["time"])
    if kind in ("WagersLocked", "WagersHeld"):  # held: the valid seats are locked while others are corrected
        rnd.wagers = {entry["seat"]: dict(entry["wagers"]) for entry in data["seats"]}
    elif kind == "StackDealt":
        rnd.stacks.append((data["stack"], data["seat"], tuple(data["cards"])))
    elif kind == "Dispense" and record.get("kind") == "command":
        rnd.dispenses.append(dict(data))
    elif kind == "DecisionMade":
        rnd.decisions.append((data["decision"], data["seat"], data["action"], data["amount"]))
    elif kind == "CardsRevealed":
        rnd.reveals.append((data["step"], tuple(data["cards"])))
    elif kind == "SeatSettled":
        rnd.settlements[data["seat"]] = data["settlement"]
        rnd.settled_order.append(data["seat"])
    elif kind == "RoundClosed":
        rnd.totals = dict(data["totals"])
    elif kind == "RoundVoided":
        rnd.voided = dict(data)
        rnd.totals = dict(data["totals"])
    elif kind == "ManualRound":
        rnd.manual = True
    elif kind == "RoundOpened":
        rnd.test = bool(data.get("test", False))
    elif kind == "CardPlacedByHand":
        rnd.placed.append((data["step"], data["seat"], data["by"]))
    elif kind in LISTED:
        getattr(rnd, LISTED[kind]).append(dict(data))


def _entered_stacks(rnd: RoundRecord) -> list[tuple[int, int | None, tuple[str, ...]]]:
    """The cards of a round dealt by hand as ``RoundRecord.stacks``: the cross once its five cards are known,
    then the seats whose cards were entered, in seat order (an entry replaced before its reveal is not
    counted: the cross is what was turned, ``CardsRevealed``, and what was entered never turned)."""
    cross = rnd.revealed + tuple(c for e in rnd.entries if e["target"] == "community" for c in e["cards"])
    seats = {int(e["target"].split()[1]): tuple(e["cards"]) for e in rnd.entries if e["target"].startswith("seat ")}
    stacks: list[tuple[int, int | None, tuple[str, ...]]] = [(0, None, cross)] if len(cross) == 5 else []
    return stacks + [(i + 1, seat, seats[seat]) for i, seat in enumerate(sorted(seats))]


def minor_units(amount: int, signed: bool = False) -> str:
    """An amount as ``crisscross recall`` prints it: integer minor units (``+`` before a gain when ``signed``)."""
    return f"{amount:+d}" if signed else str(amount)


#: How the steps' texts write an amount (``round_steps``' ``money``); minor units unless a caller says otherwise.
_MONEY: contextvars.ContextVar[Callable[..., str]] = contextvars.ContextVar("recall_money", default=minor_units)


def _m(amount: int, signed: bool = False) -> str:
    return _MONEY.get()(amount, signed)


def _amounts(wagers: dict[str, Any]) -> str:
    return ", ".join(f"{name} {_m(amount)}" for name, amount in wagers.items()) or "nothing"


def _differences(found: list[dict[str, Any]]) -> str:
    return ", ".join(f"{'seat ' + str(d['seat']) + ' ' if 'seat' in d else ''}{d['spot']} expected {_m(d['expected'])} "
                     f"seen {_m(d['seen'])} ({_m(d['difference'], True)})" for d in found)


def _payout_checked(data: dict[str, Any]) -> str:
    who = data.get("by") or data.get("role", "dealer")
    head = (f"seat {data['seat']} paid ({who}), read: expected {_amounts(data['expected'])}; "
            f"seen {_amounts(data['seen'])}")
    return head + (f" | MISPAY: {_differences(data['differences'])}" if data["differences"] else " | matches")


def _settled(data: dict[str, Any]) -> str:
    settlement = data["settlement"]
    results = "; ".join(f"{name} {_m(r['amount'])} {r['outcome']} {_m(r['net'], True)}"
                        for name, r in settlement["wagers"].items())
    hands = ""
    if settlement.get("folded_at") is None and settlement.get("across_hand"):
        hands = (f" | across {settlement['across_hand']['category']}, down {settlement['down_hand']['category']}")
    else:
        hands = f" | folded at {settlement.get('folded_at')}"
    return f"seat {data['seat']} settled: {results}{hands} | net {_m(settlement['net'], True)}"


#: How each journal record of a round reads in ``crisscross recall`` (None: not shown).
def _why(data: dict[str, Any]) -> str:
    """``": reason"`` of a supervisor's record whose free text is there (the journal's; the public's has none)."""
    return f": {data['reason']}" if data.get("reason") else ""


STEP_TEXT: dict[str, Any] = {
    "RoundOpened": lambda d: "betting opened",
    "ShuffleComplete": lambda d: f"shoe shuffled: {d['card_count']} cards counted",
    "Irregularity": lambda d: f"IRREGULARITY {d['kind']}: {d['detail']}",
    "SeatExcluded": lambda d: f"seat {d['seat']} excluded by {d['by']}: {d['reason']}",
    "WagersLocked": lambda d: "no more bets; locked: " + " | ".join(
        f"seat {e['seat']}: {_amounts(e['wagers'])}" for e in d["seats"]),
    "WagersHeld": lambda d: (f"no more bets; seat(s) {', '.join(map(str, d['held']))} held for correction; locked: "
                             + (" | ".join(f"seat {e['seat']}: {_amounts(e['wagers'])}" for e in d["seats"])
                                or "nothing")),
    "StackDealt": lambda d: (f"stack {d['stack']} dealt " + ("(the cross)" if d["seat"] is None else
                                                             f"to seat {d['seat']}") + f": {' '.join(d['cards'])}"),
    "DecisionMade": lambda d: (f"{d['decision']} decision, seat {d['seat']}: "
                               + (f"bet {_m(d['amount'])}" if d["action"] == "bet" else "fold")),
    "CardsRevealed": lambda d: f"{d['step']} revealed: {' '.join(d['cards'])}",
    "SeatSettled": _settled,
    "PayoutChecked": _payout_checked,
    "MispayAccepted": lambda d: (f"seat {d['seat']} MISPAY ACCEPTED by {d['by']} ({d['role']}): short {_m(d['short'])}, "
                                 f"over {_m(d['over'])}: {_differences(d['differences'])}"
                                 + (f"; why: {d['reason']}" if d.get("reason") else "")),
    "RoundClosed": lambda d: "round closed: " + ", ".join(f"{k} {_m(v)}" for k, v in d["totals"].items()),
    "FaultRaised": lambda d: (f"FAULT {d['cause']} ({d.get('device') or '-'}): {d['detail']}"
                              + ("" if d.get("resumable", True) else " [void only]")),
    "FaultCleared": lambda d: f"fault {', '.join(d['causes'])} cleared by {d['by']} ({d['role']}); resumed at {d['resumed']}",
    "PastPostingAcknowledged": lambda d: f"past-posting acknowledged by {d['by']}: {len(d['items'])} item(s)",
    "RoundVoided": lambda d: (f"ROUND VOIDED by {d['by']} ({d['role']}, {d.get('code', 'other')})"
                              + _why(d) + "; "
                              "returned: " + " | ".join(
        f"seat {e['seat']}: {_amounts(e['wagers'])}" for e in d["seats"])),
    "ShoeReconciled": lambda d: f"shoe reconciled: shoe's last transaction {d['shoe_txn']}, {d['outcome']}",
    "PressRefused": lambda d: (f"refused {d['button']} ({' '.join(filter(None, (d.get('role', 'dealer'), d.get('user'))))}): "
                               f"{d['reason']}"),
    "OperatorAction": lambda d: (f"control interface: {d['action']} by {d['user']} ({d['role']})"
                                 + (f" for round {d['round']}" if d.get("round") is not None else "")
                                 + _why(d)),
    "SupervisorKey": lambda d: f"supervisor key {d['key_id']} turned {'on' if d['on'] else 'off'}",
    # hole-card alerts (controller/round/alerts.py; a seat and a kind of card, never a card)
    "Alert": lambda d: f"HOLE-CARD ALERT: {alert_line(d)}",
    "AlertAcknowledged": lambda d: (f"hole-card alert acknowledged by {d['by']} ({d['role']}, {d['source']}): "
                                    f"{alert_line(d['alert'])}; {d['waiting']} still waiting"),
    "AlertNotShown": lambda d: f"hole-card alert not shown ({d['reason']}): {alert_line(d['alert'])}",
    "DetectorChecked": lambda d: f"hole-card detector: round {d['round_no']} read, no alert raised with it",
    # dealing by hand (NY 9 NYCRR 5324.39(d)(1), controller/round/manual.py)
    "DealingModeChanged": lambda d: (f"dealing switched to {d['mode']} by {d['by']} ({d['role']})"
                                     + _why(d)),
    "ManualRound": lambda d: "dealt by hand (NY 5324.39(d)(1)): no shoe",
    "CardPlacedByHand": lambda d: ("the cross dealt by hand" if d["seat"] is None else
                                   f"card dealt by hand to seat {d['seat']}") + (f" ({d['by']})" if d["by"] else ""),
    "CardsRecorded": lambda d: (f"{d['target']} cards entered by {d['by'] or d['role']} ({d['role']}, "
                                f"{d['source']}): {' '.join(d['cards'])}"),
    "SeatHeld": lambda d: (f"SEAT {d['seat']} HELD by {d['by']} ({d['role']})"
                           + _why(d) + f"; wagers {_amounts(d['wagers'])}"),
    # the table's locks and test mode (NY 9 NYCRR 5319.54(b), 5319.58; controller/round/table_locks.py)
    "TableDisabled": lambda d: f"table disabled by {d['by']} ({d['role']}, {d['code']})" + _why(d),
    "TableEnabled": lambda d: f"table enabled by {d['by']} ({d['role']}; was {d['code']})" + _why(d),
    "TestModeEntered": lambda d: f"test mode entered by {d['by']} ({d['role']})" + _why(d),
    "TestModeLeaving": lambda d: (f"test mode to be left when this round ends, asked by {d['by']} ({d['role']})"
                                  + _why(d)),
    "TestModeLeft": lambda d: (f"test mode left ({d['rounds']} test round(s)), asked by {d['by']} ({d['role']})"
                               + _why(d)),
}


def round_steps(records: list[dict[str, Any]], money: Callable[..., str] = minor_units) -> list[dict[str, Any]]:
    """One round, step by step in journal order (game recall: AGCO 13.1.1-13.1.4, 25 CFR 547.8(a)(2)): bets at
    each phase, cards in dealing order, decisions, reveals, the settlement and the payout readings, faults and
    who cleared them, voiding. ``records`` are journal records of the round, in order; each record of a type
    of ``STEP_TEXT`` that is not a device command is one step ``{"seq", "time", "type", "text", "data"}``
    (``data`` the record's, ``text`` as ``STEP_TEXT`` reads it); other records (device commands, raw events)
    are left out. What the records show is what the steps show: the caller chooses the records (a supervisor
    reads the journal's, ``crisscross recall``; the control interface passes a round not yet closed through
    the secrecy filter first, ``controller.control.recall``). Raises ``KeyError`` for a record of a listed
    type that lacks a field its text needs. ``money(amount, signed=False)`` writes each amount (default
    ``minor_units``, as ``crisscross recall`` prints them; the dealer's screen passes its own format)."""
    token = _MONEY.set(money)
    try:
        return _steps(records)
    finally:
        _MONEY.reset(token)


def step_text(kind: str, data: dict[str, Any], money: Callable[..., str] = minor_units) -> str:
    """How a record of type ``kind`` (one of ``STEP_TEXT``) with ``data`` reads, each amount written by
    ``money(amount, signed)`` (``round_steps``). Raises ``KeyError`` for another type, or data that lacks a
    field its text needs."""
    token = _MONEY.set(money)
    try:
        return STEP_TEXT[kind](data)
    finally:
        _MONEY.reset(token)


def _steps(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps = []
    for record in records:
        text = STEP_TEXT.get(record.get("type"))
        if text is None or record.get("kind") == "command":
            continue
        data = record.get("data") or {}
        steps.append({"seq": record.get("seq"), "time": record.get("time") or "", "type": record["type"],
                      "text": text(data), "data": data})
    return steps


def format_steps(records: list[dict[str, Any]]) -> list[str]:
    """``round_steps`` as lines for ``crisscross recall``, for a supervisor (face-down cards included: the
    journal's reader has that right): each step's time of day (to the millisecond) and text."""
    return [f"  {step['time'][11:23]}  {step['text']}" for step in round_steps(records)]


def recall_last(rounds: Iterable[tuple[int, list[dict[str, Any]]]]) -> str:
    """Rounds ``[(round, records)]`` (``controller.journal.reader.last_rounds``) as ``recall_round`` writes each,
    one after the other."""
    return "\n".join(recall_round(number, records) for number, records in rounds)


def recall_round(number: int, records: list[dict[str, Any]]) -> str:
    """Round ``number`` from its ``records`` as ``crisscross recall`` shows it: a header (its status: voided,
    closed or OPEN; dealt by hand; a round of test mode marked ``TEST: no money``) and ``format_steps``, lines
    without a final newline. Raises ``ValueError`` as ``rounds_from_records``."""
    rnd = rounds_from_records(records)[number]
    status = "voided" if rnd.voided else ("closed" if rnd.closed else "OPEN")
    status += ", dealt by hand" if rnd.manual else ""
    status += ", TEST: no money" if rnd.test else ""  # a round of test mode (NY 9 NYCRR 5319.58)
    return "\n".join([f"Round {number} ({status})", *format_steps(records)])
