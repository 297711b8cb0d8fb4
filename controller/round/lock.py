"""Wagers and the lock (NY 9 NYCRR 5324.39(c)(3),(c)(4),(e)(1)): the layout followed, "no more bets", the lock,
seats held for correction or excluded, and past-posting.

- betting opens with the layout read once; "no more bets" locks the layout as the sensors reported it when the
  press is journaled (``_announce``); a change after it, the reading that follows included, is past-posting.
- two equal antes per playing seat, a five-card bonus only with antes, nothing on the decision spots yet, amounts
  within table limits. Seats with an invalid wager are named (``wagers_held``) and must be corrected
  (``no_more_bets`` again) or excluded (``exclude``) before any card is dealt.
- a chip change on a locked spot (seen as it happens or in any later reading of the spots) is past-posting:
  recorded with the locked and new amounts, shown on the panel; the locked amount stays the wager of record and
  no dealer action is taken until a supervisor acknowledges it (``controller.round.faults``).
"""

from __future__ import annotations

from typing import Any

from controller.game.table import DECISIONS, WagerError, check_limits, check_wagers
from controller.round import commands as cmd
from controller.round.data import Actor, RoundData, SeatState
from controller.round.graph import PAYOUT_STATES
from drivers import events as ev

#: The spots wagered before "no more bets" (every spot but the decisions'), locked at the lock.
BET_SPOTS: tuple[str, ...] = tuple(spot for spot in ev.SPOTS if spot not in DECISIONS)


