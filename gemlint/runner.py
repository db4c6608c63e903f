"""Runs a lint over many files: discovery, process-parallel linting, fixes and diffs."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from gemlint.bad_input import input_error
from gemlint.cache import Cache, FileDigests, content_digest, entry_key, settings_fingerprint
from gemlint.config import Config
from gemlint.config_tree import ConfigTree, tree_for
from gemlint.confinement import is_inside
from gemlint.diagnostics import Diagnostic, applicable
from gemlint.discovery import Discovery, SourceFile, display_path, root_relative
from gemlint.frontends import triton_config
from gemlint.languages import Language, language_of
from gemlint.lint_notes import collecting_notes
from gemlint.registry import rule_class, rule_entries
from gemlint.selection import Selection
from gemlint.text import TIMED_OUT_PREFIX, SourceError, decoder_for, read_regular_file
from gemlint.walk_record import WalkRecord, forget_root_walks, keep_root_walk, keep_walks

if TYPE_CHECKING:
    from gemlint.project.facts import ProjectFacts

# The engine, the fixes and the project files import the analyses and the project model (and LibCST where a Python
# file is admitted). A run whose files all come from the cache needs none of them, nor the process pools, so they
# are imported where a file is linted or the project read (`from gemlint import engine` below), never at the top.

# Files are linted in a process pool from this many files, or from two files holding this many bytes: a pool
# costs about 50 ms to start, which a few small files (pre-commit passes a handful) do not repay, while two
# modules of a few hundred lines each take longer than that to lint.
PARALLEL_THRESHOLD = 32
PARALLEL_BYTES = 64 * 1024
# Modules to summarise that hold less Python than this together are summarised here, whatever their count: a small
# repository's fifty modules take a few tens of milliseconds, less than a pool costs (processes started, each handed
# its share, the summaries pickled back).
SUMMARY_POOL_BYTES = 1024 * 1024
# From this many modules the project's facts, when they must be derived afresh, are derived in a process of their
# own even for a run over a few files: the summaries it decodes then leave with it, instead of being torn down
# object by object when gemlint exits (seconds on a large project).
FACTS_PROCESS_THRESHOLD = 256
# From this many modules that may declare routes, a run that forks workers composes the project's routes once,
# before the fork (see _compose_routes_before_forking); below it, a worker that asks parses them in less time
# than a process costs.
ROUTE_MODULES_COMPOSED_ONCE = 8
# Likewise when one of them is this large: its parse takes several times its text (a 650 KB FastAPI server, about
# 230 MiB), which a worker must not add to the trees it holds, nor each worker pay again.
ROUTE_MODULE_BYTES_COMPOSED_ONCE = 200_000


@dataclass(frozen=True)
class FixMode:
    apply: bool = False  # --fix
    diff: bool = False  # --diff
    unsafe: bool = False  # --unsafe-fixes

    @property
    def active(self) -> bool:
        return self.apply or self.diff


@dataclass
class FileReport:
    display: str
    diagnostics: list[Diagnostic]
    fixed: int = 0
    diff: str = ""
    warning: str | None = None
    cache_key: str | None = None  # set when the result depends on this file alone and may be cached
    #: What the rules left unreported in this file and why (``--verbose``; ``--statistics`` counts the files).
    notes: list[str] = field(default_factory=list)


@dataclass
class RunResult:
    files: list[FileReport] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return sorted((d for f in self.files for d in f.diagnostics), key=lambda d: d.sort_key)

    @property
    def fixed(self) -> int:
        return sum(f.fixed for f in self.files)

    cache_warnings: list[str] = field(default_factory=list)
    config_warnings: list[str] = field(default_factory=list)
    #: Paths found and not read: links out of the project, pseudo-files (:mod:`gemlint.confinement`).
    refused_warnings: list[str] = field(default_factory=list)
    #: Seconds spent in each phase (discovery, project index, linting), for ``--verbose``.
    timings: dict[str, float] = field(default_factory=dict)
    #: How many files each configuration governed in this run.
    configs: list[tuple[Config, int]] = field(default_factory=list)

    @property
    def notes(self) -> list[tuple[str, str]]:
        """(file, note) for every note of the run."""
        return [(f.display, note) for f in self.files for note in f.notes]

    @cached_property
    def unread_triton_configs(self) -> str | None:
        """"N Triton model configurations (config.pbtxt) not checked: why", when Triton's schema (an optional
        dependency) is missing and the run found such files."""
        from gemlint.frontends.triton_config import schema_problem
        from gemlint.languages import TRITON_CONFIG_NAME

        configs = sum(1 for report in self.files if report.display.rsplit("/", 1)[-1] == TRITON_CONFIG_NAME)
        problem = schema_problem() if configs else None
        return f"{_count(configs, 'Triton model configuration')} ({TRITON_CONFIG_NAME}) not checked: {problem}" if problem else None

    @cached_property
    def unchecked(self) -> list[str]:
        """What the run found and did not fully check, said by every output format (no silent skips): files of
        a language whose front-end's optional dependency is missing, and files whose findings a parse problem
        limited. Asked once the run is over."""
        notices = [self.unread_triton_configs] if self.unread_triton_configs else []
        limited = sum(1 for report in self.files if report.notes)
        if limited:
            notices.append(
                f"{_count(limited, 'file')} checked only in part: code that did not parse, a template, Python 2 or "
                "a module too large to analyse hid possible findings (--verbose names them and says which)"
            )
        return notices

    @property
    def warnings(self) -> list[str]:
        return self.config_warnings + self.refused_warnings + [f.warning for f in self.files if f.warning] + self.cache_warnings


@dataclass
class CacheSettings:
    """What cache keys hash besides a file's content: the file's configuration, and for files whose
    findings depend on other files (cross-file rules), the content of every file of the project too."""

    config: Config  # the project's
    files: list[SourceFile] | None = None  # the project's files, when the run already found them
    #: The recorded digests of the project's files (the main process's; workers get the state computed).
    digests: FileDigests | None = None
    _settings: dict[Config, str] = field(default_factory=dict)
    _state: str | None = None
    _projects: dict[Config, str] = field(default_factory=dict)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "files": None, "digests": None}

    def settings(self, selection: Selection) -> str:
        key = self._settings.get(selection.config)
        if key is None:
            key = self._settings[selection.config] = settings_fingerprint(selection.config, [rule.code for rule in selection.rules])
        return key

    def project(self, selection: Selection) -> str:
        if self._state is None:  # the first time a cross-file result is looked up or stored
            self._state = settings_fingerprint(state_digest(project_state(self.config, self.files, self.digests)))
            self.files = None  # not needed by the workers
        key = self._projects.get(selection.config)
        if key is None:
            key = self._projects[selection.config] = settings_fingerprint(self.settings(selection), self._state)
        return key


def process_file(source: SourceFile, selection: Selection, mode: FixMode, keys: CacheSettings | None = None) -> FileReport:
    from gemlint import engine

    with collecting_notes() as notes:
        diagnostics, data, decoded = engine.lint_file(source, selection)
    report = FileReport(source.display, diagnostics, notes=notes)
    # A file with notes is linted again each run, so that --verbose and --statistics always see them.
    if keys is not None and data is not None and decoded is not None and not notes:
        settings = keys.project(selection) if _depends_on_project(source, selection) else keys.settings(selection)
        if not any(d.message.startswith(TIMED_OUT_PREFIX) for d in diagnostics):
            report.cache_key = entry_key(settings, source.display, source.relative, content_digest(_key_data(source, data)))
    if not mode.active or decoded is None or data is None:
        return report
    if not any(applicable(d.fix, mode.unsafe) for d in diagnostics):
        return report
    from gemlint import fixes

    outcome = fixes.fix_source(decoded.text, source.language, lambda text: engine.lint_text(source, text, selection), diagnostics, mode.unsafe)
    report.diagnostics = outcome.diagnostics
    if outcome.refused:
        report.warning = f"{source.display}: fixes not applied: {outcome.refused}"
    if outcome.text == decoded.text:
        return report
    if mode.diff:
        report.diff = fixes.unified_diff(source.display, decoded.text, outcome.text)
        report.diagnostics = diagnostics  # nothing was written: every finding still stands
        report.fixed = outcome.applied
        return report
    try:
        fixes.write_atomically(source.path, data, outcome.text, decoded.encoding)
        report.fixed = outcome.applied
    except (fixes.FileChanged, OSError) as error:
        report.warning = f"{source.display}: fixes not written: {error}"
        report.diagnostics = diagnostics
    return report


def _read_or_empty(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _key_data(source: SourceFile, data: bytes) -> bytes:
    """What a file's cached findings depend on: its bytes, and for a Triton Python model the model's
    ``config.pbtxt`` (GEM201 reads its tensor shapes), which is not a linted file of the project; for
    both, whether Triton's schema (an optional dependency) could read the configuration. For a C/C++/CUDA
    file, the project headers it includes (their macros are path exits)."""
    if source.language is Language.TRITON:
        return data + b"\0" + triton_config.schema_state()
    if source.language is Language.NATIVE:
        # Error-check macros come from the project headers the file includes: their change changes the findings.
        from gemlint.frontends.native_includes import included_headers  # only a run with native files needs it

        text = data.decode("utf-8", errors="replace")
        headers = included_headers(source.path, text)
        return b"\0".join([data, *(str(h).encode() + b"\0" + _read_or_empty(h) for h in headers)])
    config = triton_config.read_bytes(source.path) if source.language is Language.PYTHON else None
    if config is None:
        return data
    # the repository's other models too: an ensemble may hand what this model makes to one of a fixed shape
    siblings = triton_config.repository_bytes(source.path)
    return data + b"\0" + triton_config.CONFIG_NAME.encode() + b"\0" + config + b"\0" + siblings + b"\0" + triton_config.schema_state()


def _depends_on_project(source: SourceFile, selection: Selection) -> bool:
    """Results of cross-file rules change when other files do: they are cached under the project's state."""
    return any(
        (rule.cross_file or rule.sees_project) and rule.reads(source.language) for rule in selection.rules_for(source.relative)
    )


