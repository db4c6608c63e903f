"""A project root's walk, kept in the cache folder and taken again while no folder of it changed.

A run over one edited file of a large project still needs every file of the project: the project model reads
the modules, and the cache keys of cross-file findings hash every file. Walking the root (listing each folder,
matching each name against the excludes and the ignore files) was a fifth of such a run. As git's untracked
cache does, the walk is kept with the status of each folder it listed: adding, removing or renaming an entry
changes its folder's modification time, and changing a folder's permissions its change time. A later run
stats the folders, and the files whose content steers the walk (ignore files, config files, ``.gitmodules``,
``.git/info/exclude``), and takes the kept walk when none changed; otherwise it walks, and keeps the new walk.

Not kept: a walk that met a link or a path it refused or could not list (what those resolve to can change
without their folder changing), and a walk with a folder or steering file modified within
:data:`RACY_SECONDS` of the walk (it may change again within the same timestamp). The record lies in the
cache folder, which is untrusted: JSON, each value checked; anything else is no record.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import AbstractSet

from gemlint.atomic import write_json
from gemlint.config import CONFIG_FILENAMES
from gemlint.confinement import is_inside, read_confined
from gemlint.discovery import Discovery, SourceFile, remember_listing
from gemlint.languages import Language

#: A folder or file modified this close (in seconds) to the walk may change again within the same timestamp.
RACY_SECONDS = 2.0
#: The entries of a listing whose content decides what the walk finds.
_STEERING = frozenset({".gitignore", ".gitmodules", *CONFIG_FILENAMES})
_LANGUAGES = {language.value: language for language in Language}


def _status(path: str) -> list[int] | None:
    """What tells a folder's or file's change: its modification and change times, inode and size."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_mtime_ns, found.st_ctime_ns, found.st_ino, found.st_size]


class _Watch:
    """Notes what a walk lists (:class:`~gemlint.discovery.WalkWatch`)."""

    def __init__(self) -> None:
        self.started = time.time()
        self.spoiled = False
        #: Folder -> its status before it was listed, then [status, shown, prefix, holds __init__.py].
        self.folders: dict[str, list] = {}
        self.steering: dict[str, list[int] | None] = {}

    def entering(self, folder: str) -> None:
        status = _status(folder)
        if status is None:
            self.spoiled = True
        self.folders[folder] = [status, None, None, False]

    def listed(self, folder: str, shown: str, prefix: str, names: AbstractSet[str], links: bool, package: bool) -> None:
        if links:
            self.spoiled = True
        record = self.folders[folder]
        record[1:] = [shown, prefix, package]
        for name in _STEERING.intersection(names):
            path = os.path.join(folder, name)
            self.steering[path] = _status(path)

    def spoil(self) -> None:
        self.spoiled = True

    def keepable(self) -> bool:
        """No link, refusal or unlistable folder met, and nothing modified too close to the walk."""
        if self.spoiled:
            return False
        recent = (self.started - RACY_SECONDS) * 1e9
        statuses = [record[0] for record in self.folders.values()] + [status for status in self.steering.values() if status is not None]
        return all(status[0] < recent and status[1] < recent for status in statuses)


#: A kept walk larger than this is corrupt (a project of 100,000 files keeps a few MB).
MAX_RECORD_BYTES = 256 * 1024 * 1024


