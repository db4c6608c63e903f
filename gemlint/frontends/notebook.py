"""Jupyter notebooks (``.ipynb``) as one Python module, the way ruff reads them.

The code cells, in order, are joined into one module: a notebook's kernel runs them in one namespace,
so a model built in one cell and run in another is one program. IPython's own syntax (line magics
``%time x``, shell escapes ``!pip install``, ``x = !ls``, help ``obj?``) becomes a ``pass`` statement on
the same line, so line numbers hold and indented blocks stay valid; a cell that a magic hands to
another interpreter (``%%bash``, ``%%writefile``) is not Python and is left out. Between two cells the
module has a boundary comment line: findings and fixes never land on it, and it tells which cell a
line inserted by a fix belongs to (text inserted at the end of a cell stays in that cell, text
inserted before a cell's first line goes into that cell).

The notebook's JSON is read with the standard library; where each cell's ``source`` sits in the file
is found by walking the text with the same decoder, so that a fix rewrites only the ``source`` of the
cells it changed and every other byte of the file (outputs, execution counts, metadata, key order,
indentation) stays as it was.
"""

from __future__ import annotations

import ast
import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from json.decoder import scanstring

from gemlint.diagnostics import CellSpan
from gemlint.text import SourceError, detect_newline, line_offsets, split_lines

#: The line between two cells in the module (a comment: Python ignores it, and a `# %%` line is how
#: editors mark cells in a Python file).
CELL_BOUNDARY = "# %% (gemlint: the next notebook cell starts below)\n"

#: Cell magics whose body is Python that IPython runs (ruff's list): their first line is neutralised,
#: the rest of the cell is linted. Any other cell magic hands the cell to something else.
PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "prun", "pypy", "python", "python3", "time", "timeit"})
#: IPython's line magics and shell aliases: with automagic (on by default), a one-line cell such as
#: `cd data/` or `pip install torch` runs one without its `%`.
LINE_MAGICS = frozenset(
    "alias alias_magic autoawait autocall automagic autoreload autosave bookmark cat cd clear colors conda config "
    "debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk ll load load_ext loadpy "
    "logoff logon logstart logstate logstop ls lsmagic lx macro magic man matplotlib mkdir more mv notebook page "
    "pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat pylab "
    "recall rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env store sx system tb time "
    "timeit unalias unload_ext who who_ls whos xdel xmode".split()
)

_CELL_MAGIC = re.compile(r"\s*%%(\w*)")
#: The first line IPython's ``%load`` leaves in the cell whose content it replaced with a file's.
_LOADED = re.compile(r"#\s*%load\s+(\S+)")
_AUTOMAGIC = re.compile(r"\s*(\w+)\s+\S")
# At the start of a statement these never begin Python: magics, shell escapes, help, autocall escapes.
_ESCAPE = re.compile(r"\s*[!%?/,;]")
# `x = !ls`, `files = %sx ls`, `a, b = %time f()`, `env["KEY"], = !cmd`: an assignment of what IPython's escape
# returns. IPython takes the line's first `=` outside brackets and strings as the assignment, whatever the targets
# before it are (:func:`_escape_assignment`).
_ESCAPE_ASSIGNMENT = re.compile(r"=\s*[!%]")
_OPENING, _CLOSING = "([{", ")]}"
# `obj?`, `obj.method??`, `np.*load*?`: help on a name.
_HELP = re.compile(r"\s*[\w.*\[\]()]+\?\??\s*$")
#: What an IPython line becomes: a statement (an indented block stays valid), and the original as a comment.
_PLACEHOLDER = "pass  # "
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class CellsChanged(Exception):
    """Fixed code that no longer splits into the notebook's cells (a fix crossed or removed a boundary, or
    changed a neutralised magic line); the message says which."""