# Each worker receives the run's selections (one per config), mode and settings once, not with every file.
_WORKER_SETUP: tuple[list[Selection], FixMode, CacheSettings | None] | None = None


def _index_mapper(jobs: int) -> Callable:
    """``map`` for summarising modules: over processes when there are many to summarise. The results come as
    they are ready, so that the caller can work on the first while the processes make the rest."""

    def mapper(function: Callable, *columns: list) -> Iterator:
        if jobs > 1 and len(columns[0]) >= PARALLEL_THRESHOLD and _bytes_reach(columns[0], SUMMARY_POOL_BYTES):
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(max_workers=jobs) as pool:
                yield from pool.map(function, *columns, chunksize=16)
        else:
            yield from map(function, *columns)

    return mapper


def _forks() -> bool:
    """Whether worker processes fork (and so inherit what this process computed)."""
    import multiprocessing  # only where a process is started: a warm run never needs it

    return multiprocessing.get_start_method() == "fork"


def _in_a_forked_child(function: Callable, *args, meanwhile: Callable[[], None] = lambda: None):
    """``function(*args)`` computed in one forked process while ``meanwhile()`` runs here. Raises
    ``BrokenProcessPool`` when the child dies (out of memory, killed)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1) as pool:
        result = pool.submit(function, *args)  # the child forks here
        meanwhile()
        return result.result()


def _facts_in_a_child(config: Config) -> Callable[[Callable[[], None]], ProjectFacts | None]:
    """Compute the project's facts in a forked process: it decodes every summary, and the memory that takes
    is not given back to the system once freed (the allocator keeps its arenas), so the process that forks
    the workers must never hold it. The function returned runs ``meanwhile`` here while the child derives; it
    returns None where processes do not fork (asked only then: a run that derives a few edited modules here
    never imports ``multiprocessing``)."""

    def isolate(meanwhile: Callable[[], None]) -> ProjectFacts | None:
        if not _forks():
            return None
        from concurrent.futures.process import BrokenProcessPool

        try:
            return _in_a_forked_child(_project_facts, config, meanwhile=meanwhile)
        except BrokenProcessPool:  # the child died: compute them here
            return _project_facts(config, alone=False)

    return isolate


def _rules_of(work: list[tuple[SourceFile, int]], selections: list[Selection]) -> set:
    """The rules some selection of the files to lint holds."""
    return {rule for index in {index for _, index in work} for rule in selections[index].rules}


def _reads_routes(work: list[tuple[SourceFile, int]], selections: list[Selection]) -> bool:
    """Whether a rule selected for the files to lint may read the project's routes."""
    return any(rule.reads_routes for rule in _rules_of(work, selections))


