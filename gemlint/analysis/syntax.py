"""Small syntactic helpers over LibCST expressions, shared by the index and the analyses."""

from __future__ import annotations

from typing import Iterator

import libcst as cst


def terminal_name(expression: cst.BaseExpression) -> str | None:
    """``self.model.forward`` -> ``forward``; ``predict`` -> ``predict``."""
    if isinstance(expression, cst.Name):
        return expression.value
    if isinstance(expression, cst.Attribute):
        return expression.attr.value
    return None


def bound_names(target: cst.BaseExpression) -> list[str]:
    """The names an assignment target binds, through tuples and lists (``a, (b, c) = ...``); an attribute or an
    item binds none."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in bound_names(element.value)]
    return []


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


def root_name(expression: cst.BaseExpression) -> str | None:
    """The name an attribute, subscript or call chain starts from (``model.lm_head.weight``, ``model.half()``:
    ``model``); None when it starts from anything else."""
    while not isinstance(expression, cst.Name):
        if isinstance(expression, (cst.Attribute, cst.Subscript)):
            expression = expression.value
        elif isinstance(expression, cst.Call):
            expression = expression.func
        else:
            return None
    return expression.value


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


SCOPE_NODES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def iter_subtree(node: cst.CSTNode, *, into_scopes: bool = False) -> Iterator[cst.CSTNode]:
    """Depth-first nodes below ``node`` (iteratively: deep files must not exhaust the stack).

    Unless ``into_scopes``, nested functions, classes and lambdas are not entered,
    since their bodies run at another time than the code around them.
    """
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        yield current
        if into_scopes or not isinstance(current, SCOPE_NODES):
            stack.extend(reversed(current.children))


def literal_value(expression: cst.BaseExpression) -> object:
    """The Python value of a literal (str, int, float, bool, None), else a sentinel ``NOT_LITERAL``."""
    if isinstance(expression, cst.Name) and expression.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expression.value]
    if isinstance(expression, (cst.SimpleString, cst.ConcatenatedString)):
        value = expression.evaluated_value
        return value if value is not None else NOT_LITERAL
    if isinstance(expression, cst.Integer):
        return expression.evaluated_value
    if isinstance(expression, cst.Float):
        return expression.evaluated_value
    if isinstance(expression, cst.UnaryOperation) and isinstance(expression.operator, cst.Minus):
        inner = literal_value(expression.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else NOT_LITERAL
    return NOT_LITERAL


class _NotLiteral:
    def __repr__(self) -> str:
        return "NOT_LITERAL"


NOT_LITERAL = _NotLiteral()


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    return next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)


def positional_arg(call: cst.Call, index: int) -> cst.Arg | None:
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[index] if index < len(positional) else None


def argument(call: cst.Call, index: int, name: str) -> cst.Arg | None:
    """The argument bound to parameter ``name`` at position ``index`` (keyword wins)."""
    return keyword_arg(call, name) or positional_arg(call, index)


def named_parameters(function: cst.FunctionDef) -> tuple[cst.Param, ...]:
    """The parameters a call can name: positional-only, ordinary and keyword-only (not ``*args``/``**kwargs``)."""
    params = function.params
    return (*params.posonly_params, *params.params, *params.kwonly_params)


def parameter_position(function: cst.FunctionDef, param: cst.Param, bound: bool) -> int | None:
    """Where ``param`` sits among the arguments a call passes by position (None: keyword-only; ``bound``:
    called on an instance or constructed, so ``self`` is not passed)."""
    positional = [*function.params.posonly_params, *function.params.params]
    return positional.index(param) - (1 if bound else 0) if param in positional else None


def passed_argument(call: cst.Call, index: int | None, name: str) -> cst.BaseExpression | None:
    """What ``call`` passes for the parameter ``name`` at position ``index`` (see :func:`parameter_position`),
    or None: nothing, or a ``*args``/``**kwargs`` spread that may hold it."""
    if any(arg.star for arg in call.args) or (index is not None and index < 0):
        return None
    arg = argument(call, index, name) if index is not None else keyword_arg(call, name)
    return arg.value if arg is not None else None


def assignment_value(analysis, target: cst.CSTNode) -> cst.BaseExpression | None:
    parent = analysis.parent(target)
    if isinstance(parent, cst.AssignTarget):
        statement = analysis.parent(parent)
        return statement.value if isinstance(statement, cst.Assign) else None
    if isinstance(parent, cst.AnnAssign) and parent.target is target:
        return parent.value
    if isinstance(parent, cst.AsName):
        item = analysis.parent(parent)
        return item.item if isinstance(item, cst.WithItem) else None
    if isinstance(parent, cst.NamedExpr) and parent.target is target:
        return parent.value
    return None


#: Calls that hand a loop the items of their first argument, as many as it has.
_ITEM_WRAPPERS = frozenset({"tqdm", "enumerate", "list", "tuple", "iter", "sorted", "reversed", "trange"})


def iterates_at_most_once(loop: cst.CSTNode) -> bool:
    """A ``for`` whose iterable has one item at most, written so: ``range(1)``, ``paths[:1]``, ``[path]``, also
    through ``tqdm(...)`` or ``enumerate(...)``. Its body runs once, as code outside a loop does."""
    if not isinstance(loop, cst.For):
        return False
    items = loop.iter
    while isinstance(items, cst.Call) and items.args and terminal_name(items.func) in _ITEM_WRAPPERS and not items.args[0].star:
        if terminal_name(items.func) == "trange":
            return len(items.args) == 1 and literal_value(items.args[0].value) in (0, 1)
        items = items.args[0].value
    if isinstance(items, cst.Call) and is_name(items.func, "range") and len(items.args) == 1 and not items.args[0].star:
        return literal_value(items.args[0].value) in (0, 1)
    if isinstance(items, (cst.List, cst.Tuple)):
        return len(items.elements) <= 1 and not any(isinstance(element, cst.StarredElement) for element in items.elements)
    if isinstance(items, cst.Subscript) and len(items.slice) == 1 and isinstance(items.slice[0].slice, cst.Slice):
        bounds = items.slice[0].slice
        start = literal_value(bounds.lower) if bounds.lower is not None else 0
        return bounds.step is None and start == 0 and bounds.upper is not None and literal_value(bounds.upper) in (0, 1)
    return False
