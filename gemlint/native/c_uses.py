"""What C/C++/CUDA code does with a resource handle it mentions: uses it, releases it, or lets it escape.

An occurrence of a variable is classified from its syntactic context: reading through the pointer
(``p[i]``, ``p->x``, ``*p``), comparing or passing it to the CUDA API is a use; returning it, storing it
into a member, field, global, container or aggregate, capturing it in a lambda, or handing it to an
owner (a constructor, a smart pointer, a method of another object, a function whose name says it keeps
what it gets) is an escape; a function defined in the same file is looked into (one summary per
parameter), and an unknown function whose name says it frees is a release. A macro's use does what its
body does: a ``CLEANUP()`` whose body frees ``a`` releases the caller's ``a``, a ``FREE_TMP(p)`` whose body
frees its parameter releases the argument it is given.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

from gemlint.frontends.native import parse_statements
from gemlint.frontends.native_includes import MacroDefinition
from gemlint.native import c_syntax as syn
from gemlint.native.c_cfg import macro_use
from gemlint.native.c_units import StepFacts, Unit, parameter_declarations, parameters
from gemlint.native.resources import CHECK_WRAPPERS, Kind, Release, acquires_by_name, releases_by_name

if TYPE_CHECKING:
    from tree_sitter import Node

    from gemlint.native.paths import Step

#: Calls that take ownership of what they are given (smart pointers, tensors over foreign memory, moves).
OWNER_CALLS = frozenset(
    {"make_unique", "make_shared", "unique_ptr", "shared_ptr", "from_blob", "move", "forward", "swap", "exchange",
     "make_pair", "make_tuple", "tie", "DataPtr", "InefficientStdFunctionContext", "make_data_ptr", "py::capsule",
     "capsule", "PyCapsule_New", "Py_BuildValue", "PyLong_FromVoidPtr"}
)
#: Methods of TensorRT's execution context that take device pointers for one inference and keep none of them:
#: the caller owns the buffers (``context->setTensorAddress(name, buffer)``, ``context->enqueueV2(bindings, ...)``);
#: and its runtime's ``deserializeCudaEngine(blob, size)``, which builds the engine from a copy of the blob. A stream's
#: ``read(buffer, size)`` and ``write(buffer, size)`` fill or drain the buffer and keep nothing either.
_BORROWING_METHODS = frozenset(
    {"setTensorAddress", "setInputTensorAddress", "setOutputTensorAddress", "enqueueV2", "enqueueV3", "executeV2", "enqueue", "execute",
     "deserializeCudaEngine", "read", "write"}
)
#: Of those, the names a queue's method has too: given one item (``tasks.enqueue(job)``), it keeps it. TensorRT's
#: ``enqueue`` takes a batch size, the bindings and a stream.
_QUEUES_ONE_ITEM = frozenset({"enqueue"})
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
_STATEMENT_TYPES = frozenset(
    {"expression_statement", "declaration", "condition_clause", "if_statement", "while_statement", "for_statement",
     "do_statement", "switch_statement", "case_statement", "compound_statement", "for_range_loop", "translation_unit"}
)
_ESCAPING_PARENTS = frozenset(
    {"initializer_list", "initializer_pair", "field_initializer", "new_expression", "compound_literal_expression",
     "lambda_capture_specifier", "throw_statement", "co_return_statement", "co_yield_statement", "return_statement"}
)


#: What tells a leak checker that an object is leaked on purpose: LeakSanitizer's ``__lsan_ignore_object`` (and a
#: project's macro around it), Chromium's and Abseil's ``ANNOTATE_LEAKING_OBJECT_PTR`` / ``IgnoreLeak``.
_DELIBERATE_LEAK = re.compile(r"(?i)lsan_ignore|leaking_object|ignore_?leak")


class Use(enum.Enum):
    USE = "use"
    ESCAPE = "escape"
    RELEASE = "release"


@dataclass(frozen=True)
class MacroRelease:
    """A release in the expansion of a macro's use: of the argument the use gives a parameter the body
    releases (a node), or of the caller's variable that a name of the body means (a string: macros are not
    hygienic), with the release's row (None: a function whose name says it frees)."""

    use: Node
    target: Node | str
    row: Release | None


