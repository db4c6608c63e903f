"""Gitignore-style path globs, compiled once per pattern set."""

from __future__ import annotations

from functools import lru_cache

import pathspec


@lru_cache(maxsize=64)
def compile_globs(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    """Gitignore-style globs (``**/train*.py``, ``tests/``, ``*.egg-info``) anchored at the config root."""
    return pathspec.PathSpec.from_lines("gitignore", patterns)