def _compose_routes_before_forking(project, meanwhile: Callable[[], None]) -> None:
    """Compose the project's routes once, in a forked process, for every worker to inherit: each worker that
    asked composed them itself, parsing every module that declares one (a FastAPI back end with dozens cost
    each worker seconds and a quarter of its memory; one module of 650 KB, 230 MiB on top of what the worker
    held). Left to the workers where few small modules declare routes (a process costs more than parsing them),
    where processes do not fork, and if the process dies.
    ``meanwhile()`` runs here while that process composes."""
    few = project.route_module_count < ROUTE_MODULES_COMPOSED_ONCE and project.largest_route_module <= ROUTE_MODULE_BYTES_COMPOSED_ONCE
    if few or not _forks():
        return
    from concurrent.futures.process import BrokenProcessPool

    try:
        rows = _in_a_forked_child(_route_rows, project.config, meanwhile=meanwhile)
    except BrokenProcessPool:
        return
    project.adopt_routes(rows)


def _route_rows(config: Config) -> list[tuple]:
    from gemlint.project.files import project_for

    return project_for(config).route_rows()


def _project_facts(config: Config, alone: bool = True) -> ProjectFacts:
    """The facts, for the process that forked this one; ``alone``: this is that forked process, which runs no other
    thread and may fork again to derive them on both cores."""
    from gemlint.project.files import project_for

    model = project_for(config).model
    model.split_derivation = alone
    return model.facts_to_hand_over()


