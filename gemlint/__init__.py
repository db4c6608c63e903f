"""gemlint: static analysis for ML inference code."""

from __future__ import annotations

import os
import sys

# `python -m gemlint` puts the current folder first on sys.path, and the folder being linted is usually
# the current one: a file of the repository named like a module gemlint imports later (libcst.py,
# click.py) would run as gemlint's own code. While Python is still finding this package sys.argv[0] is
# "-m"; the package is found by then, and its modules come from its own __path__.
if sys.argv[:1] == ["-m"] and sys.path and sys.path[0] in ("", os.getcwd()) and not getattr(sys.flags, "safe_path", False):
    del sys.path[0]

from gemlint.version import __version__  # noqa: E402

__all__ = ["__version__", "lint_paths", "lint_source"]


def __getattr__(name: str):
    # Imported on first use, so that `import gemlint` (which flake8 does for the plugin on every
    # run, even with GEM deselected) does not load LibCST.
    if name in ("lint_paths", "lint_source"):
        from gemlint import api

        return getattr(api, name)
    raise AttributeError(f"module 'gemlint' has no attribute {name!r}")
