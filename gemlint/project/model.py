"""The project model: one index of every Python module under the project root, and what it says of the modules'
classes, functions and callers. The questions a file's analysis asks of it, about the LibCST nodes it holds, are
answered in :mod:`gemlint.project.answers`, from this model: the model itself reads summaries only, and needs
neither LibCST nor the analyses.

Each module is summarised once (:mod:`gemlint.project.summary`); summaries are cached on disk keyed on the
file's content and module name, so a run over an unchanged project reads them back instead of parsing.
Names are resolved through the project's own imports (relative and absolute, ``__init__`` re-exports),
classes through their bases across modules, calls through ``self``/``cls``, instance attributes
(``self.engine = Engine()``) and local instances. Nothing is imported or run.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import pickle
import re
import sys
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection, Iterator, NamedTuple, Protocol

from gemlint.analysis import frameworks as fw
from gemlint.analysis.literal_modules import LARGE_MODULE_BYTES, without_large_literals
from gemlint.analysis.triage import PROJECT_CONTEXT, PROJECT_MODELS, SyntaxFacts, has_inference_prefix, is_test_path
from gemlint import forked
from gemlint.collector import collector_paused, kept_for_the_run
from gemlint.project.buffers import buffer, read_bytes
from gemlint.project.facts import LEDGER_FACTS, PARTS, ProjectFacts, facts_file, facts_key, load_facts, load_part, modules_key, part_key, part_stored, read_facts, save_facts, save_part, write_facts
from gemlint.project.ledger import (
    Ledger, LedgerUnreadable, ModulePieces, Reads, RowsMissing, TracedMemo, callers_index, changed_bases, contribution_digest, subclass_index, untouched,
)
from gemlint.project.ledger_store import StoredLedger, ledger_file, load_ledger, save_ledger
from gemlint.project.index_store import IndexCache, Packed
from gemlint.project.summary_codec import shape_digest
from gemlint.text import file_digest
from gemlint.project.summary import CONTAINER_PARTS, MODE_ARGUMENTS, MODULE_CONTAINERS, UNKNOWN_ELEMENT, CallSite, ClassSummary, FunctionSummary, ModuleSummary, module_names, summarise

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.project.files import Project

    class FileDigester(Protocol):
        """The runner's records of the project's files (``gemlint.cache.FileDigests``)."""

        def digest(self, path: str, read: Callable[[str], bytes]) -> str: ...

#: Calls followed from a caller to its callers, across modules (each hop may open another file).
MAX_HOPS = 4
#: A parameter given a model by more callers than this is not looked into (each caller's file is parsed).
MAX_PASSING_CALLERS = 8
#: Callers in more files than this are judged from the index, without parsing them.
MAX_PARSED_CALLER_FILES = 3
#: Project subclasses of one class followed (a base of a large model zoo has hundreds).
MAX_SUBCLASSES = 64
#: Up to this many modules changed since the facts' ledger was written, the facts are derived again in the
#: process that asks for them, even where a large project's would be derived in a process of their own.
LEDGER_EDITS_IN_PROCESS = 16
#: The facts' ledger file is written again only once more modules than this changed since it was: the pieces
#: it keeps hold for the modules as they were then, and each run derives again those that read a module
#: changed since (a pre-commit run over the file being edited pays no rewrite of a large project's ledger).
LEDGER_REWRITE_AFTER = 8
#: Up to this many pieces and walked functions that read a changed module are derived again to tell whether the
#: edit left the facts as the stored ledger's derivation had them (:meth:`ProjectModel._facts_kept_through_edits`).
LEDGER_TOUCHED_IN_PROCESS = 64
#: The fewest modules whose loading classes and model holdings a derivation hands to a forked copy of its process
#: (where it may fork: :attr:`ProjectModel.split_derivation`): for fewer, the fork costs more than it spares.
SPLIT_DERIVATION_AFTER = 400
#: How deep submodules are followed to tell that a model has no mode, no parameter or no layer the analysis knows
#: (a StyleGAN generator's convolutions sit five classes down). Each class is answered once (memoised), so the
#: bound only stops a pathological nesting; an answer cut off by it is "not known", and findings stand.
_MAX_NESTING = 12
_MAX_RESOLVE = 12
#: How many namespace-package folders above a module give it another importable name.
_MAX_ALIAS_DEPTH = 3
#: Calls that give a module a parameter, a buffer (its use may depend on the mode) or a submodule by name.
_REGISTERS_MEMBERS = frozenset({"register_parameter", "register_module", "register_buffer", "add_module", "setattr", "__setattr__", "Parameter"})
#: Calls that give a module a parameter (or a member that may hold one).
_GIVES_PARAMETERS = frozenset(
    {"register_parameter", "register_module", "add_module", "setattr", "__setattr__", "Parameter", "ParameterList", "ParameterDict", "UninitializedParameter"}
)
#: Builtins whose values are plain data (an attribute bound to one holds no module).
_BUILTIN_VALUES = frozenset({"int", "float", "bool", "str", "bytes", "complex", "list", "dict", "tuple", "set", "frozenset", "len", "range", "min", "max", "sum", "abs", "round"})
#: torch.nn's containers, whose contents the summary records with them (``summary.UNKNOWN_ELEMENT`` for an
#: element it cannot tell).
_TORCH_CONTAINERS = frozenset(f"torch.nn.{name}" for name in MODULE_CONTAINERS)
#: ``self.model.eval``: an attribute bound again to itself, moved or switched (the module's own methods).
_SELF_REBINDING = re.compile(r"self\.\w+\.(?:eval|train|to|cuda|cpu|half|float|bfloat16|requires_grad_)")
#: Calls and classes whose result depends on the module's mode (``self.training``).
_MODE_DEPENDENT = re.compile(r"[Dd]ropout|[Bb]atch_?[Nn]orm|[Ii]nstance_?[Nn]orm|\btraining\b|RReLU|rrelu")
_TORCHSERVE_PACKAGE = "ts.torch_handler."
_ENTRY_DECORATORS = fw.ROUTE_DECORATORS | fw.API_DECORATOR_NAMES | fw.BARE_ROUTE_DECORATOR_NAMES | fw.DEPLOYMENT_DECORATOR_NAMES | fw.BOT_HANDLER_DECORATOR_NAMES


class Target(NamedTuple):
    """What a name resolves to. A tuple, not a dataclass: a large project's derivation hashes targets a million
    times, in memo keys and seen-sets, and a tuple hashes in C."""

    kind: str  # "class", "function", "module" or "external"
    module: str  # the project module (or, for "external", the absolute dotted name)
    qualname: str = ""

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.qualname}" if self.qualname else self.module


class ModuleEntry:
    """A project module: its file, and its summary, decoded from the index when first asked for."""

    __slots__ = ("path", "name", "digest", "_summary", "_index")
    #: While the facts are derived, the log every summary asked for is noted in (:class:`~gemlint.project.ledger.Reads`).
    reads: list[object] | None = None

    def __init__(self, path: str, name: str, digest: str, index: IndexCache) -> None:
        self.path = path
        self.name = name
        self.digest = digest  # content_digest of the file's bytes, as summarised
        self._summary: ModuleSummary | None = None
        self._index = index

    @property
    def summary(self) -> ModuleSummary:
        if ModuleEntry.reads is not None:
            ModuleEntry.reads.append(self.path)
        if self._summary is None:
            summary = self._index.summary((self.name, self.digest))
            if summary is None:  # dropped from the index as corrupt: summarise the file again
                summary = summarise_file(self.path, self.name)[1] or ModuleSummary(self.name, self.path.endswith("__init__.py"))
            self._summary = summary
        return self._summary

    def release(self) -> None:
        self._summary = None

    def syntax_facts(self) -> SyntaxFacts | None:
        """The triage facts of the summary, without keeping the summary when nothing asked for it before: a
        worker triages thousands of files whose summaries no question of its own touches."""
        if self._summary is not None:
            return self._summary.syntax
        summary = self._index.summary((self.name, self.digest), keep=False)
        return summary.syntax if summary is not None else self.summary.syntax


#: The field of :class:`ModulePieces` that holds what deriving each part read.
_READS_OF = {part: f"{part}_reads" for part in ("points", "loading", "holder")}


def _contribution_of(derived: dict[str, tuple], previous: Ledger | None, kind: int) -> Callable[[ModuleEntry], list]:
    """Each module's subclass-index rows (``kind`` 0) or called names (1) in a derivation: derived again, or
    kept by ``previous`` (read from its file on the first ask)."""
    found = dict(derived)  # the derivation lets go of its own map before the facts are asked for parts

    def contribution(entry: ModuleEntry) -> list:
        value = found[entry.path][0]
        if value is None:
            assert previous is not None
            value = previous.rows_of(entry.path)[kind]
        return value

    return contribution


def _class_keys(chain: list[tuple[ModuleEntry, ClassSummary]]) -> set[tuple[str, str]]:
    """The classes of a lineage as (module, class) pairs."""
    return {(entry.summary.name, cls.name) for entry, cls in chain}


def summarise_packed(path: str, module: str) -> tuple[str, Packed | None, str]:
    """:func:`summarise_file` with the summary packed: a process that summarises for another hands it over as
    bytes, and the receiver holds them so until the summary is asked for."""
    digest, summary, shape = summarise_file(path, module)
    # Pickled as built: sharing its values first would make the pickle 7 % smaller at the cost of 70 % more time
    # to make it; the summary's values are shared once it is unpickled (IndexCache.summary).
    return digest, Packed(pickle.dumps(summary, pickle.HIGHEST_PROTOCOL)) if summary is not None else None, shape


def _unpacked(made: tuple[str, Packed | None, str]) -> tuple[str, ModuleSummary | None, str]:
    """A result of :func:`summarise_packed` with its summary decoded, as :meth:`IndexCache.summary` decodes one."""
    digest, packed, shape = made
    return digest, packed.unpack() if packed is not None else None, shape


def summarise_file(path: str, module: str) -> tuple[str, ModuleSummary | None, str]:
    """The digest of the bytes read, their summary and its shape; the summary is None when the file cannot
    be read or parsed (the engine reports that)."""
    try:
        data = read_bytes(path)
    except OSError:
        return "", None, ""
    digest = file_digest(data)
    # A generated table bound at the top level is read from its tokens, not parsed (hundreds of MiB for a few MB).
    source = (without_large_literals(data) or data) if len(data) >= LARGE_MODULE_BYTES else data
    # A syntax tree holds no cycle and is freed as soon as it is summarised: collections while it is built walk
    # it for nothing (a sixth of parsing a large project).
    with collector_paused():
        try:
            tree = ast.parse(source)
            summary = summarise(tree, module, os.path.basename(path) == "__init__.py")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            # Too deep for the summary walk as for the parse (an `elif` chain of hundreds of keys): the module
            # stays out of the index, and its own lint says why.
            return digest, None, ""
        # Freed before the collector is on again: the first collection after would walk the whole tree.
        del tree
    return digest, summary, shape_digest(summary)


class ProjectModel:
    """Cross-module facts of one project root (see the module docstring)."""

    def __init__(self, project: "Project", cache_dir: "Path | IndexCache | None" = None, digests: "FileDigester | None" = None) -> None:
        self.project = project
        self._cache_dir = cache_dir
        self._digests = digests
        self._index: IndexCache | None = None
        self._entries: dict[str, list[ModuleEntry]] | None = None
        self.by_path: dict[str, ModuleEntry] = {}
        self._callers: dict[str, list[tuple[ModuleEntry, FunctionSummary | None, CallSite]]] = {}
        self._hops = 0
        self.memo: dict[tuple, object] = {}
        self._facts: ProjectFacts | None = None
        #: The ledger read to decide where the facts are derived, for the derivation to use.
        self._previous_ledger: Ledger | None = None
        #: While the facts are derived from a ledger that keeps some modules' subclass-index rows and called
        #: names in its file: each module's (``_compute_subclasses``, ``_compute_callers``).
        self._rows_now: Callable[[ModuleEntry], list] | None = None
        self._called_now: Callable[[ModuleEntry], list] | None = None
        #: :meth:`_module_shapes`, with the modules it was made from.
        self._shapes: tuple[dict[str, list[ModuleEntry]], dict[str, tuple[str, str]], str] | None = None
        #: The index keys of the modules built, until the index is stored.
        self._unsaved: set[tuple[str, str]] | None = None
        #: Whether a large derivation may hand half its pieces to a forked copy of this process (:mod:`gemlint.forked`):
        #: set by the process of its own that derives the facts, which runs no other thread.
        self.split_derivation = False

    # -- building ----------------------------------------------------------------------------
    def build(self, mapper=map, save: bool = True, decode: bool = False) -> None:
        """Know every project module; ``mapper`` (a process pool's ``map``) summarises the modules the index
        does not hold. Summaries the index holds are decoded only when asked for; with ``decode``, those made
        now are decoded as they come (while the pool makes the rest) and kept. Without ``save``, the index is
        stored by :meth:`save_index` (:meth:`prepare` stores it while another process derives the facts)."""
        if self._entries is not None:
            return
        # The index's records live on (see gemlint.collector); summarising leaves cycles, and its workers fork.
        with collector_paused():
            index = self._index = self._cache_dir if isinstance(self._cache_dir, IndexCache) else IndexCache(self._cache_dir)
            files = self._files()
            missing = [number for number, (_, _, key) in enumerate(files) if key not in index.entries]
            made = mapper(summarise_packed, [files[i][0] for i in missing], [files[i][1] for i in missing])
            summaries = list(map(_unpacked, made) if decode else made)
        if decode:
            kept_for_the_run()  # every decoded summary lives until the run ends
        with collector_paused():
            self._enter(index, files, missing, summaries)
        self._unsaved = {key for _, _, key in files}
        if save:
            self.save_index()

    def save_index(self) -> None:
        """Store the index built by :meth:`build` (what it read back and what it summarised), once."""
        if self._unsaved is not None and self._index is not None:
            used, self._unsaved = self._unsaved, None
            self._index.save(used)

    def _files(self) -> list[tuple[str, str, tuple[str, str]]]:
        """(path, module name, index key) of each project module that can be read."""
        files: list[tuple[str, str, tuple[str, str]]] = []
        paths = [source.absolute_path() for source in self.project.python_sources]
        for key_path, name in zip(paths, module_names(paths, self._root)):
            try:
                digest = self._digest(key_path)
            except OSError:
                continue
            files.append((key_path, name, (name, digest)))
        return files

    def _enter(self, index: IndexCache, files: list[tuple[str, str, tuple[str, str]]], missing: list[int], summaries: list) -> None:
        """Add the new ``summaries`` (of the ``missing`` files) to the index, and know every module."""
        for number, (digest, summary, shape) in zip(missing, summaries):
            path, name, _ = files[number]
            files[number] = (path, name, (name, digest))  # what was parsed, should the file have changed since
            if summary is not None:
                index.add((name, digest), summary, shape)
        entries: dict[str, list[ModuleEntry]] = {}
        for path, name, key in files:
            if key not in index.entries:
                continue  # unreadable or not Python: the engine reports it
            entry = ModuleEntry(path, name, key[1], index)
            entries.setdefault(name, []).append(entry)
            self.by_path[path] = entry
        self._entries = entries

    def _digest(self, path: str) -> str:
        """:func:`file_digest` of the file, from the run's records of unchanged files when it has them (an
        unsaved editor buffer is always read)."""
        if self._digests is not None and buffer(path) is None:
            return self._digests.digest(path, read_bytes)
        return file_digest(read_bytes(path))

    @property
    def modules(self) -> dict[str, list[ModuleEntry]]:
        if self._entries is None:
            self.build()
        assert self._entries is not None
        return self._entries

    def entry(self, module: str, near: str | None = None) -> ModuleEntry | None:
        found = self.modules.get(module)
        if found and near is not None and "." not in module:
            found = [e for e in found if self._importable_from(e, near)]
        aliased = self._aliases.get(module)
        if aliased:
            found = [*(found or ()), *aliased]
        if not found and near is not None:
            beside = self._beside(module, near)
            found = [beside] if beside is not None else None
        if not found:
            installed = self._installed(module)
            found = [installed] if installed is not None else None
        if not found:
            return None
        if len(found) > 1 and near is not None:
            return max(found, key=lambda e: len(os.path.commonpath([e.path, near])))
        return found[0]

    def _beside(self, module: str, near: str) -> ModuleEntry | None:
        """The module ``module`` names in the folder of the file ``near``, which Python searches first when that
        file runs as a script (``sys.path[0]``), also inside a package: ``src/predict.py`` importing ``model``
        gets ``src/model.py``, though the index knows it as ``src.model``. Asked only for a name nothing else
        is found under. Only a script's folder is searched so: a module imported from a package finds `torch` where
        Python does, not in a `torch.py` beside it."""
        if module.partition(".")[0] not in self._file_stems:
            return None  # `torch`, `numpy`: no file or package of the project is named so
        importer = self.by_path.get(os.path.abspath(near))
        syntax = importer.summary.syntax if importer is not None else None
        if syntax is None or not (syntax.main_block or syntax.script_runs):
            return None
        return self._module_file(os.path.dirname(os.path.abspath(near)), module)

    def _module_file(self, folder: str, module: str) -> ModuleEntry | None:
        """The module ``module`` names as Python finds it from ``folder``: ``a/b.py`` or the package ``a/b/``."""
        base = os.path.join(folder, *module.split("."))
        return self.by_path.get(base + ".py") or self.by_path.get(os.path.join(base, "__init__.py"))

    def _installed(self, module: str) -> ModuleEntry | None:
        """The module ``module`` names under a folder of the project that holds a ``setup.py``: a package installed
        from there (``pip install -e code/``) is imported by its own name from anywhere, though the index knows it
        under the folder's (``code.cm.train_util`` for ``cm.train_util``)."""
        if module.partition(".")[0] not in self._file_stems:
            return None
        return next((found for root in self._install_roots if (found := self._module_file(root, module)) is not None), None)

    @cached_property
    def _install_roots(self) -> tuple[str, ...]:
        """The folders below the root that hold a ``setup.py``: the roots of packages installed from the tree."""
        return tuple(
            sorted(os.path.dirname(path) for path in self.by_path if os.path.basename(path) == "setup.py" and os.path.dirname(path) != self._root)
        )

    @cached_property
    def _file_stems(self) -> frozenset[str]:
        """The last part of every module's name: what a script's own folder may hold under a bare name."""
        return frozenset(name.rpartition(".")[2] for name in self.modules)

    def _importable_from(self, entry: ModuleEntry, near: str) -> bool:
        """A lone module file (no package) in a subfolder is importable as a top-level name only by the
        scripts of its own folder (``sys.path[0]``): another example's ``pipeline_utils.py`` is not the one
        this script imports (that one is missing from the tree). Packages and modules of the root are found
        from anywhere."""
        path = entry.path
        if path.endswith("__init__.py"):
            return True
        folder = os.path.dirname(path)
        if folder == self._root:
            return True
        return (os.path.abspath(near) + os.sep).startswith(folder + os.sep)

    @cached_property
    def _top_names(self) -> frozenset[str]:
        """The first part of every name a project module is found under (:meth:`entry`)."""
        return frozenset(name.partition(".")[0] for name in (*self.modules, *self._aliases))

    @cached_property
    def _root(self) -> str:
        return os.path.abspath(self.project.root)

    @cached_property
    def _aliases(self) -> dict[str, list[ModuleEntry]]:
        """Other names Python imports modules under from a script's folder (``sys.path[0]``), where folders
        without an ``__init__.py`` are namespace packages: ``hifigan/models.py`` of a monorepo's recipe is
        ``hifigan.models`` to the recipe's scripts, though the index knows it as ``models``. Kept apart from
        :attr:`modules` so that walks over the project see each module once."""
        root = os.path.abspath(self.project.root)
        aliases: dict[str, list[ModuleEntry]] = {}
        for path, entry in self.by_path.items():
            name = entry.name
            # Up to the folder that holds the module's top package (the paths are absolute and normal).
            folder = path.rsplit(os.sep, 1 + name.count(".") + path.endswith("__init__.py"))[0]
            if folder == root:
                continue  # a module of the root or of a package there: found under its own name only
            for _ in range(_MAX_ALIAS_DEPTH):
                if not (folder + os.sep).startswith(root + os.sep) or folder == root:
                    break
                part = os.path.basename(folder)
                if not part.isidentifier():
                    break
                name = f"{part}.{name}"
                aliases.setdefault(name, []).append(entry)
                folder = os.path.dirname(folder)
        return aliases

    def syntax_facts(self, path: str, data: bytes) -> SyntaxFacts | None:
        """The triage facts of the file as indexed, when ``data`` is the content that was indexed: the
        engine then needs no ``ast`` parse of its own unless a rule wants the file."""
        if self._entries is None:
            return None
        entry = self.by_path.get(os.path.abspath(path))
        if entry is None or entry.digest != file_digest(data):
            return None
        return entry.syntax_facts()

    def entry_of_path(self, path: str) -> ModuleEntry | None:
        self.modules  # noqa: B018 -- builds the index
        return self.by_path.get(os.path.abspath(path))

    def notebook_entry(self, path: str, tree: ast.Module) -> ModuleEntry | None:
        """An entry for a notebook, whose cells (``tree``) import the project's modules: no module of the index
        (nothing imports a notebook, and its cells are no module's code), but what its imports name resolves as
        from a module beside it (``from model import WaveGrad`` after ``sys.path.insert(0, "..")`` names the
        project's ``model`` package, as from any module)."""
        absolute = os.path.abspath(path)
        key = ("notebook", absolute)
        found = self.memo.get(key)
        if found is None:
            self.modules  # noqa: B018 -- builds the index
            assert self._index is not None
            # Named so that no import names it: a module beside it may share its stem (`inference.py`).
            name = f"{module_names([absolute], self._root)[0]}[notebook]"
            try:
                summary = summarise(tree, name, False)
            except (RecursionError, ValueError):
                return None  # too deep to summarise, as a module of the index would be: nothing resolves
            found = ModuleEntry(absolute, name, "", self._index)
            found._summary = summary
            self.memo[key] = found
        return found  # type: ignore[return-value]

    # -- resolution ------------------------------------------------------------------------------
    def resolve(self, entry: ModuleEntry, spelled: str, _depth: int = 0) -> Target | None:
        """What the dotted ``spelled`` names in the module of ``entry``: a project class, function or module,
        or an external dotted name. Calls in the chain (``make().run``) are not followed."""
        if "()" in spelled or _depth > _MAX_RESOLVE:
            return None
        first, _, rest = spelled.partition(".")
        summary = entry.summary
        if first in summary.classes or first in summary.functions:
            base = Target("class" if first in summary.classes else "function", summary.name, first)
        elif first in summary.registries and not rest:
            return Target("registry", summary.name, first)
        elif first in summary.imports:
            base = self.resolve_absolute(summary.imports[first], entry.path, _depth + 1)
        elif first in summary.bindings:
            return None  # an instance, not a declaration
        else:
            base = self._star_imported(entry, first, _depth + 1)
            if base is None:
                return None
        if base is None or not rest:
            return base
        return self._member(base, rest, entry.path, _depth + 1)

    def _member(self, base: Target, rest: str, near: str, depth: int) -> Target | None:
        if base.kind == "external":
            return Target("external", f"{base.module}.{rest}")
        if base.kind == "module":
            return self.resolve_absolute(f"{base.module}.{rest}", near, depth)
        if base.kind == "class":
            owner = self.entry(base.module, near)
            if owner is None:
                return None
            head, _, tail = rest.partition(".")
            qual = f"{base.qualname}.{head}"
            if qual in owner.summary.classes:
                target = Target("class", base.module, qual)
                return self._member(target, tail, near, depth + 1) if tail else target
            if not tail:
                method = self.find_method(base, head)
                return method
        return None

    def _star_imported(self, entry: ModuleEntry, name: str, depth: int) -> Target | None:
        """What ``name`` is in the module of ``entry`` through its star imports of project modules. Asked once per
        module, name and depth: modules that star-import each other made every name none of them defines (a
        builtin, a local) a walk of all their paths (3.8 million resolutions for a 78-file repository)."""
        if not entry.summary.star_imports:
            return None
        # Keyed on the depth too: an answer cut short by the depth limit is no answer for a shallower question.
        key = ("star", entry.path, name, depth)
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        self.memo[key] = None  # while it is asked: a ring of star imports that comes back here finds nothing more
        found = None
        for star in entry.summary.star_imports:
            target = self.resolve_absolute(f"{star}.{name}", entry.path, depth)
            # A project module imported whole gives its names, its own imports among them (`torch`, `nn`);
            # a library's star import says nothing of which names it holds.
            if target is not None and (target.kind != "external" or target.module != f"{star}.{name}"):
                found = target
                break
        self.memo[key] = found
        return found

    def resolve_absolute(self, dotted: str, near: str | None = None, _depth: int = 0) -> Target | None:
        """A project module, or a class/function of one (re-exports followed), else an external name."""
        if _depth > _MAX_RESOLVE:
            return None
        parts = dotted.split(".")
        if parts[0] not in self._top_names and (near is None or self._beside(parts[0], near) is None) and self._installed(parts[0]) is None:
            return Target("external", dotted)  # no module of the project starts so (`torch`, `numpy`): no lookups
        for split in range(len(parts), 0, -1):
            module = ".".join(parts[:split])
            entry = self.entry(module, near)
            if entry is None:
                continue
            if module not in self.modules and module not in self._aliases:
                module = entry.name  # found beside ``near`` (a script's folder): named as the index knows it
            rest = parts[split:]
            if not rest:
                return Target("module", module)
            first = rest[0]
            summary = entry.summary
            if first in summary.classes or first in summary.functions:
                base = Target("class" if first in summary.classes else "function", module, first)
            elif first in summary.registries and len(rest) == 1:
                return Target("registry", module, first)
            elif first in summary.imports and summary.imports[first] != dotted:
                base = self.resolve_absolute(summary.imports[first], entry.path, _depth + 1)
            elif first not in summary.bindings and (found := self._star_imported(entry, first, _depth + 1)) is not None:
                base = found  # `from .pipeline import *` in a package's `__init__.py`: its names are the package's
            else:
                # A submodule not in the index, or a name bound at run time: a project name we cannot see.
                return None
            if base is None or len(rest) == 1:
                return base
            return self._member(base, ".".join(rest[1:]), entry.path, _depth + 1)
        return Target("external", dotted)

    # -- classes --------------------------------------------------------------------------------
    def class_summary(self, target: Target, near: str | None = None) -> tuple[ModuleEntry, ClassSummary] | None:
        entry = self.entry(target.module, near)
        if entry is None or target.qualname not in entry.summary.classes:
            return None
        return entry, entry.summary.classes[target.qualname]

    def lineage(self, target: Target, near: str | None = None) -> tuple[list[tuple[ModuleEntry, ClassSummary]], set[str]]:
        """The project classes of ``target``'s MRO (itself first) and the external bases they name."""
        key = ("lineage", target, near)
        cached = self.memo.get(key)
        if cached is not None:
            return cached  # type: ignore[return-value]
        chain: list[tuple[ModuleEntry, ClassSummary]] = []
        external: set[str] = set()
        todo, seen = [target], set()
        while todo and len(chain) < _MAX_RESOLVE:
            current = todo.pop(0)
            if current in seen:
                continue
            seen.add(current)
            found = self.class_summary(current, near)
            if found is None:
                continue
            chain.append(found)
            for resolved in self._resolved_bases(*found):
                if resolved is None:
                    continue
                if resolved.kind == "class":
                    todo.append(resolved)
                elif resolved.kind == "external":
                    external.add(resolved.module)
        result = (chain, external)
        self.memo[key] = result
        return result

    def is_plain_class(self, target: Target, near: str | None = None) -> bool:
        """``target`` is a project class whose every base, up its lineage, is a project class the index reads (or
        ``object``): no nn.Module however its methods are named (a trainer's ``train``, ``eval`` and ``test``
        loops)."""
        chain, external = self.lineage(target, near)
        if not chain or external - {"object", "builtins.object"}:
            return False
        return all(base is not None for entry, cls in chain for base in self._resolved_bases(entry, cls))

    def _resolved_bases(self, entry: ModuleEntry, cls: ClassSummary) -> tuple[Target | None, ...]:
        """What each base of ``cls`` names, from its own module: once per class, not once per lineage that
        passes through it (every model class of a large project walks up the same few bases)."""
        key = ("bases", entry.path, cls.name)
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        found = self.memo[key] = tuple(self.resolve(entry, base) for base in cls.bases)
        return found

    def _subclass_index(self) -> dict[Target, list[Target]]:
        """Each project class -> the project classes that name it as a direct base."""
        subclasses = self._facts_part("subclasses")
        key = ("subclasses",)
        if key not in self.memo:
            self.memo[key] = {Target("class", *base): [Target("class", *sub) for sub in subs] for base, subs in subclasses.items()}
        return self.memo[key]  # type: ignore[return-value]

    def _compute_subclasses(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        rows = self._rows_now or self._kept_contribution(0, self._subclass_rows)
        return subclass_index((entry.name, rows(entry)) for entries in self.modules.values() for entry in entries)

    def _kept_contribution(self, kind: int, derive: Callable[[ModuleEntry], list]) -> Callable[[ModuleEntry], list]:
        """Each module's subclass-index rows (``kind`` 0) or called names (1): from the last derivation's ledger
        where nothing they read changed since, else derived from its summary."""
        ledger = self._load_previous_ledger()
        changed = ledger.changed(self._module_shapes()) if ledger is not None else None
        if ledger is None or changed is None:
            return derive
        changed |= ledger.numbers(changed)
        try:
            pieces = ledger.pieces
        except LedgerUnreadable:  # a stored ledger whose read sets name no module keeps nothing
            return derive

        def contribution(entry: ModuleEntry) -> list:
            if (entry.path not in changed) if kind else untouched(pieces[entry.path].subclass_reads, changed):
                try:
                    return ledger.rows_of(entry.path)[kind]
                except RowsMissing:
                    pass
            return derive(entry)

        return contribution

    def overrides(self, method: Target) -> list[Target]:
        """The methods of project subclasses (any depth) that override ``method``: a call of a base's method
        may run any of them (`self.model.warmup()` with `self.model` typed as the base)."""
        owner, _, name = method.qualname.rpartition(".")
        if not owner or name.startswith("__"):
            return []
        subclasses = self.subclasses(Target("class", method.module, owner))
        return [Target("function", sub.module, f"{sub.qualname}.{name}") for sub, located in subclasses if located is not None and name in located[1].methods]

    def subclasses(self, cls: Target) -> Iterator[tuple[Target, tuple[ModuleEntry, ClassSummary] | None]]:
        """Each project subclass of ``cls`` (any depth; about ``MAX_SUBCLASSES`` at most), with its summary where
        the index has it."""
        index = self._subclass_index()
        todo, seen = [cls], set()
        while todo and len(seen) < MAX_SUBCLASSES:
            base = todo.pop()
            if ModuleEntry.reads is not None:
                ModuleEntry.reads.append((base.module, base.qualname))
            for sub in index.get(base, ()):
                if sub not in seen:
                    seen.add(sub)
                    todo.append(sub)
                    yield sub, self.class_summary(sub)

    def method_summary(self, cls: Target, name: str, near: str | None = None) -> tuple[ModuleEntry, FunctionSummary] | None:
        """The method ``name`` of ``cls`` (or the nearest project base class that defines it), with its module's
        entry: read from the entries the class's lineage found, since a module indexed under two names
        (an alias) would not be found again by the name its summary gives."""
        for entry, summary in self.lineage(cls, near)[0]:
            if name in summary.methods:
                return entry, summary.methods[name]
        return None

    def find_method(self, cls: Target, name: str) -> Target | None:
        for entry, summary in self.lineage(cls)[0]:
            if name in summary.methods:
                return Target("function", entry.summary.name, f"{summary.name}.{name}")
        return None

    def hooks(self, target: Target, near: str | None = None) -> frozenset[str] | None:
        """Per-request hooks of a project class through its bases (any module), decorators or protocol."""
        key = ("hooks", target, near)
        if key not in self.memo:
            self.memo[key] = self._hooks(target, near)
        return self.memo[key]  # type: ignore[return-value]

    def _hooks(self, target: Target, near: str | None) -> frozenset[str] | None:
        chain, external = self.lineage(target, near)
        if not chain:
            return None
        for name in sorted(external):
            if name in fw.HOOK_BASES:
                return fw.HOOK_BASES[name]
            if name.startswith(_TORCHSERVE_PACKAGE):
                return fw.HOOK_BASES["ts.torch_handler.base_handler.BaseHandler"]
            if fw.is_grpc_servicer(name):
                return frozenset()
        for entry, cls in chain:
            if cls.name.rsplit(".", 1)[-1] in fw.HOOK_CLASS_NAMES:
                return fw.HOOK_CLASS_NAMES[cls.name.rsplit(".", 1)[-1]]
            if any(fw.is_grpc_servicer(_imported_spelling(entry, base)) for base in cls.bases):
                return frozenset()  # the generated servicer module is usually not in the tree: read by its import
            if cls.decorators and self._deployed_by_decorator(entry, cls):
                return frozenset()
        methods = {name: method for _, cls in reversed(chain) for name, method in cls.methods.items()}
        if _torchserve_protocol(methods):
            return fw.TORCHSERVE_SERVICE_HOOKS
        return None

    def _deployed_by_decorator(self, entry: ModuleEntry, cls: ClassSummary) -> bool:
        """A decorator of ``cls`` deploys it (``@serve.deployment``): once per class, not once per subclass."""
        key = ("deployed", entry.path, cls.name)
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        found = self.memo[key] = any(
            (resolved := self.resolve(entry, decorator)) is not None and resolved.kind == "external" and resolved.module in fw.DEPLOYMENT_DECORATORS
            for decorator in cls.decorators
        )
        return found

    def is_model_class(self, target: Target, near: str | None = None) -> bool:
        chain, external = self.lineage(target, near)
        return bool(chain) and any(_is_module_base(name) for name in external) and not self._engine_wrapper(chain)

    def _engine_wrapper(self, chain: list[tuple[ModuleEntry, ClassSummary]]) -> bool:
        """An nn.Module subclass that wraps an engine outside torch (its module imports TensorRT, ONNX Runtime,
        ...) and puts no torch module in its attributes: running it records no autograd graph, and it has no
        dropout or batch norm for ``.eval()`` to switch."""
        entry = chain[0][0]
        if not any(name.partition(".")[0] in fw.OUTSIDE_TORCH_ENGINES for name in entry.summary.imports.values()):
            return False
        key = ("engine wrapper", entry.path, chain[0][1].name)
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        self.memo[key] = False  # recursion: a class that holds itself is not known to be a wrapper
        holds_module = False
        for owner, cls in chain:
            for callees in cls.attributes.values():
                for spelled in callees:
                    target = self.resolve(owner, spelled)
                    if target is None:
                        continue
                    if target.kind == "external" and (target.module.startswith("torch.nn.") or target.module in fw.MODULE_LOADING_CALLS):
                        holds_module = True
                    elif target.kind == "class" and self.is_model_class(target, owner.path):
                        holds_module = True
        self.memo[key] = not holds_module
        return not holds_module

    # -- factories ----------------------------------------------------------------------------------
    def factory(self, target: Target, near: str | None = None, _depth: int = 0) -> str | None:
        """``"evaluated"`` / ``"constructed"`` when the project function ``target`` returns a model (already
        in eval mode or not), ``"loaded"`` when it returns only a whole module read back (``torch.load``, in the mode
        it was saved in), else None."""
        entry = self.entry(target.module, near)
        # Keyed on the file: in a monorepo two examples' `pipeline_loader` modules share a dotted name.
        key = ("factory", entry.path if entry is not None else None, target)
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        self.memo[key] = None  # recursion
        result = None
        function = entry.summary.functions.get(target.qualname) if entry is not None else None
        if function is not None and _depth < 4:
            for returned in function.returns:
                producers = function.locals.get(returned, [returned]) if "." not in returned else [returned]
                for callee in producers:
                    if callee == returned and returned in function.params:
                        continue
                    kind = self._produces_model(entry, callee, near, _depth)
                    if kind is None:
                        continue
                    if kind == "evaluated" or returned in function.evaluated:
                        result = "evaluated"
                    elif kind == "loaded":
                        result = result or "loaded"  # a whole module read back (`torch.load`): its saved mode
                    elif result != "evaluated":
                        result = "constructed"
        self.memo[key] = result
        return result

    def returns_eval_mode_only(self, target: Target, near: str | None, depth: int = 0) -> bool:
        """The project function ``target`` returns models only in eval mode: each value it returns, or each
        element of a tuple it returns, is put in eval mode in its body (``generator.eval(); return generator,
        config``), or made by project code that makes no model (a configuration). What holds its result runs it in
        eval mode, whatever the flag of the module that holds it says."""
        entry = self.entry(target.module, near)
        function = entry.summary.functions.get(target.qualname) if entry is not None else None
        if function is None or depth > 3:
            return False
        returned = [*function.returns, *function.returned_parts]
        return bool(returned) and all(
            spelled in function.evaluated or self._makes_no_model(entry, function, spelled, near, depth) for spelled in returned
        )

    def _makes_no_model(self, entry: ModuleEntry, function: FunctionSummary, spelled: str, near: str | None, depth: int) -> bool:
        """Every binding of ``spelled`` in ``function`` is a call of project code known to make no model."""
        if spelled in function.params:
            return False  # handed in: the callers decide
        for producer in function.locals.get(spelled, [spelled]):
            target = self.resolve(entry, producer)
            if target is None or target.kind not in ("class", "function"):
                return False
            if target.kind == "class" and self.is_model_class(target, near):
                return False
            if target.kind == "function" and self.factory(target, near, depth + 1) is not None:
                return False
        return True

    def _produces_model(self, entry: ModuleEntry, callee: str, near: str | None, depth: int) -> str | None:
        target = self.resolve(entry, callee)
        if target is None:
            return None
        if target.kind == "class" and self.is_model_class(target, near):
            # `InferenceModel(...)`, whose `__init__` calls `self.net.eval()`: the factory returns it in eval mode
            return "evaluated" if self.class_sets_own_eval_mode(target, near) else "constructed"
        if target.kind == "function":
            return self.factory(target, near, depth + 1)
        if target.kind == "external":
            name = target.module
            if name in fw.MODEL_LOADERS:
                return "loaded"
            if name.startswith(fw.PRETRAINED_PACKAGES) and name.endswith(".from_pretrained") and not fw.other_framework_hub_class(name[: -len(".from_pretrained")]):
                # `AutoTokenizer.from_pretrained`, a processor or a config: loaded, but no model. A pipeline
                # (`StableDiffusionPipeline`, `AutoPipelineForText2Image`) is no module: its call runs its
                # models without gradients, as the per-file tracker knows of pipelines built in place.
                loaded = name.rsplit(".", 2)[-2]
                return None if loaded.endswith(fw.NON_MODEL_PRETRAINED) or "Pipeline" in loaded else "evaluated"
        return None

    def class_sets_own_eval_mode(self, cls: Target, near: str | None = None) -> bool:
        """The project class ``cls`` puts what it builds in eval mode itself: its ``__init__`` calls ``.eval()``
        (``self.eval()``, ``self.decoder.to(device).eval()``), or, for a wrapper with no ``forward``, its methods
        do and none calls ``.train()``. Such a wrapper runs its parts in eval mode whatever its own flag says."""
        chain, _ = self.lineage(cls, near)
        for _, summary in chain:
            init = summary.methods.get("__init__")
            if init is not None and any(site.callee.rsplit(".", 1)[-1] == "eval" for site in init.calls):
                return True
            if init is not None and "self" in self._own_methods_switch(cls, init, near)[0]:
                return True  # `self.eval_and_disable_grad()`, whose `self.train(not mode)` puts it in eval mode
        # A wrapper run through its own methods (no `forward` in its chain): the methods that run its parts put
        # them in eval mode (`self.model.eval()` in `generate`), and none puts anything back in training mode.
        if any(name == "forward" for _, summary in chain for name in summary.methods):
            return False
        methods = [function for _, summary in chain for name, function in summary.methods.items() if name != "__init__"]
        switches = [site.callee for function in methods for site in function.calls if site.callee.startswith("self.")]
        return any(_switch(callee) == "eval" for callee in switches) and not any(_switch(callee) == "train" for callee in switches)

    def methods_freeze_self(self, name: str) -> bool:
        """Every method ``name`` of the project's classes (one at least) freezes every parameter of its instance (``for
        p in self.parameters(): p.requires_grad = False``): calling it on a model of one of them, whichever, freezes
        the model (open-unmix's ``separator.freeze()``)."""
        key = ("methods freeze self", name)
        if key not in self.memo:
            found = [
                function
                for entries in self.modules.values()
                for entry in entries
                for cls in entry.summary.classes.values()
                if (function := cls.methods.get(name)) is not None
            ]
            self.memo[key] = bool(found) and all("self" in function.frozen for function in found)
        return self.memo[key]  # type: ignore[return-value]

    def class_forward_differentiates(self, cls: Target, near: str | None = None) -> bool:
        """The ``forward`` of the project class ``cls`` (through its bases) computes gradients: it calls
        ``torch.autograd.grad`` (or ``torch.autograd.functional``), itself or in the methods it calls on ``self`` and
        on the project objects it keeps (an implicit surface's normals, ``self.sdf.gradient(points)``). Such a model
        needs autograd to run at all."""
        key = ("forward differentiates", cls, near)
        if key not in self.memo:
            located = self.method_summary(cls, "forward", near)
            self.memo[key] = located is not None and self._differentiates(cls, located[0], located[1], near, 0, set())
        return self.memo[key]  # type: ignore[return-value]

    def differentiating_modules(self) -> tuple[str, ...]:
        """The files of the project classes whose ``forward`` computes gradients (:meth:`class_forward_differentiates`):
        a model of this project whose class the analysis does not know may be one of those near it."""
        key = ("differentiating modules",)
        if key not in self.memo:
            # Asked of every class only in a project that calls a gradient function somewhere.
            differentiates = any(self._gradient_call(entry, site.callee) for name in _GRADIENT_NAMES for entry, _, site in self.calls_named(name))
            self.memo[key] = tuple(
                sorted(
                    {
                        entry.path
                        for entries in (self.modules.values() if differentiates else ())
                        for entry in entries
                        for name, cls in entry.summary.classes.items()
                        if "forward" in cls.methods and self.class_forward_differentiates(Target("class", entry.summary.name, name), entry.path)
                    }
                )
            )
        return self.memo[key]  # type: ignore[return-value]

    def _gradient_call(self, entry: ModuleEntry, callee: str) -> bool:
        resolved = self.resolve(entry, callee)
        return resolved is not None and resolved.kind == "external" and resolved.module.startswith(_GRADIENT_CALLS)

    def _differentiates(self, cls: Target, entry: ModuleEntry, function: FunctionSummary, near: str | None, depth: int, seen: set) -> bool:
        if (entry.path, function.qualname) in seen:
            return False
        seen.add((entry.path, function.qualname))
        for site in function.calls:
            if site.callee.rsplit(".", 1)[-1] in _GRADIENT_NAMES and self._gradient_call(entry, site.callee):
                return True
            if depth >= _MAX_DIFFERENTIATION_DEPTH:
                continue
            parts = site.callee.split(".")
            if parts[0] != "self" or len(parts) not in (2, 3):
                continue
            if len(parts) == 2:
                located = self.method_summary(cls, parts[1], near)
                if located is not None and self._differentiates(cls, located[0], located[1], near, depth + 1, seen):
                    return True
                continue
            for held_entry, producer in self.attribute_producers(cls, parts[1]):
                held = self.resolve(held_entry, producer)
                if held is None or held.kind != "class":
                    continue
                located = self.method_summary(held, parts[2], held_entry.path)
                if located is not None and self._differentiates(held, located[0], located[1], held_entry.path, depth + 1, seen):
                    return True
        return False

    def method_sets_own_eval_mode(self, cls: Target, method: str, near: str | None = None) -> bool:
        """The method ``method`` of the project class ``cls`` puts the instance in eval mode (``self.eval()``, or through
        its own methods): what it runs of the model, it runs in eval mode (a vocoder's ``generate``)."""
        located = self.method_summary(cls, method, near)
        if located is None:
            return False
        function = located[1]
        return "self" in function.evaluated or "self" in self._own_methods_switch(cls, function, near)[0]

    def _own_methods_switch(self, cls: Target, function: FunctionSummary, near: str | None, depth: int = 0) -> tuple[set[str], set[str]]:
        """What the methods of ``cls`` that ``function`` calls on ``self`` put in eval mode and freeze, given the
        arguments ``function`` passes (``self.freeze()``; ``self.set_mode(False)``, whose ``self.train(mode)``
        switches), following the methods those call on ``self`` in turn."""
        evaluated: set[str] = set()
        frozen: set[str] = set()
        for site in function.calls:
            head, _, method = site.callee.partition(".")
            if head != "self" or not method or "." in method or method == "__init__":
                continue
            located = self.method_summary(cls, method, near)
            if located is None or located[1] is function:
                continue
            called = located[1]
            evaluated |= called.evaluated | _given_false(called, called.switched_by, site.callee, function.false_arguments)
            frozen |= called.frozen | _given_false(called, called.frozen_by, site.callee, function.false_arguments)
            if depth < 2:
                deeper = self._own_methods_switch(cls, called, near, depth + 1)
                evaluated |= deeper[0]
                frozen |= deeper[1]
        return evaluated, frozen

    # -- calls ---------------------------------------------------------------------------------------
    def calls_named(self, name: str) -> list[tuple[ModuleEntry, FunctionSummary | None, CallSite]]:
        """The project's calls whose spelling ends in ``name``, with the function that makes each (None at
        module level): only the modules that :attr:`facts` says call the name are decoded."""
        found = self._callers.get(name)
        if found is None:
            found = []
            for path in self._facts_part("callers").get(name, ()):
                entry = self.by_path.get(path)
                if entry is None:
                    continue
                for function in entry.summary.callables():
                    found.extend((entry, function, site) for site in function.calls if _calls_name(entry, site.callee, name))
                found.extend((entry, None, site) for site in entry.summary.module_calls if _calls_name(entry, site.callee, name))
            self._callers[name] = found
        return found

    def dependents(self, entry: ModuleEntry, qualname: str) -> list[tuple[ModuleEntry, FunctionSummary]]:
        """The functions of other modules whose parameters FastAPI gives with ``Depends`` on the project function
        ``qualname`` of ``entry``'s module (:attr:`FunctionSummary.dependencies`)."""
        name = qualname.rsplit(".", 1)[-1]
        found = []
        for depending in self._other_modules_naming(entry, name):
            for function in depending.summary.callables():
                for spelled in function.dependencies:
                    if spelled.rsplit(".", 1)[-1] != name:
                        continue
                    target = self.resolve(depending, spelled)
                    owner = self.entry(target.module, depending.path) if target is not None and target.kind == "function" else None
                    if owner is not None and owner.path == entry.path and target.qualname == qualname:  # type: ignore[union-attr]
                        found.append((depending, function))
        return found

    def handed_to(self, entry: ModuleEntry, qualname: str, routed: bool = False) -> list[ModuleEntry]:
        """The modules of other files that hand the project function ``qualname`` of ``entry``'s module to Gradio,
        or with ``routed`` to a route table (found through the callers index, which lists the names a module hands
        over with those it calls)."""
        name = qualname.rsplit(".", 1)[-1]
        found = []
        for handing in self._other_modules_naming(entry, name):
            if any(module.path == entry.path and function.qualname == qualname for module, function in self._handed_functions(handing, name, routed)):
                found.append(handing)
        return found

    def _other_modules_naming(self, entry: ModuleEntry, name: str) -> Iterator[ModuleEntry]:
        """The modules of other files than ``entry``'s that call, hand over or depend on something named ``name``
        (the callers index)."""
        for path in self._facts_part("callers").get(name, ()):
            other = self.by_path.get(path)
            if other is not None and other.path != entry.path:
                yield other

    def _compute_callers(self) -> dict[str, list[str]]:
        called = self._called_now or self._kept_contribution(1, self._called_names)
        return callers_index((entry.path, called(entry)) for entries in self.modules.values() for entry in entries)

    def resolve_call(self, entry: ModuleEntry, function: FunctionSummary | None, callee: str) -> Target | None:
        """The project function or class a call spelled ``callee`` reaches from ``function``."""
        parts = callee.split(".")
        if len(parts) >= 2 and parts[0] in ("self", "cls") and function is not None and "." in function.qualname:
            owner = self.resolve(entry, function.qualname.rsplit(".", 1)[0])
            if owner is None or owner.kind != "class":
                return None
            if len(parts) == 2:
                method = self.find_method(owner, parts[1])
                if method is None and parts[0] == "self":
                    # `self.detector(image)`: an object the class holds, called, runs its class's `__call__`
                    return self._instance_call(list(self.attribute_producers(owner, parts[1])), owner)
                return method
            if len(parts) == 3:
                for held in self.attribute_producers(owner, parts[1]):
                    cls = self.resolve(held[0], held[1])
                    if cls is not None and cls.kind == "class":
                        return self.find_method(cls, parts[2])
            return None
        if len(parts) == 2:
            produced = None
            if function is not None and parts[0] in function.locals:
                producers = function.locals[parts[0]]
                if len(producers) > 1:
                    return None  # bound on different branches to different calls: which method runs is not known
                produced = producers[0]
            elif function is not None and parts[0] in function.annotations:
                produced = function.annotations[parts[0]]  # a parameter: its annotation names its class
            elif parts[0] in entry.summary.bindings:
                produced = entry.summary.bindings[parts[0]][-1]
            if produced is not None:
                cls = self.resolve(entry, produced)
                return self.find_method(cls, parts[1]) if cls is not None and cls.kind == "class" else None
        target = self.resolve(entry, callee)
        if target is not None and target.kind == "class":
            return self.find_method(target, "__init__")
        if len(parts) == 1 and (target is None or target.kind == "external"):
            # `service(image)`, `service` bound to `Service()` here or at module level: its class's `__call__`
            producers = function.locals.get(callee) if function is not None and callee in function.locals else entry.summary.bindings.get(callee)
            if producers:
                return self._instance_call([(entry, producer) for producer in producers])
        return target

    def _instance_callers(self, entry: ModuleEntry, owner: str) -> list[tuple[ModuleEntry, FunctionSummary | None, CallSite]]:
        """Calls of instances of the project class ``owner`` (of ``entry``'s module), which run its ``__call__``
        (``detector(image)``, ``self.detector(image)``): no call names it. Looked for where instances are made, the
        modules that construct the class and its own; a call there of a name or an attribute whose producers
        make it (:meth:`resolve_call`)."""
        wanted = Target("function", entry.summary.name, f"{owner}.__call__")
        found = []
        for module in (entry, *self._other_modules_naming(entry, owner.rsplit(".", 1)[-1])):
            for function in (*module.summary.callables(), None):
                sites = function.calls if function is not None else module.summary.module_calls
                for site in sites:
                    parts = site.callee.split(".")
                    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "self") or "()" in site.callee:
                        continue  # `helper.method(x)` names a method; only a name or an attribute of `self` is an instance
                    target = self.resolve_call(module, function, site.callee)
                    if target is not None and target.module == wanted.module and target.qualname == wanted.qualname:
                        found.append((module, function, site))
        return found

    def _instance_call(self, producers: list[tuple[ModuleEntry, str]], owner: Target | None = None) -> Target | None:
        """The ``__call__`` of the one project class whose instances ``producers`` make (each the spelling of what a
        name or an attribute of ``owner`` is bound to, with the module it is spelled in): a construction, or a
        method or function that returns one. None where they make none, or several (which one runs is not known)."""
        classes = {self._produced_class(entry, producer, owner) for entry, producer in producers}
        if len(classes) != 1 or None in classes:
            return None
        (cls,) = classes
        return self.find_method(cls, "__call__") if cls is not None else None

    def _produced_class(self, entry: ModuleEntry, producer: str, owner: Target | None) -> Target | None:
        if producer.startswith("self."):
            method = self.find_method(owner, producer.removeprefix("self.").removesuffix("()")) if owner is not None else None
            located = self.function_of(method, entry.path) if method is not None else None
            if located is None or len(located[1].returns) != 1:
                return None
            produced = self.resolve(located[0], located[1].returns[0])
            return produced if produced is not None and produced.kind == "class" else None
        produced = self.resolve(entry, producer)
        if produced is not None and produced.kind == "function":
            home = self.entry(produced.module, entry.path)
            returned = self.returned_classes(home, produced, 0) if home is not None else []
            return returned[0] if len(returned) == 1 else None
        return produced if produced is not None and produced.kind == "class" else None

    def attribute_producers(self, owner: Target, attribute: str) -> Iterator[tuple[ModuleEntry, str]]:
        for entry, cls in self.lineage(owner)[0]:
            for callee in cls.attributes.get(attribute, ()):
                yield entry, callee

    def callers(self, entry: ModuleEntry, qualname: str) -> list[tuple[ModuleEntry, FunctionSummary | None, CallSite]]:
        """Calls of the project function ``qualname`` of ``entry``'s module made in other files."""
        # Keyed on the file: a module is also found under the names its scripts import it by (`library.utils`
        # for `library/utils.py` without an `__init__.py`), and a call spelled so names the same function.
        wanted = {(entry.path, qualname)}
        owner, _, name = qualname.rpartition(".")
        lineage: set[tuple[str, str]] | None = None
        if owner and "<locals>" not in owner and name != "__init__":
            # A call of the method on a project base class may run this override: `self.model.warmup()`
            # with `self.model` typed as the base `Model` reaches `FlashCausalLM.warmup`.
            chain, _ = self.lineage(Target("class", entry.summary.name, owner), entry.path)
            wanted.update((base_entry.path, f"{base.name}.{name}") for base_entry, base in chain[1:] if name in base.methods)
            lineage = _class_keys(chain)
        # `Engine(...)` runs `Engine.__init__`: constructions are indexed under the class's name
        spelled = owner.rsplit(".", 1)[-1] if name == "__init__" and owner else name
        found = self._instance_callers(entry, owner) if name == "__call__" and owner and "<locals>" not in owner else []
        for caller in self.calls_named(spelled):
            caller_entry, function, site = caller
            if caller_entry.path == entry.path and _same_file_call(site.callee):
                continue  # `helper(...)`, `self.helper(...)`: the per-file analysis's own business
            if lineage is not None and site.callee.startswith("self.") and site.callee.count(".") == 1 and function is not None:
                # `self.decode()` in another class reaches this override only from this class's bases (their
                # `self` may be one of ours) or subclasses; a sibling's runs its own.
                caller_owner = function.qualname.rpartition(".")[0]
                if (caller_entry.summary.name, caller_owner) not in lineage:
                    caller_chain, _ = self.lineage(Target("class", caller_entry.summary.name, caller_owner), caller_entry.path)
                    if (entry.summary.name, owner) not in _class_keys(caller_chain):
                        continue
            target = self.resolve_call(caller_entry, function, site.callee)
            if target is None or target.kind != "function":
                continue
            # Methods are named by their class's module as the index knows it, which a script of another folder
            # may not import under that name: then any module of that name stands for it.
            called = self.entry(target.module, caller_entry.path)
            paths = [called.path] if called is not None else [e.path for e in self.modules.get(target.module, ())]
            if any((path, target.qualname) in wanted for path in paths):
                found.append(caller)
        return found

    # -- where inference code may be --------------------------------------------------------------------
    def function_of(self, target: Target, near: str | None = None) -> tuple[ModuleEntry, FunctionSummary] | None:
        """The module and summary of the project function ``target``; ``near``, the file that names it, chooses
        among modules of one name (each demo folder's ``app.py``)."""
        entry = self.entry(target.module, near)
        if entry is None:
            return None
        function = _located(entry, target.qualname)
        return (entry, function) if function is not None else None

    def _is_entry(self, entry: ModuleEntry, function: FunctionSummary, names: bool = True) -> bool:
        """An inference entry point by what the summary shows: a decorator, a serving hook, evaluation code, and
        with ``names`` a name (``predict*``, a method of a class named for inference)."""
        owner, _, name = function.qualname.rpartition(".")
        if (names and has_inference_prefix(name)) or name in fw.LIGHTNING_INFERENCE_HOOKS or _evaluates(function):
            return True
        if any(d.rsplit(".", 1)[-1] in _ENTRY_DECORATORS for d in function.decorators):
            return True
        if not owner and fw.is_torchserve_entry(name, function.params):
            return True  # TorchServe's module-level `handle(data, context)`
        if owner and "<locals>" not in owner:
            if names and fw.INFERENCE_CLASS_NAME.search(owner) and not name.startswith(fw.INFERENCE_CLASS_SETUP_PREFIXES):
                return True
            cls = entry.summary.classes.get(owner)
            if cls is not None and name in fw.HTTP_VERB_METHODS and any(d.rsplit(".", 1)[-1] in fw.ROUTE_DECORATORS for d in cls.decorators):
                return True  # an HTTP method of a class-based resource a route decorator registers
            hooks = self.hooks(Target("class", entry.summary.name, owner), entry.path)
            if hooks is not None and (name in hooks or (not hooks and not name.startswith("_"))):
                return True
        return False

    @property
    def context_paths(self) -> frozenset[str]:
        """Files with code that may run per request only because of other modules: functions reached from
        entry points in other files (through at most ``MAX_HOPS`` calls), and serving classes whose framework
        base is reached through a project base in another file."""
        return self.facts.context

    @property
    def evidenced_context_paths(self) -> frozenset[str]:
        """:attr:`context_paths` from entry points that are more than a name (a ``predict*`` function, a class
        named for inference): what the rules report on by default, where a name alone is not evidence."""
        return self.facts.evidenced

    @property
    def facts(self) -> ProjectFacts:
        """What is derived from every module at once (:mod:`gemlint.project.facts`): read back under the key
        of every module's shape, else computed and stored."""
        if self._facts is None:
            self._settle_facts()
        assert self._facts is not None
        return self._facts

    def _settle_facts(self, isolate: "Callable[[Callable[[], None]], ProjectFacts | None] | None" = None, edits_here: bool = True) -> None:
        """Read the facts kept for the modules as they are now; failing that, derive them (with ``isolate``, in a
        process of its own, which stores them, unless ``edits_here`` and a few edited modules only need
        deriving again) and keep them."""
        self.build()
        with collector_paused():  # the ledger and the facts are many objects that live on (see gemlint.collector)
            self._settle_facts_now(isolate, edits_here)

    def _settle_facts_now(self, isolate: "Callable[[Callable[[], None]], ProjectFacts | None] | None", edits_here: bool) -> None:
        assert self._index is not None
        where = self._facts_folder
        key = facts_key(self._root, self._module_shapes(), stored=where is not None, named=self._modules_key())
        stored = self._index.facts.get(self._root) if where is None else load_facts(where, self._root, key)
        if isinstance(stored, ProjectFacts) and stored.key == key:
            self._facts = stored
        else:
            facts = None
            if isolate is not None and not (edits_here and self._ledger_keeps_most()):
                # The index is stored here while that process derives (2 cores); None where processes do not fork.
                facts = isolate(self.save_index)
            if facts is not None:
                self._previous_ledger = None  # the process that derived the facts inherited it; this one forks workers
                self.adopt_facts(facts)
            else:
                self.adopt_facts(self._compute_facts(key), store=True)

    def _ledger_keeps_most(self) -> bool:
        """Whether the last derivation's ledger holds for all but a few modules: deriving again what read them
        decodes a few dozen summaries, not every one, so it costs less here than a process of its own (one
        edited file of a pre-commit run). The ledger read is kept for the derivation, here or in that process."""
        previous = self._previous_ledger = self._load_previous_ledger()
        if previous is None:
            return False
        changed = previous.changed(self._module_shapes())
        return changed is not None and len(changed) <= LEDGER_EDITS_IN_PROCESS

    def facts_to_hand_over(self) -> ProjectFacts:
        """:attr:`facts` for the process that forked this one, without the parts their files hold: the asking
        process reads a part from its file if it asks for one (a few ms), where unpickling a large project's
        callers index cost it a quarter of a second."""
        facts = self.facts
        if self._facts_folder is None:
            return facts  # kept in memory only (`--no-cache`): no file holds a part
        kept = {part: None for part in PARTS if getattr(facts, part) is not None and self._part_stored(part, facts.part_keys[part])}
        return dataclasses.replace(facts, **kept) if kept else facts

    def adopt_facts(self, facts: ProjectFacts, store: bool = False) -> None:
        """Take ``facts`` (computed here, or by a process that inherited this model); with ``store``, keep them
        with the index too."""
        assert self._index is not None
        self._facts = facts
        where = self._facts_folder
        if where is None:
            self._index.facts[self._root] = facts
        elif store:
            save_facts(where, self._root, facts)

    @property
    def _facts_folder(self) -> Path | None:
        assert self._index is not None
        return self._index.file.parent if self._index.file is not None else None

    def _part_stored(self, part: str, key: str) -> bool:
        where = self._facts_folder
        return where is not None and part_stored(where, self._root, part, key)

    def _facts_part(self, part: str) -> dict:
        """A part of :attr:`facts` kept apart (:data:`~gemlint.project.facts.PARTS`): read when first asked
        for, else computed and stored."""
        facts = self.facts
        found = getattr(facts, part)
        if found is None:
            where = self._facts_folder
            found = load_part(where, self._root, facts.part_keys[part], part) if where is not None else None
            setattr(facts, part, found)
            if found is None:
                found = self._compute_subclasses() if part == "subclasses" else self._compute_callers()
                setattr(facts, part, found)
                if where is not None:
                    save_part(where, self._root, facts, part)
        return found

    def _compute_facts(self, key: str) -> ProjectFacts:
        """Derive the facts, keeping every piece of the last derivation's ledger that no changed module and
        no changed subclass-index row touches (:mod:`gemlint.project.ledger`), and store the new ledger (in a
        file, only once more than a few modules changed since the stored one: see :data:`LEDGER_REWRITE_AFTER`)."""
        assert self._index is not None
        file = ledger_file(facts_file(self._facts_folder, self._root)) if self._facts_folder is not None else None
        if file is None and not isinstance(self._cache_dir, IndexCache):
            # Nowhere to keep a ledger (``--no-cache``): derive without noting reads, which costs memory.
            return self._derive_facts(key, None, traced=False)[0]
        previous, self._previous_ledger = self._previous_ledger or self._load_previous_ledger(), None
        if file is not None and isinstance(previous, StoredLedger):
            try:
                kept = self._facts_kept_through_edits(key, previous)
            except LedgerUnreadable:
                kept = None  # the whole derivation finds the ledger unreadable too, and keeps nothing of it
            if kept is not None:
                return kept
        facts, ledger = self._derive_facts(key, previous)
        if file is None:
            self._index.facts[f"{self._root}\0ledger"] = ledger
        else:
            changed = previous.changed(ledger.modules) if previous is not None else None
            if changed is None or len(changed) > LEDGER_REWRITE_AFTER:
                self._complete(ledger)
                # The facts first: a ledger names the facts its pieces were derived with only once they are kept.
                write_facts(facts_file(self._facts_folder, self._root, LEDGER_FACTS), facts)
                ledger.facts_key = facts.key
                save_ledger(file, ledger)
        return facts

    def _facts_kept_through_edits(self, key: str, previous: StoredLedger) -> ProjectFacts | None:
        """The facts the stored ledger's pieces were derived with, under ``key``, when every piece and walked
        function that read a module changed since comes out as it was, derived again (an edit inside a function
        body, as most are): the facts are made of those pieces and walks alone, so they are as they were, and
        neither every module's pieces nor the walk from every entry point is made again. None when one comes out
        otherwise, when more than :data:`LEDGER_TOUCHED_IN_PROCESS` read a changed module, or when the facts the
        ledger names are not kept; the whole derivation decides then.

        Each piece is derived again as the whole derivation would derive it: with no facts to ask, the rows of
        the subclass index first, the walk's facts only for the loading classes and the model holders."""
        changed = previous.changed(self._module_shapes())
        if not changed or not previous.facts_key:
            return None
        pieces, functions = previous.touched(changed)
        if len(pieces) + len(functions) > LEDGER_TOUCHED_IN_PROCESS:
            return None
        base = read_facts(facts_file(self._facts_folder, self._root, LEDGER_FACTS), previous.facts_key)
        if base is None:
            return None
        facts = ProjectFacts(key, part_keys=dict(base.part_keys))
        # The names the changed modules call now: the callers index a piece may ask for is that of the modules now.
        called = previous.called_digests()
        before = dict(called)
        for path in changed:
            called[path] = contribution_digest(self._called_names(self.by_path[path]))
        if called != before:
            facts.part_keys["callers"] = part_key("callers", self._modules_key(), called.values())
        derivers = {"subclass": self._subclass_rows, "points": self._entry_points, "loading": self._loading_names, "holder": self._imports_project_models}

        def as_they_were(*parts: str) -> bool:
            for path, part in pieces:
                if part not in parts:
                    continue
                found, kept = derivers[part](self.by_path[path]), previous.kept_part(path, part)
                if part == "subclass":
                    found = contribution_digest(found)  # type: ignore[arg-type]
                elif part == "points":
                    points, scripts = found  # type: ignore[misc]
                    found = [tuple(point) for point in points], [tuple(function) for function in scripts]
                if found != kept:
                    return False
            return True

        saved, self.memo, self._facts = self.memo, {}, facts  # the pieces ask nothing of the facts they derive
        try:
            if not (as_they_were("subclass") and as_they_were("points")):
                return None
            # The walk from the entry points: each function walked from reaches what it did.
            if any(self._callees(*function) != previous.kept_callees(function) for function in functions):
                return None
            facts.evidenced, facts.reached_evidenced, facts.context, facts.reached = base.evidenced, base.reached_evidenced, base.context, base.reached
            self.memo.clear()  # as the whole derivation does after its walk
            if not as_they_were("loading", "holder"):
                return None
        finally:
            self.memo, self._facts = saved, None
            self.memo.clear()
        facts.loading, facts.holders, facts.same_as = base.loading, base.holders, previous.facts_key
        return facts

    def _complete(self, ledger: Ledger) -> None:
        """Give every piece of ``ledger`` its subclass-index rows and called names, as its file is written: those
        kept as digests are read from the last ledger's file, or derived again if it cannot be read."""
        for entry in (entry for entries in self.modules.values() for entry in entries):
            piece = ledger.pieces[entry.path]
            if piece.subclass_rows is None or piece.called is None:
                try:
                    piece.subclass_rows, piece.called = ledger.rows_of(entry.path)
                except RowsMissing:
                    piece.subclass_rows, piece.called = self._subclass_rows(entry), self._called_names(entry)

    def _load_previous_ledger(self) -> Ledger | None:
        """The ledger of the last derivation: kept with the facts in the cache folder, or in memory."""
        assert self._index is not None
        if self._facts_folder is not None:
            return load_ledger(ledger_file(facts_file(self._facts_folder, self._root)), self._module_shapes(), self._modules_key())
        previous = self._index.facts.get(f"{self._root}\0ledger")
        return previous if isinstance(previous, Ledger) else None

    def _module_shapes(self) -> dict[str, tuple[str, str]]:
        """Each module's path -> (module name, shape), in the model's module order: what the facts are keyed on
        and what a ledger was derived from."""
        assert self._index is not None
        modules = self.modules
        if self._shapes is None or self._shapes[0] is not modules:  # asked three times by a run that derives
            self._shapes = (modules, {entry.path: (entry.name, self._index.shapes.get((entry.name, entry.digest), "")) for entries in modules.values() for entry in entries}, "")
        return self._shapes[1]

    def _modules_key(self) -> str:
        """:func:`~gemlint.project.facts.modules_key` of :meth:`_module_shapes`: the facts' key and the ledger's
        check both start from it."""
        shapes = self._module_shapes()
        assert self._shapes is not None
        if not self._shapes[2]:
            self._shapes = (self._shapes[0], shapes, modules_key(shapes))
        return self._shapes[2]

    def _derive_facts(self, key: str, previous: Ledger | None, traced: bool = True) -> tuple[ProjectFacts, Ledger]:
        """The facts, and the ledger of their pieces: each piece is kept from ``previous`` when nothing it read
        changed, else derived (with ``traced``, noting what it reads)."""
        try:
            return self._derive_facts_from(key, previous, traced)
        except LedgerUnreadable:  # the ledger, or the rows and names it keeps apart, are not what was written: nothing kept holds
            return self._derive_facts_from(key, None, traced)

    def _derive_facts_from(self, key: str, previous: Ledger | None, traced: bool) -> tuple[ProjectFacts, Ledger]:
        assert self._index is not None
        order = [entry for entries in self.modules.values() for entry in entries]
        ledger = Ledger(self._module_shapes())
        changed = previous.changed(ledger.modules) if previous is not None else None
        if changed is None:
            previous = None
        facts = ProjectFacts(key)
        reads = Reads()
        saved, self.memo, self._facts = self.memo, TracedMemo(reads) if traced else {}, facts  # the pieces ask nothing of the facts they derive
        ModuleEntry.reads = reads.log if traced else None
        copy: forked.Forked | None = None  # the forked copy deriving the later pieces, until its result is taken
        try:
            kept = {entry.path: previous.pieces[entry.path] for entry in order if entry.path in previous.pieces} if previous is not None else {}
            # The changed modules (by path, and by number for reads kept from a file), then also the subclass-index
            # rows that changed.
            stale: set = set(changed or ())
            if previous is not None:
                stale.update(previous.numbers(stale))

            def piece(entry: ModuleEntry, part: str, derive: Callable[[ModuleEntry], object]) -> tuple[object, frozenset]:
                old = kept.get(entry.path)
                if old is not None:
                    old_reads = getattr(old, _READS_OF[part])
                    if untouched(old_reads, stale):
                        return old.part(part), old_reads
                start = reads.begin()
                found = derive(entry)
                return found, reads.with_module(reads.since(start), entry.path)

            rows: dict[str, tuple[list | None, str, frozenset]] = {}
            rederived: list[ModuleEntry] = []
            for entry in order:  # each module's rows: kept as a digest, or derived again
                old = kept.get(entry.path)
                if old is not None and untouched(old.subclass_reads, stale):
                    rows[entry.path] = (old.subclass_rows, old.subclass_digest, old.subclass_reads)
                else:
                    start = reads.begin()
                    found = self._subclass_rows(entry)
                    rows[entry.path] = (found, contribution_digest(found), reads.with_module(reads.since(start), entry.path))
                    rederived.append(entry)
            # The parts' keys name their files: facts kept in memory only (``--no-cache``) have none to name.
            stored = self._facts_folder is not None
            if stored:
                facts.part_keys["subclasses"] = part_key("subclasses", self._modules_key(), (rows[entry.path][1] for entry in order))
            # A part is built here when every module's contribution is at hand (derived afresh, or a ledger kept in
            # memory); otherwise it is read from its file when asked, or built then (`_facts_part`).
            if all(row[0] is not None for row in rows.values()):
                facts.subclasses = subclass_index((entry.name, rows[entry.path][0]) for entry in order)
            else:
                self._rows_now = _contribution_of(rows, previous, 0)
            for entry in rederived:  # the rows that changed are those of the modules whose rows' digest changed
                old = kept.get(entry.path)
                if old is not None and rows[entry.path][1] != old.subclass_digest:
                    assert previous is not None
                    stale.update(changed_bases(previous.rows_of(entry.path)[0], rows[entry.path][0]))  # type: ignore[arg-type]
            called_by: dict[str, tuple[list[str] | None, str]] = {}
            # The modules none of whose pieces read a change keep their pieces as they are (most of them, after an
            # edit): one test per read set, no piece made again.
            whole = {
                entry.path
                for entry in order
                if traced and (old := kept.get(entry.path)) is not None and entry.path not in stale and rows[entry.path][2] is old.subclass_reads
                and untouched(old.points_reads, stale) and untouched(old.loading_reads, stale) and untouched(old.holder_reads, stale)
            }

            def later_pieces(entries: list[ModuleEntry]) -> dict[str, tuple[tuple[object, frozenset], tuple[object, frozenset]]]:
                # Each module's loading classes and whether it holds project models: asked of an empty memo, as
                # after the walk below (what each read is kept with its answer).
                self.memo.clear()
                return {entry.path: (piece(entry, "loading", self._loading_names), piece(entry, "holder", self._imports_project_models)) for entry in entries}

            later = [entry for entry in order if entry.path not in whole]
            # A large derivation hands those pieces to a copy of this process, which derives them while this one
            # walks from the entry points: they read the subclass index, built above, and nothing the walk finds.
            copy = forked.start(lambda: later_pieces(later)) if self.split_derivation and len(later) >= SPLIT_DERIVATION_AFTER and facts.subclasses is not None else None
            for entry in order:  # then each module's entry points and called names, on the final stale set
                old = kept.get(entry.path)
                if entry.path in whole:
                    assert old is not None
                    ledger.pieces[entry.path] = old
                    called_by[entry.path] = (old.called, old.called_digest)
                    continue
                (entry_points, scripts), points_reads = piece(entry, "points", self._entry_points)
                if old is not None and entry.path not in stale:
                    called, called_digest = called_by[entry.path] = (old.called, old.called_digest)
                else:
                    names = self._called_names(entry)
                    called, called_digest = called_by[entry.path] = (names, contribution_digest(names))
                subclass_rows, subclass_digest, subclass_reads = rows[entry.path]
                if not traced:  # a ledger that is not kept needs only what the walk below reads
                    subclass_rows, called = [], []
                ledger.pieces[entry.path] = ModulePieces(
                    subclass_rows, subclass_reads, called, entry_points, scripts, points_reads, [], frozenset(), False, frozenset(),  # type: ignore[arg-type]
                    subclass_digest=subclass_digest, called_digest=called_digest,
                )
            if stored:
                facts.part_keys["callers"] = part_key("callers", self._modules_key(), (digest for _, digest in called_by.values()))
            # An edit that changes no module's called names leaves the callers index as stored: read when asked.
            if all(names is not None for names, _ in called_by.values()):
                if not stored or not self._part_stored("callers", facts.part_keys["callers"]):
                    facts.callers = callers_index((path, names) for path, (names, _) in called_by.items())  # type: ignore[misc]
            else:
                self._called_now = _contribution_of(called_by, previous, 1)
            ledger.kept_rows = previous.kept_rows if previous is not None else None
            rows = called_by = {}

            def callees(function: tuple[str, str]) -> list[tuple[str, str]]:
                if function in ledger.callees:  # walked from already (reached at all first, then with evidence)
                    return ledger.callees[function][0]
                old = previous.callees.get(function) if previous is not None else None
                if old is not None and untouched(old[1], stale):
                    ledger.callees[function] = old
                else:
                    start = reads.begin()
                    found = self._callees(*function)
                    ledger.callees[function] = (found, reads.with_module(reads.since(start), function[0]))
                return ledger.callees[function][0]

            facts.evidenced, facts.reached_evidenced, facts.context, facts.reached = self._reach(order, ledger, callees)
            self.memo.clear()  # each part's answers are kept while it runs, not after (a large project's are MBs)
            derived, copy = (copy.result() if copy is not None else None), None
            if derived is None:  # not handed over, or the copy failed
                derived = later_pieces(later)
            else:  # the copy's read sets, shared with the equal ones of this process's pieces
                derived = {path: tuple((found, reads.shared(read)) for found, read in pair) for path, pair in derived.items()}  # type: ignore[misc]
            loading: set[str] = set()
            holders: list[str] = []
            for entry in order:
                record = ledger.pieces[entry.path]
                if entry.path not in whole:
                    (record.loading, record.loading_reads), (record.holder, record.holder_reads) = derived[entry.path]  # type: ignore[assignment]
                loading.update(record.loading)
                if record.holder:
                    holders.append(entry.path)
            facts.loading, facts.holders = frozenset(loading), frozenset(holders)
        finally:
            if copy is not None:  # left before taking its result (an error in the walk): ended with the derivation
                copy.discard()
            ModuleEntry.reads = None
            self.memo, self._facts = saved, None
            self.memo.clear()
            self._rows_now = self._called_now = None
        return facts, ledger

    def _subclass_rows(self, entry: ModuleEntry) -> list[tuple[str, str, str]]:
        found = []
        for qual, cls in entry.summary.classes.items():
            for base in cls.bases:
                resolved = self.resolve(entry, base)
                if resolved is not None and resolved.kind == "class":
                    found.append((resolved.module, resolved.qualname, qual))
        return found

    @staticmethod
    def _called_names(entry: ModuleEntry) -> list[str]:
        names = {site.callee.rsplit(".", 1)[-1] for function in entry.summary.callables() for site in function.calls}
        names.update(site.callee.rsplit(".", 1)[-1] for site in entry.summary.module_calls)
        names.update(spelled.rsplit(".", 1)[-1] for spellings in entry.summary.callbacks.values() for spelled in spellings)
        names.update(spelled.rsplit(".", 1)[-1] for spellings in entry.summary.routed.values() for spelled in spellings)
        names.update(spelled.rsplit(".", 1)[-1] for function in entry.summary.callables() for spelled in function.dependencies)
        names.update(_imported_name(entry, name) for name in list(names) if name in entry.summary.imports)
        return sorted(names)

    def _entry_points(self, entry: ModuleEntry) -> tuple[list[tuple[str, bool, bool]], list[tuple[str, str]]]:
        """The module's entry points (qualname, evidenced, puts its file in context by itself), and the project
        functions its module-level code runs when it is a script that runs what it builds, or hands to Gradio."""
        points = []
        for function in entry.summary.callables():
            if self._is_entry(entry, function, names=False):
                evidenced = True
            elif self._is_entry(entry, function, names=True):
                evidenced = False
            else:
                continue
            # Evaluation code puts its file in context by itself; so does a hook through a project base
            # elsewhere, or a protocol.
            owner = function.qualname.rpartition(".")[0]
            alone = _evaluates(function) or (owner in entry.summary.classes and self.hooks(Target("class", entry.summary.name, owner), entry.path) is not None)
            points.append((function.qualname, evidenced, alone))
        scripts = []
        if self.runs_as_script(entry):
            for site in entry.summary.module_calls:
                target = self.resolve_call(entry, None, site.callee)
                located = self.function_of(target) if target is not None and target.kind == "function" else None
                if located is not None:
                    scripts.append((located[0].path, located[1].qualname))
        # Functions handed to Gradio run on every event, wherever they are defined (`fn=app.respond`, with `app`
        # an instance the page's builder made; `gr.Interface(predict)` with `predict` imported).
        scripts.extend((located[0].path, located[1].qualname) for located in self._handed_functions(entry))
        # So do the views a route table hands to a web framework (Django's `path("predict/", views.predict)`).
        scripts.extend((located[0].path, located[1].qualname) for located in self._handed_functions(entry, routed=True))
        return points, scripts

    def _handed_functions(self, entry: ModuleEntry, name: str | None = None, routed: bool = False) -> list[tuple[ModuleEntry, FunctionSummary]]:
        """The project functions the module of ``entry`` hands to Gradio, or with ``routed`` to a route table
        (those spelled ending in ``name``, when given), each looked up near the module that hands it over."""
        found = []
        for owner, spellings in (entry.summary.routed if routed else entry.summary.callbacks).items():
            handing = _located(entry, owner) if owner else None
            for spelled in spellings:
                if name is not None and spelled.rsplit(".", 1)[-1] != name:
                    continue
                target = self.resolve_call(entry, handing, spelled)
                located = self.function_of(target, entry.path) if target is not None and target.kind == "function" else None
                if located is not None:
                    found.append(located)
        return found

    def _callees(self, path: str, qualname: str) -> list[tuple[str, str]]:
        """The project functions the calls of one function reach (overrides of a called method included)."""
        entry = self.by_path[path]
        function = _located(entry, qualname)
        if function is None:
            return []
        # What FastAPI's `Depends` names runs on every call of the route, as a call would
        called = [*(site.callee for site in function.calls), *function.dependencies]
        return [
            (located[0].path, located[1].qualname)
            for callee in called
            if (target := self.resolve_call(entry, function, callee)) is not None and target.kind == "function"
            for reached in (target, *self.overrides(target))
            if (located := self.function_of(reached)) is not None
        ]

    def _loading_names(self, entry: ModuleEntry) -> list[str]:
        found = []
        for qualname, cls in entry.summary.classes.items():
            if self.initialiser_loads(Target("class", entry.summary.name, qualname), entry.path):
                found.append(cls.name.rsplit(".", 1)[-1])
        for name, function in entry.summary.functions.items():
            if self.helper_loader(entry, function):
                found.append(name)
        # Methods named for loading that load (`runner.load_models()`): only those are asked, as every method of a
        # large project would cost the facts seconds.
        for cls in entry.summary.classes.values():
            for name, method in cls.methods.items():
                if "load" in name.lower() and name not in found and self.helper_loader(entry, method):
                    found.append(name)
        return found

    def _reach(
        self, order: list[ModuleEntry], ledger: Ledger, callees: Callable[[tuple[str, str]], list[tuple[str, str]]]
    ) -> tuple[frozenset[str], frozenset[tuple[str, str]], frozenset[str], frozenset[tuple[str, str]]]:
        """Walk the calls from the entry points once for both questions: each function is visited as reached
        from an entry point that is more than a name (evidenced) and as reached at all, at most once each."""
        found: dict[bool, set[str]] = {True: set(), False: set()}  # evidenced -> files
        seen: dict[bool, set[tuple[str, str]]] = {True: set(), False: set()}
        frontier: list[tuple[tuple[str, str], bool]] = []

        def visit(function: tuple[str, str], evidenced: bool, caller_path: str | None) -> None:
            # Reached with evidence is reached at all: the evidenced state stands for both.
            if function in seen[evidenced] or (not evidenced and function in seen[True]):
                return
            seen[evidenced].add(function)
            frontier.append((function, evidenced))
            if caller_path is not None and function[0] != caller_path:
                found[evidenced].add(function[0])

        for entry in order:
            for qualname, evidenced, alone in ledger.pieces[entry.path].points:
                visit((entry.path, qualname), evidenced, None)
                if alone:
                    found[evidenced].add(entry.path)
        # Module-level code of a script that runs what it builds calls its helpers per run, as an entry point would;
        # Gradio calls what a module hands it on every event.
        for entry in order:
            for function in ledger.pieces[entry.path].scripts:
                visit(function, True, entry.path)
        for _ in range(MAX_HOPS):
            current, frontier[:] = list(frontier), []
            for function, evidenced in current:
                for reached in callees(function):
                    visit(reached, evidenced, function[0])
        return frozenset(found[True]), frozenset(seen[True]), frozenset(found[True] | found[False]), frozenset(seen[True] | seen[False])

    def is_script(self, entry: ModuleEntry) -> bool:
        return _runs_as_script(entry, os.path.relpath(entry.path, self.project.root).replace(os.sep, "/"))

    def runs_as_script(self, entry: ModuleEntry) -> bool:
        """The module's own code runs what it builds (:meth:`is_script`), or runs the methods of an object whose
        construction loads weights (:meth:`_runs_what_it_loads`): the functions its module-level code calls run
        as a script's."""
        return self.is_script(entry) or self._runs_what_it_loads(entry)

    def _runs_what_it_loads(self, entry: ModuleEntry) -> bool:
        """A ``__main__`` block that builds an object of a project class whose construction loads weights and calls
        its methods (``runner = Inferencer(config)``, then ``runner.convert(path)``): a script that loads weights
        and predicts, through the object's methods. Not a test, and not one that trains."""
        syntax = entry.summary.syntax
        relative = os.path.relpath(entry.path, self.project.root).replace(os.sep, "/")
        if syntax is None or not syntax.main_block or is_test_path(relative):
            return False
        calls = entry.summary.module_calls
        if any(_TRAINS.match(site.callee.rsplit(".", 1)[-1]) for site in calls):
            return False  # `solver.train(iterations)`: a training script, whose object may load a checkpoint to resume
        receivers = {site.callee.partition(".")[0] for site in calls if "." in site.callee}
        for name, callees in entry.summary.bindings.items():
            if name not in receivers:
                continue
            for callee in callees:
                target = self.resolve(entry, callee)
                if target is not None and target.kind == "class" and self.initialiser_loads(target, entry.path) is not None:
                    return True
        return False

    def on_inference_path(self, path: str, qualname: str) -> bool:
        """The function is an entry point or reached from one (through at most ``MAX_HOPS`` calls)."""
        return (path, qualname) in self.facts.reached

    def on_evidenced_path(self, path: str, qualname: str) -> bool:
        """:meth:`on_inference_path` from an entry point that is more than a name."""
        return (path, qualname) in self.facts.reached_evidenced

    def holds_project_models(self, path: str) -> bool:
        """The module imports a project nn.Module class or model factory from another module: it may run a
        model without naming torch at all. Asked of every file a run lints, so answered for all at once
        with the facts."""
        return os.path.abspath(path) in self.facts.holders

    def _imports_project_models(self, entry: ModuleEntry) -> bool:
        for imported in entry.summary.imports.values():
            target = self.resolve_absolute(imported, entry.path)
            if target is None or target.module == entry.summary.name:
                continue
            if (target.kind == "class" and self.is_model_class(target, entry.path)) or (
                target.kind == "function" and self.factory(target, entry.path) is not None
            ):
                return True
        return False

    def in_context(self, path: str, names: bool = True) -> bool:
        """The file holds code reached from entry points in other modules (:attr:`context_paths`; with ``names``
        false, from entry points that are more than a name: :attr:`evidenced_context_paths`)."""
        return os.path.abspath(path) in (self.context_paths if names else self.evidenced_context_paths)

    def shows(self, path: str, names: bool = True) -> frozenset[str]:
        """What the project gives the file that its own text does not show: per-request context from other
        modules (``PROJECT_CONTEXT``, see :meth:`in_context`), models built elsewhere (``PROJECT_MODELS``)."""
        shown = {PROJECT_CONTEXT} if self.in_context(path, names) else set()
        if self.holds_project_models(path):
            shown.add(PROJECT_MODELS)
        return frozenset(shown)

    @property
    def loading_classes(self) -> frozenset[str]:
        """The names of the project classes whose construction loads weights, and of the project functions
        that load a model and return it (for the rules' triage)."""
        return self.facts.loading

    def prepare(
        self, mapper=map, isolate: "Callable[[Callable[[], None]], ProjectFacts | None] | None" = None, forks: bool = False, decode: bool = False
    ) -> None:
        """Compute what every file's analysis may ask first (before worker processes fork). ``isolate`` computes
        the facts in a process of its own that inherits this model (it decodes every summary, which this
        process, about to fork workers, should not hold); without ``forks``, a few edited modules are derived
        again here instead (:meth:`_ledger_keeps_most`). With ``forks`` they are not: an edit that many
        modules' pieces read would leave their summaries' memory to every worker. ``decode``: this process
        forks no worker, and decodes the summaries it makes as they come (see :meth:`build`)."""
        self.build(mapper, save=isolate is None, decode=decode and not forks)
        if self._facts is None:
            self._settle_facts(isolate, edits_here=not forks)
        self.save_index()

    def release(self) -> None:
        """Forget decoded summaries and the answers built from them (decoded again when asked): worker
        processes about to fork then inherit an open index, not every summary, and each decodes the few its
        files' questions need."""
        for entry in self.by_path.values():
            entry.release()
        if self._index is not None:
            self._index.release()
        self.memo.clear()
        self._callers = {}

    @contextmanager
    def hop(self) -> Iterator[bool]:
        self._hops += 1
        try:
            yield self._hops <= MAX_HOPS
        finally:
            self._hops -= 1

    def on_inference_path_or_class(self, entry: ModuleEntry, qualname: str) -> bool:
        """The function is on an inference path; for ``__init__``, some method of its class is."""
        owner, _, name = qualname.rpartition(".")
        if name != "__init__" or not owner:
            return self.on_inference_path(entry.path, qualname)
        cls = entry.summary.classes.get(owner)
        return cls is not None and any(self.on_inference_path(entry.path, f"{owner}.{method}") for method in cls.methods)

    def class_mode_free(self, target: Target, near: str, depth: int) -> bool:
        return self.guarded(("mode-free", target, near), lambda: self._mode_free_in(target, near, depth))

    def _mode_free_in(self, target: Target, near: str, depth: int) -> bool:
        chain, external = self.lineage(target, near)
        result = _followed(chain, external, depth)
        called = _callees_of(chain)
        for entry, cls in chain if result else ():
            for name, function in cls.methods.items():
                if any(_MODE_DEPENDENT.search(site.callee) and not (name == "__init__" and self._judged_as_bound(entry, site.callee)) for site in function.calls):
                    result = False
            for attribute, spellings in cls.attributes.items():
                container = any(self._module_container(entry, spelled) for spelled in spellings)
                for spelled in spellings:
                    if spelled == UNKNOWN_ELEMENT and not container:
                        continue  # put into a plain list (`self.widths.append(width)`): not a submodule
                    if _made_from_itself(spelled, attribute):
                        continue  # the attribute's other bindings decide
                    if self._returns_data(entry, chain, spelled.removesuffix("()")):
                        # `self.magnitude = self.transform(x)` (or an element of its result): what its own method
                        # computes with package functions
                        continue
                    owner_name, _, method = spelled.rpartition(".")
                    if method in fw.PRETRAINED_METHODS and owner_name.rsplit(".", 1)[-1].endswith(fw.NON_MODEL_PRETRAINED):
                        continue  # `EagleConfig.from_pretrained(path)`: a configuration, tokenizer or processor, data
                    if spelled.endswith("()"):
                        # An element of a call's result: known only from loaders that return eval-mode models, the
                        # project's own among them.
                        loader = self.resolve(entry, spelled[:-2])
                        if loader is not None and loader.kind == "function" and self.returns_eval_mode_only(loader, entry.path):
                            continue
                        if not (loader is not None and loader.kind == "external" and loader.module in fw.EVAL_MODE_LOADERS):
                            result = False
                        continue
                    produced = self.resolve(entry, spelled)
                    if produced is None and spelled in _BUILTIN_VALUES:
                        continue  # `self.gain = gain` of a parameter annotated `float`: data
                    if produced is None and spelled.startswith("self.") and spelled.count(".") == 1:
                        # `self.conv_1 = self.conv2d(64, 32)`: what the class's own method returns decides
                        built = self._method_builds(chain, spelled.removeprefix("self."))
                        if built is not None:
                            result = result and all(self._mode_free_part(home, part, cls, attribute, depth) for home, part in built)
                            continue
                    chosen = next((m.choices[spelled] for m in cls.methods.values() if spelled in m.choices), None) if produced is None else None
                    if chosen is not None:
                        # `block = Fast if convert else Plain`, then `self.layer = block(...)`: either class
                        for alternative in chosen:
                            picked = self.resolve(entry, alternative)
                            if picked is not None and picked.kind == "external" and self._mode_free_layer(picked, cls, attribute):
                                continue  # `klass = nn.LSTM`, then `self.lstm = klass(...)` without dropout
                            if picked is None or picked.kind != "class" or not self.class_mode_free(picked, entry.path, depth + 1):
                                result = False
                        continue
                    if produced is None and _loaded_through_a_library_star_import(entry, spelled):
                        continue  # `AutoModel.from_pretrained(...)` after `from transformers import *`: in eval mode
                    if produced is None:
                        # an attribute bound to something unknown may be a module with a mode, where it runs or a
                        # method of it is called (`self.labels = weights.keys()`, never called, holds data)
                        result = result and not _runs_attribute(called, attribute)
                    elif produced.kind == "class":
                        result = result and self.class_mode_free(produced, entry.path, depth + 1)
                    elif produced.kind == "external":
                        result = result and self._plain_external(produced, cls, attribute)
                    elif produced.kind == "function" and self.returns_eval_mode_only(produced, entry.path):
                        continue  # `self.net = load_net(path)`, whose body puts what it returns in eval mode
                    elif produced.kind == "function":
                        # `self.net = build_net()`: the project classes the factory returns decide; a function that
                        # returns none (`self.dtype_code = dtype_to_int(dtype)`) is as unknown a value as any, a
                        # module only where the class runs it or calls a method of it
                        owner = self.entry(produced.module, entry.path)
                        returned = self.returned_classes(owner, produced, 0) if owner is not None else []
                        if returned:
                            result = result and all(self.class_mode_free(cls, owner.path, depth + 1) for cls in returned)
                        elif owner is not None and self._builds_plain_block(owner, produced, cls, attribute, depth):
                            continue  # `self.down = double_conv(1, 64)`: a `Sequential` of convolutions and activations
                        else:
                            result = result and not _runs_attribute(called, attribute)
                    else:
                        result = False
        return result

    def _method_builds(self, chain: list[tuple[ModuleEntry, ClassSummary]], name: str) -> list[tuple[ModuleEntry, str]] | None:
        """What the method ``name`` of a class of ``chain`` returns (each spelling with the module it is spelled in):
        calls only; None where it returns anything else, or the chain has no such method."""
        for entry, cls in chain:
            method = cls.methods.get(name)
            if method is None:
                continue
            if not method.returns or method.returned_parts or UNKNOWN_ELEMENT in method.returns:
                return None
            return [(entry, spelled) for spelled in method.returns]
        return None

    def _mode_free_part(self, entry: ModuleEntry, spelled: str, cls: ClassSummary, attribute: str, depth: int) -> bool:
        """What the call ``spelled`` (in ``entry``'s module) builds has no mode: a torch layer without one, or a project
        class without one."""
        part = self.resolve(entry, spelled) if "()" not in spelled else None
        if part is None:
            return False
        if part.kind == "class":
            return self.class_mode_free(part, entry.path, depth + 1)
        return part.kind == "external" and self._plain_external(part, cls, attribute)

    def _builds_plain_block(self, owner: ModuleEntry, target: Target, cls: ClassSummary, attribute: str, depth: int) -> bool:
        """The project function ``target`` returns only torch containers, each holding layers without a mode
        (``return nn.Sequential(nn.Conv2d(...), nn.ReLU())``) or project classes without one."""
        function = owner.summary.functions.get(target.qualname)
        if function is None or not function.returns or not function.returned_contents or UNKNOWN_ELEMENT in function.returned_contents:
            return False
        for spelled in function.returns:
            container = self.resolve(owner, spelled)
            if container is None or container.kind != "external" or container.module not in _TORCH_CONTAINERS:
                return False
        for spelled in function.returned_contents:
            part = self.resolve(owner, spelled)
            if part is None:
                return False
            if part.kind == "class":
                if not self.class_mode_free(part, owner.path, depth + 1):
                    return False
            elif part.kind != "external" or not self._plain_external(part, cls, attribute):
                return False
        return True

    def _plain_external(self, produced: Target, cls: ClassSummary, attribute: str) -> bool:
        """What a call of the external ``produced`` builds has no mode (see :meth:`class_mode_free`)."""
        last = produced.module.rsplit(".", 1)[-1]
        # A function's value (`torch.hann_window(...)`, `librosa.filters.mel(...)`) is data; of
        # classes, only torch's parameter-free modules are known to have no mode.
        plain = (
            last[:1].islower()
            or produced.module.startswith(fw.MODE_FREE_TRANSFORMS)
            or (produced.module.startswith("torch.") and fw.TORCH_NN_PARAMETER_FREE.search(last) is not None)
            or (produced.module.startswith("torch.nn.") and fw.torch_nn_without_mode(last))
            # `nn.LSTM(...)` without dropout (its default, 0): the same in train and eval mode
            or self._mode_free_layer(produced, cls, attribute)
            or (produced.module.startswith("torch.nn.") and last in fw.TORCH_NN_NON_MODULES)
            or produced.module in fw.TORCH_DATA_CLASSES
            # a container, or a bare `nn.Module()` used as one: what it holds is among the
            # attribute's spellings (`add_module`), or buffers
            or produced.module in _TORCH_CONTAINERS
            or produced.module == "torch.nn.Module"
            # a TorchScript custom class (`torch.classes.ns.Op(...)`): a C++ object, no module
            or produced.module.startswith("torch.classes.")
            # a class of a package outside torch and the model libraries (`julius`'s filters,
            # `kaldifeat`): its insides are not read, and it is no evidence of a mode
            or produced.module.partition(".")[0] not in fw.LAYER_PACKAGES
            # a noise scheduler, tokenizer, processor or configuration of a model library: data
            or any(word in last for word in fw.DATA_CLASS_WORDS)
        )
        return plain and (not _MODE_DEPENDENT.search(last) or self._mode_free_layer(produced, cls, attribute))

    def _judged_as_bound(self, entry: ModuleEntry, callee: str) -> bool:
        """A layer built in ``__init__`` that the attribute it is bound to answers for: one whose mode its arguments
        decide (``nn.InstanceNorm2d(c)``), or a project class (``AdaptiveInstanceNorm(c, d)``, judged by its own
        code whatever its name says)."""
        if callee.rsplit(".", 1)[-1] in MODE_ARGUMENTS:
            return True
        target = self.resolve(entry, callee)
        return target is not None and target.kind == "class"

    @staticmethod
    def _mode_free_layer(produced: Target, cls: ClassSummary, attribute: str) -> bool:
        """``produced`` is torch's LSTM, GRU, RNN, multi-head attention or instance norm, and every one bound to the
        attribute is given nothing that makes it differ between modes: no dropout, no running statistics
        (:data:`~gemlint.project.summary.MODE_ARGUMENTS`)."""
        last = produced.module.rsplit(".", 1)[-1]
        return produced.module.startswith("torch.nn.") and last in MODE_ARGUMENTS and cls.mode_free_layers.get(attribute, False)

    def _returns_data(self, entry: ModuleEntry, chain: list[tuple[ModuleEntry, ClassSummary]], callee: str) -> bool:
        """``self.<method>`` of the class returns only what functions of packages compute (``torch.sqrt(...)``) or
        builtins make: data, no module."""
        owner, _, name = callee.partition(".")
        if owner != "self" or not name or "." in name:
            return False
        method = next((cls.methods[name] for _, cls in chain if name in cls.methods), None)
        if method is None or not method.returns:
            return False
        for returned in method.returns:
            for value in method.locals.get(returned, [returned]):
                if value in _BUILTIN_VALUES:
                    continue
                produced = self.resolve(entry, value)
                last = produced.module.rsplit(".", 1)[-1] if produced is not None and produced.kind == "external" else ""
                if not last[:1].islower() or _MODE_DEPENDENT.search(last):
                    return False
        return True

    def class_holds_no_parameter(self, target: Target, near: str, depth: int) -> bool:
        return self.guarded(("no parameter", target, near), lambda: self._no_parameter_in(target, near, depth))

    def _no_parameter_in(self, target: Target, near: str, depth: int) -> bool:
        chain, external = self.lineage(target, near)
        if not _followed(chain, external, depth):
            return False
        # Calls outside a grad-free guard: a part called under one records nothing, whatever it holds.
        called = _callees_of(chain, guarded=False)
        for entry, cls in chain:
            for function in cls.methods.values():
                for site in function.calls:
                    callee = site.callee.rsplit(".", 1)[-1]
                    if callee in _GIVES_PARAMETERS:
                        return False
                    if callee[:1].isupper() and not site.callee.startswith("self.") and not self._parameter_free_part(entry, site.callee, depth):
                        return False
            unknown = set(cls.opaque_attributes)
            for attribute, spellings in cls.attributes.items():
                for spelled in spellings:
                    if spelled == UNKNOWN_ELEMENT or _SELF_REBINDING.fullmatch(spelled) or spelled in _BUILTIN_VALUES:
                        continue
                    produced = self.resolve(entry, spelled) if not spelled.endswith("()") else None
                    if produced is None or produced.kind == "function":
                        unknown.add(attribute)  # what a project function returns: known only by how it is used
                    elif not self._parameter_free_part(entry, spelled, depth):
                        return False
            if any(f"self.{attribute}" in called for attribute in unknown):
                return False  # called as a module: it may be one, with parameters
        return True

    def _parameter_free_part(self, entry: ModuleEntry, spelled: str, depth: int) -> bool:
        """What ``spelled`` builds holds no parameter: a project class that is not a module or is one of the same
        kind, or a package's object that is no layer the analysis knows to hold parameters."""
        produced = self.resolve(entry, spelled)
        if produced is None:
            return True  # a name the index cannot resolve is not a layer it knows
        if produced.kind == "class":
            return not self.is_model_class(produced, entry.path) or self.class_holds_no_parameter(produced, entry.path, depth + 1)
        if produced.kind == "external":
            return not _seen_layer(produced.module)
        return True

    def class_holds_no_seen_layer(self, target: Target, near: str, depth: int) -> bool:
        return self.guarded(("no seen layer", target, near), lambda: self._no_seen_layer_in(target, near, depth))

    def guarded(self, key: tuple, compute: Callable[[], bool]) -> bool:
        """``compute()``, memoised under ``key``; a question met again while it is being answered (a cycle of
        classes) is answered False."""
        if key not in self.memo:
            self.memo[key] = False
            self.memo[key] = compute()
        return self.memo[key]  # type: ignore[return-value]

    def _no_seen_layer_in(self, target: Target, near: str, depth: int) -> bool:
        chain, external = self.lineage(target, near)
        result = _followed(chain, external, depth)
        # A registered buffer is a constant unless a method reads the mode (running statistics kept in training).
        reads_training = any(cls.reads_training for _, cls in chain)
        for entry, cls in chain if result else ():
            for function in cls.methods.values():
                for site in function.calls:
                    callee = site.callee.rsplit(".", 1)[-1]
                    if (callee in _REGISTERS_MEMBERS and (callee != "register_buffer" or reads_training)) or _MODE_DEPENDENT.search(site.callee):
                        result = False
                    elif callee[:1].isupper() and not site.callee.startswith("self."):
                        # A layer built anywhere in its code (`self.blocks.append(nn.Linear(...))`) is a seen one.
                        produced = self.resolve(entry, site.callee)
                        if produced is not None and produced.kind == "external" and _seen_layer(produced.module):
                            result = False
            if cls.opaque_attributes:
                result = False  # `self.net = net`: a module handed in may hold anything
            for attribute, spellings in cls.attributes.items():
                for spelled in spellings:
                    if spelled == UNKNOWN_ELEMENT or _made_from_itself(spelled, attribute):
                        continue
                    produced = self.resolve(entry, spelled) if not spelled.endswith("()") else None
                    if produced is None:
                        result = result and spelled in _BUILTIN_VALUES
                    elif produced.kind == "class":
                        if self.is_model_class(produced, entry.path):
                            result = result and self.class_holds_no_seen_layer(produced, entry.path, depth + 1)
                    elif produced.kind == "external":
                        result = result and not _seen_layer(produced.module)
                    else:
                        result = False
        return result

    def _module_container(self, entry: ModuleEntry, spelled: str) -> bool:
        """``spelled`` builds a torch module container (``nn.ModuleList``, ``nn.ModuleDict``, ``nn.Sequential``)."""
        produced = self.resolve(entry, spelled) if spelled != UNKNOWN_ELEMENT else None
        return produced is not None and produced.kind == "external" and produced.module in _TORCH_CONTAINERS

    def imported_by_its_package(self, entry: ModuleEntry) -> bool:
        """The ``__init__`` of a package that holds the module imports it or a name from it, in any branch
        (``from .kernel import fused`` under a version check): importing the package imports the module, which is
        the package's code even where no call the index resolves names it."""
        name, folder = entry.name, os.path.dirname(entry.path)
        if os.path.basename(entry.path) == "__init__.py":
            folder = os.path.dirname(folder)
        while True:
            package = self.entry_of_path(os.path.join(folder, "__init__.py"))
            if package is None:
                return False
            summary = package.summary
            for imported in (*summary.imported_modules, *summary.imports.values()):
                if imported == name or imported.startswith(name + "."):
                    return True
            folder = os.path.dirname(folder)

    def call_trains(self, entry: ModuleEntry, callee: str, local: dict[str, list[str]], depth: int) -> str | None:
        """The call spelled ``callee`` in ``entry`` runs a project function that trains, or a method that does of
        a project class (``TrainLoop(...).run()``, ``loop.run()`` with ``loop = TrainLoop(...)``), directly or
        through the ``self`` methods and project functions it calls, a few calls deep."""
        if depth > 3 or callee.startswith("self."):
            return None
        receiver, _, method = callee.rpartition(".")
        classes: list[str] = []
        if receiver.endswith("()") and "()" not in receiver[:-2]:
            classes = [receiver[:-2]]
        elif receiver and "." not in receiver and receiver in local:
            classes = local[receiver]
        for spelled in classes:
            target = self.resolve(entry, spelled)
            if target is not None and target.kind == "class":
                reason = self._method_trains(target, method, entry.path, depth)
                if reason:
                    return reason
        if classes or "()" in callee:
            return None
        target = self.resolve(entry, callee)
        if target is not None and target.kind == "class":
            # `commons.Adam(model.parameters(), ...)`: a project class that builds a torch optimizer when made
            init = self.method_summary(target, "__init__", entry.path)
            if init is not None and self._builds_optimizer(*init):
                return f"`{target.qualname}` in `{target.module}` builds a torch optimizer"
            return None
        if target is None or target.kind != "function" or "." in target.qualname:
            return None
        key = ("trains", target)
        if key not in self.memo:
            self.memo[key] = None  # a cycle decides nothing
            located = self.function_of(target)
            self.memo[key] = self._body_trains(located[0], located[1], None, "", depth) if located is not None else None
        return self.memo[key]  # type: ignore[return-value]

    def _method_trains(self, cls: Target, method: str, near: str, depth: int) -> str | None:
        key = ("trains", cls, method)
        if depth > 3:
            return None
        if key not in self.memo:
            self.memo[key] = None  # a cycle decides nothing
            located = self.method_summary(cls, method, near)
            self.memo[key] = self._body_trains(located[0], located[1], cls, near, depth) if located is not None else None
        return self.memo[key]  # type: ignore[return-value]

    def _builds_optimizer(self, entry: ModuleEntry, function: FunctionSummary) -> bool:
        """``function`` (of ``entry``) builds one of torch's optimizers (``torch.optim.Adam(params, ...)``)."""
        for site in function.calls:
            if site.callee.rsplit(".", 1)[-1] not in fw.OPTIMIZER_CLASSES:
                continue
            resolved = self.resolve(entry, site.callee)
            if resolved is not None and resolved.kind == "external" and resolved.module.startswith("torch.optim."):
                return True
        return False

    def _body_trains(self, entry: ModuleEntry, function: FunctionSummary, cls: Target | None, near: str, depth: int) -> str | None:
        """Why ``function`` (of ``entry``; a method of ``cls``) runs a training step, itself or through what it
        calls; results are kept per function, so a call graph is walked once."""
        if summary_trains(function):
            return f"`{function.qualname}` in `{entry.summary.name}` runs a training step"
        for site in function.calls:
            parts = site.callee.split(".")
            reason = (
                self._method_trains(cls, parts[1], near, depth + 1)
                if cls is not None and len(parts) == 2 and parts[0] == "self"
                else self.call_trains(entry, site.callee, function.locals, depth + 1)
            )
            if reason:
                return reason
        return None

    def class_constructor_disables_grad(self, target: Target, near: str, depth: int) -> bool:
        summary = self.class_summary(target, near)
        init = summary[1].methods.get("__init__") if summary is not None else None
        if init is None or not init.calls:
            return False
        parsed = self.project.parsed(Path(summary[0].path))
        cls = parsed.analysis.local_classes.get(target.qualname) if parsed is not None and parsed.analysis is not None else None
        return cls is not None and parsed.analysis.constructor_disables_grad(cls, depth + 1)

    def holds_model(self, entry: ModuleEntry, spelled: str, near: str) -> bool:
        """An attribute bound to ``spelled`` (a callee, or a parameter's annotation) holds a model."""
        produced = self.resolve(entry, spelled)
        if produced is not None and produced.kind == "external":
            # `nn.TransformerEncoder(...)`, `model: torch.nn.Module`; an activation or a loss holds no parameters
            last = produced.module.rsplit(".", 1)[-1]
            if _is_module_base(produced.module) and not fw.TORCH_NN_PARAMETER_FREE.search(last):
                return True
        return self._produces_model(entry, spelled, near, 0) is not None

    def project_package(self, name: str) -> bool:
        return name in self._top_level_names()

    def external_name(self, dotted: str) -> str | None:
        key = ("external name", dotted)
        if key not in self.memo:
            found = None
            if dotted.partition(".")[0] in self._top_level_names():
                target = self.resolve_absolute(dotted)
                if target is not None and target.kind == "external" and target.module != dotted:
                    found = target.module
            self.memo[key] = found
        return self.memo[key]  # type: ignore[return-value]

    def _top_level_names(self) -> frozenset[str]:
        key = ("top-level names",)
        if key not in self.memo:
            self.memo[key] = frozenset(name.partition(".")[0] for name in self.modules)
        return self.memo[key]  # type: ignore[return-value]

    def guard_factory(self, target: Target) -> bool:
        """``target`` is a project function whose body names a grad-free guard (``smart_inference_mode``)."""
        located = self.function_of(target) if target.kind == "function" else None
        return located is not None and located[1].names_grad_guard

    def decorated_grad_free(self, entry: ModuleEntry, function: FunctionSummary) -> bool:
        """A decorator of ``function`` wraps it in a grad-free guard: torch's, or a project factory of one."""
        for decorator in function.decorators:
            target = self.resolve(entry, decorator)
            if target is None:
                continue
            if target.kind == "external" and target.module in fw.NO_GRAD_GUARDS or self.guard_factory(target):
                return True
        return False

    def class_method_runs_forward(self, cls: Target, method: str, near: str, depth: int) -> bool | None:
        located = self.method_summary(cls, method, near)
        if located is None:
            return None
        owner_entry, function = located
        if self.decorated_grad_free(owner_entry, function):
            return False
        if any(self._calls_external(owner_entry, site.callee, fw.EXPORT_CALLS) for site in function.calls):
            return False  # an export method (`model.ExportOnnx(name)`): it runs the model to trace it, not to predict
        attributes = {name for _, summary in self.lineage(cls, near)[0] for name in summary.attributes}
        for site in function.calls:
            if site.guarded or not (site.callee == "self" or site.callee.startswith("self.")):
                continue
            parts = site.callee.split(".")
            if parts == ["self"] or parts[1:] == ["forward"]:
                return True
            if len(parts) == 2 and self.method_summary(cls, parts[1], near) is not None:
                # `self._encode(x)`: another method, which may guard itself in turn
                if depth < 3 and self.class_method_runs_forward(cls, parts[1], near, depth + 1) is not False:
                    return True
                continue
            if parts[1] in attributes and (len(parts) == 2 or parts[-1] in fw.LIBRARY_FORWARD_METHODS or parts[-1] == "forward"):
                if len(parts) == 2 and self._parameter_free_attribute(cls, parts[1]):
                    continue  # `self.transform(sample)` bound to `Compose([...])`: no parameters, no graph
                return True  # `self.vision(x)`, `self.visual.forward_features(x)`: a submodule runs
        return False

    def _calls_external(self, entry: ModuleEntry, callee: str, names: frozenset[str]) -> bool:
        """The call spelled ``callee`` in ``entry`` calls one of the library functions ``names``."""
        target = self.resolve(entry, callee)
        return target is not None and target.kind == "external" and target.module in names

    def _parameter_free_attribute(self, cls: Target, attribute: str) -> bool:
        """Every binding of the attribute ``attribute`` of ``cls`` is made by torch or a model library's part known to
        hold no parameters (a torchvision or torchaudio transform, an activation): calling it records no graph."""
        producers = list(self.attribute_producers(cls, attribute))
        for entry, spelled in producers:
            produced = self.resolve(entry, spelled) if spelled != UNKNOWN_ELEMENT else None
            if produced is None or produced.kind != "external":
                return False
            if not _known_parameter_free(produced.module):
                return False
        return bool(producers)

    def hub_entry_forward_without_grad(self, entry_name: str) -> str | None:
        """``torch.hub.load(repo, "cotracker3_online")`` where the project's own root ``hubconf.py`` defines that
        entry: why every class its entry builds (through its helpers) runs ``forward`` without gradients."""
        hub = next((e for e in self.modules.get("hubconf", ()) if os.path.dirname(e.path) == self._root), None)
        if hub is None or entry_name not in hub.summary.functions:
            return None
        classes = self.returned_classes(hub, Target("function", hub.summary.name, entry_name), 0)
        reasons = [self.class_forward_without_grad(cls) for cls in classes]
        return reasons[0] if reasons and all(reasons) else None

    def hub_folders(self, entry_name: str) -> list[str]:
        """The names of the folders whose ``hubconf.py`` defines the entry ``entry_name``: where a local
        ``torch.hub.load(path, entry_name, source="local")`` may load from when its path is not written out."""
        return [
            os.path.basename(os.path.dirname(entry.path))
            for name, entries in self.modules.items()
            if name.rpartition(".")[2] == "hubconf"
            for entry in entries
            if entry_name in entry.summary.functions
        ]

    def returned_classes(self, entry: ModuleEntry, target: Target, depth: int) -> list[Target]:
        """The project classes the function ``target`` returns instances of, through the functions it returns
        the results of; empty when any return is something else."""
        function = entry.summary.functions.get(target.qualname)
        if function is None or depth > 3 or not function.returns:
            return []
        found = []
        for returned in function.returns:
            for producer in function.locals.get(returned, [returned]):
                resolved = self.resolve(entry, producer)
                if resolved is not None and resolved.kind == "class":
                    found.append(resolved)
                    continue
                owner = self.entry(resolved.module, entry.path) if resolved is not None and resolved.kind == "function" else None
                inner = self.returned_classes(owner, resolved, depth + 1) if owner is not None else []
                if not inner:
                    return []
                found.extend(inner)
        return found

    def class_forward_without_grad(self, cls: Target, near: str | None = None) -> str | None:
        frozen = self._freezes_itself(cls, near)
        if frozen is not None:
            return frozen
        located = self.method_summary(cls, "forward", near)
        if located is None:
            return None
        owner_entry, function = located
        if self.decorated_grad_free(owner_entry, function):
            return f"`{function.qualname}` (in `{owner_entry.summary.name}`) is decorated with a grad-free guard"
        guarded, unguarded = self._own_calls_guarded(cls, function, near, 0)
        if guarded and not unguarded:
            # `with torch.no_grad(): flow = self.raft(a, b)`: every submodule it runs, it runs under a guard (also
            # in a method of its own it calls: `return self.sample(mels)`, whose body is under the guard)
            return f"`{function.qualname}` (in `{owner_entry.summary.name}`) runs its submodules under a grad-free guard"
        return None

    def _own_calls_guarded(self, cls: Target, function: FunctionSummary, near: str | None, depth: int) -> tuple[bool, bool]:
        """Whether ``function`` (a method of ``cls``) calls anything of its own instance under a grad-free guard, and
        whether it calls anything of it outside one; a call of another method of the class counts as that method's
        calls do, a few methods deep."""
        guarded = unguarded = False
        for site in function.calls:
            if not (site.callee == "self" or site.callee.startswith("self.")):
                continue
            if site.guarded:
                guarded = True
                continue
            parts = site.callee.split(".")
            located = self.method_summary(cls, parts[1], near) if len(parts) == 2 and depth < 3 else None
            if located is None:
                unguarded = True  # a submodule run (`self.net(x)`), or a method chain too deep to follow
            elif located[1] is function:
                continue  # a recursive call: its calls are these
            elif self.decorated_grad_free(*located):
                guarded = True
            else:
                inner_guarded, inner_unguarded = self._own_calls_guarded(cls, located[1], near, depth + 1)
                guarded, unguarded = guarded or inner_guarded, unguarded or inner_unguarded
        return guarded, unguarded

    def _freezes_itself(self, cls: Target, near: str | None, depth: int = 0) -> str | None:
        """Why every parameter of an instance of ``cls`` is frozen by its own ``__init__``: it freezes ``self``, or
        every submodule it binds (``self.model.eval().requires_grad_(False)`` beside buffers, or a submodule of a
        project class that freezes itself), with no base but ``nn.Module`` and the project's own whose parameters
        could escape it. A method of its own that ``__init__`` calls (``self.freeze()``) freezes at construction."""
        chain, external = self.lineage(cls, near)
        if not chain or any(base not in fw.MODULE_BASES and base not in _TORCH_CONTAINERS for base in external) or depth > 2:
            return None  # `nn.Linear`, a pretrained model's class: parameters of their own, not bound here
        frozen: set[str] = set()
        for _entry, summary in chain:
            init = summary.methods.get("__init__")
            if init is None:
                continue
            frozen |= init.frozen | self._own_methods_switch(cls, init, near)[1]
        owner = chain[0][1].name
        if "self" in frozen:
            return f"`{owner}.__init__` freezes every parameter of the model"
        if external & _TORCH_CONTAINERS:
            return None  # a container's parts, handed to it whole, are not among its attributes
        # An attribute bound to what the index cannot resolve (`self.labels = weights.keys()`) and never called is
        # no part the forward runs.
        called = _callees_of(chain)
        held = [
            (entry, attribute, callees)
            for entry, summary in chain
            for attribute, callees in summary.attributes.items()
            if f"self.{attribute}" in called or any(self.resolve(entry, callee) is not None for callee in callees)
        ]
        if held and all(f"self.{attribute}" in frozen or self._holds_frozen(entry, callees, depth) for entry, attribute, callees in held):
            return f"`{owner}.__init__` freezes every submodule it holds"
        return None

    def _holds_frozen(self, entry: ModuleEntry, callees: list[str], depth: int) -> bool:
        """Every class an attribute may be built from is a project class that freezes itself, or a part of torch or
        a model library known to hold no parameter (a loss, an activation: nothing to freeze)."""
        for spelled in callees:
            target = self.resolve(entry, spelled)
            if target is not None and target.kind == "external" and _known_parameter_free(target.module):
                continue
            if target is not None and target.kind == "function":
                # `self.net = get_network(kind)`: every class the factory may build freezes itself
                owner = self.entry(target.module, entry.path)
                built = self.returned_classes(owner, target, 0) if owner is not None else []
                if built and all(self._freezes_itself(cls, owner.path, depth + 1) is not None for cls in built):
                    continue
                return False
            if target is None or target.kind != "class" or self._freezes_itself(target, entry.path, depth + 1) is None:
                return False
        return bool(callees)

    def helper_loader(
        self, entry: ModuleEntry, function: FunctionSummary, accept: Callable[[ModuleEntry, CallSite], bool] | None = None, objects: bool = False
    ) -> str | None:
        """What a project function calls to load a model, whether it returns the model or runs it itself: a model
        loader or pretrained constructor, with weights put into a model (``load_state_dict``) where the loader is
        ``torch.load`` (which reads any tensors, not only models). ``accept`` may refuse a loading call (one that
        runs once, kept in a global); with ``objects``, it judges the constructions of loading classes too."""
        # A method's helpers (`cls.from_local(...)` in a `from_pretrained` classmethod) are followed.
        owner = entry.summary.classes.get(function.qualname.rpartition(".")[0])
        return self._loading_call(entry, owner, function, 0, tensors_need_state=True, accept=accept, objects=objects)

    def helper_exporter(self, entry: ModuleEntry, function: FunctionSummary, depth: int = 0) -> str | None:
        """The exporter (:data:`~gemlint.analysis.frameworks.EXPORT_CALLS`) a project function calls, itself or
        through the project functions it calls (``build_binary`` calling ``torch.export.export``): a function that
        calls it runs its model once to trace or export it, not to serve."""
        key = ("exporter", entry.path, function.qualname)
        if key not in self.memo:
            self.memo[key] = None  # a cycle of helpers exports nothing more
            self.memo[key] = self._exporter_in(entry, function, depth)
        return self.memo[key]  # type: ignore[return-value]

    def _exporter_in(self, entry: ModuleEntry, function: FunctionSummary, depth: int) -> str | None:
        helpers = []
        for site in function.calls:
            target = self.resolve_call(entry, function, site.callee)
            if target is None:
                continue
            if target.kind == "external" and target.module in fw.EXPORT_CALLS:
                return target.module
            if target.kind == "function":
                helpers.append(target)
        for target in helpers if depth < 3 else ():
            located = self.function_of(target)
            found = self.helper_exporter(*located, depth + 1) if located is not None else None
            if found is not None:
                return found
        return None

    def initialiser_loads(self, target: Target, near: str, accept: Callable[[ModuleEntry, CallSite], bool] | None = None) -> str | None:
        """Follow ``__init__`` up the project bases while it defers to ``super().__init__``; ``accept`` may refuse a
        loading call (one kept in a global while that is empty), as for :meth:`helper_loader`."""
        chain = self.lineage(target, near)[0]
        target_cls = chain[0][1] if chain else None
        for owner_entry, owner in chain:
            init = owner.methods.get("__init__")
            if init is None:
                continue
            loader = self._init_loader(owner_entry, owner, init) if accept is None else self._loading_call(owner_entry, owner, init, 0, accept=accept, objects=True)
            if loader is not None:
                return f"its `__init__`, in `{owner_entry.summary.name}`, calls `{loader}(...)`" if owner is target_cls else (
                    f"the `__init__` of its base `{owner.name}`, in `{owner_entry.summary.name}`, calls `{loader}(...)`"
                )
            if not any(site.callee.startswith("super().") for site in init.calls):
                return None
        return None

    def _init_loader(self, entry: ModuleEntry, owner: ClassSummary, init: FunctionSummary) -> str | None:
        """:meth:`_loading_call` of a class's ``__init__``, once per class: every subclass's walk up its bases
        asks it again (a large project's model classes share a few bases)."""
        key = ("init-loader", entry.path, owner.name)
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        found = self.memo[key] = self._loading_call(entry, owner, init, 0)
        return found

    def _loading_call(
        self,
        entry: ModuleEntry,
        owner: ClassSummary | None,
        function: FunctionSummary,
        depth: int,
        tensors_need_state: bool = False,
        accept: Callable[[ModuleEntry, CallSite], bool] | None = None,
        built: int = 0,
        objects: bool = False,
    ) -> str | None:
        """The call of ``function`` (or of the helpers of ``owner`` it calls) that loads a model. With
        ``tensors_need_state``, a call that reads tensors counts only in a function that puts them into a model
        (:data:`~gemlint.analysis.frameworks.TENSOR_READERS`); safetensors' readers count only so in any case."""
        for site in function.calls:
            if site.callee.startswith(("self.", "cls.")) and site.callee.count(".") == 1 and depth < 2 and owner is not None:
                helper = owner.methods.get(site.callee.partition(".")[2])
                found = self._loading_call(entry, owner, helper, depth + 1, tensors_need_state, accept, built, objects) if helper is not None else None
                if found is not None:
                    return found
                continue
            # Project objects built or kept are followed where no caller refuses loading calls, or where one asks for
            # them (`objects`, and `accept` judges the call that builds or uses them): a helper's own constructions
            # are its module's findings.
            followed = accept is None or objects
            if site.callee.startswith("self.") and site.callee.count(".") == 2 and built < _MAX_BUILT and owner is not None and followed:
                # `self.learner.load_state(...)`: a method of a project object the class keeps
                if self._held_object_loads(entry, owner, site.callee, built + 1, tensors_need_state, accept) and (accept is None or accept(entry, site)):
                    return site.callee
                continue
            resolved = self.resolve(entry, site.callee)
            if resolved is not None and resolved.kind == "function" and function.loads_state and depth < 2:
                # `self.net.load_state_dict(load_pretrained(name))`: a project helper reads the tensors this function
                # puts into a model
                located = self.function_of(resolved, entry.path)
                if located is not None and self._reads_tensors(*located) and (accept is None or accept(entry, site)):
                    return site.callee
                continue
            if resolved is not None and resolved.kind == "class" and followed:
                # `self.recognition = Recognition()`: building a project object whose `__init__` loads
                if self._constructor_loads(resolved, entry.path, accept) and (accept is None or accept(entry, site)):
                    return site.callee
                continue
            if resolved is None or resolved.kind != "external":
                continue
            name = resolved.module
            if name in fw.TENSOR_READERS and (tensors_need_state or name not in fw.MODEL_LOADERS):
                loads = function.loads_state
            else:
                loads = name in fw.MODEL_LOADERS or name in fw.MODEL_PRODUCERS or name in fw.PRETRAINED_CONSTRUCTORS or (
                    # a library's `from_pretrained` (the hub's convention, which libraries such as super-image follow)
                    name.rsplit(".", 1)[-1] in fw.PRETRAINED_METHODS
                    and name.partition(".")[0] not in sys.stdlib_module_names
                    # a feature extractor, configuration or scheduler: a small JSON file read
                    and not name.rsplit(".", 2)[-2].endswith(fw.CONFIG_ONLY_PRETRAINED)
                )
            if loads and (accept is None or accept(entry, site)):
                return site.callee
        return None

    def _reads_tensors(self, entry: ModuleEntry, function: FunctionSummary) -> bool:
        """The function calls a reader of saved tensors (``torch.load``, ``model_zoo.load_url``, safetensors')."""
        return any(self._calls_external(entry, site.callee, fw.TENSOR_READERS) for site in function.calls)

    def _constructor_loads(self, target: Target, near: str, accept: Callable[[ModuleEntry, CallSite], bool] | None) -> bool:
        """Building the project class ``target`` loads a model (:meth:`initialiser_loads`), however deep its
        constructions go. Once per class: every class of a large project is asked (the facts' loading classes), and
        most build others."""
        key = ("constructor loads", target, accept is None)
        if key not in self.memo:
            self.memo[key] = False  # a class that builds itself, or a ring of them
            self.memo[key] = self.initialiser_loads(target, near, accept) is not None
        return self.memo[key]  # type: ignore[return-value]

    def _held_object_loads(
        self,
        entry: ModuleEntry,
        owner: ClassSummary,
        callee: str,
        built: int,
        tensors_need_state: bool,
        accept: Callable[[ModuleEntry, CallSite], bool] | None,
    ) -> bool:
        """``self.<attr>.<method>(...)`` runs a method of a project class that ``<attr>`` holds, and it loads."""
        _, attribute, method = callee.split(".")
        cls = Target("class", entry.summary.name, owner.name)
        for held_entry, producer in self.attribute_producers(cls, attribute):
            held = self.resolve(held_entry, producer)
            if held is None or held.kind != "class":
                continue
            located = self.method_summary(held, method, held_entry.path)
            if located is None:
                continue
            held_chain = self.lineage(held, held_entry.path)[0]
            held_owner = next((summary for _, summary in held_chain if method in summary.methods), None)
            if self._loading_call(located[0], held_owner, located[1], 0, tensors_need_state, accept, built, objects=accept is not None) is not None:
                return True
        return False