class WagerLock:
    """The wagers and the lock of ``controller.round.machine.Round`` (a mixin: it uses the round's state, graph and
    helpers; its fields are in ``Round.__init__``/``RoundData``)."""

    def _open_betting(self, actor: Actor, reason: str) -> None:
        self.last_round_no += 1
        self.round = RoundData(self.last_round_no)
        self.faults = []
        self.open_betting()
        self._emit(cmd.RoundOpened(self.last_round_no, test=self.test_mode is not None))  # table_locks
        if self.dealing_by_hand():
            self._open_by_hand()
        elif self.shuffle_kept:  # the last round was a no-play round: its checked shuffle deals this one
            self.round.shuffled, self.shuffle_kept = True, False
        else:
            self._emit(cmd.Shuffle())
        self._read_spots()  # the layout as betting opens: what "no more bets" will lock is followed from it
        self._show(f"Round {self.last_round_no}: place your bets")
    def _no_more_bets(self, actor: Actor, reason: str) -> None:
        """"No more bets" (NY 5324.39(c)(3)): the first time every spot of the layout as it is now; for seats held
        for correction, their spots as they stand now, never above what they held."""
        data = self.round
        assert data is not None
        if not data.bets_closed:
            self._announce({(seat, spot) for seat in ev.SEATS for spot in ev.SPOTS} | set(self.layout))
        else:
            self._announce(data.correctable)
        self.no_more_bets()
        self._reader = actor
        self._read_spots()
    def _announce(self, spots: Any) -> None:
        """What an announcement ("no more bets", a decision's ``confirm``) decides is the layout when it is
        journaled (NY 9 NYCRR 5324.39(c)(3); (e)(3),(5),(7): the wager on the spot when the dealer calls it):
        ``data.called`` holds each of ``spots`` (``(seat, spot)`` keys) as the sensors last reported it, capped by
        what a held seat may hold. Any change that reaches the controller after it, a chip change or the reading
        that follows, is past-posting or pinching (``_check_locked``), and the announced amount stands."""
        data = self.round
        assert data is not None
        layout, held = self.layout, data.correctable
        if not held:  # no seat held: every spot as reported (the first announcement of a round, each decision's)
            data.called = {key: layout.get(key, 0) for key in spots}
            return
        data.called = {key: min(layout.get(key, 0), held.get(key, layout.get(key, 0))) for key in spots}
    def _exclude(self, actor: Actor, reason: str) -> None:
        data = self.round
        assert data is not None
        for seat, why in sorted(data.invalid.items()):
            data.excluded.add(seat)
            self._emit(cmd.SeatExcluded(data.round_no, seat, why, actor.name, actor.role))
        data.invalid = {}
        for key, most in data.correctable.items():  # what an excluded seat leaves on the layout is no wager:
            if key[0] in data.excluded:  # it may be taken back, never added to (``_check_locked``)
                data.returnable[key] = min(self.layout.get(key, 0), most)
        self.exclude()
        self._reader = actor
        self._read_spots()
    def _read_spots(self) -> None:
        self._request_id = self._request_id % 0xFFFF + 1
        self._pending_read = self._request_id
        self._emit(cmd.ReadSpots(self._request_id))
    def _on_SpotChanged(self, event: ev.SpotChanged) -> None:
        if event.amount:
            self.layout[(event.seat, event.spot)] = event.amount
        else:
            self.layout.pop((event.seat, event.spot), None)
        data = self.round
        if data is None or not self.round_open() or self.phase in PAYOUT_STATES:
            return  # between rounds, or the dealer paying: chips move freely; the journal keeps the event
        self._check_locked(event.seat, event.spot, event.amount)
    def _check_locked(self, seat: int, spot: str, amount: int) -> None:
        """Past-posting (NY (c)(3): no wager made, increased or withdrawn after "no more bets"): a locked spot
        whose chips differ from the locked amount, or a spot of a seat held for correction whose chips rise
        above what it held (a correction may only take chips away)."""
        data = self.round
        assert data is not None
        key = (seat, spot)
        if key in data.called:  # announced, its reading not yet in: the amount at the announcement stands
            if amount == data.called[key]:
                self._back_in_order(key)
                return
            locked = data.called[key]
        elif key in data.correctable or key in data.returnable:
            # a held seat's correction, or an excluded seat's chips taken back: from now on the spot may only
            # come down further
            most = data.correctable if key in data.correctable else data.returnable
            if amount <= most[key]:
                most[key] = amount
                self._back_in_order(key)
                return
            locked = most[key]
        elif key not in data.locked:
            return
        elif data.locked[key] == amount:
            self._back_in_order(key)
            return
        elif key in data.collectable and amount == 0:
            return  # the dealer collected a forfeited wager (NY 5324.39(e)(4),(6),(7))
        else:
            locked = data.locked[key]
        item = {"seat": seat, "spot": spot, "locked": locked, "new": amount}
        if item in data.pending_acks or item in data.acknowledged:
            return  # already recorded: the same chips seen again
        data.pending_acks.append(item)
        data.acks_id = self._notice()
        self._emit(cmd.Irregularity(data.round_no, "past_posting", item))
        self._show_past_posting()
    def _show_past_posting(self) -> None:
        """Show the latest past-posting awaiting a supervisor: its seat, spot and the amount that stands."""
        data = self.round
        assert data is not None and data.pending_acks
        item = data.pending_acks[-1]
        self._show(f"Past-posting seat {item['seat']} {item['spot']}: {item['locked']} kept")
    def _back_in_order(self, key: tuple[int, str]) -> None:
        """A spot is back at (or below, for a held seat) its locked amount: a past-posting of it already
        acknowledged is settled, so the same change made again is past-posting again, not "the same chips seen
        again"."""
        data = self.round
        assert data is not None
        if data.acknowledged:  # none, at each spot of a reading in order
            data.acknowledged = [item for item in data.acknowledged if (item["seat"], item["spot"]) != key]
    def _on_SpotsSnapshot(self, event: ev.SpotsSnapshot) -> None:
        # a reading is the layout at its moment whoever asked: it never overtakes an earlier chip change
        # (docs/protocol.md, "Device-initiated frames")
        self.layout = {(seat, spot): amount for seat, spot, amount in event.spots if amount}
        if event.request_id != self._pending_read or self.state == "fault":
            self._emit(cmd.Irregularity(self.round_no, "stale_snapshot", {"request_id": event.request_id}))
            return
        self._pending_read = None
        data = self.round
        assert data is not None
        spots: dict[int, dict[str, int]] = {}
        for seat, spot, amount in event.spots:
            if amount:
                spots.setdefault(seat, {})[spot] = amount
        if self.state == "betting":  # the layout as betting opened (or resumed): "no more bets" may be called
            data.layout_read = True
            return
        if self.state == "payout_reading":
            self._check_payout(spots)
            return
        for seat, spot in [*data.locked, *data.correctable, *data.returnable]:
            if (seat, spot) not in data.called:
                self._check_locked(seat, spot, spots.get(seat, {}).get(spot, 0))
        if self._verifying:
            self._verifying = False
        elif self.state.endswith("_reading") and any((i["seat"], i["spot"]) not in data.called
                                                      for i in data.pending_acks):
            # past-posting on a locked spot holds the round: the decision is called again after the supervisor's
            # acknowledgement
            data.called = {}
            self.decisions_refused()
            self._show("Past-posting: supervisor to acknowledge")
        elif self.state == "locking":
            if not data.bets_closed:  # every spot was announced, a seat the sensors name for the first time too
                for seat, spot, _ in event.spots:
                    data.called.setdefault((seat, spot), 0)
            self._lock(self._read_announced(spots))
            if data.pending_acks:  # the dealing waits for the supervisor (``_acknowledge``)
                self._show_past_posting()
        elif self.state.endswith("_reading"):
            self._take_decisions(self.state.removesuffix("_reading"), self._read_announced(spots))
            if data.pending_acks and self.round_open():
                self._show_past_posting()
    def _read_announced(self, spots: dict[int, dict[str, int]]) -> dict[int, dict[str, int]]:
        """Compare the reading ``spots`` (seat -> spot -> amount) with what was announced (``data.called``):
        each difference is past-posting or pinching (``_check_locked``). Returns the announced amounts, the
        wagers of record, as seat -> spot -> amount (empty spots left out); the announcement is spent."""
        data = self.round
        assert data is not None
        for seat, spot in list(data.called):
            self._check_locked(seat, spot, spots.get(seat, {}).get(spot, 0))
        announced: dict[int, dict[str, int]] = {}
        for (seat, spot), amount in data.called.items():
            if amount:
                announced.setdefault(seat, {})[spot] = amount
        data.called = {}
        return announced
    def _lock(self, spots: dict[int, dict[str, int]]) -> None:
        """Lock the wagers read after "no more bets" (NY 9 NYCRR 5324.39(c)(3)).

        At the first reading every valid seat's wagers are locked at once, and so is every empty spot (at 0);
        a seat with an invalid wager is named and held (``wagers_held``): from then on only its own spots may
        change, and only downwards (``correctable``), until it is valid or the dealer excludes it. Any other
        change is past-posting (``_check_locked``): the locked (or zero) amount stands. With nobody wagering,
        the round closes as a no-play round (nothing dealt; the shuffle is kept for the next round).
        """
        data = self.round
        assert data is not None
        if not data.bets_closed:
            data.bets_closed = True
            candidates = {seat: dict(wagers) for seat, wagers in spots.items()}
            for seat in self.config.seats:
                if seat not in candidates:
                    for spot in ev.SPOTS:
                        data.locked[(seat, spot)] = 0
        else:  # a held seat as corrected: never above what it held (``_check_locked`` flags more)
            candidates = {}
            for (seat, spot), most in data.correctable.items():
                amount = min(spots.get(seat, {}).get(spot, 0), most)
                if amount:
                    candidates.setdefault(seat, {})[spot] = amount
        held = {seat for seat, _ in data.correctable}
        for seat in data.excluded | (held - set(candidates)):  # excluded, or every chip taken away: no part
            for spot in ev.SPOTS:
                data.correctable.pop((seat, spot), None)
                if (seat, spot) not in data.returnable:
                    data.locked[(seat, spot)] = 0
        data.invalid = {}
        shown: dict[int, str] = {}
        for seat in sorted(set(candidates) - data.excluded):
            wagers = candidates[seat]
            try:
                if seat not in self.config.seats:
                    raise WagerError(seat, f"wagers.{next(iter(wagers))}", "seat is not in play at this table")
                for name in DECISIONS:
                    if name in wagers:
                        raise WagerError(seat, f"wagers.{name}", "bet placed before its decision")
                check_wagers(seat, wagers, self.jurisdiction.bet_multiples)
                check_limits(seat, wagers, self.config)
            except WagerError as exc:
                data.invalid[seat] = str(exc)
                shown[seat] = f"seat {seat} {exc.field.removeprefix('wagers.')}: {exc.reason}"
                self._emit(cmd.Irregularity(data.round_no, "invalid_wager", {"seat": seat, "reason": str(exc)}))
                for spot in ev.SPOTS:
                    data.correctable.setdefault((seat, spot), wagers.get(spot, 0))
                continue
            data.seats[seat] = SeatState(seat, dict(wagers))
            if data.correctable:  # a held seat now valid: none of its spots is held any longer
                for spot in ev.SPOTS:
                    data.correctable.pop((seat, spot), None)
            for spot in BET_SPOTS:
                data.locked[(seat, spot)] = wagers.get(spot, 0)
        if data.invalid:
            actor = self._reader or Actor("dealer", "", "panel")
            first = min(data.invalid)
            self._emit(cmd.WagersHeld(data.round_no, tuple({"seat": s, "wagers": dict(data.seats[s].wagers)}
                                                           for s in sorted(data.seats)), tuple(sorted(data.invalid))),
                       cmd.PressRefused("no_more_bets", data.invalid[first], actor.user, actor.role))
            self._show(shown[first] if len(data.invalid) < 2 else f"{len(data.invalid)} seats; {shown[first]}")
            self.lock_refused()
            return
        if not data.seats:
            self._no_play()
            return
        data.stacks_planned = [None] + sorted(data.seats)
        self._emit(cmd.WagersLocked(data.round_no, tuple({"seat": s, "wagers": dict(data.seats[s].wagers)}
                                                         for s in sorted(data.seats))))
        self._show("No more bets")
        self.lock()
        if not data.pending_acks:  # past-posting seen at the lock holds the dealing until it is acknowledged
            self._dispense(0)
