"""The table controller service: devices, the controller thread, the journal and the round summaries.

Threads (docs/architecture.md): each device driver has one owner thread that opens, reads, writes and closes
its port and only posts events; the controller thread (the thread that calls ``Controller.run``, the main
thread under ``crisscross run``) is the only one that touches the round machine and the journal. Nothing is
sent to a device before its handshake; the round machine leaves ``starting`` only when all three answered.

Write-ahead: each event is committed to the journal together with every record and command it produced, in
one transaction (``Journal.commit``), before any of those commands is handed to its driver; events already
waiting on the queue share that commit (``Controller.process``).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import queue
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from controller import __version__
from controller import commands as cmd
from controller.alerts import Alert, DetectorChecked
from controller.config import ConfigError, state_dir
from controller.control import ControlServer
from controller.eventqueue import EventQueue
from controller.inputs import JournalDamaged, PromptDue, ServiceStarted
from controller.journal import Journal, JournalError
from controller.journal_check import JournalCheck
from controller.journal_key import JournalKeyError, load_key
from controller.metrics import ServiceMetrics
from controller.notify import Notifier
from controller.paytable import Jurisdiction, load_jurisdiction
from controller.protection import LiveProtection
from controller.recall import RoundRecord, rounds_from_records
from controller.recovery import Recovered, recover
from controller.round import BETWEEN_ROUNDS as ROUND_OVER
from controller.round import Round
from controller.summary import format_round
from controller.table import JOURNAL_NAME, SIMULATED, TableConfig, jurisdictions_home
from controller.watch import Watch
from drivers import DRIVERS
from drivers.events import DeviceFault
from drivers.link import Device, LinkDown

if TYPE_CHECKING:  # a production run imports no simulator (tests/test_sim_urls.py)
    from drivers.sim import PtySimulator

log = logging.getLogger(__name__)

#: Most inputs committed together (those already waiting when one is taken: a burst of chip changes).
MAX_GROUP = 64
#: Outputs after which no further input joins the commit: a round's end (its checkpoint) or a fault.
GROUP_ENDS = (cmd.RoundClosed, cmd.RoundVoided, cmd.FaultRaised)
#: Longest detail of a device fault kept (journal, panel, log): a driver may describe a link loss at length.
MAX_DETAIL = 200
#: Put on the event queue to stop the controller thread at once (tests; a second signal).
STOP = object()
#: Put on the event queue to stop once no round is in progress (the first SIGINT/SIGTERM).
STOP_AFTER_ROUND = object()
#: Seconds a refusal stays on the panel before the state's prompt comes back (``PromptDue``).
REFUSAL_SHOWN_S = 3.0


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def fields_of(item: Any) -> dict[str, Any]:
    """The fields of an input or output (a flat frozen dataclass: none holds another) by name, for the journal:
    the values themselves, not copies (``dataclasses.asdict`` copies deeply; the journal encodes them at once
    and gives back records of its own)."""
    return {name: getattr(item, name) for name in _field_names(type(item))}


class Controller:
    """Owns the round machine and the journal; consumes ``events`` on the thread that calls ``run``.

    ``machine`` is the round machine rebuilt from the journal (``controller.recovery``), ``missing`` the
    records the replay found missing at the journal's end (journaled first) and ``round_records`` the journal
    records of the round in progress. ``drivers`` maps ``shoe``/``sensors``/``panel`` to started ``Device``
    objects. ``on_round_closed`` is called with each closed or voided round's ``RoundRecord`` (built from the
    journaled records); ``on_record`` with every journal record as written and ``on_view`` with the machine's
    ``view()`` after each input (both on the controller thread: they must not block). ``rounds`` stops the loop
    after that many closed or voided rounds (None: until ``STOP``). ``stop_on_fault`` ends the loop when the
    machine faults. ``finish`` is called once the loop ends, before ``ServiceStopped`` is journaled, to let the
    service's own workers put their last inputs on ``events`` (the hole-card detector's alerts of the last
    rounds: ``controller.protection``); those are applied, anything else left on the queue is not.
    """

    def __init__(self, machine: Round | Recovered, journal: Journal, drivers: dict[str, Device], events: queue.Queue,
                 *, on_round_closed: Callable[[RoundRecord], None] | None = None, rounds: int | None = None,
                 stop_on_fault: bool = False, on_record: Callable[[dict[str, Any]], None] | None = None,
                 on_view: Callable[[dict[str, Any]], None] | None = None,
                 started: ServiceStarted | None = None, watch: Watch | None = None,
                 finish: Callable[[], None] | None = None) -> None:
        self.finish = finish
        recovered = machine if isinstance(machine, Recovered) else Recovered(machine)
        self.machine = recovered.machine
        self.missing = list(recovered.missing)
        self.started = started or ServiceStarted()
        self.watch = watch or Watch()
        self.on_record = on_record
        self.on_view = on_view
        self.journal = journal
        self.drivers = drivers
        self.events = events
        self.on_round_closed = on_round_closed
        self.rounds = rounds
        self.stop_on_fault = stop_on_fault
        self.rounds_closed = 0
        self._round_records: list[dict[str, Any]] = list(recovered.round_records)
        self._done = False
        self._stop_after_round = False
        #: the run ended before its round count because the journal store was found damaged (``_closed_for_good``)
        self.stopped_short = False
        self._damage_found = False  # a ``JournalDamaged`` was applied in this run
        self.journal_error: OSError | None = None
        self._prompt_timer: threading.Timer | None = None
        self._pending: deque[Any] = deque()  # inputs taken from the queue and put back (``process``)

    def run(self) -> int:
        """Process events until ``STOP``, ``STOP_AFTER_ROUND`` once no round is in progress, the round count or
        (with ``stop_on_fault``) a fault.

        Returns 0; 1 when the machine ended in its fault state, a round was left open, or the journal could not
        be written (then nothing more is applied: an input that is not on disk is never acted on).
        """
        try:
            for output in self.missing:  # consequences of the last input that a crash kept off a JSON-lines journal
                log.warning("journaling %s of round %s, lost by the last stop", type(output).__name__,
                            getattr(output, "round_no", None))
            if self.missing:
                self._commit([self._entry(output) for output in self.missing], self.missing)
            self.missing = []
            self.process(self.started)
            while not self._done:
                try:
                    item = self._pending.popleft() if self._pending else self.events.get(timeout=self.watch.tick())
                except queue.Empty:  # nothing to do: the loop is alive all the same
                    self.watch.alive()
                    continue
                if item is STOP:
                    break
                if item is STOP_AFTER_ROUND:
                    self._stop_after_round = True
                    if not self.machine.round_open():  # a round held in fault is still in progress
                        break
                    log.warning("stopping after round %s", self.machine.round_no)
                    continue
                self.process(item, *self._arrived_with())
                if self._closed_for_good():
                    break
            self._finish()
            self.journal.append("record", "ServiceStopped", {"state": self.machine.state}, self.machine.round_no)
        except OSError as exc:
            # the caller says it in one line (run_service); the log keeps it for -v
            log.info("journal %s cannot be written (%s): stopping; nothing more is applied", self.journal.path, exc)
            self.journal_error = exc
            return 1
        finally:
            self.watch.stopping()
            if self._prompt_timer is not None:
                self._prompt_timer.cancel()
        return 0 if self.machine.state in ("starting", *ROUND_OVER) and not self.stopped_short else 1

    def _closed_for_good(self) -> bool:
        """With a round count (``rounds``): True once this run's check found the journal store damaged
        (``JournalDamaged``: no round opens, ``Round.journal_whole``) and no round is in progress, so the count
        can never be reached: the run ends (exit status 1) rather than wait for rounds that cannot open. Without
        a count the service stays up, the table closed, until it is stopped."""
        if self.rounds is None or not self._damage_found or self.machine.journal_whole() or self.machine.round_open():
            return False
        log.error("journal %s is damaged: no round opens; %d of %d rounds played: stopping", self.journal.path,
                  self.rounds_closed, self.rounds)
        self.stopped_short = True
        return True

    def _finish(self) -> None:
        """Call ``finish`` and apply the detector's inputs it left on the queue (``Alert``, ``DetectorChecked``;
        class docstring)."""
        if self.finish is None:
            return
        self.finish()
        late = [*self._pending]
        while True:
            try:
                late.append(self.events.get_nowait())
            except queue.Empty:
                break
        detector_inputs = [item for item in late if isinstance(item, (Alert, DetectorChecked))]
        if detector_inputs:
            self.process(*detector_inputs)

    def _arrived_with(self) -> list[Any]:
        """The inputs already waiting (put back, then on the queue), up to ``MAX_GROUP - 1``: committed with the
        one just taken. A stop marker ends the group and stays first in line."""
        group: list[Any] = []
        while len(group) < MAX_GROUP - 1:
            try:
                item = self._pending.popleft() if self._pending else self.events.get_nowait()
            except queue.Empty:
                break
            if item is STOP or item is STOP_AFTER_ROUND:
                self._pending.appendleft(item)
                break
            group.append(item)
        return group

    def process(self, *events: Any) -> None:
        """Apply ``events`` in order, commit them with every output they produced in one transaction (inputs
        that arrived together share a commit), then carry out each output in order: a command is sent only
        once the commit that holds it returned. An input whose outputs end a round or raise a fault ends the
        group (a checkpoint, or the end of the run, comes right after it); the inputs after it are put back.

        An exception from the machine is a defect: it is logged with the event, and the machine is moved to
        its fault state (cause ``internal``) so the round stops in a defined state. A device fault's detail
        longer than ``MAX_DETAIL`` characters is cut before it is journaled and applied. Raises ``OSError`` when
        the journal refuses the commit: then nothing of it is kept and nothing is sent.
        """
        self.watch.inputs_taken(events)
        entries: list[tuple[str, str, dict[str, Any], int | None]] = []
        outputs: list[Any] = []
        for index, event in enumerate(events):
            if isinstance(event, DeviceFault) and len(event.detail) > MAX_DETAIL:  # a fault's detail is bounded
                cut = len(event.detail) - MAX_DETAIL
                event = dataclasses.replace(event, detail=f"{event.detail[:MAX_DETAIL]}... ({cut} more characters)")
            entries.append(("event", type(event).__name__, fields_of(event), self.machine.round_no))
            self._damage_found = self._damage_found or isinstance(event, JournalDamaged)
            try:
                produced = self.machine.handle(event)
            except Exception as exc:  # noqa: BLE001 - any defect must stop the round, not the service
                log.exception("round machine failed on %s in state %s", type(event).__name__, self.machine.state)
                produced = self.machine.defect(exc)
            entries.extend(self._entry(output) for output in produced)
            outputs.extend(produced)
            if any(isinstance(o, GROUP_ENDS) for o in produced) and index + 1 < len(events):
                self._pending.extendleft(reversed(events[index + 1:]))
                break
        self._commit(entries, outputs)
        if self.on_view is not None:
            self.on_view(self.machine.view())
        self.watch.after_input(self.machine)

    def _entry(self, output: Any) -> tuple[str, str, dict[str, Any], int | None]:
        kind = "command" if isinstance(output, cmd.DEVICE_COMMANDS) else "record"
        return kind, type(output).__name__, fields_of(output), getattr(output, "round_no", self.machine.round_no)

    def _commit(self, entries: list[tuple[str, str, dict[str, Any], int | None]], outputs: list[Any]) -> None:
        """Commit ``entries`` (inputs and the entries of ``outputs``) as one transaction, with a checkpoint of
        the machine after a round's close and at least every ``journal.checkpoint_every`` records, then carry
        the outputs out. The commit's records are handed on (metrics, the round's records, ``on_record``) once
        the outputs are carried out, or before a round's end is, which reads them: a command waits for its
        commit only."""
        ends_round = any(isinstance(o, (cmd.RoundClosed, cmd.RoundVoided)) for o in outputs)
        due = self.journal.since_checkpoint + len(entries) >= self.journal.checkpoint_every
        began = time.monotonic()
        records = self.journal.commit(entries, state=self.machine.checkpoint() if ends_round or due else None)
        seconds = time.monotonic() - began
        # a PrivatePanel sets the panel's whole text and lamps (controller/alerts.py): the panel commands before it
        # in the commit are journaled, not sent, so that the alert's lamp does not flicker on the panel
        last_private = max((i for i, o in enumerate(outputs) if isinstance(o, cmd.PrivatePanel)), default=-1)
        handed = False
        try:
            for index, output in enumerate(outputs):
                if index < last_private and isinstance(output, (cmd.Display, cmd.SetLamps)):
                    continue
                if not handed and isinstance(output, (cmd.RoundClosed, cmd.RoundVoided)):
                    handed = True
                    self._hand_on(records, seconds)
                self._carry_out(output)
        finally:
            if not handed:
                self._hand_on(records, seconds)

    def _hand_on(self, records: Sequence[dict[str, Any]], seconds: float) -> None:
        """The records of one commit (made durable in ``seconds``) to the metrics, the round's records and
        ``on_record``."""
        self.watch.committed(records, seconds)
        for record in records:
            round_no = record["round"]
            if round_no is not None:
                if self._round_records and self._round_records[-1].get("round") != round_no:
                    self._round_records = []
                self._round_records.append(record)
            if self.on_record is not None:
                self.on_record(record)

    def _carry_out(self, output: Any) -> None:
        if isinstance(output, cmd.DEVICE_COMMANDS):
            self._send(output)
        elif isinstance(output, (cmd.RoundClosed, cmd.RoundVoided)):
            self._round_closed(output.round_no)
        elif isinstance(output, cmd.FaultRaised):
            log.error("fault in round %s: %s %s (%s)", output.round_no, output.device or "-", output.cause, output.detail)
            if self.stop_on_fault:
                self._done = True
        elif isinstance(output, cmd.Irregularity):
            # an unknown event's text may hold a card: only its kind is logged at this level (docs/architecture.md)
            detail = {} if output.kind == "unknown_event" else output.detail
            log.warning("irregularity in round %s: %s %s", output.round_no, output.kind, detail)
        elif isinstance(output, cmd.PressRefused):
            self._prompt_after_refusal()

    def _prompt_after_refusal(self) -> None:
        """In ``REFUSAL_SHOWN_S`` seconds, put ``PromptDue`` on the queue (one timer: a later refusal restarts
        it), so that the panel shows the state's prompt again (``Round.prompt``)."""
        if self._prompt_timer is not None:
            self._prompt_timer.cancel()
        self._prompt_timer = threading.Timer(REFUSAL_SHOWN_S, self._post, (PromptDue(),))
        self._prompt_timer.daemon = True
        self._prompt_timer.start()

    def _send(self, command: Any) -> None:
        driver = self.drivers[command.device]
        self.watch.command_sent()
        try:
            if isinstance(command, cmd.Shuffle):
                driver.shuffle()
            elif isinstance(command, cmd.Dispense):
                driver.dispense(command.txn_id, command.count)
            elif isinstance(command, cmd.QueryLast):
                driver.query_last()
            elif isinstance(command, cmd.ReadSpots):
                driver.read_spots(command.request_id)
            elif isinstance(command, cmd.SetLamps):
                driver.set_lamps(command.buttons)
            elif isinstance(command, cmd.Display):
                driver.show(command.text)
            elif isinstance(command, cmd.PrivatePanel):  # the supervisor's view of alerts (controller/alerts.py)
                driver.show(command.text)  # the text first: a lamp lit says the text is there to read
                driver.set_lamps(command.buttons)
        except LinkDown as exc:  # the driver posts its own link_lost once per loss; the round asks again on resume
            log.warning("%s: %s not sent: %s", command.device, type(command).__name__, exc)
        except Exception as exc:  # noqa: BLE001 - a driver that cannot take a command is a device fault
            log.error("%s: cannot send %s: %s", command.device, type(command).__name__, exc)
            self._post(DeviceFault(command.device, "link_lost", f"cannot send {type(command).__name__}: {exc}"))

    def _post(self, event: Any) -> None:
        """Queue an input of the service's own; a queue full to its reserve (controller/eventqueue.py) refuses
        it: logged, and the round goes on (a lost link is reported again by its driver, a prompt by the next
        press)."""
        try:
            self.events.put(event)
        except queue.Full:
            log.error("event queue full: %s dropped", type(event).__name__)

    def _round_closed(self, round_no: int) -> None:
        record = rounds_from_records(self._round_records).get(round_no)
        self._round_records = []
        self.rounds_closed += 1
        if record is not None and self.on_round_closed is not None:
            self.on_round_closed(record)
        if self._stop_after_round or (self.rounds is not None and self.rounds_closed >= self.rounds):
            self._done = True


