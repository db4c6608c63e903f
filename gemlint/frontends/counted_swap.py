"""A class attribute replaced while any thread needs it replaced, and put back when the last one is done.

gemlint replaces two of LibCST's methods for a while: ``CSTNode.visit`` while a scope analysis walks the
analysis index (:mod:`gemlint.analysis.scopes`), ``CSTNode.__post_init__`` while the parser builds a tree
(:mod:`gemlint.frontends.python_module`). Threads may overlap (the language server lints in threads), so each
swap counts who is inside it, under a lock; the replacement itself asks a context variable whether the thread
calling it is one of them, and does what LibCST does for any other.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator


class CountedSwap:
    """``owner.name`` is ``replacement`` while any thread is inside :meth:`installed`, ``original`` otherwise."""

    def __init__(self, owner: type, name: str, replacement: Any) -> None:
        self._owner, self._name, self._replacement = owner, name, replacement
        self.original = getattr(owner, name)
        self._inside = 0
        self._lock = threading.Lock()

    @contextmanager
    def installed(self) -> Iterator[None]:
        with self._lock:
            if not self._inside:
                setattr(self._owner, self._name, self._replacement)
            self._inside += 1
        try:
            yield
        finally:
            with self._lock:
                self._inside -= 1
                if not self._inside:
                    setattr(self._owner, self._name, self.original)
