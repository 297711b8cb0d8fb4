"""Scenario files of the rig: loaded from YAML, checked against ``hil/scenario.schema.json`` (docs/rig.md).

A scenario is a mapping: ``name``, the paragraphs and fault causes it covers, a ``seed``, ``table`` overrides,
control-interface ``users``, and ``steps``, each a mapping with exactly one action (``place``, ``press``,
``enter``, ``fault``, ``wait``, ``expect``...) and an optional ``name``. ``load_scenario`` returns it with the line of
each step; every error names ``file:line`` and what is wrong (PyYAML's node marks give the lines, the
``jsonschema`` library checks the schema), and every error of a file is listed, not only the first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from controller.settings.files import construct_whole

SCHEMA_PATH = Path(__file__).with_name("scenario.schema.json")

#: Largest scenario file read, in bytes (a scenario is a few thousand): a larger one, or a device or pipe that never
#: ends (``/dev/zero``), is refused before it is read, so that no file fills the rig's memory.
MAX_SCENARIO_BYTES = 1 << 20
#: Actions that only look or wait: a step's ``after`` (a moment to act at) makes no sense on them.
PASSIVE: frozenset[str] = frozenset({"wait", "expect", "sleep"})

#: The actions a step may take; a step has exactly one of them (the schema lists what each takes).
ACTIONS: tuple[str, ...] = ("place", "remove", "press", "key", "act", "fault", "clear_faults", "shoe", "enter", "service",
                            "pay", "pay_as_shown", "wait", "expect", "sleep")


class ScenarioError(ValueError):
    """A scenario file that cannot be run: ``problems`` lists each as ``file:line: what is wrong``."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Step:
    """One step: its ``action`` (one of ``ACTIONS``), the action's ``value`` as written, its ``label`` (the
    step's ``name`` or a short text of the action), where it is written (``file:line``) and its ``after``
    (the record the action waits for, ``hil.scenario_after``; None: at once)."""

    index: int
    action: str
    value: Any
    label: str
    where: str
    after: dict[str, Any] | None = None


@dataclass(frozen=True)
class Scenario:
    """A checked scenario: the mapping as written (``data``), its steps and its file."""

    path: Path
    data: dict[str, Any]
    steps: tuple[Step, ...] = field(default=())

    @property
    def name(self) -> str:
        """The scenario's name: the test case's name in a JUnit report."""
        return self.data["name"]


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema of a scenario (``hil/scenario.schema.json``), checked once against its meta-schema, with
    the simulators' bounds of a fault (``drivers.simfaults``: ``MAX_COUNT``, ``MAX_SECONDS``, ``MAX_RATE``) as
    the maximums of a ``fault`` step and of its moment, so that a file asking more is refused at its line."""
    from drivers.simfaults import MAX_COUNT, MAX_RATE, MAX_SECONDS

    loaded = json.loads(SCHEMA_PATH.read_text())
    fault = loaded["$defs"]["step"]["properties"]["fault"]["properties"]
    for name, most in (("count", MAX_COUNT), ("times", MAX_COUNT), ("byte", MAX_COUNT), ("seconds", MAX_SECONDS),
                       ("after", MAX_SECONDS), ("pause", MAX_SECONDS), ("rate", MAX_RATE)):
        fault[name]["maximum"] = most
    for moment in loaded["$defs"]["moment"]["oneOf"]:
        for name, most in (("after_stack", MAX_COUNT - 1), ("reading", MAX_COUNT), ("nth", MAX_COUNT)):
            if name in moment.get("properties", {}):
                moment["properties"][name]["maximum"] = most
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


#: Reads a mapping's key node as the safe loader does (its tag was resolved when the file was composed).
_KEYS = yaml.constructor.SafeConstructor()


def _lines(node: yaml.Node, path: tuple, lines: dict[tuple, int], problems: list[str], file: str) -> None:
    """Record the 1-based line of every node under ``node`` by its path; report repeated keys."""
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = _KEYS.construct_object(key_node)  # as the safe loader reads it: 1 an int, on a bool
            line = key_node.start_mark.line + 1
            if key in seen:
                problems.append(f"{file}:{line}: key {key!r} repeated (first at line {seen[key]})")
            seen[key] = line
            lines[path + (str(key),)] = line
            _lines(value_node, path + (str(key),), lines, problems, file)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[path + (index,)] = item.start_mark.line + 1
            _lines(item, path + (index,), lines, problems, file)


def _json_shaped(value: Any) -> Any:
    """The JSON data model the schema speaks of: mapping keys as text (YAML reads ``1:`` as an int)."""
    if isinstance(value, dict):
        return {str(k): _json_shaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_shaped(v) for v in value]
    return value


def _line_of(path: tuple, lines: dict[tuple, int]) -> int:
    while path not in lines and path:
        path = path[:-1]
    return lines.get(path, 1)


#: Longest schema message shown for one problem, in characters: the schema quotes the value it refuses, which
#: may be a whole collection of the file.
MAX_MESSAGE = 300


def _message(error: jsonschema.ValidationError) -> str:
    """The schema's words for ``error``, at its key path, cut to ``MAX_MESSAGE`` characters."""
    where = "/".join(str(p) for p in error.absolute_path) or "the scenario"
    message = error.message
    if error.validator == "oneOf" and error.context:
        shaped = isinstance(error.instance, (dict, list))  # a mapping is not "not one of" the plain words
        candidates = [e for e in error.context if not (shaped and e.validator in ("enum", "const", "type"))]
        message = jsonschema.exceptions.best_match(candidates or error.context).message
    if len(message) > MAX_MESSAGE:
        message = f"{message[:MAX_MESSAGE]}... ({len(message) - MAX_MESSAGE:,} more characters)"
    return f"{where}: {message}"


