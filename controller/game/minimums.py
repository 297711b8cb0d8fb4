"""What each jurisdiction's regulation fixes and a casino's pay-table file may not change.

A facility edits its pay tables (``config/jurisdictions/*.yaml``); the regulation's floor must not be editable
beside them, so it lives here, in code, keyed by jurisdiction code, each value with its citation.
``controller.game.paytable.load_jurisdiction`` refuses a file that pays less than these minimums on any hand (NY
9 NYCRR 5324.39(f): "no less than"), ranks hands otherwise than the regulation, or offers bet multiples
outside one to three times the ante.

Odds are "N to 1" as integers, or ``"push"`` (the stake is returned). For comparison ``push`` counts as 0:
``push`` < 1 to 1 < 2 to 1 ...; a table that pays more than a minimum is accepted.

Readings taken where our regulation texts are silent (the texts in the project are NY 9 NYCRR 5324.39, PA 58
Pa. Code 674a.11 and NJ N.J.A.C. 13:69F-25.5):

- Pennsylvania: the pay tables are in 58 Pa. Code 674a.12 and the rankings in 674a.6(b), neither of which we
  have. 674a.11(h) fixes the bands: below a pair of 6s loses; a pair of 6s or better is "returned or paid"
  (the ante and the across/down bets, (h)(1),(2)), the middle bet pays on the higher-ranking hand ((h)(4)),
  the five-card bonus pays from a pair of 6s ((h)(5)). The odds floor taken is New York's 5324.39(f), the
  only published table we hold; it refuses a table paying less than New York's, never one paying more.
- New Jersey: 13:69F-25.5 gives the rankings (wheel allowed, (a)); the pay tables are in 13:69F-25.11, which
  we do not have. The same New York floor is taken, for the same reason.
Replace a reading here, with its citation, once the missing text is obtained.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

#: New York's floor, NY 9 NYCRR 5324.39(f)(1)-(3), hand by hand (paying hands of ``controller.game.paytable``).
_NY_ANTE = {"pair_6s_to_10s": "push", "pair_jacks_or_better": 1, "two_pair": 1, "three_of_a_kind": 1,
            "straight": 1, "flush": 1, "full_house": 1, "four_of_a_kind": 1, "straight_flush": 1,
            "royal_flush": 1}
_NY_BET = {"pair_6s_to_10s": "push", "pair_jacks_or_better": 1, "two_pair": 2, "three_of_a_kind": 3,
           "straight": 5, "flush": 8, "full_house": 12, "four_of_a_kind": 40, "straight_flush": 100,
           "royal_flush": 500}
_NY_BONUS = {"pair_6s_to_10s": 1, "pair_jacks_or_better": 1, "two_pair": 3, "three_of_a_kind": 4, "straight": 6,
             "flush": 10, "full_house": 15, "four_of_a_kind": 40, "straight_flush": 100, "royal_flush": 250}


@dataclass(frozen=True)
class TableMinimum:
    """The least a facility may pay on one pay table: ``pays`` maps each paying hand to ``"push"`` or N (N to 1).

    ``citation``: where the figures come from (a reading is said so).
    """

    pays: Mapping[str, int | str]
    citation: str


@dataclass(frozen=True)
class Regulation:
    """What one jurisdiction's regulation fixes: pay-table floors, rankings and the bet multiples.

    ``minimums``: table name (``ante``, ``bet``, ``five_card_bonus``) -> ``TableMinimum``. ``wheel`` and
    ``wrap_around``: the ranking rules a file must state (with ``ranking_citation``). ``bet_multiples``: the
    multiples of the ante a file may offer (a file offers some or all of them; ``multiples_citation``).
    """

    code: str
    name: str
    minimums: Mapping[str, TableMinimum]
    wheel: bool
    wrap_around: bool
    ranking_citation: str
    bet_multiples: frozenset[int]
    multiples_citation: str


def _tables(citations: tuple[str, str, str]) -> Mapping[str, TableMinimum]:
    return MappingProxyType({
        name: TableMinimum(MappingProxyType(dict(pays)), citation)
        for name, pays, citation in zip(("ante", "bet", "five_card_bonus"), (_NY_ANTE, _NY_BET, _NY_BONUS), citations)
    })


_PA_READING = ("58 Pa. Code 674a.12 is not in our texts; reading: New York's floor (9 NYCRR 5324.39(f)) within "
               "the bands of PA 674a.11(h)")
_NJ_READING = ("N.J.A.C. 13:69F-25.11 is not in our texts; reading: New York's floor (9 NYCRR 5324.39(f))")

#: The regulations by jurisdiction code (read-only).
REGULATIONS: Mapping[str, Regulation] = MappingProxyType({
    "ny": Regulation(
        code="ny", name="New York",
        minimums=_tables(("NY 5324.39(f)(1)", "NY 5324.39(f)(2), applied to the middle bet by (e)(9)(ii)",
                          "NY 5324.39(f)(3)")),
        wheel=True, wrap_around=False,
        ranking_citation="NY 5324.39(b)(1),(b)(2)(ii),(vi)",
        bet_multiples=frozenset({1, 2, 3}),
        multiples_citation="NY 5324.39(c)(4),(e)(3),(e)(5),(e)(7): one to three times the ante",
    ),
    "pa": Regulation(
        code="pa", name="Pennsylvania",
        minimums=_tables((f"{_PA_READING}(1) (ante, 674a.11(h)(1),(2))",
                          f"{_PA_READING}(2) (across, down, middle, 674a.11(h)(1)-(4))",
                          f"{_PA_READING}(3) (five-card bonus, 674a.11(h)(5))")),
        wheel=True, wrap_around=False,
        ranking_citation="58 Pa. Code 674a.6(b) is not in our texts; reading: NY 5324.39(b)",
        bet_multiples=frozenset({1, 2, 3}),
        multiples_citation="PA 674a.11(b),(d),(f): one to three times the ante",
    ),
    "nj": Regulation(
        code="nj", name="New Jersey",
        minimums=_tables((_NJ_READING, _NJ_READING, _NJ_READING)),
        wheel=True, wrap_around=False,
        ranking_citation="NJ 13:69F-25.5(a): an ace may be combined with 2, 3, 4 and 5 (the wheel); no other",
        bet_multiples=frozenset({1, 2, 3}),
        multiples_citation="N.J.A.C. 13:69F-25 bet sections are not in our texts; reading: NY 5324.39(c)(4)",
    ),
})


def odds_value(odds: int | str) -> int:
    """Odds as a number for comparison: ``"push"`` -> 0, N (N to 1) -> N."""
    return 0 if odds == "push" else int(odds)


def odds_text(odds: int | str) -> str:
    """``"push"`` or ``"N to 1"``, for messages."""
    return "push" if odds == "push" else f"{odds} to 1"
