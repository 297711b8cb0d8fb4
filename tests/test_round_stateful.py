"""A stateful property test of the round machine (hypothesis ``RuleBasedStateMachine``).

Random interleavings of button presses (with and without the supervisor key), control-interface actions,
sensor changes and readings, shoe answers (lost, repeated, corrupted), device faults and reconnections, and
restarts of the service. Model devices answer the machine the way the simulators do: the shoe dispenses each
transaction once and answers a repeated one with the recorded stack; it answers "what did you last do".

Invariants, checked on the output stream and the public view alone:
- no wager of record differs from the layout the sensors had reported when its "no more bets" or its decision's
  confirm was journaled (NY (c)(3), (e)(3),(5),(7));
- with the payout check, every payout reading checks every seat (NY (e)(9)): each seat already checked against
  what it held then, each seat not yet paid against what it held when the payout began, re-derived here;
- no wager of record changes after "no more bets" except a held seat's correction, which only takes chips away
  (NY 9 NYCRR 5324.39(c)(3)); a void is allowed exactly while a round is open and unsettled; an action naming
  another round changes nothing; every refusal names its user and role;
- no card is asked of the shoe before the round's wagers are locked (NY 9 NYCRR 5324.39(c)(3));
- no community card is turned before every seat in action decided that step (NY (e)(4),(6),(8));
- no wager is settled twice or lost: every seat locked in a closed round is settled exactly once, with exactly
  the wagers it placed; a voided round returns exactly the wagers placed; a round is closed or voided once;
- money neither appears nor vanishes: wagered = returned + collected in every close, wagered = returned in
  every void;
- no face-down card (a player's card, a community card not yet turned) is ever on the panel or in the view;
- no transaction is dealt twice and no card twice in a round;
- a hole-card alert shows only while the supervisor key is turned and never in the view (controller/round/alerts.py).
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from controller.game.cards import DECK
from controller.game.payout import PayoutConfig
from controller.round import commands as cmd
from controller.round.alerts import ACKNOWLEDGE_ALERT, CARD_KINDS, MAX_WAITING, Alert
from controller.round.inputs import OperatorAction, ServiceStarted
from controller.round.machine import Round
from drivers import events as ev
from tests.examples import examples
from tests.round_helpers import CONFIG, NY, antes, ready

CARD = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][cdhs](?![A-Za-z0-9])")
DEVICES = ("shoe", "sensors", "panel")


def of_kind(outputs: list[Any], kind: type) -> list[Any]:
    """The outputs of one type, in order."""
    return [o for o in outputs if isinstance(o, kind)]


class Ledger:
    """What the output stream says happened, and the checks of each output as it comes."""

    def __init__(self) -> None:
        self.locked: dict[int, dict[int, dict[str, int]]] = {}  # round -> seat -> wagers placed
        self.folded: dict[int, dict[int, str]] = {}
        self.decided: dict[tuple[int, str], list[int]] = {}
        self.settled: dict[int, list[int]] = {}
        self.ended: dict[int, str] = {}
        self.secret: set[str] = set()  # dealt, not turned
        self.txns: dict[int, tuple[str, ...]] = {}
        self.round_cards: dict[int, list[str]] = {}
        self.held: dict[int, dict[int, dict[str, int]]] = {}  # round -> seat -> wagers locked while others are held
        self.at_no_more_bets: dict[int, dict[tuple[int, str], int]] = {}  # round -> layout reported at the press
        self.at_confirm: dict[tuple[int, str], dict[tuple[int, str], int]] = {}  # (round, step) -> at the confirm

    def feed(self, outputs: list[Any]) -> None:
        for o in outputs:
            kind = type(o).__name__
            handler = getattr(self, f"_{kind}", None)
            if handler is not None:
                handler(o)

    def _RoundOpened(self, o: cmd.RoundOpened) -> None:
        assert o.round_no not in self.locked and o.round_no not in self.ended
        self.secret = set()

    def _WagersLocked(self, o: cmd.WagersLocked) -> None:
        assert o.round_no not in self.locked
        self.locked[o.round_no] = {e["seat"]: dict(e["wagers"]) for e in o.seats}
        self.folded[o.round_no] = {}
        for seat, wagers in self.held.get(o.round_no, {}).items():
            assert self.locked[o.round_no].get(seat) == wagers, "a wager locked at no more bets changed"
        seen = self.at_no_more_bets.get(o.round_no, {})
        for seat, wagers in self.locked[o.round_no].items():  # a held seat's correction only takes chips away
            assert all(amount <= seen.get((seat, spot), 0) for spot, amount in wagers.items()), \
                f"seat {seat} wagers more than it had at no more bets"
            if seat not in self.held.get(o.round_no, {}) and not self.held.get(o.round_no):
                # no wager of record differs from the layout at its announcement (NY 5324.39(c)(3))
                assert wagers == {spot: a for (s, spot), a in seen.items() if s == seat and a}, \
                    f"seat {seat} locked {wagers}, the layout at no more bets was another"

    def _PressRefused(self, o: cmd.PressRefused) -> None:
        assert o.role and (o.user or o.role == "dealer"), f"a refusal of nobody: {o}"

    def _WagersHeld(self, o: cmd.WagersHeld) -> None:
        assert o.round_no not in self.locked
        before = self.held.get(o.round_no, {})
        now = {e["seat"]: dict(e["wagers"]) for e in o.seats}
        assert all(now.get(seat) == wagers for seat, wagers in before.items()), "a locked wager changed"
        self.held[o.round_no] = now

    def _Dispense(self, o: cmd.Dispense) -> None:
        assert o.txn_id // 16 in self.locked, "a card asked of the shoe before the wagers were locked"

    def _StackDealt(self, o: cmd.StackDealt) -> None:
        txn = o.round_no * 16 + o.stack
        assert txn not in self.txns, "a transaction dealt twice"
        self.txns[txn] = o.cards
        cards = self.round_cards.setdefault(o.round_no, [])
        assert not set(cards) & set(o.cards), "a card dealt twice in a round"
        cards.extend(o.cards)
        self.secret |= set(o.cards)

    def _DecisionMade(self, o: cmd.DecisionMade) -> None:
        assert o.seat in self.locked[o.round_no] and o.seat not in self.folded[o.round_no]
        done = self.decided.setdefault((o.round_no, o.decision), [])
        assert o.seat not in done
        done.append(o.seat)
        at_confirm = self.at_confirm[(o.round_no, o.decision)].get((o.seat, o.decision), 0)
        assert o.amount == at_confirm, f"seat {o.seat} {o.decision} {o.amount}: the spot held {at_confirm} at the confirm"
        if o.action == "fold":
            self.folded[o.round_no][o.seat] = o.decision
        else:
            self.locked[o.round_no][o.seat][o.decision] = o.amount

    def _CardsRevealed(self, o: cmd.CardsRevealed) -> None:
        steps = ("across", "down", "middle")
        index = steps.index(o.step)
        active = [s for s in sorted(self.locked[o.round_no])
                  if s not in self.folded[o.round_no] or steps.index(self.folded[o.round_no][s]) >= index]
        assert sorted(self.decided.get((o.round_no, o.step), [])) == active, "a reveal before every decision"
        self.secret -= set(o.cards)

    def _SeatSettled(self, o: cmd.SeatSettled) -> None:
        assert o.round_no not in self.ended
        seats = self.settled.setdefault(o.round_no, [])
        assert o.seat not in seats, "a seat settled twice"
        seats.append(o.seat)
        placed = self.locked[o.round_no][o.seat]
        assert {k: v["amount"] for k, v in o.settlement["wagers"].items()} == placed
        if o.settlement.get("folded_at") is None:
            self.secret -= set(o.settlement["across_hand"]["cards"][:2])

    def _RoundClosed(self, o: cmd.RoundClosed) -> None:
        assert o.round_no not in self.ended
        self.ended[o.round_no] = "closed"
        if o.round_no not in self.locked:  # a no-play round: nobody wagered at "no more bets"
            assert not self.held.get(o.round_no) and not any(o.totals.values()), "a no-play round with wagers"
            return
        assert sorted(self.settled.get(o.round_no, [])) == sorted(self.locked[o.round_no]), "a wager lost"
        t = o.totals
        assert t["wagered"] == t["returned"] + t["collected"]
        assert t["wagered"] == sum(sum(w.values()) for w in self.locked[o.round_no].values())

    def _RoundVoided(self, o: cmd.RoundVoided) -> None:
        assert o.round_no not in self.ended and o.round_no not in self.settled
        self.ended[o.round_no] = "voided"
        returned = {e["seat"]: e["wagers"] for e in o.seats}
        placed = self.locked.get(o.round_no, self.held.get(o.round_no, {}))
        assert returned == placed, "a void that does not return every wager placed"
        amount = sum(sum(w.values()) for w in returned.values())
        assert o.totals == {"wagered": amount, "returned": amount, "collected": 0, "paid": 0, "player_net": 0}

    def _Display(self, o: cmd.Display) -> None:
        assert not set(CARD.findall(o.text)) & self.secret, f"face-down card on the panel: {o.text!r}"

    def _PrivatePanel(self, o: cmd.PrivatePanel) -> None:
        assert not set(CARD.findall(o.text)) & self.secret, f"face-down card on the panel: {o.text!r}"


class RoundMachineTest(RuleBasedStateMachine):
    """Drives one ``Round`` with model devices; see the module docstring."""

    config = CONFIG

    def __init__(self) -> None:
        super().__init__()
        self.machine = Round(self.config, NY)
        self.ledger = Ledger()
        self.rng = random.Random(0)
        self.shoe: dict[int, tuple[str, ...]] = {}  # the shoe's own record: txn -> stack
        self.last_txn = 0
        self.deck: list[str] = []
        self.layout: dict[tuple[int, str], int] = {}
        self.reported: dict[tuple[int, str], int] = {}  # the layout as the sensors last reported it
        self.read: int | None = None
        self.dispense: cmd.Dispense | None = None
        self.query = False
        self.feed(ServiceStarted())
        for device in DEVICES:
            self.feed(ready(device))

    def feed(self, event: Any) -> list[Any]:
        if not hasattr(self, "holds"):
            self.holds: dict[int, dict[str, int]] = {}  # payout: seat checked -> what it must hold since
            self.payout_base: dict[int, dict[str, int]] = {}  # payout: seat -> what it held as the payout began
        before, reported = self.machine.state, dict(self.reported)
        if isinstance(event, ev.SpotChanged):
            self.reported[(event.seat, event.spot)] = event.amount
        elif isinstance(event, ev.SpotsSnapshot):
            self.reported = {(s, p): a for s, p, a in event.spots}
        outputs = self.machine.handle(event)
        after = self.machine.state
        if after != before and after == "locking" and before == "betting":  # the announcements, as journaled
            self.ledger.at_no_more_bets[self.machine.round_no] = {k: a for k, a in reported.items() if a}
        if after == "payout" and before not in ("payout", "payout_reading", "fault"):
            self.holds, self.payout_base = {}, {}
            for (seat, spot), amount in self.layout.items():
                if amount:
                    self.payout_base.setdefault(seat, {})[spot] = amount
        for accepted in of_kind(outputs, cmd.MispayAccepted):  # what was read now stands, on every seat named
            self.holds[accepted.seat] = dict(accepted.seen)
            for d in accepted.differences:
                if "seat" in d:
                    target = self.holds if d["seat"] in self.holds else self.payout_base
                    target.setdefault(d["seat"], {})[d["spot"]] = d["seen"]
        if after != before and after.endswith("_reading") and before.endswith("_decision"):
            self.ledger.at_confirm[(self.machine.round_no, after.removesuffix("_reading"))] = reported
        self.ledger.feed(outputs)
        for o in outputs:
            if isinstance(o, cmd.ReadSpots):
                self.read = o.request_id
            elif isinstance(o, cmd.Dispense):
                self.dispense = o
            elif isinstance(o, cmd.QueryLast):
                self.query = True
            elif isinstance(o, cmd.Shuffle):
                self.deck = self.rng.sample(DECK, 52)
        return outputs

    # ------------------------------------------------------------------ people
    @rule(button=st.sampled_from(ev.BUTTONS))
    def press(self, button: str) -> None:
        self.feed(ev.ButtonPressed(button))

    @rule(data=st.data())
    def press_a_lit_button(self, data: st.DataObject) -> None:
        lit = self.machine.allowed_buttons()
        if lit:
            self.feed(ev.ButtonPressed(data.draw(st.sampled_from(lit))))

    @rule(on=st.booleans())
    def supervisor_key(self, on: bool) -> None:
        self.feed(ev.SupervisorKey(on, "SUP-1"))

    @rule(seat=st.integers(1, 6), card=st.sampled_from(CARD_KINDS))
    def hole_card_alert(self, seat: int, card: str) -> None:
        """The detector's alert (controller/round/alerts.py): on the panel only with the key turned, never in the
        public lamps or view, and it changes nothing of the round."""
        before = (self.machine.state, self.machine.round_no, json.dumps(self.machine.view()))
        full = len(self.machine.alerts_waiting) >= MAX_WAITING
        out = self.feed(Alert(self.machine.round_no or 0, seat, card, 412, 1, 30, 100, 100))
        assert (self.machine.state, self.machine.round_no, json.dumps(self.machine.view())) == before
        panel = [o for o in out if isinstance(o, cmd.PrivatePanel)]
        set_aside = [o for o in out if isinstance(o, cmd.AlertNotShown)]
        assert len(panel) + len(set_aside) == len(out), out
        assert self.machine.supervisor_key or not panel
        assert len(set_aside) == (1 if full else 0), "the oldest is set aside only past the bound"
        assert len(self.machine.alerts_waiting) <= MAX_WAITING

    @rule(action=st.sampled_from(ev.BUTTONS + ("bogus",)), role=st.sampled_from(("dealer", "supervisor", "x")))
    def control_action(self, action: str, role: str) -> None:
        out = self.feed(OperatorAction(action, "alice", role, "test"))
        assert all(r.user == "alice" for r in out if isinstance(r, cmd.PressRefused)), "a refusal of somebody else"

    @rule(action=st.sampled_from(ev.BUTTONS), offset=st.sampled_from((-2, -1, 1)))
    def stale_control_action(self, action: str, offset: int) -> None:
        """An action decided on another round never changes this one: refused, and nothing else happens."""
        before = (self.machine.state, self.machine.round_no, json.dumps(self.machine.view()))
        out = self.feed(OperatorAction(action, "bob", "supervisor", "late", "other",
                                       round=(self.machine.round_no or 0) + offset))
        assert [type(o) for o in out if not isinstance(o, (cmd.Display, cmd.PrivatePanel))] == [cmd.PressRefused], out
        assert (self.machine.state, self.machine.round_no) == before[:2]

    # ------------------------------------------------------------------ sensors
    @rule(seat=st.integers(1, 6), ante=st.sampled_from([500, 1000]), bonus=st.booleans())
    def place_antes(self, seat: int, ante: int, bonus: bool) -> None:
        for spot, amount in antes(ante, 100 if bonus else None).items():
            self.move_chips(seat, spot, amount)

    @rule(seat=st.integers(1, 6), step=st.sampled_from(("across", "down", "middle")), multiple=st.integers(0, 3))
    def place_bet(self, seat: int, step: str, multiple: int) -> None:
        ante = self.layout.get((seat, "ante_across"), 500)
        self.move_chips(seat, step, ante * multiple)

    @rule(seat=st.integers(1, 6), spot=st.sampled_from(ev.SPOTS), amount=st.sampled_from([0, 100, 500, 700]))
    def move_chips(self, seat: int, spot: str, amount: int) -> None:
        self.layout[(seat, spot)] = amount
        self.feed(ev.SpotChanged(seat, spot, amount))

    @precondition(lambda self: self.read is not None and (
        self.machine.state == "locking"
        or self.machine.state.endswith("_reading") and self.machine.state != "payout_reading"))
    @rule(seat=st.integers(1, 6), multiple=st.integers(0, 3))
    def late_chips(self, seat: int, multiple: int) -> None:
        """Chips put down (or taken back) after the announcement, before its reading is answered: two legal
        antes at "no more bets", a legal bet at a decision; the announced layout must stand (NY (c)(3))."""
        state = self.machine.state
        if state == "locking":
            self.place_antes(seat, 500 * max(multiple, 1), False)
        else:
            self.place_bet(seat, state.removesuffix("_reading"), multiple)

    @precondition(lambda self: self.read is not None)
    @rule()
    def answer_read(self) -> None:
        request, self.read = self.read, None
        spots = tuple((s, p, a) for (s, p), a in sorted(self.layout.items(), key=lambda i: (i[0][0], ev.SPOTS.index(i[0][1]))) if a)
        reading = self.machine.state == "payout_reading"
        out = self.feed(ev.SpotsSnapshot(request, spots))
        if reading:
            self.check_payout_reading(out)

    def check_payout_reading(self, outputs: list[Any]) -> None:
        """Every payout reading checks every seat of the round (NY (e)(9)): a seat other than the one paid differs
        in the record exactly where the layout differs from what that seat must hold, re-derived here from the
        layout the model sensors had when the payout began and each seat's check."""
        checks = of_kind(outputs, cmd.PayoutChecked)
        if not checks:
            return
        (check,) = checks
        seats = set(self.ledger.locked.get(check.round_no, {})) | set(self.payout_base)  # wager or none
        for seat in seats:
            if seat == check.seat:
                continue
            should = self.holds.get(seat, self.payout_base.get(seat, {}))
            now = {spot: a for (s, spot), a in self.layout.items() if s == seat and a}
            named = {(d["spot"], d["seen"]) for d in check.differences if d.get("seat") == seat}
            differ = {(spot, now.get(spot, 0)) for spot in ev.SPOTS if now.get(spot, 0) != should.get(spot, 0)}
            assert named == differ, f"seat {seat}: the reading of seat {check.seat} names {named}, differs {differ}"
        if not check.differences:
            self.holds[check.seat] = dict(check.seen)

    # ------------------------------------------------------------------ shoe
    @rule(count=st.sampled_from([52, 52, 52, 51]))
    def shuffle_done(self, count: int) -> None:
        self.feed(ev.ShuffleComplete(count))

    def _deal(self, request: cmd.Dispense) -> tuple[str, ...]:
        if request.txn_id not in self.shoe:  # exactly once: a repeated transaction gets the recorded stack
            self.shoe[request.txn_id] = tuple(self.deck[:request.count])
            del self.deck[:request.count]
            self.last_txn = request.txn_id
        return self.shoe[request.txn_id]

    @precondition(lambda self: self.dispense is not None)
    @rule(lose_reply=st.integers(0, 9))
    def answer_dispense(self, lose_reply: int) -> None:
        request, self.dispense = self.dispense, None
        cards = self._deal(request)
        if lose_reply:  # 1 time in 10 the answer is lost on the way
            self.feed(ev.StackDispensed(request.txn_id, cards))

    @precondition(lambda self: bool(self.shoe))
    @rule()
    def repeated_answer(self) -> None:
        txn = max(self.shoe)
        self.feed(ev.StackDispensed(txn, self.shoe[txn]))

    @rule(cards=st.lists(st.sampled_from((*DECK, "Zz")), min_size=2, max_size=5), rare=st.integers(0, 3))
    def corrupt_stack(self, cards: list[str], rare: int) -> None:
        if rare == 0:
            self.feed(ev.StackDispensed(self.dispense.txn_id if self.dispense else 16, tuple(cards)))

    @precondition(lambda self: self.query)
    @rule()
    def answer_query(self) -> None:
        self.query = False
        self.feed(ev.ShoeLastDispense(self.last_txn, self.shoe.get(self.last_txn, ())))

    # ------------------------------------------------------------------ the table moving on
    @rule(steps=st.integers(1, 12), data=st.data())
    def advance(self, steps: int, data: st.DataObject, voids: bool = True) -> None:
        """What a working table does next, ``steps`` times: answer the shoe's and the sensors' pending
        requests, players put legal wagers and bets, the dealer (or the supervisor, with the key) presses a lit
        button."""
        for _ in range(steps):
            if self.query:
                self.answer_query()
            elif self.read is not None:
                self.answer_read()
            elif self.dispense is not None:
                self.answer_dispense(1)
            elif self.machine.state == "betting" and not self.machine.round.shuffled:
                self.feed(ev.ShuffleComplete(52))
            else:
                state = self.machine.state
                if state == "betting" and not any(p == "ante_across" for (_, p) in self.layout):
                    self.place_antes(data.draw(st.integers(1, 6)), 500, data.draw(st.booleans()))
                if state.endswith("_decision"):
                    step = state.removesuffix("_decision")
                    for seat in range(1, 7):
                        self.place_bet(seat, step, data.draw(st.integers(0, 3)))
                actions = self.machine.allowed_actions()
                if not actions:
                    return
                if state == "payout" and "paid" in actions:
                    self.pay(data)
                choices = [a for a in actions if voids or a != "void_round"] or list(actions)
                action = data.draw(st.sampled_from(choices))
                if action in ("acknowledge", "clear_fault", "void_round", "accept_mispay") \
                        and not self.machine.supervisor_key:
                    self.feed(ev.SupervisorKey(True, "SUP-1"))
                self.feed(ev.ButtonPressed(action))

    @rule(steps=st.integers(30, 90), data=st.data())
    def play_on(self, steps: int, data: st.DataObject) -> None:
        """A table working for a while: far enough to settle a round and pay it."""
        self.advance(steps, data, voids=False)

    def pay(self, data: st.DataObject) -> None:
        """The dealer pays the seat shown as the panel says, now and then touching another seat by mistake."""
        payout = self.machine.view()["payout"]
        seat = payout["seat"]
        for spot, step in payout["seats"][str(seat)]["spots"].items():
            if self.layout.get((seat, spot), 0) != step["expected"]:
                self.move_chips(seat, spot, step["expected"])
        if data.draw(st.integers(0, 4)) == 0:
            other = data.draw(st.integers(1, 6))  # a seat of the round or a seat without a wager
            self.move_chips(other, data.draw(st.sampled_from(ev.SPOTS)), data.draw(st.sampled_from([0, 500])))

    # ------------------------------------------------------------------ faults, restarts
    @rule(device=st.sampled_from(DEVICES), code=st.sampled_from(("link_lost", "timeout", "jam", "empty")),
          rare=st.integers(0, 3))
    def device_fault(self, device: str, code: str, rare: int) -> None:
        if rare == 0:
            self.feed(ev.DeviceFault(device, code, "test"))

    @rule(device=st.sampled_from(DEVICES))
    def device_back(self, device: str) -> None:
        self.feed(ready(device))

    @rule(rare=st.integers(0, 3))
    def restart(self, rare: int) -> None:
        if rare:
            return
        self.read = self.dispense = None
        self.query = False
        self.feed(ServiceStarted())
        for device in DEVICES:
            self.feed(ready(device))

    # ------------------------------------------------------------------ invariants
    @invariant()
    def view_shows_no_face_down_card(self) -> None:
        text = json.dumps(self.machine.view())
        assert not set(CARD.findall(text)) & self.ledger.secret

    @invariant()
    def void_is_allowed_exactly_while_a_round_is_open(self) -> None:
        assert ("void_round" in self.machine.allowed_actions()) == self.machine.unsettled()

    @invariant()
    def the_view_shows_what_the_graph_allows_now(self) -> None:
        """The view's actions (kept from the end of the last input) are the graph's answer asked afresh."""
        fresh = self.machine.round_actions() + self.machine._table_actions()
        assert self.machine.view()["allowed_actions"] == list(fresh)

    @invariant()
    def lamps_are_allowed_actions(self) -> None:
        assert set(self.machine.allowed_buttons()) <= set(self.machine.allowed_actions())

    @invariant()
    def alerts_reach_only_the_key(self) -> None:
        """Nothing of an alert in the public view; the last private panel shows one only with the key turned."""
        view = self.machine.view()
        assert ACKNOWLEDGE_ALERT not in view["lamps"] + view["allowed_actions"] and "ALERT" not in json.dumps(view)
        shown = self.machine.checkpoint()["private_panel"]
        assert shown is None or self.machine.supervisor_key is not None


RoundMachineTest.TestCase.settings = settings(
    max_examples=examples(100), stateful_step_count=80, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_round_machine_stateful = RoundMachineTest.TestCase


class PayoutCheckedTable(RoundMachineTest):
    """The same machine at a table that checks the dealer's payouts (the shipped table.yaml)."""

    config = dataclasses.replace(CONFIG, payout=PayoutConfig(check=True))


PayoutCheckedTable.TestCase.settings = RoundMachineTest.TestCase.settings
test_round_machine_stateful_with_the_payout_check = PayoutCheckedTable.TestCase
