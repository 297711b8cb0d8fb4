"""A PostgreSQL server of the tests' own (the floor's store, tests/test_floor_store.py): ``hil.postgres.Postgres``,
started for the tests that need it. Without PostgreSQL the tests are skipped, except under CI (``CI`` set), where
they fail.
"""

from __future__ import annotations

import os
import time

import pytest

from hil.postgres import Postgres, PostgresMissing


def own_postgres() -> Postgres:
    """A started ``Postgres``: skipped without PostgreSQL, failed under CI."""
    try:
        server = Postgres()
    except PostgresMissing as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{exc}: CI needs it (.ci/run installs it)")
        pytest.skip(str(exc))
    try:
        server.start()
    except BaseException:
        server.remove()
        raise
    return server


def wait_until(predicate, timeout: float, what: str, every: float = 0.05):
    """Poll ``predicate`` until it returns a true value (returned) or ``timeout`` seconds pass
    (``AssertionError`` naming ``what``)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(every)
