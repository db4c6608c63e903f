"""The library API: lint paths or a source string and get diagnostics back as data."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from gemlint.config import Config, default_config
from gemlint.config_tree import ConfigTree, project_root_for
from gemlint.diagnostics import Diagnostic
from gemlint.discovery import SourceFile
from gemlint.engine import lint_text
from gemlint.languages import Language, language_of
from gemlint.registry import all_rules, known_codes
from gemlint.runner import run
from gemlint.selection import Selection


def lint_paths(paths: Iterable[str | Path], *, config: Config | None = None, jobs: int | None = 1, **overrides) -> list[Diagnostic]:
    """Lint files and directories as the CLI does (without fixing); returns the findings sorted by location.

    Each file uses its nearest config file, as on the command line, unless ``config`` is given (then
    every file uses it). ``overrides`` are :class:`~gemlint.config.Config` fields, e.g. ``select=("GEM2",)``.
    """
    targets = [Path(p) for p in paths] or [Path(".")]
    if config is not None:
        return run(targets, config.with_overrides(**overrides), jobs=jobs).diagnostics
    tree = ConfigTree(project_root_for(targets), known_codes(), adjust=lambda found: found.with_overrides(**overrides))
    return run(targets, tree, jobs=jobs).diagnostics


def lint_source(
    source: str, path: str | Path = "<string>.py", *, config: Config | None = None, language: Language | None = None, **overrides
) -> list[Diagnostic]:
    """Lint source text as if it were the file ``path`` (whose name decides the language and path globs)."""
    path = Path(path)
    effective = (config or default_config(Path.cwd())).with_overrides(**overrides)
    lang = language or language_of(path) or Language.PYTHON
    relative = path.as_posix()
    source_file = SourceFile(path, lang, relative, relative)
    return lint_text(source_file, source, Selection.from_config(effective, all_rules()), project=False)
