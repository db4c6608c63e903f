"""``# noqa`` suppressions, shared by every language.

Python follows flake8 exactly, so the CLI and the flake8 plugin agree on what a
``# noqa`` means: the same regular expression, prefix matching of codes
(``# noqa: GEM4`` silences GEM401), and flake8's rule that a comment anywhere in
a multi-line token (a triple-quoted string) covers all of its lines. Other
languages use their own comment openers with the same code list syntax.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from functools import cached_property

from gemlint.languages import Language

_CODES = r"(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+)"
# Identical to flake8.defaults.NOQA_INLINE_REGEXP.
PYTHON_NOQA = re.compile(r"# noqa(?::[\s]?" + _CODES + r")?", re.IGNORECASE)
NATIVE_NOQA = re.compile(r"(?://|/\*)\s*noqa(?::[\s]?" + _CODES + r")?", re.IGNORECASE)
FILE_NOQA = re.compile(r"^\s*(?:#|//|/\*)\s*gemlint[:=]\s*noqa(?::[\s]?" + _CODES + r")?", re.IGNORECASE)
# Whether a text may hold a file-level directive at all: one search of the text, instead of a match per line of
# every file (most hold none).
_MAY_BE_FILE_NOQA = re.compile(r"gemlint[:=]\s*noqa", re.IGNORECASE)


def parse_codes(codes: str | None) -> tuple[str, ...] | None:
    """None means "every code" (a blanket noqa)."""
    if codes is None:
        return None
    return tuple(code for code in re.split(r"[,\s]+", codes.strip()) if code)


def codes_match(code: str, codes: tuple[str, ...] | None) -> bool:
    return codes is None or code in codes or code.startswith(codes)


@dataclass
class Suppressions:
    text: str
    language: Language

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines(keepends=True)

    @cached_property
    def file_level(self) -> list[tuple[str, ...] | None]:
        """Each file-level ``gemlint: noqa`` directive: None for all codes, else the codes."""
        found: list[tuple[str, ...] | None] = []
        if not _MAY_BE_FILE_NOQA.search(self.text):
            return found
        for line in self.lines:
            match = FILE_NOQA.match(line)
            if match:
                found.append(parse_codes(match.group("codes")))
        return found

    def file_suppresses_all(self) -> bool:
        return any(codes is None for codes in self.file_level)

    def is_suppressed(self, code: str, line: int, *, line_noqa: bool = True) -> bool:
        """``line_noqa=False`` checks the file-level directives only."""
        if any(codes_match(code, codes) for codes in self.file_level):
            return True
        if not line_noqa:
            return False
        searched = self._noqa_line(line)
        if searched is None:
            return False
        pattern = NATIVE_NOQA if self.language is Language.NATIVE else PYTHON_NOQA
        match = pattern.search(searched)
        return match is not None and codes_match(code, parse_codes(match.group("codes")))

    def _noqa_line(self, line: int) -> str | None:
        if self.language is Language.PYTHON:
            mapped = self._python_line_mapping.get(line)
            if mapped is not None:
                return mapped
        if 1 <= line <= len(self.lines):
            text = self.lines[line - 1]
            # A Dockerfile comment is a line of its own: a `# noqa` line right above an instruction covers it.
            if self.language is Language.DOCKERFILE and line >= 2 and self.lines[line - 2].lstrip().startswith("#"):
                text = self.lines[line - 2] + text
            return text
        return None

    @cached_property
    def _python_line_mapping(self) -> dict[int, str]:
        """flake8's ``FileProcessor._noqa_line_mapping``: lines grouped up to each NL/NEWLINE token."""
        mapping: dict[int, str] = {}
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(self.text).readline))
        except (tokenize.TokenError, SyntaxError, ValueError):
            return mapping
        lines = self.lines
        min_line, max_line = len(lines) + 2, -1
        for token in tokens:
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            min_line = min(min_line, token.start[0])
            max_line = max(max_line, token.end[0])
            if token.type in (tokenize.NL, tokenize.NEWLINE):
                joined = "".join(lines[min_line - 1 : max_line])
                for number in range(min_line, max_line + 1):
                    mapping[number] = joined
                min_line, max_line = len(lines) + 2, -1
        return mapping
