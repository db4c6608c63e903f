"""The engine calls Python rules' visit methods from the analysis index, in source order; a rule that
needs other leave_ methods gets LibCST's own traversal."""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import types
import typing
from pathlib import Path

import libcst as cst

from gemlint.config import default_config
from gemlint.discovery import SourceFile
from gemlint.engine import lint_text
from gemlint.languages import Language
from gemlint.rule import PythonRule
from gemlint.selection import Selection

SOURCE = "def first():\n    a()\n\ndef second():\n    b()\n    c()\n"


def _run(rule: type[PythonRule]) -> list[str]:
    source = SourceFile(Path("pkg/mod.py"), Language.PYTHON, "pkg/mod.py", "pkg/mod.py")
    return [d.message for d in lint_text(source, SOURCE, Selection((rule,), default_config(Path.cwd())))]


class _Base(PythonRule):
    code = "GEM990"
    name = "dispatch-probe"
    summary = rationale = bad = good = ""


class CallsInOrder(_Base):
    seen: list[str] = []  # the order of the calls, which sorted findings would hide

    def visit_Module(self, node: cst.Module) -> None:
        self.seen.append("module")

    def visit_Call(self, node: cst.Call) -> None:
        self.seen.append(f"call {node.func.value}")
        self.report(node, "call")

    def leave_Module(self, original_node: cst.Module) -> None:
        self.seen.append("end")


class CallsPerFunction(_Base):
    """Counts calls per function: needs leave_FunctionDef, i.e. the real traversal."""

    def __init__(self, context) -> None:
        super().__init__(context)
        self.calls = 0

    def visit_Call(self, node: cst.Call) -> None:
        self.calls += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.report(original_node, f"{original_node.name.value}: {self.calls}")
        self.calls = 0


def test_visit_methods_run_on_every_node_in_source_order_between_module_visit_and_leave():
    CallsInOrder.seen.clear()
    assert _run(CallsInOrder) == ["call", "call", "call"]
    assert CallsInOrder.seen == ["module", "call a", "call b", "call c", "end"]


def test_a_rule_with_other_leave_methods_gets_libcst_traversal():
    assert sorted(_run(CallsPerFunction)) == ["first: 1", "second: 2"]


class CommentsSeen(_Base):
    """Visits comments, which the analysis index leaves out with the rest of the whitespace."""

    def visit_Comment(self, node: cst.Comment) -> None:
        self.report(node, node.value)


def test_a_rule_that_visits_whitespace_or_comments_gets_libcst_traversal():
    source = SourceFile(Path("pkg/mod.py"), Language.PYTHON, "pkg/mod.py", "pkg/mod.py")
    text = "# first\nx = 1  # second\n"
    found = lint_text(source, text, Selection((CommentsSeen,), default_config(Path.cwd())))
    assert [(d.line, d.message) for d in found] == [(1, "# first"), (2, "# second")]


def _members(declared) -> list:
    """The classes a field's declared type admits: the members of a union, the items of a sequence."""
    if typing.get_origin(declared) in (typing.Union, types.UnionType):
        return [member for part in typing.get_args(declared) for member in _members(part)]
    if typing.get_origin(declared) in (list, tuple, collections.abc.Sequence):
        return _members(typing.get_args(declared)[0])
    return [declared]


def test_the_index_leaves_out_only_fields_that_hold_whitespace_or_punctuation():
    """The fields the index never reads (by name) are declared, in every LibCST node, to hold trivia only."""
    from gemlint.analysis.index import _TRIVIA_FIELDS, TRIVIA

    allowed = (*TRIVIA, cst.BaseParenthesizableWhitespace, cst.MaybeSentinel, type(None))
    for _, kind in inspect.getmembers(cst, inspect.isclass):
        if not (issubclass(kind, cst.CSTNode) and dataclasses.is_dataclass(kind)):
            continue
        hints = typing.get_type_hints(kind)
        for field in dataclasses.fields(kind):
            if field.name in _TRIVIA_FIELDS or field.name.startswith("whitespace"):
                for member in _members(hints[field.name]):
                    assert isinstance(member, type) and issubclass(member, allowed), (kind.__name__, field.name, member)


def test_every_rule_lists_the_visitor_methods_libcst_would():
    """``PythonRule.get_visitors`` lists what LibCST's ``get_visitors`` would of the same methods (LibCST's
    traversal takes a rule through it), reading the names once per class."""
    from gemlint.registry import all_rules

    rules = [rule for rule in all_rules() if issubclass(rule, PythonRule)]
    assert len(rules) >= 10
    for rule in rules:
        visitor = rule.__new__(rule)
        assert visitor.get_visitors().keys() == cst.BatchableCSTVisitor.get_visitors(visitor).keys(), rule.code


def test_a_rule_lists_the_visitor_methods_it_defines_and_no_others():
    class Probe(PythonRule):
        code = "GEM999"

        def visit_Call(self, node: cst.Call) -> None:
            pass

        def leave_Module(self, original_node: cst.Module) -> None:
            pass

    visitor = Probe.__new__(Probe)
    assert set(visitor.get_visitors()) == {"visit_Call", "leave_Module"}
    assert visitor.get_visitors()["visit_Call"].__self__ is visitor


def test_the_rules_of_other_languages_import_no_libcst():
    """Rule classes are plain classes: a run over deployment or native files imports its rules without LibCST,
    the GEM3xx rules that read Python files too included."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from gemlint.registry import rule_class\n"
        "from gemlint.languages import Language\n"
        "from gemlint.rules.rule_table import RULES\n"
        "for entry in RULES:\n"
        "    if Language.PYTHON not in entry.languages or entry.code.startswith('GEM30'):\n"
        "        rule_class(entry)\n"
        "print(sorted(name for name in sys.modules if name == 'libcst' or name.startswith('libcst.')))\n"
    )
    imported = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert imported.strip() == "[]"
