"""The pre-commit hook: a valid manifest, the right file types, and a real `pre-commit try-repo` run."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from identify.identify import tags_from_path
from packaging.version import Version

from gemlint.languages import language_of

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / ".pre-commit-hooks.yaml"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "gemlint tests",
    "GIT_AUTHOR_EMAIL": "tests@gemlint.invalid",
    "GIT_COMMITTER_NAME": "gemlint tests",
    "GIT_COMMITTER_EMAIL": "tests@gemlint.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
SERVICE = 'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

INSTALLED = Version(importlib.metadata.version("pre-commit"))
# A hook that runs whatever `entry` names: `system` until pre-commit 4.4 renamed it `unsupported`.
RUN_ENTRY_AS_IS = "unsupported" if INSTALLED >= Version("4.4") else "system"
# The pre-commit release that introduced each manifest feature gemlint's hook may use.
FEATURE_SINCE = {
    "types_or": Version("2.9.0"),
    "require_serial": Version("1.13.0"),
    "minimum_pre_commit_version": Version("1.15.0"),
    "language: python": Version("0.1.0"),
    "language: system": Version("0.1.0"),
    "language: unsupported": Version("4.4.0"),
}


def hook() -> dict:
    (only,) = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return only


def pre_commit(*args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def git(*args: str, cwd: Path, env: dict) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def test_manifest_uses_only_what_its_minimum_pre_commit_version_supports():
    spec = hook()
    used = {key for key in spec if key in FEATURE_SINCE} | {f"language: {spec['language']}"}
    assert used <= FEATURE_SINCE.keys(), f"add the release that introduced {used - FEATURE_SINCE.keys()}"
    minimum = Version(spec["minimum_pre_commit_version"])
    too_new = {feature: str(FEATURE_SINCE[feature]) for feature in used if FEATURE_SINCE[feature] > minimum}
    assert not too_new, f"the manifest declares pre-commit >= {minimum} but uses {too_new}"


def test_manifest_is_valid():
    completed = pre_commit("validate-manifest", str(MANIFEST), cwd=ROOT, env=os.environ.copy())
    assert completed.returncode == 0, completed.stdout + completed.stderr
    spec = hook()
    assert spec["id"] == "gemlint" and spec["language"] == "python"
    assert spec["entry"].split()[:2] == ["gemlint", "--force-exclude"]


@pytest.mark.parametrize(
    "name, selected",
    [
        ("src/app.py", True),
        ("src/app.pyi", True),
        ("deploy/deployment.yaml", True),
        ("charts/values.yml", True),
        ("csrc/alloc.c", True),
        ("csrc/alloc.h", True),
        ("csrc/alloc.cpp", True),
        ("csrc/alloc.cc", True),
        ("csrc/alloc.hpp", True),
        ("csrc/kernel.cu", True),
        ("csrc/kernel.cuh", True),
        ("include/engine.inl", True),
        ("include/detail/impl.ipp", True),
        ("include/layer.hh", True),
        ("Dockerfile", True),
        ("docker/Dockerfile.gpu", True),
        ("serve.Dockerfile", True),
        ("model_repository/bert/config.pbtxt", True),
        ("config.pbtxt", True),
        ("graphs/model.pbtxt", False),
        ("src/APP.PY", True),
        ("notebooks/explore.ipynb", True),
        ("README.md", False),
        ("setup.cfg", False),
        ("pyproject.toml", False),
    ],
)
def test_hook_selects_the_files_gemlint_reads(tmp_path, name, selected):
    # pre-commit's rule: a file is passed when its path matches `files` and its identify tags meet any of
    # the hook's `types_or` (each when given); the hook passes exactly the files gemlint has a front-end for.
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n", encoding="utf-8")
    spec = hook()
    matches_files = re.search(spec.get("files", ""), name) is not None
    matches_types = "types_or" not in spec or bool(tags_from_path(str(path)) & set(spec["types_or"]))
    assert (matches_files and matches_types) is selected
    assert (language_of(Path(name)) is not None) is selected


def test_try_repo_runs_the_hook_on_a_temporary_repository(tmp_path):
    """`pre-commit try-repo` against a temporary git repository, with the manifest as shipped except
    `language`: `python` would pip-install gemlint from an index into a fresh virtualenv (network,
    ~15 s); `unsupported` (`system` before pre-commit 4.4) runs the gemlint under test instead.
    Everything else — types_or, entry arguments, require_serial, pass_filenames — is the shipped manifest's."""
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PRE_COMMIT_COLOR": "never"}
    executable = shutil.which("gemlint", path=str(Path(sys.executable).parent)) or shutil.which("gemlint")
    command = [executable] if executable else [sys.executable, "-m", "gemlint"]
    hooks_repo = tmp_path / "hooks"
    hooks_repo.mkdir()
    spec = hook()
    spec["language"] = RUN_ENTRY_AS_IS
    spec["entry"] = " ".join(shlex.quote(part) for part in command) + " " + spec["entry"].split(" ", 1)[1]
    (hooks_repo / ".pre-commit-hooks.yaml").write_text(yaml.safe_dump([spec]), encoding="utf-8")
    git("init", "-q", cwd=hooks_repo, env=env)
    git("add", "-A", cwd=hooks_repo, env=env)
    git("commit", "-q", "-m", "hooks", cwd=hooks_repo, env=env)

    project = tmp_path / "project"
    for name, text in {
        "src/service.py": SERVICE,
        "src/clean.py": "x = 1\n",
        "build/generated.py": SERVICE,  # excluded by default: --force-exclude must drop it although it is passed
        "deploy/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\n",
        "csrc/kernel.cu": "int main() { return 0; }\n",
        "Dockerfile": "FROM python:3.12\n",
        "README.md": "# project\n",
    }.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    git("init", "-q", cwd=project, env=env)
    git("add", "-A", "-f", cwd=project, env=env)
    git("commit", "-q", "-m", "project", cwd=project, env=env)

    failed = pre_commit("try-repo", str(hooks_repo), "gemlint", "--all-files", cwd=project, env=env)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "src/service.py:3:1: GEM404 [cuda-launch-blocking]" in failed.stdout
    assert "build/generated.py" not in failed.stdout
    assert "Found 1 problem." in failed.stdout

    (project / "src" / "service.py").write_text("import os\n", encoding="utf-8")
    git("add", "-A", cwd=project, env=env)
    passed = pre_commit("try-repo", str(hooks_repo), "gemlint", "--all-files", cwd=project, env=env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "gemlint" in passed.stdout and "Passed" in passed.stdout


@pytest.mark.skipif(
    os.environ.get("GEMLINT_NETWORK_TESTS") != "1", reason="installs gemlint from a package index (set GEMLINT_NETWORK_TESTS=1)"
)
def test_try_repo_with_the_shipped_manifest_installs_and_runs(tmp_path):
    """The manifest exactly as shipped (`language: python`): pre-commit pip-installs this checkout."""
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PRE_COMMIT_COLOR": "never"}
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "service.py").write_text(SERVICE, encoding="utf-8")
    git("init", "-q", cwd=project, env=env)
    git("add", "-A", cwd=project, env=env)
    git("commit", "-q", "-m", "project", cwd=project, env=env)
    completed = pre_commit("try-repo", str(ROOT), "gemlint", "--all-files", cwd=project, env=env)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "src/service.py:3:1: GEM404 [cuda-launch-blocking]" in completed.stdout
