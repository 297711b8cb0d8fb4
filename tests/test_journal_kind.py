"""A file given as a journal that is neither a journal store (SQLite's header) nor a JSON-lines journal (a line
of records begins with ``{``): an image, random bytes. Every command that reads a journal says so, as ``run``
does, naming the file; exit 2, nothing written and the file left as it was (``controller.journal.reader
.journal_kind``, the one rule of a journal file's kind). ``journal verify`` and ``protect`` said ``line 1: not
UTF-8 text`` or ``line 1: incomplete last line``, as if it were a JSON-lines journal damaged at its first line.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import crisscross

ROOT = Path(__file__).resolve().parents[1]
#: A PNG file's signature and the start of its first chunk (PNG specification, 5.2 and 5.3).
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa"
#: 100 random bytes (a fixed seed), the first one neither ``{`` nor a zero, with a newline among them.
NOISE = bytes([0x9c]) + bytes(random.Random(7).randrange(256) for _ in range(98)) + b"\n"
NEITHER = "neither a journal store nor a JSON-lines journal"


@pytest.fixture(params=[PNG, NOISE], ids=["png", "random"])
def foreign(request, tmp_path) -> Path:
    path = tmp_path / "j.db"
    path.write_bytes(request.param)
    return path


@pytest.mark.parametrize("command", [("recall",), ("meters",), ("protect",), ("rating",)])
def test_the_readers_say_the_file_is_neither_a_store_nor_json_lines(foreign, command):
    content = foreign.read_bytes()
    proc = crisscross(*command, "--journal", foreign)
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr == f"crisscross {command[0]}: {foreign}: {NEITHER}\n", proc
    assert foreign.read_bytes() == content


@pytest.mark.parametrize("command", [("journal", "verify"), ("run", "--simulate", "--rounds", "1", "--journal")],
                         ids=["verify", "run"])
def test_verify_and_run_say_the_same_of_it_as_processes(foreign, command):
    """The real commands, as a user runs them: one line, exit 2 (a journal that cannot be read), the file and its
    folder as they were (``run`` made no store beside it)."""
    content, beside = foreign.read_bytes(), sorted(foreign.parent.iterdir())
    proc = subprocess.run([sys.executable, "-m", "controller", *command, str(foreign)], cwd=foreign.parent,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr == f"crisscross: {foreign}: {NEITHER}\n", proc
    assert foreign.read_bytes() == content and sorted(foreign.parent.iterdir()) == beside


def test_a_start_on_another_programs_sqlite_database_refuses_it_and_writes_nothing(tmp_path):
    """``run --journal other.db`` on a database of another program (a ``customers`` table) added the journal's
    tables beside its own and played. Refused as not a journal store; the file is as it was, nothing beside it."""
    import hashlib
    import sqlite3

    from controller.journal.record import JournalError
    from controller.journal.store import Journal

    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (name TEXT)")
    db.execute("INSERT INTO customers VALUES ('Ann')")
    db.commit()
    db.close()
    path.chmod(0o600)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(JournalError, match="an SQLite database that is not a journal store \\(its tables: customers\\)"):
        Journal(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]
    empty = tmp_path / "empty.db"  # a database with no table at all is made a store
    sqlite3.connect(empty).execute("VACUUM").connection.close()
    empty.chmod(0o600)
    Journal(empty).close()
