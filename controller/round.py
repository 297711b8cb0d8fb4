"""The round of Criss-Cross Poker as a pure state machine: one event in, a list of commands and records out.

No I/O and no clock: the service feeds it device events (``drivers.events``) one at a time from its single
controller thread and carries out what ``handle`` returns (``controller.commands``). Replaying the same events
rebuilds the same state. The graph of states is a ``transitions.Machine`` (``queued=True``,
``auto_transitions=False``); the rules that choose a transition live in the ``_on_*`` handlers.

The script (sources):
- betting open -> "no more bets": every spot is read and locked; two equal antes per playing seat, a five-card
  bonus only with antes, nothing on the decision spots yet, amounts within table limits (NY 9 NYCRR
  5324.39(c)(3),(c)(4),(e)(1)). An invalid seat is named on the panel and betting stays open.
- dealing, automated shoe: one stack of five (the cross) first, then one stack of two per playing seat,
  clockwise from the dealer's left (NY (d)(2)). Every stack must have its size and cards never seen before
  in the round, and the shuffle must count 52 cards; otherwise the round faults.
- across, down and middle decisions: seats from the dealer's left, clockwise (PA 58 Pa. Code 674a.11(b),(d),
  (f)); the amount on the decision spot when the dealer confirms is the bet, an empty spot a fold, anything
  else an irregular bet that names the seat and keeps the decision open (NY (e)(3),(5),(7)).
- reveals after every decision is in: the two outside across cards, the two outside down cards, the middle
  (NY (e)(4),(6),(8); PA (c),(e),(g)).
- settlement from the dealer's right, counterclockwise (NY (e)(9); PA (g),(h)), then the round closes.
- a chip change on a locked spot is past-posting: recorded with the locked and new amounts, shown on the panel,
  and the locked amount stays the wager of record (NY (c)(3)).
- a device fault, a link loss or a card-accounting mismatch moves the round to ``fault``, which names the cause.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transitions import Machine, MachineError

from controller import commands as cmd
from controller.cards import DECK
from controller.paytable import Jurisdiction
from controller.settlement import Community, settle_seat
from controller.table import DECISIONS, TableConfig, WagerError, check_limits, check_wagers
from drivers import events as ev

DEVICES: tuple[str, ...] = ("shoe", "sensors", "panel")

STATES: list[str] = [
    "starting", "idle", "betting", "locking", "dealing",
    "across_decision", "across_reading", "across_reveal",
    "down_decision", "down_reading", "down_reveal",
    "middle_decision", "middle_reading", "middle_reveal",
    "settlement", "fault",
]

#: Community cards turned at each reveal, as indexes into the cross stack (cards 1-2 across, 3-4 down, 5 middle).
REVEALS: dict[str, tuple[int, ...]] = {"across": (0, 1), "down": (2, 3), "middle": (4,)}

#: Transactions ids: ``round_no * TXN_STRIDE + stack`` (stack 0 = the cross), unique over the journal's life.
TXN_STRIDE = 16


def _transitions() -> list[dict[str, Any]]:
    table = [
        dict(trigger="self_check_passed", source="starting", dest="idle"),
        dict(trigger="open_betting", source="idle", dest="betting"),
        dict(trigger="no_more_bets", source="betting", dest="locking"),
        dict(trigger="lock_refused", source="locking", dest="betting"),
        dict(trigger="lock", source="locking", dest="dealing"),
        dict(trigger="deal_done", source="dealing", dest="across_decision"),
        dict(trigger="close", source="settlement", dest="idle"),
        dict(trigger="fail", source="*", dest="fault"),
    ]
    for i, step in enumerate(DECISIONS):
        after_reveal = f"{DECISIONS[i + 1]}_decision" if i + 1 < len(DECISIONS) else "settlement"
        table += [
            dict(trigger="confirm", source=f"{step}_decision", dest=f"{step}_reading"),
            dict(trigger="decisions_refused", source=f"{step}_reading", dest=f"{step}_decision"),
            dict(trigger="decisions_taken", source=f"{step}_reading", dest=f"{step}_reveal"),
            dict(trigger="reveal", source=f"{step}_reveal", dest=after_reveal),
        ]
    return table


@dataclass
class SeatState:
    """A playing seat in the current round: wagers of record (minor units), its two cards once dealt, and the
    decision at which it folded (None while in action)."""

    seat: int
    wagers: dict[str, int]
    cards: tuple[str, ...] | None = None
    folded_at: str | None = None


@dataclass
class RoundData:
    """The current round's facts, rebuilt from events alone."""

    round_no: int
    seats: dict[int, SeatState] = field(default_factory=dict)
    shuffled: bool = False
    stacks_planned: list[int | None] = field(default_factory=list)  # seat per stack, None for the cross
    cross: tuple[str, ...] | None = None
    next_stack: int = 0
    dealt: set[str] = field(default_factory=set)
    revealed: list[str] = field(default_factory=list)
    locked: dict[tuple[int, str], int] = field(default_factory=dict)
    collectable: set[tuple[int, str]] = field(default_factory=set)  # forfeited: may be emptied by the dealer


