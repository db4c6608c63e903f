"""Fingerprints (shared by SARIF and --baseline) and the baseline workflow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemlint.cli import main
from gemlint.diagnostics import Diagnostic, Severity
from gemlint.fingerprints import FINGERPRINT_KEY, fingerprint_diagnostics

SERVICE = 'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
LINE = 'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "service.py").write_text(SERVICE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def fingerprints(*args: str) -> list[str]:
    log = json.loads(invoke("src", "--format", "sarif", *args).stdout)
    return [r["partialFingerprints"][FINGERPRINT_KEY] for r in log["runs"][0]["results"]]


def test_fingerprint_survives_unrelated_edits_above_and_reindentation(repo):
    service = repo / "src" / "service.py"
    (before,) = fingerprints()
    service.write_text('"""Docs."""\nimport os\nimport sys\n\n\nprint(sys.argv)\nif True:\n    ' + LINE, encoding="utf-8")
    (after,) = fingerprints()
    assert after == before
    # The same in the JSON report, which --baseline also reads.
    (finding,) = json.loads(invoke("src", "--format", "json").stdout)
    assert finding["fingerprint"] == before and finding["line"] == 8


def test_fingerprint_changes_with_the_flagged_line_the_file_or_the_rule(repo):
    (before,) = fingerprints()
    (repo / "src" / "service.py").write_text(SERVICE.replace('"1"', "'1'"), encoding="utf-8")
    (changed,) = fingerprints()
    assert changed != before
    (repo / "src" / "service.py").rename(repo / "src" / "moved.py")
    (moved,) = fingerprints()
    assert moved not in (before, changed)


def test_identical_findings_get_distinct_occurrence_numbers(repo):
    (repo / "src" / "service.py").write_text("import os\n" + LINE + "x = 1\n" + LINE, encoding="utf-8")
    first, second = fingerprints()
    assert first.split(":")[0] == second.split(":")[0]
    assert (first.split(":")[1], second.split(":")[1]) == ("1", "2")


def test_fingerprints_do_not_depend_on_the_working_directory(repo, monkeypatch):
    (at_root,) = fingerprints()
    monkeypatch.chdir(repo / "src")
    log = json.loads(invoke(".", "--format", "sarif").stdout)
    assert [r["partialFingerprints"][FINGERPRINT_KEY] for r in log["runs"][0]["results"]] == [at_root]


def test_fingerprint_of_an_unreadable_file_is_still_defined(tmp_path):
    missing = Diagnostic("GEM000", "parse-error", Severity.ERROR, str(tmp_path / "nope.py"), 1, 1, 1, 1, "no such file")
    (value,) = fingerprint_diagnostics([missing], tmp_path).values()
    assert value.endswith(":1")


def test_write_baseline_then_only_new_findings_are_reported(repo):
    result = invoke("src", "--write-baseline", "gemlint-baseline.json")
    assert result.exit_code == 0 and "wrote 1 finding" in result.output
    assert len(json.loads(Path("gemlint-baseline.json").read_text())) == 1
    clean = invoke("src", "--baseline", "gemlint-baseline.json")
    assert clean.exit_code == 0 and "All checks passed!" in clean.output
    assert "1 finding in the baseline gemlint-baseline.json not reported" in clean.output
    # New code above the accepted finding moves it down; it stays accepted. A new finding is reported.
    (repo / "src" / "service.py").write_text(
        "import os\nimport torch\n\ntorch.autograd.set_detect_anomaly(True)\n\n" + LINE, encoding="utf-8"
    )
    found = json.loads(invoke("src", "--baseline", "gemlint-baseline.json", "--format", "json").stdout)
    assert [(f["code"], f["line"]) for f in found] == [("GEM402", 4)]


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_an_earlier_json_or_sarif_report_is_a_baseline(repo, fmt):
    assert invoke("src", "--format", fmt, "--output", f"old.{fmt}").exit_code == 1
    (repo / "src" / "service.py").write_text("# comment\n" + SERVICE + "import torch\ntorch.autograd.set_detect_anomaly(True)\n", encoding="utf-8")
    result = invoke("src", "--baseline", f"old.{fmt}", "--format", "json")
    assert result.exit_code == 1
    assert [f["code"] for f in json.loads(result.stdout)] == ["GEM402"]


def test_baselined_parse_errors_stay_hidden_through_sarif(repo):
    (repo / "src" / "broken.py").write_text("def f(:\n", encoding="utf-8")
    invoke("src", "--format", "sarif", "--output", "old.sarif")
    assert invoke("src", "--baseline", "old.sarif").exit_code == 0


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot read baseline"),
        ("{not json", "baseline is not JSON"),
        ('{"a": 1}', "expected a gemlint JSON report"),
        ('[{"code": "GEM404", "line": 3}]', "no gemlint fingerprints"),
    ],
)
def test_unusable_baseline_is_a_usage_error(repo, content, message):
    if content is not None:
        Path("baseline.json").write_text(content, encoding="utf-8")
    result = invoke("src", "--baseline", "baseline.json")
    assert result.exit_code == 2 and message in result.output


def test_empty_baseline_reports_everything(repo):
    Path("baseline.json").write_text("[]", encoding="utf-8")
    assert invoke("src", "--baseline", "baseline.json").exit_code == 1
