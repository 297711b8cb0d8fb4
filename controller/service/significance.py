"""The significant events journaled (NY 9 NYCRR 5317.26): each record the catalogue classifies
(``controller.round.significant.code_of``) gets a ``SignificantEvent`` record in the same commit, and the
service's start journals what changed since the last start.

``SignificantEvent`` data: ``{"code", "name", "severity", "table", "source_seq", "source"}`` (``source_seq`` and
``source``: the seq and type of the record it classifies; the record's own ``time`` and ``round`` are the
event's). It carries nothing of its source's
data: no card, no device's own text. The records the service writes for the catalogue (``START_RECORDS``,
``DeviceReplaced``) are its own: replay passes over them (``controller.journal.recovery.SERVICE_RECORDS``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from controller.game.paytable import Jurisdiction
from controller.game.table import TableConfig
from controller.journal.store import Journal
from controller.round.inputs import ServiceStarted, roster_sha256
from controller.round.significant import SIGNIFICANT_EVENT, code_of
from controller.service.identity import identity_of

log = logging.getLogger(__name__)

#: What the start journals beside ``ServiceStarted`` when it sees it: a run that ended without ``ServiceStopped``,
#: another software identity or another configuration than the last start's.
START_RECORDS: tuple[str, ...] = ("UncleanStopSeen", "SoftwareChanged", "ConfigurationChanged")
#: A device answered with another identity (``DeviceReady.device_id``) than the last one it answered with.
DEVICE_REPLACED = "DeviceReplaced"
#: Who may act on the control interface changed (``controller.round.inputs.OperatorsChanged``).
OPERATORS_CHANGED = "OperatorsChanged"
#: Records written after a run's last record that say nothing of how it stopped (journal tools, the clock, the
#: service's own events): passed over when the start looks for the last run's end.
AFTER_THE_END: tuple[str, ...] = ("JournalKeyIntroduced", "AnchorRestored", "ClockStepped", SIGNIFICANT_EVENT,
                                  *START_RECORDS, DEVICE_REPLACED, OPERATORS_CHANGED)


def configuration_sha256(config: TableConfig, jurisdiction: Jurisdiction) -> str:
    """The configuration's hash: the digest of ``controller.service.identity`` over the table file (named
    ``table``) and the jurisdiction's file with its pay tables (named ``jurisdiction``). Raises ``OSError``
    naming a file that cannot be read."""
    return identity_of([("table", config.source), ("jurisdiction", jurisdiction.source)], "configuration").digest


def identified(started: ServiceStarted, config: TableConfig, jurisdiction: Jurisdiction, software: str
               ) -> ServiceStarted:
    """``started`` with the configuration's hash and the software's digest ``software`` filled in."""
    return replace(started, config_sha256=configuration_sha256(config, jurisdiction), software=software)


def start_records(journal: Journal, started: ServiceStarted, operators: tuple[tuple[str, str], ...] | None = None
                  ) -> list[tuple[str, str, dict[str, Any], None]]:
    """The entries the start journals with ``started`` (``START_RECORDS``), from the journal as opened: the last
    run's last record when it is not ``ServiceStopped`` (``UncleanStopSeen`` with its ``last_seq``, ``last_type``,
    ``last_time``), and the software digest or configuration hash when it differs from the last start's
    (``{"sha256", "previous"}``; a start before either was journaled compares with ``""``). With ``operators``
    (the control interface's ``roster`` as the start read it; None: the interface is off), ``OperatorsChanged``
    when its digest differs from the last one journaled (found by the store's index of them, however long ago:
    ``""`` when none was)."""
    out: list[tuple[str, str, dict[str, Any], None]] = []
    if journal.head[0]:
        skipped = ", ".join(f"'{name}'" for name in AFTER_THE_END)
        last = journal.latest(f"type NOT IN ({skipped})")
        if last is not None and last["type"] != "ServiceStopped":
            out.append(("record", "UncleanStopSeen", {"last_seq": last["seq"], "last_type": last["type"],
                                                      "last_time": last["time"]}, None))
    if journal.last_start is not None:
        before = journal.last_start.get("data") or {}
        for type_, key, now in (("SoftwareChanged", "software", started.software),
                                ("ConfigurationChanged", "config_sha256", started.config_sha256)):
            if now and before.get(key, "") != now:
                out.append(("record", type_, {"sha256": now, "previous": before.get(key, "")}, None))
    if operators is not None:
        last = journal.latest(f"type = '{OPERATORS_CHANGED}'", index="operator_changes")
        previous = str(last["data"].get("sha256", "")) if last is not None else ""
        now = roster_sha256(operators)
        if now != previous:
            out.append(("record", OPERATORS_CHANGED, {"operators": operators, "sha256": now, "previous": previous},
                        None))
    return out


class Significance:
    """The journal's ``derive`` hook (``Journal.derive``) of one table ``table_id``: for each record of a
    commit, ``DeviceReplaced`` when a ``DeviceReady`` names another identity than the device's last one, then a
    ``SignificantEvent`` for each record the catalogue classifies. ``known`` holds each device's last identity,
    read from the journal at the start (``from_journal``)."""

    def __init__(self, table_id: str, known: dict[str, str] | None = None) -> None:
        self.table_id = table_id
        self.known = dict(known or {})

    @classmethod
    def from_journal(cls, table_id: str, journal: Journal, devices: Iterable[str]) -> Significance:
        """The hook with the identity each of ``devices`` last answered in ``journal`` (by its index of
        handshakes: start-up does not grow with the history)."""
        known = {}
        for device in devices:
            last = journal.latest("type = 'DeviceReady' AND json_extract(data, '$.device') = ?", (device,),
                                  index="readies")
            if last is not None:
                known[device] = str(last["data"].get("device_id", ""))
        return cls(table_id, known)

    def __call__(self, records: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any], int | None]]:
        """The entries derived from ``records`` (each with its ``seq``), to be written after them in their commit."""
        out: list[tuple[str, str, dict[str, Any], int | None]] = []
        seq = records[-1]["seq"] if records else 0
        for record in records:
            self._classify(record, out)
            data = record["data"]
            if record["type"] == "DeviceReady" and isinstance(data, dict):
                device, now = str(data.get("device")), str(data.get("device_id"))
                previous = self.known.get(device)
                self.known[device] = now
                if previous is not None and previous != now:
                    out.append(("record", DEVICE_REPLACED, {"device": device, "device_id": now,
                                                            "previous": previous}, record["round"]))
                    self._classify({"seq": seq + len(out), **dict(zip(("kind", "type", "data", "round"), out[-1]))},
                                   out)
        return out

    def _classify(self, record: dict[str, Any], out: list[tuple[str, str, dict[str, Any], int | None]]) -> None:
        code = code_of(record["type"], record["data"])
        if code is not None:
            out.append(("record", SIGNIFICANT_EVENT, {"code": code.number, "name": code.name,
                                                      "severity": code.severity, "table": self.table_id,
                                                      "source_seq": record["seq"], "source": record["type"]},
                        record["round"]))


def log_event(record: dict[str, Any]) -> None:
    """The log line of a journaled ``SignificantEvent`` record (``event <code> <name> ...``): WARNING for a tilt or
    an error, INFO for information."""
    data = record["data"]
    level = logging.INFO if data.get("severity") == "information" else logging.WARNING
    log.log(level, "event %s %s %s (%s) table %s, record %s, round %s", data.get("code"), data.get("source"),
            data.get("name"), data.get("severity"), data.get("table"), data.get("source_seq"), record.get("round"))
