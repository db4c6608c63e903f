"""Qualified names read from imports alone agree with LibCST's scope analysis wherever they answer."""

from __future__ import annotations

import ast
from contextlib import contextmanager

import libcst as cst
import pytest
from libcst.helpers import get_full_name_for_node
from libcst.metadata import Assignment, MetadataWrapper, PositionProvider, ScopeProvider

from fixture_harness import fixture_files
from gemlint.analysis.import_names import ImportNames
from gemlint.analysis.syntax import dotted_name

AWKWARD = '''\
import os.path
import numpy as np
import torch
import torch.nn as nn
from torch import no_grad as ng
from . import sibling
from ..pkg.mod import helper as h
from models import *

try:
    import ujson as json
except ImportError:
    import json

if os.environ.get("X"):
    from transformers import AutoModel
else:
    from transformers import AutoModelForCausalLM as AutoModel


class Net(nn.Module):
    import math

    def forward(self, x, np=None):
        global torch
        with ng():
            return math.pi, np, os.path.join("a"), os.getcwd(), print.__name__, len(x)


def fn(sibling=None):
    import re
    h()
    return [json for json in range(3)], sibling, re, AutoModel.from_pretrained("m"), undefined.thing


lambda torch: torch
match os.name:
    case {"k": value, **rest}:
        pass
    case [first, *others]:
        pass
    case str() as text:
        pass
'''


