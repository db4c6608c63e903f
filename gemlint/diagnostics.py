"""The data a lint run produces: diagnostics, their positions and their fixes.

Positions are 1-based lines and 1-based columns counted in Unicode code points,
with exclusive ends (the SARIF and ruff convention); the flake8 front-end
converts to its 0-based columns at the boundary.

In a Jupyter notebook, positions are lines of the module its code cells make
(:mod:`gemlint.frontends.notebook`): suppressions, fixes and fingerprints work
on that module. Each position also carries a :class:`CellSpan`, which is where
the reports place it: a cell and a line in it, or the notebook file's JSON text.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        return {"note": 0, "warning": 1, "error": 2}[self.value]


class Applicability(str, enum.Enum):
    """How confident a fix is: safe fixes keep behaviour, unsafe ones may not."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Position:
    line: int
    column: int


@dataclass(frozen=True)
class CellSpan:
    """A span of a notebook's code where people and tools see it: in its cell (numbered from 1, every cell of
    the notebook counted, as Jupyter lists them), with lines counted from the cell's first line; and in the
    notebook file's JSON text, which is what GitHub code scanning shows of a ``.ipynb``."""

    cell: int
    line: int
    column: int
    end_line: int
    end_column: int
    file_line: int
    file_column: int
    file_end_line: int
    file_end_column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between ``start`` and ``end`` (exclusive) with ``content``."""

    start: Position
    end: Position
    content: str
    cell: CellSpan | None = None  # in a notebook: where the edit is for a reader of the notebook

    def to_json(self) -> dict:
        """In a notebook, lines and columns are counted in the cell that ``cell`` names."""
        if self.cell is not None:
            at = self.cell
            return {"line": at.line, "column": at.column, "end_line": at.end_line, "end_column": at.end_column, "content": self.content, "cell": at.cell}
        return {
            "line": self.start.line,
            "column": self.start.column,
            "end_line": self.end.line,
            "end_column": self.end.column,
            "content": self.content,
            "cell": None,
        }


@dataclass(frozen=True)
class Fix:
    edits: tuple[Edit, ...]
    applicability: Applicability
    message: str

    def to_json(self) -> dict:
        return {
            "applicability": self.applicability.value,
            "message": self.message,
            "edits": [edit.to_json() for edit in self.edits],
        }


def applicable(fix: Fix | None, unsafe: bool) -> bool:
    """Whether ``fix`` is applied: a safe one always, an unsafe one with ``--unsafe-fixes``."""
    return fix is not None and (fix.applicability is Applicability.SAFE or unsafe)


@dataclass(frozen=True)
class Span:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class RelatedLocation:
    span: Span
    message: str
    cell: CellSpan | None = None  # in a notebook: where ``span`` is for a reader of the notebook


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    severity: Severity
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    fix: Fix | None = None
    related: tuple[RelatedLocation, ...] = field(default=())
    #: This finding's confidence tier where it is below its rule's (CodeQL's precision levels): "medium" for
    #: a finding whose inference context rests on a name alone (reported with ``strict``). None: the rule's.
    precision: str | None = None
    #: In a notebook: where the finding is for a reader of the notebook (the reports show this, not ``line``).
    cell: CellSpan | None = None

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.message)

    def to_json(self) -> dict:
        """The pinned JSON shape (keys may be added, never renamed). In a notebook, lines and columns are
        counted in the cell that ``cell`` names (as ruff writes them); elsewhere ``cell`` is null."""
        at = self.cell or self
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "path": self.path,
            "line": at.line,
            "column": at.column,
            "end_line": at.end_line,
            "end_column": at.end_column,
            "message": self.message,
            "fix": self.fix.to_json() if self.fix else None,
            "precision": self.precision,
            "cell": self.cell.cell if self.cell else None,
        }
