"""What gemlint may read: the files of the project, never what a link in it points to elsewhere.

The repository being linted is untrusted input: a pull request from a fork can add any file, links
included. Git stores a symbolic link as a link, not as its target; gemlint, like git, does not read
through a link out of the project (``env.py -> /proc/self/environ`` would otherwise put a CI job's
secrets into its log), and never reads the kernel's and devices' pseudo-files under ``/proc``, ``/sys``
and ``/dev``, which are not source code and may never end.

Two boundaries are used. Discovery and the project model use the run's project root. Files read because
another file names them (an included header, a chart's ``values.yaml``, a Triton ``config.pbtxt``, a
``.gitignore``, a config's ``extend``) must lie in the git work tree of the file that names them; outside a
work tree only the pseudo-file folders are refused.
"""

from __future__ import annotations

import os
import stat
import sys
from functools import lru_cache

#: Pseudo-file systems: process state (``/proc/self/environ``), kernel state and devices.
SPECIAL_FOLDERS: tuple[str, ...] = ("/proc", "/sys", "/dev") if os.name == "posix" else ()
#: A file read whole by a companion reader is at most this big (sources and configs are far smaller).
DEFAULT_LIMIT = 64 * 1024 * 1024


class Refused(OSError):
    """A read gemlint does not make (an ``OSError``, so that every reader's handling of an unreadable
    file applies)."""

    def __init__(self, path: os.PathLike | str, reason: str) -> None:
        super().__init__(reason)
        self.filename = os.fspath(path)
        self.strerror = reason


def is_inside(real: str, folder: str) -> bool:
    """Whether the real path ``real`` is ``folder`` or lies below it (both already resolved)."""
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


def is_special(real: str) -> bool:
    return any(is_inside(real, folder) for folder in SPECIAL_FOLDERS)


@lru_cache(maxsize=1024)
def work_tree_of(folder: str) -> str:
    """The real path of the git work tree holding ``folder`` (the nearest folder at or above it with a
    ``.git``), or the filesystem root outside one. ``folder`` is an absolute, unresolved path: a link
    inside the tree is judged by where it sits, not by where it points."""
    current = os.path.abspath(folder)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return os.path.realpath(current)
        parent = os.path.dirname(current)
        if parent == current:
            return os.path.realpath(current)
        current = parent


def boundary_for(referrer: os.PathLike | str) -> str:
    """The folder a file named by ``referrer`` (a file, or the folder it sits in) must lie in."""
    path = os.path.abspath(referrer)
    return work_tree_of(path if os.path.isdir(path) else os.path.dirname(path))


def refusal(path: os.PathLike | str, within: os.PathLike | str | None) -> str | None:
    """Why ``path`` must not be read (None: it may): it resolves to a pseudo-file, or out of ``within``."""
    real = os.path.realpath(path)
    if is_special(real):
        return "a special file (under /proc, /sys or /dev); not read"
    if within is not None and not is_inside(real, os.path.realpath(within)):
        return "a symbolic link to outside the project; not read"
    return None


def read_confined(path: os.PathLike | str, within: os.PathLike | str | None, limit: int = DEFAULT_LIMIT) -> bytes:
    """The bytes of the regular file ``path``, which must resolve inside ``within`` (None: anywhere but
    the pseudo-file folders). Raises :class:`Refused` (or another ``OSError``); never blocks on a FIFO."""
    reason = refusal(path, within)
    if reason is not None:
        raise Refused(path, reason)
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(descriptor, "rb") as stream:
        # The link may have been swapped between the check and the open: judge what was opened.
        opened = _opened_path(descriptor)
        if opened is not None and opened != os.path.realpath(path):
            reason = refusal(opened, within)
            if reason is not None:
                raise Refused(path, reason)
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise Refused(path, "not a regular file; not read")
        if status.st_size > limit:
            raise Refused(path, f"larger than {limit // (1024 * 1024)} MiB; not read")
        data = stream.read(limit + 1)
        if len(data) > limit:
            raise Refused(path, f"larger than {limit // (1024 * 1024)} MiB; not read")
        return data


def read_companion(path: os.PathLike | str, referrer: os.PathLike | str, limit: int = DEFAULT_LIMIT) -> bytes:
    """A file that ``referrer`` names (see the module docstring for the boundary)."""
    return read_confined(path, boundary_for(referrer), limit)


def _opened_path(descriptor: int) -> str | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return os.readlink(f"/proc/self/fd/{descriptor}")
    except OSError:
        return None


def companion_exists(path: os.PathLike | str, referrer: os.PathLike | str) -> bool:
    """Whether ``path`` is a regular file that :func:`read_companion` would read."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
    except OSError:
        return False
    return refusal(path, boundary_for(referrer)) is None


__all__ = [
    "Refused",
    "SPECIAL_FOLDERS",
    "boundary_for",
    "companion_exists",
    "is_inside",
    "is_special",
    "read_companion",
    "read_confined",
    "refusal",
    "work_tree_of",
]
