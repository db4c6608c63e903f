"""One traversal of a module that records what the analyses look up repeatedly.

Walking a LibCST tree costs about as much as parsing it, so the analyses never
re-walk the module or a function body per question: they consult this index,
built once per file, and only on files where a rule asked for context.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.syntax import dotted_name, terminal_name

# Scopes and loops the index remembers around each interesting call.
_OWNERS = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While)
# Terminal names of calls that may be training steps (checked precisely later).
TRAINING_CANDIDATES = frozenset({"backward", "zero_grad", "step", "grad", "GradScaler"})


@dataclass
class CallSite:
    call: cst.Call
    owners: tuple[cst.CSTNode, ...]  # enclosing functions, classes, lambdas and loops, outermost first


@dataclass
class ModuleIndex:
    parents: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    children: dict[cst.CSTNode, list[cst.CSTNode]] = field(default_factory=dict)
    nodes: list[cst.CSTNode] = field(default_factory=list)  # below the module, in source order
    imports: set[str] = field(default_factory=set)
    globals: set[str] = field(default_factory=set)
    # terminal callee name -> call sites ("helper" for helper(...), self.helper(...) and obj.helper(...))
    calls: dict[str, list[CallSite]] = field(default_factory=dict)

    def sites(self, *names: str) -> list[CallSite]:
        return [site for name in names for site in self.calls.get(name, ())]


class _Indexer(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.index = ModuleIndex()
        self._owners: list[cst.CSTNode] = []
        self._path: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        # Parents and children are recorded here rather than by LibCST's ParentNodeProvider: one walk, not two
        # (``CSTNode.children`` re-visits the node, so asking every node for them costs a walk per node).
        if self._path:
            parent = self._path[-1]
            self.index.parents[node] = parent
            self.index.nodes.append(node)
            children = self.index.children.get(parent)
            if children is None:
                self.index.children[parent] = [node]
            else:
                children.append(node)
        self._path.append(node)
        if isinstance(node, cst.Call):
            name = terminal_name(node.func)
            if name is not None:
                self.index.calls.setdefault(name, []).append(CallSite(node, tuple(self._owners)))
        elif isinstance(node, _OWNERS):
            self._owners.append(node)
        elif isinstance(node, cst.Import):
            for alias in node.names:
                self._add_module(dotted_name(alias.name))
        elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
            self._add_module(dotted_name(node.module))
        elif isinstance(node, cst.Global):
            self.index.globals.update(item.name.value for item in node.names)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._path.pop()
        if isinstance(original_node, _OWNERS):
            self._owners.pop()

    def _add_module(self, name: str | None) -> None:
        if name:
            parts = name.split(".")
            self.index.imports.update(".".join(parts[: i + 1]) for i in range(len(parts)))


def build_index(module: cst.Module) -> ModuleIndex:
    indexer = _Indexer()
    module.visit(indexer)
    return indexer.index
