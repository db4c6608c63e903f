"""GEM301–GEM306 for C, C++ and CUDA: every acquisition of the resource table, followed on every path.

For each function (and lambda) body the control-flow graph is built once
(:mod:`gemlint.native.c_cfg`); every acquiring call is then classified:

* its handle goes into a local variable: the paths from the call are searched
  (:func:`gemlint.native.paths.find_leak`) for an exit reached before a release,
  an escape, or a failure test of the acquisition (what each step does is the
  :mod:`~gemlint.native.c_tracker`'s answer, from :mod:`~gemlint.native.c_uses`);
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

import re
import weakref
from bisect import bisect_left
from functools import cached_property
from typing import Callable, Iterator

from gemlint.frontends.native import NativeDocument, Node, function_nodes, ownership_nodes
from gemlint.native import c_syntax as syn
from gemlint.native.c_cfg import Macros, file_macros
from gemlint.native.c_tracker import CTracker, Held
from gemlint.native.c_units import Acquisition, Finding, Target, Unit, parameters
from gemlint.native.c_uses import Use, Uses, delete_operand, is_array_delete, plain_qualifier, released_argument, stored_for_later
from gemlint.native.once import LOOPS, ends_with_the_process, never_runs, runs_once, throws_end_the_process
from gemlint.native.paths import Step, StepKind, assumptions_at, find_leak
from gemlint.native.resources import (
    ACQUIRES,
    MEMORY_KINDS,
    MISMATCH_CODE,
    NOT_ANALYSED,
    NULL_VALUES,
    RELEASES,
    Acquire,
    Kind,
    Release,
    acquires_by_name,
    release_for,
    releases_by_name,
)

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_ASSIGNMENTS = frozenset({"assignment_expression"})
_END_CAPTURE = frozenset({"cudaStreamEndCapture", "cuStreamEndCapture"})
_CALLS = frozenset({"call_expression"})
_CAPTURE_TO_GRAPH = re.compile(rb"\b(?:cudaStreamBeginCaptureToGraph|cuStreamBeginCaptureToGraph)\b")
_PLAIN_BEGIN = re.compile(rb"\b(?:cudaStreamBeginCapture|cuStreamBeginCapture)\b")


def _any_word(names: set[str]) -> re.Pattern[bytes]:
    """One of ``names`` as a whole word. The lookahead on their first letters lets the search pass over most
    places without trying each alternative (half the time on a file of C++)."""
    firsts = "".join(sorted({name[0] for name in names}))
    alternatives = b"|".join(re.escape(name).encode() for name in sorted(names))
    return re.compile(rb"\b(?=[" + re.escape(firsts).encode() + rb"])(?:" + alternatives + rb")\b")


_ACQUIRE_MARKERS = _any_word({row.name.rstrip("[]") for row in ACQUIRES})
_RELEASE_MARKERS = _any_word({row.name.rstrip("[]") for row in RELEASES})


def _marker_starts(markers: re.Pattern[bytes], data: bytes) -> list[int]:
    """Where each match of ``markers`` in the file begins, in order: the file is searched once, not once per
    function (a body asks whether a start lies within it). The tree's offsets are the file's: what the grammar
    reads differs from it only by bytes of the same length, outside the names searched for."""
    return [match.start() for match in markers.finditer(data)]


def _spells_one(starts: list[int], node: Node) -> bool:
    index = bisect_left(starts, node.start_byte)
    return index < len(starts) and starts[index] < node.end_byte


_ACQUIRING = frozenset({"call_expression", "new_expression"})


def _acquiring_call(call: Node) -> Acquire | None:
    """The row of the acquire ``call`` makes, if it names one (not a method, not ``new``)."""
    if syn.is_method_call(call):
        return None
    name = syn.callee_name(call)
    row = acquires_by_name().get(syn.last_component(name))
    if row is None or row.name in ("new", "new[]") or not plain_qualifier(name):
        return None
    return row


def _may_acquire(unit: Unit) -> bool:
    """Whether the body holds an acquire call or a ``new`` that is not placement ``new`` (outside nested code, as
    the steps' facts hold them): where the marker found in its text is in a comment, a string or a method name,
    its graph is not built."""
    for node in unit.walk.of_type(_ACQUIRING):
        if node.type == "new_expression":
            if node.child_by_field_name("placement") is None:
                return True
        elif _acquiring_call(node) is not None:
            return True
    return False


class FileAnalysis:
    """Every GEM3xx finding of one file, computed once and shared by the rules of the family."""

    def __init__(self, document: NativeDocument, registers_itself: Callable[[str], bool] | None = None, tooling: bool = False) -> None:
        self.document = document
        #: A test or benchmark program (by its path): what a function it runs once forgets is held until it exits.
        self._tooling = tooling
        #: Whether objects of a class (by its last name) register themselves with an owner when built, as read
        #: from the project's other files (None: only this file is known).
        self._registers_itself = registers_itself
        self.findings: list[Finding] = []
        #: Findings left unreported because their code did not parse (said with --verbose).
        self.unreported: list[Finding] = []
        self._mismatches: set[tuple[int, int]] = set()
        self._step_acquisitions: dict[tuple[int, int, int], list[Acquisition]] = {}
        self._once: dict[int, bool] = {}
        self._last: dict[int, bool] = {}
        self._uncaught: dict[int, bool] = {}  # function -> an exception thrown out of it ends the process
        self._uncalled: dict[int, bool] = {}  # function -> nothing calls it (a leftover)
        # Weakly: a closure over self is a cycle, which would keep the document's tree alive until a full collection.
        owner = weakref.ref(self)
        self.uses = Uses(lambda: owner().functions_by_name)

    # -- units ----------------------------------------------------------------------------
    @cached_property
    def macros(self) -> Macros:
        """Read only for a file with something to acquire: the query that finds its ``#define`` lines walks the tree."""
        return file_macros(self.document)

    @cached_property
    def units(self) -> list[Unit]:
        units = []
        for node in function_nodes(self.document):
            body = node.child_by_field_name("body")
            if body is not None and body.type == "compound_statement":
                units.append(Unit(self.macros, node, body))
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
            if b"EndCapture" not in unit.source:
                continue
            for node in unit.walk.of_type(_CALLS):
                if syn.last_component(syn.callee_name(node)) in _END_CAPTURE:
                    names.add(unit.name)
        return frozenset(names)

    @cached_property
    def _acquire_markers(self) -> list[int]:
        return _marker_starts(_ACQUIRE_MARKERS, self.document.data)

    @cached_property
    def _release_markers(self) -> list[int]:
        return _marker_starts(_RELEASE_MARKERS, self.document.data)

    # -- running -------------------------------------------------------------------------
    def run(self) -> list[Finding]:
        if not self._acquire_markers:
            return self.findings
        member_acquisitions: list[Acquisition] = []
        for unit in self.units:
            if not _spells_one(self._acquire_markers, unit.body) or not _may_acquire(unit):
                continue  # nothing in this body can acquire: do not build its graph
            if self._never_runs(unit):
                continue  # a leftover function nothing calls: what it would leak is never acquired
            try:
                acquisitions = list(self._acquisitions(unit))
                for acquisition in acquisitions:
                    self._check(acquisition)
                    if acquisition.target is Target.ESCAPED:
                        member_acquisitions.append(acquisition)
            except RecursionError:
                # Too deep to follow: said, so that the function is never mistaken for one found clean.
                self._report(NOT_ANALYSED, unit.node, f"`{unit.name}` is nested too deeply to follow; its resources were not checked")
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
        graph = acquisition.unit.graph
        leak = find_leak(
            acquisition.step,
            tracker,
            state=Held(),
            assumed=assumptions_at(graph, acquisition.step, tracker.relevant),
            relevant=tracker.relevant,
            # An exit in a branch of `if constexpr` may not exist for the types instantiated; a throw that nothing
            # catches on the way out of `main` ends the process, as `exit()` does.
            skipped_exit=lambda step: (step.exit.startswith("throws") and self._throws_end_the_process(acquisition.unit))
            or _in_compile_time_branch(step, acquisition.call, acquisition.unit.node),
        )
        if leak is None or (self._runs_once(acquisition.unit) and (self._released_somewhere(acquisition) or self._kept_somewhere(acquisition))):
            # What a function that runs once per process leaks on a failure exit, having released it or handed it to
            # an owner on its normal path (`ctx->attrs = attrs`, freed when the owner is), is held only until the
            # failure ends the process.
            return
        if acquisition.row.name == "new" and acquisition.call.type == "new_expression" and self._registered_with_an_owner(acquisition.call):
            return
        if self._tooling and not _in_a_loop(acquisition) and self._runs_once(acquisition.unit):
            # A test or benchmark program's check that `main` runs once (`matMulTest()`): what it forgets outside
            # its loops is held once, until the program exits when its checks are done. A sample's is reported:
            # users copy it into services that run it per request.
            return
        if _once_in_main(acquisition):
            # `main` runs once: what it acquires outside any loop, or in its loop over the command line (a file read
            # for `-f` and replaced by `-i`), is held at most once per option until the process ends.
            return
        if self._ends_with_the_process(acquisition.unit) and (not _in_a_loop(acquisition) or not self._releases_anything(acquisition.unit)):
            # The last thing `main` does: what it acquires once is held until the process ends, as `main`'s is,
            # whatever else it cleans up. In a loop, only where it cleans nothing up (it leaves everything to the end).
            return
        broken = self._parse_error_between(acquisition, leak.step.line)
        if broken:
            self.unreported.append(
                Finding(
                    row.kind.leak_code,
                    acquisition.call,
                    f"a possible {row.kind.leak_code} finding in `{acquisition.unit.name}` is not reported: the code "
                    f"between lines {syn.line_of(acquisition.call)} and {leak.step.line} did not parse (line {broken})",
                )
            )
            return
        if row.kind is Kind.CAPTURE:
            message = (
                f"the stream capture begun on `{acquisition.key}` is not ended when the function {leak.reason}; "
                f"call `{release_for(row)}` on every path (the stream stays in capture mode and the graph is lost)"
            )
        elif (container := self.uses.dying_container(acquisition.unit, acquisition.variable)) is not None:
            message = (
                f"`{acquisition.variable}` holds {row.kind.description} from `{row.name}` that is put into `{container}`, "
                f"a local container of raw pointers that releases none of them: it is lost when `{container}` goes out "
                f"of scope; call `{release_for(row)}` on each element before the function returns, or hold them in smart "
                f"pointers"
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

    @staticmethod
    def _releases_anything(unit: Unit) -> bool:
        return any(True for _ in _released_in(unit))

    def _released_somewhere(self, acquisition: Acquisition) -> bool:
        """The function releases what ``acquisition`` holds on some path: a release call or ``delete`` of its
        variable or a local copied from it (a cleanup that forgets a handle on every path is not this)."""
        names = self.uses.aliases(acquisition.unit, acquisition.variable) if acquisition.variable else frozenset()
        return any(released in names for released in _released_in(acquisition.unit))

    def _kept_somewhere(self, acquisition: Acquisition) -> bool:
        """The function stores what ``acquisition`` holds, or a local copied from it, where it outlives the call on
        some path: a field, a dereference, an element or a global (not a plain local)."""
        if not acquisition.variable:
            return False
        names = self.uses.aliases(acquisition.unit, acquisition.variable)
        return any(
            right is not None and right.type == "identifier" and syn.text(right) in names and stored_for_later(acquisition.unit, right)
            for facts in acquisition.unit.facts.values()
            for assignment in facts.assignments
            for right in [syn.strip(assignment.child_by_field_name("right"))]
        )

    def _runs_once(self, unit: Unit) -> bool:
        """``unit`` is a function other than ``main`` that runs at most once per process (``main`` itself is left
        to the exits the graph knows: leaving it ends the process)."""
        if unit.name in ("main", "wmain"):
            return False
        return self._of_function(self._once, unit, lambda node: runs_once(self.document, node, self._defines_main))

    def _never_runs(self, unit: Unit) -> bool:
        return self._of_function(self._uncalled, unit, lambda node: never_runs(self.document, node, self._defines_main))

    def _throws_end_the_process(self, unit: Unit) -> bool:
        return self._of_function(self._uncaught, unit, lambda node: throws_end_the_process(self.document, node, self._defines_main))

    def _ends_with_the_process(self, unit: Unit) -> bool:
        return self._of_function(self._last, unit, lambda node: ends_with_the_process(self.document, node))

    @staticmethod
    def _of_function(known: dict[int, bool], unit: Unit, ask: Callable[[Node], bool]) -> bool:
        """``ask`` of the function definition ``unit`` (False for any other unit: a lambda, a file's statements),
        once per function."""
        if unit.node.type != "function_definition":
            return False
        key = unit.node.start_byte
        if key not in known:
            known[key] = ask(unit.node)
        return known[key]

    @property
    def _defines_main(self) -> bool:
        return any(name in self.functions_by_name for name in ("main", "wmain"))

    def _parse_error_between(self, acquisition: Acquisition, line: int) -> int:
        """The first line with a parse error (a tree-sitter ERROR or missing node) from the acquisition to
        ``line`` of the path that leaks, or 0: a finding there may come from code the grammar misread."""
        start = acquisition.call.start_byte
        for error in _parse_errors(acquisition.unit.body):
            if error.end_byte >= start and syn.line_of(error) <= line:
                return syn.line_of(error)
        return 0

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
        # Code no path reaches is not compiled in (a branch the build switches off): what it acquires is never held.
        reachable = unit.graph.reachable()
        for step in unit.graph.steps:
            if step.index in reachable:
                yield from self.step_acquisitions(unit, step)

    def step_acquisitions(self, unit: Unit, step: Step) -> list[Acquisition]:
        key = (unit.node.start_byte, unit.node.end_byte, step.index)
        cached = self._step_acquisitions.get(key)
        if cached is not None:
            return cached
        found: list[Acquisition] = []
        facts = unit.facts.get(step.index)
        if facts is not None:
            for call in facts.calls:
                row = _acquiring_call(call)
                if row is None:
                    continue
                acquisition = self._classify_call(unit, step, call, row)
                if acquisition is not None:
                    found.append(acquisition)
            table = acquires_by_name()
            for new in facts.news:
                if new.child_by_field_name("placement") is not None:
                    continue
                is_array = _is_array_new(new)
                row = table["new[]" if is_array else "new"]
                if not is_array and self._owned_elsewhere(unit, new):
                    found.append(Acquisition(unit, step, new, row, Target.ESCAPED))
                    continue
                found.append(
                    self._classify_returned(unit, step, new, row, has_arguments=new.child_by_field_name("arguments") is not None)
                )
        self._step_acquisitions[key] = found
        return found

    def _captures_into_a_graph(self, unit: Unit) -> bool:
        """The capture ``unit`` ends began with ``BeginCaptureToGraph``: here, or in another function of the file
        (a begin/end pair split over two functions) when this one begins no capture of its own."""
        if _CAPTURE_TO_GRAPH.search(unit.source):
            return True
        return bool(_CAPTURE_TO_GRAPH.search(self.document.data)) and not _PLAIN_BEGIN.search(unit.source)

    def _classify_call(self, unit: Unit, step: Step, call: Node, row: Acquire) -> Acquisition | None:
        args = syn.arguments(call)
        if row.kind is Kind.GRAPH and row.name in _END_CAPTURE and self._captures_into_a_graph(unit):
            # A capture begun with `cudaStreamBeginCaptureToGraph(stream, graph, ...)` records into the caller's
            # graph, and ending it hands back that graph, which its owner destroys: nothing new to release here.
            return None
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
        if target is not None and target.type == "identifier" and _local_here(unit, target):
            if syn.text(target) in unit.parameter_names and _when_not_given(call, syn.text(target)):
                # `if (stream == nullptr) cudaStreamCreate(&stream);`: a fallback for a caller that passes none, as
                # for a buffer (see _classify_returned)
                return Acquisition(unit, step, call, row, Target.ESCAPED, escaped_into=target)
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
            if row.name == "new" and _initialises_an_object(parent, self.document.data):
                return Acquisition(unit, step, node, row, Target.ESCAPED, escaped_into=identifier)  # `Shared<T> x = new T;`
            if identifier is not None and unit.is_local(syn.text(identifier)) and not syn.is_reference_declarator(declarator):
                return Acquisition(unit, step, node, row, Target.TRACKED, variable=syn.text(identifier))
            return Acquisition(unit, step, node, row, Target.ESCAPED, escaped_into=identifier)
        if parent.type == "assignment_expression" and parent.child_by_field_name("right") == child:
            left = syn.strip(parent.child_by_field_name("left"))
            if syn.operator(parent) == "=" and left is not None and left.type == "identifier" and _local_here(unit, left):
                if self.uses.classify(unit, parent) is Use.ESCAPE:  # `x.adopt(c = new T)`: the value goes on
                    return Acquisition(unit, step, node, row, Target.ESCAPED, escaped_into=parent)
                if syn.text(left) in unit.parameter_names and _when_not_given(parent, syn.text(left)):
                    # `if (out == NULL) out = malloc(n);`: a fallback for a caller that passes no buffer. Whether any
                    # caller does is not known here; one that always passes a buffer never runs it.
                    return Acquisition(unit, step, node, row, Target.ESCAPED, escaped_into=left)
                return Acquisition(unit, step, node, row, Target.TRACKED, variable=syn.text(left))
            return Acquisition(unit, step, node, row, Target.ESCAPED, escaped_into=left)
        if parent.type == "expression_statement" and row.name == "new[]":
            # `new int[huge];`: an array dropped as soon as it is made has no use but its failure (a portable way to
            # raise std::bad_alloc without `throw`)
            return Acquisition(unit, step, node, row, Target.ESCAPED)
        if parent.type == "expression_statement" and not (row.name == "new" and has_arguments):
            # `new Widget(parent)` registers itself with its argument in many frameworks; a bare `new T;` does not.
            return Acquisition(unit, step, node, row, Target.DISCARDED)
        return Acquisition(unit, step, node, row, Target.ESCAPED)

    def _owned_elsewhere(self, unit: Unit, new: Node) -> bool:
        """``new Widget(parent)`` (Qt-style parent ownership: a ``this`` or ``parent`` argument, or the raw pointer of
        an object a smart pointer holds, ``owner.get()``), or ``new`` of a class that deletes itself (``delete this``
        in its methods, or a library base class that does). A class that registers itself with what it is given is
        asked later, of a ``new`` about to be reported (:meth:`_registered_with_an_owner`)."""
        type_name = syn.last_component(syn.name_of(new.child_by_field_name("type")))
        qt_class = bool(type_name) and _QT_CLASS.match(type_name) is not None and self._includes_qt
        for argument in syn.arguments(new):
            argument = syn.strip(argument)
            if argument is None:
                continue
            if argument.type == "this" or (argument.type in ("identifier", "field_expression") and "parent" in syn.normalized(argument).lower()):
                return True
            if _raw_pointer_of_owner(argument):
                return True  # `new QTcpServer(m_server.get())`: a parent held by a smart pointer
            if qt_class and _names_a_held_object(unit, argument):
                # `new QTreeWidgetItem(ui->treeWidget)`: a Qt object built on an object the class holds (Qt
                # Designer's `ui->` widgets, a member view) joins that object's tree, and the parent deletes it
                return True
        return bool(type_name) and (type_name in self.self_owning_classes or type_name in SELF_DELETING_BASES)

    @cached_property
    def _includes_qt(self) -> bool:
        """The file is Qt code (a Qt header, a uic-generated `ui_*.h`, `QString`, `Q_OBJECT`): a ``Q``-named class is
        Qt's there, not a project's quantized layer (``QLinear``)."""
        return _QT_SOURCE.search(self.document.text) is not None

    def _registered_with_an_owner(self, new: Node) -> bool:
        """``new Conv2d(&net, ...)`` of a class whose constructor (or a base's) hands ``this`` to what it is given
        (the network keeps it). Asked only of a ``new`` about to be reported: the answer reads other files."""
        if self._registers_itself is None or new.child_by_field_name("arguments") is None:
            return False
        type_name = syn.last_component(syn.name_of(new.child_by_field_name("type")))
        return bool(type_name) and self._registers_itself(type_name)

    @cached_property
    def self_owning_classes(self) -> frozenset[str]:
        """Classes of the file that own themselves: a method runs ``delete this``, or the class derives from one
        that does (of the file, or a library's self-deleting worker such as ``Napi::AsyncWorker``)."""
        owning: set[str] = set()
        bases: dict[str, set[str]] = {}
        for node in ownership_nodes(self.document):
            if node.type == "delete_expression":
                operand = delete_operand(node)
                if operand is not None and operand.type == "this":
                    name = _enclosing_class(node)
                    if name:
                        owning.add(name)
            elif node.type in ("class_specifier", "struct_specifier"):
                name = syn.last_component(syn.name_of(node.child_by_field_name("name")))
                clause = next((c for c in node.named_children if c.type == "base_class_clause"), None)
                if name and clause is not None:
                    bases[name] = {syn.name_of(c) for c in clause.named_children if c.type in ("type_identifier", "qualified_identifier", "template_type")}
        changed = True
        while changed:
            changed = False
            for name, parents in bases.items():
                if name not in owning and any(p in SELF_DELETING_BASES or syn.last_component(p) in owning for p in parents):
                    owning.add(name)
                    changed = True
        return frozenset(owning)

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
        for key in self._members_assigned_otherwise(kinds, {acquisition.call for acquisition in escaped}):
            del kinds[key]  # `buf_ = ptr` from another allocation (or a parameter): what it holds is not known
        for unit in self.units:
            if not _spells_one(self._release_markers, unit.body):
                continue
            for facts in unit.facts.values():
                releases: list[tuple[Node, Node, Release]] = []
                for call in facts.calls:
                    released = released_argument(call)
                    if released is not None:
                        releases.append((call, released[0], released[1]))
                for delete in facts.deletes:
                    operand = delete_operand(delete)
                    if operand is not None:
                        releases.append((delete, operand, releases_by_name()["delete[]" if is_array_delete(delete) else "delete"]))
                for node, argument, row in releases:
                    key = self._member_key(unit, argument)
                    held = kinds.get(key) if key is not None else None
                    if held and len(held) == 1 and row.kind in MEMORY_KINDS and row.name != "realloc":
                        (kind,) = held
                        if kind is not row.kind:
                            self.report_mismatch(node, row, labels[key], syn.text(argument))

    def _members_assigned_otherwise(self, members: dict[tuple[str, str], set[Kind]], calls: set[Node]) -> set[tuple[str, str]]:
        """The ``members`` that an assignment also sets to something other than null or one of ``calls``."""
        found = set()
        names = {member.removesuffix("[]").encode() for _, member in members}
        for unit in self.units:
            if not any(name in unit.source for name in names):
                continue  # read from the body's text first: most bodies name none of them
            for assignment in unit.walk.of_type(_ASSIGNMENTS):
                key = self._member_key(unit, assignment.child_by_field_name("left"))
                if key not in members:
                    continue
                right = syn.strip(assignment.child_by_field_name("right"))
                if right is not None and right not in calls and syn.text(right) not in NULL_VALUES:
                    found.add(key)
        return found

    def _member_key(self, unit: Unit, expression: Node | None) -> tuple[str, str] | None:
        """(class, member) for ``member_`` / ``this->member_`` inside a method, ("", name) for a global; the
        elements of one (``buffers_[i]``) as (class, ``member[]``): an array of buffers each allocated alike."""
        expression = syn.strip(expression)
        if expression is None:
            return None
        if expression.type == "subscript_expression":
            array = self._member_key(unit, expression.child_by_field_name("argument"))
            return (array[0], array[1] + "[]") if array is not None and not array[1].endswith("[]") else None
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



#: Library base classes whose objects delete themselves when their work is done.
SELF_DELETING_BASES = frozenset(
    {"Napi::AsyncWorker", "Napi::AsyncProgressWorker", "Napi::AsyncProgressQueueWorker", "Nan::AsyncWorker",
     "Nan::AsyncProgressWorker", "Nan::AsyncProgressQueueWorker",
     # wxWidgets' top-level frames: closing one destroys it (`Destroy()`, deleted by the framework)
     "wxFrame", "wxMDIParentFrame", "wxMiniFrame", "wxTopLevelWindow"}
)


def _in_compile_time_branch(step, acquired: Node, function: Node) -> bool:
    """The leaking exit lies in an ``if constexpr`` of ``function`` that does not hold the acquisition too (an
    "unsupported type" return of a template): which branch exists is decided per instantiation."""
    line = step.line
    if not line:
        return False
    todo = [function]
    while todo:
        node = todo.pop()
        if node.start_point[0] + 1 > line or node.end_point[0] + 1 < line:
            continue
        if node.type == "if_statement" and any(child.type == "constexpr" for child in node.children):
            if not (node.start_byte <= acquired.start_byte < node.end_byte):
                return True
        todo.extend(node.children)
    return False


def _released_in(unit: Unit) -> Iterator[str | None]:
    """What each release call and ``delete`` of ``unit`` releases, as written (None for a ``delete`` whose operand
    is not read)."""
    for facts in unit.facts.values():
        for call in facts.calls:
            released = released_argument(call)
            if released is not None:
                yield syn.text(syn.strip(released[0]) or released[0])
        for delete in facts.deletes:
            operand = delete_operand(delete)
            yield syn.text(operand) if operand is not None else None


def _in_a_loop(acquisition: Acquisition) -> bool:
    node = acquisition.call.parent
    while node is not None and node != acquisition.unit.node:
        if node.type in LOOPS:
            return True
        node = node.parent
    return False


def _once_in_main(acquisition: Acquisition) -> bool:
    """The acquisition is in ``main``, outside any loop but those over its command-line arguments (a loop whose
    condition reads ``argc``)."""
    unit = acquisition.unit
    if unit.node.type != "function_definition" or unit.name not in ("main", "wmain"):
        return False
    names = [name for name, _ in parameters(unit.node)]
    count = names[0] if names else None
    node = acquisition.call.parent
    while node is not None and node != unit.node:
        if node.type in LOOPS:
            condition = node.child_by_field_name("condition")
            if count is None or condition is None or count not in _IDENTIFIER.findall(syn.text(condition)):
                return False
        node = node.parent
    return True


def _when_not_given(assignment: Node, parameter: str) -> bool:
    """``assignment`` is (in) the branch taken when ``parameter`` is null: ``if (p == NULL)``, ``if (!p)``,
    ``if (nullptr == p)``."""
    child, node = assignment, assignment.parent
    while node is not None and node.type not in ("function_definition", "lambda_expression"):
        if node.type == "if_statement" and child == node.child_by_field_name("consequence"):
            condition = re.sub(r"\s+", "", syn.text(node.child_by_field_name("condition")))
            while condition.startswith("(") and condition.endswith(")"):
                condition = condition[1:-1]
            null = r"(?:NULL|nullptr|0)"
            name = re.escape(parameter)
            return re.fullmatch(rf"!{name}|{name}=={null}|{null}=={name}", condition) is not None
        child, node = node, node.parent
    return False


def _initialises_an_object(declarator: Node, source: bytes) -> bool:
    """``Shared<T> x = new T(...)``: the declared variable is a class-template object (a custom smart pointer)
    built from the pointer, not a pointer itself. So is one of a type named for a smart pointer (``FooPtr x = new
    Foo``, a typedef of an intrusive pointer that code generators such as TARS and Ice emit), unless the file
    defines that name as a raw pointer (``typedef Foo *FooPtr;``)."""
    target = declarator.child_by_field_name("declarator")
    if target is None or target.type != "identifier":
        return False
    declaration = declarator.parent
    declared = declaration.child_by_field_name("type") if declaration is not None else None
    while declared is not None and declared.type == "qualified_identifier":
        declared = declared.child_by_field_name("name")
    if declared is None:
        return False
    if declared.type == "template_type":
        return True
    name = syn.text(declared)
    return declared.type == "type_identifier" and _SMART_POINTER_NAME.search(name) is not None and not _raw_pointer_alias(name, source)


#: How smart-pointer typedefs are named (``JsonValueObjPtr``, ``Ice::ObjectPtr``, ``Node::Ptr``, ``buffer_ptr``).
_SMART_POINTER_NAME = re.compile(r"(?:Ptr|_ptr)$")


def _raw_pointer_alias(name: str, source: bytes) -> bool:
    """The file defines ``name`` as a raw pointer: ``typedef Foo *FooPtr;`` or ``using FooPtr = Foo *;``."""
    spelled = re.escape(name.encode())
    return re.search(rb"typedef[^;{}]*\*\s*" + spelled + rb"\s*;|using\s+" + spelled + rb"\s*=[^;{}]*\*\s*;", source) is not None


def _enclosing_class(node: Node) -> str:
    """The class a method belongs to: its class body, or the qualifier of an out-of-class definition."""
    current = node.parent
    while current is not None:
        if current.type in ("class_specifier", "struct_specifier"):
            return syn.last_component(syn.name_of(current.child_by_field_name("name")))
        if current.type == "function_definition":
            name = syn.function_name(current)
            if "::" in name:
                return syn.last_component(name.rsplit("::", 1)[0])
        current = current.parent
    return ""


def _status_variables(call: Node) -> frozenset[str]:
    """The variable a call's status code is stored in: ``cudaError_t e = cudaMalloc(...)``, ``e = cudaMalloc(...)``,
    or through a call it is handed to, ``status = check_cuda_status(cudaMalloc(...))``, ``e = DBG_ERR(...)``:
    whatever the wrapper is named, what it returns is read as the status only where it is compared with a success
    or error value, as a status is (a wrapper that returns something else makes a path unknown, never a leak)."""
    child, parent = call, call.parent
    while parent is not None:
        if syn.is_transparent_parent(parent, child) or (parent.type == "conditional_expression" and child != parent.child_by_field_name("condition")):
            # `e = use_flags ? cudaMalloc(&p, n) : allocWithFlags(&p, n, f)`: the status of whichever ran
            child, parent = parent, parent.parent
            continue
        wrapper = parent.parent if parent.type == "argument_list" else None
        if wrapper is not None and wrapper.type == "call_expression":
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




def analyse(document: NativeDocument, registers_itself: Callable[[str], bool] | None = None, tooling: bool = False) -> list[Finding]:
    """The GEM3xx pairing findings of a document, computed once for all the rules that ask; ``registers_itself``
    says whether objects of a class register themselves with an owner (read from the project's other files),
    ``tooling`` whether the document is a test or benchmark program."""
    return _analysis(document, registers_itself, tooling).findings


def unreported(document: NativeDocument) -> list[Finding]:
    """The findings left unreported because the code they depend on did not parse."""
    return _analysis(document).unreported


def _analysis(document: NativeDocument, registers_itself: Callable[[str], bool] | None = None, tooling: bool = False) -> FileAnalysis:
    key = "gem3xx-pairing"
    if key not in document.cache:
        analysis = FileAnalysis(document, registers_itself, tooling)
        analysis.run()
        document.cache[key] = analysis
    return document.cache[key]


#: A Qt class (``QTreeWidgetItem``, ``QLabel``): its constructors take the parent that will own it.
_QT_CLASS = re.compile(r"Q[A-Z][A-Za-z]+$")
# Signs of a Qt source: a Qt header, the header Qt Designer's uic generates (`ui_panel.h`), Qt's own macros and types.
_QT_SOURCE = re.compile(r'#\s*include\s*(?:<(?:Qt\w*/)?Q[A-Z]\w*(?:\.h)?>|"[^"\n]*\bui_\w+\.h")|\bQ_OBJECT\b|\bQString\b|\bQWidget\b')


def _is_array_new(new: Node) -> bool:
    """``new T[n]`` (the front-end lets the grammar read ``new T*[n]`` as such)."""
    return any(child.type == "new_declarator" for child in new.named_children)


def _parse_errors(body: Node) -> list[Node]:
    """The ERROR and missing nodes of a body."""
    if not body.has_error:
        return []
    found = []
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            found.append(node)
            continue
        stack.extend(child for child in node.children if child.has_error or child.is_missing)
    return sorted(found, key=lambda n: n.start_byte)


def _local_here(unit: Unit, identifier: Node) -> bool:
    """``identifier`` names a local of the function where it stands: a local declared further down (``auto
    transformer = ...`` after ``transformer = new Model``, a member) does not make the name a local above it."""
    name = syn.text(identifier)
    return unit.is_local(name) and unit.declaration_in_scope(name, identifier) is not None


def _names_a_held_object(unit: Unit, argument: Node) -> bool:
    """``argument`` names an object the class holds through a pointer: a member reached through one
    (``ui->treeWidget``), a member of Qt Designer's form (``ui.treeWidget``), or a name that is no local or
    parameter of the function (a member, ``view_``). A value's field (``detection.label``) is none."""
    if argument.type == "field_expression":
        target = syn.strip(argument.child_by_field_name("argument"))
        return syn.operator(argument) == "->" or (target is not None and syn.text(target) == "ui")
    return argument.type == "identifier" and not _local_here(unit, argument) and syn.text(argument) not in unit.parameter_names


def _raw_pointer_of_owner(argument: Node) -> bool:
    """``owner.get()`` / ``owner->get()``: the object a smart pointer holds, handed over as a raw pointer."""
    if argument.type != "call_expression" or syn.arguments(argument):
        return False
    function = argument.child_by_field_name("function")
    field = function.child_by_field_name("field") if function is not None and function.type == "field_expression" else None
    return field is not None and syn.text(field) == "get"