class Uses:
    """Classifies occurrences of handles in the functions of one file."""

    def __init__(self, functions_by_name: Callable[[], dict[str, list[Unit]]]) -> None:
        self._functions_by_name = functions_by_name
        self._summaries: dict[tuple[int, int], tuple[Use, Kind | None]] = {}
        self._alias_cache: dict[tuple[int, str], frozenset[str]] = {}
        self._copies_of: dict[int, list[_Copy]] = {}
        self._dying: dict[tuple[int, str, int], bool] = {}
        self._macro_releases: dict[tuple[int, int], list[MacroRelease]] = {}
        self._macro_release_steps: dict[int, frozenset[int]] = {}
        self._self_handling: dict[tuple[str, str, int], bool] = {}

    def macro_releases(self, unit: Unit, step: Step) -> list[MacroRelease]:
        """The releases in the expansions of the macros ``step`` uses."""
        key = (unit.node.start_byte, step.index)
        found = self._macro_releases.get(key)
        if found is None:
            facts = unit.facts.get(step.index)
            found = self._macro_releases[key] = _macro_releases_in(unit, facts) if facts is not None else []
        return found

    def macro_release_steps(self, unit: Unit) -> frozenset[int]:
        """The steps of ``unit`` whose macros release something (see :meth:`macro_releases`)."""
        key = unit.node.start_byte
        found = self._macro_release_steps.get(key)
        if found is None:
            steps = {step.index: step for step in unit.graph.steps}
            found = self._macro_release_steps[key] = frozenset(index for index in unit.facts if self.macro_releases(unit, steps[index]))
        return found

    def _argument_use(self, call: Node, index: int, address: bool, depth: int, unit: Unit | None) -> tuple[Use, Kind | None, bool]:
        """What ``call`` does with its argument ``index``, and whether that is only a guess (an unknown function)."""
        if syn.is_kernel_launch(call):
            return Use.USE, None, False
        if _calls_an_object(call, unit):
            return Use.ESCAPE, None, False  # `(*layer)(x)`, `op(x)`: a callable object (a layer, a graph node) keeps its inputs
        name = syn.callee_name(call)
        last = syn.last_component(name)
        if syn.is_method_call(call):
            if last in _BORROWING_METHODS and not (last in _QUEUES_ONE_ITEM and len(syn.arguments(call)) == 1):
                return Use.USE, None, False
            return ((Use.RELEASE, None, False) if _RELEASE_WORDS.search(last) else (Use.ESCAPE, None, False))
        if last in acquires_by_name() or last in releases_by_name() or last in CHECK_WRAPPERS:
            return Use.USE, None, False
        if last in OWNER_CALLS or name in OWNER_CALLS or _constructs_declared_type(call, name):
            return Use.ESCAPE, None, False
        summary = self._summary(last, index, address, depth, len(syn.arguments(call)))
        if summary is not None:
            return (*summary, False)
        if _RELEASE_WORDS.search(last):
            return Use.RELEASE, None, False
        if _API_PREFIX.match(name) or _ALL_CAPS.match(last):
            return Use.USE, None, False
        if any(word.lower().startswith(_OWNER_WORDS) for word in _WORDS.findall(last)):
            return Use.ESCAPE, None, False
        function = call.child_by_field_name("function")
        if function is not None and function.type == "template_function" and last[:1].isalpha():
            return Use.ESCAPE, None, False  # a constructor of a class template, e.g. Holder<T>(p)
        if last[:1].isupper() and any(ch.islower() for ch in last) and "::" in name:
            return Use.ESCAPE, None, False  # a qualified constructor, e.g. at::DataPtr(p, ...)
        if address:
            return Use.ESCAPE, None, False  # an out-parameter: the callee may store or free through it
        return Use.USE, None, True  # an unknown function: known only by what happens to its result

    def _summary(self, name: str, index: int, address: bool, depth: int, arity: int) -> tuple[Use, Kind | None] | None:
        """What a function defined in this file does with its parameter ``index``: releases, keeps, or uses it.
        Of overloads, only those that take ``arity`` arguments are asked (all of them when none does)."""
        units = self._defined(name, arity)
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

    def _defined(self, name: str, arity: int) -> list[Unit]:
        """The functions of this file named ``name``: of overloads, those that take ``arity`` arguments (all of them
        when none does)."""
        units = self._functions_by_name().get(name) or []
        return [unit for unit in units if _takes(unit.node, arity)] or units

    def _summarize(self, unit: Unit, index: int, address: bool, depth: int) -> tuple[Use, Kind | None]:
        declared = parameters(unit.node)
        if index >= len(declared) or not declared[index][0]:
            return (Use.ESCAPE, None) if address else (Use.USE, None)
        if address or declared[index][1]:
            # The callee writes through a pointer to the handle, or holds the caller's variable by reference:
            # treat it as taking it over.
            return Use.ESCAPE, None
        # The parameter and the locals copied from it: `jlong handle = reinterpret_cast<jlong>(t);` then
        # `env->SetLongField(obj, field, handle)` keeps what the caller passed.
        names = self.aliases(unit, declared[index][0])
        if _kept_by_member_initializer(unit.node, names):
            return Use.ESCAPE, None  # `Holder(T* p) : data_(p) {}`: the object built keeps it
        escaped = False
        for facts in unit.facts.values():
            for call in facts.calls:
                released = released_argument(call)
                if released is not None:
                    argument, row = released
                    if argument.type == "identifier" and syn.text(argument) in names:
                        return Use.RELEASE, row.kind
            for delete in facts.deletes:
                operand = delete_operand(delete)
                if operand is not None and operand.type == "identifier" and syn.text(operand) in names:
                    return Use.RELEASE, Kind.NEW_ARRAY if is_array_delete(delete) else Kind.NEW_OBJECT
            for name in names:
                for occurrence, in_lambda in facts.names.get(name, ()):
                    use = Use.ESCAPE if in_lambda else self.classify(unit, occurrence, depth + 1)
                    if use is Use.RELEASE:
                        return Use.RELEASE, None
                    if use is Use.ESCAPE:
                        escaped = True
        return (Use.ESCAPE, None) if escaped else (Use.USE, None)

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
                if _passed_by_reference_to_owner(parent) or self._kept_by_callee(parent, depth):
                    return Use.ESCAPE
                return Use.USE
            if kind == "field_expression" and _hands_itself_over(parent, node):
                return Use.ESCAPE  # `worker->Queue()`, `thread->deleteLater()`: the framework deletes it later
            if kind == "field_expression" and depth <= 2 and (method := _method_called_on(parent, node)) is not None:
                call, name = method
                arity = len(syn.arguments(call))
                if self._hands_this_over(name, arity, depth):
                    return Use.ESCAPE  # `ctx->Start()`, whose body gives `this` to a completion queue as its tag
                if self._returns_this(name, arity):
                    node = call  # `ctx->Tag()` is `ctx`: what happens to the result happens to it
                    continue
                if stored_for_later(unit, call) and (_cast_to_a_pointer(call) or self._returns_a_pointer(name, arity)):
                    return Use.ESCAPE  # `params.dev_ptr = buffer->data()`: what keeps the pointer needs the object alive
            if kind == "subscript_argument_list" and not address and _keyed_into_a_kept_container(unit, parent.parent):
                return Use.ESCAPE  # `initial_hash_[p] = elem`: a key of a container that outlives the call
            if kind in ("subscript_expression", "field_expression", "unary_expression", "sizeof_expression",
                        "update_expression", "alignof_expression", "delete_expression", "subscript_argument_list"):
                return Use.USE
            if kind == "binary_expression":
                if syn.operator(parent) in ("+", "-"):
                    node = parent  # pointer arithmetic still denotes the same block
                    continue
                if syn.operator(parent) == "|":
                    node = parent  # a tagged pointer (`2ull << 56 | (uintptr_t)image`) still holds its address
                    continue
                return Use.USE
            if kind == "argument_list":
                owner = parent.parent
                if owner is not None and owner.type == "call_expression":
                    if syn.is_transparent_parent(parent, node):
                        node = owner
                        continue
                    index = [c for c in parent.named_children if c.type != "comment"].index(node)
                    if any(_names_delete_later(argument) for argument in parent.named_children):
                        return Use.ESCAPE  # `connect(t, &T::finished, t, &QObject::deleteLater)`: deleted when done
                    if _deleter_given_with(owner):
                        return Use.ESCAPE  # `make_tensor_ptr(sizes, p, [](void* q) { delete[] (float*)q; })`
                    if _DELIBERATE_LEAK.search(syn.callee_name(owner)):
                        return Use.ESCAPE  # `__lsan_ignore_object(p)`: leaked on purpose, and said so to the leak checker
                    if not address and self._user_data_of_a_callback(parent, index):
                        return Use.ESCAPE  # `cudaLaunchHostFunc(stream, on_done, ctx)`: the callback receives it
                    if not address and self._into_dying_container(unit, owner, depth):
                        return Use.USE  # `items.push_back(p)` into a local vector of pointers that dies here
                    if index == 0 and not address and syn.last_component(syn.callee_name(owner)) in _RETURNS_FIRST_ARGUMENT:
                        node = owner  # `return strcpy(p, src)` returns `p`: what happens to the result happens to it
                        continue
                    use, _, guessed = self._argument_use(owner, index, address, depth, unit)
                    if use is Use.USE and guessed and not address and self._result_kept(unit, owner, depth):
                        return Use.ESCAPE  # `return make_buffer(iface, ctx)`: what the call built holds the handle
                    return use
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

    def _returns_a_pointer(self, name: str, arity: int) -> bool:
        """Every method of this file named ``name`` returns a pointer (``T* data()``): one into the object."""
        units = self._defined(name, arity)
        return bool(units) and all(_is_method(unit.node) and syn.returns_pointer(unit.node) for unit in units)

    def _hands_this_over(self, name: str, arity: int, depth: int) -> bool:
        """Some method ``name`` of this file gives the object itself to another object (``m_Stream->StartCall(
        Tag())``, ``pool->enqueue(this)``): what it was given to owns it from then on (a completion queue, a worker
        pool), and deletes it when done."""
        key = ("hands over", name, arity)
        if key not in self._self_handling:
            self._self_handling[key] = False  # recursion guard
            self._self_handling[key] = any(
                self._gives_itself_away(unit, depth) for unit in self._defined(name, arity) if _is_method(unit.node)
            )
        return self._self_handling[key]

    def _returns_this(self, name: str, arity: int) -> bool:
        """Some method ``name`` of this file returns the object itself (``void* Tag() { return
        static_cast<void*>(this); }``)."""
        key = ("returns this", name, arity)
        if key not in self._self_handling:
            self._self_handling[key] = any(
                _returned_itself(node) for unit in self._defined(name, arity) if _is_method(unit.node)
                for node in syn.descendants(unit.node) if node.type == "this"
            )
        return self._self_handling[key]

    def _gives_itself_away(self, unit: Unit, depth: int) -> bool:
        for node in syn.descendants(unit.node):
            if node.type == "this" and not _returned_itself(node) and self.classify(unit, node, depth + 1) is Use.ESCAPE:
                return True
            if node.type == "call_expression" and not syn.is_method_call(node):
                # `StartCall(Tag())`: a method of the same class that returns the object, handed on
                callee = syn.last_component(syn.callee_name(node))
                if callee and self._returns_this(callee, len(syn.arguments(node))) and self.classify(unit, node, depth + 1) is Use.ESCAPE:
                    return True
        return False

    def _user_data_of_a_callback(self, arguments: Node, index: int) -> bool:
        """The argument ``index`` follows a callback in the same call (a function of this file that takes a
        ``void*``, its address, or a lambda): C passes a callback its user data so (``pthread_create(&t, 0, run,
        job)``, ``cudaStreamAddCallback(s, done, ctx, 0)``), and the callback is what releases it, later. Data
        passed before a callback (``qsort(items, n, size, compare)``) is only read by the call, and a kernel given
        to a launch (``cudaLaunchKernel(kernel, grid, block, args, 0, stream)``) is no callback."""
        functions = self._functions_by_name()
        for argument in [c for c in arguments.named_children if c.type != "comment"][:index]:
            argument = syn.strip(argument)
            if argument is not None and argument.type == "pointer_expression" and syn.operator(argument) == "&":
                argument = syn.strip(argument.child_by_field_name("argument"))
            if argument is None:
                continue
            if argument.type == "lambda_expression":
                return True
            if argument.type == "identifier" and any(_takes_user_data(unit.node) for unit in functions.get(syn.text(argument), ())):
                return True
        return False

    def _kept_by_callee(self, dereference: Node, depth: int) -> bool:
        """``start(*pipeline)`` where ``start``, defined in this file, takes the object by reference and keeps its
        address (``owner.reset(&pipeline)``, ``std::unique_ptr<T>(&pipeline)``): the callee took it over."""
        passed = _passed_to(dereference)
        if passed is None or syn.is_method_call(passed[0]) or depth > 2:
            return False
        call, arguments, index = passed
        for callee in self._defined(syn.last_component(syn.callee_name(call)), len(arguments)):
            declared = parameters(callee.node)
            if index >= len(declared) or not declared[index][0] or not declared[index][1]:
                continue
            names = self.aliases(callee, declared[index][0])
            for facts in callee.facts.values():
                for name in names:
                    for occurrence, in_lambda in facts.names.get(name, ()):
                        taken = occurrence.parent is not None and occurrence.parent.type == "pointer_expression" and syn.operator(occurrence.parent) == "&"
                        if taken and (in_lambda or self.classify(callee, occurrence, depth + 1) is Use.ESCAPE):
                            return True
        return False

    def _into_dying_container(self, unit: Unit, call: Node, depth: int) -> bool:
        """``call`` puts a pointer into a container of raw pointers (``std::vector<T*> items;``) declared in the
        function, which keeps nothing once the function returns: the container is only filled, sized, iterated
        or indexed, never handed on, and no element it holds is released or handed on either. Anything else
        about the container (passed to a call, returned, swapped, captured, an element deleted) keeps the
        pointer handed over."""
        function = call.child_by_field_name("function")
        if depth > 2 or function is None or function.type != "field_expression":
            return False
        receiver, method = function.child_by_field_name("argument"), function.child_by_field_name("field")
        if receiver is None or method is None or receiver.type != "identifier" or syn.text(method) not in _COPYING_METHODS:
            return False
        name = syn.text(receiver)
        # Asked for every argument that `classify` meets in a call on the container: judged once per container.
        key = (unit.node.start_byte, name, depth)
        if key not in self._dying:
            self._dying[key] = self._dies_with_the_function(unit, name, depth)
        return self._dying[key]

    def _dies_with_the_function(self, unit: Unit, name: str, depth: int) -> bool:
        declarations = unit.declarations_of(name)
        if len(declarations) != 1 or not unit.is_local(name):
            return False
        declaration = declarations[0][2].parent
        while declaration is not None and declaration.type not in ("declaration", "parameter_declaration"):
            declaration = declaration.parent
        if declaration is None or declaration.type != "declaration" or syn.has_storage(declaration, frozenset({"static", "extern", "thread_local"})):
            return False
        type_node = declaration.child_by_field_name("type")
        if type_node is None or not _POINTER_CONTAINER.fullmatch(syn.text(type_node).replace(" ", "")):
            return False
        for facts in unit.facts.values():
            if facts.deletes or any(released_argument(c) is not None or _RELEASE_WORDS.search(syn.last_component(syn.callee_name(c))) for c in facts.calls):
                return False  # something is released here: perhaps the elements, through the container
            for occurrence, in_lambda in facts.names.get(name, ()):
                if in_lambda:
                    return False
                if occurrence == declarations[0][2] or self._container_use_keeps_nothing(unit, occurrence, depth):
                    continue
                return False
        return True

    def dying_container(self, unit: Unit, variable: str) -> str | None:
        """The local container of raw pointers that ``variable`` (or a local copy of it) is put into and that
        keeps nothing once the function returns (see :meth:`_into_dying_container`), for a message; or None."""
        if not variable:
            return None
        names = self.aliases(unit, variable)
        for facts in unit.facts.values():
            for call in facts.calls:
                if any(syn.text(syn.strip(a) or a) in names for a in syn.arguments(call)) and self._into_dying_container(unit, call, 0):
                    function = call.child_by_field_name("function")
                    receiver = function.child_by_field_name("argument") if function is not None else None
                    return syn.text(receiver) if receiver is not None else None
        return None

    def _container_use_keeps_nothing(self, unit: Unit, occurrence: Node, depth: int) -> bool:
        parent = occurrence.parent
        if parent is None:
            return False
        if parent.type == "field_expression" and parent.child_by_field_name("argument") == occurrence:
            field = parent.child_by_field_name("field")
            return field is not None and syn.text(field) in _CONTAINER_KEEPING_NOTHING
        if parent.type == "subscript_expression" and parent.child_by_field_name("argument") == occurrence:
            return self.classify(unit, parent, depth + 1) is not Use.ESCAPE  # `items[i]->run()`, not `own(items[i])`
        if parent.type == "for_range_loop" and parent.child_by_field_name("right") == occurrence:
            loop_variable = syn.declared_identifier(parent.child_by_field_name("declarator"))
            if loop_variable is None:
                return False
            name = syn.text(loop_variable)
            body = parent.child_by_field_name("body")
            uses = [n for n in syn.descendants(body) if n.type == "identifier" and syn.text(n) == name] if body is not None else []
            return all(self.classify(unit, use, depth + 1) is not Use.ESCAPE for use in uses)
        return False

    def _result_kept(self, unit: Unit, call: Node, depth: int) -> bool:
        """The result of ``call`` is returned, stored, handed on, or bound to a local that escapes: a wrapper
        built around its arguments (``return Wrapper(p, 0)``, ``Matcher m = MakeMatcher(p); return m;``)."""
        if depth > 3 or _is_plain_value(_result_type(unit, call)):
            return False  # a number or a status code cannot hold the handle
        if self.classify(unit, call, depth + 1) is Use.ESCAPE:
            return True
        holder = _bound_local(unit, call)
        return holder is not None and self.escapes_anywhere(unit, holder, depth + 1)

    def escapes_anywhere(self, unit: Unit, name: str, depth: int = 0) -> bool:
        """Some occurrence of the local ``name`` in the function lets its value escape."""
        for facts in unit.facts.values():
            for occurrence, in_lambda in facts.names.get(name, ()):
                if in_lambda or self.classify(unit, occurrence, depth) is Use.ESCAPE:
                    return True
        return False

    def aliases(self, unit: Unit, variable: str) -> frozenset[str]:
        """``variable`` and the locals copied from it anywhere in the function (``float* q = p;``, ``q = (T*)p;``),
        and the pointers declared into it (``Header* h = (Header*)(p + offset);``): whoever holds one reaches the
        block."""
        key = (unit.node.start_byte, variable)
        cached = self._alias_cache.get(key)
        if cached is not None:
            return cached
        names = {variable}
        changed = True
        while changed:
            changed = False
            for target, copied, left, right, plus in self._copies(unit):
                if copied is not None:
                    reached = copied in names
                else:  # a pointer moved by an offset from one of the names (`p + n`; not the distance of two)
                    held_left, held_right = left in names, right in names
                    reached = held_left != held_right and (held_left or plus)
                if reached and target not in names:
                    names.add(target)
                    changed = True
        result = frozenset(names)
        self._alias_cache[key] = result
        return result

    def _copies(self, unit: Unit) -> list[_Copy]:
        key = unit.node.start_byte
        found = self._copies_of.get(key)
        if found is None:
            found = self._copies_of[key] = _copies(unit)
        return found


