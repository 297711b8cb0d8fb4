"""The table's lifetime meters, derived from the round's own records (NJ 13:69E-1.28C and 1.28P(e); the G2S
"game ended" meters): one model, fed every record the round journals, in journal order.

``Meters.feed(type, data)`` takes a record as the journal holds it (its type name and its ``data``); the round
machine feeds each input and output it journals (``Meters.observe``, ``controller.round.machine``), a replay of
the journal does the same, and ``Meters.from_records`` reads a journal's records alone: all three give the same
numbers. Amounts are integer minor units, counts integers.

What is counted (docs/operations.md, "Meters"):
- rounds: ``rounds_closed`` (a ``RoundClosed`` with wagers settled), ``rounds_no_play`` (a ``RoundClosed`` with
  nothing wagered), ``rounds_voided`` (``RoundVoided``: every wager returned, none counted as wagered);
- per wager type (``WAGER_TYPES``), from each ``SeatSettled``'s settlement: ``wagered`` (stakes settled),
  ``paid`` (won by players: the net of a win, the stake returned left out), ``taken`` (stakes lost by players,
  forfeits at a fold included), ``pushed`` (stakes of pushes, returned);
- ``drop``: every stake settled (the domain's "chips wagered", the handle), the sum of ``wagered``;
  ``win``: what the house kept, ``taken - paid`` over every wager type (negative when players won more);
- ``cards_dispensed``: cards of every ``StackDealt`` (stacks that left the shoe; cards dealt by hand are not);
- ``faults``: ``FaultRaised`` by device (``controller`` for the controller's own) and cause;
- ``past_posting``/``pinching``: ``caught`` (an ``Irregularity`` ``past_posting`` whose new amount is above /
  below the locked one, NY 9 NYCRR 5324.39(c)(3)) and ``accepted`` (the items of ``PastPostingAcknowledged``);
  ``mispays``: ``caught`` (a ``PayoutChecked`` with differences), ``accepted`` (``MispayAccepted``) and the
  ``short``/``over`` amounts accepted.
Test rounds (NY 9 NYCRR 5319.58: ``RoundOpened`` with ``test``, ``controller.round.table_locks``) move no lifetime
meter but ``rounds_test`` (a test round ended, closed or voided): every record from a test round's opening to its
end is counted in the test meters instead (``test``: the same meters), and the counters since power-up and shoe
service do not move.
Lifetime meters only grow; a restart, an upgrade or a key change never resets them (they live in the round's
checkpoint and are rebuilt from the journal). Two counters are not lifetime meters and reset: rounds since the
service started (``ServiceStarted``: the controller's power-up) and since the last shoe service (the shoe's door
opened, ``DeviceFault`` ``door_open``, or another shoe answered: a ``DeviceReady`` with another ``device_id``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

#: The wager types metered, in the order of the layout (NY 9 NYCRR 5324.39(a)(2)(i)).
WAGER_TYPES: tuple[str, ...] = ("ante_across", "ante_down", "across", "down", "middle", "five_card_bonus")
#: The meters of one wager type.
WAGER_METERS: tuple[str, ...] = ("wagered", "paid", "taken", "pushed")
#: The reason of the snapshot journaled at a gaming day's close.
DAY_CLOSE = "day_close"
#: The record type of a snapshot (journaled by the service, ``controller.service.meters_snapshot``).
SNAPSHOT = "MetersSnapshot"
#: The device named for a fault of the controller's own (``FaultRaised.device`` None).
CONTROLLER = "controller"


def _fresh() -> dict[str, Any]:
    return {
        "rounds_closed": 0, "rounds_voided": 0, "rounds_no_play": 0, "rounds_test": 0,
        "wagers": {name: dict.fromkeys(WAGER_METERS, 0) for name in WAGER_TYPES},
        "cards_dispensed": 0,
        "faults": {},
        "past_posting": {"caught": 0, "accepted": 0},
        "pinching": {"caught": 0, "accepted": 0},
        "mispays": {"caught": 0, "accepted": 0, "short": 0, "over": 0},
    }


class Meters:
    """The lifetime meters and the two counters since power-up and shoe service (module docstring).

    ``feed`` takes one journal record's type and data; ``lifetime``/``since``/``to_json`` give them as plain
    JSON-ready data. Raises ``ValueError`` naming the record type for a metered record whose data lacks a field
    the meter reads, or names an unknown wager type."""

    def __init__(self) -> None:
        self.counts: dict[str, Any] = _fresh()
        #: the test meters (module docstring): ``rounds_test`` stays 0 here, the rest as the lifetime's
        self.test_counts: dict[str, Any] = _fresh()
        #: a test round is open: its records go to ``test_counts``
        self.in_test = False
        self._target = self.counts  # where the feeder being run counts
        self.since_power_up = 0
        self.since_shoe_service = 0
        self.shoe_id: str | None = None  # the last shoe that answered (``DeviceReady``): a new one is a service
        #: records counted by this object (not a meter, not kept): tells a reader the meters may have changed
        self.changes = 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Meters) and self.checkpoint() == other.checkpoint()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"Meters({self.checkpoint()!r})"

    def observe(self, item: Any) -> None:
        """Feed an input or output of the round machine (a flat frozen dataclass), as the journal records it."""
        name = type(item).__name__
        if name in _FEEDERS:
            self.feed(name, {f.name: getattr(item, f.name) for f in dataclasses.fields(item)})

    def feed(self, type_: str, data: dict[str, Any]) -> None:
        """Count one record ``type_`` with ``data`` (its journal form); records not metered change nothing."""
        feeder = _FEEDERS.get(type_)
        if feeder is None:
            return
        self.changes += 1
        self._target = self.test_counts if self.in_test else self.counts
        try:
            feeder(self, data)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"meters: a {type_} record without the field the meters read: {exc!r}") from None

    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]], *, upto: int | None = None) -> Meters:
        """The meters of journal ``records`` (dicts with ``type`` and ``data``, in seq order), up to and
        including seq ``upto`` (None: all)."""
        meters = cls()
        for record in records:
            if upto is not None and record.get("seq", 0) > upto:
                break
            meters.feed(str(record.get("type")), record.get("data") or {})
        return meters

    def lifetime(self) -> dict[str, Any]:
        """The lifetime meters as JSON-ready data, ``drop`` and ``win`` included (module docstring)."""
        return _with_totals(self.counts)

    def test(self) -> dict[str, Any]:
        """The test meters (test rounds only) as ``lifetime`` gives the lifetime ones, without ``rounds_test``."""
        out = _with_totals(self.test_counts)
        del out["rounds_test"]
        return out

    def since(self) -> dict[str, int]:
        """Rounds (closed, no-play or voided) since the service started and since the last shoe service."""
        return {"power_up": self.since_power_up, "shoe_service": self.since_shoe_service}

    def to_json(self) -> dict[str, Any]:
        """``{"lifetime": ..., "since": ..., "test": ...}``: what ``crisscross meters``, ``GET /meters`` and the
        floor show."""
        return {"lifetime": self.lifetime(), "since": self.since(), "test": self.test()}

    def checkpoint(self) -> dict[str, Any]:
        """The whole state for the round's checkpoint (``from_checkpoint`` restores it)."""
        return {"counts": _copy(self.counts), "since_power_up": self.since_power_up,
                "since_shoe_service": self.since_shoe_service, "shoe_id": self.shoe_id,
                "test_counts": _copy(self.test_counts), "in_test": self.in_test}

    @classmethod
    def from_checkpoint(cls, state: dict[str, Any]) -> Meters:
        """The meters of ``checkpoint()``'s output; a meter added later starts at 0. Raises ``KeyError``,
        ``TypeError`` or ``ValueError`` for data that is not a meters checkpoint."""
        meters = cls()
        _restore_counts(meters.counts, state["counts"], "counts")
        # a checkpoint written before test mode: no test round was played
        _restore_counts(meters.test_counts, state.get("test_counts", {}), "test_counts")
        meters.in_test = bool(state.get("in_test", False))
        meters.since_power_up = int(state["since_power_up"])
        meters.since_shoe_service = int(state["since_shoe_service"])
        meters.shoe_id = state.get("shoe_id")
        return meters

    # the feeders, one per record type read (``_FEEDERS``); each counts in ``_target``, the lifetime or the test
    # meters
    def _round_opened(self, data: dict[str, Any]) -> None:
        self.in_test = bool(data.get("test", False))

    def _seat_settled(self, data: dict[str, Any]) -> None:
        for name, result in data["settlement"]["wagers"].items():
            if name not in self._target["wagers"]:
                raise ValueError(f"meters: SeatSettled of seat {data.get('seat')}: unknown wager type {name!r}")
            meter = self._target["wagers"][name]
            amount, outcome = int(result["amount"]), result["outcome"]
            meter["wagered"] += amount
            if outcome == "win":
                meter["paid"] += int(result["net"])
            elif outcome == "lose":
                meter["taken"] += amount
            elif outcome == "push":
                meter["pushed"] += amount
            else:
                raise ValueError(f"meters: SeatSettled of seat {data.get('seat')}: unknown outcome {outcome!r}")

    def _round_ended(self) -> None:
        if self.in_test:  # a test round: only rounds_test of the lifetime meters moves
            self.counts["rounds_test"] += 1
            self.in_test = False
            return
        self.since_power_up += 1
        self.since_shoe_service += 1

    def _round_closed(self, data: dict[str, Any]) -> None:
        self._target["rounds_no_play" if int(data["totals"]["wagered"]) == 0 else "rounds_closed"] += 1
        self._round_ended()

    def _round_voided(self, data: dict[str, Any]) -> None:
        self._target["rounds_voided"] += 1
        self._round_ended()

    def _stack_dealt(self, data: dict[str, Any]) -> None:
        self._target["cards_dispensed"] += len(data["cards"])

    def _fault_raised(self, data: dict[str, Any]) -> None:
        causes = self._target["faults"].setdefault(data["device"] or CONTROLLER, {})
        causes[data["cause"]] = causes.get(data["cause"], 0) + 1

    def _irregularity(self, data: dict[str, Any]) -> None:
        if data["kind"] == "past_posting":
            self._target[_posting_kind(data["detail"])]["caught"] += 1

    def _acknowledged(self, data: dict[str, Any]) -> None:
        for item in data["items"]:
            self._target[_posting_kind(item)]["accepted"] += 1

    def _payout_checked(self, data: dict[str, Any]) -> None:
        if data["differences"]:
            self._target["mispays"]["caught"] += 1

    def _mispay_accepted(self, data: dict[str, Any]) -> None:
        mispays = self._target["mispays"]
        mispays["accepted"] += 1
        mispays["short"] += int(data["short"])
        mispays["over"] += int(data["over"])

    def _service_started(self, data: dict[str, Any]) -> None:
        self.since_power_up = 0

    def _device_fault(self, data: dict[str, Any]) -> None:
        if data["device"] == "shoe" and data["code"] == "door_open":
            self.since_shoe_service = 0

    def _device_ready(self, data: dict[str, Any]) -> None:
        if data["device"] != "shoe":
            return
        if self.shoe_id is not None and data["device_id"] != self.shoe_id:
            self.since_shoe_service = 0
        self.shoe_id = data["device_id"]


