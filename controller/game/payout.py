"""The payout check: what each spot of a settled seat must hold once the dealer has paid it, and how what the bet
sensors read differs from it.

Pure functions and plain data, used by the round machine (``controller.round.machine``, states ``payout`` and
``payout_reading``) and by the simulated dealer. Amounts are integer minor units.

The table procedure (docs/architecture.md, "The payout check"): after the settlement the dealer pays seat by
seat in settlement order, from the dealer's right, counterclockwise (NY 9 NYCRR 5324.39(e)(9); PA 58 Pa. Code
674a.11(h)). For each spot the panel says:

- ``take``: a losing wager: the dealer collects it; the spot must read 0;
- ``push``: the wager stays; the spot must read the wager;
- ``pay N``: a winning wager paid N (its net at the pay table's odds); the spot must read the wager plus N
  (``winning_spot: wager_and_payout``, the payout stacked on the wager) or N alone (``winning_spot: payout``,
  the house procedure of paying beside the wager: the wager is set beside the spot for the player, the
  payout is placed on it);
- a spot with no wager of the seat must read 0.

``table.yaml`` says whether the check is made (``payout: {check: true}``) and which procedure the house follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.settings.files import check_keys, error, line_of
from drivers.events import SPOTS

#: How the winning spot is paid (``payout.winning_spot`` of table.yaml).
WINNING_SPOT: tuple[str, ...] = ("wager_and_payout", "payout")

#: The spots' short names on the panel (64 characters): five-card bonus, ante across, ante down, across, down,
#: middle.
SHORT: dict[str, str] = {"five_card_bonus": "B", "ante_across": "AA", "ante_down": "AD", "across": "A",
                         "down": "D", "middle": "M"}

#: Kinds of a mispay a dealer can make (the simulated dealer's ``--payout-errors``).
MISPAY_KINDS: tuple[str, ...] = ("short", "over", "wrong_spot", "not_taken")


@dataclass(frozen=True)
class PayoutConfig:
    """``payout:`` of ``table.yaml``: ``check`` (the dealer's payouts are read and checked before the round
    closes; default off for a file without the section) and ``winning_spot`` (one of ``WINNING_SPOT``)."""

    check: bool = False
    winning_spot: str = "wager_and_payout"


def parse_payout_config(path: Path, entry: Any, present: bool = True, line: int | None = None) -> PayoutConfig:
    """Check the ``payout:`` mapping of the table file at ``path`` (``present`` False: no ``payout:`` key, the
    defaults, no check; ``line``: where the key is, for an empty section).

    Raises ``ConfigError`` naming the file, the line and the key for an empty section, a missing or unknown
    key (``check`` is required: a section without it must not leave the check off unnoticed), a ``check`` that
    is not true or false, or a ``winning_spot`` not in ``WINNING_SPOT``."""
    if not present:
        return PayoutConfig()
    if entry is None:
        raise error(path, "payout", "empty: give check: true (or false) and winning_spot", line)
    check_keys(path, "payout", entry, {"check"}, {"winning_spot"})
    check = entry["check"]
    if not isinstance(check, bool):
        raise error(path, "payout.check", f"expected true or false, got {check!r}", line_of(entry, "check"))
    winning = entry.get("winning_spot", "wager_and_payout")
    if winning not in WINNING_SPOT:
        raise error(path, "payout.winning_spot", f"expected one of {', '.join(WINNING_SPOT)}, got {winning!r}",
                    line_of(entry, "winning_spot"))
    return PayoutConfig(check, winning)


def plan_seat(wagers: dict[str, Any], winning_spot: str) -> dict[str, dict[str, Any]]:
    """What the dealer does on each of the seat's six spots and what the spot must then hold.

    ``wagers`` is the seat's settlement (``SeatSettlement.to_json()["wagers"]``: wager name -> ``{"amount",
    "outcome", "net"}``). Returns, for every spot of ``SPOTS``, ``{"action", "wager", "pay", "expected"}``:
    ``action`` ``take``/``push``/``pay``/``none`` (no wager), ``wager`` the stake, ``pay`` the amount to add
    (a win's net, else 0), ``expected`` what the sensor must read after the payout (module docstring).
    Raises ``ValueError`` for an unknown ``winning_spot`` or outcome."""
    if winning_spot not in WINNING_SPOT:
        raise ValueError(f"winning_spot {winning_spot!r} is not one of {WINNING_SPOT}")
    plan: dict[str, dict[str, Any]] = {}
    for spot in SPOTS:
        result = wagers.get(spot)
        if result is None:
            plan[spot] = {"action": "none", "wager": 0, "pay": 0, "expected": 0}
            continue
        amount, outcome, net = result["amount"], result["outcome"], result["net"]
        try:
            expected = spot_holds(amount, outcome, net, winning_spot)
        except ValueError as exc:
            raise ValueError(f"spot {spot}: {exc}") from None
        plan[spot] = {"action": _ACTION[outcome], "wager": amount, "pay": net if outcome == "win" else 0,
                      "expected": expected}
    return plan


#: The dealer's step on a spot for each outcome of its wager (module docstring).
_ACTION: dict[str, str] = {"lose": "take", "push": "push", "win": "pay"}


def spot_holds(amount: int, outcome: str, net: int, winning_spot: str) -> int:
    """What a spot whose wager of ``amount`` settled as ``outcome`` (``win``/``push``/``lose``) with ``net``
    (``controller.game.settlement.net_of``) must hold once the dealer has paid, the amount the bet sensors then
    read (docs/protocol.md, "Bet sensors"; the module docstring): 0 for a loss, the wager for a push, for a win the
    wager plus the payout (``winning_spot: wager_and_payout``) or the payout alone (``payout``). Minor units.
    Raises ``ValueError`` for an unknown ``winning_spot`` or outcome."""
    if winning_spot not in WINNING_SPOT:
        raise ValueError(f"winning_spot {winning_spot!r} is not one of {WINNING_SPOT}")
    if outcome == "lose":
        return 0
    if outcome == "push":
        return amount
    if outcome == "win":
        return net if winning_spot == "payout" else amount + net
    raise ValueError(f"unknown outcome {outcome!r}")


def expected_of(plan: dict[str, dict[str, Any]]) -> dict[str, int]:
    """The non-zero amounts the seat's spots must hold: spot -> minor units."""
    return {spot: step["expected"] for spot, step in plan.items() if step["expected"]}


def total_pay(plan: dict[str, dict[str, Any]]) -> int:
    """What the dealer pays the seat in all (the sum of the winning spots' payouts), minor units."""
    return sum(step["pay"] for step in plan.values())


def differences(plan: dict[str, dict[str, Any]], seen: dict[str, int]) -> tuple[dict[str, Any], ...]:
    """Each spot whose reading ``seen`` (spot -> amount; a missing spot is empty) differs from the plan, in
    ``SPOTS`` order: ``{"spot", "expected", "seen", "difference"}`` with ``difference`` = seen - expected
    (negative: short, the player was underpaid or a push was taken; positive: over, an overpayment or a losing
    wager left on the layout)."""
    return differences_from(expected_of(plan), seen)


def differences_from(expected: dict[str, int], seen: dict[str, int]) -> tuple[dict[str, Any], ...]:
    """As ``differences``, against ``expected`` (spot -> what the spot must hold; a missing spot must be empty):
    for a seat already paid, or not yet paid, whose chips must not move while another seat is paid."""
    out = []
    for spot in SPOTS:
        should, amount = expected.get(spot, 0), seen.get(spot, 0)
        if amount != should:
            out.append({"spot": spot, "expected": should, "seen": amount, "difference": amount - should})
    return tuple(out)


def short_and_over(found: tuple[dict[str, Any], ...]) -> tuple[int, int]:
    """The amounts of ``differences``: (short, over), both >= 0, minor units."""
    return (sum(-d["difference"] for d in found if d["difference"] < 0),
            sum(d["difference"] for d in found if d["difference"] > 0))


def instruction_text(seat: int, plan: dict[str, dict[str, Any]]) -> str:
    """The panel's instruction for one seat, e.g. ``Seat 6 pay 2000: B take AA +500 AD +500 A push D take M
    +1000`` (``SHORT`` names; spots without a wager left out); the caller fits it to the panel."""
    steps = []
    for spot, step in plan.items():
        action = step["action"]
        if action != "none":
            steps.append(f"{SHORT[spot]} {'+' + str(step['pay']) if action == 'pay' else action}")
    return f"Seat {seat} pay {total_pay(plan)}: " + " ".join(steps)


def mispay_text(seat: int, found: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> str:
    """The panel's message for a payout reading that does not match, e.g. ``Seat 4 mispay: AA short 500 M over
    1000``; a difference on another seat (``"seat"`` in it,
    ``controller.round.payout_check.PayoutCheck._check_payout``) is named under
    that seat: ``Seat 5 mispay: AA over 3500`` (the seat being paid first when it differs too, ``; `` between)."""
    by_seat: dict[int, list[str]] = {}
    for d in found:
        part = f"{SHORT[d['spot']]} {'short' if d['difference'] < 0 else 'over'} {abs(d['difference'])}"
        by_seat.setdefault(d.get("seat", seat), []).append(part)
    return "; ".join(f"Seat {s} mispay: " + " ".join(parts) for s, parts in by_seat.items())
