"""Habits users bring from ruff and flake8: standard input for editors, --fail-level, --ignore-noqa,
help that shows the lint options, explain by name, --verbose, --statistics with every format,
related locations in JSON, and notes for options that do nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemlint.cli import main

SERVICE = '''\
import os

import torch

os.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # noqa: GEM404
torch.autograd.set_detect_anomaly(True)
'''
FIXABLE = '''\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.nn.Linear(2, 2)
model.eval()


@app.post("/predict")
def predict(x):
    model.train()
    with torch.inference_mode():
        return model(x)
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "service.py").write_text(SERVICE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args, input=None):
    return CliRunner().invoke(main, [*args], input=input, catch_exceptions=False)


def test_stdin_is_linted_as_the_named_file_with_its_config(project):
    (project / "src" / "gemlint.toml").write_text('ignore = ["GEM402"]\n', encoding="utf-8")
    text = "import os\nos.environ['CUDA_LAUNCH_BLOCKING'] = '1'\nimport torch\ntorch.autograd.set_detect_anomaly(True)\n"
    named = invoke("-", "--stdin-filename", "src/editor.py", "--no-cache", "--format", "json", input=text)
    assert named.exit_code == 1
    assert [(f["path"], f["line"], f["code"]) for f in json.loads(named.stdout)] == [("src/editor.py", 2, "GEM404")]
    outside = invoke("--stdin-filename", "other/editor.py", "--format", "json", input=text)  # no config there: both
    assert [f["code"] for f in json.loads(outside.stdout)] == ["GEM404", "GEM402"]
    assert invoke("-", "src/service.py").exit_code == 2  # stdin and paths together is a usage error


def test_stdin_fix_writes_the_fixed_text_to_stdout(project):
    fixed = invoke("-", "--stdin-filename", "src/predict.py", "--fix", input=FIXABLE)
    assert "model.train()" not in fixed.stdout and fixed.stdout.startswith("import torch\n")
    assert not (project / "src" / "predict.py").exists()  # nothing is written
    assert fixed.exit_code == 0


def test_fail_level(project):
    assert invoke("src", "--fail-level", "note").exit_code == 1
    assert invoke("src", "--fail-level", "warning").exit_code == 1  # GEM402 is a warning
    assert invoke("src", "--fail-level", "error").exit_code == 0
    assert "GEM402" in invoke("src", "--fail-level", "error").stdout  # still reported


def test_ignore_noqa_reports_suppressed_findings(project):
    assert "GEM404" not in invoke("src").stdout
    for option in ("--ignore-noqa", "--disable-noqa"):
        assert "GEM404" in invoke("src", option, "--no-cache").stdout


def test_help_shows_the_lint_options_and_the_commands():
    text = invoke("--help").stdout
    for option in ("--select", "--fix", "--format", "--fail-level", "--stdin-filename", "--config"):
        assert option in text
    assert "rules" in text and "explain" in text and "gemlint check" in text


def test_a_path_named_like_a_command(project):
    (project / "rules").mkdir()
    (project / "rules" / "service.py").write_text(SERVICE, encoding="utf-8")
    command = invoke("rules")
    assert command.exit_code == 0 and "GEM201" in command.stdout
    assert "gemlint check rules" in command.stderr  # a note says how to lint the folder
    assert "rules/service.py:6:1: GEM402" in invoke("rules/").stdout
    assert "rules/service.py:6:1: GEM402" in invoke("check", "rules").stdout


def test_explain_accepts_a_name():
    by_name = invoke("explain", "static-max-length-padding")
    assert by_name.exit_code == 0 and by_name.stdout == invoke("explain", "GEM201").stdout
    assert invoke("explain", "static_max_length_padding").stdout == by_name.stdout
    assert invoke("explain", "no-such-rule").exit_code == 2


def test_rules_table_columns_line_up():
    lines = invoke("rules").stdout.splitlines()
    summaries = {line.index(line.split("  ")[-1].strip()) for line in lines}  # where the summary starts
    assert len(summaries) == 1, lines


def test_verbose_names_config_rules_and_phases(project):
    (project / "src" / "gemlint.toml").write_text('select = ["GEM4"]\n', encoding="utf-8")
    text = invoke("src", "-v", "--no-cache").stderr
    assert f"project root {project}" in text
    assert "src/: config src/gemlint.toml; 1 file, 4 rules selected" in text
    for phase in ("discovery", "project index", "lint", "report"):
        assert phase in text


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "gitlab", "junit", "rdjson"])
def test_statistics_with_machine_output_go_to_stderr(project, fmt):
    result = invoke("src", "--statistics", "--ignore-noqa", "--format", fmt)
    assert "GEM402" in result.stderr and "GEM404" in result.stderr
    # stdout stays parseable
    if fmt == "junit":
        ET.fromstring(result.stdout)
    elif fmt != "github":
        json.loads(result.stdout)


def test_options_without_effect_say_so(project):
    assert "--sarif-category has no effect without --format sarif" in invoke("src", "--sarif-category", "x").stderr
    assert "--sarif-category" not in invoke("src", "--sarif-category", "x", "--output-format", "sarif:out.sarif").stderr
    assert "--show-source has no effect without --format text" in invoke("src", "--format", "json", "--show-source").stderr


def test_json_carries_related_locations(tmp_path, monkeypatch):
    service = tmp_path / "classifier.py"
    service.write_text(
        "import torch\nfrom fastapi import FastAPI\n\napp = FastAPI()\nmodel = torch.jit.load('m.pt')\n\n\n"
        "@app.get('/healthz')\ndef healthz():\n    with torch.inference_mode():\n        model(torch.zeros(1))\n    return {}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    (finding,) = json.loads(invoke("classifier.py", "--select", "GEM602", "--format", "json").stdout)
    assert finding["related"] == [{"path": "classifier.py", "line": 11, "column": 9, "cell": None, "message": "the forward pass `model(...)`"}]


def test_bench_prints_progress_lines_when_not_on_a_terminal(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "gemlint", "bench", "--rule", "GEM404", "--quick", "--device", "cpu", "--format", "json"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert "gemlint bench: GEM404..." in completed.stderr.splitlines()


def test_a_message_does_not_change_when_a_fix_is_applied_in_the_same_run(tmp_path, monkeypatch):
    examples = Path(__file__).resolve().parent.parent / "examples"
    text = (examples / "serving" / "classifier.py").read_text(encoding="utf-8")
    text = text.replace('    model(torch.zeros(1, 512))  # "make sure the model still works"', "    model.train()\n    model(torch.zeros(1, 512))")
    (tmp_path / "classifier.py").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = ["classifier.py", "--project-root", ".", "--no-cache", "--select", "GEM602,GEM103", "--format", "json"]
    before = {f["code"]: f["message"] for f in json.loads(invoke(*args).stdout)}
    after = {f["code"]: f["message"] for f in json.loads(invoke(*args, "--fix").stdout)}
    assert "GEM103" in before and "GEM103" not in after  # the fix was applied
    assert after["GEM602"] == before["GEM602"] and "on line 32" in after["GEM602"]


def test_the_readmes_json_key_list_matches_the_output(project):
    import re

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    sentence = readme[readme.index("`--format json` prints") :].split(").\n", 1)[0]
    top_level = re.sub(r"\([^()]*\)", "", sentence.removeprefix("`--format json` prints"))
    listed = set(re.findall(r"`(\w+)`", top_level))
    (finding, *_) = json.loads(invoke("src", "--ignore-noqa", "--format", "json").stdout)
    assert listed == set(finding)
    nested = re.search(r"`related`\s*\(([^()]*)\)", sentence).group(1)
    assert set(re.findall(r"`(\w+)`", nested)) == {"path", "line", "column", "cell", "message"}
