"""The peak resident memory of a benchmark's child process, measured for the child alone.

``os.wait4`` (or ``getrusage(RUSAGE_CHILDREN)``) of a child started by a benchmark reports a ``ru_maxrss`` that,
on Linux, counts the benchmark's own resident memory: the fork copies the parent's page tables and the exec keeps
their high-water mark (``setmax_mm_hiwater_rss`` in ``fs/exec.c``). A benchmark holding 86 MiB of history reports
86 MiB for a child that peaked at 58 MiB. Here the child is started by a small parent instead: GNU time
(``/usr/bin/time -f %M``) when it is installed, else ``LAUNCHER``, a ``python -S -c`` of a few lines that imports
nothing but ``os`` and ``sys`` (about 10 MiB resident at its fork, below any child measured). The small parent
writes the child's ``ru_maxrss`` in KiB to a file.

    argv = measured(["python", "-m", "controller", ...], report)   # run argv with subprocess as usual
    ...
    kib = peak_kib(report)                                         # once it has exited
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

#: GNU time, when installed: ``-f %M`` is the child's peak resident set size in KiB (time(1)).
GNU_TIME = shutil.which("time", path="/usr/bin:/bin")

#: The fallback parent: ``python -S -c LAUNCHER REPORT ARGV...`` forks, executes ``ARGV`` in the child, waits for
#: it, writes its ``ru_maxrss`` (KiB on Linux) to ``REPORT`` and exits with its status (128 + N for signal N).
LAUNCHER = """\
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as exc:
        print(f"cannot run {sys.argv[2]}: {exc}", file=sys.stderr)
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as report:
    report.write(f"{usage.ru_maxrss}\\n")
code = os.waitstatus_to_exitcode(status)
sys.exit(128 - code if code < 0 else code)
"""


def measured(argv: list[str], report: Path, *, gnu_time: str | None = GNU_TIME) -> list[str]:
    """``argv`` run through a small parent that writes the child's own peak resident memory (KiB) to
    ``report``; ``gnu_time`` the path of GNU time (None: the Python launcher). The exit status is the child's."""
    if gnu_time:
        return [gnu_time, "-f", "%M", "-o", str(report), *argv]
    return [sys.executable, "-S", "-c", LAUNCHER, str(report), *argv]


def peak_kib(report: Path) -> int:
    """The peak resident memory (KiB) the small parent of ``measured`` wrote to ``report`` (its last word: GNU
    time writes a line about a non-zero exit status first). Raises ``ValueError`` for a report without one."""
    words = Path(report).read_text(encoding="utf-8").split()
    if not words or not words[-1].isdigit():
        raise ValueError(f"{report}: no peak memory written ({' '.join(words)[:80]!r})")
    return int(words[-1])
