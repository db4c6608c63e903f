"""The project index on disk: module summaries read one at a time, when a question needs them.

Two files per cache folder. ``project-index.data`` holds each summary's JSON text, one after another;
``project-index.json`` (the header) names every stored module with its content digest, its shape (a digest
of the summary without positions, :func:`~gemlint.project.summary_codec.shape_digest`) and where its text
lies in the data file. A run reads the header (small) and decodes a summary only when something asks for it:
a run over one edited file of a large project decodes the few modules its questions touch, not all of them,
and a worker process inherits an open file instead of every decoded summary.

Both files lie in the linted repository, which is untrusted: they are data (JSON, never pickle), read only
as regular files that are not links and not larger than :data:`MAX_INDEX_BYTES`, and every summary is
checked field by field as it is decoded (:mod:`gemlint.project.summary_codec`). A header that does not match
its data file (another format, another token, another size) is dropped whole; a summary that fails its check
is summarised again from the module's file.
"""

from __future__ import annotations

import json
import os
import pickle
import secrets
import stat
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from operator import add
from pathlib import Path

from gemlint.atomic import replacing, write_whole
from gemlint.confinement import read_confined
from gemlint.project.summary import ModuleSummary
from gemlint.project.summary_codec import CorruptIndex, all_of_type, decode_summary, encode, share_values
from gemlint.version import code_digest

INDEX_FILENAME = "project-index.json"
DATA_FILENAME = "project-index.data"
#: A header or data file larger than this is not read (the speed corpus's data, 4,000 modules, is ~60 MB).
MAX_INDEX_BYTES = 256 * 1024 * 1024
#: The files are rewritten once more than this many modules are summarised afresh (see IndexCache.save).
REWRITE_AFTER = 16
_TOKEN_BYTES = 16


@lru_cache(maxsize=1)
def index_format() -> str:
    """What a stored index says it was written by: read when a store is, not at import (the digest reads
    gemlint's sources; a run without a cache never needs it)."""
    return f"4|{code_digest()}"


@dataclass(slots=True)
class Stored:
    """Where a summary's text lies in the data file."""

    offset: int
    length: int


@dataclass(slots=True)
class Packed:
    """A summary this process built and packed away, for an index kept in memory only (no data file to read
    it back from). The bytes never leave the process: worker processes inherit them at fork, as the
    summaries themselves came back from the processes that built them (pickled by ``multiprocessing``)."""

    data: bytes

    def unpack(self, shared: bool = True) -> ModuleSummary:
        """The summary; with ``shared``, with one copy of each value across the project (for a summary that stays)."""
        summary = pickle.loads(self.data)
        return share_values(summary) if shared else summary