#: A local that a declaration or a plain assignment sets from other names: (the local, the name it copies, or None
#: for a pointer moved by an offset: the offset expression's left and right names, and whether it adds).
_Copy = tuple[str, str | None, str | None, str | None, bool]


def _copies(unit: Unit) -> list[_Copy]:
    """Each local of ``unit`` set from another name, in the order :meth:`Uses.aliases` reads them (step by step,
    declarations before assignments): the syntax read once per function rather than once per variable asked."""
    found: list[_Copy] = []
    for facts in unit.facts.values():
        for declarator in facts.declarators:
            identifier = syn.declared_identifier(declarator.child_by_field_name("declarator"))
            if identifier is None or not unit.is_local(name := syn.text(identifier)):
                continue
            value = syn.strip(declarator.child_by_field_name("value"))
            if value is not None and value.type == "identifier":
                found.append((name, syn.text(value), None, None, False))
            elif (offset := _pointer_offset(value, declarator)) is not None:
                found.append((name, None, *offset))
        for assignment in facts.assignments:
            right = syn.strip(assignment.child_by_field_name("right"))
            left = syn.strip(assignment.child_by_field_name("left"))
            if (
                syn.operator(assignment) == "="
                and right is not None
                and right.type == "identifier"
                and left is not None
                and left.type == "identifier"
                and unit.is_local(syn.text(left))
            ):
                found.append((syn.text(left), syn.text(right), None, None, False))
    return found


