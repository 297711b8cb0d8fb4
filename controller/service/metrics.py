"""Prometheus metrics of the service, served at ``/metrics`` on a loopback port (``--metrics-port``, or
``metrics: {port: N}`` in ``table.yaml``); docs/operations.md lists every metric.

What the floor's monitoring sees: rounds closed and voided, test rounds apart (no play: NY 9 NYCRR 5319.58),
faults by device and cause, past-posting and mispays (those of test rounds apart, ``EventCounters``), per link
the frames sent and received, repeats, bad checksums, reconnections and handshake failures, histograms of the
journal's commit time and of the time from a person's press to the device command it causes, the event queue's depth, the start-up time (replay included), whether the
journal store was found damaged, the size of the journal's WAL and the build.
Never a card, a seat's wager or a person's name: labels are drawn from fixed sets (devices, fault causes,
outcomes), so nothing a player does can appear in a metric.

Threads: the controller thread updates the metrics (``ServiceMetrics``' methods); the exposition server's
thread reads them (prometheus_client's metrics lock themselves); link counters are read from each driver's
``link_stats()`` at scrape time (plain integers its owner thread increments).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import MetricsHandler as PrometheusHandler

from controller import __version__
from controller.service.hosts import accepts_host
from controller.service.limits import METRICS_CONNECTIONS, check_descriptors

log = logging.getLogger(__name__)

#: The link counters a driver's ``link_stats()`` may report (docs/operations.md, "Metrics").
LINK_COUNTERS: tuple[str, ...] = ("frames_sent", "frames_received", "retransmissions", "bad_crc",
                                  "reconnections", "handshake_failures")

#: The ``outcome`` labels of ``crisscross_rounds_total`` and ``crisscross_meter_rounds``, each a lifetime meter's
#: ``rounds_<outcome>`` (``controller.round.meters``): ``test`` is a test round ended, closed or voided.
ROUND_OUTCOMES: tuple[str, ...] = ("closed", "voided", "no_play", "test")
#: Histogram buckets in seconds: a commit is an fsync (a few ms), a press reaches its device in tens of ms.
COMMIT_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
PRESS_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
#: Longest life of one connection to the metrics port (seconds): request, answer and all; a scrape takes
#: milliseconds, a connection still open past it is shut down.
METRICS_SECONDS = 10.0


#: The one path served: what Prometheus scrapes by default (its ``metrics_path``) and docs/operations.md names.
METRICS_PATH = "/metrics"


class MetricsHandler(PrometheusHandler):
    """prometheus_client's handler behind the rules of every HTTP door of ours (docs/operations.md, "Metrics"):
    one ``Host`` header naming this server's address and port (``controller.service.hosts.accepts_host``), else
    421 (DNS rebinding: a web page whose name was made to resolve to 127.0.0.1 would read the meters); a repeated
    ``Host``, or none in HTTP/1.1, is 400; a path other than ``METRICS_PATH`` (a query string aside: Prometheus
    may send ``name[]``) is 404. Answers to refusals are one line of plain text."""

    def do_GET(self) -> None:
        """``/metrics`` when the request passes the rules of the class, else the refusal's status."""
        hosts = self.headers.get_all("Host") or []
        address, port = self.server.server_address[:2]
        if len(hosts) > 1:
            self._refuse(HTTPStatus.BAD_REQUEST, "Host header repeated")
        elif not hosts and self.request_version != "HTTP/1.0":
            self._refuse(HTTPStatus.BAD_REQUEST, "Host header required")
        elif hosts and not accepts_host(hosts[0], ipaddress.ip_address(address), port):
            self._refuse(HTTPStatus.MISDIRECTED_REQUEST, "Host is not this server's address and port")
        elif self.path.partition("?")[0] != METRICS_PATH:
            self._refuse(HTTPStatus.NOT_FOUND, f"no such path: only {METRICS_PATH} is served")
        else:
            super().do_GET()

    def _refuse(self, status: HTTPStatus, message: str) -> None:
        """Answer ``status`` with ``message`` (ASCII, one line) as plain text; nothing of the registry."""
        body = (message + "\n").encode("ascii")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class MetricsServer(ThreadingHTTPServer):
    """``/metrics`` of ``registry`` on ``(host, port)`` with bounds (prometheus_client's own server takes one
    thread and one descriptor per connection, without limit): at most ``slots`` connections are served at once;
    one more sheds the oldest (a scrape takes milliseconds: the oldest is idle or slow) and is served, or is
    closed at once while ``slots`` shed ones are still closing (``refused`` counts those, ``shed`` the others);
    each connection is shut down ``seconds`` after it was accepted (checked every ``poll`` seconds by the
    serving thread). HTTP/1.0: one request per connection. Requests pass ``MetricsHandler``'s rules (``Host``
    naming this server, else 421; the path ``/metrics``, else 404). ``OSError`` when the address cannot be
    bound."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, host: str, port: int, registry: CollectorRegistry, *, slots: int = METRICS_CONNECTIONS,
                 seconds: float = METRICS_SECONDS, poll: float = 0.5) -> None:
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.slots = slots
        self.seconds = seconds
        self.poll = poll
        self.refused = 0
        self.shed = 0
        self._open: dict[socket.socket, float] = {}  # connection -> its deadline (monotonic), oldest first
        self._shedding: set[socket.socket] = set()  # shut down, their threads not yet done
        self._open_lock = threading.Lock()
        super().__init__((host, port), MetricsHandler.factory(registry))
        self._thread = threading.Thread(target=self.serve_forever, args=(poll,), name="metrics-http", daemon=True)

    def start(self) -> "MetricsServer":
        """Serve on a daemon thread named ``metrics-http``; returns self."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, shut the open connections down and close the socket (idempotent)."""
        if self._thread.is_alive():
            self.shutdown()
            self._thread.join()
        with self._open_lock:
            for connection in self._open:
                self._shut(connection)
        self.server_close()

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection, after shedding the oldest when ``slots`` are served (see the class)."""
        with self._open_lock:
            if len(self._open) - len(self._shedding) >= self.slots:
                if len(self._shedding) >= self.slots:
                    self.refused += 1
                    request.close()
                    return
                oldest = next(c for c in self._open if c not in self._shedding)
                self._shut(oldest)
                self._shedding.add(oldest)
                self.shed += 1
            self._open[request] = time.monotonic() + self.seconds
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread for it: closed here
            self.shutdown_request(request)
            raise

    def close_request(self, request: Any) -> None:
        """Close a connection and forget it; under the lock ``service_actions`` shuts connections down with, so
        that it never shuts down a descriptor reused by a new connection."""
        with self._open_lock:
            self._open.pop(request, None)
            self._shedding.discard(request)
            request.close()

    def service_actions(self) -> None:
        """Shut down every connection open past its deadline (its handler's read or write then fails)."""
        now = time.monotonic()
        with self._open_lock:
            for connection in [c for c, deadline in self._open.items() if deadline <= now]:
                self._shut(connection)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed (shut down, the client gone): logged at debug level only, never on stderr as
        ``socketserver`` would; the server carries on."""
        log.debug("metrics: a connection from %s ended on an error", client_address, exc_info=True)

    @staticmethod
    def _shut(connection: socket.socket) -> None:
        try:
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed by its handler


class _LinkCollector:
    """Reads each driver's ``link_stats()`` (a mapping of ``LINK_COUNTERS`` to counts) at scrape time."""

    def __init__(self, drivers: Callable[[], Mapping[str, Any]]) -> None:
        self._drivers = drivers

    def collect(self) -> Iterable[CounterMetricFamily]:
        families = {name: CounterMetricFamily(f"crisscross_link_{name}", f"link {name.replace('_', ' ')}",
                                              labels=["device"]) for name in LINK_COUNTERS}
        for device, driver in sorted(self._drivers().items()):
            stats = getattr(driver, "link_stats", None)
            if stats is None:
                continue
            counts = stats()
            for name in LINK_COUNTERS:
                if name in counts:
                    families[name].add_metric([device], counts[name])
        return list(families.values())


class _MetersCollector:
    """The lifetime meters (``controller.round.meters``) as gauges, from the last ``Meters.to_json()`` handed over
    (``ServiceMetrics.meters_now``); none before. Gauges, not counters: they are the journal's values, kept over
    restarts, not counts of this process."""

    def __init__(self) -> None:
        self.meters: dict[str, Any] | None = None  # replaced whole by the controller thread, never changed

    def collect(self) -> Iterable[GaugeMetricFamily]:
        meters = self.meters
        if meters is None:
            return []
        life = meters["lifetime"]

        def family(name: str, text: str, labels: tuple[str, ...] = ()) -> GaugeMetricFamily:
            return GaugeMetricFamily(f"crisscross_meter_{name}", f"lifetime meter: {text}", labels=list(labels))

        rounds = family("rounds", "rounds ended, by outcome (closed, voided, no_play; test: test rounds ended)",
                        ("outcome",))
        for outcome in ROUND_OUTCOMES:
            rounds.add_metric([outcome], life[f"rounds_{outcome}"])
        wagers = family("wager_minor_units", "per wager type: wagered, paid, taken, pushed", ("wager", "meter"))
        for wager, values in life["wagers"].items():
            for meter, value in values.items():
                wagers.add_metric([wager, meter], value)
        drop = family("drop_minor_units", "every stake settled")
        drop.add_metric([], life["drop"])
        win = family("win_minor_units", "what the house kept: taken - paid")
        win.add_metric([], life["win"])
        cards = family("cards_dispensed", "cards the shoe dispensed")
        cards.add_metric([], life["cards_dispensed"])
        faults = family("faults", "faults raised, by device and cause", ("device", "cause"))
        for device, causes in sorted(life["faults"].items()):
            for cause, value in sorted(causes.items()):
                faults.add_metric([device, cause], value)
        caught = family("irregularities", "past-posting, pinching and mispays, caught and accepted", ("kind", "outcome"))
        for kind in ("past_posting", "pinching", "mispays"):
            for outcome in ("caught", "accepted"):
                caught.add_metric([kind, outcome], life[kind][outcome])
        mispaid = family("mispay_minor_units", "amounts of the mispays accepted, short and over", ("direction",))
        for direction in ("short", "over"):
            mispaid.add_metric([direction], life["mispays"][direction])
        since = family("rounds_since", "rounds since the service started and since the last shoe service (these "
                       "two reset)", ("since",))
        for name, value in meters["since"].items():
            since.add_metric([name], value)
        return [rounds, wagers, drop, win, cards, faults, caught, mispaid, since]


class EventCounters:
    """The counters of faults, past-posting and mispays in ``registry``: live play's (``crisscross_faults_total``,
    ...), or with ``test`` those of test rounds (``crisscross_test_faults_total``, ...: NY 9 NYCRR 5319.58, a test
    round is no play; the lifetime meters keep its events in their test meters alone, ``controller.round.meters``),
    so that a lab reading the live counters sees only what happened in live play (docs/operations.md, "Metrics").
    Labels as docs/operations.md lists them; amounts in minor units."""

    def __init__(self, registry: CollectorRegistry, *, test: bool = False) -> None:
        name, of = ("crisscross_test_", " in test rounds") if test else ("crisscross_", "")
        self.faults = Counter(f"{name}faults", f"faults raised{of}, by device and cause", ["device", "cause"],
                              registry=registry)
        self.past_posting = Counter(f"{name}past_posting", f"past-posting irregularities recorded{of}",
                                    registry=registry)
        self.mispays = Counter(f"{name}mispays", f"payouts{of} that did not match the settlement, by outcome: caught "
                               "(a seat's reading differed) or accepted (by a supervisor)", ["outcome"],
                               registry=registry)
        self.mispay_amount = Counter(f"{name}mispay_minor_units", f"amounts of the mispays{of}, by outcome (caught, "
                                     "accepted) and direction (short: the player paid less; over: paid more or a "
                                     "losing wager left)", ["outcome", "direction"], registry=registry)

    def mispay(self, outcome: str, found: Iterable[Mapping[str, Any]]) -> None:
        """Count one mispay (``caught`` or ``accepted``) and the short and over amounts of its differences
        (``controller.game.payout.differences``: minor units; no seat, spot or name as a label)."""
        self.mispays.labels(outcome).inc()
        for d in found:
            difference = int(d.get("difference", 0))
            self.mispay_amount.labels(outcome, "short" if difference < 0 else "over").inc(abs(difference))


class ServiceMetrics:
    """The service's metrics in their own registry (``registry``), updated by the controller thread.

    ``queue_depth`` returns the event queue's length, ``drivers`` the device drivers (name -> driver) and
    ``wal_bytes`` the journal's WAL size in bytes after the last round's close (``Journal.wal_bytes``) at
    scrape time; ``in_test`` is True when the service starts in a test round (``Meters.in_test`` of the round
    recovered: a test round held over a restart ends as ``test``, and its faults, past-posting and mispays count in
    ``test``, not ``live``). ``serve(host, port)`` starts the exposition server (``MetricsServer``: a loopback
    address only, raises ``ValueError`` otherwise; ``OSError`` for a port in use or an open-file limit too low for the
    service's doors, ``controller.service.limits``), or ``bind`` takes its port and ``start`` serves it later;
    ``close`` stops it.
    """

    def __init__(self, queue_depth: Callable[[], int], drivers: Callable[[], Mapping[str, Any]], *,
                 wal_bytes: Callable[[], int] = lambda: 0, in_test: bool = False) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.rounds = Counter("crisscross_rounds", "rounds ended, by outcome (closed, voided, no_play; test: a "
                              "test round ended, closed or voided, no play)", ["outcome"], registry=r)
        #: a test round is open (``RoundOpened`` with ``test``): its end counts as ``test``, its events in
        #: ``test``. ``in_test``: the service starts in one (a test round held over a restart, ``Meters.in_test``
        #: of the recovered round)
        self.in_test = in_test
        #: faults, past-posting and mispays of live play, and of test rounds apart (``EventCounters``)
        self.live = EventCounters(r)
        self.test = EventCounters(r, test=True)
        self.commit_seconds = Histogram("crisscross_journal_commit_seconds", "time to make one journal commit "
                                        "(an input and everything it produced) durable", buckets=COMMIT_BUCKETS,
                                        registry=r)
        self.press_seconds = Histogram("crisscross_press_to_command_seconds", "time from a person's press or "
                                       "action (taken off the event queue) to each device command it causes",
                                       buckets=PRESS_BUCKETS, registry=r)
        self.journal_damaged = Gauge("crisscross_journal_damaged", "1 while the journal store is found damaged "
                                     "(JournalDamaged: no new round opens until it is restored), else 0",
                                     registry=r)
        self.startup_seconds = Gauge("crisscross_startup_seconds", "from the start of the process (journal "
                                     "replay included) to ready: every device answered and the shoe was asked",
                                     registry=r)
        depth = Gauge("crisscross_event_queue_depth", "inputs waiting for the controller thread", registry=r)
        depth.set_function(queue_depth)
        wal = Gauge("crisscross_journal_wal_bytes", "size of the journal's WAL after the last round's close, bytes "
                    "(grows while a reader holds an old snapshot, cut back to 4 MiB once it lets go)", registry=r)
        wal.set_function(wal_bytes)
        Info("crisscross_build", "the software", registry=r).info({"version": __version__})
        r.register(_LinkCollector(drivers))
        self._meters = _MetersCollector()
        r.register(self._meters)
        self._server: Any = None

    def serve(self, host: str, port: int) -> int:
        """Serve ``/metrics`` on ``host``:``port`` (0: any free port): ``bind`` then ``start``; returns the port
        bound. Raises as ``bind`` does."""
        bound = self.bind(host, port)
        self.start()
        return bound

    def bind(self, host: str, port: int) -> int:
        """Take ``host``:``port`` (0: any free port) without serving it yet (connections wait in the listen
        backlog until ``start``); returns the port bound. The service binds it before its journal is made or
        opened, as the control interface's port, so that a port in use refuses a start that has created nothing
        (``controller.service.assembly.Service``). Raises ``ValueError`` for a host off the machine, ``OSError``
        naming the port for one in use or an open-file limit too low (``controller.service.limits``)."""
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"metrics host {host!r} is not a loopback address")
        check_descriptors("metrics")
        try:
            self._server = MetricsServer(host, port, self.registry)
        except OSError as exc:
            raise OSError(exc.errno, f"metrics port {host}:{port}: {exc.strerror or exc}") from None
        return self._server.server_address[1]

    def start(self) -> None:
        """Serve the port ``bind`` took, on the ``metrics-http`` thread. Raises ``RuntimeError`` before ``bind``."""
        if self._server is None:
            raise RuntimeError("metrics: start before bind: no port taken")
        self._server.start()
        host, bound = self._server.server_address[:2]
        log.info("metrics on http://%s:%d/metrics", host if ":" not in host else f"[{host}]", bound)

    def close(self) -> None:
        """Stop the exposition server (idempotent)."""
        if self._server is not None:
            self._server.close()
            self._server = None

    # ------------------------------------------------------------------ from the controller thread
    def record(self, record: Mapping[str, Any]) -> None:
        """Count what one journal record says (``controller.journal.store`` record shape); cards and wagers are never
        read. A test round's end (NY 9 NYCRR 5319.58: no play) counts as outcome ``test`` alone, as the lifetime
        meters count it in ``rounds_test`` alone (``controller.round.meters``); a fault, a past-posting or a mispay
        of a test round (from its ``RoundOpened`` with ``test`` to its end, held over a restart included) counts
        in the ``crisscross_test_*`` counters alone, as the meters count it in their test meters alone."""
        kind, data = record.get("type"), record.get("data") or {}
        if kind == "RoundOpened":
            self.in_test = bool(data.get("test", False))
        elif kind in ("RoundClosed", "RoundVoided"):
            self.rounds.labels(self._outcome(kind, data)).inc()
            self.in_test = False
        elif kind == "FaultRaised":
            self._counters().faults.labels(str(data.get("device") or "none"), str(data.get("cause"))).inc()
        elif kind == "Irregularity" and data.get("kind") == "past_posting":
            self._counters().past_posting.inc()
        elif kind == "PayoutChecked" and data.get("differences"):
            self._counters().mispay("caught", data["differences"])
        elif kind == "MispayAccepted":
            self._counters().mispay("accepted", data.get("differences") or ())
        elif kind in ("JournalDamaged", "JournalWhole"):
            self.journal_damaged.set(kind == "JournalDamaged")

    def meters_now(self, meters: dict[str, Any]) -> None:
        """The lifetime meters now (``Meters.to_json()``, a copy no one changes after), served as gauges."""
        self._meters.meters = meters

    def _outcome(self, kind: str, data: Mapping[str, Any]) -> str:
        """The ``outcome`` label of a round's end, ``RoundClosed`` or ``RoundVoided``."""
        if self.in_test:
            return "test"
        if kind == "RoundVoided":
            return "voided"
        return "no_play" if (data.get("totals") or {}).get("wagered") == 0 else "closed"

    def _counters(self) -> EventCounters:
        """The counters of the record being read: a test round's (``in_test``) or live play's."""
        return self.test if self.in_test else self.live
