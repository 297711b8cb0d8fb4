"""Driving the simulators by hand and from another process (docs/rig.md): the console's commands over the
control socket, sent by ``crisscross sim console`` in a process of its own, act on simulators whose effect
is read back the way a host reads it, from their pseudo-terminals; and the faults armed for a moment of the
exchange (``inject_on``) and the shoe's scenario aids, seen over a pty."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time

import pytest

from drivers import framing
from drivers.framing import FrameDecoder
from drivers.panel import protocol as panel_protocol
from drivers.panel.simulator import PanelSimulator
from drivers.sensors.simulator import SensorSimulator
from drivers.shoe import protocol as shoe_protocol
from drivers.shoe.simulator import ShoeSimulator
from drivers.simconsole import CommandError, SimControlServer, execute
from tests.cli_helpers import crisscross

pytestmark = pytest.mark.timeout(60)


class Host:
    """The host end of one simulator's pty: writes frames, reads decoded frames."""

    def __init__(self, sim) -> None:
        self.fd = os.open(sim.port, os.O_RDWR | os.O_NOCTTY)
        self.decoder = FrameDecoder(name="test-host", track_sequence=False)
        self.seq = 0

    def send(self, msg_type: int, payload: bytes = b"") -> None:
        os.write(self.fd, framing.encode_frame(self.seq, msg_type, payload))
        self.seq = (self.seq + 1) % 256

    def read(self, timeout: float = 2.0) -> list:
        frames, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline and not frames:
            if select.select([self.fd], [], [], 0.05)[0]:
                frames += self.decoder.feed(os.read(self.fd, 4096))
        return frames

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture
def table(tmp_path):
    sims = {"shoe": ShoeSimulator(seed=3), "sensors": SensorSimulator(), "panel": PanelSimulator()}
    for sim in sims.values():
        sim.start()
    server = SimControlServer(sims, tmp_path / "sim.sock").start()
    yield sims, server
    server.close()
    for sim in sims.values():
        sim.stop()


def console(server, *lines: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "controller", "sim", "console", "--socket", str(server.path)]
    for line in lines:
        args += ["-c", line]
    return subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=30)


def test_commands_from_another_process_reach_the_simulators(table):
    sims, server = table
    panel_host, shoe_host = Host(sims["panel"]), Host(sims["shoe"])
    try:
        proc = console(server, "place 2 ante_across 500 ante_down 500", "press open_betting", "key on",
                       "inject shoe jam", "stack As Kd")
        assert proc.returncode == 0, proc.stderr
        assert sims["sensors"].amounts() == {(2, "ante_across"): 500, (2, "ante_down"): 500}
        events: dict[int, bytes] = {}
        deadline = time.monotonic() + 10
        while len(events) < 2 and time.monotonic() < deadline:
            for frame in panel_host.read():  # each event is sent again until acknowledged; the next waits
                events.setdefault(frame.msg_type, frame.payload)
                panel_host.send(framing.ACK, framing.encode_ack(frame.seq))
        assert panel_protocol.decode_button(events[panel_protocol.BUTTON]).button == "open_betting"
        assert panel_protocol.decode_key(events[panel_protocol.KEY]).on
        shoe_host.send(shoe_protocol.SHUFFLE)
        (done,) = shoe_host.read()
        assert shoe_protocol.decode_shuffle_done(done.payload).card_count == 52
        shoe_host.send(shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(1, 5))
        (fault,) = shoe_host.read()
        assert fault.msg_type == framing.FAULT and framing.decode_fault(fault.payload).code == \
            shoe_protocol.fault_code("jam")
        shoe_host.send(framing.ACK, framing.encode_ack(fault.seq))
        shoe_host.send(shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(1, 5))
        (stack,) = shoe_host.read()
        assert shoe_protocol.decode_stack(stack.payload).cards[:2] == ("As", "Kd")  # the stacked deck
    finally:
        panel_host.close()
        shoe_host.close()


def test_the_interactive_console_reads_lines_and_reports_errors(table):
    """The console's reading loop, run in this process (``tests/cli_helpers.py``; the test above runs the
    command as a process of its own)."""
    sims, server = table
    proc = crisscross("sim", "console", "--socket", server.path,
                      stdin="place 1 ante_across 700\nshow\nplace 9 ante_across 1\nflip\nquit\n")
    assert proc.returncode == 0, proc.stderr
    assert "chips: seat 1 ante_across 700" in proc.stdout
    assert "error: seat must be one of" in proc.stdout and "error: unknown command 'flip'" in proc.stdout
    refused = crisscross("sim", "console", "--socket", server.path, "-c", "inject shoe melt")
    assert refused.returncode == 1 and "unknown fault 'melt'" in refused.stderr


