"""The control interface's web application (Starlette) and its HTTP/1.1 protocol (uvicorn's h11 protocol, bounded).

``build_app(server)`` answers the endpoints of docs/control.md for one ``controller.control.server.ControlServer``:
``GET /state``, ``GET /labels``, ``GET /events`` (long poll), ``GET /events/stream`` (Server-Sent Events from the one broadcaster,
``controller.control.broadcast``), ``POST /actions``, ``GET /openapi.json``, and the dealer's screen (``GET /`` and
``/screen/...``, the files of ``controller/control/screen``). Every request first passes ``Guard``: one value of each
``SINGLE_HEADERS``, a ``Host`` naming this server (421, DNS rebinding), a known path and method. Every answer
but the page's files is JSON, ``{"error": ...}`` for an error.

``protocol_class(server)`` is uvicorn's ``H11Protocol`` with the bounds uvicorn leaves to the application
(docs/control.md, "Bounds"): a connection beyond ``max_connections`` sheds the oldest one still waiting for
its request's headers (else it is closed as soon as it is accepted), a
request whose headers are not complete within ``request_timeout`` is closed without an answer, and the errors
h11 finds itself (a malformed request line, a bad ``Content-Length``, a repeated ``Host``) are answered in JSON.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import sys
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any

import h11
from starlette.applications import Starlette
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from controller.control.broadcast import END, Subscriber, sse_frame
from controller.control.checks import (DIGITS, MAX_BODY, MAX_SEQ, MAX_WAIT, SINGLE_HEADERS, HTTPError, RepeatedKey,
                                       body_text, check_action, check_rating, content_type_of, decimal, json_text,
                                       seconds, unique_keys)
from controller.control.signin import authenticate_request as _authenticate
from controller.control.signin import require_supervisor as _require_supervisor
from controller.round.inputs import SUPERVISOR_ACTIONS, OperatorAction, SeatRating, stale_answer, stale_reason
from drivers.events import SEATS

if TYPE_CHECKING:
    from controller.control.operators import Operator
    from controller.control.server import ControlServer

log = logging.getLogger("controller.control.server")

#: The dealer's screen: static files shipped in the package (pyproject.toml package-data).
SCREEN_DIR = Path(__file__).resolve().parent / "screen"
#: Longest life of one ``GET /events/stream`` (seconds); the browser reconnects from its last ``id``.
STREAM_SECONDS = 300.0
#: An idle stream's ``heartbeat`` frame, sent after this many seconds without a frame (``ControlServer.heartbeat``
#: unless given): a proxy or the browser keeps the stream open, and the dealer's screen, which learns the interval
#: from ``GET /labels`` (``heartbeat_s``), takes a longer silence for a table that no longer answers.
HEARTBEAT = 15.0
#: The frame sent on an idle stream: an event, not a comment, since a browser's ``EventSource`` never shows a page
#: a comment.
HEARTBEAT_FRAME = b"event: heartbeat\ndata: {}\n\n"
#: Most frames sent to a stream's client in one write (those waiting when it writes).
MAX_JOINED = 64
#: Longest wait for one write to a stream's client (seconds); a client that reads slower is disconnected.
WRITE_TIMEOUT = 5.0
#: Paths and the method each answers (HEAD too where GET is answered); ``/screen/`` serves the page's files.
ROUTES: dict[str, tuple[str, ...]] = {
    "/state": ("GET",), "/events": ("GET",), "/events/stream": ("GET",), "/actions": ("POST",),
    "/operator": ("GET",), "/alerts": ("GET",), "/meters": ("GET",), "/sessions": ("GET", "POST"),
    "/labels": ("GET",), "/recall": ("GET",), "/openapi.json": ("GET",), "/": ("GET",)}
#: Methods of RFC 9110 (section 9.3) and PATCH (RFC 5789); a path answers the others of them 405, any other
#: method is 501.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})
JSON_HEADERS = {"Cache-Control": "no-store"}


def error_response(status: int, message: str, headers: dict[str, str] | None = None,
                   body: dict[str, Any] | None = None) -> JSONResponse:
    """An error answer; the connection is closed after it (a body left unread is not taken for a request)."""
    return JSONResponse({"error": message, **(body or {})}, status,
                        {**JSON_HEADERS, "Connection": "close", **(headers or {})})


class Guard:
    """ASGI middleware: the header, Host, path and method rules of every request (module docstring). ``server``
    has ``accepts_host(value)`` and ``url``; ``routes``: the paths and the methods each answers; ``files``: the
    path prefix of the page's static files (GET only). The pit page (``controller.floor.serve``) passes its own."""

    def __init__(self, app: Any, server: Any, routes: dict[str, tuple[str, ...]] | None = None,
                 files: str = "/screen/") -> None:
        self.app = app
        self.server = server
        self.routes = ROUTES if routes is None else routes
        self.files = files

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            self.check(scope)
        except HTTPError as exc:
            await error_response(exc.status, exc.message, exc.headers, exc.body)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def check(self, scope: Scope) -> None:
        """``HTTPError`` 400 for a repeated ``SINGLE_HEADERS`` header, 421 for a ``Host`` that is not this
        server, 505 for a version other than HTTP/1.x (h11 reads ``PRI * HTTP/2.0``), 501 for an unknown method
        on an unknown path, 404 for an unknown path or one under ``files`` not spelled as a file's (``is_file``),
        405 for any other method than the one a path answers (an unknown one too: ``Allow`` names the one it
        answers, RFC 9110 15.5.6)."""
        names = [name.decode("latin-1").lower() for name, _ in scope["headers"]]
        for name in SINGLE_HEADERS:
            if names.count(name.lower()) > 1:
                raise HTTPError(HTTPStatus.BAD_REQUEST, f"header {name} repeated; send it once")
        hosts = [value.decode("latin-1") for name, value in scope["headers"] if name.lower() == b"host"]
        if hosts and not self.server.accepts_host(hosts[0]):
            raise HTTPError(HTTPStatus.MISDIRECTED_REQUEST, f"Host {json_text(hosts[0].strip()[:60])} is not this "
                                                            f"server; use {self.server.url}")
        if scope["http_version"] not in ("1.0", "1.1"):
            raise HTTPError(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, "HTTP/1.0 or HTTP/1.1 only")
        method, path = scope["method"], scope["path"]
        allowed = ("GET",) if path.startswith(self.files) else self.routes.get(path)
        if method not in METHODS and allowed is None:
            raise HTTPError(HTTPStatus.NOT_IMPLEMENTED, f"method {json_text(method[:20])} not implemented")
        if allowed is None:
            raise HTTPError(HTTPStatus.NOT_FOUND, f"no such path {json_text(path[:60])}: {', '.join(self.routes)}")
        if path.startswith(self.files) and not self.is_file(path):
            raise HTTPError(HTTPStatus.NOT_FOUND, f"no such file {json_text(path[:60])}")
        if method not in allowed and not (method == "HEAD" and "GET" in allowed):
            raise HTTPError(HTTPStatus.METHOD_NOT_ALLOWED, f"{path} answers {' and '.join(allowed)} only",
                            {"Allow": ", ".join(allowed)})

    def is_file(self, path: str) -> bool:
        """Whether ``path`` names a file under ``files`` as it is spelled: every segment after the prefix a name,
        none empty (a trailing or doubled ``/``), ``.`` or ``..``; the static files' server would read such a path
        as another one (``/screen/index.html/`` as ``/screen/index.html``), and it is a missing path (404)."""
        return path.startswith(self.files) and all(
            segment not in ("", ".", "..") for segment in path[len(self.files):].split("/"))


