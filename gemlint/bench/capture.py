"""Captures what a block writes to standard error, natively (fd 2) and from Python (``sys.stderr``)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Iterator


class Captured:
    def __init__(self, path: Path) -> None:
        self.path = path

    def size(self) -> int:
        return self.path.stat().st_size

    def tail(self, lines: int = 3) -> str:
        text = self.path.read_bytes().decode("utf-8", "replace").strip().splitlines()
        return " | ".join(text[-lines:])


@contextlib.contextmanager
def captured_stderr(path: Path) -> Iterator[Captured]:
    """Send file descriptor 2 and ``sys.stderr`` to ``path`` for the block.

    Loggers that create their handlers inside the block write there too, since they bind ``sys.stderr``.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    # Both writers append, so native and Python output interleave instead of overwriting each other.
    with open(path, "ab") as sink, open(path, "a", encoding="utf-8", errors="replace", buffering=1) as text:
        os.dup2(sink.fileno(), 2)
        try:
            with contextlib.redirect_stderr(text):
                yield Captured(path)
                text.flush()
        finally:
            text.flush()
            os.dup2(saved, 2)
            os.close(saved)