@dataclass(frozen=True)
class CodeCell:
    """One code cell that holds Python, and where its ``source`` is in the notebook's JSON text."""

    index: int  # 0-based, among all the notebook's cells (markdown and raw ones count)
    source: str  # as written
    #: The source as the module holds it: as IPython reads it (a cell indented as a whole dedented), each
    #: IPython line replaced by a `pass` line of the same indentation.
    python: str
    #: (the ``pass`` line in :attr:`python`, the line it stands for) of each neutralised line, in order; both
    #: without their line endings, and without :attr:`dedent`.
    magics: tuple[tuple[str, str], ...]
    #: The indentation IPython takes off the lines that start with it, in a cell whose first line is indented
    #: (empty: none).
    dedent: str
    as_list: bool  # the source is a JSON list of lines (nbformat's way), not one string
    value: tuple[int, int]  # the ``source`` value's span in the JSON text
    #: (offset in ``source``, offset of the string literal's opening quote in the JSON text) per string literal.
    pieces: tuple[tuple[int, int], ...]

    @property
    def number(self) -> int:
        """The cell's number as reports show it: 1-based, counting every cell of the notebook."""
        return self.index + 1

    @cached_property
    def lines(self) -> list[str]:
        """The cell's lines as written, without line endings; an empty last line when the source ends with one."""
        lines = [line.rstrip("\r\n") for line in split_lines(self.source)]
        if not lines or self.source.endswith(("\n", "\r")):
            lines.append("")
        return lines

    @cached_property
    def line_starts(self) -> list[int]:
        """The offset in :attr:`source` of each of :attr:`lines`."""
        return line_offsets(self.source)


