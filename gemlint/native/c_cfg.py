"""Builds the control-flow :class:`~gemlint.native.paths.Graph` of one C/C++/CUDA function body.

Statements are built back to front: each builder receives the step that runs
after its statement and returns the statement's first step. Covered: blocks,
``if``/``else`` (with C++17 init statements), ``switch`` with fallthrough,
``while``/``do``/``for``/range-``for`` with ``break``/``continue``, ``goto``
and labels, ``return``, ``throw`` (to the enclosing ``catch`` clauses, else
out of the function), ``try``/``catch``, ``#if``/``#ifdef`` branches inside a
body, calls that never return (``exit``, ``abort``), and macros whose body
returns, throws or jumps to a label (a possible exit after the statement that
uses them), defined in the file, at file scope or in a body, or in the project
headers it includes.
"""

from __future__ import annotations

import bisect
import re
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Iterator

from gemlint.frontends.native import NativeDocument, Node, definition_nodes, in_disabled_block, is_disabled_condition
from gemlint.frontends.native_includes import MacroDefinition, build_mentions, macro_parameters
from gemlint.native import c_syntax as syn
from gemlint.native.paths import Graph, OneOf, Step, StepKind
from gemlint.native.resources import NO_RETURN

_RETURN = re.compile(r"\breturn\b")
_THROW = re.compile(r"\bthrow\b")
#: Accelerator runtime, driver and library APIs (CUDA, cuBLAS/cuDNN/..., NCCL, NVRTC, NVML, HIP/ROCm, Vulkan,
#: Ascend ACL): a check macro wrapping one of these calls leaves because the device failed.
DEVICE_API = re.compile(
    r"(cuda|cu[A-Z]|cublas|cudnn|cusparse|cusolver|curand|cufft|cutensor|nvjpeg|nccl|nvrtc|nvml|hip|rocblas|miopen"
    r"|rccl|vk[A-Z]|acl[A-Z]|aclnn)\w*$"
)
_GOTO = re.compile(r"\bgoto\s+([A-Za-z_]\w*)")
_WORD = re.compile(r"[A-Za-z_]\w*")
#: A test of a value for null in a macro body: ``(p) == NULL``, ``nullptr == p``, ``!(p)``, ``!p``.
_NULL_TEST = re.compile(r"==\s*(?:NULL|nullptr|0)\b|\b(?:NULL|nullptr)\s*==|!\s*\(?\s*[A-Za-z_]\w*\s*\)?\s*\)")
_PREPROC_BRANCHES = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"})
_PREPROC_SKIP = frozenset({"preproc_call", "preproc_def", "preproc_function_def", "preproc_include", "comment"})
_CONDITION_FIELDS = ("name", "condition", "alternative")
_DECLARATION = frozenset({"declaration"})
#: Names spelled as enumerators or constants (``CUBLAS_OP_N``, ``Mode::FAST``): two different ones are different values.
_ENUMERATOR = re.compile(r"(?:[A-Za-z_]\w*::)*[A-Z][A-Z0-9_]*|(?:[A-Za-z_]\w*::)+[A-Za-z_]\w*")
_NUMBER = re.compile(r"[0-9][0-9a-fA-FxX.]*[uUlLfF]*")


@dataclass(frozen=True)
class MacroExit:
    """How a macro defined in the file may leave the function that uses it."""

    returns: bool = False  # return or throw
    labels: tuple[str, ...] = ()  # goto targets
    null_check: bool = False  # the body tests an argument for null (`if ((p) == NULL) return ...`)


@dataclass(frozen=True)
class Macro:
    """One definition of a macro, and how its expansion may leave the function that uses it."""

    definition: MacroDefinition
    exit: MacroExit | None = None


class Macros:
    """The macros a file's functions see: each name's definitions in the order the preprocessor reads them,
    those of the headers the file includes first, then the file's own (at file scope or inside a function
    body). A use of the name means the last definition written before it."""

    def __init__(self, definitions: dict[str, list[tuple[int, Macro]]], folder: str | None = None) -> None:
        self._definitions = definitions
        #: The file's folder, whose build files (and those above it) may define macros (:meth:`switched_off`).
        self._folder = folder
        self._starts = {name: [start for start, _ in found] for name, found in self._definitions.items()}
        self.any_exit = any(macro.exit is not None for found in self._definitions.values() for _, macro in found)

    def defines(self, name: str) -> bool:
        """Whether some definition of the file or its headers is named ``name``."""
        return name in self._starts

    def at(self, name: str, node: Node) -> Macro | None:
        """The definition ``name`` has where ``node`` is, or None when no macro of that name is defined there."""
        starts = self._starts.get(name)
        if not starts:
            return None
        index = bisect.bisect_left(starts, node.start_byte) - 1
        return self._definitions[name][index][1] if index >= 0 else None

    def exit_at(self, name: str, node: Node) -> MacroExit | None:
        macro = self.at(name, node)
        return macro.exit if macro is not None else None

    def switched_off(self, name: str) -> bool:
        """``name`` is a debugging switch (``DEBUG_INPUT``, ``VERBOSE``, ``DUMP_TENSORS``) that nothing defines: not
        the file, not the project headers it includes, not a build file above it (outside comments), so code under
        ``#ifdef`` it is not compiled by default. A name the compiler reserves (``_DEBUG``, ``__CUDACC__``) and
        ``NDEBUG`` (which release builds define) are never taken for one."""
        if not _DEBUG_SWITCH.search(name) or name.startswith("_") or name == "NDEBUG" or name in self._starts or self._folder is None:
            return False
        return name not in build_mentions(self._folder)

    def truth(self, name: str) -> bool | None:
        """What an object-like macro that stands for a constant tests as (``#define DEBUG_ENABLE 0``): True or
        False where every definition the file and its headers give the name is that one literal, else None (one
        value under ``#ifdef DEBUG`` and another otherwise: which one the build takes is not known)."""
        found = self._definitions.get(name)
        if not found:
            return None
        definitions = [macro.definition for _, macro in found]
        bodies = {definition.body.strip() for definition in definitions}
        if len(bodies) != 1 or any(definition.parameters is not None or definition.varies for definition in definitions):
            return None
        return _MACRO_TRUTH.get(bodies.pop().strip("()").strip())


def macro_use(identifier: Node) -> Node | None:
    """The use of a macro that ``identifier`` names: the call it is the callee of (``CHECK(x)``), or the
    identifier itself where it stands as a statement (an object-like macro: ``BAIL;``); None otherwise."""
    if identifier.type != "identifier" or identifier.parent is None:
        return None
    parent = identifier.parent
    if parent.type == "call_expression" and parent.child_by_field_name("function") == identifier:
        return parent
    return identifier if parent.type == "expression_statement" else None


def _else_if(alternative: Node | None) -> Node | None:
    """The ``if`` of an ``else if``: the only statement of an ``else`` clause, when it is one."""
    if alternative is None or alternative.type != "else_clause":
        return None
    statements = [child for child in alternative.named_children if child.type != "comment"]
    return statements[0] if len(statements) == 1 and statements[0].type == "if_statement" else None


def condition_parts(clause: Node | None) -> tuple[list[Node], Node | None]:
    """The init statements and the tested expression of a ``condition_clause`` (``if (auto e = f(); e)``)."""
    if clause is None:
        return [], None
    if clause.type != "condition_clause":
        return [], clause
    init = clause.child_by_field_name("initializer")
    value = clause.child_by_field_name("value")
    if value is None:
        value = next((c for c in clause.named_children if c.type in ("declaration", "init_declarator")), None)
    return ([init] if init is not None else []), value


