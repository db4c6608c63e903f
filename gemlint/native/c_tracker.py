"""What each step of a C/C++/CUDA function does to one acquired resource (the
:class:`~gemlint.native.paths.Tracker` of the pairing analysis): releases it (rightly, or wrongly:
GEM303), lets it escape, loses its last handle, or leaves it held; and which branches mean the
acquisition failed (its status says so, its handle is null, a check macro wrapping it returns)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from gemlint.native import c_syntax as syn
from gemlint.native.c_cfg import condition_parts, loop_bound
from gemlint.native.c_units import Acquisition, StepFacts, Target, Unit
from gemlint.native.c_uses import MacroRelease, Use, Uses, delete_operand, is_array_delete, released_argument
from gemlint.native.paths import Effect, Outcome, Step, StepKind
from gemlint.native.resources import CHECK_WRAPPERS, MEMORY_KINDS, NULL_VALUES, SUCCESS_VALUES, Acquire, Kind, Release, releases_by_name

if TYPE_CHECKING:
    from tree_sitter import Node


class FileAnalysis(Protocol):
    """What a tracker needs of the file it runs in (:class:`gemlint.native.c_pairing.FileAnalysis`)."""

    uses: Uses

    def report_mismatch(self, release_node: Node, release: Release, acquired: Acquire, variable: str) -> None: ...

    def step_acquisitions(self, unit: Unit, step: Step) -> list[Acquisition]: ...

_LAST_ERROR = frozenset({"cudaGetLastError", "cudaPeekAtLastError"})
_SUCCESS = re.compile(r"(?i)success|^k?ok$")
#: A predicate on a status whose name says which outcome it is true for (``FAILED(hr)``, ``CUDA_FAILED(...)``,
#: ``SUCCEEDED(hr)``, ``IS_OK(status)``): the C convention COM's HRESULT macros set.
_FAILURE_PREDICATE = re.compile(r"(?i)fail|error|^err_?|_err$")
_SUCCESS_PREDICATE = re.compile(r"(?i)succe|(?:^|_)ok$|^is_?ok")
_STRING_LENGTHS = frozenset({"strlen", "wcslen"})
#: A check of a status named for checking (``checkCudaErrorReturn``, ``check_status``), negated: it did not pass.
_CHECK_PREDICATE = re.compile(r"(?i)^check(?!.*fail)")
_ERROR_WORD = re.compile(r"(?i)err")
_LOOP_TYPES = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})


@dataclass(frozen=True)
class Held:
    """What a path knows of the resource it follows: whether the acquisition's status variables still
    describe it, and the locals the path has copied its handle into so far (``q = p;``): a local that is
    only a copy on another path (``if (managed) q = p;``) holds something else on this one."""

    status: bool = True
    copies: frozenset[str] = frozenset()


class CTracker:
    def __init__(self, analysis: FileAnalysis, acquisition: Acquisition) -> None:
        self.analysis = analysis
        self.acquisition = acquisition
        self.unit = acquisition.unit
        self.names = analysis.uses.aliases(self.unit, acquisition.variable) if acquisition.variable else frozenset()
        # Names a step must mention to do anything to the resource (its handles, its status, its stream).
        self.mentions = self.names | {_base_name(status) for status in acquisition.status} | _identifiers(acquisition.key)
        # The declaration the acquisition's variable names: a local of the same name declared in a nested block
        # (`float loss = ...` inside a loop) is another variable there.
        self.declaration = self.unit.declaration_in_scope(acquisition.variable, acquisition.call) if acquisition.variable else None
        # The steps that may do something to the resource: those naming it, and those whose macros release.
        self._touched = self.analysis.uses.macro_release_steps(self.unit).union(
            *(self.unit.steps_naming.get(name, ()) for name in self.mentions)
        )
        self.release_steps: list[Step] = []
        self.guards = self._release_guards()
        # A capture begun over an array in a loop (`begin(streams[i])` for i < n) is ended by a sibling loop
        # over the same bound: when that loop runs no iteration, neither did this one.
        self.loop_bound = _enclosing_loop_bound(acquisition.call) if acquisition.kind is Kind.CAPTURE else ""
        # The tests enclosing an exit count too: a return under a test that repeats one the path already took
        # the other way (`if (a == b) ... else if (a == b) return;`) is not reached.
        exits = [step for step in self.unit.graph.steps if step.kind is StepKind.EXIT]
        self.relevant = self.unit.graph.relevant_tests([acquisition.step, *self.release_steps, *exits])
        self._searches: dict[tuple[int, int], bool] = {}

    def _release_guards(self) -> dict[tuple[int, int], bool]:
        """Tests that decide whether the resource is released (``if (sz > sizeof(buf)) free(bp);``): the
        author knows when it is held, so a path that skips such a release is taken to not hold it.
        Maps the test's span to the branch label that skips the release."""
        skipping: dict[tuple[int, int], set[bool]] = {}
        steps = {step.index: step for step in self.unit.graph.steps}
        for index, facts in self.unit.facts.items():
            if index not in self._touched:
                continue
            through_macros = self.analysis.uses.macro_releases(self.unit, steps[index])
            releases = [node for node, _ in self._releases(facts.calls, facts.deletes)]
            releases += [r.use for r in through_macros if self._released_by_macro(r, self.names)]
            if releases:
                self.release_steps.append(steps[index])
            # `if (out != nullptr) *out = handle;`: an optional out-parameter. A caller that passes null asks for
            # nothing back, so the test of the parameter decides, as a release's test does, whether it is held.
            stores = [(a, parameter) for a in facts.assignments if (parameter := self._stored_through_parameter(a)) is not None]
            for release, parameter in [*((r, None) for r in releases), *stores]:
                child, parent = release, release.parent
                while parent is not None and parent != self.unit.body:
                    # Only a branch that never leaves by a jump: the code after the `if` runs whichever way it went.
                    if parent.type == "if_statement" and parent.child_by_field_name("condition") != child and not self.unit.has_jump_in(child):
                        _, condition = condition_parts(parent.child_by_field_name("condition"))
                        if condition is not None and (parameter is None or _tests_name(condition, parameter)):
                            in_consequence = parent.child_by_field_name("consequence") == child
                            skipping.setdefault((condition.start_byte, condition.end_byte), set()).add(not in_consequence)
                    child, parent = parent, parent.parent
        # A test with a release on both arms (`if (pinned) cudaFreeHost(p); else free(p);`) says how, not whether.
        return {span: labels.pop() for span, labels in skipping.items() if len(labels) == 1}

    def effect(self, step: Step, state: Held) -> Effect:
        if step.leaves is not None:
            ended = self._scope_ended(step)
            return Effect(Outcome.LOST, reason=ended) if ended else Effect(Outcome.NOTHING, state)
        facts = self.unit.facts.get(step.index)
        if facts is None or (step.index not in self._touched and not self.unit.lambdas):
            return Effect(Outcome.NOTHING, state)
        through_macros = self.analysis.uses.macro_releases(self.unit, step)
        lambdas = self._lambdas_called(facts)
        if not self.mentions.intersection(facts.names) and not through_macros and not lambdas:
            return Effect(Outcome.NOTHING, state)
        acquisition = self.acquisition
        state = self._copied(facts, state)
        holders = self._holders(state)
        # Releases, right or wrong.
        for call in facts.calls:
            released = released_argument(call)
            if released is None:
                continue
            argument, row = released
            if not self._denotes(argument, row, holders):
                continue
            if row.kind is acquisition.kind or (row.name == "realloc" and acquisition.kind is Kind.HEAP_MEMORY):
                return Effect(Outcome.RELEASED)
            if row.kind in MEMORY_KINDS and acquisition.kind in MEMORY_KINDS:
                self.analysis.report_mismatch(call, row, acquisition.row, syn.text(argument))
                return Effect(Outcome.RELEASED)
        for delete in facts.deletes:
            operand = delete_operand(delete)
            if operand is None or not self._denotes(operand, None, holders):
                continue
            row = releases_by_name()["delete[]" if is_array_delete(delete) else "delete"]
            if row.kind is acquisition.kind:
                return Effect(Outcome.RELEASED)
            if acquisition.kind in MEMORY_KINDS:
                self.analysis.report_mismatch(delete, row, acquisition.row, syn.text(operand))
            return Effect(Outcome.RELEASED)
        # A macro's release counts whatever its kind: the macro may be defined per build configuration
        # (`cudaFree` in one, `free` in another), so its kind says nothing certain about this one.
        if any(self._released_by_macro(release, holders) for release in through_macros):
            return Effect(Outcome.RELEASED)
        # `cleanup();`, a local lambda whose body releases it (`auto cleanup = [&]() { cudaFree(p); };`)
        if any(self._lambda_releases(body, holders) for body in lambdas):
            return Effect(Outcome.RELEASED)
        if acquisition.kind is Kind.CAPTURE:
            return Effect(Outcome.NOTHING, self._status_state(facts, step, state))
        # Escapes and releases through other functions.
        for name in self.names:
            for occurrence, in_lambda in facts.names.get(name, ()):
                if not self._is_ours(occurrence):
                    continue
                if in_lambda:
                    return Effect(Outcome.ESCAPED)
                use = self.analysis.uses.classify(self.unit, occurrence)
                if use is Use.ESCAPE:
                    return Effect(Outcome.ESCAPED)
                if use is Use.RELEASE:
                    return Effect(Outcome.RELEASED)
        # The last handle overwritten, or the acquisition running again.
        lost = self._lost(facts, step)
        if lost:
            return Effect(Outcome.LOST, reason=lost)
        return Effect(Outcome.NOTHING, self._status_state(facts, step, state))

    def _stored_through_parameter(self, assignment: Node) -> str | None:
        """``*out = (void *)handle``: the parameter the resource is stored through, or None."""
        left = syn.strip(assignment.child_by_field_name("left"))
        right = assignment.child_by_field_name("right")
        if left is None or left.type != "pointer_expression" or syn.operator(assignment) != "=" or right is None:
            return None
        target = syn.strip(left.child_by_field_name("argument"))
        if target is None or target.type != "identifier" or syn.text(target) not in self.unit.parameter_names:
            return None
        return syn.text(target) if self._denotes(right, None) else None

    def _lambdas_called(self, facts: StepFacts) -> list[Node]:
        """The bodies of the local lambdas this step calls that name the resource."""
        lambdas = self.unit.lambdas
        if not lambdas:
            return []
        bodies = []
        for call in facts.calls:
            function = call.child_by_field_name("function")
            body = lambdas.get(syn.text(function)) if function is not None and function.type == "identifier" else None
            if body is not None and any(syn.text(node) in self.names for node in syn.descendants(body, skip=frozenset()) if node.type == "identifier"):
                bodies.append(body)
        return bodies

    def _lambda_releases(self, body: Node, holders: frozenset[str]) -> bool:
        """The lambda's body releases the resource with a release of its kind (or a ``delete`` of memory)."""
        inside = list(syn.descendants(body, skip=frozenset()))
        calls = [node for node in inside if node.type == "call_expression"]
        deletes = [node for node in inside if node.type == "delete_expression"]
        kind = self.acquisition.kind
        return any(row.kind is kind if row is not None else kind in MEMORY_KINDS for _, row in self._releases(calls, deletes, holders))

    def _releases(self, calls: list[Node], deletes: list[Node], holders: frozenset[str] | None = None) -> list[tuple[Node, Release | None]]:
        """The calls and ``delete`` expressions among these that release the resource (any kind of release; a
        ``delete`` comes with no row), held by one of ``holders`` (by default, any local ever a copy of it)."""
        found: list[tuple[Node, Release | None]] = []
        for call in calls:
            released = released_argument(call)
            if released is not None and self._denotes(released[0], released[1], holders):
                found.append((call, released[1]))
        for delete in deletes:
            operand = delete_operand(delete)
            if operand is not None and self._denotes(operand, None, holders):
                found.append((delete, None))
        return found

    def _holders(self, state: Held) -> frozenset[str]:
        """The locals that hold the resource on this path: its variable and the copies made of it so far."""
        return state.copies | {self.acquisition.variable}

    def _copied(self, facts: StepFacts, state: Held) -> Held:
        """``state`` after the copies of this step: ``q = p`` makes ``q`` a holder, ``q = other`` ends it."""
        copies = set(state.copies)
        holders = self._holders(state)
        for declarator in facts.declarators:
            identifier = syn.declared_identifier(declarator.child_by_field_name("declarator"))
            value = syn.strip(declarator.child_by_field_name("value"))
            if identifier is not None and syn.text(identifier) in self.names and self._is_ours(identifier):
                self._copy_into(copies, syn.text(identifier), value, holders)
        for assignment in facts.assignments:
            left = syn.strip(assignment.child_by_field_name("left"))
            if left is not None and left.type == "identifier" and self._is_one_of(left, self.names) and syn.operator(assignment) == "=":
                self._copy_into(copies, syn.text(left), syn.strip(assignment.child_by_field_name("right")), holders)
        copies.discard(self.acquisition.variable)
        return state if copies == state.copies else replace(state, copies=frozenset(copies))

    def _denotes(self, argument: Node, row: Release | None, holders: frozenset[str] | None = None) -> bool:
        """Whether ``argument`` is the resource: its key (a capture), or one of ``holders`` (by default, every
        local that is ever a copy of it)."""
        if self.acquisition.kind is Kind.CAPTURE:
            return row is not None and row.kind is Kind.CAPTURE and _any_index(syn.normalized(argument)) == _any_index(self.acquisition.key)
        argument = syn.strip(argument)
        if argument is None:
            return False
        if argument.type == "field_expression":
            if _through_pointer(argument):
                return False  # `s->member` holds what was stored into it (`s->member = new T`), not `s` itself
            argument = syn.strip(argument.child_by_field_name("argument"))  # cudaMalloc3D's struct: cudaFree(p.ptr)
        if argument is None or argument.type != "identifier":
            return False
        return self._is_one_of(argument, self.names if holders is None else holders)

    def _released_by_macro(self, release: MacroRelease, holders: frozenset[str]) -> bool:
        """Whether a macro's use releases the resource: the argument it releases is one of ``holders``, or a
        name its body releases means one of them where the macro is used."""
        if not isinstance(release.target, str):
            return self._denotes(release.target, release.row, holders)
        if self.acquisition.kind is Kind.CAPTURE:
            return release.row is not None and release.row.kind is Kind.CAPTURE and release.target == self.acquisition.key
        if release.target not in holders:
            return False
        return release.target != self.acquisition.variable or self._variable_means_ours_at(release.use)

    def _is_ours(self, identifier: Node) -> bool:
        """Whether an occurrence of a handle's name means the tracked local, not a namesake declared in a
        nested block; only the acquisition's own variable is resolved (its copies are taken as written)."""
        return syn.text(identifier) != self.acquisition.variable or self._variable_means_ours_at(identifier)

    def _variable_means_ours_at(self, node: Node) -> bool:
        if self.declaration is None:
            return True
        meant = self.unit.declaration_in_scope(self.acquisition.variable, node)
        return meant is None or meant == self.declaration or syn.in_exclusive_arms(meant, self.declaration)

    def _is_one_of(self, identifier: Node, names: frozenset[str] | set[str]) -> bool:
        return syn.text(identifier) in names and self._is_ours(identifier)

    def _copy_into(self, copies: set[str], name: str, value: Node | None, holders: frozenset[str]) -> None:
        """``name`` receives ``value``: a copy of the handle when ``value`` is a holder, something else otherwise."""
        if value is not None and value.type == "identifier" and self._is_one_of(value, holders):
            copies.add(name)
        else:
            copies.discard(name)

    def _scope_ended(self, step: Step) -> str:
        """How the path drops the resource where it leaves a loop's body (``step.leaves``) that declares the
        only variable holding it; "" when the variable lives on."""
        body = step.leaves
        if self.declaration is None or len(self.names) > 1 or not body.start_byte <= self.declaration.start_byte < body.end_byte:
            return ""
        return f"`{self.acquisition.variable}` goes out of scope when {step.leaving}"

    def _lost(self, facts: StepFacts, step: Step) -> str:
        if len(self.names) > 1:
            return ""  # another local still holds it
        variable = self.acquisition.variable
        line = step.line
        for acquisition in self._acquisitions_in(step):
            if acquisition.target is Target.TRACKED and acquisition.variable == variable and self._variable_means_ours_at(acquisition.call):
                if acquisition.call == self.acquisition.call:
                    if _conditional_in_loop(acquisition.call):
                        return ""  # maybe not every iteration acquires: say nothing rather than guess
                    loop = _enclosing_loop(acquisition.call)
                    where = f" of the loop at line {syn.line_of(loop)}" if loop is not None else ""
                    return f"the next iteration{where} acquires into `{variable}` again at line {line}, once per iteration,"
                loop = _enclosing_loop(acquisition.call)
                if loop is not None and syn.encloses(loop, self.acquisition.call) and _conditional_in_loop(acquisition.call):
                    return ""  # another branch of the same loop (`lora_dir` set for the "lora_dir" option): maybe in no later iteration
                return f"`{variable}` receives {acquisition.kind.description} again at line {line}"
        for assignment in facts.assignments:
            left = syn.strip(assignment.child_by_field_name("left"))
            if left is None or left.type != "identifier" or syn.operator(assignment) != "=" or not self._is_one_of(left, {variable}):
                continue
            right = assignment.child_by_field_name("right")
            if right is not None and any(n.type == "identifier" and syn.text(n) == variable for n in syn.descendants(right)):
                continue
            return f"`{variable}` is overwritten at line {line}"
        for declarator in facts.declarators:
            identifier = syn.declared_identifier(declarator.child_by_field_name("declarator"))
            declared_again = identifier is not None and self._is_one_of(identifier, {variable})
            if declared_again and declarator.child_by_field_name("value") is not None:
                return f"`{variable}` is declared again at line {line}"
        return ""

    def _acquisitions_in(self, step: Step) -> list[Acquisition]:
        return self.analysis.step_acquisitions(self.unit, step)

    def _status_state(self, facts: StepFacts, step: Step, state: Held) -> Held:
        """The status variables stop describing the acquisition once they are assigned again."""
        if not state.status or not self.acquisition.status or step is self.acquisition.step:
            return state
        for assignment in facts.assignments:
            left = syn.strip(assignment.child_by_field_name("left"))
            if left is not None and syn.normalized(left) in self.acquisition.status:
                return replace(state, status=False)
        return state

    # -- failure tests ----------------------------------------------------------------------------
    def fails(self, step: Step, taken: bool, state: Held) -> bool:
        if self.loop_bound and step.loop_bound == self.loop_bound and not taken:
            return True
        if not taken and step.loop_body is not None and self._searches_for_a_place(step.loop_body):
            return True
        condition = step.condition
        if condition is None:
            return False
        call = self.acquisition.call
        if step.checked is not None:
            # An exiting macro: its exit edge is the failure of the call it wraps.
            checked = step.checked
            if taken and step.null_check and self._tests_the_handle(checked):
                return True  # `CHECK_NOT_NULL(p)` leaves when `p` is null: nothing was allocated on that path
            return taken and syn.encloses(checked, call)
        value = self._failure_value(condition, state.status)
        if value is not None:
            return value == taken
        return self.guards.get((condition.start_byte, condition.end_byte)) == taken

    def _searches_for_a_place(self, body: Node) -> bool:
        """The loop whose body is ``body`` is a search for the resource's place: an iteration hands it over and
        leaves at once (``list.insert(at, node); break;``). The path on which the search finds nothing is not
        followed: the code assumes it finds one, and a finding there would only say that it might not. A loop
        that made the resource itself is not one (its last iteration's may be dropped)."""
        key = (body.start_byte, body.end_byte)
        found = self._searches.get(key)
        if found is None:
            text = body.text or b""
            found = self._searches[key] = not syn.encloses(body, self.acquisition.call) and any(name.encode() in text for name in self.names) and any(
                node.type == "identifier"
                and syn.text(node) in self.names
                and self._is_ours(node)
                and _left_after(node, body)
                and self.analysis.uses.classify(self.unit, node) is Use.ESCAPE
                for node in syn.descendants(body)
            )
        return found

    def _tests_the_handle(self, macro_call: Node) -> bool:
        """The exiting macro is given the acquisition's handle alone (``CHECK_PARAM_NULL(buf)``)."""
        if macro_call.type != "call_expression":
            return False
        arguments = syn.arguments(macro_call)
        return len(arguments) == 1 and self._subject(syn.strip(arguments[0]), False) == "handle"

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
            if op in (">", "!=") and self._length_of_handle(left) and syn.text(syn.strip(right)) == "0":
                return False  # `strlen(p) > 0`: a string that holds something (an empty one is as good as none)
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
        if kind == "call_expression" and self._length_of_handle(node):
            return False  # `if (strlen(p))`
        if kind == "call_expression":
            # `if (CUDA_FAILED(cudaMalloc(&p, n))) return false;`: a predicate on the status that says its outcome;
            # `if (!status.is_ok()) return status;` with `Status status = to_status(cudaMalloc(&p, n))`: the status
            # object's own predicate; `if (!checkCudaError(err, "what failed"))`: a check, true when it passes (a
            # message may follow)
            arguments = syn.arguments(node)
            function = node.child_by_field_name("function")
            if arguments:
                subject, name = arguments[0], syn.last_component(syn.callee_name(node))
            elif function is not None and function.type == "field_expression":
                subject, name = function.child_by_field_name("argument"), syn.text(function.child_by_field_name("field"))
            else:
                return None
            if self._subject(syn.strip(subject), status_valid) != "status":
                return None
            negated = node.parent is not None and node.parent.type == "unary_expression" and syn.operator(node.parent) in ("!", "not")
            if arguments and _CHECK_PREDICATE.search(name) and (negated or not _ERROR_WORD.search(name)):
                # `!check...(err)`: the check did not pass; `if (checkRuntime(cudaMallocHost(&p, n))) return p;`
                # likewise, false when it fails. A check named for the error (`if (checkError(e))`) may be true
                # when there is one: only its negation is read.
                return False
            if len(arguments) <= 1 and _FAILURE_PREDICATE.search(name):
                return True
            if len(arguments) <= 1 and _SUCCESS_PREDICATE.search(name):
                return False
            return None
        if kind in ("declaration", "init_declarator"):
            target = node.child_by_field_name("declarator")
            if target is not None and target.type == "init_declarator":
                target = target.child_by_field_name("declarator")
            identifier = syn.declared_identifier(target)
            if identifier is not None and syn.text(identifier) in self.names:
                return False
        return None

    def _length_of_handle(self, node: Node | None) -> bool:
        """``strlen(p)`` of the handle: a test of it keeps a string only when it is not empty."""
        node = syn.strip(node)
        if node is None or node.type != "call_expression" or syn.last_component(syn.callee_name(node)) not in _STRING_LENGTHS:
            return False
        arguments = syn.arguments(node)
        return len(arguments) == 1 and self._subject(syn.strip(arguments[0]), False) == "handle"

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
            if name in CHECK_WRAPPERS and syn.encloses(node, acquisition.call):
                return "status"
            if _compared(node) and any(syn.strip(argument) == acquisition.call for argument in syn.arguments(node)):
                return "status"  # `DBG_ERR(cudaMalloc(&p, n)) != cudaSuccess`: what the call hands on, compared as a status is
            if name in _LAST_ERROR and not acquisition.status:
                return "status"
        return None


