"""GEM501 in Python: an assignment of ``graph_optimization_level`` that disables ONNX Runtime's graph
optimizations (or limits them to basic) for a session that serves inference.

Left alone, as in C and C++ (:mod:`gemlint.native.ort`): non-production code and settings behind a flag;
calibration and quantization tooling, which needs the graph as exported; offline optimization (the same options
set ``optimized_model_filepath``, or every session given them loads an optimized model: ``*.ort``, or a file the
project writes through ``optimized_model_filepath``); and sessions that are only read for their metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import libcst as cst

from gemlint.analysis.module import ModuleAnalysis, argument, iter_subtree, literal_value
from gemlint.analysis.scopes import references_of
from gemlint.analysis.syntax import is_member, terminal_name
from gemlint.native.ort import LEVELS  # the same enumerators as the C and C++ APIs'

LEVEL_CLASS = "GraphOptimizationLevel"
_PREFIXES = ("onnxruntime.", "onnxruntime.capi.onnxruntime_pybind11_state.", "onnxruntime.capi._pybind_state.")
_SESSIONS = frozenset({"onnxruntime.InferenceSession", "onnxruntime.capi.onnxruntime_inference_collection.InferenceSession"})
# Session methods that run the model, and those that only read what the model declares.
_RUNS = frozenset({"run", "run_with_iobinding", "run_with_ort_values", "run_with_ortvaluevector", "run_async", "io_binding"})
_METADATA = frozenset(
    {"get_inputs", "get_outputs", "get_modelmeta", "get_overridable_initializers", "get_providers", "get_provider_options", "get_session_options"}
)
# Calibration needs the graph as exported: optimizations would fuse away the tensors it records.
_QUANTIZATION_MODULES = frozenset({"onnxruntime.quantization"})
_CALIBRATOR_BASES = frozenset({"CalibrationDataReader", "CalibraterBase"})
_CALIBRATION_CALLS = frozenset({"create_calibrator", "quantize_static"})


@dataclass(frozen=True)
class LimitedLevel:
    """``assignment`` sets ``level`` (one of :data:`LEVELS`) on options of a session that serves inference;
    ``enable_all`` is its value spelled with ``ORT_ENABLE_ALL`` (None where the value is not an attribute)."""

    assignment: cst.Assign
    level: str
    enable_all: cst.BaseExpression | None


def limited_levels(analysis: ModuleAnalysis, node: cst.Assign, optimized_paths: Callable[[], Collection[str]]) -> list[LimitedLevel]:
    """One :class:`LimitedLevel` for each target of ``node`` that is a ``graph_optimization_level`` attribute,
    where the level is disabled or basic and the options serve inference (``optimized_paths()``: the basenames
    the project writes through ``optimized_model_filepath``, asked only where a session's model path is read)."""
    targets = [t.target for t in node.targets if isinstance(t.target, cst.Attribute) and t.target.attr.value == "graph_optimization_level"]
    if not targets:
        return []
    level = _level(analysis, node.value)
    if level is None:
        return []
    enable_all = node.value.with_changes(attr=cst.Name("ORT_ENABLE_ALL")) if isinstance(node.value, cst.Attribute) else None
    return [LimitedLevel(node, level, enable_all) for target in targets if _serves_inference(analysis, node, target.value, optimized_paths)]


def _level(analysis: ModuleAnalysis, expression: cst.BaseExpression) -> str | None:
    for name in analysis.names_with_prefix(expression, _PREFIXES):
        for prefix in _PREFIXES:
            for level in LEVELS:
                if name == f"{prefix}{LEVEL_CLASS}.{level}":
                    return level
    return None


def _serves_inference(analysis: ModuleAnalysis, node: cst.Assign, options: cst.BaseExpression, optimized_paths: Callable[[], Collection[str]]) -> bool:
    if not analysis.is_production or analysis.flag_guard(node) or _calibration(analysis, node):
        return False
    sessions = _sessions(analysis, node, options)
    if _offline(analysis, node, options, sessions, optimized_paths):
        return False
    return not sessions or any(_runs_inference(analysis, session) for session in sessions)  # else: read for metadata


def _sessions(analysis: ModuleAnalysis, node: cst.Assign, options: cst.BaseExpression) -> list[cst.Call]:
    """The ``InferenceSession(...)`` calls given these options in the same function (or module level)."""
    module = analysis.module
    options_code = module.code_for_node(options)
    scope = analysis.enclosing_function(node) or module
    sessions = []
    for child in iter_subtree(scope):
        if isinstance(child, cst.Call) and analysis.resolves_to(child.func, _SESSIONS):
            passed = argument(child, 1, "sess_options")
            if passed is not None and module.code_for_node(passed.value) == options_code:
                sessions.append(child)
    return sessions


def _offline(
    analysis: ModuleAnalysis, node: cst.Assign, options: cst.BaseExpression, sessions: list[cst.Call], optimized_paths: Callable[[], Collection[str]]
) -> bool:
    """The options export an optimized model, or the sessions using them load one."""
    module = analysis.module
    options_code = module.code_for_node(options)
    scope = analysis.enclosing_function(node) or module
    for child in iter_subtree(scope):
        if isinstance(child, cst.Assign):
            for target in child.targets:
                if (
                    isinstance(target.target, cst.Attribute)
                    and target.target.attr.value == "optimized_model_filepath"
                    and module.code_for_node(target.target.value) == options_code
                ):
                    return True
    if not sessions:
        return False
    return all(_loads_optimized_model(session, optimized_paths) for session in sessions)


def _calibration(analysis: ModuleAnalysis, node: cst.Assign) -> bool:
    """Calibration or quantization tooling."""
    if analysis.imports_any(_QUANTIZATION_MODULES):
        return True
    owner = analysis.method_owner(node)
    if owner is not None and any(terminal_name(base.value) in _CALIBRATOR_BASES for base in owner.bases):
        return True
    scopes = [scope for scope in (analysis.enclosing_function(node), owner) if scope is not None] or [analysis.module]
    return any(
        isinstance(child, cst.Call) and (terminal_name(child.func) in _CALIBRATION_CALLS or _adds_graph_outputs(child))
        for scope in scopes
        for child in analysis.subtree(scope, into_scopes=True)
    )


def _adds_graph_outputs(call: cst.Call) -> bool:
    """``model.graph.output.append(...)`` / ``.extend(...)``: intermediate tensors made outputs of the model, to be
    read from the session run on it (an activation audit, a calibration written out), whose names the graph
    optimizations would fuse away."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert")):
        return False
    outputs = func.value
    return (
        isinstance(outputs, cst.Attribute)
        and outputs.attr.value == "output"
        and isinstance(outputs.value, cst.Attribute)
        and outputs.value.attr.value == "graph"
    )


def _runs_inference(analysis: ModuleAnalysis, session: cst.Call) -> bool:
    """Whether a session is run, or escapes to code that may run it."""
    parent = analysis.parent(session)
    if isinstance(parent, cst.Attribute):  # InferenceSession(...).get_inputs()
        return parent.attr.value in _RUNS
    if isinstance(parent, cst.Expr):
        return False  # built and dropped
    if not isinstance(parent, cst.Assign):
        return True  # returned, passed on, put into a container
    for target in (t.target for t in parent.targets):
        if isinstance(target, cst.Name):
            uses = [access.node for assignment in analysis.assignments_of(target) for access in references_of(assignment)]
            held = analysis.enclosing_function(target) is None  # module level: importable by others
        elif is_member(target, ("self",)) and analysis.method_owner(target) is not None:
            owner = analysis.method_owner(target)
            uses = [use for use in analysis.subtree(owner, into_scopes=True)
                    if is_member(use, ("self",)) and use.attr.value == target.attr.value and use is not target]
            held = True  # other methods, or the object's users, may run it
        else:
            return True  # stored into a container or another object
        kinds = [_use_kind(analysis, use) for use in uses]
        if "runs" in kinds or (held and "metadata" not in kinds):
            return True
    return False


def _use_kind(analysis: ModuleAnalysis, use: cst.CSTNode) -> str:
    """``runs`` (run, or handed on), ``metadata`` (a metadata read) or ``other`` (rebinding, a comparison)."""
    parent = analysis.parent(use)
    if isinstance(parent, cst.Attribute) and parent.value is use:
        name = parent.attr.value
        return "runs" if name in _RUNS else "metadata" if name in _METADATA else "other"
    if isinstance(parent, cst.AssignTarget) or isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.Del)):
        return "other"
    return "runs"


def _loads_optimized_model(session: cst.Call, optimized_paths: Callable[[], Collection[str]]) -> bool:
    model = argument(session, 0, "path_or_bytes")
    path = literal_value(model.value) if model is not None else None
    if not isinstance(path, str):
        return False
    if path.endswith(".ort"):
        return True
    basename = path.replace("\\", "/").rsplit("/", 1)[-1]
    return basename in optimized_paths()
