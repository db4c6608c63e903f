"""Each call's start read off the ``ast`` tree is where LibCST's positions put it: the same line, and on each line
the same order."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from fixture_harness import parsable_python_fixtures
from gemlint.analysis.call_starts import call_starts
from gemlint.analysis.index import build_index

SHAPES = {
    "nested and chained": "f(g(x), h(y))(z)\na.b(c).d(e)(f)\n",
    "decorators before the def": "@deco(arg())\n@other\ndef f(x=default()):\n    return inner(x)\n",
    "a call spread over lines": "result = call(\n    first(),\n    second(\n        third()),\n)\n",
    "keywords and stars interleaved": "f(a(), *b(), c=d(), *e(), **g())\n",
    "f-strings": "x = f'{a()} and {b(c())!r:>{w()}}'\n",
    "comprehensions and lambdas": "y = [f(v) for v in g() if h(v)]\nz = lambda q: k(q)\nw = {m(): n() for _ in o()}\n",
    "conditional expression": "v = a() if b() else c()\n",
    "class bases and keywords": "class C(base(), metaclass=meta()):\n    x = attr()\n",
    "parenthesized callee": "(get())(arg)\n(\n    obj.method\n)(value())\n",
    "non-ascii before a call": "s = 'é'; t = f()\n",
}


def _libcst_starts(source: str) -> tuple[list[cst.Call], dict[cst.Call, tuple[int, int]]]:
    module = cst.parse_module(source)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    calls = [node for node in build_index(module).nodes if isinstance(node, cst.Call)]
    return calls, {call: (positions[call].start.line, positions[call].start.column) for call in calls}


def _assert_paired(source: str) -> int:
    calls, expected = _libcst_starts(source)
    starts = call_starts(ast.parse(source), calls)
    assert starts is not None
    assert {call: line for call, (line, _) in starts.items()} == {call: line for call, (line, _) in expected.items()}
    for line in {line for line, _ in expected.values()}:
        on_line = [call for call in calls if expected[call][0] == line]
        assert sorted(on_line, key=lambda call: starts[call][1]) == sorted(on_line, key=lambda call: expected[call][1])
    return len(calls)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_calls_in_every_shape_start_where_libcst_puts_them(name):
    assert _assert_paired(SHAPES[name]) > 0


def test_calls_of_every_fixture_start_where_libcst_puts_them():
    assert sum(_assert_paired(source) for source in parsable_python_fixtures()) > 1000


def test_trees_whose_calls_do_not_pair_give_no_answer():
    calls, _ = _libcst_starts("f(x)\ng(y)\n")
    assert call_starts(ast.parse("f(x)\n"), calls) is None  # a call missing
    assert call_starts(ast.parse("f(x)\nh(y)\n"), calls) is None  # a call of another name


def test_a_call_the_index_names_is_found_without_ranging_its_statement():
    from gemlint.project.model import _call_at
    from gemlint.project.summary import CallSite
    from test_models import analyse

    body = "".join(f"    def m{n}(self, x):\n        return helper(x) + {n}\n\n" for n in range(40))
    source = f"class Big:\n{body}    def last(self, a, b):\n        return helper(a) * helper(b)\n"
    analysis = analyse(source)
    line = 2 + 40 * 3 + 1
    second = _call_at(analysis, CallSite("helper", line, 0, 1))
    assert analysis.module.code_for_node(second) == "helper(b)"
    assert _call_at(analysis, CallSite("helper", line, 0, 2)) is None
    assert not analysis.positions._statements  # the class was not ranged
