"""The pace of the simulated dealer (``crisscross run --simulate --pace``): how long it leaves between its presses,
so that a person can follow a simulated table on the dealer's screen (demonstrations, training).

Apart from ``controller.simulated.table`` so that the command line reads ``--pace`` without loading the players'
strategy (NumPy).
"""

from __future__ import annotations

#: Seconds between the dealer's presses at ``--pace human``: time to read the screen after each step.
HUMAN_PACE = 2.0
#: The longest pace accepted (seconds): a step a minute is slower than anyone watches.
MAX_PACE = 60.0


def parse_pace(text: str) -> float:
    """``--pace``'s value as seconds between presses: ``human`` (``HUMAN_PACE``), or a number of seconds from 0
    (as fast as the table goes, the default) to ``MAX_PACE``. Raises ``ValueError`` naming the value and what is
    accepted."""
    if text.strip().lower() == "human":
        return HUMAN_PACE
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0.0 <= seconds <= MAX_PACE:  # NaN too
        raise ValueError(f"--pace {text!r}: expected human or seconds from 0 to {MAX_PACE:g}")
    return seconds
