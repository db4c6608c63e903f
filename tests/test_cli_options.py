"""Options users rely on: --jobs changes nothing but speed, --config, --verbose (the cache options are in
test_cache.py, --unsafe-fixes in test_cli.py)."""

from __future__ import annotations

import concurrent.futures
import json

import pytest
from click.testing import CliRunner

from fixture_harness import FIXTURES, fixture_files
from gemlint import runner
from gemlint.cli import main
from gemlint.config import default_config
from gemlint.registry import all_rules
from gemlint.selection import Selection
from gemlint.version import __version__

FIXTURE_ROOTS = sorted({path.relative_to(FIXTURES).parts[0] for path in fixture_files()})
SERVICE = 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n\nfrom fastapi import FastAPI\napp = FastAPI()\n\n\n@app.post("/predict")\ndef predict(tok, t):\n    return tok(t, padding="max_length", max_length=64)\n'


def findings(*args: str) -> list[dict]:
    # The folder linted is its own project (a fixture folder is not a part of the repository it lies in).
    result = CliRunner().invoke(main, [*args, "--project-root", ".", "--format", "json", "--no-cache", "--exit-zero"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", FIXTURE_ROOTS)
def test_jobs_n_reports_exactly_what_jobs_1_reports(name, monkeypatch):
    monkeypatch.chdir(FIXTURES / name)
    serial = findings(".", "--jobs", "1")
    # Every fixture folder is smaller than the size at which gemlint starts its process pools: lower it.
    monkeypatch.setattr(runner, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(runner, "SUMMARY_POOL_BYTES", 0)
    parallel = findings(".", "--jobs", "3")
    assert serial and parallel == serial


def test_the_process_pool_really_runs(monkeypatch, tmp_path):
    # The comparison above means something only if --jobs 3 reaches the pool.
    (tmp_path / "a.py").write_text(SERVICE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(runner, "SUMMARY_POOL_BYTES", 0)
    started = []
    real = concurrent.futures.ProcessPoolExecutor

    def recording(*args, **kwargs):
        started.append(kwargs.get("max_workers"))
        return real(*args, **kwargs)

    # The runner imports the pool where it starts one (a run from the cache never does).
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", recording)
    assert [f["code"] for f in findings(".", "--jobs", "3")] == ["GEM404", "GEM201"]
    # The pools that summarise and lint have the 3 processes asked for; one more process derives the project's
    # facts (runner._facts_in_a_child), so that the processes forked to lint never held every summary.
    assert sorted(started) == [1, 3, 3]


def test_config_option_uses_that_file_instead_of_the_discovered_one(tmp_path, monkeypatch):
    (tmp_path / "svc.py").write_text(SERVICE, encoding="utf-8")
    (tmp_path / "gemlint.toml").write_text('ignore = ["GEM201"]\n', encoding="utf-8")
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "strict.toml").write_text('ignore = ["GEM404"]\nseverity = { GEM201 = "note" }\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert [(f["code"], f["severity"]) for f in findings("svc.py")] == [("GEM404", "error")]
    assert [(f["code"], f["severity"]) for f in findings("svc.py", "--config", "ci/strict.toml")] == [("GEM201", "note")]


def test_a_missing_or_broken_config_file_is_a_usage_error_naming_it(tmp_path, monkeypatch):
    (tmp_path / "svc.py").write_text(SERVICE, encoding="utf-8")
    (tmp_path / "broken.toml").write_text("ignore = [\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name in ("missing.toml", "broken.toml"):
        result = CliRunner().invoke(main, ["svc.py", "--config", name, "--no-cache"])
        assert result.exit_code == 2, result.output
        assert name in result.stderr and "Traceback" not in result.output


def test_verbose_says_which_config_and_root_it_uses(tmp_path, monkeypatch):
    (tmp_path / "svc.py").write_text(SERVICE, encoding="utf-8")
    (tmp_path / "gemlint.toml").write_text('ignore = ["GEM201"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    quiet = CliRunner().invoke(main, ["svc.py", "--no-cache"])
    verbose = CliRunner().invoke(main, ["svc.py", "--no-cache", "--verbose"])
    assert quiet.stderr == ""
    root, folder, *phases = verbose.stderr.splitlines()
    assert root == f"gemlint {__version__}: project root {tmp_path} (config {tmp_path / 'gemlint.toml'})"
    selected = len(Selection.from_config(default_config(tmp_path).with_overrides(ignore=("GEM201",)), all_rules()).rules)
    assert folder == f"gemlint: ./: config gemlint.toml; 1 file, {selected} rules selected"
    assert phases[0].startswith("gemlint: discovery ") and phases[-1].startswith("gemlint: report ")
    assert verbose.stdout == quiet.stdout and verbose.exit_code == quiet.exit_code == 1
    isolated = CliRunner().invoke(main, ["svc.py", "--no-cache", "-v", "--isolated"])
    assert "(config defaults)" in isolated.stderr and f"1 file, {selected + 1} rules selected" in isolated.stderr