def _pointer_offset(value: Node | None, declarator: Node) -> tuple[str | None, str | None, bool] | None:
    """For a pointer declared as ``p + n`` or ``p - n``: the names on the left and right of the offset (None where a
    side is not a name), and whether it adds; None for any other declaration."""
    if value is None or value.type != "binary_expression" or syn.operator(value) not in ("+", "-"):
        return None
    declared = declarator.child_by_field_name("declarator")
    if declared is None or declared.type != "pointer_declarator":
        return None
    sides = [syn.strip(value.child_by_field_name(field)) for field in ("left", "right")]
    left, right = (syn.text(side) if side is not None and side.type == "identifier" else None for side in sides)
    return left, right, syn.operator(value) == "+"


def _macro_releases_in(unit: Unit, facts: StepFacts) -> list[MacroRelease]:
    found = []
    for name, occurrences in facts.names.items():
        if not unit.macros.defines(name):
            continue
        for identifier, in_lambda in occurrences:
            use = None if in_lambda else macro_use(identifier)
            macro = unit.macros.at(name, identifier) if use is not None else None
            # A function-like macro is used with arguments, an object-like one as a statement of its own.
            if macro is None or (use is identifier) != (macro.definition.parameters is None):
                continue
            arguments = syn.arguments(use) if use is not identifier else []
            for target, row in released_by(macro.definition):
                if isinstance(target, str):
                    found.append(MacroRelease(use, target, row))
                elif target < len(arguments):
                    found.append(MacroRelease(use, arguments[target], row))
            # `#define FREE_AND_RETURN() FREE(); return -1;`: what the macros it uses free of the caller's names
            for target, row in _nested_releases(unit, macro.definition, identifier, {name}, 0):
                found.append(MacroRelease(use, target, row))
    return found


