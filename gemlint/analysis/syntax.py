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


def is_name(expression: cst.CSTNode, *values: str) -> bool:
    """A bare name, one of ``values`` if any are given."""
    return isinstance(expression, cst.Name) and (not values or expression.value in values)


def is_member(expression: cst.CSTNode, owners: tuple[str, ...], attr: str | None = None) -> bool:
    """``self.x`` (``owners=("self",)``), ``self.x`` or ``cls.x``, ``model.requires_grad`` (``attr``)."""
    return (
        isinstance(expression, cst.Attribute)
        and is_name(expression.value, *owners)
        and (attr is None or expression.attr.value == attr)
    )


def is_main_test(test: cst.CSTNode) -> bool:
    """``__name__ == "__main__"`` (any string on the right)."""
    return (
        isinstance(test, cst.Comparison)
        and is_name(test.left, "__name__")
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and isinstance(test.comparisons[0].comparator, cst.SimpleString)
    )
