"""LibCST's scope analysis of a module, in one walk of the analysis index instead of four LibCST walks.

``MetadataWrapper.resolve(ScopeProvider)`` resolves ``ExpressionContextProvider`` first, then ``ScopeProvider``.
Both are batchable providers whose whole work is one walk of their own, started from ``visit_Module``; the
batched traversal that called it then walks every node again with nothing to do. Each LibCST walk rebuilds every
node it passes (about a parse's cost). Here:

- the expression contexts (store, load, del) are read from the analysis index's children, which the file's
  analyses have walked already, by the rules of LibCST's ``ExpressionContextVisitor``;
- ``ScopeProvider.visit_Module`` is called directly, with those contexts handed over through ``metadata`` as a
  wrapper would, and its answers are read back through ``get_metadata``: the same scopes, from LibCST's own code;
- its ``ScopeVisitor`` walks the module through the index's children, in the order LibCST's walk takes them,
  without rebuilding a node: half the cost of the analysis. A LibCST walk is ``CSTNode.visit``, which the visitor
  also calls itself to walk a function's parts in their scopes, so while the analysis runs that method takes the
  index's children for a node the index holds and the scope visitor walking it; any other node (a string
  annotation the visitor parses) and any other visitor (another thread's) get LibCST's own walk.

Whitespace and punctuation, which the index leaves out, are given no scope. ``tests/test_scopes.py`` compares
the rest with what a wrapper resolves, node for node.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterable, Iterator, Mapping

import libcst as cst
from libcst.metadata import Access, BaseAssignment, ExpressionContext, ExpressionContextProvider, ScopeProvider
from libcst.metadata.base_provider import BaseMetadataProvider
from libcst.metadata.scope_provider import _ASSIGNMENT_LIKE_NODES, ScopeVisitor

from gemlint.frontends.counted_swap import CountedSwap

STORE, LOAD, DEL = ExpressionContext.STORE, ExpressionContext.LOAD, ExpressionContext.DEL

_Children = Mapping[cst.CSTNode, list[cst.CSTNode]]
_Pending = Iterable[tuple[cst.CSTNode, ExpressionContext]]


def reaches(access: Access, assignment: BaseAssignment) -> bool:
    """``access`` may read what ``assignment`` binds. LibCST also lists among an outer binding's references a name
    read in a function that binds the name itself (``out = model(x)`` at module level, beside ``out = self.bn(out)``
    in a method): a name its own scope binds is that scope's."""
    if access.scope is assignment.scope:
        return True
    return not any(other.scope is access.scope for other in access.scope.assignments[assignment.name])


def references_of(assignment: BaseAssignment) -> list[Access]:
    """The reads of what ``assignment`` binds (:func:`reaches`), not every access LibCST lists for it."""
    return [access for access in assignment.references if reaches(access, assignment)]


class ProvidedMetadata:
    """``node -> value`` as computed by one provider: the read side of the mapping a wrapper would return."""

    def __init__(self, provider: BaseMetadataProvider) -> None:
        self._provider = provider
        self._key = type(provider)

    def get(self, node: cst.CSTNode, default: object = None) -> object:
        return self._provider.get_metadata(self._key, node, default)

    def __getitem__(self, node: cst.CSTNode) -> object:
        return self._provider.get_metadata(self._key, node)


