"""The assembled service: journal, simulators where asked, drivers, the controller thread, and the parts the
command line hands in (the control interface, the floor publisher, the scripted table).

The service imports nothing above its layer: ``ServiceParts`` holds the factories of those parts
(``controller.cli.parts.SERVICE_PARTS`` is the command line's), and the service calls each part through the
narrow interface below (``ControlPart``, ``FloorPart``, ``TablePart``). A factory left out (None) is a part the
run goes without.
"""

from __future__ import annotations

import logging
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from controller import __version__
from controller.game.paytable import Jurisdiction
from controller.game.table import TableConfig
from controller.journal.check import JournalCheck
from controller.journal.reader import records_since
from controller.journal.recall import RoundRecord
from controller.journal.record import JournalError
from controller.journal.recovery import recover
from controller.journal.summary import format_round
from controller.round.alerts import Alert, DetectorChecked
from controller.round.inputs import ServiceStarted
from controller.service.eventqueue import EventQueue
from controller.service.loop import STOP_AFTER_ROUND, Controller
from controller.service.meters_snapshot import MeterSnapshots
from controller.service.metrics import ServiceMetrics
from controller.service.notify import Notifier
from controller.service.opening import check_kept_for, journal_for, jurisdiction_for, key_for, open_journal
from controller.service.identity import verified_software_identity
from controller.analysis.protect_names import EvidenceKeeping
from controller.service.protection import REPLAYED, LiveProtection
from controller.service.rating_live import LiveRating
from controller.service.significance import Significance, identified, start_records
from controller.service.simulators import is_simulated, link_folder, sim_port, start_simulators
from controller.service.watch import Watch
from controller.settings.control import ControlConfig
from controller.settings.floor import FloorConfig
from controller.settings.text import path_shown
from drivers import DRIVERS
from drivers.link import Device

if TYPE_CHECKING:  # a production run imports no simulator (tests/test_sim_urls.py)
    from drivers.sim import PtySimulator

log = logging.getLogger(__name__)


#: Longest the service waits for the hole-card detector's and the rating's setup before it deals (seconds).
WORKER_SETUP_S = 120.0


class ControlPart(Protocol):
    """The control interface as the service uses it (``controller.control.server.ControlServer``): built before
    any device is touched (a port in use is refused then), started with the drivers, stopped first. ``roster``:
    who may act on it as it last read its operators file (``controller.control.operators.roster``)."""

    roster: tuple[tuple[str, str], ...]

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def publish_record(self, record: dict[str, Any]) -> None: ...

    def publish_view(self, view: dict[str, Any]) -> None: ...

    def publish_meters(self, meters: dict[str, Any]) -> None: ...

    def publish_sessions(self, sessions: tuple[dict[str, Any], ...]) -> None: ...


class FloorPart(Protocol):
    """The floor publisher as the service uses it (``controller.floor.publisher.Publisher``): the journal is its
    outbox; ``publish_view`` gets the round's view and the journal's head sequence number."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def publish_view(self, view: dict[str, Any], seq: int) -> None: ...


class TablePart(Protocol):
    """The scripted table of ``--simulate`` as the service uses it (``controller.simulated.table``):
    ``page`` calls its supervisor to the panel (a hole-card alert)."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def page(self) -> None: ...


@dataclass(frozen=True)
class TableOptions:
    """What the scripted table is asked to do (``run_service``'s arguments of the same names)."""

    seed: int | None
    rounds: int | None
    mistakes: float
    payout_errors: float
    players: Sequence[Any]
    manual: bool
    pace: float = 0.0
    #: players come and go, each playing about this many rounds (0: the same players throughout)
    sessions: int = 0
    #: where the simulated dealer's rating actions go (the service's event queue)
    post: Callable[[Any], None] | None = None


@dataclass(frozen=True)
class ServiceParts:
    """The factories of the parts above the service; each is called once, in the constructor of ``Service``.

    ``control(config, events, journal_path)`` with table.yaml's ``control``, the event queue and the journal (its
    game recall reads it), when it is enabled;
    ``floor(config, table_id, journal_path, key, simulated)`` with table.yaml's ``floor`` (key: the journal
    key or None; simulated: True for simulated play), when it is enabled; ``table(sims, config, jurisdiction,
    options, on_failure)`` under ``simulate``, with the started simulators by device name and the callable that
    stops the service. A factory raises ``ConfigError`` or ``OSError`` to refuse the run.
    """

    control: Callable[[ControlConfig, EventQueue, Path], ControlPart] | None = None
    floor: Callable[[FloorConfig, str, Path, bytes | None, bool], FloorPart] | None = None
    table: Callable[[dict[str, PtySimulator], TableConfig, Jurisdiction, TableOptions, Callable[[], None]],
                    TablePart] | None = None


