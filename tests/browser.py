"""Debian's Chromium driven by Playwright for the dealer's screen tests, and a service to point it at.

Chromium is the distribution's package (``apt-get install -y chromium``, /usr/bin/chromium), launched by the
``playwright`` package from PyPI with ``executable_path``; Playwright's own browser download is never used. On a
machine without Chromium the browser tests are skipped with the command that installs it, except under CI
(``CI`` set), where a missing browser is a failure (docs/control.md, "Testing the screen").
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.journal.reader import read_records
from controller.control.app import HEARTBEAT
from controller.control.operators import MIN_ITERATIONS, add_operator
from controller.control.server import ControlServer
from controller.game.table import load_table_config
from controller.service.assembly import Service

CHROMIUM = Path("/usr/bin/chromium")
#: Chromium's switches: headless without a sandbox (root in CI), no network of its own, nothing to update.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
PASSWORDS = {"sue": "supervisor-pass", "dan": "dealer-pass-1"}
#: Longest wait for chips put on the sensor simulator to reach the journal (seconds; a bound, not a measure).
PLACE_PATIENCE = 20.0


def need_browser() -> None:
    """Fail (under CI) or skip (elsewhere, saying how to install) when Chromium or Playwright is missing."""
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"{CHROMIUM} (apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package (pip install -e '.[test]')")
    if missing:
        text = f"the dealer's screen tests need {' and '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(text + "; CI must run them (.ci/run installs Chromium)")
        pytest.skip(text)


def artifacts(name: str) -> Path:
    """A folder for screenshots: ``$CI_ARTIFACTS/name`` (kept by CI) or a new temporary folder."""
    root = os.environ.get("CI_ARTIFACTS")
    folder = Path(root) / name if root else Path(tempfile.mkdtemp(prefix=f"crisscross-{name}-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def operators_file(folder: Path) -> Path:
    """sue (supervisor) and dan (dealer) with the passwords of ``PASSWORDS``."""
    path = folder / "operators.yaml"
    if not path.exists():
        add_operator(path, "sue", "supervisor", PASSWORDS["sue"], iterations=MIN_ITERATIONS)
        add_operator(path, "dan", "dealer", PASSWORDS["dan"], iterations=MIN_ITERATIONS)
    return path


class Table:
    """A service whose devices are the simulators on ptys, with the control interface on ``port`` (0: any),
    running on its own thread; ``stop`` stops and closes it. ``heartbeat``: seconds between an idle event stream's
    heartbeats (the control interface's ``HEARTBEAT`` unless given). ``table``: fields of ``TableConfig`` to
    change."""

    def __init__(self, folder: Path, port: int = 0, seed: int = 5, heartbeat: float = HEARTBEAT,
                 **table: Any) -> None:
        config = dataclasses.replace(load_table_config(), **table)  # e.g. manual_dealing=True
        control = dataclasses.replace(config.control, enabled=True, port=port, operators=operators_file(folder))
        parts = dataclasses.replace(SERVICE_PARTS, control=functools.partial(ControlServer, heartbeat=heartbeat))
        self.service = Service(dataclasses.replace(config, control=control), journal_path=folder / "journal.jsonl",
                               out=io.StringIO(), seed=seed, parts=parts)
        self.thread = threading.Thread(target=self.service.run, name="service")
        self.thread.start()
        self.url = self.service.control.url
        self.port = self.service.control.port

    def place(self, layout: dict[int, dict[str, int]]) -> None:
        """Chips on the sensor simulator, then wait (at most ``PLACE_PATIENCE`` seconds) until the journal holds,
        for every spot named, a last ``SpotChanged`` with its amount (none for an empty spot never filled): the
        controller has taken them. ``AssertionError`` naming the spots still missing after the deadline."""
        for seat, wagers in layout.items():
            for spot, amount in wagers.items():
                self.service.sims["sensors"].place(seat, spot, amount)
        wanted = {(seat, spot): amount for seat, wagers in layout.items() for spot, amount in wagers.items()}
        deadline = time.monotonic() + PLACE_PATIENCE
        while True:
            last = {(r["data"]["seat"], r["data"]["spot"]): r["data"]["amount"]
                    for r in read_records(self.service.journal.path) if r["type"] == "SpotChanged"}
            missing = {key: amount for key, amount in wanted.items() if last.get(key, 0) != amount}
            if not missing:
                return
            assert time.monotonic() < deadline, f"the journal never showed the chips {missing}"
            time.sleep(0.05)  # a poll, not a wait for frames: the loop ends on the condition or the deadline

    def silent(self) -> contextlib.AbstractContextManager[None]:
        """For the block, the control interface as a stopped process leaves it (``held``), while the controller
        carries on (what it publishes waits for the loop)."""
        return held(self.service.control._loop)  # noqa: SLF001 - the one loop that serves every request and stream

    def stop(self) -> None:
        self.service.stop()
        self.thread.join(30)
        self.service.close()


@contextlib.contextmanager
def held(loop: Any) -> Iterator[None]:
    """For the block, a server's asyncio ``loop`` blocked (on its own thread), as a stopped process (``kill
    -STOP``) leaves the server: every connection stays open, new ones are accepted by the kernel, and nothing is
    answered or sent. The loop runs again after the block. ``AssertionError`` when the loop does not take the block
    within ``PLACE_PATIENCE`` seconds."""
    blocked, release = threading.Event(), threading.Event()

    def hold() -> None:
        blocked.set()
        release.wait()

    loop.call_soon_threadsafe(hold)
    try:
        assert blocked.wait(PLACE_PATIENCE), "the server's loop never took the block"
        yield
    finally:
        release.set()


def first_request(page: Any, pattern: str, url: str, patience_s: float = PLACE_PATIENCE) -> Any:
    """Open ``url`` in ``page`` with its first request to ``pattern`` (a Playwright glob) held in the browser: its
    ``Route``, to be sent on (``continue_()``) when the test chooses, e.g. once the server is stopped. The page's
    later requests go straight. ``AssertionError`` when the page does not ask within ``patience_s`` seconds."""
    asked: list[Any] = []
    page.route(pattern, lambda route: asked.append(route), times=1)
    page.goto(url)
    deadline = time.monotonic() + patience_s
    while not asked:
        assert time.monotonic() < deadline, f"the page never asked for {pattern}"
        page.wait_for_timeout(50)  # a poll (Playwright hands the route over meanwhile), not a wait for it
    return asked[0]


#: The axe-core release line the accessibility checks use (npm's ``axe-core``; its ``axe.min.js`` is injected).
AXE_PACKAGE = "axe-core@4"
#: Where ``axe_script`` keeps the file it fetched: ``$CRISSCROSS_AXE_CACHE`` or ``~/.cache/crisscross``.
AXE_CACHE = Path(os.environ.get("CRISSCROSS_AXE_CACHE", Path.home() / ".cache" / "crisscross"))


def axe_script() -> str:
    """The text of axe-core's ``axe.min.js``, fetched once with ``npm pack axe-core@4`` into ``AXE_CACHE`` (never
    kept in the repository). Without npm, or when the fetch fails, the test fails under CI (``CI`` set) and is
    skipped elsewhere, saying what is missing (docs/control.md, "Testing the screen")."""
    found = sorted(AXE_CACHE.glob("axe-core-*/axe.min.js"))
    if found:
        return found[-1].read_text(encoding="utf-8")
    npm = shutil.which("npm")
    problem = "npm (apt-get install -y npm)" if npm is None else ""
    if npm is not None:
        with tempfile.TemporaryDirectory() as work:
            done = subprocess.run([npm, "pack", AXE_PACKAGE, "--silent", "--pack-destination", work],
                                  capture_output=True, text=True, timeout=300, check=False)
            packed = sorted(Path(work).glob("axe-core-*.tgz"))
            if done.returncode or not packed:
                problem = f"`npm pack {AXE_PACKAGE}` (exit {done.returncode}: {done.stderr.strip()[-300:]})"
            else:
                folder = AXE_CACHE / packed[-1].name.removesuffix(".tgz")
                with tarfile.open(packed[-1]) as archive:
                    member = archive.extractfile("package/axe.min.js")
                    assert member is not None, f"{packed[-1].name} has no package/axe.min.js"
                    text = member.read().decode("utf-8")
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "axe.min.js").write_text(text, encoding="utf-8")
                return text
    message = f"the accessibility checks need axe-core's axe.min.js: {problem}"
    if os.environ.get("CI"):
        pytest.fail(message + "; CI must run them (.ci/run installs npm)")
    pytest.skip(message)


def axe_violations(page: Any, impacts: tuple[str, ...] = ("serious", "critical")) -> list[dict[str, Any]]:
    """axe-core run on ``page`` as it is now (injected on first use): the violations of the ``impacts`` given,
    each ``{"id", "impact", "help", "targets"}``."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_script())
    found = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']})).violations
        .map((v) => ({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' '))}))""")
    return [v for v in found if v["impact"] in impacts]
