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
from dataclasses import dataclass, field
from pathlib import Path

from gemlint.version import code_digest
from gemlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position, RelatedLocation, Severity, Span

FORMAT = 1


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
            raw = self._path(key).read_text(encoding="utf-8")
        except OSError:
            return None
        try:
            return [diagnostic_from_json(item) for item in json.loads(raw)]
        except (ValueError, KeyError, TypeError) as error:
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
    data = d.to_json()
    data["related"] = [
        {"path": r.span.path, "line": r.span.line, "column": r.span.column, "end_line": r.span.end_line,
         "end_column": r.span.end_column, "message": r.message}
        for r in d.related
    ]
    return data


def diagnostic_from_json(data: dict) -> Diagnostic:
    fix = data["fix"]
    return Diagnostic(
        code=data["code"],
        name=data["name"],
        severity=Severity(data["severity"]),
        path=data["path"],
        line=data["line"],
        column=data["column"],
        end_line=data["end_line"],
        end_column=data["end_column"],
        message=data["message"],
        fix=None
        if fix is None
        else Fix(
            tuple(
                Edit(Position(e["line"], e["column"]), Position(e["end_line"], e["end_column"]), e["content"])
                for e in fix["edits"]
            ),
            Applicability(fix["applicability"]),
            fix["message"],
        ),
        related=tuple(
            RelatedLocation(Span(r["path"], r["line"], r["column"], r["end_line"], r["end_column"]), r["message"])
            for r in data.get("related", ())
        ),
    )