#: The words of a debugging or self-test switch's name (``DEBUG_INPUT``, ``TEST_CUDA_CODE``).
_DEBUG_SWITCH = re.compile(r"(?:^|_)(?:DEBUG|DBG|VERBOSE|TRACE|DUMP|TEST|TESTING)(?:_|$)", re.IGNORECASE)
#: The bodies of object-like macros that test as a constant.
_MACRO_TRUTH = {"0": False, "false": False, "FALSE": False, "1": True, "true": True, "TRUE": True}

#: Where a header's definitions sit in the order of a file's: before all of its own.
_HEADER_START = -1


def file_macros(document: NativeDocument) -> Macros:
    """Every macro a file's functions may use: those of the project headers it includes, then those the file
    defines, at file scope or inside a function body (``#define CLEANUP() ...`` written where it is needed),
    outside ``#if 0``. Each definition is read for how its expansion may leave the calling function."""
    written: list[tuple[str, int, MacroDefinition]] = [(name, _HEADER_START, d) for name, d in document.included_macros.items()]
    written += [(name, node.start_byte, definition) for name, node, definition in _definitions_in(document)]
    exits = _macro_exits(written)
    definitions: dict[str, list[tuple[int, Macro]]] = {}
    for index, (name, start, definition) in enumerate(written):
        definitions.setdefault(name, []).append((start, Macro(definition, exits[index])))
    return Macros(definitions, str(document.path.parent) if document.path is not None else None)


def _definitions_in(document: NativeDocument) -> list[tuple[str, Node, MacroDefinition]]:
    """The ``#define`` directives of a document, in source order."""
    found = []
    for node in definition_nodes(document):
        name = syn.text(node.child_by_field_name("name"))
        if not name or in_disabled_block(node):
            continue
        parameters = node.child_by_field_name("parameters")
        written = macro_parameters(syn.text(parameters)) if parameters is not None else None
        found.append((name, node, MacroDefinition(written, syn.text(node.child_by_field_name("value")))))
    return found


def _macro_exits(written: list[tuple[str, int, MacroDefinition]]) -> list[MacroExit | None]:
    """How each definition may leave the function using it: its body returns, throws or jumps to a label, or it
    uses a macro that does (followed three levels deep, each name as defined before it)."""
    exits: list[MacroExit | None] = []
    bodies = [_without_lambdas(definition.body) for _, _, definition in written]
    for body in bodies:
        labels = tuple(_GOTO.findall(body))
        returns = bool(_RETURN.search(body) or _THROW.search(body))
        exits.append(MacroExit(returns, labels, bool(_NULL_TEST.search(body))) if returns or labels else None)
    headers = {name: index for index, (name, start, _) in enumerate(written) if start == _HEADER_START}
    for _ in range(3):
        latest = dict(headers)
        changed = False
        for index, (name, _, _) in enumerate(written):
            if exits[index] is None:
                used = [exits[latest[word]] for word in _WORD.findall(bodies[index]) if word in latest and word != name]
                used = [u for u in used if u is not None]
                if used:
                    exits[index] = MacroExit(any(u.returns for u in used), tuple(l for u in used for l in u.labels))
                    changed = True
            latest[name] = index
        if not changed:
            break
    return exits


_LAMBDA = re.compile(r"\[[^\[\]]*\]\s*(?:\([^()]*\))?\s*(?:mutable\s*)?(?:->\s*[\w:<>]+\s*)?\{")


def _without_lambdas(body: str) -> str:
    """A macro body less the bodies of the lambdas it defines: their ``return`` leaves the lambda, not the
    function that uses the macro (``[&]() { try { expr; return ok; } catch (...) { return err; } }()``)."""
    while True:
        match = _LAMBDA.search(body)
        if match is None:
            return body
        depth, index = 1, match.end()
        while index < len(body) and depth:
            depth += {"{": 1, "}": -1}.get(body[index], 0)
            index += 1
        body = body[: match.start()] + body[index:]


@dataclass(frozen=True)
class _Loop:
    body: Node
    line: int  # where the loop statement starts


#: Statements nested deeper than this are not followed (the caller reports the function as not analysed).
MAX_NESTING = 200


