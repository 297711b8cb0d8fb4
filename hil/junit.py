"""The scenario results as a JUnit XML report, the form CI servers read (Jenkins, GitLab, GitHub actions).

Written with the standard library's ``xml.etree.ElementTree``: the format is a handful of elements, and the
``junit-xml`` package adds nothing but a dependency (its last release is from 2020). The shape is the one
Jenkins' JUnit plugin and pytest's ``--junit-xml`` write: ``<testsuites><testsuite name tests failures
errors skipped time timestamp><testcase classname name file line time>`` with at most one ``<failure>``,
``<error>`` or ``<skipped>`` (its ``message`` names the step and what did not hold; its text adds the
journal's last records) and a ``<system-err>`` with the service's last log lines.
"""

from __future__ import annotations

import datetime
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from hil.scenario_run import CaseResult

#: The ``classname`` of every test case: the rig's scenarios.
CLASSNAME = "hil.scenarios"
#: Characters XML 1.0 does not allow (a log line may hold them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\N{REPLACEMENT CHARACTER}", value)


def junit_tree(results: Sequence[CaseResult], suite: str = "hil.scenarios") -> ET.ElementTree:
    """One ``testsuite`` with one ``testcase`` per result."""
    root = ET.Element("testsuites")
    counts = {status: sum(1 for r in results if r.status == status) for status in ("failed", "error", "skipped")}
    element = ET.SubElement(root, "testsuite", {
        "name": suite, "tests": str(len(results)), "failures": str(counts["failed"]), "errors": str(counts["error"]),
        "skipped": str(counts["skipped"]), "time": f"{sum(r.seconds for r in results):.3f}",
        "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    })
    for result in results:
        case = ET.SubElement(element, "testcase", {"classname": CLASSNAME, "name": result.name,
                                                   "file": str(result.path), "time": f"{result.seconds:.3f}"})
        if result.step is not None:
            case.set("line", result.step.where.rsplit(":", 1)[1])
        if result.status == "passed":
            continue
        tag = {"failed": "failure", "error": "error", "skipped": "skipped"}[result.status]
        outcome = ET.SubElement(case, tag, {"message": _text(result.headline)})
        if result.status != "skipped":
            outcome.set("type", "StepFailed" if result.status == "failed" else "RigError")
            detail = [result.headline, "", f"journal (last {len(result.journal_excerpt)} records) of {result.journal}:"]
            outcome.text = _text("\n".join(detail + result.journal_excerpt))
        if result.log_tail:
            ET.SubElement(case, "system-err").text = _text(result.log_tail)
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(results: Sequence[CaseResult], path: Path) -> None:
    """Write the report to ``path`` (UTF-8, with an XML declaration). ``OSError`` when it cannot be written."""
    junit_tree(results).write(path, encoding="utf-8", xml_declaration=True)