def scopes_of(module: cst.Module, children: _Children, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> ProvidedMetadata:
    """What ``MetadataWrapper(module).resolve(ScopeProvider)`` maps each node but trivia to (its ``Scope``), with
    ``get``.

    ``children`` and ``parents``: each node's child nodes in source order, and each node's parent, as the index
    holds them (trivia left out: no name is trivia).
    """
    scopes = ScopeProvider()
    scopes.metadata = {ExpressionContextProvider: expression_contexts(module, children)}
    with _walking_index(module, children, parents):
        scopes.visit_Module(module)
    return ProvidedMetadata(scopes)


_LIBCST_VISIT = cst.CSTNode.visit
# The index the scope visitor of this thread walks, while it does.
_WALKED: ContextVar[tuple[cst.Module, _Children, Mapping[cst.CSTNode, cst.CSTNode]] | None] = ContextVar("gemlint_walked_index", default=None)


def _visit(node: cst.CSTNode, visitor: cst.CSTVisitor):
    """``CSTNode.visit`` while an analysis runs: a scope visitor walking an indexed node takes its children from
    the index; anything else walks as LibCST does."""
    walked = _WALKED.get()
    if walked is None or type(visitor) is not ScopeVisitor:
        return _LIBCST_VISIT(node, visitor)
    module, children, parents = walked
    below = children.get(node)
    if below is None and node not in parents and node is not module:  # (an empty module has no children)
        return _LIBCST_VISIT(node, visitor)  # not in the index: a string annotation the visitor parsed
    if _HOOKS_REPLICATED:
        _walk(visitor, node, below, children)
        return node
    if visitor.on_visit(node) and below:
        for child in below:
            child.visit(visitor)
    visitor.on_leave(node)
    return node


def _walk(visitor: ScopeVisitor, node: cst.CSTNode, below: list[cst.CSTNode] | None, children: _Children) -> None:
    """``visitor.on_visit``, the children, ``visitor.on_leave``, with each node type's hooks looked up once: per
    node, LibCST formats the hooks' names and asks ``isinstance`` of eighteen node classes, each an ABC (half the
    cost of the analysis)."""
    kind = type(node)
    hooks = _HOOKS.get(kind)
    if hooks is None:
        hooks = _HOOKS[kind] = _hooks_of(kind)
    visit, leave, assigns = hooks
    if (visit is None or visit(visitor, node) is not False) and below:
        for child in below:
            _walk(visitor, child, children.get(child), children)
    visitor.provider.set_metadata(node, visitor.scope)  # ScopeVisitor.on_leave from here
    if assigns:
        visitor.scope._assignment_count += 1
    if leave is not None:
        leave(visitor, node)


def _hooks_of(kind: type) -> tuple[Callable | None, Callable | None, bool]:
    name = kind.__name__
    return getattr(ScopeVisitor, f"visit_{name}", None), getattr(ScopeVisitor, f"leave_{name}", None), issubclass(kind, _ASSIGNMENT_LIKE_NODES)


_HOOKS: dict[type, tuple[Callable | None, Callable | None, bool]] = {}
# :func:`_walk` repeats ``ScopeVisitor.on_leave`` (and CSTVisitor's ``on_visit``): only while LibCST's are the ones
# it repeats, which the names ``on_leave`` uses tell (a LibCST that changes them is walked through its own hooks).
_HOOKS_REPLICATED = ScopeVisitor.on_visit is cst.CSTVisitor.on_visit and ScopeVisitor.on_leave.__code__.co_names == (
    "provider", "set_metadata", "scope", "isinstance", "_ASSIGNMENT_LIKE_NODES", "_assignment_count", "super", "on_leave",
)


@contextmanager
def _walking_index(module: cst.Module, children: _Children, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> Iterator[None]:
    token = _WALKED.set((module, children, parents))
    try:
        with _INDEX_WALK.installed():
            yield
    finally:
        _WALKED.reset(token)


_INDEX_WALK = CountedSwap(cst.CSTNode, "visit", _visit)


def expression_contexts(module: cst.Module, children: _Children) -> dict[cst.CSTNode, ExpressionContext]:
    """What ``ExpressionContextProvider`` maps each name, attribute, subscript, tuple, list and starred element to."""
    found: dict[cst.CSTNode, ExpressionContext] = {}
    stack: list[tuple[cst.CSTNode, ExpressionContext]] = [(module, LOAD)]
    while stack:
        node, context = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            found[node] = context
            continue
        if kind in _RECORDED:
            found[node] = context
        special = _SPECIAL.get(kind)
        if special is not None:
            stack.extend(special(node, context))
        elif below := children.get(node):
            stack.extend((child, context) for child in below)
    return found


# Tuples, lists and starred elements take the context they are in and pass it on; attributes and subscripts
# take it too, but what they hold is loaded.
_RECORDED = frozenset({cst.Tuple, cst.List, cst.StarredElement, cst.Attribute, cst.Subscript})


def _assign(node: cst.Assign, context: ExpressionContext) -> _Pending:
    return [*((target, STORE) for target in node.targets), (node.value, context)]


def _annotated(node: cst.AnnAssign, context: ExpressionContext) -> _Pending:
    return [(node.target, STORE), (node.annotation, context), *(((node.value, context),) if node.value else ())]


def _target_then_value(node: cst.AugAssign | cst.NamedExpr, context: ExpressionContext) -> _Pending:
    return [(node.target, STORE), (node.value, context)]


def _as_name(node: cst.AsName, context: ExpressionContext) -> _Pending:
    return [(node.name, STORE)]


def _comp_for(node: cst.CompFor, context: ExpressionContext) -> _Pending:
    inner = ((node.inner_for_in, context),) if node.inner_for_in else ()
    return [(node.target, STORE), (node.iter, context), *((test, context) for test in node.ifs), *inner]


def _for(node: cst.For, context: ExpressionContext) -> _Pending:
    orelse = ((node.orelse, context),) if node.orelse else ()
    return [(node.target, STORE), (node.iter, context), (node.body, context), *orelse]


def _del(node: cst.Del, context: ExpressionContext) -> _Pending:
    return [(node.target, DEL)]


def _attribute(node: cst.Attribute, context: ExpressionContext) -> _Pending:
    return [(node.value, LOAD)]  # the attribute's own name has no context


def _subscript(node: cst.Subscript, context: ExpressionContext) -> _Pending:
    return [(node.value, LOAD), *((element, LOAD) for element in node.slice)]


def _class(node: cst.ClassDef, context: ExpressionContext) -> _Pending:
    # type parameters are not visited: their names have no context
    return [
        (node.name, STORE), (node.body, context), *((arg, context) for arg in (*node.bases, *node.keywords)),
        *((decorator, context) for decorator in node.decorators),
    ]


def _function(node: cst.FunctionDef, context: ExpressionContext) -> _Pending:
    returns = ((node.returns, context),) if node.returns else ()
    return [
        (node.name, STORE), (node.params, context), (node.body, context),
        *((decorator, context) for decorator in node.decorators), *returns,
    ]


def _param(node: cst.Param, context: ExpressionContext) -> _Pending:
    rest = tuple((part, context) for part in (node.annotation, node.default) if part is not None)
    return [(node.name, STORE), *rest]


_SPECIAL: dict[type, Callable[[cst.CSTNode, ExpressionContext], _Pending]] = {
    cst.Assign: _assign,
    cst.AnnAssign: _annotated,
    cst.AugAssign: _target_then_value,
    cst.NamedExpr: _target_then_value,
    cst.AsName: _as_name,
    cst.CompFor: _comp_for,
    cst.For: _for,
    cst.Del: _del,
    cst.Attribute: _attribute,
    cst.Subscript: _subscript,
    cst.ClassDef: _class,
    cst.FunctionDef: _function,
    cst.Param: _param,
}
