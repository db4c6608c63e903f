"""Work done in a forked copy of this process while this one goes on; its result comes back through a pipe.

A process that derives a large project's facts has both cores to itself only if it hands half of the work to a
copy of itself: the copy inherits every decoded summary and answer at no cost, and sends back only what it
derived. The copy is made with ``os.fork`` directly, not a process pool: the work is a closure over the
derivation's state, which a pool would have to pickle. Only a process that runs no other thread may fork so (a
thread holding a lock at the fork would hold it in the copy for ever); the caller decides that.
"""

from __future__ import annotations

import os
import pickle
import signal
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Forked(Generic[T]):
    """``function()`` computing in a forked process; :meth:`result` waits for it."""

    def __init__(self, pid: int, reader: int) -> None:
        self._pid = pid
        self._reader = reader

    def discard(self) -> None:
        """Stop waiting for the copy: it is ended, and its result dropped (the caller left before asking for it)."""
        try:
            os.kill(self._pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(self._reader)
        os.waitpid(self._pid, 0)

    def result(self) -> T | None:
        """The function's result; None if the copy failed (an exception, killed, out of memory), for the caller
        to compute it itself."""
        with os.fdopen(self._reader, "rb") as pipe:
            data = pipe.read()  # read to the end before waiting: a result larger than the pipe holds blocks the copy
        _, status = os.waitpid(self._pid, 0)
        if not data or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return None
        try:
            return pickle.loads(data)
        except (pickle.UnpicklingError, EOFError, ValueError):
            return None


def start(function: Callable[[], T]) -> Forked[T] | None:
    """``function()`` in a forked copy of this process; None where processes cannot fork (Windows)."""
    if not hasattr(os, "fork"):
        return None
    reader, writer = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no room for another process: the caller computes it
        os.close(reader)
        os.close(writer)
        return None
    if pid == 0:  # the copy: compute, send, and leave without running this process's exit handlers or flushes
        code = 1
        try:
            os.close(reader)
            with os.fdopen(writer, "wb") as pipe:
                pickle.dump(function(), pipe, pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(writer)
    return Forked(pid, reader)
