"""The table PC: the service watched by systemd (the notify protocol over a real datagram socket), its metrics
scraped and parsed as Prometheus does, its configuration found where a site keeps it, simulated play kept
apart from the table's journal, and a production run that loads no analysis library.

Sources: sd_notify(3) and systemd.service(5) (``Type=notify``, ``WatchdogSec=``); the Prometheus text format
(prometheus_client's own parser is the oracle).
"""

from __future__ import annotations

import os
import queue
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from controller import __version__

from controller.cli import main as cli
from controller.cli.parts import SERVICE_PARTS
from controller.game.table import MAX_AMOUNT, load_table_config
from controller.journal.reader import read_records
from controller.round.inputs import ServiceStarted
from controller.service.assembly import Service
from controller.service.loop import STOP, Controller
from controller.service.metrics import ServiceMetrics
from controller.service.notify import JournaldFormatter, Notifier, under_journald
from controller.service.watch import Watch
from controller.settings.files import CONFIG_DIR, find_table_config, state_dir
from drivers import events as ev
from tests.round_helpers import new_round
from tests.test_control import StandInDevices


@pytest.fixture
def manager(tmp_path):
    """A stand-in service manager: a datagram socket bound at a path, read by the test."""
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(0.05)
    yield path, sock
    sock.close()


def drain(sock: socket.socket, seconds: float, until: Callable[[str], bool] | None = None,
          then: float = 0.3) -> list[tuple[float, str]]:
    """Every datagram received within ``seconds``, with its arrival time; with ``until``, the wait ends ``then``
    seconds after the first datagram it accepts (a loaded machine may take seconds to send it, and what comes
    right after it is still seen)."""
    got = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            got.append((time.monotonic(), sock.recv(4096).decode()))
        except TimeoutError:
            continue
        if until is not None and until(got[-1][1]):
            deadline = min(deadline, time.monotonic() + then)
            until = None
    return got


