"""Facts about the whole project that single-file rules may consult (read-only, cached per process)."""

from __future__ import annotations

import ast
import os
from functools import lru_cache
from pathlib import Path

_MARKER = b"optimized_model_filepath"
_SKIP_DIRS = frozenset({".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", "site-packages"})
_MAX_FILES = 20_000


@lru_cache(maxsize=8)
def optimized_model_paths(root: Path) -> frozenset[str]:
    """Base names of the files the project writes through ONNX Runtime's ``optimized_model_filepath``.

    Files are scanned as bytes for the marker first and only those are parsed
    (with ``ast``; nothing is imported or run).
    """
    names: set[str] = set()
    seen = 0
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and not (Path(directory, d) / "pyvenv.cfg").exists()]
        for filename in filenames:
            if not filename.endswith(".py"):
                continue
            seen += 1
            if seen > _MAX_FILES:
                return frozenset(names)
            try:
                data = Path(directory, filename).read_bytes()
                if _MARKER not in data:
                    continue
                tree = ast.parse(data)
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    if any(isinstance(t, ast.Attribute) and t.attr == "optimized_model_filepath" for t in node.targets):
                        names.add(node.value.value.replace("\\", "/").rsplit("/", 1)[-1])
    return frozenset(names)


@lru_cache(maxsize=8)
def local_top_level_modules(root: Path) -> frozenset[str]:
    """Names importable from the project itself: top-level modules and packages under the root and ``src/``."""
    names: set[str] = set()
    for directory in (root, root / "src"):
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name in _SKIP_DIRS:
                continue
            if name.endswith(".py") and entry.is_file():
                names.add(name[:-3])
            elif entry.is_dir() and name.isidentifier():
                names.add(name)
    return frozenset(names)
