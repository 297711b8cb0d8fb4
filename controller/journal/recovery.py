"""Crash recovery: rebuild the round machine's exact state from the journal.

The journal is written ahead (``controller.service.loop``): every input is committed, with everything it produced,
before any command it produced is sent. The machine is pure, so restoring the last checkpoint
(``Round.restore``, written at each round's close and at least every ``CHECKPOINT_EVERY`` records) and feeding
the journaled inputs after it, in order, rebuilds the state the service had when it stopped, however it
stopped. Each output the replay produces is checked against the journaled ones of its input:

- a journaled record (or command) that differs from what the machine produces now is a divergence: the
  journal was not written by this version of the rules, or it was altered past what the hash chain shows;
  ``ReplayError`` names the record and the service does not start;
- except a defect recorded once: a ``FaultRaised`` of cause ``internal`` (``Round.defect``, e.g. after a
  ``MemoryError``) that the machine does not repeat now stands as a fact of the round: the replayed machine
  takes the same fault from its state before that input;
- a device command missing from the journal was never sent: nothing to do, the round machine asks again for
  whatever was in flight when the round resumes;
- a record missing at the end of the journal (possible only in a JSON-lines journal written before the store,
  which wrote each record on its own) is returned in ``Recovered.missing``: the service journals it before
  anything else, so the round's record is complete.
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from controller.game.paytable import Jurisdiction
from controller.game.table import TableConfig
from controller.journal.meters_audit import meters_differ
from controller.journal.record import JournalError
from controller.journal.store import Journal
from controller.round import commands as cmd
from controller.round.inputs import input_from_record
from controller.round.machine import Round
from controller.round.meters import Meters

#: Records the service or a journal tool writes itself (not outputs of the round machine; ``JournalKeyIntroduced``
#: and ``AnchorRestored``: ``controller.journal.tools.admit``); replay skips them. ``Alert`` is one in
#: journals written before alerts became an input of the round machine (kind ``record``; now kind ``event``).
#: ``ClockStepped`` is the journal's own (``controller.journal.clock``); ``SignificantEvent`` and the records of
#: the start and the devices the catalogue names are the service's (``controller.service.significance``);
#: ``MetersSnapshot`` the service's copy of the meters (``controller.service.meters_snapshot``); ``OperatorsChanged``
#: who may act on the control interface (``controller.service.loop.SERVICE_INPUTS``).
SERVICE_RECORDS: frozenset[str] = frozenset({"ServiceStarted", "ServiceStopped", "Alert", "JournalKeyIntroduced",
                                            "AnchorRestored", "ClockStepped", "SignificantEvent", "UncleanStopSeen",
                                            "SoftwareChanged", "ConfigurationChanged", "DeviceReplaced",
                                            "MetersSnapshot", "OperatorsChanged"})


class ReplayError(JournalError):
    """The journal does not replay: ``seq`` is the first record that differs from what the rules produce."""

    def __init__(self, seq: Any, problem: str) -> None:
        super().__init__(f"journal record {seq}: {problem} (the journal does not replay under these rules: altered, "
                         f"or written by another version; keep it as the record and start a new one with --journal)")
        self.seq = seq


@dataclass
class Recovered:
    """The result of a replay: the rebuilt ``machine``; ``missing``, the machine's records the journal lacks
    (to be journaled first, in order); ``round_records``, the journal records of the last round, for its
    summary."""

    machine: Round
    missing: list[Any] = field(default_factory=list)
    round_records: list[dict[str, Any]] = field(default_factory=list)


def _as_json(output: Any) -> Any:
    return json.loads(json.dumps(dataclasses.asdict(output)))


def _matches(output: Any, record: dict[str, Any]) -> bool:
    return type(output).__name__ == record.get("type") and _as_json(output) == record.get("data")


def _one_off_defect(record: dict[str, Any]) -> Exception | None:
    """The defect a journaled ``FaultRaised`` of cause ``internal`` recorded (``Round.defect``), rebuilt with
    the same type name and text so that ``Round.defect`` gives the same record; None for any other record."""
    data = record.get("data") or {}
    if record.get("type") != "FaultRaised" or data.get("cause") != "internal" or data.get("resumable", True):
        return None
    name, _, text = str(data.get("detail", "")).partition(": ")
    return type(name if name.isidentifier() else "Defect", (Exception,), {})(text)


def _apply(machine: Round, event: Any, outputs: list[dict[str, Any]]) -> list[Any]:
    """Apply one journaled input; a defect recorded once (an internal ``FaultRaised`` as its first output)
    that the machine does not repeat now stands as recorded: the machine goes back to its state before the
    input and takes the same fault (the round held, as it was)."""
    defect = _one_off_defect(outputs[0]) if outputs else None
    before = machine.checkpoint() if defect is not None else None
    try:
        produced = machine.handle(event)
    except Exception as exc:  # noqa: BLE001 - the service turned this defect into a fault; so does replay
        produced = machine.defect(exc)
    if defect is not None and before is not None and not (produced and _matches(produced[0], outputs[0])):
        machine.restore(before)
        machine.meters.observe(event)  # the input stands in the journal, as it did when it was first applied
        produced = machine.defect(defect)
    return produced


def _groups(records: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any] | None, list[dict[str, Any]]]]:
    """The records as ``(input, outputs)``: each journaled input with the records and commands that follow it
    (one commit); records before the first input come with None."""
    event: dict[str, Any] | None = None
    outputs: list[dict[str, Any]] = []
    for record in records:
        if record.get("type") in SERVICE_RECORDS and record.get("kind") == "record":
            continue
        if record.get("kind") == "event":
            if event is not None or outputs:
                yield event, outputs
            event, outputs = record, []
        else:
            outputs.append(record)
    if event is not None or outputs:
        yield event, outputs


def replay(records: Iterable[dict[str, Any]], config: TableConfig, jurisdiction: Jurisdiction, *,
           machine: Round | None = None) -> Recovered:
    """Feed the journaled inputs of ``records`` (a stream, ``controller.journal.reader``) to ``machine`` (a machine
    restored from a checkpoint, whose records follow it) or a fresh ``Round``.

    Raises ``ReplayError`` when a journaled output differs from the replayed one (except a one-off defect,
    ``_apply``), when a record the machine produced is missing in the middle of the journal, or when an input
    cannot be rebuilt. ``Recovered.round_records`` holds the records replayed of the last round.
    """
    machine = machine if machine is not None else Round(config, jurisdiction)
    expected: list[Any] = []
    round_records: list[dict[str, Any]] = []
    for event_record, outputs in _groups(records):
        for record in ([event_record] if event_record else []) + outputs:
            if isinstance(record.get("round"), int):
                if round_records and round_records[-1].get("round") != record["round"]:
                    round_records = []
                round_records.append(record)
        if event_record is not None:
            seq = event_record.get("seq")
            lost = [o for o in expected if not isinstance(o, cmd.DEVICE_COMMANDS)]
            if lost:
                raise ReplayError(seq, f"{type(lost[0]).__name__} of the previous input is missing before it")
            try:
                event = input_from_record({"type": event_record.get("type"), **(event_record.get("data") or {})})
            except ValueError as exc:
                raise ReplayError(seq, str(exc)) from None
            expected = _apply(machine, event, outputs)
        pending = deque(expected)
        for record in outputs:
            while pending:
                output = pending.popleft()
                if _matches(output, record):
                    break
                if not isinstance(output, cmd.DEVICE_COMMANDS):
                    raise ReplayError(record.get("seq"), f"journal has {record.get('type')} {record.get('data')}, "
                                                         f"the rules give {type(output).__name__} {_as_json(output)}")
            else:
                raise ReplayError(record.get("seq"), f"{record.get('type')} follows no input that produces it")
        expected = list(pending)
    missing = [o for o in expected if not isinstance(o, cmd.DEVICE_COMMANDS)]
    number = machine.round_no
    round_records = [r for r in round_records if number is not None and r.get("round") == number]
    return Recovered(machine, missing, round_records)


def _check_unsealed(journal: Journal, machine: Round, seq: int, with_meters: bool) -> None:
    """Raise ``ReplayError`` when the keyed ``journal``'s last checkpoint (at record ``seq``), written before its
    key and so bound by nothing a forger cannot make again (``Journal.checkpoint_unsealed``), restored on
    ``machine``, holds other meters (when it holds them: ``with_meters``) or another last round number than its
    records count (``Meters.from_records``; the highest round of the records up to it). Reads the history up to it
    once: a start after ``crisscross journal add-key``, until the service writes its first sealed checkpoint."""
    rounds = [0]

    def counted(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for record in records:
            if record["seq"] <= seq and record.get("round") is not None:
                rounds[0] = max(rounds[0], record["round"])
            yield record

    try:
        differ = meters_differ(counted(journal.records()), seq, json.loads(json.dumps(machine.meters.checkpoint())))
    except ValueError as exc:
        raise ReplayError(seq, f"the meters cannot be counted from the records before it: {exc}") from None
    if with_meters and differ:
        raise ReplayError(seq, "its checkpoint, written before the journal key and sealed by nothing, holds other "
                               "meters than its records count (edited)")
    if rounds[0] != machine.last_round_no:
        raise ReplayError(seq, f"its checkpoint, written before the journal key and sealed by nothing, names round "
                               f"{machine.last_round_no} as the last, its records {rounds[0]} (edited)")


def recover(journal: Journal, config: TableConfig, jurisdiction: Jurisdiction) -> Recovered:
    """Rebuild the machine from ``journal``'s last checkpoint (``Round.restore``) and the records after it,
    each checked as ``replay`` does. Start-up time and memory depend on the records since that checkpoint,
    not on the history, except once after a key was introduced: a keyed journal's checkpoint written before the
    key is checked against its records first (``_check_unsealed``). Raises ``ReplayError`` as ``replay``, for a
    checkpoint that does not restore, and for such a checkpoint that its records do not bear out."""
    machine = Round(config, jurisdiction)
    checkpoint = journal.checkpoint
    after = 0
    if checkpoint is not None:
        try:
            machine.restore(checkpoint.state)
        except (KeyError, TypeError, ValueError) as exc:
            raise ReplayError(checkpoint.seq, f"its checkpoint does not restore the round machine: {exc!r}") from None
        after = checkpoint.seq
        if journal.checkpoint_unsealed:
            _check_unsealed(journal, machine, after, "meters" in checkpoint.state)
        if "meters" not in checkpoint.state:  # written before the meters: rebuilt from the journal's start
            try:
                machine.meters = Meters.from_records(journal.records(), upto=after)
            except ValueError as exc:
                raise ReplayError(after, f"the meters cannot be rebuilt from the records before it: {exc}") from None
    recovered = replay(journal.records(after=after), config, jurisdiction, machine=machine)
    recovered.round_records = journal.round_records(recovered.machine.round_no)
    return recovered
