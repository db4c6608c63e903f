"""astroid trees of the project's files, built without importing anything.

astroid's module manager is told to deny every module while gemlint builds or walks a tree, so no project,
third-party or extension module is loaded, let alone run. Only the call graph (:mod:`gemlint.project.call_graph`)
imports this module, and only when LibCST cannot answer a question on its own: importing astroid costs a run
about 0.07 s.

The trees are built without astroid's start-up, which builds its ``builtins`` module by introspecting the live
one (0.09 s): the call graph reads bindings and never infers, and it looks up only names that some scope of
the file binds (:func:`lookup`). Where astroid needs ``builtins`` after all, it builds it itself then.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import astroid
from astroid import nodes, raw_building
from astroid.builder import AstroidBuilder
from astroid.manager import AstroidManager


class _DenyEveryModule(frozenset):
    """astroid's ``module_denylist``: every module name is in it but ``builtins``, so astroid loads none."""

    def __contains__(self, name: object) -> bool:
        return name != "builtins"


_DENY_ALL = _DenyEveryModule()


@contextmanager
def no_imports() -> Iterator[None]:
    """While active, astroid cannot import or load any module (star imports, inference).

    astroid's manager is a Borg whose instances copy the shared ``brain`` when they are made, and
    astroid makes a new one wherever it imports; so the deny list goes into the brain itself.
    """
    brain = AstroidManager.brain
    saved = brain["module_denylist"], brain["always_load_extensions"]
    brain["module_denylist"] = _DENY_ALL
    brain["always_load_extensions"] = False
    try:
        yield
    finally:
        brain["module_denylist"], brain["always_load_extensions"] = saved


class _SourceBuilder(AstroidBuilder):
    """astroid's builder of trees from source, without its start-up and without the inference it runs once a
    tree is built (``self.x = ...`` recorded in the class's ``instance_attrs``, which the call graph does not
    read: it walks the assignments itself)."""

    def __init__(self, manager: AstroidManager) -> None:
        raw_building.InspectBuilder.__init__(self, manager)  # not AstroidBuilder's: it builds `builtins` first
        self._apply_transforms = False

    def delayed_assattr(self, node: nodes.AssignAttr) -> None:
        return None


def build_astroid(text: str, modname: str, path: str) -> nodes.Module | None:
    """An astroid tree of ``text`` (no transforms, nothing imported, not kept in astroid's global cache)."""
    manager = AstroidManager()
    with no_imports():
        try:
            module = _SourceBuilder(manager).string_build(text, modname, path)
        except (astroid.AstroidError, RecursionError, MemoryError, ValueError, SyntaxError):
            return None
    if manager.astroid_cache.get(modname) is module:
        del manager.astroid_cache[modname]
    return module


def lookup(node: nodes.NodeNG, name: str) -> tuple[nodes.NodeNG | None, tuple[nodes.NodeNG, ...] | list[nodes.NodeNG]]:
    """``node.lookup(name)``, where some scope around ``node`` binds ``name``. A name none binds is a builtin or
    unbound, never the project's: astroid would look for it in its ``builtins`` module, built first."""
    scope = node.scope()
    while scope is not None:
        if name in scope.locals:
            return node.lookup(name)
        scope = scope.parent.scope() if scope.parent is not None else None
    return None, ()