class Service:
    """The assembled service: journal, simulators where asked, drivers, round machine, controller, scripted table.

    Built by the constructor without touching a device; ``run`` starts the drivers (each does its handshake
    first), the control interface and the floor (when ``table.yaml`` enables them and ``parts`` builds them) and
    the scripted table, then runs the controller on the calling thread; ``close`` stops everything and closes
    the journal (also after a failed ``run``). Arguments as for ``run_service``. Raises
    ``SoftwareIdentityError`` when other code than the software's files would run (before anything is opened),
    ``ConfigError`` for a refused jurisdiction or operators file, ``JournalError`` for a journal that does not
    verify and ``OSError`` for a control or metrics port in use (before the journal is made or opened), before any
    simulator or device port is opened.
    """

    def __init__(self, config: TableConfig, *, simulate: bool = False, rounds: int | None = None,
                 seed: int | None = None, journal_path: Path | None = None, ports: dict[str, str] | None = None,
                 quiet: bool = False, out: TextIO = sys.stdout, mistakes: float = 0.0,
                 metrics_port: int | None = None, started_at: float | None = None, payout_errors: float = 0.0,
                 players: Sequence[Any] = (), protect: bool | EvidenceKeeping = False, manual: bool = False,
                 rating: bool = False, sessions: int = 0, parts: ServiceParts = ServiceParts(),
                 pace: float = 0.0) -> None:
        started_at = time.monotonic() if started_at is None else started_at
        software = verified_software_identity()  # before anything is opened: a refused start leaves nothing
        jurisdiction = jurisdiction_for(config)
        ports = dict(ports or {})
        self.out = out
        self.quiet = quiet
        self.events: EventQueue = EventQueue()  # bounded; chip changes coalesce (controller/service/eventqueue.py)
        #: any device simulated (--simulate, a port "simulator" or a sim:// URL): simulated play, kept apart
        self.simulated = [n for n, dev in config.devices.items() if simulate or is_simulated(ports.get(n, dev.port))]
        # the shared journal of simulated play is never sealed with a table's key: a keyed table file used once
        # with --simulate would otherwise lock every other simulated run out of it
        table_history = not (self.simulated and journal_path is None)
        journal_path = journal_for(config, bool(self.simulated), journal_path)
        self.control: ControlPart | None = None  # the control interface, when table.yaml enables it
        self.metrics: ServiceMetrics | None = None  # /metrics, with --metrics-port or metrics.port of table.yaml
        if config.control.enabled and parts.control is not None:  # a port in use is refused here, before the
            self.control = parts.control(config.control, self.events, journal_path)  # journal is made or changed
        port = metrics_port if metrics_port is not None else config.metrics_port
        try:
            if port is not None:  # bound here too, served once the journal is replayed
                self.metrics = ServiceMetrics(self.events.qsize, lambda: self.drivers,
                                              wal_bytes=lambda: self.journal.wal_bytes)
                self.metrics_port = self.metrics.bind("127.0.0.1", port)
            self.journal = open_journal(config, journal_path, history=table_history)
        except BaseException as refusal:
            self._undo_start(refusal, journal=False)
            raise
        mode = "simulated" if self.simulated else "table"
        try:
            check_kept_for(self.journal, mode, config.table_id, table_history)
        except JournalError as refusal:
            self._undo_start(refusal)
            raise
        try:
            log.info("journal %s: replaying the records after %s", self.journal.shown,
                     f"the checkpoint at record {self.journal.checkpoint.seq}" if self.journal.checkpoint else "none")
            recovered = recover(self.journal, config, jurisdiction)
            log.info("journal %s: replayed up to record %d", self.journal.shown, self.journal.head[0])
            if self.journal.since_checkpoint >= self.journal.checkpoint_every:  # a long replay is not repeated
                self.journal.commit([], state=recovered.machine.checkpoint())
        except BaseException as refusal:
            self._undo_start(refusal)
            raise
        self.sims: dict[str, PtySimulator] = {}
        self.drivers: dict[str, Device] = {}
        self.table: TablePart | None = None  # the scripted table under --simulate
        self.protection: LiveProtection | None = None  # the hole-card detector, with --protect
        self.rating: LiveRating | None = None  # the seats' sessions rated, with --rating
        self.floor: FloorPart | None = None  # the floor publisher, when table.yaml enables it
        self.journal_check: JournalCheck | None = None  # the check of the whole store, started once ready
        self._meters_seen = -1  # ``Meters.changes`` when the meters were last published (``_on_view``)
        kinds = {name: dev.driver for name, dev in config.devices.items()}
        simulated = [n for n in self.simulated if simulate or ports.get(n, config.devices[n].port) == "simulator"]
        try:
            started = identified(ServiceStarted(mode, __version__, str(config.source),
                                                {n: "simulator" if n in simulated else ports.get(n, dev.port)
                                                 for n, dev in config.devices.items()}, table=config.table_id),
                                 config, jurisdiction, software.digest)
            start_entries = start_records(self.journal, started,  # before this run journals anything
                                          self.control.roster if self.control is not None else None)
            self.journal.derive = Significance.from_journal(config.table_id, self.journal, config.devices)
        except BaseException as refusal:
            self._undo_start(refusal)
            raise
        self._link_dir: Path | None = link_folder() if simulated else None
        try:
            if config.floor.enabled and parts.floor is not None:  # the journal is its outbox
                self.floor = parts.floor(config.floor, config.table_id, self.journal.path,
                                         key_for(config) if self.journal.meta("key_id") else None,
                                         bool(self.simulated))  # never under the table's own id
            if self.metrics is not None:
                self.metrics.in_test = recovered.machine.meters.in_test  # a test round held
                self.metrics.journal_damaged.set(not recovered.machine.journal_whole())  # kept over restarts
                self.metrics.start()
            self.sims = start_simulators(simulated, kinds, seed, self._link_dir, recovered.machine.layout)
            for name, dev in config.devices.items():
                port = sim_port(self.sims[name]) if name in self.sims else ports.get(name, dev.port)
                search = (str(self._link_dir / f"sim-{dev.driver}-*"),) if name in self.sims else dev.search
                self.drivers[name] = DRIVERS[dev.driver](
                    port, self.events, name=name, timing=config.timing, identity=dev.identity, search=search)
        except BaseException as refusal:
            self._undo_close(refusal)
            raise
        self.machine = recovered.machine
        history = partial(records_since, self.journal.path, types=REPLAYED)
        keeping = protect if isinstance(protect, EvidenceKeeping) else EvidenceKeeping()
        self.protection = LiveProtection(jurisdiction, self._alert, history=history,
                                         keeping=keeping) if protect else None
        if rating:
            self.rating = LiveRating(jurisdiction, self.events.put,
                                     on_sessions=self.control.publish_sessions if self.control else None)
        watch = Watch(config.table_id, Notifier(), self.metrics, started_at, on_ready=self._check_journal)
        self.controller = Controller(recovered, self.journal, self.drivers, self.events, started=started, watch=watch,
                                     on_round_closed=self._round_closed, rounds=rounds,
                                     on_record=self._on_record if self._workers() else (
                                         self.control.publish_record if self.control else None),
                                     on_view=self._on_view if self.floor or self.control or self.metrics else None,
                                     finish=self._stop_workers if self.protection or self.rating else None,
                                     start_entries=start_entries, snapshots=MeterSnapshots(config.gaming_day_start))
        if simulate and parts.table is not None:  # the scripted table only when simulating
            options = TableOptions(seed, rounds, mistakes, payout_errors, tuple(players), manual, pace, sessions,
                                   self.events.put)
            try:
                self.table = parts.table(self.sims, config, jurisdiction, options, self.stop)
            except BaseException as refusal:
                self._undo_close(refusal)
                raise

    def _workers(self) -> list[LiveProtection | LiveRating]:
        """The workers fed the closed rounds: the hole-card detector and the rating, those that run."""
        return [w for w in (self.protection, self.rating) if w is not None]

    def _stop_workers(self) -> None:
        """The hole-card detector and the rating finish the rounds handed to them (their last inputs are applied
        by ``Controller._finish``)."""
        for worker in self._workers():
            worker.stop()

    def _check_journal(self) -> None:
        """Once ready (controller thread): start the check of the whole journal store in the background
        (``controller.journal.check``); its outcome comes back as an input on the event queue. Never before
        ready: start-up must not grow with the history."""
        self.journal_check = JournalCheck(self.journal.path, self.events.put,
                                          report_whole=not self.machine.journal_whole())
        self.journal_check.start()

    def _alert(self, alert: Alert | DetectorChecked) -> None:
        """The detector's input for a round it read (its worker thread): queued for the round machine; for an
        ``Alert``, the simulated supervisor, if any, is paged as a floor system pages a real one
        (``controller.simulated.table``). Raises ``queue.Full``."""
        self.events.put(alert)
        if self.table is not None and isinstance(alert, Alert):
            self.table.page()

    def _on_record(self, record: dict[str, Any]) -> None:
        """Each journal record as written (controller thread): to the control interface; a ``SeatRating`` to the
        rating and the hole-card detector too, in order with the rounds (none waits)."""
        if self.control is not None:
            self.control.publish_record(record)
        if record["type"] == "SeatRating":
            for worker in self._workers():
                worker.seat_rated(record["data"])

    def _on_view(self, view: dict[str, Any]) -> None:
        """The round's view after each commit, to the control interface and the floor (neither waits); the
        meters, when they may have changed, to the control interface and the metrics (the floor reads them from
        the journal's checkpoints)."""
        if self.control is not None:
            self.control.publish_view(view)
        if self.floor is not None:
            self.floor.publish_view(view, self.journal.head[0])
        meters = self.machine.meters
        if meters.changes != self._meters_seen:
            self._meters_seen = meters.changes
            shown = meters.to_json()  # a fresh copy: handed to other threads, never changed after
            if self.control is not None:
                self.control.publish_meters(shown)
            if self.metrics is not None:
                self.metrics.meters_now(shown)

    def _round_closed(self, record: RoundRecord) -> None:
        for worker in self._workers():
            worker.round_closed(record)
        self._print_summary(record)

    def _print_summary(self, record: RoundRecord) -> None:
        if self.quiet:
            return
        try:
            print(format_round(record), file=self.out, flush=True)
        except OSError as exc:  # a closed pipe or a full disk must not stop the table: the journal is the record
            log.warning("round summaries stopped: cannot write them (%s)", exc)
            self.quiet = True

    def stop(self) -> None:
        """Ask the controller thread to stop after the input it is processing (safe from any thread): the inputs
        still queued are dropped, never journaled, their count logged (``Controller.stop``)."""
        self.controller.stop()

    def stop_after_round(self) -> None:
        """Ask the controller thread to stop once no round is in progress (safe from any thread)."""
        self.events.put(STOP_AFTER_ROUND)

    def run(self) -> int:
        """Set up the hole-card detector and the rating, then start the drivers, the control interface, the floor
        and the scripted table, and run the controller; 0, or 1 when it ended in a fault. The workers' setup holds
        the interpreter for long stretches (compiled code loaded, tables built): it is over before any device is
        started, so no input waits behind it and no press is delayed by it."""
        for worker in self._workers():
            worker.start()
        for worker in self._workers():
            if not worker.ready.wait(WORKER_SETUP_S):
                log.warning("%s still setting up after %.0f s: the table deals meanwhile", worker.what,
                            WORKER_SETUP_S)
        for driver in self.drivers.values():
            driver.start()
        if self.control is not None:
            self.control.start()
        if self.floor is not None:
            self.floor.start()
        if self.table is not None:
            self.table.start()
        return self.controller.run()

    def _stop_control(self) -> None:
        """Stop the control interface, when there is one (a start refused after it was bound)."""
        if self.control is not None:
            self.control.stop()

    def _undo_start(self, refusal: BaseException, *, journal: bool = True) -> None:
        """A start refused by ``refusal`` before the drivers were made: stop the control interface, close the
        metrics port and (with ``journal``) the journal, those opened, each tried whatever an earlier one raised.
        Their failures are logged and added to ``refusal`` as notes; ``refusal`` stays the error the caller
        raises, so the reason the start was refused is never hidden by a part that failed to stop."""
        attempt = PartStops("undoing the refused start")
        attempt("the control interface", self._stop_control)
        if self.metrics is not None:
            attempt("the metrics", self.metrics.close)
        if journal:
            attempt("the journal", self.journal.close)
        attempt.note_on(refusal)

    def _undo_close(self, refusal: BaseException) -> None:
        """A start refused by ``refusal`` once the drivers could be made: ``close`` every part; its failures are
        added to ``refusal`` as notes (each logged by ``close``), ``refusal`` staying the error raised."""
        try:
            self.close()
        except BaseException as failed:  # logged by close, part by part; named on the refusal
            refusal.add_note(f"while closing the service after the refused start: {failed!r}")
            for note in getattr(failed, "__notes__", ()):
                refusal.add_note(note)

    def close(self) -> None:
        """Stop the control interface, the floor, the metrics, the scripted table, the workers, the drivers (closing
        their ports), the simulators and the journal store's check; close the journal. Each part is tried, in that
        order, whatever an earlier one raised: a failure is logged naming its part, and once every part was tried
        the first is raised again (the others added to it as notes), so no port or lock is left open by another's
        failure and the caller still sees it."""
        attempt = PartStops("closing the service")
        attempt("the control interface", self._stop_control)
        if self.floor is not None:
            # after the controller: it publishes what the journal holds, then says offline
            attempt("the floor publisher", self.floor.stop)
        if self.metrics is not None:
            attempt("the metrics", self.metrics.close)
        if self.table is not None:
            attempt("the scripted table", self.table.stop)
        for worker in self._workers():
            attempt(f"the {worker.what}", worker.stop)
        for name, driver in self.drivers.items():
            attempt(f"the {name} driver", driver.stop)
        for name, sim in self.sims.items():
            attempt(f"the {name} simulator", sim.stop)
        if self._link_dir is not None:
            shutil.rmtree(self._link_dir, ignore_errors=True)
        sim_urls = sys.modules.get("drivers.urls.protocol_sim")
        if sim_urls is not None:  # simulators a sim:// port started (drivers/urls/protocol_sim.py)
            attempt("the sim:// simulators", sim_urls.stop_all)
        if self.journal_check is not None:
            attempt("the journal store's check", self.journal_check.stop)
        attempt("the journal", self.journal.close)
        attempt.raise_first()