def _given_false(method: FunctionSummary, by_parameter: dict[str, str], callee: str, false_arguments: list[str]) -> set[str]:
    """The owners of ``by_parameter`` (what ``method`` freezes or switches by a parameter's value) whose parameter
    ``method``, called as ``callee``, is given ``False`` (``false_arguments``): ``self.set_requires_grad(False)``,
    whose loop sets ``requires_grad = state``."""
    given = set()
    for owner, parameter in by_parameter.items():
        position = method.params.index(parameter) - 1 if parameter in method.params[1:] else -1  # after `self`
        if f"{callee}:{parameter}" in false_arguments or (position >= 0 and f"{callee}:{position}" in false_arguments):
            given.add(owner)
    return given


def _made_from_itself(spelled: str, attribute: str) -> bool:
    """A value bound to ``attribute`` that is made from an attribute's earlier value: the module moved or switched
    (``self.model = self.model.eval()``), or the attribute's own value computed anew (``self.grid =
    self.grid.repeat(n, 1, 1)``)."""
    return _SELF_REBINDING.fullmatch(spelled) is not None or spelled.startswith(f"self.{attribute}.")


def _runs_attribute(callees: Collection[str], attribute: str) -> bool:
    """A method of the class calls ``self.<attribute>`` or a method of it: what it holds may be a module that runs."""
    return any(callee == f"self.{attribute}" or callee.startswith(f"self.{attribute}.") for callee in callees)


