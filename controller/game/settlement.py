"""Settlement of a seat's six wagers, and of a whole round given as JSON (``crisscross settle``).

Rules (sources): the across hand is the player's two cards + the three cards of the horizontal line, the down
hand the two cards + the vertical line (NY 9 NYCRR 5324.39(e)(9)(i); PA 58 Pa. Code 674a.11(g)). The ante
across and the across bet settle on the across hand, the ante down and the down bet on the down hand (PA
(h)(1),(2)); the middle bet wins at the odds of the higher-ranking hand if either hand wins, pushes if neither
wins and at least one pushes, and loses only if both lose (NY (e)(9)(ii); PA (h)(3),(4)); the five-card bonus
settles on the five community cards, last for the seat, and stays in action after any fold (PA (b),(d),(f),
(h)(5)). Folded wagers lose (NY (e)(3)-(7)). Seats settle from the dealer's right, counterclockwise: the
highest seat number first (NY (e)(9); PA (g)). Pay tables: ``controller.game.paytable``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.game.cards import CardError, check_distinct, parse_card, parse_cards
from controller.game.hands import HandValue, evaluate, evaluate_cross
from controller.game.paytable import Jurisdiction, load_jurisdiction, pay_hand
from controller.game.table import DECISIONS, TableConfig, WagerError, check_limits, check_wagers
from controller.settings.files import CONFIG_DIR, ConfigError, short
from drivers.events import SEATS

#: Order in which a seat's wagers are settled: hand by hand, the five-card bonus last (PA 674a.11(h)(5)).
SETTLEMENT_ORDER: tuple[str, ...] = ("ante_across", "across", "ante_down", "down", "middle", "five_card_bonus")
#: The pay table (``Jurisdiction`` attribute, ``controller.game.paytable.TABLE_NAMES``) each wager is paid at: the
#: antes at the ante table, the across and down bets at the bet table (PA 674a.11(h)(1),(2)), the middle bet at
#: the bet table's odds of the higher-ranking winning hand (NY 5324.39(e)(9)(ii)), the five-card bonus at its own
#: (NY (f)(3); PA (h)(5)); as ``_settle_wagers`` pays them.
PAY_TABLE_OF: dict[str, str] = {"ante_across": "ante", "across": "bet", "ante_down": "ante", "down": "bet",
                                "middle": "bet", "five_card_bonus": "five_card_bonus"}


class SettlementInputError(WagerError):
    """A round that cannot be settled as given. ``seat`` (or None) and ``field`` name where; see ``WagerError``."""


@dataclass(frozen=True)
class Community:
    """The cross: two outside cards of the horizontal (across) line, two of the vertical (down) line, the middle."""

    across: tuple[str, str]
    down: tuple[str, str]
    middle: str

    @property
    def across_line(self) -> tuple[str, str, str]:
        """The three cards of the horizontal line: the outside cards and the middle card."""
        return (*self.across, self.middle)

    @property
    def down_line(self) -> tuple[str, str, str]:
        """The three cards of the vertical line: the outside cards and the middle card."""
        return (*self.down, self.middle)

    @property
    def board(self) -> tuple[str, ...]:
        """The five community cards (the five-card bonus hand)."""
        return (*self.across, *self.down, self.middle)

    @classmethod
    def from_stack(cls, stack: tuple[str, ...]) -> "Community":
        """The cross as laid from the shoe's five-card stack: cards 1-2 across, 3-4 down, 5 the middle
        (the table procedure in docs/architecture.md)."""
        return cls(across=(stack[0], stack[1]), down=(stack[2], stack[3]), middle=stack[4])

    def to_json(self) -> dict[str, Any]:
        """The ``community`` object of the settlement JSON."""
        return {"across": list(self.across), "down": list(self.down), "middle": self.middle}


@dataclass(frozen=True)
class WagerResult:
    """One settled wager: ``amount`` staked, ``outcome`` ``win``/``push``/``lose``, ``net`` signed result.

    A win at N to 1 has net N x amount and the stake is returned; a push has net 0 and the stake is returned;
    a loss has net -amount and the stake is collected. All minor units.
    """

    amount: int
    outcome: str
    net: int

    @property
    def returned(self) -> int:
        """Stake returned to the player (win or push), minor units."""
        return 0 if self.outcome == "lose" else self.amount

    @property
    def collected(self) -> int:
        """Stake collected by the house (loss), minor units."""
        return self.amount if self.outcome == "lose" else 0

    def to_json(self) -> dict[str, Any]:
        """``{"amount", "outcome", "net"}`` as in the settlement JSON."""
        return {"amount": self.amount, "outcome": self.outcome, "net": self.net}


@dataclass(frozen=True)
class SeatSettlement:
    """A settled seat: its cards, its three hands and each placed wager's result (in ``SETTLEMENT_ORDER``)."""

    seat: int
    cards: tuple[str, str]
    across_hand: tuple[tuple[str, ...], HandValue]
    down_hand: tuple[tuple[str, ...], HandValue]
    five_card_bonus_hand: tuple[tuple[str, ...], HandValue]
    wagers: dict[str, WagerResult]

    @property
    def net(self) -> int:
        """Sum of the wagers' nets, minor units."""
        return sum(r.net for r in self.wagers.values())

    def to_json(self) -> dict[str, Any]:
        """The seat's object in the settlement JSON (see ``settle_round``)."""

        def hand(h: tuple[tuple[str, ...], HandValue]) -> dict[str, Any]:
            return {"cards": list(h[0]), "category": h[1].category}

        return {
            "seat": self.seat,
            "across_hand": hand(self.across_hand),
            "down_hand": hand(self.down_hand),
            "five_card_bonus_hand": hand(self.five_card_bonus_hand),
            "wagers": {name: r.to_json() for name, r in self.wagers.items()},
            "net": self.net,
        }


