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
from controller.game.hands import HandValue, evaluate
from controller.game.paytable import Jurisdiction, load_jurisdiction
from controller.game.table import DECISIONS, TableConfig, WagerError, check_limits, check_wagers
from controller.settings.files import CONFIG_DIR, ConfigError, short
from drivers.events import SEATS

#: Order in which a seat's wagers are settled: hand by hand, the five-card bonus last (PA 674a.11(h)(5)).
SETTLEMENT_ORDER: tuple[str, ...] = ("ante_across", "across", "ante_down", "down", "middle", "five_card_bonus")


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


def _result(amount: int, outcome: tuple[str, int]) -> WagerResult:
    kind, odds = outcome
    return WagerResult(amount, kind, {"win": odds * amount, "push": 0, "lose": -amount}[kind])


def settle_seat(seat: int, cards: tuple[str, str], community: Community, wagers: Mapping[str, int],
                jurisdiction: Jurisdiction) -> SeatSettlement:
    """Settle one seat's wagers (already checked with ``check_wagers``) against the revealed cross.

    ``wagers`` maps wager names to minor units; a decision bet absent means the seat folded there, and the
    wagers before it are forfeited (they lose). Returns a ``SeatSettlement``; raises nothing for checked input.
    """
    wheel = jurisdiction.wheel
    across_cards = (*cards, *community.across_line)
    down_cards = (*cards, *community.down_line)
    across, down, board = evaluate(across_cards, wheel=wheel), evaluate(down_cards, wheel=wheel), evaluate(
        community.board, wheel=wheel)
    folded = next((d for d in DECISIONS if d not in wagers), None)
    results: dict[str, WagerResult] = {}
    for name in SETTLEMENT_ORDER:
        if name not in wagers:
            continue
        amount = wagers[name]
        if name == "five_card_bonus":
            outcome = jurisdiction.five_card_bonus.outcome(board)
        elif folded is not None:
            outcome = ("lose", 0)  # forfeited at the fold (NY 5324.39(e)(3),(5),(7))
        elif name in ("ante_across", "ante_down"):
            outcome = jurisdiction.ante.outcome(across if name == "ante_across" else down)
        elif name in ("across", "down"):
            outcome = jurisdiction.bet.outcome(across if name == "across" else down)
        else:
            outcome = _middle_outcome(across, down, jurisdiction)
        results[name] = _result(amount, outcome)
    return SeatSettlement(seat, cards, (across_cards, across), (down_cards, down), (community.board, board), results)


def _middle_outcome(across: HandValue, down: HandValue, jurisdiction: Jurisdiction) -> tuple[str, int]:
    """NY 5324.39(e)(9)(ii): win at the odds of the higher-ranking winning hand; push if either pushes; else lose."""
    outcomes = [(jurisdiction.bet.outcome(h), h) for h in (across, down)]
    winners = [(o, h) for o, h in outcomes if o[0] == "win"]
    if winners:
        return max(winners, key=lambda oh: oh[1])[0]
    if any(o[0] == "push" for o, _ in outcomes):
        return "push", 0
    return "lose", 0


def settle_round(data: Any, config_dir=CONFIG_DIR, table: TableConfig | None = None) -> dict[str, Any]:
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
    """
    if not isinstance(data, dict):
        raise SettlementInputError(None, "round", f"expected a JSON object, got {type(data).__name__}")
    for key in data:
        if key not in ("jurisdiction", "community", "seats"):
            raise SettlementInputError(None, key, "unknown key (expected jurisdiction, community, seats)")
    try:
        jurisdiction = load_jurisdiction(_required(data, "jurisdiction", str), config_dir)
    except ConfigError as exc:
        raise SettlementInputError(None, "jurisdiction", str(exc)) from None
    community = _parse_community(_required(data, "community", dict))
    seats_data = _required(data, "seats", list)
    if not seats_data:
        raise SettlementInputError(None, "seats", "no seat: at least one seat is settled")
    places: dict[str, tuple[int | None, str]] = {}
    for line in ("across", "down"):
        for i in range(2):
            places[f"community.{line}[{i}]"] = (None, f"community.{line}[{i}]")
    places["community.middle"] = (None, "community.middle")
    placed = list(zip(places, community.board))
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
        for i, card in enumerate(cards):
            places[f"seat {seat} cards[{i}]"] = (seat, f"cards[{i}]")
            placed.append((f"seat {seat} cards[{i}]", card))
        seats.append((seat, cards, wagers))
    try:
        check_distinct(placed)
    except CardError as exc:
        seat, field = places[exc.where]
        raise SettlementInputError(seat, field, exc.reason) from None
    settled = [settle_seat(s, c, community, w, jurisdiction) for s, c, w in sorted(seats, reverse=True)]
    return {"jurisdiction": data["jurisdiction"], "seats": [s.to_json() for s in settled]}


def _required(data: dict, key: str, kind: type) -> Any:
    if key not in data:
        raise SettlementInputError(None, key, "missing")
    if not isinstance(data[key], kind):
        raise SettlementInputError(None, key, f"expected {kind.__name__}, got {type(data[key]).__name__}")
    return data[key]


def _parse_community(community: dict) -> Community:
    for key in community:
        if key not in ("across", "down", "middle"):
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
    for key in entry:
        if key not in ("seat", "cards", "wagers"):
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
