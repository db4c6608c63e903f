"""Each call's start and each function's ``def`` line read off the ``ast`` tree are where LibCST's positions put
them: the same line, and for calls on each line the same order."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from fixture_harness import parsable_python_fixtures
from gemlint.analysis.ast_starts import call_starts, definition_lines, starts
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
    "async and nested definitions": "async def outer():\n    def inner():\n        return g()\n    async def other(): return await h()\n",
    "decorated methods and a line continuation": "class C:\n    @property\n    @cached(size())\n    def p(self): ...\n    def \\\n        q(self): return r()\n",
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
    from gemlint.project.answers import _call_at
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


def _libcst_def_lines(source: str) -> tuple[list[cst.FunctionDef], dict[cst.FunctionDef, int]]:
    module = cst.parse_module(source)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    functions = [node for node in build_index(module).nodes if isinstance(node, cst.FunctionDef)]
    return functions, {function: positions[function].start.line for function in functions}


def _assert_def_lines_paired(source: str) -> int:
    functions, expected = _libcst_def_lines(source)
    assert definition_lines(ast.parse(source), functions) == expected
    return len(functions)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_functions_in_every_shape_start_where_libcst_puts_them(name):
    _assert_def_lines_paired(SHAPES[name])


def test_functions_of_every_fixture_start_where_libcst_puts_them():
    assert sum(_assert_def_lines_paired(source) for source in parsable_python_fixtures()) > 500


def test_trees_whose_functions_do_not_pair_give_no_answer():
    functions, _ = _libcst_def_lines("def f():\n    pass\nasync def g():\n    pass\n")
    assert definition_lines(ast.parse("def f():\n    pass\n"), functions) is None  # a function missing
    assert definition_lines(ast.parse("def f():\n    pass\ndef g():\n    pass\n"), functions) is None  # not async
    assert definition_lines(ast.parse("def f():\n    pass\nasync def h():\n    pass\n"), functions) is None  # renamed


def test_a_route_handler_and_a_summarised_function_are_found_without_ranging_their_statement():
    from gemlint.project.answers import _definition_at
    from gemlint.project.summary import FunctionSummary
    from test_models import analyse

    body = "".join(f"    @route('/m{n}')\n    def m{n}(self, x):\n        return x + {n}\n\n" for n in range(40))
    analysis = analyse(f"class Big:\n{body}")
    line = 2 + 39 * 4 + 1
    (found,) = analysis.functions_on(line)
    assert found.name.value == "m39" and analysis.def_line(found) == line
    assert analysis.functions_on(line - 1) == []  # the decorator's line
    summary = FunctionSummary("Big.m39", line, ("self", "x"), ("route",))
    assert _definition_at(analysis, summary) is found
    assert not analysis.positions._statements  # the class was not ranged


def test_calls_that_do_not_pair_leave_the_functions_answered():
    source = "def f():\n    return g(1)\n"
    module = cst.parse_module(source)
    index = build_index(module)
    functions = [node for node in index.nodes if type(node) is cst.FunctionDef]
    calls, lines = starts(ast.parse(source + "h(2)\n"), [node for node in index.nodes if type(node) is cst.Call], functions)
    assert calls is None  # a call missing from LibCST's list
    assert lines == {functions[0]: 1}
SERVED = (
    "import torch\nfrom fastapi import FastAPI\n\napp = FastAPI()\nmodel = torch.nn.Linear(2, 2)\n\n\n"
    "@app.post('/predict')\ndef predict(x: list[float]):\n    return model(torch.tensor(x)).tolist()\n"
)


def _contexts(monkeypatch, source: str) -> list:
    from gemlint import python_lint
    from gemlint.api import lint_source

    made = []
    real = python_lint.PythonFileContext

    def capture(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(python_lint, "PythonFileContext", capture)
    lint_source(source, "svc/app.py")
    return made


def test_the_analyses_read_the_tree_the_engine_parsed(monkeypatch):
    made = _contexts(monkeypatch, SERVED)
    assert made and all(context.ast_tree is not None for context in made)
    analysis = made[0].analysis
    monkeypatch.setattr(ast, "parse", lambda *args, **kwargs: pytest.fail("parsed again"))
    (handler,) = [node for node in analysis.nodes_of(cst.FunctionDef) if node.name.value == "predict"]
    assert analysis.def_line(handler) == 9


def _tree_alive_at_parse(monkeypatch) -> list[bool]:
    """Whether the ``ast`` tree the engine parsed is still alive (held by anything) when LibCST parses the file."""
    import weakref

    from gemlint import engine, python_lint

    trees: list[weakref.ref] = []
    alive: list[bool] = []
    gate, parse = engine.python_gate, python_lint.parse_module

    def gated(*args, **kwargs):
        blocked, tree = gate(*args, **kwargs)
        if tree is not None:
            trees.append(weakref.ref(tree))
        return blocked, tree

    def parsed(*args, **kwargs):
        alive.append(bool(trees) and trees[-1]() is not None)
        return parse(*args, **kwargs)

    monkeypatch.setattr(engine, "python_gate", gated)
    monkeypatch.setattr(python_lint, "parse_module", parsed)
    return alive


def test_a_large_file_lets_its_tree_go_before_libcst_parses_it(monkeypatch):
    from gemlint import python_lint

    monkeypatch.setattr(python_lint, "KEEP_AST_CHARS", len(SERVED) - 1)
    alive = _tree_alive_at_parse(monkeypatch)
    made = _contexts(monkeypatch, SERVED)
    assert made and all(context.ast_tree is None for context in made)
    assert alive == [False]  # nothing holds it: not the context, not the engine that parsed it
    (handler,) = [node for node in made[0].analysis.nodes_of(cst.FunctionDef) if node.name.value == "predict"]
    assert made[0].analysis.def_line(handler) == 9


def test_a_small_file_keeps_its_tree_for_the_analyses(monkeypatch):
    alive = _tree_alive_at_parse(monkeypatch)
    made = _contexts(monkeypatch, SERVED)
    assert alive == [True] and made[0].ast_tree is not None
