"""The README's promises: the example finding is real, and `gemlint examples/` reports this issue's rules."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from gemlint.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_example_finding_is_what_gemlint_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["examples/", "--no-cache"])
    assert result.exit_code == 1
    example = re.search(r"```text\n(examples/\S+: GEM\d{3} .*)\n```", README).group(1)
    assert example in result.output.splitlines()


def test_examples_trigger_every_python_rule(monkeypatch):
    monkeypatch.chdir(ROOT)
    found = json.loads(CliRunner().invoke(main, ["examples/", "--format", "json", "--no-cache"]).output)
    assert {f["code"] for f in found} >= {
        "GEM101", "GEM102", "GEM201", "GEM301", "GEM306", "GEM401", "GEM402", "GEM403", "GEM404", "GEM501",
        "GEM502", "GEM601", "GEM602",
    }
    assert not any(f["path"].endswith("debug_tools.py") for f in found)


def test_ci_runs_the_readme_test_command():
    marker = README.index("<!-- test-command")
    command = README[marker:].split("```sh\n", 1)[1].split("\n", 1)[0]
    assert "pytest" in command
    # The benchmark pairs' assertions run in CI: the bench extra on PyTorch's CPU build, installed first.
    assert command.index("torch==2.13.0") < command.index(".[test,bench]") < command.index("pytest")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "test-command" in ci and 'export CI="${CI:-true}"' in ci


def test_readme_rule_table_matches_the_rules():
    from gemlint.registry import all_rules

    rows = dict(re.findall(r"^\| (GEM\d{3}) \| ([a-z-]+) \|", README, re.MULTILINE))
    assert rows == {rule.code: rule.name for rule in all_rules()}
    for rule in all_rules():
        row = next(line for line in README.splitlines() if line.startswith(f"| {rule.code} |"))
        assert f"| {rule.severity.value}" in row, row