class CfgBuilder:
    def __init__(self, macros: Macros) -> None:
        self.macros = macros
        self.graph = Graph()
        self._labels: dict[str, Step] = {}
        # Where `break` and `continue` go, with the loop whose body they leave (None for a `switch`'s break).
        self._breaks: list[tuple[Step, _Loop | None]] = []
        self._continues: list[tuple[Step, _Loop]] = []
        self._handlers: list[list[Step]] = []
        self._exit_cache: dict[tuple[str, int], Step] = {}
        self._preproc_tests: set[str] = set()
        self._depth = 0

    # -- entry point ------------------------------------------------------------------
    def build_function(self, walk: syn.Walk, *, is_main: bool = False) -> Graph:
        """The graph of the function body ``walk`` read (its ``root``)."""
        body = walk.root
        self._walk = walk
        self._unstable = _changing_names(walk)
        self._changed_by_lambdas = _changed_in_lambdas(self._walk)
        self._body = body
        self._body_locals = _declared_names(self._walk)
        end_line = body.end_point[0] + 1
        if is_main:  # leaving main ends the process: nothing held is leaked
            end = self.graph.add(StepKind.STOP, line=end_line)
        else:
            end = self.graph.add(StepKind.EXIT, exit=f"reaches its end at line {end_line}", line=end_line)
        self._is_main = is_main
        self.graph.entry = self.statement(body, end)
        for step in self.graph.steps:
            if not step.nodes:
                continue
            walked = tuple(self._walk.under(root) for root in step.nodes if root is not None)
            step.changes = step.changes | _changed_names_in(walked)
            known = ((self._test_key(target), value) for target, value in _known_after(walked))
            step.sets = tuple((key, value) for key, value in known if key is not None)
        self.graph.keep_repeated_tests(self._preproc_tests)
        return self.graph

    # -- exits ---------------------------------------------------------------------------
    def _exit(self, how: str, line: int) -> Step:
        if self._is_main:
            return self.graph.add(StepKind.STOP, line=line)
        key = (how, line)
        if key not in self._exit_cache:
            self._exit_cache[key] = self.graph.add(StepKind.EXIT, exit=f"{how} at line {line}", line=line)
        return self._exit_cache[key]

    def _label(self, name: str) -> Step:
        if name not in self._labels:
            self._labels[name] = self.graph.join()
        return self._labels[name]

    def _throw_targets(self, line: int, how: str = "throws") -> list[Step]:
        if self._handlers:
            return list(self._handlers[-1])
        return [self._exit(how, line)]

    # -- statements ------------------------------------------------------------------------
    def sequence(self, statements: list[Node], after: Step) -> Step:
        current = after
        for statement in reversed(statements):
            current = self.statement(statement, current)
        return current

    def statement(self, node: Node, after: Step) -> Step:
        kind = node.type
        handler = getattr(self, f"_build_{kind}", None)
        if handler is not None:
            # Each level of nesting costs several interpreter frames, some on the C stack: stop well before
            # the interpreter's limit, which the C stack may not survive (a crash, not a RecursionError).
            if self._depth >= MAX_NESTING:
                raise RecursionError(f"statements nested more than {MAX_NESTING} deep")
            self._depth += 1
            try:
                return handler(node, after)
            finally:
                self._depth -= 1
        if kind in _PREPROC_BRANCHES:
            return self._preproc_branch(node, after)
        if kind in _PREPROC_SKIP:
            return after
        return self._effect(node, after)

    def _effect(self, node: Node, after: Step) -> Step:
        """A statement evaluated in one step; calls that never return stop the path, exiting macros may leave."""
        step = self.graph.add(StepKind.EFFECT, (node,), line=syn.line_of(node))
        if self._never_returns(node):
            return step.then(self.graph.add(StepKind.STOP, line=syn.line_of(node)))
        current = after
        for call, name, macro in reversed(self._exiting_macro_calls(node)):
            line = syn.line_of(call)
            branch = self.graph.add(StepKind.BRANCH, condition=call, line=line)
            branch.checked = call
            branch.null_check = macro.null_check
            branch.wraps_call = call.type == "call_expression" and _checks_a_device_api_call(call)
            tested = self._null_checked_key(call) if macro.null_check else None
            if tested is not None:
                # `CHECK_NOT_NULL(q)` leaves where `q` is null, as `if (!q) return` does: after `q = new T`, never.
                branch.assume = {True: ((tested, False),), False: ((tested, True),)}
            if macro.returns:
                branch.then(self._exit(f"may return through `{name}`", line), True)
            for label in macro.labels:
                branch.then(self._label(label), True)
            branch.then(current, False)
            current = branch
        return step.then(current)

    def _never_returns(self, node: Node) -> bool:
        for child in self._walk.under(node):
            if child.type == "call_expression" and syn.callee_name(child) in NO_RETURN:
                return True
        return False

    def _exiting_macro_calls(self, node: Node) -> list[tuple[Node, str, MacroExit]]:
        """The uses of exiting macros in ``node``: (the use, the macro's name, how it may leave)."""
        if not self.macros.any_exit:
            return []
        found = []
        for child in self._walk.under(node):
            use = macro_use(child)
            if use is not None:
                macro = self.macros.exit_at(syn.text(child), child)
                if macro is not None:
                    found.append((use, syn.text(child), macro))
        return found

    def _build_compound_statement(self, node: Node, after: Step) -> Step:
        return self.sequence(list(node.named_children), after)

    def _build_translation_unit(self, node: Node, after: Step) -> Step:  # an ERROR-wrapped body
        return self.sequence(list(node.named_children), after)

    def _build_attributed_statement(self, node: Node, after: Step) -> Step:
        inner = [c for c in node.named_children if c.type != "attribute_declaration"]
        return self.sequence(inner, after)

    def _build_else_clause(self, node: Node, after: Step) -> Step:
        return self.sequence(list(node.named_children), after)

    def _build_return_statement(self, node: Node, after: Step) -> Step:
        line = syn.line_of(node)
        step = self.graph.add(StepKind.EFFECT, (node,), line=line)
        if self._never_returns(node):
            return step.then(self.graph.add(StepKind.STOP, line=line))
        return step.then(self._exit("returns", line))

    _build_co_return_statement = _build_return_statement

    def _build_throw_statement(self, node: Node, after: Step) -> Step:
        line = syn.line_of(node)
        step = self.graph.add(StepKind.EFFECT, (node,), line=line)
        for target in self._throw_targets(line):
            step.then(target)
        return step

    def _build_goto_statement(self, node: Node, after: Step) -> Step:
        label = node.child_by_field_name("label")
        return self._label(syn.text(label)) if label is not None else after

    def _build_labeled_statement(self, node: Node, after: Step) -> Step:
        label = node.child_by_field_name("label")
        inner = [c for c in node.named_children if c.type != "statement_identifier"]
        entry = self.sequence(inner, after)
        if label is None:
            return entry
        join = self._label(syn.text(label))
        join.then(entry)
        return join

    def _build_break_statement(self, node: Node, after: Step) -> Step:
        if not self._breaks:
            return after
        target, loop = self._breaks[-1]
        if loop is None:
            return target
        line = syn.line_of(node)
        return self._scope_end(loop, f"`break` at line {line} leaves the loop at line {loop.line}", line, target)

    def _build_continue_statement(self, node: Node, after: Step) -> Step:
        if not self._continues:
            return after
        target, loop = self._continues[-1]
        line = syn.line_of(node)
        return self._scope_end(loop, f"`continue` at line {line} goes on to the next iteration of the loop at line {loop.line}", line, target)

    def _scope_end(self, loop: _Loop, how: str, line: int, target: Step) -> Step:
        """A step where paths leave a loop's body, on to ``target``: the variables declared in the body end there."""
        step = self.graph.add(StepKind.EFFECT, line=line)
        step.leaves = loop.body
        step.leaving = how
        return step.then(target)

    def _loop_body(self, loop: _Loop, after: Step, next_iteration: Step) -> Step:
        """The entry of a loop's body: ``break`` goes to ``after``; ``continue`` and the end of the body go to
        ``next_iteration``, each through a step that says the body's variables end there."""
        self._breaks.append((after, loop))
        self._continues.append((next_iteration, loop))
        try:
            ended = self._scope_end(loop, f"an iteration of the loop at line {loop.line} ends, once per iteration,", loop.body.end_point[0] + 1, next_iteration)
            return self.statement(loop.body, ended)
        finally:
            self._breaks.pop()
            self._continues.pop()

    def _truth(self, condition: Node | None) -> bool | None:
        """What ``condition`` always tests as: a literal (``while (1)``, ``if (0)``), or a macro defined as one
        (``if (DEBUG_ENABLE)`` with ``#define DEBUG_ENABLE 0`` in a header); None when it depends on the run."""
        if condition is None:
            return None
        if syn.is_constant_true(condition):
            return True
        if syn.is_constant_false(condition):
            return False
        named = syn.strip(condition)
        if named is not None and named.type == "identifier":
            value = self._constants.get(syn.text(named))
            if value is not None:
                return self._truth(value)  # `const bool verbose = false;` then `if (verbose)`
            return self.macros.truth(syn.text(named))
        if named is not None and named.type == "binary_expression" and syn.operator(named) in ("==", "!="):
            equal = self._constant_equality(named.child_by_field_name("left"), named.child_by_field_name("right"))
            if equal is not None:
                return equal if syn.operator(named) == "==" else not equal
        return None

    def _constant_equality(self, left: Node | None, right: Node | None) -> bool | None:
        """Whether a local constant equals what it is compared with (``transb != CUBLAS_OP_N`` with ``const ...
        transb = CUBLAS_OP_N;``): both sides a constant's value, an enumerator-like name or a number; None otherwise."""
        sides = [self._constant_value(side) for side in (left, right)]
        if None in sides or not any(syn.text(syn.strip(side)) in self._constants for side in (left, right)):
            return None
        first, second = sides
        if first == second:
            return True
        return False if all(_ENUMERATOR.fullmatch(side) or _NUMBER.fullmatch(side) for side in sides) else None

    def _constant_value(self, node: Node | None) -> str | None:
        node = syn.strip(node)
        if node is None:
            return None
        if node.type == "identifier" and syn.text(node) in self._constants:
            node = syn.strip(self._constants[syn.text(node)])
        if node is None or node.type not in ("identifier", "number_literal", "qualified_identifier", "true", "false"):
            return None
        return syn.text(node)

    @cached_property
    def _constants(self) -> dict[str, Node]:
        """The function's local constants initialised with a literal or a name (``const int mode = MODE_FAST;``,
        ``constexpr bool verbose = false;``), declared once."""
        found: dict[str, Node] = {}
        seen: set[str] = set()
        for declaration in self._walk.of_type(_DECLARATION):
            constant = any(
                child.type == "type_qualifier" and syn.text(child) in ("const", "constexpr") for child in declaration.children
            )
            for child in declaration.named_children:
                if child.type != "init_declarator":
                    continue
                name = syn.declared_identifier(child.child_by_field_name("declarator"))
                value = syn.strip(child.child_by_field_name("value"))
                if name is None or child.child_by_field_name("declarator").type != "identifier":
                    continue
                spelled = syn.text(name)
                if spelled in seen:
                    found.pop(spelled, None)  # declared twice (two scopes): not one constant
                    continue
                seen.add(spelled)
                if constant and value is not None and value.type in ("identifier", "number_literal", "qualified_identifier", "true", "false"):
                    found[spelled] = value
        return found

    def _branch(
        self, condition: Node | None, when_true: Step, when_false: Step, line: int, *, assume: dict | None = None
    ) -> Step:
        truth = self._truth(condition)
        if truth is not None:
            return when_true if truth else when_false
        step = self.graph.add(StepKind.BRANCH, (condition,) if condition is not None else (), condition=condition, line=line)
        step.in_loop = bool(self._continues)
        if assume is None and condition is not None:
            assume = {True: tuple(self._established(condition, True)), False: tuple(self._established(condition, False))}
        labelled = condition is not None or bool(assume)
        step.then(when_true, True if labelled else None)
        step.then(when_false, False if labelled else None)
        step.assume = {label: facts for label, facts in (assume or {}).items() if facts}
        return step

    @contextmanager
    def _given(self, facts: list[tuple[str, bool]]) -> Iterator[None]:
        """The steps built inside hold ``facts``: as known facts where no name of the test ever changes, as
        enclosing tests (worth keeping consistent along a path) in any case."""
        previous = self.graph.given, self.graph.enclosing
        self.graph.given, self.graph.enclosing = self._holding(facts)
        try:
            yield
        finally:
            self.graph.given, self.graph.enclosing = previous

    def _holding(self, facts: list[tuple[str, bool]]) -> tuple[frozenset, frozenset]:
        """The graph's known facts and enclosing tests once ``facts`` hold as well (see :meth:`_given`)."""
        given = self.graph.given | frozenset(fact for fact in facts if self._never_changes(fact[0]))
        return given, self.graph.enclosing | frozenset(test for test, _ in facts)

    @contextmanager
    def _enclosed_by(self, tests: list[str]) -> Iterator[None]:
        previous = self.graph.enclosing
        self.graph.enclosing = previous | frozenset(tests)
        try:
            yield
        finally:
            self.graph.enclosing = previous

    def _never_changes(self, test: str) -> bool:
        return not self.graph.test_names.get(test, frozenset()) & self._unstable

    def _null_checked_key(self, call: Node) -> str | None:
        """The test key of the one pointer a null-checking macro is given (``CHECK_PARAM_NULL(p)``), else None."""
        if call.type != "call_expression":
            return None
        arguments = syn.arguments(call)
        argument = syn.strip(arguments[0]) if len(arguments) == 1 else None
        if argument is None or argument.type not in ("identifier", "field_expression"):
            return None
        return self._test_key(argument)

    def _test_key(self, node: Node) -> str | None:
        """The key of a test without side effects (no calls, assignments, allocations, lambdas), with the names it
        reads recorded: a path knows its value until a step changes one of them."""
        for child in syn.descendants(node):
            if child.type in ("call_expression", "assignment_expression", "update_expression", "new_expression", "lambda_expression"):
                return None
        names = _names_read(node)
        if names & self._changed_by_lambdas:
            return None  # a lambda may change it whenever it is called: no step of this body says when
        key = syn.normalized(node)
        self.graph.test_names[key] = names
        return key

    def _positive_key(self, subject: Node) -> str | None:
        """The key of the test ``subject > 0``, with the names ``subject`` reads."""
        key = self._test_key(subject)
        if key is None:
            return None
        positive = f"{key} > 0"
        self.graph.test_names[positive] = self.graph.test_names[key]
        return positive

    def _established(self, condition: Node | None, value: bool) -> list[tuple[str, bool]]:
        """The tests known when ``condition`` evaluates to ``value``: ``a && b`` true gives a and b,
        ``a || b`` false gives !a and !b, ``!a`` flips. A test has no calls and no assignments
        (``if (flag)``, ``if (!use_pinned)``); it holds along a path until a step changes one of its names."""
        node = syn.strip(condition)
        if node is None:
            return []
        if node.type == "unary_expression" and syn.operator(node) == "!":
            return self._established(node.child_by_field_name("argument"), not value)
        if node.type == "binary_expression" and syn.operator(node) in ("&&", "||"):
            if (syn.operator(node) == "&&") == value:
                return self._established(node.child_by_field_name("left"), value) + self._established(
                    node.child_by_field_name("right"), value
                )
            return []
        compared = _compared_with_null(node)
        if compared is not None:  # `p == nullptr` is `p` false, `p != NULL` is `p` true, as `!p` and `p` are
            subject, true_when_set = compared
            key = self._test_key(subject)
            return [(key, value == true_when_set)] if key is not None else []
        zero = _compared_with_zero(node)
        if zero is not None:  # `n > 0`, `n <= 0`, `0 < n`: one test, whichever way it is written
            subject, positive_when_true = zero
            key = self._positive_key(subject)
            return [(key, value == positive_when_true)] if key is not None else []
        constant = _compared_with_constant(node)
        if constant is not None:
            # `method == 2` is what `case 2:` of a `switch (method)` is: it excludes `method == 1` on the same path
            subject, literal, equal = constant
            key = self._test_key(subject)
            return [(key, OneOf(frozenset({literal}), excluded=value != equal))] if key is not None else []
        key = self._test_key(node)
        return [(key, value)] if key is not None else []

    def _build_if_statement(self, node: Node, after: Step) -> Step:
        """An ``if`` and the ``else if`` chain after it, built as one level of nesting: a parser's chain of a
        hundred keys is flat code, not a hundred nested blocks. Each test's branch is built where the tests before
        it were false, as nested ``if``s would be."""
        chain: list[tuple[list[Node], Node | None, Node | None, int]] = []
        current: Node | None = node
        alternative = None
        while current is not None:
            init, condition = condition_parts(current.child_by_field_name("condition"))
            chain.append((init, condition, current.child_by_field_name("consequence"), syn.line_of(current)))
            alternative = current.child_by_field_name("alternative")
            current = _else_if(alternative)
        thens = []
        # Where each test is made: the state of the branches around it, with the tests before it false.
        made_at = []
        outside = (self.graph.given, self.graph.enclosing)
        try:
            for _, condition, consequence, _ in chain:
                made_at.append((self.graph.given, self.graph.enclosing))
                with self._given(self._established(condition, True)):
                    thens.append(self.statement(consequence, after) if consequence is not None else after)
                self.graph.given, self.graph.enclosing = self._holding(self._established(condition, False))
            entry = self.statement(alternative, after) if alternative is not None else after
            for (init, condition, _, line), then_entry, state in zip(reversed(chain), reversed(thens), reversed(made_at)):
                self.graph.given, self.graph.enclosing = state
                entry = self.sequence(init, self._branch(condition, then_entry, entry, line))
        finally:
            self.graph.given, self.graph.enclosing = outside
        return entry

    def _loop(
        self, condition: Node | None, body: Node | None, after: Step, line: int, *, update: Node | None = None, initializer: Node | None = None
    ) -> Step:
        """``while``/``for``: the head tests, the body runs and goes back through ``update``."""
        head = self.graph.join()
        update_entry = self._effect(update, head) if update is not None else head
        body_entry = self._loop_body(_Loop(body, line), after, update_entry) if body is not None else update_entry
        if condition is None or self._truth(condition) is True:
            head.then(body_entry)
            return head
        head.then(_of_loop(self._branch(condition, body_entry, after, line), body))
        bound = loop_bound(condition)
        if bound is None:
            return head
        from_zero = _counts_up_from_zero(initializer, condition)
        return self._first_test(condition, bound, body_entry, after, line, body, from_zero=from_zero)

    def _first_test(
        self, condition: Node | None, bound: Node | None, body_entry: Step, after: Step, line: int, body: Node | None = None, *, from_zero: bool = False
    ) -> Step:
        """The loop's first test, apart from the later ones: skipping the loop altogether is a path only
        when the bound may be zero as far as the function shows (a local it computed, or a bound it tests). A
        counter from zero (``for (int i = 0; i < n; ++i)``) first tests ``n > 0``: a path that knows it
        (``if (n > 0) p = new T[n];``) enters the body."""
        if condition is None:  # a range `for`: the test is whether the range is empty
            first = self.graph.add(StepKind.BRANCH, line=line)
            first.in_loop = bool(self._continues)
            first.then(body_entry, True).then(after, False)
        else:
            positive = self._positive_key(bound) if from_zero and bound is not None else None
            assume = None
            if positive is not None:
                assume = {value: (*self._established(condition, value), (positive, value)) for value in (True, False)}
            first = self._branch(condition, body_entry, after, line, assume=assume)
        _of_loop(first, body)
        if first.kind is StepKind.BRANCH and bound is not None:
            first.loop_bound = syn.normalized(bound)
            first.runs_once = (
                self._outside_bound(bound)
                and not _tests_for_zero(self._zero_tested, first.loop_bound)
                and not any(
                    _tests_for_zero(frozenset({subject}), first.loop_bound)
                    for subject, guard in self._exit_guards
                    if guard.end_byte > bound.start_byte
                )
            )
        return first

    @cached_property
    def _exit_guards(self) -> tuple[tuple[str, Node], ...]:
        """``if (n == 0) return ...;`` at the top of the function body: past it, ``n`` is not zero. Each guard's
        subject, and its statement."""
        return exit_guards(self._body)

    @cached_property
    def _zero_tested(self) -> frozenset[str]:
        """What the function tests for zero, an early exit's test aside (:attr:`_exit_guards`): a loop bounded by
        it after that exit runs at least once."""
        tests = tuple(guard.child_by_field_name("condition") for _, guard in self._exit_guards)
        return zero_tested(self._body, skip=tuple(test for test in tests if test is not None))

    def _outside_bound(self, bound: Node) -> bool:
        """A bound made of members and parameters (``n``, ``this->layers``, ``cfg.n_layers``, ``v.size()``)."""
        for node in syn.descendants(bound):
            if node.type == "call_expression":
                function = node.child_by_field_name("function")
                if not (syn.is_method_call(node) and syn.name_of(function) in ("size", "length") and not syn.arguments(node)):
                    return False
            elif node.type == "identifier" and syn.text(node) in self._body_locals:
                return False
            elif node.type in ("assignment_expression", "update_expression"):
                return False
        return True

    def _build_while_statement(self, node: Node, after: Step) -> Step:
        init, condition = condition_parts(node.child_by_field_name("condition"))
        return self.sequence(init, self._loop(condition, node.child_by_field_name("body"), after, syn.line_of(node)))

    def _build_for_statement(self, node: Node, after: Step) -> Step:
        initializer = node.child_by_field_name("initializer")
        condition = node.child_by_field_name("condition")
        head = self._loop(
            condition, node.child_by_field_name("body"), after, syn.line_of(node), update=node.child_by_field_name("update"), initializer=initializer
        )
        return self._effect(initializer, head) if initializer is not None else head

    def _build_for_range_loop(self, node: Node, after: Step) -> Step:
        head = self.graph.join()
        head.changes = _names_read(node.child_by_field_name("declarator"))  # each iteration binds it anew
        body = node.child_by_field_name("body")
        body_entry = self._loop_body(_Loop(body, syn.line_of(node)), after, head) if body is not None else head
        head.then(_of_loop(self._branch(None, body_entry, after, syn.line_of(node)), body))
        right = node.child_by_field_name("right")
        first = self._first_test(None, right, body_entry, after, syn.line_of(node), body)
        return self._effect(right, first) if right is not None else first

    def _build_do_statement(self, node: Node, after: Step) -> Step:
        test = self.graph.join()
        body = node.child_by_field_name("body")
        body_entry = self._loop_body(_Loop(body, syn.line_of(node)), after, test) if body is not None else test
        condition = node.child_by_field_name("condition")
        if self._truth(condition) is False:
            test.then(after)  # do { ... } while (0)
        else:
            test.then(_of_loop(self._branch(condition, body_entry, after, syn.line_of(node)), body))
        return body_entry

    def _build_switch_statement(self, node: Node, after: Step) -> Step:
        init, condition = condition_parts(node.child_by_field_name("condition"))
        body = node.child_by_field_name("body")
        cases = [c for c in body.named_children if c.type == "case_statement"] if body is not None else []
        tested = syn.strip(condition)
        subject = self._test_key(tested) if tested is not None else None
        key = f"switch ({subject})" if subject is not None else None
        if key is not None:
            self.graph.test_names[key] = self.graph.test_names[subject]
        self._breaks.append((after, None))
        try:
            entries: list[Step] = []
            following = after
            with self._enclosed_by([key] if key is not None else []):
                for case in reversed(cases):
                    statements = [c for c in case.named_children if c != case.child_by_field_name("value")]
                    following = self.sequence(statements, following)
                    entries.append(following)
        finally:
            self._breaks.pop()
        dispatch = self.graph.add(StepKind.BRANCH, (condition,) if condition is not None else (), line=syn.line_of(node))
        dispatch.in_loop = bool(self._continues)
        labels = [case.child_by_field_name("value") for case in cases]
        values = frozenset(syn.normalized(label) for label in labels if label is not None)
        # Each edge says which case it takes, so that a later switch on the same unchanged subject takes it too.
        for label, entry in zip(labels, reversed(entries)):
            if label is None and self._takes_a_case(tested, values):
                continue  # a default no value of the subject reaches
            taken = OneOf(values, excluded=True) if label is None else OneOf(frozenset({syn.normalized(label)}))
            self._switch_edge(dispatch, entry, key, taken)
        if not any(label is None for label in labels) and not self._takes_a_case(tested, values):
            self._switch_edge(dispatch, after, key, OneOf(values, excluded=True))  # no default: the switch may do nothing
        return self.sequence(init, dispatch)

    def _takes_a_case(self, subject: Node | None, cases: frozenset[str]) -> bool:
        """``subject`` is a local of the function that is only ever given values its cases name (``int f = 0;``
        then ``f = 1`` ... under tests): no path reaches the switch's default."""
        if subject is None or subject.type != "identifier" or syn.text(subject) not in self._body_locals:
            return False
        given = _values_given(self._body, syn.text(subject))
        return given is not None and given <= cases

    @staticmethod
    def _switch_edge(dispatch: Step, entry: Step, key: str | None, taken: OneOf) -> None:
        if key is None:
            dispatch.then(entry)
            return
        dispatch.then(entry, taken)
        dispatch.assume[taken] = ((key, taken),)

    def _build_try_statement(self, node: Node, after: Step) -> Step:
        handlers = [
            self.statement(clause.child_by_field_name("body"), after)
            for clause in node.named_children
            if clause.type == "catch_clause" and clause.child_by_field_name("body") is not None
        ]
        self._handlers.append(handlers or self._throw_targets(syn.line_of(node)))
        try:
            body = node.child_by_field_name("body")
            return self.statement(body, after) if body is not None else after
        finally:
            self._handlers.pop()

    def _build_catch_clause(self, node: Node, after: Step) -> Step:  # only reached through try
        body = node.child_by_field_name("body")
        return self.statement(body, after) if body is not None else after

    def _preproc_branch(self, node: Node, after: Step, chained: bool = False) -> Step:
        """``#if``/``#ifdef`` inside a body: either branch may be compiled, the same one on every path. A chain of
        alternatives without ``#else`` (``#if defined(WIN32) ... #elif defined(POSIX) ... #endif``, ``chained`` for
        each ``#elif``) names the configurations the code is written for: a build that defines none of them is not
        one, so its last alternative is compiled wherever the ones before it are not."""
        alternative = node.child_by_field_name("alternative")
        skipped = [node.child_by_field_name(name) for name in _CONDITION_FIELDS]
        statements = [c for c in node.named_children if c not in skipped]
        key, inverted = _preproc_key(node)
        switch = _SWITCH_KEY.fullmatch(key)
        off = switch is not None and self.macros.switched_off(switch.group(1))
        if (node.type == "preproc_if" and is_disabled_condition(node)) or (off and not inverted):
            # `#if 0`, or `#ifdef DEBUG_DUMP` with the switch defined nowhere: only the `#else` is compiled
            if alternative is None:
                return after
            if alternative.type == "preproc_else":
                return self.sequence(list(alternative.named_children), after)
            return self._preproc_branch(alternative, after, chained)
        if off:  # `#ifndef DEBUG_DUMP`: only its own branch is compiled
            return self.sequence(statements, after)
        self._preproc_tests.add(key)  # one configuration per path, even where a test is met once
        with self._given([(key, not inverted)]):
            then_entry = self.sequence(statements, after)
        with self._given([(key, inverted)]):
            if alternative is None:
                else_entry = after
            elif alternative.type == "preproc_else":
                else_entry = self.sequence(list(alternative.named_children), after)
            else:
                else_entry = self._preproc_branch(alternative, after, chained=True)
        if chained and alternative is None:
            return then_entry
        return self._branch(None, then_entry, else_entry, syn.line_of(node), assume={True: ((key, not inverted),), False: ((key, inverted),)})

    def _build_preproc_else(self, node: Node, after: Step) -> Step:
        return self.sequence(list(node.named_children), after)

    def _build_declaration_list(self, node: Node, after: Step) -> Step:
        return self.sequence(list(node.named_children), after)

    def _build_empty_statement(self, node: Node, after: Step) -> Step:
        return after

    def _build_comment(self, node: Node, after: Step) -> Step:
        return after


