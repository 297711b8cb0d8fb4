"""The device simulators a run starts for its simulated devices (``--simulate``, a port ``simulator``).

Each simulator is imported only when a device is simulated, so that a production run imports none
(tests/test_sim_urls.py). The simulators themselves: ``drivers/*/simulator.py``, docs/protocol.md.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.settings.files import ConfigError
from controller.settings.text import path_shown

if TYPE_CHECKING:  # a production run imports no simulator (tests/test_sim_urls.py)
    from drivers.sim import PtySimulator


def simulator_classes() -> dict[str, Callable[..., PtySimulator]]:
    """The simulator of each driver kind; imported here, when a device is simulated, so that a production run
    imports no simulator."""
    from drivers.panel.simulator import PanelSimulator
    from drivers.reader.simulator import ReaderSimulator
    from drivers.sensors.simulator import SensorSimulator
    from drivers.shoe.simulator import ShoeSimulator

    return {"shoe": ShoeSimulator, "sensors": SensorSimulator, "panel": PanelSimulator, "reader": ReaderSimulator}


def check_sim_urls(devices: Mapping[str, Any], ports: Mapping[str, str], source: Path) -> None:
    """Refuse a ``sim://`` port (``ports``, from ``--port``, or else a device's ``port`` of table.yaml, ``source``)
    whose URL opening would refuse (``drivers.urls.protocol_sim.check_url``: its kind, or a parameter such as a
    device id that is not printable ASCII, docs/protocol.md), before any device is started: ``ConfigError``
    naming the port, the parameter and what is wrong. The simulators' module is imported only for such a URL."""
    for name, device in devices.items():
        port = ports.get(name, device.port)
        if not port.startswith("sim://"):
            continue
        from drivers.urls.protocol_sim import UrlRefused, check_url

        try:
            check_url(port)
        except UrlRefused as exc:
            where = f"--port {name}=" if name in ports else f"{path_shown(source)}: devices.{name}.port: "
            raise ConfigError(f"{where}{path_shown(port)}: {exc.problem}") from None


def is_simulated(port: str) -> bool:
    """True for a port that is a simulator: ``simulator`` or a ``sim://`` URL (docs/protocol.md)."""
    return port == "simulator" or port.startswith("sim://")


#: The start of a link folder's name (``link_folder``): ``crisscross-sims-<pid>-<n>``.
LINK_PREFIX = "crisscross-sims-"


def link_folder(temp: Path | None = None, prefix: str = LINK_PREFIX) -> Path:
    """A new folder for the simulators' port links, ``<prefix><pid>-<n>`` in ``temp`` (the system's
    temporary folder by default; mode 0700, made by ``mkdir``, which never follows a link, the first ``n`` free),
    after removing the ones this user's processes left that no longer run: a service stopped cleanly removes
    its own, one killed (SIGKILL, a power cut) cannot. A folder whose process number is taken again is left.
    Digits only, not ``mkdtemp``'s random letters: the ports' paths appear in a lost link's fault, on the panel
    and in recall, and a name like ``y_3h_nke`` reads as a card there. Raises ``OSError`` when the folder
    cannot be made."""
    temp = Path(tempfile.gettempdir() if temp is None else temp)
    for left in temp.glob(f"{prefix}*-*"):
        pid = left.name[len(prefix):].partition("-")[0]
        try:
            if not pid.isdigit() or left.is_symlink() or left.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:  # its service is gone
            shutil.rmtree(left, ignore_errors=True)
        except OSError:  # vanished meanwhile, or another user's process
            continue
    n = 0
    while True:
        folder = temp / f"{prefix}{os.getpid()}-{n}"
        try:
            folder.mkdir(mode=0o700)
            return folder
        except FileExistsError:
            n += 1


def start_simulators(names: list[str], drivers: dict[str, str], seed: int | None,
                     link_dir: Path | None = None,
                     layout: Mapping[tuple[int, str], int] | None = None) -> dict[str, PtySimulator]:
    """Start the simulator of each device in ``names`` (``drivers`` gives each device's driver kind).

    With ``link_dir`` each keeps a by-id style symlink there (``sim_port``), which follows it when it comes
    back under another pty name (fault injection ``replug``), as udev's /dev/serial/by-id does for hardware.
    ``layout`` (``{(seat, spot): amount}``, minor units: the felt as the journal last knew it) lies on the bet
    sensors' simulator as it starts: the chips of a table stay where they were while its service restarts.
    """
    sims: dict[str, PtySimulator] = {}
    classes = simulator_classes() if names else {}
    for name in names:
        kind = drivers[name]
        if kind == "shoe":
            sim = classes[kind](seed=seed, link_dir=link_dir)
        elif kind == "sensors":
            sim = classes[kind](link_dir=link_dir, chips=layout)
        else:
            sim = classes[kind](link_dir=link_dir)
        sim.start()
        sims[name] = sim
    return sims


def sim_port(sim: PtySimulator) -> str:
    """The port to open a simulator by: its by-id style symlink when it keeps one, else its pty."""
    link = sim.link_path
    return str(link) if link is not None else sim.port
