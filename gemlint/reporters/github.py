"""GitHub Actions workflow commands (``::error file=...::message``), one per finding."""

from __future__ import annotations

from typing import Iterable

from gemlint.diagnostics import Diagnostic, Severity

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: Iterable[Diagnostic]) -> str:
    lines = []
    for d in diagnostics:
        properties = ",".join(
            f"{key}={_escape_property(str(value))}"
            for key, value in (
                ("file", d.path),
                ("line", d.line),
                ("col", d.column),
                ("endLine", d.end_line),
                ("endColumn", d.end_column),
                ("title", f"{d.code} {d.name}"),
            )
        )
        lines.append(f"::{_COMMAND[d.severity]} {properties}::{_escape_data(f'{d.code} {d.message}')}")
    return "".join(line + "\n" for line in lines)
