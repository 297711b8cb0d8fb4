"""The pit page's tests (tests/test_floor_serve.py, tests/test_pit_browser.py): simulated tables' journals, their
public records written into a store as the floor's store writes them (``controller.floor.store_write.Writer``,
each record after the one stored before it, as the table publishes them), the page served in this process, and
HTTP requests to it.

The journals are real simulated tables' (``run --simulate``); the oracles the tests compare with are read from
them here (``crisscross meters``, the records counted by hand), never from the page's own code.
"""

from __future__ import annotations

import base64
import datetime as dt
import http.client
import io
import json
import ssl
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from controller.analysis.variance import round_variance
from controller.cli.parts import SERVICE_PARTS
from controller.control.server import public_record
from controller.floor import topics
from controller.floor.migrate import migrate
from controller.floor.serve import PitServer, Reports, ServeConfig, check_config
from controller.floor.serve_data import PitData, Poller
from controller.floor.store_health import SILENT_AFTER
from controller.floor.store_write import Writer
from controller.game.paytable import load_jurisdiction
from controller.game.table import load_table_config
from controller.journal.reader import read_records
from controller.service.assembly import Service
from tests.browser import PASSWORDS, operators_file
from tests.cli_helpers import crisscross

__all__ = ["PASSWORDS", "operators_file"]


def simulated_journal(path: Path, seed: int, rounds: int, **options: Any) -> list[dict[str, Any]]:
    """Play ``rounds`` simulated rounds into the journal at ``path`` (``options``: ``rating``, ``payout_errors``,
    ``mistakes`` of ``Service``); its records."""
    service = Service(load_table_config(), simulate=True, rounds=rounds, seed=seed, journal_path=path,
                      out=io.StringIO(), parts=SERVICE_PARTS, **options)
    try:
        assert service.run() == 0
    finally:
        service.close()
    return read_records(path)


def public(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records a table publishes (the control interface's filter, as the publisher applies it)."""
    return [p for p in (public_record(r) for r in records) if p is not None]


def store(dsn: str, table: str, records: list[dict[str, Any]]) -> None:
    """Write ``records`` (public, in order) of ``table`` into the store at ``dsn`` in one transaction, each after
    the last one the store holds of it, as the floor's store writes a batch of messages."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        migrate(conn)
        row = conn.execute("SELECT last_seq FROM tables WHERE table_id = %s", (table,)).fetchone()
        after = row[0] if row else 0
        messages = []
        for record in records:
            messages.append((table, "events", topics.encode({"table": table, "after": after, "record": record,
                                                             "simulated": True})))
            after = record["seq"]
        with conn.transaction():
            outcome = Writer().write(conn, messages)
    assert outcome.stored == len(records) and not outcome.held, outcome


def day_start_for(records: list[dict[str, Any]]) -> dt.time:
    """A gaming day's start (local time, whole hours) an hour before the first record: the records, played
    within minutes, and the test's own time fall in one gaming day."""
    first = dt.datetime.fromisoformat(records[0]["time"]).astimezone() - dt.timedelta(hours=1)
    return dt.time(first.hour, 0)


def meters_at(journal: Path, seq: int) -> dict[str, int]:
    """``crisscross meters`` of the journal as of record ``seq``: rounds closed, drop and win (lifetime)."""
    shown = crisscross("meters", "--journal", journal, "--at", seq, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    lifetime = json.loads(shown.stdout)["lifetime"]
    return {"rounds": lifetime["rounds_closed"], "drop": lifetime["drop"], "win": lifetime["win"]}


@contextmanager
def pit_served(dsn: str, folder: Path, start: dt.time, *, every: float = 0.5,
               silent_after: float = SILENT_AFTER, **config: Any):
    """The pit page on 127.0.0.1 (any free port) in this process for the block, its figures read every
    ``every`` seconds, a store silent after ``silent_after`` seconds without a write, sue (supervisor) and dan
    (dealer) in its operators file; ``config``: fields of ``ServeConfig`` to change. Yields the ``PitServer``."""
    settings = ServeConfig(operators_file(folder), "127.0.0.1", 0, **config)
    check_config(settings)
    poller = Poller(dsn, PitData(start, store_silent_after=silent_after), every)
    poller.first()
    reports = Reports(dsn, start, round_variance(load_jurisdiction("ny")))
    server = PitServer(settings, poller, reports)
    server.start()
    poller.start()
    try:
        yield server
    finally:
        server.stop()
        poller.stop()
        reports.close()


def request(server: Any, path: str, user: str | None = "sue", password: str | None = None, *,
            method: str = "GET", host: str | None = None, context: ssl.SSLContext | None = None,
            ) -> tuple[int, dict[str, str], bytes]:
    """``method path`` to ``server`` with ``user``'s credentials (their password of ``PASSWORDS`` unless
    ``password``; None: none sent) and the ``Host`` header ``host`` (default: the server's own); ``(status,
    headers in lower case, body)``."""
    port = server.port
    if context is not None:
        conn: http.client.HTTPConnection = http.client.HTTPSConnection("127.0.0.1", port, timeout=30,
                                                                        context=context)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Host": host or f"127.0.0.1:{port}"}
    if user is not None:
        secret = f"{user}:{PASSWORDS.get(user, '') if password is None else password}"
        headers["Authorization"] = "Basic " + base64.b64encode(secret.encode()).decode()
    try:
        conn.request(method, path, headers=headers)
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        conn.close()


def get_json(server: Any, path: str, user: str = "sue") -> Any:
    """``GET path`` as ``user``, which must answer 200; its JSON."""
    status, _, body = request(server, path, user)
    assert status == 200, (path, status, body[:300])
    return json.loads(body)
