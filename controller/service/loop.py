"""The controller thread: the round machine and the journal, fed by the event queue.

Threads (docs/architecture.md): each device driver has one owner thread that opens, reads, writes and closes
its port and only posts events; the controller thread (the thread that calls ``Controller.run``, the main
thread under ``crisscross run``) is the only one that touches the round machine and the journal. Nothing is
sent to a device before its handshake; the round machine leaves ``starting`` only when all three answered.

Write-ahead: each event is committed to the journal together with every record and command it produced, in
one transaction (``Journal.commit``), before any of those commands is handed to its driver; events already
waiting on the queue share that commit, and so does the answer to a request to read that comes within
``READ_WAIT_S`` (``Controller.process``).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from controller.journal.recall import RoundRecord, rounds_from_records
from controller.journal.recovery import Recovered
from controller.journal.store import Committed, Journal
from controller.round import commands as cmd
from controller.round.alerts import Alert, DetectorChecked
from controller.round.graph import BETWEEN_ROUNDS as ROUND_OVER
from controller.round.inputs import JournalDamaged, OperatorsChanged, PromptDue, ServiceStarted, SessionRated
from controller.round.machine import Round
from controller.round.significant import SIGNIFICANT_EVENT
from controller.service.meters_snapshot import MeterSnapshots
from controller.service.significance import log_event
from controller.service.watch import Watch
from drivers.events import DeviceFault, SpotsSnapshot
from drivers.link import Device, LinkDown

log = logging.getLogger(__name__)

#: Most inputs committed together (those already waiting when one is taken: a burst of chip changes).
MAX_GROUP = 64
#: Outputs after which no further input joins the commit: a round's end (its checkpoint) or a fault.
GROUP_ENDS = (cmd.RoundClosed, cmd.RoundVoided, cmd.FaultRaised)
#: The panel's commands: carried out after the other devices' commands of their commit (``Controller._commit``).
PANEL_COMMANDS = (cmd.Display, cmd.SetLamps, cmd.PrivatePanel)
#: Commands that only ask a device to read, changing nothing on it or on the felt: sent before the commit that
#: holds them, which waits for their answer (``READ_WAIT_S``; docs/architecture.md, "Write-ahead"). An answer
#: applied with them is committed with them; a commit that fails leaves an answer no one applies.
READ_COMMANDS = (cmd.ReadSpots,)
#: Longest wait, in seconds, for the answer to a request to read before the commit holding the request is made
#: (``Controller.process``): an answer that comes within it is applied and committed with the request, in one
#: transaction (one commit on the path from a press to the cards, not two); one that comes later finds the request
#: committed alone, at most this much later than without the wait. The wait holds back nothing but the commit:
#: no command but a request to read goes out before it, and every input that comes meanwhile joins it.
READ_WAIT_S = 0.002
#: Inputs journaled as the service's own records, never given to the round machine (``_apply``).
SERVICE_INPUTS = (OperatorsChanged,)
#: Longest detail of a device fault kept (journal, panel, log): a driver may describe a link loss at length.
MAX_DETAIL = 200
#: Put on the event queue to stop the controller thread when it is taken (tests); ``Controller.stop`` stops it
#: after the input being processed (a second signal).
STOP = object()
#: Put on the event queue to stop once no round is in progress (the first SIGINT/SIGTERM/SIGHUP).
STOP_AFTER_ROUND = object()
#: Longest wait of the controller thread for an input, in seconds (``Controller._turn``).
IDLE_TURN = 0.5
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

    ``machine`` is the round machine rebuilt from the journal (``controller.journal.recovery``), ``missing`` the
    records the replay found missing at the journal's end (journaled first) and ``round_records`` the journal
    records of the round in progress. ``drivers`` maps ``shoe``/``sensors``/``panel`` to started ``Device``
    objects. ``on_round_closed`` is called with each closed or voided round's ``RoundRecord`` (built from the
    journaled records); ``on_record`` with every journal record as written and ``on_view`` with the machine's
    ``view()`` after each input and after every other commit with records (the day's close), so that a
    consumer may take an input's records together with the view after them (``ControlServer``: one wake-up of
    its loop per input); both on the controller thread: they must not block. ``rounds`` stops the loop
    after that many closed or voided rounds (None: until ``STOP``). ``stop_on_fault`` ends the loop when the
    machine faults. ``finish`` is called once the loop ends, before ``ServiceStopped`` is journaled, to let the
    service's own workers put their last inputs on ``events`` (the hole-card detector's alerts of the last
    rounds: ``controller.service.protection``); those are applied, anything else left on the queue is not (its
    count is logged). ``stop`` (any thread) stops the loop after the input being processed.
    ``start_entries`` are journaled before ``started``, in its commit (``significance.start_records``).
    ``held_at_stop`` is the fault that held the table when the first stop (``STOP_AFTER_ROUND``) came, None when
    none did: the run then ends with status 1 whatever a supervisor does with the fault before it stops.
    """

    def __init__(self, machine: Round | Recovered, journal: Journal, drivers: dict[str, Device], events: queue.Queue,
                 *, on_round_closed: Callable[[RoundRecord], None] | None = None, rounds: int | None = None,
                 stop_on_fault: bool = False, on_record: Callable[[dict[str, Any]], None] | None = None,
                 on_view: Callable[[dict[str, Any]], None] | None = None,
                 started: ServiceStarted | None = None, watch: Watch | None = None,
                 finish: Callable[[], None] | None = None,
                 start_entries: Sequence[tuple[str, str, dict[str, Any], int | None]] = (),
                 snapshots: MeterSnapshots | None = None) -> None:
        self.finish = finish
        self._start_entries = list(start_entries)  # committed with ``started`` (controller.service.significance)
        #: when the meters are snapshotted in the journal (``controller.service.meters_snapshot``)
        self.snapshots = snapshots or MeterSnapshots()
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
        #: the journal records of the round in progress, each as (its commit's records, its index there): built
        #: only when the round ends (``_round_closed``) unless a reader took them as they were committed
        self._round_records: list[tuple[Sequence[dict[str, Any]], int]] = [
            (recovered.round_records, index) for index in range(len(recovered.round_records))]
        self._records_round = recovered.round_records[-1].get("round") if recovered.round_records else None
        self._done = False
        self._stop_after_round = False
        #: the run ended before its round count because the journal store was found damaged (``_closed_for_good``)
        self.stopped_short = False
        self.held_at_stop: cmd.FaultRaised | None = None
        self._damage_found = False  # a ``JournalDamaged`` was applied in this run
        self.journal_error: OSError | None = None
        self._prompt_timer: threading.Timer | None = None
        self._pending: deque[Any] = deque()  # inputs taken from the queue and put back (``process``)
        self._stop_now = threading.Event()  # ``stop`` was called: no further input is taken

    def stop(self) -> None:
        """Stop after the input being processed (safe from any thread; a second SIGINT, SIGTERM or SIGHUP): the
        inputs still waiting are never taken. They were never journaled nor applied, so nothing of them was sent or
        shown (docs/architecture.md, "Crash recovery", write-ahead): it is as if they came after the stop, and a
        round left open is held at the next start (cause ``restart``), which asks the devices again for what was
        in flight. Their count is logged (``_finish``). ``STOP`` is put on the queue to wake a loop waiting for
        an input; a queue full to its reserve refuses it, and then the loop, busy, sees the stop at its next
        turn."""
        self._stop_now.set()
        try:
            self.events.put(STOP)
        except queue.Full:
            pass

    def run(self) -> int:
        """Process events until ``STOP``, ``STOP_AFTER_ROUND`` once no round is in progress, the round count or
        (with ``stop_on_fault``) a fault.

        Returns 0; 1 when the machine ended in its fault state, a round was left open, the first stop found the
        table held in a fault (``held_at_stop``: the round it held is cleared or voided before the loop ends, and
        the stop still comes out of a fault: docs/commands.md, ``crisscross run``'s exit status) or the journal
        could not be written (then nothing more is applied: an input that is not on disk is never acted on).
        """
        try:
            for output in self.missing:  # consequences of the last input that a crash kept off a JSON-lines journal
                log.warning("journaling %s of round %s, lost by the last stop", type(output).__name__,
                            getattr(output, "round_no", None))
            if self.missing:
                self._commit([self._entry(output) for output in self.missing], self.missing)
            self.missing = []
            self.process(self.started)
            while not self._done and not self._stop_now.is_set():
                try:
                    item = self._pending.popleft() if self._pending else self.events.get(timeout=self._turn())
                except queue.Empty:  # nothing to do: the loop is alive all the same
                    self.watch.alive()
                    self._close_day()
                    continue
                self._close_day()
                if item is STOP:
                    break
                if item is STOP_AFTER_ROUND:
                    self._stop_after_round = True
                    self.held_at_stop = self.held_at_stop or self.machine.fault
                    if not self.machine.round_open():  # a round held in fault is still in progress
                        break
                    log.warning("stopping after round %s", self.machine.round_no)
                    continue
                self.process(item, *self._arrived_with())
                if self._closed_for_good():
                    break
            self._finish()
            stopped = ("record", "ServiceStopped", {"state": self.machine.state}, self.machine.round_no)
            # the meters as the service stops, in the same commit, before it: ``ServiceStopped`` stays the last record
            began = time.monotonic()
            records = self.journal.commit([*self.snapshots.after([stopped], self.machine.meters, self.machine.round_no),
                                           stopped])
            self._hand_on(records, time.monotonic() - began)  # a display sees the stop, not a dropped link
            if self.on_view is not None:
                self.on_view(self.machine.view())
        except OSError as exc:
            # the caller says it in one line (run_service); the log keeps it for -v
            log.info("journal %s cannot be written (%s): stopping; nothing more is applied", self.journal.shown, exc)
            self.journal_error = exc
            return 1
        finally:
            self.watch.stopping()
            if self._prompt_timer is not None:
                self._prompt_timer.cancel()
        clean = self.machine.state in ("starting", *ROUND_OVER) and not self.stopped_short
        return 0 if clean and self.held_at_stop is None else 1

    def _turn(self) -> float:
        """The longest the loop waits for an input: the watchdog's tick, at most ``IDLE_TURN``. A signal (SIGTERM,
        SIGINT) that the kernel hands to another thread is acted on only once the main thread, which this is
        under ``crisscross run``, runs again (Python runs its handlers there): an endless wait would never stop."""
        tick = self.watch.tick()
        return IDLE_TURN if tick is None else min(tick, IDLE_TURN)

    def _close_day(self) -> None:
        """At a gaming day's close, journal the meters (``MeterSnapshots.day_closed``)."""
        closed = self.snapshots.day_closed(self.machine.meters, self.machine.round_no)
        if closed:
            self._commit(closed, [])
            if self.on_view is not None:  # a view after every commit (``on_view``)
                self.on_view(self.machine.view())

    def _closed_for_good(self) -> bool:
        """With a round count (``rounds``): True once this run's check found the journal store damaged
        (``JournalDamaged``: no round opens, ``Round.journal_whole``) and no round is in progress, so the count
        can never be reached: the run ends (exit status 1) rather than wait for rounds that cannot open. Without
        a count the service stays up, the table closed, until it is stopped."""
        if self.rounds is None or not self._damage_found or self.machine.journal_whole() or self.machine.round_open():
            return False
        log.error("journal %s is damaged: no round opens; %d of %d rounds played: stopping", self.journal.shown,
                  self.rounds_closed, self.rounds)
        self.stopped_short = True
        return True

    def _finish(self) -> None:
        """Call ``finish`` (when given) and apply the workers' inputs it left on the queue (the detector's ``Alert``
        and ``DetectorChecked``, the rating's ``SessionRated``; class docstring). Every other input left (put back,
        or on the queue) is dropped, never journaled: their count is logged, as a warning after ``stop``."""
        if self.finish is not None:
            self.finish()
        late = [*self._pending]
        self._pending.clear()
        while True:
            try:
                late.append(self.events.get_nowait())
            except queue.Empty:
                break
        late = [item for item in late if item is not STOP and item is not STOP_AFTER_ROUND]
        detector_inputs = [item for item in late if isinstance(item, (Alert, DetectorChecked, SessionRated))]
        if detector_inputs:
            self.process(*detector_inputs)
        if len(late) > len(detector_inputs):
            log.log(logging.WARNING if self._stop_now.is_set() else logging.INFO,
                    "stopping: %d input(s) not taken were dropped (never journaled nor applied)",
                    len(late) - len(detector_inputs))

    def _arrived_with(self) -> list[Any]:
        """The inputs already waiting (put back, then on the queue), up to ``MAX_GROUP - 1``: committed with the
        one just taken. A stop marker ends the group and stays first in line."""
        group: list[Any] = []
        while len(group) < MAX_GROUP - 1 and not self._stop_now.is_set():
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
        that arrived together share a commit), then carry out each output in order, the panel's commands after
        the other devices' (``_commit``): a command is sent only once the commit that holds it returned, but a
        request to read (``READ_COMMANDS``), sent before. When the outputs hold a request to read and nothing
        that needs the commit to go out (``_awaiting_answer``), the request goes at once and the commit waits
        for its answer at most ``READ_WAIT_S``: every input that comes meanwhile, the answer included, is applied
        and joins the commit (a press and the reading it asked for: one commit). An input whose outputs end a
        round or raise a fault ends the group (a checkpoint, or the end of the run, comes right after it); the
        inputs after it are put back.

        An exception from the machine is a defect: it is logged with the event, and the machine is moved to
        its fault state (cause ``internal``) so the round stops in a defined state. A device fault's detail
        longer than ``MAX_DETAIL`` characters is cut before it is journaled and applied. Raises ``OSError`` when
        the journal refuses the commit: then nothing of it is kept and nothing is sent.
        """
        self.watch.inputs_taken(events)
        entries: list[tuple[str, str, dict[str, Any], int | None]] = []
        if events and events[0] is self.started:
            entries, self._start_entries = self._start_entries, []
        outputs: list[Any] = []
        ended = False
        for index, event in enumerate(events):
            ended = self._apply(event, entries, outputs)
            if ended:
                if index + 1 < len(events):
                    self._pending.extendleft(reversed(events[index + 1:]))
                break
        # the answer to a request to read, if it comes within READ_WAIT_S, joins the request's commit
        answered = {e.request_id for e in events if isinstance(e, SpotsSnapshot)}
        sent = 0  # the requests to read among outputs[:sent] went out
        taken, deadline = len(events), None
        while not ended and taken < MAX_GROUP and self._awaiting_answer(outputs, answered):
            for output in outputs[sent:]:
                if isinstance(output, READ_COMMANDS):
                    self._carry_out(output)
            sent = len(outputs)
            deadline = deadline or time.monotonic() + READ_WAIT_S
            event = self._next_before(deadline)
            if event is None:
                break
            taken += 1
            if isinstance(event, SpotsSnapshot):
                answered.add(event.request_id)
            ended = self._apply(event, entries, outputs)
        entries.extend(self.snapshots.after(entries, self.machine.meters, self.machine.round_no))
        self._commit(entries, outputs, read_sent=sent)
        if self.on_view is not None:
            self.on_view(self.machine.view())
        self.watch.after_input(self.machine)

    def _apply(self, event: Any, entries: list[tuple[str, str, dict[str, Any], int | None]],
               outputs: list[Any]) -> bool:
        """Apply one input to the machine: its entry and those of its outputs appended to ``entries``, the outputs
        to ``outputs`` (one of ``SERVICE_INPUTS``: its record only). Returns True when they end a group
        (``GROUP_ENDS``). A device fault's detail longer than ``MAX_DETAIL`` characters is cut first; an exception
        from the machine moves it to its fault state (``process``)."""
        if isinstance(event, DeviceFault) and len(event.detail) > MAX_DETAIL:  # a fault's detail is bounded
            cut = len(event.detail) - MAX_DETAIL
            event = dataclasses.replace(event, detail=f"{event.detail[:MAX_DETAIL]}... ({cut} more characters)")
        if isinstance(event, SERVICE_INPUTS):  # the service's own record: nothing of the round's
            entries.append(("record", type(event).__name__, fields_of(event), self.machine.round_no))
            return False
        entries.append(("event", type(event).__name__, fields_of(event), self.machine.round_no))
        self._damage_found = self._damage_found or isinstance(event, JournalDamaged)
        try:
            produced = self.machine.handle(event)
        except Exception as exc:  # noqa: BLE001 - any defect must stop the round, not the service
            log.exception("round machine failed on %s in state %s", type(event).__name__, self.machine.state)
            produced = self.machine.defect(exc)
        entries.extend(self._entry(output) for output in produced)
        outputs.extend(produced)
        return any(isinstance(o, GROUP_ENDS) for o in produced)

    @staticmethod
    def _awaiting_answer(outputs: list[Any], answered: set[int]) -> bool:
        """True when the commit to come may wait for an answer (``READ_WAIT_S``): the last request to read among
        ``outputs`` has no answer among the inputs applied with them (``answered``: their ``request_id``), and
        nothing of them needs the commit to go out: every output is a record, a panel command or a request to
        read (a dispense, a shuffle, a round's end or a fault commits at once)."""
        last_read = None
        for output in outputs:
            if isinstance(output, READ_COMMANDS):
                last_read = output
            elif isinstance(output, GROUP_ENDS) or (isinstance(output, cmd.DEVICE_COMMANDS)
                                                      and not isinstance(output, PANEL_COMMANDS)):
                return False
        return last_read is not None and last_read.request_id not in answered

    def _next_before(self, deadline: float) -> Any:
        """The next input (put back first, then from the queue) if one comes before ``deadline`` (monotonic
        seconds), else None; a stop marker is put back and gives None."""
        if self._pending:
            item = self._pending.popleft()
        else:
            try:
                item = self.events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
        if item is STOP or item is STOP_AFTER_ROUND:
            self._pending.appendleft(item)
            return None
        return item

    def _entry(self, output: Any) -> tuple[str, str, dict[str, Any], int | None]:
        kind = "command" if isinstance(output, cmd.DEVICE_COMMANDS) else "record"
        return kind, type(output).__name__, fields_of(output), getattr(output, "round_no", self.machine.round_no)

    def _commit(self, entries: list[tuple[str, str, dict[str, Any], int | None]], outputs: list[Any], *,
                read_sent: int = 0) -> None:
        """Commit ``entries`` (inputs and the entries of ``outputs``) as one transaction, with a checkpoint of
        the machine after a round's close and at least every ``journal.checkpoint_every`` records, then carry
        the outputs out (a ``READ_COMMANDS`` one as the commit begins, unless it is among ``outputs[:read_sent]``,
        sent already). The commit's records are handed on (metrics, the round's records, ``on_record``) once the
        outputs are carried out, or before a round's end is, which reads them: a command waits for its commit
        only."""
        ends_round = any(isinstance(o, (cmd.RoundClosed, cmd.RoundVoided)) for o in outputs)
        due = self.journal.since_checkpoint + len(entries) >= self.journal.checkpoint_every
        for output in outputs[read_sent:]:
            if isinstance(output, READ_COMMANDS):
                self._carry_out(output)
        began = time.monotonic()
        records = self.journal.commit(entries, state=self.machine.checkpoint() if ends_round or due else None)
        seconds = time.monotonic() - began
        # a PrivatePanel sets the panel's whole text and lamps (controller/round/alerts.py): the panel commands before
        # it in the commit are journaled, not sent, so that the alert's lamp does not flicker on the panel
        last_private = max((i for i, o in enumerate(outputs) if isinstance(o, cmd.PrivatePanel)), default=-1)
        # the panel's commands go after the shoe's and the sensors' of the same commit (in their own order): a
        # person reads the panel, while the round waits on the shoe's and the sensors' answers (docs/performance.md)
        for_panel: list[Any] = []
        handed = False
        try:
            for index, output in enumerate(outputs):
                if isinstance(output, READ_COMMANDS):
                    continue  # sent as the commit began
                if isinstance(output, PANEL_COMMANDS):
                    if index >= last_private or isinstance(output, cmd.PrivatePanel):
                        for_panel.append(output)
                    continue
                if not handed and isinstance(output, (cmd.RoundClosed, cmd.RoundVoided)):
                    handed = True
                    self._hand_on(records, seconds)
                self._carry_out(output)
            for output in for_panel:
                self._carry_out(output)
        finally:
            if not handed:
                self._hand_on(records, seconds)

    def _hand_on(self, records: Committed, seconds: float) -> None:
        """The records of one commit (made durable in ``seconds``) to the metrics, the round's records and
        ``on_record``. A record is decoded (``Committed``) only when one of them reads it: with no reader, the
        round's records are decoded once the round ends (``_round_closed``), not on the path of each commit."""
        self.watch.committed(records, seconds)
        for index, (type_, round_no) in enumerate(records.heads()):
            if type_ == SIGNIFICANT_EVENT:
                log_event(records[index])
            if round_no is not None:
                if self._round_records and self._records_round != round_no:
                    self._round_records = []
                self._records_round = round_no
                self._round_records.append((records, index))
            if self.on_record is not None:
                self.on_record(records[index])

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
            elif isinstance(command, cmd.PrivatePanel):  # the supervisor's view of alerts (controller/round/alerts.py)
                driver.show(command.text)  # the text first: a lamp lit says the text is there to read
                driver.set_lamps(command.buttons)
        except LinkDown as exc:  # the driver posts its own link_lost once per loss; the round asks again on resume
            log.warning("%s: %s not sent: %s", command.device, type(command).__name__, exc)
        except Exception as exc:  # noqa: BLE001 - a driver that cannot take a command is a device fault
            log.error("%s: cannot send %s: %s", command.device, type(command).__name__, exc)
            self._post(DeviceFault(command.device, "link_lost", f"cannot send {type(command).__name__}: {exc}"))

    def _post(self, event: Any) -> None:
        """Queue an input of the service's own; a queue full to its reserve (controller/service/eventqueue.py) refuses
        it: logged, and the round goes on (a lost link is reported again by its driver, a prompt by the next
        press)."""
        try:
            self.events.put(event)
        except queue.Full:
            log.error("event queue full: %s dropped", type(event).__name__)

    def _round_closed(self, round_no: int) -> None:
        record = rounds_from_records([records[index] for records, index in self._round_records]).get(round_no)
        self._round_records = []
        self.rounds_closed += 1
        if record is not None and self.on_round_closed is not None:
            self.on_round_closed(record)
        if self._stop_after_round or (self.rounds is not None and self.rounds_closed >= self.rounds):
            self._done = True

