"""The C, C++ and CUDA front-end: tree-sitter with the CUDA grammar (a superset of C++) for C++, CUDA and
headers, and the C grammar for ``.c`` files (where ``new`` and ``class`` are ordinary names).

No compile database, no preprocessor and no compiler: the grammar is
error-tolerant, so a file with constructs it does not know still yields a tree
whose well-formed parts the rules can check. Text that is not source (NUL
bytes, invalid UTF-8) never gets here: the engine's decoding step reports it as
GEM000.
"""

from __future__ import annotations

import bisect
import re
import time
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

import tree_sitter
import tree_sitter_c
import tree_sitter_cuda

from gemlint.diagnostics import Position
from gemlint.discovery import SourceFile
from gemlint.text import TIMED_OUT_PREFIX, SourceError

if TYPE_CHECKING:
    from gemlint.frontends.native_includes import MacroDefinition

Node = tree_sitter.Node


_GRAMMARS = {"c": tree_sitter_c.language, "cuda": tree_sitter_cuda.language}
_FUNCTIONS = {"c": "(function_definition) @unit", "cuda": "[(function_definition) (lambda_expression)] @unit"}
_DEFINITIONS = "[(preproc_def) (preproc_function_def)] @definition"
# What makes a class own itself: its definition (with its bases) and ``delete this`` (C has neither classes nor delete).
_OWNERSHIP = {"c": "(struct_specifier) @node", "cuda": "[(class_specifier) (struct_specifier) (delete_expression)] @node"}


@lru_cache(maxsize=None)
def _language(grammar: str) -> tree_sitter.Language:
    return tree_sitter.Language(_GRAMMARS[grammar]())


@lru_cache(maxsize=None)
def _parser(grammar: str) -> tree_sitter.Parser:
    return tree_sitter.Parser(_language(grammar))


@lru_cache(maxsize=None)
def _query(grammar: str, pattern: str) -> tree_sitter.Query:
    return tree_sitter.Query(_language(grammar), pattern)


def prepare(grammars: Iterable[str]) -> None:
    """Load ``grammars`` and compile their queries now (about 40 ms): a process that forks workers does it once
    for all of them, instead of each worker on its first native file."""
    for grammar in grammars:
        _query(grammar, _patterns(grammar))
        _parser(grammar)


def _patterns(grammar: str) -> str:
    """The functions, the ``#define`` directives and what makes a class own itself, in one query: tree-sitter
    walks the tree once for all three."""
    return " ".join((_FUNCTIONS[grammar], _DEFINITIONS, _OWNERSHIP[grammar]))


def grammar_for(source: SourceFile | None) -> str:
    return "c" if source is not None and source.path.suffix.lower() == ".c" else "cuda"


