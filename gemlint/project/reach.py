"""Does a function run a forward pass, directly or through the project functions it calls?

Each function's forward passes come from :mod:`gemlint.analysis.forward` (LibCST) on its file. The functions
it calls are found in the project's call graph on astroid trees (:mod:`gemlint.project.call_graph`), asked
only where LibCST cannot tell alone that a function calls nothing of the project's: astroid and its trees
are imported and built only then.

The search is breadth-first, bounded in depth and in functions visited, and every result is cached for the run.
"""

from __future__ import annotations

import re
from collections import deque
from typing import TYPE_CHECKING

import libcst as cst
from libcst.helpers import get_full_name_for_node

from gemlint.analysis.forward import forward_calls
from gemlint.analysis.syntax import iter_subtree, terminal_name
from gemlint.diagnostics import Position
from gemlint.project.forward_paths import OFFLOAD_NAMES, ForwardPath, Step

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.project.call_graph import CallGraph
    from gemlint.project.files import ParsedFile, Project

MAX_DEPTH = 6
MAX_FUNCTIONS = 300
_STAR_IMPORT = re.compile(r"\bimport\s*\*")
_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float)


class Reachability:
    def __init__(self, project: "Project") -> None:
        self.project = project
        self._callees: dict[tuple[str, int], list[Step]] = {}
        self._results: dict[tuple[str, int], ForwardPath | None] = {}
        self._gated: dict[tuple[str, int], bool] = {}
        self._outside_only: dict[tuple[str, int], bool] = {}
        self._packages: frozenset[str] | None = None
        self._graph: "CallGraph | None" = None

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
        if self._calls_only_outside_code(step):
            return None
        return self._call_graph().imported_model_call(step, path)

    def _answers_from_state(self, step: Step) -> bool:
        """The function returns early on a condition that reads the clock (``if now - last_inference <
        timeout: return healthy``, directly or in a project method the condition calls): it answers from state
        while that is fresh, and runs what follows only when the server has been idle, not on every call."""
        key = (str(step.file.path), step.line)
        if key not in self._gated and not _may_return_early_on_a_call(step.file.function_at(step.line) if step.line else None):
            self._gated[key] = False  # checked on LibCST first: astroid's tree (and its start-up) is not needed
        if key not in self._gated:
            self._gated[key] = self._call_graph().clock_gated(step)
        return self._gated[key]

    def _callees_of(self, step: Step) -> list[Step]:
        key = (str(step.file.path), step.line)
        if key not in self._callees:
            self._callees[key] = [] if self._calls_only_outside_code(step) else self._call_graph().callees(step)
        return self._callees[key]

    def _call_graph(self) -> "CallGraph":
        if self._graph is None:
            from gemlint.project.call_graph import CallGraph

            self._graph = CallGraph(self.project)
        return self._graph

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
        if terminal_name(call.func) in OFFLOAD_NAMES:  # what the call hands a function to, as _callees_of reads it
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


def _may_return_early_on_a_call(function: cst.FunctionDef | None) -> bool:
    """Whether ``function``'s body has an ``if`` that ends in ``return`` and whose test calls something: what a
    clock-gated early return needs (:meth:`gemlint.project.call_graph.CallGraph.clock_gated` decides on astroid's tree)."""
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
