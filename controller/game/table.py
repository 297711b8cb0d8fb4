"""The table: its configuration (``config/table.yaml``) and the wager rules of a seat.

Wager rules (sources): two antes of equal amount and an optional five-card bonus, placed before "no more bets"
(NY 9 NYCRR 5324.39(c)(3),(c)(4),(e)(1)); the across, down and middle bets are each one of the jurisdiction's
allowed multiples of the ante (NY (c)(4),(e)(3),(e)(5),(e)(7); PA 58 Pa. Code 674a.11(b),(d),(f)); a player who
declines a bet forfeits and makes no later bet (NY (e)(3)-(7)); per-wager table limits from ``table.yaml``.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.game.cards import short
from controller.game.payout import PayoutConfig, parse_payout_config
from controller.game.paytable import CODE, known_codes
from controller.settings.control import ControlConfig, parse_control_config
from controller.settings.files import (CONFIG_DIR, check_keys, error, line_of, load_yaml, require_int, require_text,
                                       state_dir)
from controller.settings.floor import FloorConfig, parse_floor_config
from controller.settings.text import CONTROL_CATEGORIES, path_shown
from drivers.events import SEATS, SPOTS
from drivers.sensors.protocol import MAX_AMOUNT
from drivers.timing import LinkTiming

#: Wager names; the same as the spot names (NY 5324.39(a)(2)(i)).
WAGERS: tuple[str, ...] = SPOTS
#: The three decisions in the order they are taken (NY 5324.39(e)(3),(5),(7)).
DECISIONS: tuple[str, ...] = ("across", "down", "middle")
ANTES: tuple[str, ...] = ("ante_across", "ante_down")
#: The gaming day's start when table.yaml names none (``gaming_day_start``), local time.
DEFAULT_DAY_START = dt.time(6, 0)
_WAGER_NAMES = frozenset(WAGERS)
#: The ``limits`` entry of table.yaml each wager follows: the across, down and middle bets have no limits of their
#: own, they follow the ante (one to three times it, NY 9 NYCRR 5324.39(c)(4)).
LIMIT_OF: dict[str, str] = {"five_card_bonus": "five_card_bonus", "ante_across": "ante", "ante_down": "ante",
                            "across": "ante", "down": "ante", "middle": "ante"}


class WagerError(ValueError):
    """A wager that breaks a rule. ``seat`` (int or None) and ``field`` (e.g. ``"wagers.across"``) say where."""

    def __init__(self, seat: int | None, field: str, message: str) -> None:
        self.seat = seat
        self.field = field
        self.reason = message
        prefix = f"seat {seat}: " if seat is not None else ""
        super().__init__(f"{prefix}{field}: {message}")


@dataclass(frozen=True)
class Limits:
    """Minimum and maximum of one wager, in minor units; ``line``: the line of ``max`` in the table file (None when
    not read from one), for the messages of ``controller.game.capacity.check_capacity``."""

    min: int
    max: int
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class DeviceConfig:
    """One device: the driver's name and its port (a path, a pySerial URL, or ``simulator``); ``identity`` is
    the device id its IDENT reply must carry (None: the id seen at the first handshake) and ``search`` the
    glob patterns of ports where the driver looks for it after a loss (docs/protocol.md, "Link loss and
    reconnection")."""

    driver: str
    port: str
    identity: str | None = None
    search: tuple[str, ...] = ()


#: ``timing:`` keys of table.yaml -> ``drivers.timing.LinkTiming`` fields (docs/protocol.md, "Timing").
TIMING_KEYS: dict[str, str] = {
    "handshake_timeout_s": "handshake_timeout",
    "response_timeout_s": "response_timeout",
    "response_timeout_max_s": "response_timeout_max",
    "retries": "retries",
    "heartbeat_interval_s": "heartbeat_interval",
    "link_silence_s": "link_silence",
    "reconnect_min_s": "reconnect_min",
    "reconnect_max_s": "reconnect_max",
    "write_timeout_s": "write_timeout",
}


#: The journal's file name in the state directory, for a table file that names no ``journal``.
JOURNAL_NAME = "journal.db"
#: The folder of the state directory where simulated play (``crisscross run --simulate``) keeps its own journal,
#: never the table's.
SIMULATED = "simulated"

#: Longest ``table_id``: it is shown on the panel and written into every journal record.
MAX_TABLE_ID = 64
#: Most ``timing.retries`` (sends after the first). With the default waits 20 retries already keep a request
#: unanswered for over a minute; beyond that a device is not coming back by being asked again.
MAX_RETRIES = 20


@dataclass(frozen=True)
class TableConfig:
    """The contents of ``table.yaml`` (see the file for each key's meaning). Amounts are minor units."""

    table_id: str
    jurisdiction: str
    seats: tuple[int, ...]
    ante_limits: Limits
    bonus_limits: Limits
    journal: Path
    devices: dict[str, DeviceConfig]
    source: Path = field(default=CONFIG_DIR / "table.yaml")
    #: Every link timing value, a value not written at its default (docs/protocol.md, "Timing"), for the drivers.
    timing: LinkTiming = field(default_factory=LinkTiming)
    control: ControlConfig = field(default_factory=ControlConfig)  # the control interface (docs/control.md)
    #: ``metrics: {port: N}``: serve Prometheus metrics on 127.0.0.1:N (docs/operations.md); None: off
    metrics_port: int | None = None
    #: The journal key (``controller.journal.key``; ``crisscross journal init-key``), None when not configured.
    journal_key: Path | None = None
    #: ``payout:``: the dealer's payouts checked by the bet sensors before the round closes (controller.game.payout)
    payout: PayoutConfig = field(default_factory=PayoutConfig)
    #: ``floor:``: publishing to the floor's MQTT broker (``controller.floor``, docs/floor.md); off by default.
    floor: FloorConfig = field(default_factory=FloorConfig)
    #: ``manual_dealing: true``: a supervisor may switch the table to dealing by hand or from a manual dealing
    #: shoe when the automated shoe is down (NY 9 NYCRR 5324.39(d)(1); ``controller.round.manual``). Default false.
    manual_dealing: bool = False
    #: ``gaming_day_start: "HH:MM"``: when the gaming day begins, local time; its close journals the meters
    #: (NJ 13:69E-1.28C; ``controller.service.meters_snapshot``). Default ``DEFAULT_DAY_START``.
    gaming_day_start: dt.time = DEFAULT_DAY_START


def load_table_config(path: Path = CONFIG_DIR / "table.yaml") -> TableConfig:
    """Load and check ``table.yaml``.

    ``jurisdiction`` is a code (``ny``; looked up by ``controller.service.opening.jurisdiction_for``) or the path of a
    jurisdiction file, relative to this file's folder like ``journal`` and ``control.operators``; it is kept
    as the resolved path. Without ``journal`` the table's journal is ``JOURNAL_NAME`` in the state directory
    (``controller.settings.files.state_dir``: ``$STATE_DIRECTORY`` under systemd).
    Raises ``ConfigError`` naming the file, the line and the key (``"{file}: line {n}: {key path}: {what is
    wrong}"``) for a missing/unknown key, a ``table_id`` that is empty, longer than ``MAX_TABLE_ID`` or holds a
    control character, a jurisdiction code with no file or a path that cannot be read, seats that are not a
    list of distinct seats 1-6, limits that are not positive integers with min <= max or with a max above
    ``MAX_AMOUNT`` (what the limits let a spot hold with the pay tables is checked when the jurisdiction is
    loaded: ``controller.service.opening.jurisdiction_for``), a ``journal`` that is
    not a file path (non-blank text: ``journal:`` left empty is refused, not a file named ``None``), an
    unknown device driver, a device ``port`` or ``identity`` that is not non-blank text, a ``search`` that is
    not a list of glob patterns (text), a timing value that is not a number of seconds above 0 and below 3600,
    ``retries`` outside 1 to ``MAX_RETRIES``, a ``manual_dealing`` that is not true or false, a timing ceiling
    below its floor, a ``link_silence_s`` not above
    ``heartbeat_interval_s`` or a ``control:`` section that ``controller.settings.control.parse_control_config`` refuses
    (a host off loopback) or a ``floor:`` section that ``controller.settings.floor.parse_floor_config`` refuses.
    """
    path = Path(path)
    data = load_yaml(path)
    check_keys(path, "top level", data, {"table_id", "jurisdiction", "seats", "limits", "devices"},
               {"timing", "control", "journal", "journal_key", "metrics", "payout", "floor", "manual_dealing",
                "gaming_day_start"})
    table_id = _table_id(path, data)
    jurisdiction = _jurisdiction(path, data)
    seats = data["seats"]
    seats_line = line_of(data, "seats")
    if not isinstance(seats, list) or not seats or len(set(map(str, seats))) != len(seats):
        raise error(path, "seats", f"expected a list of distinct seat numbers, got {seats!r}", seats_line)
    for s in seats:
        if require_int(path, "seats", s, line=seats_line) not in SEATS:
            raise error(path, "seats", f"{s} is not a seat (1-6, NY 5324.39(a)(1))", seats_line)
    limits = data["limits"]
    check_keys(path, "limits", limits, {"ante", "five_card_bonus"})
    ante_limits, bonus_limits = (_limits(path, f"limits.{k}", limits[k]) for k in ("ante", "five_card_bonus"))
    if "journal" in data:  # a relative path is relative to this file's folder
        journal = path.parent / require_text(path, "journal", data["journal"], "a file path", line_of(data, "journal"))
    else:
        journal = state_dir() / JOURNAL_NAME
    journal_key = data.get("journal_key")
    if journal_key is not None:
        journal_key = path.parent / require_text(path, "journal_key", journal_key, "a file path",
                                                 line_of(data, "journal_key"))
    devices = data["devices"]
    check_keys(path, "devices", devices, {"shoe", "sensors", "panel"}, {"reader"})  # reader: optional (manual.py)
    device_configs = {name: _device(path, name, entry) for name, entry in devices.items()}
    manual_dealing = data.get("manual_dealing", False)
    if not isinstance(manual_dealing, bool):
        raise error(path, "manual_dealing", f"expected true or false, got {manual_dealing!r}",
                    line_of(data, "manual_dealing"))
    timing = {} if data.get("timing") is None else data["timing"]  # ``timing:`` left empty: the defaults
    link_timing = _timing(path, timing)
    return TableConfig(
        table_id=table_id,
        jurisdiction=jurisdiction,
        seats=tuple(sorted(seats)),
        ante_limits=ante_limits,
        bonus_limits=bonus_limits,
        journal=journal,
        devices=device_configs,
        source=path,
        timing=link_timing,
        control=parse_control_config(path, data.get("control")),
        metrics_port=_metrics_port(path, data.get("metrics")),
        journal_key=journal_key,
        payout=parse_payout_config(path, data.get("payout"), "payout" in data, line_of(data, "payout")),
        floor=parse_floor_config(path, data.get("floor"), table_id),
        manual_dealing=manual_dealing,
        gaming_day_start=_day_start(path, data),
    )


def _day_start(path: Path, data: dict) -> dt.time:
    """``gaming_day_start: "HH:MM"`` (24-hour, local time; quoted: YAML reads an unquoted 06:00 otherwise), or
    ``DEFAULT_DAY_START`` when absent. Raises ``ConfigError`` naming the line for anything else."""
    text = data.get("gaming_day_start")
    if text is None:
        return DEFAULT_DAY_START
    hours, _, minutes = str(text).partition(":") if isinstance(text, str) else ("", "", "")
    if len(hours) == len(minutes) == 2 and hours.isdigit() and minutes.isdigit() \
            and int(hours) < 24 and int(minutes) < 60:
        return dt.time(int(hours), int(minutes))
    raise error(path, "gaming_day_start", f"expected a time of day \"HH:MM\" (24-hour, local time), got {text!r}",
                line_of(data, "gaming_day_start"))


def _metrics_port(path: Path, entry: Any) -> int | None:
    """``metrics: {port: N}`` (1-65535; 0 takes any free port) or absent (None: no metrics served)."""
    if entry is None:
        return None
    check_keys(path, "metrics", entry, {"port"})
    port = require_int(path, "metrics.port", entry["port"], 0, line_of(entry, "port"), 65535)
    return port


def _device(path: Path, name: str, entry: Any) -> DeviceConfig:
    """``devices.NAME``: ``driver`` (the device's own), ``port`` (text), optional ``identity`` (text) and
    ``search`` (a list of glob patterns, each text). Raises ``ConfigError`` with file, line and key."""
    where = f"devices.{name}"
    check_keys(path, where, entry, {"driver", "port"}, {"identity", "search"})
    driver = entry["driver"]
    if driver not in ("shoe", "sensors", "panel", "reader"):
        raise error(path, f"{where}.driver", f"unknown driver {driver!r}", line_of(entry, "driver"))
    if driver != name:
        raise error(path, f"{where}.driver", f"the {name} needs the {name} driver, not {driver!r}",
                    line_of(entry, "driver"))
    port = require_text(path, f"{where}.port", entry["port"], "a port (a path, a pySerial URL or simulator)",
                        line_of(entry, "port"))
    identity = entry.get("identity")
    if identity is not None or "identity" in entry:  # ``identity:`` left empty is no device id either
        identity = require_text(path, f"{where}.identity", identity, "a device id", line_of(entry, "identity"))
    search = entry.get("search", [])
    if not isinstance(search, list):
        raise error(path, f"{where}.search", f"expected a list of glob patterns, got {search!r}",
                    line_of(entry, "search"))
    for i, pattern in enumerate(search):
        require_text(path, f"{where}.search[{i}]", pattern, "a glob pattern", line_of(entry, "search"))
    return DeviceConfig(driver, port, identity, tuple(search))


#: Pairs of ``timing:`` keys whose second must be at least (``>=``) or above (``>``) the first.
_TIMING_ORDER: tuple[tuple[str, str, str], ...] = (
    ("response_timeout_s", "response_timeout_max_s", ">="),
    ("reconnect_min_s", "reconnect_max_s", ">="),
    ("heartbeat_interval_s", "link_silence_s", ">"),
)


def _timing(path: Path, timing: Any) -> LinkTiming:
    """``timing:``: each key of ``TIMING_KEYS`` optional; seconds above 0 and below 3600, ``retries`` 1 to
    ``MAX_RETRIES``; a ceiling not below its floor and ``link_silence_s`` above ``heartbeat_interval_s``
    (``_TIMING_ORDER``, values not written taken at their defaults). Raises ``ConfigError`` with file, line and
    the file's key names."""
    check_keys(path, "timing", timing, set(), set(TIMING_KEYS))
    for key in TIMING_KEYS:
        if key == "retries" or key not in timing:
            continue
        value = timing[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 3600:
            raise error(path, f"timing.{key}", f"expected a number of seconds above 0 and below 3600, got {value!r}",
                        line_of(timing, key))
    defaults = LinkTiming()  # a value not written: the protocol's default (docs/protocol.md, "Timing")
    require_int(path, "timing.retries", timing.get("retries", defaults.retries), 1, line_of(timing, "retries"),
                MAX_RETRIES)
    values = {key: timing.get(key, getattr(defaults, name)) for key, name in TIMING_KEYS.items()}
    for low, high, order in _TIMING_ORDER:
        if order == ">=" and values[high] < values[low]:
            problem = f"{high} {values[high]} is below {low} {values[low]}"
        elif order == ">" and values[high] <= values[low]:
            problem = f"{high} {values[high]} must exceed {low} {values[low]}"
        else:
            continue
        keys = [k for k in (high, low) if k in timing]  # the line of a value written, the ceiling first
        raise error(path, "timing", problem, line_of(timing, keys[0]) if keys else line_of(timing))
    try:
        return LinkTiming(**{TIMING_KEYS[k]: v for k, v in values.items()})
    except ValueError as exc:  # every check of LinkTiming is made above; kept so a new one names the file
        raise error(path, "timing", str(exc), line_of(timing)) from None


def table_id_problem(table_id: Any, limit: int = MAX_TABLE_ID) -> str | None:
    """What is wrong with ``table_id`` as a table's id, or None when it is one: text of 1 to ``limit`` characters
    (``MAX_TABLE_ID`` by default), not only blanks, none of them of ``CONTROL_CATEGORIES`` (a newline, a NUL, a
    direction override such as U+202E or a zero-width space U+200B would garble the panel, the journal, the pit
    page and the reports, or make two ids look alike). The one rule of a table id: table.yaml's ``table_id``
    here, and the back office's store and reports (``controller.floor.topics.table_id_problem``)."""
    if not isinstance(table_id, str) or not table_id.strip():
        shown = repr(table_id) if isinstance(table_id, str) else short(table_id, 80)
        return f"expected the table's name (text), got {shown}"
    if len(table_id) > limit:
        return f"{len(table_id)} characters, above the maximum {limit} ({table_id[:20]!r}...)"
    bad = next((c for c in table_id if unicodedata.category(c) in CONTROL_CATEGORIES), None)
    if bad is not None:
        return f"{table_id!r} holds the control character U+{ord(bad):04X}"
    return None


def _table_id(path: Path, data: dict) -> str:
    """``table_id``: a table id by ``table_id_problem``; ``ConfigError`` naming the file and line otherwise."""
    table_id = data["table_id"]
    problem = table_id_problem(table_id)
    if problem is not None:
        raise error(path, "table_id", problem, line_of(data, "table_id"))
    return table_id


def jurisdictions_home(table_path: Path) -> Path:
    """The folder whose ``jurisdictions/`` holds the jurisdiction codes of the table file at ``table_path``:
    the table file's own folder when it has a ``jurisdictions`` folder (a copied configuration), else
    ``CONFIG_DIR``. Pass it as ``config_dir`` to ``controller.game.paytable.load_jurisdiction``."""
    here = Path(table_path).parent
    return here if (here / "jurisdictions").is_dir() else CONFIG_DIR


def _jurisdiction(path: Path, data: dict) -> str:
    """``jurisdiction``: a code (letters, as ``load_jurisdiction`` takes them, with a file in the jurisdictions
    folder beside ``path`` or else in ``config/``) unless a file of that name is beside ``path``; otherwise a
    file path, relative to ``path``'s folder, that must be readable."""
    line = line_of(data, "jurisdiction")
    text = require_text(path, "jurisdiction", data["jurisdiction"], "a jurisdiction code or file path", line)
    here = path.parent / text  # an absolute path stays as written
    try:
        if CODE.fullmatch(text) and not here.is_file():
            home = jurisdictions_home(path)  # where the service will look it up
            if text.lower() not in known_codes(home):
                known = ", ".join(known_codes(home)) or "none"
                raise error(path, "jurisdiction", f"unknown jurisdiction {text!r} (known in "
                            f"{path_shown(home / 'jurisdictions')}: {known})", line)
            return text
        if here.exists() and not here.is_file():  # a folder, or a FIFO that would block the open
            raise error(path, "jurisdiction", f"cannot read {path_shown(here)}: not a regular file", line)
        open(here, "rb").close()  # readable now: the service loads it at start
    except OSError as exc:  # no such file, no permission, a name too long
        raise error(path, "jurisdiction", f"cannot read {path_shown(here)}: {exc.strerror or exc}", line) from None
    return str(here)


def _limits(path: Path, where: str, entry: Any) -> Limits:
    """``limits.NAME`` (``where``): ``min`` and ``max``, positive integers of minor units, min <= max, max at most
    ``MAX_AMOUNT``. Raises ``ConfigError`` with file, line and key."""
    check_keys(path, where, entry, {"min", "max"})
    low = require_int(path, f"{where}.min", entry["min"], 1, line_of(entry, "min"))
    high = require_int(path, f"{where}.max", entry["max"], 1, line_of(entry, "max"))
    if low > high:
        raise error(path, where, f"min {short(low)} is above max {short(high)}", line_of(entry))
    if high > MAX_AMOUNT:  # an amount, bounded as at every door (``check_amount``); what a spot may then have to
        # hold with the bets and the payouts is judged with the pay tables (controller.game.capacity)
        raise error(path, where, f"max {short(high)} is above {MAX_AMOUNT} (the bet sensors report at most "
                                 f"{MAX_AMOUNT} per spot)", line_of(entry, "max"))
    return Limits(low, high, line_of(entry, "max"))


def check_amount(seat: int | None, name: str, amount: Any) -> int:
    """Return ``amount`` if it is a positive integer number of minor units of at most ``MAX_AMOUNT`` (what a bet
    sensor can report, drivers/sensors/protocol.py; times the largest odds accepted, 1,000,000 to 1, a payout
    stays below 2**53, the largest integer every JSON reader keeps exactly); else raise ``WagerError`` naming
    the seat and the wager. Money enters at three doors, each bounded the same way: the bet sensors, the
    ``table.yaml`` limits (``_limits``) and ``crisscross settle``."""
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise WagerError(seat, f"wagers.{name}", f"amount must be an integer number of minor units, got {short(amount)}")
    if amount <= 0:
        raise WagerError(seat, f"wagers.{name}", f"amount must be positive, got {short(amount)}")
    if amount > MAX_AMOUNT:
        raise WagerError(seat, f"wagers.{name}", f"amount must be at most {MAX_AMOUNT} minor units, got {short(amount)}")
    return amount


def check_wagers(seat: int, wagers: Mapping[str, Any], bet_multiples: tuple[int, ...]) -> dict[str, int]:
    """Check one seat's wagers of a round (placed so far or final) against the game's rules.

    ``wagers`` maps wager names (``WAGERS``) to amounts in minor units; a decision bet absent means the seat
    folded there or has not decided yet. Checks: known names, positive integer amounts, both antes present and
    equal (NY 5324.39(c)(4),(e)(1)), a five-card bonus only with antes, each bet an allowed multiple of the ante
    (NY (c)(4)), and no bet after a fold (NY (e)(3)-(7)). Returns the wagers as a plain dict in ``WAGERS`` order.
    Raises ``WagerError`` naming the seat and field.
    """
    if type(wagers) is not dict and not isinstance(wagers, Mapping):
        raise WagerError(seat, "wagers", f"expected a mapping of wager names to amounts, got {type(wagers).__name__}")
    if not _WAGER_NAMES.issuperset(wagers):
        for name in wagers:
            if name not in _WAGER_NAMES:
                raise WagerError(seat, f"wagers.{name}", f"unknown wager (known: {', '.join(WAGERS)})")
    checked = {}
    for name in WAGERS:
        if name in wagers:
            amount = wagers[name]
            checked[name] = amount if type(amount) is int and 0 < amount <= MAX_AMOUNT else check_amount(seat, name, amount)
    if checked.keys().isdisjoint(ANTES):
        if checked:
            first = next(iter(checked))
            raise WagerError(seat, f"wagers.{first}", "placed without the two antes")
        raise WagerError(seat, "wagers", "no wagers: a playing seat places two antes")
    for name in ANTES:
        if name not in checked:
            raise WagerError(seat, f"wagers.{name}", "missing: both antes are required and equal (NY 5324.39(e)(1))")
    ante = checked["ante_across"]
    if checked["ante_down"] != ante:
        raise WagerError(seat, "wagers.ante_down", f"{checked['ante_down']} differs from ante_across {ante}: antes must be equal")
    folded_at = None
    for name in DECISIONS:
        if name not in checked:
            folded_at = folded_at or name
            continue
        if folded_at is not None:
            raise WagerError(seat, f"wagers.{name}", f"bet after a fold at the {folded_at} decision")
        amount = checked[name]
        if amount % ante or amount // ante not in bet_multiples:  # not m * ante for an allowed m
            check_bet(seat, name, amount, ante, bet_multiples)  # raises, naming the allowed amounts
    return checked


def check_bet(seat: int | None, name: str, amount: int, ante: int, bet_multiples: tuple[int, ...]) -> None:
    """Check that a decision bet is one of the allowed multiples of the ante (NY 5324.39(c)(4)).

    Raises ``WagerError`` naming the seat, the bet and the allowed amounts.
    """
    if ante > 0 and amount % ante == 0 and amount // ante in bet_multiples:  # amount is m * ante, m allowed
        return
    allowed = [m * ante for m in bet_multiples]
    if amount not in allowed:
        names = ", ".join(f"{m}x" for m in bet_multiples)
        raise WagerError(seat, f"wagers.{name}", f"{amount} is not {names} the ante {ante} (allowed: {allowed})")


def check_limits(seat: int, wagers: Mapping[str, int], config: TableConfig) -> None:
    """Check a seat's antes and five-card bonus (minor units) against the table limits of ``config``
    (``limits`` in ``table.yaml``: ``ante`` applies to each of the two antes, ``five_card_bonus`` to the bonus).

    The across, down and middle bets have no limits of their own: they are one to three times the ante (NY 9
    NYCRR 5324.39(c)(4)), so the ante limits bound them. Raises ``WagerError`` naming the seat, the wager, the
    amount and the limit it breaks (e.g. ``seat 3: wagers.ante_across: 400 is below the table minimum 500``).
    """
    for name in ("ante_across", "ante_down", "five_card_bonus"):
        amount = wagers.get(name)
        if amount is None:
            continue
        limits = limits_of(config, name)
        if amount < limits.min:
            raise WagerError(seat, f"wagers.{name}", f"{amount} is below the table minimum {limits.min}")
        if amount > limits.max:
            raise WagerError(seat, f"wagers.{name}", f"{amount} is above the table maximum {limits.max}")


def limits_of(config: TableConfig, wager: str) -> Limits:
    """The limits (minor units) of ``config``'s ``limits`` entry that ``wager`` (a name of ``WAGERS``) follows
    (``LIMIT_OF``): ``ante_limits`` or ``bonus_limits``. Raises ``KeyError`` for an unknown wager."""
    return config.bonus_limits if LIMIT_OF[wager] == "five_card_bonus" else config.ante_limits