@dataclass
class NativeDocument:
    """One parsed C/C++/CUDA file, and the per-file facts every native rule shares (computed once)."""

    text: str
    data: bytes
    tree: tree_sitter.Tree
    grammar: str = "cuda"
    #: Where the file is (None for text without a file): its quoted includes are searched from there.
    path: Path | None = None
    #: Results of shared analyses, keyed by the analysis (so the rules of one family run it once).
    cache: dict = field(default_factory=dict)

    @property
    def root(self) -> Node:
        return self.tree.root_node

    def release(self) -> None:
        """Drop the shared analyses once the rules are done: they refer back to the document, and the cycle would
        keep its tree (tree-sitter's memory, which the collector does not count) alive until a full collection."""
        self.cache.clear()

    @cached_property
    def _line_starts(self) -> list[int]:
        starts = [0]
        index = self.data.find(b"\n")
        while index != -1:
            starts.append(index + 1)
            index = self.data.find(b"\n", index + 1)
        return starts

    def position(self, byte_offset: int) -> Position:
        """1-based line and code-point column of a byte offset."""
        line = bisect.bisect_right(self._line_starts, byte_offset) - 1
        start = self._line_starts[line]
        column = len(self.data[start:byte_offset].decode("utf-8", errors="replace"))
        return Position(line + 1, column + 1)

    def span(self, node: Node) -> tuple[Position, Position]:
        return self.position(node.start_byte), self.position(node.end_byte)

    @cached_property
    def included_macros(self) -> dict[str, MacroDefinition]:
        """The macros of the project headers the file includes (``name -> definition``)."""
        from gemlint.frontends.native_includes import included_macros

        return included_macros(self.path, self.text) if self.path is not None else {}

    def text_of(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


# Tree-sitter's error recovery takes super-linear time on some pathological input (templates nested
# ten thousand deep take minutes), so a parse is cancelled past a deadline far above what real code
# needs: the largest CUTLASS headers (3 MB) parse in about a second.
PARSE_SECONDS = 5.0
PARSE_SECONDS_PER_MB = 2.0
#: What the read callback hands the parser at a time. A tree parsed through a callback reads each node's text
#: through it again, so a chunk is sized for a node's text (one slice for most), not for the parse.
_CHUNK = 1 << 9


def parse_time_limit(size: int) -> float:
    return PARSE_SECONDS + PARSE_SECONDS_PER_MB * size / 1_000_000


#: ``class EXPORT_API Name {``: an export macro between the keyword and the name (which the grammar, knowing
#: no macros, reads as the class name, making the real name a function and the body its statements).
_EXPORT_MACRO = re.compile(rb"\b(?:class|struct)[ \t]+([A-Z][A-Z0-9_]*[A-Z0-9])[ \t]+(?=[A-Za-z_]\w*\s*(?:final\b|[:{]))")


#: ``new T*[n]`` (an array of pointers), which the grammar reads as ``new T`` times a lambda, swallowing the
#: statement that follows; ``new const T*[n]``, whose ``const`` it does not read at all.
_NEW_POINTER_ARRAY = re.compile(rb"(\bnew\s+)(const\s+)?([A-Za-z_][\w:]*(?:\s*<[^;{}()]*?>)?\s*)(\*+)(?=\s*\[)")


#: ``delete[] (p)`` and ``delete[] (T*) p``, which the grammar reads as ``delete`` and a lambda ``[] (...)``, losing
#: the rest of the function and, often, of the class.
_ARRAY_DELETE_OF_PARENTHESES = re.compile(rb"(\bdelete[ \t]*\[[ \t]*\])[ \t](?=[ \t]*\()")


def _for_the_grammar(data: bytes) -> bytes:
    """The source as the grammar can read it, with the same length (offsets and columns stay): export macros
    in class heads, the ``const`` and stars of ``new const T*[n]`` replaced by spaces (``new T [n]`` is the
    same allocation), and a unary ``+`` in the space of ``delete[] (p)`` (the same delete, of ``+(p)``)."""
    if b"new" in data and _NEW_POINTER_ARRAY.search(data):
        data = _NEW_POINTER_ARRAY.sub(lambda m: m.group(1) + _blank(m.group(2)) + m.group(3) + _blank(m.group(4)), data)
    if b"delete" in data and _ARRAY_DELETE_OF_PARENTHESES.search(data):
        data = _ARRAY_DELETE_OF_PARENTHESES.sub(lambda m: m.group(1) + b"+", data)
    if _EXPORT_MACRO.search(data):
        data = _EXPORT_MACRO.sub(lambda m: m.group(0).replace(m.group(1), b" " * len(m.group(1))), data)
    return data


#: ``#define COLOR_GREEN "\x1b[32m"``: an object-like macro whose whole body is one string literal.
_STRING_MACRO = re.compile(rb'^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w+)[ \t]+"(?:[^"\\\n]|\\.)*"[ \t]*(?://[^\n]*)?\r?$', re.MULTILINE)


def _string_macros_as_strings(data: bytes) -> bytes:
    """The source with each use of a string-literal macro of the file that stands in a concatenation
    (``printf(COLOR_GREEN STYLE_BOLD "%s" COLOR_RESET, ...)``) replaced by a string literal of its length: the
    grammar, knowing no macros, reads two names in a row before a string as an error and loses the function."""
    if b"define" not in data:
        return data
    names = {match.group(1) for match in _STRING_MACRO.finditer(data)}
    if not names:
        return data
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(name) for name in sorted(names, key=len, reverse=True)) + rb")\b")
    uses = [use.span() for use in pattern.finditer(data) if not _in_a_directive(data, use.start())]
    starts = {start for start, _ in uses}
    ends = {end for _, end in uses}
    edited = bytearray(data)
    for start, end in uses:
        before = _skip_blanks(data, start - 1, -1)
        after = _skip_blanks(data, end, 1)
        joined = before in ends or after in starts or data[before - 1 : before] == b'"' or data[after : after + 1] == b'"'
        if joined:
            edited[start:end] = b'"' + b" " * (end - start - 2) + b'"'
    return bytes(edited)


