"""The table's locks and test mode: every condition that keeps a round from opening, each named with its source,
priority, who set it and why (NY 9 NYCRR 5319.54(b): a supervisor may disable the table; the AGCO's Standards
for Gaming Equipment 11.1.3: the table disabled while a condition stands), and the test and diagnostic mode of NY
9 NYCRR 5319.58.

The locks, from the highest priority (1) to the lowest:
1. ``journal_damaged``: the journal store was found damaged (``JournalDamaged``); no round of any kind opens.
2. ``fault``: a device or the controller faulted (the ``fault`` state); no round opens until it is cleared.
3. ``self_check``: the devices have not all answered their handshakes since the start (``starting``), or one lost
   since has not answered again (its fault cleared, or its round voided, while it is away: a round opened then
   would lock wagers with no shoe to deal them).
4. ``disabled``: a supervisor's ``disable_table`` with a reason code (``controller.round.inputs.DISABLE_CODES``)
   until ``enable_table``; no live round opens. Test rounds may (a table disabled for maintenance is tested in
   test mode).
5. ``test_mode``: a supervisor's ``enter_test_mode`` until ``leave_test_mode``; no live round opens, the rounds
   opened are test rounds (``RoundOpened.test``): the panel and the screen show TEST, only the test meters move
   (``controller.round.meters``) and the floor's messages carry ``test: true``. ``leave_test_mode`` during a test
   round (``TestModeLeaving``) leaves test mode once that round ends, so that a supervisor need not find the
   moment between two rounds of a dealer who opens the next at once (a disabled table plays test rounds).

``table_locks()`` lists those standing now (``/state`` ``locks``); ``opening_locks()`` those that keep the next
round from opening, and ``table_open()`` (none) is the one condition of the graph's ``open_betting``
(``controller.round.graph``). The panel shows the highest opening lock between rounds. ``disabled`` and
``test_mode`` are kept in the round's checkpoint and rebuilt by replaying the journal: they survive restarts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from controller.round import commands as cmd
from controller.round.data import Actor
from controller.round.graph import BETWEEN_ROUNDS, DEVICES
from controller.round.inputs import TABLE_ACTIONS
from controller.round.view import JOURNAL_DAMAGED_TEXT, panel_text

#: What a lock keeps from opening: every round, or live rounds only (test rounds may open).
EVERY_ROUND, LIVE_ROUNDS = "every round", "live rounds"

#: The prefix of every text the panel shows in test mode (NY 9 NYCRR 5319.58: test mode is shown at all times).
TEST_MARK = "TEST "


@dataclass(frozen=True)
class TableLock:
    """One lock: ``name`` (``journal_damaged``, ``fault``, ``self_check``, ``disabled``, ``test_mode``),
    ``priority`` (1 the highest), ``source`` (``journal check``, a device's name or ``controller``,
    ``start-up``, ``supervisor``), ``set_by`` (who set it; ``""`` when the table did), ``reason`` (public: a code
    or a cause, never free text), ``keeps`` (``EVERY_ROUND`` or ``LIVE_ROUNDS`` from opening) and ``text``
    (what the panel shows for it)."""

    name: str
    priority: int
    source: str
    set_by: str
    reason: str
    keeps: str
    text: str

    def to_json(self) -> dict[str, Any]:
        """The lock as ``/state`` lists it (every field)."""
        return asdict(self)


class TableLocks:
    """The locks and test mode of ``controller.round.machine.Round`` (a mixin: it uses the round's state and
    helpers; its fields ``disabled`` and ``test_mode`` are in ``Round.__init__``)."""

    def table_locks(self) -> tuple[TableLock, ...]:
        """The locks standing now, highest priority first (module docstring)."""
        locks = []
        if self.journal_damage is not None:
            locks.append(TableLock("journal_damaged", 1, "journal check", "", "journal damaged", EVERY_ROUND,
                                   JOURNAL_DAMAGED_TEXT))
        if self.state == "fault" and self.faults:
            first = self.faults[0]
            locks.append(TableLock("fault", 2, first.device or "controller", "", first.cause, EVERY_ROUND,
                                   f"Fault: {first.cause}"))
        lost = [device for device in DEVICES if device not in self.devices_ready
                and not (device == "shoe" and self.dealing_by_hand())]  # a table dealing by hand needs no shoe
        if self.state == "starting":
            locks.append(TableLock("self_check", 3, "start-up", "", "devices not all answered", EVERY_ROUND,
                                   "Waiting for the devices"))
        elif lost and self.state != "fault":  # lost and not back: a fault cleared or its round voided meanwhile
            locks.append(TableLock("self_check", 3, lost[0], "", f"{lost[0]} not answering", EVERY_ROUND,
                                   f"Waiting for the {lost[0]}"))
        if self.disabled is not None:
            code = self.disabled["code"]
            locks.append(TableLock("disabled", 4, "supervisor", self.disabled["by"], code, LIVE_ROUNDS,
                                   f"Table disabled: {code}"))
        if self.test_mode is not None:  # a leave asked during the round says so until the round ends
            reason = "test mode, left when this round ends" if self.leaving_test_mode() else "test mode"
            locks.append(TableLock("test_mode", 5, "supervisor", self.test_mode["by"], reason, LIVE_ROUNDS,
                                   "Test mode"))
        return tuple(locks)

    def opening_locks(self) -> tuple[TableLock, ...]:
        """The locks that keep the next round from opening: every lock for a live round; in test mode, those that
        keep every round (a disabled table may play test rounds)."""
        return tuple(lock for lock in self.table_locks()
                     if lock.keeps == EVERY_ROUND or self.test_mode is None)

    def table_open(self) -> bool:
        """True when no lock keeps the next round from opening: the one condition of ``open_betting``
        (``controller.round.graph``)."""
        return not self.opening_locks()

    def table_disabled(self) -> bool:
        """True while a supervisor's ``disable_table`` stands: the condition of ``enable_table``."""
        return self.disabled is not None

    def in_test_mode(self) -> bool:
        """True in test mode: the condition of ``leave_test_mode``."""
        return self.test_mode is not None

    def leaving_test_mode(self) -> bool:
        """True when a supervisor asked to leave test mode during the test round in progress (``TestModeLeaving``):
        it is left once that round ends; asked again, the graph refuses it."""
        return self.test_mode is not None and "leaving" in self.test_mode

    def on_panel(self, text: str) -> str:
        """``text`` as the panel shows it now: marked ``TEST_MARK`` in test mode (NY 9 NYCRR 5319.58)."""
        if self.test_mode is None or text.startswith(TEST_MARK):
            return text
        return panel_text(TEST_MARK + text)

    def _table_actions(self) -> tuple[str, ...]:
        """The actions of ``TABLE_ACTIONS`` the graph allows now (its ``may_`` answers: the one rule)."""
        return tuple(action for action in TABLE_ACTIONS if getattr(self, f"may_{action}")())

    def _table_refusal(self, action: str) -> str:
        """Why the graph refuses ``action`` (one of ``TABLE_ACTIONS``) now, in words a supervisor acts on."""
        if action == "disable_table":
            return f"the table is already disabled ({self.disabled['code']}): enable_table first"
        if action == "enable_table":
            return "the table is not disabled"
        if action == "enter_test_mode" and self.test_mode is not None:
            return "the table is already in test mode"
        if action == "leave_test_mode" and self.test_mode is None:
            return "the table is not in test mode"
        if action == "leave_test_mode" and self.leaving_test_mode():
            return (f"the table leaves test mode once round {self.round_no} ends "
                    f"(asked by {self.test_mode['leaving']['by']})")
        if action == "leave_test_mode":  # in a fault with no round open
            return f"test mode is left between rounds or during a test round, not in {self.state}"
        # a table that opens its next round at once (a dealer who never waits) has no time between rounds to take:
        # a disabled table opens no live round and plays test rounds only in test mode
        hold = "" if self.disabled is not None else " (disable_table first: the next round then waits)"
        return (f"test mode is entered between rounds only; round {self.round_no} is in {self.state}{hold}"
                if self.round_open() else f"test mode is entered between rounds only, not in {self.state}")

    def _lock_text(self) -> str | None:
        """The text of the highest lock that keeps the next round from opening, or None."""
        locks = self.opening_locks()
        return locks[0].text if locks else None

    def _disable_table(self, actor: Actor, reason: str, code: str) -> None:
        self.disable_table()
        self.disabled = {"code": code or "other", "by": actor.name, "role": actor.role}
        self._emit(cmd.TableDisabled(self.round_no, self.disabled["code"], actor.name, actor.role, reason))
        self._show_locks()

    def _enable_table(self, actor: Actor, reason: str) -> None:
        self.enable_table()
        code, self.disabled = self.disabled["code"], None
        self._emit(cmd.TableEnabled(self.round_no, code, actor.name, actor.role, reason))
        self._show_locks()

    def _enter_test_mode(self, actor: Actor, reason: str) -> None:
        self.enter_test_mode()
        self.test_mode = {"by": actor.name, "role": actor.role, "from_round": self.last_round_no}
        self._emit(cmd.TestModeEntered(self.round_no, actor.name, actor.role, reason))
        self._show_locks()

    def _leave_test_mode(self, actor: Actor, reason: str) -> None:
        self.leave_test_mode()
        if self.round_open():  # the graph took it during a test round: left once the round ends
            self.test_mode["leaving"] = {"by": actor.name, "role": actor.role, "reason": reason}
            self._emit(cmd.TestModeLeaving(self.round_no, actor.name, actor.role, reason))
            return
        self._test_mode_left(actor.name, actor.role, reason)
        self._show_locks()

    def _round_ended(self) -> None:
        """At a round's end, once its ``RoundClosed`` or ``RoundVoided`` is emitted and before the text between
        rounds is shown: the test mode a supervisor asked to leave during it (``TestModeLeaving``) is left, in
        that supervisor's name."""
        if self.leaving_test_mode():
            asked = self.test_mode["leaving"]
            self._test_mode_left(asked["by"], asked["role"], asked["reason"])

    def _test_mode_left(self, by: str, role: str, reason: str) -> None:
        rounds = self.last_round_no - self.test_mode["from_round"]
        self.test_mode = None
        self._emit(cmd.TestModeLeft(self.round_no, rounds, by, role, reason))

    def _show_locks(self) -> None:
        """Between rounds, the panel shows what a lock change leaves: the highest opening lock, or ready. During
        a round the state's prompt stays; the lock shows once the round has ended."""
        if self.state in BETWEEN_ROUNDS:
            self._show(self._lock_text() or "Table ready")
