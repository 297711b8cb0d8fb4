"""Inputs of the round machine that do not come from a device: the service's start and people's actions.

Like the device events of ``drivers.events``, each is a frozen dataclass of plain data, journaled (kind
``event``) before the round machine applies it, and replayed from the journal after a restart
(``input_from_record``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from drivers.events import BUTTONS, EVENT_TYPES, event_from_record

#: People at the table, in order of authority. A supervisor may do everything a dealer may.
ROLES: tuple[str, ...] = ("dealer", "supervisor")

#: Actions that need a supervisor (the panel's supervisor key, or supervisor credentials on the control
#: interface): acknowledging past-posting, clearing a fault, voiding a round.
SUPERVISOR_ACTIONS: frozenset[str] = frozenset({"acknowledge", "clear_fault", "void_round"})

#: Every action a person can take; the same names as the panel's buttons.
ACTIONS: tuple[str, ...] = BUTTONS


@dataclass(frozen=True)
class ServiceStarted:
    """The service (re)started: devices must answer their handshakes again and the shoe is asked what it last
    dispensed before anything else. A round that was in progress is held in the fault state (cause
    ``restart``) until a supervisor clears it or voids it."""


@dataclass(frozen=True)
class OperatorAction:
    """An action from the control interface: ``action`` (one of ``ACTIONS``) by ``user`` acting as ``role``
    (one of ``ROLES``; the interface checked the credentials), with a ``reason`` (required to void)."""

    action: str
    user: str
    role: str
    reason: str = ""


INPUT_TYPES: dict[str, type] = {**EVENT_TYPES, "ServiceStarted": ServiceStarted, "OperatorAction": OperatorAction}


def input_from_record(record: dict[str, Any]) -> Any:
    """Rebuild a journaled input from ``{"type": name, **fields}``: a device event or one of this module's.

    Raises ``ValueError`` naming the type when it is unknown or its fields do not match.
    """
    name = record.get("type")
    cls = {"ServiceStarted": ServiceStarted, "OperatorAction": OperatorAction}.get(name)  # type: ignore[arg-type]
    if cls is None:
        return event_from_record(record)
    fields = {k: v for k, v in record.items() if k != "type"}
    try:
        return cls(**fields)
    except TypeError as exc:
        raise ValueError(f"bad fields for {name}: {exc}") from None