def simulator_classes() -> dict[str, Callable[..., PtySimulator]]:
    """The simulator of each driver kind; imported here, when a device is simulated, so that a production run
    imports no simulator."""
    from drivers.panel.simulator import PanelSimulator
    from drivers.reader.simulator import ReaderSimulator
    from drivers.sensors.simulator import SensorSimulator
    from drivers.shoe.simulator import ShoeSimulator

    return {"shoe": ShoeSimulator, "sensors": SensorSimulator, "panel": PanelSimulator, "reader": ReaderSimulator}


def is_simulated(port: str) -> bool:
    """True for a port that is a simulator: ``simulator`` or a ``sim://`` URL (docs/protocol.md)."""
    return port == "simulator" or port.startswith("sim://")


def journal_for(config: TableConfig, simulate: bool, journal_path: Path | None) -> Path:
    """The journal to write: ``journal_path`` (``--journal``) when given; when any device is simulated (``simulate``)
    a journal of its own in the state directory (``controller.config.state_dir()/simulated``), so simulated play
    never mixes with a table's history; else the table's (``table.yaml``, or ``journal.db`` in the state
    directory)."""
    if journal_path is not None:
        return Path(journal_path)
    if simulate:
        return state_dir() / SIMULATED / JOURNAL_NAME
    return config.journal


