"""The expectations of a scenario (``expect:`` and ``wait:`` steps, docs/rig.md), checked against what the
table shows: ``/state`` of the control interface, the panel (the simulator's display and lamps, else the
controller's view of them) and the journal. Each check returns what does not hold, as text; an empty list
means the expectation holds.

Sources: hole-card secrecy (docs/control.md "Hole-card secrecy"; no card shown before it is turned, NY 9 NYCRR
5324.39(e)(2)); the journal checks of ``hil.checks`` (card accounting, order, settlement, money conserved).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from controller.control.server import public_record
from controller.journal.chain import verify_journal
from controller.journal.recall import rounds_from_records
from hil.checks import check_round, wagers_lost

#: A card written in a text: rank and suit, not inside a longer word.
CARD_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][cdhs](?![A-Za-z0-9])")


def matches(expected: Any, actual: Any) -> bool:
    """True when ``actual`` holds ``expected``: a mapping by each of its keys (recursively; a key ``1`` and a
    key ``"1"`` are the same seat), anything else by equality."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return False
        for key, value in expected.items():
            found = actual.get(key, actual.get(str(key), _MISSING))
            if found is _MISSING and isinstance(key, str) and key.isdigit():
                found = actual.get(int(key), _MISSING)
            if found is _MISSING or not matches(value, found):
                return False
        return True
    return expected == actual


_MISSING = object()