_DEFINED = re.compile(r"defined\s*\(?\s*([A-Za-z_]\w*)\s*\)?")


#: A preprocessor test of one name: ``#ifdef X``, ``#if defined(X)``, ``#if X``.
_SWITCH_KEY = re.compile(r"#(?:defined\()?([A-Za-z_]\w*)\)?")


def _preproc_key(node: Node) -> tuple[str, bool]:
    """``#ifdef X`` and ``#if defined(X)`` share a key; ``#ifndef X`` and ``#if !defined(X)`` invert it."""
    if node.type in ("preproc_ifdef", "preproc_elifdef"):
        directive = syn.text(node.children[0]) if node.children else ""
        return f"#defined({syn.text(node.child_by_field_name('name'))})", directive.endswith("ndef")
    condition = syn.normalized(node.child_by_field_name("condition"))
    inverted = False
    while condition.startswith("!"):
        inverted = not inverted
        condition = condition[1:]
    while condition.startswith("(") and condition.endswith(")"):
        condition = condition[1:-1]
    condition = _DEFINED.sub(lambda m: f"defined({m.group(1)})", condition)
    return f"#{condition}", inverted


_LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})
_BOUND_TESTS = frozenset({"<", "!=", ">"})
_ZERO_OR_ONE = frozenset({"0", "1", "0u", "1u", "0U", "1U", "nullptr", "NULL"})