def _json_body(request: Request, raw: bytes) -> Any:
    """The request's JSON body (Content-Type application/json, in UTF-8: ``content_type_of``, ``body_text``; no key
    twice), else ``HTTPError`` 415 or 400."""
    content_type_of(request.headers.get("content-type", ""))
    text = body_text(raw)
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKey as exc:
        raise HTTPError(HTTPStatus.BAD_REQUEST, str(exc)) from None
    except (ValueError, RecursionError):
        raise HTTPError(HTTPStatus.BAD_REQUEST, "the body is not JSON") from None


def query_params(request: Request, allowed: tuple[str, ...]) -> dict[str, str]:
    """The query parameters, each at most once and each one of ``allowed`` (else 400)."""
    items = request.query_params.multi_items()
    unknown = {name for name, _ in items} - set(allowed)
    if unknown:
        known = f"allowed: {', '.join(allowed)}" if allowed else "it takes none"
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"unknown parameter(s): {', '.join(sorted(unknown))[:60]}; {known}")
    names = [name for name, _ in items]
    repeated = sorted(name for name in set(names) if names.count(name) > 1)
    if repeated:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"parameter {repeated[0]} given more than once")
    return dict(items)


def _after(text: str, name: str = "after") -> int:
    """``text`` as a journal seq cursor, else 400 naming where it came from (``name``: the parameter ``after`` or
    the header ``Last-Event-ID``)."""
    after = decimal(text, MAX_SEQ)
    if after is None:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"{name} must be 0 to {MAX_SEQ}, an integer in plain decimal digits; "
                                                f"got {json_text(text[:20])}")
    return after


