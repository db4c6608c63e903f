from __future__ import annotations

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.handlers import kept_once, per_request_reason
from gemlint.analysis.module import dotted_name, terminal_name
from gemlint.analysis.triage import CallsProjectLoader, DefinesFunctions, Spelled
from gemlint.diagnostics import Severity
from gemlint.rule import AnalysisRule

# The last name of every loader call (qualified names decide; this only skips the other calls cheaply).
_LOADER_NAMES = frozenset(
    {"from_pretrained", "from_single_file"}
    | {name.rsplit(".", 1)[-1] for name in fw.MODEL_PRODUCERS.keys() | fw.MODEL_LOADERS | fw.PRETRAINED_CONSTRUCTORS}
    | {name.rsplit(".", 1)[-1] for name in fw.TOKENIZER_LOADERS}
)


class ModelLoadedPerRequest(AnalysisRule):
    code = "GEM502"
    name = "model-loaded-per-request"
    severity = Severity.ERROR
    summary = "A model, pipeline, ONNX Runtime session or tokenizer is loaded inside a request handler, on every request."
    rationale = (
        "Loading weights reads and deserialises hundreds of megabytes to gigabytes, allocates them on the "
        "device and, for ONNX Runtime, optimises the graph again: seconds of latency added to every request, "
        "memory spikes when requests overlap, and a cold-start cost paid forever. Load once when the process "
        "starts and reuse the object."
    )
    not_flagged = (
        "Loads at module level, in `__init__`, in the framework's setup hooks (TorchServe `initialize`, KServe `load`, "
        "LitServe `setup`, Triton `initialize`) and in startup events (`on_event(\"startup\")`, lifespan, `before_serving`).",
        "Helpers memoised with `functools.cache`/`lru_cache` (or cachetools/async-lru), and lazy loading into a global "
        "or attribute guarded by `if ... is None:`.",
        "Functions that are not request handlers, hooks, or helpers called only from them.",
        "Project classes whose construction loads nothing (their `__init__` only builds layers).",
    )
    bad = """\
from fastapi import FastAPI
from transformers import pipeline

app = FastAPI()


@app.post("/classify")
def classify(text: str):
    classifier = pipeline("sentiment-analysis")
    return classifier(text)
"""
    good = """\
from fastapi import FastAPI
from transformers import pipeline

app = FastAPI()
classifier = pipeline("sentiment-analysis")


@app.post("/classify")
def classify(text: str):
    return classifier(text)
"""
    benchmark = "Per-request latency of a small model served with a per-request load and with a load at startup."
    tags = ("performance", "serving")
    precision = "high"
    # Only code that serves requests can load per request: a web or serving framework must be imported.
    prefilter = fw.SERVING_IMPORT_MARKERS

    # A project class whose ``__init__`` (in another module) loads weights makes its construction a load.
    sees_project = True

    syntax_gate = DefinesFunctions() & (Spelled("calls", _LOADER_NAMES) | CallsProjectLoader())

    def visit_Call(self, node: cst.Call) -> None:
        name = terminal_name(node.func)
        how = ""
        if name in _LOADER_NAMES:
            what = self._load_kind(node)
        elif self.analysis.outside is not None and name is not None and name[:1].isupper():
            loads = self.analysis.outside.construction_loads(self.analysis, node.func)
            what, how = ("a model", f": {loads}") if loads is not None else (None, "")
        else:
            return  # cheap syntactic gate before resolving names
        if what is None:
            return
        function = self.analysis.enclosing_function(node)
        if function is None:
            return
        reason = per_request_reason(self.analysis, function)
        if reason is None or kept_once(self.analysis, node):
            return
        text = self.analysis.module.code_for_node(node.func)
        self.report(
            node,
            f"`{text}(...)` loads {what} on every request ({reason}){how}; load it once at startup "
            "(module level, `__init__`, a setup hook or a cached helper) and reuse it",
        )

    def _load_kind(self, node: cst.Call) -> str | None:
        names = self.analysis.qualified_names(node.func)
        if names & fw.TOKENIZER_LOADERS:
            return "a tokenizer"
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("from_pretrained", "from_single_file"):
            owner = self.analysis.qualified_names(func.value)
            label = (dotted_name(func.value) or "").rsplit(".", 1)[-1]
            if any(n.startswith(fw.FROM_PRETRAINED_LIBRARIES) for n in owner):
                return "a tokenizer" if "Tokenizer" in label else "a processor" if label.endswith(fw.NON_MODEL_PRETRAINED) else "a model"
            return None
        if names & fw.MODEL_LOADERS:
            return "a model"
        loaded = names & (fw.MODEL_PRODUCERS.keys() | fw.PRETRAINED_CONSTRUCTORS)
        if not loaded:
            return None  # constructing a project nn.Module or wrapping one (torch.compile) is not a load
        family = fw.MODEL_PRODUCERS.get(sorted(loaded)[0])
        return {"pipeline": "a pipeline", "onnxruntime": "an ONNX Runtime session"}.get(family or "", "a model")
