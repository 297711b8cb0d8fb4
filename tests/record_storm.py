"""A record storm: the same few journal records written again and again, back to back.

Every record of the journal answers an input from a person or a device (docs/architecture.md, "Event-sourced
journal"); a loop that writes without one (a simulated person turning the supervisor key on and off on a timer,
say) repeats one block of records with nothing between them. Real play never repeats a block many times over: the
chips, cards, seats and rounds in the records' data differ from one to the next.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: A block of records repeated this many times back to back, or more, is a storm (real play repeats a block at
#: most twice: a lamp state lit and put out twice running, say).
STORM_REPEATS = 4

#: The longest block looked for, in records (one supervisor key turn on and off is six: the key, the lamps and
#: the private panel, twice).
LONGEST_BLOCK = 12


@dataclass(frozen=True)
class Repeat:
    """The longest run of one block repeated back to back: ``times`` repeated (1: no repeat), from journal
    record ``seq``, the block's record ``types`` in order."""

    times: int
    seq: int
    types: tuple[str, ...]


def longest_repeat(records: list[dict[str, Any]], longest_block: int = LONGEST_BLOCK) -> Repeat:
    """The longest run in ``records`` (journal records as ``controller.journal.reader.read_records`` gives them)
    of one block of at most ``longest_block`` records written again and again back to back. Two records are the
    same when their type and data are (their seq, time and hash always differ)."""
    keys = [(r["type"], json.dumps(r["data"], sort_keys=True)) for r in records]
    best = Repeat(1, records[0]["seq"] if records else 0, tuple(k[0] for k in keys[:1]))
    for period in range(1, longest_block + 1):
        matching = 0  # records so far equal to the one ``period`` before them, in a row
        for index in range(period, len(keys)):
            matching = matching + 1 if keys[index] == keys[index - period] else 0
            times = matching // period + 1
            if times > best.times:
                start = index - matching - period + 1
                best = Repeat(times, records[start]["seq"], tuple(k[0] for k in keys[start:start + period]))
    return best


def assert_no_storm(records: list[dict[str, Any]]) -> None:
    """Fail, naming the block and where it starts, when ``records`` repeat one block ``STORM_REPEATS`` times or
    more back to back."""
    repeat = longest_repeat(records)
    assert repeat.times < STORM_REPEATS, (
        f"record storm: {'/'.join(repeat.types)} written {repeat.times} times back to back from seq {repeat.seq}")
