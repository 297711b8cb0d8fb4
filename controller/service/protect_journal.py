"""The hole-card detector's reading of the journal: a closed round's seats as the detector reads them
(``rounds_seen``, live and offline alike), and the scan of a whole journal (``crisscross protect``).

The detector's math: ``controller.analysis.protect`` (NumPy); the rounds: ``controller.journal.recall``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from controller.analysis.protect import BREAK, GAP, MEMORY_S, STEPS, Detector, EvidenceReport, RoundSeen
from controller.analysis.protect_tables import ProtectTables
from controller.game.cards import DECK
from controller.journal.reader import iter_records
from controller.journal.recall import RoundRecord
from controller.journal.sessions import ended_rounds

_INDEX = {card: i for i, card in enumerate(DECK)}


def rounds_seen(rnd: RoundRecord, multiples: tuple[int, ...]) -> list[RoundSeen]:
    """The seats of a closed round that the detector can read: the cross and the seat's two cards dealt, the
    antes locked, every bet a multiple of ``multiples`` times the ante. A voided round gives none (its cards
    may not all be known, and nothing was won or lost)."""
    cross = rnd.cross
    if rnd.voided is not None or rnd.totals is None or cross is None or len(cross) != 5:
        return []
    dealt = {seat: cards for _, seat, cards in rnd.stacks if seat is not None and len(cards) == 2}
    out = []
    for seat, cards in sorted(dealt.items()):
        ante = rnd.wagers.get(seat, {}).get("ante_across", 0)
        if ante <= 0:
            continue
        decisions = [-1, -1, -1]
        readable = True
        for step, s, action, amount in rnd.decisions:
            if s == seat and step in STEPS:
                multiple = 0 if action == "fold" else amount // ante
                readable &= action == "fold" or (multiple * ante == amount and multiple in multiples)
                decisions[STEPS.index(step)] = multiple
        if not readable:
            continue
        others = frozenset(_INDEX[c] for s, c2 in dealt.items() if s != seat for c in c2)
        out.append(RoundSeen(rnd.round_no, seat, ante, (_INDEX[cards[0]], _INDEX[cards[1]]),
                             tuple(_INDEX[c] for c in cross), tuple(decisions), others))
    return out


def read_into(detector: Detector, item: RoundRecord | dict[str, Any]) -> list[EvidenceReport]:
    """Hand the detector one ended round (``RoundRecord``: its seats read by ``rounds_seen``, its end's time) or
    one ``SeatRating``'s data (``Detector.rate``); returns the evidence newly flagged."""
    if not isinstance(item, RoundRecord):
        detector.rate(item["action"], item["seat"], item.get("player", ""))
        return []
    when = datetime.fromisoformat(item.times[-1]).timestamp() if item.times else None
    return detector.add(rounds_seen(item, detector.tables.multiples), item.round_no, when)


def replay(detector: Detector, records: Iterable[dict[str, Any]]) -> int:
    """Read a stream of journal records into ``detector`` in order (rounds as they end, the dealer's rating
    actions where they stand); returns the last round number read (0: none)."""
    last = 0
    for item in ended_rounds(records, also=("SeatRating",)):
        read_into(detector, item)
        if isinstance(item, RoundRecord):
            last = max(last, item.round_no)
    return last


def scan_journal(path: Path, tables: ProtectTables, gap: int = GAP, *, break_rounds: int = BREAK,
                 memory_s: float = MEMORY_S) -> list[EvidenceReport]:
    """Every player's evidence in the journal at ``path`` (store or JSON lines), as the live detector would
    have seen it round by round (``Detector``'s options); of a JSON-lines copy, its records before its damage
    (``controller.journal.reader.UpToDamage``), which ``verify`` names. Raises ``JournalError`` for a journal that
    cannot be read."""
    detector = Detector(tables, gap, break_rounds=break_rounds, memory_s=memory_s)
    replay(detector, iter_records(path, up_to_damage=True))
    return detector.reports()
