"""What a file's analysis asks of the rest of the project, about the LibCST nodes it holds
(:class:`gemlint.analysis.outside.OutsideFacts`): the callers of a function and the contexts they give it, what
a call builds or loads, whether a class has a mode or parameters. Each question is located in the project model's
index (:class:`~gemlint.project.model.ProjectModel`) and answered there, parsing a caller's file only where the
index cannot tell.

A file analysed with LibCST is handed the answers of the project's model (they hold nothing of their own): a run
that parses no Python file never imports this module, LibCST or the analyses.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.autograd_graphs import FunctionSummary as GraphSummary
from gemlint.analysis.autograd_graphs import referenced_besides_calls
from gemlint.analysis.handlers import caches, kept_in_the_instance, kept_or_keyed, loads_on_construction, per_request_reason, returns_what_it_loads, runs_per_request, switches_model
from gemlint.analysis.loads import load_kind
from gemlint.analysis.module import Context, ModuleAnalysis, Verdict
from gemlint.analysis.syntax import NOT_LITERAL, literal_value, named_parameters, parameter_position, passed_argument, terminal_name
from gemlint.analysis.triage import is_test_path
from gemlint.languages import NOTEBOOK_SUFFIX
from gemlint.project.buffers import read_bytes
from gemlint.project.model import MAX_PARSED_CALLER_FILES, MAX_PASSING_CALLERS, MAX_SUBCLASSES, ProjectModel, Target, summary_trains
from gemlint.project.summary import CallSite, FunctionSummary

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.project.model import ModuleEntry


#: Other files that may mention a function before its callers are taken as unknowable.
_MAX_MENTIONS = 16


class ProjectAnswers:
    """The project model's answers to the questions of :class:`~gemlint.analysis.outside.OutsideFacts`."""

    def __init__(self, model: ProjectModel) -> None:
        self.model = model

    # -- asked of the index alone --------------------------------------------------------------
    def project_package(self, name: str) -> bool:
        return self.model.project_package(name)

    def external_name(self, dotted: str) -> str | None:
        return self.model.external_name(dotted)

    def star_sources(self, analysis: ModuleAnalysis, modules: tuple[str, ...], name: str) -> tuple[str, ...]:
        entry = self._entry_for(analysis)
        if entry is None:
            return ()
        found = []
        for module in modules:
            source = self.model.entry(module, entry.path)
            summary = source.summary if source is not None else None
            if summary is not None and (name in summary.classes or name in summary.functions or name in summary.bindings or name in summary.imports):
                found.append(module)
        return tuple(found)

    def hub_entry_forward_without_grad(self, entry_name: str) -> str | None:
        return self.model.hub_entry_forward_without_grad(entry_name)

    def hub_folders(self, entry_name: str) -> list[str]:
        return self.model.hub_folders(entry_name)

    # -- asked about a file's nodes ------------------------------------------------------------
    def gives_context(self, analysis: ModuleAnalysis) -> bool:
        return self.model.in_context(str(analysis.context.source.path))

    def _entry_for(self, analysis: ModuleAnalysis) -> ModuleEntry | None:
        path = str(analysis.context.source.path)
        entry = self.model.entry_of_path(path)
        if entry is None and path.endswith(NOTEBOOK_SUFFIX):
            tree = analysis.ast_tree()
            return self.model.notebook_entry(path, tree) if tree is not None else None
        return entry

    def class_hooks(self, analysis: ModuleAnalysis, cls: cst.ClassDef) -> frozenset[str] | None:
        entry = self._entry_for(analysis)
        if entry is None:
            return None
        qual = _class_qualname(analysis, cls)
        return self.model.hooks(Target("class", entry.summary.name, qual), entry.path) if qual else None

    def _function_target(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> tuple[ModuleEntry, str] | None:
        entry = self._entry_for(analysis)
        if entry is None:
            return None
        if analysis.enclosing_function(function) is not None:
            return None  # nested functions are not called by name from elsewhere
        owner = analysis.enclosing_class(function)
        if owner is None:
            return entry, function.name.value
        qual = _class_qualname(analysis, owner)
        return (entry, f"{qual}.{function.name.value}") if qual else None

    def _located_callers(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> list[tuple[ModuleEntry, FunctionSummary | None, CallSite]]:
        """Calls of ``function`` from other modules that lie on a path from an inference entry point: only
        those decide its context and its guards."""
        located = self._function_target(analysis, function)
        if located is None or not self.model.on_inference_path(located[0].path, located[1]):
            return []
        found = []
        for caller_entry, caller, site in self.model.callers(*located):
            if caller is None:
                if not self.model.runs_as_script(caller_entry):
                    continue  # module-level code that is not a script's run: an import-time call
            elif not self.model.on_inference_path(caller_entry.path, caller.qualname):
                continue  # a test or unreached code calling it is not a path from a request
            found.append((caller_entry, caller, site))
        return found

    def _parses_callers(self, analysis: ModuleAnalysis, callers: list[tuple[ModuleEntry, FunctionSummary | None, CallSite]]) -> bool:
        """Few enough caller files to parse them; a helper called from all over a large project is judged
        from the index instead (parsing every caller cost most of a cold run on transformers)."""
        own = self._entry_for(analysis)
        here = own.path if own is not None else None
        return len({entry.path for entry, _, _ in callers if entry.path != here}) <= MAX_PARSED_CALLER_FILES

    def _caller_calls(self, analysis: ModuleAnalysis, callers: list[tuple[ModuleEntry, FunctionSummary | None, CallSite]]) -> list[tuple[ModuleAnalysis, cst.Call]]:
        return [found for caller_entry, _, site in callers if (found := self._located_call(caller_entry, site, analysis)) is not None]

    def _located_call(self, entry: ModuleEntry, site: CallSite, current: ModuleAnalysis | None = None) -> tuple[ModuleAnalysis, cst.Call] | None:
        """The call ``site`` of ``entry``'s module, in that module's tree: ``current`` when it is that module
        (an instance call in the file being linted: `runner.predict(x)`, `runner = Runner()`), else the
        project's parse of the file."""
        own = self._entry_for(current) if current is not None else None
        if own is not None and own.path == entry.path:
            analysis = current
        else:
            analysis = self._analysis_of(entry.path)
        call = _call_at(analysis, site) if analysis is not None else None
        return (analysis, call) if call is not None else None

    def _index_verdict(self, entry: ModuleEntry, caller: FunctionSummary | None) -> Verdict:
        """A caller's context from its summary alone (see :meth:`_parses_callers`)."""
        if caller is None:
            return Verdict(Context.INFERENCE, f"module-level code of the script `{entry.summary.name}`")
        if summary_trains(caller):
            return Verdict(Context.TRAINING, f"`{caller.qualname}` in `{entry.summary.name}` runs a training step")
        # A path that starts only at functions named for inference (`predict*`) rests on those names.
        name_only = not self.model.on_evidenced_path(entry.path, caller.qualname)
        return Verdict(Context.INFERENCE, f"`{caller.qualname}` in `{entry.summary.name}`, on a path from an inference entry point", name_only)

    def caller_verdicts(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> list[Verdict]:
        with self.model.hop() as allowed:
            if not allowed:
                return []
            callers = self._located_callers(analysis, function)
            if not self._parses_callers(analysis, callers):
                return [self._index_verdict(entry, caller) for entry, caller, _ in callers]
            return [caller.context_of(call) for caller, call in self._caller_calls(analysis, callers)]

    def may_be_called_elsewhere(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> bool:
        entry = self._entry_for(analysis)
        if entry is None or "." in entry.name:
            return True  # a file the index does not hold, or a package's module: its callers are not all known
        return any(caller.path != entry.path for caller, _, _ in self.model.calls_named(function.name.value))

    def handed_to_gradio(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> str | None:
        located = self._function_target(analysis, function)
        # A function handed over is an entry point with evidence: any other is answered by a set's look-up.
        if located is None or not self.model.on_evidenced_path(located[0].path, located[1]):
            return None
        handing = self.model.handed_to(*located)
        return handing[0].summary.name if handing else None

    def routed_elsewhere(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> str | None:
        located = self._function_target(analysis, function)
        if located is None or not self.model.on_evidenced_path(located[0].path, located[1]):
            return None
        handing = self.model.handed_to(*located, routed=True)
        return handing[0].summary.name if handing else None

    def per_request_callers(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> list[str | None]:
        located = self._function_target(analysis, function)
        if located is None:
            return []
        key = ("per-request", located[0].path, located[1])
        if key in self.model.memo:
            return self.model.memo[key]  # type: ignore[return-value]
        with self.model.hop() as allowed:
            if not allowed:
                return []
            self.model.memo[key] = result = self._per_request_callers(located, returns_what_it_loads(analysis, function))
            return result

    def _per_request_callers(self, located: tuple[ModuleEntry, str], returns_model: bool) -> list[str | None]:
        callers = []
        for caller_entry, caller, site in self.model.callers(*located):
            relative = os.path.relpath(caller_entry.path, self.model.project.root).replace(os.sep, "/")
            if is_test_path(relative):
                continue  # a test calling the helper is not a way it is deployed
            if caller is None or not self.model.on_inference_path(caller_entry.path, caller.qualname):
                # Called at import time, or from code no request reaches: not only per request. Decided from
                # the index alone, before any caller's file is parsed.
                return [None]
            callers.append((caller_entry, site))
        reasons: list[str | None] = []
        for caller_entry, site in callers:
            located = self._located_call(caller_entry, site)
            enclosing = located[0].enclosing_function(located[1]) if located is not None else None
            if enclosing is None or kept_or_keyed(*located):  # type: ignore[misc]
                # Also run at import, or its result kept while empty (`if M is None: M = build()`), or built again
                # only when asked for another than the one kept.
                return [None]
            reason = per_request_reason(located[0], enclosing)
            if reason is None or (returns_model and switches_model(located[0], located[1], reason)):
                return [None]  # or the model it returns kept for the other routes by an admin's route that sets it
            reasons.append(f"{reason}, in `{caller_entry.summary.name}`")
        return reasons

    def per_request_dependents(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> list[str]:
        located = self._function_target(analysis, function)
        if located is None or "." in located[1] or "Depends" in located[1]:
            return []
        key = ("per-request dependents", located[0].path, located[1])
        if key in self.model.memo:
            return self.model.memo[key]  # type: ignore[return-value]
        self.model.memo[key] = []  # recursion
        reasons = []
        with self.model.hop() as allowed:
            for entry, dependent in self.model.dependents(*located) if allowed else ():
                relative = os.path.relpath(entry.path, self.model.project.root).replace(os.sep, "/")
                other = self._analysis_of(entry.path) if not is_test_path(relative) and "." not in dependent.qualname else None
                node = other.module_functions.get(dependent.qualname) if other is not None else None
                reason = per_request_reason(other, node) if node is not None else None  # type: ignore[arg-type]
                if reason is not None:
                    reasons.append(f"FastAPI runs it for every request of `{dependent.qualname}` in `{entry.summary.name}`, through `Depends`: {reason}")
        self.model.memo[key] = reasons
        return reasons

    def imported_model(self, analysis: ModuleAnalysis, spelled: str) -> str | None:
        entry = self._entry_for(analysis)
        head, _, rest = spelled.partition(".")
        absolute = entry.summary.imports.get(head) if entry is not None else None
        if absolute is None or "." in rest or absolute.endswith(".*"):
            return None
        module, _, name = (f"{absolute}.{rest}" if rest else absolute).rpartition(".")
        owner = self.model.entry(module, entry.path) if module else None
        member = None
        if owner is None and rest:
            # `from app.models import POSTNET; POSTNET.model(x)`: a member of an object the module builds
            module, _, name = absolute.rpartition(".")
            owner, member = (self.model.entry(module, entry.path) if module else None), rest
        if owner is None or owner.path == entry.path or name not in owner.summary.bindings:
            return None  # no module of the project binds it to a call at its top level
        key = ("imported-model", owner.path, name, member)
        if key not in self.model.memo:
            self.model.memo[key] = None  # recursion
            other = self._analysis_of(owner.path)
            if other is not None:
                self.model.memo[key] = other.models.exported_model(name) if member is None else other.models.exported_member(name, member)
        return self.model.memo[key]  # type: ignore[return-value]

    def held_model(self, analysis: ModuleAnalysis, func: cst.BaseExpression, member: str) -> str | None:
        resolved = self._resolved(analysis, func)
        if resolved is None or resolved[1].kind != "class" or "." in resolved[1].qualname:
            return None
        entry, target = resolved
        owner = self.model.entry(target.module, entry.path)
        if owner is None or owner.path == entry.path:
            return None
        key = ("held-model", owner.path, target.qualname, member)
        if key not in self.model.memo:
            self.model.memo[key] = None  # recursion
            other = self._analysis_of(owner.path)
            self.model.memo[key] = other.models.instance_member(target.qualname, member) if other is not None else None
        return self.model.memo[key]  # type: ignore[return-value]

    def _analysis_of(self, path: str) -> ModuleAnalysis | None:
        """The project's analysis of the module file ``path`` (parsed once for the run), or None."""
        parsed = self.model.project.parsed(Path(path))
        return parsed.analysis if parsed is not None else None

    def models_passed(self, analysis: ModuleAnalysis, function: cst.FunctionDef, param: cst.Param) -> list[str | None]:
        located = self._function_target(analysis, function)
        if located is None:
            return []
        key = ("passed", located[0].path, located[1], param.name.value)
        if key in self.model.memo:
            return self.model.memo[key]  # type: ignore[return-value]
        if not self.model.on_inference_path_or_class(*located):
            return []  # what callers pass matters to inference rules only where inference code runs
        self.model.memo[key] = []  # recursion
        with self.model.hop() as allowed:
            result = self._models_passed(analysis, function, param, located) if allowed else []
        self.model.memo[key] = result
        return result

    def _models_passed(self, analysis: ModuleAnalysis, function: cst.FunctionDef, param: cst.Param, located: tuple[ModuleEntry, str]) -> list[str | None]:
        callers = [
            (caller_entry, site)
            for caller_entry, _, site in self.model.callers(*located)
            if not is_test_path(os.path.relpath(caller_entry.path, self.model.project.root).replace(os.sep, "/"))
        ]
        if not callers or len(callers) > MAX_PASSING_CALLERS:
            return []
        # Called on an instance, or constructed: `self` is bound.
        index = parameter_position(function, param, bound=analysis.enclosing_class(function) is not None)
        described: list[str | None] = []
        for caller_entry, site in callers:
            call = self._located_call(caller_entry, site, analysis)
            passed = passed_argument(call[1], index, param.name.value) if call is not None else None
            origins = call[0].models.origins(passed) if passed is not None else ()
            described.append(f"{origins[0].description}, in `{caller_entry.summary.name}`" if origins else None)
        return described

    def callers_guarded(self, analysis: ModuleAnalysis, function: cst.FunctionDef, depth: int) -> list[bool]:
        with self.model.hop() as allowed:
            if not allowed:
                return []
            callers = self._located_callers(analysis, function)
            if not self._parses_callers(analysis, callers):
                # From the index: a guard written at the call or on its function (none further up is seen).
                return [
                    site.guarded or (caller is not None and self.model.decorated_grad_free(entry, caller))
                    for entry, caller, site in callers
                    if caller is None or not summary_trains(caller)
                ]
            results = []
            for caller, call in self._caller_calls(analysis, callers):
                verdict = caller.context_of(call)
                if verdict.context is Context.TRAINING:
                    continue
                results.append(caller.grad_free_guard(call, depth + 1) is not None)
            return results

    def _resolved(self, analysis: ModuleAnalysis, expression: cst.BaseExpression) -> tuple[ModuleEntry, Target] | None:
        """The analysed module's index entry and what ``expression`` (a dotted name) names from it."""
        entry = self._entry_for(analysis)
        spelled = _spelled(expression)
        target = self.model.resolve(entry, spelled) if entry is not None and spelled is not None else None
        return (entry, target) if target is not None else None

    def model_producer(self, analysis: ModuleAnalysis, func: cst.BaseExpression) -> tuple[str, str] | None:
        if isinstance(func, cst.Subscript):
            return self._registry_producer(analysis, func)
        entry = self._entry_for(analysis)
        spelled = _spelled(func)
        if entry is None or spelled is None:
            return None
        target = self.model.resolve(entry, spelled)
        if target is None or target.module == entry.summary.name:
            return None  # same-file classes and functions are the per-file tracker's
        if target.kind == "class" and self.model.is_model_class(target, entry.path):
            if self.model.class_holds_no_seen_layer(target, entry.path, 0):
                return None  # nothing in it is known to hold parameters or a mode: no model to judge
            return "constructed", f"`{spelled}(...)`, an nn.Module subclass defined in `{target.module}`"
        if target.kind == "function":
            kind = self.model.factory(target, entry.path)
            if kind == "evaluated":
                return kind, f"`{spelled}(...)`, a model built by the factory `{target.dotted}`, which puts it in eval mode"
            if kind == "loaded":
                return kind, f"`{spelled}(...)`, a model the factory `{target.dotted}` reads back whole"
            if kind == "constructed":
                return kind, f"`{spelled}(...)`, a model built by the factory `{target.dotted}`"
        return None

    def _registry_producer(self, analysis: ModuleAnalysis, func: cst.Subscript) -> tuple[str, str] | None:
        """``registry[key](...)`` where ``registry`` is a project dict of builder functions: what every builder
        returns (``evaluated`` only when each one puts its model in eval mode)."""
        found = self._resolved(analysis, func.value)
        if found is None or found[1].kind != "registry":
            return None
        entry, target = found
        owner = self.model.entry(target.module, entry.path)
        builders = owner.summary.registries.get(target.qualname, []) if owner is not None else []
        kinds = set()
        for builder in builders:
            resolved = self.model.resolve(owner, builder)
            kind = self.model.factory(resolved, owner.path) if resolved is not None and resolved.kind == "function" else None
            if kind is None:
                return None  # one value that is not a model factory: the registry is not (only) of models
            kinds.add(kind)
        if not kinds:
            return None
        shown = f"`{_spelled(func.value)}[...](...)`"
        if kinds == {"evaluated"}:
            return "evaluated", f"{shown}, a model built by the factories of `{target.dotted}`, which all put it in eval mode"
        if kinds == {"loaded"}:
            return "loaded", f"{shown}, a model the factories of `{target.dotted}` read back whole"
        return "constructed", f"{shown}, a model built by the factories of `{target.dotted}`"

    def _class_elsewhere(self, analysis: ModuleAnalysis, expression: cst.BaseExpression) -> tuple[ModuleEntry, Target] | None:
        """The project class of another module that ``expression`` names (same-file classes are the per-file
        analysis's), with the analysed module's entry."""
        resolved = self._resolved(analysis, expression)
        if resolved is None or resolved[1].kind != "class" or resolved[1].module == resolved[0].summary.name:
            return None
        return resolved

    def mode_free_class(self, analysis: ModuleAnalysis, expression: cst.BaseExpression) -> bool:
        """The project class (of this module or another) that ``expression`` names has no train/eval
        behaviour: its classes derive from ``torch.nn.Module`` itself and bind only torch modules without a
        mode (``nn.Linear``, ``nn.Embedding``, activations), buffers and project classes of the same kind;
        nothing in them calls dropout or batch norm or reads ``training``. For a project factory, every class it
        returns instances of is so."""
        resolved = self._resolved(analysis, expression)
        if resolved is None:
            return False
        entry, target = resolved
        if target.kind == "class":
            return self.model.class_mode_free(target, entry.path, 0)
        owner, returned = self._factory_classes(entry, target)
        return bool(returned) and all(self.model.class_mode_free(cls, owner.path, 0) for cls in returned)

    def sets_own_eval_mode(self, analysis: ModuleAnalysis, expression: cst.BaseExpression) -> bool:
        resolved = self._resolved(analysis, expression)
        return resolved is not None and resolved[1].kind == "class" and self.model.class_sets_own_eval_mode(resolved[1], resolved[0].path)

    def methods_freeze_self(self, name: str) -> bool:
        return self.model.methods_freeze_self(name)

    def forward_differentiates(self, analysis: ModuleAnalysis, expression: cst.BaseExpression) -> bool:
        resolved = self._resolved(analysis, expression)
        return resolved is not None and resolved[1].kind == "class" and self.model.class_forward_differentiates(resolved[1], resolved[0].path)

    def forwards_differentiate_near(self, analysis: ModuleAnalysis) -> bool:
        """A class whose forward differentiates is defined in the analysed file's folder or a sibling folder (the
        model code of the same program: `code/model/` beside `code/evaluation/`); another sub-project of a
        repository (`reconstruction/PBIDR/code/model/` seen from `reconstruction/gaze/`) is not near."""
        here = os.path.dirname(analysis.context.source.absolute_path())
        for path in self.model.differentiating_modules():
            there = os.path.dirname(os.path.abspath(path))
            common = os.path.commonpath([here, there])
            if all(os.path.relpath(folder, common).count(os.sep) == 0 for folder in (here, there)):
                return True
        return False

    def method_sets_own_eval_mode(self, analysis: ModuleAnalysis, expression: cst.BaseExpression, method: str) -> bool:
        resolved = self._resolved(analysis, expression)
        return resolved is not None and resolved[1].kind == "class" and self.model.method_sets_own_eval_mode(resolved[1], method, resolved[0].path)

    def holds_no_seen_layer(self, analysis: ModuleAnalysis, expression: cst.BaseExpression) -> bool:
        """The project class (of any module) that ``expression`` names derives from ``torch.nn.Module`` alone and
        binds no layer that the analysis can see: only data, torch parts without parameters, instances of
        project classes that are not modules (or are modules of the same kind), and objects of packages outside
        torch and the model libraries (``kaldifeat.Fbank``, a clustering backend), whose insides are not read. Whether
        such a module records a graph or has a mode is unknown, so it is not judged as a model."""
        resolved = self._resolved(analysis, expression)
        return resolved is not None and resolved[1].kind == "class" and self.model.class_holds_no_seen_layer(resolved[1], resolved[0].path, 0)

    def holds_no_parameter(self, analysis: ModuleAnalysis, expression: cst.BaseExpression) -> bool:
        """The project class (of any module) that ``expression`` names derives from ``torch.nn.Module`` alone and
        can hold no parameter: none of its methods makes or registers one (``nn.Parameter``,
        ``register_parameter``, ``add_module``, ``setattr``) or builds a layer that has them, its attributes hold
        data, buffers and modules of the same kind, and an attribute whose value is not known is never called as
        a module. Its forward records no autograd graph (a quantised kernel whose packed weights are buffers)."""
        resolved = self._resolved(analysis, expression)
        return resolved is not None and resolved[1].kind == "class" and self.model.class_holds_no_parameter(resolved[1], resolved[0].path, 0)

    def instances_hold_no_parameter(self, analysis: ModuleAnalysis, expression: cst.BaseExpression) -> bool:
        """:meth:`holds_no_parameter` for the class ``expression`` names and every project subclass of it (any
        depth): ``self`` in the class's methods may be an instance of any of them."""
        resolved = self._resolved(analysis, expression)
        if resolved is None or resolved[1].kind != "class" or not self.model.class_holds_no_parameter(resolved[1], resolved[0].path, 0):
            return False
        for count, (sub, located) in enumerate(self.model.subclasses(resolved[1]), 1):
            if count >= MAX_SUBCLASSES or located is None or not self.model.class_holds_no_parameter(sub, located[0].path, 0):
                return False  # one that may hold a parameter, or too many to tell
        return True

    def model_class(self, analysis: ModuleAnalysis, expression: cst.BaseExpression) -> str | None:
        resolved = self._class_elsewhere(analysis, expression)
        if resolved is None:
            return None
        entry, target = resolved
        return target.dotted if self.model.is_model_class(target, entry.path) else None

    def calls_by_name_guarded(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> bool | None:
        entry = self._entry_for(analysis)
        if entry is None:
            return None
        sites = [
            site
            for caller_entry, _, site in self.model.calls_named(function.name.value)
            if caller_entry.path != entry.path
            and not is_test_path(os.path.relpath(caller_entry.path, self.model.project.root).replace(os.sep, "/"))
        ]
        # Decided from the index, without parsing a caller: a guard written at the call, or on its function.
        return all(site.guarded for site in sites) if sites else None

    def training_caller(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> str | None:
        entry = self._entry_for(analysis)
        if entry is None:
            return None
        for caller_entry, caller, site in self.model.calls_named(function.name.value):
            if caller is not None and caller_entry.path != entry.path and summary_trains(caller):
                return f"`{caller.qualname}` in `{caller_entry.summary.name}`"
        return None

    def other_framework_class(self, analysis: ModuleAnalysis, func: cst.BaseExpression) -> bool:
        """``func`` names a project class whose bases lead to another framework's module class (``nvtripy.Module``,
        ``mlx.nn.Module``): its instances are not torch modules."""
        resolved = self._resolved(analysis, func)
        if resolved is None or resolved[1].kind != "class":
            return False
        _, external = self.model.lineage(resolved[1], resolved[0].path)
        return any(fw.other_framework_base(name) for name in external)

    def plain_project_class(self, analysis: ModuleAnalysis, func: cst.BaseExpression) -> bool:
        """``func`` names a project class of another module that derives from no class outside the project: not
        an nn.Module, whatever methods it has (see :meth:`ProjectModel.is_plain_class`)."""
        resolved = self._resolved(analysis, func)
        return resolved is not None and resolved[1].kind == "class" and self.model.is_plain_class(resolved[1], resolved[0].path)

    def used_by_other_modules(self, analysis: ModuleAnalysis) -> bool:
        """Another file of the project calls a function or builds a class that this module defines: the
        module is a library of the project's code, not only a script."""
        entry = self._entry_for(analysis)
        if entry is None:
            return False
        key = ("used-elsewhere", entry.path)
        if key not in self.model.memo:
            summary = entry.summary
            qualnames = [*summary.functions, *(f"{name}.__init__" for name in summary.classes)]
            self.model.memo[key] = any(self.model.callers(entry, qualname) for qualname in qualnames) or self.model.imported_by_its_package(entry)
        return self.model.memo[key]  # type: ignore[return-value]

    def script_trains(self, analysis: ModuleAnalysis) -> str | None:
        entry = self._entry_for(analysis)
        if entry is None:
            return None
        key = ("script-trains", entry.path)
        if key not in self.model.memo:
            summary = entry.summary
            scopes = [(summary.module_calls, summary.bindings), *((f.calls, {**summary.bindings, **f.locals}) for f in summary.functions.values())]
            self.model.memo[key] = next(
                (reason for calls, local in scopes for site in calls if (reason := self.model.call_trains(entry, site.callee, local, 0))),
                None,
            )
        return self.model.memo[key]  # type: ignore[return-value]

    def package_disables_grad(self, analysis: ModuleAnalysis) -> str | None:
        entry = self._entry_for(analysis)
        if entry is None:
            return None
        key = ("package-grad", entry.path)
        if key in self.model.memo:
            return self.model.memo[key]  # type: ignore[return-value]
        reason = None
        parts = entry.summary.name.split(".")[:-1]
        for size in range(len(parts), 0, -1):
            package = ".".join(parts[:size])
            owner = self.model.entry(package, entry.path)
            if owner is None or owner.path == entry.path:
                continue
            if owner.summary.syntax is not None and "set_grad_enabled" not in owner.summary.syntax.calls:
                continue  # decided from the index, without parsing the package
            other = self._analysis_of(owner.path)
            if other is not None and other.module_disables_grad:
                reason = f"`torch.set_grad_enabled(False)` runs when the package `{package}` is imported"
                break
        self.model.memo[key] = reason
        return reason

    def constructor_disables_grad(self, analysis: ModuleAnalysis, func: cst.BaseExpression, depth: int = 0) -> bool:
        """The project class ``func`` names (of another module) turns autograd off for the thread when it is
        built: its ``__init__`` runs ``torch.set_grad_enabled(False)``, or builds a class that does. Files are
        parsed only where the index shows such a call in a constructor of the class."""
        resolved = self._resolved(analysis, func)
        if resolved is None or resolved[1].kind != "class" or depth > 2:
            return False
        target = resolved[1]
        return self.model.guarded(("constructor-grad", target), lambda: self.model.class_constructor_disables_grad(target, resolved[0].path, depth))

    def holds_submodule(self, analysis: ModuleAnalysis, func: cst.BaseExpression, name: str) -> bool:
        resolved = self._resolved(analysis, func)
        if resolved is None:
            return False
        entry, target = resolved
        if target.kind != "class" or self.model.find_method(target, name) is not None:
            return False
        return any(self.model.holds_model(owner_entry, callee, entry.path) for owner_entry, callee in self.model.attribute_producers(target, name))

    def forward_without_grad(self, analysis: ModuleAnalysis, func: cst.BaseExpression) -> str | None:
        resolved = self._resolved(analysis, func)
        if resolved is None:
            return None
        entry, target = resolved
        if target.kind == "class":
            return self.model.class_forward_without_grad(target, entry.path)
        owner, returned = self._factory_classes(entry, target)
        # A factory: which class it returns may depend on its arguments (a wrapper that guards itself on one
        # branch, the bare network on another); when any of them guards itself, the caller may be guarded.
        for cls in returned:
            reason = self.model.class_forward_without_grad(cls, owner.path)
            if reason is not None:
                return f"`{target.qualname}` returns instances of `{cls.qualname}`, and {reason}"
        return None

    def _factory_classes(self, entry: ModuleEntry, target: Target) -> tuple[ModuleEntry | None, list[Target]]:
        """For a project function ``target`` (named from ``entry``'s module): its module's entry and the project
        classes it returns instances of; ``(None, [])`` for anything else."""
        owner = self.model.entry(target.module, entry.path) if target.kind == "function" else None
        return owner, self.model.returned_classes(owner, target, 0) if owner is not None else []

    def grad_free_decorator(self, analysis: ModuleAnalysis, decorator: cst.BaseExpression) -> bool:
        resolved = self._resolved(analysis, decorator.func if isinstance(decorator, cst.Call) else decorator)
        return resolved is not None and self.model.guard_factory(resolved[1])

    def unseen_project_name(self, analysis: ModuleAnalysis, func: cst.BaseExpression) -> bool:
        entry = self._entry_for(analysis)
        spelled = _spelled(func)
        if entry is None or spelled is None or "()" in spelled:
            return False
        return spelled.partition(".")[0] in entry.summary.imports and self.model.resolve(entry, spelled) is None

    def method_runs_forward(self, analysis: ModuleAnalysis, func: cst.BaseExpression, method: str) -> bool | None:
        resolved = self._resolved(analysis, func)
        if resolved is None or resolved[1].kind != "class":
            return None
        return self.model.class_method_runs_forward(resolved[1], method, resolved[0].path, 0)

    def construction_loads(self, analysis: ModuleAnalysis, func: cst.BaseExpression) -> str | None:
        return self._construction_load(analysis, func, each_time=False)

    def construction_loads_each_time(self, analysis: ModuleAnalysis, func: cst.BaseExpression) -> bool:
        """:meth:`construction_loads` read from the loading calls' modules: a load kept in a global or attribute only
        while that is empty (``if "rmvpe" not in KERNELS: KERNELS["rmvpe"] = RMVPE(path)``) runs once. Asked only of
        a construction about to be reported: it parses those modules."""
        return self._construction_load(analysis, func, each_time=True) is not None

    def _construction_load(self, analysis: ModuleAnalysis, func: cst.BaseExpression, each_time: bool) -> str | None:
        # A class of the same file too: its `__init__` is a setup hook, whose loads are reported at the construction
        resolved = self._resolved(analysis, func)
        if resolved is None or resolved[1].kind != "class":
            return None
        entry, target = resolved
        key = ("loads each time" if each_time else "loads", entry.path, target)
        if key not in self.model.memo:
            accept = self._loads_each_construction if each_time else None
            self.model.memo[key] = self.model.initialiser_loads(target, entry.path, accept=accept)
        return self.model.memo[key]  # type: ignore[return-value]

    def inherited_pretrained(self, analysis: ModuleAnalysis, func: cst.BaseExpression) -> str | None:
        if not isinstance(func, cst.Attribute) or func.attr.value not in fw.PRETRAINED_METHODS:
            return None
        resolved = self._resolved(analysis, func.value)
        if resolved is None or resolved[1].kind != "class":
            return None
        chain, external = self.model.lineage(resolved[1], resolved[0].path)
        if any(func.attr.value in cls.methods for _, cls in chain):
            return None  # the project's own loader: helper_loads reads what it does
        base = next((name for name in sorted(external) if name.startswith(fw.FROM_PRETRAINED_LIBRARIES) and not name.endswith(fw.NON_MODEL_PRETRAINED)), None)
        return f"`{resolved[1].qualname}` derives from `{base}`, whose `{func.attr.value}` loads its weights" if base else None

    def helper_loads(self, analysis: ModuleAnalysis, func: cst.BaseExpression) -> str | None:
        resolved = self._resolved(analysis, func)
        if resolved is None:
            # a method of what a local holds (`runner = Runner(name)`, then `runner.load_models()`)
            call = analysis.parent(func)
            located = self._graph_callee(analysis, call) if isinstance(call, cst.Call) and call.func is func else None
        elif resolved[1].kind != "function" or resolved[1].module == resolved[0].summary.name:
            return None
        else:
            located = self.model.function_of(resolved[1])
        if located is None or summary_trains(located[1]):
            return None  # a training job (a web UI's "Train" button) loads what it trains
        if any(caches(self._decorator_name(located[0], decorator)) for decorator in located[1].decorators):
            return None  # `@st.cache_resource`, `@lru_cache`: it loads once, each later call returns what it loaded
        found: list[tuple[ModuleAnalysis, cst.Call]] = []
        call = analysis.parent(func)
        caller = call if isinstance(call, cst.Call) and call.func is func else None

        def accept(entry: ModuleEntry, site: CallSite) -> bool:
            if not self._loads_each_call(entry, site, found):
                return False
            # `create_llm(name, "NVIDIA")` never takes the helper's `elif model_type == "LOCAL":` branch
            return caller is None or not found or not _branch_ruled_out(found[-1][0], found[-1][1], caller)

        # A helper's construction of a loading class counts (`UnetModel(path).model`): where every call of the helper
        # runs per request, its module reports the construction (and `_reported_where_written` says so).
        loader = self.model.helper_loader(*located, accept=accept, objects=True)
        if loader is None or (found and _reported_where_written(*found[-1])):
            return None
        return f"`{located[1].qualname}`, in `{located[0].summary.name}`, calls `{loader}(...)`"

    def _decorator_name(self, entry: ModuleEntry, spelled: str) -> str:
        """A decorator of a function of ``entry``'s module, as a qualified name where its imports resolve it."""
        resolved = self.model.resolve(entry, spelled)
        return resolved.module if resolved is not None and resolved.kind == "external" else spelled

    def _loads_each_call(self, entry: ModuleEntry, site: CallSite, found: list[tuple[ModuleAnalysis, cst.Call]]) -> bool:
        """The loading call ``site`` of a helper in another module runs on each call of the helper: not one kept in
        a global or attribute only while that is empty (``if MODEL is None: MODEL = load()``), read from the helper's
        module (and added to ``found``)."""
        located = self._located_call(entry, site)
        if located is None:
            return True
        found.append(located)
        return not kept_or_keyed(*located) or loads_on_construction(*located)

    def _loads_each_construction(self, entry: ModuleEntry, site: CallSite) -> bool:
        """As :meth:`_loads_each_call`, for a load its class's construction reaches: one kept only in the instance's
        own attributes runs again for each new instance."""
        located = self._located_call(entry, site)
        return located is None or not kept_or_keyed(*located) or kept_in_the_instance(*located)

    def helper_exports(self, analysis: ModuleAnalysis, func: cst.BaseExpression) -> str | None:
        resolved = self._resolved(analysis, func)
        if resolved is None or resolved[1].kind != "function" or resolved[1].module == resolved[0].summary.name:
            return None  # a helper of the same module is the per-file analysis's own business
        located = self.model.function_of(resolved[1])
        return self.model.helper_exporter(*located) if located is not None else None

    # -- autograd graphs across modules ------------------------------------------------------------------
    def graph_summary(self, analysis: ModuleAnalysis, call: cst.Call) -> GraphSummary | None:
        located = self._graph_callee(analysis, call)
        if located is None:
            return None
        key = ("graph-summary", located[0].path, located[1].qualname)
        if key in self.model.memo:
            return self.model.memo[key]  # type: ignore[return-value]
        with self.model.hop() as allowed:
            if not allowed:
                return None  # not memoised: a shallower question may still answer it
            callee = self._analysis_of(located[0].path)
            definition = _definition_at(callee, located[1]) if callee is not None else None
            summary = callee.autograd_graphs.summary(definition) if definition is not None else None
        self.model.memo[key] = summary
        return summary

    def _graph_callee(self, analysis: ModuleAnalysis, call: cst.Call) -> tuple[ModuleEntry, FunctionSummary] | None:
        """The project function of another module that ``call`` runs (not a class: its construction)."""
        entry = self._entry_for(analysis)
        spelled = _spelled(call.func)
        if entry is None or spelled is None:
            return None
        enclosing = analysis.enclosing_function(call)
        caller = None
        if enclosing is not None:
            located = self._function_target(analysis, enclosing)
            found = self.model.function_of(Target("function", located[0].summary.name, located[1])) if located is not None else None
            caller = found[1] if found is not None else None
        target = self.model.resolve_call(entry, caller, spelled)
        if target is None or target.kind != "function" or target.qualname.endswith(".__init__"):
            return None
        located = self.model.function_of(target)
        if located is None or located[0].path == entry.path:
            return None
        return located

    def graph_callers(self, analysis: ModuleAnalysis, function: cst.FunctionDef) -> list[tuple[ModuleAnalysis, cst.Call]] | None:
        located = self._function_target(analysis, function)
        if located is None:
            return None
        entry, qualname = located
        key = ("graph-callers", entry.path, qualname)
        if key not in self.model.memo:
            self.model.project.adopt(analysis)  # the callers' questions about this file then reach the same tree
            self.model.memo[key] = self._graph_callers(entry, qualname)
        return self.model.memo[key]  # type: ignore[return-value]

    def _graph_callers(self, entry: ModuleEntry, qualname: str) -> list[tuple[ModuleAnalysis, cst.Call]] | None:
        owner, _, name = qualname.rpartition(".")
        if owner:
            chain, external = self.model.lineage(Target("class", entry.summary.name, owner), entry.path)
            if external or any(name in cls.methods for _, cls in chain[1:]):
                return None  # a framework base, or a project base calling the method it overrides, may call it
        wanted = Target("function", entry.summary.name, qualname)
        sites: list[tuple[ModuleEntry, CallSite]] = []
        for caller_entry, caller, site in self.model.calls_named(name):
            if caller_entry.path == entry.path:
                continue  # same-file calls are the file's own analysis's business
            target = self.model.resolve_call(caller_entry, caller, site.callee)
            if target is None:
                return None  # ``agent.update(...)`` on something the index cannot follow: it may be this one
            if target == wanted:
                sites.append((caller_entry, site))
        # A use of the name that is not a call (a callback, an alias, a registry) may call it unseen.
        pattern = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
        mentions = []
        for path in self.model.by_path:
            if path == entry.path:
                continue
            try:
                if pattern.search(read_bytes(path)):
                    mentions.append(path)
            except OSError:
                return None
        if len(mentions) > _MAX_MENTIONS:
            return None
        found = []
        for path in mentions:
            analysis = self._analysis_of(path)
            if analysis is None or referenced_besides_calls(analysis, name):
                return None
        for caller_entry, site in sites:
            call = self._located_call(caller_entry, site)
            if call is None:
                return None
            found.append(call)
        return found

    def inherited_attribute(self, analysis: ModuleAnalysis, cls: cst.ClassDef, name: str) -> str | None:
        entry = self._entry_for(analysis)
        qual = _class_qualname(analysis, cls) if entry is not None else None
        if entry is None or qual is None:
            return None
        chain, _ = self.model.lineage(Target("class", entry.summary.name, qual), entry.path)
        for owner_entry, owner in chain[1:]:
            if owner_entry.path == entry.path:
                continue
            for callee in owner.attributes.get(name, ()):
                if self.model.holds_model(owner_entry, callee, entry.path):
                    return f"`self.{name}`, a model that the base class `{owner.name}` of `{owner_entry.summary.name}` binds"
        return None


def _spelled(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = _spelled(node.value)
        return f"{inner}.{node.attr.value}" if inner else None
    return None


def _class_qualname(analysis: ModuleAnalysis, cls: cst.ClassDef) -> str | None:
    names = [cls.name.value]
    for ancestor in analysis.ancestors(cls):
        if isinstance(ancestor, cst.ClassDef):
            names.append(ancestor.name.value)
        elif isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return None
    return ".".join(reversed(names))


def _definition_at(analysis: ModuleAnalysis, function: FunctionSummary) -> cst.FunctionDef | None:
    """The LibCST definition that ``ast`` summarised as ``function`` (its name, on the line of its ``def``)."""
    name = function.qualname.rsplit(".", 1)[-1]
    return next((node for node in analysis.functions_on(function.line) if node.name.value == name), None)


def _call_at(analysis: ModuleAnalysis, site: CallSite) -> cst.Call | None:
    """The LibCST call that ``ast`` saw at ``site`` (same line, same callee, same order on the line)."""
    terminal = site.callee.rsplit(".", 1)[-1]
    starts = analysis.call_starts
    if starts is not None:  # where `ast` saw each call, as the index did
        on_line = [s.call for s in analysis.index.sites(terminal) if starts[s.call][0] == site.line]
        on_line.sort(key=lambda call: starts[call][1])
    else:
        positions = analysis.positions
        on_line = [
            s.call for s in analysis.index.sites(terminal)
            if positions.may_stand_on(s.call, site.line) and positions[s.call].start.line == site.line
        ]
        on_line.sort(key=lambda call: positions[call].start.column)
    return on_line[site.ordinal] if site.ordinal < len(on_line) else None


def _branch_ruled_out(analysis: ModuleAnalysis, load: cst.Call, caller: cst.Call) -> bool:
    """``load`` sits in a branch of its function that a test of a parameter against a literal selects (``if
    model_type == "LOCAL":``, an ``elif`` of one, or the ``else`` after it), and ``caller`` passes a literal that
    takes another branch (``create_llm(name, "NVIDIA")``), or leaves the parameter to a default that does."""
    function = analysis.enclosing_function(load)
    if function is None:
        return False
    bound = analysis.enclosing_class(function) is not None
    child: cst.CSTNode = load
    for ancestor in analysis.ancestors(load):
        if ancestor is function:
            return False
        if isinstance(ancestor, cst.If):
            tested = _parameter_tested_against(ancestor.test, function)
            if tested is not None:
                param, literal = tested
                passed = passed_argument(caller, parameter_position(function, param, bound=bound), param.name.value)
                value = literal_value(passed) if passed is not None else literal_value(param.default) if param.default is not None else NOT_LITERAL
                if value is not NOT_LITERAL and ((child is ancestor.body and value != literal) or (child is ancestor.orelse and value == literal)):
                    return True
        child = ancestor
    return False


def _parameter_tested_against(test: cst.BaseExpression, function: cst.FunctionDef) -> tuple[cst.Param, object] | None:
    """``param == "literal"`` (either way round) for a parameter of ``function``: the parameter and the literal."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal)):
        return None
    left, right = test.left, test.comparisons[0].comparator
    for name, other in ((left, right), (right, left)):
        literal = literal_value(other)
        if isinstance(name, cst.Name) and literal is not NOT_LITERAL:
            param = next((p for p in named_parameters(function) if p.name.value == name.value), None)
            if param is not None:
                return param, literal
    return None


def _reported_where_written(analysis: ModuleAnalysis, load: cst.Call) -> bool:
    """The helper's load is reported in its own module: every call of the helper runs per request, so that module
    says it once, as a helper of the same file is reported at its load (not at each of its callers)."""
    built = (terminal_name(load.func) or "")[:1].isupper()  # a project class's construction, which loads
    return (built or load_kind(analysis, load) is not None) and runs_per_request(analysis, load) is not None
