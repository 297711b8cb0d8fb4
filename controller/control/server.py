"""The local control interface: HTTP with JSON on a loopback address, for the dealer's screen, a software panel
and the rig; served by uvicorn (a maintained ASGI server) running a Starlette application
(``controller.control.app``) on its own thread and event loop.

Endpoints (docs/control.md):

- ``GET /state``: the latest ``Round.view()`` the controller published (``on_view``), no face-down card, with
  ``seq``: the journal record it reflects (views are published once every record of an input is written, so
  a view with ``seq`` >= N includes the effect of record N).
- ``GET /events?after=SEQ&timeout=S``: the public journal records with ``seq`` above ``SEQ`` (long poll: waits
  up to ``S`` seconds, at most ``MAX_WAIT``, for one to arrive). Answer ``{"records": [...], "next": N,
  "missed": bool}``: ask again with ``after=N``; ``missed`` says records after ``SEQ`` are no longer held here
  (read the journal).
- ``GET /events/stream``: the same records and every new view pushed as Server-Sent Events by one broadcaster
  (``controller.control.broadcast``), resumed from ``Last-Event-ID`` or ``after``.
- ``POST /actions`` with HTTP Basic credentials and ``{"action": ..., "code": ..., "reason": ..., "round": N,
  "state": ...}``: puts an ``OperatorAction`` on the controller's event queue (journaled before it is applied,
  like a device event) and answers 202; the outcome shows in ``/state`` and ``/events`` (a refused action as
  ``PressRefused``). The round guard: ``round`` and ``state``, when given, must still be those of the latest
  ``/state``; otherwise the answer is 409 and the action is journaled and refused (``OperatorAction.stale``),
  so an action decided on one round never changes the next (docs/control.md, "The round guard").
- ``GET /recall`` and ``GET /recall?round=N`` (supervisors only): game recall, the last rounds of the journal step
  by step (``controller.control.recall``; a round not yet closed through ``public_record``).
- ``GET /openapi.json``: the OpenAPI description; ``GET /``: the dealer's screen (``controller/control/screen``).

Requests (docs/control.md, "Requests"): HTTP/1.0 or 1.1 as h11 reads it (else 400 in JSON); a ``Host`` naming
this server's own address and port (else 421: DNS rebinding; 400 when HTTP/1.1 leaves it out);
``SINGLE_HEADERS`` once each; numbers in plain decimal digits; at most ``MAX_CHECKS`` password checks at once
(else 503); at most ``MAX_CONNECTIONS`` connections, each request's headers and body within
``REQUEST_TIMEOUT``.

The server never touches the round machine and never writes the journal (game recall reads it, read-only, on
a thread of its own): the controller thread publishes to it through
``publish_view`` and ``publish_record`` (the ``Controller``'s ``on_view``/``on_record``), which hand the data
to the server's loop without waiting, and actions reach the machine only through the event queue
(docs/architecture.md, "Threads").

Hole-card secrecy (domain.md; NY 9 NYCRR 5324.39(e)(9)(i): a seat's cards are turned at its settlement):
``public_record`` passes an allow-list of record types, drops every record that carries face-down cards
(``StackDealt``, ``StackDispensed``, ``ShoeLastDispense``) and the shoe and sensor commands, strips the cards
and hands of a seat that folded from its ``SeatSettled``, and never shows ``prev`` or ``hash``: the hash of the
record after a ``StackDealt`` would let anyone search the few thousand possible two-card stacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import queue
import socket
import threading
from collections import deque
from pathlib import Path
from typing import Any

import orjson
import uvicorn

from controller.control.app import HEARTBEAT, build_app, protocol_class
from controller.control.broadcast import CLIENT_QUEUE, MAX_BATCH, PACE, RING_SIZE, Hub, Outbox
from controller.control.checks import MAX_BODY, MAX_SEQ, MAX_WAIT, SINGLE_HEADERS  # noqa: F401 (documented)
from controller.control.rate import ActionRate
from controller.control.recall import Recall
from controller.control.signin import CHECK_NICENESS, MAX_CHECKS, SignIn, accepts_host  # noqa: F401 (documented)
from controller.round.alerts import alert_record
from controller.round.inputs import OperatorsChanged, roster_sha256
from controller.service.limits import CONTROL_BACKLOG, CONTROL_CONNECTIONS, check_descriptors
from controller.settings.control import DEFAULT_PORT, ControlConfig, parse_control_config  # noqa: F401 (re-exported)
from drivers.ratelog import LogLimiter

log = logging.getLogger(__name__)

#: Hole-card alerts and their acknowledgements kept for ``GET /alerts`` (supervisors only); older ones stay in
#: the journal.
MAX_ALERTS = 50
#: Seconds a client may take to send its request line and headers, or its body, before the connection is closed.
REQUEST_TIMEOUT = 5.0
#: Most connections open at once (``controller.service.limits``: far below the service's open-file limit, so the
#: journal and the device links can always open their files). One more sheds the oldest connection that has not
#: sent a complete request's headers (a slow or idle one), or is closed as soon as it is accepted when every
#: connection is busy with a request or a stream.
MAX_CONNECTIONS = CONTROL_CONNECTIONS
#: Most event streams at once (each one connection); one more is answered 503.
MAX_STREAMS = 128
#: Connections waiting to be accepted.
BACKLOG = CONTROL_BACKLOG
#: Seconds an idle kept-alive connection stays open after an answer.
KEEP_ALIVE = 5
#: Largest request line and headers (bytes); h11 answers 400 beyond it.
MAX_HEAD = 16384
#: Seconds between two looks of the interface's loop at the operators file (``ControlServer._watch_operators``):
#: a change made with no request after it (``operator add``, then nothing) is journaled within this much.
OPERATORS_CHECK_S = 2.0

#: Journal record types shown as they are (none carries a face-down card).
PUBLIC_TYPES: frozenset[str] = frozenset({
    # inputs (kind "event")
    "ServiceStarted", "DeviceReady", "DeviceFault", "ShoeDoorClosed", "ShuffleComplete", "SpotChanged", "SpotsSnapshot",
    "ButtonPressed", "SupervisorKey", "OperatorAction",
    # device commands shown to a display (kind "command")
    "Display", "SetLamps",
    # records of the round (kind "record")
    "RoundOpened", "WagersLocked", "DecisionMade", "CardsRevealed", "RoundClosed", "FaultRaised", "FaultCleared",
    "RoundVoided", "SeatExcluded", "PastPostingAcknowledged", "ShoeReconciled", "PressRefused", "ServiceStopped",
    "WagersHeld", "PromptDue", "ClockStepped",
    # a seat session's rating (controller/service/rating_live.py) and the actions naming its player: never a card
    "SessionRated", "SeatRating",
    # dealing by hand (controller/round/manual.py); ``CardsEntered``/``CardsRecorded`` name cards: journal only
    "DealingModeChanged", "ManualRound", "CardPlacedByHand", "SeatHeld",
    # the payout check (controller/game/payout.py): amounts per spot and who, written after the settlement, when every
    # card of the round is turned or folded; no card in them
    "PayoutChecked", "MispayAccepted",
    # the significant events and the service's records they come from (controller/service/significance.py): codes,
    # hashes, device identities, seqs; nothing of a card or a device's own text
    "SignificantEvent", "UncleanStopSeen", "SoftwareChanged", "ConfigurationChanged", "DeviceReplaced",
    # the table's locks and test mode (controller/round/table_locks.py): who, when, the public code
    "TableDisabled", "TableEnabled", "TestModeEntered", "TestModeLeaving", "TestModeLeft",
})
#: Keys of a record's ``data`` that stay in the journal: a supervisor's free text may name a card ("seat 4 Kd
#: exposed"); the public sees the reason code (``controller.round.inputs.VOID_CODES``) instead.
PRIVATE_DATA: dict[str, tuple[str, ...]] = {"OperatorAction": ("reason",), "RoundVoided": ("reason",),
                                            "DealingModeChanged": ("reason",), "SeatHeld": ("reason",),
                                            "MispayAccepted": ("reason",), "TableDisabled": ("reason",),
                                            "TableEnabled": ("reason",), "TestModeEntered": ("reason",),
                                            "TestModeLeaving": ("reason",), "TestModeLeft": ("reason",),
                                            # a device's own fault text may name a card ("card 4d stuck")
                                            "DeviceFault": ("detail",), "FaultRaised": ("device_detail",)}
#: Keys of a folded seat's settlement that say nothing of its cards (the bonus hand is the five community
#: cards, all turned before settlement).
FOLDED_KEYS: tuple[str, ...] = ("seat", "five_card_bonus_hand", "wagers", "net", "folded_at")
#: Keys of a journal record that a client sees (never ``prev`` or ``hash``, see the module docstring).
RECORD_KEYS: tuple[str, ...] = ("seq", "time", "kind", "round", "type", "data")


def _copy(value: Any) -> Any:
    """A deep copy of ``value`` through JSON (keys as JSON writes them: an integer key becomes text); raises
    ``TypeError`` for what JSON cannot hold."""
    return orjson.loads(_encode(value))


def _encode(value: Any) -> bytes:
    """``value`` as compact JSON (UTF-8; an integer key as text): bytes, which the loop may own as they are
    (nothing can change them); raises ``TypeError`` for what JSON cannot hold."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def public_record(record: dict[str, Any]) -> dict[str, Any] | None:
    """The part of a journal record anyone may see, or None when it must not leave the journal.

    ``record`` is a journal record (``controller.journal.store``: ``seq``, ``time``, ``kind``, ``round``, ``type``,
    ``data``, ...). Returns ``seq``, ``time``, ``kind``, ``round``, ``type`` and ``data`` of a type in
    ``PUBLIC_TYPES``, without the ``PRIVATE_DATA`` keys (free text); a ``SeatSettled`` of a seat that folded
    keeps only ``FOLDED_KEYS`` of its settlement (its cards were never turned, NY 9 NYCRR 5324.39(e)(9)(i)), and
    not the five-card bonus hand when it had no bonus (the board may never have been turned); an ``Irregularity`` of kind ``unknown_event``
    keeps only the event's type name. Nothing that says something of a hole-card alert is public
    (``controller.round.alerts.alert_record``: a press or action of ``acknowledge_alert`` too). Every other type
    (``StackDealt``, ``StackDispensed``, ``ShoeLastDispense``, shoe and sensor commands, types added later) is
    None: new types stay private until they are reviewed.
    """
    kind = record.get("type")
    data = record.get("data")
    if not isinstance(data, dict) or alert_record(record):  # nothing of a hole-card alert (controller/round/alerts.py)
        return None
    if kind == "SeatSettled":
        settlement = data.get("settlement")
        if not isinstance(settlement, dict):
            return None
        if settlement.get("folded_at"):
            keys = FOLDED_KEYS
            if "five_card_bonus" not in (settlement.get("wagers") or {}):
                # no bonus: the round may have settled before the board was turned (every seat folded)
                keys = tuple(k for k in keys if k != "five_card_bonus_hand")
            settlement = {k: settlement[k] for k in keys if k in settlement}
        data = {**data, "settlement": settlement}
    elif kind == "Irregularity":
        if data.get("kind") == "unknown_event":
            event = str((data.get("detail") or {}).get("event", ""))
            data = {**data, "detail": {"event": event.partition("(")[0][:60]}}
    elif kind not in PUBLIC_TYPES:
        return None
    if kind in PRIVATE_DATA:
        data = {k: v for k, v in data.items() if k not in PRIVATE_DATA[kind]}
    public = {key: record.get(key) for key in RECORD_KEYS}
    public["data"] = data
    return public


