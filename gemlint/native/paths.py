"""Per-function path analysis, independent of the source language.

A front-end builds a :class:`Graph` for one function: steps in control-flow
order, each holding the syntax nodes evaluated there. A branch step carries
its condition, and its outgoing edges are labelled with the condition's value.
An exit step (a return, a throw, the end of the function, a macro that may
return) ends a path; a stop step (``exit()``, ``abort()``) ends it without
returning to a caller, so nothing held there leaks.

:func:`find_leak` searches every path from an acquisition for an exit reached
while the resource is still held. What a step does to the resource (releases
it, lets it escape, overwrites the last handle to it) and whether an edge
means the acquisition failed are answered by a language-specific
:class:`Tracker`.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field
from typing import Hashable, Iterable, Protocol, Sequence


class StepKind(enum.Enum):
    EFFECT = "effect"
    BRANCH = "branch"
    EXIT = "exit"
    STOP = "stop"


@dataclass(eq=False)
class Step:
    index: int
    kind: StepKind
    #: The syntax nodes evaluated at this step (a statement, a condition, a return expression).
    nodes: tuple = ()
    #: For branches: the condition whose value labels the outgoing edges (None: not known statically).
    condition: object = None
    #: For exits: how the function is left ("returns", "throws", ...), and where (1-based line).
    exit: str = ""
    line: int = 0
    #: For a branch that leaves the function when a wrapped call fails (an error-check macro): the wrapping
    #: call. Its True edge is the failure of every acquisition inside it.
    checked: object = None
    #: For such a branch: the macro leaves only when its argument is null (``CHECK_NOT_NULL(p)``): its True edge
    #: is the failure of the acquisition whose handle is that argument (nothing was allocated on it).
    null_check: bool = False
    #: For such a branch: the macro checks an accelerator API call (``CUDA_CHECK(cudaMemcpy(...))``), so its
    #: exit is the device failing, where the project gives up.
    wraps_call: bool = False
    #: For a branch over tests without side effects (preprocessor conditions, flags, a ``switch``'s subject):
    #: what each edge establishes, as (test, value) pairs, the value a bool or, for a ``switch``, a
    #: :class:`OneOf`. A path keeps what it established until a step changes a name of the test, and
    #: never takes an edge that contradicts it.
    assume: dict = field(default_factory=dict)
    #: What the enclosing branches established for every path through this step (tests of names the
    #: function never changes).
    given: frozenset = frozenset()
    #: The tests of the enclosing branches, whether or not their names change (what a path must keep
    #: consistent for a resource acquired or released here).
    enclosing: frozenset = frozenset()
    #: The names (identifiers, fields) this step may change: assigned, incremented, declared, passed by address.
    changes: frozenset = frozenset()
    #: The tests a path forgets at this step, because it changes one of their names.
    kills: frozenset = frozenset()
    #: What every path knows after this step, whatever it knew before: ``p = new T`` makes ``p`` non-null.
    sets: tuple = ()
    #: Inside a loop: a path may pass this step more than once.
    in_loop: bool = False
    #: For the first test of a loop: the loop's bound as written (``args->n``), to pair sibling loops.
    loop_bound: str = ""
    #: For the first test of a loop whose bound is a member or parameter the function never tests for zero:
    #: the path that skips the loop altogether is not followed (nothing says it can happen).
    runs_once: bool = False
    #: For a loop's tests: the loop's body (a search may hand the resource over in it and leave the loop).
    loop_body: object = None
    #: For a step where paths leave a loop's body (an iteration ends, `continue`, `break`): the body, whose
    #: variables end here, and how it is left ("an iteration of the loop at line 3 ends"), for messages.
    leaves: object = None
    leaving: str = ""
    successors: list[tuple["Step", Hashable]] = field(default_factory=list)

    def then(self, step: "Step", label: Hashable = None) -> "Step":
        self.successors.append((step, label))
        return self

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Step({self.index}, {self.kind.value}, line={self.line}, exit={self.exit!r})"


@dataclass(frozen=True)
class OneOf:
    """What a ``switch`` edge establishes about its subject: it equals one of ``values`` (the case labels, as
    written), or, for ``default``, none of them (``excluded``)."""

    values: frozenset
    excluded: bool = False

    def contradicts(self, other: "OneOf") -> bool:
        if self.excluded and other.excluded:
            return False
        if self.excluded:
            return other.values <= self.values
        if other.excluded:
            return self.values <= other.values
        return not self.values & other.values


class Graph:
    """The steps of one function; ``entry`` is where execution starts."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.entry: Step | None = None
        #: Facts established by the branches enclosing the steps being added (kept by the builder).
        self.given: frozenset = frozenset()
        #: The tests of the branches enclosing the steps being added (kept by the builder).
        self.enclosing: frozenset = frozenset()
        #: Tests every path must keep consistent whatever the resource (preprocessor conditions).
        self.always: frozenset[str] = frozenset()
        #: The names each test reads: a step that changes one of them ends what a path knows of the test.
        self.test_names: dict[str, frozenset[str]] = {}

    def add(self, kind: StepKind, nodes: Sequence = (), *, condition: object = None, exit: str = "", line: int = 0) -> Step:
        step = Step(len(self.steps), kind, tuple(nodes), condition, exit, line, given=self.given, enclosing=self.enclosing)
        self.steps.append(step)
        return step

    def keep_repeated_tests(self, always: Sequence[str] = ()) -> None:
        """Assumptions only matter where a test can be met twice on one path (written twice, or inside a
        loop); dropping the others keeps the search small. Tests in ``always`` are kept regardless."""
        # A value a step sets and a branch tests is worth keeping whatever the resource (`p = new T; if (!p) ...`).
        tested = {test for step in self.steps for facts in step.assume.values() for test, _ in facts}
        always = set(always) | {test for step in self.steps for test, _ in step.sets if test in tested}
        self.always = frozenset(always)
        counts: dict[str, int] = {test: 2 for test in always}
        for step in self.steps:
            tests = {test for facts in step.assume.values() for test, _ in facts}
            for test in tests:
                counts[test] = counts.get(test, 0) + (2 if step.in_loop else 1)
        kept_tests = {test for test, count in counts.items() if count > 1}
        for step in self.steps:
            if step.assume:
                kept = {label: tuple(f for f in facts if f[0] in kept_tests) for label, facts in step.assume.items()}
                step.assume = {label: facts for label, facts in kept.items() if facts}
            if step.given:
                step.given = frozenset(f for f in step.given if f[0] in kept_tests)
            step.enclosing = step.enclosing & kept_tests
            if step.changes:
                step.kills = frozenset(test for test in kept_tests if self.test_names.get(test, frozenset()) & step.changes)
            step.sets = tuple(fact for fact in step.sets if fact[0] in kept_tests)

    def relevant_tests(self, steps: Iterable[Step]) -> frozenset[str]:
        """The tests worth keeping consistent for a resource acquired or released at ``steps``: those
        enclosing them (``if (flag) p = malloc(n); ... if (flag) free(p);``) and the preprocessor's."""
        tests = set(self.always)
        for step in steps:
            tests.update(step.enclosing)
        return frozenset(tests)

    def join(self) -> Step:
        """A step that does nothing: a loop head, a label, a placeholder to be wired later."""
        return self.add(StepKind.EFFECT)

    def reachable(self) -> frozenset[int]:
        """The indices of the steps some path from :attr:`entry` passes: not those under a test that is always
        false (``if (0)``, ``if (DEBUG_ENABLE)`` with the macro defined as ``0``), which the build leaves out."""
        if self.entry is None:
            return frozenset()
        seen = {self.entry.index}
        todo = [self.entry]
        while todo:
            for successor, _ in todo.pop().successors:
                if successor.index not in seen:
                    seen.add(successor.index)
                    todo.append(successor)
        return frozenset(seen)


