"""docs/ci.md's copy-ready snippets and the composite action at the repository root."""

from __future__ import annotations

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

from gemlint.cli import main
from report_validation import gitlab_errors, junit_errors, rdjson_errors
from sarif_validation import github_errors, schema_errors

ROOT = Path(__file__).resolve().parent.parent
CI_DOC = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
SERVICE = 'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'


def yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", CI_DOC, flags=re.S)


def test_the_workflow_uploads_sarif_with_the_permissions_it_needs():
    workflows = [yaml.safe_load(block) for block in yaml_blocks() if block.startswith("name:")]
    (workflow,) = workflows
    (job,) = workflow["jobs"].values()
    assert job["permissions"]["security-events"] == "write"
    steps = job["steps"]
    uses = [step.get("uses", "") for step in steps]
    assert uses[0].startswith("actions/checkout@")
    upload = steps[uses.index("github/codeql-action/upload-sarif@v4")]
    lint = next(step for step in steps if "gemlint ." in step.get("run", ""))
    assert "sarif:" + upload["with"]["sarif_file"] in lint["run"] and upload["if"].startswith("always()")


def test_every_yaml_snippet_parses():
    for block in yaml_blocks():
        yaml.safe_load(block if not block.startswith(" ") else "steps:\n" + block)


def test_the_pre_commit_snippet_is_a_valid_config(tmp_path):
    (snippet,) = [block for block in yaml_blocks() if "repos:" in block]
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_text(snippet, encoding="utf-8")
    completed = subprocess.run([sys.executable, "-m", "pre_commit", "validate-config", str(config)], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert yaml.safe_load(snippet)["repos"][0]["hooks"][0]["id"] == "gemlint"


def run_gemlint_line(command: str):
    """Runs a snippet's gemlint command (the part before any pipe) with the gemlint under test, here."""
    args = shlex.split(command.split("|")[0])
    assert args[0] == "gemlint"
    result = CliRunner().invoke(main, args[1:])
    assert result.exit_code == 0, result.output  # --exit-zero: the reports, not the exit code, say what was found
    return result


def test_the_gitlab_job_writes_the_reports_it_declares(repo, monkeypatch):
    (job,) = [yaml.safe_load(block)["gemlint"] for block in yaml_blocks() if block.startswith("gemlint:")]
    reports = job["artifacts"]["reports"]
    assert job["artifacts"]["when"] == "always"
    (lint,) = [line for line in job["script"] if line.startswith("gemlint ")]
    assert f"gitlab:{reports['codequality']}" in lint and f"junit:{reports['junit']}" in lint
    monkeypatch.chdir(repo)
    run_gemlint_line(lint)
    issues = json.loads((repo / reports["codequality"]).read_text(encoding="utf-8"))
    assert not gitlab_errors(issues) and [issue["location"]["path"] for issue in issues] == ["src/service.py"]
    assert not junit_errors((repo / reports["junit"]).read_text(encoding="utf-8"))


def test_the_reviewdog_step_pipes_rdjson_into_reviewdog(repo, monkeypatch):
    (step,) = [step for block in yaml_blocks() if block.startswith(" ") for step in yaml.safe_load("steps:\n" + block)["steps"]
               if "reviewdog" in step.get("run", "")]
    assert step["env"]["REVIEWDOG_GITHUB_API_TOKEN"] == "${{ secrets.GITHUB_TOKEN }}"
    (pipeline,) = [line for line in step["run"].splitlines() if "| reviewdog" in line]
    assert "--format rdjson" in pipeline and "-f=rdjson" in pipeline and "-reporter=github-pr-review" in pipeline
    assert "set -o pipefail" in step["run"]  # gemlint's exit code 2 is not lost in the pipe
    monkeypatch.chdir(repo)
    document = json.loads(run_gemlint_line(pipeline).stdout)
    assert not rdjson_errors(document) and [d["location"]["path"] for d in document["diagnostics"]] == ["src/service.py"]


def test_the_ruff_advice_is_there():
    assert 'external = ["GEM"]' in CI_DOC


def test_action_metadata():
    assert ACTION["runs"]["using"] == "composite"
    assert {"paths", "args", "sarif-file", "category", "fail-on-findings", "package"} <= set(ACTION["inputs"])
    assert set(ACTION["outputs"]) == {"sarif-file", "exit-code"}
    # Inputs reach the scripts through environment variables, never pasted into shell code.
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step["run"]


def run_lint_step(tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """Runs the action's lint step as the runner would, with the gemlint under test installed."""
    (step,) = [step for step in ACTION["runs"]["steps"] if step.get("id") == "lint"]
    executable = shutil.which("gemlint", path=str(Path(sys.executable).parent)) or shutil.which("gemlint")
    if executable is None:
        pytest.skip("the gemlint console script is not installed")
    output = tmp_path / "github_output"
    env = {
        **os.environ,
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(output),
        "GEMLINT_BIN": str(Path(executable).parent),
        "GEMLINT_PATHS": inputs.get("paths", "."),
        "GEMLINT_ARGS": inputs.get("args", ""),
        "GEMLINT_SARIF": inputs.get("sarif-file", "gemlint.sarif"),
        "GEMLINT_CATEGORY": inputs.get("category", ""),
        "GEMLINT_FAIL": inputs.get("fail-on-findings", "false"),
    }
    completed = subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path / "repo", env=env, capture_output=True, text=True, timeout=120)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines()) if output.exists() else {}
    return completed, outputs


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    (tmp_path / "repo" / "src" / "service.py").write_text(SERVICE, encoding="utf-8")
    return tmp_path / "repo"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_action_lint_step_reports_annotates_and_writes_sarif(repo):
    completed, outputs = run_lint_step(repo.parent, paths="src", category="gemlint-serving")
    assert completed.returncode == 0, completed.stderr
    assert "src/service.py:3:1: GEM404 [cuda-launch-blocking]" in completed.stdout
    assert "::error file=src/service.py,line=3,col=1," in completed.stdout
    assert outputs == {"exit-code": "1", "sarif-file": "gemlint.sarif"}
    log = json.loads((repo / "gemlint.sarif").read_text(encoding="utf-8"))
    assert not schema_errors(log) + github_errors(log)
    assert log["runs"][0]["automationDetails"] == {"id": "gemlint-serving/"}


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_action_fails_on_findings_only_when_asked_and_always_on_usage_errors(repo):
    completed, outputs = run_lint_step(repo.parent, paths="src", **{"fail-on-findings": "true"})
    assert completed.returncode == 1 and outputs["exit-code"] == "1"
    completed, outputs = run_lint_step(repo.parent, paths="src", args="--select NOPE")
    assert completed.returncode == 2 and outputs["exit-code"] == "2"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_second_run_in_one_job_does_not_reprint_the_first_runs_annotations(repo):
    run_lint_step(repo.parent, paths="src")
    (repo / "src" / "service.py").write_text("x = 1\n", encoding="utf-8")
    completed, outputs = run_lint_step(repo.parent, paths="src")
    assert outputs["exit-code"] == "0"
    assert "::error" not in completed.stdout and "::warning" not in completed.stdout
