"""The engine calls Python rules' visit methods from the analysis index, in source order; a rule that
needs other leave_ methods gets LibCST's own traversal."""

from __future__ import annotations

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
