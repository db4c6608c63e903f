"""Property tests: on any valid program, fixing never breaks the syntax, is idempotent, and touches
nothing when no finding is fixable (SPEC §10)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings

from gemlint.api import lint_source
from gemlint.config import default_config
from gemlint.discovery import SourceFile
from gemlint.engine import lint_text
from gemlint.fixes import fix_text
from gemlint.languages import Language
from gemlint.registry import all_rules
from gemlint.selection import Selection

hypothesmith = pytest.importorskip("hypothesmith")

# Fixable shapes from every fixable rule, appended to generated programs so that fixes really run.
FIXABLE = '''
import torch
import onnxruntime as ort

def predict(tok, model, text):
    model.train()
    batch = tok(text, padding="max_length", max_length=4096)
    return model(**batch)

so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
'''


def fix(source: str) -> str:
    selection = Selection.from_config(default_config(Path.cwd()), all_rules())
    file = SourceFile(Path("service.py"), Language.PYTHON, "service.py", "service.py")
    lint = lambda text: lint_text(file, text, selection)  # noqa: E731
    return fix_text(source, Language.PYTHON, lint, lint(source), unsafe=True).text


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar(auto_target=False))
def test_fixes_parse_and_are_idempotent_on_generated_programs(program):
    try:
        cst.parse_module(program)
    except Exception:
        assume(False)
    source = program.rstrip("\n") + "\n" + FIXABLE
    try:
        cst.parse_module(source)
    except Exception:
        assume(False)  # e.g. a program ending in a line continuation
    once = fix(source)
    cst.parse_module(once)
    assert fix(once) == once


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar(auto_target=False))
def test_programs_without_fixable_findings_are_left_untouched(program):
    try:
        cst.parse_module(program)
    except Exception:
        assume(False)
    assume(not any(d.fix for d in lint_source(program, "service.py")))
    assert fix(program) == program