def _seat_hands(cards: tuple[str, str], community: Community,
                wheel: bool) -> tuple[tuple[str, ...], HandValue, tuple[str, ...], HandValue]:
    """The seat's across hand and down hand: their five cards (the seat's two, then the line) and values."""
    first, second = cards
    middle, across, down = community.middle, community.across, community.down
    across_value, down_value = evaluate_cross(cards, across, down, middle, wheel=wheel)
    return ((first, second, across[0], across[1], middle), across_value,
            (first, second, down[0], down[1], middle), down_value)


def _settle_wagers(across: HandValue, down: HandValue, board: HandValue, wagers: Mapping[str, int],
                   jurisdiction: Jurisdiction) -> list[tuple[str, int, str, int]]:
    """Each placed wager of a seat as ``(name, amount, outcome, net)`` in ``SETTLEMENT_ORDER`` (the rules: the
    module docstring); ``across``, ``down`` and ``board`` are the values of its three hands."""
    if "across" in wagers and "down" in wagers and "middle" in wagers:
        ante, bet = jurisdiction.ante.outcome_of, jurisdiction.bet.outcome_of
        across_hand, down_hand = pay_hand(across), pay_hand(down)
        across_bet, down_bet = bet(across_hand), bet(down_hand)
        outcomes: tuple[tuple[str, tuple[str, int]], ...] = (
            ("ante_across", ante(across_hand)), ("across", across_bet), ("ante_down", ante(down_hand)),
            ("down", down_bet), ("middle", _middle_of(across, across_bet, down, down_bet)))
    else:  # a fold at one of DECISIONS: every wager placed before it is forfeited (NY 5324.39(e)(3),(5),(7))
        outcomes = tuple((name, _LOSE) for name in SETTLEMENT_ORDER[:-1])
    if "five_card_bonus" in wagers:
        outcomes += (("five_card_bonus", jurisdiction.five_card_bonus.outcome(board)),)
    results = []
    for name, (kind, odds) in outcomes:
        if name in wagers:
            amount = wagers[name]
            results.append((name, amount, kind, net_of(kind, odds, amount)))
    return results


_LOSE = ("lose", 0)


def net_of(outcome: str, odds: int, amount: int) -> int:
    """The signed net of a wager of ``amount`` minor units whose outcome is ``outcome`` (``win``, ``push`` or
    ``lose``, as ``PayTable.outcome_of`` gives it with ``odds``): a win at N to 1 nets N x ``amount`` (the stake
    comes back besides), a push 0, a loss -``amount`` (NY 9 NYCRR 5324.39(f): "N to 1"; the ``WagerResult``
    shapes). Minor units in, minor units out; any outcome other than ``win`` or ``push`` is a loss."""
    return odds * amount if outcome == "win" else 0 if outcome == "push" else -amount


def settle_seat(seat: int, cards: tuple[str, str], community: Community, wagers: Mapping[str, int],
                jurisdiction: Jurisdiction) -> SeatSettlement:
    """Settle one seat's wagers (already checked with ``check_wagers``) against the revealed cross.

    ``wagers`` maps wager names to minor units; a decision bet absent means the seat folded there, and the
    wagers before it are forfeited (they lose). Returns a ``SeatSettlement``; raises nothing for checked input.
    """
    across_cards, across, down_cards, down = _seat_hands(cards, community, jurisdiction.wheel)
    board_cards = community.board
    board = evaluate(board_cards, wheel=jurisdiction.wheel)
    results = {name: WagerResult(amount, kind, net)
               for name, amount, kind, net in _settle_wagers(across, down, board, wagers, jurisdiction)}
    return SeatSettlement(seat, cards, (across_cards, across), (down_cards, down), (board_cards, board), results)


