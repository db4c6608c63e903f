"""Stable identities for findings, shared by SARIF ``partialFingerprints`` and ``--baseline``.

A fingerprint hashes the rule code, the file's repository-relative path and the
reported source line with all whitespace removed, plus the finding's occurrence
number among findings with the same hash in the file. It never includes a line
number, so it survives edits above or below the finding and re-indentation, and
changes when the flagged line itself changes or the file moves. In a notebook the line is
the code line of its cell (findings' lines are those of the module the code cells make), so
a change of outputs or execution counts changes no fingerprint.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Iterable

from gemlint.diagnostics import Diagnostic
from gemlint.frontends.notebook import read_notebook
from gemlint.languages import Language, language_of
from gemlint.repository import repository_path
from gemlint.text import SourceError, decoder_for, read_regular_file, split_lines

#: The key under SARIF ``partialFingerprints`` (SARIF wants versioned names, §3.27.17). Change the
#: version whenever the computation changes, so that old baselines stop matching instead of matching wrongly.
FINGERPRINT_KEY = "gemlint/v1"

_WHITESPACE = re.compile(r"\s+")


def normalized_line(lines: list[str], line: int) -> str:
    if not 1 <= line <= len(lines):
        return ""
    return _WHITESPACE.sub("", lines[line - 1])


def source_lines(path: str) -> list[str]:
    """The file's lines decoded as the engine decodes them (a notebook's: the module of its code cells); empty
    when it cannot be read."""
    try:
        data = read_regular_file(path)  # never a FIFO or device, whose reading could block forever
    except SourceError:
        return []
    language = language_of(Path(path))
    try:
        text = decoder_for(language)(data).text
    except SourceError:
        text = data.decode("utf-8", errors="replace")
    if language is Language.NOTEBOOK:
        try:
            text = read_notebook(text).code
        except SourceError:
            pass  # not a notebook: its GEM000 is placed in the file's own text
    return split_lines(text)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", errors="surrogatepass")).hexdigest()[:32]


def fingerprint_diagnostics(diagnostics: Iterable[Diagnostic], root: Path) -> dict[Diagnostic, str]:
    """A fingerprint for each diagnostic. Files are read once each; ``root`` anchors the paths."""
    by_path: dict[str, list[Diagnostic]] = defaultdict(list)
    for diagnostic in diagnostics:
        by_path[diagnostic.path].append(diagnostic)
    result: dict[Diagnostic, str] = {}
    for path, found in by_path.items():
        lines = source_lines(path)
        anchored = repository_path(path, root) or Path(os.path.abspath(path)).as_posix()
        seen: dict[str, int] = defaultdict(int)
        for diagnostic in sorted(found, key=lambda d: (d.line, d.column, d.end_line, d.end_column, d.code, d.message)):
            digest = _digest(diagnostic.code, anchored, normalized_line(lines, diagnostic.line))
            seen[digest] += 1
            result[diagnostic] = f"{digest}:{seen[digest]}"
    return result