def open_journal(config: TableConfig, journal_path: Path | None = None, *, history: bool = True) -> Journal:
    """Open the journal store (``journal_path``, else table.yaml's ``journal``; ``journal_for``) with table.yaml's
    ``journal_key`` when it names one; with ``history`` False (the shared journal of simulated play, which is
    nobody's history) no key seals it and an older JSON-lines journal beside it is left alone. Raises ``JournalError`` for a key file that cannot be used (the
    service does not start without the key it was given), for a new store beside a JSON-lines journal of the
    same name (the table's history written before the store: to be imported, never left behind) or a journal
    that does not open (``controller.journal.Journal``)."""
    path = Path(journal_path or config.journal)
    old = path.with_suffix(".jsonl")
    if history and not path.exists() and old != path and old.is_file():
        raise JournalError(f"{path}: no journal store, but a JSON-lines journal {old} beside it: this table's "
                           f"history; migrate it first: crisscross journal import {old} --journal {path}")
    return Journal(path, key=key_for(config) if history else None)


def key_for(config: TableConfig) -> bytes | None:
    """The journal key of table.yaml's ``journal_key`` (None when it names none). Raises ``JournalError`` for a
    key file that cannot be used (``controller.journal_key.load_key``): a key given is never silently left out."""
    if config.journal_key is None:
        return None
    try:
        return load_key(config.journal_key)
    except JournalKeyError as exc:
        raise JournalError(str(exc)) from None


