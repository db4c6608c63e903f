"""SARIF 2.1.0 output: schema-valid for every fixture directory, complete for GitHub code scanning,
and serialized without losing properties that equal sarif-om's defaults."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest
import sarif_om as om
from click.testing import CliRunner

from fixture_harness import FIXTURES, expectations, fixture_files
from gemlint.cli import main
from gemlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position, RelatedLocation, Severity, Span
from gemlint.fingerprints import FINGERPRINT_KEY
from gemlint.registry import all_rules
from gemlint.reporters.sarif import render_sarif, to_sarif
from gemlint.repository import find_repository_root
from sarif_validation import github_errors, schema_errors

FIXTURE_ROOTS = sorted({path.relative_to(FIXTURES).parts[0] for path in fixture_files()})
SERVICE = 'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'


def sarif_of(*args: str) -> tuple[dict, int]:
    result = CliRunner().invoke(main, [*args, "--format", "sarif", "--no-cache"], catch_exceptions=False)
    return json.loads(result.stdout), result.exit_code


def assert_valid(log: dict) -> None:
    errors = schema_errors(log) + github_errors(log)
    assert not errors, "\n".join(errors)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository (a .git folder is what marks the root) with one finding in src/service.py."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "service.py").write_text(SERVICE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("name", FIXTURE_ROOTS)
def test_sarif_of_every_fixture_directory_is_valid_and_complete(name, monkeypatch):
    root = FIXTURES / name
    monkeypatch.chdir(root)
    log, exit_code = sarif_of(".", "--project-root", ".")  # a fixture directory is a project of its own
    assert_valid(log)
    run = log["runs"][0]
    prefix = root.relative_to(find_repository_root(root)).as_posix() + "/"
    def location(item: dict) -> tuple[str, int]:
        physical = item["locations"][0]["physicalLocation"]
        return unquote(physical["artifactLocation"]["uri"]), physical["region"]["startLine"]

    # Multisets: a finding reported twice is as wrong as one not reported.
    reported = Counter((*location(r), r["ruleId"]) for r in run["results"])
    notifications = run["invocations"][0]["toolExecutionNotifications"]
    # Notifications of the run (what was not checked) have no location and no rule.
    reported += Counter((*location(n), n["descriptor"]["id"]) for n in notifications if "descriptor" in n)
    assert all(n["level"] == "warning" and "not checked" in n["message"]["text"] or "checked only in part" in n["message"]["text"]
               for n in notifications if "descriptor" not in n)
    expected = Counter(
        (prefix + path.relative_to(root).as_posix(), e.line, e.code)
        for path in fixture_files()
        if path.is_relative_to(root)
        for e in expectations(path)
        if not e.related  # a place a finding lists beside its own: in the result's relatedLocations, not a result
    )
    assert reported == expected
    # The places a finding lists beside its own (`also:` markers) are its SARIF relatedLocations.
    related = {
        (unquote(place["physicalLocation"]["artifactLocation"]["uri"]), place["physicalLocation"]["region"]["startLine"], r["ruleId"])
        for r in run["results"]
        for place in r.get("relatedLocations", ())
    }
    also = {
        (prefix + path.relative_to(root).as_posix(), e.line, e.code)
        for path in fixture_files()
        if path.is_relative_to(root)
        for e in expectations(path)
        if e.related
    }
    assert also <= related
    assert exit_code == (1 if expected else 0)
    assert all(FINGERPRINT_KEY in r["partialFingerprints"] for r in run["results"])
    assert run["invocations"][0]["executionSuccessful"] is True


def test_run_metadata_rules_and_help(repo):
    log, _ = sarif_of("src")
    assert_valid(log)
    assert list(log)[:2] == ["$schema", "version"] and log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "gemlint" and driver["semanticVersion"]
    assert [rule["id"] for rule in driver["rules"]] == [rule.code for rule in all_rules() if rule.code != "GEM000"]
    assert [n["id"] for n in driver["notifications"]] == ["GEM000"]
    rule = next(rule for rule in driver["rules"] if rule["id"] == "GEM201")
    assert rule["name"] == "static-max-length-padding"
    assert rule["defaultConfiguration"]["level"] == "warning"
    assert rule["helpUri"].endswith("docs/rules.md#gem201-static-max-length-padding")
    for section in ("### Why is this bad?", "### Example", "### Use instead", "### Benchmark"):
        assert section in rule["help"]["markdown"]
    assert "Why is this bad?" in rule["help"]["text"]
    assert rule["properties"]["precision"] in ("very-high", "high", "medium", "low")
    assert rule["properties"]["problem.severity"] == "warning" and rule["properties"]["tags"]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    assert "automationDetails" not in run  # upload-sarif's category input then applies


def test_result_location_level_and_region(repo):
    run = sarif_of("src")[0]["runs"][0]
    (result,) = run["results"]
    assert result["ruleId"] == "GEM404" and result["level"] == "error" and result["kind"] == "fail"
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "GEM404"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/service.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 41}


def test_paths_are_repository_relative_from_any_directory_and_percent_encoded(repo, monkeypatch):
    (repo / "src" / "my file.py").write_text(SERVICE, encoding="utf-8")
    monkeypatch.chdir(repo / "src")
    log, _ = sarif_of(".")
    assert_valid(log)
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"])
    assert uris == ["src/my%20file.py", "src/service.py"]


def test_empty_run_still_has_a_results_array(repo):
    (repo / "src" / "service.py").write_text("x = 1\n", encoding="utf-8")
    log, exit_code = sarif_of("src")
    assert_valid(log)
    assert exit_code == 0 and log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]


def test_parse_errors_are_tool_execution_notifications(repo):
    (repo / "src" / "broken.py").write_text("def f(:\n", encoding="utf-8")
    log, exit_code = sarif_of("src")
    assert_valid(log)
    run = log["runs"][0]
    assert exit_code == 1 and [r["ruleId"] for r in run["results"]] == ["GEM404"]
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["descriptor"] == {"id": "GEM000", "index": 0}
    assert notification["level"] == "error" and notification["message"]["text"].startswith("syntax error")
    assert notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/broken.py"
    assert run["invocations"][0]["executionSuccessful"] is True


def test_a_crashing_rule_marks_the_execution_unsuccessful():
    crash = Diagnostic("GEM000", "parse-error", Severity.ERROR, "a.py", 1, 1, 1, 1, "internal error in GEM404 (KeyError: 'x' at r.py:3); please report it")
    log = json.loads(render_sarif([crash], rules=all_rules(), root=Path.cwd()))
    assert_valid(log)
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_category_becomes_automation_details_id(repo):
    log, _ = sarif_of("src", "--sarif-category", "gemlint-python")
    assert_valid(log)
    assert log["runs"][0]["automationDetails"] == {"id": "gemlint-python/"}
    assert sarif_of("src", "--sarif-category", "gemlint/")[0]["runs"][0]["automationDetails"] == {"id": "gemlint/"}
    assert CliRunner().invoke(main, ["src", "--format", "sarif", "--sarif-category", " "]).exit_code == 2


def test_suppressed_findings_are_left_out(repo):
    (repo / "src" / "service.py").write_text(SERVICE.replace('"1"\n', '"1"  # noqa: GEM404\n'), encoding="utf-8")
    log, exit_code = sarif_of("src")
    assert exit_code == 0 and log["runs"][0]["results"] == []


def test_fixes_and_related_locations():
    fix = Fix((Edit(Position(2, 30), Position(2, 42), '"longest"'),), Applicability.SAFE, 'Use padding="longest"')
    related = (
        RelatedLocation(Span("app/handler.py", 10, 5, 10, 20), "the handler [health]"),
        RelatedLocation(Span("app/model.py", 3, 1, 3, 9), "the forward call"),
    )
    diagnostic = Diagnostic("GEM201", "static-max-length-padding", Severity.WARNING, "app/serve.py", 2, 12, 2, 60, "pad to `x[0]`", fix, related)
    log = json.loads(render_sarif([diagnostic], rules=all_rules(), root=Path.cwd(), fingerprints={diagnostic: "abc:1"}))
    assert_valid(log)
    (result,) = log["runs"][0]["results"]
    assert result["partialFingerprints"] == {FINGERPRINT_KEY: "abc:1"}
    assert [(r["id"], r["message"]["text"], r["physicalLocation"]["artifactLocation"]["uri"]) for r in result["relatedLocations"]] == [
        (1, "the handler [health]", "app/handler.py"),
        (2, "the forward call", "app/model.py"),
    ]
    # GitHub links a related location only where the message refers to its id; literal brackets are escaped.
    assert result["message"]["text"] == r"pad to `x\[0\]` (see [the handler \[health\]](1), [the forward call](2))"
    (sarif_fix,) = result["fixes"]
    assert sarif_fix["description"]["text"] == 'Use padding="longest"' and sarif_fix["properties"] == {"applicability": "safe"}
    (change,) = sarif_fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "app/serve.py"
    assert change["replacements"] == [
        {"deletedRegion": {"startLine": 2, "startColumn": 30, "endLine": 2, "endColumn": 42}, "insertedContent": {"text": '"longest"'}}
    ]


def test_fixable_finding_from_the_cli_carries_its_fix(repo):
    (repo / "src" / "service.py").write_text('from fastapi import FastAPI\napp = FastAPI()\n\n\n@app.post("/e")\ndef e(t):\n    return tok(t, padding="max_length")\n', encoding="utf-8")
    log, _ = sarif_of("src")
    assert_valid(log)
    (result,) = log["runs"][0]["results"]
    replacement = result["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == '"longest"'
    assert replacement["deletedRegion"]["startLine"] == 7


def test_serializer_keeps_values_equal_to_sarif_om_defaults():
    # jschema_to_python.to_json would drop these (they equal the attrs defaults), and a missing
    # result level means "the rule's default level", not "warning".
    result = om.Result(message=om.Message(text="m"), rule_id="GEM404", rule_index=0, level="warning", kind="fail")
    assert to_sarif(result) == {"message": {"text": "m"}, "kind": "fail", "level": "warning", "ruleId": "GEM404", "ruleIndex": 0}
    assert to_sarif(om.ReportingConfiguration(level="warning")) == {"enabled": True, "level": "warning"}
    # Only SARIF's own "absent" sentinels are left out: -1 indices and the default lists.
    region = to_sarif(om.Region(start_line=1))
    assert region == {"startLine": 1}
    assert "newlineSequences" not in to_sarif(om.Run(tool=om.Tool(driver=om.ToolComponent(name="x"))))
    with pytest.raises(TypeError):
        to_sarif(om.Result(message=om.Message(text="m"), properties={"tags": {"a"}}))


def test_result_level_below_the_rule_default_is_written(repo):
    (repo / "gemlint.toml").write_text('severity = { GEM404 = "warning" }\n', encoding="utf-8")
    run = sarif_of("src")[0]["runs"][0]
    (result,) = run["results"]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["defaultConfiguration"]["level"] == "error"
    assert result["level"] == "warning"


def test_sarif_as_an_extra_output_beside_the_text_report(repo):
    result = CliRunner().invoke(main, ["src", "--output-format", "sarif:out/gemlint.sarif"])
    assert result.exit_code == 1 and "GEM404 [cuda-launch-blocking]" in result.output
    log = json.loads((repo / "out" / "gemlint.sarif").read_text(encoding="utf-8"))
    assert_valid(log)
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["GEM404"]


def test_the_validation_catches_what_github_rejects(repo):
    log, _ = sarif_of("src")
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    region["startColumn"] = 0
    assert any("startColumn" in error for error in schema_errors(log))
    region["startColumn"] = 1
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "src/my file.py"
    assert github_errors(log) == ["invalid URI reference 'src/my file.py'"]
    del log["runs"][0]["results"]
    assert "a run without a results array is rejected by upload-sarif" in github_errors(log)
