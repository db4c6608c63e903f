"""Per-module semantic facts (SPEC §2): names, execution context, flag guards, grad-free guards."""

from __future__ import annotations

import ast
import enum
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Collection, Iterable, Iterator, TypeVar

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import Assignment

from gemlint.analysis import apps, bots, routes
from gemlint.analysis import frameworks as fw
from gemlint.analysis.autograd_graphs import AutogradGraphs
from gemlint.analysis.ast_starts import starts
from gemlint.analysis.import_names import ImportNames
from gemlint.analysis.positions import StatementPositions
from gemlint.analysis.scopes import references_of, scopes_of
from gemlint.analysis.frameworks import TRAINING_CANDIDATES
from gemlint.analysis.index import ModuleIndex, build_index
from gemlint.analysis.models import ModelTracker
from gemlint.analysis.parity import checks_outputs
from gemlint.analysis.printing_blocks import only_prints
from gemlint.analysis.syntax import (  # noqa: F401 -- re-exported: the analyses and rules import them from here
    NOT_LITERAL,
    SCOPE_NODES,
    argument,
    assignment_value,
    bound_names,
    dotted_name,
    is_main_test,
    is_member,
    is_name,
    iter_subtree,
    keyword_arg,
    literal_value,
    named_parameters,
    positional_arg,
    terminal_name,
)
from gemlint.analysis.triage import (
    SyntaxFacts,
    collect,
    has_inference_prefix,
    is_inference_path,
    is_production_path,
    is_test_function,
    is_test_module,
    is_test_path,
    is_training_path,
    project_relative,
    script_runs,
)


class Context(enum.Enum):
    INFERENCE = "inference"
    TRAINING = "training"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Verdict:
    context: Context
    reason: str
    #: Inference context that rests on a name alone (``predict*``, a class named ``*Predictor``) with no
    #: entry point reaching it: reported only with ``strict`` (SPEC §2, "Evidence").
    name_only: bool = False
    #: An entry point that reaches the code runs it in a server's worker thread, not in the thread that imported
    #: the modules and built their objects (Gradio's callbacks, FastAPI's plain ``def`` routes): grad mode, which is
    #: per thread, is not what ``torch.set_grad_enabled(False)`` at module level or in a constructor left it. Which
    #: server does so, said for a message; None where no such entry point reaches it.
    worker_thread: str | None = None

    @property
    def is_inference(self) -> bool:
        return self.context is Context.INFERENCE


UNKNOWN = Verdict(Context.UNKNOWN, "")


def evidence_precision(verdict: Verdict) -> str | None:
    """The precision of a finding that rests on ``verdict``: "medium" for a name alone (see
    :attr:`Verdict.name_only`), else the rule's own."""
    return "medium" if verdict.name_only else None


T = TypeVar("T")

_DATASET_TRANSFORMS = frozenset({"map", "with_transform", "set_transform", "filter"})


#: What LibCST's scopes may name besides names, attribute chains, calls and subscripts: definitions (by their
#: name) and strings (a string annotation is an access of the names it spells).
_NAMED_BY_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Decorator, cst.SimpleString, cst.ConcatenatedString)


