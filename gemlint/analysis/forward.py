"""Forward passes: the calls that run a model (used by GEM601 and GEM602).

A forward pass is a call of a model object (``model(x)``, a pipeline called on
a prompt) or of one of its inference methods (``.forward``, ``.generate``,
``.predict``, ORT ``session.run``, vLLM ``llm.generate``, sentence-transformers
``encode``, ...). Model objects are names and attributes bound to what a model
loader or constructor returns (:data:`frameworks.MODEL_PRODUCERS`,
``from_pretrained`` of the model libraries, project ``nn.Module`` subclasses,
torchvision/timm constructors), followed through ``.to()``/``.eval()`` chains,
same-file assignments, ``self.<attr>`` set in any method, and same-file helpers
that return one.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.module import ModuleAnalysis, dotted_name, iter_subtree, positional_arg

_MAX_DEPTH = 4
_MODEL_ANNOTATIONS = fw.MODULE_BASES | {"transformers.modeling_utils.PreTrainedModel", "transformers.PreTrainedModel"}


def _cached(analysis: ModuleAnalysis, key: str, compute):
    store = analysis.__dict__.setdefault("_forward_cache", {})
    if key not in store:
        store[key] = compute()
    return store[key]


def _module_classes(analysis: ModuleAnalysis) -> frozenset[str]:
    """Classes of this module that are ``nn.Module`` subclasses (directly or through other classes here)."""

    def compute() -> frozenset[str]:
        classes = {n.name.value: n for n in iter_subtree(analysis.module, into_scopes=True) if isinstance(n, cst.ClassDef)}
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, cls in classes.items():
                if name in found:
                    continue
                for base in cls.bases:
                    if analysis.resolves_to(base.value, _MODEL_ANNOTATIONS) or (dotted_name(base.value) or "") in found:
                        found.add(name)
                        changed = True
                        break
        return frozenset(found)

    return _cached(analysis, "classes", compute)


def _module_functions(analysis: ModuleAnalysis) -> dict[str, cst.FunctionDef]:
    return _cached(analysis, "functions", lambda: {n.name.value: n for n in analysis.module.body if isinstance(n, cst.FunctionDef)})


def _annotated_as_model(analysis: ModuleAnalysis, name: cst.Name) -> bool:
    function = analysis.enclosing_function(name)
    if function is None:
        return False
    for param in (*function.params.params, *function.params.kwonly_params, *function.params.posonly_params):
        if param.name.value == name.value and param.annotation is not None:
            return analysis.resolves_to(param.annotation.annotation, _MODEL_ANNOTATIONS)
    return False


@dataclass(frozen=True)
class ForwardCall:
    node: cst.Call
    family: str  # torch, pipeline, onnxruntime, ...
    text: str  # "`self.model.generate(...)`"


def _producer_family(analysis: ModuleAnalysis, call: cst.Call, depth: int) -> str | None:
    func = call.func
    names = analysis.qualified_names(func)
    for name in names:
        if name in fw.MODEL_PRODUCERS:
            if fw.MODEL_PRODUCERS[name] == "torch" and name == "torch.compile":
                inner = positional_arg(call, 0)
                return (model_family(analysis, inner.value, depth + 1) if inner else None) or "torch"
            return fw.MODEL_PRODUCERS[name]
        if name.startswith(fw.MODEL_CONSTRUCTOR_PREFIXES):
            return "torch"
    if isinstance(func, cst.Attribute) and func.attr.value in ("from_pretrained", "from_single_file"):
        owner = func.value
        owner_names = analysis.qualified_names(owner)
        label = (dotted_name(owner) or "").rsplit(".", 1)[-1]
        if label.endswith(fw.NON_MODEL_PRETRAINED):
            return None
        if any(n.startswith(fw.FROM_PRETRAINED_LIBRARIES) for n in owner_names) or label in _module_classes(analysis):
            return "pipeline" if label.endswith("Pipeline") else "torch"
    if isinstance(func, cst.Name) and func.value in _module_classes(analysis):
        return "torch"
    return None


def model_family(analysis: ModuleAnalysis, expression: cst.BaseExpression, depth: int = 0) -> str | None:
    """The model family of the object ``expression`` evaluates to, or None when it is not evidently a model."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expression, cst.Call):
        func = expression.func
        if isinstance(func, cst.Attribute) and func.attr.value in fw.MODEL_PASSTHROUGH_METHODS:
            return model_family(analysis, func.value, depth + 1)
        family = _producer_family(analysis, expression, depth)
        if family is not None:
            return family
        helper = _local_function(analysis, func)
        if helper is not None:
            return returned_model_family(analysis, helper, depth + 1)
        return None
    if isinstance(expression, cst.Await):
        return model_family(analysis, expression.expression, depth + 1)
    if isinstance(expression, (cst.Name, cst.Attribute)):
        for value in analysis.bound_values(expression) if not _is_plain_attribute(expression) else []:
            if value is expression:
                continue
            family = model_family(analysis, value, depth + 1)
            if family is not None:
                return family
        if isinstance(expression, cst.Name) and _annotated_as_model(analysis, expression):
            return "torch"
    return None


