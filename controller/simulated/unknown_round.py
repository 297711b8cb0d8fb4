"""A round the simulated table finds in progress when it starts: the service kept it from an earlier run (stopped
mid-round, or crashed), and these simulated people know neither its players nor its cards. The supervisor ends it
as a supervisor ends a round nobody can finish at a real table (docs/architecture.md, "Crash recovery"; "Dealing
by hand when the shoe is down"):

- voided (``void_round``) while it may be: every wager of record returned;
- past that (its settlement begun), finished: a seat whose cards are awaited in a round dealt by hand is held
  (``hold_seat``: its cards cannot be entered, its wagers left to the supervisor, NY 9 NYCRR 5324.39(d)(1),
  ``controller.round.manual``), each seat named for its payout is marked paid and what the sensors read is accepted
  (``accept_mispay``: a mispay on record with the amounts; this dealer cannot pay by its own reckoning).

The supervisor acts only on what the panel shows, and comes back when the panel changed since it left, or after
``UNKNOWN_ROUND_AGAIN_S`` of a panel unchanged: a visit every few seconds at most, never a storm of records.
"""

from __future__ import annotations

import time

from controller.round.inputs import SUPERVISOR_ACTIONS

#: The supervisor's presses that end a round nobody here can finish, the first lit taken.
ENDING_ACTIONS: tuple[str, ...] = ("void_round", "accept_mispay", "hold_seat", "paid")

#: How long the panel shows a round in progress before the supervisor comes (seconds): the other supervisor may be
#: clearing the fault the restart raised (``SimulatedTable._supervise``).
UNKNOWN_ROUND_QUIET_S = 1.5

#: How long a panel left unchanged keeps the supervisor away (seconds): then it comes again all the same, so that a
#: round is never left open for good on a press lost or a lamp read too early; a visit every so long, no storm.
UNKNOWN_ROUND_AGAIN_S = 5.0

#: How long the supervisor, the key just turned, waits for a lamp only a key holder may press (seconds): the
#: controller lights them once it took the key, within milliseconds; a round with nothing for the key lights none.
KEY_LAMPS_S = 1.0

#: How long the supervisor looks for the lamps of a commit whose text came (seconds): the controller sends both
#: back to back (``controller.service.loop``), so the lamps follow within milliseconds if they change at all.
LAMPS_AFTER_TEXT_S = 0.2


class UnknownRound:
    """The ending of a round found in progress, for ``SimulatedTable`` (a mixin: it uses the table's ``panel``,
    ``supervisor_id``, ``supervisor_actions``, ``_stop`` and ``_act``)."""

    def _void_unknown_round(self) -> None:
        """At the first round: until ``open_betting`` lights, a panel showing something for
        ``UNKNOWN_ROUND_QUIET_S`` brings the supervisor, who turns the key and ends the round in progress
        (``_end_unknown_round``), then leaves; it comes again once the panel changed from how it left it, or after
        ``UNKNOWN_ROUND_AGAIN_S`` of a panel unchanged."""
        seen_since: float | None = None
        left: tuple[frozenset[str], str] | None = None  # the panel as the supervisor left it
        left_at = 0.0
        while not self._stop.is_set() and "open_betting" not in self.panel.lamps:
            panel = (self.panel.lamps, self.panel.display)
            if panel == left and time.monotonic() - left_at > UNKNOWN_ROUND_AGAIN_S:
                left = None  # nothing changed for long: the supervisor looks again (a press lost, a lamp missed)
            if panel == left or not (panel[0] or panel[1]):  # nothing new, or nothing shown yet
                seen_since = None
            else:
                seen_since = seen_since or time.monotonic()
                if time.monotonic() - seen_since > UNKNOWN_ROUND_QUIET_S:
                    self._turn_key_on()
                    try:
                        self._end_unknown_round()
                    finally:
                        self._act(self.panel.turn_key, False, self.supervisor_id)
                    # what the key showed goes out once the controller saw it off: the panel as left is after that
                    self.panel.wait_for(lambda: not self.panel.lamps & SUPERVISOR_ACTIONS, 1.0)
                    left, seen_since, left_at = (self.panel.lamps, self.panel.display), None, time.monotonic()
            self.panel.wait_for(lambda: "open_betting" in self.panel.lamps
                                or (self.panel.lamps, self.panel.display) != panel, 0.2)

    def _turn_key_on(self) -> None:
        """Turn the key and read the panel once the controller lit what a key holder may press (at most
        ``KEY_LAMPS_S``): the lamps read before are the dealer's, and the dealer's ``paid`` pressed where
        ``accept_mispay`` was about to light has the seat read again, which shows the same mispay again, round
        after round of the supervisor's visits."""
        self._act(self.panel.turn_key, True, self.supervisor_id)
        self.panel.wait_for(lambda: bool(self.panel.lamps & SUPERVISOR_ACTIONS), KEY_LAMPS_S)

    def _end_unknown_round(self) -> None:
        """With the key turned: press the first of ``ENDING_ACTIONS`` lit, again as the round goes on (the next
        seat held or paid), until none lights within 2 s or betting opens. A press that changed the panel is not
        repeated on the same panel (a refusal is not pressed again and again); one that changed nothing was lost
        and is pressed again. The key is turned again should the other supervisor have turned it off."""
        answered: tuple[str, frozenset[str], str] | None = None
        while not self._stop.is_set() and "open_betting" not in self.panel.lamps:
            if self.panel.key is None:
                self._turn_key_on()
            lamps, text = self.panel.lamps, self.panel.display
            action = next((a for a in ENDING_ACTIONS if a in lamps), None)
            if action is None or (action, lamps, text) == answered:
                if not self.panel.wait_for(lambda: (self.panel.lamps, self.panel.display) != (lamps, text), 2.0):
                    return
                continue
            before = (lamps, self.panel.messages)
            self._act(self.panel.press, action)
            self.supervisor_actions[action] = self.supervisor_actions.get(action, 0) + 1
            changed = self.panel.wait_for(lambda: (self.panel.lamps, self.panel.messages) != before, 1.0)
            # the text of a commit comes just before its lamps: a lamp still lit is read once they came, or did not
            self.panel.wait_for(lambda: self.panel.lamps != lamps, LAMPS_AFTER_TEXT_S if changed else 0.0)
            answered = (action, lamps, text) if changed else None