def loop_bound(condition: Node | None) -> Node | None:
    """The bound a counting loop compares its counter with: ``n`` in ``i < n``, ``args->count`` in ``k != args->count``."""
    node = syn.strip(condition)
    if node is None or node.type != "binary_expression" or syn.operator(node) not in _BOUND_TESTS:
        return None
    counter, bound = node.child_by_field_name("left"), node.child_by_field_name("right")
    if syn.operator(node) in (">", ">="):  # `n > i`
        counter, bound = bound, counter
    counter, bound = syn.strip(counter), syn.strip(bound)
    if counter is None or bound is None or counter.type != "identifier" or syn.is_constant_false(bound):
        return None
    return bound


_GIVEN_VALUES = frozenset({"number_literal", "char_literal", "identifier", "qualified_identifier"})


def _values_given(body: Node, name: str) -> frozenset[str] | None:
    """The values (as normalized text) the local ``name`` is initialised with and assigned in ``body``, when
    each is a literal or a named constant; None when it is changed any other way (``++``, ``+=``, through its
    address or a reference) or given anything else."""
    values: set[str] = set()
    for node in syn.descendants(body):
        if node.type == "identifier" and syn.text(node) == name:
            parent = node.parent
            if parent is None:
                return None
            if parent.type == "init_declarator" and parent.child_by_field_name("declarator") == node:
                value = syn.strip(parent.child_by_field_name("value"))
            elif parent.type == "assignment_expression" and parent.child_by_field_name("left") == node:
                if syn.operator(parent) != "=":
                    return None
                value = syn.strip(parent.child_by_field_name("right"))
            elif parent.type in ("update_expression", "pointer_expression") or (parent.type == "argument_list"):
                return None  # `f++`, `&f`, or handed to a call that may take it by reference
            else:
                continue  # read
            if value is None or value.type not in _GIVEN_VALUES or syn.text(value) == name:
                return None
            values.add(syn.normalized(value))
        elif node.type == "declaration" and any(
            child.type == "identifier" and syn.text(child) == name for child in node.named_children
        ):
            return None  # `int f;`: its first value is not known
    return frozenset(values) if values else None


