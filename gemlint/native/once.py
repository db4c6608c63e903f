"""Functions that run at most once per process.

``main`` runs once, and so does a function called from one place, outside any loop, in a function that runs
once. An exception that leaves ``main`` ends the process, and so does one thrown by a function that ``main``
calls (directly or through others) outside any ``try``. What it leaks on a failure exit, having released it on its normal path, is one allocation held until the
failure ends the process (a sample's ``runTest()`` that returns early when a check fails, and ``main`` exits): the
leak rules leave that alone. A handle its cleanup forgets on every path is still reported.

Only callers in the same file are read, so only functions no other file calls are judged: ``static`` functions,
and the free functions of a program's ``main`` file (a file that defines ``main``; other files do not call into
it, and in a repository of many programs another file's function of the same name is another program's). A name
used any other way (a function pointer, a thread's entry, a macro's body), or called from a loop or from a
function that may run many times, keeps the findings.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gemlint.native import c_syntax as syn

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from gemlint.frontends.native import NativeDocument

MAX_DEPTH = 4
LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})
_ENTRY_POINTS = frozenset({"main", "wmain"})


def runs_once(document: NativeDocument, function: Node, defines_main: bool) -> bool:
    """Whether the function definition ``function`` of ``document`` runs at most once per process
    (``defines_main``: the file defines ``main``)."""
    return _runs_once(document, function, defines_main, 0)


def _runs_once(document: NativeDocument, function: Node, defines_main: bool, depth: int) -> bool:
    if syn.function_name(function) in _ENTRY_POINTS:
        return True
    calls = _calls(document, function, defines_main, depth)
    if calls is None or any(_in_loop(mention, caller) or not _runs_once(document, caller, defines_main, depth + 1) for mention, caller in calls):
        return False
    return len(calls) == 1  # called from two places, it runs twice


def _calls(document: NativeDocument, function: Node, defines_main: bool, depth: int) -> list[tuple[Node, Node]] | None:
    """Each call of the free function ``function`` in the file, with the function that makes it; None where the
    file's calls may not be all of them (a method, a function other files may call, a name used otherwise, a call
    outside a function or of itself), or past :data:`MAX_DEPTH`."""
    name = syn.function_name(function)
    # Methods are called through objects (`engine.run()`), which a name does not find: only free functions.
    if depth >= MAX_DEPTH or not name.isidentifier() or _in_class(function):
        return None
    if not defines_main and not syn.has_storage(function, frozenset({"static"})):
        return None  # other files may call it
    mentions = _mentions(document, name)
    if mentions is None:
        return None
    calls = []
    for mention in mentions:
        kind = _mention_kind(mention)
        if kind == "declaration":
            continue
        if kind != "call":
            return None
        caller = _enclosing_function(mention)
        if caller is None or caller == function:
            return None
        calls.append((mention, caller))
    return calls


def never_runs(document: NativeDocument, function: Node, defines_main: bool) -> bool:
    """Whether nothing calls ``function``: a free function of a program's ``main`` file, or a ``static`` one of a
    source file (a header's may be called by the files that include it), that no code of the file names: left over
    from an earlier version of the program (``Process1`` beside the ``Process2`` that ``main`` calls), it never runs,
    and what it would leak is never acquired."""
    if syn.function_name(function) in _ENTRY_POINTS:
        return False
    if not defines_main and (document.path is None or document.path.suffix.lower() in _HEADER_SUFFIXES):
        return False
    calls = _calls(document, function, defines_main, 0)
    return calls is not None and not calls


_HEADER_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".ipp", ".tpp"})


def ends_with_the_process(document: NativeDocument, function: Node) -> bool:
    """Whether ``function`` is called from one place, the last statement of ``main`` (only ``return`` may follow):
    what it leaves allocated is held until the process ends, as what ``main`` itself leaves."""
    name = syn.function_name(function)
    if not name.isidentifier() or name in _ENTRY_POINTS or _in_class(function):
        return False
    mentions = _mentions(document, name)
    calls = [mention for mention in mentions or () if _mention_kind(mention) != "declaration"]
    if mentions is None or len(calls) != 1 or _mention_kind(calls[0]) != "call":
        return False
    caller = _enclosing_function(calls[0])
    if caller is None or syn.function_name(caller) not in _ENTRY_POINTS:
        return False
    statement = calls[0]
    body = caller.child_by_field_name("body")
    while statement.parent is not None and statement.parent != body:
        statement = statement.parent
    if statement.parent != body:
        return False
    following = statement.next_named_sibling
    while following is not None:
        if following.type not in ("return_statement", "comment"):
            return False
        following = following.next_named_sibling
    return True


def throws_end_the_process(document: NativeDocument, function: Node, defines_main: bool) -> bool:
    """Whether an exception thrown out of ``function`` ends the process: ``main``, or a function every call of which
    is outside any ``try`` in a function whose throws end the process (an exception that leaves ``main`` calls
    ``std::terminate``). Loops and several calls do not matter here, unlike :func:`runs_once`: the first throw is
    the last thing the program does. The same files and names are judged as there."""
    return _uncaught(document, function, defines_main, 0)


def _uncaught(document: NativeDocument, function: Node, defines_main: bool, depth: int) -> bool:
    if syn.function_name(function) in _ENTRY_POINTS:
        return True
    calls = _calls(document, function, defines_main, depth)
    return bool(calls) and not any(_in_try(mention, caller) or not _uncaught(document, caller, defines_main, depth + 1) for mention, caller in calls)


_NAME_NODES = frozenset({"identifier", "field_identifier", "type_identifier", "namespace_identifier", "statement_identifier"})
_TEXT_NODES = frozenset({"comment", "string_literal", "raw_string_literal", "char_literal", "system_lib_string"})


def _mentions(document: NativeDocument, name: str) -> list[Node] | None:
    """The names spelled ``name`` in the document's code; None when the word also appears where the tree does not
    read it as code (a macro's body, a region that did not parse): a use there is not known."""
    names, texts = _name_index(document)
    spelled = name.encode()
    found = names.get(spelled, [])
    word = re.compile(rb"\b" + re.escape(spelled) + rb"\b")
    everywhere = len(word.findall(document.data))
    # Comments and strings are read only when the code's names do not account for every occurrence.
    if len(found) != everywhere and len(found) + sum(len(word.findall(text)) for text in texts) != everywhere:
        return None
    return [node for node in found if node.type == "identifier"] if all(n.type == "identifier" for n in found) else None


def _name_index(document: NativeDocument) -> tuple[dict[bytes, list[Node]], list[bytes]]:
    """The document's name nodes by spelling, and the text of its comments and strings: one walk of the file for
    every function asked about (a walk per name was most of the time spent on a file of many small functions)."""
    key = "once.names"
    if key not in document.cache:
        names: dict[bytes, list[Node]] = {}
        texts: list[bytes] = []
        stack = [document.root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind in _TEXT_NODES:
                texts.append(node.text or b"")
                continue
            if kind in _NAME_NODES:
                names.setdefault(node.text or b"", []).append(node)
            stack.extend(node.named_children)
        document.cache[key] = (names, texts)
    return document.cache[key]


def _in_class(function: Node) -> bool:
    parent = function.parent
    return parent is not None and parent.type in ("field_declaration_list", "template_declaration") and _enclosing_class_body(parent)


def _enclosing_class_body(node: Node) -> bool:
    while node is not None:
        if node.type == "field_declaration_list":
            return True
        if node.type in ("translation_unit", "namespace_definition", "compound_statement"):
            return False
        node = node.parent
    return False


def _mention_kind(identifier: Node) -> str:
    """``"call"`` (``name(...)``), ``"declaration"`` (the definition's or a prototype's declarator) or ``"other"``."""
    parent = identifier.parent
    if parent is None:
        return "other"
    if parent.type == "function_declarator" and parent.child_by_field_name("declarator") == identifier:
        return "declaration"
    if parent.type == "call_expression" and parent.child_by_field_name("function") == identifier:
        return "call"
    return "other"


def _enclosing_function(node: Node) -> Node | None:
    current = node.parent
    while current is not None:
        if current.type == "function_definition":
            return current
        if current.type == "lambda_expression":
            return None  # a lambda may run any number of times
        current = current.parent
    return None


def _in_try(node: Node, function: Node) -> bool:
    current = node.parent
    while current is not None and current != function:
        if current.type in ("try_statement", "seh_try_statement"):
            return True
        current = current.parent
    return False


def _in_loop(node: Node, function: Node) -> bool:
    current = node.parent
    while current is not None and current != function:
        if current.type in LOOPS:
            return True
        current = current.parent
    return False