def records_matching(records: Iterable[dict[str, Any]], wanted: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The journal records of ``wanted["type"]`` (and ``round``, when given) whose data holds ``wanted["data"]``."""
    return [r for r in records if r.get("type") == wanted["type"]
            and ("round" not in wanted or r.get("round") == wanted["round"])
            and matches(wanted.get("data", {}), r.get("data") or {})]


def check_records(records: Sequence[dict[str, Any]], expected: Sequence[Mapping[str, Any]],
                  absent: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each record of ``expected`` present (``count`` times exactly, when given), none of ``absent``."""
    problems = []
    for wanted in expected:
        found = records_matching(records, wanted)
        if "count" in wanted and len(found) != wanted["count"]:
            problems.append(f"journal: {len(found)} records {_describe(wanted)}, {wanted['count']} expected")
        elif "count" not in wanted and not found:
            same_type = [r.get("data") for r in records if r.get("type") == wanted["type"]][-3:]
            problems.append(f"journal: no record {_describe(wanted)}"
                            + (f"; the last of that type: {_short(same_type)}" if same_type else ""))
    for unwanted in absent:
        found = records_matching(records, unwanted)
        if found:
            problems.append(f"journal: record {_describe(unwanted)} present (seq {found[0]['seq']}): "
                            f"{_short(found[0].get('data'))}")
    return problems


def _describe(wanted: Mapping[str, Any]) -> str:
    text = wanted["type"]
    if "round" in wanted:
        text += f" of round {wanted['round']}"
    if wanted.get("data"):
        text += f" with {json.dumps(wanted['data'], sort_keys=True)}"
    return text


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "..."


def check_settlement(records: Sequence[dict[str, Any]], expected: Mapping[str, Any]) -> list[str]:
    """Each seat's wagers as settled (``SeatSettled``) in round ``expected["round"]``, else the last round
    settled, hold the amounts, outcomes and nets expected."""
    rounds = rounds_from_records(list(records))
    number = expected.get("round")
    if number is None:
        settled = [n for n, r in rounds.items() if r.settlements]
        if not settled:
            return ["settlement: no round was settled"]
        number = settled[-1]
    rnd = rounds.get(number)
    if rnd is None or not rnd.settlements:
        return [f"settlement: round {number} was not settled"]
    problems = []
    for seat, wagers in expected.items():
        if seat == "round":
            continue
        settled = rnd.settlements.get(int(seat), {}).get("wagers", {})
        for wager, result in wagers.items():
            actual = settled.get(wager)
            if actual is None or not matches(result, actual):
                problems.append(f"settlement: round {number} seat {seat} {wager}: expected "
                                f"{json.dumps(result, sort_keys=True)}, settled {json.dumps(actual, sort_keys=True)}")
    return problems


def check_money(path, records: Sequence[dict[str, Any]]) -> list[str]:
    """The journal's chain verifies; every ended round passes ``hil.checks.check_round`` (order, cards,
    settlement, totals: money conserved); no wager placed was neither settled nor returned."""
    _, broken = verify_journal(path)
    problems = [f"journal chain: {broken}"] if broken else []
    by_round: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        if isinstance(record.get("round"), int):
            by_round.setdefault(record["round"], []).append(record)
    rounds = rounds_from_records(list(records))
    ended = {n: r for n, r in rounds.items() if r.closed}
    for number, rnd in ended.items():
        problems += check_round(rnd, by_round.get(number, []))
    lost = wagers_lost(ended)
    if lost:
        problems.append(f"{lost} wagers placed were neither settled nor returned")
    return problems


def _cards_in(value: Any) -> set[str]:
    return set(CARD_IN_TEXT.findall(json.dumps(value) if not isinstance(value, str) else value))


def check_face_down(records: Sequence[dict[str, Any]], panel_texts: Sequence[str],
                    state: Mapping[str, Any] | None) -> list[str]:
    """No card is shown before it is turned: no public record (``controller.control.server.public_record``, in
    journal order) names a community card before its ``CardsRevealed`` or a seat's card outside that seat's
    ``SeatSettled``; no panel text names a seat's card, or a community card never turned; ``/state`` shows
    only the current round's turned cards."""
    problems: list[str] = []
    hole: dict[int, dict[int, set[str]]] = {}  # round -> seat -> cards
    community: dict[int, set[str]] = {}
    for record in records:
        if record.get("type") == "StackDealt":
            data = record["data"]
            if data.get("seat") is None:
                community.setdefault(record["round"], set()).update(data["cards"])
            else:
                hole.setdefault(record["round"], {})[data["seat"]] = set(data["cards"])
    revealed: dict[int, set[str]] = {}
    for record in records:
        shown = public_record(record)
        if shown is None:
            continue
        number = record.get("round")
        turned = revealed.setdefault(number, set())
        if record["type"] == "CardsRevealed":
            turned.update(_cards_in(shown.get("data")))
        allowed = set(turned)
        if record["type"] == "SeatSettled":
            allowed |= hole.get(number, {}).get(shown["data"].get("seat"), set())
            allowed |= community.get(number, set()) if shown["data"].get("folded_at") is None else set()
        secret = (set().union(*hole.get(number, {}).values()) | community.get(number, set())) - allowed
        leaked = _cards_in(shown.get("data")) & secret
        if leaked:
            problems.append(f"face-down cards {sorted(leaked)} in public record {record['seq']} {record['type']}")
    every_hole = set().union(*(set().union(*seats.values()) for seats in hole.values())) if hole else set()
    ever_turned = set().union(*revealed.values()) if revealed else set()
    for text in panel_texts:
        leaked = _cards_in(text) & (every_hole | (set().union(*community.values()) - ever_turned
                                                  if community else set()))
        if leaked:
            problems.append(f"face-down cards {sorted(leaked)} on the panel: {text!r}")
    if state is not None:
        shown_now = set(state.get("community") or ())
        current = revealed.get(state.get("round_no"), set())
        if not shown_now <= current:
            problems.append(f"/state shows {sorted(shown_now - current)} not turned in round {state.get('round_no')}")
        leaked = _cards_in({k: v for k, v in state.items() if k != "community"}) & every_hole
        if leaked:
            problems.append(f"/state shows face-down cards {sorted(leaked)}")
    return problems


def check_view(expected: Mapping[str, Any], state: Mapping[str, Any] | None, display: str,
               lamps: Iterable[str]) -> list[str]:
    """``state``, ``round``, ``display`` (a part of the panel's text), ``lamps`` (exactly those lit) and
    ``pending_past_posting`` (how many) against ``/state`` and the panel."""
    problems = []
    if state is None and any(k in expected for k in ("state", "round", "pending_past_posting")):
        return ["the control interface does not answer (the service is not running)"]
    if "state" in expected:
        wanted = expected["state"] if isinstance(expected["state"], list) else [expected["state"]]
        if state["state"] not in wanted:
            problems.append(f"state {state['state']}, expected {' or '.join(wanted)}")
    if "round" in expected and state["round_no"] != expected["round"]:
        problems.append(f"round {state['round_no']}, expected {expected['round']}")
    if "pending_past_posting" in expected and len(state["pending_past_posting"]) != expected["pending_past_posting"]:
        problems.append(f"{len(state['pending_past_posting'])} past-postings pending, "
                        f"{expected['pending_past_posting']} expected")
    if "display" in expected and expected["display"] not in display:
        problems.append(f"panel shows {display!r}, expected it to contain {expected['display']!r}")
    if "lamps" in expected and set(lamps) != set(expected["lamps"]):
        problems.append(f"lamps lit {sorted(lamps)}, expected {sorted(expected['lamps'])}")
    return problems


def check_payout_view(expected: Mapping[str, Any] | None, state: Mapping[str, Any] | None) -> list[str]:
    """The payout check as the dealer's screen shows it (``/state`` ``payout``, ``controller.round.machine``): each key
    given (``seat`` being paid, ``to_pay`` the seats left in order, ``differences`` of the seat's last reading)
    holds (``matches``); ``None`` expected: the round is not in its payout."""
    if state is None:
        return ["the control interface does not answer (the service is not running)"]
    shown = state.get("payout")
    if expected is None:
        return [] if shown is None else [f"payout shown (seat {shown.get('seat')}), none expected"]
    if shown is None:
        return [f"no payout shown (state {state.get('state')}), expected {_short(expected)}"]
    return [f"payout {key}: {_short(shown.get(key))}, expected {_short(value)}"
            for key, value in expected.items() if not matches(value, shown.get(key))]
