"""A function's variables, from LibCST's scope analysis of the function alone, agree with the analysis of the
whole module wherever the function alone answers: their bindings, the uses linked to each, their qualified names."""

from __future__ import annotations

import libcst as cst
import pytest

from fixture_harness import fixture_files
from test_models import analyse

AWKWARD = '''\
import torch
from torch import nn
from transformers import AutoTokenizer

counter = 0
model = None


def decorate(fn):
    return fn


class Outer:
    class Inner(nn.Module):
        @decorate
        def forward(self, x, scale=counter, *rest, flag: bool = False, **options):
            global counter
            counter += 1
            total = 0
            for index, (left, right) in enumerate(rest):
                total += left * right
            with torch.no_grad() as guard, open("f") as (handle):
                pass
            squares = [value * value for value in range(3) if (kept := value)]
            kept.bit_length()
            lookup = {key: model for key in options}
            del total
            try:
                risky = x.eval()
            except ValueError as error:
                risky = error
            match x:
                case {"k": found, **remaining}:
                    found.eval()
                case [first, *others]:
                    first.train()
                case str() as text:
                    text.upper()
            import json as serial
            serial.dumps(x)
            tokenizer = AutoTokenizer.from_pretrained("m")
            tokenizer.decode(x)
            return x * scale, squares, lookup, guard, handle, risky, model

        def helper(self):
            return self.forward(1)


def outer_function(net):
    inner_value = net

    def closure(argument):
        nonlocal inner_value
        inner_value = argument
        return inner_value.eval()

    class Local:
        attribute = inner_value

        def method(self):
            return inner_value

    shadow = lambda net: net.train()
    names = [net for net in range(2)]
    return closure, Local, shadow, names, net.eval(), model.eval()


def uses_globals():
    model.eval()
    return torch.cat, counter
'''


def _accesses(assignment) -> set[int]:
    return {id(access.node) for access in assignment.references}


def disagreements(analysis) -> list[str]:
    """Where the function-alone answers differ from the whole module's scope analysis."""
    full = analysis._scopes
    wrong = []
    for node in analysis.all_nodes:
        if isinstance(node, cst.Name):
            local = analysis._local_scope(node)
            if local is not None:
                ours = {id(a.node): _accesses(a) for a in local[node.value]}
                theirs = {id(a.node): _accesses(a) for a in full[node].__getitem__(node.value)}
                if ours != theirs:
                    wrong.append(f"bindings of {node.value}")
        if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            ours = analysis._local_qualified(node)
            scope = full.get(node)
            if ours is not None and scope is not None and ours != frozenset(q.name for q in scope.get_qualified_names_for(node)):
                wrong.append(f"qualified names of {cst.Module([]).code_for_node(node)}: {sorted(ours)}")
    return wrong


def test_awkward_functions_agree_with_the_whole_module():
    analysis = analyse(AWKWARD)
    assert disagreements(analysis) == []


def test_what_the_function_alone_answers_and_what_it_leaves():
    analysis = analyse(AWKWARD)
    names = {}
    for node in analysis.all_nodes:
        if isinstance(node, cst.Name):
            names.setdefault(node.value, []).append(analysis._local_scope(node) is not None)
    # Its own variables: parameters, loop, with and handler names, a walrus's, an import's, a closure's, a
    # comprehension's, a class's and a lambda's inside it.
    for local in ("x", "scale", "rest", "options", "total", "index", "left", "guard", "handle", "squares", "kept", "lookup",
                  "risky", "error", "serial", "tokenizer", "inner_value", "argument", "net", "Local", "shadow", "names"):
        assert any(names[local]), local
    # Globals, builtins, names declared global, names outside any function, and match captures (which LibCST's
    # scope analysis binds nowhere): the whole module's analysis answers those.
    for other in ("torch", "AutoTokenizer", "model", "counter", "range", "enumerate", "decorate", "found", "first", "text"):
        assert not any(names[other]), other
    # A method's variable is named with its classes, as the whole module names it.
    tokenizer = next(n for n in analysis.all_nodes if isinstance(n, cst.Name) and n.value == "tokenizer")
    assert analysis.qualified_names(tokenizer) == {"Outer.Inner.forward.<locals>.tokenizer"}


def test_a_functions_variables_cost_no_scope_analysis_of_the_module():
    analysis = analyse(AWKWARD)
    tracker = analysis.models
    asked = [
        node
        for node in analysis.nodes_of(cst.Attribute)
        if isinstance(node.value, cst.Name) and node.value.value in ("tokenizer", "risky", "inner_value", "serial", "net")
    ]
    assert len(asked) == 5
    for node in asked:
        tracker.origins(node.value)
    assert "_scopes" not in analysis.__dict__


PYTHON_FIXTURES = [path for path in fixture_files() if path.suffix == ".py"]


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: p.name)
def test_every_fixture_agrees_with_the_whole_module(path):
    try:
        analysis = analyse(path.read_text(encoding="utf-8"))
    except Exception:
        pytest.skip("not UTF-8, or LibCST cannot parse it")
    assert disagreements(analysis) == []
