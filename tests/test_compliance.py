"""docs/compliance.md cannot rot: every regulation paragraph has a row, in order, and what it names exists.

The paragraph ids are kept in docs/regulation-paragraphs.yaml (written from the regulation texts). Each row's
code references (`package.module:function` or `Class.method`) must import and resolve; each test reference
(`tests/file.py::test_name`) must be a test function defined in that file.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
MATRIX = (ROOT / "docs" / "compliance.md").read_text(encoding="utf-8")
PARAGRAPHS = yaml.safe_load((ROOT / "docs" / "regulation-paragraphs.yaml").read_text(encoding="utf-8"))
CODE_REF = re.compile(r"`([a-z_]+(?:\.[a-z_]+)+):([A-Za-z_][A-Za-z0-9_.]*)`")
TEST_REF = re.compile(r"`(tests/[a-z0-9_]+\.py)::([A-Za-z0-9_]+)`")


def rows() -> list[tuple[str, str]]:
    """(paragraph id as written, the whole row) for each table row of the matrix."""
    out = []
    for line in MATRIX.splitlines():
        match = re.match(r"\|\s*(NY|PA|NJ) (\([^|\s]+)\s*\|", line)
        if match:
            out.append((f"{match.group(1)} {match.group(2)}", line))
    return out


def test_every_paragraph_has_a_row_in_the_order_of_the_text():
    expected = [f"{text} {pid}" for text in ("NY", "PA", "NJ") for pid in PARAGRAPHS[text]["ids"]]
    assert len(expected) == len(set(expected))
    found = [pid for pid, _ in rows()]
    missing = [p for p in expected if p not in found]
    extra = [p for p in found if p not in expected]
    assert missing == [] and extra == []
    assert found == expected  # one row each, in order


def test_every_row_names_code_and_a_test_or_a_reason():
    """A row says what implements and proves it, or (a heading, a person's conduct, the cloth) why not."""
    for pid, line in rows():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 5, pid
        _, _, code, tests, outside = cells
        assert (CODE_REF.search(code) and TEST_REF.search(tests)) or outside or code == "heading", pid


def _resolve(module: str, name: str):
    target = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    return target


ROW_TEXT = "\n".join(line for _, line in rows())
CODE_REFS = sorted(set(CODE_REF.findall(ROW_TEXT)))
TEST_REFS = sorted(set(TEST_REF.findall(ROW_TEXT)))


def test_the_matrix_names_code_and_tests():
    assert len(CODE_REFS) > 20 and len(TEST_REFS) > 40


@pytest.mark.parametrize("module,name", CODE_REFS, ids=[f"{m}:{n}" for m, n in CODE_REFS])
def test_named_code_exists(module, name):
    assert _resolve(module, name) is not None


_TEST_NAMES: dict[str, set[str]] = {}


def _tests_in(path: str) -> set[str]:
    if path not in _TEST_NAMES:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        _TEST_NAMES[path] = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
    return _TEST_NAMES[path]


@pytest.mark.parametrize("path,name", TEST_REFS, ids=[f"{p}::{n}" for p, n in TEST_REFS])
def test_named_test_exists(path, name):
    assert (ROOT / path).is_file(), path
    assert name in _tests_in(path), f"{path}::{name}"
