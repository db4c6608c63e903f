"""What the language server knows of the workspace, without any protocol: settings, each file's
configuration, the open buffers, and linting and fixing a buffer exactly as the command line would.

Every method runs on the server's one lint thread (the project model and the configuration caches
are not shared between threads), so nothing here locks.

Cross-file state: the project model of each project root is kept in memory between lints
(:mod:`gemlint.project.files`), with the summaries of its modules in an in-memory index keyed on
each file's content. An edited Python buffer, or a Python file changed on disk, drops the project
(its file list, routes and call graph); the next lint rebuilds it, re-summarising only the files
whose content changed. Open buffers stand in for the files on disk (:mod:`gemlint.project.buffers`).
"""

from __future__ import annotations

import io
import os
import tokenize
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from gemlint.config import Config, ConfigError, validate_codes
from gemlint.config_tree import ConfigTree, project_root_for
from gemlint.diagnostics import Diagnostic, applicable
from gemlint.discovery import Discovery, SourceFile, display_path, root_relative
from gemlint.bad_input import INTERNAL_ERROR_PREFIX
from gemlint.engine import lint_text
from gemlint.fixes import fix_source
from gemlint.frontends.native_includes import BUILD_FILES, forget_lookups
from gemlint.languages import Language, language_of
from gemlint.project.buffers import buffer, set_buffer
from gemlint.project.files import forget_projects, keep_index_in
from gemlint.project.index_store import IndexCache
from gemlint.registry import PARSE_ERROR_CODE, all_rules, known_codes
from gemlint.selection import Selection
from gemlint.suppression import NATIVE_NOQA, PYTHON_NOQA

#: The ``workspace/configuration`` section, and the keys of ``initializationOptions``.
SECTION = "gemlint"
CONFIG_NAMES = frozenset({"pyproject.toml", "gemlint.toml", ".gemlint.toml"})


@dataclass(frozen=True)
class Settings:
    """The editor's settings; codes as in ``--select``/``--ignore``/``--extend-select``."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] | None = None
    preview: bool = False
    unsafe_fixes: bool = False
    config_path: Path | None = None

    @classmethod
    def from_json(cls, value: Any) -> "Settings":
        """Settings from ``{"select": [...], "ignore": [...], "extendSelect": [...], "preview": bool,
        "unsafeFixes": bool, "configPath": str}``; a wrong value raises ConfigError naming the key."""
        if value is None:
            return cls()
        if not isinstance(value, dict):
            raise ConfigError(f"gemlint settings: expected an object, got {type(value).__name__}")
        known = {"select", "ignore", "extendSelect", "preview", "unsafeFixes", "configPath"}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ConfigError(f"gemlint settings: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")

        def codes(key: str) -> tuple[str, ...] | None:
            raw = value.get(key)
            if raw is None:
                return None
            if isinstance(raw, str):
                raw = raw.split(",")
            if not isinstance(raw, list) or not all(isinstance(code, str) for code in raw):
                raise ConfigError(f"gemlint settings: '{key}' must be a list of rule codes")
            return validate_codes(f"gemlint settings '{key}'", [c.strip().upper() for c in raw if c.strip()], known_codes())

        def flag(key: str) -> bool:
            raw = value.get(key, False)
            if not isinstance(raw, bool):
                raise ConfigError(f"gemlint settings: '{key}' must be true or false")
            return raw

        path = value.get("configPath")
        if path is not None and not isinstance(path, str):
            raise ConfigError("gemlint settings: 'configPath' must be a path")
        return cls(
            codes("select"), codes("ignore"), codes("extendSelect"), flag("preview"), flag("unsafeFixes"),
            Path(os.path.expanduser(path)) if path else None,
        )

    def adjust(self, config: Config) -> Config:
        """The editor's settings on top of a file's config, as the command line's options are."""
        return config.with_overrides(
            select=self.select,
            ignore=config.ignore + self.ignore if self.ignore else None,
            extend_select=config.extend_select + self.extend_select if self.extend_select else None,
            preview=True if self.preview else None,
        )


@dataclass
class LintResult:
    diagnostics: list[Diagnostic]
    #: Rule crashes: reported to the editor's log, not as findings (they are gemlint's bugs, not the file's).
    crashes: list[str]
    #: Configuration warnings (each reported once per session).
    warnings: list[str]
    #: Whether this lint changed what other files' cross-file findings are computed from.
    project_changed: bool = False


