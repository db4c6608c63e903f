from __future__ import annotations

import libcst as cst

from gemlint.analysis.handlers import runs_per_request
from gemlint.analysis.module import terminal_name
from gemlint.analysis import frameworks as fw
from gemlint.analysis.triage import DefinesFunctions, NotTest, Spelled
from gemlint.diagnostics import Severity
from gemlint.rule import AnalysisRule

# Compilers and exporters, by qualified name: what each call does once it runs.
_COMPILERS = {
    "torch.compile": "compiles the model with TorchDynamo and Inductor",
    "torch.jit.script": "compiles the model to TorchScript",
    "torch.jit.trace": "traces the model to TorchScript",
    "torch.jit.trace_module": "traces the model to TorchScript",
    "torch.onnx.export": "exports the model to ONNX",
    "torch.onnx.dynamo_export": "exports the model to ONNX",
    "torch_tensorrt.compile": "builds a TensorRT engine",
    "torch_tensorrt.ts.compile": "builds a TensorRT engine",
    "torch_tensorrt.dynamo.compile": "builds a TensorRT engine",
}
# TensorRT's builder methods: the receiver is a ``tensorrt.Builder`` that is rarely resolvable by name, and
# no other library spells these methods.
_ENGINE_BUILDS = frozenset({"build_serialized_network", "build_engine"})
_CALL_NAMES = frozenset({name.rsplit(".", 1)[-1] for name in _COMPILERS}) | _ENGINE_BUILDS


class CompilePerRequest(AnalysisRule):
    code = "GEM503"
    name = "compile-per-request"
    severity = Severity.ERROR
    summary = "A model is compiled, traced, exported or built into a TensorRT engine inside a request handler, on every request."
    rationale = (
        "`torch.compile`, TorchScript scripting and tracing, ONNX export and TensorRT engine builds take seconds to "
        "minutes: they trace the Python code, optimise the graph and, for TensorRT, time candidate kernels. Run "
        "per request, every request pays that cost, and concurrent requests serialise on the compiler's global "
        "state. Compile once at start-up and serve the compiled module."
    )
    not_flagged = (
        "Compilation at module level, in `__init__`, in the framework's setup hooks (TorchServe `initialize`, KServe "
        "`load`, LitServe and Cog `setup`, Triton `initialize`) and in startup events.",
        "Helpers memoised with `functools.cache`/`lru_cache`, and results kept in an attribute or global filled only "
        "while empty (`if self._compiled is None:`).",
        "Export and build scripts: functions that are not request handlers, hooks, or helpers called only from them; "
        "test modules (`tests/`, `test_*.py`, `conftest.py`), whose apps and routes are built for the test.",
    )
    bad = """\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.nn.Linear(16, 4).eval()


@app.post("/predict")
def predict(features: list[float]):
    x = torch.tensor([features])
    traced = torch.jit.trace(model, x)
    with torch.inference_mode():
        return traced(x).tolist()
"""
    good = """\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.nn.Linear(16, 4).eval()
traced = torch.jit.trace(model, torch.zeros(1, 16))


@app.post("/predict")
def predict(features: list[float]):
    with torch.inference_mode():
        return traced(torch.tensor([features])).tolist()
"""
    benchmark = "Per-request latency of a small model traced inside the handler vs traced once at start-up, and traces run."
    tags = ("performance", "serving")
    notebooks = False
    notebooks_reason = (
        "Compiling per request needs a service: a notebook is run by hand, cell by cell, and a demo launched from"
        " a cell is a prototype, not the deployed handler."
    )
    precision = "high"
    # Only code that serves requests compiles per request: a web or serving framework must be imported.
    prefilter = fw.SERVING_IMPORT_MARKERS

    # A test module serves no request (see runs_per_request).
    syntax_gate = NotTest() & DefinesFunctions() & Spelled("calls", _CALL_NAMES)

    def visit_Call(self, node: cst.Call) -> None:
        name = terminal_name(node.func)
        if name not in _CALL_NAMES and not isinstance(node.func, cst.Name):
            return  # cheap syntactic gate before resolving names (a bare name may be an alias: `trace as jit_trace`)
        what = self._compiles(node, name)
        if what is None:
            return
        reason = runs_per_request(self.analysis, node)
        if reason is None:
            return
        text = self.analysis.module.code_for_node(node.func)
        self.report(
            node,
            f"`{text}(...)` {what} on every request ({reason}); do it once at start-up (module level, `__init__`, "
            "a setup hook or a cached helper) and reuse the result",
        )

    def _compiles(self, node: cst.Call, name: str) -> str | None:
        qualified = self.analysis.first_name_among(node.func, _COMPILERS)
        if qualified is not None:
            return _COMPILERS[qualified]
        if name in _ENGINE_BUILDS and isinstance(node.func, cst.Attribute):
            return "builds a TensorRT engine"
        return None
