"""GEM301–GEM306 for Python's raw CUDA bindings: cuda-python (``cuda.cudart`` / ``cuda.bindings.runtime``,
``cuda.cuda`` / ``cuda.bindings.driver``) and CuPy's ``cupy.cuda.runtime``.

The same acquire/release table as the C rules (:mod:`gemlint.native.resources`), the same path search
(:mod:`gemlint.native.paths`) over a LibCST control-flow graph (:mod:`gemlint.native.py_cfg`). Calls are
resolved through imports with LibCST's qualified names. cuda-python returns ``(err, handle, ...)``: the
handle is the second element of the tuple (``err, ptr = cudart.cudaMalloc(n)``) and ``err`` is the status;
CuPy returns the handle and raises on error.
"""

from __future__ import annotations

import enum
import re
import weakref
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Hashable, Iterator

import libcst as cst

from gemlint.analysis.module import ModuleAnalysis, iter_subtree, literal_value, terminal_name
from gemlint.native.paths import Effect, Graph, Outcome, Step, StepKind, find_leak
from gemlint.native.py_cfg import PyCfgBuilder
from gemlint.native.resources import ACQUIRES, MEMORY_KINDS, MISMATCH_CODE, NOT_ANALYSED, RELEASES, Acquire, Kind, Release, release_for

CUDA_PYTHON_MODULES = ("cuda.cudart", "cuda.bindings.runtime", "cuda.cuda", "cuda.bindings.driver")
CUPY_RUNTIME_MODULES = ("cupy.cuda.runtime", "cupy_backends.cuda.api.runtime")

_SUCCESS = re.compile(r"(?i)success")
_RELEASE_WORDS = re.compile(r"free|release|destroy|delete|dealloc|dispose|cleanup|close", re.IGNORECASE)
_OWNER_WORDS = ("set", "regist", "store", "put", "push", "insert", "append", "add", "attach", "adopt", "track",
                "keep", "save", "cache", "wrap", "own", "bind", "finalize")
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_BUILTIN_USES = frozenset({"int", "hex", "print", "len", "str", "repr", "format", "bool", "id", "isinstance", "float", "min", "max"})


_LOOPS = (cst.For, cst.While)
#: How many calls deep a raise is followed out to the `__main__` block.
_UNCAUGHT_DEPTH = 4


@dataclass(frozen=True)
class Finding:
    code: str
    node: cst.CSTNode
    message: str


@lru_cache(maxsize=1)
def _acquire_names() -> dict[str, Acquire]:
    names: dict[str, Acquire] = {}
    for row in ACQUIRES:
        if row.cuda_python:
            names.update({f"{module}.{row.name}": row for module in CUDA_PYTHON_MODULES})
        if row.cupy:
            names.update({f"{module}.{row.cupy}": row for module in CUPY_RUNTIME_MODULES})
    return names


@lru_cache(maxsize=1)
def _release_names() -> dict[str, Release]:
    names: dict[str, Release] = {}
    for row in RELEASES:
        if row.cuda_python:
            names.update({f"{module}.{row.name}": row for module in CUDA_PYTHON_MODULES})
        if row.cupy:
            names.update({f"{module}.{row.cupy}": row for module in CUPY_RUNTIME_MODULES})
    return names


def _is_cupy(name: str) -> bool:
    return name.startswith(CUPY_RUNTIME_MODULES)


class Target(enum.Enum):
    TRACKED = "tracked"
    ESCAPED = "escaped"
    DISCARDED = "discarded"


class Use(enum.Enum):
    USE = "use"
    ESCAPE = "escape"
    RELEASE = "release"


@dataclass
class Acquisition:
    unit: "PyUnit"
    step: Step
    call: cst.Call
    row: Acquire
    label: str  # the call as written in the table: cudaMalloc, malloc
    target: Target
    variable: str = ""
    key: str = ""
    status: frozenset[str] = frozenset()

    @property
    def kind(self) -> Kind:
        return self.row.kind