class Outcome(enum.Enum):
    NOTHING = "nothing"  # the resource is untouched or only used
    RELEASED = "released"  # released (rightly or wrongly: a wrong release is its own finding)
    ESCAPED = "escaped"  # someone else now owns it
    LOST = "lost"  # the last handle is overwritten, or the acquisition runs again


@dataclass(frozen=True)
class Effect:
    outcome: Outcome
    state: Hashable = None
    #: For LOST: what happened, for the message.
    reason: str = ""


class Tracker(Protocol):
    """What the steps of one function do to one acquired resource."""

    def effect(self, step: Step, state: Hashable) -> Effect: ...

    def fails(self, step: Step, taken: bool, state: Hashable) -> bool:
        """True when going along the ``taken`` edge of branch ``step`` means the acquisition failed
        (or the handle is null), so there is nothing to release on that path."""
        ...


@dataclass(frozen=True)
class Leak:
    step: Step
    #: "returns at line 12", "is overwritten at line 9", ...
    reason: str


def assumptions_at(
    graph: Graph, origin: Step, relevant: frozenset[str], limit: int = 32, budget: int = 20_000
) -> list[frozenset]:
    """The sets of ``relevant`` tests the paths from the entry to ``origin`` establish (at most ``limit``
    of them; past that, only what the enclosing branches establish)."""
    given = frozenset(fact for fact in origin.given if fact[0] in relevant)
    if graph.entry is None or not relevant or not any(step.assume for step in graph.steps):
        return [given]
    found: set[frozenset] = set()
    queue: deque[tuple[Step, frozenset]] = deque([(graph.entry, frozenset())])
    seen: set[tuple[int, frozenset]] = set()
    while queue:
        step, assumed = queue.popleft()
        if (step.index, assumed) in seen:
            continue
        seen.add((step.index, assumed))
        if step is origin:
            found.add(assumed | given)
            if len(found) > limit:
                return [given]
            continue
        if len(seen) > budget:
            return [given]
        assumed = _after(step, assumed, relevant)
        for target, label in step.successors:
            facts = _relevant_facts(step, label, relevant)
            if facts:
                if _contradicts(assumed, facts):
                    continue
                queue.append((target, assumed | set(facts)))
            else:
                queue.append((target, assumed))
    return sorted(found, key=len) or [given]


