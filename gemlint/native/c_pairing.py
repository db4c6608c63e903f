"""GEM301–GEM306 for C, C++ and CUDA: every acquisition of the resource table, followed on every path.

For each function (and lambda) body the control-flow graph is built once
(:mod:`gemlint.native.c_cfg`); every acquiring call is then classified:

* its handle goes into a local variable: the paths from the call are searched
  (:func:`gemlint.native.paths.find_leak`) for an exit reached before a release,
  an escape, or a failure test of the acquisition;
* its handle goes anywhere else (a member, a global, a static, an
  out-parameter, a container, a smart pointer, the return value): it escapes
  at once and is not followed;
* its result is thrown away (``malloc(n);``): a leak on the spot.

A release of the wrong kind on a path counts as the release and is reported
once, as GEM303. Members acquired in one function and released in another
(a constructor and its destructor) are checked for the same mismatch across
the file.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Hashable, Iterator

from gemlint.frontends.native import NativeDocument, Node, function_nodes
from gemlint.native import c_syntax as syn
from gemlint.native.c_cfg import CfgBuilder, Macros, condition_parts, file_macros
from gemlint.native.paths import Effect, Graph, Outcome, Step, StepKind, assumptions_at, find_leak
from gemlint.native.resources import (
    ACQUIRES,
    CHECK_WRAPPERS,
    RELEASES,
    MEMORY_KINDS,
    MISMATCH_CODE,
    NULL_VALUES,
    SUCCESS_VALUES,
    Acquire,
    Kind,
    Release,
    acquires_by_name,
    release_for,
    releases_by_name,
)

#: Calls that take ownership of what they are given (smart pointers, tensors over foreign memory, moves).
OWNER_CALLS = frozenset(
    {"make_unique", "make_shared", "unique_ptr", "shared_ptr", "from_blob", "move", "forward", "swap", "exchange",
     "make_pair", "make_tuple", "tie", "DataPtr", "InefficientStdFunctionContext", "make_data_ptr", "py::capsule",
     "capsule", "PyCapsule_New", "Py_BuildValue", "PyLong_FromVoidPtr"}
)
_RELEASE_WORDS = re.compile(r"free|release|destroy|delete|dealloc|dispose|cleanup|clean_up|deallocate", re.IGNORECASE)
_API_PREFIX = re.compile(
    r"^(cuda|cu[A-Z]|cublas|cudnn|cufft|curand|cusparse|cusolver|cutlass|nccl|nvrtc|nvtx|nvjpeg|hip|mem(cpy|set|move|cmp)|"
    r"(f|s|sn|v)?printf|puts|fputs|fwrite|fread|str(len|cpy|ncpy|cmp|ncmp|cat)|assert|std::(mem|fill|copy|printf|cout)|"
    r"thrust::|cub::)"
)
_ALL_CAPS = re.compile(r"^[A-Z0-9_]+$")
#: Words in the name of an unknown function that say it keeps what it is given.
_OWNER_WORDS = (
    "set", "regist", "add", "store", "put", "push", "insert", "append", "attach", "adopt", "track", "emplace", "own",
    "wrap", "enqueue", "submit", "thread", "capsule", "keep", "save", "cache", "assign", "bind", "manage", "retain",
)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_LAST_ERROR = frozenset({"cudaGetLastError", "cudaPeekAtLastError"})
_STATEMENT_TYPES = frozenset(
    {"expression_statement", "declaration", "condition_clause", "if_statement", "while_statement", "for_statement",
     "do_statement", "switch_statement", "case_statement", "compound_statement", "for_range_loop", "translation_unit"}
)
_ESCAPING_PARENTS = frozenset(
    {"initializer_list", "initializer_pair", "field_initializer", "new_expression", "compound_literal_expression",
     "lambda_capture_specifier", "throw_statement", "co_return_statement", "co_yield_statement", "return_statement"}
)


@dataclass(frozen=True)
class Finding:
    code: str
    node: Node
    message: str


class Use(enum.Enum):
    USE = "use"
    ESCAPE = "escape"
    RELEASE = "release"


# -- the function being analysed ------------------------------------------------------------
@dataclass
class Variable:
    local: bool  # a by-value local or parameter whose lifetime ends with the function


class Unit:
    """One function or lambda body: its variables, graph, and the facts of each step."""

    def __init__(self, analysis: "FileAnalysis", node: Node, body: Node) -> None:
        self.analysis = analysis
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
    def graph(self) -> Graph:
        return CfgBuilder(self.analysis.macros).build_function(self.body, is_main=self.name in ("main", "wmain"))

    @cached_property
    def facts(self) -> dict[int, "StepFacts"]:
        return {step.index: StepFacts(step) for step in self.graph.steps if step.nodes}

    def is_local(self, name: str) -> bool:
        variable = self.variables.get(name)
        return variable is not None and variable.local

    def _variables(self) -> dict[str, Variable]:
        found: dict[str, Variable] = {}
        declarator = self.node.child_by_field_name("declarator")
        parameters = None
        while declarator is not None and parameters is None:
            parameters = declarator.child_by_field_name("parameters")
            declarator = declarator.child_by_field_name("declarator")
        for parameter in parameters.named_children if parameters is not None else ():
            inner = parameter.child_by_field_name("declarator")
            identifier = syn.declared_identifier(inner)
            if identifier is not None:
                found[syn.text(identifier)] = Variable(local=not syn.is_reference_declarator(inner))
        for node in syn.descendants(self.body):
            if node.type in ("declaration", "for_range_loop"):
                shared = syn.has_storage(node, frozenset({"static", "extern", "thread_local", "__shared__"}))
                for index, child in enumerate(node.children):
                    if node.field_name_for_child(index) != "declarator":
                        continue
                    target = child.child_by_field_name("declarator") if child.type == "init_declarator" else child
                    identifier = syn.declared_identifier(target)
                    if identifier is not None:
                        name = syn.text(identifier)
                        local = not shared and not syn.is_reference_declarator(target)
                        # A name declared twice (shadowing) counts as local only if every declaration is.
                        previous = found.get(name)
                        found[name] = Variable(local=local and (previous is None or previous.local))
        return found


class StepFacts:
    """What one step contains: calls, deletes, assignments, and identifier occurrences by name."""

    def __init__(self, step: Step) -> None:
        self.calls: list[Node] = []
        self.deletes: list[Node] = []
        self.news: list[Node] = []
        self.assignments: list[Node] = []
        self.declarators: list[Node] = []
        self.names: dict[str, list[tuple[Node, bool]]] = {}  # name -> (occurrence, inside a lambda)
        for root in step.nodes:
            if root is None:
                continue
            self._scan(root)

    def _scan(self, root: Node) -> None:
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, in_lambda = stack.pop()
            kind = node.type
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
            if kind in ("function_definition", "class_specifier", "struct_specifier") and node is not root:
                continue
            nested = in_lambda or kind == "lambda_expression"
            stack.extend((child, nested) for child in reversed(node.named_children))


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


# -- acquisitions -------------------------------------------------------------------------------
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


class FileAnalysis:
    """Every GEM3xx finding of one file, computed once and shared by the rules of the family."""

    def __init__(self, document: NativeDocument) -> None:
        self.document = document
        self.macros: Macros = file_macros(document.root)
        self.findings: list[Finding] = []
        self._mismatches: set[tuple[int, int]] = set()
        self._summaries: dict[tuple[int, int], tuple[Use, Kind | None]] = {}
        self._step_acquisitions: dict[tuple[int, int, int], list[Acquisition]] = {}
        self._alias_cache: dict[tuple[int, str], frozenset[str]] = {}

    # -- units ----------------------------------------------------------------------------
    @cached_property
    def units(self) -> list[Unit]:
        units = []
        for node in function_nodes(self.document):
            body = node.child_by_field_name("body")
            if body is not None and body.type == "compound_statement":
                units.append(Unit(self, node, body))
        return units

    @cached_property
    def functions_by_name(self) -> dict[str, list[Unit]]:
        table: dict[str, list[Unit]] = {}
        for unit in self.units:
            if unit.node.type == "function_definition":
                table.setdefault(syn.last_component(unit.name), []).append(unit)
        return table

    @cached_property
    def ends_capture_somewhere(self) -> frozenset[str]:
        """Functions of the file that end a stream capture (a begin/end pair split over two methods)."""
        names = set()
        for unit in self.units:
            for node in syn.descendants(unit.body):
                if node.type == "call_expression" and syn.last_component(syn.callee_name(node)) in ("cudaStreamEndCapture", "cuStreamEndCapture"):
                    names.add(unit.name)
        return frozenset(names)

    # -- running -------------------------------------------------------------------------
    def run(self) -> list[Finding]:
        if not _ACQUIRE_MARKERS.search(self.document.data):
            return self.findings
        member_acquisitions: list[Acquisition] = []
        for unit in self.units:
            if not _ACQUIRE_MARKERS.search(unit.source):
                continue  # nothing in this body can acquire: do not build its graph
            try:
                acquisitions = list(self._acquisitions(unit))
                for acquisition in acquisitions:
                    self._check(acquisition)
                    if acquisition.target is Target.ESCAPED:
                        member_acquisitions.append(acquisition)
            except RecursionError:
                continue  # a body nested too deeply to follow: skip it rather than guess
        self._check_member_releases(member_acquisitions)
        return self.findings

    def _check(self, acquisition: Acquisition) -> None:
        row = acquisition.row
        if acquisition.target is Target.DISCARDED:
            self._report(
                row.kind.leak_code,
                acquisition.call,
                f"the result of `{row.name}` ({row.kind.description}) is discarded, so it can never be released",
            )
            return
        if acquisition.target is not Target.TRACKED:
            return
        if row.kind is Kind.CAPTURE and not self._capture_ended_in(acquisition):
            return
        tracker = CTracker(self, acquisition)
        leak = find_leak(acquisition.step, tracker, state=True, assumed=assumptions_at(acquisition.unit.graph, acquisition.step))
        if leak is None:
            return
        if row.kind is Kind.CAPTURE:
            message = (
                f"the stream capture begun on `{acquisition.key}` is not ended when the function {leak.reason}; "
                f"call `{release_for(row)}` on every path (the stream stays in capture mode and the graph is lost)"
            )
        elif leak.step.kind is StepKind.EXIT:
            message = (
                f"`{acquisition.variable}` holds {row.kind.description} from `{row.name}` that is not released "
                f"when the function {leak.reason}; call `{release_for(row)}` on that path or hand it to an owner"
            )
        else:
            message = (
                f"`{acquisition.variable}` holds {row.kind.description} from `{row.name}` that is lost: "
                f"{leak.reason} before `{release_for(row)}` releases it"
            )
        self._report(row.kind.leak_code, acquisition.call, message)

    def _capture_ended_in(self, acquisition: Acquisition) -> bool:
        """A function that begins a capture and never ends one, while another function of the file does,
        is one half of a begin/end API (``capture_begin``/``capture_end``): the capture escapes to the other half."""
        if acquisition.unit.name in self.ends_capture_somewhere:
            return True
        return not self.ends_capture_somewhere

    def _report(self, code: str, node: Node, message: str) -> None:
        self.findings.append(Finding(code, node, message))

    def report_mismatch(self, release_node: Node, release: Release, acquired: Acquire, variable: str) -> None:
        key = (release_node.start_byte, release_node.end_byte)
        if key in self._mismatches:
            return
        self._mismatches.add(key)
        self._report(
            MISMATCH_CODE,
            release_node,
            f"`{release.name}` releases `{variable}`, which holds {acquired.kind.description} from `{acquired.name}`; "
            f"use `{release_for(acquired)}`",
        )

    # -- finding acquisitions --------------------------------------------------------------------
    def _acquisitions(self, unit: Unit) -> Iterator[Acquisition]:
        for step in unit.graph.steps:
            yield from self.step_acquisitions(unit, step)

    def step_acquisitions(self, unit: Unit, step: Step) -> list[Acquisition]:
        key = (unit.node.start_byte, unit.node.end_byte, step.index)
        cached = self._step_acquisitions.get(key)
        if cached is not None:
            return cached
        found: list[Acquisition] = []
        facts = unit.facts.get(step.index)
        if facts is not None:
            table = acquires_by_name()
            for call in facts.calls:
                if syn.is_method_call(call):
                    continue
                name = syn.callee_name(call)
                row = table.get(syn.last_component(name))
                if row is None or row.name in ("new", "new[]") or not _plain_qualifier(name):
                    continue
                acquisition = self._classify_call(unit, step, call, row)
                if acquisition is not None:
                    found.append(acquisition)
            for new in facts.news:
                if new.child_by_field_name("placement") is not None:
                    continue
                is_array = any(child.type == "new_declarator" for child in new.named_children)
                row = table["new[]" if is_array else "new"]
                found.append(
                    self._classify_returned(unit, step, new, row, has_arguments=new.child_by_field_name("arguments") is not None)
                )
        self._step_acquisitions[key] = found
        return found

    def _classify_call(self, unit: Unit, step: Step, call: Node, row: Acquire) -> Acquisition | None:
        args = syn.arguments(call)
        if row.kind is Kind.CAPTURE:
            if row.key is None or len(args) <= row.key:
                return None
            return Acquisition(unit, step, call, row, Target.TRACKED, key=syn.normalized(args[row.key]), status=_status_variables(call))
        if row.out is None:
            return self._classify_returned(unit, step, call, row)
        if len(args) <= row.out:
            return None
        handle = args[row.out]
        target = syn.address_of(handle)
        if target is not None and target.type == "identifier" and unit.is_local(syn.text(target)):
            return Acquisition(unit, step, call, row, Target.TRACKED, variable=syn.text(target), status=_status_variables(call))
        return Acquisition(unit, step, call, row, Target.ESCAPED, escaped_into=target if target is not None else syn.strip(handle))

    def _classify_returned(self, unit: Unit, step: Step, node: Node, row: Acquire, *, has_arguments: bool = False) -> Acquisition:
        child, parent = node, node.parent
        while parent is not None and syn.is_transparent_parent(parent, child):
            child, parent = parent, parent.parent
        if parent is None:
            return Acquisition(unit, step, node, row, Target.ESCAPED)
        if parent.type == "init_declarator" and parent.child_by_field_name("value") == child:
            declarator = parent.child_by_field_name("declarator")
            identifier = syn.declared_identifier(declarator)
            if identifier is not None and unit.is_local(syn.text(identifier)) and not syn.is_reference_declarator(declarator):
                return Acquisition(unit, step, node, row, Target.TRACKED, variable=syn.text(identifier))
            return Acquisition(unit, step, node, row, Target.ESCAPED, escaped_into=identifier)
        if parent.type == "assignment_expression" and parent.child_by_field_name("right") == child:
            left = syn.strip(parent.child_by_field_name("left"))
            if syn.operator(parent) == "=" and left is not None and left.type == "identifier" and unit.is_local(syn.text(left)):
                if self.classify(unit, parent) is Use.ESCAPE:  # `x.adopt(c = new T)`: the value goes on
                    return Acquisition(unit, step, node, row, Target.ESCAPED, escaped_into=parent)
                return Acquisition(unit, step, node, row, Target.TRACKED, variable=syn.text(left))
            return Acquisition(unit, step, node, row, Target.ESCAPED, escaped_into=left)
        if parent.type == "expression_statement" and not (row.name == "new" and has_arguments):
            # `new Widget(parent)` registers itself with its argument in many frameworks; a bare `new T;` does not.
            return Acquisition(unit, step, node, row, Target.DISCARDED)
        return Acquisition(unit, step, node, row, Target.ESCAPED)

    # -- what a call does with an argument ---------------------------------------------------------
    def argument_use(self, call: Node, index: int, address: bool, depth: int = 0) -> tuple[Use, Kind | None]:
        if syn.is_kernel_launch(call):
            return Use.USE, None
        name = syn.callee_name(call)
        last = syn.last_component(name)
        if syn.is_method_call(call):
            return (Use.RELEASE, None) if _RELEASE_WORDS.search(last) else (Use.ESCAPE, None)
        if last in acquires_by_name() or last in releases_by_name() or last in CHECK_WRAPPERS:
            return Use.USE, None
        if last in OWNER_CALLS or name in OWNER_CALLS or _constructs_declared_type(call, name):
            return Use.ESCAPE, None
        summary = self._summary(last, index, address, depth)
        if summary is not None:
            return summary
        if _RELEASE_WORDS.search(last):
            return Use.RELEASE, None
        if _API_PREFIX.match(name) or _ALL_CAPS.match(last):
            return Use.USE, None
        if any(word.lower().startswith(_OWNER_WORDS) for word in _WORDS.findall(last)):
            return Use.ESCAPE, None
        function = call.child_by_field_name("function")
        if function is not None and function.type == "template_function" and last[:1].isalpha():
            return Use.ESCAPE, None  # a constructor of a class template, e.g. Holder<T>(p)
        if last[:1].isupper() and any(ch.islower() for ch in last) and "::" in name:
            return Use.ESCAPE, None  # a qualified constructor, e.g. at::DataPtr(p, ...)
        if address:
            return Use.ESCAPE, None  # an out-parameter: the callee may store or free through it
        return Use.USE, None

    def _summary(self, name: str, index: int, address: bool, depth: int) -> tuple[Use, Kind | None] | None:
        """What a function defined in this file does with its parameter ``index``: releases, keeps, or uses it."""
        units = self.functions_by_name.get(name)
        if not units or depth > 2:
            return None
        results = []
        for unit in units:
            key = (unit.node.start_byte, index * 2 + int(address))
            if key not in self._summaries:
                self._summaries[key] = (Use.USE, None)  # recursion guard
                self._summaries[key] = self._summarize(unit, index, address, depth)
            results.append(self._summaries[key])
        for wanted in (Use.RELEASE, Use.ESCAPE):
            for use, kind in results:
                if use is wanted:
                    return use, kind
        return Use.USE, None

    def _summarize(self, unit: Unit, index: int, address: bool, depth: int) -> tuple[Use, Kind | None]:
        names = _parameter_names(unit.node)
        if index >= len(names) or not names[index]:
            return (Use.ESCAPE, None) if address else (Use.USE, None)
        if address:
            return Use.ESCAPE, None  # the callee writes through a pointer to the handle: treat it as taking it over
        parameter = names[index]
        escaped = False
        for facts in unit.facts.values():
            for call in facts.calls:
                released = _released_argument(call)
                if released is not None:
                    argument, row = released
                    if argument.type == "identifier" and syn.text(argument) == parameter:
                        return Use.RELEASE, row.kind
            for delete in facts.deletes:
                operand = _delete_operand(delete)
                if operand is not None and operand.type == "identifier" and syn.text(operand) == parameter:
                    return Use.RELEASE, Kind.NEW_ARRAY if _is_array_delete(delete) else Kind.NEW_OBJECT
            for occurrence, in_lambda in facts.names.get(parameter, ()):
                use = Use.ESCAPE if in_lambda else self.classify(unit, occurrence, depth + 1)
                if use is Use.RELEASE:
                    return Use.RELEASE, None
                if use is Use.ESCAPE:
                    escaped = True
        return (Use.ESCAPE, None) if escaped else (Use.USE, None)

    # -- what an occurrence of a variable does -----------------------------------------------------
    def classify(self, unit: Unit, occurrence: Node, depth: int = 0) -> Use:
        node = occurrence
        address = False
        while True:
            parent = node.parent
            if parent is None:
                return Use.USE
            kind = parent.type
            if kind in ("parenthesized_expression", "cast_expression", "comma_expression"):
                node = parent
                continue
            if kind == "conditional_expression":
                if parent.child_by_field_name("condition") == node:
                    return Use.USE
                node = parent
                continue
            if kind == "pointer_expression":
                if syn.operator(parent) == "&":
                    address = True
                    node = parent
                    continue
                return Use.USE
            if kind in ("subscript_expression", "field_expression", "unary_expression", "sizeof_expression",
                        "update_expression", "alignof_expression", "delete_expression", "subscript_argument_list"):
                return Use.USE
            if kind == "binary_expression":
                if syn.operator(parent) in ("+", "-"):
                    node = parent  # pointer arithmetic still denotes the same block
                    continue
                return Use.USE
            if kind == "argument_list":
                owner = parent.parent
                if owner is not None and owner.type == "call_expression":
                    if syn.is_transparent_parent(parent, node):
                        node = owner
                        continue
                    index = [c for c in parent.named_children if c.type != "comment"].index(node)
                    return self.argument_use(owner, index, address, depth)[0]
                return Use.ESCAPE  # `Holder h(p)`, `new Holder(p)`, `member_(p)`
            if kind in _ESCAPING_PARENTS:
                return Use.ESCAPE
            if kind == "init_declarator":
                if parent.child_by_field_name("value") != node:
                    return Use.USE
                declarator = parent.child_by_field_name("declarator")
                identifier = syn.declared_identifier(declarator)
                if not address and identifier is not None and unit.is_local(syn.text(identifier)) and not syn.is_reference_declarator(declarator):
                    return Use.USE  # a local alias: tracked through `aliases`
                return Use.ESCAPE
            if kind == "assignment_expression":
                if parent.child_by_field_name("right") != node:
                    return Use.USE
                left = syn.strip(parent.child_by_field_name("left"))
                if (
                    not address
                    and syn.operator(parent) == "="
                    and left is not None
                    and left.type == "identifier"
                    and unit.is_local(syn.text(left))
                ):
                    return Use.USE
                return Use.ESCAPE
            if kind in _STATEMENT_TYPES:
                return Use.USE
            node = parent

    def aliases(self, unit: Unit, variable: str) -> frozenset[str]:
        """``variable`` and the locals copied from it anywhere in the function (``float* q = p;``, ``q = (T*)p;``)."""
        key = (unit.node.start_byte, variable)
        cached = self._alias_cache.get(key)
        if cached is not None:
            return cached
        names = {variable}
        changed = True
        while changed:
            changed = False
            for facts in unit.facts.values():
                for declarator in facts.declarators:
                    value = syn.strip(declarator.child_by_field_name("value"))
                    identifier = syn.declared_identifier(declarator.child_by_field_name("declarator"))
                    if value is not None and value.type == "identifier" and syn.text(value) in names and identifier is not None:
                        name = syn.text(identifier)
                        if unit.is_local(name) and name not in names:
                            names.add(name)
                            changed = True
                for assignment in facts.assignments:
                    right = syn.strip(assignment.child_by_field_name("right"))
                    left = syn.strip(assignment.child_by_field_name("left"))
                    if (
                        syn.operator(assignment) == "="
                        and right is not None
                        and right.type == "identifier"
                        and syn.text(right) in names
                        and left is not None
                        and left.type == "identifier"
                        and unit.is_local(syn.text(left))
                        and syn.text(left) not in names
                    ):
                        names.add(syn.text(left))
                        changed = True
        result = frozenset(names)
        self._alias_cache[key] = result
        return result

    # -- members acquired in one function and released in another -------------------------------------
    def _check_member_releases(self, escaped: list[Acquisition]) -> None:
        kinds: dict[tuple[str, str], set[Kind]] = {}
        labels: dict[tuple[str, str], Acquire] = {}
        for acquisition in escaped:
            if acquisition.kind not in MEMORY_KINDS:
                continue
            key = self._member_key(acquisition.unit, acquisition.escaped_into)
            if key is not None:
                kinds.setdefault(key, set()).add(acquisition.kind)
                labels[key] = acquisition.row
        if not kinds:
            return
        for unit in self.units:
            if not _RELEASE_MARKERS.search(unit.source):
                continue
            for facts in unit.facts.values():
                releases: list[tuple[Node, Node, Release]] = []
                for call in facts.calls:
                    released = _released_argument(call)
                    if released is not None:
                        releases.append((call, released[0], released[1]))
                for delete in facts.deletes:
                    operand = _delete_operand(delete)
                    if operand is not None:
                        releases.append((delete, operand, releases_by_name()["delete[]" if _is_array_delete(delete) else "delete"]))
                for node, argument, row in releases:
                    key = self._member_key(unit, argument)
                    held = kinds.get(key) if key is not None else None
                    if held and len(held) == 1 and row.kind in MEMORY_KINDS and row.name != "realloc":
                        (kind,) = held
                        if kind is not row.kind:
                            self.report_mismatch(node, row, labels[key], syn.text(argument))

    def _member_key(self, unit: Unit, expression: Node | None) -> tuple[str, str] | None:
        """(class, member) for ``member_`` / ``this->member_`` inside a method, ("", name) for a global."""
        expression = syn.strip(expression)
        if expression is None:
            return None
        if expression.type == "field_expression":
            obj = syn.strip(expression.child_by_field_name("argument"))
            if obj is None or obj.type != "this":
                return None
            return (self._class_of(unit), syn.text(expression.child_by_field_name("field")))
        if expression.type == "identifier" and syn.text(expression) not in unit.variables:
            return (self._class_of(unit), syn.text(expression))
        return None

    def _class_of(self, unit: Unit) -> str:
        if "::" in unit.name:
            return unit.name.rsplit("::", 1)[0]
        current = unit.node.parent
        while current is not None:
            if current.type in ("class_specifier", "struct_specifier"):
                return syn.text(current.child_by_field_name("name"))
            current = current.parent
        return ""


# -- the tracker: what each step does to one acquisition ---------------------------------------------
class CTracker:
    def __init__(self, analysis: FileAnalysis, acquisition: Acquisition) -> None:
        self.analysis = analysis
        self.acquisition = acquisition
        self.unit = acquisition.unit
        self.names = analysis.aliases(self.unit, acquisition.variable) if acquisition.variable else frozenset()
        self.guards = self._release_guards()

    def _release_guards(self) -> dict[tuple[int, int], bool]:
        """Tests that decide whether the resource is released (``if (sz > sizeof(buf)) free(bp);``): the
        author knows when it is held, so a path that skips such a release is taken to not hold it.
        Maps the test's span to the branch label that skips the release."""
        guards: dict[tuple[int, int], bool] = {}
        for facts in self.unit.facts.values():
            releases = [c for c in facts.calls if (r := _released_argument(c)) is not None and self._denotes(r[0], r[1])]
            releases += [d for d in facts.deletes if (o := _delete_operand(d)) is not None and self._denotes(o, None)]
            for release in releases:
                child, parent = release, release.parent
                while parent is not None and parent != self.unit.body:
                    if parent.type == "if_statement" and parent.child_by_field_name("condition") != child and _falls_through(child):
                        _, condition = condition_parts(parent.child_by_field_name("condition"))
                        if condition is not None:
                            in_consequence = parent.child_by_field_name("consequence") == child
                            guards[(condition.start_byte, condition.end_byte)] = not in_consequence
                    child, parent = parent, parent.parent
        return guards

    def effect(self, step: Step, state: Hashable) -> Effect:
        facts = self.unit.facts.get(step.index)
        if facts is None:
            return Effect(Outcome.NOTHING, state)
        acquisition = self.acquisition
        # Releases, right or wrong.
        for call in facts.calls:
            released = _released_argument(call)
            if released is None:
                continue
            argument, row = released
            if not self._denotes(argument, row):
                continue
            if row.kind is acquisition.kind or (row.name == "realloc" and acquisition.kind is Kind.HEAP_MEMORY):
                return Effect(Outcome.RELEASED)
            if row.kind in MEMORY_KINDS and acquisition.kind in MEMORY_KINDS:
                self.analysis.report_mismatch(call, row, acquisition.row, syn.text(argument))
                return Effect(Outcome.RELEASED)
        for delete in facts.deletes:
            operand = _delete_operand(delete)
            if operand is None or not self._denotes(operand, None):
                continue
            row = releases_by_name()["delete[]" if _is_array_delete(delete) else "delete"]
            if row.kind is acquisition.kind:
                return Effect(Outcome.RELEASED)
            if acquisition.kind in MEMORY_KINDS:
                self.analysis.report_mismatch(delete, row, acquisition.row, syn.text(operand))
            return Effect(Outcome.RELEASED)
        if acquisition.kind is Kind.CAPTURE:
            return Effect(Outcome.NOTHING, self._status_state(facts, step, state))
        # Escapes and releases through other functions.
        for name in self.names:
            for occurrence, in_lambda in facts.names.get(name, ()):
                if in_lambda:
                    return Effect(Outcome.ESCAPED)
                use = self.analysis.classify(self.unit, occurrence)
                if use is Use.ESCAPE:
                    return Effect(Outcome.ESCAPED)
                if use is Use.RELEASE:
                    return Effect(Outcome.RELEASED)
        # The last handle overwritten, or the acquisition running again.
        lost = self._lost(facts, step)
        if lost:
            return Effect(Outcome.LOST, reason=lost)
        return Effect(Outcome.NOTHING, self._status_state(facts, step, state))

    def _denotes(self, argument: Node, row: Release | None) -> bool:
        if self.acquisition.kind is Kind.CAPTURE:
            return row is not None and row.kind is Kind.CAPTURE and syn.normalized(argument) == self.acquisition.key
        argument = syn.strip(argument)
        if argument is None:
            return False
        if argument.type == "field_expression":  # cudaMalloc3D's cudaPitchedPtr: cudaFree(p.ptr)
            argument = syn.strip(argument.child_by_field_name("argument"))
        return argument is not None and argument.type == "identifier" and syn.text(argument) in self.names

    def _lost(self, facts: StepFacts, step: Step) -> str:
        if len(self.names) > 1:
            return ""  # another local still holds it
        variable = self.acquisition.variable
        line = step.line
        for acquisition in self._acquisitions_in(step):
            if acquisition.target is Target.TRACKED and acquisition.variable == variable:
                if acquisition.call == self.acquisition.call:
                    if _conditional_in_loop(acquisition.call):
                        return ""  # maybe not every iteration acquires: say nothing rather than guess
                    return f"the next loop iteration acquires into `{variable}` again at line {line}"
                return f"`{variable}` receives {acquisition.kind.description} again at line {line}"
        for assignment in facts.assignments:
            left = syn.strip(assignment.child_by_field_name("left"))
            if left is None or left.type != "identifier" or syn.text(left) != variable or syn.operator(assignment) != "=":
                continue
            right = assignment.child_by_field_name("right")
            if right is not None and any(n.type == "identifier" and syn.text(n) == variable for n in syn.descendants(right)):
                continue
            return f"`{variable}` is overwritten at line {line}"
        for declarator in facts.declarators:
            identifier = syn.declared_identifier(declarator.child_by_field_name("declarator"))
            if identifier is not None and syn.text(identifier) == variable and declarator.child_by_field_name("value") is not None:
                return f"`{variable}` is declared again at line {line}"
        return ""

    def _acquisitions_in(self, step: Step) -> list[Acquisition]:
        return self.analysis.step_acquisitions(self.unit, step)

    def _status_state(self, facts: StepFacts, step: Step, state: Hashable) -> Hashable:
        """The status variables stop describing the acquisition once they are assigned again."""
        if not state or not self.acquisition.status or step is self.acquisition.step:
            return state
        for assignment in facts.assignments:
            left = syn.strip(assignment.child_by_field_name("left"))
            if left is not None and syn.normalized(left) in self.acquisition.status:
                return False
        return state

    # -- failure tests ----------------------------------------------------------------------------
    def fails(self, step: Step, taken: bool, state: Hashable) -> bool:
        condition = step.condition
        if condition is None:
            return False
        call = self.acquisition.call
        if step.checked is not None:
            # An exiting macro: its exit edge is the failure of the call it wraps.
            checked = step.checked
            return taken and checked.start_byte <= call.start_byte and call.end_byte <= checked.end_byte
        value = self._failure_value(condition, bool(state))
        if value is not None:
            return value == taken
        return self.guards.get((condition.start_byte, condition.end_byte)) == taken

    def _failure_value(self, node: Node | None, status_valid: bool, depth: int = 0) -> bool | None:
        """The value of ``node`` for which the acquisition failed (or its handle is null); None if unrelated."""
        node = syn.strip(node)
        if node is None or depth > 20:
            return None
        subject = self._subject(node, status_valid)
        if subject == "status":
            return True
        if subject == "handle":
            return False
        kind = node.type
        if kind == "unary_expression" and syn.operator(node) in ("!", "not"):
            inner = self._failure_value(node.child_by_field_name("argument"), status_valid, depth + 1)
            return None if inner is None else not inner
        if kind == "binary_expression":
            op = syn.operator(node)
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op in ("==", "!="):
                for this, other in ((left, right), (right, left)):
                    subject = self._subject(syn.strip(this), status_valid)
                    if subject is None:
                        continue
                    value = syn.last_component(syn.normalized(syn.strip(other)))
                    if subject == "status":
                        if value in SUCCESS_VALUES or _SUCCESS.search(value):
                            return op == "!="
                        if value.startswith(("cudaError", "CUDA_ERROR")) and op == "==":
                            return True
                        return None
                    if value in NULL_VALUES:
                        return op == "=="
                    return None
                return None
            if op in ("&&", "||", "and", "or"):
                values = {self._failure_value(left, status_valid, depth + 1), self._failure_value(right, status_valid, depth + 1)}
                values.discard(None)
                return values.pop() if len(values) == 1 else None
            return None
        if kind in ("declaration", "init_declarator"):
            target = node.child_by_field_name("declarator")
            if target is not None and target.type == "init_declarator":
                target = target.child_by_field_name("declarator")
            identifier = syn.declared_identifier(target)
            if identifier is not None and syn.text(identifier) in self.names:
                return False
        return None

    def _subject(self, node: Node | None, status_valid: bool) -> str | None:
        """Whether ``node`` is the acquisition's status ("status") or its handle ("handle")."""
        if node is None:
            return None
        acquisition = self.acquisition
        if node == acquisition.call:
            return "handle" if acquisition.row.out is None and acquisition.kind is not Kind.CAPTURE else "status"
        if node.type in ("identifier", "field_expression"):
            name = syn.normalized(node)
            if status_valid and name in acquisition.status:
                return "status"
            if name in self.names:
                return "handle"
            return None
        if node.type == "assignment_expression":
            return self._subject(syn.strip(node.child_by_field_name("left")), status_valid) or self._subject(
                syn.strip(node.child_by_field_name("right")), status_valid
            )
        if node.type == "call_expression":
            name = syn.last_component(syn.callee_name(node))
            if name in CHECK_WRAPPERS and node.start_byte <= acquisition.call.start_byte and acquisition.call.end_byte <= node.end_byte:
                return "status"
            if name in _LAST_ERROR and not acquisition.status:
                return "status"
        return None