def libcst_names(source: str):
    """LibCST's qualified names of every name and attribute chain, by position and spelling."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    scopes = wrapper.resolve(ScopeProvider)
    positions = wrapper.resolve(PositionProvider)
    found = {}
    for node, scope in scopes.items():
        if isinstance(node, (cst.Name, cst.Attribute)) and scope is not None and dotted_name(node) is not None:
            start = positions[node].start
            found[(start.line, start.column, dotted_name(node))] = frozenset(q.name for q in scope.get_qualified_names_for(node))
    return found, wrapper, positions


def disagreements(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = ImportNames(tree)
    expected, wrapper, positions = libcst_names(source)
    imports = {(positions[node].start.line, positions[node].start.column) for node in _import_bound_nodes(wrapper.module)}
    wrong = []
    for (line, column, spelled), libcst_answer in expected.items():
        if (line, column) in imports:
            continue  # the name an import binds: not asked of the import table
        answer = names.qualified(spelled)
        if answer is not None and answer != libcst_answer:
            wrong.append(f"{line}:{column} {spelled}: {sorted(answer)} != LibCST {sorted(libcst_answer)}")
    return wrong


def _import_bound_nodes(module: cst.Module):
    for node in _walk(module):
        if isinstance(node, (cst.ImportAlias, cst.ImportFrom)):
            for inner in _walk(node):
                if isinstance(inner, (cst.Name, cst.Attribute)):
                    yield inner


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def test_awkward_bindings_agree_with_libcst():
    assert disagreements(AWKWARD) == []
    names = ImportNames(ast.parse(AWKWARD))
    # what is answered, and what is left to the scope analysis
    assert names.qualified("nn.Linear") == {"torch.nn.Linear"}
    assert names.qualified("os.getcwd") == {"os.getcwd"}
    assert names.qualified("h") == {"..pkg.mod.helper"}
    assert names.qualified("len") == {"builtins.len"}
    assert names.qualified("undefined.thing") == frozenset()
    # bound by something else than one module-level import somewhere in the file (or imported twice)
    for shadowed in ("torch.cat", "np.zeros", "json.loads", "AutoModel.from_pretrained", "math.pi", "re.compile", "sibling", "value", "rest", "text", "others"):
        assert names.qualified(shadowed) is None, shadowed


PYTHON_FIXTURES = [path for path in fixture_files() if path.suffix == ".py"]


def _fixture_analysis(path):
    """A fixture's analysis, and LibCST's scopes of it; skipped where it is not UTF-8 or LibCST cannot parse it."""
    from test_models import analyse

    try:
        analysis = analyse(path.read_text(encoding="utf-8"))
    except Exception:
        pytest.skip("not UTF-8, or LibCST cannot parse it")
    return analysis, analysis._wrapper.resolve(ScopeProvider)


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: p.name)
def test_every_fixture_agrees_with_libcst(path):
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8")
    try:
        cst.parse_module(source)
    except Exception:
        pytest.skip("LibCST cannot parse it")
    assert disagreements(source) == []


LIBRARY_NAMES = '''\
import json
import torch
from fastapi import APIRouter as Router

lazy_torch = None
torch_like = object()


class Server:
    def start(self, config):
        helper = make()
        json.dumps(config)
        self.app.run()
        helper.run()
        make()()
        Router()
        torch.load("m.pt")
        half = torch.float16 * 2
        return torch_like.load("m.pt")


def make():
    return Server
'''


def test_library_names_answer_without_scope_analysis_what_can_be_no_library_name():
    from test_models import analyse, call

    analysis = analyse(LIBRARY_NAMES)
    libraries = frozenset({"torch", "fastapi"})
    free = ["self.app.run()", "helper.run()", "json.dumps(config)", "make()()", "torch_like.load(\"m.pt\")"]
    for text in free:
        assert analysis.library_names(call(analysis, text).func, libraries) == frozenset(), text
    # An expression that is no name, even one made of library names (`torch.float16 * 2`), names nothing.
    product = next(node for node in analysis.all_nodes if isinstance(node, cst.BinaryOperation))
    assert analysis.library_names(product, libraries) == analysis.qualified_names(product) == frozenset()
    assert "_scopes" not in analysis.__dict__  # answered from the imports alone
    # What an import from a compared library binds is asked of the scopes, as qualified_names answers it.
    for text in ("Router()", 'torch.load("m.pt")'):
        func = call(analysis, text).func
        assert analysis.library_names(func, libraries) == analysis.qualified_names(func) != frozenset()
    # Every name the scopes give the free calls is a local one: never a name of the libraries.
    for text in free:
        assert not any(name.partition(".")[0] in libraries for name in analysis.qualified_names(call(analysis, text).func)), text


# Tables the analyses and rules compare names with, through names_among and names_with_prefix.
def _compared_tables():
    from gemlint.analysis import frameworks as fw

    tables = [value for value in vars(fw).values() if isinstance(value, (frozenset, dict)) and value and all(isinstance(k, str) for k in value)]
    tables.append(frozenset({"builtins.open", "io.open"}))  # a builtin: spelled without its package
    prefixes = [fw.FROM_PRETRAINED_LIBRARIES, ("diffusers.",), ("streamlit.", "gradio."), ("torch",)]  # "torch" starts torchvision too
    return tables, prefixes


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: p.name)
def test_names_among_a_table_agree_with_every_qualified_name(path):
    """Asking only for a table's names, narrowed to the table's packages, answers what filtering every
    qualified name would: on every name, attribute and call of every fixture, for every table of the analyses."""
    from test_models import analyse

    try:
        source = path.read_text(encoding="utf-8")
        analysis = analyse(source)
    except Exception:
        pytest.skip("not UTF-8, or LibCST cannot parse it")
    tables, prefixes = _compared_tables()
    nodes = [node for node in analysis.all_nodes if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))]
    for node in nodes:
        qualified = analysis.qualified_names(node)
        for table in tables:
            assert analysis.names_among(node, table) == {name for name in qualified if name in table}, (analysis.module.code_for_node(node), sorted(table)[:3])
        for prefix in prefixes:
            assert analysis.names_with_prefix(node, prefix) == {name for name in qualified if name.startswith(prefix)}, analysis.module.code_for_node(node)
        # "." among the libraries stands for relative imports (a project class: `_is_project_class`)
        local = frozenset({".", "models", "utils"})
        project = lambda names: {n for n in names if n.startswith(".") or (n.partition(".")[0] in local and "." in n)}  # noqa: E731
        assert project(analysis.library_names(node, local)) == project(qualified), analysis.module.code_for_node(node)


def test_names_among_a_table_need_no_scope_analysis_for_names_of_other_packages():
    from test_models import analyse, call

    analysis = analyse(LIBRARY_NAMES)
    for text in ("self.app.run()", "helper.run()", "json.dumps(config)"):
        assert not analysis.resolves_to(call(analysis, text).func, frozenset({"torch.load", "fastapi.FastAPI"})), text
        assert not analysis.resolves_with_prefix(call(analysis, text).func, ("torch.", "fastapi.")), text
    assert "_scopes" not in analysis.__dict__
    # A builtin is spelled without its package: only the scopes can say `open` is not rebound.
    assert not analysis.resolves_to(call(analysis, "make()()").func, frozenset({"builtins.open"}))
    assert "_scopes" in analysis.__dict__


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: p.name)
def test_qualified_names_agree_with_libcst_on_every_expression(path):
    """What the analysis answers from the imports, for names, attribute chains over calls and subscripts
    (``F.pad(x).contiguous``), calls, subscripts and every other expression (``a * b``, a lambda, a string),
    is what LibCST's scope analysis answers; for a name the module's body imports twice, in turn, the answer is
    the one of LibCST's that the import above the use gives."""
    analysis, scopes = _fixture_analysis(path)
    for node in analysis.all_nodes:
        if isinstance(node, cst.BaseExpression) and scopes.get(node) is not None:
            expected = frozenset(name.name for name in scopes[node].get_qualified_names_for(node))
            spelled = get_full_name_for_node(node) if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) else None
            imports = analysis._import_names
            if spelled is not None and imports is not None and imports.imported_in_turn(spelled.partition(".")[0]):
                answer = analysis.qualified_names(node)
                assert len(answer) == 1 and answer <= expected, analysis.module.code_for_node(node)[:80]
                continue
            assert analysis.qualified_names(node) == expected, analysis.module.code_for_node(node)[:80]


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: p.name)
def test_parameters_and_library_free_files_agree_with_libcst(path):
    """``is_parameter`` (asked of the scopes only where a function around the name takes it) is LibCST's answer
    on every name; a file that ``may_name_from`` says names nothing of a package has no qualified name of it."""
    analysis, scopes = _fixture_analysis(path)
    nodes = [node for node in analysis.all_nodes if isinstance(node, (cst.Name, cst.Attribute, cst.Call)) and scopes.get(node) is not None]
    for node in nodes:
        if isinstance(node, cst.Name):
            expected = any(isinstance(assignment.node, cst.Param) for assignment in analysis.assignments_of(node))
            assert analysis.is_parameter(node) == expected, node.value
    for libraries in ({"gradio", "streamlit"}, {"torch"}, {"transformers"}, {"cProfile", "profile"}, {"os"}):
        if not analysis.may_name_from(frozenset(libraries)):
            for node in nodes:
                assert not any(name.partition(".")[0] in libraries for name in analysis.qualified_names(node)), analysis.module.code_for_node(node)[:80]


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: p.name)
def test_a_name_bound_once_is_what_every_scope_sees(path):
    """Where ``binds_once`` says the file binds a name once, LibCST's scope analysis finds that one binding from
    every use of the name: a module-level class or function so bound is never shadowed."""
    analysis, scopes = _fixture_analysis(path)
    definitions = {**analysis.local_classes, **analysis.module_functions}
    for node in analysis.all_nodes:
        if isinstance(node, cst.Name) and node.value in definitions and analysis.binds_once(node.value):
            scope = scopes.get(node)
            if scope is not None:
                assert [a.node for a in scope[node.value] if hasattr(a, "node")] == [definitions[node.value]], node.value


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: p.name)
def test_a_name_the_file_binds_only_by_definitions_holds_a_definition_wherever_it_is_used(path):
    """Where ``holds_definitions_only`` says so, every binding LibCST's scope analysis finds from a use of the name
    is a ``def`` or ``class`` statement (or there is none), which assigns no value."""
    from gemlint.analysis.syntax import assignment_value

    analysis, scopes = _fixture_analysis(path)
    for node in analysis.all_nodes:
        if isinstance(node, cst.Name) and scopes.get(node) is not None and analysis.holds_definitions_only(node.value):
            bound = [a.node for a in scopes[node][node.value] if isinstance(a, Assignment)]
            assert all(isinstance(b, (cst.FunctionDef, cst.ClassDef)) for b in bound), (node.value, bound)
            assert all(assignment_value(analysis, b) is None for b in bound)  # assigned_values' answer: none