def error_handlers(what: str, defect: str) -> dict[Any, Any]:
    """Starlette's exception handlers of the interface named ``what``: an ``HTTPError`` answered as itself
    (``error_response``); Starlette's own ``HTTPException`` (a file of the page's that does not exist, raised by
    ``StaticFiles``) in the same JSON shape, never Starlette's plain text; any other exception, a defect, logged
    with its request and answered 500 saying ``defect``."""

    async def on_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPError)
        return error_response(exc.status, exc.message, exc.headers, exc.body)

    async def on_starlette_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        path = json_text(request.url.path[:60])
        message = (f"no such file {path}" if exc.status_code == HTTPStatus.NOT_FOUND
                   else f"{HTTPStatus(exc.status_code).phrase}: {path}")
        return error_response(exc.status_code, message, dict(exc.headers or {}))

    async def on_defect(request: Request, exc: Exception) -> Response:
        log.error("%s: %s %s failed", what, request.method, request.url.path, exc_info=exc)
        return error_response(500, defect)

    return {HTTPError: on_error, StarletteHTTPException: on_starlette_error, Exception: on_defect}


def build_app(server: ControlServer) -> Guard:
    """The Starlette application of ``server`` behind ``Guard`` (module docstring)."""
    hub = server.hub

    async def state(request: Request) -> Response:
        query_params(request, ())
        if hub.view_body is None:
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, "no state yet: the controller has not started")
        return Response(hub.view_body, 200, JSON_HEADERS, media_type="application/json")

    async def events(request: Request) -> Response:
        query = query_params(request, ("after", "timeout"))
        after = _after(query.get("after", "0"))
        wait_text = query.get("timeout", "0")
        wait = seconds(wait_text, MAX_WAIT)
        if wait is None:
            raise HTTPError(HTTPStatus.BAD_REQUEST, f"timeout must be 0 to {MAX_WAIT:g} s in plain decimal digits "
                                                    f"(25, 0.5); got {json_text(wait_text[:20])}")
        await hub.wait_after(after, wait)
        return Response(hub.after_json(after), 200, JSON_HEADERS, media_type="application/json")

    async def stream(request: Request) -> Response:
        query = query_params(request, ("after",))
        # an empty Last-Event-ID is no cursor (WHATWG HTML, "Server-sent events": an empty id resets the last one)
        last_id = request.headers.get("last-event-id", "").strip()
        if last_id:
            after: int | None = _after(last_id, "Last-Event-ID")
        else:
            after = None if query.get("after") is None else _after(query["after"])
        subscriber = hub.subscribe(after)
        if subscriber is None:
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, f"{hub.max_subscribers} event streams already open; "
                                                            f"try again later", {"Retry-After": "5"})
        return _EventStream(subscriber, server)

    def _within_rate(operator: Operator, action: str) -> None:
        """429 with ``Retry-After`` when ``operator`` queued its ``rate.BURST`` actions already (``ActionRate``):
        nothing is queued or journaled; logged at most a few lines a key and interval."""
        wait = server.action_rate.take(operator.name)
        if wait > 0:
            server.refusals.log(logging.WARNING, ("actions", operator.name), "control interface: %s (%s): %s "
                                "refused: more actions than %d at once, %g a second after", operator.name,
                                operator.role, action, server.action_rate.burst, server.action_rate.per_second)
            raise HTTPError(HTTPStatus.TOO_MANY_REQUESTS, f"{operator.name}: more actions than "
                            f"{server.action_rate.burst} at once; the next in {wait:.1f} s",
                            {"Retry-After": str(max(1, math.ceil(wait)))})

    async def actions(request: Request) -> Response:
        raw = await _read_body(request, server.request_timeout)
        operator = await _authenticate(request, server)
        action, reason, code, round_no, state_name, answers = check_action(_json_body(request, raw))
        _within_rate(operator, action)
        why = stale_reason(round_no, state_name, *hub.current()) or stale_answer(action, answers, hub.answers())
        server.events.put(OperatorAction(action, operator.name, operator.role, reason, code, round_no, state_name,
                                         why, answers))  # a stale or forbidden action too: journaled and refused
        client = request.client.host if request.client else "?"
        log.info("control interface: %s (%s) queued %s from %s%s", operator.name, operator.role, action, client,
                 f" ({why})" if why else "")
        if action in SUPERVISOR_ACTIONS:
            _require_supervisor(operator, action)
        if why:
            current_round, current_state = hub.current()
            raise HTTPError(HTTPStatus.CONFLICT, why, body={"round": current_round, "state": current_state,
                                                            "answers": hub.answers()})
        return JSONResponse({"queued": {"action": action, "user": operator.name, "role": operator.role,
                                        "code": code, "round": round_no, "state": state_name}}, 202, JSON_HEADERS)

    async def operator(request: Request) -> Response:
        """The user and role of the request's credentials (the screen's sign-in), else 401; nothing is queued."""
        query_params(request, ())
        who = await _authenticate(request, server)
        return JSONResponse({"user": who.name, "role": who.role}, 200, JSON_HEADERS)

    async def alerts(request: Request) -> Response:
        """The last hole-card alerts (controller/service/protection.py) for a supervisor; 403 for a dealer."""
        query_params(request, ())
        who = await _authenticate(request, server)
        _require_supervisor(who, "reading hole-card alerts")
        return JSONResponse({"alerts": list(server.alerts)}, 200, JSON_HEADERS)

    async def meters(request: Request) -> Response:
        """The lifetime meters (``Meters.to_json()``, controller/round/meters.py) as of the last round's end or
        the start, for a supervisor; 403 for a dealer, 503 before the controller published them."""
        query_params(request, ())
        who = await _authenticate(request, server)
        _require_supervisor(who, "reading the meters")
        if server.meters is None:
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, "no meters yet: the controller has not started")
        return JSONResponse(server.meters, 200, JSON_HEADERS)

    async def sessions(request: Request) -> Response:
        """GET: every seat session's rating (controller/service/rating_live.py) for a supervisor; 403 for a dealer,
        503 when the service runs without ``--rating`` or before the rating is set up. POST: a rating action
        (``RATING_ACTIONS``: a player's id attached to a seat, taken off, the seat's session ended) by a dealer or a
        supervisor, queued as a ``SeatRating`` input (202)."""
        if request.method == "POST":
            return await _rate(request)
        query_params(request, ())
        who = await _authenticate(request, server)
        _require_supervisor(who, "reading the sessions' ratings")
        if server.sessions is None:
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE,
                            "no ratings: the service runs without --rating, or the rating is still setting up")
        return JSONResponse({"sessions": list(server.sessions)}, 200, JSON_HEADERS)

    async def _rate(request: Request) -> Response:
        raw = await _read_body(request, server.request_timeout)
        operator = await _authenticate(request, server)
        action, seat, player = check_rating(_json_body(request, raw), SEATS)
        _within_rate(operator, action)
        server.events.put(SeatRating(action, seat, player, operator.name, operator.role))
        log.info("control interface: %s (%s) queued %s of seat %d", operator.name, operator.role, action, seat)
        return JSONResponse({"queued": {"action": action, "seat": seat, "player": player, "user": operator.name,
                                        "role": operator.role}}, 202, JSON_HEADERS)

    async def recall(request: Request) -> Response:
        """Game recall (``controller.control.recall``): the last rounds, or round ``?round=N`` step by step, for a
        supervisor; 403 for a dealer, 404 for a round not among the last ones, 503 (``Recall.answer``)."""
        query = query_params(request, ("round",))
        who = await _authenticate(request, server)
        _require_supervisor(who, "game recall")
        number = None if "round" not in query else _after(query["round"], "round")
        return JSONResponse(await server.recall.answer(number), 200, JSON_HEADERS)

    async def openapi(request: Request) -> Response:
        query_params(request, ())
        from controller.control.openapi import openapi_document
        return JSONResponse(openapi_document(), 200, JSON_HEADERS)

    async def labels(request: Request) -> Response:
        """The words of a screen (``controller.round.actions.WORDS``): each action's label and role, the names of
        states, spots and hands, the currency; and ``heartbeat_s``, the stream's heartbeat interval (seconds,
        ``server.heartbeat``: an integer when whole, 15 not 15.0); the same for everyone, nothing secret."""
        query_params(request, ())
        from controller.round.actions import WORDS  # here, as openapi's: the round's graph imports the table's
        every = server.heartbeat
        return JSONResponse({**WORDS, "heartbeat_s": int(every) if float(every).is_integer() else every}, 200,
                            JSON_HEADERS)

    async def page(request: Request) -> Response:
        return FileResponse(SCREEN_DIR / "index.html", headers=JSON_HEADERS)

    app = Starlette(routes=[Route("/state", state), Route("/events", events), Route("/events/stream", stream),
                            Route("/actions", actions, methods=["POST"]), Route("/operator", operator),
                            Route("/alerts", alerts), Route("/meters", meters), Route("/labels", labels),
                            Route("/sessions", sessions, methods=["GET", "POST"]), Route("/recall", recall),
                            Route("/openapi.json", openapi),
                            Route("/", page), Mount("/screen", StaticFiles(directory=SCREEN_DIR))],
                    exception_handlers=error_handlers("control interface", "internal error; nothing was changed"))
    return Guard(app, server)