def _seat_json(seat: int, cards: tuple[str, str], community: Community, board: tuple[tuple[str, ...], HandValue],
               wagers: Mapping[str, int], jurisdiction: Jurisdiction) -> dict[str, Any]:
    """``settle_seat(...).to_json()``, built without the objects; ``board`` is the five community cards and
    their value."""
    across_cards, across, down_cards, down = _seat_hands(cards, community, jurisdiction.wheel)
    board_cards, board_value = board
    settled = {}
    net = 0
    for name, amount, kind, result in _settle_wagers(across, down, board_value, wagers, jurisdiction):
        settled[name] = {"amount": amount, "outcome": kind, "net": result}
        net += result
    return {"seat": seat, "across_hand": {"cards": list(across_cards), "category": across.category},
            "down_hand": {"cards": list(down_cards), "category": down.category},
            "five_card_bonus_hand": {"cards": list(board_cards), "category": board_value.category},
            "wagers": settled, "net": net}


def _middle_of(across: HandValue, across_bet: tuple[str, int], down: HandValue,
               down_bet: tuple[str, int]) -> tuple[str, int]:
    """NY 5324.39(e)(9)(ii): win at the odds of the higher-ranking winning hand; push if either pushes; else lose.
    ``across_bet`` and ``down_bet`` are the bet table's outcomes of the two hands."""
    if across_bet[0] == "win":
        return down_bet if down_bet[0] == "win" and across < down else across_bet
    if down_bet[0] == "win":
        return down_bet
    if across_bet[0] == "push" or down_bet[0] == "push":
        return "push", 0
    return "lose", 0


def settle_round(data: Any, config_dir=CONFIG_DIR, table: TableConfig | None = None,
                 jurisdictions: dict[str, Jurisdiction] | None = None) -> dict[str, Any]:
    """Settle a round given in the ``crisscross settle`` JSON shape and return the output JSON object.

    Input: ``{"jurisdiction": code (``ny``, ``pa``, ``nj``) or pay-table file, "community": {"across": [c, c], "down": [c, c],
    "middle": c}, "seats": [{"seat": n, "cards": [c, c], "wagers": {name: minor units}}]}``.
    Output: ``{"jurisdiction": as given, "seats": [seat objects in settlement order, highest seat first]}``; each
    seat object is described by ``SeatSettlement.to_json``.
    Raises ``SettlementInputError`` (``seat``, ``field``) for an unknown card, a duplicate card anywhere in
    the round, unequal antes, a bet that is not an allowed multiple of the ante, a bet after a fold, a bonus
    without antes, an amount that is not a positive integer, an unknown wager, an unknown jurisdiction, or a
    seat outside 1-6 or repeated. With ``table`` (a loaded ``table.yaml``), also a seat not in play at that table
    and an ante or five-card bonus outside its limits (``controller.game.table.check_limits``).
    ``jurisdictions``: the jurisdictions a batch has loaded so far, by the text of ``jurisdiction`` (for
    ``config_dir``); one found there is not read again, one loaded is added. Without it each call reads the file.
    A file that cannot be loaded is never kept: each round naming it is refused with the same message.
    """
    if not isinstance(data, dict):
        raise SettlementInputError(None, "round", f"expected a JSON object, got {type(data).__name__}")
    for key in data:
        if key not in ("jurisdiction", "community", "seats"):
            raise SettlementInputError(None, key, "unknown key (expected jurisdiction, community, seats)")
    name = _required(data, "jurisdiction", str)
    jurisdiction = None if jurisdictions is None else jurisdictions.get(name)
    if jurisdiction is None:
        try:
            jurisdiction = load_jurisdiction(name, config_dir)
        except ConfigError as exc:
            raise SettlementInputError(None, "jurisdiction", str(exc)) from None
        if jurisdictions is not None:
            jurisdictions[name] = jurisdiction
    community = _parse_community(_required(data, "community", dict))
    seats_data = _required(data, "seats", list)
    if not seats_data:
        raise SettlementInputError(None, "seats", "no seat: at least one seat is settled")
    seats: list[tuple[int, tuple[str, str], dict[str, int]]] = []
    seen_seats: set[int] = set()
    for index, entry in enumerate(seats_data):
        seat, cards, wagers = _parse_seat(index, entry, jurisdiction, seen_seats)
        if table is not None:
            if seat not in table.seats:
                raise SettlementInputError(seat, "seat", f"not in play at table {table.table_id} "
                                           f"(seats {', '.join(map(str, table.seats))}, {table.source})")
            try:
                check_limits(seat, wagers, table)
            except WagerError as exc:
                raise SettlementInputError(seat, exc.field, f"{exc.reason} (table {table.table_id})") from None
        seats.append((seat, cards, wagers))
    board_cards = community.board
    dealt = [*board_cards, *(card for _, cards, _ in seats for card in cards)]
    if len(set(dealt)) != len(dealt):
        _refuse_duplicate(community, seats)
    board = (board_cards, evaluate(board_cards, wheel=jurisdiction.wheel))
    return {"jurisdiction": data["jurisdiction"],
            "seats": [_seat_json(s, c, community, board, w, jurisdiction) for s, c, w in sorted(seats, reverse=True)]}