def test_notifier_speaks_the_protocol_and_is_silent_without_a_manager(manager):
    path, sock = manager
    notifier = Notifier({"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "2000000"})
    assert notifier.enabled and notifier.watchdog_interval == 2.0
    notifier.send(READY="1", STATUS="table CC-01: idle")
    assert sock.recv(4096) == b"READY=1\nSTATUS=table CC-01: idle"
    notifier.watchdog(now=100.0)
    notifier.watchdog(now=100.1)  # within a quarter of the interval: not again
    notifier.watchdog(now=100.6)
    assert [m for _, m in drain(sock, 0.2)] == ["WATCHDOG=1", "WATCHDOG=1"]
    assert Notifier({"WATCHDOG_USEC": "1000", "WATCHDOG_PID": str(os.getpid() + 1)}).watchdog_interval is None
    silent = Notifier({})
    assert not silent.enabled
    silent.send(READY="1")  # nothing to send to: no error


def test_journald_lines_carry_the_priority_and_no_time_of_their_own():
    import logging

    record = logging.LogRecord("controller.service.loop", logging.ERROR, __file__, 1, "fault %s", ("jam",), None)
    assert JournaldFormatter().format(record) == "<3>controller.service.loop: fault jam"
    record.levelno = logging.INFO
    assert JournaldFormatter().format(record).startswith("<6>")
    info = os.fstat(2)
    assert under_journald({"JOURNAL_STREAM": f"{info.st_dev}:{info.st_ino}"})
    assert not under_journald({"JOURNAL_STREAM": "1:2"}) and not under_journald({})


def test_a_manager_gone_away_is_logged_once_and_never_stops_the_service(tmp_path, caplog):
    """controller/service/notify.py ``Notifier``: a send that fails (nobody at ``NOTIFY_SOCKET``) is logged once and
    never raises; ``close`` may be called twice."""
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone.sock"), "WATCHDOG_USEC": "1000000"})
    notifier.send(READY="1")
    notifier.watchdog(now=10.0)
    warnings = [r.getMessage() for r in caplog.records if r.name == "controller.service.notify"]
    assert len(warnings) == 1 and warnings[0].startswith(f"cannot notify the service manager at {tmp_path}")
    notifier.close()
    notifier.close()


def test_a_journald_line_with_a_traceback_carries_the_priority_on_every_line():
    """journald reads the ``<N>`` prefix per line (systemd.exec(5) ``SyslogLevelPrefix=``): each line of a
    traceback keeps the record's priority; a standard error that is closed is not the journal's stream."""
    import logging

    try:
        raise ValueError("bad frame")
    except ValueError:
        record = logging.LogRecord("drivers.link", logging.ERROR, __file__, 1, "link error", (), sys.exc_info())
    lines = JournaldFormatter().format(record).splitlines()
    assert lines[0] == "<3>drivers.link: link error" and lines[-1] == "<3>ValueError: bad frame"
    assert len(lines) > 2 and all(line.startswith("<3>") for line in lines)
    read, write = os.pipe()
    os.close(read)
    os.close(write)
    assert not under_journald({"JOURNAL_STREAM": "1:2"}, fd=write)


def _controller(manager_path, events, blocker=None, blocked=None):
    notifier = Notifier({"NOTIFY_SOCKET": str(manager_path), "WATCHDOG_USEC": "400000"})
    devices = StandInDevices(events)

    def on_view(view):
        if blocker is not None and view["state"] == "betting":
            if blocked is not None:
                blocked.set()
            blocker.wait(10)  # the controller thread is stuck on one input

    journal_dir = Path(str(manager_path)).parent
    from controller.journal.store import Journal

    journal = Journal(journal_dir / "journal.jsonl")
    controller = Controller(new_round(), journal, {"shoe": devices, "sensors": devices, "panel": devices}, events,
                            on_view=on_view, watch=Watch("CC-01", notifier))
    return controller, journal


def test_ready_comes_after_every_handshake_and_the_shoe_query(manager):
    """READY=1 only once the three devices answered their handshakes and the shoe said what it last did (the
    journal was recovered before the loop began); STATUS names the table and state; STOPPING=1 at the end."""
    path, sock = manager
    events: queue.Queue = queue.Queue()
    controller, journal = _controller(path, events)
    thread = threading.Thread(target=controller.run)
    thread.start()
    try:
        events.put(ev.DeviceReady("shoe", "test", "1.0", 1))
        events.put(ev.DeviceReady("sensors", "test", "1.0", 1))
        early = [m for _, m in drain(sock, 10, until=lambda m: m == "WATCHDOG=1")]
        assert early and all(m == "WATCHDOG=1" for m in early)  # alive, but not ready
        events.put(ev.DeviceReady("panel", "test", "1.0", 1))  # the stand-in shoe then answers the query
        later = [m for _, m in drain(sock, 10, until=lambda m: m.startswith("READY=1"))]
        ready = [m for m in later if m.startswith("READY=1")]
        assert ready == ["READY=1\nSTATUS=table CC-01: idle"]
        types = [r["type"] for r in read_records(journal.path)]
        assert types.index("ShoeReconciled") > types.index("DeviceReady")
    finally:
        events.put(STOP)
        thread.join(10)
        journal.close()
    assert "STOPPING=1\nSTATUS=table CC-01: stopping" in [m for _, m in drain(sock, 0.3)]


def test_the_watchdog_stops_while_the_controller_thread_is_blocked(manager):
    """WatchdogSec=: pings come from the controller thread's own loop, so a thread stuck on one input for longer
    than the interval sends none (systemd then restarts the service), and they resume once it moves on."""
    path, sock = manager
    events: queue.Queue = queue.Queue()
    blocker, blocked = threading.Event(), threading.Event()
    controller, journal = _controller(path, events, blocker, blocked)
    thread = threading.Thread(target=controller.run)
    thread.start()
    try:
        for device in ("shoe", "sensors", "panel"):
            events.put(ev.DeviceReady(device, "test", "1.0", 1))
        drain(sock, 0.5)
        from controller.round.inputs import OperatorAction

        events.put(OperatorAction("open_betting", "dan", "dealer"))  # its view blocks the thread
        assert blocked.wait(10)
        sock.setblocking(False)  # a ping sent before the block began is already in the socket: set it aside
        while True:
            try:
                sock.recv(4096)
            except BlockingIOError:
                break
        sock.settimeout(0.05)
        during = [m for _, m in drain(sock, 1.2)]  # three watchdog intervals
        assert not any(m == "WATCHDOG=1" for m in during), during
        blocker.set()
        resumed = [m for _, m in drain(sock, 10, until=lambda m: m == "WATCHDOG=1", then=0)]
        assert "WATCHDOG=1" in resumed
    finally:
        blocker.set()
        events.put(STOP)
        thread.join(10)
        journal.close()


def test_metrics_are_served_and_parse_and_never_name_a_card_or_a_wager(tmp_path):
    """/metrics on a loopback port, parsed with prometheus_client's parser: rounds, faults, commit and
    press-to-command histograms, queue depth, start-up time, build; no card and no amount in any sample."""
    service = Service(load_table_config(), simulate=True, rounds=3, seed=4, journal_path=tmp_path / "j.jsonl",
                      quiet=True, metrics_port=0, parts=SERVICE_PARTS)
    try:
        assert service.run() == 0
        text = urllib.request.urlopen(f"http://127.0.0.1:{service.metrics_port}/metrics", timeout=5).read().decode()
    finally:
        service.close()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    rounds = {s.labels["outcome"]: s.value for s in families["crisscross_rounds"].samples if s.name.endswith("_total")}
    assert rounds == {"closed": 3.0}
    commit = {s.name: s.value for s in families["crisscross_journal_commit_seconds"].samples}
    inputs = sum(r["kind"] == "event" for r in read_records(tmp_path / "j.jsonl"))
    # one commit per input, or per group of up to 64 inputs that arrived together (controller.service.loop)
    assert inputs / 64 <= commit["crisscross_journal_commit_seconds_count"] <= inputs
    assert {s.name: s.value for s in families["crisscross_press_to_command_seconds"].samples}[
        "crisscross_press_to_command_seconds_count"] > 0
    assert families["crisscross_startup_seconds"].samples[0].value > 0
    assert families["crisscross_build_info"].samples[0].labels["version"] == __version__
    assert "crisscross_event_queue_depth" in families
    import re

    for family in families.values():
        for sample in family.samples:
            assert not any(re.fullmatch(r"[2-9TJQKA][cdhs]", str(v)) for v in sample.labels.values())
            # the meters' gauges name a wager type, never a seat's wager (controller/round/meters.py)
            assert set(sample.labels) <= {"outcome", "device", "cause", "version", "le", "wager", "meter", "kind",
                                          "direction", "since"}


def test_metrics_refuse_an_address_off_the_machine():
    with pytest.raises(ValueError, match="not a loopback"):
        ServiceMetrics(lambda: 0, dict).serve("0.0.0.0", 0)


def test_a_start_refused_for_a_metrics_port_in_use_leaves_no_journal_and_touches_none_that_was_there(tmp_path):
    """A start refused because the metrics port was taken left a new, empty journal and its anchor behind, which
    the next start adopted (its notice of a path with no journal lost): the port is now bound before the journal
    is made, as the control interface's is. A journal that was there is left as it was."""
    from controller.journal.store import Journal
    from tests.cli_helpers import crisscross

    kept = Journal(tmp_path / "kept.db")
    kept.close()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        for name in ("new.db", "kept.db"):
            done = crisscross("run", "--simulate", "--rounds", "1", "--journal", tmp_path / name, "--metrics-port",
                              port)
            assert done.returncode == 2, done
            assert done.stderr.count("\n") == 1 and f"metrics port 127.0.0.1:{port}: " in done.stderr, done.stderr
            assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    finally:
        taken.close()

def test_simulated_play_keeps_its_own_journal_and_says_so(tmp_path, monkeypatch):
    """--simulate without --journal writes to the state directory's simulated/ journal, never the table's; the
    start record names the mode, the version, the configuration and each device's port."""
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path / "state"))
    config = load_table_config()
    assert config.journal == tmp_path / "state" / "journal.db"  # the table's
    service = Service(config, simulate=True, rounds=1, seed=2, quiet=True, parts=SERVICE_PARTS)
    try:
        assert service.run() == 0
    finally:
        service.close()
    assert not config.journal.exists()
    records = read_records(tmp_path / "state" / "simulated" / "journal.db")
    started = next(r for r in records if r["type"] == "ServiceStarted")["data"]
    hashes = {key: started.pop(key) for key in ("config_sha256", "software")}  # docs/events.md
    assert all(len(value) == 64 for value in hashes.values())
    assert started == {"mode": "simulated", "version": __version__, "config": str(config.source),
                       "devices": {"shoe": "simulator", "sensors": "simulator", "panel": "simulator"},
                       "table": config.table_id}


