"""Mutation check: do the tests notice when a rule breaks in the ways rules break?

Each named mutation edits one spot of gemlint's code (an early return, an inverted guard, a doubled
report, a moved severity boundary, a dropped exemption, ...). The script copies the repository to a
temporary folder, checks that the chosen tests pass there unmutated, then applies one mutation at a
time, runs the tests that should catch it and puts the code back. A mutation is *killed* when those
tests fail and *survives* when they pass; every mutation listed here must be killed.

    python tests/mutation_check.py                 # every mutation
    python tests/mutation_check.py gem201-boundary gem404-doubled-report
    python tests/mutation_check.py --list

The working tree is never touched. Exit status: 0 when every mutation was killed, 1 otherwise (a
survivor, or a mutation whose code no longer exists: update it along with the code).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_NOT_COPIED = shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis", ".gemlint_cache", "build", "dist")


@dataclass(frozen=True)
class Mutation:
    name: str
    kind: str
    path: str  # relative to the repository root
    before: str  # must occur exactly once in the file
    after: str
    tests: tuple[str, ...]  # pytest arguments: the tests that should catch it

    def apply(self, root: Path) -> str:
        """Mutates the file under ``root``; returns its original text."""
        path = root / self.path
        original = path.read_text(encoding="utf-8")
        count = original.count(self.before)
        if count != 1:
            raise LookupError(f"{self.path}: the code to mutate occurs {count} times (expected once)")
        path.write_text(original.replace(self.before, self.after), encoding="utf-8")
        return original


def fixtures(*selectors: str) -> tuple[str, ...]:
    return ("tests/test_fixtures.py", "-k", " or ".join(selectors))


MUTATIONS = (
    Mutation(
        "gem201-boundary",
        "moved severity boundary",
        "gemlint/rules/gem201_static_max_length_padding.py",
        "length >= LARGE_MAX_LENGTH",
        "length > LARGE_MAX_LENGTH",
        fixtures("GEM201"),
    ),
    Mutation(
        "gem501-basic-as-error",
        "moved severity boundary",
        "gemlint/rules/gem501_ort_optimization_disabled.py",
        '"ORT_ENABLE_BASIC": Severity.NOTE',
        '"ORT_ENABLE_BASIC": Severity.ERROR',
        fixtures("GEM501", "GEM3xx"),
    ),
    Mutation(
        "gem201-inverted-inference-guard",
        "inverted guard",
        "gemlint/rules/gem201_static_max_length_padding.py",
        "        if not verdict.is_inference:\n            return\n",
        "        if verdict.is_inference:\n            return\n",
        fixtures("GEM201"),
    ),
    Mutation(
        "gem502-inverted-loader-guard",
        "inverted guard",
        "gemlint/rules/gem502_model_loaded_per_request.py",
        "            return  # cheap syntactic gate before resolving names\n        if what is None:\n",
        "            return  # cheap syntactic gate before resolving names\n        if what is not None:\n",
        fixtures("GEM502"),
    ),
    Mutation(
        "gem303-inverted-mismatch-guard",
        "inverted guard",
        "gemlint/native/c_pairing.py",
        "        if key in self._mismatches:\n            return\n",
        "        if key not in self._mismatches:\n            return\n",
        fixtures("GEM3xx"),
    ),
    Mutation(
        "gem102-early-return",
        "early return",
        "gemlint/rules/gem102_missing_eval.py",
        "    def visit_Module(self, node: cst.Module) -> None:\n",
        "    def visit_Module(self, node: cst.Module) -> None:\n        return\n",
        fixtures("GEM1xx"),
    ),
    Mutation(
        "gem601-early-return",
        "early return",
        "gemlint/rules/gem601_liveness_probe_runs_forward.py",
        "        project = project_for(self.context.config)\n",
        "        return\n        project = project_for(self.context.config)\n",
        fixtures("GEM6xx"),
    ),
    Mutation(
        "gem404-deployment-early-return",
        "early return",
        "gemlint/rules/gem404_cuda_launch_blocking.py",
        "        for setting in env_settings(self.context.document):\n",
        "        return\n        for setting in env_settings(self.context.document):\n",
        fixtures("GEM6xx"),
    ),
    Mutation(
        "gem401-doubled-report",
        "doubled report",
        "gemlint/rules/gem401_leftover_profiler.py",
        "        if self.analysis.debugging_exemption(node) is None:\n            self.report(node, message)\n",
        "        if self.analysis.debugging_exemption(node) is None:\n            self.report(node, message)\n"
        '            self.report(node, message + " (again)")\n',
        fixtures("GEM4xx"),
    ),
    Mutation(
        "gem404-doubled-report",
        "doubled report",
        "gemlint/rules/gem404_cuda_launch_blocking.py",
        "                self.report_at(setting.start, setting.end, MESSAGE)\n",
        "                self.report_at(setting.start, setting.end, MESSAGE)\n"
        "                self.report_at(setting.start, setting.start, MESSAGE)\n",
        fixtures("GEM6xx"),
    ),
    Mutation(
        "gem3xx-doubled-report",
        "doubled report",
        "gemlint/native/c_pairing.py",
        "        self.findings.append(Finding(code, node, message))\n",
        "        self.findings.append(Finding(code, node, message))\n"
        '        self.findings.append(Finding(code, node, message + " (again)"))\n',
        fixtures("GEM3xx"),
    ),
    Mutation(
        "gem401-dropped-debugging-exemption",
        "dropped exemption",
        "gemlint/rules/gem401_leftover_profiler.py",
        "        if self.analysis.debugging_exemption(node) is None:\n            self.report(node, message)\n",
        "        if True:\n            self.report(node, message)\n",
        fixtures("GEM4xx"),
    ),
    Mutation(
        "gem404-dropped-test-path-exemption",
        "dropped exemption",
        "gemlint/rules/gem404_cuda_launch_blocking.py",
        "        if not is_production_path(self.context.relative_path):\n            return\n",
        "",
        fixtures("GEM6xx"),
    ),
    Mutation(
        "gem102-dropped-eval-exemption",
        "dropped exemption",
        "gemlint/rules/gem102_missing_eval.py",
        "verdict is None or models.set_to_eval(origin) or",
        "verdict is None or",
        fixtures("GEM1xx"),
    ),
    Mutation(
        "gem201-dropped-data-pipeline-exemption",
        "dropped exemption",
        "gemlint/rules/gem201_static_max_length_padding.py",
        "if self.analysis.data_pipeline_reason(node) or self._static_shape_backend() or self._prepares_data_only(node):",
        "if self._static_shape_backend() or self._prepares_data_only(node):",
        fixtures("GEM201"),
    ),
    Mutation(
        "gem301-dropped-main-exemption",
        "dropped exemption",
        "gemlint/native/c_units.py",
        'is_main=self.name in ("main", "wmain")',
        "is_main=False",
        fixtures("GEM3xx"),
    ),
    Mutation(
        "gem3xx-too-deep-silently-dropped",
        "dropped report",
        "gemlint/native/c_pairing.py",
        '                self._report(NOT_ANALYSED, unit.node, f"`{unit.name}` is nested too deeply to follow; its resources were not checked")\n',
        "                continue\n",
        ("tests/test_native.py", "-k", "deep"),
    ),
)


def copy_repository(destination: Path) -> Path:
    target = destination / "repo"
    shutil.copytree(ROOT, target, ignore=_NOT_COPIED, symlinks=True)
    return target


def run_tests(root: Path, arguments: tuple[str, ...]) -> tuple[int, float, str]:
    # The copy's gemlint comes first on the path: the interpreter may have the working tree installed.
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *arguments]
    started = time.monotonic()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=900)
    return done.returncode, time.monotonic() - started, done.stdout + done.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="mutations to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    if args.list:
        for mutation in MUTATIONS:
            print(f"{mutation.name:40} {mutation.kind:24} {mutation.path}")
        return 0
    by_name = {mutation.name: mutation for mutation in MUTATIONS}
    unknown = [name for name in args.names if name not in by_name]
    if unknown:
        parser.error(f"unknown mutation(s): {', '.join(unknown)} (see --list)")
    chosen = [by_name[name] for name in args.names] if args.names else list(MUTATIONS)

    with tempfile.TemporaryDirectory(prefix="gemlint-mutation-") as scratch:
        root = copy_repository(Path(scratch))
        # Unmutated, every chosen selection must pass: otherwise a "kill" would mean nothing.
        for tests in dict.fromkeys(mutation.tests for mutation in chosen):
            code, _, output = run_tests(root, tests)
            if code != 0:
                print(f"the unmutated code fails {' '.join(tests)}; fix that first:\n{output[-3000:]}", file=sys.stderr)
                return 1
        rows = []
        for mutation in chosen:
            try:
                original = mutation.apply(root)
            except LookupError as error:
                rows.append((mutation, "STALE", 0.0, str(error)))
                continue
            try:
                code, seconds, output = run_tests(root, mutation.tests)
            finally:
                (root / mutation.path).write_text(original, encoding="utf-8")
            if code == 1:
                failed = next((line for line in output.splitlines() if line.startswith("FAILED")), "")
                rows.append((mutation, "killed", seconds, failed.removeprefix("FAILED ")[:90]))
            elif code == 0:
                rows.append((mutation, "SURVIVED", seconds, "the tests pass with this mutation"))
            else:
                rows.append((mutation, "ERROR", seconds, f"pytest exit status {code}: {output.strip().splitlines()[-1][:80]}"))

    header = ("MUTATION", "KIND", "RESULT", "SECONDS", "CAUGHT BY")
    table = [header] + [(m.name, m.kind, result, f"{seconds:.1f}", note) for m, result, seconds, note in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    killed = sum(result == "killed" for _, result, _, _ in rows)
    print(f"\n{killed} of {len(rows)} mutations killed")
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
