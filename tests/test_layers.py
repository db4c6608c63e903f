"""The package's layers: text and front-ends, per-file analysis, project model, rules, engine, entry points.

An import never goes from a lower layer to a higher one and no modules import each other in a loop.
Imports under ``if TYPE_CHECKING:`` are annotations only (never executed) and do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gemlint"

# Bottom to top; the first matching prefix names a module's layer.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "text and front-ends",
        (
            "gemlint.version",
            "gemlint.diagnostics",
            "gemlint.languages",
            "gemlint.globs",
            "gemlint.text",
            "gemlint.confinement",
            "gemlint.atomic",
            "gemlint.collector",
            "gemlint.forked",
            "gemlint.quantities",
            "gemlint.config",
            "gemlint.config_tree",
            "gemlint.repository",
            "gemlint.gitignore",
            "gemlint.discovery",
            "gemlint.walk_record",
            "gemlint.suppression",
            "gemlint.frontends",
        ),
    ),
    ("per-file analysis", ("gemlint.analysis", "gemlint.native")),
    ("project model", ("gemlint.project",)),
    ("rules", ("gemlint.rule", "gemlint.rules", "gemlint.registry", "gemlint.selection")),
    ("engine and runner", ("gemlint.lint_notes", "gemlint.bad_input", "gemlint.engine", "gemlint.python_lint", "gemlint.fixes", "gemlint.fingerprints", "gemlint.cache", "gemlint.baseline", "gemlint.runner", "gemlint.api")),
    ("reporters and entry points", ("gemlint.reporters", "gemlint.docs", "gemlint.bench", "gemlint.cli", "gemlint.server", "gemlint.flake8_plugin", "gemlint.__main__", "gemlint")),
]


def _module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        if "pairs" in relative.parts:  # benchmark programs, run as scripts
            continue
        name = ".".join(relative.parts)
        names[name.removesuffix(".__init__")] = path
    return names


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    todo: list[ast.AST] = [ast.parse(path.read_text())]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            # `from package import module` imports the module (and runs the package's __init__, which every
            # import of a submodule runs): the package counts only where a name is taken from it.
            candidates = submodules if all(m in known for m in submodules) else [base, *submodules]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            todo.extend(ast.iter_child_nodes(node))
            continue
        found.update(c for c in candidates if c in known and c != name)
    return found


def _layer(name: str) -> int:
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix + "."):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index)
    assert best is not None, f"{name} belongs to no layer: add it to LAYERS"
    return best[1]


GRAPH = {name: _runtime_imports(name, path, _module_names()) for name, path in _module_names().items()}


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_imports_never_go_up_a_layer(name: str) -> None:
    upward = sorted(target for target in GRAPH[name] if _layer(target) > _layer(name))
    assert not upward, f"{name} ({LAYERS[_layer(name)][0]}) imports from higher layers: {upward}"


def test_no_import_cycles() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    assert not cycles, f"modules importing each other in a loop: {cycles}"


def test_the_checker_sees_a_loop_and_an_upward_import() -> None:
    # The checks above would pass on an empty graph: make sure they read real edges.
    assert "gemlint.analysis.source" in GRAPH["gemlint.python_lint"]
    assert _layer("gemlint.project.model") > _layer("gemlint.analysis.module") > _layer("gemlint.frontends.helm")


#: Imports of the package's own modules written inside functions of the analysis and project layers, each
#: with why it waits: anything else belongs at the top of the module, where a loop between two modules would
#: show at once instead of hiding behind a call.
DEFERRED = {
    ("gemlint.project.files", "gemlint.project.reach"): "reach imports LibCST and the analyses, needed only when a health check's handler is followed",
    ("gemlint.project.files", "gemlint.project.astroid_trees"): "astroid (0.07 s to import) builds a file's tree only when the call graph asks for it",
    ("gemlint.project.reach", "gemlint.project.call_graph"): "the call graph imports astroid, needed only where LibCST cannot tell that a function calls no project code",
    # A run that parses no Python file with LibCST imports none of LibCST, the analyses and the answers: the
    # project's files are indexed from `ast` summaries, and parsed only when a rule or a route asks.
    ("gemlint.project.files", "gemlint.analysis.source"): "a project file is parsed with LibCST only when its analysis is asked for",
    ("gemlint.project.files", "gemlint.analysis.routes"): "the routes are composed from the analyses of the modules that declare them",
    ("gemlint.project.files", "gemlint.project.answers"): "the answers import LibCST and the analyses, needed only when a file is analysed",
    ("gemlint.project.files", "gemlint.project.native_owners"): "it imports tree-sitter, needed only when a native file builds an object",
}


def _function_imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for function in ast.walk(ast.parse(path.read_text())):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gemlint"):
                    found.append((node.lineno, node.module))
                elif isinstance(node, ast.Import):
                    found.extend((node.lineno, alias.name) for alias in node.names if alias.name.startswith("gemlint"))
    return found


@pytest.mark.parametrize("name", sorted(n for n in _module_names() if n.startswith(("gemlint.analysis.", "gemlint.project."))))
def test_analysis_and_project_modules_import_at_the_top(name: str) -> None:
    inside = [(line, target) for line, target in _function_imports(_module_names()[name]) if (name, target) not in DEFERRED]
    assert not inside, f"{name} imports inside functions: {inside}; move them to the top, or say in DEFERRED why they wait"


def test_the_function_import_check_sees_one() -> None:
    # The deferred import is found by the same walk: the check reads real imports.
    assert any(target == "gemlint.project.reach" for _, target in _function_imports(_module_names()["gemlint.project.files"]))