def test_the_configuration_is_found_by_flag_then_environment_then_site_then_package(tmp_path):
    site = tmp_path / "etc" / "table.yaml"
    assert find_table_config(None, environ={}, site=site) == CONFIG_DIR / "table.yaml"
    site.parent.mkdir()
    site.write_text("x")
    assert find_table_config(None, environ={}, site=site) == site
    assert find_table_config(None, environ={"CRISSCROSS_CONFIG": "/a/t.yaml"}, site=site) == Path("/a/t.yaml")
    assert find_table_config(Path("/b/t.yaml"), environ={"CRISSCROSS_CONFIG": "/a/t.yaml"}, site=site) == \
        Path("/b/t.yaml")
    assert state_dir({"STATE_DIRECTORY": "/var/lib/crisscross:/var/lib/other"}) == Path("/var/lib/crisscross")
    assert state_dir({"XDG_STATE_HOME": "/x", "HOME": "/h"}) == Path("/x/crisscross")
    assert state_dir({"HOME": "/h"}) == Path("/h/.local/state/crisscross")


def test_config_init_writes_an_editable_copy_that_runs(tmp_path, capsys):
    target = tmp_path / "site"
    assert cli.main(["config", "init", str(target)]) == 0
    config = load_table_config(target / "table.yaml")
    assert sorted(p.name for p in (target / "jurisdictions").iterdir()) == ["nj.yaml", "ny.yaml", "pa.yaml"]
    assert config.table_id == "CC-01"
    assert cli.main(["config", "init", str(target)]) == 2  # never over an existing configuration
    assert "a folder that is not empty" in capsys.readouterr().err


