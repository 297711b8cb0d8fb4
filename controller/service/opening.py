"""What a run opens before any device: the journal to write (simulated play kept apart), its key, the
jurisdiction of the table (docs/journal.md, docs/config.md).
"""

from __future__ import annotations

from pathlib import Path

from controller.game.capacity import check_capacity
from controller.game.paytable import Jurisdiction, load_jurisdiction
from controller.game.table import JOURNAL_NAME, SIMULATED, TableConfig, jurisdictions_home
from controller.journal.key import JournalKeyError, load_key
from controller.journal.reader import is_store, store_key_id
from controller.journal.record import JournalError
from controller.journal.store import Journal
from controller.settings.files import state_dir
from controller.settings.text import path_shown


def journal_for(config: TableConfig, simulate: bool, journal_path: Path | None) -> Path:
    """The journal to write: ``journal_path`` (``--journal``) when given; when any device is simulated (``simulate``)
    a journal of its own in the state directory (``controller.settings.files.state_dir()/simulated``), so simulated play
    never mixes with a table's history; else the table's (``table.yaml``, or ``journal.db`` in the state
    directory)."""
    if journal_path is not None:
        return Path(journal_path)
    if simulate:
        return state_dir() / SIMULATED / JOURNAL_NAME
    return config.journal


def open_journal(config: TableConfig, journal_path: Path | None = None, *, history: bool = True) -> Journal:
    """Open the journal store (``journal_path``, else table.yaml's ``journal``; ``journal_for``) with table.yaml's
    ``journal_key`` when it names one; with ``history`` False (the shared journal of simulated play, which is
    nobody's history) no key seals it and an older JSON-lines journal beside it is left alone. Raises ``JournalError`` for a key file that cannot be used (the
    service does not start without the key it was given), for a new store beside a JSON-lines journal of the
    same name (the table's history written before the store: to be imported, never left behind) or a journal
    that does not open (``controller.journal.store.Journal``)."""
    path = Path(journal_path or config.journal)
    old, shown = path.with_suffix(".jsonl"), path_shown(path)
    if history and not path.exists() and old != path and old.is_file():
        raise JournalError(f"{shown}: no journal store, but a JSON-lines journal {path_shown(old)} beside it: this "
                           f"table's history; migrate it first: crisscross journal import {path_shown(old)} --journal "
                           f"{shown}")
    if not history and _keyed(path):
        raise JournalError(f"{shown}: the journal of simulated play is sealed with a key (journal add-key was run "
                           f"on it), and simulated play runs without one: not started; move it aside (it keeps what "
                           f"it holds: read it with --journal and the key) and the next run starts a new one")
    return Journal(path, key=key_for(config) if history else None)


def _keyed(path: Path) -> bool:
    """True when the store at ``path`` is sealed with a key; False for none, no store, or one that cannot be read
    (``Journal`` says what is wrong with it)."""
    try:
        return is_store(path) and store_key_id(path) is not None
    except JournalError:
        return False


def key_for(config: TableConfig) -> bytes | None:
    """The journal key of table.yaml's ``journal_key`` (None when it names none). Raises ``JournalError`` for a
    key file that cannot be used (``controller.journal.key.load_key``): a key given is never silently left out."""
    if config.journal_key is None:
        return None
    try:
        return load_key(config.journal_key)
    except JournalKeyError as exc:
        raise JournalError(str(exc)) from None


def jurisdiction_for(config: TableConfig) -> Jurisdiction:
    """Load the table's jurisdiction: a code from ``jurisdictions/`` beside ``table.yaml``, else from ``config/``;
    a file path as ``load_table_config`` resolved it (from ``table.yaml``'s folder). Every start comes here
    before it opens anything. Raises ``ConfigError`` for a jurisdiction ``load_jurisdiction`` refuses, and for
    table limits that with its pay tables let a spot hold more than the bet sensors can read
    (``controller.game.capacity.check_capacity``; docs/protocol.md, "Bet sensors"), naming the file and key."""
    jurisdiction = load_jurisdiction(config.jurisdiction, jurisdictions_home(config.source))
    check_capacity(config, jurisdiction)
    return jurisdiction


def check_kept_for(journal: Journal, mode: str, table_id: str, history: bool) -> None:
    """Refuse (``JournalError``, the journal named) a journal whose last start (``ServiceStarted``) says it holds
    another kind of play than ``mode`` (``table`` or ``simulated``: simulated play never goes into a table's
    history), or, when the journal is a table's history (``history``), another table's rounds than ``table_id``'s:
    a journal's meters, rounds and significant events are one table's (NY 9 NYCRR 5317.26: the events of a
    table), and continuing another table's journal under a new id would add its meters to this one's. A start
    record written before the id was kept (``table`` absent or ``""``) is not judged."""
    data = (journal.last_start or {}).get("data") or {}
    played = data.get("mode")
    if played and played != mode:
        raise JournalError(f"{journal.shown}: this journal holds {played} play and this run is {mode} play; "
                           f"simulated play never goes into a table's history (leave --journal out: a run with "
                           f"simulated devices keeps its own journal)")
    kept_for = data.get("table")
    if history and isinstance(kept_for, str) and kept_for and kept_for != table_id:
        raise JournalError(f"{journal.shown}: this journal holds the rounds of table {kept_for!r} and this "
                           f"configuration is table {table_id!r}: not started; each table keeps a journal of its own "
                           f"(journal of table.yaml, or --journal); a table given a new id starts a new journal, the "
                           f"old one kept as its history")
