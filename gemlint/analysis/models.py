"""Model objects (SPEC §2, "Model objects"): which expressions hold a ``torch.nn.Module``, where it came
from, what runs its forward pass, and what is done to its mode and parameters.

Use it through ``analysis.models`` (one tracker per file, every answer cached)::

    tracker = analysis.models
    tracker.is_model(expr)          # a reason ("`Net(...)`, an nn.Module subclass of this file") or None
    tracker.origins(expr)           # every ModelOrigin the expression may hold
    tracker.forward_call(call)      # True for model(x), model.forward(x), self.net(x); never .generate(...)
    tracker.forward_receiver(call)  # the model expression of a forward call, or None
    tracker.frozen(expr)            # why the model's parameters are all frozen, or None
    tracker.set_to_eval(origin)     # whether anything in the file puts that model in eval mode
    tracker.mode_call(call)         # "eval" / "train" / "unknown" for x.eval(), x.train(...); else None
    tracker.producer(call)          # the ModelOrigin a constructor or loader call creates, or None
    tracker.constructions()         # models built in code (not submodules), with their binding statements
    tracker.uses()                  # (call, model) for every forward call and .generate(...) of a model
    tracker.inside_module_forward(node)  # node runs inside a module's own forward pass
    tracker.is_model_class(classdef)     # a class of this file that is an nn.Module

An origin is the *producer* of a model: the constructor or loader call, the parameter that receives one,
``self`` in a module's own method. Names, ``self.<attr>`` / class attributes, parameters (through every
same-file caller), same-file functions that return models and mode-keeping wrappers (``.to()``,
``torch.compile``, ``DataParallel``, ...) are followed back to their producers, so two expressions hold the
same model when their origins intersect. Names are resolved with LibCST's qualified names and scopes,
never by spelling alone.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Iterator

import libcst as cst
from libcst.metadata import Assignment, GlobalScope

from gemlint.analysis import correlated
from gemlint.analysis import frameworks as fw
from gemlint.analysis.dependencies import dependency_of
from gemlint.analysis.scopes import references_of
from gemlint.analysis.triage import is_test_class
from gemlint.analysis.syntax import (
    NOT_LITERAL,
    argument,
    assignment_value,
    dotted_name,
    is_member,
    is_name,
    literal_value,
    named_parameters,
    parameter_position,
    passed_argument,
    root_name,
    terminal_name,
)
from gemlint.discovery import local_top_level_modules

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.analysis.module import ModuleAnalysis

#: Annotations of a class object rather than an instance (``layer_class: Type[Layer] = Layer``).
_CLASS_ANNOTATIONS = frozenset({"typing.Type", "builtins.type", "type", "typing_extensions.Type"})
_MAX_DEPTH = 12
#: torch functions that make a tensor from values or a shape, and the methods that move or cast one.
_TENSOR_FACTORIES = frozenset({"tensor", "as_tensor", "from_numpy", "ones", "zeros", "full", "arange", "linspace", "eye", "empty"})
_TENSOR_MOVES = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "long", "int", "view", "reshape", "unsqueeze"})
_ULTRALYTICS = ("ultralytics.",)
#: The packages whose names `producer` compares a call with: loaders, pretrained constructors, vision model
#: constructors (timm, torchvision), torch.nn classes, hub model classes (transformers, diffusers).
_PRODUCER_LIBRARIES = frozenset(
    name.partition(".")[0] for name in (*fw.MODEL_LOADERS, *fw.PRETRAINED_CONSTRUCTORS, *fw.TIMM_CONSTRUCTORS)
) | {"timm", "torchvision", "torch", "transformers", "diffusers"}
_HF_MODEL_NAME = re.compile(r"Model|For[A-Z]|^Autoencoder|^PriorTransformer$|Adapter$|^SentenceTransformer$|^CrossEncoder$")


class Origin(enum.Enum):
    #: Built in code (project nn.Module subclass, torchvision/timm, torch.nn, ``from_config``,
    #: Lightning ``load_from_checkpoint``): training mode until ``.eval()``.
    CONSTRUCTED = "constructed"
    #: ``from_pretrained`` and pretrained-model constructors: returned in eval mode.
    PRETRAINED = "pretrained"
    #: ``torch.load`` / ``torch.jit.load`` / ``torch.hub.load``: a whole module in its saved, unknown mode.
    LOADED = "loaded"
    #: A parameter, name or attribute that is evidently a model (annotation, module-only methods, callers).
    EVIDENT = "evident"
    #: ``self`` in a method of an nn.Module subclass.
    SELF = "self"
    #: An attribute a serving framework's base class sets (TorchServe's ``self.model``).
    FRAMEWORK = "framework"


@dataclass(frozen=True)
class ModelOrigin:
    kind: Origin
    #: The producing call, the parameter, the class, ...: origins are equal when their nodes are.
    node: cst.CSTNode
    #: How to name it in a message, e.g. "`Net(...)`, an nn.Module subclass defined in this file".
    description: str
    #: A project class taken for a model by how it is used, whose definition the analysis did not find: what
    #: layers it holds (and so whether its mode matters) is unknown.
    unseen_class: bool = field(default=False, compare=False)
    #: A project class that can hold no parameter (only data and buffers): a model for its mode, not for autograd.
    parameter_free: bool = field(default=False, compare=False)


class ModelTracker:
    """Answers "is this a model, and which one" for one module; see the module docstring."""

    def __init__(self, analysis: ModuleAnalysis) -> None:
        self.analysis = analysis
        self._origins: dict[cst.CSTNode, tuple[ModelOrigin, ...]] = {}
        self._direct: dict[cst.CSTNode, tuple[ModelOrigin, ...]] = {}
        self._in_progress: set[tuple[cst.CSTNode, bool]] = set()
        self._class_cache: dict[cst.ClassDef, bool] = {}
        self._random_weights: dict[cst.CSTNode, bool] = {}
        self._submodule_runners: dict[cst.FunctionDef, bool] = {}
        # Whether an assignment's references are used as a module: every reference of a name reassigned many
        # times asks it of every assignment (LibCST's scopes do not follow the flow), so it is answered once.
        self._used_as_module: dict[Assignment, bool] = {}
        self._members_used_as_module: dict[tuple[cst.ClassDef, str], bool] = {}

    # -- public questions ----------------------------------------------------------------
    def is_model(self, expression: cst.BaseExpression) -> str | None:
        """Why ``expression`` holds a model object, or None."""
        found = self.origins(expression)
        return found[0].description if found else None

    def origins(self, expression: cst.BaseExpression) -> tuple[ModelOrigin, ...]:
        """Every producer whose model ``expression`` may hold (empty: not known to be a model)."""
        return self._resolve(expression, follow_names=True, depth=0)

    def direct_origins(self, expression: cst.BaseExpression) -> tuple[ModelOrigin, ...]:
        """The producers ``expression`` itself builds or wraps, without looking up names (``Net().to(d)``,
        ``build_model()`` of a same-file function that returns a construction)."""
        return self._resolve(expression, follow_names=False, depth=0)

    def forward_receiver(self, call: cst.Call) -> cst.BaseExpression | None:
        """The model of a forward call: ``model`` in ``model(x)`` / ``model.forward(x)`` / ``self.net(x)``.

        ``model.generate(...)`` and pipelines are not forward calls: generate runs under no_grad, and
        pipelines (transformers, diffusers) are not modules and run their models without gradients.
        """
        func = call.func
        if isinstance(func, cst.Attribute) and (func.attr.value == "forward" or self._runs_forward_method(func)):
            receiver = func.value
        elif isinstance(func, (cst.Name, cst.Attribute)):
            receiver = func
        elif isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute) and func.func.attr.value in _RUNS_AS_ITSELF:
            receiver = func  # `net.to(device)(x)`: the module moved (or put in a mode) and run at once
        else:
            return None
        # `model.encoder(x)` runs a submodule's forward; `model.get_text_features(x)` a method: told apart
        # by the model's class (see _submodule_origins), and unknown classes give no origins.
        origins = self.origins(receiver)
        if not origins or self._result_used_as_module(call) or self._returned_on_another_branch(receiver, call):
            return None
        if all(self._guards_itself(origin) for origin in origins):
            return None  # a hub wrapper whose own forward runs without gradients
        if any(self._module_argument(arg.value) for arg in call.args):
            # Handed a model, the callee runs it itself (`face2paint(generator, image)` from a hub entry point
            # that returns a function): models take tensors, and how the callee runs this one is not known here.
            return None
        return receiver

    def _returned_on_another_branch(self, receiver: cst.BaseExpression, use: cst.CSTNode) -> bool:
        """``receiver`` is a name bound only to calls of a factory of this file that builds its models only under
        ``if <param> == <literal>:``, and ``use`` runs only where the argument each call passed for that parameter
        is not that literal (:mod:`gemlint.analysis.correlated`): there, the factory returned no model."""
        if not isinstance(receiver, cst.Name):
            return False
        conditions = set()
        for origin in self.origins(receiver):
            function = self.analysis.enclosing_function(origin.node)
            condition = correlated.arm_condition(self.analysis, origin.node, function) if function is not None else None
            if condition is None:
                return False
            conditions.add((function, *condition))
        if len(conditions) != 1:
            return False
        ((function, param, literal),) = conditions
        values = self.analysis.assigned_values(receiver)
        return bool(values) and all(
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and self.analysis.module_functions.get(value.func.value) is function
            and correlated.call_excluded(self.analysis, value, function, param, literal, use)
            for value in values
        )

    def _runs_forward_method(self, func: cst.Attribute) -> bool:
        """``model.encode_image(x)``: a method of the model that runs part of its forward. For a class of this
        file, a public method its ``forward`` calls (so the forwards inside it are judged where the model runs,
        see :meth:`inside_module_forward`) that runs a submodule and has no grad-free decorator; for library
        models, whose classes are not read, the methods of :data:`fw.LIBRARY_FORWARD_METHODS`."""
        name = func.attr.value
        if name.startswith("_") or name in ("forward", "__call__"):
            return False
        origins = self.origins(func.value)
        if not origins:
            return False
        outside = self.analysis.outside
        for origin in origins:
            cls = self._constructed_class(origin)
            if cls is None:
                # A project class of another module: its method's body says; a library's: the known methods.
                constructed = origin.node if origin.kind is Origin.CONSTRUCTED and isinstance(origin.node, cst.Call) else None
                runs = outside.method_runs_forward(self.analysis, constructed.func, name) if constructed is not None and outside is not None else None
                if runs is False or runs is None and name not in fw.LIBRARY_FORWARD_METHODS:
                    return False
                if runs is None and self._unseen_project_class(origin.node if isinstance(origin.node, cst.Call) else func.value):
                    return False
                continue
            method = self._method_of(cls, name)
            if method is None or method not in self._forward_part_methods or not self._runs_submodules(method):
                return False
            if any(self.analysis.decorator_grad_mode(d.decorator) == "off" for d in method.decorators):
                return False
        return True

    def _unseen_project_class(self, producer: cst.BaseExpression) -> bool:
        """The model comes from a project class whose code is not in the tree (``Moondream.from_pretrained``
        with ``Moondream`` imported from a module of the project's package that is missing): what its methods
        do is not known, and it is not a library's class either. ``producer`` is the producing call, or the
        name the model is bound to."""
        outside = self.analysis.outside
        if outside is None:
            return False
        values = [producer] if isinstance(producer, cst.Call) else self.analysis.bound_values(producer)
        for value in values:
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call):
                value = value.func.value  # `Net.from_pretrained(...).to(device)`: the producing call
            if not isinstance(value, cst.Call):
                continue
            func = value.func
            if outside.unseen_project_name(self.analysis, func.value if isinstance(func, cst.Attribute) else func):
                return True
        return False

    def _runs_submodules(self, method: cst.FunctionDef) -> bool:
        """``method`` (a part of a model's forward) calls a submodule, itself, or another such part that does."""
        known = self._submodule_runners
        if method in known:
            return known[method]
        known[method] = False  # recursion
        owner = self.analysis.enclosing_class(method)
        found = False
        for node in self.analysis.subtree(method.body):
            if not isinstance(node, cst.Call):
                continue
            func = node.func
            if is_name(func, "self") or (isinstance(func, cst.Attribute) and is_name(func.value, "self") and func.attr.value == "forward"):
                found = True
            elif isinstance(func, cst.Attribute) and is_name(func.value, "self") and owner is not None:
                callee = self._method_of(owner, func.attr.value)
                found = self._runs_submodules(callee) if callee is not None else bool(self.origins(func))
            if found:
                break
        known[method] = found
        return found

    def _module_argument(self, value: cst.BaseExpression) -> bool:
        """``value`` is known to be a module: built, evident, or loaded as a whole module (``torch.jit.load``,
        ``torch.hub.load``). ``torch.load`` is left out: it loads tensors and state dicts as often as modules."""
        if not isinstance(value, (cst.Name, cst.Attribute)):
            return False
        for origin in self.origins(value):
            if origin.kind is not Origin.LOADED:
                return True
            if isinstance(origin.node, cst.Call) and (dotted_name(origin.node.func) or "").endswith(("jit.load", "hub.load")):
                return True
        return False

    def _result_used_as_module(self, call: cst.Call) -> bool:
        """What ``call`` returns is a module, so the call built one instead of running one: ``Model(envs)`` in
        ``model = Model(envs).to(device)`` then ``model.load_state_dict(...)``, with ``Model`` a parameter
        holding a class."""
        outer: cst.BaseExpression = call
        while True:
            attribute = self.analysis.parent(outer)
            chained = self.analysis.parent(attribute) if isinstance(attribute, cst.Attribute) and attribute.value is outer else None
            if not (isinstance(chained, cst.Call) and chained.func is attribute and attribute.attr.value in fw.MODULE_SELF_METHODS):
                break
            if attribute.attr.value in fw.MODULE_ONLY_METHODS:
                return True  # `Net(cfg).eval()`
            outer = chained
        return isinstance(outer, cst.Call) and self._bound_and_used_as_module(outer)

    def forward_guard(self, receiver: cst.BaseExpression, called_itself: bool = False) -> str | None:
        """Why the forward of a model ``receiver`` may hold runs without gradients by itself: its class's
        ``forward`` (here or in another project module) carries a grad-free decorator; for a model called itself
        (``called_itself``), its class's own ``__call__`` where it overrides the module's. One such producer is
        enough: the producers of a name are read without its control flow (``model = Net()`` and then
        ``model = Guarded(model)``, or one on each branch of the arguments), so which one runs here is not known."""
        for origin in self.origins(receiver):
            runtime = self._compiled_runtime(origin)
            if runtime is not None:
                return f"it runs in {runtime}, which records no autograd graph"
            reason = None
            cls = self._constructed_class(origin) if origin.kind is Origin.CONSTRUCTED else None
            annotated = _annotated_class(origin.node) if origin.kind is Origin.EVIDENT else None
            if annotated is not None:
                # `model: KModel`: the class the parameter is declared to hold, in this file or another module
                cls = self._local_class(annotated)
                if cls is None and self.analysis.outside is not None:
                    reason = self.analysis.outside.forward_without_grad(self.analysis, annotated)
            forward = None
            if cls is not None:
                forward = (self._method_of(cls, "__call__") if called_itself else None) or self._method_of(cls, "forward")
            if forward is not None and any(self.analysis.decorator_grad_mode(d.decorator) == "off" for d in forward.decorators):
                reason = f"`{cls.name.value}.{forward.name.value}` is decorated with a grad-free guard"
            elif forward is not None and self._runs_its_submodules_guarded(forward):
                reason = f"`{cls.name.value}.{forward.name.value}` runs its submodules under a grad-free guard"
            elif reason is None and isinstance(origin.node, cst.Call) and self.analysis.outside is not None:
                entry = self._own_hub_entry(origin.node)
                if entry is not None:
                    reason = self.analysis.outside.hub_entry_forward_without_grad(entry)
                else:
                    reason = self.analysis.outside.forward_without_grad(self.analysis, origin.node.func)
            if reason is not None:
                return reason
        return self._unresolved_producer_guard(receiver)

    def _runs_its_submodules_guarded(self, method: cst.FunctionDef) -> bool:
        """Every submodule or method of its own that ``method`` runs, it runs under a grad-free guard (``with
        torch.no_grad(): x = self.transforms(x)``): what the project model says of another module's class
        (:meth:`ProjectModel.class_forward_without_grad`), said of one of this file."""
        own = [
            node
            for node in self.analysis.subtree(method.body)
            if isinstance(node, cst.Call) and ((spelled := dotted_name(node.func)) == "self" or (spelled or "").startswith("self."))
        ]
        return bool(own) and all(self.analysis.grad_free_guard(call) is not None for call in own)

    def _unresolved_producer_guard(self, receiver: cst.BaseExpression) -> str | None:
        """Why a producer of ``receiver`` that is not taken for a model runs ``forward`` without gradients: a wrapper
        of another module whose parts are not seen (``model = AutoShape(model)`` in a factory that builds a bare
        model on another branch), through the names and the same-file functions that hand it on. Its origins name
        only the producers known to be models, so a guarded wrapper among the others would go unseen."""
        outside = self.analysis.outside
        if outside is None or not isinstance(receiver, cst.Name):
            return None
        for call in self._producer_calls(receiver, set(), 0):
            if self.producer(call) is None:
                reason = outside.forward_without_grad(self.analysis, call.func)
                if reason is not None:
                    return reason
        return None

    def _producer_calls(self, expression: cst.BaseExpression, seen: set[cst.CSTNode], depth: int) -> list[cst.Call]:
        """The calls whose results ``expression`` may hold: those assigned to a name, through a module's own methods
        (``model.to(device)``) and what same-file functions return."""
        if depth > 4 or expression in seen:
            return []
        seen.add(expression)
        if isinstance(expression, cst.Name):
            scope = self.analysis.scope_of(expression)
            if scope is None or expression.value in ("self", "cls"):
                return []
            values = [assignment_value(self.analysis, a.node) for a in scope[expression.value] if isinstance(a, Assignment)]
            return [call for value in values if value is not None for call in self._producer_calls(value, seen, depth + 1)]
        if not isinstance(expression, cst.Call):
            return []
        func = expression.func
        if isinstance(func, cst.Attribute) and func.attr.value in fw.MODULE_SELF_METHODS:
            return self._producer_calls(func.value, seen, depth + 1)
        returned = self._returned_values(expression)
        if returned:
            return [call for value in returned for call in self._producer_calls(value, seen, depth + 1)]
        return [expression]

    def built_from_plain_layers(self, cls: cst.ClassDef) -> bool:
        """A class of this file deriving from ``nn.Module`` (directly or through classes of this file, beside
        mixins that add no state: ``ABC``) whose submodules are all torch layers without a mode (``nn.Linear``,
        ``nn.Conv2d``, activations), with no dropout or batch norm called and no ``training`` read: its train and
        eval modes compute the same. (For a class the project index holds, the index answers this across modules;
        a notebook's classes are not in it.)"""
        chain = self._class_chain(cls)
        if not self._module_lineage(chain):
            return False
        layers = 0
        for node in (node for current in chain for node in self.analysis.subtree(current, into_scopes=True)):
            if isinstance(node, cst.Name) and node.value == "training":
                return False
            if isinstance(node, cst.Call) and any(word in (terminal_name(node.func) or "").lower() for word in ("dropout", "batch_norm")):
                return False
            if not isinstance(node, (cst.Assign, cst.AnnAssign)) or node.value is None:
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if not any(is_member(target, ("self",)) for target in targets):
                continue
            value = node.value
            if isinstance(value, (cst.SimpleString, cst.Integer, cst.Float)):
                continue
            if not isinstance(value, cst.Call):
                return False  # a parameter or another object: it may be a module with a mode
            names = self.analysis.qualified_names(value.func)
            if not any(name.startswith("torch.nn.") and fw.torch_nn_without_mode(name.rsplit(".", 1)[-1]) for name in names):
                return False
            layers += 1
        return layers > 0

    def _compiled_runtime(self, origin: ModelOrigin) -> str | None:
        """The runtime a model loaded through optimum runs in when it is not torch (``ORTModelFor*``,
        ``NeuronModelFor*``, ``OVModelFor*``): calling it runs a compiled graph, not torch modules."""
        if origin.kind is not Origin.PRETRAINED or not isinstance(origin.node, cst.Call):
            return None
        func = origin.node.func
        owner = func.value if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" else func
        for name in self.analysis.qualified_names(owner):
            for prefix, runtime in _OPTIMUM_RUNTIMES:
                if name.startswith(prefix):
                    return runtime
        return None

    def _guards_itself(self, origin: ModelOrigin) -> bool:
        """``torch.hub.load("ultralytics/yolov5", ...)``: an entry of a hub repository that returns a wrapper whose
        forward runs without gradients (:data:`fw.SELF_GUARDED_HUB_REPOS`), unless asked for the bare model."""
        call = origin.node
        if origin.kind is not Origin.LOADED or not isinstance(call, cst.Call) or terminal_name(call.func) != "load":
            return False
        repository = passed_argument(call, 0, "repo_or_dir")
        name = literal_value(repository) if repository is not None else None
        source = passed_argument(call, None, "source")
        local = source is not None and literal_value(source) == "local"
        if not isinstance(name, str) and local and self.analysis.outside is not None:
            # A local clone whose path comes from the configuration: the project's clones that define the entry
            entry = self._hub_entry_name(call)
            folders = self.analysis.outside.hub_folders(entry) if entry is not None else []
            if not folders or not all(folder in _SELF_GUARDED_HUB_FOLDERS for folder in folders):
                return False
        elif not isinstance(name, str):
            return False
        elif local:
            # A local clone of the repository (`torch.hub.load("/yolov5", "yolov5s", source="local")`), in a folder
            # named as the repository is
            folder = name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
            if folder not in _SELF_GUARDED_HUB_FOLDERS:
                return False
        elif name.partition(":")[0] not in fw.SELF_GUARDED_HUB_REPOS:
            return False
        shaped = passed_argument(call, None, "autoshape")
        return (shaped is None or literal_value(shaped) is not False) and self.analysis.resolves_to(call.func, _HUB_LOADS)

    def _own_hub_entry(self, call: cst.Call) -> str | None:
        """The entry ``torch.hub.load(repo, "entry")`` names, when written as a literal (the project's own
        ``hubconf.py`` may define it)."""
        if terminal_name(call.func) != "load" or not self.analysis.resolves_to(call.func, _HUB_LOADS):
            return None
        return self._hub_entry_name(call)

    @staticmethod
    def _hub_entry_name(call: cst.Call) -> str | None:
        entry = passed_argument(call, 1, "model")
        name = literal_value(entry) if entry is not None else None
        return name if isinstance(name, str) else None

    def forward_call(self, call: cst.Call) -> bool:
        return self.forward_receiver(call) is not None

    def inside_module_forward(self, node: cst.CSTNode) -> bool:
        """``node`` runs as part of a model's own forward pass: in the ``forward`` of an nn.Module subclass, or
        in a method of one that its forward calls (``self.predict(...)`` inside ``forward``). Its grad mode is
        decided where the model is called."""
        function = self.analysis.enclosing_function(node)
        while function is not None:
            if function in self._forward_part_methods:
                return True
            function = self.analysis.enclosing_function(function)
        return False

    @cached_property
    def _forward_part_methods(self) -> frozenset[cst.FunctionDef]:
        """Methods of model classes that run inside their forward: ``forward``/``__call__`` and the methods
        they call through ``self``, transitively."""
        found: set[cst.FunctionDef] = set()
        todo: list[cst.FunctionDef] = []
        for cls in self.analysis.nodes_of(cst.ClassDef):
            if self.is_model_class(cls):
                for statement in cls.body.body:
                    if isinstance(statement, cst.FunctionDef) and statement.name.value in ("forward", "__call__"):
                        todo.append(statement)
        while todo:
            method = todo.pop()
            if method in found:
                continue
            found.add(method)
            owner = self.analysis.enclosing_class(method)
            for node in self.analysis.subtree(method.body, into_scopes=True):
                if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
                    continue
                name = node.func.attr.value
                if is_name(node.func.value, "self"):
                    callee = self._method_of(owner, name) if owner is not None else None
                    if callee is not None:
                        todo.append(callee)
                    continue
                # self.altup.predict(...): a method of a submodule whose class is defined in this file.
                for origin in self.origins(node.func.value):
                    cls = self._constructed_class(origin)
                    callee = self._method_of(cls, name) if cls is not None else None
                    if callee is not None:
                        todo.append(callee)
        return frozenset(found)

    def _method_of(self, cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
        for current in self._class_chain(cls):
            for statement in current.body.body:
                if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
                    return statement
        return None

    def is_model_class(self, cls: cst.ClassDef, _depth: int = 0) -> bool:
        """A class of this file that is an nn.Module: it derives (through classes of this file) from a module
        class, or behaves like one where its base cannot be resolved (see :meth:`_duck_typed_module`)."""
        cached = self._class_cache.get(cls)
        if cached is not None:
            return cached
        self._class_cache[cls] = False  # cycles
        result = self._duck_typed_module(cls)
        for base in () if result else cls.bases:
            if self._is_module_class_expression(base.value):
                result = True
                break
            local = self._local_class(base.value)
            if local is not None and local is not cls and _depth < _MAX_DEPTH and self.is_model_class(local, _depth + 1):
                result = True
                break
        self._class_cache[cls] = result
        return result

    def _plain_lineage(self, chain: list[cst.ClassDef]) -> bool:
        """Every base of the classes of ``chain`` is one of them, ``object``, or a project class of another module
        that derives from no class outside the project (``class TextRecognizer(BaseOCRV20)`` with ``BaseOCRV20`` a
        plain class that holds the network in ``self.net``)."""
        outside = self.analysis.outside
        if outside is None:
            return False
        bases = [base.value for current in chain for base in current.bases]
        return bool(bases) and all(
            self._local_class(base) in chain or is_name(base, "object") or outside.plain_project_class(self.analysis, base) for base in bases
        )

    def _duck_typed_module(self, cls: cst.ClassDef) -> bool:
        """A derived class that uses module members on ``self`` (``self.training``, ``self.parameters()``,
        ``self.register_buffer(...)``, transformers' ``self.post_init()``), or defines ``forward`` and holds a
        submodule (``self.proj = nn.Linear(...)``), is a module even when its base cannot be resolved (a relative
        import of ``PreTrainedModel``, a project base class from another file). Classes named like pipelines,
        tokenizers or trainers never are."""
        if not cls.bases or any(self.analysis.qualified_names(b.value) & {"builtins.object", "object"} for b in cls.bases):
            return False
        chain = self._class_chain(cls)
        if self._other_framework_class(cls):
            return False  # an MLX, Flax or Keras module: no autograd tape that torch's guards could stop
        if any(word in current.name.value for current in chain for word in fw.NON_MODEL_CLASS_WORDS):
            return False  # transformers' Pipeline has a `forward` too
        if self.analysis.class_hooks(cls) is not None:
            return False  # a serving framework's worker (Mosec's `forward` runs per batch): it runs models, it is none
        if self._plain_lineage(chain):
            return False  # its bases are project classes the index reads, none of them a module: a wrapper that holds one
        # Below a base of a package outside the project, which may be any class, a name many classes use
        # (`self.parameters(task)` of txtai's ONNX exporter) says nothing: only torch's own members do.
        members = fw.TORCH_ONLY_SELF_MEMBERS if self._third_party_base(chain) else fw.SELF_MODULE_MEMBERS
        if any(
            self._member_owner(node) in chain
            for member in members
            for node in self._attributes_named.get(member, ())
            if is_name(node.value, "self")
        ):
            return True
        defines_forward = any(isinstance(s, cst.FunctionDef) and s.name.value == "forward" for c in chain for s in c.body.body)
        return defines_forward and any(self._holds_submodule(current) for current in chain)

    def _third_party_base(self, chain: list[cst.ClassDef]) -> bool:
        """A class of ``chain`` derives from a class imported from a package the project does not hold (known only
        where the project is: a single file cannot tell its own packages from installed ones)."""
        outside = self.analysis.outside
        if outside is None:
            return False
        for current in chain:
            for base in current.bases:
                if self._local_class(base.value) is not None:
                    continue
                for name in self.analysis.qualified_names(base.value):
                    top = name.partition(".")[0]
                    if "." in name and top and not outside.project_package(top):
                        return True
        return False

    def _module_lineage(self, chain: list[cst.ClassDef]) -> bool | None:
        """Whether ``nn.Module`` itself is among the bases the classes of ``chain`` (a class and its bases of this
        file) name outside it; None when one of those is anything else than it or a base that adds no state (``ABC``)."""
        reaches_module = False
        for current in chain:
            for base in current.bases:
                if self._local_class(base.value) in chain:
                    continue
                names = self.analysis.qualified_names(base.value)
                if names & fw.PLAIN_MODULE_BASES:
                    reaches_module = True
                elif not names & fw.STATELESS_BASES:
                    return None
        return reaches_module

    def _holds_nothing(self, cls: cst.ClassDef) -> bool:
        """An nn.Module subclass of this file with no parameters and no mode: every class of its chain derives
        from ``torch.nn.Module`` itself (or from each other), binds no ``self.<attr>`` and no class attribute,
        registers no parameter or submodule, and registers buffers (constants: no gradients) only where no
        method reads ``self.training``."""
        chain = self._class_chain(cls)
        if self._module_lineage(chain) is None:
            return False
        for current in chain:
            if not all(self._plain_part(value) for value in self._attribute_values_of.get(current, ())):
                return False
            if any(isinstance(s, (cst.SimpleStatementLine)) and any(isinstance(small, (cst.Assign, cst.AnnAssign)) for small in s.body) for s in current.body.body):
                return False
        if any(
            self._member_owner(node) in chain
            for member in ("register_parameter", "register_module", "add_module", "__setattr__")
            for node in self._attributes_named.get(member, ())
        ):
            return False
        if any(self._member_owner(node) in chain for node in self._attributes_named.get("register_buffer", ())) and any(
            self._member_owner(node) in chain and is_name(node.value, "self") for node in self._attributes_named.get("training", ())
        ):
            return False  # a buffer used differently in training and in eval mode: the mode matters
        # ``setattr(self, name, layer)``: layers bound by name at run time
        return not any(
            site.call.args and is_name(site.call.args[0].value, "self") and self._method_owner(site.call) in chain
            for site in self.analysis.index.sites("setattr")
        )

    def _method_owner(self, node: cst.CSTNode) -> cst.ClassDef | None:
        function = self.analysis.enclosing_function(node)
        return self.analysis.enclosing_class(function) if function is not None else None

    def _holds_submodule(self, cls: cst.ClassDef) -> bool:
        """``self.x = nn.Linear(...)`` (or another module construction) in a method of ``cls``."""
        return any(self._builds_module(value) for value in self._attribute_values_of.get(cls, ()))

    @cached_property
    def _attribute_values_of(self) -> dict[cst.ClassDef, list[cst.BaseExpression]]:
        index: dict[cst.ClassDef, list[cst.BaseExpression]] = {}
        for (owner, _), values in self.analysis.attribute_index.items():
            index.setdefault(owner, []).extend(values)
        return index

    def _builds_module(self, value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Call) and self.producer(value) is not None

    def frozen(self, expression: cst.BaseExpression) -> str | None:
        """Why every parameter of the model ``expression`` holds is frozen (or why it holds none), or None.

        ``model.requires_grad_(False)`` or a loop over ``model.parameters()`` that sets
        ``p.requires_grad = False`` / ``p.requires_grad_(False)`` on every parameter.
        """
        origins = self.origins(expression)
        if not origins:
            return None
        # For the object itself, or a part a class keeps of its own (`self.mel`, every value it is given known):
        # a part of another object (`net.image`) may be a module handed to it from outside.
        own = not isinstance(expression, cst.Attribute) or is_name(expression.value, "self", "cls")
        if own and all(origin.parameter_free for origin in origins):
            return "it holds no parameters"
        mine = {origin.node for origin in origins}
        for receiver, reason in self._freezes:
            if mine & {origin.node for origin in self.origins(receiver)}:
                return reason
        for passed in self._injected_arguments(expression):
            # `net.audioproj`, built from `Net(..., audio_proj)`: frozen where `audio_proj` was
            for receiver, reason in self._freezes:
                if isinstance(passed, cst.Name) and is_name(receiver, passed.value) and self._same_binding(passed, receiver):
                    return reason
        return None

    def differentiates(self, expression: cst.BaseExpression) -> bool:
        """The model ``expression`` holds computes gradients in its forward (``torch.autograd.grad`` for an implicit
        surface's normals): it needs autograd to run. Asked of its project class; of a model whose class is not
        known (built by a registry, loaded whole, a parameter), where a class of its folder or a sibling folder
        does so."""
        outside = self.analysis.outside
        origins = self.origins(expression)
        if outside is None or not origins:
            return False
        for origin in origins:
            if origin.kind is Origin.CONSTRUCTED and isinstance(origin.node, cst.Call) and not origin.unseen_class:
                if outside.forward_differentiates(self.analysis, origin.node.func):
                    return True
            elif origin.kind is Origin.SELF and isinstance(origin.node, cst.ClassDef):
                if outside.forward_differentiates(self.analysis, cst.Name(origin.node.name.value)):
                    return True
            elif origin.kind in (Origin.EVIDENT, Origin.LOADED) or origin.unseen_class:
                if outside.forwards_differentiate_near(self.analysis):
                    return True
        return False

    def _injected_arguments(self, expression: cst.BaseExpression) -> list[cst.BaseExpression]:
        """What the constructions of ``model.attr``'s owner hand to the ``__init__`` parameter that the class
        stores as ``self.attr`` (a submodule injected into a class of this file)."""
        if not isinstance(expression, cst.Attribute):
            return []
        found = []
        for origin in self.origins(expression.value):
            cls = self._constructed_class(origin)
            init = self._method_of(cls, "__init__") if cls is not None else None
            if init is None or not isinstance(origin.node, cst.Call):
                return []
            param = self._stored_parameter(init, expression.attr.value)
            if param is None:
                return []
            passed = passed_argument(origin.node, parameter_position(init, param, bound=True), param.name.value)
            if passed is None:
                return []
            found.append(passed)
        return found

    def _stored_parameter(self, init: cst.FunctionDef, attribute: str) -> cst.Param | None:
        """The parameter of ``__init__`` that it stores as ``self.<attribute> = <param>``."""
        params = {p.name.value: p for p in named_parameters(init)}
        for node in self.analysis.subtree(init.body):
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and node.value.value in params:
                if any(is_member(t.target, ("self",), attribute) for t in node.targets):
                    return params[node.value.value]
        return None

    def _same_binding(self, first: cst.Name, second: cst.Name) -> bool:
        """The two uses of one name read the same variable: the same function (or module) scope."""
        return self.analysis.enclosing_function(first) is self.analysis.enclosing_function(second)

    def set_to_eval(self, origin: ModelOrigin) -> bool:
        """Whether anything in the file puts the model of ``origin`` in eval mode: ``.eval()`` or
        ``.train(False)`` on any expression holding it, or a method of its class that calls ``self.eval()``
        (in ``__init__``, or called on the model)."""
        if origin.node in self._evaluated_nodes:
            return True
        cls = self._constructed_class(origin)
        if cls is not None:
            methods = self._self_eval_methods(cls)
            if "__init__" in methods:
                return True
            for call, receiver in self._method_calls:
                if terminal_name(call.func) in methods and any(o.node is origin.node for o in self.origins(receiver)):
                    return True
        elif self.analysis.outside is not None and origin.kind is Origin.CONSTRUCTED and isinstance(origin.node, cst.Call):
            # A class of another module whose method, called on the model here, puts it in eval mode (`generate`)
            outside = self.analysis.outside
            for call, receiver in self._method_calls:
                name = terminal_name(call.func)
                if (
                    name is not None
                    and any(o.node is origin.node for o in self.origins(receiver))
                    and outside.method_sets_own_eval_mode(self.analysis, origin.node.func, name)
                ):
                    return True
        return False

    def keeps_random_weights(self, origin: ModelOrigin) -> bool:
        """The model of ``origin`` computes with the random weights it was built with: a hub library's model class
        built from a configuration (``LlamaForCausalLM(config)``, ``AutoModel.from_config(config)``), bound only to
        plain names of which none is handed to another call, assigned into, or has a method named for loading
        called on it (``load_state_dict``, ``load_adapter``). What such a model computes is no prediction: the
        script makes a model (a tiny one for tests, saved) or checks an architecture (SPEC §2, "Not inference")."""
        if origin.kind is not Origin.CONSTRUCTED or not isinstance(origin.node, cst.Call):
            return False
        known = self._random_weights.get(origin.node)
        if known is None:
            known = self._random_weights[origin.node] = self._hub_model_from_config(origin.node) and self._no_weights_given(origin.node)
        return known

    def _no_weights_given(self, built: cst.Call) -> bool:
        bindings = self._bindings.get(built, [])
        targets = [_single_target(binding) for binding in bindings]
        if not targets or not all(isinstance(target, cst.Name) for target in targets):
            return False  # an attribute (`self.model`) may be given its weights by another method or module
        names = {target.value for target in targets if isinstance(target, cst.Name)}
        for call in self._calls:
            func = call.func
            if isinstance(func, cst.Attribute) and root_name(func.value) in names and "load" in func.attr.value.lower():
                return False
            if any(root_name(arg.value) in names for arg in call.args):
                return False  # `load_checkpoint_and_dispatch(model, path)`, `Trainer(model=model)`: it goes elsewhere
        return not any(
            isinstance(target.target, cst.Attribute) and root_name(target.target) in names
            for assign in self.analysis.nodes_of(cst.Assign)
            for target in assign.targets
        )

    def runs_random_weights(self, receiver: cst.BaseExpression) -> bool:
        """Every model ``receiver`` may hold keeps the random weights it was built with (:meth:`keeps_random_weights`)."""
        origins = self.origins(receiver)
        return bool(origins) and all(self.keeps_random_weights(origin) for origin in origins)

    def only_torch_layers(self, receiver: cst.BaseExpression) -> bool:
        """Every model ``receiver`` may hold is a layer of torch.nn itself (``nn.BatchNorm2d(3)``, not a container of
        other modules): it keeps nothing of what it computes, so an output nothing reads takes its graph with it."""
        origins = self.origins(receiver)
        return bool(origins) and all(
            isinstance(origin.node, cst.Call)
            and (classes := {_torch_nn_class(name) for name in self.analysis.qualified_names(origin.node.func)})
            and None not in classes
            and not classes & _TORCH_NN_CONTAINERS
            for origin in origins
        )

    def _hub_model_from_config(self, call: cst.Call) -> bool:
        names = self.analysis.qualified_names(call.func)
        if any(self._is_hf_model_class(name) for name in names):
            return True
        func = call.func
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value in fw.FROM_CONFIG_METHODS
            and any(name.startswith(fw.PRETRAINED_PACKAGES) for name in self.analysis.qualified_names(func.value))
        )

    def mode_call(self, call: cst.Call) -> str | None:
        """``"eval"`` for ``x.eval()`` / ``x.train(False)`` / ``x.freeze()``, ``"train"`` for ``x.train()`` / ``x.train(True)``,
        ``"unknown"`` for ``x.train(flag)``; None for anything else."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        if func.attr.value in ("eval", "freeze") and not call.args:
            # Lightning's `freeze()` is eval mode with every parameter frozen; a project's own `freeze()` may only
            # freeze, so GEM102 may miss that model: silence rather than a guess
            return "eval"
        if func.attr.value != "train":
            return None
        if len(call.args) > 1 or any(arg.star or (arg.keyword is not None and arg.keyword.value != "mode") for arg in call.args):
            return None  # not ``nn.Module.train(mode)``: another library's training API (``YOLO.train(data=..., epochs=3)``)
        mode = argument(call, 0, "mode")
        if mode is None:
            return "train"
        value = literal_value(mode.value)
        if value is True:
            return "train"
        if value is False:
            return "eval"
        return "unknown"

    def constructions(self) -> list[tuple[ModelOrigin, list[cst.BaseSmallStatement]]]:
        """Every CONSTRUCTED origin of the file that is not a submodule of another model, with the
        assignments that bind it directly (in file order; empty when it is never bound to a name)."""
        return [(origin, self._bindings.get(origin.node, [])) for origin in self._constructed]

    def uses(self) -> Iterator[tuple[cst.Call, cst.BaseExpression]]:
        """Calls that run a model, with the model: forward calls and ``.generate(...)``."""
        for call, receiver in self._method_calls:
            if terminal_name(call.func) in fw.NON_FORWARD_METHODS and self.origins(receiver):
                yield call, receiver
        for call in self._calls:
            receiver = self.forward_receiver(call)
            if receiver is not None:
                yield call, receiver

    # -- classification of producers -------------------------------------------------------
    def producer(self, call: cst.Call) -> ModelOrigin | None:
        """The model ``call`` itself creates or loads, if it does."""
        func = call.func
        if dotted_name(func) is None:
            outside = self.analysis.outside
            if isinstance(func, cst.Subscript) and outside is not None:  # `registry[key](...)`: a project dict of builders
                found = outside.model_producer(self.analysis, func)
                if found is not None:
                    kind, description = found
                    return ModelOrigin(Origin.PRETRAINED if kind == "evaluated" else Origin.CONSTRUCTED, call, description)
            return None  # `make()(x)`, `models[k](x)`, `resnet18().eval()`: not a constructor or loader reference
        names = self.analysis.library_names(func, _PRODUCER_LIBRARIES)
        text = shown(func)
        if names & fw.MODEL_LOADERS:
            if "torch.jit.load" in names and self.analysis.imports_any(fw.ACCELERATOR_COMPILERS):
                # a TorchScript file compiled for an accelerator (`torch_neuronx.trace`): the weights run inside the
                # compiled graph, which autograd does not record and which has no mode
                return None
            return ModelOrigin(Origin.LOADED, call, f"`{text}(...)`, a whole module loaded in its saved mode")
        if names & fw.PRETRAINED_CONSTRUCTORS:
            return ModelOrigin(Origin.PRETRAINED, call, f"`{text}(...)`, a pretrained model")
        if any(fw.is_vision_constructor(name) for name in names):
            return ModelOrigin(Origin.CONSTRUCTED, call, f"`{text}(...)`, a model constructor")
        if any(fw.TORCH_NN_PARAMETER_FREE.search(_torch_nn_class(name) or "-") for name in names):
            return None  # nn.Softmax(...), nn.CrossEntropyLoss(...): no parameters, no mode, not a model
        if any(_torch_nn_class(name) == "Sequential" for name in names) and call.args and all(self._parameter_free(arg.value) for arg in call.args):
            return None  # nn.Sequential(Resize(...), Normalize(...)): a chain of transforms, no parameters
        if names & fw.MODEL_WRAPPERS:
            return None  # `nn.DataParallel(model)`: the model it wraps is the one to follow, not a module of its own
        if any(_torch_nn_class(name) for name in names):
            kind = Origin.CONSTRUCTED if any(_torch_nn_class(name) in fw.TORCH_NN_MODE_DEPENDENT for name in names) else Origin.EVIDENT
            if kind is Origin.CONSTRUCTED and self._chain_of_mode_free_layers(call):
                kind = Origin.EVIDENT  # `nn.Sequential(nn.Conv2d(...), nn.ReLU(), ...)`: the same in both modes
            return ModelOrigin(kind, call, f"`{text}(...)`, a torch.nn module")
        if any(self._is_hf_model_class(name) for name in names):
            return ModelOrigin(Origin.CONSTRUCTED, call, f"`{text}(...)`, a model built from a config")
        if is_test_class(terminal_name(func) or ""):
            return None  # `TestModule(...)`: a stand-in a check builds (as `test*` functions are checks), not a model it serves
        local = self._local_class(func)
        if local is not None and self.is_model_class(local):
            if self._holds_nothing(local):
                return None  # like nn.Softmax: no parameters, no mode-dependent layers, nothing to record
            outside = self.analysis.outside
            if outside is not None and outside.holds_no_seen_layer(self.analysis, func):
                return None  # its parts are data and objects of packages whose insides are not read
            return ModelOrigin(
                Origin.CONSTRUCTED,
                call,
                f"`{text}(...)`, an nn.Module subclass defined in this file",
                parameter_free=outside is not None and outside.holds_no_parameter(self.analysis, func),
            )
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            owner = func.value
            built = self._classmethod_constructor(func)
            if built is not None and self.is_model_class(built) and not self._holds_nothing(built):
                return ModelOrigin(Origin.CONSTRUCTED, call, f"`{text}(...)`, an nn.Module subclass defined in this file")
            if method == "from_pretrained" and self._is_pretrained_class(owner):
                return ModelOrigin(Origin.PRETRAINED, call, f"`{text}(...)`, a pretrained model (returned in eval mode)")
            if method in fw.FROM_CONFIG_METHODS and self._is_pretrained_class(owner):
                return ModelOrigin(Origin.CONSTRUCTED, call, f"`{text}(...)`, a model built from a config")
            if method == "load_from_checkpoint" and self._is_lightning_class(owner):
                return ModelOrigin(Origin.CONSTRUCTED, call, f"`{text}(...)`, a Lightning module restored from a checkpoint")
        if self._ultralytics_front_end(func):
            return None  # the project may be Ultralytics itself: its front-ends are still not modules to judge
        if self.analysis.resolves_to(func, fw.TENSORRT_ENGINE_MODULES):
            return None  # a TensorRT engine behind a module's interface: no parameter, no mode
        outside = self.analysis.outside
        found = outside.model_producer(self.analysis, func) if outside is not None else None
        if found is not None:
            kind, description = found
            origin = {"constructed": Origin.CONSTRUCTED, "evaluated": Origin.PRETRAINED, "loaded": Origin.LOADED}[kind]
            parameter_free = origin is Origin.CONSTRUCTED and outside.holds_no_parameter(self.analysis, func)
            return ModelOrigin(origin, call, description, parameter_free=parameter_free)
        if (
            self._is_project_class(func)
            and self._bound_and_used_as_module(call)
            # a class the index reads whole and finds no module (a trainer whose `train`, `eval` and `test` are
            # loops), or one of another framework: its methods say nothing of torch
            and not (outside is not None and (outside.other_framework_class(self.analysis, func) or outside.plain_project_class(self.analysis, func)))
        ):
            return ModelOrigin(Origin.CONSTRUCTED, call, f"`{text}(...)`, a project class used as an nn.Module", unseen_class=True)
        return None

    def _plain_part(self, value: cst.BaseExpression) -> bool:
        """What a class keeps in ``value`` holds no parameter and no mode: a literal or arithmetic on literals and
        the object's own settings (``self.k ** 2 // 2``), a parameter whose default is a literal (``n_peaks=256``),
        or a layer without parameters (``nn.Sigmoid()``, a transform). Read with a work list: a long chain of
        operations is a deep tree."""
        todo, followed = [value], set()
        while todo:
            part = todo.pop()
            if isinstance(part, (cst.Integer, cst.Float, cst.SimpleString, cst.Imaginary)) or is_name(part, "True", "False", "None"):
                continue
            if isinstance(part, cst.UnaryOperation):
                todo.append(part.expression)
            elif isinstance(part, cst.BinaryOperation):
                todo += [part.left, part.right]
            elif isinstance(part, cst.Attribute) and is_name(part.value, "self"):
                continue  # another of its own settings, judged where it is set
            elif self._plain_tensor(part):
                continue  # `torch.tensor([0.1, 0.5]).to(device)`: a constant kept as it is, no parameter
            elif isinstance(part, cst.Name):
                function = self.analysis.enclosing_function(part)
                param = next((p for p in named_parameters(function) if p.name.value == part.value), None) if function is not None else None
                if param is None or param.default is None or param in followed:
                    return False  # no literal default, or one naming the parameter itself (`width=width`)
                followed.add(param)
                todo.append(param.default)
            elif not self._parameter_free(part):
                return False
        return True

    def _plain_tensor(self, value: cst.BaseExpression) -> bool:
        """``value`` is a tensor made by a torch function (``torch.tensor(...)``, ``torch.ones(n)``), perhaps moved or
        cast: an attribute that holds it is no parameter (only ``nn.Parameter`` or a registered buffer are kept
        with the module)."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _TENSOR_MOVES:
            value = value.func.value
        return (
            isinstance(value, cst.Call)
            and terminal_name(value.func) in _TENSOR_FACTORIES
            and any(name.startswith("torch.") for name in self.analysis.qualified_names(value.func))
        )

    def _parameter_free(self, value: cst.BaseExpression) -> bool:
        """``value`` builds a layer without parameters or mode: an activation, pooling or loss of torch.nn, or a
        torchvision/torchaudio transform."""
        if not isinstance(value, cst.Call) or dotted_name(value.func) is None:
            return False
        names = self.analysis.qualified_names(value.func)
        return any(
            fw.TORCH_NN_PARAMETER_FREE.search(_torch_nn_class(name) or "-") or name.startswith(fw.MODE_FREE_TRANSFORMS)
            for name in names
        )

    # -- resolution ----------------------------------------------------------------------------
    def _resolve(self, expression: cst.BaseExpression, *, follow_names: bool, depth: int) -> tuple[ModelOrigin, ...]:
        cache = self._origins if follow_names else self._direct
        cached = cache.get(expression)
        if cached is not None:
            return cached
        key = (expression, follow_names)
        if depth > _MAX_DEPTH or key in self._in_progress:
            return ()
        self._in_progress.add(key)
        try:
            result = _unique(self._compute(expression, follow_names, depth))
        finally:
            self._in_progress.discard(key)
        cache[expression] = result
        return result

    def _compute(self, expression: cst.BaseExpression, follow_names: bool, depth: int) -> list[ModelOrigin]:
        resolve = lambda e: self._resolve(e, follow_names=follow_names, depth=depth + 1)  # noqa: E731
        if isinstance(expression, cst.Call):
            own = self.producer(expression)
            if own is not None:
                return [own]
            func = expression.func
            if isinstance(func, cst.Attribute) and func.attr.value in fw.MODULE_SELF_METHODS:
                inner = resolve(func.value)
                if inner:
                    return list(inner)
            if self.analysis.resolves_to(func, fw.MODEL_WRAPPERS):
                first = argument(expression, 0, "model") or argument(expression, 0, "module")
                return list(resolve(first.value)) if first is not None else []
            return [origin for value in self._returned_values(expression) for origin in resolve(value)]
        if isinstance(expression, cst.IfExp):
            return [*resolve(expression.body), *resolve(expression.orelse)]
        if isinstance(expression, cst.BooleanOperation):
            return [*resolve(expression.left), *resolve(expression.right)]
        if isinstance(expression, cst.Await):
            return list(resolve(expression.expression))
        if not follow_names:
            return []
        if isinstance(expression, cst.Name):
            return self._name_origins(expression, depth)
        if isinstance(expression, cst.Attribute):
            if self._is_member_access(expression):
                return self._member_origins(expression, depth)
            return self._submodule_origins(expression, depth) or self._held_origins(expression, depth) or self._imported_member_origins(expression)
        return []

    def _reaching_at_module_level(self, name: cst.Name, assignments: list[Assignment]) -> list[Assignment]:
        """The bindings of a module-level name that reach ``name``, a use in the module's own code (a script's, a
        notebook's cells run top to bottom): those before it, from the last one made unconditionally at the top
        level on (``model = DeepPose(...)`` in one cell, ``model = ConvNeXt(...)`` in a later one: each use holds the
        model built above it). A use in a function or a loop may see any of them (called later, or on a later turn)."""
        ancestors = list(self.analysis.ancestors(name))
        if any(isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) for ancestor in ancestors):
            return assignments
        order = self.analysis.source_order
        loop = next((a for a in reversed(ancestors) if isinstance(a, (cst.For, cst.While))), None)
        # In a loop, a binding later in the loop reaches the next turn's use: the use stands where the loop starts,
        # and every binding inside the loop reaches it too.
        here = order.get(loop if loop is not None else name)
        if here is None:
            return assignments
        inside = {a for a in assignments if loop is not None and loop in self.analysis.ancestors(a.node)}
        around = set(ancestors)
        # `model = model.to(device)`: the use on the right reads the binding before this statement, not its own
        before = [
            assignment for assignment in assignments
            if order.get(assignment.node, here) < here and self._binding_statement(assignment.node) not in around and assignment not in inside
        ]
        for index in range(len(before) - 1, -1, -1):
            if self._bound_unconditionally(before[index].node):
                before = before[index:]  # `model = ...` as a statement of the module: the bindings above it are gone
                break
        reaching = before + [assignment for assignment in assignments if assignment in inside]
        return reaching or assignments

    def _binding_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The statement whose binding ``node`` is (an assignment, an import, a ``with`` or a loop)."""
        return next((a for a in self.analysis.ancestors(node) if isinstance(a, (cst.BaseSmallStatement, cst.BaseCompoundStatement))), None)

    def _bound_unconditionally(self, node: cst.CSTNode) -> bool:
        """``node`` binds in a statement of the module itself, under no ``if``, loop, ``try`` or ``with``."""
        for ancestor in self.analysis.ancestors(node):
            if isinstance(ancestor, cst.Module):
                return True
            if isinstance(ancestor, cst.BaseCompoundStatement):
                return False
        return False

    def _name_origins(self, name: cst.Name, depth: int) -> list[ModelOrigin]:
        if name.value not in ("self", "cls") and self.analysis.holds_definitions_only(name.value):
            return []  # a class, a function or a builtin is no model instance: no scope analysis to say so
        scope = self.analysis.scope_of(name)
        if scope is None:
            return []
        if name.value in ("self", "cls"):
            function = self.analysis.enclosing_function(name)
            owner = self.analysis.enclosing_class(function) if function is not None else None
            if name.value == "self" and owner is not None and self.is_model_class(owner):
                outside = self.analysis.outside
                # A rotary-embedding table computed by the module's own forward: no parameter of it or of any
                # subclass records a graph.
                free = outside is not None and outside.instances_hold_no_parameter(self.analysis, owner.name)
                return [ModelOrigin(Origin.SELF, owner, f"`self`, an instance of the nn.Module subclass `{owner.name.value}`", parameter_free=free)]
            return []
        found: list[ModelOrigin] = []
        unknown = False
        assignments = [a for a in scope[name.value] if isinstance(a, Assignment)]
        if len(assignments) > 1 and isinstance(scope, GlobalScope):
            assignments = self._reaching_at_module_level(name, assignments)
        for assignment in assignments:
            node = assignment.node
            if isinstance(node, cst.Param):
                found.extend(self._param_origins(node, depth))
                continue
            if isinstance(node, (cst.ClassDef, cst.FunctionDef)):
                continue
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                imported = self._imported_model(name.value, node)
                if imported is not None:
                    found.append(imported)
                else:
                    unknown = True
                continue
            value = assignment_value(self.analysis, node)
            values = [value] if value is not None else self._unpacked_values(node)
            if not values:
                unknown = True
                continue
            for value in values:
                resolved = self._resolve(value, follow_names=True, depth=depth + 1)
                found.extend(resolved)
                if not resolved and not self._known_non_model(value):
                    unknown = True
                    if _converts_itself(value, name.value):
                        # `model = model.autoshape()`: the model handed to a method whose result is not known
                        # (a wrapper, a converted copy); the uses after it hold that, not the model built before
                        return []
        if found or not unknown:
            return found
        # Bound to something unknown (a project helper, a registry): evidently a model if used as one. A name `import`
        # binds is a module object, never a model (`polyglot.eval(...)` is another language's evaluator).
        for assignment in assignments:
            if not isinstance(assignment.node, (cst.Param, cst.Import)) and self._references_used_as_module(assignment):
                return [ModelOrigin(Origin.EVIDENT, assignment.node, f"`{name.value}`, used as an nn.Module")]
        return []

    def _imported_model(self, spelled: str, statement: cst.Import | cst.ImportFrom) -> ModelOrigin | None:
        """A model bound at the top level of another project module and imported from it (``from app.state
        import model``, ``state.model`` after ``from app import state``): as that module's own tracker knows it."""
        outside = self.analysis.outside
        description = outside.imported_model(self.analysis, spelled) if outside is not None else None
        return ModelOrigin(Origin.EVIDENT, statement, description) if description is not None else None

    def _imported_member_origins(self, attribute: cst.Attribute) -> list[ModelOrigin]:
        """``state.model``, with ``state`` bound only by imports (of a project module, whose top level binds
        ``model`` to a model)."""
        holder = attribute.value
        if not isinstance(holder, cst.Name):
            return []
        statements = self.analysis.import_bindings(holder)
        if not statements:
            return []
        found = self._imported_model(f"{holder.value}.{attribute.attr.value}", statements[-1])
        return [found] if found is not None else []

    def exported_model(self, name: str) -> str | None:
        """Why the name ``name`` that this module binds at its top level holds a model whose forward records an
        autograd graph wherever another module calls it: the description of what binds it. None when it is bound
        to no model, or to one whose forward records none (a compiled runtime, a forward under a grad-free
        decorator, a hub wrapper that guards itself, parameters frozen or absent)."""
        target = self._top_level_target(name)
        if target is None or not self._records_a_graph(target):
            return None
        module = self.analysis.context.source.display
        return f"`{name}`, bound in `{module}` to {self.origins(target)[0].description}"

    def exported_member(self, name: str, member: str) -> str | None:
        """As :meth:`exported_model`, for ``name.member``: ``name`` bound at the top level to an instance of a plain
        class (of this module or another of the project's) that keeps a model as ``self.<member>``."""
        target = self._top_level_target(name)
        if target is None:
            return None
        held = cst.Attribute(value=target, attr=cst.Name(member))  # read as `name.member` would be here
        if not self._records_a_graph(held):
            return None
        module = self.analysis.context.source.display
        return f"`{name}.{member}`, bound in `{module}` to {self.origins(held)[0].description}"

    def instance_member(self, class_name: str, member: str) -> str | None:
        """Why ``self.<member>`` of the plain class ``class_name`` (no nn.Module) defined at this module's top level
        holds a model whose forward records a graph wherever another module calls it on an instance; None where
        the class has a method of that name, or what it keeps is not known to be such a model."""
        cls = self.analysis.local_classes.get(class_name)
        if cls is None or self.analysis.parent(cls) is not self.analysis.module or self.is_model_class(cls):
            return None
        chain = self._class_chain(cls)
        if any(self._method_of(current, member) is not None for current in chain):
            return None
        held = next(
            (
                node
                for current in chain
                for node in self.analysis.subtree(current, into_scopes=True)
                if isinstance(node, cst.Attribute) and is_name(node.value, "self") and node.attr.value == member
            ),
            None,
        )
        if held is None or not self._records_a_graph(held):
            return None
        module = self.analysis.context.source.display
        return f"`self.{member}` of `{class_name}` in `{module}`, bound to {self.origins(held)[0].description}"

    def _top_level_target(self, name: str) -> cst.Name | None:
        """The last name ``name`` that an assignment at the module's top level (outside functions) binds."""
        targets = [
            target
            for node in self.analysis.subtree(self.analysis.module)
            if isinstance(node, (cst.Assign, cst.AnnAssign))
            for target in ([t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target])
            if isinstance(target, cst.Name) and target.value == name and self.analysis.enclosing_function(target) is None
        ]
        return targets[-1] if targets else None

    def _records_a_graph(self, expression: cst.BaseExpression) -> bool:
        """``expression`` holds a model whose forward records a graph when called: not a hub wrapper that guards
        itself, a compiled runtime, a forward under a grad-free decorator, nor one with frozen or no parameters."""
        origins = self.origins(expression)
        if not origins or all(self._guards_itself(origin) for origin in origins):
            return False
        return self.frozen(expression) is None and self.forward_guard(expression, called_itself=True) is None

    def _member_origins(self, attribute: cst.Attribute, depth: int) -> list[ModelOrigin]:
        """``self.X`` / ``cls.X`` (set in any method, or a class attribute) and ``Class.X``."""
        owner = self._member_owner(attribute)
        if owner is None:
            return []
        name = attribute.attr.value
        found: list[ModelOrigin] = []
        unknown = False
        bound = False  # to something other than a `None` placeholder
        for cls in self._class_chain(owner):
            for value in self.analysis.attribute_values(cls, name):
                resolved = self._resolve(value, follow_names=True, depth=depth + 1)
                found.extend(resolved)
                if not resolved and not self._known_non_model(value):
                    unknown = True
                bound = bound or not (isinstance(value, cst.Name) and value.value == "None")
        if found and any(self.analysis.unpacked_attribute(cls, name) for cls in self._class_chain(owner)):
            # `self.detector = build_torch_detector()` on one branch, `self.detector, self.landmarks = init_dlib()`
            # on another: what it holds where it is called is not known
            return []
        if found:
            return found
        if bound and not unknown:
            # The class binds it itself, only to what is no model (a pipeline, a tokenizer): what the framework's
            # base would have loaded there is not what it holds.
            return []
        for cls in self._class_chain(owner):
            for base in cls.bases:
                for qualified in self.analysis.qualified_names(base.value):
                    if name in fw.FRAMEWORK_MODEL_ATTRIBUTES.get(qualified, ()):
                        return [ModelOrigin(Origin.FRAMEWORK, cls, f"`self.{name}`, the model `{qualified.rsplit('.', 1)[-1]}` loads")]
        outside = self.analysis.outside
        inherited = outside.inherited_attribute(self.analysis, owner, name) if outside is not None and not found else None
        if inherited is not None:
            return [ModelOrigin(Origin.EVIDENT, owner, inherited)]
        if unknown and self._member_used_as_module(owner, name):
            return [ModelOrigin(Origin.EVIDENT, owner, f"`self.{name}`, used as an nn.Module")]
        return []

    def _held_origins(self, attribute: cst.Attribute, depth: int) -> list[ModelOrigin]:
        """``holder.model`` where ``holder = Holder(..., net)`` builds a plain class of this file (no nn.Module) that
        keeps a model as ``self.model``: what that attribute holds (``load_weights(holder.model)`` reaches the
        model built before)."""
        holder = attribute.value
        if not isinstance(holder, cst.Name) or holder.value in ("self", "cls"):
            return []
        scope = self.analysis.scope_of(holder)
        assignments = [a for a in scope[holder.value] if isinstance(a, Assignment)] if scope is not None else []
        found: list[ModelOrigin] = []
        for assignment in assignments:
            value = assignment_value(self.analysis, assignment.node) if not isinstance(assignment.node, (cst.Param, cst.ClassDef, cst.FunctionDef)) else None
            cls = self._local_class(value.func) if isinstance(value, cst.Call) else None
            if cls is None and isinstance(value, cst.Call) and self.analysis.outside is not None:
                # A plain class of another project module: what its instances keep there
                description = self.analysis.outside.held_model(self.analysis, value.func, attribute.attr.value)
                if description is None:
                    return []
                found.append(ModelOrigin(Origin.EVIDENT, value, description))
                continue
            if cls is None or self.is_model_class(cls):
                return []  # bound to something else somewhere: what the attribute holds is not known
            initialiser = self._method_of(cls, "__init__")
            for current in self._class_chain(cls):
                for kept in self.analysis.attribute_values(current, attribute.attr.value):
                    passed = self._passed_for(value, initialiser, kept)
                    found.extend(self._resolve(passed if passed is not None else kept, follow_names=True, depth=depth + 1))
        return found

    def _passed_for(self, construction: cst.Call, initialiser: cst.FunctionDef | None, kept: cst.BaseExpression) -> cst.BaseExpression | None:
        """What ``construction`` passes for the parameter of ``__init__`` that ``kept`` names (``self.model =
        model``): that holder's model, not every holder's."""
        if initialiser is None or not isinstance(kept, cst.Name) or self.analysis.enclosing_function(kept) is not initialiser:
            return None
        param = next((p for p in named_parameters(initialiser) if p.name.value == kept.value), None)
        if param is None:
            return None
        return passed_argument(construction, parameter_position(initialiser, param, bound=True), kept.value)

    def _submodule_origins(self, attribute: cst.Attribute, depth: int) -> list[ModelOrigin]:
        """``model.encoder`` / ``self.model.encoder``: a submodule of a model object is part of that model (its
        mode and its gradients are the model's). Known only where the model's class is: a class of this file
        or another project module that binds ``self.encoder`` to a model and has no method of that name."""
        parents = self._resolve(attribute.value, follow_names=True, depth=depth + 1)
        name = attribute.attr.value
        if not parents or not all(self._holds_submodule_named(origin, name, depth) for origin in parents):
            return []
        return list(parents)

    def _holds_submodule_named(self, origin: ModelOrigin, name: str, depth: int) -> bool:
        # The model's class: constructed here (`Net(...)`), or named by a parameter's annotation (`sam: Sam`).
        # Pretrained and loaded models: their classes (and so their methods) are not known here.
        if origin.kind is Origin.CONSTRUCTED and isinstance(origin.node, cst.Call):
            spelled = origin.node.func
        elif isinstance(origin.node, cst.Param) and origin.node.annotation is not None:
            spelled = origin.node.annotation.annotation
        else:
            return False
        cls = self._local_class(spelled)
        if cls is None:
            outside = self.analysis.outside
            return outside is not None and outside.holds_submodule(self.analysis, spelled, name)
        if self._method_of(cls, name) is not None:
            return False
        return any(
            self._resolve(value, follow_names=True, depth=depth + 1)
            for current in self._class_chain(cls)
            for value in self.analysis.attribute_values(current, name)
        )

    def _param_origins(self, param: cst.Param, depth: int) -> list[ModelOrigin]:
        """A parameter is a model when annotated as one, used with module-only methods in its function, or
        given a model by every caller (of this file, else of other project modules); it then holds whatever its
        same-file callers pass."""
        function = self._param_function(param)
        if function is None:
            return []
        name = param.name.value
        if _class_default(param):
            return []  # `linear_cls: nn.Module = nn.Linear`: it holds a class, and calling it builds a layer
        injected = self._injected_origins(param, depth)
        if injected:
            return injected
        evidence = None
        if param.annotation is not None and self._is_model_annotation(param.annotation.annotation):
            evidence = f"parameter `{name}`, annotated as a model"
        elif self._param_used_as_module(param):
            evidence = f"parameter `{name}`, used as an nn.Module in `{function.name.value}`"
        passed: list[ModelOrigin] = []
        arguments = self._arguments_for(function, param)
        if arguments and all(value is not None and self._holds_non_model(value, 0) for value in arguments):
            return []  # every caller of the file hands it what is no model (a pipeline), whatever its annotation says
        all_models = bool(arguments)
        for value in arguments:
            resolved = self._resolve(value, follow_names=True, depth=depth + 1) if value is not None else ()
            passed.extend(resolved)
            all_models = all_models and bool(resolved)
        if evidence is None and all_models:
            evidence = f"parameter `{name}`, given a model by every caller of `{function.name.value}`"
        if evidence is None and not arguments and self.analysis.outside is not None and self._param_runs_or_is_kept(param):
            elsewhere = self.analysis.outside.models_passed(self.analysis, function, param)
            if elsewhere and all(elsewhere):
                evidence = f"parameter `{name}`, given a model by every caller of `{function.name.value}` ({elsewhere[0]})"
        if evidence is None:
            return []
        # What every caller hands over holds no parameter (a packed kernel): neither does the parameter.
        parameter_free = all_models and all(origin.parameter_free for origin in passed)
        return [ModelOrigin(Origin.EVIDENT, param, evidence, parameter_free=parameter_free), *passed]

    def _injected_origins(self, param: cst.Param, depth: int) -> list[ModelOrigin]:
        """FastAPI's dependency injection: a parameter given ``Depends(get_model)`` (as its default, or in an
        ``Annotated[..., Depends(get_model)]`` annotation, written there or in a module-level alias) holds what the
        same-file function ``get_model`` returns or yields, when every such value is a model."""
        dependency = dependency_of(self.analysis, param)
        function = self.analysis.module_functions.get(dependency.value) if isinstance(dependency, cst.Name) else None
        if function is None or self.analysis.enclosing_class(function) is not None:
            return []
        values = self.analysis.returned_values(function, yielded=True)
        resolved = [self._resolve(value, follow_names=True, depth=depth + 1) for value in values]
        if not resolved or not all(resolved):
            return []
        evidence = f"parameter `{param.name.value}`, given the model `{function.name.value}` provides (`Depends`)"
        return [ModelOrigin(Origin.EVIDENT, param, evidence), *(origin for found in resolved for origin in found)]

    # -- helpers for resolution ------------------------------------------------------------------
    def _is_member_access(self, attribute: cst.Attribute) -> bool:
        return self._member_owner(attribute) is not None

    def _member_owner(self, attribute: cst.Attribute) -> cst.ClassDef | None:
        value = attribute.value
        if isinstance(value, cst.Name) and value.value in ("self", "cls"):
            function = self.analysis.enclosing_function(attribute)
            return self.analysis.enclosing_class(function) if function is not None else None
        if isinstance(value, cst.Name):
            return self._local_class(value)
        return None

    def _class_chain(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        chain, todo = [], [cls]
        while todo and len(chain) < _MAX_DEPTH:
            current = todo.pop(0)
            if current in chain:
                continue
            chain.append(current)
            todo.extend(local for base in current.bases if (local := self._local_class(base.value)) is not None)
        return chain

    def is_instance_of(self, receiver: cst.BaseExpression, cls: cst.ClassDef) -> bool:
        """Whether ``receiver`` (``self.semantic``, ``model``) holds an object built from the local class ``cls``."""
        for origin in self.origins(receiver):
            call = origin.node
            if not isinstance(call, cst.Call):
                continue
            func = call.func
            # `Net(...)`, and `Net.from_pretrained(...)` / `Net.from_config(...)` of a local class.
            target = func.value if isinstance(func, cst.Attribute) else func
            if self._local_class(target) is cls:
                return True
        return False

    def _local_class(self, expression: cst.BaseExpression) -> cst.ClassDef | None:
        if not isinstance(expression, cst.Name):
            return None
        cls = self.analysis.local_classes.get(expression.value)
        if cls is None or self.analysis.binds_once(expression.value):
            return cls  # none, or a class nothing else in the file can shadow: no scope analysis needed
        scope = self.analysis.scope_of(expression)
        if scope is not None and not any(a.node is cls for a in scope[expression.value] if isinstance(a, Assignment)):
            return None  # shadowed
        return cls

    def _is_module_class_expression(self, expression: cst.BaseExpression) -> bool:
        """``nn.Module``, ``nn.Sequential``, ``PreTrainedModel``, ``BertModel``, ``LightningModule``, ..."""
        names = self.analysis.qualified_names(expression)
        if names & fw.MODULE_BASES:
            return True
        return any(_torch_nn_class(name) or self._is_hf_model_class(name) or _is_hf_base(name) for name in names)

    def _chain_of_mode_free_layers(self, call: cst.Call, depth: int = 0) -> bool:
        """``nn.Sequential(...)`` handed, one by one, only torch.nn layers that are the same in train and eval mode
        (``nn.Conv2d``, ``nn.ReLU``; such a chain nested), and handed nothing else."""
        if depth > 4 or not call.args or not any(_torch_nn_class(name) == "Sequential" for name in self.analysis.qualified_names(call.func)):
            return False
        for arg in call.args:
            layer = arg.value
            if arg.keyword is not None or arg.star or not isinstance(layer, cst.Call):
                return False
            classes = {_torch_nn_class(name) for name in self.analysis.qualified_names(layer.func)}
            if classes == {"Sequential"}:
                if not self._chain_of_mode_free_layers(layer, depth + 1):
                    return False
            elif not classes or None in classes or not all(fw.torch_nn_without_mode(name) for name in classes):  # type: ignore[arg-type]
                return False
        return True

    def _is_model_annotation(self, annotation: cst.BaseExpression) -> bool:
        if isinstance(annotation, cst.Subscript) and self.analysis.resolves_to(annotation.value, _CLASS_ANNOTATIONS):
            return False  # `Type[Layer]`: the class itself, which a call constructs
        for node in [annotation, *self.analysis.subtree(annotation)]:
            if isinstance(node, (cst.Name, cst.Attribute)):
                if self._is_module_class_expression(node):
                    return True
                local = self._local_class(node)
                if local is not None and self.is_model_class(local):
                    return True
                outside = self.analysis.outside
                if local is None and outside is not None and outside.model_class(self.analysis, node) is not None:
                    return True  # a project nn.Module class from another module
        return False

    @staticmethod
    def _is_hf_model_class(name: str) -> bool:
        """``transformers.BertModel``, ``diffusers.UNet2DConditionModel``: a model class of a hub library."""
        if not name.startswith(("transformers.", "diffusers.")) or fw.other_framework_hub_class(name):
            return False
        last = name.rsplit(".", 1)[-1]
        return bool(last[:1].isupper() and _HF_MODEL_NAME.search(last)) and not any(word in last for word in fw.NON_MODEL_CLASS_WORDS)

    def _is_pretrained_class(self, owner: cst.BaseExpression) -> bool:
        for name in self.analysis.qualified_names(owner):
            if name.startswith(fw.PRETRAINED_PACKAGES) and not fw.other_framework_hub_class(name):
                last = name.rsplit(".", 1)[-1]
                if last[:1].isupper() and _HF_MODEL_NAME.search(last) and not any(word in last for word in fw.NON_MODEL_CLASS_WORDS):
                    return True
        local = self._local_class(owner)
        return local is not None and self.is_model_class(local)

    def _is_lightning_class(self, owner: cst.BaseExpression) -> bool:
        if self.analysis.qualified_names(owner) & fw.LIGHTNING_BASES:
            return True
        local = self._local_class(owner)
        return local is not None and any(self.analysis.qualified_names(b.value) & fw.LIGHTNING_BASES for c in self._class_chain(local) for b in c.bases)

    def _is_project_class(self, func: cst.BaseExpression) -> bool:
        """A class imported from this project (a relative import, or a top-level module under the root)."""
        last = terminal_name(func) or ""
        if not last[:1].isupper():
            return False
        local_modules = local_top_level_modules(self.analysis.context.config.root)
        # "." stands for relative imports: only they, imports of local modules and names spelled as one can lead here
        for name in self.analysis.library_names(func, frozenset(local_modules) | {"."}):
            if name.startswith(".") or name.split(".", 1)[0] in local_modules and "." in name:
                return True
        return False

    def _other_framework_class(self, cls: cst.ClassDef) -> bool:
        """``cls`` (or a base of this file) derives from another framework's module class (``mlx.nn.Module``,
        ``flax.linen.Module``, ``keras.Model``): its instances are not torch modules."""
        return any(
            any(fw.other_framework_base(name) for name in self.analysis.qualified_names(b.value))
            for current in self._class_chain(cls)
            for b in current.bases
        )

    def _known_non_model(self, value: cst.BaseExpression, depth: int = 0) -> bool:
        """A value that is certainly not a torch model to judge: literals, containers, and calls of known non-model
        classes (tokenizers, processors, pipelines, trainers), of a check's stand-in (``TestModule``), of third-party
        functions and classes, or of a class of this file built on another framework's modules (an MLX model used
        with `.parameters()` is no torch module)."""
        if isinstance(value, (cst.BaseString, cst.Integer, cst.Float, cst.List, cst.Dict, cst.Tuple, cst.Set, cst.Comparison, cst.BinaryOperation)):
            return True
        if literal_value(value) is not NOT_LITERAL:
            return True
        if isinstance(value, cst.Call):
            if is_test_class(terminal_name(value.func) or ""):
                return True  # a check's stand-in (see `producer`)
            local = self._local_class(value.func)
            if local is not None and self._other_framework_class(local):
                return True
            if local is not None and self.is_model_class(local) and self._holds_nothing(local):
                return True  # an nn.Module of this file with no parameter and no mode (a transpose): nothing to judge
            outside = self.analysis.outside
            if local is None and outside is not None and outside.other_framework_class(self.analysis, value.func):
                return True  # a class of another module built on another framework's module class
            target = value.func.value if isinstance(value.func, cst.Attribute) and value.func.attr.value == "from_pretrained" else value.func
            names = self.analysis.qualified_names(target)
            if not names and isinstance(target, cst.Name):
                # Bound by nothing of the file: a name of a star import (`from transformers import *`), judged by itself.
                names = frozenset({target.value})
            for name in names:
                last = name.rsplit(".", 1)[-1]
                if any(word in last for word in fw.NON_MODEL_CLASS_WORDS) or last == "pipeline" or fw.other_framework_hub_class(name):
                    return True
            if self._ultralytics_front_end(target):
                return True
            if self.analysis.resolves_to(value.func, fw.TENSORRT_ENGINE_MODULES):
                return True  # a TensorRT engine behind a module's interface (`TRTModule()`)
            if depth < _NON_MODEL_HELPER_DEPTH:
                # A function or method of this file that returns only such values (`return pipeline(...)`, or a
                # name bound to one).
                returned = self._returned_values(value)
                if returned and all(self._holds_non_model(item, depth + 1) for item in returned):
                    return True
        return False

    def _holds_non_model(self, value: cst.BaseExpression, depth: int) -> bool:
        """``value``, or what every binding of the name ``value`` is, is :meth:`_known_non_model`."""
        if isinstance(value, cst.Name):
            bindings = self.analysis.assigned_values(value)
            return bool(bindings) and all(self._known_non_model(binding, depth) for binding in bindings)
        return self._known_non_model(value, depth)

    def _ultralytics_front_end(self, func: cst.BaseExpression) -> bool:
        """``YOLO``, ``RTDETR``, ``SAM`` ... of Ultralytics (not its raw ``ultralytics.nn`` modules)."""
        return any(
            ".nn." not in name and name.rsplit(".", 1)[-1] in fw.ULTRALYTICS_FRONT_ENDS
            for name in self.analysis.names_with_prefix(func, _ULTRALYTICS)
        )

    def _returned_values(self, call: cst.Call) -> list[cst.BaseExpression]:
        """What a same-file function or method called by ``call`` returns."""
        function = self._callee(call)
        return self.analysis.returned_values(function) if function is not None else []

    def _unpacked_values(self, target: cst.CSTNode) -> list[cst.BaseExpression]:
        """``model, tokenizer = load(args)``: what ``model`` is bound to, item by item, where the right side
        is a tuple or a same-file function whose returns are tuples (empty when not known)."""
        element = self.analysis.parent(target)
        sequence = self.analysis.parent(element) if isinstance(element, cst.Element) else None
        assign_target = self.analysis.parent(sequence) if isinstance(sequence, (cst.Tuple, cst.List)) else None
        statement = self.analysis.parent(assign_target) if isinstance(assign_target, cst.AssignTarget) else None
        if not isinstance(statement, cst.Assign) or any(isinstance(e, cst.StarredElement) for e in sequence.elements):
            return []
        index = list(sequence.elements).index(element)
        value = statement.value
        sources = self._returned_values(value) if isinstance(value, cst.Call) else [value]
        items = []
        for source in sources:
            if not isinstance(source, (cst.Tuple, cst.List)) or len(source.elements) != len(sequence.elements):
                return []
            if any(isinstance(e, cst.StarredElement) for e in source.elements):
                return []
            items.append(source.elements[index].value)
        return items

    def _callee(self, call: cst.Call) -> cst.FunctionDef | None:
        func = call.func
        if isinstance(func, cst.Name):
            # What every scope sees, without scope analysis: a module-level def or class bound once, or no binding
            name = func.value
            if self.analysis.binds_once(name) and (name in self.analysis.module_functions or name in self.analysis.local_classes):
                return self.analysis.module_functions.get(name)
            if not self.analysis.binds(name):
                return None
            scope = self.analysis.scope_of(func)
            if scope is None:
                return None
            defs = [a.node for a in scope[func.value] if isinstance(a, Assignment) and isinstance(a.node, cst.FunctionDef)]
            return defs[0] if len(defs) == 1 else None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
            function = self.analysis.enclosing_function(func)
            owner = self.analysis.enclosing_class(function) if function is not None else None
            if owner is None:
                return None
            return self._method_of(owner, func.attr.value)
        return None

    def _param_function(self, param: cst.Param) -> cst.FunctionDef | None:
        parent = self.analysis.parent(param)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda)):
            parent = self.analysis.parent(parent)
        return parent if isinstance(parent, cst.FunctionDef) else None

    def _arguments_for(self, function: cst.FunctionDef, param: cst.Param) -> list[cst.BaseExpression | None]:
        """The argument each same-file caller passes for ``param`` (None where a caller passes none)."""
        owner = self.analysis.enclosing_class(function)
        is_method = owner is not None and not any(
            self.analysis.resolves_to(d.decorator, {"builtins.staticmethod", "staticmethod"}) for d in function.decorators
        )
        if function.name.value == "__init__" and owner is not None:
            calls = [call for call in self._calls_of_name.get(owner.name.value, ()) if self._local_class(call.func) is owner]
            # `cls(image_encoder=..., decoder=...)` in a classmethod of the class (`from_config`) constructs it too
            calls += [call for call in self._calls_of_name.get("cls", ()) if self._in_classmethod_of(call, owner)]
            bound = True
        else:
            calls = [call for call in self.analysis.callers_of(function) if isinstance(call.func, cst.Attribute) == is_method]
            bound = is_method
        index = parameter_position(function, param, bound)
        return [passed_argument(call, index, param.name.value) for call in calls]

    def _in_classmethod_of(self, call: cst.Call, owner: cst.ClassDef) -> bool:
        function = self.analysis.enclosing_function(call)
        return function is not None and self.analysis.enclosing_class(function) is owner and _is_classmethod(function)

    def _param_runs_or_is_kept(self, param: cst.Param) -> bool:
        """The parameter is called (``model(x)``, ``model.forward(x)``) or kept on ``self`` (``self.decoder =
        decoder``) in its function: only then does what callers elsewhere pass matter (asking them parses
        their files)."""
        scope = self.analysis.scope_of(param.name)
        if scope is None:
            return False
        for assignment in scope[param.name.value]:
            if not isinstance(assignment, Assignment) or assignment.node is not param:
                continue
            for access in references_of(assignment):
                node = access.node
                parent = self.analysis.parent(node)
                if isinstance(parent, cst.Call) and parent.func is node:
                    return True
                if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in ("forward", *fw.MODULE_SELF_METHODS):
                    return True
                if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node:
                    return True
        return False

    def _param_used_as_module(self, param: cst.Param) -> bool:
        scope = self.analysis.scope_of(param.name)
        if scope is None:
            return False
        return any(
            a.node is param and self._references_used_as_module(a) for a in scope[param.name.value] if isinstance(a, Assignment)
        )

    def _references_used_as_module(self, assignment: Assignment) -> bool:
        known = self._used_as_module.get(assignment)
        if known is None:
            nodes = [access.node for access in references_of(assignment) if isinstance(access.node, cst.Name)]
            known = self._used_as_module[assignment] = self._nodes_used_as_module(nodes)
        return known

    def _nodes_used_as_module(self, nodes: list[cst.CSTNode]) -> bool:
        """Some node is used with a module-only method. ``.train()`` counts only for an object that is also
        called: transformers' ``Trainer`` has a ``.train()`` too, but is never called like a model. In a module
        that imports another framework (MLX, JAX, TensorFlow) and not torch, such use says nothing: MLX models
        have ``.parameters()``, ``.train()`` and ``.eval()`` too."""
        if not self._use_is_torch_evidence:
            return False
        methods = {self._method_called_on(node) for node in nodes}
        if methods & (fw.MODULE_ONLY_METHODS - {"train"}):
            return True
        return "train" in methods and any(self._is_called(node) for node in nodes)

    @cached_property
    def _use_is_torch_evidence(self) -> bool:
        return self.analysis.imports_any(("torch",)) or not self.analysis.imports_any(_OTHER_FRAMEWORK_PACKAGES)

    def _method_called_on(self, node: cst.CSTNode) -> str | None:
        """``"eval"`` for ``node.eval()``; None when ``node`` is not the receiver of a method call."""
        attribute = self.analysis.parent(node)
        if not isinstance(attribute, cst.Attribute) or attribute.value is not node:
            return None
        call = self.analysis.parent(attribute)
        if not isinstance(call, cst.Call) or call.func is not attribute:
            return None
        if attribute.attr.value == "eval" and call.args:
            return None  # a module's `eval()` takes no argument: `engine.eval(expression)` evaluates something else
        return attribute.attr.value

    def _is_called(self, node: cst.CSTNode) -> bool:
        parent = self.analysis.parent(node)
        return isinstance(parent, cst.Call) and parent.func is node

    def _bound_and_used_as_module(self, call: cst.Call) -> bool:
        """The result of ``call`` is assigned to a name that is then used with module-only methods."""
        statement = self.analysis.parent(call)
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
            return False
        target = statement.targets[0].target
        if isinstance(target, cst.Name):
            scope = self.analysis.scope_of(target)
            if scope is None:
                return False
            return any(a.node is target and self._references_used_as_module(a) for a in scope[target.value] if isinstance(a, Assignment))
        if isinstance(target, cst.Attribute) and (owner := self._member_owner(target)) is not None:
            return self._member_used_as_module(owner, target.attr.value)
        return False

    def _member_used_as_module(self, owner: cst.ClassDef, name: str) -> bool:
        """Some ``self.<name>`` of ``owner`` is used as a module (asked once per member, as for a name's assignments)."""
        key = (owner, name)
        known = self._members_used_as_module.get(key)
        if known is None:
            known = self._members_used_as_module[key] = self._nodes_used_as_module(self._member_nodes(owner, name))
        return known

    def _member_nodes(self, owner: cst.ClassDef, name: str) -> list[cst.Attribute]:
        """Every ``self.<name>`` / ``cls.<name>`` of the class ``owner``."""
        return [node for node in self._attributes_named.get(name, ()) if self._member_owner(node) is owner]

    @cached_property
    def _attributes_named(self) -> dict[str, list[cst.Attribute]]:
        index: dict[str, list[cst.Attribute]] = {}
        for node in self.analysis.nodes_of(cst.Attribute):
            index.setdefault(node.attr.value, []).append(node)
        return index

    def _constructed_class(self, origin: ModelOrigin) -> cst.ClassDef | None:
        if not isinstance(origin.node, cst.Call):
            return None
        func = origin.node.func
        cls = self._local_class(func)
        if cls is None and isinstance(func, cst.Attribute):
            return self._classmethod_constructor(func)
        return cls

    def _classmethod_constructor(self, func: cst.Attribute) -> cst.ClassDef | None:
        """``Captioner.from_settings``: a classmethod of a class of this file that returns ``cls(...)`` builds an
        instance of that class."""
        owner = self._local_class(func.value)
        method = self._method_of(owner, func.attr.value) if owner is not None else None
        if method is None or not _is_classmethod(method):
            return None
        returns_instance = any(isinstance(value, cst.Call) and is_name(value.func, "cls") for value in self.analysis.returned_values(method))
        return owner if returns_instance else None

    def _self_eval_methods(self, cls: cst.ClassDef) -> frozenset[str]:
        methods = set()
        for current in self._class_chain(cls):
            for statement in current.body.body:
                if isinstance(statement, cst.FunctionDef) and any(
                    isinstance(node, cst.Call)
                    and self.mode_call(node) == "eval"
                    and is_member(node.func, ("self",))
                    for node in self.analysis.subtree(statement.body)
                ):
                    methods.add(statement.name.value)
        return frozenset(methods)

    # -- file-wide indexes -------------------------------------------------------------------------
    @cached_property
    def _calls(self) -> list[cst.Call]:
        return self.analysis.nodes_of(cst.Call)

    @cached_property
    def _calls_of_name(self) -> dict[str, list[cst.Call]]:
        index: dict[str, list[cst.Call]] = {}
        for call in self._calls:
            if isinstance(call.func, cst.Name):
                index.setdefault(call.func.value, []).append(call)
        return index

    @cached_property
    def _method_calls(self) -> list[tuple[cst.Call, cst.BaseExpression]]:
        return [(call, call.func.value) for call in self._calls if isinstance(call.func, cst.Attribute)]

    @cached_property
    def _evaluated_nodes(self) -> frozenset[cst.CSTNode]:
        nodes = set()
        for call, receiver in self._method_calls:
            if self.mode_call(call) == "eval":
                nodes.update(origin.node for origin in self.origins(receiver))
        return frozenset(nodes)

    @cached_property
    def _freezes(self) -> list[tuple[cst.BaseExpression, str]]:
        found = []
        outside = self.analysis.outside
        for call, receiver in self._method_calls:
            name = call.func.attr.value
            if name == "requires_grad_":
                flag = argument(call, 0, "requires_grad")
                if flag is not None and literal_value(flag.value) is False:
                    found.append((receiver, f"its parameters are frozen with `{shown(receiver)}.requires_grad_(False)`"))
            elif not call.args and "freeze" in name.lower() and outside is not None and outside.methods_freeze_self(name):
                # `separator.freeze()`, where every class of the project with a `freeze` freezes all its parameters
                found.append((receiver, f"`{shown(receiver)}.{name}()` freezes every parameter (the project's `{name}` methods do)"))
        for node in self.analysis.nodes_of(cst.For):
            if isinstance(node.iter, cst.Call) and isinstance(node.iter.func, cst.Attribute):
                method = node.iter.func.attr.value
                if method in ("parameters", "named_parameters") and self._loop_freezes(node, method):
                    owner = node.iter.func.value
                    found.append((owner, f"a loop over `{shown(owner)}.{method}()` freezes every parameter"))
        return found

    def _loop_freezes(self, loop: cst.For, method: str) -> bool:
        target = loop.target
        if method == "named_parameters":
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                return False
            target = target.elements[1].value
        if not isinstance(target, cst.Name):
            return False
        variable = target.value
        if not isinstance(loop.body, cst.IndentedBlock):
            statements = [loop.body]
        else:
            statements = list(loop.body.body)
        for statement in statements:  # unconditional statements of the loop body only: every parameter
            if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                continue
            for small in statement.body:
                if isinstance(small, cst.Assign) and literal_value(small.value) is False and any(
                    is_member(t.target, (variable,), "requires_grad") for t in small.targets
                ):
                    return True
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    call = small.value
                    if is_member(call.func, (variable,), "requires_grad_"):
                        flag = argument(call, 0, "requires_grad")
                        if flag is not None and literal_value(flag.value) is False:
                            return True
        return False

    @cached_property
    def _constructed(self) -> list[ModelOrigin]:
        found = []
        for call in self._calls:
            origin = self.producer(call)
            if origin is None or origin.kind is not Origin.CONSTRUCTED:
                continue
            if self._inside_model_class(call) or self._part_of_another_construction(call):
                continue
            found.append(origin)
        return found

    @cached_property
    def _bindings(self) -> dict[cst.CSTNode, list[cst.BaseSmallStatement]]:
        bindings: dict[cst.CSTNode, list[cst.BaseSmallStatement]] = {}
        for node in self.analysis.nodes_of(cst.Assign, cst.AnnAssign):
            if node.value is not None:
                for origin in self.direct_origins(node.value):
                    bindings.setdefault(origin.node, []).append(node)
        return bindings

    def _inside_model_class(self, node: cst.CSTNode) -> bool:
        return any(isinstance(a, cst.ClassDef) and self.is_model_class(a) for a in self.analysis.ancestors(node))

    def _part_of_another_construction(self, call: cst.Call) -> bool:
        """``nn.Sequential(nn.Dropout(...))``: the inner module's mode follows the outer one's."""
        for ancestor in self.analysis.ancestors(call):
            if isinstance(ancestor, cst.Call) and ancestor is not call:
                origin = self.producer(ancestor)
                if origin is not None and origin.kind is Origin.CONSTRUCTED:
                    return True
            if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return False
        return False