def _posting_kind(item: dict[str, Any]) -> str:
    """``past_posting`` for chips added after "no more bets", ``pinching`` for chips removed (NY 9 NYCRR
    5324.39(c)(3); the domain's words)."""
    return "pinching" if int(item["new"]) < int(item["locked"]) else "past_posting"


#: Meters added after the first records with meters were written (a snapshot or checkpoint of before has none).
ADDED_LATER: tuple[str, ...] = ("test.", "test_counts.", "in_test", "lifetime.rounds_test", "counts.rounds_test")


def _added_later(name: str) -> bool:
    return name.startswith(ADDED_LATER)


def _with_totals(counts: dict[str, Any]) -> dict[str, Any]:
    """``counts`` as JSON-ready data with ``drop`` and ``win`` (module docstring)."""
    out = {key: _copy(value) for key, value in counts.items()}
    wagers = counts["wagers"].values()
    out["drop"] = sum(w["wagered"] for w in wagers)
    out["win"] = sum(w["taken"] - w["paid"] for w in wagers)
    return out


def _restore_counts(into: dict[str, Any], counts: Any, name: str) -> None:
    """Set the meters ``into`` (``_fresh()``'s shape) to a checkpoint's ``counts``; a meter added later stays 0.
    Raises ``TypeError``/``ValueError`` naming ``name`` for data that is not meters."""
    if not isinstance(counts, dict):
        raise TypeError(f"meters checkpoint: {name} is {type(counts).__name__}, not an object")
    for key, value in counts.items():
        if key not in into:
            raise ValueError(f"meters checkpoint: unknown meter {key!r} in {name}")
        if isinstance(into[key], dict) and key != "faults":
            for inner, amount in value.items():
                target = into[key][inner]
                if isinstance(target, dict):
                    target.update({k: int(v) for k, v in amount.items()})
                else:
                    into[key][inner] = int(amount)
        else:
            into[key] = _copy(value)