class Round:
    """The round state machine. ``handle(event)`` returns the commands and records the event produces.

    ``config`` gives the seats and limits, ``jurisdiction`` the bet multiples, ranking and pay tables;
    ``last_round_no`` is the highest round number already in the journal (rounds are numbered on from it).
    """

    def __init__(self, config: TableConfig, jurisdiction: Jurisdiction, last_round_no: int = 0) -> None:
        self.config = config
        self.jurisdiction = jurisdiction
        self.round: RoundData | None = None
        self.last_round_no = last_round_no
        self.devices_ready: set[str] = set()
        self.fault: cmd.FaultRaised | None = None
        self._outbox: list[Any] = []
        self._lamps: tuple[str, ...] | None = None
        self._request_id = 0
        self._pending_read: int | None = None
        self.self_checked = False  # every device answered its handshake once
        self.machine = Machine(model=self, states=STATES, transitions=_transitions(), initial="starting",
                               queued=True, auto_transitions=False, send_event=False)

    # ------------------------------------------------------------------ public
    def handle(self, event: Any) -> list[Any]:
        """Apply one device event; return the commands to send and records to journal, in order.

        Never raises for a device event: a press not allowed now yields ``PressRefused`` + ``Display``; an
        event that makes no sense in the current state is recorded as an ``Irregularity``. Until every device
        passed its handshake (the start-up self-check), only records come out: no device command.
        """
        self._outbox = []
        handler = getattr(self, f"_on_{type(event).__name__}", None)
        if handler is None:
            self._emit(cmd.Irregularity(self.round_no, "unknown_event", {"event": repr(event)}))
        else:
            handler(event)
        return self._outputs()

    def allowed_buttons(self) -> tuple[str, ...]:
        """Panel buttons whose press is allowed now (the lit lamps)."""
        state = self.state
        if state == "idle":
            return ("open_betting",)
        if state == "betting":
            return ("no_more_bets",) if self.round and self.round.shuffled else ()
        if state.endswith("_decision"):
            return ("confirm",)
        if state.endswith("_reveal"):
            return ("reveal",)
        return ()

    # ------------------------------------------------------------------ helpers
    def _emit(self, *outputs: Any) -> None:
        self._outbox.extend(outputs)

    @property
    def round_no(self) -> int | None:
        """The number of the current (or last) round; None before the first."""
        return self.round.round_no if self.round else None

    def defect(self, error: Exception) -> list[Any]:
        """Move to ``fault`` after an unexpected exception in ``handle`` (a defect, cause ``internal``); return
        the outputs (``FaultRaised`` and a panel message) so the round stops in a defined state."""
        self._outbox = []
        self._fail(None, "internal", f"{type(error).__name__}: {error}")
        return self._outputs()

    def _outputs(self) -> list[Any]:
        """The outbox with the lamps brought up to date; no device command before the start-up self-check."""
        self._update_lamps()
        if not self.self_checked:
            return [o for o in self._outbox if not isinstance(o, cmd.DEVICE_COMMANDS)]
        return self._outbox

    def _update_lamps(self) -> None:
        lamps = self.allowed_buttons() if "panel" in self.devices_ready else None
        if lamps is not None and lamps != self._lamps:
            self._lamps = lamps
            self._emit(cmd.SetLamps(lamps))

    def _read_spots(self) -> None:
        self._request_id = self._request_id % 0xFFFF + 1
        self._pending_read = self._request_id
        self._emit(cmd.ReadSpots(self._request_id))

    def _fail(self, device: str | None, cause: str, detail: str) -> None:
        self.fault = cmd.FaultRaised(self.round_no, device, cause, detail)
        self._emit(self.fault, cmd.Display(f"FAULT {cause}: {detail}"[:64]))
        self.fail()

    def _active_seats(self) -> list[SeatState]:
        """Seats still in action, from the dealer's left clockwise (ascending seat number)."""
        assert self.round is not None
        return [s for _, s in sorted(self.round.seats.items()) if s.folded_at is None]

    # ------------------------------------------------------------------ devices
    def _on_DeviceReady(self, event: ev.DeviceReady) -> None:
        self.devices_ready.add(event.device)
        if self.state == "starting" and self.devices_ready >= set(DEVICES):
            self.self_check_passed()  # every device answered its handshake: the table may open
            self.self_checked = True

    def _on_DeviceFault(self, event: ev.DeviceFault) -> None:
        if self.state == "fault":
            self._emit(cmd.Irregularity(self.round_no, "fault_while_faulted", vars(event).copy()))
            return
        self._fail(event.device, event.code, event.detail)

    # ------------------------------------------------------------------ panel
    def _on_ButtonPressed(self, event: ev.ButtonPressed) -> None:
        button = event.button
        if button not in self.allowed_buttons():
            reason = f"{button} not allowed in {self.state}"
            self._emit(cmd.PressRefused(button, reason), cmd.Display(f"Not now: {button}"))
            return
        try:
            {"open_betting": self._open_betting, "no_more_bets": self._no_more_bets,
             "confirm": self._confirm, "reveal": self._reveal}[button]()
        except MachineError as exc:  # allowed_buttons and the graph disagree: a defect, made visible
            self._fail(None, "internal", f"{button} in {self.state}: {exc}")

    def _open_betting(self) -> None:
        self.last_round_no += 1
        self.round = RoundData(self.last_round_no)
        self.open_betting()
        self._emit(cmd.RoundOpened(self.last_round_no), cmd.Shuffle(), cmd.Display(f"Round {self.last_round_no}: place your bets"))

    def _no_more_bets(self) -> None:
        self.no_more_bets()
        self._read_spots()

    def _confirm(self) -> None:
        self.confirm()
        self._read_spots()

    def _reveal(self) -> None:
        assert self.round is not None and self.round.cross is not None
        step = self.state.removesuffix("_reveal")
        cards = tuple(self.round.cross[i] for i in REVEALS[step])
        self.round.revealed.extend(cards)
        self._emit(cmd.CardsRevealed(self.round.round_no, step, cards), cmd.Display(f"{step}: {' '.join(cards)}"))
        self.reveal()
        if self.state == "settlement":
            self._settle()

    # ------------------------------------------------------------------ shoe
    def _on_ShuffleComplete(self, event: ev.ShuffleComplete) -> None:
        if self.state != "betting" or self.round is None or self.round.shuffled:
            self._emit(cmd.Irregularity(self.round_no, "unexpected_shuffle", {"card_count": event.card_count}))
            return
        if event.card_count != 52:
            self._fail("shoe", "card_count", f"shuffle counted {event.card_count} cards, 52 expected")
            return
        self.round.shuffled = True

    def _on_StackDispensed(self, event: ev.StackDispensed) -> None:
        data = self.round
        if self.state != "dealing" or data is None:
            self._emit(cmd.Irregularity(self.round_no, "unexpected_stack", {"txn_id": event.txn_id}))
            return
        index = data.next_stack
        expected_txn = data.round_no * TXN_STRIDE + index
        if event.txn_id != expected_txn:
            self._fail("shoe", "protocol", f"stack for transaction {event.txn_id}, expected {expected_txn}")
            return
        size = 5 if index == 0 else 2
        cards = tuple(event.cards)
        if len(cards) != size:
            self._fail("shoe", "stack_size", f"stack {index} has {len(cards)} cards, {size} expected")
            return
        # fault details name the stack, never a card: they reach the panel and the log (hole-card secrecy)
        if not all(c in DECK for c in cards):
            self._fail("shoe", "unreadable_card", f"stack {index} has a card that is not a card of the deck")
            return
        if len(set(cards)) != size or data.dealt & set(cards):
            self._fail("shoe", "card_count", f"stack {index} repeats a card already dealt this round")
            return
        data.dealt.update(cards)
        data.next_stack += 1
        seat = data.stacks_planned[index]
        self._emit(cmd.StackDealt(data.round_no, index, seat, cards))
        if index == 0:
            data.cross = cards
        else:
            data.seats[seat].cards = cards
        if index + 1 < len(data.stacks_planned):
            self._dispense(index + 1)
        else:
            self.deal_done()
            self._emit(cmd.Display("Across decision: bet 1x-3x or fold"))

    def _dispense(self, index: int) -> None:
        data = self.round
        assert data is not None
        seat = data.stacks_planned[index]
        self._emit(cmd.Dispense(data.round_no * TXN_STRIDE + index, 5 if index == 0 else 2, index, seat))

    # ------------------------------------------------------------------ sensors
    def _on_SpotChanged(self, event: ev.SpotChanged) -> None:
        data = self.round
        if data is None or self.state in ("idle", "betting", "starting", "fault"):
            return  # betting open or between rounds: chips move freely; the journal keeps the event
        key = (event.seat, event.spot)
        if key in data.collectable and event.amount == 0:
            return  # the dealer collected a forfeited wager (NY 5324.39(e)(4),(6),(7))
        if key in data.locked and data.locked[key] != event.amount:
            detail = {"seat": event.seat, "spot": event.spot, "locked": data.locked[key], "new": event.amount}
            self._emit(cmd.Irregularity(data.round_no, "past_posting", detail),
                       cmd.Display(f"Past-posting seat {event.seat} {event.spot}: {data.locked[key]} kept"))

    def _on_SpotsSnapshot(self, event: ev.SpotsSnapshot) -> None:
        if event.request_id != self._pending_read or not self.state.endswith(("locking", "_reading")):
            self._emit(cmd.Irregularity(self.round_no, "stale_snapshot", {"request_id": event.request_id}))
            return
        self._pending_read = None
        spots: dict[int, dict[str, int]] = {}
        for seat, spot, amount in event.spots:
            if amount:
                spots.setdefault(seat, {})[spot] = amount
        if self.state == "locking":
            self._lock(spots)
        else:
            self._take_decisions(self.state.removesuffix("_reading"), spots)

    def _lock(self, spots: dict[int, dict[str, int]]) -> None:
        data = self.round
        assert data is not None
        try:
            for seat in sorted(spots):
                if seat not in self.config.seats:
                    raise WagerError(seat, f"wagers.{next(iter(spots[seat]))}", "seat is not in play at this table")
                for name in DECISIONS:
                    if name in spots[seat]:
                        raise WagerError(seat, f"wagers.{name}", "bet placed before its decision")
                check_wagers(seat, spots[seat], self.jurisdiction.bet_multiples)
                check_limits(seat, spots[seat], self.config)
            if not spots:
                raise WagerError(None, "wagers", "no seat has wagered")
        except WagerError as exc:
            self._emit(cmd.PressRefused("no_more_bets", str(exc)), cmd.Display(str(exc)[:64]))
            self.lock_refused()
            return
        data.seats = {seat: SeatState(seat, dict(w)) for seat, w in spots.items()}
        for seat in self.config.seats:
            for spot in ev.SPOTS:
                if seat not in data.seats or spot not in DECISIONS:
                    data.locked[(seat, spot)] = spots.get(seat, {}).get(spot, 0)
        data.stacks_planned = [None] + sorted(data.seats)
        self._emit(cmd.WagersLocked(data.round_no, tuple({"seat": s, "wagers": dict(data.seats[s].wagers)}
                                                         for s in sorted(data.seats))),
                   cmd.Display("No more bets"))
        self.lock()
        self._dispense(0)

    def _take_decisions(self, step: str, spots: dict[int, dict[str, int]]) -> None:
        data = self.round
        assert data is not None
        decisions = []
        for state in self._active_seats():
            amount = spots.get(state.seat, {}).get(step, 0)
            if amount:
                try:
                    check_wagers(state.seat, {**state.wagers, step: amount}, self.jurisdiction.bet_multiples)
                except WagerError as exc:
                    self._emit(cmd.PressRefused("confirm", str(exc)),
                               cmd.Display(f"Irregular bet seat {state.seat} {step}: {amount}"[:64]))
                    self.decisions_refused()
                    return
            decisions.append((state, amount))
        for state, amount in decisions:
            if amount:
                state.wagers[step] = amount
            else:
                state.folded_at = step
                data.collectable.update((state.seat, w) for w in state.wagers if w != "five_card_bonus")
            self._emit(cmd.DecisionMade(data.round_no, step, state.seat, "bet" if amount else "fold", amount))
        for seat, state in data.seats.items():
            for later in DECISIONS[DECISIONS.index(step):]:
                if state.folded_at is not None or later == step:
                    data.locked[(seat, later)] = state.wagers.get(later, 0)
        self.decisions_taken()
        self._emit(cmd.Display(f"Turn the {step} card" + ("" if step == "middle" else "s")))

    # ------------------------------------------------------------------ settlement
    def _settle(self) -> None:
        data = self.round
        assert data is not None and data.cross is not None
        community = Community.from_stack(data.cross)
        totals = {"wagered": 0, "returned": 0, "collected": 0, "paid": 0, "player_net": 0}
        for seat in sorted(data.seats, reverse=True):  # from the dealer's right, counterclockwise
            state = data.seats[seat]
            settled = settle_seat(seat, state.cards, community, state.wagers, self.jurisdiction)
            record = settled.to_json()
            record["folded_at"] = state.folded_at
            for result in settled.wagers.values():
                totals["wagered"] += result.amount
                totals["returned"] += result.returned
                totals["collected"] += result.collected
                totals["paid"] += max(result.net, 0)
            totals["player_net"] += settled.net
            self._emit(cmd.SeatSettled(data.round_no, seat, record))
        self._emit(cmd.RoundClosed(data.round_no, totals), cmd.Display(f"Round {data.round_no} settled"))
        self.close()
