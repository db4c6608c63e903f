"""A per-file result cache keyed on content, settings and gemlint's version (like ruff's cache).

Entries are JSON (never pickle: a cache directory is not trusted code), one file
per entry, written atomically, so concurrent runs cannot corrupt each other. A
corrupt or unreadable entry is a miss; an unwritable directory disables the
cache with one warning.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from gemlint.confinement import read_confined
from gemlint.version import code_digest
from gemlint.diagnostics import Applicability, CellSpan, Diagnostic, Edit, Fix, Position, RelatedLocation, Severity, Span

FORMAT = 1
#: A cache entry larger than this is corrupt (one file's findings are a few kilobytes).
MAX_ENTRY_BYTES = 16 * 1024 * 1024


def settings_fingerprint(*parts: object) -> str:
    digest = hashlib.sha256(f"{code_digest()}|{FORMAT}".encode())
    for part in parts:
        digest.update(repr(part).encode("utf-8", "backslashreplace"))
    return digest.hexdigest()


def entry_key(settings: str, display: str, relative: str, data: bytes) -> str:
    digest = hashlib.sha256(settings.encode())
    digest.update(display.encode("utf-8", "surrogateescape") + b"\0" + relative.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(data)
    return digest.hexdigest()


@dataclass
class Cache:
    directory: Path
    warnings: list[str] = field(default_factory=list)
    _disabled: bool = False

    def _path(self, key: str) -> Path:
        return self.directory / f"v{FORMAT}" / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[Diagnostic] | None:
        if self._disabled:
            return None
        try:
            # An entry is a regular file inside the folder: not a link out of it, a FIFO or a device.
            raw = read_confined(self._path(key), self.directory, MAX_ENTRY_BYTES).decode("utf-8")
        except OSError:
            return None
        except UnicodeDecodeError as error:
            self._warn(f"ignoring a corrupt cache entry ({type(error).__name__}); it will be rewritten")
            return None
        try:
            return [diagnostic_from_json(item) for item in json.loads(raw)]
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
            self._warn(f"ignoring a corrupt cache entry ({type(error).__name__}); it will be rewritten")
            return None

    def put(self, key: str, diagnostics: list[Diagnostic]) -> None:
        if self._disabled:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Created by gemlint.\n*\n", encoding="utf-8")
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump([diagnostic_to_json(d) for d in diagnostics], stream)
            os.replace(temporary, path)
        except OSError as error:
            self._disabled = True
            self._warn(f"cache disabled: cannot write to {self.directory} ({error.strerror or error})")

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)


def diagnostic_to_json(d: Diagnostic) -> dict:
    """Every field as the engine made it: positions in the linted text (a notebook's module) and, apart, the
    notebook cell spans (the report's JSON shows only the latter)."""
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        "path": d.path,
        "line": d.line,
        "column": d.column,
        "end_line": d.end_line,
        "end_column": d.end_column,
        "message": d.message,
        "fix": None
        if d.fix is None
        else {
            "applicability": d.fix.applicability.value,
            "message": d.fix.message,
            "edits": [
                {"line": e.start.line, "column": e.start.column, "end_line": e.end.line, "end_column": e.end.column,
                 "content": e.content, "cell": _cell_to_json(e.cell)}
                for e in d.fix.edits
            ],
        },
        "related": [
            {"path": r.span.path, "line": r.span.line, "column": r.span.column, "end_line": r.span.end_line,
             "end_column": r.span.end_column, "message": r.message, "cell": _cell_to_json(r.cell)}
            for r in d.related
        ],
        "precision": d.precision,
        "cell": _cell_to_json(d.cell),
    }


def _cell_to_json(cell: CellSpan | None) -> dict | None:
    return asdict(cell) if cell is not None else None


def _cell_from_json(data: object) -> CellSpan | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise TypeError("cell: expected an object or null")
    return CellSpan(**{item.name: _typed(data, item.name, int) for item in fields(CellSpan)})


def _typed(data: dict, key: str, kind: type):
    """``data[key]``, which must be of ``kind`` (a cache entry is read back from an untrusted folder)."""
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{key}: expected {kind.__name__}")
    return value


def _position(data: dict, line: str, column: str) -> Position:
    return Position(_typed(data, line, int), _typed(data, column, int))


def diagnostic_from_json(data: dict) -> Diagnostic:
    fix = data["fix"]
    if fix is not None and not isinstance(fix, dict):
        raise TypeError("fix: expected an object")
    return Diagnostic(
        code=_typed(data, "code", str),
        name=_typed(data, "name", str),
        severity=Severity(data["severity"]),
        path=_typed(data, "path", str),
        line=_typed(data, "line", int),
        column=_typed(data, "column", int),
        end_line=_typed(data, "end_line", int),
        end_column=_typed(data, "end_column", int),
        message=_typed(data, "message", str),
        fix=None
        if fix is None
        else Fix(
            tuple(
                Edit(_position(e, "line", "column"), _position(e, "end_line", "end_column"), _typed(e, "content", str), _cell_from_json(e.get("cell")))
                for e in _typed(fix, "edits", list)
            ),
            Applicability(fix["applicability"]),
            _typed(fix, "message", str),
        ),
        related=tuple(
            RelatedLocation(
                Span(_typed(r, "path", str), _typed(r, "line", int), _typed(r, "column", int), _typed(r, "end_line", int), _typed(r, "end_column", int)),
                _typed(r, "message", str),
                _cell_from_json(r.get("cell")),
            )
            for r in data.get("related", ())
        ),
        precision=_optional_string(data.get("precision")),
        cell=_cell_from_json(data.get("cell")),
    )


def _optional_string(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError("expected a string or null")
    return value
