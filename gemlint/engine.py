"""Lints one file: read, decode, prefilter, parse once, run every selected rule in one traversal,
then apply severity overrides and suppressions."""

from __future__ import annotations

import ast
import re
import traceback
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Iterator, Sequence

import libcst as cst

from gemlint.analysis.ast_walk import nesting_depth
from gemlint.analysis.import_names import ImportNames
from gemlint.analysis.index import TRIVIA
from gemlint.analysis.source import PythonSource
from gemlint.analysis.triage import SyntaxFacts, Triage, collect
from gemlint.config import Config
from gemlint.diagnostics import Diagnostic, Severity
from gemlint.discovery import OnSourceFile, SourceFile
from gemlint.frontends import frontend_for
from gemlint.frontends.notebook import Notebook, read_notebook
from gemlint.frontends.python_module import MAX_ANALYSED_CHARS, parse_module
from gemlint.languages import Language
from gemlint.project.files import project_for
from gemlint.registry import PARSE_ERROR_CODE, parse_error_rule, rule_class
from gemlint.rule import DocumentRule, PythonRule, Rule
from gemlint.selection import Selection
from gemlint.suppression import Suppressions
from gemlint.text import DecodedSource, ScannedText, SourceError, decoder_for, read_regular_file

#: Starts the message of a GEM000 reported because a rule crashed (not because the input was bad).
INTERNAL_ERROR_PREFIX = "internal error in "


