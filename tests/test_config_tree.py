"""Configuration resolved per file, as ruff does it: a monorepo whose services/a has its own config
gets the same findings through the CLI (paths in every order), the flake8 plugin, the library API
and `pre-commit try-repo`; `extend`, `--config`, `--isolated`, project-wide keys and misspelled keys."""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gemlint.api import lint_paths
from gemlint.cli import main
from gemlint.config import ConfigError, load_config
from gemlint.globs import rebase_globs
from gemlint.registry import known_codes

ROOT = Path(__file__).resolve().parent.parent
SERVICE = """import os

import onnxruntime as ort
import torch

os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
torch.autograd.set_detect_anomaly(True)
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
"""
# services/a ignores the GEM4 family, and GEM5 in its scripts/ (a glob relative to services/a);
# services/b and the repository's own scripts/ have no config of their own.
EXPECTED = {
    ("services/a/app.py", 9, "GEM501"),
    ("services/b/app.py", 6, "GEM404"),
    ("services/b/app.py", 7, "GEM402"),
    ("services/b/app.py", 9, "GEM501"),
    ("scripts/tool.py", 6, "GEM404"),
    ("scripts/tool.py", 7, "GEM402"),
    ("scripts/tool.py", 9, "GEM501"),
}
FILES = ("services/a/app.py", "services/b/app.py", "services/a/scripts/tool.py", "scripts/tool.py")
FINDING = re.compile(r"^(\S+):(\d+):\d+: (GEM\d+) ", re.MULTILINE)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "gemlint tests",
    "GIT_AUTHOR_EMAIL": "tests@gemlint.invalid",
    "GIT_COMMITTER_NAME": "gemlint tests",
    "GIT_COMMITTER_EMAIL": "tests@gemlint.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def monorepo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)  # what marks the repository root
    for name in FILES:
        write(root / name, SERVICE)
    write(root / "services" / "a" / "gemlint.toml", 'ignore = ["GEM4"]\nper-file-ignores = { "scripts/*.py" = ["GEM5"] }\n')
    return root


def cli(cwd: Path, *args: str) -> tuple[set[tuple[str, int, str]], str, int]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, [*args, "--no-cache", "--format", "json"], catch_exceptions=False)
    finally:
        os.chdir(old)
    findings = {(_from_root(cwd, f["path"]), f["line"], f["code"]) for f in json.loads(result.stdout)}
    return findings, result.stderr, result.exit_code


def _from_root(cwd: Path, path: str) -> str:
    """A reported path (relative to the current directory) relative to the repository root."""
    absolute = Path(os.path.normpath(cwd / path))
    return absolute.relative_to(_repository(absolute)).as_posix()


def _repository(path: Path) -> Path:
    return next(folder for folder in path.parents if (folder / ".git").exists())


@pytest.mark.parametrize("order", list(itertools.permutations(FILES)))
def test_cli_findings_do_not_depend_on_the_order_of_the_paths(monorepo, order):
    assert cli(monorepo, *order)[0] == EXPECTED


@pytest.mark.parametrize(
    "cwd, paths",
    [
        (".", ["."]),
        (".", ["services", "scripts"]),
        (".", ["scripts", "services/b", "services/a"]),
        ("services/a", ["../b", ".", "../../scripts/tool.py"]),
        ("services/b", ["../../scripts", "../a/app.py", "app.py", "../a/scripts/tool.py"]),
    ],
)
def test_cli_findings_are_the_same_from_any_folder_and_for_folders(monorepo, cwd, paths):
    assert cli(monorepo / cwd, *paths)[0] == EXPECTED


def test_library_api_resolves_configs_per_file(monorepo):
    findings = lint_paths([monorepo / "services" / "b", monorepo / "services" / "a", monorepo / "scripts"])
    assert {(Path(d.path).resolve().relative_to(monorepo.resolve()).as_posix(), d.line, d.code) for d in findings} == EXPECTED


