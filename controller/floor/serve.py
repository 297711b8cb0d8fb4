"""``crisscross floor serve``: the pit page, every table live from the floor's store, in the browser
(docs/backoffice.md, "The pit page").

A Starlette application on uvicorn (as the control interface, ``controller.control.app``), on a thread of its own
with its own event loop:

- ``GET /``: the page (``controller/floor/pit_page/``: HTML, JavaScript and CSS shipped in the package);
  ``/pit/...`` its files; ``/pit/page.js`` the dealer's screen's (``controller/control/screen``): elements and
  amounts are written as the screen writes them.
- ``GET /api/labels``: the words of the page (columns, the report's figures and their units, the periods, the
  currency); nothing secret, no sign-in.
- ``GET /api/operator``, ``GET /api/pit`` (every table: ``controller.floor.serve_data``, read by one thread every
  ``every`` seconds whatever the number of browsers), ``GET /api/report?table=ID&period=P[&day=YYYY-MM-DD]``
  (``controller.floor.report_tool.build``: the figures of ``crisscross floor report``) and ``GET
  /api/plot.svg?...`` (``report_tool.plot``: its ``--plot``), for a supervisor only.

The secrecy of the control interface (docs/control.md): every request passes its ``Guard`` (one value of each
single header, a ``Host`` naming this server, else 421 against DNS rebinding, a known path and method); sign-in
is HTTP Basic against the operators file by the control interface's own code (``controller.control.signin``:
PBKDF2, the file's mode and content checked at every sign-in, failing closed, failures throttled); a dealer is
answered 403. Bound to a loopback address unless ``allow_network`` with TLS (``check_config``). Bounds: the
control interface's h11 protocol (``MAX_CONNECTIONS`` connections, 5 s for a request's head, 16 KiB of head,
GET only: no body is read), ``MAX_REPORTS`` report readings at once (one more: 503), the store read on
read-only connections whose queries stop after 10 s (``serve_data.SESSION_OPTIONS``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import logging
import re
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

from controller.control.app import JSON_HEADERS, SCREEN_DIR, Guard, error_handlers, protocol_class, query_params
from controller.control.checks import HTTPError
from controller.control.server import BACKLOG, KEEP_ALIVE, MAX_HEAD, REQUEST_TIMEOUT, PromptServer, bind
from controller.control.signin import MAX_CHECKS, SignIn, accepts_host, authenticate_request, require_supervisor
from controller.floor import topics
from controller.floor.periods import PERIODS, check_day
from controller.floor.serve_data import LABELS, Poller, close_quietly, connect
from controller.settings.files import ConfigError

log = logging.getLogger(__name__)

#: The page's files, shipped in the package (pyproject.toml package-data).
PAGE_DIR = Path(__file__).resolve().parent / "pit_page"
#: Most connections open at once (the control interface's bounded protocol: one more sheds the oldest idle one).
MAX_CONNECTIONS = 64
#: Report readings at once (one running on the report's thread, one waiting); one more is answered 503.
MAX_REPORTS = 2
#: Paths and the method each answers; ``/pit/`` serves the page's files.
ROUTES: dict[str, tuple[str, ...]] = {"/": ("GET",), "/api/labels": ("GET",), "/api/operator": ("GET",),
                                      "/api/pit": ("GET",), "/api/report": ("GET",), "/api/plot.svg": ("GET",)}
#: Headers of every answer: nothing of the page runs in a frame or from another origin, no type is guessed.
PAGE_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
                (b"referrer-policy", b"no-referrer"),
                (b"content-security-policy", b"default-src 'self'; img-src 'self' data: blob:; object-src 'none'; "
                                             b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'")]
#: A host name ``--name`` may give (the name in the TLS certificate the browsers check).
HOST_NAME = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*")


@dataclass(frozen=True)
class ServeConfig:
    """Where and how the pit page is served: ``operators`` (the operators file), ``host`` (a literal address)
    and ``port`` (0: any free one; ``floor serve``'s default is 8741, the control interface's 8740),
    ``allow_network`` (a host that is not loopback is refused without it), ``tls_cert`` and ``tls_key`` (PEM
    files: HTTPS), ``names`` (host names a request's ``Host`` may give besides the address: the
    certificate's)."""

    operators: Path
    host: str
    port: int
    allow_network: bool = False
    tls_cert: Path | None = None
    tls_key: Path | None = None
    names: tuple[str, ...] = ()

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None


def check_config(config: ServeConfig) -> None:
    """Refuse what must not be served, naming the option (``ConfigError``): a host that is not a literal IP
    address, or an unspecified one (``0.0.0.0``, ``::``: every network at once); a port outside 0-65535;
    ``--tls-cert`` without ``--tls-key`` or the other way; a host that is not loopback without
    ``--allow-network``, or with it but without TLS (the passwords would cross the network in clear); a key that
    group or others may read; a certificate and key that do not load; a ``--name`` that is no host name."""
    try:
        address = ipaddress.ip_address(config.host)
    except ValueError:
        raise ConfigError(f"--host {config.host!r}: expected an IP address (127.0.0.1, ::1, or the one address "
                          f"of this machine the pit's browsers reach), not a name") from None
    if address.is_unspecified:
        raise ConfigError(f"--host {config.host}: listens on every network at once; give the one address the "
                          f"pit's browsers reach")
    if not 0 <= config.port <= 65535:
        raise ConfigError(f"--port {config.port}: expected 0 to 65535")
    if (config.tls_cert is None) != (config.tls_key is None):
        raise ConfigError("--tls-cert and --tls-key go together: give both or neither")
    for name in config.names:
        if not HOST_NAME.fullmatch(name):
            raise ConfigError(f"--name {name!r}: expected a host name in lower case (pit.casino.internal)")
    if not address.is_loopback:
        if not config.allow_network:
            raise ConfigError(f"--host {config.host} is not a loopback address: the pit page is served to the "
                              f"network only with --allow-network and TLS (--tls-cert, --tls-key); or keep it on "
                              f"127.0.0.1 and reach it through an SSH tunnel (docs/backoffice.md, \"The pit page\")")
        if not config.tls:
            raise ConfigError(f"--host {config.host} with --allow-network needs TLS (--tls-cert, --tls-key): "
                              f"the supervisors' passwords would cross the network in clear")
    if config.tls:
        assert config.tls_cert is not None and config.tls_key is not None
        try:
            mode = config.tls_key.stat().st_mode & 0o777
        except OSError as exc:
            raise ConfigError(f"--tls-key {config.tls_key}: {exc.strerror or exc}") from None
        if mode & 0o077:
            raise ConfigError(f"--tls-key {config.tls_key}: mode {mode:04o} lets others read the private key; "
                              f"chmod 600 {config.tls_key}")
        try:
            ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(config.tls_cert, config.tls_key)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"--tls-cert {config.tls_cert} / --tls-key {config.tls_key}: they do not load: "
                              f"{exc}") from None


