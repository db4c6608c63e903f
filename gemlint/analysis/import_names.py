"""Qualified names read from a module's imports, without LibCST's scope analysis.

Scope analysis (LibCST's ``ScopeProvider``) is the largest single cost of linting a file, and most questions a
rule asks are about names that only an import binds (``torch.no_grad``, ``AutoModel.from_pretrained``). For a
name that the whole file binds nowhere but in module-level imports, every scope of the file sees those imports
and nothing else, so the answer is the imports' alone; for a name the file binds nowhere at all, it is the
builtin's or nothing. :class:`ImportNames` answers exactly those, as LibCST would (``tests/test_import_names.py``
compares the two on every fixture), and says None for every other name: a parameter, an assignment, an import
inside a function, a name imported twice. Those the scope analysis answers.
"""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from typing import Iterator

from gemlint.analysis.ast_walk import SCALAR_FIELDS, walk

_BUILTINS = frozenset(dir(builtins))
# ``try: ... except* E:`` is Python 3.11's.
_COMPOUND = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.Match, *(
    (ast.TryStar,) if hasattr(ast, "TryStar") else ()
))


class ImportNames:
    """The names a module binds only by module-level imports, and every name it binds some other way."""

    def __init__(self, tree: ast.Module) -> None:
        #: spelling -> what each module-level import of it names: ("a.b", True) for ``import a.b as c``
        #: (``c.x`` -> ``a.b.x``), ("", False) for ``import a.b`` (``a.x`` names itself).
        self._imports: dict[str, set[tuple[str, bool]]] = {}
        self._bound: set[str] = set()
        #: How many times the file binds each name, in any way and at any level (a module-level import too).
        self._bindings: Counter[str] = Counter()
        #: The names the file binds some way other than a ``def`` or ``class`` statement.
        self._bound_to_values: set[str] = set()
        #: The name any import of the file binds, at any level -> the top-level packages those imports read
        #: ("." for a relative import).
        self._imported: dict[str, set[str]] = {}
        #: As ``_imports``, for the imports at any level.
        self._targets: dict[str, set[tuple[str, bool]]] = {}
        #: For names imported only by statements of the module's body itself (no `if`/`try` around them): each
        #: import's line and what it names, in source order (`from transformers import AutoModel` at the top,
        #: `from funasr import AutoModel` further down: a use sees the last one above it).
        self._in_turn: dict[str, list[tuple[int, tuple[str, bool]]]] = {}
        #: Names some import inside a module-level block binds: which one a use sees, only a run can tell.
        self._branched: set[str] = set()
        top = {id(statement) for statement in tree.body}
        module_level = set()
        for statement in _module_level_statements(tree):
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                module_level.add(id(statement))
                _record_import(statement, self._imports)
                if id(statement) in top:
                    named: dict[str, set[tuple[str, bool]]] = {}
                    _record_import(statement, named)
                    for name, targets in named.items():
                        self._in_turn.setdefault(name, []).extend((statement.lineno, target) for target in sorted(targets))
                else:
                    self._branched.update(_imported(statement))
        for node in _walk(tree):
            names = _bound_names(node)
            if not names:
                continue
            self._bindings.update(names)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._bound_to_values.update(names)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._record_sources(node)
                _record_import(node, self._targets)
                if id(node) in module_level:
                    continue  # recorded in _imports; an import inside a function or class binds a local name
            self._bound.update(names)

    def _record_sources(self, node: ast.Import | ast.ImportFrom) -> None:
        package = "." if isinstance(node, ast.ImportFrom) and node.level else None
        for alias in node.names:
            if alias.name == "*":
                continue
            source = package or ((node.module if isinstance(node, ast.ImportFrom) else alias.name) or "").split(".", 1)[0]
            self._imported.setdefault(alias.asname or alias.name.split(".", 1)[0], set()).add(source)

    def bound_once(self, name: str) -> bool:
        """The file binds ``name`` once, anywhere: every scope that sees it sees that one binding."""
        return self._bindings[name] == 1

    def defines_only(self, name: str) -> bool:
        """Every binding of ``name`` in the file, if any, is a ``def`` or ``class`` statement: whichever one a
        use of the name sees, it holds a function or a class."""
        return name not in self._bound_to_values

    def binds(self, name: str) -> bool:
        """Something in the file binds ``name`` (an import, an assignment, a definition, a parameter...)."""
        return name in self._bound or name in self._imports or name in self._imported

    def imports(self, name: str) -> bool:
        """Some import of the file, at any level, binds ``name`` (``np`` for ``import numpy as np``, ``a`` for
        ``import a.b``)."""
        return name in self._imported

    def all_sources(self) -> frozenset[str]:
        """The top-level packages of every import of the file, at any level ("." for a relative one)."""
        return frozenset(source for sources in self._imported.values() for source in sources)

    def import_targets(self, head: str) -> frozenset[tuple[str, bool]]:
        """What each import of the file that binds ``head``, at any level, names: ("a.b", True) for ``import a.b as
        head`` or ``from a import b as head`` (``head.x`` names ``a.b.x``), ("", False) for ``import head.c``
        (``head.x`` names itself)."""
        return frozenset(self._targets.get(head, ()))

    def qualified(self, dotted: str) -> frozenset[str] | None:
        """What ``dotted`` (``a.b.c``, as written) names, or None when only scope analysis can tell."""
        head, _, tail = dotted.partition(".")
        if head in self._bound:
            return None
        imports = self._imports.get(head)
        if imports is None:
            return frozenset({f"builtins.{head}"}) if head in _BUILTINS else frozenset()
        if len(imports) > 1:
            # Imported twice (`try: import ujson as json` / `except: import json`): which import a use at module
            # level sees depends on where it stands, which LibCST's accesses know and this table does not.
            return None
        ((target, aliased),) = imports
        return _named(dotted, target, aliased)

    def imported_in_turn(self, head: str) -> bool:
        """``head`` is bound only by imports that are statements of the module's body (several of them), each
        naming something of a module (``from a import X``, ``import a.b as X``): which one a use sees follows from
        where the use stands (:meth:`qualified_at`). A name also imported as a module itself (``import torch``,
        then ``from .backends import torch``) is most often the same module re-exported: left to scope analysis,
        which names both."""
        sequence = self._in_turn.get(head)
        return (
            sequence is not None
            and head not in self._branched
            and head not in self._bound
            and len(self._imports.get(head, ())) > 1
            and all(aliased for _, (_, aliased) in sequence)
        )

    def qualified_at(self, dotted: str, line: int, deferred: bool) -> frozenset[str] | None:
        """What ``dotted`` names where a use of it stands on ``line``, when :meth:`imported_in_turn`: the last
        import above the line, or for a use in a function's body (``deferred``: it runs once the module has
        run) the module's last import of the name. None when none stands above it."""
        head = dotted.partition(".")[0]
        if not self.imported_in_turn(head):
            return None
        seen = self._in_turn[head] if deferred else [entry for entry in self._in_turn[head] if entry[0] < line]
        if not seen:
            return None
        last = seen[-1][0]
        return frozenset().union(*(_named(dotted, target, aliased) for at, (target, aliased) in seen if at == last))