def jurisdiction_for(config: TableConfig) -> Jurisdiction:
    """Load the table's jurisdiction: a code from ``jurisdictions/`` beside ``table.yaml``, else from ``config/``;
    a file path as ``load_table_config`` resolved it (from ``table.yaml``'s folder)."""
    return load_jurisdiction(config.jurisdiction, jurisdictions_home(config.source))


def start_simulators(names: list[str], drivers: dict[str, str], seed: int | None,
                     link_dir: Path | None = None) -> dict[str, PtySimulator]:
    """Start the simulator of each device in ``names`` (``drivers`` gives each device's driver kind).

    With ``link_dir`` each keeps a by-id style symlink there (``sim_port``), which follows it when it comes
    back under another pty name (fault injection ``replug``), as udev's /dev/serial/by-id does for hardware.
    """
    sims: dict[str, PtySimulator] = {}
    classes = simulator_classes() if names else {}
    for name in names:
        kind = drivers[name]
        sim = (classes[kind](seed=seed, link_dir=link_dir) if kind == "shoe"
               else classes[kind](link_dir=link_dir))
        sim.start()
        sims[name] = sim
    return sims


def sim_port(sim: PtySimulator) -> str:
    """The port to open a simulator by: its by-id style symlink when it keeps one, else its pty."""
    link = sim.link_path
    return str(link) if link is not None else sim.port


