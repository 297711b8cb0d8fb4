"""The command line's argument types (``argparse`` ``type=``): each takes the option's text and returns its value,
or raises ``argparse.ArgumentTypeError`` naming the text, which argparse prints as ``argument --X: ...`` with exit
status 2 (docs/commands.md, "Exit statuses"). Here, below every command, so that the commands of every layer
(``controller.cli``, ``controller.floor``) check a kind of value by one rule."""

from __future__ import annotations

import argparse
import math
import os
import unicodedata
from collections.abc import Callable, Collection
from decimal import Decimal, InvalidOperation
from pathlib import Path

from controller.settings.text import CONTROL_CATEGORIES


#: The largest count an option takes (rounds, hours, workers): a billion, more than any table plays or keeps;
#: beyond it a number is mistyped, and past 2**63 - 1 SQLite cannot even compare it (``OverflowError``).
MOST_COUNT = 10**9


def integer(text: str, most: int, expected: str) -> int:
    """``text`` as an integer from 1 to ``most``, else an ``ArgumentTypeError`` saying ``expected`` and the text
    (not a number included: argparse would otherwise name the type's function)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 0 < value <= most:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
    return value


def positive_int(text: str) -> int:
    """A positive integer of at most ``MOST_COUNT``, else an ``ArgumentTypeError`` naming the text."""
    return integer(text, MOST_COUNT, f"a positive integer of at most {MOST_COUNT:,}")


def positive_int_at_most(most: int) -> Callable[[str], int]:
    """The argument type of a positive integer of at most ``most`` (a count whose work or memory grows with it,
    past what the command can give), refusing as ``positive_int`` does."""
    return lambda text: integer(text, most, f"a positive integer of at most {most:,}")


#: Worker processes an option takes, per processor this process may run on: more only wait their turn, each
#: holding its own copy of the tables (about 100 MB), so that a mistyped count fills the memory, not the processors.
WORKERS_PER_PROCESSOR = 4


def processors() -> int:
    """The processors this process may run on (its CPU affinity; the machine's count where there is none)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


def workers(text: str) -> int:
    """A number of worker processes (``--workers``): a positive integer of at most ``WORKERS_PER_PROCESSOR`` for
    each of the ``processors()``, else an ``ArgumentTypeError`` naming the text and the bound."""
    most = WORKERS_PER_PROCESSOR * processors()
    return integer(text, most, f"a number of processes from 1 to {most} ({WORKERS_PER_PROCESSOR} for each of the "
                               f"{processors()} processors this command may use)")


def number(text: str, accept: Callable[[float | Decimal], bool], expected: str) -> float:
    """``text`` as a float that ``accept`` takes, and whose exact decimal value it takes too (so that
    ``1.00000000000000001`` is above 1, where its float is 1.0, and ``1e-400``, whose float is 0.0, is not above
    0), else an ``ArgumentTypeError`` saying ``expected`` and the text (not a number and NaN refused alike)."""
    try:
        exact = Decimal(text)
        value = float(text)
    except (InvalidOperation, ValueError):
        exact = Decimal("NaN")
    if exact.is_nan() or not (accept(exact) and accept(value)):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0 (seconds, for one), else an ``ArgumentTypeError`` naming the text."""
    return number(text, lambda v: 0.0 < v < math.inf, "a number above 0")


#: The most seconds a duration option takes (``--for``, ``--every``): about three years, within what a timer's
#: wait can hold (a wait of 1e10 s overflows the platform's time).
MAX_SECONDS = 1e8


def seconds(text: str) -> float:
    """A number of seconds above 0, at most ``MAX_SECONDS`` (``--for``, ``--every``), else an
    ``ArgumentTypeError`` naming the text."""
    return number(text, lambda v: 0.0 < v <= MAX_SECONDS, f"seconds, a number above 0 and at most {MAX_SECONDS:g}")


def seconds_or_none(text: str) -> float:
    """A number of seconds from 0 to ``MAX_SECONDS`` (a ``--for`` of 0: one look, no waiting), else an
    ``ArgumentTypeError`` naming the text."""
    return number(text, lambda v: 0.0 <= v <= MAX_SECONDS, f"seconds, a number from 0 to {MAX_SECONDS:g}")


def file_path(text: str) -> Path:
    """A file's path: not empty and not naming a folder by its trailing ``/`` (``--journal``), else an
    ``ArgumentTypeError`` naming the text."""
    if not text.strip() or text.endswith(("/", "/.", "/..")) or text in (".", ".."):
        raise argparse.ArgumentTypeError(f"expected a file's path, got {text!r}")
    return Path(text)


def probability(text: str) -> float:
    """A probability from 0 to 1, else an ``ArgumentTypeError`` naming the text."""
    return number(text, lambda v: 0.0 <= v <= 1.0, "a probability from 0 to 1")



def device_ports(items: list[str], devices: Collection[str]) -> dict[str, str]:
    """The ports of ``run --port DEVICE=PORT`` (``items`` as given) by device: each device one of ``devices``
    (the table's), given once, its port not empty and holding no control or format character
    (``controller.settings.text.CONTROL_CATEGORIES``, the rule of a port in table.yaml: a port is logged and
    shown). Raises ``ConfigError`` naming the item (escaped) and what is wrong."""
    from controller.settings.files import ConfigError

    ports: dict[str, str] = {}
    for item in items:
        device, sep, port = item.partition("=")
        if not sep or device not in devices or not port:
            raise ConfigError(f"--port {item!r}: expected DEVICE=PORT with DEVICE one of {', '.join(devices)}")
        if device in ports:
            raise ConfigError(f"--port {device}= given twice ({ports[device]!r} and {port!r})")
        bad = next((char for char in port if unicodedata.category(char) in CONTROL_CATEGORIES), None)
        if bad is not None:
            raise ConfigError(f"--port {item!r}: the port holds the control character U+{ord(bad):04X}")
        ports[device] = port
    return ports
