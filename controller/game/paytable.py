"""Jurisdictions: pay tables, ranking flags and bet multiples, loaded from ``config/jurisdictions/*.yaml``.

Each value in a jurisdiction file carries the citation it comes from (see ``config/jurisdictions/ny.yaml``), and a
``reading`` where the text we hold is silent. The regulation's floor and fixed rules are not in these editable
files: they are in ``controller.game.minimums``, and a file that breaks them is refused on load.
Pay tables map every paying hand to odds "N to 1" (an integer N >= 1; the stake comes back plus N times it)
or to ``push``; a hand below a pair of 6s loses (NY 9 NYCRR 5324.39(f)). The paying hands split the NY (b)(2) "pair" into a
pair of 6s through 10s and a pair of jacks or better, because NY (f)(1),(2) pay them differently.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.game.hands import CATEGORIES, HandValue
from controller.game.minimums import REGULATIONS, Regulation, odds_text, odds_value
from controller.settings.files import CONFIG_DIR, ConfigError, check_keys, error, line_of, load_yaml, require_int

#: Paying hands, lowest first. A hand below a pair of 6s has no entry and always loses.
PAY_HANDS: tuple[str, ...] = ("pair_6s_to_10s", "pair_jacks_or_better") + CATEGORIES[2:]

#: The three pay tables of Criss-Cross Poker: both antes; the across, down and middle bets; the five-card bonus.
TABLE_NAMES: tuple[str, ...] = ("ante", "bet", "five_card_bonus")

#: Largest odds a pay table may offer (N to 1). The regulation sets floors, not ceilings (NY 5324.39(f) "no less
#: than"); this bound is the project's: the par sheet's exact arithmetic keeps every sum an integer below 2**53 in
#: float64 up to these odds (``controller.analysis.parsheet``); ``paytable`` and ``settle`` share the bound.
MAX_ODDS = 1_000_000


def pay_hand(value: HandValue) -> str | None:
    """The paying hand of ``value`` (one of ``PAY_HANDS``), or ``None`` below a pair of 6s (NY 5324.39(f))."""
    if value.category == "high_card":
        return None
    if value.category == "pair":
        rank = value.ranks[0]  # the pair's rank, 0 (deuces) .. 12 (aces)
        if rank < 4:  # pairs of 2s to 5s
            return None
        return "pair_6s_to_10s" if rank <= 8 else "pair_jacks_or_better"
    return value.category


@dataclass(frozen=True)
class PayTable:
    """One pay table: ``pays`` maps a paying hand to odds N (int, N to 1) or ``"push"``; ``citation`` its source;
    ``reading`` the reading taken where the cited text is silent (None when the text says it)."""

    name: str
    pays: dict[str, int | str]
    citation: str
    reading: str | None = None

    def outcome(self, value: HandValue) -> tuple[str, int]:
        """Outcome of a wager on a hand of ``value``: ``("win", N)``, ``("push", 0)`` or ``("lose", 0)``."""
        return self.outcome_of(pay_hand(value))

    def outcome_of(self, hand: str | None) -> tuple[str, int]:
        """Outcome of a wager on the paying hand ``hand`` (one of ``PAY_HANDS``, or None below a pair of 6s):
        ``("win", N)``, ``("push", 0)`` or ``("lose", 0)``."""
        entry = self.pays.get(hand)  # type: ignore[arg-type]
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


#: A jurisdiction written as a code (``ny``, ``NY``) rather than as the path of a file.
CODE = re.compile(r"[A-Za-z]{2,8}")


def known_codes(config_dir: Path = CONFIG_DIR) -> list[str]:
    """The jurisdiction codes of ``config_dir``: the names of its ``jurisdictions/*.yaml``, sorted."""
    return sorted(p.stem for p in (Path(config_dir) / "jurisdictions").glob("*.yaml"))


def load_jurisdiction(name_or_path: str | Path, config_dir: Path = CONFIG_DIR) -> Jurisdiction:
    """Load a jurisdiction by code (``"ny"`` -> ``config/jurisdictions/ny.yaml``) or from a file path.

    Text that is a code (two to eight letters, ``CODE``) is always a code: a file of that name in the current folder
    is not read (given as ``./ny`` it is), so that a file there never changes what a code pays.

    The file's ``jurisdiction`` code selects the regulation it answers to (``controller.game.minimums``); loaded by
    code, the file must carry that same code. Raises ``ConfigError`` naming the file, the line and the key
    path for: an unknown jurisdiction (nothing of its name in ``jurisdictions/``), a file that is not a regular
    file (a code's too: a pipe, a link to nothing, each named so), larger than 1 MiB or not UTF-8 text,
    malformed YAML (read by ``controller.settings.files.load_yaml``: a YAML error or an unknown key shows none of
    the file's text but keys that are names), a ``name`` that does not contain the state's name, a missing or
    unknown key, odds that are not a positive
    integer or ``push``, a paying hand missing or unknown, a hand paid below its jurisdiction's minimum (NY
    9 NYCRR 5324.39(f) "no less than"; the message gives the configured odds and the minimum with its
    citation), odds above ``MAX_ODDS`` to 1, a ``citation`` that is empty or not text (every value carries
    its source), ranking rules other than the regulation's (wheel allowed, no wrap-around: NY (b)(1),(b)(2);
    NJ 13:69F-25.5(a)) and bet multiples outside one to three times the ante (NY (c)(4)). The file's
    ``jurisdiction`` code is case-blind (``NY`` is ``ny``) and kept in lower case.
    """
    text = text_asked = str(name_or_path)
    if len(text) > 4096:
        raise ConfigError(f"jurisdiction {text[:40]!r}...: neither a jurisdiction code nor a file path")
    code_asked = None
    if CODE.fullmatch(text):  # a code whatever the current folder holds: a file named ``ny`` there is ``./ny``
        text = text.lower()  # codes are written in lower case; NY is ny
        code_asked = text
        path = Path(config_dir) / "jurisdictions" / f"{text}.yaml"
        if not os.path.lexists(path):  # nothing of that name; anything else (a pipe, a link to nothing) is
            # read by load_yaml, which says what is wrong with it: a code listed as known is never called unknown
            hint = f"; the file {text_asked!r} is given as ./{text_asked}" if Path(text_asked).is_file() else ""
            raise ConfigError(f"unknown jurisdiction {text!r} (known: {', '.join(known_codes(config_dir)) or 'none'})"
                              f"{hint}")
    else:
        path = Path(text)
    data = load_yaml(path)
    check_keys(path, "top level", data, {"jurisdiction", "name", "citation", "ranking", "bet_multiples", "pay_tables"},
               {"reading"})
    code = data["jurisdiction"]
    if isinstance(code, str):
        code = code.lower()  # codes are case-blind, as on the command line and in table.yaml
    if code not in REGULATIONS:
        raise error(path, "jurisdiction", f"no regulation known for {code!r} (known: {', '.join(REGULATIONS)})",
                    line_of(data, "jurisdiction"))
    if code_asked is not None and code != code_asked:
        raise error(path, "jurisdiction", f"{code!r} in a file loaded as jurisdiction {code_asked!r}",
                    line_of(data, "jurisdiction"))
    regulation = REGULATIONS[code]
    citation = _citation(path, "citation", data)
    name = data["name"]
    if not isinstance(name, str) or regulation.name.lower() not in name.lower():
        # A report headed "New York" over Pennsylvania's minimums would mislead whoever reads it.
        raise error(path, "name", f"{name!r} does not name {regulation.name}, whose regulation the code "
                    f"{code!r} selects", line_of(data, "name"))
    ranking = data["ranking"]
    check_keys(path, "ranking", ranking, {"wheel", "wrap_around"})
    for key in ("wheel", "wrap_around"):
        value = _cited_value(path, f"ranking.{key}", ranking[key])
        line = line_of(ranking[key], "value")
        if not isinstance(value, bool):
            raise error(path, f"ranking.{key}", f"expected true or false, got {value!r}", line)
        if value != getattr(regulation, key):
            if key == "wrap_around":
                raise error(path, "ranking.wrap_around", "true is not supported (no regulation allows "
                            f"wrap-around; {regulation.ranking_citation})", line)
            raise error(path, f"ranking.{key}", f"{str(value).lower()} is not the ranking of "
                        f"{regulation.name} ({regulation.ranking_citation})", line)
    wheel = ranking["wheel"]["value"]
    multiples = _cited_value(path, "bet_multiples", data["bet_multiples"])
    line = line_of(data["bet_multiples"], "value")
    if not isinstance(multiples, list) or not multiples:
        raise error(path, "bet_multiples.value", f"expected a non-empty list of integers, got {multiples!r}", line)
    multiples = tuple(sorted({require_int(path, "bet_multiples.value", m, 1, line) for m in multiples}))
    if set(multiples) != set(regulation.bet_multiples):  # the player's choice of 1x to 3x is the regulation's
        raise error(path, "bet_multiples.value", f"{', '.join(f'{m}x' for m in multiples)} given; {regulation.name} "
                    f"gives the player {', '.join(f'{m}x' for m in sorted(regulation.bet_multiples))} "
                    f"({regulation.multiples_citation})", line)
    tables = data["pay_tables"]
    check_keys(path, "pay_tables", tables, set(TABLE_NAMES))
    loaded = {name: _load_table(path, name, tables[name], regulation) for name in TABLE_NAMES}
    return Jurisdiction(
        code=str(code),
        name=name,
        citation=citation,
        wheel=wheel,
        bet_multiples=multiples,
        source=path,
        **loaded,
    )


def _cited_value(path: Path, where: str, entry: Any) -> Any:
    check_keys(path, where, entry, {"value", "citation"}, {"reading"})
    _citation(path, f"{where}.citation", entry)
    return entry["value"]


def _citation(path: Path, where: str, entry: Any) -> str:
    """``entry["citation"]``: text that is not blank, else a ``ConfigError`` naming the file, line and key."""
    citation = entry["citation"]
    if not isinstance(citation, str) or not citation.strip():
        raise error(path, where, f"expected the regulation text this value comes from, got {citation!r} (every "
                    "value carries its citation)", line_of(entry, "citation"))
    return citation


def _load_table(path: Path, name: str, entry: Any, regulation: Regulation) -> PayTable:
    where = f"pay_tables.{name}"
    check_keys(path, where, entry, {"citation", "pays"}, {"reading"})
    citation = _citation(path, f"{where}.citation", entry)
    pays = entry["pays"]
    check_keys(path, f"{where}.pays", pays, set(PAY_HANDS))
    minimum = regulation.minimums[name]
    table: dict[str, int | str] = {}
    for hand in PAY_HANDS:
        odds = pays[hand]
        line = line_of(pays, hand)
        if odds != "push":
            odds = require_int(path, f"{where}.pays.{hand}", odds, 1, line)
            if odds > MAX_ODDS:
                raise error(path, f"{where}.pays.{hand}", f"{hand} pays {odds_text(odds)}, above the largest odds "
                            f"{odds_text(MAX_ODDS)} a pay table may offer (beyond the exact arithmetic of the par sheet)", line)
        least = minimum.pays[hand]
        if odds_value(odds) < odds_value(least):
            raise error(path, f"{where}.pays.{hand}", f"{hand} pays {odds_text(odds)}, below the minimum "
                        f"{odds_text(least)} of {regulation.name} ({minimum.citation})", line)
        table[hand] = odds
    reading = entry.get("reading")
    return PayTable(name=name, pays=table, citation=citation,
                    reading=None if reading is None else str(reading))
