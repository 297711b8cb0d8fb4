"""The meters read back from a journal and their audit (``crisscross meters``; NJ 13:69E-1.28C).

``meters_of`` recomputes the lifetime meters from a journal's records alone (``Meters.from_records``), up to a
record; ``audit`` recomputes them record by record (up to a record, or all) and compares them with every
``MetersSnapshot`` the service journaled (the meters after every record before it) and with the meters in a
checkpoint of the store (after its record; ``last_checkpoint``): the first meter that differs, and the record,
is the finding. A meter is named as ``crisscross meters`` shows it (``lifetime.rounds_voided``,
``since.shoe_service``), whichever of the two holds it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.journal.reader import _open_reader, is_store
from controller.journal.record import parse_canonical
from controller.round.meters import SNAPSHOT, Meters, first_difference
from controller.settings.text import path_shown


@dataclass(frozen=True)
class Finding:
    """Where the recorded meters differ from the records: ``seq`` of the snapshot or checkpoint, ``where``
    (``MetersSnapshot`` or ``checkpoint``) and ``meter`` (the first meter's dotted name and both values)."""

    seq: int
    where: str
    meter: str

    def __str__(self) -> str:
        return f"record {self.seq} ({self.where}): meter {self.meter}"


def last_checkpoint(path: Path, upto: int | None = None) -> tuple[int, dict[str, Any]] | None:
    """``(seq, state)`` of the last checkpoint of the store at ``path`` (at or before record ``upto``, None: the
    last of all); None for a JSON-lines journal or a store without one. Raises ``JournalError`` for a store
    that cannot be read."""
    if not Path(path).exists() or not is_store(path):
        return None
    db = _open_reader(Path(path))
    try:
        row = db.execute("SELECT seq, state FROM checkpoints WHERE seq <= ? ORDER BY seq DESC LIMIT 1",
                         (upto if upto is not None else 2**63 - 1,)).fetchone()
    finally:
        db.close()
    return None if row is None else (row[0], parse_canonical(row[1], path_shown(path), row[0]))


def meters_of(records: Iterable[dict[str, Any]], at: int | None = None) -> Meters:
    """The meters of ``records`` up to and including seq ``at`` (None: all). Raises ``ValueError`` for a
    metered record that cannot be read."""
    return Meters.from_records(records, upto=at)


def meters_differ(records: Iterable[dict[str, Any]], at: int, recorded: dict[str, Any]) -> bool:
    """True when the meters of ``records`` up to and including seq ``at`` (``meters_of``) are not ``recorded``
    (a checkpoint's meters, as its JSON holds them). Raises ``ValueError`` as ``meters_of``."""
    return json.loads(json.dumps(meters_of(records, at).checkpoint())) != recorded


def audit(records: Iterable[dict[str, Any]], checkpoint: tuple[int, dict[str, Any]] | None,
          upto: int | None = None) -> Finding | None:
    """The first place where a ``MetersSnapshot`` of ``records`` (up to and including seq ``upto``; None: all)
    or the ``checkpoint`` (``last_checkpoint``) differs from the meters recomputed from the records before it;
    None when every one agrees. A checkpoint written before the meters (no ``meters`` key) has nothing to
    compare; one whose meters cannot be read is a finding. Raises ``ValueError`` as ``meters_of``."""
    meters = Meters()
    for record in records:
        seq = record.get("seq", 0)
        if upto is not None and seq > upto:
            break
        if record.get("type") == SNAPSHOT and record.get("kind") == "record":
            found = first_difference(meters.to_json(), (record.get("data") or {}).get("meters") or {})
            if found:
                return Finding(seq, SNAPSHOT, found)
        meters.feed(str(record.get("type")), record.get("data") or {})
        if checkpoint is not None and seq == checkpoint[0] and "meters" in checkpoint[1]:
            found = _checkpoint_difference(meters, checkpoint[1]["meters"])
            if found:
                return Finding(seq, "checkpoint", found)
    return None


def _checkpoint_difference(meters: Meters, kept: Any) -> str | None:
    """The first meter where a checkpoint's meters (``Meters.checkpoint()``'s form: ``counts``, ``since_*``)
    differ from ``meters``, compared as ``to_json()`` shows both (``lifetime.*``, ``since.*``), then the shoe
    the meters last saw (``shoe_id``, which decides the next shoe service); what makes them unreadable."""
    try:
        restored = Meters.from_checkpoint(kept)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"the checkpoint's meters cannot be read ({type(exc).__name__}: {exc})"
    found = first_difference(meters.to_json(), restored.to_json())
    if found is None and restored.shoe_id != meters.shoe_id:
        found = f"shoe_id: {meters.shoe_id!r} recomputed from the records, {restored.shoe_id!r} recorded"
    return found
