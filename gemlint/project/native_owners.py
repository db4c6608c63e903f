"""C++ classes whose objects register themselves with an owner when they are built.

A constructor that hands ``this`` to a call (``net->addLayer(this)``, ``context->add_node(this)``,
``registry.push_back(this)``) gives the object to whatever it registers with: ``auto *conv = new Conv2d(&net, ...)``
of such a class (or of a class derived from one) is kept by the network, not leaked when ``conv`` goes out of
scope. Frameworks of layers and graph nodes are built this way.

What a file's classes derive from is read from the file and from the project headers it includes (base clauses);
constructors are read there and in the implementation files paired with those headers by name (``Layer.h`` with
``Layer.cpp``), where a class's constructor is usually defined. An include is found as the compiler finds it
(:mod:`gemlint.frontends.native_includes`) or, where the build's include folders are not written in a file gemlint
reads (a ``setup.py`` extension), as the project's header of that name nearest to the file. Only files that pass
``this`` to something are parsed. Each file is read once per process.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gemlint.frontends.native import function_nodes, parse
from gemlint.frontends.native_includes import included_headers
from gemlint.native import c_syntax as syn
from gemlint.text import SourceError, read_regular_file

#: ``this`` passed as an argument: the only files whose constructors are parsed.
_THIS_ARGUMENT = re.compile(r"[(,]\s*this\s*[),]")
#: A class head with a base clause: ``class Conv2d : public LayerWgs {``.
_CLASS_HEAD = re.compile(r"\b(?:class|struct)\s+(?:[A-Z_][A-Z0-9_]*\s+)*(\w+)\s*(?:final\s*)?:([^{;]*)\{")
_ACCESS = re.compile(r"\b(?:public|protected|private|virtual)\b")
#: ``Layer::Layer(`` (also ``Node<T>::Node(``): a constructor defined outside its class.
_CONSTRUCTOR_OUTSIDE = re.compile(r"\b(\w+)(?:<[^<>;{}]*>)?::\1\s*\(")
_CLASS_NAME = re.compile(r"\b(?:class|struct)\s+(?:[A-Z_][A-Z0-9_]*\s+)*(\w+)\s*(?:final\s*)?[:{]")
_TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")
#: Calls that take ``this`` without keeping it (a cast, a size, a copy of its bytes).
_NOT_KEEPING = frozenset({"sizeof", "memset", "memcpy", "memmove", "assert", "typeid", "addressof", "static_assert"})
_IMPLEMENTATIONS = frozenset({".cpp", ".cc", ".cxx", ".c++", ".cu"})
#: Implementation files of one header name read at most (the nearest: a project may hold many `utils.cpp`).
_PAIRED_FILES = 4


class NativeOwners:
    """The self-registering classes of one project's C/C++/CUDA files."""

    def __init__(self, native_paths: list[str]) -> None:
        self._by_stem: dict[str, list[str]] = {}
        self._by_name: dict[str, list[str]] = {}
        for path in native_paths:
            name = os.path.basename(path)
            stem, extension = os.path.splitext(name)
            if extension.lower() in _IMPLEMENTATIONS:
                self._by_stem.setdefault(stem, []).append(path)
            else:
                self._by_name.setdefault(name, []).append(path)
        #: path -> what it says of classes
        self._files: dict[str, _FileFacts] = {}
        #: including file -> the files read for it: itself, its headers, their implementation files
        self._reached: dict[str, list[str]] = {}
        #: (including file, class) -> the answer
        self._answers: dict[tuple[str, str], bool] = {}

    def registers_itself(self, path: Path, text: str, class_name: str) -> bool:
        """Objects of ``class_name``, built in the file ``path`` (whose text is ``text``), register themselves: its
        constructor, or a base's (any depth), hands ``this`` to a call."""
        key = (str(path), class_name)
        if key not in self._answers:
            self._answers[key] = self._registers(path, text, class_name)
        return self._answers[key]

    def _registers(self, path: Path, text: str, class_name: str) -> bool:
        own = str(path)
        if own not in self._reached:
            self._reached[own] = self._files_for(path, text)
        files = [(file, self._facts(file, text if file == own else None)) for file in self._reached[own]]
        # The class and its bases (any depth), from the base clauses; then the constructors of those classes, in
        # the files that may define one and pass `this` to something.
        lineage: set[str] = set()
        todo = [class_name]
        while todo:
            name = todo.pop()
            if name not in lineage:
                lineage.add(name)
                todo.extend(base for _, facts in files for base in facts.bases.get(name, ()))
        for file, facts in files:
            if not facts.constructors.isdisjoint(lineage) and not facts.registering(file, text if file == own else None).isdisjoint(lineage):
                return True
        return False

    def _files_for(self, path: Path, text: str) -> list[str]:
        headers = self._headers(path, text)
        files = [str(path), *headers]
        for header in headers:
            stem = os.path.splitext(os.path.basename(header))[0]
            files.extend(candidate for candidate in _nearest(self._by_stem.get(stem, ()), header)[:_PAIRED_FILES] if candidate not in files)
        return files

    def _headers(self, path: Path, text: str) -> list[str]:
        """The project headers reached from ``path`` through quoted includes, a few levels deep, each once."""
        return [str(header) for header in included_headers(path, text, self._header_named)]

    def _header_named(self, including: Path, name: str) -> Path | None:
        """The project's header of the include's name nearest the including file."""
        found = _nearest(self._by_name.get(os.path.basename(name), ()), str(including))
        return Path(found[0]).resolve() if found else None

    def _facts(self, file: str, text: str | None) -> _FileFacts:
        if file not in self._files:
            self._files[file] = _FileFacts.read(text if text is not None else _text(file))
        return self._files[file]


