"""The parts of ``crisscross run`` above the service, built for it (``controller.service.assembly.ServiceParts``):
the control interface, the floor publisher and the scripted table of ``--simulate``.

The floor's MQTT client (paho-mqtt) is imported only when the floor is enabled, and the scripted table with
its players (NumPy) only under ``--simulate``: a production run imports neither (tests/test_sim_urls.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from controller.control.server import ControlServer
from controller.game.paytable import Jurisdiction
from controller.game.table import TableConfig
from controller.service.assembly import FloorPart, ServiceParts, TableOptions, TablePart
from controller.settings.files import ConfigError
from controller.settings.floor import FloorConfig


def floor_publisher(config: FloorConfig, table_id: str, journal_path: Path, key: bytes | None,
                    simulated: bool) -> FloorPart:
    """The floor publisher (``controller.floor.publisher.Publisher``) of table ``table_id``, reading the journal
    at ``journal_path`` (sealed with ``key``, or None); ``simulated`` play never publishes under the table's id."""
    from controller.floor.publisher import Publisher

    return Publisher(config, table_id, journal_path, key=key, simulated=simulated)


def scripted_table(sims: dict, config: TableConfig, jurisdiction: Jurisdiction, options: TableOptions,
                   on_failure: Callable[[], None]) -> TablePart:
    """The scripted players, dealer and supervisor (``controller.simulated.table.SimulatedTable``) on the
    started simulators ``sims``. Raises ``ConfigError`` when the analysis extra (NumPy) is missing."""
    try:
        from controller.simulated.table import SimulatedTable
    except ImportError as exc:
        raise ConfigError(f"--simulate needs the analysis extra ({exc.name} is missing): install the "
                          f"package with [analysis], e.g. pip install "
                          f"'crisscross_controller-VERSION-py3-none-any.whl[analysis]'") from None
    return SimulatedTable.for_table(sims, config, jurisdiction, seed=options.seed, rounds=options.rounds,
                                    mistakes=options.mistakes, on_failure=on_failure,
                                    payout_errors=options.payout_errors, players=options.players,
                                    manual=options.manual, pace=options.pace, sessions=options.sessions,
                                    post=options.post)


#: What ``crisscross run`` hands the service (tests that build a ``Service`` pass it too).
SERVICE_PARTS = ServiceParts(control=ControlServer, floor=floor_publisher, table=scripted_table)
