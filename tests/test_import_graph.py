"""The shape of the code (docs/architecture.md, "Layers"): the import graph of ``controller/``, ``drivers/`` and
``hil/`` has no circle, every arrow of ``controller/`` points down its layers, ``drivers/`` knows nothing of
the controller, and no module is over ``MAX_LINES`` lines.

The graph is read from the source with ``ast``: every ``import`` and ``from ... import`` anywhere in a module,
inside functions too (a deferred import is still an arrow), except those under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOP = ("controller", "drivers", "hil")

#: The layers of controller/, lowest first: a module may import its own package and any package of a lower
#: layer, never one of a higher layer. ``controller`` itself (its version) may be imported by every layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("drivers",),
    ("controller.settings",),
    ("controller.game",),
    ("controller.analysis",),
    ("controller.round",),
    ("controller.journal",),
    ("controller.service",),
    ("controller.control", "controller.floor"),
    ("controller.simulated",),
    ("controller.cli",),
    ("controller.__main__", "hil"),
)
#: The longest a module may be (lines).
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    """Every module of TOP by dotted name (a package by its own name)."""
    found = {}
    for top in TOP:
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The module of MODULES that ``name`` (a module or a name in one) is, or None outside TOP."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Ids of the import nodes under ``if TYPE_CHECKING:``."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for child in node.body for inner in ast.walk(child))
    return skipped


def imports_of(module: str) -> set[str]:
    """The modules of MODULES that ``module`` imports."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(_owner(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:  # ``from pkg import module`` is an arrow to the module itself
                found.add(_owner(f"{base}.{alias.name}") if f"{base}.{alias.name}" in MODULES else _owner(base))
    found.discard(None)
    found.discard(module)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return circles


def layer_of(module: str) -> int | None:
    """The layer (an index of LAYERS) of ``module``; None for ``controller`` itself."""
    if module == "controller":
        return None
    for number, packages in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in packages):
            return number
    raise AssertionError(f"{module} is in no layer of LAYERS: add its package there")


def test_the_graph_is_read_from_the_source():
    """The reader sees what it must: a known arrow, a deferred import, a relative one and a module import."""
    assert "controller.game.cards" in GRAPH["controller.game.hands"]
    assert "drivers.framing" in GRAPH["drivers.link"]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_anywhere():
    circles = _circles(GRAPH)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_every_arrow_points_down_the_layers():
    upward = [f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
              for module, targets in sorted(GRAPH.items()) if layer_of(module) is not None
              for target in sorted(targets) if layer_of(target) is not None and layer_of(target) > layer_of(module)]
    assert not upward, "upward arrows:\n" + "\n".join(upward)


def test_drivers_know_nothing_of_the_controller():
    known = [f"{m} imports {t}" for m, ts in sorted(GRAPH.items()) if m.startswith("drivers")
             for t in sorted(ts) if not t.startswith("drivers")]
    assert not known, "\n".join(known)


def test_the_round_imports_no_service_http_simulator_or_numpy():
    banned = ("numpy", "starlette", "uvicorn", "h11", "paho", "controller.service", "controller.control",
              "controller.simulated", "drivers.sim", "drivers.pairsim")
    found = []
    for module, path in MODULES.items():
        if not module.startswith(("controller.round", "controller.game")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [f"{node.module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom)
                     else [])
            found += [f"{module} imports {n}" for n in names if n.startswith(banned) or n.endswith(".simulator")
                      or n.endswith(".driver") or n in ("drivers.link", "drivers.transport")]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_the_bound(module):
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module].relative_to(ROOT)} has {lines} lines (at most {MAX_LINES})"
