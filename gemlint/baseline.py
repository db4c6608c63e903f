"""``--baseline``: report only findings that an earlier JSON, SARIF or GitLab report did not contain.

Findings are matched on their fingerprints (:mod:`gemlint.fingerprints`), never on
line numbers, so code added above an accepted finding does not bring it back. A GitLab
Code Quality report is, like a JSON report, an array of objects with a ``fingerprint``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from gemlint.confinement import read_companion
from gemlint.diagnostics import Diagnostic
from gemlint.fingerprints import FINGERPRINT_KEY


_MAX_BASELINE_BYTES = 256 * 1024 * 1024


class BaselineError(Exception):
    """The baseline file cannot be used; the message names the file."""


def load_baseline(path: Path) -> frozenset[str]:
    try:
        # A baseline is usually committed to the repository: untrusted data, read as such.
        data = json.loads(read_companion(path, path, _MAX_BASELINE_BYTES).decode("utf-8"))
    except OSError as error:
        raise BaselineError(f"{path}: cannot read baseline: {error.strerror or error}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise BaselineError(f"{path}: baseline is not JSON: {error}") from None
    if isinstance(data, list):
        found = _from_json_report(path, data)
    elif isinstance(data, dict) and isinstance(data.get("runs"), list):
        found = _from_sarif(data)
    else:
        raise BaselineError(f"{path}: expected a gemlint JSON report (an array) or a SARIF log")
    if data and not found:
        raise BaselineError(
            f"{path}: the report has findings but no gemlint fingerprints; write it again with this version "
            "(--write-baseline, --format json or --format sarif)"
        )
    return frozenset(found)


def _from_json_report(path: Path, findings: list) -> set[str]:
    if not all(isinstance(item, dict) for item in findings):
        raise BaselineError(f"{path}: expected an array of findings")
    return {item["fingerprint"] for item in findings if isinstance(item.get("fingerprint"), str)}


def _from_sarif(log: dict) -> set[str]:
    found: set[str] = set()
    for run in _objects(log["runs"]):
        for result in _objects(run.get("results")):
            value = _object(result.get("partialFingerprints")).get(FINGERPRINT_KEY)
            if isinstance(value, str):
                found.add(value)
        for invocation in _objects(run.get("invocations")):
            for notification in _objects(invocation.get("toolExecutionNotifications")):
                value = _object(notification.get("properties")).get(FINGERPRINT_KEY)
                if isinstance(value, str):
                    found.add(value)
    return found


def _objects(value: object) -> list[dict]:
    """The objects of a SARIF array (anything else in it, or in its place, is not a finding)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _object(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def new_findings(
    diagnostics: Iterable[Diagnostic], fingerprints: dict[Diagnostic, str], baseline: frozenset[str]
) -> list[Diagnostic]:
    """The diagnostics whose fingerprints the baseline does not hold, in their original order."""
    return [d for d in diagnostics if fingerprints.get(d) not in baseline]
