"""The simulated players a run is asked for (``crisscross run --simulate --player-strategy/--hole-carder``):
one seat's strategy or hole card, and its text form ``SEAT:NAME[:P]``. No NumPy: the command line parses
these before any player is built (``controller.simulated.players`` plays them).
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.analysis.protect_names import HOLE_CARDS, STYLES

STRATEGIES = ("optimal", "never_fold", "always_1x", "pair_3x", "erring", "across_fold_rule", "card")


#: Rounds a hole-carder with ``breaks`` sits out at each break (more than the sessions' gap of 3: each break
#: ends the seat's session, as the evasion it stands for does).
BREAK_ROUNDS = 3


@dataclass(frozen=True)
class PlayerSpec:
    """One seat's simulated player: ``kind`` a strategy of ``STRATEGIES`` or a hole card of ``HOLE_CARDS``;
    ``probability`` the error rate of ``erring`` or the chance a hole-carder sees its card in a round. A
    hole-carder with ``breaks`` N sits out ``BREAK_ROUNDS`` rounds after every N rounds it played, and with
    ``moves`` comes back at another seat (``controller.simulated.roaming``); the simulated dealer rates it
    (``player``) unless ``rated`` is False. ``style``: how a hole-carder uses its card (``STYLES``:
    ``controller.analysis.protect_models``)."""

    seat: int
    kind: str
    probability: float = 1.0
    breaks: int = 0
    moves: bool = False
    rated: bool = True
    style: str = "best"

    @property
    def hole_carder(self) -> bool:
        """True for a hole-carder, False for an honest strategy."""
        return self.kind in HOLE_CARDS

    @property
    def player(self) -> str:
        """The id on the card a hole-carder hands the dealer (the simulated dealer rates it)."""
        return f"SIM-HC-{self.seat}"


def parse_spec(text: str, hole_carder: bool) -> PlayerSpec:
    """``SEAT:NAME[:P]`` (``--player-strategy``: NAME a strategy, P the error rate of ``erring``;
    ``--hole-carder``: NAME middle, across or down, P the probability of seeing the card, default 1, then
    optionally the style ``:best`` (the default), ``:pairs`` or ``:rule``, ``:breaks=N``, ``:moves`` and
    ``:unrated``, the player the dealer does not rate). Raises ``ValueError`` naming what is wrong."""
    option = "--hole-carder" if hole_carder else "--player-strategy"
    names = HOLE_CARDS if hole_carder else STRATEGIES
    optional = f"[:{'|'.join(STYLES)}][:breaks=N][:moves][:unrated]" if hole_carder else ""
    usage = f"SEAT:{'|'.join(names)}[:P]{optional}"
    parts = text.split(":")
    extras = [part for part in parts[2:] if part in ("moves", "unrated", *STYLES) or part.startswith("breaks=")] \
        if hole_carder else []
    named = [extra.partition("=")[0] for extra in extras]
    if len(set(named)) != len(named):
        raise ValueError(f"{option} {text!r}: each of {', '.join(sorted(set(named)))} at most once")
    parts = [part for part in parts if part not in extras]
    if len(parts) not in (2, 3) or not parts[0].isdigit():
        raise ValueError(f"{option} {text!r}: expected {usage}")
    if parts[1] not in names:
        raise ValueError(f"{option} {text!r}: {parts[1]!r} is not one of {', '.join(names)}")
    try:
        probability = float(parts[2]) if len(parts) == 3 else (1.0 if hole_carder else 0.2)
    except ValueError:
        known = f" nor one of {', '.join(STYLES)}, breaks=N, moves, unrated" if hole_carder else ""
        raise ValueError(f"{option} {text!r}: {parts[2]!r} is not a probability{known}") from None
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"{option} {text!r}: probability {probability} is not from 0 to 1")
    breaks = 0
    for extra in extras:
        if extra.startswith("breaks="):
            count = extra.removeprefix("breaks=")
            if not count.isdigit() or int(count) < 1:
                raise ValueError(f"{option} {text!r}: breaks={count!r}: expected a whole number of rounds, at least 1")
            breaks = int(count)
    moves = "moves" in extras
    if moves and not breaks:
        raise ValueError(f"{option} {text!r}: moves needs breaks=N (it moves at each break)")
    styles = [extra for extra in extras if extra in STYLES]
    if len(styles) > 1:
        raise ValueError(f"{option} {text!r}: one style of {', '.join(STYLES)}, not {', '.join(styles)}")
    return PlayerSpec(int(parts[0]), parts[1], probability, breaks, moves, "unrated" not in extras,
                      styles[0] if styles else "best")