def summary_trains(function: FunctionSummary) -> bool:
    """The function runs a training step, by its summary (as :meth:`ModuleAnalysis.is_training_call` decides
    from the tree): a backward, ``zero_grad``, ``autograd.grad``, an optimizer's ``step``, or a trainer's loop
    (``trainer.train()``, Lightning's ``trainer.fit(model)``)."""
    for site in function.calls:
        receiver, _, method = site.callee.rpartition(".")
        if method in fw.TRAINING_METHODS and receiver:
            return True
        if method in ("train", "fit") and "trainer" in receiver.rsplit(".", 1)[-1].lower():
            return True
        if site.callee.endswith("autograd.grad"):
            return True
        if method == "step" and receiver and fw.steps_an_optimizer(receiver.rsplit(".", 1)[-1]):
            return True
    return False


def _switch(callee: str) -> str:
    """``"eval"`` for ``self.eval`` and ``self.model.eval``, ``"train"`` likewise; else ``""``."""
    head, _, last = callee.rpartition(".")
    return last if last in ("eval", "train") and head.count(".") <= 1 else ""


def _evaluates(function: FunctionSummary) -> bool:
    """Evaluation code by its summary: something put in eval mode is then called, and nothing trains."""
    if function.qualname.endswith("__init__") or not function.evaluated:
        return False
    if any(site.callee.rsplit(".", 1)[-1] in fw.TRAINING_CANDIDATES for site in function.calls):
        return False
    return bool({site.callee for site in function.calls} & function.evaluated)


