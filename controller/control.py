"""The local control interface: HTTP with JSON on a loopback address, for a software panel, a display and the rig.

Endpoints (docs/control.md):

- ``GET /state``: the latest ``Round.view()`` the controller published (``on_view``), no face-down card, with
  ``seq``: the journal record it reflects (views are published once every record of an input is written, so
  a view with ``seq`` >= N includes the effect of record N).
- ``GET /events?after=SEQ&timeout=S``: the public journal records with ``seq`` above ``SEQ`` (long poll: waits
  up to ``S`` seconds, at most ``MAX_WAIT``, for one to arrive). Answer ``{"records": [...], "next": N,
  "missed": bool}``: ask again with ``after=N``; ``missed`` says records after ``SEQ`` are no longer held here
  (read the journal).
- ``POST /actions`` with HTTP Basic credentials and ``{"action": ..., "code": ..., "reason": ..., "round": N,
  "state": ...}``: puts an ``OperatorAction`` on the controller's event queue (journaled before it is applied,
  like a device event) and answers 202; the outcome shows in ``/state`` and ``/events`` (a refused action as
  ``PressRefused``). The round guard: ``round`` and ``state``, when given, must still be those of the latest
  ``/state``; otherwise the answer is 409 and the action is journaled and refused (``OperatorAction.stale``),
  so an action decided on one round never changes the next (docs/control.md, "The round guard").

Requests (docs/control.md, "Requests"): a request line ``METHOD PATH HTTP/1.x`` (else 400, or 505 for HTTP/2
and later, always a full HTTP/1.0 answer); a ``Host`` naming this server's own address and port (else 421: DNS
rebinding; 400 when HTTP/1.1 leaves it out); ``SINGLE_HEADERS`` once each; numbers in plain decimal digits;
at most ``MAX_CHECKS`` password checks at once (else 503).

The server never touches the round machine or the journal: the controller thread publishes to it through
``publish_view`` and ``publish_record`` (the ``Controller``'s ``on_view``/``on_record``), and actions reach the
machine only through the event queue (docs/architecture.md, "Threads").

Hole-card secrecy (domain.md; NY 9 NYCRR 5324.39(e)(9)(i): a seat's cards are turned at its settlement):
``public_record`` passes an allow-list of record types, drops every record that carries face-down cards
(``StackDealt``, ``StackDispensed``, ``ShoeLastDispense``) and the shoe and sensor commands, strips the cards
and hands of a seat that folded from its ``SeatSettled``, and never shows ``prev`` or ``hash``: the hash of the
record after a ``StackDealt`` would let anyone search the few thousand possible two-card stacks.
"""

from __future__ import annotations

import base64
import binascii
import collections
import ipaddress
import json
import logging
import os
import queue
import re
import socket
import threading
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

from controller.config import ConfigError, check_keys, error, line_of, require_int, require_text
from controller.inputs import ACTIONS, VOID_CODES, OperatorAction, stale_reason
from controller.operators import Operator, authenticate, load_operators

log = logging.getLogger(__name__)

#: The documented port of the control interface (docs/control.md); 0 in ``table.yaml`` takes any free port.
DEFAULT_PORT = 8740
#: Largest request body accepted (bytes); a larger one is answered 413 without being read.
MAX_BODY = 4096
#: Longest ``reason`` of an action (characters).
MAX_REASON = 200
#: Longest wait of one ``GET /events`` (seconds).
MAX_WAIT = 30.0
#: Largest ``after`` cursor accepted by ``/events`` (a journal seq; far beyond any table's lifetime).
MAX_SEQ = 2**53
#: Most records in one ``GET /events`` answer.
MAX_BATCH = 500
#: Public records kept in memory for ``GET /events``.
RING_SIZE = 2000
#: Seconds a client may take to send its request line, headers or body before the connection is closed.
REQUEST_TIMEOUT = 5.0
#: Most password checks (PBKDF2, ``controller.operators``) running at once; one more is answered 503 at once.
#: Each check takes a core for about 0.15 s: without a bound, a flood of wrong passwords shares the cores
#: among all of them, so every check (a supervisor's too) waits, and so does the controller thread.
MAX_CHECKS = 2
#: Request headers that may appear once only: two values would let two readers of the request disagree.
SINGLE_HEADERS: tuple[str, ...] = ("Authorization", "Content-Length", "Content-Type", "Host")
#: Plain ASCII decimal digits: ``int()`` also takes ``+5``, ``1_0``, `` 5`` and other scripts' digits.
DIGITS = re.compile(r"[0-9]+")
#: A ``timeout`` of ``/events``: decimal digits with an optional fraction (``25``, ``0.5``).
SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")