_MACRO_WORD = re.compile(r"\b[A-Za-z_]\w*\b")


def _nested_releases(unit: Unit, definition: MacroDefinition, at: Node, seen: set[str], depth: int) -> list[tuple[str, Release | None]]:
    """The caller's names that the macros used in ``definition``'s body release (as defined where ``at`` is),
    followed three levels deep."""
    if depth >= 3:
        return []
    found = []
    for word in dict.fromkeys(_MACRO_WORD.findall(definition.body)):
        if word in seen:
            continue
        nested = unit.macros.at(word, at)
        if nested is None:
            continue
        found.extend((target, row) for target, row in released_by(nested.definition) if isinstance(target, str))
        found.extend(_nested_releases(unit, nested.definition, at, seen | {word}, depth + 1))
    return found


#: A parameter pasted into a token or turned into a string (``tmp_##p``, ``#p``) names no variable of the caller.
_PASTED = re.compile(r"#\s*#?\s*([A-Za-z_]\w*)|([A-Za-z_]\w*)\s*##")


@lru_cache(maxsize=4096)
def released_by(definition: MacroDefinition) -> tuple[tuple[int | str, Release | None], ...]:
    """What a macro's body releases, read as statements: its parameter (by index) or a name of the caller's
    (by name), with the release's row (None: a function whose name says it frees)."""
    if not _RELEASE_WORDS.search(definition.body):
        return ()
    block = parse_statements(definition.body)
    if block is None:
        return ()
    parameters = definition.parameters or ()
    pasted = {name for match in _PASTED.finditer(definition.body) for name in match.groups() if name}
    found: dict[tuple[int | str, Release | None], None] = {}
    for argument, row in _releases_written(block):
        argument = syn.strip(argument)
        if argument is None or argument.type != "identifier" or syn.text(argument) in pasted:
            continue
        name = syn.text(argument)
        found[(parameters.index(name) if name in parameters else name, row)] = None
    return tuple(found)


