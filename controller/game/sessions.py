"""What a seat's session is: the run of rounds in which one seat has wagers, ended by ``GAP`` rounds in a row
without. One rule for the player's rating (``controller.journal.sessions``) and the hole-card detector's
evidence (``controller.analysis.protect``), so both speak of the same sessions; and what a player's id is."""

from __future__ import annotations

import re
from typing import Any

#: A player's id (a loyalty card's number): 1 to 32 letters, digits or dashes.
PLAYER_ID = r"[A-Za-z0-9-]{1,32}"


def player_shown(value: Any) -> str:
    """``value`` as a line about a player may show it: itself when it is a player's id (``PLAYER_ID``), else
    ``?`` (an alert or a record from elsewhere may carry anything)."""
    return value if isinstance(value, str) and re.fullmatch(PLAYER_ID, value) else "?"


#: Rounds in a row without wagers at a seat that end its session (the default of ``--gap``).
GAP = 3


def session_ended(last_round: int, round_no: int, gap: int = GAP) -> bool:
    """True when a seat whose last round with wagers was ``last_round`` has, by round ``round_no``, had ``gap``
    rounds in a row without wagers (round numbers: a voided round or one of test mode counts as a round without
    wagers): its session has ended."""
    return round_no - last_round > gap