class ModuleAnalysis:
    """Facts about one parsed module; every fact is computed lazily and cached."""

    def __init__(self, context) -> None:
        self.context = context
        self.module: cst.Module = context.module
        self._wrapper: cst.MetadataWrapper = context.wrapper
        self._function_verdicts: dict[cst.FunctionDef, Verdict] = {}
        self._never_runs: dict[cst.FunctionDef, bool] = {}
        self._caller_verdicts_in_progress: set[cst.FunctionDef] = set()
        self._gradio_elsewhere: dict[cst.FunctionDef, str | None] = {}
        self._nodes_by_type: dict[tuple, list[cst.CSTNode]] = {}
        self._own_verdicts: dict[cst.FunctionDef, Verdict] = {}
        self._factories: dict[cst.FunctionDef, bool] = {}
        self._parity_checks: dict[cst.FunctionDef, bool] = {}
        self._checking_blocks: dict[cst.If, bool] = {}
        self._export_input_names: dict[cst.CSTNode, frozenset[str]] = {}
        self._aliases_in: dict[cst.CSTNode, dict[str, set[str]]] = {}
        self._evaluation_reasons: dict[cst.FunctionDef, str | None] = {}
        self._qualified: dict[cst.CSTNode, frozenset[str]] = {}
        #: ``(class, attribute)`` bound by tuple unpacking in a method (see :meth:`unpacked_attribute`).
        self._unpacked_attributes: set[tuple[cst.ClassDef, str]] = set()
        #: The project model (None when the file is analysed alone): callers, bases and models in other modules.
        self.outside = getattr(context, "outside", None)
        #: Held by the project for other modules' questions about this file: not released with the lint.
        self.shared = False

    def release(self) -> None:
        """Break the reference cycles of this analysis once nothing asks it again: its source caches it, and
        each fact computed on it (the index, the scopes, the model tracking) holds it. Without this the module's
        trees outlive the lint until the cyclic collector finds them, and each collection walks them first (a
        tenth of a large project's cold run). Any later question raises."""
        self.context.__dict__.pop("analysis", None)  # PythonSource.analysis, a cached property
        self.__dict__.clear()

    # -- tree navigation -------------------------------------------------------------
    @property
    def _parents(self) -> dict[cst.CSTNode, cst.CSTNode]:
        return self.index.parents

    @property
    def _children(self) -> dict[cst.CSTNode, list[cst.CSTNode]]:
        return self.index.children

    def subtree(self, node: cst.CSTNode, *, into_scopes: bool = False) -> Iterator[cst.CSTNode]:
        """Like :func:`iter_subtree` (same order, same scope rule), from the parent index: cheap to repeat."""
        children = self._children
        stack = list(reversed(children.get(node, ())))
        while stack:
            current = stack.pop()
            yield current
            if into_scopes or not isinstance(current, SCOPE_NODES):
                stack.extend(reversed(children.get(current, ())))

    @property
    def all_nodes(self) -> list[cst.CSTNode]:
        """Every node of the module below it, in source order."""
        return self.index.nodes

    def nodes_of(self, *types: type) -> list[cst.CSTNode]:
        """Every node of the given types in the module, in source order (nested scopes included)."""
        key = types
        cached = self._nodes_by_type.get(key)
        if cached is None:
            # By the exact types present that are among ``types`` (or below them): ``isinstance`` of a LibCST
            # class, an ABC, costs a Python call for every node of another type.
            wanted = frozenset(kind for kind in self._node_types if issubclass(kind, types))
            cached = [node for node in self.all_nodes if type(node) in wanted]
            self._nodes_by_type[key] = cached
        return cached

    @cached_property
    def _node_types(self) -> frozenset[type]:
        return frozenset(map(type, self.all_nodes))

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self._parents.get(node)
        while current is not None:
            yield current
            current = self._parents.get(current)

    def enclosing_statement(self, node: cst.CSTNode) -> cst.BaseSmallStatement | cst.BaseCompoundStatement | None:
        """The innermost statement ``node`` is part of (an ``If`` for a name in its test)."""
        return next((a for a in self.ancestors(node) if isinstance(a, (cst.BaseSmallStatement, cst.BaseCompoundStatement))), None)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def enclosing_class(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        block = self.parent(function)
        owner = self.parent(block) if block is not None else None
        return owner if isinstance(owner, cst.ClassDef) else None

    # -- names -------------------------------------------------------------------------
    def qualified_names(self, node: cst.CSTNode) -> frozenset[str]:
        """What ``node`` names through the module's imports (LibCST's qualified names).

        Asked of the node's scope directly: what QualifiedNameProvider hands out for each node, without
        its extra walk over the whole module to wrap every node's answer in advance.
        """
        cached = self._qualified.get(node)
        if cached is None:
            cached = self._import_qualified(node)
            if cached is None:
                scope = self._scopes.get(node)
                names = scope.get_qualified_names_for(node) if scope is not None else ()
                cached = frozenset(name.name for name in names)
            if self.outside is not None:
                if not cached and self._star_imports and isinstance(node, (cst.Name, cst.Attribute)):
                    # `from models.common import *`, where models/common.py imports torch: a name no import
                    # of this file binds may come from a project module imported whole
                    spelled = dotted_name(node)
                    if spelled:
                        # the project modules imported whole that define the name, where one does: a package's
                        # (`from transformers import *` beside them) is not read, and would be a guess
                        modules = self.outside.star_sources(self, self._star_imports, spelled.partition(".")[0]) or self._star_imports
                        cached = frozenset(f"{module}.{spelled}" for module in modules)
                # `from pkg.utils import torch`: the project module re-exports what it imports
                external = {self.outside.external_name(name) for name in cached} - {None}
                cached = cached | external if external else cached
            self._qualified[node] = cached
        return cached

    def library_names(self, node: cst.CSTNode, libraries: frozenset[str]) -> frozenset[str]:
        """:meth:`qualified_names`, for a caller that compares them only with names of the packages ``libraries``
        (top-level names: ``fastapi``, ``torch``). A name is one of those only where it is spelled as one
        (``torch = LazyModule("torch")``, then ``torch.load``), or through an import of its first name that
        names one, or names a project module's name that re-exports one: any other (``self.x``, a local,
        ``json.dumps``, ``hf_hub_download``, a project class) is answered empty without scope analysis, the
        largest cost of a large file (a server module's thousands of calls)."""
        # LibCST names a call or subscript by what it is made from (`make()()` as `make`, `super().f` as
        # `super.f`), and names nothing it cannot spell so (`"".join`, `(a or b).c`)
        spelled = get_full_name_for_node(node)
        if spelled is None and isinstance(node, (cst.Attribute, cst.Call, cst.Subscript)):
            return frozenset()
        if (
            spelled is not None
            and self._import_names is not None
            and not self._may_be_library_name(spelled, libraries)
            and not self._star_may_name(spelled, libraries)
        ):
            return frozenset()
        return self.qualified_names(node)

    def _star_may_name(self, spelled: str, libraries: frozenset[str]) -> bool:
        """What :meth:`qualified_names` guesses for a name no binding reaches, ``module.spelled`` for each module
        the file imports with ``*``, may be a name of ``libraries``: the module is one of them, or a project module
        that re-exports one. A star import of any other module (``from tkinter import *``) names none of them."""
        return any(self._names_library(f"{module}.{spelled}", libraries) for module in self._star_imports)

    def names_from_imports(self, spelled: str) -> frozenset[str] | None:
        """What the dotted name ``spelled`` names when the file binds its first name only by module-level
        imports, or not at all (a builtin's name, or nothing); None when only scope analysis can tell."""
        return self._import_names.qualified(spelled) if self._import_names is not None else None

    def _may_be_library_name(self, spelled: str, libraries: frozenset[str]) -> bool:
        """Some qualified name of ``spelled`` may be a name of ``libraries``, told from the file's imports. A
        binding other than an import names nothing of a library (LibCST names a local by where it is bound), so
        only the imports of the first name count, each naming ``spelled`` as :meth:`qualified_names` would."""
        head, _, tail = spelled.partition(".")
        if head in libraries:
            return True
        return any(
            self._names_library((f"{target}.{tail}" if tail else target) if aliased else spelled, libraries)
            for target, aliased in self._import_names.import_targets(head)  # type: ignore[union-attr]
        )

    def _names_library(self, dotted: str, libraries: frozenset[str]) -> bool:
        """``dotted``, a qualified name as :meth:`qualified_names` spells it, is a name of ``libraries``, or of a
        project module that re-exports one (what :meth:`qualified_names` adds for it)."""
        # A relative import names relatively (`.utils.torch`): "." among the libraries asks for those.
        top = "." if dotted.startswith(".") else dotted.partition(".")[0]
        if top in libraries:
            return True
        if self.outside is None or not self.outside.project_package(top):
            return False
        external = self.outside.external_name(dotted)
        return external is not None and external.partition(".")[0] in libraries

    def names_among(self, node: cst.CSTNode, names: Collection[str]) -> frozenset[str]:
        """Those of ``node``'s :meth:`qualified_names` that are among ``names`` (a set, or a table's keys): asked
        through :meth:`library_names` with the packages ``names`` belong to, so that a name which can be none of
        them costs no scope analysis."""
        libraries = _libraries_of(names)
        found = self.library_names(node, libraries) if libraries is not None else self.qualified_names(node)
        return frozenset(name for name in found if name in names)

    def first_name_among(self, node: cst.CSTNode, names: Collection[str]) -> str | None:
        """The first, in sorted order, of :meth:`names_among` (a table's key, for its row), or None."""
        return min(self.names_among(node, names), default=None)

    def names_with_prefix(self, node: cst.CSTNode, prefixes: tuple[str, ...]) -> frozenset[str]:
        """Those of ``node``'s :meth:`qualified_names` that start with one of ``prefixes`` (``"gradio."``)."""
        libraries = _libraries_of(prefixes, prefixes=True)
        found = self.library_names(node, libraries) if libraries is not None else self.qualified_names(node)
        return frozenset(name for name in found if name.startswith(prefixes))

    def may_name_from(self, libraries: frozenset[str]) -> bool:
        """Some name of this file may be one of the packages ``libraries``' (:meth:`library_names` says which):
        the file imports from one of them or from a project package, or binds a name spelled as one of them.
        False lets a question about those packages' names skip the file's other names altogether."""
        names = self._import_names
        if names is None:
            return True
        # A star import binds what its module does: a name of the libraries only if the module may lead to one.
        sources = {*names.all_sources(), *(module.partition(".")[0] for module in self._star_imports)}
        return any(names.binds(library) for library in libraries) or any(self._may_lead_to(source, libraries) for source in sources)

    def binds(self, name: str) -> bool:
        """The file binds ``name`` somewhere (an import, an assignment, a definition, a parameter...); True when
        that cannot be told (a file ``ast`` cannot parse, a star import)."""
        return self._import_names is None or bool(self._star_imports) or self._import_names.binds(name)

    def binds_once(self, name: str) -> bool:
        """The file binds ``name`` once (a class, a function, an import, an assignment...), and nowhere else: a
        module-level definition of it is then what every use of the name refers to."""
        return self._import_names is not None and self._import_names.bound_once(name)

    def holds_definitions_only(self, name: str) -> bool:
        """Whatever binding of ``name`` a use of it sees, if any, is a ``def`` or ``class`` statement of the file
        (or none: a builtin, an undefined name): it holds no value assigned, imported or passed."""
        return self._import_names is not None and self._import_names.defines_only(name)

    def is_parameter(self, name: cst.Name) -> bool:
        """``name`` refers to a parameter of the function (or lambda) it is used in, or of one around it."""
        # a name no function around it takes as a parameter refers to none: no scope analysis needed
        spelled = name.value
        if not any(
            spelled in {param.name.value for param in (*n.params.params, *n.params.posonly_params, *n.params.kwonly_params)}
            or any(isinstance(p, cst.Param) and p.name.value == spelled for p in (n.params.star_arg, n.params.star_kwarg))
            for n in self.ancestors(name)
            if isinstance(n, (cst.FunctionDef, cst.Lambda))
        ):
            return False
        return any(isinstance(assignment.node, cst.Param) for assignment in self.assignments_of(name))

    def _may_lead_to(self, source: str, libraries: frozenset[str]) -> bool:
        """An import from the top-level package ``source`` may bind a name of ``libraries``: an import from one
        of them, or from a project package that may re-export one. A relative import ("." for its source) never
        does: LibCST names what it binds relatively (``.utils.torch``), and no library name starts with a dot."""
        return source in libraries or (self.outside is not None and self.outside.project_package(source))

    def _import_qualified(self, node: cst.CSTNode) -> frozenset[str] | None:
        """:meth:`qualified_names` from the imports alone, where that is the whole answer (no scope analysis)."""
        if self._import_names is None:
            return None
        if not isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            # LibCST names another node only as a definition or a string annotation (an access it records):
            # an operation, a literal, a lambda names nothing (`llama_cpp.llama_token * n` is no name)
            return None if isinstance(node, _NAMED_BY_SCOPES) else frozenset()
        # named as LibCST names it: by the chain it is made from (`F.pad(x).contiguous` as `F.pad.contiguous`)
        spelled = get_full_name_for_node(node)
        if spelled is None:
            return None if isinstance(node, cst.Name) else frozenset()
        parent = self._parents.get(node)
        while isinstance(parent, cst.Attribute):
            parent = self._parents.get(parent)
        if isinstance(parent, (cst.ImportAlias, cst.ImportFrom, cst.AsName)):
            return None  # the name an import binds: LibCST answers with that import alone
        found = self._import_names.qualified(spelled)
        if found is None and self._import_names.imported_in_turn(spelled.partition(".")[0]):
            # imported twice, each time by a statement of the module's body: LibCST's scopes would name both
            deferred = any(isinstance(ancestor, (cst.FunctionDef, cst.Lambda)) for ancestor in self.ancestors(node))
            return self._import_names.qualified_at(spelled, self.positions[node].start.line, deferred)
        return found

    @cached_property
    def _import_names(self) -> ImportNames | None:
        given = getattr(self.context, "import_names", None)
        if given is not None:
            return given
        tree = self.ast_tree()
        return ImportNames(tree) if tree is not None else None

    def ast_tree(self) -> ast.Module | None:
        """The file's ``ast`` tree: the triage's where it was kept, else parsed again (not kept: only what is
        read from it is)."""
        kept = getattr(self.context, "ast_tree", None)
        if kept is not None:
            return kept
        try:
            return ast.parse(self.context.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    @cached_property
    def _star_imports(self) -> tuple[str, ...]:
        """The modules this file imports with ``from module import *`` (absolute ones)."""
        return tuple(
            dotted
            for node in self.module.body
            if isinstance(node, cst.SimpleStatementLine)
            for statement in node.body
            if isinstance(statement, cst.ImportFrom) and isinstance(statement.names, cst.ImportStar) and not statement.relative
            and (dotted := dotted_name(statement.module)) is not None
        )

    def resolves_to(self, node: cst.CSTNode, names: Collection[str]) -> bool:
        return bool(self.names_among(node, names))

    def resolves_with_prefix(self, node: cst.CSTNode, prefixes: tuple[str, ...]) -> bool:
        return bool(self.names_with_prefix(node, prefixes))

    def call_resolves_to(self, node: cst.CSTNode, names: Collection[str]) -> bool:
        """``node`` is a call of one of ``names`` (``torch.no_grad()``), or names it bare (``@torch.no_grad``)."""
        target = node.func if isinstance(node, cst.Call) else node
        return self.resolves_to(target, names)

    def _earlier_or(self, name: str, compute: Callable[[], T]) -> T:
        """What an earlier analysis of the same tree cached under ``name`` (a result of the tree alone), else
        ``compute()``."""
        earlier = getattr(self.context, "earlier", None)
        found = earlier.__dict__.get(name) if earlier is not None and earlier.module is self.module else None
        return found if found is not None else compute()

    @cached_property
    def index(self) -> ModuleIndex:
        return self._earlier_or("index", lambda: build_index(self.module))

    @property
    def imported_modules(self) -> frozenset[str]:
        """Every module imported anywhere in the file, with its parents (``a.b.c`` -> a, a.b, a.b.c)."""
        return frozenset(self.index.imports)

    def imports_any(self, modules: Collection[str]) -> bool:
        return not self.imported_modules.isdisjoint(modules)

    @cached_property
    def positions(self) -> StatementPositions:
        """``positions[node]``: where ``node`` stands (LibCST's syntactic ``CodeRange``), computed for the
        statements asked about rather than the whole module."""
        return self._earlier_or("positions", lambda: StatementPositions(self.module, self.parent))

    @property
    def call_starts(self) -> dict[cst.Call, tuple[int, int]] | None:
        """Each call's line and column as the file's ``ast`` tree has them (None when the trees' calls do not
        pair: then ``positions`` answers)."""
        return self._ast_starts[0]

    def functions_on(self, line: int) -> list[cst.FunctionDef]:
        """The functions whose ``def`` (or ``async``) stands on ``line``, in source order: read off the ``ast``
        tree, else off the positions of the statements that reach the line."""
        lines = self._ast_starts[1]
        if lines is not None:
            return self._functions_by_line.get(line, [])
        positions = self.positions
        return [node for node in self.nodes_of(cst.FunctionDef) if positions.may_stand_on(node, line) and positions[node].start.line == line]

    def def_line(self, function: cst.FunctionDef) -> int:
        """The line of ``function``'s ``def`` (or ``async``), where LibCST's positions start it."""
        lines = self._ast_starts[1]
        return lines[function] if lines is not None else self.positions[function].start.line

    @cached_property
    def _functions_by_line(self) -> dict[int, list[cst.FunctionDef]]:
        by_line: dict[int, list[cst.FunctionDef]] = {}
        for function, line in (self._ast_starts[1] or {}).items():
            by_line.setdefault(line, []).append(function)
        return by_line

    @cached_property
    def _ast_starts(self) -> tuple[dict[cst.Call, tuple[int, int]] | None, dict[cst.FunctionDef, int] | None]:
        """:func:`call_starts` and :func:`definition_lines`, from one parse."""
        return self._earlier_or("_ast_starts", self._starts_from_ast)

    def _starts_from_ast(self) -> tuple[dict[cst.Call, tuple[int, int]] | None, dict[cst.FunctionDef, int] | None]:
        tree = self.ast_tree()
        if tree is None:
            return None, None
        return starts(tree, self.nodes_of(cst.Call), self.nodes_of(cst.FunctionDef))

    @cached_property
    def _scopes(self):
        return self._earlier_or("_scopes", lambda: scopes_of(self.module, self.index.children, self.index.parents))

    @cached_property
    def source_order(self) -> dict[cst.CSTNode, int]:
        """Each node's place in the module's source order (asked only where bindings are put in order)."""
        return {node: place for place, node in enumerate(self.index.nodes)}

    def scope_of(self, node: cst.CSTNode):
        """The LibCST scope ``node`` (a name) is looked up in, or None."""
        return self._scopes.get(node)

    def assignments_of(self, name: cst.Name) -> list[Assignment]:
        """Every assignment (including parameters, imports are left out) of the variable ``name`` refers to."""
        scope = self._scopes.get(name)
        if scope is None:
            return []
        return [a for a in scope[name.value] if isinstance(a, Assignment)]

    def import_bindings(self, name: cst.Name) -> list[cst.Import | cst.ImportFrom]:
        """The import statements that bind the variable ``name`` refers to, where only imports bind it (another
        module's object: ``from app import state``, in a function or at the top); else empty."""
        statements = [assignment.node for assignment in self.assignments_of(name)]
        return statements if statements and all(isinstance(node, (cst.Import, cst.ImportFrom)) for node in statements) else []  # type: ignore[return-value]

    def assigned_values(self, name: cst.Name) -> list[cst.BaseExpression]:
        """The expressions assigned to the variable ``name`` refers to, in its scope (``x = f()``, ``with f() as x``)."""
        if self.holds_definitions_only(name.value):
            return []  # a class, a function or a builtin: nothing assigned, and no scope analysis to say so
        scope = self._scopes.get(name)
        if scope is None:
            return []
        values = []
        for assignment in scope[name.value]:
            if isinstance(assignment, Assignment):
                value = assignment_value(self, assignment.node)
                if value is not None:
                    values.append(value)
        return values

    def attribute_values(self, cls: cst.ClassDef, attribute: str) -> list[cst.BaseExpression]:
        """The expressions assigned to ``self.<attribute>`` in any method of ``cls`` (or as a class attribute)."""
        return self.attribute_index.get((cls, attribute), [])

    def unpacked_attribute(self, cls: cst.ClassDef, attribute: str) -> bool:
        """``self.<attribute>`` is also bound as one of several values unpacked from one (``self.a, self.b = f()``)."""
        self.attribute_index  # noqa: B018 - fills the set
        return (cls, attribute) in self._unpacked_attributes

    @cached_property
    def attribute_index(self) -> dict[tuple[cst.ClassDef, str], list[cst.BaseExpression]]:
        """``(class, attribute) -> values`` for every ``self.<attribute> = value`` and class attribute of the file."""
        index: dict[tuple[cst.ClassDef, str], list[cst.BaseExpression]] = {}
        for node in self.nodes_of(cst.Assign, cst.AnnAssign):
            if node.value is None:
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                if isinstance(target, (cst.Tuple, cst.List)):
                    for element in target.elements:
                        if is_member(element.value, ("self", "cls")) and (owner := self.method_owner(node)) is not None:
                            self._unpacked_attributes.add((owner, element.value.attr.value))
                    continue
                if is_member(target, ("self", "cls")):
                    owner = self.method_owner(node)
                    if owner is not None:
                        index.setdefault((owner, target.attr.value), []).append(node.value)
                elif isinstance(target, cst.Name):
                    line = self.parent(node)
                    block = self.parent(line) if line is not None else None
                    owner = self.parent(block) if block is not None else None
                    if isinstance(owner, cst.ClassDef):
                        index.setdefault((owner, target.value), []).append(node.value)
        return index

    def method_owner(self, node: cst.CSTNode) -> cst.ClassDef | None:
        """The class whose method (or a function nested in one) contains ``node``."""
        function = self.enclosing_function(node)
        while function is not None:
            owner = self.enclosing_class(function)
            if owner is not None:
                return owner
            function = self.enclosing_function(function)
        return None

    def bound_values(self, expression: cst.BaseExpression) -> list[cst.BaseExpression]:
        """What a name or ``self.attr`` expression was bound to; the expression itself for anything else."""
        if isinstance(expression, cst.Name):
            return self.assigned_values(expression)
        if is_member(expression, ("self",)):
            function = self.enclosing_function(expression)
            owner = self.enclosing_class(function) if function is not None else None
            if owner is not None:
                return self.attribute_values(owner, expression.attr.value)
            return []
        return [expression]

    def data_pipeline_reason(self, node: cst.CSTNode) -> str | None:
        """Why ``node`` is dataset preprocessing rather than serving (``dataset.map(fn)``, collators)."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                name = ancestor.name.value
                if name in self.mapped_functions:
                    return f"`{name}` is a dataset transform"
                if "collat" in name.lower():
                    return f"`{name}` is a collator"
            if isinstance(ancestor, cst.ClassDef) and "collat" in ancestor.name.value.lower():
                return f"`{ancestor.name.value}` is a collator"
            if isinstance(ancestor, cst.Call) and terminal_name(ancestor.func) in _DATASET_TRANSFORMS:
                return "it is a dataset transform"
        return None

    @cached_property
    def mapped_functions(self) -> frozenset[str]:
        """Functions passed to ``.map`` / ``.with_transform`` / ``.set_transform`` (datasets) in this file."""
        names = set()
        for site in self.index.sites(*_DATASET_TRANSFORMS):
            if not isinstance(site.call.func, cst.Attribute):
                continue
            call = site.call
            function = keyword_arg(call, "function") or keyword_arg(call, "transform") or positional_arg(call, 0)
            if function is not None and terminal_name(function.value):
                names.add(terminal_name(function.value))
        return frozenset(names)

    def debugging_exemption(self, node: cst.CSTNode) -> str | None:
        """Why a debugging switch at ``node`` is acceptable: not production code, or behind a flag (GEM4xx)."""
        if not self.is_production:
            return "the file is a test, benchmark or profiling script"
        if self.in_library_main_block(node):
            return "the `__main__` block of a module other files use: its author's check, run by hand"
        checking = self._checking_function(node)
        if checking is not None:
            return checking
        return self.flag_guard(node)

    def _checking_function(self, node: cst.CSTNode) -> str | None:
        """A function around ``node`` that measures or checks rather than serves: named for a test, a check or a
        latency (``test_model_latency``, ``CHECK_CUDA``, ``measure_throughput``), or running one input through two
        implementations and comparing their outputs (a kernel's harness, timed against PyTorch's); or a script's
        own code that compares two implementations so."""
        in_function = False
        for ancestor in self.ancestors(node):
            if not isinstance(ancestor, cst.FunctionDef):
                continue
            in_function = True
            name = ancestor.name.value.lower()
            if name.startswith(("test", "check")) or any(word in name for word in _MEASURING_WORDS):
                return f"it runs in `{ancestor.name.value}`, which measures or tests"
            if self.checks_parity(ancestor):
                return f"it runs in `{ancestor.name.value}`, which compares two implementations' outputs"
        if not in_function and self._module_level_parity_check:
            return "the script's own code compares two implementations' outputs: a harness that checks and times them"
        return None

    def in_library_main_block(self, node: cst.CSTNode) -> bool:
        """``node`` is in the ``__main__`` block of a module whose functions or classes other files of the project
        use: importing the module never runs the block."""
        block = next((a for a in self.ancestors(node) if isinstance(a, cst.If) and self.is_main_block(a)), None)
        if block is None or self.parent(block) is not self.module:
            return False
        return self.outside is not None and self.outside.used_by_other_modules(self)

    # -- paths ---------------------------------------------------------------------------
    @cached_property
    def is_production(self) -> bool:
        """Not a test, benchmark or profiling script (SPEC §2, "Production code")."""
        return is_production_path(self.context.relative_path)

    @cached_property
    def is_test_file(self) -> bool:
        """A test module: running it as a script (its ``__main__`` block) runs tests, not inference. Judged on
        its path inside the project (the folders above the project say nothing of it)."""
        inside = project_relative(self.context.source.absolute_path(), self.context.config.root, self.context.relative_path)
        if not is_test_path(inside):
            return False
        return is_test_module(inside, self._syntax_facts)

    @cached_property
    def _syntax_facts(self) -> SyntaxFacts:
        """What the file's ``ast`` shows (the triage's, or collected here for a file the project model parsed
        for a caller's context)."""
        triage = getattr(self.context, "triage", None)
        if triage is not None:
            return triage.facts
        tree = self.ast_tree()
        return collect(tree) if tree is not None else SyntaxFacts()

    @cached_property
    def is_training_file(self) -> bool:
        return is_training_path(self.context.config, self.context.relative_path)

    @cached_property
    def is_inference_file(self) -> bool:
        return is_inference_path(self.context.config, self.context.relative_path)

    # -- training markers --------------------------------------------------------------
    def is_training_call(self, node: cst.CSTNode) -> bool:
        """A training step: ``.backward()``, ``.zero_grad()``, ``optimizer.step()``, ``torch.autograd.grad``, a GradScaler.

        Decided syntactically where the spelling is unambiguous; names are resolved
        (which costs several parses of the file) only for a bare ``grad(...)``.
        """
        if not isinstance(node, cst.Call):
            return False
        func = node.func
        name = terminal_name(func)
        if isinstance(func, cst.Attribute) and name in fw.TRAINING_METHODS:
            return True
        if isinstance(func, cst.Attribute) and name == "step":
            return fw.steps_an_optimizer(terminal_name(func.value) or "")
        if isinstance(func, cst.Attribute) and name in ("train", "fit") and "trainer" in (terminal_name(func.value) or "").lower():
            return True  # transformers/TRL `trainer.train()`, Lightning `trainer.fit(model)`
        if name == "GradScaler":
            return True
        if name == "grad":
            if isinstance(func, cst.Attribute):
                return (dotted_name(func) or "").endswith("autograd.grad")
            return self.resolves_to(func, fw.TRAINING_CALLS)
        return False

    @cached_property
    def _training_owners(self) -> tuple[frozenset[cst.CSTNode], bool]:
        """Functions and loops that run a training step themselves, and whether the module trains at all."""
        owners: set[cst.CSTNode] = set()
        any_training = False
        # `train` and `fit` too: a trainer's loop (`trainer.train()`), which is_training_call tells from a model's switch
        for site in self.index.sites(*TRAINING_CANDIDATES, "train", "fit"):
            if not self.is_training_call(site.call):
                continue
            any_training = True
            for owner in reversed(site.owners):
                if isinstance(owner, (cst.For, cst.While)):
                    owners.add(owner)
                    continue
                if isinstance(owner, cst.FunctionDef):
                    owners.add(owner)
                break
        recalibrating = self._recalibrates_batch_norm
        return frozenset(owners | recalibrating), any_training or bool(recalibrating)

    @cached_property
    def _recalibrates_batch_norm(self) -> frozenset[cst.FunctionDef]:
        """Functions that put a model in training mode to recompute its batch-norm statistics: they set the layers'
        ``momentum`` or reset their running statistics, then run the model over data (the shape of torch's own
        ``swa_utils.update_bn``, written out for weight averaging). What they run updates the model's buffers: the
        training side, not a prediction."""
        if "momentum" not in self.context.text and "reset_running_stats" not in self.context.text:
            return frozenset()
        # `model.train()`; `model.train(False)` puts it in eval mode
        training = {self.enclosing_function(site.call) for site in self.index.sites("train") if not site.call.args} - {None}
        return frozenset(function for function in training if self._recomputes_statistics(function))  # type: ignore[misc]

    def _recomputes_statistics(self, function: cst.FunctionDef) -> bool:
        """``function`` sets a layer's ``momentum``, resets running statistics, or applies a function of this module
        that resets them (``model.apply(reset_bn)``)."""
        for node in self.subtree(function.body):
            if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Attribute) and node.target.attr.value == "momentum":
                return True
            if not isinstance(node, cst.Call):
                continue
            name = terminal_name(node.func)
            if name == "reset_running_stats":
                return True
            if name == "apply" and node.args and isinstance(node.args[0].value, cst.Name):
                helper = self.module_functions.get(node.args[0].value.value)
                if helper is not None and any(
                    isinstance(inner, (cst.Name, cst.Attribute)) and (inner.value if isinstance(inner, cst.Name) else inner.attr.value) in _RUNNING_STATISTICS
                    for inner in self.subtree(helper.body)
                ):
                    return True
        return False

    def trains(self, node: cst.CSTNode) -> bool:
        """``node`` (a function or loop) runs a training step in its own body."""
        return node in self._training_owners[0]

    @cached_property
    def module_trains(self) -> bool:
        """The module runs a training step, builds an optimizer (its steps may run in a helper of another
        module: ``train(model, loader, optimizer)``), makes adapters trainable or draws the autograd graph
        (:data:`frameworks.TRAINING_SETUP_CALLS`), or calls a project function or a method of a project class
        that trains in another module (``TrainLoop(model=model, ...).run_loop()``)."""
        if self._training_owners[1] or self._builds_optimizer or self._sets_up_training:
            return True
        return self.outside is not None and self.outside.script_trains(self) is not None

    @cached_property
    def _builds_optimizer(self) -> bool:
        return any(
            terminal_name(call.func) in fw.OPTIMIZER_CLASSES and self.resolves_with_prefix(call.func, ("torch.optim.",))
            for call in self.nodes_of(cst.Call)
        )

    @cached_property
    def _sets_up_training(self) -> bool:
        names = {name.rsplit(".", 1)[-1] for name in fw.TRAINING_SETUP_CALLS}
        return any(terminal_name(call.func) in names and self.resolves_to(call.func, fw.TRAINING_SETUP_CALLS) for call in self.nodes_of(cst.Call))

    # -- inference and training context -------------------------------------------------
    def context_of(self, node: cst.CSTNode) -> Verdict:
        """Where ``node`` runs: per request (inference), in training, or unknown. Training wins."""
        if self.is_training_file:
            return Verdict(Context.TRAINING, "the file matches training-paths")
        if self.is_test_file and not self.is_inference_file:
            # A test module's handlers, hooks and scripts are fixtures that exercise the code they test.
            return UNKNOWN
        inference: Verdict | None = None
        in_definition = False
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                in_definition = True
            if isinstance(ancestor, (cst.For, cst.While)) and self.trains(ancestor):
                return Verdict(Context.TRAINING, "the enclosing loop runs a training step")
            if isinstance(ancestor, cst.FunctionDef):
                if (
                    is_test_function(ancestor.name.value)
                    or apps.runs_once(self, ancestor)
                    or self.measures_or_traces(ancestor)
                    or self.builds_model(ancestor)
                    or self.checks_parity(ancestor)
                    or self.never_runs(ancestor)
                ):
                    # A test runs the code it checks; a cached Streamlit function runs once; a FLOP or
                    # parameter counter runs a model to measure it, an export to trace it; a factory runs
                    # the model it builds once, to initialise it; a parity check compares two implementations;
                    # a script's function that nothing names does not run at all.
                    return UNKNOWN
                verdict = self.function_verdict(ancestor)
                if verdict.context is Context.TRAINING:
                    return verdict
                if verdict.is_inference and (inference is None or (inference.name_only and not verdict.name_only)):
                    inference = verdict
            if isinstance(ancestor, cst.If) and self.is_main_block(ancestor) and inference is None and not self.is_test_file:
                if self.module_trains:
                    return Verdict(Context.TRAINING, "the script trains")
                if self.is_smoke_test or self._checking_block(ancestor) or self._runs_export_inputs(node, ancestor.body):
                    return UNKNOWN
                inference = Verdict(Context.INFERENCE, "the `__main__` block of a script that does not train")
        if inference is not None:
            return inference
        if not in_definition and self.is_streamlit_app and not self.is_test_file:
            return Verdict(Context.INFERENCE, "module-level code of a Streamlit app, which reruns on every interaction")
        if not in_definition and self.script_runs and not self.is_test_file:
            if self.module_trains:
                return Verdict(Context.TRAINING, "the script trains")
            if self.is_smoke_test or self._module_level_parity_check or self._runs_export_inputs(node, self.module):
                return UNKNOWN
            return Verdict(Context.INFERENCE, "module-level code of a script that runs what it builds, without training")
        if self.is_inference_file:
            return Verdict(Context.INFERENCE, "the file matches inference-paths")
        return UNKNOWN

    def never_runs(self, function: cst.FunctionDef) -> bool:
        """``function`` is a script's function that nothing names: defined at the top of a module with a
        ``__main__`` block and outside any package, undecorated, its name spelled nowhere else in the file (not
        called, not handed over, not in a string), no other module of the project calling anything so named,
        and no dispatch by name (``globals()``, ``fire.Fire()``). Left over from an earlier version of the
        script, it never runs. Never decided without the project (the flake8 plugin): another module may call it.
        A function the ``__main__`` block itself defines is decided from the file alone: no import of the module
        runs that block, so no other module can call it."""
        if function.decorators:
            return False
        in_main_block = self._defined_in_main_block(function)
        if not in_main_block and (self.outside is None or self.parent(function) is not self.module):
            return False
        cached = self._never_runs.get(function)
        if cached is None:
            text = self.context.text
            name = function.name.value
            cached = self._never_runs[function] = (
                self.has_main_block
                and len(re.findall(rf"(?<![\w.]){re.escape(name)}\b", text)) == 1
                and _DISPATCH_BY_NAME.search(text) is None
                and (in_main_block or not self.outside.may_be_called_elsewhere(self, function))
            )
        return cached

    def _defined_in_main_block(self, function: cst.FunctionDef) -> bool:
        block = self.parent(function)
        owner = self.parent(block) if isinstance(block, cst.IndentedBlock) else None
        return isinstance(owner, cst.If) and self.is_main_block(owner)

    def measures_or_traces(self, function: cst.FunctionDef) -> bool:
        """``function`` counts FLOPs, MACs or parameters, or exports a model: it is named so (``*flops*``,
        ``count_params``) or calls a counter (``FlopCounterMode``, fvcore, thop, ptflops, ...) or an exporter
        (``torch.jit.trace``, ``torch.onnx.export``): it runs the model once, to measure or trace it."""
        name = function.name.value.lower()
        if "flop" in name or "macs" in name or name.startswith(_MEASURING_PREFIXES) or name.endswith("model_summary"):
            return True
        if "flop" in self.context.relative_path.rpartition("/")[2].lower():  # a FLOP-counting module
            return True
        return function in self._counting_functions

    def checks_parity(self, function: cst.FunctionDef) -> bool:
        """``function`` runs one input through two implementations and compares their outputs, or asserts that an
        output equals values written down (:mod:`gemlint.analysis.parity`): a conversion's check, not a prediction."""
        known = self._parity_checks
        if function not in known:
            known[function] = checks_outputs(self.subtree(function.body))
        return known[function]

    def builds_model(self, function: cst.FunctionDef) -> bool:
        """``function`` is a factory: it returns a model (``return net.eval()``), so what it runs of that model
        runs once while building it (a k-means initialisation on random input, a shape probe); its callers
        serve the model."""
        known = self._factories
        if function not in known:
            # `return model, outputs` hands back what it computed too: only a lone model counts.
            known[function] = any(not isinstance(value, cst.Tuple) and bool(self.models.origins(value)) for value in self.returned_values(function))
        return known[function]

    def returned_values(self, function: cst.FunctionDef, *, yielded: bool = False) -> list[cst.BaseExpression]:
        """The values ``function`` itself returns (``return x``; with ``yielded``, what it yields too), in source
        order: not those of the functions nested in it."""
        kinds = (cst.Return, cst.Yield) if yielded else (cst.Return,)
        return [node.value for node in self._returning_nodes.get(function, ()) if isinstance(node, kinds) and node.value is not None]

    @cached_property
    def _returning_nodes(self) -> dict[cst.FunctionDef, list[cst.Return | cst.Yield]]:
        """Each function's ``return`` and ``yield`` nodes: one pass over the module for every function asked about."""
        returning: dict[cst.FunctionDef, list[cst.Return | cst.Yield]] = {}
        for node in self.nodes_of(cst.Return, cst.Yield):
            function = self.enclosing_function(node)
            if function is not None:
                returning.setdefault(function, []).append(node)
        return returning

    @cached_property
    def _counting_functions(self) -> frozenset[cst.FunctionDef]:
        found = {function for call in self._measuring_calls if (function := self.enclosing_function(call)) is not None}
        found |= self._hook_counting_functions
        return frozenset(self._callers_within_module(found)) if found else frozenset()

    @cached_property
    def _hook_counting_functions(self) -> frozenset[cst.FunctionDef]:
        """Functions that hang forward hooks on a model's modules and count parameters in them (``p.numel()``, or
        a walk of ``module.parameters()``, in a function nested in it): a model summary written out (torchsummary's,
        HRNet's, copied into a project), which runs the model once to measure it. Hooks that only keep activations
        (features taken from a layer) count nothing."""
        hooking, counting = set(), set()
        for call in self.nodes_of(cst.Call):
            name = terminal_name(call.func)
            if name in _HOOK_REGISTRATIONS:
                hooking.add(self._outermost_function(call))
            elif name in _PARAMETER_COUNTING and (outer := self._outermost_function(call)) is not self.enclosing_function(call):
                counting.add(outer)  # in a function nested in it, the hook (not `next(model.parameters()).device`)
        return frozenset(hooking & counting - {None})

    def _outermost_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The function ``node`` is in that no other function holds (its hooks are functions nested in it)."""
        outer = None
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                outer = ancestor
        return outer

    def counts(self, call: cst.Call) -> bool:
        """``call`` is a FLOP, MAC or parameter counter or a model summary of a counting package (thop, fvcore,
        torchinfo, torchsummary, ...): it runs the model once on an example input to measure it."""
        return (
            terminal_name(call.func) in fw.COUNTING_AND_EXPORT_NAMES
            and self.imports_any(fw.COUNTING_PACKAGES)
            and self.resolves_with_prefix(call.func, fw.COUNTING_CALLS)
        )

    @cached_property
    def _measuring_calls(self) -> frozenset[cst.Call]:
        """The calls that count a model's FLOPs or parameters or export it: a counter or an exporter spelled as
        one (``torch.onnx.export``), or, with the project, a function of another module that exports (itself or
        through its helpers: ``build_binary(model, inputs)`` calling ``torch.export.export``)."""
        found = set()
        # Names are resolved only for calls spelled like a counter or an exporter, and counters only where the
        # module imports a counting package: resolving a name costs the file's scope analysis.
        for call in self.nodes_of(cst.Call):
            name = terminal_name(call.func)
            if name is not None and _COUNTER_NAME.search(name):
                # a counter of the project's own (a vendored ptflops: `add_flops_counting_methods(model)`,
                # `model.start_activation_count()`): the function runs the model to measure it
                found.add(call)
                continue
            if name in fw.COUNTING_AND_EXPORT_NAMES:
                spelled = dotted_name(call.func) or ""
                exporting = spelled.endswith(fw.EXPORT_SPELLINGS) and self.resolves_to(call.func, fw.EXPORT_CALLS)
                if exporting or self.counts(call):
                    found.add(call)
                    continue
            if self.outside is not None and name is not None and self._imported_by_name(call.func):
                # a function of another module is called through a name this module imports
                if self.outside.helper_exports(self, call.func) is not None:
                    found.add(call)
        return frozenset(found)

    def _imported_by_name(self, func: cst.BaseExpression) -> bool:
        """The call's spelling starts with a name an import of the module binds (``lowering.build``, ``build``);
        True where the imports cannot be read."""
        head = _head_name(func)
        return head is not None and (self._import_names is None or self._import_names.imports(head))

    def _callers_within_module(self, functions: set[cst.FunctionDef]) -> set[cst.FunctionDef]:
        """``functions`` and the functions of this module that call one of them (``_save_model(...)``, or
        ``self._save_model(...)`` in the same class), until none is added: a function that exports through a
        helper exports too. Other modules' helpers are not followed."""
        found = set(functions)
        todo = list(functions)
        while todo:
            function = todo.pop()
            owner = self.enclosing_class(function)
            for call in self.callers_of(function):
                caller = self.enclosing_function(call)
                if caller is None or caller in found:
                    continue
                # A bare name calls a module function; `self.x(...)` a method of the caller's own class.
                if (owner is None) != isinstance(call.func, cst.Name) or (owner is not None and self.enclosing_class(caller) is not owner):
                    continue
                found.add(caller)
                todo.append(caller)
        return found

    @cached_property
    def is_streamlit_app(self) -> bool:
        return apps.is_streamlit_app(self)

    @cached_property
    def _handed_to_gradio(self) -> list[tuple[str, str]]:
        return apps.handed_to_gradio(self)

    @cached_property
    def gradio_callbacks(self) -> frozenset[str]:
        """How the functions handed to Gradio are spelled in this module (:mod:`gemlint.analysis.apps`)."""
        return frozenset(spelled for _, spelled in self._handed_to_gradio)

    @cached_property
    def _handed_to_bots(self) -> frozenset[str]:
        return bots.handed_to_bots(self)

    def gradio_callback_elsewhere(self, function: cst.FunctionDef) -> str | None:
        """The module of another file that hands ``function`` to Gradio, which calls it on every event."""
        if self.outside is None:
            return None
        known = self._gradio_elsewhere
        if function not in known:
            known[function] = self.outside.handed_to_gradio(self, function)
        return known[function]

    def route_handler_elsewhere(self, function: cst.FunctionDef) -> str | None:
        """The module of another file whose route table hands ``function`` to a web framework, which calls it on
        every request (Django's ``urls.py``)."""
        return self.outside.routed_elsewhere(self, function) if self.outside is not None else None

    def is_serving_api(self, function: cst.FunctionDef) -> bool:
        """``function`` is decorated as a serving framework's API, run per request (BentoML's ``@bentoml.api``,
        Jina's ``@requests``, bare or called with ``on=``)."""
        for decorator in function.decorators:
            expression = decorator.decorator
            target = expression.func if isinstance(expression, cst.Call) else expression
            if terminal_name(target) in fw.API_DECORATOR_NAMES and self.resolves_to(target, fw.API_DECORATORS):
                return True
        return False

    def is_torchserve_entry(self, function: cst.FunctionDef) -> bool:
        """``function`` is TorchServe's module-level entry point, ``def handle(data, context)`` at the top of a
        handler file, which it calls for every batch of requests."""
        params = tuple(param.name.value for param in named_parameters(function))  # as the project's summary lists them
        return self.parent(function) is self.module and fw.is_torchserve_entry(function.name.value, params)

    def is_queue_task(self, function: cst.FunctionDef) -> bool:
        """``function`` is a Celery task, run for every job a queue hands the worker: ``@shared_task``, or
        ``@app.task`` on an app this module builds (``app = Celery(...)``), bare or called."""
        if not self.imports_any(("celery",)):
            return False
        for decorator in function.decorators:
            expression = decorator.decorator
            target = expression.func if isinstance(expression, cst.Call) else expression
            if self.resolves_to(target, fw.CELERY_TASK_DECORATORS):
                return True
            if isinstance(target, cst.Attribute) and target.attr.value == "task" and isinstance(target.value, cst.Name):
                values = self.assigned_values(target.value)
                if any(isinstance(value, cst.Call) and self.resolves_to(value.func, fw.CELERY_APPS) for value in values):
                    return True
        return False

    def is_bot_handler(self, function: cst.FunctionDef) -> bool:
        """``function`` is a chat bot's handler, run on every message (:mod:`gemlint.analysis.bots`): decorated as
        one, or a module-level function handed to a handler class or registration."""
        if bots.registers_handler(self, function):
            return True
        return self.enclosing_class(function) is None and function.name.value in self._handed_to_bots

    @cached_property
    def gradio_page_loads(self) -> frozenset[str]:
        """How the functions Gradio runs each time a visitor opens the page are spelled in this module."""
        return frozenset(spelled for listener, spelled in self._handed_to_gradio if listener == "load")

    def reported_context(self, node: cst.CSTNode, verdict: Verdict | None = None) -> Verdict:
        """:meth:`context_of` (or ``verdict``, already asked) as the rules report on it: inference context that
        rests on a name alone (no entry point reaches the function through its callers) counts only with
        ``strict`` (its findings then carry precision "medium")."""
        verdict = self.context_of(node) if verdict is None else verdict
        if verdict.is_inference and verdict.name_only and not getattr(self.context.config, "strict", False):
            return UNKNOWN
        return verdict

    @cached_property
    def is_smoke_test(self) -> bool:
        """A script that runs a model built from scratch (no weights loaded anywhere in the module) on made-up
        inputs (``torch.randn``, ``torch.zeros``, ...): it checks shapes, it serves nothing (SPEC §2, "Not
        inference")."""
        if self.loads_weights:
            return False
        return any(self._made_up_tensor(call) for call in self.nodes_of(cst.Call))

    @cached_property
    def loads_weights(self) -> bool:
        """The module loads trained weights somewhere (``from_pretrained``, ``torch.load``, a state dict, a
        checkpoint): what makes a script's ``__main__`` block a prediction rather than a smoke test."""
        return any(self._loads_weights(call) for call in self.nodes_of(cst.Call))

    def _loads_weights(self, call: cst.Call) -> bool:
        name = terminal_name(call.func)
        if name == "from_pretrained" and isinstance(call.func, cst.Attribute):
            owner = terminal_name(call.func.value) or ""
            if owner.endswith(fw.NON_MODEL_PRETRAINED):
                return False  # `LlamaConfig.from_pretrained(path)`: a configuration, or a tokenizer: no weights
        if name in fw.WEIGHT_LOADING_CALLS or (name == "load" and self.resolves_to(call.func, fw.MODEL_LOADERS)):
            return True
        return any(arg.keyword is not None and arg.keyword.value in fw.WEIGHT_KEYWORDS and _names_weights(arg.value) for arg in call.args)

    @cached_property
    def _module_level_parity_check(self) -> bool:
        """The script's module-level code checks a model's outputs (:meth:`checks_parity`): a conversion's check
        written without a ``__main__`` block, as :meth:`_checking_block` finds one in it."""
        return checks_outputs(self.subtree(self.module))

    def _runs_export_inputs(self, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """``node`` is a call that runs the inputs an export in ``scope`` (a script's module-level code or its
        ``__main__`` block) is given: a dry run before the export, or the reference outputs saved beside it
        (``golden = model(*example_inputs)`` with ``torch.export.export(model, example_inputs)``). What the script
        runs on other inputs is a prediction all the same."""
        if not isinstance(node, cst.Call) or not node.args:
            return False
        exported = self._export_inputs(scope)
        return bool(exported) and not exported.isdisjoint(self._input_roots(node.args[0].value, scope))

    def _export_inputs(self, scope: cst.CSTNode) -> frozenset[str]:
        """The names the example inputs of the exports in ``scope`` are read from (the exporter's second positional
        argument, or its ``args``/``example_inputs``/``inputs`` keyword), through one assignment of ``scope``. A
        helper of the module that exports is given its example inputs where its own export reads them
        (``save_onnx(sample, net)`` whose body exports ``args=(sample,)``), else as an exporter is."""
        known = self._export_input_names
        if scope not in known:
            known[scope] = frozenset()  # a helper that calls itself adds nothing
            counting = self._counting_functions
            names: set[str] = set()
            for call in self.subtree(scope):
                if not isinstance(call, cst.Call):
                    continue
                helper = self.module_functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
                if call not in self._measuring_calls and helper not in counting:
                    continue
                passed = self._passed_as_export_inputs(call, helper) if helper is not None and call not in self._measuring_calls else None
                if passed is None:  # as an exporter takes them: after the model, or by keyword
                    passed = [*_positional(call)[1:2], *(arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in _EXAMPLE_INPUT_KEYWORDS)]
                for value in passed:
                    names.update(self._input_roots(value, scope))
            known[scope] = frozenset(names)
        return known[scope]

    def _passed_as_export_inputs(self, call: cst.Call, helper: cst.FunctionDef) -> list[cst.BaseExpression] | None:
        """The arguments of ``call`` that ``helper`` hands its exports as example inputs, by the parameters its
        own exports read them from; None when its exports read none of its parameters."""
        used = self._export_inputs(helper)
        parameters = [param.name.value for param in (*helper.params.posonly_params, *helper.params.params)]
        wanted = [index for index, name in enumerate(parameters) if name in used]
        keywords = {name for name in used if name in parameters or any(param.name.value == name for param in helper.params.kwonly_params)}
        if not wanted and not keywords:
            return None
        positional = _positional(call)
        passed = [positional[index] for index in wanted if index < len(positional)]
        passed += [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in keywords]
        return passed

    def _input_roots(self, value: cst.BaseExpression, scope: cst.CSTNode) -> set[str]:
        """The names ``value`` is read from (``inputs`` for ``inputs[0]``, ``*example_inputs``, ``(x, mask)``), with
        those of the value a name was assigned in ``scope`` (``test_in = inputs[0]``)."""
        roots = _root_names(value)
        aliases = self._scope_aliases(scope)
        return roots.union(*(aliases.get(name, ()) for name in roots))

    def _scope_aliases(self, scope: cst.CSTNode) -> dict[str, set[str]]:
        known = self._aliases_in
        if scope not in known:
            aliases: dict[str, set[str]] = {}
            for node in self.subtree(scope):
                if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                    aliases.setdefault(node.targets[0].target.value, set()).update(_root_names(node.value))
            known[scope] = aliases
        return known[scope]

    def _checking_block(self, block: cst.If) -> bool:
        """A ``__main__`` block that checks rather than predicts: a shape check (:meth:`_smoke_test_block`) or a
        parity check of two implementations. Asked for every node under the block, so kept per block."""
        known = self._checking_blocks
        if block not in known:
            known[block] = (
                self._smoke_test_block(block) or checks_outputs(self.subtree(block.body)) or self._library_self_check(block)
            )
        return known[block]

    def _library_self_check(self, block: cst.If) -> bool:
        """The ``__main__`` block of a module the project's other files use (they call its functions or build its
        classes), whose only effect is printing: its author's check of the library's code (shapes, dtypes, a
        sample output), not how the project runs it. A block that saves, shows, serves or calls anything else
        for its effect is a script's run. A block that only calls this module's functions (``main()``) prints
        what they print: each of those must only print."""
        if not (only_prints(block.body) or self._only_calls_printing_functions(block.body, set())):
            return False
        outside = self.outside
        return outside is not None and outside.used_by_other_modules(self)

    def _only_calls_printing_functions(self, body: cst.BaseSuite, seen: set[str]) -> bool:
        """Every statement of ``body`` is a call of a function of this module, without arguments, whose own body
        only prints, or only calls such functions in turn."""
        statements = _simple_statements(body)
        if not statements:
            return False
        for small in statements:
            call = small.value if isinstance(small, cst.Expr) else None
            function = self.module_functions.get(call.func.value) if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and not call.args else None
            if function is None or function.name.value in seen:
                return False
            seen.add(function.name.value)
            if not (only_prints(function.body) or self._only_calls_printing_functions(function.body, seen)):
                return False
        return True

    def _smoke_test_block(self, block: cst.If) -> bool:
        """A ``__main__`` block that builds a model from scratch and runs it on made-up inputs, loading no
        weights itself and calling no function of this module (which might): a model file's shape check, even
        where other code of the module loads weights."""
        calls = [node for node in self.subtree(block.body) if isinstance(node, cst.Call)]
        if any(self._loads_weights(call) for call in calls):
            return False
        if any(isinstance(call.func, cst.Name) and call.func.value in self.module_functions and self._call_may_load(call) for call in calls):
            return False
        return any(self._made_up_tensor(call) for call in calls)

    def _call_may_load(self, call: cst.Call) -> bool:
        """Calling this module's function may load weights: it loads some, other than only under ``if <param>:``
        for a parameter that defaults to nothing (``ckpt_path=""``, ``None``, ``False``) and that ``call`` does not
        pass (``create_encoder()``: the factory loads a checkpoint only when handed one)."""
        function = self.module_functions[call.func.value]  # type: ignore[attr-defined]
        loads = [node for node in self.subtree(function.body) if isinstance(node, cst.Call) and self._loads_weights(node)]
        if not loads:
            return False
        params = list(function.params.params)
        passed = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        positional = sum(1 for arg in call.args if arg.keyword is None)
        if any(arg.star for arg in call.args):
            return True
        unset = {
            param.name.value
            for index, param in enumerate(params)
            if index >= positional
            and param.name.value not in passed
            and param.default is not None
            and (default := literal_value(param.default)) is not NOT_LITERAL
            and not default
        }
        return not all(self._only_when_set(load, function, unset) for load in loads)

    def _only_when_set(self, node: cst.CSTNode, function: cst.FunctionDef, unset: set[str]) -> bool:
        """``node`` runs only under ``if <name>:`` / ``if <name> is not None:`` for a name of ``unset``."""
        child = node
        for ancestor in self.ancestors(node):
            if ancestor is function:
                return False
            if isinstance(ancestor, cst.If) and child is ancestor.body and _tested_name(ancestor.test) in unset:
                return True
            child = ancestor
        return False

    def discarded_run_on_made_up_input(self, call: cst.Call) -> bool:
        """``model(torch.ones(1, 3, 32, 32))`` whose result nothing reads, outside a request handler: a warm-up or
        a check run on a made-up input (its other arguments literals or flags), made once for its effect. Its graph
        is dropped as soon as it is built, and no prediction comes out of it. Likewise a run of a script's
        module-level code, outside any loop, whose result is dropped (``model(get_test_input(size))`` before
        the frames are read): it runs once, whatever its input, and no hook keeps what it computes. And, outside
        request handlers, a dropped run of a layer of torch.nn itself (``norm(images)`` to update a batch norm's
        statistics), which keeps nothing of its output."""
        if self._dropped_once_at_module_level(call):
            return True
        parent = self.parent(call)
        dropped_layer_run = (
            isinstance(parent, cst.Expr) and (receiver := self.models.forward_receiver(call)) is not None and self.models.only_torch_layers(receiver)
        )  # `norm(images)` run only to update a batch norm's running statistics: a torch.nn layer keeps nothing
        tensors = [arg.value for arg in call.args if not _scalar_argument(arg.value)]
        if not dropped_layer_run and (not tensors or not all(self._made_up_value(value, set()) for value in tensors)):
            return False
        function = self.enclosing_function(call)
        if function is not None and self._entry_reason(function) is not None:
            return False  # in a handler it runs on every request (a health check's probe forward), not once
        if dropped_layer_run:
            return True
        if isinstance(parent, cst.Expr) or self._shape_only(call):
            return True  # dropped, or read for its shape alone (`print(model(x)[1].shape)`)
        if isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1:
            names = _target_names(parent.targets[0].target)
            return bool(names) and not any(self._read_beyond_shape(name) for name in names)
        return False

    def _dropped_once_at_module_level(self, call: cst.Call) -> bool:
        if not isinstance(self.parent(call), cst.Expr) or self.enclosing_function(call) is not None:
            return False
        if any(isinstance(ancestor, (cst.For, cst.While, cst.BaseComp)) for ancestor in self.ancestors(call)):
            return False  # once per item
        return not self._hangs_forward_hooks

    @cached_property
    def _hangs_forward_hooks(self) -> bool:
        """The module hangs a hook on a module's forward somewhere (one may keep what a run computes)."""
        return any(terminal_name(call.func) in _HOOK_REGISTRATIONS for call in self.nodes_of(cst.Call))

    def converted_to_numpy(self, call: cst.Call) -> bool:
        """What ``call`` returns is made a NumPy array as it is (``model(x).cpu().numpy()``, ``np.asarray(out)``), with
        no ``detach`` between: on a tensor that records a graph that raises, so in working code the forward records
        none (the model turns autograd off itself, or returns arrays)."""
        if self._made_numpy(call):
            return True
        parent = self.parent(call)
        if not (isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1):
            return False
        target = parent.targets[0].target
        scope = self._scopes.get(target) if isinstance(target, cst.Name) else None
        return scope is not None and any(
            self._made_numpy(access.node)
            for assignment in scope[target.value]
            if isinstance(assignment, Assignment) and assignment.node is target
            for access in references_of(assignment)
        )

    def _made_numpy(self, node: cst.CSTNode) -> bool:
        """``node`` is made a NumPy array, through moves and casts (``.cpu().float().numpy()``)."""
        while True:
            parent = self.parent(node)
            if isinstance(parent, cst.Attribute) and parent.value is node:
                call = self.parent(parent)
                if not isinstance(call, cst.Call) or call.func is not parent:
                    return False
                if parent.attr.value == "numpy":
                    return not call.args  # `.numpy(force=True)` detaches first
                if parent.attr.value not in _MOVES_AND_CASTS or parent.attr.value == "astype":
                    return False
                node = call
                continue
            if isinstance(parent, cst.Arg):
                call = self.parent(parent)
                return isinstance(call, cst.Call) and bool(call.args) and call.args[0] is parent and self.resolves_to(call.func, _NUMPY_CONVERSIONS)
            return False

    def _made_up_value(self, value: cst.BaseExpression, seen: set[str]) -> bool:
        """A tensor made up here, perhaps moved or cast (``torch.ones(...).cuda()``), or a name bound only to such;
        or the keyword arguments of a call (``dict(x=torch.randn(...), mask=...)``, ``{"x": ...}``) made up so."""
        value = _unmoved(value, _MOVES_AND_CASTS | _RESHAPES)  # `mask.repeat(4, 1)`: the same values, laid out anew
        if isinstance(value, cst.Call) and terminal_name(value.func) in ("cat", "stack") and value.args:
            pieces = value.args[0].value  # `torch.cat([torch.ones(...), torch.zeros(...)], dim=-1)`
            if isinstance(pieces, (cst.List, cst.Tuple)) and pieces.elements and self.resolves_with_prefix(value.func, ("torch.",)):
                return all(self._made_up_value(element.value, seen) for element in pieces.elements)
        if isinstance(value, cst.Call) and is_name(value.func, "dict") and value.args:
            return all(arg.keyword is not None and (_scalar_argument(arg.value) or self._made_up_value(arg.value, seen)) for arg in value.args)
        if isinstance(value, cst.Dict) and value.elements:
            return all(
                isinstance(element, cst.DictElement) and (_scalar_argument(element.value) or self._made_up_value(element.value, seen))
                for element in value.elements
            )
        if isinstance(value, cst.Call) and value.args and self.resolves_to(value.func, _AS_TENSOR):
            return self._made_up_value(value.args[0].value, seen)  # an array made up, as a tensor
        if isinstance(value, cst.Call):
            return self._made_up_tensor(value)
        if isinstance(value, (cst.UnaryOperation, cst.BinaryOperation)):
            # `-np.random.rand(...) * 255`: scaled, still made up; the operands gathered with a work list (a long
            # chain of operations is a deep tree)
            operands, todo = [], [value]
            while todo:
                part = todo.pop()
                if isinstance(part, cst.UnaryOperation):
                    todo.append(part.expression)
                elif isinstance(part, cst.BinaryOperation):
                    todo += [part.left, part.right]
                else:
                    operands.append(part)
            made_up = [o for o in operands if not _scalar_argument(o)]
            return bool(made_up) and all(self._made_up_value(o, seen) for o in made_up)
        if isinstance(value, cst.Name) and value.value not in seen:
            seen.add(value.value)
            values = [v for v in self.assigned_values(value) if not _moves_name(v, value.value)]
            return bool(values) and all(self._made_up_value(v, seen) for v in values)
        return False

    def values_unread(self, call: cst.Call, depth: int = 0) -> bool:
        """Nothing reads the values ``call`` computes: its result is dropped, read for its shape or type alone
        (``out.shape``, ``type(out)``), or handed only to other models' runs whose values nothing reads either (a
        notebook's check of an encoder's output shape, then of the decoder's it feeds)."""
        parent = self.parent(call)
        if isinstance(parent, cst.Expr) or self._shape_only(call):
            return True
        if not (isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1):
            return False
        names = _target_names(parent.targets[0].target)
        return bool(names) and all(self._read_for_shape_alone(name, depth) for name in names)

    def _read_for_shape_alone(self, target: cst.Name, depth: int) -> bool:
        scope = self._scopes.get(target)
        if scope is None:
            return False
        for assignment in scope[target.value]:
            if not isinstance(assignment, Assignment):
                continue
            for access in references_of(assignment):
                if self._shape_only(access.node):
                    continue
                run = self._run_given(access.node)
                if run is None or depth >= 2 or not self.values_unread(run, depth + 1):
                    return False
        return True

    def _run_given(self, node: cst.CSTNode) -> cst.Call | None:
        """The model run ``node`` is an argument of (``decoder(features, captions)``), or None."""
        argument = self.parent(node)
        call = self.parent(argument) if isinstance(argument, cst.Arg) and argument.value is node else None
        return call if isinstance(call, cst.Call) and self.models.forward_receiver(call) is not None else None

    def _read_beyond_shape(self, target: cst.Name) -> bool:
        """The variable ``target`` binds is read somewhere in its scope for more than its shape: a check that
        prints ``output[0].shape`` reads no prediction."""
        scope = self._scopes.get(target)
        if scope is None:
            return True
        return any(
            not self._shape_only(access.node)
            for assignment in scope[target.value]
            if isinstance(assignment, Assignment)
            for access in references_of(assignment)
        )

    def _shape_only(self, node: cst.CSTNode) -> bool:
        """``node`` is read for its shape alone: ``x.shape``, ``x[0].shape``, ``x.last_hidden_state.size()``, ``len(x)``,
        ``type(x)``, ``x.keys()``."""
        while True:
            parent = self.parent(node)
            if isinstance(parent, cst.Subscript) and parent.value is node:
                node = parent  # `output[0]`: an element, whose shape may be what is read
                continue
            if isinstance(parent, cst.Attribute) and parent.value is node:
                if parent.attr.value in _SHAPE_ATTRIBUTES:
                    return True
                call = self.parent(parent)
                if isinstance(call, cst.Call) and call.func is parent:
                    return parent.attr.value == "keys" and not call.args  # the names of an output's fields
                node = parent  # `output.last_hidden_state`: a field, whose shape may be what is read
                continue
            if isinstance(parent, cst.Arg):
                call = self.parent(parent)  # `len(x)`, `isinstance(x, tuple)`: its size or its type
                return isinstance(call, cst.Call) and call.args[0] is parent and any(is_name(call.func, name) for name in ("len", "isinstance", "type"))
            if isinstance(parent, cst.For) and parent.iter is node and isinstance(parent.target, cst.Name):
                return not self._read_beyond_shape(parent.target)  # `for x in outputs: print(x.shape)`
            return False

    def _made_up_tensor(self, call: cst.Call) -> bool:
        """``torch.randn(1, 3, 224, 224)``, ``np.zeros(...)``: an input made up rather than read; so is a legacy
        constructor given only sizes (``torch.Tensor(1, 3, 400, 600)``, uninitialised memory), not data."""
        name = terminal_name(call.func)
        if name in fw.LEGACY_TENSOR_TYPES:
            sizes = bool(call.args) and all(arg.keyword is None and isinstance(arg.value, cst.Integer) for arg in call.args)
            return sizes and self.resolves_with_prefix(call.func, ("torch.",))
        return name in fw.MADE_UP_TENSORS and self.resolves_with_prefix(call.func, ("torch.", "numpy."))

    @cached_property
    def script_runs(self) -> bool:
        """Module-level code calls what module-level code built (see :class:`~gemlint.analysis.triage.SyntaxFacts`)."""
        triage = getattr(self.context, "triage", None)
        if triage is not None:
            return triage.facts.script_runs
        try:  # a file the project model parsed for a caller's context: no triage was made for it
            return script_runs(ast.parse(self.context.text))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False

    @cached_property
    def may_have_inference_context(self) -> bool:
        """Whether any code of this file can be in inference context, decided without resolving names
        where the spelling rules it out. Rules that need model tracking (which resolves every call's
        name, several parses' worth of work) ask this first and skip files that cannot match."""
        if self.is_training_file:
            return False
        if self.is_inference_file:
            return True
        if self.is_test_file:
            return False  # context_of: a test module's code runs in no inference context
        if self.outside is not None and self.outside.gives_context(self):
            return True
        # A script's module-level code and `__main__` block serve predictions only where the script does not
        # train (context_of): a training script is left to its functions' own reasons.
        script = self.script_runs or self.has_main_block
        if script and not self.module_trains:
            return True
        if self.gradio_callbacks or self.is_streamlit_app:
            return True
        return any(self._inference_reason(function) for function in self.nodes_of(cst.FunctionDef))

    def function_verdict(self, function: cst.FunctionDef) -> Verdict:
        cached = self._function_verdicts.get(function)
        if cached is None:
            cached = self.own_verdict(function)
            if cached.context is Context.UNKNOWN:
                cached = self._verdict_from_callers(function)
            elif cached.reason == self._evaluation_reason(function):
                # Evaluation code by its body, unless a caller hands what it computes to a training step
                # (a PPO rollout's log-probabilities go into the loss): then its forwards are the loss's.
                trainer = self._results_train(function)
                if trainer is not None:
                    cached = Verdict(Context.TRAINING, f"what `{function.name.value}` returns is trained on in {trainer}")
            elif cached.name_only:
                # A name is weak evidence: `evaluate_actions` of an RL policy feeds the training loss; an
                # entry point that calls it is strong evidence.
                trainer = self._training_caller(function)
                if trainer is not None:
                    cached = Verdict(Context.TRAINING, f"`{function.name.value}` is called from training code ({trainer})")
                else:
                    callers = self._verdict_from_callers(function)
                    if callers.is_inference and not callers.name_only:
                        cached = callers
            self._function_verdicts[function] = cached
        return cached

    def own_verdict(self, function: cst.FunctionDef) -> Verdict:
        """The context ``function`` has by itself (its name, decorators, hooks, body), before its callers count."""
        cached = self._own_verdicts.get(function)
        if cached is None:
            cached = self._own_verdicts[function] = self._own_verdict(function)
        return cached

    def _own_verdict(self, function: cst.FunctionDef) -> Verdict:
        name = function.name.value
        if name in fw.LIGHTNING_TRAINING_HOOKS:
            return Verdict(Context.TRAINING, f"`{name}` is a Lightning training hook")
        if self.trains(function):
            return Verdict(Context.TRAINING, f"`{name}` runs a training step")
        if "train" in (parts := name.lower().strip("_").split("_"))[:1] + parts[-1:]:
            # `train`, `train_cli`, `add_actor_information_and_train`: its steps may run in helpers of other
            # modules (an algorithm's `update`), but what it calls is training code, whatever else it looks like
            return Verdict(Context.TRAINING, f"`{name}` is named for training")
        reason = self._inference_reason(function)
        if reason:
            return Verdict(Context.INFERENCE, reason, name_only=reason == self._named_reason(function), worker_thread=self._runs_in_worker_thread(function))
        return UNKNOWN

    def _runs_in_worker_thread(self, function: cst.FunctionDef) -> str | None:
        """Gradio runs its callbacks, plain and async, in threads of its server, never the one that imported the app;
        FastAPI runs a route declared with a plain ``def`` in its thread pool (an ``async def`` one runs in the event
        loop's thread, where the server imported the app)."""
        if self.is_gradio_callback(function) or self.gradio_callback_elsewhere(function) is not None:
            return "Gradio runs its callbacks in its server's threads"
        if function.asynchronous is None and any(self._fastapi_route(decorator.decorator) for decorator in function.decorators):
            return "FastAPI runs a route declared with a plain `def` in its thread pool"
        return None

    def _fastapi_route(self, decorator: cst.BaseExpression) -> bool:
        """``@app.post(...)`` on a name bound to ``FastAPI()`` or ``APIRouter()``."""
        target = decorator.func if isinstance(decorator, cst.Call) else decorator
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and routes.is_route_decorator(self, decorator)):
            return False
        return any(isinstance(value, cst.Call) and self.resolves_to(value.func, _FASTAPI_APPS) for value in self.assigned_values(target.value))

    def _inference_reason(self, function: cst.FunctionDef) -> str | None:
        # Evaluation code is evidence, so it is asked before the name (which alone is weak).
        return self._entry_reason(function) or self._evaluation_reason(function) or self._named_reason(function)

    def _entry_reason(self, function: cst.FunctionDef) -> str | None:
        """Why ``function`` runs once per request or event: a route handler, a serving API or hook, a Gradio
        callback, a Lightning prediction hook."""
        name = function.name.value
        for decorator in function.decorators:
            if routes.is_route_decorator(self, decorator.decorator):
                return f"`{name}` is an HTTP route handler"
        resource = routes.routed_resource_reason(self, function)
        if resource is not None:
            return resource
        if self.is_serving_api(function):
            return f"`{name}` is a serving API"
        if self.is_registered_handler(function):
            return f"`{name}` is registered as a route handler"
        if self.is_gradio_callback(function):
            return f"`{name}` is a Gradio callback (it runs on every event)"
        handing = self.gradio_callback_elsewhere(function)
        if handing is not None:
            return f"`{name}` is handed to Gradio in `{handing}` (it runs on every event)"
        routing = self.route_handler_elsewhere(function)
        if routing is not None:
            return f"`{name}` is registered as a route handler in `{routing}`"
        if self.is_bot_handler(function):
            return f"`{name}` is {bots.handler_kind(self)} (it runs on every message)"
        if self.is_queue_task(function):
            return f"`{name}` is a Celery task (it runs for every job)"
        owner = self.enclosing_class(function)
        if owner is None and self.is_torchserve_entry(function):
            return f"`{name}` is TorchServe's module-level entry point (it runs for every request)"
        if owner is not None:
            hooks = self.class_hooks(owner)
            if hooks is not None and (name in hooks or (not hooks and not name.startswith("_")) or (not hooks and name == "__call__")):
                return f"`{owner.name.value}.{name}` is a serving hook"
        if name in fw.LIGHTNING_INFERENCE_HOOKS:
            return f"`{name}` is a Lightning prediction hook"
        return None

    def _evaluation_reason(self, function: cst.FunctionDef) -> str | None:
        known = self._evaluation_reasons
        if function not in known:
            name = function.name.value
            # A start-up hook that runs the model it loads (calibration, a warm-up) runs it once, not per request;
            # a module's own forward (a frozen text encoder run in eval mode inside a conditioner) runs wherever
            # the module runs, in training as in inference: its callers decide.
            evaluates = not fw.is_setup_hook(name) and self._evaluates(function) and not self.models.inside_module_forward(function.body)
            known[function] = f"`{name}` puts a model in eval mode and runs it without training (evaluation code)" if evaluates else None
        return known[function]

    def _results_train(self, function: cst.FunctionDef) -> str | None:
        """A caller in this file that binds what ``function`` returns and passes it to a function of this file
        that runs a training step (``logprobs, values = self.forward_pass(...)`` then
        ``self.train_minibatch(logprobs, values)``): the caller, named."""
        for call in self.callers_of(function):
            caller = self.enclosing_function(call)
            bound = _names_bound_to(self.parent(call), call)
            if caller is None or not bound:
                continue
            for inner in self.subtree(caller.body):
                if not isinstance(inner, cst.Call) or not any(is_name(arg.value, *bound) for arg in inner.args):
                    continue
                if any(self.trains(target) for target in self._functions_called(inner)):
                    return f"`{caller.name.value}`"
                if _TRAINING_NAME.search((terminal_name(inner.func) or "").lower()):
                    # `agent.train_short_memory(state, move, ...)`: a method named for training takes what it chose
                    return f"`{caller.name.value}`"
        return None

    def _functions_called(self, call: cst.Call) -> list[cst.FunctionDef]:
        """The functions of this file that ``call`` runs: ``helper(...)``, or ``self.helper(...)`` of the
        caller's class."""
        func = call.func
        if isinstance(func, cst.Name):
            return [f for f in self.nodes_of(cst.FunctionDef) if f.name.value == func.value and self.enclosing_class(f) is None]
        if isinstance(func, cst.Attribute) and is_name(func.value, "self"):
            caller = self.enclosing_function(call)
            owner = self.enclosing_class(caller) if caller is not None else None
            if owner is None:
                return []
            return [
                f for cls in self._local_lineage(owner) for f in cls.body.body
                if isinstance(f, cst.FunctionDef) and f.name.value == func.attr.value
            ] if isinstance(owner.body, cst.IndentedBlock) else []
        return []

    def _named_reason(self, function: cst.FunctionDef) -> str | None:
        """Inference context by a name alone: the function's (``predict*``, ``evaluate*``, ...) or its class's."""
        name = function.name.value
        if has_inference_prefix(name):
            return f"`{name}` is named as an inference function"
        owner = self.enclosing_class(function)
        if owner is not None and fw.INFERENCE_CLASS_NAME.search(owner.name.value) and not name.startswith(fw.INFERENCE_CLASS_SETUP_PREFIXES):
            return f"`{owner.name.value}.{name}` is a method of a class named for inference"
        return None

    def _training_caller(self, function: cst.FunctionDef) -> str | None:
        """Where code that trains calls a function of this name: in this file (any receiver:
        ``self.policy.evaluate_actions(...)``), or in another module of the project."""
        name = function.name.value
        for site in self.index.sites(name):
            caller = self.enclosing_function(site.call)
            if caller is not None and caller is not function and (self.trains(caller) or any(self.trains(o) for o in site.owners if isinstance(o, (cst.For, cst.While)))):
                return f"`{caller.name.value}`"
        return self.outside.training_caller(self, function) if self.outside is not None else None

    def _evaluates(self, function: cst.FunctionDef) -> bool:
        """Evaluation code: the function puts a model in eval mode and runs a model's forward pass (it does not
        train: training is decided first). One that runs no forward only prepares models
        (``net_g.train(); net_ema.eval()`` in a training setup); one that also puts a model in training mode trains
        it beside the one it freezes (a distillation loss: ``online.train(); target.eval()``)."""
        if self.is_test_file or _TRAINING_NAME.search(function.name.value.lower()):
            return False
        # In a model's own method, `self.quantizer.eval()` keeps a frozen part frozen (in training as in
        # inference): only the model put in eval as a whole (`self.eval()`) says the method evaluates it.
        owner = self.enclosing_class(function)
        in_model = owner is not None and self.models.is_model_class(owner)
        evaluates = any(
            self.enclosing_function(site.call) is function
            and self.models.origins(site.call.func.value)
            and not (in_model and is_member(site.call.func.value, ("self",)))
            for site in self.index.sites("eval")
            if function in site.owners and not site.call.args and isinstance(site.call.func, cst.Attribute)
        )
        if not evaluates:
            return False
        if self._trains_another_than_it_evaluates(function):
            return False  # `online.train(); target.eval()`: a step that trains one network beside a frozen one
        own_calls = [call for call in self.nodes_of(cst.Call) if self.enclosing_function(call) is function]
        for call in own_calls:
            # A loop that calls this module's training step (`update_policy(...)`) trains.
            helper = self.module_functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
            if helper is not None and helper is not function and self.trains(helper):
                return False
        if self.builds_model(function):
            return False  # a factory that returns the model it put in eval mode builds it; its caller runs it
        return any(self.models.forward_receiver(call) is not None for call in own_calls)

    def _trains_another_than_it_evaluates(self, function: cst.FunctionDef) -> bool:
        """``function`` puts a model in training mode that it does not put in eval mode (``self.train()`` at the end
        of a ``generate`` that began with ``self.eval()`` restores the mode; ``online.train()`` beside
        ``target.eval()`` trains ``online``)."""
        switched: dict[str, set[str]] = {"train": set(), "eval": set()}
        for site in self.index.sites("train", "eval", "freeze"):
            mode = self.models.mode_call(site.call) if function in site.owners and self.enclosing_function(site.call) is function else None
            if mode in switched:
                switched[mode].add(dotted_name(site.call.func.value) or "")  # type: ignore[union-attr]
        return bool(switched["train"] - switched["eval"] - {""})

    def class_hooks(self, cls: cst.ClassDef, _depth: int = 0) -> frozenset[str] | None:
        """The methods of ``cls`` that frameworks call per request; an empty set means every public method."""
        for decorator in cls.decorators:
            expression = decorator.decorator
            target = expression.func if isinstance(expression, cst.Call) else expression
            if terminal_name(target) in fw.DEPLOYMENT_DECORATOR_NAMES and self.resolves_to(target, fw.DEPLOYMENT_DECORATORS):
                return frozenset()
        if cls.name.value in fw.HOOK_CLASS_NAMES:
            return fw.HOOK_CLASS_NAMES[cls.name.value]
        for base in cls.bases:
            # Resolving names costs several parses: only bases spelled like a hook base are resolved.
            spelled = terminal_name(base.value) or ""
            qualified_names = self.qualified_names(base.value) if spelled in fw.HOOK_BASE_NAMES or spelled.endswith("Servicer") else ()
            for qualified in qualified_names:
                if qualified in fw.HOOK_BASES:
                    return fw.HOOK_BASES[qualified]
                if fw.is_grpc_servicer(qualified):
                    return frozenset()
            local = self.local_classes.get(dotted_name(base.value) or "")
            if local is not None and local is not cls and _depth < 8:
                inherited = self.class_hooks(local, _depth + 1)
                if inherited is not None:
                    return inherited
        if _depth == 0 and self.outside is not None:
            # Bases in other project modules, framework protocols followed without inheriting.
            return self.outside.class_hooks(self, cls)
        return None

    @cached_property
    def local_classes(self) -> dict[str, cst.ClassDef]:
        return {node.name.value: node for node in self.module.body if isinstance(node, cst.ClassDef)}

    @cached_property
    def module_functions(self) -> dict[str, cst.FunctionDef]:
        """The functions defined at module level, by name (the last definition wins, as at run time)."""
        return {node.name.value: node for node in self.module.body if isinstance(node, cst.FunctionDef)}

    @cached_property
    def routes(self):
        """The routes, routers and mounts this module declares (:mod:`gemlint.analysis.routes`)."""
        return self._earlier_or("routes", lambda: routes.extract(self))

    @cached_property
    def registered_handlers(self) -> frozenset[str]:
        """Names of functions handed to route registrations in this file (add_api_route, Route, path, ...)."""
        return routes.registered_handler_names(self)

    def is_registered_handler(self, function: cst.FunctionDef) -> bool:
        """``function`` is handed to a route registration of this file: a module-level function by its name,
        a method as ``self.<name>`` or ``<Class>.<name>`` (a method named like a routed function is not one)."""
        name = function.name.value
        owner = self.enclosing_class(function)
        if owner is None:
            return name in self.registered_handlers
        return not self.registered_handlers.isdisjoint((f"self.{name}", f"cls.{name}", f"{owner.name.value}.{name}"))

    def is_gradio_callback(self, function: cst.FunctionDef, page_load: bool = False) -> bool:
        """``function`` is handed to Gradio in this file, which calls it on every event (with ``page_load``: to
        an app's ``load`` event, run each time a visitor opens the page)."""
        callbacks = self.gradio_page_loads if page_load else self.gradio_callbacks
        if not callbacks:
            return False
        name = function.name.value
        owner = self.enclosing_class(function)
        if owner is None:
            return name in callbacks
        # `chat.respond` with `chat = ChatDemo(...)`, at module level or in the function that builds the page, as
        # well as `self.respond`.
        instances = [
            target.target.value
            for assign in self.nodes_of(cst.Assign)
            if isinstance(assign.value, cst.Call) and terminal_name(assign.value.func) == owner.name.value
            for target in assign.targets
            if isinstance(target.target, cst.Name)
        ]
        return not callbacks.isdisjoint((f"self.{name}", f"{owner.name.value}.{name}", *(f"{i}.{name}" for i in instances)))

    def callers_of(self, function: cst.FunctionDef) -> list[cst.Call]:
        """Same-file call sites of ``function``: ``helper(...)``, and ``self.helper(...)`` / ``cls.helper(...)``
        in its class or a class of this file related to it by inheritance (a method of the same name in an
        unrelated class is another method)."""
        owner = self.enclosing_class(function)
        # A nested function's name is bound in the function around it: only calls there name it, unless it leaves
        # that function (returned, stored), when the calls of its name elsewhere may be calls of it.
        outer = self.enclosing_function(function)
        nested = outer is not None
        # handed to a call that runs it there (`module_benchmark(_decode)`): that call is where it runs
        handed = self._calls_running_in_place(function, outer) if outer is not None else None
        if handed is None:
            outer = None
        calls = list(handed or ())
        for site in self.index.sites(function.name.value):
            func = site.call.func
            if outer is not None and outer not in site.owners:
                continue
            if nested and outer is None and self._binds_its_own(site.call, function):
                continue  # `_forward()` in a function that defines a `_forward` of its own calls that one
            if isinstance(func, cst.Name):
                # A bare name in a function never names a method (a class body is no enclosing scope): in a method
                # of its own, ``prepare(...)`` calls the module's ``prepare``, not the method.
                if owner is None or (self.enclosing_function(site.call) is None and self.enclosing_class(site.call) is owner):
                    calls.append(site.call)
            elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
                caller = self.enclosing_function(site.call)
                caller_class = self.enclosing_class(caller) if caller is not None else None
                if owner is None or caller_class is None or self._related_classes(owner, caller_class):
                    calls.append(site.call)
            elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and owner is not None and self._instance_of(func.value, owner):
                calls.append(site.call)  # `converter = Converter(path)`, then `converter.convert(x)`
        return calls

    def _binds_its_own(self, call: cst.Call, function: cst.FunctionDef) -> bool:
        """A function around ``call`` defines a nested function of ``function``'s name other than ``function``."""
        name = function.name.value
        return any(
            isinstance(owner, cst.FunctionDef) and any(
                isinstance(node, cst.FunctionDef) and node is not function and node.name.value == name for node in self.subtree(owner.body)
            )
            for owner in self.ancestors(call)
        )

    def _instance_of(self, name: cst.Name, cls: cst.ClassDef) -> bool:
        """Every value the variable ``name`` is assigned is a construction of the class ``cls`` of this file."""
        if not self.index.sites(cls.name.value):
            return False  # the file never builds one (asked before the scope analysis the values need)
        values = self.assigned_values(name)
        return bool(values) and all(
            isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and self.local_classes.get(value.func.value) is cls for value in values
        )

    def _related_classes(self, first: cst.ClassDef, second: cst.ClassDef) -> bool:
        return first in self._local_lineage(second) or second in self._local_lineage(first)

    def _local_lineage(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        """``cls`` and its bases defined in this file, transitively."""
        chain, todo = [], [cls]
        while todo and len(chain) < 16:
            current = todo.pop(0)
            if current in chain:
                continue
            chain.append(current)
            todo.extend(local for base in current.bases if (local := self.local_classes.get(dotted_name(base.value) or "")) is not None)
        return chain

    def instance_callers_of(self, function: cst.FunctionDef) -> list[cst.Call]:
        """Same-file calls of the method ``function`` through an instance of its class held elsewhere:
        ``self.semantic.generate(...)`` where ``self.semantic = BarkSemanticModel(...)``."""
        owner = self.enclosing_class(function)
        if owner is None or not self.models.is_model_class(owner):
            return []
        calls = []
        for site in self.index.sites(function.name.value):
            func = site.call.func
            if isinstance(func, cst.Attribute) and not is_name(func.value, "self", "cls"):
                if self.models.is_instance_of(func.value, owner):
                    calls.append(site.call)
        return calls

    def _verdict_from_callers(self, function: cst.FunctionDef) -> Verdict:
        """A helper only called from per-request code is per-request code too."""
        if function in self._caller_verdicts_in_progress:
            return UNKNOWN
        self._caller_verdicts_in_progress.add(function)
        try:
            verdicts = [self.context_of(call) for call in self.callers_of(function)]
            if self.outside is not None:
                verdicts += self.outside.caller_verdicts(self, function)
        finally:
            self._caller_verdicts_in_progress.discard(function)
        owner = self.enclosing_class(function)
        shown = f"{owner.name.value}.{function.name.value}" if owner is not None else function.name.value
        if any(v.context is Context.TRAINING for v in verdicts):
            return Verdict(Context.TRAINING, f"`{shown}` is called from training code")
        # The strongest evidence among the callers: an entry point's before a name's.
        inference = next((v for v in verdicts if v.is_inference and not v.name_only), None) or next((v for v in verdicts if v.is_inference), None)
        if inference is not None:
            return Verdict(
                Context.INFERENCE,
                f"`{shown}` is called from {_caller_phrase(inference.reason)}",
                inference.name_only,
                worker_thread=next((v.worker_thread for v in verdicts if v.is_inference and v.worker_thread), None),
            )
        return UNKNOWN

    @cached_property
    def has_main_block(self) -> bool:
        """The module has an ``if __name__ == "__main__":`` block at its top level."""
        return any(isinstance(node, cst.If) and self.is_main_block(node) for node in self.module.body)

    def is_main_block(self, node: cst.If) -> bool:
        return self.parent(node) is self.module and is_main_test(node.test)

    # -- flags -----------------------------------------------------------------------------
    def flag_guard(self, node: cst.CSTNode) -> str | None:
        """Why ``node`` only runs when a flag says so, or None (SPEC §2, "Guarded by a flag")."""
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.If) and child is not ancestor.test and not self.is_constant_test(ancestor.test):
                return "it runs under an `if` on a run-time condition"
            if isinstance(ancestor, cst.IfExp) and child is not ancestor.test and not self.is_constant_test(ancestor.test):
                return "it is chosen by a conditional expression"
            if isinstance(ancestor, cst.BooleanOperation) and child is ancestor.right:
                return "it is short-circuited by a condition"
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                lowered = ancestor.name.value.lower()
                if any(word in lowered for word in ("debug", "profil", "bench")):
                    kind = "function" if isinstance(ancestor, cst.FunctionDef) else "class"
                    return f"it runs in `{ancestor.name.value}`, a debugging {kind}"
            child = ancestor
        return None

    def is_constant_test(self, test: cst.BaseExpression) -> bool:
        """A test that never changes at run time: a literal, ``__name__ == "__main__"``, or a module constant."""
        if literal_value(test) is not NOT_LITERAL:
            return True
        if is_main_test(test):
            return True
        if isinstance(test, cst.Name) and test.value in self.module_constants:
            return True
        return False

    @cached_property
    def module_constants(self) -> frozenset[str]:
        """Module-level names assigned exactly once, to a literal (``DEBUG = True``)."""
        assigned: dict[str, int] = {}
        literal: set[str] = set()
        for statement in self.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                targets: list[cst.BaseExpression] = []
                value = None
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                    value = small.value
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    targets, value = [small.target], small.value
                for target in targets:
                    if isinstance(target, cst.Name):
                        assigned[target.value] = assigned.get(target.value, 0) + 1
                        if value is not None and literal_value(value) is not NOT_LITERAL:
                            literal.add(target.value)
        rebound = self.index.globals
        return frozenset(name for name in literal if assigned[name] == 1 and name not in rebound)

    # -- grad-free guards ---------------------------------------------------------------------
    def _spells_an_unbound_guard(self, expression: cst.BaseExpression) -> bool:
        """``torch.no_grad()`` in a module that binds no ``torch`` (no import, no assignment: it fails with a
        ``NameError``, or a star import brings it): what it spells is what its author meant."""
        target = expression.func if isinstance(expression, cst.Call) else expression
        spelled = dotted_name(target)
        if spelled is None or spelled not in fw.NO_GRAD_GUARDS:
            return False
        root = target
        while isinstance(root, cst.Attribute):
            root = root.value
        scope = self.scope_of(root) if isinstance(root, cst.Name) else None
        return scope is not None and not scope[root.value]

    def grad_mode(self, expression: cst.BaseExpression, _depth: int = 0) -> str | None:
        """What a context manager or decorator does to autograd.

        ``"off"``: ``torch.no_grad()``, ``torch.inference_mode()``, bare ``@torch.no_grad``,
        ``torch.set_grad_enabled(False)``; ``"on"``: ``torch.enable_grad()``, ``set_grad_enabled(True)``,
        ``inference_mode(False)``; ``"switch"``: a deliberate run-time choice (``set_grad_enabled(train)``,
        ``no_grad() if cond else nullcontext()``); None for anything else. Names bound to a guard
        (``ctx = torch.no_grad()``, ``ng = torch.no_grad``) are followed.
        """
        if self.call_resolves_to(expression, fw.NO_GRAD_GUARDS) or self._spells_an_unbound_guard(expression):
            if isinstance(expression, cst.Call):
                mode = argument(expression, 0, "mode")
                if mode is not None:
                    value = literal_value(mode.value)
                    return "off" if value is True else "on" if value is False else "switch"
            return "off"
        if self.call_resolves_to(expression, fw.ENABLE_GRAD):
            return "on"
        if isinstance(expression, cst.Call) and self.resolves_to(expression.func, fw.SET_GRAD_ENABLED):
            mode = argument(expression, 0, "mode")
            value = literal_value(mode.value) if mode is not None else NOT_LITERAL
            return "off" if value is False else "on" if value is True else "switch"
        if isinstance(expression, cst.IfExp):
            branches = {self.grad_mode(expression.body, _depth), self.grad_mode(expression.orelse, _depth)}
            if "off" in branches or "switch" in branches:
                return "switch"
            return None
        if isinstance(expression, cst.Call) and isinstance(expression.func, cst.Name) and _depth < 3:
            manager = self._grad_free_context_manager(expression.func.value, _depth)
            if manager is not None:
                return manager
        if _depth < 3:
            target = expression.func if isinstance(expression, cst.Call) and not expression.args else expression
            if isinstance(target, cst.Name):
                for value in self.assigned_values(target):
                    if target is expression or not isinstance(value, cst.Call):
                        mode = self.grad_mode(value, _depth + 1)
                        if mode is not None:
                            return mode
        return None

    def decorator_grad_mode(self, decorator: cst.BaseExpression) -> str | None:
        """:meth:`grad_mode` of a decorator, and "off" for a project decorator that wraps the function in a
        grad-free guard (``@smart_inference_mode()`` defined in another module)."""
        mode = self.grad_mode(decorator)
        if mode is None and isinstance(decorator, cst.Call) and self.resolves_to(decorator.func, fw.GRAD_FREE_DECORATOR_FACTORIES):
            return "off"
        if mode is None and self.outside is not None and self.outside.grad_free_decorator(self, decorator):
            return "off"
        return mode

    def _grad_free_context_manager(self, name: str, depth: int) -> str | None:
        """The grad mode of a ``@contextmanager`` function of this module named ``name``: the mode of the
        ``with`` blocks around every ``yield`` of its body (``with torch.inference_mode(), autocast(): yield``),
        or None when a ``yield`` runs outside them or the function is not a generator-based context manager."""
        function = self.module_functions.get(name)
        if function is None or not any(self.resolves_to(d.decorator, fw.CONTEXT_MANAGER_DECORATORS) for d in function.decorators):
            return None
        yields = [node for node in self.nodes_of(cst.Yield) if self.enclosing_function(node) is function]
        if not yields:
            return None
        modes = set()
        for node in yields:
            mode = None
            child: cst.CSTNode = node
            for ancestor in self.ancestors(node):
                if ancestor is function:
                    break
                if isinstance(ancestor, cst.With) and child is ancestor.body:
                    found = {self.grad_mode(item.item, depth + 1) for item in ancestor.items}
                    mode = "on" if "on" in found else "off" if "off" in found else "switch" if "switch" in found else mode
                    if mode is not None:
                        break
                child = ancestor
            modes.add(mode)
        return modes.pop() if len(modes) == 1 and None not in modes else None

    def is_grad_free_guard(self, expression: cst.BaseExpression) -> bool:
        """``torch.no_grad()``, ``torch.inference_mode()``, ``@torch.no_grad`` or ``torch.set_grad_enabled(False)``."""
        return self.grad_mode(expression) == "off"

    def grad_free_guard(self, node: cst.CSTNode, _depth: int = 0) -> str | None:
        """Why ``node`` runs without autograd, or None (SPEC §2, "Grad-free guard").

        Guards count at any enclosing level: ``with`` blocks (several items, aliases, run-time switches),
        decorators with or without parentheses (not on ``async def``: the decorator only covers the creation
        of the coroutine, see :meth:`async_decorator_guard`), ``torch.set_grad_enabled(False)`` earlier in an
        enclosing block or at module level, Lightning and transformers hooks that run under no_grad, and a
        guard at every same-file caller. An inner ``torch.enable_grad()`` undoes the guards around it.
        """
        child = node
        in_function = False  # an ancestor is a function: the blocks above it ran when it was defined
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.With) and child is ancestor.body:
                modes = [self.grad_mode(item.item) for item in ancestor.items]
                if "on" in modes:
                    return None
                if "off" in modes:
                    return "an enclosing `with` disables gradients"
                if "switch" in modes:
                    return "an enclosing `with` sets the grad mode explicitly"
            if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
                mode = self._grad_mode_set_before(ancestor, child)
                if mode == "on":
                    return None
                if mode == "off" and not (in_function and self.enclosing_function(ancestor) is None and self.context_of(node).worker_thread):
                    # (a block around the definition ran when the module was imported: in another thread than a
                    # server's worker that calls the function)
                    return "`torch.set_grad_enabled(False)` runs earlier in the same block"
            if isinstance(ancestor, cst.FunctionDef):
                modes = [self.decorator_grad_mode(d.decorator) for d in self.wrapping_decorators(ancestor)]
                if "on" in modes:
                    return None
                if ("off" in modes or "switch" in modes) and ancestor.asynchronous is None:
                    return f"`{ancestor.name.value}` is decorated with a grad-free guard"
                hook = self.no_grad_hook(ancestor)
                if hook:
                    return hook
            in_function = in_function or isinstance(ancestor, (cst.FunctionDef, cst.Lambda))
            child = ancestor
        function = self.enclosing_function(node)
        if function is not None:
            thread_guard = self._thread_grad_switch(function)
            if thread_guard is not None and not self.context_of(node).worker_thread:
                return thread_guard
            if _depth < 4:
                callers = self.callers_of(function) + self.instance_callers_of(function)
                elsewhere = self.outside.callers_guarded(self, function, _depth) if self.outside is not None else []
                if self.own_verdict(function).context is Context.UNKNOWN:
                    # A helper is inference code only through its inference callers: those are the paths to guard
                    # (the callers in other modules are those on a path from an inference entry point). A helper
                    # that no inference code calls (a step of an evaluation method that a training loop calls
                    # under its own guard) is guarded when all its callers are.
                    inference = [call for call in callers if self.context_of(call).is_inference]
                    callers = inference or ([] if elsewhere else callers)
                guarded = [self.grad_free_guard(call, _depth + 1) is not None for call in callers]
                if guarded and not elsewhere and all(guarded):
                    return f"every caller of `{function.name.value}` in this file disables gradients"
                if elsewhere and all(guarded) and all(elsewhere):
                    return f"every caller of `{function.name.value}` (in this and other modules) disables gradients"
                if not guarded and not elsewhere and self.own_verdict(function).reason in self._self_evident_reasons(function):
                    return self._guarded_by_name(function, _depth)
        return None

    def grad_switch_in_another_thread(self, node: cst.CSTNode) -> tuple[str, str] | None:
        """Where ``torch.set_grad_enabled(False)`` at module level, in a constructor or in a package would turn
        autograd off for ``node`` but the thread that runs it is a server's worker, not the one that ran the switch:
        what that switch does and which server runs ``node`` elsewhere, for a finding to say why it does not hold."""
        function = self.enclosing_function(node)
        worker = self.context_of(node).worker_thread if function is not None else None
        if function is None or worker is None:
            return None
        switch = self._thread_grad_switch(function)
        return (switch, worker) if switch is not None else None

    def _thread_grad_switch(self, function: cst.FunctionDef) -> str | None:
        """``torch.set_grad_enabled(False)`` that turns autograd off for the thread that imported this module or
        built the object whose method ``function`` is (at module level, in the class's constructor, in a package
        the module belongs to), said as a guard."""
        if self.module_disables_grad:
            return "`torch.set_grad_enabled(False)` runs at module level"
        owner = self.enclosing_class(function)
        if owner is not None and not self._runs_unbound(function) and self.constructor_disables_grad(owner):
            return f"the constructor of `{owner.name.value}` turns autograd off before any method of it runs"
        return self.outside.package_disables_grad(self) if self.outside is not None else None

    def _calls_running_in_place(self, function: cst.FunctionDef, outer: cst.FunctionDef) -> list[cst.Call] | None:
        """The calls of ``outer`` that the nested ``function`` is handed to, where it runs while ``outer`` does, as a
        lambda would: it is called there, or handed to a call that runs it (``module_benchmark(_decode_steps)``).
        None where it is not named there, or leaves: returned, stored, or handed to a thread (grad mode is per
        thread)."""
        name = function.name.value
        uses = [
            node for node in self.subtree(outer.body, into_scopes=True) if isinstance(node, cst.Name) and node.value == name and node is not function.name
        ]
        if not uses:
            return None
        handed = []
        for use in uses:
            parent = self.parent(use)
            if isinstance(parent, cst.Call) and parent.func is use:
                continue
            if isinstance(parent, cst.FunctionDef) and parent.name is use:
                continue  # another definition of the name, on another branch (`if cache is None: def _prefill(): ...`)
            call = self.parent(parent) if isinstance(parent, cst.Arg) else None
            if isinstance(call, cst.Call) and terminal_name(call.func) not in _ELSEWHERE_RUNNERS:
                handed.append(call)
                continue
            return None  # returned, stored, or handed to what runs it in another thread or later
        return handed

    def _self_evident_reasons(self, function: cst.FunctionDef) -> tuple[str, ...]:
        """Reasons that rest on the function alone, not on an entry point: its name, or its body (evaluation
        code). Its callers are what it runs under, so where none resolves, the calls of its name decide."""
        return tuple(reason for reason in (self._named_reason(function), self._evaluation_reason(function)) if reason)

    def _guarded_by_name(self, function: cst.FunctionDef, depth: int) -> str | None:
        """For a function in inference context by its name alone (or by its body), whose callers cannot be resolved
        (``self.policy.predict_values(obs)`` with ``self.policy`` built at run time): every call of that name
        in the project disables gradients (in other modules, by a guard written at the call)."""
        name = function.name.value
        here = [site.call for site in self.index.sites(name) if self.enclosing_function(site.call) is not function]
        if not all(self.grad_free_guard(call, depth + 1) is not None for call in here):
            return None
        elsewhere = self.outside.calls_by_name_guarded(self, function) if self.outside is not None else None
        if elsewhere is False or (elsewhere is None and not here):
            return None
        return f"every call of a function named `{name}` in the project disables gradients"

    def wrapping_decorators(self, function: cst.FunctionDef) -> list[cst.Decorator]:
        """The decorators that wrap what runs when ``function`` is called as registered: decorators apply
        bottom-up, and a route decorator registers the function as decorated so far, so a guard written
        above ``@app.post(...)`` wraps only the name, not the route FastAPI calls."""
        decorators = list(function.decorators)
        for index in range(len(decorators) - 1, -1, -1):
            if routes.is_route_decorator(self, decorators[index].decorator):
                return decorators[index + 1 :]
        return decorators

    def grad_enabled_within(self, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
        """Whether something between ``function`` and ``node`` turns gradients back on (``with
        torch.enable_grad()``, ``inference_mode(False)``, ``set_grad_enabled(True)`` earlier in a block),
        so that a guard around the whole function would not cover ``node``."""
        child = node
        for ancestor in self.ancestors(node):
            if ancestor is function:
                return False
            if isinstance(ancestor, cst.With) and child is ancestor.body:
                if any(self.grad_mode(item.item) in ("on", "switch") for item in ancestor.items):
                    return True
            if isinstance(ancestor, cst.IndentedBlock) and self._grad_mode_set_before(ancestor, child) == "on":
                return True
            child = ancestor
        return False

    def async_decorator_guard(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The ``async def`` around ``node`` that carries a grad-free decorator, which does not cover its body."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                if ancestor.asynchronous is not None and any(self.grad_mode(d.decorator) == "off" for d in ancestor.decorators):
                    return ancestor
                return None
        return None

    def no_grad_hook(self, function: cst.FunctionDef) -> str | None:
        """Why a framework already runs ``function`` without gradients (Lightning evaluation and prediction
        hooks, methods transformers calls inside ``generate`` or a pipeline's inference context)."""
        name = function.name.value
        if name in fw.LIGHTNING_NO_GRAD_HOOKS:
            return f"`{name}` is a Lightning hook that runs without gradients"
        if name in fw.HF_NO_GRAD_METHODS:
            return f"`{name}` runs inside transformers' `generate`, without gradients"
        owner = self.enclosing_class(function)
        if owner is None:
            return None
        bases = self._base_names(owner)
        if name.startswith(fw.LIGHTNING_NO_GRAD_HOOK_PREFIXES) and bases & fw.LIGHTNING_BASES:
            return f"`{name}` is a Lightning evaluation hook that runs without gradients"
        for base in bases:
            if base.startswith("transformers."):
                for suffix, hooks in fw.HF_NO_GRAD_CLASS_HOOKS.items():
                    if base.endswith(suffix) and name in hooks:
                        return f"transformers runs `{owner.name.value}.{name}` without gradients"
        return None

    def _base_names(self, cls: cst.ClassDef, _depth: int = 0) -> frozenset[str]:
        """Qualified names of the bases of ``cls`` and of its bases defined in this file."""
        names: set[str] = set()
        for base in cls.bases:
            names.update(self.qualified_names(base.value))
            local = self.local_classes.get(dotted_name(base.value) or "")
            if local is not None and local is not cls and _depth < 8:
                names.update(self._base_names(local, _depth + 1))
        return frozenset(names)

    def _grad_mode_set_before(self, block: cst.CSTNode, child: cst.CSTNode) -> str | None:
        """The grad mode the last ``torch.set_grad_enabled(...)`` statement before ``child`` in ``block`` sets.

        A bare ``torch.no_grad()`` statement does nothing (it only builds a context manager), so only
        ``set_grad_enabled`` counts here.
        """
        mode = None
        for statement in block.body:
            if statement is child:
                return mode
            for call in _statement_calls(statement):
                if self.resolves_to(call.func, fw.SET_GRAD_ENABLED):
                    mode = self.grad_mode(call)
        return mode

    @cached_property
    def module_disables_grad(self) -> bool:
        """``torch.set_grad_enabled(False)`` at module level (or in the ``__main__`` block), never re-enabled."""
        statements = []
        for statement in self.module.body:
            if isinstance(statement, cst.If) and self.is_main_block(statement) and isinstance(statement.body, cst.IndentedBlock):
                statements.extend(statement.body.body)
            else:
                statements.append(statement)
        modes = self._grad_switches(statements)
        return "off" in modes and "on" not in modes

    def _grad_switches(self, statements: Iterable[cst.CSTNode]) -> list[str]:
        """The grad modes ``torch.set_grad_enabled(...)`` sets as whole statements among ``statements``."""
        return [
            self.grad_mode(call)
            for statement in statements
            for call in _statement_calls(statement)
            if self.resolves_to(call.func, fw.SET_GRAD_ENABLED)
        ]

    def _runs_unbound(self, function: cst.FunctionDef) -> bool:
        """``__init__`` itself, or a static or class method: code that may run before any object is built."""
        if function.name.value == "__init__":
            return True
        return any(terminal_name(d.decorator) in ("staticmethod", "classmethod") for d in function.decorators)

    def constructor_disables_grad(self, cls: cst.ClassDef, depth: int = 0) -> bool:
        """``torch.set_grad_enabled(False)`` as a statement of the class's ``__init__`` body, never re-enabled
        there, or a project class built there whose constructor does so: autograd is off for the thread from the
        object's construction on, so its methods run without it."""
        init = next(
            (s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
            None,
        ) if isinstance(cls.body, cst.IndentedBlock) else None
        if init is None or not isinstance(init.body, cst.IndentedBlock) or depth > 2:
            return False
        modes = self._grad_switches(init.body.body)
        if "on" in modes:
            return False
        if "off" in modes:
            return True
        for statement in init.body.body:
            built = _built_by(statement)
            if built is None:
                continue
            local = self.local_classes.get(dotted_name(built.func) or "")
            if local is not None and local is not cls and self.constructor_disables_grad(local, depth + 1):
                return True
            if local is None and self.outside is not None and self.outside.constructor_disables_grad(self, built.func, depth + 1):
                return True
        return False

    # -- models --------------------------------------------------------------------------------
    @cached_property
    def autograd_graphs(self):
        """The autograd-graph flow of this file's functions (:class:`gemlint.analysis.autograd_graphs.AutogradGraphs`),
        shared by the rules and by the project model's questions from other files."""
        return AutogradGraphs(self)

    @cached_property
    def models(self):
        """The model-object tracker of this file (:class:`gemlint.analysis.models.ModelTracker`)."""
        return ModelTracker(self)


def _built_by(statement: cst.CSTNode) -> cst.Call | None:
    """The call a simple statement makes or assigns (``self.detector = Detector(...)``, ``Detector(...)``)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign, cst.Expr)) else None
    return value if isinstance(value, cst.Call) else None


def _names_bound_to(statement: cst.CSTNode | None, value: cst.CSTNode) -> tuple[str, ...]:
    """The names an assignment of ``value`` binds (``a, b, _ = f()``, ``a = f()``); none for anything else."""
    if not isinstance(statement, cst.Assign) or statement.value is not value:
        return ()
    names = []
    for target in statement.targets:
        node = target.target
        elements = [e.value for e in node.elements] if isinstance(node, (cst.Tuple, cst.List)) else [node]
        names.extend(e.value for e in elements if isinstance(e, cst.Name) and e.value != "_")
    return tuple(names)


#: A module that calls its functions by name: ``globals()[command]()``, ``getattr(sys.modules[__name__], ...)``,
#: ``fire.Fire()`` without a target (every function of the module is a command).
_DISPATCH_BY_NAME = re.compile(r"\b(?:globals|locals|vars)\(\s*\)|sys\.modules\[\s*__name__\s*\]|\bFire\(\s*\)")
#: The names of counting hooks: ``add_flops_counting_methods``, ``start_flops_count``, ``start_activation_count``.
_COUNTER_NAME = re.compile(r"(?i)flops|counting_methods|^start_\w*_count$")
#: Calls that run a function handed to them in another thread or process, or later: a grad-free guard around
#: the call does not cover it (grad mode is per thread).
_ELSEWHERE_RUNNERS = frozenset(
    {"Thread", "Process", "Timer", "submit", "map", "starmap", "imap", "run_in_executor", "apply_async", "to_thread", "start_new_thread",
     "create_task", "ensure_future", "add_done_callback", "register", "connect", "on", "after", "call_later", "call_soon"}
)
#: Words of a function's name that say it measures (a debugging switch there is the measurement).
_MEASURING_WORDS = ("latency", "throughput", "timing", "speed_test", "measure")
#: How the name of a function that measures a model begins: counts of its parameters (``params_size``, fastai's), a
#: summary table of its layers (``summary(model, input_size)``, torchsummary's, copied), a profile.
_MEASURING_PREFIXES = ("count_param", "num_param", "param_count", "params_count", "param_size", "params_size", "profile", "summary", "model_summary")
#: FastAPI's applications and routers, whose route decorators register handlers.
_FASTAPI_APPS = frozenset(name for name, (framework, _) in fw.ROUTER_CONSTRUCTORS.items() if framework == "fastapi")
#: How a hook is hung on a module's forward.
_HOOK_REGISTRATIONS = frozenset({"register_forward_hook", "register_forward_pre_hook"})
#: What resets a batch-norm layer's running statistics.
_RUNNING_STATISTICS = frozenset({"running_mean", "running_var", "reset_running_stats"})
#: What a function that counts a module's parameters calls.
_PARAMETER_COUNTING = frozenset({"numel", "parameters"})


def _statement_calls(statement: cst.CSTNode) -> Iterator[cst.Call]:
    """The calls that are whole expression statements of a simple statement line."""
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        for small in statement.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                yield small.value


_NAMED_REASON = re.compile(r"(`[^`]+`) is (.+)", re.DOTALL)


#: Names of functions that train, whatever they call (`train`, `train_epoch`, `fit`, `finetune_head`).
_TRAINING_NAME = re.compile(r"(?:^|_)(?:train|fit|finetune|fine_tune)(?:_|$)")


def _tested_name(test: cst.BaseExpression) -> str | None:
    """The name an ``if`` tests for being set: ``if ckpt:``, ``if ckpt is not None:``."""
    if isinstance(test, cst.Name):
        return test.value
    if (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.IsNot)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        return test.left.value
    return None


def _names_weights(value: cst.BaseExpression) -> bool:
    """A value that names stored weights: ``True``, a path or tag (``"DEFAULT"``, ``args.ckpt``), an enum member
    (``ResNet50_Weights.DEFAULT``) or a lookup; not ``False``/``None``, and not a plain variable (``weights=w13``,
    tensors made in the script)."""
    if isinstance(value, cst.Name):
        return value.value == "True"
    if isinstance(value, cst.SimpleString) and not literal_value(value):
        return False  # `ckpt_path=""`: no checkpoint
    return isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Attribute, cst.Call, cst.Subscript))


def _caller_phrase(reason: str) -> str:
    """A caller's reason as the end of "`f` is called from ...", flat rather than nested:
    "`main` is called from the `__main__` block" gives "`main`, called from the `__main__` block"."""
    if reason.startswith("the "):
        return reason
    match = _NAMED_REASON.fullmatch(reason)
    if match is not None:
        return f"{match.group(1)}, {match.group(2)}"
    return f"inference code ({reason})"


_LIBRARIES: dict[int, tuple[Collection[str], frozenset[str] | None]] = {}


def _libraries_of(names: Collection[str], *, prefixes: bool = False) -> frozenset[str] | None:
    """The top-level packages of ``names`` (``torch.no_grad`` -> torch), or None where a name's package is not
    what its first part says: a builtin (``builtins.open`` is spelled ``open``), a local (``f.<locals>.g``), or
    a prefix that does not end its first part (``"torch"`` also starts ``torchvision.x``). Memoised by
    identity: the collections asked about are the analyses' constant tables."""
    known = _LIBRARIES.get(id(names))
    if known is not None and known[0] is names:
        return known[1]
    tops = set()
    for name in names:
        top, dot, _ = name.partition(".")
        if top in ("builtins", "") or "<" in name or (prefixes and not dot):
            tops = None
            break
        tops.add(top)
    libraries = frozenset(tops) if tops else None
    if len(_LIBRARIES) > 512:
        _LIBRARIES.clear()  # a caller's temporary sets must not pile up over a long run
    _LIBRARIES[id(names)] = (names, libraries)
    return libraries


#: Methods that move or cast a tensor and return it: what it holds stays made up.
_MOVES_AND_CASTS = frozenset({"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "int", "long", "contiguous", "unsqueeze", "astype"})
#: NumPy's calls that make an array of a tensor's values, which raise on a tensor that requires grad.
_NUMPY_CONVERSIONS = frozenset({"numpy.asarray", "numpy.array", "numpy.asanyarray"})
#: torch's calls that make a tensor of an array's values (``torch.as_tensor(np.random.rand(...))``).
_AS_TENSOR = frozenset({"torch.as_tensor", "torch.from_numpy", "torch.tensor"})


#: Methods that lay a tensor's values out anew: what they return is as made up as what they are called on.
_RESHAPES = frozenset({"repeat", "expand", "reshape", "view", "flatten", "permute", "transpose"})
#: What a shape check reads of a tensor: ``x.shape``, ``x.size()``, ``x.dtype``.
_SHAPE_ATTRIBUTES = frozenset({"shape", "size", "dtype", "ndim", "dim", "device"})


def _scalar_argument(value: cst.BaseExpression) -> bool:
    """A literal or a flag computed in place (``0``, ``"fp16"``, ``args.precision == "W4A16"``): no tensor."""
    return literal_value(value) is not NOT_LITERAL or isinstance(value, (cst.Comparison, cst.BooleanOperation))


def _unmoved(value: cst.BaseExpression, methods: frozenset[str] = _MOVES_AND_CASTS) -> cst.BaseExpression:
    """``torch.ones(2).cuda().half()`` -> ``torch.ones(2)``: the tensor before it was moved or cast (or put through
    any of ``methods``)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in methods:
        value = value.func.value
    return value


def _moves_name(value: cst.BaseExpression, name: str) -> bool:
    """``image.cuda()`` bound to ``image`` again: the earlier binding, moved."""
    return is_name(_unmoved(value), name)


def _target_names(target: cst.BaseExpression) -> list[cst.Name]:
    """The names an assignment target binds (``out``, ``out, _``); empty when it binds an attribute or an item."""
    if isinstance(target, cst.Name):
        return [target] if target.value != "_" else []
    if isinstance(target, (cst.Tuple, cst.List)):
        names = [element.value for element in target.elements]
        if all(isinstance(name, cst.Name) for name in names):
            return [name for name in names if name.value != "_"]  # type: ignore[union-attr]
    return []


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    """The values of ``call``'s plain positional arguments (no keyword, no ``*``), in order."""
    return [arg.value for arg in call.args if arg.keyword is None and not arg.star]


def _head_name(func: cst.BaseExpression) -> str | None:
    """``lowering`` for ``lowering.build(...)``, ``build`` for ``build(...)``: the name a call's spelling starts with."""
    while isinstance(func, cst.Attribute):
        func = func.value
    return func.value if isinstance(func, cst.Name) else None


#: Keywords exporters take their example inputs by (``torch.onnx.export(model, args=...)``, ``coremltools.convert``).
_EXAMPLE_INPUT_KEYWORDS = frozenset({"args", "example_inputs", "inputs", "sample_inputs"})


def _root_names(value: cst.BaseExpression) -> set[str]:
    """The names an expression reads its value from: the base of an attribute or subscript chain (``inputs[0]``,
    ``batch.pixel_values``), moved or cast (``x.to(device)``), each element of a tuple or list. A call makes a new
    value (``torch.load(path)``): it reads from no name."""
    if isinstance(value, (cst.Tuple, cst.List)):
        return {name for element in value.elements for name in _root_names(element.value)}
    value = _unmoved(value)
    while isinstance(value, (cst.Attribute, cst.Subscript)):
        value = _unmoved(value.value)
    return {value.value} if isinstance(value, cst.Name) else set()


def _simple_statements(body: cst.BaseSuite) -> list[cst.BaseSmallStatement]:
    """The small statements of ``body``; none where it holds a compound one (a loop, a ``with``)."""
    if isinstance(body, cst.SimpleStatementSuite):
        return list(body.body)
    smalls: list[cst.BaseSmallStatement] = []
    for line in body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return []
        smalls.extend(line.body)
    return smalls