def _releases_written(block: Node) -> list[tuple[Node, Release | None]]:
    """Each argument a block releases: through a release call, ``delete``, or a function named for freeing."""
    found: list[tuple[Node, Release | None]] = []
    for node in syn.descendants(block):
        if node.type == "call_expression":
            released = released_argument(node)
            if released is not None:
                found.append(released)
            elif not syn.is_method_call(node) and _RELEASE_WORDS.search(syn.last_component(syn.callee_name(node))):
                found.extend((argument, None) for argument in syn.arguments(node))
        elif node.type == "delete_expression":
            operand = delete_operand(node)
            if operand is not None:
                found.append((operand, releases_by_name()["delete[]" if is_array_delete(node) else "delete"]))
    return found


def plain_qualifier(name: str) -> bool:
    """``cudaMalloc``, ``::cudaMalloc`` and ``std::malloc`` are the C functions; ``pool::malloc`` is not."""
    if "::" not in name:
        return True
    return name.rsplit("::", 1)[0] in ("", "std")


def released_argument(call: Node) -> tuple[Node, Release] | None:
    if syn.is_method_call(call):
        return None
    name = syn.callee_name(call)
    row = releases_by_name().get(syn.last_component(name))
    if row is None or not plain_qualifier(name):
        return None
    args = syn.arguments(call)
    if len(args) <= row.arg:
        return None
    return args[row.arg], row


def delete_operand(delete: Node) -> Node | None:
    operands = [c for c in delete.named_children if c.type != "comment"]
    return syn.strip(operands[-1]) if operands else None


def is_array_delete(delete: Node) -> bool:
    """``delete[] p``, also where a C-style cast follows (``delete[] (T*) p``), which the grammar reads with an
    error node that holds the ``[]``."""
    return syn.text(delete).removeprefix("::").removeprefix("delete").lstrip().startswith("[")


#: Container methods that copy the value they are given (a dereferenced pointer passed to them is not kept).
def _keyed_into_a_kept_container(unit: Unit, subscript: Node | None) -> bool:
    """``subscript`` (``table[p]``) is assigned to, and ``table`` is no local of ``unit``: a member (``table_``,
    ``this->table``), a global or a parameter's container, which keeps its keys after the function returns."""
    if subscript is None or subscript.type != "subscript_expression":
        return False
    assignment = subscript.parent
    if assignment is None or assignment.type != "assignment_expression" or assignment.child_by_field_name("left") != subscript:
        return False
    container = syn.strip(subscript.child_by_field_name("argument"))
    if container is None:
        return False
    if container.type == "field_expression":
        return True
    return container.type == "identifier" and not unit.is_local(syn.text(container))


_COPYING_METHODS = frozenset({"push_back", "emplace_back", "push_front", "emplace_front", "insert", "push", "emplace", "append", "assign"})
#: A standard container of raw pointers (``std::vector<Item*>``), which frees none of them when it dies.
_POINTER_CONTAINER = re.compile(r"(?:std::)?(?:vector|deque|list|forward_list|set|unordered_set|queue|stack)<[\w:]+\*+>")
#: What can be done with such a container that hands none of its pointers on.
_CONTAINER_KEEPING_NOTHING = _COPYING_METHODS | {"size", "empty", "reserve", "capacity", "resize", "clear", "begin", "end", "front", "back", "at"}


def _calls_an_object(call: Node, unit: Unit | None) -> bool:
    """``(*layer)(x)``, ``layers[i](x)``, ``make()(x)``, or ``op(x)`` where ``op`` is a variable of the function."""
    function = call.child_by_field_name("function")
    while function is not None and function.type == "parenthesized_expression":
        inner = [c for c in function.named_children if c.type != "comment"]
        function = inner[0] if inner else None
    if function is None:
        return False
    if function.type in ("pointer_expression", "subscript_expression", "call_expression"):
        return True
    return function.type == "identifier" and unit is not None and syn.text(function) in unit.variables


