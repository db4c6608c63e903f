"""Does a function run a forward pass, directly or through the project functions it calls?

The call graph is resolved with astroid trees of the project's files: names are
looked up through astroid's scopes, imports are mapped onto the project's own
files (:class:`gemlint.project.files.Project`), and methods are found on ``self``,
on instances bound to project classes (``engine = Engine()``, ``self.engine =
Engine()``, parameters annotated with a project class) and on project base
classes. astroid is never asked to import anything: its module manager denies
every module while gemlint builds or walks trees, so no project, third-party or
extension module is loaded, let alone run. Each function's forward passes come
from :mod:`gemlint.analysis.forward` (LibCST) on the same file.

The search is breadth-first, bounded in depth and in functions visited, and
every result is cached for the run.
"""

from __future__ import annotations

import re
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import astroid
from astroid import nodes
from astroid.builder import AstroidBuilder
from astroid.manager import AstroidManager

import libcst as cst
from libcst.helpers import get_full_name_for_node

from gemlint.analysis import frameworks as fw
from gemlint.analysis.forward import forward_calls, module_model_names
from gemlint.analysis.syntax import iter_subtree, terminal_name
from gemlint.diagnostics import Position

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.project.files import ParsedFile, Project

MAX_DEPTH = 6
MAX_FUNCTIONS = 300
_RESOLVE_DEPTH = 8
_OFFLOAD_NAMES = frozenset({"to_thread", "run_in_threadpool", "run_sync", "run_in_executor", "submit"})
_STAR_IMPORT = re.compile(r"\bimport\s*\*")
_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float)


class _DenyEveryModule(frozenset):
    """astroid's ``module_denylist``: every module name is in it but ``builtins``, so astroid loads none."""

    def __contains__(self, name: object) -> bool:
        return name != "builtins"


_DENY_ALL = _DenyEveryModule()


@contextmanager
def no_imports() -> Iterator[None]:
    """While active, astroid cannot import or load any module (star imports, inference).

    astroid's manager is a Borg whose instances copy the shared ``brain`` when they are made, and
    astroid makes a new one wherever it imports; so the deny list goes into the brain itself.
    """
    brain = AstroidManager.brain
    saved = brain["module_denylist"], brain["always_load_extensions"]
    brain["module_denylist"] = _DENY_ALL
    brain["always_load_extensions"] = False
    try:
        yield
    finally:
        brain["module_denylist"], brain["always_load_extensions"] = saved


def build_astroid(text: str, modname: str, path: str) -> nodes.Module | None:
    """An astroid tree of ``text`` (no transforms, nothing imported, not kept in astroid's global cache)."""
    manager = AstroidManager()
    with no_imports():
        try:
            module = AstroidBuilder(manager, apply_transforms=False).string_build(text, modname, path)
        except (astroid.AstroidError, RecursionError, MemoryError, ValueError, SyntaxError):
            return None
    if manager.astroid_cache.get(modname) is module:
        del manager.astroid_cache[modname]
    return module


@dataclass(frozen=True)
class Step:
    file: "ParsedFile"
    line: int  # def line of the function (0: the module's top level)
    name: str


@dataclass(frozen=True)
class ForwardPath:
    """How a function reaches a forward pass: the functions on the way and the call that runs the model."""

    steps: tuple[Step, ...]  # from the start function to the one that runs the forward
    file: "ParsedFile"
    start: Position
    end: Position
    text: str  # "`self.model.generate(...)`"
    family: str = ""  # the forward's family (analysis.forward.ForwardCall.family); "engine": a generation request

    @property
    def via(self) -> tuple[Step, ...]:
        return self.steps[1:]


@dataclass(frozen=True)
class _Instance:
    cls: nodes.ClassDef


