"""The install story: the sdist and wheel build (`python -m build`), pass `twine check`, and the
wheel installs into a fresh virtualenv and runs; the project's URL is written once, in
``[project.urls]``, and every document that names the repository agrees with it; no document
tells users to install gemlint from a package index, where it is not published."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from gemlint.docs import URL_KEY, project_url

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
REPOSITORY = PYPROJECT["project"]["urls"][URL_KEY]
DOCUMENTS = [ROOT / "README.md", ROOT / "action.yml", ROOT / ".pre-commit-hooks.yaml", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "benchmarks").glob("*.md"))]


def test_the_url_comes_from_project_urls():
    assert project_url() == REPOSITORY.rstrip("/")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_documents_name_the_repository_of_project_urls(document):
    text = document.read_text(encoding="utf-8")
    owner_name = REPOSITORY.removeprefix("https://github.com/")
    for url in re.findall(r"https://github\.com/[\w.-]+/[\w.-]+", text):
        assert url.removesuffix(".git") == REPOSITORY or not url.startswith(f"https://github.com/{owner_name.split('/')[0]}/"), url
    for action in re.findall(r"uses: ([\w.-]+/[\w.-]+)@", text):
        if "gemlint" in action:
            assert action == owner_name, action


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_no_document_installs_gemlint_from_a_package_index(document):
    text = document.read_text(encoding="utf-8")
    # `pip install gemlint`, `pip install 'gemlint[bench]'`, `gemlint==0.1.0`: all resolve on an index.
    assert not re.search(r"pip install\s+(-\S+\s+)*['\"]?gemlint(\[[\w,]+\])?(?!\s*@)['\"]?(\s|$|==)", text), document
    assert "gemlint==" not in text


def test_docs_point_only_inside_the_repository():
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            assert (document.parent / target).resolve().is_relative_to(ROOT), (document, target)
            assert (document.parent / target).exists(), (document, target)
        assert "../shared" not in text and "SPEC §" not in text, document


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@pytest.mark.packaging
@pytest.mark.skipif(not (_have("build") and _have("twine")), reason="needs build and twine (the test extra installs them)")
def test_wheel_and_sdist_build_pass_twine_and_the_wheel_runs_in_a_fresh_virtualenv(tmp_path):
    """About 30 s: builds the sdist, then the wheel from it (as `python -m build` does), and installs
    the wheel with its dependencies into a new virtualenv."""
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("gemlint-*.whl")
    (sdist,) = dist.glob("gemlint-*.tar.gz")
    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)], capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    bin_dir = environment / ("Scripts" if os.name == "nt" else "bin")
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    installed = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(wheel)], capture_output=True, text=True, timeout=600, env=env)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

    gemlint = [str(bin_dir / "gemlint")]
    run = subprocess.run([*gemlint, "examples/", "--no-cache", "--format", "sarif"], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 1, run.stderr
    driver = json.loads(run.stdout)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == REPOSITORY
    assert all(rule["helpUri"].startswith(f"{REPOSITORY}/blob/main/docs/rules.md#") for rule in driver["rules"])
    # Package data travels in the wheel: the published benchmark numbers and the native pairs' sources.
    rules = subprocess.run([*gemlint, "explain", "GEM101"], capture_output=True, text=True, timeout=120, env=env)
    assert rules.returncode == 0 and "GEM101" in rules.stdout
    data = subprocess.run(
        [str(bin_dir / "python"), "-c", "import importlib.resources as r; print(r.files('gemlint.bench').joinpath('results/cpu.json').is_file(), r.files('gemlint.bench.pairs').joinpath('gem301/bad.cu').is_file())"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert data.stdout.split() == ["True", "True"], data.stderr


def test_without_a_project_url_the_sarif_log_has_no_links_and_stays_valid(monkeypatch):
    from gemlint import docs
    from gemlint.diagnostics import Diagnostic, Severity
    from gemlint.registry import all_rules
    from gemlint.reporters.sarif import render_sarif
    from sarif_validation import schema_errors

    monkeypatch.setattr(docs, "project_url", lambda: None)
    monkeypatch.setattr("gemlint.reporters.sarif.project_url", lambda: None)
    finding = Diagnostic(code="GEM404", name="cuda-launch-blocking", severity=Severity.WARNING, path="a.py", line=1, column=1, end_line=1, end_column=2, message="m")
    log = json.loads(render_sarif([finding], rules=all_rules(), root=ROOT))
    driver = log["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver and all("helpUri" not in rule for rule in driver["rules"])
    assert not schema_errors(log)
