"""Debian's Chromium driven by Playwright for the dealer's screen tests, and a service to point it at.

Chromium is the distribution's package (``apt-get install -y chromium``, /usr/bin/chromium), launched by the
``playwright`` package from PyPI with ``executable_path``; Playwright's own browser download is never used. On a
machine without Chromium the browser tests are skipped with the command that installs it, except under CI
(``CI`` set), where a missing browser is a failure (docs/control.md, "Testing the screen").
"""

from __future__ import annotations

import dataclasses
import io
import os
import tempfile
import threading
import time
from pathlib import Path

import pytest

from controller.cli.parts import SERVICE_PARTS
from controller.control.operators import MIN_ITERATIONS, add_operator
from controller.game.table import load_table_config
from controller.service.assembly import Service

CHROMIUM = Path("/usr/bin/chromium")
#: Chromium's switches: headless without a sandbox (root in CI), no network of its own, nothing to update.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
PASSWORDS = {"sue": "supervisor-pass", "dan": "dealer-pass-1"}


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
    running on its own thread; ``stop`` stops and closes it."""

    def __init__(self, folder: Path, port: int = 0, seed: int = 5) -> None:
        config = load_table_config()
        control = dataclasses.replace(config.control, enabled=True, port=port, operators=operators_file(folder))
        self.service = Service(dataclasses.replace(config, control=control), journal_path=folder / "journal.jsonl",
                               out=io.StringIO(), seed=seed, parts=SERVICE_PARTS)
        self.thread = threading.Thread(target=self.service.run, name="service")
        self.thread.start()
        self.url = self.service.control.url
        self.port = self.service.control.port

    def place(self, layout: dict[int, dict[str, int]]) -> None:
        """Chips on the sensor simulator, then a moment for their frames to reach the controller."""
        for seat, wagers in layout.items():
            for spot, amount in wagers.items():
                self.service.sims["sensors"].place(seat, spot, amount)
        time.sleep(0.3)

    def stop(self) -> None:
        self.service.stop()
        self.thread.join(30)
        self.service.close()
