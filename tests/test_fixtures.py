"""The single fixture harness: every marked line is reported, and nothing else is (SPEC §11)."""

from __future__ import annotations

import pytest

from fixture_harness import FIXTURES, expectations, fixture_files, lint_fixture
from gemlint.registry import all_rules

FILES = fixture_files()


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(FIXTURES).as_posix() for p in FILES])
def test_fixture(path):
    diagnostics = lint_fixture(path)
    got = {(d.line, d.code) for d in diagnostics}
    expected = expectations(path)
    missing = sorted(expected - got)
    unexpected = sorted((d.line, d.code, d.message) for d in diagnostics if (d.line, d.code) not in expected)
    assert not missing and not unexpected, f"missing: {missing}\nunexpected: {unexpected}"


def test_every_rule_has_a_reported_fixture_line():
    reported = {code for path in FILES for _, code in expectations(path)}
    missing = [rule.code for rule in all_rules() if rule.code not in reported]
    assert not missing, f"rules without a fixture line that must be reported: {missing}"