@dataclass(frozen=True)
class Notebook:
    text: str  # the notebook's JSON text
    cells: tuple[CodeCell, ...]  # the code cells that hold Python, in order
    #: Whether the notebook's kernel runs Python (a notebook in R or Julia holds no Python at all).
    python: bool

    @cached_property
    def code(self) -> str:
        """The module: each cell's Python and a newline, with a boundary line between two cells."""
        return CELL_BOUNDARY.join(cell.python + "\n" for cell in self.cells)

    @cached_property
    def _rows(self) -> list[tuple[int, int]]:
        """(position in ``cells``, 1-based line in the cell; 0 on a boundary line) of each module line."""
        rows = []
        for position, cell in enumerate(self.cells):
            if position:
                rows.append((position - 1, 0))
            rows.extend((position, line) for line in range(1, len(split_lines(cell.python + "\n")) + 1))
        return rows

    def first_line(self, cell: CodeCell) -> int:
        """The module line of the cell's first line."""
        return self._rows.index((self.cells.index(cell), 1)) + 1

    def locate(self, line: int, column: int, end_line: int, end_column: int) -> CellSpan:
        """A module span as a notebook reader sees it: its cell and lines in the cell, and the same span in the
        JSON text. A span that runs into the next cell is cut at the end of its own."""
        position, cell_line, cell_column = self._place(line, column)
        end_position, cell_end_line, cell_end_column = self._place(end_line, end_column)
        cell = self.cells[position]
        if end_position != position:
            cell_end_line = len(cell.lines)
            cell_end_column = len(cell.lines[-1]) + 1
        file_line, file_column = self._file_position(cell, cell_line, cell_column)
        file_end_line, file_end_column = self._file_position(cell, cell_end_line, cell_end_column)
        return CellSpan(
            cell.number, cell_line, cell_column, cell_end_line, cell_end_column, file_line, file_column, file_end_line, file_end_column
        )

    def _place(self, line: int, column: int) -> tuple[int, int, int]:
        position, cell_line = self._rows[min(max(line, 1), len(self._rows)) - 1]
        lines = self.cells[position].lines
        if cell_line == 0:  # a boundary line: the end of the cell above
            return position, len(lines), len(lines[-1]) + 1
        cell_line = min(cell_line, len(lines))
        text = lines[cell_line - 1]
        dedent = self.cells[position].dedent
        shift = len(dedent) if text and text.startswith(dedent) else 0  # the indentation IPython took off the line
        return position, cell_line, min(max(column, 1) + shift, len(text) + 1)

    def _file_position(self, cell: CodeCell, line: int, column: int) -> tuple[int, int]:
        """The 1-based line and column in the JSON text of a position in the cell."""
        if not cell.pieces:  # an empty list of lines: its opening bracket
            return self._text_position(cell.value[0])
        offset = min(cell.line_starts[line - 1] + column - 1, len(cell.source))
        starts = [start for start, _ in cell.pieces]
        piece = max(bisect_right(starts, offset) - 1, 0)
        start, quote = cell.pieces[piece]
        return self._text_position(quote + 1 + _raw_length(self.text, quote + 1, offset - start))

    def _text_position(self, offset: int) -> tuple[int, int]:
        starts = self._line_starts
        line = bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    @cached_property
    def _line_starts(self) -> list[int]:
        return line_offsets(self.text)

    # -- cells that do not parse -----------------------------------------------------------------
    def without(self, cells: list[CodeCell]) -> str:
        """The module with ``cells`` emptied, line for line (so the other cells' positions hold)."""
        if not cells:
            return self.code
        dropped = {self.cells.index(cell) for cell in cells}
        lines = split_lines(self.code)
        return "".join(
            "\n" if cell_line and position in dropped else text for text, (position, cell_line) in zip(lines, self._rows)
        )

    # -- writing fixes back ------------------------------------------------------------------------
    def split(self, code: str) -> list[str]:
        """Each cell's Python in ``code`` (the module after fixes), as :attr:`CodeCell.python` holds it."""
        parts = (code[:-1] if code.endswith("\n") else code).split("\n" + CELL_BOUNDARY) if code else []
        if len(parts) != len(self.cells):
            raise CellsChanged("a fix would have moved code across notebook cells")
        return parts

    def rewritten(self, code: str) -> str:
        """The notebook's JSON text with the cells' sources taken from ``code``; nothing else changes."""
        replacements = []
        for cell, python in zip(self.cells, self.split(code)):
            if python == cell.python:
                continue
            replacements.append((cell.value, self._source_json(cell, _indented(cell, _restore_magics(cell, python)))))
        text = self.text
        for (start, end), value in sorted(replacements, reverse=True):
            text = text[:start] + value + text[end:]
        return text

    def _source_json(self, cell: CodeCell, source: str) -> str:
        """``source`` written as the cell's source was: one string, or a list of lines laid out as before."""
        ascii_only = self.text.isascii() and "\\u" in self.text  # the file escapes what is not ASCII
        if not cell.as_list:
            return json.dumps(source, ensure_ascii=ascii_only)
        lines = split_lines(source)
        start, end = cell.value
        if "\n" not in self.text[start:end] or not lines:  # written on one line (or empty): stays so
            return json.dumps(lines, ensure_ascii=ascii_only)
        newline = detect_newline(self.text)
        closing = self._indentation_before(end - 1)
        if cell.pieces:
            items = self._indentation_before(cell.pieces[0][1])
        else:
            items = closing + self._indent_unit
        body = ("," + newline).join(items + json.dumps(line, ensure_ascii=ascii_only) for line in lines)
        return "[" + newline + body + newline + closing + "]"

    def _indentation_before(self, offset: int) -> str:
        """The whitespace between the start of the line holding ``offset`` and ``offset`` (empty if not only whitespace)."""
        line_start = self._line_starts[bisect_right(self._line_starts, offset) - 1]
        prefix = self.text[line_start:offset]
        return prefix if not prefix.strip() else ""

    @cached_property
    def _indent_unit(self) -> str:
        """One level of the file's indentation (nbformat writes one space), read from its first indented line."""
        match = re.search(r"\n([ \t]+)\S", self.text)
        return match.group(1) if match else " "


def _raw_length(text: str, start: int, decoded: int) -> int:
    """How many characters of the JSON string body at ``start`` decode to its first ``decoded`` characters."""
    index = start
    for _ in range(decoded):
        if text[index] != "\\":
            index += 1
        elif text[index + 1] != "u":
            index += 2
        elif _surrogate_pair(text, index):
            index += 12  # one character once decoded
        else:
            index += 6
    return index - start


def _surrogate_pair(text: str, index: int) -> bool:
    """Whether the ``\\u`` escape at ``index`` and the one after it are a surrogate pair (which JSON decodes as one character)."""
    if text[index + 6 : index + 8] != "\\u":
        return False
    high, low = int(text[index + 2 : index + 6], 16), text[index + 8 : index + 12]
    return 0xD800 <= high < 0xDC00 and all(c in "0123456789abcdefABCDEF" for c in low) and 0xDC00 <= int(low, 16) < 0xE000