def _compared(node: Node) -> bool:
    """``node`` is a side of an ``==`` or ``!=`` comparison (in parentheses or not)."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent is not None and parent.type == "binary_expression" and syn.operator(parent) in ("==", "!=")


def _left_after(node: Node, body: Node) -> bool:
    """The statement holding ``node`` (inside ``body``) is followed at once by a ``break`` or ``return``."""
    statement = node
    while statement.parent is not None and statement != body and statement.type != "expression_statement":
        statement = statement.parent
    if statement.type != "expression_statement":
        return False
    following = statement.next_named_sibling
    while following is not None and following.type == "comment":
        following = following.next_named_sibling
    return following is not None and following.type in ("break_statement", "return_statement")


def _through_pointer(field: Node) -> bool:
    """``s->member``: a member reached through a pointer, a separate object from the one pointed to."""
    return any(child.type == "->" for child in field.children)


def _base_name(expression: str) -> str:
    """``result.error`` -> ``result``; ``err`` -> ``err``."""
    return re.split(r"[.\-\[]", expression, maxsplit=1)[0]


def _identifiers(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text))


_INDEX = re.compile(r"\[[A-Za-z_]\w*\]")


def _any_index(key: str) -> str:
    """``streams[i]`` and ``streams[j]``: the same array, whichever counter indexes it."""
    return _INDEX.sub("[]", key)


def _enclosing_loop_bound(node: Node) -> str:
    """The bound of the counting loop whose counter indexes ``node``'s stream (``streams[i]``, ``i < n``)."""
    current = node.parent
    while current is not None and current.type not in ("function_definition", "lambda_expression"):
        if current.type in ("for_statement", "while_statement"):
            condition = current.child_by_field_name("condition")
            _, tested = condition_parts(condition)
            bound = loop_bound(tested)
            return syn.normalized(bound) if bound is not None else ""
        current = current.parent
    return ""


def _enclosing_loop(node: Node) -> Node | None:
    """The innermost loop statement around ``node`` within its function."""
    current = node.parent
    while current is not None and current.type not in ("function_definition", "lambda_expression"):
        if current.type in _LOOP_TYPES:
            return current
        current = current.parent
    return None


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


def _tests_name(condition: Node, name: str) -> bool:
    """The tested expression is the name, or compares it (``out``, ``out != nullptr``, ``NULL != out``)."""
    condition = syn.strip(condition)
    if condition is None:
        return False
    if condition.type == "identifier":
        return syn.text(condition) == name
    if condition.type == "binary_expression" and syn.operator(condition) in ("!=", "=="):
        sides = [syn.strip(condition.child_by_field_name(side)) for side in ("left", "right")]
        return any(side is not None and side.type == "identifier" and syn.text(side) == name for side in sides)
    return False
