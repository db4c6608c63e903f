"""Gitignore-style path globs, compiled once per pattern set."""

from __future__ import annotations

import fnmatch
import os
from functools import lru_cache
from pathlib import Path

import pathspec


@lru_cache(maxsize=64)
def compile_globs(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    """Gitignore-style globs (``**/train*.py``, ``tests/``, ``*.egg-info``) anchored at the config root."""
    return pathspec.PathSpec.from_lines("gitignore", patterns)


def rebase_globs(patterns: tuple[str, ...], old: Path, new: Path) -> tuple[str, ...]:
    """Gitignore-style ``patterns`` written relative to folder ``old``, rewritten relative to ``new``
    so that they match the same files under ``new`` (``extend`` of a config in another folder).

    A pattern that can match nothing under ``new`` is dropped; one that matches a folder above
    ``new`` becomes ``**`` (everything).
    """
    old, new = Path(os.path.abspath(old)), Path(os.path.abspath(new))
    result: list[str] = []
    for pattern in patterns:
        negated = pattern.startswith("!")
        body = pattern[1:] if negated else pattern
        directory_only = body.endswith("/")
        body = body.strip("/") if body.startswith("/") or "/" in body.rstrip("/") else "**/" + body.rstrip("/")
        segments = [part for part in body.split("/") if part]
        if new == old or old in new.parents:
            rebased = _strip(tuple(segments), new.relative_to(old).parts)
        elif new in old.parents:
            rebased = {(*old.relative_to(new).parts, *segments)}
        else:
            rebased = set()
        for moved in sorted(rebased):
            text = "/".join(moved)
            text = text if text.startswith("**") else "/" + text
            if directory_only and moved != ("**",):
                text += "/"
            result.append(("!" if negated else "") + text)
    return tuple(dict.fromkeys(result))


def _strip(segments: tuple[str, ...], prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
    """The remainders of ``segments`` once their leading part has matched the folders ``prefix``."""
    if not prefix:
        return {segments}
    if not segments:
        return {("**",)}  # the pattern matched a folder above: everything under it matches
    head, rest = segments[0], segments[1:]
    if head == "**":
        return _strip(rest, prefix) | _strip(segments, prefix[1:])
    if fnmatch.fnmatchcase(prefix[0], head):
        return _strip(rest, prefix[1:])
    return set()
