"""The dealer's payout in a scenario (docs/rig.md, "Paying"): ``pay`` and ``pay_as_shown`` steps.

After the settlement, with the payout check of table.yaml on (``payout: {check: true}``), the round waits in
``payout`` for the dealer to pay seat by seat from the dealer's right (NY 9 NYCRR 5324.39(e)(9); PA 58 Pa. Code
674a.11(h); docs/architecture.md, "The payout check"). A scenario pays as a dealer does: it leaves on each of
the seat's spots the chips the seat holds once paid and presses ``paid``; the controller reads the seat.

- ``pay: {seat: 6, ante_across: 1000, across: 1500}``: the amounts written in the scenario (worked out by hand
  from the regulation's odds), every spot not named emptied; the step first waits (``timeout``, default 10 s)
  until the panel asks for that seat, so the order of the steps is the order the controller pays in, and
  after the press until the seat's reading is journaled (``PayoutChecked``) or the round is in ``fault``.
  ``press: false`` leaves the chips without pressing ``paid``.
- ``pay_as_shown: true``: every seat the panel asks for, paid as the dealer's screen says (``/state``
  ``payout``: per spot take, push or pay N, with the chips the sensors hold), until the round leaves the
  payout; for scenarios whose subject is something else. A mispay shown meanwhile fails the step.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from controller.journal.reader import read_records
from drivers.events import SPOTS

#: Seconds a ``pay`` step waits for the panel to ask for its seat, and for the seat's reading.
PAY_TIMEOUT = 10.0
#: Seconds a ``pay_as_shown`` step may take in all.
PAY_ALL_TIMEOUT = 60.0
#: The states of the payout check (``controller.round.machine``).
PAYOUT_STATES = ("payout", "payout_reading")


class PayFailed(Exception):
    """A payout step that could not do what it should: the message says what."""


class Table(Protocol):
    """What the payout steps need of a scenario's run (``hil.scenario_run.ScenarioRun``)."""

    def state(self) -> dict[str, Any] | None: ...
    def chips(self) -> dict[tuple[int, str], int]: ...
    def set_chips(self, seat: int, amounts: dict[str, int]) -> None: ...
    def press_paid(self) -> None: ...
    def records(self) -> list[dict[str, Any]]: ...
    def winning_spot(self) -> str: ...


def _until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _asked(state: dict[str, Any] | None) -> int | None:
    """The seat the panel asks the dealer to pay, None when the round is not waiting for a payout."""
    if state is None or state.get("state") != "payout" or not state.get("payout"):
        return None
    return state["payout"]["seat"]


def _checks_of(table: Table, seat: int) -> int:
    return sum(1 for r in table.records() if r.get("type") == "PayoutChecked" and r["data"].get("seat") == seat)


def pay_seat(table: Table, seat: int, amounts: dict[str, int], *, press: bool = True,
             timeout: float = PAY_TIMEOUT) -> None:
    """Wait until the panel asks for ``seat``, leave ``amounts`` (spot -> minor units; a spot not named is
    emptied) on its spots and, with ``press``, press ``paid`` and wait for the seat's reading (a new
    ``PayoutChecked`` of the seat) or a fault. ``PayFailed`` when the panel asks for another seat or none, or
    nothing is read in ``timeout`` seconds."""
    if not _until(lambda: _asked(table.state()) == seat, timeout):
        state = table.state() or {}
        asked = _asked(state)
        raise PayFailed(f"the panel does not ask for seat {seat}: state {state.get('state')}"
                        + (f", seat {asked} asked" if asked is not None else "")
                        + (f", panel {state.get('display')!r}" if state.get("display") else ""))
    before = _checks_of(table, seat)
    table.set_chips(seat, {spot: amounts.get(spot, 0) for spot in SPOTS})
    if not press:
        return
    table.press_paid()
    if not _until(lambda: _checks_of(table, seat) > before or (table.state() or {}).get("state") == "fault",
                  timeout):
        raise PayFailed(f"seat {seat} was marked paid but not read within {timeout:.0f} s "
                        f"(state {(table.state() or {}).get('state')})")


def shown_amounts(payout: dict[str, Any], seat: int, chips: dict[tuple[int, str], int],
                  winning_spot: str) -> dict[str, int]:
    """What ``seat``'s spots hold once paid as the dealer's screen says (``payout`` of ``/state``): a spot to
    take or without a wager empty, a push left as it is, a spot paid N holding its chips plus N
    (``wager_and_payout``) or N alone (``payout``: the wager set beside the spot for the player)."""
    out = {}
    for spot, step in payout["seats"][str(seat)]["spots"].items():
        held = chips.get((seat, spot), 0)
        if step["action"] == "push":
            out[spot] = held
        elif step["action"] == "pay":
            out[spot] = step["pay"] + (held if winning_spot == "wager_and_payout" else 0)
        else:
            out[spot] = 0
    return out


def pay_as_shown(table: Table, timeout: float = PAY_ALL_TIMEOUT) -> list[int]:
    """Pay every seat the panel asks for as the dealer's screen says (``shown_amounts``) until the round leaves
    the payout; the seats paid, in order. ``PayFailed`` when a mispay is shown, the round is not in the payout
    (or does not leave it) within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    if not _until(lambda: (table.state() or {}).get("state") in PAYOUT_STATES, PAY_TIMEOUT):
        raise PayFailed(f"the round is not waiting for a payout (state {(table.state() or {}).get('state')})")
    paid: list[int] = []
    while True:
        state = table.state() or {}
        if state.get("state") not in PAYOUT_STATES:
            return paid
        if time.monotonic() >= deadline:
            raise PayFailed(f"the payout did not end within {timeout:.0f} s (seats paid: {paid})")
        seat = _asked(state)
        if seat is None:
            time.sleep(0.05)
            continue
        if state["payout"]["differences"]:
            raise PayFailed(f"seat {seat} paid as shown reads as a mispay: {state.get('display')!r}")
        if paid and paid[-1] == seat:  # its reading is journaled; the panel moves on to the next seat
            time.sleep(0.05)
            continue
        pay_seat(table, seat, shown_amounts(state["payout"], seat, table.chips(), table.winning_spot()))
        paid.append(seat)
