"""The simulated table dealing by hand (NY 9 NYCRR 5324.39(d)(1)): the supervisor switches the table to manual
dealing and back, and the dealer deals from its own shuffled deck as the panel asks, then scans or types each
card as it is turned (``controller.simulated.table`` module docstring, "With ``manual``").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from controller.game.cards import DECK
from controller.round.table_locks import TEST_MARK

#: Each dealing-mode switch and the other one, lit instead while the table already deals that way
#: (``controller.round.graph``: ``deal_by_hand`` only while dealing by shoe, ``deal_by_shoe`` only by hand).
OTHER_SWITCH: dict[str, str] = {"deal_by_hand": "deal_by_shoe", "deal_by_shoe": "deal_by_hand"}


def unmarked(text: str) -> str:
    """A panel text without the mark of test mode (``TEST_MARK``, NY 9 NYCRR 5319.58): what the simulated people
    read is the same in a test round."""
    return text.removeprefix(TEST_MARK)


class RoundOver(Exception):
    """The round ended before the dealer finished it (a supervisor voided it)."""


class ManualDealing:
    """The dealing-by-hand steps of ``SimulatedTable`` (a mixin: it uses the table's ``panel``, ``reader``,
    ``rng``, ``supervisor_id``, ``manual``, ``manual_rounds``, ``rounds_played``, ``on_shoe_down``,
    ``on_shoe_back``, ``_stop``, ``_act`` and ``_dealer_press``)."""

    def _switch_when_due(self) -> bool:
        """Between rounds: the shoe goes down and the supervisor switches to dealing by hand when the round to
        play is the first of ``manual_rounds``; the shoe comes back and the supervisor switches back after its
        last (``_supervisor_presses``: nothing to press when the table deals that way already). False when
        stopped."""
        if self.manual_rounds is None:
            return True
        first, end = self.manual_rounds
        if not self.manual and first <= self.rounds_played and (end is None or self.rounds_played < end):
            if self.on_shoe_down is not None:
                self.on_shoe_down()
            if not self._supervisor_presses("deal_by_hand", then_clear=True):
                return False
            self.manual = True
        elif self.manual and end is not None and self.rounds_played >= end:
            if self.on_shoe_back is not None:
                self.on_shoe_back()
            if not self._supervisor_presses("deal_by_shoe"):
                return False
            self.manual = False
        return True

    def _supervisor_presses(self, button: str, then_clear: bool = False) -> bool:
        """The supervisor turns the key and looks at the mode switches. ``button`` lit is pressed (and
        ``clear_fault`` after it when ``then_clear`` and that lights: the fault the shoe left no longer needs the
        shoe); the other switch lit means the table deals that way already (a table started again on its
        journal): nothing to press. Neither lit (the shoe not back yet, say), the supervisor waits with the key
        turned until the panel changes, turning the key again only when someone else turned it off, and presses
        again only a press that changed nothing (lost): never on a timer alone, so nothing is journaled while
        nothing happens. True when done, False when stopped."""
        other = OTHER_SWITCH[button]
        self._act(self.panel.turn_key, True, self.supervisor_id)
        try:
            answered: tuple[frozenset[str], str] | None = None  # the panel when a press changed it, lamp still lit
            while not self._stop.is_set():
                if self.panel.key is None:  # the other supervisor left and turned the key off
                    self._act(self.panel.turn_key, True, self.supervisor_id)
                seen = (self.panel.lamps, self.panel.display)
                if other in seen[0]:
                    return True
                if button in seen[0] and seen != answered:
                    self._act(self.panel.press, button)
                    if self.panel.wait_for(lambda: button not in self.panel.lamps, 1.0):
                        if then_clear and self.panel.wait_for(lambda: "clear_fault" in self.panel.lamps, 1.0):
                            self._act(self.panel.press, "clear_fault")
                            self.panel.wait_for(lambda: "clear_fault" not in self.panel.lamps, 1.0)
                        return True
                    now = (self.panel.lamps, self.panel.display)
                    answered = now if now != seen else None  # unchanged: the press was lost, pressed again
                    continue
                self.panel.wait_for(lambda: (self.panel.lamps, self.panel.display) != seen
                                    or self.panel.key is None, 0.5)
        finally:
            self._act(self.panel.turn_key, False, self.supervisor_id)
        return False

    def _until_display(self, ready: Callable[[str], bool]) -> str | None:
        """Wait until the panel's text satisfies ``ready`` and return it; None when stopped; ``RoundOver`` when
        the round ended early (``open_betting`` lit)."""
        while not self._stop.is_set():
            text = unmarked(self.panel.display)
            if ready(text):
                return text
            if "open_betting" in self.panel.lamps:
                raise RoundOver
            self.panel.wait_for(lambda: unmarked(self.panel.display) != text, 0.1)
        return None

    def _deal_by_hand(self, seats: list[int]) -> tuple[tuple[str, ...], dict[int, tuple[str, str]]] | None:
        """Deal from the dealer's own shuffled deck as the panel asks, confirming each step: the cross, then one
        card at a time clockwise from the dealer's left until each seat has two. Returns the cross and the
        hands, or None when stopped."""
        deck = list(DECK)
        self.rng.shuffle(deck)
        count = len(seats)
        cross = tuple(deck[:5])
        hands = {seat: (deck[5 + i], deck[5 + count + i]) for i, seat in enumerate(seats)}
        while True:
            text = self._until_display(lambda t: t.startswith(("Deal ", "Across decision")))
            if text is None:
                return None
            if text.startswith("Across decision"):
                return cross, hands
            self._dealer_press("confirm", lambda: unmarked(self.panel.display) != text, 1.0)  # unchanged: lost

    def _enter_when_asked(self, prompt: str, seat: int, cards: Sequence[str]) -> bool:
        """When the panel shows ``prompt``, type ``cards`` for ``seat`` (0: community); False when stopped."""
        text = self._until_display(lambda t: t.startswith(prompt))
        if text is None:
            return False
        self._enter(seat, cards)
        self.panel.wait_for(lambda: unmarked(self.panel.display) != text, 1.0)
        return True

    def _enter(self, seat: int, cards: Sequence[str]) -> None:
        """Scan ``cards`` for ``seat`` (0: community) on the card reader, or type them on the panel without one."""
        if self.reader is not None:
            self._act(self.reader.scan, seat, tuple(cards))
        else:
            self._act(self.panel.enter_cards, seat, tuple(cards))

    def _settle_by_hand(self, cross: Sequence[str], hands: dict[int, tuple[str, str]]) -> bool:
        """Turn and type the cards the panel asks for at settlement (each seat as named, from the dealer's right;
        community cards never turned) until the round closes or its payout begins; False when stopped."""
        while not self._stop.is_set():
            if {"open_betting", "paid"} & self.panel.lamps:
                return True
            text = unmarked(self.panel.display)
            named = re.match(r"(?:Turn seat|Seat) (\d)\b.*enter its 2 cards", text)
            if named:
                seat = int(named.group(1))
                self._enter(seat, hands[seat])
            elif text.startswith("Enter the "):
                missing = int(text.split()[2])
                self._enter(0, cross[5 - missing:])
            self.panel.wait_for(lambda: unmarked(self.panel.display) != text or "open_betting" in self.panel.lamps, 1.0)
        return False
