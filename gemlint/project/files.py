"""Facts about the whole project that rules may consult (read-only, computed once per process and root).

A rule that checks one file sometimes needs the rest of the repository: a
Kubernetes probe names a path that a handler in some Python module serves
(GEM601), a health handler calls a helper in another module (GEM602), an ORT
session loads a file that an export script wrote (GEM501). When only some files
are linted (pre-commit), this context still comes from the whole project root
(``--project-root``, else the git work tree holding the files; see :mod:`gemlint.config_tree`).

Files are scanned as bytes for cheap markers first; only candidates are parsed,
with LibCST (routes, model objects) and astroid (cross-module calls, see
:mod:`gemlint.project.call_graph`, asked by :mod:`gemlint.project.reach`). Nothing is imported or run.
"""

from __future__ import annotations

import ast
import os
import re
import stat
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Hashable

from gemlint.analysis.route_paths import compose, path_matches
from gemlint.analysis.triage import collect, is_test_module, is_test_path, project_relative
from gemlint.config import Config
from gemlint.confinement import read_confined
from gemlint.discovery import SKIP_DIRS as _SKIP_DIRS
from gemlint.discovery import Discovery, SourceFile, display_path, root_relative
from gemlint.frontends.module_size import MAX_ANALYSED_CHARS
from gemlint.languages import Language
from gemlint.project.buffers import buffer
from gemlint.project.model import ProjectModel
from gemlint.project.summary import forget_packages, module_name
from gemlint.walk_record import forget_root_walks, root_files

if TYPE_CHECKING:
    import libcst as cst

    from gemlint.analysis.module import ModuleAnalysis
    from gemlint.analysis.routes import Ref
    from gemlint.project.native_owners import NativeOwners

_MARKER = b"optimized_model_filepath"
_MAX_FILES = 20_000
_MAX_FILE_BYTES = 2_000_000
#: How many project files keep their parsed trees at once (see Project._held).
_HELD_TREES = 32
# A module that declares routes or mounts routers mentions a web framework and uses one of the declaring
# forms (checked on bytes, before any parsing: most modules that import a framework only use its types).
_ROUTE_MARKERS = (
    b"fastapi",
    b"starlette",
    b"flask",
    b"quart",
    b"aiohttp",
    b"sanic",
    b"tornado",
    b"django",
    b"litestar",
    b"bottle",
)
_DECLARES_ROUTES = re.compile(
    rb"@(?:[\w.]+\.)?(?:get|post|put|delete|patch|head|options|route|api_route|view|websocket)\s*\("
    rb"|\.(?:add_api_route|add_url_rule|add_route|add_get|add_post|add_view|add_routes|add_subapp|include_router"
    rb"|register_blueprint|blueprint|mount|add_handlers)\s*\("
    rb"|\b(?:Mount|Route|APIRoute|WebSocketRoute|url|URLSpec|Application|RouteTableDef)\s*\("
    rb"|\burlpatterns\b|\bRequestHandler\b"
)


@lru_cache(maxsize=8)
def optimized_model_paths(root: Path) -> frozenset[str]:
    """Base names of the files the project writes through ONNX Runtime's ``optimized_model_filepath``.

    Files are scanned as bytes for the marker first and only those are parsed
    (with ``ast``; nothing is imported or run).
    """
    names: set[str] = set()
    seen = 0
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and not os.path.exists(Path(directory, d, "pyvenv.cfg"))]
        for filename in filenames:
            if not filename.endswith(".py"):
                continue
            seen += 1
            if seen > _MAX_FILES:
                return frozenset(names)
            try:
                data = read_confined(Path(directory, filename), root, _MAX_FILE_BYTES)
                if _MARKER not in data:
                    continue
                tree = ast.parse(data)
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    if any(isinstance(t, ast.Attribute) and t.attr == "optimized_model_filepath" for t in node.targets):
                        names.add(node.value.value.replace("\\", "/").rsplit("/", 1)[-1])
    return frozenset(names)


