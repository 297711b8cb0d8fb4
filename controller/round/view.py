"""The table as anyone may see it (``view``: plain data, never a face-down card) and the dealer's panel: its text
(``panel_text``, ``PANEL_WIDTH`` of drivers/panel/protocol.py), the prompt of the state and the lamps of the
buttons allowed now.
"""

from __future__ import annotations

from typing import Any

from controller.round import commands as cmd
from controller.round.actions import action_entry
from controller.round.inputs import SUPERVISOR_ACTIONS
from drivers.events import BUTTONS, SPOTS

#: States (of the round, or where it stopped in a fault) in which the view's seats show the chips on the layout of
#: the seats whose wagers are not of record: betting is open, or seats are held for correction.
OPEN_BETTING: tuple[str, ...] = ("betting", "locking", "wagers_held")

#: The panel's display holds 64 characters (drivers/panel/protocol.py).
PANEL_WIDTH = 64

#: The panel's text while the journal store is damaged (``JournalDamaged``): no round opens until it is restored.
JOURNAL_DAMAGED_TEXT = "Journal damaged: restore it"


def panel_text(text: str) -> str:
    """``text`` as the panel can show it: whole when it fits in ``PANEL_WIDTH`` characters, else cut at the last
    space before the limit and marked with "..." (a word cut in two misleads)."""
    if len(text) <= PANEL_WIDTH:
        return text
    cut = text[:PANEL_WIDTH - 3]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "..."