def _copy(value: Any) -> Any:
    return {k: _copy(v) for k, v in value.items()} if isinstance(value, dict) else value


_FEEDERS = {
    "RoundOpened": Meters._round_opened, "SeatSettled": Meters._seat_settled, "RoundClosed": Meters._round_closed,
    "RoundVoided": Meters._round_voided,
    "StackDealt": Meters._stack_dealt, "FaultRaised": Meters._fault_raised, "Irregularity": Meters._irregularity,
    "PastPostingAcknowledged": Meters._acknowledged, "PayoutChecked": Meters._payout_checked,
    "MispayAccepted": Meters._mispay_accepted, "ServiceStarted": Meters._service_started,
    "DeviceFault": Meters._device_fault, "DeviceReady": Meters._device_ready,
}


def flatten(meters: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Each meter of ``to_json()``'s output (or a part of it) as ``(dotted name, value)``, in order."""
    for key, value in meters.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from flatten(value, name + ".")
        else:
            yield name, value


def first_difference(expected: dict[str, Any], found: dict[str, Any]) -> str | None:
    """The dotted name of the first meter where ``found`` differs from ``expected`` (a meter missing on either
    side differs, but for a fault count of 0 and a meter still at 0 that ``found`` was written before: the test
    meters, ``rounds_test``), with both values; None when they agree."""
    left, right = dict(flatten(expected)), dict(flatten(found))
    for name in list(left) + [n for n in right if n not in left]:
        a, b = left.get(name), right.get(name)
        if name not in right and not a and _added_later(name):
            continue
        if a != b and not (name.startswith("faults.") and not a and not b):
            return f"{name}: {a} recomputed from the records, {b} recorded"
    return None
