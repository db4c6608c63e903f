"""gemlint as a flake8 plugin (entry point ``GEM`` in group ``flake8.extension``).

flake8 gives each file's lines; the plugin parses them once with LibCST and
runs every single-file Python rule through the same engine as the CLI, with the
configuration the CLI would use for that file (the nearest ``[tool.gemlint]`` /
``gemlint.toml`` above it, or ``--gemlint-config``; see :mod:`gemlint.config_tree`):
its select/ignore, preview, per-file-ignores and excludes (a preview rule also runs when
flake8's own ``--select``/``--extend-select`` names its exact code). flake8 applies ``# noqa``
itself, with the semantics gemlint copies, so the plugin leaves line-level
``# noqa`` to flake8 (``--disable-noqa`` works) and applies only the file-level
``# gemlint: noqa`` that flake8 does not know.

Columns are 0-based as flake8 expects (it adds 1 when printing). A file that no
selected rule can match (by the rules' text prefilters, then by what flake8's
``ast`` tree shows) is never parsed by LibCST, and no exception ever escapes to
flake8: LibCST failures become a GEM000 finding.

Start-up matters here: flake8 runs the plugin in a fresh process on every save. That triage reads the
rules' markers and syntax gates from :mod:`gemlint.rules.triage_table`, so for the many files that no
rule admits, neither LibCST nor the engine, the analyses or any rule is ever imported.
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Iterator

from gemlint.text import ScannedText
from gemlint.version import __version__

if TYPE_CHECKING:
    from gemlint.analysis.triage import RuleTriage
    from gemlint.config import Config
    from gemlint.config_tree import ConfigTree
    from gemlint.discovery import Discovery
    from gemlint.selection import Selection

# flake8 imports every installed plugin on every run, even when GEM is not selected, so the engine
# and LibCST are imported on the first file instead of here.

_NOT_A_PATH = frozenset({"stdin", "-"})
_EXACT_CODE = re.compile(r"^GEM[0-9]{3}$")


@lru_cache(maxsize=256)
def _settings(
    directory: str, config_file: str | None, project_root: str | None = None, named_codes: frozenset[str] = frozenset()
) -> "tuple[Selection, Discovery] | str":
    """The selection and excludes for files in ``directory``, or the configuration error's text.

    The same resolution as the command line's: the nearest config above the folder (or
    ``--gemlint-config`` for every file), project-wide keys from the project root's config.
    ``named_codes`` are the exact codes flake8's own ``--select``/``--extend-select`` name: as in
    gemlint, naming a preview rule's exact code enables it."""
    from gemlint.config import ConfigError
    from gemlint.config_tree import project_root_for
    from gemlint.discovery import Discovery

    try:
        tree = _tree(project_root or str(project_root_for([Path(directory)])), config_file)
        return _selection(tree.config_of_folder(directory), named_codes), Discovery(tree)
    except ConfigError as error:
        return str(error)


@lru_cache(maxsize=16)
def _tree(root: str, config_file: str | None) -> "ConfigTree":
    from gemlint.config_tree import ConfigTree
    from gemlint.registry import known_codes  # from the rules' table: no rule is imported

    return ConfigTree(Path(root), known_codes(), config_file=Path(config_file) if config_file else None)


@lru_cache(maxsize=64)
def _selection(config: "Config", named_codes: frozenset[str] = frozenset()) -> "Selection":
    """The selected rules' triage entries (the rules themselves are imported only for admitted files)."""
    from gemlint.rules.triage_table import PYTHON_RULES
    from gemlint.selection import Selection

    previews = tuple(sorted(rule.code for rule in PYTHON_RULES if rule.preview and rule.code in named_codes))
    if previews:
        config = config.with_overrides(extend_select=config.extend_select + previews)
    return Selection.from_config(config, PYTHON_RULES)  # type: ignore[arg-type]  # code and preview suffice


@lru_cache(maxsize=64)
def _rule_selection(config: "Config") -> "Selection":
    """The same selection with the rule classes, for a file that the triage admitted."""
    from gemlint.registry import all_rules
    from gemlint.selection import Selection

    return Selection.from_config(config, all_rules())


class Flake8Plugin:
    name = "gemlint"
    version = __version__

    #: From ``--gemlint-config`` (flake8 creates one instance per file, so options live on the class).
    config_file: ClassVar[str | None] = None
    #: From ``--gemlint-project-root``.
    project_root: ClassVar[str | None] = None
    #: Exact GEM codes in flake8's ``--select``/``--extend-select`` (they enable preview rules).
    named_codes: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, tree: Any, lines: list[str], filename: str) -> None:
        # flake8 picks the plugin type from the parameter names: ``tree`` makes this a per-file
        # plugin. Its ``ast`` tree spares the engine a parse of its own for the triage.
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        option_manager.add_option(
            "--gemlint-config",
            default=None,
            parse_from_config=True,
            normalize_paths=True,  # a path in .flake8/setup.cfg/tox.ini is relative to that file
            help="gemlint configuration file (default: the nearest pyproject.toml with [tool.gemlint], "
            "gemlint.toml or .gemlint.toml above each file)",
        )
        option_manager.add_option(
            "--gemlint-project-root",
            default=None,
            parse_from_config=True,
            normalize_paths=True,
            help="gemlint's project root, as its --project-root (default: the git work tree holding each file)",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        value = getattr(options, "gemlint_config", None)
        cls.config_file = os.path.abspath(value) if value else None
        root = getattr(options, "gemlint_project_root", None)
        cls.project_root = os.path.abspath(root) if root else None
        named = [*(getattr(options, "select", None) or ()), *(getattr(options, "extend_select", None) or ())]
        cls.named_codes = frozenset(code.strip().upper() for code in named if _EXACT_CODE.match(code.strip().upper()))

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            yield from self._run()
        except Exception as error:  # flake8 stops every check on a plugin exception
            yield 1, 0, f"GEM000 internal error in gemlint's flake8 plugin ({type(error).__name__}: {error}); please report it", type(self)

    def _run(self) -> Iterator[tuple[int, int, str, type]]:
        from gemlint.analysis.triage import Triage, collect
        from gemlint.discovery import SourceFile, root_relative
        from gemlint.languages import Language

        path = Path(self.filename)
        named = self.filename not in _NOT_A_PATH
        directory = os.path.dirname(os.path.abspath(path)) if named else os.getcwd()
        settings = _settings(directory, self.config_file, self.project_root, self.named_codes)
        if isinstance(settings, str):
            yield 1, 0, f"GEM000 gemlint configuration error: {settings}", type(self)
            return
        selection, discovery = settings
        config = selection.config
        if named and discovery.is_excluded_file(path):
            return
        relative = root_relative(path, config.glob_root) if named else self.filename
        text = "".join(self.lines)
        scanned = ScannedText(text)
        candidates: list[RuleTriage] = [rule for rule in selection.rules_for(relative) if rule.may_match(scanned)]
        if not candidates:
            return  # nothing selected can match: never parse
        tree = self.tree if isinstance(self.tree, ast.Module) else None
        facts = None
        if tree is not None:
            facts = collect(tree)
            triage = Triage.of(facts, text, config, relative, path if named else None)
            if not any(rule.gate.admits(triage) for rule in candidates):
                return  # what the rules look for is not in the file's syntax: LibCST and the rules stay unimported
        from gemlint.engine import lint_text

        source = SourceFile(path, Language.PYTHON, self.filename, relative)
        diagnostics = lint_text(source, text, _rule_selection(config), line_noqa=False, tree=tree, project=False, facts=facts)
        for d in diagnostics:
            yield d.line, d.column - 1, f"{d.code} {d.message}", type(self)