class Service:
    """The assembled service: journal, simulators where asked, drivers, round machine, controller, scripted table.

    Built by the constructor without touching a device; ``run`` starts the drivers (each does its handshake
    first), the control interface (``controller.control``, when ``table.yaml`` enables it) and the scripted
    table, then runs the controller on the calling thread; ``close`` stops everything
    and closes the journal (also after a failed ``run``). Arguments as for ``run_service``. Raises
    ``ConfigError`` for a refused jurisdiction or operators file, ``JournalError`` for a journal that does not
    verify and ``OSError`` for a control port in use, before any simulator or port is opened.
    """

    def __init__(self, config: TableConfig, *, simulate: bool = False, rounds: int | None = None,
                 seed: int | None = None, journal_path: Path | None = None, ports: dict[str, str] | None = None,
                 quiet: bool = False, out: TextIO = sys.stdout, mistakes: float = 0.0,
                 metrics_port: int | None = None, started_at: float | None = None, payout_errors: float = 0.0,
                 players: Sequence[Any] = (), protect: bool = False, manual: bool = False) -> None:
        started_at = time.monotonic() if started_at is None else started_at
        jurisdiction = jurisdiction_for(config)
        ports = dict(ports or {})
        self.out = out
        self.quiet = quiet
        self.events: EventQueue = EventQueue()  # bounded; chip changes coalesce (controller/eventqueue.py)
        #: any device simulated (--simulate, a port "simulator" or a sim:// URL): simulated play, kept apart
        self.simulated = [n for n, dev in config.devices.items() if simulate or is_simulated(ports.get(n, dev.port))]
        # the shared journal of simulated play is never sealed with a table's key: a keyed table file used once
        # with --simulate would otherwise lock every other simulated run out of it
        self.journal = open_journal(config, journal_for(config, bool(self.simulated), journal_path),
                                    history=not (self.simulated and journal_path is None))
        mode = "simulated" if self.simulated else "table"
        played = (self.journal.last_start or {}).get("data", {}).get("mode")
        if played and played != mode:
            self.journal.close()
            raise JournalError(f"{self.journal.path}: this journal holds {played} play and this run is {mode} play; "
                               f"simulated play never goes into a table's history (leave --journal out: a run with "
                               f"simulated devices keeps its own journal)")
        try:
            log.info("journal %s: replaying the records after %s", self.journal.path,
                     f"the checkpoint at record {self.journal.checkpoint.seq}" if self.journal.checkpoint else "none")
            recovered = recover(self.journal, config, jurisdiction)
            log.info("journal %s: replayed up to record %d", self.journal.path, self.journal.head[0])
            if self.journal.since_checkpoint >= self.journal.checkpoint_every:  # a long replay is not repeated
                self.journal.commit([], state=recovered.machine.checkpoint())
        except BaseException:
            self.journal.close()
            raise
        self.sims: dict[str, PtySimulator] = {}
        self.drivers: dict[str, Device] = {}
        self.table: Any = None  # the scripted table (controller.simtable) under --simulate
        self.protection: LiveProtection | None = None  # the hole-card detector, with --protect
        self.control: ControlServer | None = None  # the control interface, when table.yaml enables it
        self.floor: Any = None  # the floor publisher (controller.floor.publisher), when table.yaml enables it
        self.metrics: ServiceMetrics | None = None  # /metrics, with --metrics-port or metrics.port of table.yaml
        self.journal_check: JournalCheck | None = None  # the check of the whole store, started once ready
        kinds = {name: dev.driver for name, dev in config.devices.items()}
        simulated = [n for n in self.simulated if simulate or ports.get(n, config.devices[n].port) == "simulator"]
        started = ServiceStarted(mode, __version__, str(config.source),
                                 {n: "simulator" if n in simulated else ports.get(n, dev.port)
                                  for n, dev in config.devices.items()})
        self._link_dir: Path | None = Path(tempfile.mkdtemp(prefix="crisscross-sims-")) if simulated else None
        try:
            if config.control.enabled:  # bound here: a port in use is refused before any device is touched
                self.control = ControlServer(config.control, self.events)
            if config.floor.enabled:  # paho-mqtt is imported only then; the journal is its outbox
                from controller.floor.publisher import Publisher

                self.floor = Publisher(config.floor, config.table_id, self.journal.path,
                                       key=key_for(config) if self.journal.meta("key_id") else None,
                                       simulated=bool(self.simulated))  # never under the table's own id
            port = metrics_port if metrics_port is not None else config.metrics_port
            if port is not None:
                self.metrics = ServiceMetrics(self.events.qsize, lambda: self.drivers,
                                              wal_bytes=lambda: self.journal.wal_bytes)
                self.metrics.journal_damaged.set(not recovered.machine.journal_whole())  # kept over restarts
                self.metrics_port = self.metrics.serve("127.0.0.1", port)
            self.sims = start_simulators(simulated, kinds, seed, self._link_dir)
            for name, dev in config.devices.items():
                port = sim_port(self.sims[name]) if name in self.sims else ports.get(name, dev.port)
                search = (str(self._link_dir / f"sim-{dev.driver}-*"),) if name in self.sims else dev.search
                self.drivers[name] = DRIVERS[dev.driver](
                    port, self.events, name=name, timing=config.timing, identity=dev.identity, search=search)
        except BaseException:
            self.close()
            raise
        self.machine = recovered.machine
        self.protection = LiveProtection(jurisdiction, self._alert) if protect else None
        watch = Watch(config.table_id, Notifier(), self.metrics, started_at, on_ready=self._check_journal)
        self.controller = Controller(recovered, self.journal, self.drivers, self.events, started=started, watch=watch,
                                     on_round_closed=self._round_closed, rounds=rounds,
                                     on_record=self.control.publish_record if self.control else None,
                                     on_view=self._on_view if self.floor else
                                     self.control.publish_view if self.control else None,
                                     finish=self.protection.stop if self.protection else None)
        if simulate:  # the scripted table (and numpy, for its players' strategy) only when simulating
            try:
                from controller.simtable import SimulatedTable
            except ImportError as exc:
                self.close()
                raise ConfigError(f"--simulate needs the analysis extra ({exc.name} is missing): install the "
                                  f"package with [analysis], e.g. pip install "
                                  f"'crisscross_controller-VERSION-py3-none-any.whl[analysis]'") from None

            self.table = SimulatedTable.for_table(self.sims, config, jurisdiction, seed=seed, rounds=rounds,
                                                  mistakes=mistakes, on_failure=self.stop,
                                                  payout_errors=payout_errors, players=players, manual=manual)

    def _check_journal(self) -> None:
        """Once ready (controller thread): start the check of the whole journal store in the background
        (``controller.journal_check``); its outcome comes back as an input on the event queue. Never before
        ready: start-up must not grow with the history."""
        self.journal_check = JournalCheck(self.journal.path, self.events.put,
                                          report_whole=not self.machine.journal_whole())
        self.journal_check.start()

    def _alert(self, alert: Alert | DetectorChecked) -> None:
        """The detector's input for a round it read (its worker thread): queued for the round machine; for an
        ``Alert``, the simulated supervisor, if any, is paged as a floor system pages a real one
        (``controller.simtable``). Raises ``queue.Full``."""
        self.events.put(alert)
        if self.table is not None and isinstance(alert, Alert):
            self.table.page()

    def _on_view(self, view: dict[str, Any]) -> None:
        """The round's view after each commit, to the control interface and the floor (neither waits)."""
        if self.control is not None:
            self.control.publish_view(view)
        if self.floor is not None:
            self.floor.publish_view(view, self.journal.head[0])

    def _round_closed(self, record: RoundRecord) -> None:
        if self.protection is not None:
            self.protection.round_closed(record)
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
        """Ask the controller thread to stop after the event it is processing (safe from any thread)."""
        self.events.put(STOP)

    def stop_after_round(self) -> None:
        """Ask the controller thread to stop once no round is in progress (safe from any thread)."""
        self.events.put(STOP_AFTER_ROUND)

    def run(self) -> int:
        """Start the drivers and the scripted table, run the controller; 0, or 1 when it ended in a fault."""
        for driver in self.drivers.values():
            driver.start()
        if self.control is not None:
            self.control.start()
        if self.floor is not None:
            self.floor.start()
        if self.table is not None:
            self.table.start()
        if self.protection is not None:
            self.protection.start()
        return self.controller.run()

    def close(self) -> None:
        """Stop the control interface, the scripted table, the drivers (closing their ports), the simulators and
        the journal store's check; close the journal."""
        if self.control is not None:
            self.control.stop()
        if self.floor is not None:
            self.floor.stop()  # after the controller: it publishes what the journal holds, then says offline
        if self.metrics is not None:
            self.metrics.close()
        if self.table is not None:
            self.table.stop()
        if self.protection is not None:
            self.protection.stop()
        for driver in self.drivers.values():
            driver.stop()
        for sim in self.sims.values():
            sim.stop()
        if self._link_dir is not None:
            shutil.rmtree(self._link_dir, ignore_errors=True)
        sim_urls = sys.modules.get("drivers.urls.protocol_sim")
        if sim_urls is not None:  # simulators a sim:// port started (drivers/urls/protocol_sim.py)
            sim_urls.stop_all()
        if self.journal_check is not None:
            self.journal_check.stop()
        self.journal.close()