class Reports:
    """``crisscross floor report``'s figures (``report_tool.build``) and plot (``report_tool.plot``) for the page,
    read on a thread of their own (``pit-report``) with a read-only connection of their own (opened at first
    use, again after an error); at most ``most`` at once (one more: 503). ``start``: when the gaming day begins;
    ``variance``: the pay tables' (``controller.analysis.variance.round_variance``)."""

    def __init__(self, dsn: str, start: dt.time, variance: Any, *, tz: dt.tzinfo | None = None,
                 most: int = MAX_REPORTS, connect_db: Any = None) -> None:
        self.dsn, self.start, self.variance, self.tz = dsn, start, variance, tz
        self._connect = connect_db or connect
        self._conn: Any = None
        self._places = threading.BoundedSemaphore(most)
        self.most = most
        self._thread = ThreadPoolExecutor(1, "pit-report")

    async def answer(self, what: str, table: str, period: str, day: dt.date) -> Any:
        """``what`` ``report`` (a dict) or ``plot`` (SVG text) of ``table``; ``HTTPError`` 404 for a table not in
        the store, 503 when ``most`` readings run or the store cannot be read."""
        if not self._places.acquire(blocking=False):
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, f"{self.most} reports already being read; try again "
                                                            f"in a second", {"Retry-After": "1"})
        try:
            return await asyncio.get_running_loop().run_in_executor(self._thread, self._read, what, table, period,
                                                                    day)
        finally:
            self._places.release()

    def _read(self, what: str, table: str, period: str, day: dt.date) -> Any:
        import psycopg

        from controller.floor import report_tool

        try:
            if self._conn is None:
                self._conn = self._connect(self.dsn)
            if what == "plot":
                if table not in report_tool.store_states(self._conn, table):
                    raise ConfigError(f"table {table}: not in the store")
                return report_tool.plot(self._conn, table, period, day, self.start, self.variance, self.tz)
            return report_tool.build(self._conn, table, period, day, self.start, self.variance, self.tz)
        except ConfigError as exc:
            raise HTTPError(HTTPStatus.NOT_FOUND, str(exc).replace("--table ", "table ")) from None
        except psycopg.Error as exc:  # the page says so; the next reading connects again
            log.error("pit page: a report of %s could not be read: %s: %s", table, type(exc).__name__, exc)
            self.close_connection()
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, f"the store cannot be read: {type(exc).__name__}",
                            {"Retry-After": "5"}) from None

    def close_connection(self) -> None:
        self._conn = close_quietly(self._conn, "the report's")

    def close(self) -> None:
        """End the report's thread (a reading running finishes) and close its connection."""
        self._thread.shutdown(wait=True)
        self.close_connection()


