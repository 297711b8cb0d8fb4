"""What the controller thread tells the world about itself: systemd's notifications (``controller.service.notify``) and
the Prometheus metrics (``controller.service.metrics``).

``Watch`` is owned by the controller thread (``controller.service.loop.Controller`` calls it at each step of its
loop); it never touches the round machine's state beyond reading it, and never blocks.

- ``READY=1`` once every device answered its handshake and the shoe was asked what it last did (the journal
  was recovered before the loop began), with the start-up time as a metric, and ``on_ready`` called (the
  service starts the check of the whole journal store then: ``controller.journal.check``);
- ``STATUS=`` with the table, the round and its state, whenever they change;
- ``WATCHDOG=1`` as the loop turns (``tick`` says how long the loop may wait for an input): a thread stuck on
  one input stops the pings and systemd restarts the service;
- ``STOPPING=1`` when the loop ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from controller.round.inputs import OperatorAction
from controller.service.metrics import ServiceMetrics
from controller.service.notify import Notifier
from drivers import events as ev

#: Inputs that are a person's press: the time from taking one off the queue to each device command it causes
#: is measured (``ServiceMetrics.press_seconds``).
PRESSES = (ev.ButtonPressed, OperatorAction)


class Watch:
    """Notifications and metrics of one controller loop.

    ``table_id`` names the table in ``STATUS``; ``notifier`` and ``metrics`` may each be None (nothing sent,
    nothing counted). ``started_at`` is the ``time.monotonic()`` of the process's start, for the start-up time.
    ``on_ready`` (None: nothing) is called once, on the controller thread, when the service is ready; it must
    not block.
    """

    def __init__(self, table_id: str = "", notifier: Notifier | None = None, metrics: ServiceMetrics | None = None,
                 started_at: float | None = None, on_ready: Callable[[], None] | None = None) -> None:
        self.table_id = table_id
        self.on_ready = on_ready
        self.notifier = notifier
        self.metrics = metrics
        self.started_at = time.monotonic() if started_at is None else started_at
        self.ready = False
        self._status: str | None = None
        self._press_at: float | None = None

    def tick(self) -> float | None:
        """The longest the loop may wait for an input before it pings the watchdog (None: wait for ever)."""
        interval = self.notifier.watchdog_interval if self.notifier else None
        return interval / 4 if interval else None

    def alive(self) -> None:
        """The loop turned: ping the watchdog."""
        if self.notifier:
            self.notifier.watchdog()

    def inputs_taken(self, events: tuple[Any, ...]) -> None:
        """Inputs were taken off the queue (one, or several committed together): a press among them starts the
        press-to-command clock."""
        self._press_at = time.monotonic() if any(isinstance(e, PRESSES) for e in events) else None

    def command_sent(self) -> None:
        """A device command left for its driver."""
        if self.metrics and self._press_at is not None:
            self.metrics.press_seconds.observe(time.monotonic() - self._press_at)

    def committed(self, records: list[dict[str, Any]], seconds: float) -> None:
        """One journal commit (``records``, an input and its outputs, or inputs that arrived together) was made
        durable in ``seconds``."""
        if self.metrics:
            self.metrics.commit_seconds.observe(seconds)
            for record in records:
                self.metrics.record(record)

    def after_input(self, machine: Any) -> None:
        """After each input: ``READY=1`` (and ``on_ready``) the first time every device answered and the shoe was
        reconciled;
        ``STATUS=`` when the round or its state changed."""
        self.alive()
        if not self.ready and machine.self_checked and machine.reconciled:
            self.ready = True
            if self.metrics:
                self.metrics.startup_seconds.set(time.monotonic() - self.started_at)
            if self.notifier:
                self.notifier.send(READY="1", STATUS=self._text(machine))
                self._status = self._text(machine)
            if self.on_ready is not None:
                self.on_ready()
        status = self._text(machine)
        if self.ready and status != self._status and self.notifier:
            self.notifier.send(STATUS=status)
            self._status = status

    def stopping(self) -> None:
        """The loop ends."""
        if self.notifier:
            self.notifier.send(STOPPING="1", STATUS=f"table {self.table_id}: stopping")

    def _text(self, machine: Any) -> str:
        round_no = machine.round_no
        where = f"round {round_no} {machine.state}" if round_no is not None else machine.state
        return f"table {self.table_id}: {where}"
