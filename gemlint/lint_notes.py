"""Notes on the file being linted: what a rule or the engine left unreported, and why (``--verbose`` prints
them; the summary counts a file with notes as checked only in part)."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

#: Where the notes of the file being linted go.
_NOTES: ContextVar[list[str] | None] = ContextVar("gemlint_notes", default=None)


@contextmanager
def collecting_notes() -> Iterator[list[str]]:
    """The notes the rules make while the block lints (each once, in order)."""
    notes: list[str] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def note(message: str) -> None:
    """Note ``message`` for the file being linted."""
    notes = _NOTES.get()
    if notes is not None and message not in notes:
        notes.append(message)
