"""The ``ast`` walks the triage, the binding table and the depth check share."""

from __future__ import annotations

import ast

from fixture_harness import parsable_python_fixtures
from gemlint.analysis.ast_walk import nesting_depth


def _depth(node: ast.AST) -> int:
    return 1 + max((_depth(child) for child in ast.iter_child_nodes(node)), default=0)


def test_the_depth_of_every_fixture_is_what_iter_child_nodes_gives():
    trees = [ast.parse(source) for source in parsable_python_fixtures()]
    assert len(trees) > 50
    assert [nesting_depth(tree, 10_000) for tree in trees] == [_depth(tree) for tree in trees]


def test_the_count_stops_just_past_the_limit():
    tree = ast.parse("y = " + "-" * 150 + "1\n")  # each unary minus is a level
    assert _depth(tree) > 150
    assert nesting_depth(tree, 100) == 101
    assert nesting_depth(tree, 1_000) == _depth(tree)
