"""The human report: ``path:line:col: CODE [name] message``, optional source excerpts, statistics and a summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import click

from gemlint.confinement import read_companion
from gemlint.diagnostics import CellSpan, Diagnostic, Severity, applicable
from gemlint.languages import Language, language_of
from gemlint.text import SourceError, split_lines

_SEVERITY_COLOR = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.NOTE: "cyan"}


def _style(text: str, color: bool, **styles) -> str:
    return click.style(text, **styles) if color else text


def _where(line: int, column: int, cell: CellSpan | None) -> str:
    """``line:column``, or in a notebook ``cell N:line:column`` with the line counted in the cell (as ruff writes it)."""
    if cell is None:
        return f"{line}:{column}"
    return f"cell {cell.cell}:{cell.line}:{cell.column}"


def render_diagnostic(d: Diagnostic, color: bool, show_source: bool, source_cache: dict[str, dict[int | None, list[str]]]) -> str:
    location = _style(d.path, color, bold=True) + f":{_where(d.line, d.column, d.cell)}:"
    code = _style(d.code, color, fg=_SEVERITY_COLOR[d.severity], bold=True)
    line = f"{location} {code} [{d.name}] {d.message}"
    # Related locations (GEM601: the handler and the forward pass) follow as indented notes.
    notes = "".join(
        f"\n    {_style(r.span.path, color, bold=True)}:{_where(r.span.line, r.span.column, r.cell)}: {_style('note', color, fg='cyan')}: {r.message}"
        for r in d.related
    )
    if not show_source:
        return line + notes
    texts = source_cache.get(d.path)
    if texts is None:
        texts = source_cache[d.path] = _source_lines(d.path)
    # The finding's own line: in a notebook, the line of its cell.
    at = d.cell or d
    number, column, end_line, end_column = at.line, at.column, at.end_line, at.end_column
    lines = texts.get(d.cell.cell if d.cell else None, [])
    if not 1 <= number <= len(lines):
        return line + notes
    source = lines[number - 1].rstrip("\r\n").expandtabs(1)
    width = (end_column - column) if end_line == number else len(source) - column + 1
    caret = " " * (column - 1) + "^" * max(1, width)
    gutter = f"{number:>5} | "
    return f"{line}\n{gutter}{source}\n{' ' * (len(gutter) - 2)}| {_style(caret, color, fg=_SEVERITY_COLOR[d.severity])}{notes}"


def _source_lines(path: str) -> dict[int | None, list[str]]:
    """The file's lines (under None) and, for a notebook, each code cell's lines (under its number)."""
    try:
        # A regular file of the project only: never a FIFO or device (it would block), nor what a link
        # reported as GEM000 points to out of the project (its first line would be printed).
        text = read_companion(path, path).decode("utf-8", errors="replace")
    except OSError:
        return {}
    texts: dict[int | None, list[str]] = {None: split_lines(text)}
    if language_of(Path(path)) is Language.NOTEBOOK:
        from gemlint.frontends.notebook import read_notebook  # only for a notebook's findings: most runs have none

        try:
            texts.update((cell.number, cell.lines) for cell in read_notebook(text.lstrip("\ufeff")).cells)
        except SourceError:
            pass
    return texts


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
    cache: dict[str, dict[int | None, list[str]]] = {}
    if show_statistics:
        if diagnostics:
            out.append(statistics(diagnostics, unsafe))
    else:
        out.extend(render_diagnostic(d, color, show_source, cache) for d in diagnostics)
    if not quiet:
        out.append(summary(diagnostics, fixed, unsafe, unchecked))
    return "".join(line + "\n" for line in out)
