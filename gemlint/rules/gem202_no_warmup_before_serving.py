from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.handlers import startup_reason
from gemlint.analysis.loads import LOADER_NAMES, load_kind
from gemlint.analysis.module import dotted_name, terminal_name
from gemlint.analysis.syntax import is_member
from gemlint.analysis.triage import Spelled
from gemlint.diagnostics import RelatedLocation, Severity, Span
from gemlint.rule import AnalysisRule

# Calls on a loaded model that run it (a warm-up), besides calling it.
_RUNS = frozenset({"forward", "generate", "run", "encode", "predict", "infer", "embed", "transcribe", "__call__"})
# A function named like one of these that runs the model warms it before (or as) traffic arrives.
_WARMING_NAME = re.compile(r"warm|ready|readiness|health|self_test|selftest", re.IGNORECASE)
_HELPER_DEPTH = 2
# Attributes a serving framework reads at start-up to warm the model itself (Mosec's worker examples).
_WARMUP_ATTRIBUTES = frozenset({"example", "multi_examples"})
# Engines whose constructor runs the model: vLLM's `LLM` profiles memory with a dummy batch and captures its CUDA
# graphs before it returns.
_WARMED_WHEN_BUILT = frozenset({"vllm.LLM", "vllm.entrypoints.llm.LLM"})
# Calls that start serving from the script itself.
_SERVER_STARTS = frozenset({"uvicorn.run", "uvicorn.main.run", "hypercorn.asyncio.serve", "waitress.serve"})
_SERVER_START_NAMES = frozenset(name.rsplit(".", 1)[1] for name in _SERVER_STARTS)


