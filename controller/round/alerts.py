"""Hole-card alerts at the table: what the dealer's panel shows of them, to whom, and their acknowledgement.

Part of the round core (``controller.round``; no I/O, no clock, nothing from the service, HTTP, the simulators
or NumPy): the hole-card detector (``controller.service.protection``, ``controller.analysis.protect``) hands the round
machine each ``Alert`` as an input, journaled and replayed like any other; the handlers here are mixed into
``Round`` (``AlertDesk``) and their state is in ``Round.checkpoint``/``Round.restore``.

The rules (one place each):
- what an alert may say: a seat, the player's id when the player is rated, a kind of card (``middle``,
  ``across``, ``down``: never a card) and figures (``alert_problem`` refuses anything else; ``alert_text`` is its
  panel line). It is raised after the round
  closed, when every card of it is face up or in the discard rack (game protection: domain.md).
- who sees it on the panel (``panel_for_supervisor``): only while the supervisor key is turned. With the key
  turned and alerts waiting, the panel shows the oldest alert and lights ``acknowledge_alert`` until a supervisor
  acknowledges it (then the next one, or the round's own text and lamps again); with the key off the panel shows
  nothing of alerts, to players and dealer alike (the dealer's handling is what a hole-carder exploits).
- who acknowledges: a supervisor (``acknowledge_alert`` with the key turned, or a supervisor on the control
  interface), one alert at a time, oldest first; journaled as ``AlertAcknowledged`` with who and through what
  (the journal record's ``time`` says when). A dealer's press is refused as any supervisor button is, whether an
  alert waits or not, so that pressing it tells the dealer nothing. What such a record's data is, for a reader
  of the floor: ``acknowledgement_problem``.
- secrecy of the public record (``alert_record``): nothing of an alert reaches a public record or the round's
  view. While the key is turned the panel is driven, after every change of its text or lamps, by the private
  ``PrivatePanel`` command as well, alert or not, so that turning the key and an alert's arrival leave the same
  public records whether an alert waits or not. (A supervisor's press refused because none waits is followed, as
  every refusal, by the public ``PromptDue`` a few seconds later.)
- a bound: at most ``MAX_WAITING`` alerts wait; one more sets the oldest aside (``AlertNotShown``, journaled).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from controller.game.sessions import PLAYER_ID
from controller.round import commands as cmd
from controller.round.data import SOURCES
from drivers.panel.protocol import MAX_DISPLAY_BYTES

#: The panel button and control-interface action that acknowledges the alert shown (a supervisor action).
ACKNOWLEDGE_ALERT = "acknowledge_alert"

#: The kinds of card an alert may name (``controller.analysis.protect``): the middle card, an outside card of the
#: across line, an outside card of the down line.
CARD_KINDS: tuple[str, ...] = ("middle", "across", "down")

#: Alerts that wait for a supervisor at most; one more sets the oldest aside (journaled, never lost).
MAX_WAITING = 50

#: The panel's text when a supervisor presses ``acknowledge_alert`` and no alert waits.
REFUSED_TEXT = "Not now: no hole-card alert waits"

#: Seats of the table (NY 9 NYCRR 5324.39(a)(1)).
SEATS = range(1, 7)

#: The alert's figures, whole numbers each (the journal keeps integers only).
FIGURES: tuple[str, ...] = ("round_no", "evidence_log10_hundredths", "first_round", "rounds", "share_percent",
                            "loss")


@dataclass(frozen=True)
class Alert:
    """A player's play (at a seat, across breaks, moves and sessions) looks as if the player saw a hole card
    (``controller.analysis.protect``): an input of the round machine, journaled (kind ``event``) before it is applied and replayed after a restart.

    ``round_no``: the round whose close flagged it; ``seat``; ``card``: ``middle``, ``across`` or ``down`` (a
    kind of card, never a card); ``evidence_log10_hundredths``: log10 of the evidence x 100 (the journal keeps
    integers only); ``first_round`` and ``rounds``: the evidence so far (the player's
    rounds since ``first_round``); ``share_percent``: the estimated share
    of rounds in which the card is seen; ``loss``: the house's estimated loss in minor units by the par sheet's
    exposed-card values; ``player``: the player's id when the player is rated (``SeatRating``: whom surveillance
    looks for, whichever seat the player sits at now), ``""`` when followed by the seat only (and in alerts
    journaled before the id was kept)."""

    round_no: int
    seat: int
    card: str
    evidence_log10_hundredths: int
    first_round: int
    rounds: int
    share_percent: int
    loss: int
    player: str = ""


@dataclass(frozen=True)
class DetectorChecked:
    """The hole-card detector read round ``round_no`` and has no alert to raise now: an input of the round machine
    that changes nothing. The detector hands the machine exactly one input per round it reads, this or one
    ``Alert`` (a second alert of the same round waits for the next round read), so that the journal's private
    records, whose seq numbers public readers see as gaps, and the views published after each input are the same
    whether an alert was raised or not: nobody learns the moment of an alert from the public record."""

    round_no: int


def alert_problem(alert: Alert) -> str:
    """Why ``alert`` may not be shown (``""`` when it may): a seat outside 1-6, a card that is not one of
    ``CARD_KINDS`` (an alert never names a card), a figure that is not a whole number. The reason names the
    field, never its value."""
    if not _whole(alert.seat) or alert.seat not in SEATS:
        return "the seat is not a seat of the table"
    if alert.card not in CARD_KINDS:
        return f"the card is not one of {', '.join(CARD_KINDS)}"
    if not isinstance(alert.player, str) or (alert.player and not re.fullmatch(PLAYER_ID, alert.player)):
        return "the player is not a player's id"
    for name in FIGURES:
        if not _whole(getattr(alert, name)):
            return f"{name} is not a whole number"
    return ""


def alert_fields_problem(fields: Any) -> str:
    """Why ``fields`` (an alert as plain data, ``alert_data``: from a journal or from the floor) is not an alert
    the table may show (``""`` when it is): not an object, a field ``Alert`` has not (its name, cut), a field
    missing that has no default (``player`` may be missing: alerts journaled before the id was kept), else
    ``alert_problem``'s reason. Never the value of a field."""
    return _shape_problem(fields, Alert, "the alert") or alert_problem(Alert(**fields))