def _made(kind: str, folder):
    """A path in ``folder`` where no rig serves its control socket: nothing, the folder itself, a regular file, or
    a Unix socket a listener left when it closed (a rig that ended without removing it)."""
    import socket

    if kind == "nothing":
        return folder / "none.sock"
    if kind == "folder":
        return folder
    if kind == "file":
        (folder / "sim.txt").write_text("not a socket\n")
        return folder / "sim.txt"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.bind(str(folder / "gone.sock"))
        gone.listen()
    return folder / "gone.sock"


@pytest.mark.parametrize("kind, said", [
    ("nothing", "no such file or folder (is a rig running with --sim-socket at this path?)"),
    ("folder", "a folder, not a socket: give the --sim-socket PATH of a running rig"),
    ("file", "a regular file, not a socket: give the --sim-socket PATH of a running rig"),
    ("closed socket", "Connection refused (is a rig running with --sim-socket?)"),
])
def test_a_socket_that_cannot_be_reached_is_named_for_what_is_there(tmp_path, kind, said):
    """Exit status 2 and one line saying what is wrong with the path: a folder or a regular file was said to
    refuse the connection, as a socket nobody listens on does (whose hint, a rig not running, stays)."""
    path = _made(kind, tmp_path)
    proc = crisscross("sim", "console", "--socket", path, "-c", "show")
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"crisscross sim console: {path}: {said}\n")


def test_the_socket_is_its_owners_only(table):
    _, server = table
    assert os.stat(server.path).st_mode & 0o777 == 0o600


def test_bad_commands_say_what_is_wrong(table):
    sims, _ = table
    for line, text in (("place 1 ante_across", "place SEAT SPOT AMOUNT"), ("inject panel", "inject DEVICE KIND"),
                       ("inject shoe jam nth=2", "nth and times go with on=MESSAGE"),
                       ("inject shoe jam size=2", "'size=2': expected NAME=VALUE"),
                       ("key sideways", "key on|off"), ("press", "press BUTTON")):
        with pytest.raises(CommandError, match=text.replace("|", "\\|")):
            execute(sims, line)
    with pytest.raises(CommandError, match="no simulated device 'printer'"):
        execute({}, "clear printer")


@pytest.fixture
def shoe(table):
    host = Host(table[0]["shoe"])
    yield host
    host.close()


def test_a_fault_armed_for_the_third_dispense_hits_the_third(table, shoe):
    sims, _ = table
    execute(sims, "inject shoe misfeed on=DISPENSE nth=3")
    shoe.send(shoe_protocol.SHUFFLE)
    shoe.read()
    kinds = []
    for txn in (1, 2, 3):
        shoe.send(shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(txn, 2))
        (answer,) = shoe.read()
        kinds.append(answer.msg_type)
    assert kinds == [shoe_protocol.STACK, shoe_protocol.STACK, framing.FAULT]


def test_a_missing_card_a_bad_stack_and_a_power_cycle_as_the_host_sees_them(table, shoe):
    sims, _ = table
    execute(sims, "remove-cards 2c 3c")
    shoe.send(shoe_protocol.SHUFFLE)
    (done,) = shoe.read()
    assert shoe_protocol.decode_shuffle_done(done.payload).card_count == 50
    execute(sims, "inject shoe short_stack")
    shoe.send(shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(7, 5))
    (stack,) = shoe.read()
    assert len(shoe_protocol.decode_stack(stack.payload).cards) == 4
    execute(sims, "inject shoe nak_in")
    shoe.send(shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(8, 2))
    (nak,) = shoe.read()
    assert framing.decode_nak(nak.payload).reason == framing.NAK_NOT_ALLOWED
    execute(sims, "power-cycle")
    shoe.send(shoe_protocol.QUERY_LAST)
    (last,) = shoe.read()
    assert shoe_protocol.decode_last(last.payload).txn_id == 0


def _device_frames(host, count: int, timeout: float = 5.0) -> list:
    """The frames the device sent until ``count`` arrived (a device-initiated frame not yet acknowledged may
    come more than once: each copy is counted)."""
    frames, deadline = [], time.monotonic() + timeout
    while len(frames) < count and time.monotonic() < deadline:
        frames += host.read(0.2)
    return frames


