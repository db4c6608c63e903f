"""What one module declares, for the project index: imports, classes and their bases, functions with their
call sites, and what module-level names and ``self.<attr>`` are bound to.

Summaries are read from Python's own ``ast`` (the tree astroid builds its nodes from, at a tenth of a
LibCST parse): the index needs declarations and call spellings of every project file, not the
concrete syntax the rules report on. A summary holds only strings, numbers and collections of them, so it is
stored as JSON data in the on-disk cache (:mod:`gemlint.project.summary_codec`) and travels to worker
processes.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from gemlint.analysis.ast_walk import SCALAR_FIELDS, child_fields, fields_table
from gemlint.analysis.frameworks import GRADIO_APPS, GRADIO_EVENTS, REGISTRATION_METHODS, ROUTE_HANDLER_KEYWORDS, ROUTE_OBJECTS, WEB_FRAMEWORKS
from gemlint.analysis.triage import SyntaxCollector, SyntaxFacts
from gemlint.discovery import forget_listings, listed_package

#: Calls that put a model in eval mode (``m.eval()``, ``m.train(False)``, ``m.requires_grad_(False)`` is not).
_EVAL_METHODS = frozenset({"eval"})


@dataclass(slots=True)
class CallSite:
    callee: str  # the dotted spelling of the called expression: "helper", "self.engine.generate", "mod.f"
    line: int
    column: int  # byte offset, as ``ast`` gives it
    ordinal: int  # among the calls with the same terminal name on the same line, in column order
    #: Written inside ``with torch.no_grad()``/``inference_mode()`` or a function decorated with one (by
    #: spelling; guards further up the callers are not seen here).
    guarded: bool = False


@dataclass(slots=True)
class FunctionSummary:
    qualname: str  # "helper", "Handler.handle"
    line: int
    params: tuple[str, ...]
    decorators: tuple[str, ...]
    calls: list[CallSite] = field(default_factory=list)
    #: Local names bound to a call: ``engine = Engine(cfg)`` -> {"engine": ["Engine"]}. A later binding in the
    #: same block replaces an earlier one; bindings on different branches (``if``/``else``, ``try``/``except``,
    #: a loop that may not run) are alternatives, each of which may hold (``?`` for a value that is not a call).
    locals: dict[str, list[str]] = field(default_factory=dict)
    #: Spellings of what the function returns: a call's callee ("Net", "build") or a name ("model").
    returns: list[str] = field(default_factory=list)
    #: The same for the elements of a returned tuple (``return generator, config`` -> ["generator", "config"]):
    #: what unpacking the call's result may bind (``self.model, self.config = load(path)``).
    returned_parts: list[str] = field(default_factory=list)
    #: What a torch container the function returns holds, as the callees that build it (``return
    #: nn.Sequential(nn.Conv2d(...), nn.ReLU())`` -> ["nn.Conv2d", "nn.ReLU"]): whether a block a helper builds has a mode.
    returned_contents: list[str] = field(default_factory=list)
    #: Names and attributes put in eval mode in the body ("model", "self.net").
    evaluated: set[str] = field(default_factory=set)
    #: Names and attributes whose ``load_state_dict`` is called in the body (weights loaded into a model).
    loads_state: set[str] = field(default_factory=set)
    #: Names and attributes whose every parameter the body freezes: ``self.clip.eval().requires_grad_(False)``,
    #: or ``p.requires_grad = False`` for each ``p`` of ``self.parameters()`` -> {"self.clip", "self"}.
    frozen: set[str] = field(default_factory=set)
    #: Names and attributes whose every parameter the body sets to a parameter's value: ``for p in
    #: self.parameters(): p.requires_grad = state`` -> {"self": "state"}: frozen where a caller passes ``False``.
    frozen_by: dict[str, str] = field(default_factory=dict)
    #: Names and attributes the body switches to a parameter's mode: ``self.train(mode)`` -> {"self": "mode"}: put
    #: in eval mode where a caller passes ``False``.
    switched_by: dict[str, str] = field(default_factory=dict)
    #: Calls of the object's own methods given ``False``, as "callee:position" or "callee:keyword": a literal, or
    #: what is ``False`` when the function's own parameters keep their defaults (``flag`` whose default is
    #: ``False``, ``not mode`` whose default is ``True``) (``self.set_requires_grad(False)`` ->
    #: "self.set_requires_grad:0").
    false_arguments: list[str] = field(default_factory=list)
    #: Local names bound to names: ``block = Fast if convert else Plain`` (or ``block = Fast`` and, in another
    #: branch, ``block = Plain``) -> {"block": ["Fast", "Plain"]}: what ``self.layer = block(...)`` may build.
    choices: dict[str, list[str]] = field(default_factory=dict)
    #: The body (nested functions included) names ``no_grad`` or ``inference_mode``: a decorator factory such
    #: as ``smart_inference_mode()`` that wraps what it decorates in a grad-free guard.
    names_grad_guard: bool = False
    #: Parameters annotated with a name: ``model: Model = Depends(get_model)`` -> {"model": "Model"}. A call of a
    #: parameter's method (``model.predict(x)``) runs that class's method.
    annotations: dict[str, str] = field(default_factory=dict)
    #: What FastAPI's ``Depends(...)`` in the parameters names (``model = Depends(get_model)``, or in an
    #: ``Annotated[...]`` annotation) -> ["get_model"]: functions run on every call of this one.
    dependencies: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ClassSummary:
    name: str
    line: int
    bases: tuple[str, ...]
    decorators: tuple[str, ...]
    methods: dict[str, FunctionSummary] = field(default_factory=dict)
    #: ``self.<attr> = <call>`` in any method, class attributes bound to calls, and ``self.<attr> = <param>``
    #: with an annotated parameter: attr -> callee (or annotation) spellings.
    attributes: dict[str, list[str]] = field(default_factory=dict)
    #: ``self.<attr>`` bound in a method to a value that is neither a call, a literal nor a display (a parameter
    #: without annotation, another attribute, an expression): what the attribute holds is not known.
    opaque_attributes: list[str] = field(default_factory=list)
    #: A method reads ``self.training``: the class behaves differently in training and in eval mode.
    reads_training: bool = False
    #: Attribute -> whether every layer of :data:`MODE_ARGUMENTS` bound to it (``self.lstm = nn.LSTM(...)``,
    #: ``self.norm = nn.InstanceNorm2d(c)``) is given no argument that makes it differ between train and eval mode.
    mode_free_layers: dict[str, bool] = field(default_factory=dict)


@dataclass(slots=True)
class ModuleSummary:
    name: str
    is_package: bool
    #: Local name -> the absolute dotted name it imports (``from .models import build`` in ``svc.app``
    #: gives {"build": "svc.models.build"}); star imports are kept as "<module>.*".
    imports: dict[str, str] = field(default_factory=dict)
    classes: dict[str, ClassSummary] = field(default_factory=dict)
    functions: dict[str, FunctionSummary] = field(default_factory=dict)
    #: Module-level names bound to a call: name -> callee spellings.
    bindings: dict[str, list[str]] = field(default_factory=dict)
    #: Module-level dicts whose values are all names (a registry of builders): name -> the values' spellings.
    registries: dict[str, list[str]] = field(default_factory=dict)
    #: The calls made by module-level statements (a script's body).
    module_calls: list[CallSite] = field(default_factory=list)
    star_imports: list[str] = field(default_factory=list)
    #: For a package's ``__init__``: every module an import statement names, at any level, as an absolute name
    #: (``from .kernel import fused`` gives ``pkg.kernel``), even where two of them bind one local name in two
    #: branches. (Only a package's imports are asked about: other modules leave it empty.)
    imported_modules: list[str] = field(default_factory=list)
    #: Functions handed to Gradio (an app's ``fn``, an event listener's ``btn.click(f)``), which Gradio calls on
    #: every event: the qualname of the function that hands them ("" at module level) -> their spellings.
    callbacks: dict[str, list[str]] = field(default_factory=dict)
    #: Functions handed to a web framework's route table (Django's ``path("predict/", views.predict)``, Flask's
    #: ``app.add_url_rule("/", view_func=views.index)``), which the framework calls on every request: as
    #: :attr:`callbacks`.
    routed: dict[str, list[str]] = field(default_factory=dict)
    #: The triage facts of the same tree, so that linting the file needs no second ``ast`` parse.
    syntax: SyntaxFacts | None = None

    def callables(self):
        """Every function and method summary of the module."""
        yield from self.functions.values()
        for cls in self.classes.values():
            yield from cls.methods.values()


#: One empty container of each kind for every empty field of the summaries read back or handed over (most of a
#: function's sets and dicts are empty: 360,000 of them on the speed corpus). Summaries are never changed once
#: built.
EMPTY: dict[type, object] = {list: [], set: set(), frozenset: frozenset(), tuple: (), dict: {}}
#: The dataclasses a summary is made of.
SUMMARY_CLASSES = (ModuleSummary, ClassSummary, FunctionSummary, CallSite, SyntaxFacts)


#: Values that hold no module: constants, f-strings and displays (what a display holds is not registered).
_DATA_VALUES = (ast.Constant, ast.JoinedStr, ast.Dict, ast.List, ast.Tuple, ast.Set)


def _valued_parameters(args: ast.arguments) -> frozenset[str]:
    """The parameters whose default is a literal value other than None: a number, string or flag, or a list or
    tuple of them."""
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults), *zip(args.kwonlyargs, args.kw_defaults)]
    return frozenset(parameter.arg for parameter, default in pairs if default is not None and _literal_value(default))


def _dependencies(args: ast.arguments) -> list[str]:
    """The functions ``Depends(...)`` names in the parameters: as a default (``model = Depends(get_model)``) or in an
    ``Annotated[Model, Depends(get_model)]`` annotation. Read where they are written, without walking the rest of
    the signature: every function of every module is asked."""
    candidates = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    for parameter in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        annotation = parameter.annotation
        if isinstance(annotation, ast.Subscript) and (dotted(annotation.value) or "").rsplit(".", 1)[-1] == "Annotated":
            inside = annotation.slice
            candidates.extend(inside.elts if isinstance(inside, ast.Tuple) else [inside])
    found = []
    for node in candidates:
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and (dotted(node.func) or "").rsplit(".", 1)[-1] == "Depends":
            given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "dependency"), None)
            spelled = dotted(given) if given is not None else None
            if spelled and "()" not in spelled:
                found.append(spelled)
    return found


def _literal_value(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is not None and not isinstance(node.value, type(...))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _literal_value(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_literal_value(element) for element in node.elts)
    return False


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of names and attributes (a call in the chain keeps its callee: ``a().b`` ->
    ``a().b``), else None."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        elif isinstance(node, ast.Call):
            inner = dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
            return ".".join(reversed(parts))
        else:
            return None


def _absolute(module: str, is_package: bool, level: int, target: str | None) -> str:
    if not level:
        return target or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        package = package[: len(package) - (level - 1)]
    return ".".join([*package, *([target] if target else [])])


class _Summariser:
    """One recursive walk with a handler per node type. ``ast.NodeVisitor`` looks its method up by name
    and lists every field of every node; dispatching on the type and skipping the fields that never hold
    a statement or an expression (a third of all nodes are Load/Store contexts) halves the walk."""

    def __init__(self, summary: ModuleSummary, syntax: SyntaxCollector) -> None:
        self.summary = summary
        #: Handed every node the triage facts read, as the walk meets it (each exactly once).
        self.syntax = syntax
        self.classes: list[ClassSummary] = []
        self.functions: list[FunctionSummary] = []
        #: Per open function: its parameters' annotations, spelled (``sam_model: Sam`` -> {"sam_model": "Sam"}).
        self._annotations: list[dict[str, str]] = []
        #: Per open function: its parameters whose default is a literal value (``use_gpu=True``, ``ids=[0]``).
        self._valued: list[frozenset[str]] = []
        #: Per open function: its parameters whose default is ``False`` (``requires_grad=False``), and those whose
        #: default is ``True``.
        self._false_by_default: list[frozenset[str]] = []
        self._true_by_default: list[frozenset[str]] = []
        #: How many grad-free ``with`` blocks and decorated functions enclose the current node.
        self._guards = 0
        self._seen: dict[tuple[int, str], int] = {}
        #: The branch the current node is on: one (statement id, arm) pair per enclosing if/try/loop/match arm.
        self._arm: tuple[tuple[int, int], ...] = ()
        #: Per open function: the branch each local was last bound on.
        self._bound_at: list[dict[str, tuple[tuple[int, int], ...]]] = []
        #: Per open function: what each local list built there may hold (``layers = [Norm()]``, then
        #: ``layers.append(Block())`` -> ["Norm", "Block"]), for the container built from it; None once the list
        #: is rebound, handed to a call or written through an index (what it holds is then not known).
        self._lists: list[dict[str, list[str] | None]] = []
        #: Per open function: the locals a loop binds to the parts of an attribute (``for layer in self.layers``,
        #: ``for spec, layer in zip(self.specs, self.layers)``) -> the attributes it walks.
        self._loop_parts: list[dict[str, tuple[str, ...]]] = []
        #: Whether the module imports Gradio, and the names and attributes bound to its components, Blocks and
        #: events (``btn = gr.Button()``, ``with gr.Blocks() as demo``): the receivers whose listeners take callbacks.
        self._gradio = False
        #: The module imports a web framework: its route tables hand functions to it (see :attr:`ModuleSummary.routed`).
        self._web = False
        self._gradio_objects: set[str] = set()

    def _name(self, node: ast.Name) -> None:
        if node.id in _GRAD_GUARD_NAMES and self.functions:
            self.functions[0].names_grad_guard = True

    def _attribute(self, node: ast.Attribute) -> None:
        if node.attr in _GRAD_GUARD_NAMES and self.functions:
            self.functions[0].names_grad_guard = True
        elif node.attr == "training" and self.classes and self.functions and isinstance(node.value, ast.Name) and node.value.id == "self":
            self.classes[-1].reads_training = True
        self.children(node)

    def visit(self, node: ast.AST) -> None:
        handler = self._HANDLERS.get(type(node))
        if handler is None:
            self.children(node)
        else:
            handler(self, node)

    def children(self, node: ast.AST) -> None:
        # :meth:`visit` written out: a module's walk makes a million of these dispatches (a tenth of the walk).
        handlers = self._HANDLERS
        kind = type(node)
        for name in _FIELDS.get(kind) or child_fields(kind, SCALAR_FIELDS):
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    handler = handlers.get(type(item))
                    if handler is not None:
                        handler(self, item)
                    elif isinstance(item, ast.AST):
                        self.children(item)
            elif value is not None:
                handler = handlers.get(type(value))
                if handler is not None:
                    handler(self, value)
                elif isinstance(value, ast.AST):
                    self.children(value)

    # -- imports -------------------------------------------------------------------
    def _import(self, node: ast.Import) -> None:
        self.syntax.import_(node)
        for alias in node.names:
            self._imported_module(alias.name)
            self._gradio = self._gradio or alias.name.split(".")[0] == "gradio"
            self._web = self._web or alias.name.split(".")[0] in WEB_FRAMEWORKS
            if alias.asname:
                self.summary.imports[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.summary.imports.setdefault(top, top)

    def _import_from(self, node: ast.ImportFrom) -> None:
        self.syntax.import_from(node)
        base = _absolute(self.summary.name, self.summary.is_package, node.level, node.module)
        if base:
            self._imported_module(base)
            self._gradio = self._gradio or base.split(".")[0] == "gradio"
            self._web = self._web or base.split(".")[0] in WEB_FRAMEWORKS
        for alias in node.names:
            if alias.name == "*":
                self.summary.star_imports.append(base)
                continue
            name, target = alias.asname or alias.name, f"{base}.{alias.name}" if base else alias.name
            earlier = self.summary.imports.get(name)
            if not node.level and earlier is not None and earlier.endswith(f".{target}"):
                # `try: from .inception import X` / `except ImportError: from inception import X`: the fallback
                # for a run as a script from the package's folder names the same module; the package's name
                # finds it, the script's folder is not searched.
                continue
            self.summary.imports[name] = target

    def _imported_module(self, name: str) -> None:
        if self.summary.is_package and name not in self.summary.imported_modules:
            self.summary.imported_modules.append(name)

    # -- declarations --------------------------------------------------------------------
    def _class(self, node: ast.ClassDef) -> None:
        self.syntax.class_(node)
        if self.functions:  # a class local to a function: its methods are not reachable by name
            self.children(node)
            return
        qual = ".".join([*(c.name for c in self.classes), node.name])
        summary = ClassSummary(
            qual,
            node.lineno,
            tuple(filter(None, (dotted(b) for b in node.bases))),
            tuple(filter(None, (dotted(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list))),
        )
        self.summary.classes[qual] = summary
        self.classes.append(summary)
        for statement in node.body:
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
                callee = dotted(statement.value.func)
                for target in statement.targets:
                    if isinstance(target, ast.Name) and callee:
                        summary.attributes.setdefault(target.id, []).append(callee)
        self.children(node)
        self.classes.pop()

    def _function(self, node) -> None:
        self.syntax.function(node)
        # The signature holds nothing the summary records, but calls and names the triage facts read (defaults,
        # annotations).
        for part in (node.args, node.returns, *getattr(node, "type_params", ())):
            if part is not None:
                self.syntax.walk(part)
        owner = self.classes[-1] if self.classes and not self.functions else None
        qual = f"{owner.name}.{node.name}" if owner is not None else node.name
        if self.functions:
            qual = f"{self.functions[-1].qualname}.<locals>.{node.name}"
        args = node.args
        params = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
        decorators = tuple(filter(None, (dotted(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list)))
        function = FunctionSummary(qual, node.lineno, params, decorators)
        if owner is not None:
            owner.methods[node.name] = function
        elif not self.functions:
            self.summary.functions[node.name] = function
        self.functions.append(function)
        self._bound_at.append({})
        self._lists.append({})
        self._loop_parts.append({})
        dependencies = _dependencies(args)
        if dependencies:
            function.dependencies = dependencies
        annotations = {a.arg: spelled for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.annotation is not None and (spelled := dotted(a.annotation))}
        self._annotations.append(annotations)
        if annotations:
            function.annotations = dict(annotations)
        self._valued.append(_valued_parameters(args))
        self._false_by_default.append(_by_default(args, False))
        self._true_by_default.append(_by_default(args, True))
        for decorator in node.decorator_list:
            self.visit(decorator)
        # A grad-free decorator guards the body; an async def's only covers making the coroutine.
        guard = isinstance(node, ast.FunctionDef) and any(_grad_free(d) for d in node.decorator_list)
        saved = self._guards
        self._guards = 1 if guard else 0  # a nested function runs when called, not inside the enclosing guard
        for statement in node.body:
            self.visit(statement)
        self._guards = saved
        self._annotations.pop()
        self._valued.pop()
        self._false_by_default.pop()
        self._true_by_default.pop()
        self._bound_at.pop()
        self._lists.pop()
        self._loop_parts.pop()
        self.functions.pop()

    def _with(self, node) -> None:
        # `with A, B:` is `with A: with B:`: what follows a grad-free item (``self.model.ema_scope()``) runs under it
        guard = 0
        for item in node.items:
            self.visit(item)
            if self._gradio and item.optional_vars is not None and self._is_gradio_object(item.context_expr):
                spelled = dotted(item.optional_vars)
                if spelled:
                    self._gradio_objects.add(spelled)
            if not guard and _grad_free(item.context_expr):
                guard = 1
                self._guards += 1
        for statement in node.body:
            self.visit(statement)
        self._guards -= guard

    def _branches(self, node) -> None:
        """Visit each arm of an ``if``, loop, ``try`` or ``match`` on a branch of its own, so that a local bound
        to different calls on two arms is known to be either (``_bind_local``). A ``try``'s ``else`` runs after its
        body, and its ``finally`` on every path."""
        outer = self._arm
        here = id(node)
        if isinstance(node, ast.Match):
            self.visit(node.subject)
            arms = [[case] for case in node.cases]
        elif isinstance(node, (ast.If, ast.While)):
            self.visit(node.test)
            arms = [node.body, node.orelse]
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.visit(node.target)
            self.visit(node.iter)
            self._note_loop_parts(node)
            arms = [node.body, node.orelse]
            frozen = _frozen_by_loop(node, self._false_by_default[-1] if self._false_by_default else frozenset())
            if frozen and self.functions:
                owner, by = frozen
                if by is None:
                    self.functions[-1].frozen.add(owner)
                elif by in self.functions[-1].params:
                    self.functions[-1].frozen_by[owner] = by
        else:  # try
            arms = [[*node.body, *node.orelse], *([handler] for handler in node.handlers)]
        for number, statements in enumerate(arms):
            self._arm = (*outer, (here, number))
            for statement in statements:
                self.visit(statement)
        self._arm = outer
        for statement in getattr(node, "finalbody", ()):
            self.visit(statement)

    # -- bindings and calls -----------------------------------------------------------------
    def _assign(self, node: ast.Assign) -> None:
        self.syntax.assign(node)
        self._track_lists(node.targets, node.value)
        self._bind(node.targets, node.value)
        if self._gradio and isinstance(node.value, ast.Call) and self._is_gradio_object(node.value):
            self._gradio_objects.update(spelled for target in node.targets if (spelled := dotted(target)))
        if not self.functions and not self.classes and isinstance(node.value, ast.Dict) and node.value.values:
            values = [dotted(value) for value in node.value.values]
            if all(values):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.summary.registries[target.id] = values  # type: ignore[assignment]
        self.children(node)

    def _aug_assign(self, node: ast.AugAssign) -> None:
        self.syntax.assign(node)
        if isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
            self._add_to_list(node.target.id, _elements(node.value, self._lists[-1] if self._lists else {}, self.functions[-1] if self.functions else None))
        else:
            self._track_lists([node.target], node.value)
        self.children(node)

    def _ann_assign(self, node: ast.AnnAssign) -> None:
        self.syntax.assign(node)
        if node.value is not None:
            self._track_lists([node.target], node.value)
            self._bind([node.target], node.value)
        self.children(node)

    def _bind(self, targets, value: ast.AST) -> None:
        if self.functions and isinstance(value, (ast.IfExp, ast.Name, ast.Attribute)):
            # `block = Fast if convert else Plain`, or `block = Fast` in one branch and `Plain` in another
            alternatives = [dotted(value.body), dotted(value.orelse)] if isinstance(value, ast.IfExp) else [dotted(value)]
            if all(alternatives):
                for target in targets:
                    if isinstance(target, ast.Name):
                        known = self.functions[-1].choices.setdefault(target.id, [])
                        known.extend(a for a in alternatives if a not in known)  # type: ignore[misc]
            if isinstance(value, ast.IfExp):
                self._rebind_unknown(targets)
                self._note_opaque(targets)
                return
        parameter = _module_itself(value)
        if self.functions and isinstance(parameter, ast.Name) and parameter.id in self._annotations[-1]:
            # `self.encoder = encoder` (or `encoder.eval()`) with `encoder: Encoder` a parameter: the
            # annotation names what it holds
            callee = self._annotations[-1][parameter.id]
            targets = [t for t in targets if isinstance(t, ast.Attribute)]
        else:
            callee = _produced_by(value)
        if callee is None:
            self._rebind_unknown(targets)
            # A parameter whose default is a literal value holds a value of its kind (a flag, a size, device ids):
            # the constructor is handed no module through it.
            given_a_value = isinstance(value, ast.Name) and bool(self._valued) and value.id in self._valued[-1]
            if not isinstance(value, _DATA_VALUES) and not given_a_value:
                self._note_opaque(targets)
            return
        for target in targets:
            if isinstance(target, ast.Tuple) and self.functions and self.classes:
                # `self.model, _ = clip.load(...)`: an element of what the call returns, written `clip.load()`
                for element in target.elts:
                    if isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name) and element.value.id == "self":
                        self.classes[-1].attributes.setdefault(element.attr, []).append(f"{callee}()")
                continue
            if self.functions:
                function = self.functions[-1]
                if isinstance(target, ast.Name):
                    self._bind_local(function, target.id, callee)
                elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self" and self.classes:
                    owner = self.classes[-1]
                    held = owner.attributes.setdefault(target.attr, [])
                    held.append(callee)
                    free = _mode_free_layer(value, function.choices)
                    if free is not None:
                        owner.mode_free_layers[target.attr] = owner.mode_free_layers.get(target.attr, True) and free
                    held.extend(_container_contents(callee, value, self._lists[-1]))  # what it holds decides its modes
            elif not self.classes and isinstance(target, ast.Name):
                self.summary.bindings.setdefault(target.id, []).append(callee)

    def _track_lists(self, targets, value: ast.AST) -> None:
        """A local bound to a list display starts a list of known elements; any other binding of a tracked list,
        or a write through its index (``layers[0] = ...``), makes what it holds unknown."""
        if not self._lists:
            return
        lists = self._lists[-1]
        for target in targets:
            if isinstance(target, ast.Name):
                lists[target.id] = _elements(value, lists, self.functions[-1] if self.functions else None) if isinstance(value, (ast.List, ast.Tuple, ast.ListComp)) else None
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                self._add_to_list(target.value.id, None)
            elif isinstance(target, (ast.Tuple, ast.List)):
                self._track_lists(target.elts, ast.Constant(None))

    def _add_to_list(self, name: str, elements: list[str] | None) -> None:
        """Record ``elements`` as put into the list ``name`` (None: something unknown was done to it). A list of
        an enclosing function changed by a nested one (a closure) is not followed: it becomes unknown."""
        for depth, lists in enumerate(reversed(self._lists)):
            if name in lists:
                known = lists[name]
                if elements is None or depth > 0 or known is None:
                    lists[name] = None
                else:
                    known.extend(e for e in elements if e not in known)
                return

    def _list_call(self, node: ast.Call, callee: str) -> None:
        """``layers.append(Block())``, ``layers.extend([...])``, ``layers.insert(0, Norm())`` add to a tracked list;
        a tracked list handed to a call other than a container's constructor may be changed there."""
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in _FILLING_METHODS and node.args:
            lists = self._lists[-1] if self._lists else {}
            argument = node.args[-1] if func.attr != "extend" else node.args[0]
            self._add_to_list(func.value.id, _elements(argument, lists) if func.attr == "extend" else [_element(argument, self.functions[-1] if self.functions else None)])
        if callee.rsplit(".", 1)[-1] in MODULE_CONTAINERS or callee in _READS_A_LIST:
            return
        for value in [*node.args, *(keyword.value for keyword in node.keywords)]:
            if isinstance(value, ast.Starred):
                value = value.value
            if isinstance(value, ast.Name):
                self._add_to_list(value.id, None)

    def _note_opaque(self, targets) -> None:
        if self.functions and self.classes:
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    opaque = self.classes[-1].opaque_attributes
                    if target.attr not in opaque:
                        opaque.append(target.attr)

    def _rebind_unknown(self, targets) -> None:
        """A local bound to a call and then to something else: what it holds from there on is not known."""
        if self.functions:
            function = self.functions[-1]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in function.locals:
                    self._bind_local(function, target.id, UNKNOWN_ELEMENT)

    def _bind_local(self, function: FunctionSummary, name: str, callee: str) -> None:
        if callee.partition(".")[0] == name and callee.rpartition(".")[2] in _SELF_RETURNING:
            return  # `model = model.to(device)`: still what it was
        bound_at = self._bound_at[-1]
        earlier = bound_at.get(name)
        if earlier is None or self._arm == earlier[: len(self._arm)]:
            # the first binding, or one in the block of the earlier binding (or a block enclosing it), after it:
            # it replaces the earlier one on every path
            function.locals[name] = [callee]
            bound_at[name] = self._arm
        else:
            known = function.locals[name]
            if callee not in known:
                known.append(callee)
            bound_at[name] = _common_branch(earlier, self._arm)

    def _return(self, node: ast.Return) -> None:
        if self.functions and node.value is not None:
            function = self.functions[-1]
            if isinstance(node.value, ast.Tuple):
                for element in node.value.elts:
                    spelled = _returned(element, function)
                    if spelled:
                        function.returned_parts.append(spelled)
            else:
                spelled = _returned(node.value, function)
                if spelled:
                    function.returns.append(spelled)
                    function.returned_contents.extend(_container_contents(spelled, node.value, self._lists[-1] if self._lists else {}))
        self.children(node)

    def _note_loop_parts(self, node: ast.For | ast.AsyncFor) -> None:
        if not self._loop_parts:
            return
        walked = tuple(
            sorted({spelled for part in ast.walk(node.iter) if isinstance(part, ast.Attribute) and (spelled := dotted(part)) and spelled.count(".") == 1 and spelled.startswith("self.")})
        )
        if walked:
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    self._loop_parts[-1][name.id] = walked

    def _call(self, node: ast.Call) -> None:
        self.syntax.call(node)
        callee = dotted(node.func)
        if callee is None and isinstance(node.func, ast.Subscript):
            held = dotted(node.func.value)
            if held is not None and held.startswith("self.") and "()" not in held:
                callee = f"{held}[]"  # `self.layers[i](x)`: a part of what the attribute holds, called as a module
        elif isinstance(node.func, ast.Name) and self._loop_parts and self.functions and node.func.id in self._loop_parts[-1]:
            # `for layer in self.layers: x = layer(x)`: a part of each attribute the loop walks, called as a module
            for held in self._loop_parts[-1][node.func.id]:
                self.functions[-1].calls.append(self._site(f"{held}[]", node, self._guards > 0))
        if callee is not None:
            site = self._site(callee, node, self._guards > 0)
            if self.functions:
                function = self.functions[-1]
                function.calls.append(site)
                if callee.startswith("self.") and callee.count(".") == 1:
                    function.false_arguments.extend(_false_arguments(callee, node, self._false_by_default[-1], self._true_by_default[-1]))
                if isinstance(node.func, ast.Attribute):
                    receiver = dotted(node.func.value)
                    if receiver and (node.func.attr in _EVAL_METHODS and not node.args or _train_false(node)):
                        function.evaluated.add(receiver)
                    elif receiver and node.func.attr == "train" and (mode := _mode_argument(node)) is not None:
                        if _false_by_default_value(mode, self._false_by_default[-1], self._true_by_default[-1]):
                            function.evaluated.add(receiver)  # `self.train(not mode)`, `mode` True by default
                        elif isinstance(mode, ast.Name) and mode.id in function.params:
                            function.switched_by[receiver] = mode.id
                    if receiver and node.func.attr == "load_state_dict":
                        function.loads_state.add(receiver)
                    if node.func.attr == "requires_grad_" and _false_argument(node, "requires_grad"):
                        frozen = dotted(_module_itself(node.func.value))
                        if frozen:
                            function.frozen.add(frozen)
                    if receiver and receiver.startswith("self.") and receiver.count(".") == 1 and self.classes and node.func.attr in _FILLING_METHODS:
                        # `self.blocks.append(Block(c))`: a container attribute filled after it was built
                        filled = node.args[-1:] if node.func.attr != "extend" else node.args[:1]
                        for argument in filled:
                            if node.func.attr == "extend":
                                held = _elements(argument, self._lists[-1])
                            elif isinstance(argument, ast.Name):  # a local built before, or a parameter
                                held = function.locals.get(argument.id, [UNKNOWN_ELEMENT])
                            else:  # a call builds it; a constant or an attribute is data (`self.widths.append(self.width)`)
                                built = _produced_by(argument)
                                # `self.blocks.append(nn.Sequential(*layers))`: the container and what it holds
                                held = [built, *_container_contents(built, argument, self._lists[-1])] if built else []
                            self.classes[-1].attributes.setdefault(receiver[5:], []).extend(held)
                    if receiver and node.func.attr == "append" and len(node.args) == 1 and _evaluated_value(node.args[0]):
                        # `ensemble.append(ckpt.eval())`: a container of models put in eval mode
                        function.evaluated.add(receiver)
            elif not self.classes:
                self.summary.module_calls.append(site)
            if callee == "super().__init__" and self.functions and self.classes and self.functions[-1].qualname == f"{self.classes[-1].name}.__init__":
                self._container_parts(node)
            if self.functions and self._guards > 0:
                self._guarded_callbacks(node)
            if self._lists:
                self._list_call(node, callee)
            if self._gradio:
                self._gradio_callback(node, callee)
            if self._web:
                self._route_handler(node, callee)
        self.children(node)

    def _route_handler(self, node: ast.Call, callee: str) -> None:
        """A function handed to a route table: a route object of a web framework (Django's ``path(route, view)``,
        Starlette's ``Route(path, endpoint)``), or a registration method (``app.add_url_rule(rule, endpoint,
        view_func)``, ``app.add_api_route(path, endpoint)``), by position or by the handler's keyword."""
        table = ROUTE_OBJECTS.get(self._imported_name(callee) or "")
        if table is None and "." in callee:
            table = REGISTRATION_METHODS.get(callee.rsplit(".", 1)[-1])
        if table is None:
            return
        position = table[1]
        handed = next((k.value for k in node.keywords if k.arg in ROUTE_HANDLER_KEYWORDS), node.args[position] if len(node.args) > position else None)
        spelled = dotted(handed) if isinstance(handed, (ast.Name, ast.Attribute)) else None
        if spelled and "()" not in spelled:
            self.summary.routed.setdefault(self.functions[-1].qualname if self.functions else "", []).append(spelled)

    def _imported_name(self, spelled: str) -> str | None:
        """``spelled`` as the absolute name this module's imports make it (``gr.Button`` -> ``gradio.Button``), or
        None where its first part is imported by none."""
        head, _, rest = spelled.partition(".")
        imported = self.summary.imports.get(head)
        return f"{imported}.{rest}" if imported and rest else imported

    def _gradio_name(self, spelled: str) -> str | None:
        """``spelled`` as the absolute name this module's imports make it, where that is Gradio's
        (``gr.Button`` -> ``gradio.Button``); else None."""
        name = self._imported_name(spelled)
        return name if name is not None and name.split(".")[0] == "gradio" else None

    def _is_gradio_object(self, node: ast.AST, depth: int = 0) -> bool:
        """A Gradio component, Blocks or event: ``gr.Button()``, a name or attribute bound to one, a listener's
        result (``btn.click(f).then(g)``)."""
        if isinstance(node, ast.Call):
            callee = dotted(node.func)
            if callee is not None and self._gradio_name(callee) is not None:
                return True
            func = node.func
            return depth < 4 and isinstance(func, ast.Attribute) and func.attr in GRADIO_EVENTS and self._is_gradio_object(func.value, depth + 1)
        spelled = dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        return spelled is not None and spelled in self._gradio_objects

    def _gradio_callback(self, node: ast.Call, callee: str) -> None:
        """A function handed to Gradio, which calls it on every event: ``gr.Interface(fn=predict)``,
        ``btn.click(app.respond, ...)``, ``demo.load(functools.partial(refresh, cfg))``, ``lambda x: run(x)``."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in GRADIO_EVENTS:
            if not self._is_gradio_object(func.value):
                return
        elif callee.rsplit(".", 1)[-1] not in _GRADIO_APP_NAMES or self._gradio_name(callee) not in GRADIO_APPS:
            return
        handed = next((keyword.value for keyword in node.keywords if keyword.arg == "fn"), node.args[0] if node.args else None)
        if isinstance(handed, ast.Call) and dotted(handed.func) in _PARTIAL and handed.args:
            handed = handed.args[0]
        elif isinstance(handed, ast.Lambda) and isinstance(handed.body, ast.Call):
            handed = handed.body.func
        spelled = dotted(handed) if handed is not None else None
        if spelled and "()" not in spelled:
            self.summary.callbacks.setdefault(self.functions[-1].qualname if self.functions else "", []).append(spelled)

    def _container_parts(self, node: ast.Call) -> None:
        """``super().__init__(*layers)`` in the ``__init__`` of a class derived from a torch container: its parts."""
        owner = self.classes[-1]
        base = next((base for base in owner.bases if base.rsplit(".", 1)[-1] in MODULE_CONTAINERS), None)
        if base is not None:
            parts = _built_contents(base.rsplit(".", 1)[-1], node, self._lists[-1] if self._lists else {})
            owner.attributes.setdefault(CONTAINER_PARTS, []).extend([base, *parts])

    def _guarded_callbacks(self, node: ast.Call) -> None:
        """A method handed over as a callback under a grad-free guard (``self.run_stage("evaluate", self.evaluate)``
        inside ``with torch.no_grad():``) runs under that guard: recorded as a guarded call of it. Only guarded
        ones: unguarded, when the receiver calls it is not known."""
        function = self.functions[-1]
        for value in [*node.args, *(keyword.value for keyword in node.keywords)]:
            if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
                function.calls.append(self._site(f"self.{value.attr}", value, True))

    def _site(self, callee: str, node: ast.expr, guarded: bool) -> CallSite:
        """A call site of ``callee`` at ``node``, numbered among the calls of the same name on its line."""
        key = (node.lineno, callee.rsplit(".", 1)[-1])
        ordinal = self._seen.get(key, 0)
        self._seen[key] = ordinal + 1
        return CallSite(callee, node.lineno, node.col_offset, ordinal, guarded)

    def _skip(self, node: ast.AST) -> None:
        """Constants hold nothing the index records."""

    # The handler of each node type the walk reads, as plain functions: bound methods in a dict of the walker's
    # would make a cycle, and every walker garbage for the collector rather than freed when its module is done.
    _HANDLERS: dict[type, Callable[["_Summariser", Any], None]] = {
        ast.Import: _import,
        ast.ImportFrom: _import_from,
        ast.ClassDef: _class,
        ast.FunctionDef: _function,
        ast.AsyncFunctionDef: _function,
        ast.Assign: _assign,
        ast.AnnAssign: _ann_assign,
        ast.AugAssign: _aug_assign,
        ast.Return: _return,
        ast.Call: _call,
        ast.With: _with,
        ast.AsyncWith: _with,
        ast.Name: _name,
        ast.Attribute: _attribute,
        ast.Constant: _skip,
        ast.If: _branches,
        ast.While: _branches,
        ast.For: _branches,
        ast.AsyncFor: _branches,
        ast.Try: _branches,
        ast.Match: _branches,
    }
    if hasattr(ast, "TryStar"):
        _HANDLERS[ast.TryStar] = _branches


_GRAD_GUARD_NAMES = frozenset({"no_grad", "inference_mode"})
_GRADIO_APP_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in GRADIO_APPS)
_PARTIAL = frozenset({"partial", "functools.partial"})
#: Node type -> the fields the summary's walk goes into.
_FIELDS = fields_table(SCALAR_FIELDS)



def _common_branch(first: tuple, second: tuple) -> tuple:
    """The innermost branch both are on."""
    common = 0
    while common < min(len(first), len(second)) and first[common] == second[common]:
        common += 1
    return first[:common]


def _grad_free(expression: ast.AST) -> bool:
    """``torch.no_grad()``, ``inference_mode()``, ``@torch.no_grad``, ``torch.set_grad_enabled(False)``, by spelling;
    also ``set_grad_enabled(flag)``, a grad mode set on purpose at run time (``set_grad_enabled(self.as_loss)``), as
    the per-file analysis reads an enclosing ``with`` that sets it."""
    call = expression if isinstance(expression, ast.Call) else None
    name = (dotted(call.func if call is not None else expression) or "").rsplit(".", 1)[-1]
    if name in ("no_grad", "inference_mode"):
        return call is None or not call.args or not (isinstance(call.args[0], ast.Constant) and call.args[0].value is False)
    if name == "set_grad_enabled" and call is not None:
        mode = call.args[0] if call.args else next((keyword.value for keyword in call.keywords if keyword.arg == "mode"), None)
        return mode is not None and not (isinstance(mode, ast.Constant) and mode.value is True)
    return False


#: torch.nn containers: what they hold is recorded with them (``_contents``).
MODULE_CONTAINERS = frozenset({"ModuleList", "ModuleDict", "Sequential"})
#: Methods that put a module into a container attribute.
_FILLING_METHODS = frozenset({"append", "extend", "add_module", "insert"})
#: Builtins that read a list handed to them and change nothing in it.
_READS_A_LIST = frozenset({"len", "enumerate", "zip", "print", "isinstance", "reversed", "sorted", "tuple", "list", "iter", "range"})
#: What a container holds when the summary cannot tell: a spelling nothing resolves.
UNKNOWN_ELEMENT = "?"
#: The attribute under which a subclass of a torch container (``class ConvLayer(nn.Sequential)``) records what its
#: ``__init__`` hands to ``super().__init__(*layers)``: its base's spelling, then the callees that build its parts.
#: Not a name an attribute can have.
CONTAINER_PARTS = "(parts)"


def _container_contents(callee: str, value: ast.AST, lists: dict[str, list[str] | None]) -> list[str]:
    """What ``value``, a call of ``callee``, holds when it builds a torch container (nothing for anything else)."""
    if callee.rsplit(".", 1)[-1] in MODULE_CONTAINERS and isinstance(value, ast.Call):
        return _contents(value, lists)
    return []


def _contents(call: ast.Call, lists: dict[str, list[str] | None]) -> list[str]:
    """What ``nn.Sequential(a, b)``, ``nn.ModuleList([...])`` or ``nn.ModuleDict({...})`` holds, as the callees
    that build it (``?`` for what is not a call, nor a local list whose elements are known: ``lists``)."""
    return _built_contents((dotted(call.func) or "").rsplit(".", 1)[-1], call, lists)


def _built_contents(container: str, call: ast.Call, lists: dict[str, list[str] | None]) -> list[str]:
    """What the arguments of ``call`` put into a container of the class ``container`` (``Sequential``: each
    argument a module; the others: a list or dict of them)."""
    found = []
    if container == "Sequential":
        for arg in call.args:
            found.extend(_elements(arg.value, lists) if isinstance(arg, ast.Starred) else [_produced_by(arg) or UNKNOWN_ELEMENT])
        return found
    for arg in [*call.args, *(keyword.value for keyword in call.keywords)]:
        found.extend(_elements(arg, lists))
    return found


def _element(value: ast.AST, function: FunctionSummary | None) -> str:
    """The callee building one element put into a list: a call's, or what the local it names was bound to (``?``
    when not one call)."""
    produced = _produced_by(value)
    if produced is None and isinstance(value, ast.Name) and function is not None:
        bound = function.locals.get(value.id, [])
        produced = bound[0] if len(bound) == 1 else None
    return produced or UNKNOWN_ELEMENT


def _elements(value: ast.AST, lists: dict[str, list[str] | None], function: FunctionSummary | None = None) -> list[str]:
    """The callees building the elements of a list, tuple, dict or comprehension, or of a local list whose
    elements are known (``?`` for anything else). An element named by a local of ``function`` bound to one call,
    or to a call on each arm of a conditional (``act = nn.GLU(1) if glu else nn.ReLU()``), is built by those."""
    if isinstance(value, ast.Name):
        known = lists.get(value.id)
        return list(known) if known is not None else [UNKNOWN_ELEMENT]
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return [callee for element in value.elts for callee in _element_callees(element, function)]
    if isinstance(value, ast.Dict):
        return [_produced_by(element) or UNKNOWN_ELEMENT for element in value.values]
    if isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        return [_produced_by(value.elt) or UNKNOWN_ELEMENT]
    if isinstance(value, ast.DictComp):
        return [_produced_by(value.value) or UNKNOWN_ELEMENT]
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        # `[Resample(...)] + [Block(c) for c in sizes]`: both lists' elements
        return _elements(value.left, lists, function) + _elements(value.right, lists, function)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        # `[Block(c)] * depth`: the list's elements, repeated
        listed = value.left if isinstance(value.left, (ast.List, ast.Tuple)) else value.right
        return _elements(listed, lists, function) if isinstance(listed, (ast.List, ast.Tuple)) else [UNKNOWN_ELEMENT]
    return [UNKNOWN_ELEMENT]


def _element_callees(value: ast.AST, function: FunctionSummary | None) -> list[str]:
    """What builds one element of a list display (see :func:`_elements`)."""
    element = _element(value, function)
    if element != UNKNOWN_ELEMENT or not isinstance(value, ast.Name) or function is None:
        return [element]
    chosen = function.choices.get(value.id, [])
    if len(chosen) > 1 and all(choice.endswith("()") and "()" not in choice[:-2] for choice in chosen):
        return [choice[:-2] for choice in chosen]
    return [UNKNOWN_ELEMENT]


def _evaluated_value(value: ast.AST) -> bool:
    """``m.eval()``, ``m.fuse().eval()``, or a conditional whose every branch is one."""
    if isinstance(value, ast.IfExp):
        return _evaluated_value(value.body) and _evaluated_value(value.orelse)
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and (
        value.func.attr in _EVAL_METHODS and not value.args or _train_false(value)
    )


def _false_argument(node: ast.Call, keyword: str) -> bool:
    """The call's first argument (or ``keyword=``) is the constant False."""
    values = [*node.args[:1], *(k.value for k in node.keywords if k.arg == keyword)]
    return bool(values) and isinstance(values[0], ast.Constant) and values[0].value is False


