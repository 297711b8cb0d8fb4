"""pySerial URL handler ``sim://``: the device simulators behind the ordinary open call (design.md "Layers of a
link": simulators reachable by a pySerial URL from any process).

``serial.serial_for_url("sim://shoe?seed=7")`` starts (once per process and URL) the shoe simulator on a
pseudo-terminal and opens that pty, so a driver given the URL opens a simulator exactly as it opens
``/dev/ttyUSB0``; opening the same URL again (a reconnection) reaches the same simulator and its state, also
after it came back on another pty (fault injection ``replug``). ``drivers.link`` registers the package, so
the module, and with it the simulators, is imported only when a ``sim://`` URL is opened.

URL: ``sim://<kind>[?seed=<int>][&id=<device id>]`` with ``kind`` one of ``shoe``, ``sensors``, ``panel``, ``reader``;
``seed`` (shoe only) makes its shuffles reproducible, ``id`` sets the device id of IDENT (printable: one with
control characters is refused, as a host refuses it in IDENT, ``drivers.framing.decode_ident``). A bad URL
raises ``serial.SerialException`` naming what is wrong (a port that cannot be opened).

The simulators run non-daemon threads: a process that opened ``sim://`` URLs calls ``stop_all()`` before it
ends. The table of running simulators is shared by the threads that open URLs, under a lock.
"""

from __future__ import annotations

import threading
import urllib.parse
from typing import Any

import serial

from drivers.sim import PtySimulator

_lock = threading.Lock()
_running: dict[str, PtySimulator] = {}  # guarded by _lock: canonical URL -> started simulator


def _make(kind: str, params: dict[str, str], url: str) -> PtySimulator:
    from drivers.panel.simulator import PanelSimulator
    from drivers.sensors.simulator import SensorSimulator
    from drivers.shoe.simulator import ShoeSimulator

    classes: dict[str, Any] = {"shoe": ShoeSimulator, "sensors": SensorSimulator, "panel": PanelSimulator}
    if kind not in classes:
        raise serial.SerialException(f"{url}: no simulator of kind {kind!r}; expected one of {sorted(classes)}")
    allowed = {"seed", "id"} if kind == "shoe" else {"id"}
    unknown = set(params) - allowed
    if unknown:
        raise serial.SerialException(f"{url}: unknown parameter(s) {', '.join(sorted(unknown))} for {kind}; "
                                     f"allowed: {', '.join(sorted(allowed))}")
    options: dict[str, Any] = {}
    if "id" in params:
        if not params["id"].isprintable():
            raise serial.SerialException(f"{url}: id has control characters (a host refuses such an IDENT)")
        options["device_id"] = params["id"]
    if "seed" in params:
        try:
            options["seed"] = int(params["seed"])
        except ValueError:
            raise serial.SerialException(f"{url}: seed {params['seed']!r} is not an integer") from None
    return classes[kind](**options)


def _parse(url: str) -> tuple[str, dict[str, str], str]:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() != "sim" or parts.path not in ("", "/") or parts.fragment:
        raise serial.SerialException(f"{url}: expected sim://<kind>[?seed=N][&id=ID]")
    try:
        query = urllib.parse.parse_qs(parts.query, strict_parsing=bool(parts.query), keep_blank_values=False)
    except ValueError as exc:
        raise serial.SerialException(f"{url}: bad parameters: {exc}") from None
    if any(len(values) > 1 for values in query.values()):
        raise serial.SerialException(f"{url}: a parameter is given twice")
    params = {name: values[0] for name, values in query.items()}
    kind = parts.netloc.lower()
    canonical = f"sim://{kind}" + ("?" + urllib.parse.urlencode(sorted(params.items())) if params else "")
    return kind, params, canonical


def simulator(url: str) -> PtySimulator:
    """The simulator behind ``url``, started now if it is not running yet. ``serial.SerialException`` for a
    bad URL."""
    kind, params, canonical = _parse(url)
    with _lock:
        sim = _running.get(canonical)
        if sim is None:
            sim = _make(kind, params, url)
            sim.start()
            _running[canonical] = sim
        return sim


def serial_class_for_url(url: str) -> tuple[str, type[serial.Serial]]:
    """pySerial's hook: the pty of the simulator behind ``url`` and the native port class that opens it."""
    return simulator(url).port, serial.Serial


def stop_all() -> None:
    """Stop every simulator started through a ``sim://`` URL in this process (their threads end)."""
    with _lock:
        sims = list(_running.values())
        _running.clear()
    for sim in sims:
        sim.stop()
