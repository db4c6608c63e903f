from __future__ import annotations

import json
from typing import Iterable, Mapping

from gemlint.diagnostics import Diagnostic


def render_json(diagnostics: Iterable[Diagnostic], fingerprints: Mapping[Diagnostic, str] | None = None) -> str:
    """A JSON array of findings with the pinned keys, plus ``related`` (the other places a finding
    points at: path, line, column, cell, message; empty for most) and each finding's ``fingerprint`` (what
    ``--baseline`` matches) when fingerprints are given. In a notebook, ``cell`` is the cell's number and
    lines are counted in the cell (see :meth:`Diagnostic.to_json`)."""
    findings = []
    for d in diagnostics:
        finding = d.to_json()
        finding["related"] = [
            {"path": r.span.path, "line": r.span.line, "column": r.span.column, "cell": None, "message": r.message}
            if r.cell is None
            else {"path": r.span.path, "line": r.cell.line, "column": r.cell.column, "cell": r.cell.cell, "message": r.message}
            for r in d.related
        ]
        if fingerprints is not None:
            finding["fingerprint"] = fingerprints[d]
        findings.append(finding)
    return json.dumps(findings, indent=2, ensure_ascii=False) + "\n"