def _indented(cell: CodeCell, text: str) -> str:
    """``text`` with the cell's indentation put back on every line with text (as :func:`_neutralised` took it off)."""
    if not cell.dedent:
        return text
    if any(line.strip() and not line.startswith(cell.dedent) for line in cell.lines):
        # Which fixed lines carried the indentation is not known once a fix has changed them.
        raise CellsChanged(f"a fix would change cell {cell.number}, whose lines IPython dedents only in part")
    return "".join(cell.dedent + line if line.rstrip("\r\n") else line for line in split_lines(text))


def _restore_magics(cell: CodeCell, python: str) -> str:
    """``python`` with each neutralised line turned back into the IPython line it stood for."""
    lines = split_lines(python)
    index = 0
    for placeholder, original in cell.magics:
        while index < len(lines) and lines[index].rstrip("\r\n") != placeholder:
            index += 1
        if index == len(lines):
            raise CellsChanged(f"a fix would have changed an IPython line of cell {cell.number}")
        lines[index] = original + lines[index][len(placeholder) :]
        index += 1
    return "".join(lines)


# -- Jupytext ----------------------------------------------------------------------------------------

#: Jupytext keeps a notebook as a ``.py`` file whose header is the notebook's metadata, a YAML block in comments
#: (``# ---`` ... ``#   jupytext:`` ... ``# ---``), below an optional shebang or encoding line.
_JUPYTEXT_HEADER = re.compile(r"(?:#!.*\n)?(?:#.*coding[:=].*\n)?# ---[ \t]*\r?\n(?:#(?! ---).*\r?\n){0,40}?#\s+jupytext:")
#: Where a cell of Jupytext's percent format starts (``# %%``, ``# %% [markdown]``).
_PERCENT_CELL = re.compile(r"#\s*%%")
#: Such a marker at the start of some line of a ``.py`` file (Jupytext's, VS Code's and Spyder's cells).
_PERCENT_CELL_LINE = re.compile(r"^#\s*%%", re.MULTILINE)


def has_percent_cells(text: str) -> bool:
    """``text`` is a ``.py`` file split into cells by ``# %%`` markers: its code runs cell by cell, as a notebook's."""
    return _PERCENT_CELL_LINE.search(text) is not None


def jupytext_python(text: str) -> str | None:
    """A notebook kept as a ``.py`` file by Jupytext, as IPython runs it: in each cell, the IPython lines (``!pip
    install``, ``%cd``) neutralised as in a notebook's cells, line for line, and a cell that a cell magic hands to
    another interpreter commented out. None for any other file, and for one without IPython syntax (its text is
    already the Python)."""
    if not _JUPYTEXT_HEADER.match(text):
        return None
    cells: list[list[str]] = [[]]
    for line in split_lines(text):
        if _PERCENT_CELL.match(line) and cells[-1]:
            cells.append([])
        cells[-1].append(line)
    python = []
    for lines in cells:
        source = "".join(lines)
        neutralised = _neutralised(source)
        if neutralised is None:
            python.append("".join(f"# {line}" if line.strip() else line for line in lines))
        else:
            # A cell indented as a whole is left as it is: its lines would move.
            python.append(source if neutralised[2] else neutralised[0])
    result = "".join(python)
    return result if result != text else None


# -- reading -----------------------------------------------------------------------------------------


def read_notebook(text: str) -> Notebook:
    """The notebook in ``text``; raises :class:`SourceError` (GEM000) for text that is not a notebook of
    format 4 (the format every Jupyter since 2015 writes). An empty file is an empty notebook, as editors open it
    (a placeholder committed before anything was written in it): nothing to check."""
    if not text.strip():
        return Notebook(text, (), True)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SourceError(f"not valid JSON, so not a Jupyter notebook: {error.msg}", error.lineno, error.colno) from None
    except RecursionError:
        raise SourceError("the notebook's JSON is nested too deeply to read") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise SourceError("not a Jupyter notebook: the JSON has no list of cells")
    if data.get("nbformat", 4) != 4:
        raise SourceError(f"a notebook of format {data.get('nbformat')!r}; only format 4 is read (open and save it in Jupyter to convert it)")
    metadata = data.get("metadata")
    python = _runs_python(metadata if isinstance(metadata, dict) else {})
    spans = _source_spans(text)
    cells = []
    for index, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        if index not in spans:
            continue  # a code cell without a source holds nothing to check
        source = cell["source"]
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            joined = "".join(source)
        elif isinstance(source, str):
            joined = source
        else:
            raise SourceError(f"cell {index + 1}: its source is neither text nor a list of lines")
        value, pieces = spans[index]
        neutralised = _neutralised(joined)
        if neutralised is None:
            continue  # a cell magic hands the cell to another interpreter
        python_text, magics, dedent = neutralised
        cells.append(CodeCell(index, joined, python_text, magics, dedent, isinstance(source, list), value, pieces))
    return Notebook(text, tuple(cells), python)


