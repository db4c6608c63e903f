"""Unsaved editor buffers that stand in for files of the project (the language server's open documents).

The project model reads every project file through :func:`read_bytes`, so a handler edited in the
editor but not yet saved is what a probe's YAML is checked against. Outside the language server no
buffer is ever set and every read goes to the disk.
"""

from __future__ import annotations

import os
from pathlib import Path

_BUFFERS: dict[str, bytes] = {}


def set_buffer(path: str | Path, data: bytes | None) -> None:
    """Read ``data`` in place of the file ``path`` (None: read the disk again)."""
    key = os.path.abspath(path)
    if data is None:
        _BUFFERS.pop(key, None)
    else:
        _BUFFERS[key] = data


def buffer(path: str | Path) -> bytes | None:
    # Asked once per project module: with no buffer open (outside the language server), nothing to look up.
    return _BUFFERS.get(os.path.abspath(path)) if _BUFFERS else None


def read_bytes(path: str | Path) -> bytes:
    """The file's content: its open buffer's, else the disk's (raises OSError as a read would)."""
    data = _BUFFERS.get(os.path.abspath(path)) if _BUFFERS else None
    return data if data is not None else Path(path).read_bytes()