def alert_shape_problem(fields: Any) -> str:
    """Why ``fields`` (an ``Alert`` record's data, from the floor) is not shaped as the table journals an alert
    (``""`` when it is): not an object, a field ``Alert`` has not, a field missing that has no default, a whole
    number field (``seat``, ``FIGURES``) that is not a whole number, or a text field (``card``, ``player``) that is
    not text. Unlike ``alert_fields_problem``, a seat outside 1-6 or a card kind not of ``CARD_KINDS`` passes: an
    alert the table refused on arrival (``AlertNotShown``) is journaled as it came. The reason names the field,
    never its value."""
    problem = _shape_problem(fields, Alert, "the alert")
    if problem:
        return problem
    for spec in dataclasses.fields(Alert):
        if spec.name not in fields:
            continue
        value = fields[spec.name]
        if spec.type == "int" and not _whole(value):
            return f"the alert's {spec.name} is not a whole number"
        if spec.type == "str" and not isinstance(value, str):
            return f"the alert's {spec.name} is not text"
    return ""


def acknowledgement_problem(data: Any) -> str:
    """Why ``data`` is not an ``AlertAcknowledged``'s data as the table writes it (``AlertDesk._acknowledge_alert``,
    ``cmd.AlertAcknowledged``; ``""`` when it is): an object with exactly its fields, ``round_no`` a whole number
    or null (no round yet), ``alert`` an alert the table may show (``alert_fields_problem``: only an alert shown
    waits to be acknowledged), ``by`` the supervisor's name (``Actor.name``: non-empty text), ``role``
    ``supervisor`` (only a supervisor acknowledges, whatever the source: ``Round._act``), ``source`` one of
    ``controller.round.data.SOURCES`` and ``waiting`` the alerts still waiting, a whole number from 0 below
    ``MAX_WAITING``. The reason names the field, never its value (a reader of the floor logs it)."""
    problem = _shape_problem(data, cmd.AlertAcknowledged, "the data")
    if problem:
        return problem
    if data["round_no"] is not None and not _whole(data["round_no"]):
        return "round_no is not a whole number"
    problem = alert_fields_problem(data["alert"])
    if problem:
        return problem
    if not isinstance(data["by"], str) or not data["by"]:
        return "by is not a supervisor's name"
    if data["role"] != "supervisor":
        return "role is not supervisor"
    if data["source"] not in SOURCES:
        return f"source is not one of {', '.join(SOURCES)}"
    if not _whole(data["waiting"]) or not 0 <= data["waiting"] < MAX_WAITING:
        return f"waiting is not a whole number from 0 below {MAX_WAITING}"
    return ""