def test_the_door_opened_by_door_open_is_shut_from_the_console_and_the_host_hears_door_closed(table, shoe):
    """docs/rig.md's ``close-door`` and docs/protocol.md, "The door": the fault door_open leaves the door open, a
    second dispense is refused the same way; ``close-door`` sends DOOR_CLOSED, a device-initiated frame of the
    event counter, sent again until the host's ACK; a door shut already sends nothing."""
    sims, _ = table
    shoe.send(shoe_protocol.SHUFFLE)
    shoe.read()
    execute(sims, "inject shoe door_open")
    faults = {}
    for txn in (1, 2):
        shoe.send(shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(txn, 2))
        new = [f for f in _device_frames(shoe, 1) if f.seq not in faults]  # a copy of the last one aside
        assert new and new[0].msg_type == framing.FAULT
        faults[new[0].seq] = framing.decode_fault(new[0].payload).code
        shoe.send(framing.ACK, framing.encode_ack(new[0].seq))
    assert faults == {0: 5, 1: 5} and "door open" in execute(sims, "show")
    assert sims["shoe"].wait_for(lambda: sims["shoe"].awaiting_ack == 0, 2.0)
    shoe.read(0.2)  # copies of the last fault sent before its ACK arrived
    assert execute(sims, "close-door") == "shoe door closed"
    copies = _device_frames(shoe, 2)  # no ACK yet: the same frame again
    assert len(copies) >= 2 and len(set(copies)) == 1
    assert (copies[0].msg_type, copies[0].payload, copies[0].seq) == (shoe_protocol.DOOR_CLOSED, b"", 2)
    shoe.send(framing.ACK, framing.encode_ack(copies[0].seq))
    assert sims["shoe"].wait_for(lambda: sims["shoe"].awaiting_ack == 0, 2.0)
    shoe.read(0.2)
    assert execute(sims, "close-door") == "the shoe's door was not open"
    shoe.send(shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(2, 2))
    answers = _device_frames(shoe, 1)
    assert [f.msg_type for f in answers] == [shoe_protocol.STACK]  # nothing of the door any more
    with pytest.raises(CommandError, match="close-door takes no argument"):
        execute(sims, "close-door now")


@pytest.mark.parametrize("line, message", [
    ("place 1 ante_across 2.5", "AMOUNT must be an integer, got '2.5'"),
    ("place one ante_across 500", "'one' is not a number"),
    ("remove", "remove SEAT [SPOT...]"),
    ("remove 1.0", "SEAT must be an integer, got '1.0'"),
    ("clear", "clear DEVICE"),
    ("clear printer", "no simulated device 'printer' here; simulated: sensors, shoe"),
    ("press 'open_betting", "No closing quotation"),
])
def test_a_console_command_that_cannot_be_carried_out_says_why(line, message):
    """docs/rig.md and the console's help: amounts and seats are integers, each command has its arguments; a
    line that does not parse is refused, never half carried out."""
    sims = {"sensors": SensorSimulator(), "shoe": ShoeSimulator(seed=1)}
    with pytest.raises(CommandError) as refused:
        execute(sims, line)
    assert str(refused.value) == message
    assert sims["sensors"].amounts() == {}


def test_remove_takes_chips_off_the_spots_named_or_every_spot_of_the_seat():
    """The console's help: ``remove SEAT [SPOT...]`` takes chips off a seat, every spot or those named; an empty
    line does nothing and ``help`` prints the commands."""
    from drivers.simconsole import HELP

    sims = {"sensors": SensorSimulator()}
    execute(sims, "place 2 ante_across 500 ante_down 500")
    execute(sims, "place 3 ante_across 1000")
    assert execute(sims, "remove 2 ante_down") == "seat 2: chips removed"
    assert sims["sensors"].amounts() == {(2, "ante_across"): 500, (3, "ante_across"): 1000}
    execute(sims, "remove 2")
    assert sims["sensors"].amounts() == {(3, "ante_across"): 1000}
    assert execute(sims, "   ") == "" and execute(sims, "help") == HELP


def test_a_silent_console_is_closed_and_one_beyond_the_bound_is_refused_without_a_thread(tmp_path):
    """Every door is bounded in connections and time: a console silent for ``idle_seconds`` is told so and
    closed (one held forever kept a place), and one beyond ``MAX_CLIENTS`` gets its error line from the serving
    thread, no thread of its own."""
    import socket
    import threading

    from drivers.simconsole import MAX_CLIENTS

    server = SimControlServer({}, tmp_path / "sim.sock", idle_seconds=0.3).start()
    held = []
    try:
        silent = socket.socket(socket.AF_UNIX)
        silent.connect(str(server.path))
        silent.settimeout(30)
        told = silent.makefile("rb")
        assert b"silent for 0.3 s" in told.readline()
        assert told.readline() == b""  # closed: its place was given back before (any load, any order of threads)
        silent.close()
        server.idle_seconds = 30
        for _ in range(MAX_CLIENTS):
            sock = socket.socket(socket.AF_UNIX)
            sock.connect(str(server.path))
            sock.sendall(b"help\n")
            sock.settimeout(30)
            assert sock.makefile("rb").readline().startswith(b'{"ok": true')  # served: its place is taken
            held.append(sock)
        threads = threading.active_count()
        extra = socket.socket(socket.AF_UNIX)
        extra.connect(str(server.path))
        extra.settimeout(30)
        assert b"too many consoles connected" in extra.makefile("rb").readline()
        extra.close()
        assert threading.active_count() == threads
    finally:
        for sock in held:
            sock.close()
        server.close()


