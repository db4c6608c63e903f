"""Applying fixes: edits in memory, a re-lint loop until stable, and an atomic write that keeps
the file's encoding, BOM, line endings and permissions. A notebook's fixes are applied to the module
of its code cells and written back into the cells they changed."""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from gemlint.atomic import replacing
from gemlint.diagnostics import Diagnostic, Fix, applicable
from gemlint.frontends.notebook import CellsChanged, Notebook, read_notebook
from gemlint.frontends.python_module import parse_module
from gemlint.languages import Language
from gemlint.text import SourceError, line_offsets, offset_of, read_regular_file

MAX_ITERATIONS = 10
UNPARSABLE = "a fix would have produced code that does not parse"


def apply_edits(text: str, fixes: list[Fix]) -> tuple[str, int]:
    """Apply fixes whose edits do not overlap an earlier fix's; returns the text and how many fixes were applied.

    A skipped fix is not lost: the caller re-lints and applies it in the next iteration.
    """
    offsets = line_offsets(text)
    length = len(text)
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, str]] = []
    count = 0
    for fix in fixes:
        ranges = [(offset_of(offsets, length, e.start), offset_of(offsets, length, e.end), e.content) for e in fix.edits]
        if any(_overlaps(start, end, lo, hi) for start, end, _ in ranges for lo, hi in taken):
            continue
        taken.extend((start, end) for start, end, _ in ranges)
        chosen.extend(ranges)
        count += 1
    for start, end, content in sorted(chosen, key=lambda r: (r[0], r[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text, count


def _overlaps(start: int, end: int, lo: int, hi: int) -> bool:
    return (start < hi and lo < end) or start == lo


def still_parses(text: str, language: Language) -> bool:
    if language is not Language.PYTHON:
        return True
    try:
        parse_module(text)
    except Exception:
        return False
    return True


@dataclass
class FixOutcome:
    text: str
    diagnostics: list[Diagnostic]  # what remains after fixing
    applied: int
    refused: str | None = None  # why fixes were refused, if they were


def fix_text(
    text: str,
    language: Language,
    lint: Callable[[str], list[Diagnostic]],
    diagnostics: list[Diagnostic],
    unsafe: bool,
    refusal: Callable[[str], str | None] | None = None,
) -> FixOutcome:
    """Apply fixes and re-lint until nothing fixable remains (as ruff does), never producing unparsable code.

    ``refusal`` says why fixed text must not be kept (None: it may); by default, that it does not parse.
    """
    refusal = refusal or (lambda candidate: None if still_parses(candidate, language) else UNPARSABLE)
    applied = 0
    current = text
    for _ in range(MAX_ITERATIONS):
        fixes = [d.fix for d in diagnostics if applicable(d.fix, unsafe)]
        if not fixes:
            break
        candidate, count = apply_edits(current, fixes)
        if count == 0 or candidate == current:
            break
        refused = refusal(candidate)
        if refused is not None:
            return FixOutcome(current, diagnostics, applied, refused)
        current, applied = candidate, applied + count
        diagnostics = lint(current)
    return FixOutcome(current, diagnostics, applied)


def fix_source(
    text: str, language: Language, lint: Callable[[str], list[Diagnostic]], diagnostics: list[Diagnostic], unsafe: bool
) -> FixOutcome:
    """:func:`fix_text` for a whole file's text (``lint`` lints such a text). A notebook's fixes are applied to the
    module of its code cells (where the findings' positions are) and the cells they changed are written back
    into its JSON; every changed cell must still parse on its own, as Jupyter runs it."""
    if language is not Language.NOTEBOOK:
        return fix_text(text, language, lint, diagnostics, unsafe)
    notebook = read_notebook(text)
    outcome = fix_text(
        notebook.code, Language.PYTHON, lambda code: lint(notebook.rewritten(code)), diagnostics, unsafe, _cells_refusal(notebook)
    )
    return replace(outcome, text=notebook.rewritten(outcome.text))


def _cells_refusal(notebook: Notebook) -> Callable[[str], str | None]:
    def refusal(code: str) -> str | None:
        try:
            cells = notebook.split(code)
            notebook.rewritten(code)  # the IPython lines can be put back
        except CellsChanged as error:
            return str(error)
        changed = (python for cell, python in zip(notebook.cells, cells) if python != cell.python)
        return None if all(still_parses(python, Language.PYTHON) for python in changed) else UNPARSABLE

    return refusal


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff as git and patch write it, including their marker for a last line without a newline."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
    )
    return "".join(line if line.endswith(("\n", "\r")) else f"{line}\n\\ No newline at end of file\n" for line in lines)


class FileChanged(Exception):
    pass


def write_atomically(path: Path, original: bytes, text: str, encoding: str) -> None:
    """Replace ``path`` with ``text`` unless it changed since it was read; keep the mode bits.

    The new content goes to a temporary file in the same directory that then
    replaces the original in one rename, so an interrupted run leaves either the
    old or the new file, never half of one.
    """
    data = text.encode(encoding)
    target = Path(os.path.realpath(path))  # write through symlinks, keep the link
    try:
        current = read_regular_file(target)  # never blocks, even if a FIFO replaced the file
    except SourceError as error:
        raise FileChanged(f"{path} changed while gemlint was fixing it ({error}); not overwritten") from None
    if current != original:
        raise FileChanged(f"{path} changed while gemlint was fixing it; not overwritten")
    mode = stat.S_IMODE(target.stat().st_mode)
    with replacing(target, prefix=f".{target.name}.", suffix=".gemlint-tmp", mode=mode, durable=True) as stream:
        stream.write(data)