def _false_arguments(callee: str, call: ast.Call, false: frozenset[str] = frozenset(), true: frozenset[str] = frozenset()) -> list[str]:
    """The ``False`` arguments of ``call`` as "callee:position" or "callee:keyword": literals, and values that are
    ``False`` while the calling function's parameters keep their defaults (``false``: those whose default is
    ``False``; ``true``: those whose default is ``True``)."""
    found = [f"{callee}:{index}" for index, arg in enumerate(call.args) if _false_by_default_value(arg, false, true)]
    found += [f"{callee}:{kw.arg}" for kw in call.keywords if kw.arg and _false_by_default_value(kw.value, false, true)]
    return found


def _false_by_default_value(value: ast.AST, false: frozenset[str], true: frozenset[str]) -> bool:
    """``value`` is ``False`` while the function's parameters keep their defaults: the literal, a parameter whose
    default is ``False``, or ``not`` one whose default is ``True``."""
    if isinstance(value, ast.Constant):
        return value.value is False
    if isinstance(value, ast.Name):
        return value.id in false
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        operand = value.operand
        return (isinstance(operand, ast.Constant) and operand.value is True) or (isinstance(operand, ast.Name) and operand.id in true)
    return False


def _mode_argument(call: ast.Call) -> ast.AST | None:
    """What ``m.train(...)`` is given for ``mode``, positionally or by keyword (None when nothing)."""
    return call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)