class WalkRecord:
    """The kept walk of the project ``root`` in ``file``, a file of the cache folder ``within``; ``version``
    names what else decides a walk (gemlint's version)."""

    def __init__(self, file: Path, within: Path, root: Path, version: str) -> None:
        self._path, self._within, self._version = file, within, version
        self.root = os.path.abspath(root)

    def files(self, discovery: Discovery) -> list[SourceFile]:
        """The files ``discovery`` finds under the root: the kept walk while it holds, else a new walk (kept)."""
        key = self._key(discovery)
        kept = self._read(key)
        if kept is not None:
            return kept
        watch = discovery.watch = _Watch()
        info = os.path.join(self.root, ".git", "info", "exclude")
        watch.steering[info] = _status(info)
        try:
            found = list(discovery.files([Path(self.root)]))
        finally:
            discovery.watch = None
        if watch.keepable():
            self._write(key, watch, found)
        return found

    def _key(self, discovery: Discovery) -> str:
        """What else decides the walk: the project's configuration, the current folder (files show relative to
        it) and gemlint's version."""
        text = repr((self._version, self.root, str(discovery.cwd), discovery.config))
        return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()

    def _write(self, key: str, watch: _Watch, found: list[SourceFile]) -> None:
        folders = list(watch.folders)
        number = {folder: index for index, folder in enumerate(folders)}
        files = []
        for source in found:
            folder, _, name = source.absolute_path().rpartition(os.sep)
            folder = folder or os.sep
            record = watch.folders.get(folder)
            if record is None or record[1] is None or source.display != record[1] + name or source.relative != record[2] + name:
                return  # a file the walk did not find in a listed folder as the record rebuilds it: not kept
            files.append([number[folder], name, source.language.value, source.regular])
        value = {
            "key": key,
            "folders": [[folder, *watch.folders[folder]] for folder in folders],
            "steering": [[path, status] for path, status in watch.steering.items()],
            "files": files,
        }
        try:
            write_json(self._path, value)
        except OSError:
            pass  # an unwritable cache costs speed only

    def _read(self, key: str) -> list[SourceFile] | None:
        """The kept walk, when it is this key's and no folder or steering file changed since."""
        try:
            data = json.loads(read_confined(self._path, self._within, MAX_RECORD_BYTES))
            if not isinstance(data, dict) or data.get("key") != key:
                return None
            folders, steering, files = data["folders"], data["steering"], data["files"]
            for path, status in steering:
                if not isinstance(path, str) or _status(path) != status:
                    return None
            shown: list[tuple[str, str, str]] = []
            for path, status, display, prefix, package in folders:
                # Only the project's own folders, normal and absolute: a record names no file outside the root.
                if not (isinstance(path, str) and path == os.path.normpath(path) and is_inside(path, self.root)):
                    return None
                if status is None or _status(path) != status:
                    return None
                if display is not None and not (isinstance(display, str) and isinstance(prefix, str) and type(package) is bool):
                    return None
                shown.append((path, display or "", prefix or ""))
            sources = []
            for index, name, language, regular in files:
                folder, display, prefix = shown[index]
                if not (isinstance(name, str) and os.sep not in name and (regular is None or type(regular) is bool)):
                    return None
                absolute = (folder if folder.endswith(os.sep) else folder + os.sep) + name
                sources.append(SourceFile(absolute, _LANGUAGES[language], display + name, prefix + name, regular, absolute))
        except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError, MemoryError):
            return None
        for path, _, display, _, package in folders:
            if display is not None:
                remember_listing(path, package)
        return sources


#: The record of each project root for this run (set by the runner when it has a cache).
_RECORDS: dict[str, WalkRecord] = {}


def keep_walks(root: Path, record: WalkRecord | None) -> None:
    """Let this run take ``root``'s walk from ``record`` (None: walk it)."""
    if record is None:
        _RECORDS.pop(os.path.abspath(root), None)
    else:
        _RECORDS[os.path.abspath(root)] = record


#: The files this run's own walk of a project root found, where it walked the root as the project does.
_ROOT_WALKS: dict[str, list[SourceFile]] = {}


def keep_root_walk(root: Path, files: list[SourceFile] | None) -> None:
    """Let this run's project model take ``root``'s files from ``files``, the run's walk of it with the project's
    excludes (None: walk it if asked)."""
    if files is None:
        _ROOT_WALKS.pop(os.path.abspath(root), None)
    else:
        _ROOT_WALKS[os.path.abspath(root)] = files


def forget_root_walks() -> None:
    """Forget every run's walk of its root: a later question of the project walks the root as it is now."""
    _ROOT_WALKS.clear()


def root_files(discovery: Discovery, root: Path) -> list[SourceFile]:
    """The files a walk of the project ``root`` finds: the run's own walk, or its kept walk, where this run
    has one."""
    walked = _ROOT_WALKS.get(os.path.abspath(root))
    if walked is not None:
        return list(walked)
    record = _RECORDS.get(os.path.abspath(root))
    if record is not None:
        return record.files(discovery)
    return list(discovery.files([root]))