def _passed_to(node: Node) -> tuple[Node, list[Node], int] | None:
    """The call ``node`` is an argument of (through parentheses and casts), its arguments, and ``node``'s index."""
    child, parent = _through_casts(node)
    if parent is None or parent.type != "argument_list" or parent.parent is None or parent.parent.type != "call_expression":
        return None
    arguments = [c for c in parent.named_children if c.type != "comment"]
    return parent.parent, arguments, arguments.index(child)


def _passed_by_reference_to_owner(dereference: Node) -> bool:
    """``owner.add(*p)``, ``registry_attach(*p)``: the callee takes the object by reference and keeps it."""
    passed = _passed_to(dereference)
    if passed is None:
        return False
    last = syn.last_component(syn.callee_name(passed[0]))
    if not last or last in _COPYING_METHODS or _API_PREFIX.match(last):
        return False
    return any(word.lower().startswith(_OWNER_WORDS) for word in _WORDS.findall(last))


#: Methods by which an object hands itself to its framework, which deletes it when done: Qt's ``deleteLater``,
#: Node-API's ``AsyncWorker::Queue`` (the worker deletes itself after its callbacks run).
_HANDING_ITSELF_OVER = frozenset({"deleteLater", "Queue"})


def _hands_itself_over(field_expression: Node, receiver: Node) -> bool:
    """``receiver->deleteLater()``, ``receiver->Queue()``: a call of such a method on the object."""
    method = _method_called_on(field_expression, receiver)
    return method is not None and method[1] in _HANDING_ITSELF_OVER


def _method_called_on(field_expression: Node, receiver: Node) -> tuple[Node, str] | None:
    """``(call, "Start")`` for ``receiver->Start()`` (or ``receiver.Start()``)."""
    if field_expression.child_by_field_name("argument") != receiver:
        return None
    field = field_expression.child_by_field_name("field")
    call = field_expression.parent
    if field is None or call is None or call.type != "call_expression" or call.child_by_field_name("function") != field_expression:
        return None
    return call, syn.text(field)


def _through_casts(node: Node) -> tuple[Node, Node | None]:
    """The outermost expression that still denotes ``node`` (through parentheses and casts), and its parent."""
    child, parent = node, node.parent
    while parent is not None and syn.is_transparent_parent(parent, child):
        child, parent = parent, parent.parent
    return child, parent


def stored_for_later(unit: Unit, call: Node) -> bool:
    """The value of ``call`` (or of any expression, through parentheses and casts) is returned, or assigned where
    it outlives the function: a field, a dereference, an element, a global (not a plain local)."""
    child, parent = _through_casts(call)
    if parent is None:
        return False
    if parent.type == "return_statement":
        return True
    if parent.type != "assignment_expression" or parent.child_by_field_name("right") != child:
        return False
    left = syn.strip(parent.child_by_field_name("left"))
    return left is not None and not (left.type == "identifier" and unit.is_local(syn.text(left)))


def _cast_to_a_pointer(call: Node) -> bool:
    """``reinterpret_cast<void *>(call)`` or ``(float *)call``: the result is used as an address."""
    child, parent = call, call.parent
    while parent is not None and syn.is_transparent_parent(parent, child):
        cast = parent if parent.type == "cast_expression" else parent.parent if parent.type == "argument_list" else parent
        if cast is not None and cast.type in ("cast_expression", "call_expression") and "*" in syn.cast_type_text(cast):
            return True
        child, parent = parent, parent.parent
    return False


def _is_method(function: Node) -> bool:
    """A member function: defined in a class body, or out of it as ``Class::name``."""
    parent = function.parent
    if parent is not None and parent.type == "field_declaration_list":
        return True
    declarator = function.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    return name is not None and name.type == "qualified_identifier"


def _returned_itself(this: Node) -> bool:
    """``return this;``, ``return static_cast<void*>(this);``: the method hands the object to its caller."""
    node = this
    while node.parent is not None and node.parent.type in ("parenthesized_expression", "cast_expression", "argument_list", "template_function"):
        if node.parent.type == "argument_list":
            call = node.parent.parent
            if call is None or call.type != "call_expression" or not syn.callee_name(call).endswith("_cast"):
                return False
            node = call
            continue
        node = node.parent
    return node.parent is not None and node.parent.type == "return_statement"


def _names_delete_later(argument: Node) -> bool:
    """``&QObject::deleteLater`` (or ``&Class::deleteLater``): a slot that deletes the object it is connected to."""
    argument = syn.strip(argument)
    if argument is None or argument.type != "pointer_expression" or syn.operator(argument) != "&":
        return False
    target = argument.child_by_field_name("argument")
    return target is not None and syn.last_component(syn.text(target)) == "deleteLater"