class PanelView:
    """The view and the panel of ``controller.round.machine.Round`` (a mixin: it uses the round's state and
    helpers; its fields are in ``Round.__init__``)."""

    def prompt(self) -> str | None:
        """The panel's text for the current state (the last state prompt shown): what the panel shows again a
        few seconds after a refusal (``PromptDue``) and when it comes back after a link loss."""
        return self._prompt
    def allowed_buttons(self, allowed: tuple[str, ...] | None = None) -> tuple[str, ...]:
        """Panel buttons whose press is allowed now (the lit lamps): supervisor actions only while the key is on;
        actions the panel has no key for (``TABLE_ACTIONS``) never. ``allowed``: ``allowed_actions()`` when the
        caller has it."""
        return tuple(a for a in (self.allowed_actions() if allowed is None else allowed)
                     if a in BUTTONS and (a not in SUPERVISOR_ACTIONS or self.supervisor_key))
    def view(self) -> dict[str, Any]:
        """The table as anyone may see it (control interface, displays): plain JSON-ready data, no face-down card.

        Keys: ``state``, ``phase``, ``round_no``, ``allowed_actions``, ``lamps`` (lit panel buttons; none while the
        panel's link is away: what it shows then is not known, and it is lit anew when it is back),
        ``supervisor_key`` (bool), ``devices_ready``, ``faults`` (cause, device, detail, resumable),
        ``pending_past_posting``, ``display`` (the panel's text), ``prompt`` (the state's prompt, which a refusal
        shown in ``display`` gives way to), ``community`` (the revealed community cards
        only, in turning order) and ``seats``: per playing seat ``wagers`` (minor units), ``folded_at``,
        ``dealt`` (whether its two cards are out; never the cards) and ``locked`` (false: the chips on the layout
        while betting is open, ``_seats_view``); ``actions``: the actions allowed now with their ``label`` and
        ``role``, and the one the state waits for with the ``reason`` it is not allowed yet (``_actions_view``,
        ``controller.round.actions``); ``journal_damaged`` (bool): the journal store
        was found damaged and no round opens (``journal_whole``); ``answers``: what ``clear_fault``,
        ``acknowledge`` and ``accept_mispay`` would answer now, by number (``answers``), each fault's ``id``;
        ``locks``: every lock standing now, highest priority first (``controller.round.table_locks.TableLock``
        fields), and ``test_mode`` (bool).
        """
        # the actions the lamps were lit from at the end of the last input, when nothing changed since (``_outputs``)
        allowed = self._allowed_after_input
        if allowed is None:
            allowed = self.allowed_actions()
        data = self.round
        return {
            "state": self.state,
            "phase": self.phase,
            "round_no": self.round_no,
            "allowed_actions": list(allowed),
            "lamps": list(self._lamps or ()) if "panel" in self.devices_ready else [],  # none lit while it is away
            "supervisor_key": self.supervisor_key is not None,
            "devices_ready": sorted(self.devices_ready),
            "faults": [{"id": f.fault_id, "cause": f.cause, "device": f.device, "detail": f.detail,
                        "resumable": f.resumable} for f in self.faults] if self.state == "fault" else [],
            "answers": self.answers(allowed),
            "pending_past_posting": [dict(item) for item in data.pending_acks] if data else [],
            "display": self._display,
            "prompt": None if self._prompt is None else self.on_panel(self._prompt),
            "community": list(data.revealed) if data else [],
            "seats": self._seats_view(),
            "actions": self._actions_view(allowed),
            "dealing_mode": self.dealing_mode,
            "payout": self._payout_view(),
            "journal_damaged": not self.journal_whole(),
            "locks": [lock.to_json() for lock in self.table_locks()],
            "test_mode": self.test_mode is not None,
        }
    def _seats_view(self) -> dict[str, dict[str, Any]]:
        """The view's ``seats``: the playing seats' wagers of record (``locked``: true); while betting is open
        or wagers are held for correction (``OPEN_BETTING``), every other seat with chips on its spots as the
        bet sensors report them (``layout``; ``locked``: false), for all to see as they lie on the felt. Seats by
        number as text, in order; spots in ``drivers.events.SPOTS`` order; minor units."""
        data = self.round
        if data is None:
            return {}
        seats: dict[int, dict[str, Any]] = {
            seat: {"wagers": dict(state.wagers), "folded_at": state.folded_at, "dealt": state.cards is not None,
                   "locked": True} for seat, state in data.seats.items()}
        if self.phase in OPEN_BETTING:
            for seat in {seat for seat, _ in self.layout} - set(seats):
                wagers = {spot: self.layout[(seat, spot)] for spot in SPOTS if (seat, spot) in self.layout}
                seats[seat] = {"wagers": wagers, "folded_at": None, "dealt": False, "locked": False}
        return {str(seat): seats[seat] for seat in sorted(seats)}
    def _actions_view(self, allowed: tuple[str, ...]) -> list[dict[str, Any]]:
        """The view's ``actions``: each action of ``allowed`` with its label and role (``reason`` None), then the
        action the state waits for when it is not allowed yet, with the reason in words
        (``controller.round.actions``)."""
        entries = [action_entry(action) for action in allowed]
        waiting = self.waiting_action(allowed)
        if waiting is not None:
            entries.append(action_entry(*waiting))
        return entries
    def _show(self, text: str) -> None:
        """Show the prompt of the state just entered (kept, and shown again after a refusal)."""
        self._prompt = panel_text(text)
        self._emit(cmd.Display(self._prompt))
    def _show_between_rounds(self, text: str) -> None:
        """Show ``text``, the prompt of a state between rounds, with the text of the highest lock that keeps the
        next round from opening after it (``controller.round.table_locks``: ``JOURNAL_DAMAGED_TEXT`` while the
        journal store is damaged, the table disabled): the dealer sees why ``open_betting`` stays dark."""
        lock = self._lock_text()
        self._show(text if lock is None else f"{text}. {lock}")
    def _update_lamps(self) -> tuple[str, ...] | None:
        """Light the lamps of the buttons allowed now (``SetLamps`` when they changed) once the panel is ready;
        returns ``allowed_actions()`` as computed for them (None when the panel is not ready)."""
        if "panel" not in self.devices_ready or not self.self_checked:
            return None
        allowed = self.allowed_actions()
        lamps = self.allowed_buttons(allowed)
        if lamps != self._lamps:
            self._lamps = lamps
            self._emit(cmd.SetLamps(lamps))
        return allowed
