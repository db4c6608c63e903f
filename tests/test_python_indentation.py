"""Modules indented with tabs and spaces mixed as CPython accepts them: linted as CPython reads them, their
findings placed where the text as written has them, and never reported as unparsable."""

from __future__ import annotations

import ast
import json

from click.testing import CliRunner

from gemlint.cli import main
from gemlint.frontends.python_indentation import expand_indentation

# `with` indented with four spaces, its body with a tab and four spaces (column 12 for CPython): valid Python that
# LibCST's tokenizer rejects.
MIXED = (
    "import torch\n"
    "\n"
    "if __name__ == '__main__':\n"
    "    model = torch.jit.load('model.pt')\n"
    "    with open('inputs.txt') as f:\n"
    "\t    for line in f:\n"
    "\t        print(model(torch.tensor([float(line)])))\n"
)


def lint(tmp_path, *args: str) -> list[dict]:
    (tmp_path / "predict.py").write_text(MIXED, encoding="utf-8")
    result = CliRunner().invoke(main, ["--no-cache", "--isolated", "--format", "json", *args, str(tmp_path / "predict.py")], catch_exceptions=False)
    return json.loads(result.output)


def test_the_mixed_indentation_is_valid_python():
    ast.parse(MIXED)


def test_a_module_cpython_parses_is_linted_and_its_findings_keep_their_columns(tmp_path):
    findings = lint(tmp_path)
    assert [(f["code"], f["line"]) for f in findings] == [("GEM101", 7)]
    written = MIXED.splitlines()[6]
    assert findings[0]["column"] == written.index("model(") + 1
    assert findings[0]["end_column"] == written.index("])))") + 4


def test_a_finding_on_such_a_module_offers_no_fix_made_on_other_text(tmp_path):
    # `.train()` in a loop of predictions: GEM103's fix (`.eval()`) is offered where the indentation is spaces only.
    switched = MIXED.replace("\t        print(", "\t        model.train()\n\t        print(")
    (tmp_path / "spaces.py").write_text(switched.replace("\t", " " * 8), encoding="utf-8")
    (tmp_path / "mixed.py").write_text(switched, encoding="utf-8")
    found = {}
    for name in ("spaces.py", "mixed.py"):
        result = CliRunner().invoke(main, ["--no-cache", "--isolated", "--format", "json", "--select", "GEM103", str(tmp_path / name)], catch_exceptions=False)
        (found[name],) = json.loads(result.output)
    assert found["spaces.py"]["fix"] is not None
    assert found["mixed.py"]["fix"] is None
    assert found["mixed.py"]["line"] == 7


def test_only_indentation_with_a_tab_is_expanded():
    expanded = expand_indentation("a = 1\n\tb = '\t'\n    c = 2\n")
    assert expanded is not None
    assert expanded.text == "a = 1\n        b = '\t'\n    c = 2\n"
    assert expanded.widths == {2: (1, 8)}
    assert (expanded.column(2, 9), expanded.column(2, 3), expanded.column(3, 5)) == (2, 2, 5)
    assert expand_indentation("a = 1\n    b = 2\n") is None