#: What a script's module-level code calls when it trains: a training step, or an object's training loop.
_TRAINS = re.compile(r"(?:backward|zero_grad|step|grad|GradScaler|train\w*|fit|finetune\w*|fine_tune\w*|learn)$")


def _runs_as_script(entry: ModuleEntry, relative: str) -> bool:
    """A script by its summary: module-level code runs what it built, does not train, and is not a test."""
    syntax = entry.summary.syntax
    if syntax is None or not syntax.script_runs or is_test_path(relative):
        return False
    return not any(site.callee.rsplit(".", 1)[-1] in fw.TRAINING_CANDIDATES for site in entry.summary.module_calls)


def _torchserve_protocol(methods: dict[str, FunctionSummary]) -> bool:
    """TorchServe's custom service without its base class: ``initialize(self, context)`` and
    ``handle(self, data, context)``."""
    initialize, handle = methods.get("initialize"), methods.get("handle")
    return initialize is not None and handle is not None and len(initialize.params) == 2 and len(handle.params) == 3


#: Calls that differentiate (a forward that makes them needs autograd): ``torch.autograd.grad``, the functional API.
_GRADIENT_CALLS = ("torch.autograd.grad", "torch.autograd.functional.")
#: Their last names, by which the calls are looked up before they are resolved.
_GRADIENT_NAMES = ("grad", "jacobian", "hessian", "vjp", "jvp", "hvp", "vhp")
_MAX_DIFFERENTIATION_DEPTH = 3
#: How many project objects deep a load through a kept object's method is followed (`self.learner.load_state()`
#: whose learner keeps a network whose `load` reads the weights).
_MAX_BUILT = 4


