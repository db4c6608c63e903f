"""Backward passes: which calls backpropagate, from which tensor, with which options, and whether two of
them can go through the same graph (for GEM104 and any rule that reasons about retained graphs).

Data flow is followed through the assignments of one scope only, by name: a tensor "reaches" the names in
the expressions that computed it. Callees (``model`` in ``model(x)``, ``F`` in ``F.mse_loss``), ``self``
and arguments that only carry devices or dtypes are left out, since they carry no graph of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst
from libcst.metadata import Assignment

from gemlint.analysis.module import NOT_LITERAL, ModuleAnalysis, argument, assignment_value, literal_value, terminal_name

_AUTOGRAD_BACKWARD = frozenset({"torch.autograd.backward"})
_AUTOGRAD_GRAD = frozenset({"torch.autograd.grad"})
# Receivers whose `.backward(loss, ...)` takes the loss as an argument (accelerate, Lightning Fabric, DeepSpeed).
_WRAPPER_WORDS = ("accelerator", "fabric", "engine")
# Method calls whose arguments carry no graph (devices, dtypes).
_PLACEMENT_METHODS = frozenset({"to", "cuda", "cpu", "type", "view", "reshape", "expand", "permute", "transpose", "squeeze", "unsqueeze", "repeat"})
_PLACEMENT_KEYWORDS = frozenset({"device", "dtype", "non_blocking", "dim", "reduction", "keepdim", "ignore_index", "label_smoothing"})
_MAX_DEPTH = 8
_LOOPS = (cst.For, cst.While)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)


@dataclass(frozen=True)
class BackwardCall:
    call: cst.Call
    #: The tensor backpropagated from: ``loss`` in ``loss.backward()``, the first argument of
    #: ``torch.autograd.backward/grad`` and of ``accelerator.backward(loss)``.
    root: cst.BaseExpression | None
    #: The literal values of ``retain_graph`` / ``create_graph``: None when absent, NOT_LITERAL when computed.
    retain_graph: object
    create_graph: object


def backward_call(analysis: ModuleAnalysis, call: cst.Call) -> BackwardCall | None:
    """The backward pass ``call`` runs: ``t.backward(...)``, ``torch.autograd.backward(...)``,
    ``torch.autograd.grad(...)``, ``accelerator.backward(loss, ...)``; None for anything else."""
    func = call.func
    if analysis.resolves_to(func, _AUTOGRAD_GRAD):
        # grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, ...)
        return BackwardCall(call, _value(argument(call, 0, "outputs")), _flag(argument(call, 3, "retain_graph")), _flag(argument(call, 4, "create_graph")))
    if analysis.resolves_to(func, _AUTOGRAD_BACKWARD):
        # backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, ...)
        return BackwardCall(call, _value(argument(call, 0, "tensors")), _flag(argument(call, 2, "retain_graph")), _flag(argument(call, 3, "create_graph")))
    if isinstance(func, cst.Attribute) and func.attr.value == "backward":
        receiver = (terminal_name(func.value) or "").lower()
        if any(word in receiver for word in _WRAPPER_WORDS):
            return BackwardCall(call, _value(argument(call, 0, "loss")), _flag(argument(call, 99, "retain_graph")), _flag(argument(call, 99, "create_graph")))
        # Tensor.backward(gradient=None, retain_graph=None, create_graph=False, inputs=None)
        return BackwardCall(call, func.value, _flag(argument(call, 1, "retain_graph")), _flag(argument(call, 2, "create_graph")))
    return None


def _value(arg: cst.Arg | None) -> cst.BaseExpression | None:
    return arg.value if arg is not None else None


def _flag(arg: cst.Arg | None) -> object:
    return None if arg is None else literal_value(arg.value)


class GraphFlow:
    """Name-level data flow of one file, for questions about autograd graphs."""

    def __init__(self, analysis: ModuleAnalysis) -> None:
        self.analysis = analysis

    def scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The function (or module) whose body ``node`` runs in."""
        return next((a for a in self.analysis.ancestors(node) if isinstance(a, _SCOPES) and not isinstance(a, cst.ClassDef)), self.analysis.module)

    def backward_calls(self, scope: cst.CSTNode) -> list[BackwardCall]:
        """The backward passes in ``scope``'s own body (not in nested functions), in source order."""
        found = []
        for node in self.analysis.subtree(scope.body if isinstance(scope, (cst.FunctionDef, cst.Lambda)) else scope):
            if isinstance(node, cst.Call):
                backward = backward_call(self.analysis, node)
                if backward is not None:
                    found.append(backward)
        return found

    def innermost_loop(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost ``for``/``while`` loop or comprehension around ``node`` within its scope."""
        child = node
        for ancestor in self.analysis.ancestors(node):
            if isinstance(ancestor, _SCOPES):
                return None
            if isinstance(ancestor, _LOOPS) and child is ancestor.body:
                return ancestor
            if isinstance(ancestor, _COMPREHENSIONS):
                return ancestor
            child = ancestor
        return None

    def upstream(self, expression: cst.BaseExpression) -> frozenset[cst.CSTNode]:
        """The assignments (and parameters) whose values ``expression`` was computed from, transitively."""
        seen: set[cst.CSTNode] = set()
        todo = [(expression, 0)]
        while todo:
            current, depth = todo.pop()
            for name, _ in self.value_names(current):
                for assignment in self.analysis.assignments_of(name):
                    if assignment.node in seen:
                        continue
                    seen.add(assignment.node)
                    value = assignment_value(self.analysis, assignment.node)
                    if value is not None and depth < _MAX_DEPTH:
                        todo.append((value, depth + 1))
        return frozenset(seen)

    def value_names(self, expression: cst.BaseExpression, through_call: bool = False) -> Iterator[tuple[cst.Name, bool]]:
        """Names whose values flow into ``expression``, each with whether it is reached through a call argument.

        Callees, ``self``/``cls`` and device/dtype arguments are left out.
        """
        stack: list[tuple[cst.CSTNode, bool]] = [(expression, through_call)]
        while stack:
            node, via_call = stack.pop()
            if isinstance(node, cst.Name):
                if node.value not in ("self", "cls", "True", "False", "None"):
                    yield node, via_call
                continue
            if isinstance(node, _SCOPES + _COMPREHENSIONS):
                continue
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Attribute) and not self._is_namespace(func.value):
                    stack.append((func.value, via_call))  # out.sum(): the receiver is a value
                method = func.attr.value if isinstance(func, cst.Attribute) else None
                if method in _PLACEMENT_METHODS:
                    continue
                for arg in node.args:
                    if arg.keyword is not None and arg.keyword.value in _PLACEMENT_KEYWORDS:
                        continue
                    stack.append((arg.value, True))
                continue
            if isinstance(node, cst.Attribute):
                stack.append((node.value, via_call))
                continue
            if isinstance(node, cst.Subscript):
                stack.append((node.value, via_call))
                continue
            stack.extend((child, via_call) for child in node.children)

    def _is_namespace(self, expression: cst.BaseExpression) -> bool:
        """``F`` / ``torch.nn.functional`` / ``self`` in ``F.mse_loss(...)``: a module or object, not a tensor."""
        if isinstance(expression, cst.Name):
            if expression.value in ("self", "cls"):
                return True
            return any(not isinstance(a, Assignment) for a in self._all_assignments(expression))
        if isinstance(expression, cst.Attribute):
            return self._is_namespace(expression.value)
        return False

    def _all_assignments(self, name: cst.Name):
        scope = self.analysis.scope_of(name)
        return list(scope[name.value]) if scope is not None else []

    def graph_from_enclosing_scope(self, root: cst.BaseExpression, scope: cst.CSTNode) -> bool:
        """Whether the tensor ``root`` comes from an enclosing scope (a closure's free variable, a global)
        rather than being computed in ``scope``: then its graph was built outside, once, and each call of the
        function -- typically a benchmark timer's -- backpropagates through that same graph again."""
        if not isinstance(scope, (cst.FunctionDef, cst.Lambda)):
            return False
        for name, via_call in self.value_names(root):
            if via_call:
                continue  # `model(x).sum()`: a fresh graph computed here from the argument
            assignments = self.analysis.assignments_of(name)
            if assignments and all(not self.within(a.node, scope) for a in assignments):
                return True
        return False

    # -- loops -------------------------------------------------------------------------------------
    def graph_from_outside(self, root: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """Whether the graph behind ``root`` (backpropagated inside ``loop``) may include tensors computed
        before the loop, which the next iteration backpropagates through again."""
        return self._outside(root, loop, False, 0)

    def _outside(self, expression: cst.BaseExpression, loop: cst.CSTNode, through_call: bool, depth: int) -> bool:
        if depth > _MAX_DEPTH:
            return True
        for name, via_call in self.value_names(expression, through_call):
            assignments = self.analysis.assignments_of(name)
            if not assignments:
                continue  # a module-level or imported name: constants and hyperparameters
            target_loop = next((self._loop_of_target(a.node) for a in assignments if self._loop_of_target(a.node) is not None), None)
            if target_loop is not None and self.within(target_loop, loop):
                if not via_call:
                    return True  # `for loss in losses: loss.backward(...)`: the items share a graph
                if self._iterable_computed(target_loop):
                    return True
                continue
            inside = [a for a in assignments if self.within(a.node, loop)]
            if inside:
                for assignment in inside:
                    value = assignment_value(self.analysis, assignment.node)
                    if value is None or self._outside(value, loop, via_call, depth + 1):
                        return True
                continue
            for assignment in assignments:
                node = assignment.node
                if isinstance(node, cst.Param):
                    return True  # a tensor handed in may carry its caller's graph
                if self.scope_of(node) is self.scope_of(loop) and self._computed(assignment_value(self.analysis, node)):
                    return True
        return False

    def _loop_of_target(self, node: cst.CSTNode) -> cst.CSTNode | None:
        for ancestor in self.analysis.ancestors(node):
            if isinstance(ancestor, cst.For):
                return ancestor if self.within(node, ancestor.target) else None
            if isinstance(ancestor, cst.CompFor):
                return ancestor if self.within(node, ancestor.target) else None
            if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return None
        return None

    def _iterable_computed(self, loop: cst.CSTNode) -> bool:
        """A loop over tensors computed in this scope (``for out in outputs``, ``for o in y.unbind()``),
        rather than over a data loader or a range."""
        iterable = loop.iter
        while isinstance(iterable, cst.Call) and terminal_name(iterable.func) in ("enumerate", "zip", "list", "tuple", "iter", "reversed", "sorted", "tqdm"):
            if not iterable.args:
                return False
            return any(self._expression_computed(arg.value) for arg in iterable.args)
        return self._expression_computed(iterable)

    def _expression_computed(self, expression: cst.BaseExpression) -> bool:
        if isinstance(expression, cst.Call):
            func = expression.func
            if terminal_name(func) == "range":
                return False
            return isinstance(func, cst.Attribute) and not self._is_namespace(func.value)
        for name, _ in self.value_names(expression):
            for assignment in self.analysis.assignments_of(name):
                if not isinstance(assignment.node, cst.Param) and self._computed(assignment_value(self.analysis, assignment.node)):
                    return True
        return False

    @staticmethod
    def _computed(value: cst.BaseExpression | None) -> bool:
        """A value computed from tensors (not a literal, not an object construction such as ``DataLoader(...)``)."""
        if value is None or literal_value(value) is not NOT_LITERAL:
            return False
        if isinstance(value, cst.Call):
            name = terminal_name(value.func) or ""
            return not name[:1].isupper()
        return not isinstance(value, (cst.BaseString, cst.Lambda))

    def within(self, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
        return node is loop or any(a is loop for a in self.analysis.ancestors(node))
