"""Where each call and each ``def`` of a module starts, read off its ``ast`` tree instead of LibCST's positions.

The project index names a call by its line and its order among the calls of the same name on that line, and a
function by the line of its ``def``, as ``ast`` saw them. Finding either in the LibCST tree by LibCST's positions
means ranging the module-level statement it stands in, which for a call or a route handler inside a class of a
thousand lines costs more than parsing the file. Both trees hold the same calls and the same functions, and both
can be read in source order: LibCST's index walks the tree in source order, and ``ast``'s nodes sort by where
they start (an enclosing call before the call it starts with, ``f(x)(y)``; an enclosing function before the
functions it defines). Paired one to one, each LibCST node takes its line (and a call its column) from ``ast``,
which is also what the index recorded. A function starts where LibCST's positions start it: at its ``def`` (or
``async``), after its decorators. Where the two do not pair (a different count, or a pair whose names differ)
the answer is None, and positions answer instead.
"""

from __future__ import annotations

import ast
from typing import Sequence

import libcst as cst

from gemlint.analysis.ast_walk import SCALAR_FIELDS, walk
from gemlint.analysis.syntax import terminal_name

def starts(
    tree: ast.Module, calls: Sequence[cst.Call], functions: Sequence[cst.FunctionDef]
) -> tuple[dict[cst.Call, tuple[int, int]] | None, dict[cst.FunctionDef, int] | None]:
    """:func:`call_starts` and :func:`definition_lines`, from one walk of ``tree``."""
    found_calls: list[ast.Call] = []
    found_functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in walk(tree, SCALAR_FIELDS):
        kind = type(node)
        if kind is ast.Call:
            found_calls.append(node)  # type: ignore[arg-type]
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            found_functions.append(node)  # type: ignore[arg-type]
    return _call_starts(found_calls, calls), _definition_lines(found_functions, functions)


def call_starts(tree: ast.Module, calls: Sequence[cst.Call]) -> dict[cst.Call, tuple[int, int]] | None:
    """``call -> (line, column)`` as ``ast`` gives them, for ``calls``: every LibCST call of the module whose
    tree is ``tree``, in source order."""
    return starts(tree, calls, ())[0]


def _call_starts(found: list[ast.Call], calls: Sequence[cst.Call]) -> dict[cst.Call, tuple[int, int]] | None:
    if len(found) != len(calls):
        return None
    found.sort(key=lambda node: (node.lineno, node.col_offset, -(node.end_lineno or 0), -(node.end_col_offset or 0)))
    found_starts: dict[cst.Call, tuple[int, int]] = {}
    for seen, call in zip(found, calls):
        if _terminal(seen.func) != terminal_name(call.func):
            return None
        found_starts[call] = (seen.lineno, seen.col_offset)
    return found_starts


def definition_lines(tree: ast.Module, functions: Sequence[cst.FunctionDef]) -> dict[cst.FunctionDef, int] | None:
    """``function -> the line of its def`` as ``ast`` gives it, for ``functions``: every LibCST function of the
    module whose tree is ``tree``, in source order. Two functions never start on one line (a ``def`` is a
    compound statement), so the order of their lines is the order of their sources."""
    return starts(tree, (), functions)[1]


def _definition_lines(found: list[ast.FunctionDef | ast.AsyncFunctionDef], functions: Sequence[cst.FunctionDef]) -> dict[cst.FunctionDef, int] | None:
    found = sorted(found, key=lambda node: node.lineno)
    if len(found) != len(functions):
        return None
    lines: dict[cst.FunctionDef, int] = {}
    for seen, function in zip(found, functions):
        if seen.name != function.name.value or isinstance(seen, ast.AsyncFunctionDef) != (function.asynchronous is not None):
            return None
        lines[function] = seen.lineno
    return lines


def _terminal(expression: ast.expr) -> str | None:
    if isinstance(expression, ast.Name):
        return expression.id
    if isinstance(expression, ast.Attribute):
        return expression.attr
    return None