def _callees_of(chain: list[tuple[ModuleEntry, ClassSummary]], guarded: bool = True) -> set[str]:
    """What the methods of a class's chain call, ``self.encoder.forward`` as ``self.encoder`` and ``self.layers[i]``
    as ``self.layers`` (without ``guarded``, only the calls outside a grad-free guard)."""
    return {
        site.callee.removesuffix(".forward").removesuffix("[]")
        for _, cls in chain
        for function in cls.methods.values()
        for site in function.calls
        if guarded or not site.guarded
    }


def _followed(chain: list[tuple[ModuleEntry, ClassSummary]], external: set[str] | frozenset[str], depth: int) -> bool:
    """A class whose lineage ``chain`` the questions about what it holds look into, ``depth`` submodules down: within
    :data:`_MAX_NESTING`, its bases outside the project ``nn.Module`` itself, or a torch container whose parts a
    class of the chain hands to it in its ``__init__`` (:data:`~gemlint.project.summary.CONTAINER_PARTS`):
    everything it holds is in its attributes."""
    if not chain or depth >= _MAX_NESTING:
        return False
    external = external - fw.STATELESS_BASES
    if external <= fw.PLAIN_MODULE_BASES:
        return True
    return external <= fw.PLAIN_MODULE_BASES | _TORCH_CONTAINERS and any(CONTAINER_PARTS in cls.attributes for _, cls in chain)


