"""One traversal of a module that records what the analyses look up repeatedly.

The analyses never re-walk the module or a function body per question: they
consult this index, built once per file. The engine dispatches the rules'
``visit_<Node>`` methods from it too, so a file is walked once, not twice.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import libcst as cst

from gemlint.analysis.syntax import dotted_name, terminal_name
from gemlint.analysis.triage import add_module

# Scopes and loops the index remembers around each interesting call.
_OWNER_TYPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While})


@dataclass
class CallSite:
    call: cst.Call
    owners: tuple[cst.CSTNode, ...]  # enclosing functions, classes, lambdas and loops, outermost first


@dataclass
class ModuleIndex:
    parents: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    children: dict[cst.CSTNode, list[cst.CSTNode]] = field(default_factory=dict)
    nodes: list[cst.CSTNode] = field(default_factory=list)  # below the module, in source order (no trivia: TRIVIA)
    imports: set[str] = field(default_factory=set)
    globals: set[str] = field(default_factory=set)
    # terminal callee name -> call sites ("helper" for helper(...), self.helper(...) and obj.helper(...))
    calls: dict[str, list[CallSite]] = field(default_factory=dict)

    def sites(self, *names: str) -> list[CallSite]:
        return [site for name in names for site in self.calls.get(name, ())]


def build_index(module: cst.Module) -> ModuleIndex:
    """Walk ``module`` once, in source order, reading each node's fields directly.

    LibCST's own traversal (``visit``, ``CSTNode.children``) rebuilds every node it passes,
    which costs about a parse; reading the dataclass fields costs a sixth of that.
    """
    index = ModuleIndex()
    parents, children, nodes, calls = index.parents, index.children, index.nodes, index.calls
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(module, ())]
    while stack:
        node, owners = stack.pop()
        kind = type(node)
        if kind is cst.Call:
            name = terminal_name(node.func)
            if name is not None:
                calls.setdefault(name, []).append(CallSite(node, owners))
        elif kind in _OWNER_TYPES:
            owners = (*owners, node)
        elif kind is cst.Import:
            for alias in node.names:
                add_module(index.imports, dotted_name(alias.name))
        elif kind is cst.ImportFrom and node.module is not None and not node.relative:
            add_module(index.imports, dotted_name(node.module))
        elif kind is cst.Global:
            index.globals.update(item.name.value for item in node.names)
        below = _children_of(node)
        if below:
            children[node] = below
            for child in below:
                parents[child] = node
            stack.extend((child, owners) for child in reversed(below))
        if node is not module:
            nodes.append(node)
    return index


def _children_of(node: cst.CSTNode) -> list[cst.CSTNode]:
    kind = type(node)
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = _field_order(kind)
    below: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        held = type(value)
        if held is tuple or held is list:
            below.extend(item for item in value if _KEPT[type(item)])
        elif _KEPT[held]:
            below.append(value)
    return below


class _KeptTypes(dict):
    """type -> whether a value of that type is a node the index holds: ``isinstance`` of LibCST's ``CSTNode``, an
    ABC, costs a Python call per value; this asks once per type."""

    def __missing__(self, kind: type) -> bool:
        kept = self[kind] = issubclass(kind, cst.CSTNode) and kind not in TRIVIA
        return kept


_KEPT = _KeptTypes()


# Whitespace, comments and punctuation: two thirds of a module's nodes, which no analysis asks about (a comment's
# directives are read from the text). The index leaves them and what they hold out.
TRIVIA = frozenset({
    cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.Newline, cst.EmptyLine, cst.Comment,
    cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace,
})


# Dataclass field order is source order for every node type but these, whose fields list
# what comes first in the source later on (the rest -- whitespace, brackets -- follow in any order).
_SOURCE_ORDER: dict[type, tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "asynchronous", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.Arg: ("keyword", "value"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.For: ("asynchronous", "target", "iter", "body", "orelse"),
    cst.With: ("asynchronous", "items", "body"),
    cst.CompFor: ("asynchronous", "target", "iter", "ifs", "inner_for_in"),
    cst.Parameters: ("posonly_params", "posonly_ind", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.TypeAlias: ("name", "type_parameters", "value"),
}
_FIELDS: dict[type, tuple[str, ...]] = {}
# The fields that hold trivia only (as do those named whitespace*): not read at all.
_TRIVIA_FIELDS = frozenset({
    "lpar", "rpar", "comma", "dot", "colon", "semicolon", "equal", "lbracket", "rbracket", "lbrace", "rbrace",
    "leading_lines", "lines_after_decorators", "trailing_whitespace", "newline", "header", "footer",
})


def _field_order(kind: type) -> tuple[str, ...]:
    names = [f.name for f in dataclasses.fields(kind) if not f.name.startswith("whitespace") and f.name not in _TRIVIA_FIELDS]
    first = [name for name in _SOURCE_ORDER.get(kind, ()) if name in names]
    return (*first, *(name for name in names if name not in first))

