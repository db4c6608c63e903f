"""Every rule carries complete metadata, and its own examples behave as documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gemlint.api import lint_source
from gemlint.config import CODE_PATTERN
from gemlint.diagnostics import Severity
from gemlint.docs import rules_markdown
from gemlint.languages import Language
from gemlint.registry import all_rules
from gemlint.rule import DocumentRule, PythonRule

RULES = all_rules()
CHECKING = [rule for rule in RULES if rule.code != "GEM000"]
DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_metadata_is_complete(rule):
    assert CODE_PATTERN.match(rule.code) and len(rule.code) == 6
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert isinstance(rule.severity, Severity)
    assert rule.languages and all(isinstance(language, Language) for language in rule.languages)
    assert rule.summary.strip() and "\n" not in rule.summary
    assert len(rule.rationale) > 80
    assert rule.bad.strip() and rule.good.strip() and rule.bad != rule.good
    assert rule.precision in ("very-high", "high", "medium", "low")
    if rule.fix is not None:
        assert rule.fix_note.strip(), "a fixable rule explains its fix safety"


def test_codes_and_names_are_unique():
    assert len({r.code for r in RULES}) == len(RULES)
    assert len({r.name for r in RULES}) == len(RULES)


PYTHON_EXAMPLES = [r for r in CHECKING if issubclass(r, PythonRule) and r.examples_language() is Language.PYTHON]
NATIVE_EXAMPLES = [r for r in CHECKING if issubclass(r, DocumentRule) and r.examples_language() is Language.NATIVE]
# The file name each example is linted as, by the language it is written in.
EXAMPLE_FILE = {Language.PYTHON: "service.py", Language.NATIVE: "kernels.cu"}


@pytest.mark.parametrize("rule", PYTHON_EXAMPLES, ids=lambda r: r.code)
def test_python_rule_flags_its_bad_example_and_accepts_its_good_one(rule):
    bad = lint_source(rule.bad, "service.py", select=(rule.code,))
    good = lint_source(rule.good, "service.py", select=(rule.code,))
    assert [d.code for d in bad] and all(d.code == rule.code for d in bad), bad
    assert good == []


@pytest.mark.parametrize("rule", NATIVE_EXAMPLES, ids=lambda r: r.code)
def test_native_rule_flags_its_bad_example_and_accepts_its_good_one(rule):
    bad = lint_source(rule.bad, "kernels.cu", select=(rule.code,))
    good = lint_source(rule.good, "kernels.cu", select=(rule.code,))
    assert [d.code for d in bad] and all(d.code == rule.code for d in bad), bad
    assert good == []


def test_examples_are_written_in_one_of_the_rules_languages():
    for rule in CHECKING:
        assert rule.examples_language() in rule.languages, rule.code
    assert {r.code for r in NATIVE_EXAMPLES} >= {"GEM301", "GEM302", "GEM303", "GEM304", "GEM305", "GEM306", "GEM307"}


@pytest.mark.parametrize("rule", [r for r in CHECKING if r.fix is not None], ids=lambda r: r.code)
def test_fixable_rule_offers_a_fix_on_its_bad_example(rule):
    bad = lint_source(rule.bad, EXAMPLE_FILE[rule.examples_language()], select=(rule.code,))
    assert bad and all(d.fix is not None and d.fix.applicability is rule.fix for d in bad)


def test_docs_rules_md_is_generated_from_metadata():
    assert DOCS.read_text(encoding="utf-8") == rules_markdown(RULES), (
        "docs/rules.md is stale: run `gemlint rules --format markdown > docs/rules.md`"
    )