class Reachability:
    def __init__(self, project: "Project") -> None:
        self.project = project
        self._callees: dict[tuple[str, int], list[Step]] = {}
        self._results: dict[tuple[str, int], ForwardPath | None] = {}
        self._gated: dict[tuple[str, int], bool] = {}
        self._outside_only: dict[tuple[str, int], bool] = {}
        self._packages: frozenset[str] | None = None

    # -- the search --------------------------------------------------------------------------------
    def forward_from(self, file: "ParsedFile", line: int) -> ForwardPath | None:
        """The first forward pass reachable from the function defined on ``line`` (0: the module's top level)."""
        key = (str(file.path), line)
        if key in self._results:
            return self._results[key]
        start = Step(file, line, self._name_of(file, line))
        queue: deque[tuple[Step, tuple[Step, ...]]] = deque([(start, (start,))])
        seen = {key}
        found: ForwardPath | None = None
        with no_imports():
            while queue and len(seen) <= MAX_FUNCTIONS:
                step, path = queue.popleft()
                if self._answers_from_state(step):
                    continue  # what it runs after that, it runs only when the state is stale
                found = self._direct_forward(step, path)
                if found is not None:
                    break
                if len(path) > MAX_DEPTH:
                    continue
                for callee in self._callees_of(step):
                    callee_key = (str(callee.file.path), callee.line)
                    if callee_key not in seen:
                        seen.add(callee_key)
                        queue.append((callee, path + (callee,)))
        self._results[key] = found
        return found

    def _name_of(self, file: "ParsedFile", line: int) -> str:
        function = file.function_at(line) if line else None
        return function.name.value if function is not None else file.modname or file.display

    def _direct_forward(self, step: Step, path: tuple[Step, ...]) -> ForwardPath | None:
        analysis = step.file.analysis
        if analysis is None:
            return None
        scope = step.file.function_at(step.line) if step.line else analysis.module
        if scope is None:
            return None
        calls = forward_calls(analysis, scope)
        if calls:
            # Positions from the analysis the calls were found in: reading them resolved names in other modules,
            # whose trees may have made this file's the least recently used and released it.
            position = analysis.positions[calls[0].node]
            return ForwardPath(
                path,
                step.file,
                Position(position.start.line, position.start.column + 1),
                Position(position.end.line, position.end.column + 1),
                calls[0].text,
                calls[0].family,
            )
        return self._imported_model_call(step, path)

    def _answers_from_state(self, step: Step) -> bool:
        """The function returns early on a condition that reads the clock (``if now - last_inference <
        timeout: return healthy``, directly or in a project method the condition calls): it answers from state
        while that is fresh, and runs what follows only when the server has been idle, not on every call."""
        key = (str(step.file.path), step.line)
        if key not in self._gated and not _may_return_early_on_a_call(step.file.function_at(step.line) if step.line else None):
            self._gated[key] = False  # checked on LibCST first: astroid's tree (and its start-up) is not needed
        if key not in self._gated:
            scope = self._astroid_scope(step) if step.line else None
            self._gated[key] = isinstance(scope, (nodes.FunctionDef, nodes.AsyncFunctionDef)) and any(
                isinstance(statement, nodes.If)
                and isinstance(statement.body[-1], nodes.Return)
                and self._reads_clock(statement.test, step.file)
                for statement in scope.body
            )
        return self._gated[key]

    def _reads_clock(self, test: nodes.NodeNG, file: "ParsedFile") -> bool:
        calls = [test] if isinstance(test, nodes.Call) else []
        calls.extend(test.nodes_of_class(nodes.Call))
        for call in calls:
            if _clock_call(call):
                return True
            for function in self._functions_called(call.func, file):
                if any(_clock_call(inner) for inner in function.nodes_of_class(nodes.Call)):
                    return True
        return False

    def _calls_only_outside_code(self, step: Step) -> bool:
        """Every call in the function's body (nested scopes included) is of a builtin or of a name that only the file's
        module-level imports of other packages bind (``Response(...)``, ``json.dumps(...)``, ``time.time()``): none
        can run a project function or a project module's model, which is all astroid would be asked (its tree and
        its start-up are not needed). Decided on LibCST; any name it cannot tell so sends the step to astroid."""
        key = (str(step.file.path), step.line)
        if key not in self._outside_only:
            function = step.file.function_at(step.line) if step.line else None
            analysis = step.file.analysis
            self._outside_only[key] = (
                function is not None
                and analysis is not None
                and not _STAR_IMPORT.search(step.file.text)  # a name no import binds may be a project module's
                and all(self._names_outside_code(analysis, call) for call in iter_subtree(function.body, into_scopes=True) if isinstance(call, cst.Call))
            )
        return self._outside_only[key]

    def _names_outside_code(self, analysis, call: cst.Call) -> bool:
        targets = [call.func]
        if terminal_name(call.func) in _OFFLOAD_NAMES:  # what the call hands a function to, as _callees_of reads it
            targets.extend(arg.value for arg in call.args if isinstance(arg.value, (cst.Name, cst.Attribute)))
        for target in targets:
            spelled = get_full_name_for_node(target)
            if spelled is None:
                base = target
                while isinstance(base, (cst.Attribute, cst.Call, cst.Subscript)):
                    base = base.value if isinstance(base, (cst.Attribute, cst.Subscript)) else base.func
                if isinstance(base, _LITERALS):  # `", ".join(...)`: a method of a literal
                    continue
                return False
            names = analysis.names_from_imports(spelled)
            if names is None or any(name.startswith(".") or self._project_package(name) for name in names):
                return False
        return True

    def _project_package(self, dotted: str) -> bool:
        if self._packages is None:
            self._packages = frozenset(name.partition(".")[0] for name in self.project.modules)
        return dotted.partition(".")[0] in self._packages

    # -- astroid side -------------------------------------------------------------------------------
    def _astroid_scope(self, step: Step) -> nodes.NodeNG | None:
        module = step.file.astroid
        if module is None:
            return None
        if not step.line:
            return module
        for node in module.nodes_of_class((nodes.FunctionDef, nodes.AsyncFunctionDef)):
            if node.fromlineno == step.line:
                return node
        return None

    def _calls_in(self, scope: nodes.NodeNG) -> Iterator[nodes.Call]:
        body = scope.body if isinstance(scope, (nodes.FunctionDef, nodes.Module)) else [scope]
        for statement in body:
            if isinstance(statement, (nodes.FunctionDef, nodes.ClassDef)) and isinstance(scope, nodes.Module):
                continue  # definitions at the top level do not run their bodies
            if isinstance(statement, nodes.Call):
                yield statement
            yield from statement.nodes_of_class(nodes.Call, skip_klass=(nodes.FunctionDef, nodes.ClassDef, nodes.Lambda))

    def _callees_of(self, step: Step) -> list[Step]:
        key = (str(step.file.path), step.line)
        if key in self._callees:
            return self._callees[key]
        callees: list[Step] = []
        scope = self._astroid_scope(step) if not self._calls_only_outside_code(step) else None
        if scope is not None:
            for call in self._calls_in(scope):
                targets = [call.func]
                name = call.func.attrname if isinstance(call.func, nodes.Attribute) else getattr(call.func, "name", "")
                if name in _OFFLOAD_NAMES:
                    targets.extend(arg for arg in call.args if isinstance(arg, (nodes.Name, nodes.Attribute)))
                for target in targets:
                    for function in self._functions_called(target, step.file):
                        callee = self._step_for(function)
                        if callee is not None and callee not in callees:
                            callees.append(callee)
        self._callees[key] = callees
        return callees

    def _step_for(self, function: nodes.FunctionDef) -> Step | None:
        module = function.root()
        if not isinstance(module, nodes.Module) or not module.file:
            return None
        parsed = self.project.parsed(module.file)
        if parsed is None:
            return None
        return Step(parsed, function.fromlineno, function.name)

    def _functions_called(self, func: nodes.NodeNG, file: "ParsedFile") -> list[nodes.FunctionDef]:
        """Project functions that calling ``func`` runs."""
        found = []
        for value in self._values(func, file, 0):
            if isinstance(value, nodes.FunctionDef):
                found.append(value)
            elif isinstance(value, _Instance):
                method = self._method(value.cls, "__call__", file, 0)
                if method is not None:
                    found.append(method)
        return found

    def _values(self, expression: nodes.NodeNG, file: "ParsedFile", depth: int) -> list[object]:
        """What ``expression`` may evaluate to: project functions, classes, modules, or instances of project classes."""
        if depth > _RESOLVE_DEPTH:
            return []
        if isinstance(expression, nodes.Name):
            return self._name_values(expression, expression.name, file, depth)
        if isinstance(expression, nodes.Attribute):
            results = []
            for base in self._values(expression.expr, file, depth + 1):
                results.extend(self._member(base, expression.attrname, file, depth + 1))
            return results
        if isinstance(expression, nodes.Call):
            results = []
            for callee in self._values(expression.func, file, depth + 1):
                if isinstance(callee, nodes.ClassDef):
                    results.append(_Instance(callee))
                elif isinstance(callee, nodes.FunctionDef):
                    results.extend(self._returned(callee, file, depth + 1))
            return results
        if isinstance(expression, nodes.Await):
            return self._values(expression.value, file, depth + 1)
        return []

    def _name_values(self, node: nodes.NodeNG, name: str, file: "ParsedFile", depth: int) -> list[object]:
        try:
            _, assignments = node.lookup(name)
        except Exception:
            return []
        results: list[object] = []
        for assignment in assignments[-4:]:
            results.extend(self._assignment_values(assignment, name, file, depth + 1))
        return results

    def _assignment_values(self, assignment: nodes.NodeNG, name: str, file: "ParsedFile", depth: int) -> list[object]:
        if isinstance(assignment, (nodes.FunctionDef, nodes.ClassDef)):
            return [assignment]
        if isinstance(assignment, nodes.ImportFrom):
            return self._import_from(assignment, name, file, depth)
        if isinstance(assignment, nodes.Import):
            for imported, alias in assignment.names:
                if (alias or imported.split(".")[0]) == name:
                    target = imported if alias else imported.split(".")[0]
                    module = self._module(target, file)
                    return [module] if module is not None else []
            return []
        if isinstance(assignment, nodes.AssignName):
            parent = assignment.parent
            if isinstance(parent, nodes.Arguments):
                annotation = _annotation_of(parent, assignment)
                if annotation is not None:
                    return [_Instance(v) for v in self._values(annotation, file, depth + 1) if isinstance(v, nodes.ClassDef)]
                if assignment.name in ("self", "cls"):
                    function = parent.parent
                    owner = function.parent if function is not None else None
                    if isinstance(owner, nodes.ClassDef):
                        return [_Instance(owner)] if assignment.name == "self" else [owner]
                return []
            if isinstance(parent, (nodes.Assign, nodes.AnnAssign)) and parent.value is not None:
                return self._values(parent.value, file, depth + 1)
        return []

    def _import_from(self, node: nodes.ImportFrom, name: str, file: "ParsedFile", depth: int) -> list[object]:
        original = next((imported for imported, alias in node.names if (alias or imported) == name), None)
        if original is None:
            return []
        try:
            base = node.root().relative_to_absolute_name(node.modname, node.level)
        except Exception:
            return []
        module = self._module(base, file)
        if module is not None:
            members = self._member(module, original, file, depth + 1)
            if members:
                return members
        submodule = self._module(f"{base}.{original}" if base else original, file)
        return [submodule] if submodule is not None else []

    def _module(self, dotted: str, near: "ParsedFile") -> nodes.Module | None:
        parsed = self.project.module_file(dotted, near=near.path)
        return parsed.astroid if parsed is not None else None

    def _member(self, base: object, attribute: str, file: "ParsedFile", depth: int) -> list[object]:
        if isinstance(base, nodes.Module):
            owner = self.project.parsed(base.file) if base.file else None
            results: list[object] = []
            for assignment in base.locals.get(attribute, [])[-4:]:
                results.extend(self._assignment_values(assignment, attribute, owner or file, depth + 1))
            if not results:
                submodule = self._module(f"{base.name}.{attribute}", owner or file)
                if submodule is not None:
                    results.append(submodule)
            return results
        if isinstance(base, nodes.ClassDef):
            method = self._method(base, attribute, file, depth)
            return [method] if method is not None else []
        if isinstance(base, _Instance):
            method = self._method(base.cls, attribute, file, depth)
            if method is not None:
                return [method]
            return self._instance_attribute(base.cls, attribute, file, depth + 1)
        return []

    def _method(self, cls: nodes.ClassDef, name: str, file: "ParsedFile", depth: int) -> nodes.FunctionDef | None:
        for klass in self._mro(cls, file, depth):
            for node in klass.locals.get(name, []):
                if isinstance(node, nodes.FunctionDef):
                    return node
        return None

    def _mro(self, cls: nodes.ClassDef, file: "ParsedFile", depth: int) -> list[nodes.ClassDef]:
        order, queue = [], [cls]
        while queue and len(order) < 16:
            klass = queue.pop(0)
            if klass in order:
                continue
            order.append(klass)
            klass_file = self.project.parsed(klass.root().file) if klass.root().file else None
            for base in klass.bases:
                queue.extend(v for v in self._values(base, klass_file or file, depth + 1) if isinstance(v, nodes.ClassDef))
        return order

    def _instance_attribute(self, cls: nodes.ClassDef, attribute: str, file: "ParsedFile", depth: int) -> list[object]:
        """Values assigned to ``self.<attribute>`` in the class's methods."""
        results: list[object] = []
        for klass in self._mro(cls, file, depth):
            klass_file = self.project.parsed(klass.root().file) if klass.root().file else None
            for node in klass.nodes_of_class(nodes.AssignAttr):
                if node.attrname == attribute and isinstance(node.expr, nodes.Name) and node.expr.name == "self":
                    parent = node.parent
                    if isinstance(parent, (nodes.Assign, nodes.AnnAssign)) and parent.value is not None:
                        results.extend(self._values(parent.value, klass_file or file, depth + 1))
            if results:
                break
        return results

    def _returned(self, function: nodes.FunctionDef, file: "ParsedFile", depth: int) -> list[object]:
        results = []
        owner = self.project.parsed(function.root().file) if function.root().file else None
        for node in function.nodes_of_class(nodes.Return, skip_klass=(nodes.FunctionDef, nodes.Lambda)):
            if node.value is not None:
                results.extend(v for v in self._values(node.value, owner or file, depth + 1) if isinstance(v, _Instance))
        return results

    # -- model objects imported from another module -------------------------------------------------------
    def _imported_model_call(self, step: Step, path: tuple[Step, ...]) -> ForwardPath | None:
        """``from app.state import model; model.generate(x)``: the model object lives in another module."""
        if self._calls_only_outside_code(step):
            return None
        scope = self._astroid_scope(step)
        if scope is None:
            return None
        for call in self._calls_in(scope):
            func = call.func
            method = func.attrname if isinstance(func, nodes.Attribute) else None
            receiver = func.expr if isinstance(func, nodes.Attribute) else func
            family = self._imported_model(receiver, step.file)
            if family is None:
                continue
            methods, callable_ = fw.FORWARD_METHODS.get(family, (frozenset(), False))
            if (method is None and callable_) or (method is not None and method in methods):
                line_text = step.file.text.splitlines()[call.lineno - 1] if call.lineno else ""
                column = len(line_text.encode("utf-8")[: call.col_offset].decode("utf-8", "replace")) + 1
                end_column = column + len(call.func.as_string()) + 5
                return ForwardPath(
                    path, step.file, Position(call.lineno, column), Position(call.lineno, end_column), f"`{func.as_string()}(...)`", family
                )
        return None

    def _imported_model(self, receiver: nodes.NodeNG, file: "ParsedFile") -> str | None:
        """The model family when ``receiver`` names a model object bound at the top level of another project module."""
        if isinstance(receiver, nodes.Name):
            module_name, name = self._imported_name(receiver, receiver.name)
        elif isinstance(receiver, nodes.Attribute) and isinstance(receiver.expr, nodes.Name):
            modules = [v for v in self._name_values(receiver.expr, receiver.expr.name, file, 0) if isinstance(v, nodes.Module)]
            module_name, name = (modules[0].name, receiver.attrname) if modules else (None, None)
        else:
            return None
        if module_name is None or name is None:
            return None
        parsed = self.project.module_file(module_name, near=file.path)
        if parsed is None or parsed.analysis is None:
            return None
        return module_model_names(parsed.analysis).get(name)

    def _imported_name(self, node: nodes.NodeNG, name: str) -> tuple[str | None, str | None]:
        try:
            _, assignments = node.lookup(name)
        except Exception:
            return None, None
        for assignment in assignments:
            if isinstance(assignment, nodes.ImportFrom):
                original = next((imported for imported, alias in assignment.names if (alias or imported) == name), None)
                try:
                    base = assignment.root().relative_to_absolute_name(assignment.modname, assignment.level)
                except Exception:
                    continue
                if original is not None:
                    return base, original
        return None, None


