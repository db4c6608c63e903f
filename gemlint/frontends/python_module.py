"""LibCST's parse of a Python module, with the memory its parser frees given back to the system.

LibCST's native parser builds its tokens and intermediate trees on the C heap: for a 650 KB module about
230 MiB, freed when the parse returns, while the module's tree itself holds about 25 MiB. glibc keeps freed
heap pages for later ``malloc`` calls, but Python allocates its objects in arenas of their own, so the
analyses that follow the parse never reuse them: the process kept the parse's peak and grew on top of it.
After a large module, the freed pages are handed back (``malloc_trim``, glibc only; a few milliseconds).

Each node LibCST's parser builds checks itself as it is constructed (``CSTNode.__post_init__`` calls
``_validate``: is this whitespace whitespace, are these parentheses balanced), a tenth of the parse. The parser
builds nodes only from text its grammar accepted, and LibCST's own source notes the waste ("It might make more
sense to move validation work into the visitor, which would allow us to avoid validating the tree when parsing
a file"). While a thread parses here, the nodes it builds skip the check; nodes built anywhere else (a fix, an
analysis, another thread) are checked as LibCST checks them.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Callable, Iterator

import libcst as cst

from gemlint.frontends.counted_swap import CountedSwap

#: Characters from which a parse is followed by a trim: below it the parser frees too little to matter
#: (about 20 MiB at 64 K characters, against a trim of about 3 ms).
LARGE_MODULE = 64 * 1024


def parse_module(text: str) -> cst.Module:
    """``libcst.parse_module(text)``; what the parser freed goes back to the system when the text is large.
    Raises what LibCST raises."""
    try:
        with _unchecked_construction():
            return cst.parse_module(text)
    finally:
        if len(text) >= LARGE_MODULE:
            release_freed_heap()


_LIBCST_POST_INIT = cst.CSTNode.__post_init__
# Whether this thread is parsing: its nodes come from the parser.
_PARSING: ContextVar[bool] = ContextVar("gemlint_parsing", default=False)


def _post_init(node: cst.CSTNode) -> None:
    if not _PARSING.get():
        _LIBCST_POST_INIT(node)


_UNCHECKED = CountedSwap(cst.CSTNode, "__post_init__", _post_init)


@contextmanager
def _unchecked_construction() -> Iterator[None]:
    token = _PARSING.set(True)
    try:
        with _UNCHECKED.installed():
            yield
    finally:
        _PARSING.reset(token)


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
