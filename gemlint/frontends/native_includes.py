"""The project headers a C/C++/CUDA file includes, and the macros they define.

An error-check macro is usually defined once in a project header (``common.h``: ``#define CHECK(x) if (x)
return err;``) and used in every source file. Only quoted includes (``#include "common.h"``) are followed:
angle-bracket includes name system and library headers. A header is searched as the compiler searches a
quoted include: in the including file's folder, then in the project's include folders, read from
``include_directories``/``target_include_directories`` in the ``CMakeLists.txt`` files of the folders above
it and from ``-I`` flags in a ``compile_commands.json`` (at a folder above, or in its ``build/``). Headers
reached through headers are followed a few levels deep. Each header is read once per run.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from gemlint.confinement import companion_exists, read_companion

#: Headers included by headers are followed this deep (error-check macros sit one or two levels down).
MAX_DEPTH = 4
#: Folders above a file searched for build files; the search also stops at a repository root.
MAX_LEVELS = 8
#: The build files whose include folders are read.
BUILD_FILES = frozenset({"CMakeLists.txt", "compile_commands.json"})
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)$", re.MULTILINE)
_CONTINUATION = re.compile(r"\\\r?\n")
_CMAKE_INCLUDES = re.compile(r"\b(?:target_)?include_directories\s*\(([^)]*)\)", re.IGNORECASE)
_CMAKE_KEYWORDS = frozenset({"SYSTEM", "BEFORE", "AFTER", "PUBLIC", "PRIVATE", "INTERFACE"})
_CMAKE_SOURCE_VARIABLES = re.compile(r"\$\{(CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR|PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR|[A-Za-z_]*_SOURCE_DIR)\}")
_GENERATOR = re.compile(r"\$<BUILD_INTERFACE:([^>]*)>")


@dataclass(frozen=True)
class MacroDefinition:
    """One ``#define``: the names of its parameters (None for an object-like macro) and its body."""

    parameters: tuple[str, ...] | None
    body: str
    #: The header defines the name more than once, differently (``#ifdef DEBUG`` / ``#else``): this is the last
    #: definition, and which one a build takes is not known.
    varies: bool = False


def macro_definitions(text: str) -> dict[str, MacroDefinition]:
    """``name -> definition`` for every ``#define`` of ``text`` (continuation lines joined); the last, where a name
    is defined more than once."""
    joined = _CONTINUATION.sub(" ", text)
    found: dict[str, MacroDefinition] = {}
    for match in _DEFINE.finditer(joined):
        name, definition = match.group(1), MacroDefinition(macro_parameters(match.group(2)), match.group(3))
        earlier = found.get(name)
        if earlier is not None and (earlier.varies or earlier != definition):
            definition = MacroDefinition(definition.parameters, definition.body, varies=True)
        found[name] = definition
    return found


def macro_parameters(written: str | None) -> tuple[str, ...] | None:
    """``("x", "y")`` for ``(x, y)``; a variadic ``...`` is ``__VA_ARGS__``; None when there is no list."""
    if written is None:
        return None
    names = (name.strip() for name in written.strip("()").split(","))
    return tuple("__VA_ARGS__" if name == "..." else name for name in names if name)


def included_macros(path: Path, text: str) -> dict[str, MacroDefinition]:
    """The macros defined by the project headers ``path`` (whose source is ``text``) includes, nearest first:
    a macro a closer header defines is not replaced by one a deeper header defines."""
    found: dict[str, MacroDefinition] = {}
    for header in included_headers(path, text):
        for name, body in _header_macros(str(header), _stamp(header)).items():
            found.setdefault(name, body)
    return found


def included_headers(path: Path, text: str, fallback: Callable[[Path, str], Path | None] | None = None) -> list[Path]:
    """The project headers reached from ``path`` through quoted includes, breadth first, each once. ``fallback``
    finds, from the including file and the include's name, a header the compiler's search does not (include folders
    set where gemlint does not read them)."""
    seen: set[Path] = set()
    order: list[Path] = []
    itself = path.resolve()
    frontier = [(itself, text)]
    for _ in range(MAX_DEPTH):
        following = []
        for including, source in frontier:
            for name in _INCLUDE.findall(source):
                header = _resolve(including, name)
                if header is None and fallback is not None:
                    header = fallback(including, name)
                if header is None or header in seen or header == itself:
                    continue
                seen.add(header)
                order.append(header)
                following.append((header, _header_text(str(header), _stamp(header))))
        frontier = following
    return order


@lru_cache(maxsize=16384)
def _resolve(including: Path, name: str) -> Path | None:
    """The header a quoted include names, searched as the compiler does; only a header inside the
    including file's work tree (:mod:`gemlint.confinement`): an include of ``/etc/...``, or one through a
    link out of the repository, is not read. ``including`` is resolved. Remembered for the run, as the
    include folders are: the headers most files include are found once, not once per file."""
    for folder in (including.parent, *include_folders(str(including.parent))):
        candidate = folder / name
        if companion_exists(candidate, including):
            return candidate.resolve()
    return None


@lru_cache(maxsize=4096)
def include_folders(folder: str) -> tuple[Path, ...]:
    """The include folders the build files above ``folder`` declare."""
    found: list[Path] = []
    current = Path(folder).resolve()
    for _ in range(MAX_LEVELS):
        cmake = current / "CMakeLists.txt"
        if companion_exists(cmake, folder):
            found.extend(_cmake_folders(str(cmake), _stamp(cmake)))
        for database in (current / "compile_commands.json", current / "build" / "compile_commands.json"):
            if companion_exists(database, folder):
                found.extend(_database_folders(str(database), _stamp(database)))
        if (current / ".git").exists() or current.parent == current:
            break
        current = current.parent
    return tuple(dict.fromkeys(f for f in found if f.is_dir()))


