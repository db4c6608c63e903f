"""Lints one Python module that the triage admitted: LibCST's parse, the analyses, and the selected rules in one
walk of the analysis index.

Only a file that some selected rule's markers and syntax gate admit gets here (see :mod:`gemlint.engine`):
this module is where LibCST is imported, so a run that admits no Python file never imports it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst

from gemlint.analysis.ast_walk import nesting_depth
from gemlint.analysis.import_names import ImportNames
from gemlint.analysis.index import TRIVIA
from gemlint.analysis.module import ModuleAnalysis
from gemlint.analysis.source import PythonSource
from gemlint.analysis.triage import Triage
from gemlint.bad_input import PYTHON2_STATEMENTS, internal_error, parse_error, python2_note
from gemlint.diagnostics import Diagnostic
from gemlint.discovery import SourceFile
from gemlint.frontends.module_size import MAX_ANALYSED_CHARS
from gemlint.frontends.python_indentation import expand_indentation
from gemlint.frontends.python_module import parse_module
from gemlint.lint_notes import note
from gemlint.project.answers import ProjectAnswers
from gemlint.project.files import Project, project_for
from gemlint.rule import PythonRule
from gemlint.selection import Selection

MAX_TREE_DEPTH = 600
# A file's `ast` tree is kept for the analyses (where a call or a `def` starts) up to this size; a larger one is
# parsed again if they ask, so that its tree and LibCST's are not held at once.
KEEP_AST_CHARS = 200_000


@dataclass
class PythonFileContext(PythonSource):
    """What a Python rule sees of the file it checks: the analysed file, and where its findings go."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)


@dataclass(frozen=True)
class AstReading:
    """What the analyses take from a module's ``ast`` tree: the names its imports bind, and the tree itself up to
    :data:`KEEP_AST_CHARS` (None: the tree was not kept, or the module does not parse with ``ast``)."""

    import_names: ImportNames | None = None
    tree: ast.Module | None = None


def read_ast(source: SourceFile, text: str, tree: ast.Module | None) -> AstReading | Diagnostic:
    """What :func:`lint_python` needs of ``tree`` (``text``'s ``ast`` tree, None where it does not parse: perhaps a
    newer grammar than this interpreter's, which LibCST decides), or the parse error of an expression nested too
    deep to analyse. The caller lets go of ``tree`` before linting: a 650 KB module's tree holds 29 MiB, which
    must not be held while LibCST parses the module (that parse's own peak is 230 MiB)."""
    if tree is None or len(text) > MAX_ANALYSED_CHARS:
        return AstReading()
    if nesting_depth(tree, MAX_TREE_DEPTH) > MAX_TREE_DEPTH:
        return parse_error(source, f"an expression is nested more than {MAX_TREE_DEPTH} levels deep; not analysed")
    return AstReading(ImportNames(tree), tree if len(text) <= KEEP_AST_CHARS else None)


def lint_python(
    source: SourceFile,
    text: str,
    rules: Sequence[type[PythonRule]],
    selection: Selection,
    reading: AstReading,
    triage: Triage | None,
    project: bool = True,
) -> list[Diagnostic]:
    """Run ``rules`` on ``text``; ``reading`` is what :func:`read_ast` read of its ``ast`` tree, ``triage`` what the
    engine's triage found."""
    if len(text) > MAX_ANALYSED_CHARS:
        too_large(text)
        return []
    import_names = reading.import_names
    whole = project_for(selection.config) if project else None
    earlier = whole.parsed_analysis(source.path, text) if whole is not None else None
    expanded = None
    if earlier is not None:
        module, wrapper = earlier.module, earlier.context.wrapper
    else:
        try:
            module = parse_module(text)
        except Exception:  # ParserSyntaxError, RecursionError, and a few others on odd input
            # Valid Python (`ast` parsed it) whose tab-and-space indentation LibCST's tokenizer rejects: read as
            # CPython reads it.
            expanded = expand_indentation(text) if import_names is not None else None
            module = _parsed(expanded.text) if expanded is not None else None
            if module is None:
                failure = libcst_failure(source, text)
                return [parse_error(source, "cannot parse")] if failure is None else failure
            assert expanded is not None
            text = expanded.text
        wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    diagnostics = _lint_module(source, text, module, wrapper, rules, selection, reading, triage, whole, earlier)
    return expanded.restored(diagnostics, source.display) if expanded is not None else diagnostics