def _nearest(candidates, near: str) -> list[str]:
    """``candidates`` (paths), those sharing the longest folder path with ``near`` first."""
    return sorted(candidates, key=lambda candidate: -len(os.path.commonpath([candidate, near])))


def _text(file: str) -> str:
    try:
        return read_regular_file(Path(file)).decode("utf-8", errors="replace")
    except (OSError, SourceError):
        return ""


class _FileFacts:
    """What one file says of classes: their bases (its base clauses), and the classes whose constructors it may
    define and which pass ``this`` to a call (parsed only when one of them is asked about)."""

    def __init__(self, bases: dict[str, list[str]], constructors: frozenset[str]) -> None:
        self.bases = bases
        #: classes with a constructor written here (``X::X(`` or in ``class X``), in a file that passes ``this``
        self.constructors = constructors
        self._registering: frozenset[str] | None = None

    @classmethod
    def read(cls, text: str) -> _FileFacts:
        bases: dict[str, list[str]] = {}
        for match in _CLASS_HEAD.finditer(text):
            written = _ACCESS.sub(" ", match.group(2))
            while _TEMPLATE_ARGUMENTS.search(written):
                written = _TEMPLATE_ARGUMENTS.sub("", written)
            parents = [syn.last_component(part.strip()) for part in written.split(",") if part.strip()]
            bases.setdefault(match.group(1), []).extend(parent for parent in parents if parent.isidentifier())
        if not _THIS_ARGUMENT.search(text):
            return cls(bases, frozenset())
        constructors = {match.group(1) for match in _CONSTRUCTOR_OUTSIDE.finditer(text)}
        constructors.update(match.group(1) for match in _CLASS_NAME.finditer(text))
        return cls(bases, frozenset(constructors))

    def registering(self, file: str, text: str | None) -> frozenset[str]:
        """The classes whose constructor, defined in the file, hands ``this`` to a call that may keep it."""
        if self._registering is None:
            self._registering = frozenset()
            try:
                document = parse(None, text if text is not None else _text(file))
            except SourceError:
                return self._registering
            self._registering = frozenset(name for node in function_nodes(document) if (name := _registering_constructor(node)) is not None)
        return self._registering


def _registering_constructor(function: syn.Node) -> str | None:
    """The class whose constructor ``function`` is, when its body hands ``this`` to a call that may keep it."""
    if function.type != "function_definition":
        return None
    owner = _constructed_class(function)
    body = function.child_by_field_name("body")
    if owner is None or body is None:
        return None
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type == "call_expression" and any((passed := syn.strip(argument)) is not None and passed.type == "this" for argument in syn.arguments(node)):
            callee = syn.last_component(syn.callee_name(node))
            if callee and not callee.endswith("_cast") and callee not in _NOT_KEEPING:
                return owner
        stack.extend(node.named_children)
    return None


def _constructed_class(function: syn.Node) -> str | None:
    """``Layer`` for ``Layer::Layer(...) {...}``, or for ``Layer(...) {...}`` written in ``class Layer``."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
    if name_node is None:
        return None
    if name_node.type == "qualified_identifier":
        scope = name_node.child_by_field_name("scope")
        owner = syn.last_component(syn.name_of(scope)) if scope is not None else ""
        return owner if owner and syn.last_component(syn.name_of(name_node)) == owner else None
    if name_node.type != "identifier":
        return None
    parent = function.parent
    while parent is not None and parent.type not in ("class_specifier", "struct_specifier"):
        parent = parent.parent
    if parent is None:
        return None
    written = syn.last_component(syn.name_of(parent.child_by_field_name("name")))
    return written if written == syn.text(name_node) else None