# -- the project's Python modules ------------------------------------------------------------------
@dataclass(eq=False)
class ParsedFile:
    """One Python file of the project, parsed on demand (LibCST for the analyses, astroid for calls)."""

    path: Path
    text: str
    modname: str
    display: str
    relative: str
    config: Config
    outside: object = None  # the project model, handed to the file's analysis
    _analysis: object = None
    _astroid: object = None
    failed: bool = False

    @property
    def analysis(self):
        """The file's :class:`~gemlint.analysis.module.ModuleAnalysis`, or None when it does not parse."""
        if self._analysis is None and not self.failed:
            from gemlint.analysis.source import analyse_text
            from gemlint.project.answers import ProjectAnswers

            source = SourceFile(self.path, Language.PYTHON, self.display, self.relative)
            try:
                outside = ProjectAnswers(self.outside) if self.outside is not None else None
                self._analysis = analyse_text(source, self.text, self.config, outside)
            except Exception:  # what LibCST's parse raises on odd input
                self.failed = True
                return None
        return self._analysis

    def adopt(self, analysis) -> None:
        """Use ``analysis`` (the engine's, of the same text) so that nodes handed out belong to its tree."""
        analysis.shared = True
        self._analysis = analysis

    def release(self) -> None:
        """Drop the trees (LibCST, metadata, astroid); they are built again if asked for."""
        self._analysis = None
        self._astroid = None

    @property
    def astroid(self):
        if self._astroid is None and not self.failed:
            from gemlint.project.astroid_trees import build_astroid

            self._astroid = build_astroid(self.text, self.modname, str(self.path))
            if self._astroid is None:
                self.failed = True
        return self._astroid

    def function_at(self, line: int) -> cst.FunctionDef | None:
        """The LibCST function whose ``def`` is on ``line``."""
        analysis = self.analysis
        functions = analysis.functions_on(line) if analysis is not None else []
        return functions[-1] if functions else None

    def def_line(self, function: cst.FunctionDef) -> int:
        analysis = self.analysis
        assert analysis is not None
        return analysis.def_line(function)

    def position(self, node: cst.CSTNode):
        analysis = self.analysis
        return analysis.positions[node]


@dataclass(frozen=True)
class ProjectRoute:
    """A route of the project with its full path and where its handler is defined."""

    path: str
    style: str
    methods: frozenset[str] | None
    file: ParsedFile
    handler_line: int  # the ``def`` line of the handler function
    handler_name: str
    framework: str
    #: the application at the top of the mount chain, as (module, kind, name); None when not known
    root: Hashable = None

    @property
    def root_module(self) -> str:
        """The module that declares the route's application."""
        return self.root[0] if isinstance(self.root, tuple) and self.root and isinstance(self.root[0], str) else self.file.modname

    def matches(self, path: str, method: str = "GET") -> bool:
        if self.methods is not None and method not in self.methods and "*" not in self.methods:
            if not (method == "HEAD" and "GET" in self.methods):
                return False
        return path_matches(self.style, self.path, path)


def _handler_at(file: ParsedFile, analysis: ModuleAnalysis, node: cst.FunctionDef | cst.ClassDef) -> tuple[ParsedFile, int, str] | None:
    """(file, ``def`` line, name) of the handler ``node`` of ``analysis`` (:func:`~gemlint.analysis.routes.handler_location`)."""
    from gemlint.analysis.routes import handler_location  # the file is parsed: LibCST is imported already

    where = handler_location(analysis, node)
    return (file, *where) if where is not None else None