def run_service(config: TableConfig, *, simulate: bool = False, rounds: int | None = None, seed: int | None = None,
                journal_path: Path | None = None, ports: dict[str, str] | None = None, quiet: bool = False,
                out: TextIO = sys.stdout, mistakes: float = 0.0, metrics_port: int | None = None,
                started_at: float | None = None, payout_errors: float = 0.0, players: Sequence[Any] = (),
                protect: bool = False, manual: bool = False) -> int:
    """Run the service until ``rounds`` rounds closed or voided, or SIGINT/SIGTERM.

    ``simulate`` starts every device's simulator on a pseudo-terminal and the scripted table (players and
    dealer, ``controller.simtable``); without it a device whose port is ``simulator`` gets its simulator and
    the others are opened at their configured port (``ports`` overrides, by device name). Prints each closed
    round's summary on ``out`` unless ``quiet``. ``mistakes``: the probability that a simulated player's
    decision is random rather than optimal; ``payout_errors`` that the simulated dealer pays a seat wrong
    (controller.simtable); ``players``: seats of other simulated players
    (``controller.analysis.players.PlayerSpec``); ``protect`` runs the hole-card detector after each round
    (``controller.protection``); ``manual``: the simulated table deals by hand (NY 9 NYCRR 5324.39(d)(1), the
    supervisor switching it first; ``config`` must allow it). Returns 0, or 1 when it stopped with a round
    open (or held in
    fault) or the journal could not be written.
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
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous_handlers[sig] = signal.signal(sig, on_signal)
    try:
        service = Service(config, simulate=simulate, rounds=rounds, seed=seed, journal_path=journal_path,
                          ports=ports, quiet=quiet, out=out, mistakes=mistakes, metrics_port=metrics_port,
                          started_at=started_at, payout_errors=payout_errors, players=players, protect=protect,
                          manual=manual)
    except BaseException:
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)
        raise
    built.append(service)
    if signals:
        service.stop() if len(signals) > 1 else service.stop_after_round()

    log.info("table %s: configuration %s, journal %s, %s", config.table_id, config.source, service.journal.path,
             "simulated devices and players" if simulate else "devices " + ", ".join(
                 f"{name}={port}" for name, port in service.controller.started.devices.items()))
    try:
        if service.journal.created and not service.simulated:
            print(f"crisscross: note: no journal at {service.journal.path}: a new one was started; if this table "
                  f"has played before, stop and give the path of its journal", file=sys.stderr)
        if service.journal.open_rounds:
            print(f"crisscross: warning: round(s) {', '.join(map(str, service.journal.open_rounds))} in "
                  f"{service.journal.path} were never closed: their wagers are unresolved", file=sys.stderr)
        if service.sims and service.table is None:
            print(f"crisscross: {', '.join(service.sims)} simulated and no scripted table: waiting for panel "
                  f"presses (run with --simulate for simulated players and dealer)", file=sys.stderr)
        status = service.run()
        machine = service.machine
        if service.controller.journal_error is not None:
            print(f"crisscross: stopped: the journal cannot be written: {service.controller.journal_error}",
                  file=sys.stderr)
        elif machine.state == "fault":
            fault = machine.fault
            print(f"crisscross: stopped on a fault: {fault.cause if fault else 'unknown'}"
                  f" ({fault.detail if fault else ''})", file=sys.stderr)
        elif service.controller.stopped_short:
            print(f"crisscross: stopped: the journal store {service.journal.path} is damaged and no round opens on "
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