class Session:
    def __init__(self, settings: Settings | None = None, cwd: Path | None = None) -> None:
        self.settings = settings or Settings()
        self.cwd = cwd or Path.cwd()
        self._trees: dict[Path, ConfigTree] = {}
        self._indexes: dict[Path, IndexCache] = {}
        self._warned: set[str] = set()

    # -- configuration ---------------------------------------------------------------------------
    def configure(self, settings: Settings) -> None:
        self.settings = settings
        self._trees.clear()
        forget_projects()

    def config_changed(self) -> None:
        """A configuration file changed on disk: every file's configuration is read again."""
        self._trees.clear()
        forget_projects()

    def tree_for(self, path: Path) -> ConfigTree:
        root = project_root_for([path], self.cwd)
        tree = self._trees.get(root)
        if tree is None:
            tree = self._trees[root] = ConfigTree(
                root, known_codes(), config_file=self.settings.config_path, adjust=self.settings.adjust
            )
            # The project index lives in memory: a rebuild re-summarises only the files that changed.
            keep_index_in(tree.project.root, self._indexes.setdefault(tree.project.root, IndexCache(None)))
        return tree

    # -- buffers -----------------------------------------------------------------------------------
    def set_text(self, path: Path, text: str | None) -> bool:
        """The editor's buffer of ``path`` (None: closed, the disk's content again); returns whether the
        project model was dropped (a Python file's content changed)."""
        if language_of(path) is not Language.PYTHON:
            return False
        data = text.encode("utf-8") if text is not None else None
        if buffer(path) == data:
            return False
        set_buffer(path, data)
        forget_projects()
        return True

    def file_changed(self, path: Path) -> bool:
        """A file changed on disk; returns whether other files' findings may change."""
        if path.name in CONFIG_NAMES:
            self.config_changed()
            return True
        if language_of(path) is Language.PYTHON and buffer(path) is None:
            forget_projects()
            return True
        if language_of(path) is Language.NATIVE or path.name in BUILD_FILES:
            forget_lookups()  # a header that appeared may now be what another file includes
            return True
        return False

    # -- linting -----------------------------------------------------------------------------------
    def source_of(self, path: Path) -> tuple[SourceFile, Selection] | None:
        """The file as the command line would see it, or None when gemlint does not lint it. Notebooks are not
        linted here: an editor syncs a notebook as one text document per cell (LSP's ``notebookDocument/*``),
        which the server does not handle (docs/editors.md), and findings in a notebook opened as its JSON text
        would have to point into that JSON."""
        language = language_of(path)
        if language is None or language is Language.NOTEBOOK:
            return None
        tree = self.tree_for(path)
        if Discovery(tree).is_excluded_file(path):
            return None
        own = tree.config_for(path)
        source = SourceFile(path, language, display_path(path, self.cwd), root_relative(path, own.glob_root))
        return source, _selection(own)

    def lint(self, path: Path, text: str) -> LintResult:
        changed = self.set_text(path, text)
        found = self.source_of(path)
        if found is None:
            return LintResult([], [], [], changed)
        source, selection = found
        warnings = [warning for warning in self.tree_for(path).warnings if warning not in self._warned]
        self._warned.update(warnings)
        diagnostics, crashes = [], []
        for diagnostic in lint_text(source, text, selection):
            if diagnostic.code == PARSE_ERROR_CODE and diagnostic.message.startswith(INTERNAL_ERROR_PREFIX):
                crashes.append(f"{source.display}:{diagnostic.line}: {diagnostic.message}")
            else:
                diagnostics.append(diagnostic)
        return LintResult(diagnostics, crashes, warnings, changed)

    def depends_on_project(self, path: Path) -> bool:
        """Whether the findings of ``path`` may change when another file does (cross-file rules)."""
        found = self.source_of(path)
        if found is None:
            return False
        source, selection = found
        return any(
            (rule.cross_file or rule.sees_project) and rule.reads(source.language) for rule in selection.rules_for(source.relative)
        )

    def fix_all(self, path: Path, text: str, unsafe: bool = False) -> str:
        """``text`` with every safe fix applied (and unsafe ones too when asked), re-linted until stable."""
        found = self.source_of(path)
        if found is None:
            return text
        source, selection = found
        diagnostics = lint_text(source, text, selection)
        if not any(applicable(d.fix, unsafe) for d in diagnostics):
            return text
        return fix_source(text, source.language, lambda current: lint_text(source, current, selection), diagnostics, unsafe).text


@lru_cache(maxsize=64)
def _selection(config: Config) -> Selection:
    return Selection.from_config(config, all_rules())


# -- suppressing a finding -----------------------------------------------------------------------
@dataclass(frozen=True)
class Insertion:
    """Insert ``text`` at 1-based ``line`` and 1-based code-point ``column``."""

    line: int
    column: int
    text: str


def suppression(text: str, language: Language, line: int, code: str) -> Insertion:
    """Where a ``noqa`` comment for ``code`` goes so that the finding on ``line`` is suppressed, in the
    language's comment form: added to an existing ``noqa`` list, else at the end of the line (of the
    logical line, in Python, so it never lands inside a string), or above a Dockerfile instruction."""
    lines = text.splitlines()
    if language is Language.PYTHON:
        line = _logical_line_end(text, line)
    pattern = NATIVE_NOQA if language is Language.NATIVE else PYTHON_NOQA
    candidates = [line]
    if language is Language.DOCKERFILE and line >= 2:
        candidates.insert(0, line - 1)  # a comment line right above an instruction covers it
    for number in candidates:
        if 1 <= number <= len(lines):
            match = pattern.search(lines[number - 1])
            if match is not None and match.group("codes") and (language is not Language.DOCKERFILE or lines[number - 1].lstrip().startswith("#")):
                codes = match.group("codes").rstrip(", \t")
                return Insertion(number, match.start("codes") + len(codes) + 1, f", {code}")
    opener = "//" if language is Language.NATIVE else "#"
    if language is Language.DOCKERFILE:
        current = lines[line - 1] if 1 <= line <= len(lines) else ""
        indent = current[: len(current) - len(current.lstrip())]
        return Insertion(line, 1, f"{indent}# noqa: {code}\n")
    current = lines[line - 1] if 1 <= line <= len(lines) else ""
    stripped = current.rstrip()
    return Insertion(line, len(stripped) + 1, f"  {opener} noqa: {code}")


def _logical_line_end(text: str, line: int) -> int:
    """The last physical line of the logical line holding ``line`` (flake8's noqa line grouping)."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        start = None
        for token in tokens:
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT):
                continue
            if start is None:
                start = token.start[0]
            if token.type in (tokenize.NL, tokenize.NEWLINE):
                if start <= line <= token.end[0]:
                    return token.start[0]
                start = None
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return line