def _label(action: str, value: Any) -> str:
    if action in ("expect", "wait") and isinstance(value, dict):
        return f"{action} " + ", ".join(k if isinstance(v, (dict, list)) else f"{k}={v}" for k, v in value.items())
    if isinstance(value, dict):
        text = ", ".join(f"{k}={v}" for k, v in value.items())
        return f"{action} {text}"[:120]
    return f"{action} {value}"


@cache
def known_names() -> tuple[frozenset[str], frozenset[str]]:
    """The round machine's states (``controller.round.graph.STATES``) and every type a journal record may have (the
    dataclasses of ``controller.round.commands``, ``controller.round.inputs`` and ``drivers.events``, the service's own
    records and the hole-card ``Alert``): what a scenario may name in ``state`` and a record's ``type``."""
    import dataclasses
    import inspect

    from controller.round import commands

    from controller.round import inputs
    from controller.service.protection import Alert
    from controller.journal.recovery import SERVICE_RECORDS
    from controller.round.graph import STATES
    from drivers import events

    types = {name for module in (commands, inputs, events) for name, item in vars(module).items()
             if inspect.isclass(item) and dataclasses.is_dataclass(item) and item.__module__ == module.__name__}
    return frozenset(STATES), frozenset(types | SERVICE_RECORDS | {Alert.__name__})


def _unknown_names(data: Any) -> list[tuple[tuple, str]]:
    """``(path, problem)`` for each state or record type a step names that the controller does not have."""
    states, types = known_names()
    found: list[tuple[tuple, str]] = []
    steps = data.get("steps") if isinstance(data, dict) else None
    for index, step in enumerate(steps if isinstance(steps, list) else ()):
        after = step.get("after") if isinstance(step, dict) else None
        kind = after.get("journal", {}).get("type") if isinstance(after, dict) and \
            isinstance(after.get("journal"), dict) else None
        if isinstance(kind, str) and kind not in types:
            found.append((("steps", index, "after", "journal", "type"),
                          f"after: no record type {kind!r} is ever journaled"))
        for action in ("expect", "wait", "act"):
            body = step.get(action) if isinstance(step, dict) else None
            if not isinstance(body, dict):
                continue
            where = ("steps", index, action)
            named = body.get("state")
            for state in (named if isinstance(named, list) else [named]):
                if isinstance(state, str) and state != "current" and state not in states:
                    found.append((where + ("state",), f"{action}: no state {state!r} in the round machine "
                                                      f"(docs/round-states.md)"))
            for key in ("journal", "absent"):
                for n, record in enumerate(body.get(key) or ()):
                    kind = record.get("type") if isinstance(record, dict) else None
                    if isinstance(kind, str) and kind not in types:
                        found.append((where + (key, n, "type"), f"{action}: {key}: no record type {kind!r} is "
                                                                f"ever journaled"))
    return found


