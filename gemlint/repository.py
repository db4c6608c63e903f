"""Where a report's paths are anchored: the repository root, and paths relative to it.

SARIF uploads, GitHub annotations and fingerprints need the same path for a file
whichever directory gemlint was started from (`gemlint src/` in the repository
root and `gemlint .` inside `src/` must both say `src/app.py`), so they use the
root of the enclosing git work tree, or the current directory outside one.
"""

from __future__ import annotations

import os
from pathlib import Path


def find_repository_root(start: Path | None = None) -> Path:
    """The nearest directory at or above ``start`` (default: the current directory) holding ``.git``."""
    directory = Path(os.path.abspath(start or Path.cwd()))
    for candidate in (directory, *directory.parents):
        if os.path.exists(candidate / ".git"):  # a directory, or a file in worktrees and submodules
            return candidate
    return directory


def repository_path(path: str, root: Path) -> str | None:
    """``path`` (as a diagnostic carries it: relative to the current directory) relative to ``root``,
    '/'-separated; None when the file lies outside ``root``."""
    absolute = Path(os.path.realpath(path))
    for base in (Path(os.path.realpath(root)), Path(os.path.abspath(root))):
        try:
            return absolute.relative_to(base).as_posix()
        except ValueError:
            continue
    unresolved = Path(os.path.abspath(path))
    try:
        return unresolved.relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return None
