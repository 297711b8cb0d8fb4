"""The payout check (``payout: {check: true}`` of table.yaml; NY 9 NYCRR 5324.39(e)(9), PA 58 Pa. Code 674a.11(h)).

The dealer pays seat by seat from the dealer's right, presses ``paid`` for each, and the whole layout is read and
compared with what it must hold (``controller.game.payout``: the seat paid, the seats checked, the seats not yet
paid). A difference is shown with its spot and amount and the seat is read again after the correction, or a
supervisor accepts it (``accept_mispay``, journaled as a mispay). The round closes when every seat is paid and
checked.
"""

from __future__ import annotations

from typing import Any

from controller.game.payout import (differences, differences_from, expected_of, instruction_text, mispay_text,
                                    short_and_over, total_pay)
from controller.round import commands as cmd
from controller.round.data import Actor
from controller.round.graph import PAYOUT_STATES


class PayoutCheck:
    """The payout check of ``controller.round.machine.Round`` (a mixin: it uses the round's state, graph and
    helpers; its fields are in ``RoundData``)."""

    def _payout_view(self) -> dict[str, Any] | None:
        """The payout check as the dealer's screen shows it (``view()["payout"]``), None outside it: ``seat``
        being paid, ``to_pay`` (seats left, in order), ``seats`` (per seat: each spot's ``action``, ``wager``,
        ``pay`` and ``expected`` and the seat's ``total``) and ``differences`` of the current seat's last
        reading."""
        data = self.round
        if data is None or self.phase not in PAYOUT_STATES:
            return None
        return {
            "seat": data.to_pay[0] if data.to_pay else None,
            "to_pay": list(data.to_pay),
            "seats": {str(seat): {"spots": {spot: dict(step) for spot, step in plan.items()},
                                  "total": total_pay(plan)}
                      for seat, plan in data.payout_plan.items()},
            "differences": [dict(d) for d in data.last_check["differences"]] if data.last_check else [],
        }
    def _show_payout(self) -> None:
        """Show the current seat's payout, or, after a reading that differed, the spots and the differences."""
        data = self.round
        assert data is not None and data.to_pay
        seat = data.to_pay[0]
        if data.last_check:
            self._show(mispay_text(seat, data.last_check["differences"]))
        else:
            self._show(instruction_text(seat, data.payout_plan[seat]))
    def _paid(self, actor: Actor, reason: str) -> None:
        """The dealer marked the current seat paid: its spots are read (``_check_payout``)."""
        self.paid()
        self._reader = actor
        self._read_spots()
    def _check_payout(self, spots: dict[int, dict[str, int]]) -> None:
        """Compare the whole layout with what it must hold (NY 5324.39(e)(9): each seat settled in turn): the seat
        being paid with its payout plan (``controller.game.payout``), each seat already paid and checked with what it
        held then, each seat not yet paid (a seat without a wager too) with what it held when the payout began. An exact match moves on to the
        next seat (or closes the round); a difference, on any seat, is shown with its seat, spot and amount and
        the dealer puts it right (``paid`` again: the layout is read again) or a supervisor accepts it
        (``accept_mispay``). A difference on another seat names it (``"seat"`` in the difference)."""
        data = self.round
        assert data is not None and data.to_pay
        seat = data.to_pay[0]
        plan = data.payout_plan[seat]
        seen = dict(spots.get(seat, {}))
        found = list(differences(plan, seen))
        others: dict[int, dict[str, int]] = {}
        # in settlement order, from the dealer's right; a seat without a wager must keep what it had too
        for other in sorted(set(data.seats) | set(data.payout_base), reverse=True):
            should = data.checked.get(other, data.payout_base.get(other))
            if other == seat or should is None:  # None: a payout begun before the base was kept
                continue
            found += [{"seat": other, **d} for d in differences_from(should, spots.get(other, {}))]
            others[other] = dict(spots.get(other, {}))
        actor = self._reader or Actor("dealer", "", "panel")
        self._emit(cmd.PayoutChecked(data.round_no, seat, expected_of(plan), seen, tuple(found), actor.name,
                                     actor.role))
        if found:
            data.last_check = {"seat": seat, "seen": seen, "differences": [dict(d) for d in found],
                               "others": others, "id": self._notice()}
            self.mispaid()
            self._show_payout()
            return
        self._seat_done(expected_of(plan))
    def _seat_done(self, holds: dict[str, int]) -> None:
        """The current seat is paid and checked and holds ``holds`` (spot -> amount): later readings expect it."""
        data = self.round
        assert data is not None
        data.checked[data.to_pay.pop(0)] = dict(holds)
        data.last_check = None
        if data.to_pay:
            self.next_seat()
            self._show_payout()
        else:
            self.all_paid()
            self._close_round()
    def _accept_mispay(self, actor: Actor, reason: str) -> None:
        """A supervisor accepts the last reading as paid (a mispay, journaled with the amounts, who and why):
        the current seat and any other seat that differed hold from now on what was read; the dealer goes on to
        the next seat."""
        data = self.round
        assert data is not None and data.last_check is not None
        seat = data.to_pay[0]
        found = tuple(dict(d) for d in data.last_check["differences"])
        short, over = short_and_over(found)
        self._emit(cmd.MispayAccepted(data.round_no, seat, expected_of(data.payout_plan[seat]),
                                      dict(data.last_check["seen"]), found, short, over, actor.name, actor.role,
                                      reason))
        for other in {d["seat"] for d in found if "seat" in d}:
            layout = dict(data.last_check["others"].get(other, {}))
            if other in data.checked:
                data.checked[other] = layout
            else:
                data.payout_base[other] = layout
        self._seat_done(data.last_check["seen"])