def _parsed(text: str) -> cst.Module | None:
    try:
        return parse_module(text)
    except Exception:  # ParserSyntaxError, RecursionError, and a few others on odd input
        return None


def _lint_module(
    source: SourceFile,
    text: str,
    module: cst.Module,
    wrapper: cst.MetadataWrapper,
    rules: Sequence[type[PythonRule]],
    selection: Selection,
    reading: AstReading,
    triage: Triage | None,
    whole: Project | None,
    earlier: ModuleAnalysis | None,
) -> list[Diagnostic]:
    import_names, tree = reading.import_names, reading.tree
    outside = ProjectAnswers(whole.model) if whole is not None else None
    context = PythonFileContext(
        source, text, module, wrapper, selection.config, triage=triage, outside=outside, import_names=import_names, ast_tree=tree, earlier=earlier
    )
    try:
        _run_rules(context, rules)
        _let_go(context)
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
                diagnostics.append(internal_error(source, rule, error))
        return diagnostics


def _let_go(context: PythonFileContext) -> None:
    """Free the file's analysis now that its rules have run, unless the project holds it: the project's own
    analysis of the file (``earlier``), or this one adopted for other modules' questions about the file."""
    analysis = context.__dict__.get("analysis")  # computed only if a rule asked
    if analysis is not None and context.earlier is None and not analysis.shared:
        analysis.release()


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
        context.wrapper.visit_batched([_LibCSTVisitor(visitor) for visitor in visitors])
        return
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


class _LibCSTVisitor(cst.BatchableCSTVisitor):
    """A rule as LibCST's batched traversal takes it: its own ``visit_``/``leave_`` methods."""

    def __init__(self, rule: PythonRule) -> None:
        super().__init__()
        self.rule = rule

    def get_visitors(self) -> dict:
        return self.rule.get_visitors()


_TRIVIA_NAMES = frozenset(kind.__name__ for kind in TRIVIA)


def too_large(text: str) -> None:
    """Note a module LibCST does not parse for its size. Only LibCST would say whether one this interpreter
    rejects (perhaps a newer grammar) is broken, so it is noted either way, never reported."""
    note(f"too large to analyse ({len(text) / 1e6:.1f} million characters; LibCST's parse needs about 220 times a file's size)")


def libcst_parses(text: str) -> bool:
    try:
        parse_module(text)
    except Exception:  # ParserSyntaxError, RecursionError, and a few others on odd input
        return False
    return True


def syntax_check(source: SourceFile, text: str) -> list[Diagnostic]:
    """LibCST's verdict on a file that no rule needs parsed and that ``ast`` rejected: a GEM000 when broken."""
    if len(text) > MAX_ANALYSED_CHARS:
        too_large(text)
        return []
    return libcst_failure(source, text) or []


def libcst_failure(source: SourceFile, text: str) -> list[Diagnostic] | None:
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
            note(python2_note(error))
            return []
        return [parse_error(source, f"syntax error: {error.msg}", error.lineno or 1, error.offset or 1)]
    except Exception as error:
        return [parse_error(source, f"cannot parse: {type(error).__name__}: {error}")]
    return [parse_error(source, "cannot parse")]


#: The interpreter's messages for statements only Python 2 has (`print x`, `exec code`, `except E, e:`): the file
#: is another language's, not a broken one.
_PYTHON2_ONLY = (*PYTHON2_STATEMENTS, "multiple exception types must be parenthesized")

#: A placeholder that a build step substitutes before the file is imported: `##NAME##`, CMake's `@NAME@` and
#: `${NAME}` (configure_file), Jinja's and cookiecutter's `{{ name }}`, `{% ... %}` and `{# comment #}` (a statement or
#: a comment may go on over the next lines).
_PLACEHOLDER = re.compile(r"##[A-Za-z_]\w*##|@[A-Za-z_]\w*@|\$\{[A-Za-z_]\w*\}|\{\{.*?\}\}|\{%.*?(?:%\}|$)|\{#.*?(?:#\}|$)")


def _template_placeholder(text: str, line: int | None) -> str | None:
    """The template placeholder that the syntax error at ``line`` is (on that line or the one before, where an
    unclosed construct ends): such a file is not Python until it is rendered, and is not reported as broken."""
    if not line:
        return None
    lines = text.splitlines()
    found = (_PLACEHOLDER.search(lines[index]) for index in (line - 1, line - 2) if 0 <= index < len(lines))
    return next((match.group() for match in found if match is not None), None)
