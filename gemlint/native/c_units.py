"""The units of the C/C++/CUDA pairing analysis: one function or lambda body, its variables, its
control-flow graph, and what each step of the graph contains."""

from __future__ import annotations

import enum
from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Iterator

from gemlint.native import c_syntax as syn
from gemlint.native.c_cfg import CfgBuilder, Macros
from gemlint.native.paths import Graph, Step
from gemlint.native.resources import Acquire, Kind

if TYPE_CHECKING:
    from tree_sitter import Node


_INIT_DECLARATOR = frozenset({"init_declarator"})
_DECLARATIONS = frozenset({"declaration", "for_range_loop"})


@dataclass
class Variable:
    local: bool  # a by-value local or parameter whose lifetime ends with the function


class Unit:
    """One function or lambda body: its variables, graph, and the facts of each step."""

    def __init__(self, macros: Macros, node: Node, body: Node) -> None:
        self.macros = macros
        self.node = node
        self.body = body
        self.name = syn.function_name(node) if node.type == "function_definition" else "<lambda>"

    @cached_property
    def source(self) -> bytes:
        return self.body.text or b""

    @cached_property
    def variables(self) -> dict[str, Variable]:
        return self._variables()

    @cached_property
    def walk(self) -> syn.Walk:
        """The body's nodes, walked once for every question the pairing asks of the body and its statements."""
        return syn.Walk(self.body)

    @cached_property
    def graph(self) -> Graph:
        return CfgBuilder(self.macros).build_function(self.walk, is_main=self.name in ("main", "wmain"))

    @cached_property
    def facts(self) -> dict[int, "StepFacts"]:
        return {step.index: StepFacts(step, self.walk) for step in self.graph.steps if step.nodes}

    @cached_property
    def steps_naming(self) -> dict[str, set[int]]:
        """Each name to the steps whose facts name it."""
        found: dict[str, set[int]] = {}
        for index, facts in self.facts.items():
            for name in facts.names:
                found.setdefault(name, set()).add(index)
        return found

    @cached_property
    def jump_starts(self) -> list[int]:
        """Where each jump of this body (return, throw, goto, break, continue) begins, in order: asked for every
        branch around every release, so read once per unit rather than per branch."""
        return sorted(node.start_byte for node in self.walk.of_type(syn.JUMPS))

    def has_jump_in(self, node: Node) -> bool:
        """Whether a jump of this body lies within ``node`` (not within a nested function or lambda)."""
        starts = self.jump_starts
        index = bisect_left(starts, node.start_byte)
        return index < len(starts) and starts[index] < node.end_byte

    @cached_property
    def parameter_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in parameters(self.node))

    @cached_property
    def lambdas(self) -> dict[str, Node]:
        """Locals bound to a lambda (``auto cleanup = [&]() { cudaFree(p); };``): name -> the lambda's body. A name
        bound to two lambdas is left out (which one a call runs is not known here)."""
        found: dict[str, Node] = {}
        twice: set[str] = set()
        for node in self.walk.of_type(_INIT_DECLARATOR):
            value = syn.strip(node.child_by_field_name("value"))
            identifier = syn.declared_identifier(node.child_by_field_name("declarator"))
            if value is None or value.type != "lambda_expression" or identifier is None:
                continue
            name = syn.text(identifier)
            body = value.child_by_field_name("body")
            if name in found:
                twice.add(name)
            elif body is not None:
                found[name] = body
        return {name: body for name, body in found.items() if name not in twice}

    def declarations_of(self, name: str) -> list[tuple[int, int, Node]]:
        """Where each declaration of ``name`` in this body is in scope, as (start byte, end byte, declared
        identifier): from the declaration to the end of its block, a parameter's over the whole body."""
        return self._declarations.get(name, [])

    @cached_property
    def _declarations(self) -> dict[str, list[tuple[int, int, Node]]]:
        # Every name's at once: one walk of the body, where one per name asked for was a tenth of the pairing.
        return _declarations(self.node, self.body, self.walk)

    def declaration_in_scope(self, name: str, node: Node) -> Node | None:
        """The declared identifier that ``name`` means at ``node``: the innermost declaration whose scope holds it
        (a local declared in a nested block shadows the outer one there); None if none does."""
        holding = [(start, identifier) for start, end, identifier in self.declarations_of(name) if start <= node.start_byte < end]
        return max(holding, key=lambda pair: pair[0])[1] if holding else None

    def is_local(self, name: str) -> bool:
        variable = self.variables.get(name)
        return variable is not None and variable.local

    def _variables(self) -> dict[str, Variable]:
        found: dict[str, Variable] = {}
        for parameter in parameter_declarations(self.node):
            inner = parameter.child_by_field_name("declarator")
            identifier = syn.declared_identifier(inner)
            if identifier is not None:
                found[syn.text(identifier)] = Variable(local=not syn.is_reference_declarator(inner))
        for node in self.walk.of_type(_DECLARATIONS):
            shared = syn.has_storage(node, frozenset({"static", "extern", "thread_local", "__shared__"}))
            for target, identifier in _declared(node):
                name = syn.text(identifier)
                local = not shared and not syn.is_reference_declarator(target)
                # A name declared twice (shadowing) counts as local only if every declaration is.
                previous = found.get(name)
                found[name] = Variable(local=local and (previous is None or previous.local))
        return found