def bind(host: str, port: int, what: str) -> socket.socket:
    """A TCP socket listening on ``host`` and ``port`` (``BACKLOG`` waiting), non-blocking, for an interface
    named ``what``; ``OSError`` naming ``what`` and the address (a port in use). IPPROTO_TCP, not 0: asyncio sets
    TCP_NODELAY only on sockets that name their protocol, and without it every keep-alive answer after the first
    waits for the client's delayed ACK (about 40 ms)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f"{what} {host}:{port}: {exc.strerror}") from None
    sock.setblocking(False)
    return sock


class PromptServer(uvicorn.Server):
    """uvicorn's server, stopped as soon as it is told (``stop``), not at its next tick: uvicorn looks at
    ``should_exit`` every 0.1 s, then gives the connections it asked to close another 0.1 s, even when none was
    open. With no connection and no request left at the stop, the shutdown only closes the listening socket
    (what uvicorn's would do then, less its pause)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        """Leave the main loop now, then shut down (on the loop's thread)."""
        self.should_exit = True
        self._stopping.set()

    async def main_loop(self) -> None:
        """uvicorn's main loop (the date header once a second, ``should_exit`` from a signal), left at once when
        ``stop`` is called."""
        ticking = asyncio.ensure_future(super().main_loop())
        stopping = asyncio.ensure_future(self._stopping.wait())
        done, _ = await asyncio.wait((ticking, stopping), return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if ticking in done:
            ticking.result()  # uvicorn's own exit, or the error that ended it
            return
        ticking.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticking

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's shutdown when a connection or a request is left (they get their graceful time); otherwise
        the listening socket is closed at once (the lifespan is off: nothing else to stop)."""
        if self.server_state.connections or self.server_state.tasks:
            await super().shutdown(sockets=sockets)
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for server in self.servers:
            await server.wait_closed()


