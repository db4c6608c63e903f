"""Output formats. Each reporter turns a run's diagnostics into one string."""

from __future__ import annotations

from typing import Callable

from gemlint.reporters.github import render_github
from gemlint.reporters.json import render_json

FORMATS = ("text", "json", "github")

__all__ = ["FORMATS", "render_github", "render_json"]
