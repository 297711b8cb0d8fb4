"""``crisscross floor watch``: a live pit summary of every table the floor hears (docs/floor.md, "Watch").

Per table: ``status`` (online/offline), the round and its state (from ``state``), rounds per hour (rounds
closed or voided over the time between the first and the last round end heard, by the records' own times),
drop (every wager of the closed rounds, ``RoundClosed`` totals ``wagered``) and win (the house's: the players'
net with its sign turned), faults raised and past-posting irregularities, in minor units as the journal keeps
them. Events are deduplicated by table and seq as ``controller.floor.audit`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from controller.floor import topics


@dataclass
class TableSummary:
    """One table as the pit sees it (module docstring)."""

    status: str = "?"
    state: str = "?"
    round_no: int | None = None
    rounds: int = 0
    first_end: datetime | None = None
    last_end: datetime | None = None
    drop: int = 0
    win: int = 0
    faults: int = 0
    past_posting: int = 0
    last_seq: int = 0

    def per_hour(self) -> float | None:
        """Rounds per hour between the first and the last round end heard (None before two)."""
        if self.rounds < 2 or self.first_end is None or self.last_end is None:
            return None
        seconds = (self.last_end - self.first_end).total_seconds()
        return (self.rounds - 1) * 3600 / seconds if seconds > 0 else None


class Pit:
    """Every table's ``TableSummary``, fed with ``take`` (the ``Listener`` callback)."""

    def __init__(self) -> None:
        self.tables: dict[str, TableSummary] = {}

    def take(self, table: str, kind: str, payload: bytes, received: float = 0.0) -> None:
        """One message of ``table`` on its ``kind`` topic."""
        summary = self.tables.setdefault(table, TableSummary())
        if kind == "status":
            summary.status = payload.decode("utf-8", "replace")[:16]
            return
        value = topics.decode(payload)
        if value is None:
            return
        if kind == "state" and isinstance(value.get("view"), dict):
            summary.state = str(value["view"].get("state"))
            summary.round_no = value["view"].get("round_no")
        elif kind == "events" and isinstance(value.get("record"), dict):
            record = value["record"]
            seq = record.get("seq")
            if not isinstance(seq, int) or seq <= summary.last_seq:
                return  # a repeat
            summary.last_seq = seq
            self._event(summary, record)

    @staticmethod
    def _event(summary: TableSummary, record: dict[str, Any]) -> None:
        kind, data = record.get("type"), record.get("data") or {}
        if kind in ("RoundClosed", "RoundVoided"):
            summary.rounds += 1
            try:
                when = datetime.fromisoformat(str(record.get("time")))
            except ValueError:
                when = None
            summary.first_end = summary.first_end or when
            summary.last_end = when or summary.last_end
            totals = data.get("totals") or {}
            if kind == "RoundClosed" and isinstance(totals.get("wagered"), int):
                summary.drop += totals["wagered"]
                summary.win -= int(totals.get("player_net") or 0)
        elif kind == "FaultRaised":
            summary.faults += 1
        elif kind == "Irregularity" and data.get("kind") == "past_posting":
            summary.past_posting += 1

    def render(self) -> str:
        """The summary as a text table, one line per table in name order."""
        lines = [f"{'table':<16} {'status':<8} {'round':>6} {'state':<16} {'rounds/h':>8} {'drop':>12} "
                 f"{'win':>12} {'faults':>6} {'past-posting':>12}"]
        for name, t in sorted(self.tables.items()):
            rate = t.per_hour()
            lines.append(f"{name[:16]:<16} {t.status:<8} {t.round_no if t.round_no is not None else '-':>6} "
                         f"{t.state[:16]:<16} {f'{rate:.0f}' if rate is not None else '-':>8} {t.drop:>12} "
                         f"{t.win:>12} {t.faults:>6} {t.past_posting:>12}")
        return "\n".join(lines)
