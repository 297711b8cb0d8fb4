"""Decisions, reveals and settlement (NY 9 NYCRR 5324.39(e)(3)-(9); PA 58 Pa. Code 674a.11(b)-(h)).

- across, down and middle decisions: seats from the dealer's left, clockwise (PA (b),(d),(f)); the amount on the
  decision spot when the dealer's confirm is journaled is the bet, an empty spot a fold, anything else an
  irregular bet that names the seat and spot and keeps the decision open (NY (e)(3),(5),(7)).
- reveals after every decision is in: the two outside across cards, the two outside down cards, the middle
  (NY (e)(4),(6),(8); PA (c),(e),(g)).
- settlement from the dealer's right, counterclockwise (NY (e)(9); PA (g),(h)); then the round closes, at once or
  after the payout check (``controller.round.payout_check``). Nobody wagering closes a no-play round.
"""

from __future__ import annotations

from controller.game.payout import plan_seat
from controller.game.settlement import Community, settle_seat
from controller.game.table import DECISIONS, WagerError, check_wagers
from controller.round import commands as cmd
from controller.round.data import Actor, SeatState
from drivers import events as ev

#: Community cards turned at each reveal, as indexes into the cross stack (cards 1-2 across, 3-4 down, 5 middle).
REVEALS: dict[str, tuple[int, ...]] = {"across": (0, 1), "down": (2, 3), "middle": (4,)}


class Decisions:
    """Decisions, reveals and settlement of ``controller.round.machine.Round`` (a mixin: it uses the round's
    state, graph and helpers)."""

    def _active_seats(self) -> list[SeatState]:
        """Seats still in action, from the dealer's left clockwise (ascending seat number)."""
        assert self.round is not None
        return [s for _, s in sorted(self.round.seats.items()) if s.folded_at is None]
    def _confirm(self, actor: Actor, reason: str) -> None:
        """The dealer confirms a decision: the bet is what each seat in action has on the decision's spot now
        (``_announce``; NY 5324.39(e)(3),(5),(7))."""
        step = self.state.removesuffix("_decision")
        self._announce({(state.seat, step) for state in self._active_seats()})
        self.confirm()
        self._reader = actor
        self._read_spots()
    def _reveal(self, actor: Actor, reason: str) -> None:
        assert self.round is not None and self.round.cross is not None
        step = self.state.removesuffix("_reveal")
        cards = tuple(self.round.cross[i] for i in REVEALS[step])
        self.round.revealed.extend(cards)
        self._emit(cmd.CardsRevealed(self.round.round_no, step, cards))
        self._show(f"{step}: {' '.join(cards)}")
        self.reveal()
        if self.state == "settlement":
            self._settle()
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
                    detail = {"seat": state.seat, "spot": step, "amount": amount, "reason": str(exc)}
                    actor = self._reader or Actor("dealer", "", "panel")
                    self._emit(cmd.Irregularity(data.round_no, "irregular_bet", detail),
                               cmd.PressRefused("confirm", str(exc), actor.user, actor.role))
                    self._show(f"Irregular bet seat {state.seat} {step}: {amount}")
                    # the confirm decided nothing: a change since is the correction it asks for, not a bet's change
                    decided = {(s.seat, step) for s in self._active_seats()}
                    data.pending_acks = [i for i in data.pending_acks if (i["seat"], i["spot"]) not in decided]
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
        if not self._active_seats() and not any("five_card_bonus" in s.wagers for s in data.seats.values()):
            # every seat folded and no five-card bonus waits for the board: nothing is left in action, so the
            # round is settled now (NY 5324.39(e)(9) settles "each remaining player": there is none); the
            # community cards stay face down and go to the discard rack as dealt (PA 674a.11(i): the journal's
            # StackDealt keeps them for a dispute)
            self.nothing_in_action()
            self._settle()
            return
        self.decisions_taken()
        self._show_turn(step)
    def _show_turn(self, step: str) -> None:
        """Ask the dealer to turn the ``step`` cards of the cross: the two outside cards of the across or the down
        line, or the middle card (NY 5324.39(e)(2)-(8))."""
        self._show(f"Turn the {step} card" + ("" if step == "middle" else "s"))
    def _no_play(self) -> None:
        """No wager on the layout at "no more bets": the round closes with nothing dealt (NY (d)(1),(2): cards
        go only to players who placed a wager) and the shoe's checked shuffle is kept for the next round."""
        data = self.round
        assert data is not None
        self.shuffle_kept = data.shuffled
        self._emit(cmd.RoundClosed(data.round_no, {"wagered": 0, "returned": 0, "collected": 0, "paid": 0,
                                                   "player_net": 0}))
        self._round_ended()
        self._show_between_rounds(f"Round {data.round_no}: no wagers, no play")
        self.no_play()
    def _settle(self) -> None:
        data = self.round
        if data is not None and self._cards_missing():  # dealt by hand: a card still to be entered
            return
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
            data.payout_plan[seat] = plan_seat(record["wagers"], self.config.payout.winning_spot)
        data.totals = totals
        self.settled()  # the graph decides (``payout_check``): the payout check, or closed at once
        if self.state == "payout":
            data.to_pay = sorted(data.seats, reverse=True)  # from the dealer's right, as settled
            data.payout_base = {seat: {spot: amount for (s, spot), amount in self.layout.items() if s == seat}
                                for seat in sorted(set(ev.SEATS) | {s for s, _ in self.layout})}
            self._show_payout()
            return
        self._close_round()
    def _close_round(self) -> None:
        data = self.round
        assert data is not None and data.totals is not None
        self._emit(cmd.RoundClosed(data.round_no, dict(data.totals)))
        self._round_ended()
        self._show_between_rounds(f"Round {data.round_no} settled")