def test_config_unit_prints_the_packaged_unit_starting_this_install(capsys, monkeypatch, tmp_path):
    """``crisscross config unit``: the shipped unit, its ExecStart at the ``crisscross`` beside the running
    interpreter (a virtualenv's bin/), everything else as shipped; as shipped where there is none."""
    shipped = cli.UNIT_FILE.read_text()
    assert f"ExecStart={cli.UNIT_COMMAND} -v run --metrics-port 9740\n" in shipped
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "crisscross").write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    assert cli.main(["config", "unit"]) == 0
    printed = capsys.readouterr().out
    assert printed == shipped.replace(f"ExecStart={cli.UNIT_COMMAND} ", f"ExecStart={bin_dir / 'crisscross'} ")
    assert printed.count("ExecStart=") == 1 and f"ExecStart={bin_dir / 'crisscross'} -v run" in printed
    monkeypatch.setattr(sys, "executable", str(tmp_path / "elsewhere" / "python"))
    assert cli.main(["config", "unit"]) == 0
    assert capsys.readouterr().out == shipped


#: prctl(2)'s PR_SET_MDWE with PR_MDWE_REFUSE_EXEC_GAIN (Linux 6.3): what systemd's MemoryDenyWriteExecute=yes sets
#: on such a kernel (systemd.exec(5)), inherited over fork and execve
MDWE = "import ctypes, os, sys; ctypes.CDLL(None).prctl(65, 1, 0, 0, 0) == 0 or sys.exit('no PR_SET_MDWE'); " \
       "os.execv(sys.argv[1], sys.argv[1:])"


