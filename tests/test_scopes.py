"""The scopes and expression contexts computed from the index are the ones a MetadataWrapper resolves, node for node."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import ExpressionContextProvider, GlobalScope, MetadataWrapper, ScopeProvider

from fixture_harness import parsable_python_fixtures
from gemlint.analysis.index import build_index
from gemlint.analysis.scopes import expression_contexts, references_of, scopes_of

# Every kind of scope and binding LibCST tells apart: class bodies, comprehensions, lambdas, global and nonlocal,
# walrus, star imports, annotations as strings, match captures, del, and a name used before it is bound.
SHAPES = [
    "import torch\nfrom torch import nn as n\nfrom os import *\nx = 1\ndef f(a, *b, c=x, **d):\n    global x\n    x = a\n    return n, b, c, d\n",
    "class C:\n    y = 1\n    z = [y for _ in range(3)]\n    def m(self, y=y):\n        return y, self, C\n",
    "def outer():\n    v = 1\n    def inner():\n        nonlocal v\n        v += 1\n        return (w := v)\n    return inner, lambda q, v=v: q + v\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from m import T\ndef g(t: 'T') -> 'list[T]':\n    del t\n    return print(undefined)\n",
    "match value:\n    case {'k': a, **rest}:\n        pass\n    case [b, *others] if b:\n        pass\n    case str() as text:\n        print(text)\n",
    "async def h(xs):\n    async with ctx() as c, other() as (d, e):\n        async for i in xs:\n            yield {k: v async for k, v in c}, d, e, i\n",
    "def f[T](x: T) -> T:\n    return x\nclass C[T](Base[T], metaclass=M):\n    pass\ntype Alias[K] = dict[K, int]\n",
    "@deco(k=v)\ndef g(*, a: int = 1, **kw) -> None:\n    first, *rest = a, b = kw\n    a += 1\n    del a, rest[0], kw.x\n    print(f'{a!r:>{width}}', *rest, key=lambda e: e)\n    return [y for x in xs if (y := x) for z in x]\n",
    "with open(p) as (a, b), lock:\n    pass\ntry:\n    pass\nexcept (E, F) as err:\n    raise err from None\nimport a.b.c\nimport d as e\nfrom . import f\n",
    "try:\n    import ujson as json\nexcept ImportError as error:\n    import json\nfor i, (j, k) in enumerate([]):\n    print(json, i, j, k, error)\n",
    "# a module of comments only\n\n",
    "def f(a=g(), /, b=h(), *args, c: 'C' = i(), **kw):\n    return [x async for x in a if x]\n",
]


def _shape(scope, ids: dict[int, int]) -> tuple:
    """What a rule can read of a scope: its kind, owner, parent and, per name, the assignments and their uses."""
    if scope is None:
        return ("none",)
    assignments = tuple(sorted(
        (
            assignment.name,
            type(assignment).__name__,
            ids.get(id(getattr(assignment, "node", None)), -1),
            tuple(sorted(ids.get(id(access.node), -1) for access in assignment.references)),
        )
        for assignment in scope.assignments
    ))
    accesses = tuple(sorted(
        (ids.get(id(access.node), -1), tuple(sorted(ids.get(id(getattr(a, "node", None)), -1) for a in access.referents)))
        for access in scope.accesses
    ))
    parent = type(scope.parent).__name__, ids.get(id(getattr(scope.parent, "node", None)), -1)
    return (type(scope).__name__, ids.get(id(getattr(scope, "node", None)), -1), parent, assignments, accesses)


def _numbered(module: cst.Module) -> dict[int, int]:
    """Every node of ``module`` by identity -> its number in a LibCST walk (the same nodes in both answers)."""
    numbers: dict[int, int] = {}

    class Numbering(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            numbers[id(node)] = len(numbers)
            return True

    module.visit(Numbering())
    return numbers


def _compare(source: str) -> int:
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    expected = wrapper.resolve(ScopeProvider)
    index = build_index(module)
    assert expression_contexts(module, index.children) == dict(wrapper.resolve(ExpressionContextProvider))
    ours = scopes_of(module, index.children, index.parents)
    ids = _numbered(module)
    indexed = {id(module), *(id(node) for node in index.nodes)}
    shapes: dict[int, tuple] = {}
    for node, scope in expected.items():
        if id(node) not in ids:
            continue  # parsed from a string annotation: each analysis parses the string anew
        mine = ours.get(node)
        if id(node) not in indexed:
            assert mine is None, type(node).__name__  # whitespace and punctuation: the walk passes them by
            continue
        assert (mine is None) == (scope is None), type(node).__name__
        if scope is None:
            continue
        key = id(scope)
        if key not in shapes:
            shapes[key] = _shape(scope, ids)
        assert _shape(mine, ids) == shapes[key], type(node).__name__
        assert ours[node] is mine
    return len(expected)


@pytest.mark.parametrize("source", SHAPES, ids=range(len(SHAPES)))
def test_the_scopes_of_awkward_shapes_are_libcsts(source: str) -> None:
    assert _compare(source) > 0


def test_the_scopes_of_every_fixture_are_libcsts() -> None:
    compared = sum(_compare(source) for source in parsable_python_fixtures())
    assert compared > 10_000


def test_the_installed_libcst_is_walked_through_the_hooks_looked_up_once() -> None:
    """The comparisons above check the fast walk only while it is taken: a LibCST whose scope visitor leaves nodes
    differently falls back to its own hooks, and this says so."""
    from gemlint.analysis import scopes

    assert scopes._HOOKS_REPLICATED


def test_the_walk_through_libcsts_own_hooks_gives_the_same_scopes(monkeypatch: pytest.MonkeyPatch) -> None:
    from gemlint.analysis import scopes

    monkeypatch.setattr(scopes, "_HOOKS_REPLICATED", False)
    assert sum(_compare(source) for source in SHAPES) > 100


def test_a_node_outside_the_module_has_no_scope() -> None:
    module = cst.parse_module("x = 1\n")
    index = build_index(module)
    ours = scopes_of(module, index.children, index.parents)
    stranger = cst.Name("x")
    assert ours.get(stranger) is None
    assert ours.get(stranger, "absent") == "absent"
    with pytest.raises(KeyError):
        ours[stranger]


def test_libcsts_own_walk_is_back_after_the_analysis_and_other_visitors_keep_it() -> None:
    from gemlint.analysis import scopes

    module = cst.parse_module("def f(a: 'A'):\n    return a\n")
    index = build_index(module)
    seen: list[str] = []

    class Other(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            seen.append(node.value)

    class Failing(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            module.visit(Other())  # another visitor while the analysis walks: LibCST's walk, every name
            raise RuntimeError("stop")

    original = cst.CSTNode.visit
    with pytest.raises(RuntimeError), scopes._walking_index(module, index.children, index.parents):
        assert cst.CSTNode.visit is not original
        module.visit(Failing())
    assert cst.CSTNode.visit is original
    assert seen == ["f", "a", "a"]


def _children_in_libcsts_order(source: str) -> int:
    from gemlint.analysis.index import TRIVIA

    module = cst.parse_module(source)
    index = build_index(module)
    for node in (module, *index.nodes):
        theirs = [child for child in node.children if type(child) not in TRIVIA]
        assert [id(child) for child in index.children.get(node, [])] == [id(child) for child in theirs], type(node).__name__
    return len(index.nodes)


@pytest.mark.parametrize("source", SHAPES, ids=range(len(SHAPES)))
def test_the_index_holds_the_children_of_awkward_shapes_in_the_order_libcst_walks_them(source: str) -> None:
    # The scope visitor numbers assignments and accesses in the order it meets them.
    _children_in_libcsts_order(source)


def test_the_index_holds_the_children_of_every_fixture_in_the_order_libcst_walks_them() -> None:
    assert sum(_children_in_libcsts_order(source) for source in parsable_python_fixtures()) > 10_000


def test_the_references_of_a_binding_leave_out_reads_of_a_function_that_binds_the_name_itself() -> None:
    """LibCST lists among a module-level binding's references a name read in a function on the right of its own
    rebinding (`out = self.bn(out)`); `references_of` keeps the reads that may see the binding."""
    source = "def f(x):\n    out = x\n    out = out + 1\n    return out\n\ndef g():\n    return out\n\nout = f(1)\nprint(len(out))\n"
    scopes = MetadataWrapper(cst.parse_module(source)).resolve(ScopeProvider)
    module_scope = next(scope for scope in scopes.values() if isinstance(scope, GlobalScope))
    (binding,) = module_scope.assignments["out"]
    in_f = [access for access in binding.references if access.scope is not module_scope and access.scope.name == "f"]
    assert in_f, "the LibCST behaviour this guards against"
    kept = references_of(binding)
    assert {access.node for access in kept} == {access.node for access in binding.references} - {access.node for access in in_f}
    assert {access.scope.name for access in kept if access.scope is not module_scope} == {"g"}