#: Journal record types shown as they are (none carries a face-down card).
PUBLIC_TYPES: frozenset[str] = frozenset({
    # inputs (kind "event")
    "ServiceStarted", "DeviceReady", "DeviceFault", "ShuffleComplete", "SpotChanged", "SpotsSnapshot",
    "ButtonPressed", "SupervisorKey", "OperatorAction",
    # device commands shown to a display (kind "command")
    "Display", "SetLamps",
    # records of the round (kind "record")
    "RoundOpened", "WagersLocked", "DecisionMade", "CardsRevealed", "RoundClosed", "FaultRaised", "FaultCleared",
    "RoundVoided", "SeatExcluded", "PastPostingAcknowledged", "ShoeReconciled", "PressRefused", "ServiceStopped",
    "WagersHeld", "PromptDue",
})
#: Keys of a record's ``data`` that stay in the journal: a supervisor's free text may name a card ("seat 4 Kd
#: exposed"); the public sees the reason code (``controller.inputs.VOID_CODES``) instead.
PRIVATE_DATA: dict[str, tuple[str, ...]] = {"OperatorAction": ("reason",), "RoundVoided": ("reason",)}
#: Keys of a folded seat's settlement that say nothing of its cards (the bonus hand is the five community
#: cards, all turned before settlement).
FOLDED_KEYS: tuple[str, ...] = ("seat", "five_card_bonus_hand", "wagers", "net", "folded_at")
#: Keys of a journal record that a client sees (never ``prev`` or ``hash``, see the module docstring).
RECORD_KEYS: tuple[str, ...] = ("seq", "time", "kind", "round", "type", "data")