def test_a_name_bound_by_a_definition_and_a_value_holds_more_than_definitions():
    from test_models import analyse

    analysis = analyse(
        "import torch\nfrom svc import Net as Imported\n\nclass Net(torch.nn.Module):\n    pass\n\n"
        "def build():\n    return Net()\n\ndef head(Head):\n    return Head\n\nclass Head:\n    pass\n\nrunner = build\n"
    )
    assert analysis.holds_definitions_only("Net") and analysis.holds_definitions_only("build")
    assert analysis.holds_definitions_only("print")  # a builtin: no binding at all
    assert not analysis.holds_definitions_only("Head")  # a parameter too
    assert not analysis.holds_definitions_only("Imported") and not analysis.holds_definitions_only("runner")


def test_a_class_shadowed_anywhere_is_not_bound_once():
    from test_models import analyse

    analysis = analyse(
        "import torch\n\nclass Net(torch.nn.Module):\n    pass\n\nclass Head(torch.nn.Module):\n    pass\n\n"
        "def build(Net=None):\n    return Net(), Head()\n\nfor Head in range(2):\n    pass\n\nclass Tail:\n    pass\n"
    )
    assert not analysis.binds_once("Net") and not analysis.binds_once("Head") and analysis.binds_once("Tail")
    assert "_scopes" not in analysis.__dict__


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: p.name)
def test_the_function_a_plain_call_runs_is_the_one_libcst_finds(path):
    """What the model tracker takes for the function ``f(...)`` calls, answered without scope analysis where the
    file binds ``f`` once by a module-level ``def`` or ``class``, or not at all, is LibCST's single ``def``."""
    analysis, scopes = _fixture_analysis(path)
    answers = [(call, analysis.models._callee(call)) for call in analysis.nodes_of(cst.Call) if isinstance(call.func, cst.Name)]
    for call, answer in answers:
        scope = scopes.get(call.func)
        if scope is None:
            continue
        defs = [a.node for a in scope[call.func.value] if isinstance(a, Assignment) and isinstance(a.node, cst.FunctionDef)]
        assert answer is (defs[0] if len(defs) == 1 else None), analysis.module.code_for_node(call)[:60]


