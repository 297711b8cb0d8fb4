"""Builders for driving the pure round state machine (controller.round.machine.Round) in tests.

``TableDriver`` feeds device events one at a time and keeps every output. It answers the machine's own
requests the way the devices do: a ``SpotsSnapshot`` carries the request id of the ``ReadSpots`` just returned,
a ``StackDispensed`` the transaction id of the ``Dispense`` just returned. ``play_round`` plays a whole round
from wagers, a cross, the seats' two-card stacks and the decisions, in the order of NY 9 NYCRR 5324.39(c)-(e):
open betting, shuffle, "no more bets" (lock), deal, across decision, reveal, down decision, reveal, middle
decision, reveal (settlement follows the last reveal).

Conventions (domain.md; drivers/events.py): seats 1-6 from the dealer's left clockwise; spots and wagers by
their names in ``drivers.events.SPOTS``; amounts in minor units; the cross is given as the shoe's five-card
stack: cards 1-2 the across line's outside cards, 3-4 the down line's outside cards, 5 the middle card.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from controller.game.payout import PayoutConfig
from controller.game.paytable import load_jurisdiction
from controller.game.table import load_table_config
from controller.round import commands as cmd
from controller.round.machine import Round
from drivers import events as ev

#: The shipped table without its payout check: these tests end a round at its settlement; the payout check
#: (controller.game.payout) has tests of its own (tests/test_payout.py) that turn it on.
CONFIG = dataclasses.replace(load_table_config(), payout=PayoutConfig())
NY = load_jurisdiction("ny")
DEVICES = ("shoe", "sensors", "panel")
DECISION_STEPS = ("across", "down", "middle")

#: Device commands (sent to a device) as opposed to records of the round.
DEVICE_COMMANDS = cmd.DEVICE_COMMANDS


def ready(device: str) -> ev.DeviceReady:
    """The handshake answer of one device."""
    return ev.DeviceReady(device, f"{device}-test", "1.0", 1)


def antes(amount: int, bonus: int | None = None) -> dict[str, int]:
    """A seat's wagers at "no more bets": two equal antes (NY (e)(1)) and an optional five-card bonus."""
    wagers = {"ante_across": amount, "ante_down": amount}
    if bonus is not None:
        wagers["five_card_bonus"] = bonus
    return wagers


def spots_of(table: Mapping[int, Mapping[str, int]]) -> tuple[tuple[int, str, int], ...]:
    """Snapshot triples (seat, spot, amount) for every non-empty spot, sorted by seat then spot order."""
    return tuple(
        (seat, spot, table[seat][spot])
        for seat in sorted(table)
        for spot in ev.SPOTS
        if table[seat].get(spot)
    )


def of_type(outputs: Iterable[Any], kind: type) -> list[Any]:
    """The outputs of one type, in order."""
    return [o for o in outputs if isinstance(o, kind)]


def new_round(last_round_no: int = 0) -> Round:
    return Round(CONFIG, NY, last_round_no=last_round_no)