def _is_plain_attribute(expression: cst.BaseExpression) -> bool:
    """``a.b`` where ``a`` is not ``self``: its binding is not visible in this file."""
    return isinstance(expression, cst.Attribute) and not (isinstance(expression.value, cst.Name) and expression.value.value == "self")


def _local_function(analysis: ModuleAnalysis, func: cst.BaseExpression) -> cst.FunctionDef | None:
    if isinstance(func, cst.Name):
        return _module_functions(analysis).get(func.value)
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        function = analysis.enclosing_function(func)
        owner = analysis.enclosing_class(function) if function is not None else None
        if owner is not None:
            return next(
                (s for s in owner.body.body if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value),
                None,
            )
    return None


def returned_model_family(analysis: ModuleAnalysis, function: cst.FunctionDef, depth: int = 0) -> str | None:
    """The family of the model a function returns (``def load(): return AutoModel.from_pretrained(...)``)."""
    for node in iter_subtree(function.body):
        if isinstance(node, cst.Return) and node.value is not None:
            family = model_family(analysis, node.value, depth + 1)
            if family is not None:
                return family
    return None


def _describe(analysis: ModuleAnalysis, call: cst.Call) -> str:
    text = analysis.module.code_for_node(call.func)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"`{text}(...)`"


def forward_call(analysis: ModuleAnalysis, call: cst.Call) -> ForwardCall | None:
    """``call`` runs a model: ``model(x)``, ``model.generate(...)``, ``session.run(...)``, ``to_thread(model, x)``."""
    func = call.func
    family = _callable_forward(analysis, func)
    if family is not None:
        return ForwardCall(call, family, _describe(analysis, call))
    offloaded = _offloaded_callable(analysis, call)
    if offloaded is not None:
        family = _callable_forward(analysis, offloaded)
        if family is not None:
            inner = analysis.module.code_for_node(offloaded)
            return ForwardCall(call, family, f"`{inner}` run by {_describe(analysis, call)}")
    return None


def _callable_forward(analysis: ModuleAnalysis, func: cst.BaseExpression) -> str | None:
    """The family when calling ``func`` runs a model (``model`` itself or ``model.<inference method>``)."""
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        family = model_family(analysis, func.value)
        if family is not None:
            methods, _ = fw.FORWARD_METHODS.get(family, (frozenset(), False))
            if method in methods or (method == "__call__" and fw.FORWARD_METHODS.get(family, ((), False))[1]):
                return family
    family = model_family(analysis, func) if isinstance(func, (cst.Name, cst.Attribute)) else None
    if family is not None and fw.FORWARD_METHODS.get(family, (frozenset(), False))[1]:
        return family
    return None


def _offloaded_callable(analysis: ModuleAnalysis, call: cst.Call) -> cst.BaseExpression | None:
    """The callable that ``asyncio.to_thread(f, ...)`` / ``loop.run_in_executor(ex, f, ...)`` runs."""
    for name in analysis.qualified_names(call.func):
        if name in fw.OFFLOAD_CALLS:
            arg = positional_arg(call, fw.OFFLOAD_CALLS[name])
            return arg.value if arg else None
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in fw.OFFLOAD_METHODS:
        arg = positional_arg(call, fw.OFFLOAD_METHODS[call.func.attr.value])
        return arg.value if arg else None
    return None


def offloaded_callable(analysis: ModuleAnalysis, call: cst.Call) -> cst.BaseExpression | None:
    return _offloaded_callable(analysis, call)


def forward_calls(analysis: ModuleAnalysis, scope: cst.CSTNode) -> list[ForwardCall]:
    """The forward passes run directly in ``scope`` (a function or the module), not in nested functions."""
    found = []
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    for node in iter_subtree(body):
        if isinstance(node, cst.Call):
            forward = forward_call(analysis, node)
            if forward is not None:
                found.append(forward)
    return found


def module_model_names(analysis: ModuleAnalysis) -> dict[str, str]:
    """Module-level names bound to a model object, with their family (other modules import them)."""
    names: dict[str, str] = {}
    for statement in analysis.module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        if isinstance(target.target, cst.Name):
                            family = model_family(analysis, small.value)
                            if family is not None:
                                names[target.target.value] = family
    return names