class _PageHeaders:
    """ASGI middleware: ``PAGE_HEADERS`` on every answer."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *PAGE_HEADERS]}
            await send(message)

        await self.app(scope, receive, sending)


def _table(query: dict[str, str]) -> str:
    table = query.get("table", "")
    problem = topics.table_id_problem(table)
    if problem is not None:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"table must be a table id: {problem[:200]}")
    return table


def _period(query: dict[str, str]) -> str:
    period = query.get("period", "day")
    if period not in PERIODS:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"period must be one of {', '.join(PERIODS)}")
    return period


def _day(query: dict[str, str], today: dt.date) -> dt.date:
    text = query.get("day")
    if text is None:
        return today
    try:
        if len(text) != 10:
            raise ValueError(text)
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise HTTPError(HTTPStatus.BAD_REQUEST, "day must be a date YYYY-MM-DD") from None
    try:
        return check_day(day)
    except ValueError as exc:
        raise HTTPError(HTTPStatus.BAD_REQUEST, f"day {exc}") from None


def build_app(server: PitServer) -> Any:
    """The Starlette application of ``server`` behind the control interface's ``Guard`` (module docstring)."""

    async def supervisor(request: Request, what: str) -> Any:
        who = await authenticate_request(request, server)
        require_supervisor(who, what)
        return who

    async def page(request: Request) -> Response:
        query_params(request, ())
        return FileResponse(PAGE_DIR / "index.html", headers=JSON_HEADERS)

    async def page_js(request: Request) -> Response:
        return FileResponse(SCREEN_DIR / "page.js", headers=JSON_HEADERS)

    async def labels(request: Request) -> Response:
        query_params(request, ())
        return JSONResponse(LABELS, 200, JSON_HEADERS)

    async def operator(request: Request) -> Response:
        query_params(request, ())
        who = await supervisor(request, "the pit page")
        return JSONResponse({"user": who.name, "role": who.role}, 200, JSON_HEADERS)

    async def pit(request: Request) -> Response:
        query_params(request, ())
        await supervisor(request, "the pit page")
        return Response(server.poller.latest, 200, JSON_HEADERS, media_type="application/json")

    async def report(request: Request) -> Response:
        query = query_params(request, ("table", "period", "day"))
        await supervisor(request, "a table's report")
        table, period, day = _table(query), _period(query), _day(query, server.poller.data.today())
        return JSONResponse(await server.reports.answer("report", table, period, day), 200, JSON_HEADERS)

    async def plot(request: Request) -> Response:
        query = query_params(request, ("table", "period", "day"))
        await supervisor(request, "a table's plot")
        table, period, day = _table(query), _period(query), _day(query, server.poller.data.today())
        text = await server.reports.answer("plot", table, period, day)
        return Response(text, 200, JSON_HEADERS, media_type="image/svg+xml")

    app = Starlette(routes=[Route("/", page), Route("/api/labels", labels), Route("/api/operator", operator),
                            Route("/api/pit", pit), Route("/api/report", report), Route("/api/plot.svg", plot),
                            Route("/pit/page.js", page_js), Mount("/pit", StaticFiles(directory=PAGE_DIR))],
                    exception_handlers=error_handlers("pit page", "internal error"))
    return _PageHeaders(Guard(app, server, ROUTES, "/pit/"))


