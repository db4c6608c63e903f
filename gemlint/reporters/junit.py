"""JUnit XML, for the test reports of GitLab (``artifacts:reports:junit``), Jenkins and other CI systems.

One ``testsuite`` per file with findings (named by its path relative to the repository root),
one failed ``testcase`` per finding; a file that could not be read or parsed (GEM000) is a
test in error rather than a failure, as in SARIF it is a notification rather than a result.
A run without findings is one passing test, so the report is never empty. What the run did
not check is a skipped test each, which CI systems count and show next to the failures.

A test's identity (suite, class and name) is what CI systems compare between two pipelines
to tell new failures from fixed ones, and GitLab refuses two tests with one class and name.
So the name carries the finding's fingerprint (the one ``--baseline`` matches), never its
line: a finding stays the same test when code above it moves.

The document is valid against both JUnit schemas in use, Jenkins' ``junit-10.xsd`` and the
stricter Apache Ant schema (windyroad's ``JUnit.xsd``): the latter wants a bare
``testsuites``, and on each suite a package, an id, a local timestamp without a time zone,
the host name and the time, then properties, test cases, system-out and system-err in that order.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping, Sequence

from gemlint.diagnostics import CellSpan, Diagnostic
from gemlint.registry import PARSE_ERROR_CODE
from gemlint.repository import repository_path

PACKAGE = "gemlint"
#: The suite of the run itself: its passing test when nothing was found, and what was not checked.
RUN_SUITE = "gemlint"
NOTHING_FOUND = "no problems found in the files checked"
# Characters XML 1.0 cannot hold even escaped (control characters, lone surrogates, U+FFFE/U+FFFF).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    """``text`` with what XML cannot hold written as a Python escape (``\\x1b``), so the document stays well-formed."""
    return _NOT_XML.sub(lambda match: match.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


def _path(path: str, root: Path) -> str:
    return repository_path(path, root) or path


def _classname(path: str) -> str:
    """The path without its suffix: Jenkins reads what follows a class name's last dot as the class."""
    pure = PurePosixPath(path)
    return str(pure.with_suffix("")) if pure.suffix else path


def _body(d: Diagnostic, root: Path) -> str:
    """The text report's line for the finding, and its related places, with repository paths."""
    lines = [f"{_path(d.path, root)}:{_place(d.line, d.column, d.cell)}: {d.code} [{d.name}] {d.message}"]
    lines += [f"    {_path(r.span.path, root)}:{_place(r.span.line, r.span.column, r.cell)}: note: {r.message}" for r in d.related]
    return "\n".join(lines)


def _place(line: int, column: int, cell: CellSpan | None) -> str:
    """``line:column``, or in a notebook ``cell N:line:column`` within the cell, as the text report says it."""
    return f"cell {cell.cell}:{cell.line}:{cell.column}" if cell is not None else f"{line}:{column}"


class _Suite:
    """A ``testsuite`` element and its counts, closed once all its test cases are in."""

    def __init__(self, name: str, index: int, started: str, host: str) -> None:
        self.element = ET.Element("testsuite", {"name": _xml(name), "package": PACKAGE, "id": str(index), "timestamp": started, "hostname": host})
        ET.SubElement(self.element, "properties")
        self.counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}

    def case(self, classname: str, name: str, outcome: str | None = None, **attributes: str) -> ET.Element:
        """A test case; ``outcome`` (failure, error or skipped) is its one child element, absent when it passed."""
        case = ET.SubElement(self.element, "testcase", {"name": _xml(name), "classname": _xml(classname), "time": "0"})
        self.counts["tests"] += 1
        if outcome is None:
            return case
        self.counts[{"failure": "failures", "error": "errors", "skipped": "skipped"}[outcome]] += 1
        return ET.SubElement(case, outcome, {key: _xml(value) for key, value in attributes.items()})

    def close(self) -> ET.Element:
        ET.SubElement(self.element, "system-out")
        ET.SubElement(self.element, "system-err")
        self.element.attrib.update({key: str(count) for key, count in self.counts.items()}, time="0")
        return self.element


def render_junit(
    diagnostics: Iterable[Diagnostic], root: Path, fingerprints: Mapping[Diagnostic, str], unchecked: Sequence[str] = ()
) -> str:
    """The JUnit report of a run, stamped with this machine's name and the local time it is written."""
    when = datetime.now().replace(microsecond=0).isoformat()
    host = _xml(socket.gethostname() or "localhost")
    files: dict[str, _Suite] = {}
    for d in diagnostics:
        path = _path(d.path, root)
        suite = files.get(path)
        if suite is None:
            suite = files[path] = _Suite(path, len(files), when, host)
        outcome = "error" if d.code == PARSE_ERROR_CODE else "failure"
        problem = suite.case(_classname(path), f"{d.code} {d.name} ({fingerprints[d]})", outcome, type=d.code, message=d.message)
        problem.text = _xml(_body(d, root))
    suites = list(files.values())
    if unchecked or not suites:
        run = _Suite(RUN_SUITE, len(suites), when, host)
        if not suites:
            run.case(RUN_SUITE, NOTHING_FOUND)
        for notice in unchecked:
            run.case(RUN_SUITE, f"not checked: {notice}", "skipped", message=notice)
        suites.append(run)
    document = ET.Element("testsuites")
    document.extend(suite.close() for suite in suites)
    ET.indent(document)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(document, encoding="unicode") + "\n"