class Project:
    """The Python side of a project root, built lazily and cached for the whole process."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.root = config.root
        self._parsed: dict[str, ParsedFile | None] = {}
        # The files whose trees are held, least recently asked for first: a worker that lints thousands of
        # files must not keep every tree it parsed or adopted (they cost tens of MiB each on large modules).
        self._held: OrderedDict[str, ParsedFile] = OrderedDict()

    # -- files and modules ------------------------------------------------------------------
    @cached_property
    def _root(self) -> str:
        return os.path.abspath(self.root)

    @cached_property
    def sources(self) -> list[SourceFile]:
        """Every file of the project root that a run over the root would lint (one walk per run: a run that
        walked the root keeps its walk, :func:`gemlint.walk_record.keep_root_walk`)."""
        return root_files(Discovery(self.config, cwd=Path.cwd()), self.root)

    @cached_property
    def native_owners(self) -> NativeOwners:
        """The project's C++ classes whose objects register themselves (:mod:`gemlint.project.native_owners`)."""
        from gemlint.project.native_owners import NativeOwners  # tree-sitter: only for a run that pairs native resources

        return NativeOwners([source.absolute_path() for source in self.sources if source.language is Language.NATIVE])

    @cached_property
    def python_sources(self) -> list[SourceFile]:
        files = []
        for source in self.sources:
            # Regular files only: opening a FIFO or a device named *.py would block or never end. Modules only:
            # a notebook (.ipynb) is no module (nothing imports it, and its cells run by hand in any order), so
            # it reads the index, through its imports, but never feeds it.
            if source.language is Language.PYTHON and source.absolute_path().endswith(".py") and _is_regular(source):
                files.append(source)
                if len(files) >= _MAX_FILES:
                    break
        return files

    @cached_property
    def python_files(self) -> list[Path]:
        return [source.path for source in self.python_sources]

    @cached_property
    def modules(self) -> dict[str, list[Path]]:
        names: dict[str, list[Path]] = {}
        for path in self.python_files:
            names.setdefault(module_name(path, root=self._root), []).append(path)
        return names

    def module_file(self, dotted: str, near: Path | None = None) -> ParsedFile | None:
        """The project file of module ``dotted``; among several, the one closest to ``near``."""
        candidates = self.modules.get(dotted)
        if not candidates:
            return None
        if len(candidates) > 1 and near is not None:
            candidates = sorted(candidates, key=lambda p: -_shared_depth(p, near))
        return self.parsed(candidates[0])

    def parsed(self, path: Path, text: str | None = None) -> ParsedFile | None:
        key = os.path.abspath(path)
        if key in self._parsed and text is None:
            return self._hold(self._parsed[key])
        if text is None:
            try:
                data = buffer(key)
                if data is None:
                    data = read_confined(key, self.root, _MAX_FILE_BYTES + 1)
                if len(data) > MAX_ANALYSED_CHARS or b"\x00" in data:
                    raise ValueError  # not parsed by LibCST (see MAX_ANALYSED_CHARS), nor linted
                text = data.decode("utf-8-sig")
            except (OSError, ValueError, UnicodeDecodeError):
                self._parsed[key] = None
                return None
        existing = self._parsed.get(key)
        if existing is not None and existing.text == text:
            return self._hold(existing)
        parsed = ParsedFile(
            Path(key), text, module_name(key, True, self._root), display_path(Path(key), Path.cwd()), root_relative(Path(key), self.root), self.config, self.model
        )
        self._parsed[key] = parsed
        return self._hold(parsed)

    def _hold(self, parsed: ParsedFile | None) -> ParsedFile | None:
        if parsed is None:
            return None
        key = str(parsed.path)
        self._held[key] = parsed
        self._held.move_to_end(key)
        while len(self._held) > _HELD_TREES:
            _, oldest = self._held.popitem(last=False)
            oldest.release()
        return parsed

    def parsed_analysis(self, path: Path, text: str) -> ModuleAnalysis | None:
        """The project's analysis of ``text`` at ``path`` when the project has parsed that text already (a file
        whose routes the project read), or None: the engine lints it on the same tree instead of parsing it a
        second time, the nodes the project holds stay nodes of the tree being linted, and what the project's
        analysis found of the tree alone (its index, scopes, routes) is not found again."""
        parsed = self._parsed.get(os.path.abspath(path))
        if parsed is None or parsed._analysis is None or parsed.text != text:
            return None
        return parsed._analysis

    def adopt(self, analysis) -> ParsedFile | None:
        """Use the engine's analysis of a file being linted (its text may be newer than the disk's)."""
        context = analysis.context
        parsed = self.parsed(Path(context.source.path), context.text)
        if parsed is not None and parsed._analysis is not analysis:
            parsed.adopt(analysis)
        return parsed

    # -- routes ---------------------------------------------------------------------------------
    @cached_property
    def _route_modules(self) -> list[tuple[Path, bytes]]:
        """The modules but tests that may declare routes or mount routers, with their bytes (read, not parsed)."""
        found = []
        for path in self.python_files:
            data = buffer(path)
            try:
                if data is None:
                    data = read_confined(path, self.root, _MAX_FILE_BYTES + 1)
            except OSError:
                continue
            if len(data) > MAX_ANALYSED_CHARS or not any(marker in data for marker in _ROUTE_MARKERS):
                continue
            if _DECLARES_ROUTES.search(data) and not self._test_module(path, data):
                found.append((path, data))
        return found

    def _test_module(self, path: Path, data: bytes) -> bool:
        """A test module (:func:`is_test_module`): the applications it builds are exercised by its tests, not
        served, so its routes and mounts are none of the project's."""
        relative = project_relative(path, self.root, root_relative(path, self.root))
        if not is_test_path(relative):
            return False
        facts = self.model.syntax_facts(str(path), data)
        if facts is None:
            try:
                facts = collect(ast.parse(data))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return True
        return is_test_module(relative, facts)

    def routes_may_name(self, parsed: ParsedFile) -> bool:
        """Whether a route declared elsewhere may have its handler in ``parsed``'s module, before any module is
        parsed for :attr:`routes`: a handler is looked up in the module its dotted name (an import, a dotted
        string) resolves to, so a module that declares a route there writes the module's own name. A package's
        ``__init__`` is reached by relative imports that do not, and is never ruled out."""
        name = parsed.modname.rpartition(".")[2]
        if parsed.path.name == "__init__.py" or not name.isascii() or not name.isidentifier():
            return True
        written = re.compile(rb"\b" + name.encode() + rb"\b")
        here = os.path.abspath(parsed.path)
        return any(os.path.abspath(path) != here and written.search(data) for path, data in self._route_modules)

    @cached_property
    def routes(self) -> list[ProjectRoute]:
        if not self._route_modules:
            return []
        declared = []
        # Where each handler defined beside its route is, read while that file's tree is in hand: the routes keep
        # lines, not nodes, so a worker never holds every route module's tree at once (a FastAPI back end
        # declares routes in dozens of modules).
        located: dict[int, tuple[ParsedFile, int, str] | None] = {}
        for path, _ in self._route_modules:
            parsed = self.parsed(path)
            analysis = parsed.analysis if parsed is not None else None
            if analysis is None:
                continue
            try:
                module = analysis.routes
            except RecursionError:
                continue
            for decl in module.routes:
                if decl.handler is not None and decl.handler.local is not None:
                    located[id(decl)] = _handler_at(parsed, analysis, decl.handler.local)
            declared.append((parsed, module))

        def key(parsed: ParsedFile, ref: Ref | None) -> Hashable:
            if ref is None:
                return None
            kind, text = ref
            if kind == "qual":
                resolved = self._resolve_qualified(text, parsed)
                if resolved is not None:
                    return resolved
            return (parsed.modname, kind, text)

        routes, mounts, routers = [], [], {}
        for parsed, module in declared:
            routes.extend((key(parsed, r.owner), (parsed, r)) for r in module.routes)
            mounts.extend((key(parsed, m.parent), key(parsed, m.child), m) for m in module.mounts)
            routers.update({key(parsed, ref): router for ref, router in module.routers.items()})
        files = {id(decl): parsed for _, (parsed, decl) in routes}
        composed = compose(((owner, decl) for owner, (_, decl) in routes), mounts, routers)
        result = []
        for _, full in composed:
            decl = full.decl
            handler = located[id(decl)] if id(decl) in located else self._imported_handler(files[id(decl)], decl)
            if handler is not None:
                file, line, name = handler
                result.append(ProjectRoute(full.path, full.style, decl.methods, file, line, name, decl.framework, full.root))
        return result

    def _resolve_qualified(self, dotted: str, parsed: ParsedFile) -> Hashable | None:
        """``pkg.mod.router`` -> the key of ``router`` in module ``pkg.mod`` (relative names resolved)."""
        if dotted.startswith("."):
            level = len(dotted) - len(dotted.lstrip("."))
            package = parsed.modname if parsed.path.name == "__init__.py" else parsed.modname.rpartition(".")[0]
            for _ in range(level - 1):
                package = package.rpartition(".")[0]
            dotted = f"{package}.{dotted.lstrip('.')}" if package else dotted.lstrip(".")
        parts = dotted.split(".")
        for split in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:split])
            if module in self.modules:
                return (module, "local", ".".join(parts[split:]))
        return None

    @property
    def route_module_count(self) -> int:
        """How many modules may declare routes: what composing :attr:`routes` parses."""
        return len(self._route_modules)

    @property
    def largest_route_module(self) -> int:
        """The size in bytes of the largest module that may declare routes (0: none)."""
        return max((len(data) for _, data in self._route_modules), default=0)

    def route_rows(self) -> list[tuple]:
        """:attr:`routes` as data one process hands another (each handler's file by its path)."""
        return [
            (r.path, r.style, r.methods, str(r.file.path), r.handler_line, r.handler_name, r.framework, r.root) for r in self.routes
        ]

    def adopt_routes(self, rows: list[tuple]) -> None:
        """Take :attr:`routes` from :meth:`route_rows` of a process that composed them: the files are read, not
        parsed, until a rule asks for a handler's code."""
        routes = []
        for path, style, methods, file, line, name, framework, root in rows:
            parsed = self.parsed(Path(file))
            if parsed is not None:
                routes.append(ProjectRoute(path, style, methods, parsed, line, name, framework, root))
        self.__dict__["routes"] = routes

    def _imported_handler(self, parsed: ParsedFile, decl) -> tuple[ParsedFile, int, str] | None:
        """Where the handler a route names by import (``app.add_api_route("/x", views.health)``) is defined."""
        handler = decl.handler
        if handler is None:
            return None
        resolved = self._resolve_qualified(handler.name, parsed)
        if resolved is None:
            return None
        module, _, name = resolved
        target_file = self.module_file(module, near=parsed.path)
        analysis = target_file.analysis if target_file is not None else None
        if analysis is None:
            return None
        from gemlint.analysis.routes import top_level_definition

        node = top_level_definition(analysis, name.split(".")[0])
        return _handler_at(target_file, analysis, node) if node is not None else None

    def handlers_for(self, path: str, method: str, near: Path, among: list[ProjectRoute] | None = None) -> list[ProjectRoute]:
        """Routes serving ``method path`` (of ``among``, else of the whole project); when several services
        declare it, those closest to ``near``."""
        matching = [route for route in (self.routes if among is None else among) if route.matches(path, method)]
        if len(matching) > 1:
            best = max(_shared_depth(route.file.path, near) for route in matching)
            matching = [route for route in matching if _shared_depth(route.file.path, near) == best]
        unique: dict[tuple[str, int], ProjectRoute] = {}
        for route in matching:
            unique.setdefault((str(route.file.path), route.handler_line), route)
        return list(unique.values())

    def find_script(self, written: str, near: Path) -> ParsedFile | None:
        """The project file a health-check command runs (``python /app/healthcheck.py``), by path suffix."""
        wanted = [part for part in written.replace("\\", "/").split("/") if part not in ("", ".")]
        if not wanted or not wanted[-1].endswith(".py"):
            return None
        best: tuple[int, int, Path] | None = None
        for path in self.python_files:
            parts = path.parts
            if parts[-1] != wanted[-1]:
                continue
            suffix = 0
            while suffix < min(len(parts), len(wanted)) and parts[-1 - suffix] == wanted[-1 - suffix]:
                suffix += 1
            score = (suffix, _shared_depth(path, near), path)
            if best is None or score[:2] > best[:2]:
                best = score
        return self.parsed(best[2]) if best else None

    @cached_property
    def model(self):
        """The project model: every module summarised, names resolved across modules."""
        return ProjectModel(self, _INDEX_CACHE.get(self.root), _DIGESTS.get(self.root))  # type: ignore[arg-type]

    @cached_property
    def reach(self):
        from gemlint.project.reach import Reachability

        return Reachability(self)