def _relevant_facts(step: Step, label: Hashable, relevant: frozenset[str]) -> tuple:
    if label is None or not step.assume:
        return ()
    return tuple(fact for fact in step.assume.get(label, ()) if fact[0] in relevant)


def _after(step: Step, assumed: frozenset, relevant: frozenset[str]) -> frozenset:
    """What a path knows after ``step``: nothing more of the tests whose names it changes, and what it sets."""
    if step.kills and assumed:
        assumed = frozenset(fact for fact in assumed if fact[0] not in step.kills)
    if step.sets:
        assumed = assumed | {fact for fact in step.sets if fact[0] in relevant}
    return assumed


def _contradicts(assumed: frozenset, facts: Iterable[tuple]) -> bool:
    """Whether a path that established ``assumed`` cannot go where ``facts`` hold: it went the other way at
    a test (``flag`` true, now false), or a ``switch`` on the same subject took a case that excludes this one."""
    for test, value in facts:
        if isinstance(value, OneOf):
            if any(known == test and isinstance(other, OneOf) and other.contradicts(value) for known, other in assumed):
                return True
        elif (test, not value) in assumed:
            return True
    return False


def find_leak(
    origin: Step,
    tracker: Tracker,
    state: Hashable = None,
    limit: int = 20_000,
    *,
    assumed: Sequence[frozenset] = (),
    relevant: frozenset[str] = frozenset(),
    skipped_exit=None,
) -> Leak | None:
    """The nearest exit (breadth first) reached from ``origin`` with the resource still held, or None.

    ``origin`` is the step that acquires; its own effects are not re-evaluated,
    except when a path comes back to it (a loop acquiring again). A path
    remembers the direction it took at keyed branches (the case it took at a ``switch``) until a step changes
    a name of the test, so correlated tests (``if (flag) p = malloc(n); ... if (flag) free(p);``) are not
    mixed. An exit for which ``skipped_exit``
    holds is not a leak, and the search goes on to the others.
    """
    queue: deque[tuple[Step, Hashable, frozenset]] = deque()
    for start in assumed or (frozenset(f for f in origin.given if f[0] in relevant),):
        _follow(origin, state, start, tracker, queue, relevant)
    seen: set[tuple[int, Hashable, frozenset]] = set()
    while queue:
        step, current, assumed = queue.popleft()
        key = (step.index, current, assumed)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > limit:
            return None  # pathological graph: give up rather than guess
        effect = tracker.effect(step, current)
        if effect.outcome in (Outcome.RELEASED, Outcome.ESCAPED):
            continue
        if effect.outcome is Outcome.LOST:
            return Leak(step, effect.reason)
        current = effect.state
        if step.kind is StepKind.EXIT:
            if skipped_exit is not None and skipped_exit(step):
                continue
            return Leak(step, step.exit)
        if step.kind is StepKind.STOP:
            continue
        _follow(step, current, assumed, tracker, queue, relevant)
    return None


def _follow(step: Step, state: Hashable, assumed: frozenset, tracker: Tracker, queue: deque, relevant: frozenset[str]) -> None:
    assumed = _after(step, assumed, relevant)
    for target, label in step.successors:
        if label is False and step.runs_once:
            continue
        if label is not None and step.kind is StepKind.BRANCH:
            if tracker.fails(step, label, state):
                continue
            if label and step.wraps_call and target.kind is StepKind.EXIT:
                # An error-check macro's exit when the device API call it wraps fails: CUDA errors are mostly
                # sticky, the project's policy is to give up (throw, fail the test, hand the error to a caller
                # that stops), and its maintainers do not call what is held then a leak. A macro that jumps to a
                # cleanup label, or checks the project's own call or a condition (`REQUIRE(n > 0)`), is followed.
                continue
            facts = _relevant_facts(step, label, relevant)
            if facts:
                if _contradicts(assumed, facts):
                    continue  # this path already went the other way at a branch with the same test
                queue.append((target, state, assumed | set(facts)))
                continue
        queue.append((target, state, assumed))
