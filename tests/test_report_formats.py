"""The CI report formats: GitLab Code Quality, JUnit XML and reviewdog's rdjson, each valid against its
consumer's published schema, carrying the fingerprints --baseline uses, and saying what was not checked."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from gemlint.cli import main
from gemlint.registry import rule_by_code
from report_validation import gitlab_errors, junit_errors, rdjson_errors

SERVICE = 'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
# A C function whose possible leak sits past code that does not parse: the run checks the file only in part.
UNPARSED_C = """\
#include <stdlib.h>
int f(int n, int fail) {
  char *p = malloc(n);
  int total = SOME_MACRO(p) @@ n;
  if (fail) return -1;
  free(p);
  return total;
}
"""
# GEM602 (a warning): a health endpoint that runs the model, with the forward pass as a related place.
HEALTHZ = (
    "import torch\nfrom fastapi import FastAPI\n\napp = FastAPI()\nmodel = torch.jit.load('m.pt')\n\n\n"
    "@app.get('/healthz')\ndef healthz():\n    with torch.inference_mode():\n        model(torch.zeros(1))\n    return {}\n"
)
FORMATS = ("gitlab", "junit", "rdjson")


def invoke(*args: str):
    return CliRunner().invoke(main, [*args, "--no-cache"], catch_exceptions=False)


def errors(fmt: str, output: str) -> list[str]:
    if fmt == "junit":
        return junit_errors(output)
    return (gitlab_errors if fmt == "gitlab" else rdjson_errors)(json.loads(output))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository (a .git folder marks the root) with one finding in src/service.py."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "service.py").write_text(SERVICE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def junit_cases(document: str) -> list[ET.Element]:
    return list(ET.fromstring(document).iter("testcase"))


# -- valid in every situation ------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_run_with_findings_is_valid_and_keeps_the_exit_code(repo, fmt):
    result = invoke("src", "--format", fmt)
    assert result.exit_code == 1
    assert not errors(fmt, result.stdout)
    assert "GEM404" in result.stdout
    assert invoke("src", "--format", fmt, "--exit-zero").exit_code == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_run_without_findings_is_valid(repo, fmt):
    (repo / "src" / "service.py").write_text("x = 1\n", encoding="utf-8")
    result = invoke("src", "--format", fmt)
    assert result.exit_code == 0 and not errors(fmt, result.stdout)
    if fmt == "gitlab":
        assert json.loads(result.stdout) == []
    elif fmt == "rdjson":
        assert json.loads(result.stdout)["diagnostics"] == []
    else:  # JUnit: one passing test, so that the report says a run happened
        (case,) = junit_cases(result.stdout)
        assert list(case) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_what_was_not_checked_is_said_in_each_formats_way(repo, fmt):
    (repo / "src" / "kernel.c").write_text(UNPARSED_C, encoding="utf-8")
    result = invoke("src", "--select", "GEM302", "--format", fmt)
    assert result.exit_code == 0 and not errors(fmt, result.stdout)
    assert "gemlint: warning: 1 file checked only in part" in result.stderr
    if fmt == "junit":
        skipped = [case for case in junit_cases(result.stdout) if case.find("skipped") is not None]
        (notice,) = [case.find("skipped").get("message") for case in skipped]
        assert notice.startswith("1 file checked only in part")
    else:  # an array of issues (GitLab) or of diagnostics (rdjson): the notice is on stderr only
        assert "checked only in part" not in result.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_odd_characters_stay_valid(repo, fmt):
    names = ['a&b<c>"q\'.py', "модель é.py", "new\nline.py", "esc\x1bape.py"]
    for name in names:
        (repo / "src" / name).write_text(SERVICE, encoding="utf-8")
    result = invoke("src", "--format", fmt)
    assert result.exit_code == 1 and not errors(fmt, result.stdout)
    if fmt == "junit":
        suites = {suite.get("name") for suite in ET.fromstring(result.stdout).iter("testsuite")}
        # XML cannot hold an escape character, even escaped: it is written as Python writes it.
        assert suites == {f"src/{name}" for name in names[:3]} | {"src/esc\\x1bape.py", "src/service.py"}
    else:
        found = json.loads(result.stdout)
        paths = [issue["location"]["path"] for issue in (found if fmt == "gitlab" else found["diagnostics"])]
        assert sorted(paths) == sorted(f"src/{name}" for name in [*names, "service.py"])


# -- GitLab Code Quality ------------------------------------------------------------------------------


def test_gitlab_issues_carry_the_baselines_fingerprints_and_repository_paths(repo, monkeypatch):
    (repo / "src" / "classifier.py").write_text(HEALTHZ, encoding="utf-8")
    issues = json.loads(invoke("src", "--format", "gitlab").stdout)
    findings = json.loads(invoke("src", "--format", "json").stdout)
    assert [(i["check_name"], i["fingerprint"], i["location"]["lines"]["begin"]) for i in issues] == [
        (f["code"], f["fingerprint"], f["line"]) for f in findings
    ]
    assert {f["severity"] for f in findings} == {"error", "warning"}
    assert [i["severity"] for i in issues] == [{"error": "major", "warning": "minor"}[f["severity"]] for f in findings]
    assert all(i["description"].startswith(f"{f['code']} [{f['name']}] ") for i, f in zip(issues, findings))
    # Started inside src/, the paths are still the repository's (GitLab links them so).
    monkeypatch.chdir(repo / "src")
    assert json.loads(invoke(".", "--format", "gitlab").stdout) == issues


def test_a_gitlab_issue_keeps_its_fingerprint_when_code_above_it_moves(repo):
    (before,) = json.loads(invoke("src", "--format", "gitlab").stdout)
    (repo / "src" / "service.py").write_text('"""Docs."""\nimport sys\n' + SERVICE, encoding="utf-8")
    (after,) = json.loads(invoke("src", "--format", "gitlab").stdout)
    assert after["location"]["lines"]["begin"] == before["location"]["lines"]["begin"] + 2
    assert after["fingerprint"] == before["fingerprint"]


def test_a_gitlab_report_serves_as_a_baseline(repo):
    (repo / "gl-code-quality-report.json").write_text(invoke("src", "--format", "gitlab").stdout, encoding="utf-8")
    result = invoke("src", "--baseline", "gl-code-quality-report.json")
    assert result.exit_code == 0 and "1 finding in the baseline" in result.stderr


def test_extra_reports_are_written_alongside_the_text_report(repo):
    result = invoke("src", "--output-format", "gitlab:reports/cq.json", "--output-format", "junit:reports/junit.xml",
                    "--output-format", "rdjson:reports/rd.json")
    assert result.exit_code == 1 and "src/service.py:3:1: GEM404" in result.stdout
    assert not gitlab_errors(json.loads((repo / "reports" / "cq.json").read_text(encoding="utf-8")))
    assert not junit_errors((repo / "reports" / "junit.xml").read_text(encoding="utf-8"))
    assert not rdjson_errors(json.loads((repo / "reports" / "rd.json").read_text(encoding="utf-8")))
    # The same report as --format gives, whichever way it is asked for.
    assert (repo / "reports" / "cq.json").read_text(encoding="utf-8") == invoke("src", "--format", "gitlab").stdout


# -- JUnit ------------------------------------------------------------------------------------------


def test_junit_has_a_suite_per_file_and_a_failure_per_finding(repo):
    (repo / "src" / "classifier.py").write_text(rule_by_code("GEM103").bad, encoding="utf-8")
    (repo / "src" / "broken.py").write_text("def f(:\n", encoding="utf-8")
    document = invoke("src", "--format", "junit").stdout
    findings = json.loads(invoke("src", "--format", "json").stdout)
    assert not junit_errors(document)
    suites = {suite.get("name"): suite for suite in ET.fromstring(document).iter("testsuite")}
    assert set(suites) == {f["path"] for f in findings}
    for f in findings:
        (case,) = [c for c in suites[f["path"]].iter("testcase") if f["fingerprint"] in c.get("name")]
        # A file that could not be parsed is an error of the test run; a finding, a failed test.
        (outcome,) = list(case)
        assert outcome.tag == ("error" if f["code"] == "GEM000" else "failure")
        assert outcome.get("type") == f["code"] and outcome.get("message") == f["message"]
        assert outcome.text.startswith(f"{f['path']}:{f['line']}:{f['column']}: {f['code']} [{f['name']}]")
        assert case.get("classname") == f["path"].removesuffix(".py")


def test_a_junit_test_keeps_its_name_when_code_above_it_moves(repo):
    (before,) = junit_cases(invoke("src", "--format", "junit").stdout)
    (repo / "src" / "service.py").write_text("import sys\n\n" + SERVICE, encoding="utf-8")
    (after,) = junit_cases(invoke("src", "--format", "junit").stdout)
    assert after.get("name") == before.get("name") and after.find("failure").text != before.find("failure").text


# -- rdjson -----------------------------------------------------------------------------------------


def test_rdjson_columns_count_utf8_bytes(repo):
    line = 'label = "größe 模型"; os.environ["CUDA_LAUNCH_BLOCKING"] = "1"'
    (repo / "src" / "service.py").write_text(f"import os\n\n{line}\n", encoding="utf-8")
    (diagnostic,) = json.loads(invoke("src", "--format", "rdjson").stdout)["diagnostics"]
    (finding,) = json.loads(invoke("src", "--format", "json").stdout)
    start = line.encode("utf-8").index(b"os.environ") + 1
    assert finding["column"] == line.index("os.environ") + 1 < start
    assert diagnostic["location"]["range"]["start"] == {"line": 3, "column": start}
    assert diagnostic["location"]["range"]["end"]["column"] == len(line.encode("utf-8")) + 1
    assert diagnostic["code"]["value"] == "GEM404" and diagnostic["code"]["url"].endswith("#gem404-cuda-launch-blocking")


def apply_suggestion(text: str, suggestion: dict) -> str:
    """What a reviewer's click on the suggested change does: replace the whole lines of the range."""
    lines = text.splitlines(keepends=True)
    first, last = suggestion["range"]["start"]["line"], suggestion["range"]["end"]["line"]
    assert "column" not in suggestion["range"]["start"] and "column" not in suggestion["range"]["end"]
    return "".join(lines[: first - 1]) + suggestion["text"] + "\n" + "".join(lines[last:])


