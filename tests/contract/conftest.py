"""Device contract suites: which device each test runs against (tests/contract/bench.py).

Without options every test runs against the simulator of its device twice: on an in-process pair (``pair``)
and on a pseudo-terminal (``pty``). ``--device KIND=PORT`` (repeatable; ``--device shoe=/dev/serial/by-id/...``)
runs that device's tests against the hardware on PORT instead (``hw``), with the default link timing of
docs/protocol.md; the other devices stay simulated. On hardware, tests marked

- ``person`` (a person presses buttons, turns the key, moves chips, opens the shoe's door or looks at the
  lamps and the display, asked at the terminal) run only with ``--person`` (run pytest with ``-s`` or as is:
  the prompts suspend output capture);
- ``destructive`` (the shoe shuffles and deals cards out of the shoe, up to a whole deck) run only with
  ``--destructive``;
- ``power_on`` (the device must be in its power-on state: nothing dealt, no shuffle) never run: a person
  checks them by hand after a power cycle (docs/protocol.md, "What did you last do").

A ``sim://`` URL as PORT (``--device shoe=sim://shoe``) runs the hardware path (pySerial, default timing) against
a simulator behind its URL handler, a new one for each test.

A skipped test says which option it waits for.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from drivers.pairsim import on_pair
from drivers.panel.simulator import PanelSimulator
from drivers.sensors.simulator import SensorSimulator
from drivers.shoe.simulator import ShoeSimulator
from drivers.timing import LinkTiming
from tests.contract.bench import Bench, PersonAtTheDevice, SimulatedHands

SIMULATORS = {"shoe": ShoeSimulator, "sensors": SensorSimulator, "panel": PanelSimulator}

MARKERS = {
    "person": "needs a person at the device on hardware (run with --person)",
    "destructive": "deals cards out of a real shoe (run with --destructive)",
    "power_on": "needs a device in its power-on state: simulators only",
}


def pytest_configure(config: pytest.Config) -> None:
    """The markers, and the ``--device`` options checked once, before any test: a bad one or a port that does
    not exist stops the run with one line (``pytest.UsageError``), not a failure in every test of its device."""
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    for kind, port in hardware(config).items():
        if "://" not in port and not Path(port).exists():
            raise pytest.UsageError(f"--device {kind}={port}: no such port (is the device plugged in? "
                                    "ls /dev/serial/by-id/)")


def hardware(config: pytest.Config) -> dict[str, str]:
    """``--device KIND=PORT`` values as ``{kind: port}``; ``pytest.UsageError`` for a bad one."""
    ports: dict[str, str] = {}
    for item in config.getoption("device") or []:
        kind, sep, port = item.partition("=")
        if not sep or kind not in SIMULATORS or not port:
            raise pytest.UsageError(f"--device {item!r}: expected KIND=PORT with KIND one of {sorted(SIMULATORS)}")
        ports[kind] = port
    return ports


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "bench" not in metafunc.fixturenames:
        return
    kinds = getattr(metafunc.module, "KINDS", tuple(SIMULATORS))
    ports = hardware(metafunc.config)
    params = [(kind, line) for kind in kinds for line in (["hw"] if kind in ports else ["pair", "pty"])]
    metafunc.parametrize("bench", params, indirect=True, ids=[f"{kind}-{line}" for kind, line in params])


@pytest.fixture
def bench(request: pytest.FixtureRequest) -> Iterator[Bench]:
    """The device under test (``Bench``), simulated or real; its drivers and simulator stopped after."""
    kind, line = request.param
    config = request.config
    if line == "hw":
        for name, option in (("person", "--person"), ("destructive", "--destructive")):
            if request.node.get_closest_marker(name) and not config.getoption(name):
                pytest.skip(f"{MARKERS[name]}: not run on {kind} hardware without {option}")
        if request.node.get_closest_marker("power_on"):
            pytest.skip(f"{MARKERS['power_on']}")
        port = hardware(config)[kind]
        bench = Bench(kind, line, port, None, PersonAtTheDevice(config), timing=LinkTiming())
        try:
            yield bench
        finally:
            bench.close()
            if port.startswith("sim://"):  # the hardware path tried on a simulator behind its URL
                from drivers.urls.protocol_sim import stop_all
                stop_all()
        return
    sim = on_pair(SIMULATORS[kind]) if line == "pair" else SIMULATORS[kind]()
    sim.start()
    bench = Bench(kind, line, sim.port, sim.open_port if line == "pair" else None, SimulatedHands(sim))
    try:
        yield bench
    finally:
        bench.close()
        sim.stop()
