"""Small syntactic helpers over LibCST expressions, shared by the index and the analyses."""

from __future__ import annotations

import libcst as cst


def terminal_name(expression: cst.BaseExpression) -> str | None:
    """``self.model.forward`` -> ``forward``; ``predict`` -> ``predict``."""
    if isinstance(expression, cst.Name):
        return expression.value
    if isinstance(expression, cst.Attribute):
        return expression.attr.value
    return None


def dotted_name(expression: cst.BaseExpression) -> str | None:
    """``self.model.forward`` -> ``"self.model.forward"``; None for anything but names and attributes."""
    parts = []
    while isinstance(expression, cst.Attribute):
        parts.append(expression.attr.value)
        expression = expression.value
    if not isinstance(expression, cst.Name):
        return None
    parts.append(expression.value)
    return ".".join(reversed(parts))