def _frozen_by_loop(node: ast.For | ast.AsyncFor, false_by_default: frozenset[str] = frozenset()) -> tuple[str, str | None] | None:
    """``for p in m.parameters(): p.requires_grad = False`` (or ``p.requires_grad_(False)``, ``for _, p in
    m.named_parameters()``, ``chain(m.parameters(), m.buffers())``) -> ("m", None). The value may be a parameter
    of the function whose default is ``False`` (pytorch-fid's ``param.requires_grad = requires_grad``): frozen as
    built by default. Any other name it is set to is given back (``param.requires_grad = state`` -> ("m",
    "state")): frozen where the function is called with ``False`` for it."""
    iterated, target = node.iter, node.target
    if isinstance(iterated, ast.Call) and (dotted(iterated.func) or "").rsplit(".", 1)[-1] == "chain" and iterated.args:
        iterated = iterated.args[0]  # `chain(self.parameters(), self.buffers())`: the parameters first
    if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute)) or iterated.args:
        return None
    if iterated.func.attr == "named_parameters" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        target = target.elts[1]
    elif iterated.func.attr != "parameters":
        return None
    if not isinstance(target, ast.Name):
        return None
    name = target.id
    owner = dotted(_module_itself(iterated.func.value))
    if owner is None:
        return None
    for statement in node.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            assigned, value = statement.targets[0], statement.value
            if not (isinstance(assigned, ast.Attribute) and assigned.attr == "requires_grad" and isinstance(assigned.value, ast.Name) and assigned.value.id == name):
                continue
            if (isinstance(value, ast.Constant) and value.value is False) or (isinstance(value, ast.Name) and value.id in false_by_default):
                return owner, None
            if isinstance(value, ast.Name):
                return owner, value.id
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value
            if not (
                isinstance(call.func, ast.Attribute) and call.func.attr == "requires_grad_" and isinstance(call.func.value, ast.Name)
                and call.func.value.id == name
            ):
                continue
            if _false_argument(call, "requires_grad"):
                return owner, None
            given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "requires_grad"), None)
            if isinstance(given, ast.Name):  # `p.requires_grad_(mode)`, as `p.requires_grad = mode`
                return (owner, None) if given.id in false_by_default else (owner, given.id)
    return None


