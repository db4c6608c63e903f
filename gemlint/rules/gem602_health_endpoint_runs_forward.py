from __future__ import annotations

import os

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.forward_families import forward_label, runs_phrase
from gemlint.analysis.route_paths import is_health_path
from gemlint.analysis.routes import module_routes
from gemlint.analysis.triage import DefinesFunctions, Imports, NotTest
from gemlint.diagnostics import RelatedLocation, Severity, Span
from gemlint.rule import AnalysisRule

# Routes, mounts and health hooks are recognised by names that resolve into these packages.
_ROUTE_AND_HOOK_MODULES = fw.WEB_FRAMEWORKS | {
    name.split(".", 1)[0] for name in (*fw.HEALTH_HOOK_DECORATED, *fw.HEALTH_HOOK_BASES)
}


class HealthEndpointRunsForward(AnalysisRule):
    code = "GEM602"
    name = "health-endpoint-runs-forward"
    severity = Severity.WARNING
    summary = "A health endpoint (or a framework health hook) runs a model forward pass."
    rationale = (
        "Orchestrators call health endpoints every few seconds on every replica, and load balancers and "
        "monitors add their own checks. A forward pass there competes with real requests for the GPU, adds "
        "tail latency, and under load the check times out, so a healthy but busy replica is restarted or "
        "taken out of rotation exactly when it is needed. Handing a one-token generation to the serving engine "
        "(`engine.generate(prompt, SamplingParams(max_tokens=1))`, a request with `max_new_tokens` given to a "
        "tokenizer manager or scheduler) costs the same: the engine's loop runs the model for it, in the batches "
        "of real traffic. A health check should answer from state the server already has (the model is loaded, "
        "the worker loop is alive, the last step finished recently)."
    )
    not_flagged = (
        "Health handlers that return a status, check a flag or an attribute (`model is not None`), or read "
        "device state without running the model (`torch.cuda.is_available()`, memory counters).",
        "Status calls to an engine (`check_health()`, `is_ready()`, `get_health_status()`), and submission-like "
        "calls on objects never asked for a generation (a tokenizer's `encode`, a metrics counter's `add_request`): "
        "an object is an inference engine when it is handed a generation with a token budget (`max_new_tokens`, "
        "`max_tokens`, `max_completion_tokens`) in the file, or is built by a known engine constructor.",
        "Checks that answer from state while it is fresh: on the way to the forward pass a function returns early "
        "on a condition that reads the clock (`if now - last_request < timeout: return healthy`, directly or in a "
        "project method the condition calls), so the model runs only when the server has been idle, not on every "
        "check.",
        "Handlers on paths that are not health-like (configure `health-paths`; the default is "
        "`/health`, `/healthz`, `/livez`, `/live`, `/ping` and paths ending in those segments).",
        "Test modules (`tests/`, `conftest.py`, `test_*.py`, `*_test.py`; outside a test folder, a file with a "
        "`__main__` block counts only when it holds tests): the applications they build are exercised by the tests, "
        "not served, and the routes they declare or mount count for no other module.",
    )
    bad = """\
import torch
from fastapi import FastAPI
from transformers import AutoModelForCausalLM

app = FastAPI()
model = AutoModelForCausalLM.from_pretrained("gpt2")


@app.get("/healthz")
@torch.inference_mode()
def healthz():
    model.generate(torch.tensor([[50256]]), max_new_tokens=1)
    return {"status": "ok"}
"""
    good = """\
from fastapi import FastAPI
from transformers import AutoModelForCausalLM

app = FastAPI()
model = AutoModelForCausalLM.from_pretrained("gpt2")


@app.get("/healthz")
def healthz():
    return {"status": "ok", "model_loaded": model is not None}
"""
    benchmark = "Service throughput on loopback while a 1 Hz health check runs a forward pass, against a trivial check."
    tags = ("performance", "serving", "deployment")
    notebooks = False
    notebooks_reason = (
        "Health endpoints belong to deployed services and the probes that call them; a notebook has neither."
    )
    precision = "high"
    # A web or serving framework (route handlers, health hooks) must be imported.
    prefilter = fw.SERVING_IMPORT_MARKERS

    # Routes and health hooks are all recognised through names imported from their frameworks, and each
    # reported handler is a function of the module (a Django `admin.py` or `urls.py` holds none).
    syntax_gate = NotTest() & DefinesFunctions() & Imports(_ROUTE_AND_HOOK_MODULES)

    cross_file = True
    reads_routes = True

    def visit_Module(self, node: cst.Module) -> None:
        if self.analysis.is_test_file:
            return
        handlers: dict[cst.FunctionDef, str] = {}
        health_paths = self.context.config.health_paths
        for route in module_routes(self.analysis):
            local = route.decl.handler.local if route.decl.handler is not None else None
            function = _get_method(local) if isinstance(local, cst.ClassDef) else local
            if isinstance(function, cst.FunctionDef) and is_health_path(route.path, health_paths):
                methods = "/".join(sorted(route.decl.methods)) if route.decl.methods else "GET"
                handlers.setdefault(function, f"serves {methods} {_display_path(route.path)}, a health endpoint,")
        for function, description in self._health_hooks():
            handlers.setdefault(function, description)
        # A web module that declares no routes itself (Django views, handlers mounted by another module):
        # its routes come from the project's route index.
        web = self.analysis.imports_any(fw.WEB_FRAMEWORKS) and not self.analysis.routes.routes
        if not handlers and not web:
            return
        from gemlint.project.files import project_for

        project = project_for(self.context.config)
        current = project.adopt(self.analysis)
        if current is None:
            return
        # Asked before the project's routes are: they parse every module that declares one.
        if web and project.routes_may_name(current):
            # Handlers of this file mounted elsewhere (Django urls.py, routers included from other modules).
            for route in project.routes:
                if route.file.path == current.path and is_health_path(route.path, health_paths):
                    function = current.function_at(route.handler_line)
                    if function is not None:
                        methods = "/".join(sorted(route.methods)) if route.methods else "GET"
                        handlers.setdefault(function, f"serves {methods} {_display_path(route.path)}, a health endpoint,")
        if not handlers:
            return
        for function, description in handlers.items():
            line = self.range_of(function)[0].line
            found = project.reach.forward_from(current, line)
            if found is None:
                continue
            via = ""
            if found.via:
                via = " through " + " → ".join(f"`{step.name}`" for step in found.via)
            # Compared by path: after a fix in the same run the file's parsed text is a new object.
            elsewhere = os.path.abspath(found.file.path) != os.path.abspath(current.path)
            where = f" at {found.file.display}:{found.start.line}" if elsewhere else f" on line {found.start.line}"
            owner = self.analysis.enclosing_class(function)
            label = f"{owner.name.value}.{function.name.value}" if owner is not None else function.name.value
            self.report(
                function.name,
                f"`{label}` {description} and {runs_phrase(found.family)} ({found.text}{where}{via}); "
                "every health check then competes with real requests for the GPU: answer from state instead",
                related=[
                    RelatedLocation(
                        Span(found.file.display, found.start.line, found.start.column, found.end.line, found.end.column),
                        f"{forward_label(found.family)} {found.text}",
                    )
                ],
            )

    def _health_hooks(self):
        """Framework health hooks: Ray Serve ``check_health`` in deployments, LitServe ``LitAPI.health``."""
        for node in self.analysis.module.body:
            if not isinstance(node, cst.ClassDef):
                continue
            hooks: frozenset[str] = frozenset()
            for decorator in node.decorators:
                for name in self.analysis.names_among(
                    decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator,
                    fw.HEALTH_HOOK_DECORATED,
                ):
                    hooks |= fw.HEALTH_HOOK_DECORATED.get(name, frozenset())
            for base in node.bases:
                for name in self.analysis.names_among(base.value, fw.HEALTH_HOOK_BASES):
                    hooks |= fw.HEALTH_HOOK_BASES.get(name, frozenset())
            for statement in node.body.body:
                if isinstance(statement, cst.FunctionDef) and statement.name.value in hooks:
                    yield statement, f"is the health hook of `{node.name.value}`"


def _get_method(cls: cst.ClassDef) -> cst.FunctionDef | None:
    return next(
        (s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value in ("get", "on_get", "head")),
        None,
    )


def _display_path(path: str) -> str:
    return path if path.startswith("/") else "/" + path