class PyUnit:
    def __init__(self, analysis: "PyFileAnalysis", function: cst.FunctionDef) -> None:
        self.analysis = analysis
        self.function = function

    @cached_property
    def graph(self) -> Graph:
        return PyCfgBuilder(self.analysis.line_of).build_function(self.function)

    @cached_property
    def shared_names(self) -> frozenset[str]:
        """Names declared ``global`` or ``nonlocal``: they outlive the call."""
        names = set()
        for node in iter_subtree(self.function.body):
            if isinstance(node, (cst.Global, cst.Nonlocal)):
                names.update(item.name.value for item in node.names)
        return frozenset(names)

    def is_local(self, name: str) -> bool:
        return name not in self.shared_names


class PyFileAnalysis:
    def __init__(self, context) -> None:
        self.context = context
        self.analysis: ModuleAnalysis = context.analysis
        self.positions = context.analysis.positions
        self.findings: list[Finding] = []
        self._mismatches: set[int] = set()
        self._mains: dict[cst.FunctionDef, bool] = {}  # function -> the last thing a script does
        self._name_index: dict[str, list[cst.Name]] | None = None  # the module's names by spelling, when asked

    def line_of(self, node: cst.CSTNode, end: bool = False) -> int:
        position = self.positions.get(node)
        if position is None:
            return 0
        return position.end.line if end else position.start.line

    # -- names ------------------------------------------------------------------------------
    def acquire_of(self, call: cst.Call) -> tuple[Acquire, str] | None:
        return self._row_of(call, _acquire_names())

    def release_of(self, call: cst.Call) -> tuple[Release, str] | None:
        return self._row_of(call, _release_names())

    def _row_of(self, call: cst.Call, table: dict) -> tuple | None:
        """The row of ``table`` the call's function names, with the function's own name."""
        name = self.analysis.first_name_among(call.func, table)
        return (table[name], name.rsplit(".", 1)[-1]) if name is not None else None

    def is_binding_api(self, expression: cst.BaseExpression) -> bool:
        return self.analysis.resolves_with_prefix(expression, CUDA_PYTHON_MODULES + CUPY_RUNTIME_MODULES)

    # -- running --------------------------------------------------------------------------------
    def run(self) -> list[Finding]:
        # Only functions that call an acquiring binding get a control-flow graph.
        functions: dict[cst.FunctionDef, None] = {}
        for node in iter_subtree(self.context.module, into_scopes=True):
            if isinstance(node, cst.Call) and self.acquire_of(node) is not None:
                function = self.analysis.enclosing_function(node)
                if function is not None:
                    functions[function] = None
        for function in functions:
            unit = PyUnit(self, function)
            try:
                for acquisition in self._acquisitions(unit):
                    self._check(acquisition)
            except RecursionError:
                # Too deep to follow: said, so that the function is never mistaken for one found clean.
                name = function.name.value
                self.findings.append(Finding(NOT_ANALYSED, function, f"`{name}` is nested too deeply to follow; its resources were not checked"))
        return self.findings

    def _acquisitions(self, unit: PyUnit) -> Iterator[Acquisition]:
        for step in unit.graph.steps:
            for root in step.nodes:
                if isinstance(root, _NESTED):
                    continue
                for call in _calls(root):
                    found = self.acquire_of(call)
                    if found is not None:
                        yield self._classify(unit, step, call, *found)

    def _classify(self, unit: PyUnit, step: Step, call: cst.Call, row: Acquire, label: str) -> Acquisition:
        cupy = label == row.cupy
        if row.kind is Kind.CAPTURE:
            stream = call.args[0].value if call.args else None
            key = self.context.module.code_for_node(stream) if stream is not None else ""
            status = self._status_of(call, cupy)
            return Acquisition(unit, step, call, row, label, Target.TRACKED if key else Target.ESCAPED, key=key, status=status)
        holder = self._holder(call)
        parent = self.analysis.parent(holder)
        if isinstance(parent, cst.Expr):
            return Acquisition(unit, step, call, row, label, Target.DISCARDED)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if cupy or holder is not call:  # the handle itself: `ptr = runtime.malloc(n)`, `ptr = check(cudart.cudaMalloc(n))`
                if isinstance(target, cst.Name) and unit.is_local(target.value):
                    return Acquisition(unit, step, call, row, label, Target.TRACKED, variable=target.value)
                return Acquisition(unit, step, call, row, label, Target.ESCAPED)
            if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) >= 2:
                handle = target.elements[1].value
                status = target.elements[0].value
                status_names = frozenset({status.value}) if isinstance(status, cst.Name) else frozenset()
                if isinstance(handle, cst.Name) and unit.is_local(handle.value):
                    return Acquisition(unit, step, call, row, label, Target.TRACKED, variable=handle.value, status=status_names)
        return Acquisition(unit, step, call, row, label, Target.ESCAPED)

    def _holder(self, call: cst.Call) -> cst.CSTNode:
        """The expression that carries the handle on: the call, or an error-check helper wrapping it."""
        parent = self.analysis.parent(call)
        if isinstance(parent, cst.Arg):
            wrapper = self.analysis.parent(parent)
            if isinstance(wrapper, cst.Call) and len(wrapper.args) == 1 and "check" in (terminal_name(wrapper.func) or "").lower():
                return wrapper
        return call

    def _status_of(self, call: cst.Call, cupy: bool) -> frozenset[str]:
        if cupy:
            return frozenset()
        parent = self.analysis.parent(call)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if isinstance(target, (cst.Tuple, cst.List)) and target.elements and isinstance(target.elements[0].value, cst.Name):
                return frozenset({target.elements[0].value.value})
        return frozenset()

    def _check(self, acquisition: Acquisition) -> None:
        row = acquisition.row
        if acquisition.target is Target.DISCARDED:
            self.findings.append(
                Finding(row.kind.leak_code, acquisition.call, f"the result of `{acquisition.label}` ({row.kind.description}) is discarded, so it can never be released")
            )
            return
        if acquisition.target is not Target.TRACKED:
            return
        if self._held_until_exit(acquisition):
            return
        tracker = PyTracker(self, acquisition)
        # An exception that nothing catches on the way out of a script's `main` ends the process, as C's (see
        # gemlint.native.once): the handles it holds go with it.
        uncaught = self._raises_end_the_process(acquisition.unit.function)
        leak = find_leak(acquisition.step, tracker, state=True, skipped_exit=lambda step: uncaught and step.exit.startswith("raises"))
        if leak is None:
            return
        release = self._release_label(row, acquisition.label)
        if row.kind is Kind.CAPTURE:
            message = (
                f"the stream capture begun on `{acquisition.key}` is not ended when the function {leak.reason}; "
                f"call `{release}` on every path"
            )
        elif leak.step.kind is StepKind.EXIT:
            message = (
                f"`{acquisition.variable}` holds {row.kind.description} from `{acquisition.label}` that is not released "
                f"when the function {leak.reason}; call `{release}` on that path (e.g. in a `finally` block) or hand it to an owner"
            )
        else:
            message = (
                f"`{acquisition.variable}` holds {row.kind.description} from `{acquisition.label}` that is lost: "
                f"{leak.reason} before `{release}` releases it"
            )
        self.findings.append(Finding(row.kind.leak_code, acquisition.call, message))

    def _held_until_exit(self, acquisition: Acquisition) -> bool:
        """The acquisition is outside any loop of a script's `main`, the last thing its `__main__` block runs: what
        it acquires is held once, until the process ends (as C's; see gemlint.native.once), whatever else it
        cleans up."""
        function = acquisition.unit.function
        for node in self.analysis.ancestors(acquisition.call):
            if node is function:
                break
            if isinstance(node, _LOOPS):
                return False
        if function not in self._mains:
            self._mains[function] = self._last_in_the_script(function)
        return self._mains[function]

    def _last_in_the_script(self, function: cst.FunctionDef) -> bool:
        """``function`` is at the module's level, is named nowhere else in the module but in one call, and that call
        is the last statement of the ``__main__`` block (``main()``, ``sys.exit(main())``): nothing runs after it but
        the exit."""
        analysis = self.analysis
        if analysis.parent(function) is not self.context.module or not analysis.has_main_block:
            return False
        name = function.name.value
        uses = [node for node in self._names_spelled(name) if node is not function.name]
        call = analysis.parent(uses[0]) if len(uses) == 1 else None
        if not isinstance(call, cst.Call) or call.func is not uses[0]:
            return False
        for node in analysis.ancestors(call):
            if isinstance(node, cst.If) and analysis.is_main_block(node):
                last = node.body.body[-1] if isinstance(node.body, cst.IndentedBlock) and node.body.body else None
                return last is not None and any(ancestor is last for ancestor in analysis.ancestors(call))
            if isinstance(node, (*_LOOPS, cst.FunctionDef, cst.Lambda)):
                return False
        return False

    def _raises_end_the_process(self, function: cst.FunctionDef | None, depth: int = 0) -> bool:
        """``function`` is a module-level function of a script whose every mention in the module is a call outside
        any ``try``, in the ``__main__`` block or in another such function: what it raises ends the process."""
        analysis = self.analysis
        if function is None or depth >= _UNCAUGHT_DEPTH or analysis.parent(function) is not self.context.module or not analysis.has_main_block:
            return False
        calls = 0
        for use in self._names_spelled(function.name.value):
            if use is function.name:
                continue
            call = analysis.parent(use)
            if not isinstance(call, cst.Call) or call.func is not use:
                return False  # handed on, or named where another module may import it and catch what it raises
            caller: cst.FunctionDef | None = None
            in_main_block = False
            for node in analysis.ancestors(call):
                if isinstance(node, (cst.Try, cst.TryStar, cst.Lambda, cst.ClassDef)):
                    return False
                if isinstance(node, cst.FunctionDef):
                    caller = node
                    break
                if isinstance(node, cst.If) and analysis.is_main_block(node):
                    in_main_block = True
            if caller is not None:
                if caller is function or not self._raises_end_the_process(caller, depth + 1):
                    return False
            elif not in_main_block:
                return False  # at import time: whoever imports the module may catch it
            calls += 1
        return calls > 0

    def _names_spelled(self, name: str) -> list[cst.Name]:
        """The module's names spelled ``name`` (its definitions' among them), from one walk of the module."""
        if self._name_index is None:
            index: dict[str, list[cst.Name]] = {}
            for node in iter_subtree(self.context.module, into_scopes=True):
                if isinstance(node, cst.Name):
                    index.setdefault(node.value, []).append(node)
            self._name_index = index
        return self._name_index.get(name, [])

    @staticmethod
    def _release_label(row: Acquire, label: str) -> str:
        """The release to call, named as the binding that acquired names it."""
        if label == row.cupy:
            match = next((r for r in RELEASES if r.kind is row.kind and r.cupy), None)
            if match is not None:
                return f"runtime.{match.cupy}"
        return release_for(row)

    def report_mismatch(self, call: cst.Call, release: Release, label: str, acquisition: Acquisition, variable: str) -> None:
        if id(call) in self._mismatches:
            return
        self._mismatches.add(id(call))
        self.findings.append(
            Finding(
                MISMATCH_CODE,
                call,
                f"`{label}` releases `{variable}`, which holds {acquisition.row.kind.description} from `{acquisition.label}`; "
                f"use `{self._release_label(acquisition.row, acquisition.label)}`",
            )
        )

    # -- what an occurrence of a variable does ----------------------------------------------------
    def classify(self, name: cst.Name, root: cst.CSTNode, depth: int = 0) -> Use:
        node: cst.CSTNode = name
        while node is not root:
            node = self.analysis.parent(node)
            if node is None:
                break
            if isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
                return Use.ESCAPE  # captured by a closure that may run later
        node = name
        while node is not root:
            parent = self.analysis.parent(node)
            if parent is None:
                return Use.USE
            if isinstance(parent, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
                return Use.ESCAPE  # captured by a closure that may run later
            if isinstance(parent, (cst.Element, cst.StarredElement)):
                container = self.analysis.parent(parent)
                if isinstance(container, (cst.Tuple, cst.List)) and self._is_assign_target(container):
                    return Use.USE  # bound by unpacking (`err, ptr = ...`), not stored
                return Use.ESCAPE  # put into a tuple, list or set
            if isinstance(parent, (cst.Return, cst.Yield, cst.Tuple, cst.List, cst.Set, cst.Dict, cst.DictElement,
                                   cst.StarredDictElement)):
                return Use.ESCAPE
            if isinstance(parent, cst.Attribute) and parent.value is node:
                return Use.USE  # ptr.value, ptr.attr
            if isinstance(parent, cst.Subscript) and parent.value is node:
                return Use.USE
            if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.UnaryOperation, cst.BooleanOperation,
                                   cst.FormattedStringExpression, cst.If, cst.While, cst.Assert, cst.Del, cst.SubscriptElement,
                                   cst.Index, cst.Slice)):
                return Use.USE
            if isinstance(parent, cst.Arg):
                call = self.analysis.parent(parent)
                if isinstance(call, cst.Call):
                    use = self._argument_use(call)
                    if use is Use.USE and depth < 2 and self._result_kept(call, root, depth):
                        return Use.ESCAPE  # `view = ctypes.cast(ptr, T)`, then `self.data = as_array(view)`: kept
                    return use
                return Use.USE
            if isinstance(parent, cst.Assign):
                if parent.value is not node:
                    return Use.USE
                targets = [t.target for t in parent.targets]
                if all(isinstance(t, cst.Name) and self._unit_local(t.value, root) for t in targets):
                    return Use.USE  # a local alias
                return Use.ESCAPE
            if isinstance(parent, (cst.AnnAssign, cst.AugAssign)):
                return Use.ESCAPE if isinstance(parent.target, (cst.Attribute, cst.Subscript)) else Use.USE
            if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return Use.USE
            node = parent
        return Use.USE

    def _result_kept(self, call: cst.Call, root: cst.CSTNode, depth: int) -> bool:
        """What ``call`` computed from the handle outlives the statement: it is returned, stored in an attribute, an
        element or a shared name, or bound to a local that is (a view of the memory keeps it reachable)."""
        if self.release_of(call) is not None or self.acquire_of(call) is not None or self.is_binding_api(call.func):
            return False  # the binding's own calls return status codes and new handles
        parent = self.analysis.parent(call)
        if isinstance(parent, (cst.Return, cst.Yield)):
            return True
        if isinstance(parent, cst.AnnAssign) and parent.value is call:
            targets = [parent.target]
        elif isinstance(parent, cst.Assign) and parent.value is call:
            targets = [target.target for target in parent.targets]
        else:
            return False
        function = self.analysis.enclosing_function(call)
        for target in targets:
            if not isinstance(target, cst.Name) or function is None or not self._unit_local(target.value, root):
                return True
            for occurrence in _names(function.body, frozenset({target.value})):
                statement = self.analysis.enclosing_statement(occurrence)
                if statement is not None and self.classify(occurrence, statement, depth + 1) is Use.ESCAPE:
                    return True
        return False

    def _is_assign_target(self, node: cst.CSTNode) -> bool:
        parent = self.analysis.parent(node)
        return isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.For) and parent.target is node)

    def _unit_local(self, name: str, root: cst.CSTNode) -> bool:
        function = self.analysis.enclosing_function(root) if not isinstance(root, cst.FunctionDef) else root
        if function is None:
            return False
        return name not in PyUnit(self, function).shared_names

    def _argument_use(self, call: cst.Call) -> Use:
        if self.release_of(call) is not None or self.acquire_of(call) is not None or self.is_binding_api(call.func):
            return Use.USE
        if any(self.release_of_value(arg.value) for arg in call.args):
            return Use.ESCAPE  # a deleter is handed over with it: weakref.finalize(obj, cudart.cudaFree, ptr)
        name = terminal_name(call.func) or ""
        if _RELEASE_WORDS.search(name):
            return Use.RELEASE
        if any(word.lower().startswith(_OWNER_WORDS) for word in _WORDS.findall(name)):
            return Use.ESCAPE
        if isinstance(call.func, cst.Attribute):
            if isinstance(call.func.value, cst.Name) and call.func.value.value in self.analysis.imported_modules:
                return Use.USE  # a module function (ctypes.c_void_p, math.ceil)
            return Use.ESCAPE  # a method: the object may keep it
        if name in _BUILTIN_USES:
            return Use.USE
        if name[:1].isupper():
            return Use.ESCAPE  # a constructor: the new object may own it
        return Use.USE

    def release_of_value(self, expression: cst.BaseExpression) -> bool:
        return self.analysis.resolves_to(expression, _release_names())


