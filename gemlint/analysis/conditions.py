"""Which branch of a conditional expression runs, where the code around it has already decided its test."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gemlint.analysis.syntax import dotted_name

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.analysis.module import ModuleAnalysis


def known_branch(analysis: "ModuleAnalysis", conditional: cst.IfExp) -> cst.BaseExpression | None:
    """The branch of ``conditional`` that runs wherever it is evaluated, or None: its test is written the same as the
    test of an ``if`` (or ``elif``) whose body holds it (the first branch) or whose ``else`` does (the second), in
    the same function, and nothing in that ``if`` assigns a name the test reads (``padding="max_length" if batched
    else False`` under ``if batched:``)."""
    code = analysis.module.code_for_node
    test = code(conditional.test).strip()
    child: cst.CSTNode = conditional
    for ancestor in analysis.ancestors(conditional):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if isinstance(ancestor, cst.If) and code(ancestor.test).strip() == test and not _assigns_what_it_reads(analysis, ancestor, conditional.test):
            if child is ancestor.body:
                return conditional.body
            if child is ancestor.orelse and isinstance(ancestor.orelse, cst.Else):
                return conditional.orelse
        child = ancestor
    return None


def _assigns_what_it_reads(analysis: "ModuleAnalysis", statement: cst.If, test: cst.BaseExpression) -> bool:
    """Something in ``statement`` binds a name (or attribute) that ``test`` reads: the test may change in between."""
    read = {dotted_name(node) for node in (test, *analysis.subtree(test)) if isinstance(node, (cst.Name, cst.Attribute))}
    read.discard(None)
    for node in analysis.subtree(statement):
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [target.target for target in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [node.target]
        for target in targets:
            for bound in (target, *analysis.subtree(target)):
                if isinstance(bound, (cst.Name, cst.Attribute)) and dotted_name(bound) in read:
                    return True
    return False
