"""The table's publisher to the floor: the journal is the outbox (docs/floor.md, "The publisher").

One thread (``floor-publisher``) owns the MQTT client and everything below; the controller thread only hands
it the round's latest view (``publish_view``: an immutable text and a wake-up, never waiting), so a broker that
is slow, down or unreachable never slows or stops the table.

- It reads the journal store through its own read-only connection (SQLite WAL: the controller's commits go on),
  in batches of at most ``BATCH`` records after the last one it published, and publishes each public record
  (``controller.control.server.public_record``: the control interface's secrecy filter, one rule in one place) to
  ``events`` (QoS 1), each hole-card ``Alert`` and ``AlertAcknowledged`` to ``alerts`` (QoS 1; never on ``events``), and at each round
  close the chain head and keyed anchor to ``anchors`` (``controller.floor.topics``).
- A turn publishes the records first and reads the broker's acknowledgements after; its messages leave
  together (``_corked``: one TCP segment on Linux) on a socket with ``TCP_NODELAY`` (no message waits for the
  ACK of the one before).
- At most ``WINDOW`` messages wait for the broker's PUBACK. Progress is the last journal seq whose messages are
  all acknowledged; it is kept in ``<journal>.floor`` (``Progress``), per broker and prefix, written by a thread
  of its own (``ProgressWriter``). On a lost connection everything unacknowledged is forgotten and, once
  connected again, published again from the record after that seq: never out of order, possibly twice
  (consumers dedupe by table and seq). A broker down for a day costs nothing here: the records wait in the
  journal, which keeps them anyway.
- Connection attempts back off from ``RETRY_MIN`` to ``RETRY_MAX`` seconds, doubling at each connection lost
  or refused; only a journal record the broker acknowledged starts the back-off again (a CONNACK does not: a
  broker that accepts the connection and refuses every record was once tried every 0.5 s, with thousands of
  ERROR lines). Refusals are logged at a bounded rate (``drivers.ratelog.LogLimiter``). Each new connection
  is a clean start with the last will ``offline`` (retained) on ``status`` and then ``online``.

Why a side file and not a table in the journal store: the store is append-only (triggers refuse UPDATE and
DELETE), so a progress row would be a new row per acknowledgement, growing the store forever; and a second
writer on the store would take SQLite's one write lock between the controller's commits, delaying a press.
The side file is written by the progress writer's thread alone, replaced atomically, not fsynced: a power cut
that loses it only makes records be published again, which consumers dedupe.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.control.server import RECORD_KEYS, public_record
from controller.floor import topics
from controller.floor.packets import Fitter
from controller.floor.topics import SIMULATED_SUFFIX
from controller.floor.mqtt import CONNECT_TIMEOUT, connect, make_client
from controller.journal import key as jkey
from controller.round.meters import Meters
from controller.round.significant import SIGNIFICANT_EVENT
from controller.settings.floor import FloorConfig, read_password
from controller.settings.secret_files import read_regular
from controller.settings.text import path_shown
from drivers.ratelog import LogLimiter

log = logging.getLogger(__name__)

#: Most journal records read at once.
BATCH = 256
#: Most messages published and not yet acknowledged by the broker.
WINDOW = 128
#: Seconds between connection attempts: the first wait, doubled up to the last.
RETRY_MIN, RETRY_MAX = 0.5, 10.0
#: Seconds the thread waits for work when there is none (a commit wakes it at once).
IDLE = 0.05
#: Seconds after which the journal is read again without a wake-up.
POLL = 1.0
#: Seconds at least between two writes of the progress file (``ProgressWriter``).
SAVE_EVERY = 0.5
#: Seconds ``stop`` lets the publisher catch up with the journal before it says ``offline``.
DRAIN = 3.0
#: Public record types published on a topic of their own as well as on ``events`` (topics.py).
OWN_TOPICS = {SIGNIFICANT_EVENT: "significant", "SessionRated": "sessions"}
#: Largest packet published (bytes: the whole PUBLISH, ``packets.publish_size``), or the broker's own Maximum Packet Size
#: when its CONNACK gives a smaller one (MQTT 5.0, 3.2.2.3.6: a client never sends a larger packet; Mosquitto's
#: ``max_packet_size`` disconnects one that does), so such a message would stop the floor for good. A message
#: beyond it is published as a marked stub (``packets.STUBBED``; ``oversized``: the full payload's size in bytes): the
#: consumer fetches what it left out from the journal or the control interface. One that does not fit even as a
#: stub is not sent (logged; a record's message counts as published, so the records after it go on).
MAX_MESSAGE = 65536
#: The MQTT 5 reason code of a PUBACK for a packet the broker takes as too large (MQTT 5.0, 2.4).
PACKET_TOO_LARGE = 0x95
#: Record types that close a round: the next checkpoint's head is published as an anchor.
ROUND_ENDS = frozenset({"RoundClosed", "RoundVoided"})
#: The records that enter and leave test mode (NY 9 NYCRR 5319.58, ``controller.round.table_locks``): every message
#: of a record from the first to the second, both included, carries ``"test": true``.
TEST_MODE = ("TestModeEntered", "TestModeLeft")


@contextlib.contextmanager
def _corked(sock: Any) -> Any:
    """Hold back what is written to the TCP socket ``sock`` inside the block and send it together at its end
    (Linux ``TCP_CORK``, tcp(7)): a turn's messages leave as one segment, not one each. Where the option is
    missing or refused (another system; no socket), the block runs as it is."""
    corked = False
    if sock is not None and hasattr(socket, "TCP_CORK"):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
            corked = True
        except OSError:
            corked = False
    try:
        yield
    finally:
        if corked:
            with contextlib.suppress(OSError):  # the connection went meanwhile: the loop finds it lost
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 0)


#: Largest progress file read (bytes): two numbers per destination, a few dozen bytes each.
PROGRESS_BYTES = 1 << 20


def progress_path(journal: Path) -> Path:
    """Where the publisher keeps its progress for the journal store at ``journal``: ``<journal>.floor``."""
    return jkey.beside(journal, ".floor")


class Progress:
    """The last journal seq fully acknowledged (``seq``) and the last public record's seq at or before it
    (``public``, the next event's ``after``), per destination (``broker:port/prefix``) in a JSON file. A file
    that cannot be read starts again from the first record (logged): republishing is harmless, losing is not."""

    def __init__(self, path: Path, destination: str) -> None:
        self.path, self.shown, self.destination = Path(path), path_shown(path), destination
        self.seq, self.public = 0, 0
        self._all: dict[str, Any] = {}
        try:  # a link to /dev/zero or a pipe in its place is refused, not read (``read_regular``)
            data, _ = read_regular(self.path, PROGRESS_BYTES + 1)
            if len(data) > PROGRESS_BYTES:
                raise ValueError(f"larger than {PROGRESS_BYTES:,} bytes")
            self._all = json.loads(data.decode("utf-8"))
            mine = self._all.get(destination, {})
            self.seq, self.public = int(mine.get("seq", 0)), int(mine.get("public", 0))
        except FileNotFoundError:  # nothing acknowledged yet: publish from the journal's start
            self.seq, self.public = 0, 0
        except (OSError, ValueError, AttributeError, TypeError) as exc:
            log.warning("floor: %s cannot be read (%s): publishing from the journal's first record", self.shown, exc)
            self._all = {}

    def save(self, seq: int, public: int) -> None:
        """Record ``seq`` and ``public`` (written to a new file, then renamed over the old one). Raises
        ``OSError``."""
        self.seq, self.public = seq, public
        self._all = {**self._all, self.destination: {"seq": seq, "public": public}}
        temporary = self.path.with_name(self.path.name + ".new")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(self._all, handle, sort_keys=True)
        os.replace(temporary, self.path)


class ProgressWriter:
    """Writes a ``Progress`` on a thread of its own (``floor-progress``, started at the first ``offer``), so a
    slow disk never holds a record on its way to the broker: ``offer`` hands it the latest acknowledged ``(seq,
    public)`` and returns at once; the thread writes the latest offered, at most once every ``SAVE_EVERY``
    seconds. ``close`` writes what was offered last and joins the thread. A write refused (``OSError``) is logged:
    a restart then publishes those records again."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self._offered: tuple[int, int] | None = None
        self._closing = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def offer(self, seq: int, public: int) -> None:
        """Have ``seq`` and ``public`` (``Progress.save``) written soon; never waits for the disk."""
        with self._changed:
            self._offered = (seq, public)
            if self._thread is None and not self._closing:
                self._thread = threading.Thread(target=self._run, name="floor-progress", daemon=True)
                self._thread.start()
            self._changed.notify()

    def close(self) -> None:
        """Join the thread and write what was offered last (on the caller's thread); a later ``offer`` starts a new
        thread."""
        with self._changed:
            self._closing = True
            self._changed.notify()
            thread = self._thread
        if thread is not None:
            thread.join()
        self._write_offered()
        with self._changed:  # a publisher started again offers to a new thread
            self._closing, self._thread = False, None

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._offered is not None or self._closing)
                if self._closing:
                    return  # close writes the last offer
            self._write_offered()
            with self._changed:
                self._changed.wait_for(lambda: self._closing, SAVE_EVERY)

    def _write_offered(self) -> None:
        with self._changed:
            offered, self._offered = self._offered, None
        if offered is None or offered == (self.progress.seq, self.progress.public):
            return
        try:
            self.progress.save(*offered)
        except OSError as exc:
            log.warning("floor: cannot write %s (%s): a restart publishes those again", self.progress.shown, exc)


