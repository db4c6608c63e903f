from __future__ import annotations

from functools import cached_property

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.dependencies import dependency_of
from gemlint.analysis.handlers import STREAMLIT_RERUN, called_while_empty, is_cached, kept_or_keyed, runs_per_request
from gemlint.analysis.loads import LOADER_NAMES, WEIGHT_KEYWORDS, load_kind, may_load
from gemlint.analysis.module import terminal_name
from gemlint.analysis.syntax import SCOPE_NODES
from gemlint.analysis.triage import PROJECT_CONTEXT, CallsProjectLoader, DefinesFunctions, Imports, NotTest, Spelled
from gemlint.diagnostics import Severity
from gemlint.rule import AnalysisRule

class ModelLoadedPerRequest(AnalysisRule):
    code = "GEM502"
    name = "model-loaded-per-request"
    severity = Severity.ERROR
    summary = (
        "A model, pipeline, ONNX Runtime session, TensorRT engine or tokenizer is loaded inside a request handler (a "
        "Gradio callback, a Streamlit script's module level, a chat bot's or Socket.IO server's message handler, a Celery task), on every request or job."
    )
    rationale = (
        "Loading weights reads and deserialises hundreds of megabytes to gigabytes, allocates them on the "
        "device and, for ONNX Runtime, optimises the graph again: seconds of latency added to every request, "
        "memory spikes when requests overlap, and a cold-start cost paid forever. Load once when the process "
        "starts and reuse the object. A helper that loads, of this file or another module, is reported at its load "
        "when only requests call it, and at each per-request call when it also runs at start-up (the same helper "
        "building the app's model once and a request's model on every call). A torchvision or timm model built with "
        "its pretrained weights (`resnet50(weights=ResNet50_Weights.DEFAULT)`, `pretrained=True`) is a load too: the "
        "weights are read from the hub's cache, or downloaded; so is a TensorFlow SavedModel read (`tf.saved_model.load`, "
        "a TF Hub module's `hub.load` or `hub.KerasLayer`); so is a Segment Anything (or SAM 2) builder given a "
        "checkpoint (a builder of `sam_model_registry` called with `checkpoint=path`). Building a project object is a "
        "load when its `__init__` loads (a project helper that reads the tensors its `load_state_dict` takes "
        "included: `self.net.load_state_dict(pretrained_state(name))`), or builds (however deep) a project object "
        "whose `__init__` does, or calls a loading method of a project object it keeps (`self.encoder.load(path)`); "
        "a load it keeps "
        "only in the new instance (`if self.net is None:` in a method its `__init__` calls) runs again for each "
        "object. FastAPI runs a route's dependencies (`model = Depends(get_model)`) on every request, as a call: a "
        "dependency that loads is reported at its load, or at the `Depends(...)` where it also runs outside requests."
    )
    not_flagged = (
        "A retry of a load (the same loader called again in an `except` handler of the `try` that calls it, with other "
        "arguments or another checkpoint): the first attempt is reported, and loading once fixes both.",
        "Loads at module level, in `__init__`, in the framework's setup hooks (TorchServe `initialize`, KServe `load`, "
        "LitServe `setup`, Triton `initialize`) and in startup events (`on_event(\"startup\")`, lifespan, `before_serving`).",
        "Helpers memoised with `functools.cache`/`lru_cache` (or cachetools/async-lru) or cached by Streamlit "
        "(`st.cache_resource`, `st.cache_data`), and lazy loading into a global or attribute guarded by `if ... is None:` "
        "or `if key not in self.cache:` (the load bound to a local that the next statements store there counts too), "
        "also in a helper of another module the handler calls (`if SESSION is not None: ... else: SESSION = ...`), and "
        "a cache lookup that returns what it finds and stores what it builds (`cached = MODELS.get(name)`, `if cached "
        "is not None: return cached`, then `MODELS[name] = model`, or a cache object's `MODELS.set(name, model)`), and a result made once and kept on disk under a fixed name (`if os.path.exists(\"grid.png\"): return`, then the load and a write; a name the request chooses makes one per request). A global is any name module-level code assigns, in "
        "its `if`, `try` and `with` blocks too (a cache the `__main__` block makes: `if samplers[name] is None:`).",
        "A load in a branch of a helper that the helper's flags choose (`if on_cpu:`, `if not fallback:`) where every "
        "call from request code in the file passes a literal, or leaves a default, that rules the branch out; and one "
        "in a branch the function's own switch rules out (`classify = False`, then `if classify:`, as YOLOv5's "
        "`detect.py` ships its second-stage classifier).",
        "A reload keyed by a setting the instance keeps: the load runs only where the request asks for another "
        "checkpoint or precision than the one held (`if version != self.version:` that then sets `self.version`, or "
        "a module-level object's setting, `if name != ci.config.caption_model_name:` that sets it and calls the "
        "object's loader, or "
        "a flag only such branches raise, or a return before the load when they are the same: `if model.state_path == "
        "path: return`, then `model.state_path = path`).",
        "Training modules (`training-paths`: by default `**/train*.py`, `**/train/**`, `**/training/**`), whose "
        "buttons and routes load what they train or convert.",
        "Functions that are not request handlers, hooks, or helpers called only from them; test modules (`tests/`, "
        "`test_*.py`, `conftest.py`), whose apps and routes are built for the test and serve no request.",
        "A torchvision or timm model built with random weights (`weights=None`, `pretrained=False`), or with a flag "
        "passed on (`pretrained=args.pretrained`), which may be off.",
        "Project classes whose construction loads nothing (their `__init__` only builds layers), and project "
        "functions of other modules (a class's own `from_pretrained` among them, with the class's helpers it calls) "
        "that load no model, to return or to run (`torch.load` or safetensors' `load_file` alone may read data: a helper "
        "counts as a load when it also puts the weights into a model with `load_state_dict`, or calls a model "
        "loader).",
        "A load that is a default for a caller that passes no model (`if model is None: model = load()`, on a "
        "parameter): how often it runs depends on the callers, which pass one when they have it.",
        "A function named as a setup hook (`load`, `setup`, `load_model`, or in an RPC's camel case `LoadModel`), "
        "unless it is handed to a Gradio app's `load` event, which runs it each time a visitor opens the page (a "
        "\"Load\" button's click loads because the user asked).",
        "A route that keeps the model it loads in the app's state for the other routes and does not run it "
        "(an admin's `POST /config/update` setting `request.app.state.whisper = make_whisper(name)`): it switches "
        "the model the service runs; also where a helper, of this file or another module, loads the model and "
        "returns it. A route that keeps only what a helper computed with a model it loaded still loads per request.",
        "A route or RPC named for what it does to a model (`export_model`, `UnloadModel`, `switch_checkpoint`, `upload_model`, "
        "`merge_lora`), or for measuring one (`benchmark`, `profile_model`, an RPC's `RunBenchmark`): it loads because that is "
        "what its caller asks of it, not to serve a prediction.",
        "`torch.load` of what the request sends: `io.BytesIO` of its body, a Gradio or Streamlit upload, a parameter "
        "typed as an uploaded file (Cog's `Path` and `File` inputs, FastAPI's `UploadFile`), also as `str(image)`.",
        "`torch.load` of a saved dictionary read for its entries (`saved[\"name\"] + saved[\"notes\"]`, its tensors "
        "listed or copied out), in a function that puts no weights into a model: data the user asked for, not a "
        "model; a value called, handed to a call, returned or kept is still a load. A checkpoint read in a function "
        "that writes one and runs no model (weights merged or converted, then `torch.save`) is a job the user asked for.",
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
    notebooks = False
    notebooks_reason = (
        "Loading per request needs a service: a notebook is run by hand, cell by cell, and a demo launched from a"
        " cell is a prototype, not the deployed handler."
    )
    precision = "high"
    # Only code that serves requests can load per request: a web or serving framework, a demo-app framework
    # whose callbacks (Gradio) or script (Streamlit) run per interaction, a chat-bot framework whose handlers
    # run per message, or a task queue whose tasks run per job, must be imported.
    prefilter = fw.SERVING_IMPORT_MARKERS + fw.APP_IMPORT_MARKERS + fw.BOT_IMPORT_MARKERS + fw.QUEUE_IMPORT_MARKERS

    # Code that other modules reach per request (a route's helper) serves requests without importing a
    # framework. A model imported from another module is no such evidence: the markers stand for the request,
    # and a project loader's construction is the gate's business (CallsProjectLoader).
    sees_project = (PROJECT_CONTEXT,)

    # A test module serves no request (see runs_per_request); loads per request are in functions, or at the module
    # level of a Streamlit script, which reruns (a script of a few lines defines none).
    syntax_gate = NotTest() & (DefinesFunctions() | Imports(("streamlit",))) & (Spelled("calls", LOADER_NAMES) | Spelled("keywords", WEIGHT_KEYWORDS) | CallsProjectLoader())

    @property
    def _project_loaders(self) -> frozenset[str]:
        """Names of the project's classes and functions that load a model (the triage's, from the project)."""
        triage = getattr(self.context, "triage", None)
        return triage.project_loaders if triage is not None else frozenset()

    def _shared_helper_load(self, helper: cst.FunctionDef, call: cst.Call) -> tuple[str | None, str]:
        """A function of this file that loads, called here: a load per call when the helper also runs outside
        requests (at start-up too), where its own load is not reported and its per-request calls are the ones to
        say. A helper that only requests call is reported at its load, once."""
        found = self._load_outside_requests(helper)
        if found is None or called_while_empty(self.analysis, call, helper):
            return None, ""  # called only while what the helper keeps is empty: it loads once
        load, what = found
        return what, f": `{helper.name.value}`, in this file, calls `{self.analysis.module.code_for_node(load.func)}(...)`"

    @cached_property
    def _helper_loads(self) -> dict[cst.FunctionDef, tuple[cst.Call, str] | None]:
        """:meth:`_load_outside_requests` of each helper asked of."""
        return {}

    def _load_outside_requests(self, helper: cst.FunctionDef) -> tuple[cst.Call, str] | None:
        """The first load of ``helper`` that is not reported where it is, as it runs outside requests too; None
        when it loads nothing, is memoised, keeps what it loads while that is empty, or only requests call it.
        Asked once per helper, however many calls name it."""
        known = self._helper_loads
        if helper not in known:
            loads = [] if is_cached(self.analysis, helper) else [(load, what) for load, what in _loads_in(self.analysis, helper) if not kept_or_keyed(self.analysis, load)]
            shared = bool(loads) and all(runs_per_request(self.analysis, load) is None for load, _ in loads)
            known[helper] = loads[0] if shared else None
        return known[helper]

    @cached_property
    def _import_aliases(self) -> dict[str, str]:
        """Names imported under another name, to the name imported (``from mmpose.apis import init_model as
        init_pose_estimator``, ``from app.services.inference import predict as run_predict``)."""
        return {
            alias.asname.name.value: alias.name.value
            for statement in self.analysis.nodes_of(cst.ImportFrom)
            if not isinstance(statement.names, cst.ImportStar)
            for alias in statement.names
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name) and isinstance(alias.name, cst.Name)
        }

    @cached_property
    def _loader_aliases(self) -> frozenset[str]:
        """Loaders imported under another name."""
        return frozenset(alias for alias, imported in self._import_aliases.items() if imported in LOADER_NAMES)

    def visit_Call(self, node: cst.Call) -> None:
        name = terminal_name(node.func)
        outside = self.analysis.outside
        how = ""
        built = False  # the load is a project class's construction
        dependency = self._dependency(node) if name == "Depends" else None
        pretrained = load_kind(self.analysis, node) if name not in LOADER_NAMES and may_load(node) else None
        if dependency is not None:
            # `model = Depends(get_model)`: FastAPI calls `get_model` on every request of the route, as a call would
            if isinstance(dependency, cst.Name) and dependency.value in self.analysis.module_functions:
                what, how = self._shared_helper_load(self.analysis.module_functions[dependency.value], node)
            elif outside is not None:
                what, how = _project_load(outside.helper_loads(self.analysis, dependency))
            else:
                return
        elif pretrained is not None:
            what = pretrained  # a vision library's model built with its pretrained weights
        elif name in LOADER_NAMES or name in self._loader_aliases:
            what = load_kind(self.analysis, node)
            if what is None and outside is not None and (
                name in fw.PRETRAINED_METHODS or isinstance(node.func, cst.Attribute) or self._import_aliases.get(name, name) in self._project_loaders
            ):
                # A project class's own `from_pretrained`, a project method named as a loader (`manager.load_model`),
                # or a project function so named (`from utils import load_model`): a load where it reads weights
                # into a model, itself or through the class's helpers.
                what, how = _project_load(outside.helper_loads(self.analysis, node.func) or outside.inherited_pretrained(self.analysis, node.func))
        elif outside is not None and name is not None and name[:1].isupper():
            what, how = _project_load(outside.construction_loads(self.analysis, node.func))
            built = what is not None
        elif isinstance(node.func, cst.Name) and name in self.analysis.module_functions:
            what, how = self._shared_helper_load(self.analysis.module_functions[name], node)
        elif outside is not None and name is not None and self._import_aliases.get(name, name) in self._project_loaders:
            # a loading function, or a loading class named in lower case (`pSp(opts)`)
            helper = outside.helper_loads(self.analysis, node.func)
            what, how = _project_load(helper or outside.construction_loads(self.analysis, node.func))
            built = helper is None and what is not None
        elif outside is not None and isinstance(node.func, cst.Attribute) and name is not None and "load" in name.lower():
            # a method of another module's class named for loading (`runner.load_models()`), resolved through
            # what its receiver holds; the name only spares resolving every method call
            what, how = _project_load(outside.helper_loads(self.analysis, node.func))
        else:
            return  # cheap syntactic gate before resolving names
        if what is None:
            return
        reason = runs_per_request(self.analysis, node)
        if reason is None:
            return
        if built and not outside.construction_loads_each_time(self.analysis, node.func):  # type: ignore[union-attr]
            return  # its `__init__` keeps what it loads in a global, loading only while that is empty
        text = self.analysis.module.code_for_node(node.func)
        if self._retries_a_load(node, text):
            return  # the load it retries is reported, and one fix covers both
        if STREAMLIT_RERUN in reason:
            # the script's module level is what reruns: the load moves into a function Streamlit caches
            fix = "load it in a function decorated with `@st.cache_resource`, which runs once, and call that"
        elif dependency is not None:
            fix = "load it once at startup and have the dependency return it (or cache the dependency with `functools.lru_cache`)"
        else:
            fix = "load it once at startup (module level, `__init__`, a setup hook or a cached helper) and reuse it"
        shown = self.analysis.module.code_for_node(node) if dependency is not None else f"{text}(...)"
        self.report(node, f"`{shown}` loads {what} on every request ({reason}){how}; {fix}")


    def _dependency(self, node: cst.Call) -> cst.BaseExpression | None:
        """What ``Depends(f)``, written for a parameter of a function (a route), has FastAPI call: ``f``."""
        param = self.analysis.parent(node)
        if not isinstance(param, cst.Param) or param.default is not node:
            return None
        return dependency_of(self.analysis, param)

    def _retries_a_load(self, node: cst.Call, text: str) -> bool:
        """``node`` runs in an ``except`` handler of a ``try`` whose body makes the same call: a retry of the load
        (``from_pretrained(name, local_files_only=True)``, then without it when that fails)."""
        parent = self.analysis.parent(node)
        while parent is not None and not isinstance(parent, SCOPE_NODES):
            if isinstance(parent, (cst.ExceptHandler, cst.ExceptStarHandler)):
                attempt = self.analysis.parent(parent)
                if isinstance(attempt, (cst.Try, cst.TryStar)) and any(
                    isinstance(call, cst.Call) and self.analysis.module.code_for_node(call.func) == text
                    for call in self.analysis.subtree(attempt.body)
                ):
                    return True
            parent = self.analysis.parent(parent)
        return False


def _loads_in(analysis, function: cst.FunctionDef) -> list[tuple[cst.Call, str]]:
    """The loading calls of ``function``'s own body (not of functions nested in it), with what each loads."""
    found = []
    for node in analysis.subtree(function.body):
        if isinstance(node, cst.Call) and may_load(node):
            what = load_kind(analysis, node)
            if what is not None:
                found.append((node, what))
    return found


def _project_load(loads: str | None) -> tuple[str | None, str]:
    """What a call of a project class or function of another module loads, and how (from what the project says
    of it: None when it loads no model)."""
    return ("a model", f": {loads}") if loads is not None else (None, "")
