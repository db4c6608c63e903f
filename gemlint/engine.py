"""Lints one file: read, decode, prefilter, parse once, run every selected rule in one traversal,
then apply severity overrides and suppressions.

The rules are selected as entries of the rules' table and ruled out by their text markers and syntax gates
(:mod:`gemlint.rules.rule_table`, :mod:`gemlint.rules.triage_table`) before any is imported: a rule's module is
imported for a file it may match, and LibCST (:mod:`gemlint.python_lint`) for a Python file a rule admits.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Sequence

from gemlint.analysis.triage import Gate, SyntaxFacts, Triage, collect
from gemlint.bad_input import internal_error, parse_error, python2_script, python_gate
from gemlint.config import Config
from gemlint.diagnostics import Diagnostic, Severity
from gemlint.discovery import OnSourceFile, SourceFile
from gemlint.frontends import frontend_for
from gemlint.frontends.notebook import Notebook, jupytext_python, read_notebook
from gemlint.languages import Language
from gemlint.lint_notes import note
from gemlint.project.files import project_for
from gemlint.registry import PARSE_ERROR_CODE, rule_class
from gemlint.rule import DocumentRule, PythonRule, Rule
from gemlint.selection import RuleEntry, Selection
from gemlint.suppression import Suppressions
from gemlint.text import DecodedSource, ScannedText, SourceError, decoder_for, read_regular_file

@dataclass
class DocumentContext(OnSourceFile):
    """What a :class:`DocumentRule` sees: the file and its front-end's parsed document."""

    source: SourceFile
    text: str
    document: object
    config: Config
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def note(self, message: str) -> None:
        """Something the user may want to know but that is no finding (``--verbose`` prints it)."""
        note(message)


def read_source(source: SourceFile) -> tuple[bytes, DecodedSource]:
    data = read_regular_file(source.path)
    return data, decoder_for(source.language)(data)


def lint_text(
    source: SourceFile,
    text: str,
    selection: Selection,
    *,
    line_noqa: bool = True,
    tree: ast.Module | None = None,
    project: bool = True,
    facts: SyntaxFacts | None = None,
) -> list[Diagnostic]:
    """Lint already-decoded text; never raises for any input.

    ``project=False`` analyses the file alone, without the project model (the flake8 plugin: flake8
    hands over one file at a time, and its findings must not depend on files it does not show).

    ``line_noqa=False`` leaves line-level ``# noqa`` comments to the caller (flake8 applies
    its own, identical ones); file-level ``# gemlint: noqa`` directives always apply.
    ``tree`` is the text's ``ast`` tree when the caller has parsed it already (flake8 has); ``facts`` are its
    triage facts when the project index has them (the file parsed when it was summarised).
    """
    rules = checking_rules(selection, source)
    if not rules:
        return []
    if source.language is Language.NOTEBOOK:
        return _lint_notebook(source, text, rules, selection, line_noqa=line_noqa, project=project)
    if source.language is Language.PYTHON and (ipython := jupytext_python(text)) is not None:
        # A notebook kept as a .py file, with IPython lines: linted as IPython runs it. Its fixes are left out,
        # since a fix is written to the file as Python.
        diagnostics = _lint_checked(source, ipython, rules, selection, line_noqa, None, project, None)
        return [replace(diagnostic, fix=None) if diagnostic.fix is not None else diagnostic for diagnostic in diagnostics]
    return _lint_checked(source, text, rules, selection, line_noqa, tree, project, facts)


def _lint_checked(
    source: SourceFile,
    text: str,
    rules: list[type[Rule] | RuleEntry],
    selection: Selection,
    line_noqa: bool,
    tree: ast.Module | None,
    project: bool,
    facts: SyntaxFacts | None,
) -> list[Diagnostic]:
    """Lint ``text`` with the ``rules`` that check ``source``, then apply suppressions and severities."""
    suppressions = Suppressions(text, source.language)
    if suppressions.file_suppresses_all() and selection.config.respect_noqa:
        return []
    shown: frozenset[str] = frozenset()
    if project and source.language is Language.PYTHON and any(rule.sees_project for rule in rules):
        # the project model may show what the text does not (a model or a caller elsewhere)
        shown = project_for(selection.config).model.shows(str(source.path), names=selection.config.strict)
    scanned = ScannedText(text)
    rules = [rule for rule in rules if rule.may_match(scanned, source.language) or not shown.isdisjoint(rule.sees_project)]
    if not rules:
        # No rule can match, so LibCST is skipped; a broken file must still be reported (one that ``ast`` has
        # parsed already, or whose facts the index has, is not broken).
        if source.language is not Language.PYTHON or facts is not None or tree is not None:
            return []
        return _python_syntax_check(source, text)
    if source.language is Language.PYTHON:
        diagnostics = _lint_python(source, text, rules, selection, tree, project, facts)
    else:
        classes = [rule_class(rule) for rule in rules]
        diagnostics = _lint_document(source, text, [rule for rule in classes if issubclass(rule, DocumentRule)], selection)
    return finalize(diagnostics, suppressions, selection, line_noqa=line_noqa)