_DECLARING = frozenset({"init_declarator", "declaration", "for_range_loop"})


def _declared_names(walk: syn.Walk) -> frozenset[str]:
    names = set()
    for node in walk.of_type(_DECLARING):
        identifier = syn.declared_identifier(node.child_by_field_name("declarator"))
        if identifier is not None:
            names.add(syn.text(identifier))
    return frozenset(names)


def exit_guards(body: Node | None) -> tuple[tuple[str, Node], ...]:
    """The early exits on zero among the statements of ``body`` (``if (n == 0) { ...; return false; }``, no
    ``else``): each one's subject as normalized text, and its statement."""
    found = []
    for statement in body.named_children if body is not None else ():
        subject = _exit_guard(statement)
        if subject is not None:
            found.append((subject, statement))
    return tuple(found)


def _exit_guard(statement: Node) -> str | None:
    """The subject of ``if (n == 0) return ...;`` (also ``!n``, ``n <= 0``, ``n < 1``) whose branch ends the
    function: None for any other statement."""
    if statement.type != "if_statement" or statement.child_by_field_name("alternative") is not None:
        return None
    _, condition = condition_parts(statement.child_by_field_name("condition"))
    condition = syn.strip(condition)
    consequence = statement.child_by_field_name("consequence")
    if condition is None or consequence is None:
        return None
    last = consequence.named_children[-1] if consequence.type == "compound_statement" and consequence.named_children else consequence
    if last.type not in ("return_statement", "throw_statement"):
        return None
    if condition.type == "unary_expression" and syn.operator(condition) == "!":
        argument = syn.strip(condition.child_by_field_name("argument"))
        return syn.normalized(argument) if argument is not None and argument.type in ("identifier", "field_expression") else None
    if condition.type == "binary_expression":
        left, right = syn.strip(condition.child_by_field_name("left")), syn.strip(condition.child_by_field_name("right"))
        op = syn.operator(condition)
        if left is None or right is None or left.type not in ("identifier", "field_expression") or right.type != "number_literal":
            return None
        if (op in ("==", "<=") and syn.text(right) == "0") or (op == "<" and syn.text(right) == "1"):
            return syn.normalized(left)
    return None