_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _calls(root: cst.CSTNode) -> Iterator[cst.Call]:
    if isinstance(root, cst.Call):
        yield root
    for node in iter_subtree(root):
        if isinstance(node, cst.Call):
            yield node


def _names(root: cst.CSTNode, wanted: frozenset[str]) -> Iterator[cst.Name]:
    if isinstance(root, cst.Name) and root.value in wanted:
        yield root
    for node in iter_subtree(root, into_scopes=True):
        if isinstance(node, cst.Name) and node.value in wanted:
            yield node


class PyTracker:
    def __init__(self, analysis: PyFileAnalysis, acquisition: Acquisition) -> None:
        self.analysis = analysis
        self.acquisition = acquisition
        self.names = self._aliases() if acquisition.variable else frozenset()

    def _aliases(self) -> frozenset[str]:
        names = {self.acquisition.variable}
        function = self.acquisition.unit.function
        changed = True
        while changed:
            changed = False
            for node in iter_subtree(function.body):
                if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and node.value.value in names:
                    for target in node.targets:
                        if isinstance(target.target, cst.Name) and target.target.value not in names:
                            names.add(target.target.value)
                            changed = True
        return frozenset(names)

    def effect(self, step: Step, state: Hashable) -> Effect:
        acquisition = self.acquisition
        for root in step.nodes:
            if isinstance(root, _NESTED):
                if self.names and any(True for _ in _names(root, self.names)):
                    return Effect(Outcome.ESCAPED)
                continue
            for call in _calls(root):
                released = self.analysis.release_of(call)
                if released is None:
                    continue
                row, label = released
                argument = call.args[row.arg].value if len(call.args) > row.arg else None
                if argument is None or not self._denotes(argument, row):
                    continue
                if row.kind is acquisition.kind:
                    return Effect(Outcome.RELEASED)
                if row.kind in MEMORY_KINDS and acquisition.kind in MEMORY_KINDS:
                    self.analysis.report_mismatch(call, row, label, acquisition, self.analysis.context.module.code_for_node(argument))
                    return Effect(Outcome.RELEASED)
        if acquisition.kind is Kind.CAPTURE:
            return Effect(Outcome.NOTHING, self._status_state(step, state))
        for root in step.nodes:
            if isinstance(root, _NESTED):
                continue
            for name in _names(root, self.names):
                use = self.analysis.classify(name, root)
                if use is Use.ESCAPE:
                    return Effect(Outcome.ESCAPED)
                if use is Use.RELEASE:
                    return Effect(Outcome.RELEASED)
        lost = self._lost(step)
        if lost:
            return Effect(Outcome.LOST, reason=lost)
        return Effect(Outcome.NOTHING, self._status_state(step, state))

    def _denotes(self, argument: cst.BaseExpression, row: Release) -> bool:
        if self.acquisition.kind is Kind.CAPTURE:
            return row.kind is Kind.CAPTURE and self.analysis.context.module.code_for_node(argument) == self.acquisition.key
        return isinstance(argument, cst.Name) and argument.value in self.names

    def _assigned_names(self, step: Step) -> Iterator[tuple[str, cst.Assign]]:
        for root in step.nodes:
            if isinstance(root, cst.Assign):
                for target in root.targets:
                    for node in [target.target, *(e.value for e in getattr(target.target, "elements", ()))]:
                        if isinstance(node, cst.Name):
                            yield node.value, root

    def _lost(self, step: Step) -> str:
        if len(self.names) > 1:
            return ""
        variable = self.acquisition.variable
        for name, assign in self._assigned_names(step):
            if name != variable:
                continue
            if any(True for _ in _names(assign.value, frozenset({variable}))):
                continue
            if any(call is self.acquisition.call for call in _calls(assign.value)):
                return f"the next loop iteration acquires into `{variable}` again at line {step.line}"
            return f"`{variable}` is overwritten at line {step.line}"
        return ""

    def _status_state(self, step: Step, state: Hashable) -> Hashable:
        if not state or not self.acquisition.status or step is self.acquisition.step:
            return state
        for name, _ in self._assigned_names(step):
            if name in self.acquisition.status:
                return False
        return state

    # -- failure tests -----------------------------------------------------------------------------------
    def fails(self, step: Step, taken: bool, state: Hashable) -> bool:
        condition = step.condition
        if condition is None:
            return False
        value = self._failure_value(condition, bool(state))
        return value is not None and value == taken

    def _failure_value(self, node: cst.BaseExpression, status_valid: bool, depth: int = 0) -> bool | None:
        if depth > 20:
            return None
        subject = self._subject(node, status_valid)
        if subject == "status":
            return True
        if subject == "handle":
            return False
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = self._failure_value(node.expression, status_valid, depth + 1)
            return None if inner is None else not inner
        if isinstance(node, cst.BooleanOperation):
            values = {self._failure_value(node.left, status_valid, depth + 1), self._failure_value(node.right, status_valid, depth + 1)}
            values.discard(None)
            return values.pop() if len(values) == 1 else None
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            comparison = node.comparisons[0]
            operator = comparison.operator
            if isinstance(operator, (cst.GreaterThan, cst.LessThanEqual)) and literal_value(comparison.comparator) == 0:
                subject = self._subject(node.left, status_valid)
                if subject == "handle":  # `ptr > 0`: false when it is null
                    return isinstance(operator, cst.LessThanEqual)
                if subject == "status":  # `err > 0`: an error code (success is 0)
                    return isinstance(operator, cst.GreaterThan)
                return None
            if isinstance(operator, (cst.GreaterThan, cst.LessThanEqual)):
                return None
            equal = isinstance(operator, (cst.Equal, cst.Is))
            if not equal and not isinstance(operator, (cst.NotEqual, cst.IsNot)):
                return None
            for this, other in ((node.left, comparison.comparator), (comparison.comparator, node.left)):
                subject = self._subject(this, status_valid)
                if subject is None:
                    continue
                text = self.analysis.context.module.code_for_node(other)
                last = text.rsplit(".", 1)[-1]
                if subject == "status":
                    if _SUCCESS.search(last) or last == "0":
                        return not equal
                    return None
                if last in ("0", "None"):
                    return equal
                return None
        return None

    def _subject(self, node: cst.BaseExpression, status_valid: bool) -> str | None:
        if isinstance(node, cst.Attribute) and node.attr.value == "value" and isinstance(node.value, cst.Name):
            # `status.value`: the number of cuda-python's status enum (0 is success)
            return "status" if status_valid and node.value.value in self.acquisition.status else None
        if isinstance(node, cst.Name):
            if status_valid and node.value in self.acquisition.status:
                return "status"
            if node.value in self.names:
                return "handle"
        return None


_CACHE: "weakref.WeakKeyDictionary[ModuleAnalysis, list[Finding]]" = weakref.WeakKeyDictionary()


def analyse(context) -> list[Finding]:
    """The GEM3xx findings of a Python file, computed once for all the rules that ask."""
    analysis = context.analysis
    if analysis not in _CACHE:
        if not analysis.imports_any(("cuda", "cupy", "cupy_backends")):
            _CACHE[analysis] = []
        else:
            _CACHE[analysis] = PyFileAnalysis(context).run()
    return _CACHE[analysis]