#: Build files whose text may define a macro for the sources below them (``add_definitions(-DDEBUG)``,
#: ``CFLAGS += -DDEBUG``, ``define_macros=[("DEBUG", None)]``, ``cmake -DDEBUG=ON`` in a build script).
_BUILD_NAMES = frozenset({"CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "BUILD", "BUILD.bazel", "meson.build", "setup.py", "build.py", "compile_commands.json"})
_BUILD_SUFFIXES = (".cmake", ".mk", ".sh", ".bazel", ".vcxproj", ".props", ".pro", ".gyp", ".gypi", ".bzl")
_WORD = re.compile(r"[A-Za-z_]\w*")
#: A line that is a comment in the build files' languages (CMake, Make, shell, Python, Bazel).
_COMMENT_LINE = re.compile(r"^\s*#")


@lru_cache(maxsize=1024)
def build_mentions(folder: str) -> frozenset[str]:
    """Every name the build files in ``folder`` and the folders above it (to the repository's root) spell outside
    their comment lines: the macros the build may define for a source of ``folder``, and more."""
    found: set[str] = set()
    current = Path(folder).resolve()
    for _ in range(MAX_LEVELS):
        try:
            names = [entry for entry in current.iterdir() if entry.name in _BUILD_NAMES or entry.name.endswith(_BUILD_SUFFIXES)]
        except OSError:
            names = []
        for build in names:
            if companion_exists(build, folder):
                found |= _build_words(str(build), _stamp(build))
        if (current / ".git").exists() or current.parent == current:
            break
        current = current.parent
    return frozenset(found)


@lru_cache(maxsize=256)
def _build_words(written: str, stamp: tuple[int, int]) -> frozenset[str]:
    try:
        text = read_companion(written, written).decode("utf-8", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(word for line in text.splitlines() if not _COMMENT_LINE.match(line) for word in _WORD.findall(line))


def forget_lookups() -> None:
    """Forget which file each include named and the include folders found: a long-lived process (the
    language server) calls this when a header or a build file appears, moves or changes."""
    _resolve.cache_clear()
    include_folders.cache_clear()
    build_mentions.cache_clear()
    _cmake_folders.cache_clear()  # its folders depend on the build files above it too


def _top_project(folder: Path) -> Path:
    """The highest folder above ``folder`` (itself included) with a ``CMakeLists.txt``: the source tree's root."""
    top = folder
    current = folder
    for _ in range(MAX_LEVELS):
        if (current / "CMakeLists.txt").is_file():
            top = current
        if (current / ".git").exists() or current.parent == current:
            break
        current = current.parent
    return top


@lru_cache(maxsize=256)
def _cmake_folders(written: str, stamp: tuple[int, int]) -> tuple[Path, ...]:
    """The include folders a ``CMakeLists.txt`` declares; read once for every folder below it."""
    cmake = Path(written)
    try:
        text = read_companion(cmake, cmake).decode("utf-8", errors="replace")
    except OSError:
        return ()
    folders = []
    for match in _CMAKE_INCLUDES.finditer(text):
        words = match.group(1).split()
        if match.group(0).lower().startswith("target_"):
            words = words[1:]  # the target's name
        for word in words:
            word = _GENERATOR.sub(r"\1", word.strip('"'))
            if word in _CMAKE_KEYWORDS or word.startswith("$<"):
                continue
            word = _CMAKE_SOURCE_VARIABLES.sub(lambda m: str(cmake.parent if m.group(1).startswith("CMAKE_CURRENT") else _top_project(cmake.parent)), word)
            if "${" in word:
                continue  # a variable set elsewhere: not guessed
            folder = Path(word)
            folders.append(folder if folder.is_absolute() else cmake.parent / folder)
    return tuple(folders)


@lru_cache(maxsize=64)
def _database_folders(database: str, stamp: tuple[int, int]) -> tuple[Path, ...]:
    try:
        entries = json.loads(read_companion(database, database).decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return ()
    folders: dict[Path, None] = {}
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, dict):
            continue
        directory = Path(str(entry.get("directory", ".")))
        if not directory.is_absolute():
            directory = Path(database).parent / directory
        arguments = entry.get("arguments")
        if not isinstance(arguments, list):
            try:
                arguments = shlex.split(str(entry.get("command", "")))
            except ValueError:
                continue
        for index, argument in enumerate(arguments):
            argument = str(argument)
            value = None
            if argument in ("-I", "-iquote") and index + 1 < len(arguments):
                value = str(arguments[index + 1])
            elif argument.startswith("-I"):
                value = argument[2:]
            elif argument.startswith("-iquote"):
                value = argument[len("-iquote"):]
            if value:
                folder = Path(value)
                folders[folder if folder.is_absolute() else directory / folder] = None
    return tuple(folders)


def _stamp(path: Path) -> tuple[int, int]:
    """What says a file changed (its size and modification time): cached reads are keyed by it."""
    try:
        status = path.stat()
    except OSError:
        return (-1, -1)
    return (status.st_size, status.st_mtime_ns)


@lru_cache(maxsize=2048)
def _header_text(path: str, stamp: tuple[int, int]) -> str:
    try:
        return read_companion(path, path).decode("utf-8", errors="replace")
    except OSError:
        return ""


@lru_cache(maxsize=2048)
def _header_macros(path: str, stamp: tuple[int, int]) -> dict[str, MacroDefinition]:
    return macro_definitions(_header_text(path, stamp))