@pytest.mark.slow
def test_the_units_sandbox_lets_the_detector_and_the_rating_start_and_keeps_their_cache(tmp_path):
    """The shipped unit set MemoryDenyWriteExecute=yes: the hole-card detector and the rating compile their
    loops (numba) into memory made executable, refused under it, so ``run --protect --rating`` under the unit
    logged "not started" and dealt unprotected. And with no home and a read-only system, their cache could be
    written nowhere: every start compiled again. The unit's own settings are applied here as far as a process
    can apply them (its MemoryDenyWriteExecute, its Environment with %C, the cache root, in a folder of the
    test's): both workers start, the table deals, and the compiled loops are cached where the unit says."""
    unit = cli.UNIT_FILE.read_text().splitlines()
    cache_root = tmp_path / "cache"  # %C, /var/cache for a system unit (systemd.unit(5), "Specifiers")
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "NUMBA_CACHE_DIR")}
    env |= {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path / "no-home")}
    for line in unit:
        if line.startswith("Environment="):
            name, _, value = line.removeprefix("Environment=").partition("=")
            if name != "CRISSCROSS_CONFIG":  # /etc/crisscross/table.yaml: the packaged one here
                env[name] = value.replace("%C", str(cache_root))
    assert "XDG_CACHE_HOME" in env, "the unit names no cache folder: the detector's loops compile at every start"
    (cache_root / "crisscross").mkdir(parents=True)  # CacheDirectory=crisscross
    command = [shutil.which("crisscross") or str(Path(sys.executable).with_name("crisscross")), "run", "--simulate",
               "--rounds", "2", "--quiet", "--protect", "--rating"]
    if "MemoryDenyWriteExecute=yes" in unit:
        command = [sys.executable, "-c", MDWE, *command]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "not started" not in result.stderr, result.stderr
    assert list((cache_root / "crisscross").rglob("*.nbi")), "no compiled loop was cached under CacheDirectory"


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"crisscross {__version__}"


