"""The project's call graph on astroid trees: what a call may run, across the project's modules.

Names are looked up through astroid's scopes, imports are mapped onto the project's own files
(:class:`gemlint.project.files.Project`), and methods are found on ``self``, on instances bound to project
classes (``engine = Engine()``, ``self.engine = Engine()``, parameters annotated with a project class) and on
project base classes. astroid never imports anything while it answers (:func:`gemlint.project.astroid_trees.no_imports`).

:mod:`gemlint.project.reach` asks this graph only what LibCST cannot decide alone, so a run whose questions
LibCST answers never imports astroid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from astroid import nodes

from gemlint.analysis import frameworks as fw
from gemlint.analysis.forward import module_model_names
from gemlint.diagnostics import Position
from gemlint.project.astroid_trees import lookup, no_imports
from gemlint.project.forward_paths import OFFLOAD_NAMES, ForwardPath, Step

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.project.files import ParsedFile, Project

_RESOLVE_DEPTH = 8


@dataclass(frozen=True)
class _Instance:
    cls: nodes.ClassDef


class CallGraph:
    def __init__(self, project: "Project") -> None:
        self.project = project

    # -- what reach asks ------------------------------------------------------------------------------
    def clock_gated(self, step: Step) -> bool:
        """The function's body has an ``if`` ending in ``return`` whose test reads the clock, directly or in a
        project function the test calls."""
        with no_imports():
            scope = self._astroid_scope(step) if step.line else None
            return isinstance(scope, (nodes.FunctionDef, nodes.AsyncFunctionDef)) and any(
                isinstance(statement, nodes.If)
                and isinstance(statement.body[-1], nodes.Return)
                and self._reads_clock(statement.test, step.file)
                for statement in scope.body
            )

    def callees(self, step: Step) -> list[Step]:
        """The project functions the function (or the module's top level) calls, or hands to a thread."""
        callees: list[Step] = []
        with no_imports():
            scope = self._astroid_scope(step)
            if scope is None:
                return callees
            for call in self._calls_in(scope):
                targets = [call.func]
                name = call.func.attrname if isinstance(call.func, nodes.Attribute) else getattr(call.func, "name", "")
                if name in OFFLOAD_NAMES:
                    targets.extend(arg for arg in call.args if isinstance(arg, (nodes.Name, nodes.Attribute)))
                for target in targets:
                    for function in self._functions_called(target, step.file):
                        callee = self._step_for(function)
                        if callee is not None and callee not in callees:
                            callees.append(callee)
        return callees

    def imported_model_call(self, step: Step, path: tuple[Step, ...]) -> ForwardPath | None:
        """``from app.state import model; model.generate(x)``: the model object lives in another module."""
        with no_imports():
            return self._imported_model_call(step, path)

    # -- astroid side -------------------------------------------------------------------------------
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
            _, assignments = lookup(node, name)
        except Exception:
            return []
        results: list[object] = []
        for assignment in assignments[-4:]:
            results.extend(self._assignment_values(assignment, name, file, depth + 1))
        return results

    def _assignment_values(self, assignment: nodes.NodeNG, name: str, file: "ParsedFile", depth: int) -> list[object]:
        if depth > _RESOLVE_DEPTH:
            return []  # imports that lead back to themselves (`from . import a` beside modules that import it)
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
        # `from . import health` in a package's `__init__`: the package's own name for it is this import, so its
        # submodule is what it names
        if module is not None and module is not node.root():
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
            _, assignments = lookup(node, name)
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
