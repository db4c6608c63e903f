"""Branches that exclude each other across a call.

A factory that binds its model only under ``if name == "vocos":`` (other names raise, or leave it unbound) returns
no model when called with another name. A caller that hands it ``args.vocoder`` and then uses the result under
``else`` of ``if args.vocoder == "vocos":`` is on a path where the call returned none: that use is dead code, and
nothing is reported there. Only equality with a literal is related, and only when the very expression the call
passed is tested; anything else is left to the usual analysis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import libcst as cst

from gemlint.analysis.syntax import NOT_LITERAL, literal_value, named_parameters, parameter_position, passed_argument

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.analysis.module import ModuleAnalysis

class Equality(NamedTuple):
    subject: cst.BaseExpression
    literal: object
    equal: bool  # `==` (True) or `!=` (False)


def equality(test: cst.BaseExpression) -> Equality | None:
    """``x == "lit"`` / ``x != "lit"`` (the literal on either side), else None."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    if not isinstance(target.operator, (cst.Equal, cst.NotEqual)):
        return None
    equal = isinstance(target.operator, cst.Equal)
    right = literal_value(target.comparator)
    if right is not NOT_LITERAL:
        return Equality(test.left, right, equal)
    left = literal_value(test.left)
    return Equality(target.comparator, left, equal) if left is not NOT_LITERAL else None


def arm_condition(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> tuple[str, object] | None:
    """``(param, literal)`` when ``node`` runs only in the body of ``if <param> == <literal>:`` inside ``function``,
    ``param`` being one of its parameters."""
    params = {param.name.value for param in named_parameters(function)}
    child: cst.CSTNode = node
    for ancestor in analysis.ancestors(node):
        if ancestor is function:
            return None
        if isinstance(ancestor, cst.If) and child is ancestor.body:
            test = equality(ancestor.test)
            if test is not None and test.equal and isinstance(test.subject, cst.Name) and test.subject.value in params:
                return test.subject.value, test.literal
        child = ancestor
    return None


def excluded_at(analysis: ModuleAnalysis, use: cst.CSTNode, subject: cst.BaseExpression, literal: object) -> bool:
    """``use`` runs only where ``subject != literal``: in the ``else``/``elif`` of ``if subject == literal:``, or
    in the body of ``if subject != literal:``."""
    spelled = analysis.module.code_for_node(subject)
    child: cst.CSTNode = use
    for ancestor in analysis.ancestors(use):
        if isinstance(ancestor, cst.If):
            test = equality(ancestor.test)
            if test is not None and test.literal == literal and analysis.module.code_for_node(test.subject) == spelled:
                if (test.equal and child is ancestor.orelse) or (not test.equal and child is ancestor.body):
                    return True
        child = ancestor
    return False


def call_excluded(analysis: ModuleAnalysis, call: cst.Call, function: cst.FunctionDef, param: str, literal: object, use: cst.CSTNode) -> bool:
    """``call`` of ``function`` passes an expression for ``param`` that ``use`` runs only when it is not ``literal``."""
    declared = next(p for p in named_parameters(function) if p.name.value == param)
    passed = passed_argument(call, parameter_position(function, declared, bound=False), param)
    return passed is not None and excluded_at(analysis, use, passed, literal)
