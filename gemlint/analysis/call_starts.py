"""Where each call of a module starts, read off its ``ast`` tree instead of LibCST's positions.

The project index names a call by its line and its order among the calls of the same name on that line, as
``ast`` saw it. Finding that call in the LibCST tree by LibCST's positions means ranging the module-level
statement it stands in, which for a call inside a class of a thousand lines costs more than parsing the file.
Both trees hold the same calls, and both can be read in source order: LibCST's index walks the tree in source
order, and ``ast``'s calls sort by where they start (an enclosing call before the call it starts with,
``f(x)(y)``). Paired one to one, each LibCST call takes its line and column from ``ast``, which is also what
the index recorded. Where the two do not pair (a different count, or a pair whose called names differ) the
answer is None, and positions answer instead.
"""

from __future__ import annotations

import ast
from typing import Sequence

import libcst as cst

from gemlint.analysis.syntax import terminal_name


def call_starts(tree: ast.Module, calls: Sequence[cst.Call]) -> dict[cst.Call, tuple[int, int]] | None:
    """``call -> (line, column)`` as ``ast`` gives them, for ``calls``: every LibCST call of the module whose
    tree is ``tree``, in source order."""
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    if len(found) != len(calls):
        return None
    found.sort(key=lambda node: (node.lineno, node.col_offset, -(node.end_lineno or 0), -(node.end_col_offset or 0)))
    starts: dict[cst.Call, tuple[int, int]] = {}
    for seen, call in zip(found, calls):
        if _terminal(seen.func) != terminal_name(call.func):
            return None
        starts[call] = (seen.lineno, seen.col_offset)
    return starts


def _terminal(expression: ast.expr) -> str | None:
    if isinstance(expression, ast.Name):
        return expression.id
    if isinstance(expression, ast.Attribute):
        return expression.attr
    return None
