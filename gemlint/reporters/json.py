from __future__ import annotations

import json
from typing import Iterable, Mapping

from gemlint.diagnostics import Diagnostic


def render_json(diagnostics: Iterable[Diagnostic], fingerprints: Mapping[Diagnostic, str] | None = None) -> str:
    """A JSON array of findings with the pinned keys, plus ``related`` (the other places a finding
    points at: path, line, column, message; empty for most) and each finding's ``fingerprint`` (what
    ``--baseline`` matches) when fingerprints are given."""
    findings = []
    for d in diagnostics:
        finding = d.to_json()
        finding["related"] = [
            {"path": r.span.path, "line": r.span.line, "column": r.span.column, "message": r.message} for r in d.related
        ]
        if fingerprints is not None:
            finding["fingerprint"] = fingerprints[d]
        findings.append(finding)
    return json.dumps(findings, indent=2, ensure_ascii=False) + "\n"
