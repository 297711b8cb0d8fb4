"""numba's cache of the par sheet's compiled loops (``controller.analysis.kernel_loops.compiled``): a loop is
compiled again when a ``kernel*.py`` file beside it changes, not only its own, and loops still compile and run
where no cache folder can be written.

The right values come from the functions' plain Python definitions, called without numba.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba.core import config
from numba.core.caching import NullCache

from controller.analysis import kernel_loops
from controller.analysis.kernel_loops import KernelCache, compiled

CHECKOUT = Path(__file__).resolve().parent.parent

OUTER = """\
from controller.analysis.kernel_loops import compiled
from kernel_inner import step


@compiled
def outer(x):
    return step(x) + 1
"""

INNER = """\
from controller.analysis.kernel_loops import inlined


@inlined
def step(x):
    return x * {factor}
"""

RUN = """\
import json, sys
sys.path.insert(0, sys.argv[1])
import kernel_outer
value = kernel_outer.outer(5)
stats = kernel_outer.outer.stats
print(json.dumps({"value": value, "hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values()),
                  "path": stats.cache_path}))
"""


def _run(folder: Path) -> dict:
    """``kernel_outer.outer(5)`` in a fresh interpreter, with numba's cache statistics of that call; the user's
    cache folder is ``folder / "cache"``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}  # numba's default cache folders
    env["PYTHONPATH"] = str(CHECKOUT)
    env["XDG_CACHE_HOME"] = str(folder / "cache")
    done = subprocess.run([sys.executable, "-c", RUN, str(folder)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_cached_loop_is_compiled_again_when_a_kernel_file_it_inlines_changes(tmp_path):
    (tmp_path / "kernel_outer.py").write_text(OUTER)
    (tmp_path / "kernel_inner.py").write_text(INNER.format(factor=2))
    first = _run(tmp_path)
    assert (first["value"], first["hits"], first["misses"]) == (5 * 2 + 1, 0, 1)
    # the user's cache folder, never numba's in-tree one (writable here): nothing written beside the sources
    assert Path(first["path"]).is_relative_to(tmp_path / "cache" / "numba"), first["path"]
    assert not (tmp_path / "__pycache__").exists() or not any(
        p.suffix in (".nbi", ".nbc") for p in (tmp_path / "__pycache__").iterdir())
    again = _run(tmp_path)
    assert (again["value"], again["hits"], again["misses"]) == (5 * 2 + 1, 1, 0)
    # only the inlined function's file changes: numba's own stamp (kernel_outer.py's source) still matches
    (tmp_path / "kernel_inner.py").write_text(INNER.format(factor=3))
    changed = _run(tmp_path)
    assert (changed["value"], changed["hits"], changed["misses"]) == (5 * 3 + 1, 0, 1)


def _plain(values):
    total = 0
    for v in values:
        total += v * v
    return total


def test_loops_compile_and_run_where_no_cache_folder_can_be_written(monkeypatch):
    monkeypatch.setattr(kernel_loops._KernelCacheImpl, "_locator_classes", [])  # as with no writable folder
    monkeypatch.setattr(config, "CACHE_LOCATOR_CLASSES", "", raising=False)
    loop = compiled(_plain)
    assert isinstance(loop._cache, NullCache)
    values = list(range(-7, 12))
    assert loop(np.array(values)) == _plain(values)


def test_the_par_sheet_loops_use_the_stamped_cache():
    from controller.analysis import kernel, kernel_account

    folder = Path(os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    if not os.access(folder if folder.exists() else folder.parent, os.W_OK):
        pytest.skip(f"{folder} cannot be written: numba uses no cache folder")
    for loop in (kernel.decision_values, kernel.line_tables, kernel_account.account, kernel_loops.pair_offsets):
        assert isinstance(loop._cache, KernelCache)