def _flake8(cwd: Path, paths: tuple[str, ...]) -> subprocess.Popen:
    command = [sys.executable, "-m", "flake8", "--isolated", "--select", "GEM", "--jobs", "1", "--format=%(path)s:%(row)d:%(code)s", *paths]
    return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_flake8_plugin_reports_the_same_in_every_order(monorepo):
    orders = [FILES, tuple(reversed(FILES)), (FILES[1], FILES[3], FILES[0], FILES[2]), (".",)]
    processes = [(monorepo, _flake8(monorepo, order)) for order in orders]
    processes.append((monorepo / "services" / "a", _flake8(monorepo / "services" / "a", ("../b/app.py", "scripts/tool.py", "app.py", "../../scripts/tool.py"))))
    for cwd, process in processes:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode in (0, 1) and "Traceback" not in stderr, stderr
        found = set()
        for line in stdout.splitlines():
            path, row, code = line.rsplit(":", 2)
            found.add((_from_root(cwd, path), int(row), code))
        assert found == EXPECTED, (cwd, process.args)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_pre_commit_try_repo_reports_the_same_for_every_file_order(tmp_path):
    """The shipped manifest except `language` (see test_precommit.py: `unsupported` runs the gemlint
    under test instead of pip-installing it), over a real git repository, all files and named files
    in two orders."""
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PRE_COMMIT_COLOR": "never"}
    executable = shutil.which("gemlint", path=str(Path(sys.executable).parent)) or shutil.which("gemlint")
    command = [executable] if executable else [sys.executable, "-m", "gemlint"]
    hooks = tmp_path / "hooks"
    (spec,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    spec["language"] = "unsupported"
    spec["entry"] = " ".join(shlex.quote(part) for part in command) + " " + spec["entry"].split(" ", 1)[1] + " --no-cache"
    write(hooks / ".pre-commit-hooks.yaml", yaml.safe_dump([spec]))
    project = tmp_path / "project"
    for name in FILES:
        write(project / name, SERVICE)
    write(project / "services" / "a" / "gemlint.toml", 'ignore = ["GEM4"]\nper-file-ignores = { "scripts/*.py" = ["GEM5"] }\n')
    for repository in (hooks, project):
        for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "initial")):
            subprocess.run(["git", *args], cwd=repository, env=env, check=True, capture_output=True)
    for selection in (["--all-files"], ["--files", *FILES], ["--files", *reversed(FILES)]):
        completed = subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "gemlint", "--verbose", *selection],
            cwd=project, env=env, capture_output=True, text=True, timeout=300,
        )
        assert completed.returncode == 1, completed.stdout + completed.stderr
        found = {(path, int(line), code) for path, line, code in FINDING.findall(completed.stdout)}
        assert found == EXPECTED, completed.stdout


# -- extend, --config, --isolated ---------------------------------------------------------------
def test_extend_inherits_and_keeps_globs_relative_to_the_declaring_file(monorepo):
    write(
        monorepo / "pyproject.toml",
        '[tool.gemlint]\nper-file-ignores = { "services/a/legacy/*.py" = ["GEM5"] }\nextend-exclude = ["generated/"]\n',
    )
    write(monorepo / "services" / "a" / "gemlint.toml", 'extend = "../../pyproject.toml"\nignore = ["GEM4"]\n')
    write(monorepo / "services" / "a" / "legacy" / "old.py", SERVICE)
    write(monorepo / "services" / "a" / "generated" / "stub.py", SERVICE)
    config = load_config(monorepo / "services" / "a" / "gemlint.toml", known_codes())
    assert config.per_file_ignores == (("/legacy/*.py", ("GEM5",)),)
    assert config.extend_exclude == ("**/generated/",)
    found = cli(monorepo, "services/a")[0]
    assert found == {("services/a/app.py", 9, "GEM501"), ("services/a/scripts/tool.py", 9, "GEM501")}


def test_extend_cycle_and_missing_file_are_config_errors(tmp_path):
    write(tmp_path / "a.toml", 'extend = "b.toml"\n')
    write(tmp_path / "b.toml", 'extend = "a.toml"\n')
    with pytest.raises(ConfigError, match="'extend' makes a cycle"):
        load_config(tmp_path / "a.toml", known_codes())
    write(tmp_path / "c.toml", 'extend = "missing.toml"\n')
    with pytest.raises(ConfigError, match=r"c\.toml: 'extend': no such file"):
        load_config(tmp_path / "c.toml", known_codes())


def test_config_option_and_isolated_apply_to_every_file(monorepo):
    write(monorepo / "strict.toml", 'select = ["GEM4"]\n')
    only_gem4 = {finding for finding in EXPECTED | {("services/a/app.py", 6, "GEM404"), ("services/a/app.py", 7, "GEM402"), ("services/a/scripts/tool.py", 6, "GEM404"), ("services/a/scripts/tool.py", 7, "GEM402")} if finding[2].startswith("GEM4")}
    assert cli(monorepo, ".", "--config", "strict.toml")[0] == only_gem4
    everything = {(name, line, code) for name in FILES for line, code in ((6, "GEM404"), (7, "GEM402"), (9, "GEM501"))}
    assert cli(monorepo, "services/b", "services/a", "scripts", "--isolated")[0] == everything


