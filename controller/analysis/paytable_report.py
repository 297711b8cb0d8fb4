"""``crisscross paytable``: a jurisdiction's pay tables and the exact return of its five-card bonus.

The bonus settles on the five community cards alone (PA 58 Pa. Code 674a.11(h)(5); NY 9 NYCRR 5324.39(f)(3)),
so its return is exact over the 2,598,960 possible boards: each board is classified once
(``controller.analysis.classes.class_table``, vectorised) and the pay table applied to the counts. Fractions are
exact (``fractions.Fraction``); a percentage is printed beside each.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from controller.analysis.classes import CLASS_NAMES, N_CLASSES, class_table
from controller.game.paytable import PAY_HANDS, Jurisdiction

#: Row labels of the printed tables, lowest first (the first is the losing band).
HAND_LABELS: dict[str, str] = {
    "below_pair_of_6s": "below a pair of 6s",
    "pair_6s_to_10s": "pair of 6s through 10s",
    "pair_jacks_or_better": "pair of jacks or better",
    "two_pair": "two pair",
    "three_of_a_kind": "three of a kind",
    "straight": "straight",
    "flush": "flush",
    "full_house": "full house",
    "four_of_a_kind": "four of a kind",
    "straight_flush": "straight flush",
    "royal_flush": "royal flush",
}


@dataclass(frozen=True)
class BonusReturn:
    """The five-card bonus over every board, per unit staked.

    ``boards``: paying class (``CLASS_NAMES``) -> number of boards (they add up to 2,598,960). ``net``: the
    player's exact expected net per unit (negative: the house keeps that share). ``returned``: stake plus
    winnings paid back per unit staked, ``1 + net`` (the "return to player").
    """

    boards: dict[str, int]
    net: Fraction

    @property
    def returned(self) -> Fraction:
        """Stake plus winnings paid back per unit staked."""
        return 1 + self.net


def five_card_bonus_return(jurisdiction: Jurisdiction) -> BonusReturn:
    """Count the boards of each paying class (all 2,598,960, ranked as the jurisdiction ranks them: its
    ``wheel`` flag) and apply its five-card bonus table: a loss is -1, a push 0, N to 1 is +N per unit."""
    counts = np.bincount(class_table(jurisdiction.wheel), minlength=N_CLASSES)
    boards = dict(zip(CLASS_NAMES, (int(n) for n in counts)))
    pays = jurisdiction.five_card_bonus.pays
    total = -boards["below_pair_of_6s"]
    for hand in PAY_HANDS:
        odds = pays[hand]
        total += 0 if odds == "push" else int(odds) * boards[hand]
    return BonusReturn(boards, Fraction(total, sum(boards.values())))


def _odds(odds: int | str | None) -> str:
    if odds is None:
        return "loses"
    return "push" if odds == "push" else f"{odds} to 1"


def percent(value: Fraction) -> str:
    """``value`` as a percentage with four decimals (e.g. ``"96.1234%"``)."""
    return f"{100 * float(value):.4f}%"


def format_paytable(jurisdiction: Jurisdiction, bonus: BonusReturn) -> str:
    """The report printed by ``crisscross paytable``: the three pay tables side by side with their citations
    (and readings), the ranking rules and bet multiples, then the bonus return by board class."""
    out = [f"{jurisdiction.name} ({jurisdiction.citation}): {jurisdiction.source}",
           (f"bets: {', '.join(f'{m}x' for m in jurisdiction.bet_multiples)} the ante; "
            f"A-2-3-4-5 {'is' if jurisdiction.wheel else 'is not'} a straight; no wrap-around"),
           "",
           f"{'hand':<26}{'ante (each)':>14}{'across/down/middle':>22}{'five-card bonus':>18}"]
    for name in CLASS_NAMES:
        cells = [_odds(getattr(jurisdiction, t).pays.get(name)) for t in ("ante", "bet", "five_card_bonus")]
        out.append(f"{HAND_LABELS[name]:<26}{cells[0]:>14}{cells[1]:>22}{cells[2]:>18}")
    out.append("")
    for label, table in (("ante", jurisdiction.ante), ("across/down/middle", jurisdiction.bet),
                         ("five-card bonus", jurisdiction.five_card_bonus)):
        out.append(f"{label}: {table.citation}" + (f" [reading: {table.reading}]" if table.reading else ""))
    total = sum(bonus.boards.values())
    out += ["", f"five-card bonus over all {total:,} boards:",
            f"{'hand':<26}{'boards':>12}{'pays':>12}{'net per unit x boards':>24}"]
    pays = jurisdiction.five_card_bonus.pays
    for name in CLASS_NAMES:
        odds = pays.get(name)
        n = bonus.boards[name]
        net = -n if odds is None else (0 if odds == "push" else int(odds) * n)
        out.append(f"{HAND_LABELS[name]:<26}{n:>12,}{_odds(odds):>12}{net:>+24,}")
    net, ret = bonus.net, bonus.returned
    out += ["",
            f"return to player   {ret.numerator}/{ret.denominator} = {percent(ret)}",
            f"player's net       {net.numerator}/{net.denominator} = {percent(net)}",
            f"house edge         {-net.numerator}/{net.denominator} = {percent(-net)}"]
    return "\n".join(out)