#: torch.nn's containers, which run the modules they are given (a project's among them).
_TORCH_NN_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


def _torch_nn_class(name: str) -> str | None:
    """``torch.nn.Linear`` -> ``Linear``: a module class of torch.nn (not Parameter, not functional)."""
    for prefix in ("torch.nn.", "torch.nn.modules."):
        if name.startswith(prefix):
            last = name.rsplit(".", 1)[-1]
            rest = name[len("torch.nn.") :]
            if rest.split(".", 1)[0] in ("functional", "init", "utils", "parameter"):
                return None
            if last[:1].isupper() and last not in fw.TORCH_NN_NON_MODULES:
                return last
    return None


def _is_hf_base(name: str) -> bool:
    """``transformers.BertPreTrainedModel``, ``diffusers.ModelMixin`` and the like."""
    return name.startswith(("transformers.", "diffusers.")) and name.endswith(("PreTrainedModel", "ModelMixin"))


#: The folders a local clone of a self-guarding hub repository is named as (``yolov5``).
_SELF_GUARDED_HUB_FOLDERS = frozenset(repo.rsplit("/", 1)[-1] for repo in fw.SELF_GUARDED_HUB_REPOS)
_HUB_LOADS = frozenset({"torch.hub.load"})
#: Module methods whose result is the module, called and run in one expression (`net.to(device)(x)`); not
#: `requires_grad_`, whose module records no graph when given `False`.
_RUNS_AS_ITSELF = frozenset({"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "eval", "train", "xpu", "mps"})
#: How many helpers deep a value returned by a helper of this file is followed to tell it is no model.
_NON_MODEL_HELPER_DEPTH = 2
_OTHER_FRAMEWORK_PACKAGES = tuple(prefix.rstrip(".") for prefix in fw.OTHER_FRAMEWORKS)


def _is_classmethod(function: cst.FunctionDef) -> bool:
    return any(is_name(d.decorator, "classmethod") for d in function.decorators)


def shown(expression: cst.BaseExpression) -> str:
    """Source-like text of an expression for messages (``self.model``)."""
    return dotted_name(expression) or cst.Module([]).code_for_node(expression)


def _converts_itself(value: cst.BaseExpression, name: str) -> bool:
    """``name.method(...)``: a call of a method on the value the name is bound to again (``m = m.autoshape()``),
    other than the module methods that return the module itself (``m = m.cuda()``)."""
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and is_name(value.func.value, name)
        and value.func.attr.value not in fw.MODULE_SELF_METHODS
    )


def _annotated_class(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The class a parameter is annotated with (``model: KModel``, ``Optional[KModel]``, ``KModel | None``)."""
    annotation = node.annotation.annotation if isinstance(node, cst.Param) and node.annotation is not None else None
    if isinstance(annotation, cst.Subscript) and terminal_name(annotation.value) == "Optional" and len(annotation.slice) == 1:
        element = annotation.slice[0].slice
        annotation = element.value if isinstance(element, cst.Index) else None
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr) and is_name(annotation.right, "None"):
        annotation = annotation.left
    return annotation if isinstance(annotation, (cst.Name, cst.Attribute)) else None


def _single_target(binding: cst.BaseSmallStatement) -> cst.BaseExpression | None:
    """What ``x = value`` / ``x: T = value`` binds; None for ``a = b = value``."""
    if isinstance(binding, cst.Assign):
        return binding.targets[0].target if len(binding.targets) == 1 else None
    return binding.target if isinstance(binding, cst.AnnAssign) else None


def _unique(origins: list[ModelOrigin]) -> tuple[ModelOrigin, ...]:
    seen, result = set(), []
    for origin in origins:
        if origin.node not in seen:
            seen.add(origin.node)
            result.append(origin)
    return tuple(result)


def _class_default(param: cst.Param) -> bool:
    """The parameter's default names a class (``nn.Linear``, ``LayerNorm``; CamelCase, not a CONSTANT)."""
    default = param.default
    if not isinstance(default, (cst.Name, cst.Attribute)):
        return False
    last = default.value if isinstance(default, cst.Name) else default.attr.value
    return last[:1].isupper() and not last.isupper()


#: optimum's model classes that run another runtime's compiled graph (their calls build no autograd graph).
_OPTIMUM_RUNTIMES = (
    ("optimum.onnxruntime.", "ONNX Runtime"),
    ("optimum.neuron.", "AWS Neuron"),
    ("optimum.intel.openvino.", "OpenVINO"),
    ("optimum.intel.OV", "OpenVINO"),
)