def _refuse_duplicate(community: Community, seats: list[tuple[int, tuple[str, str], dict[str, int]]]) -> None:
    """Raise ``SettlementInputError`` for the first card of the round (community, then seats as given) that
    is also at an earlier place, naming both (one deck, NY 5324.39(a)(1))."""
    places: dict[str, tuple[int | None, str]] = {}
    for line in ("across", "down"):
        for i in range(2):
            places[f"community.{line}[{i}]"] = (None, f"community.{line}[{i}]")
    places["community.middle"] = (None, "community.middle")
    placed = list(zip(places, community.board))
    for seat, cards, _ in seats:
        for i, card in enumerate(cards):
            places[f"seat {seat} cards[{i}]"] = (seat, f"cards[{i}]")
            placed.append((f"seat {seat} cards[{i}]", card))
    try:
        check_distinct(placed)
    except CardError as exc:
        seat, field = places[exc.where]
        raise SettlementInputError(seat, field, exc.reason) from None


def _required(data: dict, key: str, kind: type) -> Any:
    if key not in data:
        raise SettlementInputError(None, key, "missing")
    if not isinstance(data[key], kind):
        raise SettlementInputError(None, key, f"expected {kind.__name__}, got {type(data[key]).__name__}")
    return data[key]


#: The keys a round's ``community`` and each of its ``seats`` may have.
_COMMUNITY_KEYS = frozenset(("across", "down", "middle"))
_SEAT_KEYS = frozenset(("seat", "cards", "wagers"))


def _parse_community(community: dict) -> Community:
    if not _COMMUNITY_KEYS.issuperset(community):
        for key in community:
            if key not in _COMMUNITY_KEYS:
                raise SettlementInputError(None, f"community.{key}", "unknown key (expected across, down, middle)")
    try:
        across = parse_cards(community.get("across"), 2, "community.across")
        down = parse_cards(community.get("down"), 2, "community.down")
        middle = parse_card(community.get("middle"), "community.middle")
    except CardError as exc:
        raise SettlementInputError(None, exc.where, exc.reason) from None
    return Community(across, down, middle)  # type: ignore[arg-type]


def _parse_seat(index: int, entry: Any, jurisdiction: Jurisdiction, seen: set[int]) -> tuple[int, tuple, dict]:
    if not isinstance(entry, dict):
        raise SettlementInputError(None, f"seats[{index}]", f"expected an object, got {type(entry).__name__}")
    if "seat" not in entry:
        raise SettlementInputError(None, f"seats[{index}].seat", "missing")
    seat = entry["seat"]
    if type(seat) is not int or seat not in SEATS:
        raise SettlementInputError(None, f"seats[{index}].seat",
                                   f"{short(seat)} is not a seat (an integer 1-6, NY 5324.39(a)(1))")
    if seat in seen:
        raise SettlementInputError(seat, "seat", "seat listed twice")
    seen.add(seat)
    if not _SEAT_KEYS.issuperset(entry):
        for key in entry:
            if key not in _SEAT_KEYS:
                raise SettlementInputError(seat, key, "unknown key (expected seat, cards, wagers)")
    try:
        cards = parse_cards(entry.get("cards"), 2, "cards")
    except CardError as exc:
        raise SettlementInputError(seat, exc.where, exc.reason) from None
    try:
        wagers = check_wagers(seat, entry.get("wagers", {}), jurisdiction.bet_multiples)
    except WagerError as exc:
        raise SettlementInputError(seat, exc.field, exc.reason) from None
    return seat, cards, wagers
