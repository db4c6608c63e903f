from __future__ import annotations

from typing import TYPE_CHECKING

from gemlint.analysis.triage import Spelled, is_production_path
from gemlint.diagnostics import Applicability, Edit, Fix, Severity
from gemlint.languages import Language
from gemlint.project.files import optimized_model_paths
from gemlint.rules.native_base import CrossLanguageRule

if TYPE_CHECKING:
    import libcst as cst

# The levels reported, as the C++ API and Python name them (see gemlint.native.ort and gemlint.analysis.ort_options).
_LEVELS = {"ORT_DISABLE_ALL": Severity.ERROR, "ORT_ENABLE_BASIC": Severity.NOTE}
_WHAT = {
    "ORT_DISABLE_ALL": "disables every graph optimization (no constant folding, no fusion, no layout optimization)",
    "ORT_ENABLE_BASIC": (
        "keeps only the basic graph optimizations (constant folding, redundant-node eliminations and simple "
        "fusions) and loses the extended fusions (attention, GELU, layer normalization, MatMul+Add) and the "
        "layout optimizations"
    ),
}


class OrtOptimizationDisabled(CrossLanguageRule):
    """Python through the LibCST visitor below (:mod:`gemlint.analysis.ort_options`), C and C++ through :meth:`check`
    (:mod:`gemlint.native.ort`): each imported where a file of its language is linted, so that a run over C++
    alone imports no LibCST."""

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
        "`create_calibrator` or `quantize_static`, or that make intermediate tensors outputs of the graph "
        "(`model.graph.output.append(...)`) to read them from the session. In C and C++: sessions run to read intermediate tensors (constant "
        "folding, shape inference, calibration), in a function named so or one that adds graph outputs "
        "(`graph->add_output()`) before running the model.",
        "In C and C++: options given, in the same function, to an execution provider that optimizes the graph "
        "itself (`AppendExecutionProvider_OpenVINO`, `AppendExecutionProvider(\"QNN\", ...)` or `\"SNPE\"`, the C "
        "API's `OrtSessionOptionsAppendExecutionProvider_OpenVINO` and `SessionOptionsAppendExecutionProvider`): "
        "OpenVINO's documentation asks for `ORT_DISABLE_ALL`, and the extended levels only rewrite nodes assigned "
        "to the CPU, CUDA and ROCm providers.",
        "Tests and benchmark or profiling scripts (`tests/`, `test_*.py`, `*_test.py`, `conftest.py`, `bench*`, "
        "`profil*` in the path, or a word of the file name that starts so: `run_benchmark.py`, `memory_profile.py`): the production-code notion of the GEM4xx rules.",
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
        from gemlint.analysis import ort_options  # LibCST's side: only when a Python file is linted

        root = self.context.config.root
        for found in ort_options.limited_levels(self.analysis, node, lambda: optimized_model_paths(root)):
            enable_all = found.enable_all
            fix = self.replace_fix(node.value, enable_all, "use ORT_ENABLE_ALL", Applicability.UNSAFE) if enable_all is not None else None
            self.report(
                node.value,
                f"`{found.level}` {_WHAT[found.level]} for an inference session; use ORT_ENABLE_ALL",
                severity=_LEVELS[found.level],
                fix=fix,
            )
