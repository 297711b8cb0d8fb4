"""Dealing from the automated shoe and the shoe's reconciliation with the journal (NY 9 NYCRR 5324.39(d)(2);
docs/protocol.md).

- one stack of five (the cross) first, then one stack of two per playing seat, clockwise from the dealer's left.
  Every stack must have its size and cards never seen before in the round, and the shuffle must count 52 cards;
  otherwise the round faults.
- after a start, or a shoe back on its link, the shoe is asked what it last dispensed (``ShoeLastDispense``) and
  its power-on counter is compared (``ShoeBootCount``): a stack in flight is taken once, a shoe that lost its
  record cannot be trusted; a transaction id is never reused (``TXN_STRIDE``).
- a round resumed after a fault asks again for what it was waiting for (``_resume_in_flight``).
- the shoe's door shut again (``ShoeDoorClosed``) is recorded and clears nothing: the supervisor clears the fault
  of its opening.
"""

from __future__ import annotations

from controller.game.cards import DECK
from controller.round import commands as cmd
from controller.round.graph import BETWEEN_ROUNDS, DEVICES, OPTIONAL_DEVICES, PAYOUT_STATES
from drivers import events as ev

#: Transactions ids: ``round_no * TXN_STRIDE + stack`` (stack 0 = the cross), unique over the journal's life.
TXN_STRIDE = 16


