"""Game recall on the control interface (``GET /recall``; docs/control.md, "Game recall"): the last rounds of the
journal, each step by step as it happened, for a supervisor at the dealer's screen (AGCO Standards 13.1.1-13.1.4,
25 CFR 547.8(a)(2): at least the last 10 rounds, every step in order, shown while the table is faulted).

One reading of the journal with ``crisscross recall``: the records of a round (``controller.journal.reader
.last_rounds``) grouped by ``controller.journal.recall.rounds_from_records`` and read as steps by
``round_steps``. The journal is read read-only, on the recall's own thread (never the event loop's, never the
controller's); nothing is written, queued or changed.

Hole-card secrecy (domain.md): a round not yet closed (``RoundClosed``) or voided (``RoundVoided``), the live
round or one held by a fault, is recalled only through the interface's secrecy filter (``public``: the one of
``/events``, ``controller.control.server.public_record``): no face-down card, no free text. A round that ended
shows every record of it, as the journal's reader (a supervisor) sees it with ``crisscross recall``, its folded
seats' cards too. A record's ``prev`` and ``hash`` are never shown.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from pathlib import Path
from typing import Any

from controller.control.checks import HTTPError
from controller.journal.reader import last_rounds
from controller.game.money import money
from controller.journal.recall import RoundRecord, round_steps, rounds_from_records
from controller.round.actions import CURRENCY
from controller.journal.record import JournalError

#: Recalls read from the journal at once: one reading, one waiting for the recall's thread; one more is 503.
MAX_READS = 2
#: What a round recalled is: ``open`` (neither closed nor voided: recalled through the secrecy filter),
#: ``closed`` or ``voided``.
RECALL_STATUSES: tuple[str, ...] = ("open", "closed", "voided")
#: The records a listing of the rounds reads (each round's status, test and manual marks, faults and mispays).
SUMMARY_TYPES: tuple[str, ...] = ("RoundOpened", "RoundClosed", "RoundVoided", "ManualRound", "FaultRaised",
                                  "MispayAccepted")


def status(rnd: RoundRecord) -> str:
    """What ``rnd`` is now, one of ``RECALL_STATUSES``."""
    return "voided" if rnd.voided else "closed" if rnd.closed else "open"


def listing(rounds: list[tuple[int, list[dict[str, Any]]]], last: int) -> dict[str, Any]:
    """``GET /recall``: ``{"last": N, "rounds": [...]}``, newest first, each ``{"round", "status", "opened"
    (the time of its ``RoundOpened``, "" when not journaled), "test", "manual", "faults", "mispays"}`` from
    ``rounds`` (``last_rounds`` with ``SUMMARY_TYPES``)."""
    entries = []
    for number, records in reversed(rounds):
        rnd = rounds_from_records(records).get(number, RoundRecord(number))
        opened = next((r.get("time") or "" for r in records if r.get("type") == "RoundOpened"), "")
        entries.append({"round": number, "status": status(rnd), "opened": opened, "test": rnd.test,
                        "manual": rnd.manual, "faults": len(rnd.faults), "mispays": len(rnd.mispays_accepted)})
    return {"last": last, "rounds": entries}


def recalled(number: int, records: list[dict[str, Any]], last: int,
             public: Callable[[dict[str, Any]], dict[str, Any] | None]) -> dict[str, Any]:
    """``GET /recall?round=N``: ``{"round", "status", "last", "filtered", "test", "manual", "steps"}`` of
    round ``number`` from its journal ``records`` in order. ``steps`` are ``round_steps``; of a round still
    ``open``, ``filtered`` is true and the steps are those of the records ``public`` lets out, as it lets them
    out (module docstring)."""
    rnd = rounds_from_records(records).get(number, RoundRecord(number))
    state = status(rnd)
    filtered = state == "open"
    if filtered:
        records = [p for p in map(public, records) if p is not None]
    return {"round": number, "status": state, "last": last, "filtered": filtered, "test": rnd.test,
            "manual": rnd.manual, "steps": round_steps(records, screen_money)}


def not_found(number: int, numbers: list[int], last: int) -> HTTPError:
    """The 404 of a round that is not one of ``numbers``, the last ``last`` rounds of the journal."""
    if not numbers:
        return HTTPError(HTTPStatus.NOT_FOUND, f"round {number}: the journal has no round yet")
    reach = f"the screen recalls the last {last} rounds, {numbers[0]} to {numbers[-1]}"
    if number < 1:  # rounds are numbered from 1 (``RoundOpened.round_no``)
        return HTTPError(HTTPStatus.NOT_FOUND, f"round {number} is not in the journal: rounds are numbered from 1 "
                                               f"({reach})")
    if number < numbers[0]:
        return HTTPError(HTTPStatus.NOT_FOUND, f"round {number} is older than the rounds recalled here ({reach}); "
                                               f"read it with crisscross recall or crisscross journal export")
    return HTTPError(HTTPStatus.NOT_FOUND, f"round {number} is not in the journal ({reach})")


def screen_money(amount: int, signed: bool = False) -> str:
    """An amount as the dealer's screen writes every amount (docs/control.md, "The dealer's screen"): the
    currency's symbol and major units, ``$1,234.50``; ``+$10.00`` / ``-$10.00`` when ``signed``."""
    text = money(abs(amount))
    sign = "-" if amount < 0 else ("+" if signed and amount > 0 else "")
    return f"{sign}{CURRENCY['symbol']}{text}"

class Recall:
    """Game recall of the journal at ``journal`` (None: an interface without a journal, every recall 503), the
    last ``last`` rounds, through ``public`` for a round not yet closed (module docstring).

    ``answer`` reads on the recall's own thread, at most ``MAX_READS`` at once (one more: 503 with
    ``Retry-After``); ``close`` ends the thread."""

    def __init__(self, journal: Path | None, last: int,
                 public: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        self.journal, self.last, self.public = journal, last, public
        self.reads = threading.BoundedSemaphore(MAX_READS)
        self.reader = ThreadPoolExecutor(1, "recall")

    async def answer(self, number: int | None) -> dict[str, Any]:
        """The listing (``number`` None) or round ``number`` recalled. Raises ``HTTPError``: 404 for a round that
        is not one of the last ``last`` (``not_found``), 503 without a journal, with ``MAX_READS`` recalls
        reading, or for a journal that cannot be read (its error said)."""
        if self.journal is None:
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, "game recall needs the journal: this interface was "
                                                            "started without one")
        if not self.reads.acquire(blocking=False):
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, f"{MAX_READS} recalls already reading the journal; "
                                                            f"try again in a second", {"Retry-After": "1"})
        try:
            return await asyncio.get_running_loop().run_in_executor(self.reader, self._read, number)
        except JournalError as exc:
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, f"cannot read the journal: {exc}") from None
        finally:
            self.reads.release()

    def _read(self, number: int | None) -> dict[str, Any]:
        """On the recall's thread: what ``answer`` answers."""
        assert self.journal is not None
        if number is None:
            return listing(last_rounds(self.journal, self.last, types=SUMMARY_TYPES), self.last)
        found = last_rounds(self.journal, self.last, only=number)
        if not found:
            raise not_found(number, [n for n, _ in last_rounds(self.journal, self.last, types=())], self.last)
        return recalled(number, found[0][1], self.last, self.public)

    def close(self) -> None:
        """End the recall's thread once a read under way is done."""
        self.reader.shutdown(wait=True)
