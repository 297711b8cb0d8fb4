"""The store's schema migrations: the numbered SQL files of ``controller/floor/schema/`` (``001_store.sql``, ...),
each applied once, in its number's order, in one transaction with the row that records it in
``schema_version`` (docs/backoffice.md, "The schema").

A migration that fails leaves nothing of itself (PostgreSQL's DDL is transactional) and is tried again at the
next start. Two stores starting at once take turns: each migration's transaction holds a transaction-level
advisory lock (``LOCK_KEY``) and looks at ``schema_version`` again under it.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

#: The advisory lock every migration's transaction holds (an arbitrary constant of this store).
LOCK_KEY = 0x63726F73  # "cros"
#: A migration file's name: its number, an underscore, a name, ``.sql``.
NAME = re.compile(r"(\d{3})_([a-z0-9_]+)\.sql")


class MigrationError(RuntimeError):
    """A migration file misnamed or numbered twice, or a database newer than this store (its versions named)."""


def migrations() -> list[tuple[int, str, str]]:
    """``(number, file name, SQL)`` of every migration shipped, in order. Raises ``MigrationError`` for a file of
    ``schema/`` that is not ``NNN_name.sql`` or a number used twice."""
    found: dict[int, tuple[int, str, str]] = {}
    for entry in resources.files("controller.floor").joinpath("schema").iterdir():
        if not entry.name.endswith(".sql"):
            continue
        match = NAME.fullmatch(entry.name)
        if match is None:
            raise MigrationError(f"schema/{entry.name}: expected NNN_name.sql")
        number = int(match.group(1))
        if number in found:
            raise MigrationError(f"schema/{entry.name}: number {number} is also {found[number][1]}")
        found[number] = (number, entry.name, entry.read_text(encoding="utf-8"))
    return [found[n] for n in sorted(found)]


def applied(conn: Any) -> set[int]:
    """The migration numbers ``schema_version`` lists (empty before the first)."""
    with conn.transaction():
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, name text NOT NULL, "
                     "applied_at timestamptz NOT NULL DEFAULT now())")
        return {row[0] for row in conn.execute("SELECT version FROM schema_version")}


def migrate(conn: Any) -> list[str]:
    """Apply every migration not applied yet on the psycopg connection ``conn`` (autocommit); the names of those
    applied now. Raises ``MigrationError`` when the database has a version this store does not know (a newer
    store wrote it), and psycopg's errors as they come (the failing migration rolled back)."""
    shipped = migrations()
    known = {number for number, _, _ in shipped}
    unknown = applied(conn) - known
    if unknown:
        raise MigrationError(f"the database has schema versions {sorted(unknown)} this store does not know: "
                             f"a newer store migrated it")
    done = []
    for number, name, sql in shipped:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            if conn.execute("SELECT 1 FROM schema_version WHERE version = %s", (number,)).fetchone():
                continue  # another store applied it meanwhile
            conn.execute(sql.encode())  # no parameters: the simple protocol runs every statement of the file
            conn.execute("INSERT INTO schema_version (version, name) VALUES (%s, %s)", (number, name))
            done.append(name)
    return done