def _named(dotted: str, target: str, aliased: bool) -> frozenset[str]:
    """What ``dotted`` names through an import of its first name that names ``target``."""
    if not aliased:
        return frozenset({dotted})
    _, _, tail = dotted.partition(".")
    return frozenset({f"{target}.{tail}" if tail else target})


def _record_import(statement: ast.Import | ast.ImportFrom, into: dict[str, set[tuple[str, bool]]]) -> None:
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname:
                into.setdefault(alias.asname, set()).add((alias.name, True))
            else:
                into.setdefault(alias.name.split(".", 1)[0], set()).add(("", False))
        return
    source = "." * statement.level + (statement.module or "")
    for alias in statement.names:
        if alias.name == "*":
            continue  # binds nothing LibCST records: the names it brings are unknown to both
        target = f"{source}.{alias.name}" if statement.module else f"{source}{alias.name}"
        into.setdefault(alias.asname or alias.name, set()).add((target, True))


def _module_level_statements(tree: ast.Module):
    """The statements that run in the module's own scope: its body and the blocks of its compound statements."""
    stack = list(reversed(tree.body))
    while stack:
        statement = stack.pop()
        yield statement
        if isinstance(statement, _COMPOUND):
            blocks = [getattr(statement, name, []) for name in ("body", "orelse", "finalbody")]
            blocks += [handler.body for handler in getattr(statement, "handlers", [])]
            blocks += [case.body for case in getattr(statement, "cases", [])]
            for block in reversed(blocks):
                stack.extend(reversed(block))


def _walk(tree: ast.Module) -> Iterator[ast.AST]:
    """Every node of ``tree`` that may bind a name, as ``ast.walk`` finds them, without the fields that hold no
    such node (the load/store contexts, operators: a third of a tree's nodes)."""
    return walk(tree, SCALAR_FIELDS)


def _bound_names(node: ast.AST) -> list[str]:
    """The names ``node`` binds, once for each binding: an assignment target, a parameter, a definition, an
    ``except ... as`` name, a ``global``/``nonlocal`` declaration, an import, a match capture, a type parameter."""
    kind = type(node)
    if kind is ast.Name:
        return [] if type(node.ctx) is ast.Load else [node.id]  # type: ignore[attr-defined]
    binder = _BINDERS.get(kind)
    return binder(node) if binder is not None else []


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    return [alias.asname or alias.name.split(".", 1)[0] for alias in node.names if alias.name != "*"]


def _captured(node: ast.AST) -> list[str]:
    return [value for field in ("name", "rest") if isinstance(value := getattr(node, field, None), str)]


# Looked up by the node's exact type: most of a tree's nodes bind nothing, and a chain of isinstance checks on
# each of them cost more than the walk (the ast node classes are final in practice: nothing subclasses them).
_BINDERS = {
    ast.arg: lambda node: [node.arg],
    ast.FunctionDef: lambda node: [node.name],
    ast.AsyncFunctionDef: lambda node: [node.name],
    ast.ClassDef: lambda node: [node.name],
    ast.ExceptHandler: lambda node: [node.name] if node.name else [],
    ast.Global: lambda node: list(node.names),
    ast.Nonlocal: lambda node: list(node.names),
    ast.Import: _imported,
    ast.ImportFrom: _imported,
    # match captures and type parameters (the latter are Python 3.12's)
    **{
        kind: _captured
        for name in ("MatchAs", "MatchStar", "MatchMapping", "TypeVar", "ParamSpec", "TypeVarTuple")
        if (kind := getattr(ast, name, None)) is not None
    },
}
