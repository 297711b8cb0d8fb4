"""Dealing by hand or from a manual dealing shoe under the controller (NY 9 NYCRR 5324.39(d)(1)).

Part of the round core (``controller.round``; no I/O, no clock): the handlers of the round machine's manual
dealing, mixed into ``Round``. The transitions they fire (``deal_by_hand``, ``deal_by_shoe``, ``cross_placed``,
``card_placed``, ``hands_placed``, ``hold_seat``) are in ``controller.round.graph._transitions`` with the rest of the
graph, drawn in docs/round-states.md.

The script (sources):
- a supervisor switches the table between automated and manual dealing only between rounds (``deal_by_hand``,
  ``deal_by_shoe``), and only when ``table.yaml`` allows manual dealing (``manual_dealing: true``); the switch
  is journaled with who and why (``DealingModeChanged``). A shoe fault that holds the table between rounds
  may be answered by the switch (the shoe is then no longer needed to clear the fault). The switch back needs
  the shoe's link up and reconciled; the next round opens with the shoe's shuffle and its count of 52 (the
  shuffle check) before anything is dealt.
- a round dealt by hand (``ManualRound``) is not shuffled by the shoe (the dealer shuffles); after the lock the
  dealer deals five community cards in a cross, then one card at a time to each wagering seat, starting with
  the seat farthest to the dealer's left and continuing clockwise, until each has two, all face down
  (NY (d)(1)); the dealer confirms each step with ``confirm`` (``CardPlacedByHand``).
- cards become known as they are turned (``CardsEntered``, from the panel's keypad or a card reader): at each
  reveal the community card(s) of the step, held until the dealer presses ``reveal`` (a new entry replaces
  them); at settlement, from the dealer's right counterclockwise (NY (e)(9)), each seat's two cards, and any
  community card never turned (every seat folded). A folded seat's cards, never turned (they went to the
  discard rack), are entered face down too: settlement and the card count of the round need every card; the
  journal keeps them and nothing public shows them (``controller.control.server.public_record``). A wrong count, a card
  not of the deck, a card repeated or
  already entered this round, a seat that is not the next one are refused (``PressRefused`` ``enter_cards``)
  and the entry is awaited again. A seat whose cards cannot be entered is held by a supervisor
  (``hold_seat``: ``SeatHeld``, its wagers out of the settlement, for the supervisor to resolve).
- settlement is the automated game's own (``Round._settle``), once every card it needs is known.
"""

from __future__ import annotations

from typing import Any

from controller.game.cards import DECK
from controller.round import commands as cmd
from controller.round.data import Actor
from controller.round.graph import DEVICES
from drivers import events as ev

#: The two dealing modes; ``automated`` is the shoe's (NY (d)(2)), ``manual`` by hand or manual shoe (NY (d)(1)).
DEALING_MODES: tuple[str, ...] = ("automated", "manual")

#: Cards in each reveal of the cross, in order (the same as ``controller.round.decisions.REVEALS``).
REVEAL_COUNTS: dict[str, int] = {"across": 2, "down": 2, "middle": 1}


def manual_plan(seats: list[int]) -> list[int | None]:
    """The steps of a deal by hand (NY (d)(1)): ``None`` for the five-card cross, then one card per wagering
    seat (``seats``, ascending = from the dealer's left, clockwise), twice round."""
    order = sorted(seats)
    return [None, *order, *order]


def check_entry(cards: tuple[str, ...], count: int, known: set[str]) -> str:
    """Why an entry of ``cards`` cannot be taken (``""`` when it can): ``count`` cards expected, each a card
    of the deck (two characters, rank ``23456789TJQKA`` + suit ``cdhs``), none twice, none in ``known`` (cards
    entered earlier in the round). Names the count or the position of the bad card, never a card (the reason
    reaches the panel and the log while other cards are still face down)."""
    if len(cards) != count:
        return f"{len(cards)} cards entered, {count} expected"
    for index, card in enumerate(cards, 1):
        if card not in DECK:
            return f"card {index} is not a card of the deck"
    if len(set(cards)) != len(cards):
        return "a card is entered twice"
    for index, card in enumerate(cards, 1):
        if card in known:
            return f"card {index} was already entered this round"
    return ""


