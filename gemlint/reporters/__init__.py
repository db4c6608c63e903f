"""Output formats. Each reporter turns a run's diagnostics into one string."""

from __future__ import annotations

from gemlint.reporters.github import render_github
from gemlint.reporters.gitlab import render_gitlab
from gemlint.reporters.json import render_json
from gemlint.reporters.junit import render_junit
from gemlint.reporters.rdjson import render_rdjson
from gemlint.reporters.sarif import render_sarif

FORMATS = ("text", "json", "sarif", "github", "gitlab", "junit", "rdjson")

__all__ = ["FORMATS", "render_github", "render_gitlab", "render_json", "render_junit", "render_rdjson", "render_sarif"]
