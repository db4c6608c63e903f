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


# Written by hand from the rule table of the specification, not from the rule classes: docs/rules.md must
# say what each rule is, how severe it is, what it runs on and how safe its fix is.
DOCUMENTED = {
    "GEM000": ("parse-error", "error", "all", "none"),
    "GEM101": ("forward-without-no-grad", "warning", "python", "unsafe"),
    "GEM102": ("missing-eval", "warning", "python", "unsafe"),
    "GEM103": ("train-mode-in-inference", "error", "python", "safe"),
    "GEM104": ("retain-graph-misuse", "warning", "python", "none"),
    "GEM201": ("static-max-length-padding", "warning", "python", "unsafe"),
    "GEM202": ("no-warmup-before-serving", "warning", "python", "none"),
    "GEM301": ("device-memory-leak", "error", "native, python", "none"),
    "GEM302": ("host-memory-leak", "warning", "native, python", "none"),
    "GEM303": ("mismatched-release", "error", "native, python", "none"),
    "GEM304": ("cuda-graph-leak", "warning", "native, python", "none"),
    "GEM305": ("unterminated-stream-capture", "error", "native, python", "none"),
    "GEM306": ("cuda-handle-leak", "warning", "native, python", "none"),
    "GEM307": ("default-stream-async-copy", "warning", "native", "none"),
    "GEM401": ("leftover-profiler", "warning", "python", "none"),
    "GEM402": ("anomaly-detection-enabled", "warning", "python", "none"),
    "GEM403": ("verbose-framework-logging", "warning", "python", "none"),
    "GEM404": ("cuda-launch-blocking", "error", "dockerfile, python, yaml", "none"),
    "GEM501": ("ort-optimization-disabled", "error", "native, python", "unsafe"),
    "GEM502": ("model-loaded-per-request", "error", "python", "none"),
    "GEM503": ("compile-per-request", "error", "python", "none"),
    "GEM601": ("liveness-probe-runs-forward", "error", "dockerfile, yaml", "none"),
    "GEM602": ("health-endpoint-runs-forward", "warning", "python", "none"),
    "GEM603": ("dynamic-batching-disabled", "warning", "triton", "none"),
    "GEM604": ("gpu-container-host-memory", "warning", "yaml", "none"),
    "GEM605": ("multi-gpu-without-shared-memory", "error", "yaml", "none"),
}
# The rules in preview, by hand.
DOCUMENTED_PREVIEW = {"GEM202", "GEM603", "GEM604"}
# A sentence of each documented severity boundary, also by hand.
DOCUMENTED_BOUNDARIES = {
    "GEM201": "The finding is an error when the literal `max_length` is 1024 or more.",
    "GEM501": "ORT_ENABLE_BASIC",
}


@pytest.mark.parametrize("code", sorted(DOCUMENTED))
def test_docs_state_each_rules_name_severity_languages_and_fix(code):
    name, severity, languages, fix = DOCUMENTED[code]
    preview = code in DOCUMENTED_PREVIEW
    docs = DOCS.read_text(encoding="utf-8")
    section = docs.split(f"\n### {code} {name}\n", 1)[1].split("\n### ", 1)[0]
    marker = " · **Preview**" if preview else ""
    assert section.lstrip("\n").startswith(f"Severity: **{severity}** · Languages: {languages} · Fix: {fix}{marker}\n")
    shown = f"{name} (preview)" if preview else name
    assert f"| [{code}](#{code.lower()}-{name}) | {shown} | {severity} | {languages} | {fix} |" in docs
    if code in DOCUMENTED_BOUNDARIES:
        assert DOCUMENTED_BOUNDARIES[code] in section


GEM601_HANDLERS = '''\
from fastapi import FastAPI

from app.model import model

app = FastAPI()


@app.get("/healthz")
def healthz():
    model.generate("ping", max_new_tokens=1)
    return {"status": "ok"}


@app.get("/livez")
def livez():
    return {"status": "ok"}


@app.get("/ready")
def ready():
    return {"ready": model is not None}
'''


def test_yaml_example_is_flagged_and_its_fix_accepted_in_the_project_it_describes(tmp_path):
    # GEM601's examples are manifests: linted with the handlers their comments describe (app/health.py).
    from gemlint.api import lint_paths
    from gemlint.registry import rule_by_code

    rule = rule_by_code("GEM601")
    assert rule.examples_language() is Language.YAML
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "model.py").write_text("from transformers import pipeline\n\nmodel = pipeline('text-generation')\n")
    (tmp_path / "app" / "health.py").write_text(GEM601_HANDLERS)
    manifest = tmp_path / "deployment.yaml"
    manifest.write_text(rule.bad)
    bad = lint_paths([tmp_path], select=("GEM601",))
    assert [(d.code, d.path.rsplit("/", 1)[-1], d.line) for d in bad] == [("GEM601", "deployment.yaml", 13)]  # livenessProbe:
    manifest.write_text(rule.good)
    assert lint_paths([tmp_path], select=("GEM601",)) == []
