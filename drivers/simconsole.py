"""Driving the simulators by hand or from another process (docs/rig.md, "The console and the control socket").

``execute(sims, line)`` carries out one console command on the running simulators (chips on the sensors,
buttons and the key on the panel, faults injected into any of them, the shoe's deck) and returns what to
print. ``SimControlServer`` serves the same commands on a Unix socket (mode 0600: it can inject faults), one
JSON answer line per command line, so that a console in another terminal, or a test in another process,
drives simulators that run in the rig. ``console(send)`` is the interactive loop (``crisscross sim console
--socket PATH``, or ``python -m hil.rig --scenario FILE --console`` in the rig's own process).

Protocol of the socket: the client writes a command line (UTF-8, at most ``MAX_LINE`` bytes, ``\\n`` ended);
the server answers one line, ``{"ok": true, "text": "..."}`` or ``{"ok": false, "error": "..."}``, and reads
the next command. At most ``MAX_CLIENTS`` connections at once; one more is answered with an error and closed.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import socketserver
import stat
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from drivers.sim import PtySimulator

#: Longest command line, bytes.
MAX_LINE = 4096
#: Connections served at once; one more is answered with an error and closed by the serving thread itself
#: (no thread is started for it).
MAX_CLIENTS = 8
#: Seconds a console may stay silent before its connection is closed (a held connection keeps a place).
IDLE_SECONDS = 600.0

HELP = """commands:
  show                                   the panel, the chips on the sensors, the shoe, faults so far
  place SEAT SPOT AMOUNT [SPOT AMOUNT...] put chips on a seat's spots (minor units; 0 removes them)
  remove SEAT [SPOT...]                  take chips off a seat (every spot, or those named)
  press BUTTON                           press a panel button (open_betting, no_more_bets, confirm, reveal,
                                         exclude, acknowledge, clear_fault, void_round)
  key on|off [KEY-ID]                    turn the supervisor key
  inject DEVICE KIND [NAME=VALUE...]     inject a fault now: count=N seconds=S after=S pause=S rate=R at=BYTE;
                                         on=MESSAGE [nth=N] [times=N] arms it for that frame (on=DISPENSE nth=3)
  clear DEVICE                           cancel the faults armed on a device, end its silence
  stack CARD...                          the shoe deals these cards first after its next shuffle
  remove-cards [CARD...]                 keep these cards out of the shoe's shuffles (none: put them back)
  power-cycle                            the shoe loses its transaction record and its shuffle
  close-door                             shut the shoe's door (opened by the fault door_open): DOOR_CLOSED
  help                                   this text"""


class CommandError(ValueError):
    """A command that cannot be carried out: the message says why."""


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise CommandError(f"{text!r} is not a number") from None


def _integer(text: str, what: str) -> int:
    value = _number(text)
    if not isinstance(value, int):
        raise CommandError(f"{what} must be an integer, got {text!r}")
    return value


def _sim(sims: Mapping[str, PtySimulator], name: str) -> Any:
    if name not in sims:
        raise CommandError(f"no simulated device {name!r} here; simulated: {', '.join(sorted(sims)) or 'none'}")
    return sims[name]


def show(sims: Mapping[str, PtySimulator]) -> str:
    """What a person at the table sees of the simulators: panel, chips, shoe, faults so far."""
    lines = []
    panel = sims.get("panel")
    if panel is not None:
        lines.append(f"panel: {panel.display!r}; lamps: {' '.join(sorted(panel.lamps)) or 'none'}")
    sensors = sims.get("sensors")
    if sensors is not None:
        chips = sensors.amounts()
        lines.append("chips: " + (", ".join(f"seat {seat} {spot} {amount}" for (seat, spot), amount
                                            in sorted(chips.items())) or "none"))
    shoe = sims.get("shoe")
    if shoe is not None:
        door = "; door open" if shoe.door_open else ""
        lines.append(f"shoe: {shoe.dealt} stacks dealt, {shoe.remaining} cards left{door}")
    for name, sim in sorted(sims.items()):
        counts = {kind: n for kind, n in sim.fault_counts.items() if n}
        if counts:
            lines.append(f"{name} faults: " + ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())))
    return "\n".join(lines)


def execute(sims: Mapping[str, PtySimulator], line: str) -> str:
    """Carry out one command (``HELP``) on ``sims`` (device name -> running simulator); return the text to
    print. ``CommandError`` (a ``ValueError``) for a bad command, and the simulators' own ``ValueError`` for a
    bad seat, spot, button, card or fault; ``OSError`` when the device is unplugged."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if not words:
        return ""
    verb, args = words[0], words[1:]
    if verb == "help":
        return HELP
    if verb == "show":
        return show(sims)
    if verb == "place":
        if len(args) < 3 or len(args) % 2 == 0:
            raise CommandError("place SEAT SPOT AMOUNT [SPOT AMOUNT...]")
        seat = _integer(args[0], "SEAT")
        for spot, amount in zip(args[1::2], args[2::2]):
            _sim(sims, "sensors").place(seat, spot, _integer(amount, "AMOUNT"))
        return f"seat {seat}: " + ", ".join(f"{s} {a}" for s, a in zip(args[1::2], args[2::2]))
    if verb == "remove":
        if not args:
            raise CommandError("remove SEAT [SPOT...]")
        seat = _integer(args[0], "SEAT")
        sensors = _sim(sims, "sensors")
        if args[1:]:
            for spot in args[1:]:
                sensors.place(seat, spot, 0)
        else:
            sensors.clear(seat)
        return f"seat {seat}: chips removed"
    if verb == "press":
        if len(args) != 1:
            raise CommandError("press BUTTON")
        _sim(sims, "panel").press(args[0])
        return f"pressed {args[0]}"
    if verb == "key":
        if not args or args[0] not in ("on", "off") or len(args) > 2:
            raise CommandError("key on|off [KEY-ID]")
        _sim(sims, "panel").turn_key(args[0] == "on", *args[1:])
        return f"key {args[0]}"
    if verb == "inject":
        return _inject(sims, args)
    if verb == "clear":
        if len(args) != 1:
            raise CommandError("clear DEVICE")
        _sim(sims, args[0]).clear_faults()
        return f"{args[0]}: faults cleared"
    if verb == "stack":
        _sim(sims, "shoe").stack_deck(args)
        return f"the next shuffle deals {' '.join(args)} first"
    if verb == "remove-cards":
        _sim(sims, "shoe").remove_cards(args)
        return f"cards out of the deck: {' '.join(args) or 'none'}"
    if verb == "power-cycle":
        _sim(sims, "shoe").power_cycle()
        return "shoe power-cycled"
    if verb == "close-door":
        if args:
            raise CommandError("close-door takes no argument")
        return "shoe door closed" if _sim(sims, "shoe").close_door() else "the shoe's door was not open"
    raise CommandError(f"unknown command {verb!r}; try help")


