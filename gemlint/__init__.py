"""gemlint: static analysis for ML inference code."""

from __future__ import annotations

__version__ = "0.1.0"

from gemlint.api import lint_paths, lint_source  # noqa: E402

__all__ = ["__version__", "lint_paths", "lint_source"]