class NoWarmupBeforeServing(AnalysisRule):
    code = "GEM202"
    name = "no-warmup-before-serving"
    severity = Severity.WARNING
    preview = True
    summary = "A service loads its model at start-up and takes traffic before anything has run it once."
    rationale = (
        "The first forward pass pays what later ones do not: CUDA context creation, cuDNN/cuBLAS kernel "
        "selection and autotuning, TorchScript/Inductor specialisation, allocator growth and lazy tokenizer "
        "initialisation. Without a warm-up the first requests after every start, scale-up or restart take "
        "seconds instead of milliseconds and time out behind the load balancer. Run one inference on a "
        "representative input at start-up, before the service reports ready."
    )
    not_flagged = (
        "A start-up path that runs the loaded model (a forward, `generate`, `run`, `encode`, ...) directly or "
        "through a helper of the same class or module, or calls a warm-up function, or sets the example a "
        "framework runs before traffic (Mosec's `self.example`).",
        "A readiness or health check of the same module that runs the model (the first probe warms it).",
        "Engines whose construction runs the model (vLLM's `LLM`, which profiles memory with a dummy batch and "
        "captures CUDA graphs before it returns).",
        "Loads outside start-up code (request handlers are GEM502's), loads whose result is not kept, "
        "tokenizers and processors alone, and tests and benchmarks.",
    )
    bad = """\
from fastapi import FastAPI
from transformers import AutoModelForSequenceClassification

app = FastAPI()
state = {}


@app.on_event("startup")
def load():
    state["model"] = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")
"""
    good = """\
import torch
from fastapi import FastAPI
from transformers import AutoModelForSequenceClassification

app = FastAPI()
state = {}


@app.on_event("startup")
def load():
    model = state["model"] = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")
    with torch.inference_mode():
        model(input_ids=torch.ones(1, 16, dtype=torch.long))  # warm-up
"""
    benchmark = "First-request latency vs the median of the following requests, with and without a warm-up at start-up."
    tags = ("performance", "serving")
    notebooks = False
    notebooks_reason = "Warm-up is about a service's first requests after start-up; a notebook serves no traffic."
    precision = "medium"
    prefilter = fw.SERVING_IMPORT_MARKERS

    syntax_gate = Spelled("calls", LOADER_NAMES)

    def visit_Call(self, node: cst.Call) -> None:
        if terminal_name(node.func) not in LOADER_NAMES or not self.analysis.is_production:
            return  # tests and benchmarks start services to exercise them, not to take traffic
        what = load_kind(self.analysis, node)
        if what not in ("a model", "a pipeline", "an ONNX Runtime session") or self.analysis.resolves_to(node.func, _WARMED_WHEN_BUILT):
            return
        function = self.analysis.enclosing_function(node)
        if function is None:
            if not self.analysis.routes.routes:
                return  # module level of a module that serves nothing
            where = "module level of the served application"
            body = [s for s in self.analysis.module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
        else:
            where = startup_reason(self.analysis, function) or self._starts_a_server(function)
            if where is None:
                return
            body = function.body
        target = _kept_as(self.analysis, node)
        if target is None:
            return
        names = {target, *self._aliases(body, target)}
        if any(self._warmed(body, name, function, 0) or self._warmed_by_a_check(name) for name in names):
            return
        self._cold.setdefault(function, (where, []))[1].append((node, what, target))

    def visit_Module(self, node: cst.Module) -> None:
        # Per start-up function (None: the module level of a served application), its loads that nothing warms.
        self._cold: dict[cst.FunctionDef | None, tuple[str, list[tuple[cst.Call, str, str]]]] = {}

    def leave_Module(self, original_node: cst.Module) -> None:
        # One finding per start-up path, as one warm-up fixes it: on the hook's definition, or on the first load of
        # a module-level application; each load is a related location.
        for function, (where, loads) in self._cold.items():
            first, what, target = loads[0]
            text = self.analysis.module.code_for_node(first.func)
            if len(loads) == 1:
                loaded = f"`{text}(...)` loads {what}"
                unwarmed = f"`{target}`"
            else:
                loaded = f"{len(loads)} models are loaded"
                unwarmed = ", ".join(f"`{t}`" for _, _, t in loads)
            related = []
            for load, load_what, load_target in loads if function is not None or len(loads) > 1 else ():
                start, end = self.range_of(load)
                span = Span(self.context.display_path, start.line, start.column, end.line, end.column)
                related.append(RelatedLocation(span, f"`{self.analysis.module.code_for_node(load.func)}(...)` loads {load_what}, kept in `{load_target}`"))
            self.report(
                function.name if function is not None else first,
                f"{loaded} at start-up ({where}), and nothing runs {unwarmed} before the service takes traffic: the "
                "first requests pay CUDA context creation, kernel selection and allocator growth; run one inference "
                "on a representative input after loading",
                related=related,
            )

    def _starts_a_server(self, function: cst.FunctionDef) -> str | None:
        """``function`` starts the server itself (``uvicorn.run(app)`` in a ``main()``): what it loads before
        that is loaded at start-up."""
        for node in self.analysis.subtree(function.body):
            if isinstance(node, cst.Call) and terminal_name(node.func) in _SERVER_START_NAMES and self.analysis.resolves_to(node.func, _SERVER_STARTS):
                return f"`{function.name.value}`, which then starts the server"
        return None

    def _aliases(self, body, target: str) -> set[str]:
        """Where ``body`` keeps the loaded model under other names: ``shared["ranker"] = torch.compile(ranker)``."""
        found = set()
        nodes = self._nodes(body)
        for node in nodes:
            if not isinstance(node, cst.Assign) or len(node.targets) != 1:
                continue
            mentions = any(_spelled(n) == target for n in self.analysis.subtree(node.value, into_scopes=False) if isinstance(n, (cst.Name, cst.Attribute)))
            spelled = _spelled(node.targets[0].target) if mentions or _spelled(node.value) == target else None
            if spelled is not None and spelled != target:
                found.add(spelled)
        return found

    def _nodes(self, body) -> Iterator[cst.CSTNode]:
        """The nodes of a function's body, or of the module's top-level statements (a list)."""
        if isinstance(body, list):
            return (node for statement in body for node in self.analysis.subtree(statement))
        return self.analysis.subtree(body)

    def _warmed(self, body, target: str, function: cst.FunctionDef | None, depth: int) -> bool:
        """Whether ``body`` (a function's, or the module's top-level statements) runs ``target``."""
        nodes = self._nodes(body)
        for node in nodes:
            if isinstance(node, cst.Assign) and any(_framework_warmup(t.target) for t in node.targets):
                return True
            if not isinstance(node, cst.Call):
                continue
            if _runs(node, target):
                return True
            name = terminal_name(node.func) or ""
            if _WARMING_NAME.search(name):
                return True
            if depth < _HELPER_DEPTH:
                helper = self._helper(node, function)
                if helper is not None and self._warmed(helper.body, target, helper, depth + 1):
                    return True
        return False

    def _helper(self, call: cst.Call, caller: cst.FunctionDef | None) -> cst.FunctionDef | None:
        """The same-class method (``self.helper()``) or same-file function (``helper()``) ``call`` runs."""
        func = call.func
        if isinstance(func, cst.Name):
            return _module_function(self.analysis.module, func.value)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls") and caller is not None:
            owner = self.analysis.enclosing_class(caller)
            if owner is not None:
                return next((s for s in owner.body.body if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value), None)
        return None

    def _warmed_by_a_check(self, target: str) -> bool:
        """A readiness/health function of the module runs the model: the first probe warms it."""
        for node in self.analysis.subtree(self.analysis.module, into_scopes=True):
            if isinstance(node, cst.FunctionDef) and _WARMING_NAME.search(node.name.value):
                if any(isinstance(n, cst.Call) and _runs(n, target) for n in self.analysis.subtree(node.body)):
                    return True
        return False


def _kept_as(analysis, call: cst.Call) -> str | None:
    """The name, attribute or subscript the load is assigned to (``self.model``, ``state["model"]``)."""
    statement = next((a for a in analysis.ancestors(call) if isinstance(a, (cst.Assign, cst.AnnAssign))), None)
    if statement is None:
        # `ranker.load_state_dict(torch.load(path))`: the weights are kept in the module they are loaded into
        outer = analysis.parent(analysis.parent(call))
        if isinstance(outer, cst.Call) and isinstance(outer.func, cst.Attribute) and outer.func.attr.value == "load_state_dict":
            return _spelled(outer.func.value)
        return None
    target = statement.targets[0].target if isinstance(statement, cst.Assign) else statement.target
    if isinstance(target, cst.Name):
        # `state = torch.load(path)`, then `net.load_state_dict(state["model"])`: weights, kept in the module
        return _loaded_into(analysis, call, target.value) or target.value
    if isinstance(target, cst.Attribute):
        return dotted_name(target)
    if isinstance(target, cst.Subscript):
        return _spelled(target)
    return None


def _loaded_into(analysis, call: cst.Call, name: str) -> str | None:
    """The module that ``load_state_dict`` fills, in the function of ``call``, with what ``name`` holds (itself or
    an entry of it)."""
    function = analysis.enclosing_function(call)
    for site in analysis.index.sites("load_state_dict"):
        func = site.call.func
        if not site.call.args or not isinstance(func, cst.Attribute) or analysis.enclosing_function(site.call) is not function:
            continue
        if _holds(site.call.args[0].value, name):
            return _spelled(func.value)
    return None


def _holds(weights: cst.BaseExpression, name: str) -> bool:
    """``weights`` is ``name``, an entry of it, or one of them by a condition (``state["model"] if ... else state``)."""
    if isinstance(weights, cst.IfExp):
        return _holds(weights.body, name) or _holds(weights.orelse, name)
    if isinstance(weights, cst.Subscript):
        weights = weights.value
    return isinstance(weights, cst.Name) and weights.value == name


def _spelled(expression: cst.BaseExpression) -> str | None:
    if isinstance(expression, (cst.Name, cst.Attribute)):
        return dotted_name(expression)
    if isinstance(expression, cst.Subscript):
        return cst.Module([]).code_for_node(expression)
    return None


def _runs(call: cst.Call, target: str) -> bool:
    """``target(...)`` or ``target.generate(...)`` (and the other methods that run a model)."""
    func = call.func
    if _spelled(func) == target:
        return True
    return isinstance(func, cst.Attribute) and func.attr.value in _RUNS and _spelled(func.value) == target


def _framework_warmup(target: cst.BaseExpression) -> bool:
    """``self.example = ...``: Mosec runs a worker's example through ``forward`` before it takes traffic."""
    return is_member(target, ("self",)) and target.attr.value in _WARMUP_ATTRIBUTES


def _module_function(module: cst.Module, name: str) -> cst.FunctionDef | None:
    return next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
