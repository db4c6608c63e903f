"""Output formats. Each reporter turns a run's diagnostics into one string; each is imported by the run that
writes its format (SARIF's object model alone takes longer to import than a warm run takes to check a project)."""

from __future__ import annotations

FORMATS = ("text", "json", "sarif", "github", "gitlab", "junit", "rdjson")

__all__ = ["FORMATS"]
