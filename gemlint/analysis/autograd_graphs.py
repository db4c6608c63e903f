"""Which autograd graphs each tensor of a function carries, and which backward passes go through them.

A function body is interpreted statement by statement, over an abstract value per name: the set of
graph *origins* the tensor may carry. An origin is

* a forward computation of this function (a model or module call, a call of something this file cannot
  see, a same-file function whose result carries a graph), one per call site;
* a parameter (``caller``): a graph the caller may have built. Two backward passes that both reach it may
  share that graph; a retained graph that reaches only parameters is the caller's to reuse and is not judged;
* ``outside``: a tensor read from ``self`` (an attribute that some method stores a computed tensor in)
  or from an enclosing function (a closure's free variable): a graph another call built and may reuse;
* an ``item`` of a loop over a parameter (``for x, y in loader``): data, new every iteration, never a
  graph two backward passes share.

Operations on tensors (operators, tensor methods, ``torch.*`` functions) carry the union of their operands'
origins, so a loss built from ``a`` and ``b`` shares both their graphs. ``.detach()``, ``.item()``,
``.numpy()``, ``.sample()``, comparisons, tensor constructors, ``torch.no_grad()`` / ``inference_mode()``
blocks and ``autograd.grad`` without ``create_graph`` carry none. A value handed to a call this file cannot see
flows into its result, on top of the fresh graph the call builds.

Loops are iterated to a fixed point. An origin created inside a loop belongs to the iteration that created
it: at the loop's back edge it is renamed to "the previous iteration's", so a name recomputed in the body
carries a fresh graph each time while a value carried across iterations (a hidden state, a running sum)
still links to the old one.

A list that gets one element per iteration of a loop (its only write, with the list bound before the loop)
holds one graph per element: what each appended value built in its own iteration is tagged as the element's.
Another loop that picks ``values[i]`` with its counter (``range``, ``enumerate``) reaches a different element
every iteration, so the pick is renamed at that loop's back edge as a fresh forward would be.

Each backward pass (``.backward``, ``torch.autograd.backward/grad``, a same-file helper that runs one) is
recorded with the origins its root carries, and so is every place a graph leaves the function: returned or
yielded, stored on ``self``, a parameter or a global, captured by a nested function, or handed to a callee
whose result is dropped (it may keep or backpropagate it; logging calls excepted). A retained graph is
reused when a later backward on some path (later in the iteration, after the loop, or in a following
iteration) carries one of its origins, or when it leaves the function.

Through the project model (:class:`gemlint.analysis.outside.OutsideFacts`), a function of another module
is interpreted from its body as a same-file one is, and a graph that leaves only by ``return`` is judged by
the function's callers: reused when one of them may backpropagate the result, or a graph it handed in, again
(or pass it on), not reused when every call in the project is known and none does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Iterable, Iterator

import libcst as cst

from gemlint.analysis.autograd import BackwardCall, backward_call
from gemlint.analysis.graph_calls import (
    BREAKING_ATTRIBUTES,
    BREAKING_METHODS,
    BUILTINS,
    DATA_BUILTINS,
    GRAD_CONTEXTS,
    GRAD_FREE_CONTEXTS,
    LOGGING_METHODS,
    OPTION_KEYWORDS,
    SETUP_METHODS,
    SET_GRAD_ENABLED,
    SHAPING_METHODS,
    STORING_METHODS,
    TENSOR_CONSTRUCTORS,
    library_result,
    may_carry_graph,
)
from gemlint.analysis.syntax import dotted_name, is_name, literal_value, terminal_name

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.analysis.module import ModuleAnalysis

FORWARD = "forward"
CALLER = "caller"
OUTSIDE = "outside"
ITEM = "item"

_LOOPS = (cst.For, cst.While)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_FIXPOINT_PASSES = 4
_SUMMARY_DEPTH = 3


@dataclass(frozen=True)
class Origin:
    """One source of graph nodes a tensor may carry."""

    kind: str
    #: The forward call, the loop (``item``), the parameter or the read (``outside``).
    node: cst.CSTNode
    #: 0: built in the current iteration of the loops around ``node``; 1: built in an earlier one.
    generation: int = 0
    #: The loop that appends one element per iteration to the list this origin is in, each element with a
    #: graph of its own: the origin stands for one graph per element.
    element: cst.CSTNode | None = None
    #: The loop whose counter picked one element of such a list (``log_probs[i]`` in ``for i in range(n)``),
    #: and whether the pick is this iteration's (0) or an earlier one's (1): another iteration's element.
    picked: cst.CSTNode | None = None
    pick_generation: int = 0

    def aged(self) -> "Origin":
        return replace(self, generation=1)

    def meets(self, other: "Origin") -> bool:
        """The two may stand for one graph: the same origin, unless they are elements of one list picked in
        different iterations of one loop."""
        if (self.kind, self.node, self.generation) != (other.kind, other.node, other.generation):
            return False
        return not (self.picked is not None and self.picked is other.picked and self.pick_generation != other.pick_generation)


_NONE: frozenset = frozenset()
_UNPACKED = "*"


def shares(first: Iterable[Origin], second: Iterable[Origin]) -> bool:
    """Whether two sets of origins may have a graph in common."""
    first, second = set(first), set(second)
    if first & second:
        return True
    by_base: dict[tuple, list[Origin]] = {}
    for origin in second:
        by_base.setdefault((origin.kind, origin.node, origin.generation), []).append(origin)
    return any(o.meets(p) for o in first for p in by_base.get((o.kind, o.node, o.generation), ()))


@dataclass
class BackwardEvent:
    """A backward pass of the function and the graph origins its root carries (over every pass of the
    interpretation)."""

    backward: BackwardCall | None
    #: The call: ``loss.backward(...)`` or a same-file helper that backpropagates an argument.
    node: cst.Call
    origins: set[Origin] = field(default_factory=set)


@dataclass
class Escape:
    """A place where tensors leave the function, and the origins they carry."""

    node: cst.CSTNode
    reason: str
    origins: set[Origin] = field(default_factory=set)


@dataclass
class FunctionSummary:
    """What a call of a same-file function does with graphs, for its callers."""

    returns_fresh_graph: bool
    returns_parameters: bool
    returned_outside: frozenset
    backpropagates_parameters: bool
    keeps_parameters: bool


class FunctionGraphs:
    """The graph flow of one function (or of a module's top-level code)."""

    def __init__(self, graphs: "AutogradGraphs", scope: cst.CSTNode) -> None:
        self.graphs = graphs
        self.analysis = graphs.analysis
        self.scope = scope
        self.backwards: dict[cst.Call, BackwardEvent] = {}
        self.escapes: dict[cst.CSTNode, Escape] = {}
        self.returned: set[Origin] = set()
        #: What each call of the function is handed (arguments and receiver), over every pass.
        self._inputs: dict[cst.Call, frozenset] = {}
        #: The same, for calls of code this file cannot see (and constructions): it may keep what it gets.
        self._handed: dict[cst.Call, frozenset] = {}
        #: What each call binds to each parameter of its callee: position or keyword -> origins
        #: (``_UNPACKED`` when a ``*args``/``**kwargs`` makes the binding unknown).
        self._bound: dict[cst.Call, dict[int | str, frozenset]] = {}
        self._grad_free = 1 if isinstance(scope, cst.FunctionDef) and graphs.grad_free_function(scope) else 0
        self._params: set[str] = set()
        env: dict[str, frozenset] = {}
        if isinstance(scope, (cst.FunctionDef, cst.Lambda)):
            for param in _parameters(scope.params):
                if param.name.value not in ("self", "cls"):
                    self._params.add(param.name.value)
                    env[param.name.value] = frozenset({Origin(CALLER, param)})
        if isinstance(scope, cst.FunctionDef):
            self._block(scope.body, env)
        elif isinstance(scope, cst.Module):
            self._statements(scope.body, env)

    # -- questions -------------------------------------------------------------------------------------
    def reuses(self, retained: BackwardEvent, data: frozenset[str] = frozenset()) -> tuple[str, BackwardEvent | Escape | None]:
        """Whether the graph ``retained`` keeps may be traversed again, as ``(verdict, evidence)``:

        * ``"reused"``: a later backward on some path, or a place the graph leaves the function (evidence);
        * ``"unknown"``: its root carries no graph this function builds (a caller's, one stored on ``self``);
        * ``"free"``: nothing traverses it again; the evidence is the next backward, if there is one.

        A graph that leaves only by ``return`` is not reused when every caller in the project is known and
        none backpropagates what it received again (:meth:`AutogradGraphs.returns_reused`). The parameters
        named in ``data`` carry no graph (:meth:`AutogradGraphs.data_parameters`): two backward passes that
        both reach one of them share nothing through it.
        """
        if not any(o.kind == FORWARD for o in retained.origins) or any(o.kind == OUTSIDE for o in retained.origins):
            return "unknown", None
        # The items of a loader are data, new every iteration: sharing one is not sharing a graph.
        mine = {o for o in retained.origins if o.kind != ITEM and not (o.kind == CALLER and o.node.name.value in data)}
        # What leaves the function matters for the graph this function builds; the caller has its own already.
        built = {o for o in mine if o.kind != CALLER}
        built |= {o.aged() for o in built}
        for escape in self.escapes.values():
            if shares(escape.origins, built):
                if escape.reason == "returned" and self.graphs.returns_reused(self.scope) is False:
                    continue
                return "reused", escape
        loops = self._loops_around(retained.node)
        # The next iteration of each loop around: what that loop's body built is built afresh, the rest (an
        # outer loop's forward, a list filled before) is the same graph.
        following = [(loop, self._aged_in(mine, loop)) for loop in loops]
        next_backward = None
        for other in self.backwards.values():
            again = [aged for loop, aged in following if self.graphs.within(other.node, loop)]
            if other.backward is not None and other.backward.root is None:
                if self._later(retained.node, other.node) or again:
                    return "reused", other
                continue
            if self._later(retained.node, other.node):
                if shares(other.origins, mine):
                    return "reused", other
                if next_backward is None or self.graphs.order(other.node) < self.graphs.order(next_backward.node):
                    next_backward = other
            if any(shares(other.origins, aged) for aged in again):
                return "reused", other
        return "free", next_backward

    def argument(self, call: cst.Call, position: int | None, name: str) -> frozenset | None:
        """The origins ``call`` binds to the callee's parameter ``name`` (at ``position`` when positional),
        over every pass; nothing when it is left to its default; None when this function never evaluated
        the call or unpacks arguments into it."""
        bound = self._bound.get(call)
        if bound is None or _UNPACKED in bound:
            return None
        if name in bound:
            return bound[name]
        return bound.get(position, _NONE) if position is not None else _NONE

    def returns_retained(self, retained: BackwardEvent) -> bool:
        """Whether the function returns (part of) the graph ``retained`` keeps."""
        built = {o for o in retained.origins if o.kind not in (ITEM, CALLER)}
        built |= {o.aged() for o in built}
        return any(e.reason == "returned" and shares(e.origins, built) for e in self.escapes.values())

    def uses_result(self, call: cst.Call) -> bool:
        """Whether what ``call`` returns, or a graph it was handed, may be backpropagated by this function or
        leave it (returned, stored, handed to code this file cannot see, even where that code's result is used)."""
        result = {Origin(kind, call, generation) for kind in (FORWARD, OUTSIDE) for generation in (0, 1)}
        wanted = result | {o for o in self._inputs.get(call, _NONE) if o.kind != ITEM}
        for event in self.backwards.values():
            if event.node is call:
                continue  # the backward passes of the callee itself, the retaining one among them
            if event.backward is not None and event.backward.root is None:
                return True
            if shares(event.origins, wanted):
                return True
        if any(shares(escape.origins, wanted) for escape in self.escapes.values()):
            return True
        return any(shares(handed, result) for handed in self._handed.values())

    def _aged_in(self, origins: Iterable[Origin], loop: cst.CSTNode) -> set[Origin]:
        """``origins`` as the next iteration of ``loop`` sees them: built in its body, or picked by the counter
        of a loop in it (which refills the list, see :meth:`_picking_loop`), they are another iteration's."""
        aged = set()
        for origin in origins:
            if self.graphs.within(origin.node, loop):
                origin = origin.aged()
            if origin.picked is not None and self.graphs.within(origin.picked, loop):
                origin = replace(origin, pick_generation=1)
            aged.add(origin)
        return aged

    def _later(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """``second`` may run after ``first`` in the same pass through their common code."""
        if second is first or self.graphs.order(second) <= self.graphs.order(first) or self.graphs.within(second, first):
            return False
        return not self.graphs.exclusive(first, second)

    def _loops_around(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        loops = []
        child = node
        for ancestor in self.analysis.ancestors(node):
            if ancestor is self.scope:
                break
            if isinstance(ancestor, _LOOPS) and child is ancestor.body:
                loops.append(ancestor)
            child = ancestor
        return loops

    def innermost_loop(self, node: cst.CSTNode) -> cst.CSTNode | None:
        loops = self._loops_around(node)
        return loops[0] if loops else None

    def summary(self) -> FunctionSummary:
        params = {o for o in self.returned if o.kind == CALLER}
        backpropagated = any(o.kind == CALLER for event in self.backwards.values() for o in event.origins)
        kept = any(o.kind == CALLER for escape in self.escapes.values() if escape.reason != "returned" for o in escape.origins)
        return FunctionSummary(
            returns_fresh_graph=any(o.kind in (FORWARD, ITEM) for o in self.returned),
            returns_parameters=bool(params),
            returned_outside=frozenset(o for o in self.returned if o.kind == OUTSIDE),
            backpropagates_parameters=backpropagated,
            keeps_parameters=kept,
        )

    # -- statements ------------------------------------------------------------------------------------
    def _block(self, block: cst.BaseSuite, env: dict) -> dict:
        if isinstance(block, cst.SimpleStatementSuite):
            for statement in block.body:
                env = self._small(statement, env)
            return env
        return self._statements(block.body, env)

    def _statements(self, statements: Iterable[cst.CSTNode], env: dict) -> dict:
        for statement in statements:
            env = self._statement(statement, env)
        return env

    def _statement(self, statement: cst.CSTNode, env: dict) -> dict:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                env = self._small(small, env)
            return env
        if isinstance(statement, cst.If):
            self._eval(statement.test, env)
            taken = self._block(statement.body, dict(env))
            other = self._else(statement.orelse, dict(env))
            return _join(taken, other)
        if isinstance(statement, cst.For):
            return self._for(statement, env)
        if isinstance(statement, cst.While):
            return self._loop(statement, env, lambda e: (self._eval(statement.test, e), e)[1])
        if isinstance(statement, cst.With):
            return self._with(statement, env)
        if isinstance(statement, cst.Try):
            done = self._block(statement.body, dict(env))
            merged = _join(env, done)
            outcomes = [done]
            for handler in statement.handlers:
                outcomes.append(self._block(handler.body, dict(merged)))
            if statement.orelse is not None:
                outcomes[0] = self._block(statement.orelse.body, outcomes[0])
            result = outcomes[0]
            for outcome in outcomes[1:]:
                result = _join(result, outcome)
            if statement.finalbody is not None:
                result = self._block(statement.finalbody.body, result)
            return result
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            if not isinstance(self.scope, cst.Module):
                self._captured(statement, env)
            if isinstance(statement, cst.FunctionDef):
                env = dict(env)
                env[statement.name.value] = _NONE
            return env
        if isinstance(statement, cst.Match):
            self._eval(statement.subject, env)
            result = env
            for case in statement.cases:
                result = _join(result, self._block(case.body, dict(env)))
            return result
        return env

    def _else(self, orelse: cst.CSTNode | None, env: dict) -> dict:
        if orelse is None:
            return env
        if isinstance(orelse, cst.If):
            return self._statement(orelse, env)
        return self._block(orelse.body, env)

    def _small(self, statement: cst.CSTNode, env: dict) -> dict:
        if isinstance(statement, cst.Assign):
            value = self._eval(statement.value, env)
            for target in statement.targets:
                env = self._bind(target.target, value, env, statement)
            return env
        if isinstance(statement, cst.AnnAssign):
            if statement.value is None:
                return env
            return self._bind(statement.target, self._eval(statement.value, env), env, statement)
        if isinstance(statement, cst.AugAssign):
            value = self._eval(statement.value, env) | self._eval(statement.target, env)
            return self._bind(statement.target, value, env, statement)
        if isinstance(statement, cst.Expr):
            self._eval(statement.value, env, dropped=True)
            return env
        if isinstance(statement, cst.Return):
            if statement.value is not None:
                value = self._eval(statement.value, env)
                self.returned.update(value)
                self._escape(statement, "returned", value)
            return env
        if isinstance(statement, (cst.Global, cst.Nonlocal)):
            for item in statement.names:
                self.graphs.note_global(self.scope, item.name.value)
            return env
        if isinstance(statement, cst.Del):
            return env
        if isinstance(statement, cst.Raise) and statement.exc is not None:
            self._eval(statement.exc, env)
        if isinstance(statement, cst.Assert):
            self._eval(statement.test, env)
        return env

    def _bind(self, target: cst.BaseExpression, value: frozenset, env: dict, at: cst.CSTNode) -> dict:
        if isinstance(target, cst.Name):
            if self.graphs.is_global(self.scope, target.value):
                self._escape(at, "stored in a global", value)
            env = dict(env)
            env[target.value] = value
            return env
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                inner = element.value
                env = self._bind(inner, value, env, at)
            return env
        if isinstance(target, cst.StarredElement):
            return self._bind(target.value, value, env, at)
        if isinstance(target, (cst.Attribute, cst.Subscript)):
            owner = _base_name(target)
            if self._local(owner, env):
                env = dict(env)
                env[owner] = env[owner] | value
                return env
            where = "stored on `self`" if owner in ("self", "cls") else "stored outside the function"
            self._escape(at, where, value)
        return env

    def _for(self, loop: cst.For, env: dict) -> dict:
        items = self._items(loop, self._eval(loop.iter, env))

        def bind(e: dict) -> dict:
            return self._bind(loop.target, items, e, loop)

        return self._loop(loop, env, bind)

    def _items(self, loop: cst.For, iterable: frozenset) -> frozenset:
        """What the target of ``loop`` carries: the items of a tensor or list built here share its graph;
        the items of a parameter (a loader, a list of batches) are new data every iteration."""
        local = {o for o in iterable if o.kind != CALLER}
        if len(local) < len(iterable):
            local.add(Origin(ITEM, loop))
        return frozenset(local)

    def _loop(self, loop: cst.CSTNode, env: dict, enter) -> dict:
        head = dict(env)
        end = env
        for _ in range(_FIXPOINT_PASSES):
            end = self._block(loop.body, enter(dict(head)))
            following = _join(env, self._aged(end, loop))
            if following == head:
                break
            head = following
        after = _join(env, end)
        if getattr(loop, "orelse", None) is not None:
            after = self._block(loop.orelse.body, after)
        return after

    def _aged(self, env: dict, loop: cst.CSTNode) -> dict:
        """``env`` at the back edge of ``loop``: what the finished iteration built (or picked) becomes an earlier one's."""
        return {name: frozenset(self._age(o, loop) for o in value) for name, value in env.items()}

    def _age(self, origin: Origin, loop: cst.CSTNode) -> Origin:
        if origin.generation == 0 and origin.kind in (FORWARD, ITEM) and self.graphs.within(origin.node, loop):
            origin = origin.aged()
        if origin.picked is not None and origin.pick_generation == 0 and self.graphs.within(origin.picked, loop):
            origin = replace(origin, pick_generation=1)  # another element (a loop around refills the list)
        return origin

    def _with(self, statement: cst.With, env: dict) -> dict:
        grad_free = None
        for item in statement.items:
            value = self._eval(item.item, env)
            mode = self._grad_mode(item.item)
            if mode is not None:
                grad_free = mode
            if item.asname is not None:
                env = self._bind(item.asname.name, value, env, statement)
        if grad_free is None:
            return self._block(statement.body, env)
        saved = self._grad_free
        self._grad_free = saved + 1 if grad_free else 0
        try:
            return self._block(statement.body, env)
        finally:
            self._grad_free = saved

    def _grad_mode(self, expression: cst.BaseExpression) -> bool | None:
        """True for a context that disables gradients, False for one that enables them, else None."""
        call = expression if isinstance(expression, cst.Call) else None
        target = call.func if call is not None else expression
        if self.analysis.resolves_to(target, GRAD_FREE_CONTEXTS):
            if call is not None and call.args and literal_value(call.args[0].value) is False:
                return None  # inference_mode(False)
            return True
        if self.analysis.resolves_to(target, GRAD_CONTEXTS):
            return False
        if call is not None and self.analysis.resolves_to(target, SET_GRAD_ENABLED) and call.args:
            enabled = literal_value(call.args[0].value)
            if enabled is False:
                return True
            if enabled is True:
                return False
        return None

    def _captured(self, definition: cst.CSTNode, env: dict) -> None:
        """A nested function or class that reads this function's tensors takes their graphs along."""
        captured: set[Origin] = set()
        for node in self.analysis.subtree(definition, into_scopes=True):
            if isinstance(node, cst.Name) and node.value in env:
                captured |= env[node.value]
        if captured:
            self._escape(definition, "captured by a nested function", frozenset(captured))

    def _escape(self, node: cst.CSTNode, reason: str, origins: frozenset) -> None:
        if not origins:
            return
        escape = self.escapes.get(node)
        if escape is None:
            escape = self.escapes[node] = Escape(node, reason)
        escape.origins |= origins

    # -- expressions -----------------------------------------------------------------------------------
    def _eval(self, expression: cst.CSTNode, env: dict, dropped: bool = False) -> frozenset:
        value = self._value(expression, env, dropped)
        if self._grad_free and not isinstance(expression, (cst.Name, cst.Attribute)):
            return _NONE
        return value

    def _union(self, expressions: Iterable[cst.CSTNode], env: dict) -> frozenset:
        result: set[Origin] = set()
        for expression in expressions:
            result |= self._eval(expression, env)
        return frozenset(result)

    def _value(self, node: cst.CSTNode, env: dict, dropped: bool) -> frozenset:
        if isinstance(node, cst.Name):
            return self._name(node, env)
        if isinstance(node, cst.Attribute):
            return self._attribute(node, env)
        if isinstance(node, cst.Call):
            return self._call(node, env, dropped)
        if isinstance(node, cst.Subscript):
            self._union((element.slice for element in node.slice), env)
            value = self._eval(node.value, env)
            loop = self._picking_loop(node)
            if loop is not None:
                value = frozenset(replace(o, picked=loop) if o.element is not None else o for o in value)
            return value
        if isinstance(node, (cst.BinaryOperation, cst.BooleanOperation)):
            return self._eval(node.left, env) | self._eval(node.right, env)
        if isinstance(node, cst.UnaryOperation):
            value = self._eval(node.expression, env)
            return _NONE if isinstance(node.operator, cst.Not) else value
        if isinstance(node, cst.Comparison):
            self._eval(node.left, env)
            self._union((target.comparator for target in node.comparisons), env)
            return _NONE
        if isinstance(node, cst.IfExp):
            self._eval(node.test, env)
            return self._eval(node.body, env) | self._eval(node.orelse, env)
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            return self._union((element.value for element in node.elements), env)
        if isinstance(node, cst.Dict):
            values = []
            for element in node.elements:
                values.append(element.value)
                if isinstance(element, cst.DictElement):
                    self._eval(element.key, env)
            return self._union(values, env)
        if isinstance(node, _COMPREHENSIONS):
            return self._comprehension(node, env)
        if isinstance(node, cst.NamedExpr):
            value = self._eval(node.value, env)
            if isinstance(node.target, cst.Name):
                env[node.target.value] = value
            return value
        if isinstance(node, (cst.Yield,)):
            value = self._eval(node.value, env) if isinstance(node.value, cst.BaseExpression) else _NONE
            if isinstance(node.value, cst.From):
                value = self._eval(node.value.item, env)
            self._escape(node, "yielded", value)
            return _NONE
        if isinstance(node, cst.Await):
            return self._eval(node.expression, env)
        if isinstance(node, cst.Lambda):
            self._captured(node, env)
            return _NONE
        if isinstance(node, (cst.StarredElement, cst.Arg)):
            return self._eval(node.value, env)
        if isinstance(node, (cst.FormattedString, cst.ConcatenatedString)):
            for child in self.analysis.subtree(node):
                if isinstance(child, cst.Call):
                    self._eval(child, env)
            return _NONE
        return _NONE

    def _name(self, name: cst.Name, env: dict) -> frozenset:
        if name.value in env:
            return env[name.value]
        if self.graphs.closure_variable(self.scope, name):
            return frozenset({Origin(OUTSIDE, name)})
        return _NONE

    def _attribute(self, attribute: cst.Attribute, env: dict) -> frozenset:
        if attribute.attr.value in BREAKING_ATTRIBUTES:
            return _NONE
        if is_name(attribute.value, "self", "cls"):
            if self.graphs.holds_graph(self.scope, attribute.attr.value):
                return frozenset({Origin(OUTSIDE, attribute)})
            return _NONE
        return self._eval(attribute.value, env)

    def _comprehension(self, node: cst.CSTNode, env: dict) -> frozenset:
        inner = dict(env)
        clause = node.for_in
        while clause is not None:
            inner = self._bind(clause.target, self._eval(clause.iter, inner), inner, node)
            for condition in clause.ifs:
                self._eval(condition.test, inner)
            clause = clause.inner_for_in
        if isinstance(node, cst.DictComp):
            self._eval(node.key, inner)
            return self._eval(node.value, inner)
        return self._eval(node.elt, inner)

    def _call(self, call: cst.Call, env: dict, dropped: bool) -> frozenset:
        func = call.func
        receiver = func.value if isinstance(func, cst.Attribute) else None
        receiver_value = self._eval(receiver, env) if receiver is not None and not is_name(receiver, "self", "cls") else _NONE
        bound = self._bound.setdefault(call, {})
        values = []
        for position, arg in enumerate(call.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword in OPTION_KEYWORDS:
                continue
            value = self._eval(arg.value, env)
            values.append(value)
            key = _UNPACKED if arg.star else keyword if keyword is not None else position
            bound[key] = bound.get(key, _NONE) | value
        arguments = frozenset().union(*values) if values else _NONE
        self._inputs[call] = self._inputs.get(call, _NONE) | arguments | receiver_value
        backward = backward_call(self.analysis, call)
        if backward is not None:
            root = self._eval(backward.root, env) if backward.root is not None else _NONE
            self._record(call, backward, root)
            if backward.create_graph not in (None, False):
                return arguments | receiver_value
            return _NONE
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        qualified = self.analysis.qualified_names(func)
        if qualified:
            library = library_result(qualified, arguments | receiver_value)
            if library is not None:
                return library
        # `policy.sample(s)` on a parameter may be a module's reparameterised sample, not Distribution.sample.
        module_method = method == "sample" and _base_name(receiver) in self._params if receiver is not None else False
        if receiver is not None and not module_method and self._is_value(receiver, env):
            # A method of a tensor, a distribution, a list, a batch built here.
            if method in BREAKING_METHODS:
                return _NONE
            if method in SHAPING_METHODS:
                return receiver_value
            if method in STORING_METHODS:
                owner = _base_name(receiver)
                if self._local(owner, env):
                    loop = self._element_loop(call)
                    if loop is not None:
                        arguments = frozenset(self._as_element(o, loop) for o in arguments)
                    env[owner] = env[owner] | arguments
                else:
                    self._escape(call, "stored outside the function", arguments)
                return _NONE
            if method in LOGGING_METHODS:
                return _NONE
            if arguments and all(o.kind == CALLER for o in receiver_value):
                # `tracker.update(loss)` on an object passed in: perhaps not a tensor, code that may keep it.
                self._handed[call] = self._handed.get(call, _NONE) | arguments
            return receiver_value | arguments
        if method in LOGGING_METHODS or (isinstance(func, cst.Name) and func.value in DATA_BUILTINS and func.value not in env):
            return _NONE
        if isinstance(func, cst.Name) and func.value in BUILTINS and func.value not in env and not self._defined_here(func):
            return arguments  # list(...), sum(...), max(...), zip(...)
        if method in STORING_METHODS and receiver is not None:
            self._escape(call, "stored outside the function", arguments)
            return _NONE
        definition = self.graphs.callee(self.scope, call)
        if definition is not None:
            return self._local_call(call, definition, arguments, dropped)
        if self._is_class(func):
            self._handed[call] = self._handed.get(call, _NONE) | arguments
            return arguments
        summary = self.graphs.outside_summary(call)
        if summary is not None:
            return self._summarised_call(call, summary, arguments, dropped)
        # A model, a module, or code this file cannot see: it computes a fresh graph from its inputs (and
        # theirs); what it does with them is unknown when its result is dropped.
        self._handed[call] = self._handed.get(call, _NONE) | arguments | receiver_value
        if dropped:
            self._escape(call, "passed to a call that may keep or backpropagate it", arguments | receiver_value)
        return frozenset({Origin(FORWARD, call)}) | arguments | receiver_value

    # -- lists with one graph per element -----------------------------------------------------------------
    @cached_property
    def _element_lists(self) -> dict[str, cst.Call]:
        """Local lists that get one element per iteration of a loop: ``log_probs.append(dist.log_prob(a))``
        is the only write to ``log_probs`` after its binding (outside the loop), directly in a loop's body.
        Their elements built in different iterations carry different graphs. Name -> the append."""
        appends: dict[str, list[cst.Call]] = {}
        spoilt: set[str] = set()
        for node in self.analysis.subtree(self.scope):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
                method = node.func.attr.value
                if method == "append":
                    appends.setdefault(node.func.value.value, []).append(node)
                elif method in STORING_METHODS or method in ("__setitem__", "__iadd__"):
                    spoilt.add(node.func.value.value)
            elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                spoilt.add(node.target.value)
            elif isinstance(node, (cst.Assign, cst.AnnAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    for element in _flatten(target):
                        if isinstance(element, cst.Subscript) and isinstance(element.value, cst.Name):
                            spoilt.add(element.value.value)
        lists = {}
        for name, calls in appends.items():
            if len(calls) != 1 or name in spoilt or name in self._params:
                continue
            [call] = calls
            loops = self._loops_around(call)
            receiver = call.func.value
            bindings = self.analysis.assignments_of(receiver) if isinstance(receiver, cst.Name) else []
            if not loops or not bindings or any(self.graphs.within(b.node, loops[0]) for b in bindings):
                continue
            if any(self.graphs.scope_of(b.node) is not self.scope for b in bindings):
                continue
            lists[name] = call
        return lists

    def _element_loop(self, call: cst.Call) -> cst.CSTNode | None:
        """The loop whose iterations each append one element with ``call``, when it is such an append."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name)):
            return None
        if self._element_lists.get(func.value.value) is not call:
            return None
        return self._loops_around(call)[0]

    def _as_element(self, origin: Origin, loop: cst.CSTNode) -> Origin:
        """A graph built in this iteration of ``loop`` is this element's own; one carried over from an
        earlier iteration (a hidden state) or built before the loop is shared by several elements."""
        if origin.kind == FORWARD and origin.generation == 0 and self.graphs.within(origin.node, loop):
            return replace(origin, element=loop)
        return origin

    def _picking_loop(self, subscript: cst.Subscript) -> cst.CSTNode | None:
        """The loop whose counter picks a different element of a one-graph-per-element list with
        ``subscript`` every iteration: ``log_probs[i]`` in ``for i in range(n)`` (or ``enumerate``), a loop
        apart from the one that appends. A loop around it must rebuild the list (an episode loop), or its
        next iteration would pick the same elements again."""
        if not isinstance(subscript.value, cst.Name) or len(subscript.slice) != 1:
            return None
        append = self._element_lists.get(subscript.value.value)
        index = subscript.slice[0].slice
        if append is None or not isinstance(index, cst.Index) or not isinstance(index.value, cst.Name):
            return None
        # The innermost loop around the subscript that binds the index, and no other binding of it in there.
        counters = [b.node for b in self.analysis.assignments_of(index.value)]
        loop = next((a for a in self._loops_around(subscript) if any(self._counter_loop(c) is a for c in counters)), None)
        if loop is None or any(self.graphs.within(c, loop.body) for c in counters):
            return None
        appending = self._loops_around(append)[0]
        if self.graphs.within(loop, appending) or self.graphs.within(appending, loop):
            return None
        bindings = self.analysis.assignments_of(subscript.value)
        for outer in self._loops_around(loop):
            if not self.graphs.within(appending, outer) or not all(self.graphs.within(b.node, outer) for b in bindings):
                return None
        return loop

    def _counter_loop(self, target: cst.CSTNode) -> cst.For | None:
        """The loop ``for <target> in range(...)`` or ``for <target>, _ in enumerate(...)`` that binds ``target``."""
        loop = next((a for a in self.analysis.ancestors(target) if isinstance(a, cst.For)), None)
        if loop is None or not isinstance(loop.iter, cst.Call) or not isinstance(loop.iter.func, cst.Name):
            return None
        if loop.iter.func.value == "range" and loop.target is target:
            return loop
        if loop.iter.func.value == "enumerate" and isinstance(loop.target, cst.Tuple) and loop.target.elements:
            return loop if loop.target.elements[0].value is target else None
        return None

    def _is_value(self, receiver: cst.BaseExpression, env: dict) -> bool:
        """Whether ``receiver`` holds a value of this function (a tensor, a list, a distribution) rather
        than a member object (``self.actor``), a global object or a module namespace."""
        if isinstance(receiver, (cst.Call, cst.Subscript, cst.BinaryOperation, cst.List, cst.Tuple, cst.Dict, cst.ListComp)):
            return True
        if isinstance(receiver, cst.Name):
            return receiver.value in env or self.graphs.closure_variable(self.scope, receiver)
        if isinstance(receiver, cst.Attribute):
            if is_name(receiver.value, "self", "cls"):
                return self.graphs.holds_graph(self.scope, receiver.attr.value)
            return self._is_value(receiver.value, env)
        return False

    def _defined_here(self, name: cst.Name) -> bool:
        return bool(self.analysis.assignments_of(name))

    def _is_class(self, func: cst.BaseExpression) -> bool:
        """``Transition(...)``, ``Actor(...)``, ``Tensor(...)`` with ``Tensor = torch.cuda.FloatTensor``: a
        class (or an alias of a tensor type) named by a bare name, not a model held in a variable."""
        if not isinstance(func, cst.Name):
            return False
        assignments = self.analysis.assignments_of(func)
        if not assignments:
            return func.value[:1].isupper()
        for assignment in assignments:
            if isinstance(assignment.node, cst.ClassDef):
                continue
            if isinstance(assignment.node, (cst.Import, cst.ImportFrom)):
                return func.value[:1].isupper()
            values = self.analysis.assigned_values(func)
            return bool(values) and all(self._names_tensor_type(value) for value in values)
        return True

    def _names_tensor_type(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.IfExp):
            return self._names_tensor_type(value.body) and self._names_tensor_type(value.orelse)
        return any(name.rsplit(".", 1)[-1] in TENSOR_CONSTRUCTORS for name in self.analysis.qualified_names(value))

    def _local(self, owner: str | None, env: dict) -> bool:
        """``owner`` is a variable of this function (not a parameter, ``self`` or a global)."""
        return owner is not None and owner in env and owner not in self._params and not self.graphs.is_global(self.scope, owner)

    def _local_call(self, call: cst.Call, definition: cst.FunctionDef, arguments: frozenset, dropped: bool) -> frozenset:
        summary = self.graphs.summary(definition)
        if summary is None:
            return frozenset({Origin(FORWARD, call)}) | arguments
        return self._summarised_call(call, summary, arguments, dropped)

    def _summarised_call(self, call: cst.Call, summary: FunctionSummary, arguments: frozenset, dropped: bool) -> frozenset:
        """A call of a project function whose body says what it does with the graphs it is given."""
        if summary.backpropagates_parameters and arguments:
            self._record(call, None, arguments)
        if summary.keeps_parameters:
            self._escape(call, "kept by the function it is passed to", arguments)
        result = set(summary.returned_outside)
        if summary.returns_fresh_graph:
            result.add(Origin(FORWARD, call))
        if summary.returns_parameters:
            result |= arguments
        return frozenset(result)

    def _record(self, call: cst.Call, backward: BackwardCall | None, origins: frozenset) -> None:
        event = self.backwards.get(call)
        if event is None:
            event = self.backwards[call] = BackwardEvent(backward, call)
        event.origins |= origins


class AutogradGraphs:
    """Graph flow for every function of one file, computed on demand."""

    def __init__(self, analysis: "ModuleAnalysis") -> None:
        self.analysis = analysis
        self._functions: dict[cst.CSTNode, FunctionGraphs] = {}
        self._summaries: dict[cst.FunctionDef, FunctionSummary | None] = {}
        self._in_progress: set[cst.CSTNode] = set()
        self._globals: dict[cst.CSTNode, set[str]] = {}
        self._within: dict[tuple[int, int], bool] = {}
        self._outside_summaries: dict[cst.Call, FunctionSummary | None] = {}
        self._returns_reused: dict[cst.CSTNode, bool | None] = {}
        self._data_parameters: dict[cst.CSTNode, tuple[frozenset[str], bool]] = {}

    def function(self, scope: cst.CSTNode) -> FunctionGraphs:
        flow = self._functions.get(scope)
        if flow is None:
            self._in_progress.add(scope)
            try:
                flow = self._functions[scope] = FunctionGraphs(self, scope)
            finally:
                self._in_progress.discard(scope)
        return flow

    def scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The function (or the module) whose body runs ``node``."""
        return next((a for a in self.analysis.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Lambda))), self.analysis.module)

    def summary(self, definition: cst.FunctionDef) -> FunctionSummary | None:
        if definition in self._summaries:
            return self._summaries[definition]
        if definition in self._in_progress or len(self._in_progress) > _SUMMARY_DEPTH:
            return None
        summary = self._summaries[definition] = self.function(definition).summary()
        return summary

    # -- the rest of the project -------------------------------------------------------------------------
    def outside_summary(self, call: cst.Call) -> FunctionSummary | None:
        """The summary of the project function in another module that ``call`` runs, as this file sees it:
        what it returns from outside this function is one origin of the call's."""
        if call in self._outside_summaries:
            return self._outside_summaries[call]
        outside = self.analysis.outside
        summary = outside.graph_summary(self.analysis, call) if outside is not None else None
        if summary is not None:
            summary = replace(summary, returned_outside=frozenset({Origin(OUTSIDE, call)}) if summary.returned_outside else _NONE)
        self._outside_summaries[call] = summary
        return summary

    def returns_reused(self, scope: cst.CSTNode) -> bool | None:
        """Whether a caller of the function ``scope`` may backpropagate again what it returns (or a graph it
        handed in): True when one may, False when every call of it in the project is known and none does,
        None when its callers are not all known (no project, no call, a use that is not a call, a method a
        framework may call)."""
        if scope not in self._returns_reused:
            callers = self.result_callers(scope)
            if callers is None:
                self._returns_reused[scope] = None
            else:
                self._returns_reused[scope] = any(_caller_uses_result(analysis, call) for analysis, call in callers)
        return self._returns_reused[scope]

    def data_parameters(self, scope: cst.CSTNode) -> tuple[frozenset[str], bool]:
        """The parameters of the function ``scope`` that carry no graph into it, and whether that is proven.

        Where every call of the function in the project is known, each call decides: a parameter is data when
        every call hands it a value that carries no graph in the caller (a loader's item, a constant, a
        tensor built or detached there) or leaves it to its default (proven). Where the calls are not all
        known, a parameter that the function only hands to calls as an input (``net(x)``, ``criterion(out,
        y)``, moved first with ``x = x.to(device)``) is taken for data: a guess, since a caller could pass a
        tensor with a graph.
        """
        if scope in self._data_parameters:
            return self._data_parameters[scope]
        answer: tuple[frozenset[str], bool] = (frozenset(), False)
        if isinstance(scope, cst.FunctionDef):
            names = [p.name.value for p in _parameters(scope.params) if p.name.value not in ("self", "cls")]
            callers = self.result_callers(scope)
            if callers is not None:
                answer = frozenset(n for n in names if all(_hands_data(a, c, scope, n) for a, c in callers)), True
            else:
                answer = frozenset(n for n in names if self._only_an_input(scope, n)), False
        self._data_parameters[scope] = answer
        return answer

    def _only_an_input(self, function: cst.FunctionDef, name: str) -> bool:
        """Every use of the parameter ``name`` in ``function`` hands it to a call as an input (not to a backward
        pass, a store or a logger), or rebinds it to itself moved or reshaped (``x = x.to(device)``)."""
        for node in self.analysis.nodes_of(cst.Name):
            if node.value != name or not self.within(node, function):
                continue
            if self.scope_of(node) is not function:
                return False  # captured by a nested function or lambda, which may do anything with it
            parent = self.analysis.parent(node)
            if isinstance(parent, cst.Param) or isinstance(parent, cst.Attribute) and parent.attr is node:
                continue
            if isinstance(parent, cst.Arg):
                if parent.keyword is node:
                    continue
                call = self.analysis.parent(parent)
                if parent.value is node and not parent.star and isinstance(call, cst.Call) and _an_input(self.analysis, call):
                    continue
                return False
            if isinstance(parent, cst.AssignTarget) or _rebinds_itself(self.analysis, node):
                continue
            return False
        return True

    def result_callers(self, scope: cst.CSTNode) -> "list[tuple[ModuleAnalysis, cst.Call]] | None":
        """Every call of the function ``scope`` in the project, or None when some may be missed."""
        outside = self.analysis.outside
        if outside is None or not isinstance(scope, cst.FunctionDef) or self.analysis.enclosing_function(scope) is not None:
            return None
        if scope.name.value.startswith("__"):
            return None  # called by the language (``__call__``, ``__iter__``), not by name
        if any(dotted_name(d.decorator) not in ("staticmethod", "classmethod") for d in scope.decorators):
            return None  # a property, a registered callback, a wrapper: called where no call by name shows
        here = self._callers_here(scope)
        if here is None:
            return None
        elsewhere = outside.graph_callers(self.analysis, scope)
        if elsewhere is None:
            return None
        callers = [(self.analysis, call) for call in here] + list(elsewhere)
        return callers or None

    def _callers_here(self, definition: cst.FunctionDef) -> list[cst.Call] | None:
        name = definition.name.value
        if referenced_besides_calls(self.analysis, name):
            return None
        method = self.owner(definition) is not None
        calls = []
        for site in self.analysis.index.sites(name):
            call = site.call
            callee = self.callee(self.scope_of(call), call)
            if callee is definition:
                calls.append(call)
            elif method and isinstance(call.func, cst.Attribute):
                return None  # ``self.step()`` in a base class, ``agent.step()``: may dispatch to this method
        return calls

    # -- names, members, callees -------------------------------------------------------------------------
    def callee(self, scope: cst.CSTNode, call: cst.Call) -> cst.FunctionDef | None:
        """The same-file function or method ``call`` runs: ``helper(...)``, ``self.method(...)``."""
        func = call.func
        if isinstance(func, cst.Name):
            for assignment in self.analysis.assignments_of(func):
                if isinstance(assignment.node, cst.FunctionDef):
                    return assignment.node
            return None
        if not isinstance(func, cst.Attribute):
            return None
        if is_name(func.value, "self", "cls") and isinstance(scope, cst.FunctionDef):
            cls = self.owner(scope)
            return self._method(cls, func.attr.value) if cls is not None else None
        instance_of = self._instance_class(scope, func.value)
        return self._method(instance_of, func.attr.value) if instance_of is not None else None

    def _instance_class(self, scope: cst.CSTNode, receiver: cst.BaseExpression) -> cst.ClassDef | None:
        """The same-file class whose instance ``receiver`` holds: ``self.buffer = ReplayBuffer(...)``,
        ``memory = Memory()``."""
        if isinstance(receiver, cst.Attribute) and is_name(receiver.value, "self") and isinstance(scope, cst.FunctionDef):
            cls = self.owner(scope)
            values = self.analysis.attribute_values(cls, receiver.attr.value) if cls is not None else []
        elif isinstance(receiver, cst.Name):
            values = self.analysis.assigned_values(receiver)
        else:
            return None
        classes = {self.analysis.local_classes.get(terminal_name(v.func) or "") for v in values if isinstance(v, cst.Call)}
        if len(classes) == 1 and len(values) == 1:
            return classes.pop()
        return None

    def _method(self, cls: cst.ClassDef, name: str, depth: int = 0) -> cst.FunctionDef | None:
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
                return statement
        if depth > 4:
            return None
        for base in cls.bases:
            base_name = dotted_name(base.value)
            owner = self.analysis.local_classes.get(base_name) if base_name else None
            if owner is not None and owner is not cls:
                found = self._method(owner, name, depth + 1)
                if found is not None:
                    return found
        return None

    def holds_graph(self, scope: cst.CSTNode, attribute: str) -> bool:
        """Whether ``self.<attribute>`` may hold a tensor computed by some method of the class: a method
        other than the constructor stores a computed value there (not a literal, a construction or a
        detached copy)."""
        if not isinstance(scope, cst.FunctionDef):
            return False
        cls = self.owner(scope)
        if cls is None:
            return False
        return attribute in self._graph_attributes(cls)

    def owner(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        """The class ``function`` is a method of (or is nested in a method of)."""
        return self.analysis.enclosing_class(function) or self.analysis.method_owner(function)

    @cached_property
    def _graph_attribute_index(self) -> dict[cst.ClassDef, frozenset[str]]:
        index: dict[cst.ClassDef, set[str]] = {}
        for node in self.analysis.nodes_of(cst.Assign, cst.AnnAssign, cst.AugAssign):
            value = node.value
            if value is None:
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                for element in _flatten(target):
                    if not (isinstance(element, (cst.Attribute, cst.Subscript)) and _base_name(element) in ("self", "cls")):
                        continue
                    member = element if isinstance(element, cst.Attribute) else _member_of(element)
                    if member is None:
                        continue
                    function = self.analysis.enclosing_function(node)
                    if function is None or function.name.value in SETUP_METHODS:
                        continue
                    cls = self.owner(function)
                    if cls is not None and may_carry_graph(value):
                        index.setdefault(cls, set()).add(member.attr.value)
        return {cls: frozenset(names) for cls, names in index.items()}

    def _graph_attributes(self, cls: cst.ClassDef) -> frozenset[str]:
        found = set(self._graph_attribute_index.get(cls, ()))
        for base in cls.bases:
            name = dotted_name(base.value)
            owner = self.analysis.local_classes.get(name) if name else None
            if owner is not None and owner is not cls:
                found |= self._graph_attribute_index.get(owner, frozenset())
        return frozenset(found)

    def closure_variable(self, scope: cst.CSTNode, name: cst.Name) -> bool:
        """``name`` (read in ``scope``) is bound in a function around ``scope``: a closure's free variable."""
        for assignment in self.analysis.assignments_of(name):
            owner = self.scope_of(assignment.node)
            if owner is not scope and isinstance(owner, (cst.FunctionDef, cst.Lambda)) and self.within(scope, owner):
                return True
        return False

    def grad_free_function(self, function: cst.FunctionDef) -> bool:
        """``@torch.no_grad()`` / ``@torch.inference_mode()`` on ``function``."""
        return any(self.analysis.call_resolves_to(decorator.decorator, GRAD_FREE_CONTEXTS) for decorator in function.decorators)

    def note_global(self, scope: cst.CSTNode, name: str) -> None:
        self._globals.setdefault(scope, set()).add(name)

    def is_global(self, scope: cst.CSTNode, name: str) -> bool:
        return name in self._globals.get(scope, ())

    # -- positions -----------------------------------------------------------------------------------------
    @cached_property
    def _order(self) -> dict[cst.CSTNode, int]:
        return {node: number for number, node in enumerate(self.analysis.all_nodes)}

    def order(self, node: cst.CSTNode) -> int:
        return self._order.get(node, -1)

    def within(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        key = (id(node), id(container))
        found = self._within.get(key)
        if found is None:
            found = self._within[key] = node is container or any(a is container for a in self.analysis.ancestors(node))
        return found

    def exclusive(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """The two nodes sit in different branches of one ``if``: one pass runs at most one of them."""
        branch_of_first = {}
        child = first
        for ancestor in self.analysis.ancestors(first):
            if isinstance(ancestor, cst.If):
                branch_of_first[ancestor] = child is ancestor.body
            child = ancestor
        child = second
        for ancestor in self.analysis.ancestors(second):
            if isinstance(ancestor, cst.If) and ancestor in branch_of_first:
                return branch_of_first[ancestor] != (child is ancestor.body)
            child = ancestor
        return False


def _caller_uses_result(analysis: "ModuleAnalysis", call: cst.Call) -> bool:
    graphs = analysis.autograd_graphs
    scope = graphs.scope_of(call)
    if isinstance(scope, cst.Lambda):
        return True  # ``closure = lambda: loss_fn(x)``: the lambda returns it to whoever calls the lambda
    return graphs.function(scope).uses_result(call)


def _hands_data(analysis: "ModuleAnalysis", call: cst.Call, function: cst.FunctionDef, name: str) -> bool:
    """Whether ``call`` of ``function`` binds a value without a graph (in the caller's flow) to ``name``."""
    graphs = analysis.autograd_graphs
    scope = graphs.scope_of(call)
    if isinstance(scope, cst.Lambda):
        return False
    positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if positional and positional[0] in ("self", "cls") and isinstance(call.func, cst.Attribute):
        positional = positional[1:]  # ``self.update(batch)``: the receiver is bound to ``self``
    position = positional.index(name) if name in positional else None
    origins = graphs.function(scope).argument(call, position, name)
    return origins is not None and all(o.kind == ITEM for o in origins)


def _an_input(analysis: "ModuleAnalysis", call: cst.Call) -> bool:
    """A call that takes a tensor as an input: not a backward pass, a store into a container or a logger."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
    return backward_call(analysis, call) is None and method not in STORING_METHODS and method not in LOGGING_METHODS


def _rebinds_itself(analysis: "ModuleAnalysis", name: cst.Name) -> bool:
    """``x = x.to(device)``, ``x = x.float()``: the parameter moved or reshaped, under its own name."""
    attribute = analysis.parent(name)
    if not (isinstance(attribute, cst.Attribute) and attribute.value is name and attribute.attr.value in SHAPING_METHODS):
        return False
    call = analysis.parent(attribute)
    assign = analysis.parent(call) if isinstance(call, cst.Call) else None
    return (
        isinstance(assign, cst.Assign)
        and assign.value is call
        and len(assign.targets) == 1
        and is_name(assign.targets[0].target, name.value)
    )


def referenced_besides_calls(analysis: "ModuleAnalysis", name: str) -> bool:
    """Whether the module uses ``name`` other than by calling it (or defining, importing or passing it as a
    keyword): ``closure=self.compute_loss``, ``losses = {"l1": l1_loss}``, ``fn = helper``. Such a use may
    call it where no call shows."""
    for node in analysis.nodes_of(cst.Name):
        if node.value != name:
            continue
        parent = analysis.parent(node)
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.Param)) or isinstance(parent, cst.Arg) and parent.keyword is node:
            continue
        if isinstance(parent, cst.Call) and parent.func is node:
            continue
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            holder = analysis.parent(parent)
            if isinstance(holder, cst.Call) and holder.func is parent:
                continue
        if any(isinstance(a, (cst.Import, cst.ImportFrom)) for a in analysis.ancestors(node)):
            continue
        return True
    return False


def _join(first: dict, second: dict) -> dict:
    if first is second:
        return first
    joined = dict(first)
    for name, value in second.items():
        joined[name] = joined[name] | value if name in joined else value
    return joined


def _parameters(params: cst.Parameters) -> Iterator[cst.Param]:
    yield from params.posonly_params
    yield from params.params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    yield from params.kwonly_params
    if params.star_kwarg is not None:
        yield params.star_kwarg


def _base_name(expression: cst.BaseExpression) -> str | None:
    while isinstance(expression, (cst.Attribute, cst.Subscript)):
        expression = expression.value
    return expression.value if isinstance(expression, cst.Name) else None


def _member_of(subscript: cst.Subscript) -> cst.Attribute | None:
    value = subscript.value
    while isinstance(value, cst.Subscript):
        value = value.value
    return value if isinstance(value, cst.Attribute) else None


def _flatten(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _flatten(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _flatten(target.value)
    else:
        yield target
