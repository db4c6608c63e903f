"""Positions computed one module-level statement at a time are LibCST's own, for every node of every fixture and
for the shapes a statement's context could change (comments and blank lines above it, a file without a final
newline, Windows newlines, tab indentation, a comment after the last statement)."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import PositionProvider

from fixture_harness import fixture_files
from test_models import analyse

PYTHON_FIXTURES = [path for path in fixture_files() if path.suffix == ".py"]

SHAPES = {
    "header comments and blank lines": "#!/usr/bin/env python\n# a comment\n\n\nimport torch\n\n\n# above f\ndef f(x):\n    return x\n",
    "no final newline": "import torch\n\n\ndef f(x):\n    return torch.cat([x, x])",
    "windows newlines": "import torch\r\n\r\nclass Net(torch.nn.Module):\r\n    def forward(self, x):\r\n        return x\r\n",
    "tabs": "import torch\n\nclass Net(torch.nn.Module):\n\tdef forward(self, x):\n\t\tif x:\n\t\t\treturn x\n\t\treturn -x\n",
    "comment after the last statement": "x = 1\nif x:\n    y = 2\n# trailing\n\n# more\n",
    "statements on one line": "import os; import sys\nx = 1; y = (\n    2,\n)\n",
    "only comments": "# nothing but comments\n\n# and a blank line\n",
    "empty": "",
}


def _assert_same(source: str) -> int:
    analysis = analyse(source)
    expected = cst.MetadataWrapper(analysis.module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = analysis.positions
    nodes = [analysis.module, *analysis.all_nodes]
    for node in nodes:
        if node in expected:
            assert positions[node] == expected[node], (type(node).__name__, analysis.module.code_for_node(node)[:60])
            start, end = expected[node].start.line, expected[node].end.line
            assert positions.may_stand_on(node, start) and positions.may_stand_on(node, end), type(node).__name__
    return len(nodes)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_positions_in_every_shape_of_module_are_libcsts(name):
    assert _assert_same(SHAPES[name]) >= 1


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda p: p.name)
def test_positions_of_every_node_of_every_fixture_are_libcsts(path):
    try:
        source = path.read_text(encoding="utf-8")
        cst.parse_module(source)
    except Exception:
        pytest.skip("not UTF-8, or LibCST cannot parse it")
    _assert_same(source)


def test_only_the_statements_asked_about_are_ranged():
    source = "import torch\n\n" + "".join(f"def f{n}(x):\n    return torch.relu(x) * {n}\n\n\n" for n in range(50))
    analysis = analyse(source)
    target = analysis.module.body[7]  # def f6, after the import (line 1) and six functions of four lines
    assert analysis.positions[target].start.line == 3 + 6 * 4
    assert list(analysis.positions._statements) == [target]  # one statement ranged, not the module's fifty


def test_a_node_is_placed_on_a_line_without_ranging_the_statements_that_do_not_reach_it():
    source = "import torch\n\n" + "".join(f"def f{n}(x):\n    return torch.relu(x) * {n}\n\n\n" for n in range(50))
    analysis = analyse(source)
    positions = analysis.positions
    line = 3 + 6 * 4 + 1  # the `return` of f6
    calls = [node for node in analysis.all_nodes if isinstance(node, cst.Call)]
    on_line = [call for call in calls if positions.may_stand_on(call, line) and positions[call].start.line == line]
    assert [analysis.module.code_for_node(call) for call in on_line] == ["torch.relu(x)"]
    assert list(positions._statements) == [analysis.module.body[7]]
    assert not positions.may_stand_on(calls[0], line)  # f0's call, on line 4