#: torch.nn layers that are the same in train and eval mode unless an argument says otherwise, with that argument's
#: position among their positional parameters and its name: recurrent and attention layers whose dropout defaults
#: to 0, instance norms that keep no running statistics unless asked (``track_running_stats=False``).
MODE_ARGUMENTS = {
    "LSTM": (5, "dropout"), "GRU": (5, "dropout"), "RNN": (6, "dropout"), "MultiheadAttention": (2, "dropout"),
    "InstanceNorm1d": (4, "track_running_stats"), "InstanceNorm2d": (4, "track_running_stats"),
    "InstanceNorm3d": (4, "track_running_stats"),
}


def _mode_free_layer(value: ast.AST, choices: dict[str, list[str]]) -> bool | None:
    """For a call building one of :data:`MODE_ARGUMENTS`'s layers (also through a local bound to the class:
    ``klass = nn.LSTM``, ``choices``): whether it leaves that argument at its default or gives it a literal 0 or
    ``False``, or, for a recurrent layer given a dropout, builds one layer only; None for any other call."""
    if not isinstance(value, ast.Call):
        return None
    spelled = dotted(value.func) or ""
    names = choices.get(spelled, [spelled]) if isinstance(value.func, ast.Name) else [spelled]
    arguments = {MODE_ARGUMENTS.get(name.rsplit(".", 1)[-1]) for name in names}
    if arguments == {None}:
        return None  # no such layer
    if len(arguments) != 1:
        return False  # one of several classes, not all of them such layers alike: not known
    (position, keyword), = arguments
    if any(isinstance(argument, ast.Starred) for argument in value.args) or any(k.arg is None for k in value.keywords):
        return False  # `nn.LSTM(*sizes)`, `nn.LSTM(**config)`: what it is given is not known
    given = value.args[position] if len(value.args) > position else next((k.value for k in value.keywords if k.arg == keyword), None)
    if given is None or (isinstance(given, ast.Constant) and type(given.value) in (int, float, bool) and not given.value):
        return True
    if keyword == "dropout" and names[0].rsplit(".", 1)[-1] in _RECURRENT:
        # A recurrent layer's dropout falls between its stacked layers: with one layer (the default) there is none.
        layers = value.args[2] if len(value.args) > 2 else next((k.value for k in value.keywords if k.arg == "num_layers"), None)
        return layers is None or (isinstance(layers, ast.Constant) and type(layers.value) is int and layers.value == 1)
    return False