def test_a_count_beyond_the_bound_is_refused_through_the_socket_and_nothing_is_armed(table, shoe):
    """docs/rig.md, "The console and the control socket": a count is at most 10,000; one more is refused like
    any bad argument, the rig serving on, and the shoe deals as before."""
    sims, server = table
    done = console(server, "inject shoe jam count=10001")
    assert done.returncode == 1
    assert "count must be an integer from 1 to 10000, got 10001" in done.stderr
    assert console(server, "show").returncode == 0  # the socket still answers
    shoe.send(shoe_protocol.SHUFFLE)
    shoe.read()
    shoe.send(shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(1, 2))
    assert [f.msg_type for f in _device_frames(shoe, 1)] == [shoe_protocol.STACK]


@pytest.mark.parametrize("line, message", [
    ("inject shoe jam count=0", "count must be an integer from 1 to 10000, got 0"),
    ("inject panel drop_out count=10001", "count must be an integer from 1 to 10000, got 10001"),
    ("inject shoe jam on=DISPENSE nth=10001", "nth must be an integer from 1 to 10000, got 10001"),
    ("inject shoe jam on=DISPENSE times=10001", "times must be an integer from 1 to 10000, got 10001"),
    ("inject panel delay seconds=3601", "seconds must be a number of seconds from 0 to 3600, got 3601"),
    ("inject panel silent seconds=nan", "seconds must be a number of seconds from 0 to 3600, got nan"),
    ("inject panel replug after=1e400", "after must be a number of seconds from 0 to 3600, got inf"),
    ("inject panel split pause=-1", "pause must be a number of seconds from 0 to 3600, got -1"),
    ("inject panel flood rate=100001", "rate must be a number of frames a second from 0 to 100000, got 100001"),
    ("inject panel corrupt at=10001", "at (a byte index) must be an integer from 1 to 10000, got 10001"),
    ("inject panel garbage count=10001", "count must be an integer from 1 to 10000, got 10001"),
])
def test_every_numeric_argument_of_inject_has_a_bound(line, message):
    """docs/protocol.md, "Fault injection" and docs/rig.md: counts, nth and times 1..10,000; seconds, after and
    pause 0..3,600 s; a flood's rate at most 100,000 frames a second; a corrupted byte's index 1..10,000. Refused before anything is armed."""
    sims = {"panel": PanelSimulator(), "shoe": ShoeSimulator(seed=1)}
    with pytest.raises(ValueError) as refused:
        execute(sims, line)
    assert str(refused.value) == message


def test_a_count_is_kept_as_a_number_not_as_a_list_of_that_length():
    """A fault armed for 10,000 frames or dispenses costs the simulator a few hundred bytes, not one entry a
    frame (a list of 10,000 references alone is 80,000 bytes)."""
    import tracemalloc

    shoe, panel = ShoeSimulator(seed=1), PanelSimulator()
    tracemalloc.start()
    try:
        shoe.inject("jam", 10_000)
        panel.inject("drop_out", 10_000)
        panel.inject("delay", 10_000, seconds=0.1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8_000


def test_a_counted_shoe_fault_hits_that_many_dispenses_then_the_shoe_deals(table, shoe):
    """docs/protocol.md, "Fault injection": ``count`` device faults answer the next ``count`` DISPENSE
    requests with FAULT, the one after is dealt."""
    sims, _ = table
    shoe.send(shoe_protocol.SHUFFLE)
    shoe.read()
    execute(sims, "inject shoe misfeed count=3")
    kinds = []
    for txn in (1, 2, 3, 4):
        shoe.send(shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(txn, 2))
        new = _device_frames(shoe, 1)
        kinds.append(new[0].msg_type)
        if new[0].msg_type == framing.FAULT:
            shoe.send(framing.ACK, framing.encode_ack(new[0].seq))
            assert sims["shoe"].wait_for(lambda: sims["shoe"].awaiting_ack == 0, 2.0)
            shoe.read(0.1)
    assert kinds == [framing.FAULT] * 3 + [shoe_protocol.STACK]


def test_clear_cancels_the_shoes_armed_dispense_faults(table, shoe):
    """docs/rig.md's ``clear DEVICE``: "cancel the armed faults"; the shoe's jams armed for the next dispenses
    are among them."""
    sims, _ = table
    shoe.send(shoe_protocol.SHUFFLE)
    shoe.read()
    execute(sims, "inject shoe jam count=2")
    assert execute(sims, "clear shoe") == "shoe: faults cleared"
    shoe.send(shoe_protocol.DISPENSE, shoe_protocol.encode_dispense(1, 2))
    assert [f.msg_type for f in _device_frames(shoe, 1)] == [shoe_protocol.STACK]