def _is_regular(source: SourceFile) -> bool:
    """A regular file (or a link to one): as its folder's listing showed, else as it is now."""
    if source.regular is not None:
        return source.regular
    try:
        return stat.S_ISREG(os.stat(source.path).st_mode)
    except OSError:
        return False


def _shared_depth(a: Path, b: Path) -> int:
    a_parts = Path(os.path.abspath(a)).parent.parts
    b_parts = Path(os.path.abspath(b)).parent.parts
    depth = 0
    for x, y in zip(a_parts, b_parts):
        if x != y:
            break
        depth += 1
    return depth


_PROJECTS: dict[Hashable, Project] = {}
#: Where the runs of this process keep the project index, per project root (none: not kept): a folder on
#: disk, or an index held in memory across runs (the language server's).
_INDEX_CACHE: dict[Path, object] = {}
_DIGESTS: dict[Path, object] = {}


def keep_index_in(root: Path, directory: "Path | object | None", digests: object | None = None) -> None:
    """Keep the project index of ``root`` in ``directory`` (the run's cache folder, or an in-memory
    :class:`~gemlint.project.index_store.IndexCache`), or nowhere; ``digests`` are the run's records of
    the project's files (``gemlint.cache.FileDigests``), which spare reading the unchanged ones."""
    if directory is None:
        _INDEX_CACHE.pop(root, None)
    else:
        _INDEX_CACHE[root] = directory
    if digests is None:
        _DIGESTS.pop(root, None)
    else:
        _DIGESTS[root] = digests


def forget_projects() -> None:
    """Drop what this process knows of project files: a new run (of a long-lived process, an editor,
    the test suite) must see the files as they are now."""
    _PROJECTS.clear()
    optimized_model_paths.cache_clear()
    forget_packages()
    forget_root_walks()


def project_for(config: Config) -> Project:
    """The project of ``config.root`` (one per process and configuration): a nested config's files
    share the project of the project root's config."""
    config = config.project_config
    key = (config.root, config.exclude, config.extend_exclude)
    project = _PROJECTS.get(key)
    if project is None:
        if len(_PROJECTS) > 8:
            _PROJECTS.clear()
        project = _PROJECTS[key] = Project(config)
    return project