class IndexCache:
    """Summaries keyed on (module name, content digest), with their shapes: one header and one data file
    per cache folder, or only memory (``directory`` None: a long-lived process keeps its summaries)."""

    def __init__(self, directory: Path | None) -> None:
        self.file = directory / INDEX_FILENAME if directory is not None else None
        self.data_file = directory / DATA_FILENAME if directory is not None else None
        #: A decoded summary, or where its text lies in the data file.
        self.entries: dict[tuple[str, str], ModuleSummary | Stored | Packed] = {}
        self.shapes: dict[tuple[str, str], str] = {}
        #: Summaries added since the files were read (modules new or edited since).
        self.added = 0
        self.rewrite = False
        self._descriptor: int | None = None
        #: Where each summary of the data file lies, decoded or not (see :meth:`release`).
        self._where: dict[tuple[str, str], Stored] = {}
        #: Derived facts kept in memory (``directory`` None), by project root.
        self.facts: dict[str, object] = {}
        if self.file is not None:
            self._load()
            # A missing or rejected header is written (a rejected one replaced).
            self.rewrite = not self.entries

    # -- reading -------------------------------------------------------------------------------------
    def _load(self) -> None:
        assert self.file is not None and self.data_file is not None
        try:
            if os.path.islink(self.file) or os.path.islink(self.data_file):
                return
            stored = json.loads(read_confined(self.file, None, MAX_INDEX_BYTES))
            if not isinstance(stored, dict) or stored.get("format") != index_format():
                return
            token, size, rows = stored.get("token"), stored.get("size"), stored.get("entries")
            if not (isinstance(token, str) and type(size) is int and isinstance(rows, list)):
                return
            # Each column checked whole, at the speed of C: a warm run over one file reads every module's row.
            if not (all_of_type(rows, list) and set(map(len, rows)) <= {5}):
                return
            names, digests, shape_column, offsets, lengths = zip(*rows) if rows else ((),) * 5
            if not (all_of_type(chain(names, digests, shape_column), str) and all_of_type(chain(offsets, lengths), int)):
                return
            if rows and not (min(offsets) >= 0 and min(lengths) > 0 and max(map(add, offsets, lengths)) <= size):
                return
            keys = list(zip(names, digests))
            entries: dict[tuple[str, str], ModuleSummary | Stored] = dict(zip(keys, map(Stored, offsets, lengths)))
            shapes = dict(zip(keys, shape_column))
            descriptor = self._open_data(token, size)
        except (OSError, ValueError, RecursionError, MemoryError):  # missing, corrupt, foreign or too deep
            return
        if descriptor is None:
            return
        self._descriptor = descriptor
        self.entries, self.shapes = entries, shapes
        self._where = dict(entries)  # type: ignore[arg-type]

    def _open_data(self, token: str, size: int) -> int | None:
        """A descriptor of the data file when it is the one the header was written with."""
        assert self.data_file is not None
        descriptor = os.open(self.data_file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_size != size or size > MAX_INDEX_BYTES:
            os.close(descriptor)
            return None
        if os.pread(descriptor, _TOKEN_BYTES * 2, 0).decode("ascii", "replace") != token:
            os.close(descriptor)
            return None
        return descriptor

    def summary(self, key: tuple[str, str], keep: bool = True) -> ModuleSummary | None:
        """The summary stored under ``key``, decoded (and with ``keep``, kept); None when there is none or it
        fails its check."""
        found = self.entries.get(key)
        if isinstance(found, Packed):
            summary = found.unpack(shared=keep)
            if keep:
                self.entries[key] = summary
            return summary
        if not isinstance(found, Stored):
            return found
        try:
            if self._descriptor is None:
                raise CorruptIndex("no data file")
            data = os.pread(self._descriptor, found.length, found.offset)
            summary = decode_summary(json.loads(data), lambda: self._drop(key))
            if summary.name != key[0]:
                raise CorruptIndex("a summary stored under another module's name")
        except (OSError, ValueError, RecursionError, MemoryError):
            self._drop(key)
            return None
        if keep:
            self.entries[key] = summary
        return summary

    def _drop(self, key: tuple[str, str]) -> None:
        """Forget the summary stored under ``key``, found not to be what this version wrote: the files are written
        afresh, without it (the next run summarises the module again)."""
        self.entries.pop(key, None)
        self.shapes.pop(key, None)
        self._where.pop(key, None)
        self.rewrite = True

    def release(self) -> None:
        """Forget the decoded summaries (each is decoded again when asked for): a process about to fork
        workers keeps them from inheriting every summary. Those the data file holds are read from it again;
        the others are packed (a few hundred bytes each, where the objects take kilobytes)."""
        for key, found in self.entries.items():
            if isinstance(found, ModuleSummary):
                where = self._where.get(key)
                self.entries[key] = where if where is not None else Packed(pickle.dumps(found, pickle.HIGHEST_PROTOCOL))

    # -- writing -------------------------------------------------------------------------------------
    def add(self, key: tuple[str, str], summary: ModuleSummary | Packed, shape: str) -> None:
        self.entries[key] = summary
        self.shapes[key] = shape
        self.added += 1

    def save(self, used: set[tuple[str, str]]) -> None:
        if self.file is None:  # kept in memory: drop the summaries of old contents
            self.entries = {key: value for key, value in self.entries.items() if key in used}
            self.shapes = {key: value for key, value in self.shapes.items() if key in used}
            return
        # Both files are rewritten (a second or more on a large project), so not for a few edited modules:
        # those are summarised again on each run (milliseconds each) until more have changed.
        if not self.rewrite and self.added <= REWRITE_AFTER:
            return
        assert self.data_file is not None
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            token = secrets.token_hex(_TOKEN_BYTES)
            rows = []
            stored: dict[tuple[str, str], Stored] = {}
            with replacing(self.data_file, prefix=".index-") as handle:
                # Written as encoded, one summary at a time: a large project's index is tens of MB.
                handle.write(token.encode("ascii"))
                size = _TOKEN_BYTES * 2
                for key in sorted(used):
                    if key not in self.entries or key not in self.shapes:
                        continue
                    text = self._text(key)
                    if text is None:
                        continue
                    rows.append([key[0], key[1], self.shapes[key], size, len(text)])
                    stored[key] = Stored(size, len(text))
                    handle.write(text)
                    size += len(text)
            write_whole(self.file, json.dumps({"format": index_format(), "token": token, "size": size, "entries": rows}, separators=(",", ":")).encode(), prefix=".index-")
        except OSError:
            return  # an unwritable cache costs speed only
        self._reopen(token, size, stored)

    def _text(self, key: tuple[str, str]) -> bytes | None:
        found = self.entries[key]
        if isinstance(found, Packed):
            found = found.unpack(shared=False)
        if isinstance(found, Stored):
            if self._descriptor is None:
                return None
            try:
                return os.pread(self._descriptor, found.length, found.offset)
            except OSError:
                return None
        # dumps, not dump: only the one-shot encoder is the C one (ten times faster on a large index)
        return json.dumps(encode(found), separators=(",", ":")).encode()

    def _reopen(self, token: str, size: int, stored: dict[tuple[str, str], Stored]) -> None:
        """Read from the files just written from now on (the summaries held may then be released)."""
        try:
            descriptor = self._open_data(token, size)
        except OSError:
            descriptor = None
        if descriptor is None:
            return
        if self._descriptor is not None:
            os.close(self._descriptor)
        self._descriptor = descriptor
        # Packed summaries are read from the file from now on, decoded as stored ones are (with one copy of
        # each string for the whole project, where unpacking shares them within a module only).
        self.entries = {key: stored[key] if isinstance(value, (Stored, Packed)) else value for key, value in self.entries.items() if key in stored}
        self._where = stored
        self.added = 0
        self.rewrite = False
