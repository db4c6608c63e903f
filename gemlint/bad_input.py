"""GEM000 findings: input that cannot be read or parsed, and a rule that crashed on a file. Also the cheap
``ast`` check that decides whether a Python file may be handed to LibCST at all."""

from __future__ import annotations

import ast
import re
import traceback
from typing import TYPE_CHECKING

from gemlint.diagnostics import Diagnostic, Severity
from gemlint.discovery import SourceFile
from gemlint.lint_notes import note
from gemlint.registry import parse_error_rule

if TYPE_CHECKING:
    from gemlint.rule import Rule

#: Starts the message of a GEM000 reported because a rule crashed (not because the input was bad).
INTERNAL_ERROR_PREFIX = "internal error in "
# LibCST's native parser overflows its stack (a segfault) on brackets nested a few
# thousand deep and slows down quadratically on very long operator chains; CPython
# itself refuses more than 200 nested brackets. Such files are reported, never parsed.
MAX_BRACKET_DEPTH = 200


def parse_error(source: SourceFile, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    return input_error(source.display, message, line, column)


def input_error(display: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    """A GEM000 on ``display`` (a file, or a folder that could not be listed)."""
    rule = parse_error_rule()
    return Diagnostic(
        code=rule.code,
        name=rule.name,
        severity=Severity.ERROR,
        path=display,
        line=max(line, 1),
        column=max(column, 1),
        end_line=max(line, 1),
        end_column=max(column, 1),
        message=message,
    )


def internal_error(source: SourceFile, rule: type[Rule], error: Exception) -> Diagnostic:
    where = traceback.extract_tb(error.__traceback__)[-1]
    return parse_error(
        source,
        f"{INTERNAL_ERROR_PREFIX}{rule.code} ({type(error).__name__}: {error} at "
        f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}); please report it",
    )


def python_gate(source: SourceFile, text: str) -> tuple[Diagnostic | None, ast.Module | None]:
    """Check with ``ast`` (about a tenth of LibCST's cost) whether LibCST may parse the file.

    Returns a GEM000 diagnostic when the file cannot be parsed at all, and the ``ast`` tree when
    ``ast`` accepted the file.
    """
    try:
        return None, ast.parse(text)
    except SyntaxError as error:
        if "too many nested" in (error.msg or "") or _bracket_depth(text) > MAX_BRACKET_DEPTH:
            return parse_error(source, "brackets are nested too deeply to parse", error.lineno or 1), None
        return None, None  # perhaps newer grammar than this interpreter's: LibCST decides
    except (RecursionError, MemoryError):
        return parse_error(source, "the file is nested too deeply to parse"), None
    except ValueError as error:
        return parse_error(source, f"cannot parse: {error}"), None


#: The interpreter's messages for statements only Python 2 has that LibCST's parser rejects too (`print x`,
#: `exec code`); `except E, e:` is not among them, as LibCST parses it (Python 3.14's unparenthesised `except`).
PYTHON2_STATEMENTS = ("Missing parentheses in call to 'print'", "Missing parentheses in call to 'exec'")


def python2_note(error: SyntaxError) -> str:
    """The note for a file ``ast`` rejected at a statement only Python 2 has: another language's, not broken."""
    return f"Python 2, not checked: {(error.msg or '').partition('.')[0]} (line {error.lineno})"


def python2_script(text: str) -> bool:
    """``ast`` rejects ``text`` at a ``print`` or ``exec`` statement, which LibCST's parser rejects as well: the
    file is noted as Python 2 and not checked, without importing LibCST to ask it (a third of a second for a run
    whose only Python files are a few old scripts)."""
    try:
        ast.parse(text)
    except SyntaxError as error:
        if (error.msg or "").startswith(PYTHON2_STATEMENTS):
            note(python2_note(error))
            return True
    except (RecursionError, MemoryError, ValueError):
        pass
    return False


def _bracket_depth(text: str) -> int:
    depth = deepest = 0
    for match in _BRACKETS.finditer(text):
        depth = depth + 1 if match.group() in "([{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


_BRACKETS = re.compile(r"[()\[\]{}]")