class PitServer(SignIn):
    """The pit page (module docstring) for ``config`` (checked by ``check_config``), its figures from ``poller``
    and its reports from ``reports``. The socket is bound here (a port in use raises ``OSError``); ``start``
    serves on a thread of its own (``pit-http``), ``stop`` stops it (idempotent). ``port``, ``url``."""

    def __init__(self, config: ServeConfig, poller: Poller, reports: Reports, *,
                 request_timeout: float = REQUEST_TIMEOUT, max_connections: int = MAX_CONNECTIONS,
                 max_checks: int = MAX_CHECKS) -> None:
        super().__init__(config.operators, "pit page", max_checks)
        self.config, self.poller, self.reports = config, poller, reports
        self.request_timeout, self.max_connections = request_timeout, max_connections
        self._socket = bind(config.host, config.port, "pit page")
        self.port: int = self._socket.getsockname()[1]
        self._address = ipaddress.ip_address(self._socket.getsockname()[0])
        self._loop = asyncio.new_event_loop()
        tls = {"ssl_certfile": str(config.tls_cert), "ssl_keyfile": str(config.tls_key)} if config.tls else {}
        self._uvicorn = PromptServer(uvicorn.Config(
            build_app(self), lifespan="off", log_config=None, access_log=False, server_header=False,
            http=protocol_class(self), backlog=BACKLOG, limit_concurrency=max_connections + 1,
            timeout_keep_alive=KEEP_ALIVE, timeout_graceful_shutdown=2, h11_max_incomplete_event_size=MAX_HEAD,
            **tls))
        self._thread: threading.Thread | None = None
        self._closed = False
        if not self.operators():
            log.warning("pit page: no operators in %s: every sign-in will be refused (401); add a supervisor with "
                        "`crisscross operator add`", config.operators)

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:8741`` (``https`` with TLS)."""
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        return f"{'https' if self.config.tls else 'http'}://{host}:{self.port}"

    def accepts_host(self, value: str) -> bool:
        """True when ``value``, a request's ``Host``, names this server: its address, ``localhost`` on loopback,
        or a ``--name``, with its port (``controller.control.signin.accepts_host``)."""
        return accepts_host(value, self._address, self.port, self.config.names)

    def start(self) -> None:
        """Serve on a new thread named ``pit-http``; logs the URL at info level."""
        self._thread = threading.Thread(target=self._serve, name="pit-http")
        self._thread.start()
        log.info("pit page on %s", self.url)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._uvicorn.serve(sockets=[self._socket]))
        except Exception:  # a defect of the server loop itself: logged, the process ends with it
            log.exception("pit page stopped on an error")
        finally:
            for connection in list(self._uvicorn.server_state.connections):
                connection.transport.abort()
            self._loop.run_until_complete(self._loop.shutdown_default_executor())
            self.close_checks()

    def stop(self) -> None:
        """Stop serving, close the socket and join the thread."""
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._loop.call_soon_threadsafe(self._uvicorn.stop)
            self._thread.join()
            self._thread = None
        self._socket.close()
        self._loop.close()
