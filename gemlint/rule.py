"""The rule API.

A rule is one class that carries everything about it: its metadata, its
documentation (ruff's *What it does / Why is this bad / Example / Use instead /
Fix safety* sections, rendered into ``docs/rules.md``, ``gemlint explain`` and
SARIF), its bad and good examples (linted by the test suite, as Fixit's
VALID/INVALID cases are) and its check.

Python rules have ``visit_<Node>`` methods for LibCST's node types, and every rule selected for a file
runs in one walk of the file's nodes. A rule declares the plain-text markers without which it cannot match
(``prefilter``, or ``markers`` per language), and in ``syntax_gate`` what its ``ast`` must show: a file that
no selected rule's markers and syntax admit is never parsed by LibCST. Rules for other languages subclass
:class:`DocumentRule` with their own front-end's check method.

Nothing here imports LibCST: the rules are selected, and most files ruled out, from this metadata (and the
tables generated from it, :mod:`gemlint.rules.rule_table`), so a run that parses no Python file with LibCST
never imports it.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, ClassVar, Iterable, Sequence

from gemlint.analysis.triage import ALWAYS, Gate
from gemlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position, RelatedLocation, Severity
from gemlint.languages import Language, checks_language
from gemlint.text import ScannedText, contains_marker_groups, line_offsets

if TYPE_CHECKING:
    import libcst as cst

    from gemlint.analysis.triage import Triage


class Rule:
    """Metadata and documentation shared by the rules of every language."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    languages: ClassVar[frozenset[Language]]
    #: One line: what the rule reports.
    summary: ClassVar[str]
    #: Why is this bad: the cost in production, with the benchmark's measured number where one exists.
    rationale: ClassVar[str]
    #: What the rule deliberately leaves alone (the spec's "must NOT flag").
    not_flagged: ClassVar[Sequence[str]] = ()
    #: A complete example the rule reports, and the same code written well.
    bad: ClassVar[str]
    good: ClassVar[str]
    #: The language ``bad`` and ``good`` are written in; None means the rule's only language (or Python).
    example_language: ClassVar[Language | None] = None
    #: None when the rule has no fix; otherwise how safe the fix is, explained in ``fix_note``.
    fix: ClassVar[Applicability | None] = None
    fix_note: ClassVar[str] = ""
    #: What the paired runtime benchmark measures.
    benchmark: ClassVar[str] = ""
    tags: ClassVar[Sequence[str]] = ("performance",)
    #: SARIF precision: very-high, high, medium or low.
    precision: ClassVar[str] = "high"
    #: A preview rule (ruff's model) is not selected by default: ``preview = true``, ``--preview`` or
    #: selecting its exact code enables it. It is promoted when a review on real code shows at least
    #: 95 % of its findings right.
    preview: ClassVar[bool] = False
    #: For a preview rule: what the review on real code found, in a sentence (shown in the docs).
    preview_reason: ClassVar[str] = ""
    #: Case-sensitive substrings; a file that contains none of them cannot match.
    #: Empty means the rule must always run.
    prefilter: ClassVar[Sequence[str]] = ()
    #: Text markers per language, as groups: a file of that language may match only if it contains a marker of
    #: every group. A language not named here uses ``prefilter``.
    markers: ClassVar[dict[Language, tuple[tuple[str, ...], ...]]] = {}
    #: Findings depend on other files of the project too (GEM601: a manifest and the handler it probes),
    #: so the per-file result cache never reuses them.
    cross_file: ClassVar[bool] = False
    #: What other modules may give a finding (``PROJECT_CONTEXT``: a caller's per-request context;
    #: ``PROJECT_MODELS``: a model built elsewhere): the text markers alone do not rule a file out when the
    #: project model shows one of these of it. Only what the markers stand for: GEM502's markers, a serving
    #: framework's imports, stand for a request, so other modules' context admits a file and their models do not.
    sees_project: ClassVar[tuple[str, ...]] = ()
    #: Findings may read the project's routes (every module that declares one, parsed and composed): a run
    #: that forks workers composes them once, before the fork, instead of once in each worker.
    reads_routes: ClassVar[bool] = False
    #: Whether a Python rule checks the code cells of Jupyter notebooks. A notebook is run by hand, cell by
    #: cell, to explore: it is not a service, so a rule applies when what it reports costs or misleads the
    #: person running the notebook, not only a deployed service. Every Python rule says which, with its reason
    #: in one sentence in ``notebooks_reason`` (shown in docs/rules.md).
    notebooks: ClassVar[bool] = False
    notebooks_reason: ClassVar[str] = ""

    @classmethod
    def reads(cls, language: Language) -> bool:
        """Whether the rule checks files of ``language`` (:func:`~gemlint.languages.checks_language`)."""
        return checks_language(cls.languages, cls.notebooks, language)

    @classmethod
    def reported_precision(cls) -> str:
        """The precision SARIF states: a preview rule's findings are not yet proven, so at most medium."""
        if cls.preview and cls.precision in ("very-high", "high"):
            return "medium"
        return cls.precision

    @classmethod
    def examples_language(cls) -> Language:
        if cls.example_language is not None:
            return cls.example_language
        if len(cls.languages) == 1:
            return next(iter(cls.languages))
        return Language.PYTHON

    @classmethod
    def diagnostic(
        cls,
        path: str,
        start: Position,
        end: Position,
        message: str,
        fix: Fix | None = None,
        severity: Severity | None = None,
        related: Iterable[RelatedLocation] = (),
        precision: str | None = None,
    ) -> Diagnostic:
        """A finding of this rule; ``severity`` (and ``precision``) override the rule's for this one finding."""
        return Diagnostic(
            code=cls.code,
            name=cls.name,
            severity=severity or cls.severity,
            path=path,
            line=start.line,
            column=start.column,
            end_line=end.line,
            end_column=end.column,
            message=message,
            fix=fix,
            related=tuple(related),
            precision=precision,
        )

    @classmethod
    def marker_groups(cls, language: Language) -> tuple[tuple[str, ...], ...]:
        """The marker groups a file in ``language`` must contain a marker of each of (none: any file)."""
        groups = cls.markers.get(language)
        if groups is not None:
            return groups
        return (tuple(cls.prefilter),) if cls.prefilter else ()

    @classmethod
    def may_match(cls, text: str | ScannedText, language: Language | None = None) -> bool:
        """Whether ``text`` (a file in ``language``; None: any of the rule's) may hold a finding."""
        if language is None:
            return not cls.prefilter or any(marker in text for marker in cls.prefilter)
        return contains_marker_groups(text, cls.marker_groups(language))