async def _read_body(request: Request, timeout: float) -> bytes:
    """The request body: ``Content-Length`` bytes, at most ``MAX_BODY`` (413 without reading a larger one), 411
    without a length or with any ``Transfer-Encoding``, 400 for a length that is not plain decimal digits, 408
    when it does not arrive within ``timeout`` seconds."""
    if "transfer-encoding" in request.headers:  # even empty: the body's framing would be ambiguous
        raise HTTPError(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length, not chunked")
    text = request.headers.get("content-length")
    if text is None:
        raise HTTPError(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
    if not DIGITS.fullmatch(text.strip()):
        raise HTTPError(HTTPStatus.BAD_REQUEST, "Content-Length must be a number of bytes in plain decimal digits")
    length = decimal(text.strip(), MAX_BODY)
    if length is None:
        raise HTTPError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {MAX_BODY} bytes")
    try:
        raw = await asyncio.wait_for(request.body(), timeout)
    except (TimeoutError, ClientDisconnect):
        raw = b""
    if len(raw) < length:
        raise HTTPError(HTTPStatus.REQUEST_TIMEOUT, "the body did not arrive in time; nothing was queued")
    return raw


class _EventStream(Response):
    """``text/event-stream`` of one subscriber: ``retry``, then its queued frames, ``HEARTBEAT_FRAME`` after every
    ``server.heartbeat`` seconds without a frame, until ``STREAM_SECONDS`` pass, the client goes away, the server
    stops or the subscriber is dropped (an ``event: dropped`` frame). A write not taken within ``WRITE_TIMEOUT``
    disconnects the client."""

    def __init__(self, subscriber: Subscriber, server: ControlServer) -> None:
        self.status_code = 200
        self.background = None
        self.raw_headers = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-store")]
        self.subscriber = subscriber
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        subscriber, hub = self.subscriber, self.server.hub
        loop = asyncio.get_running_loop()

        async def watch() -> None:  # the client went away: end the stream now, not at the next write
            while (await receive())["type"] != "http.disconnect":
                pass
            hub.unsubscribe(subscriber)
            subscriber.offer(END)

        watcher = asyncio.ensure_future(watch())
        deadline = loop.time() + STREAM_SECONDS
        try:
            await asyncio.wait_for(send({"type": "http.response.start", "status": 200, "headers": self.raw_headers}),
                                   WRITE_TIMEOUT)
            frames, ended = [b"retry: 1000\n\n"], False
            while True:
                if frames:
                    async with asyncio.timeout(WRITE_TIMEOUT):
                        await send({"type": "http.response.body", "body": b"".join(frames), "more_body": True})
                remaining = deadline - loop.time()
                if ended or remaining <= 0:
                    break
                try:
                    async with asyncio.timeout(min(self.server.heartbeat, remaining)):
                        frames = [await subscriber.queue.get()]
                except TimeoutError:
                    frames = [HEARTBEAT_FRAME]
                while not subscriber.queue.empty() and len(frames) < MAX_JOINED:  # those waiting: one write
                    frames.append(subscriber.queue.get_nowait())
                if END in frames:  # the end comes last: nothing is offered to a subscriber after it
                    frames, ended = frames[:frames.index(END)], True
                    if subscriber.dropped and not hub.stopping:
                        frames.append(sse_frame("dropped", {"queue": hub.client_queue}))
            await asyncio.wait_for(send({"type": "http.response.body", "body": b"", "more_body": False}),
                                   WRITE_TIMEOUT)
        except TimeoutError:
            log.info("control interface: an event stream's client reads too slowly; disconnected")
            raise
        finally:
            hub.release(subscriber)
            watcher.cancel()


#: ``bytearray(b'...')`` or ``b'...'`` in h11's messages, quoted as text: ``'...'`` (escapes kept).
_BYTES_REPR = re.compile(r"bytearray\((b(['\"]).*?\2)\)|\b(b(['\"]).*?\4)")


def protocol_class(server: ControlServer) -> type[H11Protocol]:
    """uvicorn's h11 protocol with this server's bounds (module docstring)."""

    class Protocol(_BoundedProtocol):
        max_connections = server.max_connections
        request_timeout = server.request_timeout

    return Protocol


class _BoundedProtocol(H11Protocol):
    """``H11Protocol`` with a bound on connections, a deadline for a request's headers and JSON errors.

    Shedding (docs/control.md, "Bounds"): beyond ``max_connections`` open connections, the oldest one that is
    waiting for its client (idle after an answer, slow to send a request's headers or body: the slowloris kind) is closed
    to make room, so a client that speaks promptly is served however many slow ones hold connections; only when
    every connection is busy with a request or a stream is the new one closed at once."""

    max_connections: int
    request_timeout: float
    refused = 0  # connections closed at once for being beyond max_connections (all servers of this class)
    shed = 0  # waiting connections closed to make room for a new one (all servers of this class)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.accepted = self.loop.time()
        live = [c for c in self.connections if c is not self and not c.transport.is_closing()]
        if len(live) >= self.max_connections:
            waiting = [c for c in live if isinstance(c, _BoundedProtocol) and c.waiting()]
            if not waiting:
                type(self).refused += 1
                transport.abort()
                return
            type(self).shed += 1
            min(waiting, key=lambda c: c.accepted).transport.abort()
        self._arm()

    def waiting(self) -> bool:
        """True while this connection waits for its client: before a request's headers are complete (the first
        one's, or the next one's after an answer), or while a request's body is still arriving."""
        return (self.cycle is None or self.cycle.response_complete
                or (not self.cycle.response_started and self.conn.their_state is h11.SEND_BODY))

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def _arm(self) -> None:
        """Close the connection unless a new request's headers are complete within ``request_timeout``."""
        cycle = self.cycle
        self.loop.call_later(self.request_timeout, self._expire, cycle)

    def _expire(self, cycle: Any) -> None:
        if self.cycle is cycle and not self.transport.is_closing():
            if cycle is None or cycle.response_complete:
                self.transport.abort()

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot read, answered in JSON and closed: 411 for a ``Transfer-Encoding`` other than
        chunked, 400 otherwise, naming what h11 found."""
        found = _BYTES_REPR.sub(lambda m: (m[1] or m[3])[1:], str(sys.exc_info()[1] or msg))  # h11's bytes reprs
        status, text = HTTPStatus.BAD_REQUEST, f"malformed request: {found[:120]}"
        if "transfer-encoding" in found.lower():
            status, text = HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length, not chunked"
        elif "conflicting content-length" in found.lower():
            text = "header Content-Length repeated; send it once"
        elif "content-length" in found.lower():
            text = "Content-Length must be a number of bytes in plain decimal digits"
        elif "multiple host" in found.lower():
            text = "header Host repeated; send it once"
        elif "host" in found.lower():
            text = "HTTP/1.1 request without a Host header"
        body = json.dumps({"error": text}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"cache-control", b"no-store"), (b"connection", b"close")]
        try:
            for event in (h11.Response(status_code=status, headers=headers, reason=status.phrase.encode()),
                          h11.Data(data=body), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event))
        except h11.LocalProtocolError:
            pass  # nothing more can be said on this connection
        self.transport.close()