def _skip_blanks(data: bytes, index: int, step: int) -> int:
    """From ``index`` in the direction ``step``, the first position that is not a space or tab: going back, the
    end of the token before (an index one past it); going forward, the start of the token after."""
    while 0 <= index < len(data) and data[index] in b" \t":
        index += step
    return index + 1 if step < 0 else index


def _in_a_directive(data: bytes, index: int) -> bool:
    """Whether ``index`` is on a preprocessor line (the macro's own ``#define``, an ``#ifdef``)."""
    line_start = data.rfind(b"\n", 0, index) + 1
    return data[line_start:index].lstrip(b" \t").startswith(b"#")


#: A line that is one use of an all-capitals name and nothing more (a statement macro: ``EXPECT_OK(status)``,
#: ``DISALLOW_COPY_AND_ASSIGN(Engine)``), perhaps followed by a comment.
_MACRO_LINE = re.compile(rb"^[ \t]*[A-Z_][A-Z0-9_]*[ \t]*\((?P<arguments>[^\n]*)\)(?=[ \t]*(?://|/\*|\r?$))", re.MULTILINE)
#: How the code before a statement ends: a statement, a block, a label or access specifier, a condition's `)`.
_STATEMENT_BOUNDARY = re.compile(rb"(?:[;{}:)]|\*/|\belse|\bdo)$")
_LINE_COMMENT = re.compile(rb"//[^\n]*$")


def _blank(text: bytes | None) -> bytes:
    return b" " * len(text) if text else b""


def terminate_statement_macros(data: bytes) -> bytes:
    """``data`` with a ``;`` after each statement macro written without one (a macro that supplies its own,
    or a line its author left unterminated), with the same length: the ``;`` takes the place of the first
    space or tab between the macro's ``)`` and the next token. Such a line otherwise joins the next statement
    into one the grammar cannot read, and the rest of the function with it. Where no space is left to take,
    the line stays as written."""
    return _terminated(data, _statement_macro_ends(data))


def _terminated(data: bytes, spaces: list[int]) -> bytes:
    edited = bytearray(data)
    for space in spaces:
        edited[space] = ord(";")
    return bytes(edited)


def _statement_macro_ends(data: bytes) -> list[int]:
    """Where :func:`terminate_statement_macros` puts each ``;``, in order."""
    ends = []
    for match in _MACRO_LINE.finditer(data):
        if not _balanced(match.group("arguments")) or not _starts_a_statement(data, match.start()):
            continue
        space = _space_before_next_token(data, match.end())
        if space is not None:
            ends.append(space)
    return ends


def _balanced(arguments: bytes) -> bool:
    depth = 0
    for char in arguments:
        depth += {40: 1, 41: -1}.get(char, 0)  # ( and )
        if depth < 0:
            return False
    return depth == 0


def _starts_a_statement(data: bytes, line_start: int) -> bool:
    """The code above the line (past blank and preprocessor lines) ends where a statement or member may begin."""
    end = line_start
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1
        line = _LINE_COMMENT.sub(b"", data[start : end - 1]).strip()
        if line and not line.startswith(b"#"):
            return bool(_STATEMENT_BOUNDARY.search(line))
        end = start
    return False