def test_a_project_name_is_a_library_name_only_where_its_module_re_exports_one(tmp_path):
    """Through the project model: ``Router`` re-exported from fastapi names ``fastapi.APIRouter``; ``Net``, a class
    of the project imported at module level and again in a function, names nothing of torch, without scopes."""
    from test_models import call

    modules = {
        "compat.py": "from fastapi import APIRouter as Router\n",
        "nets.py": "import torch\nclass Net(torch.nn.Module):\n    pass\n",
        "api.py": (
            "from svc.nets import Net\n"
            "from svc import compat\n"
            "def build():\n"
            "    from svc.nets import Net\n"
            "    return Net()\n"
            "def routes():\n"
            "    from svc.compat import Router\n"
            "    return Router(), compat.Router()\n"
        ),
    }
    with _package_analyses(tmp_path, modules) as analysed:
        analysis = analysed("api.py")
        libraries = frozenset({"torch", "fastapi"})
        assert analysis.library_names(call(analysis, "Net()").func, libraries) == frozenset()
        assert "_scopes" not in analysis.__dict__
        for text in ("Router()", "compat.Router()"):
            assert "fastapi.APIRouter" in analysis.library_names(call(analysis, text).func, libraries), text


@contextmanager
def _package_analyses(tmp_path, modules: dict[str, str]):
    """A project of one package, ``svc``, holding ``modules`` (name -> text): yields the analysis of a module by
    name, as the project model parses it."""
    from gemlint.config import default_config
    from gemlint.project.files import forget_projects, project_for

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'svc'\n")
    package = tmp_path / "svc"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in modules.items():
        (package / name).write_text(text)
    forget_projects()
    try:
        project = project_for(default_config(tmp_path))
        yield lambda name: project.parsed(package / name).analysis
    finally:
        forget_projects()


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: p.name)
def test_the_walk_for_bindings_passes_only_contexts_operators_and_aliases_by(path):
    import ast

    from gemlint.analysis.import_names import _walk

    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        pytest.skip("not Python that ast parses")
    passed_by = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop, ast.alias)
    expected = sorted(id(node) for node in ast.walk(tree) if not isinstance(node, passed_by))
    assert sorted(id(node) for node in _walk(tree)) == expected


