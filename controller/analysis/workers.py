"""Worker processes for the long computations (the par sheet, the variance, the detector's tables, its measures
and the simulations): ``worker_pool``, a ``concurrent.futures.ProcessPoolExecutor`` that stops at once at Ctrl-C.

Ctrl-C at a terminal sends SIGINT to every process of the foreground group: the command and its workers. A
worker of a plain pool turns it into ``KeyboardInterrupt`` inside its job, sends that back as the job's result
and takes the next job, while the command, leaving its ``with`` block, waits for every job queued: minutes or
hours. Here a worker ends at SIGINT at once and says nothing (the command says it was interrupted:
``controller.cli.main``), and a command that leaves its pool on an exception cancels the jobs not started.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

#: The start method of the pools: ``fork`` where the platform has it (the workers inherit what the parent built,
#: numba's compiled code loaded), else the platform's default.
START_METHOD = "fork" if "fork" in multiprocessing.get_all_start_methods() else None


def _stop_at_interrupt(signum: int, frame: Any) -> None:
    os._exit(128 + signum)  # no traceback of a worker: the command reports the interruption once


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, _stop_at_interrupt)
    if initializer is not None:
        initializer(*initargs)


@contextmanager
def worker_pool(workers: int, *, initializer: Callable[..., None] | None = None,
                initargs: tuple[Any, ...] = ()) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` processes (``START_METHOD``), each running ``initializer(*initargs)`` first; a
    worker ends at SIGINT at once, exit status 130. Leaving the block normally waits for every job; leaving it on
    an exception (``KeyboardInterrupt`` at Ctrl-C, a job's error) cancels the jobs not started and waits only for
    those running, then lets the exception go on. Raises what ``ProcessPoolExecutor`` raises (``ValueError`` for
    ``workers`` below 1)."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(START_METHOD),
                               initializer=_start_worker, initargs=(initializer, initargs))
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
