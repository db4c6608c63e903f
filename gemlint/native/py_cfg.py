"""Builds the control-flow :class:`~gemlint.native.paths.Graph` of one Python function (LibCST).

Covered: statement sequences, ``if``/``elif``/``else``, ``while``/``for`` (with
``else``), ``break``/``continue``, ``return``, ``raise`` (to the enclosing
``except`` clauses, else out of the function), ``assert`` (its failure raises),
``try``/``except``/``else``/``finally`` (every ``return`` and ``raise`` inside a
``try`` runs its ``finally`` first), ``with`` and ``match``. Calls are not
assumed to raise. Nested functions and classes are single steps: their bodies
run at another time.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import libcst as cst

from gemlint.analysis.syntax import iter_subtree
from gemlint.native.paths import Graph, Step, StepKind

_NESTED = (cst.FunctionDef, cst.ClassDef)
#: A mapping's views: iterating one iterates the mapping.
_VIEWS = frozenset({"values", "items", "keys"})


class PyCfgBuilder:
    def __init__(self, line_of) -> None:
        #: node -> 1-based line (from the metadata wrapper)
        self.line_of = line_of
        self.graph = Graph()
        self._breaks: list[Step] = []
        self._continues: list[Step] = []
        self._handlers: list[list[Step]] = []
        #: Enclosing ``finally`` blocks, innermost last: a return or raise runs them on the way out.
        self._finally: list[Sequence[cst.BaseStatement]] = []
        self._end: Step | None = None
        #: The function being built, and its parameters (see :meth:`_runs_once`).
        self._function: cst.FunctionDef | None = None
        self._parameters: frozenset[str] = frozenset()
        #: The code of the tests the function makes, read when a loop first asks (see :meth:`_runs_once`).
        self._tested: tuple[str, ...] | None = None

    def build_function(self, function: cst.FunctionDef) -> Graph:
        params = function.params
        self._function = function
        self._parameters = frozenset(
            p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
        ) | {"self", "cls"}
        end_line = self.line_of(function, end=True)
        self._end = self.graph.add(StepKind.EXIT, exit=f"reaches its end at line {end_line}", line=end_line)
        self.graph.entry = self.block(function.body, self._end)
        return self.graph

    # -- exits -------------------------------------------------------------------------
    def _leave(self, how: str, line: int) -> Step:
        """Where a return goes: through the enclosing ``finally`` blocks, then out."""
        target = self.graph.add(StepKind.EXIT, exit=f"{how} at line {line}", line=line)
        saved = self._finally
        for index in range(len(saved) - 1, -1, -1):
            self._finally = saved[:index]
            target = self.sequence(saved[index], target)
        self._finally = saved
        return target

    def _raise_targets(self, line: int) -> list[Step]:
        if self._handlers:
            return list(self._handlers[-1])
        return [self._leave("raises", line)]

    # -- blocks and statements ----------------------------------------------------------
    def block(self, body: cst.BaseSuite | Sequence[cst.BaseStatement], after: Step) -> Step:
        if isinstance(body, cst.SimpleStatementSuite):
            return self._small_statements(body.body, body, after)
        statements = body.body if isinstance(body, cst.IndentedBlock) else body
        return self.sequence(statements, after)

    def sequence(self, statements: Sequence[cst.CSTNode], after: Step) -> Step:
        current = after
        for statement in reversed(list(statements)):
            current = self.statement(statement, current)
        return current

    def statement(self, node: cst.CSTNode, after: Step) -> Step:
        if isinstance(node, cst.SimpleStatementLine):
            return self._small_statements(node.body, node, after)
        handler = getattr(self, f"_build_{type(node).__name__}", None)
        if handler is not None:
            return handler(node, after)
        return self._effect(node, after)

    def _effect(self, node: cst.CSTNode, after: Step) -> Step:
        return self.graph.add(StepKind.EFFECT, (node,), line=self.line_of(node)).then(after)

    def _small_statements(self, smalls: Sequence[cst.BaseSmallStatement], line_node: cst.CSTNode, after: Step) -> Step:
        current = after
        for small in reversed(list(smalls)):
            current = self._small(small, current)
        return current

    def _small(self, node: cst.BaseSmallStatement, after: Step) -> Step:
        line = self.line_of(node)
        if isinstance(node, cst.Return):
            return self.graph.add(StepKind.EFFECT, (node,), line=line).then(self._leave("returns", line))
        if isinstance(node, cst.Raise):
            step = self.graph.add(StepKind.EFFECT, (node,), line=line)
            for target in self._raise_targets(line):
                step.then(target)
            return step
        if isinstance(node, cst.Break):
            return self._breaks[-1] if self._breaks else after
        if isinstance(node, cst.Continue):
            return self._continues[-1] if self._continues else after
        if isinstance(node, cst.Assert):
            branch = self.graph.add(StepKind.BRANCH, (node.test,), condition=node.test, line=line)
            branch.then(after, True)
            for target in self._raise_targets(line):
                branch.then(target, False)
            return branch
        return self._effect(node, after)

    def _branch(self, test: cst.BaseExpression, when_true: Step, when_false: Step) -> Step:
        step = self.graph.add(StepKind.BRANCH, (test,), condition=test, line=self.line_of(test))
        step.in_loop = bool(self._continues)
        return step.then(when_true, True).then(when_false, False)

    def _build_If(self, node: cst.If, after: Step) -> Step:
        then_entry = self.block(node.body, after)
        if node.orelse is None:
            else_entry = after
        elif isinstance(node.orelse, cst.If):
            else_entry = self._build_If(node.orelse, after)
        else:
            else_entry = self.block(node.orelse.body, after)
        return self._branch(node.test, then_entry, else_entry)

    @contextmanager
    def _loop(self, after: Step, head: Step) -> Iterator[None]:
        self._breaks.append(after)
        self._continues.append(head)
        try:
            yield
        finally:
            self._breaks.pop()
            self._continues.pop()

    def _build_While(self, node: cst.While, after: Step) -> Step:
        head = self.graph.join()
        exit_entry = self.block(node.orelse.body, after) if node.orelse is not None else after
        with self._loop(after, head):
            body_entry = self.block(node.body, head)
        if isinstance(node.test, cst.Name) and node.test.value == "True":
            head.then(body_entry)
        else:
            head.then(self._branch(node.test, body_entry, exit_entry))
        return head

    def _build_For(self, node: cst.For, after: Step) -> Step:
        head = self.graph.join()
        exit_entry = self.block(node.orelse.body, after) if node.orelse is not None else after
        with self._loop(after, head):
            body_entry = self.block(node.body, head)
        # Each iteration binds the target from the iterable: an effect, then either the body or the end.
        bind = self.graph.add(StepKind.EFFECT, (node.target,), line=self.line_of(node))
        bind.then(body_entry)
        choice = self.graph.add(StepKind.BRANCH, line=self.line_of(node))
        choice.in_loop = True
        head.then(choice.then(bind).then(exit_entry))
        # The first test apart from the later ones, as for a C++ range `for`: skipping the loop altogether is a path
        # only when the iterable may be empty as far as the function shows.
        first = self.graph.add(StepKind.BRANCH, line=self.line_of(node))
        first.in_loop = True
        first.runs_once = self._runs_once(node.iter)
        first.then(bind, True).then(exit_entry, False)
        return self.graph.add(StepKind.EFFECT, (node.iter,), line=self.line_of(node)).then(first)

    def _runs_once(self, iterable: cst.BaseExpression) -> bool:
        """``iterable`` is a collection the function was handed (``backbone.engines.values()``, ``self.layers``,
        ``streams``: a parameter's or ``self``'s, not a local it computed) and never tests for emptiness."""
        if isinstance(iterable, cst.Call):
            if iterable.args or not (isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in _VIEWS):
                return False
            iterable = iterable.func.value
        root = iterable
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or root.value not in self._parameters:
            return False
        if self._tested is None:
            tests = (cst.If, cst.While, cst.IfExp, cst.Assert)
            nodes = iter_subtree(self._function.body) if self._function is not None else ()
            self._tested = tuple(cst.Module([]).code_for_node(node.test) for node in nodes if isinstance(node, tests))
        code = cst.Module([]).code_for_node(iterable)
        return not any(code in test for test in self._tested)

    def _build_Try(self, node: cst.Try, after: Step) -> Step:
        finalbody = node.finalbody.body.body if node.finalbody is not None else None
        # Leaving normally runs the finally block, then continues.
        normal_after = self.sequence(finalbody, after) if finalbody is not None else after
        if finalbody is not None:
            self._finally.append(finalbody)
        try:
            handlers = [self.block(handler.body, normal_after) for handler in node.handlers]
            else_entry = self.block(node.orelse.body, normal_after) if node.orelse is not None else normal_after
            if handlers:
                self._handlers.append(handlers)
            try:
                return self.block(node.body, else_entry)
            finally:
                if handlers:
                    self._handlers.pop()
        finally:
            if finalbody is not None:
                self._finally.pop()

    _build_TryStar = _build_Try

    def _build_With(self, node: cst.With, after: Step) -> Step:
        body = self.block(node.body, after)
        return self.graph.add(StepKind.EFFECT, tuple(item.item for item in node.items), line=self.line_of(node)).then(body)

    def _build_Match(self, node: cst.Match, after: Step) -> Step:
        dispatch = self.graph.add(StepKind.BRANCH, (node.subject,), line=self.line_of(node))
        for case in node.cases:
            dispatch.then(self.block(case.body, after))
        return dispatch.then(after)

    def _build_FunctionDef(self, node: cst.FunctionDef, after: Step) -> Step:
        return self._effect(node, after)  # a nested function: its body is another unit

    def _build_ClassDef(self, node: cst.ClassDef, after: Step) -> Step:
        return self._effect(node, after)