def _shape_problem(data: Any, shape: type, what: str) -> str:
    """Why ``data`` (plain data: from a journal or the floor) is not an object with the fields of the dataclass
    ``shape`` (``""`` when it is): not an object, a field ``shape`` has not (its name, cut), a field missing that
    has no default. ``what`` names ``data`` in the reason."""
    if not isinstance(data, dict):
        return f"{what} is not an object"
    fields = dataclasses.fields(shape)
    unknown = next((key for key in data if key not in {f.name for f in fields}), None)
    if unknown is not None:
        return f"{what} has a field {unknown!r:.40} that {shape.__name__} has not"
    missing = next((f.name for f in fields if f.name not in data and f.default is dataclasses.MISSING), None)
    return f"{what} has no {missing}" if missing is not None else ""


def _whole(value: Any) -> bool:
    """True for a whole number (an ``int``, not a ``bool``)."""
    return isinstance(value, int) and not isinstance(value, bool)


def alert_data(alert: Alert) -> dict[str, Any]:
    """The alert's fields as plain data (what the machine keeps and ``AlertAcknowledged`` records)."""
    return dataclasses.asdict(alert)


def evidence_text(hundredths: int) -> str:
    """The evidence as a power of ten from its log10 x 100, exactly: 412 -> ``10^4.12``."""
    sign = "-" if hundredths < 0 else ""
    return f"10^{sign}{abs(hundredths) // 100}.{abs(hundredths) % 100:02d}"


def alert_text(alert: dict[str, Any], waiting: int) -> str:
    """The panel's line for ``alert`` (``alert_data``), the first of ``waiting``: the seat, the player's id when
    rated, the kind of card, the evidence and the session's rounds, e.g. ``ALERT 1/2 seat 3 P-1 may see middle
    card: 10^4.12 in 30 rounds``. What would not fit the panel's display (``MAX_DISPLAY_BYTES``; the line is
    ASCII) is left out: the rounds first, then the player's id (the control interface shows the whole alert)."""
    seats = [f"seat {alert['seat']} {alert['player']}"] if alert.get("player") else []
    seats.append(f"seat {alert['seat']}")
    lines = []
    for seat in seats:
        head = (f"ALERT 1/{waiting} {seat} may see {alert['card']} card: "
                f"{evidence_text(alert['evidence_log10_hundredths'])}")
        lines += [f"{head} in {alert['rounds']} rounds", head]
    return next((line for line in lines if len(line) <= MAX_DISPLAY_BYTES), lines[-1])


