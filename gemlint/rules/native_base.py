"""The base of the GEM3xx rules: one class per code that checks C/C++/CUDA documents (tree-sitter) and Python
files (LibCST) with the same resource table. Each language's analysis runs once per file and is shared by
the rules of the family; a rule reports the findings that carry its code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from gemlint.analysis.triage import is_native_tooling_path
from gemlint.languages import Language
from gemlint.project.files import project_for
from gemlint.native.resources import NOT_ANALYSED, PYTHON_BINDING_MARKERS, markers_for
from gemlint.rule import AnalysisRule, DocumentRule
from gemlint.rules.gem000_parse_error import ParseError

if TYPE_CHECKING:
    import libcst as cst


class CrossLanguageRule(AnalysisRule, DocumentRule):
    """A rule that is a :class:`~gemlint.rule.PythonRule` for Python files and a :class:`DocumentRule` for native documents.

    The engine hands Python files to :class:`~gemlint.rule.PythonRule` subclasses and other files to
    :class:`~gemlint.rule.DocumentRule` subclasses; this class is both, and ``languages`` says which files
    it wants.
    """

    languages = frozenset({Language.NATIVE, Language.PYTHON})
    # ``markers`` says each language's text markers (``prefilter`` is their union, for callers that do not say
    # which language the text is in).

    def __init__(self, context) -> None:
        self.context = context


class PairingRule(CrossLanguageRule):
    """A GEM3xx resource-pairing rule: reports the pairing findings of its code."""

    # The six pairing rules share one analysis, and so one verdict on notebooks.
    notebooks = True
    notebooks_reason = (
        "The pairing is checked per function, and a notebook's kernel is a long-lived process: a function that leaks "
        "memory, a stream or a graph leaks it every time a cell calls it (what a cell keeps at its top level for "
        "later cells is not checked)."
    )

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in vars(cls):
            native = markers_for(cls.code)
            # Python: a binding is imported, and one of the code's calls is named.
            python = (PYTHON_BINDING_MARKERS, markers_for(cls.code, python=True))
            cls.markers = {Language.NATIVE: (native,), Language.PYTHON: python}
            cls.prefilter = tuple(sorted(set(native) | set(PYTHON_BINDING_MARKERS)))

    def check(self) -> None:
        from gemlint.native import c_pairing  # loads tree-sitter: only when a native file is linted

        document = self.context.document
        tooling = is_native_tooling_path(self.context.relative_path)
        for finding in c_pairing.analyse(document, self._registers_itself(document), tooling):
            if finding.code == self.code:
                start, end = document.span(finding.node)
                self.report_at(start, end, finding.message)
            elif finding.code == NOT_ANALYSED:  # every GEM3xx rule says it; the engine keeps one
                start, end = document.span(finding.node)
                self.context.add(ParseError.diagnostic(self.context.display_path, start, end, finding.message))
        for finding in c_pairing.unreported(document):
            if finding.code == self.code:
                self.context.note(f"line {document.span(finding.node)[0].line}: {finding.message}")

    def _registers_itself(self, document) -> Callable[[str], bool] | None:
        """Whether objects of a class register themselves with an owner, read from the project's files around
        ``document`` (its headers, and their implementation files); asked only of a class it builds with ``new``."""
        path = document.path
        if path is None:
            return None
        project = project_for(self.context.config)
        return lambda name: project.native_owners.registers_itself(path, document.text, name)

    def leave_Module(self, original_node: cst.Module) -> None:
        from gemlint.native import py_pairing  # its flow analysis: only for a file that imports the raw bindings

        for finding in py_pairing.analyse(self.context):
            if finding.code == self.code:
                self.report(finding.node, finding.message)
            elif finding.code == NOT_ANALYSED:
                self.context.add(ParseError.diagnostic(self.context.display_path, *self.range_of(finding.node), finding.message))
