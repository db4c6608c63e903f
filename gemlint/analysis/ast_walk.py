"""A walk of an ``ast`` tree that passes by the fields its caller has no use for.

``ast.walk`` yields every node, a third of them load/store contexts and operators, through a generator of
generators (``iter_child_nodes``). The triage and the table of the names a module binds each look at a few kinds
of node: this walk reads each node type's fields once, leaves out the ones named in ``skipped``, and keeps one
stack (a deep file must not exhaust Python's).
"""

from __future__ import annotations

import ast
from typing import Iterator

#: Fields that hold no statement and no expression: names and flags (strings, numbers), an import's aliases (the
#: import statement says what they name), and the load/store contexts and operators, a third of a tree's nodes.
#: The walks that look for statements or expressions skip them.
SCALAR_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "attr", "arg", "name", "names", "module", "level", "kind", "asname", "conversion", "simple", "is_async", "type_comment"}
)

# skipped fields -> node type -> the fields walked into
_CHILD_FIELDS: dict[frozenset[str], dict[type, tuple[str, ...]]] = {}


def child_fields(kind: type, skipped: frozenset[str]) -> tuple[str, ...]:
    """The fields of the node type ``kind`` a walk goes into: all but those named in ``skipped``."""
    fields_of = _CHILD_FIELDS.setdefault(skipped, {})
    fields = fields_of.get(kind)
    if fields is None:
        fields = fields_of[kind] = tuple(name for name in kind._fields if name not in skipped)  # type: ignore[attr-defined]
    return fields


def fields_table(skipped: frozenset[str]) -> dict[type, tuple[str, ...]]:
    """The node types met so far -> their fields a walk goes into (:func:`child_fields` fills it): a walk that
    reads it directly spares a call per node."""
    return _CHILD_FIELDS.setdefault(skipped, {})


def walk(tree: ast.AST, skipped: frozenset[str]) -> Iterator[ast.AST]:
    """Every node of ``tree`` that ``ast.walk`` yields, but those only the fields named in ``skipped`` hold."""
    fields_of = _CHILD_FIELDS.setdefault(skipped, {})
    stack: list[object] = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        fields = fields_of.get(kind)
        if fields is None:
            if not issubclass(kind, ast.AST):  # a list's None (a dict's `**` key) or string (a pattern's keywords)
                continue
            fields = child_fields(kind, skipped)
        yield node  # type: ignore[misc]
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend(value)
            elif isinstance(value, ast.AST):
                push(value)


#: Of the fields a walk for statements and expressions skips, those whose value is a leaf node (a context, an
#: operator, an import's alias) rather than a string or a flag; never empty where the type has one.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "names"})
#: The fields the depth is not counted through: a ``name`` is walked (a string mostly, but a ``type`` alias's is a
#: node).
_DEPTH_SKIPPED = SCALAR_FIELDS - {"name"}
# node type -> 1 when the type holds a leaf node in a skipped field (it then reaches one level deeper), else 0
_LEAF_LEVEL: dict[type, int] = {}


def _leaf_level(kind: type) -> int:
    level = _LEAF_LEVEL.get(kind)
    if level is None:
        # `names` holds aliases in an import, strings in `global` and `nonlocal`
        leafy = {name for name in kind._fields if name in _LEAF_FIELDS} - ({"names"} if kind in (ast.Global, ast.Nonlocal) else set())  # type: ignore[attr-defined]
        level = _LEAF_LEVEL[kind] = 1 if leafy else 0
    return level


def nesting_depth(tree: ast.AST, limit: int) -> int:
    """How deeply ``tree`` nests (``tree`` alone is 1), counted up to just past ``limit``: the depth
    ``ast.iter_child_nodes`` gives, without its generators. The leaves a walk for statements and expressions
    skips (contexts, operators, aliases) are not visited: a node that holds one counts one level more."""
    fields_of = _CHILD_FIELDS.setdefault(_DEPTH_SKIPPED, {})
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        kind = type(node)
        fields = fields_of.get(kind)
        if fields is None:
            fields = child_fields(kind, _DEPTH_SKIPPED)
        reached = depth + _leaf_level(kind)
        if reached > deepest:
            deepest = reached
            if deepest > limit:
                break
        below = depth + 1
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        push((item, below))
            elif isinstance(value, ast.AST):
                push((value, below))
    return deepest