def _forget_projects() -> None:
    """Drop what this process knows of project files (:func:`~gemlint.project.files.forget_projects`): only a
    process that has linted before knows any, and it imported them then; a run that asked no project question
    may have kept its walk of the root all the same."""
    forget_root_walks()
    files = sys.modules.get("gemlint.project.files")
    if files is not None:
        files.forget_projects()


def _import_python_rules(work: list[tuple[SourceFile, int]], selections: list[Selection]) -> None:
    """Import the rules that read Python, and with them LibCST and the analyses, here: done while a forked
    process composes the routes (about as long), so that the workers forked after inherit them instead of
    each importing them (a third of a second) before its first Python file."""
    for rule in _rules_of(work, selections):
        if rule.reads(Language.PYTHON):
            rule_class(rule)


def _import_before_forking(work: list[tuple[SourceFile, int]], selections: list[Selection], mode: FixMode) -> None:
    """Import the engine and the rules of the files' languages once, in the process that starts the workers, and
    load the C/C++ grammars the files need: each worker then inherits them instead of importing and compiling them
    again. The Python rules, LibCST and the analyses are left to the workers whose files a rule admits: a worker
    imports them in the time the parent would, alongside the others, and a run that admits no Python file never
    does (unless this process imported them while another composed the routes: :func:`_import_python_rules`)."""
    from gemlint import engine  # noqa: F401

    if mode.active:
        from gemlint import fixes  # noqa: F401
    languages = {source.language for source, _ in work}
    for rule in _rules_of(work, selections):
        if not rule.reads(Language.PYTHON) and any(rule.reads(language) for language in languages):
            rule_class(rule)
    native = [source for source, _ in work if source.language is Language.NATIVE]
    if native:
        from gemlint.frontends import native as frontend

        frontend.prepare({frontend.grammar_for(source) for source in native})


def _init_worker(selections: list[Selection], mode: FixMode, keys: CacheSettings | None) -> None:
    global _WORKER_SETUP
    _WORKER_SETUP = (selections, mode, keys)


def _process_in_worker(job: tuple[SourceFile, int]) -> FileReport:
    assert _WORKER_SETUP is not None
    selections, mode, keys = _WORKER_SETUP
    source, index = job
    return process_file(source, selections[index], mode, keys)


def _worth_a_pool(work: list[tuple[SourceFile, int]]) -> bool:
    if len(work) >= PARALLEL_THRESHOLD:
        return True
    return len(work) >= 2 and sum(_size(source) for source, _ in work) >= PARALLEL_BYTES


def _bytes_reach(paths: list, bound: int) -> bool:
    """The files ``paths`` hold ``bound`` bytes or more together (stopping as soon as they do)."""
    total = 0
    for path in paths:
        total += _file_size(path)
        if total >= bound:
            return True
    return bound <= 0


def _size(source: SourceFile) -> int:
    return _file_size(source.path)


