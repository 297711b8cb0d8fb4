"""Inputs of the round machine that do not come from a device: the service's start, people's actions, the
hole-card detector's alerts (``controller.round.alerts.Alert``) and the outcome of the journal store's check
(``controller.journal.check``).

Like the device events of ``drivers.events``, each is a frozen dataclass of plain data, journaled (kind
``event``) before the round machine applies it, and replayed from the journal after a restart
(``input_from_record``).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from controller.round.alerts import ACKNOWLEDGE_ALERT, Alert, DetectorChecked
from drivers.events import BUTTONS, EVENT_TYPES, event_from_record

#: People at the table, in order of authority. A supervisor may do everything a dealer may.
ROLES: tuple[str, ...] = ("dealer", "supervisor")

#: The actions of the table's locks and test mode (``controller.round.table_locks``; NY 9 NYCRR 5319.54(b),
#: 5319.58): supervisors only, on the control interface (the panel has no key for them).
TABLE_ACTIONS: tuple[str, ...] = ("disable_table", "enable_table", "enter_test_mode", "leave_test_mode")

#: Actions that need a supervisor (the panel's supervisor key, or supervisor credentials on the control
#: interface): acknowledging past-posting, clearing a fault, voiding a round, accepting a payout that differs
#: from the settlement (a mispay, controller.game.payout), switching the dealing mode, holding a seat whose cards
#: cannot be entered (NY 9 NYCRR 5324.39(d)(1), ``controller.round.manual``), acknowledging a hole-card alert
#: (``controller.round.alerts``) and the table's locks and test mode (``TABLE_ACTIONS``).
SUPERVISOR_ACTIONS: frozenset[str] = frozenset({"acknowledge", "clear_fault", "void_round", "accept_mispay",
                                                "deal_by_hand", "deal_by_shoe", "hold_seat", ACKNOWLEDGE_ALERT,
                                                *TABLE_ACTIONS})

#: Every action a person can take: the panel's buttons, then ``TABLE_ACTIONS``.
ACTIONS: tuple[str, ...] = (*BUTTONS, *TABLE_ACTIONS)

#: Public reasons for voiding a round (docs/control.md, "Secrecy"): the supervisor's free text stays in the
#: journal, where a note such as "seat 4 Kd exposed" may be written; displays and the event stream show the code.
VOID_CODES: tuple[str, ...] = ("misdeal", "device", "dispute", "other")

#: Public reasons for disabling the table (``disable_table``, ``TableDisabled.code``; NY 9 NYCRR 5319.54(b)):
#: the free text stays in the journal.
DISABLE_CODES: tuple[str, ...] = ("closed", "count", "maintenance", "dispute", "other")

#: The actions that need a public reason code, and the codes each takes (``OperatorAction.code``).
ACTION_CODES: dict[str, tuple[str, ...]] = {"void_round": VOID_CODES, "disable_table": DISABLE_CODES}

#: Longest free-text reason a person's decision is journaled with (characters): an action's ``reason`` on the
#: control interface, a supervisor's ``--reason`` of ``crisscross journal add-key`` / ``reanchor``.
MAX_REASON = 200
#: The name of a person journaled as ``by``: a user name of the control interface (``controller.control.
#: operators``): letters, digits, ``.``, ``_``, ``-``; no ``:`` (HTTP Basic separates user and password by it).
USER_NAME = re.compile(r"[A-Za-z0-9._-]{1,40}")


def reason_refused(reason: object) -> bool:
    """Whether ``reason`` may not be journaled as a person's free-text reason: not text, longer than
    ``MAX_REASON`` characters, or not one line of printable characters (``str.isprintable``: no newline, tab or
    control character). The rule of every reason journaled (docs/control.md, "Actions")."""
    return not isinstance(reason, str) or len(reason) > MAX_REASON or not reason.isprintable()


@dataclass(frozen=True)
class ServiceStarted:
    """The service (re)started: devices must answer their handshakes again and the shoe is asked what it last
    dispensed before anything else. A round that was in progress is held in the fault state (cause
    ``restart``) until a supervisor clears it or voids it.

    For the record (the round machine does not read them): ``mode`` (``table``, or ``simulated`` under
    ``--simulate``), the software ``version``, the ``config`` file in use and ``devices``, each device's port as
    configured (``simulator`` for a simulated one; the identity each answered is in its ``DeviceReady``),
    ``config_sha256`` the configuration's hash and ``software`` the software identity's digest
    (``controller.service.significance``; ``""`` in records written before they were kept); ``table`` the table's id
    (table.yaml ``table_id``): a table's journal holds one table's rounds, and a start under another id is
    refused (``controller.service.opening.check_kept_for``; ``""`` in records written before it was kept)."""

    mode: str = ""
    version: str = ""
    config: str = ""
    devices: dict[str, str] = field(default_factory=dict)
    config_sha256: str = ""
    software: str = ""
    table: str = ""


@dataclass(frozen=True)
class OperatorAction:
    """An action from the control interface: ``action`` (one of ``ACTIONS``) by ``user`` acting as ``role``
    (one of ``ROLES``; the interface checked the credentials), with a free-text ``reason`` (journal only) and a
    public ``code`` (required of the actions of ``ACTION_CODES``, one of their codes: ``VOID_CODES`` to void,
    ``DISABLE_CODES`` to disable the table).

    The round guard (docs/control.md): ``round`` and ``state``, when given, are the round number and state the
    person decided on (as ``GET /state`` showed them); the round machine refuses the action when either no
    longer matches, so a stale action never changes the round that followed. ``stale`` is set by the interface
    when it already saw the mismatch (and answered 409): the action is journaled and refused with that text.
    ``answers``: for an action that answers something (``ANSWERING``), the number of what the person examined
    (``/state`` ``answers``, ``Round.answers``); a different number is stale too (``stale_answer``).
    """

    action: str
    user: str
    role: str
    reason: str = ""
    code: str = ""
    round: int | None = None
    state: str | None = None
    stale: str = ""
    answers: int | None = None


def stale_reason(round_no: int | None, state: str | None, current_round: int | None, current_state: str | None) -> str:
    """Why an action decided on round ``round_no`` in ``state`` (each None: not named) must not apply to the table
    now in ``current_round``/``current_state``; ``""`` when it may (docs/control.md, "The round guard"). The one
    rule, used by the control interface (409) and by the round machine (``PressRefused``)."""
    if round_no is not None and round_no != current_round:
        now = "none yet" if current_round is None else f"{current_round} ({current_state})"
        return f"stale: the action names round {round_no}; the current round is {now}"
    if state is not None and state != current_state:
        return f"stale: the action names state {state}; round {current_round} is in {current_state}"
    return ""


#: Actions that answer something the round raised, and name it by number (``OperatorAction.answers``): a fault
#: (``clear_fault``), past-posting (``acknowledge``), a payout reading that differed (``accept_mispay``).
ANSWERING: tuple[str, ...] = ("clear_fault", "acknowledge", "accept_mispay")


def stale_answer(action: str, answers: int | None, current: dict[str, int]) -> str:
    """Why ``action`` naming ``answers`` (None: not named) must not apply now that the round's ``current``
    answers are these (``Round.answers``, ``/state`` ``answers``); ``""`` when it may. The one rule, used by the
    control interface (409) and by the round machine (``PressRefused``): a clearance retried after its fault was
    cleared never clears a later fault (docs/control.md, "The round guard")."""
    if answers is None or action not in ANSWERING or current.get(action) == answers:
        return ""
    now = current.get(action)
    return (f"stale: the action answers {answers}; {action} answers "
            + ("nothing now" if now is None else f"{now} now"))


@dataclass(frozen=True)
class PromptDue:
    """A refusal has been on the panel for ``controller.service.loop.REFUSAL_SHOWN_S`` seconds: the panel shows the
    prompt of the current state again (``Round.prompt``). Time reaches the pure round machine only as inputs."""


@dataclass(frozen=True)
class JournalDamaged:
    """The check of the whole journal store after the start (``controller.journal.check``, SQLite's ``PRAGMA
    quick_check``) found it damaged: ``detail`` is the check's first lines, at most
    ``controller.journal.check.MAX_DETAIL`` characters. The round in progress, if any, goes on and settles (its
    records were read whole at the start); no new round opens (the ``journal_whole`` condition of
    ``open_betting`` in ``controller.round.graph``) until a start's check finds the store whole (``JournalWhole``).
    The record regulators look for: the journal is damaged, and since when the table knew it."""

    detail: str


def roster_sha256(operators: tuple[tuple[str, str], ...]) -> str:
    """SHA-256 (hex) of ``operators`` (``(name, role)`` pairs, sorted) as canonical JSON, a list of ``[name,
    role]``: equal for equal rosters (``OperatorsChanged``)."""
    text = json.dumps([list(pair) for pair in operators], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class OperatorsChanged:
    """The operators file (who may act on the control interface, and as what: docs/control.md) read with other
    operators or roles than before: ``operators`` every ``(name, role)`` now, sorted; ``sha256`` their digest
    (``roster_sha256``), ``previous`` the one before (``""``: none known). Put on the
    queue by the control interface when it reads the file again; journaled by the service as its own record, with
    its significant event (1007), never given to the round machine: who may act is the interface's, not the
    round's (``controller.service.loop``). A start finding the file changed since the last one journals it too
    (``controller.service.significance.start_records``)."""

    operators: tuple[tuple[str, str], ...]
    sha256: str
    previous: str


@dataclass(frozen=True)
class JournalWhole:
    """A start's check found the store whole again after a ``JournalDamaged`` kept by the round machine (the
    store was restored): the table may open rounds again. Queued only then (a whole store that was never found
    damaged journals nothing)."""


#: The actions on a seat's rated session (docs/rating.md): attach a player's id to the seat's session (a player
#: whose session is open at another seat moves there with it), take it off, end the session now. A dealer's or a
#: supervisor's, on the control interface (``POST /sessions``); the panel has no keys for them.
RATING_ACTIONS: tuple[str, ...] = ("rate_seat", "unrate_seat", "end_session")


@dataclass(frozen=True)
class SeatRating:
    """A rating action (one of ``RATING_ACTIONS``) on ``seat`` by ``user`` as ``role``: ``player`` the id given
    with ``rate_seat`` (``""`` otherwise). Journaled like every input, public (an id and a seat, never a card);
    the round machine changes nothing for it: the sessions are read from the journal
    (``controller.journal.sessions``)."""

    action: str
    seat: int
    player: str
    user: str
    role: str


@dataclass(frozen=True)
class SessionRated:
    """A seat session's rating from the service's rating worker (``controller.service.rating_live``): handed in
    when the session ends (``ended``) and every few rounds while it goes on, journaled like every input, public
    (figures only: no card, ever) and published on the floor's ``sessions`` topic. The round machine changes
    nothing for it. ``player``: the id attached to the session (``SeatRating``; ``""`` for none). Amounts in
    minor units, the house's: ``handle`` per wager, ``actual_win``, ``theoretical_win``
    exact as ``"p/q"`` (``controller.analysis.rating``), ``conventional_win`` and the standard errors of the
    actual and theoretical totals rounded to whole minor units (-1: none, a session of one round);
    ``played_ms`` the session's playing time. ``first_round``..``last_round``: its rounds with wagers, ``rounds``
    of them."""

    seat: int
    player: str
    first_round: int
    last_round: int
    rounds: int
    played_ms: int
    handle: dict[str, int]
    actual_win: int
    theoretical_win: str
    conventional_win: int
    actual_standard_error: int
    theoretical_standard_error: int
    ended: bool


#: The inputs of this module by name (``input_from_record``).
OWN_INPUTS: dict[str, type] = {"ServiceStarted": ServiceStarted, "OperatorAction": OperatorAction,
                               "PromptDue": PromptDue, "Alert": Alert,
                               "DetectorChecked": DetectorChecked, "JournalDamaged": JournalDamaged,
                               "JournalWhole": JournalWhole, "SessionRated": SessionRated,
                               "SeatRating": SeatRating}

INPUT_TYPES: dict[str, type] = {**EVENT_TYPES, **OWN_INPUTS}


def input_from_record(record: dict[str, Any]) -> Any:
    """Rebuild a journaled input from ``{"type": name, **fields}``: a device event or one of this module's.

    Raises ``ValueError`` naming the type when it is unknown or its fields do not match.
    """
    name = record.get("type")
    cls = OWN_INPUTS.get(name)  # type: ignore[arg-type]
    if cls is None:
        return event_from_record(record)
    fields = {k: v for k, v in record.items() if k != "type"}
    try:
        return cls(**fields)
    except TypeError as exc:
        raise ValueError(f"bad fields for {name}: {exc}") from None
