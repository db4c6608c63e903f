"""Large literals: generated tables (a pinyin dictionary, a vocabulary) bound at a module's top level.

CPython's parser reads a module whose statement is one dict display of 35,000 lines (1.6 MB) in hundreds of MiB
(310 MiB for ``ast.parse``, 254 MiB for ``compile``), while its tokens stream in a few MiB. Such a value holds
nothing the project index or a rule reads (no call, no name), only the name it is bound to. A module of a megabyte or
more has each top-level ``NAME = <literal>`` statement of 64 KB or more (strings, numbers, ``True``/``False``/``None``
and displays of them) read from its tokens, and its value replaced by ``None`` on the same lines before it is parsed:
the tree keeps every other statement, every line number and the binding.
"""

from __future__ import annotations

import io
import keyword
import tokenize

#: From this size on, a module is checked for large literals before it is parsed.
LARGE_MODULE_BYTES = 1 << 20
#: A literal this large (in characters) is not parsed.
LARGE_LITERAL_CHARACTERS = 1 << 16

_SKIPPED = frozenset({tokenize.ENCODING, tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT})
_LITERAL_OPERATORS = frozenset({"{", "}", "[", "]", "(", ")", ",", ":", "-", "+"})
_LITERAL_NAMES = frozenset({"True", "False", "None"})


def without_large_literals(data: bytes) -> str | None:
    """The text of ``data`` with the value of each large top-level literal binding replaced by ``None`` (see the
    module's docstring); None when it holds none, or does not tokenize (the parser then reports what is wrong)."""
    spans: list[tuple[tuple[int, int], tuple[int, int]]] = []
    encoding = "utf-8"
    # Per statement: "start", "target" after a top-level name, "value" after its `=`, "literal" while every token is
    # a literal's, "other" for any other statement.
    phase, start, end, size = "start", (0, 0), (0, 0), 0
    try:
        for token in tokenize.tokenize(io.BytesIO(data).readline):
            kind, text = token.type, token.string
            if kind == tokenize.ENCODING:
                encoding = text
            if kind in _SKIPPED:
                continue
            if kind == tokenize.NEWLINE:
                if phase == "literal" and size >= LARGE_LITERAL_CHARACTERS:
                    spans.append((start, end))
                phase = "start"
            elif phase == "start":
                indented = token.start[1] > 0
                phase = "target" if kind == tokenize.NAME and not keyword.iskeyword(text) and not indented else "other"
            elif phase == "target":
                phase = "value" if kind == tokenize.OP and text == "=" else "other"
            elif phase in ("value", "literal"):
                if not _literal_token(kind, text):
                    phase = "other"
                    continue
                if phase == "value":
                    start, size = token.start, 0
                    phase = "literal"
                end = token.end
                size += len(text)
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return None
    if not spans:
        return None
    lines = data.decode(encoding).splitlines(keepends=True)
    for (first, column), (last, end_column) in reversed(spans):
        lines[first - 1 : last] = [
            lines[first - 1][:column] + "None" + lines[last - 1][end_column:],
            *("\n" for _ in range(last - first)),
        ]
    return "".join(lines)


def _literal_token(kind: int, text: str) -> bool:
    if kind == tokenize.STRING:
        return not _formatted(text)
    if kind == tokenize.NUMBER:
        return True
    if kind == tokenize.OP:
        return text in _LITERAL_OPERATORS
    return kind == tokenize.NAME and text in _LITERAL_NAMES


def _formatted(text: str) -> bool:
    """An f-string (``f"..."``, ``rf'...'``): it computes, it is no literal."""
    prefix = text[: len(text) - len(text.lstrip("rRbBuUfF"))]
    return "f" in prefix.lower()
