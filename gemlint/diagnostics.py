"""The data a lint run produces: diagnostics, their positions and their fixes.

Positions are 1-based lines and 1-based columns counted in Unicode code points,
with exclusive ends (the SARIF and ruff convention); the flake8 front-end
converts to its 0-based columns at the boundary.
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
class Edit:
    """Replace the text between ``start`` and ``end`` (exclusive) with ``content``."""

    start: Position
    end: Position
    content: str

    def to_json(self) -> dict:
        return {
            "line": self.start.line,
            "column": self.start.column,
            "end_line": self.end.line,
            "end_column": self.end.column,
            "content": self.content,
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

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.message)

    def to_json(self) -> dict:
        """The pinned JSON shape (keys may be added, never renamed)."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
            "fix": self.fix.to_json() if self.fix else None,
            "precision": self.precision,
        }