def test_a_production_run_loads_no_analysis_library(tmp_path):
    """A table PC's service (devices on ports, no --simulate) imports none of the analysis extra (numpy, tqdm,
    threadpoolctl): the service is built as ``crisscross run`` builds it, before any device is opened."""
    code = f"""
import sys
from pathlib import Path
from controller.cli import main as cli
from controller.cli.parts import SERVICE_PARTS
from controller.game.table import load_table_config
from controller.service.assembly import Service
config = load_table_config()
service = Service(config, ports={{n: '/dev/null-{os.getpid()}' for n in config.devices}},
                  journal_path=Path({str(tmp_path / 'j.jsonl')!r}), parts=SERVICE_PARTS)
service.close()
loaded = sorted(m for m in ('numpy', 'tqdm', 'threadpoolctl') if m in sys.modules)
print(','.join(loaded))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_money_has_a_bound_at_every_door(tmp_path, capsys):
    """An amount beyond ``MAX_AMOUNT`` (4,300 nines included) is refused with one line and exit status 2 by
    ``crisscross settle``, and with file and line in table.yaml limits; nothing is printed on standard output."""
    nines = "9" * 4300
    path = tmp_path / "round.json"
    path.write_text('{"jurisdiction": "ny", "community": {"across": ["7d", "2c"], "down": ["9s", "3h"], '
                    '"middle": "Kc"}, "seats": [{"seat": 1, "cards": ["Jh", "Jd"], "wagers": {"ante_across": '
                    + nines + ', "ante_down": ' + nines + "}}]}")
    assert cli.main(["settle", str(path)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1 and f"at most {MAX_AMOUNT}" in out.err
    table = tmp_path / "table.yaml"
    text = (CONFIG_DIR / "table.yaml").read_text().replace("ante: {min: 500, max: 50000}",
                                                            f"ante: {{min: 500, max: {nines}}}")
    table.write_text(text)
    with pytest.raises(Exception, match=r"limits.ante: max an integer of about \d+ digits is above"):
        load_table_config(table)


def _link_samples(text: str) -> dict[tuple[str, str], float]:
    """``(counter, device) -> value`` of the ``crisscross_link_*_total`` samples of a scrape."""
    return {(s.name.removeprefix("crisscross_link_").removesuffix("_total"), s.labels["device"]): s.value
            for f in text_string_to_metric_families(text) if f.name.startswith("crisscross_link_")
            for s in f.samples if s.name.endswith("_total")}


def test_link_counters_count_what_happened_on_each_link(tmp_path):
    """Per link, served on /metrics: frames both ways; a handshake failure after the shoe lost the host's HELLO;
    a bad CRC after a panel frame was corrupted; a reconnection after the sensor board was unplugged and came
    back under another port. (Exact counts of one link: tests/test_transport.py.)"""
    service = Service(load_table_config(), simulate=True, rounds=2, seed=6, journal_path=tmp_path / "j.jsonl",
                      quiet=True, metrics_port=0, parts=SERVICE_PARTS)
    try:
        service.sims["shoe"].inject("drop_in")  # the shoe never sees the HELLO: that handshake fails
        sensors = service.sims["sensors"]

        def unplug_after_first_round():
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and service.controller.rounds_closed < 1:
                time.sleep(0.01)
            sensors.inject("replug", after=0.5)
            service.sims["panel"].inject("corrupt", at=2)  # a byte of the frame's body: its CRC no longer matches

        pulling = threading.Thread(target=unplug_after_first_round)
        pulling.start()
        assert service.run() == 0
        pulling.join()
        text = urllib.request.urlopen(f"http://127.0.0.1:{service.metrics_port}/metrics", timeout=5).read().decode()
        counts = _link_samples(text)
        decoded = {name: driver.decoder.error_counts["bad_crc"] for name, driver in service.drivers.items()}
    finally:
        service.close()
    for device in ("shoe", "sensors", "panel"):
        assert counts[("frames_sent", device)] > 0 and counts[("frames_received", device)] > 0
    assert counts[("reconnections", "sensors")] == 1 and counts[("reconnections", "shoe")] == 0
    assert counts[("bad_crc", "panel")] >= 1 and counts[("bad_crc", "panel")] >= decoded["panel"]
    assert counts[("handshake_failures", "shoe")] == 1 and counts[("handshake_failures", "panel")] == 0


def test_any_simulated_device_keeps_the_run_out_of_the_tables_journal(tmp_path, monkeypatch):
    """A table file whose devices are simulators (the copy `config init` writes) played without --simulate is
    simulated play all the same: its journal is the simulated one, its start record says so."""
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path / "state"))
    config = load_table_config()
    service = Service(config, rounds=0, parts=SERVICE_PARTS)
    try:
        assert service.simulated == ["shoe", "sensors", "panel"]
        assert service.journal.path == tmp_path / "state" / "simulated" / "journal.db"
    finally:
        service.close()
    assert not config.journal.exists()


def test_the_command_line_refuses_what_would_write_into_the_software_or_guess(tmp_path, capsys):
    """``operator add`` without a table's own configuration would write into the installed package: refused,
    naming ``config init``; a metrics port out of range, a device given twice with --port and ``config init``
    without a folder are refused with one line and exit status 2."""
    assert cli.main(["operator", "list"]) == 2
    assert "config init" in capsys.readouterr().err
    for argv in (["run", "--metrics-port", "99999"], ["run", "--metrics-port", "-5"]):
        with pytest.raises(SystemExit) as refused:
            cli.main(argv)
        assert refused.value.code == 2 and "port number from 0 to 65535" in capsys.readouterr().err
    assert cli.main(["run", "--port", "shoe=/dev/a", "--port", "shoe=/dev/b"]) == 2
    assert "given twice" in capsys.readouterr().err
    assert cli.main(["config", "init", ""]) == 2
    assert "needs the folder" in capsys.readouterr().err


def test_a_journal_never_mixes_simulated_and_table_play(tmp_path, capsys):
    """A table's journal given to a run with simulated devices (or the reverse) is refused before anything is
    written: the journal's last start record says which play it holds."""
    from controller.journal.record import JournalError

    path = tmp_path / "table.db"
    config = load_table_config()
    from controller.journal.store import Journal

    journal = Journal(path)  # a table's history: its start record, as a run on hardware writes it
    journal.commit([("event", "ServiceStarted", {"mode": "table", "version": __version__, "config": "x",
                                                 "devices": {}}, None)])
    journal.close()
    before = len(read_records(path))
    with pytest.raises(JournalError, match="holds table play and this run is simulated play"):
        Service(config, simulate=True, journal_path=path, quiet=True, parts=SERVICE_PARTS)
    assert len(read_records(path)) == before
    simulated = tmp_path / "sim.db"
    service = Service(config, simulate=True, rounds=1, seed=3, journal_path=simulated, quiet=True,
                      parts=SERVICE_PARTS)
    try:
        assert service.run() == 0
    finally:
        service.close()
    with pytest.raises(JournalError, match="holds simulated play and this run is table play"):
        Service(config, ports={n: f"/dev/null-{os.getpid()}" for n in config.devices}, journal_path=simulated,
                parts=SERVICE_PARTS)


