"""The human report: ``path:line:col: CODE [name] message``, optional source excerpts, statistics and a summary."""

from __future__ import annotations

from gemlint.confinement import read_companion
import os
import stat
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import click

from gemlint.diagnostics import Diagnostic, Severity
from gemlint.fixes import applicable
from gemlint.text import split_lines

_SEVERITY_COLOR = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.NOTE: "cyan"}


def _style(text: str, color: bool, **styles) -> str:
    return click.style(text, **styles) if color else text


def render_diagnostic(d: Diagnostic, color: bool, show_source: bool, source_cache: dict[str, list[str]]) -> str:
    location = _style(d.path, color, bold=True) + f":{d.line}:{d.column}:"
    code = _style(d.code, color, fg=_SEVERITY_COLOR[d.severity], bold=True)
    line = f"{location} {code} [{d.name}] {d.message}"
    # Related locations (GEM601: the handler and the forward pass) follow as indented notes.
    notes = "".join(
        f"\n    {_style(r.span.path, color, bold=True)}:{r.span.line}:{r.span.column}: {_style('note', color, fg='cyan')}: {r.message}"
        for r in d.related
    )
    if not show_source:
        return line + notes
    lines = source_cache.get(d.path)
    if lines is None:
        try:
            # A regular file of the project only: never a FIFO or device (it would block), nor what a link
            # reported as GEM000 points to out of the project (its first line would be printed).
            lines = split_lines(read_companion(d.path, d.path).decode("utf-8", errors="replace"))
        except OSError:
            lines = []
        source_cache[d.path] = lines
    if not 1 <= d.line <= len(lines):
        return line + notes
    source = lines[d.line - 1].rstrip("\r\n").expandtabs(1)
    width = (d.end_column - d.column) if d.end_line == d.line else len(source) - d.column + 1
    caret = " " * (d.column - 1) + "^" * max(1, width)
    gutter = f"{d.line:>5} | "
    return f"{line}\n{gutter}{source}\n{' ' * (len(gutter) - 2)}| {_style(caret, color, fg=_SEVERITY_COLOR[d.severity])}{notes}"


def statistics(diagnostics: list[Diagnostic], unsafe: bool) -> str:
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = {d.code for d in diagnostics if applicable(d.fix, unsafe)}
    rows = [
        f"{count:>5}\t{code}\t{'[*]' if code in fixable else '   '} {name}"
        for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    return "\n".join(rows)


def summary(diagnostics: list[Diagnostic], fixed: int, unsafe: bool, unchecked: Sequence[str] = ()) -> str:
    """The last line of the text output. "All checks passed!" only when every file found was checked; what was
    not is said after it (``unchecked``)."""
    if unchecked and not diagnostics and not fixed:
        text = "No problems found in the files checked."
    else:
        text = _findings_summary(diagnostics, fixed, unsafe)
    return text + "".join(f"\n{notice}." for notice in unchecked)


def _findings_summary(diagnostics: list[Diagnostic], fixed: int, unsafe: bool) -> str:
    total = len(diagnostics)
    if total == 0:
        return f"Fixed {fixed} problem{'s' if fixed != 1 else ''}, none remaining." if fixed else "All checks passed!"
    safe = sum(1 for d in diagnostics if applicable(d.fix, unsafe))
    hidden = sum(1 for d in diagnostics if d.fix is not None and not applicable(d.fix, unsafe))
    text = f"Found {total} problem{'s' if total != 1 else ''}"
    if fixed:
        text = f"Fixed {fixed} problem{'s' if fixed != 1 else ''}; {total} remaining"
    if safe:
        text += f" ({safe} fixable with --fix" + (" --unsafe-fixes" if unsafe else "") + ")"
    text += "."
    if hidden:
        text += f"\n{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with --unsafe-fixes."
    return text


def render_text(
    diagnostics: list[Diagnostic],
    *,
    color: bool,
    show_source: bool,
    show_statistics: bool,
    fixed: int,
    unsafe: bool,
    quiet: bool = False,
    unchecked: Sequence[str] = (),
) -> str:
    """``quiet`` prints the findings and nothing else (as ruff's --quiet); ``unchecked`` says what was found and
    not checked (:attr:`gemlint.runner.RunResult.unchecked`)."""
    out: list[str] = []
    cache: dict[str, list[str]] = {}
    if show_statistics:
        if diagnostics:
            out.append(statistics(diagnostics, unsafe))
    else:
        out.extend(render_diagnostic(d, color, show_source, cache) for d in diagnostics)
    if not quiet:
        out.append(summary(diagnostics, fixed, unsafe, unchecked))
    return "".join(line + "\n" for line in out)
