"""GEM501 in C and C++: ONNX Runtime sessions whose graph optimizations are disabled or limited to basic.

The C++ API sets the level on ``Ort::SessionOptions`` with ``SetGraphOptimizationLevel(level)``; the C API
with ``api->SetSessionGraphOptimizationLevel(options, level)``. Offline optimization is left alone: the
same options also ``SetOptimizedModelFilePath`` (they export an optimized model), or every session built
with them in the function loads an already optimized ``*.ort`` model (or a file the project writes through
``optimized_model_filepath``). So are sessions run to read intermediate tensors, which fusion removes:
constant folding, shape inference and calibration (named so, or adding graph outputs first), and options
given to an execution provider that optimizes the graph itself (OpenVINO, QNN, SNPE).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gemlint.native import c_syntax as syn

if TYPE_CHECKING:
    from gemlint.frontends.native import NativeDocument, Node

#: setter -> index of its level argument and of its options argument (None: the receiver object)
SETTERS: dict[str, tuple[int, int | None]] = {
    "SetGraphOptimizationLevel": (0, None),
    "SetSessionGraphOptimizationLevel": (1, 0),
}
LEVELS = ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC")
EXPORTERS = frozenset({"SetOptimizedModelFilePath"})
SESSION_TYPES = frozenset({"Session", "Ort::Session"})
CREATE_SESSION = frozenset({"CreateSession"})
_DEBUG_FUNCTION = re.compile(r"debug|profil|bench", re.IGNORECASE)
#: Functions that run a session to read tensors that fusion would remove: constant folding, shape inference,
#: calibration (their unfused graphs are the point, as in the Python rule's calibration exemption).
_UNFUSED_PURPOSE = re.compile(r"fold_?const|const(?:ant)?s?_?fold|shape_?infer|infer_?shapes?|calibrat", re.IGNORECASE)
#: ONNX ``GraphProto`` calls that expose intermediate tensors as graph outputs before the session is built.
_EXPOSES_INTERMEDIATES = frozenset({"add_output"})
#: Execution providers for which ONNX Runtime's own levels are not worth keeping: OpenVINO's documentation asks
#: for ORT_DISABLE_ALL (it compiles the graph as exported best), and the extended optimizations rewrite only
#: nodes assigned to the CPU, CUDA and ROCm providers, so a QNN or SNPE session loses nothing by them.
SELF_OPTIMIZING_PROVIDERS = ("openvino", "qnn", "snpe")
#: ``options.AppendExecutionProvider_OpenVINO(...)``, ``AppendExecutionProvider("QNN", ...)``, and the C API's
#: ``OrtSessionOptionsAppendExecutionProvider_OpenVINO(options, ...)`` and
#: ``api->SessionOptionsAppendExecutionProvider(options, "SNPE", ...)``: the provider named after the
#: underscore, else by the first string argument; the C API's forms take the options first.
_APPEND_PROVIDER = re.compile(r"^(?P<c_api>(?:Ort)?SessionOptions)?AppendExecutionProvider(?:_(?P<named>[A-Za-z]+))?(?:_V\d+)?$")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class DisabledOptimization:
    call: Node
    level: str  # ORT_DISABLE_ALL or ORT_ENABLE_BASIC
    level_node: Node  # the identifier naming the level (what the fix rewrites)


def find(document: NativeDocument, optimized_paths: frozenset[str] = frozenset()) -> list[DisabledOptimization]:
    from gemlint.frontends.native import function_nodes

    if b"GraphOptimizationLevel" not in document.data:
        return []
    found = []
    for function in function_nodes(document):
        body = function.child_by_field_name("body")
        if body is None or b"GraphOptimizationLevel" not in (body.text or b""):
            continue
        if function.type == "function_definition" and _DEBUG_FUNCTION.search(syn.function_name(function)):
            continue
        if _needs_unfused_graph(function, body):
            continue
        for node in syn.descendants(body):
            if node.type != "call_expression":
                continue
            setter = SETTERS.get(syn.last_component(syn.callee_name(node)))
            if setter is None:
                continue
            level_index, options_index = setter
            args = syn.arguments(node)
            if len(args) <= level_index:
                continue
            level_node = _level_name(args[level_index])
            level = next((name for name in LEVELS if level_node is not None and syn.text(level_node).endswith(name)), None)
            if level is None or _flag_guarded(node, body):
                continue
            options = _options_of(node, args, options_index)
            if options and (_offline(body, options, optimized_paths) or _self_optimizing_provider(body, options)):
                continue
            found.append(DisabledOptimization(node, level, level_node))
    return found


def _needs_unfused_graph(function: Node, body: Node) -> bool:
    """A session built to read intermediate tensors: the function is named for constant folding, shape inference
    or calibration, or it adds graph outputs (``graph->add_output()``) before running the model."""
    if function.type == "function_definition" and _UNFUSED_PURPOSE.search(syn.function_name(function)):
        return True
    return any(
        node.type == "call_expression" and syn.is_method_call(node) and syn.callee_name(node) in _EXPOSES_INTERMEDIATES
        for node in syn.descendants(body)
    )


def _level_name(argument: Node) -> Node | None:
    """The identifier naming the level: ``GraphOptimizationLevel::ORT_DISABLE_ALL`` -> ``ORT_DISABLE_ALL``."""
    node = syn.strip(argument)
    while node is not None and node.type == "qualified_identifier":
        node = node.child_by_field_name("name")
    return node if node is not None and node.type == "identifier" else None


def _options_of(call: Node, args: list[Node], options_index: int | None) -> str:
    if options_index is not None:
        return syn.normalized(args[options_index]) if len(args) > options_index else ""
    function = call.child_by_field_name("function")
    if function is not None and function.type == "field_expression":
        return syn.normalized(function.child_by_field_name("argument"))
    return ""


def _flag_guarded(node: Node, body: Node) -> bool:
    """Under an ``if`` on a run-time condition, a conditional expression, or an ``#if``/``#ifdef`` block."""
    child, parent = node, node.parent
    while parent is not None and parent != body:
        if parent.type == "if_statement" and parent.child_by_field_name("condition") != child:
            condition = parent.child_by_field_name("condition")
            value = condition.child_by_field_name("value") if condition is not None else None
            if not (syn.is_constant_true(value) or syn.is_constant_false(value)):
                return True
        if parent.type == "conditional_expression" and parent.child_by_field_name("condition") != child:
            return True
        if parent.type in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"):
            return True
        child, parent = parent, parent.parent
    return False


