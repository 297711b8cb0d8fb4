"""What a spot may have to hold in a round, against what the bet sensors can read: the table's limits together
with its jurisdiction's pay tables.

The bet sensors report each spot's amount in a u32 field, at most ``MAX_AMOUNT`` minor units
(``drivers.sensors.protocol``; docs/protocol.md, "Bet sensors"). A spot holds its wager while the round is played
and, once the dealer has paid, what the payout check reads there (``controller.game.payout.spot_holds``): with
``winning_spot: wager_and_payout`` (the default) a winning spot holds the wager plus its payout at the pay table's
odds. A configuration in which some spot may have to hold more than the sensors can read is refused before
anything is opened (``check_capacity``, called by ``controller.service.opening.jurisdiction_for``, which every
start passes through): on hardware such a payout could never pass the check, and the round would stay open.

Each spot's largest wager: an ante at most ``limits.ante.max``; the across, down and middle bets at most the
largest allowed multiple of it (NY 9 NYCRR 5324.39(c)(4)); the five-card bonus at most
``limits.five_card_bonus.max``. Each is paid at its pay table (``controller.game.settlement.PAY_TABLE_OF``),
whose odds are the jurisdiction file's (NY 5324.39(f) "no less than": a facility may pay more).
"""

from __future__ import annotations

from controller.game.minimums import odds_text
from controller.game.paytable import PAY_HANDS, Jurisdiction, PayTable
from controller.game.payout import spot_holds
from controller.game.settlement import PAY_TABLE_OF, net_of
from controller.game.table import DECISIONS, LIMIT_OF, TableConfig, limits_of
from controller.settings.files import error
from drivers.events import SPOTS
from drivers.sensors.protocol import MAX_AMOUNT


def largest_wager(spot: str, limit: int, jurisdiction: Jurisdiction) -> int:
    """The largest wager (minor units) ``spot`` may carry when its limit (``LIMIT_OF``) has ``limit`` as its max:
    the limit itself, or for the across, down and middle bets the largest of the jurisdiction's
    ``bet_multiples`` times it (NY 9 NYCRR 5324.39(c)(4))."""
    return limit * max(jurisdiction.bet_multiples) if spot in DECISIONS else limit


def largest_hold(wager: int, table: PayTable, winning_spot: str) -> tuple[int, str | None]:
    """The most a spot whose wager is ``wager`` minor units may hold in the round, and the paying hand that makes
    it (None: the wager itself, as placed): the wager, and what ``controller.game.payout.spot_holds`` says the
    spot must hold after the payout for the outcome of every hand of ``table`` (``PAY_HANDS``, and a hand below
    them, which loses), with the net of ``controller.game.settlement.net_of``. ``winning_spot`` is
    ``payout.winning_spot`` of table.yaml; raises ``ValueError`` for one not in
    ``controller.game.payout.WINNING_SPOT``."""
    most, made_by = wager, None
    for hand in (None, *PAY_HANDS):
        outcome, odds = table.outcome_of(hand)
        holds = spot_holds(wager, outcome, net_of(outcome, odds, wager), winning_spot)
        if holds > most:
            most, made_by = holds, hand
    return most, made_by


def largest_limit(key: str, jurisdiction: Jurisdiction, winning_spot: str) -> int:
    """The largest max of the ``limits`` entry ``key`` (``ante`` or ``five_card_bonus``) for which every spot
    following it (``LIMIT_OF``) can be read by the bet sensors at every moment of the round: its largest wager
    (``largest_wager``) and what it then holds (``largest_hold``) at most ``MAX_AMOUNT`` (docs/protocol.md, "Bet
    sensors"); 0 when not even 1 minor unit fits. Found by bisection over those same rules (the amount held
    grows with the wager), in minor units."""
    spots = [(spot, getattr(jurisdiction, PAY_TABLE_OF[spot])) for spot in SPOTS if LIMIT_OF[spot] == key]

    def fits(limit: int) -> bool:
        return all(largest_hold(largest_wager(spot, limit, jurisdiction), table, winning_spot)[0] <= MAX_AMOUNT
                   for spot, table in spots)

    low, high = 0, MAX_AMOUNT  # fits(low); not fits(high + 1), every wager being at least its limit
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def check_capacity(config: TableConfig, jurisdiction: Jurisdiction) -> None:
    """Refuse a table whose limits let some spot hold more than the bet sensors can read.

    For every spot of ``drivers.events.SPOTS`` (in that order): its largest wager (``largest_wager`` of its
    limit's max) and, after the payout, what it must hold at each of its pay table's odds (``largest_hold``,
    ``payout.winning_spot`` of ``config``) must be at most ``MAX_AMOUNT`` (the sensors' u32 amount field,
    docs/protocol.md, "Bet sensors"; the odds: the jurisdiction file, NY 9 NYCRR 5324.39(f)). Raises
    ``ConfigError`` for the first spot that breaks it, naming the table file, the line and the key of its
    limit (``limits.ante.max``), the spot, the hand and odds that make the amount, the pay table and its file,
    and the largest max that fits (``largest_limit``)."""
    winning_spot = config.payout.winning_spot
    for spot in SPOTS:
        limits = limits_of(config, spot)
        wager = largest_wager(spot, limits.max, jurisdiction)
        table_name = PAY_TABLE_OF[spot]
        table = getattr(jurisdiction, table_name)
        holds, hand = largest_hold(wager, table, winning_spot)
        if holds <= MAX_AMOUNT:
            continue
        key = LIMIT_OF[spot]
        placed = f"lets the {spot} wager be {wager}" + (
            f" ({max(jurisdiction.bet_multiples)}x the ante)" if spot in DECISIONS else "")
        if hand is not None:
            placed += (f"; paid {hand} at {odds_text(table.pays[hand])} (pay_tables.{table_name} of "
                       f"{jurisdiction.source}) the spot holds {holds} (winning_spot: {winning_spot})")
        most = largest_limit(key, jurisdiction, winning_spot)
        lower = f" (and limits.{key}.min, {limits.min}, at most that too)" if limits.min > most else ""
        raise error(config.source, f"limits.{key}.max", f"{limits.max} {placed}, above the {MAX_AMOUNT} minor units "
                    f"the bet sensors read per spot (docs/protocol.md, \"Bet sensors\"); with these pay tables "
                    f"limits.{key}.max is at most {most}{lower}", limits.line)
