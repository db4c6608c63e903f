"""Gitignore-style path globs, compiled once per pattern set."""

from __future__ import annotations

import fnmatch
import os
import re
from functools import lru_cache
from pathlib import Path

import pathspec
from pathspec.util import normalize_file


#: pathspec's expression for a plain name matched at any depth (``build``, ``.venv``, ``third_party``): the
#: name is one of the path's segments.
_ANY_DEPTH_NAME = re.compile(r"\^\(\?:\.\+/\)\?((?:\\.|\w)+)\(\?:/\|\$\)")
_ESCAPED = re.compile(r"\\(.)")


class Globs:
    """Compiled gitignore-style globs: :meth:`match_file` answers as pathspec's ``PathSpec.match_file``."""

    __slots__ = ("_spec", "_any", "_names")

    def __init__(self, spec: pathspec.PathSpec) -> None:
        self._spec = spec
        active = [pattern for pattern in spec.patterns if pattern.include is not None]
        self._any: re.Pattern[str] | None = None
        self._names: frozenset[str] = frozenset()
        # Without a negation the last pattern that matches always includes, so any match decides: plain names
        # (37 of the 38 default excludes) are looked up among the path's segments, and one expression tests
        # the other patterns at once (pathspec tries them one by one, for each file of a walk).
        if all(pattern.include and isinstance(getattr(pattern, "regex", None), re.Pattern) for pattern in active):
            names, others = set(), []
            for pattern in active:
                name = _ANY_DEPTH_NAME.fullmatch(pattern.regex.pattern)
                if name is not None:
                    names.add(_ESCAPED.sub(r"\1", name.group(1)))
                else:
                    others.append(pattern.regex.pattern)
            try:
                self._any = re.compile("|".join(f"(?:{regex})" for regex in others) or "(?!)")
            except re.error:  # a group name used twice, say: ask pathspec
                self._any = None
            else:
                self._names = frozenset(names)

    def match_file(self, path: str) -> bool:
        if self._any is None:
            return self._spec.match_file(path)
        normalized = normalize_file(path)
        return not self._names.isdisjoint(normalized.split("/")) or self._any.search(normalized) is not None


@lru_cache(maxsize=64)
def compile_globs(patterns: tuple[str, ...]) -> Globs:
    """Gitignore-style globs (``**/train*.py``, ``tests/``, ``*.egg-info``) anchored at the config root."""
    return Globs(pathspec.PathSpec.from_lines("gitignore", patterns))


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
