"""Reads fixture expectations (SPEC §11) and lints fixtures exactly as the CLI would.

A marker comment lists the findings its line must produce, as a multiset: ``# expect: GEM101, GEM101``
is two GEM101 findings on the line, and a third (or a duplicate of one) fails. An item may pin the
finding's severity, its column, or both: ``# expect: GEM201[error]``, ``# expect: GEM101@12``,
``# expect: GEM501[note]@5``. Columns are 1-based, counted in code points, as the CLI prints them
(``path:line:column``). ``expect-next:`` marks the line below (where a trailing comment is impossible).
``also: GEM101`` marks a line that a finding names as a related location (a rule that reports the first of
several places once, the others beside it): some finding of that code must list the line.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from gemlint.config import default_config, load_config
from gemlint.diagnostics import Diagnostic
from gemlint.discovery import SourceFile
from gemlint.engine import lint_file
from gemlint.languages import language_of
from gemlint.registry import all_rules, known_codes
from gemlint.selection import Selection

FIXTURES = Path(__file__).parent / "fixtures"
_ITEM = r"GEM\d{3}(?:\[[A-Za-z]*\])?(?:@\d+)?"
_MARKER = re.compile(rf"(?:#|//|/\*)\s*(?P<kind>expect|also)(?P<next>-next)?:\s*(?P<items>{_ITEM}(?:\s*,\s*{_ITEM})*)")
_PARTS = re.compile(r"(?P<code>GEM\d{3})(?:\[(?P<severity>[A-Za-z]*)\])?(?:@(?P<column>\d+))?")
SEVERITIES = ("error", "warning", "note")


@dataclass(frozen=True, order=True)
class Expected:
    line: int
    code: str
    severity: str | None = None  # None: any severity
    column: int | None = None  # 1-based; None: any column
    related: bool = False  # a related location of a finding (``also:``), not a finding of its own

    def matches(self, diagnostic: Diagnostic) -> bool:
        return (
            diagnostic.line == self.line
            and diagnostic.code == self.code
            and (self.severity is None or diagnostic.severity.value == self.severity)
            and (self.column is None or diagnostic.column == self.column)
        )

    def __str__(self) -> str:
        pins = (f"[{self.severity}]" if self.severity else "") + (f"@{self.column}" if self.column else "")
        return f"{self.line}: {self.code}{pins}"


def fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and language_of(p) is not None)


def parsable_python_fixtures() -> list[str]:
    """The text of every Python fixture that both ``ast`` and LibCST parse (GEM000's fixtures are left out)."""
    import ast

    import libcst

    sources = []
    for path in fixture_files():
        if path.suffix != ".py":
            continue
        try:
            source = path.read_text(encoding="utf-8")
            ast.parse(source)
            libcst.parse_module(source)
        except (UnicodeDecodeError, SyntaxError, ValueError, libcst.ParserSyntaxError):
            continue
        sources.append(source)
    return sources


def fixture_root(path: Path) -> Path:
    """Each top-level folder of tests/fixtures is a project root of its own."""
    return FIXTURES / path.relative_to(FIXTURES).parts[0]


def parse_markers(text: str) -> list[Expected]:
    """Every expectation the marker comments of ``text`` state, one entry per expected finding."""
    expected = []
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        for match in _MARKER.finditer(line):
            target = number + 1 if match.group("next") else number
            for item in match.group("items").split(","):
                parts = _PARTS.fullmatch(item.strip())
                severity = parts.group("severity")
                if severity is not None and severity not in SEVERITIES:
                    raise ValueError(f"line {number}: unknown severity {severity!r} in {item.strip()!r}")
                column = parts.group("column")
                related = match.group("kind") == "also"
                expected.append(Expected(target, parts.group("code"), severity, int(column) if column else None, related))
    return expected


def expectations(path: Path) -> list[Expected]:
    # latin-1 never fails, so markers are found even in files that are not valid UTF-8.
    return parse_markers(path.read_bytes().decode("latin-1"))


def mismatches(expected: list[Expected], diagnostics: list[Diagnostic]) -> list[str]:
    """What differs between the expectations and the findings; empty when every expected finding is
    reported exactly as often as it is marked, with its pinned severity and column, and nothing else is."""
    problems = []
    for also in (e for e in expected if e.related):
        if not any(d.code == also.code and any(r.span.line == also.line for r in d.related) for d in diagnostics):
            problems.append(f"line {also.line}: no {also.code} finding lists it as a related location")
    expected = [e for e in expected if not e.related]
    wanted = Counter((e.line, e.code) for e in expected)
    got = Counter((d.line, d.code) for d in diagnostics)
    for line, code in sorted(wanted.keys() | got.keys()):
        want, have = wanted[line, code], got[line, code]
        if want != have:
            found = [f"{d.severity.value}@{d.column}: {d.message}" for d in diagnostics if (d.line, d.code) == (line, code)]
            problems.append(f"line {line}: {code} expected {want}x, reported {have}x {found}")
            continue
        pinned = [e for e in expected if (e.line, e.code) == (line, code)]
        if all(e.severity is None and e.column is None for e in pinned):
            continue
        reported = [d for d in diagnostics if (d.line, d.code) == (line, code)]
        # A line holds a handful of findings at most: try every pairing of expectations with findings.
        if not any(all(e.matches(d) for e, d in zip(pinned, order)) for order in itertools.permutations(reported)):
            actual = ", ".join(f"{d.code}[{d.severity.value}]@{d.column}" for d in reported)
            problems.append(f"line {line}: expected {', '.join(str(e).split(': ', 1)[1] for e in pinned)}, reported {actual}")
    return problems


def lint_fixture(path: Path) -> list[Diagnostic]:
    root = fixture_root(path)
    # The nearest gemlint.toml from the file's folder up to the fixture root governs it, as on the command line.
    config_file = next((folder / "gemlint.toml" for folder in (path.parent, *path.parent.parents) if (folder / "gemlint.toml").exists() or folder == root), root / "gemlint.toml")
    config = load_config(config_file, known_codes()) if config_file.exists() else default_config(root)
    config = replace(config, root=root)
    relative = path.relative_to(root).as_posix()
    source = SourceFile(path, language_of(path), relative, relative)
    diagnostics, _, _ = lint_file(source, Selection.from_config(config, all_rules()))
    return diagnostics
