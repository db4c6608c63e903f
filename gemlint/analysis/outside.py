"""What the per-file analyses may ask of the rest of the project.

The project model (:mod:`gemlint.project.model`) sits a layer above the per-file analysis and implements
this protocol; the engine hands it to each file's analysis. A file analysed alone (the flake8 plugin, a
snippet) has no outside and keeps its single-file answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.analysis.autograd_graphs import FunctionSummary
    from gemlint.analysis.module import ModuleAnalysis, Verdict


class OutsideFacts(Protocol):
    def gives_context(self, analysis: "ModuleAnalysis") -> bool:
        """Whether code of the module may run per request because of other modules (its callers, its bases)."""

    def class_hooks(self, analysis: "ModuleAnalysis", cls: cst.ClassDef) -> frozenset[str] | None:
        """The per-request hooks of ``cls`` through bases in other modules or a framework protocol
        (an empty set: every public method), or None when it is not a serving class."""

    def caller_verdicts(self, analysis: "ModuleAnalysis", function: cst.FunctionDef) -> list["Verdict"]:
        """The contexts of the calls of ``function`` made in other modules of the project."""

    def may_be_called_elsewhere(self, analysis: "ModuleAnalysis", function: cst.FunctionDef) -> bool:
        """Whether code outside the file may call ``function``: the module is part of a package (its functions are
        the package's to offer), or another module of the project calls something so named (resolved or not)."""

    def callers_guarded(self, analysis: "ModuleAnalysis", function: cst.FunctionDef, depth: int) -> list[bool]:
        """For each call of ``function`` from inference code in another module, whether it is grad-free."""

    def model_producer(self, analysis: "ModuleAnalysis", func: cst.BaseExpression) -> tuple[str, str] | None:
        """``("constructed" | "evaluated" | "loaded", description)`` when ``func`` names a project nn.Module class
        or a project factory whose returns are models (``evaluated``: the factory already calls ``.eval()``;
        ``loaded``: it returns only whole modules read back, in the mode they were saved in)."""

    def forward_without_grad(self, analysis: "ModuleAnalysis", func: cst.BaseExpression) -> str | None:
        """Why instances of the project class ``func`` names run their ``forward`` without gradients (a
        grad-free decorator on it, in another module), or None."""

    def helper_exports(self, analysis: "ModuleAnalysis", func: cst.BaseExpression) -> str | None:
        """The exporter (``torch.export.export``, ``torch.onnx.export``, ...) that the project function ``func`` names
        (in another module) calls, itself or through its own helpers; None when it calls none."""

    def method_runs_forward(self, analysis: "ModuleAnalysis", func: cst.BaseExpression, method: str) -> bool | None:
        """Whether ``method`` of the project class ``func`` names (in another module) runs part of a forward pass
        with autograd on: it calls ``self``'s submodules outside a grad-free guard (directly or through
        another of its methods). False when its guard covers them (a grad-free decorator, a ``with
        torch.inference_mode()`` around every such call); None when the class or the method is not the
        project's (a library base class may define it)."""

    def project_package(self, name: str) -> bool:
        """``name`` is the top-level name of a project module or package (an import of it may re-export what
        another package defines: :meth:`external_name`)."""

    def external_name(self, dotted: str) -> str | None:
        """What a qualified name that goes through a project module names outside the project, where that
        module imports it (``pkg.utils.torch_utils.torch.jit.trace`` -> ``torch.jit.trace``), or None."""

    def star_sources(self, analysis: "ModuleAnalysis", modules: tuple[str, ...], name: str) -> tuple[str, ...]:
        """Of ``modules``, which ``analysis``'s module imports with ``from module import *``, the project modules
        that define or bind ``name`` at their top level (empty: none does)."""

    def grad_free_decorator(self, analysis: "ModuleAnalysis", decorator: cst.BaseExpression) -> bool:
        """``decorator`` (``@smart_inference_mode()``, ``@no_grad_wrapper``) is a project function that wraps what
        it decorates in ``torch.no_grad``/``inference_mode``: its body names one of them."""

    def unseen_project_name(self, analysis: "ModuleAnalysis", func: cst.BaseExpression) -> bool:
        """``func`` is imported from the project's own package but names nothing the index holds (a module
        missing from the tree, a name bound at run time): a project class whose code cannot be read, not a
        library's."""

    def plain_project_class(self, analysis: "ModuleAnalysis", func: cst.BaseExpression) -> bool:
        """Whether ``func`` names a project class of another module that derives from no class outside the project
        (no nn.Module, whatever methods it has)."""

    def hub_entry_forward_without_grad(self, entry_name: str) -> str | None:
        """Why the model that the project's own ``hubconf.py`` entry ``entry_name`` builds runs its ``forward``
        without gradients (every class it returns has a grad-free decorator on ``forward``), or None."""

    def hub_folders(self, entry_name: str) -> list[str]:
        """The names of the project's folders whose ``hubconf.py`` defines the entry ``entry_name``."""

    def inherited_attribute(self, analysis: "ModuleAnalysis", cls: cst.ClassDef, name: str) -> str | None:
        """Why ``self.<name>`` of ``cls`` holds a model when a project base class in another module binds it."""

    def helper_loads(self, analysis: "ModuleAnalysis", func: cst.BaseExpression) -> str | None:
        """How calling the project function ``func`` names (in another module) loads a model, to return or to run
        (its body calls a model loader, or ``torch.load`` and ``load_state_dict``), or None; None too when that load
        is reported where it is written (every call of the function runs per request)."""

    def inherited_pretrained(self, analysis: "ModuleAnalysis", func: cst.BaseExpression) -> str | None:
        """``Pipe.from_pretrained`` of a project class (of another module) that derives from a library's model or
        pipeline class without a loader of its own: how the inherited loader loads, or None."""

    def construction_loads(self, analysis: "ModuleAnalysis", func: cst.BaseExpression) -> str | None:
        """How constructing the project class ``func`` names loads weights from storage (its ``__init__``,
        in another module, calls ``torch.load``, ``from_pretrained`` and the like), or None."""

    def construction_loads_each_time(self, analysis: "ModuleAnalysis", func: cst.BaseExpression) -> bool:
        """Whether the load :meth:`construction_loads` found runs on each construction: not one kept in a global or
        attribute only while that is empty."""

    def imported_model(self, analysis: "ModuleAnalysis", spelled: str) -> str | None:
        """Why the dotted name ``spelled`` (``model``, ``state.model``), imported from another project module, holds
        a model whose forward records a graph: what that module binds it to at its top level, as its own tracker
        knows it (:meth:`~gemlint.analysis.models.ModelTracker.exported_model`); None otherwise."""

    def held_model(self, analysis: "ModuleAnalysis", func: cst.BaseExpression, member: str) -> str | None:
        """Why ``self.<member>`` of instances of the plain project class ``func`` names (in another module, no
        nn.Module) holds a model whose forward records a graph, as that module's tracker knows it
        (:meth:`~gemlint.analysis.models.ModelTracker.instance_member`); None otherwise."""

    def per_request_dependents(self, analysis: "ModuleAnalysis", function: cst.FunctionDef) -> list[str]:
        """For each function of another module (tests aside) whose parameter FastAPI gives with ``Depends(function)``
        and that runs per request (a route): why, as a reason for ``function`` to run on every request."""

    def models_passed(self, analysis: "ModuleAnalysis", function: cst.FunctionDef, param: cst.Param) -> list[str | None]:
        """For each call of ``function`` from another module (tests aside): why the argument it passes for
        ``param`` is a model, or None when it is not known to be one. Empty: no such calls, or too many."""

    def calls_by_name_guarded(self, analysis: "ModuleAnalysis", function: cst.FunctionDef) -> bool | None:
        """Whether every call, in other modules (tests aside), of a function with ``function``'s name (on any
        receiver) is written under a grad-free guard; None when there is no such call."""

    def training_caller(self, analysis: "ModuleAnalysis", function: cst.FunctionDef) -> str | None:
        """A function of another module that trains (backward, optimizer step) and calls a function of this
        name on any receiver, named for a message; None when there is none."""

    def script_trains(self, analysis: "ModuleAnalysis") -> str | None:
        """Why the module trains through the project: it calls a project function, or a method of a project class
        it builds (``TrainLoop(...).run_loop()``), that runs a training step in another module (directly or a few
        calls deep), named for a message; None when it does not."""

    def package_disables_grad(self, analysis: "ModuleAnalysis") -> str | None:
        """Why the module's code runs with autograd off process-wide: a package it belongs to calls
        ``torch.set_grad_enabled(False)`` at module level of its ``__init__`` (run before any of its modules)."""

    def holds_submodule(self, analysis: "ModuleAnalysis", func: cst.BaseExpression, name: str) -> bool:
        """Whether instances of the project class ``func`` names (in another module) hold a model in
        ``self.<name>`` and have no method of that name."""

    def mode_free_class(self, analysis: "ModuleAnalysis", expression: cst.BaseExpression) -> bool:
        """Whether the project class (of any module) that ``expression`` names behaves the same in train and
        eval mode: only buffers, torch modules without a mode and project classes of the same kind (for a project
        factory: every class it returns)."""

    def holds_no_seen_layer(self, analysis: "ModuleAnalysis", expression: cst.BaseExpression) -> bool:
        """Whether the project class that ``expression`` names derives from ``torch.nn.Module`` alone and binds no
        layer the analysis can see (only data, parameter-free torch parts, plain project objects and objects of
        packages outside torch and the model libraries)."""

    def holds_no_parameter(self, analysis: "ModuleAnalysis", expression: cst.BaseExpression) -> bool:
        """Whether the project class that ``expression`` names derives from ``torch.nn.Module`` alone and can hold
        no parameter (only data, buffers and modules of the same kind): its forward records no autograd graph."""

    def instances_hold_no_parameter(self, analysis: "ModuleAnalysis", expression: cst.BaseExpression) -> bool:
        """Whether the project class that ``expression`` names, and every project subclass of it, can hold no
        parameter: ``self`` in its methods records no autograd graph."""

    def sets_own_eval_mode(self, analysis: "ModuleAnalysis", expression: cst.BaseExpression) -> bool:
        """Whether the project class that ``expression`` names calls ``.eval()`` in its ``__init__``, or is a
        wrapper without ``forward`` whose methods put its parts in eval mode (and none back in training mode)."""

    def methods_freeze_self(self, name: str) -> bool:
        """Whether every method ``name`` of the project's classes (one at least) freezes all of its instance's
        parameters."""

    def forward_differentiates(self, analysis: "ModuleAnalysis", expression: cst.BaseExpression) -> bool:
        """Whether the ``forward`` of the project class that ``expression`` names computes gradients
        (``torch.autograd.grad``, itself or through the methods it calls on its parts): it needs autograd."""

    def forwards_differentiate_near(self, analysis: "ModuleAnalysis") -> bool:
        """Whether a project class whose ``forward`` computes gradients is defined in the folder of ``analysis``'s
        file or a sibling folder."""

    def method_sets_own_eval_mode(self, analysis: "ModuleAnalysis", expression: cst.BaseExpression, method: str) -> bool:
        """Whether the method ``method`` of the project class ``expression`` names (in another module) puts the
        instance in eval mode itself (``self.eval()`` in a vocoder's ``generate``)."""

    def model_class(self, analysis: "ModuleAnalysis", expression: cst.BaseExpression) -> str | None:
        """The dotted name of the project nn.Module class (in another module) that ``expression`` names, or None."""

    def handed_to_gradio(self, analysis: "ModuleAnalysis", function: cst.FunctionDef) -> str | None:
        """The module of another file that hands ``function`` to Gradio (``gr.Interface(fn=predict)`` with
        ``predict`` imported), which calls it on every event; None when none does."""

    def routed_elsewhere(self, analysis: "ModuleAnalysis", function: cst.FunctionDef) -> str | None:
        """The module of another file whose route table hands ``function`` to a web framework (Django's
        ``path("predict/", views.predict)`` in ``urls.py``), which calls it on every request; None when none does."""

    def per_request_callers(self, analysis: "ModuleAnalysis", function: cst.FunctionDef) -> list[str | None]:
        """For each call of ``function`` from another module: why the caller runs on every request, or None
        when it does not (a start-up hook, module level, code that is not request code)."""

    def graph_summary(self, analysis: "ModuleAnalysis", call: cst.Call) -> "FunctionSummary | None":
        """What the project function in another module that ``call`` runs does with the autograd graphs it is
        given and returns, or None when ``call`` runs no such function (or the walk is too deep)."""

    def graph_callers(self, analysis: "ModuleAnalysis", function: cst.FunctionDef) -> "list[tuple[ModuleAnalysis, cst.Call]] | None":
        """Every call of ``function`` made in the other modules of the project, parsed; None when one may be
        missed: a call by its name that resolves to nothing known, a use of its name that is not a call, a
        method a framework base class may call."""
