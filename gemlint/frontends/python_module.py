"""LibCST's parse of a Python module, with the memory its parser frees given back to the system.

LibCST's native parser builds its tokens and intermediate trees on the C heap: for a 650 KB module about
230 MiB, freed when the parse returns, while the module's tree itself holds about 25 MiB. glibc keeps freed
heap pages for later ``malloc`` calls, but Python allocates its objects in arenas of their own, so the
analyses that follow the parse never reuse them: the process kept the parse's peak and grew on top of it.
After a large module, the freed pages are handed back (``malloc_trim``, glibc only; a few milliseconds).
"""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import Callable

import libcst as cst

#: Characters from which a parse is followed by a trim: below it the parser frees too little to matter
#: (about 20 MiB at 64 K characters, against a trim of about 3 ms).
LARGE_MODULE = 64 * 1024


def parse_module(text: str) -> cst.Module:
    """``libcst.parse_module(text)``; what the parser freed goes back to the system when the text is large.
    Raises what LibCST raises."""
    try:
        return cst.parse_module(text)
    finally:
        if len(text) >= LARGE_MODULE:
            release_freed_heap()


def release_freed_heap() -> None:
    """Hand the C heap's free pages back to the system, where the C library can (glibc); else nothing."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=None)
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # only for a large module: most runs never parse one

    try:
        return ctypes.CDLL(None).malloc_trim  # glibc's; musl and others have none
    except (OSError, AttributeError):
        return None