class PartStops:
    """The service's parts stopped one by one, each tried whatever an earlier one raised (``Service.close``, and
    the undoing of a start refused part way). Called ``(part, stop)``: runs ``stop()``; a failure is logged at
    ERROR naming ``part`` under ``what`` (``"closing the service"``), with its traceback, and kept in
    ``failures`` ``[(part, exception)]``, never dropped."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.failures: list[tuple[str, BaseException]] = []

    def __call__(self, part: str, stop: Callable[[], object]) -> None:
        try:
            stop()
        except BaseException as exc:  # the parts after it are still stopped; raised or noted by the caller
            log.error("%s: %s failed to stop: %r", self.what, part, exc, exc_info=exc)
            self.failures.append((part, exc))

    def raise_first(self) -> None:
        """Raise the first failure, the later ones added to it as notes; nothing when every part stopped."""
        if self.failures:
            first = self.failures[0][1]
            for part, exc in self.failures[1:]:
                first.add_note(f"while {self.what}, {part} failed too: {exc!r}")
            raise first

    def note_on(self, refusal: BaseException) -> None:
        """Add every failure to ``refusal`` as a note: the reason a start was refused stays the error raised,
        and what could not be undone after it is named with it."""
        for part, exc in self.failures:
            refusal.add_note(f"while {self.what}, {part} failed to stop: {exc!r}")


def run_service(config: TableConfig, *, simulate: bool = False, rounds: int | None = None, seed: int | None = None,
                journal_path: Path | None = None, ports: dict[str, str] | None = None, quiet: bool = False,
                out: TextIO = sys.stdout, mistakes: float = 0.0, metrics_port: int | None = None,
                started_at: float | None = None, payout_errors: float = 0.0, players: Sequence[Any] = (),
                protect: bool | EvidenceKeeping = False, manual: bool = False, rating: bool = False,
                sessions: int = 0, parts: ServiceParts = ServiceParts(), pace: float = 0.0) -> int:
    """Run the service until ``rounds`` rounds closed or voided, or SIGINT, SIGTERM or SIGHUP, taken alike (SIGHUP:
    the hang-up sent when the terminal it was started from goes, as an ssh connection closing; signal(7)).

    ``simulate`` starts every device's simulator on a pseudo-terminal and the scripted table (players and
    dealer, built by ``parts.table``); without it a device whose port is ``simulator`` gets its simulator and
    the others are opened at their configured port (``ports`` overrides, by device name). Prints each closed
    round's summary on ``out`` unless ``quiet``. ``mistakes``: the probability that a simulated player's
    decision is random rather than optimal; ``payout_errors`` that the simulated dealer pays a seat wrong
    (controller.simulated.table); ``players``: seats of other simulated players
    (``controller.simulated.player_spec.PlayerSpec``); ``protect`` runs the hole-card detector after each round
    (``controller.service.protection``; an ``EvidenceKeeping``: with those settings); ``rating`` rates every seat's session after each round
    (``controller.service.rating_live``: ``SessionRated`` inputs, ``GET /sessions``); ``sessions``: the simulated
    players come and go, about that many rounds each (``controller.simulated.seating``); ``manual``: the simulated
    table deals by hand (NY 9 NYCRR 5324.39(d)(1), the supervisor switching it first; ``config`` must allow it);
    ``parts``: the control interface, floor and scripted table to build (``ServiceParts``); ``pace``: seconds the
    simulated dealer leaves between its presses (``--pace``, ``controller.simulated.pace``). Returns 0, or 1 when it
    stopped with a round open, in a fault, after a first signal that found the table held in a fault (the round
    then cleared or voided: ``Controller.held_at_stop``) or when the journal could not be written.
    Raises ``ConfigError`` (before any device is touched) for a refused configuration and ``JournalError`` for
    a journal that does not verify.
    """
    previous_handlers = {}
    signals: list[int] = []
    built: list[Service] = []

    def on_signal(*_: Any) -> None:
        # the first signal lets the round in progress finish; a second one stops at once. A signal that comes
        # while the service is still being built is kept and acted on once it exists.
        signals.append(1)
        if built:
            built[0].stop() if len(signals) > 1 else built[0].stop_after_round()

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            previous_handlers[sig] = signal.signal(sig, on_signal)
    try:
        service = Service(config, simulate=simulate, rounds=rounds, seed=seed, journal_path=journal_path,
                          ports=ports, quiet=quiet, out=out, mistakes=mistakes, metrics_port=metrics_port,
                          started_at=started_at, payout_errors=payout_errors, players=players, protect=protect,
                          manual=manual, rating=rating, sessions=sessions, parts=parts, pace=pace)
    except BaseException:
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)
        raise
    built.append(service)
    if signals:
        service.stop() if len(signals) > 1 else service.stop_after_round()

    log.info("table %s: configuration %s, journal %s, %s", config.table_id, path_shown(config.source),
             service.journal.shown, "simulated devices and players" if simulate else "devices " + ", ".join(
                 f"{name}={path_shown(port)}" for name, port in service.controller.started.devices.items()))
    try:
        if service.journal.created and not service.simulated:
            print(f"crisscross: note: no journal at {service.journal.shown}: a new one was started; if this table "
                  f"has played before, stop and give the path of its journal", file=sys.stderr)
        if service.journal.open_rounds:
            print(f"crisscross: warning: round(s) {', '.join(map(str, service.journal.open_rounds))} in "
                  f"{service.journal.shown} were never closed: their wagers are unresolved", file=sys.stderr)
        if service.sims and service.table is None:
            print(f"crisscross: {', '.join(service.sims)} simulated and no scripted table: waiting for panel "
                  f"presses (run with --simulate for simulated players and dealer)", file=sys.stderr)
        status = service.run()
        machine = service.machine
        if service.controller.journal_error is not None:
            print(f"crisscross: stopped: the journal cannot be written: {service.controller.journal_error}",
                  file=sys.stderr)
        elif machine.state == "fault" or service.controller.held_at_stop is not None:
            fault = machine.fault or service.controller.held_at_stop
            after = "" if machine.state == "fault" else (f"; it held the table when the stop was asked, and round "
                                                         f"{machine.round_no} was then {machine.state}")
            print(f"crisscross: stopped on a fault: {fault.cause if fault else 'unknown'}"
                  f" ({fault.detail if fault else ''}){after}", file=sys.stderr)
        elif service.controller.stopped_short:
            print(f"crisscross: stopped: the journal store {service.journal.shown} is damaged and no round opens on "
                  f"it ({service.controller.rounds_closed} of {rounds} rounds played): restore it from its copy",
                  file=sys.stderr)
        elif status:
            print(f"crisscross: stopped with round {machine.round_no} open ({machine.state}): its wagers are "
                  f"unresolved; the journal keeps them", file=sys.stderr)
        return status
    finally:
        try:
            service.close()  # a signal meanwhile finds the service already stopping: the status stays
        finally:
            for sig, handler in previous_handlers.items():
                signal.signal(sig, handler)