class StepFacts:
    """What one step contains: calls, deletes, assignments, and identifier occurrences by name."""

    def __init__(self, step: Step, walk: syn.Walk | None = None) -> None:
        self.calls: list[Node] = []
        self.deletes: list[Node] = []
        self.news: list[Node] = []
        self.assignments: list[Node] = []
        self.declarators: list[Node] = []
        self.names: dict[str, list[tuple[Node, bool]]] = {}  # name -> (occurrence, inside a lambda)
        for root in step.nodes:
            if root is None:
                continue
            span = walk.span(root) if walk is not None else None
            if span is None:
                self._scan(root, [(root, False)])
            else:
                self._scan_walked(root, walk, *span)

    def _scan_walked(self, root: Node, walk: syn.Walk, start: int, end: int) -> None:
        """:meth:`_scan` of ``root`` from the body's walk, which holds its nodes up to nested code: only a lambda's
        own nodes are read from the tree (nested functions and classes are not entered)."""
        nodes, types = walk.nodes, walk.types
        for index in range(start, end):
            node, kind = nodes[index], types[index]
            self._record(node, kind, False)
            if kind == "lambda_expression" and index != start:
                self._scan(root, [(child, True) for child in reversed(node.named_children)])

    def _scan(self, root: Node, stack: list[tuple[Node, bool]]) -> None:
        while stack:
            node, in_lambda = stack.pop()
            kind = node.type
            self._record(node, kind, in_lambda)
            if kind in ("function_definition", "class_specifier", "struct_specifier") and node is not root:
                continue
            nested = in_lambda or kind == "lambda_expression"
            stack.extend((child, nested) for child in reversed(node.named_children))

    def _record(self, node: Node, kind: str, in_lambda: bool) -> None:
        if kind == "identifier":
            self.names.setdefault(syn.text(node), []).append((node, in_lambda))
        elif kind == "type_identifier" and _in_vexing_parse(node):
            self.names.setdefault(syn.text(node), []).append((node, True))
        elif not in_lambda:
            if kind == "call_expression":
                self.calls.append(node)
            elif kind == "delete_expression":
                self.deletes.append(node)
            elif kind == "new_expression":
                self.news.append(node)
            elif kind == "assignment_expression":
                self.assignments.append(node)
            elif kind == "init_declarator":
                self.declarators.append(node)