def test_a_journal_holds_one_tables_rounds(tmp_path):
    """A journal that a table's start records name (``ServiceStarted.table``) is refused to a configuration of
    another ``table_id``, before anything is written; the same table starts on it again, and a journal whose start
    records were written before the id was kept is not judged."""
    import dataclasses

    from controller.journal.record import JournalError
    from controller.journal.store import Journal

    config = load_table_config()
    other = dataclasses.replace(config, table_id=f"{config.table_id}-B")
    path = tmp_path / "history.db"

    def play(cfg):
        service = Service(cfg, simulate=True, rounds=1, seed=3, journal_path=path, quiet=True, parts=SERVICE_PARTS)
        try:
            assert service.run() == 0
        finally:
            service.close()

    play(config)
    starts = [r for r in read_records(path) if r["type"] == "ServiceStarted"]
    assert [r["data"]["table"] for r in starts] == [config.table_id]
    before = read_records(path)
    with pytest.raises(JournalError, match=f"holds the rounds of table '{config.table_id}' and this "
                                           f"configuration is table '{other.table_id}': not started"):
        Service(other, simulate=True, rounds=1, journal_path=path, quiet=True, parts=SERVICE_PARTS)
    assert read_records(path) == before
    play(config)  # its own table starts again
    older = tmp_path / "older.db"  # a start record written before the table's id was kept
    journal = Journal(older)
    journal.commit([("event", "ServiceStarted", {"mode": "simulated", "version": __version__, "config": "x",
                                                 "devices": {}}, None)])
    journal.close()
    path = older
    play(other)


def test_a_keyed_table_file_never_seals_the_shared_simulated_journal(tmp_path, monkeypatch):
    """A site's table file with a journal key, used once with --simulate, leaves the shared simulated journal
    unsealed, so the next simulated run with the default configuration still starts."""
    from controller.journal.key import init_key

    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path / "state"))
    assert cli.main(["config", "init", str(tmp_path / "site")]) == 0
    init_key(tmp_path / "site" / "journal.key")
    table = tmp_path / "site" / "table.yaml"
    table.write_text(table.read_text().replace("# journal_key: journal.key", "journal_key: journal.key"))
    keyed = load_table_config(table)
    assert keyed.journal_key == tmp_path / "site" / "journal.key"
    for config in (keyed, load_table_config()):
        service = Service(config, simulate=True, rounds=1, seed=5, quiet=True, parts=SERVICE_PARTS)
        try:
            assert service.run() == 0
        finally:
            service.close()
    assert len({r["data"]["config"] for r in read_records(tmp_path / "state" / "simulated" / "journal.db")
                if r["type"] == "ServiceStarted"}) == 2


def test_an_older_simulated_journal_never_blocks_simulated_play(tmp_path, monkeypatch):
    """A JSON-lines journal left by an older version in the simulated folder is nobody's history: a simulated
    run starts its store beside it (a table's own old journal is still refused until imported)."""
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path / "state"))
    old = tmp_path / "state" / "simulated" / "journal.jsonl"
    old.parent.mkdir(parents=True)
    old.write_text('{"seq": 1}\n')
    service = Service(load_table_config(), simulate=True, rounds=1, seed=8, quiet=True, parts=SERVICE_PARTS)
    try:
        assert service.run() == 0
    finally:
        service.close()
    assert old.read_text() == '{"seq": 1}\n'
