"""Reading source bytes as text, and line/column arithmetic shared by fixes and suppressions."""

from __future__ import annotations

import codecs
import hashlib
import io
import os
import re
import stat
import tokenize
from dataclasses import dataclass
from typing import Iterable

from gemlint.diagnostics import Position
from gemlint.languages import Language

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


#: Starts the message of a GEM000 given because a parse ran out of time: it depends on the machine's
#: speed, not only on the file, so such a result is never cached.
TIMED_OUT_PREFIX = "parsing took longer than"


class ScannedText:
    """A file's text for the rules' marker checks (``marker in text``), each marker searched for once: the
    rules share most of their markers (every serving rule asks for ``from fastapi``), and the searches are a
    tenth of a cold run's work when each rule repeats them."""

    __slots__ = ("text", "_found")

    def __init__(self, text: str) -> None:
        self.text = text
        self._found: dict[str, bool] = {}

    def __contains__(self, marker: str) -> bool:
        found = self._found.get(marker)
        if found is None:
            found = self._found[marker] = marker in self.text
        return found


def contains_marker_groups(text: "str | ScannedText", groups: Iterable[Iterable[str]]) -> bool:
    """Whether ``text`` contains a marker of every group (no groups: any text), as a rule's markers ask."""
    return all(any(marker in text for marker in group) for group in groups)


class SourceError(Exception):
    """The file cannot be read as source text; reported as GEM000."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class DecodedSource:
    text: str  # without a BOM; line endings untouched
    encoding: str  # codec used to write the text back, 'utf-8-sig' when a BOM was present


def read_regular_file(path: os.PathLike | str) -> bytes:
    """The bytes of a regular file; raises SourceError for anything else, never blocks.

    Opened non-blocking and checked on the open descriptor, so a FIFO (or a file swapped for
    one after a check) can never stall the run.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except IsADirectoryError:
        raise SourceError("is a directory, not a file") from None
    except FileNotFoundError:
        raise SourceError("no such file (or a dangling symlink)") from None
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from None
    with os.fdopen(descriptor, "rb") as stream:
        try:
            mode = os.fstat(descriptor).st_mode
            if stat.S_ISDIR(mode):
                raise SourceError("is a directory, not a file")
            if not stat.S_ISREG(mode):
                raise SourceError("not a regular file (a FIFO, socket or device); not read")
            return stream.read()
        except OSError as error:
            raise SourceError(f"cannot read: {error.strerror or error}") from None


def split_lines(text: str) -> list[str]:
    """Split on \\n, \\r\\n and \\r only, keeping the ends (str.splitlines also splits on \\f, \\x1c, ...)."""
    lines = []
    start = 0
    for match in _LINE_BREAK.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def line_offsets(text: str) -> list[int]:
    offsets = [0]
    for match in _LINE_BREAK.finditer(text):
        offsets.append(match.end())
    return offsets


def offset_of(offsets: list[int], text_length: int, position: Position) -> int:
    index = min(max(position.line - 1, 0), len(offsets) - 1)
    return min(offsets[index] + position.column - 1, text_length)


def detect_newline(text: str) -> str:
    match = _LINE_BREAK.search(text)
    return match.group(0) if match else "\n"


def decode_python(data: bytes) -> DecodedSource:
    """Decode Python source as the interpreter would: BOM, then PEP 263 coding cookie, then UTF-8."""
    _refuse_nul(data, "Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise SourceError(f"cannot determine the encoding: {error.msg}", getattr(error, "lineno", 1) or 1) from None
    return _decode(data, encoding)


def decode_text(data: bytes) -> DecodedSource:
    """Decode non-Python text (YAML, notebooks' JSON, C/C++/CUDA, Dockerfiles): UTF-8 with an optional BOM."""
    _refuse_nul(data, "a text file")
    return _decode(data, "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8")


# YAML's encodings (YAML 1.2, 5.2): a byte order mark says which, else the zero bytes around the first character
# (which is ASCII) do; UTF-32's marks begin with UTF-16's, so they are tried first.
_YAML_MARKS = ((codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF16_BE, "utf-16"), (codecs.BOM_UTF16_LE, "utf-16"))


def decode_yaml(data: bytes) -> DecodedSource:
    """Decode YAML: UTF-8 (with an optional BOM), or UTF-16 or UTF-32 as its byte order mark or its first
    character's zero bytes say, which YAML parsers accept (a manifest saved by a Windows editor)."""
    for mark, encoding in _YAML_MARKS:
        if data.startswith(mark):
            return _decode(data, encoding)
    head = data[:4]
    if len(head) == 4 and head[:3] == b"\x00\x00\x00":
        return _decode(data, "utf-32-be")
    if len(head) == 4 and head[1:] == b"\x00\x00\x00":
        return _decode(data, "utf-32-le")
    if len(head) >= 2 and head[0] == 0 and head[1] != 0:
        return _decode(data, "utf-16-be")
    if len(head) >= 2 and head[0] != 0 and head[1] == 0:
        return _decode(data, "utf-16-le")
    return decode_text(data)


def decode_lenient(data: bytes) -> DecodedSource:
    """Decode C/C++/CUDA source and Dockerfiles: UTF-8 (with an optional BOM), else Latin-1.

    Compilers and Docker take the bytes of comments and strings as they are, and older sources (Boost,
    vendor headers, Dockerfiles with a maintainer's name) carry Latin-1; such a file is still source.
    Bytes that are not text (NUL) are refused as for every other language.
    """
    _refuse_nul(data, "a text file")
    try:
        return _decode(data, "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8")
    except SourceError:
        return DecodedSource(data.decode("latin-1"), "latin-1")


def _refuse_nul(data: bytes, what: str) -> None:
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise SourceError(f"file contains NUL bytes; it is not {what}", line)


def decoder_for(language: Language | None):
    """How files of ``language`` are decoded (None: as Python, the default language)."""
    if language in (Language.PYTHON, None):
        return decode_python
    if language in (Language.NATIVE, Language.DOCKERFILE):
        return decode_lenient
    if language is Language.YAML:
        return decode_yaml
    return decode_text  # JSON (a notebook) and Triton's protobuf text are UTF-8 by their specifications


def _decode(data: bytes, encoding: str) -> DecodedSource:
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SourceError(f"invalid {encoding} byte sequence at byte {error.start}", line) from None
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r}") from None
    return DecodedSource(text, encoding)


def file_digest(data: bytes) -> str:
    """What the project index knows of a file's bytes, and the result cache's content digest, so that the
    records of unchanged files serve both."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()