def panel_for_supervisor(key: str | None, waiting: list[dict[str, Any]], text: str,
                         lamps: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """The one rule of what the panel shows of alerts (module docstring).

    ``key``: the supervisor key's id while it is turned, else None; ``waiting``: the alerts not yet acknowledged,
    oldest first; ``text`` and ``lamps``: what the round shows now (its display and lit buttons). Returns None
    with the key off (the panel shows the round's text and lamps, nothing of alerts); with the key turned,
    ``(text, lamps)`` for the supervisor: the oldest alert's line and the round's lamps with ``acknowledge_alert``
    when an alert waits, else the round's own."""
    if key is None:
        return None
    if not waiting:
        return text, tuple(lamps)
    return alert_text(waiting[0], len(waiting)), (*lamps, ACKNOWLEDGE_ALERT)


#: Journal record types that belong to alerts alone: never public.
ALERT_TYPES: frozenset[str] = frozenset({"Alert", "AlertAcknowledged", "AlertNotShown", "PrivatePanel",
                                         "DetectorChecked"})


def alert_record(record: dict[str, Any]) -> bool:
    """True for a journal record that says something of alerts and must stay out of every public record
    (``controller.control.server.public_record``): an alert, its acknowledgement or setting aside, the private panel
    command, and a press, action or refusal of ``acknowledge_alert`` (its existence would tell that an alert
    waited)."""
    kind, data = record.get("type"), record.get("data")
    if kind in ALERT_TYPES:
        return True
    if not isinstance(data, dict):
        return False
    return ACKNOWLEDGE_ALERT in (data.get("button"), data.get("action"))


class AlertDesk:
    """The alert handlers of ``controller.round.machine.Round`` (a mixin: it uses the round's state and helpers). Fields
    it owns (``alerts_waiting``, ``_private_panel``) are set in ``Round.__init__`` and kept in
    ``checkpoint``/``restore``."""

    def _on_Alert(self, event: Alert) -> None:
        problem = alert_problem(event)
        if problem:
            self._emit(cmd.AlertNotShown(self.round_no, alert_data(event), problem))  # type: ignore[attr-defined]
            return
        waiting: list[dict[str, Any]] = self.alerts_waiting  # type: ignore[attr-defined]
        if len(waiting) >= MAX_WAITING:
            oldest = waiting.pop(0)
            self._emit(cmd.AlertNotShown(self.round_no, oldest,  # type: ignore[attr-defined]
                                         f"more than {MAX_WAITING} alerts wait: the oldest is set aside"))
        waiting.append(alert_data(event))

    def _on_DetectorChecked(self, event: DetectorChecked) -> None:
        """A round read by the detector without an alert: nothing changes (``DetectorChecked``)."""

    def _acknowledge_alert(self, actor: Any) -> None:
        """A supervisor acknowledges the alert shown (the oldest waiting); refused when none waits."""
        waiting: list[dict[str, Any]] = self.alerts_waiting  # type: ignore[attr-defined]
        if not waiting:  # refused out of the public record: the panel says it only to a key turned
            self._emit(cmd.PressRefused(ACKNOWLEDGE_ALERT, "no hole-card alert waits",  # type: ignore[attr-defined]
                                        actor.user, actor.role))
            if self.supervisor_key is not None:  # type: ignore[attr-defined]
                lamps = tuple(self._lamps or ())  # type: ignore[attr-defined]
                self._private_panel = [REFUSED_TEXT, list(lamps)]
                self._emit(cmd.PrivatePanel(REFUSED_TEXT, lamps))  # type: ignore[attr-defined]
            return
        alert = waiting.pop(0)
        self._emit(cmd.AlertAcknowledged(self.round_no, alert, actor.name, actor.role,  # type: ignore[attr-defined]
                                         actor.source, len(waiting)))

    def _update_private_panel(self) -> None:
        """After an input: while the key is turned, drive the panel with ``PrivatePanel`` (the one rule,
        ``panel_for_supervisor``) whenever the round changed its text or lamps or what the rule shows changed;
        when the key is turned off, put the round's text and lamps back the same way."""
        outbox: list[Any] = self._outbox  # type: ignore[attr-defined]
        texts = [o.text for o in outbox if isinstance(o, cmd.Display)]
        text = texts[-1] if texts else (self._display or "")  # type: ignore[attr-defined]
        lamps = tuple(self._lamps or ())  # type: ignore[attr-defined]
        key, waiting = self.supervisor_key, self.alerts_waiting  # type: ignore[attr-defined]
        shown = panel_for_supervisor(key, waiting, text, lamps)
        if shown is None:
            if self._private_panel is not None:
                self._private_panel = None
                self._emit(cmd.PrivatePanel(text, lamps))  # type: ignore[attr-defined]
            return
        if any(isinstance(o, cmd.PrivatePanel) for o in outbox):
            return  # a refusal shown privately: the service's PromptDue brings the panel back a few seconds later
        if "panel" not in self.devices_ready or not self.self_checked:  # type: ignore[attr-defined]
            self._private_panel = None  # shown again when the panel is back (it then gets text and lamps)
            return
        changed = any(isinstance(o, (cmd.Display, cmd.SetLamps)) for o in outbox)
        now = [shown[0], list(shown[1])]  # as the checkpoint keeps it
        if changed or now != self._private_panel:
            self._private_panel = now
            self._emit(cmd.PrivatePanel(*shown))  # type: ignore[attr-defined]