def _inject(sims: Mapping[str, PtySimulator], args: list[str]) -> str:
    if len(args) < 2:
        raise CommandError("inject DEVICE KIND [NAME=VALUE...]")
    sim = _sim(sims, args[0])
    kind = args[1]
    options: dict[str, Any] = {}
    for word in args[2:]:
        name, sep, value = word.partition("=")
        if not sep or name not in ("count", "seconds", "after", "pause", "rate", "at", "on", "nth", "times"):
            raise CommandError(f"{word!r}: expected NAME=VALUE with NAME one of count, seconds, after, pause, rate, "
                               f"at, on, nth, times")
        options[name] = value if name == "on" else _number(value)
    count = options.pop("count", 1)
    message = options.pop("on", None)
    if message is None:
        if "nth" in options or "times" in options:
            raise CommandError("nth and times go with on=MESSAGE")
        sim.inject(kind, count, **options)
        return f"{args[0]}: {kind} injected"
    nth, times = options.pop("nth", 1), options.pop("times", 1)
    sim.inject_on(message, kind, count, nth=nth, times=times, **options)
    return f"{args[0]}: {kind} armed for {message} number {nth} from now"


def answer(sims: Mapping[str, PtySimulator], line: str) -> dict[str, Any]:
    """The socket's answer to one command line: ``{"ok": True, "text": ...}`` or ``{"ok": False, "error": ...}``."""
    try:
        return {"ok": True, "text": execute(sims, line)}
    except (ValueError, OSError) as exc:  # a bad command or an unplugged device: said to the client
        return {"ok": False, "error": str(exc)}


class _Handler(socketserver.StreamRequestHandler):
    server: "SimControlServer"

    def handle(self) -> None:
        self.connection.settimeout(self.server.idle_seconds)
        try:
            while True:
                try:
                    raw = self.rfile.readline(MAX_LINE + 1)
                except TimeoutError:
                    self.wfile.write(json.dumps({"ok": False, "error": f"silent for {self.server.idle_seconds:g} s; "
                                                 f"connection closed"}).encode() + b"\n")
                    return
                if not raw:
                    return
                if len(raw) > MAX_LINE:
                    self.wfile.write(json.dumps({"ok": False, "error": f"line longer than {MAX_LINE} bytes"})
                                     .encode() + b"\n")
                    return
                reply = answer(self.server.sims, raw.decode("utf-8", errors="replace"))
                self.wfile.write(json.dumps(reply).encode() + b"\n")
        except OSError:
            return  # the console went away


