"""Jurisdictions: pay tables, ranking flags and bet multiples, loaded from ``config/jurisdictions/*.yaml``.

Each value in a jurisdiction file carries the citation it comes from (see ``config/jurisdictions/ny.yaml``).
Pay tables map every paying hand to odds "N to 1" (an integer N >= 1; the stake comes back plus N times it)
or to ``push``; a hand below a pair of 6s loses (NY 9 NYCRR 5324.39(f)). The paying hands split the NY (b)(2) "pair" into a
pair of 6s through 10s and a pair of jacks or better, because NY (f)(1),(2) pay them differently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.config import CONFIG_DIR, ConfigError, check_keys, load_yaml, require_int
from controller.hands import CATEGORIES, HandValue

#: Paying hands, lowest first. A hand below a pair of 6s has no entry and always loses.
PAY_HANDS: tuple[str, ...] = ("pair_6s_to_10s", "pair_jacks_or_better") + CATEGORIES[2:]

#: The three pay tables of Criss-Cross Poker: both antes; the across, down and middle bets; the five-card bonus.
TABLE_NAMES: tuple[str, ...] = ("ante", "bet", "five_card_bonus")


def pay_hand(value: HandValue) -> str | None:
    """The paying hand of ``value`` (one of ``PAY_HANDS``), or ``None`` below a pair of 6s (NY 5324.39(f))."""
    if value.category == "high_card":
        return None
    if value.category == "pair":
        rank = "23456789TJQKA".index(value.pair_rank)
        if rank < 4:  # pairs of 2s to 5s
            return None
        return "pair_6s_to_10s" if rank <= 8 else "pair_jacks_or_better"
    return value.category


@dataclass(frozen=True)
class PayTable:
    """One pay table: ``pays`` maps a paying hand to odds N (int, N to 1) or ``"push"``; ``citation`` its source."""

    name: str
    pays: dict[str, int | str]
    citation: str

    def outcome(self, value: HandValue) -> tuple[str, int]:
        """Outcome of a wager on a hand of ``value``: ``("win", N)``, ``("push", 0)`` or ``("lose", 0)``."""
        entry = self.pays.get(pay_hand(value))
        if entry is None:
            return "lose", 0
        if entry == "push":
            return "push", 0
        return "win", entry


@dataclass(frozen=True)
class Jurisdiction:
    """The rules of one jurisdiction as configured: ranking flags, allowed bet multiples and pay tables.

    ``wheel``: A-2-3-4-5 is a straight. ``bet_multiples``: the allowed across/down/middle bets as multiples of
    the ante (NY 5324.39(c)(4)). ``ante``, ``bet`` and ``five_card_bonus`` are the pay tables; ``source`` the file.
    """

    code: str
    name: str
    citation: str
    wheel: bool
    bet_multiples: tuple[int, ...]
    ante: PayTable
    bet: PayTable
    five_card_bonus: PayTable
    source: Path


def load_jurisdiction(name_or_path: str | Path, config_dir: Path = CONFIG_DIR) -> Jurisdiction:
    """Load a jurisdiction by code (``"ny"`` -> ``config/jurisdictions/ny.yaml``) or from a file path.

    Raises ``ConfigError`` naming the jurisdiction or file and the key for an unknown jurisdiction, malformed
    YAML, a missing or unknown key, odds that are not a positive integer or ``push``, or a paying hand that
    is missing or unknown. Wrap-around straights are refused: no regulation here allows them.
    """
    text = str(name_or_path)
    if len(text) > 4096:
        raise ConfigError(f"jurisdiction {text[:40]!r}...: neither a jurisdiction code nor a file path")
    if re.fullmatch(r"[a-z]{2,8}", text):
        path = Path(config_dir) / "jurisdictions" / f"{text}.yaml"
        if not path.is_file():
            known = sorted(p.stem for p in (Path(config_dir) / "jurisdictions").glob("*.yaml"))
            raise ConfigError(f"unknown jurisdiction {text!r} (known: {', '.join(known) or 'none'})")
    else:
        path = Path(text)
    data = load_yaml(path)
    check_keys(path, "top level", data, {"jurisdiction", "name", "citation", "ranking", "bet_multiples", "pay_tables"})
    ranking = data["ranking"]
    check_keys(path, "ranking", ranking, {"wheel", "wrap_around"})
    wheel = _cited_value(path, "ranking.wheel", ranking["wheel"])
    wrap = _cited_value(path, "ranking.wrap_around", ranking["wrap_around"])
    if not isinstance(wheel, bool) or not isinstance(wrap, bool):
        raise ConfigError(f"{path}: ranking: wheel and wrap_around must be true or false")
    if wrap:
        raise ConfigError(f"{path}: ranking.wrap_around: true is not supported (no regulation allows wrap-around)")
    multiples = _cited_value(path, "bet_multiples", data["bet_multiples"])
    if not isinstance(multiples, list) or not multiples:
        raise ConfigError(f"{path}: bet_multiples.value: expected a non-empty list of integers, got {multiples!r}")
    multiples = tuple(sorted({require_int(path, "bet_multiples.value", m, 1) for m in multiples}))
    tables = data["pay_tables"]
    check_keys(path, "pay_tables", tables, set(TABLE_NAMES))
    loaded = {name: _load_table(path, name, tables[name]) for name in TABLE_NAMES}
    return Jurisdiction(
        code=str(data["jurisdiction"]),
        name=str(data["name"]),
        citation=str(data["citation"]),
        wheel=wheel,
        bet_multiples=multiples,
        source=path,
        **loaded,
    )


def _cited_value(path: Path, where: str, entry: Any) -> Any:
    check_keys(path, where, entry, {"value", "citation"})
    return entry["value"]


def _load_table(path: Path, name: str, entry: Any) -> PayTable:
    where = f"pay_tables.{name}"
    check_keys(path, where, entry, {"citation", "pays"})
    pays = entry["pays"]
    check_keys(path, f"{where}.pays", pays, set(PAY_HANDS))
    table: dict[str, int | str] = {}
    for hand in PAY_HANDS:
        odds = pays[hand]
        if odds == "push":
            table[hand] = "push"
        else:
            table[hand] = require_int(path, f"{where}.pays.{hand}", odds, 1)
    return PayTable(name=name, pays=table, citation=str(entry["citation"]))