def _lint_notebook(
    source: SourceFile, text: str, rules: list[type[Rule] | RuleEntry], selection: Selection, *, line_noqa: bool, project: bool
) -> list[Diagnostic]:
    """Lint a notebook's code cells as one Python module; findings carry their cell (:class:`CellSpan`).

    A cell that does not parse is reported (GEM000, naming the cell) and left out, so the other cells are
    still checked: Jupyter runs each cell on its own, and one broken cell does not stop the others. A
    ``# gemlint: noqa`` line in any cell applies to the whole notebook, as a file-level directive does.
    The notebook reads the project's modules (the classes and factories it imports) but is not one of
    them: nothing can import it (see :mod:`gemlint.project.files`).
    """
    try:
        notebook = read_notebook(text)
    except SourceError as error:
        return [parse_error(source, str(error), error.line, error.column)]
    if not notebook.python or not notebook.cells:
        return []  # a notebook in another language (R, Julia) has no Python to check
    code, tree, broken = _parsable_cells(source, notebook)
    as_module = source.with_language(Language.PYTHON)
    diagnostics = _lint_checked(as_module, code, rules, selection, line_noqa, tree, project, None) + broken
    return sorted((_in_cells(d, notebook) for d in diagnostics), key=lambda d: d.sort_key)


def _parsable_cells(source: SourceFile, notebook: Notebook) -> tuple[str, ast.Module | None, list[Diagnostic]]:
    """The notebook's module with the cells that do not parse on their own emptied, its ``ast`` tree when it
    parses, and a GEM000 for each emptied cell."""
    try:
        return notebook.code, ast.parse(notebook.code), []
    except SyntaxError:
        pass
    except (RecursionError, MemoryError, ValueError):
        return notebook.code, None, []  # the Python path reports it, as for a module
    broken, diagnostics = [], []
    for cell in notebook.cells:
        try:
            ast.parse(cell.python)
        except SyntaxError as error:
            if _libcst_parses(cell.python):
                continue  # newer grammar than this interpreter's (as for a module, LibCST decides)
            broken.append(cell)
            line = notebook.first_line(cell) + (error.lineno or 1) - 1
            message = f"syntax error: {error.msg}; the notebook's other cells were checked"
            diagnostics.append(parse_error(source, message, line, error.offset or 1))
        except (RecursionError, MemoryError, ValueError):
            continue
    code = notebook.without(broken)
    try:
        tree = ast.parse(code)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        tree = None  # cells that parse alone but not together: the Python path reports the module
    return code, tree, diagnostics


def _libcst_parses(text: str) -> bool:
    from gemlint.python_lint import libcst_parses  # LibCST: only for a cell this interpreter rejects

    return libcst_parses(text)


def _in_cells(diagnostic: Diagnostic, notebook: Notebook) -> Diagnostic:
    """``diagnostic`` with the cell spans of its position, its fix's edits and its related places in the notebook."""
    cell = notebook.locate(diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column)
    fix = diagnostic.fix
    if fix is not None:
        edits = tuple(replace(e, cell=notebook.locate(e.start.line, e.start.column, e.end.line, e.end.column)) for e in fix.edits)
        fix = replace(fix, edits=edits)
    related = tuple(
        replace(r, cell=notebook.locate(r.span.line, r.span.column, r.span.end_line, r.span.end_column))
        if r.span.path == diagnostic.path
        else r
        for r in diagnostic.related
    )
    return replace(diagnostic, cell=cell, fix=fix, related=related)


def finalize(
    diagnostics: list[Diagnostic], suppressions: Suppressions, selection: Selection, *, line_noqa: bool = True
) -> list[Diagnostic]:
    by_code = {rule.code: rule for rule in selection.rules}
    result = []
    for diagnostic in diagnostics:
        rule = by_code.get(diagnostic.code)
        if rule is None:  # GEM000 is always reported and cannot be suppressed
            result.append(diagnostic)
            continue
        if selection.config.respect_noqa and suppressions.is_suppressed(diagnostic.code, diagnostic.line, line_noqa=line_noqa):
            continue
        severity = selection.severity_of(rule, diagnostic.severity)
        if severity is not diagnostic.severity:
            diagnostic = _with_severity(diagnostic, severity)
        result.append(diagnostic)
    return sorted(set(result), key=lambda d: d.sort_key)


def lint_file(source: SourceFile, selection: Selection) -> tuple[list[Diagnostic], bytes | None, DecodedSource | None]:
    """Lint a file from disk; returns the diagnostics and what was read (for fixes and caching)."""
    if not checking_rules(selection, source):
        return [], None, None
    try:
        data, decoded = read_source(source)
    except SourceError as error:
        return [parse_error(source, str(error), error.line, error.column)], None, None
    facts = None
    if source.language is Language.PYTHON:  # the index parsed the file already when it was summarised
        facts = project_for(selection.config).model.syntax_facts(str(source.path), data)
    return lint_text(source, decoded.text, selection, facts=facts), data, decoded


