"""reviewdog's diagnostic format (rdjson): ``gemlint --format rdjson . | reviewdog -f=rdjson -reporter=...``.

Paths are the ones gemlint reports, relative to the current directory: reviewdog joins a
relative path to the directory it runs in, so both run in the same one. Columns are counted
in UTF-8 bytes, as rdjson's positions are (reviewdog cuts source lines with them), where
gemlint counts code points, so the reported files are read again to convert them.

A fix that gemlint would apply (a safe fix, or an unsafe one with ``--unsafe-fixes``) is one
suggestion replacing whole lines. reviewdog posts each suggestion as a change of its own, so
a fix of several edits is merged into one rather than offered in pieces a reviewer could
apply alone; and a suggestion without columns is the one that reviewdog's GitHub and GitLab
reporters both apply as written. The report holds diagnostics only: what the run did not
check is said on stderr.
"""

from __future__ import annotations

import json
from typing import Iterable

from gemlint.diagnostics import CellSpan, Diagnostic, Fix, Position, Severity, applicable
from gemlint.docs import project_url, rule_url
from gemlint.fingerprints import source_lines
from gemlint.registry import all_rules

SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.NOTE: "INFO"}
_LINE_BREAKS = ("\r\n", "\n", "\r")


class _Sources:
    """The reported files' lines, each file read once."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            self._lines[path] = source_lines(path)
        return self._lines[path]

    def position(self, path: str, line: int, column: int) -> dict:
        """A 1-based position with its column in UTF-8 bytes (as given when the line cannot be read)."""
        lines = self.lines(path)
        if 1 <= line <= len(lines):
            before = lines[line - 1][: column - 1]
            column = len(before.encode("utf-8", "surrogatepass")) + (column - 1 - len(before)) + 1
        return {"line": line, "column": column}

    def range(self, path: str, line: int, column: int, end_line: int, end_column: int) -> dict:
        return {"start": self.position(path, line, column), "end": self.position(path, end_line, end_column)}


def _line_break(text: str) -> str:
    return next((ending for ending in _LINE_BREAKS if text.endswith(ending)), "")


def _suggestion(fix: Fix, lines: list[str]) -> dict | None:
    """``fix`` as one replacement of the whole lines it touches (an rdjson range without columns takes its
    end line in); None when those lines are not in the file as read, or the fix does not end on a line end."""
    if not fix.edits:
        return None
    first = min(edit.start.line for edit in fix.edits)
    last = max(edit.end.line for edit in fix.edits)
    if not 1 <= first <= last <= len(lines):
        return None
    block = lines[first - 1 : last]
    starts = [0]
    for line in block:
        starts.append(starts[-1] + len(line))

    def offset(position: Position) -> int:
        return starts[position.line - first] + position.column - 1

    text = "".join(block)
    for edit in sorted(fix.edits, key=lambda edit: (edit.start, edit.end), reverse=True):
        text = text[: offset(edit.start)] + edit.content + text[offset(edit.end) :]
    ending = _line_break(block[-1])
    if not text.endswith(ending):
        return None  # the fix joins the last line with the next one: no whole-line replacement says that
    return {"range": {"start": {"line": first}, "end": {"line": last}}, "text": text[: len(text) - len(ending)]}


def _range(sources: "_Sources", path: str, at, cell: CellSpan | None) -> dict:
    """``at``'s range, or in a notebook its range in the notebook file's JSON text (what reviewdog diffs)."""
    if cell is not None:
        return {"start": {"line": cell.file_line, "column": cell.file_column}, "end": {"line": cell.file_end_line, "column": cell.file_end_column}}
    return sources.range(path, at.line, at.column, at.end_line, at.end_column)


def render_rdjson(diagnostics: Iterable[Diagnostic], unsafe: bool = False) -> str:
    """The rdjson document of a run; ``unsafe`` (``--unsafe-fixes``) also suggests the unsafe fixes."""
    urls = {rule.code: rule_url(rule) for rule in all_rules()}
    sources = _Sources()
    found = []
    for d in diagnostics:
        url = urls.get(d.code)
        diagnostic: dict = {
            "message": d.message,
            "location": {"path": d.path, "range": _range(sources, d.path, d, d.cell)},
            "severity": SEVERITY[d.severity],
            "code": {"value": d.code, "url": url} if url else {"value": d.code},
        }
        # A notebook's fix edits its cells' code, not lines of the JSON text reviewdog would replace.
        if d.fix is not None and d.cell is None and applicable(d.fix, unsafe):
            change = _suggestion(d.fix, sources.lines(d.path))
            if change is not None:
                diagnostic["suggestions"] = [change]
        if d.related:
            diagnostic["related_locations"] = [
                {"message": r.message, "location": {"path": r.span.path, "range": _range(sources, r.span.path, r.span, r.cell)}}
                for r in d.related
            ]
        found.append(diagnostic)
    url = project_url()
    source = {"name": "gemlint", "url": url} if url else {"name": "gemlint"}
    return json.dumps({"source": source, "diagnostics": found}, indent=2, ensure_ascii=False) + "\n"
