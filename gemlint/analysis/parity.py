"""Parity checks: a function that runs one input through two implementations and compares what they return.

``out = model(x); ref = reference(x); (out - ref).norm()`` or ``torch.allclose(model(x), ported(x))`` checks a
conversion or a port, once, on whatever input it was handed (often noise); it serves nothing, whatever calls it
(SPEC §2, "files that are tests by content"). Classifier-free guidance subtracts two outputs of one input too, but
keeps the difference as a tensor (so does a mask made of ``(a - b).abs()``): only a difference reduced to its size
(``.norm()``, ``.abs().max()``) or an ``allclose``-like comparison makes a check.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from gemlint.analysis.syntax import dotted_name, terminal_name

#: Calls that compare two tensors or arrays (``torch.allclose``, ``torch.testing.assert_close``, numpy's).
COMPARISON_CALLS = frozenset(
    {
        "allclose",
        "isclose",
        "assert_close",
        "assert_allclose",
        "assert_almost_equal",
        "assert_array_almost_equal",
        "assert_array_equal",
        "dist",
    }
)
#: Reductions that turn ``(a - b).abs()`` into the size of the difference: ``(out - ref).abs().max()``, or as
#: functions, ``np.sum(np.abs(out - ref))``.
_REDUCTIONS = frozenset({"max", "mean", "sum"})
#: Methods that hand back the same values in another place or type: ``model(x).cpu().detach().numpy()`` holds what
#: the model returned.
_SAME_VALUES = frozenset({"cpu", "cuda", "detach", "numpy", "float", "double", "to", "astype", "contiguous", "squeeze", "tolist"})
#: Those, and ``.item()``, which reads the one value a result holds (``scores[-1].item()``).
_SAME_VALUES_OR_SCALAR = _SAME_VALUES | {"item"}


def compares_two_implementations(nodes: Iterable[cst.CSTNode]) -> bool:
    """Whether ``nodes`` (a function's body or a ``__main__`` block, nested scopes excluded) compare the results of
    two calls that were handed the same value."""
    nodes = list(nodes)
    results: dict[str, cst.Call] = {}
    # `diff = np.abs(out - ref)`, reduced below as `np.sum(diff)`: what each name is bound to
    bound: dict[str, cst.BaseExpression] = {}
    for node in nodes:
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            bound[node.targets[0].target.value] = node.value
        call = _returned_by(node.value) if isinstance(node, cst.Assign) and len(node.targets) == 1 else None
        if call is not None:
            target = node.targets[0].target
            # `out = f(x)`, or `out, pooled = f(x)`: each name holds (part of) what the call returned
            for name in target.elements if isinstance(target, cst.Tuple) else (target,):
                name = name.value if isinstance(name, cst.Element) else name
                if isinstance(name, cst.Name):
                    results[name.value] = call
    for node in nodes:
        if isinstance(node, cst.Call):
            for first, second in _compared(node, bound):
                left, right = _call_behind(first, results), _call_behind(second, results)
                if left is not None and right is not None and left is not right and _shared_input(left, right):
                    return True
    return False


def checks_outputs(nodes: Iterable[cst.CSTNode]) -> bool:
    """Whether ``nodes`` check what a model returns rather than serve it: they compare two implementations' results
    (:func:`compares_two_implementations`), or assert that a result equals values written down
    (:func:`checks_recorded_values`)."""
    nodes = list(nodes)
    return compares_two_implementations(nodes) or checks_recorded_values(nodes)


def checks_recorded_values(nodes: Iterable[cst.CSTNode]) -> bool:
    """Whether ``nodes`` assert that what a call returned equals fractional values written in the code: ``assert
    scores[-1].item() == 0.5799``, ``assert torch.allclose(logits[0, :3], expected, atol=1e-4)`` with ``expected =
    torch.tensor([[0.12, -0.3]])``: a conversion checked against the outputs the original implementation gave. A
    shape or count checked against a whole number (``assert image.shape[1] == 3``) is no such check."""
    results: dict[str, cst.Call] = {}
    recorded: set[str] = set()
    for node in nodes:
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            if _fractional_literal(node.value):
                recorded.add(name)
            else:
                call = _result_behind(node.value, results)
                if call is not None:
                    results[name] = call
    for node in nodes:
        if not isinstance(node, cst.Assert):
            continue
        test = node.test
        pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal):
            pairs.append((test.left, test.comparisons[0].comparator))
        elif isinstance(test, cst.Call):
            pairs.extend(_comparison_arguments(test))
        for first, second in pairs:
            for computed, written in ((first, second), (second, first)):
                literal = _fractional_literal(written) or (isinstance(written, cst.Name) and written.value in recorded)
                if literal and _result_behind(computed, results) is not None:
                    return True
    return False


def _result_behind(value: cst.BaseExpression, results: dict[str, cst.Call]) -> cst.Call | None:
    """The call whose result ``value`` holds, or a part of it (a scalar read with ``.item()`` too), directly or
    through a name bound to one (``output.iou_scores.squeeze()`` with ``output = model(**inputs)``)."""
    return _call_behind(_held_part(value, _SAME_VALUES_OR_SCALAR), results)


def _fractional_literal(value: cst.BaseExpression) -> bool:
    """A number with a fractional part (``0.5799``, ``-1.2e-3``), or a list, tuple or tensor of numbers written out
    with one among them (``torch.tensor([[0.12, -0.3]])``)."""
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    if isinstance(value, cst.Float):
        return True
    if isinstance(value, cst.Call) and terminal_name(value.func) in ("tensor", "array", "Tensor", "FloatTensor") and value.args:
        value = value.args[0].value
    if isinstance(value, (cst.List, cst.Tuple)):
        numbers = list(_numbers(value))
        return bool(numbers) and all(number is not None for number in numbers) and any(isinstance(number, cst.Float) for number in numbers)
    return False


def _numbers(value: cst.BaseExpression):
    """The numbers of a nested list or tuple written out; None for an element that is none."""
    for element in value.elements:  # type: ignore[attr-defined]
        item = element.value
        if isinstance(item, cst.UnaryOperation) and isinstance(item.operator, cst.Minus):
            item = item.expression
        if isinstance(item, (cst.List, cst.Tuple)):
            yield from _numbers(item)
        else:
            yield item if isinstance(item, (cst.Integer, cst.Float)) else None


def _returned_by(value: cst.BaseExpression) -> cst.Call | None:
    """The call whose result ``value`` is, or a part of it: ``f(x)``, ``f(x).sample``, ``f(x)[0]``,
    ``f(x).cpu().numpy()``."""
    value = _held_part(value, _SAME_VALUES)
    return value if isinstance(value, cst.Call) else None


def _held_part(value: cst.BaseExpression, same_values: frozenset[str]) -> cst.BaseExpression:
    """What ``value`` is a part of, or the same values of: ``f(x)`` for ``f(x).sample[0].cpu()``, with the methods
    ``same_values`` taken to hand back what they are called on."""
    while True:
        if isinstance(value, (cst.Attribute, cst.Subscript)):
            value = value.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in same_values:
            value = value.func.value
        else:
            return value


def _comparison_arguments(call: cst.Call) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """The two values a comparison call (:data:`COMPARISON_CALLS`: ``torch.allclose(a, b)``) compares, if it is one."""
    if terminal_name(call.func) not in COMPARISON_CALLS:
        return []
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    return [(positional[0], positional[1])] if len(positional) >= 2 else []


def _compared(call: cst.Call, bound: dict[str, cst.BaseExpression]) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    name = terminal_name(call.func)
    if name in COMPARISON_CALLS:
        return _comparison_arguments(call)
    operand: cst.BaseExpression | None = None
    if name == "norm":
        # `(a - b).norm()` as a method, `torch.norm(a - b)` as a function
        operand = call.func.value if isinstance(call.func, cst.Attribute) else None
        if not _is_difference(operand) and call.args:
            operand = call.args[0].value
    elif name in _REDUCTIONS and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call):
        # `(a - b).abs().max()`; an elementwise `(a - b).abs()` alone (a mask, an image) is not a measure
        inner = call.func.value
        if terminal_name(inner.func) == "abs" and isinstance(inner.func, cst.Attribute):
            operand = inner.func.value
    elif name in _REDUCTIONS and call.args:
        # `np.sum(np.abs(out - ref))`, or `np.sum(diff)` with `diff = np.abs(out - ref)`
        inner = call.args[0].value
        if isinstance(inner, cst.Name):
            inner = bound.get(inner.value, inner)
        if isinstance(inner, cst.Call) and terminal_name(inner.func) == "abs":
            operand = inner.args[0].value if inner.args else inner.func.value if isinstance(inner.func, cst.Attribute) else None
    elif name == "all" and isinstance(call.func, cst.Attribute) and not call.args:
        # `(a == b).all()`: every element the same
        equal = call.func.value
        if isinstance(equal, cst.Comparison) and len(equal.comparisons) == 1 and isinstance(equal.comparisons[0].operator, cst.Equal):
            return [(equal.left, equal.comparisons[0].comparator)]
    if _is_difference(operand):
        return [(operand.left, operand.right)]  # type: ignore[union-attr]
    return []


def _is_difference(expression: cst.BaseExpression | None) -> bool:
    return isinstance(expression, cst.BinaryOperation) and isinstance(expression.operator, cst.Subtract)


def _call_behind(expression: cst.BaseExpression, results: dict[str, cst.Call]) -> cst.Call | None:
    if isinstance(expression, cst.Call):
        return expression
    if isinstance(expression, cst.Name):
        return results.get(expression.value)
    return None


def _shared_input(first: cst.Call, second: cst.Call) -> bool:
    """Two callees spelled differently are handed the same value (a name or an attribute chain) as a positional
    argument (``model(x)`` and ``reference(cfg, x)``; ``run_torch(args.text)`` and ``port.run(args.text)``). One model
    run on two inputs (``model(a)``, ``model(b)``: a distance between embeddings) is inference, not a check."""
    callees = dotted_name(first.func), dotted_name(second.func)
    if None in callees or callees[0] == callees[1]:
        return False
    return bool(_positional_values(first) & _positional_values(second))


def _positional_values(call: cst.Call) -> set[str]:
    spelled = (dotted_name(_unscaled(arg.value)) for arg in call.args if arg.keyword is None and not arg.star)
    return {value for value in spelled if value is not None}


def _unscaled(value: cst.BaseExpression) -> cst.BaseExpression:
    """``x`` of ``0.18215 * x`` or ``x / 2``: a value scaled by a number is the same input, in the units the
    other implementation expects (a latent scaled for a VAE)."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Multiply, cst.Divide)):
        if isinstance(value.left, (cst.Integer, cst.Float)) and isinstance(value.operator, cst.Multiply):
            return value.right
        if isinstance(value.right, (cst.Integer, cst.Float)):
            return value.left
    return value
