"""Indentation that mixes tabs and spaces as CPython accepts it, made readable to LibCST.

CPython reads a tab in a line's indentation as a move to the next multiple of eight columns, and accepts a block
indented with a tab and another with spaces when the columns agree either way (``\\t    for`` under ``    with``).
LibCST's tokenizer rejects some of those mixes ("no matching outer block for dedent"). A module that ``ast``
parsed is valid Python, so its leading tabs are expanded as CPython expands them, and the findings on those lines
are moved back to the columns of the text as written.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterable

from gemlint.diagnostics import Diagnostic, RelatedLocation, Span

_TAB_SIZE = 8


@dataclass(frozen=True)
class ExpandedIndentation:
    """The text with its leading tabs expanded, and for each line changed (numbered from 1) the length of its
    indentation as written and as expanded."""

    text: str
    widths: dict[int, tuple[int, int]]

    def column(self, line: int, column: int) -> int:
        """A column (from 1) of the expanded text as a column of the text as written."""
        widths = self.widths.get(line)
        if widths is None:
            return column
        written, expanded = widths
        return column - (expanded - written) if column > expanded else min(column, written + 1)

    def restored(self, diagnostics: Iterable[Diagnostic], path: str) -> list[Diagnostic]:
        """``diagnostics`` placed in the text as written; their fixes, made on the expanded text, dropped."""
        return [self._restored(diagnostic, path) for diagnostic in diagnostics]

    def _restored(self, diagnostic: Diagnostic, path: str) -> Diagnostic:
        if diagnostic.path != path:
            return diagnostic
        related = tuple(
            RelatedLocation(self._span(item.span), item.message, item.cell) if item.span.path == path else item for item in diagnostic.related
        )
        return dataclasses.replace(
            diagnostic,
            column=self.column(diagnostic.line, diagnostic.column),
            end_column=self.column(diagnostic.end_line, diagnostic.end_column),
            fix=None,
            related=related,
        )

    def _span(self, span: Span) -> Span:
        return dataclasses.replace(span, column=self.column(span.line, span.column), end_column=self.column(span.end_line, span.end_column))


def expand_indentation(text: str) -> ExpandedIndentation | None:
    """``text`` with every tab of a line's indentation expanded as CPython reads it; None where no line is
    indented with a tab."""
    lines = text.splitlines(keepends=True)
    widths: dict[int, tuple[int, int]] = {}
    for number, line in enumerate(lines, 1):
        indentation = line[: len(line) - len(line.lstrip(" \t"))]
        if "\t" not in indentation:
            continue
        expanded = indentation.expandtabs(_TAB_SIZE)
        widths[number] = (len(indentation), len(expanded))
        lines[number - 1] = expanded + line[len(indentation):]
    return ExpandedIndentation("".join(lines), widths) if widths else None