@dataclass
class PythonFileContext(PythonSource):
    """What a Python rule sees of the file it checks: the analysed file, and where its findings go."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)


#: Where the notes of the file being linted go (``--verbose``): what a rule left unreported, and why.
_NOTES: ContextVar[list[str] | None] = ContextVar("gemlint_notes", default=None)


@contextmanager
def collecting_notes() -> Iterator[list[str]]:
    """The notes the rules make while the block lints (each once, in order)."""
    notes: list[str] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


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


def note(message: str) -> None:
    """Note ``message`` for the file being linted (``--verbose`` prints it; the summary counts the file as checked
    only in part)."""
    notes = _NOTES.get()
    if notes is not None and message not in notes:
        notes.append(message)


def parse_error(source: SourceFile, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    return input_error(source.display, message, line, column)


def input_error(display: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    """A GEM000 on ``display`` (a file, or a folder that could not be listed)."""
    rule = parse_error_rule()
    return Diagnostic(
        code=rule.code,
        name=rule.name,
        severity=Severity.ERROR,
        path=display,
        line=max(line, 1),
        column=max(column, 1),
        end_line=max(line, 1),
        end_column=max(column, 1),
        message=message,
    )


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
    return _lint_checked(source, text, rules, selection, line_noqa, tree, project, facts)


def _lint_checked(
    source: SourceFile,
    text: str,
    rules: list[type[Rule]],
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
    admitted = project and source.language is Language.PYTHON and any(rule.sees_project for rule in rules)
    if admitted:  # the project model may show what the text does not (a model or a caller elsewhere)
        admitted = project_for(selection.config).model.admits(str(source.path), names=selection.config.strict)
    scanned = ScannedText(text)
    rules = [rule for rule in rules if rule.may_match(scanned, source.language) or (admitted and rule.sees_project)]
    if not rules:
        # No rule can match, so LibCST is skipped; a broken file must still be reported (one that ``ast`` has
        # parsed already, or whose facts the index has, is not broken).
        if source.language is not Language.PYTHON or facts is not None or tree is not None:
            return []
        return _python_syntax_check(source, text)
    if source.language is Language.PYTHON:
        python_rules = [rule for rule in rules if issubclass(rule, PythonRule)]
        diagnostics = _lint_python(source, text, python_rules, selection, tree, project, facts)
    else:
        diagnostics = _lint_document(source, text, [rule for rule in rules if issubclass(rule, DocumentRule)], selection)
    return finalize(diagnostics, suppressions, selection, line_noqa=line_noqa)


def _lint_notebook(
    source: SourceFile, text: str, rules: list[type[Rule]], selection: Selection, *, line_noqa: bool, project: bool
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
    try:
        parse_module(text)
    except Exception:  # ParserSyntaxError, RecursionError, and a few others on odd input
        return False
    return True


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
            diagnostics.append(_internal_error(source, rule, error))
    release = getattr(document, "release", None)
    if release is not None:
        release()
    return diagnostics


def _internal_error(source: SourceFile, rule: type[Rule], error: Exception) -> Diagnostic:
    where = traceback.extract_tb(error.__traceback__)[-1]
    return parse_error(
        source,
        f"{INTERNAL_ERROR_PREFIX}{rule.code} ({type(error).__name__}: {error} at "
        f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}); please report it",
    )


# LibCST's native parser overflows its stack (a segfault) on brackets nested a few
# thousand deep and slows down quadratically on very long operator chains; CPython
# itself refuses more than 200 nested brackets. Such files are reported, never parsed.
MAX_BRACKET_DEPTH = 200
MAX_TREE_DEPTH = 600
# A file's `ast` tree is kept for the analyses (where a call or a `def` starts) up to this size; a larger one is
# parsed again if they ask, so that its tree and LibCST's are not held at once.
KEEP_AST_CHARS = 200_000


def _python_gate(source: SourceFile, text: str) -> tuple[Diagnostic | None, ast.Module | None]:
    """Check with ``ast`` (about a tenth of LibCST's cost) whether LibCST may parse the file.

    Returns a GEM000 diagnostic when the file cannot be parsed at all, and the ``ast`` tree when
    ``ast`` accepted the file.
    """
    try:
        return None, ast.parse(text)
    except SyntaxError as error:
        if "too many nested" in (error.msg or "") or _bracket_depth(text) > MAX_BRACKET_DEPTH:
            return parse_error(source, "brackets are nested too deeply to parse", error.lineno or 1), None
        return None, None  # perhaps newer grammar than this interpreter's: LibCST decides
    except (RecursionError, MemoryError):
        return parse_error(source, "the file is nested too deeply to parse"), None
    except ValueError as error:
        return parse_error(source, f"cannot parse: {error}"), None


def _bracket_depth(text: str) -> int:
    depth = deepest = 0
    for match in _BRACKETS.finditer(text):
        depth = depth + 1 if match.group() in "([{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


_BRACKETS = re.compile(r"[()\[\]{}]")


def _python_syntax_check(source: SourceFile, text: str) -> list[Diagnostic]:
    """For files no rule needs parsed: report a broken file, cheaply."""
    blocked, tree = _python_gate(source, text)
    if blocked is not None:
        return [blocked]
    if tree is not None:
        return []
    if len(text) > MAX_ANALYSED_CHARS:
        _too_large(text)
        return []
    return _libcst_failure(source, text) or []


def _too_large(text: str) -> None:
    """Note a module LibCST does not parse for its size. Only LibCST would say whether one this interpreter
    rejects (perhaps a newer grammar) is broken, so it is noted either way, never reported."""
    note(f"too large to analyse ({len(text) / 1e6:.1f} million characters; LibCST's parse needs about 220 times a file's size)")


def _libcst_failure(source: SourceFile, text: str) -> list[Diagnostic] | None:
    """LibCST's verdict on a file ``ast`` rejected (None: LibCST parses it); the interpreter's message is the
    clearer one."""
    try:
        parse_module(text)
        return None
    except Exception:
        pass
    try:
        ast.parse(text)
    except SyntaxError as error:
        placeholder = _template_placeholder(text, error.lineno)
        if placeholder is not None:
            note(f"a template, not checked: `{placeholder}` (line {error.lineno}) is filled in by a build step")
            return []
        if (error.msg or "").startswith(_PYTHON2_ONLY):
            note(f"Python 2, not checked: {error.msg.partition('.')[0]} (line {error.lineno})")
            return []
        return [parse_error(source, f"syntax error: {error.msg}", error.lineno or 1, error.offset or 1)]
    except Exception as error:
        return [parse_error(source, f"cannot parse: {type(error).__name__}: {error}")]
    return [parse_error(source, "cannot parse")]


#: The interpreter's messages for statements only Python 2 has (`print x`, `exec code`, `except E, e:`): the file
#: is another language's, not a broken one.
_PYTHON2_ONLY = ("Missing parentheses in call to 'print'", "Missing parentheses in call to 'exec'", "multiple exception types must be parenthesized")

#: A placeholder that a build step substitutes before the file is imported: `##NAME##`, CMake's `@NAME@` and
#: `${NAME}` (configure_file), Jinja's and cookiecutter's `{{ name }}` and `{% ... %}`.
_PLACEHOLDER = re.compile(r"##[A-Za-z_]\w*##|@[A-Za-z_]\w*@|\$\{[A-Za-z_]\w*\}|\{\{.*?\}\}|\{%.*?%\}")


def _template_placeholder(text: str, line: int | None) -> str | None:
    """The template placeholder that the syntax error at ``line`` is (on that line or the one before, where an
    unclosed construct ends): such a file is not Python until it is rendered, and is not reported as broken."""
    if not line:
        return None
    lines = text.splitlines()
    found = (_PLACEHOLDER.search(lines[index]) for index in (line - 1, line - 2) if 0 <= index < len(lines))
    return next((match.group() for match in found if match is not None), None)


def _lint_python(
    source: SourceFile,
    text: str,
    rules: Sequence[type[PythonRule]],
    selection: Selection,
    tree: ast.Module | None = None,
    project: bool = True,
    facts: SyntaxFacts | None = None,
) -> list[Diagnostic]:
    if not rules:
        return []
    if tree is None and facts is None:
        blocked, tree = _python_gate(source, text)
        if blocked is not None:
            return [blocked]
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
        rules = [rule for rule in rules if rule.may_match_syntax(triage)]
        if not rules:
            return []  # nothing any selected rule looks at: LibCST, metadata and analyses are skipped
        if tree is None:  # the facts came from the index; the depth check below needs the tree
            blocked, tree = _python_gate(source, text)
            if blocked is not None:
                return [blocked]
    if len(text) > MAX_ANALYSED_CHARS:
        _too_large(text)
        return []
    import_names = None
    if tree is not None:
        if nesting_depth(tree, MAX_TREE_DEPTH) > MAX_TREE_DEPTH:
            return [parse_error(source, f"an expression is nested more than {MAX_TREE_DEPTH} levels deep; not analysed")]
        import_names = ImportNames(tree)  # what the analyses read of the tree, so that they need not parse it again
        if len(text) > KEEP_AST_CHARS:
            tree = None  # LibCST's parse and the analyses need the room (25 MiB for a 650 KB module)
    whole = project_for(selection.config) if project else None
    earlier = whole.parsed_analysis(source.path, text) if whole is not None else None
    if earlier is not None:
        module, wrapper = earlier.module, earlier.context.wrapper
    else:
        try:
            module = parse_module(text)
        except Exception:  # ParserSyntaxError, RecursionError, and a few others on odd input
            failure = _libcst_failure(source, text)
            return [parse_error(source, "cannot parse")] if failure is None else failure
        wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    outside = whole.model if whole is not None else None
    context = PythonFileContext(
        source, text, module, wrapper, selection.config, triage=triage, outside=outside, import_names=import_names, ast_tree=tree, earlier=earlier
    )
    try:
        _run_rules(context, rules)
        return context.diagnostics
    except RecursionError:
        return [parse_error(source, "the file is nested too deeply to analyse")]
    except Exception:
        # Isolate the failing rule so one bug never hides the findings of the others.
        diagnostics: list[Diagnostic] = []
        for rule in rules:
            single = PythonFileContext(
                source, text, module, wrapper, selection.config, triage=triage, outside=outside, import_names=import_names, ast_tree=tree, earlier=earlier
            )
            try:
                _run_rules(single, [rule])
                diagnostics.extend(single.diagnostics)
            except Exception as error:
                diagnostics.append(_internal_error(source, rule, error))
        return diagnostics


def _run_rules(context: PythonFileContext, rules: Sequence[type[PythonRule]]) -> None:
    """Call the rules' ``visit_<Node>`` methods on every node in source order, from the analysis index.

    The index walk is needed by the analyses anyway, and LibCST's own traversal rebuilds every
    node it passes (about a parse's cost), so the rules ride on the index instead. A rule with
    ``leave_`` methods other than ``leave_Module``, or one that visits whitespace or punctuation (which the
    index leaves out), needs the real traversal and gets it.
    """
    visitors = [rule(context) for rule in rules]
    handlers: dict[str, list] = {}
    for visitor in visitors:
        for name, method in visitor.get_visitors().items():
            handlers.setdefault(name, []).append(method)
    if any((name.startswith("leave_") and name != "leave_Module") or name.removeprefix("visit_") in _TRIVIA_NAMES for name in handlers):
        context.wrapper.visit_batched(visitors)
        return
    with ExitStack() as stack:
        for visitor in visitors:
            stack.enter_context(visitor.resolve(context.wrapper))  # declared METADATA_DEPENDENCIES
        module = context.module
        for method in handlers.get("visit_Module", ()):
            method(module)
        by_type: dict[type, list] = {}
        for node in context.analysis.index.nodes:
            kind = type(node)
            methods = by_type.get(kind)
            if methods is None:
                methods = by_type[kind] = handlers.get("visit_" + kind.__name__, [])
            for method in methods:
                method(node)
        for method in handlers.get("leave_Module", ()):
            method(module)


_TRIVIA_NAMES = frozenset(kind.__name__ for kind in TRIVIA)


def _with_severity(diagnostic: Diagnostic, severity: Severity) -> Diagnostic:
    return replace(diagnostic, severity=severity)


def checking_rules(selection: Selection, source: SourceFile) -> list[type[Rule]]:
    """The rules that check ``source`` (GEM000 is reported by the engine, never run)."""
    return [
        rule_class(rule) for rule in selection.rules_for(source.relative) if rule.reads(source.language) and rule.code != PARSE_ERROR_CODE
    ]