@dataclass(frozen=True)
class ControlConfig:
    """``control:`` of ``table.yaml``: ``enabled``, ``host`` (a loopback address), ``port`` (0 = any free port)
    and ``operators`` (the operators file, ``controller.operators``)."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    operators: Path | None = None


def parse_control_config(path: Path, entry: Any) -> ControlConfig:
    """Check the ``control:`` mapping of the table file at ``path`` (None: the defaults, interface off).

    A relative ``operators`` path is relative to the table file's folder (default ``operators.yaml`` there).
    Raises ``ConfigError`` naming the file, the line (when ``entry`` was read from it) and the key for an
    unknown key, a non-boolean ``enabled``, a port outside 0-65535, an ``operators`` that is not a file path
    (non-blank text), or a host that is not a literal loopback address (127.0.0.0/8 or ::1) written as text:
    the interface sends dealer and supervisor actions and must not be reachable from the network
    (docs/control.md).
    """
    path = Path(path)
    entry = {} if entry is None else entry
    check_keys(path, "control", entry, set(), {"enabled", "host", "port", "operators"})
    enabled = entry.get("enabled", False)
    if not isinstance(enabled, bool):
        raise error(path, "control.enabled", f"expected true or false, got {enabled!r}", line_of(entry, "enabled"))
    host = entry.get("host", "127.0.0.1")
    try:
        loopback = isinstance(host, str) and ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise error(path, "control.host", f"{host!r} is not a loopback address (127.0.0.1 or ::1); the control "
                    "interface is never served to the network", line_of(entry, "host"))
    port = require_int(path, "control.port", entry.get("port", DEFAULT_PORT), 0, line_of(entry, "port"))
    if port > 65535:
        raise error(path, "control.port", f"{port} is above 65535", line_of(entry, "port"))
    operators = require_text(path, "control.operators", entry.get("operators", "operators.yaml"), "a file path",
                             line_of(entry, "operators"))
    return ControlConfig(enabled, host, port, path.parent / operators)


def public_record(record: dict[str, Any]) -> dict[str, Any] | None:
    """The part of a journal record anyone may see, or None when it must not leave the journal.

    ``record`` is a journal record (``controller.journal``: ``seq``, ``time``, ``kind``, ``round``, ``type``,
    ``data``, ...). Returns ``seq``, ``time``, ``kind``, ``round``, ``type`` and ``data`` of a type in
    ``PUBLIC_TYPES``, without the ``PRIVATE_DATA`` keys (free text); a ``SeatSettled`` of a seat that folded
    keeps only ``FOLDED_KEYS`` of its settlement (its cards were never turned, NY 9 NYCRR 5324.39(e)(9)(i)), and
    not the five-card bonus hand when it had no bonus (the board may never have been turned); an ``Irregularity`` of kind ``unknown_event``
    keeps only the event's type name. Every other type (``StackDealt``, ``StackDispensed``,
    ``ShoeLastDispense``, shoe and sensor commands, types added later) is None: new types stay private until
    they are reviewed.
    """
    kind = record.get("type")
    data = record.get("data")
    if not isinstance(data, dict):
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


class ControlServer:
    """The control interface's HTTP server (module docstring) on its own thread.

    ``config`` gives host and port (the socket is bound here, so a port in use raises ``OSError`` before
    anything starts); ``events`` is the controller's event queue. ``port`` is the port actually bound and
    ``url`` the base URL. ``request_timeout`` (seconds) closes a connection whose request is not complete in
    time; ``ring_size`` bounds the public records held for ``GET /events``; ``max_checks`` bounds the password
    checks running at once (``checks``, a semaphore the handlers take without waiting). Call ``start`` then
    ``stop`` (idempotent; it wakes every waiting ``GET /events`` and joins the server thread).
    """

    def __init__(self, config: ControlConfig, events: queue.Queue, *, request_timeout: float = REQUEST_TIMEOUT,
                 ring_size: int = RING_SIZE, max_checks: int = MAX_CHECKS) -> None:
        self.config = config
        self.events = events
        self.request_timeout = request_timeout
        self.max_checks = max_checks
        self.checks = threading.BoundedSemaphore(max_checks)
        self._operators_path = config.operators
        self._operators: dict[str, Operator] = load_operators(config.operators) if config.operators else {}
        self._operators_stamp = self._stamp()
        self._operators_lock = threading.Lock()
        self._cond = threading.Condition()
        self._ring: collections.deque[dict[str, Any]] = collections.deque(maxlen=ring_size)
        self._last_seq = 0  # the highest journal seq seen (public or not)
        self._horizon: int | None = None  # records with seq <= horizon may be missing from the ring
        self._view: bytes | None = None
        self._current: tuple[int | None, str | None] = (None, None)  # round and state of the latest view
        self._stopping = False
        self._thread: threading.Thread | None = None
        server_class = _Server6 if ":" in config.host else _Server
        try:
            self._httpd = server_class((config.host, config.port), _Handler)
        except OSError as exc:
            raise OSError(exc.errno, f"control interface {config.host}:{config.port}: {exc.strerror}") from None
        self._httpd.control = self
        self.port: int = self._httpd.server_address[1]
        self._address = ipaddress.ip_address(self._httpd.server_address[0])
        if not self._operators:
            log.warning("control interface: no operators in %s: every action will be refused (401); add one with "
                        "`crisscross operator add`", config.operators)

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:8740``."""
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        return f"http://{host}:{self.port}"

    def accepts_host(self, value: str) -> bool:
        """True when ``value``, a request's ``Host`` header, names this server: its address (``127.0.0.1``,
        ``[::1]``) or, on 127.0.0.1 and ::1, ``localhost``, with its port. A ``Host`` without a port means port
        80 (RFC 9110, 4.2.1 and 7.2). Any other name is refused: a web page whose own name was made to resolve to
        127.0.0.1 (DNS rebinding) sends that name."""
        value = value.strip()
        if value.startswith("["):
            host, bracket, rest = value[1:].partition("]")
            if not bracket:
                return False
        else:
            host, colon, port = value.partition(":")
            rest = colon + port
        if rest == "":
            port_no = 80
        elif rest.startswith(":") and DIGITS.fullmatch(rest[1:]) and len(rest) <= 6:
            port_no = int(rest[1:])
        else:
            return False
        if port_no != self.port:
            return False
        if host.lower() == "localhost":
            return self._address in (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return address == self._address and (address.version == 6) == value.startswith("[")

    def start(self) -> None:
        """Serve on a new (non-daemon) thread named ``control-http``; logs the URL at info level."""
        self._thread = threading.Thread(target=self._serve, name="control-http")
        self._thread.start()
        log.info("control interface on %s", self.url)

    def _serve(self) -> None:
        try:
            self._httpd.serve_forever(poll_interval=0.2)
        except Exception:  # a defect of the server loop itself: logged, the table carries on without it
            log.exception("control interface stopped on an error")

    def stop(self) -> None:
        """Stop serving, wake every waiting ``GET /events``, close the socket and join the thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    # ------------------------------------------------------------------ from the controller thread
    def publish_view(self, view: dict[str, Any]) -> None:
        """Keep ``view`` (``Round.view()``) with ``seq`` (the last journal record published) as the answer of
        ``GET /state``. Never raises: an error is logged and the previous view stays."""
        with self._cond:
            try:
                body = json.dumps({**view, "seq": self._last_seq}).encode()
            except (TypeError, ValueError):
                log.exception("control interface: the round's view is not JSON; /state keeps the previous one")
                return
            self._view = body
            self._current = (view.get("round_no"), view.get("state"))

    def publish_record(self, record: dict[str, Any]) -> None:
        """Offer one journal record to ``GET /events`` through ``public_record``. Never raises: a record that
        cannot be filtered is logged (type and seq, never its data) and left out."""
        try:
            public = public_record(record)
            seq = int(record["seq"])
        except Exception:  # fail closed: a record the filter cannot read is not shown
            log.exception("control interface: record %s of type %s left out", record.get("seq"), record.get("type"))
            return
        with self._cond:
            if self._horizon is None:
                self._horizon = seq - 1  # records before this run are in the journal only
            if public is not None:
                if len(self._ring) == self._ring.maxlen:
                    self._horizon = max(self._horizon, self._ring[0]["seq"])
                self._ring.append(public)
            self._last_seq = max(self._last_seq, seq)
            self._cond.notify_all()

    # ------------------------------------------------------------------ for the handlers
    def state_body(self) -> bytes | None:
        """The latest published view as JSON bytes (None before the first)."""
        with self._cond:
            return self._view

    def events_after(self, after: int, wait: float) -> dict[str, Any]:
        """The public records with ``seq`` above ``after`` (at most ``MAX_BATCH``), waiting up to ``wait``
        seconds for one; ``{"records", "next", "missed"}`` (module docstring)."""
        def ready() -> bool:
            return self._stopping or bool(self._ring and self._ring[-1]["seq"] > after)

        with self._cond:
            self._cond.wait_for(ready, timeout=wait)
            records = [r for r in self._ring if r["seq"] > after][:MAX_BATCH]
            full = len(records) == MAX_BATCH
            nxt = records[-1]["seq"] if full else max(after, self._last_seq)
            missed = self._horizon is not None and after < self._horizon
            return {"records": records, "next": nxt, "missed": missed}

    def current(self) -> tuple[int | None, str | None]:
        """The round number and state of the latest published view (the round guard's reference)."""
        with self._cond:
            return self._current

    def operators(self) -> dict[str, Operator]:
        """The operators as the file says now: read again whenever its content or mode changed (compared in
        full, not by modification time). It grants rights, so a reload fails closed: a file that is refused
        (malformed, or readable by others) or unreadable gives no operators at all until it is mended, and a
        user removed from the file loses access at the next request."""
        with self._operators_lock:
            stamp = self._stamp()
            if stamp != self._operators_stamp and self._operators_path is not None:
                try:
                    self._operators = load_operators(self._operators_path)
                    log.info("control interface: operators read again from %s", self._operators_path)
                except (ConfigError, OSError) as exc:
                    log.error("control interface: %s; every action is refused until the file is mended", exc)
                    self._operators = {}
                self._operators_stamp = stamp
            return self._operators

    def _stamp(self) -> tuple[int, bytes] | None:
        """The operators file's mode and content (None when absent or unreadable)."""
        if self._operators_path is None:
            return None
        try:
            with self._operators_path.open("rb") as handle:
                return os.fstat(handle.fileno()).st_mode, handle.read(1 << 20)
        except OSError:
            return None


class _Server(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` that logs a handler's unexpected error instead of printing it."""

    daemon_threads = True  # a handler blocked on a slow client must not keep the process alive
    #: connections waiting to be accepted; the standard library's 5 resets the sixth of a burst of clients
    request_queue_size = 64
    control: ControlServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.exception("control interface: error on a request from %s", client_address[0])


class _Server6(_Server):
    """The same on IPv6 (``::1``)."""

    address_family = socket.AF_INET6


def _decimal(text: str, maximum: int) -> int | None:
    """``text`` as an integer when it is plain ASCII decimal digits (``DIGITS``) of at most ``maximum``, else
    None; more than 16 digits are refused before ``int()`` reads them."""
    if not DIGITS.fullmatch(text) or len(text) > 16:
        return None
    value = int(text)
    return value if value <= maximum else None


class _HTTPError(Exception):
    """An answer other than success: ``status``, ``message`` and extra headers."""

    def __init__(self, status: HTTPStatus, message: str, headers: dict[str, str] | None = None, *,
                 body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.body = body or {}


class _Handler(BaseHTTPRequestHandler):
    """One request (HTTP/1.0: one request per connection). Errors answer ``{"error": message}``."""

    server: _Server
    server_version = "crisscross-control"
    sys_version = ""
    #: Every answer has a status line and headers: http.server takes a request line without a version for
    #: HTTP/0.9 and would answer it (and a line it cannot read at all) with a bare body.
    default_request_version = "HTTP/1.0"

    def setup(self) -> None:
        self.timeout = self.server.control.request_timeout
        super().setup()

    # ------------------------------------------------------------------ dispatch
    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_OPTIONS(self) -> None:
        self._dispatch("OPTIONS")

    def parse_request(self) -> bool:
        """``BaseHTTPRequestHandler.parse_request``, but a request line of two words (HTTP/0.9, or bytes that are
        no request) is answered 400 at once: it has no headers to wait for."""
        words = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n").split()
        if len(words) == 2:
            self.command, self.request_version = None, self.default_request_version
            self.requestline = " ".join(words)
            self.send_error(HTTPStatus.BAD_REQUEST, "bad request line: expected METHOD PATH HTTP/1.x")
            return False
        return super().parse_request()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors the HTTP layer finds itself (a malformed request line, an unsupported HTTP version (505), an
        unknown method, headers too long) answer JSON like every other answer, ``{"error": message}``, with a
        status line and headers (``default_request_version``); the connection is closed after it."""
        self.close_connection = True
        status = HTTPStatus(code)
        message = (message or status.phrase)[:200]  # a repr of the request line may be 64 KB long
        self.log_error("code %d, message %s", code, message)
        self._send(status, {"error": message}, {"Connection": "close"})

    ROUTES: ClassVar[dict[str, tuple[str, str]]] = {"/state": ("GET", "_state"), "/events": ("GET", "_events"), "/actions": ("POST", "_actions")}

    def _dispatch(self, method: str) -> None:
        path = urlsplit(self.path).path
        self._body: bytes | None = None
        try:
            self._check_headers()
            if path not in self.ROUTES:
                raise _HTTPError(HTTPStatus.NOT_FOUND, f"no such path {_json(path[:60])}: /state, /events, /actions")
            allowed, handler = self.ROUTES[path]
            if method != allowed:
                raise _HTTPError(HTTPStatus.METHOD_NOT_ALLOWED, f"{path} answers {allowed} only", {"Allow": allowed})
            status, body = getattr(self, handler)()
            self._send(status, body)
        except _HTTPError as exc:
            if exc.status != HTTPStatus.REQUEST_ENTITY_TOO_LARGE:
                self._drain()  # a body left unread would reset the connection before the client reads the answer
            self._send(exc.status, {"error": exc.message, **exc.body}, exc.headers)
        except (BrokenPipeError, ConnectionResetError):
            log.info("control interface: %s went away during %s %s", self.client_address[0], method, path)
        except Exception:
            log.exception("control interface: %s %s from %s failed", method, path, self.client_address[0])
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal error; nothing was changed"})

    def _check_headers(self) -> None:
        """400 for a header of ``SINGLE_HEADERS`` given more than once or an HTTP/1.1 request without ``Host``;
        421 for a ``Host`` that does not name this server (``ControlServer.accepts_host``). An HTTP/1.0 request
        may leave ``Host`` out (a browser always sends it)."""
        for name in SINGLE_HEADERS:
            if len(self.headers.get_all(name) or ()) > 1:
                raise _HTTPError(HTTPStatus.BAD_REQUEST, f"header {name} repeated; send it once")
        host = self.headers.get("Host")
        if host is None:
            if self.request_version != "HTTP/1.0":
                raise _HTTPError(HTTPStatus.BAD_REQUEST, f"{self.request_version[:12]} request without a Host header")
            return
        control = self.server.control
        if not control.accepts_host(host):
            raise _HTTPError(HTTPStatus.MISDIRECTED_REQUEST, f"Host {_json(host.strip()[:60])} is not this server; "
                                                             f"use {control.url}")

    def _send(self, status: HTTPStatus, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            log.info("control interface: cannot answer %s: connection closed", self.client_address[0])

    # ------------------------------------------------------------------ endpoints
    def _query(self, allowed: tuple[str, ...]) -> dict[str, str]:
        """The query parameters, each at most once and each one of ``allowed`` (else 400), the same for every
        endpoint."""
        query = parse_qs(urlsplit(self.path).query, keep_blank_values=True)
        unknown = set(query) - set(allowed)
        if unknown:
            known = f"allowed: {', '.join(allowed)}" if allowed else "it takes none"
            raise _HTTPError(HTTPStatus.BAD_REQUEST, f"unknown parameter(s): {', '.join(sorted(unknown))[:60]}; "
                                                     f"{known}")
        repeated = sorted(name for name, values in query.items() if len(values) > 1)
        if repeated:
            raise _HTTPError(HTTPStatus.BAD_REQUEST, f"parameter {repeated[0]} given more than once")
        return {name: values[-1] for name, values in query.items()}

    def _state(self) -> tuple[HTTPStatus, bytes]:
        self._query(())
        body = self.server.control.state_body()
        if body is None:
            raise _HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, "no state yet: the controller has not started")
        return HTTPStatus.OK, body

    def _events(self) -> tuple[HTTPStatus, dict[str, Any]]:
        query = self._query(("after", "timeout"))
        after_text = query.get("after", "0")
        wait_text = query.get("timeout", "0")
        after = _decimal(after_text, MAX_SEQ)
        if after is None:
            raise _HTTPError(HTTPStatus.BAD_REQUEST, f"after must be 0 to {MAX_SEQ}, an integer in plain decimal "
                                                     f"digits; got {_json(after_text[:20])}")
        if not SECONDS.fullmatch(wait_text) or len(wait_text) > 16 or float(wait_text) > MAX_WAIT:
            raise _HTTPError(HTTPStatus.BAD_REQUEST, f"timeout must be 0 to {MAX_WAIT:g} s in plain decimal digits "
                                                     f"(25, 0.5); got {_json(wait_text[:20])}")
        return HTTPStatus.OK, self.server.control.events_after(after, float(wait_text))

    def _read_body(self) -> bytes:
        """The request body: ``Content-Length`` bytes, at most ``MAX_BODY`` (413 without reading a larger one),
        411 without a length, 400 for a length that is not plain decimal digits, 408 when it does not arrive
        within the request timeout."""
        if self._body is not None:
            return self._body
        if "Transfer-Encoding" in self.headers:  # even empty: the body's framing would be ambiguous
            raise _HTTPError(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length, not chunked")
        text = self.headers.get("Content-Length")
        if text is None:
            raise _HTTPError(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
        text = text.strip()
        if not DIGITS.fullmatch(text):
            raise _HTTPError(HTTPStatus.BAD_REQUEST, "Content-Length must be a number of bytes in plain decimal "
                                                     "digits")
        length = _decimal(text, MAX_BODY)
        if length is None:
            raise _HTTPError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {MAX_BODY} bytes")
        self._body = b""  # whatever happens next, the body is not read again
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            raw = b""
        if len(raw) < length:
            raise _HTTPError(HTTPStatus.REQUEST_TIMEOUT, "the body did not arrive in time; nothing was queued")
        self._body = raw
        return raw

    def _drain(self) -> None:
        """Read a small unread body before an error answer; give up quietly on a bad length or a timeout, and
        read nothing when repeated ``Content-Length`` headers disagree (the body's length is unknown)."""
        lengths = set(self.headers.get_all("Content-Length") or ()) if self.headers is not None else set()
        if self._body is None and len(lengths) == 1:
            try:
                self._read_body()
            except _HTTPError:
                pass  # the answer already being sent says what is wrong; the connection closes after it

    def _actions(self) -> tuple[HTTPStatus, dict[str, Any]]:
        control = self.server.control
        raw = self._read_body()
        operator = self._authenticate(control)
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise _HTTPError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json")
        try:
            body = json.loads(raw, object_pairs_hook=_unique_keys)
        except _RepeatedKey as exc:
            raise _HTTPError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise _HTTPError(HTTPStatus.BAD_REQUEST, "the body is not JSON") from None
        action, reason, code, round_no, state = _check_action(body)
        stale = stale_reason(round_no, state, *control.current())
        queued = OperatorAction(action, operator.name, operator.role, reason, code, round_no, state, stale)
        control.events.put(queued)  # a stale action too: it is journaled and refused by the round machine
        log.info("control interface: %s (%s) queued %s from %s%s", operator.name, operator.role, action,
                 self.client_address[0], f" ({stale})" if stale else "")
        if stale:
            current_round, current_state = control.current()
            raise _HTTPError(HTTPStatus.CONFLICT, stale, body={"round": current_round, "state": current_state})
        return HTTPStatus.ACCEPTED, {"queued": {"action": action, "user": operator.name, "role": operator.role,
                                                "code": code, "round": round_no, "state": state}}

    def _authenticate(self, control: ControlServer) -> Operator:
        challenge = {"WWW-Authenticate": 'Basic realm="crisscross", charset="UTF-8"'}
        header = self.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        user = ""
        operator = None
        if scheme.lower() == "basic":
            try:
                user, sep, password = base64.b64decode(token.strip(), validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                sep = ""
            if sep:
                operator = self._check_password(control, user, password)
        if operator is None:
            log.warning("control interface: refused credentials for user %r from %s", user[:40],
                        self.client_address[0])
            if not control.operators():
                raise _HTTPError(HTTPStatus.UNAUTHORIZED, f"no operators in {control.config.operators}: add one with "
                                                          f"`crisscross operator add` (or mend the file)", challenge)
            raise _HTTPError(HTTPStatus.UNAUTHORIZED, "valid operator credentials required (HTTP Basic)", challenge)
        return operator

    def _check_password(self, control: ControlServer, user: str, password: str) -> Operator | None:
        """``authenticate`` in one of ``control.checks``' places; 503 at once (``Retry-After: 1``) when all
        ``max_checks`` are taken, so a flood of wrong passwords cannot take every core (module ``MAX_CHECKS``)."""
        if not control.checks.acquire(blocking=False):
            log.warning("control interface: %d password checks already running; refused a check for user %r "
                        "from %s", control.max_checks, user[:40], self.client_address[0])
            raise _HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, f"{control.max_checks} password checks already "
                                                             f"running; try again in a second", {"Retry-After": "1"})
        try:
            return authenticate(control.operators(), user, password)
        finally:
            control.checks.release()

    def log_message(self, format: str, *args: Any) -> None:
        """Access log at debug level (http.server writes to standard error otherwise)."""
        log.debug("control interface: %s %s", self.client_address[0], format % args)

    def log_error(self, format: str, *args: Any) -> None:
        """Protocol errors (a request that timed out, a malformed request line) at warning level."""
        log.warning("control interface: %s %s", self.client_address[0], format % args)


class _RepeatedKey(ValueError):
    """A JSON object of the body repeats a key."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` hook: a JSON object that repeats a key is refused (``_RepeatedKey``), as in ``settle``."""
    keys = [key for key, _ in pairs]
    repeated = next((key for key in keys if keys.count(key) > 1), None)
    if repeated is not None:
        raise _RepeatedKey(f"key {_json(repeated[:40])} repeated in the body")
    return dict(pairs)


#: Keys of an action's body (docs/control.md, "POST /actions").
ACTION_KEYS: tuple[str, ...] = ("action", "code", "reason", "round", "state")


def _json(value: Any) -> str:
    """``value`` as JSON text, cut to 40 characters, for an error message (``null``, ``true``, ``"x"``)."""
    try:
        return json.dumps(value)[:40]
    except (TypeError, ValueError):
        return type(value).__name__


def _check_action(body: Any) -> tuple[str, str, str, int | None, str | None]:
    """``(action, reason, code, round, state)`` of an action body, else ``_HTTPError`` 400 saying what is wrong.

    ``void_round`` needs a ``code`` (``VOID_CODES``); ``reason`` is optional free text (journal only);
    ``round`` (a non-negative integer) and ``state`` (text) are the round guard, each optional."""
    if not isinstance(body, dict):
        raise _HTTPError(HTTPStatus.BAD_REQUEST, 'expected a JSON object {"action": ..., "code": ..., ...}')
    unknown = set(body) - set(ACTION_KEYS)
    if unknown:
        raise _HTTPError(HTTPStatus.BAD_REQUEST, f"unknown key(s): {', '.join(sorted(unknown))[:60]}; the allowed "
                                                 f"keys are {', '.join(ACTION_KEYS)}")
    action = body.get("action")
    if action not in ACTIONS:
        raise _HTTPError(HTTPStatus.BAD_REQUEST, f"unknown action {_json(action)}; allowed: {', '.join(ACTIONS)}")
    reason = body.get("reason", "")
    if not isinstance(reason, str) or len(reason) > MAX_REASON or not reason.isprintable():
        raise _HTTPError(HTTPStatus.BAD_REQUEST, f"reason must be one line of printable text, at most {MAX_REASON} "
                                                 f"characters")
    code = body.get("code", "")
    if code != "" and code not in VOID_CODES:
        raise _HTTPError(HTTPStatus.BAD_REQUEST, f"code must be one of {', '.join(VOID_CODES)}; got {_json(code)}")
    if action == "void_round" and not code:
        raise _HTTPError(HTTPStatus.BAD_REQUEST, f"void_round needs a code: {', '.join(VOID_CODES)} (the free text "
                                                 f"of reason stays in the journal)")
    round_no = body.get("round")
    if round_no is not None and (not isinstance(round_no, int) or isinstance(round_no, bool)
                                 or not 0 <= round_no <= MAX_SEQ):
        raise _HTTPError(HTTPStatus.BAD_REQUEST, f"round must be a round number (0 to {MAX_SEQ}) or null; got "
                                                 f"{_json(round_no)}")
    from controller.round import STATES  # here: controller.table imports this module, controller.round it

    state = body.get("state")
    if state is not None and state not in STATES:
        raise _HTTPError(HTTPStatus.BAD_REQUEST, f"state must be a state of the round as /state shows it "
                                                 f"(docs/round-states.md), or null; got {_json(state)}")
    return action, reason, code, round_no, state
