"""Runs a lint over many files: discovery, process-parallel linting, fixes and diffs."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from gemlint.config import Config
from gemlint.diagnostics import Diagnostic
from gemlint.discovery import Discovery, SourceFile
from gemlint.engine import lint_file, lint_text
from gemlint.fixes import FileChanged, applicable, fix_text, unified_diff, write_atomically
from gemlint.registry import all_rules
from gemlint.selection import Selection

# Below this many files a process pool costs more than it saves (and pre-commit already runs hooks in parallel).
PARALLEL_THRESHOLD = 32


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


@dataclass
class RunResult:
    files: list[FileReport] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return sorted((d for f in self.files for d in f.diagnostics), key=lambda d: d.sort_key)

    @property
    def fixed(self) -> int:
        return sum(f.fixed for f in self.files)

    @property
    def warnings(self) -> list[str]:
        return [f.warning for f in self.files if f.warning]


def process_file(source: SourceFile, selection: Selection, mode: FixMode) -> FileReport:
    diagnostics, data, decoded = lint_file(source, selection)
    report = FileReport(source.display, diagnostics)
    if not mode.active or decoded is None or data is None:
        return report
    if not any(applicable(d.fix, mode.unsafe) for d in diagnostics):
        return report
    outcome = fix_text(decoded.text, source.language, lambda text: lint_text(source, text, selection), diagnostics, mode.unsafe)
    report.diagnostics = outcome.diagnostics
    if outcome.refused:
        report.warning = f"{source.display}: fixes not applied: {outcome.refused}"
    if outcome.text == decoded.text:
        return report
    if mode.diff:
        report.diff = unified_diff(source.display, decoded.text, outcome.text)
        report.diagnostics = diagnostics  # nothing was written: every finding still stands
        report.fixed = outcome.applied
        return report
    try:
        write_atomically(source.path, data, outcome.text, decoded.encoding)
        report.fixed = outcome.applied
    except (FileChanged, OSError) as error:
        report.warning = f"{source.display}: fixes not written: {error}"
        report.diagnostics = diagnostics
    return report


def _process_star(args: tuple[SourceFile, Selection, FixMode]) -> FileReport:
    return process_file(*args)


def run(
    paths: Iterable[Path],
    config: Config,
    mode: FixMode = FixMode(),
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunResult:
    selection = Selection.from_config(config, all_rules())
    files = list(Discovery(config).files(list(paths)))
    jobs = jobs or os.cpu_count() or 1
    result = RunResult()
    work = [(source, selection, mode) for source in files]
    if jobs > 1 and len(files) >= PARALLEL_THRESHOLD:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            reports = pool.map(_process_star, work, chunksize=max(1, min(64, len(files) // (jobs * 8))))
            for index, report in enumerate(reports, 1):
                result.files.append(report)
                if progress:
                    progress(index, len(files))
    else:
        for index, item in enumerate(work, 1):
            result.files.append(_process_star(item))
            if progress:
                progress(index, len(files))
    return result
