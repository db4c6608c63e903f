"""The single fixture harness: every marked finding is reported as often as it is marked, with its pinned
severity and column, and nothing else is (SPEC §11)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fixture_harness import FIXTURES, Expected, expectations, fixture_files, lint_fixture, mismatches, parse_markers
from gemlint.diagnostics import Diagnostic, RelatedLocation, Severity, Span
from gemlint.registry import all_rules

FILES = fixture_files()


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(FIXTURES).as_posix() for p in FILES])
def test_fixture(path):
    problems = mismatches(expectations(path), lint_fixture(path))
    assert not problems, "\n".join(problems)


STRICT = [path for path in FILES if any((folder / "gemlint.toml").exists() and "strict = true" in (folder / "gemlint.toml").read_text() for folder in path.parents)]


@pytest.mark.parametrize("path", STRICT, ids=[p.relative_to(FIXTURES).as_posix() for p in STRICT])
def test_default_mode_reports_the_strict_findings_less_the_name_only_ones(path, monkeypatch):
    """A fixture linted with ``strict``: by default exactly its findings at precision "medium" (whose context
    rests on a name alone) are left out."""
    import fixture_harness

    strict = lint_fixture(path)
    real = fixture_harness.load_config
    monkeypatch.setattr(fixture_harness, "load_config", lambda *a: replace(real(*a), strict=False))
    default = lint_fixture(path)
    assert sorted(default, key=lambda d: d.sort_key) == sorted((d for d in strict if d.precision is None), key=lambda d: d.sort_key)
    assert all(d.precision in (None, "medium") for d in strict)


def test_name_only_findings_carry_precision_medium_in_json_and_sarif(tmp_path):
    import json

    from click.testing import CliRunner

    from gemlint.cli import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "lib.py").write_text("import torch\n\nnet = torch.jit.load('m.pt').eval()\n\n\ndef predict(x):\n    return net(x)\n")
    run = lambda *args: CliRunner().invoke(main, [str(tmp_path), "--no-cache", "--exit-zero", "--project-root", str(tmp_path), *args])
    assert json.loads(run("--format", "json").output) == []
    (finding,) = json.loads(run("--format", "json", "--strict").output)
    assert finding["code"] == "GEM101" and finding["precision"] == "medium" and "named as an inference function" in finding["message"]
    (result,) = json.loads(run("--format", "sarif", "--strict").output)["runs"][0]["results"]
    assert result["properties"]["precision"] == "medium"
    (tmp_path / "gemlint.toml").write_text("strict = true\n")
    assert len(json.loads(run("--format", "json").output)) == 1


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


def test_a_related_location_marker_needs_a_finding_that_lists_the_line():
    assert parse_markers("x  # also: GEM101\n") == [Expected(1, "GEM101", related=True)]
    span = Span("f.py", 3, 1, 3, 9)
    first = replace(finding(1, "GEM101"), related=(RelatedLocation(span, "also runs"),))
    assert mismatches([Expected(1, "GEM101"), Expected(3, "GEM101", related=True)], [first]) == []
    assert mismatches([Expected(1, "GEM101"), Expected(3, "GEM101", related=True)], [finding(1, "GEM101")]) != []
    assert mismatches([Expected(1, "GEM101"), Expected(3, "GEM102", related=True)], [first]) != []
    # A related location is not a finding of its own: the line's own findings are counted as before.
    assert mismatches([Expected(1, "GEM101"), Expected(3, "GEM101", related=True)], [first, finding(3, "GEM101")]) != []


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


def test_gem101_reports_a_function_once_with_its_other_forwards_related():
    """Each unguarded forward of one function is not a finding of its own: the fix is one guard."""
    path = FIXTURES / "GEM1xx" / "triton" / "arithmetic" / "1" / "model.py"
    (finding,) = [d for d in lint_fixture(path) if d.code == "GEM101" and d.line < 80]
    assert finding.line == 67 and [r.span.line for r in finding.related] == [70]
    assert "1 more forward pass in `execute` run the same way" in finding.message
    assert finding.fix is not None and len(finding.fix.edits) == 1
