"""Hole-card alerts read back from the journal for ``crisscross recall`` (``--alerts``; and as steps of the rounds).

An alert (``controller.round.alerts.Alert``) names a seat, a kind of card and figures, never a card; so does every line
here. Each alert is listed with the round whose close flagged it, and whether a supervisor acknowledged it (who,
in which role, through the panel or the control interface, and when: the acknowledgement record's time) or it
was set aside (``AlertNotShown``), or it still waits. Alerts written as records of the service's own (before
alerts were an input of the round machine) are read the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from controller.game.money import money
from controller.game.sessions import player_shown
from controller.round.alerts import CARD_KINDS, evidence_text


@dataclass
class AlertEntry:
    """One alert as journaled: ``alert`` (its fields), ``time`` (when journaled), ``acknowledged`` (the
    ``AlertAcknowledged`` data with its record's ``time``) or ``set_aside`` (the ``AlertNotShown`` reason)."""

    alert: dict[str, Any]
    time: str
    acknowledged: dict[str, Any] | None = None
    set_aside: str | None = None

    @property
    def status(self) -> str:
        """``acknowledged``, ``set aside`` or ``waiting``."""
        return "acknowledged" if self.acknowledged else "set aside" if self.set_aside else "waiting"


def _key(alert: Any) -> str:
    return json.dumps(alert, sort_keys=True)


def alerts_of(records: Iterable[dict[str, Any]]) -> list[AlertEntry]:
    """Every alert of ``records`` (journal records in order, streamed) with what became of it: an
    acknowledgement or a setting aside applies to the oldest alert with the same fields not yet closed."""
    entries: list[AlertEntry] = []
    open_by_key: dict[str, list[AlertEntry]] = {}
    for record in records:
        kind, data = record.get("type"), record.get("data") or {}
        if kind == "Alert":
            entry = AlertEntry(dict(data), str(record.get("time", "")))
            entries.append(entry)
            open_by_key.setdefault(_key(entry.alert), []).append(entry)
        elif kind in ("AlertAcknowledged", "AlertNotShown"):
            waiting = open_by_key.get(_key(data.get("alert")), [])
            if not waiting:
                continue  # an alert journaled before this journal's first record (an export of a range)
            entry = waiting.pop(0)
            if kind == "AlertAcknowledged":
                entry.acknowledged = {**data, "time": str(record.get("time", ""))}
            else:
                entry.set_aside = str(data.get("reason", ""))
    return entries


def _figure(alert: dict[str, Any], name: str) -> Any:
    value = alert.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else "?"


def alert_line(alert: dict[str, Any]) -> str:
    """An alert in words: the seat (and the player's id when rated), the kind of card, the evidence, the session
    and the house's loss (in money, as the rest of ``recall``). A field an alert may not carry (an alert refused
    on arrival, ``controller.round.alerts.alert_problem``) reads ``?``: a line never names a card."""

    card = alert.get("card") if alert.get("card") in CARD_KINDS else "?"
    evidence = _figure(alert, "evidence_log10_hundredths")
    loss = _figure(alert, "loss")
    who = f" (player {player_shown(alert['player'])})" if alert.get("player") else ""
    return (f"seat {_figure(alert, 'seat')}{who} plays as if it sees the {card} card: evidence "
            f"{evidence_text(evidence) if evidence != '?' else '?'} over {_figure(alert, 'rounds')} rounds from "
            f"round {_figure(alert, 'first_round')} (seen in about {_figure(alert, 'share_percent')}% of them), "
            f"house loss {money(loss) if loss != '?' else '?'}; flagged at the close of round "
            f"{_figure(alert, 'round_no')}")


def format_alerts(entries: list[AlertEntry]) -> str:
    """``crisscross recall --alerts``: one line per alert, oldest first, with its status."""
    if not entries:
        return "no hole-card alerts"
    lines = [f"Hole-card alerts: {len(entries)}, {sum(e.status == 'waiting' for e in entries)} waiting"]
    for entry in entries:
        if entry.acknowledged:
            ack = entry.acknowledged
            status = (f"acknowledged by {ack.get('by')} ({ack.get('role')}, {ack.get('source')}) at "
                      f"{ack.get('time', '')[:23]}")
        elif entry.set_aside:
            status = f"set aside: {entry.set_aside}"
        else:
            status = "NOT ACKNOWLEDGED"
        lines.append(f"  {entry.time[:23]}  {alert_line(entry.alert)} | {status}")
    return "\n".join(lines)
