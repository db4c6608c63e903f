"""GitHub Actions workflow commands (``::error file=...::message``), one per finding.

GitHub turns each command into an annotation on the pull request, but shows at
most 10 error and 10 warning annotations per step (and 50 per job) and drops the
rest silently, so a plain log line says so when a run has more. File paths are
relative to the repository root, which is how GitHub resolves them. A finding in a
notebook is annotated on the notebook's JSON text (the line GitHub shows of a
``.ipynb``), and its message names the cell and the line in it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable

from gemlint.diagnostics import Diagnostic, Severity
from gemlint.repository import repository_path

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}
#: Annotations GitHub displays per step for each level (actions/toolkit#734).
ANNOTATIONS_PER_STEP = 10


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: Iterable[Diagnostic], root: Path | None = None, unchecked: Iterable[str] = ()) -> str:
    """Workflow commands, one per finding, and a ``::warning`` without a file for what was not checked."""
    lines = [f"::warning title=gemlint: not checked::{_escape_data(notice)}" for notice in unchecked]
    counts: Counter[str] = Counter()
    for d in diagnostics:
        path = (repository_path(d.path, root) if root is not None else None) or d.path
        command = _COMMAND[d.severity]
        counts[command] += 1
        region = (d.line, d.column, d.end_line, d.end_column)
        message = f"{d.code} {d.message}"
        if d.cell is not None:
            region = (d.cell.file_line, d.cell.file_column, d.cell.file_end_line, d.cell.file_end_column)
            message = f"{d.code} (cell {d.cell.cell}, line {d.cell.line}) {d.message}"
        properties = ",".join(
            f"{key}={_escape_property(str(value))}"
            for key, value in (
                ("file", path),
                ("line", region[0]),
                ("col", region[1]),
                ("endLine", region[2]),
                ("endColumn", region[3]),
                ("title", f"{d.code} {d.name}"),
            )
        )
        lines.append(f"::{command} {properties}::{_escape_data(message)}")
    over = {command: count for command, count in counts.items() if count > ANNOTATIONS_PER_STEP}
    if over:
        listed = ", ".join(f"{count} {command}s" for command, count in sorted(over.items()))
        lines.append(
            f"gemlint: {listed}: GitHub shows only {ANNOTATIONS_PER_STEP} annotations of each level per step; "
            "write the full list as well (--output-format text:gemlint.txt) or upload SARIF to code scanning"
        )
    return "".join(line + "\n" for line in lines)