# -- helpers ----------------------------------------------------------------------------------------
def _plain_qualifier(name: str) -> bool:
    """``cudaMalloc``, ``::cudaMalloc`` and ``std::malloc`` are the C functions; ``pool::malloc`` is not."""
    if "::" not in name:
        return True
    return name.rsplit("::", 1)[0] in ("", "std")


def _released_argument(call: Node) -> tuple[Node, Release] | None:
    if syn.is_method_call(call):
        return None
    name = syn.callee_name(call)
    row = releases_by_name().get(syn.last_component(name))
    if row is None or not _plain_qualifier(name):
        return None
    args = syn.arguments(call)
    if len(args) <= row.arg:
        return None
    return args[row.arg], row


def _delete_operand(delete: Node) -> Node | None:
    operands = [c for c in delete.named_children if c.type != "comment"]
    return syn.strip(operands[-1]) if operands else None


def _is_array_delete(delete: Node) -> bool:
    return any(not child.is_named and syn.text(child) == "[" for child in delete.children)


_SUCCESS = re.compile(r"(?i)success|^k?ok$")
_CHECKING = re.compile(r"check|error|status|verify", re.IGNORECASE)


def _status_variables(call: Node) -> frozenset[str]:
    """The variable a call's status code is stored in: ``cudaError_t e = cudaMalloc(...)``, ``e = cudaMalloc(...)``,
    or through an error-check wrapper, ``status = check_cuda_status(cudaMalloc(...))``."""
    child, parent = call, call.parent
    while parent is not None:
        if syn.is_transparent_parent(parent, child):
            child, parent = parent, parent.parent
            continue
        wrapper = parent.parent if parent.type == "argument_list" else None
        if wrapper is not None and wrapper.type == "call_expression":
            name = syn.last_component(syn.callee_name(wrapper))
            if name in CHECK_WRAPPERS or _CHECKING.search(name):
                child, parent = wrapper, wrapper.parent
                continue
        break
    if parent is None:
        return frozenset()
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == child:
        identifier = syn.declared_identifier(parent.child_by_field_name("declarator"))
        return frozenset({syn.text(identifier)}) if identifier is not None else frozenset()
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == child:
        left = syn.strip(parent.child_by_field_name("left"))
        if left is not None and left.type in ("identifier", "field_expression"):  # `err = ...`, `result.error = ...`
            return frozenset({syn.normalized(left)})
    return frozenset()