def _imported_name(entry: ModuleEntry, local: str) -> str:
    """What the module's import binding ``local`` names where it was defined: ``from .embed import predict as
    embed_predict`` makes ``embed_predict(texts)`` a call of ``predict``."""
    return entry.summary.imports[local].rsplit(".", 1)[-1]


def _calls_name(entry: ModuleEntry, callee: str, name: str) -> bool:
    """A call spelled ``callee`` in ``entry``'s module calls something named ``name``: as spelled, or through an
    import under another name."""
    return callee.rsplit(".", 1)[-1] == name or (callee in entry.summary.imports and _imported_name(entry, callee) == name)


def _loaded_through_a_library_star_import(entry: ModuleEntry, spelled: str) -> bool:
    """``spelled`` is ``Name.from_pretrained`` with ``Name`` bound by nothing of the module but a star import of
    transformers or diffusers, whose ``from_pretrained`` returns the model in eval mode."""
    owner, _, method = spelled.rpartition(".")
    summary = entry.summary
    if method != "from_pretrained" or not owner or "." in owner or owner in summary.imports or owner in summary.classes or owner in summary.bindings:
        return False
    return any(star.partition(".")[0] in ("transformers", "diffusers") for star in summary.star_imports)


def _is_module_base(name: str) -> bool:
    if name in fw.MODULE_BASES:
        return True
    if name.startswith("torch.nn.") and name.rsplit(".", 1)[-1] not in fw.TORCH_NN_NON_MODULES and name[9:10].isupper():
        return True
    return name.startswith(("transformers.", "diffusers.")) and name.endswith(("PreTrainedModel", "ModelMixin"))


