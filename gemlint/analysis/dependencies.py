"""FastAPI's dependency injection: the function ``Depends(f)`` names, which FastAPI calls on every request to give
a route's parameter its value (once per request; ``use_cache`` shares the value within one request only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.analysis.module import ModuleAnalysis

DEPENDS = frozenset({"fastapi.Depends", "fastapi.params.Depends", "fastapi.param_functions.Depends"})
_ANNOTATED = frozenset({"typing.Annotated", "typing_extensions.Annotated"})


def dependency_of(analysis: "ModuleAnalysis", param: cst.Param) -> cst.BaseExpression | None:
    """The function of ``Depends(f)`` that FastAPI calls to give ``param`` its value (as its default, or in an
    ``Annotated[..., Depends(f)]`` annotation, written there or in a module-level alias), or None."""
    candidates: list[cst.BaseExpression] = [param.default] if param.default is not None else []
    annotation = param.annotation.annotation if param.annotation is not None else None
    if isinstance(annotation, cst.Name):
        annotation = next(iter(analysis.assigned_values(annotation)), None)  # `ModelDep = Annotated[...]`
    if isinstance(annotation, cst.Subscript) and analysis.resolves_to(annotation.value, _ANNOTATED):
        candidates.extend(element.slice.value for element in annotation.slice[1:] if isinstance(element.slice, cst.Index))
    for candidate in candidates:
        if isinstance(candidate, cst.Call) and analysis.resolves_to(candidate.func, DEPENDS):
            given = next((arg.value for arg in candidate.args if arg.keyword is None or arg.keyword.value == "dependency"), None)
            if given is not None:
                return given
    return None


def dependents_of(analysis: "ModuleAnalysis", function: cst.FunctionDef) -> list[cst.FunctionDef]:
    """The functions of the module (routes, other dependencies) with a parameter that ``Depends(function)`` gives,
    ``function`` being a function of the module's top level."""
    if analysis.parent(function) is not analysis.module or "Depends" not in analysis.context.text:
        return []
    name = function.name.value
    found = []
    for candidate in analysis.nodes_of(cst.FunctionDef):
        if candidate is function or name not in analysis.module.code_for_node(candidate.params):
            continue  # an alias's annotation (`ModelDep = Annotated[...]`) is not read: a module-level name
        for param in (*candidate.params.posonly_params, *candidate.params.params, *candidate.params.kwonly_params):
            given = dependency_of(analysis, param)
            if isinstance(given, cst.Name) and given.value == name and analysis.module_functions.get(name) is function:
                found.append(candidate)
                break
    return found