def _declarations(function: Node, body: Node, walk: syn.Walk) -> dict[str, list[tuple[int, int, Node]]]:
    found: dict[str, list[tuple[int, int, Node]]] = {}
    for parameter in parameter_declarations(function):
        identifier = syn.declared_identifier(parameter.child_by_field_name("declarator"))
        if identifier is not None:
            found.setdefault(syn.text(identifier), []).append((body.start_byte, body.end_byte, identifier))
    for node in walk.of_type(_DECLARATIONS):
        for _, identifier in _declared(node):
            found.setdefault(syn.text(identifier), []).append((identifier.start_byte, _scope_of(node).end_byte, identifier))
    return found


def _declared(declaration: Node) -> Iterator[tuple[Node, Node]]:
    """Each declarator of a declaration (or a range ``for``) that declares a name: (the declarator, its identifier)."""
    for index, child in enumerate(declaration.children):
        if declaration.field_name_for_child(index) != "declarator":
            continue
        target = child.child_by_field_name("declarator") if child.type == "init_declarator" else child
        identifier = syn.declared_identifier(target)
        if identifier is not None:
            yield target, identifier


#: Nodes a declaration may sit in without them ending its scope: its block or statement is further up.
_SCOPE_TRANSPARENT = frozenset(
    {"condition_clause", "case_statement", "labeled_statement", "attributed_statement",
     "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"}
)


def _scope_of(declaration: Node) -> Node:
    """The node a declaration's scope ends with: its block, its ``for`` or ``if`` (a declaration in the
    statement's head), or the ``switch`` body of its ``case``; ``#ifdef`` and labels do not end it."""
    if declaration.type == "for_range_loop":
        return declaration
    scope = declaration.parent
    while scope is not None and scope.type in _SCOPE_TRANSPARENT and scope.parent is not None:
        scope = scope.parent
    return scope if scope is not None else declaration


def _in_vexing_parse(node: Node) -> bool:
    """``std::unique_ptr<T, D> p(ptr, deleter);`` parses as a function declaration whose "parameter types" are
    the constructor's arguments."""
    parameter = node.parent
    if parameter is None or parameter.type != "parameter_declaration":
        return False
    declarator = parameter.parent.parent if parameter.parent is not None else None
    declaration = declarator.parent if declarator is not None else None
    return (
        declarator is not None
        and declarator.type == "function_declarator"
        and declaration is not None
        and declaration.type == "declaration"
        and _inside_function_body(declaration)
    )


def _inside_function_body(node: Node) -> bool:
    current = node.parent
    while current is not None:
        if current.type == "compound_statement":
            return True
        current = current.parent
    return False


def parameter_declarations(function: Node) -> list[Node]:
    """The parameter declarations of a function definition or a lambda."""
    declarator = function.child_by_field_name("declarator")
    parameters = None
    while declarator is not None and parameters is None:
        parameters = declarator.child_by_field_name("parameters")
        declarator = declarator.child_by_field_name("declarator")
    return list(parameters.named_children) if parameters is not None else []


def parameters(function: Node) -> list[tuple[str, bool]]:
    """Each parameter's name, and whether it is a reference (``Detector*& p``: the callee can reset or
    delete what the caller's variable holds)."""
    found = []
    for parameter in parameter_declarations(function):
        if parameter.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        declarator = parameter.child_by_field_name("declarator")
        identifier = syn.declared_identifier(declarator)
        found.append((syn.text(identifier) if identifier is not None else "", syn.is_reference_declarator(declarator)))
    return found


# -- acquisitions and findings ---------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    code: str
    node: Node
    message: str


class Target(enum.Enum):
    TRACKED = "tracked"
    ESCAPED = "escaped"
    DISCARDED = "discarded"


@dataclass
class Acquisition:
    unit: Unit
    step: Step
    call: Node  # the call or new-expression
    row: Acquire
    target: Target
    variable: str = ""  # the local holding the handle (TRACKED)
    key: str = ""  # for a capture: the stream expression
    status: frozenset[str] = frozenset()  # variables holding the call's status code
    escaped_into: Node | None = None  # for ESCAPED: the expression that now holds it

    @property
    def kind(self) -> Kind:
        return self.row.kind
