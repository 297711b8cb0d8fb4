"""The round's checkpoint: the whole state of ``controller.round.machine.Round`` as plain JSON-ready data, for the
journal's checkpoints (``controller.journal.store``), and its restore. The keys and their layout are the journal's
format: checkpoints written before still restore (a key added later is optional on restore).
"""

from __future__ import annotations

from typing import Any

from controller.round import commands as cmd
from controller.round.data import Actor, RoundData, SeatState
from controller.round.graph import STATES
from controller.round.meters import Meters


class Checkpoint:
    """``checkpoint`` and ``restore`` of ``controller.round.machine.Round`` (a mixin: every attribute of the round
    and every field of ``RoundData``/``SeatState`` is named here)."""

    def checkpoint(self) -> dict[str, Any]:
        """The machine's whole state as plain JSON-ready data, for the journal's checkpoints
        (``controller.journal.store``): ``restore`` on a machine built with the same config and jurisdiction gives a
        machine that answers every later input as this one does. Every attribute is named here, on purpose:
        a new one must be added (tests/test_recovery.py fails otherwise). Shapes: sets as sorted lists,
        ordered mappings as lists of pairs (their order is the order of later outputs)."""
        data = self.round
        return {
            "state": self.state,
            "last_round_no": self.last_round_no,
            "last_txn": self.last_txn,
            "devices_ready": sorted(self.devices_ready),
            "faults": [[f.round_no, f.device, f.cause, f.detail, f.resumable, f.fault_id, f.device_detail]
                       for f in self.faults],
            "resume_state": self.resume_state,
            "supervisor_key": self.supervisor_key,
            "lamps": None if self._lamps is None else list(self._lamps),
            "display": self._display,
            "prompt": self._prompt,
            "reader": None if self._reader is None else [self._reader.role, self._reader.user, self._reader.source],
            "shuffle_kept": self.shuffle_kept,
            "shoe_boots": self.shoe_boots,
            "request_id": self._request_id,
            "pending_read": self._pending_read,
            "verifying": self._verifying,
            "querying": self._querying,
            "self_checked": self.self_checked,
            "reconciled": self.reconciled,
            "dealing_mode": self.dealing_mode,
            "alerts_waiting": [dict(alert) for alert in self.alerts_waiting],
            "private_panel": None if self._private_panel is None else [self._private_panel[0],
                                                                       list(self._private_panel[1])],
            "journal_damage": self.journal_damage,
            "layout": sorted([seat, spot, amount] for (seat, spot), amount in self.layout.items()),
            "notice_no": self.notice_no,
            "meters": self.meters.checkpoint(),
            "disabled": None if self.disabled is None else dict(self.disabled),
            "test_mode": None if self.test_mode is None else dict(self.test_mode),
            "round": None if data is None else {
                "round_no": data.round_no,
                "seats": [[s.seat, dict(s.wagers), None if s.cards is None else list(s.cards), s.folded_at]
                          for s in data.seats.values()],
                "shuffled": data.shuffled,
                "stacks_planned": list(data.stacks_planned),
                "cross": None if data.cross is None else list(data.cross),
                "next_stack": data.next_stack,
                "dealt": sorted(data.dealt),
                "stacks": [[txn, list(cards)] for txn, cards in data.stacks.items()],
                "revealed": list(data.revealed),
                "locked": [[seat, spot, amount] for (seat, spot), amount in data.locked.items()],
                "collectable": sorted([seat, spot] for seat, spot in data.collectable),
                "invalid": [[seat, why] for seat, why in data.invalid.items()],
                "excluded": sorted(data.excluded),
                "bets_closed": data.bets_closed,
                "correctable": [[seat, spot, amount] for (seat, spot), amount in data.correctable.items()],
                "pending_acks": [dict(item) for item in data.pending_acks],
                "acknowledged": [dict(item) for item in data.acknowledged],
                "totals": None if data.totals is None else dict(data.totals),
                "payout_plan": [[seat, {spot: dict(step) for spot, step in plan.items()}]
                                for seat, plan in data.payout_plan.items()],
                "to_pay": list(data.to_pay),
                "last_check": None if data.last_check is None else {
                    "seat": data.last_check["seat"], "seen": dict(data.last_check["seen"]),
                    "differences": [dict(d) for d in data.last_check["differences"]],
                    "others": [[seat, dict(held)] for seat, held in data.last_check["others"].items()],
                    "id": data.last_check["id"]},
                "manual": data.manual,
                "placed": data.placed,
                "board": list(data.board),
                "entry_pending": list(data.entry_pending),
                "held_seats": [[seat, dict(wagers)] for seat, wagers in data.held_seats.items()],
                "layout_read": data.layout_read,
                "called": [[seat, spot, amount] for (seat, spot), amount in data.called.items()],
                "returnable": [[seat, spot, amount] for (seat, spot), amount in data.returnable.items()],
                "payout_base": [[seat, dict(held)] for seat, held in data.payout_base.items()],
                "checked": [[seat, dict(held)] for seat, held in data.checked.items()],
                "acks_id": data.acks_id,
            },
        }
    def restore(self, state: dict[str, Any]) -> None:
        """Set the machine to ``state`` (``checkpoint``'s output, also after a round trip through JSON).
        Raises ``KeyError``/``TypeError``/``ValueError`` for data that is not a checkpoint."""
        if state["state"] not in STATES:
            raise ValueError(f"checkpoint: unknown state {state['state']!r}")
        self._allowed_after_input = None  # type: ignore[attr-defined]
        self.machine.set_state(state["state"], model=self)
        self.last_round_no = state["last_round_no"]
        self.last_txn = state["last_txn"]
        self.devices_ready = set(state["devices_ready"])
        self.faults = [cmd.FaultRaised(*fault) for fault in state["faults"]]
        self.resume_state = state["resume_state"]
        self.supervisor_key = state["supervisor_key"]
        self._lamps = None if state["lamps"] is None else tuple(state["lamps"])
        self._display = state["display"]
        self._prompt = state["prompt"]
        self._reader = None if state["reader"] is None else Actor(*state["reader"])
        self.shuffle_kept = state["shuffle_kept"]
        self.shoe_boots = state.get("shoe_boots")  # a checkpoint written before the counter: never seen
        self._request_id = state["request_id"]
        self._pending_read = state["pending_read"]
        self._verifying = state["verifying"]
        self._querying = state["querying"]
        self.self_checked = state["self_checked"]
        self.reconciled = state["reconciled"]
        # a checkpoint written before dealing by hand: the shoe deals, nothing of a hand deal is under way
        self.dealing_mode = state.get("dealing_mode", "automated")
        # a checkpoint written before alerts reached the round has none waiting
        self.alerts_waiting = [dict(alert) for alert in state.get("alerts_waiting", [])]
        panel = state.get("private_panel")
        self._private_panel = None if panel is None else [panel[0], list(panel[1])]
        # a checkpoint written before the journal store's check: the store was never found damaged
        self.journal_damage = state.get("journal_damage")
        # a checkpoint written before the layout was followed: the next opening reading gives it
        self.layout = {(seat, spot): amount for seat, spot, amount in state.get("layout", [])}
        self.notice_no = state.get("notice_no", 0)
        # a checkpoint written before the meters: zero here; recovery rebuilds them from the journal's start
        # (``controller.journal.recovery.recover``)
        self.meters = Meters.from_checkpoint(state["meters"]) if "meters" in state else Meters()
        # a checkpoint written before the table's locks: the table was never disabled nor in test mode
        self.disabled = None if state.get("disabled") is None else dict(state["disabled"])
        self.test_mode = None if state.get("test_mode") is None else dict(state["test_mode"])
        self._outbox = []
        saved = state["round"]
        if saved is None:
            self.round = None
            return
        self.round = RoundData(
            round_no=saved["round_no"],
            seats={seat: SeatState(seat, dict(wagers), None if cards is None else tuple(cards), folded_at)
                   for seat, wagers, cards, folded_at in saved["seats"]},
            shuffled=saved["shuffled"],
            stacks_planned=list(saved["stacks_planned"]),
            cross=None if saved["cross"] is None else tuple(saved["cross"]),
            next_stack=saved["next_stack"],
            dealt=set(saved["dealt"]),
            stacks={txn: tuple(cards) for txn, cards in saved["stacks"]},
            revealed=list(saved["revealed"]),
            locked={(seat, spot): amount for seat, spot, amount in saved["locked"]},
            collectable={(seat, spot) for seat, spot in saved["collectable"]},
            invalid={seat: why for seat, why in saved["invalid"]},
            excluded=set(saved["excluded"]),
            bets_closed=saved["bets_closed"],
            correctable={(seat, spot): amount for seat, spot, amount in saved["correctable"]},
            pending_acks=[dict(item) for item in saved["pending_acks"]],
            acknowledged=[dict(item) for item in saved["acknowledged"]],
            # a checkpoint written before the payout check has none of its fields: nothing to pay then
            totals=None if saved.get("totals") is None else dict(saved["totals"]),
            payout_plan={seat: {spot: dict(step) for spot, step in plan.items()}
                         for seat, plan in saved.get("payout_plan", [])},
            to_pay=list(saved.get("to_pay", [])),
            last_check=None if saved.get("last_check") is None else {
                "seat": saved["last_check"]["seat"], "seen": dict(saved["last_check"]["seen"]),
                "differences": [dict(d) for d in saved["last_check"]["differences"]],
                "others": {seat: dict(held) for seat, held in saved["last_check"].get("others", [])},
                "id": saved["last_check"].get("id", 0)},
            manual=saved.get("manual", False),
            placed=saved.get("placed", 0),
            board=list(saved.get("board", [])),
            entry_pending=list(saved.get("entry_pending", [])),
            held_seats={seat: dict(wagers) for seat, wagers in saved.get("held_seats", [])},
            # a checkpoint written before announcements were kept: a betting round reads its layout again
            layout_read=saved.get("layout_read", False),
            called={(seat, spot): amount for seat, spot, amount in saved.get("called", [])},
            returnable={(seat, spot): amount for seat, spot, amount in saved.get("returnable", [])},
            payout_base={seat: dict(held) for seat, held in saved.get("payout_base", [])},
            checked={seat: dict(held) for seat, held in saved.get("checked", [])},
            acks_id=saved.get("acks_id"),
        )
