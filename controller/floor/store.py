"""``crisscross floor store``: every table's public records from the floor's broker into PostgreSQL, exactly once by
(table, seq), in each table's order (docs/backoffice.md).

One thread (the caller's, ``FloorStore.run``) owns the MQTT client and the database connection:

- MQTT 5 with a persistent session (client id ``crisscross-store-NAME``, clean start off, session expiry 7 days):
  the broker keeps the subscriptions and queues every QoS 1 message published while the store is away, across
  its own restart when it keeps persistence. The store subscribes to ``{prefix}/+/events`` (every public
  record, ``SessionRated`` and ``SignificantEvent`` included: the ``sessions`` and ``significant`` topics carry
  the same records again, so they are stored from ``events``, in the chain's order, in their own tables),
  ``{prefix}/+/meters`` and ``{prefix}/+/status`` (QoS 1). A ``status`` (the retained one of each table at every
  subscription, then each change) is kept as its table's latest, with when the store took it and whether it was
  the retained one (``Writer.status``), in the transaction of its batch and acknowledged the same way; it never
  touches the records' rule.
- Acknowledged after the commit: the client acknowledges by hand (paho's ``manual_ack``), each message's PUBACK
  sent only once the transaction that wrote it (or found it a repeat) has committed, in the order received
  (MQTT 5.0, 4.6), a message on a topic not its own (``NOT_OURS``) and one whose topic is not UTF-8 text
  (``UNREADABLE``) included: each waits for the messages received before it. A crash, a lost connection or a
  database error before the commit leaves the message unacknowledged: the broker sends it again on the next
  connection of the session. A crash between the commit
  and the PUBACK makes it come twice: the second is a repeat by (table, seq) (``controller.floor.store_write``)
  and dropped. So nothing is lost and nothing is stored twice, whatever stops when.
- Bounded: the client's CONNECT says Receive Maximum ``WINDOW`` (MQTT 5.0, 3.1.2.11.3): the broker sends at most
  that many messages not yet acknowledged, so at most ``WINDOW`` wait here. Policy when full (the database
  slow or down): the store reads nothing more from the socket, the broker holds the rest in the session's queue
  (Mosquitto: ``max_queued_messages``); a broker that ignored the limit would be held back by TCP and, past the
  keep-alive, disconnected, and would send again every message not acknowledged.
- Batches of at most ``BATCH`` messages, one transaction each (``controller.floor.store_write.Writer``).
- Reconnection: a lost broker or database is tried again after ``RETRY_MIN`` seconds, doubling to ``RETRY_MAX``;
  a broker connection lost forgets the messages not acknowledged (they come again); a database error rolls the
  batch back and keeps its messages, written again once connected (never skipped: a batch refused for the
  database's own reasons, a privilege revoked or a database gone read-only, is logged and tried again, as the
  publisher never skips a record; only a message whose own data the database refuses alone is skipped,
  ``refused_for_data``).
- The schema is migrated at the first connection (``controller.floor.migrate``).
- Its own health (``controller.floor.store_health``): its row of ``store_health`` written at most every
  ``store_health.BEAT`` seconds, in the transaction of a batch or, holding nothing unwritten, in one of its own,
  and once more at a clean stop; a write that fails leaves the row as it was, which the pit page shows.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from controller.floor import store_health, topics
from controller.floor.migrate import migrate
from controller.floor.mqtt import CONNECT_TIMEOUT, connect, make_client
from controller.floor.report_tool import database_error
from controller.floor.store_write import SESSION_EXPIRY, Outcome, Writer
from controller.settings.floor import FloorConfig
from drivers.ratelog import LogLimiter

log = logging.getLogger(__name__)

#: Messages received and not yet acknowledged, at most (the CONNECT's Receive Maximum).
WINDOW = 512
#: Messages written in one transaction, at most.
BATCH = 256
#: Seconds between attempts to connect (broker or database): the first wait, doubled up to the last.
RETRY_MIN, RETRY_MAX = 0.5, 10.0
#: Seconds the thread waits on the broker's socket when there is nothing to write.
IDLE = 0.05
#: The kinds of topic the store subscribes to.
KINDS = ("events", "meters", "status")
#: The kind given to a message whose topic is not UTF-8 text (``topics.received_topic``): the writer skips and
#: counts it as not in the floor's format (``Writer.write``); acknowledged with its batch, in the order received.
UNREADABLE = ""
#: The kind given to a message on a topic not the store's own (another prefix, or a kind it does not keep: a
#: subscription of an older store kept in the session): never written nor counted, acknowledged with its batch, in
#: the order received (MQTT 5.0, 4.6: PUBACKs in the order the PUBLISHes came).
NOT_OURS = "-"


class Received(NamedTuple):
    """A message taken from the broker and not acknowledged yet: its packet id and QoS (for the PUBACK), its
    table and kind of topic (``KINDS``, ``UNREADABLE`` or ``NOT_OURS``), its payload, when the store took it
    (aware, the store's clock) and whether it was a retained message sent at the subscription."""

    mid: int
    qos: int
    table: str
    kind: str
    payload: bytes
    at: dt.datetime
    retained: bool


class Backoff:
    """When to try a connection again: ``due()``; ``failed()`` doubles the wait from ``RETRY_MIN`` to
    ``RETRY_MAX``, ``succeeded()`` starts it again."""

    def __init__(self) -> None:
        self.wait, self.at = RETRY_MIN, 0.0

    def due(self) -> bool:
        return time.monotonic() >= self.at

    def failed(self) -> float:
        """Schedule the next attempt; the seconds until it."""
        wait = self.wait
        self.at = time.monotonic() + wait
        self.wait = min(wait * 2, RETRY_MAX)
        return wait

    def succeeded(self) -> None:
        self.wait, self.at = RETRY_MIN, 0.0


class FloorStore:
    """The consumer (module docstring) for the broker of ``config`` and the database of ``dsn`` (a libpq
    connection string or ``postgresql://`` URL). ``name``: the session's name (one store per name). ``join_late``:
    ``Writer``. ``connect_db``: how to open a database connection (default ``psycopg.connect``; tests).
    ``beat``: seconds between two writes of its health (``store_health.BEAT``)."""

    def __init__(self, config: FloorConfig, dsn: str, *, name: str = "store", join_late: bool = False,
                 window: int = WINDOW, batch: int = BATCH, beat: float = store_health.BEAT,
                 connect_db: Callable[[str], Any] | None = None) -> None:
        if not 1 <= batch <= window <= 65535:
            raise ValueError(f"expected 1 <= batch ({batch}) <= window ({window}) <= 65535")
        self.config, self.dsn, self.window, self.batch = config, dsn, window, batch
        self.client_id = f"crisscross-store-{name}"
        self.writer = Writer(join_late)
        self._connect_db = connect_db or _psycopg_connect
        self._client: Any = None
        self._db: Any = None
        self._migrated = False
        self.connected = False
        #: whether the broker accepted a connection and the database opened, at least once since the start
        self.ever = {"broker": False, "database": False}
        #: the broker acknowledged the subscriptions of the current connection (SUBACK)
        self.subscribed = False
        #: messages received, in order, not acknowledged yet (at most ``window``)
        self.pending: list[Received] = []
        self._broker_retry, self._db_retry = Backoff(), Backoff()
        self._connected_at = 0.0
        self._lost = False
        self._subacks = 0
        self._refusals = LogLimiter(log, interval=60.0)
        #: what the store did since it started (``Outcome`` summed), batches written, and batch writes the database
        #: refused (each rolled back, its messages kept to be written again)
        self.total = Outcome()
        self.batches = 0
        self.refused = 0
        #: messages received and never written, given back to the broker at a close (``close``)
        self.unwritten = 0
        #: messages still to write one a transaction after a batch the database refused for its data, and those
        #: it refused alone (``_flush``)
        self._isolating = 0
        self.skipped = 0
        #: its health (``store_health.Beat``): when it started, where it runs, and when its row was last written
        #: (``time.monotonic()``; None before the first)
        self.started_at = dt.datetime.now(dt.timezone.utc)
        self.host, self.pid, self.beat = socket.gethostname(), os.getpid(), beat
        self.beat_at: float | None = None

    # ------------------------------------------------------------------ running
    def run(self, stop: threading.Event) -> None:
        """Store until ``stop`` is set; then write what was received when the database is there, disconnect
        (the session stays on the broker) and close the database connection."""
        try:
            while not stop.is_set():
                self.turn(stop)
            if self.pending and self._db is not None:
                self._flush()
        finally:
            self.close()

    def turn(self, stop: threading.Event | None = None) -> None:
        """One turn: connect what is due, exchange with the broker, write a batch and acknowledge it."""
        if self._db is None and self._db_retry.due():
            self._open_db()
        if self._db is not None and not self.pending and self._beat_due():
            self._write_health()  # idle: a transaction of its own (with messages, their batch's carries it)
        if self._client is None and self._broker_retry.due():
            self._open_broker()
        if self._client is None:
            (stop or threading.Event()).wait(min(IDLE * 4, max(self._broker_retry.at - time.monotonic(), 0.0)))
            return
        if len(self.pending) < self.window:
            self._client.loop(timeout=0.0 if self.pending and self._db is not None else IDLE)
            while self.pending and len(self.pending) < min(self.window, self.batch) and not self._lost:
                taken = len(self.pending)
                self._client.loop_read()  # what the socket holds already joins the batch (never waits)
                if len(self.pending) == taken:
                    break
        else:  # full (module docstring): nothing more is read until a batch is written
            self._client.loop_write()
            self._client.loop_misc()
            if self._db is None:
                (stop or threading.Event()).wait(IDLE)
        if self._lost:
            self._drop_broker()
            return
        if not self.connected and time.monotonic() - self._connected_at > CONNECT_TIMEOUT:
            log.warning("floor store: broker %s:%s did not answer CONNECT within %s s", self.config.broker,
                        self.config.port, CONNECT_TIMEOUT)
            self._drop_broker()
            return
        if self.pending and self._db is not None:
            self._flush()

    def close(self) -> None:
        """Say the store stopped in its health row (when the database is there), disconnect from the broker (the
        session stays) and close the database connection."""
        if self._db is not None:
            self._write_health(stopped=True)
        client, self._client = self._client, None
        if client is not None:
            try:
                client.disconnect()
                client.loop(timeout=0.0)
            except Exception as exc:  # noqa: BLE001 - already gone: said, not raised
                log.debug("floor store: disconnect: %s", exc)
            if client.socket():
                client.socket().close()
        self.connected = False
        self.unwritten += len(self.pending)  # unacknowledged: the broker sends them again to the next start
        self.pending.clear()
        self._close_db()

    # ------------------------------------------------------------------ the database
    def _open_db(self) -> None:
        db = None
        try:
            db = self._connect_db(self.dsn)
            if not self._migrated:
                applied = migrate(db)
                if applied:
                    log.info("floor store: schema migrated: %s", ", ".join(applied))
                self._migrated = True
        except Exception as exc:  # noqa: BLE001 - psycopg's errors, a refused migration: logged, tried again
            self._db = db
            self._close_db()
            wait = self._db_retry.failed()
            self._refusals.log(logging.ERROR, "floor store database", "floor store: database %s: %s; trying again "
                               "in %.1f s", _where(self.dsn), str(exc).strip(), wait)
            return
        self._db = db
        self.ever["database"] = True
        self._db_retry.succeeded()
        log.info("floor store: database %s connected", _where(self.dsn))

    def _close_db(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            try:
                db.close()
            except Exception as exc:  # noqa: BLE001 - a broken connection: said, not raised
                log.debug("floor store: database close: %s", exc)

    def _flush(self) -> None:
        """Write the oldest batch in one transaction; acknowledge its messages once committed.

        A batch the database refuses for its data (``refused_for_data``) is written again one message a
        transaction (``_isolating`` messages): a message the database refuses alone is a table's defect, not the
        floor's: logged with its table and topic, acknowledged and counted as not in the floor's format
        (``skipped``), so that one table's message never stops the store for every table. A batch refused for any
        other reason (a lost connection, a privilege revoked, a database gone read-only) is the database's: nothing
        of it is skipped, and it is written again after ``Backoff``'s wait."""
        batch = self.pending[:1 if self._isolating else self.batch]
        beat = self._beat_due()
        try:
            with self._db.transaction():
                outcome = self.writer.write(self._db, [(m.table, m.kind, m.payload) for m in batch
                                                       if m.kind not in ("status", NOT_OURS)])
                for m in batch:  # in the order received: a table's latest status is the last one written
                    if m.kind == "status":
                        self.writer.status(self._db, m.table, topics.topic(self.config.prefix, m.table, m.kind),
                                           m.payload, m.at, m.retained, outcome)
                if beat:  # the health row commits with the batch, or not at all
                    store_health.write(self._db, self._health(len(self.pending) - len(batch), outcome))
        except Exception as exc:  # noqa: BLE001 - rolled back; its messages kept and written again
            self.refused += 1
            if refused_for_data(exc):
                if len(batch) > 1:  # which message: each alone from now, as many as the batch held
                    self._isolating = len(batch)
                    log.warning("floor store: the database refused a batch of %d message(s) for its data (%s): "
                                "writing them one at a time", len(batch), type(exc).__name__)
                else:
                    self._skip(batch[0], exc)
                self._close_db()
                return
            wait = self._db_retry.failed()
            self._refusals.log(logging.ERROR, "floor store batch", "floor store: a batch of %d message(s) was not "
                               "written (%s: %s); nothing of it acknowledged, trying again in %.1f s", len(batch),
                               type(exc).__name__, str(exc).strip(), wait)
            self._close_db()
            return
        if beat:
            self.beat_at = time.monotonic()
        for m in batch:
            self._client.ack(m.mid, m.qos)
        del self.pending[:len(batch)]
        self._isolating = max(0, self._isolating - len(batch))
        self.batches += 1
        for name in ("stored", "repeats", "held", "gaps", "foreign", "statuses", "before_join", "meters_unknown"):
            setattr(self.total, name, getattr(self.total, name) + getattr(outcome, name))
        self.total.tables |= outcome.tables

    def _beat_due(self) -> bool:
        return self.beat_at is None or time.monotonic() - self.beat_at >= self.beat

    def _health(self, pending: int, outcome: Outcome | None = None, stopped: bool = False) -> store_health.Beat:
        """The store's ``store_health.Beat`` with ``pending`` messages unwritten, ``outcome`` (the batch of the
        write's transaction) counted in."""
        batch = outcome or Outcome()
        return store_health.Beat(self.client_id, self.host, self.pid, self.started_at, pending,
                                 self.total.stored + batch.stored, self.total.foreign + batch.foreign, self.refused,
                                 self.subscribed, stopped)

    def _write_health(self, stopped: bool = False) -> None:
        """Write the store's health row in a transaction of its own (``stopped``: at a clean stop). A database that
        refuses it is logged and tried again after ``Backoff``'s wait; the row keeps its last write."""
        try:
            with self._db.transaction():
                store_health.write(self._db, self._health(len(self.pending), stopped=stopped))
        except Exception as exc:  # noqa: BLE001 - psycopg's errors: the row not written is the signal; logged
            wait = self._db_retry.failed()
            self._refusals.log(logging.ERROR, "floor store health", "floor store: its health row was not written "
                               "(%s); trying again in %.1f s", database_error(exc), wait)
            self._close_db()
            return
        self.beat_at = time.monotonic()

    def _skip(self, message: Received, exc: Exception) -> None:
        """Acknowledge ``message`` unwritten: the database refused it alone (``_flush``)."""
        self._client.ack(message.mid, message.qos)
        self.pending.remove(message)
        self._isolating = max(0, self._isolating - 1)
        self.total.foreign += 1
        self.skipped += 1
        log.error("floor store: table %s: a %s message the database refuses (%s) is skipped, acknowledged and "
                  "counted as not in the floor's format", message.table, message.kind, database_error(exc))

    # ------------------------------------------------------------------ the broker
    def _open_broker(self) -> None:
        client = make_client(self.config, self.client_id)
        client.manual_ack_set(True)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_subscribe = self._on_subscribe
        self._lost = False
        try:
            connect(client, self.config, clean_start=False, session_expiry=SESSION_EXPIRY,
                    receive_maximum=self.window)
        except (OSError, ValueError) as exc:
            wait = self._broker_retry.failed()
            self._refusals.log(logging.WARNING, "floor store broker", "floor store: broker %s:%s not reachable "
                               "(%s); trying again in %.1f s", self.config.broker, self.config.port, exc, wait)
            return
        self._client = client
        self._connected_at = time.monotonic()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            self._refusals.log(logging.ERROR, "floor store refused", "floor store: broker %s:%s refused the "
                               "connection: %s", self.config.broker, self.config.port, reason)
            self._lost = True
            return
        self.connected = True
        self.ever["broker"] = True
        self._subacks = 0
        self._broker_retry.succeeded()
        for kind in KINDS:  # again on a session kept: harmless, and a new kind is subscribed
            client.subscribe(topics.every_table(self.config.prefix, kind), qos=1)
        log.info("floor store: connected to %s:%s (session %s%s)", self.config.broker, self.config.port,
                 self.client_id, ", kept" if flags.session_present else ", new")

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, reasons: Any, properties: Any) -> None:
        if any(reason.is_failure for reason in reasons):
            self._refusals.log(logging.ERROR, "floor store subscription", "floor store: broker %s:%s refused the "
                               "subscription: %s", self.config.broker, self.config.port, reasons)
            return
        self._subacks += 1
        self.subscribed = self._subacks >= len(KINDS)

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        self._lost = True

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        name = topics.received_topic(message)
        if name is None:  # not the floor's format: skipped and counted in its turn, acknowledged in order
            self.pending.append(Received(message.mid, message.qos, "", UNREADABLE, message.payload,
                                         dt.datetime.now(dt.timezone.utc), bool(message.retain)))
            return
        where = topics.split(self.config.prefix, name)
        if where is None or where[1] not in KINDS:  # not ours to keep: acknowledged in its turn all the same
            where = (where[0] if where is not None else "", NOT_OURS)
        self.pending.append(Received(message.mid, message.qos, where[0], where[1], message.payload,
                                     dt.datetime.now(dt.timezone.utc), bool(message.retain)))

    def _drop_broker(self) -> None:
        """Forget the connection and every message not acknowledged: the broker sends them again."""
        if self.connected:
            log.warning("floor store: connection to %s:%s lost; %d message(s) not acknowledged come again",
                        self.config.broker, self.config.port, len(self.pending))
        client, self._client = self._client, None
        if client is not None and client.socket():
            client.socket().close()
        self.connected = self.subscribed = False
        self.pending.clear()
        self._broker_retry.failed()


def refused_for_data(exc: BaseException) -> bool:
    """True when the database refused a write for the data it was given, which a message's own content can cause:
    SQLSTATE class 22 (data exception: ``psycopg.DataError``), 23 (integrity constraint violation:
    ``psycopg.IntegrityError``) or 54 (program limit exceeded: a value too large for an index, such as a table id
    of thousands of characters); PostgreSQL's Appendix A, "Error Codes". False for every other refusal: the
    connection lost (class 08, 57), a privilege revoked (42501), a database read-only (25006), a lock or a deadlock
    (55, 40), which no message causes and none may be skipped for."""
    import psycopg

    return isinstance(exc, (psycopg.DataError, psycopg.IntegrityError)) or (
        isinstance(exc, psycopg.Error) and str(exc.sqlstate or "").startswith("54"))


def _psycopg_connect(dsn: str) -> Any:
    """A psycopg 3 connection to ``dsn`` in autocommit mode (every write in an explicit transaction)."""
    import psycopg

    return psycopg.connect(dsn, autocommit=True, connect_timeout=int(CONNECT_TIMEOUT))


def _where(dsn: str) -> str:
    """``host:port/dbname`` of ``dsn`` for a log line: never its password."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 - a string psycopg cannot read: named without its contents
        return "(a connection string that cannot be read)"
    return f"{parts.get('host', 'localhost')}:{parts.get('port', 5432)}/{parts.get('dbname', '')}"