def _file_size(path: Path | str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def run(
    paths: Iterable[Path],
    config: Config | ConfigTree,
    mode: FixMode = FixMode(),
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    cache: Cache | None = None,
) -> RunResult:
    """Lint ``paths``; ``config`` is one configuration for every file, or a :class:`ConfigTree` (each
    file its nearest config). The result does not depend on the order of ``paths``."""
    _forget_projects()
    started = time.perf_counter()
    tree = tree_for(config)
    config = tree.project
    discovery = Discovery(tree)
    paths = list(paths)
    # A cached run needs every file of the project for its keys: walk the root once and take the paths' files
    # from that walk, instead of walking them and then the root again.
    root_files = _root_walk(discovery, tree, paths) if cache is not None and not mode.active else None
    files = _under(root_files, paths) if root_files is not None else list(discovery.files(paths))
    selections: list[Selection] = []
    index_of: dict[Config, int] = {}
    chosen: list[int] = []  # each file's selection (its index in selections), in the order of files
    last: tuple[Config | None, int] = (None, -1)
    for source in files:
        # A file's config is its folder's (Discovery yields no folders): no stat to ask whether it is one.
        own = tree.config_of_folder(os.path.dirname(source.absolute_path()))
        if own is not last[0]:  # a walk's files come folder by folder: hash a config only when it changes
            if own not in index_of:
                index_of[own] = len(selections)
                selections.append(Selection.from_config(own, rule_entries()))
            last = (own, index_of[own])
        chosen.append(last[1])
    result = RunResult(config_warnings=list(tree.warnings))
    result.configs = [(own, chosen.count(index)) for own, index in index_of.items()]
    result.timings["discovery"] = time.perf_counter() - started
    jobs = jobs or os.cpu_count() or 1
    # Fixing rewrites files, so it always lints afresh.
    digests = FileDigests(cache, config.root) if cache and not mode.active else None
    keep_walks(config.root, _walk_record(cache, config) if digests is not None else None)
    # The project model's files are this run's where it walked the root as the project does: not walked again.
    whole_walk = root_files if root_files is not None else files if _is_the_root(tree, paths) else None
    keep_root_walk(config.root, whole_walk if config.project_config == config else None)
    if digests is not None and paths and all(os.path.isdir(path) for path in paths):
        cache.use_run_record([str(path) for path in paths])
    keys = _cache_settings(tree, paths, root_files or files, digests, whole=root_files is not None) if digests is not None else None
    done: list[FileReport] = []
    work: list[tuple[SourceFile, int]] = []  # the files to lint, each with its selection's index
    for source, index in zip(files, chosen):
        cached = _cached(cache, keys, source, selections[index])
        if cached is not None:
            done.append(cached)
        else:
            work.append((source, index))
    total = len(files)
    started = time.perf_counter()
    parallel = jobs > 1 and _worth_a_pool(work)
    if any(source.language in (Language.PYTHON, Language.NOTEBOOK) for source, _ in work):
        from gemlint.project.files import keep_index_in, project_for

        # Index the project once, here, so that the worker processes start with it (a notebook reads it too).
        keep_index_in(config.root, cache.directory if cache is not None else None, digests)
        # The modules to summarise decide the processes, not the files to lint: three files of a fresh clone
        # still index the whole project.
        project = project_for(config)
        model = project.model
        # The workers of a long run must not inherit every decoded summary; a few files' pool forks from a small
        # project's, which costs less than another process to derive the facts in.
        forks = parallel and len(work) >= PARALLEL_THRESHOLD
        isolate = forks or len(project.python_sources) >= FACTS_PROCESS_THRESHOLD
        # Without a pool for the files, this process may hold the decoded summaries: it decodes each while the
        # pool summarises the rest, instead of the process that derives the facts decoding them all after.
        model.prepare(_index_mapper(jobs), _facts_in_a_child(config) if isolate else None, forks, decode=not parallel)
        if parallel:
            model.release()
        if forks and _reads_routes(work, selections):
            _compose_routes_before_forking(project, meanwhile=lambda: _import_python_rules(work, selections))
    result.timings["project index"] = time.perf_counter() - started
    started = time.perf_counter()
    if progress and done:
        progress(len(done), total)
    if parallel:
        # Largest files first and small chunks: the costly files (the few that need LibCST and its
        # metadata) are spread over the workers instead of landing in one worker's last chunk.
        jobs_list = sorted(work, key=lambda job: _size(job[0]), reverse=True)
        from concurrent.futures import ProcessPoolExecutor

        _import_before_forking(work, selections, mode)
        with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(selections, mode, keys)) as pool:
            reports = pool.map(_process_in_worker, jobs_list, chunksize=max(1, min(8, len(jobs_list) // (jobs * 32))))
            for report in reports:
                done.append(report)
                if progress:
                    progress(len(done), total)
    else:
        for source, index in work:
            done.append(process_file(source, selections[index], mode, keys))
            if progress:
                progress(len(done), total)
    if cache is not None and keys is not None:
        for report in done:
            if report.cache_key is not None:
                cache.put(report.cache_key, report.diagnostics)
                report.cache_key = None
        if digests is not None:
            digests.save()
        cache.save_run_record()
        result.cache_warnings = list(cache.warnings)
    order = {source.display: index for index, source in enumerate(files)}
    done.sort(key=lambda report: order.get(report.display, len(order)))
    # A folder that cannot be listed hides its files: say so, once per folder, and lint the rest.
    for folder in discovery.unreadable:
        message = f"cannot list the directory ({folder.reason}); the files in it were not linted"
        done.append(FileReport(folder.display, [input_error(folder.display, message)]))
    result.refused_warnings = [f"{refused.display}: {refused.reason}" for refused in discovery.refused]
    result.files = done
    result.timings["lint"] = time.perf_counter() - started
    return result


def _cache_settings(
    tree: ConfigTree, paths: list[Path], files: list[SourceFile], digests: FileDigests | None = None, whole: bool = False
) -> CacheSettings:
    # A run over the project root has found the project's files already, unless a nested config
    # excludes differently from the project's (the project state follows the project's config).
    config = tree.project
    whole = whole or (any(os.path.abspath(path) == os.path.abspath(config.root) for path in paths) and _excludes_as_the_project(tree))
    return CacheSettings(config, files if whole else None, digests)


def _is_the_root(tree: ConfigTree, paths: list[Path]) -> bool:
    """Whether the run's one path is the project root, walked as the project walks it: its files are then the
    project's, and the project model need not walk the root again."""
    return len(paths) == 1 and os.path.abspath(paths[0]) == os.path.abspath(tree.root) and _excludes_as_the_project(tree)


def _excludes_as_the_project(tree: ConfigTree) -> bool:
    config = tree.project
    return all(other is config or not ({"exclude", "extend-exclude"} & (other.declared | config.declared)) for other in tree.configs())


def _root_walk(discovery: Discovery, tree: ConfigTree, paths: list[Path]) -> list[SourceFile] | None:
    """The project root's files, when every path is a folder below the root that the root's walk enters and
    finds as the paths' own walks would (not a link, not excluded, no nested config excluding differently);
    refusals and unlistable folders outside the paths are dropped. None otherwise."""
    root = os.path.abspath(tree.root)
    if not paths or not _excludes_as_the_project(tree):
        return None
    for path in paths:
        absolute = os.path.abspath(path)
        if (
            absolute == root
            or not is_inside(absolute, root)
            or not os.path.isdir(path)
            or os.path.realpath(path) != absolute
            or discovery.is_excluded_file(Path(absolute))
            or discovery.is_excluded(Path(absolute), True)
        ):
            return None
    found = list(discovery.files([Path(root)]))
    inside = lambda display: any(_below(display, path, discovery.cwd) for path in paths)  # noqa: E731
    discovery.refused[:] = [refused for refused in discovery.refused if inside(refused.display)]
    discovery.unreadable[:] = [folder for folder in discovery.unreadable if inside(folder.display)]
    return found


def _below(display: str, folder: Path, cwd: Path) -> bool:
    return is_inside(os.path.abspath(os.path.join(cwd, display)), os.path.abspath(folder))


def _under(files: list[SourceFile], paths: list[Path]) -> list[SourceFile]:
    """The files of ``files`` below each of ``paths``, in the paths' order (a walk's order within each)."""
    keyed = [(source.absolute_path(), source) for source in files]
    chosen: list[SourceFile] = []
    seen: set[str] = set()
    for path in paths:
        top = os.path.abspath(path)
        for key, source in keyed:
            if key not in seen and key != top and is_inside(key, top):
                seen.add(key)
                chosen.append(source)
    return chosen


def project_state(config: Config, files: list[SourceFile] | None = None, digests: FileDigests | None = None) -> list[tuple[str, str]]:
    """Every file of the project root with a digest of its content: when any changes, the findings that
    depend on other files are computed afresh (a touched but unchanged file changes nothing)."""
    if files is None:
        from gemlint.project.files import project_for

        # The project model walks the same root with the same excludes: one walk serves both.
        project = project_for(config)
        files = project.sources if project.config == config else list(Discovery(config).files([config.root]))
    state = []
    for source in files:
        try:
            if digests is not None:
                digest = digests.digest(source.absolute_path(), read_regular_file)
            else:
                digest = content_digest(read_regular_file(source.path))
        except SourceError:
            continue
        state.append((source.relative, digest))
    return sorted(state)


def state_digest(state: list[tuple[str, str]]) -> str:
    """A digest of :func:`project_state`: its paths and its digests, each column joined in C (a large project's
    state is thousands of pairs, and writing each pair out in Python cost a run over one edited file 2 ms)."""
    paths, digests = zip(*state) if state else ((), ())
    text = "\0".join(paths) + "\0\1" + "\0".join(digests)  # no path holds a NUL
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def _content(source: SourceFile, digests: FileDigests | None) -> str:
    """:func:`content_digest` of what ``source``'s findings depend on (raises SourceError when it cannot be
    read). A file whose findings depend on its bytes alone is known by its recorded digest while unchanged."""
    if digests is not None and _depends_on_itself_only(source):
        return digests.digest(source.absolute_path(), read_regular_file)
    return content_digest(_key_data(source, read_regular_file(source.path)))


def _depends_on_itself_only(source: SourceFile) -> bool:
    """:func:`_key_data` of ``source`` is its bytes (no project headers, no Triton configuration)."""
    if source.language in (Language.NATIVE, Language.TRITON):
        return False
    return source.language is not Language.PYTHON or triton_config.config_path(source.absolute_path()) is None


def _walk_record(cache: Cache, config: Config) -> WalkRecord:
    """Where the project root's walk is kept: beside the digests of its files, under gemlint's version."""
    return WalkRecord(cache.root_file("walks", config.root), cache.directory, config.root, settings_fingerprint())


def _cached(cache: Cache | None, keys: CacheSettings | None, source: SourceFile, selection: Selection) -> FileReport | None:
    if cache is None or keys is None:
        return None
    try:
        content = _content(source, keys.digests)
    except SourceError:
        return None
    # Stored under the project's state exactly when it depends on other files (see process_file): one lookup.
    settings = keys.project(selection) if _depends_on_project(source, selection) else keys.settings(selection)
    diagnostics = cache.get(entry_key(settings, source.display, source.relative, content))
    return FileReport(source.display, diagnostics) if diagnostics is not None else None


@dataclass
class StdinOutcome:
    diagnostics: list[Diagnostic]
    fixed: bytes | None = None  # the fixed text, encoded as the input was (with --fix)
    applied: int = 0
    diff: str = ""
    warnings: list[str] = field(default_factory=list)


def lint_stdin(data: bytes, path: Path, config: Config | ConfigTree, mode: FixMode = FixMode()) -> StdinOutcome:
    """Lint ``data`` as if it were the file ``path`` (an editor's unsaved buffer): the same config,
    per-file ignores and project context as a run over that file; nothing is written."""
    from gemlint import engine

    _forget_projects()
    tree = tree_for(config)
    own = tree.config_for(path)
    language = language_of(path) or Language.PYTHON
    source = SourceFile(path, language, display_path(path, Path.cwd()), root_relative(path, own.glob_root))
    selection = Selection.from_config(own, rule_entries())
    warnings = list(tree.warnings)
    try:
        decoded = decoder_for(language)(data)
    except SourceError as error:
        return StdinOutcome([input_error(source.display, str(error), error.line, error.column)], warnings=warnings)
    diagnostics = engine.lint_text(source, decoded.text, selection)
    if not mode.active or not any(applicable(d.fix, mode.unsafe) for d in diagnostics):
        return StdinOutcome(diagnostics, warnings=warnings)
    from gemlint import fixes  # LibCST checks that a fixed Python file still parses

    outcome = fixes.fix_source(decoded.text, language, lambda text: engine.lint_text(source, text, selection), diagnostics, mode.unsafe)
    if outcome.refused:
        warnings.append(f"{source.display}: fixes not applied: {outcome.refused}")
    if mode.diff:
        return StdinOutcome(diagnostics, applied=outcome.applied, diff=fixes.unified_diff(source.display, decoded.text, outcome.text), warnings=warnings)
    return StdinOutcome(outcome.diagnostics, outcome.text.encode(decoded.encoding), outcome.applied, warnings=warnings)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"