def _space_before_next_token(data: bytes, index: int) -> int | None:
    """The first space or tab between ``index`` and the next token, outside comments, when that token may begin
    a statement (a name, a keyword, the end of a block, a preprocessor line); None otherwise."""
    space = None
    while index < len(data):
        char = data[index : index + 1]
        if char in (b" ", b"\t"):
            space = index if space is None else space
            index += 1
        elif char in (b"\n", b"\r"):
            index += 1
        elif data.startswith(b"//", index):
            end = data.find(b"\n", index)
            index = len(data) if end == -1 else end
        elif data.startswith(b"/*", index):
            end = data.find(b"*/", index + 2)
            index = len(data) if end == -1 else end + 2
        else:
            starts = char.isalpha() or char == b"_" or char == b"}" or (char == b"#" and data[index - 1 : index] == b"\n")
            return space if starts else None
    return None


def parse(source: SourceFile | None, text: str) -> NativeDocument:
    grammar = grammar_for(source)
    data = text.encode("utf-8", errors="surrogatepass")
    parsed = _string_macros_as_strings(_for_the_grammar(data) if grammar == "cuda" else data)
    limit = parse_time_limit(len(data))
    deadline = time.monotonic() + limit
    try:
        tree, read = _parse_before(grammar, parsed, deadline), parsed
    except (ValueError, RuntimeError) as error:  # cancelled, or input tree-sitter cannot handle
        if time.monotonic() > deadline:
            raise SourceError(f"{TIMED_OUT_PREFIX} {limit:.0f} s (constructs nested too deeply?); not analysed") from None
        raise SourceError(f"cannot parse: {error}") from None
    if tree.root_node.has_error:
        # Statement macros left without `;` are the commonest cause; their terminated reading is kept when
        # the grammar reads it with fewer errors (a line that only looked like one is left as it was).
        ends = _statement_macro_ends(parsed)
        if ends:
            terminated = _terminated(parsed, ends)
            try:
                retried = _parse_before(grammar, terminated, deadline, _edited(tree, parsed, ends))
            except (ValueError, RuntimeError):
                retried = None
            if retried is not None and _error_count(retried.root_node) < _error_count(tree.root_node):
                tree, read = retried, terminated
    if not tree.root_node.has_error:
        # A callback tree reads each node's text back through the callback, a call into Python per chunk. Read
        # again from the bytes, a tree without errors reuses every node (a millisecond where the parse took a
        # tenth of a second), and a node's text is then a slice; one with errors would be parsed again around each.
        tree = _parser(grammar).parse(read, old_tree=tree)
    return NativeDocument(text, data, tree, grammar, path=source.path if source is not None else None)


def _edited(tree: tree_sitter.Tree, data: bytes, spaces: list[int]) -> tree_sitter.Tree:
    """A copy of ``tree`` told that each byte at ``spaces`` was replaced by another: the parse of the edited text
    then reads again only the statements around the edits (a 4 MB header is not parsed twice)."""
    edited = tree.copy()
    row, line_start, scanned = 0, 0, 0
    for space in spaces:
        newlines = data.count(b"\n", scanned, space)
        if newlines:
            row += newlines
            line_start = data.rfind(b"\n", scanned, space) + 1
        scanned = space
        start, end = (row, space - line_start), (row, space - line_start + 1)
        edited.edit(start_byte=space, old_end_byte=space + 1, new_end_byte=space + 1, start_point=start, old_end_point=end, new_end_point=end)
    return edited


def _parse_before(grammar: str, parsed: bytes, deadline: float, old_tree: tree_sitter.Tree | None = None) -> tree_sitter.Tree:
    """``parsed`` read by the grammar, cancelled at ``deadline`` (a ValueError or RuntimeError); ``old_tree`` is
    an earlier reading of the text, told of what has changed since."""
    parser = _parser(grammar)
    try:
        # Only a parse that reads through a callback reports progress (and so can be cancelled).
        read = lambda offset, _point: parsed[offset : offset + _CHUNK]  # noqa: E731
        cancel = lambda _offset, _has_error: time.monotonic() > deadline  # noqa: E731
        tree = parser.parse(read, progress_callback=cancel) if old_tree is None else parser.parse(read, old_tree, progress_callback=cancel)
    except (ValueError, RuntimeError):
        parser.reset()  # else the next parse would resume this one
        raise
    return tree