def _runs_python(metadata: dict) -> bool:
    """A notebook's language, from ``language_info`` (what the kernel reported) or ``kernelspec``; Python when
    neither says."""
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field), str):
            return section[field].lower() == "python"
    return True


def _neutralised(source: str) -> tuple[str, tuple[tuple[str, str], ...], str] | None:
    """The cell's Python as IPython reads it: a cell indented as a whole dedented, and each line of IPython
    syntax that starts a statement replaced by a ``pass`` line; with the neutralised lines and the indentation
    taken off. None for a cell whose cell magic is not one that runs Python."""
    lines = split_lines(source)
    # The cell magic's line, below blank lines and comments (Colab's `#@title` form lines go above it).
    first = next((line for line in lines if line.strip() and not line.lstrip().startswith("#")), "")
    magic = _CELL_MAGIC.match(first)
    if magic is not None and magic.group(1) not in PYTHON_CELL_MAGICS:
        return None
    loaded = _LOADED.match(lines[0]) if lines else None
    if loaded is not None and not loaded.group(1).rstrip().endswith((".py", ".ipy")):
        return None  # `%load requirements.txt` ran: the cell shows that file's text, which is not Python
    dedent = _leading_indentation(lines)
    if dedent:
        lines = [line[len(dedent) :] if line.rstrip("\r\n") and line.startswith(dedent) else line for line in lines]
    automagic = _automagic(lines)
    out, magics = [], []
    scanner = _StatementScanner()
    continued_escape = False
    indent = ""
    for line in lines:
        body = line.rstrip("\r\n")
        if continued_escape or (scanner.at_statement_start and (_is_ipython(body) or body == automagic)):
            if not continued_escape:  # a continuation line is placed where the line it continues starts
                indent = body[: len(body) - len(body.lstrip())]
            placeholder = f"{indent}{_PLACEHOLDER}{body.strip()}"
            out.append(placeholder + line[len(body) :])
            magics.append((placeholder, body))
            continued_escape = body.endswith("\\")  # a shell or magic line continued on the next
            continue
        scanner.feed(body)
        out.append(line)
    return "".join(out), tuple(magics), dedent


def _leading_indentation(lines: list[str]) -> str:
    """The indentation of the cell's first line (blank lines above it aside), which IPython takes off every line
    that starts with it (IPython 8's ``leading_indent``): a cell indented as a whole, and a cell whose first line
    alone carries a stray space, run. (IPython 9 takes off only what every line shares, and fails on the second
    kind; the notebooks that hold one ran where they were written.) Empty when the first line is not indented."""
    first = next((line for line in lines if line.strip()), "")
    return first[: len(first) - len(first.lstrip())]


def _automagic(lines: list[str]) -> str | None:
    """The line of a one-line cell that calls a line magic without its `%` (IPython's automagic applies to
    one-line cells only), such as `cd data/`; only where the line is not Python."""
    written = [line.rstrip("\r\n") for line in lines if line.strip()]
    if len(written) != 1:
        return None
    match = _AUTOMAGIC.match(written[0])
    if match is None or match.group(1) not in LINE_MAGICS:
        return None
    try:
        ast.parse(written[0].strip())
    except SyntaxError:
        return written[0]
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def _is_ipython(line: str) -> bool:
    """A line of IPython syntax, for a line that starts a statement (a cell magic's line starts with ``%`` too)."""
    if not line.strip() or line.lstrip().startswith("#"):
        return False
    return bool(_ESCAPE.match(line) or _escape_assignment(line) or _HELP.match(line))