def _imported_spelling(entry: ModuleEntry, spelled: str) -> str:
    """``pb.Servicer`` with ``from pkg import pb`` -> ``pkg.pb.Servicer``, resolved or not."""
    first, _, rest = spelled.partition(".")
    head = entry.summary.imports.get(first, first)
    return f"{head}.{rest}" if rest else head


def _located(entry: ModuleEntry, qualname: str) -> FunctionSummary | None:
    """The function or method ``qualname`` of the entry's module."""
    owner, _, name = qualname.rpartition(".")
    if not owner:
        return entry.summary.functions.get(name)
    cls = entry.summary.classes.get(owner)
    return cls.methods.get(name) if cls is not None else None


def _same_file_call(callee: str) -> bool:
    """Calls the per-file analysis follows itself: a plain name, or a method of ``self``/``cls``."""
    head, _, rest = callee.partition(".")
    return not rest or (head in ("self", "cls") and "." not in rest)


def _known_parameter_free(dotted: str) -> bool:
    """``dotted`` is a part of torch or a model library known to hold no parameter (a transform, an activation, a
    loss): an object of any other package is not read, and not known to be one."""
    return dotted.partition(".")[0] in fw.LAYER_PACKAGES and not _seen_layer(dotted)


def _seen_layer(dotted: str) -> bool:
    """``dotted`` (a package's class or function) may build a layer the analysis knows to hold parameters or a
    mode: anything of torch and the model libraries but torch's parameter-free parts and transforms. Objects of
    other packages are not read, so they are no evidence either way."""
    top = dotted.partition(".")[0]
    if top not in fw.LAYER_PACKAGES:
        return False
    last = dotted.rsplit(".", 1)[-1]
    parameter_free = (
        dotted.startswith(fw.MODE_FREE_TRANSFORMS)
        or (dotted.startswith("torch.") and fw.TORCH_NN_PARAMETER_FREE.search(last) is not None)
        # a tensor of a legacy type (`torch.FloatTensor(k)`, `torch.cuda.LongTensor(n)`): data, no layer
        or (top == "torch" and last.endswith("Tensor") and ".nn." not in dotted)
        or dotted.startswith("torch.classes.")
        or (top == "torch" and last[:1].islower() and not dotted.startswith(tuple(f"{name}." for name in fw.MODULE_LOADING_CALLS)) and dotted not in fw.MODULE_LOADING_CALLS)
    )
    return not parameter_free


