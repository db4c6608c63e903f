"""What a file's ``ast`` tree shows, gathered in one walk, so rules can rule a file out before LibCST parses it.

The engine already parses every Python file with ``ast`` (its gate against input that would
crash LibCST), and ``ast`` parses about ten times faster than LibCST. Most files of a real
code base hold nothing any rule can match -- no inference code, no profiler, no padding
argument -- and for them LibCST, its metadata and the analyses are never paid for.

Every fact is an over-approximation of what a rule's LibCST visitor looks at (names are
compared by spelling, never resolved), so a file that fails a rule's triage could not have
produced a finding of that rule. ``tests/test_triage.py`` checks this on every fixture.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from gemlint.analysis import frameworks as fw
from gemlint.analysis.ast_walk import SCALAR_FIELDS, walk
from gemlint.globs import compile_globs
from gemlint.text import contains_marker_groups

if TYPE_CHECKING:
    from gemlint.config import Config
    from gemlint.text import ScannedText


@dataclass(slots=True)
class SyntaxFacts:
    """Spellings found anywhere in one module (terminal names: ``b`` of ``a.b``)."""

    calls: set[str] = field(default_factory=set)  # called names: f(...), obj.f(...)
    keywords: set[str] = field(default_factory=set)  # keyword argument names
    assigned: set[str] = field(default_factory=set)  # assignment targets: x = ..., obj.x = ...
    decorators: set[str] = field(default_factory=set)  # of functions and classes
    functions: set[str] = field(default_factory=set)  # names of defined functions and methods
    classes: set[str] = field(default_factory=set)
    bases: set[str] = field(default_factory=set)  # base classes
    imports: set[str] = field(default_factory=set)  # absolute modules imported, with their parent packages
    main_block: bool = False  # a module-level ``if __name__ == "__main__":``
    #: Module-level code calls a name that module-level code bound to a call (``model = load()`` then
    #: ``print(model(x))``): a script that runs what it built, outside any function.
    script_runs: bool = False

    def imports_any(self, modules) -> bool:
        return not self.imports.isdisjoint(modules)


def terminal(expression: ast.AST) -> str | None:
    """``f`` of ``f``, ``a.b.f``, ``f(...)``, ``a.f[...]``; None for other expressions."""
    while True:
        if isinstance(expression, ast.Name):
            return expression.id
        if isinstance(expression, ast.Attribute):
            return expression.attr
        if isinstance(expression, (ast.Call, ast.Subscript)):
            expression = expression.func if isinstance(expression, ast.Call) else expression.value
            continue
        return None


def collect(tree: ast.Module) -> SyntaxFacts:
    """One iterative walk over ``tree`` (deep files must not exhaust the stack)."""
    collector = SyntaxCollector(tree)
    collector.walk(tree)
    return collector.facts()


class SyntaxCollector:
    """The :class:`SyntaxFacts` of a module, from each of its nodes in any order. :func:`collect` walks the tree
    for it; the project index's summariser hands it the nodes of its own walk, so that indexing a module walks
    its tree once."""

    def __init__(self, tree: ast.Module) -> None:
        self._facts = SyntaxFacts(
            main_block=any(isinstance(node, ast.If) and _is_main_test(node.test) for node in tree.body),
            script_runs=script_runs(tree),
        )
        #: Each name imported ``as`` another -> what it names (every one, should a module rebind it).
        self._aliases: dict[str, set[str]] = {}

    def walk(self, node: ast.AST) -> None:
        """Take every node of the subtree ``node`` the facts read."""
        handlers = self._HANDLERS
        for inner in walk(node, SCALAR_FIELDS):
            handler = handlers.get(type(inner))
            if handler is not None:
                handler(self, inner)

    def call(self, node: ast.Call) -> None:
        name = terminal(node.func)
        if name is not None:
            self._facts.calls.add(name)
            if name == "Depends" and node.args:
                # FastAPI calls the function `Depends` names, on every request of the route
                given = terminal(node.args[0])
                if given is not None:
                    self._facts.calls.add(given)
        for keyword in node.keywords:
            if keyword.arg is not None:
                self._facts.keywords.add(keyword.arg)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._facts.functions.add(node.name)
        self._facts.decorators.update(filter(None, map(terminal, node.decorator_list)))

    def class_(self, node: ast.ClassDef) -> None:
        self._facts.classes.add(node.name)
        self._facts.decorators.update(filter(None, map(terminal, node.decorator_list)))
        self._facts.bases.update(filter(None, map(terminal, node.bases)))

    def assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
        for target in node.targets if type(node) is ast.Assign else (node.target,):  # type: ignore[union-attr]
            _add_targets(target, self._facts.assigned)

    def import_(self, node: ast.Import) -> None:
        for alias in node.names:
            add_module(self._facts.imports, alias.name)
            if alias.asname:
                self._aliases.setdefault(alias.asname, set()).add(alias.name.rsplit(".", 1)[-1])

    def import_from(self, node: ast.ImportFrom) -> None:
        if node.module and not node.level:
            add_module(self._facts.imports, node.module)
        for alias in node.names:
            if alias.asname:
                self._aliases.setdefault(alias.asname, set()).add(alias.name)

    def facts(self) -> SyntaxFacts:
        facts, aliases = self._facts, self._aliases
        if aliases:
            # ``from torch.autograd import set_detect_anomaly as sda``: ``sda(True)`` counts as the original name,
            # as the qualified names the rules resolve would.
            for names in (facts.calls, facts.assigned, facts.decorators, facts.bases):
                names.update([original for name in names if name in aliases for original in aliases[name]])
        return facts

    # The handler of each node type the facts read (other nodes hold nothing of them), as plain functions: bound
    # methods in a dict of the collector's would make a cycle, left for the garbage collector to find.
    _HANDLERS: dict[type, Callable[["SyntaxCollector", Any], None]] = {
        ast.Call: call,
        ast.FunctionDef: function,
        ast.AsyncFunctionDef: function,
        ast.ClassDef: class_,
        ast.Assign: assign,
        ast.AnnAssign: assign,
        ast.AugAssign: assign,
        ast.Import: import_,
        ast.ImportFrom: import_from,
    }

def _add_targets(target: ast.AST, into: set[str]) -> None:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            _add_targets(element, into)
    elif isinstance(target, ast.Starred):
        _add_targets(target.value, into)
    else:
        name = terminal(target)
        if name is not None:
            into.add(name)


def add_module(into: set[str], name: str | None) -> None:
    """Add module ``a.b.c`` to ``into`` with the packages above it (``a``, ``a.b``)."""
    if name:
        parts = name.split(".")
        into.update(".".join(parts[: i + 1]) for i in range(len(parts)))


def script_runs(tree: ast.Module) -> bool:
    """Whether module-level code (outside functions and classes) calls a module-level name bound to a call, or
    hands one to a function of the module (``segment(image, box, model)`` with ``model = torch.jit.load(...)``)."""
    built = {
        target.id
        for statement in tree.body
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and isinstance(statement.value, ast.Call)
        for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])
        if isinstance(target, ast.Name)
    }
    if not built:
        return False
    functions = {statement.name for statement in tree.body if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        for node in ast.walk(statement):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id in built:
                return True
            if node.func.id in functions and any(
                isinstance(value, ast.Name) and value.id in built for value in [*node.args, *(k.value for k in node.keywords)]
            ):
                return True
    return False


def _is_main_test(test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
    )


@dataclass(frozen=True)
class Triage:
    """What rules see before deciding whether a file needs LibCST: its syntax facts and how its path is classed."""

    facts: SyntaxFacts
    text: str
    training_file: bool
    inference_file: bool
    test_file: bool = False
    #: Not a test, benchmark or profiling file by its path (:func:`is_production_path`).
    production_file: bool = True
    #: The project model says some code of the file runs per request (a caller or base in another module).
    project_context: bool = False
    #: Names of project classes whose construction loads weights (their ``__init__`` calls ``torch.load``, ...).
    project_loaders: frozenset[str] = frozenset()
    #: A function or class named for inference (``predict*``, ``*Predictor``) admits the file. Without
    #: ``strict``, where the project model shows what reaches each function, a name alone is no evidence.
    names_are_evidence: bool = True

    @classmethod
    def of(cls, facts: SyntaxFacts, text: str, config: "Config", relative_path: str, path: "str | os.PathLike | None" = None) -> "Triage":
        """``relative_path``: to the config's glob root, for its path globs; ``path``, where known, places the file
        in the project for :func:`is_test_module`, as the analyses place it."""
        inside = relative_path if path is None else project_relative(path, config.root, relative_path)
        return cls(
            facts,
            text,
            is_training_path(config, relative_path),
            is_inference_path(config, relative_path),
            is_test_module(inside, facts),
            is_production_path(relative_path),
        )

    def may_write_environment(self, variables) -> bool:
        """Whether the file may set one of ``variables`` (spelled literally, as env_writes requires) through
        ``os.environ[...] =``, ``os.environ.setdefault/update`` or ``os.putenv``."""
        facts = self.facts
        writes = "environ" in facts.assigned or not facts.calls.isdisjoint(("setdefault", "update", "putenv"))
        return writes and any(variable in self.text for variable in variables)

    def may_have_inference_context(self) -> bool:
        """Whether some code of the file may run per request (SPEC §2): the spelling-only twin of
        :meth:`ModuleAnalysis.may_have_inference_context`, which confirms it with resolved names."""
        if self.training_file:
            return False
        if self.test_file and not self.inference_file:
            return False  # a test module's code runs in no inference context (ModuleAnalysis.context_of)
        if self.inference_file or self.project_context or self.facts.main_block or self.facts.script_runs:
            return True
        facts = self.facts
        if self.names_are_evidence and any(fw.INFERENCE_CLASS_NAME.search(name) for name in facts.classes):
            return True
        # Route decorators on attributes and handler registrations count only in web-framework modules;
        # Gradio and Streamlit apps call their code per interaction.
        if facts.imports_any(fw.WEB_FRAMEWORKS) or facts.imports_any(fw.APP_FRAMEWORKS) or facts.imports_any(fw.BOT_FRAMEWORKS):
            return True
        if not facts.decorators.isdisjoint(_CONTEXT_DECORATORS):
            return True
        if not facts.classes.isdisjoint(fw.HOOK_CLASS_NAMES) or not facts.bases.isdisjoint(fw.HOOK_BASE_NAMES):
            return True
        if any(base.endswith("Servicer") for base in facts.bases):
            return True  # a gRPC servicer, perhaps (see frameworks.is_grpc_servicer)
        # TorchServe's module-level entry point, `handle(data, context)`: its shape is the analysis' to confirm
        return any(
            name in fw.LIGHTNING_INFERENCE_HOOKS or name == fw.TORCHSERVE_MODULE_ENTRY[0] or (self.names_are_evidence and has_inference_prefix(name))
            for name in facts.functions
        )


def project_relative(path: "str | os.PathLike", root: "str | os.PathLike", fallback: str) -> str:
    """``path`` relative to the project ``root``, '/'-separated (the folders above the project say nothing of a
    file); ``fallback`` for a file outside it."""
    try:
        inside = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:  # on another drive
        return fallback
    if inside == os.pardir or inside.startswith(os.pardir + os.sep):
        return fallback
    return inside.replace(os.sep, "/")


def is_test_path(relative_path: str) -> bool:
    """``tests/``, ``test/``, ``testing/`` (also ``tests_<pkg>/`` and ``<pkg>_tests/``, as packages with
    several runtimes name theirs), ``test_*.py``, ``*_test.py``, ``conftest.py``."""
    parts = relative_path.lower().split("/")
    name = parts[-1]
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return True
    return _in_test_folder(parts)


def is_production_path(relative_path: str) -> bool:
    """Not a test, benchmark or profiling file (SPEC §2, "Production code"); for every language: no folder of its path
    starts with ``bench`` or ``profil``, and no word of its file name does (``transformer_profile.py``,
    ``run_benchmark.py``)."""
    if is_test_path(relative_path):
        return False
    parts = relative_path.lower().split("/")
    words = _NAME_WORDS.split(parts[-1].rsplit(".", 1)[0])
    return not any(part.startswith(_TOOLING_WORDS) for part in (*parts[:-1], *words))


def is_native_tooling_path(relative_path: str) -> bool:
    """A C/C++/CUDA test or benchmark program by its path: not production code (:func:`is_production_path`), or
    a file or folder named for a test (``test.cpp``, ``test_gemm.cu``, ``test-quantize.c``, ``gemm_test.cc``,
    ``simple-memcpy-test/``)."""
    if not is_production_path(relative_path):
        return True
    parts = relative_path.lower().split("/")
    for name in (*parts[:-1], parts[-1].rsplit(".", 1)[0]):
        # `gemm_test.cc`, a folder `simple-memcpy-test/` (hyphens, as test programs' folders are often named)
        words = [word for word in _NAME_WORDS.split(name) if word]
        if words and (words[0] in _TEST_WORDS or words[-1] in _TEST_WORDS):
            return True
    return False


#: What the project model may show of a file that its own text does not (``Rule.sees_project``): code of the
#: file that other modules reach per request, and models the file imports from other modules.
PROJECT_CONTEXT = "context"
PROJECT_MODELS = "models"

_TOOLING_WORDS = ("bench", "profil")
_NAME_WORDS = re.compile(r"[_\-.]")


def _in_test_folder(parts: list[str]) -> bool:
    return any(part in _TESTS_DIRS or part.startswith(("tests_", "test_")) or part.endswith(("_tests", "_test")) for part in parts[:-1])


def is_test_module(relative_path: str, facts: "SyntaxFacts") -> bool:
    """A test module by its path, unless only its file name says so and its content does not: a script named
    ``u2net_test.py`` outside test folders, with a ``__main__`` block, no test function or class and no test
    framework imported, tries a model out on data; it is not a test."""
    if not is_test_path(relative_path):
        return False
    parts = relative_path.lower().split("/")
    if parts[-1] == "conftest.py" or _in_test_folder(parts) or not facts.main_block:
        return True
    return (
        any(is_test_function(name) for name in facts.functions)
        or any(name.startswith("Test") for name in facts.classes)
        or facts.imports_any(("pytest", "unittest", "hypothesis", "nose"))
    )


_TESTS_DIRS = frozenset({"tests", "test", "testing"})
_TEST_WORDS = frozenset({"test", "tests", "unittest", "unittests"})


def is_test_function(name: str) -> bool:
    """``test``, ``test_forward``, ``testForward``, as pytest and unittest collect them (not ``tester``)."""
    if not name.startswith("test"):
        return False
    rest = name[4:]
    return not rest or rest[0] == "_" or rest[0].isupper() or rest[0].isdigit()


def is_test_class(name: str) -> bool:
    """``Test``, ``TestModule``, ``Test_Net``: a class named as pytest and unittest name test classes, a stand-in
    built by a check (not ``Tester``, ``Testbed``, nor a test-time augmentation wrapper, ``TestTimeAugment``)."""
    if name[:1] != "T" or name.startswith("TestTime"):
        return False
    return is_test_function(name[:1].lower() + name[1:])


def is_training_path(config: "Config", relative_path: str) -> bool:
    """The file matches ``training-paths``: training code, where no inference rule applies."""
    return compile_globs(tuple(config.training_paths)).match_file(relative_path)


def is_inference_path(config: "Config", relative_path: str) -> bool:
    """The file matches ``inference-paths``: everything in it runs per request."""
    patterns = tuple(config.inference_paths)
    return bool(patterns) and compile_globs(patterns).match_file(relative_path)


def has_inference_prefix(name: str) -> bool:
    """``predict``, ``predict_batch``, ``predictBatch``, ``_infer2`` -- but not ``predictor`` or ``server``."""
    stripped = name.lstrip("_")
    lowered = stripped.lower()
    for prefix in fw.INFERENCE_NAME_PREFIXES:
        if lowered.startswith(prefix):
            rest = stripped[len(prefix) :]
            if not rest or rest[0] == "_" or rest[0].isupper() or rest[0].isdigit():
                return True
    return False


# Decorators that make a function or class a request handler: serving APIs and deployments,
# and bare route decorators (Litestar's ``@get``).
_CONTEXT_DECORATORS = fw.API_DECORATOR_NAMES | fw.DEPLOYMENT_DECORATOR_NAMES | fw.BARE_ROUTE_DECORATOR_NAMES


# -- gates: what a rule needs its file's ``ast`` to show, as data ---------------------------------------
# A Python rule states its syntax triage as a gate (``syntax_gate``) built from the pieces below. Being data
# rather than code, the gates of every rule are written out in :mod:`gemlint.rules.triage_table`, which the
# flake8 plugin reads to rule a file out without importing LibCST, the analyses or any rule.
class Gate:
    """Whether a file whose ``ast`` shows ``triage`` may hold a finding (by spelling only)."""

    def admits(self, triage: Triage) -> bool:  # pragma: no cover - every gate overrides it
        raise NotImplementedError

    def __and__(self, other: "Gate") -> "Gate":
        return AllOf((self, other))

    def __or__(self, other: "Gate") -> "Gate":
        return AnyOf((self, other))


def _names(values) -> str:
    return repr(tuple(sorted(values)))


@dataclass(frozen=True)
class AllOf(Gate):
    gates: tuple[Gate, ...] = ()

    def admits(self, triage: Triage) -> bool:
        return all(gate.admits(triage) for gate in self.gates)

    def __repr__(self) -> str:
        return f"AllOf({self.gates!r})"


@dataclass(frozen=True)
class AnyOf(Gate):
    gates: tuple[Gate, ...] = ()

    def admits(self, triage: Triage) -> bool:
        return any(gate.admits(triage) for gate in self.gates)

    def __repr__(self) -> str:
        return f"AnyOf({self.gates!r})"


#: The gate of a rule that needs no particular syntax.
ALWAYS = AllOf(())


@dataclass(frozen=True)
class Spelled(Gate):
    """One of ``names`` is spelled as a ``kind`` of the file: ``calls``, ``keywords``, ``assigned``,
    ``decorators``, ``functions``, ``classes`` or ``bases`` (see :class:`SyntaxFacts`)."""

    kind: str
    names: frozenset[str]

    def __init__(self, kind: str, names) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "names", frozenset(names))

    def admits(self, triage: Triage) -> bool:
        return not getattr(triage.facts, self.kind).isdisjoint(self.names)

    def __repr__(self) -> str:
        return f"Spelled({self.kind!r}, {_names(self.names)})"


@dataclass(frozen=True)
class Imports(Gate):
    """The file imports one of ``modules`` (or a module below one)."""

    modules: frozenset[str]

    def __init__(self, modules) -> None:
        object.__setattr__(self, "modules", frozenset(modules))

    def admits(self, triage: Triage) -> bool:
        return triage.facts.imports_any(self.modules)

    def __repr__(self) -> str:
        return f"Imports({_names(self.modules)})"


@dataclass(frozen=True)
class NotTest(Gate):
    """The file is no test module (:func:`is_test_module`)."""

    def admits(self, triage: Triage) -> bool:
        return not triage.test_file

    def __repr__(self) -> str:
        return "NotTest()"


@dataclass(frozen=True)
class Production(Gate):
    """The file is production code by its path (:func:`is_production_path`): what the debugging-switch rules
    report on, which exempt tests, benchmarks and profiling scripts."""

    def admits(self, triage: Triage) -> bool:
        return triage.production_file

    def __repr__(self) -> str:
        return "Production()"


@dataclass(frozen=True)
class DefinesFunctions(Gate):
    def admits(self, triage: Triage) -> bool:
        return bool(triage.facts.functions)

    def __repr__(self) -> str:
        return "DefinesFunctions()"


@dataclass(frozen=True)
class InferenceContext(Gate):
    """:meth:`Triage.may_have_inference_context`."""

    def admits(self, triage: Triage) -> bool:
        return triage.may_have_inference_context()

    def __repr__(self) -> str:
        return "InferenceContext()"


@dataclass(frozen=True)
class WritesEnvironment(Gate):
    """:meth:`Triage.may_write_environment` of ``variables``."""

    variables: tuple[str, ...]

    def __init__(self, variables) -> None:
        object.__setattr__(self, "variables", tuple(sorted(variables)))

    def admits(self, triage: Triage) -> bool:
        return triage.may_write_environment(self.variables)

    def __repr__(self) -> str:
        return f"WritesEnvironment({_names(self.variables)})"


@dataclass(frozen=True)
class CallsProjectLoader(Gate):
    """The file calls a project class whose construction loads weights (the project model knows them)."""

    def admits(self, triage: Triage) -> bool:
        return not triage.facts.calls.isdisjoint(triage.project_loaders)

    def __repr__(self) -> str:
        return "CallsProjectLoader()"


#: What the generated table may name.
GATES = (AllOf, AnyOf, Spelled, Imports, NotTest, Production, DefinesFunctions, InferenceContext, WritesEnvironment, CallsProjectLoader)


@dataclass(frozen=True)
class RuleTriage:
    """A Python rule's triage as data (:mod:`gemlint.rules.triage_table`): enough to select it (``code``,
    ``preview``) and to rule a file out by its text and ``ast`` without importing the rule."""

    code: str
    preview: bool
    #: Text markers as groups: the text must contain a marker of every group (no groups: any text).
    markers: tuple[tuple[str, ...], ...]
    gate: Gate

    def may_match(self, text: "str | ScannedText") -> bool:
        return contains_marker_groups(text, self.markers)