class ShoeDealing:
    """Dealing and the shoe's reconciliation of ``controller.round.machine.Round`` (a mixin: it uses the round's
    state, graph and helpers; its fields are in ``Round.__init__``/``RoundData``)."""

    def _in_flight_txn(self) -> int | None:
        """The transaction of the stack being dealt (asked of the shoe and not yet accepted), if any."""
        data = self.round
        if data is None or data.manual or self.phase not in ("dealing_cross", "dealing_players"):
            return None
        return data.round_no * TXN_STRIDE + data.next_stack
    def _on_DeviceReady(self, event: ev.DeviceReady) -> None:
        if event.device in OPTIONAL_DEVICES:
            self.devices_ready.add(event.device)
            return
        if event.device not in DEVICES:
            self._emit(cmd.Irregularity(self.round_no, "unknown_device", {"device": event.device}))
            return
        back = self.self_checked and event.device not in self.devices_ready
        self.devices_ready.add(event.device)
        if not self.self_checked and self.devices_ready >= set(DEVICES):
            self.self_checked = True  # every device answered its handshake: ask the shoe before anything else
            self._query_shoe()
            if self._prompt:
                self._emit(cmd.Display(self._prompt))
        elif back:
            if event.device == "shoe":
                self._query_shoe()
            if event.device == "panel":
                self._lamps = None
                if self._prompt:
                    self._emit(cmd.Display(self._prompt))
            away = [device for device in DEVICES if device not in self.devices_ready]
            if self.state == "fault":  # a fault is cleared only once every device lost is back
                self._show(f"{event.device} back: supervisor may clear" if not away
                           else f"{event.device} back, waiting for the {away[0]}")
            elif self.state in BETWEEN_ROUNDS:  # the lock of a device away lifts, or names the next one away
                self._show_locks()
    def _on_ShoeBootCount(self, event: ev.ShoeBootCount) -> None:
        """The shoe's power-on counter (docs/protocol.md, "Power-on counter"). A value other than the last one
        journaled (``shoe_boots``) means the shoe restarted, with or without a lost link: it holds no shuffle
        and no record of its transactions. Recorded as the ``Irregularity`` ``shoe_restarted``; the kept shuffle
        of a no-play round is discarded. In betting with nothing dealt a shuffle it had counted is asked for
        again, so no wager locks before a shuffle of this power-on counted 52 (the card count of NY 9 NYCRR
        5324.39(d)(2)'s automated shoe); from "no more bets" on (wagers announced, cards in flight or dealt) the
        round's cards cannot be accounted for by the shoe: a fault the round can only void, as ``shoe_mismatch``.
        The first counter ever seen (a new journal, or one written before the counter) is only kept."""
        known, self.shoe_boots = self.shoe_boots, event.boots
        if known is None or known == event.boots:
            return
        self.shuffle_kept = False
        self._emit(cmd.Irregularity(self.round_no, "shoe_restarted", {"boots": event.boots, "previous": known}))
        data = self.round
        if data is None or data.manual or not self.unsettled():
            return  # between rounds, dealt by hand or settled: no card of the shoe is still to come this round
        if self.phase != "betting":
            self._fail("shoe", "shoe_restarted", f"the shoe restarted (power-on {known} -> {event.boots}) "
                       f"during {self.phase}: its deck cannot be trusted", resumable=False)
        elif data.shuffled:  # not yet shuffled: the answer awaited is the restarted shoe's (or asked on resume)
            data.shuffled = False
            if self.state == "betting":
                self._emit(cmd.Shuffle())
    def _on_ShoeDoorClosed(self, event: ev.ShoeDoorClosed) -> None:
        """The shoe's door is shut again (docs/protocol.md, "The door"). Journaled as it came (the significant
        event 3011 "shoe door closed" of NY 9 NYCRR 5317.26, ``controller.round.significant``) and nothing more:
        the fault its opening raised (``door_open``) still holds the round until a supervisor, who accounts for
        the deck, clears it or voids the round; a shut door is no sign that nobody touched the cards. Between
        rounds, or from a shoe whose opening was never seen, it is the same record."""

    def _query_shoe(self) -> None:
        self._querying = True
        self._emit(cmd.QueryLast())
    def _on_ShoeLastDispense(self, event: ev.ShoeLastDispense) -> None:
        if not self._querying:
            self._emit(cmd.Irregularity(self.round_no, "unexpected_last_dispense", {"txn_id": event.txn_id}))
            return
        self._querying = False
        in_flight = self._in_flight_txn()
        shoe_txn = event.txn_id
        data = self.round
        if in_flight is not None and shoe_txn == in_flight:
            outcome = "stack_recovered"
        elif (data is not None and self.state == "voided" and data.stacks_planned
              and shoe_txn == data.round_no * TXN_STRIDE + data.next_stack and data.next_stack < len(data.stacks_planned)):
            outcome = "dealt_after_void"
        elif in_flight is not None and data is not None and data.next_stack > 0 and shoe_txn != in_flight - 1:
            # The shoe dealt this round's previous stack; not to know it, it must have lost its memory (a power
            # cycle) or be another shoe: its state of the deck is unknown, and a card on the table could leave
            # it again. Only a void is safe.
            outcome = "mismatch"
        elif in_flight is not None and shoe_txn < in_flight:
            outcome = "not_dispensed"
        elif shoe_txn <= self.last_txn:
            outcome = "in_step"
        elif not self.round_open() or self.phase in ("betting", "locking", "wagers_held"):
            outcome = "shoe_ahead"
        else:
            outcome = "mismatch"
        self._emit(cmd.ShoeReconciled(self.round_no, shoe_txn, self.last_txn, outcome))
        self.reconciled = True
        if outcome == "stack_recovered":
            self._accept_stack(ev.StackDispensed(shoe_txn, tuple(event.cards)))
        elif outcome == "dealt_after_void":  # the stack in flight left the shoe after all: on record, unplayed
            assert data is not None
            data.stacks[shoe_txn] = tuple(event.cards)
            self._emit(cmd.StackDealt(data.round_no, data.next_stack, data.stacks_planned[data.next_stack],
                                      tuple(event.cards)))
            data.next_stack += 1
        elif outcome == "shoe_ahead":  # number on past the shoe's transactions: an id is never reused
            self.last_round_no = max(self.last_round_no, shoe_txn // TXN_STRIDE)
            self.last_txn = shoe_txn
        elif outcome == "mismatch":
            if in_flight is not None and shoe_txn < in_flight:
                detail = (f"the shoe's last transaction is {shoe_txn}, but it dealt transaction {in_flight - 1} "
                          f"of this round: it lost its record or is another shoe")
            else:
                detail = f"the shoe's last transaction {shoe_txn} is unknown to the journal (last asked: {self.last_txn})"
            self._fail("shoe", "shoe_mismatch", detail, resumable=False)
        if self.state == "starting":
            self.self_check_passed()
            self._show_between_rounds("Table ready")
    def _resume_in_flight(self) -> None:
        """Ask again for what the round was waiting for when it faulted; read the spots to catch any change
        made to a locked spot meanwhile."""
        data, state = self.round, self.state
        if data is None or state in BETWEEN_ROUNDS:
            return
        self._show_entry_awaited()  # dealt by hand: the cards awaited, asked again
        if state in PAYOUT_STATES:  # chips move while the dealer pays: nothing locked to verify
            self._show_payout()
            if state == "payout_reading":
                self._read_spots()
            return
        if state == "betting":
            if not data.shuffled:
                self._emit(cmd.Shuffle())
            data.layout_read = False  # the sensors may have been away: read the layout again before the lock
            self._read_spots()
        elif state == "locking" or state.endswith("_reading"):
            self._read_spots()
        elif data.locked:
            self._verifying = True
            self._read_spots()
        if state in ("dealing_cross", "dealing_players") and not data.pending_acks:
            self._dispense(data.next_stack)
    def _on_ShuffleComplete(self, event: ev.ShuffleComplete) -> None:
        data = self.round
        if self.phase != "betting" or data is None or data.shuffled:
            self._emit(cmd.Irregularity(self.round_no, "unexpected_shuffle", {"card_count": event.card_count}))
            return
        if event.card_count != 52:
            self._fail("shoe", "card_count", f"shuffle counted {event.card_count} cards, 52 expected")
            return
        data.shuffled = True
    def _on_StackDispensed(self, event: ev.StackDispensed) -> None:
        data = self.round
        if data is not None and data.stacks.get(event.txn_id) == tuple(event.cards):
            self._emit(cmd.Irregularity(data.round_no, "duplicate_stack", {"txn_id": event.txn_id}))
            return  # the shoe's answer to a repeated transaction: already dealt, nothing new left the shoe
        if self._in_flight_txn() is None:
            self._emit(cmd.Irregularity(self.round_no, "unexpected_stack", {"txn_id": event.txn_id}))
            return
        self._accept_stack(event)
    def _accept_stack(self, event: ev.StackDispensed) -> None:
        data = self.round
        assert data is not None
        index = data.next_stack
        expected_txn = data.round_no * TXN_STRIDE + index
        if event.txn_id != expected_txn:
            self._fail("shoe", "protocol", f"stack for transaction {event.txn_id}, expected {expected_txn}",
                       resumable=False)
            return
        size = 5 if index == 0 else 2
        cards = tuple(event.cards)
        if len(cards) != size:
            self._fail("shoe", "stack_size", f"stack {index} has {len(cards)} cards, {size} expected",
                       resumable=False)
            return
        # fault details name the stack, never a card: they reach the panel and the log (hole-card secrecy)
        if not all(c in DECK for c in cards):
            self._fail("shoe", "unreadable_card", f"stack {index} has a card that is not a card of the deck",
                       resumable=False)
            return
        if len(set(cards)) != size or data.dealt & set(cards):
            self._fail("shoe", "card_count", f"stack {index} repeats a card already dealt this round",
                       resumable=False)
            return
        data.dealt.update(cards)
        data.stacks[event.txn_id] = cards
        data.next_stack += 1
        seat = data.stacks_planned[index]
        self._emit(cmd.StackDealt(data.round_no, index, seat, cards))
        if index == 0:
            data.cross = cards
        else:
            data.seats[seat].cards = cards
        done = data.next_stack >= len(data.stacks_planned)
        if self.state == "fault":  # a stack answered while the round is held: take it, deal on after the resume
            self.resume_state = "across_decision" if done else "dealing_players"
            return
        if index == 0:
            self.cross_dealt()
        if done:
            self.deal_done()
            self._show("Across decision: bet 1x-3x or fold")
        elif not data.pending_acks:
            self._dispense(data.next_stack)
    def _dispense(self, index: int) -> None:
        data = self.round
        assert data is not None
        if data.manual:  # dealt by hand: the dealer is asked for the step instead of the shoe
            self._prompt_deal()
            return
        seat = data.stacks_planned[index]
        txn = data.round_no * TXN_STRIDE + index
        self.last_txn = max(self.last_txn, txn)
        self._emit(cmd.Dispense(txn, 5 if index == 0 else 2, index, seat))
