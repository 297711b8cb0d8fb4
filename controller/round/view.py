"""The table as anyone may see it (``view``: plain data, never a face-down card) and the dealer's panel: its text
(``panel_text``, ``PANEL_WIDTH`` of drivers/panel/protocol.py), the prompt of the state and the lamps of the
buttons allowed now.
"""

from __future__ import annotations

from typing import Any

from controller.round import commands as cmd
from controller.round.inputs import SUPERVISOR_ACTIONS
from drivers.events import BUTTONS

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
    def allowed_buttons(self) -> tuple[str, ...]:
        """Panel buttons whose press is allowed now (the lit lamps): supervisor actions only while the key is on;
        actions the panel has no key for (``TABLE_ACTIONS``) never."""
        return tuple(a for a in self.allowed_actions()
                     if a in BUTTONS and (a not in SUPERVISOR_ACTIONS or self.supervisor_key))
    def view(self) -> dict[str, Any]:
        """The table as anyone may see it (control interface, displays): plain JSON-ready data, no face-down card.

        Keys: ``state``, ``phase``, ``round_no``, ``allowed_actions``, ``lamps`` (lit panel buttons),
        ``supervisor_key`` (bool), ``devices_ready``, ``faults`` (cause, device, detail, resumable),
        ``pending_past_posting``, ``display`` (the panel's text), ``prompt`` (the state's prompt, which a refusal
        shown in ``display`` gives way to), ``community`` (the revealed community cards
        only, in turning order) and ``seats``: per playing seat ``wagers`` (minor units), ``folded_at`` and
        ``dealt`` (whether its two cards are out; never the cards); ``journal_damaged`` (bool): the journal store
        was found damaged and no round opens (``journal_whole``); ``answers``: what ``clear_fault``,
        ``acknowledge`` and ``accept_mispay`` would answer now, by number (``answers``), each fault's ``id``;
        ``locks``: every lock standing now, highest priority first (``controller.round.table_locks.TableLock``
        fields), and ``test_mode`` (bool).
        """
        data, allowed = self.round, self.allowed_actions()
        return {
            "state": self.state,
            "phase": self.phase,
            "round_no": self.round_no,
            "allowed_actions": list(allowed),
            "lamps": list(self._lamps or ()),
            "supervisor_key": self.supervisor_key is not None,
            "devices_ready": sorted(self.devices_ready),
            "faults": [{"id": f.fault_id, "cause": f.cause, "device": f.device, "detail": f.detail,
                        "resumable": f.resumable} for f in self.faults] if self.state == "fault" else [],
            "answers": self.answers(allowed),
            "pending_past_posting": [dict(item) for item in data.pending_acks] if data else [],
            "display": self._display,
            "prompt": None if self._prompt is None else self.on_panel(self._prompt),
            "community": list(data.revealed) if data else [],
            "seats": {str(seat): {"wagers": dict(state.wagers), "folded_at": state.folded_at,
                                  "dealt": state.cards is not None}
                      for seat, state in sorted(data.seats.items())} if data else {},
            "dealing_mode": self.dealing_mode,
            "payout": self._payout_view(),
            "journal_damaged": not self.journal_whole(),
            "locks": [lock.to_json() for lock in self.table_locks()],
            "test_mode": self.test_mode is not None,
        }
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
    def _update_lamps(self) -> None:
        lamps = self.allowed_buttons() if "panel" in self.devices_ready and self.self_checked else None
        if lamps is not None and lamps != self._lamps:
            self._lamps = lamps
            self._emit(cmd.SetLamps(lamps))