def zero_tested(body: Node, skip: tuple[Node, ...] = ()) -> frozenset[str]:
    """The expressions a function tests for zero or emptiness (``n`` for ``if (n == 0)``, ``!n``, ``n > 0``;
    ``v`` for ``v.empty()`` and ``v.size() == 0``), as normalized text, outside the nodes ``skip``.
    A loop bounded by one of them may not run, as the function itself knows."""
    tested: set[str] = set()
    for node in syn.descendants(body):
        if skip and any(syn.encloses(skipped, node) for skipped in skip):
            continue
        kind = node.type
        if kind == "binary_expression":
            op = syn.operator(node)
            left, right = syn.strip(node.child_by_field_name("left")), syn.strip(node.child_by_field_name("right"))
            if op in ("==", "!=", ">", "<=", "<", ">="):
                for this, other in ((left, right), (right, left)):
                    if other is not None and other.type in ("number_literal", "null") and syn.text(other) in _ZERO_OR_ONE and this is not None:
                        tested.add(syn.normalized(this))
            elif op in ("&&", "||"):
                tested.update(syn.normalized(side) for side in (left, right) if side is not None and side.type in ("identifier", "field_expression"))
        elif kind == "unary_expression" and syn.operator(node) == "!":
            argument = syn.strip(node.child_by_field_name("argument"))
            if argument is not None and argument.type in ("identifier", "field_expression", "call_expression"):
                tested.add(syn.normalized(argument))
        elif kind in ("condition_clause", "conditional_expression"):
            value = syn.strip(node.child_by_field_name("value" if kind == "condition_clause" else "condition"))
            if value is not None and value.type in ("identifier", "field_expression"):
                tested.add(syn.normalized(value))
        elif kind == "call_expression" and syn.is_method_call(node):
            function = node.child_by_field_name("function")
            if syn.name_of(function) == "empty":
                tested.add(syn.normalized(function.child_by_field_name("argument")))
    return frozenset(tested)


def _tests_for_zero(tested: frozenset[str], bound: str) -> bool:
    return bool(tested.intersection({bound, f"{bound}.size()", f"{bound}->size()", f"{bound}.length()"}))


_NULLS = frozenset({"NULL", "nullptr", "0"})


# `n > 0` written each way: (operator with the subject on the left, the literal) -> the subject is positive when
# the comparison holds (True) or when it fails (False).
_AGAINST_ZERO = {(">", "0"): True, (">=", "1"): True, ("<=", "0"): False, ("<", "1"): False}
_MIRRORED = {">": "<", "<": ">", ">=": "<=", "<=": ">="}


def _compared_with_zero(node: Node) -> tuple[Node, bool] | None:
    """``(n, True)`` for ``n > 0`` (or ``0 < n``, ``n >= 1``), ``(n, False)`` for ``n <= 0`` (or ``n < 1``): a
    variable or field compared with zero, as the test ``n > 0``."""
    if node.type != "binary_expression" or syn.operator(node) not in _MIRRORED:
        return None
    left, right = syn.strip(node.child_by_field_name("left")), syn.strip(node.child_by_field_name("right"))
    for subject, other, operator in ((left, right, syn.operator(node)), (right, left, _MIRRORED[syn.operator(node)])):
        if subject is not None and other is not None and subject.type in ("identifier", "field_expression") and other.type == "number_literal":
            positive = _AGAINST_ZERO.get((operator, syn.text(other)))
            if positive is not None:
                return subject, positive
    return None


def _counts_up_from_zero(initializer: Node | None, condition: Node | None) -> bool:
    """``for (int i = 0; i < n; ...)`` (or ``i = 0``, ``n > i``): the first test is whether ``n`` is positive."""
    test = syn.strip(condition)
    if initializer is None or test is None or test.type != "binary_expression" or syn.operator(test) not in ("<", ">"):
        return False
    counter = syn.strip(test.child_by_field_name("left" if syn.operator(test) == "<" else "right"))
    if counter is None or counter.type != "identifier":
        return False
    name = syn.text(counter)
    for target, value in _assignments(syn.descendants(initializer)):
        if syn.text(target) == name:
            return value.type == "number_literal" and syn.text(value) == "0"
    return False


def _compared_with_constant(node: Node) -> tuple[Node, str, bool] | None:
    """``(method, "2", True)`` for ``method == 2`` (``False`` for ``!=``): a variable or field compared with a
    number or character literal."""
    if node.type != "binary_expression" or syn.operator(node) not in ("==", "!="):
        return None
    left, right = syn.strip(node.child_by_field_name("left")), syn.strip(node.child_by_field_name("right"))
    for subject, other in ((left, right), (right, left)):
        if subject is not None and other is not None and subject.type in ("identifier", "field_expression") and other.type in ("number_literal", "char_literal"):
            return subject, syn.normalized(other), syn.operator(node) == "=="
    return None


def _compared_with_null(node: Node) -> tuple[Node, bool] | None:
    """``(p, False)`` for ``p == nullptr`` (true when ``p`` is null), ``(p, True)`` for ``NULL != p``."""
    if node.type != "binary_expression" or syn.operator(node) not in ("==", "!="):
        return None
    left, right = syn.strip(node.child_by_field_name("left")), syn.strip(node.child_by_field_name("right"))
    for subject, other in ((left, right), (right, left)):
        if subject is not None and other is not None and subject.type in ("identifier", "field_expression") and syn.text(other) in _NULLS:
            return subject, syn.operator(node) == "!="
    return None


def _assignments(nodes: Iterable[Node]) -> Iterator[tuple[Node, Node]]:
    """``(target, value)`` for each plain assignment (``p = v``) and initialised declaration (``T* p = v``) among
    ``nodes``, both stripped of parentheses."""
    for node in nodes:
        if node.type == "assignment_expression" and syn.operator(node) == "=":
            target, value = syn.strip(node.child_by_field_name("left")), syn.strip(node.child_by_field_name("right"))
        elif node.type == "init_declarator":
            target, value = syn.declared_identifier(node.child_by_field_name("declarator")), syn.strip(node.child_by_field_name("value"))
        else:
            continue
        if target is not None and value is not None:
            yield target, value


