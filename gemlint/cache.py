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
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from gemlint.atomic import write_json
from gemlint.confinement import read_confined
from gemlint.text import file_digest
from gemlint.version import code_digest
from gemlint.diagnostics import Applicability, CellSpan, Diagnostic, Edit, Fix, Position, RelatedLocation, Severity, Span

FORMAT = 1
#: A cache entry larger than this is corrupt (one file's findings are a few kilobytes).
MAX_ENTRY_BYTES = 16 * 1024 * 1024
#: A run's record holds every linted file's findings.
MAX_RECORD_BYTES = 512 * 1024 * 1024


def settings_fingerprint(*parts: object) -> str:
    digest = hashlib.sha256(f"{code_digest()}|{FORMAT}".encode())
    for part in parts:
        digest.update(repr(part).encode("utf-8", "backslashreplace"))
    return digest.hexdigest()


def content_digest(data: bytes) -> str:
    """What a cache key knows of a file's bytes (and of what else its findings depend on): the project index's
    digest, so that :class:`FileDigests`' records of unchanged files serve the index too."""
    return file_digest(data)


def entry_key(settings: str, display: str, relative: str, content: str) -> str:
    """The key of a file's findings: its settings, its names and :func:`content_digest` of what they depend on."""
    digest = hashlib.sha256(settings.encode())
    digest.update(display.encode("utf-8", "surrogateescape") + b"\0" + relative.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(content.encode())
    return digest.hexdigest()


@dataclass
class Cache:
    directory: Path
    warnings: list[str] = field(default_factory=list)
    _disabled: bool = False
    #: The findings of the last run over the same folders, by entry key (see :meth:`use_run_record`).
    _recorded: dict[str, list] | None = None
    #: This run's entries, for the next run's record.
    _used: dict[str, list] = field(default_factory=dict)
    _record_path: Path | None = None

    def _path(self, key: str) -> Path:
        return self.directory / f"v{FORMAT}" / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[Diagnostic] | None:
        if self._disabled:
            return None
        raw = self._recorded.get(key) if self._recorded is not None else None
        if raw is None:
            try:
                # An entry is a regular file inside the folder: not a link out of it, a FIFO or a device.
                raw = json.loads(read_confined(self._path(key), self.directory, MAX_ENTRY_BYTES).decode("utf-8"))
            except OSError:
                return None
            except (UnicodeDecodeError, ValueError, RecursionError) as error:
                self._warn(f"ignoring a corrupt cache entry ({type(error).__name__}); it will be rewritten")
                return None
        try:
            diagnostics = [diagnostic_from_json(item) for item in raw]
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
            self._warn(f"ignoring a corrupt cache entry ({type(error).__name__}); it will be rewritten")
            return None
        if self._record_path is not None:
            self._used[key] = raw
        return diagnostics

    def put(self, key: str, diagnostics: list[Diagnostic]) -> None:
        if self._disabled:
            return
        entry = [diagnostic_to_json(d) for d in diagnostics]
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Created by gemlint.\n*\n", encoding="utf-8")
            write_json(self._path(key), entry)
        except OSError as error:
            self._disabled = True
            self._warn(f"cache disabled: cannot write to {self.directory} ({error.strerror or error})")
            return
        if self._record_path is not None:
            self._used[key] = entry

    def use_run_record(self, folders: list[str]) -> None:
        """Read the entries of the last run over the same ``folders`` from one file, and keep this run's for the
        next (as ruff keeps one cache file per package): a warm run reads one file, not one per linted file.
        The record holds entries under their keys, so a stale one is never used; the per-file entries stay for
        runs over other paths (pre-commit's file lists, which get no record)."""
        joined = "\0".join(sorted(os.path.abspath(folder) for folder in folders))
        name = hashlib.sha256(joined.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        self._record_path = self.directory / f"v{FORMAT}" / "runs" / f"{name}.json"
        self._used = {}
        try:
            recorded = json.loads(read_confined(self._record_path, self.directory, MAX_RECORD_BYTES))
        except (OSError, ValueError, RecursionError):
            recorded = None  # none yet, or a corrupt one: the per-file entries answer
        self._recorded = recorded if isinstance(recorded, dict) else None

    def save_run_record(self) -> None:
        if self._record_path is None or self._disabled or (self._recorded is not None and self._recorded.keys() == self._used.keys()):
            return
        try:
            write_json(self._record_path, self._used)
        except OSError as error:
            self._warn(f"cannot record this run's findings in {self.directory} ({error.strerror or error})")

    def root_file(self, kind: str, root: Path | str) -> Path:
        """The file of this cache that keeps ``kind`` (digests, walks) for the project ``root``."""
        name = hashlib.sha256(os.path.abspath(root).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return self.directory / f"v{FORMAT}" / kind / f"{name}.json"

    @property
    def writable(self) -> bool:
        """False once a write failed: the cache is disabled for the rest of the run."""
        return not self._disabled

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


#: A file modified this close (in seconds) to when it was read may change again within the same timestamp.
_RACY_SECONDS = 2.0


class FileDigests:
    """Content digests of a project's files, kept with each file's size and modification time (as ruff's cache
    and git's index do): a warm run stats a file instead of reading and hashing it to learn it did not change.

    One JSON file per project root in the cache directory, read once and written once per run. A record is
    used only when the file's size and ``st_mtime_ns`` are the recorded ones; a file modified within
    :data:`_RACY_SECONDS` of being read is not recorded, since it may change again within the same timestamp
    (git's "racily clean" entries).
    """

    def __init__(self, cache: Cache, root: str) -> None:
        self._cache = cache
        self._path = cache.root_file("digests", root)
        self._records: dict[str, list] = {}
        self._this_run: dict[str, str] = {}
        self._changed = False
        try:
            records = json.loads(read_confined(self._path, cache.directory, MAX_ENTRY_BYTES))
            if isinstance(records, dict):
                self._records = records
        except (OSError, ValueError):
            pass  # no record yet, or a corrupt one: every file is read

    def digest(self, path: str, read: Callable[[str], bytes]) -> str:
        """:func:`content_digest` of the file at ``path``; ``read`` reads it when its record does not match (and
        raises what it raises: the caller decides what an unreadable file means). Asked again in the same run
        (the project's state, then the project index), the first answer stands: one stat per file per run."""
        known = self._this_run.get(path)
        if known is not None:
            return known
        try:
            stat = os.stat(path)
        except OSError:
            stat = None
        record = self._records.get(path)
        if stat is not None and isinstance(record, list) and record[:2] == [stat.st_mtime_ns, stat.st_size] and len(record) == 3:
            self._this_run[path] = record[2]
            return record[2]
        digest = self._this_run[path] = content_digest(read(path))
        if stat is not None and stat.st_mtime_ns / 1e9 < time.time() - _RACY_SECONDS:
            self._records[path] = [stat.st_mtime_ns, stat.st_size, digest]
            self._changed = True
        return digest

    def save(self) -> None:
        if not self._changed or not self._cache.writable:
            return
        try:
            write_json(self._path, self._records)
        except OSError as error:
            self._cache._warn(f"cannot record file digests in {self._cache.directory} ({error.strerror or error})")
        self._changed = False
