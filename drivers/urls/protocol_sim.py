"""pySerial URL handler ``sim://``: the device simulators behind the ordinary open call (design.md "Layers of a
link": simulators reachable by a pySerial URL from any process).

``serial.serial_for_url("sim://shoe?seed=7")`` starts (once per process and URL) the shoe simulator on a
pseudo-terminal and opens that pty, so a driver given the URL opens a simulator exactly as it opens
``/dev/ttyUSB0``; opening the same URL again (a reconnection) reaches the same simulator and its state, also
after it came back on another pty (fault injection ``replug``). ``drivers.link`` registers the package, so
the module, and with it the simulators, is imported only when a ``sim://`` URL is opened.

URL: ``sim://<kind>[?seed=<int>][&id=<device id>]`` with ``kind`` one of ``shoe``, ``sensors``, ``panel``, ``reader``;
``seed`` (shoe only) makes its shuffles reproducible, ``id`` sets the device id of IDENT (``DEVICE_ID``: 1 to 255
printable ASCII characters; one not ASCII, or with control characters, is refused, as a host refuses it in IDENT,
``drivers.framing.decode_ident``). A bad URL raises ``UrlRefused``, a ``serial.SerialException`` naming what is
wrong (a port that cannot be opened); ``check_url`` refuses it so before anything is started.

The simulators run non-daemon threads: a process that opened ``sim://`` URLs calls ``stop_all()`` before it
ends. The table of running simulators is shared by the threads that open URLs, under a lock.
"""

from __future__ import annotations

import re
import threading
import urllib.parse
from typing import Any

import serial

from drivers.sim import PtySimulator

_lock = threading.Lock()
_running: dict[str, PtySimulator] = {}  # guarded by _lock: canonical URL -> started simulator


#: The characters of a device id (docs/protocol.md, "Common messages": IDENT's device id is length-prefixed
#: printable ASCII, no control characters; ``drivers.framing.pack_text`` and ``decode_ident``): space to ``~``,
#: 1 to 255 of them.
DEVICE_ID = re.compile(r"[ -~]{1,255}")
_KINDS = ("panel", "sensors", "shoe")


class UrlRefused(serial.SerialException):
    """A ``sim://`` URL that names no simulator or gives a parameter it does not take; ``problem`` says what is
    wrong (the kind, or the parameter and its value) without the URL, which the message begins with."""

    def __init__(self, url: str, problem: str) -> None:
        super().__init__(f"{url}: {problem}")
        self.problem = problem


def _make(kind: str, options: dict[str, Any]) -> PtySimulator:
    from drivers.panel.simulator import PanelSimulator
    from drivers.sensors.simulator import SensorSimulator
    from drivers.shoe.simulator import ShoeSimulator

    classes: dict[str, Any] = {"shoe": ShoeSimulator, "sensors": SensorSimulator, "panel": PanelSimulator}
    return classes[kind](**options)


def _options(kind: str, params: dict[str, str], url: str) -> dict[str, Any]:
    """The simulator's keyword arguments from the URL's parameters; ``UrlRefused`` naming what is wrong."""
    if kind not in _KINDS:
        raise UrlRefused(url, f"no simulator of kind {kind!r}; expected one of {list(_KINDS)}")
    allowed = {"seed", "id"} if kind == "shoe" else {"id"}
    unknown = set(params) - allowed
    if unknown:
        raise UrlRefused(url, f"unknown parameter(s) {', '.join(map(_spelled, sorted(unknown)))} for {kind}; "
                              f"allowed: {', '.join(sorted(allowed))}")
    options: dict[str, Any] = {}
    if "id" in params:
        device_id = params["id"]
        if not DEVICE_ID.fullmatch(device_id):
            what = ("is not ASCII" if not device_id.isascii() else "has control characters"
                    if not device_id.isprintable() else f"is {len(device_id)} characters")
            raise UrlRefused(url, f"parameter id {_spelled(device_id)} {what}: a device id is 1 to 255 printable "
                                  f"ASCII characters (space to ~), as IDENT carries it (a host refuses any other)")
        options["device_id"] = device_id
    if "seed" in params:
        try:
            options["seed"] = int(params["seed"])
        except ValueError:
            raise UrlRefused(url, f"parameter seed {_spelled(params['seed'])} is not an integer") from None
    return options


def _spelled(value: str) -> str:
    """A parameter's value as a URL spells it (percent-encoded beyond printable ASCII, a byte that was not UTF-8
    as its ``%XX``), quoted: no control character of it reaches a terminal."""
    return "'" + urllib.parse.quote(value, safe=" !\"#$'()*+,-./:;<=>?@[\\]^_`{|}~", errors="surrogateescape") + "'"


def _parse(url: str) -> tuple[str, dict[str, Any], str]:
    """The kind, the simulator's options and the canonical spelling of ``url``; ``UrlRefused`` naming what is
    wrong. Starts nothing."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() != "sim" or parts.path not in ("", "/") or parts.fragment:
        raise UrlRefused(url, "expected sim://<kind>[?seed=N][&id=ID]")
    try:  # a byte that is not UTF-8 kept as itself (a surrogate), so that it is refused and named, not replaced
        query = urllib.parse.parse_qs(parts.query, strict_parsing=bool(parts.query), keep_blank_values=False,
                                      errors="surrogateescape")
    except ValueError as exc:
        raise UrlRefused(url, f"bad parameters: {exc}") from None
    if any(len(values) > 1 for values in query.values()):
        raise UrlRefused(url, "a parameter is given twice")
    params = {name: values[0] for name, values in query.items()}
    kind = parts.netloc.lower()
    options = _options(kind, params, url)
    canonical = f"sim://{kind}" + ("?" + urllib.parse.urlencode(sorted(params.items())) if params else "")
    return kind, options, canonical


def check_url(url: str) -> None:
    """Refuse a ``sim://`` URL as opening it would, before anything is started: ``UrlRefused`` (a
    ``serial.SerialException``) whose ``problem`` names the kind or the parameter and what is wrong with it (a
    device id not 1 to 255 printable ASCII characters, a seed not an integer, an unknown parameter)."""
    _parse(url)


def simulator(url: str) -> PtySimulator:
    """The simulator behind ``url``, started now if it is not running yet. ``serial.SerialException`` for a
    bad URL."""
    kind, options, canonical = _parse(url)
    with _lock:
        sim = _running.get(canonical)
        if sim is None:
            sim = _make(kind, options)
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