_ACQUIRE_MARKERS = re.compile(
    rb"\b(?:" + b"|".join(re.escape(row.name.rstrip("[]")).encode() for row in ACQUIRES) + rb")\b"
)
_RELEASE_MARKERS = re.compile(
    rb"\b(?:" + b"|".join(re.escape(row.name.rstrip("[]")).encode() for row in RELEASES) + rb")\b"
)
_JUMPS = frozenset({"return_statement", "throw_statement", "goto_statement", "break_statement", "continue_statement"})


def _falls_through(branch: Node) -> bool:
    """A branch that never leaves by a jump: the code after the ``if`` runs whichever way it went."""
    return not any(node.type in _JUMPS for node in syn.descendants(branch))


_LOOP_TYPES = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})


def _conditional_in_loop(node: Node) -> bool:
    """``node`` runs only under a test inside its innermost loop (so not necessarily every iteration)."""
    child, parent = node, node.parent
    while parent is not None and parent.type not in _LOOP_TYPES:
        if parent.type == "if_statement" and parent.child_by_field_name("condition") != child:
            return True
        if parent.type in ("case_statement", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
            return True
        if parent.type == "conditional_expression" and parent.child_by_field_name("condition") != child:
            return True
        if parent.type == "binary_expression" and syn.operator(parent) in ("&&", "||") and parent.child_by_field_name("right") == child:
            return True
        if parent.type in ("function_definition", "lambda_expression"):
            return False
        child, parent = parent, parent.parent
    return False


def _constructs_declared_type(call: Node, name: str) -> bool:
    """``std::locale l = std::locale(loc, facet);``: the call constructs the declared type, which takes the argument."""
    child, parent = call, call.parent
    while parent is not None and syn.is_transparent_parent(parent, child):
        child, parent = parent, parent.parent
    if parent is None or parent.type != "init_declarator" or parent.child_by_field_name("value") != child:
        return False
    declaration = parent.parent
    declared = syn.name_of(declaration.child_by_field_name("type")) if declaration is not None else ""
    return bool(declared) and syn.last_component(declared) == syn.last_component(name)


def _parameter_names(function: Node) -> list[str]:
    declarator = function.child_by_field_name("declarator")
    parameters = None
    while declarator is not None and parameters is None:
        parameters = declarator.child_by_field_name("parameters")
        declarator = declarator.child_by_field_name("declarator")
    names = []
    for parameter in parameters.named_children if parameters is not None else ():
        if parameter.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        identifier = syn.declared_identifier(parameter.child_by_field_name("declarator"))
        names.append(syn.text(identifier) if identifier is not None else "")
    return names


def analyse(document: NativeDocument) -> list[Finding]:
    """The GEM3xx pairing findings of a document, computed once for all the rules that ask."""
    key = "gem3xx-pairing"
    if key not in document.cache:
        document.cache[key] = FileAnalysis(document).run()
    return document.cache[key]