class PythonRule(Rule):
    """A Python rule: ``visit_<Node>`` methods, named for LibCST's node types, that report through
    :meth:`report`.

    They are called on every node of the file in source order (their return value does not prune the
    walk), then ``leave_Module``. A rule with other ``leave_`` methods, or one that visits whitespace or
    comments, is run by LibCST's own traversal instead (see :mod:`gemlint.python_lint`).
    """

    languages = frozenset({Language.PYTHON})

    #: What the file's ``ast`` must show for a finding to be possible (an over-approximation of what the
    #: visitor checks, by spelling only): a file no selected rule's gate admits is spared LibCST altogether.
    syntax_gate: ClassVar[Gate] = ALWAYS

    @classmethod
    def may_match_syntax(cls, triage: "Triage") -> bool:
        """Whether a file whose ``ast`` shows ``triage`` may hold a finding (the rule's ``syntax_gate``)."""
        return cls.syntax_gate.admits(triage)

    def __init__(self, context: "PythonFileContext") -> None:  # noqa: F821 - defined in gemlint.python_lint
        super().__init__()
        self.context = context

    def get_visitors(self) -> dict:
        """The rule's ``visit_*`` and ``leave_*`` methods by name (as LibCST's ``get_visitors`` lists a
        visitor's), the names read once per class."""
        return {name: getattr(self, name) for name in _visitor_names(type(self))}

    # -- reporting -----------------------------------------------------------------
    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        fix: Fix | None = None,
        severity: Severity | None = None,
        related: Iterable[RelatedLocation] = (),
        precision: str | None = None,
    ) -> None:
        """Report ``node``; the diagnostic spans the node's syntactic range."""
        start, end = self.range_of(node)
        self.context.add(self.diagnostic(self.context.display_path, start, end, message, fix, severity, related, precision))

    # -- positions and fixes -------------------------------------------------------
    def range_of(self, node: cst.CSTNode) -> tuple[Position, Position]:
        code_range = self.context.analysis.positions[node]
        return (
            Position(code_range.start.line, code_range.start.column + 1),
            Position(code_range.end.line, code_range.end.column + 1),
        )

    def replace_fix(
        self, node: cst.CSTNode, replacement: cst.CSTNode | str, message: str, applicability: Applicability
    ) -> Fix:
        """A fix that rewrites ``node`` as ``replacement`` (a node or source text)."""
        start, end = self.range_of(node)
        content = replacement if isinstance(replacement, str) else self.context.module.code_for_node(replacement)
        return Fix((Edit(start, end, content),), applicability, message)

    def insert_fix(self, at: Position, text: str, message: str, applicability: Applicability) -> Fix:
        return Fix((Edit(at, at, text),), applicability, message)

    @property
    def newline(self) -> str:
        return self.context.module.default_newline

    def line_text(self, line: int) -> str:
        """The text of a 1-based source line (lines as LibCST counts them), without its line ending."""
        offsets = line_offsets(self.context.text)
        if not 0 < line <= len(offsets):
            return ""
        end = offsets[line] if line < len(offsets) else len(self.context.text)
        return self.context.text[offsets[line - 1] : end].rstrip("\r\n")

    def indentation(self, line: int) -> str:
        text = self.line_text(line)
        return text[: len(text) - len(text.lstrip(" \t"))]

    def after_line(self, line: int) -> Position:
        """Where text inserted after ``line`` goes: the start of the next line (or the end of a last line
        that has no line ending, in which case the inserted text must start with a newline)."""
        if line < len(line_offsets(self.context.text)) - 1 or self.context.text.endswith(("\n", "\r")):
            return Position(line + 1, 1)
        return Position(line, len(self.line_text(line)) + 1)


