"""Validates gemlint's GitLab Code Quality, JUnit XML and reviewdog (rdjson) reports against the
schemas their consumers publish (tests/schemas/README.md says where each comes from), plus what
those consumers require that their schemas leave out."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from functools import lru_cache
from pathlib import Path

import jsonschema
import xmlschema

SCHEMAS = Path(__file__).resolve().parent / "schemas"
#: GitLab's severities (docs/ci/testing/code_quality.md, "Code Quality report format").
GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


@lru_cache(maxsize=None)
def _json_validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@lru_cache(maxsize=None)
def _xml_schema(name: str) -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(SCHEMAS / name))


def _errors(validator: jsonschema.protocols.Validator, instance: object, where: str = "") -> list[str]:
    return [f"{where}{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(instance)]


def gitlab_errors(report: object) -> list[str]:
    """GitLab validates each issue on its own with its Code Climate subset (and drops the invalid ones);
    its documentation also asks for a check name, a severity of its scale, a repository path and a line,
    and it keeps one issue per fingerprint."""
    if not isinstance(report, list):
        return ["the report must be a JSON array"]
    errors: list[str] = []
    for index, issue in enumerate(report):
        invalid = _errors(_json_validator("gitlab/codeclimate.json"), issue, f"[{index}]/")
        errors += invalid
        if invalid:
            continue
        location = issue["location"]
        if not isinstance(issue.get("check_name"), str) or not issue["check_name"]:
            errors.append(f"[{index}]: no check_name")
        if issue["severity"] not in GITLAB_SEVERITIES:
            errors.append(f"[{index}]: severity {issue['severity']!r} is not one of GitLab's")
        if not isinstance(location.get("path"), str) or location["path"].startswith(("/", "./")):
            errors.append(f"[{index}]: location.path must be relative to the repository")
        if not isinstance(location.get("lines", {}).get("begin"), int) or location["lines"]["begin"] < 1:
            errors.append(f"[{index}]: no location.lines.begin")
    repeated = [value for value, count in Counter(issue.get("fingerprint") for issue in report if isinstance(issue, dict)).items() if count > 1]
    if repeated:
        errors.append(f"fingerprints used twice (GitLab would show one issue each): {repeated}")
    return errors


def rdjson_errors(document: object) -> list[str]:
    """reviewdog's DiagnosticResult schema makes every field optional; reviewdog itself needs a message and
    a path, and a range with a start line for a comment on a line of the diff."""
    errors = _errors(_json_validator("reviewdog/DiagnosticResult.json"), document)
    if errors:
        return errors
    for index, diagnostic in enumerate(document.get("diagnostics", [])):
        if not diagnostic.get("message"):
            errors.append(f"diagnostics/{index}: no message")
        if not diagnostic.get("location", {}).get("path"):
            errors.append(f"diagnostics/{index}: no location.path")
        if diagnostic.get("location", {}).get("range", {}).get("start", {}).get("line", 0) < 1:
            errors.append(f"diagnostics/{index}: no start line")
    return errors


def junit_errors(document: str) -> list[str]:
    """Valid against Jenkins' junit-10.xsd and windyroad's (Apache Ant's) JUnit.xsd, with each suite's
    counts equal to its test cases, and no two tests with one class and name (GitLab's documentation forbids it)."""
    errors = [
        f"{name}: {error.reason or error.message}"
        for name in ("jenkins-xunit/junit-10.xsd", "windyroad/JUnit.xsd")
        for error in _xml_schema(name).iter_errors(document)
    ]
    if errors:
        return errors
    seen: Counter[tuple[str, str]] = Counter()
    for suite in ET.fromstring(document).iter("testsuite"):
        cases = suite.findall("testcase")
        counted = {key: int(suite.get(key, "0")) for key in ("tests", "failures", "errors", "skipped")}
        actual = {
            "tests": len(cases),
            "failures": sum(case.find("failure") is not None for case in cases),
            "errors": sum(case.find("error") is not None for case in cases),
            "skipped": sum(case.find("skipped") is not None for case in cases),
        }
        if counted != actual:
            errors.append(f"suite {suite.get('name')!r} counts {counted}, holds {actual}")
        seen.update((case.get("classname", ""), case.get("name", "")) for case in cases)
    errors += [f"test {key} appears {count} times" for key, count in seen.items() if count > 1]
    return errors