def _escape_assignment(line: str) -> bool:
    """``line`` assigns what an IPython escape returns: its first ``=`` outside brackets and strings (not one of
    ``==``, ``!=``, ``<=``, ``>=``, ``:=`` or an augmented assignment), with targets before it, is followed by ``!``
    or ``%``."""
    depth, quote, index = 0, "", 0
    while index < len(line):
        char = line[index]
        if quote:
            if char == "\\":
                index += 1
            elif line.startswith(quote, index):
                index += len(quote) - 1
                quote = ""
        elif char in "'\"":
            quote = line[index : index + 3] if line.startswith(char * 3, index) else char
            index += len(quote) - 1
        elif char == "#":
            return False
        elif char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            depth -= 1
        elif char == "=" and depth == 0:
            if line.startswith("==", index) or (index and line[index - 1] in "=!<>:+-*/%&|^@"):
                index += 2 if line.startswith("==", index) else 1
                continue
            return bool(line[:index].strip()) and _ESCAPE_ASSIGNMENT.match(line, index) is not None
        index += 1
    return False


class _StatementScanner:
    """Follows brackets, strings and backslash continuations line by line, to tell whether the next line starts
    a statement (only there can IPython syntax be; a line inside a string or a call is Python's)."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None
        self.continued = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        index = 0
        comment = False
        while index < len(line):
            char = line[index]
            if self.quote is not None:
                if char == "\\":
                    index += 2
                    continue
                if line.startswith(self.quote, index):
                    index += len(self.quote)
                    self.quote = None
                    continue
                index += 1
                continue
            if char == "#":
                comment = True
                break
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(self.depth - 1, 0)
            elif char in "'\"":
                triple = line[index : index + 3]
                self.quote = triple if triple in ('"""', "'''") else char
                index += len(self.quote)
                continue
            index += 1
        self.continued = line.endswith("\\") and self.quote is None and not comment
        if self.quote in ("'", '"') and not line.endswith("\\"):
            self.quote = None  # a one-line string ends with its line (unterminated, it is a syntax error anyway)


def _source_spans(text: str) -> dict[int, tuple[tuple[int, int], tuple[tuple[int, int], ...]]]:
    """For each cell (by index) that has a ``source``: the value's span in ``text``, and (offset in the joined
    source, offset of the opening quote) of each of its string literals. ``text`` is valid JSON."""
    spans = {}
    start = _skip(text, 0)
    for key, cells_start, _ in _members(text, start):
        if key != "cells" or text[cells_start] != "[":
            continue
        spans.clear()  # a repeated key: the last one is the notebook's, as json.loads reads it
        for index, (cell_start, _) in enumerate(_elements(text, cells_start)):
            if text[cell_start] != "{":
                continue
            for name, value_start, value_end in _members(text, cell_start):
                if name == "source":
                    spans[index] = ((value_start, value_end), _literals(text, value_start))
    return spans


def _literals(text: str, start: int) -> tuple[tuple[int, int], ...]:
    if text[start] == '"':
        return ((0, start),)
    if text[start] != "[":
        return ()
    pieces, offset = [], 0
    for element_start, _ in _elements(text, start):
        if text[element_start] != '"':
            return ()
        value, _ = scanstring(text, element_start + 1)
        pieces.append((offset, element_start))
        offset += len(value)
    return tuple(pieces)


def _skip(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()


def _members(text: str, start: int):
    """(key, value start, value end) of each member of the object whose ``{`` is at ``start``."""
    index = _skip(text, start + 1)
    if text[index] == "}":
        return
    while True:
        key, index = scanstring(text, index + 1)
        index = _skip(text, _skip(text, index) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, index)
        yield key, index, end
        index = _skip(text, end)
        if text[index] == "}":
            return
        index = _skip(text, index + 1)


def _elements(text: str, start: int):
    """(start, end) of each element of the array whose ``[`` is at ``start``."""
    index = _skip(text, start + 1)
    if text[index] == "]":
        return
    while True:
        _, end = _DECODER.raw_decode(text, index)
        yield index, end
        index = _skip(text, end)
        if text[index] == "]":
            return
        index = _skip(text, index + 1)