#: Literals a flag is set to, and the truth they give it.
_TRUTH_OF_LITERALS = {"true": True, "TRUE": True, "1": True, "false": False, "FALSE": False, "0": False, "NULL": False, "nullptr": False}
_LITERALS = frozenset({"true", "false", "number_literal", "null", "identifier"})


def _known_after(walked: Iterable[list[Node]]) -> list[tuple[Node, bool]]:
    """What a step makes known of the variables and members it sets, given the nodes of each of its roots: set from
    a plain ``new`` (``p = new T``, ``s->m = new T``) or from ``std::make_shared``/``std::make_unique``, each of which
    throws rather than return null, it is not null (``new (std::nothrow)`` may be); set to a literal truth value
    (``b->push = TRUE``, ``done = false``, ``p = nullptr``), a test of it right after goes the way the literal says."""
    found = []
    for nodes in walked:
        for target, value in _assignments(nodes):
            if target.type not in ("identifier", "field_expression"):
                continue
            if _never_null(value):
                found.append((target, True))
            elif value.type in _LITERALS and (truth := _TRUTH_OF_LITERALS.get(syn.text(value))) is not None:
                found.append((target, truth))
    return found


#: Factories that return a new object or throw: never null.
_NEVER_NULL_FACTORIES = frozenset({"make_shared", "make_unique", "std::make_shared", "std::make_unique"})


def _never_null(value: Node | None) -> bool:
    if value is None:
        return False
    if value.type == "new_expression":
        return value.child_by_field_name("placement") is None
    return value.type == "call_expression" and syn.callee_name(value) in _NEVER_NULL_FACTORIES


_CHANGED_NAMES = frozenset({"identifier", "field_identifier"})


def _names_read(node: Node | None) -> frozenset[str]:
    """The variables and fields an expression names (``caps`` and ``canMap`` for ``caps.canMap``)."""
    if node is None:
        return frozenset()
    return frozenset(syn.text(child) for child in syn.descendants(node) if child.type in _CHANGED_NAMES)


def changed_names(nodes: tuple) -> frozenset[str]:
    """The names a step may change: assigned (``x = ...``, ``s.f = ...``), incremented, passed by address
    (``fill(&caps)``) or declared (``int x = ...``: a new variable from here on)."""
    return _changed_names_in([list(syn.descendants(root)) for root in nodes if root is not None])


def _changed_names_in(walked: Iterable[list[Node]]) -> frozenset[str]:
    """:func:`changed_names`, given each root's nodes."""
    names: set[str] = set()
    for nodes in walked:
        for node in nodes:
            target = _changed_target(node)
            if target is not None:
                names |= _names_changed(target)
            elif node.type == "declaration":
                for index, child in enumerate(node.children):
                    if node.field_name_for_child(index) == "declarator":
                        names |= _names_read(syn.declared_identifier(child))
    return frozenset(names)


def _names_changed(target: Node) -> frozenset[str]:
    """The names whose tests a change of ``target`` may end: a member's own name (``b->range = n`` leaves a test of
    ``b`` or of ``b->push`` as it was), an array's for its elements (not its index's), any other target's names."""
    node = syn.strip(target)
    if node is None:
        return frozenset()
    if node.type == "field_expression":
        field = node.child_by_field_name("field")
        return frozenset({syn.text(field)}) if field is not None else _names_read(node)
    if node.type == "subscript_expression":
        array = node.child_by_field_name("argument")
        return _names_changed(array) if array is not None else _names_read(node)
    return _names_read(node)


#: The nodes that may change what they name (see :func:`_changed_target`).
_CHANGING = frozenset({"assignment_expression", "update_expression", "pointer_expression"})


def _changed_target(node: Node) -> Node | None:
    """What ``node`` changes: an assignment's left side, an increment's operand, what ``&`` passes on."""
    kind = node.type
    if kind == "assignment_expression":
        return node.child_by_field_name("left")
    if kind == "update_expression":
        return node.child_by_field_name("argument")
    if kind == "pointer_expression" and syn.operator(node) == "&":
        return node.child_by_field_name("argument")
    return None


def _changed_in_lambdas(walk: syn.Walk) -> frozenset[str]:
    """The names the lambdas of a body may change (``[&] { ready = true; }``)."""
    names: set[str] = set()
    # Every lambda lies in a nested piece of code the walk did not enter: a lambda, a function, a class with a
    # body (`struct stat st;` names a type, and holds none).
    for nested, kind in zip(walk.nodes[1:], walk.types[1:]):
        if kind not in syn.NESTED_CODE or (kind in _TYPE_SPECIFIERS and nested.child_by_field_name("body") is None):
            continue
        for node in syn.descendants(nested, skip=frozenset()):
            if node.type == "lambda_expression":
                inner = node.child_by_field_name("body")
                names |= changed_names((inner,))
    return frozenset(names)


_TYPE_SPECIFIERS = frozenset({"class_specifier", "struct_specifier"})


def _changing_names(walk: syn.Walk) -> frozenset[str]:
    """Names a function assigns, increments, passes by address, or declares inside a loop (its lambdas, nested
    functions and classes included)."""
    names: set[str] = set()
    loops: list[int] = []  # where the walk leaves each loop around the current node
    for index, (node, kind) in enumerate(zip(walk.nodes, walk.types)):
        while loops and loops[-1] <= index:
            loops.pop()
        if index and kind in syn.NESTED_CODE:  # its nodes are not in the walk
            _changing_names_below(node, bool(loops), names)
            continue
        target = _changed_target(node) if kind in _CHANGING else None
        if target is None and kind == "init_declarator" and loops:
            target = node.child_by_field_name("declarator")
        if target is not None:
            names |= _names_read(target)
        if kind in _LOOPS:
            loops.append(walk.ends[index])
    return frozenset(names)


def _changing_names_below(top: Node, in_loop: bool, names: set[str]) -> None:
    """:func:`_changing_names` of ``top`` and what is under it, read from the tree."""
    stack: list[tuple[Node, bool]] = [(top, in_loop)]
    while stack:
        node, in_loop = stack.pop()
        kind = node.type
        target = _changed_target(node)
        if target is None and kind == "init_declarator" and in_loop:
            target = node.child_by_field_name("declarator")
        if target is not None:
            names |= _names_read(target)
        nested = in_loop or kind in _LOOPS
        stack.extend((child, nested) for child in node.named_children)


def _checks_a_device_api_call(macro_call: Node) -> bool:
    """Whether a macro invocation checks a call of an accelerator API (``CHECK(cudaMalloc(&p, n))``,
    ``NCCLCHECK(ncclAllReduce(...))``, ``VK_CHECK(vkQueueSubmit(...))``): such failures are sticky or fatal in
    practice, and the macro is the project's way to give up. A check of the project's own call
    (``RETURN_IF_FAILED(read_block(...))``) or of a plain condition is an error path like any other."""
    arguments = macro_call.child_by_field_name("arguments")
    if arguments is None:
        return False
    return any(
        node.type == "call_expression" and DEVICE_API.match(syn.callee_name(node).rpartition("::")[2])
        for argument in arguments.named_children
        for node in syn.descendants(argument)
    )


def _of_loop(step: Step, body: Node | None) -> Step:
    """``step``, a test of the loop whose body is ``body``, marked as one (see :attr:`Step.loop_body`)."""
    if step.kind is StepKind.BRANCH and body is not None:
        step.loop_body = body
    return step
