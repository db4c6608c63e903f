"""The command line, through click's runner and through the installed console script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemlint.cli import main

SERVICE = '''\
import os

import torch
from fastapi import FastAPI

app = FastAPI()
os.environ["CUDA_LAUNCH_BLOCKING"] = "1"


@app.post("/embed")
def embed(text: str):
    return tokenizer(text, padding="max_length", max_length=2048)
'''
JSON_KEYS = {"code", "name", "severity", "path", "line", "column", "end_line", "end_column", "message", "fix"}


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "service.py").write_text(SERVICE, encoding="utf-8")
    (tmp_path / "src" / "clean.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_text_report_and_exit_code(project):
    result = invoke("src")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == (
        "src/service.py:7:1: GEM404 [cuda-launch-blocking] `CUDA_LAUNCH_BLOCKING=1` makes every CUDA kernel "
        "launch synchronous; remove it or put it behind a flag"
    )
    assert lines[1].startswith("src/service.py:12:12: GEM201 [static-max-length-padding] padding to max_length (2048 tokens)")
    assert lines[-2:] == ["Found 2 problems.", "1 hidden fix can be enabled with --unsafe-fixes."]
    assert "\x1b[" not in result.output  # no colors when not a terminal


def test_clean_run_exits_0(project):
    result = invoke("src/clean.py")
    assert result.exit_code == 0 and result.output == "All checks passed!\n"


def test_json_has_exactly_the_pinned_keys(project):
    result = invoke("src", "--format", "json")
    findings = json.loads(result.output)
    # These keys are pinned ("more may be added, none renamed"); `related`, `precision`, `cell` (a notebook's; null
    # here) and `fingerprint` (for --baseline) are added.
    assert [set(f) for f in findings] == [JSON_KEYS | {"related", "precision", "cell", "fingerprint"}] * 2
    assert [f["cell"] for f in findings] == [None, None]
    assert findings[0]["related"] == []
    padding = findings[1]
    assert (padding["code"], padding["severity"], padding["path"], padding["line"], padding["column"]) == (
        "GEM201",
        "error",  # max_length >= 1024 raises the severity
        "src/service.py",
        12,
        12,
    )
    assert (padding["end_line"], padding["end_column"]) == (12, 66)
    assert padding["fix"]["applicability"] == "unsafe"  # the tensor shapes change
    assert padding["fix"]["edits"] == [{"line": 12, "column": 36, "end_line": 12, "end_column": 48, "content": '"longest"', "cell": None}]
    assert findings[0]["fix"] is None


def test_exit_zero_output_file_and_extra_outputs(project):
    result = invoke("src", "--exit-zero", "--output", "report.txt", "--output-format", "json:report.json", "--output-format", "github:gh.txt")
    assert result.exit_code == 0 and result.output == ""
    assert "GEM404" in Path("report.txt").read_text()
    assert len(json.loads(Path("report.json").read_text())) == 2
    github = Path("gh.txt").read_text().splitlines()
    assert github[0].startswith("::error file=src/service.py,line=7,col=1,endLine=7,endColumn=")
    assert github[0].endswith(",title=GEM404 cuda-launch-blocking::GEM404 `CUDA_LAUNCH_BLOCKING=1` makes every CUDA kernel launch synchronous; remove it or put it behind a flag")


def test_bad_output_format_is_a_usage_error(project):
    result = invoke("src", "--output-format", "xml:out.xml")
    assert result.exit_code == 2


def test_statistics_and_show_source(project):
    result = invoke("src", "--statistics")
    # Only safe fixes earn the [*] mark, as in ruff; GEM201's fix is unsafe.
    assert result.output.splitlines()[:2] == ["    1\tGEM201\t    static-max-length-padding", "    1\tGEM404\t    cuda-launch-blocking"]
    result = invoke("src", "--show-source", "--select", "GEM404")
    assert result.output.splitlines()[1:3] == [
        '    7 | os.environ["CUDA_LAUNCH_BLOCKING"] = "1"',
        "      | " + "^" * 40,
    ]


def test_quiet_prints_findings_only(project):
    result = invoke("src", "-q")
    assert len(result.output.splitlines()) == 2 and result.exit_code == 1


def test_diff_does_not_write_and_fix_does(project):
    before = Path("src/service.py").read_text()
    assert invoke("src", "--fix").output.splitlines()[-2] == "Found 2 problems."  # the fix is unsafe: not applied
    assert Path("src/service.py").read_text() == before
    result = invoke("src", "--diff", "--unsafe-fixes")
    assert result.exit_code == 1
    assert '-    return tokenizer(text, padding="max_length", max_length=2048)' in result.output
    assert '+    return tokenizer(text, padding="longest", max_length=2048)' in result.output
    assert Path("src/service.py").read_text() == before
    result = invoke("src", "--fix", "--unsafe-fixes")
    assert result.exit_code == 1  # GEM404 has no fix and remains
    assert result.output.splitlines()[-1] == "Fixed 1 problem; 1 remaining."
    assert 'padding="longest"' in Path("src/service.py").read_text()
    again = invoke("src", "--fix", "--unsafe-fixes")
    assert again.output.splitlines()[-1] == "Found 1 problem."


def test_missing_path_is_gem000_not_a_crash(project):
    result = invoke("nope.py", "--format", "json")
    assert result.exit_code == 1
    assert [(f["code"], f["path"]) for f in json.loads(result.output)] == [("GEM000", "nope.py")]


def test_rules_and_explain(project):
    table = invoke("rules")
    assert table.exit_code == 0 and "GEM201  static-max-length-padding" in table.output
    listing = json.loads(invoke("rules", "--format", "json").output)
    assert {r["code"] for r in listing} >= {"GEM000", "GEM201", "GEM401", "GEM402", "GEM403", "GEM404", "GEM501"}
    explained = invoke("explain", "gem201")
    assert explained.exit_code == 0 and "Why is this bad?" in explained.output and 'padding="longest"' in explained.output
    assert invoke("explain", "GEM999").exit_code == 2


def test_console_script_in_a_subprocess(project):
    executable = shutil.which("gemlint")
    command = [executable] if executable else [sys.executable, "-m", "gemlint"]
    completed = subprocess.run([*command, "src", "--format", "json"], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 1, completed.stderr
    assert [f["code"] for f in json.loads(completed.stdout)] == ["GEM404", "GEM201"]
    module = subprocess.run([sys.executable, "-m", "gemlint", "--version"], capture_output=True, text=True, timeout=60)
    assert module.returncode == 0 and module.stdout.startswith("gemlint, version ")


def test_the_program_exits_with_the_run_s_status_its_output_written(project):
    """The program ends without freeing what the run built (``os._exit``): what it printed must still reach
    a file or a pipe whole, and its status must be the run's."""
    program = [sys.executable, "-m", "gemlint"]
    with open(project / "report.json", "w") as report:
        found = subprocess.run([*program, "src", "--format", "json", "--no-cache"], stdout=report, stderr=subprocess.PIPE, text=True, timeout=120)
    assert found.returncode == 1, found.stderr
    assert [f["code"] for f in json.loads((project / "report.json").read_text())] == ["GEM404", "GEM201"]
    zero = subprocess.run([*program, "src", "--exit-zero", "--no-cache"], capture_output=True, text=True, timeout=120)
    assert zero.returncode == 0 and "GEM404" in zero.stdout and zero.stdout.endswith("\n")
    usage = subprocess.run([*program, "src", "--format", "yaml"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "yaml" in usage.stderr


class _Terminal:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_only_for_a_person_at_a_terminal():
    from gemlint.cli import progress_wanted

    assert progress_wanted(False, "text", _Terminal(True), {})
    assert not progress_wanted(False, "text", _Terminal(False), {})  # a pipe or a log file
    assert not progress_wanted(False, "text", _Terminal(True), {"CI": "true"})
    assert not progress_wanted(False, "json", _Terminal(True), {})
    assert not progress_wanted(True, "text", _Terminal(True), {})


def test_the_command_collects_cycles_less_often_and_the_library_leaves_the_collector_alone(monkeypatch):
    import gc

    import gemlint.cli
    from gemlint import collector, program

    monkeypatch.setattr(collector, "_RUN_ENDS_THE_PROCESS", False)  # back as it was after the test
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    monkeypatch.setattr(gemlint.cli, "entry", lambda: seen.append(gc.get_threshold()))
    try:
        assert gc.get_threshold() == before  # importing gemlint (the plugin, the API) changed nothing
        program.main()
    finally:
        gc.set_threshold(*before)
    assert seen == [(200_000, 30, 30)]
    assert collector._RUN_ENDS_THE_PROCESS


def test_only_the_command_takes_what_a_run_keeps_out_of_the_collectors_walks():
    # gc.freeze is for good in the process that calls it: checked in processes of their own.
    import subprocess
    import sys

    ask = "import gc; from gemlint import collector; {} collector.kept_for_the_run(); print(gc.get_freeze_count() > 0)"
    library = subprocess.run([sys.executable, "-c", ask.format("")], capture_output=True, text=True, check=True)
    command = subprocess.run([sys.executable, "-c", ask.format("collector.run_ends_the_process();")], capture_output=True, text=True, check=True)
    assert (library.stdout.strip(), command.stdout.strip()) == ("False", "True")
