from __future__ import annotations

import json
from typing import Iterable, Mapping

from gemlint.diagnostics import Diagnostic


def render_json(diagnostics: Iterable[Diagnostic], fingerprints: Mapping[Diagnostic, str] | None = None) -> str:
    """A JSON array of findings with the keys pinned by SPEC §6, plus each finding's ``fingerprint``
    (what ``--baseline`` matches) when fingerprints are given."""
    findings = []
    for d in diagnostics:
        finding = d.to_json()
        if fingerprints is not None:
            finding["fingerprint"] = fingerprints[d]
        findings.append(finding)
    return json.dumps(findings, indent=2, ensure_ascii=False) + "\n"
