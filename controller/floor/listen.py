"""A subscription to every table of the floor (``crisscross floor watch`` and ``audit``, the tests, the scale
test): one paho-mqtt client whose messages go to a callback on the caller's thread (``Listener.pump``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as paho

from controller.floor import topics
from controller.floor.mqtt import CONNECT_TIMEOUT, connect, make_client
from controller.settings.floor import FloorConfig

#: Seconds a new connection is given for the broker's CONNACK before another attempt.
CONNACK_WAIT = 5.0
#: Seconds ``Listener.open`` waits by default for the subscription to be acknowledged.
SUBSCRIBE_WAIT = 10.0
#: Seconds the broker keeps a durable listener's session (and queues its QoS 1 messages) while it is away.
SESSION_EXPIRY = 7 * 24 * 3600


log = logging.getLogger(__name__)

class Listener:
    """Subscribes to ``{prefix}/#`` (QoS 1) on the broker of ``config`` and calls ``on_message(table, kind,
    payload, received)`` (``received``: ``time.time()``) for each message of a table's topic, and
    ``on_unreadable()`` (when given) for each message whose topic is not UTF-8 text (``topics.received_topic``: not
    in the floor's format, skipped and counted by the caller). A message on a topic whose table level is not a table
    id (``topics.table_id_problem``: table.yaml's rule, the one the store, the reports and the pit page apply) never
    reaches ``on_message``: ``on_not_a_table(problem)`` (when given) is called instead, ``problem`` the rule's
    reason (the id escaped and cut, never raw), and the caller skips and counts it (docs/floor.md).

    ``client_id`` with ``durable``: the broker keeps the session while the listener is away or the broker
    restarts (with persistence), so no QoS 1 message published meanwhile is missed. A lost connection is
    connected again inside ``pump``."""

    def __init__(self, config: FloorConfig, on_message: Callable[[str, str, bytes, float], None], *,
                 client_id: str = "", durable: bool = False,
                 on_unreadable: Callable[[], None] | None = None,
                 on_not_a_table: Callable[[str], None] | None = None) -> None:
        self.config = config
        self.on_message = on_message
        self.on_unreadable = on_unreadable
        self.on_not_a_table = on_not_a_table
        self.durable = durable and bool(client_id)
        self.client = make_client(config, client_id)
        self.client.on_message = self._message
        self.client.on_connect = self._connected
        self.client.on_disconnect = self._disconnected
        self.client.on_subscribe = self._subscribed
        self.connected = False
        self.subscribed = False
        self.refused: str | None = None  # the broker's reason when it refused the last connection (its CONNACK)
        self._retry_at = 0.0

    def open(self, timeout: float = SUBSCRIBE_WAIT) -> None:
        """Connect and subscribe within ``timeout`` seconds, every connection attempt (TCP and TLS) included;
        raises ``OSError`` when the broker cannot be reached, refuses the connection (its reason, e.g. ``Not
        authorized`` for a wrong user or password), does not answer the connection (a host down or filtered) or
        does not acknowledge the subscription within ``timeout``. The message does not repeat the broker's
        address: the caller names it."""
        deadline = time.monotonic() + timeout
        self.client.limit_connect_time(timeout)
        try:
            connect(self.client, self.config, clean_start=not self.durable,
                    session_expiry=SESSION_EXPIRY if self.durable else None)
        except TimeoutError:
            raise OSError(f"the connection was not answered within {min(timeout, CONNECT_TIMEOUT):g} s") from None
        lost = 0  # connections closed before the subscription was acknowledged
        failed: OSError | None = None  # the last attempt to connect again that failed
        while not self.subscribed and self.refused is None and time.monotonic() < deadline:
            left = max(deadline - time.monotonic(), 0.0)
            if self.client.loop(timeout=min(0.05, left)) == paho.MQTT_ERR_SUCCESS:
                continue
            # the connection was closed (no socket left to wait on): try again after a pause, never in a busy loop
            lost += 1
            time.sleep(min(0.2, max(deadline - time.monotonic(), 0.0)))
            if time.monotonic() < deadline:
                try:
                    self.client.limit_connect_time(deadline - time.monotonic())
                    self.client.reconnect()
                except OSError as exc:
                    failed = exc
        if self.refused is not None:
            raise OSError(f"refused the connection: {self.refused}")
        if not self.subscribed:
            why = (f"; the connection was closed {lost} time(s) before it" if lost else "") + (
                f"; the last attempt: {failed.strerror or failed}" if failed is not None else "")
            raise OSError(f"no subscription acknowledged within {timeout:g} s{why}")

    def pump(self, seconds: float, stop: threading.Event | None = None) -> None:
        """Receive for ``seconds``, or until ``stop`` is set (checked every 0.05 s at most: SIGTERM or SIGINT,
        ``controller.floor.stopping``), connecting again when the connection was lost (an attempt is given
        ``CONNACK_WAIT`` seconds to be answered before the next one; its TCP connect no longer than what is left
        of ``seconds``)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not (stop is not None and stop.is_set()):
            left = max(deadline - time.monotonic(), 0.0)
            if self.connected or time.monotonic() < self._retry_at:
                if self.client.loop(timeout=min(0.05, left)) != paho.MQTT_ERR_SUCCESS:
                    time.sleep(min(0.05, left))  # no socket: nothing to wait on
                continue
            try:
                self.client.limit_connect_time(deadline - time.monotonic())
                self.client.reconnect()
                self._retry_at = time.monotonic() + CONNACK_WAIT
            except OSError:
                self._retry_at = time.monotonic() + 0.2

    def close(self) -> None:
        """Disconnect (a durable session stays on the broker until it expires)."""
        try:
            self.client.disconnect()
            self.client.loop(timeout=0.0)
        except Exception as exc:  # noqa: BLE001 - already gone: said, not raised
            log.debug("floor listener: disconnect: %s", exc)

    def _connected(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            self.refused = str(reason)
            return
        self.refused = None
        self.connected = True
        if not (self.durable and flags.session_present):
            client.subscribe(topics.every_table(self.config.prefix), qos=1)
        else:
            self._now_subscribed("the broker kept the session")

    def _subscribed(self, client: Any, userdata: Any, mid: int, reasons: Any, properties: Any) -> None:
        self._now_subscribed("subscription acknowledged")

    def _now_subscribed(self, how: str) -> None:
        self.subscribed = True
        log.info("floor listener: listening to every table on %s:%d (%s)", self.config.broker, self.config.port, how)

    def _disconnected(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        self.connected = False

    def _message(self, client: Any, userdata: Any, message: Any) -> None:
        name = topics.received_topic(message)
        if name is None:
            if self.on_unreadable is not None:
                self.on_unreadable()
            return
        where = topics.split(self.config.prefix, name)
        if where is None:
            return
        problem = topics.table_id_problem(where[0])
        if problem is not None:
            if self.on_not_a_table is not None:
                self.on_not_a_table(problem)
            return
        self.on_message(where[0], where[1], message.payload, time.time())