def _error_count(node: Node) -> int:
    """How many ERROR and missing nodes the tree under ``node`` has."""
    count = 0
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            count += 1
        stack.extend(child for child in current.children if child.has_error or child.is_missing)
    return count


#: A macro body longer than this is not read as statements (real expansions are far shorter).
FRAGMENT_LIMIT = 20_000
_FRAGMENT_HEAD = b"void expansion(void) {\n"


@lru_cache(maxsize=4096)
def parse_statements(text: str) -> Node | None:
    """``text`` read as the statements of a C++ function body (what a macro's use expands to): the block that
    holds them, or None for text too long to be a macro's body."""
    if len(text) > FRAGMENT_LIMIT:
        return None
    # The `;` the use supplies (`FREE(p);`): without it an expression body reads as an initializer.
    tree = _parser("cuda").parse(_FRAGMENT_HEAD + text.encode("utf-8", errors="surrogatepass") + b";\n}\n")
    function = tree.root_node.named_children[0] if tree.root_node.named_children else None
    return function.child_by_field_name("body") if function is not None else None


def walk(node: Node, *, skip: frozenset[str] = frozenset()) -> Iterator[Node]:
    """Named descendants of ``node`` in source order, iteratively; subtrees whose type is in ``skip`` are not entered."""
    stack = list(reversed(node.named_children))
    while stack:
        current = stack.pop()
        yield current
        if current.type not in skip:
            stack.extend(reversed(current.named_children))


def function_nodes(document: NativeDocument) -> list[Node]:
    """Every function definition and lambda of the file, in source order (found by tree-sitter, not a Python walk)."""
    cached = document.cache.get("functions")
    if cached is None:
        cached = [node for node in _captured(document, "unit") if not in_disabled_block(node)]
        document.cache["functions"] = cached
    return cached


def ownership_nodes(document: NativeDocument) -> list[Node]:
    """Every class and struct definition and every ``delete`` expression of the file, in source order (found by
    tree-sitter: a Python walk of a 4 MB single-header library visits half a million nodes)."""
    return _captured(document, "node")


def definition_nodes(document: NativeDocument) -> list[Node]:
    """Every ``#define`` of the file, wherever it is written (at file scope, in a class, in a function body),
    in source order."""
    return _captured(document, "definition")


def _captured(document: NativeDocument, name: str) -> list[Node]:
    """The nodes the file's query (:func:`_patterns`) captures as ``name``, in source order."""
    captured = document.cache.get("captures")
    if captured is None:
        found = tree_sitter.QueryCursor(_query(document.grammar, _patterns(document.grammar))).captures(document.root)
        captured = document.cache["captures"] = {key: sorted(nodes, key=lambda node: node.start_byte) for key, nodes in found.items()}
    return list(captured.get(name, ()))


def in_disabled_block(node: Node) -> bool:
    """``node`` lies in the body of an ``#if 0`` (code switched off, never compiled), not in its ``#else``."""
    child, parent = node, node.parent
    while parent is not None:
        if parent.type == "preproc_if" and child != parent.child_by_field_name("alternative") and is_disabled_condition(parent):
            return True
        child, parent = parent, parent.parent
    return False


#: `#if 0 && NV_TENSORRT_MAJOR >= 10`: a conjunction whose first term is false is false.
_FALSE_CONJUNCTION = re.compile(r"(?:0|false|\(0\))\s*&&")


def is_disabled_condition(node: Node) -> bool:
    condition = node.child_by_field_name("condition")
    text = condition.text.decode("utf-8", "replace").strip() if condition is not None and condition.text is not None else ""
    return text in ("0", "false", "(0)") or _FALSE_CONJUNCTION.match(text) is not None
