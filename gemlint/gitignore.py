"""Files that git ignores, and the folders of git submodules, as discovery skips them by default.

As in ruff (``respect-gitignore``): the ``.gitignore`` of every folder from the project
root down to the file (patterns relative to the folder that holds them; a deeper file's
match, negations included, wins over a shallower one) and the work tree's
``.git/info/exclude``. Read with pathspec's :class:`~pathspec.GitIgnoreSpec`, which
follows git's own matching rules; git is never run, so this also works on an exported
tree. A user's global excludes file (``core.excludesFile``) is not read.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pathspec

from gemlint.confinement import read_companion

_MAX_IGNORE_BYTES = 1_000_000


def _read_spec(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        data = read_companion(path, path, _MAX_IGNORE_BYTES)
    except OSError:  # unreadable, too large, or a link out of the work tree
        return None
    lines = data.decode("utf-8", "replace").splitlines()
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError):  # pathspec rejects a malformed pattern; git would skip it
        spec = pathspec.GitIgnoreSpec.from_lines([line for line in lines if _valid(line)])
    return spec if spec.patterns else None


def _valid(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, TypeError):
        return False
    return True


class GitIgnores:
    """The ignore files of one project root, each read once."""

    def __init__(self, root: Path) -> None:
        self.root = os.path.abspath(root)
        self._inside = self.root.rstrip(os.sep) + os.sep
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        #: A folder (relative to the root, "/"-separated) -> the ignore files that apply to what it holds:
        #: (how many folders down from the root each lies, its spec), the root's first.
        self._chains: dict[str, tuple[tuple[int, pathspec.GitIgnoreSpec], ...]] = {}
        info = os.path.join(self.root, ".git", "info", "exclude")
        self._info = _read_spec(info) if os.path.isfile(info) else None

    def _spec_of(self, folder: str) -> pathspec.GitIgnoreSpec | None:
        spec = self._specs.get(folder, False)
        if spec is False:
            path = os.path.join(folder, ".gitignore")
            spec = self._specs[folder] = _read_spec(path) if os.path.isfile(path) else None
        return spec  # type: ignore[return-value]

    def _chain(self, folder: str) -> tuple[tuple[int, pathspec.GitIgnoreSpec], ...]:
        """The ignore files of ``folder`` (relative, "" for the root) and of every folder above it."""
        chain = self._chains.get(folder)
        if chain is None:
            above, _, _ = folder.rpartition("/")
            chain = self._chain(above) if folder else ()
            spec = self._spec_of(os.path.join(self.root, folder) if folder else self.root)
            if spec is not None:
                chain = (*chain, (folder.count("/") + 1 if folder else 0, spec))
            self._chains[folder] = chain
        return chain

    def has_rules(self, folder: str) -> bool:
        """Whether any ignore file has a say on what ``folder`` (absolute and normalised) holds: a walk
        asks once per folder, not once per file."""
        if self._info is not None:
            return True
        if folder == self.root:
            return bool(self._chain(""))
        if not folder.startswith(self._inside):
            return False
        return bool(self._chain(folder[len(self._inside):].replace(os.sep, "/")))

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether git ignores ``path`` (absolute and normalised, as os.path.abspath gives it) by the ignore
        files of the folders above it: the deepest one that has a say decides."""
        if not path.startswith(self._inside):
            return False
        relative = path[len(self._inside):].replace(os.sep, "/")
        check = _check_folder if is_dir else _check_file
        result = None
        if self._info is not None:
            result = check(self._info, relative)
        folder, _, _ = relative.rpartition("/")
        chain = self._chain(folder)
        if chain:
            parts = relative.split("/")
            for depth, spec in chain:
                found = check(spec, "/".join(parts[depth:]))
                if found is not None:
                    result = found
        return bool(result)


def _check_file(spec: pathspec.GitIgnoreSpec, relative: str) -> bool | None:
    return spec.check_file(relative).include


def _check_folder(spec: pathspec.GitIgnoreSpec, relative: str) -> bool | None:
    """Whether ``spec`` ignores the folder ``relative``: its last pattern that matches the folder decides, as in
    git. (``GitIgnoreSpec.check_file`` lets a pattern that matches everything win over a later negation that
    matches folders only: with ``*`` then ``!*/``, git walks every folder and pathspec walked none.)"""
    result = None
    for pattern in spec.patterns:
        if pattern.include is not None and pattern.match_file(relative + "/") is not None:
            result = pattern.include
    return result


_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE)


def submodule_paths(root: Path) -> tuple[str, ...]:
    """The folders of the git submodules that ``root/.gitmodules`` lists, relative to ``root``
    (git-config syntax: a ``path = ...`` line in each ``[submodule "..."]`` section)."""
    path = os.path.join(root, ".gitmodules")
    try:
        text = read_companion(path, path, _MAX_IGNORE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ()
    found = []
    for match in _SUBMODULE_PATH.finditer(text):
        value = match.group(1).strip('"').strip("/")
        if value and ".." not in value.split("/"):
            found.append(value)
    return tuple(found)
