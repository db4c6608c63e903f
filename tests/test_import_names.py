"""Qualified names read from imports alone agree with LibCST's scope analysis wherever they answer."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, ScopeProvider

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
    assert "_scopes" not in analysis.__dict__  # answered from the imports alone
    # What an import from a compared library binds is asked of the scopes, as qualified_names answers it.
    for text in ("Router()", 'torch.load("m.pt")'):
        func = call(analysis, text).func
        assert analysis.library_names(func, libraries) == analysis.qualified_names(func) != frozenset()
    # Every name the scopes give the free calls is a local one: never a name of the libraries.
    for text in free:
        assert not any(name.partition(".")[0] in libraries for name in analysis.qualified_names(call(analysis, text).func)), text