class DocumentRule(Rule):
    """A rule over a non-Python document: a tree-sitter tree, YAML documents, a Dockerfile.

    The front-end for the rule's language (see :mod:`gemlint.frontends`) parses
    the file once into ``self.context.document``; :meth:`check` inspects it and
    reports with :meth:`report_at`.
    """

    def __init__(self, context: "DocumentContext | None" = None) -> None:  # noqa: F821 - defined in gemlint.engine
        # Cooperative, so one rule class can check Python and documents both (GEM404).
        super().__init__()
        if context is not None:
            self.context = context

    def check(self) -> None:
        raise NotImplementedError

    def report_at(
        self,
        start: Position,
        end: Position,
        message: str,
        *,
        fix: Fix | None = None,
        severity: Severity | None = None,
        related: Iterable[RelatedLocation] = (),
    ) -> None:
        self.context.add(self.diagnostic(self.context.display_path, start, end, message, fix, severity, related))


class AnalysisRule(PythonRule):
    """A Python rule that uses the shared analyses (names, contexts, guards) of ``self.analysis``.

    Check cheap syntactic conditions first and ask the analysis only for
    candidates: scope and qualified-name resolution cost several times the parse.
    """

    @property
    def analysis(self):
        return self.context.analysis


@cache
def _visitor_names(cls: type) -> tuple[str, ...]:
    """The ``visit_*`` and ``leave_*`` methods of a rule class."""
    return tuple(name for name in sorted(dir(cls)) if name.startswith(("visit_", "leave_")) and callable(getattr(cls, name)))
