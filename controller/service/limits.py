"""The open-file budget of the service's listening doors (docs/control.md, "Bounds").

Every door the service listens on has a bound on its connections, set here: the control interface
(``CONTROL_CONNECTIONS``, plus the sockets asyncio accepts in one batch before they are shed) and the metrics
port (``METRICS_CONNECTIONS``); the rig's simulator console has its own (``drivers.simconsole.MAX_CLIENTS``).
What the journal and the device links need is reserved beside them
(``RESERVED``): the journal's store, its write-ahead log and shared memory, a check's own reader, the anchor and
the lock, the three serial ports (or, simulated, each pseudo-terminal's two ends), the floor's MQTT socket, the
standard streams, the event loops' selectors and wake-up pipes. ``check_descriptors`` refuses a start whose
open-file limit cannot hold all of it, so that no number of clients can take the descriptors the journal and
the devices need ("[Errno 24] Too many open files" once stopped the service from its journal). The unit
(config/systemd/crisscross.service) sets ``LimitNOFILE`` to ``LIMIT_NOFILE``.
"""

from __future__ import annotations

import resource

#: Most connections the control interface holds at once (``controller.control.server``, docs/control.md "Bounds").
CONTROL_CONNECTIONS = 256
#: Connections waiting to be accepted by the control interface; asyncio accepts up to this many at one readiness
#: of its socket and their protocols exist two loop ticks later, so up to three batches are open for a moment
#: beyond ``CONTROL_CONNECTIONS`` before they are shed.
CONTROL_BACKLOG = 128
#: Most connections the metrics port serves at once (``controller.service.metrics``); as many more may be closing
#: (shed).
METRICS_CONNECTIONS = 8
#: Descriptors kept for the journal, the device links, the floor and the process itself (see module docstring;
#: about 40 are open in a simulated run with every door open and no client: the rest is margin).
RESERVED = 128
#: The service's listening doors and the most sockets each may hold at once, accepted batches included.
DOORS: dict[str, int] = {"control interface": CONTROL_CONNECTIONS + 3 * CONTROL_BACKLOG,
                         "metrics": 2 * METRICS_CONNECTIONS + 1}
#: The unit's ``LimitNOFILE``: systemd's default soft limit, written out so that a changed default cannot lower
#: it; above ``needed()`` (785 with the bounds above).
LIMIT_NOFILE = 1024


def needed() -> int:
    """Descriptors the service needs with every door of ``DOORS`` full, and ``RESERVED``."""
    return RESERVED + sum(DOORS.values())


def check_descriptors(door: str) -> None:
    """Raise ``OSError`` naming ``door`` (the one starting) when the process's open-file limit (``RLIMIT_NOFILE``,
    soft) cannot hold ``needed()``; a soft limit below it is first raised as far as the hard one allows (an
    unprivileged process may)."""
    need = needed()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return
    if hard == resource.RLIM_INFINITY or hard >= need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
        return
    raise OSError(f"{door}: the open-file limit is {soft} and the service needs {need} (its doors' bounds and "
                  f"{RESERVED} for the journal and the device links); raise it (LimitNOFILE={LIMIT_NOFILE} in the "
                  f"unit, `ulimit -n {LIMIT_NOFILE}`)")
