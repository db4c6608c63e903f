"""Small questions about tree-sitter C/C++/CUDA syntax nodes, shared by the native analyses."""

from __future__ import annotations

import re
from operator import itemgetter
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from tree_sitter import Node

#: Wrappers that do not change which object an expression denotes.
TRANSPARENT = frozenset({"parenthesized_expression", "cast_expression"})
CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"})
FUNCTION_TYPES = frozenset({"function_definition"})
#: Nodes whose bodies run at another time than the code around them.
NESTED_CODE = frozenset({"lambda_expression", "function_definition", "class_specifier", "struct_specifier"})
# Statements that leave a branch other than by its end.
JUMPS = frozenset({"return_statement", "throw_statement", "goto_statement", "break_statement", "continue_statement"})
_SPACE = re.compile(r"\s+")


def text(node: Node | None) -> str:
    if node is None:
        return ""
    data = node.text  # a new bytes object at each ask
    return data.decode("utf-8", errors="replace") if data is not None else ""


def normalized(node: Node | None) -> str:
    """Source text without whitespace, to compare expressions (``this->stream_`` == ``this -> stream_``)."""
    return _SPACE.sub("", text(node))


def line_of(node: Node) -> int:
    return node.start_point[0] + 1


def callee_name(call: Node) -> str:
    """``cudaMalloc`` for ``cudaMalloc(...)``, ``::cudaMalloc(...)`` and ``cudaMalloc<float>(...)``;
    ``std::make_unique`` for qualified calls; ``push_back`` for ``v.push_back(...)``."""
    function = call.child_by_field_name("function")
    return name_of(function)


def name_of(node: Node | None) -> str:
    if node is None:
        return ""
    if node.type == "identifier":
        return text(node)
    if node.type == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        inner = name_of(node.child_by_field_name("name"))
        prefix = name_of(scope) if scope is not None and scope.type != "namespace_identifier" else text(scope)
        return f"{prefix}::{inner}" if prefix else inner
    if node.type in ("namespace_identifier", "type_identifier", "field_identifier"):
        return text(node)
    if node.type in ("template_function", "template_type", "template_method"):
        return name_of(node.child_by_field_name("name"))
    if node.type == "field_expression":
        return text(node.child_by_field_name("field"))
    if node.type in TRANSPARENT:
        inner = node.named_children[-1] if node.named_children else None
        return name_of(inner)
    return ""


def last_component(name: str) -> str:
    return name.rsplit("::", 1)[-1]


def is_method_call(call: Node) -> bool:
    function = call.child_by_field_name("function")
    return function is not None and function.type == "field_expression"


def is_kernel_launch(call: Node) -> bool:
    return any(child.type == "kernel_call_syntax" for child in call.named_children)