def _lint_document(
    source: SourceFile, text: str, rules: Sequence[type[DocumentRule]], selection: Selection
) -> list[Diagnostic]:
    if not rules:
        return []
    frontend = frontend_for(source.language)
    if frontend is None:
        return []
    try:
        document = frontend(source, text)
    except SourceError as error:
        return [parse_error(source, str(error), error.line, error.column)]
    except (RecursionError, MemoryError):
        return [parse_error(source, "the file is nested too deeply to parse")]
    diagnostics: list[Diagnostic] = []
    for rule in rules:
        context = DocumentContext(source, text, document, selection.config)
        try:
            rule(context).check()
            diagnostics.extend(context.diagnostics)
        except Exception as error:
            diagnostics.append(internal_error(source, rule, error))
    release = getattr(document, "release", None)
    if release is not None:
        release()
    return diagnostics


def _python_syntax_check(source: SourceFile, text: str) -> list[Diagnostic]:
    """For files no rule needs parsed: report a broken file, cheaply (LibCST is asked only about a file that
    ``ast`` rejects, perhaps for a newer grammar than this interpreter's)."""
    blocked, tree = python_gate(source, text)
    if blocked is not None:
        return [blocked]
    if tree is not None or python2_script(text):
        return []
    from gemlint.python_lint import syntax_check

    return syntax_check(source, text)


def _lint_python(
    source: SourceFile,
    text: str,
    rules: Sequence[type[Rule] | RuleEntry],
    selection: Selection,
    tree: ast.Module | None = None,
    project: bool = True,
    facts: SyntaxFacts | None = None,
) -> list[Diagnostic]:
    """Triage the file by what its ``ast`` shows, then lint it with the rules that admit it."""
    if tree is None and facts is None:
        blocked, tree = python_gate(source, text)
        if blocked is not None:
            return [blocked]
        if tree is None and python2_script(text):
            return []
    triage = None
    if tree is not None or facts is not None:
        triage = Triage.of(facts or collect(tree), text, selection.config, source.relative, source.absolute_path())
        if project:
            model = project_for(selection.config).model
            # By default a name alone (`predict*`) is no evidence of inference context: the project model,
            # which sees every caller, admits what entry points reach.
            strict = selection.config.strict
            in_context = model.in_context(str(source.path), names=strict)
            triage = replace(triage, project_context=in_context, project_loaders=model.loading_classes, names_are_evidence=strict)
        rules = [rule for rule in rules if _admits_syntax(rule, triage)]
        if not rules:
            return []  # nothing any selected rule looks at: LibCST, metadata, analyses and rules are skipped
        if tree is None:  # the facts came from the index; the depth check needs the tree
            blocked, tree = python_gate(source, text)
            if blocked is not None:
                return [blocked]
    python_rules = [rule for rule in map(rule_class, rules) if issubclass(rule, PythonRule)]
    if not python_rules:
        return []
    from gemlint.python_lint import lint_python, read_ast  # LibCST and the analyses: only for a file a rule admits

    reading = read_ast(source, text, tree)
    del tree  # not held here while LibCST parses the module (see read_ast)
    if isinstance(reading, Diagnostic):
        return [reading]
    return lint_python(source, text, python_rules, selection, reading, triage, project)


def _admits_syntax(rule: type[Rule] | RuleEntry, triage: Triage) -> bool:
    """Whether ``rule``'s syntax gate admits a file whose ``ast`` shows ``triage``; an entry of the rules' table is
    answered from the triage table, without importing the rule."""
    if isinstance(rule, RuleEntry):
        gate = _syntax_gates().get(rule.code)
        if gate is not None:
            return gate.admits(triage)
        rule = rule_class(rule)
    return issubclass(rule, PythonRule) and rule.may_match_syntax(triage)


@lru_cache(maxsize=1)
def _syntax_gates() -> dict[str, Gate]:
    from gemlint.rules.triage_table import PYTHON_RULES  # generated from the rules: imported where it is read

    return {rule.code: rule.gate for rule in PYTHON_RULES}


def _with_severity(diagnostic: Diagnostic, severity: Severity) -> Diagnostic:
    return replace(diagnostic, severity=severity)


def checking_rules(selection: Selection, source: SourceFile) -> list[type[Rule] | RuleEntry]:
    """The rules that check ``source`` (GEM000 is reported by the engine, never run), as the selection holds them:
    classes, or entries of the rules' table that stand for them (imported only for a file they may match)."""
    return [rule for rule in selection.rules_for(source.relative) if rule.reads(source.language) and rule.code != PARSE_ERROR_CODE]
