"""How many examples a property test draws (hypothesis ``max_examples``).

The everyday tier (``pytest``) draws a quarter of each test's full count, at least 25, so that the suite runs in
minutes; the thorough run draws the full count: ``CRISSCROSS_EXAMPLES=full pytest`` (what ``.ci/run`` runs).
The exhaustive checks of the evaluator and the par sheet (``pytest -m slow``) do not depend on it.
"""

from __future__ import annotations

import os

#: ``full`` in the thorough run; anything else (or unset) is the everyday tier.
FULL = os.environ.get("CRISSCROSS_EXAMPLES", "").strip().lower() == "full"


def examples(full: int) -> int:
    """``full`` in the thorough run, else ``max(25, full // 4)`` (never more than ``full``)."""
    return full if FULL else min(full, max(25, full // 4))
