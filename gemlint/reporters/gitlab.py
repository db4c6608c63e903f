"""GitLab Code Quality: a JSON array of issues, as ``artifacts:reports:codequality`` reads it.

GitLab keeps an issue only if it is valid against its Code Climate subset (``description``,
``fingerprint``, ``severity`` and ``location`` required) and keys issues by ``fingerprint``:
two issues with one fingerprint show as one, and the merge request widget tells new issues
from fixed ones by comparing fingerprints between the two branches. gemlint's fingerprints
(:mod:`gemlint.fingerprints`, the ones ``--baseline`` matches) are unique within a run and
never contain a line number, so a finding keeps its identity when code above it moves.

GitLab shows ``description`` and not ``check_name``, so the description starts with the
code and name, as the text report's lines do. Paths are relative to the repository root,
which is how GitLab links them. The report is an array of issues only, like gemlint's JSON
report: what the run did not check is said on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Mapping

from gemlint.diagnostics import Diagnostic, Severity
from gemlint.repository import repository_path

#: GitLab's scale is info, minor, major, critical, blocker. Errors are major and warnings minor, as in other
#: linters' GitLab reports (rumdl's, for one), which leaves critical and blocker to tools that mean them.
SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.NOTE: "info"}


def render_gitlab(diagnostics: Iterable[Diagnostic], root: Path, fingerprints: Mapping[Diagnostic, str]) -> str:
    """The Code Quality report of a run: one issue per finding, each with the finding's fingerprint."""
    issues = [
        {
            "description": f"{d.code} [{d.name}] {d.message}",
            "check_name": d.code,
            "fingerprint": fingerprints[d],
            "severity": SEVERITY[d.severity],
            "location": {
                "path": repository_path(d.path, root) or d.path,
                # In a notebook, the lines of the notebook file's JSON text, which is what GitLab shows of it.
                "lines": {"begin": d.cell.file_line, "end": max(d.cell.file_end_line, d.cell.file_line)}
                if d.cell is not None
                else {"begin": d.line, "end": max(d.end_line, d.line)},
            },
        }
        for d in diagnostics
    ]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
