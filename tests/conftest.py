"""Shared test fixtures.

``no_leaked_threads`` (autouse, pymodbus style): a test fails if it leaves behind a non-daemon thread that it
started, because such a thread keeps the process alive and usually still owns a port or a pty.

Property tests run without hypothesis's per-example deadline: speed is measured by benchmarks, and a slow
machine must not turn a correct example into a failure. A failing example prints the blob that replays it
(``@reproduce_failure``).

The suite keeps Python's bytecode cache even where ``PYTHONDONTWRITEBYTECODE`` is set (container images often
set it): a run starts well over a hundred Python processes (workers, services, command lines), and without the
cache each compiles, and pytest assertion-rewrites, every module it imports again: about a third of the quick
tier's CPU time on a two-core machine (docs/testing.md).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
import time
from pathlib import Path

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the workers and every process a test starts

import pytest
from hypothesis import settings

settings.register_profile("crisscross", deadline=None, print_blob=True)
settings.load_profile("crisscross")


def pytest_addoption(parser: pytest.Parser) -> None:
    """The device contract suites' options (tests/contract/conftest.py): which devices are real hardware, and
    whether a person may be asked to act at them or cards may be dealt out of a real shoe."""
    group = parser.getgroup("contract", "device contract suites (tests/contract)")
    group.addoption("--device", action="append", default=[], metavar="KIND=PORT",
                    help="run KIND's contract tests against the hardware on PORT (repeatable), e.g. "
                         "--device shoe=/dev/serial/by-id/usb-...")
    group.addoption("--person", action="store_true", help="a person is at the hardware to act when asked")
    group.addoption("--destructive", action="store_true", help="let the tests deal cards out of a real shoe")


def pytest_configure(config: pytest.Config) -> None:
    """A test named on the command line (``path::name``) runs whatever its tier: the quick tier's ``-m 'not
    slow'`` of pyproject ``addopts`` applies only when no test is named and no other ``-m`` is given."""
    if config.option.markexpr == "not slow" and any("::" in str(arg) for arg in config.args):
        config.option.markexpr = ""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for ``-n auto`` (pyproject ``addopts``): none (one process) when a contract suite drives real
    hardware (``--device``), as a serial port is opened by one process at a time; otherwise two per core (at
    most 8): many tests spend most of their time waiting (for a link's timeout, a process, a server), and a
    second worker per core runs while one waits. A third per core was no faster: every worker collects (imports)
    the whole suite, and the quick tier is then short of CPU time, above all in a fresh clone."""
    if config.getoption("device", default=None):
        return 0
    return min(8, 2 * len(os.sched_getaffinity(0)))


#: The quick tier's longest test files, longest first (seconds of one worker each, measured on two cores in a
#: fresh clone): handed out first, so that none of them starts last and runs alone while the other workers are
#: idle. The order only schedules; a file not listed runs after these, as collected.
LONGEST_FILES = ("tests/test_bench_floor_store.py", "tests/test_floor.py", "tests/test_floor_store.py",
                 "tests/test_robustness.py", "tests/test_service.py", "tests/test_control.py", "tests/test_parsheet.py", "tests/test_floor_report.py",
                 "tests/test_protect_players.py", "tests/test_device_events_pty.py", "tests/test_table_pc.py",
                 "tests/test_irregularities_pty.py", "tests/contract/test_contract_link.py", "tests/test_links_pty.py",
                 "tests/test_hil_scenario_run.py", "tests/test_journal_check.py", "tests/contract/test_contract_panel.py",
                 "tests/test_protect.py", "tests/test_drivers_pty.py", "tests/test_recovery.py",
                 "tests/test_floor_checks.py", "tests/test_flood_pty.py")


def _test_files(config: pytest.Config) -> list[Path]:
    """The test files (``test_*.py``) a run collects beside this file: those in each folder it was given
    (pyproject ``testpaths`` when none), and each file it was given. Not those of a folder with a conftest.py of
    its own (tests/contract), which the collection loads (its marks and options) before their modules."""
    here = Path(__file__).resolve().parent
    files: set[Path] = set()
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0]).resolve()
        if path.is_dir():
            files.update(path.rglob("test_*.py"))
        elif path.name.startswith("test_") and path.suffix == ".py":
            files.add(path)
    return sorted(f for f in files if f.parent == here)


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """On a pytest-xdist worker, before it collects: import its share of the test files (one in as many as
    there are workers), as the collection would. Every worker collects every test file, and on a first run, before
    the caches exist, each would compile the package's modules and rewrite every test module's asserts itself
    (about 5 s of CPU per worker); this way the workers share that work, each then finding the others' caches.
    A later run finds the caches, and this only imports early what the collection imports anyway. A file that
    cannot be imported is left to the collection, which reports it."""
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput is None or session.config.getoption("importmode") != "prepend":
        return
    index, count = int(workerinput["workerid"].removeprefix("gw")), int(workerinput["workercount"])
    for path in _test_files(session.config)[index::count]:
        if str(path.parent) not in sys.path:  # as the prepend import mode does (no __init__.py in tests/)
            sys.path.insert(0, str(path.parent))
        with contextlib.suppress(Exception):  # the collection imports it again and reports the error there
            importlib.import_module(path.stem)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the files of ``LONGEST_FILES`` first (pytest-xdist's ``--dist loadfile`` hands files out in this
    order with pyproject's ``--no-loadscope-reorder``; without it, the files with the most tests first), each
    file's tests in their own order."""
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


#: How long a test's threads may take to finish after its fixtures are torn down (seconds).
THREAD_GRACE = 2.0


@pytest.fixture(autouse=True)
def no_leaked_threads():
    """Fail the test if a non-daemon thread started during it is still alive after a short grace period."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + THREAD_GRACE
    while True:
        leaked = [t for t in threading.enumerate() if t not in before and not t.daemon and t.is_alive()]
        if not leaked or time.monotonic() >= deadline:
            break
        time.sleep(0.01)
    if leaked:
        pytest.fail(f"test leaked non-daemon threads: {sorted(t.name for t in leaked)}")


def own_broker(folder, **options):
    """A started ``hil.broker.Broker`` in ``folder`` (``options`` as it takes them). Without mosquitto installed
    the test is skipped, except under CI (``CI`` set), where it fails."""
    import os

    from hil.broker import Broker, BrokerMissing

    try:
        broker = Broker(folder, **options)
    except BrokerMissing as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{exc}: CI needs it (.ci/run installs it)")
        pytest.skip(f"{exc}")
    broker.start()
    return broker


@pytest.fixture
def mosquitto(tmp_path_factory):
    """A Mosquitto broker of the test's own on a free loopback port (``own_broker``), stopped after it."""
    broker = own_broker(tmp_path_factory.mktemp("mosquitto"))
    yield broker
    broker.stop()