class ControlServer(SignIn):
    """The control interface (module docstring): a Starlette application served by uvicorn on its own thread,
    with its own event loop.

    ``config`` gives host and port (the socket is bound here, so a port in use raises ``OSError`` before
    anything starts); ``events`` is the controller's event queue; ``journal`` the journal game recall reads
    (``GET /recall``, the last ``config.recall`` rounds; None: recall answers 503). ``port`` is the port
    actually bound and ``url`` the base URL. Bounds (docs/control.md, "Bounds"): ``request_timeout``
    (seconds) for a request's headers and its body; ``ring_size`` public records held for ``GET /events``; ``max_checks`` password checks
    at once (``checks``, a semaphore taken without waiting); ``max_connections`` connections at once (one more
    sheds the oldest connection still waiting for its request's headers, else it is closed when accepted); ``max_streams`` event streams, each with at most ``client_queue`` frames waiting
    (one more and that client is dropped). Call ``start`` then ``stop`` (idempotent: it ends every stream and
    long poll, stops the loop and joins the thread). An idle event stream sends its heartbeat after ``heartbeat``
    seconds without a frame (``HEARTBEAT``; ``GET /labels`` tells the dealer's screen). Every ``operators_check`` seconds the loop looks at the
    operators file's identity (``SignIn.operators_identity``) and reads it again when it changed, so that a change
    of who may act is journaled (``OperatorsChanged``) with no request after it, failing closed as at a request.

    Threads: the hub (``controller.control.broadcast.Hub``), the view and the ring belong to the loop's thread;
    ``publish_view`` and ``publish_record`` hand their data over with ``loop.call_soon_threadsafe`` and return
    at once, so the controller thread never waits for a client. Who may sign in: ``SignIn``
    (``controller.control.signin``), on ``config.operators``.
    """

    def __init__(self, config: ControlConfig, events: queue.Queue, journal: Path | None = None, *,
                 request_timeout: float = REQUEST_TIMEOUT,
                 ring_size: int = RING_SIZE, max_checks: int = MAX_CHECKS, max_connections: int = MAX_CONNECTIONS,
                 max_streams: int = MAX_STREAMS, client_queue: int = CLIENT_QUEUE,
                 operators_check: float = OPERATORS_CHECK_S, heartbeat: float = HEARTBEAT) -> None:
        check_descriptors("control interface")
        self.config = config
        self.heartbeat = heartbeat
        self.events = events
        self.request_timeout = request_timeout
        self.operators_check = operators_check
        self.max_connections = max_connections
        super().__init__(config.operators, "control interface", max_checks, on_change=self._operators_changed)
        self.hub = Hub(ring_size, client_queue, max_streams)
        #: actions queued per operator (``controller.control.rate``) and the log of those refused, owned by the loop
        self.action_rate = ActionRate()
        self.refusals = LogLimiter(log)
        #: the controller thread's hand-overs to the loop (``broadcast.Outbox``: the one object both use)
        self._outbox = Outbox(ring_size)
        #: the last hole-card alerts and acknowledgements (journal records; controller/round/alerts.py), owned by the
        #: event loop
        self.alerts: deque[dict[str, Any]] = deque(maxlen=MAX_ALERTS)
        #: the lifetime meters last published (``publish_meters``; ``GET /meters``, supervisors only); None before
        self.meters: dict[str, Any] | None = None
        #: every seat session's rating (``publish_sessions``; ``GET /sessions``, supervisors only); None while the
        #: service runs without ``--rating``
        self.sessions: tuple[dict[str, Any], ...] | None = None
        #: game recall of the journal (``GET /recall``, supervisors only), read-only on its own thread
        self.recall = Recall(journal, config.recall, public_record)
        self._socket = bind(config.host, config.port, "control interface")
        self.port: int = self._socket.getsockname()[1]
        self._address = ipaddress.ip_address(self._socket.getsockname()[0])
        self._loop = asyncio.new_event_loop()
        self._uvicorn = PromptServer(uvicorn.Config(
            build_app(self), lifespan="off", log_config=None, access_log=False, server_header=False,
            http=protocol_class(self), backlog=BACKLOG,
            limit_concurrency=max_connections + 1,  # the protocol holds max_connections: uvicorn's 503 never comes
            timeout_keep_alive=KEEP_ALIVE, timeout_graceful_shutdown=2, h11_max_incomplete_event_size=MAX_HEAD))
        self._thread: threading.Thread | None = None
        self._closed = False
        #: the operators file's identity at the loop's last look (none yet: the first look reads the file, which
        #: may have changed since it was read above), and the look to come (the loop's own)
        self._operators_seen: Any = ()
        self._operators_look: asyncio.TimerHandle | None = None
        if not self._operators:
            log.warning("control interface: no operators in %s: every action will be refused (401); add one with "
                        "`crisscross operator add`", config.operators)

    def _operators_changed(self, now: tuple[tuple[str, str], ...], before: tuple[tuple[str, str], ...]) -> None:
        """Queue ``OperatorsChanged`` for the journal (``SignIn.on_change``): who may act changed while the service
        ran. A queue full to its reserve refuses it: logged (the next start journals the change)."""
        try:
            self.events.put(OperatorsChanged(now, roster_sha256(now), roster_sha256(before)))
        except queue.Full:
            log.error("control interface: event queue full: the change of operators is journaled at the next start")

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:8740``."""
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        return f"http://{host}:{self.port}"

    def accepts_host(self, value: str) -> bool:
        """True when ``value``, a request's ``Host`` header, names this server: its address (``127.0.0.1``,
        ``[::1]``) or, on 127.0.0.1 and ::1, ``localhost``, with its port (``controller.control.signin
        .accepts_host``: a web page whose own name was made to resolve to 127.0.0.1, DNS rebinding, is refused)."""
        return accepts_host(value, self._address, self.port)

    def start(self) -> None:
        """Serve on a new (non-daemon) thread named ``control-http``; logs the URL at info level."""
        self._thread = threading.Thread(target=self._serve, name="control-http")
        self._thread.start()
        log.info("control interface on %s", self.url)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        if self.operators_path is not None:
            self._operators_look = self._loop.call_later(self.operators_check, self._watch_operators)
        try:
            self._loop.run_until_complete(self._uvicorn.serve(sockets=[self._socket]))
        except Exception:  # a defect of the server loop itself: logged, the table carries on without it
            log.exception("control interface stopped on an error")
        finally:
            for connection in list(self._uvicorn.server_state.connections):
                connection.transport.abort()  # a client that never read its answer
            self._loop.run_until_complete(self._loop.shutdown_default_executor())
            self.close_checks()  # the password checks' threads
            self.recall.close()  # the recall's thread

    def stop(self) -> None:
        """End every stream and long poll, stop serving, close the socket and join the thread."""
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._loop.call_soon_threadsafe(self._shutdown)
            self._thread.join()
            self._thread = None
        self._socket.close()
        self._loop.close()

    def _shutdown(self) -> None:
        if self._operators_look is not None:
            self._operators_look.cancel()
        self.hub.stop()
        self._uvicorn.stop()

    def _watch_operators(self) -> None:
        """On the loop, every ``operators_check`` seconds: when the operators file's identity changed since the
        last look, read it again (``SignIn.operators``: a file refused or unreadable gives nobody any right, and
        other names or roles than before queue ``OperatorsChanged``, ``_operators_changed``); then the next look.
        One stat a look; the file is read only when it changed."""
        try:
            seen = self.operators_identity()
            if seen != self._operators_seen:
                self._operators_seen = seen
                self.operators()
        except Exception:  # a defect here must not end the looks: the next request reads the file all the same
            log.exception("control interface: the look at the operators file failed")
        self._operators_look = self._loop.call_later(self.operators_check, self._watch_operators)

    # ------------------------------------------------------------------ from the controller thread
    def publish_view(self, view: dict[str, Any]) -> None:
        """Hand ``view`` (``Round.view()``) to the loop: ``GET /state`` answers it with ``seq`` (the last journal
        record published), and every event stream gets it. Never raises and never waits: a view that is not
        JSON is logged and the previous one stays."""
        try:
            body = _encode(view)  # encoded once, here: bytes the loop owns, checked to be JSON
        except TypeError:
            log.exception("control interface: the round's view is not JSON; /state keeps the previous one")
            return
        self._post(("view", body))

    def publish_record(self, record: dict[str, Any]) -> None:
        """Offer one journal record to ``GET /events`` and the event streams through ``public_record``. The loop
        takes it with the next ``publish_view`` (the controller publishes a view after every commit,
        ``Controller.on_view``): one wake-up of the loop per input. Never raises and never waits: a record that
        cannot be filtered is logged (type and seq, never its data) and left out."""
        try:
            public = public_record(record)
            body = None if public is None else _encode(public)  # encoded once, here: bytes the loop owns
            seq = int(record["seq"])
        except Exception:  # fail closed: a record the filter cannot read is not shown
            log.exception("control interface: record %s of type %s left out", record.get("seq"), record.get("type"))
            return
        self._post(("record", body, seq), wake=False)
        if record.get("type") in ("Alert", "AlertAcknowledged"):  # hole-card alerts: supervisors only (GET /alerts)
            kept = {key: record.get(key) for key in ("seq", "time", "round", "type", "data")}  # never prev, hash
            self._post(("alert", _copy(kept)), wake=False)

    def publish_meters(self, meters: dict[str, Any]) -> None:
        """Keep ``meters`` (``Meters.to_json()``, a fresh copy never changed after) for ``GET /meters``: one
        reference replaced whole, read by the loop. Never raises and never waits."""
        self.meters = meters

    def publish_sessions(self, sessions: tuple[dict[str, Any], ...]) -> None:
        """Keep ``sessions`` (the rating worker's figures, ``controller.service.rating_live``: a tuple never changed
        after) for ``GET /sessions``: one reference replaced whole. Never raises and never waits."""
        self.sessions = sessions

    def flush(self) -> None:
        """Wake the loop for the records waiting, for a caller that publishes records without a view after them
        (the controller need not: its view after each commit does it). Never raises and never waits."""
        if self._outbox.wake():
            self._wake_loop()

    def _post(self, item: tuple[Any, ...], wake: bool = True) -> None:
        """Put ``item`` in the outbox and, with ``wake``, wake the loop when no take is due yet."""
        if self._outbox.put(item, wake):
            self._wake_loop()

    def _wake_loop(self) -> None:
        try:
            self._loop.call_soon_threadsafe(self._take)
        except RuntimeError:  # the loop is closed: the interface was stopped, nobody is listening
            pass

    def _take(self) -> None:
        """On the loop: everything the controller thread handed over since the last take, in order, but a view
        that a later view of the same take supersedes (the streams get the latest: docs/control.md, "GET
        /events/stream"); when there was something, the next take in ``PACE`` seconds (``Outbox``: it is due
        without a wake-up)."""
        items, lost = self._outbox.take()
        if items or lost is not None:
            self._loop.call_later(PACE, self._take)
        if lost is not None:
            self.hub.lost(lost)
        last_view = max((index for index, item in enumerate(items) if item[0] == "view"), default=-1)
        for index, item in enumerate(items):
            if item[0] == "view" and index != last_view:
                continue
            if item[0] == "record":
                self.hub.publish_record(item[1], item[2])
            elif item[0] == "view":
                self.hub.publish_view(item[1])
            else:
                self.alerts.append(item[1])