def _takes_user_data(function: Node) -> bool:
    """A host function with a ``void*`` parameter: the shape of a callback that is handed its user data."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
        declarator = declarator.child_by_field_name("declarator")  # `void *run(void *arg)`: a thread's start routine
    parameters = declarator.child_by_field_name("parameters") if declarator is not None and declarator.type == "function_declarator" else None
    head = (function.text or b"")[: (declarator.start_byte - function.start_byte) if declarator is not None else 0]
    return parameters is not None and b"__global__" not in head and b"void*" in (parameters.text or b"").replace(b" ", b"")


def _deleter_given_with(call: Node) -> bool:
    """The statement that passes a pointer to ``call`` also hands over a deleter: a lambda that releases its own
    parameter (``make_tensor_ptr(sizes, data, ..., [](void* p) { delete[] static_cast<float*>(p); })``, or
    ``for_blob(data, sizes).deleter(...)`` chained on the call's result). What it built owns the pointer and
    releases it with that lambda when it dies."""
    statement = call
    while statement.parent is not None and not statement.type.endswith(("statement", "declaration")):
        statement = statement.parent
    for node in syn.descendants(statement, skip=frozenset()):
        if node.type != "lambda_expression":
            continue
        own = {name for name, _ in parameters(node) if name}
        body = node.child_by_field_name("body")
        if own and body is not None and any(syn.text(syn.strip(argument)) in own for argument, _ in _releases_written(body)):
            return True
    return False


def _takes(function: Node, arity: int) -> bool:
    """``function`` can be called with ``arity`` arguments (its parameters with defaults may be left out; a C
    ``...`` is no named parameter, and a function with one is asked as a last resort, when no overload takes
    ``arity``)."""
    declared = parameter_declarations(function)
    if any(parameter.type == "variadic_parameter_declaration" for parameter in declared):
        return arity >= len(declared) - 1
    required = sum(1 for parameter in declared if parameter.type != "optional_parameter_declaration")
    return required <= arity <= len(declared)


def _kept_by_member_initializer(function: Node, names: frozenset[str]) -> bool:
    """A constructor whose member initializer list stores one of ``names`` (``data_(p)``, ``data_{p}``)."""
    for initializers in function.named_children:
        if initializers.type != "field_initializer_list":
            continue
        for initializer in initializers.named_children:
            values = next((c for c in initializer.named_children if c.type in ("argument_list", "initializer_list")), None)
            if values is None:
                continue
            for value in values.named_children:
                value = syn.strip(value)
                if value is not None and value.type == "identifier" and syn.text(value) in names:
                    return True
    return False


#: Typedefs of numbers and status codes (a value of these types cannot keep a pointer).
_VALUE_TYPES = frozenset(
    {"size_t", "ssize_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
     "uint64_t", "cudaError_t", "CUresult", "ncclResult_t", "cublasStatus_t", "cudnnStatus_t", "cusparseStatus_t",
     "nvrtcResult", "std::size_t", "std::string", "string", "std::int64_t", "std::uint64_t"}
)


#: C library functions that return their first argument (the destination they wrote).
_RETURNS_FIRST_ARGUMENT = frozenset({"strcpy", "strncpy", "strcat", "strncat", "memcpy", "memmove", "memset", "stpcpy", "wcscpy", "wcscat", "wmemcpy", "wmemset"})


_STATUS_TYPE = re.compile(r"(?i)(?:status|error|err|result|retcode|rc)(?:_t)?$")


def _is_plain_value(type_node: Node | None) -> bool:
    if type_node is None:
        return False
    if type_node.type in ("primitive_type", "sized_type_specifier"):
        return True
    if type_node.type not in ("type_identifier", "qualified_identifier"):
        return False
    name = syn.name_of(type_node)
    return name in _VALUE_TYPES or _STATUS_TYPE.search(syn.last_component(name)) is not None


def _result_type(unit: Unit, call: Node) -> Node | None:
    """The declared type the result of ``call`` ends up in: the variable it initialises, or for a returned
    call the function's return type (None when not known or not a plain declaration)."""
    child, parent = _through_casts(call)
    if parent is None:
        return None
    if parent.type == "return_statement":
        declarator = unit.node.child_by_field_name("declarator")
        if unit.node.type != "function_definition" or declarator is None or declarator.type != "function_declarator":
            return None  # a pointer or reference is returned, or a lambda
        return unit.node.child_by_field_name("type")
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == child:
        declarator = parent.child_by_field_name("declarator")
        if declarator is None or declarator.type != "identifier" or parent.parent is None:
            return None
        return parent.parent.child_by_field_name("type")
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == child:
        left = syn.strip(parent.child_by_field_name("left"))
        if left is not None and left.type == "identifier":
            return _declared_type(unit, syn.text(left))
    return None


_DECLARATION = frozenset({"declaration"})


def _declared_type(unit: Unit, name: str) -> Node | None:
    """The type of the plain (non-pointer) local ``name`` as declared in the function, if it is one."""
    for node in unit.walk.of_type(_DECLARATION):
        for declarator in node.children_by_field_name("declarator"):
            target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
            if target is not None and target.type == "identifier" and syn.text(target) == name:
                return node.child_by_field_name("type")
    return None


def _bound_local(unit: Unit, call: Node) -> str | None:
    """The local that ``call``'s result initialises or is assigned to (``T v = f(p);``, ``v = f(p);``)."""
    child, parent = _through_casts(call)
    if parent is None:
        return None
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == child:
        identifier = syn.declared_identifier(parent.child_by_field_name("declarator"))
    elif parent.type == "assignment_expression" and parent.child_by_field_name("right") == child:
        identifier = syn.strip(parent.child_by_field_name("left"))
    else:
        return None
    if identifier is None or identifier.type != "identifier" or not unit.is_local(syn.text(identifier)):
        return None
    return syn.text(identifier)


def _constructs_declared_type(call: Node, name: str) -> bool:
    """``std::locale l = std::locale(loc, facet);``: the call constructs the declared type, which takes the argument."""
    child, parent = _through_casts(call)
    if parent is None or parent.type != "init_declarator" or parent.child_by_field_name("value") != child:
        return False
    declaration = parent.parent
    declared = syn.name_of(declaration.child_by_field_name("type")) if declaration is not None else ""
    return bool(declared) and syn.last_component(declared) == syn.last_component(name)
