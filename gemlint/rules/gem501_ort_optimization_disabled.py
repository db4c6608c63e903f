from __future__ import annotations

import libcst as cst

from gemlint.analysis.module import argument, iter_subtree, literal_value
from gemlint.analysis.triage import Triage
from gemlint.diagnostics import Applicability, Edit, Fix, Severity
from gemlint.languages import Language
from gemlint.native import ort
from gemlint.rules.native_base import CrossLanguageRule
from gemlint.project.files import optimized_model_paths

_LEVEL = "GraphOptimizationLevel"
_PREFIXES = ("onnxruntime.", "onnxruntime.capi.onnxruntime_pybind11_state.", "onnxruntime.capi._pybind_state.")
_SESSIONS = frozenset({"onnxruntime.InferenceSession", "onnxruntime.capi.onnxruntime_inference_collection.InferenceSession"})
_LEVELS = {"ORT_DISABLE_ALL": Severity.ERROR, "ORT_ENABLE_BASIC": Severity.NOTE}


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
        "pays for the extra kernels and memory traffic. `ORT_ENABLE_BASIC` keeps only the basic rewrites "
        "(reported as a note). The C++ API (`options.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_DISABLE_ALL)`) "
        "and the C API (`api->SetSessionGraphOptimizationLevel(options, ORT_DISABLE_ALL)`) are checked the same way."
    )
    not_flagged = (
        "`ORT_ENABLE_EXTENDED` and `ORT_ENABLE_ALL`.",
        "Offline mode: options that set `optimized_model_filepath` / `SetOptimizedModelFilePath` (they export an "
        "optimized model), and sessions that load an already optimized model (`*.ort`, or a path that the project "
        "writes through `optimized_model_filepath`).",
        "Settings behind a flag (debugging a numerical difference): an `if` on a run-time condition, a conditional "
        "expression, an `#if`/`#ifdef` block, or a function named for debugging, profiling or benchmarking.",
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
    cross_file = True  # a session may load a model that another file exports
    markers = {Language.PYTHON: (("graph_optimization_level",),), Language.NATIVE: (("GraphOptimizationLevel",),)}
    prefilter = ("graph_optimization_level", "GraphOptimizationLevel")

    @classmethod
    def may_match_syntax(cls, triage: Triage) -> bool:
        return "graph_optimization_level" in triage.facts.assigned


    # -- C and C++ -----------------------------------------------------------------------------
    def check(self) -> None:
        document = self.context.document
        for found in ort.find(document, optimized_model_paths(self.context.config.root)):
            start, end = document.span(found.call)
            level_start, level_end = document.span(found.level_node)
            replacement = document.text_of(found.level_node).replace(found.level, "ORT_ENABLE_ALL")
            what = "disables every graph optimization" if found.level == "ORT_DISABLE_ALL" else "keeps only basic graph optimizations"
            self.report_at(
                start,
                end,
                f"`{found.level}` {what} (no fusion, no constant folding) for an inference session; use ORT_ENABLE_ALL",
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
        for name in self.analysis.qualified_names(expression):
            for prefix in _PREFIXES:
                for level in _LEVELS:
                    if name == f"{prefix}{_LEVEL}.{level}":
                        return level
        return None

    def _check(self, node: cst.Assign, options: cst.BaseExpression, level: str) -> None:
        if self.analysis.flag_guard(node) or self._offline(node, options):
            return
        fix = None
        if isinstance(node.value, cst.Attribute):
            fix = self.replace_fix(
                node.value, node.value.with_changes(attr=cst.Name("ORT_ENABLE_ALL")), "use ORT_ENABLE_ALL", Applicability.UNSAFE
            )
        what = "disables every graph optimization" if level == "ORT_DISABLE_ALL" else "keeps only basic graph optimizations"
        self.report(
            node.value,
            f"`{level}` {what} (no fusion, no constant folding) for an inference session; use ORT_ENABLE_ALL",
            severity=_LEVELS[level],
            fix=fix,
        )

    def _offline(self, node: cst.Assign, options: cst.BaseExpression) -> bool:
        """The options export an optimized model, or the sessions using them load one."""
        options_code = self.context.module.code_for_node(options)
        scope = self.analysis.enclosing_function(node) or self.context.module
        sessions = []
        for child in iter_subtree(scope):
            if isinstance(child, cst.Assign):
                for target in child.targets:
                    if (
                        isinstance(target.target, cst.Attribute)
                        and target.target.attr.value == "optimized_model_filepath"
                        and self.context.module.code_for_node(target.target.value) == options_code
                    ):
                        return True
            elif isinstance(child, cst.Call) and self.analysis.resolves_to(child.func, _SESSIONS):
                passed = argument(child, 1, "sess_options")
                if passed is not None and self.context.module.code_for_node(passed.value) == options_code:
                    sessions.append(child)
        if not sessions:
            return False
        return all(self._loads_optimized_model(session) for session in sessions)

    def _loads_optimized_model(self, session: cst.Call) -> bool:
        model = argument(session, 0, "path_or_bytes")
        path = literal_value(model.value) if model is not None else None
        if not isinstance(path, str):
            return False
        if path.endswith(".ort"):
            return True
        basename = path.replace("\\", "/").rsplit("/", 1)[-1]
        return basename in optimized_model_paths(self.context.config.root)
