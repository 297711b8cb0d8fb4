"""The catalogue of significant events (NY 9 NYCRR 5317.26): which journal record is which event.

Each event has a stable numeric ``Code`` (never reused or renumbered: a floor system or a regulator's report keys on
it), a name, a severity and what a person must do. ``code_of(record_type, data)`` says which event a journal
record is, or None for a record that is no significant event; it is a pure function of the record (the service
journals the ``SignificantEvent`` record for it: ``controller.service.significance``). docs/events.md lists the
same table; tests/test_significant_events.py checks the two against each other and that every code is raised.

Severities: ``tilt``, the table stops (a fault holds the round or no round opens) until a person acts;
``error``, the table goes on but a person must look into it; ``information``, for the record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The journal record a significant event is journaled as (kind ``record``, written by the service).
SIGNIFICANT_EVENT = "SignificantEvent"
#: The severities, from the most to the least urgent.
SEVERITIES: tuple[str, ...] = ("tilt", "error", "information")


@dataclass(frozen=True)
class Code:
    """One significant event: ``number`` (stable), ``name`` (words, lower case), ``severity`` (one of
    ``SEVERITIES``), ``action`` (what a person must do) and ``source`` (the journal record it comes from, as
    docs/events.md names it)."""

    number: int
    name: str
    severity: str
    action: str
    source: str


_SUPERVISOR_CLEARS = "a supervisor clears the fault once the cause is put right, or voids the round"

CATALOGUE: tuple[Code, ...] = (
    # the service and its host
    Code(1001, "service started", "information", "none", "ServiceStarted"),
    Code(1002, "service stopped", "information", "none", "ServiceStopped"),
    Code(1003, "power loss or crash seen at start", "error",
         "check the host's power and logs; a round in progress is held until a supervisor clears or voids it",
         "UncleanStopSeen"),
    Code(1004, "clock stepped", "error", "check the host's time source; the journal keeps both times",
         "ClockStepped"),
    Code(1005, "software identity changed", "error",
         "compare `crisscross identity` with the approved digest before play", "SoftwareChanged"),
    Code(1006, "configuration or pay table changed", "error",
         "check the configuration and the pay table against the approved ones", "ConfigurationChanged"),
    Code(1007, "operators changed", "error", "check every operator and role against the approved list of who may "
         "act, and as what", "OperatorsChanged"),
    # devices
    Code(2001, "device found", "information", "none", "DeviceReady"),
    Code(2002, "device replaced", "error", "check the device's serial number against the approved equipment",
         "DeviceReplaced"),
    Code(2003, "device lost", "tilt", "reconnect the device; " + _SUPERVISOR_CLEARS,
         "FaultRaised cause link_lost"),
    Code(2004, "device handshake failed", "tilt", "check the device is the one configured; " + _SUPERVISOR_CLEARS,
         "FaultRaised cause handshake"),
    Code(2005, "device flooding its link", "tilt", "inspect the device and its cable; " + _SUPERVISOR_CLEARS,
         "FaultRaised cause flooding"),
    Code(2006, "device did not answer", "tilt", "check the device; " + _SUPERVISOR_CLEARS,
         "FaultRaised cause timeout"),
    Code(2007, "device refused a request", "tilt", "a supervisor voids the round or clears once the device is reset",
         "FaultRaised cause protocol"),
    Code(2008, "optional device fault", "error", "check the card reader; the panel's keypad stands in",
         "Irregularity kind optional_device_fault"),
    # the shoe
    Code(3001, "shoe jam", "tilt", "clear the jam; " + _SUPERVISOR_CLEARS, "FaultRaised cause jam"),
    Code(3002, "shoe misfeed", "tilt", "clear the feed; " + _SUPERVISOR_CLEARS, "FaultRaised cause misfeed"),
    Code(3003, "card misread", "tilt", "inspect the card; " + _SUPERVISOR_CLEARS,
         "FaultRaised cause unreadable_card"),
    Code(3004, "shoe empty", "tilt", "load the deck; " + _SUPERVISOR_CLEARS, "FaultRaised cause empty"),
    Code(3005, "shoe door opened", "tilt", "close the door and account for the deck; " + _SUPERVISOR_CLEARS,
         "FaultRaised cause door_open"),
    Code(3006, "card count mismatch", "tilt", "count the deck; a supervisor voids the round",
         "FaultRaised cause card_count"),
    Code(3007, "stack of the wrong size", "tilt", "a supervisor voids the round", "FaultRaised cause stack_size"),
    Code(3012, "stack that does not parse", "tilt", "a supervisor voids the round and has the shoe inspected",
         "FaultRaised cause stack_malformed"),
    Code(3008, "shoe and journal disagree", "tilt", "a supervisor voids the round and has the shoe inspected",
         "FaultRaised cause shoe_mismatch"),
    Code(3009, "shoe restarted during a round", "tilt", "a supervisor voids the round: its deck is not trusted",
         "FaultRaised cause shoe_restarted"),
    Code(3010, "shoe restarted", "error", "check the shoe's power; its deck is shuffled again before a round locks",
         "Irregularity kind shoe_restarted"),
    Code(3011, "shoe door closed", "information",
         "none: the fault of the opening waits for a supervisor, who accounts for the deck", "ShoeDoorClosed"),
    # the round
    Code(4001, "fault cleared", "information", "none (the record names who cleared it)", "FaultCleared"),
    Code(4002, "round held by a restart", "tilt", "a supervisor clears the fault or voids the round",
         "FaultRaised cause restart"),
    Code(4003, "round voided", "error", "return every wager of record; note the reason", "RoundVoided"),
    Code(4004, "past-posting", "error", "a supervisor acknowledges it: the locked amounts stand",
         "Irregularity kind past_posting, chips added"),
    Code(4005, "pinching", "error", "a supervisor acknowledges it: the locked amounts stand",
         "Irregularity kind past_posting, chips taken"),
    Code(4006, "mispay accepted", "error", "review the payout with surveillance", "MispayAccepted"),
    Code(4007, "fault of another cause", "tilt", _SUPERVISOR_CLEARS, "FaultRaised of any other cause"),
    # the table's locks and test mode (controller.round.table_locks; NY 9 NYCRR 5319.54(b), 5319.58)
    Code(4008, "table disabled", "information", "none: no live round opens until a supervisor enables the table "
         "(the record names who and the reason code)", "TableDisabled"),
    Code(4009, "table enabled", "information", "none (the record names who)", "TableEnabled"),
    Code(4010, "test mode entered", "information",
         "none: the rounds are test rounds, shown TEST, counted in the test meters only", "TestModeEntered"),
    Code(4011, "test mode left", "information", "none (the record names who and the test rounds played)",
         "TestModeLeft"),
    # the journal and the controller
    Code(5001, "journal damaged", "tilt", "restore the journal store from its copy; no round opens until then",
         "JournalDamaged"),
    Code(5002, "journal whole again", "information", "none", "JournalWhole"),
    Code(5003, "controller defect", "tilt", "a supervisor voids the round; report the defect with the journal",
         "FaultRaised cause internal"),
    # a supervisor's admissions on the journal (``crisscross journal reanchor`` and ``add-key``)
    Code(5004, "journal anchor restored", "error", "review the inquiry the record names: the journal's end did not "
         "match its anchor (records cut, or the anchor lost) and was accepted as it stands", "AnchorRestored"),
    Code(5005, "journal key introduced", "error", "check the records before it against the journal's copy: they "
         "were kept without a key, and the key seals them as they stood", "JournalKeyIntroduced"),
)

#: The catalogue by number.
BY_NUMBER: dict[int, Code] = {code.number: code for code in CATALOGUE}
_BY_SOURCE: dict[str, Code] = {code.source: code for code in CATALOGUE}
#: Fault causes with a code of their own (``FaultRaised cause <cause>``); any other is 4007.
FAULT_CAUSES: frozenset[str] = frozenset(code.source.split()[-1] for code in CATALOGUE
                                         if code.source.startswith("FaultRaised cause "))


def code_of(record_type: str, data: Any) -> Code | None:
    """The significant event a journal record of type ``record_type`` with ``data`` (its ``data`` dict) is, or
    None. A ``FaultRaised`` is split by its ``cause``, an ``Irregularity`` by its ``kind`` (``past_posting``:
    chips added above the locked amount are past-posting, taken below it pinching; NY 5324.39(c)(3)). Data that
    is not a dict gives None for the record types that split by data."""
    if record_type == "FaultRaised":
        cause = data.get("cause") if isinstance(data, dict) else None
        if not isinstance(cause, str):
            return None
        return _BY_SOURCE[f"FaultRaised cause {cause}" if cause in FAULT_CAUSES else "FaultRaised of any other cause"]
    if record_type == "Irregularity":
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind == "past_posting":
            detail = data.get("detail") or {}
            added = isinstance(detail, dict) and detail.get("new", 0) > detail.get("locked", 0)
            return BY_NUMBER[4004 if added else 4005]
        return _BY_SOURCE.get(f"Irregularity kind {kind}")
    return _BY_SOURCE.get(record_type)
