"""benchmarks/ecosystem/check.py's timing: alternate runs, medians, a check that runs agree, and the summary
of the repositories gemlint is slower on than their parse (the repositories themselves are never fetched here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ECOSYSTEM = Path(__file__).resolve().parent.parent / "benchmarks" / "ecosystem"


@pytest.fixture(scope="module")
def check():
    sys.path.insert(0, str(ECOSYSTEM.parent))  # check.py imports benchmarks/bytecode.py
    try:
        spec = importlib.util.spec_from_file_location("ecosystem_check", ECOSYSTEM / "check.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("ecosystem_check", None)
        sys.path.remove(str(ECOSYSTEM.parent))


def _scripted(check, monkeypatch, lint_seconds, parse_seconds, findings=None):
    """Replace the two measured commands by scripted outcomes; returns the order they were called in."""
    calls = []
    lints, parses, frontends = iter(lint_seconds), iter(parse_seconds), iter(parse_seconds)
    found = iter(findings) if findings is not None else None

    def lint(repository, folder, preview, jobs):
        calls.append("lint")
        return check.Outcome(repository, next(lints), next(found) if found is not None else [], peak_mib=len(calls))

    def parse_time(folder, mode="libcst"):
        calls.append(f"parse {mode}")
        return next(parses) if mode == "libcst" else 10 * next(frontends)

    monkeypatch.setattr(check, "lint", lint)
    monkeypatch.setattr(check, "parse_time", parse_time)
    return calls


REPOSITORY_FIELDS = ("owner/name", "0" * 40, "python", "dev")


def test_repeated_runs_alternate_and_report_the_medians(check, monkeypatch, tmp_path):
    calls = _scripted(check, monkeypatch, [0.9, 0.3, 0.4], [0.5, 0.2, 0.35])
    outcome = check.timed_outcome(check.Repository(*REPOSITORY_FIELDS), tmp_path, False, None, True, 3)
    assert calls == ["lint", "parse libcst", "parse frontends"] * 3
    assert (outcome.seconds, outcome.parse_seconds, outcome.frontends_seconds) == (0.4, 0.35, pytest.approx(3.5))
    assert outcome.peak_mib == 7  # the largest of the three runs' processes (scripted as 1, 4 and 7)
    assert outcome.error == ""


def test_runs_that_disagree_on_the_findings_are_an_error(check, monkeypatch, tmp_path):
    runs = [[{"fingerprint": "a:1"}], [{"fingerprint": "a:1"}, {"fingerprint": "b:1"}]]
    _scripted(check, monkeypatch, [0.3, 0.3], [0.2, 0.2], runs)
    outcome = check.timed_outcome(check.Repository(*REPOSITORY_FIELDS), tmp_path, False, None, True, 2)
    assert outcome.error == "the findings differ between runs"


def test_the_summary_counts_and_names_the_repositories_slower_than_their_parse(check):
    def outcome(name, seconds, parse):
        result = check.Outcome(check.Repository(name, "0" * 40, "python", "dev"), seconds)
        result.parse_seconds = parse
        return result

    outcomes = [outcome("a/fast", 1.0, 2.0), outcome("b/slow", 3.0, 1.0), outcome("c/slower", 0.5, 0.4)]
    outcomes[1].other_bytes = {"native": 4_100_000, "notebook": 250_000, "yaml": 20_000}
    text, _ = check.report(outcomes, {})
    assert text.splitlines()[-1] == (
        "slower than their parse: 2 of 3 (median 1.25x, total 1.32x); slowest: "
        "b/slow 3.00x, parse 1.00 s (4.1 MB native, 0.2 MB notebook), c/slower 1.25x, parse 0.40 s"
    )


def test_the_summary_also_compares_with_the_parse_of_every_front_end(check):
    def outcome(name, seconds, parse, frontends):
        result = check.Outcome(check.Repository(name, "0" * 40, "native", "dev"), seconds)
        result.parse_seconds, result.frontends_seconds = parse, frontends
        return result

    outcomes = [outcome("a/kernels", 3.0, 0.3, 1.5), outcome("b/charts", 0.3, 0.2, 0.25), outcome("c/app", 1.0, 2.0, 2.2)]
    text, _ = check.report(outcomes, {})
    assert text.splitlines()[-1] == (
        "slower than their front-ends' parse (LibCST, tree-sitter, YAML): 2 of 3 (median 1.20x); slowest: "
        "a/kernels 2.00x, front-ends 1.50 s, b/charts 1.20x, front-ends 0.25 s"
    )
    assert text.splitlines()[1].split()[-2:] == ["10.00", "2.00"]  # x parse, x front-ends


def test_what_the_parse_does_not_read_is_counted_by_language(check, tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "scan.cu").write_text("__global__ void scan() {}\n")
    (tmp_path / "demo.ipynb").write_text('{"cells": []}')
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "hook.cu").write_text("int x;\n")
    assert check.other_bytes(tmp_path) == {"native": 26, "notebook": 13}


def test_the_front_ends_parse_reads_what_gemlint_reads_and_the_libcst_parse_only_python(tmp_path):
    import subprocess

    (tmp_path / "app.py").write_text("x = (\n")  # one parse error in each mode
    (tmp_path / "kernel.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "deploy.yaml").write_text("a: [\n")  # a second, only the front-ends' parse reads
    script = ECOSYSTEM.parent / "parse_only.py"
    for mode, failures in (("libcst", 1), ("frontends", 2)):
        done = subprocess.run([sys.executable, str(script), mode, str(tmp_path)], capture_output=True, text=True, check=True)
        assert done.stderr.strip() == f"{mode}: {failures} failures"
