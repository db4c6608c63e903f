"""Generations submitted to an inference engine: forward passes run by the engine's loop (GEM601, GEM602).

LLM servers seldom call the model from a handler. They hand a request to an
engine -- vLLM ``engine.generate(prompt, sampling_params, request_id)``, SGLang
``tokenizer_manager.generate_request(GenerateReqInput(...))``, a scheduler's
``add_request`` -- and the engine's loop runs the forward for it. Such an object is
recognised by what is done with it, not by its name: it is asked to
generate (:data:`frameworks.ENGINE_SUBMIT_METHODS`) with a token budget
(:data:`frameworks.TOKEN_BUDGET_KEYS`). The budget may be a keyword of the call or
travel in an argument: sampling parameters or a request object built with one
(``SamplingParams(max_tokens=1)``, ``GenerateReqInput(sampling_params={...})``), a
dict holding the key, followed through the function's own bindings (closures
included) and what is later done to them (``params.update(max_new_tokens=1)``,
``params.init(**parameters)``, ``request["max_tokens"] = 1``).

Once an object has been handed a generation with a budget anywhere in the file,
its other submissions count as well (an embedding request ``engine.encode(...)``,
a request built elsewhere). Status calls (``check_health()``, ``is_ready()``), flags
and device queries are never submissions.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.module import ModuleAnalysis, is_member, literal_value
from gemlint.analysis.scopes import references_of

_MAX_DEPTH = 8


@dataclass(frozen=True)
class Submission:
    budget: str | None  # the token-budget key the request carries; None: the receiver is handed one elsewhere in the file


def engine_submission(analysis: ModuleAnalysis, call: cst.Call) -> Submission | None:
    """``call`` hands a generation to an inference engine."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in fw.ENGINE_SUBMIT_METHODS:
        return None
    budget = call_budget(analysis, call)
    if budget is not None:
        return Submission(budget)
    key = _receiver_key(analysis, func.value)
    if key is not None and key in _engines(analysis):
        return Submission(None)
    return None


def call_budget(analysis: ModuleAnalysis, call: cst.Call) -> str | None:
    """The token-budget key that ``call``'s arguments carry, or None."""
    return _args_budget(analysis, call, 0, set())


def _args_budget(analysis: ModuleAnalysis, call: cst.Call, depth: int, seen: set[int]) -> str | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in fw.TOKEN_BUDGET_KEYS:
            return arg.keyword.value
    for arg in call.args:
        found = _budget(analysis, arg.value, depth + 1, seen)
        if found is not None:
            return found
    return None


def _budget(analysis: ModuleAnalysis, expression: cst.BaseExpression, depth: int, seen: set[int]) -> str | None:
    """The token-budget key that the value of ``expression`` carries."""
    if depth > _MAX_DEPTH or id(expression) in seen:
        return None
    seen.add(id(expression))
    if isinstance(expression, cst.Dict):
        for element in expression.elements:
            if isinstance(element, cst.DictElement):
                key = literal_value(element.key)
                if isinstance(key, str) and key in fw.TOKEN_BUDGET_KEYS:
                    return key
            found = _budget(analysis, element.value, depth + 1, seen)
            if found is not None:
                return found
        return None
    if isinstance(expression, cst.Call):
        return _args_budget(analysis, expression, depth, seen)
    if isinstance(expression, (cst.List, cst.Tuple, cst.Set)):
        for element in expression.elements:
            found = _budget(analysis, element.value, depth + 1, seen)
            if found is not None:
                return found
        return None
    if isinstance(expression, cst.Subscript):
        return _budget(analysis, expression.value, depth + 1, seen)
    if isinstance(expression, cst.Await):
        return _budget(analysis, expression.expression, depth + 1, seen)
    if isinstance(expression, cst.IfExp):
        return _budget(analysis, expression.body, depth + 1, seen) or _budget(analysis, expression.orelse, depth + 1, seen)
    if isinstance(expression, cst.Name):
        for value in analysis.assigned_values(expression):
            found = _budget(analysis, value, depth + 1, seen)
            if found is not None:
                return found
        return _mutation_budget(analysis, expression, depth, seen)
    if is_member(expression, ("self",)):
        for value in analysis.bound_values(expression):
            found = _budget(analysis, value, depth + 1, seen)
            if found is not None:
                return found
    return None


def _mutation_budget(analysis: ModuleAnalysis, name: cst.Name, depth: int, seen: set[int]) -> str | None:
    """A budget put into the object ``name`` holds after it was bound: a method call, an item or attribute set."""
    for assignment in analysis.assignments_of(name):
        for access in references_of(assignment):
            node = access.node
            # Walk up ``name[...][...]`` / ``name.a.b`` to the outermost item or attribute.
            parent = analysis.parent(node)
            while isinstance(parent, (cst.Subscript, cst.Attribute)) and parent.value is node:
                found = _accessor_budget(analysis, parent, depth, seen)
                if found is not None:
                    return found
                node, parent = parent, analysis.parent(parent)
    return None


def _accessor_budget(analysis: ModuleAnalysis, accessor: cst.Subscript | cst.Attribute, depth: int, seen: set[int]) -> str | None:
    parent = analysis.parent(accessor)
    if isinstance(accessor, cst.Attribute) and isinstance(parent, cst.Call) and parent.func is accessor:
        if accessor.attr.value in fw.ENGINE_SUBMIT_METHODS:
            return None  # the object is the engine, not the request
        return _args_budget(analysis, parent, depth, seen)  # params.update(max_tokens=1), params.init(**parameters)
    if not isinstance(parent, cst.AssignTarget):
        return None
    statement = analysis.parent(parent)
    if isinstance(accessor, cst.Attribute):
        key: object = accessor.attr.value
    else:
        index = accessor.slice[0].slice if len(accessor.slice) == 1 else None
        key = literal_value(index.value) if isinstance(index, cst.Index) else None
    if isinstance(key, str) and key in fw.TOKEN_BUDGET_KEYS:
        return key
    if isinstance(statement, cst.Assign):
        return _budget(analysis, statement.value, depth + 1, seen)
    return None


def _receiver_key(analysis: ModuleAnalysis, receiver: cst.BaseExpression) -> tuple | None:
    """Identifies the object ``receiver`` names across the file: a variable of one scope, ``self.<attr>`` of one class."""
    parts: list[str] = []
    while isinstance(receiver, cst.Attribute):
        parts.append(receiver.attr.value)
        receiver = receiver.value
    if not isinstance(receiver, cst.Name):
        return None
    path = tuple(reversed(parts))
    if receiver.value in ("self", "cls") and path:
        owner = analysis.method_owner(receiver)
        return ("member", id(owner), path) if owner is not None else None
    scope = analysis.scope_of(receiver)
    if scope is None:
        return None
    assignments = scope[receiver.value]
    if not assignments:
        return None
    # The scope that binds the name (a closure's variable belongs to the enclosing function).
    return ("name", id(next(iter(assignments)).scope), receiver.value, path)


def _engines(analysis: ModuleAnalysis) -> frozenset[tuple]:
    """Keys of the objects of this file that are handed a generation with a token budget."""
    store = analysis.__dict__.setdefault("_engine_cache", {})
    if "engines" not in store:
        keys = set()
        for call in analysis.nodes_of(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in fw.ENGINE_SUBMIT_METHODS and call_budget(analysis, call):
                key = _receiver_key(analysis, func.value)
                if key is not None:
                    keys.add(key)
        store["engines"] = frozenset(keys)
    return store["engines"]
