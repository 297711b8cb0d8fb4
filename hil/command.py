"""The service as a process of its own: the command line of ``crisscross run`` pointed at the simulators.

Used by every runner of the rig (``hil.rig``, ``hil.scenario_run``, ``hil.crash``); docs/rig.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from controller.service.simulators import sim_port
from hil.tether import tethered


def service_command(config: Path, journal: Path, sims: dict, *extra: str) -> list[str]:
    """The command line of ``crisscross run`` in a process of its own, quiet, on ``journal``, with each device
    pointed at its simulator's port (by its by-id style link when it keeps one: it follows a replugged device),
    tied to the calling process (``hil.tether``): the service ends when the rig dies, even by SIGKILL."""
    command = [sys.executable, "-m", "controller", "run", "--config", str(config), "--journal", str(journal),
               "--quiet", *extra]
    for name, sim in sims.items():
        command += ["--port", f"{name}={sim_port(sim)}"]
    return tethered(command)