def test_a_nested_config_overruled_on_a_project_wide_key_gets_a_warning(monorepo):
    write(monorepo / "pyproject.toml", '[tool.gemlint]\nhealth-paths = ["/status"]\n')
    write(monorepo / "services" / "a" / "gemlint.toml", 'health-paths = ["/alive"]\n')
    found, stderr, _ = cli(monorepo, ".")
    assert "services/a/gemlint.toml: 'health-paths' is a project-wide setting" in stderr
    assert str(monorepo / "pyproject.toml") in stderr
    # An equal value is no disagreement.
    write(monorepo / "services" / "a" / "gemlint.toml", 'health-paths = ["/status"]\n')
    assert "project-wide" not in cli(monorepo, ".")[1]


def test_health_paths_come_from_the_project_root_config(monorepo):
    handler = """import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.jit.load("model.pt")


@app.get("/status")
def status():
    with torch.inference_mode():
        return {"ok": bool(model(torch.zeros(1)))}
"""
    write(monorepo / "pyproject.toml", '[tool.gemlint]\nhealth-paths = ["/status"]\n')
    write(monorepo / "services" / "a" / "gemlint.toml", 'health-paths = ["/alive"]\n')
    write(monorepo / "services" / "a" / "health.py", handler)
    found = cli(monorepo, "services/a/health.py", "--select", "GEM602")[0]
    assert found == {("services/a/health.py", 9, "GEM602")}


def test_project_root_is_the_repository_root_from_any_folder(monorepo):
    _, stderr, _ = cli(monorepo / "services" / "a", ".", "-v")
    assert f"project root {monorepo}" in stderr
    assert "services/a/: config gemlint.toml; 2 files" in stderr or "./: config gemlint.toml; 2 files" in stderr


@pytest.mark.parametrize(
    "body, suggestion",
    [
        ("selct = ['GEM']", "did you mean 'select'?"),
        ("extend-selct = ['GEM']", "did you mean 'extend-select'?"),
        ("per_file_ignores = {}", "did you mean 'per-file-ignores'?"),
        ("health-path = ['/x']", "did you mean 'health-paths'?"),
        ("extends = 'x.toml'", "did you mean 'extend'?"),
    ],
)
def test_misspelled_keys_get_a_suggestion(tmp_path, body, suggestion):
    pyproject = write(tmp_path / "pyproject.toml", f"[tool.gemlint]\n{body}\n")
    with pytest.raises(ConfigError) as error:
        load_config(pyproject, known_codes())
    assert str(pyproject) in str(error.value) and suggestion in str(error.value)


def test_a_broken_nested_config_stops_the_run_naming_the_file(monorepo):
    write(monorepo / "services" / "b" / "gemlint.toml", "ignore = ['GEM4'\n")
    os.chdir(monorepo)
    try:
        result = CliRunner().invoke(main, ["services/a", "services/b", "--no-cache"], catch_exceptions=False)
    finally:
        os.chdir(ROOT)
    assert result.exit_code == 2 and "services/b/gemlint.toml: invalid TOML" in result.stderr


def test_rebased_globs_match_the_same_files():
    old, new = Path("/r"), Path("/r/services/a")
    assert rebase_globs(("tests/", "services/a/legacy/**", "services/*/gen/", "/build", "services/b/x", "!keep.py"), old, new) == (
        "**/tests/",
        "/legacy/**",
        "/gen/",
        "!**/keep.py",
    )
    assert rebase_globs(("services/",), old, new) == ("**", "**/services/")  # a folder above: everything
    assert rebase_globs(("legacy/**", "gen"), new, old) == ("/services/a/legacy/**", "/services/a/**/gen")
    assert rebase_globs(("legacy/**",), Path("/r/x"), Path("/r/y")) == ()


def test_configs_above_the_project_root_are_not_used(tmp_path):
    write(tmp_path / "gemlint.toml", 'ignore = ["GEM4"]\n')  # e.g. in a home directory
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write(project / "app.py", SERVICE)
    assert {code for _, _, code in cli(project, ".")[0]} == {"GEM404", "GEM402", "GEM501"}
    assert {code for _, _, code in cli(project, "app.py")[0]} == {"GEM404", "GEM402", "GEM501"}