@dataclass
class _Sent:
    """One message waiting for its PUBACK: its ``mid``, the journal ``seq`` it carries and, for an event, that
    seq as the next ``after``."""

    mid: int
    seq: int
    public: int | None
    acked: bool = False


class Publisher:
    """The floor publisher of one table (module docstring).

    ``config``: ``floor:`` of table.yaml; ``table_id``; ``journal``: the store's path (it must exist: the
    service opened it first); ``key``: the journal key for the keyed anchor (None: ``mac`` null); ``simulated``:
    simulated play, published under ``table_id + SIMULATED_SUFFIX`` with ``"simulated": true`` in every JSON
    message (events, alerts, anchors, the view), never under the table's own id. The password
    file is read here: ``ConfigError`` (``controller.settings.floor.read_password``) before anything starts. ``start``
    starts the thread; ``stop`` lets it catch up for up to ``drain`` seconds, says ``offline`` and joins it.
    ``acked`` is the last journal seq whose messages the broker acknowledged, ``connected`` whether a
    connection is up, ``published`` the messages sent (repeats included); read them from any thread (plain
    values written by the publisher's thread only).
    """

    def __init__(self, config: FloorConfig, table_id: str, journal: Path, *, key: bytes | None = None,
                 batch: int = BATCH, window: int = WINDOW, client_id: str | None = None,
                 simulated: bool = False) -> None:
        self.config = config
        self.simulated = simulated
        table_id = table_id + SIMULATED_SUFFIX if simulated else table_id
        self.table_id = table_id
        self.journal = Path(journal)
        self.key = key
        self.batch = batch
        self.window = window
        self.client_id = client_id or f"crisscross-table-{table_id}"
        self._password = read_password(config)
        self.progress = Progress(progress_path(self.journal),
                                 f"{config.broker}:{config.port}/{config.prefix}")
        self.acked = self.progress.seq
        self.connected = False
        self.published = 0
        self._topics = {kind: topics.topic(config.prefix, table_id, kind) for kind in topics.KINDS}
        self._view: tuple[int, str] | None = None  # (seq, view as JSON text): replaced whole, never changed
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._drain_until = 0.0
        self._thread: threading.Thread | None = None
        # the publisher thread's own state
        self._client: Any = None
        self._pending: collections.deque[_Sent] = collections.deque()
        self._by_mid: dict[int, _Sent] = {}
        self._scanned = self.acked  # every message of the records up to this seq was published
        self._after = self.progress.public  # the last public seq published (the next event's ``after``)
        self._acked_public = self.progress.public
        self._round_ended: bool | None = None  # a round end was read and its anchor is not published yet (None: look)
        self._testing: bool | None = None  # the records read are of test mode (None: look; ``_test_mode_at``)
        self._view_sent: tuple[int, str] | None = None
        self._retry = RETRY_MIN
        self._stubbed: set[int] = set()  # seqs the broker refused as too large: published as stubs
        self._alone: int | None = None  # a refused record's seq: sent alone until the broker acknowledged it
        self._refusals = LogLimiter(log)  # the broker's refusals, at most a few lines per interval
        # the broker's Maximum Packet Size, when its CONNACK says a smaller one than ``MAX_MESSAGE``
        self._fit = Fitter(self._topics, MAX_MESSAGE, self._refusals)
        self._next_try = 0.0
        self._writer = ProgressWriter(self.progress)
        self._db: sqlite3.Connection | None = None
        self._lost = False
        self._more = True  # the journal may hold records not read yet
        self._poll_at = 0.0
        self._connected_at = 0.0

    # ------------------------------------------------------------------ from the controller thread
    def publish_view(self, view: dict[str, Any], seq: int) -> None:
        """Take the round's latest ``view`` (``Round.view()``), which reflects the journal up to record ``seq``,
        and wake the thread: it publishes the latest view (retained, on ``state``) once the records up to ``seq``
        are published, and reads the journal's new records. Never waits; a view that is not JSON is logged and
        left out."""
        try:
            self._view = (seq, json.dumps(view, separators=(",", ":"), ensure_ascii=False))
        except (TypeError, ValueError):
            log.exception("floor: the round's view is not JSON; the previous one stays")
        self._wake.set()

    def start(self) -> None:
        """Start the publisher thread (non-daemon, ``floor-publisher``)."""
        self._thread = threading.Thread(target=self._run, name="floor-publisher")
        self._thread.start()

    def stop(self, drain: float = DRAIN) -> None:
        """Let the thread publish what the journal holds for up to ``drain`` seconds while connected, then say
        ``offline`` and join it (idempotent). A connection attempt in progress is waited for (at most
        ``controller.floor.mqtt.CONNECT_TIMEOUT``)."""
        self._drain_until = time.monotonic() + drain
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    # ------------------------------------------------------------------ the publisher thread
    def _run(self) -> None:
        try:
            while True:
                if self._stopping.is_set() and (not self.connected or self._caught_up()
                                                or time.monotonic() >= self._drain_until):
                    break  # not connected: the records wait in the journal for the next start
                try:
                    self._turn()
                except Exception:  # noqa: BLE001 - a defect here must never reach the table: logged, retried
                    log.exception("floor: publisher error; connecting again")
                    self._drop()
                    self._stopping.wait(RETRY_MIN)
        finally:
            self._close()

    def _turn(self) -> None:
        """One turn: connect when due, exchange with the broker, publish what the window allows, wait a little."""
        if self._client is None:
            if time.monotonic() < self._next_try or not self._connect():
                self._stopping.wait(min(IDLE * 4, max(self._next_try - time.monotonic(), 0.0)))
                return
        sent = False
        if self.connected and not self._lost:  # the records first: the acknowledgements can wait a turn
            if self._wake.is_set():  # a commit since the last look
                self._wake.clear()
                self._more = True
            if time.monotonic() >= self._poll_at:  # a record committed without a view (the service's last one)
                self._more = True
            with _corked(self._client.socket()):
                sent = self._fill() if self._more else False
                self._send_view()
        self._client.loop(timeout=0.0)
        if self._lost:
            self._drop()
            return
        if not self.connected:  # CONNACK not in yet
            if time.monotonic() - self._connected_at > CONNECT_TIMEOUT:  # a broker that accepts and never answers
                log.warning("floor: broker %s:%s did not answer CONNECT within %s s", self.config.broker,
                            self.config.port, CONNECT_TIMEOUT)
                self._drop()
                return
            self._client.loop(timeout=IDLE)
            return
        self._settle()
        if not sent:
            if len(self._pending) >= self.window:
                self._client.loop(timeout=IDLE)  # waiting for acknowledgements: wait on the socket
            elif not self._wake.is_set():
                self._wake.wait(IDLE)

    def _connect(self) -> bool:
        client = make_client(self.config, self.client_id, password=self._password)
        client.max_inflight_messages_set(self.window + 4)  # ours bound it; paho must not hold any back
        client.max_queued_messages_set(self.window + 4)
        client.will_set(self._topics["status"], topics.OFFLINE, qos=1, retain=True)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        self._lost = False
        try:
            connect(client, self.config)
        except (OSError, ValueError) as exc:  # refused, unreachable, timed out, TLS refused, a bad name
            if self._retry == RETRY_MIN or self._retry >= RETRY_MAX:
                log.warning("floor: broker %s:%s not reachable (%s); the journal keeps the records",
                            self.config.broker, self.config.port, exc)
            self._next_try = time.monotonic() + self._retry
            self._retry = min(self._retry * 2, RETRY_MAX)
            return False
        with contextlib.suppress(OSError, AttributeError):  # a message leaves when written, never held for an ACK
            client.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._client = client
        self._connected_at = time.monotonic()
        return True

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            self._refusals.log(logging.ERROR, "floor connection refused", "floor: broker %s:%s refused the "
                               "connection: %s", self.config.broker, self.config.port, reason)
            self._lost = True
            return
        self.connected = True  # the back-off starts again only once a record is acknowledged (_on_publish)
        self._fit.max_packet = min(MAX_MESSAGE, getattr(properties, "MaximumPacketSize", None) or MAX_MESSAGE)
        log.info("floor: connected to %s:%s, publishing from journal record %d", self.config.broker,
                 self.config.port, self.acked + 1)
        if self._fit.fits("status", topics.ONLINE, "the online status"):
            client.publish(self._topics["status"], topics.ONLINE, qos=1, retain=True)

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        self._lost = True

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any, properties: Any) -> None:
        sent = self._by_mid.pop(mid, None)
        if sent is None:
            return  # the status, the view, or a message of a connection given up
        if reason.is_failure:  # not authorised, quota: never skipped, sent again on a new connection, alone
            self._alone = sent.seq
            if getattr(reason, "value", None) == PACKET_TOO_LARGE:
                self._stubbed.add(sent.seq)
            self._refusals.log(logging.ERROR, "floor record refused", "floor: the broker refused journal record %d: "
                               "%s; connecting again in %.1f s", sent.seq, reason, self._retry)
            self._lost = True
            return
        sent.acked = True
        self._retry = RETRY_MIN  # the broker takes records: a lost connection is tried again soon

    def _drop(self) -> None:
        """Forget the connection and every unacknowledged message: the next connection starts from ``acked``."""
        if self._client is not None:
            try:
                self._client.disconnect()
                self._client.loop(timeout=0.0)
            except Exception as exc:  # noqa: BLE001 - the socket may be gone already: said, not raised
                log.debug("floor publisher: disconnect: %s", exc)
            self._client.socket() and self._client.socket().close()
        if self.connected:
            log.warning("floor: connection to %s:%s lost; publishing again from journal record %d",
                        self.config.broker, self.config.port, self.acked + 1)
        self._client = None
        self.connected = False
        self._pending.clear()
        self._by_mid.clear()
        self._scanned, self._after = self.acked, self._acked_public
        self._round_ended = None
        self._testing = None
        self._view_sent = None
        self._more = True
        self._next_try = time.monotonic() + self._retry
        self._retry = min(self._retry * 2, RETRY_MAX)

    def _reader(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = sqlite3.connect(f"file:{self.journal.absolute()}?mode=ro", uri=True, check_same_thread=False)
        return self._db

    def _fill(self) -> bool:
        """Publish the records after ``_scanned`` while the window has room; True when any was read. After a
        refusal the window is one message until the refused record is acknowledged: nothing later overtakes it."""
        alone = self._alone is not None and self.acked < self._alone
        room = (1 if alone else self.window) - len(self._pending)
        if room <= 0:
            return False
        # the rows as stored (their spelling is checked by the service's start and by ``journal verify``)
        rows = self._reader().execute("SELECT seq, time, kind, round, type, data FROM records WHERE seq > ? "
                                      "ORDER BY seq LIMIT ?", (self._scanned, min(self.batch, room))).fetchall()
        records = [{"seq": seq, "time": time_, "kind": kind, "round": round_no, "type": type_, "data": json.loads(data)}
                   for seq, time_, kind, round_no, type_, data in rows]
        self._more = len(records) == min(self.batch, room)  # else the journal's end: until the next wake-up
        self._poll_at = time.monotonic() + POLL
        if self._round_ended is None and records:
            self._round_ended = self._round_end_before(records[0]["seq"])
        if self._testing is None and records:
            self._testing = self._test_mode_at(records[0]["seq"])
        anchors = {}
        if records and (self._round_ended or any(record["type"] in ROUND_ENDS for record in records)):
            anchors = {row[0]: row for row in self._reader().execute(
                "SELECT seq, round, head FROM checkpoints WHERE seq >= ? AND seq <= ?",
                (records[0]["seq"], records[-1]["seq"]))}
        for record in records:
            seq = record["seq"]
            if record["type"] == TEST_MODE[0]:
                self._testing = True
            public = public_record(record)
            if public is not None:
                self._send("events", {"table": self.table_id, "after": self._after, "record": public}, seq, seq)
                self._after = seq
                if record["type"] in OWN_TOPICS:  # its own topic too (topics.py)
                    self._send(OWN_TOPICS[record["type"]], {"table": self.table_id, "record": public}, seq, None)
            elif record["type"] in topics.ALERT_TYPES:  # supervisors' eyes only: its own topic, the broker's ACL guards it
                self._send("alerts", {"table": self.table_id, "record": {k: record[k] for k in RECORD_KEYS}}, seq,
                           None)
            if record["type"] == TEST_MODE[1]:  # the record that leaves test mode is the last marked
                self._testing = False
            if record["type"] in ROUND_ENDS:
                self._round_ended = True
            if self._round_ended and seq in anchors:  # the checkpoint written with the round's close
                self._send_anchor(*anchors[seq])
            self._scanned = seq
        return bool(records)

    def _test_mode_at(self, seq: int) -> bool:
        """True when record ``seq`` comes after a ``TestModeEntered`` not yet left (resuming within test mode)."""
        row = self._reader().execute("SELECT type FROM records WHERE seq < ? AND type IN (?, ?) ORDER BY seq DESC "
                                     "LIMIT 1", (seq, *TEST_MODE)).fetchone()
        return row is not None and row[0] == TEST_MODE[0]

    def _round_end_before(self, seq: int) -> bool:
        """True when a round ended after the last checkpoint before record ``seq`` (resuming between a round's
        close and the checkpoint written with it: that checkpoint's anchor is still to be published)."""
        db = self._reader()
        last = db.execute("SELECT max(seq) FROM checkpoints WHERE seq < ?", (seq,)).fetchone()[0] or 0
        return db.execute("SELECT 1 FROM records WHERE seq > ? AND seq < ? AND type IN ('RoundClosed', "
                          "'RoundVoided') LIMIT 1", (last, seq)).fetchone() is not None

    def _send_anchor(self, seq: int, round_no: int | None, head: str) -> None:
        """Publish the chain head ``head`` after record ``seq`` (a round's close) with its keyed anchor."""
        mac = jkey.mac(self.key, "anchor", seq, head) if self.key else None
        self._send("anchors", {"table": self.table_id, "seq": seq, "round": round_no, "head": head, "mac": mac},
                   seq, None, retain=True)
        self._round_ended = False
        self._send_meters(seq, round_no)

    def _send_meters(self, seq: int, round_no: int | None) -> None:
        """Publish the lifetime meters of the checkpoint at record ``seq`` (a round's close; retained on
        ``meters``). A checkpoint written before the meters has none: nothing is sent."""
        row = self._reader().execute("SELECT state FROM checkpoints WHERE seq = ?", (seq,)).fetchone()
        state = json.loads(row[0]) if row else {}
        if "meters" in state:
            meters = Meters.from_checkpoint(state["meters"]).to_json()
            # ``public``: the last public record published up to here (``seq``'s own record may be private): a
            # reader that has not stored it misses records (controller.floor.report_tool.store_states)
            self._send("meters", {"table": self.table_id, "seq": seq, "round": round_no, "public": self._after,
                                  "meters": meters}, seq, None, retain=True)

    def _send(self, kind: str, payload: dict[str, Any], seq: int, public: int | None, *, retain: bool = False) -> None:
        if self.simulated:
            payload = {**payload, "simulated": True}
        if self._testing:
            payload = {**payload, "test": True}
        body = self._fit.fitted(kind, payload, f"the message of journal record {seq}", stub=seq in self._stubbed)
        if body is None:  # not sent: counted as published, so that the records after it go on
            self._pending.append(_Sent(0, seq, public, acked=True))
            return
        info = self._client.publish(self._topics[kind], body, qos=1, retain=retain)
        self.published += 1
        sent = _Sent(info.mid, seq, public)
        self._pending.append(sent)
        self._by_mid[info.mid] = sent
        if info.rc != 0:  # not taken by paho (connection lost meanwhile): the whole window is sent again
            self._lost = True

    def _send_view(self) -> None:
        view = self._view
        if view is None or view == self._view_sent or view[0] > self._scanned:
            return
        mark = ',"simulated":true' if self.simulated else ""
        body = f'{{"table":{json.dumps(self.table_id, ensure_ascii=False)},"seq":{view[0]},"view":{view[1]}{mark}}}'
        self._view_sent = view
        fitted = self._fit.fitted("state", {"table": self.table_id, "seq": view[0], "view": None, **(
            {"simulated": True} if self.simulated else {})}, f"the view after journal record {view[0]}",
            body=body.encode())
        if fitted is not None:
            self._client.publish(self._topics["state"], fitted, qos=1, retain=True)

    def _settle(self) -> None:
        """Move ``acked`` past the acknowledged front of the window and hand it to the progress writer."""
        while self._pending and self._pending[0].acked:
            sent = self._pending.popleft()
            if sent.public is not None:
                self._acked_public = sent.public
        acked = self._pending[0].seq - 1 if self._pending else self._scanned
        if acked != self.acked:
            self.acked = acked
            self._writer.offer(acked, self._acked_public)

    def _caught_up(self) -> bool:
        """True when every record the journal holds now was published and acknowledged."""
        row = self._reader().execute("SELECT max(seq) FROM records").fetchone()
        return not self._pending and self._scanned >= (row[0] or 0) and (self._view is None
                                                                          or self._view == self._view_sent)

    def _close(self) -> None:
        """Save the progress; say ``offline`` (retained) and disconnect; close the journal reader."""
        self._writer.close()
        client = self._client
        if client is not None and self.connected:
            try:
                if self._fit.fits("status", topics.OFFLINE, "the offline status"):  # else the last will says it
                    info = client.publish(self._topics["status"], topics.OFFLINE, qos=1, retain=True)
                    deadline = time.monotonic() + 1.0
                    while not info.is_published() and time.monotonic() < deadline and not self._lost:
                        client.loop(timeout=0.05)
                client.disconnect()
                client.loop(timeout=0.0)
            except Exception:  # noqa: BLE001 - going away either way; the last will says offline
                log.info("floor: could not say offline; the broker's last will does")
        if client is not None and client.socket():
            client.socket().close()
        self._client = None
        self.connected = False
        if self._db is not None:
            self._db.close()
            self._db = None
