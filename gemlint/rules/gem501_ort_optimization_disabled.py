from __future__ import annotations

import libcst as cst

from gemlint.analysis.module import argument, iter_subtree, literal_value
from gemlint.analysis.triage import is_production_path
from gemlint.analysis.syntax import is_member, terminal_name
from gemlint.analysis.triage import Spelled
from gemlint.diagnostics import Applicability, Edit, Fix, Severity
from gemlint.languages import Language
from gemlint.rules.native_base import CrossLanguageRule
from gemlint.project.files import optimized_model_paths

_LEVEL = "GraphOptimizationLevel"
_PREFIXES = ("onnxruntime.", "onnxruntime.capi.onnxruntime_pybind11_state.", "onnxruntime.capi._pybind_state.")
_SESSIONS = frozenset({"onnxruntime.InferenceSession", "onnxruntime.capi.onnxruntime_inference_collection.InferenceSession"})
_LEVELS = {"ORT_DISABLE_ALL": Severity.ERROR, "ORT_ENABLE_BASIC": Severity.NOTE}
_WHAT = {
    "ORT_DISABLE_ALL": "disables every graph optimization (no constant folding, no fusion, no layout optimization)",
    "ORT_ENABLE_BASIC": (
        "keeps only the basic graph optimizations (constant folding, redundant-node eliminations and simple "
        "fusions) and loses the extended fusions (attention, GELU, layer normalization, MatMul+Add) and the "
        "layout optimizations"
    ),
}
# Session methods that run the model, and those that only read what the model declares.
_RUNS = frozenset({"run", "run_with_iobinding", "run_with_ort_values", "run_with_ortvaluevector", "run_async", "io_binding"})
_METADATA = frozenset(
    {"get_inputs", "get_outputs", "get_modelmeta", "get_overridable_initializers", "get_providers", "get_provider_options", "get_session_options"}
)
# Calibration needs the graph as exported: optimizations would fuse away the tensors it records.
_QUANTIZATION_MODULES = frozenset({"onnxruntime.quantization"})
_CALIBRATOR_BASES = frozenset({"CalibrationDataReader", "CalibraterBase"})
_CALIBRATION_CALLS = frozenset({"create_calibrator", "quantize_static"})


