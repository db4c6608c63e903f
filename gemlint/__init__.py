"""gemlint: static analysis for ML inference code."""

from __future__ import annotations

from gemlint.version import __version__

__all__ = ["__version__", "lint_paths", "lint_source"]


def __getattr__(name: str):
    # Imported on first use, so that `import gemlint` (which flake8 does for the plugin on every
    # run, even with GEM deselected) does not load LibCST.
    if name in ("lint_paths", "lint_source"):
        from gemlint import api

        return getattr(api, name)
    raise AttributeError(f"module 'gemlint' has no attribute {name!r}")