def _offline(body: Node, options: str, optimized_paths: frozenset[str]) -> bool:
    sessions: list[list[Node]] = []
    for node in syn.descendants(body):
        if node.type == "call_expression":
            name = syn.last_component(syn.callee_name(node))
            args = syn.arguments(node)
            if name in EXPORTERS:
                receiver = node.child_by_field_name("function")
                target = (
                    syn.normalized(receiver.child_by_field_name("argument"))
                    if receiver is not None and receiver.type == "field_expression"
                    else (syn.normalized(args[0]) if args else "")
                )
                if target == options:
                    return True
            elif name in CREATE_SESSION and len(args) >= 3 and syn.normalized(args[2]) == options:
                sessions.append(args)
            elif name in ("make_unique", "make_shared") and any(syn.normalized(a) == options for a in args):
                sessions.append(args)
        elif node.type in ("init_declarator", "new_expression") and _constructs_session(node):
            args = _constructor_args(node)
            if any(syn.normalized(a) == options for a in args):
                sessions.append(args)
        elif node.type == "function_declarator" and node.parent is not None and node.parent.type == "declaration":
            # `Ort::Session session(env, path, options);` parses as a function declaration.
            if syn.last_component(syn.name_of(node.parent.child_by_field_name("type"))) == "Session":
                parameters = node.child_by_field_name("parameters")
                args = [p for p in parameters.named_children] if parameters is not None else []
                if any(syn.normalized(a) == options for a in args):
                    sessions.append(args)
    if not sessions:
        return False
    return all(any(_loads_optimized(a, optimized_paths) for a in args) for args in sessions)


def _self_optimizing_provider(body: Node, options: str) -> bool:
    """The options are given to an execution provider that optimizes the graph itself (in this function)."""
    for node in syn.descendants(body):
        if node.type != "call_expression":
            continue
        match = _APPEND_PROVIDER.match(syn.last_component(syn.callee_name(node)))
        if match is None:
            continue
        args = syn.arguments(node)
        target = syn.normalized(args[0]) if match.group("c_api") and args else _options_of(node, args, None)
        if target != options:
            continue
        named = match.group("named") or _first_string(args)
        if named.lower().startswith(SELF_OPTIMIZING_PROVIDERS):
            return True
    return False


def _first_string(args: list[Node]) -> str:
    """The text of the first string literal among ``args`` (a provider's name: ``"QNN"``), or ""."""
    for argument in args:
        match = _STRING.fullmatch(syn.text(argument))
        if match is not None:
            return match.group(1)
    return ""


def _constructs_session(node: Node) -> bool:
    if node.type == "new_expression":
        return syn.last_component(syn.name_of(node.child_by_field_name("type"))) == "Session"
    declaration = node.parent
    type_name = syn.name_of(declaration.child_by_field_name("type")) if declaration is not None else ""
    return syn.last_component(type_name) == "Session" or type_name in SESSION_TYPES


def _constructor_args(node: Node) -> list[Node]:
    arguments = node.child_by_field_name("arguments") if node.type == "new_expression" else node.child_by_field_name("value")
    if arguments is None:
        return []
    if arguments.type in ("argument_list", "initializer_list"):
        return [c for c in arguments.named_children if c.type != "comment"]
    if arguments.type == "call_expression":  # Ort::Session s = Ort::Session(env, path, opts);
        return syn.arguments(arguments)
    return []


def _loads_optimized(argument: Node, optimized_paths: frozenset[str]) -> bool:
    for match in _STRING.finditer(syn.text(argument)):
        path = match.group(1)
        if path.endswith(".ort"):
            return True
        if path.replace("\\\\", "/").rsplit("/", 1)[-1] in optimized_paths:
            return True
    return False