#: ``time.time()``, ``time.monotonic()``, ``perf_counter()``, ``datetime.now()``: reading the clock.
_CLOCK_READS = frozenset({"time", "monotonic", "perf_counter", "time_ns", "monotonic_ns", "perf_counter_ns"})
_DATE_READS = frozenset({"now", "utcnow"})


def _clock_call(call: nodes.Call) -> bool:
    func = call.func
    if isinstance(func, nodes.Attribute):
        receiver = func.expr.as_string()
        return (func.attrname in _CLOCK_READS and receiver == "time") or (func.attrname in _DATE_READS and receiver in ("datetime", "datetime.datetime"))
    return isinstance(func, nodes.Name) and func.name in _CLOCK_READS - {"time"}


def _annotation_of(arguments: nodes.Arguments, name: nodes.AssignName) -> nodes.NodeNG | None:
    for group, group_annotations in (
        (arguments.args or [], arguments.annotations or []),
        (arguments.kwonlyargs or [], arguments.kwonlyargs_annotations or []),
        (arguments.posonlyargs or [], arguments.posonlyargs_annotations or []),
    ):
        for index, arg in enumerate(group):
            if arg is name and index < len(group_annotations):
                return group_annotations[index]
    return None


def _may_return_early_on_a_call(function: cst.FunctionDef | None) -> bool:
    """Whether ``function``'s body has an ``if`` that ends in ``return`` and whose test calls something: what a
    clock-gated early return needs (:meth:`Reachability._answers_from_state` decides on astroid's tree)."""
    body = function.body.body if function is not None and isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        if isinstance(statement, cst.If) and _ends_in_return(statement.body) and _calls_something(statement.test):
            return True
    return False


def _ends_in_return(block: cst.BaseSuite) -> bool:
    last = block.body[-1] if block.body else None  # `if t: return x` on one line: a suite of small statements
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    return isinstance(last, cst.Return)


def _calls_something(expression: cst.BaseExpression) -> bool:
    return isinstance(expression, cst.Call) or any(isinstance(node, cst.Call) for node in iter_subtree(expression, into_scopes=True))