class OrtOptimizationDisabled(CrossLanguageRule):
    """Python through the LibCST visitor below, C and C++ through :meth:`check` (:mod:`gemlint.native.ort`)."""

    code = "GEM501"
    name = "ort-optimization-disabled"
    severity = Severity.ERROR
    example_language = Language.PYTHON
    summary = "ONNX Runtime graph optimizations are disabled (or limited to basic) for an inference session, in Python or the C/C++ API."
    rationale = (
        "With `ORT_DISABLE_ALL` ONNX Runtime executes the exported graph node by node: no constant folding, "
        "no operator fusion (attention, GELU, layer norm, MatMul+Add), no layout optimisation. Every request "
        "pays for the extra kernels and memory traffic. `ORT_ENABLE_BASIC` (reported as a note) keeps constant "
        "folding, redundant-node eliminations and simple fusions, and loses the extended fusions (attention, GELU, "
        "layer normalization, MatMul+Add) and the layout optimizations. The C++ API (`options.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_DISABLE_ALL)`) "
        "and the C API (`api->SetSessionGraphOptimizationLevel(options, ORT_DISABLE_ALL)`) are checked the same way."
    )
    not_flagged = (
        "`ORT_ENABLE_EXTENDED` and `ORT_ENABLE_ALL`.",
        "Offline mode: options that set `optimized_model_filepath` / `SetOptimizedModelFilePath` (they export an "
        "optimized model), and sessions that load an already optimized model (`*.ort`, or a path that the project "
        "writes through `optimized_model_filepath`).",
        "Settings behind a flag (debugging a numerical difference): an `if` on a run-time condition, a conditional "
        "expression, an `#if`/`#ifdef` block, or a function named for debugging, profiling or benchmarking.",
        "Sessions that run no inference: every session built with the options in the same function (or script) "
        "is only read for its inputs, outputs or metadata (`get_inputs`, `get_outputs`, `get_modelmeta`, ...). "
        "A session counts as running inference when it is run (`.run`, `run_with_iobinding`, `io_binding`, ...), "
        "returned, passed to a call, stored in an attribute or container, or held by `self` or at module level "
        "(where other code can run it).",
        "Calibration and quantization tooling, which disables optimizations on purpose so that the intermediate "
        "tensors it records keep their names: modules that import `onnxruntime.quantization`, methods of a class "
        "derived from `CalibrationDataReader` or `CalibraterBase`, and functions or classes that call "
        "`create_calibrator` or `quantize_static`. In C and C++: sessions run to read intermediate tensors (constant "
        "folding, shape inference, calibration), in a function named so or one that adds graph outputs "
        "(`graph->add_output()`) before running the model.",
        "In C and C++: options given, in the same function, to an execution provider that optimizes the graph "
        "itself (`AppendExecutionProvider_OpenVINO`, `AppendExecutionProvider(\"QNN\", ...)` or `\"SNPE\"`, the C "
        "API's `OrtSessionOptionsAppendExecutionProvider_OpenVINO` and `SessionOptionsAppendExecutionProvider`): "
        "OpenVINO's documentation asks for `ORT_DISABLE_ALL`, and the extended levels only rewrite nodes assigned "
        "to the CPU, CUDA and ROCm providers.",
        "Tests and benchmark or profiling scripts (`tests/`, `test_*.py`, `*_test.py`, `conftest.py`, `bench*`, "
        "`profil*` in the path): the production-code notion of the GEM4xx rules.",
    )
    bad = """\
import onnxruntime as ort

options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
session = ort.InferenceSession("model.onnx", sess_options=options)
"""
    good = """\
import onnxruntime as ort

options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
session = ort.InferenceSession("model.onnx", sess_options=options)
"""
    fix = Applicability.UNSAFE
    fix_note = (
        "The fix sets `ORT_ENABLE_ALL`. It is unsafe because fused kernels can change floating-point results "
        "in the last bits, and because optimizations are sometimes disabled on purpose to work around a bug "
        "in one of them."
    )
    benchmark = "Graph node count after ONNX Runtime optimization and latency, ORT_DISABLE_ALL vs ORT_ENABLE_ALL."
    tags = ("performance", "onnxruntime")
    notebooks = False
    notebooks_reason = (
        "A notebook that turns ONNX Runtime's graph optimizations off is usually inspecting the graph or "
        "preparing quantization; the latency cost is a deployed session's."
    )
    cross_file = True  # a session may load a model that another file exports
    markers = {Language.PYTHON: (("graph_optimization_level",),), Language.NATIVE: (("GraphOptimizationLevel",),)}
    prefilter = ("graph_optimization_level", "GraphOptimizationLevel")

    syntax_gate = Spelled("assigned", {"graph_optimization_level"})

    # -- C and C++ -----------------------------------------------------------------------------
    def check(self) -> None:
        if not is_production_path(self.context.relative_path):
            return  # tests and benchmarks compare optimization levels on purpose
        document = self.context.document
        from gemlint.native import ort  # the C++ API's reading: only when a native file is linted

        for found in ort.find(document, optimized_model_paths(self.context.config.root)):
            start, end = document.span(found.call)
            level_start, level_end = document.span(found.level_node)
            replacement = document.text_of(found.level_node).replace(found.level, "ORT_ENABLE_ALL")
            self.report_at(
                start,
                end,
                f"`{found.level}` {_WHAT[found.level]} for an inference session; use ORT_ENABLE_ALL",
                severity=_LEVELS[found.level],
                fix=Fix((Edit(level_start, level_end, replacement),), Applicability.UNSAFE, "use ORT_ENABLE_ALL"),
            )

    # -- Python ------------------------------------------------------------------------------------

    def visit_Assign(self, node: cst.Assign) -> None:
        if not any(
            isinstance(t.target, cst.Attribute) and t.target.attr.value == "graph_optimization_level" for t in node.targets
        ):
            return
        level = self._level(node.value)
        if level is None:
            return
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "graph_optimization_level":
                self._check(node, target.target.value, level)

    def _level(self, expression: cst.BaseExpression) -> str | None:
        for name in self.analysis.names_with_prefix(expression, _PREFIXES):
            for prefix in _PREFIXES:
                for level in _LEVELS:
                    if name == f"{prefix}{_LEVEL}.{level}":
                        return level
        return None

    def _check(self, node: cst.Assign, options: cst.BaseExpression, level: str) -> None:
        if not self.analysis.is_production or self.analysis.flag_guard(node) or self._calibration(node):
            return
        sessions = self._sessions(node, options)
        if self._offline(node, options, sessions):
            return
        if sessions and not any(self._runs_inference(session) for session in sessions):
            return  # only read for names and metadata
        fix = None
        if isinstance(node.value, cst.Attribute):
            fix = self.replace_fix(
                node.value, node.value.with_changes(attr=cst.Name("ORT_ENABLE_ALL")), "use ORT_ENABLE_ALL", Applicability.UNSAFE
            )
        self.report(
            node.value,
            f"`{level}` {_WHAT[level]} for an inference session; use ORT_ENABLE_ALL",
            severity=_LEVELS[level],
            fix=fix,
        )

    def _sessions(self, node: cst.Assign, options: cst.BaseExpression) -> list[cst.Call]:
        """The ``InferenceSession(...)`` calls given these options in the same function (or module level)."""
        options_code = self.context.module.code_for_node(options)
        scope = self.analysis.enclosing_function(node) or self.context.module
        sessions = []
        for child in iter_subtree(scope):
            if isinstance(child, cst.Call) and self.analysis.resolves_to(child.func, _SESSIONS):
                passed = argument(child, 1, "sess_options")
                if passed is not None and self.context.module.code_for_node(passed.value) == options_code:
                    sessions.append(child)
        return sessions

    def _offline(self, node: cst.Assign, options: cst.BaseExpression, sessions: list[cst.Call]) -> bool:
        """The options export an optimized model, or the sessions using them load one."""
        options_code = self.context.module.code_for_node(options)
        scope = self.analysis.enclosing_function(node) or self.context.module
        for child in iter_subtree(scope):
            if isinstance(child, cst.Assign):
                for target in child.targets:
                    if (
                        isinstance(target.target, cst.Attribute)
                        and target.target.attr.value == "optimized_model_filepath"
                        and self.context.module.code_for_node(target.target.value) == options_code
                    ):
                        return True
        if not sessions:
            return False
        return all(self._loads_optimized_model(session) for session in sessions)

    def _calibration(self, node: cst.Assign) -> bool:
        """Calibration or quantization tooling (see ``not_flagged``)."""
        if self.analysis.imports_any(_QUANTIZATION_MODULES):
            return True
        owner = self.analysis.method_owner(node)
        if owner is not None and any(terminal_name(base.value) in _CALIBRATOR_BASES for base in owner.bases):
            return True
        scopes = [scope for scope in (self.analysis.enclosing_function(node), owner) if scope is not None]
        return any(
            isinstance(child, cst.Call) and terminal_name(child.func) in _CALIBRATION_CALLS
            for scope in scopes
            for child in self.analysis.subtree(scope, into_scopes=True)
        )

    def _runs_inference(self, session: cst.Call) -> bool:
        """Whether a session is run, or escapes to code that may run it (see ``not_flagged``)."""
        parent = self.analysis.parent(session)
        if isinstance(parent, cst.Attribute):  # InferenceSession(...).get_inputs()
            return parent.attr.value in _RUNS
        if isinstance(parent, cst.Expr):
            return False  # built and dropped
        if not isinstance(parent, cst.Assign):
            return True  # returned, passed on, put into a container
        for target in (t.target for t in parent.targets):
            if isinstance(target, cst.Name):
                uses = [access.node for assignment in self.analysis.assignments_of(target) for access in assignment.references]
                held = self.analysis.enclosing_function(target) is None  # module level: importable by others
            elif is_member(target, ("self",)) and self.analysis.method_owner(target) is not None:
                owner = self.analysis.method_owner(target)
                uses = [use for use in self.analysis.subtree(owner, into_scopes=True)
                        if is_member(use, ("self",)) and use.attr.value == target.attr.value and use is not target]
                held = True  # other methods, or the object's users, may run it
            else:
                return True  # stored into a container or another object
            kinds = [self._use_kind(use) for use in uses]
            if "runs" in kinds or (held and "metadata" not in kinds):
                return True
        return False

    def _use_kind(self, use: cst.CSTNode) -> str:
        """``runs`` (run, or handed on), ``metadata`` (a metadata read) or ``other`` (rebinding, a comparison)."""
        parent = self.analysis.parent(use)
        if isinstance(parent, cst.Attribute) and parent.value is use:
            name = parent.attr.value
            return "runs" if name in _RUNS else "metadata" if name in _METADATA else "other"
        if isinstance(parent, cst.AssignTarget) or isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.Del)):
            return "other"
        return "runs"

    def _loads_optimized_model(self, session: cst.Call) -> bool:
        model = argument(session, 0, "path_or_bytes")
        path = literal_value(model.value) if model is not None else None
        if not isinstance(path, str):
            return False
        if path.endswith(".ort"):
            return True
        basename = path.replace("\\", "/").rsplit("/", 1)[-1]
        return basename in optimized_model_paths(self.context.config.root)
