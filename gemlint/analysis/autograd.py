"""Backward passes: which calls backpropagate, from which tensor, with which options (for GEM104 and
:mod:`gemlint.analysis.autograd_graphs`, which follows the graphs those tensors carry)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from gemlint.analysis.syntax import argument, literal_value, terminal_name

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.analysis.module import ModuleAnalysis

_AUTOGRAD_BACKWARD = frozenset({"torch.autograd.backward"})
_AUTOGRAD_GRAD = frozenset({"torch.autograd.grad"})
# Receivers whose `.backward(loss, ...)` takes the loss as an argument (accelerate, Lightning Fabric, DeepSpeed).
_WRAPPER_WORDS = ("accelerator", "fabric", "engine")


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
