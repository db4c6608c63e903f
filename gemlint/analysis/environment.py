"""Environment variables set from Python code: ``os.environ[...] = v``, ``setdefault``, ``update``, ``os.putenv``."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gemlint.analysis.module import NOT_LITERAL, ModuleAnalysis, literal_value, positional_arg, terminal_name

_ENVIRON = frozenset({"os.environ"})
_PUTENV = frozenset({"os.putenv"})


@dataclass(frozen=True)
class EnvWrite:
    variable: str
    value: object  # the literal value, or NOT_LITERAL
    node: cst.CSTNode  # what to report


def env_writes(analysis: ModuleAnalysis, node: cst.CSTNode) -> list[EnvWrite]:
    """The environment variables that the statement or call ``node`` sets, with literal names only."""
    writes: list[EnvWrite] = []
    if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Subscript) for t in node.targets):
        for target in node.targets:
            variable = _environ_subscript(analysis, target.target)
            if variable is not None:
                writes.append(EnvWrite(variable, literal_value(node.value), node))
    elif isinstance(node, cst.Call) and terminal_name(node.func) in ("setdefault", "update", "putenv"):
        func = node.func
        if isinstance(func, cst.Attribute) and analysis.resolves_to(func.value, _ENVIRON):
            method = func.attr.value
            if method == "setdefault":
                writes.extend(_pair(node, node))
            elif method == "update":
                writes.extend(_update(node))
        elif analysis.resolves_to(func, _PUTENV):
            writes.extend(_pair(node, node))
    return writes


def _environ_subscript(analysis: ModuleAnalysis, target: cst.BaseExpression) -> str | None:
    if not isinstance(target, cst.Subscript) or not analysis.resolves_to(target.value, _ENVIRON):
        return None
    if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return None
    key = literal_value(target.slice[0].slice.value)
    return key if isinstance(key, str) else None


def _pair(call: cst.Call, report: cst.CSTNode) -> list[EnvWrite]:
    key_arg, value_arg = positional_arg(call, 0), positional_arg(call, 1)
    if key_arg is None:
        return []
    key = literal_value(key_arg.value)
    if not isinstance(key, str):
        return []
    value = literal_value(value_arg.value) if value_arg is not None else NOT_LITERAL
    return [EnvWrite(key, value, report)]


def _update(call: cst.Call) -> list[EnvWrite]:
    writes = []
    for arg in call.args:
        if arg.keyword is not None:
            writes.append(EnvWrite(arg.keyword.value, literal_value(arg.value), call))
        elif isinstance(arg.value, cst.Dict) and not arg.star:
            for element in arg.value.elements:
                if isinstance(element, cst.DictElement):
                    key = literal_value(element.key)
                    if isinstance(key, str):
                        writes.append(EnvWrite(key, literal_value(element.value), call))
    return writes


def asks_for_determinism(analysis: ModuleAnalysis, node: cst.CSTNode, determinism_variable: str) -> bool:
    """The function around ``node`` (or module-level code) asks for deterministic kernels: it calls
    ``torch.use_deterministic_algorithms(True)`` or sets ``determinism_variable`` (``CUBLAS_WORKSPACE_CONFIG``)."""
    scope = analysis.enclosing_function(node) or analysis.module
    for child in analysis.subtree(scope):
        if isinstance(child, cst.Call) and terminal_name(child.func) == "use_deterministic_algorithms":
            flag = child.args[0].value if child.args else None
            if flag is not None and literal_value(flag) is True:
                return True
        if isinstance(child, (cst.Assign, cst.Call)) and any(write.variable == determinism_variable for write in env_writes(analysis, child)):
            return True
    return False