_RECURRENT = frozenset({"LSTM", "GRU", "RNN"})


def _by_default(args: ast.arguments, value: bool) -> frozenset[str]:
    """The parameters whose default is the literal ``value`` (``True`` or ``False``)."""
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults), *zip(args.kwonlyargs, args.kw_defaults)]
    return frozenset(arg.arg for arg, default in pairs if isinstance(default, ast.Constant) and default.value is value)


def _train_false(node: ast.Call) -> bool:
    """``m.train(False)`` / ``m.train(mode=False)``."""
    return isinstance(node.func, ast.Attribute) and node.func.attr == "train" and _false_argument(node, "mode")


def _module_itself(value: ast.AST) -> ast.AST:
    """``model.eval().to(device)`` -> ``model``: module methods that return the module itself."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SELF_RETURNING:
        value = value.func.value
    return value


_SELF_RETURNING = frozenset({"to", "cuda", "cpu", "half", "float", "bfloat16", "eval", "train", "requires_grad_"})


def _returned(value: ast.AST, function: FunctionSummary) -> str | None:
    """How a returned ``value`` is spelled, noting it in eval mode where the return says so (``return
    model.eval().to(device)``: the model, in eval mode; module methods return the module)."""
    evaluated = False
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SELF_RETURNING:
        evaluated = evaluated or (value.func.attr in _EVAL_METHODS and not value.args) or _train_false(value)
        value = value.func.value
    spelled = _produced_by(value) or dotted(value)
    if spelled and evaluated:
        function.evaluated.add(spelled)
    return spelled


def _produced_by(value: ast.AST) -> str | None:
    """The callee that produces ``value``: ``Net(cfg)`` -> "Net"; ``Net(cfg).to(device)`` -> "Net" (module
    methods that return the module itself keep the producer); ``await make()`` -> "make"."""
    while True:
        if isinstance(value, ast.Await):
            value = value.value
            continue
        if not isinstance(value, ast.Call):
            return None
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in ("to", "cuda", "cpu", "half", "float", "bfloat16", "eval", "train") and isinstance(func.value, ast.Call):
            value = func.value
            continue
        return dotted(func)


def summarise(tree: ast.Module, name: str, is_package: bool) -> ModuleSummary:
    """The summary of the module ``tree``, with its triage facts (:attr:`ModuleSummary.syntax`) from the same
    walk."""
    summary = ModuleSummary(name, is_package)
    syntax = SyntaxCollector(tree)
    _Summariser(summary, syntax).visit(tree)
    summary.syntax = syntax.facts()
    return summary


def module_name(path: Path | str, absolute: bool = False, root: str | None = None) -> str:
    """The dotted name Python imports ``path`` under: packages are folders with an ``__init__.py``. With
    ``absolute``, ``path`` is an absolute, normal path already (a walk's), and is not made one again. The project
    ``root`` (absolute and normal), where its scripts run, is no package: its modules are top-level names."""
    directory, name = os.path.split(path if absolute else os.path.abspath(path))
    return _name_in_package(_package_of(directory, root), name)


def module_names(paths: Iterable[str], root: str | None = None) -> list[str]:
    """:func:`module_name` of each of ``paths``, absolute and normal (a walk's), which come folder by folder: the
    package of a folder is looked up once per run of its files, not once per file (a large project's modules)."""
    names = []
    last, package = None, ""
    for path in paths:
        directory, _, name = path.rpartition(os.sep)
        if not directory or directory.endswith(":"):  # a file of a drive's or the system's root: split keeps the separator
            directory, name = os.path.split(path)
        if directory != last:
            last, package = directory, _package_of(directory, root)
        names.append(_name_in_package(package, name))
    return names


def _name_in_package(package: str, file_name: str) -> str:
    """The dotted name of the module ``file_name`` in the folder whose package is ``package``."""
    if file_name == "__init__.py":
        return package
    stem = file_name.rsplit(".", 1)[0] if "." in file_name else file_name
    return f"{package}.{stem}" if package else stem


def _package_of(directory: str, root: str | None = None) -> str:
    """The dotted package name of ``directory`` ("" when it holds no ``__init__.py``, when its name is not one an
    import can spell, ``photo-editor/__init__.py``, or when it is the project ``root``: a checkout's scripts run
    from it, so an ``__init__.py`` there makes its modules no less top-level): asked once per folder of a run (a
    project's modules share their folders), not once per module."""
    key = (directory, root)
    found = _PACKAGES.get(key)
    if found is None:
        parent = os.path.dirname(directory)
        here = os.path.basename(directory)
        package = directory != root and here.isidentifier() and listed_package(directory)
        if package is None:
            package = os.path.isfile(os.path.join(directory, "__init__.py"))
        if parent == directory or not package:
            found = ""
        else:
            above = _package_of(parent, root)
            found = f"{above}.{here}" if above else here
        _PACKAGES[key] = found
    return found


#: Folder -> package name, for one run (:func:`forget_packages` at each run's start: files may come and go).
_PACKAGES: dict[tuple[str, str | None], str] = {}


def forget_packages() -> None:
    _PACKAGES.clear()
    forget_listings()