class TableDriver:
    """Drives one ``Round`` and records every output. ``last`` is the list returned by the latest event."""

    def __init__(self, machine: Round | None = None) -> None:
        self.machine = machine or new_round()
        self.outputs: list[Any] = []
        self.last: list[Any] = []
        #: the chips on the layout as the bet sensors see them: seat -> spot -> amount
        self.layout: dict[int, dict[str, int]] = {}
        self._read: cmd.ReadSpots | None = None
        self._dispense: cmd.Dispense | None = None

    # -------------------------------------------------------------- raw events
    def send(self, event: Any) -> list[Any]:
        self.last = self.machine.handle(event)
        self.outputs.extend(self.last)
        for output in self.last:  # the requests still waiting for their device's answer
            if isinstance(output, cmd.ReadSpots):
                self._read = output
            elif isinstance(output, cmd.Dispense):
                self._dispense = output
        return self.last

    def press(self, button: str) -> list[Any]:
        return self.send(ev.ButtonPressed(button))

    @property
    def state(self) -> str:
        return self.machine.state

    def pending_read(self) -> cmd.ReadSpots:
        """The latest ReadSpots not answered yet (other events may have come in between)."""
        assert self._read is not None, "no read request pending"
        return self._read

    def pending_dispense(self) -> cmd.Dispense:
        """The latest Dispense not answered yet (other events may have come in between)."""
        assert self._dispense is not None, "no dispense request pending"
        return self._dispense

    def answer_read(self, layout: Mapping[int, Mapping[str, int]] | None = None) -> list[Any]:
        """Answer the ReadSpots just returned with the layout (default: the driver's own layout)."""
        request = self.pending_read()
        self._read = None
        return self.send(ev.SpotsSnapshot(request.request_id, spots_of(self.layout if layout is None else layout)))

    def answer_dispense(self, cards: Iterable[str], txn_id: int | None = None) -> list[Any]:
        """Answer the Dispense just returned with these cards (and its own transaction id unless given)."""
        request = self.pending_dispense()
        self._dispense = None
        return self.send(ev.StackDispensed(request.txn_id if txn_id is None else txn_id, tuple(cards)))

    def move_chips(self, seat: int, spot: str, amount: int) -> list[Any]:
        """Chips on one spot change; the sensors report it."""
        self.layout.setdefault(seat, {})[spot] = amount
        return self.send(ev.SpotChanged(seat, spot, amount))

    # -------------------------------------------------------------- the script
    def start(self, shoe_txn: int = 0, shoe_cards: tuple[str, ...] = ()) -> list[Any]:
        """Every device answers its handshake; the shoe then answers the machine's "what did you last do"
        (by default: nothing since power-on)."""
        out: list[Any] = []
        for device in DEVICES:
            out += self.send(ready(device))
        if any(isinstance(o, cmd.QueryLast) for o in out):
            out += self.send(ev.ShoeLastDispense(shoe_txn, shoe_cards))
        return out

    def open_betting(self, shuffle_count: int = 52) -> list[Any]:
        """Press ``open_betting``; the shoe answers its shuffle and the sensors the reading of the layout that
        the machine asks for as betting opens."""
        out = self.press("open_betting")
        out += self.send(ev.ShuffleComplete(shuffle_count))
        if self._read is not None:
            out += self.answer_read()
        return out

    def place(self, wagers: Mapping[int, Mapping[str, int]]) -> list[Any]:
        """Set the layout to these wagers; the sensors report each spot that changes (``SpotChanged``), as
        they do whenever an amount changes (docs/protocol.md, "Bet sensors")."""
        out: list[Any] = []
        new = {seat: {spot: amount for spot, amount in w.items() if amount} for seat, w in wagers.items()}
        for seat in sorted(set(self.layout) | set(new)):
            for spot in ev.SPOTS:
                amount = new.get(seat, {}).get(spot, 0)
                if self.layout.get(seat, {}).get(spot, 0) != amount:
                    out += self.send(ev.SpotChanged(seat, spot, amount))
        self.layout = new
        return out

    def lock(self, wagers: Mapping[int, Mapping[str, int]] | None = None) -> list[Any]:
        """Press "no more bets" and answer the read with the layout (or the given wagers). The reading the
        machine asks for as betting opens is answered first if it is still pending, as a board answers it at once."""
        out: list[Any] = []
        if self.state == "betting" and self._read is not None:
            out += self.answer_read()
        if wagers is not None:
            out += self.place(wagers)
        out += self.press("no_more_bets")
        out += self.answer_read()
        return out

    def deal(self, cross: Iterable[str], hands: Mapping[int, Iterable[str]]) -> list[Any]:
        """Answer every Dispense: stack 0 with the cross, each seat's stack with that seat's two cards."""
        out: list[Any] = []
        while self._dispense is not None:
            request = self.pending_dispense()
            cards = cross if request.seat is None else hands[request.seat]
            out += self.answer_dispense(cards)
        return out

    def decide(self, step: str, bets: Mapping[int, int]) -> list[Any]:
        """Players put their bets for ``step`` on its spot (absent or 0: a fold), the dealer confirms, the
        sensors answer. Folded seats' forfeited wagers are not touched here (see ``collect``)."""
        out: list[Any] = []
        for seat, amount in bets.items():
            if amount != self.layout.get(seat, {}).get(step, 0):
                out += self.move_chips(seat, step, amount)
            if not amount:
                self.layout.setdefault(seat, {}).pop(step, None)
        out += self.press("confirm")
        out += self.answer_read()
        return out

    def reveal(self) -> list[Any]:
        return self.press("reveal")


def play_round(
    wagers: Mapping[int, Mapping[str, int]],
    cross: Iterable[str],
    hands: Mapping[int, Iterable[str]],
    decisions: Mapping[str, Mapping[int, int]],
    driver: TableDriver | None = None,
    opened: bool = False,
) -> TableDriver:
    """Play one full round (starting the table first if the driver is new) and return the driver; with
    ``opened`` the round's betting is open already.

    ``decisions[step][seat]`` is the bet placed at that decision; a seat missing or 0 folds. A seat that
    folded earlier is simply left out of later steps; a round with nothing left in action ends at the fold.
    """
    if driver is None:
        driver = TableDriver()
        driver.start()
    if not opened:
        driver.open_betting()
    driver.lock(wagers)
    driver.deal(tuple(cross), {s: tuple(c) for s, c in hands.items()})
    for step in DECISION_STEPS:
        driver.decide(step, decisions.get(step, {}))
        if driver.state == "closed":  # every seat folded and no five-card bonus: settled at the fold
            break
        driver.reveal()
    return driver
