"""Crash recovery: rebuild the round machine's exact state from the journal.

The journal is written ahead (``controller.service``): every input is on disk before the machine applies it,
and every output before it is carried out. The machine is pure, so feeding the journaled inputs, in order, to a
fresh ``Round`` rebuilds the state the service had when it stopped, however it stopped. Each output the replay
produces is checked against the journaled one that follows the input:

- a journaled record (or command) that differs from what the machine produces now is a divergence: the
  journal was not written by this version of the rules, or it was altered past what the hash chain shows;
  ``ReplayError`` names the record and the service does not start;
- a device command missing from the journal was never sent (the service died first): nothing to do, the round
  machine asks again for whatever was in flight when the round resumes;
- a record missing at the end of the journal (the service died between journaling an input and journaling all
  its consequences, for example in the middle of a settlement) is returned in ``Recovered.missing``: the
  service journals it before anything else, so the round's record is complete.
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from controller import commands as cmd
from controller.inputs import input_from_record
from controller.journal import JournalError
from controller.paytable import Jurisdiction
from controller.round import Round
from controller.table import TableConfig

#: Records the service writes itself (not outputs of the round machine); replay skips them.
SERVICE_RECORDS: frozenset[str] = frozenset({"ServiceStarted", "ServiceStopped"})


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


def replay(records: Sequence[dict[str, Any]], config: TableConfig, jurisdiction: Jurisdiction) -> Recovered:
    """Feed the journaled inputs of ``records`` (``controller.journal.read_records``) to a fresh ``Round``.

    Raises ``ReplayError`` when a journaled output differs from the replayed one, when a record the machine
    produced is missing in the middle of the journal, or when an input cannot be rebuilt.
    """
    machine = Round(config, jurisdiction)
    expected: deque[Any] = deque()
    last_seq: Any = None
    for record in records:
        last_seq = record.get("seq")
        kind, name = record.get("kind"), record.get("type")
        if name in SERVICE_RECORDS and kind == "record":
            continue
        if kind == "event":
            lost = [o for o in expected if not isinstance(o, cmd.DEVICE_COMMANDS)]
            if lost:
                raise ReplayError(last_seq, f"{type(lost[0]).__name__} of the previous input is missing before it")
            expected.clear()
            try:
                event = input_from_record({"type": name, **(record.get("data") or {})})
            except ValueError as exc:
                raise ReplayError(last_seq, str(exc)) from None
            try:
                outputs = machine.handle(event)
            except Exception as exc:  # noqa: BLE001 - the service turned this defect into a fault; so does replay
                outputs = machine.defect(exc)
            expected.extend(outputs)
        else:
            while expected:
                output = expected.popleft()
                if _matches(output, record):
                    break
                if not isinstance(output, cmd.DEVICE_COMMANDS):
                    raise ReplayError(last_seq, f"journal has {name} {record.get('data')}, the rules give "
                                                f"{type(output).__name__} {_as_json(output)}")
            else:
                raise ReplayError(last_seq, f"{name} follows no input that produces it")
    missing = [o for o in expected if not isinstance(o, cmd.DEVICE_COMMANDS)]
    number = machine.round_no
    round_records = [r for r in records if number is not None and r.get("round") == number]
    return Recovered(machine, missing, round_records)