def test_a_name_imported_twice_in_turn_names_the_import_above_each_use():
    names = ImportNames(
        ast.parse(
            "from transformers import AutoModel\n"
            "first = AutoModel\n"
            "from funasr import AutoModel\n"
            "def later():\n"
            "    return AutoModel\n"
            "try:\n"
            "    import ujson as json\n"
            "except ImportError:\n"
            "    import json\n"
        )
    )
    assert names.imported_in_turn("AutoModel")
    assert names.qualified_at("AutoModel", 2, deferred=False) == {"transformers.AutoModel"}
    assert names.qualified_at("AutoModel.from_config", 4, deferred=False) == {"funasr.AutoModel.from_config"}
    # a function's body runs once the module has: it sees the last import
    assert names.qualified_at("AutoModel", 5, deferred=True) == {"funasr.AutoModel"}
    assert names.qualified_at("AutoModel", 1, deferred=False) is None
    # imported in a `try` and its handler: which import ran, only a run can tell
    assert not names.imported_in_turn("json") and names.qualified_at("json", 10, deferred=False) is None


def test_a_module_imported_again_from_elsewhere_is_left_to_scope_analysis():
    # `import torch`, then a project module's re-export of it: most often the same module
    names = ImportNames(ast.parse("import torch\nfrom pkg.backends import torch\ndef f():\n    return torch.no_grad\n"))
    assert not names.imported_in_turn("torch") and names.qualified_at("torch.no_grad", 4, deferred=True) is None


def test_a_star_import_leads_to_a_library_only_through_a_module_that_may_bind_one(tmp_path):
    """``from svc.common import *`` may bind ``torch`` (the project module imports it): a name no binding of the
    file reaches is asked of the scopes. ``from tkinter import *`` binds no name of torch: ``builder``, bound by
    an assignment, is answered without scopes, and a file that star-imports only tkinter names nothing of torch."""
    from test_models import call

    modules = {
        "common.py": "import torch\n",
        "gui.py": "from tkinter import *\ndef build(trt):\n    builder = trt.Builder()\n    return builder.create_network()\n",
        "serve.py": (
            "from svc.common import *\n"
            "from tkinter import *\n"
            "def build(trt):\n"
            "    builder = trt.Builder()\n"
            "    network = builder.create_network()\n"
            "    return network, torch.load('m.pt')\n"
        ),
    }
    libraries = frozenset({"torch"})
    with _package_analyses(tmp_path, modules) as analysed:
        gui = analysed("gui.py")
        assert not gui.may_name_from(libraries)
        assert gui.library_names(call(gui, "builder.create_network()").func, libraries) == frozenset()
        assert "_scopes" not in gui.__dict__
        serve = analysed("serve.py")
        assert serve.may_name_from(libraries)
        # `builder.create_network` could be `svc.common.builder...`, a re-export of nothing: no library name
        assert serve.library_names(call(serve, "builder.create_network()").func, libraries) == frozenset()
        assert "_scopes" not in serve.__dict__
        load = call(serve, "torch.load('m.pt')").func
        assert "torch.load" in serve.library_names(load, libraries) == serve.qualified_names(load)
