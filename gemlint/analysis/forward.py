"""Forward passes: the calls that run a model (used by GEM601 and GEM602).

A forward pass is a call of a model object (``model(x)``, a pipeline called on
a prompt) or of one of its inference methods (``.forward``, ``.generate``,
``.predict``, ORT ``session.run``, vLLM ``llm.generate``, sentence-transformers
``encode``, ...). Torch modules are the shared model tracker's
(:mod:`gemlint.analysis.models`: constructors, loaders, ``from_pretrained``,
wrappers, names, attributes, parameters, helpers). The other runtimes --
transformers/diffusers pipelines, ONNX Runtime sessions, vLLM engines, Keras,
whisper, llama.cpp, ultralytics, CTranslate2, serving engines -- are not
modules; their objects are recognised here from their producers
(:data:`frameworks.MODEL_PRODUCERS`, :data:`frameworks.ENGINE_PRODUCERS`),
followed through same-file assignments, ``self.<attr>`` and helpers that
return one. A generation handed to any inference engine with a token budget is
a forward too (:mod:`gemlint.analysis.engines`): the engine's loop runs it.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.engines import call_budget, engine_submission
from gemlint.analysis.forward_families import ENGINE
from gemlint.analysis.module import ModuleAnalysis, dotted_name, positional_arg

# The qualified names `_producer_family` compares a call with.
_PRODUCED = frozenset(fw.MODEL_PRODUCERS) | fw.ENGINE_PRODUCERS

_MAX_DEPTH = 4


def _cached(analysis: ModuleAnalysis, key: str, compute):
    store = analysis.__dict__.setdefault("_forward_cache", {})
    if key not in store:
        store[key] = compute()
    return store[key]


@dataclass(frozen=True)
class ForwardCall:
    node: cst.Call
    family: str  # torch, pipeline, onnxruntime, ..., engine (a generation handed to an inference engine)
    text: str  # "`self.model.generate(...)`"


def _producer_family(analysis: ModuleAnalysis, call: cst.Call) -> str | None:
    """The family of a non-module model object that ``call`` creates (pipelines, ORT sessions, vLLM, ...)."""
    func = call.func
    name = analysis.first_name_among(func, _PRODUCED)
    if name is not None:
        return fw.MODEL_PRODUCERS.get(name, "engine")
    if isinstance(func, cst.Attribute) and func.attr.value in fw.PRETRAINED_METHODS:
        label = (dotted_name(func.value) or "").rsplit(".", 1)[-1]
        if label.endswith("Pipeline") and analysis.resolves_with_prefix(func.value, ("diffusers.",)):
            return "pipeline"
    return None


def model_family(analysis: ModuleAnalysis, expression: cst.BaseExpression, depth: int = 0) -> str | None:
    """The model family of the object ``expression`` evaluates to, or None when it is not evidently a model."""
    if depth > _MAX_DEPTH:
        return None
    if depth == 0 and analysis.models.origins(expression):
        return "torch"
    if isinstance(expression, cst.Call):
        func = expression.func
        if isinstance(func, cst.Attribute) and func.attr.value in fw.MODEL_PASSTHROUGH_METHODS:
            return model_family(analysis, func.value, depth + 1)
        family = _producer_family(analysis, expression)
        if family is not None:
            return family
        helper = _local_function(analysis, func)
        if helper is not None:
            return returned_model_family(analysis, helper, depth + 1)
        return None
    if isinstance(expression, cst.Await):
        return model_family(analysis, expression.expression, depth + 1)
    if isinstance(expression, (cst.Name, cst.Attribute)) and not _is_plain_attribute(expression):
        for value in analysis.bound_values(expression):
            if value is expression:
                continue
            family = model_family(analysis, value, depth + 1)
            if family is not None:
                return family
    return None


def _is_plain_attribute(expression: cst.BaseExpression) -> bool:
    """``a.b`` where ``a`` is not ``self``: its binding is not visible in this file."""
    return isinstance(expression, cst.Attribute) and not (isinstance(expression.value, cst.Name) and expression.value.value == "self")


def _local_function(analysis: ModuleAnalysis, func: cst.BaseExpression) -> cst.FunctionDef | None:
    if isinstance(func, cst.Name):
        return analysis.module_functions.get(func.value)
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
    for value in analysis.returned_values(function):
        family = model_family(analysis, value, depth + 1)
        if family is not None:
            return family
    return None


def _describe(analysis: ModuleAnalysis, call: cst.Call, budget: str | None = None) -> str:
    text = analysis.module.code_for_node(call.func)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"`{text}(...)` with `{budget}`" if budget else f"`{text}(...)`"


def forward_call(analysis: ModuleAnalysis, call: cst.Call) -> ForwardCall | None:
    """``call`` runs a model: ``model(x)``, ``model.generate(...)``, ``session.run(...)``, ``to_thread(model, x)``,
    or hands a generation to an inference engine (``engine.generate(prompt, SamplingParams(max_tokens=1))``)."""
    func = call.func
    family = _callable_forward(analysis, func)
    if family is not None:
        budget = call_budget(analysis, call) if family == ENGINE else None
        return ForwardCall(call, family, _describe(analysis, call, budget))
    submission = engine_submission(analysis, call)
    if submission is not None:
        return ForwardCall(call, ENGINE, _describe(analysis, call, submission.budget))
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
    name = analysis.first_name_among(call.func, fw.OFFLOAD_CALLS)
    if name is not None:
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
    for node in analysis.subtree(body):
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