def arguments(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    if args is None:
        return []
    return [child for child in args.named_children if child.type != "comment"]


def strip(node: Node | None) -> Node | None:
    """Remove parentheses, casts (C casts and the C++ named casts) and a unary ``+`` (the same value; the parser
    reads ``delete[] (p)`` as ``delete[] +(p)``)."""
    while node is not None:
        if node.type == "unary_expression" and operator(node) == "+":
            node = node.child_by_field_name("argument")
        elif node.type == "parenthesized_expression":
            inner = [c for c in node.named_children if c.type != "comment"]
            node = inner[0] if inner else None
        elif node.type == "cast_expression":
            node = node.child_by_field_name("value")
        elif node.type == "call_expression" and _is_named_cast(node):
            args = arguments(node)
            node = args[0] if len(args) == 1 else None
        else:
            return node
    return None


def _is_named_cast(call: Node) -> bool:
    function = call.child_by_field_name("function")
    return function is not None and function.type == "template_function" and name_of(function) in CASTS


def cast_type_text(cast: Node) -> str:
    """The type a cast converts to, as written (``void *`` of ``reinterpret_cast<void *>(p)`` or ``(void *)p``)."""
    if cast.type == "cast_expression":
        return text(cast.child_by_field_name("type")) if cast.child_by_field_name("type") is not None else ""
    function = cast.child_by_field_name("function") if cast.type == "call_expression" else None
    if function is None or not _is_named_cast(cast):
        return ""
    arguments = function.child_by_field_name("arguments")
    return text(arguments) if arguments is not None else ""


def returns_pointer(function: Node) -> bool:
    """``T *data()``: the function definition's declarator is a pointer to its function declarator."""
    declarator = function.child_by_field_name("declarator")
    return declarator is not None and declarator.type == "pointer_declarator"


def is_transparent_parent(node: Node, child: Node) -> bool:
    """``child`` denotes the same object as ``node`` (a parenthesis or cast around it)."""
    if node.type in TRANSPARENT:
        return True
    if node.type == "argument_list" and node.parent is not None and node.parent.type == "call_expression":
        return _is_named_cast(node.parent)
    if node.type == "call_expression" and _is_named_cast(node):
        return True
    return False


def operator(node: Node) -> str:
    found = node.child_by_field_name("operator")
    if found is not None:
        return text(found)
    for child in node.children:
        if not child.is_named:
            return text(child)
    return ""


def address_of(node: Node) -> Node | None:
    """``x`` for ``&x`` (after stripping parentheses and casts), else None."""
    node = strip(node)
    if node is not None and node.type == "pointer_expression" and operator(node) == "&":
        return strip(node.child_by_field_name("argument"))
    return None


def descendants(node: Node, *, skip: frozenset[str] = NESTED_CODE) -> Iterator[Node]:
    """``node`` and its named descendants, not entering nested functions, lambdas and classes."""
    return map(itemgetter(0), _preorder(node, skip))


def _preorder(node: Node, skip: frozenset[str]) -> Iterator[tuple[Node, str, int]]:
    """:func:`descendants`, each node with its type and its depth below ``node`` (0 for ``node`` itself).

    Walked with a tree cursor, in half the time a walk of ``named_children`` takes on real code (that property
    builds a list of every child, tokens included, and keeps it on the node)."""
    yield node, node.type, 0
    cursor = node.walk()
    if not cursor.goto_first_child():
        return
    depth = 1
    while True:
        current = cursor.node
        if current.is_named:  # an anonymous node (a token) is a leaf, and not one of the named children
            kind = current.type
            yield current, kind, depth
            if kind not in skip and cursor.goto_first_child():
                depth += 1
                continue
        while not cursor.goto_next_sibling():
            cursor.goto_parent()
            depth -= 1
            if not depth:
                return


class Walk:
    """A body's named nodes in the order :func:`descendants` yields them, read once and asked many times: the
    pairing asks a dozen questions of each body and of each statement in it, and each was a walk of its own."""

    __slots__ = ("root", "nodes", "types", "ends", "_index", "_of_type")

    def __init__(self, root: Node) -> None:
        self.root = root
        nodes: list[Node] = []
        types: list[str] = []
        # Pre-order: a node's descendants are the nodes that follow it, up to the end of its last child's. `walking`
        # holds the nodes whose descendants are still being walked, one per depth.
        ends: list[int] = []
        walking: list[int] = []
        for node, kind, depth in _preorder(root, NESTED_CODE):
            index = len(nodes)
            while len(walking) > depth:
                ends[walking.pop()] = index
            nodes.append(node)
            types.append(kind)
            ends.append(index + 1)
            walking.append(index)
        for index in walking:
            ends[index] = len(nodes)
        self.nodes = nodes
        self.types = types
        #: Each node's descendants end before this index of :attr:`nodes`.
        self.ends = ends
        self._index: dict[Node, int] | None = None
        self._of_type: dict[frozenset[str], list[Node]] = {}

    def under(self, node: Node) -> list[Node]:
        """``list(descendants(node))`` for a node of this body (walked afresh for any other)."""
        span = self.span(node)
        if span is None:
            return list(descendants(node))  # a nested body's own nodes were not walked
        return self.nodes[span[0] : span[1]]

    def span(self, node: Node) -> tuple[int, int] | None:
        """Where ``list(descendants(node))`` lies in :attr:`nodes` (start, end), for a node of this body whose
        nodes were walked; None for any other."""
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.nodes)}
        index = self._index.get(node)
        if index is None or (index and self.types[index] in NESTED_CODE):
            return None
        return index, self.ends[index]

    def of_type(self, kinds: frozenset[str]) -> list[Node]:
        """The body's nodes of ``kinds``, in order (a new list: the same kinds are asked again and again)."""
        found = self._of_type.get(kinds)
        if found is None:
            found = self._of_type[kinds] = [node for node, kind in zip(self.nodes, self.types) if kind in kinds]
        return list(found)


def is_constant_true(node: Node | None) -> bool:
    node = strip(node)
    if node is None:
        return False
    if node.type == "true":
        return True
    return node.type == "number_literal" and text(node).rstrip("uUlL") not in ("0", "0x0", "00")


def is_constant_false(node: Node | None) -> bool:
    node = strip(node)
    if node is None:
        return False
    return node.type == "false" or (node.type == "number_literal" and text(node).rstrip("uUlL") in ("0", "0x0", "00"))


def function_name(function: Node) -> str:
    """The declared name of a function definition (``A::~A``, ``operator()``, ``forward``)."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in ("function_declarator",):
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return ""
    inner = declarator.child_by_field_name("declarator")
    return _SPACE.sub("", text(inner))


def declared_identifier(declarator: Node | None) -> Node | None:
    """The identifier a declarator declares (``*p``, ``p[4]``, ``&r``, ``p = init``)."""
    while declarator is not None:
        if declarator.type in ("identifier", "field_identifier"):
            return declarator
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            named = [c for c in declarator.named_children if c.type in ("identifier", "field_identifier")]
            return named[0] if named else None
        declarator = inner
    return None


def is_reference_declarator(declarator: Node | None) -> bool:
    while declarator is not None:
        if declarator.type == "reference_declarator":
            return True
        if declarator.type in ("identifier", "field_identifier"):
            return False
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            return any(c.type == "reference_declarator" for c in declarator.named_children)
        declarator = inner
    return False


def has_storage(declaration: Node, keywords: frozenset[str]) -> bool:
    return any(child.type == "storage_class_specifier" and text(child) in keywords for child in declaration.named_children)


_PREPROC_CONDITIONALS = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"})


def in_exclusive_arms(first: Node | None, second: Node | None) -> bool:
    """``first`` and ``second`` lie in different arms of one ``#if``/``#ifdef`` chain (``#ifdef UWP char *buf =
    ...; #else char *buf = ...; #endif``): one configuration compiles one of them, so they name the same variable."""
    if first is None or second is None:
        return False
    current = first.parent
    while current is not None:
        if current.type in _PREPROC_CONDITIONALS and encloses(current, second):
            alternative = current.child_by_field_name("alternative")
            if alternative is not None and encloses(alternative, first) != encloses(alternative, second):
                return True
        current = current.parent
    return False


def encloses(node: Node, inner: Node) -> bool:
    """``inner`` lies within ``node``'s text (``node`` itself included)."""
    return node.start_byte <= inner.start_byte and inner.end_byte <= node.end_byte
