"""The single fixture harness: every marked finding is reported as often as it is marked, with its pinned
severity and column, and nothing else is (SPEC §11)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fixture_harness import FIXTURES, Expected, expectations, fixture_files, lint_fixture, mismatches, parse_markers
from gemlint.diagnostics import Diagnostic, Severity
from gemlint.registry import all_rules

FILES = fixture_files()


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(FIXTURES).as_posix() for p in FILES])
def test_fixture(path):
    problems = mismatches(expectations(path), lint_fixture(path))
    assert not problems, "\n".join(problems)


def test_every_rule_has_a_reported_fixture_line():
    reported = {e.code for path in FILES for e in expectations(path)}
    missing = [rule.code for rule in all_rules() if rule.code not in reported]
    assert not missing, f"rules without a fixture line that must be reported: {missing}"


def test_every_rule_has_a_fixture_finding_with_a_pinned_column():
    pinned = {e.code for path in FILES for e in expectations(path) if e.column is not None}
    missing = [rule.code for rule in all_rules() if rule.code not in pinned]
    assert not missing, f"rules without a fixture finding whose column is pinned (GEMxxx@column): {missing}"


# The harness itself: markers parse as documented, and a finding that differs from them fails.


def finding(line: int, code: str = "GEM201", column: int = 5, severity: Severity = Severity.WARNING) -> Diagnostic:
    return Diagnostic(code, "name", severity, "f.py", line, column, line, column + 3, "message")


def test_markers_parse_codes_counts_severities_columns_and_next_line():
    text = "x  # expect: GEM201[error]@5, GEM201\ny  # expect: GEM101@12\n# expect-next: GEM601[note]\nz\n/* expect: GEM301 */\n"
    assert parse_markers(text) == [
        Expected(1, "GEM201", "error", 5),
        Expected(1, "GEM201"),
        Expected(2, "GEM101", None, 12),
        Expected(4, "GEM601", "note"),
        Expected(5, "GEM301"),
    ]


def test_a_misspelt_severity_is_an_error_not_an_unpinned_marker():
    with pytest.raises(ValueError, match="unknown severity 'fatal'"):
        parse_markers("x  # expect: GEM201[fatal]\n")


def test_a_duplicate_finding_fails():
    once = [finding(1)]
    assert mismatches([Expected(1, "GEM201")], once) == []
    assert mismatches([Expected(1, "GEM201")], once + once) != []
    assert mismatches([Expected(1, "GEM201"), Expected(1, "GEM201")], once) != []
    assert mismatches([Expected(1, "GEM201"), Expected(1, "GEM201")], once + once) == []


def test_missing_and_unexpected_findings_fail():
    assert mismatches([Expected(1, "GEM201")], []) != []
    assert mismatches([], [finding(1)]) != []
    assert mismatches([Expected(2, "GEM201")], [finding(1)]) != []


def test_pinned_severity_and_column_must_match():
    warning = finding(1, column=5)
    assert mismatches([Expected(1, "GEM201", "warning", 5)], [warning]) == []
    assert mismatches([Expected(1, "GEM201", "error")], [warning]) != []
    assert mismatches([Expected(1, "GEM201", None, 6)], [warning]) != []
    # Two findings on a line: each pin needs a finding of its own, in any order.
    error = replace(finding(1, column=9), severity=Severity.ERROR)
    assert mismatches([Expected(1, "GEM201", "error"), Expected(1, "GEM201", None, 5)], [warning, error]) == []
    assert mismatches([Expected(1, "GEM201", "error"), Expected(1, "GEM201", "error")], [warning, error]) != []