class ManualDealing:
    """The manual-dealing handlers of ``controller.round.machine.Round`` (a mixin: it uses the round's state, graph
    and helpers). Fields it owns are in ``Round.__init__``/``RoundData`` and in ``checkpoint``/``restore``."""

    # ------------------------------------------------------------------ graph conditions
    def manual_dealing_allowed(self) -> bool:
        """``table.yaml`` allows manual dealing at this table."""
        return self.config.manual_dealing  # type: ignore[attr-defined]

    def dealing_by_shoe(self) -> bool:
        """The table deals from the automated shoe (the mode for the next round)."""
        return self.dealing_mode == "automated"  # type: ignore[attr-defined]

    def dealing_by_hand(self) -> bool:
        """The table deals by hand (the mode for the next round)."""
        return self.dealing_mode == "manual"  # type: ignore[attr-defined]

    def shoe_ready(self) -> bool:
        """The shoe's link is up and its last transaction was reconciled with the journal."""
        return "shoe" in self.devices_ready and self.reconciled  # type: ignore[attr-defined]

    def round_by_hand(self) -> bool:
        """The current round is dealt by hand."""
        return self.round is not None and self.round.manual  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ what is allowed
    def _manual_actions(self) -> tuple[str, ...] | None:
        """Actions allowed in a round dealt by hand where they differ from the automated game's (None: the
        same). In the dealing states ``confirm`` (a step placed); in a reveal ``reveal`` once its cards are
        entered; in settlement ``hold_seat`` while a seat's cards are awaited."""
        if not self.round_by_hand():
            return None
        state, data = self.state, self.round  # type: ignore[attr-defined]
        if state in ("dealing_cross", "dealing_players"):
            return ("confirm",)
        if state.endswith("_reveal"):
            return ("reveal",) if data.entry_pending else ()
        if state == "settlement":
            return ("hold_seat",) if isinstance(self._awaited(), int) else ()
        return None

    def _mode_actions(self) -> tuple[str, ...]:
        """The mode switches the graph allows now (``may_deal_by_hand``/``may_deal_by_shoe``)."""
        return tuple(a for a in ("deal_by_hand", "deal_by_shoe") if getattr(self, f"may_{a}")())

    def _needed_devices(self) -> set[str]:
        """Devices a fault may not be cleared without: the shoe only while the table deals from it."""
        return set(DEVICES) - ({"shoe"} if self.dealing_by_hand() else set())

    # ------------------------------------------------------------------ actions
    def _manual_act(self, action: str, actor: Any, reason: str) -> bool:
        """Carry out ``action`` (already allowed, role checked) when it is manual dealing's; False otherwise."""
        if action in ("deal_by_hand", "deal_by_shoe"):
            self._switch_mode(action, actor, reason)
            return True
        if not self.round_by_hand():
            return False
        if action == "confirm" and self.state in ("dealing_cross", "dealing_players"):  # type: ignore[attr-defined]
            self._placed(actor)
            return True
        if action == "reveal":
            self._reveal_entered()
            return True
        if action == "hold_seat":
            self._hold_seat(actor, reason)
            return True
        return False

    def _switch_mode(self, action: str, actor: Any, reason: str) -> None:
        mode = "manual" if action == "deal_by_hand" else "automated"
        getattr(self, action)()  # the graph's rule: between rounds, allowed by the table, shoe ready to come back
        self.dealing_mode = mode
        self._emit(cmd.DealingModeChanged(self.round_no, mode, actor.name, actor.role, reason))  # type: ignore
        if mode == "manual":
            self._show("Dealing by hand" + (": supervisor may clear" if self.state == "fault" else ""))
        else:
            self._show("Dealing by shoe: next round shuffles and counts")  # type: ignore[attr-defined]

    def _open_by_hand(self) -> None:
        """A round opened while the table deals by hand: no shoe shuffle (the dealer shuffles by hand)."""
        data = self.round  # type: ignore[attr-defined]
        data.manual = data.shuffled = True
        self._emit(cmd.ManualRound(data.round_no))  # type: ignore[attr-defined]

    def _prompt_deal(self) -> None:
        """Show the next step of the deal by hand (in place of asking the shoe for a stack)."""
        data = self.round  # type: ignore[attr-defined]
        plan = manual_plan(list(data.seats))
        if data.placed == 0:
            self._show("Deal 5 cards in a cross, face down; confirm")  # type: ignore[attr-defined]
            return
        seat = plan[data.placed]
        nth = "1st" if data.placed <= len(data.seats) else "2nd"
        self._show(f"Deal {nth} card to seat {seat}, face down; confirm")  # type: ignore[attr-defined]

    def _placed(self, actor: Any) -> None:
        """The dealer confirmed the step of the deal in progress (NY (d)(1))."""
        data = self.round  # type: ignore[attr-defined]
        plan = manual_plan(list(data.seats))
        step = data.placed
        self._emit(cmd.CardPlacedByHand(data.round_no, step, plan[step], actor.name))  # type: ignore
        data.placed += 1
        if step == 0:
            self.cross_placed()  # type: ignore[attr-defined]
        elif data.placed < len(plan):
            self.card_placed()  # type: ignore[attr-defined]
        if data.placed < len(plan):
            self._prompt_deal()
            return
        self.hands_placed()  # type: ignore[attr-defined]
        self._show("Across decision: bet 1x-3x or fold")  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ cards entered
    def _awaited(self) -> str | int | None:
        """What entry the round waits for: a reveal step's name, ``"community"`` (community cards never turned,
        at settlement), a seat number (its two cards, at settlement), or None."""
        data, state = self.round, self.state  # type: ignore[attr-defined]
        if data is None or not data.manual or state == "fault":
            return None
        if state.endswith("_reveal"):
            return state.removesuffix("_reveal")
        if state != "settlement":
            return None
        if len(data.board) < 5:
            return "community"
        for seat in sorted(data.seats, reverse=True):  # from the dealer's right, counterclockwise (NY (e)(9))
            if data.seats[seat].cards is None:
                return seat
        return None

    def _on_CardsEntered(self, event: ev.CardsEntered) -> None:
        key = self.supervisor_key  # type: ignore[attr-defined]
        actor_role, user = ("supervisor", key) if key else ("dealer", "")
        actor = Actor(actor_role, user, event.device)
        cards = tuple(event.cards)
        awaited = self._awaited()
        data = self.round  # type: ignore[attr-defined]
        target = "community" if event.seat == 0 else event.seat
        if awaited is None:
            why = f"no cards are awaited in {self.state}"  # type: ignore[attr-defined]
        elif isinstance(awaited, int) and target != awaited:
            why = f"seat {awaited} is next (from the dealer's right)"
        elif isinstance(awaited, str) and target != "community":
            why = f"the {awaited} community cards are awaited" if awaited != "community" else \
                "the community cards never turned are awaited"
        else:
            count = 2 if isinstance(awaited, int) else REVEAL_COUNTS.get(awaited, 5 - len(data.board))
            why = check_entry(cards, count, set(data.dealt))
        if why:
            self._refuse("enter_cards", why, actor, f"Cards refused: {why}")  # type: ignore[attr-defined]
            return
        label = f"seat {awaited}" if isinstance(awaited, int) else awaited
        self._emit(cmd.CardsRecorded(data.round_no, label, cards, actor.name, actor.role,  # type: ignore
                                     event.device))
        if isinstance(awaited, str) and awaited != "community":
            data.entry_pending = list(cards)  # turned by ``reveal``; a new entry replaces it
            self._show_entered(awaited)
            return
        data.dealt.update(cards)
        if awaited == "community":
            data.board.extend(cards)
        else:
            data.seats[awaited].cards = cards
        self._settle()  # type: ignore[attr-defined]

    def _show_entered(self, step: str) -> None:
        """The cards of reveal ``step`` are entered, not yet turned: the dealer is to press ``reveal``."""
        count = len(self.round.entry_pending)  # type: ignore[attr-defined]
        self._show(f"{step}: {count} card(s) entered; press reveal")  # type: ignore[attr-defined]

    def _show_entry_awaited(self) -> None:
        """After a fault cleared in a round dealt by hand: the entry the round waits for is shown again, in a reveal
        (the step's cards to turn, or ``reveal`` to press once they are entered) or at settlement (the seat or the
        community cards to enter). The clearance's text replaced it, and no lamp asks for cards: the panel's text
        is the dealer's only cue. Nothing in other states or rounds."""
        if not self.round_by_hand():
            return
        state = self.state  # type: ignore[attr-defined]
        if state.endswith("_reveal"):
            step = state.removesuffix("_reveal")
            if self.round.entry_pending:  # type: ignore[attr-defined]
                self._show_entered(step)
            else:
                self._show_turn(step)  # type: ignore[attr-defined]
        elif state == "settlement":
            self._cards_missing()

    def _reveal_entered(self) -> None:
        """``reveal`` in a round dealt by hand: the community cards entered for this step are turned."""
        data = self.round  # type: ignore[attr-defined]
        step = self.state.removesuffix("_reveal")  # type: ignore[attr-defined]
        cards, data.entry_pending = tuple(data.entry_pending), []
        data.dealt.update(cards)
        data.board.extend(cards)
        data.revealed.extend(cards)
        self._emit(cmd.CardsRevealed(data.round_no, step, cards))  # type: ignore[attr-defined]
        self._show(f"{step}: {' '.join(cards)}")  # type: ignore[attr-defined]
        self.reveal()  # type: ignore[attr-defined]
        if self.state == "settlement":  # type: ignore[attr-defined]
            self._settle()  # type: ignore[attr-defined]

    def _cards_missing(self) -> bool:
        """In a round dealt by hand, before settling: True (and the entry awaited shown) while a card the
        settlement needs is not entered; once all are, the cross is the entered community cards."""
        data = self.round  # type: ignore[attr-defined]
        if not data.manual:
            return False
        awaited = self._awaited()
        if awaited == "community":
            self._show(f"Enter the {5 - len(data.board)} community card(s) never turned")  # type: ignore
            return True
        if awaited is not None:
            if data.seats[awaited].folded_at is None:
                self._show(f"Turn seat {awaited}: enter its 2 cards")  # type: ignore[attr-defined]
            else:  # its cards went to the discard rack unseen: entered face down, for the record and settlement
                self._show(f"Seat {awaited} folded: enter its 2 cards face down")  # type: ignore[attr-defined]
            return True
        data.cross = tuple(data.board)
        return False

    def _hold_seat(self, actor: Any, reason: str) -> None:
        """A supervisor holds the seat whose cards are awaited: it is not settled; its wagers of record are
        recorded for the supervisor to resolve (``SeatHeld``) and the settlement goes on."""
        data = self.round  # type: ignore[attr-defined]
        seat = self._awaited()
        self.hold_seat()  # type: ignore[attr-defined]
        state = data.seats.pop(seat)
        data.held_seats[seat] = dict(state.wagers)
        self._emit(cmd.SeatHeld(data.round_no, seat, dict(state.wagers), actor.name, actor.role,  # type: ignore
                                reason or "cards not entered"))
        self._settle()  # type: ignore[attr-defined]