def load_scenario(path: Path) -> Scenario:
    """Read and check the scenario at ``path``. Raises ``ScenarioError`` listing every problem as ``file:line:
    what is wrong`` (not a regular file, larger than ``MAX_SCENARIO_BYTES`` or not UTF-8, YAML syntax, repeated
    keys, the schema, a step without exactly one action, a state or a record type the controller does not have),
    ``OSError`` when the file cannot be read."""
    path = Path(path)
    file = str(path)
    if path.exists() and not path.is_file():
        raise ScenarioError([f"{file}:1: not a regular file; a scenario is a YAML file"])
    with path.open("rb") as handle:
        data = handle.read(MAX_SCENARIO_BYTES + 1)
    if len(data) > MAX_SCENARIO_BYTES:
        raise ScenarioError([f"{file}:1: larger than {MAX_SCENARIO_BYTES:,} bytes: not a scenario (a scenario is a few "
                             f"thousand)"])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ScenarioError([f"{file}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"]) from None
    try:
        loader = yaml.SafeLoader(text)
        try:  # one parse: the nodes (for the lines) and the data built from them
            node = loader.get_single_node()
            data = construct_whole(loader, node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise ScenarioError([f"{file}:{line}: not YAML: {getattr(exc, 'problem', None) or exc}"]) from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise ScenarioError([f"{file}:1: nested too deep (hundreds of levels; a scenario has a few)"]) from None
    if node is None:
        raise ScenarioError([f"{file}:1: empty file; a scenario is a mapping with name and steps"])
    data = _json_shaped(data)
    lines: dict[tuple, int] = {}
    problems: list[str] = []
    _lines(node, (), lines, problems, file)
    validator = jsonschema.Draft202012Validator(schema())
    for error in validator.iter_errors(data):
        target = tuple(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            extra = [k for k in error.instance if k not in allowed]
            if extra:
                target = target + (extra[0],)
        problems.append(f"{file}:{_line_of(target, lines)}: {_message(error)}")
    for target, problem in _unknown_names(data):  # a typo would make "absent" true and "wait" time out
        problems.append(f"{file}:{_line_of(target, lines)}: {problem}")
    steps: list[Step] = []
    written = data.get("steps") if isinstance(data, dict) else None
    for index, step in enumerate(written if isinstance(written, list) else ()):
        if isinstance(step, dict):
            actions = [key for key in step if key in ACTIONS]
            if len(actions) != 1:
                problems.append(f"{file}:{_line_of(('steps', index), lines)}: steps/{index}: a step takes exactly "
                                f"one action of {', '.join(ACTIONS)}; found {', '.join(actions) or 'none'}")
                continue
            action = actions[0]
            if "after" in step and action in PASSIVE:
                problems.append(f"{file}:{_line_of(('steps', index, 'after'), lines)}: steps/{index}: after "
                                f"belongs to a step that acts, not to {action}")
            steps.append(Step(index + 1, action, step[action], step.get("name") or _label(action, step[action]),
                              f"{file}:{_line_of(('steps', index), lines)}", step.get("after")))
    if isinstance(data, dict) and isinstance(data.get("name"), str) and data["name"] != path.stem:
            problems.append(f"{file}:{_line_of(('name',), lines)}: name {data['name']!r} is not the file's name "
                            f"{path.stem!r} (a test case is found by it)")
    if problems:
        problems.sort(key=lambda text: int(text[len(file) + 1:].split(":", 1)[0]))
        raise ScenarioError(problems)
    return Scenario(path, data, tuple(steps))
