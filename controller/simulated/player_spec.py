"""The simulated players a run is asked for (``crisscross run --simulate --player-strategy/--hole-carder``):
one seat's strategy or hole card, and its text form ``SEAT:NAME[:P]``. No NumPy: the command line parses
these before any player is built (``controller.simulated.players`` plays them).
"""

from __future__ import annotations

from dataclasses import dataclass

STRATEGIES = ("optimal", "never_fold", "always_1x", "pair_3x", "erring")
HOLE_CARDS = ("middle", "across", "down")


@dataclass(frozen=True)
class PlayerSpec:
    """One seat's simulated player: ``kind`` a strategy of ``STRATEGIES`` or a hole card of ``HOLE_CARDS``;
    ``probability`` the error rate of ``erring`` or the chance a hole-carder sees its card in a round."""

    seat: int
    kind: str
    probability: float = 1.0

    @property
    def hole_carder(self) -> bool:
        """True for a hole-carder, False for an honest strategy."""
        return self.kind in HOLE_CARDS


def parse_spec(text: str, hole_carder: bool) -> PlayerSpec:
    """``SEAT:NAME[:P]`` (``--player-strategy``: NAME a strategy, P the error rate of ``erring``;
    ``--hole-carder``: NAME middle, across or down, P the probability of seeing the card, default 1).
    Raises ``ValueError`` naming what is wrong."""
    option = "--hole-carder" if hole_carder else "--player-strategy"
    names = HOLE_CARDS if hole_carder else STRATEGIES
    parts = text.split(":")
    if len(parts) not in (2, 3) or not parts[0].isdigit():
        raise ValueError(f"{option} {text!r}: expected SEAT:{'|'.join(names)}[:P]")
    if parts[1] not in names:
        raise ValueError(f"{option} {text!r}: {parts[1]!r} is not one of {', '.join(names)}")
    try:
        probability = float(parts[2]) if len(parts) == 3 else (1.0 if hole_carder else 0.2)
    except ValueError:
        raise ValueError(f"{option} {text!r}: {parts[2]!r} is not a probability") from None
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"{option} {text!r}: probability {probability} is not from 0 to 1")
    return PlayerSpec(int(parts[0]), parts[1], probability)