class SimControlServer(socketserver.ThreadingUnixStreamServer):
    """The control socket at ``path`` (created mode 0600, removed by ``close``) for ``sims``; ``start()``
    serves it on a thread. At most ``MAX_CLIENTS`` connections at once, each closed after ``idle_seconds`` of
    silence (``IDLE_SECONDS``). ``OSError`` when the path is taken."""

    daemon_threads = True

    def __init__(self, sims: Mapping[str, PtySimulator], path: Path, idle_seconds: float = IDLE_SECONDS) -> None:
        self.sims = sims
        self.path = Path(path)
        self.idle_seconds = idle_seconds
        self.slots = threading.BoundedSemaphore(MAX_CLIENTS)
        old = os.umask(0o177)
        try:
            super().__init__(str(self.path), _Handler)
        finally:
            os.umask(old)
        self._thread = threading.Thread(target=self.serve_forever, name="sim-control", daemon=True)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection when a place is free; otherwise an error line and the close, here."""
        if not self.slots.acquire(blocking=False):
            try:
                request.setblocking(False)
                request.send(b'{"ok": false, "error": "too many consoles connected"}\n')
            except OSError:
                pass  # the client is gone or not reading: it is closed either way
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            self.shutdown_request(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Serve the connection (``socketserver.ThreadingMixIn``'s steps), then give its place back BEFORE the
        close the console sees: a console told it was closed (silent too long) that connects again at once finds
        its place free."""
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.slots.release()
            self.shutdown_request(request)

    def start(self) -> "SimControlServer":
        """Serve on a thread; returns self."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and remove the socket file."""
        if self._thread.is_alive():
            self.shutdown()
        self.server_close()
        self.path.unlink(missing_ok=True)


class SocketClient:
    """A console's connection to a ``SimControlServer``: ``send(line)`` returns the text, or raises
    ``CommandError`` with the server's error. ``OSError`` when the socket cannot be reached."""

    def __init__(self, path: Path) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.connect(str(path))
        except BaseException:
            self._sock.close()
            raise
        self._file = self._sock.makefile("rwb")

    def send(self, line: str) -> str:
        """Send one command; its answer's text. ``CommandError`` for a refused command, ``OSError`` when the
        connection is gone."""
        self._file.write(line.replace("\n", " ").encode() + b"\n")
        self._file.flush()
        raw = self._file.readline()
        if not raw:
            raise OSError("the control socket closed the connection")
        reply = json.loads(raw)
        if not reply["ok"]:
            raise CommandError(reply["error"])
        return reply["text"]

    def close(self) -> None:
        """Close the connection."""
        self._file.close()
        self._sock.close()


def console(send: Callable[[str], str], read: Callable[[str], str] = input, write: Callable[[str], None] = print) -> int:
    """The interactive loop: read a command (prompt ``sim> ``), carry it out with ``send``, print the answer or
    the error, until ``quit`` or end of input. Returns 0, or 1 when the connection was lost."""
    write("simulator console: help lists the commands, quit ends")
    while True:
        try:
            line = read("sim> ")
        except EOFError:
            return 0
        if line.strip() in ("quit", "exit"):
            return 0
        try:
            text = send(line)
        except ValueError as exc:
            write(f"error: {exc}")
            continue
        except OSError as exc:
            write(f"connection lost: {exc}")
            return 1
        if text:
            write(text)


#: What is at a path, by its ``stat.S_IS*`` test, when it is not a socket.
_NOT_SOCKETS = ((stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a regular file"), (stat.S_ISFIFO, "a named pipe"),
                (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def unreachable(path: Path, exc: OSError) -> str:
    """Why the control socket at ``path`` could not be connected to (``exc``: what connecting raised), said
    for what is there: nothing (``no such file or folder``), something that is not a socket (``a folder, not a
    socket``; a regular file, a named pipe, a device), or, for a socket, ``exc`` itself, with the hint that no
    rig serves it when the connection was refused (a socket its rig left behind: connect(2), ``ECONNREFUSED``).
    The rule: a folder or a file was said to refuse the connection, as a socket nobody listens on does."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file or folder (is a rig running with --sim-socket at this path?)"
    except OSError as err:  # a part of the path that is not a folder, a folder it may not enter
        return str(err.strerror or err)
    for test, kind in _NOT_SOCKETS:
        if test(mode):
            return f"{kind}, not a socket: give the --sim-socket PATH of a running rig"
    if isinstance(exc, ConnectionRefusedError):
        return f"{exc.strerror or exc} (is a rig running with --sim-socket?)"
    return str(exc.strerror or exc)


def run_console(path: Path, commands: list[str]) -> int:
    """``crisscross sim console --socket PATH [-c LINE...]``: connect to the control socket; run ``commands``
    (printing each answer; the first refused one ends with status 1) or, without any, the interactive
    console. Exit status 0, 1 (a command refused, the connection lost), 2 (the socket cannot be reached: one
    line saying why, ``unreachable``)."""
    import sys

    try:
        client = SocketClient(path)
    except OSError as exc:
        print(f"crisscross sim console: {path}: {unreachable(path, exc)}", file=sys.stderr)
        return 2
    try:
        if not commands:
            return console(client.send)
        for line in commands:
            try:
                text = client.send(line)
            except CommandError as exc:
                print(f"crisscross sim console: {line}: {exc}", file=sys.stderr)
                return 1
            if text:
                print(text)
        return 0
    except OSError as exc:
        print(f"crisscross sim console: connection lost: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