@pytest.mark.parametrize(("code", "options"), [("GEM103", ()), ("GEM101", ("--unsafe-fixes",))])
def test_rdjson_suggests_the_fixes_gemlint_would_apply(repo, tmp_path_factory, code, options):
    source = rule_by_code(code).bad
    (repo / "src" / "service.py").write_text(source, encoding="utf-8")
    (diagnostic,) = json.loads(invoke("src", "--select", code, "--format", "rdjson", *options).stdout)["diagnostics"]
    (suggestion,) = diagnostic["suggestions"]
    # Applied, the suggestion gives what `gemlint --fix` writes.
    fixed = tmp_path_factory.mktemp("fixed")
    shutil.copytree(repo, fixed, dirs_exist_ok=True)
    CliRunner().invoke(main, [str(fixed / "src"), "--select", code, "--fix", *options, "--no-cache"])
    assert apply_suggestion(source, suggestion) == (fixed / "src" / "service.py").read_text(encoding="utf-8") != source


def test_rdjson_suggests_an_unsafe_fix_only_with_unsafe_fixes(repo):
    (repo / "src" / "service.py").write_text(rule_by_code("GEM101").bad, encoding="utf-8")
    (diagnostic,) = json.loads(invoke("src", "--select", "GEM101", "--format", "rdjson").stdout)["diagnostics"]
    assert "suggestions" not in diagnostic


def test_rdjson_paths_are_the_ones_gemlint_reports_and_related_places_come_along(repo, monkeypatch):
    (repo / "src" / "classifier.py").write_text(HEALTHZ, encoding="utf-8")
    monkeypatch.chdir(repo / "src")  # reviewdog joins relative paths to the directory it runs in
    (diagnostic,) = json.loads(invoke(".", "--select", "GEM602", "--format", "rdjson").stdout)["diagnostics"]
    assert diagnostic["location"]["path"] == "classifier.py"
    assert diagnostic["related_locations"] == [
        {"message": "the forward pass `model(...)`", "location": {"path": "classifier.py", "range": {
            "start": {"line": 11, "column": 9}, "end": {"line": 11, "column": 30}}}}
    ]


def test_without_a_project_url_the_rdjson_report_has_no_links_and_stays_valid(repo, monkeypatch):
    monkeypatch.setattr("gemlint.docs.project_url", lambda: None)
    monkeypatch.setattr("gemlint.reporters.rdjson.project_url", lambda: None)
    document = json.loads(invoke("src", "--format", "rdjson").stdout)
    assert document["source"] == {"name": "gemlint"} and document["diagnostics"][0]["code"] == {"value": "GEM404"}
    assert not rdjson_errors(document)
